//! Histories: what clients observed, one transaction per JSON line (`causim-history/2`).
//!
//! The format is specified in `docs/history-format.md`; the checker reads it without depending
//! on this crate. Nodes produce [`TxnRecord`]s; the engine adds the session, the transaction id
//! and program-order links, and streams the line to disk through a hashing writer so a run can
//! compare its history with another run's without keeping it in memory.

use crate::node::NodeId;
use crate::time::Time;
use crate::workflow::Dag;
use std::io::{self, Write};

/// A key. Scenario scripts name keys; generated workloads number them.
pub type Key = u64;
/// A value written to a key. Values are unique per key across a run (the engine allocates
/// them), so a read identifies the write it read from.
pub type Value = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpKind {
    Read,
    Write,
}

/// An operation's protocol metadata. Most protocols report one or two numbers, kept inline so
/// that recording an operation does not allocate.
pub type OpVersion = smallvec::SmallVec<[u64; 2]>;

/// A transaction's operations. Most transactions are one operation, kept inline.
pub type Ops = smallvec::SmallVec<[OpRecord; 1]>;

/// One read or write inside a transaction record.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpRecord {
    pub kind: OpKind,
    pub key: Key,
    /// For a write, the value written. For a read, the value returned; `None` is the key's
    /// initial (absent) state.
    pub value: Option<Value>,
    /// Protocol metadata: a vector clock, a timestamp. Empty when the protocol has none.
    pub version: OpVersion,
    /// Where and when this operation ran, for transactions that span functions.
    pub node: Option<NodeId>,
    pub at_ns: Option<Time>,
    /// A shared-log call (`key` is its book, `value` the record's data); `None` for reads and
    /// writes of keys.
    pub log: Option<Box<LogRecord>>,
    /// The workflow function that ran it, in a transaction that spans functions (a workflow
    /// transaction): with the workflow's DAG it places the operation in the transaction's
    /// partial order (`fn` and `fn_after` in `docs/history-format.md`).
    pub function: Option<u32>,
}

/// Which LogBook call a log operation record stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LogCall {
    Append,
    ReadNext,
    /// `logReadPrev`; with `bound == u64::MAX` it is `logCheckTail` (and written so).
    ReadPrev,
    /// `logTrim(bound)`: written with its trim point as `seqnum`.
    Trim,
}

/// What a shared-log call returned, beyond its book and data (see `docs/history-format.md`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LogRecord {
    pub call: LogCall,
    /// An append's tags; for a read, the one tag it asked for (0: every record of the book).
    pub tags: Vec<u64>,
    /// A read's bound: `min` of `logReadNext`, `max` of `logReadPrev`. 0 for an append.
    pub bound: u64,
    /// An append's seqnum; the seqnum of the record a read found (`None`: EMPTY, or an append
    /// that never got one).
    pub seqnum: Option<u64>,
    /// The metalog position `(term, position)` the call was served at: for an append the
    /// position that ordered its record, for a read the version of the index that answered.
    pub pos: Option<(u64, u64)>,
}

impl OpRecord {
    pub fn read(key: Key, value: Option<Value>) -> OpRecord {
        OpRecord { kind: OpKind::Read, key, value, version: OpVersion::new(), node: None, at_ns: None, log: None, function: None }
    }

    pub fn write(key: Key, value: Value) -> OpRecord {
        OpRecord {
            kind: OpKind::Write,
            key,
            value: Some(value),
            version: OpVersion::new(),
            node: None,
            at_ns: None,
            log: None,
            function: None,
        }
    }

    /// A log call on `book`: an append (a write of `data`) or a read (of the record with
    /// `data`, `None` for EMPTY).
    pub fn log(book: Key, data: Option<Value>, log: LogRecord) -> OpRecord {
        let kind = if log.call == LogCall::Append { OpKind::Write } else { OpKind::Read };
        OpRecord {
            kind,
            key: book,
            value: data,
            version: OpVersion::new(),
            node: None,
            at_ns: None,
            log: Some(Box::new(log)),
            function: None,
        }
    }

