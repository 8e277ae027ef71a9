//! Jepsen histories, whatever their syntax (EDN as Jepsen writes them, or JSON as Elle's tools
//! convert them): operations `{:type :invoke|:ok|:fail|:info, :process p, :f :txn,
//! :value [[:r k v] [:w k v] [:append k v] …], :time t}`.
//!
//! Each process is a session. An invocation pairs with the next completion of its process:
//! `ok` is a committed transaction with the completion's values, `fail` an aborted one, `info`
//! (or no completion at all) a failed one — its outcome is unknown, so its writes come from the
//! invocation, may be read, and its reads are not judged. Completions without an invocation
//! (some tools write only those) stand alone. Operations of the `nemesis` process are skipped.
//!
//! The workload is told by the micro-operations: `w` and single-value reads are an
//! **rw-register** history; `append` and list reads a **list-append** one (see `crate::lists`
//! for how lists map to causim's writes); a history mixing the two is refused, naming the first
//! operation that breaks the pattern. A read of `nil` (an invocation's unknown value, or an
//! empty register) reads the initial value.

use super::edn::{Edn, Reader};
use crate::fxhash::{FxHashMap, map_with_capacity};
use crate::history::{HistoryBuilder, KIND_READ, KIND_WRITE_FINAL, NONE, Outcome, ParseError, TxnMeta, Val};
use crate::lists::ListReads;
use std::io::BufRead;

/// A key or a value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scalar {
    Int(i64),
    Str(String),
}

/// What a read returned.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ReadValue {
    /// `nil`: unknown (invocations) or absent.
    Nil,
    One(Scalar),
    List(Vec<Scalar>),
}

/// A micro-operation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Mop {
    Read(Scalar, ReadValue),
    /// `None`: a write of `nil`, allowed only where the outcome is unknown.
    Write(Scalar, Option<Scalar>),
    Append(Scalar, Scalar),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Invoke,
    Ok,
    Fail,
    Info,
}

/// Where an operation is in the file: its line, or its position in one array of operations.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Place {
    Line(u64),
    Index(usize),
}

impl Place {
    pub(crate) fn error(self, problem: impl Into<String>) -> ParseError {
        match self {
            Place::Line(l) => ParseError::at(l, problem),
            Place::Index(i) => ParseError::whole(format!("operation #{i}: {}", problem.into())),
        }
    }
    fn line(self) -> u64 {
        match self {
            Place::Line(l) => l,
            Place::Index(_) => 0,
        }
    }
    fn describe(self) -> String {
        match self {
            Place::Line(l) => format!("line {l}"),
            Place::Index(i) => format!("operation #{i}"),
        }
    }
}

