//! Boki's shared log (Jia & Witchel, ACM TOCS 2024, extending SOSP '21): the metalog, the
//! append path and the index, for one physical log in one term.
//!
//! # The protocol, in the order that makes it understandable
//!
//! Functions append to and read from **LogBooks** (§3), many of which share one physical log.
//! Every record gets a **seqnum**; all readers agree on the order, but each function sees its
//! own, monotonically advancing prefix of the log (sequential consistency, not linearizability).
//!
//! 1. **Shards and storage** (`storage.rs`). Each function node's engine owns a shard of the
//!    log: it numbers its new records with local ids and replicates them to the shard's
//!    `n_data` storage nodes, which report how far each shard has arrived (their progress
//!    vectors) every local cut interval.
//! 2. **The metalog** (`sequencer.rs`, `ids.rs`). Every global cut interval the primary
//!    sequencer appends the element-wise minimum of the progress vectors — the records on all
//!    their replicas — as a metalog entry: a cut, not a per-record order. Once a quorum of
//!    sequencers holds the entry it goes to every subscriber, each of which derives the same
//!    seqnums from it (Fig. 3: the delta set ordered by `(shard, local_id)`).
//! 3. **Index and reads** (`index.rs`, `engine.rs`). Index replicas on some engines apply the
//!    metalog and the tags storage nodes send; their version is a metalog position. A read
//!    carries the caller's position and waits until the index reaches it (Fig. 5), which gives
//!    read-your-appends and monotonic reads without synchronising replicas; a slow replica
//!    delays only the functions ahead of it (no slowdown cascade).
//! 4. **The library** (`client.rs`): a function's position advances with every call and is
//!    inherited by its children.
//! 5. **Auxiliary data** (`record.rs`): `logSetAuxData` caches a value beside a record in the
//!    calling node's record cache only (never replicated, lost on eviction); reads that find
//!    the record cached there return it.
//! 6. **Reconfiguration** (`controller.rs`, when `session_timeout_ns` is set): the controller
//!    seals the term when the primary sequencer or a storage node fails, and installs the next
//!    term; appends its final metalog does not cover fail, and the new term's seqnums and
//!    positions are above every old one. Nodes hold messages of a term they have not reached
//!    and drop those of a term they have left.
//!
//! # The libraries (§5): `boki-queue`, `boki-store`, `boki-flow`
//!
//! BokiQueue (`queue.rs`), BokiStore (`store.rs`) and BokiFlow (`flow.rs`) are client code
//! that runs inside functions and uses only the LogBook API (`logbook.rs`), on the same
//! engines, storage nodes and sequencers. Each is a catalogue entry of its own rather than a
//! switch of `boki`'s parameters, because each promises something different and so needs its
//! own entry fields: its checker level (`queue`, `si`, `exactly-once`), its mutants, and its
//! fault model — BokiFlow survives function-node crashes by re-execution (its point), while
//! BokiQueue and BokiStore refuse them (a crashed function's pop or commit record can take
//! effect unseen). They take `boki`'s parameters (BokiFlow adds its own), so a scenario moves
//! between the log and a library by its protocol name. A library record carries a
//! `record::Body` besides its data; workload writes and reads are the libraries' operations
//! (a push and a pop, an increment and a read of an object, a database write and read step).
//!
//! # Choices where the paper is silent, and what is left out
//!
//! - One physical log (the evaluation's default). Without a controller (`session_timeout_ns`
//!   0, the default, so a stalled run schedules nothing) a crashed primary sequencer or storage
//!   node stalls ordering for good. A restarted sequencer has lost its metalog (it lives in
//!   memory); a restarted storage node keeps its records (they are on disk). A crashed
//!   function node's engine keeps its state but misses what was sent to it while down, so
//!   after a restart its shard and index stall (functions placed there time out; BokiFlow
//!   re-executes them elsewhere); the controller does not watch engines, and scaling is not
//!   modelled. Auxiliary data are backed up on storage nodes only with `params.aux_data_on_storage` (Table 9's second row). A trim is a command in the
//!   next metalog entry (the primary's, lost with its term if sealed first: the call fails);
//!   it completes when its engine applies that entry, and storage keeps trimmed records.
//! - Failure detection is a session per sequencer and storage node: heartbeats every third of
//!   the timeout (ZooKeeper's, in Boki); the seal quorum is ⌈n/2⌉ of the term's n sequencers,
//!   as [C]'s `(n+1)/2`. Discarded appends fail (`DISCARDED` in [C]); nobody retries them.
//! - Shards are function nodes; shard `j` lives on storage nodes `D(j mod S) … D(j+n_data−1 mod S)`.
//!   The first `index_engines` engines hold the index (default: all); an engine without one
//!   asks the others round robin, and record reads pick a shard's replicas round robin ([C]).
//! - Storage nodes report progress every local cut interval when something arrived, and the
//!   primary cuts every global cut interval ([C]'s defaults are 1 ms; the paper's benchmark
//!   configurations 300 µs, our default). Quorum: the primary and ⌊n_meta/2⌋ backups ([C]).
//! - Storage nodes send every ordered record's tags to every index replica; replicas drop
//!   duplicates ([C]). A child's position is a copy of its parent's; nothing flows back.
//!
//! # Mutants (`protocol.mutants`)
//!
//! See [`MUTANTS`]: each removes one safeguard and names the anomaly it allows.

