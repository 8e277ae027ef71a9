fn main() {
    let p = std::env::args().nth(1).unwrap();
    let t = std::time::Instant::now();
    let h = causim_checkers::read_history_path(std::path::Path::new(&p), None).unwrap();
    eprintln!(
        "parsed {} txns in {:.2}s",
        h.txn_count(),
        t.elapsed().as_secs_f64()
    );
}
