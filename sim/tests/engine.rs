//! The engine's contract, tested through a probe protocol: FIFO-but-delayed links, per-link
//! overrides, partitions, crashes, queueing, and determinism.

mod common;

use causim_sim::NodeId;
use causim_sim::time::{MS, US};
use common::{Burst, Probe, config, network_config, run};

fn burst(at_ns: u64, to: usize, first: u64, count: u64) -> Burst {
    Burst { at_ns, to, first, count }
}

/// Goal: a link is FIFO per ordered pair but delayed: under random delays, messages arrive in
/// the order sent, each no earlier than its own sampled delay allows.
#[test]
fn links_are_fifo_under_random_delays() {
    let mut probe = Probe::new(2);
    // 2000 messages in bursts 10 us apart, over a link whose delay varies between 1 and 500 us.
    probe.bursts[0] = (0..200).map(|i| burst(1 + i * 10 * US, 1, i * 10, 10)).collect();
    let cfg = network_config(2, r#"{"dist":"uniform","min_ns":1000,"max_ns":500000}"#, "", "{}");
    let done = run(probe, cfg);
    let got = &done.servers[1].received;
    assert_eq!(got.len(), 2000);
    let seqs: Vec<u64> = got.iter().map(|r| r.1).collect();
    assert_eq!(seqs, (0..2000).collect::<Vec<_>>(), "delivered out of order");
    assert!(got.windows(2).all(|w| w[0].2 <= w[1].2), "delivery times go backwards");
    // The delays really vary: FIFO is enforced, not an artefact of constant delays.
    let distinct: std::collections::BTreeSet<u64> = got.iter().map(|r| r.2).collect();
    assert!(distinct.len() > 100, "only {} distinct delivery times", distinct.len());
}

/// Goal: a per-link override (CausalMesh Fig. 6's slow S0→S1 link) applies to that direction
/// only; other links keep the default delay.
#[test]
fn a_link_override_slows_one_direction_only() {
    let mut probe = Probe::new(3);
    probe.bursts[0] = vec![burst(1, 1, 0, 1), burst(1, 2, 100, 1)];
    probe.bursts[1] = vec![burst(1, 0, 200, 1)];
    let cfg = network_config(
        3,
        r#"{"dist":"constant","ns":100000}"#,
        r#","links":[{"from":"S0","to":"S1","delay":{"dist":"constant","ns":10000000}}]"#,
        "{}",
    );
    let done = run(probe, cfg);
    assert_eq!(done.servers[1].received, vec![(NodeId::fixed(0), 0, 1 + 10 * MS)]);
    assert_eq!(done.servers[2].received, vec![(NodeId::fixed(0), 100, 1 + 100 * US)]);
    assert_eq!(done.servers[0].received, vec![(NodeId::fixed(1), 200, 1 + 100 * US)]);
}

fn partition_run(mode: &str) -> common::Finished {
    let mut probe = Probe::new(3);
    // Messages to S1 at 0.5 ms (before), 2 ms (during) and 6 ms (after) a partition of
    // {S0} | {S1} from 1 ms to 5 ms; S2 is not in the partition.
    probe.bursts[0] = vec![burst(MS / 2, 1, 0, 2), burst(2 * MS, 1, 10, 2), burst(2 * MS, 2, 50, 1), burst(6 * MS, 1, 20, 1)];
    let faults = format!(r#"{{"partitions":[{{"groups":[["S0"],["S1"]],"start_ns":1000000,"heal_ns":5000000,"mode":"{mode}"}}]}}"#);
    run(probe, network_config(3, r#"{"dist":"constant","ns":100000}"#, "", &faults))
}

/// Goal: a partition in `hold` mode delays messages sent while it is active until it heals,
/// in order; machines outside the partition are unaffected.
#[test]
fn a_holding_partition_delivers_after_the_heal() {
    let done = partition_run("hold");
    let got: Vec<(u64, u64)> = done.servers[1].received.iter().map(|r| (r.1, r.2)).collect();
    assert_eq!(
        got,
        vec![(0, MS / 2 + 100 * US), (1, MS / 2 + 100 * US), (10, 5 * MS + 100 * US), (11, 5 * MS + 100 * US), (20, 6 * MS + 100 * US)]
    );
    assert_eq!(done.servers[2].received, vec![(NodeId::fixed(0), 50, 2 * MS + 100 * US)]);
    assert!(done.trace.contains("\"ev\":\"hold\""));
    assert!(done.trace.contains("\"ev\":\"release\""));
    assert!(done.trace.contains("\"ev\":\"heal\""));
}

/// Goal: a partition in `drop` mode loses what is sent while it is active, and the link works
/// again after the heal.
#[test]
fn a_dropping_partition_loses_messages_until_the_heal() {
    let done = partition_run("drop");
    let seqs: Vec<u64> = done.servers[1].received.iter().map(|r| r.1).collect();
    assert_eq!(seqs, vec![0, 1, 20]);
    assert_eq!(done.summary.messages_dropped, 2);
    assert_eq!(done.trace.matches("\"reason\":\"partition\"").count(), 2);
}

/// Goal: a crashed node loses messages addressed to it and its volatile state, keeps its
/// durable state, and works again after restarting.
#[test]
fn crash_and_restart() {
    let mut probe = Probe::new(2);
    probe.bursts[0] = vec![burst(MS / 2, 1, 0, 3), burst(2 * MS, 1, 10, 3), burst(4 * MS, 1, 20, 1)];
    let faults = r#"{"crashes":[{"node":"S1","at_ns":1000000,"restart_ns":3000000}]}"#;
    let done = run(probe, network_config(2, r#"{"dist":"constant","ns":100000}"#, "", faults));
    let s1 = &done.servers[1];
    let seqs: Vec<u64> = s1.received.iter().map(|r| r.1).collect();
    assert_eq!(seqs, vec![0, 1, 2, 20], "messages sent to a crashed node are lost");
    assert_eq!(s1.restarts, 1);
    assert_eq!(s1.volatile_count, 1, "volatile state is reset by the restart");
    assert_eq!(s1.durable_count, 4, "durable state survives");
    assert_eq!(done.summary.messages_dropped, 3);
    assert!(done.trace.contains("\"ev\":\"crash\"") && done.trace.contains("\"ev\":\"restart\""));
}

/// A single-server load test: one-operation workflows arrive by a Poisson process at `rate`,
/// each sends one request to a 1-core server with a 100 us service time.
fn load_run(rate_per_s: u64, seed: u64) -> common::Finished {
    let cfg = config(&format!(
        r#"{{"seed": {seed},
            "topology": {{"servers": 1, "workers_per_machine": 60000, "service": {{"dist":"constant","ns":100000}},
                          "delay": {{"dist":"constant","ns":0}}}},
            "workload": {{"generator": {{
                "workflow": {{"shape":"chain","functions":1}},
                "functions": [{{"reads":1}}],
                "keys": {{"count":100}},
                "arrival": {{"kind":"poisson","rate_per_s":{rate_per_s}}},
                "workflows_max": 30000,
                "warmup_ns": 100000000}}}}}}"#
    ));
    run(Probe::new(1), cfg)
}

/// Goal: load produces queueing. A 1-core server with a deterministic 100 us service time under
/// Poisson arrivals is an M/D/1 queue; its mean response time is S·(1 + ρ / (2(1 − ρ))).
/// The simulated mean matches the formula at low and high load, and a saturated node's
/// latency grows with load.
#[test]
fn a_saturated_node_queues_like_md1() {
    let service = 100_000.0;
    let mut previous = 0.0;
    for (rate, rho) in [(2000, 0.2), (5000, 0.5), (9000, 0.9)] {
        let done = load_run(rate, 7);
        let mean = done.summary.op_latency_ns["read"].mean;
        let theory = service * (1.0 + rho / (2.0 * (1.0 - rho)));
        let tolerance = if rho > 0.8 { 0.15 } else { 0.05 };
        assert!((mean - theory).abs() / theory < tolerance, "rho {rho}: mean {mean:.0} ns, M/D/1 says {theory:.0} ns");
        assert!(mean > previous, "latency must grow with load");
        previous = mean;
        let util = done.summary.nodes[0].utilisation;
        assert!((util - rho).abs() < 0.05, "rho {rho}: utilisation {util}");
    }
    // Beyond capacity the queue grows without bound: the tail is far above the service time.
    let over = load_run(12_000, 7);
    assert!(over.summary.op_latency_ns["read"].p99 > 100 * service as u64);
    assert!(over.summary.nodes[0].queue_depth_max > 1000);
}

/// Goal: same scenario and seed ⇒ byte-identical history and trace; another seed ⇒ another
/// history. Checked over many seeds.
#[test]
fn runs_are_deterministic_per_seed_and_differ_across_seeds() {
    let mut hashes = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let a = load_run(3000, seed);
        let b = load_run(3000, seed);
        assert_eq!(a.history, b.history, "seed {seed}: histories differ");
        assert_eq!(a.trace, b.trace, "seed {seed}: traces differ");
        assert_eq!(a.summary, b.summary);
        hashes.insert(a.summary.history_hash.clone());
    }
    assert_eq!(hashes.len(), 20, "different seeds must give different histories");
}

/// Goal: running seeds on several threads at once changes nothing: the engine has no shared or
/// global state.
#[test]
fn thread_count_does_not_change_results() {
    let sequential: Vec<String> = (0..8).map(|s| load_run(3000, s).summary.history_hash).collect();
    let parallel: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8).map(|s| scope.spawn(move || load_run(3000, s).summary.history_hash)).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(sequential, parallel);
}

/// Goal: every history line is valid JSON in the documented shape, with unique ids and
/// per-key unique written values.
#[test]
fn history_lines_follow_the_documented_format() {
    let done = load_run(2000, 1);
    let mut ids = std::collections::BTreeSet::new();
    for line in done.history.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("each line is JSON");
        assert!(ids.insert(v["id"].as_u64().unwrap()));
        assert!(v["session"].as_str().unwrap().starts_with('w'));
        assert_eq!(v["outcome"], "ok");
        assert!(v["invoke_ns"].as_u64().unwrap() <= v["complete_ns"].as_u64().unwrap());
    }
    assert_eq!(ids.len() as u64, done.summary.history_records);
    assert_eq!(done.summary.workflows.completed, 30000);
}

fn script_run(script: &str, topology_extra: &str) -> common::Finished {
    let cfg = config(&format!(
        r#"{{"seed": 1,
            "topology": {{"servers": 2, "delay": {{"dist":"constant","ns":1000}} {topology_extra}}},
            "workload": {{"script": {script}}}}}"#
    ));
    run(Probe::new(2), cfg)
}

