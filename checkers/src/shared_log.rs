//! The `shared-log` level: histories of LogBook calls (Boki's `logAppend`, `logReadNext`,
//! `logReadPrev`, `logCheckTail`; see `docs/history-format.md`), judged against what a shared
//! log with per-function metalog positions promises.
//!
//! A record is identified by its book and data (data are unique per book). Each call carries
//! the metalog position `(term, position)` it was served at: an append, the position that
//! ordered its record; a read, the version of the index that answered. A record is in the
//! prefix at position `P` when its append's position is at most `P` (terms compare first).
//!
//! The checks, each a named anomaly with the calls that show it:
//!
//! - **One order.** Two records with one seqnum (DuplicateSeqnum); one record seen at two
//!   seqnums, one seqnum naming two records, or a record ordered by a later metalog entry
//!   holding a smaller seqnum than one ordered earlier (OrderDisagreement); a read of a record
//!   no append wrote, or whose append failed as never ordered (PhantomRecord: seal safety), or
//!   of an ordered seqnum whose data is gone (LostRecord).
//! - **Reads against their prefix** (IncorrectLogRead): `readNext(min, tag)` must return the
//!   smallest matching seqnum ≥ `min` among the records of the prefix that served it, or EMPTY
//!   iff there is none; `readPrev` symmetrically; and never a record outside that prefix.
//! - **Sessions.** A function's position is the highest position of the calls before it: its
//!   own, and (inherited) its ancestors' in the workflow. A read must not miss a record of the
//!   prefix at that position: MissedOwnAppend when the record is the function's own earlier
//!   append, NonMonotonicLogRead when the function itself had reached it, LostInheritance
//!   when only an ancestor had. A miss the read's own served prefix already explains is
//!   reported once, as IncorrectLogRead.
//!
//! - **Trims** (§4.4: a trim is a metalog command that deletes index rows). A trim served at
//!   position `P` removes its book's records with seqnums below its trim point from every
//!   prefix at or past `P`: a `readNext` whose bound lies below the point returns the first
//!   record at or above it (or EMPTY), a `readPrev` below it returns EMPTY, and a read that
//!   returns a trimmed record is an IncorrectLogRead with the trim as witness.
//!
//! What it does not flag (Boki allows it): a read by an *unrelated* function that misses a
//! record appended earlier in real time (a stale tail, §4.3 S4); an index that served a read
//! below the caller's position without the answer showing it. Failed appends (unknown
//! outcome) may be read; their seqnums are learnt from the reads. The check assumes every
//! append of the history's books is in the history.

use crate::anomaly::Anomaly;
use crate::history::{History, NONE, Outcome, Val};
use crate::level::Level;
use crate::report::{EdgeKind, Explanation, OpRef, TxnRef, Violation, WitnessEdge};
use crate::story;
use std::collections::BTreeMap;

/// Which LogBook call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Call {
    Append,
    ReadNext,
    /// `logReadPrev`; `logCheckTail` when the bound is `u64::MAX`.
    ReadPrev,
    /// `logTrim(bound)`: the book's records with seqnums below `bound` are gone from every
    /// prefix at or past the call's position.
    Trim,
}

/// One log call of a history.
#[derive(Clone, Debug)]
pub(crate) struct LogCall {
    /// Its transaction (index).
    pub txn: u32,
    pub call: Call,
    /// The book (a key index).
    pub book: u32,
    /// An append's tags, or a read's one tag (0: every record of the book); none for a trim.
    pub tags: Vec<u64>,
    /// A read's bound (`min` or `max`), a trim's trim point; 0 for an append.
    pub bound: u64,
    /// An append's seqnum, or the seqnum a read found (`None`: EMPTY).
    pub seqnum: Option<u64>,
    /// An append's data, or the data of the record a read found.
    pub data: Val,
    pub pos: Option<(u64, u64)>,
    /// The function (`fn`) of its transaction's line, if given.
    pub function: Option<i64>,
}

type Pos = (u64, u64);
/// The highest position reached, and the call that reached it.
type Reached = Option<(Pos, usize)>;
/// A positioned record in a row: `(seqnum, position, append call)`.
type Placed = (u64, Pos, usize);
/// A record: its book and its data (comparable form).
type Rec = (u32, (u8, i64));

