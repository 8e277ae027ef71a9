//! Dependency maps (key → version) as persistent tries that share structure.
//!
//! HydroCache's flattened dependency maps hold a version's whole causal past, so they grow with
//! the run (CausalMesh §9.3). Copied as sorted vectors, every read's merge, every write and
//! every dependency check cost as much as that past, and a run's cost grew with the square of
//! its length. As tries, a write copies only the paths to the keys it changes, and a join or a
//! comparison skips every subtree the two maps share, so their cost follows what differs —
//! mostly the last refresh periods' writes — not the whole past. The logical content, and so
//! every decision and every reported size, is the map's; only its representation is shared.
//!
//! Subtrees are "shared" when they are the same allocation or have the same content hash (64
//! bits, kept in every node): the maps of different workflows are joined independently, so
//! equal subtrees are often separate copies, and comparing them entry by entry cost as much as
//! copying vectors did. Two different subtrees with the same hash would be taken as equal: a
//! chance of about 2^-64 per comparison, which we accept (a run makes fewer than 2^40).

use super::Seq;
use causim_sim::history::Key;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Children per node: 4 bits of the key per level.
const FANOUT: usize = 16;
const BITS: u32 = 4;

#[derive(Clone)]
enum Node {
    /// Keys `base..base + 16` at the bottom: which are present, and their versions (0 if absent).
    Leaf { hash: u64, present: u16, seqs: [Seq; FANOUT] },
    /// Entries below, and the children.
    Inner { hash: u64, len: u64, kids: [Option<Arc<Node>>; FANOUT] },
}