fn lines(history: &str) -> Vec<serde_json::Value> {
    history.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Goal: a DAG workflow (fan-out then fan-in) runs each function after its predecessors, gives
/// each function its own session linked by `after`, copies the context at the fan-out and lets
/// the protocol merge it at the join.
#[test]
fn dag_workflows_link_sessions_and_join_contexts() {
    let done = script_run(
        r#"[{"session": "c1", "functions": [
            {"on": "S0", "ops": [{"read": "a"}]},
            {"on": "S1", "after": [0], "ops": [{"read": "b"}, {"read": "b"}]},
            {"on": "S0", "after": [0], "ops": []},
            {"on": "S1", "after": [1, 2], "ops": [{"read": "c"}]}]}]"#,
        "",
    );
    let h = lines(&done.history);
    let by_session = |s: &str| h.iter().filter(|r| r["session"] == s).cloned().collect::<Vec<_>>();
    let f0 = by_session("c1/f0");
    let f1 = by_session("c1/f1");
    let f3 = by_session("c1/f3");
    assert_eq!((f0.len(), f1.len(), by_session("c1/f2").len(), f3.len()), (1, 2, 0, 1));
    assert_eq!(f1[0]["after"], serde_json::json!([f0[0]["id"]]));
    assert!(f1[1].get("after").is_none(), "only a function's first line carries `after`");
    // f2 wrote nothing, so f3 follows f1's last line and, through f2, f0's.
    assert_eq!(f3[0]["after"], serde_json::json!([f0[0]["id"], f1[1]["id"]]));
    // Contexts: f0 starts at 0; f1 and f2 get 1 each and finish with 2; the join sums to 4.
    assert_eq!(f0[0]["ops"][0]["version"], serde_json::json!([0]));
    assert_eq!(f1[0]["ops"][0]["version"], serde_json::json!([1]));
    assert_eq!(f3[0]["ops"][0]["version"], serde_json::json!([4]));
    let f3_start = f3[0]["invoke_ns"].as_u64().unwrap();
    assert!(f3_start >= f1[1]["complete_ns"].as_u64().unwrap());
}

