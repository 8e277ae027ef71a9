//! Helpers shared by the tests that drive the `causim` binary as a user would.
#![allow(dead_code)] // each test file uses some of them

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs `causim ARGS` from the repository root.
pub fn causim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_causim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("causim runs")
}

/// Runs `causim ARGS`, which must succeed, and returns its standard output.
pub fn ok(args: &[&str]) -> String {
    let o = causim(args);
    assert!(o.status.success(), "causim {args:?} failed:\n{}\n{}", stdout(&o), stderr(&o));
    stdout(&o)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh, empty temporary directory for `test`/`name`, unique to this test process.
pub fn temp_dir(test: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("causim-{test}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The regression scenarios (`regression-*.json`: fuzzer findings in a correct protocol,
/// shrunk and since fixed) in `scenarios/<system>/`, sorted by name; at least one.
pub fn regression_scenarios(system: &str) -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(system);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("regression-") && n.ends_with(".json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no regression scenarios in {}", dir.display());
    files
}
