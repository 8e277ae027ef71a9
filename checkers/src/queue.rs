//! The `queue` level: queues built on a shared log (BokiQueue, Boki §5.3), where each shard is
//! a LogBook of push and pop records and a pop's result is decided by the records before it.
//!
//! **The history** (see `docs/history-format.md`): a push is an append with tag 1 whose data
//! is the message; a pop is one transaction holding its pop record's append (tag 2) and a read
//! of the shard's key (the book) whose value is the message it returned, `null` for EMPTY.
//! Messages are unique per shard, as append data are.
//!
//! **The promise** (digest §4.2): replay the shard in seqnum order; a pop at seqnum `p` takes
//! the oldest push ordered before `p` that no earlier pop took, or returns EMPTY iff there is
//! none. Each pop is judged against the state the *recorded* results of the earlier pops left,
//! so one wrong pop is reported once:
//!
//! - **DuplicateDelivery**: the message was already returned by an earlier pop.
//! - **SkippedMessage**: an older message pushed before the pop was still undelivered (FIFO
//!   broken; if nobody ever pops it, the message is lost).
//! - **WrongEmptyPop**: EMPTY although an undelivered message was pushed before the pop.
//! - **PhantomMessage**: no push put the message in the shard before the pop (never pushed,
//!   discarded by a seal, or ordered after the pop).
//!
//! What it cannot see: a pop whose record is in the log but whose function never reported (a
//! run cut short) consumed a message the history does not show, so a later pop that skips it
//! looks like a SkippedMessage; a push of unknown outcome (`failed`) has no seqnum, so a pop
//! that returns it is accepted without a FIFO judgement.

use crate::anomaly::Anomaly;
use crate::history::{History, Outcome, Val};
use crate::level::Level;
use crate::report::{EdgeKind, OpRef, Violation};
use crate::shared_log::{Call, Outcomes};
use crate::story;
use std::collections::{BTreeMap, BTreeSet};

/// The tag of push records, and of pop records.
pub const PUSH_TAG: u64 = 1;
pub const POP_TAG: u64 = 2;

/// A push: (seqnum, message, transaction).
type Push = (u64, Val, u32);

/// A pop: its seqnum, transaction, and the message it returned (`Val::Null`: EMPTY).
#[derive(Clone, Copy)]
struct Pop {
    seqnum: u64,
    txn: u32,
    got: Val,
    /// The index of the read operation that carries the result, within its transaction.
    read_index: u32,
}

/// A message in comparable form.
fn cmp(v: Val) -> (u8, i64) {
    match v {
        Val::Null => (0, 0),
        Val::Int(i) => (1, i),
        Val::Str(s) => (2, i64::from(s)),
    }
}

/// Checks the queues of `h`.
pub(crate) fn check(h: &History, max: usize) -> Outcomes {
    let mut out = Outcomes { counts: BTreeMap::new(), total: 0, violations: Vec::new(), notes: Vec::new() };
    let mut pushes: BTreeMap<u32, Vec<Push>> = BTreeMap::new();
    let mut pops: BTreeMap<u32, Vec<Pop>> = BTreeMap::new();
    for c in &h.log {
        if c.call != Call::Append || h.txns[c.txn as usize].outcome != Outcome::Ok {
            continue;
        }
        let Some(s) = c.seqnum else { continue };
        if c.tags.contains(&PUSH_TAG) {
            pushes.entry(c.book).or_default().push((s, c.data, c.txn));
        } else if c.tags.contains(&POP_TAG) {
            let t = &h.txns[c.txn as usize];
            let read = t.ops().enumerate().find(|&(_, o)| h.ops[o].is_read() && h.ops[o].key == c.book);
            match read {
                Some((i, o)) => {
                    pops.entry(c.book).or_default().push(Pop { seqnum: s, txn: c.txn, got: h.ops[o].val(), read_index: i as u32 })
                }
                None => out.notes.push(format!("queue: the pop in transaction {} has no read of its shard's result; skipped", t.id)),
            }
        }
    }
    // Pushes of unknown outcome (a killed function's, recorded as failed writes).
    let mut unknown: BTreeSet<(u32, (u8, i64))> = BTreeSet::new();
    for t in h.txns.iter().filter(|t| t.outcome == Outcome::Failed) {
        for o in t.ops() {
            if h.ops[o].is_write() {
                unknown.insert((h.ops[o].key, cmp(h.ops[o].val())));
            }
        }
    }
    if pushes.is_empty() && pops.is_empty() {
        out.notes.push("the history has no queue pushes or pops; nothing to judge at queue".into());
        return out;
    }
    let mut judge = Judge { h, max, out };
    for (book, mut shard_pops) in pops {
        let mut shard_pushes = pushes.remove(&book).unwrap_or_default();
        shard_pushes.sort_unstable_by_key(|p| p.0);
        shard_pops.sort_unstable_by_key(|p| p.seqnum);
        judge.shard(book, &shard_pushes, &shard_pops, &unknown);
    }
    judge.out
}

