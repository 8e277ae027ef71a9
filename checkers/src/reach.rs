//! "Does unit `v` causally precede unit `u`?" without vector clocks.
//!
//! Vector clocks answer in O(1) but cost O(n·k) to build, and on simulator histories k (the
//! width of the causal order among the writes someone reads) grows with the run. The questions
//! the witness-order proof asks are few and almost all answered "no", so this index is built
//! for cheap negative answers: GRAIL's interval labels (Yildirim, Chaoji and Zaki, VLDB 2010).
//! Each of a few depth-first traversals numbers units in post-order (`rank`) and gives each unit
//! the smallest rank among its descendants (`low`); if `v` reaches `u`, then `u`'s interval
//! `[low, rank]` lies inside `v`'s in every traversal. When all intervals agree, a depth-first
//! search from `v` decides, entering only successors whose intervals still contain `u`'s and
//! that come before `u` in a topological order. Answers are exact; only their cost is a guess.

use crate::graph::Units;
use crate::history::NONE;

/// Traversals, each with its own order of roots and children (GRAIL finds 2–5 enough).
const TRAVERSALS: usize = 3;

pub(crate) struct Reach<'a> {
    units: &'a Units,
    succ: &'a (Vec<u32>, Vec<u32>),
    /// Per unit, per traversal: (low, rank), ranks counted from 1.
    label: Vec<[(u32, u32); TRAVERSALS]>,
    /// Search marks: `stamp[x] == generation` once `x` is on a search's stack. A search that
    /// fails to find `target` leaves its marks: the units it entered do not reach `target`, so
    /// the next search for the same target skips them (the proof asks about one read's unit
    /// many times in a row).
    stamp: Vec<u32>,
    generation: u32,
    target: usize,
    stack: Vec<u32>,
    /// Units entered by searches so far (the caller's work budget).
    pub visits: u64,
}

