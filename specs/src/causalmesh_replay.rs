//! A Stateright counterexample of the CausalMesh model, as a scenario `causim run` replays.
//!
//! The path's choices become a script (each function one operation, pinned to the server the
//! session chose: `"on": "S1"`), and its message deliveries become the scenario's `replay`
//! schedule (see `causim_sim::config::ReplayConfig`): the simulator then delivers exactly the
//! messages the model checker delivered, in the same order, so the servers and clients go
//! through the same states and the history shows what the counterexample's clients saw. The
//! scenario uses the model's protocol settings (`db_flush: async`, one read-transaction attempt,
//! no workflow retry) and checks the history at level `ccv`.
//!
//! Only functions whose request was delivered on the path are scripted: the replay then is the
//! path, and what the simulator does after the schedule ends (messages still waiting go on with
//! normal delays) only extends it.

use crate::causalmesh_model::{
    ActorStep, CAUSAL, COVER_DEPS, CUT, MeshConfig, MeshModel, MeshModelState, Step, StepOp, anomalies, key_name, session_name,
};
use causim_models::Model;
use causim_models::causalmesh::{CausalMesh, Chain, Msg};
use causim_pipeline::scenario::{ChecksConfig, Expectation, ProtocolSection, SCENARIO_FORMAT, Scenario, Verdict};
use causim_sim::config::{FaultsConfig, LimitsConfig, ReplayConfig, ReplayDelivery, SchedulerConfig, TopologyConfig};
use causim_sim::dist::DurationDist;
use causim_sim::node::Message;
use causim_sim::workload::{ScriptFunction, ScriptOp, ScriptSession, WorkloadConfig};
use stateright::Path;
use stateright::actor::ActorModelAction;

/// A counterexample made into a scenario.
#[derive(Clone, Debug)]
pub struct Replay {
    /// The scenario (`causim run` replays it once written to a file).
    pub scenario: Scenario,
    /// The counterexample's steps in words (`c1/f0 → S0: ClientWrite`).
    pub steps: Vec<String>,
    /// Which of `steps` are message deliveries, in the order of the scenario's replay schedule
    /// (`replay.deliveries[i]` is `steps[delivery_steps[i]]`); the others are sessions' choices.
    pub delivery_steps: Vec<usize>,
    /// The anomalies the history checker finds in the counterexample's last state (empty when
    /// the violated property is not about the history).
    pub anomalies: Vec<String>,
}