    pub fn with_version(mut self, version: impl IntoIterator<Item = u64>) -> OpRecord {
        self.version = version.into_iter().collect();
        self
    }
}

/// The outcome of a transaction, as the client saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// Committed.
    Ok,
    /// Definitely not applied: its writes were never visible.
    Aborted,
    /// Unknown: the client got an error or a timeout.
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

/// What kind of client call a transaction record stands for (informative in the history).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TxnKind {
    Read,
    Write,
    ReadTxn,
    /// A whole workflow run as one transaction (CausalMesh-TCC, FaaSTCC, HydroCache).
    WorkflowTxn,
    /// A function's (or part of a function's) transaction of reads and writes (Concord, §2.11).
    Txn,
}

impl TxnKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TxnKind::Read => "read",
            TxnKind::Write => "write",
            TxnKind::ReadTxn => "read_txn",
            TxnKind::WorkflowTxn => "workflow_txn",
            TxnKind::Txn => "txn",
        }
    }
}

/// A completed transaction as a function instance reports it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TxnRecord {
    pub kind: TxnKind,
    /// The server that served it.
    pub node: Option<NodeId>,
    pub invoke_ns: Time,
    pub complete_ns: Time,
    pub outcome: Outcome,
    pub ops: Ops,
    pub note: Option<&'static str>,
    /// The request's call tree as JSON (MuCache; see "Call trees" in `docs/history-format.md`),
    /// written as the line's `call` field. `None` for every other protocol.
    pub call: Option<Box<str>>,
}

/// Who a record belongs to; filled in by the engine.
#[derive(Clone, Copy, Debug)]
pub struct SessionRef<'a> {
    /// The workflow's base name (`c1` from a script), or `None` for generated `w{id}`.
    pub workflow_name: Option<&'a str>,
    pub workflow_id: u64,
    pub attempt: u32,
    pub function: u32,
    /// True when each function of the workflow is its own session (non-chain workflows).
    pub per_function: bool,
}

/// Names for nodes and keys in histories and traces (stored JSON-escaped, with quotes).
#[derive(Clone, Debug, Default)]
pub struct Names {
    nodes: Vec<String>,
    keys: Vec<String>,
}

impl Names {
    pub fn new(node_names: &[String], key_names: &[String]) -> Names {
        Names { nodes: node_names.iter().map(|n| json_string(n)).collect(), keys: key_names.iter().map(|k| json_string(k)).collect() }
    }

    /// `"S0"`, with quotes.
    pub fn node_json(&self, id: NodeId) -> &str {
        &self.nodes[id.index()]
    }

    pub fn node(&self, id: NodeId) -> &str {
        let quoted = self.node_json(id);
        &quoted[1..quoted.len() - 1]
    }

    /// Writes a key as a JSON string: its script name, or `k<n>` for generated keys.
    pub fn push_key_json(&self, key: Key, buf: &mut Vec<u8>) {
        match self.keys.get(key as usize) {
            Some(name) => buf.extend_from_slice(name.as_bytes()),
            None => {
                buf.extend_from_slice(b"\"k");
                push_u64(buf, key);
                buf.push(b'"');
            }
        }
    }

    pub fn key(&self, key: Key) -> String {
        let mut buf = Vec::new();
        self.push_key_json(key, &mut buf);
        String::from_utf8(buf[1..buf.len() - 1].to_vec()).expect("names are UTF-8")
    }
}

/// A JSON string literal for `s`.
pub fn json_string(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// Appends `[a,b,...]`.
fn push_u64_array(buf: &mut Vec<u8>, items: &[u64]) {
    buf.push(b'[');
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        push_u64(buf, *v);
    }
    buf.push(b']');
}

/// Appends `v`, or `null`.
fn push_u64_or_null(buf: &mut Vec<u8>, v: Option<u64>) {
    match v {
        Some(v) => push_u64(buf, v),
        None => buf.extend_from_slice(b"null"),
    }
}

