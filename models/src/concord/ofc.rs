//! The OFC baseline (Mvondo et al., EuroSys '21, as Concord's §II-B and §VI compare with it; the
//! digest §3): one copy of each item, at its home, so no coherence is needed.
//!
//! - Every key has a home by the same consistent hashing as Concord's (`ring.rs`), whose cache
//!   holds the key's value; no other machine keeps a copy.
//! - **Reads** on the home's machine are local; elsewhere they are a round trip to the home,
//!   which reads storage on a miss (and keeps the value).
//! - **Writes** go to the home, which updates its copy and writes storage (write-through), and
//!   answers once storage has acknowledged.
//! - The home's cache holds at most `params.lines_max` keys (LRU); a key with a write in flight
//!   is not evicted (its reload from storage would miss that write).
//!
//! It shares the Faa$T baseline's home (`faast.rs`: serialization by the home, loads that hold
//! the key's requests until storage answers), with no copies outside the home. Choices where the
//! paper is silent: OFC's cache is per node and shared by applications; with one application,
//! as here, that is a cache per node. Per-key linearizable: one copy, serialized at its home.
//! Fault-free only, like Faa$T.

use super::faast::{Faast, FaastNode};
use crate::catalogue::{Entry, Profile, SeriesStyle};
use crate::{FaultModel, Model, metrics};
use causim_checkers::Level;
use causim_sim::config::{SimConfig, TopologyConfig};
use causim_sim::error::FieldError;
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use proptest::prelude::*;

/// The OFC baseline: Faa$T's homes with no copies outside them.
#[derive(Clone, Debug)]
pub struct Ofc(Faast);

impl Protocol for Ofc {
    type Node = FaastNode;
    type Context = ();

    fn fixed_nodes(&self) -> Vec<FixedNode<FaastNode>> {
        self.0.fixed_nodes()
    }

    fn new_context(&self) {}

    fn spawn_function(&self, start: FunctionStart<'_, ()>) -> FaastNode {
        self.0.spawn_function(start)
    }

    fn finish_function(&self, _node: FaastNode) {}

    fn join_contexts(&self, _contexts: Vec<()>) {}
}

impl Model for Ofc {
    const ENTRY: Entry = Entry {
        name: "ofc",
        about: "OFC-style caching (Concord's baseline): one copy of each item, in its home's cache, which other machines read remotely; write-through; per-key linearizable",
        level: Level::Linearizable,
        mutants: &[],
        profile: Profile {
            database: true,
            observations: &[metrics::READ_LOCAL_NS, metrics::READ_REMOTE_HIT_NS, metrics::READ_MISS_NS],
            ..Profile::PLAIN
        },
        faults: FaultModel::fault_free("the OFC baseline models no failure handling; it is compared with Concord in fault-free runs"),
        series: &[SeriesStyle { label: "OFC", colour: (0, 158, 115) }],
    };

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        let mut faast = Faast::build(params, mutants, topology)?;
        faast.single_copy = true;
        Ok(Ofc(faast))
    }

    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        // Small home caches in half the cases, so evictions and reloads are common.
        prop::option::weighted(0.5, 1usize..4)
            .prop_map(|max| max.map_or_else(|| serde_json::json!({}), |n| serde_json::json!({"lines_max": n})))
            .boxed()
    }

    fn check_run(config: &SimConfig) -> Result<(), FieldError> {
        super::refuse_read_txns(config, "the OFC baseline's functions read and write single keys")
    }
}
