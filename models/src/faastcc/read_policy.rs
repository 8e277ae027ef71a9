//! The read policies of FaaSTCC's ablation (§6.2, Fig. 3; digest §3.4), `params.read_policy`:
//! which cached versions a workflow may read, with or without each of FaaSTCC's two mechanisms.
//!
//! - **`interval`** (C, the default): the full system, promises and snapshot intervals.
//! - **`fixed_promise`** (B): promises validate cache entries, but the workflow reads one fixed
//!   snapshot `S`, "the promise of the first key read by the DAG". A cached `<t, p>` is a hit
//!   iff `t ≤ S ≤ p`; anything else is read from the store at `S`.
//! - **`fixed_exact`** (A): a fixed snapshot and no promises: "unless the exact version that
//!   matches the fixed snapshot is found in the cache, the system must always read from the
//!   storage".
//!
//! Both fixed policies run the full system's machinery, except that once the interval has an
//! upper end `S` a cache judges and fetches every read at the point `S` (`[S, S]`, where Eq. 1
//! is exactly B's rule `t ≤ S ≤ p`). A version read at `S` is valid there, so narrowing never
//! lowers `s_high` again: `S` stays fixed for the rest of the workflow, and the versions read
//! are their keys' versions at `S`, which makes both policies as safe as the full system.
//!
//! # Choices where the paper is silent
//!
//! - **Which point is `S`.** The paper's functions read one key at a time; ours read a batch
//!   (§4.9). The first batch a workflow reads is served as in the full system (the cache narrows
//!   the root interval over the batch), and `S` is the upper end of the narrowed interval: the
//!   first key's promise when the batch has one key (`params.one_read_per_call`), the smallest
//!   promise of the batch otherwise (the batched analogue: the first key's promise may lie
//!   outside the batch's other versions). A retry chooses its `S` afresh. The interval's lower
//!   end still narrows as in the full system, so parallel branches that chose their points
//!   apart join at the smaller one when every version they read is valid there, and abort
//!   (`empty_interval`) otherwise.
//! - **What A knows about a cached version.** Without promises the cache knows a version only
//!   where it saw it: a version a store read returned at snapshot `s` is the key's version at
//!   `s` (so on `[t, s]`: nothing can commit between a version and a snapshot that returned
//!   it), and a pushed version is known at its own timestamp only. A caches that horizon,
//!   `min(promise, s)` or `t`, where the other policies cache the store's promise; "the exact
//!   version that matches the fixed snapshot" is then a version fetched at a snapshot at or
//!   after `S` and not replaced before it. `promise_bumps` are promises, so A refuses them.

use super::interval::Interval;
use crate::tcc_store::{TS_INF, Ts};
use serde::Deserialize;

/// `params.read_policy`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum ReadPolicy {
    /// C: promises and snapshot intervals (the full system).
    #[default]
    Interval,
    /// B: promises, with the snapshot fixed at the first read's promise.
    FixedPromise,
    /// A: a fixed snapshot and no promises.
    FixedExact,
}

impl ReadPolicy {
    /// Every policy, in the ablation's order A, B, C (for the fuzzer and the sweep).
    pub const ALL: [ReadPolicy; 3] = [ReadPolicy::FixedExact, ReadPolicy::FixedPromise, ReadPolicy::Interval];

