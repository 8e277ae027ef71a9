//! The event queue: events ordered by `(time, sequence number)`.
//!
//! Equal times break by insertion order, never by anything hash- or address-dependent, so the
//! same inputs always pop in the same order. Payloads live in a slab; the heap moves only
//! 24-byte keys, so large messages are never shuffled around by sift operations.

use crate::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    time: Time,
    seq: u64,
    slot: u32,
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: `BinaryHeap` is a max-heap and we want the earliest event first.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A min-queue of events by `(time, insertion sequence)`.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Key>,
    slab: Vec<Option<E>>,
    free: Vec<u32>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), slab: Vec::new(), free: Vec::new(), seq: 0 }
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
                assert!(self.slab.len() < u32::MAX as usize, "event queue full");
                self.slab.push(Some(event));
                (self.slab.len() - 1) as u32
            }
        };
        self.heap.push(Key { time, seq: self.seq, slot });
        self.seq += 1;
    }

    pub fn pop(&mut self) -> Option<(Time, E)> {
        let key = self.heap.pop()?;
        let event = self.slab[key.slot as usize].take().expect("queued slot holds an event");
        self.free.push(key.slot);
        Some((key.time, event))
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|k| k.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
    fn slots_are_reused() {
        let mut q = EventQueue::default();
        for i in 0..100u64 {
            q.push(i, i);
            assert_eq!(q.pop(), Some((i, i)));
        }
        assert_eq!(q.slab.len(), 1);
    }
}
