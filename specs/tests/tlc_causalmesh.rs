//! TLC on the CausalMesh spec (`specs/causalmesh/CausalMesh.tla`), for real.
//!
//! Goal: the protocol (two-round chain) passes every invariant; the paper's one-round chain
//! and each named mutant are caught, by the invariant we expect, with a counterexample made of
//! the actions we expect. Each mutant is run with every invariant (the test pins which one
//! TLC reports first) and, unless that one already is the history-level property, again with
//! only "reads are causally consistent", which is what the history checker will see.
//!
//! Every run uses one TLC worker, so counterexamples are the same on every run; the test
//! harness runs two tests at a time, which keeps both cores busy. Figures for each config are
//! in `specs/causalmesh/README.md`.

use std::time::Duration;

use causim_specs::tlc::{TlcOptions, TlcRun, TlcError, Verdict, run_tlc, run_tlc_with_config_text, spec_dir};

const MODULE: &str = "CausalMesh";

fn options() -> TlcOptions {
    let mut options = TlcOptions::with_workers(1);
    options.timeout = Some(Duration::from_secs(600));
    options
}

fn tlc(config: &str) -> TlcRun {
    match run_tlc(&spec_dir("causalmesh"), MODULE, config, &options()) {
        Ok(run) => run,
        Err(err) => panic!("TLC on {config} gave no verdict: {err}"),
    }
}

/// Runs `config` and checks that TLC reports `invariant` violated by a counterexample whose
/// actions include every one of `actions` and end with `last_action`.
fn expect_violation(config: &str, invariant: &str, actions: &[&str], last_action: &str) -> TlcRun {
    let run = tlc(config);
    assert_eq!(
        run.verdict,
        Verdict::InvariantViolated { name: invariant.to_string() },
        "{config}: unexpected verdict; trace {:?}",
        run.trace_actions()
    );
    assert_eq!(run.exit_code, 12);
    let trace = run.trace_actions();
    assert_eq!(trace.first(), Some(&"Initial predicate"), "{config}: {trace:?}");
    assert_eq!(trace.last(), Some(&last_action), "{config}: {trace:?}");
    for action in actions {
        assert!(trace.contains(action), "{config}: no {action} in {trace:?}");
    }
    // Every state of the counterexample shows the whole state.
    for state in &run.trace {
        for var in ["cc", "ic", "gvc", "chan", "deps", "local", "hist"] {
            assert!(state.vars.contains_key(var), "{config}: state {} lacks {var}", state.number);
        }
    }
    run
}

/// The last state's history: what the clients observed.
fn final_history(run: &TlcRun) -> &str {
    &run.trace.last().expect("a counterexample").vars["hist"]
}

// ---------------------------------------------------------------------------------------------
// The protocol.

#[test]
fn causalmesh_two_round_chain_passes_every_invariant() {
    // Goal: 2 servers, 2 keys, 2 clients with 2 operations each (read, write or read
    // transaction, each at any server): no invariant fails and no state deadlocks.
    let run = tlc("MC_none_two_round.cfg");
    assert_eq!(run.verdict, Verdict::Ok, "{}", run.output);
    assert_eq!(run.exit_code, 0);
    // Pinned: a change in the spec's state space shows up here as a diff.
    assert_eq!(run.distinct_states, 75_911);
    assert_eq!(run.states_generated, 163_388);
    assert_eq!(run.depth, Some(17));
    assert!(run.trace.is_empty());
}

#[test]
fn causalmesh_paper_one_round_chain_reveals_a_server_order_predecessor_too_early() {
    // Goal: the one-round chain of Fig. 7 is unsafe, even with two servers and with the
    // client's writes carried along the chain. c1 writes x then y at S0; c2 writes z at S0,
    // then z' at S1 carrying z. z''s tail S0 integrates z, and a dependency "up to z's
    // version" also names, by vector-clock order, c1's y (stamped earlier at S0) and so x:
    // S0 reveals x and y while they are still on the link to S1.
    let run = expect_violation("MC_none_one_round.cfg", "CoverageLemma", &[], "TailIntegrate");
    assert_eq!(
        run.trace_actions(),
        vec!["Initial predicate", "ClientWrite", "ClientWrite", "ClientWrite", "ClientWrite", "TailIntegrate"]
    );
}

#[test]
fn causalmesh_paper_one_round_chain_is_unsafe_with_three_servers() {
    // Goal: the same with three servers, where z' passes an intermediate hop first.
    // (A third client observing it, as a stale read, is the manual config
    // MC_none_one_round_3clients_history.cfg: about 2 minutes.)
    expect_violation(
        "MC_none_one_round_3servers.cfg",
        "CoverageLemma",
        &["ClientWrite", "Forward"],
        "TailIntegrate",
    );
}

// ---------------------------------------------------------------------------------------------
// Mutants (two-round chain, 2 servers, 2 keys, 2 clients, 2 operations each).

