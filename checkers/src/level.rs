//! Consistency levels and the anomalies each one forbids.

use crate::anomaly::Anomaly;
use serde::{Serialize, Serializer};
use std::fmt;

/// A consistency level `causim check --level` can check.
///
/// The non-transactional levels (session guarantees, `cc`, `ccv`, `cm`) judge each *operation*:
/// a transaction is flattened into its operations, in program order, within its session, so
/// these levels do not require a transaction's reads to come from one snapshot (use `ra` or
/// `tcc` for that). The transactional levels (`rc`, `rc-plume`, `ra`, `tcc`) judge whole
/// transactions, as Plume and Biswas & Enea do. `linearizable` alone judges real time: each key is a read/write
/// register of single-operation transactions. Every level includes `well-formed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// Reads see real, committed, final writes; a transaction reads its own writes.
    WellFormed,
    /// A session sees its own earlier writes.
    ReadYourWrites,
    /// A session never reads a value older than one it has already read.
    MonotonicReads,
    /// A reader that sees a session's later write also sees (or overwrites) its earlier writes.
    MonotonicWrites,
    /// A reader that sees a write also sees what the writing session had read before it.
    WritesFollowReads,
    /// All four session guarantees.
    Session,
    /// Causal consistency (POPL'17 CC): every read is explained by its causal past.
    Cc,
    /// Causal convergence (POPL'17 CCv, causal+): CC with one arbitration order for all.
    Ccv,
    /// Causal memory (POPL'17 CM): CC where each session's view is consistent on its own.
    Cm,
    /// Read committed (Biswas & Enea's axioms; Plume's paper: no TAP-a…i).
    Rc,
    /// Read committed as Plume's checker decides it: well-formedness judged against the nearest
    /// earlier operation on the key, CyclicCO, and the read-committed axiom for reads of
    /// initial values only (see `checkers/README.md`).
    RcPlume,
    /// Read atomic (Plume RA, TAP-a…l).
    Ra,
    /// Transactional causal consistency (Plume TCC, TAP-a…n).
    Tcc,
    /// Snapshot isolation (Cerone, Bernardi & Gotsman's prefix + conflict axioms; Adya's PL-SI):
    /// each transaction reads one snapshot of committed transactions, and of two that write one
    /// key, the later to commit has the earlier in its snapshot. Write skew is allowed.
    Si,
    /// Linearizability (Herlihy & Wing) of each key as a read/write register, from the
    /// real-time intervals of single-operation transactions.
    Linearizable,
    /// Strict serializability: one order of the committed transactions that respects real time
    /// and in which each reads the latest earlier writes (`src/sser.rs`).
    StrictSerializable,
    /// Cache-free equivalence (MuCache's Theorem 1): the requests' call trees, each cache hit
    /// replaced by a copy of the call that filled the entry, are explained by one execution
    /// without caches. Judges the `call` fields only; not in [`Level::ALL`], whose levels judge
    /// plain histories.
    CacheFree,
    /// A shared log's guarantees (Boki): one total order of records that every reader agrees
    /// on, reads correct against the prefix that served them, and per-function
    /// read-your-appends, monotonic reads and parent→child inheritance. Judges log calls only.
    SharedLog,
    /// Queues on a shared log (BokiQueue): each shard a FIFO linearized by log order. A pop
    /// returns the oldest message of its shard pushed before it and not yet delivered, or
    /// EMPTY iff there is none. Judges log calls only (pushes and pops are records).
    Queue,
    /// Exactly-once workflow steps on a shared log (BokiFlow): every step's database write
    /// takes effect once, with the version of the step's first log record, however often the
    /// step runs. Judges step lines (log calls and the database's answers).
    ExactlyOnce,
    /// Log-based locks (BokiFlow, Fig. 7): at most one holder at any point of a lock's chain.
    /// Judges lock records only; `exactly-once` judges them too.
    LockSafety,
}

impl Level {
    pub const ALL: [Level; 14] = [
        Level::WellFormed,
        Level::ReadYourWrites,
        Level::MonotonicReads,
        Level::MonotonicWrites,
        Level::WritesFollowReads,
        Level::Session,
        Level::Cc,
        Level::Ccv,
        Level::Cm,
        Level::Rc,
        Level::RcPlume,
        Level::Ra,
        Level::Tcc,
        Level::Linearizable,
    ];

    /// The snapshot-isolation level: transactional, but not in [`Level::ALL`] (its checker is
    /// `src/si.rs`, with a search where the history does not fix the order of writes).
    pub const SNAPSHOT: [Level; 1] = [Level::Si];

    /// Strict serializability: transactional and timed, not in [`Level::ALL`] (its checker is
    /// `src/sser.rs`, a search over whole transactions).
    pub const STRICT: [Level; 1] = [Level::StrictSerializable];

