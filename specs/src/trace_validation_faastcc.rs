//! Trace validation for FaaSTCC: a simulator run as a TLA+ behaviour TLC checks against
//! `specs/faastcc/FaaSTCC.tla` (the correct protocol: `Mutant = "none"`).
//!
//! # A refinement mapping, not a step-by-step match
//!
//! The spec has one store with one clock, atomic commits at `clock + 1`, and pushes of every key
//! at once; the Rust model (`models/src/faastcc/`, `models/src/tcc_store.rs`) has partitions
//! with hybrid clocks, two-phase commits, a stable time each partition learns from the others,
//! and per-partition pushes. Both sides are related by a mapping of the model's states onto the
//! spec's, and each model step becomes zero or one spec step:
//!
//! - **Timestamps.** A model timestamp `x` maps to `φ(x)`, the number of the run's commits
//!   (with writes) stamped at or below `x`: a commit's timestamp maps to its rank, every key's
//!   initial version (timestamp 0) to 0, a promise or a stable time to the number of commits
//!   it covers, `t_next − 1` to `φ(t_next) − 1`, and "no upper bound" to the spec's `Inf`. `φ`
//!   is monotone, so it commutes with the `max` and `min` of Eq. 2 and 3: the spec's intervals
//!   are the images of the model's.
//! - **The store.** The spec's store holds a commit once it is *stable*: the spec's `Commit`
//!   for a transaction is taken, in commit-timestamp order, at the first point of the run where
//!   every commit stamped at or below it (including itself) is installed at all of its
//!   partitions. So the spec's clock counts the commits below the model's global stable time,
//!   and a commit is invisible to the spec's reads until its partitions all apply it. This is
//!   sound because the model reads nothing newer: every snapshot a cache reads at, and every
//!   promise, is at or below the global stable time (`tcc_store.rs`, points 5–6), and a commit
//!   stamped at or below the global stable time is installed at every partition it writes (a
//!   partition holds its stable bound below any transaction it has prepared, and proposes
//!   only above its clock). The sink's decision (`Commit` action, history record) is the spec's
//!   `Join` of the workflow; the commit follows when the store has it.
//! - **Reads.** A function's batch of reads (one `CacheRead`) becomes one spec `Read` per key
//!   at the cache's worker. A key the cache serves from its entry is read where the cache
//!   decides (the `CacheRead` delivery); the served keys come first, newest version first, so
//!   the first raises `lo` as the batch's pass 1 does and an entry promised below it is not
//!   served, as pass 2 refreshes it. A key the cache fetches is read where the store's answer
//!   reaches the cache and is installed (the `StoreReadReply` delivery): the spec's `Read`
//!   installs at once, so an earlier place would let a concurrent request find the answer
//!   before the model's cache has it. Each step must show what the model observed: served or
//!   fetched, the version and its promise (a fetched one must be an answer of the spec's store,
//!   the entry the cache then holds the fresher of the two), the interval narrowed by Eq. 2,
//!   and, at a batch's first read, the interval the function carried in. A read served
//!   locally (the workflow's own write, or a key it read before) is no protocol step.
//! - **Pushes and stable times.** A partition's push to a cache is `PushFrom(w, ks, x)`
//!   (generated module): the cache installs, for each key pushed that it holds, the store's
//!   version at the push's stable time `x`, promised up to `x`, if it is newer (or the same
//!   version with a longer promise), and learns `x`. A store reply's stable time is the same
//!   step with no keys, after the reply's reads. The spec's own `Push(w)` is the special case
//!   `ks = Keys`, `x = clock`, except that it never lengthens the promise of a version a cache
//!   already holds, which the Rust cache does (the same version with a longer promise is
//!   fresher, §4.3).
//! - **Workflow shapes.** A chain of functions is one spec branch. A fan-out starts new
//!   branches (`Fork`, generated module: a branch starts from another's interval and reads),
//!   and the function with several parents is the spec's `Join` (Eq. 3). A retried attempt is
//!   a transaction of its own that starts from the aborted attempt's `lo` (`Restart`,
//!   generated module: "restart from a recent snapshot", §4.1).
//!
//! Prepares, installs, stabilisation messages and store requests are stuttering steps: they
//! change no spec variable (an install is invisible until the commit is stable, above).
//!
//! # Where the model departs from the spec's letter
//!
//! With `Behaviour::relaxed` (the default), three choices of the spec's `Read` are widened by
//! the config (`Serves <- MayFetch`, `Snapshots <- LaggingSnapshots`, `Promises <-
//! LaggingPromises`): a cache may fetch an entry it could serve (the Rust cache answers
//! requests concurrently, and a request for a key another request is still fetching finds the
//! entry without the answer), the store may answer at any snapshot inside the reader's
//! interval up to the clock (a batch reads all its missing keys at one snapshot, where the
//! spec reads key by key at the narrowed `hi`), and may promise less than the spec's largest
//! sound promise (a partition's stable time lags the global one). Each is a safe weakening,
//! and TLC checks every invariant of the spec in every state. With `relaxed` off the spec's
//! own choices are required: the shipped scenarios pass that way; generated workloads leave
//! it at a read (specs/README.md, "Trace validation").
//! A cache that is not pre-warmed starts with no entry (`InitEntry <- Missing`): never
//! consistent, never fresher than an answer, so a read misses and installs, as §4.6's miss.
//!
//! # Limits
//!
//! Refused with the reason: faults and message loss, `promise_bumps` (promises renewed by
//! pushes, which the spec leaves out), garbage-collection aborts (the spec keeps every
//! version), reads after a join, several joins or several sinks. A trace that ends before a
//! commit is installed everywhere leaves that commit (and later ones) out of the spec's store.
//! `causim model-check … --validate-trace DIR` routes a `faastcc` run here.

