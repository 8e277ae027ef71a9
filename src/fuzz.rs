//! `causim fuzz`: proptest strategies over whole scenarios — the workload as an explicit script
//! (sessions with chain or fan-out/fan-in shapes, or DAGs with several sources and sinks;
//! functions that read a key and then write it; functions pinned to a server or placed by the
//! scheduler, so workflows roam; reads, writes and read transactions over a skewed key set;
//! start times and gaps), link delays and per-link overrides, partitions, crashes, the scheduler
//! policy, protocol parameters and the seed. Cases run until one fails (a history-check
//! anomaly, an invariant violation or a panic); the first failure is shrunk to a minimal
//! scenario file that `causim run` replays.
//!
//! # Shrinking
//!
//! Two phases. First proptest's own shrinking (`simplify`/`complicate` on the case's value
//! tree: fewer sessions, functions, operations, links and faults; smaller delays and times).
//! Then a greedy pass over the script that proptest's single pass misses: it tries removing
//! each session, function, operation, slow link, partition and crash, each edge of a drawn
//! DAG (or the whole DAG, back to the session's chain or fan-out), unpinning functions,
//! zeroing waits and dropping servers, and keeps every change after which the case still fails
//! the same way (an anomaly stays an anomaly; a panic a panic), until nothing more can go.
//!
//! # Determinism
//!
//! Case `i` of a fuzz run is generated from a ChaCha seed derived from (fuzz seed, `i`), so a
//! run finds the same first failure whatever the number of threads: threads claim cases in
//! order, and the failure reported is the failing case with the lowest index. Shrinking is
//! sequential. That per-case seed is also the proptest regression entry (`cc <hex>`): proptest
//! regenerates the same case from it with the same strategy (`tests/fuzz_regressions.rs`
//! replays the committed entries in `scenarios/fuzz/` through proptest's `TestRunner`).
//!
//! # Fault model
//!
//! By default a case draws only what every protocol here must survive: arbitrary delays
//! (FIFO per link), slow links and partitions that hold messages until they heal. `--faults
//! all` adds the faults of the protocol's fault model that it claims to survive (partitions
//! that drop messages, message loss, node crashes); the others are never drawn, since a
//! scenario asking for them is refused when loaded. The fault model is that of the case's drawn
//! parameters (`Model::faults_for`: the catalogue entry's, unless a parameter narrows it, as
//! Concord's transactions rule out crashes), and so is the level the history is checked at
//! (`Model::level_for`). The draw is the same whatever the model, and then masked, so a
//! committed regression entry generates the same case after a protocol's fault model changes.

use causim_checkers::Level;
use causim_models::catalogue::{self, Visitor};
use causim_models::{Entry, Fault, FaultModel, Model, metrics};
use causim_pipeline::run::{self, RunOptions};
use causim_pipeline::scenario::{
    ChecksConfig, Expectation, LoadedScenario, ProtocolSection, SCENARIO_FORMAT, Scenario, Verdict as ExpectedVerdict,
};
use causim_sim::config::{
    CrashConfig, FaultsConfig, LimitsConfig, LinkOverride, PartitionConfig, PartitionMode, PlacementPolicy, SchedulerConfig, TopologyConfig,
};
use causim_sim::dist::DurationDist;
use causim_sim::workload::{ScriptAppend, ScriptCheckTail, ScriptFunction, ScriptOp, ScriptReadNext, ScriptSession, WorkloadConfig};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, Once};

/// Which faults a case may draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Faults {
    /// Delays, slow links, holding partitions.
    Safe,
    /// Also dropping partitions, loss and crashes.
    All,
}

impl Faults {
    pub fn parse(s: &str) -> Result<Faults, String> {
        match s {
            "safe" => Ok(Faults::Safe),
            "all" => Ok(Faults::All),
            other => Err(format!("--faults {other:?}: expected safe or all")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Faults::Safe => "safe",
            Faults::All => "all",
        }
    }
}

/// What the fuzzer needs to know about a protocol: its catalogue entry's profile and level,
/// and the model's parameter strategy.
#[derive(Clone, Debug)]
pub struct Profile {
    pub protocol: String,
    /// Its catalogue entry: level, workload profile (database, read transactions, workflow
    /// transactions) and fault model.
    pub entry: &'static Entry,
    params: fn() -> BoxedStrategy<Value>,
    /// The level and the fault model of a case's parameters (`Model::level_for`, `faults_for`).
    level_for: fn(&Value) -> Level,
    faults_for: fn(&Value) -> FaultModel,
}

impl Profile {
    /// The profile of a catalogue protocol, or an error naming the known ones.
    pub fn of(protocol: &str) -> Result<Profile, String> {
        struct Params;
        type Hooks = (fn() -> BoxedStrategy<Value>, fn(&Value) -> Level, fn(&Value) -> FaultModel);
        impl Visitor for Params {
            type Output = Hooks;
            fn visit<M: Model>(self) -> Hooks {
                (M::fuzz_params, M::level_for, M::faults_for)
            }
        }
        let (Some(entry), Some((params, level_for, faults_for))) = (catalogue::find(protocol), catalogue::visit(protocol, Params)) else {
            return Err(format!("unknown protocol {protocol:?}; known protocols: {}", catalogue::names()));
        };
        Ok(Profile { protocol: protocol.to_string(), entry, params, level_for, faults_for })
    }

    /// The entry's history check level.
    pub fn level(&self) -> Level {
        self.entry.level
    }

    /// The history check level of a case with these parameters.
    pub fn level_for(&self, params: &Value) -> Level {
        (self.level_for)(params)
    }

    /// It reports a quiescent property (the final metric `incoherent_entries` or
    /// `diverged_keys`): its cases settle after the workload, and a stale cache entry or a key
    /// the caches disagree on then fails the case.
    pub fn quiescent(&self) -> bool {
        QUIESCENT.iter().any(|(metric, _)| self.entry.profile.final_metrics.contains(metric))
    }

