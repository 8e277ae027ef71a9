//! The papers' figures, from sweep results: which sweep feeds each figure, how its numbers are
//! derived, the paper's numbers beside them, and a sentence on whether they agree.
//!
//! Every builder takes `Results` (a sweep's `results.json`) and returns a `chart::Figure` plus
//! `Claim`s for the report, each with its kind (predicted, calibrated, by construction, check;
//! see `claim`) and its pass rule. Figures read metrics by name (see `sweep::metrics_of`), so a new
//! protocol appears in them as soon as a sweep has a series for it.
//!
//! One module per paper (`causalmesh`, `faastcc`, `boki`, `concord`, `mucache`) and one for every system under load
//! (`load`); the helpers they share live here.

mod boki;
mod boki_libs;
mod causalmesh;
mod concord;
mod faastcc;
mod load;
mod mucache;

use crate::chart::{Corner, Figure, Panel, Pt, Series, Style, color_of};
use crate::claim::{Claim, Kind, claim};
use crate::sweep::{AggRow, Results, Row};
use causim_models::catalogue::{self, Entry};
use causim_models::direct::Direct;
use causim_models::{Model, metrics};
use plotters::style::RGBColor;

/// Draws a figure and states its claims from a sweep's results.
type BuildFigure = fn(&Results) -> Result<(Figure, Vec<Claim>), String>;

/// A figure: its name, the sweep that feeds it, and what it shows.
pub struct FigureDef {
    pub name: &'static str,
    pub sweep: &'static str,
    pub about: &'static str,
    build: BuildFigure,
}

impl FigureDef {
    pub fn build(&self, results: &Results) -> Result<(Figure, Vec<Claim>), String> {
        if results.runs.is_empty() {
            return Err(format!("figure {}: the results hold no runs", self.name));
        }
        (self.build)(results)
    }
}

