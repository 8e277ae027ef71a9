//! `causim reproduce`: runs the sweep behind each figure (`scenarios/sweeps/*.json`), draws the
//! figures and writes a Markdown report with the papers' numbers beside the simulated ones.
//!
//! Sweeps resume from their journals, so a second `reproduce` redraws from finished runs.

use crate::chart;
use crate::claim::{Claim, Score};
use crate::plot::{self, FIGURES};
use crate::sweep::{self, SweepOptions, SweepPlan};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The sweeps the figures read, each once, in the order of the first figure that reads it.
pub fn sweeps() -> Vec<&'static str> {
    let mut out: Vec<&str> = Vec::new();
    for f in FIGURES {
        if !out.contains(&f.sweep) {
            out.push(f.sweep);
        }
    }
    out
}

#[derive(Clone, Debug)]
pub struct ReproduceOptions {
    pub quick: bool,
    pub out_dir: PathBuf,
    pub threads: usize,
    /// Only these figures (and their sweeps); empty for all.
    pub only: Vec<String>,
    pub fresh: bool,
    pub progress: bool,
}

/// One sweep's outcome.
#[derive(Clone, Debug)]
pub struct SweepTiming {
    pub name: String,
    pub runs: usize,
    pub ran: usize,
    pub wall_s: f64,
}

#[derive(Clone, Debug)]
pub struct Reproduction {
    pub figures: Vec<(String, PathBuf, PathBuf)>,
    pub claims: Vec<Claim>,
    pub timings: Vec<SweepTiming>,
    pub report: PathBuf,
    pub wall_s: f64,
    pub errors: Vec<String>,
}

/// Checks, before any sweep runs, that `dir` can hold the reproduction: a folder (created if
/// missing), not a file. (It is shared with `causim run`'s folders, so its other contents stay.)
fn check_out_dir(dir: &Path) -> Result<(), String> {
    if std::fs::symlink_metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(format!("--out {}: exists and is not a folder", dir.display()));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("--out {}: cannot create: {e}", dir.display()))
}

/// Finds `scenarios/sweeps/<name>.json` from the working directory, else from the source tree
/// this binary was built from.
pub fn sweep_file(name: &str) -> Option<PathBuf> {
    let rel = Path::new("scenarios").join("sweeps").join(format!("{name}.json"));
    [PathBuf::from("."), PathBuf::from(env!("CARGO_MANIFEST_DIR"))].into_iter().map(|d| d.join(&rel)).find(|p| p.exists())
}

