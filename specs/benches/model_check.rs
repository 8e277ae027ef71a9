//! Model-checking benchmark: Stateright on the `models/` CausalMesh code against TLC on the
//! TLA+ spec, on the same bounds (the correct protocol, so both explore their whole space).
//!
//! Run: `cargo bench -p causim-specs --bench model_check` (add `-- --quick` for the CI-sized
//! bounds only). For each bound it prints, per checker and thread count: states generated
//! (Stateright: states visited, duplicates included; TLC: states generated), unique / distinct
//! states, the depth, the wall time and the rates. TLC runs without symmetry (Stateright has
//! none); its time is the whole `java` process, JVM start included. The two state spaces are
//! not the same state machine (see `specs/README.md`, "State counts"), so the fair comparison
//! is time to a verdict on the same bounds; the per-state rates say how fast each tool walks
//! its own space.

use causim_models::causalmesh::Chain;
use causim_specs::causalmesh_model::{MeshConfig, check};
use causim_specs::causalmesh_tla;
use causim_specs::tlc::{TlcOptions, Verdict};
use stateright::Checker;
use std::time::{Duration, Instant};

fn label(cfg: &MeshConfig) -> String {
    let chain = match cfg.chain {
        Chain::OneRound => "one-round",
        Chain::TwoRound => "two-round",
    };
    format!("{} servers, {} keys, {} clients × {} ops, {chain}", cfg.servers, cfg.keys, cfg.clients, cfg.ops)
}

fn row(checker: &str, threads: usize, generated: u64, unique: u64, depth: u64, secs: f64, verdict: &str) {
    println!(
        "| {checker:<10} | {threads:>7} | {generated:>12} | {unique:>12} | {depth:>5} | {secs:>8.1} | {:>12.0} | {:>12.0} | {verdict} |",
        generated as f64 / secs,
        unique as f64 / secs,
    );
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let mut bounds = vec![MeshConfig::free(2, 2, 2, 2, Chain::OneRound), MeshConfig::free(2, 1, 2, 2, Chain::TwoRound)];
    if !quick {
        bounds.push(MeshConfig::free(2, 2, 2, 2, Chain::TwoRound));
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads: Vec<usize> = if cores > 1 { vec![1, cores] } else { vec![1] };
    for cfg in bounds {
        println!("\n{}\n", label(&cfg));
        println!("| checker    | threads | generated    | unique/dist. | depth |   time s |  generated/s |     unique/s | verdict |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---|");
        for &t in &threads {
            let model = cfg.clone().into_model().expect("valid bounds");
            let started = Instant::now();
            let checker = check(model, t, false);
            let secs = started.elapsed().as_secs_f64();
            let verdict = if checker.discoveries().keys().any(|p| *p != causim_specs::causalmesh_model::REMOTE_VISIBLE) {
                "violated"
            } else {
                "pass"
            };
            row(
                "Stateright",
                t,
                checker.state_count() as u64,
                checker.unique_state_count() as u64,
                checker.max_depth() as u64,
                secs,
                verdict,
            );
        }
        for &t in &threads {
            let mut options = TlcOptions::with_workers(t);
            options.timeout = Some(Duration::from_secs(3600));
            match causalmesh_tla::run(&cfg, false, &options) {
                Ok(run) => row(
                    "TLC",
                    t,
                    run.states_generated,
                    run.distinct_states,
                    run.depth.unwrap_or(0),
                    run.wall_time.as_secs_f64(),
                    if run.verdict == Verdict::Ok { "pass" } else { "violated" },
                ),
                Err(e) => println!("| TLC | {t} | failed: {e} |"),
            }
        }
    }
}
