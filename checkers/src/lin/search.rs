//! The linearizability search for one key: Wing & Gong's backtracking search with Lowe's
//! just-in-time linearization and memoisation of (linearized set, register value), as Knossos
//! and Porcupine do, over a register whose written values are unique.
//!
//! The operations are split into **chunks** at quiescent points (instants when no operation
//! is in flight): every operation of a chunk precedes every operation of the next in real time,
//! so each chunk is searched alone, starting from the value the previous one ended with. Which
//! of the previous chunk's possible end values is passed on does not matter: a value still read
//! later is the only one a linearization may end with (once overwritten, a unique value never
//! returns), and any other value is never read again.
//!
//! Unique values prune the search to nearly a straight line:
//! * a read of the current value that may go next (nothing unlinearized finished before it
//!   began) is linearized at once, without trying alternatives: reads do not change the
//!   register, and taking one earlier only removes a constraint;
//! * no write may follow the current value while a read of that value is still to come (it
//!   would be overwritten for good);
//! * a write whose value nobody reads may go as soon as it can, once the current value has no
//!   reads left: moved earlier, it is still followed by a write or by nothing.
//!
//! So branching happens only between writes whose values are read, and the memo table cuts
//! repeated states. The budget (steps: linearization attempts) bounds the work; when it runs out
//! the answer is "unknown", never a verdict.

use crate::fxhash::{FxHashSet, set_with_capacity};
use std::hash::{Hash, Hasher};

/// One operation of a key's register history, as the search sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RegOp {
    /// Invocation time (ns).
    pub inv: u64,
    /// Completion time (ns). For a `failed` write whose value is read: the earliest completion
    /// of a read of it (it took effect before then); see [`prepare`].
    pub cmp: u64,
    pub write: bool,
    /// The value: 0 is the key's initial value, `1..` the key's writes.
    pub val: u32,
    /// The operation's index in the history.
    pub op: u32,
    /// A write of a `failed` (unknown outcome) transaction: it may take effect at any time after
    /// its invocation, or never.
    pub failed: bool,
}

/// What the search concluded for a set of operations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Linearizable,
    /// Not linearizable: the chunk (a range of the prepared, sorted operations) that has no
    /// linearization, and the value it had to start from.
    Violation {
        chunk: std::ops::Range<usize>,
        start: u32,
    },
    /// The step budget ran out.
    Unknown,
}

/// Put operations in search form: sorted by invocation (ties by completion, then history
/// order), `failed` writes nobody reads dropped (placed after everything, they change nothing),
/// and the completion of a `failed` write that someone reads set to the earliest completion of
/// those reads (it must take effect before each of them). Both preserve the verdict exactly.
pub(crate) fn prepare(ops: &[RegOp], values: usize) -> Vec<RegOp> {
    // None: nobody reads the value (a read may complete at u64::MAX itself).
    let mut first_read_done: Vec<Option<u64>> = vec![None; values];
    for o in ops.iter().filter(|o| !o.write) {
        let v = o.val as usize;
        first_read_done[v] = Some(first_read_done[v].map_or(o.cmp, |d| d.min(o.cmp)));
    }
    let mut out: Vec<RegOp> = ops
        .iter()
        .filter_map(|o| {
            if !o.failed {
                return Some(*o);
            }
            first_read_done[o.val as usize].map(|done| RegOp { cmp: done.max(o.inv), ..*o })
        })
        .collect();
    out.sort_unstable_by_key(|o| (o.inv, o.cmp, o.op));
    out
}

/// Check prepared operations (see [`prepare`]) of one register with `values` values. Each
/// linearization attempt costs one step of `budget`.
pub(crate) fn check(ops: &[RegOp], values: usize, budget: &mut u64) -> Verdict {
    let mut reads_of = vec![0u32; values];
    for o in ops.iter().filter(|o| !o.write) {
        reads_of[o.val as usize] += 1;
    }
    let mut pending = reads_of.clone();
    let mut state = 0u32;
    let mut start = 0;
    let mut done_max = 0u64;
    for i in 0..ops.len() {
        done_max = done_max.max(ops[i].cmp);
        let quiescent = i + 1 == ops.len() || done_max < ops[i + 1].inv;
        if !quiescent {
            continue;
        }
        let chunk = start..i + 1;
        match Chunk::new(&ops[chunk.clone()]).search(state, &reads_of, &mut pending, budget) {
            Search::Linearized(end) => state = end,
            Search::Impossible => return Verdict::Violation { chunk, start: state },
            Search::OutOfBudget => return Verdict::Unknown,
        }
        start = i + 1;
    }
    Verdict::Linearizable
}