use crate::tlc::{TlcOptions, TlcRun, run_tlc_with_files, spec_dir};
pub use crate::trace_validation::Outcome;
use crate::trace_validation::{check_trace, parse_lines, replay};
use causim_models::Model;
use causim_models::faastcc::{Faastcc, Params};
use causim_models::tcc_store::{TS_INF, Ts};
use causim_pipeline::Scenario;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// One step of the behaviour; timestamps are the spec's (`φ` of the model's, `INF` unbounded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Branch `branch` (from 1) of `txn` reads `key` at cache `worker` and gets the version
    /// `ts` written by `writer` (`None`: the initial version), promised up to `promise`;
    /// `served`: from the cache's entry (else from the store's answer, which the cache installs
    /// if it is fresher than its entry); `start`: the interval the function carried into its
    /// batch (on the batch's first read).
    Read {
        txn: String,
        branch: usize,
        worker: usize,
        key: u64,
        ts: u64,
        promise: u64,
        writer: Option<String>,
        served: bool,
        start: Option<(u64, u64)>,
    },
    /// A fan-out: branch `to` of `txn` starts from branch `from`'s interval and reads.
    Fork { txn: String, from: usize, to: usize },
    /// A retried attempt starts from `lo`.
    Restart { txn: String, lo: u64 },
    /// The workflow's branches join (its sink starts), with the interval the sink carried,
    /// or abort on an empty intersection.
    Join { txn: String, ok: bool, lo: u64, hi: u64 },
    /// The commit, once stable; `ts` is `None` for a read-only workflow (no store step).
    Commit { txn: String, ts: Option<u64> },
    /// A push from a partition to `worker` (or, without versions, a store reply's stable
    /// time): each key's version `(key, ts, writer)`, promised up to `stable`.
    Push { worker: usize, stable: u64, versions: Vec<(u64, u64, Option<String>)> },
}

/// The spec's "no upper bound" in a behaviour (`TraceInf` in the generated module).
pub const INF: u64 = u64::MAX;

/// A timestamp of the behaviour as the step texts and the trace module print it.
fn show_ts(x: u64) -> String {
    if x == INF { "Inf".into() } else { x.to_string() }
}

fn show_writer(w: &Option<String>) -> String {
    w.as_ref().map_or("the initial version".to_string(), |t| format!("{t}'s version"))
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Read { txn, branch, worker, key, ts, promise, writer, served, start } => {
                write!(f, "Read: {txn} (branch {branch}) reads k{key} at S{worker}")?;
                if let Some((lo, hi)) = start {
                    write!(f, " in [{}, {}]", show_ts(*lo), show_ts(*hi))?;
                }
                let from = if *served { "its cache" } else { "the store" };
                write!(f, " and gets {} (ts {ts}, promise {promise}) from {from}", show_writer(writer))
            }
            Step::Fork { txn, from, to } => write!(f, "Fork: {txn}'s branch {to} starts from branch {from}"),
            Step::Restart { txn, lo } => write!(f, "Restart: {txn} starts from lo = {lo}"),
            Step::Join { txn, ok: true, lo, hi } => write!(f, "Join: {txn}'s sink starts in [{}, {}]", show_ts(*lo), show_ts(*hi)),
            Step::Join { txn, ok: false, lo, hi } => {
                write!(f, "Join: {txn} aborts, its branches' intervals meet in [{}, {}]", show_ts(*lo), show_ts(*hi))
            }
            Step::Commit { txn, ts: None } => write!(f, "Commit: {txn} ends with no writes"),
            Step::Commit { txn, ts: Some(ts) } => write!(f, "Commit: {txn}'s writes are stable, stamped {ts}"),
            Step::Push { worker, stable, versions } if versions.is_empty() => write!(f, "Push: S{worker} learns stable time {stable}"),
            Step::Push { worker, stable, versions } => {
                let vs: Vec<String> = versions.iter().map(|(k, ts, w)| format!("k{k} = {} (ts {ts})", show_writer(w))).collect();
                write!(f, "Push: S{worker} gets {} at stable time {stable}", vs.join(", "))
            }
        }
    }
}

pub use crate::trace_validation::Txn;

/// The behaviour a run's trace describes.
#[derive(Clone, Debug)]
pub struct Behaviour {
    pub servers: usize,
    /// Caches start holding every key's initial version (`params.prewarm`).
    pub prewarm: bool,
    /// Widen `Read`'s choices: the cache may fetch an entry it could serve, the store answer
    /// at any snapshot of the interval and promise less (module docs, "Where the model departs").
    pub relaxed: bool,
    pub keys: BTreeSet<u64>,
    pub txns: Vec<Txn>,
    pub steps: Vec<Step>,
    /// Commits with writes in the run (the largest finite timestamp is at most this).
    pub commits: u64,
}

/// Why a run is outside what the spec covers, if it is.
pub fn out_of_scope(scenario: &Scenario) -> Option<String> {
    if scenario.protocol.name != Faastcc::ENTRY.name {
        return Some(format!("trace validation against FaaSTCC.tla is for {} runs, not {}", Faastcc::ENTRY.name, scenario.protocol.name));
    }
    let params: Params = match causim_models::parse_params(&scenario.protocol.params) {
        Ok(p) => p,
        Err(e) => return Some(format!("protocol.{e}")),
    };
    if params.promise_bumps {
        return Some("the spec renews promises only by reads, not by pushes (params.promise_bumps is on)".into());
    }
    let faults = &scenario.faults;
    if !faults.partitions.is_empty() || !faults.crashes.is_empty() || faults.loss_probability > 0.0 {
        return Some("the spec has no faults (the scenario has partitions, crashes or message loss)".into());
    }
    None
}

// ---------------------------------------------------------------------------------------------
// The messages' `detail` (their Debug form).

