//! What a model checker's properties read of the nodes (`specs/src/boki_model.rs`, which hosts
//! them under Stateright): read-only views of the metalog state of sequencers, subscribers,
//! storage nodes, engines and the controller. Nothing here changes what a node does.

use super::BokiNode;
use super::controller::Phase;
use super::ids::Entry;
use causim_sim::node::NodeId;
use std::collections::BTreeMap;

/// A sequencer's copy of its term's metalog, and its role in that term.
#[derive(Clone, Copy, Debug)]
pub struct SequencerView<'a> {
    pub term: u64,
    pub primary: bool,
    /// The primary's replication group (itself and its backups); 1 for a backup, which does
    /// not know it.
    pub group: usize,
    pub metalog: &'a [Entry],
    /// The primary's storage replicas of each shard (empty for a backup).
    pub replicas: &'a [Vec<NodeId>],
}

/// The controller's term, where it is in a reconfiguration, and the final metalog of every
/// term it sealed (`finals[t]` ends term `t`).
#[derive(Clone, Debug)]
pub struct ControllerView<'a> {
    pub term: u64,
    pub sealing: bool,
    pub installing: bool,
    pub primary: NodeId,
    pub finals: Vec<&'a [Entry]>,
}

impl BokiNode {
    pub fn sequencer_view(&self) -> Option<SequencerView<'_>> {
        let BokiNode::Sequencer(q) = self else { return None };
        Some(SequencerView {
            term: q.term,
            primary: q.primary,
            group: if q.primary { q.backups.len() + 1 } else { 1 },
            metalog: &q.metalog,
            replicas: if q.primary { &q.replicas } else { &[] },
        })
    }

    /// An engine's or a storage node's term, and the metalog entries it applied in it.
    pub fn subscriber_view(&self) -> Option<(u64, u64)> {
        match self {
            BokiNode::Engine(e) => Some((e.term, e.metalog.applied())),
            BokiNode::Storage(s) => Some((s.term, s.metalog.applied())),
            _ => None,
        }
    }

    /// A storage node's contiguous received prefix of each shard it stores, in its term.
    pub fn storage_progress(&self) -> Option<&BTreeMap<u32, u64>> {
        let BokiNode::Storage(s) = self else { return None };
        Some(&s.progress)
    }

    /// An engine's shard and the local id its next append gets.
    pub fn engine_next_local_id(&self) -> Option<(u32, u64)> {
        let BokiNode::Engine(e) = self else { return None };
        Some((e.shard, e.next_local_id))
    }

    pub fn controller_view(&self) -> Option<ControllerView<'_>> {
        let BokiNode::Controller(c) = self else { return None };
        Some(ControllerView {
            term: c.config.term,
            sealing: matches!(c.phase, Phase::Sealing(_)),
            installing: matches!(c.phase, Phase::Installing(_)),
            primary: c.config.primary,
            finals: c.installs.iter().map(|config| config.sealed.as_slice()).collect(),
        })
    }
}
