//! Turning a finding into a violation a person can follow: names, the transactions involved
//! (labelled T1, T2, … in order of appearance), the witness edges with their justification, one
//! sentence, and an Elle-style "Let … Then … a contradiction!" block.

use crate::anomaly::Anomaly;
use crate::finding::{Detail, Finding, Hop};
use crate::history::{History, NONE, OpKind, RF_INIT, RF_NONE, Value};
use crate::level::Level;
use crate::report::{EdgeKind, Explanation, OpRef, TxnRef, Violation, WitnessEdge};
use std::collections::BTreeMap;

pub(crate) struct Namer<'a> {
    pub(crate) h: &'a History,
    labels: BTreeMap<u32, usize>,
    order: Vec<u32>,
    /// Ops worth showing per transaction.
    shown: BTreeMap<u32, Vec<u32>>,
    /// Show each transaction's real-time interval (for the real-time level).
    times: bool,
}

impl<'a> Namer<'a> {
    fn new(h: &'a History) -> Namer<'a> {
        Namer { h, labels: BTreeMap::new(), order: Vec::new(), shown: BTreeMap::new(), times: false }
    }

    pub(crate) fn txn(&mut self, t: u32) {
        if !self.labels.contains_key(&t) {
            self.labels.insert(t, self.order.len() + 1);
            self.order.push(t);
        }
    }

    pub(crate) fn op(&mut self, o: u32) {
        let t = self.h.op_txn[o as usize];
        self.txn(t);
        let list = self.shown.entry(t).or_default();
        if !list.contains(&o) {
            list.push(o);
        }
    }

    fn hop(&mut self, hop: &Hop) {
        match hop {
            Hop::Program { from, to, from_op, to_op, .. } => {
                self.txn(*from);
                if let Some(o) = from_op {
                    self.op(*o);
                }
                self.txn(*to);
                if let Some(o) = to_op {
                    self.op(*o);
                }
            }
            Hop::ReadsFrom { write, read, .. } => {
                self.op(*write);
                self.op(*read);
            }
            Hop::WriteOrder { first, second, .. } => {
                self.op(*first);
                self.op(*second);
            }
        }
    }

    /// Label the transactions whose reads forced write-order hops (after the hops' own).
    fn readers(&mut self, hops: &[Hop]) {
        for hop in hops {
            if let Hop::WriteOrder { read, .. } = hop {
                self.op(*read);
            }
        }
    }

    pub(crate) fn label(&self, t: u32) -> String {
        format!("T{}", self.labels[&t])
    }

    pub(crate) fn session(&self, t: u32) -> &str {
        self.h.session_name(self.h.txns[t as usize].session)
    }

    /// `x=1`, `x=⊥`, `x=0 (initial)`; in list-append histories `x=[1 2]` for a read and
    /// `append(x, 2)` for a write.
    pub(crate) fn assign(&self, o: u32) -> String {
        let h = self.h;
        let op = &h.ops[o as usize];
        let key = h.key(op.key);
        if let Some(lists) = &h.lists {
            if op.is_write() {
                return format!("append({key}, {})", h.op_value(o as usize));
            }
            let list = lists.of(o).unwrap_or(&[]);
            let items: Vec<String> = list.iter().map(|v| h.value(*v).to_string()).collect();
            return format!("{key}=[{}]", items.join(" "));
        }
        let v = h.op_value(o as usize);
        if op.is_read() && h.rf[o as usize] == RF_INIT && h.initial.contains_key(&op.key) {
            format!("{key}={v} (initial)")
        } else {
            format!("{key}={v}")
        }
    }

    /// `writes x=1` / `reads y=2` (`does append(x, 1)` in list-append histories).
    fn op_text(&self, o: u32) -> String {
        let verb = match (self.h.ops[o as usize].is_read(), self.h.lists.is_some()) {
            (true, _) => "reads",
            (false, false) => "writes",
            (false, true) => "does",
        };
        format!("{verb} {}", self.assign(o))
    }

    fn past(&self, o: u32) -> String {
        let verb = match (self.h.ops[o as usize].is_read(), self.h.lists.is_some()) {
            (true, _) => "read",
            (false, false) => "wrote",
            (false, true) => "did",
        };
        format!("{verb} {}", self.assign(o))
    }

    fn summary(&self, t: u32) -> String {
        let h = self.h;
        let txn = &h.txns[t as usize];
        let mut ops = self.shown.get(&t).cloned().unwrap_or_default();
        ops.sort_unstable();
        if ops.is_empty() {
            ops = txn.ops().take(3).map(|o| o as u32).collect();
        }
        let mut parts: Vec<String> = Vec::new();
        let mut expect = txn.ops_start;
        for o in &ops {
            if *o > expect {
                parts.push("…".into());
            }
            parts.push(self.op_text(*o));
            expect = o + 1;
        }
        if expect < txn.ops_start + txn.ops_len {
            parts.push("…".into());
        }
        if parts.is_empty() {
            return "(no operations)".into();
        }
        let mut s = String::new();
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                s.push_str(if p == "…" || parts[i - 1] == "…" { " " } else { ", then " });
            }
            s.push_str(p);
        }
        if self.times
            && let Some((invoke, complete)) = h.times.get(&t)
        {
            if txn.outcome == crate::history::Outcome::Failed {
                s.push_str(&format!(" from {invoke} on"));
            } else {
                s.push_str(&format!(" during [{invoke}, {complete}]"));
            }
        }
        s
    }

    fn txn_ref(&self, t: u32) -> TxnRef {
        let h = self.h;
        let txn = &h.txns[t as usize];
        let node = h.node_name(txn.node).map(str::to_string).or_else(|| {
            self.shown.get(&t).and_then(|ops| ops.iter().find_map(|o| h.op_nodes.get(o).map(|n| h.nodes[*n as usize].to_string())))
        });
        TxnRef {
            label: self.label(t),
            id: txn.id,
            session: self.session(t).to_string(),
            line: (txn.line > 0).then_some(u64::from(txn.line)),
            node,
            outcome: txn.outcome,
            summary: self.summary(t),
        }
    }

    fn let_line(&self, r: &TxnRef) -> String {
        let at = r.node.as_ref().map(|n| format!(" at {n}")).unwrap_or_default();
        let outcome = match r.outcome {
            crate::history::Outcome::Ok => "",
            crate::history::Outcome::Aborted => ", aborted",
            crate::history::Outcome::Failed => ", failed",
        };
        let line = r.line.map(|l| format!(", line {l}")).unwrap_or_default();
        format!("{} = {} {}{at} (id {}{line}{outcome})", r.label, r.session, r.summary, r.id)
    }

    pub(crate) fn op_ref(&self, o: u32) -> OpRef {
        let h = self.h;
        let t = h.op_txn[o as usize];
        let op = &h.ops[o as usize];
        OpRef {
            txn: h.txns[t as usize].id,
            index: o - h.txns[t as usize].ops_start,
            f: if op.is_read() { OpKind::Read } else { OpKind::Write },
            key: h.key(op.key).clone(),
            value: h.op_value(o as usize),
        }
    }

    /// "T1 < T2, because …" and the witness edge for one hop.
    fn step(&self, hop: &Hop) -> (String, WitnessEdge) {
        let h = self.h;
        let (a, b) = (hop.from(), hop.to());
        let (la, lb) = (self.label(a), self.label(b));
        let id = |t: u32| h.txns[t as usize].id;
        match hop {
            Hop::Program { from_op, to_op, after, .. } => {
                let because = match (from_op, to_op, after) {
                    (_, _, true) => format!("{lb} follows {la} in program order (an `after` link of its workflow)"),
                    (Some(x), Some(y), false) if a == b => {
                        format!("{la} {} before it {}", self.past(*x), self.past(*y))
                    }
                    (Some(x), Some(y), false) => {
                        format!("session {} {} before it {}", self.session(a), self.past(*x), self.past(*y))
                    }
                    _ => format!("session {} ran {la} before {lb}", self.session(a)),
                };
                let edge = WitnessEdge {
                    from: id(a),
                    to: id(b),
                    kind: EdgeKind::SessionOrder,
                    key: None,
                    from_op: from_op.map(|o| self.op_ref(o)),
                    to_op: to_op.map(|o| self.op_ref(o)),
                    via: None,
                    because: because.clone(),
                };
                (format!("{la} < {lb}, because {because}."), edge)
            }
            Hop::ReadsFrom { write, read, .. } => {
                let because = format!("{lb} read {}, which {la} wrote", self.assign(*read));
                let edge = WitnessEdge {
                    from: id(a),
                    to: id(b),
                    kind: EdgeKind::ReadsFrom,
                    key: Some(h.key(h.ops[*read as usize].key).clone()),
                    from_op: Some(self.op_ref(*write)),
                    to_op: Some(self.op_ref(*read)),
                    via: None,
                    because: because.clone(),
                };
                (format!("{la} < {lb}, because {because}."), edge)
            }
            Hop::WriteOrder { first, second, read, .. } => {
                let reader = h.op_txn[*read as usize];
                let lr = self.labels.get(&reader).map(|i| format!("T{i}")).unwrap_or_else(|| format!("transaction {}", id(reader)));
                let (fa, sa) = (self.assign(*first), self.assign(*second));
                let because = match crate::lists::shows_order(h, *first, *second, *read) {
                    Some(true) => format!("{lr} read {}, a list in which {fa} comes before {sa}", self.assign(*read)),
                    Some(false) => {
                        format!("{lr} read {} and no read ever returned {sa}, so it was appended after everything read", self.assign(*read))
                    }
                    None => format!("{lr} read {sa} although {la}'s {fa} is visible to it, so {fa} must be ordered before {sa}"),
                };
                let edge = WitnessEdge {
                    from: id(a),
                    to: id(b),
                    kind: EdgeKind::WriteOrder,
                    key: Some(h.key(h.ops[*first as usize].key).clone()),
                    from_op: Some(self.op_ref(*first)),
                    to_op: Some(self.op_ref(*second)),
                    via: Some(self.op_ref(*read)),
                    because: because.clone(),
                };
                (format!("{la} < {lb}, because {because}."), edge)
            }
        }
    }
}

