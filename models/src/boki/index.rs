//! An index replica of one physical log (§4.4, digest §2.5): seqnums and tags, no data,
//! grouped by `(book, tag)` (tag 0 groups every record of a book).
//!
//! The replica applies metalog entries in order, but an entry says only *how many* records it
//! orders per shard; their books and tags come from the storage nodes. So it queues each
//! entry's cut and indexes the records below it once their tags have all arrived. Its
//! **version** is the metalog position of the last cut it indexed entirely: it includes every
//! record that prefix of the metalog orders. Replicas do not synchronise with each other;
//! reads compare the version with the caller's position instead.
//!
//! A trim command in an entry deletes its book's rows below the trim point once the entry is
//! indexed (§4.4), so every replica applies it at the same position: a `Next` read below the
//! point finds the first record at or above it, a `Prev` read below it finds nothing.
//!
//! At a new term the replica first finishes the old term's final cuts, then starts the new
//! term at version `(term, 0)`; tags of the new term that arrive before are kept until then.

use super::ids::{Entry, Pos, seqnum};
use super::msg::{Dir, IndexRecord};
use causim_sim::history::Key;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Index {
    pub(super) term: u64,
    /// Seqnums carry the term (false only under the mutant `new_term_reuses_seqnums`).
    term_bits: bool,
    /// Cuts applied but not yet indexed, and term changes, in metalog order.
    cuts: VecDeque<Cut>,
    /// Tags received for positions not yet indexed.
    received: BTreeMap<u64, IndexRecord>,
    /// Tags of later terms, kept until the replica reaches their term.
    later: BTreeMap<u64, Vec<IndexRecord>>,
    /// Every position below this one has been received (or indexed).
    received_through: u64,
    /// Positions below this one are in the rows.
    indexed_through: u64,
    /// Entries fully indexed: the index's version within its term.
    indexed_entries: u64,
    rows: BTreeMap<(Key, u64), BTreeSet<u64>>,
    /// The shard each indexed seqnum came from (which storage replicas hold it).
    shard_of: BTreeMap<u64, u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Cut {
    /// An entry's index, the records ordered up to it, and its trims `(book, until)`.
    Entry(u64, u64, Vec<(Key, u64)>),
    /// The next term begins.
    Term(u64),
}

impl Index {
    pub(super) fn new(term: u64, term_bits: bool) -> Index {
        Index { term, term_bits, ..Index::default() }
    }

    pub(super) fn version(&self) -> Pos {
        Pos::new(self.term, self.indexed_entries)
    }

    pub(super) fn apply_entry(&mut self, entry: &Entry) {
        let trims = entry.trims.iter().map(|t| (t.book, t.until)).collect();
        self.cuts.push_back(Cut::Entry(entry.index, entry.total(), trims));
        self.advance();
    }

    /// The metalog of the current term is final: after its queued cuts comes `term`.
    pub(super) fn begin_term(&mut self, term: u64) {
        self.cuts.push_back(Cut::Term(term));
        self.advance();
    }

    /// The tags of records ordered in `term` (older terms' are already indexed: dropped).
    pub(super) fn receive(&mut self, term: u64, records: Vec<IndexRecord>) {
        if term > self.term {
            self.later.entry(term).or_default().extend(records);
            return;
        }
        if term < self.term {
            return;
        }
        self.take(records);
        self.advance();
    }

    fn take(&mut self, records: Vec<IndexRecord>) {
        for r in records {
            if r.position >= self.received_through {
                self.received.entry(r.position).or_insert(r);
            }
        }
        while self.received.contains_key(&self.received_through) {
            self.received_through += 1;
        }
    }

    /// Indexes every queued cut whose records have all arrived, and enters the next term once
    /// the current one's cuts are all indexed.
    fn advance(&mut self) {
        while let Some(cut) = self.cuts.front() {
            let (index, total) = match *cut {
                Cut::Entry(index, total, _) => (index, total),
                Cut::Term(term) => {
                    self.cuts.pop_front();
                    self.term = term;
                    (self.received_through, self.indexed_through, self.indexed_entries) = (0, 0, 0);
                    self.received.clear();
                    let records = self.later.remove(&term).unwrap_or_default();
                    self.later.retain(|&t, _| t > term);
                    self.take(records);
                    continue;
                }
            };
            if total > self.received_through {
                break;
            }
            while self.indexed_through < total {
                let r = self.received.remove(&self.indexed_through).expect("received below received_through");
                let s = seqnum(if self.term_bits { self.term } else { 0 }, 0, r.position);
                self.rows.entry((r.book, 0)).or_default().insert(s);
                for &t in &r.tags {
                    self.rows.entry((r.book, t)).or_default().insert(s);
                }
                self.shard_of.insert(s, r.shard);
                self.indexed_through += 1;
            }
            self.indexed_entries = index + 1;
            if let Some(Cut::Entry(_, _, trims)) = self.cuts.pop_front() {
                for (book, until) in trims {
                    self.trim(book, until);
                }
            }
        }
    }

    /// Deletes the rows of `book` below seqnum `until` (every tag's).
    fn trim(&mut self, book: Key, until: u64) {
        for (_, row) in self.rows.range_mut((book, 0)..=(book, u64::MAX)) {
            let kept = row.split_off(&until);
            for s in std::mem::replace(row, kept) {
                self.shard_of.remove(&s);
            }
        }
    }

    /// The seqnum a read finds in this version: the first of `(book, tag)` at or after
    /// `bound` (`Next`), or the last at or before it (`Prev`).
    pub(super) fn lookup(&self, book: Key, tag: u64, dir: Dir, bound: u64) -> Option<u64> {
        let row = self.rows.get(&(book, tag))?;
        match dir {
            Dir::Next => row.range(bound..).next().copied(),
            Dir::Prev => row.range(..=bound).next_back().copied(),
        }
    }

    pub(super) fn shard_of(&self, seqnum: u64) -> u32 {
        self.shard_of[&seqnum]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boki::ids::term_of;

    fn rec(position: u64, book: Key, tags: &[u64]) -> IndexRecord {
        IndexRecord { position, shard: 0, book, tags: tags.to_vec() }
    }

    #[test]
    fn an_entry_is_indexed_once_all_its_tags_arrived_and_reads_search_its_rows() {
        let mut index = Index::new(0, true);
        index.apply_entry(&Entry { term: 0, index: 0, start: vec![0], end: vec![3], trims: vec![] });
        index.receive(0, vec![rec(0, 7, &[1]), rec(2, 7, &[2])]);
        assert_eq!(index.version(), Pos::new(0, 0), "position 1 is missing");
        index.receive(0, vec![rec(1, 8, &[1])]);
        assert_eq!(index.version(), Pos::new(0, 1));
        assert_eq!(index.lookup(7, 0, Dir::Next, 1), Some(2));
        assert_eq!(index.lookup(7, 1, Dir::Next, 1), None);
        assert_eq!(index.lookup(7, 1, Dir::Prev, u64::MAX), Some(0));
        assert_eq!(index.lookup(9, 0, Dir::Prev, u64::MAX), None);
    }

    #[test]
    fn a_trim_deletes_its_books_rows_below_the_point_when_its_entry_is_indexed() {
        let mut index = Index::new(0, true);
        index.apply_entry(&Entry { term: 0, index: 0, start: vec![0], end: vec![3], trims: vec![] });
        index.receive(0, vec![rec(0, 7, &[1]), rec(1, 7, &[1]), rec(2, 7, &[2])]);
        let trim = crate::boki::ids::Trim { shard: 0, id: 0, book: 7, until: 2 };
        index.apply_entry(&Entry { term: 0, index: 1, start: vec![3], end: vec![4], trims: vec![trim] });
        assert_eq!(index.lookup(7, 1, Dir::Next, 0), Some(0), "not before its entry is indexed (position 3 is missing)");
        index.receive(0, vec![rec(3, 8, &[1])]);
        assert_eq!(index.version(), Pos::new(0, 2));
        assert_eq!(index.lookup(7, 0, Dir::Next, 0), Some(2), "readNext below the point: the first record left");
        assert_eq!(index.lookup(7, 1, Dir::Prev, u64::MAX), None, "tag 1's records were all below the point");
        assert_eq!(index.lookup(8, 1, Dir::Next, 0), Some(3), "other books keep their rows");
    }

    #[test]
    fn a_new_term_starts_only_after_the_old_terms_final_cuts_are_indexed() {
        let mut index = Index::new(0, true);
        index.apply_entry(&Entry { term: 0, index: 0, start: vec![0], end: vec![2], trims: vec![] });
        index.begin_term(1);
        // The new term's first record arrives before the old term's last one.
        index.receive(1, vec![rec(0, 7, &[1])]);
        index.receive(0, vec![rec(0, 7, &[1])]);
        assert_eq!(index.version(), Pos::new(0, 0), "term 0's entry still misses position 1");
        index.receive(0, vec![rec(1, 7, &[2])]);
        assert_eq!(index.version(), Pos::new(1, 0), "term 0 done: term 1 begins");
        index.apply_entry(&Entry { term: 1, index: 0, start: vec![0], end: vec![1], trims: vec![] });
        assert_eq!(index.version(), Pos::new(1, 1), "the held term-1 record completes its entry");
        let (old, new) = (seqnum(0, 0, 1), seqnum(1, 0, 0));
        assert_eq!(index.lookup(7, 0, Dir::Prev, u64::MAX), Some(new));
        assert_eq!(index.lookup(7, 0, Dir::Prev, new - 1), Some(old), "term 1's seqnums are above term 0's");
        index.receive(0, vec![rec(5, 7, &[1])]);
        assert!(index.received.is_empty() && index.later.is_empty(), "a late term-0 record is dropped, not kept");
        assert_eq!(index.lookup(7, 1, Dir::Next, 0).map(term_of), Some(0));
    }
}
