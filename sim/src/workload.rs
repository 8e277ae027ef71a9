//! Workloads: what the functions of each workflow do, and when workflows arrive.
//!
//! A workload is either a *script* (explicit sessions, functions, placements and operations: a
//! replayable anomaly scenario such as CausalMesh's Fig. 6) or a *generator* (workflow shape,
//! per-function operation counts or mix, keys uniform or Zipf, open- or closed-loop arrivals).
//! A generator may draw each arrival from a weighted `mix` of workflow kinds (each with its own
//! shape and functions, as an application's request types: CausalMesh §9.5's ComposeReview and
//! ReadReview), and its functions may draw keys from named `key_classes` (users, movies,
//! reviews), each a range of its own after the default `keys`.
//! Operations name keys; the engine fills in written values when a function starts, drawing
//! from one counter per key so every written value is unique per key.

use crate::dist::{DurationDist, Zipf};
use crate::error::FieldError;
use crate::history::{Key, Value};
use crate::rng::RngStream;
use crate::time::Time;
use crate::workflow::{Dag, WorkflowShape};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An operation a function performs, with its written value assigned.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Read {
        key: Key,
    },
    Write {
        key: Key,
        value: Value,
    },
    ReadTxn {
        keys: Vec<Key>,
    },
    /// A shared-log (LogBook) call; only log protocols (level `shared-log`) accept them.
    Log(LogOp),
}

/// A call of a shared log's LogBook API (Boki's `logAppend`, `logReadNext`, ...). The book is
/// a key of the script (interned like one); the data an append writes is assigned like a
/// written value, unique per book.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LogOp {
    Append {
        book: Key,
        tags: Vec<u64>,
        data: Value,
    },
    /// The first record of `book` with `tag` (0: any) and a seqnum ≥ `min`.
    ReadNext {
        book: Key,
        tag: u64,
        min: u64,
    },
    /// The last record of `book` with `tag` (0: any) and a seqnum ≤ `max`; `logCheckTail` is
    /// `max = u64::MAX`.
    ReadPrev {
        book: Key,
        tag: u64,
        max: u64,
    },
    /// `logTrim(until)`: deletes the book's records with seqnums below `until`.
    Trim {
        book: Key,
        until: u64,
    },
}

impl LogOp {
    pub fn book(&self) -> Key {
        match self {
            LogOp::Append { book, .. } | LogOp::ReadNext { book, .. } | LogOp::ReadPrev { book, .. } | LogOp::Trim { book, .. } => *book,
        }
    }
}

/// An operation before its value is assigned (what scripts and generators produce).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OpSpec {
    Read(Key),
    Write(Key),
    ReadTxn(Vec<Key>),
    /// A log call; an append's `data` is assigned when the function starts.
    Log(LogOp),
}

/// Hands out written values: 1, 2, 3, … per key. Value 0 is never written.
#[derive(Clone, Debug, Default)]
pub struct ValueAllocator {
    dense: Vec<Value>,
}

impl ValueAllocator {
    pub fn next(&mut self, key: Key) -> Value {
        let k = key as usize;
        if k >= self.dense.len() {
            self.dense.resize(k + 1, 0);
        }
        self.dense[k] += 1;
        self.dense[k]
    }

    pub fn assign(&mut self, spec: &OpSpec) -> Op {
        match spec {
            OpSpec::Read(key) => Op::Read { key: *key },
            OpSpec::Write(key) => Op::Write { key: *key, value: self.next(*key) },
            OpSpec::ReadTxn(keys) => Op::ReadTxn { keys: keys.clone() },
            OpSpec::Log(LogOp::Append { book, tags, .. }) => {
                Op::Log(LogOp::Append { book: *book, tags: tags.clone(), data: self.next(*book) })
            }
            OpSpec::Log(op) => Op::Log(op.clone()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scripts

/// A scripted operation: `{"read":"x"}`, `{"write":"x"}`, `{"read_txn":["x","y"]}`, and the
/// shared-log calls `{"append":{"book":"b","tags":[1]}}`, `{"read_next":{"book":"b","tag":1,"min":0}}`,
/// `{"read_prev":{"book":"b","tag":1,"max":99}}`, `{"check_tail":{"book":"b","tag":0}}` and
/// `{"trim":{"book":"b","seqnum":5}}` (delete the records below seqnum 5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ScriptOp {
    Read(String),
    Write(String),
    ReadTxn(Vec<String>),
    Append(ScriptAppend),
    ReadNext(ScriptReadNext),
    ReadPrev(ScriptReadPrev),
    CheckTail(ScriptCheckTail),
    Trim(ScriptTrim),
}

impl ScriptOp {
    /// Whether this is a shared-log call.
    pub fn is_log(&self) -> bool {
        matches!(self, ScriptOp::Append(_) | ScriptOp::ReadNext(_) | ScriptOp::ReadPrev(_) | ScriptOp::CheckTail(_) | ScriptOp::Trim(_))
    }
}

/// `logAppend(tags, data)` to a LogBook; the data is assigned by the engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptAppend {
    pub book: String,
    #[serde(default)]
    pub tags: Vec<u64>,
}

/// `logReadNext(min, tag)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptReadNext {
    pub book: String,
    #[serde(default)]
    pub tag: u64,
    #[serde(default)]
    pub min: u64,
}

/// `logReadPrev(max, tag)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptReadPrev {
    pub book: String,
    #[serde(default)]
    pub tag: u64,
    pub max: u64,
}