/// Goal: a function can abort its workflow; the engine retries it from the start as a new
/// session (`c1#2`) with fresh written values, and counts the aborted attempt.
#[test]
fn aborted_workflows_are_retried_as_new_sessions() {
    let done = script_run(
        r#"[{"session": "c1", "functions": [
            {"on": "S0", "ops": [{"write": "x"}]},
            {"on": "S1", "ops": [{"read_txn": ["x"]}]}]}]"#,
        "",
    );
    let h = lines(&done.history);
    let sessions: Vec<&str> = h.iter().map(|r| r["session"].as_str().unwrap()).collect();
    assert_eq!(sessions, ["c1", "c1#2", "c1#2"]);
    assert_eq!(h[0]["ops"][0]["value"], 1);
    assert_eq!(h[1]["ops"][0]["value"], 2, "a retry writes a fresh value");
    assert_eq!(done.summary.workflows.aborted_attempts, 1);
    assert_eq!(done.summary.workflows.completed, 1);
    assert!(done.trace.contains("\"ev\":\"abort\""));
}

/// Goal: a machine runs at most `workers_per_machine` functions at once; the rest wait.
#[test]
fn worker_slots_limit_concurrency() {
    let sessions: Vec<String> = (0..6)
        .map(|i| format!(r#"{{"session": "c{i}", "functions": [{{"on": "S0", "ops": [{{"read": "k"}}, {{"read": "k"}}]}}]}}"#))
        .collect();
    let script = format!("[{}]", sessions.join(","));
    let done = script_run(&script, r#", "workers_per_machine": 1, "local_delay": {"dist":"constant","ns":500}"#);
    let h = lines(&done.history);
    assert_eq!(h.len(), 12);
    // With one slot, sessions run one after another: no two sessions' operations overlap.
    let mut spans: Vec<(u64, u64, String)> = Vec::new();
    for r in &h {
        let s = r["session"].as_str().unwrap().to_string();
        let (a, b) = (r["invoke_ns"].as_u64().unwrap(), r["complete_ns"].as_u64().unwrap());
        match spans.iter_mut().find(|x| x.2 == s) {
            Some(x) => x.1 = b,
            None => spans.push((a, b, s)),
        }
    }
    spans.sort();
    assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0), "{spans:?}");
}

/// Goal: `*` in a link override stands for every other machine; later overrides win.
#[test]
fn wildcard_link_overrides() {
    let mut probe = Probe::new(3);
    probe.bursts[0] = vec![burst(1, 1, 0, 1), burst(1, 2, 10, 1)];
    probe.bursts[1] = vec![burst(1, 2, 20, 1)];
    let cfg = network_config(
        3,
        r#"{"dist":"constant","ns":100000}"#,
        r#","links":[{"from":"*","to":"S2","delay":{"dist":"constant","ns":7000000}},
                     {"from":"S1","to":"S2","delay":{"dist":"constant","ns":3000000}}]"#,
        "{}",
    );
    let done = run(probe, cfg);
    assert_eq!(done.servers[1].received, vec![(NodeId::fixed(0), 0, 1 + 100 * US)]);
    assert_eq!(done.servers[2].received, vec![(NodeId::fixed(1), 20, 1 + 3 * MS), (NodeId::fixed(0), 10, 1 + 7 * MS)]);
}

