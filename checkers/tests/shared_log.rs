//! The `shared-log` level: one small history per anomaly, the staleness Boki allows, input
//! errors, and the README's table of its anomalies.

mod common;

use causim_checkers::{Anomaly, Level, check, read_history};

const HEADER: &str = "{\"format\":\"causim-history/1\"}\n";

fn anomalies(lines: &str) -> Vec<String> {
    let text = format!("{HEADER}{lines}");
    let h = read_history(text.as_bytes(), None).unwrap_or_else(|e| panic!("{e}"));
    let report = check(&h, Level::SharedLog);
    assert_eq!(report.ok, report.violation_count == 0);
    for v in &report.violations {
        assert!(!v.explanation.contradiction.is_empty() && !v.sentence.is_empty(), "{v:?}");
        assert!(v.forbidden_by.contains(&Level::SharedLog));
    }
    report.counts.keys().map(|a| a.name().to_string()).collect()
}

fn append(id: u32, session: &str, data: u32, tags: &str, seqnum: u32, pos: u32) -> String {
    format!(
        "{{\"id\":{id},\"session\":\"{session}\",\"ops\":[{{\"f\":\"append\",\"book\":\"b\",\"tags\":[{tags}],\"data\":{data},\"seqnum\":{seqnum},\"pos\":[0,{pos}]}}]}}\n"
    )
}

fn read(id: u32, session: &str, f: &str, tag: u32, result: Option<(u32, u32)>, pos: Option<u32>) -> String {
    let (s, d) = result.map_or(("null".to_string(), "null".to_string()), |(s, d)| (s.to_string(), d.to_string()));
    let pos = pos.map(|p| format!(",\"pos\":[0,{p}]")).unwrap_or_default();
    format!(
        "{{\"id\":{id},\"session\":\"{session}\",\"ops\":[{{\"f\":\"{f}\",\"book\":\"b\",\"tag\":{tag},\"seqnum\":{s},\"data\":{d}{pos}}}]}}\n"
    )
}

#[test]
fn a_correct_log_passes() {
    let h = [
        append(0, "a", 1, "1", 0, 1),
        append(1, "c", 2, "2", 1, 1),
        read(2, "a", "read_next", 2, Some((1, 2)), Some(1)),
        read(3, "c", "check_tail", 0, Some((1, 2)), Some(1)),
        read(4, "c", "check_tail", 1, Some((0, 1)), Some(2)),
    ]
    .concat();
    assert_eq!(anomalies(&h), Vec::<String>::new());
}

#[test]
fn a_read_of_an_append_a_seal_discarded_is_a_phantom_record() {
    // Seal safety: the append failed (aborted, no seqnum), yet its record is read.
    let failed =
        "{\"id\":0,\"session\":\"a\",\"outcome\":\"aborted\",\"ops\":[{\"f\":\"append\",\"book\":\"b\",\"tags\":[1],\"data\":1}]}\n";
    let h = [failed.to_string(), read(1, "c", "check_tail", 1, Some((0, 1)), Some(1))].concat();
    assert_eq!(anomalies(&h), ["PhantomRecord"]);
    let text = format!("{HEADER}{h}");
    let report = check(&read_history(text.as_bytes(), None).unwrap(), Level::SharedLog);
    assert!(report.violations[0].sentence.contains("discarded by a seal"), "{}", report.violations[0].sentence);
    // Without the read, a failed append is just a failed append.
    assert_eq!(anomalies(failed), Vec::<String>::new());
}

#[test]
fn a_stale_tail_for_an_unrelated_function_is_allowed() {
    // S4: G checks the tail after F's append completed, at an index that has not seen it.
    let h = [append(0, "F", 1, "1", 0, 1), read(1, "G", "check_tail", 1, None, Some(0))].concat();
    assert_eq!(anomalies(&h), Vec::<String>::new());
}

