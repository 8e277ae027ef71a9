//! The papers' figures, from sweep results: which sweep feeds each figure, how its numbers are
//! derived, the paper's numbers beside them, and a sentence on whether they agree.
//!
//! Every builder takes `Results` (a sweep's `results.json`) and returns a `chart::Figure` plus
//! `Claim`s for the report, each with its kind (predicted, calibrated, by construction, check;
//! see `claim`) and its pass rule. Figures read metrics by name (see `sweep::metrics_of`), so a new
//! protocol appears in them as soon as a sweep has a series for it.

use crate::chart::{Corner, Figure, HLine, Panel, Pt, Series, Style, color_of, palette_at};
use crate::claim::{Claim, FIG1_LAG, FIG17_HOP, Kind, METADATA_NS_PER_KB, claim};
use crate::sweep::{AggRow, Results, Row, mean_ci};
use causim_models::catalogue::{self, Entry};
use causim_models::direct::Direct;
use causim_models::faastcc::Faastcc;
use causim_models::{Model, metrics};
use plotters::style::RGBColor;
use std::collections::BTreeMap;

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
        build: fig1,
    },
    FigureDef {
        name: "fig17",
        sweep: "fig17-visibility",
        about: "CausalMesh Fig. 17: inconsistency window vs servers, with the marginal increase",
        build: fig17,
    },
    FigureDef {
        name: "latency-load",
        sweep: "micro-load",
        about: "CausalMesh Fig. 13: p50 and p99 workflow latency vs offered load, every system",
        build: latency_load,
    },
    FigureDef {
        name: "throughput-servers",
        sweep: "scale-servers",
        about: "CausalMesh Fig. 15: throughput (highest load with p99 ≤ 10 ms) vs servers",
        build: throughput_servers,
    },
    FigureDef {
        name: "metadata",
        sweep: "micro-load",
        about: "CausalMesh Fig. 14: metadata carried per function hop and held by cache servers, every system",
        build: metadata,
    },
    FigureDef { name: "aborts", sweep: "micro-load", about: "Aborts of every kind vs offered load, every system", build: aborts },
    FigureDef {
        name: "visibility",
        sweep: "micro-load",
        about: "CausalMesh Fig. 12: visibility delay of a write, every system",
        build: visibility,
    },
    FigureDef {
        name: "delay-sweep",
        sweep: "delay-mutants",
        about: "Anomaly rate of each CausalMesh mutant vs network delay",
        build: delay_sweep,
    },
    FigureDef {
        name: "boki-append-scaling",
        sweep: "boki-append-scaling",
        about: "Boki Table 3a: append throughput and latency of one LogBook vs function and storage nodes",
        build: boki_append_scaling,
    },
    FigureDef {
        name: "faastcc-metadata",
        sweep: "faastcc-zipf",
        about: "FaaSTCC Fig. 5: metadata passed between functions vs Zipf",
        build: faastcc_metadata,
    },
    FigureDef {
        name: "faastcc-rounds",
        sweep: "faastcc-zipf",
        about: "FaaSTCC Fig. 6: storage rounds per read vs Zipf",
        build: faastcc_rounds,
    },
    FigureDef {
        name: "faastcc-latency",
        sweep: "faastcc-zipf",
        about: "FaaSTCC Fig. 4a: latency vs Zipf, static and dynamic",
        build: faastcc_latency,
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

// ---------------------------------------------------------------------------------------------
// CausalMesh Fig. 1

const FIG1_PAPER: [(f64, f64); 4] = [(1.0, 0.0), (2.0, 5.4), (4.0, 12.6), (8.0, 14.2)];

fn fig1(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let label = labels(results).into_iter().next().ok_or("no series")?;
    let sim = line(results, &label, "topology.servers", "anomaly_rate", 100.0);
    if sim.is_empty() {
        return Err("fig1: the results have no `topology.servers` parameter".into());
    }
    let panel = Panel {
        title: "Read-your-writes anomalies of a write→read workflow".into(),
        x_label: "eventually consistent cache nodes".into(),
        y_label: "anomaly rate (% of workflows)".into(),
        series: vec![
            series("simulated: eventual (DAX-like) cache", Style::Line, sim.clone()),
            paper("paper: DAX on AWS Lambda", &FIG1_PAPER),
        ],
        legend_at: Some(Corner::LowerRight),
        ..Default::default()
    };
    let fig = Figure {
        name: "fig1".into(),
        title: "CausalMesh Fig. 1 — anomaly rate vs cache nodes".into(),
        panels: vec![panel],
        notes: vec![format!(
            "Mean over {} seeds with 95 % CI; the anomaly is MissedOwnWrite (the second function misses the first one's write).",
            results.aggregate.first().map_or(0, |r| r.runs)
        )],
    };
    let at = |n: f64| sim.iter().find(|p| p.x == n).map(|p| p.y);
    let mut claims = Vec::new();
    for (n, want) in FIG1_PAPER {
        let Some(got) = at(n) else { continue };
        let name = format!("anomaly rate with {n} node{}", if n == 1.0 { "" } else { "s" });
        let c = if n == 1.0 {
            claim(
                "fig1",
                &name,
                Kind::ByConstruction("one node (topology.servers = 1): the read goes to the node that took the write"),
                "exactly 0 %",
            )
            .scored(
                pct(want),
                pct(got),
                Some(got == 0.0),
                "With one node every read sees the primary's write, so there is no anomaly, as in the paper.",
            )?
        } else {
            let holds = near(got, want);
            claim("fig1", &name, Kind::Calibrated(&FIG1_LAG), "within ± 10 % of the paper's rate").scored(
                pct(want),
                pct(got),
                Some(holds),
                if holds {
                    "The lag was fitted once to the whole curve; each node count then follows from random placement: a read lands on a lagging replica with probability (n−1)/n."
                } else {
                    "The lag was fitted to the curve's overall shape; at this node count random placement over a log-normal lag and the real DAX cluster's lag differ by more than the margin."
                },
            )?
        };
        claims.push(c);
    }
    Ok((fig, claims))
}

// ---------------------------------------------------------------------------------------------
// Boki Table 3a

/// Boki Table 3a (n_meta = 3): append throughput (K appends/s) by function = storage nodes.
const BOKI_TABLE3: [(f64, f64); 4] = [(4.0, 156.1), (8.0, 314.5), (16.0, 654.8), (32.0, 1142.7)];
/// Boki §7.2: append latency at the 64-node point (2 560 functions, 32 storage nodes), ms.
const BOKI_APPEND_P50_MS: f64 = 1.94;
const BOKI_APPEND_P99_MS: f64 = 6.33;

fn boki_append_scaling(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let label = labels(results).into_iter().next().ok_or("no series")?;
    const NODES: &str = "protocol.params.storage_nodes";
    let tput = line(results, &label, NODES, "throughput_per_s", 1e-3);
    let p50 = line(results, &label, NODES, "latency_p50_ms", 1.0);
    let p99 = line(results, &label, NODES, "latency_p99_ms", 1.0);
    if tput.len() < 2 {
        return Err("boki-append-scaling: need at least two node counts".into());
    }
    let fig = Figure {
        name: "boki-append-scaling".into(),
        title: "Boki Table 3a — append throughput and latency vs nodes".into(),
        panels: vec![
            Panel {
                title: "(a) append throughput".into(),
                x_label: "function nodes = storage nodes".into(),
                y_label: "appends/s (thousands)".into(),
                series: vec![series("simulated: Boki", Style::Line, tput.clone()), paper("paper (Table 3a)", &BOKI_TABLE3)],
                legend_at: Some(Corner::UpperLeft),
                ..Default::default()
            },
            Panel {
                title: "(b) append latency".into(),
                x_label: "function nodes = storage nodes".into(),
                y_label: "latency (ms)".into(),
                series: vec![
                    Series { label: "simulated: median".into(), color: color_of("Boki"), style: Style::Line, points: p50.clone() },
                    Series { label: "simulated: p99".into(), color: RGBColor(230, 120, 40), style: Style::Line, points: p99.clone() },
                    Series {
                        label: "paper at 32 nodes: median, p99".into(),
                        color: RGBColor(0, 0, 0),
                        style: Style::Markers,
                        points: vec![Pt::new(32.0, BOKI_APPEND_P50_MS), Pt::new(32.0, BOKI_APPEND_P99_MS)],
                    },
                ],
                y_range: Some((0.0, BOKI_APPEND_P99_MS * 1.4)),
                legend_at: Some(Corner::UpperLeft),
                ..Default::default()
            },
        ],
        notes: vec![
            "One LogBook, 80 closed-loop appending functions per function node, function nodes = storage nodes (one shard each), 3 sequencers; mean over seeds with 95 % CI (wide for the p99 with --quick's two seeds; whiskers are cut at 0).".into(),
            "No constant is fitted to Table 3: network and service times are the other Boki scenarios'. The model has no journal flush and no per-byte cost for the paper's 1 KB records.".into(),
        ],
    };
    let mut claims = Vec::new();
    let (first, last) = (tput[0], *tput.last().expect("two points"));
    let paper_first = BOKI_TABLE3.iter().find(|p| p.0 == first.x).map(|p| p.1);
    let paper_last = BOKI_TABLE3.iter().find(|p| p.0 == last.x).map(|p| p.1);
    if let (Some(a), Some(b)) = (paper_first, paper_last) {
        let (want, got) = (b / a, last.y / first.y);
        let holds = near(got, want);
        claims.push(
            claim(
                "boki-append-scaling",
                &format!("append throughput, {} vs {} nodes", last.x, first.x),
                Kind::Predicted,
                "the ratio within ± 10 % of the paper's",
            )
            .scored(
                format!("{want:.2}×"),
                format!("{got:.2}×"),
                Some(holds),
                if holds {
                    "Each function node orders its own shard and the metalog carries one cut per interval whatever the record rate, so with the sequencer far from saturation throughput grows with the nodes."
                } else {
                    "The simulated scaling differs from the paper's by more than the margin: the sequencer and the storage nodes' progress reports are the only shared work, and their cost in the model differs from the authors' cluster."
                },
            )?,
        );
    }
    for (what, pts, want) in [("median", &p50, BOKI_APPEND_P50_MS), ("p99", &p99, BOKI_APPEND_P99_MS)] {
        let Some(p) = pts.iter().find(|p| p.x == 32.0) else { continue };
        let holds = near(p.y, want);
        claims.push(
            claim("boki-append-scaling", &format!("{what} append latency at 32 nodes (2 560 functions)"), Kind::Predicted, "within ± 10 % of the paper's")
                .scored(
                    format!("{want:.2} ms"),
                    format!("{:.2} ms", p.y),
                    Some(holds),
                    if holds {
                        "An append waits for replication, a progress report (local cut interval), a metalog entry on a quorum (global cut interval) and its propagation: about five one-way hops and two timer phases."
                    } else if p.y < want {
                        "Lower than measured: the simulated append is five one-way hops and two cut-interval waits, while the paper's storage nodes also write each 1 KB record to their journal before it counts in their progress (JournalStore), a cost the model does not charge; the tail shows it most."
                    } else {
                        "Higher than measured: the model's service times or cut intervals overstate the authors' cluster."
                    },
                )?,
        );
    }
    Ok((fig, claims))
}

// ---------------------------------------------------------------------------------------------
// CausalMesh Fig. 17

const FIG17_PAPER: [(f64, f64); 6] = [(3.0, 1259.0), (4.0, 1586.0), (5.0, 2030.0), (6.0, 2360.0), (7.0, 2799.0), (8.0, 3138.0)];

fn fig17(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let label = labels(results).into_iter().next().ok_or("no series")?;
    let sim = line(results, &label, "topology.servers", &metrics::observed(metrics::VISIBILITY_NS, "p50"), 1e-3);
    if sim.len() < 2 {
        return Err("fig17: need at least two server counts".into());
    }
    let marg: Vec<Pt> = sim
        .windows(2)
        .enumerate()
        .map(|(i, w)| {
            let ci = ((w[0].hi - w[0].y).powi(2) + (w[1].hi - w[1].y).powi(2)).sqrt();
            Pt::ci(i as f64, w[1].y - w[0].y, ci)
        })
        .collect();
    let cats: Vec<String> = sim.windows(2).map(|w| format!("{}→{}", w[0].x, w[1].x)).collect();
    let paper_marg: Vec<Pt> = sim
        .windows(2)
        .enumerate()
        .filter_map(|(i, w)| {
            let a = FIG17_PAPER.iter().find(|p| p.0 == w[0].x)?.1;
            let b = FIG17_PAPER.iter().find(|p| p.0 == w[1].x)?.1;
            Some(Pt::new(i as f64, b - a))
        })
        .collect();
    let window = Panel {
        title: "(a) inconsistency window".into(),
        x_label: "servers".into(),
        y_label: "inconsistency window (µs, median)".into(),
        series: vec![series("simulated: CausalMesh", Style::Line, sim.clone()), paper("paper", &FIG17_PAPER)],
        legend_at: Some(Corner::UpperLeft),
        ..Default::default()
    };
    let marginal = Panel {
        title: "(b) marginal increase per added server".into(),
        x_label: "servers".into(),
        y_label: "marginal inconsistency window (µs)".into(),
        categories: Some(cats),
        series: vec![
            Series { label: "simulated".into(), color: color_of("CausalMesh"), style: Style::Bars, points: marg.clone() },
            Series { label: "paper".into(), color: RGBColor(120, 120, 120), style: Style::Bars, points: paper_marg },
        ],
        hlines: vec![
            HLine { y: 300.0, label: "paper's stated band (300–450 µs)".into(), color: RGBColor(200, 60, 60) },
            HLine { y: 450.0, label: String::new(), color: RGBColor(200, 60, 60) },
        ],
        // Headroom above the bars and the band, for the legend.
        y_range: Some((0.0, marg.iter().map(|p| p.hi).fold(450.0, f64::max) * 1.35)),
        legend_at: Some(Corner::UpperLeft),
        ..Default::default()
    };
    let fig = Figure {
        name: "fig17".into(),
        title: "CausalMesh Fig. 17 — visibility vs servers".into(),
        panels: vec![window, marginal],
        notes: vec![
            "Window: from a write at its head to its tail revealing it (median per run; mean over seeds with 95 % CI). 0.15 ms RTT; 300 µs of handling per chain hop, fitted to the paper's marginal (b).".into(),
        ],
    };
    let mut claims = Vec::new();
    let (lo, hi) = marg.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.y), b.max(p.y)));
    let in_band = lo >= 300.0 - 1e-9 && hi <= 450.0 + 1e-9;
    claims.push(
        claim(
            "fig17",
            "marginal inconsistency window per added server",
            Kind::Calibrated(&FIG17_HOP),
            "every marginal within the paper's 300–450 µs",
        )
        .scored(
            "300–450 µs",
            format!("{lo:.0}–{hi:.0} µs"),
            Some(in_band),
            if in_band {
                "Each added server adds one chain hop: the network (75 µs one way) plus the server's handling of ServerWrite, set to 300 µs so that the slope lands in the paper's band (the paper does not break the marginal down); the linear shape follows from the chain."
            } else {
                "Each added server adds one chain hop (75 µs network plus the fitted 300 µs of handling); random head placement adds scatter that pushes a marginal outside the band at these seeds."
            },
        )?,
    );
    for &(n, want) in &[FIG17_PAPER[0], FIG17_PAPER[5]] {
        let Some(p) = sim.iter().find(|p| p.x == n) else { continue };
        let holds = near(p.y, want);
        claims.push(
            claim("fig17", &format!("inconsistency window with {n} servers"), Kind::Predicted, "within ± 10 % of the paper's window")
                .scored(
                    format!("{want:.0} µs"),
                    format!("{:.0} µs", p.y),
                    Some(holds),
                    if holds {
                        "The window is about (N−1) chain hops of network plus handling."
                    } else if p.y < want {
                        "Lower than measured: the simulation times head to tail only, while the paper's client takes the midpoint of its write call and then polls the tail, adding its write round trip and polling interval, which the model does not time."
                    } else {
                        "Higher than measured: the fitted 300 µs of handling per hop overestimates the paper's servers."
                    },
                )?,
        );
    }
    Ok((fig, claims))
}

