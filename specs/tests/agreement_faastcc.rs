//! FaaSTCC checked two independent ways, with verdicts that must agree: TLC on the TLA+ spec
//! written from the paper (`specs/faastcc/`), and Stateright on the Rust nodes the simulator
//! runs (`src/faastcc_model.rs`), on the same workflows (`MC_plans.tla`: t1 writes x and y, t2
//! reads y and x in a chain or in two branches that join; `MC_promise` adds t0, which writes z,
//! and t3, which reads z then x), two workers and one store partition.
//!
//! Goal: the correct protocol passes both on the three plans; each of the Rust model's three
//! mutants breaks exactly the same spec invariants in both (TLC is run once per invariant, so
//! that it reports every invariant the bounds break, not only the first), and the history
//! checker sees TCC broken in the Rust model's history; both reach an abort and a read of a new
//! version (the witnesses).

use causim_specs::faastcc_model::{ABORTS, FaConfig, FaModel, HISTORY, NEW_VERSION, ONE_SNAPSHOT, TLA_NAMES};
use causim_specs::stateright::{Checker, Model};
use causim_specs::tlc::{TlcRun, Verdict, run_tlc_with_config_text, spec_dir, testing};
use std::time::Instant;

/// The spec's invariants that have a Stateright counterpart, in the configs' order.
const INVARIANTS: [&str; 3] = ["PromisesKept", "ReadsAtEveryPoint", "TxnsReadOneSnapshot"];

struct Stateright {
    /// `always` properties with a counterexample, in declaration order.
    broken: Vec<&'static str>,
    aborts: bool,
    new_version: bool,
    unique_states: usize,
}

fn stateright(cfg: FaConfig) -> Stateright {
    let model: FaModel = cfg.into_model().expect("a valid model");
    let started = Instant::now();
    let checker = model.checker().threads(2).spawn_bfs().join();
    let secs = started.elapsed().as_secs_f64();
    let (states, unique) = (checker.state_count(), checker.unique_state_count());
    eprintln!(
        "stateright: {states} states, {unique} unique, depth {}, {secs:.2} s ({:.0} states/s)",
        checker.max_depth(),
        states as f64 / secs
    );
    Stateright {
        broken: testing::broken_always_properties(&checker),
        aborts: checker.discovery(ABORTS).is_some(),
        new_version: checker.discovery(NEW_VERSION).is_some(),
        unique_states: unique,
    }
}

/// TLC's verdict on a config: `None` when every invariant holds, else the one it reports.
fn tlc(config: &str) -> Option<String> {
    let run = testing::run("faastcc", "MC_plans", config, &testing::options());
    report_tlc(config, "", &run);
    match run.verdict {
        Verdict::Ok => None,
        Verdict::InvariantViolated { name } => Some(name),
        other => panic!("{config}: {other:?}\n{}", run.output),
    }
}

/// The figures `specs/README.md` quotes (`--nocapture`).
fn report_tlc(config: &str, invariant: &str, run: &TlcRun) {
    let secs = run.wall_time.as_secs_f64();
    eprintln!(
        "tlc {config} {invariant}: {:?}, {} generated, {} distinct, {secs:.1} s ({:.0} distinct/s)",
        run.verdict,
        run.states_generated,
        run.distinct_states,
        run.distinct_states as f64 / secs
    );
}

/// The spec invariants TLC finds violated on `config`'s bounds: one run per invariant.
fn tlc_broken(config: &str) -> Vec<&'static str> {
    let dir = spec_dir("faastcc");
    let text = std::fs::read_to_string(dir.join(config)).expect("the config exists");
    let bounds = &text[..text.find("INVARIANTS").expect("a config lists invariants")];
    INVARIANTS
        .into_iter()
        .filter(|invariant| {
            let run = run_tlc_with_config_text(&dir, "MC_plans", &format!("{bounds}INVARIANTS\n    {invariant}\n"), &testing::options())
                .unwrap_or_else(|e| panic!("TLC on {config} ({invariant}) gave no verdict: {e}"));
            report_tlc(config, invariant, &run);
            match run.verdict {
                Verdict::Ok => false,
                Verdict::InvariantViolated { name } if name == *invariant => true,
                other => panic!("{config} ({invariant}): {other:?}\n{}", run.output),
            }
        })
        .collect()
}