    /// The name `params.read_policy` takes.
    pub fn name(self) -> &'static str {
        match self {
            ReadPolicy::Interval => "interval",
            ReadPolicy::FixedPromise => "fixed_promise",
            ReadPolicy::FixedExact => "fixed_exact",
        }
    }

    /// The interval a cache judges and fetches a read in: under a fixed policy, the point `S`
    /// at the interval's upper end once some read has bounded it.
    pub fn reading_interval(self, (lo, hi): Interval) -> Interval {
        match self {
            ReadPolicy::Interval => (lo, hi),
            _ if hi == TS_INF || lo > hi => (lo, hi),
            ReadPolicy::FixedPromise | ReadPolicy::FixedExact => (hi, hi),
        }
    }

    /// The horizon the cache keeps for a version a store read at `snapshot` returned with
    /// `promise` (and hands the reader).
    pub fn known_from_read(self, promise: Ts, snapshot: Ts) -> Ts {
        match self {
            ReadPolicy::FixedExact => promise.min(snapshot),
            _ => promise,
        }
    }

    /// The horizon the cache keeps for a pushed version `<t, promise>`.
    pub fn known_from_push(self, t: Ts, promise: Ts) -> Ts {
        match self {
            ReadPolicy::FixedExact => t,
            _ => promise,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faastcc::interval::{ROOT_INTERVAL, ReadCase, classify, narrow};

    #[test]
    fn the_full_system_reads_in_its_interval_and_the_fixed_policies_at_its_upper_end() {
        let after_first = narrow(ROOT_INTERVAL, 80, 120);
        assert_eq!(ReadPolicy::Interval.reading_interval(after_first), (80, 120));
        assert_eq!(ReadPolicy::FixedPromise.reading_interval(after_first), (120, 120));
        assert_eq!(ReadPolicy::FixedExact.reading_interval(after_first), (120, 120));
        assert_eq!(ReadPolicy::FixedPromise.reading_interval(ROOT_INTERVAL), ROOT_INTERVAL, "nothing read yet: no point");
    }

    #[test]
    fn a_version_read_at_the_point_keeps_the_point_as_the_upper_end() {
        // Valid at S = 120, so its promise is at least 120: narrowing keeps s_high = S.
        assert_eq!(narrow((80, 120), 100, 150), (100, 120));
    }

    #[test]
    fn a_fixed_snapshot_rejects_what_the_interval_accepts() {
        // §4.5's cases 2 and 3: both consistent with [80, 120], only case 3 holds at S = 120.
        let c = narrow(ROOT_INTERVAL, 80, 120);
        let b = ReadPolicy::FixedPromise.reading_interval(c);
        assert_eq!(classify(50, 90, c), ReadCase::Consistent);
        assert_eq!(classify(50, 90, b), ReadCase::Stale);
        assert_eq!(classify(90, 130, b), ReadCase::Consistent);
    }

    #[test]
    fn without_promises_a_version_is_known_only_where_it_was_seen() {
        assert_eq!(ReadPolicy::FixedExact.known_from_read(500, 300), 300);
        assert_eq!(ReadPolicy::FixedExact.known_from_push(250, 400), 250);
        assert_eq!(ReadPolicy::FixedPromise.known_from_read(500, 300), 500);
        assert_eq!(ReadPolicy::Interval.known_from_push(250, 400), 400);
    }

    /// A read at snapshot 300 returns version 100 promised to 500: A caches it as known up to
    /// 300 only, so a later reader at 400 must go to the store; B and C serve it.
    #[test]
    fn a_cache_without_promises_serves_a_version_only_up_to_the_snapshot_it_was_read_at() {
        use crate::faastcc::{Cache, Msg};
        use crate::tcc_store::{Found, StoreMsg};
        use causim_sim::Effect;
        use causim_sim::node::NodeId;
        let client = NodeId(1 << 63);
        for policy in ReadPolicy::ALL {
            let mut cache = Cache::new(vec![NodeId::fixed(1)], false, false, false).with_read_policy(policy);
            let mut out = Default::default();
            cache.on_read(0, client, 0, vec![5], (300, 300), &mut out);
            let found = Found { value: Some(50), ts: 100, promise: 500, same_as_cached: false, latest: false, committed_ns: 0 };
            cache.on_store_reply(1, 0, 400, vec![(5, Some(found))], &mut out);
            let horizon = if policy == ReadPolicy::FixedExact { 300 } else { 500 };
            assert_eq!(cache.entry_view(5), Some((100, horizon)), "{policy:?}");
            let mut out = Default::default();
            cache.on_read(2, client, 1, vec![5], (400, 400), &mut out);
            let to_store = out.effects.iter().any(|e| matches!(e, Effect::Send { msg: Msg::Store(StoreMsg::Read { .. }), .. }));
            assert_eq!(to_store, policy == ReadPolicy::FixedExact, "{policy:?}");
        }
    }

    #[test]
    fn the_names_are_the_parameter_values() {
        for p in ReadPolicy::ALL {
            assert_eq!(serde_json::from_value::<ReadPolicy>(serde_json::json!(p.name())).unwrap(), p);
        }
    }
}
