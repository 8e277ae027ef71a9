//! The history model: what clients observed, independent of any simulator or database.
//!
//! A history is a list of **transactions** (a single read or write is a one-operation
//! transaction), each in a **session** (a sequential client; in causim one attempt of one
//! workflow), with an outcome (`ok`, `aborted`, `failed`), optional program-order links to other
//! sessions (`after`, for workflow DAGs), optional real-time intervals, and operations that read
//! or write one key. Written values are unique per key, so *reads-from* is inferred from values.
//!
//! The public boundary types are [`TxnRecord`] and [`OpRecord`] (one line of the
//! `causim-history/2` format, see `docs/history-format.md`) and [`Header`]. A [`History`] is built
//! from them by [`HistoryBuilder`] or read from a file by [`crate::read_history`]. Internally the
//! history is stored compactly (16 bytes per operation, interned keys and strings) so that
//! million-transaction histories fit comfortably in memory.

use crate::fn_order::FnOrder;
use crate::fxhash::{FxHashMap, map_with_capacity};
use crate::graph::prefetch;
use crate::written::Written;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;

// ---------------------------------------------------------------------------------------------
// Keys and values (public)

/// A key: a JSON string or integer. Keys compare by JSON value, so `"1"` and `1` differ.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    Int(i64),
    Str(Box<str>),
}

/// A value: a JSON integer, string, or `null` (the initial, absent state, for reads only).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    Null,
    Int(i64),
    Str(Box<str>),
}

impl From<&str> for Key {
    fn from(s: &str) -> Key {
        Key::Str(s.into())
    }
}
impl From<i64> for Key {
    fn from(i: i64) -> Key {
        Key::Int(i)
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.into())
    }
}
impl From<Option<i64>> for Value {
    fn from(v: Option<i64>) -> Value {
        v.map_or(Value::Null, Value::Int)
    }
}

impl fmt::Display for Key {
    /// Keys print bare (`x`), except strings that would read as a number or are not simple
    /// words, which print quoted (`"1"`), so that `"1"` and `1` stay distinguishable.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Int(i) => write!(f, "{i}"),
            Key::Str(s) => {
                let simple = !s.is_empty()
                    && !s.starts_with(|c: char| c.is_ascii_digit() || c == '-')
                    && s.chars().all(|c| c.is_alphanumeric() || "_-./:#@".contains(c));
                if simple { write!(f, "{s}") } else { write!(f, "{}", json_quote(s)) }
            }
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => write!(f, "⊥"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Str(s) => write!(f, "{}", json_quote(s)),
        }
    }
}

pub(crate) fn json_quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string always serializes")
}

impl Serialize for Key {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Key::Int(i) => s.serialize_i64(*i),
            Key::Str(x) => s.serialize_str(x),
        }
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => s.serialize_none(),
            Value::Int(i) => s.serialize_i64(*i),
            Value::Str(x) => s.serialize_str(x),
        }
    }
}

struct ScalarVisitor {
    allow_null: bool,
}

impl<'de> serde::de::Visitor<'de> for ScalarVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.allow_null { write!(f, "an integer, a string or null") } else { write!(f, "a string or an integer") }
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        i64::try_from(v).map(Value::Int).map_err(|_| E::custom(format!("integer {v} is out of range (at most {})", i64::MAX)))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.into()))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        if self.allow_null { Ok(Value::Null) } else { Err(E::invalid_type(serde::de::Unexpected::Unit, &self)) }
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        match d.deserialize_any(ScalarVisitor { allow_null: false })? {
            Value::Int(i) => Ok(Key::Int(i)),
            Value::Str(s) => Ok(Key::Str(s)),
            Value::Null => unreachable!("the key visitor rejects null"),
        }
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ScalarVisitor { allow_null: true })
    }
}

/// How a transaction ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Committed.
    #[default]
    Ok,
    /// Definitely not applied: its writes were never visible to anyone.
    Aborted,
    /// Unknown (Jepsen's `info`): its writes may be read by others; its reads are not judged.
    Failed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Aborted => "aborted",
            Outcome::Failed => "failed",
        }
    }
}

/// Read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OpKind {
    #[serde(rename = "r")]
    Read,
    #[serde(rename = "w")]
    Write,
}

/// One operation of a [`TxnRecord`]: the `ops[i]` object of a history line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpRecord {
    pub f: OpKind,
    pub key: Key,
    pub value: Value,
    /// Protocol metadata (informative; the checker ignores it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ns: Option<u64>,
    /// The function of a multi-function transaction that ran it (`causim-history/2`); with
    /// [`TxnRecord::fn_after`] it places the operation in the transaction's partial order.
    #[serde(default, rename = "fn", skip_serializing_if = "Option::is_none")]
    pub function: Option<i64>,
}

impl OpRecord {
    pub fn read(key: impl Into<Key>, value: impl Into<Value>) -> OpRecord {
        OpRecord { f: OpKind::Read, key: key.into(), value: value.into(), version: None, node: None, at_ns: None, function: None }
    }
    pub fn write(key: impl Into<Key>, value: impl Into<Value>) -> OpRecord {
        OpRecord { f: OpKind::Write, key: key.into(), value: value.into(), version: None, node: None, at_ns: None, function: None }
    }
    /// This operation, run by function `f` of its transaction.
    pub fn in_function(mut self, f: i64) -> OpRecord {
        self.function = Some(f);
        self
    }
}

