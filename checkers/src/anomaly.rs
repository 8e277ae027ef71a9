//! The anomaly vocabulary, with the names other checkers use for the same thing.
//!
//! Our names are those of the literature where one exists: Plume's TAPs for the transactional
//! levels, the POPL'17 bad patterns for the non-transactional causal levels, a name after the
//! broken guarantee for the four session guarantees, and for the real-time anomalies of
//! `linearizable` Jepsen's "stale read", Plume's FutureRead transposed to real time, and Herlihy
//! & Wing's "not linearizable". Each anomaly also carries its POPL'17 name, its Plume TAP and
//! the nearest Elle/Adya name; the Elle column is "reported as", not "defined as" (Elle reasons
//! over inferred version orders and Adya cycles).

use serde::{Serialize, Serializer};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Anomaly {
    // Well-formedness (every level).
    ThinAirRead,
    AbortedRead,
    FutureRead,
    /// In a multi-function transaction, a read of a write made by a concurrent function.
    SiblingWriteRead,
    NotMyOwnWrite,
    NotMyLastWrite,
    IntermediateRead,
    // List-append histories: reads of one key that no single order of appends explains.
    IncompatibleOrder,
    // Causality cycle (every level but well-formed).
    CyclicCO,
    // Session guarantees (operation level).
    MissedOwnWrite,
    NonMonotonicRead,
    NonMonotonicWrite,
    MissedReadDependency,
    // POPL'17 bad patterns (operation level).
    WriteCOInitRead,
    WriteCORead,
    CyclicCF,
    WriteHBInitRead,
    CyclicHB,
    // Plume TAPs (transaction level).
    NonMonoReadCO,
    NonMonoReadCM,
    NonRepeatableRead,
    FracturedReadCO,
    FracturedReadCM,
    COConflictCM,
    ConflictCM,
    // Linearizability (real time, per key).
    StaleRead,
    RealtimeFutureRead,
    NonLinearizable,
    // Cache-free equivalence (call trees with cache hits).
    NotCacheFree,
    // Snapshot isolation (level `si`): cycles of the dependency graph that SI forbids.
    LostUpdate,
    ConcurrentWrite,
    ReadSkew,
    CyclicDependency,
    NoSnapshotOrder,
    // Strict serializability (level `strict-serializable`): transactions with no serial order.
    NonSerializable,
    RealtimeNonSerializable,
    // Shared logs (level `shared-log`): the order, the reads against their prefix, sessions.
    DuplicateSeqnum,
    OrderDisagreement,
    PhantomRecord,
    IncorrectLogRead,
    LostRecord,
    MissedOwnAppend,
    NonMonotonicLogRead,
    LostInheritance,
    // Queues on a shared log (level `queue`): each shard a FIFO linearized by log order.
    DuplicateDelivery,
    SkippedMessage,
    WrongEmptyPop,
    PhantomMessage,
    // Exactly-once workflow steps on a shared log (level `exactly-once`).
    DoubleEffect,
    StaleEffect,
    LockConflict,
    DuplicateInvoke,
}

/// The names another vocabulary gives an anomaly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Aliases {
    /// POPL'17 (Bouajjani, Enea, Guerraoui, Hamza) bad pattern.
    pub popl17: Option<&'static str>,
    /// Plume (OOPSLA'24) transactional anomalous pattern code, e.g. `TAP-m`.
    pub tap: Option<&'static str>,
    /// Plume TAP name, e.g. `COConflictCM`.
    pub tap_name: Option<&'static str>,
    /// Nearest Elle / Adya name.
    pub elle: Option<&'static str>,
}

