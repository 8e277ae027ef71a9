//! Test helpers: a compact history notation, the oracle, snapshot files.

#![allow(dead_code)]

pub mod litmus_table;
pub mod litmus_timed;
pub mod oracle;
pub mod registers;

use causim_checkers::{History, Key, Level, OpRecord, Outcome, TxnRecord, Value};
use std::path::PathBuf;

/// Parse the test notation: one transaction per line, ids 0, 1, 2, … in order.
///
/// ```text
/// c1: w x=1, w y=1          committed transaction of session c1
/// c2!: w x=2                 aborted (`!`)
/// c3?: w x=3, r y=1          failed (`?`)
/// c4 after 0 2: r x=_        `after` links (ids); `_` is the initial (null) value
/// c5 @10-20: w x=5           real-time interval: invoke_ns 10, complete_ns 20
/// ```
/// Blank lines and lines starting with `#` are ignored. Values are integers (or `_`); keys are
/// words.
pub fn records(text: &str) -> Vec<TxnRecord> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (head, body) = line.split_once(':').unwrap_or_else(|| panic!("no ':' in {line:?}"));
        let mut words = head.split_whitespace();
        let mut session = words.next().expect("a session").to_string();
        let mut outcome = Outcome::Ok;
        if let Some(s) = session.strip_suffix('!') {
            outcome = Outcome::Aborted;
            session = s.to_string();
        } else if let Some(s) = session.strip_suffix('?') {
            outcome = Outcome::Failed;
            session = s.to_string();
        }
        let mut after = Vec::new();
        let mut times = None;
        let mut words = words.peekable();
        if let Some(t) = words.peek().and_then(|w| w.strip_prefix('@')) {
            let (a, b) = t.split_once('-').unwrap_or_else(|| panic!("bad interval in {line:?}"));
            times = Some((a.parse::<u64>().expect("a time"), b.parse::<u64>().expect("a time")));
            words.next();
        }
        if let Some(w) = words.next() {
            assert_eq!(w, "after", "unexpected {w:?} in {line:?}");
            after = words.map(|a| a.parse().expect("after ids are integers")).collect();
        }
        let ops = body
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|op| {
                let (f, rest) = op.split_once(' ').unwrap_or_else(|| panic!("bad op {op:?}"));
                let (k, v) = rest.trim().split_once('=').unwrap_or_else(|| panic!("bad op {op:?}"));
                let key = Key::Str(k.trim().into());
                let value = match v.trim() {
                    "_" => Value::Null,
                    n => Value::Int(n.parse().unwrap_or_else(|_| panic!("bad value in {op:?}"))),
                };
                match f {
                    "w" => OpRecord::write(key, value),
                    "r" => OpRecord::read(key, value),
                    _ => panic!("bad op kind in {op:?}"),
                }
            })
            .collect();
        let id = out.len() as u64;
        let mut record = TxnRecord::new(session, ops).with_id(id).with_outcome(outcome).with_after(after);
        record.invoke_ns = times.map(|t| t.0);
        record.complete_ns = times.map(|t| t.1);
        out.push(record);
    }
    out
}

pub fn history(text: &str) -> History {
    History::from_records(None, &records(text)).expect("test histories are valid input")
}

/// Compare `actual` with the snapshot file `tests/snapshots/<name>.txt`; with
/// `CAUSIM_BLESS=1`, write it instead.
pub fn snapshot(name: &str, actual: &str) {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "snapshots", &format!("{name}.txt")].iter().collect();
    if std::env::var("CAUSIM_BLESS").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().expect("has a parent")).expect("create snapshots dir");
        std::fs::write(&path, actual).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing snapshot {}; run with CAUSIM_BLESS=1 to create it", path.display()));
    if expected != actual {
        let mut diff = String::new();
        for (i, (e, a)) in expected.lines().zip(actual.lines()).enumerate() {
            if e != a {
                diff.push_str(&format!("line {}:\n  expected: {e}\n  actual:   {a}\n", i + 1));
            }
        }
        panic!(
            "snapshot {name} differs ({} vs {} lines):\n{diff}\n--- actual ---\n{actual}\n(rerun with CAUSIM_BLESS=1 to accept)",
            expected.lines().count(),
            actual.lines().count()
        );
    }
}

pub const ALL_LEVELS: [Level; 13] = Level::UNTIMED;

/// Compare the README section between `<!-- name -->` and `<!-- /name -->` with `content`;
/// with `CAUSIM_BLESS=1`, rewrite it.
pub fn readme_section(name: &str, content: &str) {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "README.md"].iter().collect();
    let readme = std::fs::read_to_string(&path).expect("checkers/README.md exists");
    let (open, close) = (format!("<!-- {name} -->\n"), format!("<!-- /{name} -->"));
    let start = readme.find(&open).unwrap_or_else(|| panic!("README.md has no {open:?} marker")) + open.len();
    let end = readme[start..].find(&close).unwrap_or_else(|| panic!("README.md has no {close:?} marker")) + start;
    if std::env::var("CAUSIM_BLESS").as_deref() == Ok("1") {
        let updated = format!("{}{}{}", &readme[..start], content, &readme[end..]);
        std::fs::write(&path, updated).expect("write README.md");
        return;
    }
    assert_eq!(&readme[start..end], content, "README.md section {name} is stale; rerun with CAUSIM_BLESS=1");
}