/// The figures, in report order.
pub const FIGURES: &[FigureDef] = &[
    FigureDef {
        name: "fig1",
        sweep: "fig1-dax",
        about: "CausalMesh Fig. 1: anomaly rate vs eventually consistent cache nodes",
        build: causalmesh::fig1,
    },
    FigureDef {
        name: "fig17",
        sweep: "fig17-visibility",
        about: "CausalMesh Fig. 17: inconsistency window vs servers, with the marginal increase",
        build: causalmesh::fig17,
    },
    FigureDef {
        name: "latency-load",
        sweep: "micro-load",
        about: "CausalMesh Fig. 13: p50 and p99 workflow latency vs offered load, every system",
        build: load::latency_load,
    },
    FigureDef {
        name: "movie-review",
        sweep: "movie-review-load",
        about: "CausalMesh Fig. 16: the movie review service, p50 and p99 latency vs offered load",
        build: load::movie_review,
    },
    FigureDef {
        name: "throughput-servers",
        sweep: "scale-servers",
        about: "CausalMesh Fig. 15: throughput (highest load with p99 ≤ 10 ms) vs servers",
        build: load::throughput_servers,
    },
    FigureDef {
        name: "metadata",
        sweep: "micro-load",
        about: "CausalMesh Fig. 14: metadata carried per function hop and held by cache servers, every system",
        build: causalmesh::metadata,
    },
    FigureDef {
        name: "metadata-length",
        sweep: "causalmesh-metadata-length",
        about: "CausalMesh Fig. 14's \"low and stable\": cache-server metadata against run length, with and without the tail's dissemination",
        build: causalmesh::metadata_length,
    },
    FigureDef {
        name: "aborts",
        sweep: "micro-load",
        about: "Aborts of every kind vs offered load, every system",
        build: causalmesh::aborts,
    },
    FigureDef {
        name: "visibility",
        sweep: "micro-load",
        about: "CausalMesh Fig. 12: visibility delay of a write, every system",
        build: causalmesh::visibility,
    },
    FigureDef {
        name: "tcc-ring",
        sweep: "causalmesh-tcc-ring",
        about: "CausalMesh-TCC §7: aborts and memory vs ring size, for the oldest and the newest version that forms a cut",
        build: causalmesh::tcc_ring,
    },
    FigureDef {
        name: "delay-sweep",
        sweep: "delay-mutants",
        about: "Anomaly rate of each CausalMesh mutant vs network delay",
        build: causalmesh::delay_sweep,
    },
    FigureDef {
        name: "boki-append-scaling",
        sweep: "boki-append-scaling",
        about: "Boki Table 3a: append throughput and latency of one LogBook vs function and storage nodes",
        build: boki::boki_append_scaling,
    },
    FigureDef {
        name: "boki-metalog-rate",
        sweep: "boki-append-scaling",
        about: "Boki Table 3a: metalog entries per second and records per entry vs nodes",
        build: boki::boki_metalog_rate,
    },
    FigureDef {
        name: "boki-read-latency",
        sweep: "boki-read-latency",
        about: "Boki Table 5: read latency of a cache hit, a cache miss and a remote engine",
        build: boki::boki_read_latency,
    },
    FigureDef {
        name: "boki-reconfiguration",
        sweep: "boki-reconfiguration",
        about: "Boki Fig. 11: append and read latency around a reconfiguration",
        build: boki::boki_reconfiguration,
    },
    FigureDef {
        name: "boki-reconfiguration-frequency",
        sweep: "boki-reconfiguration-frequency",
        about: "Boki Fig. 17: append and read latency and throughput vs how often the controller reconfigures",
        build: boki::boki_reconfiguration_frequency,
    },
    FigureDef {
        name: "boki-engine-locality",
        sweep: "boki-engine-locality",
        about: "Boki Table 8: BokiStore throughput vs the share of log reads served by the function's own engine",
        build: boki::boki_engine_locality,
    },
    FigureDef {
        name: "boki-index-scaling",
        sweep: "boki-index-scaling",
        about: "Boki Table 11: read throughput vs function nodes holding the index",
        build: boki::boki_index_scaling,
    },
    FigureDef {
        name: "boki-counter-test",
        sweep: "boki-counter-test",
        about: "Boki §7.5: BokiStore's counter test, committed transactions and the sum invariant for k = 2, 3, 5 counters",
        build: boki_libs::boki_counter_test,
    },
    FigureDef {
        name: "bokistore-replay",
        sweep: "bokistore-replay",
        about: "Boki Tables 7 and 9: BokiStore's throughput as the log grows with and without auxiliary data, and vs cache size",
        build: boki_libs::bokistore_replay,
    },
    FigureDef {
        name: "bokiflow-steps",
        sweep: "bokiflow-steps",
        about: "Boki Fig. 13: BokiFlow's latency per workflow step against Beldi with its logs in a database",
        build: boki_libs::bokiflow_steps,
    },
    FigureDef {
        name: "faastcc-metadata",
        sweep: "faastcc-zipf",
        about: "FaaSTCC Fig. 5: metadata passed between functions vs Zipf",
        build: faastcc::faastcc_metadata,
    },
    FigureDef {
        name: "faastcc-rounds",
        sweep: "faastcc-zipf",
        about: "FaaSTCC Fig. 6: storage rounds per read vs Zipf",
        build: faastcc::faastcc_rounds,
    },
    FigureDef {
        name: "faastcc-latency",
        sweep: "faastcc-zipf",
        about: "FaaSTCC Fig. 4a: latency vs Zipf, static and dynamic",
        build: faastcc::faastcc_latency,
    },
    FigureDef {
        name: "faastcc-storage-bytes",
        sweep: "faastcc-zipf",
        about: "FaaSTCC Fig. 7: bytes moved per read that went to storage vs Zipf",
        build: faastcc::faastcc_storage_bytes,
    },
    FigureDef {
        name: "faastcc-cache-footprint",
        sweep: "faastcc-zipf",
        about: "FaaSTCC Fig. 8: keys and consistency metadata the caches hold vs Zipf",
        build: faastcc::faastcc_cache_footprint,
    },
    FigureDef {
        name: "faastcc-cache-size",
        sweep: "faastcc-cache-size",
        about: "FaaSTCC Fig. 9: median and p99 latency vs cache size (LRU, share of the unbounded size), static and dynamic",
        build: faastcc::faastcc_cache_size,
    },
    FigureDef {
        name: "faastcc-dag-length",
        sweep: "faastcc-dag-length",
        about: "FaaSTCC Fig. 10: median latency per function vs the chain's length, static and dynamic",
        build: faastcc::faastcc_dag_length,
    },
    FigureDef {
        name: "faastcc-ablation",
        sweep: "faastcc-ablation",
        about: "FaaSTCC Fig. 3: latency and storage accesses without promises, with a fixed snapshot, and of the full system",
        build: faastcc::faastcc_ablation,
    },
    FigureDef {
        name: "faastcc-ec-overhead",
        sweep: "faastcc-ec-overhead",
        about: "FaaSTCC Fig. 11: latency of FaaSTCC and HydroCache normalised to Cloudburst without consistency",
        build: faastcc::faastcc_ec_overhead,
    },
    FigureDef {
        name: "concord-sharers",
        sweep: "concord-sharers",
        about: "Concord Fig. 11: write latency to an item every node shares, and local read-hit latency, vs nodes, against Faa$T",
        build: concord::concord_sharers,
    },
    FigureDef {
        name: "concord-load",
        sweep: "concord-load",
        about: "Concord Fig. 7 in shape: latency vs load, with and without coherence-aware scheduling, against OFC and Faa$T",
        build: concord::concord_load,
    },
    FigureDef {
        name: "concord-read-mix",
        sweep: "concord-load",
        about: "Concord Table III: reads served locally, by a remote hit or by a miss, with and without coherence-aware scheduling",
        build: concord::concord_read_mix,
    },
    FigureDef {
        name: "concord-invalidations",
        sweep: "concord-load",
        about: "Concord Fig. 9: invalidations per write",
        build: concord::concord_invalidations,
    },
    FigureDef {
        name: "concord-cache-size",
        sweep: "concord-cache-size",
        about: "Concord Fig. 14: latency vs cache size, and the speedup over a baseline of the same size",
        build: concord::concord_cache_size,
    },
    FigureDef {
        name: "concord-churn",
        sweep: "concord-churn",
        about: "Concord Fig. 13: throughput while cache instances leave the domain and join it again",
        build: concord::concord_churn,
    },
    FigureDef {
        name: "mucache-fig19",
        sweep: "mucache-chain-depth",
        about: "MuCache Fig. 19: invalidation time vs chain length",
        build: mucache::fig19,
    },
    FigureDef {
        name: "mucache-fig17",
        sweep: "mucache-overhead",
        about: "MuCache Fig. 17: ProxyApp latency of BC, TTL-∞ and MuCache without and with hits",
        build: mucache::fig17,
    },
    FigureDef {
        name: "mucache-fig10",
        sweep: "mucache-load",
        about: "MuCache Figs. 10 and 14: ChainApp latency vs load, BC, TTL-∞ and MuCache",
        build: mucache::fig10,
    },
    FigureDef {
        name: "mucache-fig11",
        sweep: "mucache-ttl",
        about: "MuCache Fig. 11: hit rate and anomalies of TTL caches and MuCache",
        build: mucache::fig11,
    },
    FigureDef {
        name: "mucache-fig13",
        sweep: "mucache-cache-size",
        about: "MuCache Fig. 13: hit rate vs cache size, MuCache and TTL-∞",
        build: mucache::fig13,
    },
    FigureDef {
        name: "mucache-fig15",
        sweep: "mucache-gc",
        about: "MuCache Fig. 15: CM state with and without garbage collection vs run length",
        build: mucache::fig15,
    },
    FigureDef {
        name: "mucache-fig18",
        sweep: "mucache-batch",
        about: "MuCache Fig. 18: CM throughput vs batch size",
        build: mucache::fig18,
    },
];

