//! `causim-checkers`: consistency checking of key-value histories, with named anomalies,
//! minimal witnesses and plain-English explanations.
//!
//! ```
//! use causim_checkers::{check, read_history, Level};
//! let text = r#"{"format":"causim-history/1"}
//! {"id":0,"session":"c1","ops":[{"f":"w","key":"x","value":1}]}
//! {"id":1,"session":"c1","ops":[{"f":"w","key":"y","value":1}]}
//! {"id":2,"session":"c2","ops":[{"f":"r","key":"y","value":1}]}
//! {"id":3,"session":"c2","ops":[{"f":"r","key":"x","value":null}]}
//! "#;
//! let history = read_history(text.as_bytes(), None).unwrap();
//! let report = check(&history, Level::Ccv);
//! assert!(!report.ok);
//! assert_eq!(report.violations[0].anomaly.name(), "WriteCOInitRead");
//! println!("{}", report.render_text());
//! ```
//!
//! # What a violation means
//!
//! A violation at level L is a concrete pattern among the recorded operations that no execution
//! satisfying L can produce: every reported violation is real, given the history (the checks are
//! **sound**). For `well-formed`, `cc`, `ccv`, `rc`, `ra` and `tcc` the checks are also
//! **complete**: if none is reported, the history satisfies the level (POPL'17's
//! characterisation for differentiated histories, Plume's TAP theorems for RC/RA/TCC). The
//! session guarantees are checked exactly as the shapes in [`Level`]'s documentation define
//! them; `cm` is complete unless its work budget runs out, which the report states.
//! `si` is decided exactly in one pass when the history declares each key's version order, and
//! otherwise by a search bounded by `si_work_max` (no verdict beyond it; `src/si.rs`).
//! `linearizable` (Herlihy & Wing, per key) is decided exactly by search, key by key; a key
//! whose search exceeds `lin_steps_max` gets no verdict, which the report states too. In
//! list-append histories it judges each read by its list's last element (plus
//! IncompatibleOrder), so it is sound there but not complete. `strict-serializable` is the same
//! search over whole transactions (`src/sser.rs`), with the same budget.
//!
//! # What the checker cannot see
//!
//! * Reads-from is inferred from values, so written values must be unique per key; a history
//!   that repeats one is rejected as input, never guessed at.
//! * Reads of `failed` (unknown-outcome) transactions are not judged, and their writes count as
//!   possibly visible; `aborted` transactions' writes must never be read (AbortedRead), and
//!   their reads are not judged either.
//! * Operations whose outcome is unknown are never used to *order* anything except through the
//!   values others read from them.
//! * A read of a value no recorded write produced is reported as ThinAirRead, not as a cycle.
//! * Real-time order is checked only at `linearizable`, for keys whose operations are all
//!   single-operation transactions with an `invoke_ns`/`complete_ns` interval (other keys get no
//!   verdict, and the report says so), and at `strict-serializable`, for transactions with an
//!   interval; the causal levels allow stale reads across unrelated sessions. Write skew is
//!   reported at `strict-serializable` only; lost updates at `si` and `strict-serializable`.
//! * When the causal order itself is cyclic (CyclicCO), the checks that need a causal order are
//!   skipped and the report says so.
//! * Only the first `violations_max` violations get a witness; all are counted.

mod anomaly;
mod cache_free;
mod causal;
mod cm;
pub mod doc_tables;
mod exactly_once;
mod explain;
mod finding;
mod fn_order;
mod format;
mod fxhash;
mod graph;
mod history;
mod level;
mod lin;
mod lists;
mod plume_rc;
mod queue;
mod reach;
mod report;
mod session;
mod shared_log;
mod si;
mod sser;
mod story;
pub mod testgen;
mod wf;
mod witness_order;
mod written;

pub use anomaly::{Aliases, Anomaly, tap_name};
pub use format::{ExportFormat, detect_format, read_history, read_history_path, write_history};
pub use history::{Header, History, HistoryBuilder, InputFormat, Key, OpKind, OpRecord, Outcome, ParseError, TxnRecord, Value};
pub use level::Level;
pub use report::{EdgeKind, Explanation, HistorySummary, OpRef, Report, TxnRef, Violation, WitnessEdge};
pub use si::{VERSION_ORDER_FIELD, VERSION_ORDER_VALUES};

