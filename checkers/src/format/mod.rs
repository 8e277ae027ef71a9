//! Reading and writing histories: `causim-history/2` (native), dbcop JSON, Plume text, and
//! Jepsen histories (rw-register or list-append) in EDN or Elle's JSON, with format
//! auto-detection.
//!
//! | format | read | write | notes |
//! |---|---|---|---|
//! | `causim` | yes | yes | lossless |
//! | `dbcop` | yes | yes | version `null` or `0` (when nobody writes 0) is the initial value; a read of any other unwritten version is an **input error**, as in dbcop |
//! | `plume` | yes | yes | value `0` (when nobody writes 0) is the initial value; a read of any other unwritten value is reported as the anomaly **ThinAirRead**, as Plume does |
//! | `elle` | yes | no | Jepsen ops as JSON; invoke/completion pairs per process; `ok` = committed, `fail` = aborted, `info` = failed |
//! | `jepsen-edn` | yes | no | the same, in EDN as Jepsen writes `history.edn` |
//! | `dbcop-bincode` | yes | yes | dbcop's older binary `history.bincode`; value `0` is the initial value |
//!
//! Only `causim` holds the partial order of a multi-function transaction (`fn`, `fn_after`).
//! The other formats get each transaction in its listed order, when that order means the same;
//! when some read follows (in it) a write of its key that it cannot see, the export is refused.
//! | `cobra` | yes | no | Cobra's binary client logs; a directory of `T<client>.log` files |
//!
//! Export to dbcop and Plume is lossy where those formats have no field: `after` links,
//! real-time intervals, nodes and the `failed` outcome (written as committed) are dropped;
//! Plume writes aborted transactions with id `-1`. Keys and values are renumbered to
//! non-negative integers when they are not already. List-append histories are not exported:
//! those formats hold registers, and each read would keep only its list's last element.

pub(crate) mod causim;
mod causim_fast;
mod chunked;
pub(crate) mod cobra;
pub(crate) mod dbcop;
pub(crate) mod dbcop_bincode;
pub(crate) mod edn;
pub(crate) mod elle;
pub(crate) mod jepsen;
pub(crate) mod plume;

use crate::history::{History, HistoryBuilder, InputFormat, ParseError};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

/// The most operations a reader reserves room for before it has read them.
const EXPECT_OPS_MAX: usize = 1 << 24;

/// Read a history from `reader`. With `format = None` the format is detected from the first
/// bytes (see [`detect_format`]).
pub fn read_history(reader: impl Read, format: Option<InputFormat>) -> Result<History, ParseError> {
    read_sized(reader, format, 0)
}

/// Read, knowing the input is about `size` bytes (0: unknown).
fn read_sized(reader: impl Read, format: Option<InputFormat>, size: u64) -> Result<History, ParseError> {
    let mut r = BufReader::with_capacity(1 << 16, reader);
    let format = match format {
        Some(f) => f,
        None => {
            let prefix = r.fill_buf().map_err(|e| ParseError::whole(format!("cannot read: {e}")))?;
            detect_format(prefix).ok_or_else(|| {
                ParseError::whole(
                    "cannot tell the history format from its first bytes (expected causim JSON Lines, dbcop JSON or \
                     bincode, Plume `r(k,v,s,t)` text, Elle JSON, Jepsen EDN or a Cobra log); name it with --input-format",
                )
            })?
        }
    };
    let mut b = HistoryBuilder::new();
    b.set_format(format);
    if matches!(format, InputFormat::Causim | InputFormat::Plume) {
        // Their errors name lines, so finding values written twice can wait for the end.
        b.defer_write_index();
    }
    // Bytes per operation, roughly: ~20 in Plume's text, ~40 in JSON.
    let per_op = if format == InputFormat::Plume { 20 } else { 40 };
    // At most 2^24 up front (hundreds of MB): a huge file that turns out not to be a history
    // fails before it costs its size in memory; a real one grows from there.
    b.expect_ops(((size / per_op) as usize).min(EXPECT_OPS_MAX));
    let timing = std::env::var_os("CAUSIM_CHECK_TIMING").is_some();
    let started = std::time::Instant::now();
    let cpu = if timing { crate::cpu_seconds() } else { 0.0 };
    let result = match format {
        InputFormat::Causim => causim::read(r, &mut b),
        InputFormat::Dbcop => dbcop::read(r, &mut b),
        InputFormat::Plume => plume::read(r, &mut b),
        InputFormat::Elle => elle::read(r, &mut b),
        InputFormat::JepsenEdn => jepsen::read_edn(r, &mut b),
        InputFormat::DbcopBincode => dbcop_bincode::read(r, &mut b),
        InputFormat::Cobra => cobra::read(r, &mut b),
    };
    let read = started.elapsed();
    let read_cpu = if timing { crate::cpu_seconds() - cpu } else { 0.0 };
    let history = b.finish_reading(result);
    if timing {
        eprintln!(
            "  read: {:.3} s wall, {:.2} s cpu; written values indexed and reads-from: {:.3} s wall, {:.2} s cpu",
            read.as_secs_f64(),
            read_cpu,
            (started.elapsed() - read).as_secs_f64(),
            crate::cpu_seconds() - cpu - read_cpu
        );
    }
    history
}