pub fn figure(name: &str) -> Option<&'static FigureDef> {
    FIGURES.iter().find(|f| f.name == name)
}

/// A point claim passes within ± this share of the paper's value.
const MARGIN: f64 = 0.10;

/// `got` within ± `MARGIN` of `want`.
fn near(got: f64, want: f64) -> bool {
    (got - want).abs() <= MARGIN * want.abs()
}

/// `got` within the paper's range `lo..=hi` widened by ± `MARGIN`.
fn in_range(got: f64, lo: f64, hi: f64) -> bool {
    got >= lo * (1.0 - MARGIN) && got <= hi * (1.0 + MARGIN)
}

// ---------------------------------------------------------------------------------------------
// Helpers over results

fn param(r: &AggRow, name: &str) -> Option<f64> {
    r.params.get(name).and_then(|v| v.as_f64())
}

fn row_param(r: &Row, name: &str) -> Option<f64> {
    r.params.get(name).and_then(|v| v.as_f64())
}

/// Series labels in order of first appearance.
fn labels(results: &Results) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &results.aggregate {
        let l = r.series.clone().unwrap_or_else(|| "simulated".into());
        if !out.contains(&l) {
            out.push(l);
        }
    }
    out
}

fn rows_of<'a>(results: &'a Results, label: &str) -> Vec<&'a AggRow> {
    results.aggregate.iter().filter(|r| r.series.as_deref().unwrap_or("simulated") == label).collect()
}

/// A line: x from a parameter, y = metric × scale, with the 95 % CI as error bars.
fn line(results: &Results, label: &str, x: &str, metric: &str, scale: f64) -> Vec<Pt> {
    let mut pts: Vec<Pt> =
        rows_of(results, label).iter().filter_map(|r| Some(Pt::ci(param(r, x)?, r.mean(metric)? * scale, r.ci(metric) * scale))).collect();
    pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    pts
}

fn series(label: &str, style: Style, points: Vec<Pt>) -> Series {
    Series { label: label.to_string(), color: color_of(label), style, points }
}