mod client;
mod controller;
mod engine;
mod flow;
mod ids;
mod index;
mod logbook;
mod msg;
mod queue;
mod record;
mod sequencer;
mod storage;
mod store;
mod subscription;
mod view;

pub use client::BokiContext;
pub use flow::{BokiFlow, FlowContext};
pub use ids::{Entry, Pos, position, seqnum, term_of};
pub use msg::Msg;
pub use queue::BokiQueue;
pub use store::{BokiStore, StoreContext};
pub use view::{ControllerView, SequencerView};

use crate::catalogue::{Entry as CatalogueEntry, Mutant, Profile, SeriesStyle};
use crate::{FaultModel, Model, Support, metrics, parse_params};
use causim_checkers::Level;
use causim_sim::config::TopologyConfig;
use causim_sim::error::FieldError;
use causim_sim::node::{Node, NodeId, Outbox};
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::Time;
use client::Client;
use controller::{Controller, Phase};
use engine::Engine;
use index::Index;
use proptest::prelude::*;
use sequencer::{Sequencer, Session};
use serde::Deserialize;
use std::collections::BTreeMap;
use storage::Storage;

/// Scenario parameters (`protocol.params`); every field has the default shown.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct BokiParams {
    /// Storage nodes (`D0`, `D1`, …). Default 3.
    #[serde(default = "three")]
    pub storage_nodes: u32,
    /// Storage replicas per shard. Default 3.
    #[serde(default = "three")]
    pub n_data: u32,
    /// Sequencers of each term's metalog (`Q0` … are the first term's, `Q0` its primary). Default 3.
    #[serde(default = "three")]
    pub n_meta: u32,
    /// Engines that hold an index replica (the first ones); 0: every engine. Default 0.
    #[serde(default)]
    pub index_engines: u32,
    /// How often a storage node reports its progress. Default 300 µs.
    #[serde(default = "cut_interval")]
    pub local_cut_interval_ns: Time,
    /// How often the primary sequencer cuts. Default 300 µs.
    #[serde(default = "cut_interval")]
    pub global_cut_interval_ns: Time,
    /// Records each engine's cache holds (LRU). Default 1,000,000 (1 GB of 1 KB records).
    #[serde(default = "cache_records")]
    pub cache_records: u32,
    /// A session expires when the controller has not heard from its node for this long; 0:
    /// no controller, no reconfiguration. Default 0.
    #[serde(default)]
    pub session_timeout_ns: Time,
    /// From a sealed term to the next one's installation: the controller's coordination writes
    /// (≈ 4 sequential ZooKeeper writes, §5.3; the paper's whole reconfiguration took 15.7 ms
    /// with n_meta = 3). Default 12 ms.
    #[serde(default = "reconfiguration_delay")]
    pub reconfiguration_delay_ns: Time,
    /// Sequencers provisioned beyond the term's `n_meta`, idle until a term picks them
    /// (Fig. 17: 8 provisioned, 3 active). Default 0.
    #[serde(default)]
    pub spare_sequencers: u32,
    /// The controller also seals each term this long after installing it, failure or not
    /// (Fig. 17's reconfigurations on command), and the next term takes `n_meta` live
    /// sequencers picked at random; 0: only on failures. Needs the controller. Default 0.
    #[serde(default)]
    pub reconfigure_every_ns: Time,
    /// Of the reads on an engine holding an index, the share (in percent) it sends to another
    /// index replica all the same (Table 8's remote LogBook engines; [C]'s
    /// `slog_engine_prob_remote_index`). Default 0.
    #[serde(default)]
    pub remote_read_percent: u32,
    /// `logSetAuxData` also stores the value on the record's storage nodes, which return it
    /// with the record on a cache miss (Table 9's second row, "auxdata also backed up on
    /// storage nodes"). Default false: auxiliary data live in record caches only.
    #[serde(default)]
    pub aux_data_on_storage: bool,
}

