//! `causim view RUN_DIR`: writes `RUN_DIR/view.html`, the run as a space-time diagram with the
//! history check's witnesses drawn on it (see `causim::view`). `causim run … --view` does the
//! same right after the run.
//!
//! Exit codes: 0 the page was written, 2 the directory or a file in it could not be read.

use causim_checkers::Level;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `causim view`.
#[derive(Args)]
#[command(after_help = "The page is one self-contained HTML file (no network, no server): open it in a browser.\n\
Address-bar options: #v=2 (violation 2), #op=17 (transaction 17's record), #mode=timeline, #axis=linear.\n\
Exit status: 0 written, 2 bad input.")]
pub struct Cmd {
    /// A run directory, as `causim run --out DIR` writes it: history.jsonl, and trace.jsonl and
    /// summary.json when present. A check.json there (`causim check --format json`) is drawn
    /// instead of checking the history again.
    pub run_dir: PathBuf,
    /// Where to write the page. Default: RUN_DIR/view.html.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Check the history at this level instead of the run's own (`checks.level`).
    #[arg(long, short = 'l', value_parser = parse_level)]
    pub level: Option<Level>,
}

fn parse_level(s: &str) -> Result<Level, String> {
    Level::parse(s).ok_or_else(|| format!("unknown level {s:?}; see `causim check --help` for the levels"))
}

pub fn run(args: Cmd) -> ExitCode {
    match causim::view::write(&args.run_dir, args.out.as_deref(), args.level) {
        Ok(path) => {
            println!("wrote {}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// `causim run … --view`: the page for the run just written to `dir`.
pub fn after_run(dir: &Path) -> bool {
    match causim::view::write(dir, None, None) {
        Ok(path) => {
            println!("  {:<16}{}", "wrote", path.display());
            true
        }
        Err(e) => {
            eprintln!("error: {e}");
            false
        }
    }
}