/// The number after `name: ` in `s`, where `name` is a whole field name.
fn number(s: &str, name: &str) -> Option<u64> {
    let pat = format!("{name}: ");
    let mut from = 0;
    while let Some(at) = s[from..].find(&pat).map(|i| from + i) {
        let whole = at == 0 || !s[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        let rest = &s[at + pat.len()..];
        if whole {
            return rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok();
        }
        from = at + pat.len();
    }
    None
}

/// `Some(n)` → `Some(Some(n))`, `None` → `Some(None)`, after `name: ` in `s`.
fn optional(s: &str, name: &str) -> Option<Option<u64>> {
    let at = s.find(&format!("{name}: "))? + name.len() + 2;
    let rest = &s[at..];
    if rest.starts_with("None") {
        return Some(None);
    }
    Some(Some(rest.strip_prefix("Some(")?.split(')').next()?.parse().ok()?))
}

/// The items of the bracketed list after `name: [` in `s`, split at top-level commas.
fn items<'a>(s: &'a str, name: &str) -> Option<Vec<&'a str>> {
    let start = s.find(&format!("{name}: ["))? + name.len() + 3;
    let (mut depth, mut from, mut out) = (0i32, start, Vec::new());
    for (i, c) in s[start..].char_indices().map(|(i, c)| (start + i, c)) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | '}' => depth -= 1,
            ']' if depth == 0 => {
                let last = s[from..i].trim();
                if !last.is_empty() {
                    out.push(last);
                }
                return Some(out);
            }
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    None
}

/// The leading key of a `(key, …)` item.
fn item_key(item: &str) -> Option<u64> {
    item.strip_prefix('(')?.split(',').next()?.trim().parse().ok()
}

fn bad(kind: &str, detail: &str) -> String {
    format!("cannot read a {kind} message: {detail}")
}

fn attempt_of(function: &str) -> &str {
    function.rsplit_once('/').map_or(function, |(a, _)| a)
}

fn function_index(function: &str) -> Option<u32> {
    function.rsplit_once("/f")?.1.parse().ok()
}

// ---------------------------------------------------------------------------------------------
// From a trace to a behaviour.

/// A function's batch of reads at its cache, as the run shows it.
struct Batch {
    function: String,
    worker: usize,
    keys: Vec<u64>,
    interval: (Ts, Ts),
    /// The cache's storage request: `(cache req, each fetched key's cached timestamp)`.
    fetch: Option<(u64, BTreeMap<u64, Option<Ts>>)>,
    /// Where the cache received it (and decided what to serve and what to fetch).
    asked_at: usize,
    /// Whether the function received the answer.
    answered: bool,
    /// Where each fetched key's answer reached the cache (and was installed).
    fetched_at: BTreeMap<u64, usize>,
    /// `(key, value, t, p)` per key, from the `CacheReply`.
    answers: Vec<(u64, Option<u64>, Ts, Ts)>,
}

/// A stable time a cache heard from a partition (a push, or a store reply: no versions), and
/// the versions pushed, `(key, value, ts)`.
struct Heard {
    at: usize,
    worker: usize,
    stable: Ts,
    versions: Vec<(u64, Option<u64>, Ts)>,
}

/// A workflow attempt, as the run shows it.
#[derive(Default)]
struct Attempt {
    /// The functions placed.
    functions: BTreeSet<u32>,
    /// Function index → where it finished (`done`).
    done_at: BTreeMap<u32, usize>,
    first_seen: Option<usize>,
    /// The sink's record: where, whether it committed, its interval, its commit timestamp.
    end: Option<(usize, bool, Ts, Ts, Ts)>,
    writes: BTreeSet<u64>,
    tx: Option<u64>,
}

