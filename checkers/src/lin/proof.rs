//! Why a set of register operations has no linearization, in terms a person can check.
//!
//! With unique written values, a value's write and its reads form a **cluster** that must be
//! one unbroken stretch of any linearization (once overwritten, a value never comes back), and
//! the initial value's cluster comes first. So a cluster X must precede a cluster Y as soon as
//! some operation of X completes before some operation of Y is invoked. Gibbons & Korach (1997)
//! show that such a history is linearizable exactly when no read completes before its own write
//! is invoked and no two clusters must each precede the other. Any failing set therefore holds
//! one of three proofs, each a handful of operations:
//! * [`Proof::FutureRead`]: a read completed before its value's write began;
//! * [`Proof::Stale`]: a write began after the value's write completed, and completed before a
//!   read of that value began (Jepsen's stale read);
//! * [`Proof::TwoWay`]: any other pair of values each forced before the other.
//!
//! The search ([`super::search`]) gives the verdicts; this module only explains them.

use super::search::RegOp;

#[derive(Clone, Debug)]
pub(crate) enum Proof {
    /// `read` completed before `write`, of the value it returned, was invoked.
    FutureRead { write: RegOp, read: RegOp },
    /// `read` returned the value of `old` (None: the initial value); `newer` was invoked after
    /// `old` completed and completed before `read` was invoked.
    Stale { old: Option<RegOp>, newer: RegOp, read: RegOp },
    /// Value `a` (write `a_write`; None: the initial value) must precede value `b` because
    /// `ab.0` (an operation of `a`; None: the initial value, which precedes every write)
    /// completed before `ab.1` (of `b`) was invoked; and `b` must precede `a` because `ba.0`
    /// (of `b`) completed before `ba.1` (of `a`) was invoked.
    TwoWay { a_write: Option<RegOp>, b_write: RegOp, ab: (Option<RegOp>, RegOp), ba: (RegOp, RegOp) },
}

impl Proof {
    /// The read at fault, if the proof has one.
    pub(crate) fn read(&self) -> Option<&RegOp> {
        match self {
            Proof::FutureRead { read, .. } | Proof::Stale { read, .. } => Some(read),
            Proof::TwoWay { .. } => None,
        }
    }
}

/// One value's cluster, with the operations that bound it in real time.
struct Cluster {
    write: Option<RegOp>,
    /// The earliest completion among its operations (None: the initial value's virtual
    /// write, which completes before everything), and the operation.
    first_done: (i128, Option<RegOp>),
    /// The latest invocation among its operations, and the operation.
    last_begun: (i128, RegOp),
}

/// A proof that the prepared operations `ops` (see [`super::search::prepare`]) have no
/// linearization, or None if they have one.
pub(crate) fn prove(ops: &[RegOp]) -> Option<Proof> {
    let values = ops.iter().map(|o| o.val as usize + 1).max().unwrap_or(0);
    let mut writes: Vec<Option<RegOp>> = vec![None; values];
    for o in ops.iter().filter(|o| o.write) {
        writes[o.val as usize] = Some(*o);
    }
    // Reads of a value whose write is not in the set say nothing here.
    let ops: Vec<RegOp> = ops.iter().filter(|o| o.write || o.val == 0 || writes[o.val as usize].is_some()).copied().collect();
    let ops = &ops[..];
    // A read that completed before its write began; the earliest such read.
    let future = ops
        .iter()
        .filter(|r| !r.write)
        .filter_map(|r| writes[r.val as usize].filter(|w| r.cmp < w.inv).map(|w| (w, *r)))
        .min_by_key(|(w, r)| (r.cmp, w.inv, r.op));
    if let Some((write, read)) = future {
        return Some(Proof::FutureRead { write, read });
    }
    let clusters = clusters(ops, &writes);
    let (a, b) = two_way(&clusters)?;
    for (x, y) in [(a, b), (b, a)] {
        if let Some(stale) = stale(ops, &clusters[x], &clusters[y]) {
            return Some(stale);
        }
    }
    // Put the initial value first, so that it is always `a`.
    let (a, b) = if clusters[b].write.is_none() { (b, a) } else { (a, b) };
    let (ca, cb) = (&clusters[a], &clusters[b]);
    Some(Proof::TwoWay {
        a_write: ca.write,
        b_write: cb.write.expect("only the initial value has no write"),
        ab: (ca.first_done.1, cb.last_begun.1),
        ba: (cb.first_done.1.expect("only the initial value has a virtual write"), ca.last_begun.1),
    })
}

fn clusters(ops: &[RegOp], writes: &[Option<RegOp>]) -> Vec<Cluster> {
    let mut by_value: Vec<Option<Cluster>> = (0..writes.len()).map(|_| None).collect();
    for o in ops {
        let c = by_value[o.val as usize].get_or_insert_with(|| Cluster {
            write: writes[o.val as usize],
            first_done: if o.val == 0 { (-1, None) } else { (i128::MAX, None) },
            last_begun: (-1, *o),
        });
        // A failed write's completion is only the earliest completion of its reads: name the
        // read instead, which completed at the same time.
        let done = i128::from(o.cmp);
        if !(o.write && o.failed) && done < c.first_done.0 {
            c.first_done = (done, Some(*o));
        }
        let begun = i128::from(o.inv);
        if begun > c.last_begun.0 {
            c.last_begun = (begun, *o);
        }
    }
    by_value.into_iter().flatten().collect()
}

