//! A paper's claim beside the simulated number, and what its pass is worth.
//!
//! A pass means different things. Where no constant was fitted to the number, a pass is a
//! reproduction (**predicted**). Where a constant was fitted to it, a pass only shows the fit
//! (**calibrated**), so the claim names the constant. Where an input bounds the number (a refresh
//! period, a fixed metadata size, a protocol without an abort path), a pass shows the input was
//! honoured (**by construction**). The project's own mutant and consistency checks are no paper's
//! claim at all (**check**). The headline counts predicted claims only; the others are reported
//! apart.
//!
//! Every claim states its pass rule, tight enough that a wrong model fails it. The constants
//! fitted to papers' numbers are listed once, in [`FITTED`], with the claims they were fitted to;
//! [`Draft::scored`] refuses a claim a listed constant was fitted to unless it is marked
//! calibrated by that constant, so a fitted number cannot be scored as a reproduction.

use std::fmt::Write as _;

/// A constant fitted to a paper's number: where it is set, and to which claims it was fitted.
#[derive(Debug, PartialEq, Eq)]
pub struct Fitted {
    pub name: &'static str,
    pub value: &'static str,
    /// The file that sets it (relative to the repository).
    pub source: &'static str,
    /// The setting as the file spells it (a test finds it there, so the record cannot drift).
    pub setting: &'static str,
    /// The figure and the claims (exact names) it was fitted to.
    pub figure: &'static str,
    pub claims: &'static [&'static str],
}

/// CausalMesh Fig. 1: the DAX-like replication lag, fitted to the anomaly-rate curve.
pub const FIG1_LAG: Fitted = Fitted {
    name: "replication lag",
    value: "log-normal, mean 5 ms, σ 1.5",
    source: "scenarios/eventual/fig1-dax.json",
    setting: "\"mean_ns\": 5000000,\n        \"sigma\": 1.5",
    figure: "fig1",
    claims: &["anomaly rate with 2 nodes", "anomaly rate with 4 nodes", "anomaly rate with 8 nodes"],
};

/// CausalMesh Fig. 17: a server's handling of a chain hop, fitted to the marginal window.
pub const FIG17_HOP: Fitted = Fitted {
    name: "ServerWrite handling per chain hop",
    value: "300 µs",
    source: "scenarios/causalmesh/fig17-visibility.json",
    setting: "\"ServerWrite\": {\"dist\": \"constant\", \"ns\": 300000}",
    figure: "fig17",
    claims: &["marginal inconsistency window per added server"],
};

/// FaaSTCC Fig. 4a: the time per KiB of metadata a function receives, fitted at Zipf 1.0.
pub const METADATA_NS_PER_KB: Fitted = Fitted {
    name: "params.metadata_ns_per_kb",
    value: "15 µs per KiB",
    source: "scenarios/sweeps/faastcc-zipf.json",
    setting: "\"metadata_ns_per_kb\": 15000",
    figure: "faastcc-latency",
    claims: &["HydroCache dynamic / FaaSTCC mean latency, Zipf 1"],
};

/// Concord Fig. 11: a function's one-way delay to its machine's cache agent (the runtime's
/// interception of the storage call), fitted to the local read hit. Every Concord sweep uses it.
pub const CONCORD_LOCAL_ACCESS: Fitted = Fitted {
    name: "topology.local_delay",
    value: "0.8 ms one way",
    source: "scenarios/concord/fig11-sharers.json",
    setting: "\"local_delay\": {\"dist\": \"constant\", \"ns\": 800000}",
    figure: "concord-sharers",
    claims: &["Concord local read-hit latency"],
};

/// MuCache Fig. 17: the wrapper's critical-path costs, fitted to the no-hit medians.
pub const WRAPPER_COSTS: Fitted = Fitted {
    name: "params.lookup_ns and params.enqueue_ns",
    value: "200 µs per lookup, 150 µs per Start or End enqueue",
    source: "scenarios/sweeps/mucache-overhead.json",
    setting: "\"protocol.params.lookup_ns\": 200000,\n    \"protocol.params.enqueue_ns\": 150000",
    figure: "mucache-fig17",
    claims: &["MuCache − BC median, no hits", "MuCache − TTL-∞ median, no hits"],
};

