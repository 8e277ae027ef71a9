//! Check a history file at a level (the library alone, without the `causim` binary):
//! `cargo run --release -p causim-checkers --example check_file -- FILE LEVEL`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(level)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: check_file FILE LEVEL");
        std::process::exit(2);
    };
    let level: causim_checkers::Level = level.parse().unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let started = std::time::Instant::now();
    let history = causim_checkers::read_history_path(std::path::Path::new(path), None).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let read = started.elapsed();
    let report = causim_checkers::check(&history, level).with_source(path.clone());
    print!("{}", report.render_text());
    eprintln!("read {:.2} s, checked {:.2} s", read.as_secs_f64(), (started.elapsed() - read).as_secs_f64());
    std::process::exit(if report.ok { 0 } else { 1 });
}