#[test]
fn the_order_anomalies_are_named() {
    let dup = [append(0, "a", 1, "1", 5, 1), append(1, "c", 2, "1", 5, 1)].concat();
    assert_eq!(anomalies(&dup), ["DuplicateSeqnum"]);
    let moved = [append(0, "a", 1, "1", 5, 1), read(1, "c", "check_tail", 0, Some((6, 1)), None)].concat();
    assert_eq!(anomalies(&moved), ["OrderDisagreement"]);
    // A record ordered at position 2 holds a smaller seqnum than one ordered at position 1.
    let inverted = [append(0, "a", 1, "1", 9, 1), append(1, "c", 2, "1", 3, 2)].concat();
    assert_eq!(anomalies(&inverted), ["OrderDisagreement"]);
    let phantom = [append(0, "a", 1, "1", 0, 1), read(1, "c", "check_tail", 0, Some((0, 7)), Some(1))].concat();
    assert_eq!(anomalies(&phantom), ["PhantomRecord"]);
    let lost = [
        append(0, "a", 1, "1", 0, 1),
        "{\"id\":1,\"session\":\"c\",\"ops\":[{\"f\":\"check_tail\",\"book\":\"b\",\"seqnum\":0,\"data\":null,\"pos\":[0,1]}]}\n".into(),
    ]
    .concat();
    assert_eq!(anomalies(&lost), ["LostRecord"]);
}

#[test]
fn reads_are_judged_against_the_prefix_that_served_them() {
    let empty = [append(0, "a", 1, "1", 0, 1), read(1, "c", "read_next", 1, None, Some(1))].concat();
    assert_eq!(anomalies(&empty), ["IncorrectLogRead"]);
    let skipped =
        [append(0, "a", 1, "1", 0, 1), append(1, "a", 2, "1", 1, 2), read(2, "c", "read_next", 1, Some((1, 2)), Some(2))].concat();
    assert_eq!(anomalies(&skipped), ["IncorrectLogRead"]);
    let outside =
        [append(0, "a", 1, "1", 0, 1), append(1, "a", 2, "1", 1, 2), read(2, "c", "check_tail", 1, Some((1, 2)), Some(1))].concat();
    assert_eq!(anomalies(&outside), ["IncorrectLogRead"]);
    let untagged = [append(0, "a", 1, "1", 0, 1), read(1, "c", "read_next", 3, Some((0, 1)), Some(1))].concat();
    assert_eq!(anomalies(&untagged), ["IncorrectLogRead"]);
}

fn trim(id: u32, session: &str, point: u32, pos: u32) -> String {
    format!("{{\"id\":{id},\"session\":\"{session}\",\"ops\":[{{\"f\":\"trim\",\"book\":\"b\",\"seqnum\":{point},\"pos\":[0,{pos}]}}]}}\n")
}

