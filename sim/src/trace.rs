//! Traces: what the protocol and the engine did, one JSON object per line (`trace.jsonl`).
//!
//! Legend (field `ev`):
//!
//! | `ev` | meaning | other fields |
//! |---|---|---|
//! | `start` | a fixed node started | `node` |
//! | `send` | a message left its sender | `from`, `to`, `msg`, `deliver_at` |
//! | `deliver` | a message was handed to its receiver | `from`, `to`, `msg`, `detail` |
//! | `drop` | a message was lost | `from`, `to`, `msg`, `reason` (`partition`, `loss`, `crashed`, `retired`) |
//! | `hold` / `release` | a partition held a message / released it at the heal (or at the end of a replay schedule) | `from`, `to`, `msg` |
//! | `wait` | a replay schedule holds a message until a step delivers it | `from`, `to`, `msg` |
//! | `replay` | a replay schedule's step found no matching message: the run diverged and stops | `diverged` |
//! | `timer` | a timer fired | `node`, `timer` |
//! | `action` | a protocol step, named like the TLA+ spec's actions | `node`, `action`, `args` |
//! | `place` | the scheduler started a function on a machine | `fn`, `machine` |
//! | `done` | a function finished | `fn` |
//! | `abort` | a workflow attempt was aborted | `session`, `reason`, `retry` |
//! | `workflow` | a workflow finished | `session`, `latency_ns` |
//! | `record` | a history line was written | `id`, `fn` |
//! | `crash` / `restart` | a fixed node crashed / restarted | `node` |
//! | `partition` / `heal` | a partition started / healed | `index` |
//! | `invariant` | a node's invariant check failed (the first failure) | `node`, `violation` |
//!
//! Every line has `t`, the simulated time in nanoseconds. The trace is hashed like the history,
//! so determinism checks cover the protocol's inner steps too.

use crate::history::OutputHash;
use crate::time::Time;
use std::io::{self, Write};

pub struct TraceWriter {
    out: Box<dyn Write>,
    hash: OutputHash,
    lines: u64,
    line: String,
}

impl TraceWriter {
    pub fn new(out: Box<dyn Write>) -> TraceWriter {
        TraceWriter { out, hash: OutputHash::default(), lines: 0, line: String::with_capacity(256) }
    }

    /// Writes `{"t":<t>,"ev":"<ev>",<fields>}`; `fields` is JSON object content (may be empty).
    pub fn event(&mut self, t: Time, ev: &str, fields: &str) -> io::Result<()> {
        use std::fmt::Write as _;
        self.line.clear();
        let _ = write!(self.line, "{{\"t\":{t},\"ev\":\"{ev}\"");
        if !fields.is_empty() {
            self.line.push(',');
            self.line.push_str(fields);
        }
        self.line.push_str("}\n");
        self.hash.update(self.line.as_bytes());
        self.lines += 1;
        self.out.write_all(self.line.as_bytes())
    }

    pub fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn hash(&self) -> u64 {
        self.hash.value()
    }

    pub fn lines(&self) -> u64 {
        self.lines
    }
}