fn rec(c: &LogCall) -> Rec {
    let v = match c.data {
        Val::Null => (0, 0),
        Val::Int(i) => (1, i),
        Val::Str(s) => (2, s as i64),
    };
    (c.book, v)
}

/// One violation before it is rendered: the calls involved (in the order the explanation
/// names them), the witness edges between them, and the words.
struct Found {
    anomaly: Anomaly,
    calls: Vec<usize>,
    edges: Vec<(usize, usize, EdgeKind, String)>,
    sentence: String,
    steps: Vec<String>,
    contradiction: String,
}

/// The outcome of the check: counts of every anomaly, the first `max` in full, and notes.
pub(crate) struct Outcomes {
    pub counts: BTreeMap<Anomaly, u64>,
    pub total: u64,
    pub violations: Vec<Violation>,
    pub notes: Vec<String>,
}

struct Checker<'h> {
    h: &'h History,
    max: usize,
    out: Outcomes,
    /// Reads already reported for what they returned (not judged again).
    flagged: Vec<bool>,
}

/// Checks the log calls of `h`.
pub(crate) fn check(h: &History, max: usize) -> Outcomes {
    let mut c = Checker {
        h,
        max,
        out: Outcomes { counts: BTreeMap::new(), total: 0, violations: Vec::new(), notes: Vec::new() },
        flagged: vec![false; h.log.len()],
    };
    if h.log.is_empty() {
        c.out.notes.push("the history has no shared-log calls; nothing to judge at shared-log".into());
        return c.out;
    }
    let order = c.order();
    let rows = Rows::build(h, &order);
    c.reads_against_prefix(&order, &rows);
    c.sessions(&order, &rows);
    c.out
}

/// What the whole history says about the order: the seqnum of every record it shows one for.
struct Order {
    /// Record → (seqnum, the call that showed it).
    seqnum_of: BTreeMap<Rec, (u64, usize)>,
    /// Append call of each record (ok or failed appends).
    append_of: BTreeMap<Rec, usize>,
    /// Seqnum order agrees with position order (then prefixes are seqnum prefixes per row).
    monotone: bool,
}

