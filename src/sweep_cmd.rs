//! `causim sweep`: not implemented yet (placeholder owned by the work on it).

use clap::Args;
use std::process::ExitCode;

/// Arguments of `causim sweep`.
#[derive(Args)]
pub struct Cmd {
    /// Arguments (not implemented yet).
    pub rest: Vec<String>,
}

pub fn run(_args: Cmd) -> ExitCode {
    eprintln!("causim sweep: not implemented yet");
    ExitCode::from(2)
}
