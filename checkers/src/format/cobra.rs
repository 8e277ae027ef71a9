//! Cobra's client logs (Tan et al., "Cobra: Making Transactional Key-Value Stores Verifiably
//! Serializable", OSDI'20): one binary file per client, `T<client>.log`, a sequence of records
//! with big-endian 64-bit fields, as Cobra's verifier parses them:
//!
//! ```text
//! 'S' txn                          a transaction starts
//! 'W' write-id key value           a write (key and value are hashes; write ids are unique)
//! 'R' writer-txn write-id key value   a read of the write `write-id` of `writer-txn`
//! 'C' txn                          it commits
//! ```
//!
//! Reads name the write they read, so a write's value here is its write id and a read's value
//! the write id it names; a read naming Cobra's initial or null write (`0xbebeebee`,
//! `0xdeadbeef`) reads the initial value. A client's transactions are its session, in file
//! order. Aborted transactions never appear in Cobra's logs; a transaction still open at the
//! end of a file (no `C`) has an unknown outcome (`failed`). Logs written with Cobra's
//! `TIME_ORDER_ON` (a timestamp after each `S` and `C`) are not supported: their bytes do not
//! parse, and the error names the offset.
//!
//! A directory is read as Cobra's verifier reads one: every `*.log` file in it, one client
//! each, ordered by client number.

use crate::history::{HistoryBuilder, KIND_READ, KIND_WRITE_FINAL, NONE, Outcome, ParseError, TxnMeta, Val};
use std::io::BufRead;
use std::path::Path;

/// Cobra's ids of the initial and the null write (and of their transactions).
const INIT_ID: u64 = 0xbebe_ebee;
const NULL_ID: u64 = 0xdead_beef;

/// Read one client's log from `r` as session `client`.
pub(crate) fn read(mut r: impl BufRead, b: &mut HistoryBuilder) -> Result<(), ParseError> {
    let mut data = Vec::new();
    r.read_to_end(&mut data).map_err(|e| ParseError::whole(format!("cannot read: {e}")))?;
    read_client(&data, "T", b)
}

/// Read every `*.log` file of directory `dir`, one client each.
pub(crate) fn read_dir(dir: &Path, b: &mut HistoryBuilder) -> Result<(), ParseError> {
    let entries = std::fs::read_dir(dir).map_err(|e| ParseError::whole(format!("cannot list the directory: {e}")))?;
    let mut files: Vec<(i64, String)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| ParseError::whole(format!("cannot list the directory: {e}")))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".log") {
            // `T12.log` is client 12; other names sort after the numbered ones.
            let client = stem.strip_prefix('T').and_then(|n| n.parse::<i64>().ok()).unwrap_or(i64::MAX);
            files.push((client, name));
        }
    }
    if files.is_empty() {
        return Err(ParseError::whole("no Cobra client log (`*.log`) in this directory"));
    }
    files.sort();
    for (_, name) in files {
        let data = std::fs::read(dir.join(&name)).map_err(|e| ParseError::whole(format!("{name}: cannot read: {e}")))?;
        let session = name.trim_end_matches(".log").to_string();
        read_client(&data, &session, b).map_err(|e| ParseError::whole(format!("{name}: {}", e.problem)))?;
    }
    Ok(())
}

fn read_client(data: &[u8], client: &str, b: &mut HistoryBuilder) -> Result<(), ParseError> {
    let session = b.session_index(client);
    let mut pos = 0usize;
    let err = |at: usize, problem: String| ParseError::whole(format!("Cobra log, byte {at}: {problem}"));
    let field = |pos: &mut usize| -> Result<u64, ParseError> {
        let bytes = data.get(*pos..*pos + 8).ok_or_else(|| err(*pos, "the file ends inside a record (is it truncated?)".into()))?;
        *pos += 8;
        Ok(u64::from_be_bytes(bytes.try_into().expect("8 bytes")))
    };
    // The open transaction: its id and where its `S` is.
    let mut open: Option<(u64, usize)> = None;
    while pos < data.len() {
        let at = pos;
        let kind = data[pos];
        pos += 1;
        match kind {
            b'S' => {
                let txn = field(&mut pos)?;
                if let Some((t, s)) = open {
                    return Err(err(at, format!("transaction {t:#x} (started at byte {s}) has no commit before the next start")));
                }
                b.begin_txn();
                open = Some((txn, at));
            }
            b'W' | b'R' => {
                if open.is_none() {
                    return Err(err(at, format!("a {} record outside a transaction", kind as char)));
                }
                let write_txn = if kind == b'R' { Some(field(&mut pos)?) } else { None };
                let wid = field(&mut pos)?;
                let key = field(&mut pos)? as i64;
                let _value_hash = field(&mut pos)?;
                let key = b.key_int(key);
                let (op, val) = match write_txn {
                    None => (KIND_WRITE_FINAL, Val::Int(wid as i64)),
                    Some(t) if (t == INIT_ID || t == NULL_ID) && (wid == INIT_ID || wid == NULL_ID) => (KIND_READ, Val::Null),
                    Some(_) => (KIND_READ, Val::Int(wid as i64)),
                };
                b.push_op(op, key, val, None).map_err(|p| err(at, p))?;
            }
            b'C' => {
                let txn = field(&mut pos)?;
                match open.take() {
                    Some((t, s)) if t == txn => end(b, t, session, s, Outcome::Ok)?,
                    Some((t, _)) => return Err(err(at, format!("commit of transaction {txn:#x}, but {t:#x} is open"))),
                    None => return Err(err(at, format!("commit of transaction {txn:#x}, which never started"))),
                }
            }
            b'A' => return Err(err(at, "an abort record: Cobra's logs leave aborted transactions out, and this format has none".into())),
            other => {
                return Err(err(
                    at,
                    format!("unknown record type {other:#04x} (expected S, W, R or C; logs with timestamps are not supported)"),
                ));
            }
        }
    }
    if let Some((t, s)) = open {
        end(b, t, session, s, Outcome::Failed)?;
    }
    Ok(())
}

fn end(b: &mut HistoryBuilder, txn: u64, session: u32, at: usize, outcome: Outcome) -> Result<(), ParseError> {
    b.end_txn(TxnMeta { id: Some(txn), session, after: &[], node: NONE, times: None, outcome, line: 0 })
        .map_err(|e| ParseError::whole(format!("Cobra log, byte {at}: {}", e.problem)))
}
