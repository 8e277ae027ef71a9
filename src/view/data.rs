//! The page's data: a run directory read into one JSON value (`causim-view/1`) that the page's
//! script draws. Rows are arrays, not objects, so a 10 000-operation run stays a few megabytes.
//!
//! ```text
//! run       scenario, name, description, protocol, mutants, seed, level, events, invariant
//! nodes     ["S0", "S1", "db"]                  fixed nodes, in the order they started
//! sessions  ["c1", "c2"]                        in order of their first operation
//! fns       [name, session, machine, start_ns, end_ns]          (-1: unknown)
//! txns      [id, session, node, invoke_ns, complete_ns, outcome, label, fn, ops]
//!           outcome 0 ok, 1 aborted, 2 failed; node and fn -1 when unknown;
//!           ops 0 reads only, 1 writes only, 2 both, 3 none
//! records   the history line of each transaction, as written
//! strings   message kinds, drop reasons and step names, referred to by index
//! msgs      [from, to, sent_ns, released_ns, end_ns, kind, fate, reason]
//!           endpoints: a node's index, or -(function index + 1); fate 0 delivered,
//!           1 lost at the receiver, 2 lost on the way, 3 unfinished; reason -1 or a string
//! details   the delivered message's text (cut to DETAIL_CHARS_MAX), or null, per message
//! steps     [t_ns, at, fn, name, args]          protocol steps (trace `action`)
//! faults    [{what, t_ns, …}]                   crash, restart, partition, invariant, …
//! check     the checker's report (causim_checkers::Report as JSON), or null
//! counterexample  {property, steps: [[text, msg]]} a replayed counterexample's steps, each
//!           delivery tied to its message (msg -1: a choice, or not in the trace), or null
//! ```
//!
//! Witness edges and transactions refer to transaction ids, which the page looks up in `txns`,
//! so any edge kind the checker adds (`Realtime` for linearizability) draws between the
//! intervals of its two transactions without changes here.

use super::ViewError;
use super::counterexample;
use super::trace::{self, Endpoint, Fate, Fault, Trace};
use causim_checkers::{CheckOptions, Level};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// Violations the page lists with their witnesses (all are counted). Above the checker's
/// default of 100 so the anomaly histogram of a long run places more of them.
pub const VIOLATIONS_SHOWN_MAX: usize = 1000;

/// Where `causim model-check` leaves the counterexample a run replays.
pub const COUNTEREXAMPLE_FILE: &str = "counterexample.json";

/// A delivered message's text is cut here: it is for reading one message, not for diffing.
pub const DETAIL_CHARS_MAX: usize = 400;

/// What the page is built from.
pub struct RunDir {
    pub history_path: std::path::PathBuf,
    pub history: String,
    pub trace: Option<Trace>,
    pub summary: Option<Value>,
    /// A structured report found in the directory (`check.json`).
    pub check: Option<Value>,
    /// A model checker's counterexample that this run replays (`counterexample.json`).
    pub counterexample: Option<Value>,
}

