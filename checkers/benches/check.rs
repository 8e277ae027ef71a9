//! Checker benchmark: generated (seeded, serial) histories of 10 K, 100 K and 1 M
//! transactions of 20 operations, checked at `tcc`; plus `ccv` on a one-operation-per-
//! transaction history and the cost of reading the history from a `causim-history/1` file;
//! plus `causim check`'s whole path (read the file, check) at `tcc` and `cc` over 10^5 uniformly
//! chosen keys at 10 K, 100 K and 1 M transactions;
//! plus `linearizable` on real-time register histories (16 clients with overlapping intervals,
//! 25 K, 100 K and 400 K operations over 10^3 keys, and 100 K over 10 hot keys); plus
//! `shared-log` on generated Boki logs of 10^4, 10^5 and 10^6 log calls (`log_history`); plus `si`
//! on histories of a simulated snapshot-isolation store (`testgen::si_records`: 25 sessions, 8
//! operations per transaction, 10^4 keys) of 25 K, 100 K and 400 K transactions, with the version
//! order declared in the header and without it (searched), and 2.5 K transactions listed session
//! by session, searched without the help of file order.
//!
//! Run: `cargo bench -p causim-checkers` (add `-- --quick` for the 10 K and 100 K rows only, and
//! words to run only the cases whose names contain one of them: `-- lin`).
//! Each measurement runs in a fresh child process so that its peak memory (VmHWM from
//! /proc/self/status) is its own.

use causim_checkers::testgen::{GenParams, RegisterParams, register_records, serial, si_records, write_serial_jsonl};
use causim_checkers::{
    Header, History, Level, OpKind, Outcome, TxnRecord, VERSION_ORDER_FIELD, VERSION_ORDER_VALUES, Value, check, read_history_path,
};
use std::process::Command;
use std::time::Instant;

struct Case {
    name: &'static str,
    level: Level,
    txns: u64,
    ops: u32,
    from_file: bool,
    /// Key space; 0 means "about ten writes per key" (contended).
    keys: u64,
    /// `linearizable` rows: the longest operation, in ns (clients wait up to 500 ns between
    /// two), so the number of operations in flight at once.
    duration_ns: u64,
    /// `linearizable` rows: make one read, halfway, return an older value (the check must fail
    /// and shrink the key to a smallest failing window).
    broken: bool,
    /// `si` rows: leave the version order undeclared, so that the check searches for one.
    searched: bool,
    /// `si` rows: list the transactions session by session, so that file order is not commit
    /// order (session order is kept) and the search gets no help from it.
    grouped: bool,
}

/// A shared-log history of `calls` log calls in `causim-history/1` text: 256 functions (one
/// session each) over 1000 LogBooks with 4 tags, half appends, a quarter `readNext` from a
/// random seqnum, a quarter `checkTail`. Appends gather into the open metalog entry, which
/// closes (position + 1) every 8 appends or before a read that must see one of them; a read is
/// served at a random position between its function's own and the newest (so many reads are
/// stale, as Boki allows), and answers exactly from that prefix. Serially valid: it passes.
fn log_history(calls: u64) -> String {
    use std::fmt::Write;
    let mut rng = 42u64;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let (functions, books, tags) = (256u64, 1000u64, 4u64);
    let mut out = String::with_capacity(calls as usize * 130);
    out.push_str("{\"format\":\"causim-history/1\"}\n");
    // Per (book, tag) (tag 0: the whole book): (seqnum, position, data) in seqnum order.
    type Row = Vec<(u64, u64, u64)>;
    let mut rows: std::collections::BTreeMap<(u64, u64), Row> = Default::default();
    let mut function_pos = vec![0u64; functions as usize];
    let (mut closed, mut open_appends, mut seqnum) = (0u64, 0u64, 0u64);
    for id in 0..calls {
        let f = next(functions) as usize;
        let book = next(books);
        let roll = next(4);
        if roll < 2 {
            let tag = 1 + next(tags);
            let pos = closed + 1;
            for t in [0, tag] {
                rows.entry((book, t)).or_default().push((seqnum, pos, id));
            }
            writeln!(out, "{{\"id\":{id},\"session\":\"f{f}\",\"ops\":[{{\"f\":\"append\",\"book\":\"b{book}\",\"tags\":[{tag}],\"data\":{id},\"seqnum\":{seqnum},\"pos\":[0,{pos}]}}]}}").unwrap();
            function_pos[f] = pos;
            seqnum += 1;
            open_appends += 1;
            if open_appends == 8 {
                (closed, open_appends) = (closed + 1, 0);
            }
            continue;
        }
        if function_pos[f] > closed {
            (closed, open_appends) = (closed + 1, 0);
        }
        let served = function_pos[f] + next(closed - function_pos[f] + 1);
        function_pos[f] = served;
        let tag = next(tags + 1);
        let row = rows.get(&(book, tag)).map_or(&[][..], |r| &r[..r.partition_point(|x| x.1 <= served)]);
        let (call, bound, found) = if roll == 2 {
            let min = next(seqnum + 1);
            ("read_next", format!(",\"min\":{min}"), row.get(row.partition_point(|x| x.0 < min)))
        } else {
            ("check_tail", String::new(), row.last())
        };
        let (s, d) = found.map_or(("null".to_string(), "null".to_string()), |x| (x.0.to_string(), x.2.to_string()));
        writeln!(out, "{{\"id\":{id},\"session\":\"f{f}\",\"ops\":[{{\"f\":\"{call}\",\"book\":\"b{book}\",\"tag\":{tag}{bound},\"seqnum\":{s},\"data\":{d},\"pos\":[0,{served}]}}]}}").unwrap();
    }
    out
}

