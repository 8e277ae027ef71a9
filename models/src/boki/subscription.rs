//! A subscriber's copy of one term's metalog, as engines and storage nodes both keep it: entries
//! are applied in index order, each extending the cut before it, and an entry that comes early
//! waits for the ones before it. When the term is sealed, the final metalog supplies the entries
//! this subscriber missed; an applied entry the seal did not keep is remembered for the
//! seal-safety invariant (only the mutant `seal_loses_entries` loses one).

use super::ids::Entry;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct Subscription {
    /// Entries applied in this term (the next one due has this index).
    applied: u64,
    /// Entries that came before their predecessors.
    early: BTreeMap<u64, Entry>,
    last_cut: Option<Entry>,
    /// `(term, applied, final length)` of a seal that kept fewer entries than were applied here.
    seal_lost: Option<(u64, u64, u64)>,
}

impl Subscription {
    /// Takes an entry of the current term; the ones now due come out of [`Self::next_due`].
    pub(super) fn receive(&mut self, entry: Entry) {
        if entry.index >= self.applied {
            self.early.insert(entry.index, entry);
        }
    }

    /// The next entry in index order if it is here, counted as applied. `who` names the
    /// subscriber in the message of a broken metalog (a bug, not an input error).
    pub(super) fn next_due(&mut self, shards: usize, who: &str) -> Option<Entry> {
        let entry = self.early.remove(&self.applied)?;
        assert!(entry.follows(self.last_cut.as_ref(), shards), "{who}: metalog entry {} does not extend the last cut", entry.index);
        self.applied = entry.index + 1;
        self.last_cut = Some(entry.clone());
        Some(entry)
    }

    /// Entries applied in this term (read by model checkers' properties).
    pub(super) fn applied(&self) -> u64 {
        self.applied
    }

    /// Records ordered by the entries applied in this term.
    pub(super) fn ordered(&self) -> u64 {
        self.last_cut.as_ref().map_or(0, Entry::total)
    }

    /// The entries of `term`'s final metalog `sealed` not applied here, to be received before
    /// the next term begins; notes a seal that lost an applied entry.
    pub(super) fn missed<'a>(&mut self, term: u64, sealed: &'a [Entry]) -> &'a [Entry] {
        let kept = sealed.len() as u64;
        if self.applied > kept {
            self.seal_lost = Some((term, self.applied, kept));
        }
        &sealed[(self.applied.min(kept)) as usize..]
    }

    /// A new term's metalog starts empty.
    pub(super) fn begin_term(&mut self) {
        (self.applied, self.last_cut) = (0, None);
        self.early.clear();
    }

    /// A restart loses the entries held in memory only.
    pub(super) fn forget_early(&mut self) {
        self.early.clear();
    }

    /// Seal safety: the final metalog of a term holds every entry this subscriber applied.
    pub(super) fn check(&self) -> Result<(), String> {
        match self.seal_lost {
            Some((term, applied, last)) => Err(format!(
                "the seal of term {term} kept {last} metalog entries, but this node had applied {applied} (an applied entry was lost)"
            )),
            None => Ok(()),
        }
    }
}
