//! Which faults each protocol claims to survive.
//!
//! Every protocol must survive arbitrary message delays (FIFO per link), slow links and
//! partitions that hold messages until they heal: those are never refused. The other faults a
//! scenario can ask for (partitions that drop, message loss, crashes, restarts after a crash)
//! are each either survived (the protocol keeps its consistency level; liveness is not
//! promised) or outside the protocol's model, and then a scenario that asks for one is refused
//! with the reason, rather than run and reported as an anomaly the paper never ruled out.

use causim_sim::config::{FaultsConfig, PartitionMode};
use causim_sim::error::FieldError;

/// A fault beyond delays and holding partitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    DropPartition,
    Loss,
    /// A node stops (crash-stop).
    Crash,
    /// A crashed node comes back (crash-recovery: the crash's `restart_ns`).
    Restart,
}

impl Fault {
    pub const ALL: [Fault; 4] = [Fault::DropPartition, Fault::Loss, Fault::Crash, Fault::Restart];

    /// A short name for listings.
    pub fn key(self) -> &'static str {
        match self {
            Fault::DropPartition => "dropping partition",
            Fault::Loss => "message loss",
            Fault::Crash => "crash",
            Fault::Restart => "restart",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Fault::DropPartition => "a partition that drops messages",
            Fault::Loss => "message loss",
            Fault::Crash => "a crash of a node",
            Fault::Restart => "the restart of a crashed node",
        }
    }
}

/// How a protocol meets one fault: the sentence says why (the paper's claim, or the recovery
/// modelled and why it is faithful), or why not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    Survives(&'static str),
    Outside(&'static str),
}

/// A protocol's fault model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultModel {
    pub drop_partition: Support,
    pub loss: Support,
    pub crash: Support,
    pub restart: Support,
    /// The most crashes one run may have (a protocol that tolerates f failures).
    pub crashes_max: usize,
}

impl FaultModel {
    /// A protocol whose safety never waits on a particular message and whose nodes keep their
    /// state across a crash (modelled as durable: a restart loses only the messages and timers
    /// of the downtime). Lost messages can stall work; they cannot make a history wrong.
    pub const STATE_KEPT: FaultModel = FaultModel {
        drop_partition: Support::Survives("a dropped message stalls only the request that waited for it"),
        loss: Support::Survives("a lost message stalls only the request that waited for it (nothing is retransmitted)"),
        crash: Support::Survives("a crashed node loses the messages sent to it while it is down, and its timers"),
        restart: Support::Survives("a node keeps its state across a crash (modelled as durable)"),
        crashes_max: usize::MAX,
    };

    /// A protocol modelled without failures of any kind, for the reason given.
    pub const fn fault_free(why: &'static str) -> FaultModel {
        FaultModel {
            drop_partition: Support::Outside(why),
            loss: Support::Outside(why),
            crash: Support::Outside(why),
            restart: Support::Outside(why),
            crashes_max: 0,
        }
    }

    pub fn support(&self, fault: Fault) -> Support {
        match fault {
            Fault::DropPartition => self.drop_partition,
            Fault::Loss => self.loss,
            Fault::Crash => self.crash,
            Fault::Restart => self.restart,
        }
    }

    pub fn survives(&self, fault: Fault) -> bool {
        matches!(self.support(fault), Support::Survives(_))
    }

    /// Refuses the first fault of `faults` outside this model, naming its field.
    pub fn check(&self, protocol: &str, faults: &FaultsConfig) -> Result<(), FieldError> {
        let refuse = |fault: Fault, path: String| -> Result<(), FieldError> {
            match self.support(fault) {
                Support::Survives(_) => Ok(()),
                Support::Outside(why) => {
                    Err(FieldError::new(path, format!("{protocol}: {} is outside the protocol's fault model: {why}", fault.name())))
                }
            }
        };
        for (i, p) in faults.partitions.iter().enumerate() {
            if p.mode == PartitionMode::Drop {
                refuse(Fault::DropPartition, format!("faults.partitions[{i}].mode"))?;
            }
        }
        if faults.loss_probability > 0.0 {
            refuse(Fault::Loss, "faults.loss_probability".into())?;
        }
        if !faults.crashes.is_empty() {
            refuse(Fault::Crash, "faults.crashes[0]".into())?;
        }
        if faults.crashes.len() > self.crashes_max {
            return Err(FieldError::new(
                format!("faults.crashes[{}]", self.crashes_max),
                format!("{protocol}: the protocol's fault model has at most {} crash(es) per run", self.crashes_max),
            ));
        }
        for (i, c) in faults.crashes.iter().enumerate() {
            if c.restart_ns.is_some() {
                refuse(Fault::Restart, format!("faults.crashes[{i}].restart_ns"))?;
            }
        }
        Ok(())
    }
}