/// One transaction: a line of the `causim-history/2` format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TxnRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    pub session: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<u64>,
    #[serde(default, rename = "fn", skip_serializing_if = "Option::is_none")]
    pub function: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invoke_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_ns: Option<u64>,
    #[serde(default)]
    pub outcome: Outcome,
    pub ops: Vec<OpRecord>,
    /// The order between the functions of a multi-function transaction (`causim-history/2`):
    /// `[a, b]` says function `a` precedes function `b`. See `docs/history-format.md`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fn_after: Vec<(i64, i64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl TxnRecord {
    /// A committed transaction with no id (the builder numbers it), no node and no times.
    pub fn new(session: impl Into<String>, ops: Vec<OpRecord>) -> TxnRecord {
        TxnRecord {
            id: None,
            session: session.into(),
            after: Vec::new(),
            function: None,
            kind: None,
            node: None,
            invoke_ns: None,
            complete_ns: None,
            outcome: Outcome::Ok,
            ops,
            fn_after: Vec::new(),
            note: None,
        }
    }
    pub fn with_id(mut self, id: u64) -> TxnRecord {
        self.id = Some(id);
        self
    }
    pub fn with_outcome(mut self, outcome: Outcome) -> TxnRecord {
        self.outcome = outcome;
        self
    }
    pub fn with_after(mut self, after: Vec<u64>) -> TxnRecord {
        self.after = after;
        self
    }
    pub fn with_node(mut self, node: impl Into<String>) -> TxnRecord {
        self.node = Some(node.into());
        self
    }
    /// The order between the functions its operations name (see [`OpRecord::in_function`]).
    pub fn with_fn_after(mut self, edges: Vec<(i64, i64)>) -> TxnRecord {
        self.fn_after = edges;
        self
    }
}

/// The optional header line. Only `initial` matters to the checker; the rest is informative.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Header {
    /// Declared initial values. A key not listed starts absent (`null`).
    pub initial: Vec<(Key, Value)>,
    /// Informative fields (`scenario`, `seed`, `protocol`, …) as JSON text, sorted by name.
    pub info: BTreeMap<String, String>,
}

/// The history formats `causim check` reads (and, for some, writes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputFormat {
    /// `causim-history/2` (and `/1`) JSON Lines (`docs/history-format.md`).
    Causim,
    /// dbcop's JSON history (sessions of transactions of `Read`/`Write` events).
    Dbcop,
    /// Plume's text format `r(key,value,session,txn)`, also read by PolySI and AWDIT.
    Plume,
    /// A Jepsen/Elle history as JSON (an array of ops, or one op per line): rw-register or
    /// list-append.
    Elle,
    /// A Jepsen history as Jepsen writes it, in EDN: rw-register or list-append.
    JepsenEdn,
    /// dbcop's older binary format (its `History` struct in bincode 1).
    DbcopBincode,
    /// Cobra's binary client logs (`T<client>.log`; a directory holds one per client).
    Cobra,
}

impl InputFormat {
    pub fn name(self) -> &'static str {
        match self {
            InputFormat::Causim => "causim",
            InputFormat::Dbcop => "dbcop",
            InputFormat::Plume => "plume",
            InputFormat::Elle => "elle",
            InputFormat::JepsenEdn => "jepsen-edn",
            InputFormat::DbcopBincode => "dbcop-bincode",
            InputFormat::Cobra => "cobra",
        }
    }
    pub fn parse(s: &str) -> Option<InputFormat> {
        match s {
            "causim" | "causim-history/2" | "causim-history/1" | "jsonl" => Some(InputFormat::Causim),
            "dbcop" => Some(InputFormat::Dbcop),
            "dbcop-bincode" | "bincode" => Some(InputFormat::DbcopBincode),
            "cobra" => Some(InputFormat::Cobra),
            "plume" | "polysi" | "awdit" => Some(InputFormat::Plume),
            "elle" | "jepsen" | "elle-json" | "jepsen-json" => Some(InputFormat::Elle),
            "jepsen-edn" | "edn" => Some(InputFormat::JepsenEdn),
            _ => None,
        }
    }
}

/// Bad input: a malformed or inconsistent history. Names the file (when known), the line (when
/// the format has lines) and the problem. Never a panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub source: Option<String>,
    pub line: Option<u64>,
    pub problem: String,
}

impl ParseError {
    pub(crate) fn at(line: u64, problem: impl Into<String>) -> ParseError {
        ParseError { source: None, line: Some(line), problem: problem.into() }
    }
    pub(crate) fn whole(problem: impl Into<String>) -> ParseError {
        ParseError { source: None, line: None, problem: problem.into() }
    }
    /// Attach the file name, for messages like `h.jsonl:17: …`.
    pub fn in_file(mut self, source: impl Into<String>) -> ParseError {
        self.source = Some(source.into());
        self
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.source, self.line) {
            (Some(s), Some(l)) => write!(f, "{s}:{l}: {}", self.problem),
            (Some(s), None) => write!(f, "{s}: {}", self.problem),
            (None, Some(l)) => write!(f, "line {l}: {}", self.problem),
            (None, None) => write!(f, "{}", self.problem),
        }
    }
}

impl std::error::Error for ParseError {}

// ---------------------------------------------------------------------------------------------
// Compact internal representation

/// A value as stored: integers inline, strings interned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Val {
    Null,
    Int(i64),
    Str(u32),
}

pub(crate) const KIND_READ: u8 = 0;
/// A write that is its transaction's last write to its key (the value others may read).
pub(crate) const KIND_WRITE_FINAL: u8 = 1;
/// A write that the same transaction overwrites later (reading it is an IntermediateRead).
pub(crate) const KIND_WRITE_OVERWRITTEN: u8 = 2;

const TAG_NULL: u8 = 0;
const TAG_INT: u8 = 1;
const TAG_STR: u8 = 2;

/// One operation, 16 bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Op {
    payload: i64,
    pub key: u32,
    pub kind: u8,
    tag: u8,
}

impl Op {
    pub(crate) fn new(kind: u8, key: u32, val: Val) -> Op {
        let (tag, payload) = match val {
            Val::Null => (TAG_NULL, 0),
            Val::Int(i) => (TAG_INT, i),
            Val::Str(s) => (TAG_STR, i64::from(s)),
        };
        Op { payload, key, kind, tag }
    }
    #[inline]
    pub fn val(&self) -> Val {
        match self.tag {
            TAG_NULL => Val::Null,
            TAG_INT => Val::Int(self.payload),
            _ => Val::Str(self.payload as u32),
        }
    }
    #[inline]
    pub fn is_read(&self) -> bool {
        self.kind == KIND_READ
    }
    #[inline]
    pub fn is_write(&self) -> bool {
        self.kind != KIND_READ
    }
}

