//! The engine's configuration: the scenario fields that are not protocol-specific.
//!
//! The scenario JSON uses exactly these field names. Every default lives here, documented on
//! its field, and a run prints the resolved configuration (habit: no hidden knobs).

use crate::cost::CostModel;
use crate::dist::DurationDist;
use crate::error::FieldError;
use crate::time::{MS, S, Time};
use crate::workload::WorkloadConfig;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything the engine needs besides the protocol.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    pub seed: u64,
    pub topology: TopologyConfig,
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    pub workload: WorkloadConfig,
    #[serde(default)]
    pub faults: FaultsConfig,
    #[serde(default)]
    pub limits: LimitsConfig,
    /// Replays a recorded interleaving instead of sampling link delays (see [`ReplayConfig`]).
    /// Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayConfig>,
}

/// A delivery schedule: the order in which messages are delivered, as a model checker's
/// counterexample gives it (`causim model-check` writes one).
///
/// While the schedule lasts, every message waits on its link (FIFO per ordered pair of nodes,
/// or function instances) instead of being delayed: each step delivers the oldest waiting
/// message of the link it names, `step_ns` after the previous step. Everything else runs as
/// usual, in time order between steps: functions start when their predecessor finishes,
/// timers fire when due. When the schedule is exhausted, the messages still waiting are sent
/// on with the normal link delays. A step that finds no message waiting on its link (or one of
/// another kind than it names) means the run no longer follows the recording: the run stops
/// with `stopped_by` saying which step diverged.
///
/// Links are named by node names (`S0`, `db`) and function instance names (`c1/f0`: the
/// session's function 0; `c1#2/f0` for a retry; `w17/f3` in generated workloads), as in traces.
/// Faults (partitions, crashes, loss) cannot be combined with a replay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayConfig {
    pub deliveries: Vec<ReplayDelivery>,
    /// Simulated time between two scheduled deliveries. Default 1000 ns.
    #[serde(default = "default_replay_step_ns")]
    pub step_ns: Time,
}

/// One step of a replay: deliver the oldest message waiting on the link `from → to`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayDelivery {
    pub from: String,
    pub to: String,
    /// The message kind expected (`ServerWrite`, ...); checked when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg: Option<String>,
}

/// Machines, cores, service times and links.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyConfig {
    /// Number of protocol servers (cache servers, replicas). Each sits on its own machine,
    /// which also runs serverless workers.
    pub servers: u32,
    /// Function slots per worker machine; functions beyond it wait in FIFO order. Default 8
    /// (the CausalMesh evaluation's 8 Nightcore workers per machine).
    #[serde(default = "default_workers_per_machine")]
    pub workers_per_machine: u32,
    /// Cores per fixed node (server, database). Default 1.
    #[serde(default = "default_cores")]
    pub cores_per_node: u32,
    /// Service time per message on a fixed node. Default 0 (infinitely fast nodes: no queueing).
    #[serde(default = "zero")]
    pub service: DurationDist,
    /// Service time overrides per message kind (`ClientRead`, ...).
    #[serde(default)]
    pub service_by_kind: BTreeMap<String, DurationDist>,
    /// Per-node overrides of cores and service time, by node name.
    #[serde(default)]
    pub nodes: BTreeMap<String, NodeOverride>,
    /// One-way delay between two machines.
    pub delay: DurationDist,
    /// One-way delay within a machine (a function calling its co-located cache server).
    /// Default 0.
    #[serde(default = "zero")]
    pub local_delay: DurationDist,
    /// Bandwidth of every link between machines, in bytes per second: a message then also
    /// takes its size over the bandwidth to transmit, so metadata costs time. Default: none
    /// (size is free).
    #[serde(default)]
    pub bandwidth_bytes_per_s: Option<u64>,
    /// CPU charged for what messages carry, on top of `service` (`crate::cost`): `"calibrated"`,
    /// or `{"ns_per_kib": ..., "function_message_ns": ...}`. Default: none (size costs nothing).
    #[serde(default, deserialize_with = "crate::cost::deserialize_cost", skip_serializing_if = "CostModel::is_zero")]
    pub cost: CostModel,
    /// Per-link delay overrides, by machine name (`{"from":"S0","to":"S1","delay":{...}}`);
    /// `"*"` stands for every machine (`{"from":"*","to":"db",...}`). Later entries win.
    #[serde(default)]
    pub links: Vec<LinkOverride>,
}

