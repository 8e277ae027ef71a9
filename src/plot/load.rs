//! Every system under load: latency vs offered load (CausalMesh Fig. 13, with the authors'
//! `short.csv`) and sustained throughput vs servers (Fig. 15).

use super::*;
use crate::chart::HLine;
use crate::sweep::mean_ci;
use std::collections::BTreeMap;

// ---------------------------------------------------------------------------------------------
// CausalMesh Fig. 13: latency vs load

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

/// Median and 99th-percentile latency against offered load, one line per series (the
/// no-cache series as its unloaded floor), with the paper's points as hollow markers.
fn latency_panels(results: &Results, paper_points: &[(&str, &[CsvPoint])]) -> Vec<Panel> {
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
        for (system, points) in paper_points {
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
    panels
}

/// A series' mean `metric` per offered load.
fn at_load(results: &Results, label: &str, metric: &str) -> BTreeMap<u64, f64> {
    rows_of(results, label).iter().filter_map(|r| Some((param(r, RATE)? as u64, r.mean(metric)?))).collect()
}

pub(super) fn latency_load(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let panels = latency_panels(results, &SHORT_CSV);
    let fig = Figure {
        name: "latency-load".into(),
        title: "CausalMesh Fig. 13 — micro-benchmark latency vs offered load".into(),
        panels,
        notes: vec![
            "Mean over seeds with 95 % CI; a series stops one load past saturation. Hollow markers: the authors' result CSV (short.csv, columns as their short.gp titles them: CausalMesh, CausalMesh-TCC, HydroCache-Con, HydroCache-Opt; no FaaSTCC column).".into(),
            "Same machines and costs for all: 3 servers × 8 workers, 30 µs mean service per message, 15 µs per KiB encoded or decoded, 400 µs of a function's runtime and RPC stack per message it sends or receives (fitted to CausalMesh's median at 1k/s), one call per read, 5 ms RTT to storage. Writes go behind (CausalMesh, CausalMesh-TCC, HydroCache) or wait for storage (FaaSTCC), as the authors' code has them.".into(),
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
                        "Not reproduced: with the calibrated cost model a workflow holds a worker slot for its whole call sequence, so the 24 slots (Little's law), not the caches' CPU, bound every system, and each system's throughput follows its latency; HydroCache's p99 passes 10 ms at a lower load than the paper's (Con's coordination rounds queue at every cache, Opt's refresh bursts), and FaaSTCC's synchronous 5 ms commit keeps its p99 above 10 ms at every load (docs/fidelity.md, cost model)."
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
        let kind = if system == "CausalMesh" { Kind::Calibrated(&crate::claim::FUNCTION_MESSAGE_COST) } else { Kind::Predicted };
        claims.push(
            claim("latency-load", &format!("{system} p50 / p99 at 1000 workflows/s"), kind, "both within ± 10 % of the authors' CSV")
                .scored(
                    format!("{want50} / {want99} ms"),
                    format!("{p50:.1} / {p99:.1} ms"),
                    Some(holds),
                    if holds && system != "HydroCache-Con" {
                        "The floor is three dispatches and each system's calls, at the calibrated cost per function-side message."
                    } else {
                        why_latency_at_1k(system)
                    },
                )?,
        );
    }
    // Median and tail reductions vs each baseline over the loads both ran (Fig. 13's ranges).
    for (b, med_lo, med_hi, tail_up_to) in
        [("HydroCache-Con", 7.0, 59.0, 85.0), ("HydroCache-Opt", 15.0, 44.0, 97.0), ("FaaSTCC", 5.0, 38.0, 54.0)]
    {
        let (cm50, b50) = (at_load(results, "CausalMesh", "latency_p50_ms"), at_load(results, b, "latency_p50_ms"));
        let (cm99, b99) = (at_load(results, "CausalMesh", "latency_p99_ms"), at_load(results, b, "latency_p99_ms"));
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
                    "Not reproduced: below saturation the gap is each system's calls and rounds beside CausalMesh's under the calibrated cost model: FaaSTCC's synchronous 5 ms commit makes it larger than the paper's, and HydroCache-Opt makes fewer calls than the authors' re-implementation (see its p50 claim), so its sign flips at low load; near saturation, whichever system's worker slots fill first has the longer tail."
                },
            )?,
        );
    }
    Ok((fig, claims))
}
/// Why a system's latency at 1k/s differs from the authors' CSV, under the calibrated cost model.
fn why_latency_at_1k(system: &str) -> &'static str {
    match system {
        "CausalMesh" => {
            "The median is the fit (400 µs per function-side message); the p99 falls short because every cost in the model is a constant or a light-tailed draw, where the authors' tail (1.7× their median) carries their runtime's jitter."
        }
        "CausalMesh-TCC" => {
            "In the model CausalMesh-TCC makes the same calls as CausalMesh (four reads, one commit) with slightly larger messages, so it lands on CausalMesh's latency; the authors' 1.7 ms more come from work their TCC build does that neither the paper nor the model spells out."
        }
        "HydroCache-Opt" => {
            "Below CausalMesh's in the model: Opt's reads need no extra round at this load and its write-behind sink does not wait for a reply; the authors' re-implementation has the scheduler call a one-phase Prepare at the function's cache before every reading function (scheduler/src/opt.rs at 65a192d), calls the HydroCache paper's protocol, which the model follows, does not make."
        }
        _ => {
            "Con's two coordination rounds at every cache before the workflow (prepare, install) add their function-side calls to the reads and write every system makes."
        }
    }
}

