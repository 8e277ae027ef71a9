//! `causim-history/2` (and `/1`): JSON Lines, one transaction per line (see
//! `docs/history-format.md`). Version 2 adds the partial order of a multi-function
//! transaction's operations (`fn` per operation, `fn_after` per transaction); a `/1` file has
//! none, so each of its transactions is totally ordered as listed.
//!
//! The reader streams: it reads one line at a time into a reused buffer and deserializes it
//! straight into the [`HistoryBuilder`] (operations are pushed as they are parsed, keys and
//! strings interned), so memory is the compact history, not the text. When a line fails to
//! parse, it is parsed again slowly, as a generic JSON value, to name the field at fault.

use crate::history::{
    Header, History, HistoryBuilder, KIND_READ, KIND_WRITE_FINAL, Key, NONE, Outcome, ParseError, TxnMeta, Val, Value, json_quote,
};
use crate::shared_log::{Call, LogCall};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::io::{self, BufRead, Write};

pub(crate) const FORMAT_NAME: &str = "causim-history/2";
/// The version before partial orders, still read (and written when a history has none).
pub(crate) const FORMAT_NAME_V1: &str = "causim-history/1";

pub(crate) fn read(r: impl BufRead, b: &mut HistoryBuilder) -> Result<(), ParseError> {
    super::causim_fast::read(r, b)
}

/// The reference reader: one line at a time, each through [`first_line`] or [`parse_txn_line`].
/// The fast reader must build the same history and report the same errors.
#[cfg(test)]
pub(super) fn read_by_lines(mut r: impl BufRead, b: &mut HistoryBuilder) -> Result<(), ParseError> {
    let mut buf = Vec::new();
    let mut line_no: u64 = 0;
    let mut seen_first = false;
    let mut after = Vec::new();
    loop {
        buf.clear();
        let n = r.read_until(b'\n', &mut buf).map_err(|e| ParseError::at(line_no + 1, format!("cannot read: {e}")))?;
        if n == 0 {
            return Ok(());
        }
        line_no += 1;
        let text = trim_ascii(&buf);
        if text.is_empty() {
            continue;
        }
        if !seen_first {
            seen_first = true;
            first_line(text, line_no, b, &mut after)?;
            continue;
        }
        parse_txn_line(text, line_no, b, &mut after)?;
    }
}

/// The first non-blank line: a header, or already a transaction.
pub(super) fn first_line(text: &[u8], line_no: u64, b: &mut HistoryBuilder, after: &mut Vec<u64>) -> Result<(), ParseError> {
    if looks_like_header(text) {
        let header = parse_header(text).map_err(|p| ParseError::at(line_no, p))?;
        return b.header(&header).map_err(|mut e| {
            e.line = Some(line_no);
            e
        });
    }
    parse_txn_line(text, line_no, b, after)
}

pub(super) fn trim_ascii(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if first.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = s {
        if last.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    // A UTF-8 byte-order mark on the first line.
    s.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(s)
}

fn looks_like_header(text: &[u8]) -> bool {
    match serde_json::from_slice::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(m)) => m.contains_key("format"),
        _ => false,
    }
}

pub(crate) fn parse_header(text: &[u8]) -> Result<Header, String> {
    let v: serde_json::Value = serde_json::from_slice(text).map_err(|e| format!("malformed header: {e}"))?;
    let serde_json::Value::Object(m) = v else {
        return Err("the header must be a JSON object".into());
    };
    let mut header = Header::default();
    for (name, value) in m {
        match name.as_str() {
            "format" => match value.as_str() {
                Some(FORMAT_NAME | FORMAT_NAME_V1) => {}
                Some(other) => {
                    return Err(format!(
                        "format: unsupported history format {}, expected \"{FORMAT_NAME}\" (or \"{FORMAT_NAME_V1}\")",
                        json_quote(other)
                    ));
                }
                None => {
                    return Err(format!("format: expected the string \"{FORMAT_NAME}\", found {value}"));
                }
            },
            "initial" => header.initial = parse_initial(&value)?,
            _ => {
                header.info.insert(name, value.to_string());
            }
        }
    }
    Ok(header)
}

