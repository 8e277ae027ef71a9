//! The values written, by (key, value): how reads-from is inferred.
//!
//! A million-transaction history has ten million writes; a general hash map keyed by
//! (key, value) costs about 50 bytes per write. This open-addressing table stores only the
//! write's operation index and a fingerprint of its hash (8 bytes per slot, at most three
//! quarters full) and compares keys and values in the operations themselves.

use crate::graph::prefetch;
use crate::history::{Op, Val};

pub(crate) struct Written {
    /// `(fingerprint << 32) | (op + 1)`, 0 for an empty slot.
    slots: Vec<u64>,
    len: usize,
}

#[inline]
fn hash(key: u32, val: Val) -> u64 {
    let (tag, payload) = match val {
        Val::Null => (0u64, 0u64),
        Val::Int(i) => (1, i as u64),
        Val::Str(s) => (2, u64::from(s)),
    };
    // Two rounds of a multiply-xorshift mix: cheap, and spreads consecutive integers.
    let mut z = (u64::from(key) << 2 | tag) ^ payload.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93);
    z ^ (z >> 32)
}

impl Written {
    pub(crate) fn new() -> Written {
        Written { slots: Vec::new(), len: 0 }
    }

    /// Make room for `more` writes without growing.
    pub(crate) fn reserve(&mut self, ops: &[Op], more: usize) {
        let want = ((self.len + more) * 4 / 3 + 1).next_power_of_two().max(16);
        if want > self.slots.len() {
            self.rehash(ops, want);
        }
    }

    fn rehash(&mut self, ops: &[Op], size: usize) {
        let old = std::mem::replace(&mut self.slots, vec![0; size]);
        let mask = size - 1;
        for slot in old.into_iter().filter(|s| *s != 0) {
            let op = &ops[(slot as u32 - 1) as usize];
            let mut i = hash(op.key, op.val()) as usize & mask;
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
    }

    /// The hash of `(key, val)`, and a hint to the CPU to start fetching its slot: lookups and
    /// insertions done a few at a time, hinted first, overlap their cache misses.
    #[inline]
    pub(crate) fn hint(&self, key: u32, val: Val) -> u64 {
        let h = hash(key, val);
        if let Some(slot) = self.slots.get(h as usize & self.slots.len().wrapping_sub(1)) {
            prefetch(slot);
        }
        h
    }

    /// The op in the first slot whose fingerprint matches hash `h` (almost always the answer),
    /// to hint at before [`Written::get_hashed`] compares it.
    #[inline]
    pub(crate) fn likely(&self, h: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            if slot >> 32 == h >> 32 {
                return Some(slot as u32 - 1);
            }
            i = (i + 1) & mask;
        }
    }

    /// The write op of `(key, val)`, if any.
    #[inline]
    pub(crate) fn get(&self, ops: &[Op], key: u32, val: Val) -> Option<u32> {
        self.get_hashed(ops, hash(key, val), key, val)
    }

    /// [`Written::get`] with the hash already computed (by [`Written::hint`]).
    #[inline]
    pub(crate) fn get_hashed(&self, ops: &[Op], h: u64, key: u32, val: Val) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let finger = h >> 32;
        let mut i = h as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            if slot >> 32 == finger {
                let o = (slot as u32 - 1) as usize;
                if ops[o].key == key && ops[o].val() == val {
                    return Some(o as u32);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Record that op `o` (in `ops`) wrote its value; if another op already wrote the same value
    /// to the same key, keep the table as it was and return that op.
    pub(crate) fn insert(&mut self, ops: &[Op], o: u32) -> Result<(), u32> {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.rehash(ops, (self.slots.len() * 2).max(16));
        }
        let (key, val) = (ops[o as usize].key, ops[o as usize].val());
        let h = hash(key, val);
        let mask = self.slots.len() - 1;
        let finger = h >> 32;
        let mut i = h as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                self.slots[i] = finger << 32 | u64::from(o + 1);
                self.len += 1;
                return Ok(());
            }
            if slot >> 32 == finger {
                let other = slot as u32 - 1;
                let op = &ops[other as usize];
                if op.key == key && op.val() == val {
                    return Err(other);
                }
            }
            i = (i + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{KIND_READ, KIND_WRITE_FINAL};

    #[test]
    fn finds_every_write_and_only_those() {
        let mut ops = Vec::new();
        let mut t = Written::new();
        for i in 0..50_000u32 {
            let val = match i % 3 {
                0 => Val::Int(-i64::from(i) * 7 - 1),
                1 => Val::Str(i),
                _ => Val::Int(i64::from(i)),
            };
            ops.push(Op::new(KIND_WRITE_FINAL, i % 97, val));
            assert_eq!(t.insert(&ops, i), Ok(()));
        }
        for (o, op) in ops.clone().iter().enumerate() {
            assert_eq!(t.get(&ops, op.key, op.val()), Some(o as u32));
            assert_eq!(t.get(&ops, op.key + 97, op.val()), None);
            // The same value again, for the same key: the first write is named.
            ops.push(Op::new(KIND_WRITE_FINAL, op.key, op.val()));
            assert_eq!(t.insert(&ops, ops.len() as u32 - 1), Err(o as u32));
        }
        ops.push(Op::new(KIND_READ, 0, Val::Null));
        assert_eq!(t.get(&ops, 0, Val::Null), None);
    }
}
