//! The litmus catalogue, shared by the table test and the explanation snapshots.

use causim_checkers::Level;

/// Levels in table order.
pub const COLUMNS: [Level; 13] = Level::UNTIMED;

pub struct Litmus {
    pub name: &'static str,
    pub history: &'static str,
    /// One entry per column: the anomaly reported first, or "-".
    pub expect: [&'static str; 13],
}

const ALL_WF: fn(&'static str) -> [&'static str; 13] = |a| [a; 13];

pub fn catalogue() -> Vec<Litmus> {
    vec![
        Litmus { name: "ThinAirRead: a value nobody wrote", history: "c1: r x=7", expect: ALL_WF("ThinAirRead") },
        Litmus { name: "AbortedRead: reading an aborted write", history: "c1!: w x=1\nc2: r x=1", expect: ALL_WF("AbortedRead") },
        Litmus { name: "FutureRead: reading one's own later write", history: "c1: r x=1, w x=1", expect: ALL_WF("FutureRead") },
        Litmus { name: "NotMyOwnWrite: ignoring one's own write", history: "c1: w x=1\nc2: w x=2, r x=1", expect: ALL_WF("NotMyOwnWrite") },
        Litmus {
            name: "NotMyLastWrite: reading one's own overwritten write",
            history: "c1: w x=1, w x=2, r x=1",
            expect: ALL_WF("NotMyLastWrite"),
        },
        Litmus {
            // Plume's TAP-j case: Plume names it NonRepeatableRead (and passes it at RC), the
            // axioms NotMyOwnWrite; both are reported where both are forbidden (ra, tcc).
            name: "NotMyOwnWrite and NonRepeatableRead: another's value after reading one's own",
            history: "c1: w x=2\nc2: w x=1, r x=1, r x=2",
            expect: [
                "NotMyOwnWrite",
                "NotMyOwnWrite",
                "NotMyOwnWrite",
                "NotMyOwnWrite",
                "NotMyOwnWrite",
                "NotMyOwnWrite",
                "NotMyOwnWrite",
                "NotMyOwnWrite",
                "NotMyOwnWrite",
                "NotMyOwnWrite",
                "-",
                "NotMyOwnWrite + NonRepeatableRead",
                "NotMyOwnWrite + NonRepeatableRead",
            ],
        },
        Litmus {
            name: "IntermediateRead: reading another's overwritten write",
            history: "c1: w x=1, w x=2\nc2: r x=1",
            expect: ALL_WF("IntermediateRead"),
        },
        Litmus {
            name: "CyclicCO: each session reads the other's later write",
            history: "c1: r x=1\nc1: w y=1\nc2: r y=1\nc2: w x=1",
            expect: [
                "-", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO",
                "CyclicCO", "CyclicCO", "CyclicCO",
            ],
        },
        Litmus {
            name: "CyclicCO between transactions only: operations alone are fine",
            history: "c1: w x=1, r y=1\nc2: w y=1, r x=1",
            expect: ["-", "-", "-", "-", "-", "-", "-", "-", "-", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO"],
        },
        Litmus {
            name: "MissedOwnWrite: a session reads the initial value after writing",
            history: "c1: w x=1\nc1: r x=_",
            expect: [
                "-",
                "MissedOwnWrite",
                "-",
                "-",
                "-",
                "MissedOwnWrite",
                "WriteCOInitRead",
                "WriteCOInitRead",
                "WriteCOInitRead",
                "-",
                "-",
                "FracturedReadCO",
                "FracturedReadCO",
            ],
        },
        Litmus {
            name: "MissedOwnWrite: a session reads an older value after overwriting it",
            history: "c2: w x=1\nc1: r x=1\nc1: w x=2\nc1: r x=1",
            expect: [
                "-",
                "MissedOwnWrite",
                "-",
                "-",
                "-",
                "MissedOwnWrite",
                "WriteCORead",
                "WriteCORead",
                "WriteCORead",
                "-",
                "-",
                "FracturedReadCO",
                "FracturedReadCO",
            ],
        },
        Litmus {
            name: "MissedOwnWrite through a workflow `after` link",
            history: "w1/f1: w x=1\nw1/f2 after 0: r x=_",
            expect: [
                "-",
                "MissedOwnWrite",
                "-",
                "-",
                "-",
                "MissedOwnWrite",
                "WriteCOInitRead",
                "WriteCOInitRead",
                "WriteCOInitRead",
                "-",
                "-",
                "FracturedReadCO",
                "FracturedReadCO",
            ],
        },
        Litmus {
            name: "NonMonotonicRead: reading x=1 after x=2, which overwrote it",
            history: "c1: w x=1\nc1: w x=2\nc2: r x=2\nc2: r x=1",
            expect: [
                "-",
                "-",
                "NonMonotonicRead",
                "-",
                "-",
                "NonMonotonicRead",
                "WriteCORead",
                "WriteCORead",
                "WriteCORead",
                "-",
                "-",
                "-",
                "COConflictCM",
            ],
        },
        Litmus {
            name: "NonMonotonicWrite: CausalMesh Fig. 6 (y=1 seen, the earlier x=1 not)",
            history: "c1: w x=1\nc1: w y=1\nc2: r y=1\nc2: r x=_",
            expect: [
                "-",
                "-",
                "-",
                "NonMonotonicWrite",
                "-",
                "NonMonotonicWrite",
                "WriteCOInitRead",
                "WriteCOInitRead",
                "WriteCOInitRead",
                "-",
                "-",
                "-",
                "COConflictCM",
            ],
        },
        Litmus {
            name: "MissedReadDependency: y=1 was written after reading x=1; x=1 not seen",
            history: "c1: w x=1\nc2: r x=1\nc2: w y=1\nc3: r y=1\nc3: r x=_",
            expect: [
                "-",
                "-",
                "-",
                "-",
                "MissedReadDependency",
                "MissedReadDependency",
                "WriteCOInitRead",
                "WriteCOInitRead",
                "WriteCOInitRead",
                "-",
                "-",
                "-",
                "COConflictCM",
            ],
        },
        Litmus {
            name: "WriteCORead over two hops: no session guarantee sees it",
            history: "c1: w x=1\nc1: w x=2\nc2: r x=2\nc2: w y=1\nc3: r y=1\nc3: w z=1\nc4: r z=1\nc4: r x=1",
            expect: ["-", "-", "-", "-", "-", "-", "WriteCORead", "WriteCORead", "WriteCORead", "-", "-", "-", "COConflictCM"],
        },
        Litmus {
            name: "NonMonoReadCO: inside one transaction, x=1 after reading y=2 of the transaction that overwrote it",
            history: "c1: w x=1\nc1: w x=2, w y=2\nc2: r y=2, r x=1",
            expect: [
                "-",
                "-",
                "-",
                "NonMonotonicWrite",
                "-",
                "NonMonotonicWrite",
                "WriteCORead",
                "WriteCORead",
                "WriteCORead",
                "NonMonoReadCO",
                "-",
                "NonMonoReadCO",
                "NonMonoReadCO",
            ],
        },
        Litmus {
            name: "FracturedReadCO: sees y=1 but not the x=1 written with it",
            history: "c1: w x=1, w y=1\nc2: r x=_, r y=1",
            expect: ["-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "FracturedReadCO", "FracturedReadCO"],
        },
        Litmus {
            name: "NonRepeatableRead: one key read twice, two writes",
            history: "c1: w x=1\nc2: w x=2\nc3: r x=1, r x=2",
            expect: ["-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "NonRepeatableRead", "NonRepeatableRead"],
        },
        Litmus {
            name: "NonMonoReadCM: two readers see two transactions in opposite orders",
            history: "c1: w x=1, w y=1\nc2: w x=2, w y=2\nc3: r x=1, r y=2\nc4: r x=2, r y=1",
            expect: ["-", "-", "-", "-", "-", "-", "-", "-", "-", "NonMonoReadCM", "-", "NonMonoReadCM", "NonMonoReadCM"],
        },
        Litmus {
            name: "FracturedReadCM: one reader's reads order two transactions both ways",
            history: "c1: w x=1, w y=1\nc2: w x=2, w y=2\nc3: r y=2, r x=1",
            expect: ["-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "FracturedReadCM", "FracturedReadCM"],
        },
        Litmus {
            name: "CyclicCF / ConflictCM: two sessions see concurrent writes in opposite orders",
            history: "c1: w x=1\nc2: w x=2\nc3: r x=1\nc3: r x=2\nc4: r x=2\nc4: r x=1",
            expect: ["-", "-", "-", "-", "-", "-", "-", "CyclicCF", "-", "-", "-", "-", "ConflictCM"],
        },
        Litmus {
            name: "CyclicHB: one session sees x=2 after its own x=1, then x=1 again",
            history: "c1: w x=1\nc2: w x=2\nc1: r x=2\nc1: r x=1",
            expect: ["-", "-", "-", "-", "-", "-", "-", "CyclicCF", "CyclicHB", "-", "-", "-", "ConflictCM"],
        },
        Litmus {
            name: "WriteHBInitRead: x=1 precedes the initial-x read only in the session's view",
            history: "c1: w x=1\nc1: w y=1\nc2: w y=2\nc2: w z=2\nc4: r y=1\nc4: w u=4\nc3: r z=2\nc3: r x=_\nc3: r u=4\nc3: r y=2",
            expect: ["-", "-", "-", "-", "-", "-", "-", "-", "WriteHBInitRead", "-", "-", "-", "-"],
        },
        Litmus { name: "allowed: stale read across unrelated sessions", history: "c1: w x=1\nc2: r x=_\nc2: r x=1", expect: ["-"; 13] },
        Litmus {
            name: "allowed: write skew under every level here",
            history: "c1: r x=_, r y=_, w x=1\nc2: r x=_, r y=_, w y=1",
            expect: ["-"; 13],
        },
        Litmus { name: "allowed: lost update", history: "c1: r x=_, w x=1\nc2: r x=_, w x=2", expect: ["-"; 13] },
        Litmus {
            name: "allowed: a failed transaction's write may be read; its reads are not judged",
            history: "c1?: w x=1, r y=9\nc2: r x=1",
            expect: ["-"; 13],
        },
        Litmus {
            name: "allowed: concurrent writes read in one order by everyone",
            history: "c1: w x=1\nc2: w x=2\nc3: r x=1\nc3: r x=2\nc4: r x=1\nc4: r x=2",
            expect: ["-"; 13],
        },
    ]
}