/// `initial` is an object `{"x": 0}` (string keys) or, for integer keys, an array of pairs
/// `[[1, 0], ["x", 5]]`.
fn parse_initial(v: &serde_json::Value) -> Result<Vec<(Key, Value)>, String> {
    let mut out = Vec::new();
    match v {
        serde_json::Value::Object(m) => {
            for (k, val) in m {
                let value = scalar_value(val).map_err(|p| format!("initial.{k}: {p}"))?;
                out.push((Key::Str(k.as_str().into()), value));
            }
        }
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let pair = item
                    .as_array()
                    .filter(|p| p.len() == 2)
                    .ok_or_else(|| format!("initial[{i}]: expected a [key, value] pair, found {}", describe(item)))?;
                let key = scalar_key(&pair[0]).map_err(|p| format!("initial[{i}][0]: {p}"))?;
                let value = scalar_value(&pair[1]).map_err(|p| format!("initial[{i}][1]: {p}"))?;
                out.push((key, value));
            }
        }
        other => {
            return Err(format!("initial: expected an object or an array of [key, value] pairs, found {}", describe(other)));
        }
    }
    Ok(out)
}

fn scalar_key(v: &serde_json::Value) -> Result<Key, String> {
    match v {
        serde_json::Value::String(s) => Ok(Key::Str(s.as_str().into())),
        serde_json::Value::Number(n) => {
            n.as_i64().map(Key::Int).ok_or_else(|| format!("expected a string or a 64-bit integer key, found {n}"))
        }
        other => Err(format!("expected a string or an integer key, found {}", describe(other))),
    }
}

fn scalar_value(v: &serde_json::Value) -> Result<Value, String> {
    match v {
        serde_json::Value::Null => Ok(Value::Null),
        serde_json::Value::String(s) => Ok(Value::Str(s.as_str().into())),
        serde_json::Value::Number(n) => {
            n.as_i64().map(Value::Int).ok_or_else(|| format!("expected an integer, a string or null, found {n}"))
        }
        other => Err(format!("expected an integer, a string or null, found {}", describe(other))),
    }
}

pub(crate) fn describe(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "null".into(),
        serde_json::Value::Bool(b) => b.to_string(),
        serde_json::Value::Number(n) => format!("the number {n}"),
        serde_json::Value::String(s) => format!("the string {}", json_quote(s)),
        serde_json::Value::Array(_) => "an array".into(),
        serde_json::Value::Object(_) => "an object".into(),
    }
}

// ---------------------------------------------------------------------------------------------
// Fast path: deserialize a transaction line straight into the builder.

pub(super) fn parse_txn_line(text: &[u8], line: u64, b: &mut HistoryBuilder, after: &mut Vec<u64>) -> Result<(), ParseError> {
    after.clear();
    b.begin_txn();
    let mut de = serde_json::Deserializer::from_slice(text);
    let parsed = LineSeed { b, after }.deserialize(&mut de).and_then(|m| de.end().map(|()| m));
    let meta = match parsed {
        Ok(m) => m,
        Err(e) => return Err(ParseError::at(line, diagnose(text, &e))),
    };
    let times = match (meta.invoke_ns, meta.complete_ns) {
        (Some(a), Some(c)) => Some((a, c)),
        (None, None) => None,
        _ => {
            return Err(ParseError::at(line, "invoke_ns and complete_ns must be given together (both or neither)"));
        }
    };
    b.set_log_function(meta.function);
    b.end_txn(TxnMeta { id: meta.id, session: meta.session, after, node: meta.node, times, outcome: meta.outcome, line })
}

struct LineMeta {
    id: Option<u64>,
    session: u32,
    node: u32,
    invoke_ns: Option<u64>,
    complete_ns: Option<u64>,
    outcome: Outcome,
    function: Option<i64>,
}

struct LineSeed<'b> {
    b: &'b mut HistoryBuilder,
    after: &'b mut Vec<u64>,
}