/// MuCache Fig. 18: the CM's cost per queue item and per message sent, fitted at batch 1 and 20.
pub const CM_COSTS: Fitted = Fitted {
    name: "params.cm_event_ns and params.cm_send_ns",
    value: "11.3 µs per event, 92.8 µs per message sent",
    source: "scenarios/sweeps/mucache-batch.json",
    setting: "\"protocol.params.cm_event_ns\": 11300,\n    \"protocol.params.cm_send_ns\": 92800",
    figure: "mucache-fig18",
    claims: &["CM throughput, batch 1", "CM throughput, batch 20"],
};

/// Boki §7.1: the controller's coordination writes between a sealed term and the next, set so
/// that a reconfiguration takes about the 15.7 ms the paper measured (n_meta = 3).
pub const BOKI_RECONFIGURATION_DELAY: Fitted = Fitted {
    name: "params.reconfiguration_delay_ns",
    value: "12 ms",
    source: "models/src/boki/mod.rs",
    setting: "fn reconfiguration_delay() -> Time {\n    12_000_000\n}",
    figure: "boki-reconfiguration",
    claims: &["append latency back to normal after a reconfiguration"],
};

/// Boki Fig. 13: the database's (DynamoDB's) one-way delay, fitted to Beldi's Invoke median.
pub const BELDI_DB_OP: Fitted = Fitted {
    name: "topology.links to db",
    value: "log-normal each way, mean 1.95 ms, σ 0.5",
    source: "scenarios/sweeps/bokiflow-steps.json",
    setting: "\"delay\": {\"dist\": \"lognormal\", \"mean_ns\": 1950000, \"sigma\": 0.5}",
    figure: "bokiflow-steps",
    claims: &["Beldi Invoke median (5 database log appends)", "Beldi ÷ BokiFlow Invoke median"],
};

/// Every constant fitted to a paper's number.
/// CausalMesh Fig. 13: what a function's runtime and RPC stack take per message, fitted to
/// CausalMesh's median at 1000 workflows/s; the cost model holds it for every system.
pub const FUNCTION_MESSAGE_COST: Fitted = Fitted {
    name: "topology.cost: function_message_ns",
    value: "400 µs per message a function sends or receives",
    source: "sim/src/cost.rs",
    setting: "function_message_ns: 400_000",
    figure: "latency-load",
    claims: &["CausalMesh p50 / p99 at 1000 workflows/s"],
};

pub const FITTED: &[&Fitted] = &[
    &FIG1_LAG,
    &FIG17_HOP,
    &METADATA_NS_PER_KB,
    &FUNCTION_MESSAGE_COST,
    &CONCORD_LOCAL_ACCESS,
    &WRAPPER_COSTS,
    &CM_COSTS,
    &BOKI_RECONFIGURATION_DELAY,
    &BELDI_DB_OP,
];

/// What a claim's pass is worth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// No constant was fitted to the number: a pass is a reproduction.
    Predicted,
    /// A constant was fitted to the number: a pass shows the fit, not the model.
    Calibrated(&'static Fitted),
    /// An input bounds the number (named here): a pass shows the input was honoured.
    ByConstruction(&'static str),
    /// The project's own check (a mutant caught, a correct protocol clean): no paper's claim.
    Check,
}

impl Kind {
    pub fn label(&self) -> &'static str {
        match self {
            Kind::Predicted => "predicted",
            Kind::Calibrated(_) => "calibrated",
            Kind::ByConstruction(_) => "by construction",
            Kind::Check => "check",
        }
    }

    /// The label with what it rests on: the fitted constant or the bounding input.
    pub fn describe(&self) -> String {
        match self {
            Kind::Calibrated(f) => format!("calibrated: {} = {} ({})", f.name, f.value, f.source),
            Kind::ByConstruction(input) => format!("by construction: {input}"),
            k => k.label().to_string(),
        }
    }
}