/// `logCheckTail(tag)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptCheckTail {
    pub book: String,
    #[serde(default)]
    pub tag: u64,
}

/// `logTrim(seqnum)`: the book's records below `seqnum` are deleted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptTrim {
    pub book: String,
    pub seqnum: u64,
}

/// One function of a scripted session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptFunction {
    /// The worker machine to run on (a server name such as `S1`); by default the scheduler
    /// decides.
    #[serde(default)]
    pub on: Option<String>,
    /// Do not start before this time (also after the predecessors finished).
    #[serde(default)]
    pub at_ns: Time,
    /// Indexes of the functions of this session that must finish first. Default: the previous
    /// function (none for the first).
    #[serde(default)]
    pub after: Option<Vec<u32>>,
    pub ops: Vec<ScriptOp>,
}

/// A scripted client session: one workflow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptSession {
    pub session: String,
    pub functions: Vec<ScriptFunction>,
}

// ---------------------------------------------------------------------------------------------
// Generators

/// Which keys operations touch: `{"count":1000000,"zipf_theta":1.0}` (theta 0 is uniform).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeysConfig {
    pub count: u64,
    #[serde(default)]
    pub zipf_theta: f64,
}

/// The operation mix of one generated function.
///
/// Either counts — `{"reads":3}`, `{"reads":2,"writes":1,"order":"shuffled"}`,
/// `{"updates":1,"keys":"movies"}` — or a number of
/// operations drawn from a mix: `{"ops":4,"mix":{"read":0.5,"write":0.4,"read_txn":0.1}}`.
/// For a shared log the mix draws log calls over books (the keys) with tags `1..=tags`:
/// `{"ops":4,"tags":4,"mix":{"append":0.5,"read_next":0.25,"check_tail":0.25}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionGen {
    #[serde(default)]
    pub reads: u32,
    #[serde(default)]
    pub writes: u32,
    #[serde(default)]
    pub read_txns: u32,
    /// Read-modify-writes: a read of a drawn key, then a write of the same key (an application
    /// appending to a stored list). They come after the function's other counted operations.
    /// Default 0.
    #[serde(default)]
    pub updates: u32,
    /// The key class (a name in the generator's `key_classes`) this function's drawn operations
    /// use. Default: the generator's `keys`.
    #[serde(default)]
    pub keys: Option<String>,
    /// Keys per read transaction (distinct). Default 2.
    #[serde(default = "default_read_txn_keys")]
    pub read_txn_keys: u32,
    /// Reads of keys this workflow wrote in earlier functions (the most recent first; fewer if
    /// it wrote fewer). They come before the function's other operations. Default 0.
    #[serde(default)]
    pub read_written: u32,
    /// How counted operations are ordered. Default `reads_first` (reads, read transactions,
    /// then writes).
    #[serde(default)]
    pub order: OpOrder,
    #[serde(default)]
    pub ops: Option<u32>,
    #[serde(default)]
    pub mix: Option<OpMix>,
    /// Tags per LogBook for drawn log calls (an append carries one, a read asks for one or for
    /// 0, every record). Default 4.
    #[serde(default = "default_log_tags")]
    pub tags: u32,
}

fn default_log_tags() -> u32 {
    4
}

impl FunctionGen {
    /// How many operations a function draws (besides `read_written`).
    pub fn op_count(&self) -> u64 {
        match (self.ops, &self.mix) {
            (Some(count), Some(_)) => count as u64,
            _ => self.reads as u64 + self.read_txns as u64 + self.writes as u64 + 2 * self.updates as u64,
        }
    }
}

fn default_read_txn_keys() -> u32 {
    2
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpOrder {
    #[default]
    ReadsFirst,
    WritesFirst,
    Shuffled,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpMix {
    #[serde(default)]
    pub read: f64,
    #[serde(default)]
    pub write: f64,
    #[serde(default)]
    pub read_txn: f64,
    /// Shared-log calls: `logAppend`, `logReadNext` from seqnum 0, `logCheckTail` (a
    /// `logReadPrev` from the tail). Seqnums are opaque to a generator, so it draws no other
    /// bounds.
    #[serde(default)]
    pub append: f64,
    #[serde(default)]
    pub read_next: f64,
    #[serde(default)]
    pub check_tail: f64,
}

impl OpMix {
    fn log_total(&self) -> f64 {
        self.append + self.read_next + self.check_tail
    }
}

/// When workflows start.
///
/// `{"kind":"closed","clients":8,"think":{"dist":"constant","ns":0}}`: each client starts a new
/// workflow when its previous one finishes (plus think time).
/// `{"kind":"poisson","rate_per_s":1000}` and `{"kind":"constant","rate_per_s":1000}`: open loop.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrival {
    Closed {
        clients: u32,
        #[serde(default = "zero_dist")]
        think: DurationDist,
    },
    Poisson {
        rate_per_s: f64,
    },
    Constant {
        rate_per_s: f64,
    },
}

fn zero_dist() -> DurationDist {
    DurationDist::ZERO
}

/// One kind of workflow in a generator's `mix`, drawn for an arrival with probability
/// `weight` / the sum of the weights:
/// `{"name":"read_review","weight":1,"workflow":{"shape":"chain","functions":2},"functions":[...]}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkflowKind {
    /// A label for the reader (and for error messages); not used by the run.
    #[serde(default)]
    pub name: String,
    pub weight: f64,
    pub workflow: WorkflowShape,
    /// One entry per function of the workflow, or a single entry used for every function.
    pub functions: Vec<FunctionGen>,
}