impl<'de> DeserializeSeed<'de> for LineSeed<'_> {
    type Value = LineMeta;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<LineMeta, D::Error> {
        d.deserialize_map(self)
    }
}

/// Field names of a transaction line, matched without allocating.
enum LineField {
    Id,
    Session,
    After,
    Node,
    InvokeNs,
    CompleteNs,
    Outcome,
    Ops,
    Format,
    Call,
    Fn,
    FnAfter,
    Other,
}

struct LineFieldVisitor;
impl Visitor<'_> for LineFieldVisitor {
    type Value = LineField;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<LineField, E> {
        Ok(match v {
            "id" => LineField::Id,
            "session" => LineField::Session,
            "after" => LineField::After,
            "node" => LineField::Node,
            "invoke_ns" => LineField::InvokeNs,
            "complete_ns" => LineField::CompleteNs,
            "outcome" => LineField::Outcome,
            "ops" => LineField::Ops,
            "format" => LineField::Format,
            "call" => LineField::Call,
            "fn" => LineField::Fn,
            "fn_after" => LineField::FnAfter,
            _ => LineField::Other,
        })
    }
}
impl<'de> de::Deserialize<'de> for LineField {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<LineField, D::Error> {
        d.deserialize_identifier(LineFieldVisitor)
    }
}

/// A string handed to a closure, borrowed when the input allows.
struct StrSeed<F>(F);
impl<'de, T, F: FnOnce(&str) -> T> DeserializeSeed<'de> for StrSeed<F> {
    type Value = T;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        d.deserialize_str(self)
    }
}
impl<T, F: FnOnce(&str) -> T> Visitor<'_> for StrSeed<F> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        Ok((self.0)(v))
    }
}

impl<'de> Visitor<'de> for LineSeed<'_> {
    type Value = LineMeta;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a transaction object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LineMeta, A::Error> {
        let LineSeed { b, after } = self;
        let mut meta =
            LineMeta { id: None, session: NONE, node: NONE, invoke_ns: None, complete_ns: None, outcome: Outcome::Ok, function: None };
        let mut saw_ops = false;
        while let Some(field) = map.next_key::<LineField>()? {
            match field {
                LineField::Id => meta.id = Some(map.next_value()?),
                LineField::Session => meta.session = map.next_value_seed(StrSeed(|s: &str| b.session_index(s)))?,
                LineField::After => {
                    let v: Vec<u64> = map.next_value()?;
                    after.extend(v);
                }
                LineField::Node => {
                    meta.node = map.next_value_seed(OptSeed(StrSeed(|s: &str| b.node_index(s))))?.unwrap_or(NONE);
                }
                LineField::InvokeNs => meta.invoke_ns = Some(map.next_value()?),
                LineField::CompleteNs => meta.complete_ns = Some(map.next_value()?),
                LineField::Outcome => meta.outcome = map.next_value()?,
                LineField::Ops => {
                    map.next_value_seed(OpsSeed { b: &mut *b })?;
                    saw_ops = true;
                }
                LineField::Format => {
                    return Err(de::Error::custom("a header (a line with `format`) may only be the first line"));
                }
                LineField::Call => {
                    let v: serde_json::Value = map.next_value()?;
                    b.set_call(crate::cache_free::parse_call(&v).map_err(de::Error::custom)?);
                }
                LineField::Fn => meta.function = map.next_value::<Option<i64>>()?,
                LineField::FnAfter => {
                    let edges: Vec<(i64, i64)> = map.next_value()?;
                    b.set_fn_after(&edges);
                }
                LineField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if meta.session == NONE {
            return Err(de::Error::missing_field("session"));
        }
        if !saw_ops {
            return Err(de::Error::missing_field("ops"));
        }
        Ok(meta)
    }
}

/// `null` or the inner seed.
struct OptSeed<S>(S);
impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for OptSeed<S> {
    type Value = Option<S::Value>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_option(self)
    }
}
impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for OptSeed<S> {
    type Value = Option<S::Value>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or null")
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(d).map(Some)
    }
}

