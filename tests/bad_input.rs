//! Bad input through the binary (issue 20): every probe ends with its documented exit status
//! and message, never a panic, and writes nothing outside its output folder. Each probe runs in
//! a fresh working directory whose listing (outside `out/`) is compared before and after.

mod common;
use common::temp_dir;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs causim in `dir`, with `stdin` on its input; fails on a panic.
fn causim_in(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_causim"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("causim starts");
    let _ = child.stdin.take().expect("piped").write_all(stdin);
    let o = child.wait_with_output().expect("causim runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code() != Some(101) && !err.contains("panicked"), "{args:?} panicked:\n{err}");
    assert!(o.status.code().is_some(), "{args:?} was killed by a signal:\n{err}");
    o
}

/// Every path under `dir` except those under `dir/out`, sorted.
fn listing(dir: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, at: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(at).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            if rel.starts_with("out") {
                continue;
            }
            out.push(rel);
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                walk(root, &p, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A probe: `args` in `dir` exit with `code`, say `message` on stderr, and write only in `out/`.
fn expect(dir: &Path, args: &[&str], stdin: &[u8], code: i32, message: &str) -> Output {
    let before = listing(dir);
    let o = causim_in(dir, args, stdin);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{args:?}: exit status; stderr:\n{err}\nstdout:\n{}", String::from_utf8_lossy(&o.stdout));
    assert!(err.contains(message), "{args:?}: expected {message:?} on stderr, got:\n{err}");
    assert_eq!(listing(dir), before, "{args:?} wrote outside out/");
    o
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The teaching scenario, 50 workflows.
fn base() -> Value {
    let mut s: Value = serde_json::from_str(&std::fs::read_to_string(repo("scenarios/register/default.json")).unwrap()).unwrap();
    s["workload"]["generator"]["workflows_max"] = json!(50);
    s["workload"]["generator"]["warmup_ns"] = json!(0);
    s
}

/// Sets the value at a dotted path (objects created as needed).
fn set(s: &mut Value, path: &str, v: Value) {
    let mut at = s;
    let parts: Vec<&str> = path.split('.').collect();
    for p in &parts[..parts.len() - 1] {
        at = &mut at[*p];
    }
    at[parts[parts.len() - 1]] = v;
}

const MAX: u64 = u64::MAX;

/// A scenario probe: its name, the fields it sets (dotted path, value) and the message expected.
type Probe = (&'static str, Vec<(&'static str, Value)>, &'static str);

#[test]
fn scenario_probes_exit_2_with_a_located_message_and_no_panic() {
    let dir = temp_dir("bad-input", "scenarios");
    std::fs::create_dir_all(&dir).unwrap();
    let constant = |ns: u64| json!({"dist": "constant", "ns": ns});
    let cases: Vec<Probe> = vec![
        ("service", vec![("topology.service", constant(MAX))], "field `topology.service.ns`: 18446744073709551615 ns is more than"),
        ("delay", vec![("topology.delay", constant(MAX))], "field `topology.delay.ns`"),
        ("dispatch", vec![("scheduler.dispatch", constant(MAX))], "field `scheduler.dispatch.ns`"),
        (
            "think",
            vec![("workload.generator.arrival", json!({"kind": "closed", "clients": 2, "think": constant(MAX)}))],
            "field `workload.generator.arrival.think.ns`",
        ),
        ("settle", vec![("limits", json!({"settle_ns": MAX}))], "field `limits.settle_ns`"),
        (
            "fan-out",
            vec![("workload.generator.workflow", json!({"shape": "fan_out", "width": u32::MAX}))],
            "a workflow may have at most 1024 functions",
        ),
        (
            "chain",
            vec![("workload.generator.workflow", json!({"shape": "chain", "functions": 1_000_000_000}))],
            "a workflow may have at most 1024 functions",
        ),
        ("keys", vec![("workload.generator.keys", json!({"count": MAX}))], "field `workload.generator.keys.count`: must be at most"),
        ("keys-1e9", vec![("workload.generator.keys", json!({"count": 1_000_000_000u64}))], "must be at most 10000000"),
        (
            "clients",
            vec![("workload.generator.arrival", json!({"kind": "closed", "clients": 100_000_000}))],
            "field `workload.generator.arrival.clients`: must be at most",
        ),
        ("reads", vec![("workload.generator.functions", json!([{"reads": u32::MAX}]))], "functions[0].reads`: must be at most"),
        (
            "workflows",
            vec![
                ("workload.generator.workflows_max", json!(1_000_000_000_000u64)),
                ("workload.generator.arrival", json!({"kind": "poisson", "rate_per_s": 1e9})),
            ],
            "more than the 1e9 a run may record",
        ),
        ("events-max-0", vec![("limits", json!({"events_max": 0}))], "field `limits.events_max`: must be between 1"),
        ("stall-0", vec![("limits", json!({"stall_ns": 0}))], "field `limits.stall_ns`: must be positive"),
        ("workflows-max-0", vec![("workload.generator.workflows_max", json!(0))], "field `workload.generator.workflows_max`"),
        ("empty-script", vec![("workload", json!({"script": []}))], "field `workload.script`: a script needs at least one session"),
        ("loss-1", vec![("faults", json!({"loss_probability": 1.0}))], "field `faults.loss_probability`: must be below 1"),
        (
            "empty-group",
            vec![("faults", json!({"partitions": [{"groups": [[], ["S1"]], "start_ns": 0}]}))],
            "field `faults.partitions[0].groups[0]`",
        ),
        ("servers-1e32", vec![("topology.servers", json!(1e32))], "expected a whole number from 0 to 4294967295, got 1e+32"),
        ("no-protocol-name", vec![("protocol", json!({"params": {}}))], "field `protocol`: missing field `name`"),
        ("param-time", vec![("protocol.params.x_ns", json!(MAX))], "field `protocol.params.x_ns`"),
        ("name-escape", vec![("name", json!("../escape"))], "field `name`"),
        ("name-absolute", vec![("name", json!("/abs"))], "field `name`"),
        ("name-newline", vec![("name", json!("a\nb"))], "field `name`"),
        ("name-dot", vec![("name", json!("."))], "field `name`"),
        ("name-sibling", vec![("name", json!("../out-sibling"))], "field `name`"),
    ];
    for (name, edits, message) in cases {
        let mut s = base();
        s["name"] = json!(name);
        for (path, v) in edits {
            set(&mut s, path, v);
        }
        let file = format!("{name}.json");
        std::fs::write(dir.join(&file), serde_json::to_string_pretty(&s).unwrap()).unwrap();
        expect(&dir, &["run", &file, "--out", &format!("out/{name}"), "--no-trace"], b"", 2, message);
        assert!(!dir.join("out").join(name).exists(), "{name}: a refused scenario left an output folder");
    }
}

#[test]
fn text_probes_name_the_cause() {
    let dir = temp_dir("bad-input", "text");
    std::fs::create_dir_all(&dir).unwrap();
    let good = serde_json::to_string_pretty(&base()).unwrap();
    let files: Vec<(&str, String, i32, &str)> = vec![
        ("array", "[1, 2]".into(), 2, "array.json:1:1: expected a JSON object"),
        ("bom", format!("\u{feff}{good}"), 0, ""),
        (
            "duplicate-param",
            good.replacen("\"replication\": \"async\"", "\"replication\": \"async\", \"replication\": \"sync\"", 1),
            2,
            "field `protocol.params.replication`: duplicate key",
        ),
    ];
    for (name, text, code, message) in files {
        let file = format!("{name}.json");
        std::fs::write(dir.join(&file), text).unwrap();
        expect(&dir, &["run", &file, "--out", &format!("out/{name}"), "--no-trace"], b"", code, message);
    }
    std::fs::write(dir.join("fig6.json"), std::fs::read(repo("scenarios/causalmesh/fig6.json")).unwrap()).unwrap();
    let o =
        expect(&dir, &["run", "fig6.json", "--mutant", "nope", "--out", "out/fig6"], b"", 2, "error: --mutant: unknown mutant \"nope\"");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("fig6.json:"), "an option's error points into the file");
    expect(&dir, &["plot", "--list"], b"", 0, "");
}

#[test]
fn a_run_that_cannot_finish_is_not_a_pass() {
    let dir = temp_dir("bad-input", "live");
    std::fs::create_dir_all(&dir).unwrap();
    let mut s = base();
    s["name"] = json!("slow");
    s["topology"]["delay"] = json!({"dist": "constant", "ns": 1_000_000_000_000_000_000u64});
    std::fs::write(dir.join("slow.json"), s.to_string()).unwrap();
    let o = expect(&dir, &["run", "slow.json", "--out", "out/slow", "--no-trace"], b"", 1, "");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("NOT LIVE: ") && text.contains("workflows unfinished (stopped by limit: time_ns_max"), "{text}");
}

#[test]
fn check_refuses_empty_input_and_endless_lines() {
    let dir = temp_dir("bad-input", "check");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("empty.jsonl"), "").unwrap();
    std::fs::write(dir.join("header.jsonl"), "{\"format\":\"causim-history/1\"}\n").unwrap();
    let nothing = "the history holds no transactions";
    expect(&dir, &["check", "empty.jsonl", "--level", "tcc"], b"", 2, nothing);
    expect(&dir, &["check", "header.jsonl", "--level", "tcc"], b"", 2, nothing);
    expect(&dir, &["check", "-", "--level", "tcc"], b"", 2, &format!("<stdin>: {nothing}"));
    // 65 MiB without a line break: an error at line 1, not a buffer as large as the input.
    let endless = vec![b'a'; (1 << 26) + (1 << 20)];
    std::fs::write(dir.join("endless.jsonl"), &endless).unwrap();
    expect(
        &dir,
        &["check", "endless.jsonl", "--level", "tcc", "--input-format", "causim"],
        b"",
        2,
        "endless.jsonl:1: cannot read: a line longer than",
    );
    std::fs::remove_file(dir.join("endless.jsonl")).unwrap();
    let elle = |p: &str| format!("[{{\"type\":\"invoke\",\"process\":{p},\"f\":\"txn\",\"value\":[[\"w\",\"x\",1]]}}]");
    for (name, p) in [("minus", "-5"), ("huge", "1e300")] {
        std::fs::write(dir.join(format!("{name}.json")), elle(p)).unwrap();
        expect(&dir, &["check", &format!("{name}.json"), "--level", "tcc"], b"", 2, "process: expected a non-negative integer");
    }
    // The same in Jepsen's EDN.
    let edn = |p: &str| format!("{{:type :invoke, :process {p}, :f :txn, :value [[:append :x 1]], :index 0}}\n");
    for (name, p) in [("minus", "-5"), ("huge", "1e300")] {
        std::fs::write(dir.join(format!("{name}.edn")), edn(p)).unwrap();
        expect(&dir, &["check", &format!("{name}.edn"), "--level", "tcc"], b"", 2, &format!("{name}.edn:1: "));
        expect(
            &dir,
            &["check", &format!("{name}.edn"), "--level", "tcc"],
            b"",
            2,
            &format!(":process: expected a non-negative integer, found {p}"),
        );
    }
    let w = "{\"events\":[{\"Write\":{\"variable\":1,\"version\":1}}],\"committed\":true}";
    std::fs::write(dir.join("dbcop.json"), format!("[[{w}],[{w}]]")).unwrap();
    let o = expect(&dir, &["check", "dbcop.json", "--level", "tcc"], b"", 2, "DuplicateWrite");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("line 0"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A small sweep file: two points of the teaching scenario, one seed.
fn sweep_file(dir: &Path, name: &str, seeds: Value) -> String {
    let mut s = base();
    s["workload"]["generator"]["workflows_max"] = json!(20);
    std::fs::write(dir.join("base.json"), s.to_string()).unwrap();
    let sweep = json!({
        "format": "causim-sweep/1", "name": name, "base": "base.json",
        "grid": [{"param": "topology.servers", "values": [2, 3]}], "seeds": seeds,
    });
    let file = format!("{name}.json");
    std::fs::write(dir.join(&file), sweep.to_string()).unwrap();
    file
}

#[test]
fn sweep_and_merge_probes() {
    let dir = temp_dir("bad-input", "sweep");
    std::fs::create_dir_all(&dir).unwrap();
    let file = sweep_file(&dir, "overflow", json!({"first": MAX, "count": 2}));
    expect(&dir, &["sweep", &file, "--no-progress", "--out", "out/overflow"], b"", 2, "field `seeds.first`");
    // A sweep's name becomes its default output folder: one plain folder name only.
    for (i, name) in ["../x", "/abs", "..", ".", "", "a/b"].into_iter().enumerate() {
        let file = sweep_file(&dir, &format!("name{i}"), json!({"first": 1, "count": 1}));
        let mut sweep: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(&file)).unwrap()).unwrap();
        sweep["name"] = json!(name);
        std::fs::write(dir.join(&file), sweep.to_string()).unwrap();
        expect(&dir, &["sweep", &file, "--no-progress"], b"", 2, "field `name`");
    }
    let file = sweep_file(&dir, "small", json!({"first": 1, "count": 1}));
    for i in 0..2 {
        let out = format!("out/s{i}");
        expect(&dir, &["sweep", &file, "--no-progress", "--threads", "1", "--shard", &format!("{i}/3"), "--out", &out], b"", 0, "");
    }
    expect(&dir, &["merge", "out/s0", "out/s1", "--out", "out/m"], b"", 2, "shard 2/3 missing; give --allow-partial");
    assert!(!dir.join("out/m").exists(), "a refused merge wrote its output");
    expect(&dir, &["merge", "out/s0", "out/s1", "--out", "out/m", "--allow-partial"], b"", 0, "warning: partial merge: shard 2/3 missing");
    // A journal with binary garbage in it names the line.
    let journal = dir.join("out/s0/runs.jsonl");
    let mut bytes = std::fs::read(&journal).unwrap();
    bytes.splice(0..0, b"\xff\xfe\n".iter().copied());
    std::fs::write(&journal, bytes).unwrap();
    expect(&dir, &["merge", "out/s0", "--out", "out/m2", "--allow-partial"], b"", 2, "runs.jsonl:1: not UTF-8 text");
    // A sweep holding the folder's lock (this test process stands in for it) keeps others out.
    std::fs::create_dir_all(dir.join("out/locked")).unwrap();
    std::fs::write(dir.join("out/locked/sweep.lock"), format!("{}\n", std::process::id())).unwrap();
    expect(&dir, &["sweep", &file, "--no-progress", "--out", "out/locked"], b"", 2, "another sweep (process");
    // A folder of the user's is refused, and a symbolic link in a sweep folder is not followed.
    std::fs::create_dir_all(dir.join("mine")).unwrap();
    std::fs::write(dir.join("mine/notes.txt"), "mine").unwrap();
    expect(&dir, &["sweep", &file, "--no-progress", "--out", "mine"], b"", 2, "is not a sweep's output folder");
    std::fs::write(dir.join("victim.csv"), "keep").unwrap();
    std::fs::remove_file(dir.join("out/s1/runs.csv")).unwrap();
    std::os::unix::fs::symlink(dir.join("victim.csv"), dir.join("out/s1/runs.csv")).unwrap();
    expect(&dir, &["sweep", &file, "--no-progress", "--shard", "1/3", "--out", "out/s1"], b"", 2, "is a symbolic link");
    assert_eq!(std::fs::read_to_string(dir.join("victim.csv")).unwrap(), "keep");
}

#[test]
fn model_check_stops_at_its_state_budget() {
    let dir = temp_dir("bad-input", "model-check");
    std::fs::create_dir_all(&dir).unwrap();
    let args = ["model-check", "causalmesh", "--servers", "3", "--keys", "2", "--clients", "3", "--ops", "2", "--max-states", "2000"];
    let mut args = args.to_vec();
    args.extend(["--threads", "1", "--out", "out/mc"]);
    let o = expect(&dir, &args, b"", 3, "");
    assert!(String::from_utf8_lossy(&o.stdout).contains("budget exhausted after "), "{}", String::from_utf8_lossy(&o.stdout));
    std::fs::write(dir.join("a-file"), "").unwrap();
    expect(&dir, &["model-check", "causalmesh", "--out", "a-file"], b"", 2, "exists and is not a folder");
}

#[test]
fn no_output_file_is_written_through_a_symbolic_link() {
    let dir = temp_dir("bad-input", "links");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("victim.txt"), "keep").unwrap();
    let plant = |at: &str| {
        let path = dir.join(at);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink(dir.join("victim.txt"), &path).unwrap();
    };
    let link = "is a symbolic link, and causim does not write through links";
    // check --dot
    std::fs::write(dir.join("s.json"), base().to_string()).unwrap();
    expect(&dir, &["run", "s.json", "--out", "out/r"], b"", 0, "");
    plant("out/graph.dot");
    expect(&dir, &["check", "out/r/history.jsonl", "--level", "ccv", "--dot", "out/graph.dot"], b"", 2, link);
    // plot: the SVG, then the PNG
    let file = sweep_file(&dir, "small", json!({"first": 1, "count": 1}));
    expect(&dir, &["sweep", &file, "--no-progress", "--threads", "1", "--out", "out/s"], b"", 0, "");
    let plot = ["plot", "out/s", "--figure", "line", "--x", "topology.servers", "--y", "latency_mean_ms", "--out", "out/fig"];
    for name in ["small-latency_mean_ms.svg", "small-latency_mean_ms.png"] {
        plant(&format!("out/fig/{name}"));
        expect(&dir, &plot, b"", 2, link);
        std::fs::remove_file(dir.join("out/fig").join(name)).unwrap();
    }
    expect(&dir, &plot, b"", 0, "");
    // model-check's counterexample scenario
    plant("out/mc/model-check-causalmesh-nearest_deps_only-one-round.json");
    expect(&dir, &["model-check", "causalmesh", "--mutant", "nearest_deps_only", "--threads", "1", "--out", "out/mc"], b"", 2, link);
    assert_eq!(std::fs::read_to_string(dir.join("victim.txt")).unwrap(), "keep");
}

