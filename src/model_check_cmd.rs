//! `causim model-check`: explore every interleaving of a protocol's code with Stateright.
//!
//! ```text
//! causim model-check causalmesh --servers 2 --keys 2 --clients 2 --ops 2 [--mutant M]
//!     [--chain one_round|two_round] [--script "w(k1)@S0, ...; ..."] [--history-only]
//!     [--tlc] [--serve [ADDR]] [--out DIR] [--threads N] [--max-depth N]
//!     [--simulate [--seed S]] [--symmetry] [--max-states N] [--max-memory MB]
//! ```
//!
//! It prints the states explored, the unique states, the depth and the time, and each
//! property's verdict. A violated property's counterexample is written as a scenario file that
//! `causim run` replays message by message (`replay` section), and the command replays it at
//! once to show what the simulator and the history checker make of it, and draws the replay
//! (`view.html` beside its run files, each step of the counterexample numbered on it). `--tlc`
//! also runs TLC on the TLA+ spec with the same bounds; `--validate-trace DIR` checks a
//! simulator run's trace against the spec instead; `--serve` opens Stateright's Explorer
//! instead of checking.
//!
//! A property's verdict is what the search established: "holds" (or "not found") only when the
//! search explored every state; after an early stop (the first violation, without
//! `--all-properties`, or a budget) the properties not yet violated are "not checked"; after a
//! search bounded by `--max-depth` that left states out, "not violated within N steps"; after
//! random walks (`--simulate`), "not violated in random walks". A bounded search that finds
//! nothing exits 0 (it did what was asked) and says it proves nothing past its bound.
//!
//! Exit codes: 0 every property holds (and TLC agrees), 1 a property is violated (or TLC
//! disagrees), 2 bad arguments or a tool failure, 3 the `--max-states` or `--max-memory` budget
//! ran out before the check finished (no violation among the states explored; the rest is
//! unexplored).

