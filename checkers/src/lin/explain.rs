//! The explanation of a linearizability violation, from its [`Proof`]: the real-time and
//! reads-from steps, the write order they force, and the contradiction, in the Let/Then form of
//! the other levels. Times are the history's `invoke_ns`/`complete_ns`.

use super::Proof;
use super::search::RegOp;
use crate::explain::Namer;
use crate::report::{EdgeKind, WitnessEdge};
use std::collections::BTreeSet;

pub(crate) struct Story {
    pub steps: Vec<String>,
    pub witness: Vec<WitnessEdge>,
    pub contradiction: String,
    pub sentence: String,
}

/// Label the transactions of `proof` (or of the whole `window` without one) and tell it.
pub(crate) fn story(nm: &mut Namer<'_>, key: u32, window: &[u32], proof: Option<&Proof>) -> Story {
    let s = Teller { key, steps: Vec::new(), witness: Vec::new(), stated: BTreeSet::new() };
    match proof {
        Some(Proof::FutureRead { write, read }) => s.future_read(nm, write, read),
        Some(Proof::Stale { old, newer, read }) => s.stale(nm, old.as_ref(), newer, read),
        Some(Proof::TwoWay { a_write, b_write, ab, ba }) => {
            s.two_way(nm, a_write.as_ref(), b_write, (ab.0.as_ref(), &ab.1), (&ba.0, &ba.1))
        }
        None => {
            for o in window {
                nm.op(*o);
            }
            let n = window.len();
            let key = nm.h.key(key);
            Story {
                steps: Vec::new(),
                witness: Vec::new(),
                contradiction: format!(
                    "However, no order of these {n} operations respects real time and has every read return the latest write of {key}: a contradiction!"
                ),
                sentence: format!("the {n} operations on {key} in this window have no linearization."),
            }
        }
    }
}

struct Teller {
    key: u32,
    steps: Vec<String>,
    witness: Vec<WitnessEdge>,
    /// Reads-from pairs (write, read) already stated.
    stated: BTreeSet<(u32, u32)>,
}

impl Teller {
    fn finish(self, contradiction: String, sentence: String) -> Story {
        Story { steps: self.steps, witness: self.witness, contradiction, sentence }
    }

    fn edge(&self, nm: &Namer<'_>, kind: EdgeKind, from: u32, to: u32, because: &str) -> WitnessEdge {
        let h = nm.h;
        WitnessEdge {
            from: h.txns[h.op_txn[from as usize] as usize].id,
            to: h.txns[h.op_txn[to as usize] as usize].id,
            kind,
            key: Some(h.key(self.key).clone()),
            from_op: Some(nm.op_ref(from)),
            to_op: Some(nm.op_ref(to)),
            via: None,
            because: because.to_string(),
        }
    }

    fn lab(nm: &Namer<'_>, o: u32) -> String {
        nm.label(nm.h.op_txn[o as usize])
    }

    /// "A < B, because A completed at … before B was invoked at …" (real time).
    fn realtime(&mut self, nm: &Namer<'_>, a: &RegOp, b: &RegOp) {
        let (la, lb) = (Self::lab(nm, a.op), Self::lab(nm, b.op));
        let because = format!("{la} completed at {} before {lb} was invoked at {}", a.cmp, b.inv);
        self.steps.push(format!("{la} < {lb}, because {because} (real time)."));
        self.witness.push(self.edge(nm, EdgeKind::Realtime, a.op, b.op, &because));
    }

    /// "W < R, because R read x=1, which W wrote" (once per pair).
    fn reads_from(&mut self, nm: &Namer<'_>, w: &RegOp, r: &RegOp) {
        if r.write || !self.stated.insert((w.op, r.op)) {
            return;
        }
        let (lw, lr) = (Self::lab(nm, w.op), Self::lab(nm, r.op));
        let because = format!("{lr} read {}, which {lw} wrote", nm.assign(r.op));
        self.steps.push(format!("{lw} < {lr}, because {because}."));
        self.witness.push(self.edge(nm, EdgeKind::ReadsFrom, w.op, r.op, &because));
    }

    fn session(nm: &Namer<'_>, o: &RegOp) -> String {
        nm.session(nm.h.op_txn[o.op as usize]).to_string()
    }

    /// "the write of x=1", or "append(x, 1)" in a list-append history.
    fn write_of(nm: &Namer<'_>, o: &RegOp) -> String {
        if nm.h.lists.is_some() { nm.assign(o.op) } else { format!("the write of {}", nm.assign(o.op)) }
    }

    /// What a read returned: "1", or the list "[1 2]" in a list-append history.
    fn returned(nm: &Namer<'_>, read: &RegOp) -> String {
        match &nm.h.lists {
            Some(lists) => {
                let items: Vec<String> = lists.of(read.op).unwrap_or(&[]).iter().map(|v| nm.h.value(*v).to_string()).collect();
                format!("[{}]", items.join(" "))
            }
            None => nm.h.op_value(read.op as usize).to_string(),
        }
    }

    fn future_read(mut self, nm: &mut Namer<'_>, write: &RegOp, read: &RegOp) -> Story {
        nm.op(write.op);
        nm.op(read.op);
        self.realtime(nm, read, write);
        let (lw, lr) = (Self::lab(nm, write.op), Self::lab(nm, read.op));
        let because = format!("{lr} read {}, which {lw} wrote", nm.assign(read.op));
        self.witness.push(self.edge(nm, EdgeKind::ReadsFrom, write.op, read.op, &because));
        let sentence = format!(
            "session {}'s read of {} completed at {}, before {} (session {}) was invoked at {}.",
            Self::session(nm, read),
            nm.assign(read.op),
            read.cmp,
            Self::write_of(nm, write),
            Self::session(nm, write),
            write.inv
        );
        self.finish(format!("However, {lw} < {lr}, because {because}: a contradiction!"), sentence)
    }