/// The spec invariants Stateright's broken properties stand for, in the configs' order.
fn tla_names(broken: &[&str]) -> Vec<&'static str> {
    let mapped: Vec<&str> = broken.iter().map(|p| TLA_NAMES.iter().find(|(q, _)| q == p).expect("a mapped property").1).collect();
    INVARIANTS.into_iter().filter(|i| mapped.contains(i)).collect()
}

#[test]
fn the_protocol_passes_both_checkers() {
    // Unique states pinned: a change in the Rust nodes' state space shows up here. They are not
    // the spec's distinct states (48, 63, 4 618): the nodes keep more (request numbers, the
    // store's prepared transactions and stable time, records), a push is sent and then
    // delivered, and a commit is prepared, then installed.
    for (cfg, config, states) in [
        (FaConfig::chain(), "MC_chain.cfg", 276),
        (FaConfig::fanout(), "MC_fanout.cfg", 440),
        (FaConfig::promise(), "MC_promise.cfg", 186_671),
    ] {
        let sr = stateright(cfg);
        assert_eq!(sr.broken, Vec::<&str>::new(), "{config}: Stateright");
        assert_eq!(sr.unique_states, states, "{config}: Stateright");
        assert_eq!(tlc(config), None, "{config}: TLC");
    }
}

/// Both checkers break the same spec invariants on `config`'s bounds, and in the Rust model's
/// history both the one-snapshot property and the history checker see the fracture.
fn agree_on_mutant(cfg: FaConfig, config: &str) -> Vec<&'static str> {
    let sr = stateright(cfg);
    eprintln!("stateright {config}: {:?}", sr.broken);
    assert!(sr.broken.contains(&ONE_SNAPSHOT) && sr.broken.contains(&HISTORY), "{config}: Stateright broke {:?}", sr.broken);
    let tla = tla_names(&sr.broken);
    assert_eq!(tla, tlc_broken(config), "{config}: Stateright broke {:?}", sr.broken);
    tla
}

#[test]
fn promise_off_by_one_breaks_the_same_invariants_in_both() {
    let broken = agree_on_mutant(FaConfig::promise().mutant("promise_off_by_one"), "MC_promise_off_by_one.cfg");
    assert_eq!(broken, INVARIANTS, "the unsound promise, the interval it lets through, the fracture");
}

#[test]
fn no_interval_narrowing_breaks_the_same_invariants_in_both() {
    let broken = agree_on_mutant(FaConfig::chain().mutant("no_interval_narrowing"), "MC_no_interval_narrowing.cfg");
    assert_eq!(broken, ["ReadsAtEveryPoint", "TxnsReadOneSnapshot"], "promises stay sound");
}

#[test]
fn no_fanin_merge_breaks_the_same_invariants_in_both() {
    let broken = agree_on_mutant(FaConfig::fanout().mutant("no_fanin_merge"), "MC_no_fanin_merge.cfg");
    // Each branch's interval is right; only the join's is not, and the spec states
    // `ReadsAtEveryPoint` per branch.
    assert_eq!(broken, ["TxnsReadOneSnapshot"]);
}

#[test]
fn both_reach_an_abort_and_a_read_of_a_new_version() {
    assert!(stateright(FaConfig::fanout()).aborts, "Stateright found no abort");
    assert_eq!(tlc("MC_witness_abort.cfg").as_deref(), Some("NotTxnAborted"));
    assert!(stateright(FaConfig::chain()).new_version, "Stateright found no read of a new version");
    assert_eq!(tlc("MC_witness_new.cfg").as_deref(), Some("NotReadNewVersion"));
}
