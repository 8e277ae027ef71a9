//! Trace validation: a simulator run of CausalMesh, as a TLA+ behaviour TLC checks against the
//! spec (`specs/causalmesh/CausalMesh.tla`, the correct protocol: `Mutant = "none"`,
//! `Integration = "exact"`, the run's chain).
//!
//! # From a trace to a behaviour
//!
//! The spec's steps are the servers' handlers; the simulator's trace (`trace.jsonl`) records
//! every delivery, and the history (`history.jsonl`) what each client observed. Steps are
//! taken in delivery order, which is an order the handlers could have run in even with service
//! times: a node runs its inputs in the order they arrive, and what a handler sends leaves
//! after it starts, so no handler delivered later can depend on one delivered earlier and run
//! after it.
//!
//!
//! | simulator | spec step | what the step must also show |
//! |---|---|---|
//! | a server receives `ClientWrite` from `c/fN` | `ClientWrite(c, s, k)` | the write's vector clock (the history's `version`) |
//! | a server receives `ClientRead` | `ClientRead(c, s, k)` | the value read (as the write `<<c', i>>` it came from, or `InitVal`) and its clock |
//! | a server receives `ClientReadTxn` | `ClientReadTxn(c, s, ks)` | committed or aborted, and each key's value and clock |
//! | a server receives `ServerWrite`, traces `Forward` | `Forward(s)` or `TailForward(s)` (the tail in round 1) | the message's head and round |
//! | a server receives `ServerWrite`, traces `TailIntegrate` | `TailIntegrate(s)` | the message's head and round |
//! | a server receives `DbWriteAck` (synchronous flushes) | `Flushed(s)` | — |
//! | a server receives `Integrate` (dissemination) | `Disseminated(s)` | — (TLC tries each write disseminated to `s`) |
//!
//! The request, the handler and the reply are one atomic step in the spec (the client blocks),
//! so replies and database messages are not steps. A generated module (`CausalMeshTrace`)
//! extends the spec with the step list and a counter; its next-state relation takes step
//! `step + 1` only if the spec's action for it is enabled and shows what the simulator saw.
//! TLC then either reaches the end (the invariant `TraceIncomplete` fails: the trace is a
//! behaviour of the spec) or gets stuck (a deadlock): the step after the last state's `step` is
//! the first one the spec does not allow. A second run relaxes that step's observation to show
//! what the spec would have seen instead.
//!
//! # Limits
//!
//! Runs must have no eviction, no faults, and no retries (of read transactions or workflows).
//! The converter says which limit a trace breaks rather than report a false rejection.

use crate::tlc::{TlcOptions, TlcRun, Verdict, run_tlc_with_files, spec_dir};
use causim_models::Model;
use causim_models::causalmesh::{CausalMesh, CausalMeshParams, Chain, DbFlush};
use causim_pipeline::Scenario;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// A transaction of a TCC behaviour (a workflow attempt): its branches' keys, in the order read,
/// and the keys it writes (CausalMesh-TCC's and FaaSTCC's validators).
#[derive(Clone, Debug)]
pub struct Txn {
    pub name: String,
    pub branches: Vec<Vec<u64>>,
    pub writes: std::collections::BTreeSet<u64>,
}

/// One step of the behaviour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Write {
        client: String,
        server: usize,
        key: String,
        vc: Vec<u64>,
    },
    Read {
        client: String,
        server: usize,
        key: String,
        value: Obs,
        vc: Vec<u64>,
    },
    ReadTxn {
        client: String,
        server: usize,
        keys: Vec<String>,
        ok: bool,
        values: Vec<(String, Obs, Vec<u64>)>,
    },
    Chain {
        action: &'static str,
        server: usize,
        head: usize,
        round: u64,
    },
    /// The database acknowledged the server's oldest pending write (synchronous flushes).
    Flushed {
        server: usize,
    },
    /// The server integrates a write a tail disseminated to it.
    Disseminated {
        server: usize,
    },
}