/// `rf` entry of a read whose value is the key's initial value.
pub(crate) const RF_INIT: u32 = u32::MAX - 1;
/// `rf` entry of a read whose value nobody wrote (ThinAirRead), and of every write.
pub(crate) const RF_NONE: u32 = u32::MAX;
/// No node / no index.
pub(crate) const NONE: u32 = u32::MAX;
/// `rf_txn` flag: the writer transaction aborted.
pub(crate) const WRITER_ABORTED: u32 = 1 << 31;
/// `rf_txn` flag: the write read is overwritten later in its transaction.
pub(crate) const WRITER_OVERWRITTEN: u32 = 1 << 30;
/// `rf_txn` mask of the transaction index (and the bound on transaction count).
pub(crate) const WRITER_TXN: u32 = (1 << 30) - 1;
/// Integer keys in `0..SMALL_KEYS_MAX` are interned through a direct table.
const SMALL_KEYS_MAX: i64 = 1 << 24;
/// Operations are indexed by `u32`; the two top values are reserved.
const OPS_MAX: usize = (u32::MAX - 2) as usize;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Txn {
    pub id: u64,
    pub session: u32,
    pub ops_start: u32,
    pub ops_len: u32,
    pub after_start: u32,
    pub after_len: u32,
    pub line: u32,
    pub node: u32,
    pub outcome: Outcome,
}

impl Txn {
    #[inline]
    pub fn ops(&self) -> std::ops::Range<usize> {
        self.ops_start as usize..(self.ops_start + self.ops_len) as usize
    }
}

/// A history, ready to check. Build one with [`HistoryBuilder`] or [`crate::read_history`].
#[derive(Clone, Debug)]
pub struct History {
    pub(crate) txns: Vec<Txn>,
    pub(crate) ops: Vec<Op>,
    /// Reads-from: for a read, the index of the write op it read, or `RF_INIT`/`RF_NONE`.
    pub(crate) rf: Vec<u32>,
    /// For a read of a write: the writer transaction's index, with `WRITER_ABORTED` and
    /// `WRITER_OVERWRITTEN` flags (kept here so that the checks need not chase `rf`).
    pub(crate) rf_txn: Vec<u32>,
    /// Program-order predecessors from `after`, as transaction indices.
    pub(crate) after: Vec<u32>,
    /// Owning transaction of each op.
    pub(crate) op_txn: Vec<u32>,
    pub(crate) keys: Vec<Key>,
    pub(crate) strings: Vec<Box<str>>,
    pub(crate) sessions: Vec<Box<str>>,
    pub(crate) nodes: Vec<Box<str>>,
    /// Declared initial values by key index.
    pub(crate) initial: BTreeMap<u32, Val>,
    /// The initial value of keys without a declaration (`Null`, or 0 for Plume's format).
    pub(crate) default_initial: Val,
    /// Real-time intervals by transaction index (only for transactions that have one).
    pub(crate) times: BTreeMap<u32, (u64, u64)>,
    /// Per-operation node (only for operations that name one).
    pub(crate) op_nodes: BTreeMap<u32, u32>,
    pub(crate) format: InputFormat,
    pub(crate) header_info: BTreeMap<String, String>,
    /// List-append histories: every element of each read's list (`None` for registers).
    pub(crate) lists: Option<Box<crate::lists::ListReads>>,
    /// Call trees (`call` fields), by transaction index, in line order.
    pub(crate) calls: Vec<(u32, crate::cache_free::CallNode)>,
    /// Shared-log calls (`append`, `read_next`, …), for the `shared-log` level; empty for
    /// key-value histories.
    pub(crate) log: Vec<crate::shared_log::LogCall>,
    /// The partial orders of multi-function transactions (`fn`, `fn_after`), by transaction
    /// index; the operations of every other transaction are totally ordered as listed.
    pub(crate) orders: BTreeMap<u32, FnOrder>,
}