/// Reads a run's trace and history into a behaviour; `scenario` is the scenario that ran.
pub fn behaviour_of_scenario(trace: &str, history: &str, scenario: &Scenario) -> Result<Behaviour, String> {
    if let Some(why) = out_of_scope(scenario) {
        return Err(format!("out of scope: {why}"));
    }
    let params: Params = causim_models::parse_params(&scenario.protocol.params).map_err(|e| format!("protocol.{e}"))?;
    let servers = scenario.topology.servers as usize;
    let worker_of = |name: &str| -> Option<usize> { name.strip_prefix('S')?.parse().ok().filter(|i| *i < servers) };
    let is_partition = |name: &str| name.strip_prefix('P').is_some_and(|i| i.parse::<u32>().is_ok_and(|i| i < params.partitions));

    // Each attempt's function DAG, from the sinks' records (`fn_after`); none: one chain.
    let mut edges: BTreeMap<String, Vec<(u32, u32)>> = BTreeMap::new();
    for line in parse_lines(history, "history.jsonl")? {
        let Some(session) = line["session"].as_str() else { continue };
        let pairs = line["fn_after"].as_array().into_iter().flatten();
        let pairs: Vec<(u32, u32)> = pairs.filter_map(|p| Some((p[0].as_u64()? as u32, p[1].as_u64()? as u32))).collect();
        if !pairs.is_empty() {
            edges.insert(attempt_of(session).to_string(), pairs);
        }
    }

    // Pass 1: what the run shows.
    let events = parse_lines(trace, "trace.jsonl")?;
    let mut batches: Vec<Batch> = Vec::new();
    let mut open: BTreeMap<String, VecDeque<usize>> = BTreeMap::new(); // function → its batches awaiting an answer
    let mut last_read_at: BTreeMap<usize, usize> = BTreeMap::new(); // cache → its latest batch
    let mut by_fetch: BTreeMap<(usize, u64), usize> = BTreeMap::new(); // (cache, req) → batch
    let mut pushes: Vec<Heard> = Vec::new();
    let mut attempts: BTreeMap<String, Attempt> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut writer: BTreeMap<(u64, u64), String> = BTreeMap::new();
    let mut tx_attempt: BTreeMap<u64, String> = BTreeMap::new();
    let mut prepared: BTreeMap<u64, usize> = BTreeMap::new(); // tx → partitions
    let mut installs: BTreeMap<u64, Vec<usize>> = BTreeMap::new(); // tx → install positions
    let mut aborts: BTreeMap<String, Ts> = BTreeMap::new(); // attempt → the lo it aborted with
    let mut keys: BTreeSet<u64> = BTreeSet::new();
    let mut attempt = |name: &str, at: usize, attempts: &mut BTreeMap<String, Attempt>| {
        let a = attempts.entry(name.to_string()).or_insert_with(|| {
            order.push(name.to_string());
            Attempt::default()
        });
        a.first_seen.get_or_insert(at);
    };
    for (i, ev) in events.iter().enumerate() {
        let kind = ev["msg"].as_str().unwrap_or("");
        let detail = ev["detail"].as_str().unwrap_or("");
        let from = ev["from"].as_str().unwrap_or("");
        let to = ev["to"].as_str().unwrap_or("");
        match ev["ev"].as_str() {
            Some("drop") => return Err("out of scope: a message was lost".into()),
            Some("place") => {
                let function = ev["fn"].as_str().unwrap_or("");
                attempt(attempt_of(function), i, &mut attempts);
                let f = function_index(function).ok_or_else(|| format!("trace.jsonl: a function named {function}"))?;
                attempts.get_mut(attempt_of(function)).expect("added").functions.insert(f);
            }
            Some("done") => {
                let function = ev["fn"].as_str().unwrap_or("");
                if let Some(f) = function_index(function) {
                    attempt(attempt_of(function), i, &mut attempts);
                    attempts.get_mut(attempt_of(function)).expect("added").done_at.insert(f, i);
                }
            }
            Some("action") => {
                let node = ev["node"].as_str().unwrap_or("");
                let args = &ev["args"];
                let arg = |name: &str| args[name].as_u64().ok_or_else(|| format!("trace.jsonl: a {} action without {name}", ev["action"]));
                match ev["action"].as_str() {
                    Some("CacheFetch") => {
                        let w = worker_of(node).ok_or_else(|| format!("CacheFetch at {node}"))?;
                        let b = *last_read_at.get(&w).ok_or_else(|| format!("{node} fetches for no read"))?;
                        batches[b].fetch = Some((arg("req")?, BTreeMap::new()));
                        by_fetch.insert((w, arg("req")?), b);
                    }
                    Some("Install") => installs.entry(arg("tx")?).or_default().push(i),
                    Some("Commit") | Some("Abort") => {
                        let name = attempt_of(node).to_string();
                        attempt(&name, i, &mut attempts);
                        let committed = ev["action"] == "Commit";
                        if !committed {
                            let reason = args["reason"].as_str().unwrap_or("");
                            if reason != "empty_interval" {
                                return Err(format!("out of scope: {name} aborts ({reason}): the spec keeps every version"));
                            }
                            aborts.insert(name.clone(), arg("lo")?);
                        }
                        let ct = if committed { arg("ct")? } else { 0 };
                        attempts.get_mut(&name).expect("added").end = Some((i, committed, arg("lo")?, arg("hi")?, ct));
                    }
                    _ => {}
                }
            }
            Some("deliver") => match kind {
                "CacheRead" => {
                    let w = worker_of(to).ok_or_else(|| bad(kind, detail))?;
                    let ks: Vec<u64> = items(detail, "keys")
                        .ok_or_else(|| bad(kind, detail))?
                        .iter()
                        .map(|k| k.parse().ok())
                        .collect::<Option<_>>()
                        .ok_or_else(|| bad(kind, detail))?;
                    let interval =
                        (number(detail, "lo").ok_or_else(|| bad(kind, detail))?, number(detail, "hi").ok_or_else(|| bad(kind, detail))?);
                    keys.extend(ks.iter().copied());
                    batches.push(Batch {
                        function: from.to_string(),
                        worker: w,
                        keys: ks,
                        interval,
                        fetch: None,
                        asked_at: i,
                        answered: false,
                        fetched_at: BTreeMap::new(),
                        answers: Vec::new(),
                    });
                    let b = batches.len() - 1;
                    last_read_at.insert(w, b);
                    open.entry(from.to_string()).or_default().push_back(b);
                }
                "StoreRead" if is_partition(to) => {
                    let w = worker_of(from).ok_or_else(|| bad(kind, detail))?;
                    let req = number(detail, "req").ok_or_else(|| bad(kind, detail))?;
                    let b = *by_fetch.get(&(w, req)).ok_or_else(|| format!("{from}'s store read {req} follows no fetch"))?;
                    for item in items(detail, "keys").ok_or_else(|| bad(kind, detail))? {
                        let key = item_key(item).ok_or_else(|| bad(kind, detail))?;
                        let cached = match item.split_once("Some(") {
                            Some((_, rest)) => Some(rest.split(')').next().and_then(|n| n.parse().ok()).ok_or_else(|| bad(kind, detail))?),
                            None => None,
                        };
                        batches[b].fetch.as_mut().expect("fetched").1.insert(key, cached);
                    }
                }
                "StoreReadReply" => {
                    let w = worker_of(to).ok_or_else(|| bad(kind, detail))?;
                    let req = number(detail, "req").ok_or_else(|| bad(kind, detail))?;
                    if items(detail, "entries").ok_or_else(|| bad(kind, detail))?.iter().any(|e| e.ends_with(", None)")) {
                        return Err("out of scope: the store had collected a version a read needed (the spec keeps every version)".into());
                    }
                    let b = *by_fetch.get(&(w, req)).ok_or_else(|| format!("a store reply to {to}'s read {req}, which it did not send"))?;
                    for item in items(detail, "entries").ok_or_else(|| bad(kind, detail))? {
                        batches[b].fetched_at.insert(item_key(item).ok_or_else(|| bad(kind, detail))?, i);
                    }
                    pushes.push(Heard {
                        at: i,
                        worker: w,
                        stable: number(detail, "lst").ok_or_else(|| bad(kind, detail))?,
                        versions: Vec::new(),
                    });
                }
                "CacheReply" => {
                    let b = open
                        .get_mut(to)
                        .and_then(|q| q.pop_front())
                        .ok_or_else(|| format!("a cache reply to {to}, which asked nothing"))?;
                    batches[b].answered = true;
                    for item in items(detail, "answers").ok_or_else(|| bad(kind, detail))? {
                        if item.contains("Collected") {
                            return Err("out of scope: a read found its version collected (the spec keeps every version)".into());
                        }
                        let key = item_key(item).ok_or_else(|| bad(kind, detail))?;
                        let value = optional(item, "value").ok_or_else(|| bad(kind, detail))?;
                        let (t, p) =
                            (number(item, "t").ok_or_else(|| bad(kind, detail))?, number(item, "p").ok_or_else(|| bad(kind, detail))?);
                        batches[b].answers.push((key, value, t, p));
                    }
                }
                "Notify" => {
                    let w = worker_of(to).ok_or_else(|| bad(kind, detail))?;
                    let mut versions = Vec::new();
                    for item in items(detail, "entries").ok_or_else(|| bad(kind, detail))? {
                        let key = number(item, "key").ok_or_else(|| bad(kind, detail))?;
                        let value = optional(item, "value").ok_or_else(|| bad(kind, detail))?;
                        versions.push((key, value, number(item, "ts").ok_or_else(|| bad(kind, detail))?));
                        keys.insert(key);
                    }
                    pushes.push(Heard { at: i, worker: w, stable: number(detail, "lst").ok_or_else(|| bad(kind, detail))?, versions });
                }
                "Prepare" => {
                    let tx = number(detail, "tx").ok_or_else(|| bad(kind, detail))?;
                    let name = attempt_of(from).to_string();
                    attempt(&name, i, &mut attempts);
                    for item in items(detail, "writes").ok_or_else(|| bad(kind, detail))? {
                        let (k, v) = item.trim_matches(|c| c == '(' || c == ')').split_once(',').ok_or_else(|| bad(kind, detail))?;
                        let (k, v): (u64, u64) =
                            (k.trim().parse().map_err(|_| bad(kind, detail))?, v.trim().parse().map_err(|_| bad(kind, detail))?);
                        writer.insert((k, v), name.clone());
                        keys.insert(k);
                        attempts.get_mut(&name).expect("added").writes.insert(k);
                    }
                    attempts.get_mut(&name).expect("added").tx = Some(tx);
                    tx_attempt.insert(tx, name);
                    *prepared.entry(tx).or_default() += 1;
                }
                _ => {}
            },
            _ => {}
        }
    }

    // The commits, in timestamp order, and where each becomes stable.
    let mut commits: Vec<(Ts, String, usize)> = Vec::new(); // (ct, attempt, record position)
    for (name, a) in &attempts {
        if let (Some((at, true, _, _, ct)), false) = (a.end, a.writes.is_empty()) {
            commits.push((ct, name.clone(), at));
        }
    }
    commits.sort();
    let cts: Vec<Ts> = commits.iter().map(|c| c.0).collect();
    let phi = |x: Ts| -> u64 { if x == TS_INF { INF } else { cts.partition_point(|c| *c <= x) as u64 } };
    let mut stable_at: Vec<(usize, String)> = Vec::new();
    let mut running = 0usize;
    for (_, name, at) in &commits {
        let tx = attempts[name].tx.expect("a commit with writes prepared");
        let done = installs.get(&tx).map_or(0, |v| v.len());
        if done < prepared[&tx] {
            break; // not installed everywhere by the end: neither it nor later commits are stable
        }
        running = running.max(*at).max(*installs[&tx].iter().max().expect("installed"));
        stable_at.push((running, name.clone()));
    }
    let write_of = |key: u64, value: Option<u64>| -> Result<Option<String>, String> {
        match value {
            None => Ok(None),
            Some(v) => {
                writer.get(&(key, v)).cloned().map(Some).ok_or_else(|| format!("a version of key {key} = {v}, which no commit wrote"))
            }
        }
    };

    // Pass 2: the steps, each with where it goes (position, then order of creation).
    let mut steps: Vec<((usize, usize), Step)> = Vec::new();
    let push = |steps: &mut Vec<((usize, usize), Step)>, at: usize, step: Step| {
        let n = steps.len();
        steps.push(((at, n), step))
    };
    // Branches: each function's branch (None: the join), and the plan.
    let mut plans: BTreeMap<String, Vec<Vec<u64>>> = BTreeMap::new();
    let mut branch_of: BTreeMap<(String, u32), Option<usize>> = BTreeMap::new();
    for name in &order {
        let a = &attempts[name];
        let functions: BTreeSet<u32> =
            a.functions.iter().copied().chain(edges.get(name).into_iter().flatten().flat_map(|(x, y)| [*x, *y])).collect();
        let dag =
            edges.get(name).cloned().unwrap_or_else(|| functions.iter().zip(functions.iter().skip(1)).map(|(x, y)| (*x, *y)).collect());
        let parents = |f: u32| -> Vec<u32> { dag.iter().filter(|(_, y)| *y == f).map(|(x, _)| *x).collect() };
        let children = |f: u32| -> Vec<u32> { dag.iter().filter(|(x, _)| *x == f).map(|(_, y)| *y).collect() };
        let mut branches: Vec<Vec<u64>> = Vec::new();
        let mut joins = 0;
        for &f in &functions {
            let ps = parents(f);
            let b = match ps.as_slice() {
                [] => {
                    branches.push(Vec::new());
                    Some(branches.len() - 1)
                }
                [g] => {
                    let from = branch_of
                        .get(&(name.clone(), *g))
                        .copied()
                        .flatten()
                        .ok_or_else(|| format!("out of scope: {name}/f{f} follows its join (reads after a join)"))?;
                    if children(*g).iter().min() == Some(&f) {
                        Some(from)
                    } else {
                        branches.push(Vec::new());
                        let to = branches.len() - 1;
                        let at = *a.done_at.get(g).ok_or_else(|| format!("{name}/f{g} forks but never finishes"))?;
                        push(&mut steps, at, Step::Fork { txn: name.clone(), from: from + 1, to: to + 1 });
                        Some(to)
                    }
                }
                _ => {
                    joins += 1;
                    if !children(f).is_empty() || joins > 1 {
                        return Err(format!(
                            "out of scope: {name} joins at f{f}, which is not its only join and sink (the spec's workflows join once, at the sink)"
                        ));
                    }
                    None
                }
            };
            branch_of.insert((name.clone(), f), b);
        }
        let sinks = functions.iter().filter(|f| children(**f).is_empty()).count();
        if sinks > 1 {
            return Err(format!("out of scope: {name} has {sinks} sinks (the spec's workflows end in one)"));
        }
        if branches.is_empty() {
            branches.push(Vec::new());
        }
        plans.insert(name.clone(), branches);
        // A retry starts from the aborted attempt's lo.
        if let Some((base, n)) = name.rsplit_once('#') {
            let n: u32 = n.parse().map_err(|_| format!("an attempt named {name}"))?;
            let previous = if n == 2 { base.to_string() } else { format!("{base}#{}", n - 1) };
            if let Some(&lo) = aborts.get(&previous)
                && lo > 0
            {
                push(&mut steps, a.first_seen.expect("seen"), Step::Restart { txn: name.clone(), lo: phi(lo) });
            }
        }
        if let Some((at, committed, lo, hi, _)) = a.end {
            push(&mut steps, at, Step::Join { txn: name.clone(), ok: committed, lo: phi(lo), hi: phi(hi) });
            if committed && a.writes.is_empty() {
                push(&mut steps, at, Step::Commit { txn: name.clone(), ts: None });
            }
        }
    }
    // Reads: a served key where the cache decided, a fetched one where its answer arrived.
    for b in &batches {
        if !b.answered {
            continue;
        }

        let name = attempt_of(&b.function).to_string();
        let f = function_index(&b.function).ok_or_else(|| format!("a function named {}", b.function))?;
        let branch = branch_of
            .get(&(name.clone(), f))
            .copied()
            .ok_or_else(|| format!("{} reads outside its workflow", b.function))?
            .ok_or_else(|| format!("out of scope: {} reads after its join (the spec's workflows join, then commit)", b.function))?;
        let fetched = b.fetch.as_ref().map(|f| f.1.clone()).unwrap_or_default();
        let answer =
            |k: u64| b.answers.iter().find(|a| a.0 == k).copied().ok_or_else(|| format!("{}'s read of key {k} has no answer", b.function));
        let mut served: Vec<u64> = b.keys.iter().copied().filter(|k| !fetched.contains_key(k)).collect();
        served.sort_by_key(|k| std::cmp::Reverse(answer(*k).map_or(0, |a| a.2)));
        let in_order: Vec<u64> = served.into_iter().chain(b.keys.iter().copied().filter(|k| fetched.contains_key(k))).collect();
        // A served key where the cache decided; a fetched one where its answer arrived.
        let at_of = |key: &u64| match fetched.get(key) {
            None => Ok(b.asked_at),
            Some(_) => b.fetched_at.get(key).copied().ok_or_else(|| format!("{}'s fetch of key {key} has no answer", b.function)),
        };
        let first =
            in_order.iter().map(at_of).collect::<Result<Vec<_>, _>>()?.into_iter().enumerate().min_by_key(|(_, at)| *at).map(|(n, _)| n);
        for (n, key) in in_order.into_iter().enumerate() {
            let (_, value, t, p) = answer(key)?;
            let at = at_of(&key)?;
            let step = Step::Read {
                txn: name.clone(),
                branch: branch + 1,
                worker: b.worker,
                key,
                ts: phi(t),
                promise: phi(p),
                writer: write_of(key, value)?,
                served: !fetched.contains_key(&key),
                start: (Some(n) == first).then(|| (phi(b.interval.0), phi(b.interval.1))),
            };
            push(&mut steps, at, step);
        }
    }
    for Heard { at, worker, stable, versions } in pushes {
        let versions = versions.into_iter().map(|(k, v, ts)| Ok((k, phi(ts), write_of(k, v)?))).collect::<Result<_, String>>()?;
        push(&mut steps, at, Step::Push { worker, stable: phi(stable), versions });
    }
    for (n, (at, name)) in stable_at.into_iter().enumerate() {
        // After every other step at that point (the sink's join among them).
        steps.push(((at, usize::MAX / 2 + n), Step::Commit { ts: Some(phi(commits[n].0)), txn: name }));
    }
    steps.sort_by_key(|(at, _)| *at);
    // Each branch's plan: the keys it reads, in the order of its steps.
    for (_, step) in &steps {
        if let Step::Read { txn, branch, key, .. } = step {
            plans.get_mut(txn).expect("planned")[branch - 1].push(*key);
        }
    }
    let txns = order
        .into_iter()
        .map(|name| Txn { branches: plans.remove(&name).expect("planned"), writes: attempts[&name].writes.clone(), name })
        .collect();
    Ok(Behaviour {
        servers,
        prewarm: params.prewarm,
        relaxed: true,
        keys,
        txns,
        steps: steps.into_iter().map(|(_, s)| s).collect(),
        commits: cts.len() as u64,
    })
}