#[test]
fn causalmesh_mutant_no_carry_local_writes_is_caught_by_the_history() {
    // Goal: Fig. 6. c1 writes x at S0 and y at S1 without carrying x, so y has no
    // dependency on x; y is revealed and a read transaction at S0 sees y but the initial x.
    // No server-side invariant can see this (the lost dependency is not recorded anywhere):
    // only the history-level property catches it.
    // (The config lists every invariant, so a history-only run would find the same state.)
    let run = expect_violation(
        "MC_no_carry_local_writes.cfg",
        "ReadsAreCausallyConsistent",
        &["ClientWrite", "TailForward", "TailIntegrate"],
        "ClientReadTxn",
    );
    assert!(final_history(&run).contains("InitVal"), "{}", final_history(&run));
}

#[test]
fn causalmesh_mutant_reveal_at_head_is_caught() {
    // Goal: revealing at the head breaks the coverage lemma at the first write ...
    let run = expect_violation("MC_reveal_at_head.cfg", "CoverageLemma", &[], "ClientWrite");
    assert_eq!(run.trace_actions(), vec!["Initial predicate", "ClientWrite"]);
    // ... and clients see it: a read at the head, then a read at the other server.
    let run = expect_violation(
        "MC_reveal_at_head_history.cfg",
        "ReadsAreCausallyConsistent",
        &["ClientWrite"],
        "ClientRead",
    );
    assert_eq!(run.trace_actions(), vec!["Initial predicate", "ClientWrite", "ClientRead", "ClientRead"]);
    assert!(final_history(&run).contains("InitVal"), "{}", final_history(&run));
}

#[test]
fn causalmesh_mutant_nearest_deps_only_is_caught() {
    // Goal: a client that read y (which depends on x) integrates y but not x at the next
    // server, so that server's C-cache stops being a causal cut ...
    expect_violation(
        "MC_nearest_deps_only.cfg",
        "CCacheIsCausalCut",
        &["ClientWrite", "TailIntegrate"],
        "ClientRead",
    );
    // ... and its next read of x returns the initial value.
    let run = expect_violation(
        "MC_nearest_deps_only_history.cfg",
        "ReadsAreCausallyConsistent",
        &["ClientWrite", "TailIntegrate"],
        "ClientRead",
    );
    assert!(final_history(&run).contains("InitVal"), "{}", final_history(&run));
}

#[test]
fn causalmesh_mutant_read_without_integration_is_caught() {
    // Goal: a read that skips integration returns a version older than the client's deps.
    expect_violation(
        "MC_read_without_integration.cfg",
        "ReadsCoverDeps",
        &["ClientWrite", "TailIntegrate"],
        "ClientRead",
    );
    let run = expect_violation(
        "MC_read_without_integration_history.cfg",
        "ReadsAreCausallyConsistent",
        &["ClientWrite", "TailIntegrate"],
        "ClientRead",
    );
    assert!(final_history(&run).contains("InitVal"), "{}", final_history(&run));
}

#[test]
fn causalmesh_witnesses_remote_visibility_and_txn_abort_are_reachable() {
    // Goal: guard against vacuity. In the passing config a client does read another
    // client's write (after it went round the chain twice) ...
    expect_violation(
        "MC_witness_RemoteWriteVisible.cfg",
        "NotRemoteWriteVisible",
        &["ClientWrite", "TailForward", "Forward", "TailIntegrate"],
        "ClientRead",
    );
    // ... and a read transaction does abort (Fig. 8): c writes x, then reads x and y at the
    // head, where x is not yet revealed.
    let run = expect_violation("MC_witness_TxnAborted.cfg", "NotTxnAborted", &[], "ClientReadTxn");
    assert_eq!(run.trace_actions(), vec!["Initial predicate", "ClientWrite", "ClientReadTxn"]);
}

// ---------------------------------------------------------------------------------------------
// The runner itself.

#[test]
fn tlc_runner_reports_a_bad_config_as_an_error_value() {
    // Goal: TLC's "no verdict" exits (here 151, an undefined invariant) come back as an
    // error carrying TLC's message, not as a verdict and not as a panic.
    let config = "CONSTANTS\n N = 2\n Keys = {k1}\n Clients = {c1}\n MaxOps = 1\n InitVal = InitVal\n\
                  Mutant = \"none\"\n Chain = \"two_round\"\nSPECIFICATION Spec\nINVARIANT NoSuchInvariant\n";
    match run_tlc_with_config_text(&spec_dir("causalmesh"), MODULE, config, &options()) {
        Err(TlcError::Infrastructure { exit_code, message, .. }) => {
            assert!(exit_code >= 75, "{exit_code}");
            assert!(message.contains("NoSuchInvariant"), "{message}");
        }
        other => panic!("expected an infrastructure error, got {other:?}"),
    }
}

#[test]
fn tlc_runner_runs_a_generated_config() {
    // Goal: a config given as text (as the Stateright agreement tests will generate) runs;
    // one client with one operation and no symmetry: every invariant holds.
    let config = "CONSTANTS\n N = 2\n Keys = {k1, k2}\n Clients = {c1}\n MaxOps = 1\n InitVal = InitVal\n\
                  Mutant = \"none\"\n Chain = \"two_round\"\nSPECIFICATION Spec\n\
                  INVARIANTS TypeOK CCacheIsCausalCut CoverageLemma ReadsCoverDeps ReadsAreCausallyConsistent\n";
    let run = run_tlc_with_config_text(&spec_dir("causalmesh"), MODULE, config, &options())
        .unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(run.verdict, Verdict::Ok, "{}", run.output);
    assert!(run.distinct_states > 1);
}