struct Judge<'h> {
    h: &'h History,
    max: usize,
    out: Outcomes,
}

impl Judge<'_> {
    fn shard(&mut self, book: u32, pushes: &[Push], pops: &[Pop], unknown: &BTreeSet<(u32, (u8, i64))>) {
        let by_message: BTreeMap<(u8, i64), usize> = pushes.iter().enumerate().map(|(i, p)| (cmp(p.1), i)).collect();
        // Which pop delivered each push, and the consumed pointer the pops so far leave.
        let mut delivered: BTreeMap<usize, usize> = BTreeMap::new();
        let mut consumed = 0u64;
        for (k, pop) in pops.iter().enumerate() {
            // The oldest push ordered before the pop and at or past the pointer, not delivered.
            let first = pushes.partition_point(|p| p.0 < consumed);
            let expected = (first..pushes.len()).take_while(|&i| pushes[i].0 < pop.seqnum).find(|i| !delivered.contains_key(i));
            if pop.got == Val::Null {
                if let Some(e) = expected {
                    self.report(book, Anomaly::WrongEmptyPop, pop, Some(&pushes[e]), None);
                }
                consumed = consumed.max(pop.seqnum);
                continue;
            }
            let Some(&i) = by_message.get(&cmp(pop.got)) else {
                if !unknown.contains(&(book, cmp(pop.got))) {
                    self.report(book, Anomaly::PhantomMessage, pop, None, None);
                }
                continue;
            };
            let push = &pushes[i];
            if push.0 > pop.seqnum {
                self.report(book, Anomaly::PhantomMessage, pop, Some(push), None);
                continue;
            }
            if let Some(&earlier) = delivered.get(&i) {
                self.report(book, Anomaly::DuplicateDelivery, pop, Some(push), Some(&pops[earlier]));
                continue;
            }
            if let Some(e) = expected
                && e != i
            {
                self.report(book, Anomaly::SkippedMessage, pop, Some(&pushes[e]), None);
            }
            delivered.insert(i, k);
            consumed = consumed.max(push.0 + 1);
        }
    }

    /// Reports `anomaly` at `pop`; `push` is the message in question (the one it skipped, the
    /// one it duplicated, the one ordered after it), `earlier` the pop that delivered it first.
    fn report(&mut self, book: u32, anomaly: Anomaly, pop: &Pop, push: Option<&Push>, earlier: Option<&Pop>) {
        *self.out.counts.entry(anomaly).or_insert(0) += 1;
        self.out.total += 1;
        if self.out.violations.len() < self.max {
            let v = self.render(book, anomaly, pop, push, earlier);
            self.out.violations.push(v);
        }
    }

    fn render(&self, book: u32, anomaly: Anomaly, pop: &Pop, push: Option<&Push>, earlier: Option<&Pop>) -> Violation {
        let h = self.h;
        let shard = h.key(book).clone();
        let msg = |v: Val| h.value(v);
        let pop_text = |p: &Pop| {
            let got = if p.got == Val::Null { "EMPTY".to_string() } else { format!("message {}", msg(p.got)) };
            format!("pop({shard}) with its record at seqnum {} → {got}", p.seqnum)
        };
        // (transaction, what it did), in the order the explanation names them.
        let mut named: Vec<(u32, String)> = Vec::new();
        if let Some(p) = push {
            named.push((p.2, format!("push({shard}, message {}) → seqnum {}", msg(p.1), p.0)));
        }
        if let Some(e) = earlier {
            named.push((e.txn, pop_text(e)));
        }
        named.push((pop.txn, pop_text(pop)));
        let last = format!("T{}", named.len());
        let id = |t: u32| h.txns[t as usize].id;
        let (sentence, steps, contradiction, edges) = match (anomaly, push, earlier) {
            (Anomaly::DuplicateDelivery, Some(p), Some(e)) => (
                format!("a pop returned message {} of shard {shard}, which T2 had already popped.", msg(p.1)),
                vec![
                    format!("T1's push is ordered at seqnum {}, before both pops (seqnums {} and {}).", p.0, e.seqnum, pop.seqnum),
                    "T2's pop, ordered first, took it; so the shard's state after T2 has consumed it.".to_string(),
                ],
                format!(
                    "{last}'s pop, replaying the log before seqnum {}, must see T2's pop and skip the message: a contradiction!",
                    pop.seqnum
                ),
                vec![
                    (p.2, e.txn, EdgeKind::ReadsFrom, "T2 popped T1's message"),
                    (e.txn, pop.txn, EdgeKind::WriteOrder, "T2's pop record precedes T3's in the log"),
                ],
            ),
            (Anomaly::SkippedMessage, Some(p), _) => (
                format!(
                    "a pop returned message {} of shard {shard} although the older message {} was undelivered.",
                    msg(pop.got),
                    msg(p.1)
                ),
                vec![format!(
                    "T1's message is ordered at seqnum {}, before the pop's record at {}, and no earlier pop returned it.",
                    p.0, pop.seqnum
                )],
                format!("A shard is FIFO in log order: {last} had to return T1's message first: a contradiction!"),
                vec![(p.2, pop.txn, EdgeKind::WriteOrder, "the push precedes the pop in the log")],
            ),
            (Anomaly::WrongEmptyPop, Some(p), _) => (
                format!("a pop found shard {shard} EMPTY although message {} was pushed before it and never delivered.", msg(p.1)),
                vec![format!(
                    "T1's message is ordered at seqnum {}, before the pop's record at {}, and no earlier pop returned it.",
                    p.0, pop.seqnum
                )],
                format!("Replaying the log before seqnum {}, {last} had to find T1's message: a contradiction!", pop.seqnum),
                vec![(p.2, pop.txn, EdgeKind::WriteOrder, "the push precedes the pop in the log")],
            ),
            (_, Some(p), _) => (
                format!("a pop returned message {} of shard {shard}, whose push is ordered after the pop.", msg(p.1)),
                vec![format!("T1's message is ordered at seqnum {}, after the pop's record at {}.", p.0, pop.seqnum)],
                "A pop decides from the log before its own record, which does not hold T1's push: a contradiction!".to_string(),
                vec![(pop.txn, p.2, EdgeKind::WriteOrder, "the pop precedes the push in the log")],
            ),
            _ => (
                format!("a pop returned message {} of shard {shard}, which no ordered push of the shard wrote.", msg(pop.got)),
                vec![format!("No successful push of shard {shard} has message {}.", msg(pop.got))],
                "A pop returns only messages pushed to its shard: a contradiction!".into(),
                vec![],
            ),
        };
        let read =
            OpRef { txn: id(pop.txn), index: pop.read_index, f: crate::history::OpKind::Read, key: shard.clone(), value: h.value(pop.got) };
        story::render(
            h,
            story::Story { anomaly, level: Level::Queue, book, named, sentence, steps, contradiction, edges, read: Some(read) },
        )
    }
}