/// A paper's number beside the simulated one.
#[derive(Clone, Debug)]
pub struct Claim {
    pub figure: String,
    pub claim: String,
    pub kind: Kind,
    /// The pass rule, as printed beside the claim.
    pub rule: String,
    pub paper: String,
    pub simulated: String,
    /// Whether the rule holds (None: the paper gives nothing to compare with).
    pub holds: Option<bool>,
    pub why: String,
}

/// A claim whose verdict is still to come: what it is, what kind, and its pass rule.
pub struct Draft {
    figure: String,
    claim: String,
    kind: Kind,
    rule: String,
}

/// Starts a claim: every claim has a kind and a stated pass rule.
pub fn claim(figure: &str, claim: &str, kind: Kind, rule: impl Into<String>) -> Draft {
    Draft { figure: figure.into(), claim: claim.into(), kind, rule: rule.into() }
}

impl Draft {
    /// The claim with its numbers and verdict, or why its kind is wrong: a claim a listed
    /// constant was fitted to must be calibrated by that constant, and a calibrated claim must be
    /// one its constant lists.
    pub fn scored(
        self,
        paper: impl Into<String>,
        simulated: impl Into<String>,
        holds: Option<bool>,
        why: impl Into<String>,
    ) -> Result<Claim, String> {
        let at = format!("figure {}, claim {:?}", self.figure, self.claim);
        let fitted_to = |f: &Fitted| f.figure == self.figure && f.claims.contains(&self.claim.as_str());
        match self.kind {
            Kind::Calibrated(f) if !fitted_to(f) => {
                return Err(format!("{at}: marked calibrated by {}, which lists no such claim (src/claim.rs FITTED)", f.name));
            }
            Kind::Calibrated(_) => {}
            other => {
                if let Some(f) = FITTED.iter().find(|f| fitted_to(f)) {
                    return Err(format!("{at}: {} was fitted to it, so it is calibrated, not {}", f.name, other.label()));
                }
            }
        }
        if self.rule.trim().is_empty() {
            return Err(format!("{at}: no pass rule"));
        }
        if matches!(self.kind, Kind::ByConstruction(input) if input.trim().is_empty()) {
            return Err(format!("{at}: by construction of no named input"));
        }
        Ok(Claim {
            figure: self.figure,
            claim: self.claim,
            kind: self.kind,
            rule: self.rule,
            paper: paper.into(),
            simulated: simulated.into(),
            holds,
            why: why.into(),
        })
    }
}

/// Claims counted by kind and verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score {
    /// Predicted claims: reproduced, not reproduced, not comparable.
    pub predicted: (usize, usize, usize),
    /// Calibrated claims, and how many of them are within their rule.
    pub calibrated: (usize, usize),
    /// By-construction claims, and how many hold.
    pub by_construction: (usize, usize),
    /// Checks, and how many passed.
    pub checks: (usize, usize),
}

impl Score {
    pub fn of(claims: &[Claim]) -> Score {
        let mut s = Score::default();
        for c in claims {
            let yes = usize::from(c.holds == Some(true));
            match c.kind {
                Kind::Predicted => match c.holds {
                    Some(true) => s.predicted.0 += 1,
                    Some(false) => s.predicted.1 += 1,
                    None => s.predicted.2 += 1,
                },
                Kind::Calibrated(_) => s.calibrated = (s.calibrated.0 + 1, s.calibrated.1 + yes),
                Kind::ByConstruction(_) => s.by_construction = (s.by_construction.0 + 1, s.by_construction.1 + yes),
                Kind::Check => s.checks = (s.checks.0 + 1, s.checks.1 + yes),
            }
        }
        s
    }

