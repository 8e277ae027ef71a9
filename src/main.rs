//! `causim`: the command-line front end. A thin layer: it reads scenario files, builds a
//! simulation from `causim-sim` and `causim-models`, runs it, checks histories with
//! `causim-checkers`, and prints or writes the results.

mod check_cmd;
mod fuzz_cmd;
mod model_check_cmd;
mod plot_cmd;
mod reproduce_cmd;
mod sweep_cmd;
mod view_cmd;

use causim::report;
use causim_models::PROTOCOLS;
use causim_pipeline::run::{self as pipeline, RunOptions};
use causim_pipeline::scenario::{LoadedScenario, Verdict};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The scenario `causim run` uses when given none: the teaching protocol under load.
const DEFAULT_SCENARIO_PATH: &str = "scenarios/register/default.json";
const DEFAULT_SCENARIO: &str = include_str!("../scenarios/register/default.json");

#[derive(Parser)]
#[command(
    name = "causim",
    version,
    about = "Deterministic discrete-event simulator and consistency checker for serverless cache protocols"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario: write its history, trace and summary, and print a summary table.
    Run(RunArgs),
    /// Check a history for consistency anomalies.
    Check(check_cmd::CheckArgs),
    /// Run a scenario over a grid of parameters and seeds, in parallel.
    Sweep(sweep_cmd::Cmd),
    /// Join the outputs of `causim sweep --shard` runs (same as `causim sweep merge`).
    Merge(sweep_cmd::MergeArgs),
    /// Draw a paper-style figure from sweep results.
    Plot(plot_cmd::Cmd),
    /// Search for failing scenarios with random workloads, schedules and faults.
    Fuzz(fuzz_cmd::Cmd),
    /// Regenerate the papers' figures (sweeps, plots and a report).
    Reproduce(reproduce_cmd::Cmd),
    /// Model-check a protocol's code exhaustively with Stateright.
    ModelCheck(model_check_cmd::Cmd),
    /// List the protocols and their mutants.
    Protocols,
    /// Draw a run as a space-time diagram in one HTML page, with the anomalies' witnesses on it.
    View(view_cmd::Cmd),
}

#[derive(Args)]
struct RunArgs {
    /// Scenario file (JSON). Default: the built-in teaching scenario (scenarios/register/default.json).
    scenario: Option<PathBuf>,
    /// Seed for every random choice (overrides the scenario's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Output directory for history.jsonl, trace.jsonl and summary.json. Default: out/<scenario name>.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Do not record the trace.
    #[arg(long)]
    no_trace: bool,
    /// Also run the scenario twice more and compare history and trace hashes.
    #[arg(long)]
    check_determinism: bool,
    /// Print a step-by-step account of the run (automatic for short scripted runs).
    #[arg(long)]
    account: bool,
    /// Switch on a mutant (a named bug) besides the scenario's; repeatable. The scenario's
    /// `expect` is not enforced then, since it describes the scenario as written.
    #[arg(long = "mutant", value_name = "NAME")]
    mutants: Vec<String>,
    /// Also write view.html: the run as a space-time diagram (see `causim view`).
    #[arg(long)]
    view: bool,
}

fn main() -> ExitCode {
    install_panic_hook();
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => run(args),
        Command::Check(args) => check_cmd::run(args),
        Command::Sweep(args) => sweep_cmd::run(args),
        Command::Merge(args) => sweep_cmd::merge(args),
        Command::Plot(args) => plot_cmd::run(args),
        Command::Fuzz(args) => fuzz_cmd::run(args),
        Command::Reproduce(args) => reproduce_cmd::run(args),
        Command::ModelCheck(args) => model_check_cmd::run(args),
        Command::View(args) => view_cmd::run(args),
        Command::Protocols => {
            print_protocols();
            ExitCode::SUCCESS
        }
    }
}