#[test]
fn a_trim_deletes_the_records_below_its_point_from_every_prefix_at_or_past_it() {
    // Records 0, 1, 2 ordered at position 1; a trim below seqnum 2 ordered at position 2.
    let log = [append(0, "a", 1, "1", 0, 1), append(1, "a", 2, "1", 1, 1), append(2, "a", 3, "1", 2, 1), trim(3, "g", 2, 2)].concat();
    let with = |reads: &[String]| anomalies(&format!("{log}{}", reads.concat()));
    // Below the trim's position the records are still there; at or past it, readNext from 0
    // returns the first record at or above the trim point (the index rows below it are gone).
    assert_eq!(with(&[read(4, "c", "read_next", 1, Some((0, 1)), Some(1))]), Vec::<String>::new());
    assert_eq!(with(&[read(4, "c", "read_next", 1, Some((2, 3)), Some(2))]), Vec::<String>::new());
    // The trimming function reads past its trim; a function that saw record 0 at position 1
    // then reads record 2 at position 2: neither misses anything.
    assert_eq!(with(&[read(4, "g", "read_next", 0, Some((2, 3)), Some(2))]), Vec::<String>::new());
    let seen_then_trimmed = [read(4, "c", "read_next", 1, Some((0, 1)), Some(1)), read(5, "c", "read_next", 1, Some((2, 3)), Some(2))];
    assert_eq!(with(&seen_then_trimmed), Vec::<String>::new());
    // readPrev below the trim point finds nothing; the tail is still there.
    let prev_below = "{\"id\":4,\"session\":\"c\",\"ops\":[{\"f\":\"read_prev\",\"book\":\"b\",\"tag\":1,\"max\":1,\"seqnum\":null,\"data\":null,\"pos\":[0,2]}]}\n";
    assert_eq!(with(&[prev_below.to_string()]), Vec::<String>::new());
    assert_eq!(with(&[read(4, "c", "check_tail", 1, Some((2, 3)), Some(2))]), Vec::<String>::new());
    // A trimmed record returned from a prefix that holds the trim, and EMPTY where the record
    // above the trim point is held, are incorrect reads.
    assert_eq!(with(&[read(4, "c", "read_next", 1, Some((0, 1)), Some(2))]), ["IncorrectLogRead"]);
    assert_eq!(with(&[read(4, "c", "read_next", 1, None, Some(2))]), ["IncorrectLogRead"]);
    let text = format!("{HEADER}{log}{}", read(4, "c", "read_next", 1, Some((0, 1)), Some(2)));
    let report = check(&read_history(text.as_bytes(), None).unwrap(), Level::SharedLog);
    let v = &report.violations[0];
    assert!(v.sentence.contains("a trim in its prefix had deleted"), "{}", v.sentence);
    assert!(format!("{v:?}").contains("trim(b, below seqnum 2) at 0:2"), "{v:?}");
    // A trim that failed (never ordered) deletes nothing.
    let failed = log.replace("\"session\":\"g\"", "\"session\":\"g\",\"outcome\":\"aborted\"");
    assert_eq!(anomalies(&format!("{failed}{}", read(4, "c", "read_next", 1, Some((0, 1)), Some(2)))), Vec::<String>::new());
}

#[test]
fn the_session_guarantees_are_named_after_who_reached_the_record() {
    // Read-your-appends: the function's own append, then EMPTY from an index behind it.
    let own = [append(0, "a", 1, "1", 0, 1), read(1, "a", "read_next", 1, None, Some(0))].concat();
    assert_eq!(anomalies(&own), ["MissedOwnAppend"]);
    // Monotonic reads: the function saw the record at position 1, then an index at 0.
    let mono =
        [append(0, "w", 1, "1", 0, 1), read(1, "r", "check_tail", 1, Some((0, 1)), Some(1)), read(2, "r", "check_tail", 1, None, Some(0))]
            .concat();
    assert_eq!(anomalies(&mono), ["NonMonotonicLogRead"]);
    // Inheritance within a chain session: fn 1 misses what fn 0 appended.
    let chain = "{\"id\":0,\"session\":\"p\",\"fn\":0,\"ops\":[{\"f\":\"append\",\"book\":\"b\",\"tags\":[7],\"data\":1,\"seqnum\":0,\"pos\":[0,1]}]}\n\
                 {\"id\":1,\"session\":\"p\",\"fn\":1,\"ops\":[{\"f\":\"read_next\",\"book\":\"b\",\"tag\":7,\"min\":0,\"seqnum\":null,\"data\":null,\"pos\":[0,0]}]}\n";
    assert_eq!(anomalies(chain), ["LostInheritance"]);
    // And across an `after` link of a fan-out.
    let fan = "{\"id\":0,\"session\":\"w/f0\",\"ops\":[{\"f\":\"append\",\"book\":\"b\",\"tags\":[7],\"data\":1,\"seqnum\":0,\"pos\":[0,1]}]}\n\
               {\"id\":1,\"session\":\"w/f1\",\"after\":[0],\"ops\":[{\"f\":\"check_tail\",\"book\":\"b\",\"tag\":7,\"seqnum\":null,\"data\":null}]}\n";
    assert_eq!(anomalies(fan), ["LostInheritance"]);
    // Without positions the session checks still see the miss.
    let unpositioned = "{\"id\":0,\"session\":\"a\",\"ops\":[{\"f\":\"append\",\"book\":\"b\",\"tags\":[1],\"data\":1,\"seqnum\":0,\"pos\":[0,1]}]}\n\
                        {\"id\":1,\"session\":\"a\",\"ops\":[{\"f\":\"check_tail\",\"book\":\"b\",\"tag\":1,\"seqnum\":null,\"data\":null}]}\n";
    assert_eq!(anomalies(unpositioned), ["MissedOwnAppend"]);
}

