//! TLC on CausalMesh's inductive invariant (`specs/causalmesh/CausalMeshInductive.tla`), for real.
//!
//! Goal: `IndInv` (the C-cache cut, the coverage lemma and reads covering deps, strengthened) is
//! inductive on a bounded type-correct space: every state of the space that satisfies it
//! (`IndInit`) keeps it after every step of `Next`; it implies the invariants it strengthens and
//! the history property (`ReadsAreCausallyConsistent`); the spec's `Init` establishes it. The check can fail: without a conjunct the proof needs, or with
//! the mutant `nearest_deps_only`, TLC reports a counterexample to induction, a state satisfying
//! `IndInv` and one step that breaks it. Bounds and figures are in `specs/README.md`
//! ("Inductive invariant").
//!
//! One TLC worker per run, so the counterexamples are the same on every run.

use causim_specs::tlc::{TlcRun, Verdict, run_tlc_with_config_text, spec_dir, testing};

const SPEC: &str = "causalmesh";
const MODULE: &str = "CausalMeshInductive";
const STEP: &str = "MC_inductive_step.cfg";

fn tlc(config: &str) -> TlcRun {
    testing::run(SPEC, MODULE, config, &testing::options())
}

/// The step config with its constants changed (`from` replaced by `to`, which must occur).
fn step_variant(from: &str, to: &str) -> TlcRun {
    let path = spec_dir(SPEC).join(STEP);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    assert!(text.contains(from), "{STEP} has no `{from}`");
    let config = text.replace(from, to);
    run_tlc_with_config_text(&spec_dir(SPEC), MODULE, &config, &testing::options())
        .unwrap_or_else(|err| panic!("TLC on {STEP} with {to} gave no verdict: {err}"))
}

fn assert_passes(run: &TlcRun, config: &str) {
    assert_eq!(run.verdict, Verdict::Ok, "{config}\n{}", run.output);
    assert_eq!(run.exit_code, 0, "{config}");
    assert!(run.trace.is_empty(), "{config}");
}

/// A counterexample to induction: a state of `IndInit` (so satisfying `IndInv`) and one step of
/// `action` after which `conjunct` fails.
fn assert_not_inductive(run: &TlcRun, what: &str, conjunct: &str, action: &str) {
    testing::assert_counterexample(run, what, conjunct, &[action]);
    assert_eq!(run.exit_code, 12, "{what}");
}

#[test]
fn inductive_invariant_is_kept_by_every_step_of_the_bounded_space() {
    // Goal: no step from a state satisfying IndInv breaks a conjunct. Pinned: the space (the
    // states of IndInit) and every successor; a change to the spec or the invariant shows here.
    // Every in-bounds successor is a state of IndInit already (successors outside the bounds
    // are checked, not counted as distinct), so the distinct states are IndInit's.
    let run = tlc(STEP);
    assert_passes(&run, STEP);
    assert_eq!((run.distinct_states, run.states_generated, run.depth), (12_081, 37_446, Some(1)), "{STEP}");
}

#[test]
fn inductive_invariant_implies_the_cut_the_coverage_lemma_and_causally_consistent_reads() {
    // Goal: the lemma, on the same space: every state satisfying IndInv satisfies the spec's
    // CCacheIsCausalCut, CoverageLemma, ReadsCoverDeps and ReadsAreCausallyConsistent.
    let config = "MC_inductive_lemma.cfg";
    let run = tlc(config);
    assert_passes(&run, config);
    assert_eq!(run.distinct_states, 12_081, "{config}: the same space as {STEP}");
}

#[test]
fn init_establishes_the_inductive_invariant_and_every_reachable_state_keeps_it() {
    // Goal: Init => IndInv (and, as a cross-check of the conjuncts, IndInv on every state the
    // spec reaches at the CI bounds of MC_exact_one_round.cfg, the same 14,207 orbits).
    let config = "MC_inductive_reachable.cfg";
    let run = tlc(config);
    assert_passes(&run, config);
    assert_eq!((run.distinct_states, run.states_generated, run.depth), (14_207, 30_936, Some(9)), "{config}");
}

#[test]
fn without_deps_present_the_check_finds_a_counterexample_to_induction() {
    // Goal: the check can fail. c1 wrote x at S1, then y at S0 carrying x; S0 holds y but not x
    // (unreachable: a head stores what a write carries), which every other conjunct allows. The
    // tail S1 reveals y and with it x, which S0 does not hold: a revealed write is not everywhere.
    let run = step_variant("Omit = {}", "Omit = {\"DepsPresent\"}");
    assert_not_inductive(&run, "Omit DepsPresent", "RevealedIsEverywhere", "TailIntegrate");
}

#[test]
fn mutant_nearest_deps_only_is_not_inductive_at_the_tail() {
    // Goal: the mutant that integrates only a write's nearest deps breaks the closure of the
    // merged set in one step: c1 wrote x at S1, then y at S0 carrying x; the tail S1 reveals y
    // and leaves x in its I-cache.
    let run = step_variant("Mutant = \"none\"", "Mutant = \"nearest_deps_only\"");
    assert_not_inductive(&run, "nearest_deps_only", "MergedIsClosed", "TailIntegrate");
}
