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
    CAUSAL, COVER_DEPS, CUT, MeshConfig, MeshModel, MeshModelState, Step, StepOp, anomalies, key_name, session_name,
};
use causim_models::causalmesh::{Chain, Msg};
use causim_sim::node::Message;
use stateright::Path;
use stateright::actor::ActorModelAction;

type Action = ActorModelAction<Msg, (), Step>;

/// A counterexample made into a scenario.
#[derive(Clone, Debug)]
pub struct Replay {
    /// The scenario file's JSON.
    pub scenario: serde_json::Value,
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
/// from `cfg`. `name` names the scenario.
pub fn replay(cfg: &MeshConfig, name: &str, property: &str, path: Path<MeshModelState, Action>) -> Replay {
    let pairs = path.into_vec();
    let last = pairs.last().expect("a path has a state").0.clone();
    let mut functions: Vec<Vec<Step>> = vec![Vec::new(); cfg.clients];
    let mut requested: Vec<usize> = vec![0; cfg.clients];
    let mut deliveries = Vec::new();
    let mut steps = Vec::new();
    let mut delivery_steps = Vec::new();
    let session_of = |actor: usize| -> Option<usize> { (actor > cfg.servers).then(|| actor - cfg.servers - 1) };
    for (state, action) in &pairs {
        let Some(action) = action else { continue };
        match action {
            ActorModelAction::SelectRandom { actor, random, .. } => {
                let j = session_of(usize::from(*actor)).expect("only sessions choose");
                functions[j].push(random.clone());
                steps.push(format!("{} picks {}", session_name(j), crate::causalmesh_model::format_step(random)));
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
                deliveries.push(serde_json::json!({"from": from, "to": to, "msg": msg.kind()}));
            }
            other => unreachable!("the CausalMesh model takes no {other:?} steps"),
        }
    }
    if let Some(scripts) = &cfg.scripts {
        for (j, script) in scripts.iter().enumerate() {
            functions[j] = script.clone();
        }
    }
    let sessions: Vec<serde_json::Value> = functions
        .iter()
        .enumerate()
        .filter(|(j, _)| requested[*j] > 0)
        .map(|(j, fs)| {
            let fs: Vec<serde_json::Value> = fs[..requested[j]]
                .iter()
                .map(|st| {
                    let op = match &st.op {
                        StepOp::Read(k) => serde_json::json!({"read": key_name(*k)}),
                        StepOp::Write(k) => serde_json::json!({"write": key_name(*k)}),
                        StepOp::ReadTxn(ks) => serde_json::json!({"read_txn": ks.iter().map(|k| key_name(*k)).collect::<Vec<_>>()}),
                    };
                    serde_json::json!({"on": format!("S{}", st.server), "ops": [op]})
                })
                .collect();
            serde_json::json!({"session": session_name(j), "functions": fs})
        })
        .collect();
    let history_property = property == CAUSAL;
    let found = if history_property { anomalies(cfg, &last) } else { Vec::new() };
    let chain = match cfg.chain {
        Chain::OneRound => "one_round",
        Chain::TwoRound => "two_round",
    };
    let mutants = if cfg.mutants.is_empty() { "none".to_string() } else { cfg.mutants.join(", ") };
    let mut scenario = serde_json::json!({
        "format": "causim-scenario/1",
        "name": name,
        "description": format!(
            "A Stateright counterexample to \"{property}\" (causim model-check causalmesh: {} servers, {} keys, {} sessions, \
             {} chain, mutants: {mutants}), replayed message by message: the replay schedule delivers the messages in \
             the order the model checker did. {}",
            cfg.servers, cfg.keys, cfg.clients, chain,
            if history_property {
                format!("The history checker names it {}.", found.join(", "))
            } else if property == CUT || property == COVER_DEPS {
                "The simulator's invariant check (checks.invariants) reports it.".to_string()
            } else {
                "The simulator does not check this property (it relates two servers' states); the replay shows the states \
                 in the trace."
                    .to_string()
            }
        ),
        "protocol": {
            "name": "causalmesh",
            "params": {"chain": chain, "db_flush": "async", "read_txn_attempts_max": 1},
            "mutants": cfg.mutants,
        },
        "seed": 1,
        "topology": {"servers": cfg.servers, "delay": {"dist": "constant", "ns": 75000}},
        "scheduler": {"attempts_max": 1},
        "workload": {"script": sessions},
        "replay": {"deliveries": deliveries, "step_ns": 1000},
        "checks": {"invariants": true, "level": "ccv"},
    });
    if history_property {
        scenario["expect"] = serde_json::json!({"verdict": "fail", "anomalies": found});
    } else if property == CUT || property == COVER_DEPS {
        scenario["expect"] = serde_json::json!({"verdict": "fail"});
    }
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
pub fn counterexample<C: stateright::Checker<MeshModel>>(checker: &C, property: &'static str) -> Option<Path<MeshModelState, Action>> {
    checker.discovery(property)
}

// ---------------------------------------------------------------------------------------------
// Running a scenario in the simulator

/// What the simulator made of a CausalMesh scenario (see [`simulate`]).
#[derive(Debug)]
pub struct Simulated {
    pub summary: causim_sim::metrics::Summary,
    /// `history.jsonl`, as `causim run` writes it.
    pub history: String,
    /// `trace.jsonl`, as `causim run` writes it.
    pub trace: String,
    /// The history checker's report at the scenario's `checks.level` (`None`: no level).
    pub report: Option<causim_checkers::Report>,
}

impl Simulated {
    /// The anomaly names the checker reports, sorted.
    pub fn anomalies(&self) -> Vec<String> {
        self.report.as_ref().map_or_else(Vec::new, |r| r.counts.keys().map(|a| a.name().to_string()).collect())
    }
}

/// Runs a CausalMesh scenario (the JSON of a scenario file, such as [`replay`] writes) in the
/// discrete-event engine, with the trace on, and checks its history as `causim run` does. This
/// is `causim run`'s path without the files and the console report (the CLI itself lives in the
/// root crate, which depends on this one); `tests/model_check_cli.rs` runs the real command on
/// the written file and compares.
pub fn simulate(scenario: &serde_json::Value) -> Result<Simulated, String> {
    use causim_models::Model as _;
    use causim_models::causalmesh::CausalMesh;
    let protocol = &scenario["protocol"];
    if protocol["name"] != CausalMesh::NAME {
        return Err(format!("simulate runs causalmesh scenarios, not {}", protocol["name"]));
    }
    let mutants: Vec<String> = match protocol.get("mutants") {
        None | Some(serde_json::Value::Null) => Vec::new(),
        Some(m) => serde_json::from_value(m.clone()).map_err(|e| format!("protocol.mutants: {e}"))?,
    };
    let mut engine = serde_json::Map::new();
    for field in ["seed", "topology", "scheduler", "workload", "faults", "limits", "replay"] {
        if let Some(v) = scenario.get(field) {
            engine.insert(field.to_string(), v.clone());
        }
    }
    let config: causim_sim::config::SimConfig =
        serde_json::from_value(serde_json::Value::Object(engine)).map_err(|e| format!("scenario: {e}"))?;
    let mutants = causim_models::check_mutants(CausalMesh::NAME, &mutants, CausalMesh::MUTANTS).map_err(|e| e.message)?;
    let params = protocol.get("params").cloned().unwrap_or(serde_json::json!({}));
    let model = CausalMesh::build(&params, &mutants, &config.topology).map_err(|e| format!("protocol.{}: {}", e.path, e.message))?;
    let (history_buf, trace_buf) = (causim_sim::buffer::SharedBuffer::default(), causim_sim::buffer::SharedBuffer::default());
    let mut history = causim_sim::history::HistoryWriter::new(Box::new(history_buf.clone()));
    let header = serde_json::json!({
        "format": "causim-history/1", "scenario": scenario["name"], "seed": config.seed, "protocol": CausalMesh::NAME,
    });
    history.header(&header).map_err(|e| e.to_string())?;
    let outputs = causim_sim::RunOutputs {
        scenario: scenario["name"].as_str().unwrap_or("scenario").to_string(),
        history,
        trace: Some(causim_sim::trace::TraceWriter::new(Box::new(trace_buf.clone()))),
        check_invariants: scenario["checks"]["invariants"] == true,
    };
    let mut sim = causim_sim::Sim::new(model, config, outputs).map_err(|e| format!("{}: {}", e.path, e.message))?;
    let summary = sim.run();
    drop(sim);
    let history = history_buf.text();
    let report = match scenario["checks"]["level"].as_str() {
        None => None,
        Some(level) => {
            let level = causim_checkers::Level::parse(level).ok_or(format!("checks.level: unknown level {level:?}"))?;
            let parsed = causim_checkers::read_history(history.as_bytes(), None).map_err(|e| e.to_string())?;
            Some(causim_checkers::check(&parsed, level))
        }
    };
    Ok(Simulated { summary, history, trace: trace_buf.text(), report })
}