#[test]
fn a_failed_append_may_be_read_and_its_seqnum_is_learnt_from_the_reads() {
    let h = "{\"id\":0,\"session\":\"a\",\"outcome\":\"failed\",\"ops\":[{\"f\":\"w\",\"key\":\"b\",\"value\":1}]}\n\
             {\"id\":1,\"session\":\"c\",\"ops\":[{\"f\":\"check_tail\",\"book\":\"b\",\"seqnum\":4,\"data\":1,\"pos\":[0,1]}]}\n\
             {\"id\":2,\"session\":\"d\",\"ops\":[{\"f\":\"check_tail\",\"book\":\"b\",\"seqnum\":5,\"data\":1,\"pos\":[0,1]}]}\n";
    assert_eq!(anomalies(h), ["OrderDisagreement"]);
}

#[test]
fn key_value_levels_ignore_log_calls_and_shared_log_ignores_key_value_histories() {
    let log = format!("{HEADER}{}", append(0, "a", 1, "1", 0, 1));
    let h = read_history(log.as_bytes(), None).unwrap();
    assert!(check(&h, Level::Ccv).ok);
    let kv = format!("{HEADER}{{\"id\":0,\"session\":\"a\",\"ops\":[{{\"f\":\"w\",\"key\":\"x\",\"value\":1}}]}}\n");
    let report = check(&read_history(kv.as_bytes(), None).unwrap(), Level::SharedLog);
    assert!(report.ok && report.notes[0].contains("no shared-log calls"));
}

#[test]
fn bad_log_calls_are_input_errors_naming_the_field() {
    for (op, expected) in [
        ("{\"f\":\"append\",\"tags\":[1],\"data\":1}", "ops[0].book: missing field `book`"),
        ("{\"f\":\"append\",\"book\":\"b\",\"tags\":[-1],\"data\":1}", "ops[0].tags: expected an array of non-negative integers"),
        ("{\"f\":\"read_next\",\"book\":\"b\",\"pos\":[0]}", "ops[0].pos: expected [term, position]"),
        ("{\"f\":\"append\",\"book\":\"b\",\"tags\":[1]}", "an append's `data` must not be null"),
        ("{\"f\":\"scan\",\"book\":\"b\"}", "(or a log call: append, read_next, read_prev, check_tail, trim)"),
        ("{\"f\":\"trim\",\"book\":\"b\",\"pos\":[0,1]}", "a trim needs its trim point, `seqnum`"),
    ] {
        let text = format!("{HEADER}{{\"id\":0,\"session\":\"a\",\"ops\":[{op}]}}\n");
        let err = read_history(text.as_bytes(), None).unwrap_err();
        assert_eq!(err.line, Some(2), "{op}");
        assert!(err.problem.contains(expected), "{op}: {}", err.problem);
    }
}

#[test]
fn every_log_anomaly_has_a_litmus_history_here_and_parses_by_name() {
    let source = include_str!("shared_log.rs");
    for a in Anomaly::LOG {
        assert!(source.contains(&format!("[\"{}\"]", a.name())), "no history here exhibits {a}");
        assert_eq!(Anomaly::parse(a.name()), Some(a));
    }
    assert_eq!(Level::parse("shared-log"), Some(Level::SharedLog));
}

