//! The values written, by (key, value): how reads-from is inferred.
//!
//! A million-transaction history has ten million writes; a general hash map keyed by
//! (key, value) costs about 50 bytes per write. This open-addressing table stores only the
//! write's operation index and a fingerprint of its hash (8 bytes per slot, at most three
//! quarters full) and compares keys and values in the operations themselves.

use crate::graph::prefetch;
use crate::history::{Op, Val};

pub(crate) struct Written {
    /// `(fingerprint << 32) | (op + 1)`, 0 for an empty slot. Two halves (shards), each probed
    /// on its own (a probe wraps within its half), so that two threads can fill them at once.
    slots: Vec<u64>,
    /// Slots taken in each shard; each stays at most three quarters full.
    taken: [usize; 2],
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

/// Where hash `h` starts probing in a table of `len` slots: (shard, index within the shard).
#[inline]
fn home(h: u64, len: usize) -> (usize, usize) {
    let i = h as usize & (len - 1);
    let half = len / 2;
    (i / half, i % half)
}

/// Whether a shard of `size` slots may take one more beyond `taken`.
#[inline]
fn has_room(taken: usize, size: usize) -> bool {
    (taken + 1) * 4 <= size * 3
}

/// Insert op `o`, of hash `h`, into `shard`, probing from `i`: `Ok(true)` if it took a new
/// slot, `Ok(false)` if `o` is there already, `Err(other)` if op `other` already wrote the same
/// value to the same key. The shard must have an empty slot.
#[inline]
fn insert_in(shard: &mut [u64], ops: &[Op], mut i: usize, h: u64, o: u32) -> Result<bool, u32> {
    let (key, val) = (ops[o as usize].key, ops[o as usize].val());
    let mask = shard.len() - 1;
    let finger = h >> 32;
    loop {
        let slot = shard[i];
        if slot == 0 {
            shard[i] = finger << 32 | u64::from(o + 1);
            return Ok(true);
        }
        if slot >> 32 == finger {
            let other = slot as u32 - 1;
            let op = &ops[other as usize];
            if op.key == key && op.val() == val {
                return if other == o { Ok(false) } else { Err(other) };
            }
        }
        i = (i + 1) & mask;
    }
}

/// How filling one shard ended.
enum Filled {
    Done,
    /// A value written twice: (the later write, the earlier).
    Twice(u32, u32),
    /// The shard reached three quarters full: grow the table and fill again.
    Full,
}

impl Written {
    pub(crate) fn new() -> Written {
        Written { slots: Vec::new(), taken: [0, 0] }
    }

    /// Make room for `more` writes, spread over both shards, without growing.
    pub(crate) fn reserve(&mut self, ops: &[Op], more: usize) {
        let want = ((self.taken[0] + self.taken[1] + more) * 4 / 3 + 1).next_power_of_two().max(16);
        if want > self.slots.len() {
            self.rehash(ops, want);
        }
    }

