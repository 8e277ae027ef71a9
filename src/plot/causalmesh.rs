//! CausalMesh's figures: Fig. 1 (inconsistency vs servers), Fig. 14 (metadata), Fig. 17
//! (latency vs chain length), visibility, the delay sweep, and the aborts of every system.

use super::*;
use crate::chart::{HLine, palette_at};
use crate::claim::{FIG1_LAG, FIG17_HOP};

// ---------------------------------------------------------------------------------------------
// CausalMesh Fig. 1

const FIG1_PAPER: [(f64, f64); 4] = [(1.0, 0.0), (2.0, 5.4), (4.0, 12.6), (8.0, 14.2)];

pub(super) fn fig1(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
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
// CausalMesh Fig. 17

const FIG17_PAPER: [(f64, f64); 6] = [(3.0, 1259.0), (4.0, 1586.0), (5.0, 2030.0), (6.0, 2360.0), (7.0, 2799.0), (8.0, 3138.0)];

pub(super) fn fig17(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
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
// Metadata (CausalMesh Fig. 14)

/// Cache-server metadata in bytes per server, by the final metric the protocol's profile names.
fn server_metadata(results: &Results, r: &AggRow, label: &str) -> Option<f64> {
    let servers = r.mean("servers").unwrap_or(3.0);
    let name = entry_of(results, label)?.profile.server_metadata?;
    r.mean(&metrics::final_metric(name)).map(|b| b / servers)
}

const FIG14_PAPER_KB: [(&str, f64); 5] =
    [("CausalMesh", 35.1), ("CausalMesh-TCC", 69.9), ("HydroCache-Con", 45.3), ("HydroCache-Opt", 99.8), ("FaaSTCC", 28.8)];

/// Fig. 14's metadata held per cache server. For CausalMesh the paper also says it "stays low
/// and stable", so the largest I-cache sample of the run must stay near its median sample (a
/// buffer that grows through the run ends near twice its median).
fn server_metadata_claim(l: &str, r: &AggRow, kb: f64, want: f64) -> Result<Claim, String> {
    let samples = |name: &str| Some((r.mean(&metrics::observed(name, "p50"))?, r.mean(&metrics::observed(name, "max"))?));
    let name = format!("{l} cache-server metadata at 1k req/s");
    if let Some((p50, max)) = samples(metrics::ICACHE_BYTES) {
        let growth = max / p50.max(1.0);
        let holds = near(kb, want) && growth <= 1.5;
        let mut measured = format!("{kb:.1} KB; largest I-cache sample {growth:.2}× the median");
        if let Some((a50, amax)) = samples(metrics::ICACHE_BYTES_AS_AUTHORS_COUNT) {
            measured += &format!(
                "; counted as the authors' code counts it, {:.1} KB largest, {:.2}× the median",
                amax / 1024.0,
                amax / a50.max(1.0)
            );
        }
        return claim(
            "metadata",
            &name,
            Kind::Predicted,
            "within ± 10 % of the paper's KB, and stable: the run's largest I-cache sample at most 1.5× its median sample",
        )
        .scored(
            format!("{want} KB, stable"),
            measured,
            Some(holds),
            if holds {
                "The I-cache holds only versions not yet integrated or disseminated, so it stays small and flat."
            } else {
                "Not stable in the model, nor in the protocol as the paper and the authors' code describe it: a version leaves a non-tail server's I-cache only when a read there depends on it or the tail disseminates it (params.disseminate; optional in §5.2, absent from the artifact, off here), and most of 100 000 Zipf keys are not read again at that server for a long time, so the I-cache grows with run length (27 → 106 KB median over 3 → 12 s runs). The artifact's only metadata printout counts a key's versions after its first, at 12 B + 11 B per dependency; counted so, the model's I-cache grows too (2.6 → 11.7 KB largest). With dissemination it stays flat, below 0.1 KB."
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
            "Our HydroCache keeps each cached version's whole flattened causal past (16 B per entry, never collected, §11), over a pre-warmed cache of 100 000 keys, so it is far above the paper's 1-minute snapshot of the authors' leaner encoding."
        },
    )
}

/// Fig. 14's CPU row: each system's cache servers at 1000 requests/s, in % (CausalMesh runs one
/// thread, the others two; the paper compares them as they are).
const FIG14_PAPER_CPU: [(&str, f64); 5] =
    [("CausalMesh", 42.0), ("CausalMesh-TCC", 53.3), ("HydroCache-Con", 98.3), ("HydroCache-Opt", 54.4), ("FaaSTCC", 52.9)];

/// Fig. 14's CPU row beside the model's: per system (x = index), busy time over CausalMesh's.
#[derive(Default)]
struct CpuComparison {
    simulated: Vec<Pt>,
    paper: Vec<Pt>,
    claims: Vec<Claim>,
}

/// The busy time of the caches next to the functions at 1k/s, relative to CausalMesh's. The
/// paper's absolute percentages include runtime and RPC costs no model charges on the server,
/// so only the ratios are compared: "57 % lower than HydroCache-Con, 23 % lower than
/// HydroCache-Opt, 26 % lower than FaaSTCC".
fn cpu_claims(results: &Results, sys: &[String]) -> Result<CpuComparison, String> {
    const CPU: &str = "utilisation_colocated_mean";
    let busy = |l: &str| nearest(results, l, RATE, 1000.0).and_then(|r| r.mean(CPU));
    let paper = |l: &str| FIG14_PAPER_CPU.iter().find(|(n, _)| *n == l).map(|p| p.1);
    let (Some(base), Some(paper_base)) = (busy("CausalMesh"), paper("CausalMesh")) else { return Ok(Default::default()) };
    let (mut sim, mut pap, mut claims) = (Vec::new(), Vec::new(), Vec::new());
    for (i, l) in sys.iter().enumerate() {
        let (Some(u), Some(want)) = (busy(l), paper(l)) else { continue };
        let (ratio, want_ratio) = (u / base.max(1e-12), want / paper_base);
        sim.push(Pt::new(i as f64, ratio));
        pap.push(Pt::new(i as f64, want_ratio));
        if l == "CausalMesh" {
            continue;
        }
        let holds = near(ratio, want_ratio);
        claims.push(
            claim("metadata", &format!("{l} cache-server CPU at 1k req/s, relative to CausalMesh"), Kind::Predicted, "within ± 10 % of the paper's ratio")
                .scored(
                    format!("{want_ratio:.2}× ({want:.1} % vs {paper_base:.1} %)"),
                    format!("{ratio:.2}× ({:.1} % vs {:.1} % busy)", 100.0 * u, 100.0 * base),
                    Some(holds),
                    if holds {
                        "Busy time per cache follows from the messages each protocol sends its caches and their sizes, with the calibrated cost model (30 µs per message, 15 µs per KiB encoded or decoded)."
                    } else {
                        "Busy time per cache counts the messages each protocol sends its caches and their sizes (30 µs per message, 15 µs per KiB); what else the authors' servers spend (background refresh threads merging dependency maps, JSON-encoded clocks in every reply) is not charged per operation, see docs/fidelity.md."
                    },
                )?,
        );
    }
    Ok(CpuComparison { simulated: sim, paper: pap, claims })
}

pub(super) fn metadata(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let sys = systems(results);
    let mut med = Vec::new();
    let mut srv = Vec::new();
    let mut pap = Vec::new();
    let CpuComparison { simulated: cpu_sim, paper: cpu_pap, mut claims } = cpu_claims(results, &sys)?;
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
                        "HydroCache-Opt" => "The dependency map grows with the causal past of what the workflow read; on this three-function chain it is smaller than on FaaSTCC's longer workflows.",
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
        title: "Metadata and CPU — per function hop and per cache server (CausalMesh Fig. 14)".into(),
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
            Panel {
                title: "(c) CPU of each cache server, relative to CausalMesh".into(),
                x_label: "system".into(),
                y_label: "busy time / CausalMesh's".into(),
                categories: Some(sys.clone()),
                series: vec![
                    Series { label: "simulated".into(), color: color_of("CausalMesh"), style: Style::Bars, points: cpu_sim },
                    Series { label: "paper, Fig. 14".into(), color: RGBColor(120, 120, 120), style: Style::Bars, points: cpu_pap },
                ],
                legend_at: Some(Corner::UpperLeft),
                ..Default::default()
            },
        ],
        notes: vec![
            "Micro-benchmark at 1000 workflows/s, 3 servers. (a) CausalMesh: the workflow context a function hands on; others: the protocol metadata passed per hop. (b) At the end of the run: CausalMesh: I-cache (+ C-cache dependencies for -TCC), which grows with run length; HydroCache: dependency entries of cached versions; our FaaSTCC model does not measure its servers' metadata (no simulated bar). (c) Busy time of the caches next to the functions (the calibrated cost model: per message, per KiB encoded or decoded), over CausalMesh's; the paper's CPU % over CausalMesh's 42 %.".into(),
        ],
    };
    Ok((fig, claims))
}

/// The I-cache against run length (Fig. 14's "stays low and stable"), in KB per server.
pub(super) fn metadata_length(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    const DURATION: &str = "workload.generator.duration_ns";
    let sys = labels(results);
    let seconds = |l: &str, metric: &str| -> Vec<Pt> {
        line(results, l, DURATION, metric, 1.0 / 1024.0).into_iter().map(|p| Pt { x: p.x / 1e9, ..p }).collect()
    };
    let style = |l: &str| if l.contains("disseminat") { Style::Dashed } else { Style::Line };
    let panel = |title: &str, y_label: &str, metric: String, legend: Corner| Panel {
        title: title.into(),
        x_label: "run length (s)".into(),
        y_label: y_label.into(),
        y_log: true,
        series: sys.iter().map(|l| Series { label: l.clone(), color: color_of(l), style: style(l), points: seconds(l, &metric) }).collect(),
        legend_at: Some(legend),
        ..Default::default()
    };
    let fig = Figure {
        name: "metadata-length".into(),
        title: "Cache-server metadata against run length (CausalMesh Fig. 14: \"low and stable\")".into(),
        panels: vec![
            Panel {
                hlines: vec![HLine { y: 35.1, label: "paper: CausalMesh, 35.1 KB at 1 min".into(), color: RGBColor(0, 0, 0) }],
                ..panel("(a) I-cache, mean sample", "KB per server (log)", metrics::observed(metrics::ICACHE_BYTES, "mean"), Corner::OutsideRight)
            },
            panel(
                "(b) as the authors' code counts it, largest sample",
                "KB per server (log)",
                metrics::observed(metrics::ICACHE_BYTES_AS_AUTHORS_COUNT, "max"),
                Corner::Elsewhere,
            ),
        ],
        notes: vec![
            "Fig. 14's setting at 1000 workflows/s: 3 servers, 100 000 Zipf keys, read 2, read 2, write 1; mean over seeds with 95 % CI. Solid: no dissemination, as the authors' artifact runs; dashed: the tail disseminates each write (§5.2's option). Panel (b) counts a key's versions after its first, at 12 B plus 11 B per dependency, as the artifact's printout does.".into(),
        ],
    };
    let mut claims = Vec::new();
    for l in sys.iter().filter(|l| l.starts_with("CausalMesh") && !l.starts_with("CausalMesh-TCC")) {
        let pts = seconds(l, &metrics::observed(metrics::ICACHE_BYTES, "mean"));
        let (Some(first), Some(last)) = (pts.first(), pts.last()) else { continue };
        if first.x >= last.x {
            continue;
        }
        let growth = last.y / first.y.max(1e-9);
        let holds = growth <= 1.25;
        let disseminating = l.contains("disseminat");
        claims.push(
            claim(
                "metadata-length",
                &format!("{l}: metadata stable over a {:.0}× longer run", last.x / first.x),
                Kind::Predicted,
                format!("mean I-cache sample of the {} s run at most 1.25× that of the {} s run", last.x, first.x),
            )
            .scored(
                "low and stable (§9.3)",
                format!("{:.2} → {:.2} KB per server ({growth:.2}×)", first.y, last.y),
                Some(holds),
                match (disseminating, holds) {
                    (true, true) => "The tail's dissemination has every server integrate each write soon after the tail does, so a version waits in an I-cache for about one chain's time whatever the run length: a handful of versions (about 20 B each) per server.",
                    (true, false) => "Even with dissemination, versions linger in the I-cache and pile up with the run.",
                    (false, true) => "Versions left in the I-cache are read and integrated as fast as they arrive.",
                    (false, false) => "Without dissemination (the artifact has none) a version leaves a non-tail server's I-cache only when a read there depends on it, and most of 100 000 Zipf keys are not read again at that server for a long time: the I-cache grows with the run until every key has a version waiting. Counted as the artifact counts it (panel b), it grows too.",
                },
            )?,
        );
    }
    Ok((fig, claims))
}
// ---------------------------------------------------------------------------------------------
// Aborts and visibility

pub(super) fn aborts(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
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
                "It may abort (a read whose only version does not form a cut with the read set), but at this load over 100 000 keys few reads race a write; its aborts grow with load, servers and run length (see the figure and throughput-servers)."
            }
            "HydroCache-Opt" => {
                "Validation aborts a function whose read depends on a newer version of a key the workflow read; rare at this load."
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
pub(super) fn visibility(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
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
                claim("visibility", &name, Kind::Predicted, format!("median at most Fig. 17's window at 3 servers + 10 % ({bound:.2} ms)"))
                    .scored(
                        "N × RTT (Fig. 12; 1.26 ms at 3 servers, Fig. 17)",
                        simulated,
                        Some(holds),
                        if holds {
                            "A write is visible once it reaches its chain's tail: N hops."
                        } else {
                            "Longer than the chain's N hops: the servers' queues hold the write back at this load."
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
        notes: vec!["CausalMesh: write at the head → revealed at the tail (the database write goes behind, as in the authors' code); FaaSTCC: commit → installed in a cache; HydroCache: written to the database → merged into a cache's cut.".into()],
    };
    Ok((fig, claims))
}
// ---------------------------------------------------------------------------------------------
// Delay sweep: anomaly rate of each mutant vs network delay

const DELAY: &str = "topology.delay.mean_ns";

pub(super) fn delay_sweep(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
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
// CausalMesh-TCC's ring buffer (§7)

const RING: &str = "protocol.params.ring_size";

/// Aborts and metadata against ring size under both read rules (`params.ring_read`). The paper
/// says the ring's size trades aborts for memory; read literally (Fig. 11 line 18, the oldest
/// version that forms a cut), a larger ring hands out older versions that later reads cannot
/// join, so aborts rise instead.
pub(super) fn tcc_ring(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let sys = labels(results);
    // Colour by key count, line style by read rule.
    let style = |l: &str| {
        let color = palette_at(if l.contains("10 000") { 1 } else { 0 });
        (if l.starts_with("newest") { Style::Line } else { Style::Dashed }, color)
    };
    let panel = |title: &str, y_label: &str, metric: &str, scale: f64, legend: Corner| Panel {
        title: title.into(),
        x_label: "versions kept per key (ring size)".into(),
        y_label: y_label.into(),
        series: sys
            .iter()
            .map(|l| {
                let (st, color) = style(l);
                Series { label: l.clone(), color, style: st, points: line(results, l, RING, metric, scale) }
            })
            .collect(),
        legend_at: Some(legend),
        ..Default::default()
    };
    let fig = Figure {
        name: "tcc-ring".into(),
        title: "CausalMesh-TCC's ring buffer: aborts and memory vs ring size, two read rules".into(),
        panels: vec![
            panel("(a) aborts", "aborts per 100 workflows", "aborts_per_100_workflows", 1.0, Corner::Elsewhere),
            // The metric sums the 3 servers' bytes.
            panel("(b) cache-server metadata at the end", "KB per server", metrics::final_metric(metrics::METADATA_BYTES_FINAL).as_str(), 1.0 / 3072.0, Corner::OutsideRight),
        ],
        notes: vec![
            "CausalMesh-TCC micro-benchmark at 1000 workflows/s over 1 000 and 10 000 keys, 3 servers; mean over seeds with 95 % CI. Solid: a read takes the newest ring version that forms a cut with the read set; dashed: the oldest (Fig. 11 line 18 as written). With one version the rules agree.".into(),
        ],
    };
    let mut claims = Vec::new();
    for l in &sys {
        let pts = line(results, l, RING, "aborts_per_100_workflows", 1.0);
        let (Some(first), Some(last)) = (pts.first(), pts.last()) else { continue };
        if first.x >= last.x {
            continue;
        }
        let holds = last.y < first.y * 0.75;
        let newest = l.starts_with("newest");
        claims.push(
            claim(
                "tcc-ring",
                &format!("a larger ring gives fewer aborts: {l}"),
                Kind::Predicted,
                format!("aborts at ring {} below 75 % of those at ring {}", last.x, first.x),
            )
            .scored(
                "the ring size trades aborts for memory (§7)",
                format!("{:.2} → {:.2} per 100 workflows (ring {} → {})", first.y, last.y, first.x, last.x),
                Some(holds),
                match (newest, holds) {
                    (true, true) => "More versions give a read more candidates that form a cut with what the workflow already read, and the newest of them leaves later reads the most room.",
                    (true, false) => "More versions should give a read more candidates that form a cut; at this contention the ring's older versions are rarely the ones needed.",
                    (false, true) => "Read literally (the oldest version that forms a cut), aborts still fell with the ring at this contention.",
                    (false, false) => "Read literally (the oldest version that forms a cut), a larger ring hands out older versions, which later reads, served from rings that keep the newest versions, cannot join: aborts rise with the ring instead of falling. The paper's trade-off holds for the newest version that forms a cut (`params.ring_read: newest`).",
                },
            )?,
        );
    }
    Ok((fig, claims))
}
