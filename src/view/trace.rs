//! Reads a run's `trace.jsonl` into what a space-time diagram draws: the fixed nodes, the
//! functions (which session each belongs to and where it ran), every message from its send to
//! its fate, the protocol steps, and the faults.
//!
//! The trace names a message by its link and kind only (`from`, `to`, `msg`), so a delivery is
//! paired with its send here: among the messages in flight on that link with that kind, the one
//! whose `deliver_at` is now, else the oldest. A `drop` with such a message in flight is a loss
//! at the receiver (it had crashed, or the function had finished); without one, the message was
//! lost as it was sent (loss, partition). A `hold` (a partition) or `wait` (a replay schedule)
//! parks the message at its sender; the `release` and the `send` that follow it continue the
//! same message, so the diagram draws one arrow that starts where the message was first sent.
//! Messages of one kind on one link are interchangeable for this pairing; when a replay delivers
//! them out of order, two such arrows may be swapped, which changes no time and no endpoint.

use std::collections::{BTreeMap, VecDeque};

/// Where a message ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Delivered = 0,
    /// Lost at the receiver: it had crashed, or the function had finished.
    DroppedAtReceiver = 1,
    /// Lost on the way: message loss, a partition that drops, a sender that had no machine.
    DroppedInNetwork = 2,
    /// Still in flight, or held, when the run ended.
    Unfinished = 3,
}

/// One message, from its first send to its fate. Endpoints are lane references (`Endpoint`).
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub from: Endpoint,
    pub to: Endpoint,
    pub kind: String,
    /// When it was first sent (held and waiting messages start here).
    pub sent_ns: u64,
    /// When it left the sender for good (`sent_ns` unless a partition or a replay parked it).
    pub released_ns: u64,
    /// Delivery or loss; for unfinished messages the planned delivery, or the end of the run.
    pub end_ns: u64,
    pub fate: Fate,
    /// Why it was dropped (`loss`, `partition`, `crashed`, `retired`), or `held` / `waiting`
    /// for an unfinished parked message.
    pub reason: Option<String>,
    /// The delivered message's debug text.
    pub detail: Option<String>,
}

/// A node or a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Endpoint {
    Node(usize),
    Function(usize),
}

/// A function: one step of a workflow attempt, as the trace names it (`c1/f0`, `w17#2/f1`).
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    /// The machine (fixed node) it was placed on.
    pub machine: Option<usize>,
    pub start_ns: u64,
    pub end_ns: Option<u64>,
    /// History records it wrote (transaction ids).
    pub records: Vec<u64>,
}

/// A protocol step (`action`), attributed to the function whose message the node was handling.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub t_ns: u64,
    pub at: Endpoint,
    pub function: Option<usize>,
    pub action: String,
    pub args: String,
}

/// Crashes, restarts, partitions, invariant failures, a replay that diverged.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    Crash { node: usize, t_ns: u64 },
    Restart { node: usize, t_ns: u64 },
    Partition { index: u64, start_ns: u64, heal_ns: Option<u64> },
    Invariant { at: Endpoint, t_ns: u64, violation: String },
    ReplayDiverged { t_ns: u64, why: String },
    Abort { session: String, t_ns: u64, reason: String },
}

#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub nodes: Vec<String>,
    pub functions: Vec<Function>,
    pub messages: Vec<Message>,
    pub steps: Vec<Step>,
    pub faults: Vec<Fault>,
    /// The last time in the trace.
    pub end_ns: u64,
}

/// A bad trace line.
#[derive(Debug, PartialEq, Eq)]
pub struct TraceError {
    pub line: usize,
    pub message: String,
}

type Link = (Endpoint, Endpoint, String);