/// A generated workload.
///
/// Either one kind of workflow (`workflow` and `functions`) or a weighted `mix` of kinds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<WorkflowShape>,
    /// One entry per function of the workflow, or a single entry used for every function.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<FunctionGen>,
    /// Kinds of workflow, one drawn per arrival by weight (instead of `workflow` and
    /// `functions`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<WorkflowKind>,
    /// The default key class: keys `0..count`.
    pub keys: KeysConfig,
    /// Named key classes, each a range of its own: the classes follow the default keys in name
    /// order (`{"movies":{"count":1000},"users":{"count":1000}}` puts movies at
    /// `keys.count..keys.count+1000`, users after them). A function draws from one with `keys`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub key_classes: BTreeMap<String, KeysConfig>,
    pub arrival: Arrival,
    /// Stop starting workflows after this many (counting first attempts only).
    #[serde(default)]
    pub workflows_max: Option<u64>,
    /// Stop starting workflows after this time.
    #[serde(default)]
    pub duration_ns: Option<Time>,
    /// Workflows that start before this time are run but left out of latency and throughput.
    #[serde(default)]
    pub warmup_ns: Time,
}

impl GeneratorConfig {
    /// The workflow kinds with the JSON path of each (`""` for the single `workflow` and
    /// `functions`, `"mix[i]."` for a mix entry), its weight, shape and functions. Empty when
    /// neither is given (an error `Generator::new` reports).
    pub fn kinds(&self) -> Vec<(String, f64, &WorkflowShape, &[FunctionGen])> {
        match &self.workflow {
            Some(shape) if self.mix.is_empty() => vec![(String::new(), 1.0, shape, &self.functions[..])],
            _ => self.mix.iter().enumerate().map(|(i, k)| (format!("mix[{i}]."), k.weight, &k.workflow, &k.functions[..])).collect(),
        }
    }

    /// Every function generator with its JSON path relative to the generator
    /// (`functions[0]`, `mix[1].functions[0]`).
    pub fn function_gens(&self) -> Vec<(String, &FunctionGen)> {
        self.kinds()
            .into_iter()
            .flat_map(|(at, _, _, functions)| functions.iter().enumerate().map(move |(i, f)| (format!("{at}functions[{i}]"), f)))
            .collect()
    }
}

/// A workload: a script or a generator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadConfig {
    Script(Vec<ScriptSession>),
    Generator(GeneratorConfig),
}

// ---------------------------------------------------------------------------------------------
// Compiled forms

/// A workflow to run: its graph, its operations and (for scripts) its placements.
#[derive(Clone, Debug)]
pub struct WorkflowPlan {
    /// The script's session name; `None` for generated workflows (named `w<id>`).
    pub name: Option<String>,
    pub dag: std::sync::Arc<Dag>,
    pub ops: Vec<Vec<OpSpec>>,
    /// Machine name per function, when the script pins it; empty when nothing is pinned.
    pub pinned: Vec<Option<String>>,
    /// The earliest start per function; empty when every function may start at once.
    pub not_before_ns: Vec<Time>,
}

impl WorkflowPlan {
    /// The machine function `f` is pinned to, if any.
    pub fn pinned(&self, f: u32) -> Option<&str> {
        self.pinned.get(f as usize).and_then(|m| m.as_deref())
    }

    /// The earliest time function `f` may start.
    pub fn not_before_ns(&self, f: u32) -> Time {
        self.not_before_ns.get(f as usize).copied().unwrap_or(0)
    }
}

/// A compiled script: plans in script order and the key names it uses.
#[derive(Clone, Debug)]
pub struct CompiledScript {
    pub plans: Vec<WorkflowPlan>,
    pub key_names: Vec<String>,
}

