//! The client inside a workflow function: each operation is one request to an entry endpoint,
//! and each response becomes one history record carrying the request's call tree.
//!
//! A `read` of key `k` calls the read entry with argument `k`, a `write` of `k` the write entry
//! (a read transaction calls the read entry once per key). The record's `ops` are empty; its
//! `call` field holds the tree (`docs/history-format.md`, "Call trees").

use super::app::{App, CallArgs, EndpointRef};
use super::msg::{CallRecord, CallTag, Event, Msg, ReqId};
use super::service::Timer;
use causim_sim::history::{Ops, Outcome, TxnKind, TxnRecord};
use causim_sim::node::{NodeId, Outbox};
use causim_sim::time::Time;
use causim_sim::workload::Op;
use std::fmt::Write;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    pub app: Arc<App>,
    pub nodes: Arc<Vec<NodeId>>,
    /// The requests to issue, in order: (entry, argument, is a write).
    pub requests: Vec<(EndpointRef, u64, bool)>,
    pub next: usize,
    pub invoked_at: Time,
}

impl Client {
    /// Key `k` goes to entry `k mod len` of its list.
    pub fn requests_of(ops: &[Op], read: &[EndpointRef], write: &[EndpointRef]) -> Vec<(EndpointRef, u64, bool)> {
        let pick = |list: &[EndpointRef], k: u64| list[(k % list.len() as u64) as usize];
        ops.iter()
            .flat_map(|op| match op {
                Op::Read { key } => vec![(pick(read, *key), *key, false)],
                Op::Write { key, .. } => vec![(pick(write, *key), *key, true)],
                Op::ReadTxn { keys } => keys.iter().map(|k| (pick(read, *k), *k, false)).collect(),
                Op::Log(_) => unreachable!("log calls go to log protocols only (the scenario loader checks)"),
            })
            .collect()
    }

    pub fn issue_next(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        let Some(&(to, arg, _)) = self.requests.get(self.next) else {
            out.function_done();
            return;
        };
        self.invoked_at = now;
        let tag = CallTag { parent: ReqId(u64::MAX), branch: self.next as u32 };
        let ca = CallArgs { to, arg };
        // A write may go to any shard: spread them by the time and the client's position.
        let unit = self.app.route(ca, now / 1000 + self.next as u64);
        out.send(self.nodes[unit as usize], Msg::Request { tag, ca, caller: None, visited: 0 });
    }

    pub fn on_response(&mut self, now: Time, from: NodeId, record: &CallRecord, out: &mut Outbox<Msg, Timer>) {
        let write = self.requests[self.next].2;
        let mut call = String::new();
        render(&self.app, record, &mut call);
        out.record(TxnRecord {
            kind: if write { TxnKind::Write } else { TxnKind::Read },
            node: Some(from),
            invoke_ns: self.invoked_at,
            complete_ns: now,
            outcome: Outcome::Ok,
            ops: Ops::new(),
            note: None,
            call: Some(call.into()),
        });
        self.next += 1;
        self.issue_next(now, out);
    }
}

/// `Plot#3` (`Plot.1#3` at shard 1 of a sharded service): a request's id in histories.
pub fn req_name(app: &App, id: ReqId) -> String {
    format!("{}#{}", app.unit_name(id.unit()), id.number())
}

/// Renders a call tree as the history's JSON (`docs/history-format.md`, "Call trees").
pub fn render(app: &App, r: &CallRecord, s: &mut String) {
    let service = r.ca.to.service;
    write!(s, "{{\"req\":\"{}\",\"ca\":\"{}\",\"ret\":{},\"steps\":[", req_name(app, r.req), app.call_name(r.ca), r.ret).expect("strings");
    for (i, e) in r.events.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        render_event(app, service, e, s);
    }
    s.push_str("]}");
}

fn render_event(app: &App, service: u32, e: &Event, s: &mut String) {
    match e {
        Event::Read { key, value } => {
            let value = value.map_or("null".to_string(), |v| v.to_string());
            write!(s, "{{\"r\":\"{}\",\"value\":{value}}}", app.key_name(service, *key)).expect("strings");
        }
        Event::Write { key, value } => write!(s, "{{\"w\":\"{}\",\"value\":{value}}}", app.key_name(service, *key)).expect("strings"),
        Event::Call(sub) => {
            s.push_str("{\"call\":");
            render(app, sub, s);
            s.push('}');
        }
        Event::Hit { ca, ret, origin } => {
            write!(s, "{{\"hit\":{{\"ca\":\"{}\",\"ret\":{ret},\"origin\":\"{}\"}}}}", app.call_name(*ca), req_name(app, *origin))
                .expect("strings")
        }
        Event::Par(branches) => {
            s.push_str("{\"par\":[");
            for (i, b) in branches.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                render_event(app, service, b, s);
            }
            s.push_str("]}");
        }
    }
}