impl History {
    pub fn txn_count(&self) -> usize {
        self.txns.len()
    }
    pub fn op_count(&self) -> usize {
        self.ops.len()
    }
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }
    pub fn key_count(&self) -> usize {
        self.keys.len()
    }
    /// The format the history was read from (`Causim` for built histories).
    pub fn format(&self) -> InputFormat {
        self.format
    }
    /// Informative header fields (as JSON text).
    pub fn header_info(&self) -> &BTreeMap<String, String> {
        &self.header_info
    }
    /// Declared initial values (with a format-wide default such as Plume's 0, every key read
    /// at its initial value is listed).
    pub fn initial_values(&self) -> Vec<(Key, Value)> {
        if self.default_initial != Val::Null {
            let mut keys: Vec<u32> = (0..self.ops.len())
                .filter(|o| self.ops[*o].is_read() && self.rf[*o] == RF_INIT)
                .map(|o| self.ops[o].key)
                .chain(self.initial.keys().copied())
                .collect();
            keys.sort_unstable();
            keys.dedup();
            return keys.into_iter().map(|k| (self.keys[k as usize].clone(), self.value(self.initial_of(k)))).collect();
        }
        self.initial.iter().map(|(k, v)| (self.keys[*k as usize].clone(), self.value(*v))).collect()
    }

    /// The transactions as records, in history order (for export or inspection).
    pub fn records(&self) -> impl Iterator<Item = TxnRecord> + '_ {
        (0..self.txns.len()).map(move |t| self.record(t))
    }

    /// One transaction as a record.
    pub fn record(&self, t: usize) -> TxnRecord {
        let txn = &self.txns[t];
        let order = self.orders.get(&(t as u32));
        let ops = txn
            .ops()
            .map(|o| {
                let op = &self.ops[o];
                OpRecord {
                    f: if op.is_read() { OpKind::Read } else { OpKind::Write },
                    key: self.keys[op.key as usize].clone(),
                    value: self.op_value(o),
                    version: None,
                    node: self.op_nodes.get(&(o as u32)).map(|n| self.nodes[*n as usize].to_string()),
                    at_ns: None,
                    function: order.map(|ord| ord.function(o - txn.ops_start as usize)),
                }
            })
            .collect();
        let times = self.times.get(&(t as u32));
        TxnRecord {
            id: Some(txn.id),
            session: self.sessions[txn.session as usize].to_string(),
            after: self.after_of(t).map(|a| self.txns[a].id).collect(),
            function: None,
            kind: None,
            node: (txn.node != NONE).then(|| self.nodes[txn.node as usize].to_string()),
            invoke_ns: times.map(|t| t.0),
            complete_ns: times.map(|t| t.1),
            outcome: txn.outcome,
            ops,
            fn_after: order.map(|ord| ord.edges().to_vec()).unwrap_or_default(),
            note: None,
        }
    }

    /// Whether some transaction's operations are partially ordered (`causim-history/2`).
    pub fn has_partial_orders(&self) -> bool {
        !self.orders.is_empty()
    }

    /// Whether op `p` precedes op `q` of the same transaction `t`: in list order, or along the
    /// transaction's function order when it has one.
    #[inline]
    pub(crate) fn op_precedes(&self, t: usize, p: usize, q: usize) -> bool {
        match self.orders.get(&(t as u32)) {
            Some(order) => {
                let start = self.txns[t].ops_start as usize;
                order.precedes(p - start, q - start)
            }
            None => p < q,
        }
    }

    /// The function (`fn`) of op `o`, in a transaction with a function order.
    pub(crate) fn op_function(&self, o: usize) -> Option<i64> {
        let t = self.op_txn[o] as usize;
        self.orders.get(&(t as u32)).map(|ord| ord.function(o - self.txns[t].ops_start as usize))
    }

    /// The write of `r`'s key that `r` should read from its own transaction: the last listed
    /// one among the operations that precede `r`.
    pub(crate) fn own_write_before(&self, r: usize) -> Option<usize> {
        let t = self.op_txn[r] as usize;
        let key = self.ops[r].key;
        self.txns[t].ops().rev().find(|&o| o != r && self.ops[o].is_write() && self.ops[o].key == key && self.op_precedes(t, o, r))
    }

    /// Why the list order of some transaction is not a faithful total order of its
    /// operations, if it is not: a read that (in list order) follows a write of its key that
    /// does not precede it, or that reads its own transaction's write that does not precede
    /// it. A format without partial orders can hold such a history only by changing what it
    /// means. Names the transaction's line.
    pub fn unfaithful_linearisation(&self) -> Option<String> {
        for (&t, order) in &self.orders {
            let txn = &self.txns[t as usize];
            let start = txn.ops_start as usize;
            for r in txn.ops().filter(|&o| self.ops[o].is_read()) {
                let key = self.ops[r].key;
                let before =
                    (start..r).find(|&w| self.ops[w].is_write() && self.ops[w].key == key && !order.precedes(w - start, r - start));
                let w = self.rf[r] as usize;
                let reads_own = self.rf[r] < RF_INIT && self.op_txn[w] == t && !order.precedes(w - start, r - start);
                if let Some(w) = before.or(reads_own.then_some(w)) {
                    return Some(format!(
                        "line {}: ops[{}] (function {}) and ops[{}] (function {}) of key {} are concurrent in the transaction's \
                         function order, which a total order of its operations cannot say",
                        txn.line,
                        w - start,
                        order.function(w - start),
                        r - start,
                        order.function(r - start),
                        self.keys[key as usize]
                    ));
                }
            }
        }
        None
    }

    pub(crate) fn after_of(&self, t: usize) -> impl Iterator<Item = usize> + '_ {
        let txn = &self.txns[t];
        self.after[txn.after_start as usize..(txn.after_start + txn.after_len) as usize].iter().map(|a| *a as usize)
    }

    pub(crate) fn value(&self, v: Val) -> Value {
        match v {
            Val::Null => Value::Null,
            Val::Int(i) => Value::Int(i),
            Val::Str(s) => Value::Str(self.strings[s as usize].clone()),
        }
    }

    /// The value an op wrote or read (as recorded).
    pub(crate) fn op_value(&self, o: usize) -> Value {
        self.value(self.ops[o].val())
    }

    /// The initial value of key `k` (declared, or absent).
    pub(crate) fn initial_of(&self, k: u32) -> Val {
        self.initial.get(&k).copied().unwrap_or(self.default_initial)
    }

    pub(crate) fn key(&self, k: u32) -> &Key {
        &self.keys[k as usize]
    }

    pub(crate) fn session_name(&self, s: u32) -> &str {
        &self.sessions[s as usize]
    }

    pub(crate) fn node_name(&self, n: u32) -> Option<&str> {
        (n != NONE).then(|| &*self.nodes[n as usize])
    }
}

// ---------------------------------------------------------------------------------------------
// Builder

/// Metadata of one transaction, given to [`HistoryBuilder`] after its operations.
pub(crate) struct TxnMeta<'a> {
    pub id: Option<u64>,
    /// Session index from [`HistoryBuilder::session_index`].
    pub session: u32,
    pub after: &'a [u64],
    /// Node index from [`HistoryBuilder::node_index`], or `NONE`.
    pub node: u32,
    pub times: Option<(u64, u64)>,
    pub outcome: Outcome,
    pub line: u64,
}