/// Compiles a script: keys get ids in order of first appearance. Errors carry a JSON path
/// relative to the script array and a message.
pub fn compile_script(sessions: &[ScriptSession]) -> Result<CompiledScript, FieldError> {
    let mut key_ids: BTreeMap<String, Key> = BTreeMap::new();
    let mut key_names = Vec::new();
    let mut intern = |name: &str| -> Key {
        if let Some(&k) = key_ids.get(name) {
            return k;
        }
        let k = key_names.len() as Key;
        key_names.push(name.to_string());
        key_ids.insert(name.to_string(), k);
        k
    };
    let mut seen_sessions = BTreeMap::new();
    let mut plans = Vec::new();
    for (s_idx, session) in sessions.iter().enumerate() {
        let path = format!("[{s_idx}]");
        if session.session.is_empty() {
            return Err(FieldError::new(format!("{path}.session"), "a session needs a non-empty name"));
        }
        if let Some(prev) = seen_sessions.insert(session.session.clone(), s_idx) {
            return Err(FieldError::new(
                format!("{path}.session"),
                format!("session name {:?} is already used by session [{prev}]", session.session),
            ));
        }
        let n = session.functions.len() as u32;
        let mut edges = Vec::new();
        let mut ops = Vec::new();
        for (f_idx, f) in session.functions.iter().enumerate() {
            let f_idx = f_idx as u32;
            let fpath = format!("{path}.functions[{f_idx}]");
            match &f.after {
                None if f_idx > 0 => edges.push((f_idx - 1, f_idx)),
                None => {}
                Some(list) => {
                    for &p in list {
                        if p >= f_idx {
                            return Err(FieldError::new(
                                format!("{fpath}.after"),
                                format!("function {f_idx} can only come after earlier functions, not {p}"),
                            ));
                        }
                        edges.push((p, f_idx));
                    }
                }
            }
            let mut f_ops = Vec::new();
            for (o_idx, op) in f.ops.iter().enumerate() {
                let opath = format!("{fpath}.ops[{o_idx}]");
                f_ops.push(match op {
                    ScriptOp::Read(k) | ScriptOp::Write(k) if k.is_empty() => {
                        return Err(FieldError::new(opath, "a key name must not be empty"));
                    }
                    ScriptOp::Append(ScriptAppend { book, .. })
                    | ScriptOp::ReadNext(ScriptReadNext { book, .. })
                    | ScriptOp::ReadPrev(ScriptReadPrev { book, .. })
                    | ScriptOp::CheckTail(ScriptCheckTail { book, .. })
                        if book.is_empty() =>
                    {
                        return Err(FieldError::new(opath, "a book name must not be empty"));
                    }
                    ScriptOp::Append(a) => {
                        if let Some(i) = a.tags.iter().position(|&t| t == 0) {
                            return Err(FieldError::new(
                                format!("{opath}.append.tags[{i}]"),
                                "tag 0 means every record of the book; an append's tags are non-zero",
                            ));
                        }
                        OpSpec::Log(LogOp::Append { book: intern(&a.book), tags: a.tags.clone(), data: 0 })
                    }
                    ScriptOp::ReadNext(r) => OpSpec::Log(LogOp::ReadNext { book: intern(&r.book), tag: r.tag, min: r.min }),
                    ScriptOp::ReadPrev(r) => OpSpec::Log(LogOp::ReadPrev { book: intern(&r.book), tag: r.tag, max: r.max }),
                    ScriptOp::CheckTail(r) => OpSpec::Log(LogOp::ReadPrev { book: intern(&r.book), tag: r.tag, max: u64::MAX }),
                    ScriptOp::Trim(t) => OpSpec::Log(LogOp::Trim { book: intern(&t.book), until: t.seqnum }),
                    ScriptOp::Read(k) => OpSpec::Read(intern(k)),
                    ScriptOp::Write(k) => OpSpec::Write(intern(k)),
                    ScriptOp::ReadTxn(keys) => {
                        if keys.is_empty() {
                            return Err(FieldError::new(opath, "a read transaction needs at least one key"));
                        }
                        let mut ids: Vec<Key> = keys.iter().map(|k| intern(k)).collect();
                        ids.sort_unstable();
                        if ids.windows(2).any(|w| w[0] == w[1]) {
                            return Err(FieldError::new(opath, "a read transaction lists a key twice"));
                        }
                        OpSpec::ReadTxn(keys.iter().map(|k| intern(k)).collect())
                    }
                });
            }
            ops.push(f_ops);
        }
        let dag = Dag::new(n, &edges).map_err(|e| FieldError::new(format!("{path}.functions"), e))?;
        plans.push(WorkflowPlan {
            name: Some(session.session.clone()),
            dag: std::sync::Arc::new(dag),
            ops,
            pinned: session.functions.iter().map(|f| f.on.clone()).collect(),
            not_before_ns: session.functions.iter().map(|f| f.at_ns).collect(),
        });
    }
    Ok(CompiledScript { plans, key_names })
}

/// Draws generated workflows.
#[derive(Clone, Debug)]
pub struct Generator {
    pub config: GeneratorConfig,
    kinds: Vec<CompiledKind>,
    /// The sum of the kinds' weights.
    total_weight: f64,
    /// Key classes: the default (`keys`) first, then `key_classes` in name order, each with the
    /// first key of its range.
    classes: Vec<(Key, Zipf)>,
}

/// A workflow kind ready to draw: its graph, weight, functions and each function's key class.
#[derive(Clone, Debug)]
struct CompiledKind {
    dag: std::sync::Arc<Dag>,
    weight: f64,
    functions: Vec<FunctionGen>,
    /// Index into `Generator::classes` per entry of `functions`.
    class_of: Vec<usize>,
}