enum Search {
    Linearized(u32),
    Impossible,
    OutOfBudget,
}

const NIL: u32 = u32::MAX;

/// The events of one chunk (a call and a return per operation, in time order, calls first at
/// equal times: intervals are closed) as a doubly linked list. Linearizing an operation
/// unlinks both of its events; the operations that may go next are the calls before the first
/// return.
struct Chunk<'a> {
    ops: &'a [RegOp],
    next: Vec<u32>,
    prev: Vec<u32>,
    /// Operation of each event; returns have the top bit set.
    event: Vec<u32>,
    head: u32,
}

const RETURN: u32 = 1 << 31;

impl<'a> Chunk<'a> {
    fn new(ops: &'a [RegOp]) -> Chunk<'a> {
        let n = ops.len() as u32;
        let mut events: Vec<(u64, bool, u32)> = Vec::with_capacity(2 * ops.len());
        for (i, o) in ops.iter().enumerate() {
            events.push((o.inv, false, i as u32));
            events.push((o.cmp, true, i as u32));
        }
        events.sort_unstable();
        // Nodes: event e is node e (calls of op i at 2i, returns at 2i+1); the head is 2n.
        let head = 2 * n;
        let mut next = vec![NIL; 2 * ops.len() + 1];
        let mut prev = vec![NIL; 2 * ops.len() + 1];
        let mut event = vec![0u32; 2 * ops.len()];
        let mut last = head;
        for (_, is_return, i) in events {
            let node = 2 * i + u32::from(is_return);
            event[node as usize] = if is_return { i | RETURN } else { i };
            next[last as usize] = node;
            prev[node as usize] = last;
            last = node;
        }
        Chunk { ops, next, prev, event, head }
    }

    fn unlink(&mut self, node: u32) {
        let (p, n) = (self.prev[node as usize], self.next[node as usize]);
        self.next[p as usize] = n;
        if n != NIL {
            self.prev[n as usize] = p;
        }
    }

    fn relink(&mut self, node: u32) {
        let (p, n) = (self.prev[node as usize], self.next[node as usize]);
        self.next[p as usize] = node;
        if n != NIL {
            self.prev[n as usize] = node;
        }
    }

    fn lift(&mut self, i: u32) {
        self.unlink(2 * i);
        self.unlink(2 * i + 1);
    }

    fn unlift(&mut self, i: u32) {
        self.relink(2 * i + 1);
        self.relink(2 * i);
    }

    /// The operation of the call at `node`, or None at a return or the end.
    fn call_at(&self, node: u32) -> Option<u32> {
        if node == NIL {
            return None;
        }
        let e = self.event[node as usize];
        (e & RETURN == 0).then_some(e)
    }

    /// The first operation that may go next and satisfies `want`.
    fn first_ready(&self, want: impl Fn(&RegOp) -> bool) -> Option<u32> {
        let mut node = self.next[self.head as usize];
        while let Some(i) = self.call_at(node) {
            if want(&self.ops[i as usize]) {
                return Some(i);
            }
            node = self.next[node as usize];
        }
        None
    }

    /// Search a linearization of the chunk starting at value `start`. `reads_of` counts every
    /// read of each value in the key, `pending` those not linearized yet (updated as the chunk's
    /// reads are linearized; left as is on failure).
    fn search(&mut self, start: u32, reads_of: &[u32], pending: &mut [u32], budget: &mut u64) -> Search {
        let n = self.ops.len();
        let mut done = Linearized::new(n);
        let mut state = start;
        let mut stack: Vec<Frame> = Vec::new();
        let mut memo: FxHashSet<MemoKey> = set_with_capacity(n.min(1 << 16));
        // None: a node just entered (look for a forced move first); Some(node): scanning the
        // writes that may go next, from `node` on.
        let mut cursor: Option<u32> = None;
        loop {
            if done.count == n {
                return Search::Linearized(state);
            }
            let (choice, forced) = match cursor {
                None => {
                    let read_now = self.first_ready(|o| !o.write && o.val == state);
                    let blind = || self.first_ready(|o| o.write && reads_of[o.val as usize] == 0);
                    match read_now {
                        Some(i) => (Some(i), true),
                        // The current value is still to be read, but no read of it may go now.
                        None if pending[state as usize] > 0 => (None, true),
                        None => match blind() {
                            Some(i) => (Some(i), true),
                            None => {
                                cursor = Some(self.next[self.head as usize]);
                                continue;
                            }
                        },
                    }
                }
                Some(node) => match self.call_at(node) {
                    // Reads of other values cannot go; reads of the current value were forced.
                    Some(i) if !self.ops[i as usize].write => {
                        cursor = Some(self.next[node as usize]);
                        continue;
                    }
                    Some(i) => (Some(i), false),
                    None => (None, false),
                },
            };
            let Some(i) = choice else {
                match self.backtrack(&mut stack, &mut done, &mut state, pending) {
                    Some(next) => {
                        cursor = Some(next);
                        continue;
                    }
                    None => return Search::Impossible,
                }
            };
            if *budget == 0 {
                return Search::OutOfBudget;
            }
            *budget -= 1;
            let op = self.ops[i as usize];
            let frame = Frame { op: i, state, forced, first: done.first, last: done.last };
            done.set(i);
            let after = if op.write { op.val } else { state };
            if memo.insert(done.key(after)) {
                if !op.write {
                    pending[op.val as usize] -= 1;
                }
                self.lift(i);
                state = after;
                stack.push(frame);
                cursor = None;
                continue;
            }
            // Seen before, and it led nowhere.
            done.clear(i, &frame);
            if !forced {
                cursor = Some(self.next[2 * i as usize]);
                continue;
            }
            match self.backtrack(&mut stack, &mut done, &mut state, pending) {
                Some(next) => cursor = Some(next),
                None => return Search::Impossible,
            }
        }
    }

    /// Undo linearizations up to the last choice that has alternatives; return where the scan
    /// of those alternatives resumes, or None if there is none left.
    fn backtrack(&mut self, stack: &mut Vec<Frame>, done: &mut Linearized, state: &mut u32, pending: &mut [u32]) -> Option<u32> {
        while let Some(f) = stack.pop() {
            let op = self.ops[f.op as usize];
            if !op.write {
                pending[op.val as usize] += 1;
            }
            self.unlift(f.op);
            done.clear(f.op, &f);
            *state = f.state;
            if !f.forced {
                return Some(self.next[2 * f.op as usize]);
            }
        }
        None
    }
}

struct Frame {
    op: u32,
    /// The value before the operation.
    state: u32,
    /// No alternative was (or needs to be) tried at this point.
    forced: bool,
    /// `Linearized::first` and `last` before the operation.
    first: u32,
    last: u32,
}

/// The linearized operations of a chunk (indices in invocation order) as a bitset, with the
/// first operation not linearized yet. Every linearized operation beyond `first` began before
/// `first` completed, so a state is named compactly by `first` and those few.
struct Linearized {
    bits: Vec<u64>,
    first: u32,
    /// One past the last linearized operation (0 if none).
    last: u32,
    count: usize,
    n: u32,
}

/// A memo entry: the register value, `first`, then the linearized operations beyond it.
#[derive(PartialEq, Eq)]
struct MemoKey(Box<[u32]>);

impl Hash for MemoKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl Linearized {
    fn new(n: usize) -> Linearized {
        Linearized { bits: vec![0; n.div_ceil(64)], first: 0, last: 0, count: 0, n: n as u32 }
    }