fn paper(label: &str, points: &[(f64, f64)]) -> Series {
    Series {
        label: label.to_string(),
        color: RGBColor(0, 0, 0),
        style: Style::Dashed,
        points: points.iter().map(|&(x, y)| Pt::new(x, y)).collect(),
    }
}

/// The aggregate row of `label` whose parameter `x` is closest to `target`.
fn nearest<'a>(results: &'a Results, label: &str, x: &str, target: f64) -> Option<&'a AggRow> {
    rows_of(results, label)
        .into_iter()
        .filter(|r| param(r, x).is_some())
        .min_by(|a, b| (param(a, x).unwrap() - target).abs().total_cmp(&(param(b, x).unwrap() - target).abs()))
}

fn pct(x: f64) -> String {
    format!("{x:.1} %")
}

const RATE: &str = "workload.generator.arrival.rate_per_s";

/// The catalogue entry of the protocol a series ran.
fn entry_of(results: &Results, label: &str) -> Option<&'static Entry> {
    rows_of(results, label).first().and_then(|r| catalogue::find(&r.protocol))
}

/// The series that ran without a cache (the latency floor).
fn is_direct(results: &Results, label: &str) -> bool {
    entry_of(results, label).is_some_and(|e| e.name == Direct::ENTRY.name)
}

/// The observation that measures the metadata a series' protocol carries from function to
/// function (its catalogue profile says which).
fn hop_metric(results: &Results, label: &str) -> Option<&'static str> {
    entry_of(results, label)?.profile.hop_metadata
}

/// The series of caching systems: those whose protocol carries metadata between functions
/// (not the no-cache and eventually consistent baselines).
fn systems(results: &Results) -> Vec<String> {
    labels(results).into_iter().filter(|l| hop_metric(results, l).is_some()).collect()
}

// ---------------------------------------------------------------------------------------------
// A generic line figure

/// `--figure line`: any metric against any parameter, one line per series.
pub fn generic(results: &Results, x: &str, y: &str, x_log: bool, y_log: bool) -> Result<Figure, String> {
    let s: Vec<Series> = labels(results).iter().map(|l| series(l, Style::Line, line(results, l, x, y, 1.0))).collect();
    if s.iter().all(|s| s.points.is_empty()) {
        return Err(format!("no aggregate row has both parameter {x:?} and metric {y:?}"));
    }
    Ok(Figure {
        name: format!("{}-{}", results.sweep, y.replace(['.', '/'], "_")),
        title: format!("{}: {y} vs {x}", results.sweep),
        panels: vec![Panel { title: String::new(), x_label: x.into(), y_label: y.into(), x_log, y_log, series: s, ..Default::default() }],
        notes: vec!["Mean over seeds with 95 % CI.".into()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A figure reads protocol metrics through `metrics::NAME` constants; each must be one some
    /// catalogue protocol reports, or the figure would draw an empty series.
    #[test]
    fn every_metric_a_figure_reads_is_reported_by_some_protocol() {
        let this = include_str!("mod.rs");
        let sources = [
            &this[..this.find("#[cfg(test)]").expect("the tests module")],
            include_str!("boki.rs"),
            include_str!("boki_libs.rs"),
            include_str!("causalmesh.rs"),
            include_str!("concord.rs"),
            include_str!("faastcc.rs"),
            include_str!("load.rs"),
            include_str!("mucache.rs"),
        ];
        let mut read = 0;
        for (source, at) in sources.iter().flat_map(|s| s.match_indices("metrics::").map(move |(at, _)| (*s, at))) {
            let ident: String =
                source[at + 9..].chars().take_while(|c| c.is_ascii_uppercase() || *c == '_' || c.is_ascii_digit()).collect();
            if ident.is_empty() {
                continue;
            }
            let (_, name) = metrics::ALL.iter().find(|(id, _)| *id == ident).unwrap_or_else(|| panic!("metrics::{ident} is not a metric"));
            assert!(catalogue::PROTOCOLS.iter().any(|e| e.reports(name)), "figures read {name}, which no protocol reports");
            read += 1;
        }
        assert!(read >= 5, "the scan found only {read} metric reads");
    }

    #[test]
    fn figures_have_unique_names_and_their_sweeps_exist() {
        for (i, f) in FIGURES.iter().enumerate() {
            assert!(FIGURES[..i].iter().all(|o| o.name != f.name), "figure {} twice", f.name);
            let file = format!("{}/scenarios/sweeps/{}.json", env!("CARGO_MANIFEST_DIR"), f.sweep);
            assert!(std::path::Path::new(&file).is_file(), "figure {} reads sweep {}, but {file} is missing", f.name, f.sweep);
        }
    }
}