fn three() -> u32 {
    3
}
fn cut_interval() -> Time {
    300_000
}
fn cache_records() -> u32 {
    1_000_000
}
fn reconfiguration_delay() -> Time {
    12_000_000
}

pub const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "no_inheritance",
        about: "a child function starts at metalog position 0 instead of its parent's, so an index behind the parent can \
                answer it and the child misses records its parent appended or saw (parent→child inheritance broken)",
    },
    Mutant {
        name: "read_behind_position",
        about: "an index replica answers a read at once, even when its version is behind the caller's metalog position, \
                so a function can miss its own append or an older read's record (read-your-appends, monotonic reads broken)",
    },
    Mutant {
        name: "order_before_durability",
        about: "the primary cuts at the most advanced storage replica of each shard instead of the least, so an entry \
                orders records some replicas do not hold yet and a read sent there finds an ordered record lost",
    },
    Mutant {
        name: "seal_loses_entries",
        about: "the controller ends a sealed term at the shortest metalog copy of the seal quorum instead of the longest, \
                so an entry some subscribers applied is missing from the final metalog: their records are ordered for \
                some nodes and discarded (their appends failed) for others",
    },
    Mutant {
        name: "new_term_reuses_seqnums",
        about: "seqnums leave the term out of their high bits, so the new term numbers its records from the same \
                seqnums as the old one: two records with one seqnum",
    },
];

/// Boki relies on reliable RPC; it recovers from crashes of storage nodes and sequencers by
/// sealing the term (§2.10-§2.11).
const FAULTS: FaultModel = FaultModel {
    drop_partition: Support::Outside(
        "Boki relies on reliable RPC: nothing is retransmitted, so a dropped replication, progress or metalog message stalls a shard or a subscriber forever",
    ),
    loss: Support::Outside(
        "Boki relies on reliable RPC: a lost replication, progress or metalog message stalls a shard or a subscriber forever",
    ),
    crash: Support::Survives(
        "with params.session_timeout_ns > 0 the controller seals the term of a failed storage node or primary sequencer and installs the next (§2.10); without it ordering stalls but stays safe",
    ),
    restart: Support::Survives("a restarted sequencer has lost its metalog and catches up; a restarted storage node keeps its records"),
    crashes_max: usize::MAX,
};

/// The fault model of a library on the log whose function-node crashes are outside its
/// paper's claims (`why`): crashes are refused (the log's own crashes are fuzzed under `boki`),
/// and message loss as for the log.
const fn library_faults(why: &'static str) -> FaultModel {
    FaultModel { crash: Support::Outside(why), restart: Support::Outside(why), crashes_max: 0, ..FAULTS }
}