/// Make the first read after the middle that read a committed write return the value of the
/// committed write of its key two before that one (in invocation order).
fn break_one_read(records: &mut [TxnRecord]) {
    let is = |r: &TxnRecord, f: OpKind| r.ops[0].f == f && r.outcome == Outcome::Ok;
    for t in records.len() / 2..records.len() {
        let op = records[t].ops[0].clone();
        if !is(&records[t], OpKind::Read) || op.value == Value::Null {
            continue;
        }
        let writes: Vec<usize> = (0..t).filter(|u| is(&records[*u], OpKind::Write) && records[*u].ops[0].key == op.key).collect();
        if let Some(at) = writes.iter().position(|u| records[*u].ops[0].value == op.value)
            && at >= 2
        {
            records[t].ops[0].value = records[writes[at - 2]].ops[0].value.clone();
            return;
        }
    }
}

/// The real-time register workload of the `linearizable` rows: `txns` single operations.
fn register_params(c: &Case) -> RegisterParams {
    RegisterParams {
        clients: 16,
        ops: c.txns,
        keys: c.keys,
        read_per_mille: 500,
        failed_per_mille: 10,
        duration_ns: c.duration_ns,
        think_ns: 500,
        seed: 42,
    }
}

const SESSIONS: u32 = 25;

fn params(c: &Case) -> GenParams {
    GenParams {
        sessions: SESSIONS,
        txns_per_session: (c.txns / u64::from(SESSIONS)) as u32,
        ops_per_txn: c.ops,
        // By default about ten writes per key over the whole history: readers mostly see
        // recent writes of other sessions, so every read meets several chains. Plume's own
        // benchmark uses 10^9 keys instead, where almost every read sees the initial value.
        keys: if c.keys > 0 { c.keys } else { (c.txns * u64::from(c.ops) / 20).max(1) },
        read_per_mille: 500,
        seed: 42,
    }
}