/// Builds the scenario replaying `path`, a counterexample to `property` of the model built
/// from `cfg`, checked without symmetry (a symmetric check's states are renamed from step to
/// step; see `MeshConfig::symmetric`). `name` names the scenario.
pub fn replay(cfg: &MeshConfig, name: &str, property: &str, path: Path<MeshModelState, ActorStep>) -> Replay {
    let model = cfg.clone().into_model().expect("the bounds of a checked model");
    let pairs = path.into_vec();
    let last = pairs.last().expect("a path has a state").0.clone();
    // Each step of the model is one or more steps of its actors: a choice, the request, the reply.
    let pairs: Vec<(MeshModelState, ActorStep)> =
        pairs.into_iter().filter_map(|(state, step)| step.map(|step| model.actor_steps(&state, step))).flatten().collect();
    let choices = cfg.choices();
    let mut functions: Vec<Vec<Step>> = vec![Vec::new(); cfg.clients];
    let mut requested: Vec<usize> = vec![0; cfg.clients];
    let mut deliveries = Vec::new();
    let mut steps = Vec::new();
    let mut delivery_steps = Vec::new();
    let session_of = |actor: usize| -> Option<usize> { (actor > cfg.servers).then(|| actor - cfg.servers - 1) };
    for (state, action) in &pairs {
        match action {
            ActorModelAction::SelectRandom { actor, random, .. } => {
                let j = session_of(usize::from(*actor)).expect("only sessions choose");
                let step = choices[*random].clone();
                steps.push(format!("{} picks {}", session_name(j), crate::causalmesh_model::format_step(&step)));
                functions[j].push(step);
            }
            ActorModelAction::Deliver { src, dst, msg } => {
                let name = |actor: usize| -> String {
                    match session_of(actor) {
                        Some(j) => {
                            let started = state.actor_states[actor].session().expect("a session").started;
                            format!("{}/f{}", session_name(j), started.saturating_sub(1))
                        }
                        None => cfg.actor_name(actor),
                    }
                };
                let (from, to) = (name(usize::from(*src)), name(usize::from(*dst)));
                if let Some(j) = session_of(usize::from(*src)) {
                    let started = state.actor_states[usize::from(*src)].session().expect("a session").started;
                    requested[j] = requested[j].max(started);
                }
                delivery_steps.push(steps.len());
                steps.push(format!("{from} → {to}: {}", describe(msg)));
                deliveries.push(ReplayDelivery { from, to, msg: Some(msg.kind().to_string()) });
            }
            other => unreachable!("the CausalMesh model takes no {other:?} steps"),
        }
    }
    if let Some(scripts) = &cfg.scripts {
        for (j, script) in scripts.iter().enumerate() {
            functions[j] = script.clone();
        }
    }
    let sessions: Vec<ScriptSession> = functions
        .iter()
        .enumerate()
        .filter(|(j, _)| requested[*j] > 0)
        .map(|(j, fs)| {
            let functions = fs[..requested[j]]
                .iter()
                .map(|st| {
                    let op = match &st.op {
                        StepOp::Read(k) => ScriptOp::Read(key_name(*k)),
                        StepOp::Write(k) => ScriptOp::Write(key_name(*k)),
                        StepOp::ReadTxn(ks) => ScriptOp::ReadTxn(ks.iter().map(|k| key_name(*k)).collect()),
                    };
                    ScriptFunction { on: Some(format!("S{}", st.server)), at_ns: 0, after: None, ops: vec![op] }
                })
                .collect();
            ScriptSession { session: session_name(j), functions }
        })
        .collect();
    let history_property = property == CAUSAL;
    let found = if history_property { anomalies(cfg, &last) } else { Vec::new() };
    let chain = match cfg.chain {
        Chain::OneRound => "one_round",
        Chain::TwoRound => "two_round",
    };
    let mutants = if cfg.mutants.is_empty() { "none".to_string() } else { cfg.mutants.join(", ") };
    let description = format!(
        "A Stateright counterexample to \"{property}\" (causim model-check causalmesh: {} servers, {} keys, {} sessions, \
         {} chain, mutants: {mutants}), replayed message by message: the replay schedule delivers the messages in \
         the order the model checker did. {}",
        cfg.servers,
        cfg.keys,
        cfg.clients,
        chain,
        if history_property {
            format!("The history checker names it {}.", found.join(", "))
        } else if property == CUT || property == COVER_DEPS {
            "The simulator's invariant check (checks.invariants) reports it.".to_string()
        } else {
            "The simulator does not check this property (it relates two servers' states), so its own checks pass; the \
             replay shows the states in the trace."
                .to_string()
        }
    );
    // Every counterexample says what it breaks; the verdict is what the simulator's own checks
    // find: the history checker or the invariant check, or nothing for a property relating two
    // servers' states (the replay then passes, as expected).
    let verdict = if history_property || property == CUT || property == COVER_DEPS { Verdict::Fail } else { Verdict::Pass };
    let expect = Some(Expectation { verdict, anomalies: found.clone(), liveness: None, property: Some(property.to_string()) });
    let scenario = Scenario {
        format: Some(SCENARIO_FORMAT.to_string()),
        name: name.to_string(),
        description: Some(description),
        protocol: ProtocolSection {
            name: CausalMesh::ENTRY.name.to_string(),
            params: serde_json::json!({"chain": chain, "db_flush": "async", "read_txn_attempts_max": 1}),
            mutants: cfg.mutants.clone(),
        },
        seed: 1,
        topology: TopologyConfig::new(cfg.servers as u32, DurationDist::constant(75_000)),
        scheduler: SchedulerConfig { attempts_max: 1, ..SchedulerConfig::default() },
        workload: WorkloadConfig::Script(sessions),
        faults: FaultsConfig::default(),
        limits: LimitsConfig::default(),
        replay: Some(ReplayConfig { deliveries, step_ns: 1000 }),
        checks: ChecksConfig { invariants: true, level: Some("ccv".to_string()) },
        expect,
    };
    Replay { scenario, steps, delivery_steps, anomalies: found }
}

/// A message in a few words.
fn describe(msg: &Msg) -> String {
    let key = |k: &u64| key_name(*k);
    match msg {
        Msg::ClientRead { key: k, .. } => format!("ClientRead {}", key(k)),
        Msg::ClientReadTxn { keys, .. } => format!("ClientReadTxn {}", keys.iter().map(key).collect::<Vec<_>>().join("+")),
        Msg::ClientWrite { key: k, value, local, .. } => {
            format!("ClientWrite {}={value} carrying {} write(s)", key(k), local.len())
        }
        Msg::ReadReply { key: k, version } => {
            format!("ReadReply {}={} {}", key(k), version.value.map_or("initial".to_string(), |v| v.to_string()), version.vc)
        }
        Msg::ReadTxnReply { versions } => format!(
            "ReadTxnReply {}",
            versions
                .iter()
                .map(|(k, v)| format!("{}={}", key(k), v.value.map_or("initial".to_string(), |v| v.to_string())))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        Msg::WriteReply { key: k, vc, .. } => format!("WriteReply {} {vc}", key(k)),
        Msg::ServerWrite { head, round, writes, carried, .. } => format!(
            "ServerWrite (head S{head}, round {round}) {} carrying {} write(s)",
            writes.iter().map(|(k, v)| format!("{}@{}", key(k), v.vc)).collect::<Vec<_>>().join(" "),
            carried.len()
        ),
        other => other.kind().to_string(),
    }
}

/// The model's scenario name for a configuration: `model-check-causalmesh-<mutants>-<chain>`.
pub fn scenario_name(cfg: &MeshConfig) -> String {
    let variant = if cfg.mutants.is_empty() { "correct".to_string() } else { cfg.mutants.join("+") };
    let chain = match cfg.chain {
        Chain::OneRound => "one-round",
        Chain::TwoRound => "two-round",
    };
    format!("model-check-causalmesh-{variant}-{chain}")
}

/// Convenience: the counterexample to `property` of a checked model, if there is one.
pub fn counterexample<C: stateright::Checker<MeshModel>>(checker: &C, property: &'static str) -> Option<Path<MeshModelState, ActorStep>> {
    checker.discovery(property)
}