/// Appends the decimal digits of `v`, two per step (as itoa does). The digits are counted
/// first and written left-aligned into a fixed array that is appended whole and then cut to
/// length: a fixed-size copy compiles to two moves, where a variable one calls `memcpy`.
pub fn push_u64(buf: &mut Vec<u8>, mut v: u64) {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let len = v.checked_ilog10().unwrap_or(0) as usize + 1;
    let mut digits = [0u8; 20];
    let mut i = len;
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        digits[i] = PAIRS[pair];
        digits[i + 1] = PAIRS[pair + 1];
    }
    if v >= 10 {
        let pair = v as usize * 2;
        digits[0] = PAIRS[pair];
        digits[1] = PAIRS[pair + 1];
    } else {
        digits[0] = b'0' + v as u8;
    }
    let start = buf.len();
    buf.extend_from_slice(&digits);
    buf.truncate(start + len);
}

/// The hash of a run's output (its history or trace, the `history_hash` and `trace_hash` of the
/// summary): a fast 64-bit hash over everything written (FxHash's multiply-rotate over 8-byte
/// words, seeded with FNV's offset basis), so one run's output can be compared with another's
/// by one number. Not cryptographic; stable across machines and versions of Rust.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputHash(u64);

impl Default for OutputHash {
    fn default() -> Self {
        OutputHash(0xcbf2_9ce4_8422_2325)
    }
}

impl OutputHash {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    pub fn update(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let word = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            h = (h.rotate_left(5) ^ word).wrapping_mul(Self::K);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ b as u64).wrapping_mul(Self::K);
        }
        // Mix in the length so that chunking boundaries cannot alias.
        self.0 = (h.rotate_left(5) ^ bytes.len() as u64).wrapping_mul(Self::K);
    }

    /// Hashes whole words (as `update` would their little-endian bytes, without the bytes).
    pub fn update_words(&mut self, words: &[u64]) {
        let mut h = self.0;
        for &word in words {
            h = (h.rotate_left(5) ^ word).wrapping_mul(Self::K);
        }
        self.0 = (h.rotate_left(5) ^ (8 * words.len()) as u64).wrapping_mul(Self::K);
    }

    pub fn value(self) -> u64 {
        self.0
    }
}

/// The format tag of the first line of every history this crate writes.
pub const HISTORY_FORMAT: &str = "causim-history/2";

/// The first line of a history: its format and where it came from. Fields are declared in
/// alphabetical order, the order the header has always had on disk (its bytes are hashed).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HistoryHeader {
    pub format: &'static str,
    /// The protocol's catalogue name.
    pub protocol: String,
    /// The name of the scenario the run came from (its `name` field, not its file's path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// A producer other than the simulator (`stateright`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// `"values"` when each key's written values increase in commit order (a log-based store
    /// writing its commit records' seqnums), so `si` is decided in one pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_order: Option<&'static str>,
}

impl HistoryHeader {
    /// The header of a simulated run of `scenario` with `seed`.
    pub fn of_run(protocol: &str, scenario: &str, seed: u64) -> HistoryHeader {
        HistoryHeader {
            format: HISTORY_FORMAT,
            protocol: protocol.to_string(),
            scenario: Some(scenario.to_string()),
            seed: Some(seed),
            source: None,
            version_order: None,
        }
    }

    /// The header of a history a model checker built from one of its states (`source`:
    /// `"stateright"`).
    pub fn of_model_checker(protocol: &str) -> HistoryHeader {
        HistoryHeader {
            format: HISTORY_FORMAT,
            protocol: protocol.to_string(),
            scenario: None,
            seed: None,
            source: Some("stateright".to_string()),
            version_order: None,
        }
    }
}

/// Streams history lines to a writer (if any), hashing the history on the way.
///
/// The hash covers the header's JSON and each record's content (every field, in a fixed
/// binary layout), not the JSON text of the records: a JSON line is a function of the record
/// and the run's names, so both identify the same history, and a run that only hashes (a
/// sweep, a benchmark, a determinism check) skips rendering JSON, which costs about ten times
/// more than hashing. Runs with and without a file give the same hash.
pub struct HistoryWriter {
    out: Option<Box<dyn Write>>,
    line: Vec<u8>,
    words: Vec<u64>,
    hash: OutputHash,
    records: u64,
}

