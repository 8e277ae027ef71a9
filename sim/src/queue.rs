//! The event queue: events ordered by `(time, sequence number)`.
//!
//! Equal times break by insertion order, never by anything hash- or address-dependent, so the
//! same inputs always pop in the same order. Payloads live in a slab; the queue orders only
//! packed 16-byte keys, so large messages are never shuffled around.
//!
//! With few events pending (the common case: a few thousand at most) the keys sit in one
//! binary heap. With many, a heap no longer fits in cache and every pop misses it several
//! times, so the keys split in two: a heap of the soonest ones (`near`) and an unordered
//! vector of the rest (`far`). Pops take from `near`; when it runs dry the next quarter of
//! `far` is selected in linear time and heapified. Both shapes pop keys in exactly the same
//! order, so the choice never changes a run.

use crate::time::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Bits of the packed key: time (64) | sequence (40) | slab slot (24).
const SLOT_BITS: u32 = 24;
const SEQ_BITS: u32 = 40;
/// The most events that may be pending at once.
pub const PENDING_MAX: usize = 1 << SLOT_BITS;
/// The most events one queue may ever accept (about 10^12).
pub const PUSHES_MAX: u64 = 1 << SEQ_BITS;

/// Above this many keys in one heap, split into `near` and `far`.
const SPLIT_ABOVE: usize = 16_384;
/// A refill moves at least this many keys to `near` (and all of `far` when it holds fewer).
const REFILL_MIN: usize = 4_096;

/// A min-queue of events by `(time, insertion sequence)`.
///
/// Keys are `u128`s — time, sequence and slab slot packed so that integer order is event
/// order — so a sift step is one comparison and a 16-byte move. (A hand-written 4-ary heap
/// measured slower than std's binary heap here.)
#[derive(Debug)]
pub struct EventQueue<E> {
    /// The soonest keys: every key here is ≤ `bound`.
    near: BinaryHeap<Reverse<u128>>,
    /// The other keys, unordered: every key here is > `bound`.
    far: Vec<u128>,
    /// `u128::MAX` while `far` is empty and unused (one plain heap).
    bound: u128,
    slab: Vec<Option<E>>,
    free: Vec<u32>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { near: BinaryHeap::new(), far: Vec::new(), bound: u128::MAX, slab: Vec::new(), free: Vec::new(), seq: 0 }
    }
}

impl<E> EventQueue<E> {
    pub fn push(&mut self, time: Time, event: E) {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slab[slot as usize] = Some(event);
                slot
            }
            None => {
                assert!(self.slab.len() < PENDING_MAX, "more than {PENDING_MAX} pending events");
                self.slab.push(Some(event));
                (self.slab.len() - 1) as u32
            }
        };
        assert!(self.seq < PUSHES_MAX, "more than {PUSHES_MAX} events scheduled");
        let key = ((time as u128) << 64) | ((self.seq as u128) << SLOT_BITS) | slot as u128;
        self.seq += 1;
        if key <= self.bound {
            self.near.push(Reverse(key));
            if self.bound == u128::MAX && self.near.len() > SPLIT_ABOVE {
                self.split();
            }
        } else {
            self.far.push(key);
        }
    }

    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.near.is_empty() {
            self.refill();
        }
        let Reverse(key) = self.near.pop()?;
        let slot = (key as u64 & ((1 << SLOT_BITS) - 1)) as usize;
        let event = self.slab[slot].take().expect("queued slot holds an event");
        self.free.push(slot as u32);
        Some(((key >> 64) as Time, event))
    }

    pub fn peek_time(&mut self) -> Option<Time> {
        if self.near.is_empty() {
            self.refill();
        }
        self.near.peek().map(|Reverse(k)| (k >> 64) as Time)
    }

    pub fn len(&self) -> usize {
        self.near.len() + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The one heap grew too large: move it all to `far` and refill `near` from it.
    fn split(&mut self) {
        let keys = std::mem::take(&mut self.near).into_vec();
        self.far.extend(keys.into_iter().map(|Reverse(k)| k));
        self.bound = 0;
        self.refill();
    }

    /// Moves the smallest quarter of `far` (at least `REFILL_MIN` keys, or all) to `near`.
    fn refill(&mut self) {
        if self.far.is_empty() {
            return;
        }
        let take = (self.far.len() / 4).max(REFILL_MIN);
        let mut keys = std::mem::take(&mut self.near).into_vec();
        if take >= self.far.len() {
            keys.extend(self.far.drain(..).map(Reverse));
            self.bound = u128::MAX;
        } else {
            // Descending order puts the `take` smallest keys at the end, so moving them out
            // shifts nothing.
            let at = self.far.len() - take;
            self.far.select_nth_unstable_by(at, |a, b| b.cmp(a));
            self.bound = self.far[at];
            keys.extend(self.far.drain(at..).map(Reverse));
        }
        self.near = BinaryHeap::from(keys);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, "c");
        q.push(1, "a");
        q.push(5, "d");
        q.push(1, "b");
        q.push(3, "x");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(1, "a"), (1, "b"), (3, "x"), (5, "c"), (5, "d")]);
        assert!(q.is_empty());
    }

    #[test]
    fn matches_a_sorted_order_on_random_input() {
        let mut q = EventQueue::default();
        let mut x: u64 = 12345;
        let mut expected = Vec::new();
        for i in 0..5000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let t = (x >> 33) % 1000;
            q.push(t, i);
            expected.push((t, i));
            if i % 7 == 0 {
                expected.sort();
                let first = expected.remove(0);
                assert_eq!(q.pop(), Some(first));
            }
        }
        expected.sort();
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(rest, expected);
    }

    #[test]
    fn many_pending_events_pop_in_the_same_order_as_one_heap() {
        // Enough events to split into near and far, refill many times and merge back.
        let mut q = EventQueue::default();
        let mut reference = BinaryHeap::new();
        let mut x: u64 = 99;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        let mut seq = 0u64;
        let mut push = |q: &mut EventQueue<u64>, reference: &mut BinaryHeap<Reverse<(u64, u64)>>, t: u64| {
            q.push(t, seq);
            reference.push(Reverse((t, seq)));
            seq += 1;
        };
        for _ in 0..60_000 {
            let t = next() % 1_000_000;
            push(&mut q, &mut reference, t);
        }
        assert!(q.bound < u128::MAX, "split");
        for round in 0..300_000u64 {
            let Reverse(expected) = reference.pop().unwrap();
            assert_eq!(q.pop(), Some(expected));
            let now = expected.0;
            // Grow, hold, then drain the queue, with ties on purpose.
            let pushes = if round < 100_000 {
                2
            } else if round < 200_000 {
                1
            } else {
                0
            };
            for _ in 0..pushes {
                let t = now + next() % 1_000;
                push(&mut q, &mut reference, t);
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some(Reverse(expected)) = reference.pop() {
            assert_eq!(q.pop(), Some(expected));
        }
        assert!(q.is_empty());
        assert_eq!(q.bound, u128::MAX, "merged back into one heap");
    }

    #[test]
    fn slots_are_reused() {
        let mut q = EventQueue::default();
        for i in 0..100u64 {
            q.push(i, i);
            assert_eq!(q.pop(), Some((i, i)));
        }
        assert_eq!(q.slab.len(), 1);
    }
}