// ---------------------------------------------------------------------------------------------
// CausalMesh Fig. 16: the movie review service

/// The baselines of Fig. 16 (HydroCache-Con cannot run the workload: it needs the keys up front).
const MOVIE_BASELINES: [&str; 2] = ["HydroCache-Opt", "FaaSTCC"];

/// The highest offered load before a series' tail rises: walking up the loads, the last whose
/// p99 is at most twice the series' p99 at its lowest load with ≥ 90 % of the load completed.
/// `Some(0.0)` when even the lowest load fails; `None` without rows.
fn knee(results: &Results, label: &str) -> Option<f64> {
    let p99 = at_load(results, label, "latency_p99_ms");
    let done = at_load(results, label, "throughput_per_s");
    let floor = *p99.values().next()?;
    let ok = |x: u64, p: f64| p <= 2.0 * floor && done.get(&x).is_some_and(|t| *t >= 0.9 * x as f64);
    Some(p99.iter().take_while(|&(&x, &p)| ok(x, p)).last().map_or(0.0, |(&x, _)| x as f64))
}

/// Reductions of `metric` (%) of `a` against `b` at the loads both ran up to `until`.
fn reductions(results: &Results, a: &str, b: &str, metric: &str, until: f64) -> Vec<(u64, f64)> {
    let (va, vb) = (at_load(results, a, metric), at_load(results, b, metric));
    va.iter().filter(|(x, _)| **x as f64 <= until).filter_map(|(x, v)| vb.get(x).map(|w| (*x, (w - v) / w * 100.0))).collect()
}

