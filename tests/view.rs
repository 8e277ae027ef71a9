//! `causim view` and `causim run --view` end to end: the page a user opens, including in a real
//! browser (headless Chromium, which `scripts/test.sh` installs).

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FIG6: &str = "scenarios/causalmesh/fig6-no-carry.json";

/// Runs Fig. 6 without carried writes with `--view` into a fresh directory.
fn fig6_run(name: &str) -> PathBuf {
    let dir = temp_dir("view", name);
    ok(&["run", FIG6, "--view", "--out", dir.to_str().unwrap()]);
    dir
}

/// The JSON the page carries.
fn page_data(html: &str) -> serde_json::Value {
    let open = "<script type=\"application/json\" id=\"causim-data\">";
    let start = html.find(open).expect("the page has its data") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

/// Goal: `run --view` writes the page next to the run's files; `causim view` on the same
/// directory writes the same bytes, and the page carries the run and the check's witness.
#[test]
fn run_view_writes_one_page_that_view_rewrites_byte_for_byte() {
    let dir = fig6_run("fig6");
    let first = std::fs::read(dir.join("view.html")).unwrap();
    let again = dir.join("again.html");
    let out = ok(&["view", dir.to_str().unwrap(), "--out", again.to_str().unwrap()]);
    assert!(out.contains("again.html"), "{out}");
    assert!(first == std::fs::read(&again).unwrap(), "the page differs between two renderings of one run");

    let html = String::from_utf8(first).unwrap();
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"), "the page loads nothing from the network");
    let data = page_data(&html);
    assert_eq!(data["format"], "causim-view/1");
    assert_eq!(data["nodes"], serde_json::json!(["S0", "S1", "db"]));
    assert_eq!(data["sessions"], serde_json::json!(["c1", "c2"]));
    assert_eq!(data["txns"].as_array().unwrap().len(), 5);
    assert_eq!(data["txns"][4][6], "r x=⊥");
    let v = &data["check"]["violations"][0];
    assert_eq!(v["anomaly"], "WriteCOInitRead");
    let kinds: Vec<&str> = v["witness"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["SessionOrder", "ReadsFrom", "SessionOrder", "AntiDependency"]);
    // The dissemination of x from S0 to S1 (20 ms link) is still in flight when the run ends.
    let strings = data["strings"].as_array().unwrap();
    let server_write = data["msgs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m[0] == 0 && m[1] == 1 && strings[m[5].as_u64().unwrap() as usize] == "ServerWrite")
        .expect("a ServerWrite S0 → S1");
    assert_eq!(
        (server_write[2].as_u64(), server_write[4].as_u64(), server_write[6].as_u64()),
        (Some(5_005_000), Some(25_005_000), Some(3))
    );
}

/// Goal: a directory with only a history still views; the check runs when a level is given.
#[test]
fn a_bare_history_views_and_is_checked_at_the_level_asked_for() {
    let run = fig6_run("bare-source");
    let dir = temp_dir("view", "bare");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(run.join("history.jsonl"), dir.join("history.jsonl")).unwrap();
    ok(&["view", dir.to_str().unwrap()]);
    let data = page_data(&std::fs::read_to_string(dir.join("view.html")).unwrap());
    assert!(data["check"].is_null(), "no level, no check");
    assert_eq!(data["run"]["traced"], false);
    assert_eq!(data["txns"].as_array().unwrap().len(), 5);
    assert_eq!(data["nodes"], serde_json::json!(["S0", "S1"]), "nodes come from the records");

    ok(&["view", dir.to_str().unwrap(), "--level", "ccv"]);
    let data = page_data(&std::fs::read_to_string(dir.join("view.html")).unwrap());
    assert_eq!(data["check"]["violations"][0]["anomaly"], "WriteCOInitRead");
}

/// Goal: bad input is an error naming the file and line, with exit status 2.
#[test]
fn bad_run_directories_are_named() {
    let missing = temp_dir("view", "missing");
    let o = causim(&["view", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a run directory"), "{}", stderr(&o));

    let dir = temp_dir("view", "broken");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("history.jsonl"),
        "{\"format\":\"causim-history/1\"}\n{\"id\":0,\"session\":\"c1\",\"invoke_ns\":0,\"ops\":[]}\n",
    )
    .unwrap();
    let o = causim(&["view", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("history.jsonl:2: field `complete_ns`"), "{}", stderr(&o));

    std::fs::write(dir.join("history.jsonl"), "{\"id\":0,\"session\":\"c1\",\"invoke_ns\":0,\"complete_ns\":1,\"ops\":[]}\n").unwrap();
    std::fs::write(dir.join("trace.jsonl"), "{\"t\":0,\"ev\":\"start\",\"node\":\"S0\"}\n{\"t\":1,\"ev\":\"send\"}\n").unwrap();
    let o = causim(&["view", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("trace.jsonl:2: field `from`"), "{}", stderr(&o));
}

// -------------------------------------------------------------------------------------------
// In a browser.

/// Headless Chromium: `CAUSIM_CHROMIUM`, else `chromium` (Debian's package; never a downloaded
/// browser) or `chromium-browser` on the PATH. Absent, the test fails saying so: it never skips.
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("CAUSIM_CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser"] {
        if let Some(p) = std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.is_file()) {
            return p;
        }
    }
    panic!("the viewer's browser test needs Chromium: scripts/test.sh installs it (apt-get install chromium), or set CAUSIM_CHROMIUM");
}

/// Runs headless Chromium on `url` with `extra` flags, at most 120 s, and returns its stdout.
fn headless(url: &str, extra: &[String], profile: &str) -> String {
    let profile = temp_dir("view-chromium", profile);
    let browser = chromium();
    let mut child = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1500,900",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e} (scripts/test.sh installs Debian's chromium)", browser.display()));
    // Both pipes are drained as Chromium writes, so a chatty browser never blocks on a full pipe.
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = pipe.read_to_string(&mut s);
            s
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            if !status.success() {
                let said = stderr.join().unwrap();
                let tail: Vec<&str> = said.lines().rev().take(15).collect();
                panic!(
                    "{} failed on {url}: {status}; its last words:\n{}",
                    browser.display(),
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                );
            }
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish {url} within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_dir_all(&profile);
    stdout.join().unwrap()
}

/// The opening tags (`<tag attr…>`) of the elements whose class list has `class`.
fn tags_with_class<'a>(dom: &'a str, class: &str) -> Vec<&'a str> {
    dom.split('<')
        .filter_map(|t| t.split_once('>').map(|(tag, _)| tag))
        .filter(|tag| attr(tag, "class").is_some_and(|c| c.split(' ').any(|c| c == class)))
        .collect()
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    Some(&tag[start..start + tag[start..].find('"')?])
}

