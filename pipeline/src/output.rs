//! A run's output folder is replaced only as a whole, and only when the run succeeded.
//!
//! A run writes into a fresh hidden sibling (`.<name>.partial-<pid>`), created with
//! `create_dir` so it cannot be an existing folder or a symbolic link planted there; its files
//! are therefore new files, never followed links. When the run has written everything, the
//! sibling takes the folder's place (the old folder is renamed aside, then removed). A run that
//! fails (a bad scenario, an I/O error) removes its sibling and leaves the previous run whole.
//!
//! An existing folder is replaced only if it is a causim run folder: no subfolders, and a
//! `summary.json` that a run wrote. Anything else (the working directory, a folder of the
//! user's) is refused, never deleted.

use std::io;
use std::path::{Path, PathBuf};

/// A run's output folder while the run writes it.
#[derive(Debug)]
pub struct Staged {
    target: PathBuf,
    staging: PathBuf,
    done: bool,
}

/// Why a folder cannot receive a run's outputs.
#[derive(Debug)]
pub enum OutputError {
    /// The folder exists and is not a run folder.
    NotARunFolder(PathBuf, &'static str),
    Io(String, io::Error),
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OutputError::NotARunFolder(p, why) => {
                write!(f, "{} exists and is not a causim run folder ({why}); remove it or choose another --out", p.display())
            }
            OutputError::Io(what, e) => write!(f, "{what}: {e}"),
        }
    }
}

fn io_err(what: String) -> impl FnOnce(io::Error) -> OutputError {
    move |e| OutputError::Io(what, e)
}

/// Whether `dir` (which exists) may be replaced by a run's outputs.
fn check_replaceable(dir: &Path) -> Result<(), OutputError> {
    let meta = std::fs::symlink_metadata(dir).map_err(io_err(format!("cannot inspect {}", dir.display())))?;
    if !meta.is_dir() {
        return Err(OutputError::NotARunFolder(dir.to_path_buf(), "not a folder"));
    }
    let mut entries = 0;
    for e in std::fs::read_dir(dir).map_err(io_err(format!("cannot list {}", dir.display())))? {
        let e = e.map_err(io_err(format!("cannot list {}", dir.display())))?;
        entries += 1;
        if !e.file_type().map_err(io_err(format!("cannot inspect {}", e.path().display())))?.is_file() {
            return Err(OutputError::NotARunFolder(dir.to_path_buf(), "it holds a folder or a link"));
        }
    }
    if entries == 0 {
        return Ok(());
    }
    let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap_or_default();
    if !summary.contains("\"resolved_scenario\"") {
        return Err(OutputError::NotARunFolder(dir.to_path_buf(), "no summary.json written by a run"));
    }
    Ok(())
}

impl Staged {
    /// Prepares to write a run into `target`: checks that an existing `target` may be
    /// replaced, and creates the fresh sibling the run writes into.
    pub fn begin(target: &Path) -> Result<Staged, OutputError> {
        if std::fs::symlink_metadata(target).is_ok() {
            check_replaceable(target)?;
        }
        let name = target.file_name().ok_or_else(|| OutputError::NotARunFolder(target.to_path_buf(), "it has no folder name"))?;
        let parent = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(io_err(format!("cannot create {}", parent.display())))?;
        let staging = parent.join(format!(".{}.partial-{}", name.to_string_lossy(), std::process::id()));
        let _ = std::fs::remove_dir_all(&staging); // a leftover of this process id's earlier crash
        std::fs::create_dir(&staging).map_err(io_err(format!("cannot create {}", staging.display())))?;
        Ok(Staged { target: target.to_path_buf(), staging, done: false })
    }

    /// Where the run writes now.
    pub fn dir(&self) -> &Path {
        &self.staging
    }

    /// Where the outputs will be once committed.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Puts the written outputs in the target's place.
    pub fn commit(mut self) -> Result<(), OutputError> {
        let aside = self.staging.with_file_name(format!(
            ".{}.old-{}",
            self.target.file_name().expect("checked in begin").to_string_lossy(),
            std::process::id()
        ));
        let had_old = std::fs::symlink_metadata(&self.target).is_ok();
        if had_old {
            // Checked again: the folder may have changed while the run went on.
            check_replaceable(&self.target)?;
            let _ = std::fs::remove_dir_all(&aside);
            std::fs::rename(&self.target, &aside).map_err(io_err(format!("cannot move {} aside", self.target.display())))?;
        }
        std::fs::rename(&self.staging, &self.target)
            .map_err(io_err(format!("cannot move the run's outputs to {}", self.target.display())))?;
        self.done = true;
        if had_old {
            std::fs::remove_dir_all(&aside).map_err(io_err(format!("cannot remove the previous run at {}", aside.display())))?;
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("causim-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_committed_run_replaces_the_previous_one_and_a_failed_one_leaves_it_whole() {
        let root = temp("replace");
        let target = root.join("run");
        let first = Staged::begin(&target).unwrap();
        std::fs::write(first.dir().join("summary.json"), "{\"resolved_scenario\": 1}").unwrap();
        std::fs::write(first.dir().join("history.jsonl"), "one").unwrap();
        first.commit().unwrap();
        let failed = Staged::begin(&target).unwrap();
        std::fs::write(failed.dir().join("history.jsonl"), "half").unwrap();
        drop(failed);
        assert_eq!(std::fs::read_to_string(target.join("history.jsonl")).unwrap(), "one");
        let second = Staged::begin(&target).unwrap();
        std::fs::write(second.dir().join("summary.json"), "{\"resolved_scenario\": 2}").unwrap();
        second.commit().unwrap();
        assert!(!target.join("history.jsonl").exists(), "the old folder is replaced as a whole");
        let names: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("run")], "no staging or old folder is left behind");
    }

    #[test]
    fn a_folder_that_is_not_a_run_folder_is_refused_and_kept() {
        let root = temp("refuse");
        std::fs::write(root.join("notes.txt"), "mine").unwrap();
        let e = Staged::begin(&root).unwrap_err();
        assert!(e.to_string().contains("is not a causim run folder"), "{e}");
        std::fs::create_dir(root.join("sub")).unwrap();
        assert!(Staged::begin(&root).is_err());
        assert_eq!(std::fs::read_to_string(root.join("notes.txt")).unwrap(), "mine");
    }
}