// ---------------------------------------------------------------------------------------------
// CausalMesh Fig. 13: latency vs load

/// The catalogue entry of the protocol a series ran.
fn entry_of(results: &Results, label: &str) -> Option<&'static Entry> {
    rows_of(results, label).first().and_then(|r| catalogue::find(&r.protocol))
}

/// The series that ran without a cache (the latency floor).
fn is_direct(results: &Results, label: &str) -> bool {
    entry_of(results, label).is_some_and(|e| e.name == Direct::ENTRY.name)
}

/// (offered load, p50 ms, p99 ms).
type CsvPoint = (f64, f64, f64);

/// The authors' micro-benchmark results (`figures/micro/short.csv`, its columns as their
/// `short.gp` titles them; there is no FaaSTCC column): per system, (load, p50 ms, p99 ms) at the
/// points `/work/shared/design/protocols/public-artifacts.md` records.
const SHORT_CSV: [(&str, &[CsvPoint]); 4] = [
    ("CausalMesh", &[(1000.0, 4.8, 8.3), (6000.0, 29.2, 203.0)]),
    ("CausalMesh-TCC", &[(1000.0, 6.5, 9.8), (4000.0, 8.2, 19.2), (5000.0, 726.0, 985.0)]),
    ("HydroCache-Con", &[(1000.0, 6.3, 9.4), (3500.0, 11.9, 63.2)]),
    ("HydroCache-Opt", &[(1000.0, 7.6, 11.2), (3000.0, 8.5, 346.0)]),
];

