//! A small reader for EDN (extensible data notation, Clojure's data syntax), the format Jepsen
//! writes its histories in (`history.edn`: one operation map per line, or one vector of them).
//!
//! It reads a sequence of top-level forms and keeps each form's line, so that errors about an
//! operation can name it. Supported: `nil`, booleans, integers (`N` suffix too), floats,
//! ratios and `M` decimals (kept as text: Jepsen never needs them), strings with escapes,
//! characters, keywords, symbols, lists, vectors, maps, sets, tagged values (`#inst "…"`,
//! `#uuid "…"`, and record literals such as `#jepsen.history.Op{…}`), comments (`;`) and
//! discarded forms (`#_`). Commas are whitespace. Nesting is limited to `DEPTH_MAX` levels so
//! that a hostile file cannot overflow the stack.
//!
//! Written here rather than taken from a crate: it is about 300 lines, the crates on offer
//! (`edn-rs`, `edn-format`) bring their own data models and do not report line numbers, and
//! the checker depends on nothing but serde.

use crate::history::ParseError;

/// Deepest nesting accepted.
const DEPTH_MAX: usize = 256;

/// An EDN value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Edn {
    Nil,
    Bool(bool),
    Int(i64),
    /// Any other number (float, ratio, big integer or decimal), as written.
    Number(String),
    Str(String),
    Char(char),
    /// Without the leading colon.
    Keyword(String),
    Symbol(String),
    List(Vec<Edn>),
    Vector(Vec<Edn>),
    Map(Vec<(Edn, Edn)>),
    Set(Vec<Edn>),
    Tagged(String, Box<Edn>),
}

impl Edn {
    /// The value of key `:name` in a map (records included).
    pub(crate) fn get(&self, name: &str) -> Option<&Edn> {
        match self {
            Edn::Map(pairs) => pairs.iter().find(|(k, _)| matches!(k, Edn::Keyword(s) if s == name)).map(|(_, v)| v),
            Edn::Tagged(_, inner) => inner.get(name),
            _ => None,
        }
    }

    /// The elements of a vector or a list.
    pub(crate) fn items(&self) -> Option<&[Edn]> {
        match self {
            Edn::Vector(v) | Edn::List(v) => Some(v),
            _ => None,
        }
    }

    /// A short description for error messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            Edn::Nil => "nil".into(),
            Edn::Bool(b) => b.to_string(),
            Edn::Int(i) => format!("the integer {i}"),
            Edn::Number(n) => format!("the number {n}"),
            Edn::Str(s) => format!("the string {s:?}"),
            Edn::Char(c) => format!("the character {c:?}"),
            Edn::Keyword(k) => format!("the keyword :{k}"),
            Edn::Symbol(s) => format!("the symbol {s}"),
            Edn::List(_) => "a list".into(),
            Edn::Vector(_) => "a vector".into(),
            Edn::Map(_) => "a map".into(),
            Edn::Set(_) => "a set".into(),
            Edn::Tagged(t, _) => format!("a #{t} value"),
        }
    }
}

