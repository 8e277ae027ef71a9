//! MuCache's messages (digest §2.5) and the call-tree record a response carries back.
//!
//! RPCs are `Request`/`Response`; CM-to-CM traffic is `Save` and `InvCalls`, sent on the same
//! FIFO link from the downstream CM to the caller's CM, so a Save and a later Inv of the same
//! call arrive in the order they were sent (O4). A response also carries the record of its
//! subtree (reads, writes, calls, cache hits with their origin): metadata for the history, not
//! protocol state, and left out of the message size.

use super::app::{CallArgs, Services, StoreKey};
use super::batch::Upstream;
use causim_sim::node::Message;
use causim_sim::time::Time;

/// A request execution, unique in the run: the unit (service shard) that ran it and its
/// number there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReqId(pub u64);

impl ReqId {
    pub fn new(unit: u32, n: u64) -> ReqId {
        ReqId(((unit as u64) << 40) | n)
    }
    pub fn unit(self) -> u32 {
        (self.0 >> 40) as u32
    }
    pub fn number(self) -> u64 {
        self.0 & ((1 << 40) - 1)
    }
}

/// Which outstanding call of which request a response answers: the caller's request and the
/// call's position among the branches of the step that issued it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CallTag {
    pub parent: ReqId,
    pub branch: u32,
}

/// What one request did, in program order: the history's `call` tree.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CallRecord {
    pub req: ReqId,
    pub ca: CallArgs,
    pub ret: u64,
    pub events: Vec<Event>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Event {
    /// A read of the request's own service's store; `None` is the initial state.
    Read {
        key: StoreKey,
        value: Option<u64>,
    },
    Write {
        key: StoreKey,
        value: u64,
    },
    Call(Box<CallRecord>),
    /// A cache hit, and the request whose End produced the Save that filled the entry.
    Hit {
        ca: CallArgs,
        ret: u64,
        origin: ReqId,
    },
    /// A fan-out: its branches (each a `Call` or a `Hit`) ran concurrently.
    Par(Vec<Event>),
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    /// An RPC. `caller` is the calling unit (`None` for a client), `visited` the caller's
    /// visited set at call time (V2: the callee starts from it).
    Request {
        tag: CallTag,
        ca: CallArgs,
        caller: Option<u32>,
        visited: Services,
    },
    /// The reply: the return value, the services the subtree visited, and its record.
    Response {
        tag: CallTag,
        ret: u64,
        visited: Services,
        record: Box<CallRecord>,
    },
    /// Downstream CM → caller's CM: cache `ca` = `ret`; `origin` is metadata for the history.
    Save {
        ca: CallArgs,
        ret: u64,
        visited: Services,
        origin: ReqId,
    },
    /// Downstream CM → caller's CM: these cached calls are invalid; `since` is when the
    /// write behind it took effect (metadata for the invalidation-time figure, not sized).
    InvCalls {
        cas: Vec<CallArgs>,
        since: Time,
    },
    /// Downstream CM → caller's CM: Saves and Invs batched (§2.9), to apply in order.
    Batch {
        items: Vec<Upstream>,
    },
    /// CM → the CMs of the other shards of its service: a local write changed `key` (Fig. 5
    /// L.25). Never forwarded again.
    ShardInv {
        key: StoreKey,
        since: Time,
    },
    /// A shard of a sharded service → its store node, and the answer (the value read, or the
    /// version written; `None` is the initial state).
    StoreRead {
        req: ReqId,
        key: StoreKey,
    },
    StoreWrite {
        req: ReqId,
        key: StoreKey,
    },
    StoreReply {
        req: ReqId,
        key: StoreKey,
        value: Option<u64>,
        write: bool,
    },
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Request { .. } => "Request",
            Msg::Response { .. } => "Response",
            Msg::Save { .. } => "Save",
            Msg::InvCalls { .. } => "InvCalls",
            Msg::Batch { .. } => "Batch",
            Msg::ShardInv { .. } => "ShardInv",
            Msg::StoreRead { .. } => "StoreRead",
            Msg::StoreWrite { .. } => "StoreWrite",
            Msg::StoreReply { .. } => "StoreReply",
        }
    }

    fn size_bytes(&self) -> u64 {
        // A tag byte, 8 bytes per number; call arguments are 16 (endpoint, argument).
        1 + match self {
            Msg::Request { .. } => 8 + 16 + 8 + 8,
            Msg::Response { .. } => 8 + 8 + 8,
            Msg::Save { .. } => 16 + 8 + 8,
            Msg::InvCalls { cas, .. } => 8 + 16 * cas.len() as u64,
            Msg::Batch { items } => {
                8 + items.iter().map(|i| if matches!(i, Upstream::Save { .. }) { 1 + 16 + 8 + 8 } else { 1 + 16 }).sum::<u64>()
            }
            Msg::ShardInv { .. } => 16,
            Msg::StoreRead { .. } | Msg::StoreWrite { .. } => 8 + 16,
            Msg::StoreReply { .. } => 8 + 16 + 8 + 1,
        }
    }
}