fn latency_load(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let mut panels = Vec::new();
    // One legend, beside the second panel: inside either, it would cover data or the floor line.
    for (metric, title, p99, legend) in [
        ("latency_p50_ms", "(a) median latency", false, Corner::Elsewhere),
        ("latency_p99_ms", "(b) 99th-percentile latency", true, Corner::OutsideRight),
    ] {
        let mut s = Vec::new();
        let mut hlines = Vec::new();
        for label in labels(results) {
            if is_direct(results, &label) {
                if let Some(r) = rows_of(results, &label)
                    .into_iter()
                    .min_by(|a, b| param(a, RATE).unwrap_or(0.0).total_cmp(&param(b, RATE).unwrap_or(0.0)))
                    && let Some(y) = r.mean(metric)
                {
                    hlines.push(HLine { y, label: format!("{label}, unloaded (lower bound)"), color: RGBColor(40, 40, 40) });
                }
                continue;
            }
            s.push(series(&label, Style::Line, line(results, &label, RATE, metric, 1.0)));
        }
        for (system, points) in SHORT_CSV {
            s.push(Series {
                label: format!("paper: {system}"),
                color: color_of(system),
                style: Style::Markers,
                points: points.iter().map(|&(x, p50, p99_ms)| Pt::new(x, if p99 { p99_ms } else { p50 })).collect(),
            });
        }
        panels.push(Panel {
            title: title.into(),
            x_label: "offered load (workflows/s)".into(),
            y_label: "workflow latency (ms, log scale)".into(),
            y_log: true,
            series: s,
            hlines,
            legend_at: Some(legend),
            ..Default::default()
        });
    }
    let fig = Figure {
        name: "latency-load".into(),
        title: "CausalMesh Fig. 13 — micro-benchmark latency vs offered load".into(),
        panels,
        notes: vec![
            "Mean over seeds with 95 % CI; a series stops one load past saturation. Hollow markers: the authors' result CSV (short.csv, columns as their short.gp titles them: CausalMesh, CausalMesh-TCC, HydroCache-Con, HydroCache-Opt; no FaaSTCC column).".into(),
            "Same machines for all: 3 servers × 8 workers, 30 µs mean service per message, 5 ms RTT to storage.".into(),
        ],
    };
    let mut claims = Vec::new();
    // Throughput ratio: the highest load each system sustains with p99 ≤ 10 ms.
    let sustain = |label: &str| -> Option<f64> {
        rows_of(results, label)
            .iter()
            .filter(|r| r.mean("latency_p99_ms").is_some_and(|p| p <= 10.0))
            .filter_map(|r| param(r, RATE))
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
    };
    if let Some(cm) = sustain("CausalMesh") {
        let mut parts = Vec::new();
        let mut ratios = Vec::new();
        for b in ["FaaSTCC", "HydroCache-Con", "HydroCache-Opt"] {
            if let Some(x) = sustain(b) {
                ratios.push(cm / x);
                parts.push(format!("{b} {:.2}×", cm / x));
            }
        }
        if !ratios.is_empty() {
            let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let holds = ratios.iter().all(|r| in_range(*r, 1.57, 2.2));
            claims.push(
                claim(
                    "latency-load",
                    "CausalMesh throughput / baselines' (highest load with p99 ≤ 10 ms)",
                    Kind::Predicted,
                    "every ratio within the paper's 1.57–2.2× ± 10 % (1.41–2.42×)",
                )
                .scored(
                    "1.57–2.2×",
                    format!("{lo:.2}–{hi:.2}× ({})", parts.join(", ")),
                    Some(holds),
                    if holds {
                        "The baselines saturate first."
                    } else {
                        "Not reproduced: at 3 servers every system saturates its 24 worker slots (each workflow holds one through a 5 ms database write) long before any cache server's CPU, and our models charge every protocol the same 30 µs per message; the paper's gap comes from CPU costs (HydroCache-Con at 98 % CPU at 1k req/s, Fig. 14) and background-refresh contention the models do not charge."
                    },
                )?,
            );
        }
    }
    for (system, points) in SHORT_CSV {
        let (_, want50, want99) = points[0];
        let Some(r) = nearest(results, system, RATE, 1000.0) else { continue };
        let (p50, p99) = (r.mean("latency_p50_ms").unwrap_or(f64::NAN), r.mean("latency_p99_ms").unwrap_or(f64::NAN));
        let holds = near(p50, want50) && near(p99, want99);
        claims.push(
            claim(
                "latency-load",
                &format!("{system} p50 / p99 at 1000 workflows/s"),
                Kind::Predicted,
                "both within ± 10 % of the authors' CSV",
            )
            .scored(
                format!("{want50} / {want99} ms"),
                format!("{p50:.1} / {p99:.1} ms"),
                Some(holds),
                if holds {
                    "The floor is the one synchronous 5 ms database write plus three dispatches and six cache reads."
                } else {
                    "Every system's floor here is the same synchronous 5 ms database write plus three dispatches (0.3 ms mean each, assumed) and cache reads, at the same 30 µs per message: the models charge no per-protocol CPU or metadata work, and the authors' CausalMesh median (4.8 ms) is below that floor, so their write path does not wait for the database (issue 18)."
                },
            )?,
        );
    }
    // Median and tail reductions vs each baseline over the loads both ran (Fig. 13's ranges).
    let at_load = |label: &str, metric: &str| -> BTreeMap<u64, f64> {
        rows_of(results, label).iter().filter_map(|r| Some((param(r, RATE)? as u64, r.mean(metric)?))).collect()
    };
    for (b, med_lo, med_hi, tail_up_to) in
        [("HydroCache-Con", 7.0, 59.0, 85.0), ("HydroCache-Opt", 15.0, 44.0, 97.0), ("FaaSTCC", 5.0, 38.0, 54.0)]
    {
        let (cm50, b50) = (at_load("CausalMesh", "latency_p50_ms"), at_load(b, "latency_p50_ms"));
        let (cm99, b99) = (at_load("CausalMesh", "latency_p99_ms"), at_load(b, "latency_p99_ms"));
        let red = |a: &BTreeMap<u64, f64>, c: &BTreeMap<u64, f64>| -> Vec<f64> {
            a.iter().filter_map(|(x, v)| c.get(x).map(|w| (w - v) / w * 100.0)).collect()
        };
        let (m, t) = (red(&cm50, &b50), red(&cm99, &b99));
        if m.is_empty() {
            continue;
        }
        let range = |v: &[f64]| (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max));
        let (mlo, mhi) = range(&m);
        let (_, thi) = range(&t);
        let holds = mlo >= med_lo - 10.0 && mhi <= med_hi + 10.0 && (thi - tail_up_to).abs() <= 10.0;
        claims.push(
            claim(
                "latency-load",
                &format!("CausalMesh vs {b}: median / tail latency lower by"),
                Kind::Predicted,
                format!(
                    "at every load both ran, the median reduction within {:.0}–{:.0} % (the paper's ± 10 points); the largest tail reduction within {:.0}–{:.0} %",
                    med_lo - 10.0,
                    med_hi + 10.0,
                    tail_up_to - 10.0,
                    (tail_up_to + 10.0).min(100.0)
                ),
            )
            .scored(
                format!("median {med_lo:.0}–{med_hi:.0} %, tail up to {tail_up_to:.0} %"),
                format!("median {mlo:.0}–{mhi:.0} %, tail up to {thi:.0} % (over the loads both ran)"),
                Some(holds),
                if holds {
                    "Near saturation the systems part: the one that saturates later keeps a lower median and tail."
                } else {
                    "Not reproduced: below saturation every system pays the same 5 ms commit and cache-hit reads, and the models charge every protocol the same 30 µs per message, so the curves lie on top of each other until the worker slots run out, then part by more or less than the paper's; the paper's gaps come from per-request CPU costs (Fig. 14) and background-refresh contention the models do not charge."
                },
            )?,
        );
    }
    Ok((fig, claims))
}

// ---------------------------------------------------------------------------------------------
// CausalMesh Fig. 15: throughput vs servers

const SERVERS: &str = "topology.servers";
const P99_BOUND_MS: f64 = 10.0;