/// Incremental reader state: the lookups that pair events of one message.
#[derive(Default)]
struct Reader {
    trace: Trace,
    node_index: BTreeMap<String, usize>,
    function_index: BTreeMap<String, usize>,
    /// Sent, not yet delivered or dropped.
    in_flight: BTreeMap<Link, VecDeque<usize>>,
    /// Held by a partition or waiting for a replay step.
    parked: BTreeMap<Link, VecDeque<usize>>,
    /// Released this instant; the `send` (or `drop`) that follows continues it.
    released: BTreeMap<Link, VecDeque<usize>>,
    /// The last delivery to each endpoint: (time, sender), to attribute the steps that follow.
    last_delivery: BTreeMap<Endpoint, (u64, Endpoint)>,
    open_partitions: BTreeMap<u64, usize>,
}

/// Parses the trace. Unknown events are skipped (the legend may grow); a line that is not a
/// JSON object with `t` and `ev`, or an event without the fields the legend promises, is an
/// error naming its line.
pub fn read(text: &str) -> Result<Trace, TraceError> {
    let mut r = Reader::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        let e: serde_json::Value = serde_json::from_str(line).map_err(|err| TraceError { line: n, message: format!("not JSON: {err}") })?;
        r.event(&e).map_err(|message| TraceError { line: n, message })?;
    }
    // Messages still in flight, parked or released keep the fate they were created with.
    Ok(r.trace)
}

fn field<'a>(e: &'a serde_json::Value, name: &str) -> Result<&'a str, String> {
    e.get(name).and_then(|v| v.as_str()).ok_or_else(|| format!("field `{name}`: missing or not a string"))
}

fn number(e: &serde_json::Value, name: &str) -> Result<u64, String> {
    e.get(name).and_then(|v| v.as_u64()).ok_or_else(|| format!("field `{name}`: missing or not a non-negative integer"))
}