impl Generator {
    /// Validates the configuration. Errors carry a path relative to the generator object.
    pub fn new(config: GeneratorConfig) -> Result<Generator, FieldError> {
        match (&config.workflow, config.mix.is_empty()) {
            (None, true) => {
                return Err(FieldError::new("workflow", "a generator needs a workflow (with its functions) or a mix of workflow kinds"));
            }
            (Some(_), false) => return Err(FieldError::new("mix", "give either workflow and functions or a mix, not both")),
            (None, false) if !config.functions.is_empty() => {
                return Err(FieldError::new("functions", "with a mix, each kind lists its own functions"));
            }
            _ => {}
        }
        let mut classes = vec![(0, Zipf::new(config.keys.count, config.keys.zipf_theta).map_err(|e| zipf_error(&config.keys, "keys", e))?)];
        let mut class_index: BTreeMap<&str, usize> = BTreeMap::new();
        let mut next = config.keys.count;
        for (name, keys) in &config.key_classes {
            let at = format!("key_classes.{name}");
            classes.push((next, Zipf::new(keys.count, keys.zipf_theta).map_err(|e| zipf_error(keys, &at, e))?));
            next = next
                .checked_add(keys.count)
                .ok_or_else(|| FieldError::new(format!("{at}.count"), "the key classes overflow the key space"))?;
            class_index.insert(name, classes.len() - 1);
        }
        let mut kinds = Vec::new();
        for (at, weight, shape, functions) in config.kinds() {
            if !(weight.is_finite() && weight > 0.0) {
                return Err(FieldError::new(format!("{at}weight"), format!("must be a positive number, got {weight}")));
            }
            let dag = Dag::from_shape(shape).map_err(|e| FieldError::new(format!("{at}workflow"), e))?;
            if functions.len() != 1 && functions.len() != dag.len() {
                return Err(FieldError::new(
                    format!("{at}functions"),
                    format!("expected 1 entry (used for every function) or {} (one per function), got {}", dag.len(), functions.len()),
                ));
            }
            let mut class_of = Vec::with_capacity(functions.len());
            for (i, f) in functions.iter().enumerate() {
                let fpath = format!("{at}functions[{i}]");
                let class = match &f.keys {
                    None => 0,
                    Some(name) => *class_index.get(name.as_str()).ok_or_else(|| {
                        let known: Vec<&str> = class_index.keys().copied().collect();
                        FieldError::new(
                            format!("{fpath}.keys"),
                            if known.is_empty() {
                                format!("no key class named {name:?}: the generator has no key_classes")
                            } else {
                                format!("no key class named {name:?}; key classes are {}", known.join(", "))
                            },
                        )
                    })?,
                };
                validate_function_gen(f, classes[class].1.len()).map_err(|e| e.within(&fpath))?;
                class_of.push(class);
            }
            kinds.push(CompiledKind { dag: std::sync::Arc::new(dag), weight, functions: functions.to_vec(), class_of });
        }
        match config.arrival {
            Arrival::Closed { clients, ref think } => {
                if clients == 0 {
                    return Err(FieldError::new("arrival.clients", "a closed loop needs at least one client"));
                }
                think.validate().map_err(|e| e.within("arrival.think"))?;
            }
            Arrival::Poisson { rate_per_s } | Arrival::Constant { rate_per_s } => {
                if !(rate_per_s.is_finite() && rate_per_s > 0.0 && rate_per_s <= 1e9) {
                    return Err(FieldError::new("arrival.rate_per_s", format!("must be in (0, 1e9], got {rate_per_s}")));
                }
            }
        }
        if config.workflows_max.is_none() && config.duration_ns.is_none() {
            return Err(FieldError::new("workflows_max", "a generator needs workflows_max or duration_ns, or it would never stop"));
        }
        let total_weight = kinds.iter().map(|k| k.weight).sum();
        Ok(Generator { kinds, total_weight, classes, config })
    }

    /// A new workflow's operations (keys only; values are assigned at run time). With a mix,
    /// the kind is drawn first (one draw); a single kind draws nothing for it, so a generator
    /// without a mix draws what it always drew.
    pub fn plan(&self, rng: &mut RngStream) -> WorkflowPlan {
        let kind = if self.kinds.len() == 1 {
            &self.kinds[0]
        } else {
            let mut u = rng.unit() * self.total_weight;
            self.kinds
                .iter()
                .find(|k| {
                    u -= k.weight;
                    u < 0.0
                })
                .unwrap_or(self.kinds.last().expect("a generator has a kind"))
        };
        let n = kind.dag.len();
        // Keys written by earlier functions, newest last (only kept when some function reads
        // them back).
        let track_written = kind.functions.iter().any(|f| f.read_written > 0);
        let mut written: Vec<Key> = Vec::new();
        let ops = (0..n)
            .map(|f| {
                let entry = if kind.functions.len() == 1 { 0 } else { f };
                let spec = &kind.functions[entry];
                let capacity = (spec.read_written as u64 + spec.op_count()).min(1024) as usize;
                let mut ops: Vec<OpSpec> = Vec::with_capacity(capacity);
                ops.extend(written.iter().rev().take(spec.read_written as usize).map(|k| OpSpec::Read(*k)));
                let drawn = ops.len();
                self.push_function_ops(spec, &self.classes[kind.class_of[entry]], rng, &mut ops);
                if track_written {
                    written.extend(ops[drawn..].iter().filter_map(|op| match op {
                        OpSpec::Write(k) => Some(*k),
                        _ => None,
                    }));
                }
                ops
            })
            .collect();
        WorkflowPlan { name: None, dag: kind.dag.clone(), ops, pinned: Vec::new(), not_before_ns: Vec::new() }
    }