fn cases(quick: bool) -> Vec<Case> {
    let case = |name, level, txns, ops, from_file, keys| Case {
        name,
        level,
        txns,
        ops,
        from_file,
        keys,
        duration_ns: 1_000,
        broken: false,
        searched: false,
        grouped: false,
    };
    let mut v = vec![
        case("tcc 10K x 20", Level::Tcc, 10_000, 20, false, 0),
        case("tcc 100K x 20", Level::Tcc, 100_000, 20, false, 0),
        case("lin 25K, 1e3 keys", Level::Linearizable, 25_000, 1, false, 1_000),
        case("lin 100K, 1e3 keys", Level::Linearizable, 100_000, 1, false, 1_000),
        // `causim check` on a file, as a user runs it (load + check), over 10^5 uniformly
        // chosen keys at every size (issue 23's setting); at 1 M transactions, below.
        case("file+tcc 10K, 1e5 keys", Level::Tcc, 10_000, 20, true, 100_000),
        case("file+tcc 100K, 1e5 keys", Level::Tcc, 100_000, 20, true, 100_000),
        case("file+cc 10K, 1e5 keys", Level::Cc, 10_000, 20, true, 100_000),
        case("file+cc 100K, 1e5 keys", Level::Cc, 100_000, 20, true, 100_000),
    ];
    if !quick {
        v.push(case("tcc 1M x 20", Level::Tcc, 1_000_000, 20, false, 0));
        v.push(case("tcc 1M x 20 1e9 keys", Level::Tcc, 1_000_000, 20, false, 1_000_000_000));
        v.push(case("ccv 1M x 1", Level::Ccv, 1_000_000, 1, false, 0));
        v.push(case("file+tcc 1M x 20", Level::Tcc, 1_000_000, 20, true, 0));
        v.push(case("file+tcc 1M, 1e5 keys", Level::Tcc, 1_000_000, 20, true, 100_000));
        v.push(case("file+cc 1M, 1e5 keys", Level::Cc, 1_000_000, 20, true, 100_000));
        v.push(case("lin 400K, 1e3 keys", Level::Linearizable, 400_000, 1, false, 1_000));
        v.push(case("lin 100K, 10 keys", Level::Linearizable, 100_000, 1, false, 10));
        // Operations 100 times longer than the pauses between them on one key: about 16
        // always in flight, so there is no quiescent point to split the search at.
        v.push(Case { duration_ns: 50_000, ..case("lin 100K, 1 key, long", Level::Linearizable, 100_000, 1, false, 1) });
        v.push(Case { duration_ns: 50_000, broken: true, ..case("lin ditto, 1 bad read", Level::Linearizable, 100_000, 1, false, 1) });
    }
    // Snapshot isolation: 1x, 4x, 16x, the version order declared, then searched for.
    let si_sizes: &[u64] = if quick { &[25_000, 100_000] } else { &[25_000, 100_000, 400_000] };
    for (&txns, name) in si_sizes.iter().zip(["si 25K x 8", "si 100K x 8", "si 400K x 8"]) {
        v.push(case(name, Level::Si, txns, 8, false, 10_000));
    }
    for (&txns, name) in si_sizes.iter().zip(["si 25K x 8, searched", "si 100K x 8, searched", "si 400K x 8, searched"]) {
        v.push(Case { searched: true, ..case(name, Level::Si, txns, 8, false, 10_000) });
    }
    if !quick {
        v.push(Case { searched: true, grouped: true, ..case("si 2.5K x 8, grouped", Level::Si, 2_500, 8, false, 1_000) });
    }
    v.push(case("log 10K", Level::SharedLog, 10_000, 1, false, 0));
    v.push(case("log 100K", Level::SharedLog, 100_000, 1, false, 0));
    if !quick {
        v.push(case("log 1M", Level::SharedLog, 1_000_000, 1, false, 0));
    }
    v
}

fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)).and_then(|n| n.parse().ok()).unwrap_or(0)
}