/// One operation of a Jepsen history.
pub(crate) struct Op {
    pub kind: Kind,
    pub process: String,
    pub value: Option<Vec<Mop>>,
    pub time: Option<u64>,
    pub place: Place,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Workload {
    Register,
    ListAppend,
}

/// Read a Jepsen history in EDN: one operation map per top-level form, or one vector of them.
pub(crate) fn read_edn(mut r: impl BufRead, b: &mut HistoryBuilder) -> Result<(), ParseError> {
    let mut text = Vec::new();
    r.read_to_end(&mut text).map_err(|e| ParseError::whole(format!("cannot read: {e}")))?;
    let mut reader = Reader::new(&text);
    let mut ops = Vec::new();
    while let Some((line, form)) = reader.next_form()? {
        match form {
            Edn::Vector(items) if items.first().is_some_and(|f| matches!(f, Edn::Map(_) | Edn::Tagged(..))) => {
                for (i, item) in items.iter().enumerate() {
                    if let Some(op) = edn_op(item, Place::Index(i))? {
                        ops.push(op);
                    }
                }
            }
            form => {
                if let Some(op) = edn_op(&form, Place::Line(line))? {
                    ops.push(op);
                }
            }
        }
    }
    build(ops, b)
}

fn edn_op(form: &Edn, place: Place) -> Result<Option<Op>, ParseError> {
    if !matches!(form, Edn::Map(_) | Edn::Tagged(_, _)) || form.get("type").is_none() && form.get("value").is_none() {
        return Err(place.error(format!("expected an operation map {{:type … :value …}}, found {}", form.describe())));
    }
    let process = match form.get("process") {
        // A process is a non-negative integer (Jepsen numbers its workers 0, 1, …) or a name.
        Some(Edn::Int(i)) if *i >= 0 => i.to_string(),
        Some(Edn::Int(i)) => return Err(place.error(format!(":process: expected a non-negative integer, found {i}"))),
        Some(Edn::Number(n)) => return Err(place.error(format!(":process: expected a non-negative integer, found {n}"))),
        Some(Edn::Keyword(k)) | Some(Edn::Symbol(k)) | Some(Edn::Str(k)) => k.clone(),
        Some(other) => return Err(place.error(format!(":process: expected an integer, found {}", other.describe()))),
        // Hand-written histories (Elle's examples) may leave the process out: one session.
        None => "nil".to_string(),
    };
    if process == "nemesis" {
        return Ok(None);
    }
    let kind = match form.get("type") {
        Some(Edn::Keyword(k)) => {
            parse_kind(k).ok_or_else(|| place.error(format!(":type: expected :invoke, :ok, :fail or :info, found :{k}")))?
        }
        Some(other) => return Err(place.error(format!(":type: expected a keyword, found {}", other.describe()))),
        None => return Err(place.error("missing :type")),
    };
    let time = match form.get("time") {
        None | Some(Edn::Nil) => None,
        Some(Edn::Int(t)) if *t >= 0 => Some(*t as u64),
        Some(other) => return Err(place.error(format!(":time: expected a non-negative integer, found {}", other.describe()))),
    };
    let value = match form.get("value") {
        None | Some(Edn::Nil) => None,
        Some(v) => {
            let items = v
                .items()
                .ok_or_else(|| place.error(format!(":value: expected a vector of micro-operations [f k v], found {}", v.describe())))?;
            let mut mops = Vec::with_capacity(items.len());
            for (n, item) in items.iter().enumerate() {
                mops.push(edn_mop(item).map_err(|p| place.error(format!(":value[{n}]: {p}")))?);
            }
            Some(mops)
        }
    };
    Ok(Some(Op { kind, process, value, time, place }))
}

pub(crate) fn parse_kind(k: &str) -> Option<Kind> {
    Some(match k {
        "invoke" => Kind::Invoke,
        "ok" => Kind::Ok,
        "fail" => Kind::Fail,
        "info" => Kind::Info,
        _ => return None,
    })
}

fn edn_mop(item: &Edn) -> Result<Mop, String> {
    let parts = item.items().filter(|p| p.len() == 3).ok_or_else(|| format!("expected [f k v], found {}", item.describe()))?;
    let f = match &parts[0] {
        Edn::Keyword(f) | Edn::Symbol(f) | Edn::Str(f) => f.as_str(),
        other => return Err(format!("expected :r, :w or :append, found {}", other.describe())),
    };
    let key = edn_scalar(&parts[1]).map_err(|p| format!("key: {p}"))?;
    match f {
        "r" => {
            let value = match &parts[2] {
                Edn::Nil => ReadValue::Nil,
                Edn::Vector(items) | Edn::List(items) => {
                    ReadValue::List(items.iter().map(edn_scalar).collect::<Result<_, _>>().map_err(|p| format!("list element: {p}"))?)
                }
                v => ReadValue::One(edn_scalar(v).map_err(|p| format!("value: {p}"))?),
            };
            Ok(Mop::Read(key, value))
        }
        "w" => match &parts[2] {
            Edn::Nil => Ok(Mop::Write(key, None)),
            v => Ok(Mop::Write(key, Some(edn_scalar(v).map_err(|p| format!("value: {p}"))?))),
        },
        "append" => Ok(Mop::Append(key, edn_scalar(&parts[2]).map_err(|p| format!("value: {p}"))?)),
        other => Err(format!("expected :r, :w or :append, found :{other}")),
    }
}

fn edn_scalar(v: &Edn) -> Result<Scalar, String> {
    match v {
        Edn::Int(i) => Ok(Scalar::Int(*i)),
        Edn::Str(s) | Edn::Keyword(s) | Edn::Symbol(s) => Ok(Scalar::Str(s.clone())),
        Edn::Number(n) => Err(format!("the number {n} is not a 64-bit integer")),
        other => Err(format!("expected an integer or a string, found {}", other.describe())),
    }
}

fn workload_of(mop: &Mop) -> Option<Workload> {
    match mop {
        Mop::Read(_, ReadValue::Nil) => None,
        Mop::Read(_, ReadValue::One(_)) | Mop::Write(..) => Some(Workload::Register),
        Mop::Read(_, ReadValue::List(_)) | Mop::Append(..) => Some(Workload::ListAppend),
    }
}

fn workload_name(w: Workload) -> &'static str {
    match w {
        Workload::Register => "rw-register (`w`, single-value reads)",
        Workload::ListAppend => "list-append (`append`, list reads)",
    }
}

