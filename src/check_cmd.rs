//! `causim check`: owned by the checker work (issue 4). Placeholder until it lands.

use clap::Args;
use std::process::ExitCode;

/// Arguments of `causim check`.
#[derive(Args)]
pub struct CheckArgs {
    /// History file to check.
    pub history: std::path::PathBuf,
}

pub fn run(args: CheckArgs) -> ExitCode {
    eprintln!("causim check: not implemented yet ({})", args.history.display());
    ExitCode::from(2)
}
