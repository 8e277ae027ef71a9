//! Model-checking benchmark: Stateright on the `models/` CausalMesh code against TLC on the
//! TLA+ spec, on the same bounds (the correct protocol, so both explore their whole space).
//!
//! Run: `cargo bench -p causim-specs --bench model_check` for the three shared bounds;
//! `-- --quick` for the smallest only; `-- --beyond` adds 3 servers, 2 keys, 2 clients × 2 ops
//! with the two-round chain, which TLC without symmetry does not finish within its 600 s
//! timeout. For each bound it prints, per checker: threads (TLC: workers), symmetry, states
//! generated (Stateright: states visited, duplicates included; TLC: states generated), unique
//! / distinct states, the depth, the wall time and the rates. Stateright runs on one thread
//! without symmetry, then with symmetry over sessions on one thread and on every core; TLC on
//! one worker, without symmetry and with `SYMMETRY` over clients and keys (its CI configs'
//! setting). TLC's time is the whole `java` process, JVM start included. Steps are the same size on both sides (a whole client
//! operation, or one message between servers; see `specs/README.md`, "State counts"), so the
//! depths agree and the counts differ only by what the Rust nodes keep beyond the spec.
//!
//! To time one run per process (for `/usr/bin/time -v`): `-- --bound N` (1–3 the shared bounds,
//! 4 the beyond one) with `--stateright` (symmetry on every core only) or `--tlc` (`SYMMETRY`
//! only); add `--no-symmetry` to run either tool without any reduction (Stateright on every
//! core), the comparison in which both explore the whole space.

use causim_models::causalmesh::Chain;
use causim_specs::causalmesh_model::{MeshConfig, REMOTE_VISIBLE, check};
use causim_specs::causalmesh_tla;
use causim_specs::tlc::{TlcOptions, Verdict};
use stateright::Checker;
use std::time::{Duration, Instant};

/// Stateright's search allocates and frees states (a few KB each) from every thread; glibc's
/// allocator spent about a third of the search's time on it (perf, the two-round bound), and
/// mimalloc took its CPU time down by about a sixth and its wall time by about a fifth
/// (`specs/README.md`, Benchmark).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// TLC's budget per run: a run that does not finish in it is reported as such.
const TLC_TIMEOUT: Duration = Duration::from_secs(600);

fn label(cfg: &MeshConfig) -> String {
    let chain = match cfg.chain {
        Chain::OneRound => "one-round",
        Chain::TwoRound => "two-round",
    };
    format!("{} servers, {} keys, {} clients × {} ops, {chain}", cfg.servers, cfg.keys, cfg.clients, cfg.ops)
}

#[allow(clippy::too_many_arguments)]
fn row(checker: &str, threads: usize, symmetry: &str, generated: u64, unique: u64, depth: u64, secs: f64, verdict: &str) {
    println!(
        "| {checker:<10} | {threads:>7} | {symmetry:<13} | {generated:>12} | {unique:>12} | {depth:>5} | {secs:>8.2} | {:>12.0} | {:>12.0} | {verdict} |",
        generated as f64 / secs,
        unique as f64 / secs,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let beyond = args.iter().any(|a| a == "--beyond");
    let only_bound: Option<usize> = args.iter().position(|a| a == "--bound").and_then(|i| args.get(i + 1)?.parse().ok());
    let only_stateright = args.iter().any(|a| a == "--stateright");
    let only_tlc = args.iter().any(|a| a == "--tlc");
    let no_symmetry = args.iter().any(|a| a == "--no-symmetry");
    let mut bounds = vec![MeshConfig::free(2, 1, 2, 2, Chain::TwoRound)];
    if !quick {
        bounds.push(MeshConfig::free(2, 2, 2, 2, Chain::OneRound));
        bounds.push(MeshConfig::free(2, 2, 2, 2, Chain::TwoRound));
    }
    if beyond || only_bound.is_some() {
        bounds.push(MeshConfig::free(3, 2, 2, 2, Chain::TwoRound));
    }
    if let Some(n) = only_bound {
        if quick || n == 0 || n > bounds.len() {
            eprintln!("--bound takes 1 to {} (and no --quick)", bounds.len());
            std::process::exit(2);
        }
        bounds = vec![bounds[n - 1].clone()];
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for (b, cfg) in bounds.iter().enumerate() {
        let is_beyond = (beyond && b + 1 == bounds.len()) || only_bound == Some(4);
        // (threads, symmetry): the beyond bound only with symmetry on every core (its plain
        // space is about twice as large, and memory, not time, bounds it).
        let mut runs = vec![(1, false), (1, true), (cores, true)];
        if is_beyond || only_stateright {
            runs = vec![(cores, !no_symmetry)];
        }
        if only_tlc {
            runs.clear();
        }
        println!("\n{}\n", label(cfg));
        println!(
            "| checker    | threads | symmetry      | generated    | unique/dist. | depth |   time s |  generated/s |     unique/s | verdict |"
        );
        println!("|---|---:|---|---:|---:|---:|---:|---:|---:|---|");
        for &(t, symmetric) in &runs {
            let cfg = if symmetric { cfg.clone().symmetric() } else { cfg.clone() };
            let model = cfg.into_model().expect("valid bounds");
            let started = Instant::now();
            let checker = check(model, t, false);
            let secs = started.elapsed().as_secs_f64();
            let verdict = if checker.discoveries().keys().any(|p| *p != REMOTE_VISIBLE) { "violated" } else { "pass" };
            let (generated, unique, depth) = (checker.state_count(), checker.unique_state_count(), checker.max_depth());
            let symmetry = if symmetric { "sessions" } else { "none" };
            row("Stateright", t, symmetry, generated as u64, unique as u64, depth as u64, secs, verdict);
        }
        let tlc_runs: &[bool] = match (only_stateright, only_tlc) {
            (true, _) => &[],
            (false, true) => {
                if no_symmetry {
                    &[false]
                } else {
                    &[true]
                }
            }
            (false, false) => &[false, true],
        };
        for &symmetry in tlc_runs {
            let mut options = TlcOptions::with_workers(1);
            options.timeout = Some(TLC_TIMEOUT);
            let name = if symmetry { "clients, keys" } else { "none" };
            match causalmesh_tla::run(cfg, symmetry, &options) {
                Ok(run) => row(
                    "TLC",
                    1,
                    name,
                    run.states_generated,
                    run.distinct_states,
                    run.depth.unwrap_or(0),
                    run.wall_time.as_secs_f64(),
                    if run.verdict == Verdict::Ok { "pass" } else { "violated" },
                ),
                Err(e) => println!("| TLC | 1 | {name} | did not finish: {} |", e.lines().next().unwrap_or("")),
            }
        }
    }
}
