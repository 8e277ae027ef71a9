//! FaaSTCC's messages and timers: the store's, plus a function's read of its cache.

use crate::tcc_store::{StoreMsg, StoreTimer, Ts};
use causim_sim::history::{Key, Value};
use causim_sim::node::{Message, Outbox};

/// A cache's answer for one key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Answer {
    Version {
        value: Option<Value>,
        t: Ts,
        p: Ts,
    },
    /// The store collected the version the interval needs (⊥); `stable` is the store's stable
    /// time when it said so, a recent snapshot for the retry to start from (§4.1).
    Collected {
        stable: Ts,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    Store(StoreMsg),
    /// Client → its cache: `CACHE_READ_TX(keys, [lo, hi])`.
    CacheRead {
        req: u64,
        keys: Vec<Key>,
        lo: Ts,
        hi: Ts,
    },
    /// `storage`: some key needed a storage round.
    CacheReply {
        req: u64,
        answers: Vec<(Key, Answer)>,
        storage: bool,
    },
}

impl From<StoreMsg> for Msg {
    fn from(m: StoreMsg) -> Msg {
        Msg::Store(m)
    }
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Store(m) => m.kind(),
            Msg::CacheRead { .. } => "CacheRead",
            Msg::CacheReply { .. } => "CacheReply",
        }
    }

    fn size_bytes(&self) -> u64 {
        match self {
            Msg::Store(m) => m.size_bytes(),
            Msg::CacheRead { keys, .. } => 1 + 24 + 8 * keys.len() as u64,
            Msg::CacheReply { answers, .. } => 2 + 8 + 33 * answers.len() as u64,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Timer {
    Store(StoreTimer),
    /// A function has deserialised its context (`metadata_ns_per_kb`).
    Start,
}

impl From<StoreTimer> for Timer {
    fn from(t: StoreTimer) -> Timer {
        Timer::Store(t)
    }
}

pub(super) type Out = Outbox<Msg, Timer>;
