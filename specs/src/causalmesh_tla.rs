//! TLC on the CausalMesh spec with the bounds of a Stateright [`MeshConfig`].
//!
//! The spec (`specs/causalmesh/CausalMesh.tla`) selects the protocol variant with constants:
//! `Mutant` for the expressible mutants, `Integration = "dominance"` for
//! `integrate_by_vc_dominance`, `Chain` for the chain. Free-choice bounds become constants
//! (`N`, `Keys`, `Clients`, `MaxOps`); a script becomes a generated module extending
//! `CausalMeshScripted.tla` whose `ScriptDef` overrides `Script` (with `ClientMay` and
//! `ClientFinished`), so TLC and Stateright explore the same client behaviour.

use crate::causalmesh_model::{MeshConfig, Properties, StepOp, key_name, session_name};
use crate::tlc::{TlcOptions, TlcRun, run_tlc_with_files, spec_dir};
use causim_models::causalmesh::Chain;

/// The spec's invariants, in the order configs list them (TLC reports the first one a state
/// violates in this order). English names: see [`tla_name`].
pub const INVARIANTS: &[&str] = &["TypeOK", "CCacheIsCausalCut", "CoverageLemma", "ReadsCoverDeps", "HistoryIsCausalPlus"];

/// The Stateright property an invariant of the spec is named after.
pub fn english_name(invariant: &str) -> Option<&'static str> {
    use crate::causalmesh_model::*;
    match invariant {
        "CCacheIsCausalCut" => Some(CUT),
        "CoverageLemma" => Some(COVERAGE),
        "ReadsCoverDeps" => Some(COVER_DEPS),
        // Stateright's history check is at `ccv` (causal+); the spec's causal-consistency-only
        // invariant, which the mutants' history configs name, maps to it too.
        "HistoryIsCausalPlus" | "ReadsAreCausallyConsistent" => Some(CAUSAL),
        "NotRemoteWriteVisible" => Some(REMOTE_VISIBLE),
        _ => None,
    }
}

/// The spec invariant of a Stateright property.
pub fn tla_name(property: &str) -> Option<&'static str> {
    INVARIANTS.iter().chain(["NotRemoteWriteVisible"].iter()).copied().find(|i| english_name(i) == Some(property))
}

/// The Rust mutants the spec expresses, and how.
pub const EXPRESSIBLE: &[&str] =
    &["no_carry_local_writes", "reveal_at_head", "nearest_deps_only", "read_without_integration", "integrate_by_vc_dominance"];

/// `(Mutant, Integration)` for a set of Rust mutants (at most one of the `Mutant` kind).
pub fn variant(mutants: &[String]) -> Result<(&'static str, &'static str), String> {
    let mut mutant = "none";
    let mut integration = "exact";
    for m in mutants {
        match m.as_str() {
            "integrate_by_vc_dominance" => integration = "dominance",
            other => {
                let Some(name) = EXPRESSIBLE.iter().find(|e| **e == other) else {
                    return Err(format!("the TLA+ spec does not express mutant {other:?} (it expresses {})", EXPRESSIBLE.join(", ")));
                };
                if mutant != "none" {
                    return Err(format!("the TLA+ spec expresses one Mutant at a time, not {mutant} and {other}"));
                }
                mutant = name;
            }
        }
    }
    Ok((mutant, integration))
}

/// Files written beside a spec for one TLC run: (file name, contents).
pub type GeneratedFiles = Vec<(String, String)>;

/// The generated module name for scripted configs.
pub const SCRIPT_MODULE: &str = "CausalMeshMC";

/// A TLC config (and, for scripts, the module defining the script) for `cfg`'s bounds. With
/// `symmetry`, clients and keys are interchangeable (free choice only: a script names them).
/// Returns (module to run, config text, generated files).
pub fn tlc_input(cfg: &MeshConfig, symmetry: bool) -> Result<(String, String, GeneratedFiles), String> {
    let (mutant, integration) = variant(&cfg.mutants)?;
    let chain = match cfg.chain {
        Chain::OneRound => "one_round",
        Chain::TwoRound => "two_round",
    };
    let keys: Vec<String> = (0..cfg.keys as u64).map(key_name).collect();
    let clients: Vec<String> = (0..cfg.clients).map(session_name).collect();
    let mut text = String::from("CONSTANTS\n");
    if cfg.scripts.is_some() {
        for name in keys.iter().chain(&clients) {
            text.push_str(&format!("    {name} = {name}\n"));
        }
    }
    text.push_str(&format!(
        "    N = {}\n    Keys = {{{}}}\n    Clients = {{{}}}\n    MaxOps = {}\n    InitVal = InitVal\n    \
         Mutant = \"{mutant}\"\n    Chain = \"{chain}\"\n    Integration = \"{integration}\"\n",
        cfg.servers,
        keys.join(", "),
        clients.join(", "),
        cfg.ops,
    ));
    let mut files = Vec::new();
    let module = match &cfg.scripts {
        None => "CausalMesh".to_string(),
        Some(scripts) => {
            text.push_str("    Script <- ScriptDef\n    ClientMay <- ScriptMay\n    ClientFinished <- ScriptFinished\n");
            let mut def = Vec::new();
            for (i, script) in scripts.iter().enumerate() {
                let steps: Vec<String> = script
                    .iter()
                    .map(|st| {
                        let (op, k) = match &st.op {
                            StepOp::Read(k) => ("r", key_name(*k)),
                            StepOp::Write(k) => ("w", key_name(*k)),
                            StepOp::ReadTxn(ks) => {
                                ("rt", format!("{{{}}}", ks.iter().map(|k| key_name(*k)).collect::<Vec<_>>().join(", ")))
                            }
                        };
                        format!("[op |-> \"{op}\", s |-> {}, k |-> {k}]", st.server)
                    })
                    .collect();
                def.push(format!("({} :> <<{}>>)", session_name(i), steps.join(", ")));
            }
            let module_text = format!(
                "---- MODULE {SCRIPT_MODULE} ----\n\\* Generated by causim: the scripted clients of one model-check run.\n\
                 EXTENDS CausalMeshScripted\nCONSTANTS {}\nScriptDef ==\n    {}\n====\n",
                keys.iter().chain(&clients).cloned().collect::<Vec<_>>().join(", "),
                def.join(" @@\n    ")
            );
            files.push((format!("{SCRIPT_MODULE}.tla"), module_text));
            SCRIPT_MODULE.to_string()
        }
    };
    text.push_str("SPECIFICATION Spec\n");
    if symmetry && cfg.scripts.is_none() {
        text.push_str("SYMMETRY Symmetry\n");
    }
    let invariants: Vec<&str> = match cfg.properties {
        Properties::All => INVARIANTS.to_vec(),
        Properties::History => vec!["HistoryIsCausalPlus"],
    };
    text.push_str(&format!("INVARIANTS\n    {}\n", invariants.join("\n    ")));
    Ok((module, text, files))
}

/// Runs TLC on `cfg`'s bounds (one worker unless `options` say otherwise).
pub fn run(cfg: &MeshConfig, symmetry: bool, options: &TlcOptions) -> Result<TlcRun, String> {
    let (module, text, files) = tlc_input(cfg, symmetry)?;
    run_tlc_with_files(
        &spec_dir(<causim_models::causalmesh::CausalMesh as causim_models::Model>::ENTRY.name),
        &module,
        &text,
        &files,
        options,
    )
    .map_err(|e| e.to_string())
}
