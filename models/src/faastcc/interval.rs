//! The snapshot interval (§4.5, §4.8): pure functions, the heart of the protocol. A workflow
//! may read a version `<t, p>` only if it is its key's version somewhere in `[s_low, s_high]`
//! (Eq. 1); reading it narrows the interval to where it is (Eq. 2); a fan-in intersects its
//! parents' intervals (Eq. 3).

use crate::tcc_store::{TS_INF, Ts};

/// `[s_low, s_high]`.
pub type Interval = (Ts, Ts);

/// The root's interval: every version is acceptable.
pub const ROOT_INTERVAL: Interval = (0, TS_INF);

/// What a cache does with an entry `<t, p>` for a reader in `interval` (§4.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReadCase {
    /// Eq. 1 holds: serve it.
    Consistent,
    /// `s_high < t`: the reader needs an older version; read the store, do not install.
    Replaced,
    /// `p < s_low`: the entry may be stale; read the store and install.
    Stale,
    /// Not cached.
    Miss,
}

/// Eq. 1 and the §4.6 classification of a cached `<t, p>`.
pub fn classify(t: Ts, p: Ts, (lo, hi): Interval) -> ReadCase {
    if p >= lo && t <= hi {
        ReadCase::Consistent
    } else if hi < t {
        ReadCase::Replaced
    } else {
        // t ≤ p and lo ≤ hi, so `p < lo` and `t > hi` cannot both hold.
        ReadCase::Stale
    }
}

/// Eq. 2: the interval after reading `<t, p>`.
pub fn narrow((lo, hi): Interval, t: Ts, p: Ts) -> Interval {
    (lo.max(t), hi.min(p))
}

/// Eq. 3: the interval of a function with several parents (empty when `low > high`).
pub fn merge(intervals: impl IntoIterator<Item = Interval>) -> Interval {
    intervals.into_iter().fold(ROOT_INTERVAL, |(lo, hi), (l, h)| (lo.max(l), hi.min(h)))
}

#[cfg(test)]
mod tests {
    use super::*;

    // §4.5, the worked example: f_x read <k, v, 80, 120> from its cache, so its interval is
    // [80, 120]; f_y, on another worker, finds k' in its own cache in one of four states.
    const AFTER_FX: Interval = (80, 120);

    #[test]
    fn worked_example_fx_narrows_the_root_interval_to_its_version_and_promise() {
        assert_eq!(narrow(ROOT_INTERVAL, 80, 120), AFTER_FX);
    }

    #[test]
    fn worked_example_case_1_a_promise_below_s_low_is_stale() {
        // <k', v', 50, 60>: a version of k' in ]60, 80[ may be in the past of k@80.
        assert_eq!(classify(50, 60, AFTER_FX), ReadCase::Stale);
    }

    #[test]
    fn worked_example_case_2_is_consistent_and_narrows_to_80_90() {
        // <k', v', 50, 90>: no version of k' in ]80, 90[; like one read at t = 85.
        assert_eq!(classify(50, 90, AFTER_FX), ReadCase::Consistent);
        assert_eq!(narrow(AFTER_FX, 50, 90), (80, 90));
    }

    #[test]
    fn worked_example_case_3_is_consistent_and_narrows_to_90_120() {
        // <k', v', 90, 130>: k's promise says no version of k in ]90, 120[; like a read at 100.
        assert_eq!(classify(90, 130, AFTER_FX), ReadCase::Consistent);
        assert_eq!(narrow(AFTER_FX, 90, 130), (90, 120));
    }

    #[test]
    fn worked_example_case_4_a_version_above_s_high_was_replaced() {
        // <k', v', 130, 140>: a version of k above 120 may precede k'@130.
        assert_eq!(classify(130, 140, AFTER_FX), ReadCase::Replaced);
    }

    #[test]
    fn worked_example_a_single_snapshot_would_reject_a_consistent_case() {
        // Why an interval: snapshot 80 rejects case 3, snapshot 120 rejects case 2.
        assert_eq!(classify(90, 130, (80, 80)), ReadCase::Replaced);
        assert_eq!(classify(50, 90, (120, 120)), ReadCase::Stale);
    }
}
