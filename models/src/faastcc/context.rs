//! The workflow context (§4.8): what a workflow carries from function to function, and its
//! join at a fan-in (Eq. 3).

use super::interval::{ROOT_INTERVAL, merge};
use crate::tcc_store::Ts;
use causim_sim::history::{Key, OpKind, OpRecord, Value};
use causim_sim::time::Time;
use std::collections::BTreeMap;

/// What a workflow carries from function to function (§4.8): the snapshot interval and the
/// write set; plus, for the history only, the operations so far.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Context {
    pub lo: Ts,
    pub hi: Ts,
    pub write_set: BTreeMap<Key, Value>,
    /// History bookkeeping (not protocol metadata): operations keyed by (time, function, index).
    pub ops: BTreeMap<(Time, u32, u32), OpRecord>,
    pub started_ns: Option<Time>,
}

impl Context {
    pub fn root() -> Context {
        Context { lo: ROOT_INTERVAL.0, hi: ROOT_INTERVAL.1, write_set: BTreeMap::new(), ops: BTreeMap::new(), started_ns: None }
    }

    /// The protocol metadata's size on the wire: two 8-byte timestamps (§6.4, Fig. 5).
    pub fn metadata_bytes(&self) -> u64 {
        16
    }

    /// Eq. 3 and the union of write sets; `first_only` is the mutant `no_fanin_merge`.
    pub fn join(contexts: Vec<Context>, first_only: bool) -> Context {
        let interval = if first_only { (contexts[0].lo, contexts[0].hi) } else { merge(contexts.iter().map(|c| (c.lo, c.hi))) };
        let mut joined = Context::root();
        (joined.lo, joined.hi) = interval;
        for c in contexts {
            joined.write_set.extend(c.write_set);
            joined.ops.extend(c.ops);
            joined.started_ns = match (joined.started_ns, c.started_ns) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        keep_last_writes(&mut joined.write_set, &joined.ops);
        joined
    }
}

/// After a join, sets each key of `write_set` to its last write in operation order (`ops` is
/// keyed by time, function and index). Every branch carries a copy of the writes made before
/// the fan-out, so taking the branches' write sets in turn could let a copy undo a sibling's
/// later write. Shared by HydroCache's join.
pub fn keep_last_writes(write_set: &mut BTreeMap<Key, Value>, ops: &BTreeMap<(Time, u32, u32), OpRecord>) {
    for op in ops.values() {
        if op.kind == OpKind::Write
            && let (Some(slot), Some(value)) = (write_set.get_mut(&op.key), op.value)
        {
            *slot = value;
        }
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

    #[test]
    fn fan_in_keeps_each_keys_last_write_whichever_branch_comes_first() {
        // The source wrote y=1 before the fan-out; branch 1 then wrote y=2; branch 2 still
        // carries its copy of y=1.
        const Y: Key = 7;
        let mut source = Context::root();
        source.write_set.insert(Y, 1);
        source.ops.insert((10, 0, 0), OpRecord::write(Y, 1));
        let mut branch1 = source.clone();
        branch1.write_set.insert(Y, 2);
        branch1.ops.insert((20, 1, 0), OpRecord::write(Y, 2));
        let branch2 = source;
        for order in [vec![branch1.clone(), branch2.clone()], vec![branch2, branch1]] {
            let joined = Context::join(order, false);
            assert_eq!(joined.write_set.get(&Y), Some(&2));
            assert_eq!(joined.ops.len(), 2, "the source's write is listed once");
        }
    }
}
