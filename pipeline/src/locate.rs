//! Finds where a JSON path (`topology.links[0].from`) sits in a JSON text, so errors found
//! after parsing (an unknown machine name, an impossible parameter) can still name the file's
//! line and column.

#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Field(String),
    Index(usize),
}

/// Splits `a.b[2].c` into segments. Returns `None` for a malformed path.
fn parse_path(path: &str) -> Option<Vec<Segment>> {
    let mut segments = Vec::new();
    let mut rest = path.trim_start_matches('.');
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            segments.push(Segment::Index(after[..end].parse().ok()?));
            rest = after[end + 1..].trim_start_matches('.');
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            segments.push(Segment::Field(rest[..end].to_string()));
            rest = rest[end..].trim_start_matches('.');
        }
    }
    Some(segments)
}

/// The 1-based (line, column) of the value at `path`, or of its deepest existing ancestor.
pub fn locate(text: &str, path: &str) -> Option<(usize, usize)> {
    let target = parse_path(path)?;
    let mut scanner = Scanner { bytes: text.as_bytes(), pos: 0 };
    scanner.skip_ws();
    let offset = scanner.find(&target)?;
    Some(line_col(text, offset))
}

/// The first key that appears twice in one object (serde keeps the last one silently in free-form
/// sections such as `protocol.params`): its JSON path and the 1-based (line, column) of its
/// second occurrence. `None` when every key is unique (or the text is not JSON).
pub fn duplicate_key(text: &str) -> Option<(String, (usize, usize))> {
    let mut scanner = Scanner { bytes: text.as_bytes(), pos: 0 };
    let mut found = None;
    scanner.skip_ws();
    scanner.duplicates("", &mut found);
    found.map(|(path, offset)| (path, line_col(text, offset)))
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Walks down `target` from the value at `pos`; returns the offset of the deepest value
    /// reached along the path.
    /// Inside an object or array: skips whitespace and separating commas. `Some(true)` after
    /// consuming the closing `close`, `Some(false)` at the next item, `None` at the end of text.
    fn next_item(&mut self, close: u8) -> Option<bool> {
        loop {
            self.skip_ws();
            match self.peek()? {
                c if c == close => {
                    self.pos += 1;
                    return Some(true);
                }
                b',' => self.pos += 1,
                _ => return Some(false),
            }
        }
    }

    fn find(&mut self, target: &[Segment]) -> Option<usize> {
        let here = self.pos;
        let Some((first, rest)) = target.split_first() else { return Some(here) };
        match (self.peek()?, first) {
            (b'{', Segment::Field(name)) => {
                self.pos += 1;
                loop {
                    if self.next_item(b'}')? {
                        return Some(here);
                    }
                    let key = self.string()?;
                    self.skip_ws();
                    if self.peek()? != b':' {
                        return Some(here);
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if &key == name {
                        return self.find(rest).or(Some(here));
                    }
                    self.skip_value()?;
                }
            }
            (b'[', Segment::Index(want)) => {
                self.pos += 1;
                let mut index = 0;
                loop {
                    if self.next_item(b']')? {
                        return Some(here);
                    }
                    if index == *want {
                        return self.find(rest).or(Some(here));
                    }
                    self.skip_value()?;
                    index += 1;
                }
            }
            _ => Some(here),
        }
    }

    /// Walks the value at `pos`, setting `found` to the first duplicate key (path, offset).
    /// Returns `None` at the end of the text or when a duplicate is found.
    fn duplicates(&mut self, path: &str, found: &mut Option<(String, usize)>) -> Option<()> {
        self.skip_ws();
        match self.peek()? {
            b'{' => {
                self.pos += 1;
                let mut keys = std::collections::BTreeSet::new();
                loop {
                    if self.next_item(b'}')? {
                        return Some(());
                    }
                    let at = self.pos;
                    let key = self.string()?;
                    let here = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                    if !keys.insert(key) {
                        *found = Some((here, at));
                        return None;
                    }
                    self.skip_ws();
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.pos += 1;
                    self.duplicates(&here, found)?;
                }
            }
            b'[' => {
                self.pos += 1;
                let mut index = 0;
                loop {
                    if self.next_item(b']')? {
                        return Some(());
                    }
                    self.duplicates(&format!("{path}[{index}]"), found)?;
                    index += 1;
                }
            }
            _ => self.skip_value(),
        }
    }

    fn string(&mut self) -> Option<String> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    let raw = std::str::from_utf8(&self.bytes[start..self.pos]).ok()?;
                    return serde_json::from_str(raw).ok();
                }
                _ => self.pos += 1,
            }
        }
    }

    fn skip_value(&mut self) -> Option<()> {
        self.skip_ws();
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.pos += 1;
                loop {
                    self.skip_ws();
                    match self.peek()? {
                        c if c == close => {
                            self.pos += 1;
                            break;
                        }
                        b',' | b':' => self.pos += 1,
                        _ => self.skip_value()?,
                    }
                }
            }
            _ => {
                while !matches!(self.peek(), None | Some(b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')) {
                    self.pos += 1;
                }
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"{
  "name": "x",
  "topology": {
    "links": [
      {"from": "S0", "to": "S1"},
      {"from": "S9", "to": "S1"}
    ],
    "nodes": {"db": {"cores": 0}}
  }
}"#;

    #[test]
    fn finds_fields_and_indexes() {
        assert_eq!(locate(TEXT, "name"), Some((2, 11)));
        assert_eq!(locate(TEXT, "topology.links[1].from"), Some((6, 16)));
        assert_eq!(locate(TEXT, "topology.nodes.db.cores"), Some((8, 31)));
    }

    #[test]
    fn duplicate_keys_are_found_at_any_depth() {
        assert_eq!(duplicate_key(TEXT), None);
        let text = "{\"p\": {\"params\": {\"mode\": 1,\n \"mode\": 2}}, \"l\": [{\"a\": 1}]}";
        assert_eq!(duplicate_key(text), Some(("p.params.mode".to_string(), (2, 2))));
        assert_eq!(duplicate_key("{\"l\": [{}, {\"a\": 1, \"a\": 1}]}").map(|d| d.0), Some("l[1].a".to_string()));
    }

    #[test]
    fn missing_paths_fall_back_to_the_deepest_ancestor() {
        assert_eq!(locate(TEXT, "topology.delay"), Some((3, 15)));
        assert_eq!(locate(TEXT, "topology.links[7]"), Some((4, 14)));
        assert_eq!(locate(TEXT, ""), Some((1, 1)));
    }
}
