//! FaaSTCC's figures: Fig. 4a (latency vs Zipf), Fig. 5 (metadata), Fig. 6 (storage rounds), Fig. 7
//! (bytes per storage read), Fig. 8 (cache footprint), Fig. 9 (latency vs cache size), Fig. 10
//! (time per function vs chain length), Fig. 3 (the ablation of promises and intervals) and Fig. 11
//! (the overhead over eventual consistency).

use super::*;
use crate::chart::{HLine, palette_at};
use crate::claim::METADATA_NS_PER_KB;
use causim_models::eventual::Eventual;
use causim_models::faastcc::Faastcc;

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

pub(super) fn faastcc_metadata(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
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

pub(super) fn faastcc_rounds(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
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
        if let Some(share) = value_at(results, &f, 1.0, &metrics::observed(metrics::FUNCTION_CACHE_ONLY, "mean")) {
            let holds = (share * 100.0 - 60.0).abs() <= 10.0;
            claims.push(
                claim("faastcc-rounds", "FaaSTCC functions served by the cache alone, Zipf 1", Kind::Predicted, "within ± 10 points of 60 %")
                    .scored(
                        "60 % (§6.3)",
                        pct(share * 100.0),
                        Some(holds),
                        if holds {
                            "Entries whose promise covers the workflow's interval serve both of a function's reads."
                        } else {
                            "Promises are renewed only when a read finds them stale, as §4.2–4.6 describe (pushes carry new versions only), so an entry's promise is as old as its last storage read: once a workflow has read one recently pushed version, most other entries are stale to it, whatever the update rate (stale share of cache lookups about 51 % at 6 400, 1 400 and 310 workflows/s). Extending every unchanged subscribed key's promise with each push (`params.promise_bumps`, not described by the paper) gives 42 %, 68 % and 88 % at those rates: the paper's 60 % suggests its store renews promises with its pushes. Sweep `faastcc-promise-renewal`."
                        },
                    )?,
            );
        }
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

pub(super) fn faastcc_latency(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
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
// FaaSTCC Fig. 8: what the caches hold

const MIB: f64 = 1024.0 * 1024.0;

pub(super) fn faastcc_cache_footprint(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let (cats, keys) = bars_by_zipf(results, &metrics::final_metric(metrics::CACHE_ENTRIES), None, 1.0);
    let meta: Vec<Series> = labels(results)
        .into_iter()
        .map(|l| {
            let pts = zipf_cats(results)
                .iter()
                .enumerate()
                .filter_map(|(i, z)| Some(Pt::new(i as f64, cache_metadata(results, &l, *z)? / MIB)))
                .collect();
            series(&l, Style::Bars, pts)
        })
        .collect();
    let fig = Figure {
        name: "faastcc-cache-footprint".into(),
        title: "FaaSTCC Fig. 8 — what the caches hold at the end of a run".into(),
        panels: vec![
            Panel {
                title: "(a) keys cached".into(),
                x_label: "workload skew".into(),
                y_label: "keys cached (all 40 caches; log)".into(),
                y_log: true,
                categories: Some(cats.clone()),
                series: keys,
                legend_at: Some(Corner::Elsewhere),
                ..Default::default()
            },
            Panel {
                title: "(b) consistency metadata held".into(),
                x_label: "workload skew".into(),
                y_label: "metadata (MiB, all 40 caches; log)".into(),
                y_log: true,
                categories: Some(cats),
                series: meta,
                legend_at: Some(Corner::OutsideRight),
                ..Default::default()
            },
        ],
        notes: vec![
            "FaaSTCC §6.1 workload (the faastcc-zipf sweep). FaaSTCC holds a timestamp and a promise (16 B) per cached key; HydroCache holds 16 B per dependency entry of each cached version. Caches start pre-warmed, so FaaSTCC's caches also take in every key its store pushes, not only keys its functions read.".into(),
        ],
    };
    let mut claims = Vec::new();
    let Some(f) = faastcc_label(results) else { return Ok((fig, claims)) };
    let hydro: Vec<String> = labels(results).into_iter().filter(|l| l.to_lowercase().starts_with("hydro")).collect();
    let entries = metrics::final_metric(metrics::CACHE_ENTRIES);
    for h in &hydro {
        let (Some(hk), Some(fk)) = (value_at(results, h, 1.0, &entries), value_at(results, &f, 1.0, &entries)) else { continue };
        let holds = hk > fk;
        claims.push(
            claim("faastcc-cache-footprint", &format!("{h} / FaaSTCC keys cached, Zipf 1"), Kind::Predicted, "above 1×").scored(
                "HydroCache stores more keys (it caches the dependencies of what it reads)",
                format!("{:.2}×", hk / fk),
                Some(holds),
                if holds {
                    "HydroCache's caches take in the dependency closure of what they read; FaaSTCC's only what its functions read."
                } else {
                    "Not reproduced: our caches start pre-warmed (every key cached at its initial version), so FaaSTCC's caches apply every push its store sends and end up holding every key written during the run, while HydroCache's cut holds only the keys its refreshes and reads brought in."
                },
            )?,
        );
    }
    for h in &hydro {
        let ratios: Vec<(f64, f64)> = zipf_cats(results)
            .iter()
            .filter_map(|z| Some((*z, cache_metadata(results, h, *z)? / cache_metadata(results, &f, *z)?.max(1.0))))
            .collect();
        let falls = ratios.windows(2).all(|w| w[1].1 < w[0].1);
        let holds = (ratios.len() >= 2).then_some(ratios.iter().all(|(_, r)| *r > 1.0) && falls);
        claims.push(
            claim(
                "faastcc-cache-footprint",
                &format!("{h} / FaaSTCC cache metadata, by Zipf"),
                Kind::Predicted,
                "above 1× at every skew, and falling as skew rises",
            )
            .scored(
                "HydroCache holds more metadata; its dependencies grow as skew falls",
                ratios.iter().map(|(z, r)| format!("{r:.0}×@{z}")).collect::<Vec<_>>().join(", "),
                holds,
                if holds == Some(true) {
                    "Explicit dependencies cost per cached version and there are more of them at low skew; FaaSTCC's per-key metadata is two timestamps."
                } else {
                    "The gap does not fall with skew here."
                },
            )?,
        );
    }
    Ok((fig, claims))
}

/// Bytes of consistency metadata the caches of `label` hold at the end of the Zipf `z` runs:
/// HydroCache reports them; FaaSTCC's are a timestamp and a promise per cached key.
fn cache_metadata(results: &Results, label: &str, z: f64) -> Option<f64> {
    if entry_of(results, label).is_some_and(|e| e.name == Faastcc::ENTRY.name) {
        return value_at(results, label, z, &metrics::final_metric(metrics::CACHE_ENTRIES)).map(|n| 16.0 * n);
    }
    value_at(results, label, z, &metrics::final_metric(metrics::CACHE_METADATA_BYTES))
}

// ---------------------------------------------------------------------------------------------
// FaaSTCC Fig. 9: latency vs the cache's size (LRU)

const CAPACITY: &str = "protocol.params.cache_capacity_keys";

/// One system's rows by cache size, as a share (%) of the size its unbounded caches reached:
/// the unbounded run is 100 %; a bounded one is its capacity per cache over the unbounded run's
/// cached keys per cache (the sweep derives capacities the same way). Shares are rounded to
/// 5 % so that systems share the categories.
fn by_cache_share<'a>(results: &'a Results, label: &str) -> Vec<(f64, &'a AggRow)> {
    let rows = rows_of(results, label);
    let Some(full) = rows
        .iter()
        .find(|r| param(r, CAPACITY).is_none())
        .and_then(|r| Some(r.mean(&metrics::final_metric(metrics::CACHE_ENTRIES))? / r.mean("servers").filter(|s| *s > 0.0)?))
    else {
        return Vec::new();
    };
    let mut out: Vec<(f64, &AggRow)> = rows
        .into_iter()
        .map(|r| {
            let share = param(r, CAPACITY).map_or(100.0, |c| (100.0 * c / full.max(1.0) / 5.0).round() * 5.0);
            (share, r)
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

fn share_at(results: &Results, label: &str, share: f64, metric: &str) -> Option<f64> {
    by_cache_share(results, label).into_iter().find(|(s, _)| *s == share)?.1.mean(metric)
}

pub(super) fn faastcc_cache_size(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let mut shares: Vec<f64> = labels(results).iter().flat_map(|l| by_cache_share(results, l).into_iter().map(|(s, _)| s)).collect();
    shares.sort_by(f64::total_cmp);
    shares.dedup();
    let series_of = |metric: &dyn Fn(&AggRow) -> Option<(f64, f64)>, style: Style| -> Vec<Series> {
        labels(results)
            .iter()
            .map(|l| {
                let pts = by_cache_share(results, l)
                    .into_iter()
                    .filter_map(|(s, r)| {
                        let i = shares.iter().position(|v| *v == s)?;
                        let (y, hi) = metric(r)?;
                        Some(Pt { x: i as f64, y, lo: y, hi })
                    })
                    .collect();
                series(l, style, pts)
            })
            .collect()
    };
    let latency = series_of(&|r: &AggRow| Some((r.mean("latency_p50_ms")?, r.mean("latency_p99_ms")?)), Style::Bars);
    let aborts = series_of(&|r: &AggRow| r.mean("abort_rate").map(|a| (100.0 * a, 100.0 * a)), Style::Bars);
    let cats: Vec<String> = shares.iter().map(|s| if *s == 0.0 { "0 % (off)".into() } else { format!("{s:.0} %") }).collect();
    let fig = Figure {
        name: "faastcc-cache-size".into(),
        title: "FaaSTCC Fig. 9 — workflow latency vs cache size (LRU), Zipf 1.0".into(),
        panels: vec![
            Panel {
                title: "(a) latency: median bar, p99 whisker".into(),
                x_label: "cache size (share of the unbounded cache's keys)".into(),
                y_label: "workflow latency (ms; log)".into(),
                y_log: true,
                categories: Some(cats.clone()),
                series: latency,
                legend_at: Some(Corner::Elsewhere),
                ..Default::default()
            },
            Panel {
                title: "(b) aborted attempts".into(),
                x_label: "cache size (share of the unbounded cache's keys)".into(),
                y_label: "attempts aborted (%)".into(),
                categories: Some(cats),
                series: aborts,
                legend_at: Some(Corner::OutsideRight),
                ..Default::default()
            },
        ],
        notes: vec![
            "FaaSTCC §6.1 workload (shortened), caches start cold; 100 % is the unbounded run. FaaSTCC runs one algorithm whether or not the read set is known, so one series stands for its static and dynamic runs. 15 µs per KiB of metadata (fitted in faastcc-zipf, not here).".into(),
        ],
    };
    let mut claims = Vec::new();
    let (p50, p99) = ("latency_p50_ms", "latency_p99_ms");
    let Some(f) = faastcc_label(results) else { return Ok((fig, claims)) };
    // The smallest bounded size that keeps a cache (Fig. 9's "small cache sizes").
    let small = shares.iter().copied().find(|s| *s > 0.0 && *s < 100.0);
    if let (Some(st), Some(small)) = (static_label(results), small) {
        for (metric, what, paper) in [(p50, "median", 2.2), (p99, "p99", 5.1)] {
            let (Some(h), Some(fv)) = (share_at(results, &st, small, metric), share_at(results, &f, small, metric)) else { continue };
            let r = h / fv;
            let holds = r > 1.0 && near(r, paper);
            claims.push(
                claim(
                    "faastcc-cache-size",
                    &format!("HydroCache static / FaaSTCC {what} latency, smallest bounded cache"),
                    Kind::Predicted,
                    format!("within ± 10 % of {paper}× ({:.2}–{:.2}×)", paper * 0.9, paper * 1.1),
                )
                .scored(
                    format!("{paper}× (\"for small cache sizes\")"),
                    format!("{r:.2}× ({h:.1} vs {fv:.1} ms, cache at {small:.0} %)"),
                    Some(holds),
                    if holds {
                        "A miss costs HydroCache a dependency chase and possibly an abort; FaaSTCC one storage round."
                    } else if r > 1.0 {
                        "FaaSTCC is ahead, but not by the paper's factor: a miss costs HydroCache a dependency chase and FaaSTCC one storage round, and our chases are short (see faastcc-rounds)."
                    } else {
                        "Not reproduced: HydroCache is not slower than FaaSTCC with small caches here."
                    },
                )?,
            );
        }
        if let Some(d) = dynamic_label(results) {
            let ratio = |l: &str| Some(share_at(results, l, small, p50)? / share_at(results, &f, small, p50)?);
            if let (Some(rd), Some(rs)) = (ratio(&d), ratio(&st)) {
                let holds = rd > 1.0 && rd >= rs;
                claims.push(
                    claim(
                        "faastcc-cache-size",
                        "HydroCache dynamic / FaaSTCC median latency, smallest bounded cache",
                        Kind::Predicted,
                        "above 1× and at least the static ratio",
                    )
                    .scored(
                        "slower than static (static gets optimisations dynamic cannot, §6.7)",
                        format!("{rd:.2}× (static {rs:.2}×, cache at {small:.0} %)"),
                        Some(holds),
                        if holds {
                            "Dynamic transactions carry the whole dependency map, and each miss adds to it."
                        } else {
                            "HydroCache dynamic is not behind static here."
                        },
                    )?,
                );
            }
        }
    }
    if let (Some(off), Some(on)) = (share_at(results, &f, 0.0, p50), share_at(results, &f, 100.0, p50)) {
        let r = off / on;
        let holds = near(r, 2.0);
        claims.push(
            claim("faastcc-cache-size", "FaaSTCC median latency, cache off / unbounded", Kind::Predicted, "within ± 10 % of 2× (1.8–2.2×)")
                .scored(
                    "≈ 2× (\"reduced to approximately half\")",
                    format!("{r:.2}× ({off:.1} vs {on:.1} ms)"),
                    Some(holds),
                    if holds {
                        "Each of the 12 reads that the cache would serve instead costs a storage round."
                    } else {
                        "The cache's share of the latency is not the paper's: storage rounds cost the modelled RTT plus service time, and a cold cache serves fewer reads than the paper's."
                    },
                )?,
        );
        if let Some(st) = static_label(results)
            && let Some(h) = share_at(results, &st, 100.0, p50)
        {
            let holds = off <= 1.1 * h;
            claims.push(
                claim(
                    "faastcc-cache-size",
                    "FaaSTCC without cache / HydroCache static with unbounded cache, median",
                    Kind::Predicted,
                    "at most 1.1× (outperforms, or within 10 %)",
                )
                .scored(
                    "\"can outperform or approximate\"",
                    format!("{:.2}× ({off:.1} vs {h:.1} ms)", off / h),
                    Some(holds),
                    if holds {
                        "Small metadata and one storage round per read keep FaaSTCC without a cache near HydroCache with one."
                    } else {
                        "Not reproduced: FaaSTCC without its cache is slower than HydroCache with its cache by more than 10 %."
                    },
                )?,
            );
        }
    }
    for h in labels(results).into_iter().filter(|l| l.to_lowercase().starts_with("hydro")) {
        let growth = |l: &str| Some(share_at(results, l, small?, p50)? / share_at(results, l, 100.0, p50)?);
        if let (Some(gh), Some(gf)) = (growth(&h), growth(&f)) {
            let holds = gh > gf;
            claims.push(
                claim(
                    "faastcc-cache-size",
                    &format!("{h}: median at the smallest cache / unbounded, against FaaSTCC's"),
                    Kind::Predicted,
                    "above FaaSTCC's ratio (HydroCache degrades more)",
                )
                .scored(
                    "HydroCache degrades more as the cache shrinks",
                    format!("{gh:.2}× vs FaaSTCC {gf:.2}×"),
                    Some(holds),
                    if holds {
                        "A HydroCache miss is a dependency chase and may abort; a FaaSTCC miss is one storage round."
                    } else {
                        "Not reproduced: HydroCache's latency grows no more than FaaSTCC's as its cache shrinks."
                    },
                )?,
            );
        }
        let aborts = |s: f64| share_at(results, &h, s, "abort_rate");
        if let (Some(a_small), Some(a_full)) = (small.and_then(aborts), aborts(100.0)) {
            let holds = a_small > 0.0 && a_small >= 1.5 * a_full;
            claims.push(
                claim("faastcc-cache-size", &format!("{h}: aborts with a small cache"), Kind::Predicted, "above 0 and at least 1.5× the unbounded run's")
                    .scored(
                        "aborts at small sizes (versions overwritten)",
                        format!("{:.2} % vs {:.2} % unbounded", 100.0 * a_small, 100.0 * a_full),
                        Some(holds),
                        if holds {
                            "Reads that miss fetch the newest version, which can depend on newer versions of keys the workflow already read: the validation aborts."
                        } else {
                            "Not reproduced: a small cache does not raise HydroCache's aborts here. Opt's aborts come from reading the local cut, whose versions can depend on newer versions of keys the workflow read elsewhere; a read that misses fetches the database's newest version, which that validation rarely rejects (with the cache off, Opt aborts 0.35 % of attempts against 7.6 % unbounded), and Con's joined snapshot covers its reads at every size."
                        },
                    )?,
            );
        }
    }
    Ok((fig, claims))
}

// ---------------------------------------------------------------------------------------------
// FaaSTCC Fig. 10: time per function vs the chain's length

const LENGTH: &str = "workload.generator.workflow.functions";

/// Median workflow latency divided by the chain's length (ms), by length, for one system and
/// one skew.
fn per_function(results: &Results, label: &str, z: f64) -> Vec<(f64, f64)> {
    let mut pts: Vec<(f64, f64)> = rows_of(results, label)
        .into_iter()
        .filter(|r| param(r, ZIPF) == Some(z))
        .filter_map(|r| {
            let n = param(r, LENGTH)?;
            let p50 = r.mean("latency_p50_ms").filter(|v| *v > 0.0)?;
            Some((n, p50 / n))
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    pts
}

/// `c` mixed with white by `share` (lighter shades for higher skews).
fn lighter(c: RGBColor, share: f64) -> RGBColor {
    let mix = |v: u8| (f64::from(v) + (255.0 - f64::from(v)) * share).round() as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

pub(super) fn faastcc_dag_length(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let zipfs = zipf_cats(results);
    let panel_of = |title: &str, hydro: Option<String>, legend: Corner| {
        let mut s = Vec::new();
        for l in hydro.iter().chain(faastcc_label(results).iter()) {
            for (i, z) in zipfs.iter().enumerate() {
                let pts = per_function(results, l, *z).into_iter().map(|(x, y)| Pt::new(x, y)).collect();
                let short = if l.to_lowercase().starts_with("hydro") { "HydroCache" } else { "FaaSTCC" };
                s.push(Series {
                    label: format!("{short}, Zipf {z}"),
                    color: lighter(color_of(l), 0.3 * i as f64),
                    style: Style::Line,
                    points: pts,
                });
            }
        }
        Panel {
            title: title.into(),
            x_label: "functions in the chain".into(),
            y_label: "median workflow latency per function (ms)".into(),
            series: s,
            legend_at: Some(legend),
            ..Default::default()
        }
    };
    let fig = Figure {
        name: "faastcc-dag-length".into(),
        title: "FaaSTCC Fig. 10 — time per function vs the chain's length".into(),
        panels: vec![
            panel_of("(a) static transactions", static_label(results), Corner::OutsideRight),
            panel_of("(b) dynamic transactions", dynamic_label(results), Corner::OutsideRight),
        ],
        notes: vec![
            "Median workflow latency divided by the number of functions. Each function reads 2 Zipf keys, the last also writes 1; 15 µs per KiB of metadata received (fitted once in the faastcc-zipf sweep, not here).".into(),
        ],
    };
    let mut claims = Vec::new();
    let growth = |pts: &[(f64, f64)]| Some(pts.last()?.1 / pts.first()?.1);
    let span = |pts: &[(f64, f64)]| match (pts.first(), pts.last()) {
        (Some(a), Some(b)) => format!("{:.0} → {:.0} functions", a.0, b.0),
        _ => "-".into(),
    };
    if let Some(d) = dynamic_label(results) {
        let low = zipfs.first().copied().unwrap_or(1.0);
        let pts = per_function(results, &d, low);
        let g = growth(&pts);
        let rises = pts.windows(2).all(|w| w[1].1 > w[0].1);
        let holds = (pts.len() >= 3).then(|| rises && g.is_some_and(|g| near(g, 5.0)));
        claims.push(
            claim(
                "faastcc-dag-length",
                &format!("HydroCache dynamic, Zipf {low}: time per function, longest chain / shortest"),
                Kind::Predicted,
                "rises at every length, and longest / shortest within ± 10 % of 5× (4.5–5.5×)",
            )
            .scored(
                "roughly 5× (\"increases sharply\" with length at low skew)",
                format!("{} ({})", g.map_or("-".into(), |g| format!("{g:.1}×")), span(&pts)),
                holds,
                if holds == Some(true) {
                    "Each function adds its reads' dependencies to the map the next one receives, so later functions pay for more metadata: the workflow's time grows faster than its length."
                } else {
                    "The dependency map grows along the chain, so later functions pay for more metadata; here the growth is not the paper's 5×. Our maps are never collected, so their size, and this growth, also depend on how long the run is (4000 workflows, 2000 at the quick size; the paper's runs are 16000)."
                },
            )?,
        );
        let by_skew: Vec<(f64, f64)> = zipfs.iter().filter_map(|z| Some((*z, growth(&per_function(results, &d, *z))?))).collect();
        if by_skew.len() >= 2 {
            let holds = by_skew.windows(2).all(|w| w[1].1 < w[0].1);
            claims.push(
                claim(
                    "faastcc-dag-length",
                    "HydroCache dynamic: growth of time per function with length, by Zipf",
                    Kind::Predicted,
                    "smaller at every higher skew",
                )
                .scored(
                    "most pronounced at low skew",
                    by_skew.iter().map(|(z, g)| format!("{g:.1}×@{z}")).collect::<Vec<_>>().join(", "),
                    Some(holds),
                    if holds {
                        "Low skew spreads reads over more objects, so more dependencies accumulate along the chain."
                    } else {
                        "The growth does not fall with skew here."
                    },
                )?,
            );
        }
    }
    if let Some(f) = faastcc_label(results) {
        let worst = zipfs.iter().filter_map(|z| growth(&per_function(results, &f, *z)).map(|g| (*z, g))).collect::<Vec<_>>();
        let holds = (!worst.is_empty()).then(|| worst.iter().all(|(_, g)| *g <= 1.25));
        claims.push(
            claim("faastcc-dag-length", "FaaSTCC: time per function, longest chain / shortest", Kind::Predicted, "at most 1.25× at every skew")
                .scored(
                    "\"almost immune\" (a slight rise)",
                    worst.iter().map(|(z, g)| format!("{g:.2}×@{z}")).collect::<Vec<_>>().join(", "),
                    holds,
                    if holds == Some(true) {
                        "Its metadata is two timestamps whatever the length; only the narrowing interval (more reads) can send a read to storage."
                    } else {
                        "Its metadata is two timestamps whatever the length, yet the time per function grows here."
                    },
                )?,
        );
    }
    if let Some(st) = static_label(results) {
        let low = zipfs.first().copied().unwrap_or(1.0);
        let pts = per_function(results, &st, low);
        let holds = (pts.len() >= 2).then(|| growth(&pts).is_some_and(|g| g > 1.0));
        claims.push(
            claim(
                "faastcc-dag-length",
                &format!("HydroCache static, Zipf {low}: time per function, longest chain / shortest"),
                Kind::Predicted,
                "above 1× (it rises)",
            )
            .scored(
                "rises with length (cache misses dominate)",
                format!("{} ({})", growth(&pts).map_or("-".into(), |g| format!("{g:.2}×")), span(&pts)),
                holds,
                if holds == Some(true) {
                    "Longer chains read more keys, and each miss costs storage rounds."
                } else {
                    "Not reproduced: our HydroCache-Con installs the whole snapshot once before the chain and its pre-warmed caches rarely miss, so that fixed cost is shared by more functions and the time per function falls with length."
                },
            )?,
        );
    }
    Ok((fig, claims))
}

// ---------------------------------------------------------------------------------------------
// FaaSTCC Fig. 7: bytes per storage read

pub(super) fn faastcc_storage_bytes(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let p50 = metrics::observed(metrics::STORAGE_BYTES_PER_READ, "p50");
    let (cats, s) = bars_by_zipf(results, &p50, Some(&metrics::observed(metrics::STORAGE_BYTES_PER_READ, "p99")), 1.0);
    let fig = Figure {
        name: "faastcc-storage-bytes".into(),
        title: "FaaSTCC Fig. 7 — bytes moved to read from storage".into(),
        panels: vec![Panel {
            title: "chains of 6 functions, 100 K keys; reads the cache served are not counted".into(),
            x_label: "workload skew".into(),
            y_label: "bytes per storage read (median, whisker p99; log)".into(),
            y_log: true,
            categories: Some(cats),
            series: s,
            legend_at: Some(Corner::OutsideRight),
            ..Default::default()
        }],
        notes: vec![
            "Request and reply, payload and metadata. FaaSTCC: each key's share of its batched read, metadata only when the cache holds the version; HydroCache: every fetch of the read's dependency chase. HydroCache-Con installs its snapshot before the chain, so its reads never go to storage (no bar).".into(),
        ],
    };
    let mut claims = Vec::new();
    let (Some(f), Some(d)) = (faastcc_label(results), dynamic_label(results)) else { return Ok((fig, claims)) };
    let pairs: Vec<(f64, f64, f64)> =
        zipf_cats(results).iter().filter_map(|z| Some((*z, value_at(results, &d, *z, &p50)?, value_at(results, &f, *z, &p50)?))).collect();
    let holds = (!pairs.is_empty()).then(|| pairs.iter().all(|(_, h, fv)| h > fv));
    claims.push(
        claim(
            "faastcc-storage-bytes",
            "HydroCache dynamic / FaaSTCC median bytes per storage read, by Zipf",
            Kind::Predicted,
            "above 1× at every skew",
        )
        .scored(
            "HydroCache moves more (its metadata); FaaSTCC's reads are mostly metadata only",
            pairs.iter().map(|(z, h, fv)| format!("{:.0}×@{z} ({h:.0} vs {fv:.0} B)", h / fv.max(1.0))).collect::<Vec<_>>().join(", "),
            holds,
            if holds == Some(true) {
                "HydroCache's fetched versions carry their dependency lists, and a chase fetches several; FaaSTCC's reply carries two timestamps and the value only when the cache lacks it."
            } else {
                "HydroCache's fetched versions carry their dependency lists, yet its reads move no more than FaaSTCC's here."
            },
        )?,
    );
    let grows = pairs.windows(2).all(|w| w[1].1 > w[0].1);
    claims.push(
        claim("faastcc-storage-bytes", "HydroCache dynamic median bytes per storage read, by Zipf", Kind::Predicted, "rises with skew")
            .scored(
                "rises with skew, with the rounds (Fig. 6)",
                pairs.iter().map(|(z, h, _)| format!("{h:.0} B@{z}")).collect::<Vec<_>>().join(", "),
                (pairs.len() >= 2).then_some(grows),
                if grows {
                    "More rounds per chase at higher skew fetch more versions."
                } else {
                    "Not reproduced: our chases do not lengthen with skew (Fig. 6), while each fetched version's dependency list shrinks with skew, so the bytes do not rise with it."
                },
            )?,
    );
    Ok((fig, claims))
}

// ---------------------------------------------------------------------------------------------
// FaaSTCC Fig. 3 (the ablation of promises and snapshot intervals) and Fig. 11 (the latency
// overhead over Cloudburst without consistency)

/// `(skew, num's metric / den's)` at every skew where both ran.
fn ratio_by_zipf(results: &Results, num: &str, den: &str, metric: &str) -> Vec<(f64, f64)> {
    zipf_cats(results)
        .into_iter()
        .filter_map(|z| Some((z, value_at(results, num, z, metric)? / value_at(results, den, z, metric)?)))
        .collect()
}

/// Bars of each series' `metric` at every skew, divided by the `base` series' at the same skew.
fn normalised_by_zipf(results: &Results, metric: &str, base: &str, shown: &[String]) -> (Vec<String>, Vec<Series>) {
    let z = zipf_cats(results);
    let x = |zv: f64| z.iter().position(|v| *v == zv).unwrap_or(0) as f64;
    let s = shown
        .iter()
        .map(|l| series(l, Style::Bars, ratio_by_zipf(results, l, base, metric).into_iter().map(|(zv, r)| Pt::new(x(zv), r)).collect()))
        .collect();
    (z.iter().map(|v| format!("Zipf {v}")).collect(), s)
}

/// `(skew, value)` of a series at every skew, for the claims' "by Zipf" columns.
fn by_zipf(results: &Results, label: &str, metric: &str) -> Vec<(f64, f64)> {
    zipf_cats(results).into_iter().filter_map(|z| Some((z, value_at(results, label, z, metric)?))).collect()
}

fn at_zipfs(values: &[(f64, f64)], digits: usize, unit: &str) -> String {
    values.iter().map(|(z, v)| format!("{v:.digits$}{unit}@{z}")).collect::<Vec<_>>().join(", ")
}

pub(super) fn faastcc_ablation(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let policy = |prefix: &str| labels(results).into_iter().find(|l| l.starts_with(prefix));
    let (Some(a), Some(b), Some(c)) = (policy("A:"), policy("B:"), policy("C:")) else {
        return Err("faastcc-ablation needs the series A:, B: and C:".into());
    };
    let shown = [a.clone(), b.clone(), c.clone()];
    // B' and C': the same with promises renewed by pushes (shown, not scored).
    let renewed: Vec<String> = [policy("B'"), policy("C'")].into_iter().flatten().collect();
    let drawn: Vec<String> = shown.iter().chain(&renewed).cloned().collect();
    let rounds = metrics::observed(metrics::STORAGE_ROUNDS_PER_READ, "mean");
    let (cats, mut latency) = normalised_by_zipf(results, "latency_mean_ms", &a, &drawn);
    let (_, storage) = bars_by_zipf(results, &rounds, None, 100.0);
    let mut storage: Vec<Series> = drawn.iter().filter_map(|l| storage.iter().find(|s| &s.label == l).cloned()).collect();
    for s in latency.iter_mut().chain(storage.iter_mut()) {
        // The policies are not systems of the catalogue: give each a fixed colour of its own.
        s.color = palette_at([0, 1, 3, 2, 4][drawn.iter().position(|l| *l == s.label).unwrap_or(0)]);
    }
    let fig = Figure {
        name: "faastcc-ablation".into(),
        title: "FaaSTCC Fig. 3 — what promises and snapshot intervals contribute".into(),
        panels: vec![
            Panel {
                title: "(a) latency, normalised to A".into(),
                x_label: "workload skew".into(),
                y_label: "mean workflow latency / A's".into(),
                categories: Some(cats.clone()),
                series: latency,
                y_range: Some((0.0, 1.25)),
                legend_at: Some(Corner::Elsewhere),
                ..Default::default()
            },
            Panel {
                title: "(b) reads that went to storage".into(),
                x_label: "workload skew".into(),
                y_label: "reads sent to storage (%)".into(),
                categories: Some(cats),
                series: storage,
                y_range: Some((0.0, 100.0)),
                legend_at: Some(Corner::OutsideRight),
                ..Default::default()
            },
        ],
        notes: vec![
            "FaaSTCC §6.1 workload (shortened to 8000 workflows). A: fixed snapshot, no promises; B: promises, snapshot fixed at the first read's promise; C: the full system (params.read_policy). B', C': promises renewed by every push (params.promise_bumps).".into(),
        ],
    };
    let mean = |l: &str, z: f64| value_at(results, l, z, "latency_mean_ms");
    let mut claims = Vec::new();
    let share = [
        ("B / A mean latency, Zipf 1 (what promises give)", &b, &a, 0.71, "0.71 (promises: 29 % of the gain)"),
        ("C / B mean latency, Zipf 1 (what intervals add)", &c, &b, 0.77, "0.77 (intervals: a further 23 %)"),
    ];
    for (name, num, den, want, paper) in share {
        let (Some(n), Some(d)) = (mean(num, 1.0), mean(den, 1.0)) else { continue };
        let r = n / d;
        let holds = near(r, want);
        claims.push(
            claim("faastcc-ablation", name, Kind::Predicted, format!("within ± 10 % of {want} ({:.2}–{:.2})", want * 0.9, want * 1.1))
                .scored(
                    paper,
                    format!("{r:.2} ({n:.2} vs {d:.2} ms)"),
                    Some(holds),
                    if holds {
                        "Each mechanism lets the cache serve reads the weaker policy sends to storage, and a storage round is the cost it saves."
                    } else {
                        "Not reproduced: under the model's promise rule (renewed on demand) even C sends most reads to storage, so there is little cache use for the mechanisms to win, and a function goes to storage if either of its keys must (see fidelity.md)."
                    },
                )?,
        );
    }
    let ordered = |metric: &str| -> (String, bool) {
        let v: Vec<Vec<(f64, f64)>> = shown.iter().map(|l| by_zipf(results, l, metric)).collect();
        let z = zipf_cats(results);
        let at = |i: usize, zv: f64| v[i].iter().find(|(x, _)| *x == zv).map(|p| p.1);
        let holds =
            !z.is_empty() && z.iter().all(|&zv| matches!((at(0, zv), at(1, zv), at(2, zv)), (Some(x), Some(y), Some(w)) if x > y && y > w));
        let text = z
            .iter()
            .map(|&zv| {
                let f = |i| at(i, zv).map_or("-".into(), |x: f64| format!("{x:.3}"));
                format!("{} / {} / {}@{zv}", f(0), f(1), f(2))
            })
            .collect::<Vec<_>>()
            .join(", ");
        (text, holds)
    };
    for (name, metric, paper) in [
        ("mean latency ordered A > B > C, by Zipf (ms)", "latency_mean_ms".to_string(), "A > B > C"),
        (
            "storage-access fraction ordered A > B > C, by Zipf",
            rounds.clone(),
            "A > B > C (A must \"always read from the storage\" unless it holds the exact version)",
        ),
    ] {
        let (text, holds) = ordered(&metric);
        claims.push(claim("faastcc-ablation", name, Kind::Predicted, "A > B > C at every skew").scored(
            paper,
            text,
            Some(holds),
            if holds {
                "Each mechanism widens the set of cached versions a workflow may read: promises tell a cached version is still current at the snapshot, intervals let the snapshot move to where the cache's versions are."
            } else {
                "Not reproduced at every skew: see the values; at high skew B's point (the first batch's promise, recent) misses hot keys' older cached versions that A's older point still finds."
            },
        )?);
    }
    Ok((fig, claims))
}

pub(super) fn faastcc_ec_overhead(results: &Results) -> Result<(Figure, Vec<Claim>), String> {
    let ec = labels(results).into_iter().find(|l| entry_of(results, l).is_some_and(|e| e.name == Eventual::ENTRY.name));
    let (Some(ec), Some(f), Some(d), Some(st)) = (ec, faastcc_label(results), dynamic_label(results), static_label(results)) else {
        return Err("faastcc-ec-overhead needs FaaSTCC, HydroCache static and dynamic and the eventual baseline".into());
    };
    let shown = [f.clone(), st.clone(), d.clone()];
    let (cats, normalised) = normalised_by_zipf(results, "latency_mean_ms", &ec, &shown);
    let (_, mut absolute) = bars_by_zipf(results, "latency_mean_ms", None, 1.0);
    absolute.sort_by_key(|s| s.label != ec);
    let fig = Figure {
        name: "faastcc-ec-overhead".into(),
        title: "FaaSTCC Fig. 11 — latency overhead over eventual consistency".into(),
        panels: vec![
            Panel {
                title: "(a) latency normalised to Cloudburst without consistency".into(),
                x_label: "workload skew".into(),
                y_label: "mean workflow latency / Cloudburst's".into(),
                categories: Some(cats.clone()),
                series: normalised,
                hlines: vec![HLine { y: 1.0, label: "Cloudburst (eventual) = 1".into(), color: RGBColor(120, 120, 120) }],
                legend_at: Some(Corner::Elsewhere),
                ..Default::default()
            },
            Panel {
                title: "(b) mean latency".into(),
                x_label: "workload skew".into(),
                y_label: "workflow latency (ms, mean; log)".into(),
                y_log: true,
                categories: Some(cats),
                series: absolute,
                legend_at: Some(Corner::OutsideRight),
                ..Default::default()
            },
        ],
        notes: vec!["FaaSTCC §6.1 workload (shortened to 8000 workflows), the faastcc-zipf costs. FaaSTCC runs once: it does not use a static read set, so its static and dynamic modes are one system.".into()],
    };
    let (fr, dr) = (ratio_by_zipf(results, &f, &ec, "latency_mean_ms"), ratio_by_zipf(results, &d, &ec, "latency_mean_ms"));
    let mut claims = Vec::new();
    if !fr.is_empty() {
        let holds = fr.iter().all(|&(_, r)| in_range(r, 1.2, 2.0));
        claims.push(
            claim("faastcc-ec-overhead", "FaaSTCC / Cloudburst mean latency, by Zipf", Kind::Predicted, "within 1.2–2× ± 10 % (1.08–2.2×) at every skew")
                .scored(
                    "1.2–2×, depending on skew",
                    at_zipfs(&fr, 2, "×"),
                    Some(holds),
                    if holds {
                        "FaaSTCC pays for its storage rounds and its two-phase commit; the baseline reads whatever its cache holds and writes once."
                    } else {
                        "Not reproduced: the gap is FaaSTCC's storage rounds (reads its cache cannot serve in the interval) and its two-phase commit against one storage write; see fidelity.md for the measured parts."
                    },
                )?,
        );
    }
    let on_par = ratio_by_zipf(results, &st, &f, "latency_mean_ms");
    if !on_par.is_empty() {
        let holds = on_par.iter().all(|&(_, r)| near(r, 1.0));
        claims.push(
            claim("faastcc-ec-overhead", "HydroCache static / FaaSTCC mean latency, by Zipf", Kind::Predicted, "within ± 10 % of 1× at every skew")
                .scored(
                    "on par",
                    at_zipfs(&on_par, 2, "×"),
                    Some(holds),
                    if holds {
                        "With the read set known, HydroCache carries little metadata, like FaaSTCC."
                    } else {
                        "Not reproduced: our HydroCache-Con joins one snapshot before the chain and its pre-warmed caches serve every read, so it needs fewer storage rounds than FaaSTCC (as in faastcc-latency's static claims)."
                    },
                )?,
        );
    }
    if let Some(&(zmax, most)) = dr.iter().max_by(|x, y| x.1.total_cmp(&y.1)) {
        let holds = near(most, 6.3);
        claims.push(
            claim("faastcc-ec-overhead", "HydroCache dynamic / Cloudburst mean latency, the most over the skews", Kind::Predicted, "within ± 10 % of 6.3× (5.7–6.9×)")
                .scored(
                    "up to 6.3×",
                    format!("{most:.1}× at Zipf {zmax} ({})", at_zipfs(&dr, 1, "×")),
                    Some(holds),
                    if holds {
                        "Held out: the per-KiB metadata cost was fitted to HydroCache dynamic / FaaSTCC at Zipf 1, not to this ratio."
                    } else {
                        "Not reproduced: the per-KiB metadata cost was fitted to HydroCache dynamic / FaaSTCC = 5× at Zipf 1, so this ratio is that 5× times FaaSTCC's own overhead over the baseline; the paper's numbers imply a smaller FaaSTCC overhead where HydroCache peaks."
                    },
                )?,
        );
    }
    if !fr.is_empty() {
        claims.push(
            claim(
                "faastcc-ec-overhead",
                "FaaSTCC static / dynamic mean latency",
                Kind::ByConstruction("FaaSTCC never uses a read set known in advance: one run serves both modes"),
                "exactly 1×",
            )
            .scored(
                "the same",
                "1.00× (one run)",
                Some(true),
                "FaaSTCC reads the same way whether or not the read set is known.",
            )?,
        );
    }
    Ok((fig, claims))
}