/// Regenerate with `CAUSIM_BLESS=1 cargo test --release -p causim-checkers --test shared_log`.
#[test]
fn readme_log_anomaly_table_is_current() {
    common::readme_section("log-anomaly-table", &causim_checkers::doc_tables::log_anomaly_table());
}

/// The anomalies `level` finds in `lines` (a causim history without its header).
fn found_at(level: Level, lines: &str) -> Vec<String> {
    let text = format!("{HEADER}{lines}");
    let report = check(&read_history(text.as_bytes(), None).unwrap_or_else(|e| panic!("{e}")), level);
    for v in &report.violations {
        assert!(!v.explanation.contradiction.is_empty() && !v.sentence.is_empty(), "{v:?}");
        assert!(v.forbidden_by.contains(&level));
    }
    report.counts.keys().map(|a| a.name().to_string()).collect()
}

/// A BokiQueue push of `message` to shard `q`, ordered at `seqnum`.
fn push(id: u32, message: u32, seqnum: u32) -> String {
    format!(
        "{{\"id\":{id},\"session\":\"p\",\"ops\":[{{\"f\":\"append\",\"book\":\"q\",\"tags\":[1],\"data\":{message},\"seqnum\":{seqnum}}}]}}\n"
    )
}

/// A BokiQueue pop of shard `q` whose record is at `seqnum`, returning `got` (None: EMPTY).
fn pop(id: u32, seqnum: u32, got: Option<u32>) -> String {
    let got = got.map_or("null".to_string(), |g| g.to_string());
    format!(
        "{{\"id\":{id},\"session\":\"c\",\"ops\":[{{\"f\":\"append\",\"book\":\"q\",\"tags\":[2],\"data\":{},\"seqnum\":{seqnum}}},{{\"f\":\"r\",\"key\":\"q\",\"value\":{got}}}]}}\n",
        1000 + id
    )
}

#[test]
fn queue_pops_return_the_oldest_undelivered_push_before_their_record() {
    // Pushes 1 and 2 at seqnums 0 and 2; pops at 1, 3, 4, and one at 5 before push 3 at 6.
    let fifo = [push(0, 1, 0), pop(1, 1, Some(1)), push(2, 2, 2), pop(3, 3, Some(2)), pop(4, 4, None), pop(5, 5, None), push(6, 3, 6)];
    assert_eq!(found_at(Level::Queue, &fifo.concat()), Vec::<String>::new());
    assert_eq!(found_at(Level::Queue, &[push(0, 1, 0), pop(1, 1, Some(1)), pop(2, 2, Some(1))].concat()), ["DuplicateDelivery"]);
    assert_eq!(found_at(Level::Queue, &[push(0, 1, 0), push(1, 2, 1), pop(2, 2, Some(2))].concat()), ["SkippedMessage"]);
    assert_eq!(found_at(Level::Queue, &[push(0, 1, 0), pop(1, 1, None)].concat()), ["WrongEmptyPop"]);
    // A push ordered after the pop's record is not the pop's to take, nor is a message never pushed.
    assert_eq!(found_at(Level::Queue, &[pop(0, 0, Some(1)), push(1, 1, 1)].concat()), ["PhantomMessage"]);
    assert_eq!(found_at(Level::Queue, &[push(0, 1, 0), pop(1, 1, Some(7))].concat()), ["PhantomMessage"]);
    assert_eq!(Level::parse("queue"), Some(Level::Queue));
}

