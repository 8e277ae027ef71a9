//! The LogBook API as Boki's libraries (BokiQueue, BokiStore, BokiFlow) call it from inside a
//! function: one call at a time to the engine on the function's machine, the function's
//! metalog position advanced by every answer (as the plain library, `client.rs`, does), and
//! the history record of an append.
//!
//! A library is a state machine over these calls: it issues one, and its `on_message` hands
//! the engine's answer to [`LogBook::on_reply`] and decides the next call from the [`Reply`].

use super::Timer;
use super::client::BokiContext;
use super::msg::{Answer, Dir, Msg};
use super::record::{Aux, Body};
use causim_sim::history::{Key, LogCall, LogRecord, OpRecord, Value};
use causim_sim::node::{NodeId, Outbox};

/// A library's LogBook: the engine it calls and the function's position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LogBook {
    pub engine: NodeId,
    pub ctx: BokiContext,
}

/// What a call returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The record is ordered at `seqnum`, by the metalog entry that brought the function to
    /// `pos` (a position `(term, entries)`).
    Appended {
        seqnum: u64,
        pos: (u64, u64),
    },
    /// A seal discarded the append: it was never ordered.
    Discarded,
    Read(Answer),
}

impl LogBook {
    pub fn append(&self, book: Key, tags: Vec<u64>, data: Value, body: Body, out: &mut Outbox<Msg, Timer>) {
        out.send(self.engine, Msg::Append { book, tags, data, body });
    }

    /// `logReadNext` (`Dir::Next`, the first match ≥ `bound`) or `logReadPrev` (`Dir::Prev`, the
    /// last ≤ `bound`) of `book`'s records with `tag`, at the function's position.
    pub fn read(&self, book: Key, tag: u64, dir: Dir, bound: u64, out: &mut Outbox<Msg, Timer>) {
        out.send(self.engine, Msg::Read { book, tag, dir, bound, pos: self.ctx.pos });
    }

    pub fn set_aux(&self, seqnum: u64, aux: Aux, out: &mut Outbox<Msg, Timer>) {
        out.send(self.engine, Msg::SetAux { seqnum, aux });
    }

    /// The engine's answer to the call in flight; advances the position.
    pub fn on_reply(&mut self, msg: Msg) -> Reply {
        match msg {
            Msg::AppendDone { seqnum, pos } => {
                self.ctx.pos = self.ctx.pos.max(pos);
                Reply::Appended { seqnum, pos: (pos.term, pos.entries) }
            }
            Msg::AppendFailed { .. } => Reply::Discarded,
            Msg::ReadDone(a) => {
                self.ctx.pos = self.ctx.pos.max(a.pos);
                Reply::Read(a)
            }
            other => unreachable!("{other:?} does not answer a library's LogBook call"),
        }
    }
}

/// The history operation of an append: ordered (`Some((seqnum, pos))`) or discarded.
pub fn append_op(book: Key, tags: Vec<u64>, data: Value, ordered: Option<(u64, (u64, u64))>) -> OpRecord {
    let log = LogRecord { call: LogCall::Append, tags, bound: 0, seqnum: ordered.map(|o| o.0), pos: ordered.map(|o| o.1) };
    OpRecord::log(book, Some(data), log)
}