struct OpsSeed<'b> {
    b: &'b mut HistoryBuilder,
}
impl<'de> DeserializeSeed<'de> for OpsSeed<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}
impl<'de> Visitor<'de> for OpsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of operations")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(OpSeed { b: &mut *self.b })?.is_some() {}
        Ok(())
    }
}

struct OpSeed<'b> {
    b: &'b mut HistoryBuilder,
}
impl<'de> DeserializeSeed<'de> for OpSeed<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

enum OpField {
    F,
    Key,
    Value,
    Node,
    Fn,
    // Shared-log calls.
    Book,
    Tags,
    Tag,
    Min,
    Max,
    Seqnum,
    Data,
    Pos,
    Other,
}
struct OpFieldVisitor;
impl Visitor<'_> for OpFieldVisitor {
    type Value = OpField;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<OpField, E> {
        Ok(match v {
            "f" => OpField::F,
            "key" => OpField::Key,
            "value" => OpField::Value,
            "node" => OpField::Node,
            "fn" => OpField::Fn,
            "book" => OpField::Book,
            "tags" => OpField::Tags,
            "tag" => OpField::Tag,
            "min" => OpField::Min,
            "max" => OpField::Max,
            "seqnum" => OpField::Seqnum,
            "data" => OpField::Data,
            "pos" => OpField::Pos,
            _ => OpField::Other,
        })
    }
}
impl<'de> de::Deserialize<'de> for OpField {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<OpField, D::Error> {
        d.deserialize_identifier(OpFieldVisitor)
    }
}

impl<'de> Visitor<'de> for OpSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an operation object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let b = self.b;
        let mut kind: Option<u8> = None;
        let mut key: Option<u32> = None;
        let mut val: Option<Val> = None;
        let mut node: Option<u32> = None;
        let mut function: Option<i64> = None;
        let mut log = LogFields::default();
        while let Some(field) = map.next_key::<OpField>()? {
            match field {
                OpField::F => {
                    kind = Some(
                        map.next_value_seed(StrSeed(|s: &str| match s {
                            "r" => Some(KIND_READ),
                            "w" => Some(KIND_WRITE_FINAL),
                            other => log_kind(other),
                        }))?
                        .ok_or_else(|| de::Error::custom(F_EXPECTED))?,
                    );
                }
                OpField::Key => key = Some(map.next_value_seed(KeySeed { b: &mut *b })?),
                OpField::Value => val = Some(map.next_value_seed(ValSeed { b: &mut *b })?),
                OpField::Node => {
                    node = map.next_value_seed(OptSeed(StrSeed(|s: &str| b.node_index(s))))?;
                }
                OpField::Fn => function = map.next_value()?,
                OpField::Book => log.book = Some(map.next_value_seed(KeySeed { b: &mut *b })?),
                OpField::Tags => log.tags = Some(map.next_value()?),
                OpField::Tag => log.tag = Some(map.next_value()?),
                OpField::Min => log.min = Some(map.next_value()?),
                OpField::Max => log.max = Some(map.next_value()?),
                OpField::Seqnum => log.seqnum = Some(map.next_value()?),
                OpField::Data => log.data = Some(map.next_value_seed(ValSeed { b: &mut *b })?),
                OpField::Pos => log.pos = Some(map.next_value()?),
                OpField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let kind = kind.ok_or_else(|| de::Error::missing_field("f"))?;
        if kind >= KIND_LOG {
            let call = log.into_call(kind).map_err(de::Error::custom)?;
            b.push_log(call);
            return Ok(());
        }
        let key = key.ok_or_else(|| de::Error::missing_field("key"))?;
        let val = val.ok_or_else(|| de::Error::missing_field("value"))?;
        b.push_op_node_index(kind, key, val, node).map_err(de::Error::custom)?;
        if let Some(f) = function {
            b.set_op_function(f);
        }
        Ok(())
    }
}