/// Per series and server count: the highest offered load with p99 ≤ 10 ms and completions ≥ 90 %
/// of it, per seed, then mean and CI. (Not the first failing load: near the bound one unlucky
/// low-load run, a few cold storage reads over a short run, would zero a whole bar.)
pub fn sustained(results: &Results) -> BTreeMap<(String, u64), (f64, f64, usize)> {
    let offered_key = format!("{RATE}×{SERVERS}");
    let mut walks: BTreeMap<(String, u64, u64), Vec<(f64, bool)>> = BTreeMap::new();
    for r in &results.runs {
        let (Some(n), Some(offered)) = (row_param(r, SERVERS), row_param(r, &offered_key).or_else(|| row_param(r, RATE))) else { continue };
        let ok = r.metric("latency_p99_ms").is_some_and(|p| p <= P99_BOUND_MS)
            && r.metric("throughput_per_s").is_some_and(|t| t >= 0.9 * offered);
        walks.entry((r.series.clone().unwrap_or_default(), n as u64, r.seed)).or_default().push((offered, ok));
    }
    let mut per: BTreeMap<(String, u64), Vec<f64>> = BTreeMap::new();
    for ((label, n, _), mut w) in walks {
        w.sort_by(|a, b| a.0.total_cmp(&b.0));
        let best = w.iter().filter(|(_, ok)| *ok).map(|(x, _)| *x).fold(0.0, f64::max);
        per.entry((label, n)).or_default().push(best);
    }
    per.into_iter()
        .map(|(k, xs)| {
            let (m, c) = mean_ci(&xs);
            (k, (m, c, xs.len()))
        })
        .collect()
}

fn throughput_servers(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let sus = sustained(results);
    let mut ns: Vec<u64> = sus.keys().map(|k| k.1).collect();
    ns.sort();
    ns.dedup();
    if ns.is_empty() {
        return Err("throughput-servers: the results have no `topology.servers` parameter".into());
    }
    let cats: Vec<String> = ns.iter().map(|n| n.to_string()).collect();
    let mut bars = Vec::new();
    let mut norm = Vec::new();
    for label in labels(results) {
        let pts: Vec<Pt> =
            ns.iter().enumerate().filter_map(|(i, n)| sus.get(&(label.clone(), *n)).map(|&(m, c, _)| Pt::ci(i as f64, m, c))).collect();
        let npts: Vec<Pt> = ns
            .iter()
            .filter_map(|n| sus.get(&(label.clone(), *n)).map(|&(m, c, _)| Pt::ci(*n as f64, m / *n as f64, c / *n as f64)))
            .collect();
        bars.push(series(&label, Style::Bars, pts));
        norm.push(series(&label, Style::Line, npts));
    }
    let fig = Figure {
        name: "throughput-servers".into(),
        title: "CausalMesh Fig. 15 — throughput vs number of servers".into(),
        panels: vec![
            Panel {
                title: "(a) throughput".into(),
                x_label: "servers".into(),
                y_label: "throughput (workflows/s, p99 ≤ 10 ms)".into(),
                categories: Some(cats),
                series: bars,
                legend_at: Some(Corner::UpperLeft),
                ..Default::default()
            },
            Panel {
                title: "(b) normalised throughput".into(),
                x_label: "servers".into(),
                y_label: "throughput per server (workflows/s)".into(),
                series: norm,
                legend_at: Some(Corner::LowerLeft),
                ..Default::default()
            },
        ],
        notes: vec![
            "Throughput: the highest offered load (Poisson, stepped per server) whose p99 stays ≤ 10 ms (the paper's saturation bound, §9.4) with ≥ 90 % of it completed; mean over seeds with 95 % CI (none with one seed). Series that coincide overlap (markers differ).".into(),
            "Micro-benchmark workflow; each server has 8 workers. Resolution is the load step.".into(),
        ],
    };
    let mut claims = Vec::new();
    let get = |l: &str, n: u64| sus.get(&(l.to_string(), n)).map(|v| v.0);
    let (first, last) = (ns[0], *ns.last().unwrap());
    if let (Some(a), Some(b)) = (get("CausalMesh", first), get("CausalMesh", last)) {
        let eff = (b / last as f64) / (a / first as f64);
        claims.push(
            claim(
                "throughput-servers",
                &format!("CausalMesh normalised throughput, {last} vs {first} servers"),
                Kind::ByConstruction("8 worker slots per server (topology.workers_per_machine), the bottleneck at every size"),
                "per-server throughput at the largest size within 10 % of the smallest's",
            )
            .scored(
                "nearly constant (linear scaling)",
                format!("{:.0} vs {:.0} per server ({:.0} %)", b / last as f64, a / first as f64, eff * 100.0),
                Some(eff >= 1.0 - MARGIN),
                if eff >= 1.0 - MARGIN {
                    "Reads never coordinate and the worker slots each server brings are the bottleneck at every size, so throughput grows with servers by construction."
                } else {
                    "Reads never coordinate and each server brings its worker slots, but every write costs every server one chain hop (O(N) per write), which bends the per-server throughput at the largest size (by one or two load steps of 100/s per server)."
                },
            )?,
        );
    }
    if let Some((n, best)) = ns.iter().filter_map(|n| get("CausalMesh-TCC", *n).map(|t| (*n, t))).max_by(|a, b| a.1.total_cmp(&b.1)) {
        let holds = near(best, 2800.0);
        claims.push(
            claim(
                "throughput-servers",
                "CausalMesh-TCC saturation throughput (best over server counts)",
                Kind::Predicted,
                "the best throughput within ± 10 % of 2800 (2520–3080)",
            )
            .scored(
                "≈ 2800 req/s (saturates as servers are added)",
                format!("{best:.0} workflows/s at {n} servers"),
                Some(holds),
                if holds {
                    "With a ring buffer of one version, aborts grow with the servers and the load, so throughput peaks, as in the paper, whose explanation is contention too."
                } else {
                    "The shape is the paper's (a read whose one cached version does not form a cut with the workflow's reads aborts; more servers mean more writes in flight, so aborts grow and throughput peaks), but the peak is off: the models charge no per-protocol CPU, so the cost of each attempt is the authors' servers' only by chance."
                },
            )?,
        );
    }
    let both: Vec<u64> = ns.iter().copied().filter(|n| get("CausalMesh-TCC", *n).is_some() && get("FaaSTCC", *n).is_some()).collect();
    if !both.is_empty() {
        let ratios: Vec<(u64, f64)> =
            both.iter().map(|n| (*n, get("CausalMesh-TCC", *n).unwrap() / get("FaaSTCC", *n).unwrap().max(1.0))).collect();
        let holds = ratios.iter().all(|(_, r)| in_range(*r, 1.3, 1.8));
        claims.push(
            claim(
                "throughput-servers",
                "CausalMesh-TCC / FaaSTCC throughput",
                Kind::Predicted,
                "at every server count, within the paper's 1.3–1.8× ± 10 % (1.17–1.98×)",
            )
            .scored(
                "1.3–1.8×",
                ratios.iter().map(|(n, r)| format!("{r:.2}× at {n}")).collect::<Vec<_>>().join(", "),
                Some(holds),
                if holds {
                    "FaaSTCC's single storage partition serves every miss and commit and saturates first."
                } else {
                    "Not reproduced: FaaSTCC's chains rarely abort and our models charge its promise checks no more CPU than CausalMesh's work, so it scales with the worker slots, while CausalMesh-TCC's aborts grow with the server count; the paper's gap comes from CPU costs and refresh contention the models do not charge."
                },
            )?,
        );
    }
    if let (Some(a), Some(b)) = (get("FaaSTCC", first), get("FaaSTCC", last)) {
        let eff = (b / last as f64) / (a / first as f64);
        claims.push(
            claim(
                "throughput-servers",
                &format!("FaaSTCC normalised throughput, {last} vs {first} servers"),
                Kind::Predicted,
                "per-server throughput at the largest size below 90 % of the smallest's (the paper gives no figure)",
            )
            .scored(
                "degrades as servers are added",
                format!("{:.0} vs {:.0} per server ({:.0} %)", b / last as f64, a / first as f64, eff * 100.0),
                Some(eff < 1.0 - MARGIN),
                "Its one storage partition (the single Redis of §9.1) takes every commit and stable-time exchange, so it becomes the bottleneck once enough servers feed it.",
            )?,
        );
    }
    for n in [8u64, last] {
        if n == 8 && !ns.contains(&8) || (n == last && last == 8 && claims.iter().any(|c| c.claim.contains("HydroCache-Con at 8"))) {
            continue;
        }
        if let (Some(hc), Some(cm)) = (get("HydroCache-Con", n), get("CausalMesh", n)) {
            let holds = hc / cm <= 0.8;
            claims.push(
                claim(
                    "throughput-servers",
                    &format!("HydroCache-Con at {n} servers"),
                    Kind::Predicted,
                    "at most 0.8× CausalMesh's throughput (the paper gives no figure)",
                )
                .scored(
                    "does not scale to 8 servers or beyond",
                    format!("{hc:.0} workflows/s ({:.2}× CausalMesh)", hc / cm),
                    Some(holds),
                    if holds {
                        "Its coordinator contacts every cache twice per workflow, so each cache's load grows with the number of servers times the load per server."
                    } else {
                        "Its coordinator contacts every cache twice per workflow, but at this size the caches' CPU is not yet the bottleneck in the model (30 µs per message for every protocol); it falls behind only at 16 servers."
                    },
                )?,
            );
        }
    }
    Ok((fig, claims))
}