/// splitmix64's finaliser: a well-mixed 64-bit hash step.
fn mix(h: u64, x: u64) -> u64 {
    let mut z = h.wrapping_add(x).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Node {
    fn leaf(present: u16, seqs: [Seq; FANOUT]) -> Arc<Node> {
        let hash = seqs.iter().fold(mix(0, present as u64), |h, &s| mix(h, s));
        Arc::new(Node::Leaf { hash, present, seqs })
    }

    fn inner(kids: [Option<Arc<Node>>; FANOUT]) -> Arc<Node> {
        let len = kids.iter().flatten().map(|n| n.len()).sum();
        let hash = kids.iter().fold(1, |h, k| mix(h, k.as_ref().map_or(0, |n| n.hash())));
        Arc::new(Node::Inner { hash, len, kids })
    }

    fn len(&self) -> u64 {
        match self {
            Node::Leaf { present, .. } => present.count_ones() as u64,
            Node::Inner { len, .. } => *len,
        }
    }

    fn hash(&self) -> u64 {
        match self {
            Node::Leaf { hash, .. } | Node::Inner { hash, .. } => *hash,
        }
    }
}

/// The same subtree: one allocation, or the same content (by hash, see the module docs).
fn same(a: &Arc<Node>, b: &Arc<Node>) -> bool {
    Arc::ptr_eq(a, b) || (a.hash() == b.hash() && a.len() == b.len())
}

/// A dependency map: key → version. Cloning shares it; updates copy only what they change.
#[derive(Clone, Default)]
pub struct Deps {
    root: Option<Arc<Node>>,
    /// Inner levels above the leaves: the root covers keys below 16^(height + 1).
    height: u32,
}

fn ptr_eq(a: &Option<Arc<Node>>, b: &Option<Arc<Node>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// The key's child index at `level` (0 = leaf level).
fn slot(key: Key, level: u32) -> usize {
    ((key >> (BITS * level)) as usize) & (FANOUT - 1)
}

/// Inner levels a trie needs to hold `key`.
fn height_for(key: Key) -> u32 {
    let bits = u64::BITS - key.leading_zeros();
    bits.saturating_sub(1) / BITS
}

fn join_nodes(a: &Arc<Node>, b: &Arc<Node>) -> Arc<Node> {
    if same(a, b) {
        return a.clone();
    }
    match (&**a, &**b) {
        (Node::Leaf { present: pa, seqs: sa, .. }, Node::Leaf { present: pb, seqs: sb, .. }) => {
            let present = pa | pb;
            let mut seqs = *sa;
            for (s, &t) in seqs.iter_mut().zip(sb) {
                *s = (*s).max(t);
            }
            if present == *pa && seqs == *sa {
                a.clone()
            } else if present == *pb && seqs == *sb {
                b.clone()
            } else {
                Node::leaf(present, seqs)
            }
        }
        (Node::Inner { kids: ka, .. }, Node::Inner { kids: kb, .. }) => {
            let mut kids: [Option<Arc<Node>>; FANOUT] = Default::default();
            let (mut same_a, mut same_b) = (true, true);
            for i in 0..FANOUT {
                let k = match (&ka[i], &kb[i]) {
                    (Some(x), Some(y)) => Some(join_nodes(x, y)),
                    (x, None) => x.clone(),
                    (None, y) => y.clone(),
                };
                same_a &= ptr_eq(&k, &ka[i]);
                same_b &= ptr_eq(&k, &kb[i]);
                kids[i] = k;
            }
            if same_a {
                a.clone()
            } else if same_b {
                b.clone()
            } else {
                Node::inner(kids)
            }
        }
        _ => unreachable!("tries of equal height have leaves at the same level"),
    }
}

/// `node` with `key` at `seq` at least; `None` if it already holds that.
fn with_max(node: Option<&Arc<Node>>, level: u32, key: Key, seq: Seq) -> Option<Arc<Node>> {
    let i = slot(key, level);
    if level == 0 {
        let (mut present, mut seqs) = match node.map(|n| &**n) {
            Some(Node::Leaf { present, seqs, .. }) => (*present, *seqs),
            None => (0, [0; FANOUT]),
            Some(Node::Inner { .. }) => unreachable!("a leaf at level 0"),
        };
        if present & (1 << i) != 0 && seqs[i] >= seq {
            return None;
        }
        present |= 1 << i;
        seqs[i] = seqs[i].max(seq);
        return Some(Node::leaf(present, seqs));
    }
    let mut kids = match node.map(|n| &**n) {
        Some(Node::Inner { kids, .. }) => kids.clone(),
        None => Default::default(),
        Some(Node::Leaf { .. }) => unreachable!("inner nodes above level 0"),
    };
    let kid = with_max(kids[i].as_ref(), level - 1, key, seq)?;
    kids[i] = Some(kid);
    Some(Node::inner(kids))
}

/// Calls `f` on each entry of `node` newer than `base` holds (absent counts as version 0).
fn newer(node: &Arc<Node>, base: Option<&Arc<Node>>, level: u32, prefix: Key, f: &mut impl FnMut(Key, Seq)) {
    if base.is_some_and(|b| same(node, b)) {
        return;
    }
    match &**node {
        Node::Leaf { present, seqs, .. } => {
            let base_seqs = match base.map(|b| &**b) {
                Some(Node::Leaf { seqs, .. }) => *seqs,
                _ => [0; FANOUT],
            };
            for i in 0..FANOUT {
                if present & (1 << i) != 0 && seqs[i] > base_seqs[i] {
                    f(prefix | i as Key, seqs[i]);
                }
            }
        }
        Node::Inner { kids, .. } => {
            let base_kids = match base.map(|b| &**b) {
                Some(Node::Inner { kids, .. }) => Some(kids),
                _ => None,
            };
            for (i, kid) in kids.iter().enumerate() {
                if let Some(kid) = kid {
                    let b = base_kids.and_then(|k| k[i].as_ref());
                    newer(kid, b, level - 1, prefix | ((i as Key) << (BITS * level)), f);
                }
            }
        }
    }
}

fn for_each(node: &Node, level: u32, prefix: Key, f: &mut impl FnMut(Key, Seq)) {
    match node {
        Node::Leaf { present, seqs, .. } => {
            for (i, &s) in seqs.iter().enumerate() {
                if present & (1 << i) != 0 {
                    f(prefix | i as Key, s);
                }
            }
        }
        Node::Inner { kids, .. } => {
            for (i, kid) in kids.iter().enumerate() {
                if let Some(kid) = kid {
                    for_each(kid, level - 1, prefix | ((i as Key) << (BITS * level)), f);
                }
            }
        }
    }
}

impl Deps {
    pub fn new() -> Deps {
        Deps::default()
    }

    /// The map of `entries` (the newest version of a repeated key).
    pub fn from_entries(entries: impl IntoIterator<Item = (Key, Seq)>) -> Deps {
        entries.into_iter().fold(Deps::new(), |d, (k, s)| d.with(k, s))
    }

    pub fn len(&self) -> usize {
        self.root.as_ref().map_or(0, |n| n.len() as usize)
    }

    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    pub fn get(&self, key: Key) -> Option<Seq> {
        if height_for(key) > self.height {
            return None;
        }
        let mut node = self.root.as_ref()?;
        let mut level = self.height;
        loop {
            match &**node {
                Node::Leaf { present, seqs, .. } => {
                    let i = slot(key, 0);
                    return (present & (1 << i) != 0).then_some(seqs[i]);
                }
                Node::Inner { kids, .. } => {
                    node = kids[slot(key, level)].as_ref()?;
                    level -= 1;
                }
            }
        }
    }

    /// The root of this map raised to `height` levels (keys keep their places).
    fn lifted(&self, height: u32) -> Option<Arc<Node>> {
        let mut root = self.root.clone()?;
        for _ in self.height..height {
            let mut kids: [Option<Arc<Node>>; FANOUT] = Default::default();
            kids[0] = Some(root);
            root = Node::inner(kids);
        }
        Some(root)
    }

    /// This map with `key` at version `seq` or newer.
    pub fn with(&self, key: Key, seq: Seq) -> Deps {
        let height = if self.root.is_none() { height_for(key) } else { self.height.max(height_for(key)) };
        let root = self.lifted(height);
        match with_max(root.as_ref(), height, key, seq) {
            Some(root) => Deps { root: Some(root), height },
            None => self.clone(),
        }
    }

    /// Both maps' entries, the newer version of each key (shared subtrees cost nothing).
    pub fn join(&self, other: &Deps) -> Deps {
        match (&self.root, &other.root) {
            (_, None) => self.clone(),
            (None, _) => other.clone(),
            (Some(_), Some(_)) => {
                let height = self.height.max(other.height);
                let (a, b) = (self.lifted(height).expect("non-empty"), other.lifted(height).expect("non-empty"));
                Deps { root: Some(join_nodes(&a, &b)), height }
            }
        }
    }

    /// Calls `f` on each entry newer than `base`'s version of its key (absent: version 0), in
    /// key order; subtrees the two maps share are skipped.
    pub fn for_each_newer(&self, base: &Deps, mut f: impl FnMut(Key, Seq)) {
        let Some(root) = &self.root else { return };
        if base.height > self.height {
            // Walk the base down to this map's height (its first child at each level).
            let mut b = base.root.as_ref();
            for _ in self.height..base.height {
                b = match b.map(|n| &**n) {
                    Some(Node::Inner { kids, .. }) => kids[0].as_ref(),
                    _ => None,
                };
            }
            newer(root, b, self.height, 0, &mut f);
        } else {
            newer(root, base.lifted(self.height).as_ref(), self.height, 0, &mut f);
        }
    }

    /// Calls `f` on each entry, in key order.
    pub fn for_each(&self, mut f: impl FnMut(Key, Seq)) {
        if let Some(root) = &self.root {
            for_each(root, self.height, 0, &mut f);
        }
    }

    /// The entries in key order (walks the whole map).
    pub fn to_vec(&self) -> Vec<(Key, Seq)> {
        let mut v = Vec::with_capacity(self.len());
        self.for_each(|k, s| v.push((k, s)));
        v
    }
}

impl fmt::Debug for Deps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "deps({})", self.len())
    }
}