/// Builds a [`History`] transaction by transaction, enforcing the input rules of
/// `docs/history-format.md`: unique ids, unique written values per key, no written `null`,
/// `after` ids referring to earlier transactions.
pub struct HistoryBuilder {
    txns: Vec<Txn>,
    ops: Vec<Op>,
    op_txn: Vec<u32>,
    after: Vec<u32>,
    int_keys: FxHashMap<i64, u32>,
    /// Small non-negative integer keys, indexed directly (NONE = not seen): most generated
    /// and exported histories use them, and a direct table beats hashing by far.
    small_keys: Vec<u32>,
    str_keys: FxHashMap<Box<str>, u32>,
    key_count: u32,
    str_vals: FxHashMap<Box<str>, u32>,
    sessions: FxHashMap<Box<str>, u32>,
    nodes: FxHashMap<Box<str>, u32>,
    /// The write op of each (key, value), for the writes of `ops[..indexed]`.
    writes: Written,
    indexed: usize,
    /// Whether writes are indexed only when the history is finished (or an error needs it),
    /// rather than as each transaction ends; see [`HistoryBuilder::defer_write_index`].
    defer_index: bool,
    /// Transaction id → index, for ids that are not their own index (most files number
    /// transactions 0, 1, 2, … in order, and then nothing needs storing).
    ids: FxHashMap<u64, u32>,
    /// Whether every transaction so far had its index as id.
    ids_dense: bool,
    initial: BTreeMap<u32, Val>,
    /// Line where each initial value was declared (for duplicate messages).
    initial_line: BTreeMap<u32, u64>,
    default_initial: Val,
    times: BTreeMap<u32, (u64, u64)>,
    op_nodes: BTreeMap<u32, u32>,
    ops_start: usize,
    /// The current transaction's operations' functions (`fn`), when some operation names one.
    cur_fns: Vec<Option<i64>>,
    /// The current transaction's `fn_after`.
    cur_fn_after: Vec<(i64, i64)>,
    orders: BTreeMap<u32, FnOrder>,
    format: InputFormat,
    header_info: BTreeMap<String, String>,
    /// (key, op) of one transaction's writes, reused.
    scratch: Vec<u64>,
    next_line: u64,
    lists: Option<Box<crate::lists::ListReads>>,
    calls: Vec<(u32, crate::cache_free::CallNode)>,
    /// The call tree of the transaction being read, attached when it ends.
    pending_call: Option<crate::cache_free::CallNode>,
    log: Vec<crate::shared_log::LogCall>,
}

impl Default for HistoryBuilder {
    fn default() -> Self {
        HistoryBuilder::new()
    }
}

impl HistoryBuilder {
    pub fn new() -> HistoryBuilder {
        HistoryBuilder {
            txns: Vec::new(),
            ops: Vec::new(),
            op_txn: Vec::new(),
            after: Vec::new(),
            int_keys: map_with_capacity(0),
            small_keys: Vec::new(),
            str_keys: map_with_capacity(0),
            key_count: 0,
            str_vals: map_with_capacity(0),
            sessions: map_with_capacity(0),
            nodes: map_with_capacity(0),
            writes: Written::new(),
            indexed: 0,
            defer_index: false,
            ids: map_with_capacity(0),
            ids_dense: true,
            initial: BTreeMap::new(),
            initial_line: BTreeMap::new(),
            default_initial: Val::Null,
            times: BTreeMap::new(),
            op_nodes: BTreeMap::new(),
            ops_start: 0,
            cur_fns: Vec::new(),
            cur_fn_after: Vec::new(),
            orders: BTreeMap::new(),
            format: InputFormat::Causim,
            header_info: BTreeMap::new(),
            scratch: Vec::new(),
            next_line: 1,
            lists: None,
            calls: Vec::new(),
            pending_call: None,
            log: Vec::new(),
        }
    }

    /// The call tree of the transaction being read (its `call` field).
    pub(crate) fn set_call(&mut self, call: crate::cache_free::CallNode) {
        self.pending_call = Some(call);
    }

    pub(crate) fn set_format(&mut self, format: InputFormat) {
        self.format = format;
    }

    /// Index written values (and so find values written twice) when the history is finished,
    /// on two threads, instead of as each transaction ends. For readers whose errors name real
    /// lines and that end with [`HistoryBuilder::finish_reading`]: an error the reader meets is
    /// then reported only if no value was written twice before it, so the error reported is
    /// still the first in line order.
    pub(crate) fn defer_write_index(&mut self) {
        self.defer_index = true;
    }

    /// Reserve room for about `ops` operations (from the input's size), so that the big tables
    /// do not grow by doubling.
    pub(crate) fn expect_ops(&mut self, ops: usize) {
        let ops = ops.min(1 << 28);
        self.ops.reserve(ops);
        self.op_txn.reserve(ops);
        self.writes.reserve(&self.ops, ops / 2);
    }

    /// Apply a header: initial values and informative fields.
    pub fn header(&mut self, header: &Header) -> Result<(), ParseError> {
        self.header_info.extend(header.info.iter().map(|(k, v)| (k.clone(), v.clone())));
        for (k, v) in &header.initial {
            let key = self.key(k);
            let val = self.val(v);
            self.declare_initial(key, val, 1)?;
        }
        Ok(())
    }

    pub(crate) fn declare_initial(&mut self, key: u32, val: Val, line: u64) -> Result<(), ParseError> {
        self.index_writes(self.op_txn.len(), line)?;
        if let Some(w) = self.writes.get(&self.ops, key, val) {
            let other = self.txns[self.op_txn[w as usize] as usize].line;
            return Err(ParseError::at(line, format!("DuplicateWrite: the initial value of a key is also written at line {other}")));
        }
        if self.initial.insert(key, val).is_some() {
            return Err(ParseError::at(line, "a key's initial value is declared twice"));
        }
        self.initial_line.insert(key, line);
        Ok(())
    }

    /// Add one transaction; its line number is the count of records added so far (plus one for
    /// a header, if any was read from a file — file readers pass the real line instead).
    pub fn push(&mut self, rec: &TxnRecord) -> Result<(), ParseError> {
        let line = self.next_line;
        self.push_at_line(rec, line)
    }

    /// Add one transaction read from line `line`.
    pub fn push_at_line(&mut self, rec: &TxnRecord, line: u64) -> Result<(), ParseError> {
        self.begin_txn();
        for (i, op) in rec.ops.iter().enumerate() {
            let key = self.key(&op.key);
            let val = self.val(&op.value);
            let node = op.node.as_deref();
            let kind = if op.f == OpKind::Read { KIND_READ } else { KIND_WRITE_FINAL };
            self.push_op(kind, key, val, node).map_err(|p| ParseError::at(line, format!("ops[{i}]: {p}")))?;
            if let Some(f) = op.function {
                self.set_op_function(f);
            }
        }
        self.set_fn_after(&rec.fn_after);
        let times = match (rec.invoke_ns, rec.complete_ns) {
            (Some(a), Some(b)) => Some((a, b)),
            (None, None) => None,
            _ => {
                return Err(ParseError::at(line, "invoke_ns and complete_ns must be given together"));
            }
        };
        let session = self.session_index(&rec.session);
        let node = rec.node.as_deref().map_or(NONE, |n| self.node_index(n));
        self.end_txn(TxnMeta { id: rec.id, session, after: &rec.after, node, times, outcome: rec.outcome, line })
    }

