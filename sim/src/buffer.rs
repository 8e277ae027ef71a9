//! An in-memory sink for the history and trace writers, shared with whoever reads it back
//! (checks of histories that are not kept, tests, model checkers).

use std::sync::{Arc, Mutex};

/// A byte buffer behind a shared handle: give one clone to a writer, read through another.
#[derive(Clone, Debug, Default)]
pub struct SharedBuffer(Arc<Mutex<Vec<u8>>>);

impl SharedBuffer {
    /// Everything written so far, as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("not poisoned")).into_owned()
    }

    /// Takes everything written so far, leaving the buffer empty.
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.0.lock().expect("not poisoned"))
    }
}

impl std::io::Write for SharedBuffer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("not poisoned").extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