impl TopologyConfig {
    /// `servers` machines `delay` apart, every other field at its default.
    pub fn new(servers: u32, delay: DurationDist) -> TopologyConfig {
        TopologyConfig {
            servers,
            workers_per_machine: default_workers_per_machine(),
            cores_per_node: default_cores(),
            service: DurationDist::ZERO,
            service_by_kind: BTreeMap::new(),
            nodes: BTreeMap::new(),
            delay,
            local_delay: DurationDist::ZERO,
            bandwidth_bytes_per_s: None,
            cost: CostModel::default(),
            links: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeOverride {
    #[serde(default)]
    pub cores: Option<u32>,
    #[serde(default)]
    pub service: Option<DurationDist>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkOverride {
    pub from: String,
    pub to: String,
    pub delay: DurationDist,
    /// Also override `to → from`. Default false (links are directed).
    #[serde(default)]
    pub both_ways: bool,
}

/// Where functions run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulerConfig {
    /// Placement policy for a workflow's functions. Default `random`.
    #[serde(default)]
    pub policy: PlacementPolicy,
    /// If set, a function after the first stays on its predecessor's machine with probability
    /// `1 − p` and moves (to a machine the policy picks among the others) with probability `p`.
    #[serde(default)]
    pub migrate_probability: Option<f64>,
    /// Delay between a function finishing and its successor being placed. Default 0.
    #[serde(default = "zero")]
    pub dispatch: DurationDist,
    /// How often an aborted workflow is retried before it counts as failed. Default 10.
    #[serde(default = "default_attempts_max")]
    pub attempts_max: u32,
    /// Wait before retrying an aborted workflow. Default 0.
    #[serde(default = "zero")]
    pub retry_backoff: DurationDist,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            policy: PlacementPolicy::default(),
            migrate_probability: None,
            dispatch: DurationDist::ZERO,
            attempts_max: default_attempts_max(),
            retry_backoff: DurationDist::ZERO,
        }
    }
}

/// How the scheduler picks a worker machine for a function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlacementPolicy {
    /// Uniformly at random (AWS Lambda-like).
    #[default]
    Random,
    /// Machines in turn, over all functions.
    RoundRobin,
    /// The predecessor's machine; the first function goes to a random machine.
    Sticky,
    /// The machine with the fewest running and waiting functions (lowest index on ties).
    LeastLoaded,
    /// A hash of the function's input (its first key), so equal inputs land together.
    HashOfInput,
}

/// Faults: partitions, crashes, message loss.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultsConfig {
    #[serde(default)]
    pub partitions: Vec<PartitionConfig>,
    #[serde(default)]
    pub crashes: Vec<CrashConfig>,
    /// Probability that any message between two different machines is lost. Default 0.
    #[serde(default)]
    pub loss_probability: f64,
}

/// Cuts the links between machines in different groups from `start_ns` until `heal_ns`.
/// Machines not listed are unaffected. A partition affects messages *sent* while it is active:
/// `hold` delivers them after the heal (in order), `drop` loses them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionConfig {
    pub groups: Vec<Vec<String>>,
    pub start_ns: Time,
    /// Default: never heals.
    #[serde(default)]
    pub heal_ns: Option<Time>,
    #[serde(default)]
    pub mode: PartitionMode,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitionMode {
    #[default]
    Hold,
    Drop,
}

/// A fixed node crashes at `at_ns` (losing its volatile state and every message addressed to
/// it until it restarts) and restarts at `restart_ns`, if given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrashConfig {
    pub node: String,
    pub at_ns: Time,
    #[serde(default)]
    pub restart_ns: Option<Time>,
}

/// Bounds on a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsConfig {
    /// Stop at this simulated time. Default 3600 s.
    #[serde(default = "default_time_max")]
    pub time_ns_max: Time,
    /// Stop after this many events. Default 10^10.
    #[serde(default = "default_events_max")]
    pub events_max: u64,
    /// After the last workflow finishes, keep running this long (so propagation can finish and
    /// convergence can be observed). Default 0.
    #[serde(default)]
    pub settle_ns: Time,
    /// Stop when inputs waiting for a core at one node reach this many: the offered load
    /// exceeds the node's capacity, and the queue would otherwise grow with the run (memory
    /// with it). Default 10^6.
    #[serde(default = "default_run_queue_max")]
    pub run_queue_max: u64,
    /// Stop when the workflows still running have made no progress (no function started or
    /// ended, no operation recorded, no abort) for this long and no more will start: a reply
    /// lost for good (no protocol here retransmits) would otherwise keep a run's periodic
    /// timers going until `time_ns_max`. Default: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_ns: Option<Time>,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            time_ns_max: default_time_max(),
            events_max: default_events_max(),
            settle_ns: 0,
            run_queue_max: default_run_queue_max(),
            stall_ns: None,
        }
    }
}

fn zero() -> DurationDist {
    DurationDist::ZERO
}
fn default_workers_per_machine() -> u32 {
    8
}
fn default_cores() -> u32 {
    1
}
fn default_attempts_max() -> u32 {
    10
}
fn default_time_max() -> Time {
    3600 * S
}
fn default_events_max() -> u64 {
    10_000_000_000
}
fn default_run_queue_max() -> u64 {
    1_000_000
}
fn default_replay_step_ns() -> Time {
    1_000
}

/// Bounds that keep a scenario from allocating without limit.
pub const SERVERS_MAX: u32 = 1024;
pub const CORES_MAX: u32 = 1024;
pub const WORKERS_PER_MACHINE_MAX: u32 = 1 << 16;

