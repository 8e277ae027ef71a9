//! Print the README's anomaly tables: `cargo run --release -p causim-checkers --example doc_tables`.
fn main() {
    println!("{}", causim_checkers::doc_tables::anomaly_table());
    println!("{}", causim_checkers::doc_tables::forbids_matrix());
}
