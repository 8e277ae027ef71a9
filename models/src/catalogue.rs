//! The protocol catalogue: every protocol causim models, with what the rest of causim needs to
//! know about it, in one list.
//!
//! Everything outside `models/` (the runner, `causim protocols`, the fuzzer, the figures, the
//! tests) finds protocols here and nowhere else. Dispatch from a scenario's `protocol.name` to
//! the model's type goes through one generic [`Visitor`]: the caller writes what it does with
//! *a* model once (`fn visit<M: Model>`), and [`visit`] calls it with the right type.
//!
//! # How to add a protocol
//!
//! Write the module (its nodes, its `Protocol` impl, and a `Model` impl whose `ENTRY` fills in
//! an [`Entry`]), then add one line to the `catalogue!` list at the end of this file. Nothing
//! else: a test runs, fuzzes and checks every protocol listed here at its level.

use crate::Model;
use crate::fault_model::FaultModel;
use causim_checkers::Level;

/// A named bug a protocol can switch on: the safeguard it removes and the anomaly it allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mutant {
    pub name: &'static str,
    pub about: &'static str,
}

/// An sRGB colour.
pub type Colour = (u8, u8, u8);

/// How figures name and colour a protocol's series. A protocol with modes that the papers
/// compare as systems of their own (HydroCache-Con and -Opt) has one style per mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeriesStyle {
    pub label: &'static str,
    pub colour: Colour,
}

/// What the fuzzer and the figures need to know about a protocol's runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The protocol has a fixed node on a machine named `db`: links to it carry the storage
    /// delay.
    pub database: bool,
    /// Functions may issue read transactions (`read_txn`).
    pub read_txn: bool,
    /// A workflow is one transaction: its history record spans all its functions.
    pub workflow_txn: bool,
    /// The observations it may report (`crate::metrics`).
    pub observations: &'static [&'static str],
    /// The final metrics it may report (`crate::metrics`).
    pub final_metrics: &'static [&'static str],
    /// The observation that measures the metadata one function hands the next, if any.
    pub hop_metadata: Option<&'static str>,
    /// The final metric that measures the metadata its servers hold (bytes, all servers).
    pub server_metadata: Option<&'static str>,
}

impl Profile {
    /// A protocol that reports nothing of its own and has no database.
    pub const PLAIN: Profile = Profile {
        database: false,
        read_txn: false,
        workflow_txn: false,
        observations: &[],
        final_metrics: &[],
        hop_metadata: None,
        server_metadata: None,
    };
}

/// One protocol of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The scenario's `protocol.name`.
    pub name: &'static str,
    /// One sentence for `causim protocols`.
    pub about: &'static str,
    /// The consistency level every history of the correct protocol must pass (what its paper
    /// promises); the fuzzer checks at this level.
    pub level: Level,
    pub mutants: &'static [Mutant],
    pub profile: Profile,
    /// The faults beyond delays and holding partitions it survives; scenarios with others are
    /// refused when loaded.
    pub faults: FaultModel,
    /// The first style is the protocol's default.
    pub series: &'static [SeriesStyle],
}

impl Entry {
    pub fn mutant(&self, name: &str) -> Option<&'static Mutant> {
        self.mutants.iter().find(|m| m.name == name)
    }

    /// Whether the protocol may report this observation or final metric.
    pub fn reports(&self, metric: &str) -> bool {
        self.profile.observations.contains(&metric) || self.profile.final_metrics.contains(&metric)
    }
}

/// Something done with a model, written once for every model type.
pub trait Visitor {
    type Output;
    fn visit<M: Model>(self) -> Self::Output;
}

/// The entry of the protocol named `name`.
pub fn find(name: &str) -> Option<&'static Entry> {
    PROTOCOLS.iter().copied().find(|e| e.name == name)
}

/// The catalogue's names, comma-separated, for error messages.
pub fn names() -> String {
    PROTOCOLS.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
}

/// The style of a series labelled `label`: the longest protocol label it contains
/// (case-insensitively), so "simulated: CausalMesh-TCC, 4 servers" is CausalMesh-TCC's.
pub fn series_style(label: &str) -> Option<&'static SeriesStyle> {
    let l = label.to_lowercase();
    PROTOCOLS.iter().flat_map(|e| e.series.iter()).filter(|s| l.contains(&s.label.to_lowercase())).max_by_key(|s| s.label.len())
}

