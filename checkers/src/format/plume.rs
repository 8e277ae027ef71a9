//! Plume's text format, also read by PolySI and AWDIT: one operation per line,
//! `r(key,value,session,txn)` or `w(key,value,session,txn)`, all non-negative integers.
//! A transaction's operations are listed together, in program order; a session's
//! transactions appear in session order.
//!
//! Value `0` is the initial value (Plume's loaders add an initial transaction writing 0 to
//! every key) unless some operation writes 0. A read of any other value that nobody wrote is
//! the anomaly **ThinAirRead** (TAP-a), as in Plume — not an input error.
//!
//! Transaction id `-1` marks an **aborted** transaction (Plume's loader records the writes of
//! such lines as aborted writes: reading one is AbortedRead, TAP-b). Every aborted transaction
//! has that same id, so consecutive `-1` lines of one session form one aborted transaction; it
//! gets an id of its own above every id Plume can write (2^63 + n for the n-th). Any other
//! negative id is an input error.

use super::chunked::{self, CHUNK, Scanned};
use super::{IntEncoding, sessions_in_order};
use crate::fxhash::{FxHashMap, map_with_capacity};
use crate::history::{History, HistoryBuilder, KIND_READ, KIND_WRITE_FINAL, NONE, Outcome, ParseError, TxnMeta, Val};
use std::io::{self, BufRead, Write};

/// Plume's transaction id for aborted transactions.
const ABORTED: i64 = -1;
/// Ids given to aborted transactions: above every id Plume's text can hold (`i64::MAX`).
const ABORTED_ID_BASE: u64 = 1 << 63;

struct Current {
    txn: i64,
    session: u64,
    line: u64,
}

/// A line's fields: (write, key, value, session, txn).
type Fields = (bool, u64, u64, u64, i64);

/// One line, as the scanning thread left it.
enum Line {
    Blank,
    Plain(Fields),
    /// For [`parse_line`] (which words errors): the trimmed line's byte range.
    Other(u32, u32),
}

/// A chunk of whole lines, scanned.
struct Batch {
    text: Vec<u8>,
    lines: Vec<Line>,
}

impl Scanned for Batch {
    fn line_count(&self) -> u64 {
        self.lines.len() as u64
    }
}

fn scan(text: Vec<u8>) -> Batch {
    let mut lines = Vec::with_capacity(text.len() / 16 + 1);
    for (start, end) in chunked::lines(&text) {
        let raw = &text[start..end];
        let trimmed = raw.trim_ascii();
        lines.push(if trimmed.is_empty() {
            Line::Blank
        } else if let Some(fields) = parse_plain_line(trimmed) {
            Line::Plain(fields)
        } else {
            let s = start + (trimmed.as_ptr() as usize - raw.as_ptr() as usize);
            Line::Other(s as u32, (s + trimmed.len()) as u32)
        });
    }
    Batch { text, lines }
}

/// Lines are scanned on a second thread (see `chunked.rs`) and the transactions built here, in
/// order.
pub(crate) fn read(r: impl BufRead, b: &mut HistoryBuilder) -> Result<(), ParseError> {
    read_chunked(r, b, CHUNK)
}

/// [`read`] with chunks of about `chunk` bytes (small in tests, to cross many boundaries).
fn read_chunked(r: impl BufRead, b: &mut HistoryBuilder, chunk: usize) -> Result<(), ParseError> {
    let mut reader = Reader { line_no: 0, current: None, sessions: map_with_capacity(64), closed: map_with_capacity(1024), aborted: 0 };
    chunked::read(r, chunk, scan, |batch| {
        for line in &batch.lines {
            reader.line_no += 1;
            let fields = match line {
                Line::Blank => continue,
                Line::Plain(fields) => *fields,
                Line::Other(s, e) => parse_line(&batch.text[*s as usize..*e as usize]).map_err(|p| ParseError::at(reader.line_no, p))?,
            };
            reader.line(b, fields)?;
        }
        Ok(())
    })?;
    if let Some(c) = reader.current.take() {
        close(b, &mut reader.sessions, &mut reader.closed, &mut reader.aborted, c)?;
    }
    // Every key starts at 0 (Plume's loaders add a transaction writing 0 everywhere); a read of
    // 0 reads that, unless some operation wrote 0 to the key.
    b.set_default_initial(Val::Int(0));
    Ok(())
}

