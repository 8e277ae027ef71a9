//! `causim fuzz`: searches for failing scenarios with proptest strategies and shrinks the first
//! failure to a scenario file that `causim run` replays. See `causim::fuzz` and docs/fuzzing.md.

use causim::fuzz::{self, Faults, FuzzOptions};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `causim fuzz`.
#[derive(Args)]
pub struct Cmd {
    /// The protocol (see `causim protocols`).
    #[arg(long)]
    pub protocol: String,
    /// Switch on a mutant (repeatable): the fuzzer should find its bug.
    #[arg(long = "mutant", value_name = "NAME")]
    pub mutants: Vec<String>,
    /// Stop after this many cases (default 1000 unless --time is given).
    #[arg(long, value_name = "N")]
    pub seeds: Option<u64>,
    /// Stop after this many seconds (with --seeds, whichever comes first).
    #[arg(long, value_name = "SECONDS")]
    pub time: Option<f64>,
    /// The fuzzer's own seed: which cases are generated.
    #[arg(long, default_value_t = 1)]
    pub fuzz_seed: u64,
    /// `safe` (delays, slow links, holding partitions) or `all` (also the dropping partitions,
    /// loss and crashes the protocol claims to survive: see `causim protocols`).
    #[arg(long, default_value = "safe")]
    pub faults: String,
    /// Threads (default: the number of cores). The first failure found does not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Most runs spent shrinking a failure.
    #[arg(long, default_value_t = 2000)]
    pub shrink_runs_max: u32,
    /// Where to write the shrunk scenario, the original and the regression entry.
    #[arg(long, default_value = "out/fuzz")]
    pub out: PathBuf,
    /// Do not draw the progress bar.
    #[arg(long)]
    pub no_progress: bool,
    /// What counts as a failure: `all` (history-check anomalies, the protocol's invariant
    /// checks, panics) or `history` (anomalies and panics only: the protocol's invariant checks
    /// are off, so only what clients observed can convict it) or `liveness` (`all`, and also a
    /// workflow that gives up or is still running when the run ends: every workflow must
    /// complete within the scheduler's attempts, once partitions have healed).
    #[arg(long, default_value = "all")]
    pub oracle: String,
    /// Every session is a chain (no fan-out/fan-in workflows).
    #[arg(long)]
    pub no_fan_out: bool,
    /// Do not fuzz: write case N's scenario (as generated, unshrunk) to the --out folder.
    #[arg(long, value_name = "N")]
    pub write_case: Option<u64>,
}

pub fn run(args: Cmd) -> ExitCode {
    let mutants: Vec<&str> = args.mutants.iter().map(String::as_str).collect();
    let mut options = match FuzzOptions::new(&args.protocol, &mutants) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    options.faults = match Faults::parse(&args.faults) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    (options.invariants, options.liveness) = match args.oracle.as_str() {
        "all" => (true, false),
        "history" => (false, false),
        "liveness" => (true, true),
        other => {
            eprintln!("error: --oracle {other:?}: expected all, history or liveness");
            return ExitCode::from(2);
        }
    };
    options.fuzz_seed = args.fuzz_seed;
    options.fan_out = !args.no_fan_out;
    // Checked before fuzzing, so a failure found is never lost to an unusable folder.
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("error: --out {}: cannot create the folder: {e}", args.out.display());
        return ExitCode::from(2);
    }
    if let Some(i) = args.write_case {
        return match fuzz::write_case(&options, i, &args.out) {
            Ok(path) => {
                println!("wrote case {i} of `{}` to {}", options.command(), path.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        };
    }
    if let Some(t) = args.time
        && !(t.is_finite() && t > 0.0)
    {
        eprintln!("error: --time must be a positive number of seconds, got {t}");
        return ExitCode::from(2);
    }
    if args.seeds == Some(0) {
        eprintln!("error: --seeds must be at least 1");
        return ExitCode::from(2);
    }
    if args.threads == Some(0) {
        eprintln!("error: --threads must be at least 1");
        return ExitCode::from(2);
    }
    options.cases_max = match (args.seeds, args.time) {
        (Some(n), _) => n,
        (None, Some(_)) => u64::MAX,
        (None, None) => 1000,
    };
    options.time_s_max = args.time;
    options.threads = args.threads.unwrap_or_else(crate::sweep_cmd::default_threads);
    options.shrink_iters_max = args.shrink_runs_max;
    options.progress = !args.no_progress;
    let budget = match (args.seeds, args.time) {
        (None, Some(t)) => format!("{t} s"),
        (Some(n), Some(t)) => format!("{n} cases or {t} s"),
        _ => format!("{} cases", options.cases_max),
    };
    println!("{}: budget {budget}, {} threads", options.command(), options.threads);
    let outcome = match fuzz::fuzz(&options) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let Some(f) = &outcome.failure else {
        println!("  no failure in {} cases, {:.1} s ({:.1} cases/s)", outcome.cases, outcome.search_s, outcome.cases_per_s());
        return ExitCode::SUCCESS;
    };
    println!(
        "  FAILURE at case {} ({} cases, {:.2} s, {:.1} cases/s): {}",
        f.index,
        outcome.cases,
        outcome.search_s,
        outcome.cases_per_s(),
        f.original_verdict
    );
    println!("    original: {}", f.original.size());
    println!("    shrunk in {} runs ({:.1} s) to {}: {}", f.shrink_iters, outcome.shrink_s, f.shrunk.size(), f.shrunk_verdict);
    match fuzz::write_failure(&options, f, &args.out) {
        Ok(w) => {
            println!("  wrote {} (and the unshrunk case, {})", w.shrunk.display(), w.original.display());
            println!("  regression entry: cc {} in {}", fuzz::hex(&f.seed), w.regressions.display());
            println!("  replay with: causim run {}", w.shrunk.display());
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    ExitCode::from(1)
}