/// Hops between different transactions (steps inside one transaction are not worth a line).
///
/// Consecutive program-order steps within one session are merged into one step.
fn between(h: &History, hops: &[Hop]) -> Vec<Hop> {
    let mut out: Vec<Hop> = Vec::new();
    for hop in hops {
        if hop.from() == hop.to() {
            continue;
        }
        if let (
            Some(Hop::Program { from, to, from_op, to_op, after: false }),
            Hop::Program { to: next_to, to_op: next_op, after: false, .. },
        ) = (out.last_mut(), hop)
        {
            let session = |t: u32| h.txns[t as usize].session;
            if session(*from) == session(*next_to) && *to == hop.from() {
                *to = *next_to;
                *to_op = *next_op;
                let _ = from_op;
                continue;
            }
        }
        out.push(hop.clone());
    }
    out
}

/// Build the reported violation for a finding.
pub(crate) fn violation(h: &History, level: Level, f: &Finding) -> Violation {
    let mut nm = Namer::new(h);
    let read = f.read;
    let init = read.is_some_and(|r| h.rf[r as usize] == RF_INIT);
    let aliases = f.anomaly.aliases(init);
    let mut steps: Vec<String> = Vec::new();
    let mut witness: Vec<WitnessEdge> = Vec::new();
    let contradiction: String;
    let sentence: String;
    let mut cycle = false;
    let mut scc_ids: Vec<u64> = Vec::new();
    let mut window_ids: Vec<u64> = Vec::new();
    let id = |t: u32| h.txns[t as usize].id;
    match &f.detail {
        Detail::Read | Detail::Repeat { .. } => {
            let r = read.expect("read findings name their read");
            let t = h.op_txn[r as usize];
            nm.op(r);
            let w = h.rf[r as usize];
            if let Detail::Repeat { first } = &f.detail {
                nm.op(*first);
                let w1 = h.rf[*first as usize];
                if w1 != RF_INIT {
                    nm.op(w1);
                }
                if w != RF_INIT {
                    nm.op(w);
                }
            } else if w != RF_INIT && w != RF_NONE {
                nm.op(w);
            }
            let key = h.ops[r as usize].key;
            let writes_of = |t: u32| h.txns[t as usize].ops().filter(move |o| h.ops[*o].is_write() && h.ops[*o].key == key);
            match f.anomaly {
                Anomaly::NotMyOwnWrite | Anomaly::NotMyLastWrite => {
                    if let Some(o) = h.own_write_before(r as usize) {
                        nm.op(o as u32);
                    }
                }
                Anomaly::IntermediateRead => {
                    if let Some(o) = writes_of(h.op_txn[w as usize]).next_back() {
                        nm.op(o as u32);
                    }
                }
                _ => {}
            }
            let (s, c, st) = read_story(&nm, f.anomaly, r, t, &f.detail);
            sentence = s;
            contradiction = c;
            steps = st;
            if w != RF_INIT && w != RF_NONE && h.op_txn[w as usize] != t {
                let hop = Hop::ReadsFrom { from: h.op_txn[w as usize], to: t, write: w, read: r };
                witness.push(nm.step(&hop).1);
            }
        }
        Detail::Element { write, value } => {
            let r = read.expect("element findings name their read");
            let t = h.op_txn[r as usize];
            nm.op(r);
            if *write != NONE {
                nm.op(*write);
            }
            let (s, c, st) = element_story(&nm, f.anomaly, r, t, *write, h.value(*value));
            sentence = s;
            contradiction = c;
            steps = st;
        }
        Detail::Shadow { newer, to_newer, to_reader } => {
            let (to_newer, to_reader) = (&between(h, to_newer), &between(h, to_reader));
            let r = read.expect("shadow findings name their read");
            let t3 = h.op_txn[r as usize];
            let w = h.rf[r as usize];
            if w != RF_INIT {
                nm.op(w);
            }
            for hop in to_newer {
                nm.hop(hop);
            }
            nm.op(*newer);
            for hop in to_reader {
                nm.hop(hop);
            }
            nm.op(r);
            nm.readers(to_newer);
            nm.readers(to_reader);
            for hop in to_newer.iter().chain(to_reader) {
                let (text, edge) = nm.step(hop);
                steps.push(text);
                witness.push(edge);
            }
            let tv = h.op_txn[*newer as usize];
            let (lr, lv) = (nm.label(t3), nm.label(tv));
            let old = if w == RF_INIT { format!("the initial {}", h.key(h.ops[r as usize].key)) } else { nm.assign(r) };
            let because = format!("{lr} read {old}, which {lv}'s {} overwrote", nm.assign(*newer));
            contradiction = format!("However, {lr} < {lv}, because {because}: a contradiction!");
            witness.push(WitnessEdge {
                from: id(t3),
                to: id(tv),
                kind: EdgeKind::AntiDependency,
                key: Some(h.key(h.ops[r as usize].key).clone()),
                from_op: Some(nm.op_ref(r)),
                to_op: Some(nm.op_ref(*newer)),
                via: None,
                because,
            });
            sentence = shadow_sentence(&nm, f.anomaly, r, *newer, to_reader);
        }
        Detail::Cycle { hops, scc } => {
            let hops = &between(h, hops);
            cycle = true;
            for hop in hops {
                nm.hop(hop);
            }
            nm.readers(hops);
            let n = hops.len();
            for (i, hop) in hops.iter().enumerate() {
                let (text, edge) = nm.step(hop);
                witness.push(edge);
                if i + 1 == n {
                    let text = text.trim_end_matches('.').to_string();
                    steps.push(format!("However, {text}: a contradiction!"));
                } else {
                    steps.push(text);
                }
            }
            contradiction = steps.pop().unwrap_or_else(|| "a contradiction!".into());
            scc_ids = scc.iter().map(|t| id(*t)).collect();
            scc_ids.sort_unstable();
            sentence = cycle_sentence(&nm, f.anomaly, hops);
        }
        Detail::Linear { window, proof } => {
            nm.times = true;
            let story =
                crate::lin::explain::story(&mut nm, f.key.expect("linearizability findings name their key"), window, proof.as_ref());
            steps = story.steps;
            witness = story.witness;
            contradiction = story.contradiction;
            sentence = story.sentence;
            window_ids = window.iter().map(|o| id(h.op_txn[*o as usize])).collect();
        }
        Detail::CacheFree(story) => {
            for t in crate::cache_free::txns(story) {
                nm.txn(t);
            }
            cycle = matches!(**story, crate::cache_free::Story::Cycle(_));
            (steps, contradiction, sentence) = crate::cache_free::explain(story, &|t| nm.label(t));
        }
        Detail::Si(story) => {
            let told = crate::si::explain(&mut nm, f.anomaly, story);
            cycle = true;
            (steps, witness, contradiction, sentence) = (told.steps, told.witness, told.contradiction, told.sentence);
        }
        Detail::Sser(story) => {
            nm.times = true;
            let told = crate::sser::explain(&mut nm, story);
            (steps, witness, contradiction, sentence) = (told.steps, told.witness, told.contradiction, told.sentence);
            window_ids = story.txs.iter().map(|tx| id(tx.t)).collect();
        }
        Detail::HbInit { write, hops } => {
            let hops = &between(h, hops);
            let r = read.expect("HbInit findings name their read");
            for hop in hops {
                nm.hop(hop);
            }
            nm.op(*write);
            nm.op(r);
            nm.readers(hops);
            for hop in hops {
                let (text, edge) = nm.step(hop);
                steps.push(text);
                witness.push(edge);
            }
            let t3 = h.op_txn[r as usize];
            let tw = h.op_txn[*write as usize];
            let key = h.key(h.ops[r as usize].key);
            contradiction = format!(
                "However, {} read the initial {key}, although {}'s {} precedes that read in session {}'s view: a contradiction!",
                nm.label(t3),
                nm.label(tw),
                nm.assign(*write),
                nm.session(t3)
            );
            sentence = format!(
                "session {} read the initial {key} although, in its own view of the history, {}'s write {} comes before that read.",
                nm.session(t3),
                nm.session(tw),
                nm.assign(*write)
            );
        }
    }
    let transactions: Vec<TxnRef> = nm.order.iter().map(|t| nm.txn_ref(*t)).collect();
    let lets = transactions.iter().map(|r| nm.let_line(r)).collect();
    Violation {
        anomaly: f.anomaly,
        popl17: aliases.popl17,
        tap: aliases.tap,
        tap_name: aliases.tap_name,
        elle: aliases.elle,
        level,
        forbidden_by: Level::every().filter(|l| l.forbids(f.anomaly)).collect(),
        meaning: f.anomaly.meaning(),
        transactions,
        key: f.key.map(|k| h.key(k).clone()),
        read: read.map(|r| nm.op_ref(r)),
        witness,
        cycle,
        scc: scc_ids,
        window: window_ids,
        sentence,
        explanation: Explanation { lets, steps, contradiction },
    }
}