    fn has(&self, i: u32) -> bool {
        self.bits[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    fn set(&mut self, i: u32) {
        self.bits[(i / 64) as usize] |= 1 << (i % 64);
        self.count += 1;
        self.last = self.last.max(i + 1);
        while self.first < self.n && self.has(self.first) {
            self.first += 1;
        }
    }

    /// Undo `set(i)`, made when `before` was taken.
    fn clear(&mut self, i: u32, before: &Frame) {
        self.bits[(i / 64) as usize] &= !(1 << (i % 64));
        self.count -= 1;
        self.first = before.first;
        self.last = before.last;
    }

    fn key(&self, value: u32) -> MemoKey {
        let mut key = vec![value, self.first];
        let mut w = (self.first / 64) as usize;
        while w < self.last.div_ceil(64) as usize {
            let mut word = self.bits[w];
            if w == (self.first / 64) as usize {
                word &= !0u64 << (self.first % 64);
            }
            while word != 0 {
                key.push(w as u32 * 64 + word.trailing_zeros());
                word &= word - 1;
            }
            w += 1;
        }
        MemoKey(key.into_boxed_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(inv: u64, cmp: u64, val: u32) -> RegOp {
        RegOp { inv, cmp, write: true, val, op: 0, failed: false }
    }
    fn r(inv: u64, cmp: u64, val: u32) -> RegOp {
        RegOp { write: false, ..w(inv, cmp, val) }
    }
    fn verdict(ops: &[RegOp]) -> Verdict {
        let mut ops = ops.to_vec();
        for (i, o) in ops.iter_mut().enumerate() {
            o.op = i as u32;
        }
        let values = ops.iter().map(|o| o.val as usize + 1).max().unwrap_or(1);
        check(&prepare(&ops, values), values, &mut 1_000_000)
    }

    #[test]
    fn overlapping_operations_may_take_either_order() {
        assert_eq!(verdict(&[w(0, 10, 1), r(5, 6, 0), r(7, 8, 1)]), Verdict::Linearizable);
        assert_eq!(verdict(&[w(0, 10, 1), w(0, 10, 2), r(11, 12, 1)]), Verdict::Linearizable);
    }

    #[test]
    fn a_stale_read_has_no_linearization() {
        let v = verdict(&[w(0, 1, 1), w(2, 3, 2), r(4, 5, 1)]);
        assert!(matches!(v, Verdict::Violation { .. }), "{v:?}");
        // The initial value after a completed write.
        assert!(matches!(verdict(&[w(0, 1, 1), r(2, 3, 0)]), Verdict::Violation { .. }));
    }

    #[test]
    fn closed_intervals_touching_are_concurrent() {
        assert_eq!(verdict(&[w(0, 5, 1), r(5, 6, 0)]), Verdict::Linearizable);
    }

    #[test]
    fn the_value_carried_between_chunks_must_survive() {
        // x=1 is read again after a quiescent point; x=2, written in between, overwrote it.
        let v = verdict(&[w(0, 1, 1), r(2, 3, 1), w(4, 5, 2), r(6, 7, 2), r(8, 9, 1)]);
        assert!(matches!(v, Verdict::Violation { .. }), "{v:?}");
        let ok = verdict(&[w(0, 1, 1), r(2, 3, 1), w(4, 5, 2), r(6, 7, 2), w(8, 9, 3), r(10, 11, 3)]);
        assert_eq!(ok, Verdict::Linearizable);
    }

    #[test]
    fn an_unread_failed_write_is_dropped_and_a_read_one_bounded_by_its_reads() {
        let failed = RegOp { failed: true, ..w(0, u64::MAX, 1) };
        assert_eq!(prepare(&[failed], 2), vec![]);
        let p = prepare(&[failed, r(3, 7, 1), r(4, 9, 1)], 2);
        assert_eq!(p[0].cmp, 7);
        // A read may complete at the last representable instant; its write is still kept.
        assert_eq!(verdict(&[failed, r(3, u64::MAX, 1)]), Verdict::Linearizable);
        assert_eq!(
            verdict(&[failed, r(3, 7, 1), w(8, 9, 2), r(10, 11, 1)]).clone(),
            verdict(&[w(0, 7, 1), r(3, 7, 1), w(8, 9, 2), r(10, 11, 1)])
        );
    }

    #[test]
    fn the_budget_gives_unknown_not_a_verdict() {
        let ops = [w(0, 10, 1), w(0, 10, 2), r(0, 10, 1), r(0, 10, 2)];
        assert_eq!(check(&prepare(&ops, 3), 3, &mut 1), Verdict::Unknown);
    }
}