/// A value a read returned: the initial one, or the write `(session, index)` (index from 1 in
/// the session's operations, as the spec numbers them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Obs {
    Initial,
    Written(String, usize),
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let vc = |v: &Vec<u64>| format!("[{}]", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","));
        let obs = |o: &Obs| match o {
            Obs::Initial => "its initial value".to_string(),
            Obs::Written(c, i) => format!("{c}'s operation {i}"),
        };
        match self {
            Step::Write { client, server, key, vc: v } => write!(f, "ClientWrite: {client} writes {key} at S{server}, stamped {}", vc(v)),
            Step::Read { client, server, key, value, vc: v } => {
                write!(f, "ClientRead: {client} reads {key} at S{server} and gets {} at {}", obs(value), vc(v))
            }
            Step::ReadTxn { client, server, keys, ok, values } => {
                write!(f, "ClientReadTxn: {client} reads {} at S{server}", keys.join("+"))?;
                if !ok {
                    return write!(f, " and aborts");
                }
                for (k, o, v) in values {
                    write!(f, "; {k} = {} at {}", obs(o), vc(v))?;
                }
                Ok(())
            }
            Step::Chain { action, server, head, round } => write!(f, "{action}: S{server} takes S{head}'s write (round {round})"),
            Step::Flushed { server } => write!(f, "Flushed: the database acknowledges S{server}'s write"),
            Step::Disseminated { server } => write!(f, "Disseminated: S{server} integrates a disseminated write"),
        }
    }
}

/// The behaviour a run's trace describes.
#[derive(Clone, Debug)]
pub struct Behaviour {
    pub servers: usize,
    pub chain: String,
    /// Synchronous database flushes (`Flushed` steps).
    pub sync: bool,
    /// The tails disseminate (`Disseminated` steps).
    pub disseminate: bool,
    /// Key names, in order of first use.
    pub keys: Vec<String>,
    /// Session names and their operation counts.
    pub clients: Vec<(String, usize)>,
    pub steps: Vec<Step>,
    /// The spec's `Mutant` to validate against: `"none"` (the correct protocol) unless a test
    /// checks that the invariants catch a mutant whose steps the spec then allows.
    pub spec_mutant: String,
}

/// What TLC made of a trace.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub steps: Vec<String>,
    /// The first step (0-based) the spec does not allow; `None`: the whole trace is a behaviour.
    pub rejected_at: Option<usize>,
    /// What the spec would have observed at the rejected step, as TLC prints it.
    pub why: Option<String>,
    /// The verdict on the full trace: `Ok` (every step taken, every invariant held),
    /// `Deadlock` (the spec stopped before `rejected_at`'s step) or the invariant violated.
    pub verdict: Verdict,
    /// TLC's own time for the full run.
    pub tlc_time: Option<std::time::Duration>,
}

/// What TLC's run over a whole trace of `steps` says: accepted, rejected at a step (asking
/// `relaxed(n)`, a run that lets step `n` show what the spec would have, why), or an invariant
/// broken after a step. `seen` renders the spec's view of a relaxed step.
pub(crate) fn interpret(
    steps: Vec<String>,
    full: &TlcRun,
    relaxed: impl FnOnce(usize) -> Result<TlcRun, String>,
    seen: impl Fn(&str) -> String,
) -> Result<Outcome, String> {
    let tlc_time = full.tlc_time;
    match &full.verdict {
        Verdict::Ok => {
            let depth = full.depth.ok_or("TLC reported no depth")? as usize;
            // Every step, no trace printed: an accepted trace reaches depth steps + 1.
            if depth == steps.len() + 1 {
                return Ok(Outcome { steps, rejected_at: None, why: None, verdict: Verdict::Ok, tlc_time });
            }
            // The spec stopped after depth - 1 steps: what would it have shown at the next?
            let done = depth.saturating_sub(1);
            let relaxed = relaxed(done + 1)?;
            let why = match &relaxed.verdict {
                Verdict::InvariantViolated { name } if name == "TraceIncomplete" => {
                    let view = relaxed.trace.last().and_then(|s| s.vars.get("seen")).cloned().unwrap_or_default();
                    format!("the spec can take this step, but shows {}", seen(&view.split_whitespace().collect::<Vec<_>>().join(" ")))
                }
                Verdict::Deadlock => "the spec cannot take this step at all in the state the earlier steps lead to".to_string(),
                other => format!("relaxing the step, TLC reports {other:?}"),
            };
            Ok(Outcome { steps, rejected_at: Some(done), why: Some(why), verdict: Verdict::Deadlock, tlc_time })
        }
        Verdict::InvariantViolated { name } => {
            let done: usize = full
                .trace
                .last()
                .and_then(|s| s.vars.get("step"))
                .and_then(|v| v.trim().parse().ok())
                .ok_or("TLC's trace has no step counter")?;
            Ok(Outcome {
                steps,
                rejected_at: Some(done.saturating_sub(1)),
                why: Some(format!("the spec takes the steps, but its invariant {name} fails after this one")),
                verdict: full.verdict.clone(),
                tlc_time,
            })
        }
        other => Err(format!("unexpected TLC verdict {other:?}:\n{}", full.output)),
    }
}

