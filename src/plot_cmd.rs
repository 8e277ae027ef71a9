//! `causim plot`: draws a paper-style figure (SVG and PNG) from sweep results.

use causim::plot::{self, FIGURES};
use causim::sweep::read_results;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `causim plot`.
#[derive(Args)]
pub struct Cmd {
    /// Sweep results: an output directory of `causim sweep` (or its results.json). Not needed
    /// with --list.
    #[arg(required_unless_present = "list")]
    pub results: Option<PathBuf>,
    /// Figure name (see --list), or `line` for any metric against any parameter (--x, --y).
    #[arg(long)]
    pub figure: Option<String>,
    /// Where to write <figure>.svg and <figure>.png. Default: out/figures.
    #[arg(long, default_value = "out/figures")]
    pub out: PathBuf,
    /// List the figures and the sweep each needs.
    #[arg(long)]
    pub list: bool,
    /// `--figure line`: the parameter on the x axis (a JSON path of the sweep's grid).
    #[arg(long)]
    pub x: Option<String>,
    /// `--figure line`: the metric on the y axis (a column of aggregate.csv).
    #[arg(long)]
    pub y: Option<String>,
    /// `--figure line`: logarithmic x axis.
    #[arg(long)]
    pub log_x: bool,
    /// `--figure line`: logarithmic y axis.
    #[arg(long)]
    pub log_y: bool,
}

pub fn run(args: Cmd) -> ExitCode {
    if args.list || args.figure.is_none() {
        println!("figures (causim plot <results of the sweep> --figure <name>):");
        for f in FIGURES {
            println!("  {:<20} sweep {:<18} {}", f.name, f.sweep, f.about);
        }
        println!("  {:<20} any sweep          --x PARAM --y METRIC [--log-x] [--log-y]", "line");
        return if args.list { ExitCode::SUCCESS } else { ExitCode::from(2) };
    }
    let name = args.figure.expect("checked");
    let Some(results_path) = &args.results else {
        eprintln!("error: give the sweep results to plot (a `causim sweep` output folder)");
        return ExitCode::from(2);
    };
    let results = match read_results(results_path) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let figure = if name == "line" {
        let (Some(x), Some(y)) = (&args.x, &args.y) else {
            eprintln!("error: --figure line needs --x PARAM and --y METRIC");
            return ExitCode::from(2);
        };
        plot::generic(&results, x, y, args.log_x, args.log_y).map(|f| (f, vec![]))
    } else {
        match plot::figure(&name) {
            Some(def) => {
                if def.sweep != results.sweep {
                    eprintln!("note: figure {name} is made from sweep {:?}; these results are from {:?}", def.sweep, results.sweep);
                }
                def.build(&results)
            }
            None => {
                eprintln!("error: unknown figure {name:?}; see causim plot --list");
                return ExitCode::from(2);
            }
        }
    };
    let (figure, claims) = match figure {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match causim::chart::render(&figure, &args.out) {
        Ok((svg, png)) => {
            println!("wrote {}", svg.display());
            println!("wrote {}", png.display());
            for c in claims {
                let mark = match c.holds {
                    Some(true) => "holds",
                    Some(false) => "does NOT hold",
                    None => "not comparable",
                };
                println!("  {} [{}]: paper {} | simulated {} | rule: {} | {mark}", c.claim, c.kind.label(), c.paper, c.simulated, c.rule);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
