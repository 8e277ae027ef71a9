//! A fast path for reading `causim-history/2`: a second thread splits the input into lines and
//! parses the plain ones with a small, strict JSON scanner, while the reading thread interns
//! keys and values and builds the history. Parsing and building then overlap, and the scanner
//! does less work than a general deserializer.
//!
//! The scanner accepts only what it is sure about: integers without fraction or exponent,
//! strings without escapes, the fields of `docs/history-format.md` in any order (others are
//! skipped). Anything else — an escape, a float, a missing or repeated field, a header, a
//! syntax error — sends that line to the general reader in `causim.rs`, which also words every
//! error. So the history built, and every error message, are those of the general reader; only
//! the time differs.

use super::causim::{parse_txn_line, trim_ascii};
use super::chunked::{self, CHUNK, Scanned};
use crate::history::{HistoryBuilder, KIND_READ, KIND_WRITE_FINAL, NONE, Outcome, ParseError, TxnMeta, Val};
use std::io::BufRead;
use std::ops::Range;

/// A scalar of the input, with strings as byte ranges of the chunk.
#[derive(Clone, Copy)]
enum Scalar {
    Null,
    Int(i64),
    Str(u32, u32),
}

struct FastOp {
    kind: u8,
    key: Scalar,
    value: Scalar,
    node: Option<(u32, u32)>,
    /// The function of a multi-function transaction's operation (`fn`).
    function: Option<i64>,
}

struct FastLine {
    id: Option<u64>,
    session: (u32, u32),
    node: Option<(u32, u32)>,
    /// Whether the transaction's `node` came before its `ops` (names are numbered in the order
    /// they are met).
    node_first: bool,
    times: Option<(u64, u64)>,
    outcome: Outcome,
    after: Range<usize>,
    ops: Range<usize>,
    /// The transaction's function order (`fn_after`), in the batch's `fn_after`.
    fn_after: Range<usize>,
}

enum Line {
    /// Whitespace only.
    Blank,
    /// For the general reader: the trimmed line.
    General(u32, u32),
    Fast(FastLine, u32, u32),
}

/// One chunk of whole lines, scanned.
struct Batch {
    text: Vec<u8>,
    lines: Vec<Line>,
    ops: Vec<FastOp>,
    after: Vec<u64>,
    fn_after: Vec<(i64, i64)>,
}

/// Read `r` into `b`, as `causim::read` does, scanning on a second thread.
pub(crate) fn read(r: impl BufRead, b: &mut HistoryBuilder) -> Result<(), ParseError> {
    read_chunked(r, b, CHUNK)
}

/// [`read`] with chunks of about `chunk` bytes (small in tests, to cross many boundaries).
fn read_chunked(r: impl BufRead, b: &mut HistoryBuilder, chunk: usize) -> Result<(), ParseError> {
    let mut builder = Builder { b, line_no: 0, seen_first: false, after: Vec::new() };
    chunked::read(r, chunk, scan, |batch| builder.batch(batch))
}

impl Scanned for Batch {
    fn line_count(&self) -> u64 {
        self.lines.len() as u64
    }
}

struct Builder<'b> {
    b: &'b mut HistoryBuilder,
    line_no: u64,
    seen_first: bool,
    after: Vec<u64>,
}