/// Read a history file; errors name the file. A directory is read as Cobra's client logs.
pub fn read_history_path(path: &Path, format: Option<InputFormat>) -> Result<History, ParseError> {
    let name = path.display().to_string();
    if path.is_dir() {
        if format.is_some_and(|f| f != InputFormat::Cobra) {
            return Err(ParseError::whole("is a directory (only Cobra's logs come as a directory)").in_file(&name));
        }
        let mut b = HistoryBuilder::new();
        b.set_format(InputFormat::Cobra);
        cobra::read_dir(path, &mut b).map_err(|e| e.in_file(&name))?;
        return b.finish().map_err(|e| e.in_file(name));
    }
    let file = File::open(path).map_err(|e| ParseError::whole(format!("cannot open: {e}")).in_file(&name))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    read_sized(file, format, size).map_err(|e| e.in_file(name))
}

/// Guess the format from the first bytes of a file:
/// `[[` dbcop (raw sessions), `[{` Elle (array of ops), `r(`/`w(` Plume, `{:`, `[{:`, `#` or
/// `;` Jepsen EDN, `{` causim unless the object is a dbcop wrapper (`data`, `params`) or a
/// Jepsen op (`type` + `process`).
pub fn detect_format(prefix: &[u8]) -> Option<InputFormat> {
    // dbcop bincode: six little-endian u64s (five parameters, then the info text's length),
    // all small, so each has four zero high bytes — which no text file has.
    if prefix.len() >= 48 && prefix[..48].chunks(8).all(|c| c[4..] == [0, 0, 0, 0]) {
        return Some(InputFormat::DbcopBincode);
    }
    // Cobra: a start record `S` and its transaction id, then another record (or the end).
    if prefix.first() == Some(&b'S') && prefix.len() >= 9 && prefix.get(9).is_none_or(|c| b"WRC".contains(c)) {
        return Some(InputFormat::Cobra);
    }
    let text = prefix.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(prefix);
    let start = text.iter().position(|c| !c.is_ascii_whitespace());
    let Some(start) = start else {
        return Some(InputFormat::Causim);
    };
    let text = &text[start..];
    // The first non-space byte after position `i`.
    let after =
        |i: usize| text.get(i + 1..).and_then(|rest| rest.iter().position(|c| !c.is_ascii_whitespace() && *c != b',').map(|p| i + 1 + p));
    match text[0] {
        b'#' | b';' => Some(InputFormat::JepsenEdn),
        b'{' if after(0).is_some_and(|i| text[i] == b':') => Some(InputFormat::JepsenEdn),
        b'[' => match after(0) {
            Some(i) if text[i] == b'{' && after(i).is_some_and(|j| text[j] == b':') => Some(InputFormat::JepsenEdn),
            Some(i) if text[i] == b'{' => Some(InputFormat::Elle),
            _ => Some(InputFormat::Dbcop),
        },
        b'r' | b'w' => {
            let next = text[1..].iter().find(|c| !c.is_ascii_whitespace());
            (next == Some(&b'(')).then_some(InputFormat::Plume)
        }
        b'{' => {
            let first_line = text.split(|c| *c == b'\n').next().unwrap_or(text);
            if let Ok(serde_json::Value::Object(m)) = serde_json::from_slice::<serde_json::Value>(first_line) {
                if m.contains_key("format") || m.contains_key("session") || m.contains_key("ops") {
                    return Some(InputFormat::Causim);
                }
                if m.contains_key("data") || m.contains_key("params") {
                    return Some(InputFormat::Dbcop);
                }
                if m.contains_key("type") && (m.contains_key("process") || m.contains_key("value")) {
                    return Some(InputFormat::Elle);
                }
                return Some(InputFormat::Causim);
            }
            // A multi-line (pretty-printed) object or a very long first line.
            let has = |needle: &[u8]| text.windows(needle.len()).any(|w| w == needle);
            if has(b"\"session\"") || has(b"\"ops\"") || has(b"\"format\"") {
                Some(InputFormat::Causim)
            } else if has(b"\"data\"") || has(b"\"params\"") {
                Some(InputFormat::Dbcop)
            } else if has(b"\"process\"") {
                Some(InputFormat::Elle)
            } else {
                Some(InputFormat::Causim)
            }
        }
        _ => None,
    }
}

/// Formats `causim check --export` can write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    Causim,
    Dbcop,
    Plume,
    DbcopBincode,
}

