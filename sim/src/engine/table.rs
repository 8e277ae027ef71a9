//! Live workflows by id: ids are handed out in order, so a sliding window over a `VecDeque`
//! replaces a map. Lookups are one index; the window's front moves past finished workflows.

use std::collections::VecDeque;

/// A map from sequential ids (0, 1, 2, … in insertion order) to values, with O(1) lookup.
///
/// Values are boxed so the window costs one pointer per id still inside it: a workflow stuck
/// for the whole run keeps every later id in the window.
#[derive(Debug)]
pub(crate) struct IdTable<T> {
    /// The id of `slots[0]`.
    base: u64,
    slots: VecDeque<Option<Box<T>>>,
    live: usize,
}

impl<T> Default for IdTable<T> {
    fn default() -> Self {
        IdTable { base: 0, slots: VecDeque::new(), live: 0 }
    }
}

impl<T> IdTable<T> {
    /// Inserts the value for the next id, which must be one past the last id inserted.
    pub fn insert(&mut self, id: u64, value: T) {
        assert_eq!(id, self.base + self.slots.len() as u64, "ids are inserted in order");
        self.slots.push_back(Some(Box::new(value)));
        self.live += 1;
    }

    fn index(&self, id: u64) -> Option<usize> {
        let i = id.checked_sub(self.base)?;
        (i < self.slots.len() as u64).then_some(i as usize)
    }

    pub fn get(&self, id: u64) -> Option<&T> {
        self.slots.get(self.index(id)?)?.as_deref()
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut T> {
        let i = self.index(id)?;
        self.slots.get_mut(i)?.as_deref_mut()
    }

    pub fn remove(&mut self, id: u64) -> Option<Box<T>> {
        let i = self.index(id)?;
        let value = self.slots[i].take()?;
        self.live -= 1;
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.base += 1;
        }
        Some(value)
    }

    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
}

impl<T> std::ops::Index<u64> for IdTable<T> {
    type Output = T;

    fn index(&self, id: u64) -> &T {
        self.get(id).unwrap_or_else(|| panic!("no live entry {id}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_like_a_map_of_sequential_ids() {
        let mut t = IdTable::default();
        for id in 0..10u64 {
            t.insert(id, id * 10);
        }
        assert_eq!(t.remove(3).as_deref(), Some(&30));
        assert_eq!(t.remove(3), None);
        assert_eq!(t.remove(0).as_deref(), Some(&0));
        assert_eq!(t.get(0), None, "below the window");
        assert_eq!(t.get(3), None);
        assert_eq!(t.get(4), Some(&40));
        assert_eq!(t.get(10), None, "past the window");
        *t.get_mut(9).unwrap() += 1;
        assert_eq!(t[9], 91);
        assert_eq!(t.len(), 8);
        for id in [1, 2, 4, 5, 6, 7, 8, 9] {
            assert!(t.remove(id).is_some());
        }
        assert!(t.is_empty());
        assert_eq!(t.slots.len(), 0, "the window closes behind finished ids");
        t.insert(10, 100);
        assert_eq!(t[10], 100);
    }
}
