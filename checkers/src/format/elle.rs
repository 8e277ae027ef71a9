//! Jepsen/Elle histories as JSON (as Elle's tools write them): either one JSON array of
//! operations or one operation per line. An operation is
//! `{"type": "invoke"|"ok"|"fail"|"info", "process": 3, "f": "txn", "value": [["w", "x", 1], ["r", "y", null]], "time": 12345}`
//! for rw-register histories, with `["append", "x", 1]` and list reads `["r", "x", [1, 2]]` for
//! list-append ones (keywords may keep Clojure's leading colon: `":ok"`, `":r"`). Pairing and
//! workloads are `super::jepsen`'s.

use super::jepsen::{self, Mop, Op, Place, ReadValue, Scalar};
use crate::format::causim::describe;
use crate::history::{HistoryBuilder, ParseError};
use serde_json::Value as J;
use std::io::BufRead;

pub(crate) fn read(mut r: impl BufRead, b: &mut HistoryBuilder) -> Result<(), ParseError> {
    let mut text = Vec::new();
    r.read_to_end(&mut text).map_err(|e| ParseError::whole(format!("cannot read: {e}")))?;
    let first = text.iter().find(|c| !c.is_ascii_whitespace()).copied();
    let mut ops: Vec<Op> = Vec::new();
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
    jepsen::build(ops, b)
}

fn keyword(v: &J) -> Option<&str> {
    v.as_str().map(|s| s.strip_prefix(':').unwrap_or(s))
}

fn parse_op(v: J, place: Place) -> Result<Option<Op>, ParseError> {
    let J::Object(mut m) = v else {
        return Err(place.error(format!("expected an operation object, found {}", describe(&v))));
    };
    let process = match m.get("process") {
        // A process is a non-negative integer (Jepsen numbers its workers 0, 1, …).
        Some(J::Number(n)) if n.is_u64() => n.to_string(),
        Some(J::Number(n)) => return Err(place.error(format!("process: expected a non-negative integer, found {n}"))),
        Some(J::String(s)) => s.strip_prefix(':').unwrap_or(s).to_string(),
        Some(other) => {
            return Err(place.error(format!("process: expected an integer, found {}", describe(other))));
        }
        None => return Err(place.error("missing field `process`")),
    };
    if process == "nemesis" {
        return Ok(None);
    }
    let kind = match m.get("type").and_then(keyword) {
        Some(k) => jepsen::parse_kind(k).ok_or_else(|| place.error(format!("type: expected invoke, ok, fail or info, found {k:?}")))?,
        None => return Err(place.error("missing or non-string field `type`")),
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
                out.push(parse_mop(item).map_err(|p| place.error(format!("value[{n}]: {p}")))?);
            }
            Some(out)
        }
        Some(other) => {
            return Err(place.error(format!("value: expected a list of [f, key, value] micro-operations, found {}", describe(&other))));
        }
    };
    Ok(Some(Op { kind, process, value, time, place }))
}

fn parse_mop(item: J) -> Result<Mop, String> {
    let J::Array(parts) = item else {
        return Err(format!("expected [f, key, value], found {}", describe(&item)));
    };
    if parts.len() != 3 {
        return Err(format!("expected [f, key, value] (3 elements), found {}", parts.len()));
    }
    let f = keyword(&parts[0]).ok_or_else(|| format!("[0]: expected \"r\", \"w\" or \"append\", found {}", describe(&parts[0])))?;
    let key = scalar(&parts[1]).map_err(|p| format!("key: {p}"))?;
    match f {
        "r" => Ok(Mop::Read(
            key,
            match &parts[2] {
                J::Null => ReadValue::Nil,
                J::Array(items) => {
                    ReadValue::List(items.iter().map(scalar).collect::<Result<_, _>>().map_err(|p| format!("list element: {p}"))?)
                }
                v => ReadValue::One(scalar(v).map_err(|p| format!("value: {p}"))?),
            },
        )),
        "w" => match &parts[2] {
            J::Null => Ok(Mop::Write(key, None)),
            v => Ok(Mop::Write(key, Some(scalar(v).map_err(|p| format!("value: {p}"))?))),
        },
        "append" => Ok(Mop::Append(key, scalar(&parts[2]).map_err(|p| format!("value: {p}"))?)),
        other => Err(format!("[0]: expected \"r\", \"w\" or \"append\", found {other:?}")),
    }
}

fn scalar(v: &J) -> Result<Scalar, String> {
    match v {
        J::String(s) => Ok(Scalar::Str(s.clone())),
        J::Number(x) => x.as_i64().map(Scalar::Int).ok_or_else(|| format!("{x} is not a 64-bit integer")),
        other => Err(format!("expected an integer or a string, found {}", describe(other))),
    }
}