#[test]
fn model_check_stops_at_its_memory_budget() {
    let dir = temp_dir("bad-input", "model-check-memory");
    std::fs::create_dir_all(&dir).unwrap();
    // 1 MB is below any process's resident size: the first reading stops the check.
    let args = ["model-check", "causalmesh", "--servers", "3", "--keys", "2", "--clients", "3", "--ops", "2", "--max-memory", "1"];
    let mut args = args.to_vec();
    args.extend(["--threads", "1", "--out", "out/mc"]);
    let o = expect(&dir, &args, b"", 3, "");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("budget exhausted after ") && out.contains("(--max-memory 1 MB: resident memory reached "), "{out}");
    assert!(out.contains("not checked (budget exhausted)") && !out.contains(" holds"), "{out}");
    assert!(!dir.join("out").exists(), "no counterexample, nothing written");
    expect(&dir, &["model-check", "causalmesh", "--max-memory", "0"], b"", 2, "--max-memory must be at least 1");
}

/// Every JSON path of `v` (objects' fields and arrays' elements), depth first.
fn paths(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
                out.push(p.clone());
                paths(x, p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let p = format!("{at}[{i}]");
                out.push(p.clone());
                paths(x, p, out);
            }
        }
        _ => {}
    }
}

/// The value at `path` (as `paths` writes them), mutably.
fn at_path<'a>(v: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut at = v;
    for part in path.split('.') {
        let (name, indexes) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            at = at.get_mut(name)?;
        }
        for i in indexes.split(['[', ']']).filter(|s| !s.is_empty()) {
            at = at.get_mut(i.parse::<usize>().ok()?)?;
        }
    }
    Some(at)
}