/// Sentence, contradiction and steps for a list read with a bad element before its last.
fn element_story(nm: &Namer<'_>, anomaly: Anomaly, r: u32, t: u32, write: u32, value: Value) -> (String, String, Vec<String>) {
    let h = nm.h;
    let (lt, s, id) = (nm.label(t), nm.session(t), h.txns[t as usize].id);
    let key = h.key(h.ops[r as usize].key);
    let read = nm.assign(r);
    match anomaly {
        Anomaly::ThinAirRead => (
            format!("session {s} read {read} in transaction {id}, but no transaction appended {value} to {key}."),
            format!("However, no transaction appends {value} to {key}, so no state of {key} holds it: a contradiction!"),
            vec![format!("{lt} read {read}.")],
        ),
        Anomaly::AbortedRead => {
            let tw = h.op_txn[write as usize];
            (
                format!(
                    "session {s} read {read}, which holds {value}, appended by transaction {} of session {}, which aborted.",
                    h.txns[tw as usize].id,
                    nm.session(tw)
                ),
                format!("However, {} aborted, so its appends were never visible: a contradiction!", nm.label(tw)),
                vec![format!("{lt} read {read}; {} did {}.", nm.label(tw), nm.assign(write))],
            )
        }
        _ => (
            format!("transaction {id} (session {s}) read {read}, which holds {value}, an element it appends itself only later."),
            format!("However, {lt} does {} only after that read: a contradiction!", nm.assign(write)),
            vec![format!("{lt} read {read} before doing {}.", nm.assign(write))],
        ),
    }
}