    /// The levels that judge log calls (appends and reads of LogBooks) rather than keys; not in
    /// [`Level::ALL`], which lists the key-value levels.
    pub const LOG: [Level; 4] = [Level::SharedLog, Level::Queue, Level::ExactlyOnce, Level::LockSafety];

    /// The levels that ignore real time (all but `linearizable`, the last of [`Level::ALL`]):
    /// they judge any history, with or without `invoke_ns`/`complete_ns`.
    pub const UNTIMED: [Level; 13] = {
        let mut out = [Level::WellFormed; 13];
        let mut i = 0;
        while i < out.len() {
            out[i] = Level::ALL[i];
            i += 1;
        }
        assert!(matches!(Level::ALL[13], Level::Linearizable), "linearizable is the one timed level, listed last");
        out
    };

    /// The levels that judge call trees (histories with `call` fields) rather than plain
    /// histories.
    pub const CALL_TREES: [Level; 1] = [Level::CacheFree];

    /// Every level: [`Level::ALL`], [`Level::SNAPSHOT`], [`Level::STRICT`], then
    /// [`Level::CALL_TREES`].
    pub fn every() -> impl Iterator<Item = Level> {
        Level::ALL.into_iter().chain(Level::SNAPSHOT).chain(Level::STRICT).chain(Level::CALL_TREES)
    }

