//! `causim reproduce`: regenerates the papers' figures (sweeps, plots and a Markdown report in
//! out/). See `causim::reproduce`.

use causim::reproduce::{self, ReproduceOptions};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `causim reproduce`.
#[derive(Args)]
pub struct Cmd {
    /// Smaller sweeps (fewer seeds, points and workflows): a first look in a couple of minutes.
    #[arg(long)]
    pub quick: bool,
    /// Output directory: figures/, sweeps/ and report.md.
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Threads for the sweeps (default: the number of cores). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Only these figures (comma-separated; see `causim plot --list`).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Do every run again instead of reusing the sweeps' journals.
    #[arg(long)]
    pub fresh: bool,
    /// Do not draw progress bars.
    #[arg(long)]
    pub no_progress: bool,
}

pub fn run(args: Cmd) -> ExitCode {
    let options = ReproduceOptions {
        quick: args.quick,
        out_dir: args.out,
        threads: args.threads.unwrap_or_else(crate::sweep_cmd::default_threads),
        only: args.only,
        fresh: args.fresh,
        progress: !args.no_progress,
    };
    match reproduce::reproduce(&options) {
        Ok(r) => {
            for t in &r.timings {
                println!("sweep {:<18} {:>5} runs ({:>5} run now) in {:>6.1} s", t.name, t.runs, t.ran, t.wall_s);
            }
            for (name, _, png) in &r.figures {
                println!("figure {name:<20} {}", png.display());
            }
            println!("claims: {} (see the report)", causim::claim::Score::of(&r.claims).headline());
            println!("report {}", r.report.display());
            println!("wall time {:.1} s", r.wall_s);
            for e in &r.errors {
                eprintln!("error: {e}");
            }
            if r.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