impl Reader {
    fn event(&mut self, e: &serde_json::Value) -> Result<(), String> {
        let t = number(e, "t")?;
        self.trace.end_ns = self.trace.end_ns.max(t);
        match field(e, "ev")? {
            "start" => {
                self.node(field(e, "node")?);
            }
            "place" => {
                let machine = self.node(field(e, "machine")?);
                let f = self.function(field(e, "fn")?, t);
                self.trace.functions[f].machine = Some(machine);
            }
            "done" => {
                let f = self.function(field(e, "fn")?, t);
                self.trace.functions[f].end_ns = Some(t);
            }
            "record" => {
                let f = self.function(field(e, "fn")?, t);
                self.trace.functions[f].records.push(number(e, "id")?);
            }
            "send" => {
                let link = self.link(e)?;
                let planned = number(e, "deliver_at")?;
                match pop(&mut self.released, &link) {
                    Some(m) => {
                        let msg = &mut self.trace.messages[m];
                        msg.released_ns = t;
                        msg.end_ns = planned;
                        self.in_flight.entry(link).or_default().push_back(m);
                    }
                    None => {
                        let m = self.new_message(&link, t, planned);
                        self.in_flight.entry(link).or_default().push_back(m);
                    }
                }
            }
            "deliver" => {
                let link = self.link(e)?;
                let m = match take_due(&mut self.in_flight, &link, t, &self.trace.messages).or_else(|| pop(&mut self.parked, &link)) {
                    Some(m) => m,
                    // A delivery the trace never showed leaving (not written by causim today).
                    None => self.new_message(&link, t, t),
                };
                let msg = &mut self.trace.messages[m];
                if msg.reason.as_deref() == Some("waiting") {
                    // A replay step hands a waiting message over at once.
                    msg.released_ns = t;
                }
                msg.reason = None;
                msg.end_ns = t;
                msg.fate = Fate::Delivered;
                msg.detail = e.get("detail").and_then(|d| d.as_str()).map(str::to_string);
                self.last_delivery.insert(link.1, (t, link.0));
            }
            "drop" => {
                let link = self.link(e)?;
                let reason = field(e, "reason")?.to_string();
                let (m, fate) = match take_due(&mut self.in_flight, &link, t, &self.trace.messages) {
                    Some(m) => (m, Fate::DroppedAtReceiver),
                    None => match pop(&mut self.released, &link) {
                        Some(m) => (m, Fate::DroppedInNetwork),
                        None => (self.new_message(&link, t, t), Fate::DroppedInNetwork),
                    },
                };
                let msg = &mut self.trace.messages[m];
                if fate == Fate::DroppedInNetwork {
                    msg.released_ns = t;
                }
                msg.end_ns = t;
                msg.fate = fate;
                msg.reason = Some(reason);
            }
            ev @ ("hold" | "wait") => {
                let link = self.link(e)?;
                let m = self.new_message(&link, t, t);
                self.trace.messages[m].reason = Some(if ev == "hold" { "held" } else { "waiting" }.to_string());
                self.parked.entry(link).or_default().push_back(m);
            }
            "release" => {
                let link = self.link(e)?;
                if let Some(m) = pop(&mut self.parked, &link) {
                    self.trace.messages[m].reason = None;
                    self.released.entry(link).or_default().push_back(m);
                }
            }
            "action" => {
                let at = self.endpoint(field(e, "node")?, t);
                let function = match at {
                    Endpoint::Function(f) => Some(f),
                    // A node's step at the instant it handled a function's message is that
                    // function's doing (the engine writes the steps right after the delivery).
                    Endpoint::Node(_) => match self.last_delivery.get(&at) {
                        Some(&(when, Endpoint::Function(f))) if when == t => Some(f),
                        _ => None,
                    },
                };
                let args = e.get("args").map_or_else(String::new, |a| a.to_string());
                self.trace.steps.push(Step { t_ns: t, at, function, action: field(e, "action")?.to_string(), args });
            }
            "crash" => {
                let node = self.node(field(e, "node")?);
                self.trace.faults.push(Fault::Crash { node, t_ns: t });
            }
            "restart" => {
                let node = self.node(field(e, "node")?);
                self.trace.faults.push(Fault::Restart { node, t_ns: t });
            }
            "partition" => {
                let index = number(e, "index")?;
                self.open_partitions.insert(index, self.trace.faults.len());
                self.trace.faults.push(Fault::Partition { index, start_ns: t, heal_ns: None });
            }
            "heal" => {
                let index = number(e, "index")?;
                if let Some(i) = self.open_partitions.remove(&index)
                    && let Fault::Partition { heal_ns, .. } = &mut self.trace.faults[i]
                {
                    *heal_ns = Some(t);
                }
            }
            "invariant" => {
                let at = self.endpoint(field(e, "node")?, t);
                self.trace.faults.push(Fault::Invariant { at, t_ns: t, violation: field(e, "violation")?.to_string() });
            }
            "replay" => {
                self.trace.faults.push(Fault::ReplayDiverged { t_ns: t, why: field(e, "diverged")?.to_string() });
            }
            "abort" => {
                let session = field(e, "session")?.to_string();
                self.trace.faults.push(Fault::Abort { session, t_ns: t, reason: field(e, "reason")?.to_string() });
            }
            // `timer`, `workflow` and events a later legend adds draw nothing of their own.
            _ => {}
        }
        Ok(())
    }

    fn node(&mut self, name: &str) -> usize {
        if let Some(&i) = self.node_index.get(name) {
            return i;
        }
        self.trace.nodes.push(name.to_string());
        self.node_index.insert(name.to_string(), self.trace.nodes.len() - 1);
        self.trace.nodes.len() - 1
    }

    fn function(&mut self, name: &str, t: u64) -> usize {
        if let Some(&i) = self.function_index.get(name) {
            return i;
        }
        self.trace.functions.push(Function { name: name.to_string(), machine: None, start_ns: t, end_ns: None, records: Vec::new() });
        self.function_index.insert(name.to_string(), self.trace.functions.len() - 1);
        self.trace.functions.len() - 1
    }

    /// A function once placed, else a fixed node (function names always carry `/f<index>`).
    fn endpoint(&mut self, name: &str, t: u64) -> Endpoint {
        if let Some(&f) = self.function_index.get(name) {
            return Endpoint::Function(f);
        }
        if is_function_name(name) {
            return Endpoint::Function(self.function(name, t));
        }
        Endpoint::Node(self.node(name))
    }

    fn link(&mut self, e: &serde_json::Value) -> Result<Link, String> {
        let t = number(e, "t")?;
        let from = self.endpoint(field(e, "from")?, t);
        let to = self.endpoint(field(e, "to")?, t);
        Ok((from, to, field(e, "msg")?.to_string()))
    }