impl Model for Boki {
    const ENTRY: CatalogueEntry = CatalogueEntry {
        name: "boki",
        about: "Boki's shared log: LogBooks on a metalog of cuts, replicated storage shards, and unsynchronised index \
                replicas read at the caller's metalog position",
        level: Level::SharedLog,
        mutants: MUTANTS,
        profile: Profile {
            observations: &[metrics::LOG_READ_HIT_NS, metrics::LOG_READ_MISS_NS, metrics::LOG_READ_REMOTE_NS],
            final_metrics: &[metrics::METALOG_ENTRIES],
            ..Profile::PLAIN
        },
        faults: FAULTS,
        series: &[SeriesStyle { label: "Boki", colour: (204, 121, 167) }],
    };

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        let params: BokiParams = parse_params(params)?;
        let field = |name: &str, msg: String| Err(FieldError::new(format!("params.{name}"), msg));
        if params.storage_nodes == 0 {
            return field("storage_nodes", "a shared log needs at least one storage node".into());
        }
        if params.n_data == 0 || params.n_data > params.storage_nodes {
            return field("n_data", format!("must be between 1 and storage_nodes ({}), got {}", params.storage_nodes, params.n_data));
        }
        if params.n_meta == 0 || params.n_meta > 16 {
            return field("n_meta", format!("must be between 1 and 16, got {}", params.n_meta));
        }
        if params.n_meta + params.spare_sequencers > 16 {
            return field(
                "spare_sequencers",
                format!("n_meta + spare_sequencers must be at most 16, got {}", params.n_meta + params.spare_sequencers),
            );
        }
        if params.reconfigure_every_ns > 0 && params.session_timeout_ns == 0 {
            return field("reconfigure_every_ns", "reconfigurations need the controller: set params.session_timeout_ns too".into());
        }
        if params.remote_read_percent > 100 {
            return field("remote_read_percent", format!("must be a percentage (0 to 100), got {}", params.remote_read_percent));
        }
        if params.index_engines > topology.servers {
            return field(
                "index_engines",
                format!("must be at most the function nodes (topology.servers = {}), got {}", topology.servers, params.index_engines),
            );
        }
        if params.session_timeout_ns > 0 && params.session_timeout_ns < 3 {
            return field("session_timeout_ns", "must be 0 (no controller) or at least 3 ns".into());
        }
        for (name, v) in
            [("local_cut_interval_ns", params.local_cut_interval_ns), ("global_cut_interval_ns", params.global_cut_interval_ns)]
        {
            if v == 0 {
                return field(name, "a cut interval must be positive".into());
            }
        }
        Ok(Boki {
            function_nodes: topology.servers,
            params,
            no_inheritance: mutants.contains(&"no_inheritance"),
            read_behind_position: mutants.contains(&"read_behind_position"),
            order_before_durability: mutants.contains(&"order_before_durability"),
            seal_loses_entries: mutants.contains(&"seal_loses_entries"),
            new_term_reuses_seqnums: mutants.contains(&"new_term_reuses_seqnums"),
        })
    }

    /// The log's shared parameters, then (for the log itself) reconfigurations on command
    /// among spare sequencers and remote reads: a third of the cases with the controller
    /// seal each term 5–30 ms after installing it (the fuzzer's delays reach milliseconds per
    /// hop: a shorter term could order nothing).
    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        let every = prop_oneof![2 => Just(0u64), 1 => 5u64..30];
        (Boki::shared_fuzz_params(), prop::sample::select(vec![0u32, 0, 2]), every, prop::sample::select(vec![0u32, 0, 50]))
            .prop_map(|(mut params, spares, every, remote)| {
                params["spare_sequencers"] = spares.into();
                params["remote_read_percent"] = remote.into();
                if params.get("session_timeout_ns").is_some() {
                    params["reconfigure_every_ns"] = (every * 1_000_000).into();
                }
                params
            })
            .boxed()
    }
}

/// The nodes' timers: a storage node's progress report, the primary's cut, a session's
/// heartbeat, the controller's session check and its installation of the next term, and a
/// BokiFlow function's re-execution timeout.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Timer {
    LocalCut,
    GlobalCut,
    Heartbeat,
    Check,
    Install,
    /// The controller's next reconfiguration on command.
    Reconfigure,
    /// BokiFlow: a function's re-execution timeout, and its next try of a busy lock.
    Reexecute,
    LockRetry,
}

/// Every role of Boki's shared log.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BokiNode {
    Engine(Box<Engine>),
    Storage(Box<Storage>),
    Sequencer(Box<Sequencer>),
    Controller(Box<Controller>),
    Client(Box<Client>),
    /// A function running BokiQueue.
    Queue(Box<queue::QueueClient>),
    /// A function running a BokiStore transaction.
    Store(Box<store::StoreClient>),
    /// A function running BokiFlow steps.
    Flow(Box<flow::FlowClient>),
    /// BokiFlow's external database.
    Db(Box<flow::Db>),
}

impl BokiNode {
    /// The node's term and its messages held for later terms (none for functions and the
    /// controller).
    fn term_and_held(&mut self) -> Option<(u64, &mut Vec<(NodeId, Msg)>)> {
        match self {
            BokiNode::Engine(e) => Some((e.term, &mut e.held)),
            BokiNode::Storage(s) => Some((s.term, &mut s.held)),
            BokiNode::Sequencer(q) => Some((q.term, &mut q.held)),
            BokiNode::Controller(_)
            | BokiNode::Client(_)
            | BokiNode::Queue(_)
            | BokiNode::Store(_)
            | BokiNode::Flow(_)
            | BokiNode::Db(_) => None,
        }
    }

    /// The workflow context a finished function hands on (any function role).
    fn library_context(self) -> BokiContext {
        match self {
            BokiNode::Client(c) => c.ctx,
            BokiNode::Queue(q) => q.ctx(),
            other => unreachable!("{other:?} is not a function"),
        }
    }