/// Sentence, contradiction and steps for a read that is wrong by itself.
fn read_story(nm: &Namer<'_>, anomaly: Anomaly, r: u32, t: u32, detail: &Detail) -> (String, String, Vec<String>) {
    let h = nm.h;
    let lt = nm.label(t);
    let s = nm.session(t);
    let op = &h.ops[r as usize];
    let key = h.key(op.key);
    let w = h.rf[r as usize];
    let writer = |w: u32| h.op_txn[w as usize];
    let id = h.txns[t as usize].id;
    let in_fn = |o: u32| h.op_function(o as usize).map(|f| format!(" in function {f}")).unwrap_or_default();
    match anomaly {
        Anomaly::ThinAirRead => {
            let init = h.value(h.initial_of(op.key));
            (
                format!(
                    "session {s} read {} in transaction {id}, but no transaction wrote that value and it is not the initial value ({key}={init}).",
                    nm.assign(r)
                ),
                format!("However, no transaction writes {} and the initial {key} is {init}: a contradiction!", nm.assign(r)),
                vec![format!("{lt} read {}.", nm.assign(r))],
            )
        }
        Anomaly::AbortedRead => {
            let tw = writer(w);
            (
                format!(
                    "session {s} read {}, written by transaction {} of session {}, which aborted.",
                    nm.assign(r),
                    h.txns[tw as usize].id,
                    nm.session(tw)
                ),
                format!("However, {} aborted, so its writes were never visible: a contradiction!", nm.label(tw)),
                vec![format!("{lt} read {}, which {} wrote.", nm.assign(r), nm.label(tw))],
            )
        }
        Anomaly::FutureRead => (
            format!("transaction {id} (session {s}) read {}{}, a value it writes itself only later.", nm.assign(r), in_fn(r)),
            format!("However, {lt} writes {} only after that read: a contradiction!", nm.assign(r)),
            vec![format!("{lt} read {} before writing it.", nm.assign(r))],
        ),
        Anomaly::SiblingWriteRead => {
            let (fr, fw) = (h.op_function(r as usize).unwrap_or_default(), h.op_function(w as usize).unwrap_or_default());
            (
                format!(
                    "transaction {id} (session {s}) read {} in function {fr}, a value its function {fw} wrote, and neither function follows the other in the workflow.",
                    nm.assign(r)
                ),
                format!(
                    "However, a function sees only its own transaction's writes made by itself or by the functions it follows, and function {fr} does not follow function {fw}: a contradiction!"
                ),
                vec![format!("{lt}'s function {fw} wrote {}, and its concurrent function {fr} read it.", nm.assign(r))],
            )
        }
        Anomaly::NotMyOwnWrite => {
            let own_op = h.own_write_before(r as usize);
            let own = own_op.map(|o| nm.assign(o as u32)).unwrap_or_default();
            let from = if w == RF_INIT { "the initial value".to_string() } else { format!("{}'s write", nm.label(writer(w))) };
            let order = own_op.map(|o| fn_order_clause(h, o, r as usize)).unwrap_or_default();
            (
                format!(
                    "transaction {id} (session {s}) wrote {own} and then read {} ({from}) instead of its own write{order}.",
                    nm.assign(r)
                ),
                "However, a transaction reads its own latest write of a key: a contradiction!".to_string(),
                vec![format!("{lt} wrote {own}, then read {} ({from}).", nm.assign(r))],
            )
        }
        Anomaly::NotMyLastWrite => {
            let last_op = h.own_write_before(r as usize);
            let last = last_op.map(|o| nm.assign(o as u32)).unwrap_or_default();
            let order = last_op.map(|o| fn_order_clause(h, o, r as usize)).unwrap_or_default();
            (
                format!(
                    "transaction {id} (session {s}) read its own earlier write {} after overwriting it with {last}{order}.",
                    nm.assign(r)
                ),
                format!("However, {lt}'s latest write of {key} before that read was {last}: a contradiction!"),
                vec![format!("{lt} wrote {} and then {last}, then read {}.", nm.assign(r), nm.assign(r))],
            )
        }
        Anomaly::IntermediateRead => {
            let tw = writer(w);
            let final_write = h.txns[tw as usize]
                .ops()
                .rfind(|o| h.ops[*o].is_write() && h.ops[*o].key == op.key)
                .map(|o| nm.assign(o as u32))
                .unwrap_or_default();
            (
                format!(
                    "session {s} read {}, which transaction {} of session {} overwrote with {final_write} before it ended.",
                    nm.assign(r),
                    h.txns[tw as usize].id,
                    nm.session(tw)
                ),
                format!(
                    "However, {} overwrote it with {final_write} before committing, so {} was never visible: a contradiction!",
                    nm.label(tw),
                    nm.assign(r)
                ),
                vec![format!("{lt} read {}, which {} wrote.", nm.assign(r), nm.label(tw))],
            )
        }
        Anomaly::NonRepeatableRead => {
            let Detail::Repeat { first } = detail else { unreachable!("NonRepeatableRead findings carry the first read") };
            let src = |o: u32| {
                let w = h.rf[o as usize];
                if w == RF_INIT { "the initial value".to_string() } else { format!("{}'s write", nm.label(writer(w))) }
            };
            (
                format!("transaction {id} (session {s}) read {} and later {} in the same transaction.", nm.assign(*first), nm.assign(r)),
                "However, a transaction that sees other transactions atomically reads each key from one snapshot: a contradiction!"
                    .to_string(),
                vec![format!("{lt} read {} ({}), then {} ({}).", nm.assign(*first), src(*first), nm.assign(r), src(r))],
            )
        }
        Anomaly::IncompatibleOrder => {
            let Detail::Repeat { first } = detail else { unreachable!("IncompatibleOrder findings carry the read they disagree with") };
            if *first == r {
                (
                    format!("transaction {id} (session {s}) read {}, which lists an element twice.", nm.assign(r)),
                    "However, appended values are unique, so no state of a list holds one twice: a contradiction!".to_string(),
                    vec![format!("{lt} read {}.", nm.assign(r))],
                )
            } else {
                let tf = h.op_txn[*first as usize];
                (
                    format!(
                        "transaction {id} (session {s}) read {}, but transaction {} read {}: neither is a prefix of the other.",
                        nm.assign(r),
                        h.txns[tf as usize].id,
                        nm.assign(*first)
                    ),
                    format!(
                        "However, every read of {key} returns a state of one list, and each state is a prefix of the next: a contradiction!"
                    ),
                    vec![format!("{} read {}, and {lt} read {}.", nm.label(tf), nm.assign(*first), nm.assign(r))],
                )
            }
        }
        _ => unreachable!("only well-formedness findings are read findings"),
    }
}

