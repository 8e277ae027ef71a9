//! A sweep's output folder: what may be written there, by whom, and whether it holds a whole
//! shard.
//!
//! - A folder is used only if it is new, empty or already a sweep's (it holds `runs.jsonl`,
//!   `build.txt` or `shard.json`): a folder of the user's is refused, never written into.
//! - `sweep.lock` (holding the process id) guards the journal: a second sweep into the same
//!   folder is refused while the first runs. A lock left by a process that is gone is taken
//!   over.
//! - Files are written only where no symbolic link stands (a link planted in the folder is
//!   refused, not followed).
//! - `shard.json` says which shard the folder holds and whether its sweep finished, so `merge`
//!   can tell a complete set of shards from a partial one.

use causim_pipeline::out_file;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The lock file of a sweep's output folder.
pub const LOCK: &str = "sweep.lock";
/// Which shard a folder holds, and whether its sweep finished.
pub const SHARD: &str = "shard.json";

/// Checks that `dir` may hold a sweep's outputs (new, empty, or a sweep's), before any run.
pub fn check(dir: &Path) -> Result<(), String> {
    let Ok(meta) = std::fs::symlink_metadata(dir) else { return Ok(()) };
    if !meta.is_dir() {
        return Err(format!("{} exists and is not a folder; choose another --out", dir.display()));
    }
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))? {
        names.push(e.map_err(|e| format!("cannot list {}: {e}", dir.display()))?.file_name());
    }
    let ours = ["runs.jsonl", "build.txt", SHARD, LOCK];
    if names.is_empty() || names.iter().any(|n| ours.iter().any(|o| n == *o)) {
        return Ok(());
    }
    Err(format!("{} exists and is not a sweep's output folder (no runs.jsonl); remove it or choose another --out", dir.display()))
}

/// The lock on a sweep's output folder, released when dropped.
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
}

impl Lock {
    /// Takes the folder's lock, or says which process holds it.
    pub fn take(dir: &Path) -> Result<Lock, String> {
        let path = dir.join(LOCK);
        for _ in 0..2 {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    use std::io::Write;
                    f.write_all(format!("{}\n", std::process::id()).as_bytes())
                        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                    return Ok(Lock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read_to_string(&path).unwrap_or_default();
                    let pid: Option<u32> = holder.trim().parse().ok();
                    if pid.is_some_and(alive) {
                        return Err(format!(
                            "another sweep (process {}) is writing to {}; wait for it to finish or choose another --out \
                             (remove {} if that process is not a sweep)",
                            pid.unwrap_or_default(),
                            dir.display(),
                            path.display()
                        ));
                    }
                    // Left by a sweep that was killed: take it over.
                    std::fs::remove_file(&path).map_err(|e| format!("cannot remove the stale {}: {e}", path.display()))?;
                }
                Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
            }
        }
        Err(format!("cannot take {}: it keeps reappearing", path.display()))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether process `pid` is running (Linux and other systems with /proc; elsewhere, assume so).
fn alive(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Writes `bytes` to `path`, refusing a symbolic link there (it would be followed).
pub fn write(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), String> {
    out_file::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Opens `path` to append, refusing a symbolic link there.
pub fn append(path: &Path) -> Result<std::fs::File, String> {
    out_file::append(path).map_err(|e| format!("cannot open {}: {e}", path.display()))
}

/// Records which shard `dir` holds (`(0, 1)`: the whole sweep) and whether it is complete.
pub fn mark_shard(dir: &Path, sweep: &str, shard: (usize, usize), complete: bool) -> Result<(), String> {
    let v = json!({"sweep": sweep, "shard": shard.0, "of": shard.1, "complete": complete});
    write(&dir.join(SHARD), v.to_string() + "\n")
}

/// What is missing from a set of merge inputs (empty when they are the complete set of shards
/// of one sweep, each finished).
pub fn missing_shards(inputs: &[PathBuf]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut have: Vec<(usize, usize)> = Vec::new();
    for input in inputs {
        let dir = if input.is_dir() { input.as_path() } else { input.parent().unwrap_or(Path::new(".")) };
        let marker = std::fs::read_to_string(dir.join(SHARD)).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok());
        let Some(m) = marker else {
            problems.push(format!("{}: no {SHARD}, so not known to be a whole shard", input.display()));
            continue;
        };
        let (Some(i), Some(n)) = (m["shard"].as_u64(), m["of"].as_u64()) else {
            problems.push(format!("{}: {SHARD} does not name a shard", input.display()));
            continue;
        };
        if m["complete"] != Value::Bool(true) {
            problems.push(format!("{}: shard {i}/{n} did not finish", input.display()));
        }
        have.push((i as usize, n as usize));
    }
    let mut counts: Vec<usize> = have.iter().map(|s| s.1).collect();
    counts.sort_unstable();
    counts.dedup();
    if counts.len() > 1 {
        problems.push(format!("the inputs come from different shardings (of {counts:?})"));
    } else if let Some(&n) = counts.first() {
        let absent: Vec<String> = (0..n).filter(|i| !have.iter().any(|s| s.0 == *i)).map(|i| format!("{i}/{n}")).collect();
        if !absent.is_empty() {
            problems.push(format!("shard{} {} missing", if absent.len() > 1 { "s" } else { "" }, absent.join(", ")));
        }
    }
    problems
}
