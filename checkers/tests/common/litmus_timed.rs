//! The real-time litmus catalogue: small histories with `invoke_ns`/`complete_ns` intervals
//! (`c1 @0-10: w x=1`), judged at `linearizable` and, for contrast, at `ccv`, which ignores
//! real time. `?` means "no verdict" (the report is incomplete and lists no violation).

use causim_checkers::Level;

/// Levels in table order.
pub const COLUMNS: [Level; 2] = [Level::Ccv, Level::Linearizable];

pub struct TimedLitmus {
    pub name: &'static str,
    pub history: &'static str,
    /// One entry per column: every anomaly reported (` + ` between several), `-` for none, `?`
    /// for no verdict.
    pub expect: [&'static str; 2],
}

pub fn catalogue() -> Vec<TimedLitmus> {
    vec![
        TimedLitmus {
            name: "StaleRead: a read after a completed overwrite returns the old value",
            history: "c1 @0-10: w x=1\nc2 @20-30: w x=2\nc3 @40-50: r x=1",
            expect: ["-", "StaleRead"],
        },
        TimedLitmus {
            name: "StaleRead of the initial value after a completed write",
            history: "c1 @0-10: w x=1\nc2 @20-30: r x=_",
            expect: ["-", "StaleRead"],
        },
        TimedLitmus {
            name: "RealtimeFutureRead: a read returns a value before its write is invoked",
            history: "c1 @0-10: r x=1\nc2 @20-30: w x=1",
            expect: ["-", "RealtimeFutureRead"],
        },
        TimedLitmus {
            name: "NonLinearizable: lost update, two completed writes both survive",
            history: "c1 @0-10: w x=1\nc2 @0-10: w x=2\nc3 @20-30: r x=1\nc4 @20-30: r x=2",
            expect: ["-", "NonLinearizable"],
        },
        TimedLitmus {
            name: "NonLinearizable: x=1, then x=2, then x=1 again, in real time",
            history: "c1 @0-100: w x=1\nc2 @0-100: w x=2\nc3 @20-30: r x=1\nc3 @40-50: r x=2\nc4 @60-70: r x=1",
            expect: ["-", "NonLinearizable"],
        },
        TimedLitmus {
            name: "allowed: overlapping operations take effect in some order inside their intervals",
            history: "c1 @0-30: w x=1\nc2 @5-10: r x=_\nc3 @15-20: r x=1\nc4 @25-40: w x=2\nc5 @26-27: r x=1\nc6 @35-50: r x=2",
            expect: ["-", "-"],
        },
        TimedLitmus {
            name: "allowed: intervals are closed, so touching operations are concurrent",
            history: "c1 @0-10: w x=1\nc2 @10-20: r x=_",
            expect: ["-", "-"],
        },
        TimedLitmus {
            name: "allowed: a failed write may take effect long after its client gave up",
            history: "c1? @0-10: w x=1\nc2 @20-30: r x=_\nc3 @40-50: r x=1",
            expect: ["-", "-"],
        },
        TimedLitmus {
            name: "allowed: a failed write may never take effect",
            history: "c1? @0-10: w x=1\nc2 @20-30: r x=_",
            expect: ["-", "-"],
        },
        TimedLitmus {
            name: "AbortedRead: an aborted write has no effect",
            history: "c1! @0-10: w x=1\nc2 @20-30: r x=1",
            expect: ["AbortedRead", "AbortedRead"],
        },
        TimedLitmus {
            name: "no verdict: a transaction of two operations is not a register operation",
            history: "c1 @0-10: w x=1, w y=1\nc2 @20-30: r x=1",
            expect: ["-", "?"],
        },
        TimedLitmus { name: "no verdict: a write without an interval", history: "c1: w x=1\nc2 @20-30: r x=1", expect: ["-", "?"] },
    ]
}