    /// Protocol parameters worth varying, as JSON (the model's strategy).
    fn params(&self) -> BoxedStrategy<Value> {
        (self.params)()
    }
}

/// One operation of a scripted function: `(kind, key, distance)`; kind 0 read, 1 write,
/// 2 read transaction over `key` and `key + distance`.
pub type FuzzOp = (u8, u8, u8);

/// One function of a fuzzed session.
#[derive(Clone, Debug, PartialEq)]
pub struct FuzzFunction {
    /// The server it must run on (index mod servers); `None`: the scheduler places it.
    pub on: Option<u32>,
    /// Ticks to wait after the previous function's earliest start (`at_ns` in the script).
    pub wait_ticks: u64,
    pub ops: Vec<FuzzOp>,
}

/// One fuzzed session (a workflow).
#[derive(Clone, Debug, PartialEq)]
pub struct FuzzSession {
    /// Start, in ticks.
    pub start_ticks: u64,
    /// With at least three functions: f0 fans out to the middle ones, which fan in to the last.
    /// Otherwise a chain.
    pub fan_out: bool,
    /// Any other shape, overriding `fan_out`: for each function, the mask of the earlier
    /// functions it comes after (bit `p`: function `p`; no bit: a source). Several sources
    /// and several sinks (leaves) are allowed.
    pub dag: Option<Vec<u8>>,
    pub functions: Vec<FuzzFunction>,
}

impl FuzzSession {
    /// The functions function `i` comes after (`None`: the previous one, as in a chain).
    fn after(&self, i: usize) -> Option<Vec<u32>> {
        let count = self.functions.len();
        match &self.dag {
            Some(masks) => Some((0..i as u32).filter(|&p| masks.get(i).is_some_and(|m| m >> p & 1 == 1)).collect()),
            None if self.fan_out && count >= 3 && i > 0 => Some(if i == count - 1 { (1..count as u32 - 1).collect() } else { vec![0] }),
            None => None,
        }
    }
}

/// The DAG masks of a drawn shape over `n` functions (see [`FuzzSession::dag`]): 0, an open
/// fan-out (f0 before every other function, each a sink); 1, independent sources joined later
/// (f0 and f1 are sources, f2 comes after both, later functions form a chain); otherwise each
/// function comes after the drawn subset of the earlier ones.
fn dag_masks(kind: u8, drawn: &[u8], n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| {
            let earlier = ((1u16 << i) - 1) as u8;
            match kind {
                0 => u8::from(i > 0),
                1 => match i {
                    0 | 1 => 0,
                    2 => 0b11,
                    _ => 1 << (i - 1),
                },
                _ => drawn.get(i).copied().unwrap_or(0) & earlier,
            }
        })
        .collect()
}

/// One fuzz case: everything a scenario varies, in a shape proptest shrinks well (fewer
/// servers, sessions, functions, operations, links and faults; shorter delays and times).
#[derive(Clone, Debug, PartialEq)]
pub struct FuzzCase {
    pub seed: u64,
    pub servers: u32,
    /// `(kind, mean_ns, sigma×10)`: 0 constant, 1 uniform, 2 exponential, 3 log-normal.
    pub delay: (u8, u64, u32),
    pub db_delay_ns: u64,
    /// Slow links `(from, to, mean_ns)` between server machines (indexes mod servers).
    pub links: Vec<(u32, u32, u64)>,
    /// `(mask of servers on one side, start_ns, duration_ns, drop)`.
    pub partitions: Vec<(u32, u64, u64, bool)>,
    /// `(server, at_ns, down_ns)`; a down time of 0 is a crash-stop (no restart).
    pub crashes: Vec<(u32, u64, u64)>,
    pub loss_per_mille: u32,
    /// 0 random, 1 round-robin, 2 sticky (+ migration), 3 least-loaded.
    pub policy: u8,
    pub dispatch_mean_ns: u64,
    /// The time unit of the script's start times and waits.
    pub tick_ns: u64,
    pub sessions: Vec<FuzzSession>,
    pub params: Value,
}

/// How long a quiescent-coherence case runs on after its workload: every invalidation has
/// drained long before (the fuzzer's slowest link averages 30 ms per hop).
const SETTLE_NS: u64 = 1_000_000_000;

/// A case whose running workflows make no progress for this long stops (a message lost for
/// good leaves a function waiting forever, and periodic timers would fill the rest of the
/// minute). Longer than any timeout a fuzzed protocol waits out: retry back-offs are at most 2 ms,
/// partitions heal within 40 ms, Concord's heartbeat timeout is 300 ms.
const STALL_NS: u64 = 2_000_000_000;

/// Key names; the first ones are drawn most often (a skewed key set) and shrinking moves
/// operations towards `x`.
const KEY_NAMES: [&str; 8] = ["x", "y", "z", "w", "a", "b", "c", "d"];