/// A fixed pseudo-random number from a unit and a traversal (splitmix64's finaliser), so that
/// traversals differ yet every run builds the same labels.
fn mix(x: u64, t: u64) -> u64 {
    let mut z = x.wrapping_add(t.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl<'a> Reach<'a> {
    pub(crate) fn build(units: &'a Units, succ: &'a (Vec<u32>, Vec<u32>)) -> Reach<'a> {
        let n = units.n;
        let mut reach = Reach {
            units,
            succ,
            label: vec![[(0, 0); TRAVERSALS]; n],
            stamp: vec![0; n],
            generation: 0,
            target: usize::MAX,
            stack: Vec::new(),
            visits: 0,
        };
        for t in 0..TRAVERSALS {
            reach.traverse(t);
        }
        reach
    }

    /// The successors of `x`: its session successor, then the others.
    #[inline]
    fn successor(&self, x: usize, i: usize) -> u32 {
        let next = self.units.next[x];
        let others = &self.succ.1[self.succ.0[x] as usize..self.succ.0[x + 1] as usize];
        if next == NONE {
            others[i]
        } else if i == 0 {
            next
        } else {
            others[i - 1]
        }
    }

    #[inline]
    fn degree(&self, x: usize) -> usize {
        usize::from(self.units.next[x] != NONE) + (self.succ.0[x + 1] - self.succ.0[x]) as usize
    }

    /// One depth-first traversal: traversal 0 takes roots and children in order, 1 in reverse
    /// order, the others start each child list at a pseudo-random place.
    fn traverse(&mut self, t: usize) {
        let n = self.units.n;
        let mut rank = 0u32;
        // (unit, children visited so far, where its child list starts)
        let mut stack: Vec<(u32, u32, u32)> = Vec::new();
        for i in 0..n {
            let root = if t == 1 { n - 1 - i } else { i };
            if self.label[root][t].1 != 0 {
                continue;
            }
            let start = |reach: &Reach<'_>, x: usize| -> u32 {
                let d = reach.degree(x);
                match t {
                    0 | 1 => 0,
                    _ if d > 1 => (mix(x as u64, t as u64) % d as u64) as u32,
                    _ => 0,
                }
            };
            // Mark as entered with a provisional rank of u32::MAX (never a real rank).
            self.label[root][t] = (u32::MAX, u32::MAX);
            stack.push((root as u32, 0, start(self, root)));
            while let Some(top) = stack.last_mut() {
                let x = top.0 as usize;
                let d = self.degree(x);
                if (top.1 as usize) < d {
                    let k = top.1 as usize;
                    top.1 += 1;
                    let i = if t == 1 { d - 1 - k } else { (top.2 as usize + k) % d };
                    let c = self.successor(x, i) as usize;
                    if self.label[c][t].1 == 0 {
                        self.label[c][t] = (u32::MAX, u32::MAX);
                        let s = start(self, c);
                        stack.push((c as u32, 0, s));
                    }
                    continue;
                }
                stack.pop();
                rank += 1;
                let mut low = rank;
                for i in 0..d {
                    low = low.min(self.label[self.successor(x, i) as usize][t].0);
                }
                self.label[x][t] = (low, rank);
            }
        }
    }

    /// Whether `u`'s intervals lie inside `v`'s in every traversal (necessary for `v` to reach
    /// `u`).
    #[inline]
    fn may_reach(&self, v: usize, u: usize) -> bool {
        let (a, b) = (&self.label[v], &self.label[u]);
        (0..TRAVERSALS).all(|t| a[t].0 <= b[t].0 && b[t].1 <= a[t].1)
    }

    /// Forget what failed searches learnt: `pos` is about to change.
    pub(crate) fn new_order(&mut self) {
        self.target = usize::MAX;
    }

    /// Whether `v` strictly precedes `u` in the causal order. `pos` is a topological order of
    /// it (positions by unit), used to prune; call [`Self::new_order`] before passing another.
    pub(crate) fn precedes(&mut self, v: usize, u: usize, pos: &[u32]) -> bool {
        if v == u || pos[v] >= pos[u] || !self.may_reach(v, u) {
            return false;
        }
        let units = self.units;
        if units.session[v] == units.session[u] {
            return true; // session order, and positions agree with it
        }
        if self.target != u {
            self.target = u;
            self.generation = self.generation.wrapping_add(1);
            if self.generation == 0 {
                self.stamp.fill(0);
                self.generation = 1;
            }
        }
        let generation = self.generation;
        if self.stamp[v] == generation {
            return false; // entered by an earlier search for `u`, which failed
        }
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        stack.push(v as u32);
        self.stamp[v] = generation;
        let mut found = false;
        'search: while let Some(x) = stack.pop() {
            let x = x as usize;
            self.visits += 1;
            for i in 0..self.degree(x) {
                let c = self.successor(x, i) as usize;
                if c == u {
                    found = true;
                    break 'search;
                }
                if self.stamp[c] != generation && pos[c] < pos[u] && self.may_reach(c, u) {
                    self.stamp[c] = generation;
                    stack.push(c as u32);
                }
            }
        }
        self.stack = stack;
        if found {
            // The marks now include units that reach `u`: the next search starts afresh.
            self.target = usize::MAX;
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Gran, topo_order};
    use crate::history::History;
    use crate::testgen::{GenParams, causal_records, serial_records};

    /// `precedes` against an explicit transitive closure, on every pair of units.
    fn agrees_with_closure(h: &History, gran: Gran) {
        let wf = crate::wf::analyze(h);
        let units = Units::build(h, &wf, gran);
        let succ = units.successors();
        let order = topo_order(&units, &succ, None).expect("generated histories are acyclic");
        let n = units.n;
        let mut pos = vec![0u32; n];
        for (i, u) in order.iter().enumerate() {
            pos[*u as usize] = i as u32;
        }
        // past[u]: the units strictly before u, as a bit set.
        let mut past = vec![vec![false; n]; n];
        for &u in &order {
            let u = u as usize;
            let mut preds: Vec<u32> = units.preds(u).to_vec();
            if units.prev[u] != NONE {
                preds.push(units.prev[u]);
            }
            for p in preds {
                let p = p as usize;
                let (below, above) = if p < u { past.split_at_mut(u) } else { unreachable!("preds come first in the history") };
                let (from, to) = (&below[p], &mut above[0]);
                to[p] = true;
                for (t, f) in to.iter_mut().zip(from) {
                    *t |= *f;
                }
            }
        }
        let mut reach = Reach::build(&units, &succ);
        for (u, row) in past.iter().enumerate() {
            for (v, expected) in row.iter().enumerate() {
                assert_eq!(reach.precedes(v, u, &pos), *expected, "does {v} precede {u}?");
            }
        }
    }

    #[test]
    fn answers_as_the_transitive_closure_does() {
        for seed in 0..12 {
            let p = GenParams { sessions: 2 + (seed % 5) as u32, txns_per_session: 12, ops_per_txn: 3, keys: 6, read_per_mille: 600, seed };
            for records in [serial_records(&p), causal_records(&p, 300)] {
                let h = History::from_records(None, &records).expect("generated histories are valid");
                agrees_with_closure(&h, Gran::Txn);
                agrees_with_closure(&h, Gran::Op);
            }
        }
    }
}
