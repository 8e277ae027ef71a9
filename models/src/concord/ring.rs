//! Consistent hashing of keys to homes (§III-C1): one ring per application, one token per cache
//! agent (the paper re-homes all of a departing agent's keys to one node, its clockwise
//! successor, so there are no virtual nodes). A key's home is the first agent clockwise from
//! the key's position.
//!
//! Positions come from a fixed 64-bit mixing function (SplitMix64's finalizer), so homes are
//! the same in every run and on every host.

use causim_sim::history::Key;
use causim_sim::node::NodeId;

/// The ring over the live cache agents, sorted by position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ring {
    tokens: Vec<(u64, NodeId)>,
}

/// SplitMix64's output function: a bijection on `u64` that spreads nearby inputs.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Agents and keys hash with different salts, so agent `i` and key `i` do not coincide.
const AGENT_SALT: u64 = 0x9E37_79B9_7F4A_7C15;

impl Ring {
    /// The ring of `agents` (each named by its agent index for hashing).
    pub fn new(agents: &[(usize, NodeId)]) -> Ring {
        let mut tokens: Vec<(u64, NodeId)> = agents.iter().map(|&(i, id)| (mix(i as u64 ^ AGENT_SALT), id)).collect();
        tokens.sort();
        assert!(!tokens.is_empty(), "a coherence domain has at least one cache agent");
        Ring { tokens }
    }

    /// The ring of the agents `members` (fixed nodes, hashed by their index).
    pub fn of(members: &[NodeId]) -> Ring {
        Ring::new(&members.iter().map(|&m| (m.index(), m)).collect::<Vec<_>>())
    }

    /// The ring after `node` (a fixed node) joins: it takes the keys between its predecessor
    /// and itself from its clockwise successor.
    pub fn with(&self, node: NodeId) -> Ring {
        let mut tokens = self.tokens.clone();
        if !self.contains(node) {
            tokens.push((mix(node.index() as u64 ^ AGENT_SALT), node));
            tokens.sort();
        }
        Ring { tokens }
    }

    /// The ring after `node` leaves: its keys go to its clockwise successor.
    pub fn without(&self, node: NodeId) -> Ring {
        let tokens: Vec<(u64, NodeId)> = self.tokens.iter().copied().filter(|&(_, id)| id != node).collect();
        assert!(!tokens.is_empty(), "a coherence domain has at least one cache agent");
        Ring { tokens }
    }

    /// The agent that takes `node`'s keys when it leaves: its clockwise successor.
    pub fn successor(&self, node: NodeId) -> NodeId {
        let i = self.tokens.iter().position(|&(_, id)| id == node).expect("the node is on the ring");
        self.tokens[(i + 1) % self.tokens.len()].1
    }

    /// The agents on the ring.
    pub fn members(&self) -> Vec<NodeId> {
        self.tokens.iter().map(|&(_, id)| id).collect()
    }

    /// How many agents the ring holds.
    pub fn agents(&self) -> usize {
        self.tokens.len()
    }

    pub fn contains(&self, node: NodeId) -> bool {
        self.tokens.iter().any(|&(_, id)| id == node)
    }

    /// The home of `key`: the first agent at or after the key's position, wrapping around.
    pub fn home(&self, key: Key) -> NodeId {
        let at = mix(key);
        let i = self.tokens.partition_point(|&(p, _)| p < at);
        self.tokens[i % self.tokens.len()].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(n: usize) -> Ring {
        Ring::new(&(0..n).map(|i| (i, NodeId::fixed(i))).collect::<Vec<_>>())
    }

    #[test]
    fn every_agent_homes_some_keys_and_homes_are_stable() {
        let r = ring(4);
        let mut per = [0usize; 4];
        for k in 0..4000 {
            per[r.home(k).index()] += 1;
            assert_eq!(r.home(k), r.home(k));
        }
        // One token per agent spreads keys unevenly (arcs differ in length), but over every agent.
        assert!(per.iter().all(|&n| n > 0), "an agent homes no key: {per:?}");
    }

    #[test]
    fn a_joiner_takes_keys_from_its_successor_only_and_leaving_again_restores_the_ring() {
        let without = Ring::of(&[NodeId::fixed(0), NodeId::fixed(1), NodeId::fixed(3)]);
        let with = without.with(NodeId::fixed(2));
        assert_eq!(with, ring(4));
        let giver = with.successor(NodeId::fixed(2));
        for k in 0..2000 {
            let (before, after) = (without.home(k), with.home(k));
            if after == NodeId::fixed(2) {
                assert_eq!(before, giver, "key {k} came from another agent than the joiner's successor");
            } else {
                assert_eq!(before, after, "key {k} moved though the joiner does not home it");
            }
        }
        assert_eq!(with.without(NodeId::fixed(2)), without);
    }

    #[test]
    fn removing_an_agent_moves_only_its_keys_and_all_to_one_successor() {
        let full = ring(4);
        let without = Ring::new(&[(0, NodeId::fixed(0)), (1, NodeId::fixed(1)), (3, NodeId::fixed(3))]);
        let mut successors = std::collections::BTreeSet::new();
        for k in 0..2000 {
            let (before, after) = (full.home(k), without.home(k));
            if before == NodeId::fixed(2) {
                successors.insert(after);
            } else {
                assert_eq!(before, after, "key {k} moved though its home stayed");
            }
        }
        assert_eq!(successors.len(), 1, "all of a departing agent's keys go to its clockwise successor");
        assert_eq!(successors.first(), Some(&full.successor(NodeId::fixed(2))));
    }
}
