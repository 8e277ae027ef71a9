//! dbcop's older binary history format: its `History` struct serialized with bincode 1
//! (little-endian, fixed-width integers, `u64` lengths), as the original dbcop (Biswas & Enea,
//! OOPSLA'19) wrote `history.bincode` and as PolySI's and Plume's generators still do:
//!
//! ```text
//! History  { params: { id, n_node, n_variable, n_transaction, n_event: u64 },
//!            info: String, start: String, end: String,        // dates as RFC 3339 text
//!            data: Vec<Session> }
//! Session  = Vec<Transaction>
//! Transaction { events: Vec<Event>, success: bool }           // false: aborted
//! Event    { write: bool, variable: u64, value: u64, success: bool }
//! ```
//!
//! An event with `success: false` did not take effect and is left out. Value `0` is the
//! initial value (dbcop's root transaction writes 0 everywhere) unless some event writes 0. A
//! read of a value nobody wrote is the anomaly ThinAirRead — dbcop itself stops on such a
//! file, but generated test files (PolySI's, Plume's TAP-a) contain exactly that.
//!
//! Lengths are checked against the bytes left, so a corrupt file is an error naming the byte
//! offset, never a huge allocation.

use super::{IntEncoding, sessions_in_order};
use crate::history::{History, HistoryBuilder, KIND_READ, KIND_WRITE_FINAL, NONE, Outcome, ParseError, TxnMeta, Val};
use std::io::{self, BufRead, Write};

struct Bytes<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Bytes<'_> {
    fn error(&self, what: &str, problem: impl std::fmt::Display) -> ParseError {
        ParseError::whole(format!("dbcop bincode, byte {}: {what}: {problem}", self.pos))
    }
    fn u64(&mut self, what: &str) -> Result<u64, ParseError> {
        let bytes = self.b.get(self.pos..self.pos + 8).ok_or_else(|| self.error(what, "the file ends here (is it truncated?)"))?;
        self.pos += 8;
        Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }
    fn bool(&mut self, what: &str) -> Result<bool, ParseError> {
        let b = *self.b.get(self.pos).ok_or_else(|| self.error(what, "the file ends here (is it truncated?)"))?;
        match b {
            0 | 1 => {
                self.pos += 1;
                Ok(b == 1)
            }
            _ => Err(self.error(what, format!("expected a boolean (0 or 1), found {b}"))),
        }
    }
    /// A length of items of at least `item_min` bytes each, checked against what is left.
    fn len(&mut self, what: &str, item_min: usize) -> Result<usize, ParseError> {
        let n = self.u64(what)?;
        let left = (self.b.len() - self.pos) as u64;
        if n.saturating_mul(item_min as u64) > left {
            self.pos -= 8;
            return Err(self.error(
                what,
                format!("a length of {n} does not fit in the {left} bytes left (is the file truncated, or not dbcop bincode?)"),
            ));
        }
        Ok(n as usize)
    }
    fn string(&mut self, what: &str) -> Result<String, ParseError> {
        let n = self.len(what, 1)?;
        let s = std::str::from_utf8(&self.b[self.pos..self.pos + n]).map_err(|_| self.error(what, "not UTF-8 text"))?;
        self.pos += n;
        Ok(s.to_string())
    }
}

pub(crate) fn read(mut r: impl BufRead, b: &mut HistoryBuilder) -> Result<(), ParseError> {
    let mut data = Vec::new();
    r.read_to_end(&mut data).map_err(|e| ParseError::whole(format!("cannot read: {e}")))?;
    let mut bytes = Bytes { b: &data, pos: 0 };
    for field in ["params.id", "params.n_node", "params.n_variable", "params.n_transaction", "params.n_event"] {
        bytes.u64(field)?;
    }
    for field in ["info", "start", "end"] {
        bytes.string(field)?;
    }
    let sessions = bytes.len("data (sessions)", 8)?;
    let mut id = 0u64;
    for s in 0..sessions {
        let session = b.session_index(&format!("s{}", s + 1));
        let txns = bytes.len(&format!("session {}", s + 1), 9)?;
        for t in 0..txns {
            let at = |e: usize| format!("session {}, transaction {}, event {}", s + 1, t + 1, e + 1);
            b.begin_txn();
            let events = bytes.len(&format!("session {}, transaction {}", s + 1, t + 1), 18)?;
            for e in 0..events {
                let write = bytes.bool(&at(e))?;
                let variable = bytes.u64(&at(e))?;
                let value = bytes.u64(&at(e))?;
                let success = bytes.bool(&at(e))?;
                if !success {
                    continue;
                }
                let (Ok(variable), Ok(value)) = (i64::try_from(variable), i64::try_from(value)) else {
                    return Err(bytes.error(&at(e), "variable or value beyond 2^63"));
                };
                let key = b.key_int(variable);
                let kind = if write { KIND_WRITE_FINAL } else { KIND_READ };
                b.push_op(kind, key, Val::Int(value), None).map_err(|p| bytes.error(&at(e), p))?;
            }
            let committed = bytes.bool(&format!("session {}, transaction {}: success", s + 1, t + 1))?;
            b.end_txn(TxnMeta {
                id: Some(id),
                session,
                after: &[],
                node: NONE,
                times: None,
                outcome: if committed { Outcome::Ok } else { Outcome::Aborted },
                line: 0,
            })
            .map_err(|mut err| {
                err.line = None;
                err.problem = format!("session {}, transaction {}: {}", s + 1, t + 1, err.problem);
                err
            })?;
            id += 1;
        }
    }
    if bytes.pos != data.len() {
        return Err(bytes.error("end", format!("{} bytes follow the history", data.len() - bytes.pos)));
    }
    b.set_default_initial(Val::Int(0));
    Ok(())
}

/// Write `h` as dbcop's bincode `History`. Values are renumbered from 1 when they are not
/// positive integers (0 is the initial value); failed transactions are written as committed.
pub(crate) fn write(h: &History, mut w: impl Write) -> io::Result<()> {
    let enc = IntEncoding::new(h);
    let sessions = sessions_in_order(h);
    let u64s = |w: &mut dyn Write, v: u64| w.write_all(&v.to_le_bytes());
    let string = |w: &mut dyn Write, s: &str| -> io::Result<()> {
        w.write_all(&(s.len() as u64).to_le_bytes())?;
        w.write_all(s.as_bytes())
    };
    let n_event = h.txns.iter().map(|t| t.ops_len as u64).max().unwrap_or(0);
    let n_txn = sessions.iter().map(|s| s.len() as u64).max().unwrap_or(0);
    for v in [0, sessions.len() as u64, h.keys.len() as u64, n_txn, n_event] {
        u64s(&mut w, v)?;
    }
    string(&mut w, "exported by causim")?;
    string(&mut w, "1970-01-01T00:00:00+00:00")?;
    string(&mut w, "1970-01-01T00:00:00+00:00")?;
    u64s(&mut w, sessions.len() as u64)?;
    for txns in &sessions {
        u64s(&mut w, txns.len() as u64)?;
        for t in txns {
            let txn = &h.txns[*t];
            u64s(&mut w, txn.ops_len as u64)?;
            for o in txn.ops() {
                let op = &h.ops[o];
                w.write_all(&[u8::from(op.is_write())])?;
                u64s(&mut w, enc.key[op.key as usize])?;
                u64s(&mut w, enc.value[o].unwrap_or(0))?;
                w.write_all(&[1])?;
            }
            w.write_all(&[u8::from(txn.outcome != Outcome::Aborted)])?;
        }
    }
    Ok(())
}
