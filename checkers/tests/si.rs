//! `--level si`: the classic snapshot-isolation litmus histories, each anomaly with its minimal
//! witness and explanation, with and without a declared version order.

mod common;

use causim_checkers::{Anomaly, Header, History, Level, Report, check};
use common::records;

/// The history of `text`; with `declared`, its header says each key's versions are in the order
/// of their values.
fn hist(text: &str, declared: bool) -> History {
    let mut header = Header::default();
    if declared {
        header.info.insert("version_order".into(), "\"values\"".into());
    }
    History::from_records(Some(&header), &records(text)).expect("a valid litmus history")
}

fn si(text: &str, declared: bool) -> Report {
    check(&hist(text, declared), Level::Si)
}

fn names(r: &Report) -> Vec<Anomaly> {
    r.violations.iter().map(|v| v.anomaly).collect()
}

#[test]
fn write_skew_passes() {
    let text = "c1: r x=_, r y=_, w x=1\nc2: r x=_, r y=_, w y=1";
    for declared in [false, true] {
        let r = si(text, declared);
        assert!(r.ok && r.complete, "{}", r.render_text());
    }
}

#[test]
fn lost_update_fails() {
    let text = "c1: r x=_, w x=1\nc2: r x=_, w x=2";
    for declared in [false, true] {
        let r = si(text, declared);
        assert_eq!(names(&r), [Anomaly::LostUpdate], "{}", r.render_text());
        assert_eq!(r.violations[0].transactions.len(), 2);
        println!("{}", r.render_text());
    }
}

#[test]
fn fractured_read_fails() {
    let text = "c1: w x=1, w y=1\nc2: r x=1, r y=_";
    for declared in [false, true] {
        let r = si(text, declared);
        assert_eq!(names(&r), [Anomaly::FracturedReadCO], "{}", r.render_text());
        println!("{}", r.render_text());
    }
}

#[test]
fn non_repeatable_read_fails() {
    let text = "c1: w x=1\nc2: w x=2\nc3: r x=1, r x=2";
    let r = si(text, false);
    assert!(names(&r).contains(&Anomaly::NonRepeatableRead), "{}", r.render_text());
}

#[test]
fn read_skew_fails() {
    // c3 saw y=1, written by c2 after it had read x=1; yet c3 read the initial x.
    let text = "c1: w x=1\nc2: r x=1, w y=1\nc3: r y=1, r x=_";
    for declared in [false, true] {
        let r = si(text, declared);
        assert_eq!(names(&r), [Anomaly::ReadSkew], "{}", r.render_text());
        println!("{}", r.render_text());
    }
}

#[test]
fn concurrent_writers_fail() {
    // c2 did not see c1 (it read the initial y), yet its x=2 is ordered after c1's x=1.
    let text = "c1: w x=1, w y=1\nc2: r y=_, w x=2";
    let r = si(text, true);
    assert_eq!(names(&r), [Anomaly::ConcurrentWrite], "{}", r.render_text());
    println!("{}", r.render_text());
    // Without the declared order, c2 may have committed first: SI.
    assert!(si(text, false).ok);
    // A reader that sees x=2 and y=1 leaves no order.
    let text = "c1: w x=1, w y=1\nc2: r y=_, w x=2\nc3: r x=2, r y=1";
    let r = si(text, false);
    assert_eq!(names(&r), [Anomaly::ConcurrentWrite], "{}", r.render_text());
    println!("{}", r.render_text());
}
