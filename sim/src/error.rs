//! The one error type for a problem at a field of the input: a JSON path and what is wrong there.
//!
//! The engine reports configuration problems this way (`topology.links[2].from`), models report
//! their `protocol` section's problems this way (`params.ring_size`, `mutants[1]`), and the
//! scenario loader locates the path in the file to add line and column.

use std::fmt;

/// A problem at a JSON path of the input (`topology.servers`; empty for the whole input).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError { path: path.into(), message: message.into() }
    }

    /// The same error seen from the enclosing object: `within("protocol")` turns
    /// `params.mode` into `protocol.params.mode`.
    pub fn within(self, parent: &str) -> FieldError {
        let path = match (parent.is_empty(), self.path.is_empty()) {
            (true, _) => self.path,
            (false, true) => parent.to_string(),
            (false, false) => format!("{parent}.{}", self.path),
        };
        FieldError { path, message: self.message }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() { write!(f, "{}", self.message) } else { write!(f, "{}: {}", self.path, self.message) }
    }
}

impl std::error::Error for FieldError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_prefixes_the_path() {
        assert_eq!(FieldError::new("params.mode", "bad").within("protocol").path, "protocol.params.mode");
        assert_eq!(FieldError::new("", "bad").within("protocol").path, "protocol");
        assert_eq!(FieldError::new("x", "bad").within("").path, "x");
    }
}