impl Checker<'_> {
    fn ok(&self, i: usize) -> bool {
        self.h.txns[self.h.log[i].txn as usize].outcome == Outcome::Ok
    }

    fn is_read(&self, i: usize) -> bool {
        matches!(self.h.log[i].call, Call::ReadNext | Call::ReadPrev)
    }

    fn report(&mut self, f: Found) {
        *self.out.counts.entry(f.anomaly).or_insert(0) += 1;
        self.out.total += 1;
        if self.out.violations.len() < self.max {
            let v = self.render(f);
            self.out.violations.push(v);
        }
    }

    /// Seqnums: appends' and reads' agree, one seqnum per record and one record per seqnum.
    fn order(&mut self) -> Order {
        let h = self.h;
        let (mut append_of, mut discarded) = (BTreeMap::new(), BTreeMap::new());
        for (i, c) in h.log.iter().enumerate() {
            if c.call != Call::Append {
                continue;
            }
            // An aborted append was never ordered (in Boki: a seal discarded it).
            let into = if h.txns[c.txn as usize].outcome == Outcome::Aborted { &mut discarded } else { &mut append_of };
            into.entry(rec(c)).or_insert(i);
        }
        // Writes of failed transactions are appends a function never reported (the engine
        // records them so; `docs/history-format.md`): their records may be read.
        let mut unreported = std::collections::BTreeSet::new();
        for t in &h.txns {
            if t.outcome == Outcome::Failed {
                for o in t.ops() {
                    let op = &h.ops[o];
                    if op.is_write() {
                        let c = LogCall {
                            txn: 0,
                            call: Call::Append,
                            book: op.key,
                            tags: vec![],
                            bound: 0,
                            seqnum: None,
                            data: op.val(),
                            pos: None,
                            function: None,
                        };
                        unreported.insert(rec(&c));
                    }
                }
            }
        }
        let mut seqnum_of: BTreeMap<Rec, (u64, usize)> = BTreeMap::new();
        let mut record_at: BTreeMap<u64, (Rec, usize)> = BTreeMap::new();
        for (i, c) in h.log.iter().enumerate() {
            if c.call != Call::Append || !self.ok(i) {
                continue;
            }
            let Some(s) = c.seqnum else { continue };
            if let Some(&(other, j)) = record_at.get(&s)
                && other != rec(c)
            {
                self.report(self.duplicate(j, i, s));
                continue;
            }
            record_at.insert(s, (rec(c), i));
            seqnum_of.insert(rec(c), (s, i));
        }
        for i in 0..h.log.len() {
            let c = &h.log[i];
            if !self.is_read(i) || !self.ok(i) {
                continue;
            }
            let Some(s) = c.seqnum else { continue };
            if c.data == Val::Null {
                self.flagged[i] = true;
                let f = self.lost(i, s, record_at.get(&s).map(|r| r.1));
                self.report(f);
                continue;
            }
            let r = rec(c);
            if !append_of.contains_key(&r) && !unreported.contains(&r) {
                self.flagged[i] = true;
                let f = self.phantom(i, discarded.get(&r).copied());
                self.report(f);
                continue;
            }
            if let Some(&(s2, j)) = seqnum_of.get(&r)
                && s2 != s
            {
                self.flagged[i] = true;
                let f = self.disagree(j, i, "the same record", s2, s);
                self.report(f);
                continue;
            }
            if let Some(&(r2, j)) = record_at.get(&s)
                && r2 != r
            {
                self.flagged[i] = true;
                let f = self.disagree(j, i, "the same seqnum", s, s);
                self.report(f);
                continue;
            }
            seqnum_of.entry(r).or_insert((s, i));
            record_at.entry(s).or_insert((r, i));
        }
        // A record ordered by a later metalog entry must not get a smaller seqnum.
        let mut placed: Vec<Placed> = h
            .log
            .iter()
            .enumerate()
            .filter(|(i, c)| c.call == Call::Append && self.ok(*i))
            .filter_map(|(i, c)| Some((c.seqnum?, c.pos?, i)))
            .collect();
        placed.sort_unstable();
        placed.dedup_by_key(|p| p.0);
        let mut monotone = true;
        for w in placed.windows(2) {
            let ((_, pa, a), (_, pb, b)) = (w[0], w[1]);
            if pa > pb {
                monotone = false;
                let f = self.inverted(a, b);
                self.report(f);
            }
        }
        Order { seqnum_of, append_of, monotone }
    }

    /// Every read with a served position returns what that prefix holds.
    fn reads_against_prefix(&mut self, order: &Order, rows: &Rows) {
        let h = self.h;
        for i in 0..h.log.len() {
            let c = &h.log[i];
            if !self.is_read(i) || !self.ok(i) || self.flagged[i] {
                continue;
            }
            let Some(p) = c.pos else { continue };
            let expected = rows.answer(h, c, p, order.monotone);
            let trimmed = rows.trim_point(c.book, p);
            let problem = match c.seqnum {
                Some(s) if trimmed.is_some_and(|(t, _)| s < t) => {
                    Some((trimmed.map(|x| x.1), "returned a record a trim in its prefix had deleted"))
                }
                Some(s) => {
                    let append = order.append_of.get(&rec(c)).copied();
                    let outside = append.and_then(|a| h.log[a].pos).is_some_and(|ap| ap > p);
                    let untagged = append.is_some_and(|a| c.tags[0] != 0 && !h.log[a].tags.contains(&c.tags[0]));
                    let out_of_bound = match c.call {
                        Call::ReadNext => s < c.bound,
                        _ => s > c.bound,
                    };
                    let skipped = expected.filter(|&(es, _)| match c.call {
                        Call::ReadNext => es < s,
                        _ => es > s,
                    });
                    if outside {
                        Some((append, "returned a record its prefix does not hold: its append was ordered later"))
                    } else if untagged {
                        Some((append, "returned a record without the tag asked for"))
                    } else if out_of_bound {
                        Some((append, "returned a seqnum beyond its bound"))
                    } else {
                        skipped.map(|(_, a)| (Some(a), "skipped a matching record its prefix holds"))
                    }
                }
                None => expected.map(|(_, a)| (Some(a), "returned EMPTY although its prefix holds a matching record")),
            };
            if let Some((witness, what)) = problem {
                self.flagged[i] = true;
                let f = self.incorrect(i, witness, what);
                self.report(f);
            }
        }
    }

    /// Read-your-appends, monotonic reads and parent→child inheritance, from the positions each
    /// function reached before each read.
    fn sessions(&mut self, order: &Order, rows: &Rows) {
        let h = self.h;
        let mut calls_of: Vec<Vec<usize>> = vec![Vec::new(); h.txns.len()];
        for (i, c) in h.log.iter().enumerate() {
            calls_of[c.txn as usize].push(i);
        }
        let function = |t: usize| calls_of[t].first().and_then(|&i| h.log[i].function);
        // Per transaction, the highest position before it: (all, same function), each with
        // the call that reached it.
        let mut past: Vec<(Reached, Reached)> = vec![(None, None); h.txns.len()];
        let mut last_of_session: Vec<u32> = vec![NONE; h.sessions.len()];
        let max = |a: Reached, b: Reached| match (a, b) {
            (Some(x), Some(y)) => Some(if y.0 > x.0 { y } else { x }),
            (x, None) => x,
            (None, y) => y,
        };
        for t in 0..h.txns.len() {
            let session = h.txns[t].session as usize;
            let mut preds: Vec<usize> = h.after_of(t).collect();
            if last_of_session[session] != NONE {
                preds.push(last_of_session[session] as usize);
            }
            last_of_session[session] = t as u32;
            let (mut all, mut same) = (None, None);
            for p in preds {
                let reached = past[p].0;
                let own = self.reached_in(&calls_of[p]);
                all = max(all, max(reached, own));
                if h.txns[p].session == h.txns[t].session && function(p) == function(t) {
                    same = max(same, max(past[p].1, own));
                }
            }
            past[t] = (all, same);
            // Calls within one transaction, in order.
            for &i in &calls_of[t] {
                let c = &h.log[i];
                if self.is_read(i) && self.ok(i) && !self.flagged[i] {
                    self.judge_session_read(i, all, same, order, rows);
                }
                if self.ok(i)
                    && let Some(p) = c.pos
                {
                    all = max(all, Some((p, i)));
                    same = max(same, Some((p, i)));
                }
            }
        }
    }

    fn reached_in(&self, calls: &[usize]) -> Reached {
        calls.iter().filter(|&&i| self.ok(i)).filter_map(|&i| Some((self.h.log[i].pos?, i))).max_by_key(|x| x.0)
    }

    fn judge_session_read(&mut self, i: usize, all: Reached, same: Reached, order: &Order, rows: &Rows) {
        let h = self.h;
        let c = &h.log[i];
        let Some((q, _)) = all else { return };
        let Some((e, a)) = rows.answer(h, c, q, order.monotone) else { return };
        let missed = match (c.call, c.seqnum) {
            (_, None) => true,
            (Call::ReadNext, Some(s)) => s > e,
            (_, Some(s)) => s < e,
        };
        if !missed {
            return;
        }
        let record_pos = h.log[a].pos.expect("rows hold positioned records");
        if c.pos.is_some_and(|p| record_pos <= p) {
            return; // the served prefix holds it: reported as IncorrectLogRead
        }
        let same_function = |j: usize| {
            let (tj, ti) = (&h.txns[h.log[j].txn as usize], &h.txns[c.txn as usize]);
            tj.session == ti.session && h.log[j].function == c.function && h.log[j].txn <= c.txn && j < i
        };
        let f = if same_function(a) {
            self.session_miss(Anomaly::MissedOwnAppend, i, a, a)
        } else if let Some((fq, w)) = same
            && fq >= record_pos
        {
            self.session_miss(Anomaly::NonMonotonicLogRead, i, w, a)
        } else {
            let (_, w) = all.expect("checked above");
            self.session_miss(Anomaly::LostInheritance, i, w, a)
        };
        self.flagged[i] = true;
        self.report(f);
    }

    // -----------------------------------------------------------------------------------------
    // Words

    fn call_text(&self, i: usize) -> String {
        let h = self.h;
        let c = &h.log[i];
        let book = h.key(c.book);
        let at = |p: Option<Pos>| p.map(|(t, p)| format!(" at {t}:{p}")).unwrap_or_default();
        let data = h.value(c.data);
        match c.call {
            Call::Append => {
                let tags: Vec<String> = c.tags.iter().map(u64::to_string).collect();
                let got = c.seqnum.map(|s| format!(" → seqnum {s}")).unwrap_or_else(|| " → no seqnum".into());
                format!("append({book}, data {data}, tags [{}]){got}{}", tags.join(","), at(c.pos))
            }
            Call::Trim => format!("trim({book}, below seqnum {}){}", c.bound, at(c.pos)),
            _ => {
                let name = match c.call {
                    Call::ReadNext => format!("readNext({book}, tag {}, min {})", c.tags[0], c.bound),
                    _ if c.bound == u64::MAX => format!("checkTail({book}, tag {})", c.tags[0]),
                    _ => format!("readPrev({book}, tag {}, max {})", c.tags[0], c.bound),
                };
                let got = match c.seqnum {
                    Some(s) if c.data == Val::Null => format!(" → seqnum {s}, record lost"),
                    Some(s) => format!(" → seqnum {s} (data {data})"),
                    None => " → EMPTY".into(),
                };
                let served = c.pos.map(|(t, p)| format!(", served at {t}:{p}")).unwrap_or_default();
                format!("{name}{got}{served}")
            }
        }
    }

    fn duplicate(&self, a: usize, b: usize, s: u64) -> Found {
        Found {
            anomaly: Anomaly::DuplicateSeqnum,
            calls: vec![a, b],
            edges: vec![],
            sentence: format!("two different records were both given seqnum {s}."),
            steps: vec![format!("T1 and T2 append different records; both got seqnum {s}.")],
            contradiction: "A seqnum names one position of one total order, so two records cannot share it: a contradiction!".into(),
        }
    }

    fn lost(&self, r: usize, s: u64, append: Option<usize>) -> Found {
        let calls = append.map_or_else(|| vec![r], |a| vec![a, r]);
        let edges = append.map_or_else(Vec::new, |a| vec![(a, r, EdgeKind::ReadsFrom, format!("the index named seqnum {s}"))]);
        Found {
            anomaly: Anomaly::LostRecord,
            calls,
            edges,
            sentence: format!("a read found seqnum {s} in the index, but the storage replica it asked had no record for it."),
            steps: vec![format!("The read's index ordered seqnum {s}, so its record was ordered.")],
            contradiction: "An ordered record is stored on every replica of its shard before the metalog orders it, so none can be missing: a contradiction!".into(),
        }
    }

    fn phantom(&self, r: usize, discarded: Option<usize>) -> Found {
        if let Some(a) = discarded {
            return Found {
                anomaly: Anomaly::PhantomRecord,
                calls: vec![a, r],
                edges: vec![(a, r, EdgeKind::ReadsFrom, "the discarded append's record".into())],
                sentence: "a read returned the record of an append that failed as never ordered (discarded by a seal).".into(),
                steps: vec!["T1's append was aborted: its record was never ordered.".into(), "T2 read that record from the log.".into()],
                contradiction: "A record is ordered in exactly one term or its append fails, never both: a contradiction!".into(),
            };
        }
        Found {
            anomaly: Anomaly::PhantomRecord,
            calls: vec![r],
            edges: vec![],
            sentence: "a read returned a record that no append of the history wrote.".into(),
            steps: vec!["No append of the book wrote the data the read returned.".into()],
            contradiction: "Every record of a log was appended by someone: a contradiction!".into(),
        }
    }

    fn disagree(&self, first: usize, second: usize, what: &str, s1: u64, s2: u64) -> Found {
        let because = format!("{what}, seen twice");
        let steps = if s1 != s2 {
            vec![format!("T1 shows the record at seqnum {s1}; T2 shows it at seqnum {s2}.")]
        } else {
            vec![format!("T1 and T2 show different records at seqnum {s1}.")]
        };
        Found {
            anomaly: Anomaly::OrderDisagreement,
            calls: vec![first, second],
            edges: vec![(first, second, EdgeKind::ReadsFrom, because)],
            sentence: format!("two calls disagree on {what}'s place in the log."),
            steps,
            contradiction: "Every reader must see one total order of the log's records: a contradiction!".into(),
        }
    }

    fn inverted(&self, a: usize, b: usize) -> Found {
        Found {
            anomaly: Anomaly::OrderDisagreement,
            calls: vec![a, b],
            edges: vec![],
            sentence: "a record ordered by a later metalog entry got a smaller seqnum than one ordered earlier.".into(),
            steps: vec![
                "T1's record has the smaller seqnum but a later ordering position than T2's.".into(),
                "A reader of the prefix at T2's position sees T2's record with nothing before it where T1's now stands.".into(),
            ],
            contradiction: "A log only grows at its tail, so later entries order records after earlier ones: a contradiction!".into(),
        }
    }

    fn incorrect(&self, r: usize, witness: Option<usize>, what: &str) -> Found {
        let h = self.h;
        let p = h.log[r].pos.expect("judged reads have a position");
        let calls = witness.map_or_else(|| vec![r], |a| vec![a, r]);
        let label = |a: usize| if h.log[a].call == Call::Trim { "the trim in its prefix" } else { "the record in question" };
        let edges = witness.map_or_else(Vec::new, |a| vec![(a, r, EdgeKind::CausalOrder, label(a).to_string())]);
        Found {
            anomaly: Anomaly::IncorrectLogRead,
            calls,
            edges,
            sentence: format!("a read served at {}:{} {what}.", p.0, p.1),
            steps: vec![format!("The index that served the read had applied the metalog up to {}:{}.", p.0, p.1)],
            contradiction: format!(
                "The read's answer must be the one the prefix at {}:{} holds, but it {what}: a contradiction!",
                p.0, p.1
            ),
        }
    }

    fn session_miss(&self, anomaly: Anomaly, r: usize, reached: usize, append: usize) -> Found {
        let h = self.h;
        let rp = h.log[append].pos.expect("positioned");
        let mut calls = vec![reached, r];
        if append != reached {
            calls.insert(0, append);
        }
        let who = match anomaly {
            Anomaly::MissedOwnAppend => "the function itself appended it earlier",
            Anomaly::NonMonotonicLogRead => "the function had already read a prefix that holds it",
            _ => "an ancestor function (before it in the workflow) had reached a prefix that holds it",
        };
        let mut steps = vec![format!("The record was ordered at {}:{}.", rp.0, rp.1)];
        if append != reached {
            steps.push(format!(
                "An earlier call reached position {}:{}, which includes it.",
                h.log[reached].pos.map_or(0, |p| p.0),
                h.log[reached].pos.map_or(0, |p| p.1)
            ));
        }
        Found {
            anomaly,
            calls,
            edges: vec![(reached, r, EdgeKind::SessionOrder, "the reader's position includes the record".into())],
            sentence: format!("a read missed a record although {who}."),
            steps,
            contradiction:
                "A read is served only by an index at or past the caller's position, whose prefix holds the record: a contradiction!".into(),
        }
    }

    fn render(&self, f: Found) -> Violation {
        let h = self.h;
        let mut txns: Vec<u32> = Vec::new();
        for &i in &f.calls {
            if !txns.contains(&h.log[i].txn) {
                txns.push(h.log[i].txn);
            }
        }
        let label = |t: u32| format!("T{}", txns.iter().position(|&x| x == t).expect("listed") + 1);
        let transactions: Vec<TxnRef> = txns
            .iter()
            .map(|&t| {
                let summary =
                    f.calls.iter().filter(|&&i| h.log[i].txn == t).map(|&i| self.call_text(i)).collect::<Vec<_>>().join(", then ");
                story::txn_ref(h, t, label(t), summary)
            })
            .collect();
        let lets = transactions.iter().map(story::let_line).collect();
        let witness = f
            .edges
            .iter()
            .map(|&(a, b, kind, ref because)| WitnessEdge {
                from: h.txns[h.log[a].txn as usize].id,
                to: h.txns[h.log[b].txn as usize].id,
                kind,
                key: Some(h.key(h.log[b].book).clone()),
                from_op: None,
                to_op: None,
                via: None,
                because: because.clone(),
            })
            .collect();
        let read = f.calls.iter().rev().find(|&&i| self.is_read(i)).map(|&i| {
            let c = &h.log[i];
            let t = &h.txns[c.txn as usize];
            let index = h.log.iter().enumerate().filter(|(j, x)| x.txn == c.txn && *j < i).count() as u32;
            OpRef { txn: t.id, index, f: crate::history::OpKind::Read, key: h.key(c.book).clone(), value: h.value(c.data) }
        });
        let aliases = f.anomaly.aliases(false);
        Violation {
            anomaly: f.anomaly,
            popl17: aliases.popl17,
            tap: aliases.tap,
            tap_name: aliases.tap_name,
            elle: aliases.elle,
            level: Level::SharedLog,
            forbidden_by: Level::LOG.iter().copied().filter(|l| l.forbids(f.anomaly)).collect(),
            meaning: f.anomaly.meaning(),
            transactions,
            key: f.calls.first().map(|&i| h.key(h.log[i].book).clone()),
            read,
            witness,
            cycle: false,
            scc: Vec::new(),
            window: Vec::new(),
            sentence: format!("{}: {}", label(h.log[*f.calls.last().expect("a finding names calls")].txn), f.sentence),
            explanation: Explanation { lets, steps: f.steps, contradiction: f.contradiction },
        }
    }
}

