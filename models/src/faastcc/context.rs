//! The workflow context (§4.8): what a workflow carries from function to function, and its
//! join at a fan-in (Eq. 3).

use super::interval::{ROOT_INTERVAL, merge};
use crate::tcc_store::Ts;
use crate::txn_client::TxnContext;

/// What a workflow carries from function to function (§4.8): the snapshot interval and the
/// write set; plus, for the history only, the operations so far.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Context {
    pub lo: Ts,
    pub hi: Ts,
    /// The write set, the operations so far and the workflow's start.
    pub txn: TxnContext,
}

impl Context {
    pub fn root() -> Context {
        Context { lo: ROOT_INTERVAL.0, hi: ROOT_INTERVAL.1, txn: TxnContext::default() }
    }

    /// The protocol metadata's size on the wire: two 8-byte timestamps (§6.4, Fig. 5).
    pub fn metadata_bytes(&self) -> u64 {
        16
    }

    /// Eq. 3 and the union of write sets; `first_only` is the mutant `no_fanin_merge`.
    pub fn join(contexts: Vec<Context>, first_only: bool) -> Context {
        let (lo, hi) = if first_only { (contexts[0].lo, contexts[0].hi) } else { merge(contexts.iter().map(|c| (c.lo, c.hi))) };
        Context { lo, hi, txn: TxnContext::join(contexts.into_iter().map(|c| c.txn)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fan_in_intersects_intervals_and_an_empty_intersection_is_detected() {
        // Digest A5: branch 1 read k@[80, 120], branch 2 read k'@[130, 140].
        let (lo, hi) = merge([(80, 120), (130, 140)]);
        assert!(lo > hi);
        assert_eq!(merge([(80, 120), (90, 130)]), (90, 120));
        let a = Context { lo: 80, hi: 120, ..Context::root() };
        let b = Context { lo: 130, hi: 140, ..Context::root() };
        let joined = Context::join(vec![a.clone(), b.clone()], false);
        assert!(joined.lo > joined.hi);
        let mutant = Context::join(vec![a, b], true);
        assert_eq!((mutant.lo, mutant.hi), (80, 120), "no_fanin_merge keeps the first parent's interval");
    }
}