    fn deliver(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        match (self, msg) {
            (BokiNode::Engine(e), Msg::Append { book, tags, data, body }) => e.on_append(from, book, tags, data, body, out),
            (BokiNode::Engine(e), Msg::SetAux { seqnum, aux }) => e.on_set_aux(seqnum, aux, out),
            (BokiNode::Storage(s), Msg::StoreAux { seqnum, aux }) => s.on_store_aux(seqnum, aux),
            (BokiNode::Engine(e), Msg::Trim { book, until }) => e.on_trim(from, book, until, out),
            (BokiNode::Sequencer(q), Msg::TrimCommand { term, trim }) => q.on_trim(now, term, trim, out),
            (BokiNode::Engine(e), Msg::Read { book, tag, dir, bound, pos }) => {
                let query = msg::Query { id: 0, client: from, origin: e.id, book, tag, dir, bound, pos };
                e.on_read(query, out)
            }
            (BokiNode::Engine(e), Msg::Metalog { entry }) => e.on_metalog(entry, out),
            (BokiNode::Engine(e), Msg::IndexData { term, records }) => e.on_index_data(term, records, out),
            (BokiNode::Engine(e), Msg::IndexQuery(q)) => e.on_query(q, out),
            (BokiNode::Engine(e), Msg::Answered(a)) => e.on_answered(a, out),
            (BokiNode::Engine(e), Msg::NewTerm(c)) => e.on_new_term(&c, out),
            (BokiNode::Storage(s), Msg::Replicate(record)) => s.on_replicate(now, record, out),
            (BokiNode::Storage(s), Msg::Metalog { entry }) => s.on_metalog(entry, out),
            (BokiNode::Storage(s), Msg::Fetch { seqnum, answer, origin }) => s.on_fetch(seqnum, answer, origin, out),
            (BokiNode::Storage(s), Msg::NewTerm(c)) => s.on_new_term(now, &c, out),
            (BokiNode::Sequencer(q), Msg::Progress { term, shards }) => q.on_progress(now, from, term, shards, out),
            (BokiNode::Sequencer(q), Msg::MetaReplicate { entry }) => q.on_meta_replicate(from, entry, out),
            (BokiNode::Sequencer(q), Msg::MetaAck { term, entries }) => q.on_meta_ack(now, from, term, entries, out),
            (BokiNode::Sequencer(q), Msg::Seal { term }) => q.on_seal(from, term, out),
            (BokiNode::Sequencer(q), Msg::NewTerm(c)) => q.on_new_term(now, &c, out),
            (BokiNode::Controller(c), Msg::Alive { incarnation }) => c.on_alive(now, from, incarnation, out),
            (BokiNode::Controller(c), Msg::Sealed { term, metalog }) => c.on_sealed(from, term, metalog, out),
            (BokiNode::Client(c), msg) => c.on_message(now, msg, out),
            (BokiNode::Queue(q), msg) => q.on_message(now, msg, out),
            (BokiNode::Store(s), msg) => s.on_message(now, msg, out),
            (BokiNode::Flow(f), msg) => f.on_message(now, msg, out),
            (BokiNode::Db(d), msg) => d.on_message(from, msg, out),
            (node, msg) => unreachable!("{msg:?} is not for {node:?}"),
        }
    }
}

impl Node for BokiNode {
    type Msg = Msg;
    type Timer = Timer;

    fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        match self {
            BokiNode::Storage(s) => s.start(now, out),
            BokiNode::Sequencer(q) => q.start(now, out),
            BokiNode::Controller(c) => c.start(now, out),
            BokiNode::Client(c) => c.issue_next(now, out),
            BokiNode::Queue(q) => q.issue_next(now, out),
            BokiNode::Store(s) => s.on_start(now, out),
            BokiNode::Flow(f) => f.on_start(now, out),
            BokiNode::Db(_) => {}
            BokiNode::Engine(_) => {}
        }
    }

    fn on_restart(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        match self {
            BokiNode::Storage(s) => s.restart(now, out),
            BokiNode::Sequencer(q) => q.restart(now, out),
            BokiNode::Controller(c) => c.resume(out),
            // Engines keep their state; they miss what was sent while they were down.
            node => node.on_start(now, out),
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        let new_term = matches!(msg, Msg::NewTerm(_));
        if let (Some(t), Some((term, held))) = (msg.term(), self.term_and_held()) {
            if t > term {
                held.push((from, msg));
                return;
            }
            // Of a term the node has left: the final metalog covered it (an index may still
            // need the tags of the old term's last records); or a configuration it has.
            if t < term && !matches!(msg, Msg::IndexData { .. }) {
                return;
            }
        }
        self.deliver(now, from, msg, out);
        if new_term && let Some((term, held)) = self.term_and_held() {
            let (now_due, later): (Vec<_>, Vec<_>) = std::mem::take(held).into_iter().partition(|(_, m)| m.term() <= Some(term));
            *held = later;
            for (from, msg) in now_due {
                self.on_message(now, from, msg, out);
            }
        }
    }

    fn on_timer(&mut self, now: Time, timer: Timer, out: &mut Outbox<Msg, Timer>) {
        match (self, timer) {
            (BokiNode::Storage(s), Timer::LocalCut) => s.on_local_cut(out),
            (BokiNode::Sequencer(q), Timer::GlobalCut) => q.on_global_cut(now, out),
            (BokiNode::Storage(s), Timer::Heartbeat) => s.session.beat(out),
            (BokiNode::Sequencer(q), Timer::Heartbeat) => q.session.beat(out),
            (BokiNode::Controller(c), Timer::Check) => c.on_check(now, out),
            (BokiNode::Controller(c), Timer::Install) => c.on_install(now, out),
            (BokiNode::Controller(c), Timer::Reconfigure) => c.on_reconfigure(out),
            (BokiNode::Flow(f), Timer::Reexecute) => f.on_timeout(out),
            (BokiNode::Flow(f), Timer::LockRetry) => f.on_lock_retry(out),
            (node, timer) => unreachable!("{timer:?} is not for {node:?}"),
        }
    }

    fn check_invariants(&self) -> Result<(), String> {
        match self {
            BokiNode::Engine(e) => e.check(),
            BokiNode::Sequencer(q) => q.check(),
            BokiNode::Storage(s) => s.metalog.check(),
            BokiNode::Controller(_)
            | BokiNode::Client(_)
            | BokiNode::Queue(_)
            | BokiNode::Store(_)
            | BokiNode::Flow(_)
            | BokiNode::Db(_) => Ok(()),
        }
    }
}

/// Boki's shared log as the engine sees it.
#[derive(Clone, Debug)]
pub struct Boki {
    pub function_nodes: u32,
    pub params: BokiParams,
    pub no_inheritance: bool,
    pub read_behind_position: bool,
    pub order_before_durability: bool,
    pub seal_loses_entries: bool,
    pub new_term_reuses_seqnums: bool,
}

impl Boki {
    /// The log's parameters as every Boki protocol draws them (the libraries add their own).
    /// Half the cases run the controller, with a short session timeout and coordination delay:
    /// slow links then expire sessions and seal terms within a few milliseconds of simulated
    /// time, which is how fuzzing reaches the seal (the fuzzer crashes only function nodes,
    /// which the controller does not watch). Its heartbeats keep a stalled run busy until the
    /// case's time limit.
    pub(super) fn shared_fuzz_params() -> BoxedStrategy<serde_json::Value> {
        let controller = prop_oneof![Just((0u64, 0u64)), (2u64..8, 1u64..6)];
        (3u32..5, 1u32..4, prop::sample::select(vec![1u32, 3, 5]), 0u32..3, 1u64..8, 1u64..8, controller)
            .prop_map(|(storage, n_data, n_meta, index_engines, local, global, (timeout, reconfiguration))| {
                let mut params = serde_json::json!({
                    "storage_nodes": storage, "n_data": n_data.min(storage), "n_meta": n_meta, "index_engines": index_engines,
                    "local_cut_interval_ns": local * 100_000, "global_cut_interval_ns": global * 100_000,
                });
                if timeout > 0 {
                    params["session_timeout_ns"] = (timeout * 1_000_000).into();
                    params["reconfiguration_delay_ns"] = (reconfiguration * 1_000_000).into();
                }
                params
            })
            .boxed()
    }

    /// Fixed node ids: engines first (`S0…`), then storage nodes (`D0…`), then sequencers (`Q0…`).
    fn engine_id(&self, i: u32) -> NodeId {
        NodeId::fixed(i as usize)
    }
    fn storage_id(&self, j: u32) -> NodeId {
        NodeId::fixed((self.function_nodes + j) as usize)
    }
    fn sequencer_id(&self, k: u32) -> NodeId {
        NodeId::fixed((self.function_nodes + self.params.storage_nodes + k) as usize)
    }
    fn controller_id(&self) -> NodeId {
        NodeId::fixed((self.function_nodes + self.params.storage_nodes + self.sequencers()) as usize)
    }