/// A BokiFlow step line: its record (`data`, at `seqnum`) on book `x` with tag `tag`, the
/// step's first record, the value `x` held, and the value written if the write took effect.
fn step(id: u32, session: &str, tag: u32, own: (u32, u32), first: (u32, u32), prev: Option<u32>, wrote: Option<u32>) -> String {
    let prev = prev.map_or("null".to_string(), |p| p.to_string());
    let wrote = wrote.map(|w| format!(",{{\"f\":\"w\",\"key\":\"x\",\"value\":{w}}}")).unwrap_or_default();
    format!(
        "{{\"id\":{id},\"session\":\"{session}\",\"ops\":[{{\"f\":\"append\",\"book\":\"x\",\"tags\":[{tag}],\"data\":{},\"seqnum\":{}}},{{\"f\":\"read_next\",\"book\":\"x\",\"tag\":{tag},\"min\":0,\"data\":{},\"seqnum\":{}}},{{\"f\":\"r\",\"key\":\"x\",\"value\":{prev}}}{wrote}]}}\n",
        own.0, own.1, first.0, first.1
    )
}

#[test]
fn exactly_once_steps_take_effect_once_and_versions_only_grow() {
    // A step run twice (re-execution): the second finds the first's record, and its write is
    // rejected; a later step (tag 9, first record at seqnum 5) overwrites x.
    let once = [
        step(0, "w", 7, (1, 0), (1, 0), None, Some(1)),
        step(1, "w#2", 7, (2, 3), (1, 0), Some(1), None),
        step(2, "v", 9, (3, 5), (3, 5), Some(1), Some(3)),
    ];
    assert_eq!(found_at(Level::ExactlyOnce, &once.concat()), Vec::<String>::new());
    // The re-execution's write takes effect over the step's own first effect.
    let again = [step(0, "w", 7, (1, 0), (1, 0), None, Some(1)), step(1, "w#2", 7, (2, 3), (1, 0), Some(1), Some(2))];
    assert_eq!(found_at(Level::ExactlyOnce, &again.concat()), ["DoubleEffect"]);
    // The first instance's line is missing (killed after its write): the overwritten value
    // is still the data of the step's first record.
    assert_eq!(found_at(Level::ExactlyOnce, &step(1, "w#2", 7, (2, 3), (1, 0), Some(1), Some(2))), ["DoubleEffect"]);
    // A late re-execution of step 7 (first record at 0) overwrites step 9's effect (first at 5).
    let stale = [step(0, "v", 9, (3, 5), (3, 5), None, Some(3)), step(1, "w", 7, (1, 0), (1, 0), Some(3), Some(1))];
    assert_eq!(found_at(Level::ExactlyOnce, &stale.concat()), ["StaleEffect"]);
    assert_eq!(Level::parse("exactly-once"), Some(Level::ExactlyOnce));
}

/// A BokiFlow lock record's line: `release` or a successful tryLock by `holder`, at `seqnum`,
/// extending `prev` (None: the chain's start).
fn lock(id: u32, holder: u64, seqnum: u32, prev: Option<u64>, release: bool) -> String {
    let mut tags = vec![3u64];
    if release {
        tags.push(4);
    }
    tags.push(1 << 62 | holder);
    tags.push(1 << 63 | prev.unwrap_or((1 << 63) - 1));
    let tags: Vec<String> = tags.iter().map(u64::to_string).collect();
    format!(
        "{{\"id\":{id},\"session\":\"h{holder}\",\"ops\":[{{\"f\":\"append\",\"book\":\"x\",\"tags\":[{}],\"data\":{},\"seqnum\":{seqnum}}}]}}\n",
        tags.join(","),
        100 + id
    )
}