/// The definitions every generated trace module ends with: `TraceInit` (the spec's `Init`,
/// the step counter, and `init`'s extra conjuncts), `TraceNext` (take step `step + 1` with the
/// module's `Act(e)`, record `Observation(e)` in `seen`, require `Matches(e, seen')` unless the
/// step is the relaxed one, and `check`'s extra conjuncts) and `TraceIncomplete`. The module
/// defines `TraceSteps`, `Act`, `Observation`, `Matches` and the constant `Relax`.
pub(crate) fn replay(init: &str, check: &str) -> String {
    format!(
        r#"TraceInit ==
    /\ Init /\ step = 0 /\ seen = [none |-> TRUE]
{init}TraceNext ==
    /\ step < Len(TraceSteps)
    /\ step + 1 <= Relax
    /\ LET e == TraceSteps[step + 1]
       IN  /\ Act(e)
           /\ seen' = Observation(e)
           /\ step + 1 < Relax => Matches(e, seen')
{check}    /\ step' = step + 1

\* Violated once TLC has taken every step (or the relaxed one): the trace is a behaviour.
TraceIncomplete == step < Len(TraceSteps) /\ step < Relax
"#
    )
}

/// Checks a trace of `steps` with TLC: `run(relax, options)` runs the generated module (all
/// steps when `relax` is `None`), and [`interpret`] reads the verdict.
pub(crate) fn check_trace(
    steps: Vec<String>,
    options: &TlcOptions,
    run: impl Fn(Option<usize>, &TlcOptions) -> Result<TlcRun, String>,
    seen: impl Fn(&str) -> String,
) -> Result<Outcome, String> {
    if steps.is_empty() {
        return Err("the trace has no protocol step (was the run traced?)".into());
    }
    // Every step, no trace printed: an accepted trace reaches depth steps + 1.
    let mut to_the_end = options.clone();
    to_the_end.check_deadlock = false;
    let full = run(None, &to_the_end)?;
    interpret(steps, &full, |n| run(Some(n), options), seen)
}

pub(crate) fn parse_lines(text: &str, what: &str) -> Result<Vec<Json>, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("{what} line {}: {e}", i + 1)))
        .collect()
}

fn vc_of(op: &Json) -> Vec<u64> {
    op["version"].as_array().map(|a| a.iter().filter_map(|x| x.as_u64()).collect()).unwrap_or_default()
}

/// Reads a run's trace, history and summary (`causim run --out DIR`) into a behaviour.
pub fn behaviour(trace: &str, history: &str, summary: &str) -> Result<Behaviour, String> {
    let summary: Json = serde_json::from_str(summary).map_err(|e| format!("summary.json: {e}"))?;
    let scenario: Scenario =
        serde_json::from_value(summary["resolved_scenario"].clone()).map_err(|e| format!("summary.json: resolved_scenario: {e}"))?;
    behaviour_of_scenario(trace, history, &scenario)
}