/// Reads top-level forms one after another.
pub(crate) struct Reader<'a> {
    text: &'a [u8],
    pos: usize,
    line: u64,
    line_start: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(text: &'a [u8]) -> Reader<'a> {
        let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        Reader { text, pos: 0, line: 1, line_start: 0 }
    }

    /// The next top-level form and the line it starts on, or `None` at the end.
    pub(crate) fn next_form(&mut self) -> Result<Option<(u64, Edn)>, ParseError> {
        self.skip_space(0)?;
        if self.pos >= self.text.len() {
            return Ok(None);
        }
        let line = self.line;
        let form = self.form(0)?;
        Ok(Some((line, form)))
    }

    fn error(&self, problem: impl std::fmt::Display) -> ParseError {
        let column = self.pos.saturating_sub(self.line_start) + 1;
        ParseError::at(self.line, format!("EDN, column {column}: {problem}"))
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.pos += 1;
        if c == b'\n' {
            self.line += 1;
            self.line_start = self.pos;
        }
        Some(c)
    }

    /// Skip whitespace, commas, comments and `#_` discarded forms (read at `depth`).
    fn skip_space(&mut self, depth: usize) -> Result<(), ParseError> {
        loop {
            match self.peek() {
                Some(c) if c.is_ascii_whitespace() || c == b',' => {
                    self.bump();
                }
                Some(b';') => {
                    while let Some(c) = self.bump() {
                        if c == b'\n' {
                            break;
                        }
                    }
                }
                Some(b'#') if self.text.get(self.pos + 1) == Some(&b'_') => {
                    self.pos += 2;
                    self.form(depth + 1)?;
                }
                _ => return Ok(()),
            }
        }
    }

    fn form(&mut self, depth: usize) -> Result<Edn, ParseError> {
        if depth > DEPTH_MAX {
            return Err(self.error(format!("nested more than {DEPTH_MAX} levels deep")));
        }
        self.skip_space(depth)?;
        let Some(c) = self.peek() else {
            return Err(self.error("unexpected end of input (is the file truncated?)"));
        };
        match c {
            b'(' => {
                self.bump();
                Ok(Edn::List(self.seq(b')', depth)?))
            }
            b'[' => {
                self.bump();
                Ok(Edn::Vector(self.seq(b']', depth)?))
            }
            b'{' => {
                self.bump();
                self.map(depth)
            }
            b')' | b']' | b'}' => Err(self.error(format!("unmatched {:?}", c as char))),
            b'"' => {
                self.bump();
                Ok(Edn::Str(self.string()?))
            }
            b'\\' => {
                self.bump();
                Ok(Edn::Char(self.character()?))
            }
            b'#' => {
                self.bump();
                match self.peek() {
                    Some(b'{') => {
                        self.bump();
                        Ok(Edn::Set(self.seq(b'}', depth)?))
                    }
                    Some(c) if c.is_ascii_alphabetic() => {
                        let tag = self.token();
                        let value = self.form(depth + 1)?;
                        Ok(Edn::Tagged(tag, Box::new(value)))
                    }
                    _ => Err(self.error("expected a set `#{`, a tag or `#_` after `#`")),
                }
            }
            b':' => {
                self.bump();
                let name = self.token();
                if name.is_empty() {
                    return Err(self.error("a keyword needs a name after `:`"));
                }
                Ok(Edn::Keyword(name.trim_start_matches(':').to_string()))
            }
            _ => {
                let start = self.pos;
                let token = self.token();
                if token.is_empty() {
                    self.pos = start;
                    return Err(self.error(format!("unexpected character {:?}", c as char)));
                }
                Ok(atom(token))
            }
        }
    }

    /// Elements up to `close`.
    fn seq(&mut self, close: u8, depth: usize) -> Result<Vec<Edn>, ParseError> {
        let mut out = Vec::new();
        loop {
            self.skip_space(depth + 1)?;
            match self.peek() {
                None => {
                    return Err(self.error(format!("missing {:?} (is the file truncated?)", close as char)));
                }
                Some(c) if c == close => {
                    self.bump();
                    return Ok(out);
                }
                Some(_) => out.push(self.form(depth + 1)?),
            }
        }
    }

    fn map(&mut self, depth: usize) -> Result<Edn, ParseError> {
        let items = self.seq(b'}', depth)?;
        if items.len() % 2 != 0 {
            return Err(self.error("a map needs an even number of forms (a key without a value)"));
        }
        let mut pairs = Vec::with_capacity(items.len() / 2);
        let mut it = items.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            pairs.push((k, v));
        }
        Ok(Edn::Map(pairs))
    }

    /// A symbol-like token: everything up to a delimiter.
    fn token(&mut self) -> String {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_ascii_whitespace() || matches!(c, b',' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' | b';') {
                break;
            }
            self.bump();
        }
        String::from_utf8_lossy(&self.text[start..self.pos]).into_owned()
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let mut out: Vec<u8> = Vec::new();
        loop {
            match self.bump() {
                None => return Err(self.error("unterminated string (is the file truncated?)")),
                Some(b'"') => break,
                Some(b'\\') => match self.bump() {
                    Some(b'n') => out.push(b'\n'),
                    Some(b't') => out.push(b'\t'),
                    Some(b'r') => out.push(b'\r'),
                    Some(b'b') => out.push(8),
                    Some(b'f') => out.push(12),
                    Some(b'"') => out.push(b'"'),
                    Some(b'\\') => out.push(b'\\'),
                    Some(b'u') => {
                        let c = self.hex4()?;
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                    _ => return Err(self.error("unknown escape in a string")),
                },
                Some(c) => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|_| self.error("a string is not valid UTF-8"))
    }

    fn hex4(&mut self) -> Result<char, ParseError> {
        let end = self.pos + 4;
        let digits = self.text.get(self.pos..end).ok_or_else(|| self.error("truncated \\u escape"))?;
        let code =
            std::str::from_utf8(digits).ok().and_then(|d| u32::from_str_radix(d, 16).ok()).ok_or_else(|| self.error("bad \\u escape"))?;
        self.pos = end;
        Ok(char::from_u32(code).unwrap_or('\u{FFFD}'))
    }

    fn character(&mut self) -> Result<char, ParseError> {
        let start = self.pos;
        let token = self.token();
        let c = match token.as_str() {
            "newline" => '\n',
            "space" => ' ',
            "tab" => '\t',
            "return" => '\r',
            "formfeed" => '\u{c}',
            "backspace" => '\u{8}',
            t if t.starts_with('u') && t.len() == 5 => {
                self.pos = start + 1;
                return self.hex4();
            }
            t => {
                let mut chars = t.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => c,
                    // A delimiter right after the backslash is the character itself.
                    (None, _) => match self.bump() {
                        Some(c) => c as char,
                        None => return Err(self.error("a character needs a name after `\\`")),
                    },
                    _ => return Err(self.error(format!("unknown character \\{t}"))),
                }
            }
        };
        Ok(c)
    }
}

