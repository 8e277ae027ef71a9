//! What Boki's libraries write in a log record besides its data, and what they cache beside a
//! record as auxiliary data (§3, §5).
//!
//! A record's `data` stays an integer, unique per book, which histories show and the
//! shared-log check identifies records by. A library record also carries a [`Body`]: the
//! library's own contents (a commit's write set, a lock's `prev`), replicated and stored with
//! the data and returned by every read. Plain LogBook calls write [`Body::Plain`].
//!
//! [`Aux`] is `logSetAuxData`'s value (§3, digest §2.8): kept only in the record cache of the
//! function node that set it, returned by reads that find it there, never replicated, lost on
//! eviction; with `params.aux_data_on_storage` (§7.5, Table 9's second row) also kept by the
//! record's storage nodes and returned with the record on a cache miss. Libraries use it as a
//! cache of what replaying the log up to the record yields.

use causim_sim::history::{Key, Value};

/// A library's contents of a record.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Body {
    /// A plain `logAppend`.
    #[default]
    Plain,
    /// BokiQueue: a push of the record's data into the book's queue shard.
    Push,
    /// BokiQueue: a pop; its outcome is decided by replaying the shard's records before it.
    Pop,
    /// BokiStore: a transaction's start; its snapshot is the log before this record.
    TxnStart,
    /// BokiStore: a transaction's speculative commit: the seqnum of its start record and the
    /// objects it writes, each with the rank of its last write among the transaction's writes
    /// (the committed value is derived from the commit's seqnum and that rank).
    Commit { start: u64, writes: Vec<(Key, u8)> },
    /// BokiFlow: a read step's record, holding the value the step read from the database
    /// (re-executions of the step use the first record's).
    Logged(Option<Value>),
    /// BokiFlow: a lock record (Fig. 7): the holder (`None`: a release) and the chain record
    /// it extends (`None`: the chain's start).
    Lock { holder: Option<u64>, prev: Option<u64> },
    /// BokiFlow transaction log (tagged with the txn id): a step's intent to lock `key`
    /// (appended before `tryLock`, so whoever finishes the transaction finds every lock it may
    /// hold), and for a write step its buffered write.
    TxnIntent { key: Key, write: bool },
    /// BokiFlow transaction log: a read step's record (`tag`: the step's), holding the value
    /// read under the key's lock; re-executions use the first record's.
    TxnRead { key: Key, value: Option<Value>, tag: u64 },
    /// BokiFlow transaction log: a commit or abort decision, appended at the workflow's end;
    /// the first one stands. `at`: when it was proposed (the committed line's invocation).
    TxnDecision { commit: bool, at: u64 },
}

/// Auxiliary data: the replay state a library caches beside a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Aux {
    /// BokiQueue, on a pop record: the shard's consumed pointer after this pop (the next pop
    /// returns the first push at or after it).
    Consumed(u64),
    /// BokiStore, on a commit record: whether the transaction committed.
    Decided(bool),
    /// BokiFlow, on a lock record: the lock chain's tail after it (its seqnum and holder).
    LockTail(Option<(u64, Option<u64>)>),
}
