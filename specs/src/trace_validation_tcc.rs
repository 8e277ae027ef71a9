//! Trace validation for CausalMesh-TCC: a simulator run as a TLA+ behaviour TLC checks against
//! `specs/causalmesh_tcc/CausalMeshTCC.tla` (the correct protocol: `Mutant = "none"`,
//! `CutRule = "transitive"`, the run's ring size).
//!
//! # From a trace to a behaviour
//!
//! The spec's steps are the servers' handlers and the workflows' phase changes; the trace
//! (`trace.jsonl`) records every delivery with the message's contents (`detail`), and that is
//! all the spec needs, so the Rust model traces nothing extra for it. Steps are taken in
//! delivery order (a node runs its inputs in the order they arrive; see `trace_validation`).
//! Each workflow attempt (`c1`, its retry `c1#2`) is one of the spec's transactions; writes are
//! named `<<attempt, key>>` (a batch's clock names its attempt), initial versions
//! `<<"init", key>>`.
//!
//! | simulator | spec step | what the step must also show |
//! |---|---|---|
//! | a server receives `ClientReadTcc` | `Read(t, b, s)` | the write read (from the `ReadTccReply`), or an abort |
//! | … with a read floor (a retried attempt) | `FloorRead(t, b, s, f)` (trace module) | as above |
//! | … after its attempt aborted (a sibling branch) | `OrphanRead(s, D)` (trace module) | — |
//! | a server receives `ClientValidateTcc` | `ValidateJoin(t, s)` | accepted or not (the `ValidateReply`) |
//! | a join whose branches' reads nest (no validation asked) | `JoinLocal(t)` (trace module) | — |
//! | a join the client finds fractured itself (`abort` event) | `JoinAbort(t)` (trace module) | — |
//! | a one-branch attempt commits | `ChainDone(t)` then `Commit(t, s)` | the batch's clock (`CommitReply`) |
//! | a read-only attempt ends (`workflow` event) | `ChainDone(t)`/`JoinLocal(t)` then `Commit(t, 0)` (empty batch) | — |
//! | a server receives `ServerWrite` | `Forward(s)` or `TailIntegrate(s)` | the batch carried |
//! | a server receives `Integrate` (dissemination) | `Disseminated(s, D)` (trace module) | — |
//! | a branch's first read carries reads done before a fan-out | `Fork(t, from, to)` (trace module) | — |
//!
//! A workflow's branches are found from the read sets its requests carry: a read whose read set
//! is empty starts a branch, one whose read set is a branch's continues it, and one whose read
//! set a branch held earlier forks a new branch from that point. A read after a join (its read
//! set no branch ever held) is refused as outside the spec's workflows, which join once and
//! then commit. Steps marked "trace module" are defined in the generated module, not the spec;
//! specs/README.md ("Trace validation") says why each is needed and the two relaxations
//! (`Judge::Superset`, `ring_skips_unchanged`) the Rust model needs on longer runs.
//!
//! # Limits
//!
//! One-round chains, asynchronous flushes, no eviction, no faults. The converter names what a
//! run breaks rather than report a false rejection.

use crate::tlc::{TlcOptions, TlcRun, run_tlc_with_files, spec_dir};
pub use crate::trace_validation::Outcome;
use crate::trace_validation::{check_trace, parse_lines, replay};
use causim_models::Model;
use causim_models::causalmesh::{CausalMeshParams, CausalMeshTcc, Chain, DbFlush};
use causim_pipeline::Scenario;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A write: the attempt that committed it (`None`: the key's initial version) and its key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct WriteId {
    pub txn: Option<String>,
    pub key: u64,
}

/// One step of the behaviour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Branch `branch` (from 1) of `txn` reads `key` at `server`; `got` is the write read, or
    /// `None` when the attempt aborts; `floor` a retried attempt's read floor.
    Read {
        txn: String,
        branch: usize,
        server: usize,
        key: u64,
        floor: Option<WriteId>,
        got: Option<WriteId>,
    },
    /// A read of an attempt that has already aborted: the server integrates the read set.
    OrphanRead {
        txn: String,
        server: usize,
        integrate: Vec<WriteId>,
    },
    /// A fan-out after reads: branch `to` (from 1) of `txn` starts from branch `from`'s reads.
    Fork {
        txn: String,
        from: usize,
        to: usize,
    },
    ValidateJoin {
        txn: String,
        server: usize,
        ok: bool,
    },
    ChainDone {
        txn: String,
    },
    JoinLocal {
        txn: String,
    },
    JoinAbort {
        txn: String,
    },
    /// `vc` is empty for a read-only attempt (no batch).
    Commit {
        txn: String,
        server: usize,
        vc: Vec<u64>,
    },
    Chain {
        action: &'static str,
        server: usize,
        batch: String,
    },
    Disseminated {
        server: usize,
        writes: Vec<WriteId>,
    },
}