    /// The sequencers provisioned: the first term's `n_meta` and the spares.
    fn sequencers(&self) -> u32 {
        self.params.n_meta + self.params.spare_sequencers
    }

    /// The session every sequencer and storage node keeps with the controller, if there is one.
    fn session(&self) -> Session {
        let timeout = self.params.session_timeout_ns;
        Session { controller: (timeout > 0).then(|| self.controller_id()), every_ns: timeout / 3, incarnation: 0 }
    }

    /// The storage replicas of each shard (one shard per function node).
    fn replicas(&self) -> Vec<Vec<NodeId>> {
        let s = self.params.storage_nodes;
        (0..self.function_nodes).map(|j| (0..self.params.n_data).map(|r| self.storage_id((j + r) % s)).collect()).collect()
    }

    fn index_engines(&self) -> Vec<NodeId> {
        let n = if self.params.index_engines == 0 { self.function_nodes } else { self.params.index_engines };
        (0..n).map(|i| self.engine_id(i)).collect()
    }
}

impl Protocol for Boki {
    type Node = BokiNode;
    type Context = BokiContext;

    fn fixed_nodes(&self) -> Vec<FixedNode<BokiNode>> {
        let replicas = self.replicas();
        let index_engines = self.index_engines();
        let shards = self.function_nodes as usize;
        let primary = self.sequencer_id(0);
        let mut nodes = Vec::new();
        for i in 0..self.function_nodes {
            let id = self.engine_id(i);
            let engine = Engine {
                id,
                shard: i,
                shard_count: shards,
                term: 0,
                term_bits: !self.new_term_reuses_seqnums,
                replicas: replicas.clone(),
                past_replicas: BTreeMap::new(),
                failed: Default::default(),
                index_engines: index_engines.clone(),
                index: index_engines.contains(&id).then(|| Index::new(0, !self.new_term_reuses_seqnums)),
                remote_read_percent: self.params.remote_read_percent.into(),
                read_behind_position: self.read_behind_position,
                next_local_id: 0,
                pending_appends: BTreeMap::new(),
                primary,
                pending_trims: BTreeMap::new(),
                next_trim: 0,
                metalog: Default::default(),
                waiting: Vec::new(),
                cache: BTreeMap::new(),
                cache_order: Default::default(),
                cache_records: self.params.cache_records as usize,
                uses: 0,
                round_robin: i as u64,
                next_read: 0,
                reads: BTreeMap::new(),
                answered_behind: 0,
                held: Vec::new(),
                aux_on_storage: self.params.aux_data_on_storage,
            };
            nodes.push(FixedNode {
                name: format!("S{i}"),
                machine: format!("S{i}"),
                hosts_workers: true,
                node: BokiNode::Engine(Box::new(engine)),
            });
        }
        for j in 0..self.params.storage_nodes {
            let id = self.storage_id(j);
            let stored = (0..self.function_nodes).filter(|&shard| replicas[shard as usize].contains(&id)).collect();
            let storage = Storage {
                id,
                primary,
                index_engines: index_engines.clone(),
                shards: stored,
                shard_count: shards,
                term: 0,
                term_bits: !self.new_term_reuses_seqnums,
                local_cut_interval_ns: self.params.local_cut_interval_ns,
                pending: BTreeMap::new(),
                progress: BTreeMap::new(),
                dirty: false,
                timer_set: false,
                metalog: Default::default(),
                live: BTreeMap::new(),
                waiting_reads: Vec::new(),
                session: self.session(),
                held: Vec::new(),
                aux: BTreeMap::new(),
            };
            nodes.push(FixedNode {
                name: format!("D{j}"),
                machine: format!("D{j}"),
                hosts_workers: false,
                node: BokiNode::Storage(Box::new(storage)),
            });
        }
        let subscribers: Vec<NodeId> =
            (0..self.function_nodes).map(|i| self.engine_id(i)).chain((0..self.params.storage_nodes).map(|j| self.storage_id(j))).collect();
        for k in 0..self.sequencers() {
            let sequencer = Sequencer {
                id: self.sequencer_id(k),
                term: 0,
                primary: k == 0,
                backups: if k == 0 { (1..self.params.n_meta).map(|b| self.sequencer_id(b)).collect() } else { Vec::new() },
                subscribers: subscribers.clone(),
                replicas: if k == 0 { replicas.clone() } else { Vec::new() },
                global_cut_interval_ns: self.params.global_cut_interval_ns,
                order_before_durability: self.order_before_durability,
                metalog: Vec::new(),
                trims: Vec::new(),
                replicated: 0,
                acks: BTreeMap::new(),
                reported: BTreeMap::new(),
                timer_set: false,
                sealed: false,
                amnesiac: false,
                session: self.session(),
                held: Vec::new(),
            };
            nodes.push(FixedNode {
                name: format!("Q{k}"),
                machine: format!("Q{k}"),
                hosts_workers: false,
                node: BokiNode::Sequencer(Box::new(sequencer)),
            });
        }
        if self.params.session_timeout_ns > 0 {
            let controller = Controller {
                engines: (0..self.function_nodes).map(|i| self.engine_id(i)).collect(),
                storage_nodes: (0..self.params.storage_nodes).map(|j| self.storage_id(j)).collect(),
                sequencers: (0..self.sequencers()).map(|k| self.sequencer_id(k)).collect(),
                n_meta: self.params.n_meta as usize,
                n_data: self.params.n_data,
                session_timeout_ns: self.params.session_timeout_ns,
                reconfiguration_delay_ns: self.params.reconfiguration_delay_ns,
                reconfigure_every_ns: self.params.reconfigure_every_ns,
                seal_loses_entries: self.seal_loses_entries,
                config: msg::Config {
                    term: 0,
                    sealed: Vec::new(),
                    primary,
                    backups: (1..self.params.n_meta).map(|b| self.sequencer_id(b)).collect(),
                    replicas: replicas.clone(),
                    failed: Vec::new(),
                },
                sessions: BTreeMap::new(),
                installed: BTreeMap::new(),
                installs: Vec::new(),
                phase: Phase::Normal,
            };
            nodes.push(FixedNode {
                name: "C0".into(),
                machine: "C0".into(),
                hosts_workers: false,
                node: BokiNode::Controller(Box::new(controller)),
            });
        }
        nodes
    }