pub(super) fn movie_review(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    const FIG: &str = "movie-review";
    let fig = Figure {
        name: FIG.into(),
        title: "CausalMesh Fig. 16 — movie review service, latency vs offered load".into(),
        panels: latency_panels(results, &[]),
        notes: vec![
            "Mean over seeds with 95 % CI; a series stops one load past saturation. Half the requests compose a review (9 functions: four uploads in parallel, compose, store, the user's and the movie's review lists in parallel, a join), half read one (a movie's review list, then 10 reviews). The two kinds' latencies are two modes and the median falls between them, so it jumps with the draw (wide CIs at 2 seeds). The paper prints no numbers for this figure, only the ratios scored below.".into(),
            "Same costs as the micro-benchmark's comparison (calibrated preset, nothing fitted here); 3 servers × 16 workers (§9.1 for this experiment), 5 ms RTT to storage. HydroCache-Con cannot run it (it needs every key before the workflow starts).".into(),
        ],
    };
    let mut claims = Vec::new();
    let Some(cm) = knee(results, "CausalMesh") else { return Ok((fig, claims)) };
    let knees: Vec<(&str, f64)> = MOVIE_BASELINES.iter().filter_map(|b| Some((*b, knee(results, b)?))).collect();
    // A knee at the highest load a series ran is a lower bound: its tail never rose.
    let shown = |label: &str, x: f64| {
        let top = at_load(results, label, "latency_p99_ms").keys().last().map_or(0.0, |&t| t as f64);
        if x >= top { format!("≥ {x:.0} workflows/s (no rise up to the highest load run)") } else { format!("{x:.0} workflows/s") }
    };
    let rule_knee = "the highest load before the tail rises (p99 ≤ 2× the series' own p99 at the lowest load, ≥ 90 % completed)";
    for &(b, x) in &knees {
        let holds = near(x, 1500.0);
        claims.push(
            claim(FIG, &format!("{b}: load where its tail latency rises"), Kind::Predicted, format!("{rule_knee} within 1500 ± 10 %"))
                .scored(
                    "about 1500 req/s",
                    shown(b, x),
                    Some(holds),
                    if holds { "Its worker slots or storage fill at the paper's load." } else { why_movie(b) },
                )?,
        );
    }
    let ratio_parts = |of: f64| -> (Vec<f64>, String) {
        let r: Vec<f64> = knees.iter().map(|(_, x)| of / x.max(1.0)).collect();
        let text = knees.iter().zip(&r).map(|((b, _), r)| format!("{b} {r:.2}×")).collect::<Vec<_>>().join(", ");
        (r, text)
    };
    if !knees.is_empty() {
        let (r, text) = ratio_parts(cm);
        let holds = r.iter().all(|r| near(*r, 2.0));
        claims.push(
            claim(
                FIG,
                "CausalMesh throughput / HydroCache-Opt's and FaaSTCC's",
                Kind::Predicted,
                format!("each ratio of {rule_knee} within 2× ± 10 % (1.8–2.2×)"),
            )
            .scored(
                "2×",
                format!("{text} (CausalMesh {})", shown("CausalMesh", cm)),
                Some(holds),
                if holds { "The baselines' tails rise first." } else { why_movie("CausalMesh") },
            )?,
        );
        if let Some(tcc) = knee(results, "CausalMesh-TCC") {
            let (r, text) = ratio_parts(tcc);
            let hi = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let holds = near(hi, 1.35) && r.iter().all(|r| *r >= 1.0);
            claims.push(
                claim(
                    FIG,
                    "CausalMesh-TCC throughput / HydroCache-Opt's and FaaSTCC's",
                    Kind::Predicted,
                    "the larger ratio within 1.35× ± 10 % (1.22–1.49×), neither below 1",
                )
                .scored(
                    "up to 1.35×",
                    format!("{text} (CausalMesh-TCC {})", shown("CausalMesh-TCC", tcc)),
                    Some(holds),
                    if holds {
                        "Its reads never wait for storage, but its cut checks and aborts cost it part of CausalMesh's lead."
                    } else {
                        why_movie("CausalMesh-TCC")
                    },
                )?,
            );
            let mut worst: Option<(f64, u64, &str)> = None;
            for &(b, x) in &knees {
                for (load, red) in reductions(results, "CausalMesh-TCC", b, "latency_p50_ms", x) {
                    if worst.is_none_or(|w| red.abs() > w.0.abs()) {
                        worst = Some((red, load, b));
                    }
                }
            }
            if let Some((red, load, b)) = worst {
                let holds = red.abs() <= 10.0;
                claims.push(
                    claim(
                        FIG,
                        "CausalMesh-TCC median latency beside HydroCache-Opt's and FaaSTCC's",
                        Kind::Predicted,
                        "at every load up to each baseline's rise, the median within ± 10 % of the baseline's",
                    )
                    .scored(
                        "similar",
                        format!("largest gap {:.0} % {} {b}'s at {load}/s", red.abs(), if red >= 0.0 { "below" } else { "above" }),
                        Some(holds),
                        if holds {
                            "Both make the same calls per function; only their metadata differs."
                        } else {
                            why_movie("CausalMesh-TCC latency")
                        },
                    )?,
                );
            }
        }
    }
    for &(b, x) in &knees {
        let (m, t) = (reductions(results, "CausalMesh", b, "latency_p50_ms", x), reductions(results, "CausalMesh", b, "latency_p99_ms", x));
        if m.is_empty() {
            continue;
        }
        let top = |v: &[(u64, f64)]| v.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        let (mhi, thi) = (top(&m), top(&t));
        let holds = (0.0..=20.0).contains(&mhi) && (54.0..=74.0).contains(&thi);
        claims.push(
            claim(
                FIG,
                &format!("CausalMesh vs {b}: median / tail latency lower by, before {b}'s tail rises"),
                Kind::Predicted,
                "over the loads up to the baseline's rise, the largest median reduction within 0–20 % and the largest tail reduction within 54–74 % (the paper's ± 10 points)",
            )
            .scored(
                "median up to 10 %, tail up to 64 %",
                format!("median up to {mhi:.0} %, tail up to {thi:.0} % (loads up to {x:.0}/s)"),
                Some(holds),
                if holds { "Below the baselines' saturation the systems make similar calls; the gap opens as their queues build." } else { why_movie("CausalMesh latency") },
            )?,
        );
    }
    Ok((fig, claims))
}