/// Pair invocations with completions and add the transactions to `b`.
pub(crate) fn build(ops: Vec<Op>, b: &mut HistoryBuilder) -> Result<(), ParseError> {
    // The workload, from the first micro-operation that tells.
    let mut workload: Option<(Workload, Place)> = None;
    for op in &ops {
        for (n, mop) in op.value.iter().flatten().enumerate() {
            let Some(w) = workload_of(mop) else { continue };
            match workload {
                None => workload = Some((w, op.place)),
                Some((first, at)) if first != w => {
                    return Err(op.place.error(format!(
                        "value[{n}]: a {} micro-operation in a {} history (so judged from {}); histories mixing the two are not supported",
                        workload_name(w),
                        workload_name(first),
                        at.describe()
                    )));
                }
                Some(_) => {}
            }
        }
    }
    let lists = workload.is_some_and(|w| w.0 == Workload::ListAppend);
    // Pair invocations with completions, per process.
    let mut pending: FxHashMap<String, usize> = map_with_capacity(64);
    let mut emitted = vec![false; ops.len()];
    let mut order: Vec<(usize, Option<usize>)> = Vec::new(); // (completion or lone invocation, invocation)
    for i in 0..ops.len() {
        match ops[i].kind {
            Kind::Invoke => {
                if let Some(prev) = pending.insert(ops[i].process.clone(), i) {
                    return Err(ops[i].place.error(format!(
                        "process {} invokes again before its previous invocation ({}) completed",
                        ops[i].process,
                        ops[prev].place.describe()
                    )));
                }
            }
            _ => {
                let inv = pending.remove(&ops[i].process);
                if let Some(inv) = inv {
                    emitted[inv] = true;
                }
                emitted[i] = true;
                order.push((i, inv));
            }
        }
    }
    for (i, done) in emitted.iter().enumerate() {
        if !done {
            order.push((i, None));
        }
    }
    let mut list_reads = ListReads::default();
    let mut scratch: Vec<Val> = Vec::new();
    for (id, (c, inv)) in order.into_iter().enumerate() {
        let done = &ops[c];
        let outcome = match done.kind {
            Kind::Ok => Outcome::Ok,
            Kind::Fail => Outcome::Aborted,
            Kind::Info | Kind::Invoke => Outcome::Failed,
        };
        // Committed transactions carry their reads' values in the completion; otherwise the
        // invocation says what was attempted.
        let value = match (outcome, inv) {
            (Outcome::Ok, _) | (_, None) => done.value.as_ref().or_else(|| inv.and_then(|i| ops[i].value.as_ref())),
            (_, Some(i)) => ops[i].value.as_ref().or(done.value.as_ref()),
        };
        b.begin_txn();
        for (n, mop) in value.map(Vec::as_slice).unwrap_or(&[]).iter().enumerate() {
            let at = |p: String| done.place.error(format!("value[{n}]: {p}"));
            let (kind, key, val) = match mop {
                Mop::Read(k, rv) => {
                    let val = match rv {
                        ReadValue::Nil => Val::Null,
                        ReadValue::One(v) => scalar_val(b, v),
                        ReadValue::List(items) => {
                            scratch.clear();
                            for v in items {
                                let v = scalar_val(b, v);
                                scratch.push(v);
                            }
                            scratch.last().copied().unwrap_or(Val::Null)
                        }
                    };
                    if lists {
                        let o = b.op_count() as u32;
                        if matches!(rv, ReadValue::Nil) {
                            list_reads.push(o, &[]);
                        } else {
                            list_reads.push(o, &scratch);
                        }
                    }
                    (KIND_READ, k, val)
                }
                Mop::Write(_, None) => {
                    if outcome != Outcome::Ok {
                        continue; // an unknown write of an indeterminate operation
                    }
                    return Err(at("a write's value must not be nil (nil is the initial, absent state)".into()));
                }
                Mop::Write(k, Some(v)) | Mop::Append(k, v) => (KIND_WRITE_FINAL, k, scalar_val(b, v)),
            };
            let key = match key {
                Scalar::Int(i) => b.key_int(*i),
                Scalar::Str(s) => b.key_str(s),
            };
            b.push_op(kind, key, val, None).map_err(at)?;
        }
        let session = b.session_index(&format!("p{}", done.process));
        let times = match (inv.and_then(|i| ops[i].time), done.time) {
            (Some(a), Some(c)) if a <= c && done.kind != Kind::Invoke => Some((a, c)),
            _ => None,
        };
        b.end_txn(TxnMeta { id: Some(id as u64), session, after: &[], node: NONE, times, outcome, line: done.place.line() })?;
    }
    if lists {
        b.set_lists(list_reads);
    }
    Ok(())
}

fn scalar_val(b: &mut HistoryBuilder, v: &Scalar) -> Val {
    match v {
        Scalar::Int(i) => Val::Int(*i),
        Scalar::Str(s) => b.val_str(s),
    }
}