impl Anomaly {
    pub const ALL: [Anomaly; 36] = [
        Anomaly::ThinAirRead,
        Anomaly::AbortedRead,
        Anomaly::FutureRead,
        Anomaly::SiblingWriteRead,
        Anomaly::NotMyOwnWrite,
        Anomaly::NotMyLastWrite,
        Anomaly::IntermediateRead,
        Anomaly::IncompatibleOrder,
        Anomaly::CyclicCO,
        Anomaly::MissedOwnWrite,
        Anomaly::NonMonotonicRead,
        Anomaly::NonMonotonicWrite,
        Anomaly::MissedReadDependency,
        Anomaly::WriteCOInitRead,
        Anomaly::WriteCORead,
        Anomaly::CyclicCF,
        Anomaly::WriteHBInitRead,
        Anomaly::CyclicHB,
        Anomaly::NonMonoReadCO,
        Anomaly::NonMonoReadCM,
        Anomaly::NonRepeatableRead,
        Anomaly::FracturedReadCO,
        Anomaly::FracturedReadCM,
        Anomaly::COConflictCM,
        Anomaly::ConflictCM,
        Anomaly::StaleRead,
        Anomaly::RealtimeFutureRead,
        Anomaly::NonLinearizable,
        Anomaly::NotCacheFree,
        Anomaly::LostUpdate,
        Anomaly::ConcurrentWrite,
        Anomaly::ReadSkew,
        Anomaly::CyclicDependency,
        Anomaly::NoSnapshotOrder,
        Anomaly::NonSerializable,
        Anomaly::RealtimeNonSerializable,
    ];