    pub(crate) fn key(&mut self, k: &Key) -> u32 {
        match k {
            Key::Int(i) => self.key_int(*i),
            Key::Str(s) => self.key_str(s),
        }
    }

    pub(crate) fn val(&mut self, v: &Value) -> Val {
        match v {
            Value::Null => Val::Null,
            Value::Int(i) => Val::Int(*i),
            Value::Str(s) => self.val_str(s),
        }
    }

    #[inline]
    pub(crate) fn key_int(&mut self, i: i64) -> u32 {
        if (0..SMALL_KEYS_MAX).contains(&i) {
            let i = i as usize;
            if i >= self.small_keys.len() {
                self.small_keys.resize((i + 1).next_power_of_two().max(1024).min(SMALL_KEYS_MAX as usize), NONE);
            }
            if self.small_keys[i] == NONE {
                self.small_keys[i] = self.key_count;
                self.key_count += 1;
            }
            return self.small_keys[i];
        }
        if let Some(k) = self.int_keys.get(&i) {
            return *k;
        }
        let k = self.key_count;
        self.key_count += 1;
        self.int_keys.insert(i, k);
        k
    }

    #[inline]
    pub(crate) fn key_str(&mut self, s: &str) -> u32 {
        if let Some(k) = self.str_keys.get(s) {
            return *k;
        }
        let k = self.key_count;
        self.key_count += 1;
        self.str_keys.insert(s.into(), k);
        k
    }

    #[inline]
    pub(crate) fn val_str(&mut self, s: &str) -> Val {
        if let Some(v) = self.str_vals.get(s) {
            return Val::Str(*v);
        }
        let v = self.str_vals.len() as u32;
        self.str_vals.insert(s.into(), v);
        Val::Str(v)
    }

    fn intern_name(map: &mut FxHashMap<Box<str>, u32>, s: &str) -> u32 {
        if let Some(v) = map.get(s) {
            return *v;
        }
        let v = map.len() as u32;
        map.insert(s.into(), v);
        v
    }

    pub(crate) fn session_index(&mut self, s: &str) -> u32 {
        Self::intern_name(&mut self.sessions, s)
    }

    pub(crate) fn node_index(&mut self, s: &str) -> u32 {
        Self::intern_name(&mut self.nodes, s)
    }

    pub(crate) fn begin_txn(&mut self) {
        self.ops_start = self.ops.len();
        self.cur_fns.clear();
        self.cur_fn_after.clear();
    }

    /// The function (`fn`) of the operation just pushed.
    pub(crate) fn set_op_function(&mut self, f: i64) {
        let i = self.ops.len() - 1 - self.ops_start;
        self.cur_fns.resize(i + 1, None);
        self.cur_fns[i] = Some(f);
    }

    /// The current transaction's `fn_after` pairs.
    pub(crate) fn set_fn_after(&mut self, edges: &[(i64, i64)]) {
        self.cur_fn_after.extend_from_slice(edges);
    }

    /// Drop the operations pushed since [`HistoryBuilder::begin_txn`] (to read the line again).
    pub(crate) fn abandon_txn(&mut self) {
        self.pending_call = None;
        self.cur_fns.clear();
        self.cur_fn_after.clear();
        let t = self.txns.len() as u32;
        while self.log.last().is_some_and(|c| c.txn == t) {
            self.log.pop();
        }
        let start = self.ops_start as u32;
        self.ops.truncate(self.ops_start);
        if self.op_nodes.last_key_value().is_some_and(|(o, _)| *o >= start) {
            self.op_nodes.retain(|o, _| *o < start);
        }
    }

    /// Append an operation to the current transaction. `kind` is `KIND_READ` or
    /// `KIND_WRITE_FINAL` (the builder works out overwritten writes itself).
    pub(crate) fn push_op(&mut self, kind: u8, key: u32, val: Val, node: Option<&str>) -> Result<(), String> {
        let node = node.map(|n| Self::intern_name(&mut self.nodes, n));
        self.push_op_node_index(kind, key, val, node)
    }

    #[inline]
    pub(crate) fn push_op_node_index(&mut self, kind: u8, key: u32, val: Val, node: Option<u32>) -> Result<(), String> {
        if kind != KIND_READ && val == Val::Null {
            return Err("a write's value must not be null (null is the initial, absent state)".into());
        }
        if self.ops.len() >= OPS_MAX {
            return Err(format!("too many operations (at most {OPS_MAX})"));
        }
        if let Some(n) = node {
            self.op_nodes.insert(self.ops.len() as u32, n);
        }
        self.ops.push(Op::new(kind, key, val));
        Ok(())
    }

    /// Add a shared-log call to the current transaction.
    pub(crate) fn push_log(&mut self, mut call: crate::shared_log::LogCall) {
        call.txn = self.txns.len() as u32;
        self.log.push(call);
    }

    /// The function index (`fn`) of the current transaction, for its log calls.
    pub(crate) fn set_log_function(&mut self, function: Option<i64>) {
        let t = self.txns.len() as u32;
        for c in self.log.iter_mut().rev().take_while(|c| c.txn == t) {
            c.function = function;
        }
    }

    /// Close the current transaction.
    pub(crate) fn end_txn(&mut self, meta: TxnMeta<'_>) -> Result<(), ParseError> {
        let line = meta.line;
        self.end_txn_checked(meta).map_err(|e| {
            // A value written twice in an earlier transaction comes first.
            let closed = self.op_txn.len();
            self.index_writes(closed, line).err().unwrap_or(e)
        })
    }