/// Two clusters that must each precede the other, if any: X before Y when X's earliest
/// completion is before Y's latest invocation. Clusters sorted by earliest completion; for each
/// Y, the candidates X form a prefix, of which the two latest-invoked are kept.
fn two_way(clusters: &[Cluster]) -> Option<(usize, usize)> {
    let mut order: Vec<usize> = (0..clusters.len()).collect();
    order.sort_by_key(|c| (clusters[*c].first_done.0, *c));
    // Per prefix length, the two clusters of the prefix invoked latest.
    let mut top: Vec<[Option<usize>; 2]> = vec![[None, None]];
    for c in &order {
        let mut best = *top.last().expect("starts with the empty prefix");
        let begun = |x: Option<usize>| x.map_or(-2, |x| clusters[x].last_begun.0);
        if clusters[*c].last_begun.0 > begun(best[0]) {
            best = [Some(*c), best[0]];
        } else if clusters[*c].last_begun.0 > begun(best[1]) {
            best[1] = Some(*c);
        }
        top.push(best);
    }
    for y in &order {
        let cy = &clusters[*y];
        let prefix = order.partition_point(|x| clusters[*x].first_done.0 < cy.last_begun.0);
        let Some(x) = top[prefix].into_iter().flatten().find(|x| x != y) else {
            continue;
        };
        if clusters[x].last_begun.0 > cy.first_done.0 {
            return Some((x, *y));
        }
    }
    None
}

/// The stale-read shape with `old` the value read and `newer` the write that hid it: `newer`'s
/// write (committed) began after `old`'s (committed, or the initial value) completed and
/// completed before a read of `old` began. The latest such read is named.
fn stale(ops: &[RegOp], old: &Cluster, newer: &Cluster) -> Option<Proof> {
    let w = newer.write?;
    if w.failed || old.write.is_some_and(|o| o.failed || o.cmp >= w.inv) {
        return None;
    }
    let old_val = old.last_begun.1.val;
    let read = ops.iter().filter(|r| !r.write && r.val == old_val && w.cmp < r.inv).max_by_key(|r| (r.inv, r.op))?;
    Some(Proof::Stale { old: old.write, newer: w, read: *read })
}

#[cfg(test)]
mod tests {
    use super::super::search::{Verdict, check, prepare};
    use super::*;
    use crate::testgen::SplitMix64;

    fn op(write: bool, inv: u64, cmp: u64, val: u32, op: u32) -> RegOp {
        RegOp { inv, cmp, write, val, op, failed: false }
    }

    #[test]
    fn names_the_three_shapes() {
        let w = |i, c, v, o| op(true, i, c, v, o);
        let r = |i, c, v, o| op(false, i, c, v, o);
        assert!(matches!(prove(&[r(0, 1, 1, 0), w(2, 3, 1, 1)]), Some(Proof::FutureRead { .. })));
        let stale = prove(&[w(0, 1, 1, 0), w(2, 3, 2, 1), r(4, 5, 1, 2)]);
        assert!(matches!(stale, Some(Proof::Stale { old: Some(_), .. })), "{stale:?}");
        assert!(matches!(prove(&[w(0, 1, 1, 0), r(2, 3, 0, 1)]), Some(Proof::Stale { old: None, .. })));
        // Two readers see two overlapping writes in opposite orders, one after the other.
        let two = prove(&[w(0, 10, 1, 0), w(0, 10, 2, 1), r(11, 12, 1, 2), r(13, 14, 2, 3), r(15, 16, 1, 4)]);
        assert!(matches!(two, Some(Proof::TwoWay { .. })), "{two:?}");
        assert!(prove(&[w(0, 10, 1, 0), w(0, 10, 2, 1), r(11, 12, 1, 2)]).is_none());
    }

    /// The characterization agrees with the search on random small registers.
    #[test]
    fn a_proof_exists_exactly_when_the_search_finds_no_linearization() {
        let mut rng = SplitMix64::new(7);
        for _ in 0..20_000 {
            let n = 1 + rng.below(7) as u32;
            let writes = 1 + rng.below(u64::from(n)) as u32;
            let mut ops = Vec::new();
            for i in 0..n {
                let inv = rng.below(20);
                let cmp = inv + rng.below(8);
                let write = i < writes;
                let val = if write { i + 1 } else { rng.below(u64::from(writes) + 1) as u32 };
                let mut o = op(write, inv, cmp, val, i);
                o.failed = write && rng.chance(150);
                if o.failed {
                    o.cmp = u64::MAX;
                }
                ops.push(o);
            }
            let values = writes as usize + 1;
            let prepared = prepare(&ops, values);
            let mut budget = u64::MAX;
            let verdict = check(&prepared, values, &mut budget);
            let proof = prove(&prepared);
            assert_eq!(matches!(verdict, Verdict::Violation { .. }), proof.is_some(), "{ops:?}: {verdict:?} vs {proof:?}");
        }
    }
}