// ---------------------------------------------------------------------------------------------
// Metadata (CausalMesh Fig. 14)

/// The observation that measures the metadata a series' protocol carries from function to
/// function (its catalogue profile says which).
fn hop_metric(results: &Results, label: &str) -> Option<&'static str> {
    entry_of(results, label)?.profile.hop_metadata
}

/// Cache-server metadata in bytes per server, by the final metric the protocol's profile names.
fn server_metadata(results: &Results, r: &AggRow, label: &str) -> Option<f64> {
    let servers = r.mean("servers").unwrap_or(3.0);
    let name = entry_of(results, label)?.profile.server_metadata?;
    r.mean(&metrics::final_metric(name)).map(|b| b / servers)
}

const FIG14_PAPER_KB: [(&str, f64); 5] =
    [("CausalMesh", 35.1), ("CausalMesh-TCC", 69.9), ("HydroCache-Con", 45.3), ("HydroCache-Opt", 99.8), ("FaaSTCC", 28.8)];

/// The series of caching systems: those whose protocol carries metadata between functions
/// (not the no-cache and eventually consistent baselines).
fn systems(results: &Results) -> Vec<String> {
    labels(results).into_iter().filter(|l| hop_metric(results, l).is_some()).collect()
}

/// Fig. 14's metadata held per cache server. For CausalMesh the paper also says it "stays low
/// and stable", so the largest I-cache sample of the run must stay near its median sample (a
/// buffer that grows through the run ends near twice its median).
fn server_metadata_claim(l: &str, r: &AggRow, kb: f64, want: f64) -> Result<Claim, String> {
    let icache = (r.mean(&metrics::observed(metrics::ICACHE_BYTES, "p50")), r.mean(&metrics::observed(metrics::ICACHE_BYTES, "max")));
    let name = format!("{l} cache-server metadata at 1k req/s");
    if let (Some(p50), Some(max)) = icache {
        let growth = max / p50.max(1.0);
        let holds = near(kb, want) && growth <= 1.5;
        return claim(
            "metadata",
            &name,
            Kind::Predicted,
            "within ± 10 % of the paper's KB, and stable: the run's largest I-cache sample at most 1.5× its median sample",
        )
        .scored(
            format!("{want} KB, stable"),
            format!("{kb:.1} KB; largest I-cache sample {growth:.2}× the median"),
            Some(holds),
            if holds {
                "The I-cache holds only versions not yet integrated or disseminated, so it stays small and flat."
            } else {
                "Not stable in the model: a version leaves a non-tail server's I-cache only when a read there integrates its key or the tail disseminates it (params.disseminate, off here; the paper calls it optional, §5.2), and with 1 M keys most written keys are never read again at that server, so the I-cache grows with run length (about 23 KB per server per second at 1k/s), and any match with the paper's figure is a coincidence of run length. With dissemination on it stays near 0.1 KB."
            },
        );
    }
    let holds = near(kb, want);
    claim("metadata", &name, Kind::Predicted, "within ± 10 % of the paper's KB").scored(
        format!("{want} KB"),
        format!("{kb:.1} KB"),
        Some(holds),
        if holds {
            "The dependency entries of the cached versions match the paper's snapshot."
        } else {
            "Our HydroCache keeps each cached version's whole flattened causal past (16 B per entry, never collected, §11), over a pre-warmed cache of 1 M keys, so it is far above the paper's 1-minute snapshot of the authors' leaner encoding."
        },
    )
}

fn metadata(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let sys = systems(results);
    let mut med = Vec::new();
    let mut srv = Vec::new();
    let mut pap = Vec::new();
    let mut claims = Vec::new();
    for (i, l) in sys.iter().enumerate() {
        let Some(r) = nearest(results, l, RATE, 1000.0) else { continue };
        let m = hop_metric(results, l).expect("systems carry metadata");
        if let (Some(p50), Some(p99)) = (r.mean(&metrics::observed(m, "p50")), r.mean(&metrics::observed(m, "p99"))) {
            med.push(Pt { x: i as f64, y: p50.max(1.0), lo: p50.max(1.0), hi: p99.max(1.0) });
        }
        if let Some(b) = server_metadata(results, r, l) {
            let kb = b / 1024.0;
            srv.push(Pt::new(i as f64, kb));
            if let Some(&(_, want)) = FIG14_PAPER_KB.iter().find(|(n, _)| n == l) {
                claims.push(server_metadata_claim(l, r, kb, want)?);
            }
        }
        if let Some((_, kb)) = FIG14_PAPER_KB.iter().find(|(n, _)| n == l) {
            pap.push(Pt::new(i as f64, *kb));
        }
        if let Some(p50) = r.mean(&metrics::observed(m, "p50")) {
            let name = format!("{l}: metadata carried per function hop (median)");
            let c = if l == "FaaSTCC" {
                claim("metadata", &name, Kind::ByConstruction("the snapshot interval: two 8-byte timestamps"), "exactly 16 B").scored(
                    "16 B (two timestamps)",
                    format!("{p50:.0} B"),
                    Some((p50 - 16.0).abs() < 1.0),
                    "The snapshot interval is two 8-byte timestamps whatever the workload, as the paper states.",
                )?
            } else {
                claim("metadata", &name, Kind::Predicted, "none: the paper gives no figure for this workload").scored(
                    if l == "HydroCache-Opt" { "not reported here (72 KB on FaaSTCC's workload, see faastcc-metadata)" } else { "not reported" },
                    format!("{p50:.0} B"),
                    None,
                    match l.as_str() {
                        "HydroCache-Opt" => "The dependency map grows with the causal past of what the workflow read; on the micro-benchmark (1 M keys) it is smaller than on FaaSTCC's 100 K-key workload.",
                        "HydroCache-Con" => "Con carries only the snapshot id and the versions read, since its read set is known up front.",
                        _ => "CausalMesh's context is the workflow's dependencies and its own writes (exact versions), a few entries per workflow.",
                    },
                )?
            };
            claims.push(c);
        }
    }
    let cats: Vec<String> = sys.clone();
    let fig = Figure {
        name: "metadata".into(),
        title: "Metadata — per function hop and per cache server (CausalMesh Fig. 14)".into(),
        panels: vec![
            Panel {
                title: "(a) carried from function to function".into(),
                x_label: "system".into(),
                y_label: "bytes per hop (median, whisker p99; log)".into(),
                y_log: true,
                categories: Some(cats.clone()),
                series: vec![Series { label: "simulated (median, p99 whisker)".into(), color: RGBColor(90, 90, 90), style: Style::Bars, points: med }],
                category_colors: Some(cats.iter().map(|c| color_of(c)).collect()),
                legend_at: Some(Corner::UpperLeft),
                ..Default::default()
            },
            Panel {
                title: "(b) held by each cache server".into(),
                x_label: "system".into(),
                y_label: "metadata per server (KB, log)".into(),
                y_log: true,
                categories: Some(cats),
                series: vec![
                    Series { label: "simulated, end of run".into(), color: color_of("CausalMesh"), style: Style::Bars, points: srv },
                    Series { label: "paper, Fig. 14".into(), color: RGBColor(120, 120, 120), style: Style::Bars, points: pap },
                ],
                legend_at: Some(Corner::UpperLeft),
                ..Default::default()
            },
        ],
        notes: vec![
            "Micro-benchmark at 1000 workflows/s, 3 servers. (a) CausalMesh: the workflow context a function hands on; others: the protocol metadata passed per hop. (b) At the end of the run: CausalMesh: I-cache (+ C-cache dependencies for -TCC), which grows with run length; HydroCache: dependency entries of cached versions; our FaaSTCC model does not measure its servers' metadata (no simulated bar).".into(),
        ],
    };
    Ok((fig, claims))
}

// ---------------------------------------------------------------------------------------------
// Aborts and visibility