/// Reads a run's trace and history into a behaviour; `scenario` is the scenario that ran (its
/// protocol and topology decide what the trace can show).
pub fn behaviour_of_scenario(trace: &str, history: &str, scenario: &Scenario) -> Result<Behaviour, String> {
    let protocol = &scenario.protocol;
    if protocol.name != CausalMesh::ENTRY.name {
        return Err(format!("trace validation is for {} runs, not {}", CausalMesh::ENTRY.name, protocol.name));
    }
    let params: CausalMeshParams = causim_models::parse_params(&protocol.params).map_err(|e| format!("protocol.{e}"))?;
    if params.c_cache_keys_max.is_some() {
        return Err("trace validation does not cover eviction".into());
    }
    let topology = &scenario.topology;
    let chain = match params.chain {
        Chain::OneRound => "one_round",
        Chain::TwoRound => "two_round",
    }
    .to_string();
    let servers = topology.servers as usize;
    let server_index = |name: &str| -> Option<usize> { name.strip_prefix('S')?.parse().ok().filter(|i| *i < servers) };

    // The history: each record's session, its index in the session, and who wrote what.
    let mut records: BTreeMap<u64, Json> = BTreeMap::new();
    let mut index_in_session: BTreeMap<u64, usize> = BTreeMap::new();
    let mut ops_per_session: BTreeMap<String, usize> = BTreeMap::new();
    let mut writer: BTreeMap<(String, u64), (String, usize)> = BTreeMap::new();
    let mut keys: Vec<String> = Vec::new();
    let mut aborted_sessions: BTreeMap<String, usize> = BTreeMap::new();
    for line in parse_lines(history, "history.jsonl")? {
        let Some(id) = line["id"].as_u64() else { continue };
        let session = line["session"].as_str().ok_or("history.jsonl: a record without a session")?.to_string();
        if session.contains('#') || session.contains("/f") {
            return Err(format!("trace validation does not cover retried or parallel workflows (session {session})"));
        }
        let n = ops_per_session.entry(session.clone()).or_default();
        if let Some(at) = aborted_sessions.get(&session) {
            return Err(format!("session {session} continued after its operation {at} aborted (a retry): not covered"));
        }
        *n += 1;
        let index = *n;
        index_in_session.insert(id, index);
        if line["outcome"] == "aborted" {
            aborted_sessions.insert(session.clone(), index);
        }
        for op in line["ops"].as_array().into_iter().flatten() {
            let key = op["key"].as_str().map(str::to_string).unwrap_or_else(|| op["key"].to_string());
            if !keys.contains(&key) {
                keys.push(key.clone());
            }
            if op["f"] == "w"
                && let Some(v) = op["value"].as_u64()
            {
                writer.insert((key, v), (session.clone(), index));
            }
        }
        records.insert(id, line);
    }
    let obs = |key: &str, value: &Json| -> Result<Obs, String> {
        match value.as_u64() {
            None => Ok(Obs::Initial),
            Some(v) => writer
                .get(&(key.to_string(), v))
                .map(|(s, i)| Obs::Written(s.clone(), *i))
                .ok_or(format!("a read of {key} = {v}, which no recorded write wrote")),
        }
    };

    // The trace: server handlers in delivery order.
    enum Pending {
        Client { function: String, server: usize, kind: String },
        Chain { server: usize, head: usize, round: u64 },
    }
    let mut slots: Vec<Option<Step>> = Vec::new();
    let mut pending: Vec<(usize, Pending)> = Vec::new();
    // Per server, its chain messages delivered and not yet handled, in order: with service
    // times a handler can run after later deliveries (a node's inputs run in delivery order).
    let mut chain_waiting: Vec<std::collections::VecDeque<usize>> = vec![Default::default(); servers];
    for ev in parse_lines(trace, "trace.jsonl")? {
        match ev["ev"].as_str() {
            Some("deliver") => {
                let to = ev["to"].as_str().unwrap_or("");
                let Some(server) = server_index(to) else { continue };
                let from = ev["from"].as_str().unwrap_or("").to_string();
                let kind = ev["msg"].as_str().unwrap_or("").to_string();
                match kind.as_str() {
                    "ClientRead" | "ClientWrite" | "ClientReadTxn" => {
                        slots.push(None);
                        pending.push((slots.len() - 1, Pending::Client { function: from, server, kind }));
                    }
                    "ServerWrite" => {
                        let detail = ev["detail"].as_str().unwrap_or("");
                        let field = |name: &str| -> Option<u64> {
                            let rest = &detail[detail.find(&format!("{name}: "))? + name.len() + 2..];
                            rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
                        };
                        let (Some(head), Some(round)) = (field("head"), field("round")) else {
                            return Err(format!("cannot read head and round of a ServerWrite: {detail}"));
                        };
                        slots.push(None);
                        pending.push((slots.len() - 1, Pending::Chain { server, head: head as usize, round }));
                        chain_waiting[server].push_back(slots.len() - 1);
                    }
                    "DbWriteAck" => slots.push(Some(Step::Flushed { server })),
                    "Integrate" => slots.push(Some(Step::Disseminated { server })),
                    "DbReadReply" | "ClientReadTcc" | "ClientCommit" => {
                        return Err(format!("{kind} messages are not covered by trace validation"));
                    }
                    _ => {}
                }
            }
            Some("action") => {
                let action = ev["action"].as_str().unwrap_or("");
                if !matches!(action, "Forward" | "TailIntegrate") {
                    continue;
                }
                let Some(node) = ev["node"].as_str().and_then(server_index) else { continue };
                let Some(slot) = chain_waiting[node].pop_front() else { continue };
                let pos = pending.iter().position(|(s, _)| *s == slot).expect("pending");
                let (_, Pending::Chain { server, head, round }) = pending.remove(pos) else { unreachable!() };
                let action = match action {
                    "TailIntegrate" => "TailIntegrate",
                    _ if (head + servers - 1) % servers == server => "TailForward",
                    _ => "Forward",
                };
                slots[slot] = Some(Step::Chain { action, server, head, round });
            }
            Some("record") => {
                let function = ev["fn"].as_str().unwrap_or("");
                let id = ev["id"].as_u64().ok_or("trace.jsonl: a record event without an id")?;
                let Some(pos) = pending.iter().position(|(_, p)| matches!(p, Pending::Client { function: f, .. } if f == function)) else {
                    return Err(format!("trace.jsonl: record {id} of {function} answers no request"));
                };
                let (slot, Pending::Client { server, kind, function }) = pending.remove(pos) else { unreachable!() };
                let client = function.split('/').next().unwrap_or("").to_string();
                let record = records.get(&id).ok_or(format!("history.jsonl has no record {id}"))?;
                let ops = record["ops"].as_array().cloned().unwrap_or_default();
                let key_of = |op: &Json| op["key"].as_str().map(str::to_string).unwrap_or_else(|| op["key"].to_string());
                let step = match kind.as_str() {
                    "ClientWrite" => Step::Write { client, server, key: key_of(&ops[0]), vc: vc_of(&ops[0]) },
                    "ClientRead" => {
                        let key = key_of(&ops[0]);
                        Step::Read { client, server, value: obs(&key, &ops[0]["value"])?, key, vc: vc_of(&ops[0]) }
                    }
                    _ => {
                        let ok = record["outcome"] == "ok";
                        let mut values = Vec::new();
                        for op in &ops {
                            let key = key_of(op);
                            values.push((key.clone(), obs(&key, &op["value"])?, vc_of(op)));
                        }
                        Step::ReadTxn { client, server, keys: values.iter().map(|v| v.0.clone()).collect(), ok, values }
                    }
                };
                let _ = index_in_session.get(&id);
                slots[slot] = Some(step);
            }
            _ => {}
        }
    }
    // Requests still open at the end, and chain hops without an action line, are not steps.
    let steps: Vec<Step> = slots.into_iter().flatten().collect();
    let clients = ops_per_session.into_iter().collect();
    let sync = params.db_flush == DbFlush::Sync;
    Ok(Behaviour { servers, chain, sync, disseminate: params.disseminate, keys, clients, steps, spec_mutant: "none".into() })
}