// ---------------------------------------------------------------------------------------------
// The trace module.

fn tla_txn(t: &str) -> String {
    format!("{t:?}")
}

fn tla_key(k: u64) -> String {
    format!("\"k{k}\"")
}

fn tla_val(w: &Option<String>) -> String {
    w.as_deref().map_or("InitVal".to_string(), tla_txn)
}

fn tla_bool(b: bool) -> &'static str {
    if b { "TRUE" } else { "FALSE" }
}

fn tla_record(step: &Step) -> String {
    match step {
        Step::Read { txn, branch, worker, key, ts, promise, writer, served, start } => format!(
            "[a |-> \"Read\", t |-> {}, b |-> {branch}, w |-> {worker}, k |-> {}, ts |-> {ts}, p |-> {}, val |-> {}, hit |-> {}, \
             first |-> {}, lo |-> {}, hi |-> {}]",
            tla_txn(txn),
            tla_key(*key),
            show_ts(*promise),
            tla_val(writer),
            tla_bool(*served),
            tla_bool(start.is_some()),
            start.map_or("0".into(), |s| show_ts(s.0)),
            start.map_or("0".into(), |s| show_ts(s.1)),
        ),
        Step::Fork { txn, from, to } => format!("[a |-> \"Fork\", t |-> {}, from |-> {from}, to |-> {to}]", tla_txn(txn)),
        Step::Restart { txn, lo } => format!("[a |-> \"Restart\", t |-> {}, lo |-> {lo}]", tla_txn(txn)),
        Step::Join { txn, ok, lo, hi } => {
            format!("[a |-> \"Join\", t |-> {}, ok |-> {}, lo |-> {}, hi |-> {}]", tla_txn(txn), tla_bool(*ok), show_ts(*lo), show_ts(*hi))
        }
        Step::Commit { txn, ts } => format!("[a |-> \"Commit\", t |-> {}, ts |-> {}]", tla_txn(txn), ts.unwrap_or(0)),
        Step::Push { worker, stable, versions } => {
            let vs: Vec<String> = versions.iter().map(|(k, ts, w)| format!("{} :> <<{ts}, {}>>", tla_key(*k), tla_val(w))).collect();
            format!(
                "[a |-> \"Push\", w |-> {worker}, x |-> {}, vs |-> {}]",
                show_ts(*stable),
                if vs.is_empty() { "<<>>".to_string() } else { format!("({})", vs.join(" @@ ")) }
            )
        }
    }
}