    fn new_message(&mut self, link: &Link, sent_ns: u64, end_ns: u64) -> usize {
        self.trace.messages.push(Message {
            from: link.0,
            to: link.1,
            kind: link.2.clone(),
            sent_ns,
            released_ns: sent_ns,
            end_ns,
            fate: Fate::Unfinished,
            reason: None,
            detail: None,
        });
        self.trace.messages.len() - 1
    }
}

/// `c1/f0`, `w17#2/f3`: the engine's names for functions.
fn is_function_name(name: &str) -> bool {
    name.rsplit_once("/f").is_some_and(|(base, index)| !base.is_empty() && !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()))
}

fn pop(queues: &mut BTreeMap<Link, VecDeque<usize>>, link: &Link) -> Option<usize> {
    let q = queues.get_mut(link)?;
    let m = q.pop_front();
    if q.is_empty() {
        queues.remove(link);
    }
    m
}

/// The in-flight message on `link` planned to arrive at `t`, else the oldest one.
fn take_due(queues: &mut BTreeMap<Link, VecDeque<usize>>, link: &Link, t: u64, messages: &[Message]) -> Option<usize> {
    let q = queues.get_mut(link)?;
    let i = q.iter().position(|&m| messages[m].end_ns == t).unwrap_or(0);
    let m = q.remove(i);
    if q.is_empty() {
        queues.remove(link);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(events: &[&str]) -> String {
        events.iter().map(|e| format!("{e}\n")).collect()
    }

    /// Goal: a send and its delivery become one message, and a node's step at the instant it
    /// handled a function's message is attributed to that function.
    #[test]
    fn a_delivery_continues_its_send_and_steps_follow_the_message_handled() {
        let t = read(&lines(&[
            r#"{"t":0,"ev":"start","node":"S0"}"#,
            r#"{"t":0,"ev":"place","fn":"c1/f0","machine":"S0"}"#,
            r#"{"t":0,"ev":"send","from":"c1/f0","to":"S0","msg":"ClientWrite","deliver_at":5}"#,
            r#"{"t":5,"ev":"deliver","from":"c1/f0","to":"S0","msg":"ClientWrite","detail":"ClientWrite { key: 0 }"}"#,
            r#"{"t":5,"ev":"action","node":"S0","action":"ClientWrite","args":{"vc":"[1,0]"}}"#,
            r#"{"t":9,"ev":"action","node":"S0","action":"Gossip","args":{}}"#,
            r#"{"t":9,"ev":"record","id":0,"fn":"c1/f0"}"#,
        ]))
        .unwrap();
        assert_eq!(t.nodes, ["S0"]);
        assert_eq!(t.functions[0].machine, Some(0));
        assert_eq!(t.functions[0].records, [0]);
        let m = &t.messages[0];
        assert_eq!(
            (m.from, m.to, m.sent_ns, m.released_ns, m.end_ns, m.fate),
            (Endpoint::Function(0), Endpoint::Node(0), 0, 0, 5, Fate::Delivered)
        );
        assert_eq!(m.detail.as_deref(), Some("ClientWrite { key: 0 }"));
        assert_eq!(t.steps[0].function, Some(0));
        assert_eq!(t.steps[0].args, r#"{"vc":"[1,0]"}"#);
        assert_eq!(t.steps[1].function, None, "a later step is the node's own");
    }

    /// Goal: two messages of one kind on one link pair by planned delivery time, not by order.
    #[test]
    fn deliveries_pair_with_the_send_planned_for_that_instant() {
        let t = read(&lines(&[
            r#"{"t":0,"ev":"send","from":"S0","to":"S1","msg":"M","deliver_at":50}"#,
            r#"{"t":1,"ev":"send","from":"S0","to":"S1","msg":"M","deliver_at":20}"#,
            r#"{"t":20,"ev":"deliver","from":"S0","to":"S1","msg":"M","detail":"second"}"#,
            r#"{"t":50,"ev":"deliver","from":"S0","to":"S1","msg":"M","detail":"first"}"#,
        ]))
        .unwrap();
        assert_eq!((t.messages[0].sent_ns, t.messages[0].end_ns, t.messages[0].detail.as_deref()), (0, 50, Some("first")));
        assert_eq!((t.messages[1].sent_ns, t.messages[1].end_ns, t.messages[1].detail.as_deref()), (1, 20, Some("second")));
    }

    /// Goal: drops, holds and what is still in flight at the end each get their fate.
    #[test]
    fn drops_holds_and_unfinished_messages_are_told_apart() {
        let t = read(&lines(&[
            r#"{"t":0,"ev":"send","from":"S0","to":"S1","msg":"A","deliver_at":10}"#,
            r#"{"t":5,"ev":"crash","node":"S1","queued_lost":0}"#,
            r#"{"t":10,"ev":"drop","from":"S0","to":"S1","msg":"A","reason":"crashed"}"#,
            r#"{"t":11,"ev":"drop","from":"S0","to":"S1","msg":"B","reason":"loss"}"#,
            r#"{"t":12,"ev":"partition","index":0}"#,
            r#"{"t":13,"ev":"hold","from":"S1","to":"S0","msg":"C"}"#,
            r#"{"t":20,"ev":"heal","index":0}"#,
            r#"{"t":20,"ev":"release","from":"S1","to":"S0","msg":"C"}"#,
            r#"{"t":20,"ev":"send","from":"S1","to":"S0","msg":"C","deliver_at":30}"#,
            r#"{"t":30,"ev":"deliver","from":"S1","to":"S0","msg":"C","detail":"C"}"#,
            r#"{"t":31,"ev":"send","from":"S0","to":"S1","msg":"D","deliver_at":90}"#,
            r#"{"t":32,"ev":"hold","from":"S0","to":"S1","msg":"E"}"#,
        ]))
        .unwrap();
        let fates: Vec<(&str, Fate, u64, u64, u64)> =
            t.messages.iter().map(|m| (m.kind.as_str(), m.fate, m.sent_ns, m.released_ns, m.end_ns)).collect();
        assert_eq!(
            fates,
            [
                ("A", Fate::DroppedAtReceiver, 0, 0, 10),
                ("B", Fate::DroppedInNetwork, 11, 11, 11),
                ("C", Fate::Delivered, 13, 20, 30),
                ("D", Fate::Unfinished, 31, 31, 90),
                ("E", Fate::Unfinished, 32, 32, 32),
            ]
        );
        assert_eq!(t.messages[4].reason.as_deref(), Some("held"));
        assert_eq!(t.faults[1], Fault::Partition { index: 0, start_ns: 12, heal_ns: Some(20) });
    }

    /// Goal: a replay's waiting message is delivered by a step without a new send.
    #[test]
    fn a_waiting_message_is_delivered_by_the_replay_step() {
        let t = read(&lines(&[
            r#"{"t":0,"ev":"wait","from":"S0","to":"S1","msg":"A"}"#,
            r#"{"t":7,"ev":"deliver","from":"S0","to":"S1","msg":"A","detail":"A"}"#,
        ]))
        .unwrap();
        let m = &t.messages[0];
        assert_eq!((m.sent_ns, m.released_ns, m.end_ns, m.fate, m.reason.as_deref()), (0, 7, 7, Fate::Delivered, None));
    }

    #[test]
    fn a_bad_line_is_named() {
        let e = read("{\"t\":0,\"ev\":\"start\",\"node\":\"S0\"}\n{\"t\":1,\"ev\":\"send\",\"from\":\"S0\"}\n").unwrap_err();
        assert_eq!(e, TraceError { line: 2, message: "field `to`: missing or not a string".into() });
        assert_eq!(read("nope\n").unwrap_err().line, 1);
    }

    #[test]
    fn function_names_are_recognised() {
        assert!(is_function_name("c1/f0"));
        assert!(is_function_name("w17#2/f13"));
        assert!(!is_function_name("S0"));
        assert!(!is_function_name("db/fx"));
    }
}