use finding::{Detail, Finding, Sink};
use graph::{Clocks, Gran, Units};
use wf::ReadClass;

/// Limits of one check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Violations listed in full, with witnesses (all are counted).
    pub violations_max: usize,
    /// Work budget of the causal-memory (`cm`) check, in elementary steps.
    pub cm_work_max: u64,
    /// Threads for the read-only phases (0: the available parallelism, at most 4). The report
    /// never depends on it.
    pub threads: usize,
    /// Memory for the vector clocks of units that only read, in 4-byte words. Beyond it they
    /// are recomputed while the reads are scanned (one sequential pass instead of a parallel
    /// one). Clocks of writes are always kept. The report never depends on it.
    pub clock_words_max: usize,
    /// Work budget of the `linearizable` search per key, in linearization attempts (and again
    /// for shrinking a failing key to its smallest window). A key that needs more gets no
    /// verdict: the report says so and is not `complete`.
    pub lin_steps_max: u64,
    /// Work budget of the `si` search for an order of writes (when the history does not
    /// declare one), in edges visited. Beyond it the report gives no verdict (not `complete`).
    pub si_work_max: u64,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            violations_max: 100,
            cm_work_max: 2_000_000_000,
            threads: 0,
            clock_words_max: 48 << 20,
            lin_steps_max: 10_000_000,
            si_work_max: 2_000_000_000,
        }
    }
}

/// Check `history` at `level` with default limits.
pub fn check(history: &History, level: Level) -> Report {
    check_with(history, level, &CheckOptions::default())
}