/// The case strategy for a protocol and fault model.
pub fn case_strategy(profile: &Profile, faults: Faults, fan_out: bool) -> BoxedStrategy<FuzzCase> {
    let all = faults == Faults::All;
    // What the case's parameters survive (masked after the draw, below).
    let faults_for = profile.faults_for;
    let delay = (0u8..4, 10_000u64..2_000_000, 3u32..16);
    let links = prop::collection::vec((0u32..8, 0u32..8, 200_000u64..30_000_000), 0..3);
    let partitions = prop::collection::vec((1u32..255, 0u64..40_000_000, 100_000u64..40_000_000, any::<bool>()), 0..2);
    let crashes =
        if all { prop::collection::vec((0u32..8, 0u64..20_000_000, 100_000u64..20_000_000), 0..2).boxed() } else { Just(vec![]).boxed() };
    let loss = if all { (0u32..20).boxed() } else { Just(0u32).boxed() };
    let kinds = if profile.entry.profile.read_txn { 3u8 } else { 2u8 };
    // Kind: reads and writes alike, read transactions rarer; keys skewed towards the first few.
    let kind = prop_oneof![3 => 0u8..2, 1 => 0u8..kinds];
    let key = prop_oneof![3 => 0u8..3, 1 => 0u8..8];
    let op = (kind, key, 1u8..8);
    let wait = prop_oneof![2 => Just(0u64), 1 => 0u64..8];
    let function = (prop::option::weighted(0.4, 0u32..8), wait, prop::collection::vec(op, 1..4))
        .prop_map(|(on, wait_ticks, ops)| FuzzFunction { on, wait_ticks, ops });
    let fan_weight = if fan_out { 0.3 } else { 0.0 };
    let session = (0u64..40, prop::bool::weighted(fan_weight), prop::collection::vec(function, 1..5)).prop_map(
        move |(start_ticks, fan_out, mut functions)| {
            // Fan-outs get plain reads instead of read transactions outside `--faults all`. This
            // once hid an engine bug (a killed branch's in-flight write went unrecorded), since
            // fixed; it stays so that committed regression entries generate the same cases.
            let fan = fan_out && functions.len() >= 3;
            if fan && !all {
                for op in functions.iter_mut().flat_map(|f| f.ops.iter_mut()) {
                    if op.0 == 2 {
                        op.0 = 0;
                    }
                }
            }
            // Where a workflow is one transaction, branches write too: the history orders a
            // transaction's operations partially (`fn`, `fn_after`), so a branch's write and a
            // concurrent sibling's read of the key are judged as concurrent.
            FuzzSession { start_ticks, fan_out, dag: None, functions }
        },
    );
    let sessions = prop::collection::vec(session, 1..16);
    // Drawn last, so that everything above is drawn as before (a case's sessions change only
    // where these draws say so): for each session, maybe another shape (several sinks or
    // sources; none with `--no-fan-out`), and for each function, maybe a read of its first key
    // followed by a write of it.
    let shape = match fan_out {
        true => prop::option::weighted(0.15, (0u8..4, prop::collection::vec(any::<u8>(), 4))).boxed(),
        false => Just(None).boxed(),
    };
    let read_writes = prop::collection::vec(prop::bool::weighted(0.06), 4);
    let session_extras = prop::collection::vec((shape, read_writes), 15);
    let tick = prop::sample::select(vec![100_000u64, 500_000, 1_000_000, 3_000_000]);
    (
        (any::<u64>(), 2u32..6, delay, 100_000u64..3_000_000),
        (links, partitions, crashes, loss),
        (0u8..4, 0u64..1_000_000, tick),
        sessions,
        profile.params(),
        session_extras,
    )
        .prop_map(
            move |(
                (seed, servers, delay, db_delay_ns),
                (links, partitions, crashes, loss_per_mille),
                (policy, dispatch_mean_ns, tick_ns),
                mut sessions,
                params,
                session_extras,
            )| {
                for (s, (shape, read_writes)) in sessions.iter_mut().zip(session_extras) {
                    if let Some((kind, drawn)) = shape.filter(|_| s.functions.len() >= 2) {
                        s.dag = Some(dag_masks(kind, &drawn, s.functions.len()));
                    }
                    for (f, _) in s.functions.iter_mut().zip(read_writes).filter(|(_, rw)| *rw) {
                        // A read-modify-write of one key: read it (a read transaction stays
                        // one, over it and another key), then write it.
                        let (kind, key, d) = f.ops[0];
                        f.ops[0] = (if kind == 1 { 0 } else { kind }, key, d);
                        f.ops.insert(1, (1, key, d));
                    }
                }
                let model = faults_for(&params);
                let drop_ok = all && model.survives(Fault::DropPartition);
                let crash_ok = all && model.survives(Fault::Crash);
                let restart_ok = model.survives(Fault::Restart);
                FuzzCase {
                    seed,
                    servers,
                    delay,
                    db_delay_ns,
                    links,
                    partitions: partitions.into_iter().map(|(m, s, d, drop)| (m, s, d, drop && drop_ok)).collect(),
                    crashes: match crash_ok {
                        // A protocol that survives crashes but not restarts gets crash-stops (no down time).
                        true => crashes
                            .into_iter()
                            .take(model.crashes_max)
                            .map(|(s, at, down)| (s, at, if restart_ok { down } else { 0 }))
                            .collect(),
                        false => vec![],
                    },
                    loss_per_mille: if all && model.survives(Fault::Loss) { loss_per_mille } else { 0 },
                    policy,
                    dispatch_mean_ns,
                    tick_ns,
                    sessions,
                    params,
                }
            },
        )
        .boxed()
}

/// The log call a fuzzed operation stands for at a shared log: a write appends to the book
/// with one of three tags, a read is a `read_next` from seqnum 0 or (odd distance) a
/// `check_tail`, for one of the tags or (tag 0) every record.
fn log_op(kind: u8, book: String, d: u8) -> ScriptOp {
    let tag = u64::from(d % 4);
    match kind {
        1 => ScriptOp::Append(ScriptAppend { book, tags: vec![tag.max(1)] }),
        _ if d % 2 == 1 => ScriptOp::CheckTail(ScriptCheckTail { book, tag }),
        _ => ScriptOp::ReadNext(ScriptReadNext { book, tag, min: 0 }),
    }
}

fn dist(kind: u8, mean: u64, sigma_tenths: u32) -> DurationDist {
    match kind {
        0 => DurationDist::Constant { ns: mean },
        1 => DurationDist::Uniform { min_ns: mean / 4, max_ns: mean + mean * 3 / 4 },
        2 => DurationDist::Exponential { mean_ns: mean, min_ns: mean / 10 },
        _ => DurationDist::Lognormal { mean_ns: mean, sigma: sigma_tenths as f64 / 10.0, min_ns: mean / 10, max_ns: None },
    }
}

impl FuzzCase {
    /// The scenario this case describes.
    pub fn scenario(&self, profile: &Profile, mutants: &[String], name: &str) -> Scenario {
        self.scenario_with(profile, mutants, name, true)
    }

