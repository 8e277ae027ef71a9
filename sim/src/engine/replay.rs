//! Replay schedules: deliver messages in a recorded order instead of after sampled delays.
//!
//! A model checker's counterexample is an interleaving: "deliver the oldest message on link
//! c1/f0 → S0, then the oldest on S0 → S1, ...". Link delays and start times cannot always
//! realise one (a link has one delay distribution, but a counterexample may need its first
//! message slow and its second fast relative to other links), so the engine replays it
//! directly: while the schedule lasts, every sent message waits on its link, and a `ReplayStep`
//! event every `step_ns` delivers the oldest waiting message of the link the schedule names.
//! Everything else (function starts, timers) runs in time order between steps, so a function
//! that a delivery completes starts its successor, whose request then waits for its step.
//!
//! Links are matched by the names traces use (`S0`, `c1/f0`), computed when the message is
//! sent. A step that finds nothing on its link, or a message of another kind than it names,
//! means the run has diverged from the recording; the engine stops the run and says which
//! step diverged. After the last step the waiting messages go on with the normal delays.
//!
//! The names a schedule uses are checked when the run is built: fixed node names, and function
//! names `<session>[#<attempt>]/f<index>` of scripted sessions (or `w<id>/f<index>` for
//! generated workflows).

use crate::config::{ReplayConfig, ReplayDelivery};
use crate::error::FieldError;
use crate::node::{Message, NodeId};
use crate::time::Time;

/// A message waiting for its step.
pub(crate) struct Waiting<M> {
    pub from: NodeId,
    pub to: NodeId,
    pub link: (String, String),
    pub msg: M,
}

pub(crate) struct Replay<M> {
    steps: Vec<ReplayDelivery>,
    next: usize,
    pub step_ns: Time,
    /// In send order.
    waiting: Vec<Waiting<M>>,
}

impl<M: Message> Replay<M> {
    pub fn new(config: &ReplayConfig) -> Replay<M> {
        Replay { steps: config.deliveries.clone(), next: 0, step_ns: config.step_ns, waiting: Vec::new() }
    }

    /// Steps remain: messages wait for them.
    pub fn active(&self) -> bool {
        self.next < self.steps.len()
    }

    pub fn hold(&mut self, waiting: Waiting<M>) {
        self.waiting.push(waiting);
    }

    /// The message the next step delivers, or why the run diverged from the schedule.
    pub fn take_next(&mut self) -> Result<Waiting<M>, String> {
        let index = self.next;
        let step = &self.steps[index];
        self.next += 1;
        let found = self.waiting.iter().position(|w| w.link.0 == step.from && w.link.1 == step.to);
        let Some(pos) = found else {
            return Err(format!("step {index} ({} → {}): no message is waiting on that link", step.from, step.to));
        };
        if let Some(kind) = &step.msg
            && self.waiting[pos].msg.kind() != kind
        {
            return Err(format!(
                "step {index} ({} → {}): the next message on that link is {}, not {kind}",
                step.from,
                step.to,
                self.waiting[pos].msg.kind()
            ));
        }
        Ok(self.waiting.remove(pos))
    }

    /// The messages still waiting, in send order (the schedule is over).
    pub fn release_all(&mut self) -> Vec<Waiting<M>> {
        self.next = self.steps.len();
        std::mem::take(&mut self.waiting)
    }
}

/// Checks a schedule's names: fixed node names, and function names of scripted sessions
/// (`sessions`: name and function count) or generated workflows. Errors are (JSON path,
/// message).
pub(crate) fn check_names(config: &ReplayConfig, nodes: &[String], sessions: Option<&[(String, usize)]>) -> Result<(), FieldError> {
    let function_ok = |name: &str| -> bool {
        let Some((base, index)) = name.rsplit_once("/f") else { return false };
        let Ok(index) = index.parse::<usize>() else { return false };
        let session = match base.split_once('#') {
            Some((s, attempt)) => match attempt.parse::<u32>() {
                Ok(a) if a >= 2 => s,
                _ => return false,
            },
            None => base,
        };
        match sessions {
            Some(list) => list.iter().any(|(s, n)| s == session && index < *n),
            None => session.strip_prefix('w').is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())),
        }
    };
    for (i, d) in config.deliveries.iter().enumerate() {
        for (field, name) in [("from", &d.from), ("to", &d.to)] {
            if nodes.iter().any(|n| n == name) || function_ok(name) {
                continue;
            }
            let functions = match sessions {
                Some(list) => {
                    let names: Vec<&str> = list.iter().map(|(s, _)| s.as_str()).collect();
                    format!("<session>/f<index> with sessions {}", names.join(", "))
                }
                None => "w<workflow>/f<index>".to_string(),
            };
            return Err(FieldError::new(
                format!("replay.deliveries[{i}].{field}"),
                format!("no node or function named {name:?}; nodes are {}, functions are {functions}", nodes.join(", ")),
            ));
        }
        if d.from == d.to {
            return Err(FieldError::new(
                format!("replay.deliveries[{i}].to"),
                format!("a link joins two different nodes, not {:?} and itself", d.from),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(steps: &[(&str, &str)]) -> ReplayConfig {
        ReplayConfig {
            deliveries: steps.iter().map(|(f, t)| ReplayDelivery { from: f.to_string(), to: t.to_string(), msg: None }).collect(),
            step_ns: 1000,
        }
    }

    #[test]
    fn names_are_nodes_or_functions_of_known_sessions() {
        let nodes = vec!["S0".to_string(), "S1".to_string(), "db".to_string()];
        let sessions = vec![("c1".to_string(), 2)];
        assert!(check_names(&config(&[("c1/f1", "S0"), ("S0", "c1#2/f0")]), &nodes, Some(&sessions)).is_ok());
        let err = check_names(&config(&[("c1/f0", "S0"), ("S0", "c1/f2")]), &nodes, Some(&sessions)).unwrap_err();
        assert_eq!(err.path, "replay.deliveries[1].to");
        assert!(err.message.contains("\"c1/f2\"") && err.message.contains("sessions c1"), "{}", err.message);
        assert!(check_names(&config(&[("c2/f0", "S0")]), &nodes, Some(&sessions)).is_err());
        assert!(check_names(&config(&[("c1#1/f0", "S0")]), &nodes, Some(&sessions)).is_err(), "attempt 1 has no #");
        assert!(check_names(&config(&[("w17/f3", "S0")]), &nodes, None).is_ok());
        assert!(check_names(&config(&[("S0", "S0")]), &nodes, None).is_err());
    }
}