/// Numbers at and past the edges of the fields' types.
fn extreme(i: usize) -> Value {
    [json!(0), json!(-1), json!(1e32), json!(u64::MAX), json!(u32::MAX), json!(0.5)][i].clone()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, failure_persistence: None, ..ProptestConfig::default() })]

    /// Shipped scenarios with one field deleted, its type swapped or an extreme number put in
    /// its place: exit 0, 1 or 2, never a panic, nothing written outside out/. The runs are kept
    /// short (events_max, time_ns_max) unless the mutation touched the limits themselves.
    #[test]
    fn mutated_shipped_scenarios_never_panic(file in 0usize..4, field in 0usize..1000, how in 0usize..10) {
        let files = ["register/default.json", "register/stale-read.json", "causalmesh/fig6.json", "faastcc/fuzz-chain.json"];
        let mut s: Value = serde_json::from_str(&std::fs::read_to_string(repo(&format!("scenarios/{}", files[file]))).unwrap()).unwrap();
        s["limits"] = json!({"events_max": 20000, "time_ns_max": 2_000_000_000u64});
        let mut all = Vec::new();
        paths(&s, String::new(), &mut all);
        all.retain(|p| p != "name");
        let path = all[field % all.len()].clone();
        match how {
            0 => {
                // Delete the field (an array element becomes null).
                let (parent, last) = path.rsplit_once('.').unwrap_or(("", path.as_str()));
                let target = if parent.is_empty() { Some(&mut s) } else { at_path(&mut s, parent) };
                match target {
                    Some(Value::Object(m)) if !last.contains('[') => {
                        m.remove(last);
                    }
                    _ => *at_path(&mut s, &path).unwrap() = Value::Null,
                }
            }
            1 => *at_path(&mut s, &path).unwrap() = json!("a string"),
            2 => *at_path(&mut s, &path).unwrap() = json!({"an": "object"}),
            3 => *at_path(&mut s, &path).unwrap() = json!([]),
            i => *at_path(&mut s, &path).unwrap() = extreme(i - 4),
        }
        let dir = temp_dir("bad-input", "mutants");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("m.json"), s.to_string()).unwrap();
        let before = listing(&dir);
        let o = causim_in(&dir, &["run", "m.json", "--out", "out/m", "--no-trace"], b"");
        prop_assert!(matches!(o.status.code(), Some(0..=2)), "{path} ({how}): exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
        prop_assert_eq!(listing(&dir), before, "{} ({}) wrote outside out/", path, how);
    }
}

#[test]
fn the_history_does_not_depend_on_the_scenario_files_path() {
    // However the path is written, and wherever the file lies (another folder, another
    // machine's checkout), the same scenario and seed give the same history bytes.
    let dir = temp_dir("bad-input", "paths");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let scenario = std::fs::read(repo("scenarios/register/stale-read.json")).unwrap();
    std::fs::write(dir.join("x.json"), &scenario).unwrap();
    std::fs::write(dir.join("sub/y.json"), &scenario).unwrap();
    let absolute = dir.join("x.json").display().to_string();
    let parent = format!("../{}/x.json", dir.file_name().unwrap().to_string_lossy());
    let histories: Vec<Vec<u8>> = ["x.json", "./x.json", absolute.as_str(), parent.as_str(), "sub/y.json", "sub/../x.json"]
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let out = format!("out/r{i}");
            expect(&dir, &["run", path, "--out", &out, "--no-trace"], b"", 0, "");
            std::fs::read(dir.join(&out).join("history.jsonl")).unwrap()
        })
        .collect();
    assert!(histories.iter().all(|h| *h == histories[0]), "the histories differ");
}
