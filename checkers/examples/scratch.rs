fn main() {
    let args: Vec<String> = std::env::args().collect();
    let h = causim_checkers::read_history_path(std::path::Path::new(&args[1]), None)
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
    for l in &args[2..] {
        let level: causim_checkers::Level = l.parse().unwrap();
        let r = causim_checkers::check(&h, level);
        println!("{}", r.render_text());
    }
}