fn show(w: &Option<WriteId>) -> String {
    match w {
        None => "an abort".into(),
        Some(WriteId { txn: None, key }) => format!("the initial k{key}"),
        Some(WriteId { txn: Some(t), key }) => format!("{t}'s k{key}"),
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Read { txn, branch, server, key, floor, got } => {
                write!(f, "Read: {txn} (branch {branch}) reads k{key} at S{server} and gets {}", show(got))?;
                match floor {
                    Some(fl) => write!(f, " (floor {})", show(&Some(fl.clone()))),
                    None => Ok(()),
                }
            }
            Step::OrphanRead { txn, server, .. } => write!(f, "OrphanRead: S{server} serves a read of {txn}, which has aborted"),
            Step::ValidateJoin { txn, server, ok } => {
                write!(f, "ValidateJoin: S{server} {} {txn}'s join", if *ok { "accepts" } else { "refuses" })
            }
            Step::Fork { txn, from, to } => write!(f, "Fork: {txn}'s branch {to} starts from branch {from}'s reads"),
            Step::ChainDone { txn } => write!(f, "ChainDone: {txn}'s reads are done"),
            Step::JoinLocal { txn } => write!(f, "JoinLocal: {txn}'s branches join without validation (their reads nest)"),
            Step::JoinAbort { txn } => write!(f, "JoinAbort: {txn}'s join finds its branches' reads fractured"),
            Step::Commit { txn, server, vc } if vc.is_empty() => write!(f, "Commit: {txn} ends with no writes (S{server})"),
            Step::Commit { txn, server, vc } => write!(f, "Commit: {txn} commits at S{server}, stamped {vc:?}"),
            Step::Chain { action, server, batch } => write!(f, "{action}: S{server} takes {batch}'s batch"),
            Step::Disseminated { server, writes } => write!(f, "Disseminated: S{server} integrates {} disseminated writes", writes.len()),
        }
    }
}

pub use crate::trace_validation::Txn;