fn aborts(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let sys = systems(results);
    let s: Vec<Series> = sys.iter().map(|l| series(l, Style::Line, line(results, l, RATE, "aborts_per_100_workflows", 1.0))).collect();
    let fig = Figure {
        name: "aborts".into(),
        title: "Aborts vs offered load (micro-benchmark)".into(),
        panels: vec![Panel {
            title: "every abort: read transactions, retried attempts, workflows that gave up".into(),
            x_label: "offered load (workflows/s)".into(),
            y_label: "aborts per 100 workflows".into(),
            series: s,
            legend_at: Some(Corner::UpperLeft),
            ..Default::default()
        }],
        notes: vec![
            "Aborted read transactions (each client retry counts) + aborted workflow attempts that were retried + workflows that used up their attempts, per 100 workflows started; mean over seeds with 95 % CI. Series at 0 lie on top of each other.".into(),
        ],
    };
    let mut claims = Vec::new();
    for (l, paper_says, free_by) in [
        ("CausalMesh", "abort-free (Fig. 12)", Some("CausalMesh aborts only read transactions, and the micro-benchmark has none")),
        (
            "HydroCache-Con",
            "abort-free (Fig. 12)",
            Some("HydroCache-Con joins a consistent snapshot before the workflow runs and validates nothing after"),
        ),
        ("CausalMesh-TCC", "aborts (Fig. 12)", None),
        ("HydroCache-Opt", "aborts (Fig. 12)", None),
        ("FaaSTCC", "aborts (Fig. 12); rare in chains (FaaSTCC §4.8)", None),
    ] {
        let Some(r) = nearest(results, l, RATE, 1000.0) else { continue };
        let a = r.mean("aborts_per_100_workflows").unwrap_or(0.0);
        let part = |m: &str| r.mean(m).unwrap_or(0.0);
        let simulated = format!(
            "{a:.2} per 100 workflows (per run: read transactions {:.1}, attempts retried {:.1}, gave up {:.1})",
            part("aborts_read_txn"),
            part("aborts_retried"),
            part("aborts_gave_up")
        );
        let why = match l {
            "CausalMesh" => "Reads never wait or abort; integration always finds the needed versions in the I-cache.",
            "HydroCache-Con" => "The joined snapshot is consistent before the workflow runs, so nothing can abort.",
            "CausalMesh-TCC" if a > 1.0 => {
                "With a ring buffer of one version, a read whose newest version does not form a cut with the read set aborts and retries; hot Zipf keys make this frequent."
            }
            "CausalMesh-TCC" => {
                "It may abort (a read whose only version does not form a cut with the read set), but at this load over 1 M keys few reads race a write; its aborts grow with load, servers and run length (see the figure and throughput-servers)."
            }
            "HydroCache-Opt" => {
                "Validation aborts a function whose read depends on a newer version of a key the workflow read; rare with 1 M keys."
            }
            _ => "Chains only abort when a needed version was garbage-collected; the store keeps versions long.",
        };
        let name = format!("{l} aborts at 1k/s");
        // The paper states which systems are abort-free; for the others it gives no rate.
        let c = match free_by {
            Some(input) => claim("aborts", &name, Kind::ByConstruction(input), "no abort of any kind (read transaction, attempt, gave up)")
                .scored(paper_says, simulated, Some(a == 0.0), why)?,
            None => claim("aborts", &name, Kind::Predicted, "none: the paper gives no rate").scored(paper_says, simulated, None, why)?,
        };
        claims.push(c);
    }
    Ok((fig, claims))
}

fn visibility(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let sys = systems(results);
    let mut p50 = Vec::new();
    let mut claims = Vec::new();
    for (i, l) in sys.iter().enumerate() {
        let Some(r) = nearest(results, l, RATE, 1000.0) else { continue };
        if let (Some(a), Some(b)) =
            (r.mean(&metrics::observed(metrics::VISIBILITY_NS, "p50")), r.mean(&metrics::observed(metrics::VISIBILITY_NS, "p99")))
        {
            p50.push(Pt { x: i as f64, y: a / 1e6, lo: a / 1e6, hi: b / 1e6 });
            let (median, p99) = (a / 1e6, b / 1e6);
            let simulated = format!("{median:.2} ms (p99 {p99:.2} ms)");
            let name = format!("{l} visibility delay (median)");
            let c = if l.starts_with("CausalMesh") {
                let bound = FIG17_PAPER[0].1 / 1000.0 * (1.0 + MARGIN);
                let holds = median <= bound;
                claim("visibility", &name, Kind::Predicted, format!("median at most Fig. 17's window at 3 servers + 10 % ({bound:.2} ms)")).scored(
                    "N × RTT (Fig. 12; 1.26 ms at 3 servers, Fig. 17)",
                    simulated,
                    Some(holds),
                    if holds {
                        "A write is visible once it reaches its chain's tail: N hops."
                    } else {
                        "A write is visible once it reaches its chain's tail, but the model flushes it to the database synchronously first, so it is the 5 ms flush plus N hops; the paper's write path does not wait for the database (issue 18)."
                    },
                )?
            } else {
                let (input, period) = if l.starts_with("FaaSTCC") {
                    ("the 50 ms push period (params.push_period_ns)", 50.0)
                } else {
                    ("the 100 ms refresh period (params.refresh_period_ns)", 100.0)
                };
                claim("visibility", &name, Kind::ByConstruction(input), format!("p99 at most the period + 10 ms ({:.0} ms)", period + 10.0))
                    .scored(
                        format!("up to the {period:.0} ms refresh period"),
                        simulated,
                        Some(p99 <= period + 10.0),
                        "Writes reach a cache only with its periodic refresh, so the delay is spread over the period (median about half of it).",
                    )?
            };
            claims.push(c);
        }
    }
    let fig = Figure {
        name: "visibility".into(),
        title: "Visibility delay of a write (micro-benchmark, 1000 workflows/s)".into(),
        panels: vec![Panel {
            title: "from a write's commit to its visibility in a cache".into(),
            x_label: "system".into(),
            y_label: "visibility delay (ms; median, whisker p99; log)".into(),
            y_log: true,
            categories: Some(sys.clone()),
            series: vec![Series { label: "simulated (median, p99 whisker)".into(), color: RGBColor(90, 90, 90), style: Style::Bars, points: p50 }],
            category_colors: Some(sys.iter().map(|c| color_of(c)).collect()),
            hlines: vec![
                HLine { y: 50.0, label: "FaaSTCC push period (50 ms)".into(), color: color_of("FaaSTCC") },
                HLine { y: 100.0, label: "HydroCache refresh period (100 ms)".into(), color: color_of("HydroCache-Con") },
            ],
            legend_at: Some(Corner::OutsideRight),
            ..Default::default()
        }],
        notes: vec!["CausalMesh: write at the head → revealed at the tail (includes the synchronous 5 ms database flush); FaaSTCC: commit → installed in a cache; HydroCache: written to the database → merged into a cache's cut.".into()],
    };
    Ok((fig, claims))
}

// ---------------------------------------------------------------------------------------------
// Delay sweep: anomaly rate of each mutant vs network delay

const DELAY: &str = "topology.delay.mean_ns";

fn delay_sweep(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let mut s = Vec::new();
    let mut claims = Vec::new();
    for (i, l) in labels(results).into_iter().enumerate() {
        let pts = line(results, &l, DELAY, "anomaly_rate", 100.0);
        let pts: Vec<Pt> = pts.into_iter().map(|p| Pt { x: p.x / 1000.0, ..p }).collect();
        let peak = pts.iter().map(|p| p.y).fold(0.0, f64::max);
        let correct = l.to_lowercase().starts_with("correct");
        let (rule, paper_says) = if correct {
            ("0 at every delay", "0 (causal+ consistency)")
        } else {
            ("above 0 at some delay", "> 0 (the mutant's named anomaly)")
        };
        claims.push(claim("delay-sweep", &format!("{l}: most violations per 100 workflows over the delays"), Kind::Check, rule).scored(
            paper_says,
            format!("{peak:.2}"),
            Some(if correct { peak == 0.0 } else { peak > 0.0 }),
            if correct {
                "The correct protocol never shows an anomaly, at any delay."
            } else {
                "Each mutant's anomaly needs a read to overtake a propagation, so how often it shows depends on the delay against the dispatch delay between functions."
            },
        )?);
        // Zeros cannot be drawn on a log axis; a series that is zero everywhere says so in its label.
        let label = if peak == 0.0 { format!("{l} (0 at every delay)") } else { l.clone() };
        let pts: Vec<Pt> = pts.into_iter().filter(|p| p.y > 0.0).map(|p| Pt { lo: p.lo.max(p.y / 10.0), ..p }).collect();
        s.push(Series { label, color: palette_at(i), style: Style::Line, points: pts });
    }
    let fig = Figure {
        name: "delay-sweep".into(),
        title: "CausalMesh mutants — anomaly rate vs network delay".into(),
        panels: vec![Panel {
            title: "roaming mixed workload, 3 servers".into(),
            x_label: "mean one-way delay between machines (µs, log scale)".into(),
            y_label: "violations per 100 workflows (log scale)".into(),
            x_log: true,
            y_log: true,
            y_range: Some(decades_around(&s)),
            series: s,
            legend_at: Some(Corner::OutsideRight),
            ..Default::default()
        }],
        notes: vec![
            "Each mutant removes one safeguard (causim protocols). Violations found by the causal+ (CCv) checker, or TCC for -TCC; one workflow can show several.".into(),
            "Mean over seeds with 95 % CI; a lower whisker is cut at a tenth of its mean (a log axis cannot draw 0 or below).".into(),
        ],
    };
    Ok((fig, claims))
}