use causim::model_budget::{MemoryWatch, Stoppable};
use causim_models::causalmesh::{CausalMesh, CausalMeshTcc, Chain};
use causim_pipeline::run::{self, RunOptions};
use causim_pipeline::scenario::LoadedScenario;
use causim_specs::causalmesh_model::{self as cm, ActorStep, MeshConfig, MeshModel, MeshModelState};
use causim_specs::causalmesh_replay::{Replay, replay, scenario_name};
use causim_specs::stateright::{Checker, HasDiscoveries, Model, Path as StatePath, UniformChooser};
use causim_specs::{causalmesh_tla, tlc, trace_validation};
use clap::Args;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Arguments of `causim model-check`.
#[derive(Args)]
#[command(after_help = "Scripts: sessions separated by ';', steps by ','; a step is r(k1)@S0, w(k2)@S1 or rt(k1+k2)@S0.\n\
Example: --script \"w(k1)@S0, w(k2)@S0; w(k2)@S0, w(k2)@S1; r(k1)@S0, r(k1)@S1\" --mutant integrate_by_vc_dominance\n\
Exit status: 0 every property holds, 1 a property is violated (or TLC disagrees), 2 bad arguments or a tool failure, \
3 the --max-states or --max-memory budget ran out first (no violation found in the states explored).")]
pub struct Cmd {
    /// The protocol to check (`causalmesh`).
    pub protocol: String,
    /// Cache servers.
    #[arg(long, default_value_t = 2)]
    pub servers: usize,
    /// Keys (k1, k2, ...).
    #[arg(long, default_value_t = 2)]
    pub keys: usize,
    /// Sessions (clients c1, c2, ...), each choosing every operation and its server freely.
    #[arg(long, default_value_t = 2)]
    pub clients: usize,
    /// Operations per session.
    #[arg(long, default_value_t = 2)]
    pub ops: usize,
    /// Switch on a mutant (repeatable).
    #[arg(long = "mutant", value_name = "NAME")]
    pub mutants: Vec<String>,
    /// The propagation chain: one_round (the paper's) or two_round.
    #[arg(long, default_value = "one_round")]
    pub chain: String,
    /// Fixed scripts instead of free choice (see below); sets the number of sessions.
    #[arg(long)]
    pub script: Option<String>,
    /// Check only "reads are causally consistent" (what a history checker sees).
    #[arg(long)]
    pub history_only: bool,
    /// Also run TLC on the TLA+ spec with the same bounds (no symmetry, one worker).
    #[arg(long)]
    pub tlc: bool,
    /// Open Stateright's Explorer (default address localhost:3000) instead of checking.
    #[arg(long, num_args = 0..=1, default_missing_value = "localhost:3000", value_name = "ADDR")]
    pub serve: Option<String>,
    /// Check a simulator run's trace (a `causim run --out` directory with trace.jsonl and
    /// history.jsonl) against the TLA+ spec instead (CausalMesh.tla, or CausalMeshTCC.tla for a
    /// causalmesh_tcc run).
    #[arg(long, value_name = "DIR")]
    pub validate_trace: Option<PathBuf>,
    /// How long TLC may take over `--validate-trace` before it is stopped (seconds).
    #[arg(long, default_value_t = 600, value_name = "S")]
    pub tlc_timeout: u64,
    /// Where counterexample scenarios go. Default out/model-check.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Checker threads (0: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Stop after about this many states (memory grows with them): the outcome is then "budget
    /// exhausted after N states", exit status 3, unless a violation was found first.
    #[arg(long, value_name = "N")]
    pub max_states: Option<usize>,
    /// Stop once the process's resident memory passes this many MB (read every 20 ms from
    /// /proc/self/status; Linux): the outcome is then "budget exhausted after N states", exit
    /// status 3, unless a violation was found first.
    #[arg(long, value_name = "MB")]
    pub max_memory: Option<u64>,
    /// Go on after the first violated property until every property is violated or every
    /// state explored, so each property gets a verdict (the default stops at the first).
    #[arg(long)]
    pub all_properties: bool,
    /// Explore only the first N steps from the start: properties are then judged "within N
    /// steps" (with `--simulate`, each random walk stops after N steps).
    #[arg(long, value_name = "N")]
    pub max_depth: Option<usize>,
    /// Random walks instead of the exhaustive search (Stateright's simulation checker), until
    /// `--max-states` states are visited (default 1000000): finds violations in spaces too
    /// large to exhaust, never shows that a property holds. With `--threads 1` the same
    /// `--seed` takes the same walks.
    #[arg(long)]
    pub simulate: bool,
    /// Seed of the first random walk (`--simulate`).
    #[arg(long, default_value_t = 0, value_name = "S", requires = "simulate")]
    pub seed: u64,
    /// Treat sessions as interchangeable (free choice): each state is explored once up to a
    /// renaming of the sessions and their values. A counterexample is then searched again
    /// without it, to the same depth, so that the simulator can replay it.
    #[arg(long)]
    pub symmetry: bool,
    /// No progress line on stderr (also: environment variable CAUSIM_NO_PROGRESS).
    #[arg(long)]
    pub no_progress: bool,
}

/// The exit status of a check stopped by `--max-states` or `--max-memory`.
const BUDGET_EXHAUSTED: u8 = 3;

/// States a random-walk search visits when `--max-states` does not say.
const SIMULATED_STATES: usize = 1_000_000;

/// How often the progress line is redrawn on a terminal, and printed elsewhere.
const PROGRESS_TTY: Duration = Duration::from_millis(500);
const PROGRESS_LOG: Duration = Duration::from_secs(10);