fn tla_key(name: &str) -> String {
    format!("key_{}", name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect::<String>())
}

fn tla_client(name: &str) -> String {
    format!("ses_{}", name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect::<String>())
}

fn tla_vc(vc: &[u64]) -> String {
    format!("<<{}>>", vc.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
}

fn tla_obs(o: &Obs) -> String {
    match o {
        Obs::Initial => "InitVal".to_string(),
        Obs::Written(c, i) => format!("<<{}, {i}>>", tla_client(c)),
    }
}

/// The generated trace module and its config; `relax` (1-based) leaves that step's
/// observation unchecked and stops there (`TraceIncomplete` is then violated, so TLC prints
/// the states up to it). Without `relax` the config checks the invariants only: TLC reports
/// no error and the depth it reached, and prints no trace, whose reconstruction would take
/// as long again as checking a long one.
pub fn tla(b: &Behaviour, relax: Option<usize>) -> (String, String) {
    let steps: Vec<String> = b
        .steps
        .iter()
        .map(|s| match s {
            Step::Write { client, server, key, vc } => format!(
                "[a |-> \"ClientWrite\", c |-> {}, s |-> {server}, k |-> {}, vc |-> {}]",
                tla_client(client),
                tla_key(key),
                tla_vc(vc)
            ),
            Step::Read { client, server, key, value, vc } => format!(
                "[a |-> \"ClientRead\", c |-> {}, s |-> {server}, k |-> {}, val |-> {}, vc |-> {}]",
                tla_client(client),
                tla_key(key),
                tla_obs(value),
                tla_vc(vc)
            ),
            Step::ReadTxn { client, server, keys, ok, values } => {
                let ks: Vec<String> = keys.iter().map(|k| tla_key(k)).collect();
                let vals: Vec<String> = values.iter().map(|(k, o, _)| format!("{} :> {}", tla_key(k), tla_obs(o))).collect();
                let vcs: Vec<String> = values.iter().map(|(k, _, v)| format!("{} :> {}", tla_key(k), tla_vc(v))).collect();
                format!(
                    "[a |-> \"ClientReadTxn\", c |-> {}, s |-> {server}, k |-> {{{}}}, ok |-> {}, val |-> {}, vc |-> {}]",
                    tla_client(client),
                    ks.join(", "),
                    if *ok { "TRUE" } else { "FALSE" },
                    if vals.is_empty() { "<<>>".to_string() } else { format!("({})", vals.join(" @@ ")) },
                    if vcs.is_empty() { "<<>>".to_string() } else { format!("({})", vcs.join(" @@ ")) },
                )
            }
            Step::Chain { action, server, head, round } => {
                format!("[a |-> \"{action}\", s |-> {server}, head |-> {head}, round |-> {round}]")
            }
            Step::Flushed { server } => format!("[a |-> \"Flushed\", s |-> {server}]"),
            Step::Disseminated { server } => format!("[a |-> \"Disseminated\", s |-> {server}]"),
        })
        .collect();
    let names: Vec<String> = b.keys.iter().map(|k| tla_key(k)).chain(b.clients.iter().map(|(c, _)| tla_client(c))).collect();
    let module = format!(
        r#"---- MODULE CausalMeshTrace ----
\* Generated by causim: a simulator run of CausalMesh as a behaviour of CausalMesh.tla.
EXTENDS CausalMesh
CONSTANTS {names}, Relax
VARIABLES step, seen, cpast, wpast, writesOf, maxSeen, ok

TraceSteps == <<
    {steps}
>>

Vec(sq) == [i \in Servers |-> sq[i + 1]]
LastOp(c) == hist'[c][Len(hist'[c])]
\* What the client saw: its own writes merged into the version the server returned.
ReadVc(c, k) == JoinAll({{LastOp(c).vc[k]}} \cup {{w.vc : w \in {{x \in local[c] : x.key = k}}}})

Act(e) ==
    CASE e.a = "ClientWrite"   -> ClientWrite(e.c, e.s, e.k)
      [] e.a = "ClientRead"    -> ClientRead(e.c, e.s, e.k)
      [] e.a = "ClientReadTxn" -> ClientReadTxn(e.c, e.s, e.k)
      [] e.a = "Forward"       -> Forward(e.s)
      [] e.a = "TailForward"   -> TailForward(e.s)
      [] e.a = "TailIntegrate" -> TailIntegrate(e.s)
      [] e.a = "Flushed"       -> Flushed(e.s)
      [] e.a = "Disseminated"  -> Disseminated(e.s)

\* What the spec shows at step e (evaluated after Act(e)).
Observation(e) ==
    CASE e.a = "ClientWrite"   -> [vc |-> LastOp(e.c).w.vc]
      [] e.a = "ClientRead"    -> [val |-> LastOp(e.c).val[e.k], vc |-> ReadVc(e.c, e.k)]
      [] e.a = "ClientReadTxn" -> IF LastOp(e.c).ok
                                  THEN [ok |-> TRUE, val |-> LastOp(e.c).val, vc |-> LastOp(e.c).vc]
                                  ELSE [ok |-> FALSE]
      [] e.a \in {{"Flushed", "Disseminated"}} -> [none |-> TRUE]
      [] OTHER                 -> [head |-> InMsg(e.s).head, round |-> InMsg(e.s).round]

\* ... and whether it is what the simulator showed.
Matches(e, o) ==
    CASE e.a = "ClientWrite"   -> o.vc = Vec(e.vc)
      [] e.a = "ClientRead"    -> o.val = e.val /\ o.vc = Vec(e.vc)
      [] e.a = "ClientReadTxn" -> o.ok = e.ok /\ (e.ok => /\ o.val = e.val
                                                        /\ \A k \in e.k : o.vc[k] = Vec(e.vc[k]))
      [] e.a \in {{"Flushed", "Disseminated"}} -> TRUE
      [] OTHER                 -> o.head = e.head /\ o.round = e.round

\* The client a step answers, as a set (none for chain steps).
Clients_(e) == IF e.a \in {{"ClientWrite", "ClientRead", "ClientReadTxn"}} THEN {{e.c}} ELSE {{}}

\* What the step-local checks and the incremental causal+ check carry (CausalMesh.tla,
\* "Step-local forms"): each client's causal past and greatest write clock seen, each
\* write's past, and the history's writes by key.  P is the past of the completed
\* operation o (computed once per step, in Check).
Carry(o, op, P) ==
    LET c == o[1]
    IN  /\ cpast' = [cpast EXCEPT ![c] = PastJoin(P, Just(o))]
        /\ wpast' = IF op.op = "w" THEN (o :> P) @@ wpast ELSE wpast
        /\ writesOf' = IF op.op = "w" THEN [writesOf EXCEPT ![op.w.key] = @ \cup {{o}}] ELSE writesOf
        /\ maxSeen' = [maxSeen EXCEPT ![c] =
                         IF op.op = "w" THEN op.w.vc ELSE LexMax({{@}} \cup {{WriteVc(v) : v \in ReadFrom(op)}})]