    fn end_txn_checked(&mut self, meta: TxnMeta<'_>) -> Result<(), ParseError> {
        let line = meta.line;
        let t = self.txns.len() as u32;
        if t >= WRITER_TXN {
            return Err(ParseError::at(line, format!("too many transactions (at most {WRITER_TXN})")));
        }
        let id = meta.id.unwrap_or(u64::from(t));
        if let Some(other) = self.txn_of_id(id) {
            let other_line = self.txns[other as usize].line;
            return Err(ParseError::at(line, format!("transaction id {id} is also used at line {other_line}")));
        }
        if self.ids_dense && id != u64::from(t) {
            // From now on, ids are looked up in the map.
            self.ids_dense = false;
            self.ids.extend((0..t).map(|i| (u64::from(i), i)));
        }
        if !self.ids_dense {
            self.ids.insert(id, t);
        }
        let after_start = self.after.len() as u32;
        for a in meta.after {
            match self.txn_of_id(*a) {
                Some(x) if x != t => self.after.push(x),
                _ => {
                    return Err(ParseError::at(line, format!("after: id {a} does not refer to an earlier transaction line")));
                }
            }
        }
        let after_len = self.after.len() as u32 - after_start;
        if let Some((a, b)) = meta.times {
            if a > b {
                return Err(ParseError::at(line, format!("invoke_ns {a} is later than complete_ns {b}")));
            }
            self.times.insert(t, (a, b));
        }
        let session = meta.session;
        let node = meta.node;
        let start = self.ops_start;
        let end = self.ops.len();
        if !self.cur_fns.is_empty() || !self.cur_fn_after.is_empty() {
            self.cur_fns.resize(end - start, None);
            let order = FnOrder::new(&self.cur_fns, &self.cur_fn_after).map_err(|p| ParseError::at(line, p))?;
            self.orders.insert(t, order);
        }
        // Mark writes the transaction overwrites itself.
        self.mark_overwritten(start, end);
        // Writes of a declared initial value are errors (most histories declare none: then
        // there is nothing to compare).
        let compared = if self.initial.is_empty() { start } else { end };
        for o in start..compared {
            let op = self.ops[o];
            if op.is_write() && self.initial.get(&op.key) == Some(&op.val()) {
                // A value written twice up to here comes first.
                self.index_writes(o + 1, line)?;
                let key = self.key_name(op.key);
                let v = self.val_name(op.val());
                let l = self.initial_line[&op.key];
                return Err(ParseError::at(
                    line,
                    format!("DuplicateWrite: {key}={v} is written, but it is also the initial value declared at line {l}"),
                ));
            }
        }
        if !self.defer_index {
            self.index_writes(end, line)?;
        }
        self.op_txn.resize(end, t);
        if let Some(call) = self.pending_call.take() {
            self.calls.push((t, call));
        }
        self.txns.push(Txn {
            id,
            session,
            ops_start: start as u32,
            ops_len: (end - start) as u32,
            after_start,
            after_len,
            line: u32::try_from(line).unwrap_or(u32::MAX),
            node,
            outcome: meta.outcome,
        });
        self.next_line = line + 1;
        Ok(())
    }

    /// Index the writes of `ops[self.indexed..upto]`: the first value written a second time
    /// there is an error (`open_line` is the line of the transaction not yet closed, if the
    /// range reaches into it).
    fn index_writes(&mut self, upto: usize, open_line: u64) -> Result<(), ParseError> {
        if upto <= self.indexed {
            return Ok(());
        }
        let range = self.indexed..upto;
        self.indexed = upto;
        let Err((w, prev)) = self.writes.insert_all(&self.ops, range) else {
            return Ok(());
        };
        let line_of = |o: u32| match self.op_txn.get(o as usize) {
            Some(t) => u64::from(self.txns[*t as usize].line),
            None => open_line,
        };
        let op = self.ops[w as usize];
        let (key, v) = (self.key_name(op.key), self.val_name(op.val()));
        // Formats without lines (dbcop's JSON, binary ones) record line 0: name the transaction.
        let other = match (line_of(prev), self.op_txn.get(prev as usize)) {
            (0, Some(t)) => format!("also by transaction {} in file order", t + 1),
            (line, _) => format!("also at line {line}"),
        };
        Err(ParseError::at(
            line_of(w),
            format!("DuplicateWrite: {key}={v} is written twice ({other}); written values must be unique per key"),
        ))
    }

    /// Finish after a reader has run: if it met an error, that error, unless a value was
    /// written twice before it (see [`HistoryBuilder::defer_write_index`]).
    pub(crate) fn finish_reading(mut self, read: Result<(), ParseError>) -> Result<History, ParseError> {
        match read {
            Ok(()) => self.finish(),
            Err(e) => {
                let closed = self.op_txn.len();
                Err(self.index_writes(closed, 0).err().unwrap_or(e))
            }
        }
    }

    /// The index of the transaction with this id, if one was added.
    fn txn_of_id(&self, id: u64) -> Option<u32> {
        if self.ids_dense { (id < self.txns.len() as u64).then_some(id as u32) } else { self.ids.get(&id).copied() }
    }

    /// Mark the writes of ops `start..end` (one transaction) that a later write of the same key
    /// in it overwrites: sort its writes by key, then each but the last of a key is overwritten.
    fn mark_overwritten(&mut self, start: usize, end: usize) {
        if end - start <= 1 {
            return;
        }
        let mut writes = std::mem::take(&mut self.scratch);
        writes.clear();
        writes.extend((start..end).filter(|o| self.ops[*o].is_write()).map(|o| u64::from(self.ops[o].key) << 32 | o as u64));
        writes.sort_unstable();
        for pair in writes.windows(2) {
            if pair[0] >> 32 == pair[1] >> 32 {
                self.ops[pair[0] as u32 as usize].kind = KIND_WRITE_OVERWRITTEN;
            }
        }
        self.scratch = writes;
    }

    fn key_name(&self, k: u32) -> String {
        if let Some(i) = self.small_keys.iter().position(|v| *v == k) {
            return Key::Int(i as i64).to_string();
        }
        if let Some((i, _)) = self.int_keys.iter().find(|(_, v)| **v == k) {
            return Key::Int(*i).to_string();
        }
        if let Some((s, _)) = self.str_keys.iter().find(|(_, v)| **v == k) {
            return Key::Str(s.clone()).to_string();
        }
        format!("key#{k}")
    }