pub fn run(args: Cmd) -> ExitCode {
    match run_inner(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn config(args: &Cmd) -> Result<MeshConfig, String> {
    // Only CausalMesh has a Stateright model and a TLA+ spec so far.
    let checkable = <CausalMesh as causim_models::Model>::ENTRY.name;
    if args.protocol != checkable {
        return Err(format!("model-check knows protocol {checkable}, not {:?}", args.protocol));
    }
    let chain = match args.chain.as_str() {
        "one_round" => Chain::OneRound,
        "two_round" => Chain::TwoRound,
        other => return Err(format!("--chain is one_round or two_round, not {other:?}")),
    };
    let mut cfg = match &args.script {
        Some(text) => MeshConfig::scripted(args.servers, args.keys, cm::parse_scripts(text)?, chain),
        None => MeshConfig::free(args.servers, args.keys, args.clients, args.ops, chain),
    };
    for m in &args.mutants {
        cfg = cfg.mutant(m);
    }
    if args.history_only {
        cfg = cfg.history_only();
    }
    if args.symmetry {
        if args.script.is_some() {
            return Err("--symmetry needs free choice: a script names its sessions".into());
        }
        if args.simulate {
            return Err("--symmetry is for the exhaustive search, not --simulate: a random walk has no states to merge".into());
        }
        cfg = cfg.symmetric();
    }
    if args.max_depth == Some(0) {
        return Err("--max-depth must be at least 1 (steps)".into());
    }
    Ok(cfg)
}

fn run_inner(args: Cmd) -> Result<ExitCode, String> {
    if let Some(dir) = &args.validate_trace {
        return validate_trace(dir, args.tlc_timeout);
    }
    let cfg = config(&args)?;
    if args.max_states == Some(0) {
        return Err("--max-states must be at least 1".into());
    }
    if args.max_memory == Some(0) {
        return Err("--max-memory must be at least 1 (MB)".into());
    }
    let max_memory_bytes = match args.max_memory {
        Some(mb) => Some(mb.checked_mul(1 << 20).ok_or_else(|| format!("--max-memory {mb}: more MB than this machine can address"))?),
        None => None,
    };
    let dir = args.out.clone().unwrap_or_else(|| PathBuf::from("out/model-check"));
    // Before checking (which may take long): a counterexample must have somewhere to go.
    if std::fs::symlink_metadata(&dir).is_ok_and(|m| !m.is_dir()) {
        return Err(format!("--out {}: exists and is not a folder", dir.display()));
    }
    let model = cfg.clone().into_model()?;
    if args.tlc {
        // Before any checking: can the spec express this variant?
        causalmesh_tla::variant(&cfg.mutants)?;
    }
    let threads = if args.threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { args.threads };
    let bounds = match &cfg.scripts {
        Some(s) => format!("{} servers, {} keys, scripts {:?}", cfg.servers, cfg.keys, cm::format_scripts(s)),
        None => format!("{} servers, {} keys, {} clients × {} ops (free choice)", cfg.servers, cfg.keys, cfg.clients, cfg.ops),
    };
    let mutants = if cfg.mutants.is_empty() { "none".to_string() } else { cfg.mutants.join(", ") };
    println!("causim model-check causalmesh: {bounds}, {} chain, mutants: {mutants}", args.chain);
    if let Some(addr) = &args.serve {
        // tiny_http panics on a busy port: find out first.
        std::net::TcpListener::bind(addr.as_str()).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        println!("Stateright Explorer: http://{addr}/ (Ctrl-C to stop)");
        model.checker().threads(threads).serve(addr.as_str());
        return Ok(ExitCode::SUCCESS);
    }
    let progress = !args.no_progress && std::env::var_os("CAUSIM_NO_PROGRESS").is_none();
    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let watch = max_memory_bytes.map(|bytes| MemoryWatch::start(bytes, Arc::clone(&stop))).transpose()?;
    // Breadth first (or random walks with --simulate) on the model that keeps each property's
    // first counterexample (breadth first on one thread: a shortest one), stopped at the first
    // violation unless --all-properties.
    let max_states = if args.simulate { Some(args.max_states.unwrap_or(SIMULATED_STATES)) } else { args.max_states };
    let plan = Plan { walks: args.simulate.then_some(args.seed), until_first: !args.all_properties, max_depth: args.max_depth, max_states };
    let (mut found, memory_exhausted) = plan.search(model.first_only(), threads, stop, watch, progress)?;
    let secs = started.elapsed().as_secs_f64();
    let rate = |n: usize| n as f64 / secs.max(1e-9);
    match found.unique {
        Some(unique) => println!(
            "  stateright      {} states, {unique} unique, depth {}, {secs:.2} s ({:.0} states/s, {:.0} unique/s, {threads} threads)",
            found.states,
            found.depth,
            rate(found.states),
            rate(unique),
        ),
        None => println!(
            "  stateright      random walks from seed {}: {} states visited, longest walk depth {}, {secs:.2} s ({:.0} states/s, {threads} threads)",
            args.seed,
            found.states,
            found.depth,
            rate(found.states),
        ),
    }
    let violated = found.violated();
    let states_exhausted = !args.simulate && args.max_states.is_some_and(|n| found.states >= n);
    let budget_exhausted = states_exhausted || memory_exhausted.is_some();
    // Why the search may have left states unexplored (None: it explored them all), and what a
    // property not violated has then been shown to do.
    let stopped_early = if budget_exhausted {
        Some("budget exhausted")
    } else if !violated.is_empty() && !args.all_properties {
        Some("the search stopped at the first violation; --all-properties goes on")
    } else {
        None
    };
    let bounded = match (args.simulate, args.max_depth) {
        (true, _) => Some("in random walks".to_string()),
        (false, Some(n)) if found.cut => Some(format!("within {n} steps")),
        _ => None,
    };
    for (name, must_hold) in &found.properties {
        let steps = found.discoveries.get(name).map(|path| path.clone().into_actions().len());
        let verdict = match (*must_hold, steps, stopped_early, &bounded) {
            (true, Some(n), _, _) => format!("VIOLATED ({n} steps)"),
            (false, Some(n), _, _) => format!("found ({n} steps)"),
            (_, None, Some(why), _) => format!("not checked ({why})"),
            (true, None, None, Some(within)) => format!("not violated {within}"),
            (false, None, None, Some(within)) => format!("not found {within}"),
            (true, None, None, None) => "holds".to_string(),
            (false, None, None, None) => "not found".to_string(),
        };
        let kind = if *must_hold { "always" } else { "sometimes" };
        println!("  {kind:<9} {:<34} {verdict}", format!("\"{name}\""));
    }
    let mut code = if violated.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) };
    if violated.is_empty() && budget_exhausted {
        let which = match memory_exhausted {
            Some(rss) => format!("--max-memory {} MB: resident memory reached {} MB", args.max_memory.unwrap_or_default(), rss >> 20),
            None => format!("--max-states {}", args.max_states.unwrap_or_default()),
        };
        println!("  budget exhausted after {} states ({which}): no violation among them; the check is incomplete", found.states);
        code = ExitCode::from(BUDGET_EXHAUSTED);
    }
    if let (Some(within), true) = (&bounded, violated.is_empty()) {
        println!("  no violation {within}: a bounded search, not a proof that the properties hold");
    }
    if args.symmetry
        && let Some(property) = found.shortest_violation()
    {
        // The symmetric model's states are representatives, renamed from step to step, which
        // the simulator cannot replay: find a counterexample as long in the plain model.
        let steps = found.discoveries[property].clone().into_actions().len();
        println!("  searching again without symmetry, within {steps} steps, for a counterexample the simulator can replay");
        let mut plain = cfg.clone();
        plain.symmetry = false;
        let plain = plain.into_model()?.first_only();
        let again = Plan { walks: None, until_first: true, max_depth: Some(steps), max_states: None };
        let (plain_found, _) = again.search(plain, threads, Arc::new(AtomicBool::new(false)), None, progress)?;
        if plain_found.shortest_violation().is_none() {
            return Err(format!(
                "symmetry reduction found \"{property}\" in {steps} steps, but the plain model has no violation within them"
            ));
        }
        found.discoveries = plain_found.discoveries;
    }
    // The shortest counterexample (the first property of equal lengths) is the one shown.
    if let Some(property) = found.shortest_violation() {
        let path = found.discoveries[property].clone();
        let name = scenario_name(&cfg);
        let r = replay(&cfg, &name, property, path);
        println!("\ncounterexample to \"{property}\":");
        for (i, step) in r.steps.iter().enumerate() {
            println!("  {:>3}. {step}", i + 1);
        }
        if !r.anomalies.is_empty() {
            println!("  the history checker names it: {}", r.anomalies.join(", "));
        }
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let file = dir.join(format!("{name}.json"));
        let text = serde_json::to_string_pretty(&r.scenario).expect("JSON") + "\n";
        causim_pipeline::out_file::write(&file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        println!("  wrote {}", file.display());
        let run_dir = dir.join(&name);
        replay_in_simulator(&file, &run_dir)?;
        write_counterexample(&run_dir, property, &r, &file)?;
        let page = causim::view::write(&run_dir, None, None).map_err(|e| e.to_string())?;
        println!("  see it: {} (the replay as a space-time diagram, its steps numbered)", page.display());
    }
    if args.tlc {
        let mut options = tlc::TlcOptions::with_workers(1);
        options.timeout = Some(std::time::Duration::from_secs(3600));
        let run = causalmesh_tla::run(&cfg, false, &options)?;
        let verdict = match run.violated_invariant() {
            Some(inv) => format!(
                "{inv} violated (\"{}\", {} steps)",
                causalmesh_tla::english_name(inv).unwrap_or("?"),
                run.trace.len().saturating_sub(1)
            ),
            None if run.verdict == tlc::Verdict::Ok => "every invariant holds".to_string(),
            None => format!("{:?}", run.verdict),
        };
        let secs = run.wall_time.as_secs_f64();
        println!(
            "  tlc             {verdict}: {} generated, {} distinct, depth {}, {:.1} s ({:.0} distinct/s)",
            run.states_generated,
            run.distinct_states,
            run.depth.unwrap_or(0),
            secs,
            run.distinct_states as f64 / secs.max(1e-9)
        );
        let tlc_fails = run.verdict != tlc::Verdict::Ok;
        let partial = budget_exhausted || bounded.is_some();
        if partial && violated.is_empty() {
            // TLC explored every state; this search did not, so only a violation compares.
            println!("  not compared: the Stateright search was bounded and found no violation");
            if tlc_fails {
                code = ExitCode::from(1);
            }
        } else if tlc_fails == violated.is_empty() {
            println!("  DISAGREEMENT: Stateright and TLC give different verdicts");
            code = ExitCode::from(1);
        } else {
            println!("  agreement: Stateright and TLC both {}", if tlc_fails { "find a violation" } else { "pass" });
        }
    }
    Ok(code)
}

/// How a search runs: breadth first over every state, or random walks; and where it stops.
struct Plan {
    /// Random walks from this seed (None: breadth first).
    walks: Option<u64>,
    /// Stop at the first violated property.
    until_first: bool,
    /// Steps from the start past which nothing is explored.
    max_depth: Option<usize>,
    /// States after which the search stops.
    max_states: Option<usize>,
}

/// What a search found, whichever way it ran.
struct Found {
    states: usize,
    /// Distinct states (random walks do not keep them).
    unique: Option<usize>,
    /// The deepest state explored, the initial state being depth 1 (as TLC counts).
    depth: usize,
    /// Whether `max_depth` left states unexplored.
    cut: bool,
    /// Each property's name, and whether finding it is a violation (not a witness).
    properties: Vec<(&'static str, bool)>,
    discoveries: HashMap<&'static str, StatePath<MeshModelState, ActorStep>>,
}

impl Plan {
    /// Runs the search; `watch` (raising `stop`) bounds its memory. Also returns the resident
    /// size at which the memory budget ran out, if it did.
    fn search(
        &self,
        model: MeshModel,
        threads: usize,
        stop: Arc<AtomicBool>,
        watch: Option<MemoryWatch>,
        progress: bool,
    ) -> Result<(Found, Option<u64>), String> {
        // Once the search has ended, the model is reopened: a stopped model has no actions, and
        // the paths to discoveries made before the stop are rebuilt by taking actions again.
        let reopen = |stop: &AtomicBool, watch: Option<MemoryWatch>| {
            let exhausted = watch.and_then(MemoryWatch::finish);
            stop.store(false, Ordering::Relaxed);
            exhausted
        };
        let mut builder = Stoppable::new(model, Arc::clone(&stop))?.checker().threads(threads.max(1));
        if self.until_first {
            builder = builder.finish_when(HasDiscoveries::AnyFailures);
        }
        if let Some(n) = self.max_states {
            builder = builder.target_state_count(n);
        }
        // Stateright's depth targets differ by search: breadth first skips states whose path
        // holds the target's number of states (n steps: n + 2); a walk stops once it has taken
        // more steps than the target (n + 1), and reports the steps it took as its depth.
        let depth_limit = self.max_depth;
        Ok(match self.walks {
            None => {
                if let Some(n) = depth_limit {
                    builder = builder.target_max_depth(n + 2);
                }
                let checker = wait(builder.spawn_bfs(), progress);
                let exhausted = reopen(&stop, watch);
                let depth = checker.max_depth();
                let limit = depth_limit.map_or(usize::MAX, |n| n + 1);
                (Found::of(&checker, Some(checker.unique_state_count()), depth.min(limit), depth > limit), exhausted)
            }
            Some(seed) => {
                if let Some(n) = depth_limit {
                    builder = builder.target_max_depth(n + 1);
                }
                let checker = wait(builder.spawn_simulation(seed, UniformChooser), progress);
                let exhausted = reopen(&stop, watch);
                let steps = checker.max_depth().min(depth_limit.unwrap_or(usize::MAX));
                (Found::of(&checker, None, steps + 1, depth_limit.is_some_and(|n| checker.max_depth() > n)), exhausted)
            }
        })
    }
}

impl Found {
    fn of(checker: &impl Checker<Stoppable<MeshModel>>, unique: Option<usize>, depth: usize, cut: bool) -> Found {
        let properties = checker.model().properties().iter().map(|p| (p.name, p.expectation.discovery_is_failure())).collect();
        Found { states: checker.state_count(), unique, depth, cut, properties, discoveries: checker.discoveries() }
    }

    /// The properties violated, in declaration order.
    fn violated(&self) -> Vec<&'static str> {
        self.properties.iter().filter(|(name, failure)| *failure && self.discoveries.contains_key(name)).map(|(name, _)| *name).collect()
    }

    /// The violated property with the shortest counterexample (the first of equal lengths).
    fn shortest_violation(&self) -> Option<&'static str> {
        self.violated().into_iter().min_by_key(|p| self.discoveries[p].clone().into_actions().len())
    }
}