    fn rehash(&mut self, ops: &[Op], size: usize) {
        let old = std::mem::replace(&mut self.slots, vec![0; size]);
        self.taken = [0, 0];
        let half = size / 2;
        for slot in old.into_iter().filter(|s| *s != 0) {
            let op = &ops[(slot as u32 - 1) as usize];
            let (s, mut i) = home(hash(op.key, op.val()), size);
            let shard = &mut self.slots[s * half..(s + 1) * half];
            while shard[i] != 0 {
                i = (i + 1) & (half - 1);
            }
            shard[i] = slot;
            self.taken[s] += 1;
        }
        // Hashes spread over both shards, but a small table can be lopsided.
        if self.taken.iter().any(|t| t * 4 > half * 3) {
            self.rehash(ops, size * 2);
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

    /// The slots of hash `h`'s shard, and where its probe starts.
    #[inline]
    fn probe(&self, h: u64) -> (&[u64], usize) {
        let half = self.slots.len() / 2;
        let (s, i) = home(h, self.slots.len());
        (&self.slots[s * half..(s + 1) * half], i)
    }

    /// The op in the first slot whose fingerprint matches hash `h` (almost always the answer),
    /// to hint at before [`Written::get_hashed`] compares it.
    #[inline]
    pub(crate) fn likely(&self, h: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let (shard, mut i) = self.probe(h);
        loop {
            let slot = shard[i];
            if slot == 0 {
                return None;
            }
            if slot >> 32 == h >> 32 {
                return Some(slot as u32 - 1);
            }
            i = (i + 1) & (shard.len() - 1);
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
        let finger = h >> 32;
        let (shard, mut i) = self.probe(h);
        loop {
            let slot = shard[i];
            if slot == 0 {
                return None;
            }
            if slot >> 32 == finger {
                let o = (slot as u32 - 1) as usize;
                if ops[o].key == key && ops[o].val() == val {
                    return Some(o as u32);
                }
            }
            i = (i + 1) & (shard.len() - 1);
        }
    }

    /// Record that op `o` (in `ops`) wrote its value; if another op already wrote the same value
    /// to the same key, keep the table as it was and return that op.
    #[cfg(test)]
    pub(crate) fn insert(&mut self, ops: &[Op], o: u32) -> Result<(), u32> {
        self.insert_all(ops, o as usize..o as usize + 1).map_err(|(_, other)| other)
    }

    /// Record every write among `ops[range]`, in order; on a value written twice, the first
    /// such write (by op index) and the earlier one it repeats. Large ranges are split between
    /// two threads, one per shard; the result is the same either way.
    pub(crate) fn insert_all(&mut self, ops: &[Op], range: std::ops::Range<usize>) -> Result<(), (u32, u32)> {
        let writes = ops[range.clone()].iter().filter(|op| op.is_write()).count();
        self.reserve(ops, writes);
        loop {
            let size = self.slots.len();
            let half = size / 2;
            let taken = self.taken;
            // One shard's writes, a block at a time: hashed and hinted first, so that the cache
            // misses of a block overlap.
            let fill = |s: usize, shard: &mut [u64]| -> (usize, Filled) {
                const BLOCK: usize = 32;
                let mut taken = taken[s];
                let mut block = [(0u32, 0u64, 0usize); BLOCK];
                let mut o = range.start;
                while o < range.end {
                    let mut n = 0;
                    while n < BLOCK && o < range.end {
                        let op = &ops[o];
                        if op.is_write() {
                            let h = hash(op.key, op.val());
                            let (shard_of, i) = home(h, size);
                            if shard_of == s {
                                prefetch(&shard[i]);
                                block[n] = (o as u32, h, i);
                                n += 1;
                            }
                        }
                        o += 1;
                    }
                    for &(w, h, i) in &block[..n] {
                        if !has_room(taken, half) {
                            return (taken, Filled::Full);
                        }
                        match insert_in(shard, ops, i, h, w) {
                            Ok(new) => taken += usize::from(new),
                            Err(other) => return (taken, Filled::Twice(w, other)),
                        }
                    }
                }
                (taken, Filled::Done)
            };
            let (low, high) = self.slots.split_at_mut(half);
            let ((taken_low, low), (taken_high, high)) = if writes < 1 << 16 {
                (fill(0, low), fill(1, high))
            } else {
                std::thread::scope(|scope| {
                    let fill = &fill;
                    let other = scope.spawn(move || fill(1, high));
                    let mine = fill(0, low);
                    (mine, other.join().expect("the indexing thread does not panic"))
                })
            };
            self.taken = [taken_low, taken_high];
            return match (low, high) {
                // Grow and fill again: the writes already in are found there, not repeated.
                (Filled::Full, _) | (_, Filled::Full) => {
                    self.rehash(ops, size * 2);
                    continue;
                }
                (Filled::Twice(a, b), Filled::Twice(c, d)) => Err((a, b).min((c, d))),
                (Filled::Twice(a, b), Filled::Done) | (Filled::Done, Filled::Twice(a, b)) => Err((a, b)),
                (Filled::Done, Filled::Done) => Ok(()),
            };
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

    #[test]
    fn two_threads_find_the_first_value_written_twice() {
        // Enough writes for two threads; the same value again at ops 150_000 and 100_000 (of
        // ops 7 and 5): the earlier repeat is named, whichever shard holds it.
        let mut ops: Vec<Op> = (0..200_000u32).map(|i| Op::new(KIND_WRITE_FINAL, i % 1000, Val::Int(i64::from(i)))).collect();
        ops[150_000] = ops[7];
        ops[100_000] = ops[5];
        for (name, mut t) in [("fresh", Written::new()), ("small", Written { slots: vec![0; 16], taken: [0, 0] })] {
            assert_eq!(t.insert_all(&ops, 0..ops.len()), Err((100_000, 5)), "{name}");
        }
        ops[100_000] = Op::new(KIND_READ, 5, Val::Int(5));
        let mut t = Written::new();
        assert_eq!(t.insert_all(&ops, 0..120_000), Ok(()));
        assert_eq!(t.insert_all(&ops, 120_000..ops.len()), Err((150_000, 7)));
        for o in [0, 99_999, 119_999, 149_999] {
            assert_eq!(t.get(&ops, ops[o].key, ops[o].val()), Some(o as u32));
        }
        assert_eq!(t.get(&ops, 3, Val::Int(4)), None);
    }
}