/// Check `history` at `level`.
pub fn check_with(history: &History, level: Level, options: &CheckOptions) -> Report {
    let h = history;
    if level == Level::SharedLog {
        return log_report(h, level, shared_log::check(h, options.violations_max));
    }
    if level == Level::Queue {
        return log_report(h, level, queue::check(h, options.violations_max));
    }
    if level == Level::ExactlyOnce {
        return log_report(h, level, exactly_once::check(h, options.violations_max));
    }
    if level == Level::LockSafety {
        return log_report(h, level, exactly_once::check_locks(h, options.violations_max));
    }
    let timing = std::env::var_os("CAUSIM_CHECK_TIMING").is_some();
    let mut clock = (std::time::Instant::now(), cpu_seconds());
    let mut lap = |what: &str| {
        if timing {
            let cpu = cpu_seconds();
            eprintln!("  {what}: {:.3} s wall, {:.2} s cpu", clock.0.elapsed().as_secs_f64(), cpu - clock.1);
            clock = (std::time::Instant::now(), cpu);
        }
    };
    let mut sink = Sink::new(options.violations_max);
    let wf = wf::analyze(h);
    well_formedness(h, &wf, level, &mut sink);
    let list_facts = h.lists.as_ref().map(|l| lists::analyze(h, &wf, l));
    if let Some(facts) = &list_facts {
        for f in facts.findings_at(level) {
            sink.push(f.clone());
        }
        sink.notes.push(format!(
            "list-append history: each read is a read of its list's last element; the order of appends of {} key(s) was read off their longest reads",
            facts.keys_ordered
        ));
        if level == Level::Linearizable {
            sink.notes.push(
                "linearizable judges each list read by its last element only: a read that misses an earlier append is not seen at this level"
                    .to_string(),
            );
        }
    }
    lap("well-formedness");
    let mut complete = true;
    if level == Level::Linearizable {
        complete = lin::check(h, &wf, options, &mut sink);
        lap("linearizability");
    } else if level == Level::StrictSerializable {
        complete = sser::check(h, &wf, options, &mut sink);
        lap("strict serializability");
    } else if level == Level::Si {
        let lists = list_facts.as_ref().map_or(&[][..], |f| &f.order[..]);
        complete = si::check(h, &wf, lists, options.si_work_max, &mut sink);
        lap("snapshot isolation");
    } else if level == Level::CacheFree {
        cache_free::check(h, &mut sink);
        lap("cache-free");
    } else if level != Level::WellFormed {
        let gran = if level.is_transactional() { Gran::Txn } else { Gran::Op };
        let units = Units::build(h, &wf, gran);
        let succ = units.successors();
        lap("units");
        let known = list_facts.as_ref().map_or_else(Vec::new, |f| known_order(h, &units, &f.order));
        // Most histories that satisfy cc, ccv or tcc can be shown to by exhibiting a write order,
        // without vector clocks; the exact check below names what is wrong otherwise.
        if matches!(level, Level::Cc | Level::Ccv | Level::Tcc) {
            let attempt = witness_order::prove(h, &wf, &units, &succ, &known, level);
            if timing {
                eprintln!("  witness order: {attempt:?}");
            }
            lap("witness order");
            if attempt.proved {
                return build_report(h, level, sink, complete);
            }
        }
        // The causal-memory check reads the clocks of reads directly: keep them all.
        let reader_words_max = if level == Level::Cm { usize::MAX } else { options.clock_words_max };
        let clocks = Clocks::compute(&units, &succ, reader_words_max);
        if timing && let Ok(c) = &clocks {
            eprintln!("  {} units, {} sessions, {} chains, {} clock entries", units.n, h.session_count(), c.chain_count(), c.entries());
        }
        lap("clocks");
        match clocks {
            Err(left) => {
                causal::report_co_cycles(h, &wf, &units, &succ, &left, &mut sink);
                sink.notes.push(format!(
                    "session order and reads-from are cyclic (CyclicCO), so there is no causal order: the other checks of {} were skipped",
                    level.name()
                ));
            }
            Ok(clocks) => {
                let cx = causal::Ctx {
                    h,
                    wf: &wf,
                    units: &units,
                    succ: &succ,
                    clocks: &clocks,
                    threads: threads(options.threads),
                    known: &known,
                };
                match level {
                    Level::ReadYourWrites | Level::MonotonicReads | Level::MonotonicWrites | Level::WritesFollowReads | Level::Session => {
                        session::check(&cx, level, &mut sink);
                    }
                    Level::Cc | Level::Ccv | Level::Cm => {
                        let stale = causal::check_ops(&cx, level == Level::Ccv, &mut sink);
                        if level == Level::Cm {
                            complete = cm::check(&cx, &stale, options.cm_work_max, &mut sink);
                        }
                    }
                    Level::Rc | Level::Ra | Level::Tcc => causal::check_txns(&cx, level, &mut sink),
                    Level::RcPlume => plume_rc::check(h, &wf, &mut sink),
                    Level::WellFormed
                    | Level::Linearizable
                    | Level::StrictSerializable
                    | Level::CacheFree
                    | Level::SharedLog
                    | Level::Queue
                    | Level::ExactlyOnce
                    | Level::LockSafety
                    | Level::Si => {
                        unreachable!("handled above")
                    }
                }
                lap("causal checks");
            }
        }
    }
    build_report(h, level, sink, complete)
}

/// Known write orders (list-append version orders) between units, as forced edges:
/// (unit of the first write, unit of the second, the read that shows the order).
fn known_order(h: &History, units: &Units, order: &[(u32, u32, u32)]) -> Vec<(u32, u32, u32)> {
    order
        .iter()
        .filter_map(|&(a, b, read)| {
            let (ua, ub) = (units.writer_unit(h, a), units.writer_unit(h, b));
            (ua != history::NONE && ub != history::NONE && ua != ub).then_some((ua, ub, read))
        })
        .collect()
}

