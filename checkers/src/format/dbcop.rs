//! dbcop's JSON history format: an array of sessions, each an array of transactions
//! `{"events": [{"Write": {"variable": 0, "version": 1}}, {"Read": {"variable": 0, "version": null}}], "committed": true}`,
//! either bare or wrapped as `{"params": …, "info": …, "start": …, "end": …, "data": [...]}`.
//!
//! Versions are unique per variable. A read of version `null` reads the initial state; so does a
//! read of version `0` when no transaction writes version 0 (older dbcop files had an implicit
//! initial transaction writing version 0 everywhere). dbcop rejects a history in which a read
//! sees any other version that nobody wrote; so do we, as an **input error** (in the causim
//! format the same read is the anomaly ThinAirRead). `committed: false` means aborted.

use super::{IntEncoding, sessions_in_order};
use crate::history::{History, HistoryBuilder, KIND_READ, KIND_WRITE_FINAL, Key, NONE, Outcome, ParseError, TxnMeta, Val, Value};
use serde::Deserialize;
use std::io::{self, BufRead, Write};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Txn {
    events: Vec<Event>,
    committed: bool,
}

#[derive(Deserialize)]
enum Event {
    Read { variable: Key, version: Value },
    Write { variable: Key, version: Value },
}

#[derive(Deserialize)]
struct Wrapped {
    data: Vec<Vec<Txn>>,
}

pub(crate) fn read(mut r: impl BufRead, b: &mut HistoryBuilder) -> Result<(), ParseError> {
    let mut text = Vec::new();
    r.read_to_end(&mut text).map_err(|e| ParseError::whole(format!("cannot read: {e}")))?;
    let first = text.iter().find(|c| !c.is_ascii_whitespace()).copied();
    let sessions: Vec<Vec<Txn>> = match first {
        None => Vec::new(),
        Some(b'{') => serde_json::from_slice::<Wrapped>(&text).map(|w| w.data).map_err(json_error)?,
        Some(_) => serde_json::from_slice(&text).map_err(json_error)?,
    };
    let mut reads: Vec<(u32, Val, usize, usize, usize)> = Vec::new();
    let mut id = 0u64;
    for (s, txns) in sessions.iter().enumerate() {
        let session = b.session_index(&format!("s{}", s + 1));
        for (t, txn) in txns.iter().enumerate() {
            b.begin_txn();
            for (e, event) in txn.events.iter().enumerate() {
                let (kind, variable, version) = match event {
                    Event::Read { variable, version } => (KIND_READ, variable, version),
                    Event::Write { variable, version } => (KIND_WRITE_FINAL, variable, version),
                };
                let key = b.key(variable);
                let val = b.val(version);
                if kind == KIND_READ && val != Val::Null {
                    reads.push((key, val, s, t, e));
                }
                b.push_op(kind, key, val, None).map_err(|p| ParseError::whole(format!("{}: {p}", place(s, t, e))))?;
            }
            let outcome = if txn.committed { Outcome::Ok } else { Outcome::Aborted };
            b.end_txn(TxnMeta { id: Some(id), session, after: &[], node: NONE, times: None, outcome, line: 0 }).map_err(|mut err| {
                err.line = None;
                err.problem = format!("{}: {}", place(s, t, usize::MAX), err.problem);
                err
            })?;
            id += 1;
        }
    }
    for (key, val, s, t, e) in reads {
        if b.is_written(key, val)? {
            continue;
        }
        if val == Val::Int(0) {
            if !b.has_initial(key) {
                b.declare_initial(key, val, 0)?;
            }
            continue;
        }
        return Err(ParseError::whole(format!(
            "{}: reads a version that no transaction writes; dbcop requires every read to observe a write \
             (convert the history to the causim format to have such reads reported as ThinAirRead)",
            place(s, t, e)
        )));
    }
    Ok(())
}

fn place(s: usize, t: usize, e: usize) -> String {
    if e == usize::MAX {
        format!("session {}, transaction {}", s + 1, t + 1)
    } else {
        format!("session {}, transaction {}, event {}", s + 1, t + 1, e + 1)
    }
}

fn json_error(e: serde_json::Error) -> ParseError {
    let mut msg = e.to_string();
    if let Some(i) = msg.rfind(" at line ") {
        msg.truncate(i);
    }
    if e.is_eof() {
        msg.push_str(" (is the file truncated?)");
    }
    ParseError { source: None, line: Some(e.line() as u64), problem: format!("column {}: {msg}", e.column()) }
}

/// Write `h` as a wrapped dbcop history (the form `dbcop verify` reads).
pub(crate) fn write(h: &History, mut w: impl Write) -> io::Result<()> {
    let enc = IntEncoding::new(h);
    let sessions = sessions_in_order(h);
    let n_event = h.txns.iter().map(|t| t.ops_len as u64).max().unwrap_or(0);
    let n_txn = sessions.iter().map(|s| s.len() as u64).max().unwrap_or(0);
    write!(
        w,
        "{{\"params\":{{\"id\":0,\"n_node\":{},\"n_variable\":{},\"n_transaction\":{n_txn},\"n_event\":{n_event}}},\
         \"info\":\"exported by causim\",\"start\":\"1970-01-01T00:00:00+00:00\",\"end\":\"1970-01-01T00:00:00+00:00\",\"data\":[",
        sessions.len(),
        h.keys.len()
    )?;
    for (si, txns) in sessions.iter().enumerate() {
        if si > 0 {
            w.write_all(b",")?;
        }
        w.write_all(b"\n[")?;
        for (ti, t) in txns.iter().enumerate() {
            if ti > 0 {
                w.write_all(b",")?;
            }
            let txn = &h.txns[*t];
            w.write_all(b"{\"events\":[")?;
            for (i, o) in txn.ops().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                let op = &h.ops[o];
                let kind = if op.is_read() { "Read" } else { "Write" };
                let version = enc.value[o].map_or_else(|| "null".to_string(), |v| v.to_string());
                write!(w, "{{\"{kind}\":{{\"variable\":{},\"version\":{version}}}}}", enc.key[op.key as usize])?;
            }
            write!(w, "],\"committed\":{}}}", txn.outcome != Outcome::Aborted)?;
        }
        w.write_all(b"]")?;
    }
    w.write_all(b"\n]}\n")
}