/// The position of the mutant named in `label` among its protocol's mutants, if `label`
/// names one (the longest name it contains), so figures can colour mutants consistently.
pub fn mutant_index(label: &str) -> Option<usize> {
    let l = label.to_lowercase();
    PROTOCOLS
        .iter()
        .flat_map(|e| e.mutants.iter().enumerate())
        .filter(|(_, m)| l.contains(m.name))
        .max_by_key(|(_, m)| m.name.len())
        .map(|(i, _)| i)
}

/// Lists every protocol once: the slice [`PROTOCOLS`] of entries and [`visit`], the dispatch
/// from a name to the model's type.
macro_rules! catalogue {
    ($($model:ty),* $(,)?) => {
        /// Every protocol, in the order `causim protocols` lists them.
        pub const PROTOCOLS: &[&Entry] = &[$(&<$model as Model>::ENTRY),*];

        /// Calls `visitor.visit::<M>()` with the model named `name`; `None` for an unknown name.
        pub fn visit<V: Visitor>(name: &str, visitor: V) -> Option<V::Output> {
            $(
                if name == <$model as Model>::ENTRY.name {
                    return Some(visitor.visit::<$model>());
                }
            )*
            None
        }
    };
}

catalogue! {
    crate::register::Register,
    crate::causalmesh::CausalMesh,
    crate::causalmesh::CausalMeshTcc,
    crate::eventual::Eventual,
    crate::direct::Direct,
    crate::faastcc::Faastcc,
    crate::hydrocache::HydroCache,
    crate::mucache::MuCache,
    crate::concord::Concord,
    crate::concord::Faast,
    crate::concord::Ofc,
    crate::boki::Boki,
    crate::boki::BokiQueue,
    crate::boki::BokiStore,
    crate::boki::BokiFlow,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_name_visits_its_own_model() {
        struct Name;
        impl Visitor for Name {
            type Output = &'static str;
            fn visit<M: Model>(self) -> &'static str {
                M::ENTRY.name
            }
        }
        for (i, e) in PROTOCOLS.iter().enumerate() {
            assert!(PROTOCOLS[..i].iter().all(|o| o.name != e.name), "{} is listed twice", e.name);
            assert_eq!(visit(e.name, Name), Some(e.name));
        }
        assert_eq!(visit("raft", Name), None);
    }

    #[test]
    fn mutant_names_are_unique_per_protocol_and_every_protocol_has_a_series_style() {
        for e in PROTOCOLS {
            for (i, m) in e.mutants.iter().enumerate() {
                assert!(e.mutants[..i].iter().all(|o| o.name != m.name), "{}: mutant {} twice", e.name, m.name);
            }
            assert!(!e.series.is_empty(), "{} has no series style", e.name);
            for metric in e.profile.hop_metadata.iter().chain(&e.profile.server_metadata) {
                assert!(e.reports(metric), "{}: {metric} is not among its reported metrics", e.name);
            }
            for metric in e.profile.observations.iter().chain(e.profile.final_metrics) {
                assert!(crate::metrics::ALL.iter().any(|(_, v)| v == metric), "{}: {metric} is not in crate::metrics", e.name);
            }
        }
    }

    #[test]
    fn series_labels_resolve_to_their_protocol_style() {
        assert_eq!(series_style("CausalMesh-TCC").map(|s| s.label), Some("CausalMesh-TCC"));
        assert_eq!(series_style("causalmesh").map(|s| s.label), Some("CausalMesh"));
        assert_eq!(series_style("HydroCache-Opt, 4 servers").map(|s| s.label), Some("HydroCache-Opt"));
        assert_eq!(series_style("simulated: eventual (DAX-like) cache").map(|s| s.label), Some("Eventual"));
        assert_eq!(series_style("no such system"), None);
        assert_eq!(mutant_index("CausalMesh no_carry_local_writes"), Some(0));
        assert_eq!(mutant_index("correct"), None);
    }
}