/// Why a Fig. 16 claim misses, as measured (docs/fidelity.md, movie-review).
fn why_movie(what: &str) -> &'static str {
    match what {
        "HydroCache-Opt" => {
            "Its tail does rise before CausalMesh's (p99 11 ms at 1800/s, 20 ms at 3000/s, 45 ms at 3600/s in the default run), but at twice the paper's load: in the model its reads need no extra round (its median is below CausalMesh's at low load), while the authors' re-implementation has the scheduler call a one-phase Prepare at a cache before each reading function and each tail (scheduler/src/opt.rs, opt_service2/3), calls the HydroCache paper's protocol, which the model follows, does not make."
        }
        "FaaSTCC" => {
            "Near, for another reason than the paper's: its p99 is about 60 ms from the lowest load because of 16–39 aborts per 100 workflows, all at ComposeReview's join (empty_interval: the two branches read their review lists at different caches and their snapshot intervals do not meet) and run again; the authors' scheduler awaits the two branches without joining their snapshots (each tail commits on its own), which the scenario's join function cannot express."
        }
        "CausalMesh" => {
            "The ordering holds against HydroCache-Opt (its tail rises first) but the ratio falls short of 2× (the Prepare calls the model's Opt does not make; see its claim above), and against FaaSTCC it is far above 2× (its aborted joins run again). With quick's loads no CausalMesh tail rises before the highest load, so its knee there is a lower bound."
        }
        "CausalMesh-TCC" => {
            "Not reproduced: in the model CausalMesh-TCC makes CausalMesh's calls and almost never aborts here (0–0.1 per 100 workflows: a join's cut check rarely fails over 100 000 reviews and 1000 lists), so its ratios are CausalMesh's, above the paper's 1.35×; as in latency-load, the authors' CausalMesh-TCC pays for work that neither the paper nor the model spells out."
        }
        "CausalMesh-TCC latency" => {
            "Not reproduced: HydroCache-Opt's median is below both CausalMesh variants' at low load (its reads need no extra round in the model) and FaaSTCC's far above (aborted joins run again); CausalMesh-TCC lands on CausalMesh's latency, as in the micro-benchmark."
        }
        _ => {
            "Not reproduced: against FaaSTCC both reductions are far larger (its aborted joins); against HydroCache-Opt the median reduction swings widely because the overall median falls between the two request kinds' latencies (ReadReview 3–5 ms, ComposeReview about 10 ms), and the tail reduction peaks where Opt's tail starts rising, below the paper's 64 %."
        }
    }
}