/// The generated trace module and its config; `relax` (1-based) leaves that step's
/// observation unchecked and stops there (as in `trace_validation::tla`).
pub fn tla(b: &Behaviour, relax: Option<usize>) -> (String, String) {
    let fun = |pairs: Vec<(String, String)>| -> String {
        format!("({})", pairs.into_iter().map(|(k, v)| format!("{k} :> {v}")).collect::<Vec<_>>().join(" @@\n    "))
    };
    let set = |items: Vec<String>| format!("{{{}}}", items.join(", "));
    let plan = fun(b
        .txns
        .iter()
        .map(|t| {
            let branches: Vec<String> =
                t.branches.iter().map(|ks| format!("<<{}>>", ks.iter().map(|k| tla_key(*k)).collect::<Vec<_>>().join(", "))).collect();
            (tla_txn(&t.name), format!("<<{}>>", branches.join(", ")))
        })
        .collect());
    let writes = fun(b.txns.iter().map(|t| (tla_txn(&t.name), set(t.writes.iter().map(|k| tla_key(*k)).collect()))).collect());
    let steps: Vec<String> = b.steps.iter().map(tla_record).collect();
    let module = format!(
        r#"---- MODULE FaaSTCCTrace ----
\* Generated by causim: a simulator run of FaaSTCC as a behaviour of FaaSTCC.tla, through the
\* refinement mapping of specs/src/trace_validation_faastcc.rs.
EXTENDS FaaSTCC, Integers
CONSTANTS Relax
VARIABLES step, seen

TraceKeys == {keys}
TraceTxns == {txns}
TracePlan == {plan}
TraceWrites == {writes}
\* Above every timestamp of the trace (the spec's Inf, for longer runs).
TraceInf == {inf}

TraceSteps == <<
    {steps}
>>

(* What the Rust model does that the spec leaves out (module docs of            *)
(* trace_validation_faastcc.rs; specs/README.md, "Trace validation").           *)

\* A cache that starts empty: its entry is never consistent (p < every lo) and never
\* newer than a store answer, so a read misses and installs the answer.
Missing == [t |-> -1, p |-> -1, val |-> InitVal]
Held(e) == e.t >= 0

\* The Rust store's partitions: a batch reads its missing keys at one snapshot (anywhere in the
\* reader's interval up to the clock), and a partition's stable time lags the clock, so its
\* promises may be shorter than the spec's.
LaggingSnapshots(w, i) == {{CacheSnapshot(w, i)}} \cup (Lo(i)..Min(Hi(i), clock))
LaggingPromises(k, sn) == sn..Promise(k, sn)

\* The Rust cache answers requests concurrently: a request for a key another request is
\* still fetching finds the entry without that answer and fetches it too, so a cache may
\* fetch an entry it could serve (and installs the answer only if it is fresher).
MayFetch(e, i) == {{FALSE}} \cup {{Consistent(e, i)}}

\* A partition's push to w at its stable time x (ks: the keys it pushes; none: a store
\* reply's stable time): each entry w holds is replaced by the store's version at x,
\* promised up to x, when that is newer or promised longer.
PushFrom(w, ks, x) ==
    /\ x <= clock
    /\ cache' = [cache EXCEPT ![w] = [k \in Keys |->
                   LET e == cache[w][k]
                       v == At(k, x)
                   IN  IF k \in ks /\ Held(e) /\ (v.ts > e.t \/ (v.ts = e.t /\ x > e.p))
                       THEN [t |-> v.ts, p |-> x, val |-> v.val] ELSE e]]
    /\ known' = [known EXCEPT ![w] = Max(@, x)]
    /\ UNCHANGED <<store, clock, si, pc, rs, phase>>

\* A fan-out: branch `to` starts from branch `from`'s interval and reads.
Fork(t, from, to) ==
    /\ phase[t] = "read" /\ pc[t][to] = 0 /\ rs[t][to] = {{}}
    /\ si' = [si EXCEPT ![t][to] = si[t][from]]
    /\ rs' = [rs EXCEPT ![t][to] = rs[t][from]]
    /\ UNCHANGED <<store, clock, cache, known, pc, phase>>

\* A retried attempt starts from a recent snapshot: lo, which the store has.
Restart(t, lo) ==
    /\ phase[t] = "read" /\ lo <= clock
    /\ \A b \in Branches(t) : pc[t][b] = 0
    /\ si' = [si EXCEPT ![t] = [b \in Branches(t) |-> <<lo, Inf>>]]
    /\ UNCHANGED <<store, clock, cache, known, pc, rs, phase>>

Act(e) ==
    CASE e.a = "Read"    -> Read(e.t, e.b, e.w)
      [] e.a = "Fork"    -> Fork(e.t, e.from, e.to)
      [] e.a = "Restart" -> Restart(e.t, e.lo)
      [] e.a = "Join"    -> Join(e.t)
      [] e.a = "Commit"  -> Commit(e.t)
      [] e.a = "Push"    -> PushFrom(e.w, DOMAIN e.vs, e.x)

\* What the spec shows at step e (evaluated after Act(e)).
Observation(e) ==
    CASE e.a = "Read"   -> LET i == si[e.t][e.b]
                               o == cache[e.w][e.k]
                           IN  [serves |-> Serves(o, i),
                                answers |-> UNION {{{{<<At(e.k, sn).ts, pr>> : pr \in Promises(e.k, sn)}} : sn \in Snapshots(e.w, i)}},
                                before |-> i, after |-> si'[e.t][e.b], entry |-> o, post |-> cache'[e.w][e.k],
                                got |-> {{<<r.ts, r.val>> : r \in {{r \in rs'[e.t][e.b] : r.key = e.k}}}}]
      [] e.a = "Join"   -> [phase |-> phase'[e.t], si |-> Joined(e.t)]
      [] e.a = "Commit" -> [ts |-> clock']
      [] e.a = "Push"   -> [vs |-> [k \in DOMAIN e.vs |-> <<At(k, e.x).ts, At(k, e.x).val>>]]
      [] OTHER          -> [none |-> TRUE]

\* ... and whether it is what the simulator showed.
Matches(e, o) ==
    CASE e.a = "Read"   -> /\ e.first => o.before = <<e.lo, e.hi>>
                           /\ e.hit \in o.serves
                           /\ IF e.hit THEN <<o.entry.t, o.entry.p>> = <<e.ts, e.p>> ELSE <<e.ts, e.p>> \in o.answers
                           /\ <<e.ts, e.val>> \in o.got
                           /\ o.after = <<Max(Lo(o.before), e.ts), Min(Hi(o.before), e.p)>>
                           /\ o.post = IF Fresher([t |-> e.ts, p |-> e.p], o.entry)
                                       THEN [t |-> e.ts, p |-> e.p, val |-> e.val] ELSE o.entry
      [] e.a = "Join"   -> o.phase = (IF e.ok THEN "joined" ELSE "aborted") /\ o.si = <<e.lo, e.hi>>
      [] e.a = "Commit" -> e.ts = 0 \/ o.ts = e.ts
      [] e.a = "Push"   -> o.vs = e.vs
      [] OTHER          -> TRUE

{replay}===="#,
        keys = set(b.keys.iter().map(|k| tla_key(*k)).collect()),
        txns = set(b.txns.iter().map(|t| tla_txn(&t.name)).collect()),
        inf = b.commits + 1000,
        steps = steps.join(",\n    "),
        replay = replay("", ""),
    );
    let cfg = format!(
        "CONSTANTS\n    N = {}\n    Keys <- TraceKeys\n    Txns <- TraceTxns\n    InitVal = InitVal\n    Plan <- TracePlan\n    \
         WritesOf <- TraceWrites\n    Mutant = \"none\"\n    Inf <- TraceInf\n    Relax = {}\n{}{}INIT TraceInit\nNEXT TraceNext\n\
         INVARIANTS\n{}    TypeOK\n    PromisesKept\n    ReadsAtEveryPoint\n    TxnsReadOneSnapshot\n",
        b.servers,
        relax.map_or(b.steps.len() + 1, |r| r),
        if b.prewarm { "" } else { "    InitEntry <- Missing\n" },
        if b.relaxed { "    Serves <- MayFetch\n    Snapshots <- LaggingSnapshots\n    Promises <- LaggingPromises\n" } else { "" },
        if relax.is_some() { "    TraceIncomplete\n" } else { "" },
    );
    (module, cfg)
}

fn run(b: &Behaviour, relax: Option<usize>, options: &TlcOptions) -> Result<TlcRun, String> {
    let (module, cfg) = tla(b, relax);
    run_tlc_with_files(&spec_dir(Faastcc::ENTRY.name), "FaaSTCCTrace", &cfg, &[("FaaSTCCTrace.tla".into(), module)], options)
        .map_err(|e| e.to_string())
}

/// Validates a run's trace (`causim run --out DIR`; `summary` is its `summary.json`).
pub fn validate(trace: &str, history: &str, summary: &str, options: &TlcOptions) -> Result<Outcome, String> {
    let scenario = crate::trace_validation_tcc::scenario_of_summary(summary)?;
    validate_behaviour(&behaviour_of_scenario(trace, history, &scenario)?, options)
}

/// Validates a behaviour against the spec with TLC.
pub fn validate_behaviour(b: &Behaviour, options: &TlcOptions) -> Result<Outcome, String> {
    let steps: Vec<String> = b.steps.iter().map(|s| s.to_string()).collect();
    check_trace(steps, options, |relax, options| run(b, relax, options), |seen| seen.to_string())
}

#[cfg(test)]
mod tests {
    use super::{item_key, items, number, optional};

    #[test]
    fn fields_parse_from_the_messages_debug_form() {
        let read = "CacheRead { req: 0, keys: [2, 0], lo: 0, hi: 18446744073709551615 }";
        assert_eq!(items(read, "keys"), Some(vec!["2", "0"]));
        assert_eq!((number(read, "lo"), number(read, "hi")), (Some(0), Some(u64::MAX)));
        let reply = "CacheReply { req: 0, answers: [(2, Version { value: None, t: 0, p: 30 }), (0, Version { value: Some(1), t: 11, p: 35 })], storage: true }";
        let answers = items(reply, "answers").expect("a list");
        assert_eq!(answers.len(), 2);
        assert_eq!(
            (item_key(answers[1]), optional(answers[1], "value"), number(answers[1], "t"), number(answers[1], "p")),
            (Some(0), Some(Some(1)), Some(11), Some(35))
        );
        assert_eq!(optional(answers[0], "value"), Some(None));
        let store = "Store(Read { req: 1, snapshot: 30720000000, keys: [(1, Some(35942401024)), (4, None)], subscribe: false })";
        assert_eq!(number(store, "t"), None, "`snapshot: ` is not the field t");
        assert_eq!(items(store, "keys"), Some(vec!["(1, Some(35942401024))", "(4, None)"]));
        assert_eq!(number("Store(ReadReply { req: 1, lst: 61440000000, entries: [] })", "lst"), Some(61_440_000_000));
        assert_eq!(items("Store(Notify { seq: 0, lst: 5, entries: [] })", "entries"), Some(vec![]));
    }
}