/// A log axis's range from the power of ten at or below the lowest whisker to the one at or
/// above the highest, so both ends carry a label.
fn decades_around(series: &[Series]) -> (f64, f64) {
    let pts = || series.iter().flat_map(|s| s.points.iter());
    let lo = pts().map(|p| p.lo).filter(|y| *y > 0.0).fold(f64::INFINITY, f64::min);
    let hi = pts().map(|p| p.hi).fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        return (0.1, 100.0);
    }
    (10f64.powf(lo.log10().floor()), 10f64.powf((hi * 1.01).log10().ceil()))
}

// ---------------------------------------------------------------------------------------------
// FaaSTCC Figs. 4a, 5, 6

const ZIPF: &str = "workload.generator.keys.zipf_theta";

fn zipf_cats(results: &Results) -> Vec<f64> {
    let mut z: Vec<f64> = results.aggregate.iter().filter_map(|r| param(r, ZIPF)).collect();
    z.sort_by(f64::total_cmp);
    z.dedup();
    z
}

fn bars_by_zipf(results: &Results, metric_mid: &str, metric_hi: Option<&str>, scale: f64) -> (Vec<String>, Vec<Series>) {
    let z = zipf_cats(results);
    let mut s = Vec::new();
    for l in labels(results) {
        let pts: Vec<Pt> = z
            .iter()
            .enumerate()
            .filter_map(|(i, zv)| {
                let r = rows_of(results, &l).into_iter().find(|r| param(r, ZIPF) == Some(*zv))?;
                let y = r.mean(metric_mid)? * scale;
                let hi = metric_hi.and_then(|m| r.mean(m)).map_or(y + r.ci(metric_mid) * scale, |h| h * scale);
                let lo = if metric_hi.is_some() { y } else { y - r.ci(metric_mid) * scale };
                Some(Pt { x: i as f64, y, lo, hi })
            })
            .collect();
        s.push(series(&l, Style::Bars, pts));
    }
    (z.iter().map(|v| format!("Zipf {v}")).collect(), s)
}

fn value_at(results: &Results, label: &str, z: f64, metric: &str) -> Option<f64> {
    rows_of(results, label).into_iter().find(|r| param(r, ZIPF) == Some(z))?.mean(metric)
}

fn dynamic_label(results: &Results) -> Option<String> {
    labels(results).into_iter().find(|l| l.to_lowercase().contains("opt") || l.to_lowercase().contains("dynamic"))
}

fn faastcc_label(results: &Results) -> Option<String> {
    labels(results).into_iter().find(|l| entry_of(results, l).is_some_and(|e| e.name == Faastcc::ENTRY.name))
}

fn faastcc_metadata(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let (cats, s) = bars_by_zipf(
        results,
        &metrics::observed(metrics::METADATA_BYTES_HOP, "p50"),
        Some(&metrics::observed(metrics::METADATA_BYTES_HOP, "p99")),
        1.0,
    );
    let fig = Figure {
        name: "faastcc-metadata".into(),
        title: "FaaSTCC Fig. 5 — metadata passed between functions".into(),
        panels: vec![Panel {
            title: "chains of 6 functions, 100 K keys".into(),
            x_label: "workload skew".into(),
            y_label: "metadata per hop (bytes; median, whisker p99; log)".into(),
            y_log: true,
            categories: Some(cats),
            series: s,
            hlines: vec![HLine {
                y: 72.0 * 1024.0,
                label: "paper: HydroCache median at Zipf 1.0 (72 KB)".into(),
                color: RGBColor(0, 0, 0),
            }],
            legend_at: Some(Corner::OutsideRight),
            ..Default::default()
        }],
        notes: vec![
            "FaaSTCC §6.1 workload (shortened). HydroCache dynamic = Opt (dependency map), static = Con (snapshot id + versions read)."
                .into(),
        ],
    };
    let mut claims = Vec::new();
    if let Some(f) = faastcc_label(results) {
        let hop = metrics::observed(metrics::METADATA_BYTES_HOP, "p50");
        let v = value_at(results, &f, 1.0, &hop);
        claims.push(
            claim(
                "faastcc-metadata",
                "FaaSTCC metadata per hop",
                Kind::ByConstruction("the snapshot interval: two 8-byte timestamps"),
                "exactly 16 B",
            )
            .scored(
                "16 B, constant",
                v.map_or("-".into(), |v| format!("{v:.0} B")),
                v.map(|v| (v - 16.0).abs() < 1.0),
                "Two 8-byte timestamps, whatever the skew.",
            )?,
        );
        if let Some(d) = dynamic_label(results) {
            let at_one = value_at(results, &d, 1.0, &hop);
            for (z, paper_kb, paper_ratio) in [(1.0, "72 KB", 4500.0), (1.5, "> 13 KB", 850.0)] {
                let (Some(h), Some(fv)) = (value_at(results, &d, z, &hop), value_at(results, &f, z, &hop)) else { continue };
                let ratio = h / fv.max(1.0);
                let (rule, holds) = if z == 1.0 {
                    ("within ± 10 % of 72 KB".to_string(), near(h / 1024.0, 72.0))
                } else {
                    (
                        "at least 13 KB (the paper gives a lower bound) and below the Zipf 1.0 median (skew shrinks it)".to_string(),
                        h / 1024.0 >= 13.0 && at_one.is_some_and(|a| h < a),
                    )
                };
                claims.push(
                    claim("faastcc-metadata", &format!("HydroCache (dynamic) median metadata at Zipf {z}"), Kind::Predicted, rule).scored(
                        format!("{paper_kb} ({paper_ratio:.0}× FaaSTCC)"),
                        format!("{:.1} KB ({ratio:.0}×)", h / 1024.0),
                        Some(holds),
                        if holds {
                            "The dependency map holds the causal past of everything the workflow read, and skew shrinks it (fewer distinct objects in the past), as the paper explains."
                        } else {
                            "The dependency map holds the causal past of everything the workflow read, and skew shrinks it, as the paper explains; but ours is flattened and never collected, so it grows with run length (8000 workflows here, 16000 in the paper) and its size is not the paper's."
                        },
                    )?,
                );
            }
        }
    }
    Ok((fig, claims))
}