fn shadow_sentence(nm: &Namer<'_>, anomaly: Anomaly, r: u32, newer: u32, to_reader: &[Hop]) -> String {
    let h = nm.h;
    let t3 = h.op_txn[r as usize];
    let s3 = nm.session(t3);
    let key = h.key(h.ops[r as usize].key);
    let w = h.rf[r as usize];
    let tv = h.op_txn[newer as usize];
    let sv = nm.session(tv);
    let (old, by) = if w == RF_INIT {
        (format!("the initial {key}"), String::new())
    } else {
        let tw = h.op_txn[w as usize];
        (nm.assign(r), format!(" (written by {})", nm.session(tw)))
    };
    let later = if w == RF_INIT { "" } else { "later " };
    let read_of = |hop: &Hop| match hop {
        Hop::ReadsFrom { read, .. } => Some(*read),
        _ => None,
    };
    match anomaly {
        Anomaly::MissedOwnWrite => {
            let value = if w == RF_INIT { nm.assign(newer) } else { format!("the later value {}", nm.assign(newer)) };
            if tv == t3 || nm.h.txns[tv as usize].session == nm.h.txns[t3 as usize].session {
                format!("session {s3} read {old}{by} after it had itself written {value}.")
            } else {
                format!("session {s3} read {old}{by} although {sv}, earlier in its program order, had written {value}.")
            }
        }
        Anomaly::NonMonotonicRead => {
            format!("session {s3} read {old}{by} after it had already read the newer {} (written by {sv}).", nm.assign(newer))
        }
        Anomaly::NonMonotonicWrite => {
            let seen = to_reader.iter().find_map(read_of).map(|o| nm.assign(o)).unwrap_or_default();
            let value = if w == RF_INIT { nm.assign(newer) } else { format!("the later value {}", nm.assign(newer)) };
            format!("session {s3} read {old}{by} after it had observed {seen}, which {sv} wrote after writing {value}.")
        }
        Anomaly::MissedReadDependency => {
            let seen = to_reader.iter().filter_map(read_of).nth(1).map(|o| nm.assign(o)).unwrap_or_default();
            format!(
                "session {s3} read {old}{by} after it had observed {seen}, written by a session that had first read the {later}value {} (written by {sv}).",
                nm.assign(newer)
            )
        }
        Anomaly::NonMonoReadCO => format!(
            "transaction {} (session {s3}) read {old}{by} after reading from transaction {}, which wrote the {later}value {}.",
            h.txns[t3 as usize].id,
            h.txns[tv as usize].id,
            nm.assign(newer)
        ),
        Anomaly::FracturedReadCO => match to_reader.first() {
            Some(Hop::ReadsFrom { read, .. }) => format!(
                "transaction {} (session {s3}) read {} from transaction {} but {old}{by}, although that transaction also wrote the {later}value {}.",
                h.txns[t3 as usize].id,
                nm.assign(*read),
                h.txns[tv as usize].id,
                nm.assign(newer)
            ),
            _ => format!(
                "transaction {} (session {s3}) read {old}{by} although an earlier transaction of its own program order wrote the {later}value {}.",
                h.txns[t3 as usize].id,
                nm.assign(newer)
            ),
        },
        _ => {
            // Causal-past visibility: name the last value the reader observed from outside.
            let observed = to_reader.iter().rev().find_map(|hop| match hop {
                Hop::ReadsFrom { read, from, .. } => Some((*read, *from)),
                _ => None,
            });
            // Did the reader's own session read the newer value itself?
            let own = nm.h.txns[t3 as usize].session;
            let read_newer = to_reader
                .iter()
                .any(|hop| matches!(hop, Hop::ReadsFrom { write, to, .. } if *write == newer && nm.h.txns[*to as usize].session == own));
            match observed {
                Some(_) if read_newer => format!(
                    "session {s3} read {old}{by} after it had already read the {later}value {} (written by {sv}).",
                    nm.assign(newer)
                ),
                Some((read, from)) if from == tv => format!(
                    "session {s3} read {old}{by} after it had observed {}, which the transaction that wrote the {later}value {} also wrote.",
                    nm.assign(read),
                    nm.assign(newer)
                ),
                Some((read, from)) => format!(
                    "session {s3} read {old}{by} after it had observed {} (written by {}), which causally follows {sv}'s {later}write {}.",
                    nm.assign(read),
                    nm.session(from),
                    nm.assign(newer)
                ),
                None => format!(
                    "session {s3} read {old}{by} although {sv} had written the {later}value {} earlier in its program order.",
                    nm.assign(newer)
                ),
            }
        }
    }
}

