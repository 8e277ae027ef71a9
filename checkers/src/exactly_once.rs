//! The `exactly-once` level: workflows whose steps are made exactly-once by a shared log (BokiFlow,
//! Boki §5.1, after Beldi), judged from their step lines.
//!
//! **The history** (see `docs/history-format.md`): a step is one transaction holding its log
//! record's append (book: the database key, one tag: the step's), the read back of the step's
//! first record (`read_next` of that tag from 0), and the database's answer: a read of the
//! value the key held before the step's write, then, if the write took effect, the write.
//! Every instance of one step (re-executions, duplicates) shares its tag.
//!
//! **The promise** (digest §4.2): every step's database write takes effect once, with the
//! version of the step's first record, however often the step runs. The database accepts a
//! write only over a version below its own, so versions of a key only grow. Findings:
//!
//! - **DoubleEffect**: a write took effect although its step had already taken effect: the
//!   value it overwrote is the step's own (a crashed or duplicate instance's effect), or
//!   another line of the same step also took effect.
//! - **StaleEffect**: a write took effect over the effect of a step whose first record is
//!   later in the log (a version that went backwards: the stale write of a re-execution).
//!
//! **Invokes** (Fig. 6, lines 14–28): a callee's completion is a line holding its post-invoke
//! record's `append`, tagged `5`, the invoke's post tag (Beldi's `hash(ID, STEP, "post")`, one
//! per caller step and callee) and the callee's instance id, usually with the read back of the
//! post tag's first record (`read_next` from 0): the return value the caller takes. A line that
//! holds only that read is a caller that found the post record logged and did not invoke
//! again. One invoke must run one callee instance, however often its caller runs, and its
//! caller must take one return value: post records of one post tag from two callee ids, or
//! two lines taking different return values (the first record's data, or the line's own
//! record's when it did not read back), are a **DuplicateInvoke** (a fresh callee id runs the
//! callee's steps again as new steps, whose effects no version condition stops).
//!
//! **Locks** (Fig. 7): a lock is a chain of records on its key's book, each extending the
//! record named by its `prev`. A successful `tryLock` is a line holding its lock record's
//! `append`, tagged 3, `2^62 +` its holder and `2^63 +` its `prev` (`2^64 − 1`: the chain's
//! start); an `unlock` also carries tag 4. At most one holder may stand at any point of the
//! chain: two successful acquires by different holders that extend the same record, or an
//! acquire that extends another holder's acquire (the lock was still held), are a
//! **LockConflict**. The `lock-safety` level judges locks alone; `exactly-once` judges both.
//!
//! What it cannot see: an effect no line reports (an instance killed after its write) is
//! known only through the value the next write overwrote; a step no instance recorded
//! has no known first record, so a write over its effect is not judged for staleness.

use crate::anomaly::Anomaly;
use crate::history::{History, Outcome, Val};
use crate::level::Level;
use crate::report::EdgeKind;
use crate::shared_log::{Call, LogCall, Outcomes};
use crate::story::{self, Story};
use std::collections::BTreeMap;

/// A value in comparable form.
fn cmp(v: Val) -> (u8, i64) {
    match v {
        Val::Null => (0, 0),
        Val::Int(i) => (1, i),
        Val::Str(s) => (2, i64::from(s)),
    }
}

/// One step line.
struct StepLine {
    txn: u32,
    book: u32,
    tag: u64,
    /// The step's first record: seqnum and data.
    first: (u64, Val),
    /// The value the key held before the write, and the value written if it took effect.
    prev: Option<Val>,
    wrote: Option<Val>,
}

/// The lock tags (see the module doc).
const LOCK: u64 = 3;
const RELEASE: u64 = 4;
const HOLDER: u64 = 1 << 62;
const PREV: u64 = 1 << 63;
/// The first tag of a post-invoke record (see the module doc).
const POST: u64 = 5;

/// One line of an invoke: a callee's post record (`callee`: its id, `own`: the record's
/// seqnum), or a caller that found the post record logged; and the return value it took.
struct InvokeLine {
    txn: u32,
    callee: Option<u64>,
    own: Option<u64>,
    took: (u64, Val),
}