// Equality, order and hash are the logical content's, whatever is shared.
impl PartialEq for Deps {
    fn eq(&self, other: &Deps) -> bool {
        ptr_eq(&self.root, &other.root) || (self.len() == other.len() && self.to_vec() == other.to_vec())
    }
}

impl Eq for Deps {}

impl PartialOrd for Deps {
    fn partial_cmp(&self, other: &Deps) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Deps {
    fn cmp(&self, other: &Deps) -> Ordering {
        if ptr_eq(&self.root, &other.root) { Ordering::Equal } else { self.to_vec().cmp(&other.to_vec()) }
    }
}

impl Hash for Deps {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.len().hash(state);
        self.for_each(|k, s| (k, s).hash(state));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A small deterministic generator (no dependency on the engine's).
    fn lcg(x: &mut u64) -> u64 {
        *x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *x >> 33
    }

    #[test]
    fn join_keeps_the_newer_version_of_each_key() {
        let a = Deps::from_entries([(1, 2), (3, 1)]);
        let b = Deps::from_entries([(1, 1), (2, 5), (3, 4)]);
        assert_eq!(a.join(&b).to_vec(), vec![(1, 2), (2, 5), (3, 4)]);
        assert_eq!(a.join(&b).len(), 3);
    }

    #[test]
    fn tries_agree_with_a_sorted_map_over_random_joins_inserts_and_lookups() {
        let mut x = 7;
        let mut maps: Vec<(Deps, BTreeMap<Key, Seq>)> = vec![(Deps::new(), BTreeMap::new())];
        for round in 0..2_000 {
            let i = lcg(&mut x) as usize % maps.len();
            let (mut d, mut m) = maps[i].clone();
            if round % 3 == 0 {
                let j = lcg(&mut x) as usize % maps.len();
                let (d2, m2) = &maps[j];
                d = d.join(d2);
                for (&k, &s) in m2 {
                    let e = m.entry(k).or_insert(s);
                    *e = (*e).max(s);
                }
            } else {
                // Keys of every size, so that heights differ; version 0 is an entry too.
                let k = lcg(&mut x) >> (lcg(&mut x) % 31);
                let s = lcg(&mut x) % 5;
                d = d.with(k, s);
                let e = m.entry(k).or_insert(s);
                *e = (*e).max(s);
            }
            assert_eq!(d.to_vec(), m.iter().map(|(&k, &s)| (k, s)).collect::<Vec<_>>());
            assert_eq!(d.len(), m.len());
            let probe = lcg(&mut x) >> (lcg(&mut x) % 31);
            assert_eq!(d.get(probe), m.get(&probe).copied());
            for &k in m.keys().take(3) {
                assert_eq!(d.get(k), m.get(&k).copied());
            }
            // Entries newer than another map's: exactly those the sorted maps say.
            let (base, mb) = &maps[lcg(&mut x) as usize % maps.len()];
            let mut got = Vec::new();
            d.for_each_newer(base, |k, s| got.push((k, s)));
            let want: Vec<(Key, Seq)> = m.iter().filter(|&(k, &s)| s > mb.get(k).copied().unwrap_or(0)).map(|(&k, &s)| (k, s)).collect();
            assert_eq!(got, want);
            maps.push((d, m));
        }
    }

    #[test]
    fn equality_and_hash_follow_the_content_not_the_sharing() {
        use std::hash::DefaultHasher;
        let a = Deps::from_entries([(5, 1), (300, 2)]);
        let b = Deps::from_entries([(300, 2)]).join(&Deps::from_entries([(5, 1)]));
        assert_eq!(a, b);
        let h = |d: &Deps| {
            let mut s = DefaultHasher::new();
            d.hash(&mut s);
            s.finish()
        };
        assert_eq!(h(&a), h(&b));
        assert_ne!(a, a.with(5, 2));
        assert_ne!(a, a.with(6, 0), "a key at version 0 is an entry");
    }
}