fn cycle_sentence(nm: &Namer<'_>, anomaly: Anomaly, hops: &[Hop]) -> String {
    let h = nm.h;
    let list = |ts: &[u32]| -> String {
        let ids: Vec<String> = ts.iter().map(|t| h.txns[*t as usize].id.to_string()).collect();
        match ids.len() {
            0 => "no transaction".to_string(),
            1 => format!("transaction {}", ids[0]),
            _ => format!("transactions {} and {}", ids[..ids.len() - 1].join(", "), ids[ids.len() - 1]),
        }
    };
    let mut all: Vec<u32> = hops.iter().map(Hop::from).collect();
    all.dedup();
    let mut writers: Vec<u32> = Vec::new();
    let mut readers: Vec<u32> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    for hop in hops {
        if let Hop::WriteOrder { from, to, first, read, .. } = hop {
            for t in [*from, *to] {
                if !writers.contains(&t) {
                    writers.push(t);
                }
            }
            let r = h.op_txn[*read as usize];
            if !readers.contains(&r) {
                readers.push(r);
            }
            let k = h.key(h.ops[*first as usize].key).to_string();
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    match anomaly {
        Anomaly::CyclicCO => format!(
            "{} form a cycle of session order and reads-from: each one observes the next, so some value was read before it was written.",
            list(&all)
        ),
        Anomaly::CyclicHB => format!(
            "session {}'s reads order the writes of {} by {} both ways: its own view of the history is cyclic.",
            readers.first().map_or("?", |r| nm.session(*r)),
            keys.join(", "),
            list(&writers)
        ),
        _ => format!(
            "the reads of {} order the writes of {} by {} in ways no single order of writes can satisfy{}.",
            list(&readers),
            keys.join(", "),
            list(&writers),
            if all.len() > writers.len() { ", given causality" } else { "" }
        ),
    }
}

/// `, the write in function 1, which the reading function 3 follows`: where a transaction's
/// functions are partially ordered, why the write `w` was visible to the read `r`.
fn fn_order_clause(h: &History, w: usize, r: usize) -> String {
    match (h.op_function(w), h.op_function(r)) {
        (Some(fw), Some(fr)) if fw != fr => format!(" (the write in function {fw}, which the reading function {fr} follows)"),
        (Some(f), Some(_)) => format!(" (both in function {f})"),
        _ => String::new(),
    }
}