    /// The scenario, with or without the protocol's invariant checks.
    pub fn scenario_with(&self, profile: &Profile, mutants: &[String], name: &str, invariants: bool) -> Scenario {
        let n = self.servers;
        let m = |i: u32| format!("S{}", i % n);
        let mut topology = TopologyConfig::new(n, dist(self.delay.0, self.delay.1, self.delay.2));
        topology.local_delay = DurationDist::constant(5000);
        if profile.entry.profile.database {
            let delay = DurationDist::constant(self.db_delay_ns);
            topology.links.push(LinkOverride { from: "*".into(), to: "db".into(), delay, both_ways: true });
        }
        for &(a, b, mean) in &self.links {
            if a % n != b % n {
                let delay = DurationDist::Exponential { mean_ns: mean, min_ns: 0 };
                topology.links.push(LinkOverride { from: m(a), to: m(b), delay, both_ways: false });
            }
        }
        let partitions: Vec<PartitionConfig> = self
            .partitions
            .iter()
            .filter_map(|&(mask, start, dur, drop)| {
                let side: Vec<String> = (0..n).filter(|i| mask >> i & 1 == 1).map(m).collect();
                let rest: Vec<String> = (0..n).filter(|i| mask >> i & 1 == 0).map(m).collect();
                (!side.is_empty() && !rest.is_empty()).then(|| PartitionConfig {
                    groups: vec![side, rest],
                    start_ns: start,
                    heal_ns: Some(start + dur),
                    mode: if drop { PartitionMode::Drop } else { PartitionMode::Hold },
                })
            })
            .collect();
        let crashes: Vec<CrashConfig> = self
            .crashes
            .iter()
            .map(|&(s, at, down)| CrashConfig { node: m(s), at_ns: at, restart_ns: (down > 0).then_some(at + down) })
            .collect();
        let policy = [PlacementPolicy::Random, PlacementPolicy::RoundRobin, PlacementPolicy::Sticky, PlacementPolicy::LeastLoaded]
            [self.policy as usize % 4];
        let scheduler = SchedulerConfig {
            policy,
            migrate_probability: (policy == PlacementPolicy::Sticky).then_some(0.5),
            dispatch: DurationDist::Exponential { mean_ns: self.dispatch_mean_ns, min_ns: 0 },
            attempts_max: 50,
            retry_backoff: DurationDist::Uniform { min_ns: 100_000, max_ns: 2_000_000 },
        };
        let key = |k: u8| KEY_NAMES[k as usize % KEY_NAMES.len()].to_string();
        let log = profile.level() == Level::SharedLog;
        let sessions: Vec<ScriptSession> = self
            .sessions
            .iter()
            .enumerate()
            .map(|(si, s)| {
                let mut at = s.start_ticks * self.tick_ns;
                let functions = s
                    .functions
                    .iter()
                    .enumerate()
                    .map(|(fi, f)| {
                        at += f.wait_ticks * self.tick_ns;
                        let ops = f
                            .ops
                            .iter()
                            .map(|&(kind, k, d)| match kind {
                                _ if log => log_op(kind, key(k), d),
                                0 => ScriptOp::Read(key(k)),
                                1 => ScriptOp::Write(key(k)),
                                _ => {
                                    let other =
                                        if (d as usize).is_multiple_of(KEY_NAMES.len()) { k.wrapping_add(1) } else { k.wrapping_add(d) };
                                    ScriptOp::ReadTxn(vec![key(k), key(other)])
                                }
                            })
                            .collect();
                        ScriptFunction { on: f.on.map(m), at_ns: at, after: s.after(fi), ops }
                    })
                    .collect();
                ScriptSession { session: format!("c{}", si + 1), functions }
            })
            .collect();
        Scenario {
            format: Some(SCENARIO_FORMAT.to_string()),
            name: name.to_string(),
            description: None,
            protocol: ProtocolSection { name: profile.protocol.clone(), params: self.params.clone(), mutants: mutants.to_vec() },
            seed: self.seed,
            topology,
            scheduler,
            workload: WorkloadConfig::Script(sessions),
            faults: FaultsConfig { partitions, crashes, loss_probability: self.loss_per_mille as f64 / 1000.0 },
            limits: LimitsConfig {
                time_ns_max: 60_000_000_000,
                events_max: 20_000_000,
                settle_ns: if profile.quiescent() { SETTLE_NS } else { 0 },
                stall_ns: Some(STALL_NS),
                ..LimitsConfig::default()
            },
            replay: None,
            checks: ChecksConfig { invariants, level: Some(profile.level_for(&self.params).name().to_string()) },
            expect: None,
        }
    }

    /// Operations (script steps) in the workload.
    pub fn operations(&self) -> usize {
        self.sessions.iter().flat_map(|s| &s.functions).map(|f| f.ops.len()).sum()
    }

    /// Functions in the workload.
    pub fn functions(&self) -> usize {
        self.sessions.iter().map(|s| s.functions.len()).sum()
    }

    /// Sessions (workflows) in the workload.
    pub fn workflows(&self) -> usize {
        self.sessions.len()
    }

    /// `"3 sessions, 5 functions, 7 operations"`.
    pub fn size(&self) -> String {
        format!("{} sessions, {} functions, {} operations", self.workflows(), self.functions(), self.operations())
    }