impl HistoryWriter {
    pub fn new(out: Box<dyn Write>) -> HistoryWriter {
        HistoryWriter { out: Some(out), ..HistoryWriter::hashing_only() }
    }

    /// A writer that only hashes (no output), for benchmarks and determinism checks.
    pub fn hashing_only() -> HistoryWriter {
        HistoryWriter { out: None, line: Vec::with_capacity(256), words: Vec::new(), hash: OutputHash::default(), records: 0 }
    }

    pub fn header(&mut self, header: &HistoryHeader) -> io::Result<()> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, header).map_err(io::Error::other)?;
        self.line.push(b'\n');
        self.hash.update(&self.line);
        self.write_line()
    }

    /// Writes one transaction with id `id`.
    pub fn write(&mut self, id: u64, session: SessionRef<'_>, after: &[u64], record: &TxnRecord, names: &Names) -> io::Result<()> {
        self.write_in_workflow(id, session, after, record, names, None)
    }

    /// Writes one transaction with id `id`, of a workflow shaped `dag`: a transaction whose
    /// operations name two or more functions is written with each operation's function and the
    /// DAG's edges as its function order (`fn`, `fn_after`), so that the checker orders its
    /// concurrent functions' operations partially. Every other record is written as by `write`.
    pub fn write_in_workflow(
        &mut self,
        id: u64,
        session: SessionRef<'_>,
        after: &[u64],
        record: &TxnRecord,
        names: &Names,
        dag: Option<&Dag>,
    ) -> io::Result<()> {
        let dag = dag.filter(|_| spans_functions(record));
        self.records += 1;
        self.hash_record(id, session, after, record, dag);
        if self.out.is_none() {
            return Ok(());
        }
        let buf = &mut self.line;
        buf.clear();
        buf.extend_from_slice(b"{\"id\":");
        push_u64(buf, id);
        buf.extend_from_slice(b",\"session\":");
        push_session(buf, session);
        if !after.is_empty() {
            buf.extend_from_slice(b",\"after\":");
            push_u64_array(buf, after);
        }
        buf.extend_from_slice(b",\"fn\":");
        push_u64(buf, session.function as u64);
        buf.extend_from_slice(b",\"kind\":\"");
        buf.extend_from_slice(record.kind.as_str().as_bytes());
        buf.push(b'"');
        if let Some(node) = record.node {
            buf.extend_from_slice(b",\"node\":");
            buf.extend_from_slice(names.node_json(node).as_bytes());
        }
        buf.extend_from_slice(b",\"invoke_ns\":");
        push_u64(buf, record.invoke_ns);
        buf.extend_from_slice(b",\"complete_ns\":");
        push_u64(buf, record.complete_ns);
        buf.extend_from_slice(b",\"outcome\":\"");
        buf.extend_from_slice(record.outcome.as_str().as_bytes());
        buf.extend_from_slice(b"\",\"ops\":[");
        for (i, op) in record.ops.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            push_op(buf, op, names, dag.is_some());
        }
        buf.push(b']');
        if let Some(dag) = dag {
            buf.extend_from_slice(b",\"fn_after\":[");
            for (i, (a, b)) in dag.edges().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                push_u64_array(buf, &[a as u64, b as u64]);
            }
            buf.push(b']');
        }
        if let Some(note) = record.note {
            buf.extend_from_slice(b",\"note\":");
            buf.extend_from_slice(json_string(note).as_bytes());
        }
        if let Some(call) = &record.call {
            buf.extend_from_slice(b",\"call\":");
            buf.extend_from_slice(call.as_bytes());
        }
        buf.extend_from_slice(b"}\n");
        self.write_line()
    }

    /// Hashes every field of a record: numbers as words, optional fields as a flag and a
    /// value, lists with their lengths first, so two different records never lay out alike.
    fn hash_record(&mut self, id: u64, session: SessionRef<'_>, after: &[u64], record: &TxnRecord, dag: Option<&Dag>) {
        let optional = |v: Option<u64>| [v.is_some() as u64, v.unwrap_or(0)];
        let w = &mut self.words;
        w.clear();
        w.extend([id, session.workflow_id, session.attempt as u64, session.function as u64]);
        w.extend([session.per_function as u64, session.workflow_name.is_some() as u64, after.len() as u64]);
        w.extend_from_slice(after);
        w.extend([record.kind as u64, record.invoke_ns, record.complete_ns, record.outcome as u64]);
        w.extend(optional(record.node.map(|n| n.0)));
        w.extend([record.note.is_some() as u64, record.ops.len() as u64]);
        for op in &record.ops {
            w.extend([op.kind as u64, op.key]);
            w.extend(optional(op.value));
            w.extend(optional(op.node.map(|n| n.0)));
            w.extend(optional(op.at_ns));
            w.push(op.version.len() as u64);
            w.extend_from_slice(&op.version);
            // Only log calls add words, so the hashes of key-value histories are unchanged.
            if let Some(log) = &op.log {
                w.extend([u64::MAX - 1, log.call as u64, log.bound, log.tags.len() as u64]);
                w.extend_from_slice(&log.tags);
                w.extend(optional(log.seqnum));
                w.extend(optional(log.pos.map(|p| p.0)));
                w.extend(optional(log.pos.map(|p| p.1)));
            }
            // Only operations written with their function add words (as log calls do).
            if dag.is_some() {
                w.extend([u64::MAX - 2, op.function.map_or(u64::MAX, u64::from)]);
            }
        }
        if let Some(dag) = dag {
            w.push(u64::MAX - 3);
            w.extend(dag.edges().flat_map(|(a, b)| [u64::from(a), u64::from(b)]));
        }
        self.hash.update_words(w);
        if let Some(name) = session.workflow_name {
            self.hash.update(name.as_bytes());
        }
        if let Some(note) = record.note {
            self.hash.update(note.as_bytes());
        }
        // Absent in every protocol but MuCache: their hashes are unchanged.
        if let Some(call) = &record.call {
            self.hash.update(call.as_bytes());
        }
    }

    fn write_line(&mut self) -> io::Result<()> {
        match &mut self.out {
            Some(out) => out.write_all(&self.line),
            None => Ok(()),
        }
    }

    pub fn finish(&mut self) -> io::Result<()> {
        match &mut self.out {
            Some(out) => out.flush(),
            None => Ok(()),
        }
    }

    pub fn hash(&self) -> u64 {
        self.hash.value()
    }

    pub fn records(&self) -> u64 {
        self.records
    }
}

