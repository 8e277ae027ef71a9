//! Jepsen/Elle rw-register histories as JSON: either one JSON array of operations or one
//! operation per line. An operation is
//! `{"type": "invoke"|"ok"|"fail"|"info", "process": 3, "f": "txn", "value": [["w", "x", 1], ["r", "y", null]], "time": 12345}`
//! (keywords may keep Clojure's leading colon: `":ok"`, `":r"`).
//!
//! Each process is a session. An invocation is paired with the next completion of the same
//! process: `ok` is a committed transaction with the completion's values, `fail` an aborted one,
//! `info` (or no completion at all) a failed one, whose writes come from the invocation. Times
//! become the real-time interval. Operations of the `nemesis` process are skipped.
//! List-append operations are not supported (this is the rw-register shape).

use crate::format::causim::describe;
use crate::fxhash::{FxHashMap, map_with_capacity};
use crate::history::{HistoryBuilder, KIND_READ, KIND_WRITE_FINAL, NONE, Outcome, ParseError, TxnMeta, Val};
use serde_json::Value as J;
use std::io::BufRead;

struct Parsed {
    kind: Kind,
    process: String,
    value: Option<Vec<(bool, J, J)>>,
    time: Option<u64>,
    place: Place,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Invoke,
    Ok,
    Fail,
    Info,
}

#[derive(Clone, Copy)]
enum Place {
    Line(u64),
    Index(usize),
}

impl Place {
    fn error(self, problem: String) -> ParseError {
        match self {
            Place::Line(l) => ParseError::at(l, problem),
            Place::Index(i) => ParseError::whole(format!("operation #{i}: {problem}")),
        }
    }
    fn line(self) -> u64 {
        match self {
            Place::Line(l) => l,
            Place::Index(_) => 0,
        }
    }
}

pub(crate) fn read(mut r: impl BufRead, b: &mut HistoryBuilder) -> Result<(), ParseError> {
    let mut text = Vec::new();
    r.read_to_end(&mut text).map_err(|e| ParseError::whole(format!("cannot read: {e}")))?;
    let first = text.iter().find(|c| !c.is_ascii_whitespace()).copied();
    let mut ops: Vec<Parsed> = Vec::new();
    if first == Some(b'[') {
        let all: Vec<J> = serde_json::from_slice(&text)
            .map_err(|e| ParseError::at(e.line() as u64, format!("malformed JSON at column {}: {e}", e.column())))?;
        for (i, v) in all.into_iter().enumerate() {
            if let Some(p) = parse_op(v, Place::Index(i))? {
                ops.push(p);
            }
        }
    } else {
        for (i, line) in text.split(|c| *c == b'\n').enumerate() {
            let line_no = i as u64 + 1;
            let line = line.trim_ascii();
            if line.is_empty() {
                continue;
            }
            let v: J = serde_json::from_slice(line).map_err(|e| {
                let hint = if e.is_eof() { " (is the line truncated?)" } else { "" };
                ParseError::at(line_no, format!("malformed JSON at column {}: {e}{hint}", e.column()))
            })?;
            if let Some(p) = parse_op(v, Place::Line(line_no))? {
                ops.push(p);
            }
        }
    }
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
                        describe_place(ops[prev].place)
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
    let mut lone: Vec<usize> = (0..ops.len()).filter(|i| !emitted[*i]).collect();
    lone.sort_unstable();
    for i in lone {
        order.push((i, None));
    }
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
        for (n, (write, key, val)) in value.map(Vec::as_slice).unwrap_or(&[]).iter().enumerate() {
            let key = match key {
                J::String(s) => b.key_str(s),
                J::Number(x) => match x.as_i64() {
                    Some(i) => b.key_int(i),
                    None => {
                        return Err(done.place.error(format!("value[{n}]: key {x} is not a 64-bit integer")));
                    }
                },
                other => {
                    return Err(done.place.error(format!("value[{n}]: expected a string or integer key, found {}", describe(other))));
                }
            };
            let v = match val {
                J::Null => Val::Null,
                J::String(s) => b.val_str(s),
                J::Number(x) => match x.as_i64() {
                    Some(i) => Val::Int(i),
                    None => {
                        return Err(done.place.error(format!("value[{n}]: value {x} is not a 64-bit integer")));
                    }
                },
                other => {
                    return Err(done.place.error(format!("value[{n}]: expected an integer, a string or null, found {}", describe(other))));
                }
            };
            if *write && v == Val::Null && outcome != Outcome::Ok {
                continue; // an unknown write of an indeterminate operation
            }
            let kind = if *write { KIND_WRITE_FINAL } else { KIND_READ };
            b.push_op(kind, key, v, None).map_err(|p| done.place.error(format!("value[{n}]: {p}")))?;
        }
        let session = b.session_index(&format!("p{}", done.process));
        let times = match (inv.and_then(|i| ops[i].time), done.time) {
            (Some(a), Some(c)) if a <= c && done.kind != Kind::Invoke => Some((a, c)),
            _ => None,
        };
        b.end_txn(TxnMeta { id: Some(id as u64), session, after: &[], node: NONE, times, outcome, line: done.place.line() })?;
    }
    Ok(())
}