/// Judges the invokes of `h` into `out`: one callee instance and one return value per invoke.
fn invokes(h: &History, max: usize, out: &mut Outcomes) -> bool {
    // Post tags by book, then each line of each (book, post tag), in history order.
    let mut lines: BTreeMap<(u32, u64), Vec<InvokeLine>> = BTreeMap::new();
    let ok = |c: &LogCall| h.txns[c.txn as usize].outcome == Outcome::Ok;
    for c in h.log.iter().filter(|c| c.call == Call::Append && c.tags.len() == 3 && c.tags[0] == POST && ok(c)) {
        lines.entry((c.book, c.tags[1])).or_default();
    }
    if lines.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < h.log.len() {
        let t = h.log[i].txn;
        let calls: Vec<&LogCall> = h.log[i..].iter().take_while(|c| c.txn == t).collect();
        i += calls.len();
        let append = calls.iter().find(|c| c.call == Call::Append && c.tags.len() == 3 && c.tags[0] == POST);
        let tag = append.map_or_else(|| calls.first().and_then(|c| c.tags.first().copied()), |a| Some(a.tags[1]));
        let (Some(tag), Some(first)) = (tag, calls.first()) else { continue };
        let Some(group) = lines.get_mut(&(first.book, tag)) else { continue };
        if !ok(first) {
            continue;
        }
        let read = calls.iter().find(|c| c.call == Call::ReadNext && c.bound == 0 && c.tags == [tag]);
        let took = match (read, append) {
            (Some(r), _) if r.seqnum.is_some() => (r.seqnum.unwrap_or_default(), r.data),
            (_, Some(a)) => (a.seqnum.unwrap_or_default(), a.data),
            _ => continue,
        };
        group.push(InvokeLine { txn: t, callee: append.map(|a| a.tags[2]), own: append.and_then(|a| a.seqnum), took });
    }
    let text = |l: &InvokeLine| {
        let took = format!("took the return value {} (post record at seqnum {})", h.value(l.took.1), l.took.0);
        match (l.callee, l.own) {
            (Some(c), Some(s)) => format!("callee {c:#x} logged its post record at seqnum {s}, {took}"),
            _ => format!("the caller found the post record logged and {took}"),
        }
    };
    for ((book, tag), group) in &lines {
        let Some(e) = group.first() else { continue };
        let callee_of = |l: &InvokeLine| l.callee;
        let (rival, sentence, step, contradiction) = if let Some(l) =
            group.iter().find(|l| callee_of(l).is_some() && callee_of(e).is_some() && l.callee != e.callee)
        {
            (
                l,
                format!(
                    "the invoke ran its callee a second time, as a new instance ({:#x} after {:#x}).",
                    l.callee.unwrap_or_default(),
                    e.callee.unwrap_or_default()
                ),
                "T1 and T2 complete callees of one invoke (one caller step, one callee): their post records share its tag".to_string(),
                "A caller invokes under the id of the invoke's first pre-invoke record, which every execution reads back, so both callees have one id: a contradiction!",
            )
        } else if let Some(l) = group.iter().find(|l| l.took.1 != e.took.1) {
            (
                l,
                format!("the caller took a second return value for one invoke ({} after {}).", h.value(l.took.1), h.value(e.took.1)),
                "T1 and T2 take the return value of one invoke (one caller step, one callee), tagged".to_string(),
                "The return value is the data of the post tag's first record, which every read back finds: a contradiction!",
            )
        } else {
            continue;
        };
        let s = Story {
            anomaly: Anomaly::DuplicateInvoke,
            level: Level::ExactlyOnce,
            book: *book,
            named: vec![(e.txn, text(e)), (rival.txn, text(rival))],
            sentence,
            steps: vec![format!("{step} {tag:#x}.")],
            contradiction: contradiction.into(),
            edges: vec![(e.txn, rival.txn, EdgeKind::WriteOrder, "both complete one invoke")],
            read: None,
        };
        report(h, max, out, s);
    }
    true
}

/// Counts a finding and keeps it, rendered, among the first `max`.
fn report(h: &History, max: usize, out: &mut Outcomes, s: Story) {
    *out.counts.entry(s.anomaly).or_insert(0) += 1;
    out.total += 1;
    if out.violations.len() < max {
        out.violations.push(story::render(h, s));
    }
}

/// Checks lock safety alone.
pub(crate) fn check_locks(h: &History, max: usize) -> Outcomes {
    let mut out = Outcomes { counts: BTreeMap::new(), total: 0, violations: Vec::new(), notes: Vec::new() };
    if !locks(h, max, Level::LockSafety, &mut out) {
        out.notes.push("the history has no lock records; nothing to judge at lock-safety".into());
    }
    out
}

/// One lock record of a successful `tryLock` or an `unlock`.
struct LockRec {
    txn: u32,
    book: u32,
    seqnum: u64,
    holder: u64,
    prev: Option<u64>,
    release: bool,
}