/// `nil`, `true`, `false`, a number or a symbol.
fn atom(token: String) -> Edn {
    match token.as_str() {
        "nil" => return Edn::Nil,
        "true" => return Edn::Bool(true),
        "false" => return Edn::Bool(false),
        _ => {}
    }
    let bytes = token.as_bytes();
    let digit_at = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_digit);
    let numeric = digit_at(0) || (matches!(bytes[0], b'+' | b'-') && digit_at(1));
    if !numeric {
        return Edn::Symbol(token);
    }
    let plain = token.strip_suffix('N').unwrap_or(&token);
    match plain.strip_prefix('+').unwrap_or(plain).parse::<i64>() {
        Ok(i) => Edn::Int(i),
        Err(_) => Edn::Number(token),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<Edn> {
        let mut r = Reader::new(text.as_bytes());
        let mut out = Vec::new();
        while let Some((_, f)) = r.next_form().unwrap() {
            out.push(f);
        }
        out
    }

    #[test]
    fn reads_a_jepsen_operation() {
        let forms = all(r#"{:type :ok, :f :txn, :value [[:append 1 2] [:r 3 [1 2]] [:r 4 nil]], :time 12, :process 0, :index 3}"#);
        assert_eq!(forms.len(), 1);
        let op = &forms[0];
        assert_eq!(op.get("type"), Some(&Edn::Keyword("ok".into())));
        assert_eq!(op.get("time"), Some(&Edn::Int(12)));
        let value = op.get("value").unwrap().items().unwrap();
        assert_eq!(value[1].items().unwrap()[2], Edn::Vector(vec![Edn::Int(1), Edn::Int(2)]));
        assert_eq!(value[2].items().unwrap()[2], Edn::Nil);
    }

    #[test]
    fn reads_the_rest_of_the_syntax() {
        let forms = all("; a comment\n#_ {:skipped 1} (1 -2 +3 4N 5.5 1/2 \"a\\\"b\\u0041\" \\c \\newline sym ns/sym true false nil)\n\
             #{:a :b} #inst \"2020-01-01\" #jepsen.history.Op{:index 0 :process :nemesis}");
        assert_eq!(forms.len(), 4);
        let Edn::List(items) = &forms[0] else { panic!() };
        assert_eq!(items[0], Edn::Int(1));
        assert_eq!(items[1], Edn::Int(-2));
        assert_eq!(items[2], Edn::Int(3));
        assert_eq!(items[3], Edn::Int(4));
        assert_eq!(items[4], Edn::Number("5.5".into()));
        assert_eq!(items[5], Edn::Number("1/2".into()));
        assert_eq!(items[6], Edn::Str("a\"bA".into()));
        assert_eq!(items[7], Edn::Char('c'));
        assert_eq!(items[8], Edn::Char('\n'));
        assert_eq!(items[10], Edn::Symbol("ns/sym".into()));
        assert_eq!(items[13], Edn::Nil);
        assert!(matches!(&forms[1], Edn::Set(s) if s.len() == 2));
        assert!(matches!(&forms[2], Edn::Tagged(t, _) if t == "inst"));
        assert_eq!(forms[3].get("process"), Some(&Edn::Keyword("nemesis".into())));
    }

    #[test]
    fn errors_name_line_and_column() {
        let mut r = Reader::new(b"{:a 1}\n{:b [1 2}\n");
        r.next_form().unwrap();
        let e = r.next_form().unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.problem.contains("column 9"), "{}", e.problem);
        let e = Reader::new(b"{:a").next_form().unwrap_err();
        assert!(e.problem.contains("truncated"), "{}", e.problem);
        let e = Reader::new(b"{:a 1 :b}").next_form().unwrap_err();
        assert!(e.problem.contains("even number"), "{}", e.problem);
        for deep in ["[".repeat(DEPTH_MAX + 10), "#_".repeat(100_000)] {
            let e = Reader::new(deep.as_bytes()).next_form().unwrap_err();
            assert!(e.problem.contains("nested"), "{}", e.problem);
        }
    }
}