    /// The time until the next open-loop arrival.
    pub fn interarrival_ns(&self, rng: &mut RngStream) -> Time {
        match self.config.arrival {
            Arrival::Poisson { rate_per_s } => {
                let mean_ns = 1e9 / rate_per_s;
                (-libm::log(rng.unit_open_zero()) * mean_ns).round().max(0.0) as Time
            }
            Arrival::Constant { rate_per_s } => (1e9 / rate_per_s).round().max(1.0) as Time,
            Arrival::Closed { .. } => unreachable!("closed loops have no interarrival time"),
        }
    }

    /// Draws one function's operations onto the end of `ops`, its keys from `class`.
    fn push_function_ops(&self, spec: &FunctionGen, class: &KeyClass, rng: &mut RngStream, ops: &mut Vec<OpSpec>) {
        let key = |rng: &mut RngStream| class.0 + class.1.sample(rng);
        if let (Some(count), Some(mix)) = (spec.ops, &spec.mix) {
            let kv_total = mix.read + mix.write + mix.read_txn;
            let log_total = mix.log_total();
            let total = kv_total + log_total;
            ops.extend((0..count).map(|_| {
                let u = rng.unit() * total;
                if u < mix.read {
                    OpSpec::Read(key(rng))
                } else if u < mix.read + mix.write {
                    OpSpec::Write(key(rng))
                } else if log_total == 0.0 || u < kv_total {
                    OpSpec::ReadTxn(distinct_keys(class, spec.read_txn_keys, rng))
                } else {
                    log_op(key(rng), u - kv_total, mix, spec.tags, rng)
                }
            }));
            return;
        }
        // Drawn in the order reads, transactions, writes whatever the order they run in, so a
        // seed draws the same keys under every order.
        let start = ops.len();
        ops.extend((0..spec.reads).map(|_| OpSpec::Read(key(rng))));
        ops.extend((0..spec.read_txns).map(|_| OpSpec::ReadTxn(distinct_keys(class, spec.read_txn_keys, rng))));
        ops.extend((0..spec.writes).map(|_| OpSpec::Write(key(rng))));
        let drawn = &mut ops[start..];
        match spec.order {
            OpOrder::ReadsFirst => {}
            OpOrder::WritesFirst => drawn.rotate_right(spec.writes as usize),
            OpOrder::Shuffled => {
                for i in (1..drawn.len()).rev() {
                    let j = rng.below(i as u64 + 1) as usize;
                    drawn.swap(i, j);
                }
            }
        }
        for _ in 0..spec.updates {
            let k = key(rng);
            ops.extend([OpSpec::Read(k), OpSpec::Write(k)]);
        }
    }
}

/// A key class: the first key of its range and the distribution over the range.
type KeyClass = (Key, Zipf);

fn zipf_error(keys: &KeysConfig, at: &str, e: String) -> FieldError {
    FieldError::new(if keys.count == 0 { format!("{at}.count") } else { format!("{at}.zipf_theta") }, e)
}

/// The log call at `u` (in `[0, log total)`) of the mix on `book` (drawn like a key), a tag
/// drawn uniformly (an append's from `1..=tags`, a read's from `0..=tags`).
fn log_op(book: Key, u: f64, mix: &OpMix, tags: u32, rng: &mut RngStream) -> OpSpec {
    let tags = tags.max(1) as u64;
    if u < mix.append {
        return OpSpec::Log(LogOp::Append { book, tags: vec![1 + rng.below(tags)], data: 0 });
    }
    let tag = rng.below(tags + 1);
    OpSpec::Log(if u < mix.append + mix.read_next {
        LogOp::ReadNext { book, tag, min: 0 }
    } else {
        LogOp::ReadPrev { book, tag, max: u64::MAX }
    })
}

/// `n` distinct keys of `class` (n ≤ its key count, checked at construction). Rejection keeps
/// the Zipf weights; after a bounded number of tries the remaining keys are taken in rank order.
fn distinct_keys(class: &KeyClass, n: u32, rng: &mut RngStream) -> Vec<Key> {
    let mut keys: Vec<Key> = Vec::with_capacity(n as usize);
    let mut tries = 0;
    while keys.len() < n as usize && tries < 64 * n {
        let k = class.0 + class.1.sample(rng);
        if !keys.contains(&k) {
            keys.push(k);
        }
        tries += 1;
    }
    let mut next = class.0;
    while keys.len() < n as usize {
        if !keys.contains(&next) {
            keys.push(next);
        }
        next += 1;
    }
    keys
}