fn well_formedness(h: &History, wf: &wf::Wf, level: Level, sink: &mut Sink) {
    let repeats = level.forbids(Anomaly::NonRepeatableRead);
    for (o, class) in wf.class.iter().enumerate() {
        let also = wf.also_repeats.get(&(o as u32));
        // Plume's checker compares a read with the nearest earlier operation on its key only:
        // after an own read, it calls the read non-repeatable, which its RC allows.
        // Only whether it read another transaction's intermediate value remains to judge.
        if level == Level::RcPlume && also.is_some_and(|a| a.1) {
            let w = h.rf[o];
            if *class == ReadClass::NotMyOwnWrite && w != history::RF_INIT && h.rf_txn[o] & history::WRITER_OVERWRITTEN != 0 {
                sink.push(Finding {
                    anomaly: Anomaly::IntermediateRead,
                    key: Some(h.ops[o].key),
                    read: Some(o as u32),
                    detail: Detail::Read,
                });
            }
            continue;
        }
        let anomaly = match class {
            ReadClass::ThinAir => Anomaly::ThinAirRead,
            ReadClass::Aborted => Anomaly::AbortedRead,
            ReadClass::Future => Anomaly::FutureRead,
            ReadClass::Sibling => Anomaly::SiblingWriteRead,
            ReadClass::NotMyOwnWrite => Anomaly::NotMyOwnWrite,
            ReadClass::NotMyLastWrite => Anomaly::NotMyLastWrite,
            ReadClass::Intermediate => Anomaly::IntermediateRead,
            ReadClass::NonRepeatable if level.forbids(Anomaly::NonRepeatableRead) => Anomaly::NonRepeatableRead,
            _ => continue,
        };
        let key = h.ops[o].key;
        let detail = match class {
            ReadClass::NonRepeatable => Detail::Repeat { first: wf.repeated[&(o as u32)] },
            _ => Detail::Read,
        };
        sink.push(Finding { anomaly, key: Some(key), read: Some(o as u32), detail });
        // A read that ignores its own write after reading the key is also non-repeatable.
        if let Some(&(first, _)) = also.filter(|_| repeats) {
            sink.push(Finding {
                anomaly: Anomaly::NonRepeatableRead,
                key: Some(key),
                read: Some(o as u32),
                detail: Detail::Repeat { first },
            });
        }
    }
}

fn build_report(h: &History, level: Level, sink: Sink, complete: bool) -> Report {
    let violations: Vec<Violation> = sink.kept.iter().map(|f| explain::violation(h, level, f)).collect();
    Report {
        level,
        level_title: level.title(),
        ok: sink.total == 0 && complete,
        complete,
        history: HistorySummary {
            format: h.format(),
            transactions: h.txn_count(),
            operations: h.op_count(),
            sessions: h.session_count(),
            keys: h.key_count(),
        },
        violation_count: sink.total,
        counts: sink.counts,
        violations,
        notes: sink.notes,
        source: None,
    }
}

/// The report of a level that judges log calls (`shared-log`, `queue`, `exactly-once`,
/// `lock-safety`).
fn log_report(h: &History, level: Level, out: shared_log::Outcomes) -> Report {
    Report {
        level,
        level_title: level.title(),
        ok: out.total == 0,
        complete: true,
        history: HistorySummary {
            format: h.format(),
            transactions: h.txn_count(),
            operations: h.op_count() + h.log.len(),
            sessions: h.session_count(),
            keys: h.key_count(),
        },
        violation_count: out.total,
        counts: out.counts,
        violations: out.violations,
        notes: out.notes,
        source: None,
    }
}

impl Report {
    /// Name the history's file in the text header.
    pub fn with_source(mut self, source: impl Into<String>) -> Report {
        self.source = Some(source.into());
        self
    }
}

/// CPU time of this process so far (user + system), from /proc (0 where unavailable). Used
/// by the optional phase timing (`CAUSIM_CHECK_TIMING=1`) and the benchmark.
pub fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which is parenthesised and may contain spaces).
    let rest = stat.rsplit_once(')').map_or("", |r| r.1);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

/// Threads for the read-only phases: `requested`, or (0) the available parallelism, at most 4.
pub(crate) fn threads(requested: usize) -> usize {
    if requested > 0 {
        return requested.min(64);
    }
    std::thread::available_parallelism().map_or(1, |p| p.get()).min(4)
}
