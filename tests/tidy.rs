//! The rules the design documents promise, checked on the source tree, so that breaking one is
//! a test failure rather than a reviewer's catch:
//! - the engine and the protocols (`sim/`, `models/`) use no hash-ordered collection, clock,
//!   environment variable or unseeded random source (determinism);
//! - every source file opens with its `//!` essay;
//! - every protocol module with a `Model` is in the catalogue, and no protocol name is spelled
//!   as a string outside `models/` and the scenario files (the catalogue is the one place);
//! - every scenario that declares an `expect` is run by a test that checks it.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `.rs` files under `dir`, sorted, skipping build output.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "target" && n != "node_modules") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The code of a line: what precedes a `//` comment.
fn code(line: &str) -> &str {
    line.find("//").map_or(line, |i| &line[..i])
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// Lines of `files` whose code contains one of `needles`, as `file:line: needle`.
fn offending(files: &[PathBuf], needles: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            for n in needles {
                if code(line).contains(n) {
                    found.push(format!("{}:{}: {n}", rel(f), i + 1));
                }
            }
        }
    }
    found
}

#[test]
fn engine_and_protocols_use_nothing_that_breaks_determinism() {
    let mut files = rust_files(&root().join("sim/src"));
    files.extend(rust_files(&root().join("models/src")));
    assert!(files.len() > 20, "found only {} files", files.len());
    let forbidden =
        ["HashMap", "HashSet", "Instant", "SystemTime", "std::env", "env::var", "thread_rng", "rand::", "getrandom", "RandomState"];
    let found = offending(&files, &forbidden);
    assert!(found.is_empty(), "sim/ and models/ must stay deterministic:\n{}", found.join("\n"));
}

#[test]
fn every_source_file_opens_with_its_essay() {
    let mut missing = Vec::new();
    let mut seen = 0;
    for dir in ["src", "sim", "models", "pipeline", "specs", "checkers", "tests", "benches"] {
        for f in rust_files(&root().join(dir)) {
            seen += 1;
            let text = std::fs::read_to_string(&f).unwrap();
            if !text.trim_start().starts_with("//!") {
                missing.push(rel(&f));
            }
        }
    }
    assert!(seen > 50, "found only {seen} files");
    assert!(missing.is_empty(), "files without a `//!` essay saying what they are for:\n{}", missing.join("\n"));
}

#[test]
fn every_model_is_in_the_catalogue() {
    let catalogue = std::fs::read_to_string(root().join("models/src/catalogue.rs")).unwrap();
    let listed = &catalogue[catalogue.rfind("catalogue! {").expect("the catalogue list")..];
    let mut models = 0;
    for f in rust_files(&root().join("models/src")) {
        let text = std::fs::read_to_string(&f).unwrap();
        for line in text.lines() {
            let Some(rest) = code(line)
                .trim_start()
                .strip_prefix("impl Model for ")
                .or_else(|| line.trim_start().strip_prefix("impl crate::Model for "))
            else {
                continue;
            };
            let ty: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            models += 1;
            assert!(listed.contains(&format!("::{ty},")), "{}: model {ty} is not in the catalogue (models/src/catalogue.rs)", rel(&f));
        }
    }
    assert_eq!(models, causim_models::catalogue::PROTOCOLS.len(), "every catalogue line is a model and every model a line");
}

#[test]
fn protocol_names_are_spelled_only_in_models_and_scenarios() {
    let mut files = Vec::new();
    for dir in ["src", "sim/src", "pipeline/src", "specs/src", "checkers/src"] {
        files.extend(rust_files(&root().join(dir)));
    }
    let names: Vec<String> = causim_models::catalogue::PROTOCOLS.iter().map(|e| format!("\"{}\"", e.name)).collect();
    let needles: Vec<&str> = names.iter().map(String::as_str).collect();
    let found = offending(&files, &needles);
    assert!(found.is_empty(), "use the catalogue (`<M as Model>::ENTRY.name`), not the name as a string:\n{}", found.join("\n"));
}