impl SimConfig {
    /// Checks values that types cannot; errors are (JSON path, message).
    pub fn validate(&self) -> Result<(), FieldError> {
        let t = &self.topology;
        if t.servers == 0 || t.servers > SERVERS_MAX {
            return Err(FieldError::new("topology.servers", format!("must be between 1 and {SERVERS_MAX}, got {}", t.servers)));
        }
        if t.workers_per_machine == 0 || t.workers_per_machine > WORKERS_PER_MACHINE_MAX {
            return Err(FieldError::new(
                "topology.workers_per_machine",
                format!("must be between 1 and {WORKERS_PER_MACHINE_MAX}, got {}", t.workers_per_machine),
            ));
        }
        check_cores("topology.cores_per_node", t.cores_per_node)?;
        if t.bandwidth_bytes_per_s == Some(0) {
            return Err(FieldError::new("topology.bandwidth_bytes_per_s", "must be positive"));
        }
        let dist = |path: String, d: &DurationDist| d.validate().map_err(|e| e.within(&path));
        dist("topology.service".into(), &t.service)?;
        dist("topology.delay".into(), &t.delay)?;
        dist("topology.local_delay".into(), &t.local_delay)?;
        for (kind, d) in &t.service_by_kind {
            dist(format!("topology.service_by_kind.{kind}"), d)?;
        }
        for (name, o) in &t.nodes {
            if let Some(c) = o.cores {
                check_cores(&format!("topology.nodes.{name}.cores"), c)?;
            }
            if let Some(d) = &o.service {
                dist(format!("topology.nodes.{name}.service"), d)?;
            }
        }
        for (i, l) in t.links.iter().enumerate() {
            dist(format!("topology.links[{i}].delay"), &l.delay)?;
        }
        let s = &self.scheduler;
        if let Some(p) = s.migrate_probability
            && !(0.0..=1.0).contains(&p)
        {
            return Err(FieldError::new("scheduler.migrate_probability", format!("must be in [0, 1], got {p}")));
        }
        dist("scheduler.dispatch".into(), &s.dispatch)?;
        dist("scheduler.retry_backoff".into(), &s.retry_backoff)?;
        if s.attempts_max == 0 {
            return Err(FieldError::new("scheduler.attempts_max", "must be at least 1"));
        }
        let f = &self.faults;
        if !(0.0..=1.0).contains(&f.loss_probability) {
            return Err(FieldError::new("faults.loss_probability", format!("must be in [0, 1], got {}", f.loss_probability)));
        }
        for (i, p) in f.partitions.iter().enumerate() {
            if p.groups.len() < 2 {
                return Err(FieldError::new(format!("faults.partitions[{i}].groups"), "a partition needs at least two groups"));
            }
            if let Some(heal) = p.heal_ns
                && heal < p.start_ns
            {
                return Err(FieldError::new(
                    format!("faults.partitions[{i}].heal_ns"),
                    format!("heal_ns ({heal}) is before start_ns ({})", p.start_ns),
                ));
            }
        }
        for (i, c) in f.crashes.iter().enumerate() {
            if let Some(r) = c.restart_ns
                && r < c.at_ns
            {
                return Err(FieldError::new(
                    format!("faults.crashes[{i}].restart_ns"),
                    format!("restart_ns ({r}) is before at_ns ({})", c.at_ns),
                ));
            }
        }
        if self.limits.stall_ns == Some(0) {
            return Err(FieldError::new("limits.stall_ns", "must be positive (leave it out to never stop a stalled run)"));
        }
        if self.limits.run_queue_max == 0 {
            return Err(FieldError::new("limits.run_queue_max", "must be positive"));
        }
        if self.limits.time_ns_max == 0 {
            return Err(FieldError::new("limits.time_ns_max", "must be positive"));
        }
        if let Some(r) = &self.replay {
            if r.step_ns == 0 {
                return Err(FieldError::new("replay.step_ns", "must be positive"));
            }
            if !f.partitions.is_empty() || !f.crashes.is_empty() || f.loss_probability > 0.0 {
                return Err(FieldError::new("replay", "a replay cannot be combined with faults (partitions, crashes, loss)"));
            }
            for (i, d) in r.deliveries.iter().enumerate() {
                for (field, name) in [("from", &d.from), ("to", &d.to)] {
                    if name.is_empty() {
                        return Err(FieldError::new(
                            format!("replay.deliveries[{i}].{field}"),
                            "a node or function name must not be empty",
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

fn check_cores(path: &str, cores: u32) -> Result<(), FieldError> {
    if cores == 0 || cores > CORES_MAX {
        return Err(FieldError::new(path, format!("must be between 1 and {CORES_MAX}, got {cores}")));
    }
    Ok(())
}

/// A typical intra-datacenter one-way delay (half the CausalMesh evaluation's 0.15 ms RTT).
pub const DATACENTER_ONE_WAY_NS: Time = 75_000;
/// The CausalMesh evaluation's artificial database latency.
pub const DATABASE_LATENCY_NS: Time = 5 * MS;