    /// The shared-log anomalies (level `shared-log`); not in [`Anomaly::ALL`], which lists the
    /// key-value anomalies.
    pub const LOG: [Anomaly; 16] = [
        Anomaly::DuplicateSeqnum,
        Anomaly::OrderDisagreement,
        Anomaly::PhantomRecord,
        Anomaly::IncorrectLogRead,
        Anomaly::LostRecord,
        Anomaly::MissedOwnAppend,
        Anomaly::NonMonotonicLogRead,
        Anomaly::LostInheritance,
        Anomaly::DuplicateDelivery,
        Anomaly::SkippedMessage,
        Anomaly::WrongEmptyPop,
        Anomaly::PhantomMessage,
        Anomaly::DoubleEffect,
        Anomaly::StaleEffect,
        Anomaly::LockConflict,
        Anomaly::DuplicateInvoke,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Anomaly::ThinAirRead => "ThinAirRead",
            Anomaly::AbortedRead => "AbortedRead",
            Anomaly::FutureRead => "FutureRead",
            Anomaly::SiblingWriteRead => "SiblingWriteRead",
            Anomaly::NotMyOwnWrite => "NotMyOwnWrite",
            Anomaly::NotMyLastWrite => "NotMyLastWrite",
            Anomaly::IntermediateRead => "IntermediateRead",
            Anomaly::IncompatibleOrder => "IncompatibleOrder",
            Anomaly::CyclicCO => "CyclicCO",
            Anomaly::MissedOwnWrite => "MissedOwnWrite",
            Anomaly::NonMonotonicRead => "NonMonotonicRead",
            Anomaly::NonMonotonicWrite => "NonMonotonicWrite",
            Anomaly::MissedReadDependency => "MissedReadDependency",
            Anomaly::WriteCOInitRead => "WriteCOInitRead",
            Anomaly::WriteCORead => "WriteCORead",
            Anomaly::CyclicCF => "CyclicCF",
            Anomaly::WriteHBInitRead => "WriteHBInitRead",
            Anomaly::CyclicHB => "CyclicHB",
            Anomaly::NonMonoReadCO => "NonMonoReadCO",
            Anomaly::NonMonoReadCM => "NonMonoReadCM",
            Anomaly::NonRepeatableRead => "NonRepeatableRead",
            Anomaly::FracturedReadCO => "FracturedReadCO",
            Anomaly::FracturedReadCM => "FracturedReadCM",
            Anomaly::COConflictCM => "COConflictCM",
            Anomaly::ConflictCM => "ConflictCM",
            Anomaly::StaleRead => "StaleRead",
            Anomaly::RealtimeFutureRead => "RealtimeFutureRead",
            Anomaly::NonLinearizable => "NonLinearizable",
            Anomaly::NotCacheFree => "NotCacheFree",
            Anomaly::LostUpdate => "LostUpdate",
            Anomaly::ConcurrentWrite => "ConcurrentWrite",
            Anomaly::ReadSkew => "ReadSkew",
            Anomaly::CyclicDependency => "CyclicDependency",
            Anomaly::NoSnapshotOrder => "NoSnapshotOrder",
            Anomaly::NonSerializable => "NonSerializable",
            Anomaly::RealtimeNonSerializable => "RealtimeNonSerializable",
            Anomaly::DuplicateSeqnum => "DuplicateSeqnum",
            Anomaly::OrderDisagreement => "OrderDisagreement",
            Anomaly::PhantomRecord => "PhantomRecord",
            Anomaly::IncorrectLogRead => "IncorrectLogRead",
            Anomaly::LostRecord => "LostRecord",
            Anomaly::MissedOwnAppend => "MissedOwnAppend",
            Anomaly::NonMonotonicLogRead => "NonMonotonicLogRead",
            Anomaly::LostInheritance => "LostInheritance",
            Anomaly::DuplicateDelivery => "DuplicateDelivery",
            Anomaly::SkippedMessage => "SkippedMessage",
            Anomaly::WrongEmptyPop => "WrongEmptyPop",
            Anomaly::PhantomMessage => "PhantomMessage",
            Anomaly::DoubleEffect => "DoubleEffect",
            Anomaly::StaleEffect => "StaleEffect",
            Anomaly::DuplicateInvoke => "DuplicateInvoke",
            Anomaly::LockConflict => "LockConflict",
        }
    }

    pub fn parse(s: &str) -> Option<Anomaly> {
        Anomaly::ALL.iter().chain(&Anomaly::LOG).copied().find(|a| a.name().eq_ignore_ascii_case(s))
    }

    /// What the anomaly means, in one line.
    pub fn meaning(self) -> &'static str {
        match self {
            Anomaly::ThinAirRead => "a read returns a value that no transaction wrote and that is not the initial value",
            Anomaly::AbortedRead => "a read returns a value written by an aborted transaction",
            Anomaly::FutureRead => "a read returns a value its own transaction writes only later",
            Anomaly::SiblingWriteRead => {
                "a function reads a write of its own transaction made by a concurrent function (one it does not follow in the workflow)"
            }
            Anomaly::NotMyOwnWrite => "after writing a key, a transaction reads another transaction's value of it",
            Anomaly::NotMyLastWrite => "a transaction reads its own earlier write of a key, not its latest one",
            Anomaly::IntermediateRead => "a read returns a value another transaction overwrote before it ended",
            Anomaly::IncompatibleOrder => {
                "two reads of a list disagree on the order of its appends (neither is a prefix of the other), or one lists an element twice"
            }
            Anomaly::CyclicCO => "session order and reads-from form a cycle: something was read before it was written",
            Anomaly::MissedOwnWrite => "a session reads a value older than its own earlier write of the key",
            Anomaly::NonMonotonicRead => "a session reads a value older than one it has already read",
            Anomaly::NonMonotonicWrite => "a reader sees a session's later write but an older value than its earlier write",
            Anomaly::MissedReadDependency => "a reader sees a write but an older value than one its writer had read before writing",
            Anomaly::WriteCOInitRead => "a read returns the initial value although a write of the key is in its causal past",
            Anomaly::WriteCORead => "a read returns a value overwritten by a write in its causal past",
            Anomaly::CyclicCF => "the writes of a key cannot be put in one order that agrees with causality and with what was read",
            Anomaly::WriteHBInitRead => "a session's view orders a write before a read of the initial value",
            Anomaly::CyclicHB => "a session's view (causal order plus the write orders its reads imply) is cyclic",
            Anomaly::NonMonoReadCO => "a transaction reads an older value after reading from a transaction that causally follows it",
            Anomaly::NonMonoReadCM => "a transaction's reads force a cyclic commit order",
            Anomaly::NonRepeatableRead => "a transaction reads one key twice and gets values of different writes",
            Anomaly::FracturedReadCO => {
                "a transaction sees another's writes only in part (or misses its session's own), reading an older value"
            }
            Anomaly::FracturedReadCM => "reads that see transactions in part force a cyclic commit order",
            Anomaly::COConflictCM => "a transaction reads a value overwritten by a write in its causal past",
            Anomaly::ConflictCM => "causality and the commit order the reads imply form a cycle",
            Anomaly::StaleRead => {
                "a read returns a value (or the initial value) that a later write had overwritten, in real time, before the read began"
            }
            Anomaly::RealtimeFutureRead => "a read completes before the write of the value it returns is invoked",
            Anomaly::NonLinearizable => {
                "no order of a key's reads and writes respects real time and has every read return the latest write"
            }
            Anomaly::NotCacheFree => {
                "no execution without caches explains the requests: a cache hit's virtual call and what the requests read form a cycle"
            }
            Anomaly::LostUpdate => {
                "a transaction read a version of a key and overwrote it, but another write of the key committed in between"
            }
            Anomaly::ConcurrentWrite => {
                "a transaction overwrote a write that its snapshot does not hold: two concurrent writers of one key both committed"
            }
            Anomaly::ReadSkew => "a transaction's reads come from no single snapshot: it missed a write that a transaction it saw had seen",
            Anomaly::CyclicDependency => "the order of writes, reads-from and session order form a cycle: a transaction depends on itself",
            Anomaly::NoSnapshotOrder => {
                "no order of the writes of the keys involved gives every transaction a snapshot: each order closes a cycle"
            }
            Anomaly::NonSerializable => {
                "no serial order of the transactions has each read return the latest earlier write (lost update, write skew, fractured read)"
            }
            Anomaly::RealtimeNonSerializable => {
                "the transactions have serial orders, but none respects real time: a transaction misses one that completed before it began"
            }
            Anomaly::DuplicateSeqnum => "two different records of a log were given the same seqnum",
            Anomaly::OrderDisagreement => "one record is seen at two different seqnums, or one seqnum names two different records",
            Anomaly::PhantomRecord => "a log read returns a record that no append wrote",
            Anomaly::IncorrectLogRead => {
                "a log read's answer is not the one the prefix that served it holds (readNext: the first matching seqnum at or after its bound, or EMPTY iff none)"
            }
            Anomaly::LostRecord => {
                "a log read finds an ordered seqnum whose record no storage replica can return (ordered before it was durable)"
            }
            Anomaly::MissedOwnAppend => "a function's read misses a record the function itself appended earlier (read-your-appends)",
            Anomaly::NonMonotonicLogRead => "a function's read misses a record in a prefix the function had already read (monotonic reads)",
            Anomaly::LostInheritance => {
                "a child function's read misses a record in the prefix its parent had reached (parent→child inheritance)"
            }
            Anomaly::DuplicateDelivery => "a queue pop returns a message an earlier pop of its shard already returned",
            Anomaly::SkippedMessage => {
                "a queue pop returns a message although an older message of its shard, pushed before the pop, was never delivered (FIFO; a lost message)"
            }
            Anomaly::WrongEmptyPop => "a queue pop returns EMPTY although a message pushed to its shard before the pop was never delivered",
            Anomaly::PhantomMessage => "a queue pop returns a message no push ordered before the pop put in its shard",
            Anomaly::DoubleEffect => {
                "a workflow step's database write takes effect although the step had already taken effect (re-execution, duplicate instance)"
            }
            Anomaly::StaleEffect => {
                "a workflow step's database write overwrites the effect of a step whose first log record is later (its version goes backwards)"
            }
            Anomaly::DuplicateInvoke => {
                "a workflow invoke ran its callee under a second instance id, or its caller took a second return value (re-execution, duplicate instance)"
            }
            Anomaly::LockConflict => "two holders acquired a log-based lock at one point of its chain (mutual exclusion broken)",
        }
    }

    /// Names in the other vocabularies. `init` says whether the stale value read was the
    /// initial one (POPL'17 distinguishes WriteCOInitRead from WriteCORead).
    pub fn aliases(self, init: bool) -> Aliases {
        use Anomaly as A;
        let co_read = if init { "WriteCOInitRead" } else { "WriteCORead" };
        let (popl17, tap, elle): (Option<&'static str>, Option<&'static str>, Option<&'static str>) = match self {
            A::ThinAirRead => (Some("ThinAirRead"), Some("TAP-a"), Some("garbage-read")),
            A::AbortedRead => (None, Some("TAP-b"), Some("G1a")),
            A::FutureRead => (Some("CyclicCO"), Some("TAP-c"), Some("future-read")),
            A::SiblingWriteRead => (None, None, Some("internal")),
            A::NotMyOwnWrite => (None, Some("TAP-d"), Some("internal")),
            A::NotMyLastWrite => (None, Some("TAP-e"), Some("internal")),
            A::IntermediateRead => (None, Some("TAP-f"), Some("G1b")),
            A::IncompatibleOrder => (None, None, Some("incompatible-order")),
            A::CyclicCO => (Some("CyclicCO"), Some("TAP-g"), Some("G1c-process")),
            A::MissedOwnWrite => (Some(co_read), Some("TAP-k"), Some("G-single-process")),
            A::NonMonotonicRead => (Some(co_read), Some("TAP-h"), Some("G-monotonic")),
            A::NonMonotonicWrite => (Some(co_read), Some("TAP-m"), Some("G-single-process")),
            A::MissedReadDependency => (Some(co_read), Some("TAP-m"), Some("G-single-process")),
            A::WriteCOInitRead => (Some("WriteCOInitRead"), Some("TAP-m"), Some("G-single-process")),
            A::WriteCORead => (Some("WriteCORead"), Some("TAP-m"), Some("G-single-process")),
            A::CyclicCF => (Some("CyclicCF"), Some("TAP-n"), Some("cyclic-versions")),
            A::WriteHBInitRead => (Some("WriteHBInitRead"), None, None),
            A::CyclicHB => (Some("CyclicHB"), None, None),
            A::NonMonoReadCO => (Some(co_read), Some("TAP-h"), Some("G-monotonic")),
            A::NonMonoReadCM => (Some("CyclicCF"), Some("TAP-i"), Some("G-monotonic")),
            A::NonRepeatableRead => (None, Some("TAP-j"), Some("internal")),
            A::FracturedReadCO => (Some(co_read), Some("TAP-k"), Some("G-single")),
            A::FracturedReadCM => (Some("CyclicCF"), Some("TAP-l"), Some("G-single")),
            A::COConflictCM => (Some(co_read), Some("TAP-m"), Some("G-single-process")),
            A::ConflictCM => (Some("CyclicCF"), Some("TAP-n"), Some("incompatible-order")),
            A::StaleRead => (None, None, Some("G-single-realtime")),
            A::RealtimeFutureRead => (None, None, Some("G1c-realtime")),
            A::NonLinearizable => (None, None, None),
            A::NotCacheFree => (None, None, None),
            A::LostUpdate => (None, None, Some("lost-update")),
            A::ConcurrentWrite => (None, None, Some("G-SIa")),
            A::ReadSkew => (None, None, Some("G-SIb")),
            A::CyclicDependency => (None, None, Some("G1c")),
            A::NoSnapshotOrder => (None, None, Some("G-SI")),
            A::NonSerializable => (None, None, Some("G2")),
            A::RealtimeNonSerializable => (None, None, Some("G-single-realtime")),
            A::DuplicateSeqnum | A::OrderDisagreement | A::IncorrectLogRead | A::LostRecord => (None, None, None),
            A::PhantomRecord => (None, None, Some("garbage-read")),
            A::MissedOwnAppend | A::NonMonotonicLogRead | A::LostInheritance => (None, None, Some("G-single-process")),
            A::DuplicateDelivery => (None, None, Some("duplicate")),
            A::SkippedMessage => (None, None, Some("lost")),
            A::WrongEmptyPop => (None, None, Some("unexpected-empty")),
            A::PhantomMessage => (None, None, Some("unexpected")),
            A::DoubleEffect => (None, None, Some("duplicate")),
            A::StaleEffect => (None, None, Some("lost-update")),
            A::LockConflict => (None, None, None),
            A::DuplicateInvoke => (None, None, Some("duplicate")),
        };
        Aliases { popl17, tap, tap_name: tap.map(tap_name), elle }
    }
}

/// Plume's name for a TAP code.
pub fn tap_name(code: &str) -> &'static str {
    match code {
        "TAP-a" => "ThinAirRead",
        "TAP-b" => "AbortedRead",
        "TAP-c" => "FutureRead",
        "TAP-d" => "NotMyOwnWrite",
        "TAP-e" => "NotMyLastWrite",
        "TAP-f" => "IntermediateRead",
        "TAP-g" => "CyclicCO",
        "TAP-h" => "NonMonoReadCO",
        "TAP-i" => "NonMonoReadCM",
        "TAP-j" => "NonRepeatableRead",
        "TAP-k" => "FracturedReadCO",
        "TAP-l" => "FracturedReadCM",
        "TAP-m" => "COConflictCM",
        "TAP-n" => "ConflictCM",
        _ => "?",
    }
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Anomaly {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}