fn child(index: usize, quick: bool) {
    let case = &cases(quick)[index];
    let p = params(case);
    let (history, load_s, file_mb) = if case.from_file {
        let path = std::env::temp_dir().join(format!("causim-bench-{}-{}-{}.jsonl", case.txns, case.ops, p.keys));
        if !path.exists() {
            let f = std::fs::File::create(&path).expect("create the bench file");
            write_serial_jsonl(&p, f).expect("write the bench file");
        }
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
        let start = Instant::now();
        let h = read_history_path(&path, None).expect("the generated file parses");
        (h, start.elapsed().as_secs_f64(), size)
    } else if case.level == Level::SharedLog {
        let start = Instant::now();
        let text = log_history(case.txns);
        let h = causim_checkers::read_history(text.as_bytes(), None).expect("a generated log history parses");
        (h, start.elapsed().as_secs_f64(), 0.0)
    } else if case.level == Level::Si {
        let start = Instant::now();
        let mut records = si_records(&p);
        if case.grouped {
            records.sort_by(|a, b| a.session.cmp(&b.session));
        }
        let mut header = Header::default();
        if !case.searched {
            header.info.insert(VERSION_ORDER_FIELD.into(), format!("\"{VERSION_ORDER_VALUES}\""));
        }
        let h = History::from_records(Some(&header), &records).expect("a generated history is valid");
        (h, start.elapsed().as_secs_f64(), 0.0)
    } else if case.level == Level::Linearizable {
        let start = Instant::now();
        let mut records = register_records(&register_params(case));
        if case.broken {
            break_one_read(&mut records);
        }
        let h = History::from_records(None, &records).expect("a generated history is valid");
        (h, start.elapsed().as_secs_f64(), 0.0)
    } else {
        let start = Instant::now();
        let h = serial(&p);
        (h, start.elapsed().as_secs_f64(), 0.0)
    };
    let rss_before = status_kb("VmRSS:");
    // The peak so far is the load's; reset it (Linux: clear_refs 5) so that the peak after the
    // check is the check's own (with the history it holds). None if the kernel refuses.
    let load_peak = status_kb("VmHWM:");
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let start = Instant::now();
    let cpu = causim_checkers::cpu_seconds();
    let report = check(&history, case.level);
    let check_s = start.elapsed().as_secs_f64();
    let check_cpu = causim_checkers::cpu_seconds() - cpu;
    if case.broken {
        let window = report.violations.first().map_or(0, |v| v.window.len());
        assert!(!report.ok && report.complete && window > 0, "the broken read must be found");
        eprintln!("  ({}: a window of {window} operations)", report.violations[0].anomaly);
    } else {
        assert!(report.ok, "a generated history must pass {}: {:?} {:?}", case.level, report.notes, report.counts);
    }
    let hwm = status_kb("VmHWM:");
    let check_peak = if reset { format!("{:.0}", hwm as f64 / 1024.0) } else { "-".into() };
    let hwm = hwm.max(load_peak);
    // Log rows hold one log call per transaction (`op_count` counts key operations only).
    let op_count = if case.level == Level::SharedLog { history.txn_count() } else { history.op_count() };
    let ops = op_count as f64;
    println!(
        "{:<24} {:>9} {:>10} {:>8.2} {:>8.2} {:>8.2} {:>11.0} {:>8.0} {:>9} {:>8.0} {:>8.0}",
        case.name,
        history.txn_count(),
        op_count,
        load_s,
        check_s,
        check_cpu,
        ops / check_s,
        rss_before as f64 / 1024.0,
        check_peak,
        hwm as f64 / 1024.0,
        file_mb
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    if let Ok(i) = std::env::var("CAUSIM_BENCH_CHILD") {
        child(i.parse().expect("a case index"), quick);
        return;
    }
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| c.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    println!("causim-checkers benchmark: {cores} cores, {cpu}; serial histories, {SESSIONS} sessions, seed 42, 50% reads");
    println!("(lin rows: real-time register histories, 16 clients, one operation per transaction, 50% reads, 1% failed writes)");
    println!("(load = generate in memory, or parse the JSONL file for file+ rows; check = the level's check alone,");
    println!(" wall and CPU seconds (all threads); RSS before the check; chk peak = peak RSS during the check;");
    println!(" peak = process peak, including the load)");
    println!(
        "{:<24} {:>9} {:>10} {:>8} {:>8} {:>8} {:>11} {:>8} {:>9} {:>8} {:>8}",
        "case", "txns", "ops", "load s", "check s", "cpu s", "ops/s", "RSS MB", "chk peak", "peak MB", "file MB"
    );
    // Words other than options (cargo passes `--bench`) select cases by name.
    let words: Vec<&String> = args[1..].iter().filter(|a| !a.starts_with("--")).collect();
    let exe = std::env::current_exe().expect("the bench binary knows its path");
    for (i, case) in cases(quick).iter().enumerate() {
        if !words.is_empty() && !words.iter().any(|w| case.name.contains(w.as_str())) {
            continue;
        }
        let mut cmd = Command::new(&exe);
        cmd.env("CAUSIM_BENCH_CHILD", i.to_string());
        if quick {
            cmd.arg("--quick");
        }
        let status = cmd.status().expect("run a benchmark case");
        assert!(status.success(), "benchmark case {i} failed");
    }
}
