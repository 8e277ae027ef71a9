//! `causim check`: check a history file at a consistency level, explain what is wrong, and
//! convert between history formats.
//!
//! Exit codes: 0 the history satisfies the level (or only an export was asked for), 1 violations
//! were found, 2 bad input or usage (the message names the file, the line and the problem).

use causim_checkers::{CheckOptions, ExportFormat, InputFormat, Level, check_with, read_history, read_history_path, write_history};
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `causim check`.
#[derive(Args, Debug)]
#[command(after_help = "Levels: well-formed, read-your-writes, monotonic-reads, monotonic-writes, writes-follow-reads, \
session, cc, ccv (causal+), cm, rc, rc-plume, ra, tcc, linearizable (per-key registers, real time), si (snapshot isolation), \
strict-serializable (transactions, real time), cache-free (MuCache call trees), shared-log, queue, exactly-once, lock-safety (the last four: Boki log calls).\n\
Exit status: 0 satisfied, 1 violations found, 2 bad input or usage.")]
pub struct CheckArgs {
    /// History file to check (`-` for standard input; a directory of Cobra client logs).
    pub history: PathBuf,
    /// Consistency level to check (required unless only --export is asked for).
    #[arg(long, short = 'l', value_parser = parse_level)]
    pub level: Option<Level>,
    /// Report format on standard output.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// Also write the witnesses as a Graphviz digraph to FILE.
    #[arg(long, value_name = "FILE")]
    pub dot: Option<PathBuf>,
    /// Format of the history file (detected from its first bytes when omitted).
    #[arg(long, value_enum)]
    pub input_format: Option<InputFormatArg>,
    /// Write the history in another format: `--export dbcop FILE`, `--export plume FILE`,
    /// `--export dbcop-bincode FILE` or `--export causim FILE`.
    #[arg(long, num_args = 2, value_names = ["FORMAT", "FILE"])]
    pub export: Option<Vec<String>>,
    /// Violations to list in full (all are counted).
    #[arg(long, default_value_t = 100)]
    pub max: usize,
    /// Threads for the read scan (0: as many as the machine has, at most 4).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// `linearizable`: search steps per key before that key gets no verdict.
    #[arg(long, value_name = "N", default_value_t = CheckOptions::default().lin_steps_max)]
    pub lin_steps: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InputFormatArg {
    Causim,
    Dbcop,
    Plume,
    Elle,
    JepsenEdn,
    DbcopBincode,
    Cobra,
}

impl From<InputFormatArg> for InputFormat {
    fn from(f: InputFormatArg) -> InputFormat {
        match f {
            InputFormatArg::Causim => InputFormat::Causim,
            InputFormatArg::Dbcop => InputFormat::Dbcop,
            InputFormatArg::Plume => InputFormat::Plume,
            InputFormatArg::Elle => InputFormat::Elle,
            InputFormatArg::JepsenEdn => InputFormat::JepsenEdn,
            InputFormatArg::DbcopBincode => InputFormat::DbcopBincode,
            InputFormatArg::Cobra => InputFormat::Cobra,
        }
    }
}

fn parse_level(s: &str) -> Result<Level, String> {
    s.parse()
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("causim check: {message}");
    ExitCode::from(2)
}

pub fn run(args: CheckArgs) -> ExitCode {
    let export = match &args.export {
        None => None,
        Some(v) => match ExportFormat::parse(&v[0]) {
            Some(f) => Some((f, PathBuf::from(&v[1]))),
            None => {
                return fail(format!("--export: unknown format {:?}; expected dbcop, dbcop-bincode, plume or causim", v[0]));
            }
        },
    };
    if args.level.is_none() && export.is_none() {
        return fail("--level is required (or --export FORMAT FILE to convert only); see causim check --help");
    }
    let format = args.input_format.map(InputFormat::from);
    let (history, source) = if args.history.as_os_str() == "-" {
        // Streamed like a file (line formats read it in bounded chunks), not slurped first.
        match read_history(std::io::stdin().lock(), format) {
            Ok(h) => (h, "<stdin>".to_string()),
            Err(e) => return fail(e.in_file("<stdin>")),
        }
    } else {
        match read_history_path(&args.history, format) {
            Ok(h) => (h, args.history.display().to_string()),
            Err(e) => return fail(e),
        }
    };
    // An empty input (an empty file, a header alone, nothing on stdin) would check nothing and
    // pass: more likely a wrong file or a broken pipeline than a history.
    if history.txn_count() == 0 {
        return fail(format!("{source}: the history holds no transactions (empty, or a header only): nothing to check"));
    }
    if let Some((format, path)) = &export
        && let Err(e) = write_file(path, |w| write_history(&history, *format, w))
    {
        return fail(format!("{}: cannot write: {e}", path.display()));
    }
    let Some(level) = args.level else {
        return ExitCode::SUCCESS;
    };
    let options =
        CheckOptions { violations_max: args.max, threads: args.threads, lin_steps_max: args.lin_steps, ..CheckOptions::default() };
    let report = check_with(&history, level, &options).with_source(source);
    if let Some(path) = &args.dot
        && let Err(e) = write_file(path, |w| w.write_all(report.to_dot().as_bytes()))
    {
        return fail(format!("{}: cannot write: {e}", path.display()));
    }
    let out = match args.format {
        ReportFormat::Text => report.render_text(),
        ReportFormat::Json => report.to_json() + "\n",
    };
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (e.g. `| head`) is not an error worth reporting.
    let _ = stdout.write_all(out.as_bytes()).and_then(|()| stdout.flush());
    if report.ok {
        ExitCode::SUCCESS
    } else if report.violation_count == 0 {
        // Incomplete (a work budget ran out) without a violation: we cannot say.
        eprintln!("causim check: the check is incomplete; see the notes in the report");
        ExitCode::from(2)
    } else {
        ExitCode::from(1)
    }
}

fn write_file(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    let result = causim_pipeline::out_file::create(path).and_then(|mut file| {
        write(&mut file)?;
        file.flush()
    });
    if result.is_err() {
        // Leave no empty or partial file behind (e.g. a list-append history cannot be exported).
        let _ = std::fs::remove_file(path);
    }
    result
}