    /// Simpler variants of this case, each one change away, for the greedy shrinking pass
    /// (bigger cuts first).
    fn simpler(&self) -> Vec<FuzzCase> {
        let mut out = Vec::new();
        let mut push = |c: FuzzCase| {
            if &c != self {
                out.push(c)
            }
        };
        // Halves of the sessions, then single sessions.
        let n = self.sessions.len();
        if n >= 4 {
            for (lo, hi) in [(0, n / 2), (n / 2, n)] {
                let mut c = self.clone();
                c.sessions.drain(lo..hi);
                push(c);
            }
        }
        for i in (0..n).rev() {
            if n > 1 {
                let mut c = self.clone();
                c.sessions.remove(i);
                push(c);
            }
        }
        for i in 0..n {
            let s = &self.sessions[i];
            for j in (0..s.functions.len()).rev() {
                if s.functions.len() > 1 {
                    let mut c = self.clone();
                    c.sessions[i].functions.remove(j);
                    if let Some(masks) = &mut c.sessions[i].dag {
                        // Function j goes: later functions lose it, and the bits above it shift down.
                        masks.remove(j);
                        let below = ((1u16 << j) - 1) as u8;
                        for m in masks.iter_mut() {
                            *m = (*m & below) | ((*m >> (j + 1)) << j);
                        }
                    }
                    push(c);
                }
                for k in (0..s.functions[j].ops.len()).rev() {
                    if s.functions[j].ops.len() > 1 {
                        let mut c = self.clone();
                        c.sessions[i].functions[j].ops.remove(k);
                        push(c);
                    }
                }
            }
        }
        for i in 0..self.links.len() {
            let mut c = self.clone();
            c.links.remove(i);
            push(c);
        }
        for i in 0..self.partitions.len() {
            let mut c = self.clone();
            c.partitions.remove(i);
            push(c);
        }
        for i in 0..self.crashes.len() {
            let mut c = self.clone();
            c.crashes.remove(i);
            push(c);
        }
        if self.loss_per_mille > 0 {
            let mut c = self.clone();
            c.loss_per_mille = 0;
            push(c);
        }
        if self.servers > 2 {
            let mut c = self.clone();
            c.servers -= 1;
            push(c);
        }
        for i in 0..n {
            let s = &self.sessions[i];
            if s.fan_out {
                let mut c = self.clone();
                c.sessions[i].fan_out = false;
                push(c);
            }
            if let Some(masks) = &s.dag {
                // The whole DAG becomes the session's chain or fan-out, then each edge goes.
                let mut c = self.clone();
                c.sessions[i].dag = None;
                push(c);
                for (f, &m) in masks.iter().enumerate() {
                    for p in (0..8).filter(|p| m >> p & 1 == 1) {
                        let mut c = self.clone();
                        c.sessions[i].dag.as_mut().expect("a DAG")[f] &= !(1 << p);
                        push(c);
                    }
                }
            }
            if s.start_ticks > 0 {
                let mut c = self.clone();
                c.sessions[i].start_ticks = 0;
                push(c);
            }
            for j in 0..s.functions.len() {
                let f = &s.functions[j];
                if f.wait_ticks > 0 {
                    let mut c = self.clone();
                    c.sessions[i].functions[j].wait_ticks = 0;
                    push(c);
                }
                for k in 0..f.ops.len() {
                    let (kind, key, d) = f.ops[k];
                    if kind == 2 {
                        // A read transaction becomes a plain read.
                        let mut c = self.clone();
                        c.sessions[i].functions[j].ops[k] = (0, key, d);
                        push(c);
                    }
                }
            }
        }
        out
    }
}

/// The outcome of running one case.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Pass,
    Fail(Failed),
}

/// How a case failed.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Failed {
    /// Anomaly names from the history check.
    pub anomalies: Vec<String>,
    /// The protocol's own invariant check.
    pub invariant: Option<String>,
    /// A panic inside the simulation.
    pub panic: Option<String>,
    /// The run could not finish or wrote a history that does not parse (such as one value
    /// written twice).
    pub broken: Option<String>,
    /// With the liveness oracle: the workflows that gave up or never ended.
    pub stalled: Option<String>,
    /// With the invariant checks on: what must be gone once the run has settled and is not
    /// (MuCache's stale cache entries, CausalMesh's keys the servers disagree on).
    pub incoherent: Option<String>,
}

impl Failed {
    /// Whether `other` fails the same way, for shrinking: an anomaly must stay an anomaly (any
    /// name), a panic a panic, an invariant violation an invariant violation.
    pub fn same_kind(&self, other: &Failed) -> bool {
        if !self.anomalies.is_empty() {
            !other.anomalies.is_empty()
        } else if self.panic.is_some() {
            other.panic.is_some()
        } else if self.broken.is_some() {
            other.broken.is_some()
        } else if self.stalled.is_some() {
            other.stalled.is_some()
        } else if self.incoherent.is_some() {
            other.incoherent.is_some()
        } else {
            other.invariant.is_some()
        }
    }
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if !self.anomalies.is_empty() {
            parts.push(self.anomalies.join(", "));
        }
        if let Some(i) = &self.invariant {
            parts.push(format!("invariant: {i}"));
        }
        if let Some(p) = &self.panic {
            parts.push(format!("panic: {p}"));
        }
        if let Some(b) = &self.broken {
            parts.push(format!("broken run: {b}"));
        }
        if let Some(l) = &self.stalled {
            parts.push(format!("liveness: {l}"));
        }
        if let Some(c) = &self.incoherent {
            parts.push(format!("once settled: {c}"));
        }
        write!(f, "{}", parts.join("; "))
    }
}

thread_local! {
    static CATCHING: Cell<bool> = const { Cell::new(false) };
}

/// Installs (once) a panic hook that stays silent on threads that are judging a case (their
/// panics are reported as failures) and defers to the previous hook everywhere else.
fn install_quiet_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CATCHING.with(|c| c.get()) {
                previous(info)
            }
        }));
    });
}

/// Runs a scenario; a panic inside the simulation counts as a failure. `Err`: the scenario
/// is not valid (a fuzzer bug, or a parameter the protocol rejects).
/// With `liveness`, a workflow that gives up or never ends fails the case too.
pub fn judge(scenario: &Scenario, liveness: bool) -> Result<Verdict, String> {
    install_quiet_hook();
    let loaded =
        LoadedScenario::from_scenario(Path::new("fuzz-case.json"), scenario).map_err(|e| format!("the fuzzer made a bad scenario: {e}"))?;
    let options = RunOptions::default();
    CATCHING.with(|c| c.set(true));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run::run(&loaded, &options)));
    CATCHING.with(|c| c.set(false));
    match outcome {
        Ok(Ok(report)) if report.passed() && incoherence(scenario, &report).is_some() => {
            Ok(Verdict::Fail(Failed { incoherent: incoherence(scenario, &report), ..Failed::default() }))
        }
        Ok(Ok(report)) if report.passed() && (!liveness || report.summary.liveness.live) => Ok(Verdict::Pass),
        Ok(Ok(report)) if report.passed() => {
            Ok(Verdict::Fail(Failed { stalled: Some(report.summary.liveness.describe()), ..Failed::default() }))
        }
        Ok(Ok(report)) => Ok(Verdict::Fail(Failed {
            anomalies: report.anomalies(),
            invariant: report.summary.invariant_violation.clone(),
            ..Failed::default()
        })),
        Ok(Err(run::RunError::Scenario(e))) => Err(format!("the fuzzer made a scenario the protocol rejects: {e}")),
        Ok(Err(e @ run::RunError::Io { .. })) => Ok(Verdict::Fail(Failed { broken: Some(e.to_string()), ..Failed::default() })),
        Ok(Err(e @ (run::RunError::Option { .. } | run::RunError::Output(_)))) => Err(format!("the fuzzer passed a bad option: {e}")),
        Err(panic) => {
            let msg = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
            Ok(Verdict::Fail(Failed { panic: Some(msg.unwrap_or_default()), ..Failed::default() }))
        }
    }
}