/// The positioned records of each `(book, tag)` (tag 0: all of the book), sorted by seqnum:
/// `(seqnum, position, append call)`.
struct Rows {
    rows: BTreeMap<(u32, u64), Vec<Placed>>,
    /// Per book, its completed trims: `(position, trim point, call)`, by position.
    trims: BTreeMap<u32, Vec<(Pos, u64, usize)>>,
}

impl Rows {
    fn build(h: &History, order: &Order) -> Rows {
        let mut rows: BTreeMap<(u32, u64), Vec<Placed>> = BTreeMap::new();
        for (&r, &a) in &order.append_of {
            let c = &h.log[a];
            let (Some(p), Some(&(s, _))) = (c.pos, order.seqnum_of.get(&r)) else { continue };
            if h.txns[c.txn as usize].outcome != Outcome::Ok {
                continue;
            }
            rows.entry((c.book, 0)).or_default().push((s, p, a));
            for &t in &c.tags {
                if t != 0 {
                    rows.entry((c.book, t)).or_default().push((s, p, a));
                }
            }
        }
        for row in rows.values_mut() {
            row.sort_unstable();
        }
        let mut trims: BTreeMap<u32, Vec<(Pos, u64, usize)>> = BTreeMap::new();
        for (i, c) in h.log.iter().enumerate() {
            if c.call == Call::Trim
                && h.txns[c.txn as usize].outcome == Outcome::Ok
                && let Some(p) = c.pos
            {
                trims.entry(c.book).or_default().push((p, c.bound, i));
            }
        }
        for book in trims.values_mut() {
            book.sort_unstable();
        }
        Rows { rows, trims }
    }

