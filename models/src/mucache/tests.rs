//! Unit tests of the wrapper and the CM, driving one service node's handlers directly.

use super::app::{App, CallArgs, EndpointRef, ServiceSpec};
use super::msg::{CallTag, Msg, ReqId};
use super::service::{ServiceNode, Timer};
use super::*;
use causim_sim::Effect;

const APP: &str = r#"[
  {"name":"F","endpoints":[{"name":"page","ro":true,"steps":[{"call":"B.get"}]}]},
  {"name":"B","endpoints":[{"name":"get","ro":true,"steps":[{"call":"C.x"},{"read":"v"}]},{"name":"put","steps":[{"write":"v"}]}]},
  {"name":"C","endpoints":[{"name":"x","ro":true,"steps":[]}]}
]"#;

fn backend(cm_event_ns: Time) -> ServiceNode {
    node(config(cm_event_ns))
}

fn backend_with(cm_event_ns: Time, refusal_invalidates: bool) -> ServiceNode {
    node(Config { refusal_invalidates, ..config(cm_event_ns) })
}

/// The paper's protocol with no batching, limits or wrapper costs.
fn config(cm_event_ns: Time) -> Config {
    Config {
        mode: CacheMode::Mucache,
        ttl_ns: None,
        cm_event_ns,
        write_ns: 0,
        save_delay_ns: 0,
        visited_checks: true,
        caller_side_save: false,
        inv_before_write: false,
        start_at_return: false,
        non_fifo_save: false,
        refusal_invalidates: false,
        no_shard_broadcast: false,
        batch: None,
        cm_send_ns: 0,
        batch_drops_inv: false,
        cache_entries_max: None,
        cm_deps_max: None,
        silent_dep_eviction: false,
        cm_gc: true,
        enqueue_ns: 0,
        lookup_ns: 0,
        read_entry_services: 1,
    }
}

/// Service B of `APP`.
fn node(config: Config) -> ServiceNode {
    let specs: Vec<ServiceSpec> = serde_json::from_str(APP).unwrap();
    ServiceNode::new(
        1,
        Arc::new(App::build(&specs).unwrap()),
        Arc::new(config),
        Arc::new(vec![NodeId::fixed(0), NodeId::fixed(1), NodeId::fixed(2)]),
    )
}

const GET: CallArgs = CallArgs { to: EndpointRef { service: 1, endpoint: 0 }, arg: 5 };
const PUT: CallArgs = CallArgs { to: EndpointRef { service: 1, endpoint: 1 }, arg: 5 };

fn request(ca: CallArgs, branch: u32) -> Msg {
    Msg::Request { tag: CallTag { parent: ReqId(1), branch }, ca, caller: Some(0), visited: 1 }
}

/// C's answer to B's call of `C.x` (B's request number `n`).
fn c_answers(b: &mut ServiceNode, n: u64) {
    let x = CallArgs { to: EndpointRef { service: 2, endpoint: 0 }, arg: 5 };
    let record = Box::new(super::msg::CallRecord { req: ReqId::new(2, n), ca: x, ret: 9, events: Vec::new() });
    let tag = CallTag { parent: ReqId::new(1, n), branch: 0 };
    b.on_message(0, NodeId::fixed(2), Msg::Response { tag, ret: 9, visited: 4, record }, &mut Outbox::new(false));
}

/// Drains the CM queue and returns the messages sent on the way.
fn drain(node: &mut ServiceNode) -> Vec<Msg> {
    let mut sent = Vec::new();
    for _ in 0..100 {
        let mut out = Outbox::new(false);
        node.on_timer(0, Timer::CmStep, &mut out);
        let more = out.effects.iter().any(|e| matches!(e, Effect::SetTimer { timer: Timer::CmStep, .. }));
        sent.extend(out.effects.into_iter().filter_map(|e| match e {
            Effect::Send { msg, .. } => Some(msg),
            _ => None,
        }));
        if !more {
            return sent;
        }
    }
    panic!("the CM queue does not drain");
}