fn describe_place(p: Place) -> String {
    match p {
        Place::Line(l) => format!("line {l}"),
        Place::Index(i) => format!("operation #{i}"),
    }
}

fn keyword(v: &J) -> Option<&str> {
    v.as_str().map(|s| s.strip_prefix(':').unwrap_or(s))
}

fn parse_op(v: J, place: Place) -> Result<Option<Parsed>, ParseError> {
    let J::Object(mut m) = v else {
        return Err(place.error(format!("expected an operation object, found {}", describe(&v))));
    };
    let process = match m.get("process") {
        Some(J::Number(n)) => n.to_string(),
        Some(J::String(s)) => s.strip_prefix(':').unwrap_or(s).to_string(),
        Some(other) => {
            return Err(place.error(format!("process: expected an integer, found {}", describe(other))));
        }
        None => return Err(place.error("missing field `process`".into())),
    };
    if process == "nemesis" {
        return Ok(None);
    }
    let kind = match m.get("type").and_then(keyword) {
        Some("invoke") => Kind::Invoke,
        Some("ok") => Kind::Ok,
        Some("fail") => Kind::Fail,
        Some("info") => Kind::Info,
        Some(other) => {
            return Err(place.error(format!("type: expected invoke, ok, fail or info, found {other:?}")));
        }
        None => return Err(place.error("missing or non-string field `type`".into())),
    };
    let time = match m.get("time") {
        None | Some(J::Null) => None,
        Some(J::Number(n)) => n.as_u64(),
        Some(other) => {
            return Err(place.error(format!("time: expected an integer, found {}", describe(other))));
        }
    };
    let value = match m.remove("value") {
        None | Some(J::Null) => None,
        Some(J::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (n, item) in items.into_iter().enumerate() {
                let J::Array(parts) = item else {
                    return Err(place.error(format!("value[{n}]: expected [f, key, value], found {}", describe(&item))));
                };
                if parts.len() != 3 {
                    return Err(place.error(format!("value[{n}]: expected [f, key, value] (3 elements), found {}", parts.len())));
                }
                let mut parts = parts.into_iter();
                let f = parts.next().expect("three parts");
                let write = match keyword(&f) {
                    Some("r") => false,
                    Some("w") => true,
                    Some("append") => {
                        return Err(
                            place.error(format!("value[{n}]: list-append operations are not supported (only rw-register histories)"))
                        );
                    }
                    _ => {
                        return Err(place.error(format!("value[{n}][0]: expected \"r\" or \"w\", found {}", describe(&f))));
                    }
                };
                let key = parts.next().expect("three parts");
                let val = parts.next().expect("three parts");
                out.push((write, key, val));
            }
            Some(out)
        }
        Some(other) => {
            return Err(place.error(format!("value: expected a list of [f, key, value] micro-operations, found {}", describe(&other))));
        }
    };
    Ok(Some(Parsed { kind, process, value, time, place }))
}