/// Reads `dir`: `history.jsonl` is required; `trace.jsonl`, `summary.json`, `check.json` and
/// `counterexample.json` are used when present.
pub fn load(dir: &Path) -> Result<RunDir, ViewError> {
    if !dir.is_dir() {
        return Err(ViewError(format!("{}: not a run directory (expected the folder `causim run --out` wrote)", dir.display())));
    }
    let history_path = dir.join("history.jsonl");
    let history = std::fs::read_to_string(&history_path)
        .map_err(|e| ViewError(format!("{}: cannot read the history: {e}", history_path.display())))?;
    let trace_path = dir.join("trace.jsonl");
    let trace = match std::fs::read_to_string(&trace_path) {
        Ok(text) => Some(trace::read(&text).map_err(|e| ViewError(format!("{}:{}: {}", trace_path.display(), e.line, e.message)))?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(ViewError(format!("{}: cannot read the trace: {e}", trace_path.display()))),
    };
    let summary = read_json(&dir.join("summary.json"))?;
    let check = read_json(&dir.join("check.json"))?;
    let counterexample = read_json(&dir.join(COUNTEREXAMPLE_FILE))?;
    Ok(RunDir { history_path, history, trace, summary, check, counterexample })
}

fn read_json(path: &Path) -> Result<Option<Value>, ViewError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| ViewError(format!("{}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ViewError(format!("{}: {e}", path.display()))),
    }
}

/// One transaction line, as the diagram needs it.
struct Txn {
    id: u64,
    session: String,
    node: Option<String>,
    invoke_ns: u64,
    complete_ns: u64,
    outcome: u8,
    label: String,
    ops: u8,
    line: String,
}

/// The page's data for `run`, checked at `level` (else the level in `check.json` or the
/// scenario's `checks.level`; no check without either).
pub fn model(run: &RunDir, level: Option<Level>) -> Result<Value, ViewError> {
    let (header, txns) = parse_history(&run.history, &run.history_path)?;
    let check = match (level, &run.check) {
        (None, Some(report)) => Some(report.clone()),
        _ => match level.or_else(|| scenario_level(run.summary.as_ref())) {
            Some(level) => Some(check(run, level)?),
            None => None,
        },
    };
    let empty = Trace::default();
    let trace = run.trace.as_ref().unwrap_or(&empty);

    let mut nodes: Vec<String> = trace.nodes.clone();
    let mut node_index: BTreeMap<String, usize> = nodes.iter().enumerate().map(|(i, n)| (n.clone(), i)).collect();
    let mut node_of = |name: &str| -> usize {
        *node_index.entry(name.to_string()).or_insert_with(|| {
            nodes.push(name.to_string());
            nodes.len() - 1
        })
    };

    // Sessions in the order of their first operation.
    let mut order: Vec<(u64, u64, &str)> = txns.iter().map(|t| (t.invoke_ns, t.id, t.session.as_str())).collect();
    order.sort();
    let mut sessions: Vec<String> = Vec::new();
    let mut session_index: BTreeMap<String, usize> = BTreeMap::new();
    for (_, _, s) in order {
        if !session_index.contains_key(s) {
            session_index.insert(s.to_string(), sessions.len());
            sessions.push(s.to_string());
        }
    }
    let txn_by_id: BTreeMap<u64, usize> = txns.iter().enumerate().map(|(i, t)| (t.id, i)).collect();

    // A function belongs to the session of its records; one that recorded nothing to the
    // session its name says (`w3#2/f1` is attempt 2 of workflow w3, or itself in a DAG).
    let mut fn_session: Vec<usize> = Vec::with_capacity(trace.functions.len());
    let mut txn_fn: BTreeMap<u64, usize> = BTreeMap::new();
    for (f, function) in trace.functions.iter().enumerate() {
        for id in &function.records {
            txn_fn.insert(*id, f);
        }
        let from_record = function.records.iter().find_map(|id| txn_by_id.get(id)).map(|&i| txns[i].session.as_str());
        let base = function.name.rsplit_once("/f").map_or(function.name.as_str(), |(b, _)| b);
        let name = from_record
            .or_else(|| session_index.contains_key(&function.name).then_some(function.name.as_str()))
            .unwrap_or(base)
            .to_string();
        let s = *session_index.entry(name.clone()).or_insert_with(|| {
            sessions.push(name);
            sessions.len() - 1
        });
        fn_session.push(s);
    }

    let mut strings = Strings::default();
    let fns: Vec<Value> = trace
        .functions
        .iter()
        .zip(&fn_session)
        .map(|(f, &s)| json!([f.name, s, opt(f.machine), f.start_ns, f.end_ns.map_or(-1, |e| e as i64)]))
        .collect();
    let txn_rows: Vec<Value> = txns
        .iter()
        .map(|t| {
            let node = t.node.as_deref().map(&mut node_of);
            json!([
                t.id,
                session_index[&t.session],
                opt(node),
                t.invoke_ns,
                t.complete_ns,
                t.outcome,
                t.label,
                opt(txn_fn.get(&t.id).copied()),
                t.ops
            ])
        })
        .collect();
    let records: Vec<&str> = txns.iter().map(|t| t.line.as_str()).collect();
    let mut msgs = Vec::with_capacity(trace.messages.len());
    let mut details = Vec::with_capacity(trace.messages.len());
    for m in &trace.messages {
        let reason = m.reason.as_deref().map_or(-1, |r| strings.index(r) as i64);
        let fate = match m.fate {
            Fate::Delivered => 0,
            Fate::DroppedAtReceiver => 1,
            Fate::DroppedInNetwork => 2,
            Fate::Unfinished => 3,
        };
        msgs.push(json!([endpoint(m.from), endpoint(m.to), m.sent_ns, m.released_ns, m.end_ns, strings.index(&m.kind), fate, reason]));
        details.push(m.detail.as_deref().map_or(Value::Null, |d| Value::String(cut(d, DETAIL_CHARS_MAX))));
    }
    let steps: Vec<Value> =
        trace.steps.iter().map(|s| json!([s.t_ns, endpoint(s.at), opt(s.function), strings.index(&s.action), s.args])).collect();
    let faults: Vec<Value> = trace.faults.iter().map(fault).collect();

    let resolved = run.summary.as_ref().map(|s| &s["resolved_scenario"]);
    let counterexample_path = run.history_path.with_file_name(COUNTEREXAMPLE_FILE);
    let counterexample = counterexample::model(resolved, run.counterexample.as_ref().map(|c| (counterexample_path.as_path(), c)), trace)?;
    let summary = run.summary.as_ref().map(|s| &s["summary"]);
    let end_ns = txns.iter().map(|t| t.complete_ns).chain([trace.end_ns]).max().unwrap_or(0);
    let run_info = json!({
        "name": resolved.and_then(|r| r["name"].as_str()).or_else(|| header["scenario"].as_str()).unwrap_or("history"),
        "scenario": header["scenario"],
        "description": resolved.map_or(Value::Null, |r| r["description"].clone()),
        "protocol": resolved.map_or_else(|| header["protocol"].clone(), |r| r["protocol"]["name"].clone()),
        "mutants": resolved.map_or(Value::Null, |r| r["protocol"]["mutants"].clone()),
        "seed": resolved.map_or_else(|| header["seed"].clone(), |r| r["seed"].clone()),
        "events": summary.map_or(Value::Null, |s| s["events"].clone()),
        "invariant": summary.map_or(Value::Null, |s| s["invariant_violation"].clone()),
        "traced": run.trace.is_some(),
        "end_ns": end_ns,
    });
    Ok(json!({
        "format": "causim-view/1",
        "run": run_info,
        "nodes": nodes,
        "sessions": sessions,
        "fns": fns,
        "txns": txn_rows,
        "records": records,
        "strings": strings.list,
        "msgs": msgs,
        "details": details,
        "steps": steps,
        "faults": faults,
        "check": check,
        "counterexample": counterexample,
    }))
}

/// Interned strings (message kinds, reasons, step names).
#[derive(Default)]
struct Strings {
    list: Vec<String>,
    index: BTreeMap<String, usize>,
}

impl Strings {
    fn index(&mut self, s: &str) -> usize {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.list.push(s.to_string());
        self.index.insert(s.to_string(), self.list.len() - 1);
        self.list.len() - 1
    }
}

fn opt(i: Option<usize>) -> i64 {
    i.map_or(-1, |i| i as i64)
}

fn endpoint(e: Endpoint) -> i64 {
    match e {
        Endpoint::Node(n) => n as i64,
        Endpoint::Function(f) => -(f as i64) - 1,
    }
}

fn fault(f: &Fault) -> Value {
    match f {
        Fault::Crash { node, t_ns } => json!({"what": "crash", "node": node, "t_ns": t_ns}),
        Fault::Restart { node, t_ns } => json!({"what": "restart", "node": node, "t_ns": t_ns}),
        Fault::Partition { index, start_ns, heal_ns } => json!({"what": "partition", "index": index, "t_ns": start_ns, "end_ns": heal_ns}),
        Fault::Invariant { at, t_ns, violation } => json!({"what": "invariant", "at": endpoint(*at), "t_ns": t_ns, "text": violation}),
        Fault::ReplayDiverged { t_ns, why } => {
            json!({"what": "replay diverged", "t_ns": t_ns, "text": why})
        }
        Fault::Abort { session, t_ns, reason } => json!({"what": "abort", "session": session, "t_ns": t_ns, "text": reason}),
    }
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The level the run was checked at (`summary.json`'s resolved scenario).
fn scenario_level(summary: Option<&Value>) -> Option<Level> {
    summary?.get("resolved_scenario")?.get("checks")?.get("level")?.as_str().and_then(Level::parse)
}

fn check(run: &RunDir, level: Level) -> Result<Value, ViewError> {
    let history = causim_checkers::read_history(run.history.as_bytes(), None)
        .map_err(|e| ViewError(format!("{}: {e}", run.history_path.display())))?;
    let options = CheckOptions { violations_max: VIOLATIONS_SHOWN_MAX, ..CheckOptions::default() };
    let report = causim_checkers::check_with(&history, level, &options);
    Ok(serde_json::to_value(&report).expect("reports serialize"))
}

/// The history's header (or null) and its transactions.
fn parse_history(text: &str, path: &Path) -> Result<(Value, Vec<Txn>), ViewError> {
    let mut header = Value::Null;
    let mut txns = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let at = |field: &str, what: &str| ViewError(format!("{}:{n}: field `{field}`: {what}", path.display()));
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| ViewError(format!("{}:{n}: not JSON: {e}", path.display())))?;
        if !v.is_object() {
            return Err(ViewError(format!("{}:{n}: a history line is a JSON object", path.display())));
        }
        if v.get("format").is_some() {
            header = v;
            continue;
        }
        let id = match v.get("id") {
            None => txns.len() as u64,
            Some(id) => id.as_u64().ok_or_else(|| at("id", "not a non-negative integer"))?,
        };
        let session = v.get("session").and_then(Value::as_str).ok_or_else(|| at("session", "missing or not a string"))?.to_string();
        let time = |field: &str| {
            v.get(field)
                .and_then(Value::as_u64)
                .ok_or_else(|| at(field, "missing or not a non-negative integer (the viewer places transactions by their interval)"))
        };
        let invoke_ns = time("invoke_ns")?;
        let complete_ns = time("complete_ns")?;
        let outcome = match v.get("outcome").and_then(Value::as_str).unwrap_or("ok") {
            "ok" => 0,
            "aborted" => 1,
            "failed" => 2,
            other => {
                return Err(at("outcome", &format!("{other:?} is not ok, aborted or failed")));
            }
        };
        let ops = v.get("ops").and_then(Value::as_array).ok_or_else(|| at("ops", "missing or not an array"))?;
        txns.push(Txn {
            id,
            session,
            node: v.get("node").and_then(Value::as_str).map(str::to_string),
            invoke_ns,
            complete_ns: complete_ns.max(invoke_ns),
            outcome,
            label: label(ops),
            ops: match (ops.iter().any(|o| o["f"] == "r"), ops.iter().any(|o| o["f"] == "w")) {
                (true, false) => 0,
                (false, true) => 1,
                (true, true) => 2,
                (false, false) => 3,
            },
            line: line.trim().to_string(),
        });
    }
    Ok((header, txns))
}

/// `w x=1`, `r y=1, r x=⊥`.
fn label(ops: &[Value]) -> String {
    let one = |o: &Value| {
        let f = if o["f"] == "w" { "w" } else { "r" };
        let key = o["key"].as_str().map_or_else(|| o["key"].to_string(), str::to_string);
        let value = match &o["value"] {
            Value::Null => "⊥".to_string(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        format!("{f} {key}={value}")
    };
    ops.iter().map(one).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_each_operation() {
        let ops: Vec<Value> =
            serde_json::from_str(r#"[{"f":"r","key":"y","value":1},{"f":"r","key":"x","value":null},{"f":"w","key":3,"value":"a"}]"#)
                .unwrap();
        assert_eq!(label(&ops), "r y=1, r x=⊥, w 3=a");
    }

    #[test]
    fn a_transaction_without_an_interval_is_named_by_line_and_field() {
        let text = "{\"format\":\"causim-history/1\"}\n{\"id\":0,\"session\":\"c1\",\"ops\":[]}\n";
        let e = parse_history(text, Path::new("h.jsonl")).err().unwrap();
        assert!(e.0.starts_with("h.jsonl:2: field `invoke_ns`: missing"), "{}", e.0);
    }

    #[test]
    fn cut_keeps_whole_characters() {
        assert_eq!(cut("x=⊥⊥⊥", 3), "x=⊥…");
        assert_eq!(cut("short", 10), "short");
    }
}