impl Builder<'_> {
    fn batch(&mut self, batch: &Batch) -> Result<(), ParseError> {
        for line in &batch.lines {
            self.line_no += 1;
            let (start, end) = match line {
                Line::Blank => continue,
                Line::General(s, e) | Line::Fast(_, s, e) => (*s as usize, *e as usize),
            };
            let text = &batch.text[start..end];
            if !self.seen_first {
                // The first line may be a header: the general reader decides.
                self.seen_first = true;
                super::causim::first_line(text, self.line_no, self.b, &mut self.after)?;
                continue;
            }
            match line {
                Line::Fast(fast, _, _) => self.fast(batch, fast, text)?,
                _ => parse_txn_line(text, self.line_no, self.b, &mut self.after)?,
            }
        }
        Ok(())
    }

    fn fast(&mut self, batch: &Batch, line: &FastLine, text: &[u8]) -> Result<(), ParseError> {
        let b = &mut *self.b;
        let s = |r: (u32, u32)| -> &str {
            // Checked to be UTF-8 when scanned.
            std::str::from_utf8(&batch.text[r.0 as usize..r.1 as usize]).unwrap_or_default()
        };
        b.begin_txn();
        let session = b.session_index(s(line.session));
        let mut node = NONE;
        if line.node_first {
            node = line.node.map_or(NONE, |n| b.node_index(s(n)));
        }
        for op in &batch.ops[line.ops.clone()] {
            let key = match op.key {
                Scalar::Int(i) => b.key_int(i),
                Scalar::Str(x, y) => b.key_str(s((x, y))),
                Scalar::Null => unreachable!("the scanner rejects null keys"),
            };
            let val = match op.value {
                Scalar::Null => Val::Null,
                Scalar::Int(i) => Val::Int(i),
                Scalar::Str(x, y) => b.val_str(s((x, y))),
            };
            let op_node = op.node.map(|n| b.node_index(s(n)));
            if b.push_op_node_index(op.kind, key, val, op_node).is_err() {
                // The general reader words this error (it names the field).
                b.abandon_txn();
                return parse_txn_line(text, self.line_no, b, &mut self.after);
            }
            if let Some(f) = op.function {
                b.set_op_function(f);
            }
        }
        b.set_fn_after(&batch.fn_after[line.fn_after.clone()]);
        if !line.node_first {
            node = line.node.map_or(NONE, |n| b.node_index(s(n)));
        }
        b.end_txn(TxnMeta {
            id: line.id,
            session,
            after: &batch.after[line.after.clone()],
            node,
            times: line.times,
            outcome: line.outcome,
            line: self.line_no,
        })
    }
}

/// Split a chunk into lines and scan each.
fn scan(text: Vec<u8>) -> Batch {
    let mut batch = Batch {
        lines: Vec::with_capacity(text.len() / 256 + 1),
        ops: Vec::with_capacity(text.len() / 40 + 1),
        after: Vec::new(),
        fn_after: Vec::new(),
        text: Vec::new(),
    };
    for (start, end) in chunked::lines(&text) {
        let raw = &text[start..end];
        let trimmed = trim_ascii(raw);
        if trimmed.is_empty() {
            batch.lines.push(Line::Blank);
            continue;
        }
        let s = start + (trimmed.as_ptr() as usize - raw.as_ptr() as usize);
        let e = s + trimmed.len();
        let (ops_mark, after_mark, order_mark) = (batch.ops.len(), batch.after.len(), batch.fn_after.len());
        let mut scanner = Scanner { text: &text, at: s, end: e };
        match scanner.line(&mut batch.ops, &mut batch.after, &mut batch.fn_after) {
            Some(line) if scanner.at == e => batch.lines.push(Line::Fast(line, s as u32, e as u32)),
            _ => {
                batch.ops.truncate(ops_mark);
                batch.after.truncate(after_mark);
                batch.fn_after.truncate(order_mark);
                batch.lines.push(Line::General(s as u32, e as u32));
            }
        }
    }
    batch.text = text;
    batch
}

/// A strict scanner over one trimmed line; every method returns `None` on anything it does
/// not handle.
struct Scanner<'t> {
    text: &'t [u8],
    at: usize,
    end: usize,
}