// ---------------------------------------------------------------------------------------------
// CausalMesh Fig. 15: throughput vs servers

const SERVERS: &str = "topology.servers";
const P99_BOUND_MS: f64 = 10.0;

/// Per series and server count: the highest offered load with p99 ≤ 10 ms and completions ≥ 90 %
/// of it, per seed, then mean and CI. (Not the first failing load: near the bound one unlucky
/// low-load run, a few cold storage reads over a short run, would zero a whole bar.)
fn sustained(results: &Results) -> BTreeMap<(String, u64), (f64, f64, usize)> {
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

pub(super) fn throughput_servers(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
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
                // Outside: with a system peaking and falling, every inside corner covers a line.
                legend_at: Some(Corner::OutsideRight),
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
                Kind::Predicted,
                "per-server throughput at the largest size within 10 % of the smallest's",
            )
            .scored(
                "nearly constant (linear scaling)",
                format!("{:.0} vs {:.0} per server ({:.0} %)", b / last as f64, a / first as f64, eff * 100.0),
                Some(eff >= 1.0 - MARGIN),
                if eff >= 1.0 - MARGIN {
                    "Reads never coordinate, and a chain hop costs each server little beside the requests it serves, so throughput grows with servers."
                } else {
                    "Not reproduced: every write visits every server of its chain (N hops), so each server's work per workflow grows with N; here the caches' CPU, not the worker slots, became the bottleneck at the largest size."
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
                    "The shape is the paper's (it peaks, then falls as servers are added: more writes in flight leave more reads without a cached version that forms a cut, and every retried attempt holds a worker slot again), but the peak is higher: in the model an attempt costs what CausalMesh's does (the same calls; a 4.8 ms median at 1k/s where the authors measured 6.5 ms), so more of them fit in the slots."
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
                both.iter()
                    .zip(&ratios)
                    .map(|(n, (_, r))| match get("FaaSTCC", *n) {
                        Some(f) if f >= 1.0 => format!("{r:.2}× at {n}"),
                        _ => format!("FaaSTCC sustains no load at {n}"),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                Some(holds),
                if holds {
                    "FaaSTCC's single storage partition serves every miss and commit and saturates first."
                } else {
                    "Not reproduced: FaaSTCC's commit waits for a 5 ms storage write on top of the same calls every system makes, so its p99 stays above Fig. 15's 10 ms bound and its throughput by that bound is near zero; the paper's FaaSTCC, with a median at most 38 % above CausalMesh's 4.8 ms (Fig. 13), cannot have waited 5 ms for storage per workflow (docs/fidelity.md, cost model)."
                },
            )?,
        );
    }
    if let (Some(a), Some(b)) = (get("FaaSTCC", first), get("FaaSTCC", last)) {
        let draft = claim(
            "throughput-servers",
            &format!("FaaSTCC normalised throughput, {last} vs {first} servers"),
            Kind::Predicted,
            "per-server throughput at the largest size below 90 % of the smallest's (the paper gives no figure)",
        );
        let eff = (b / last as f64) / (a / first as f64);
        claims.push(if a >= 1.0 {
            draft.scored(
                "degrades as servers are added",
                format!("{:.0} vs {:.0} per server ({:.0} %)", b / last as f64, a / first as f64, eff * 100.0),
                Some(eff < 1.0 - MARGIN),
                "Its one storage partition (the single Redis of §9.1) takes every commit and stable-time exchange, so it becomes the bottleneck once enough servers feed it.",
            )?
        } else {
            draft.scored(
                "degrades as servers are added",
                format!("no load sustained at {first} servers"),
                None,
                "Not comparable: its p99 is above the 10 ms bound at every load and size (a 5 ms synchronous commit on top of every system's calls; see CausalMesh-TCC / FaaSTCC above).",
            )?
        });
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
                        "Its coordinator contacts every cache twice per workflow, but at this size its caches are not yet the bottleneck in the model; it falls behind only at 16 servers."
                    },
                )?,
            );
        }
    }
    Ok((fig, claims))
}