\* Causal+ for the completed operation: a write extends the arbitration, a read follows it.
HistoryOK(o, op, P) ==
    IF op.op = "w" THEN LexLess(maxSeen[o[1]], op.w.vc) ELSE ReadIsCausalPlus(op, P, writesOf, wpast)

\* At most one operation completes per step.
Check(e) ==
    LET s   == e.s
        cs  == Clients_(e)
        ks  == Touched(s)
        new == NewOps(cs)
        o   == CHOOSE x \in new : TRUE
        op  == OpNow(o)
        P   == PastOf(op, cpast[o[1]], wpast)
    IN  /\ IF new = {{}} THEN UNCHANGED <<cpast, wpast, writesOf, maxSeen>> ELSE Carry(o, op, P)
        /\ ok' = [types    |-> TypeOKStep(s, ks, cs),
                  grows    |-> CCacheGrowsStep(s, ks),
                  cut      |-> CCacheIsCausalCutStep(s, ks, cs, writesOf),
                  coverage |-> CoverageLemmaStep(s, ks),
                  deps     |-> ReadsCoverDepsStep(cs),
                  history  |-> new = {{}} \/ HistoryOK(o, op, P)]

{replay}
\* TLC evaluates every constant definition at start-up, the spec's Symmetry too:
\* Permutations over a trace's hundreds of keys would take minutes. The config
\* replaces it with this.
NoSymmetry == {{}}