/// Waits for a running check, with a progress line on stderr: redrawn on a terminal, printed
/// every few seconds elsewhere (logs stay short).
fn wait<M: Model, C: Checker<M>>(checker: C, progress: bool) -> C {
    let started = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let every = if tty { PROGRESS_TTY } else { PROGRESS_LOG };
    let (mut shown, mut drawn) = (Instant::now(), false);
    while !checker.is_done() {
        std::thread::sleep(Duration::from_millis(20));
        if progress && shown.elapsed() >= every {
            shown = Instant::now();
            let line = format!(
                "stateright: {} states, {} unique, depth {}, {:.0} s",
                checker.state_count(),
                checker.unique_state_count(),
                checker.max_depth(),
                started.elapsed().as_secs_f64()
            );
            if tty {
                eprint!("\r{line}\x1b[K");
                drawn = true;
            } else {
                eprintln!("{line}");
            }
        }
    }
    if drawn {
        eprint!("\r\x1b[K");
    }
    checker.join()
}

/// Replays a written counterexample with `causim run`'s machinery and reports the verdict.
fn replay_in_simulator(file: &Path, out: &Path) -> Result<(), String> {
    let loaded = LoadedScenario::from_file(file).map_err(|e| e.to_string())?;
    let options = RunOptions { out_dir: Some(out.to_path_buf()), trace: true, ..Default::default() };
    let report = run::run(&loaded, &options).map_err(|e| e.to_string())?;
    let s = &report.summary;
    println!("  replayed in the simulator ({}): {} history records", s.stopped_by, s.history_records);
    if let Some(v) = &s.invariant_violation {
        println!("    invariant check: {v}");
    }
    match &report.check {
        Some(c) if !c.ok => println!("    history checker (ccv): {}", report.anomalies().join(", ")),
        Some(_) => println!("    history checker (ccv): no anomaly"),
        None => {}
    }
    if let Some(expect) = &loaded.scenario.expect {
        // The written `expect` is what `causim run` will hold the scenario to: say if it fails.
        for wrong in expect.mismatches(&report) {
            println!("    the replay does not meet the scenario's expect: {wrong}");
        }
    }
    println!("  replay it with: causim run {}", file.display());
    Ok(())
}