impl Scanner<'_> {
    #[inline]
    fn ws(&mut self) {
        while self.at < self.end && matches!(self.text[self.at], b' ' | b'\t' | b'\r' | b'\n') {
            self.at += 1;
        }
    }

    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        (self.at < self.end).then(|| self.text[self.at])
    }

    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.at += 1)
    }

    /// A string without escapes or control characters, valid UTF-8: its byte range.
    fn string(&mut self) -> Option<(u32, u32)> {
        self.eat(b'"')?;
        let start = self.at;
        let mut ascii = true;
        loop {
            let c = *self.text.get(self.at).filter(|_| self.at < self.end)?;
            match c {
                b'"' => break,
                b'\\' | 0..=0x1f => return None,
                0x80.. => ascii = false,
                _ => {}
            }
            self.at += 1;
        }
        let range = (start as u32, self.at as u32);
        self.at += 1;
        if !ascii {
            std::str::from_utf8(&self.text[start..range.1 as usize]).ok()?;
        }
        Some(range)
    }

    /// An integer without fraction or exponent, as JSON writes it, within `i64`.
    fn int(&mut self) -> Option<i64> {
        self.ws();
        let neg = self.text.get(self.at) == Some(&b'-') && self.at < self.end;
        if neg {
            self.at += 1;
        }
        let start = self.at;
        let mut v: i64 = 0;
        while self.at < self.end && self.text[self.at].is_ascii_digit() {
            let d = i64::from(self.text[self.at] - b'0');
            v = v.checked_mul(10)?.checked_add(d)?;
            self.at += 1;
        }
        let digits = self.at - start;
        if digits == 0 || (digits > 1 && self.text[start] == b'0') || (neg && v == 0) {
            return None;
        }
        if self.at < self.end && matches!(self.text[self.at], b'.' | b'e' | b'E') {
            return None;
        }
        Some(if neg { -v } else { v })
    }

    fn uint(&mut self) -> Option<u64> {
        u64::try_from(self.int()?).ok()
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.ws();
        let end = self.at + word.len();
        (end <= self.end && &self.text[self.at..end] == word).then(|| self.at = end)
    }

    fn scalar(&mut self) -> Option<Scalar> {
        match self.peek()? {
            b'"' => self.string().map(|(a, b)| Scalar::Str(a, b)),
            b'n' => self.literal(b"null").map(|()| Scalar::Null),
            _ => self.int().map(Scalar::Int),
        }
    }

    fn opt_string(&mut self) -> Option<Option<(u32, u32)>> {
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            return Some(None);
        }
        self.string().map(Some)
    }

    /// Skip any JSON value made of what this scanner understands.
    fn skip(&mut self, depth: u32) -> Option<()> {
        if depth > 64 {
            return None;
        }
        match self.peek()? {
            b'{' => {
                self.at += 1;
                if self.peek()? == b'}' {
                    self.at += 1;
                    return Some(());
                }
                loop {
                    self.string()?;
                    self.eat(b':')?;
                    self.skip(depth + 1)?;
                    match self.peek()? {
                        b',' => self.at += 1,
                        b'}' => {
                            self.at += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.at += 1;
                if self.peek()? == b']' {
                    self.at += 1;
                    return Some(());
                }
                loop {
                    self.skip(depth + 1)?;
                    match self.peek()? {
                        b',' => self.at += 1,
                        b']' => {
                            self.at += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            _ => self.scalar().map(|_| ()),
        }
    }

    /// Iterate the members of an object: `member(self, name)` consumes each value.
    fn object(&mut self, mut member: impl FnMut(&mut Self, &[u8]) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            let (a, b) = self.string()?;
            self.eat(b':')?;
            let text = self.text;
            member(self, &text[a as usize..b as usize])?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Iterate the elements of an array.
    fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        if self.peek()? == b']' {
            self.at += 1;
            return Some(());
        }
        loop {
            element(self)?;
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// The shape causim itself writes, `{"f":"r","key":K,"value":V}` without spaces, matched
    /// as literal bytes; `None`, having consumed nothing, for anything else (which
    /// [`Scanner::op`] reads). Most operations of a large file take this path.
    #[inline]
    fn plain_op(&mut self) -> Option<FastOp> {
        let start = self.at;
        let op = self.plain_op_fields();
        if op.is_none() {
            self.at = start;
        }
        op
    }

    #[inline]
    fn plain_op_fields(&mut self) -> Option<FastOp> {
        const READ: &[u8] = br#"{"f":"r","key":"#;
        const WRITE: &[u8] = br#"{"f":"w","key":"#;
        const VALUE: &[u8] = br#","value":"#;
        let head = self.text[self.at..self.end].get(..READ.len())?;
        let kind = if head == READ {
            KIND_READ
        } else if head == WRITE {
            KIND_WRITE_FINAL
        } else {
            return None;
        };
        self.at += READ.len();
        let key = self.scalar().filter(|k| !matches!(k, Scalar::Null))?;
        if self.text[self.at..self.end].get(..VALUE.len())? != VALUE {
            return None;
        }
        self.at += VALUE.len();
        let value = self.scalar()?;
        (self.at < self.end && self.text[self.at] == b'}').then(|| self.at += 1)?;
        Some(FastOp { kind, key, value, node: None, function: None })
    }

    fn op(&mut self) -> Option<FastOp> {
        let (mut kind, mut key, mut value, mut node, mut function) = (None, None, None, None, None);
        let mut seen = 0u8;
        self.object(|s, name| {
            // A repeated field: the general reader decides what it means.
            let bit = match name {
                b"f" => 1,
                b"key" => 2,
                b"value" => 4,
                b"node" => 8,
                b"fn" => 16,
                _ => 0,
            };
            if seen & bit != 0 {
                return None;
            }
            seen |= bit;
            match name {
                b"f" => {
                    let (a, b) = s.string()?;
                    kind = Some(match &s.text[a as usize..b as usize] {
                        b"r" => KIND_READ,
                        b"w" => KIND_WRITE_FINAL,
                        _ => return None,
                    });
                }
                b"key" => key = Some(s.scalar().filter(|k| !matches!(k, Scalar::Null))?),
                b"value" => value = Some(s.scalar()?),
                b"node" => node = Some(s.opt_string()?),
                b"fn" => function = Some(s.int()?),
                _ => s.skip(0)?,
            }
            Some(())
        })?;
        Some(FastOp { kind: kind?, key: key?, value: value?, node: node.flatten(), function })
    }

    fn line(&mut self, ops: &mut Vec<FastOp>, after: &mut Vec<u64>, fn_after: &mut Vec<(i64, i64)>) -> Option<FastLine> {
        let (mut id, mut session, mut node, mut node_first) = (None, None, None, false);
        let (mut invoke, mut complete, mut outcome) = (None, None, Outcome::Ok);
        let (mut ops_range, mut after_range, mut order_range) = (None, 0..0, 0..0);
        let mut seen = 0u16;
        self.object(|s, name| {
            let bit = match name {
                b"id" => 1,
                b"session" => 2,
                b"node" => 4,
                b"invoke_ns" => 8,
                b"complete_ns" => 16,
                b"outcome" => 32,
                b"after" => 64,
                b"ops" => 128,
                b"fn_after" => 256,
                _ => 0,
            };
            if seen & bit != 0 {
                return None;
            }
            seen |= bit;
            match name {
                b"id" => id = Some(s.uint()?),
                b"session" => session = Some(s.string()?),
                b"node" => {
                    node = Some(s.opt_string()?);
                    node_first = ops_range.is_none();
                }
                b"invoke_ns" => invoke = Some(s.uint()?),
                b"complete_ns" => complete = Some(s.uint()?),
                b"outcome" => {
                    let (a, b) = s.string()?;
                    outcome = match &s.text[a as usize..b as usize] {
                        b"ok" => Outcome::Ok,
                        b"aborted" => Outcome::Aborted,
                        b"failed" => Outcome::Failed,
                        _ => return None,
                    };
                }
                b"after" => {
                    let start = after.len();
                    s.array(|s| {
                        after.push(s.uint()?);
                        Some(())
                    })?;
                    after_range = start..after.len();
                }
                b"ops" => {
                    let start = ops.len();
                    s.array(|s| {
                        ops.push(s.plain_op().or_else(|| s.op())?);
                        Some(())
                    })?;
                    ops_range = Some(start..ops.len());
                }
                b"fn_after" => {
                    let start = fn_after.len();
                    s.array(|s| {
                        let mut pair = [0i64; 2];
                        let mut n = 0;
                        s.array(|s| {
                            *pair.get_mut(n)? = s.int()?;
                            n += 1;
                            Some(())
                        })?;
                        (n == 2).then(|| fn_after.push((pair[0], pair[1])))
                    })?;
                    order_range = start..fn_after.len();
                }
                // Headers, and call trees (which the general reader keeps), go the general way.
                b"format" | b"call" => return None,
                _ => s.skip(0)?,
            }
            Some(())
        })?;
        let times = match (invoke, complete) {
            (Some(a), Some(c)) => Some((a, c)),
            (None, None) => None,
            _ => return None,
        };
        Some(FastLine {
            id,
            session: session?,
            node: node.flatten(),
            node_first,
            times,
            outcome,
            after: after_range,
            ops: ops_range?,
            fn_after: order_range,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Read};

    /// The history (or the error) a reader makes of `text`, as text to compare: the same
    /// whether written values are indexed as each transaction ends or when reading is done.
    fn outcome(text: &[u8], read: impl Fn(&[u8], &mut HistoryBuilder) -> Result<(), ParseError>) -> String {
        let run = |defer: bool| {
            let mut b = HistoryBuilder::new();
            if defer {
                b.defer_write_index();
            }
            let result = read(text, &mut b);
            match b.finish_reading(result) {
                Ok(h) => format!("{h:?}"),
                Err(e) => format!("error: {e}"),
            }
        };
        let at_once = run(false);
        assert_eq!(run(true), at_once, "indexing at the end changes the outcome of:\n{}", String::from_utf8_lossy(text));
        at_once
    }

    fn same_as_reference(text: &[u8], chunk: usize) {
        let reference = outcome(text, |t, b| super::super::causim::read_by_lines(t, b));
        let fast = outcome(text, |t, b| read_chunked(BufReader::with_capacity(64, t), b, chunk));
        assert_eq!(fast, reference, "input:\n{}", String::from_utf8_lossy(text));
    }

    const LINES: &[&str] = &[
        r#"{"format":"causim-history/1","initial":{"z":0}}"#,
        r#"{"id":0,"session":"c1","ops":[{"f":"w","key":"x","value":1},{"f":"w","key":7,"value":"s"}]}"#,
        r#"  {"session":"c2","node":"S1","id":1,"ops":[{"f":"r","key":"x","value":1,"node":"S2"}],"invoke_ns":5,"complete_ns":9}  "#,
        "",
        r#"{"ops":[{"value":null,"key":"y","f":"r","version":[1,2]}],"session":"c\u0031","id":2,"after":[0]}"#,
        r#"{"id":3,"session":"c3","outcome":"failed","ops":[{"f":"w","key":"x","value":2}],"extra":{"a":[true,false,null]}}"#,
        r#"{"id":4,"session":"c3","outcome":"aborted","ops":[{"f":"w","key":"é","value":"ü"}],"node":null}"#,
        "{\"id\":5,\"session\":\"c1\",\"ops\":[{\"f\":\"r\",\"key\":\"z\",\"value\":0}]}\r",
        r#"{"id":6,"session":"c4","ops":[{"f":"r","key":"x","value":2.0}]}"#,
        r#"{"id":7,"session":"c4","ops":[{"f":"w","key":"q","value":-3},{"f":"w","key":"q","value":-4}]}"#,
        r#"{"id":8,"session":"w1","ops":[{"f":"w","key":"x","value":9,"fn":1},{"f":"r","key":"x","value":1,"at_ns":3,"fn":2}],"fn_after":[[0,1],[0,2]]}"#,
        r#"{"id":9,"session":"w2","fn_after":[[-1,4]],"ops":[{"fn":-1,"f":"r","key":"y","value":null},{"f":"r","key":"x","value":9,"fn":4}]}"#,
    ];

    #[test]
    fn builds_what_the_line_reader_builds() {
        let text = LINES.join("\n");
        for chunk in [1, 7, 64, CHUNK] {
            same_as_reference(text.as_bytes(), chunk);
            // Without the bad line 6 (a float value), the whole history reads.
            let good: Vec<&str> = LINES.iter().copied().filter(|l| !l.contains("2.0")).collect();
            same_as_reference(good.join("\n").as_bytes(), chunk);
            same_as_reference(format!("\u{feff}{}\n\n", good.join("\r\n")).as_bytes(), chunk);
        }
        let good: Vec<&str> = LINES.iter().copied().filter(|l| !l.contains("2.0")).collect();
        let h = outcome(good.join("\n").as_bytes(), |t, b| read(t, b));
        assert!(!h.starts_with("error") && h.contains("orders: {7: FnOrder"), "{h}");
    }

    #[test]
    fn written_values_fail_in_line_order() {
        let w = |v: &str| format!("{{\"session\":\"c1\",\"ops\":[{{\"f\":\"w\",\"key\":\"x\",\"value\":{v}}}]}}");
        let two = |a: &str, b: &str| {
            format!(
                "{{\"session\":\"c1\",\"ops\":[{{\"f\":\"w\",\"key\":\"x\",\"value\":{a}}},{{\"f\":\"w\",\"key\":\"y\",\"value\":{b}}}]}}"
            )
        };
        let cases = [
            // A value written twice (line 3), then a malformed line (5): the former.
            [w("1"), w("2"), w("1"), w("3"), "{".into()],
            // A malformed line (2), then a value written twice (4): the former.
            [w("1"), "{".into(), w("2"), w("1"), w("3")],
            // On one line, a value written twice, then a null write: the null write, as it is
            // found while the line is read.
            [w("1"), w("2"), two("1", "null"), w("3"), w("4")],
            // The initial value written (line 3) before a duplicate (line 4).
            [r#"{"format":"causim-history/1","initial":{"x":7}}"#.into(), w("1"), w("7"), w("1"), w("2")],
        ];
        for case in cases {
            let text = case.join("\n");
            for chunk in [1, 40, CHUNK] {
                same_as_reference(text.as_bytes(), chunk);
            }
        }
        let first = outcome([w("1"), w("2"), w("1"), "{".into()].join("\n").as_bytes(), |t, b| read(t, b));
        assert!(first.starts_with("error: line 3: DuplicateWrite: x=1 is written twice (also at line 1)"), "{first}");
    }

    #[test]
    fn mangled_histories_fail_or_pass_exactly_as_with_the_line_reader() {
        let good: Vec<&str> = LINES.iter().copied().filter(|l| !l.contains("2.0")).collect();
        let text = good.join("\n").into_bytes();
        let alphabet = b"{}[],:\"\\ 0123456789-.eEnulltrfasx\n";
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..3000 {
            let mut t = text.clone();
            for _ in 0..1 + next(3) {
                let i = next(t.len());
                match next(3) {
                    0 => {
                        t.remove(i);
                    }
                    1 => t.insert(i, alphabet[next(alphabet.len())]),
                    _ => t[i] = alphabet[next(alphabet.len())],
                }
            }
            same_as_reference(&t, 1 + next(200));
        }
    }

    #[test]
    fn a_bad_line_in_a_later_chunk_is_named_by_its_line() {
        let mut text = String::new();
        for i in 0..40_000 {
            if i == 35_000 {
                text.push_str("{\"session\":\"c1\",\"ops\":[{\"f\":\"w\",\"key\":1,\"value\":null}]}\n");
            } else {
                text.push_str(&format!("{{\"session\":\"s{}\",\"ops\":[{{\"f\":\"w\",\"key\":{},\"value\":{i}}}]}}\n", i % 7, i % 13));
            }
        }
        assert!(text.len() > 2 * CHUNK);
        let got = outcome(text.as_bytes(), |t, b| read(t, b));
        assert_eq!(got, "error: line 35001: ops[0].value: a write's value must not be null (null is the initial, absent state)");
        same_as_reference(text.as_bytes(), CHUNK);
    }

    /// Yields `data`, then fails.
    struct FailAfter {
        data: Vec<u8>,
        at: usize,
    }
    impl Read for FailAfter {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.at == self.data.len() {
                return Err(std::io::Error::other("disk on fire"));
            }
            let n = out.len().min(self.data.len() - self.at).min(5);
            out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn read_failing(data: &str, chunk: usize) -> String {
        let mut b = HistoryBuilder::new();
        let r = BufReader::with_capacity(16, FailAfter { data: data.as_bytes().to_vec(), at: 0 });
        match read_chunked(r, &mut b, chunk) {
            Ok(()) => "ok".into(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_read_error_names_the_line_being_read_after_the_lines_before_it() {
        let line = |i: u32| format!("{{\"session\":\"c1\",\"ops\":[{{\"f\":\"w\",\"key\":\"x\",\"value\":{i}}}]}}\n");
        let whole: String = (1..=40).map(line).collect();
        // Failing in the middle of line 31 (and right after line 30): line 31 is named.
        let cut = whole.len() - 10 * line(1).len() + 3;
        let reference = |data: &str| {
            let mut b = HistoryBuilder::new();
            let r = BufReader::with_capacity(16, FailAfter { data: data.as_bytes().to_vec(), at: 0 });
            super::super::causim::read_by_lines(r, &mut b).map_or_else(|e| e.to_string(), |()| "ok".into())
        };
        for chunk in [1, 50, 333, CHUNK] {
            for data in [&whole[..cut], &whole[..cut - 3]] {
                assert_eq!(read_failing(data, chunk), "line 31: cannot read: disk on fire");
                assert_eq!(read_failing(data, chunk), reference(data));
            }
            // A bad line before the failure is the error reported.
            let bad = whole.replacen("\"value\":20}", "\"value\":null}", 1);
            assert_eq!(
                read_failing(&bad[..cut], chunk),
                "line 20: ops[0].value: a write's value must not be null (null is the initial, absent state)"
            );
        }
    }
}