/// The behaviour a run's trace describes.
#[derive(Clone, Debug)]
pub struct Behaviour {
    /// How the servers judge cuts: `Exact` (the spec's `Read`, with each write's own
    /// dependencies), or `Superset` (a read may serve any version in the ring that forms a cut,
    /// or abort: the Rust model judges with what its caches keep, a superset of each write's
    /// dependencies once it has left the I-cache; see specs/README.md).
    pub judge: Judge,
    /// Integration appends a ring entry only when the merge changes the key's newest version
    /// (the Rust model), not for every key it touches (Fig. 11 lines 10–13, the spec).
    pub ring_skips_unchanged: bool,
    pub servers: usize,
    pub ring: usize,
    pub keys: BTreeSet<u64>,
    pub txns: Vec<Txn>,
    pub steps: Vec<Step>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judge {
    Exact,
    Superset,
}

// ---------------------------------------------------------------------------------------------
// The messages' `detail` (their Debug form).

/// The vector clock `Vc { c: [..], len: L }` starting at or after `at` in `s`, and where it ends.
fn vc_at(s: &str, at: usize) -> Option<(Vec<u64>, usize)> {
    let start = at + s[at..].find("Vc { c: [")? + "Vc { c: [".len();
    let close = start + s[start..].find(']')?;
    let values: Vec<u64> = s[start..close].split(',').map(|x| x.trim().parse().ok()).collect::<Option<_>>()?;
    let len_at = close + s[close..].find("len: ")? + "len: ".len();
    let len_end = len_at + s[len_at..].find(|c: char| !c.is_ascii_digit())?;
    let len: usize = s[len_at..len_end].parse().ok()?;
    Some((values.into_iter().take(len).collect(), len_end))
}

/// The number after `name: ` in `s`.
fn number(s: &str, name: &str) -> Option<u64> {
    let rest = &s[s.find(&format!("{name}: "))? + name.len() + 2..];
    rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// Every `(key, Vc { .. })` pair in `s`.
fn key_vcs(s: &str) -> Option<Vec<(u64, Vec<u64>)>> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(open) = s[at..].find('(').map(|i| at + i) {
        let rest = &s[open + 1..];
        let digits = rest.find(|c: char| !c.is_ascii_digit())?;
        if digits == 0 || !rest[digits..].starts_with(", Vc {") {
            at = open + 1;
            continue;
        }
        let key = rest[..digits].parse().ok()?;
        let (vc, end) = vc_at(s, open)?;
        out.push((key, vc));
        at = end;
    }
    Some(out)
}

fn bad(kind: &str, detail: &str) -> String {
    format!("cannot read a {kind} message: {detail}")
}

/// A request a server received from a function.
enum Request {
    Read { key: u64, read_set: Vec<(u64, Vec<u64>)>, floor: Option<Vec<u64>> },
    Validate { read_set: Vec<(u64, Vec<u64>)> },
    Commit { keys: Vec<u64> },
}

/// An event of the trace that can make a step.
enum Event {
    Request {
        function: String,
        server: usize,
        request: Request,
    },
    Chain {
        server: usize,
        head: usize,
        batch_vc: Vec<u64>,
    },
    Integrate {
        server: usize,
        writes: Vec<(u64, Vec<u64>)>,
    },
    /// A workflow attempt ended (`workflow`) or aborted (`abort`).
    Ended {
        attempt: String,
    },
    Aborted {
        attempt: String,
    },
}

/// A reply a function received.
enum Reply {
    Read(Option<Vec<u64>>),
    Validate(bool),
    Commit(Vec<u64>),
}

fn attempt_of(function: &str) -> &str {
    function.rsplit_once('/').map_or(function, |(a, _)| a)
}

/// Why a run is outside what the spec covers, if it is.
pub fn out_of_scope(scenario: &Scenario) -> Option<String> {
    if scenario.protocol.name != CausalMeshTcc::ENTRY.name {
        return Some(format!(
            "trace validation against CausalMeshTCC.tla is for {} runs, not {}",
            CausalMeshTcc::ENTRY.name,
            scenario.protocol.name
        ));
    }
    let params: CausalMeshParams = match causim_models::parse_params(&scenario.protocol.params) {
        Ok(p) => p,
        Err(e) => return Some(format!("protocol.{e}")),
    };
    if params.chain != Chain::OneRound {
        return Some("the spec has one-round chains only (params.chain is two_round)".into());
    }
    if params.db_flush == DbFlush::Sync {
        return Some(
            "synchronous flushes are not covered: the head sends a batch down its chain only once the database \
             acknowledges it, so later messages on the same link overtake it, while the spec's Commit sends it at once"
                .into(),
        );
    }
    if params.c_cache_keys_max.is_some() {
        return Some("the spec has no eviction (params.c_cache_keys_max is set)".into());
    }
    let faults = &scenario.faults;
    if !faults.partitions.is_empty() || !faults.crashes.is_empty() || faults.loss_probability > 0.0 {
        return Some("the spec has no faults (the scenario has partitions, crashes or message loss)".into());
    }
    None
}

/// Reads a run's trace into a behaviour; `scenario` is the scenario that ran.
pub fn behaviour_of_scenario(trace: &str, scenario: &Scenario) -> Result<Behaviour, String> {
    if let Some(why) = out_of_scope(scenario) {
        return Err(format!("out of scope: {why}"));
    }
    let params: CausalMeshParams = causim_models::parse_params(&scenario.protocol.params).map_err(|e| format!("protocol.{e}"))?;
    let servers = scenario.topology.servers as usize;
    let server_index = |name: &str| -> Option<usize> { name.strip_prefix('S')?.parse().ok().filter(|i| *i < servers) };

    // Pass 1: the events that make steps, and each function's replies in order.
    let mut events: Vec<Event> = Vec::new();
    let mut replies: BTreeMap<String, VecDeque<Reply>> = BTreeMap::new();
    let mut batch_of: BTreeMap<Vec<u64>, String> = BTreeMap::new();
    for ev in parse_lines(trace, "trace.jsonl")? {
        let kind = ev["msg"].as_str().unwrap_or("");
        let detail = ev["detail"].as_str().unwrap_or("");
        let from = ev["from"].as_str().unwrap_or("").to_string();
        let to = ev["to"].as_str().unwrap_or("");
        match ev["ev"].as_str() {
            Some("drop") => return Err("out of scope: a message was lost".into()),
            Some("abort") => events.push(Event::Aborted { attempt: ev["session"].as_str().unwrap_or("").to_string() }),
            Some("workflow") => events.push(Event::Ended { attempt: ev["session"].as_str().unwrap_or("").to_string() }),
            Some("deliver") => {
                if let Some(server) = server_index(to) {
                    let request = match kind {
                        "ClientReadTcc" => {
                            let key = number(detail, "key").ok_or_else(|| bad(kind, detail))?;
                            let split = detail.rfind(", floor: ").ok_or_else(|| bad(kind, detail))?;
                            let read_set = key_vcs(&detail[..split]).ok_or_else(|| bad(kind, detail))?;
                            let floor = if detail[split..].contains("Some(") {
                                Some(vc_at(detail, split).ok_or_else(|| bad(kind, detail))?.0)
                            } else {
                                None
                            };
                            Request::Read { key, read_set, floor }
                        }
                        "ClientValidateTcc" => Request::Validate { read_set: key_vcs(detail).ok_or_else(|| bad(kind, detail))? },
                        "ClientCommit" => Request::Commit { keys: batch_keys(detail).ok_or_else(|| bad(kind, detail))? },
                        "ServerWrite" => {
                            let head = number(detail, "head").ok_or_else(|| bad(kind, detail))? as usize;
                            let winner = detail.find("winner: ").ok_or_else(|| bad(kind, detail))?;
                            let batch_vc = vc_at(detail, winner).ok_or_else(|| bad(kind, detail))?.0;
                            events.push(Event::Chain { server, head, batch_vc });
                            continue;
                        }
                        "Integrate" => {
                            events.push(Event::Integrate { server, writes: key_vcs(detail).ok_or_else(|| bad(kind, detail))? });
                            continue;
                        }
                        "DbReadReply" => return Err("out of scope: a cache miss (the spec has no storage reads)".into()),
                        _ => continue,
                    };
                    events.push(Event::Request { function: from, server, request });
                } else if server_index(&from).is_some() {
                    let reply = match kind {
                        "ReadTccReply" => match detail.find("winner: ") {
                            Some(at) => Reply::Read(Some(vc_at(detail, at).ok_or_else(|| bad(kind, detail))?.0)),
                            None => Reply::Read(None),
                        },
                        "ValidateReply" => Reply::Validate(detail.contains("fracture: None")),
                        "CommitReply" => {
                            let vc = vc_at(detail, 0).ok_or_else(|| bad(kind, detail))?.0;
                            batch_of.insert(vc.clone(), attempt_of(to).to_string());
                            Reply::Commit(vc)
                        }
                        _ => continue,
                    };
                    replies.entry(to.to_string()).or_default().push_back(reply);
                }
            }
            _ => {}
        }
    }
    let write_id = |key: u64, vc: &[u64]| -> Result<WriteId, String> {
        if vc.iter().all(|x| *x == 0) {
            return Ok(WriteId { txn: None, key });
        }
        batch_of
            .get(vc)
            .map(|t| WriteId { txn: Some(t.clone()), key })
            .ok_or_else(|| format!("a version of key {key} stamped {vc:?}, which no commit made"))
    };

    // Pass 2: the steps, and each attempt's branches.
    struct Branch {
        read: BTreeMap<u64, Vec<u64>>,
        keys: Vec<u64>,
        /// The branch's read set after each of its reads (and as it started), with the
        /// position of the step after which it held: where a fan-out from it starts.
        history: Vec<(BTreeMap<u64, Vec<u64>>, usize)>,
    }
    #[derive(Default)]
    struct Attempt {
        branches: Vec<Branch>,
        branch_of: BTreeMap<String, usize>,
        writes: BTreeSet<u64>,
        aborted: bool,
        joined: bool,
        committed: bool,
    }
    let mut attempts: BTreeMap<String, Attempt> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    // Each step with where it goes: its place in delivery order, and forks just after the
    // read they start from (found later, when the other branch first reads).
    let mut steps: Vec<(usize, Step)> = Vec::new();
    let mut keys: BTreeSet<u64> = BTreeSet::new();
    let mut attempt = |name: &str, attempts: &mut BTreeMap<String, Attempt>| {
        if !attempts.contains_key(name) {
            order.push(name.to_string());
            attempts.insert(name.to_string(), Attempt::default());
        }
    };
    // Before a commit: the step that ends the reads (a chain's, or a join that needed no server).
    let end_reads = |txn: &str, a: &mut Attempt, steps: &mut Vec<(usize, Step)>| {
        if !a.joined {
            a.joined = true;
            let reading = a.branches.iter().filter(|b| !b.keys.is_empty()).count();
            let step = if reading > 1 { Step::JoinLocal { txn: txn.into() } } else { Step::ChainDone { txn: txn.into() } };
            steps.push((2 * steps.len(), step));
        }
    };
    let push = |steps: &mut Vec<(usize, Step)>, step: Step| steps.push((2 * steps.len(), step));
    for event in events {
        match event {
            Event::Request { function, server, request } => {
                let txn = attempt_of(&function).to_string();
                if txn == "init" {
                    return Err("a workflow named `init` (the spec's name for initial versions)".into());
                }
                attempt(&txn, &mut attempts);
                let a = attempts.get_mut(&txn).expect("just added");
                let reply = replies.get_mut(&function).and_then(|q| q.pop_front());
                match request {
                    Request::Read { key, read_set, floor } => {
                        keys.insert(key);
                        let Some(Reply::Read(got)) = reply else {
                            return Err(format!("{function}'s read of key {key} at S{server} has no reply in the trace"));
                        };
                        let floor = floor.map(|f| write_id(key, &f)).transpose()?;
                        if a.aborted {
                            let mut integrate: Vec<WriteId> = read_set.iter().map(|(k, v)| write_id(*k, v)).collect::<Result<_, _>>()?;
                            integrate.extend(floor);
                            push(&mut steps, Step::OrphanRead { txn, server, integrate });
                            continue;
                        }
                        let rs: BTreeMap<u64, Vec<u64>> = read_set.into_iter().collect();
                        let b = match a.branch_of.get(&function) {
                            Some(&b) if a.branches[b].read == rs => b,
                            Some(_) => return Err(format!("{function}'s read set changed between its reads")),
                            None if rs.is_empty() => {
                                a.branches.push(Branch {
                                    read: BTreeMap::new(),
                                    keys: Vec::new(),
                                    history: vec![(BTreeMap::new(), 2 * steps.len())],
                                });
                                a.branches.len() - 1
                            }
                            None => match a.branches.iter().position(|b| b.read == rs) {
                                Some(b) => b,
                                None => {
                                    // A fan-out after reads: a new branch from an earlier read set of one.
                                    let (from, at) = a
                                        .branches
                                        .iter()
                                        .enumerate()
                                        .find_map(|(i, b)| b.history.iter().find(|(r, _)| *r == rs).map(|(_, at)| (i, *at)))
                                        .ok_or_else(|| {
                                            format!(
                                                "out of scope: {function} reads key {key} with a read set no branch of {txn} \
                                                 had (a read after a join: the spec's workflows join once, then commit)"
                                            )
                                        })?;
                                    a.branches.push(Branch { read: rs.clone(), keys: Vec::new(), history: vec![(rs.clone(), at + 1)] });
                                    let to = a.branches.len();
                                    steps.push((at + 1, Step::Fork { txn: txn.clone(), from: from + 1, to }));
                                    to - 1
                                }
                            },
                        };
                        a.branch_of.insert(function.clone(), b);
                        a.branches[b].keys.push(key);
                        match &got {
                            Some(vc) => {
                                a.branches[b].read.insert(key, vc.clone());
                            }
                            None => a.aborted = true,
                        }
                        let read = a.branches[b].read.clone();
                        a.branches[b].history.push((read, 2 * steps.len()));
                        let got = got.map(|vc| write_id(key, &vc)).transpose()?;
                        push(&mut steps, Step::Read { txn, branch: b + 1, server, key, floor, got });
                    }
                    Request::Validate { read_set } => {
                        let Some(Reply::Validate(ok)) = reply else {
                            return Err(format!("{function}'s validation at S{server} has no reply in the trace"));
                        };
                        let union: BTreeMap<u64, Vec<u64>> = a.branches.iter().flat_map(|b| b.read.clone()).collect();
                        if union != read_set.into_iter().collect::<BTreeMap<_, _>>() {
                            return Err(format!("{function} validates a read set that is not the union of {txn}'s branches'"));
                        }
                        if ok {
                            a.joined = true
                        } else {
                            a.aborted = true
                        }
                        push(&mut steps, Step::ValidateJoin { txn, server, ok });
                    }
                    Request::Commit { keys: batch } => {
                        let Some(Reply::Commit(vc)) = reply else {
                            return Err(format!("{function}'s commit at S{server} has no reply in the trace"));
                        };
                        for k in batch {
                            keys.insert(k);
                            a.writes.insert(k);
                        }
                        end_reads(&txn, a, &mut steps);
                        a.committed = true;
                        push(&mut steps, Step::Commit { txn, server, vc });
                    }
                }
            }
            Event::Chain { server, head, batch_vc } => {
                let batch = batch_of
                    .get(&batch_vc)
                    .ok_or_else(|| format!("a chain message for a batch stamped {batch_vc:?}, which no commit made"))?;
                let action = if (head + servers - 1) % servers == server { "TailIntegrate" } else { "Forward" };
                push(&mut steps, Step::Chain { action, server, batch: batch.clone() });
            }
            Event::Integrate { server, writes } => {
                let writes = writes.iter().map(|(k, v)| write_id(*k, v)).collect::<Result<_, _>>()?;
                push(&mut steps, Step::Disseminated { server, writes });
            }
            Event::Ended { attempt: txn } => {
                attempt(&txn, &mut attempts);
                let a = attempts.get_mut(&txn).expect("just added");
                if !a.committed && !a.aborted {
                    end_reads(&txn, a, &mut steps);
                    a.committed = true;
                    push(&mut steps, Step::Commit { txn, server: 0, vc: Vec::new() });
                }
            }
            Event::Aborted { attempt: txn } => {
                attempt(&txn, &mut attempts);
                let a = attempts.get_mut(&txn).expect("just added");
                if !a.aborted {
                    a.aborted = true;
                    push(&mut steps, Step::JoinAbort { txn });
                }
            }
        }
    }
    let txns = order
        .into_iter()
        .map(|name| {
            let a = attempts.remove(&name).expect("listed");
            let mut branches: Vec<Vec<u64>> = a.branches.into_iter().map(|b| b.keys).collect();
            if branches.is_empty() {
                branches.push(Vec::new());
            }
            Txn { name, branches, writes: a.writes }
        })
        .collect();
    steps.sort_by_key(|(at, _)| *at);
    let steps = steps.into_iter().map(|(_, s)| s).collect();
    Ok(Behaviour { judge: Judge::Exact, ring_skips_unchanged: false, servers, ring: params.ring_size, keys, txns, steps })
}

/// The keys a `ClientCommit { writes: [(key, value), ..], deps: .. }` writes.
fn batch_keys(detail: &str) -> Option<Vec<u64>> {
    let (list, _) = detail.split_once("writes: [")?.1.split_once("], deps")?;
    list.split("), (").map(|pair| pair.trim_matches(|c| c == '(' || c == ')').split(',').next()?.trim().parse().ok()).collect()
}

// ---------------------------------------------------------------------------------------------
// The trace module.

fn tla_txn(t: &str) -> String {
    format!("{t:?}")
}

fn tla_key(k: u64) -> String {
    format!("\"k{k}\"")
}

fn tla_write(w: &WriteId) -> String {
    format!("<<{}, {}>>", w.txn.as_deref().map_or("\"init\"".to_string(), tla_txn), tla_key(w.key))
}

fn tla_set<T>(items: impl IntoIterator<Item = T>, f: impl Fn(T) -> String) -> String {
    format!("{{{}}}", items.into_iter().map(f).collect::<Vec<_>>().join(", "))
}

fn tla_record(step: &Step) -> String {
    match step {
        Step::Read { txn, branch, server, key, floor, got } => format!(
            "[a |-> \"Read\", t |-> {}, b |-> {branch}, s |-> {server}, k |-> {}, f |-> {}, got |-> {}]",
            tla_txn(txn),
            tla_key(*key),
            floor.as_ref().map_or("<<>>".to_string(), tla_write),
            got.as_ref().map_or("<<\"abort\">>".to_string(), tla_write)
        ),
        Step::OrphanRead { server, integrate, .. } => {
            format!("[a |-> \"OrphanRead\", s |-> {server}, d |-> {}]", tla_set(integrate, tla_write))
        }
        Step::ValidateJoin { txn, server, ok } => {
            format!("[a |-> \"ValidateJoin\", t |-> {}, s |-> {server}, ok |-> {}]", tla_txn(txn), if *ok { "TRUE" } else { "FALSE" })
        }
        Step::Fork { txn, from, to } => format!("[a |-> \"Fork\", t |-> {}, from |-> {from}, to |-> {to}]", tla_txn(txn)),
        Step::ChainDone { txn } => format!("[a |-> \"ChainDone\", t |-> {}]", tla_txn(txn)),
        Step::JoinLocal { txn } => format!("[a |-> \"JoinLocal\", t |-> {}]", tla_txn(txn)),
        Step::JoinAbort { txn } => format!("[a |-> \"JoinAbort\", t |-> {}]", tla_txn(txn)),
        Step::Commit { txn, server, vc } => format!(
            "[a |-> \"Commit\", t |-> {}, s |-> {server}, vc |-> <<{}>>]",
            tla_txn(txn),
            vc.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
        ),
        Step::Chain { action, server, batch } => format!("[a |-> \"{action}\", s |-> {server}, batch |-> {}]", tla_txn(batch)),
        Step::Disseminated { server, writes } => format!("[a |-> \"Disseminated\", s |-> {server}, d |-> {}]", tla_set(writes, tla_write)),
    }
}

/// The generated trace module and its config; `relax` (1-based) leaves that step's
/// observation unchecked and stops there (as in `trace_validation::tla`).
pub fn tla(b: &Behaviour, relax: Option<usize>) -> (String, String) {
    let fun = |pairs: Vec<(String, String)>| -> String {
        format!("({})", pairs.into_iter().map(|(k, v)| format!("{k} :> {v}")).collect::<Vec<_>>().join(" @@\n    "))
    };
    let plan = fun(b
        .txns
        .iter()
        .map(|t| {
            let branches: Vec<String> =
                t.branches.iter().map(|ks| format!("<<{}>>", ks.iter().map(|k| tla_key(*k)).collect::<Vec<_>>().join(", "))).collect();
            (tla_txn(&t.name), format!("<<{}>>", branches.join(", ")))
        })
        .collect());
    let writes = fun(b.txns.iter().map(|t| (tla_txn(&t.name), tla_set(&t.writes, |k| tla_key(*k)))).collect());
    let steps: Vec<String> = b.steps.iter().map(tla_record).collect();
    let module = format!(
        r#"---- MODULE CausalMeshTCCTrace ----
\* Generated by causim: a simulator run of CausalMesh-TCC as a behaviour of CausalMeshTCC.tla.
EXTENDS CausalMeshTCC
CONSTANTS Relax, Judge
VARIABLES step, seen

TraceKeys == {keys}
TraceTxns == {txns}
TracePlan == {plan}
TraceWrites == {writes}

TraceSteps == <<
    {steps}
>>

Vec(sq) == [i \in Servers |-> sq[i + 1]]
Batch(t) == {{<<t, k>> : k \in WritesOf[t]}}
Rest == <<gvc, chan, wr, pc, rs, phase, joins>>

(* What the Rust model does that the spec leaves out (specs/README.md, "Trace validation"). *)

\* A retried attempt's read with a floor f (a write of the key read an earlier attempt found
\* it needed): f is integrated with the read set, and the versions at or above f (in the
\* arbitration order) are the only candidates when the ring has one.
FloorRead(t, b, s, f) ==
    /\ phase[t] = "read"
    /\ ~Finished(t, b)
    /\ LET k     == Plan[t][b][pc[t][b] + 1]
           R     == IntegrateAt(s, ic[s], rs[t][b] \cup {{f}})
           q     == R.cc[k]
           above == {{i \in 1..Len(q) : q[i].win = f \/ LexLess(wr[f].vc, wr[q[i].win].vc)}}
           cands == IF above = {{}} THEN 1..Len(q) ELSE above
           ok    == {{i \in cands : IsCut(rs[t][b] \cup {{q[i].win}}, CutRule)}}
       IN  /\ cc' = [cc EXCEPT ![s] = R.cc]
           /\ ic' = [ic EXCEPT ![s] = R.ic]
           /\ IF ok = {{}}
              THEN /\ phase' = [phase EXCEPT ![t] = "aborted"]
                   /\ UNCHANGED <<pc, rs>>
              ELSE LET i == CHOOSE i \in ok : \A j \in ok : i <= j
                   IN  /\ rs' = [rs EXCEPT ![t][b] = @ \cup {{q[i].win}}]
                       /\ pc' = [pc EXCEPT ![t][b] = @ + 1]
                       /\ UNCHANGED phase
    /\ UNCHANGED <<gvc, chan, wr, joins>>

\* The Rust model's ring (ring_skips_unchanged): a merge that changes neither the newest
\* version's clock nor its winner appends nothing, so it does not push out the oldest entry.
IntegrateSkipUnchanged(s, E, D) ==
    LET W == Pull(E, D)
    IN  [cc |-> [k \in Keys |->
                   LET Wk == {{x \in W : KeyOf(x) = k}}
                       m  == MergeInto(Newest(cc[s][k]), Wk)
                   IN  IF Wk = {{}} \/ m = Newest(cc[s][k]) THEN cc[s][k]
                       ELSE Keep(Append(cc[s][k], m))],
         ic |-> E \ W]

\* A read judged with a superset of each write's dependencies (Judge = "superset"): the
\* server may serve any version of its ring, at or above the floor f if it has one (f = <<>>:
\* none), that forms a cut with the read set, or abort.
ReadAnyCut(t, b, s, f, got) ==
    /\ phase[t] = "read"
    /\ ~Finished(t, b)
    /\ LET k     == Plan[t][b][pc[t][b] + 1]
           F     == IF f = <<>> THEN {{}} ELSE {{f}}
           R     == IntegrateAt(s, ic[s], rs[t][b] \cup F)
           q     == R.cc[k]
           above == {{i \in 1..Len(q) : \E x \in F : q[i].win = x \/ LexLess(wr[x].vc, wr[q[i].win].vc)}}
           cands == IF above = {{}} THEN 1..Len(q) ELSE above
       IN  /\ cc' = [cc EXCEPT ![s] = R.cc]
           /\ ic' = [ic EXCEPT ![s] = R.ic]
           /\ IF got = <<"abort">>
              THEN /\ phase' = [phase EXCEPT ![t] = "aborted"]
                   /\ UNCHANGED <<pc, rs>>
              ELSE /\ \E i \in cands : q[i].win = got
                   /\ IsCut(rs[t][b] \cup {{got}}, CutRule)
                   /\ rs' = [rs EXCEPT ![t][b] = @ \cup {{got}}]
                   /\ pc' = [pc EXCEPT ![t][b] = @ + 1]
                   /\ UNCHANGED phase
    /\ UNCHANGED <<gvc, chan, wr, joins>>

\* A sibling branch's read reaching its server after the attempt aborted: the server
\* integrates what the request names and answers a function that is gone.
OrphanRead(s, D) ==
    LET R == IntegrateAt(s, ic[s], D)
    IN  /\ cc' = [cc EXCEPT ![s] = R.cc]
        /\ ic' = [ic EXCEPT ![s] = R.ic]
        /\ UNCHANGED Rest

\* A fan-out after reads: branch `to` starts from the reads branch `from` has done so far.
Fork(t, from, to) ==
    /\ phase[t] = "read" /\ pc[t][to] = 0 /\ rs[t][to] = {{}}
    /\ rs' = [rs EXCEPT ![t][to] = rs[t][from]]
    /\ UNCHANGED <<cc, ic, gvc, chan, wr, pc, phase, joins>>

AllFinished(t) == \A b \in Branches(t) : Finished(t, b)

\* A join whose union is one branch's read set (already a cut): no server is asked.
JoinLocal(t) ==
    /\ phase[t] = "read" /\ Len(Plan[t]) > 1 /\ AllFinished(t)
    /\ \E b \in Branches(t) : rs[t][b] = ReadSet(t)
    /\ phase' = [phase EXCEPT ![t] = "joined"]
    /\ joins' = joins \cup {{ReadSet(t)}}
    /\ UNCHANGED <<cc, ic, gvc, chan, wr, pc, rs>>

\* A join the client itself finds fractured (two versions of a key, or a direct dependency
\* newer than the version read): the attempt aborts with no server asked.
JoinAbort(t) ==
    /\ phase[t] = "read" /\ Len(Plan[t]) > 1 /\ AllFinished(t)
    /\ ~IsCut(ReadSet(t), "transitive")
    /\ phase' = [phase EXCEPT ![t] = "aborted"]
    /\ UNCHANGED <<cc, ic, gvc, chan, wr, pc, rs, joins>>

\* The tail's dissemination: a server integrates writes whose batch has left every chain.
Disseminated(s, D) ==
    /\ \A id \in D : wr[id].made
    /\ \A p \in Servers : \A i \in 1..Len(chan[p]) : chan[p][i].ids \cap D = {{}}
    /\ LET R == IntegrateAt(s, ic[s], D)
       IN  /\ cc' = [cc EXCEPT ![s] = R.cc]
           /\ ic' = [ic EXCEPT ![s] = R.ic]
    /\ UNCHANGED Rest

Act(e) ==
    CASE e.a = "Read"          -> IF Judge = "superset" THEN ReadAnyCut(e.t, e.b, e.s, e.f, e.got)
                                  ELSE IF e.f = <<>> THEN Read(e.t, e.b, e.s) ELSE FloorRead(e.t, e.b, e.s, e.f)
      [] e.a = "OrphanRead"    -> OrphanRead(e.s, e.d)
      [] e.a = "ValidateJoin"  -> ValidateJoin(e.t, e.s)
      [] e.a = "Fork"          -> Fork(e.t, e.from, e.to)
      [] e.a = "ChainDone"     -> ChainDone(e.t)
      [] e.a = "JoinLocal"     -> JoinLocal(e.t)
      [] e.a = "JoinAbort"     -> JoinAbort(e.t)
      [] e.a = "Commit"        -> Commit(e.t, e.s)
      [] e.a = "Forward"       -> Forward(e.s)
      [] e.a = "TailIntegrate" -> TailIntegrate(e.s)
      [] e.a = "Disseminated"  -> Disseminated(e.s, e.d)

\* What the spec shows at step e (evaluated after Act(e)).
Observation(e) ==
    CASE e.a = "Read"         -> [got |-> IF phase'[e.t] = "aborted" THEN <<"abort">>
                                          ELSE LET new == rs'[e.t][e.b] \ rs[e.t][e.b]
                                               IN  IF new = {{}} THEN <<>> ELSE CHOOSE x \in new : TRUE]
      [] e.a = "ValidateJoin" -> [ok |-> phase'[e.t] = "joined"]
      [] e.a = "Commit"       -> [vc |-> IF WritesOf[e.t] = {{}} THEN <<>> ELSE wr'[CHOOSE x \in Batch(e.t) : TRUE].vc]
      [] e.a \in {{"Forward", "TailIntegrate"}} -> [ids |-> InMsg(e.s).ids]
      [] OTHER                -> [none |-> TRUE]

\* ... and whether it is what the simulator showed.
Matches(e, o) ==
    CASE e.a = "Read"         -> o.got = e.got
      [] e.a = "ValidateJoin" -> o.ok = e.ok
      [] e.a = "Commit"       -> IF e.vc = <<>> THEN o.vc = <<>> ELSE o.vc = Vec(e.vc)
      [] e.a \in {{"Forward", "TailIntegrate"}} -> o.ids = Batch(e.batch)
      [] OTHER                -> TRUE

{replay}====
"#,
        keys = tla_set(&b.keys, |k| tla_key(*k)),
        txns = tla_set(&b.txns, |t| tla_txn(&t.name)),
        steps = steps.join(",\n    "),
        replay = replay("", ""),
    );
    let cfg = format!(
        "CONSTANTS\n    N = {}\n    Keys <- TraceKeys\n    Txns <- TraceTxns\n    InitVal = \"init\"\n    Ring = {}\n    \
         Plan <- TracePlan\n    WritesOf <- TraceWrites\n    CutRule = \"transitive\"\n    Mutant = \"none\"\n    Relax = {}\n    Judge = \"{}\"\n{}\
         INIT TraceInit\nNEXT TraceNext\nINVARIANTS\n{}    TypeOK\n    CCacheIsCausalCut\n    AcceptedJoinsAreCuts\n    \
         TxnsReadCausalSnapshots\n",
        b.servers,
        b.ring,
        relax.map_or(b.steps.len() + 1, |r| r),
        match b.judge {
            Judge::Exact => "exact",
            Judge::Superset => "superset",
        },
        if b.ring_skips_unchanged { "    IntegrateAt <- IntegrateSkipUnchanged\n" } else { "" },
        if relax.is_some() { "    TraceIncomplete\n" } else { "" },
    );
    (module, cfg)
}

fn run(b: &Behaviour, relax: Option<usize>, options: &TlcOptions) -> Result<TlcRun, String> {
    let (module, cfg) = tla(b, relax);
    run_tlc_with_files(
        &spec_dir(CausalMeshTcc::ENTRY.name),
        "CausalMeshTCCTrace",
        &cfg,
        &[("CausalMeshTCCTrace.tla".into(), module)],
        options,
    )
    .map_err(|e| e.to_string())
}

/// The scenario a run's `summary.json` says ran.
pub fn scenario_of_summary(summary: &str) -> Result<Scenario, String> {
    let summary: serde_json::Value = serde_json::from_str(summary).map_err(|e| format!("summary.json: {e}"))?;
    serde_json::from_value(summary["resolved_scenario"].clone()).map_err(|e| format!("summary.json: resolved_scenario: {e}"))
}

/// Validates a run's trace (`causim run --out DIR`; `summary` is its `summary.json`).
pub fn validate(trace: &str, summary: &str, options: &TlcOptions) -> Result<Outcome, String> {
    validate_behaviour(&behaviour_of_scenario(trace, &scenario_of_summary(summary)?)?, options)
}

/// Validates a behaviour against the spec with TLC.
pub fn validate_behaviour(b: &Behaviour, options: &TlcOptions) -> Result<Outcome, String> {
    let steps: Vec<String> = b.steps.iter().map(|s| s.to_string()).collect();
    check_trace(steps, options, |relax, options| run(b, relax, options), |seen| seen.to_string())
}

#[cfg(test)]
mod tests {
    use super::{batch_keys, key_vcs, vc_at};

    #[test]
    fn clocks_and_read_sets_parse_from_the_messages_debug_form() {
        let d = "ClientReadTcc { key: 1, read_set: {(0, Vc { c: [0, 0, 0], len: 2 }), (3, Vc { c: [1, 2, 0], len: 2 })}, floor: None }";
        assert_eq!(key_vcs(d), Some(vec![(0, vec![0, 0]), (3, vec![1, 2])]));
        assert_eq!(vc_at("CommitReply { vc: Vc { c: [2, 1, 0, 0], len: 3 } }", 0).map(|v| v.0), Some(vec![2, 1, 0]));
        let commit = "ClientCommit { writes: [(2, 1), (13, 4)], deps: {(3, Vc { c: [1, 0], len: 2 })} }";
        assert_eq!(batch_keys(commit), Some(vec![2, 13]));
        assert_eq!(batch_keys("ClientCommit { writes: [(7, 1)], deps: {} }"), Some(vec![7]));
    }
}