\* The invariants, checked where each step changed the state (CausalMesh.tla).
TypeOKAtEachStep == ok.types
CCacheGrows == ok.grows
CCacheIsCausalCutAtEachStep == ok.cut
CoverageLemmaAtEachStep == ok.coverage
ReadsCoverDepsAtEachStep == ok.deps
ReadsAreCausalPlus == ok.history
====
"#,
        names = names.join(", "),
        steps = steps.join(",\n    "),
        replay = replay(
            "    /\\ cpast = [c \\in Clients |-> NoPast] /\\ wpast = NoPast\n    \
             /\\ writesOf = [k \\in Keys |-> {}] /\\ maxSeen = [c \\in Clients |-> Zero]\n    \
             /\\ ok = [types |-> TRUE, grows |-> TRUE, cut |-> TRUE, coverage |-> TRUE, deps |-> TRUE, history |-> TRUE]\n",
            "           /\\ Check(e)\n"
        ),
    );
    let max_ops = b.clients.iter().map(|(_, n)| *n).max().unwrap_or(0);
    let mut cfg = String::from("CONSTANTS\n");
    for n in &names {
        cfg.push_str(&format!("    {n} = {n}\n"));
    }
    cfg.push_str(&format!(
        "    N = {}\n    Keys = {{{}}}\n    Clients = {{{}}}\n    MaxOps = {max_ops}\n    InitVal = InitVal\n    \
         Mutant = \"{}\"\n    Chain = \"{}\"\n    Integration = \"exact\"\n    Relax = {}\n{}{}    Symmetry <- NoSymmetry\n\
         INIT TraceInit\nNEXT TraceNext\nINVARIANTS\n{}    ReadsAreCausalPlus\n    TypeOKAtEachStep\n    \
         CCacheGrows\n    CCacheIsCausalCutAtEachStep\n    CoverageLemmaAtEachStep\n    ReadsCoverDepsAtEachStep\n",
        b.servers,
        b.keys.iter().map(|k| tla_key(k)).collect::<Vec<_>>().join(", "),
        b.clients.iter().map(|(c, _)| tla_client(c)).collect::<Vec<_>>().join(", "),
        b.spec_mutant,
        b.chain,
        relax.map_or(b.steps.len() + 1, |r| r),
        if b.sync { "    DbFlush <- Sync\n" } else { "" },
        if b.disseminate { "    Disseminate <- On\n" } else { "" },
        if relax.is_some() { "    TraceIncomplete\n" } else { "" },
    ));
    (module, cfg)
}

