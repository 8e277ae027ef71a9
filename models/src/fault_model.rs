//! Which faults each protocol claims to survive.
//!
//! Every protocol must survive arbitrary message delays (FIFO per link), slow links and
//! partitions that hold messages until they heal: those are never refused. The other faults a
//! scenario can ask for (partitions that drop, message loss, crashes) are each either survived
//! (the protocol keeps its consistency level; liveness is not promised) or outside the
//! protocol's model, and then a scenario that asks for one is refused with the reason, rather
//! than run and reported as an anomaly the paper never ruled out.

use causim_sim::config::{FaultsConfig, PartitionMode};
use causim_sim::error::FieldError;

/// A fault beyond delays and holding partitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    DropPartition,
    Loss,
    Crash,
}

impl Fault {
    pub const ALL: [Fault; 3] = [Fault::DropPartition, Fault::Loss, Fault::Crash];

    /// A short name for listings.
    pub fn key(self) -> &'static str {
        match self {
            Fault::DropPartition => "dropping partition",
            Fault::Loss => "message loss",
            Fault::Crash => "crash",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Fault::DropPartition => "a partition that drops messages",
            Fault::Loss => "message loss",
            Fault::Crash => "a crash of a node",
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
}

impl FaultModel {
    /// A protocol whose safety never waits on a particular message and whose nodes keep their
    /// state across a crash (modelled as durable: a restart loses only the messages and timers
    /// of the downtime). Lost messages can stall work; they cannot make a history wrong.
    pub const STATE_KEPT: FaultModel = FaultModel {
        drop_partition: Support::Survives("a dropped message stalls only the request that waited for it"),
        loss: Support::Survives("a lost message stalls only the request that waited for it (nothing is retransmitted)"),
        crash: Support::Survives(
            "a node keeps its state across a crash (modelled as durable) and loses the messages and timers of its downtime",
        ),
    };

    pub fn support(&self, fault: Fault) -> Support {
        match fault {
            Fault::DropPartition => self.drop_partition,
            Fault::Loss => self.loss,
            Fault::Crash => self.crash,
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
        Ok(())
    }
}