/// The final metrics that count what must be gone once a run has settled, and what they count.
const QUIESCENT: [(&str, &str); 2] = [
    (metrics::INCOHERENT_ENTRIES, "cache entries that differ from a cache-free evaluation after the run settled"),
    (metrics::DIVERGED_KEYS, "keys whose visible version differs between servers after the run settled (no convergence)"),
];

/// With the invariant checks on, what a protocol that reports a quiescent property left after
/// the run settled (`None`: nothing, or the protocol does not report one).
fn incoherence(scenario: &Scenario, report: &run::RunReport) -> Option<String> {
    if !scenario.checks.invariants {
        return None;
    }
    QUIESCENT.iter().find_map(|(metric, what)| {
        let n = *report.summary.protocol_metrics.get(*metric)?;
        (n > 0.0).then(|| format!("{what}: {n} ({metric})"))
    })
}

/// The ChaCha seed of case `index` of a fuzz run with seed `fuzz_seed`.
pub fn case_seed(fuzz_seed: u64, index: u64) -> [u8; 32] {
    let mut state = fuzz_seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut out = [0u8; 32];
    for chunk in out.chunks_mut(8) {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        chunk.copy_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out
}

/// Generates the case whose proptest seed is `seed` (what `cc <hex>` regression entries hold).
pub fn generate_from_seed(strategy: &BoxedStrategy<FuzzCase>, seed: &[u8; 32]) -> Result<Box<dyn ValueTree<Value = FuzzCase>>, String> {
    let mut runner =
        TestRunner::new_with_rng(Config { failure_persistence: None, ..Config::default() }, TestRng::from_seed(RngAlgorithm::ChaCha, seed));
    strategy.new_tree(&mut runner).map_err(|e| format!("cannot generate a case: {e}"))
}

/// Generates case `index` of fuzz seed `fuzz_seed`.
pub fn generate(strategy: &BoxedStrategy<FuzzCase>, fuzz_seed: u64, index: u64) -> Result<Box<dyn ValueTree<Value = FuzzCase>>, String> {
    generate_from_seed(strategy, &case_seed(fuzz_seed, index))
}

#[derive(Clone, Debug)]
pub struct FuzzOptions {
    pub profile: Profile,
    pub mutants: Vec<String>,
    pub faults: Faults,
    pub fuzz_seed: u64,
    /// Stop after this many cases…
    pub cases_max: u64,
    /// …or after this long (seconds), whichever comes first.
    pub time_s_max: Option<f64>,
    pub threads: usize,
    /// Most runs while shrinking (both phases together).
    pub shrink_iters_max: u32,
    pub progress: bool,
    /// Run the protocol's invariant checks (`checks.invariants`); without them only the history
    /// check (and panics) can fail a case.
    pub invariants: bool,
    /// Sessions may fan out and in (otherwise every session is a chain).
    pub fan_out: bool,
    /// A workflow that gives up or never ends fails the case (`--oracle liveness`).
    pub liveness: bool,
}

impl FuzzOptions {
    /// Options with defaults (1000 cases, fuzz seed 1, safe faults, one thread, no progress
    /// bar); checks the protocol and mutant names.
    pub fn new(protocol: &str, mutants: &[&str]) -> Result<FuzzOptions, String> {
        let profile = Profile::of(protocol)?;
        let entry = catalogue::find(protocol).expect("the profile found it");
        let mutants: Vec<String> = mutants.iter().map(|m| m.to_string()).collect();
        causim_models::check_mutants(entry, &mutants).map_err(|e| e.message)?;
        Ok(FuzzOptions {
            profile,
            mutants,
            faults: Faults::Safe,
            fuzz_seed: 1,
            cases_max: 1000,
            time_s_max: None,
            threads: 1,
            shrink_iters_max: 2000,
            progress: false,
            invariants: true,
            fan_out: true,
            liveness: false,
        })
    }

    /// The command line that makes this run.
    pub fn command(&self) -> String {
        format!(
            "causim fuzz --protocol {}{} --fuzz-seed {} --faults {}{}{}",
            self.profile.protocol,
            self.mutants.iter().map(|m| format!(" --mutant {m}")).collect::<String>(),
            self.fuzz_seed,
            self.faults.name(),
            self.oracle_option(),
            if self.fan_out { "" } else { " --no-fan-out" }
        )
    }

    /// ` --oracle O` unless it is the default.
    fn oracle_option(&self) -> &'static str {
        match (self.invariants, self.liveness) {
            (true, false) => "",
            (_, true) => " --oracle liveness",
            (false, false) => " --oracle history",
        }
    }

    /// The name of the files a failure is written to: `fuzz-<protocol>[-<mutant>…]`.
    pub fn failure_name(&self) -> String {
        let mut name = format!("fuzz-{}", self.profile.protocol);
        for m in &self.mutants {
            name.push('-');
            name.push_str(m);
        }
        name
    }
}

/// A failure, before and after shrinking.
#[derive(Clone, Debug)]
pub struct Failure {
    pub index: u64,
    pub seed: [u8; 32],
    pub original: FuzzCase,
    pub original_verdict: Failed,
    pub shrunk: FuzzCase,
    pub shrunk_verdict: Failed,
    /// Runs spent shrinking.
    pub shrink_iters: u32,
}

#[derive(Clone, Debug)]
pub struct FuzzOutcome {
    /// Cases run: up to and including the failing one when there is one.
    pub cases: u64,
    /// Seconds searching (until the first failure was known, or the budget ran out).
    pub search_s: f64,
    pub shrink_s: f64,
    pub failure: Option<Failure>,
}