/// Rewrites TLC's vector-clock functions `(0 :> 1 @@ 1 :> 2)` as the simulator prints clocks,
/// `[1,2]`; anything else is left as it is.
pub fn vectors_as_lists(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('(') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let parsed = after.find(')').and_then(|close| {
            let entries: Option<Vec<u64>> = after[..close]
                .split("@@")
                .enumerate()
                .map(|(i, e)| {
                    let (k, v) = e.split_once(":>")?;
                    (k.trim().parse::<usize>().ok()? == i).then_some(())?;
                    v.trim().parse().ok()
                })
                .collect();
            Some((close, entries?))
        });
        match parsed {
            Some((close, values)) => {
                out.push_str(&format!("[{}]", values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",")));
                rest = &after[close + 1..];
            }
            None => {
                out.push('(');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Validates a run's trace against the spec with TLC (`summary` is the run's `summary.json`).
pub fn validate(trace: &str, history: &str, summary: &str, options: &TlcOptions) -> Result<Outcome, String> {
    validate_behaviour(&behaviour(trace, history, summary)?, options)
}

/// Validates a behaviour against the spec with TLC.
pub fn validate_behaviour(b: &Behaviour, options: &TlcOptions) -> Result<Outcome, String> {
    let steps: Vec<String> = b.steps.iter().map(|s| s.to_string()).collect();
    let run = |relax: Option<usize>, options: &TlcOptions| {
        let (module, cfg) = tla(b, relax);
        run_tlc_with_files(&spec_dir(CausalMesh::ENTRY.name), "CausalMeshTrace", &cfg, &[("CausalMeshTrace.tla".into(), module)], options)
            .map_err(|e| e.to_string())
    };
    check_trace(steps, options, run, vectors_as_lists)
}

#[cfg(test)]
mod tests {
    use super::vectors_as_lists;

    #[test]
    fn clocks_print_as_the_simulator_prints_them() {
        assert_eq!(vectors_as_lists("[vc |-> (0 :> 1 @@ 1 :> 2)]"), "[vc |-> [1,2]]");
        assert_eq!(vectors_as_lists("[val |-> (k1 :> InitVal), vc |-> (0 :> 0)]"), "[val |-> (k1 :> InitVal), vc |-> [0]]");
        assert_eq!(vectors_as_lists("(1 :> 3)"), "(1 :> 3)", "a function not starting at 0 is not a clock");
    }
}