#[test]
fn lock_chains_have_one_holder_at_each_point() {
    // Fig. 7b: a acquires from the start, releases; d acquires from a's release.
    let chain = [lock(0, 1, 0, None, false), lock(1, 1, 2, Some(0), true), lock(2, 4, 3, Some(2), false)];
    assert_eq!(found_at(Level::LockSafety, &chain.concat()), Vec::<String>::new());
    // Two holders extend the chain's start, or one extends the other's acquire.
    assert_eq!(found_at(Level::LockSafety, &[lock(0, 1, 0, None, false), lock(1, 2, 1, None, false)].concat()), ["LockConflict"]);
    assert_eq!(found_at(Level::ExactlyOnce, &[lock(0, 1, 0, None, false), lock(1, 2, 1, Some(0), false)].concat()), ["LockConflict"]);
    // One holder twice (a re-execution's re-entrant acquire) is no conflict.
    assert_eq!(found_at(Level::LockSafety, &[lock(0, 1, 0, None, false), lock(1, 1, 1, None, false)].concat()), Vec::<String>::new());
    assert_eq!(Level::parse("lock-safety"), Some(Level::LockSafety));
}

/// A BokiFlow callee's post-invoke line on book `p`: its record (tags 5, `post`, `callee`; data
/// `data` at `seqnum`) and, if `first` is given, the read back of the post tag's first record.
fn post(id: u32, post: u64, callee: u64, (data, seqnum): (u32, u32), first: Option<(u32, u32)>) -> String {
    let read = first.map_or(String::new(), |(d, s)| {
        format!(",{{\"f\":\"read_next\",\"book\":\"p\",\"tag\":{post},\"min\":0,\"data\":{d},\"seqnum\":{s}}}")
    });
    format!(
        "{{\"id\":{id},\"session\":\"c{id}\",\"ops\":[{{\"f\":\"append\",\"book\":\"p\",\"tags\":[5,{post},{callee}],\"data\":{data},\"seqnum\":{seqnum}}}{read}]}}\n"
    )
}

/// A caller that found the post record logged: the read back alone.
fn post_found(id: u32, post: u64, (data, seqnum): (u32, u32)) -> String {
    format!(
        "{{\"id\":{id},\"session\":\"c{id}\",\"ops\":[{{\"f\":\"read_next\",\"book\":\"p\",\"tag\":{post},\"min\":0,\"data\":{data},\"seqnum\":{seqnum}}}]}}\n"
    )
}

#[test]
fn exactly_once_invokes_run_one_callee_and_return_one_value() {
    // One callee (id 77) completes twice (a duplicate, a re-execution cut off before its post
    // record was read back by the caller) and a re-executed caller finds the post record: one
    // callee id, one return value (the first record's data, 1).
    let once = [post(0, 41, 77, (1, 3), Some((1, 3))), post(1, 41, 77, (2, 6), Some((1, 3))), post_found(2, 41, (1, 3))];
    assert_eq!(found_at(Level::ExactlyOnce, &once.concat()), Vec::<String>::new());
    // Another invoke (post tag 43) has its own callee: no conflict with tag 41's.
    let two_invokes = [post(0, 41, 77, (1, 3), Some((1, 3))), post(1, 43, 78, (2, 6), Some((2, 6)))];
    assert_eq!(found_at(Level::ExactlyOnce, &two_invokes.concat()), Vec::<String>::new());
    // A re-executed caller invoked a fresh callee id (88): its steps ran again as new steps.
    let fresh = [post(0, 41, 77, (1, 3), Some((1, 3))), post(1, 41, 88, (2, 6), Some((1, 3)))];
    assert_eq!(found_at(Level::ExactlyOnce, &fresh.concat()), ["DuplicateInvoke"]);
    // One callee id, but a completion took its own return value rather than the first record's.
    let second_value = [post(0, 41, 77, (1, 3), Some((1, 3))), post(1, 41, 77, (2, 6), None)];
    assert_eq!(found_at(Level::ExactlyOnce, &second_value.concat()), ["DuplicateInvoke"]);
    let found_other = [post(0, 41, 77, (1, 3), Some((1, 3))), post_found(1, 41, (2, 6))];
    assert_eq!(found_at(Level::ExactlyOnce, &found_other.concat()), ["DuplicateInvoke"]);
}