    fn stale(mut self, nm: &mut Namer<'_>, old: Option<&RegOp>, newer: &RegOp, read: &RegOp) -> Story {
        if let Some(w) = old {
            nm.op(w.op);
        }
        nm.op(newer.op);
        nm.op(read.op);
        let key = nm.h.key(self.key).clone();
        let value = nm.assign(read.op);
        let old_text = if old.is_some() { value.clone() } else { format!("the initial {key}") };
        if let Some(w) = old {
            self.reads_from(nm, w, read);
            self.realtime(nm, w, newer);
        }
        self.realtime(nm, newer, read);
        let (ln, lr) = (Self::lab(nm, newer.op), Self::lab(nm, read.op));
        let because = format!("{lr} read {old_text}, which {ln}'s {} overwrote", nm.assign(newer.op));
        self.witness.push(self.edge(nm, EdgeKind::AntiDependency, read.op, newer.op, &because));
        let returned = match old {
            Some(_) => format!("{key} returned {}", Self::returned(nm, read)),
            None => format!("{key} returned the initial value {}", Self::returned(nm, read)),
        };
        let before = match old {
            Some(w) => format!("; that write was invoked at {}, after {} had completed at {}", newer.inv, Self::write_of(nm, w), w.cmp),
            None => String::new(),
        };
        let sentence = format!(
            "session {}'s read of {returned} at [{}, {}], after {} (session {}) had completed at {}{before}.",
            Self::session(nm, read),
            read.inv,
            read.cmp,
            Self::write_of(nm, newer),
            Self::session(nm, newer),
            newer.cmp
        );
        self.finish(format!("However, {lr} < {ln}, because {because}: a contradiction!"), sentence)
    }

    /// Value a (None: initial) before b because `ab.0` completed before `ab.1` was invoked, and
    /// b before a because `ba.0` completed before `ba.1` was invoked.
    fn two_way(
        mut self,
        nm: &mut Namer<'_>,
        a_write: Option<&RegOp>,
        b_write: &RegOp,
        ab: (Option<&RegOp>, &RegOp),
        ba: (&RegOp, &RegOp),
    ) -> Story {
        for o in [a_write, ab.0, Some(ab.1), Some(b_write), Some(ba.0), Some(ba.1)].into_iter().flatten() {
            nm.op(o.op);
        }
        let key = nm.h.key(self.key).clone();
        let a_text = |nm: &Namer<'_>| match a_write {
            Some(w) => nm.assign(w.op),
            None => format!("the initial {key}"),
        };
        let b_text = nm.assign(b_write.op);
        let stretch = "each value is written once, so its write and all its reads form one unbroken stretch of the order";
        let mut sentence_ab = String::new();
        if let (Some(aw), Some(a1)) = (a_write, ab.0) {
            self.reads_from(nm, aw, a1);
            self.realtime(nm, a1, ab.1);
            self.reads_from(nm, b_write, ab.1);
            let (la, lb) = (Self::lab(nm, aw.op), Self::lab(nm, b_write.op));
            let because =
                format!("{} (of {}) precedes {} (of {b_text}), and {stretch}", Self::lab(nm, a1.op), a_text(nm), Self::lab(nm, ab.1.op));
            self.steps.push(format!("So {la} < {lb} in the order of writes, because {because}."));
            let mut edge = self.edge(nm, EdgeKind::WriteOrder, aw.op, b_write.op, &because);
            edge.via = Some(nm.op_ref(ab.1.op));
            self.witness.push(edge);
            sentence_ab = format!(
                "{} before {b_text} ({} completed at {} before {} was invoked at {})",
                a_text(nm),
                Self::lab(nm, a1.op),
                a1.cmp,
                Self::lab(nm, ab.1.op),
                ab.1.inv
            );
        }
        self.reads_from(nm, b_write, ba.0);
        self.realtime(nm, ba.0, ba.1);
        if let Some(aw) = a_write {
            self.reads_from(nm, aw, ba.1);
        }
        let (lb0, la1) = (Self::lab(nm, ba.0.op), Self::lab(nm, ba.1.op));
        let sentence_ba =
            format!("{b_text} before {} ({lb0} completed at {} before {la1} was invoked at {})", a_text(nm), ba.0.cmp, ba.1.inv);
        let (contradiction, sentence) = match a_write {
            Some(aw) => {
                let (la, lb) = (Self::lab(nm, aw.op), Self::lab(nm, b_write.op));
                let because = format!("{lb0} (of {b_text}) precedes {la1} (of {}), and {stretch}", a_text(nm));
                let mut edge = self.edge(nm, EdgeKind::WriteOrder, b_write.op, aw.op, &because);
                edge.via = Some(nm.op_ref(ba.1.op));
                self.witness.push(edge);
                (
                    format!("However, {lb} < {la}, because {because}: a contradiction!"),
                    format!("the operations on {key} force {sentence_ab} and {sentence_ba}: no order of them respects real time."),
                )
            }
            None => (
                format!(
                    "However, {la1} read the initial {key} after {lb0} (of {b_text}) had completed, and once {key} is written its initial value never returns: a contradiction!"
                ),
                format!(
                    "session {}'s read of the initial {key} was invoked at {} after {b_text} was already in place ({lb0} completed at {}).",
                    Self::session(nm, ba.1),
                    ba.1.inv,
                    ba.0.cmp
                ),
            ),
        };
        self.finish(contradiction, sentence)
    }
}