/// What reading has gathered so far.
struct Reader {
    line_no: u64,
    current: Option<Current>,
    sessions: FxHashMap<u64, u32>,
    /// Transactions ended, by id: the line where each started.
    closed: FxHashMap<i64, u64>,
    aborted: u64,
}

impl Reader {
    /// One operation line.
    fn line(&mut self, b: &mut HistoryBuilder, (write, key, value, session, txn): Fields) -> Result<(), ParseError> {
        let line_no = self.line_no;
        if txn < 0 && txn != ABORTED {
            return Err(ParseError::at(
                line_no,
                format!("negative transaction id {txn} (Plume writes -1 for aborted transactions, and no other negative id)"),
            ));
        }
        // A new transaction starts at a new id, or, for aborted lines, at a new session.
        if self.current.as_ref().is_some_and(|c| c.txn != txn || (txn == ABORTED && c.session != session)) {
            let c = self.current.take().expect("checked above");
            close(b, &mut self.sessions, &mut self.closed, &mut self.aborted, c)?;
        }
        // (Only a line that starts a transaction can reopen a closed one.)
        if self.current.is_none()
            && let Some(first) = self.closed.get(&txn)
        {
            return Err(ParseError::at(
                line_no,
                format!(
                    "transaction {txn} continues here after other transactions' lines (it started at line {first}); list each transaction's operations together"
                ),
            ));
        }
        match &self.current {
            Some(c) if c.session != session => {
                return Err(ParseError::at(
                    line_no,
                    format!("transaction {txn} is in session {} on line {}, but in session {session} here", c.session, c.line),
                ));
            }
            Some(_) => {}
            None => {
                b.begin_txn();
                self.current = Some(Current { txn, session, line: line_no });
            }
        }
        let k = i64::try_from(key).map_err(|_| ParseError::at(line_no, format!("key {key} is out of range")))?;
        let v = i64::try_from(value).map_err(|_| ParseError::at(line_no, format!("value {value} is out of range")))?;
        let key = b.key_int(k);
        let kind = if write { KIND_WRITE_FINAL } else { KIND_READ };
        b.push_op(kind, key, Val::Int(v), None).map_err(|p| ParseError::at(line_no, p))
    }
}

fn close(
    b: &mut HistoryBuilder,
    sessions: &mut FxHashMap<u64, u32>,
    closed: &mut FxHashMap<i64, u64>,
    aborted: &mut u64,
    c: Current,
) -> Result<(), ParseError> {
    let session = match sessions.get(&c.session) {
        Some(s) => *s,
        None => {
            let s = b.session_index(&c.session.to_string());
            sessions.insert(c.session, s);
            s
        }
    };
    let (id, outcome) = if c.txn == ABORTED {
        *aborted += 1;
        (ABORTED_ID_BASE + (*aborted - 1), Outcome::Aborted)
    } else {
        closed.insert(c.txn, c.line);
        (c.txn as u64, Outcome::Ok)
    };
    b.end_txn(TxnMeta { id: Some(id), session, after: &[], node: NONE, times: None, outcome, line: c.line })
}

/// The common case of [`parse_line`], fast: `r(1,2,3,4)` exactly, with digits only (and `-1` as
/// the transaction). `None` for anything else, which [`parse_line`] reads or words an error for.
#[inline]
fn parse_plain_line(text: &[u8]) -> Option<Fields> {
    let write = match text.first()? {
        b'r' => false,
        b'w' => true,
        _ => return None,
    };
    let (open, close) = (text.get(1)?, text.last()?);
    if *open != b'(' || *close != b')' {
        return None;
    }
    let digits = |f: &[u8]| -> Option<u64> {
        if f.is_empty() || f.len() > 19 || !f.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(f.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')))
    };
    let mut fields = text[2..text.len() - 1].split(|c| *c == b',');
    let key = digits(fields.next()?)?;
    let value = digits(fields.next()?)?;
    let session = digits(fields.next()?)?;
    let txn = match fields.next()? {
        b"-1" => -1,
        f => i64::try_from(digits(f)?).ok()?,
    };
    fields.next().is_none().then_some((write, key, value, session, txn))
}

/// Parse `r(1,2,3,4)`; spaces around numbers are tolerated.
fn parse_line(text: &[u8]) -> Result<(bool, u64, u64, u64, i64), String> {
    let bad = || format!("expected r(key,value,session,txn) or w(key,value,session,txn), found {:?}", String::from_utf8_lossy(text));
    let (write, rest) = match text.split_first() {
        Some((b'r', rest)) => (false, rest),
        Some((b'w', rest)) => (true, rest),
        _ => return Err(bad()),
    };
    let rest = rest.trim_ascii_start();
    let inner = rest.strip_prefix(b"(").and_then(|r| r.strip_suffix(b")")).ok_or_else(bad)?;
    let mut fields = inner.split(|c| *c == b',');
    let mut next = |name: &str| -> Result<&[u8], String> {
        fields.next().map(<[u8]>::trim_ascii).ok_or_else(|| format!("missing {name} in {:?}", String::from_utf8_lossy(text)))
    };
    let num = |name: &str, f: &[u8]| -> Result<u64, String> {
        std::str::from_utf8(f)
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or_else(|| format!("{name}: expected a non-negative integer, found {:?}", String::from_utf8_lossy(f)))
    };
    let key = num("key", next("key")?)?;
    let value = num("value", next("value")?)?;
    let session = num("session", next("session")?)?;
    let txn_text = next("txn")?;
    let txn = std::str::from_utf8(txn_text)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| format!("txn: expected an integer, found {:?}", String::from_utf8_lossy(txn_text)))?;
    if fields.next().is_some() {
        return Err(bad());
    }
    Ok((write, key, value, session, txn))
}