    /// The highest trim point of `book` in the prefix at `p`, and the trim that set it.
    fn trim_point(&self, book: u32, p: Pos) -> Option<(u64, usize)> {
        let trims = self.trims.get(&book)?;
        trims[..trims.partition_point(|x| x.0 <= p)].iter().map(|x| (x.1, x.2)).max_by_key(|x| x.0)
    }

    /// The answer the prefix at `p` holds for read `c`: `(seqnum, append call)`, or `None`
    /// for EMPTY.
    fn answer(&self, _h: &History, c: &LogCall, p: Pos, monotone: bool) -> Option<(u64, usize)> {
        let row = self.rows.get(&(c.book, c.tags[0]))?;
        let next = c.call == Call::ReadNext;
        // Records below the prefix's trim point are gone from it.
        let kept = self.trim_point(c.book, p).map_or(0, |t| t.0);
        let matches = |&(s, _, _): &Placed| s >= kept && if next { s >= c.bound } else { s <= c.bound };
        if monotone {
            // Positions grow with seqnums: the prefix is a leading part of the row.
            let held = &row[..row.partition_point(|x| x.1 <= p)];
            let found = if next {
                held[held.partition_point(|x| x.0 < c.bound.max(kept))..].first()
            } else {
                held[..held.partition_point(|x| x.0 <= c.bound)].last().filter(|x| x.0 >= kept)
            };
            return found.map(|x| (x.0, x.2));
        }
        let held = row.iter().filter(|x| x.1 <= p).filter(|x| matches(x));
        if next { held.min_by_key(|x| x.0) } else { held.max_by_key(|x| x.0) }.map(|x| (x.0, x.2))
    }
}