impl FuzzOutcome {
    pub fn cases_per_s(&self) -> f64 {
        self.cases as f64 / self.search_s.max(1e-9)
    }
}

/// Runs cases until one fails or the budget is spent, then shrinks the failure.
pub fn fuzz(options: &FuzzOptions) -> Result<FuzzOutcome, String> {
    let started = std::time::Instant::now();
    let next = AtomicU64::new(0);
    // The lowest failing index found so far (u64::MAX: none).
    let limit = AtomicU64::new(u64::MAX);
    let stop = AtomicBool::new(false);
    let found: Mutex<Vec<(u64, Failed)>> = Mutex::new(Vec::new());
    let done = AtomicU64::new(0);
    let error: Mutex<Option<(u64, String)>> = Mutex::new(None);
    let total = if options.time_s_max.is_some() && options.cases_max == u64::MAX { 0 } else { options.cases_max };
    let label = format!(
        "fuzz {}{}",
        options.profile.protocol,
        if options.mutants.is_empty() { String::new() } else { format!(" --mutant {}", options.mutants.join(",")) }
    );
    let progress = Mutex::new(crate::progress::Progress::new(label, "cases", if options.progress { total } else { 0 }));
    let name = "fuzz-case";
    std::thread::scope(|scope| {
        for _ in 0..options.threads.max(1) {
            scope.spawn(|| {
                // A strategy per thread: proptest's boxed strategies are not `Sync`.
                let strategy = case_strategy(&options.profile, options.faults, options.fan_out);
                loop {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    if options.time_s_max.is_some_and(|t| started.elapsed().as_secs_f64() >= t) {
                        return;
                    }
                    // Cases are claimed in order and every claimed case is run to the end, so
                    // every case below the lowest failing one has run: the first failure does
                    // not depend on the number of threads.
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= options.cases_max || i > limit.load(Ordering::SeqCst) {
                        return;
                    }
                    let verdict = generate(&strategy, options.fuzz_seed, i).and_then(|tree| {
                        judge(&tree.current().scenario_with(&options.profile, &options.mutants, name, options.invariants), options.liveness)
                    });
                    match verdict {
                        Ok(Verdict::Pass) => {}
                        Ok(Verdict::Fail(what)) => {
                            found.lock().expect("not poisoned").push((i, what));
                            limit.fetch_min(i, Ordering::SeqCst);
                        }
                        Err(e) => {
                            let mut slot = error.lock().expect("not poisoned");
                            if slot.as_ref().is_none_or(|(j, _)| i < *j) {
                                *slot = Some((i, e));
                            }
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                    progress.lock().expect("not poisoned").advance(1);
                }
            });
        }
    });
    progress.lock().expect("not poisoned").finish();
    if let Some((i, e)) = error.into_inner().expect("not poisoned") {
        return Err(format!("case {i}: {e}"));
    }
    let search_s = started.elapsed().as_secs_f64();
    let mut found = found.into_inner().expect("not poisoned");
    found.sort_by_key(|f| f.0);
    let Some((index, original_verdict)) = found.into_iter().next() else {
        return Ok(FuzzOutcome { cases: done.load(Ordering::Relaxed), search_s, shrink_s: 0.0, failure: None });
    };
    let shrink_started = std::time::Instant::now();
    let seed = case_seed(options.fuzz_seed, index);
    let (original, shrunk, shrunk_verdict, shrink_iters) = shrink(options, &seed, &original_verdict)?;
    Ok(FuzzOutcome {
        cases: index + 1,
        search_s,
        shrink_s: shrink_started.elapsed().as_secs_f64(),
        failure: Some(Failure { index, seed, original, original_verdict, shrunk, shrunk_verdict, shrink_iters }),
    })
}

/// Shrinks the case generated from `seed`, which failed with `verdict`: proptest's shrinking,
/// then the greedy pass. Returns the original, the shrunk case, how it fails and the runs spent.
pub fn shrink(options: &FuzzOptions, seed: &[u8; 32], verdict: &Failed) -> Result<(FuzzCase, FuzzCase, Failed, u32), String> {
    let strategy = case_strategy(&options.profile, options.faults, options.fan_out);
    let mut tree = generate_from_seed(&strategy, seed)?;
    let original = tree.current();
    let mut best = (original.clone(), verdict.clone());
    let mut iters = 0u32;
    let budget = options.shrink_iters_max;
    let fails = |c: &FuzzCase| -> Result<Option<Failed>, String> {
        match judge(&c.scenario_with(&options.profile, &options.mutants, "fuzz-case", options.invariants), options.liveness)? {
            Verdict::Fail(w) if verdict.same_kind(&w) => Ok(Some(w)),
            _ => Ok(None),
        }
    };
    // Phase 1: proptest's shrinking (at most half the budget).
    if tree.simplify() {
        while iters < budget / 2 {
            iters += 1;
            let current = tree.current();
            match fails(&current)? {
                Some(w) => {
                    best = (current, w);
                    if !tree.simplify() {
                        break;
                    }
                }
                None => {
                    if !tree.complicate() {
                        break;
                    }
                }
            }
        }
    }
    // Phase 2: greedy, until no single change keeps the failure.
    'outer: while iters < budget {
        for candidate in best.0.simpler() {
            if iters >= budget {
                break 'outer;
            }
            iters += 1;
            if let Some(w) = fails(&candidate)? {
                best = (candidate, w);
                continue 'outer;
            }
        }
        break;
    }
    Ok((original, best.0, best.1, iters))
}

pub fn hex(seed: &[u8; 32]) -> String {
    seed.iter().map(|b| format!("{b:02x}")).collect()
}

/// The header line of a regression file: the command whose strategy the entries belong to.
pub const REGRESSION_HEADER: &str = "# causim-fuzz-regressions:";

/// Parses a regression file's header (`# causim-fuzz-regressions: --protocol P --mutant M
/// --faults F --oracle O --fan-out B`) into options for replaying its entries.
pub fn regression_options(text: &str) -> Result<FuzzOptions, String> {
    let line = text.lines().find_map(|l| l.strip_prefix(REGRESSION_HEADER)).ok_or("no causim-fuzz-regressions header line")?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let (mut protocol, mut mutants, mut faults, mut invariants, mut fan_out, mut liveness) =
        (None, Vec::new(), Faults::Safe, true, true, false);
    let mut i = 0;
    while i < words.len() {
        let value = words.get(i + 1).copied().ok_or_else(|| format!("{} needs a value", words[i]))?;
        match words[i] {
            "--protocol" => protocol = Some(value),
            "--mutant" => mutants.push(value),
            "--faults" => faults = Faults::parse(value)?,
            "--oracle" => (invariants, liveness) = (value != "history", value == "liveness"),
            "--fan-out" => fan_out = value != "false",
            other => return Err(format!("unexpected {other:?} in the header")),
        }
        i += 2;
    }
    let mut options = FuzzOptions::new(protocol.ok_or("the header has no --protocol")?, &mutants)?;
    options.faults = faults;
    options.invariants = invariants;
    options.fan_out = fan_out;
    options.liveness = liveness;
    Ok(options)
}

/// Parses the `cc <hex>` entries of a proptest regression file.
pub fn regression_seeds(text: &str) -> Vec<[u8; 32]> {
    text.lines()
        .filter_map(|l| l.strip_prefix("cc "))
        .filter_map(|rest| {
            let h = rest.split_whitespace().next()?;
            if h.len() != 64 {
                return None;
            }
            let mut seed = [0u8; 32];
            for (i, b) in seed.iter_mut().enumerate() {
                *b = u8::from_str_radix(&h[2 * i..2 * i + 2], 16).ok()?;
            }
            Some(seed)
        })
        .collect()
}

/// The files [`write_failure`] wrote.
#[derive(Clone, Debug)]
pub struct Written {
    pub shrunk: PathBuf,
    pub original: PathBuf,
    pub regressions: PathBuf,
}

/// Writes the shrunk and original scenarios and the proptest regression entry.
pub fn write_failure(options: &FuzzOptions, f: &Failure, dir: &Path) -> Result<Written, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let name = options.failure_name();
    let mut shrunk = f.shrunk.scenario_with(&options.profile, &options.mutants, &name, options.invariants);
    shrunk.description = Some(format!(
        "Found by `{}` (case {}, proptest regression seed cc {}) and shrunk in {} runs: {}. {}.",
        options.command(),
        f.index,
        hex(&f.seed),
        f.shrink_iters,
        f.shrunk_verdict,
        f.shrunk.size()
    ));
    shrunk.expect = Some(match (&f.shrunk_verdict.stalled, &f.shrunk_verdict.incoherent) {
        (Some(_), _) => {
            Expectation { verdict: ExpectedVerdict::Pass, anomalies: Vec::new(), liveness: Some(ExpectedVerdict::Fail), property: None }
        }
        // The history passes; what was left shows in the summary's final metric.
        (None, Some(_)) => Expectation { verdict: ExpectedVerdict::Pass, anomalies: Vec::new(), liveness: None, property: None },
        (None, None) => {
            Expectation { verdict: ExpectedVerdict::Fail, anomalies: f.shrunk_verdict.anomalies.clone(), liveness: None, property: None }
        }
    });
    let shrunk_path = dir.join(format!("{name}.json"));
    write(&shrunk_path, serde_json::to_string_pretty(&shrunk).expect("serializes") + "\n")?;
    let mut original = f.original.scenario_with(&options.profile, &options.mutants, &format!("{name}-original"), options.invariants);
    original.description =
        Some(format!("The unshrunk case {} of `{}`: {}. {}.", f.index, options.command(), f.original_verdict, f.original.size()));
    let original_path = dir.join(format!("{name}-original.json"));
    write(&original_path, serde_json::to_string_pretty(&original).expect("serializes") + "\n")?;
    // proptest's regression file format: `cc <ChaCha seed in hex> # comment`; our header line
    // names the strategy (protocol, mutants, faults) the seeds belong to.
    let reg_path = dir.join(format!("{name}.proptest-regressions"));
    let header = format!(
        "# Seeds for failure cases proptest has generated in the past. It is automatically read and these\n\
         # particular cases re-run before any novel cases are generated (tests/fuzz_regressions.rs).\n\
         {REGRESSION_HEADER} --protocol {}{} --faults {} --oracle {} --fan-out {}\n",
        options.profile.protocol,
        options.mutants.iter().map(|m| format!(" --mutant {m}")).collect::<String>(),
        options.faults.name(),
        match (options.invariants, options.liveness) {
            (_, true) => "liveness",
            (true, false) => "all",
            (false, false) => "history",
        },
        options.fan_out
    );
    let line = format!(
        "cc {} # case {} of fuzz seed {} shrinks to {} ({})\n",
        hex(&f.seed),
        f.index,
        options.fuzz_seed,
        f.shrunk_verdict,
        f.shrunk.size()
    );
    let existing = std::fs::read_to_string(&reg_path).unwrap_or(header);
    if !existing.contains(&hex(&f.seed)) {
        write(&reg_path, existing + &line)?;
    }
    Ok(Written { shrunk: shrunk_path, original: original_path, regressions: reg_path })
}

/// Writes case `index`'s scenario (as generated) to `dir/fuzz-case-<index>.json`.
pub fn write_case(options: &FuzzOptions, index: u64, dir: &Path) -> Result<PathBuf, String> {
    let strategy = case_strategy(&options.profile, options.faults, options.fan_out);
    let case = generate(&strategy, options.fuzz_seed, index)?.current();
    let name = format!("fuzz-case-{index}");
    let mut scenario = case.scenario_with(&options.profile, &options.mutants, &name, options.invariants);
    scenario.description = Some(format!("Case {index} of `{}`, as generated. {}.", options.command(), case.size()));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(format!("{name}.json"));
    write(&path, serde_json::to_string_pretty(&scenario).expect("serializes") + "\n")?;
    Ok(path)
}

fn write(path: &Path, text: String) -> Result<(), String> {
    causim_pipeline::out_file::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