fn push_session(buf: &mut Vec<u8>, s: SessionRef<'_>) {
    match s.workflow_name {
        Some(n) => {
            let quoted = json_string(n);
            buf.extend_from_slice(&quoted.as_bytes()[..quoted.len() - 1]);
        }
        None => {
            buf.extend_from_slice(b"\"w");
            push_u64(buf, s.workflow_id);
        }
    }
    if s.attempt > 1 {
        buf.push(b'#');
        push_u64(buf, s.attempt as u64);
    }
    if s.per_function {
        buf.extend_from_slice(b"/f");
        push_u64(buf, s.function as u64);
    }
    buf.push(b'"');
}

/// The session name a record of `s` carries, as plain text.
pub fn session_name(s: SessionRef<'_>) -> String {
    let mut buf = Vec::new();
    push_session(&mut buf, s);
    serde_json::from_slice(&buf).expect("session names are JSON strings")
}

/// Whether a record's operations name two or more functions (a workflow transaction that
/// spans functions; its operations are then partially ordered).
fn spans_functions(record: &TxnRecord) -> bool {
    let mut functions = record.ops.iter().filter_map(|op| op.function);
    functions.next().is_some_and(|first| functions.any(|f| f != first))
}

fn push_op(buf: &mut Vec<u8>, op: &OpRecord, names: &Names, with_function: bool) {
    if let Some(log) = &op.log {
        return push_log_op(buf, op, log, names);
    }
    buf.extend_from_slice(match op.kind {
        OpKind::Read => b"{\"f\":\"r\",\"key\":",
        OpKind::Write => b"{\"f\":\"w\",\"key\":",
    });
    names.push_key_json(op.key, buf);
    buf.extend_from_slice(b",\"value\":");
    push_u64_or_null(buf, op.value);
    if !op.version.is_empty() {
        buf.extend_from_slice(b",\"version\":");
        push_u64_array(buf, &op.version);
    }
    if let Some(node) = op.node {
        buf.extend_from_slice(b",\"node\":");
        buf.extend_from_slice(names.node_json(node).as_bytes());
    }
    if let Some(at) = op.at_ns {
        buf.extend_from_slice(b",\"at_ns\":");
        push_u64(buf, at);
    }
    if with_function && let Some(f) = op.function {
        buf.extend_from_slice(b",\"fn\":");
        push_u64(buf, u64::from(f));
    }
    buf.push(b'}');
}