    /// The name used on the command line and in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Level::WellFormed => "well-formed",
            Level::ReadYourWrites => "read-your-writes",
            Level::MonotonicReads => "monotonic-reads",
            Level::MonotonicWrites => "monotonic-writes",
            Level::WritesFollowReads => "writes-follow-reads",
            Level::Session => "session",
            Level::Cc => "cc",
            Level::Ccv => "ccv",
            Level::Cm => "cm",
            Level::Rc => "rc",
            Level::RcPlume => "rc-plume",
            Level::Ra => "ra",
            Level::Tcc => "tcc",
            Level::Si => "si",
            Level::Linearizable => "linearizable",
            Level::StrictSerializable => "strict-serializable",
            Level::CacheFree => "cache-free",
            Level::SharedLog => "shared-log",
            Level::Queue => "queue",
            Level::ExactlyOnce => "exactly-once",
            Level::LockSafety => "lock-safety",
        }
    }

    /// A longer description for reports.
    pub fn title(self) -> &'static str {
        match self {
            Level::WellFormed => "well-formedness",
            Level::ReadYourWrites => "read your writes",
            Level::MonotonicReads => "monotonic reads",
            Level::MonotonicWrites => "monotonic writes",
            Level::WritesFollowReads => "writes follow reads",
            Level::Session => "session guarantees",
            Level::Cc => "causal consistency",
            Level::Ccv => "causal convergence (causal+)",
            Level::Cm => "causal memory",
            Level::Rc => "read committed",
            Level::RcPlume => "read committed, as Plume's checker decides it",
            Level::Ra => "read atomic",
            Level::Tcc => "transactional causal consistency",
            Level::Si => "snapshot isolation",
            Level::Linearizable => "linearizability, per key",
            Level::StrictSerializable => "strict serializability of transactions",
            Level::CacheFree => "equivalence to a cache-free execution",
            Level::SharedLog => "shared-log order, prefix reads and session guarantees",
            Level::Queue => "per-shard FIFO queues linearized by log order",
            Level::ExactlyOnce => "exactly-once workflow steps and safe locks",
            Level::LockSafety => "mutual exclusion of log-based locks",
        }
    }

    /// Parse a level name or alias (`causal+` = `ccv`, `causal` = `cc`, …).
    pub fn parse(s: &str) -> Option<Level> {
        let s = s.trim().to_ascii_lowercase();
        Some(match s.as_str() {
            "well-formed" | "wellformed" | "wf" => Level::WellFormed,
            "read-your-writes" | "ryw" => Level::ReadYourWrites,
            "monotonic-reads" | "mr" => Level::MonotonicReads,
            "monotonic-writes" | "mw" => Level::MonotonicWrites,
            "writes-follow-reads" | "wfr" => Level::WritesFollowReads,
            "session" | "session-guarantees" => Level::Session,
            "cc" | "causal" => Level::Cc,
            "ccv" | "causal+" | "causal-plus" | "causal-convergence" => Level::Ccv,
            "cm" | "causal-memory" => Level::Cm,
            "rc" | "read-committed" | "rc-biswas-enea" => Level::Rc,
            "rc-plume" | "plume-rc" => Level::RcPlume,
            "ra" | "read-atomic" => Level::Ra,
            "tcc" | "transactional-causal" | "transactional-causal-consistency" => Level::Tcc,
            "si" | "snapshot-isolation" => Level::Si,
            "linearizable" | "linearizability" => Level::Linearizable,
            "strict-serializable" | "strict-serializability" => Level::StrictSerializable,
            "cache-free" | "cachefree" => Level::CacheFree,
            "shared-log" | "log" => Level::SharedLog,
            "queue" | "fifo-queue" => Level::Queue,
            "exactly-once" | "exactly_once" => Level::ExactlyOnce,
            "lock-safety" | "lock" => Level::LockSafety,
            _ => return None,
        })
    }

    /// Whether the level judges whole transactions (rather than single operations).
    pub fn is_transactional(self) -> bool {
        matches!(self, Level::Rc | Level::RcPlume | Level::Ra | Level::Tcc | Level::Si | Level::StrictSerializable)
    }

    /// Whether the level judges real time (`invoke_ns`/`complete_ns`) rather than causality.
    pub fn is_timed(self) -> bool {
        matches!(self, Level::Linearizable | Level::StrictSerializable)
    }

    /// Whether `self` forbids `anomaly`. This is the table in the crate's README.
    pub fn forbids(self, anomaly: Anomaly) -> bool {
        use Anomaly as A;
        use Level as L;
        match anomaly {
            A::ThinAirRead
            | A::AbortedRead
            | A::FutureRead
            | A::SiblingWriteRead
            | A::NotMyOwnWrite
            | A::NotMyLastWrite
            | A::IntermediateRead => !matches!(self, L::SharedLog | L::Queue | L::ExactlyOnce | L::LockSafety),
            A::DuplicateSeqnum
            | A::OrderDisagreement
            | A::PhantomRecord
            | A::IncorrectLogRead
            | A::LostRecord
            | A::MissedOwnAppend
            | A::NonMonotonicLogRead
            | A::LostInheritance => self == L::SharedLog,
            A::DuplicateDelivery | A::SkippedMessage | A::WrongEmptyPop | A::PhantomMessage => self == L::Queue,
            A::DoubleEffect | A::StaleEffect | A::DuplicateInvoke => self == L::ExactlyOnce,
            A::LockConflict => matches!(self, L::ExactlyOnce | L::LockSafety),
            // One order of appends per key: the levels with one order of writes.
            A::IncompatibleOrder => matches!(self, L::Ccv | L::Rc | L::Ra | L::Tcc | L::Si | L::Linearizable),
            A::CyclicCO => !matches!(self, L::WellFormed | L::Linearizable | L::StrictSerializable),
            A::MissedOwnWrite => matches!(self, L::ReadYourWrites | L::Session),
            A::NonMonotonicRead => matches!(self, L::MonotonicReads | L::Session),
            A::NonMonotonicWrite => matches!(self, L::MonotonicWrites | L::Session),
            A::MissedReadDependency => matches!(self, L::WritesFollowReads | L::Session),
            A::WriteCOInitRead | A::WriteCORead => matches!(self, L::Cc | L::Ccv | L::Cm),
            A::CyclicCF => self == L::Ccv,
            A::WriteHBInitRead | A::CyclicHB => self == L::Cm,
            // rc-plume: NonMonoReadCO only for reads of initial values (Plume's RC mode).
            A::NonMonoReadCO => matches!(self, L::Rc | L::RcPlume | L::Ra | L::Tcc),
            A::NonMonoReadCM => matches!(self, L::Rc | L::Ra | L::Tcc),
            A::NonRepeatableRead | A::FracturedReadCO => matches!(self, L::Ra | L::Tcc | L::Si),
            A::FracturedReadCM => matches!(self, L::Ra | L::Tcc),
            A::COConflictCM | A::ConflictCM => self == L::Tcc,
            A::StaleRead | A::RealtimeFutureRead | A::NonLinearizable => self == L::Linearizable,
            A::NotCacheFree => self == L::CacheFree,
            A::LostUpdate | A::ConcurrentWrite | A::ReadSkew | A::CyclicDependency | A::NoSnapshotOrder => self == L::Si,
            A::NonSerializable | A::RealtimeNonSerializable => self == L::StrictSerializable,
        }
    }

    /// The session guarantees a level includes (for the session-guarantee checks).
    pub(crate) fn guarantees(self) -> [bool; 4] {
        match self {
            Level::ReadYourWrites => [true, false, false, false],
            Level::MonotonicReads => [false, true, false, false],
            Level::MonotonicWrites => [false, false, true, false],
            Level::WritesFollowReads => [false, false, false, true],
            Level::Session => [true; 4],
            _ => [false; 4],
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Level {
    type Err = String;
    fn from_str(s: &str) -> Result<Level, String> {
        Level::parse(s).ok_or_else(|| {
            let names: Vec<&str> = Level::every().chain(Level::LOG).map(|l| l.name()).collect();
            format!("unknown level {s:?}; expected one of {} (or causal+ for ccv)", names.join(", "))
        })
    }
}

impl Serialize for Level {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}