    /// One line: the reproductions (predicted claims only), then the rest apart.
    pub fn headline(&self) -> String {
        let (yes, no, na) = self.predicted;
        let mut line = format!("predicted: {yes} of {} reproduced, {no} not", yes + no);
        if na > 0 {
            let _ = write!(line, " ({na} more not comparable)");
        }
        let _ = write!(
            line,
            "; calibrated: {} (not scored as reproductions; {} within their rule); by construction: {} ({} hold); checks: {} of {} passed",
            self.calibrated.0, self.calibrated.1, self.by_construction.0, self.by_construction.1, self.checks.1, self.checks.0
        );
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(figure: &str, name: &str, kind: Kind, holds: Option<bool>) -> Result<Claim, String> {
        claim(figure, name, kind, "within ± 10 %").scored("1", "1", holds, "why")
    }

    #[test]
    fn a_claim_a_constant_was_fitted_to_cannot_be_predicted_or_by_construction() {
        for kind in [Kind::Predicted, Kind::ByConstruction("an input"), Kind::Check] {
            let e = scored("fig1", "anomaly rate with 2 nodes", kind, Some(true)).unwrap_err();
            assert!(e.contains("replication lag was fitted to it"), "{e}");
        }
        let c = scored("fig1", "anomaly rate with 2 nodes", Kind::Calibrated(&FIG1_LAG), Some(true)).unwrap();
        assert_eq!(c.kind.describe(), "calibrated: replication lag = log-normal, mean 5 ms, σ 1.5 (scenarios/eventual/fig1-dax.json)");
        // A constant calibrates only the claims it was fitted to.
        let e = scored("fig17", "inconsistency window with 3 servers", Kind::Calibrated(&FIG17_HOP), Some(true)).unwrap_err();
        assert!(e.contains("lists no such claim"), "{e}");
        assert!(scored("fig17", "inconsistency window with 3 servers", Kind::Predicted, Some(false)).is_ok());
    }

    #[test]
    fn every_claim_states_its_rule_and_what_bounds_it() {
        let e = claim("fig17", "x", Kind::Predicted, " ").scored("1", "1", None, "").unwrap_err();
        assert!(e.contains("no pass rule"), "{e}");
        let e = scored("visibility", "x", Kind::ByConstruction(""), Some(true)).unwrap_err();
        assert!(e.contains("no named input"), "{e}");
    }

    /// The record of each fitted constant matches the file that sets it.
    #[test]
    fn every_fitted_constant_is_set_where_its_record_says() {
        for f in FITTED {
            let path = format!("{}/{}", env!("CARGO_MANIFEST_DIR"), f.source);
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {path}: {e}", f.name));
            assert!(text.contains(f.setting), "{}: {path} does not set {}", f.name, f.setting);
            assert!(crate::plot::figure(f.figure).is_some(), "{}: no figure {}", f.name, f.figure);
        }
    }

    #[test]
    fn the_headline_counts_predicted_claims_only() {
        let claims = [
            scored("fig17", "a", Kind::Predicted, Some(true)).unwrap(),
            scored("fig17", "b", Kind::Predicted, Some(false)).unwrap(),
            scored("fig17", "c", Kind::Predicted, Some(false)).unwrap(),
            scored("metadata", "d", Kind::Predicted, None).unwrap(),
            scored("fig1", "anomaly rate with 4 nodes", Kind::Calibrated(&FIG1_LAG), Some(true)).unwrap(),
            scored("fig1", "anomaly rate with 8 nodes", Kind::Calibrated(&FIG1_LAG), Some(false)).unwrap(),
            scored("visibility", "e", Kind::ByConstruction("the 50 ms push period"), Some(true)).unwrap(),
            scored("delay-sweep", "f", Kind::Check, Some(true)).unwrap(),
            scored("delay-sweep", "g", Kind::Check, Some(false)).unwrap(),
        ];
        let s = Score::of(&claims);
        assert_eq!(s, Score { predicted: (1, 2, 1), calibrated: (2, 1), by_construction: (1, 1), checks: (2, 1) });
        assert_eq!(
            s.headline(),
            "predicted: 1 of 3 reproduced, 2 not (1 more not comparable); calibrated: 2 (not scored as reproductions; 1 within \
             their rule); by construction: 1 (1 hold); checks: 1 of 2 passed"
        );
    }
}