    fn new_context(&self) -> BokiContext {
        BokiContext::default()
    }

    fn spawn_function(&self, start: FunctionStart<'_, BokiContext>) -> BokiNode {
        let ctx = if self.no_inheritance { BokiContext::default() } else { start.context };
        BokiNode::Client(Box::new(Client { engine: start.colocated[0], ops: start.ops, next: 0, ctx, invoked_at: start.now }))
    }

    fn finish_function(&self, node: BokiNode) -> BokiContext {
        node.library_context()
    }

    fn join_contexts(&self, contexts: Vec<BokiContext>) -> BokiContext {
        BokiContext { pos: contexts.iter().map(|c| c.pos).max().unwrap_or_default() }
    }

    /// Table 3's metalog entry rate: the current term's metalog, as long as any copy is.
    fn final_metrics(&self, nodes: &[&BokiNode]) -> Vec<(String, f64)> {
        let entries = nodes.iter().filter_map(|n| if let BokiNode::Sequencer(q) = n { Some(q.metalog.len()) } else { None }).max();
        entries.map(|e| (metrics::METALOG_ENTRIES.to_string(), e as f64)).into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causim_sim::dist::DurationDist;

    fn build(params: serde_json::Value) -> Result<Boki, FieldError> {
        Boki::build(&params, &[], &TopologyConfig::new(4, DurationDist::Constant { ns: 1 }))
    }

    #[test]
    fn parameters_out_of_range_are_refused_with_their_field() {
        for (params, field) in [
            (serde_json::json!({"n_meta": 3, "spare_sequencers": 14}), "params.spare_sequencers"),
            (serde_json::json!({"reconfigure_every_ns": 1_000_000}), "params.reconfigure_every_ns"),
            (serde_json::json!({"remote_read_percent": 101}), "params.remote_read_percent"),
            (serde_json::json!({"n_data": 4}), "params.n_data"),
        ] {
            let err = build(params.clone()).map(|_| ()).expect_err(&params.to_string());
            assert_eq!(err.path, field, "{params}: {}", err.message);
        }
        let fig17 = serde_json::json!({"spare_sequencers": 5, "session_timeout_ns": 10_000_000, "reconfigure_every_ns": 1_000_000_000});
        assert!(build(fig17).is_ok());
    }
}