pub fn reproduce(options: &ReproduceOptions) -> Result<Reproduction, String> {
    let started = std::time::Instant::now();
    check_out_dir(&options.out_dir)?;
    let wanted: Vec<&plot::FigureDef> =
        FIGURES.iter().filter(|f| options.only.is_empty() || options.only.iter().any(|o| o == f.name)).collect();
    for o in &options.only {
        if plot::figure(o).is_none() {
            return Err(format!("unknown figure {o:?}; figures: {}", FIGURES.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")));
        }
    }
    let sweeps: Vec<&str> = sweeps().into_iter().filter(|s| wanted.iter().any(|f| f.sweep == *s)).collect();
    let size = if options.quick { "quick" } else { "default" };
    let mut timings = Vec::new();
    let mut errors = Vec::new();
    let mut results = std::collections::BTreeMap::new();
    for name in &sweeps {
        let Some(file) = sweep_file(name) else {
            errors.push(format!("sweep {name}: scenarios/sweeps/{name}.json not found (run from the repository)"));
            continue;
        };
        let plan = SweepPlan::from_file(&file, options.quick).map_err(|e| e.to_string())?;
        let dir = options.out_dir.join("sweeps").join(if options.quick { format!("{name}-quick") } else { name.to_string() });
        eprintln!("reproduce: sweep {name} ({} points × {} seeds, {size} size) → {}", plan.points.len(), plan.seeds.len(), dir.display());
        let o =
            SweepOptions { threads: options.threads, out_dir: dir.clone(), shard: None, fresh: options.fresh, progress: options.progress };
        match sweep::run_sweep(&plan, &o) {
            Ok(outcome) => {
                timings.push(SweepTiming { name: name.to_string(), runs: outcome.rows.len(), ran: outcome.ran, wall_s: outcome.wall_s });
                results.insert(name.to_string(), sweep::read_results(&dir)?);
            }
            Err(e) => errors.push(format!("sweep {name}: {e}")),
        }
    }
    let fig_dir = options.out_dir.join("figures");
    let mut figures = Vec::new();
    let mut claims = Vec::new();
    for f in &wanted {
        let Some(r) = results.get(f.sweep) else { continue };
        match f.build(r).and_then(|(fig, c)| Ok((chart::render(&fig, &fig_dir)?, c))) {
            Ok(((svg, png), c)) => {
                figures.push((f.name.to_string(), svg, png));
                claims.extend(c);
            }
            Err(e) => errors.push(format!("figure {}: {e}", f.name)),
        }
    }
    let report = options.out_dir.join("report.md");
    let wall_s = started.elapsed().as_secs_f64();
    let text = render_report(options, &wanted, &figures, &claims, &timings, &errors, wall_s);
    causim_pipeline::out_file::write(&report, text).map_err(|e| format!("cannot write {}: {e}", report.display()))?;
    Ok(Reproduction { figures, claims, timings, report, wall_s, errors })
}

fn verdict(c: &Claim) -> &'static str {
    match c.holds {
        Some(true) => "yes",
        Some(false) => "**no**",
        None => "n/a",
    }
}

/// The report's scorecard: the headline, then what each kind means.
fn scorecard(md: &mut String, claims: &[Claim]) {
    let _ = writeln!(md, "**{}.**\n", Score::of(claims).headline());
    let _ = writeln!(
        md,
        "Only **predicted** claims (no constant was fitted to them) count as reproductions. **Calibrated** claims name the constant fitted to them, so passing shows the fit; **by construction** claims are bounded by a named input; **checks** are the project's own mutant and consistency checks, not the papers' claims. Every claim prints its pass rule (point values pass within ± 10 % of the paper's).\n"
    );
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn render_report(
    options: &ReproduceOptions,
    wanted: &[&plot::FigureDef],
    figures: &[(String, PathBuf, PathBuf)],
    claims: &[Claim],
    timings: &[SweepTiming],
    errors: &[String],
    wall_s: f64,
) -> String {
    let mut md = String::new();
    let size = if options.quick { "quick (`--quick`)" } else { "default" };
    let _ = writeln!(md, "# causim reproduce — the papers' figures, simulated\n");
    let _ = writeln!(
        md,
        "Size: {size}. Threads: {}. Wall time: {} ({:.0} s). Each figure's sweep is in `scenarios/sweeps/`; its runs are in `sweeps/<name>{}/` (runs.csv, aggregate.csv with 95 % confidence intervals, results.json, the resolved scenario of every point).\n",
        options.threads,
        crate::progress::clock(wall_s),
        wall_s,
        if options.quick { "-quick" } else { "" }
    );
    scorecard(&mut md, claims);
    if !errors.is_empty() {
        let _ = writeln!(md, "## Errors\n");
        for e in errors {
            let _ = writeln!(md, "- {e}");
        }
        md.push('\n');
    }
    let _ = writeln!(md, "## Sweeps\n\n| sweep | runs | run now | wall time |\n|---|---|---|---|");
    for t in timings {
        let _ = writeln!(md, "| {} | {} | {} | {:.1} s |", t.name, t.runs, t.ran, t.wall_s);
    }
    md.push('\n');
    for f in wanted {
        let _ = writeln!(md, "## {} — {}\n", f.name, f.about);
        if let Some((_, _, png)) = figures.iter().find(|(n, _, _)| n == f.name) {
            let rel = png.strip_prefix(&options.out_dir).unwrap_or(png);
            let _ = writeln!(md, "![{}]({})\n", f.name, rel.display());
        } else {
            let _ = writeln!(md, "(not drawn)\n");
        }
        let mine: Vec<&Claim> = claims.iter().filter(|c| c.figure == f.name).collect();
        if mine.is_empty() {
            continue;
        }
        let _ = writeln!(md, "| claim | kind | paper | simulated | pass rule | holds | why |\n|---|---|---|---|---|---|---|");
        for c in mine {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} |",
                cell(&c.claim),
                cell(&c.kind.describe()),
                cell(&c.paper),
                cell(&c.simulated),
                cell(&c.rule),
                verdict(c),
                cell(&c.why)
            );
        }
        md.push('\n');
    }
    md
}