/// `counterexample.json` beside the replay's run files: the property and the steps in words,
/// each delivery tied to its place in the scenario's replay schedule, for `causim view`.
fn write_counterexample(run_dir: &Path, property: &str, r: &Replay, scenario: &Path) -> Result<(), String> {
    let steps: Vec<serde_json::Value> = r
        .steps
        .iter()
        .enumerate()
        .map(|(i, text)| match r.delivery_steps.iter().position(|&s| s == i) {
            Some(d) => serde_json::json!({"step": text, "delivery": d}),
            None => serde_json::json!({"step": text}),
        })
        .collect();
    let value = serde_json::json!({
        "format": "causim-counterexample/1",
        "property": property,
        "scenario": scenario.display().to_string(),
        "steps": steps,
    });
    let path = run_dir.join("counterexample.json");
    causim_pipeline::out_file::write(&path, serde_json::to_string_pretty(&value).expect("JSON") + "\n")
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `--validate-trace DIR`: the simulator run's trace as a TLA+ behaviour, checked by TLC.
fn validate_trace(dir: &Path, timeout_s: u64) -> Result<ExitCode, String> {
    let read = |name: &str| {
        let p = dir.join(name);
        std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let (trace, history, summary) = (read("trace.jsonl")?, read("history.jsonl")?, read("summary.json")?);
    let mut options = tlc::TlcOptions::with_workers(1);
    options.timeout = Some(std::time::Duration::from_secs(timeout_s));
    // CausalMesh-TCC and FaaSTCC runs are checked against their own specs.
    let protocol = causim_specs::trace_validation_tcc::scenario_of_summary(&summary)?.protocol.name;
    let (steps, rejected_at, why, spec) = if protocol == <CausalMeshTcc as causim_models::Model>::ENTRY.name {
        let o = causim_specs::trace_validation_tcc::validate(&trace, &summary, &options)?;
        (o.steps, o.rejected_at, o.why, "CausalMeshTCC.tla")
    } else if protocol == <causim_models::faastcc::Faastcc as causim_models::Model>::ENTRY.name {
        let o = causim_specs::trace_validation_faastcc::validate(&trace, &history, &summary, &options)?;
        (o.steps, o.rejected_at, o.why, "FaaSTCC.tla")
    } else {
        let o = trace_validation::validate(&trace, &history, &summary, &options)?;
        (o.steps, o.rejected_at, o.why, "CausalMesh.tla")
    };
    println!("trace validation of {}: {} steps", dir.display(), steps.len());
    match &rejected_at {
        None => {
            println!("  TLC accepts the whole trace as a behaviour of {spec} ({} states)", steps.len() + 1);
            Ok(ExitCode::SUCCESS)
        }
        Some(i) => {
            println!("  TLC rejects step {} of {}: {}", i + 1, steps.len(), steps[*i]);
            if let Some(why) = &why {
                println!("  {why}");
            }
            Ok(ExitCode::from(1))
        }
    }
}