/// `{"f":"append","book":"b","tags":[1],"data":3,"seqnum":17,"pos":[0,4]}`, or a read:
/// `{"f":"read_next","book":"b","tag":1,"min":0,"seqnum":17,"data":3,"pos":[0,5]}`
/// (`read_prev` has `max`; `check_tail` neither).
fn push_log_op(buf: &mut Vec<u8>, op: &OpRecord, log: &LogRecord, names: &Names) {
    let f: &[u8] = match log.call {
        LogCall::Append => b"append",
        LogCall::ReadNext => b"read_next",
        LogCall::ReadPrev if log.bound == u64::MAX => b"check_tail",
        LogCall::ReadPrev => b"read_prev",
        LogCall::Trim => b"trim",
    };
    buf.extend_from_slice(b"{\"f\":\"");
    buf.extend_from_slice(f);
    buf.extend_from_slice(b"\",\"book\":");
    names.push_key_json(op.key, buf);
    match log.call {
        LogCall::Append => {
            buf.extend_from_slice(b",\"tags\":");
            push_u64_array(buf, &log.tags);
            buf.extend_from_slice(b",\"data\":");
            push_u64_or_null(buf, op.value);
            if let Some(s) = log.seqnum {
                buf.extend_from_slice(b",\"seqnum\":");
                push_u64(buf, s);
            }
        }
        LogCall::ReadNext | LogCall::ReadPrev => {
            buf.extend_from_slice(b",\"tag\":");
            push_u64(buf, log.tags.first().copied().unwrap_or(0));
            if log.call == LogCall::ReadNext {
                buf.extend_from_slice(b",\"min\":");
                push_u64(buf, log.bound);
            } else if log.bound != u64::MAX {
                buf.extend_from_slice(b",\"max\":");
                push_u64(buf, log.bound);
            }
            buf.extend_from_slice(b",\"seqnum\":");
            push_u64_or_null(buf, log.seqnum);
            buf.extend_from_slice(b",\"data\":");
            push_u64_or_null(buf, op.value);
        }
        LogCall::Trim => {
            buf.extend_from_slice(b",\"seqnum\":");
            push_u64(buf, log.bound);
        }
    }
    if let Some((term, pos)) = log.pos {
        buf.extend_from_slice(b",\"pos\":[");
        push_u64(buf, term);
        buf.push(b',');
        push_u64(buf, pos);
        buf.push(b']');
    }
    if let Some(node) = op.node {
        buf.extend_from_slice(b",\"node\":");
        buf.extend_from_slice(names.node_json(node).as_bytes());
    }
    buf.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_record_renders_as_the_documented_json_line() {
        let names = Names::new(&["S0".into(), "S1".into()], &["x".into(), "y".into()]);
        let sink = Shared::default();
        let mut w = HistoryWriter::new(Box::new(sink.clone()));
        let record = TxnRecord {
            kind: TxnKind::Read,
            node: Some(NodeId::fixed(1)),
            invoke_ns: 5,
            complete_ns: 9,
            outcome: Outcome::Ok,
            ops: [OpRecord::read(1, Some(1)).with_version([1, 1]), OpRecord::read(0, None)].into_iter().collect(),
            note: None,
            call: None,
        };
        let session = SessionRef { workflow_name: Some("c2"), workflow_id: 1, attempt: 1, function: 0, per_function: false };
        w.write(3, session, &[], &record, &names).unwrap();
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "{\"id\":3,\"session\":\"c2\",\"fn\":0,\"kind\":\"read\",\"node\":\"S1\",\"invoke_ns\":5,\
             \"complete_ns\":9,\"outcome\":\"ok\",\"ops\":[{\"f\":\"r\",\"key\":\"y\",\"value\":1,\
             \"version\":[1,1]},{\"f\":\"r\",\"key\":\"x\",\"value\":null}]}\n"
        );
        let parsed: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(parsed["ops"][1]["value"], serde_json::Value::Null);
        assert_ne!(w.hash(), OutputHash::default().value());
    }

    #[test]
    fn the_hash_is_the_same_with_or_without_a_file_and_tells_records_apart() {
        let names = Names::new(&["S0".into()], &[]);
        let session = SessionRef { workflow_name: None, workflow_id: 4, attempt: 1, function: 0, per_function: false };
        let record = |value: Option<u64>| TxnRecord {
            kind: TxnKind::Read,
            node: Some(NodeId::fixed(0)),
            invoke_ns: 5,
            complete_ns: 9,
            outcome: Outcome::Ok,
            ops: [OpRecord::read(7, value).with_version([2])].into(),
            note: None,
            call: None,
        };
        let hash = |records: &[TxnRecord], to_file: bool| {
            let mut w = if to_file { HistoryWriter::new(Box::new(Shared::default())) } else { HistoryWriter::hashing_only() };
            w.header(&HistoryHeader::of_run("test", "t.json", 1)).unwrap();
            for (id, r) in records.iter().enumerate() {
                w.write(id as u64, session, &[], r, &names).unwrap();
            }
            w.hash()
        };
        let history = [record(Some(1)), record(None)];
        assert_eq!(hash(&history, true), hash(&history, false));
        // A read of the initial state is not a read of value 0, nor of anything else.
        assert_ne!(hash(&history, false), hash(&[record(Some(1)), record(Some(0))], false));
        assert_ne!(hash(&history, false), hash(&[record(None), record(Some(1))], false));
        assert_ne!(hash(&history, false), hash(&history[..1], false));
    }

    #[test]
    fn a_workflow_transaction_across_functions_carries_its_function_order() {
        let names = Names::new(&["S0".into()], &["x".into()]);
        let dag = Dag::from_shape(&crate::workflow::WorkflowShape::FanOut { width: 2, join: true }).unwrap();
        let in_fn = |op: OpRecord, f: u32| OpRecord { function: Some(f), ..op };
        let record = |ops: Vec<OpRecord>| TxnRecord {
            kind: TxnKind::WorkflowTxn,
            node: None,
            invoke_ns: 0,
            complete_ns: 1,
            outcome: Outcome::Ok,
            ops: ops.into_iter().collect(),
            note: None,
            call: None,
        };
        let session = SessionRef { workflow_name: Some("w"), workflow_id: 0, attempt: 1, function: 3, per_function: false };
        let line = |r: &TxnRecord| {
            let sink = Shared::default();
            let mut w = HistoryWriter::new(Box::new(sink.clone()));
            w.write_in_workflow(0, session, &[], r, &names, Some(&dag)).unwrap();
            (String::from_utf8(sink.0.lock().unwrap().clone()).unwrap(), w.hash())
        };
        let across = record(vec![in_fn(OpRecord::write(0, 2), 1), in_fn(OpRecord::read(0, Some(1)), 2)]);
        let (text, hash) = line(&across);
        assert!(text.contains(r#""ops":[{"f":"w","key":"x","value":2,"fn":1},{"f":"r","key":"x","value":1,"fn":2}]"#), "{text}");
        assert!(text.contains(r#","fn_after":[[0,1],[0,2],[1,3],[2,3]]}"#), "{text}");
        // One function's transaction is written as before: no `fn` per operation, no order.
        let alone = record(vec![in_fn(OpRecord::write(0, 2), 1), in_fn(OpRecord::read(0, Some(1)), 1)]);
        let (text, _) = line(&alone);
        assert!(!text.contains("fn_after") && !text.contains(r#"2,"fn""#), "{text}");
        let mut w = HistoryWriter::hashing_only();
        w.write(0, session, &[], &across, &names).unwrap();
        assert_ne!(w.hash(), hash, "the function order is hashed");
    }

    #[test]
    fn a_log_call_renders_as_the_documented_line_and_hashes_apart_from_a_write() {
        let names = Names::new(&["S0".into()], &["b".into()]);
        let sink = Shared::default();
        let mut w = HistoryWriter::new(Box::new(sink.clone()));
        let session = SessionRef { workflow_name: Some("a"), workflow_id: 0, attempt: 1, function: 0, per_function: false };
        let append = LogRecord { call: LogCall::Append, tags: vec![1], bound: 0, seqnum: Some(0), pos: Some((0, 1)) };
        let read = LogRecord { call: LogCall::ReadPrev, tags: vec![0], bound: u64::MAX, seqnum: None, pos: Some((0, 0)) };
        let record = |op: OpRecord| TxnRecord {
            kind: TxnKind::Write,
            node: Some(NodeId::fixed(0)),
            invoke_ns: 0,
            complete_ns: 5,
            outcome: Outcome::Ok,
            ops: [op].into(),
            note: None,
            call: None,
        };
        w.write(0, session, &[], &record(OpRecord::log(0, Some(1), append)), &names).unwrap();
        w.write(1, session, &[], &record(OpRecord::log(0, None, read)), &names).unwrap();
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].ends_with("\"ops\":[{\"f\":\"append\",\"book\":\"b\",\"tags\":[1],\"data\":1,\"seqnum\":0,\"pos\":[0,1]}]}"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].ends_with("\"ops\":[{\"f\":\"check_tail\",\"book\":\"b\",\"tag\":0,\"seqnum\":null,\"data\":null,\"pos\":[0,0]}]}"),
            "{}",
            lines[1]
        );
        let hash = |op: OpRecord| {
            let mut w = HistoryWriter::hashing_only();
            w.write(0, session, &[], &record(op), &names).unwrap();
            w.hash()
        };
        let append = LogRecord { call: LogCall::Append, tags: vec![1], bound: 0, seqnum: Some(0), pos: Some((0, 1)) };
        assert_ne!(hash(OpRecord::log(0, Some(1), append)), hash(OpRecord::write(0, 1)));
    }

    #[test]
    fn session_names_encode_attempt_and_function() {
        let s = SessionRef { workflow_name: None, workflow_id: 17, attempt: 2, function: 3, per_function: true };
        assert_eq!(session_name(s), "w17#2/f3");
        let s = SessionRef { attempt: 1, per_function: false, ..s };
        assert_eq!(session_name(s), "w17");
    }

    #[test]
    fn numbers_render_as_decimal() {
        let mut edges = vec![0, 1, 9, 10, 99, 100, 101, 999, 1000, u64::MAX, u64::MAX - 1];
        edges.extend((1..20).flat_map(|e| [10u64.pow(e) - 1, 10u64.pow(e), 10u64.pow(e) + 7]));
        let mut buf = b"x".to_vec();
        for v in edges {
            buf.truncate(1);
            push_u64(&mut buf, v);
            assert_eq!(std::str::from_utf8(&buf[1..]).unwrap(), v.to_string());
        }
    }

    #[test]
    fn generated_keys_are_named_by_number() {
        let names = Names::new(&[], &["x".into()]);
        assert_eq!(names.key(0), "x");
        assert_eq!(names.key(42), "k42");
        let mut buf = Vec::new();
        push_u64(&mut buf, 0);
        push_u64(&mut buf, u64::MAX);
        assert_eq!(buf, b"018446744073709551615");
        for v in [1u64, 9, 10, 99, 100, 101, 12345, 1_000_000, 987_654_321] {
            let mut b = Vec::new();
            push_u64(&mut b, v);
            assert_eq!(String::from_utf8(b).unwrap(), v.to_string());
        }
    }
}