/// A panic is a bug in causim; when it happens inside a run, say which run and how to replay it,
/// so the report that follows can be reproduced.
fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // `causim run … | head` closes the pipe (and `2>&1 | head` stderr's, which the progress
        // line writes to): print! and eprint! panic with this message. End quietly, as a program
        // killed by SIGPIPE does (status 128 + 13), rather than report a bug.
        let message = info.payload().downcast_ref::<String>().map(String::as_str).unwrap_or_default();
        if message.starts_with("failed printing to std") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
        if let Some(run) = pipeline::run_in_progress() {
            eprintln!(
                "causim: this is a bug in causim, not in the scenario. It happened while running {} with seed {}; \
                 replay it with:\n  {}",
                run.scenario.display(),
                run.seed,
                run.replay_command()
            );
        }
    }));
}

fn print_protocols() {
    let mut text = String::new();
    for e in PROTOCOLS {
        text += &format!("{}: {}\n  histories must pass: {}\n", e.name, e.about, e.level.name());
        if e.mutants.is_empty() {
            text += "  (no mutants)\n";
        }
        for m in e.mutants {
            text += &format!("  mutant {}: {}\n", m.name, m.about);
        }
        for fault in causim_models::Fault::ALL {
            text += &match e.faults.support(fault) {
                causim_models::Support::Survives(why) if fault == causim_models::Fault::Crash && e.faults.crashes_max < usize::MAX => {
                    format!("  {}: survived, at most {} per run ({why})\n", fault.key(), e.faults.crashes_max)
                }
                causim_models::Support::Survives(why) => format!("  {}: survived ({why})\n", fault.key()),
                causim_models::Support::Outside(why) => format!("  {}: refused ({why})\n", fault.key()),
            };
        }
    }
    print!("{text}");
}

