//! `causim view`: a run drawn as a space-time diagram in one self-contained HTML page, with the
//! history check's witnesses drawn on it.
//!
//! A person sees a stale read faster than they read one. The page has one lane per node and
//! per client session; messages are arrows from send to delivery (drops end in a cross, a
//! partition's hold is a dashed stretch at the sender); operations are boxes spanning their
//! interval, labelled with their values; crashes, restarts and partitions are marked. Each
//! violation the checker found is drawn on the diagram: its transactions outlined and tagged
//! T1, T2, …, its witness edges (session order, reads-from, causal order, write order,
//! anti-dependency, real time) drawn with their labels, its sentence beside it, and the
//! messages still on their way to the stale read's node when it read; a linearizability
//! failure's real-time edges also get guides at the instants that order them, and its
//! smallest failing window is outlined. A replayed model-check counterexample has its steps
//! numbered on the arrows that made them. Long runs open in a timeline: lanes collapse to
//! nodes, a histogram shows anomalies over time, and choosing a violation magnifies its window
//! with its sessions' lanes.
//!
//! The page is data plus drawing code of our own (`assets/view.js`, plain DOM, canvas and
//! SVG; no library, so nothing to bundle, audit or fetch): the run is read here into one JSON
//! value ([`data`]) and inlined, so the file opens from disk with no network and no server.
//! The same run directory gives byte-identical HTML: nothing here reads a clock, and every
//! list comes out in trace or history order.

mod counterexample;
pub mod data;
mod page;
pub mod trace;

use causim_checkers::Level;
use std::path::{Path, PathBuf};

/// Why a page could not be made.
#[derive(Debug)]
pub struct ViewError(pub String);

impl std::fmt::Display for ViewError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The page for run directory `dir`, checked at `level` (default: the run's own level).
pub fn render(dir: &Path, level: Option<Level>) -> Result<String, ViewError> {
    let run = data::load(dir)?;
    let model = data::model(&run, level)?;
    Ok(page::render(&model))
}

/// Writes the page for `dir` to `out` (default `dir/view.html`) and returns where.
pub fn write(dir: &Path, out: Option<&Path>, level: Option<Level>) -> Result<PathBuf, ViewError> {
    let html = render(dir, level)?;
    let path = out.map_or_else(|| dir.join("view.html"), Path::to_path_buf);
    causim_pipeline::out_file::write(&path, html).map_err(|e| ViewError(format!("cannot write {}: {e}", path.display())))?;
    Ok(path)
}