const F_EXPECTED: &str = "f: expected \"r\", \"w\", or a log call (\"append\", \"read_next\", \"read_prev\", \"check_tail\", \"trim\")";

/// Operation kinds of shared-log calls (after the key-value kinds).
const KIND_LOG: u8 = 16;
const KIND_APPEND: u8 = KIND_LOG;
const KIND_READ_NEXT: u8 = KIND_LOG + 1;
const KIND_READ_PREV: u8 = KIND_LOG + 2;
const KIND_CHECK_TAIL: u8 = KIND_LOG + 3;
const KIND_TRIM: u8 = KIND_LOG + 4;

fn log_kind(f: &str) -> Option<u8> {
    Some(match f {
        "append" => KIND_APPEND,
        "read_next" => KIND_READ_NEXT,
        "read_prev" => KIND_READ_PREV,
        "check_tail" => KIND_CHECK_TAIL,
        "trim" => KIND_TRIM,
        _ => return None,
    })
}

/// The fields of a shared-log call, as parsed (see `docs/history-format.md`).
#[derive(Default)]
struct LogFields {
    book: Option<u32>,
    tags: Option<Vec<u64>>,
    tag: Option<u64>,
    min: Option<u64>,
    max: Option<u64>,
    seqnum: Option<Option<u64>>,
    data: Option<Val>,
    pos: Option<Option<(u64, u64)>>,
}

impl LogFields {
    fn into_call(self, kind: u8) -> Result<LogCall, String> {
        let book = self.book.ok_or("missing field `book`")?;
        if kind == KIND_TRIM {
            // `seqnum` is the trim point: the records below it are deleted.
            let point = self.seqnum.flatten().ok_or("a trim needs its trim point, `seqnum` (a non-negative integer)")?;
            let pos = self.pos.flatten();
            return Ok(LogCall {
                txn: 0,
                call: Call::Trim,
                book,
                tags: vec![],
                bound: point,
                seqnum: None,
                data: Val::Null,
                pos,
                function: None,
            });
        }
        let (call, tags, bound) = match kind {
            KIND_APPEND => (Call::Append, self.tags.ok_or("missing field `tags`")?, 0),
            KIND_READ_NEXT => (Call::ReadNext, vec![self.tag.unwrap_or(0)], self.min.unwrap_or(0)),
            KIND_READ_PREV => (Call::ReadPrev, vec![self.tag.unwrap_or(0)], self.max.ok_or("missing field `max`")?),
            _ => (Call::ReadPrev, vec![self.tag.unwrap_or(0)], u64::MAX),
        };
        let data = self.data.unwrap_or(Val::Null);
        if call == Call::Append && data == Val::Null {
            return Err("an append's `data` must not be null".into());
        }
        Ok(LogCall { txn: 0, call, book, tags, bound, seqnum: self.seqnum.flatten(), data, pos: self.pos.flatten(), function: None })
    }
}