/// Write `h` in Plume's text format. Aborted transactions get Plume's id `-1`; committed
/// ones keep their id when it fits Plume's (signed) ids, else they are numbered from 0.
pub(crate) fn write(h: &History, mut w: impl Write) -> io::Result<()> {
    let enc = IntEncoding::new(h);
    let sessions = sessions_in_order(h);
    let ids_fit = h.txns.iter().all(|t| t.outcome == Outcome::Aborted || t.id <= i64::MAX as u64);
    for (s, txns) in sessions.iter().enumerate() {
        for t in txns {
            let txn = &h.txns[*t];
            let id = if txn.outcome == Outcome::Aborted {
                ABORTED
            } else if ids_fit {
                txn.id as i64
            } else {
                *t as i64
            };
            for o in txn.ops() {
                let op = &h.ops[o];
                let f = if op.is_read() { 'r' } else { 'w' };
                let v = enc.value[o].unwrap_or(0);
                writeln!(w, "{f}({},{v},{s},{id})", enc.key[op.key as usize])?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The history (or the error) read from `text` in chunks of about `chunk` bytes: the same
    /// whether written values are indexed as each transaction ends or when reading is done.
    fn outcome(text: &str, chunk: usize) -> String {
        let run = |defer: bool| {
            let mut b = HistoryBuilder::new();
            if defer {
                b.defer_write_index();
            }
            let result = read_chunked(text.as_bytes(), &mut b, chunk);
            match b.finish_reading(result) {
                Ok(h) => format!("{h:?}"),
                Err(e) => format!("error: {e}"),
            }
        };
        let at_once = run(false);
        assert_eq!(run(true), at_once, "indexing at the end changes the outcome of:\n{text}");
        at_once
    }

    #[test]
    fn chunk_boundaries_change_nothing() {
        let good = "w(1,5,0,0)\nr(2,0,0,0)\n\n  r( 1 , 5 ,1,1)\r\nw(1,6,1,-1)\nw(3,7,1,-1)\nr(1,6,0,2)\nw(2,8,0,2)";
        let reference = outcome(good, CHUNK);
        assert!(!reference.starts_with("error"), "{reference}");
        let cases = [
            // A transaction reopened after another (line 7), then a malformed line (8).
            (format!("{good}\nr(1,5,0,0)\nr(1"), "error: line 9: "),
            // A malformed line (3) before a written value repeated (line 4).
            ("w(1,5,0,0)\nw(2,5,0,0)\nw(x,1,0,1)\nw(1,5,0,2)".to_string(), "error: line 3: key: expected"),
            // A written value repeated (line 3; found when its transaction ends at line 4) before
            // a malformed line (5).
            ("w(1,5,0,0)\nw(2,5,0,0)\nw(1,5,0,1)\nw(3,1,0,2)\nw(x,1,0,3)".to_string(), "error: line 3: DuplicateWrite"),
        ];
        for chunk in [1, 5, 16, 64] {
            assert_eq!(outcome(good, chunk), reference, "chunk {chunk}");
            for (text, error) in &cases {
                let got = outcome(text, chunk);
                assert!(got.starts_with(error), "chunk {chunk}: {got}");
                assert_eq!(got, outcome(text, CHUNK), "chunk {chunk}");
            }
        }
    }
}
