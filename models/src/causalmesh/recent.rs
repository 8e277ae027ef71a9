//! A bounded log of the last writes of one key that left the I-cache, oldest first, that can be
//! searched by VC without scanning it.
//!
//! The dual cache keeps two such logs per key: the VCs of the last writes merged or dropped (so a
//! copy that arrives again is not kept twice, and for CausalMesh-TCC's read validation) and, for
//! CausalMesh-TCC, those writes' own dependencies. Hot keys fill their logs, and every write that
//! arrives, every dependency walked and every read validated looked a VC up in them; a linear
//! scan of a full log made those costs grow as the run went on. Once a log is long enough to be
//! worth it, an index by (VC, arrival number) answers the same questions: the first entry with a
//! VC, whether there is one, and the VCs above a floor in order.
//!
//! The index is derived from the log, so it is left out of equality, hashing and `Debug`: a
//! node's state compares, hashes and prints exactly as the plain log did.

use super::vc::{Deps, Vc};
use std::collections::{BTreeSet, VecDeque};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Bound;

/// Shorter logs are scanned: an index would cost more memory than the scan costs time, and most
/// keys (the cold ones) never have more entries than this.
const INDEX_FROM: usize = 32;

/// An entry of a log: a write, known by its VC.
pub trait Written {
    fn vc(&self) -> &Vc;
}

impl Written for Vc {
    fn vc(&self) -> &Vc {
        self
    }
}

impl Written for (Vc, Deps) {
    fn vc(&self) -> &Vc {
        &self.0
    }
}

#[derive(Clone)]
pub struct RecentWrites<T> {
    log: VecDeque<T>,
    /// The arrival number of `log[0]`: entries are numbered in the order they arrived.
    front: u64,
    /// Once the log has `INDEX_FROM` entries: each entry as (VC, arrival number).
    index: Option<BTreeSet<(Vc, u64)>>,
}

impl<T> Default for RecentWrites<T> {
    fn default() -> Self {
        RecentWrites { log: VecDeque::new(), front: 0, index: None }
    }
}

impl<T: Written> RecentWrites<T> {
    /// Appends `entries`, then forgets the oldest entries beyond `max`.
    pub fn extend_bounded(&mut self, entries: impl IntoIterator<Item = T>, max: usize) {
        for entry in entries {
            let number = self.front + self.log.len() as u64;
            if let Some(index) = &mut self.index {
                index.insert((*entry.vc(), number));
            }
            self.log.push_back(entry);
        }
        while self.log.len() > max {
            let oldest = self.log.pop_front().expect("longer than max");
            if let Some(index) = &mut self.index {
                index.remove(&(*oldest.vc(), self.front));
            }
            self.front += 1;
        }
        if self.index.is_none() && self.log.len() >= INDEX_FROM {
            let front = self.front;
            self.index = Some(self.log.iter().zip(front..).map(|(e, number)| (*e.vc(), number)).collect());
        }
    }

    /// The oldest entry whose VC is `vc`.
    pub fn find(&self, vc: &Vc) -> Option<&T> {
        match &self.index {
            Some(index) => {
                let (found, number) = index.range((*vc, 0)..).next().filter(|(v, _)| v == vc)?;
                debug_assert_eq!(found, vc);
                Some(&self.log[(number - self.front) as usize])
            }
            None => self.log.iter().find(|e| e.vc() == vc),
        }
    }

    pub fn contains(&self, vc: &Vc) -> bool {
        self.find(vc).is_some()
    }

    /// Appends to `out` the VCs of the entries above `floor` in the arbitration (lexicographic)
    /// order, in no particular order and possibly repeated.
    pub fn extend_above(&self, floor: &Vc, out: &mut Vec<Vc>) {
        match &self.index {
            Some(index) => out.extend(index.range((Bound::Excluded((*floor, u64::MAX)), Bound::Unbounded)).map(|(vc, _)| *vc)),
            None => out.extend(self.log.iter().map(|e| *e.vc()).filter(|vc| vc > floor)),
        }
    }

    /// The entries, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.log.iter()
    }
}

impl<T: PartialEq> PartialEq for RecentWrites<T> {
    fn eq(&self, other: &Self) -> bool {
        self.log == other.log
    }
}

impl<T: Eq> Eq for RecentWrites<T> {}

impl<T: Hash> Hash for RecentWrites<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.log.hash(state);
    }
}

impl<T: fmt::Debug> fmt::Debug for RecentWrites<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.log.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vc(a: u32, b: u32) -> Vc {
        Vc::from_slice(&[a, b])
    }

    /// The same questions asked of a log with and without its index get the same answers,
    /// through forgetting old entries and repeated VCs.
    #[test]
    fn the_index_answers_as_a_scan_does() {
        let mut indexed: RecentWrites<(Vc, Deps)> = RecentWrites::default();
        let mut plain: VecDeque<(Vc, Deps)> = VecDeque::new();
        let max = 3 * INDEX_FROM;
        for i in 0..(10 * INDEX_FROM as u32) {
            // VCs repeat (a copy remembered again) and arrive out of order.
            let v = vc((i * 7) % 50, i % 3);
            let deps: Deps = [(i as u64, vc(i, 0))].into_iter().collect();
            indexed.extend_bounded([(v, deps.clone())], max);
            plain.push_back((v, deps));
            while plain.len() > max {
                plain.pop_front();
            }
            assert_eq!(indexed.index.is_some(), plain.len() >= INDEX_FROM);
            for probe in [vc(0, 0), v, vc((i * 3) % 50, 1), vc(49, 2), vc(60, 0)] {
                assert_eq!(indexed.find(&probe), plain.iter().find(|(w, _)| *w == probe), "find {probe:?} after {i}");
                let mut above = Vec::new();
                indexed.extend_above(&probe, &mut above);
                let mut expected: Vec<Vc> = plain.iter().map(|(w, _)| *w).filter(|w| *w > probe).collect();
                above.sort_unstable();
                expected.sort_unstable();
                assert_eq!(above, expected);
            }
        }
        assert_eq!(indexed.iter().collect::<Vec<_>>(), plain.iter().collect::<Vec<_>>());
    }

    #[test]
    fn equality_and_debug_ignore_the_index() {
        let mut long: RecentWrites<Vc> = RecentWrites::default();
        let mut short: RecentWrites<Vc> = RecentWrites::default();
        long.extend_bounded((0..INDEX_FROM as u32 + 1).map(|i| vc(i, 0)), INDEX_FROM + 1);
        long.extend_bounded([vc(99, 0)], 1);
        short.extend_bounded([vc(99, 0)], 1);
        assert!(long.index.is_some() && short.index.is_none());
        assert_eq!(long, short);
        assert_eq!(format!("{long:?}"), format!("{short:?}"));
        assert_eq!(format!("{short:?}"), format!("{:?}", VecDeque::from([vc(99, 0)])));
    }
}