struct KeySeed<'b> {
    b: &'b mut HistoryBuilder,
}
impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = u32;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<u32, D::Error> {
        d.deserialize_any(self)
    }
}
impl Visitor<'_> for KeySeed<'_> {
    type Value = u32;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an integer key")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u32, E> {
        Ok(self.b.key_int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u32, E> {
        let v = i64::try_from(v).map_err(|_| E::custom(format!("key {v} is out of range (at most {})", i64::MAX)))?;
        Ok(self.b.key_int(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<u32, E> {
        Ok(self.b.key_str(v))
    }
}

struct ValSeed<'b> {
    b: &'b mut HistoryBuilder,
}
impl<'de> DeserializeSeed<'de> for ValSeed<'_> {
    type Value = Val;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Val, D::Error> {
        d.deserialize_any(self)
    }
}
impl Visitor<'_> for ValSeed<'_> {
    type Value = Val;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer, a string or null")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Val, E> {
        Ok(Val::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Val, E> {
        i64::try_from(v).map(Val::Int).map_err(|_| E::custom(format!("value {v} is out of range (at most {})", i64::MAX)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Val, E> {
        Ok(self.b.val_str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Val, E> {
        Ok(Val::Null)
    }
}

// ---------------------------------------------------------------------------------------------
// Slow path: say which field is wrong.

/// Explain why `text` is not a valid transaction line. `fast` is the fast parser's error.
fn diagnose(text: &[u8], fast: &serde_json::Error) -> String {
    let v: serde_json::Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        Err(e) => {
            let hint = if e.is_eof() { " (is the line truncated?)" } else { "" };
            return format!("malformed JSON at column {}: {}{hint}", e.column(), strip_position(&e.to_string()));
        }
    };
    match validate_line(&v) {
        Some(problem) => problem,
        None => strip_position(&fast.to_string()),
    }
}

fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

fn validate_line(v: &serde_json::Value) -> Option<String> {
    use serde_json::Value as J;
    let J::Object(m) = v else {
        return Some(format!("expected a transaction object, found {}", describe(v)));
    };
    if m.contains_key("format") {
        return Some("a header (a line with `format`) may only be the first line".into());
    }
    let want_u64 = |name: &str| -> Option<String> {
        match m.get(name) {
            None => None,
            Some(J::Number(n)) if n.as_u64().is_some() => None,
            Some(other) => Some(format!("{name}: expected a non-negative integer, found {}", describe(other))),
        }
    };
    for name in ["id", "invoke_ns", "complete_ns"] {
        if let Some(p) = want_u64(name) {
            return Some(p);
        }
    }
    match m.get("session") {
        None => return Some("missing field `session`".into()),
        Some(J::String(_)) => {}
        Some(other) => {
            return Some(format!("session: expected a string, found {}", describe(other)));
        }
    }
    match m.get("node") {
        None | Some(J::String(_) | J::Null) => {}
        Some(other) => {
            return Some(format!("node: expected a string, found {}", describe(other)));
        }
    }
    match m.get("after") {
        None => {}
        Some(J::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                if item.as_u64().is_none() {
                    return Some(format!("after[{i}]: expected a transaction id (non-negative integer), found {}", describe(item)));
                }
            }
        }
        Some(other) => {
            return Some(format!("after: expected an array of transaction ids, found {}", describe(other)));
        }
    }
    match m.get("fn_after") {
        None => {}
        Some(J::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                if !item.as_array().is_some_and(|p| p.len() == 2 && p.iter().all(|x| x.as_i64().is_some())) {
                    return Some(format!("fn_after[{i}]: expected a pair of functions [a, b] (integers), found {}", describe(item)));
                }
            }
        }
        Some(other) => {
            return Some(format!("fn_after: expected an array of [a, b] function pairs, found {}", describe(other)));
        }
    }
    match m.get("outcome") {
        None => {}
        Some(J::String(s)) if matches!(s.as_str(), "ok" | "aborted" | "failed") => {}
        Some(other) => {
            return Some(format!("outcome: expected \"ok\", \"aborted\" or \"failed\", found {}", describe(other)));
        }
    }
    let ops = match m.get("ops") {
        None => return Some("missing field `ops`".into()),
        Some(J::Array(ops)) => ops,
        Some(other) => {
            return Some(format!("ops: expected an array of operations, found {}", describe(other)));
        }
    };
    for (i, op) in ops.iter().enumerate() {
        let J::Object(o) = op else {
            return Some(format!("ops[{i}]: expected an operation object, found {}", describe(op)));
        };
        let write = match o.get("f") {
            None => return Some(format!("ops[{i}]: missing field `f`")),
            Some(J::String(s)) if s == "r" => false,
            Some(J::String(s)) if s == "w" => true,
            Some(J::String(s)) if log_kind(s).is_some() => {
                if let Some(problem) = validate_log_op(o) {
                    return Some(format!("ops[{i}].{problem}"));
                }
                continue;
            }
            Some(other) => {
                return Some(format!(
                    "ops[{i}].f: expected \"r\" or \"w\", found {} (or a log call: append, read_next, read_prev, check_tail, trim)",
                    describe(other)
                ));
            }
        };
        match o.get("key") {
            None => return Some(format!("ops[{i}]: missing field `key`")),
            Some(k) => {
                if let Err(p) = scalar_key(k) {
                    return Some(format!("ops[{i}].key: {p}"));
                }
            }
        }
        match o.get("value") {
            None => return Some(format!("ops[{i}]: missing field `value`")),
            Some(J::Null) if write => {
                return Some(format!("ops[{i}].value: a write's value must not be null (null is the initial, absent state)"));
            }
            Some(val) => {
                if let Err(p) = scalar_value(val) {
                    return Some(format!("ops[{i}].value: {p}"));
                }
            }
        }
        match o.get("node") {
            None | Some(J::String(_) | J::Null) => {}
            Some(other) => {
                return Some(format!("ops[{i}].node: expected a string, found {}", describe(other)));
            }
        }
        match o.get("fn") {
            None | Some(J::Null) => {}
            Some(J::Number(n)) if n.as_i64().is_some() => {}
            Some(other) => {
                return Some(format!("ops[{i}].fn: expected a function index (an integer), found {}", describe(other)));
            }
        }
    }
    None
}

/// What is wrong with a shared-log call's fields, if anything (as `field: problem`).
fn validate_log_op(o: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    use serde_json::Value as J;
    match o.get("book") {
        None => return Some("book: missing field `book`".into()),
        Some(k) => {
            if let Err(p) = scalar_key(k) {
                return Some(format!("book: {p}"));
            }
        }
    }
    let u64_or_null = |name: &str| match o.get(name) {
        None | Some(J::Null) => None,
        Some(J::Number(n)) if n.as_u64().is_some() => None,
        Some(other) => Some(format!("{name}: expected a non-negative integer, found {}", describe(other))),
    };
    for name in ["tag", "min", "max", "seqnum"] {
        if let Some(p) = u64_or_null(name) {
            return Some(p);
        }
    }
    if let Some(tags) = o.get("tags")
        && !tags.as_array().is_some_and(|t| t.iter().all(|x| x.as_u64().is_some()))
    {
        return Some(format!("tags: expected an array of non-negative integers, found {}", describe(tags)));
    }
    if let Some(pos) = o.get("pos")
        && !pos.is_null()
        && !pos.as_array().is_some_and(|p| p.len() == 2 && p.iter().all(|x| x.as_u64().is_some()))
    {
        return Some(format!("pos: expected [term, position], found {}", describe(pos)));
    }
    if let Some(data) = o.get("data")
        && let Err(p) = scalar_value(data)
    {
        return Some(format!("data: {p}"));
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Writer

/// Write `h` as JSON Lines (a header, then one line per transaction): `causim-history/2` when
/// some transaction's operations are partially ordered, else `causim-history/1`, which every
/// reader of either version reads.
pub(crate) fn write(h: &History, mut w: impl Write) -> io::Result<()> {
    let mut header = serde_json::Map::new();
    header.insert("format".into(), if h.has_partial_orders() { FORMAT_NAME } else { FORMAT_NAME_V1 }.into());
    for (k, v) in h.header_info() {
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(v) {
            header.insert(k.clone(), value);
        }
    }
    let initial = h.initial_values();
    if !initial.is_empty() {
        let all_str = initial.iter().all(|(k, _)| matches!(k, Key::Str(_)));
        let value = if all_str {
            let mut m = serde_json::Map::new();
            for (k, v) in &initial {
                if let Key::Str(s) = k {
                    m.insert(s.to_string(), serde_json::to_value(v).expect("values serialize"));
                }
            }
            serde_json::Value::Object(m)
        } else {
            serde_json::to_value(&initial).expect("pairs serialize")
        };
        header.insert("initial".into(), value);
    }
    serde_json::to_writer(&mut w, &serde_json::Value::Object(header))?;
    w.write_all(b"\n")?;
    for rec in h.records() {
        serde_json::to_writer(&mut w, &rec)?;
        w.write_all(b"\n")?;
    }
    w.flush()
}