impl ExportFormat {
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Causim => "causim",
            ExportFormat::Dbcop => "dbcop",
            ExportFormat::Plume => "plume",
            ExportFormat::DbcopBincode => "dbcop-bincode",
        }
    }

    pub fn parse(s: &str) -> Option<ExportFormat> {
        match InputFormat::parse(s)? {
            InputFormat::Causim => Some(ExportFormat::Causim),
            InputFormat::Dbcop => Some(ExportFormat::Dbcop),
            InputFormat::Plume => Some(ExportFormat::Plume),
            InputFormat::DbcopBincode => Some(ExportFormat::DbcopBincode),
            InputFormat::Elle | InputFormat::JepsenEdn | InputFormat::Cobra => None,
        }
    }
}

/// Write `h` in `format`. A list-append history cannot be written (the formats hold
/// registers): that is an `InvalidInput` error saying so.
pub fn write_history(h: &History, format: ExportFormat, w: impl Write) -> io::Result<()> {
    if h.lists.is_some() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "cannot export a list-append history as {}: the format holds registers, so each read would keep only its list's last element and the order of appends the lists show would be lost",
                format.name()
            ),
        ));
    }
    // The other formats know only totally ordered transactions: each is written in its listed
    // order (a linear extension of its partial order), which means the same whenever no read
    // follows, in that order, a write of its key it cannot see. Otherwise refuse.
    if format != ExportFormat::Causim
        && let Some(why) = h.unfaithful_linearisation()
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "cannot export this history as {}: the format orders each transaction's operations totally, and {why}; export it as causim",
                format.name()
            ),
        ));
    }
    let mut w = io::BufWriter::new(w);
    match format {
        ExportFormat::Causim => causim::write(h, &mut w)?,
        ExportFormat::Dbcop => dbcop::write(h, &mut w)?,
        ExportFormat::Plume => plume::write(h, &mut w)?,
        ExportFormat::DbcopBincode => dbcop_bincode::write(h, &mut w)?,
    }
    w.flush()
}

/// Integer encodings of keys and values for formats that only have non-negative integers.
pub(crate) struct IntEncoding {
    /// Per key index.
    pub key: Vec<u64>,
    /// Per op index: the encoded value (for reads of the initial value: `None`).
    pub value: Vec<Option<u64>>,
}

impl IntEncoding {
    /// Keys stay as they are when all are non-negative integers; values stay when all written
    /// values are positive integers (0 is the initial value in Plume and old dbcop files).
    /// Otherwise they are numbered densely (keys from 0, values per key from 1).
    pub(crate) fn new(h: &History) -> IntEncoding {
        use crate::history::{Key, RF_INIT, RF_NONE, Val};
        let keys_ok = h.keys.iter().all(|k| matches!(k, Key::Int(i) if *i >= 0));
        let key: Vec<u64> = if keys_ok {
            h.keys.iter().map(|k| if let Key::Int(i) = k { *i as u64 } else { 0 }).collect()
        } else {
            (0..h.keys.len() as u64).collect()
        };
        let values_ok = h.ops.iter().filter(|o| o.is_write()).all(|o| matches!(o.val(), Val::Int(i) if i >= 1));
        let mut value = vec![None; h.ops.len()];
        let mut next = vec![1u64; h.keys.len()];
        let mut max_seen: u64 = 0;
        for (o, op) in h.ops.iter().enumerate() {
            if op.is_write() {
                let v = if values_ok {
                    if let Val::Int(i) = op.val() { i as u64 } else { 0 }
                } else {
                    let n = next[op.key as usize];
                    next[op.key as usize] += 1;
                    n
                };
                max_seen = max_seen.max(v);
                value[o] = Some(v);
            }
        }
        let mut fresh = max_seen.max(next.iter().copied().max().unwrap_or(1)) + 1;
        for (o, op) in h.ops.iter().enumerate() {
            if !op.is_read() {
                continue;
            }
            value[o] = match h.rf[o] {
                RF_INIT => None,
                RF_NONE => {
                    let keep = match op.val() {
                        Val::Int(i) if values_ok && i >= 1 => Some(i as u64),
                        _ => None,
                    };
                    Some(keep.unwrap_or_else(|| {
                        fresh += 1;
                        fresh - 1
                    }))
                }
                w => value[w as usize],
            };
        }
        IntEncoding { key, value }
    }
}

/// Sessions in order of first appearance, each with its transactions in history order.
pub(crate) fn sessions_in_order(h: &History) -> Vec<Vec<usize>> {
    let mut index = vec![usize::MAX; h.sessions.len()];
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        let s = txn.session as usize;
        if index[s] == usize::MAX {
            index[s] = out.len();
            out.push(Vec::new());
        }
        out[index[s]].push(t);
    }
    out
}