/// Goal: with a link bandwidth, a message also takes its size over the bandwidth (so metadata
/// costs time); within a machine it does not.
#[test]
fn bandwidth_adds_transmission_time() {
    let mut probe = Probe::new(2);
    probe.bursts[0] = vec![burst(1, 1, 0, 1)];
    // A probe message is 9 bytes; at 9000 B/s it takes 1 ms to transmit.
    let cfg = network_config(2, r#"{"dist":"constant","ns":100000}"#, r#","bandwidth_bytes_per_s":9000"#, "{}");
    let done = run(probe, cfg);
    assert_eq!(done.servers[1].received, vec![(NodeId::fixed(0), 0, 1 + 100 * US + MS)]);
}

/// Goal: with `topology.cost`, a fixed node's core encodes what it sends before it leaves and
/// decodes what it receives (busy time, so it queues), per KiB of the message's size.
#[test]
fn cost_model_charges_fixed_nodes_per_kib() {
    let mut probe = Probe::new(2);
    probe.bursts[0] = vec![burst(1, 1, 0, 1)];
    // A probe message is 9 bytes; at 1 ms per KiB, encoding or decoding it takes 8789 ns.
    let cost = r#","cost":{"ns_per_kib":1000000}"#;
    let done = run(probe, network_config(2, r#"{"dist":"constant","ns":100000}"#, cost, "{}"));
    let per_message = 9 * 1_000_000 / 1024;
    assert_eq!(done.servers[1].received, vec![(NodeId::fixed(0), 0, 1 + per_message + 100 * US)]);
    let busy = |n: usize| done.summary.nodes[n].utilisation * done.summary.sim_time_ns as f64;
    assert!((busy(0) - per_message as f64).abs() < 2.0, "S0 encoded for {} ns", busy(0));
    assert!((busy(1) - per_message as f64).abs() < 2.0, "S1 decoded for {} ns", busy(1));
}

/// Goal: with `topology.cost`, a function pays its runtime's cost per message it sends or
/// receives (plus the size), in time before the message leaves or its handler sees it; the
/// calibrated preset is accepted by name.
#[test]
fn cost_model_charges_functions_per_message() {
    let script = r#"[{"session": "c1", "functions": [{"on": "S0", "ops": [{"read": "k"}]}]}]"#;
    let latency = |extra: &str| {
        let h = lines(&script_run(script, extra).history);
        h[0]["complete_ns"].as_u64().unwrap() - h[0]["invoke_ns"].as_u64().unwrap()
    };
    let free = latency("");
    let per_message = 1_000_000 + 9 * 2048 / 1024;
    let charged = latency(r#","cost":{"function_message_ns":1000000,"ns_per_kib":2048}"#);
    // The request (encoded by the function) and the reply (decoded by it); the server's
    // decoding and encoding of them add 18 ns each way on its core.
    assert_eq!(charged - free, 2 * per_message + 2 * 18, "free {free} ns, charged {charged} ns");
    assert!(latency(r#","cost":"calibrated""#) > free + 800_000);
}