fn validate_function_gen(f: &FunctionGen, key_count: u64) -> Result<(), FieldError> {
    match (&f.ops, &f.mix) {
        (Some(_), None) => return Err(FieldError::new("mix", "`ops` needs a `mix`")),
        (None, Some(_)) => return Err(FieldError::new("ops", "`mix` needs a number of `ops`")),
        (Some(_), Some(mix)) => {
            if f.reads + f.writes + f.read_txns + f.updates > 0 {
                return Err(FieldError::new("ops", "give either counts (reads/writes/read_txns/updates) or ops with a mix, not both"));
            }
            let weights = [
                ("mix.read", mix.read),
                ("mix.write", mix.write),
                ("mix.read_txn", mix.read_txn),
                ("mix.append", mix.append),
                ("mix.read_next", mix.read_next),
                ("mix.check_tail", mix.check_tail),
            ];
            for (name, p) in weights {
                if !(p.is_finite() && p >= 0.0) {
                    return Err(FieldError::new(name, format!("must be a non-negative number, got {p}")));
                }
            }
            if mix.read + mix.write + mix.read_txn + mix.log_total() <= 0.0 {
                return Err(FieldError::new("mix", "at least one weight must be positive"));
            }
        }
        (None, None) => {}
    }
    let uses_txns = f.read_txns > 0 || f.mix.as_ref().is_some_and(|m| m.read_txn > 0.0);
    if uses_txns && (f.read_txn_keys == 0 || f.read_txn_keys as u64 > key_count) {
        return Err(FieldError::new(
            "read_txn_keys",
            format!("must be between 1 and the key count ({key_count}), got {}", f.read_txn_keys),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamId;

    fn micro_benchmark() -> GeneratorConfig {
        serde_json::from_str(
            r#"{"workflow":{"shape":"chain","functions":3},
                "functions":[{"reads":3},{"reads":3},{"writes":1}],
                "keys":{"count":1000000,"zipf_theta":1.0},
                "arrival":{"kind":"poisson","rate_per_s":1000},
                "workflows_max":10}"#,
        )
        .unwrap()
    }

    #[test]
    fn generated_plans_follow_the_function_specs() {
        let g = Generator::new(micro_benchmark()).unwrap();
        let mut rng = RngStream::new(1, StreamId::Workload);
        let plan = g.plan(&mut rng);
        assert_eq!(plan.ops.len(), 3);
        assert!(plan.ops[0].iter().all(|op| matches!(op, OpSpec::Read(_))));
        assert_eq!(plan.ops[1].len(), 3);
        assert!(matches!(plan.ops[2][..], [OpSpec::Write(_)]));
    }

    #[test]
    fn read_written_reads_what_earlier_functions_wrote() {
        let c: GeneratorConfig = serde_json::from_str(
            r#"{"workflow":{"shape":"chain","functions":2},
                "functions":[{"writes":1},{"read_written":1}],
                "keys":{"count":1000},
                "arrival":{"kind":"closed","clients":1},
                "workflows_max":5}"#,
        )
        .unwrap();
        let g = Generator::new(c).unwrap();
        let mut rng = RngStream::new(3, StreamId::Workload);
        for _ in 0..20 {
            let plan = g.plan(&mut rng);
            let OpSpec::Write(k) = plan.ops[0][0] else { panic!() };
            assert_eq!(plan.ops[1], [OpSpec::Read(k)]);
        }
    }

    #[test]
    fn values_are_unique_per_key() {
        let mut values = ValueAllocator::default();
        assert_eq!(values.next(5), 1);
        assert_eq!(values.next(5), 2);
        assert_eq!(values.next(0), 1);
        assert_eq!(values.assign(&OpSpec::Write(5)), Op::Write { key: 5, value: 3 });
    }

    #[test]
    fn scripts_intern_keys_and_check_their_shape() {
        let sessions: Vec<ScriptSession> = serde_json::from_str(
            r#"[{"session":"c1","functions":[{"on":"S0","ops":[{"write":"x"}]},{"on":"S1","ops":[{"write":"y"}]}]},
                {"session":"c2","functions":[{"on":"S1","at_ns":1000,"ops":[{"read":"y"},{"read":"x"}]}]}]"#,
        )
        .unwrap();
        let script = compile_script(&sessions).unwrap();
        assert_eq!(script.key_names, ["x", "y"]);
        assert!(script.plans[0].dag.is_chain());
        assert_eq!(script.plans[1].ops[0], [OpSpec::Read(1), OpSpec::Read(0)]);

        let dup: Vec<ScriptSession> =
            serde_json::from_str(r#"[{"session":"a","functions":[{"ops":[]}]},{"session":"a","functions":[{"ops":[]}]}]"#).unwrap();
        let FieldError { path, message: msg } = compile_script(&dup).unwrap_err();
        assert_eq!(path, "[1].session");
        assert!(msg.contains("already used"));
    }

    #[test]
    fn scripts_and_generators_draw_log_calls() {
        let sessions: Vec<ScriptSession> = serde_json::from_str(
            r#"[{"session":"a","functions":[{"ops":[{"append":{"book":"b","tags":[1,2]}},{"read_next":{"book":"b","tag":2}},{"check_tail":{"book":"c"}}]}]}]"#,
        )
        .unwrap();
        let script = compile_script(&sessions).unwrap();
        assert_eq!(script.key_names, ["b", "c"]);
        assert_eq!(
            script.plans[0].ops[0],
            [
                OpSpec::Log(LogOp::Append { book: 0, tags: vec![1, 2], data: 0 }),
                OpSpec::Log(LogOp::ReadNext { book: 0, tag: 2, min: 0 }),
                OpSpec::Log(LogOp::ReadPrev { book: 1, tag: 0, max: u64::MAX }),
            ]
        );
        let mut values = ValueAllocator::default();
        assert_eq!(values.assign(&script.plans[0].ops[0][0]), Op::Log(LogOp::Append { book: 0, tags: vec![1, 2], data: 1 }));
        let zero_tag: Vec<ScriptSession> =
            serde_json::from_str(r#"[{"session":"a","functions":[{"ops":[{"append":{"book":"b","tags":[0]}}]}]}]"#).unwrap();
        assert_eq!(compile_script(&zero_tag).unwrap_err().path, "[0].functions[0].ops[0].append.tags[0]");

        let mut c = micro_benchmark();
        c.functions = vec![serde_json::from_str(r#"{"ops":50,"tags":3,"mix":{"append":0.5,"check_tail":0.5}}"#).unwrap()];
        let g = Generator::new(c).unwrap();
        let plan = g.plan(&mut RngStream::new(5, StreamId::Workload));
        let appends =
            plan.ops[0].iter().filter(|op| matches!(op, OpSpec::Log(LogOp::Append { tags, .. }) if (1..=3).contains(&tags[0]))).count();
        let tails =
            plan.ops[0].iter().filter(|op| matches!(op, OpSpec::Log(LogOp::ReadPrev { tag, max: u64::MAX, .. }) if *tag <= 3)).count();
        assert_eq!(appends + tails, 50, "every drawn call is an append with a tag in 1..=3 or a tail read");
        assert!(appends > 12 && tails > 12);
    }

    #[test]
    fn generator_errors_name_the_field() {
        let mut c = micro_benchmark();
        c.functions = vec![FunctionGen { reads: 1, ..serde_json::from_str("{}").unwrap() }; 2];
        assert_eq!(Generator::new(c).unwrap_err().path, "functions");
        let mut c = micro_benchmark();
        c.workflows_max = None;
        assert_eq!(Generator::new(c).unwrap_err().path, "workflows_max");
        let mut c = micro_benchmark();
        c.keys.zipf_theta = -1.0;
        assert_eq!(Generator::new(c).unwrap_err().path, "keys.zipf_theta");
    }

    #[test]
    fn a_mix_draws_kinds_by_weight_and_classes_get_their_own_ranges() {
        let c: GeneratorConfig = serde_json::from_str(
            r#"{"mix":[{"name":"compose","weight":1,"workflow":{"shape":"fan_out","width":2},
                        "functions":[{"writes":1},{"updates":1,"keys":"users"},{"updates":1,"keys":"movies"}]},
                       {"name":"read","weight":3,"workflow":{"shape":"chain","functions":2},
                        "functions":[{"reads":1,"keys":"movies"},{"reads":4}]}],
                "keys":{"count":100},
                "key_classes":{"users":{"count":10},"movies":{"count":20}},
                "arrival":{"kind":"poisson","rate_per_s":1000},
                "workflows_max":10}"#,
        )
        .unwrap();
        let g = Generator::new(c).unwrap();
        let mut rng = RngStream::new(7, StreamId::Workload);
        let (mut composes, mut reads) = (0, 0);
        // Classes follow the default keys in name order: movies 100..120, users 120..130.
        let (movies, users, reviews) = (100..120, 120..130, 0..100);
        for _ in 0..4000 {
            let plan = g.plan(&mut rng);
            if plan.dag.len() == 3 {
                composes += 1;
                let [OpSpec::Write(r)] = plan.ops[0][..] else { panic!("{:?}", plan.ops) };
                let [OpSpec::Read(u), OpSpec::Write(u2)] = plan.ops[1][..] else { panic!("{:?}", plan.ops) };
                let [OpSpec::Read(m), OpSpec::Write(m2)] = plan.ops[2][..] else { panic!("{:?}", plan.ops) };
                assert!(reviews.contains(&r) && users.contains(&u) && movies.contains(&m));
                assert_eq!((u, m), (u2, m2), "an update writes the key it read");
            } else {
                reads += 1;
                assert!(plan.dag.is_chain());
                let [OpSpec::Read(m)] = plan.ops[0][..] else { panic!("{:?}", plan.ops) };
                assert!(movies.contains(&m));
                assert!(plan.ops[1].iter().all(|op| matches!(op, OpSpec::Read(k) if reviews.contains(k))));
            }
        }
        assert!((2800..3200).contains(&reads) && composes + reads == 4000, "{composes} composes, {reads} reads");
    }

    #[test]
    fn a_generator_is_one_kind_or_a_mix() {
        let mut c = micro_benchmark();
        c.workflow = None;
        assert_eq!(Generator::new(c.clone()).unwrap_err().path, "workflow");
        c.mix =
            vec![WorkflowKind { name: String::new(), weight: 1.0, workflow: WorkflowShape::Chain { functions: 1 }, functions: Vec::new() }];
        assert_eq!(Generator::new(c.clone()).unwrap_err().path, "functions", "a mix with top-level functions");
        c.functions.clear();
        assert_eq!(Generator::new(c).unwrap_err().path, "mix[0].functions");
    }

    #[test]
    fn poisson_interarrivals_have_the_requested_rate() {
        let g = Generator::new(micro_benchmark()).unwrap();
        let mut rng = RngStream::new(2, StreamId::Workload);
        let n = 100_000;
        let mean = (0..n).map(|_| g.interarrival_ns(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!((mean - 1e6).abs() / 1e6 < 0.02, "{mean}");
    }
}