fn run(args: RunArgs) -> ExitCode {
    let loaded = match &args.scenario {
        Some(path) => LoadedScenario::from_file(path),
        None => LoadedScenario::from_text(Path::new(DEFAULT_SCENARIO_PATH), DEFAULT_SCENARIO.to_string()),
    };
    let loaded = match loaded {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    for w in &loaded.warnings {
        eprintln!("warning: {}: {w}", loaded.path.display());
    }
    let s = &loaded.scenario;
    let seed = args.seed.unwrap_or(s.seed);
    let out_dir = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join(&s.name));
    println!("causim run {}  seed={seed}", loaded.path.display());
    println!("  {:<16}{} {}", "protocol", s.protocol.name, compact(&s.protocol.params));
    println!("  {:<16}{}", "mutants", if s.protocol.mutants.is_empty() { "none".to_string() } else { s.protocol.mutants.join(", ") });
    println!("  {:<16}{}", "topology", compact(&serde_json::to_value(&s.topology).expect("serializes")));
    println!("  {:<16}{}", "scheduler", compact(&serde_json::to_value(&s.scheduler).expect("serializes")));
    println!("  {:<16}{}", "faults", compact(&serde_json::to_value(&s.faults).expect("serializes")));
    println!("  {:<16}{}", "limits", compact(&serde_json::to_value(&s.limits).expect("serializes")));
    if !args.mutants.is_empty() {
        println!("  {:<16}{} (from --mutant)", "extra mutants", args.mutants.join(", "));
    }
    let options = RunOptions {
        seed: Some(seed),
        out_dir: Some(out_dir),
        trace: !args.no_trace,
        extra_mutants: args.mutants.clone(),
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let report = match pipeline::run(&loaded, &options) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let wall = started.elapsed().as_secs_f64();
    print!("{}", report::render(&report.summary));
    println!("  {:<16}{:.3} s ({:.2} M events/s)", "wall time", wall, report.summary.events as f64 / wall.max(1e-9) / 1e6);
    if let Some(files) = &report.files {
        println!("  {:<16}{}", "wrote", files.history.display());
        if let Some(t) = &files.trace {
            println!("  {:<16}{}", "wrote", t.display());
        }
        println!("  {:<16}{}", "wrote", files.summary.display());
        if args.view && !view_cmd::after_run(files.summary.parent().unwrap_or(Path::new("."))) {
            return ExitCode::from(2);
        }
    }
    if let Some(files) = &report.files
        && let Some(trace_path) = &files.trace
    {
        // Only a short trace is read to decide (a long run's trace can be many times its
        // scenario; reading it whole just to count its lines was most of a run's memory).
        let is_script = matches!(s.workload, causim_sim::workload::WorkloadConfig::Script(_));
        let short_script = is_script && lines_at_most(trace_path, ACCOUNT_LINES_MAX);
        if args.account || short_script {
            let trace = std::fs::read_to_string(trace_path).unwrap_or_default();
            let history = std::fs::read_to_string(&files.history).unwrap_or_default();
            println!("\nstep by step:");
            print!("{}", causim::account::render(&trace, &history));
            println!();
        }
    }
    if let Some(check) = &report.check {
        print!("{}", report::render_check(check));
    }
    let mut ok = true;
    if args.check_determinism {
        match pipeline::check_determinism(&loaded, Some(seed), &args.mutants) {
            Ok(check) if check.holds() => {
                println!(
                    "  {:<16}ok: two more runs gave history {} and trace {}",
                    "determinism",
                    check.first.0,
                    check.first.1.as_deref().unwrap_or("-")
                );
            }
            Ok(check) => {
                println!("  {:<16}FAILED: {:?} vs {:?}", "determinism", check.first, check.second);
                ok = false;
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let passed = report.passed();
    let verdict = if passed { "pass" } else { "fail" };
    match (&s.expect, args.mutants.is_empty()) {
        (Some(expect), true) => {
            let wrong = expect.mismatches(&report);
            if wrong.is_empty() {
                let live = match expect.liveness {
                    Some(Verdict::Pass) => ", live",
                    Some(Verdict::Fail) => ", not live",
                    None => "",
                };
                println!("  {:<16}as expected ({verdict}{live})", "verdict");
                if let Some(property) = &expect.property {
                    println!("  {:<16}a model-check counterexample to \"{property}\"", "");
                }
                let unfinished = report.summary.liveness.unfinished_workflows;
                if expect.liveness.is_none() && unfinished > 0 {
                    println!("  {:<16}but not live: {unfinished} workflows unfinished (`expect` does not enforce liveness)", "");
                }
            } else {
                println!("  {:<16}UNEXPECTED: {}", "verdict", wrong[0]);
                for w in &wrong[1..] {
                    println!("  {:<16}{w}", "");
                }
                ok = false;
            }
        }
        (Some(_), false) => println!("  {:<16}{verdict} (expectation not enforced with --mutant)", "verdict"),
        // Without an expectation, a run that stopped with workflows unfinished (a limit, a
        // partition that never heals) is not a pass: its safety verdict covers part of a run.
        (None, _) if report.summary.liveness.unfinished_workflows > 0 => {
            let n = report.summary.liveness.unfinished_workflows;
            println!("  {:<16}{verdict}, but NOT LIVE: {n} workflows unfinished (stopped by {})", "verdict", report.summary.stopped_by);
            ok = false;
        }
        (None, _) => {
            println!("  {:<16}{verdict}", "verdict");
            ok &= passed;
        }
    }
    if !ok {
        let mutants: String = args.mutants.iter().map(|m| format!(" --mutant {m}")).collect();
        println!("reproduce with: causim run {} --seed {seed}{mutants}", loaded.path.display());
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// A scripted run with a trace of at most this many lines prints its step-by-step account.
const ACCOUNT_LINES_MAX: usize = 400;

/// Whether the file at `path` has at most `max` lines, reading no further than line `max + 1`.
fn lines_at_most(path: &Path, max: usize) -> bool {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(path) else { return false };
    std::io::BufReader::new(file).split(b'\n').take(max + 1).count() <= max
}

fn compact(v: &serde_json::Value) -> String {
    serde_json::to_string(v).expect("serializes")
}