#[test]
fn a_read_only_call_with_no_invalidation_is_saved_upstream_and_a_later_write_invalidates_it() {
    let mut b = backend(10);
    let mut out = Outbox::new(false);
    b.on_message(0, NodeId::fixed(0), request(GET, 0), &mut out);
    assert!(matches!(out.effects[0], Effect::SetTimer { timer: Timer::CmStep, .. }), "Start is queued before the handler runs");
    c_answers(&mut b, 1);
    let sent = drain(&mut b);
    assert!(matches!(sent[..], [Msg::Save { ca: GET, .. }]), "{sent:?}");
    b.on_message(1, NodeId::fixed(0), request(PUT, 1), &mut Outbox::new(false));
    let sent = drain(&mut b);
    assert_eq!(sent, vec![Msg::InvCalls { cas: vec![GET], since: 1 }]);
}

#[test]
fn a_write_queued_between_start_and_end_vetoes_the_save() {
    // P5 (Fig. 7 left): the CM sees Start(get), Inv(v), End(get), in queue order.
    let mut b = backend(10);
    let mut out = Outbox::new(false);
    b.on_message(0, NodeId::fixed(0), request(GET, 0), &mut out);
    b.on_message(0, NodeId::fixed(0), request(PUT, 1), &mut out);
    c_answers(&mut b, 1);
    let sent = drain(&mut b);
    assert!(sent.iter().all(|m| !matches!(m, Msg::Save { .. })), "{sent:?}");
    // The paper's CM tells the caller nothing (hazard X11) ...
    assert!(sent.is_empty(), "{sent:?}");
}

#[test]
fn with_refusal_invalidates_a_vetoed_save_invalidates_the_call_at_the_caller() {
    // ... our fix: the caller's CM hears Inv(get), so its own calls that used it are not saved.
    let mut b = backend_with(10, true);
    let mut out = Outbox::new(false);
    b.on_message(0, NodeId::fixed(0), request(GET, 0), &mut out);
    b.on_message(0, NodeId::fixed(0), request(PUT, 1), &mut out);
    c_answers(&mut b, 1);
    assert_eq!(drain(&mut b), vec![Msg::InvCalls { cas: vec![GET], since: 0 }]);
}

#[test]
fn a_batch_leaves_on_its_timeout_and_an_inv_cancels_the_save_waiting_in_it() {
    let mut b = node(Config { batch: Some(BatchConfig { size: 3, timeout_ns: 5 }), ..config(10) });
    b.on_message(0, NodeId::fixed(0), request(GET, 0), &mut Outbox::new(false));
    c_answers(&mut b, 1);
    assert!(drain(&mut b).is_empty(), "the Save waits in the batch");
    b.on_message(1, NodeId::fixed(0), request(PUT, 1), &mut Outbox::new(false));
    assert!(drain(&mut b).is_empty(), "so does the Inv");
    let mut out = Outbox::new(false);
    b.on_timer(5, Timer::BatchFlush(0), &mut out);
    let sent: Vec<Msg> = out
        .effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::Send { msg, .. } => Some(msg),
            _ => None,
        })
        .collect();
    assert_eq!(sent, [Msg::Batch { items: vec![super::batch::Upstream::Inv { ca: GET, since: 1 }] }], "the Inv made the Save moot");
}

#[test]
fn a_dependency_evicted_for_the_cms_memory_limit_invalidates_the_call_saved_on_it() {
    // B.get(5) depends on C.x(5) and on v: two dependencies, one over the limit (O8).
    let mut b = node(Config { cm_deps_max: Some(1), ..config(10) });
    b.on_message(0, NodeId::fixed(0), request(GET, 0), &mut Outbox::new(false));
    c_answers(&mut b, 1);
    let sent = drain(&mut b);
    assert!(matches!(&sent[..], [Msg::Save { ca: GET, .. }, Msg::InvCalls { cas, .. }] if cas == &[GET]), "{sent:?}");
    // The X10 mutant forgets it silently.
    let mut b = node(Config { cm_deps_max: Some(1), silent_dep_eviction: true, ..config(10) });
    b.on_message(0, NodeId::fixed(0), request(GET, 0), &mut Outbox::new(false));
    c_answers(&mut b, 1);
    assert!(matches!(&drain(&mut b)[..], [Msg::Save { ca: GET, .. }]));
}