/// The text of the element that opens with `tag` in `dom`, tags stripped.
fn text_after(dom: &str, tag: &str, len: usize) -> String {
    let start = dom.find(tag).unwrap_or_else(|| panic!("no {tag}"));
    let mut out = String::new();
    let mut inside = false;
    for c in dom[start..].chars().take(len) {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

/// Goal: in a real browser, the Fig. 6 page draws the stale read's witness — T1…T4 outlined,
/// the four edges with their labels, the sentence and the message still on the slow link — all
/// inside the visible diagram; `#op=4` shows T4's record and what S1 reported; and a
/// screenshot is saved (the README's picture comes from it).
#[test]
fn the_fig6_page_shows_the_witness_in_headless_chromium() {
    let dir = fig6_run("browser");
    let page = dir.join("view.html").canonicalize().unwrap();
    let url = format!("file://{}#v=1&op=4", page.display());
    let dom = headless(&url, &["--dump-dom".to_string()], "dom");

    let body = dom.split('<').find(|t| t.starts_with("body")).expect("a body");
    assert_eq!(attr(body, "data-ready"), Some("1"), "the script ran to the end");

    let txns = tags_with_class(&dom, "w-txn-group");
    let labels: Vec<&str> = txns.iter().filter_map(|t| attr(t, "data-label")).collect();
    assert_eq!(labels, ["T1", "T2", "T3", "T4"]);
    let edges = tags_with_class(&dom, "w-edge-group");
    let kinds: Vec<&str> = edges.iter().filter_map(|t| attr(t, "data-kind")).collect();
    assert_eq!(kinds, ["SessionOrder", "ReadsFrom", "SessionOrder", "AntiDependency"]);
    for class in ["w-txn", "w-edge", "w-edge-label", "w-flight"] {
        let found = tags_with_class(&dom, class);
        assert!(!found.is_empty(), "no .{class}");
        for tag in found {
            assert_eq!(attr(tag, "data-visible"), Some("1"), "not visible: <{tag}>");
        }
    }
    let edge_labels: Vec<String> =
        dom.match_indices("class=\"w-label w-edge-label\"").map(|(i, _)| text_after(&dom[i..], ">", 30)).collect();
    assert!(edge_labels.iter().any(|l| l.starts_with("wr y")), "{edge_labels:?}");
    assert!(edge_labels.iter().any(|l| l.starts_with("rw x")), "{edge_labels:?}");
    assert_eq!(attr(body, "data-witness-visible").map(|v| v.split_once('/').map(|(a, b)| a == b)), Some(Some(true)));

    let flight = text_after(&dom, "class=\"w-flight-group\"", 400);
    assert!(flight.contains("ServerWrite S0→S1 still in flight when T4 read x"), "{flight}");
    let callout = dom.split('<').find(|t| t.starts_with("div id=\"callout\"")).expect("the sentence's callout");
    assert_eq!(attr(callout, "data-visible"), Some("1"));
    let sentence = text_after(&dom, "<div id=\"callout\"", 400);
    assert!(sentence.contains("session c2 read the initial x after it had observed y=1"), "{sentence}");

    let details = text_after(&dom, "<section id=\"details\"", 4000);
    assert!(details.contains("\"ops\": [{\"f\":\"r\",\"key\":\"x\",\"value\":null"), "T4's record: {details}");
    assert!(details.contains("ReadReply"), "what S1 answered: {details}");

    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("view-fig6-no-carry.png");
    let _ = std::fs::remove_file(&shot);
    headless(&format!("file://{}", page.display()), &[format!("--screenshot={}", shot.display())], "shot");
    let png = std::fs::read(&shot).expect("a screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let (w, h) = (u32::from_be_bytes(png[16..20].try_into().unwrap()), u32::from_be_bytes(png[20..24].try_into().unwrap()));
    assert_eq!((w, h), (1500, 900));
    assert!(png.len() > 60_000, "a {}-byte screenshot is too plain to hold the diagram", png.len());
    if std::env::var_os("CAUSIM_UPDATE_SCREENSHOT").is_some() {
        std::fs::copy(&shot, Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/view-fig6-no-carry.png")).unwrap();
    }
}

/// Goal: a linearizability failure is drawn with the two operations' intervals, the real-time
/// edge between them with guides at the first one's completion and the second one's
/// invocation, and the impossible order in the side panel. Fig. 6 without carried writes,
/// checked at `linearizable`: c2 reads the initial x after c1's write of x had completed.
#[test]
fn a_stale_read_at_linearizable_draws_the_intervals_and_the_impossible_order() {
    let dir = fig6_run("linearizable");
    ok(&["view", dir.to_str().unwrap(), "--level", "linearizable"]);
    let data = page_data(&std::fs::read_to_string(dir.join("view.html")).unwrap());
    assert_eq!(data["check"]["violations"][0]["anomaly"], "StaleRead");
    let page = dir.join("view.html").canonicalize().unwrap();
    let dom = headless(&format!("file://{}", page.display()), &["--dump-dom".to_string()], "linearizable");
    let kinds: Vec<&str> = tags_with_class(&dom, "w-edge-group").iter().filter_map(|t| attr(t, "data-kind")).collect();
    assert_eq!(kinds, ["Realtime", "AntiDependency"]);
    let i = dom.find("data-kind=\"Realtime\"").unwrap();
    assert!(text_after(&dom[i..], ">", 1000).starts_with("rt x"));
    let guides = tags_with_class(&dom, "w-rt-mark");
    assert_eq!(guides.len(), 2, "one guide at T1's completion, one at T2's invocation");
    for tag in guides.iter().chain(&tags_with_class(&dom, "w-edge")) {
        assert_eq!(attr(tag, "data-visible"), Some("1"), "not visible: <{tag}>");
    }
    let panel = text_after(&dom, "<div id=\"violation-detail\"", 4000);
    assert!(panel.contains("The impossible order") && panel.contains("T1 —rt x→ T2 —rw x→ T1"), "{panel}");
}

/// Goal: a history with no linearization at all (a lost update: two completed writes, each
/// read after both completed) views from a bare directory; the report's smallest failing
/// window, when it holds operations beyond the witness, is outlined too. The window here is
/// the checker's report with one more operation of x added, since the checker's own minimal
/// windows are the witness on small histories.
#[test]
fn a_history_with_no_linearization_draws_its_witness_and_window() {
    let dir = temp_dir("view", "lost-update");
    std::fs::create_dir_all(&dir).unwrap();
    let op = |id: u64, s: &str, t0: u64, t1: u64, f: &str, v: u64| {
        format!(
            "{{\"id\":{id},\"session\":\"{s}\",\"node\":\"S0\",\"invoke_ns\":{t0},\"complete_ns\":{t1},\"outcome\":\"ok\",\"ops\":[{{\"f\":\"{f}\",\"key\":\"x\",\"value\":{v}}}]}}\n"
        )
    };
    let history = [
        "{\"format\":\"causim-history/1\"}\n".to_string(),
        op(0, "c1", 0, 10, "w", 1),
        op(1, "c2", 0, 10, "w", 2),
        op(2, "c3", 20, 30, "r", 1),
        op(3, "c4", 20, 30, "r", 2),
        op(4, "c5", 40, 50, "r", 2),
    ]
    .concat();
    std::fs::write(dir.join("history.jsonl"), history).unwrap();
    let o = causim(&["check", dir.join("history.jsonl").to_str().unwrap(), "--level", "linearizable", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let mut report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["violations"][0]["anomaly"], "NonLinearizable");
    let mut window: Vec<u64> =
        report["violations"][0]["transactions"].as_array().unwrap().iter().map(|t| t["id"].as_u64().unwrap()).collect();
    assert!(!window.contains(&4));
    window.push(4);
    report["violations"][0]["window"] = serde_json::json!(window);
    std::fs::write(dir.join("check.json"), serde_json::to_string(&report).unwrap()).unwrap();
    ok(&["view", dir.to_str().unwrap()]);

    let page = dir.join("view.html").canonicalize().unwrap();
    let dom = headless(&format!("file://{}", page.display()), &["--dump-dom".to_string()], "lost-update");
    let body = dom.split('<').find(|t| t.starts_with("body")).expect("a body");
    let shown = attr(body, "data-witness-visible").unwrap();
    assert!(shown.split_once('/').is_some_and(|(a, b)| a == b && b != "0"), "witness elements visible: {shown}");
    assert!(tags_with_class(&dom, "w-edge-group").iter().any(|t| attr(t, "data-kind") == Some("Realtime")));
    let outlined: Vec<&str> = tags_with_class(&dom, "w-window-group").iter().filter_map(|t| attr(t, "data-txn")).collect();
    assert_eq!(outlined, ["4"]);
    let panel = text_after(&dom, "<div id=\"violation-detail\"", 6000);
    assert!(panel.contains("The smallest failing window found has 5 operations on x"), "{panel}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Goal: a model-check counterexample's replay is drawn with its steps numbered. `causim
/// model-check` writes the page beside the replay's run files, with the property and the
/// steps in words, each delivery tied to the arrow that made it and numbered there; `causim run`
/// of the written scenario numbers the schedule's deliveries even without the words.
#[test]
fn a_model_check_counterexample_is_drawn_with_its_steps_numbered() {
    let dir = temp_dir("view", "model-check");
    let o = causim(&["model-check", "causalmesh", "--mutant", "reveal_at_head", "--threads", "1", "--out", dir.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "a violation exits 1\n{out}\n{}", stderr(&o));
    let run = dir.join("model-check-causalmesh-reveal_at_head-one-round");
    assert!(out.contains(&format!("see it: {}", run.join("view.html").display())), "{out}");
    let data = page_data(&std::fs::read_to_string(run.join("view.html")).unwrap());
    let cx = &data["counterexample"];
    assert_eq!(cx["property"], "a revealed write is everywhere");
    let steps = cx["steps"].as_array().unwrap();
    let words: Vec<&str> = steps.iter().map(|s| s[0].as_str().unwrap()).collect();
    assert_eq!(words[0], "c1 picks w(k1)@S0");
    assert!(words[1].starts_with("c1/f0 → S0: ClientWrite k1"), "{words:?}");
    assert!(words[2].starts_with("S0 → c1/f0: WriteReply k1"), "{words:?}");
    // Deliveries point at their messages (kind and endpoints as the step says); choices at none.
    let strings = data["strings"].as_array().unwrap();
    let msg_kind = |s: &serde_json::Value| strings[data["msgs"][s[1].as_u64().unwrap() as usize][5].as_u64().unwrap() as usize].as_str();
    let tied: Vec<(usize, Option<&str>)> =
        steps.iter().enumerate().filter(|(_, s)| s[1] != -1).map(|(i, s)| (i + 1, msg_kind(s))).collect();
    assert_eq!(tied, [(2, Some("ClientWrite")), (3, Some("WriteReply"))]);

    let page = run.join("view.html").canonicalize().unwrap();
    let dom = headless(&format!("file://{}", page.display()), &["--dump-dom".to_string()], "model-check");
    let numbered: Vec<&str> = tags_with_class(&dom, "cx-step").iter().filter_map(|t| attr(t, "data-step")).collect();
    assert_eq!(numbered, ["2", "3"]);
    let body = dom.split('<').find(|t| t.starts_with("body")).expect("a body");
    assert_eq!(attr(body, "data-steps-visible"), Some("2/2"));
    let panel = text_after(&dom, "<section id=\"counterexample\"", 1500);
    assert!(panel.contains("“a revealed write is everywhere” can be violated"), "{panel}");
    assert!(panel.contains("c1 picks w(k1)@S0"), "{panel}");

    // The scenario alone: `causim run --view` numbers the replay schedule's two deliveries.
    let scenario = dir.join("model-check-causalmesh-reveal_at_head-one-round.json");
    let again = dir.join("run");
    ok(&["run", scenario.to_str().unwrap(), "--view", "--out", again.to_str().unwrap()]);
    let data = page_data(&std::fs::read_to_string(again.join("view.html")).unwrap());
    assert!(data["counterexample"]["property"].is_null());
    assert_eq!(
        data["counterexample"]["steps"].as_array().unwrap().iter().map(|s| s[0].as_str().unwrap()).collect::<Vec<_>>(),
        ["c1/f0 → S0: ClientWrite", "S0 → c1/f0: WriteReply"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
