//! Boki's identifiers (§4.3–§4.4 of the paper, digest §1.2) and the one piece of arithmetic every
//! subscriber must agree on: how a metalog entry's cut turns into seqnums (Fig. 3).
//!
//! A **seqnum** packs `(term, log, position)` from high to low bits, so every seqnum of a later
//! term is above every seqnum of an earlier one; the position counts records of the physical
//! log in order. A **metalog position** `(term, entries applied)` is what functions and index
//! replicas compare: the term first, then the number of entries.
//!
//! A metalog entry is a cut: for every shard (one per function node), the local ids below which
//! its records are ordered. Its *delta set* is the records between the previous cut and this
//! one, ordered by `(shard, local_id)`; positions continue from the total of the previous cut.
//! Every node derives the same positions from the same entries, without talking to anyone.

/// A metalog position: `term` first, then the number of entries applied in that term.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    pub term: u64,
    pub entries: u64,
}

impl Pos {
    pub const fn new(term: u64, entries: u64) -> Pos {
        Pos { term, entries }
    }
}

const POS_BITS: u32 = 32;
const LOG_BITS: u32 = 16;
/// Terms fit in a seqnum's top 16 bits.
pub const TERMS_MAX: u64 = 1 << 16;

/// The seqnum of the record at `position` of physical log `log` in `term`.
pub fn seqnum(term: u64, log: u64, position: u64) -> u64 {
    assert!(position < 1 << POS_BITS && log < 1 << LOG_BITS && term < TERMS_MAX, "seqnum fields out of range");
    term << (POS_BITS + LOG_BITS) | log << POS_BITS | position
}

/// The position part of a seqnum.
pub fn position(seqnum: u64) -> u64 {
    seqnum & ((1 << POS_BITS) - 1)
}

/// The term part of a seqnum.
pub fn term_of(seqnum: u64) -> u64 {
    seqnum >> (POS_BITS + LOG_BITS)
}

/// One metalog entry: the cut before it (`start`, the predecessor's cut, carried redundantly
/// as Boki does to check replay) and its own cut (`end`), one local id bound per shard.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Entry {
    /// The term whose metalog holds it.
    pub term: u64,
    /// Its index in the metalog (0-based).
    pub index: u64,
    pub start: Vec<u64>,
    pub end: Vec<u64>,
    /// Trim commands ordered by this entry, after its records (§4.4: a trim is a metalog
    /// command, so every index applies it at the same position).
    pub trims: Vec<Trim>,
}

/// A `logTrim(until)` of `book` in the metalog; `(shard, id)` names the call at its engine.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Trim {
    pub shard: u32,
    pub id: u64,
    pub book: causim_sim::history::Key,
    pub until: u64,
}

impl Entry {
    /// Records ordered before this entry (the first position it assigns).
    pub fn base(&self) -> u64 {
        self.start.iter().sum()
    }

    /// Records ordered up to and including this entry (one past its last position).
    pub fn total(&self) -> u64 {
        self.end.iter().sum()
    }

    /// The metalog position reached once this entry is applied.
    pub fn pos_after(&self) -> Pos {
        Pos::new(self.term, self.index + 1)
    }

    /// The delta set in order: `(shard, local_id, position)`, by shard, then local id.
    pub fn delta(&self) -> impl Iterator<Item = (u32, u64, u64)> + '_ {
        let mut next = self.base();
        (0..self.end.len()).flat_map(move |j| {
            let (from, to) = (self.start[j], self.end[j]);
            let first = next;
            next += to - from;
            (from..to).map(move |local| (j as u32, local, first + (local - from)))
        })
    }

    /// Whether the entry is a well-formed successor of `previous` (None: it is the first):
    /// it starts where `previous` ended and no shard's cut moves back.
    pub fn follows(&self, previous: Option<&Entry>, shards: usize) -> bool {
        let start_ok = match previous {
            Some(p) => p.term == self.term && p.index + 1 == self.index && p.end == self.start,
            None => self.index == 0 && self.start.iter().all(|&s| s == 0),
        };
        start_ok && self.start.len() == shards && self.end.len() == shards && self.start.iter().zip(&self.end).all(|(s, e)| s <= e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fig3_delta_sets_are_ordered_by_shard_then_local_id() {
        // Three shards; v1 = (2, 1, 0), v2 = (3, 1, 2): the second entry orders shard 0's local
        // id 2 and shard 2's local ids 0 and 1, in that order, from position 3.
        let v1 = Entry { term: 0, index: 0, start: vec![0, 0, 0], end: vec![2, 1, 0], trims: vec![] };
        let v2 = Entry { term: 0, index: 1, start: vec![2, 1, 0], end: vec![3, 1, 2], trims: vec![] };
        assert_eq!(v1.delta().collect::<Vec<_>>(), [(0, 0, 0), (0, 1, 1), (1, 0, 2)]);
        assert_eq!(v2.delta().collect::<Vec<_>>(), [(0, 2, 3), (2, 0, 4), (2, 1, 5)]);
        assert!(v1.follows(None, 3) && v2.follows(Some(&v1), 3));
        assert!(!v1.follows(Some(&v2), 3));
        assert_eq!(v2.pos_after(), Pos::new(0, 2));
    }

    #[test]
    fn seqnums_of_a_later_term_are_above_every_earlier_one_and_positions_compare_term_first() {
        assert!(seqnum(1, 0, 0) > seqnum(0, 3, (1 << 32) - 1));
        assert_eq!(position(seqnum(2, 1, 77)), 77);
        assert_eq!(term_of(seqnum(2, 1, 77)), 2);
        assert!(Pos::new(1, 0) > Pos::new(0, 1000));
    }
}