fn faastcc_rounds(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let (cats, mean) = bars_by_zipf(results, &metrics::observed(metrics::STORAGE_ROUNDS_PER_READ, "mean"), None, 1.0);
    let (_, max) = bars_by_zipf(results, &metrics::observed(metrics::STORAGE_ROUNDS_PER_READ, "max"), None, 1.0);
    let most_top = max.iter().flat_map(|s| s.points.iter().map(|p| p.hi)).fold(23.0, f64::max);
    let fig = Figure {
        name: "faastcc-rounds".into(),
        title: "FaaSTCC Fig. 6 — storage rounds to read a consistent snapshot".into(),
        panels: vec![
            Panel {
                title: "(a) mean rounds per read (cache hits count 0)".into(),
                x_label: "workload skew".into(),
                y_label: "storage rounds per read".into(),
                categories: Some(cats.clone()),
                series: mean,
                legend_at: Some(Corner::UpperLeft),
                ..Default::default()
            },
            Panel {
                title: "(b) most rounds one read needed".into(),
                x_label: "workload skew".into(),
                y_label: "storage rounds (max per run)".into(),
                categories: Some(cats),
                series: max,
                hlines: vec![HLine { y: 23.0, label: "paper: HydroCache P99 at Zipf 1.5 (23)".into(), color: RGBColor(0, 0, 0) }],
                // Headroom above the bars and the paper's line, for the legend.
                y_range: Some((0.0, most_top * 1.5)),
                legend_at: Some(Corner::UpperLeft),
                ..Default::default()
            },
        ],
        notes: vec![
            "FaaSTCC needs at most one storage round per read by construction; HydroCache chases dependencies through the store. HydroCache-Con (static) installs its snapshot before the chain runs, so its reads need no rounds (no bar).".into(),
        ],
    };
    let mut claims = Vec::new();
    if let Some(f) = faastcc_label(results) {
        let m = zipf_cats(results)
            .iter()
            .filter_map(|z| value_at(results, &f, *z, &metrics::observed(metrics::STORAGE_ROUNDS_PER_READ, "max")))
            .fold(0.0, f64::max);
        claims.push(
            claim(
                "faastcc-rounds",
                "FaaSTCC storage rounds per read",
                Kind::ByConstruction("the TCC store answers any read within the snapshot interval in one round"),
                "at most 1 at every skew",
            )
            .scored(
                "always 1",
                format!("at most {m:.0}"),
                Some(m <= 1.0),
                "A storage reply always satisfies the snapshot interval, so a read takes at most one round.",
            )?,
        );
    }
    for l in labels(results).into_iter().filter(|l| l.to_lowercase().starts_with("hydro")) {
        let most: Vec<(f64, f64)> = zipf_cats(results)
            .iter()
            .filter_map(|z| Some((*z, value_at(results, &l, *z, &metrics::observed(metrics::STORAGE_ROUNDS_PER_READ, "max"))?)))
            .collect();
        // Our figure is the most rounds any read needed, which is at least the P99 the paper gives.
        let grows = most.windows(2).all(|w| w[1].1 >= w[0].1) && most.first().zip(most.last()).is_some_and(|(a, b)| b.1 > a.1);
        let reaches = most.iter().find(|(z, _)| *z == 1.5).is_some_and(|(_, v)| *v >= 23.0 * (1.0 - MARGIN));
        let holds = (most.len() >= 2 && most.iter().any(|(z, _)| *z == 1.5)).then_some(grows && reaches);
        claims.push(
            claim(
                "faastcc-rounds",
                &format!("{l}: most storage rounds for one read, by Zipf"),
                Kind::Predicted,
                "rises with skew, and the most at Zipf 1.5 at least 21 (the paper's P99 of 23 − 10 %; a run's maximum is at least its P99)",
            )
            .scored(
                "grows with skew, up to 23 (P99) at Zipf 1.5",
                most.iter().map(|(z, v)| format!("{v:.0}@{z}")).collect::<Vec<_>>().join(", "),
                holds,
                if holds == Some(true) {
                    "Skew makes hot keys' versions change between a read and the dependency it must match, so chases lengthen."
                } else {
                    "Not reproduced: pre-warmed caches merge each refresh as a whole cut, so the chase happens only on reads needing a newer version than the local cut, and the store answers atomically, so chains of missing dependencies stay short and do not grow with skew."
                },
            )?,
        );
    }
    Ok((fig, claims))
}

fn static_label(results: &Results) -> Option<String> {
    labels(results).into_iter().find(|l| l.to_lowercase().contains("con") || l.to_lowercase().contains("static"))
}

fn faastcc_latency(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let (cats, mean) = bars_by_zipf(results, "latency_mean_ms", None, 1.0);
    let (_, p99) = bars_by_zipf(results, "latency_p99_ms", None, 1.0);
    let fig = Figure {
        name: "faastcc-latency".into(),
        title: "FaaSTCC Fig. 4a — workflow latency, FaaSTCC vs HydroCache".into(),
        panels: vec![
            Panel {
                title: "(a) mean latency".into(),
                x_label: "workload skew".into(),
                y_label: "workflow latency (ms, mean; log)".into(),
                y_log: true,
                categories: Some(cats.clone()),
                series: mean,
                legend_at: Some(Corner::Elsewhere),
                ..Default::default()
            },
            Panel {
                title: "(b) tail latency".into(),
                x_label: "workload skew".into(),
                y_label: "workflow latency (ms, p99; log)".into(),
                y_log: true,
                categories: Some(cats),
                series: p99,
                legend_at: Some(Corner::OutsideRight),
                ..Default::default()
            },
        ],
        notes: vec!["Closed loop, 16 clients, chains of 6 functions. Metadata costs time at params.metadata_ns_per_kb (calibrated once at Zipf 1.0, see the sweep's description).".into()],
    };
    let mut claims = Vec::new();
    if let (Some(f), Some(d)) = (faastcc_label(results), dynamic_label(results)) {
        let mut previous: Option<(f64, f64)> = None;
        for z in zipf_cats(results) {
            if let (Some(a), Some(b)) = (value_at(results, &d, z, "latency_mean_ms"), value_at(results, &f, z, "latency_mean_ms")) {
                let r = a / b;
                let name = format!("HydroCache dynamic / FaaSTCC mean latency, Zipf {z}");
                let c = if z == 1.0 {
                    let holds = near(r, 5.0);
                    claim("faastcc-latency", &name, Kind::Calibrated(&METADATA_NS_PER_KB), "within ± 10 % of 5× (4.5–5.5×)").scored(
                        "5× (\"up to 5×\")",
                        format!("{r:.1}×"),
                        Some(holds),
                        "The time per KiB of metadata a function receives is the one free constant, fitted here as the FaaSTCC digest recommends.",
                    )?
                } else {
                    let (rule, holds) = match previous {
                        Some((pz, pr)) => {
                            (format!("above 1× and below the ratio at Zipf {pz} ({pr:.1}×): the gap shrinks with skew"), r > 1.0 && r < pr)
                        }
                        None => ("above 1×".to_string(), r > 1.0),
                    };
                    claim("faastcc-latency", &name, Kind::Predicted, rule).scored(
                        "below 5×, shrinking with skew (\"up to 5×\"; HydroCache suffers most at low skew)",
                        format!("{r:.1}×"),
                        Some(holds),
                        if holds {
                            "With the same per-KiB cost, the ratio falls with skew because HydroCache's dependency maps shrink."
                        } else {
                            "With the same per-KiB cost the ratio should fall with skew as the dependency maps shrink; here it does not."
                        },
                    )?
                };
                claims.push(c);
                previous = Some((z, r));
            }
            if let (Some(a), Some(b)) = (value_at(results, &d, z, "latency_p99_ms"), value_at(results, &f, z, "latency_p99_ms"))
                && z == 1.0
            {
                let holds = near(a / b, 6.0);
                claims.push(
                    claim("faastcc-latency", "HydroCache dynamic / FaaSTCC p99 latency, Zipf 1", Kind::Predicted, "within ± 10 % of 6× (5.4–6.6×)")
                        .scored(
                            "≈ 6×",
                            format!("{:.1}×", a / b),
                            Some(holds),
                            if holds {
                                "Tails follow the metadata's p99 and Opt's aborts and retries."
                            } else {
                                "Tails follow the metadata's p99 times the fitted per-KiB cost; our dependency maps' p99 is further above their median than the paper's, so the tail ratio overshoots."
                            },
                        )?,
                );
            }
        }
    }
    if let (Some(f), Some(st)) = (faastcc_label(results), static_label(results)) {
        for (z, paper_lower) in [(1.0, 20.0), (1.5, 50.0)] {
            if let (Some(h), Some(fv), Some(hm), Some(fm)) = (
                value_at(results, &st, z, "latency_p99_ms"),
                value_at(results, &f, z, "latency_p99_ms"),
                value_at(results, &st, z, "latency_mean_ms"),
                value_at(results, &f, z, "latency_mean_ms"),
            ) {
                let lower = (h - fv) / h * 100.0;
                let holds = (lower - paper_lower).abs() <= 10.0 && near(hm / fm, 1.0);
                claims.push(
                    claim(
                        "faastcc-latency",
                        &format!("static mode, Zipf {z}: FaaSTCC p99 lower than HydroCache's by (mean ratio)"),
                        Kind::Predicted,
                        format!(
                            "p99 lower by {:.0}–{:.0} % (the paper's ± 10 points) and the means within ± 10 % of each other",
                            paper_lower - 10.0,
                            paper_lower + 10.0
                        ),
                    )
                    .scored(
                        format!("{paper_lower:.0} % (means almost equal)"),
                        format!("{lower:.0} % (HydroCache / FaaSTCC mean {:.2}×)", hm / fm),
                        Some(holds),
                        if holds {
                            "HydroCache's static aborts (about 9 % in the paper) and multi-round storage reads lengthen its tail."
                        } else if lower > 0.0 {
                            "FaaSTCC's tail is lower, but not by the paper's margin, or the means part: HydroCache's static aborts (about 9 % in the paper) are not modelled."
                        } else {
                            "Not reproduced: our HydroCache-Con joins a consistent snapshot before the chain runs and never aborts, and a pre-warmed cache serves its reads, so it has no tail to lose; the paper's HydroCache static aborts 9 % of its DAGs, which our Con mode does not model."
                        },
                    )?,
                );
            }
        }
    }
    Ok((fig, claims))
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
        let file = include_str!("plot.rs");
        let source = &file[..file.find("#[cfg(test)]").expect("the tests module")];
        let mut read = 0;
        for (at, _) in source.match_indices("metrics::") {
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
