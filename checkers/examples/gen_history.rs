//! Write a generated serial history (the benchmark's workload) to a file, in any export format:
//! `cargo run --release -p causim-checkers --example gen_history -- FILE causim|dbcop|plume TXNS OPS KEYS`.
use causim_checkers::testgen::{GenParams, serial};
use causim_checkers::{ExportFormat, write_history};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 6 {
        eprintln!("usage: gen_history FILE FORMAT TXNS OPS KEYS");
        std::process::exit(2);
    }
    let num = |i: usize| a[i].parse::<u64>().expect("a number");
    let p = GenParams {
        sessions: 25,
        txns_per_session: (num(3) / 25) as u32,
        ops_per_txn: num(4) as u32,
        keys: num(5),
        read_per_mille: 500,
        seed: 42,
    };
    let format = ExportFormat::parse(&a[2]).expect("causim, dbcop or plume");
    let h = serial(&p);
    write_history(&h, format, std::fs::File::create(&a[1]).expect("create the file")).expect("write");
}
