//! `causim sweep`: runs a sweep file (see `causim::sweep` for the format), and `causim sweep
//! merge` joins shard outputs.

use causim::sweep::{self, SweepOptions, SweepPlan};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `causim sweep`.
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Cmd {
    #[command(subcommand)]
    pub merge: Option<MergeCmd>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Args)]
pub struct RunArgs {
    /// The sweep file (JSON, `causim-sweep/1`; examples in scenarios/sweeps/).
    #[arg(required = true)]
    pub sweep: Option<PathBuf>,
    /// Threads (default: the number of cores). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Output directory. Default: out/sweeps/<name> (a shard: out/sweeps/<name>/shard-<i>-of-<n>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run only shard I of N (jobs whose index is I mod N), for batch systems; join with `causim sweep merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Use the sweep's `quick` section (fewer seeds and points).
    #[arg(long)]
    pub quick: bool,
    /// Do every run again instead of skipping those the output's journal already holds.
    #[arg(long)]
    pub fresh: bool,
    /// Do not draw the progress bar.
    #[arg(long)]
    pub no_progress: bool,
}

#[derive(Subcommand)]
pub enum MergeCmd {
    /// Join the outputs of `--shard` runs (directories or runs.jsonl files) into one result.
    Merge {
        /// Shard output directories (or their runs.jsonl).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Where to write the joined runs.csv, aggregate.csv, results.json and runs.jsonl.
        #[arg(long)]
        out: PathBuf,
        /// Merge even when shards are missing or unfinished (what is missing is printed).
        #[arg(long)]
        allow_partial: bool,
    },
}

pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (i, n) = s.split_once('/').ok_or_else(|| format!("--shard {s:?}: expected I/N, such as 0/4"))?;
    let i: usize = i.trim().parse().map_err(|_| format!("--shard {s:?}: I is not a number"))?;
    let n: usize = n.trim().parse().map_err(|_| format!("--shard {s:?}: N is not a number"))?;
    if n == 0 || i >= n {
        return Err(format!("--shard {s:?}: need 0 ≤ I < N"));
    }
    Ok((i, n))
}

pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Arguments of `causim merge` (the same as `causim sweep merge`).
#[derive(Args)]
pub struct MergeArgs {
    /// Shard output directories (or their runs.jsonl).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Where to write the joined runs.csv, aggregate.csv, results.json and runs.jsonl.
    #[arg(long)]
    pub out: PathBuf,
    /// Merge even when shards are missing or unfinished (what is missing is printed).
    #[arg(long)]
    pub allow_partial: bool,
}

pub fn merge(args: MergeArgs) -> ExitCode {
    merge_shards(&args.inputs, &args.out, args.allow_partial)
}

fn merge_shards(inputs: &[PathBuf], out: &std::path::Path, allow_partial: bool) -> ExitCode {
    match sweep::merge(inputs, out, allow_partial) {
        Ok((rows, missing)) => {
            for m in &missing {
                eprintln!("warning: partial merge: {m}");
            }
            println!("merged {} runs from {} inputs into {}", rows.len(), inputs.len(), out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

pub fn run(cmd: Cmd) -> ExitCode {
    if let Some(MergeCmd::Merge { inputs, out, allow_partial }) = cmd.merge {
        return merge_shards(&inputs, &out, allow_partial);
    }
    let args = cmd.run;
    let path = args.sweep.expect("clap requires it");
    let plan = match SweepPlan::from_file(&path, args.quick) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let shard = match args.shard.as_deref().map(parse_shard).transpose() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let out_dir = args.out.unwrap_or_else(|| {
        let base = PathBuf::from("out").join("sweeps").join(&plan.spec.name);
        match shard {
            Some((i, n)) => base.join(format!("shard-{i}-of-{n}")),
            None => base,
        }
    });
    let threads = args.threads.unwrap_or_else(default_threads);
    println!(
        "causim sweep {}: {} points × {} seeds = {} runs{}, {threads} threads, output {}",
        path.display(),
        plan.points.len(),
        plan.seeds.len(),
        plan.points.len() * plan.seeds.len(),
        shard.map_or(String::new(), |(i, n)| format!(" (shard {i}/{n})")),
        out_dir.display()
    );
    let options = SweepOptions { threads, out_dir: out_dir.clone(), shard, fresh: args.fresh, progress: !args.no_progress };
    match sweep::run_sweep(&plan, &options) {
        Ok(o) => {
            let failed = o.rows.iter().filter(|r| !r.passed).count();
            println!(
                "  ran {} runs, skipped {} already done, in {:.1} s ({:.1} runs/s); {} runs show anomalies or invariant violations",
                o.ran,
                o.skipped,
                o.wall_s,
                o.ran as f64 / o.wall_s.max(1e-9),
                failed
            );
            for f in ["runs.csv", "aggregate.csv", "results.json", sweep::JOURNAL] {
                println!("  wrote {}", out_dir.join(f).display());
            }
            let errors: Vec<&sweep::Row> = o.rows.iter().filter(|r| r.error.is_some()).collect();
            for r in &errors {
                let scenario = out_dir.join("scenarios").join(format!("point-{}.json", r.point));
                eprintln!(
                    "error: point {} seed {}: {}; replay with: causim run {} --seed {}",
                    r.point,
                    r.seed,
                    r.error.as_deref().unwrap_or_default(),
                    scenario.display(),
                    r.seed
                );
            }
            if errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