/// Judges the lock records of `h` into `out`; false if there are none.
fn locks(h: &History, max: usize, level: Level, out: &mut Outcomes) -> bool {
    let mut recs: Vec<LockRec> = Vec::new();
    for c in &h.log {
        if c.call != Call::Append || !c.tags.contains(&LOCK) || h.txns[c.txn as usize].outcome != Outcome::Ok {
            continue;
        }
        let (Some(s), Some(&holder), Some(&prev)) =
            (c.seqnum, c.tags.iter().find(|&&t| t & PREV == 0 && t & HOLDER != 0), c.tags.iter().find(|&&t| t & PREV != 0))
        else {
            continue;
        };
        let prev = prev & !PREV;
        recs.push(LockRec {
            txn: c.txn,
            book: c.book,
            seqnum: s,
            holder: holder & !HOLDER,
            prev: (prev != PREV - 1).then_some(prev),
            release: c.tags.contains(&RELEASE),
        });
    }
    if recs.is_empty() {
        return false;
    }
    let at: BTreeMap<(u32, u64), usize> = recs.iter().enumerate().map(|(i, r)| ((r.book, r.seqnum), i)).collect();
    let mut extends: BTreeMap<(u32, Option<u64>), usize> = BTreeMap::new();
    let text = |r: &LockRec| {
        let what = if r.release { "unlock" } else { "tryLock" };
        let prev = r.prev.map_or("the chain's start".to_string(), |p| format!("seqnum {p}"));
        format!("{what}({}) by holder {:#x}: record at seqnum {}, prev {prev}", h.key(r.book), r.holder, r.seqnum)
    };
    for (i, r) in recs.iter().enumerate().filter(|(_, r)| !r.release) {
        // Another holder's acquire at the same chain point, or the acquire this one extends.
        let rival = match extends.get(&(r.book, r.prev)) {
            Some(&j) if recs[j].holder != r.holder => Some((j, "both extend the same point of the chain")),
            _ => r
                .prev
                .and_then(|p| at.get(&(r.book, p)))
                .copied()
                .filter(|&j| !recs[j].release && recs[j].holder != r.holder)
                .map(|j| (j, "it extends another holder's acquire")),
        };
        extends.entry((r.book, r.prev)).or_insert(i);
        let Some((j, why)) = rival else { continue };
        let e = &recs[j];
        let s = Story {
            anomaly: Anomaly::LockConflict,
            level,
            book: r.book,
            named: vec![(e.txn, text(e)), (r.txn, text(r))],
            sentence: format!("two instances held the lock of {} at once: {why}.", h.key(r.book)),
            steps: vec![
                "T1's tryLock succeeded: its record is the chain's tail after it.".into(),
                format!("T2's tryLock succeeded too, and {why}; no release by T1's holder lies between them in the chain."),
            ],
            contradiction:
                "A record extends the chain only if its prev is the tail, so one of them could not have been the holder: a contradiction!"
                    .into(),
            edges: vec![(e.txn, r.txn, EdgeKind::WriteOrder, "both claim the chain point")],
            read: None,
        };
        report(h, max, out, s);
    }
    true
}