    fn val_name(&self, v: Val) -> String {
        match v {
            Val::Null => "null".into(),
            Val::Int(i) => i.to_string(),
            Val::Str(s) => match self.str_vals.iter().find(|(_, x)| **x == s) {
                Some((text, _)) => json_quote(text),
                None => format!("string#{s}"),
            },
        }
    }

    /// Number of transactions added so far.
    pub fn txn_count(&self) -> usize {
        self.txns.len()
    }

    /// Number of operations added so far (the index the next one gets).
    pub(crate) fn op_count(&self) -> usize {
        self.ops.len()
    }

    /// Mark the history as list-append, with every element of each read's list.
    pub(crate) fn set_lists(&mut self, lists: crate::lists::ListReads) {
        self.lists = Some(Box::new(lists));
    }

    /// The initial value of every key without a declaration (Plume's format: 0). A read of it
    /// reads the initial state unless some operation wrote that value to the key.
    pub(crate) fn set_default_initial(&mut self, v: Val) {
        self.default_initial = v;
    }

    /// Whether some write wrote `value` to `key` (used by importers that infer initial values).
    pub(crate) fn is_written(&mut self, key: u32, val: Val) -> Result<bool, ParseError> {
        self.index_writes(self.op_txn.len(), 0)?;
        Ok(self.writes.get(&self.ops, key, val).is_some())
    }

    pub(crate) fn has_initial(&self, key: u32) -> bool {
        self.initial.contains_key(&key)
    }

    /// Finish: resolve reads-from and freeze.
    pub fn finish(mut self) -> Result<History, ParseError> {
        self.index_writes(self.op_txn.len(), 0)?;
        let HistoryBuilder {
            txns,
            ops,
            op_txn,
            after,
            int_keys,
            small_keys,
            str_keys,
            key_count,
            str_vals,
            sessions,
            nodes,
            writes,
            initial,
            default_initial,
            times,
            op_nodes,
            format,
            header_info,
            lists,
            calls,
            log,
            orders,
            ..
        } = self;
        let mut rf = vec![RF_NONE; ops.len()];
        let mut rf_txn = vec![NONE; ops.len()];
        // Each read looks its value up among the writes: independent lookups, so large
        // histories split them between two threads (the result is the same either way).
        let aborted: Vec<bool> = txns.iter().map(|t| t.outcome == Outcome::Aborted).collect();
        // Reads are resolved a block at a time, in three passes, so that the cache misses of a
        // block (its slots, then its writes) overlap instead of queueing.
        let resolve = |first: usize, rf: &mut [u32], rf_txn: &mut [u32]| {
            const BLOCK: usize = 32;
            let mut hashes = [0u64; BLOCK];
            let mut start = 0;
            while start < rf.len() {
                let end = (start + BLOCK).min(rf.len());
                let block = &ops[first + start..first + end];
                for (i, op) in block.iter().enumerate() {
                    if op.is_read() {
                        hashes[i] = writes.hint(op.key, op.val());
                    }
                }
                for (i, op) in block.iter().enumerate() {
                    if op.is_read()
                        && let Some(w) = writes.likely(hashes[i])
                    {
                        prefetch(&ops[w as usize]);
                        prefetch(&op_txn[w as usize]);
                    }
                }
                for (i, op) in block.iter().enumerate() {
                    if !op.is_read() {
                        continue;
                    }
                    let val = op.val();
                    let j = start + i;
                    rf[j] = match writes.get_hashed(&ops, hashes[i], op.key, val) {
                        Some(w) => {
                            let t = op_txn[w as usize];
                            let aborted = if aborted[t as usize] { WRITER_ABORTED } else { 0 };
                            let overwritten = if ops[w as usize].kind == KIND_WRITE_OVERWRITTEN { WRITER_OVERWRITTEN } else { 0 };
                            rf_txn[j] = t | aborted | overwritten;
                            w
                        }
                        None if initial.get(&op.key).copied().unwrap_or(default_initial) == val => RF_INIT,
                        None => RF_NONE,
                    };
                }
                start = end;
            }
        };
        if ops.len() < 1 << 20 {
            resolve(0, &mut rf, &mut rf_txn);
        } else {
            let half = ops.len() / 2;
            let (rf_a, rf_b) = rf.split_at_mut(half);
            let (rt_a, rt_b) = rf_txn.split_at_mut(half);
            std::thread::scope(|scope| {
                let resolve = &resolve;
                scope.spawn(move || resolve(half, rf_b, rt_b));
                resolve(0, rf_a, rt_a);
            });
        }
        drop(writes);
        let mut keys: Vec<Option<Key>> = vec![None; key_count as usize];
        for (i, k) in small_keys.iter().enumerate() {
            if *k != NONE {
                keys[*k as usize] = Some(Key::Int(i as i64));
            }
        }
        drop(small_keys);
        for (i, k) in int_keys {
            keys[k as usize] = Some(Key::Int(i));
        }
        for (s, k) in str_keys {
            keys[k as usize] = Some(Key::Str(s));
        }
        let keys = keys.into_iter().map(|k| k.expect("every key index is assigned once")).collect();
        Ok(History {
            txns,
            ops,
            rf,
            rf_txn,
            after,
            op_txn,
            keys,
            strings: drain_names(str_vals),
            sessions: drain_names(sessions),
            nodes: drain_names(nodes),
            initial,
            default_initial,
            times,
            op_nodes,
            format,
            header_info,
            lists,
            calls,
            log,
            orders,
        })
    }
}

fn drain_names(map: FxHashMap<Box<str>, u32>) -> Vec<Box<str>> {
    let mut out: Vec<Option<Box<str>>> = vec![None; map.len()];
    for (s, i) in map {
        out[i as usize] = Some(s);
    }
    out.into_iter().map(|s| s.expect("names are numbered densely")).collect()
}

impl History {
    /// Build a history from records (and an optional header).
    pub fn from_records(header: Option<&Header>, records: &[TxnRecord]) -> Result<History, ParseError> {
        let mut b = HistoryBuilder::new();
        if let Some(h) = header {
            b.header(h)?;
        }
        for r in records {
            b.push(r)?;
        }
        b.finish()
    }
}
