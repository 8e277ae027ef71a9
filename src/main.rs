//! `causim`: the command-line front end. A thin layer: it reads scenario files, builds a
//! simulation from `causim-sim` and `causim-models`, runs it, checks histories with
//! `causim-checkers`, and prints or writes the results.

mod check_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "causim", version, about = "Deterministic simulator and checker for causal cache protocols")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a history for consistency anomalies.
    Check(check_cmd::CheckArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check(args) => check_cmd::run(args),
    }
}