pub(crate) fn check(h: &History, max: usize) -> Outcomes {
    let mut out = Outcomes { counts: BTreeMap::new(), total: 0, violations: Vec::new(), notes: Vec::new() };
    let has_locks = locks(h, max, Level::ExactlyOnce, &mut out) | invokes(h, max, &mut out);
    let mut steps: Vec<StepLine> = Vec::new();
    // Which step each value of a book belongs to (its records' data), and who wrote it.
    let mut step_of: BTreeMap<(u32, (u8, i64)), u64> = BTreeMap::new();
    let mut writer_of: BTreeMap<(u32, (u8, i64)), u32> = BTreeMap::new();
    let mut i = 0;
    while i < h.log.len() {
        let t = h.log[i].txn;
        let calls: Vec<usize> = (i..h.log.len()).take_while(|&j| h.log[j].txn == t).collect();
        i += calls.len();
        let txn = &h.txns[t as usize];
        let append = calls.iter().map(|&j| &h.log[j]).find(|c| c.call == Call::Append);
        let first = calls.iter().map(|&j| &h.log[j]).find(|c| c.call == Call::ReadNext && c.bound == 0);
        let (Some(a), Some(f)) = (append, first) else { continue };
        if a.tags.len() != 1 || f.tags.first() != a.tags.first() || a.book != f.book {
            continue;
        }
        step_of.insert((a.book, cmp(a.data)), a.tags[0]);
        if txn.outcome != Outcome::Ok {
            continue;
        }
        let Some(s1) = f.seqnum else { continue };
        step_of.insert((a.book, cmp(f.data)), a.tags[0]);
        let (mut prev, mut wrote) = (None, None);
        for o in txn.ops() {
            let op = &h.ops[o];
            if op.key != a.book {
                continue;
            }
            if op.is_read() && wrote.is_none() {
                prev = Some(op.val());
            } else if op.is_write() {
                wrote = Some(op.val());
            }
        }
        steps.push(StepLine { txn: t, book: a.book, tag: a.tags[0], first: (s1, f.data), prev, wrote });
    }
    for (t, txn) in h.txns.iter().enumerate() {
        for o in txn.ops() {
            if h.ops[o].is_write() {
                writer_of.entry((h.ops[o].key, cmp(h.ops[o].val()))).or_insert(t as u32);
            }
        }
    }
    if steps.is_empty() {
        if !has_locks {
            out.notes.push("the history has no workflow step lines; nothing to judge at exactly-once".into());
        }
        return out;
    }
    let first_of: BTreeMap<(u32, u64), u64> = steps.iter().map(|s| ((s.book, s.tag), s.first.0)).collect();
    let mut effect_of: BTreeMap<(u32, u64), usize> = BTreeMap::new();
    for (k, s) in steps.iter().enumerate() {
        let Some(v) = s.wrote else { continue };
        let key = h.key(s.book);
        let line = |s: &StepLine| {
            let effect = s.wrote.map_or("no effect".to_string(), |v| format!("wrote {}", h.value(v)));
            let before = s.prev.map_or(String::new(), |p| format!(" over {}", h.value(p)));
            format!("step {:#x} of {key}: first record at seqnum {}, {effect}{before}", s.tag, s.first.0)
        };
        if let Some(&j) = effect_of.get(&(s.book, s.tag)) {
            let e = &steps[j];
            report(
                h,
                max,
                &mut out,
                Story {
                    anomaly: Anomaly::DoubleEffect,
                    level: Level::ExactlyOnce,
                    book: s.book,
                    named: vec![(e.txn, line(e)), (s.txn, line(s))],
                    sentence: format!("the step's database write took effect a second time ({key}={}).", h.value(v)),
                    steps: vec![
                        format!("T1 and T2 run one step (tag {:#x}): both read back its first record, at seqnum {}.", s.tag, s.first.0),
                        "T1's write took effect.".into(),
                    ],
                    contradiction:
                        "T2's write carries the same version, which the database holds already, so its condition fails: a contradiction!"
                            .into(),
                    edges: vec![(e.txn, s.txn, EdgeKind::WriteOrder, "both are effects of one step")],
                    read: None,
                },
            );
            continue;
        }
        effect_of.insert((s.book, s.tag), k);
        let Some(p) = s.prev.filter(|p| *p != Val::Null) else { continue };
        let Some(&t2) = step_of.get(&(s.book, cmp(p))) else { continue };
        let before = writer_of.get(&(s.book, cmp(p))).copied();
        let mut named: Vec<(u32, String)> = before.map(|b| (b, format!("wrote {key}={}", h.value(p)))).into_iter().collect();
        named.push((s.txn, line(s)));
        let edges = before.map(|b| (b, s.txn, EdgeKind::WriteOrder, "the write overwrote it")).into_iter().collect();
        let last = format!("T{}", named.len());
        if t2 == s.tag {
            report(
                h,
                max,
                &mut out,
                Story {
                    anomaly: Anomaly::DoubleEffect,
                    level: Level::ExactlyOnce,
                    book: s.book,
                    named,
                    sentence: format!("the step's database write overwrote the step's own earlier effect ({key}={}).", h.value(p)),
                    steps: vec![format!(
                        "{key}={} is the data of a record of this same step (tag {:#x}): an earlier instance's effect.",
                        h.value(p),
                        s.tag
                    )],
                    contradiction: format!(
                        "{last}'s write carries the version of the step's first record, which the database already holds: its condition fails: a contradiction!"
                    ),
                    edges,
                    read: None,
                },
            );
        } else if let Some(&s2) = first_of.get(&(s.book, t2))
            && s2 > s.first.0
        {
            report(
                h,
                max,
                &mut out,
                Story {
                    anomaly: Anomaly::StaleEffect,
                    level: Level::ExactlyOnce,
                    book: s.book,
                    named,
                    sentence: format!(
                        "the step's database write overwrote {key}={}, the effect of a step whose first record is later.",
                        h.value(p)
                    ),
                    steps: vec![format!(
                        "The overwritten value belongs to step {t2:#x}, whose first record is at seqnum {s2}; this step's is at {}.",
                        s.first.0
                    )],
                    contradiction: format!(
                        "The database held version {s2} and {last}'s write carries {}: its condition fails: a contradiction!",
                        s.first.0
                    ),
                    edges,
                    read: None,
                },
            );
        }
    }
    out
}
