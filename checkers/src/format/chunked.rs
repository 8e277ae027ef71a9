//! Reading a line-oriented history on two threads: the reading thread cuts the input into
//! chunks of whole lines and builds the history; a scanning thread parses each chunk's lines
//! meanwhile. Chunks are built in input order, so the history and every error are those of a
//! reader that takes one line at a time; only the time differs.

use crate::history::ParseError;
use std::io::{BufRead, Read};
use std::sync::mpsc;

/// Bytes of input handed to the scanning thread at a time (then extended to a line's end).
pub(crate) const CHUNK: usize = 1 << 20;
/// The longest line read (64 MiB): a file without line breaks is an error after this much, not
/// a buffer that grows with the file.
pub(crate) const LINE_MAX: usize = 1 << 26;

/// A chunk's lines, as the scanning thread left them for the builder.
pub(crate) trait Scanned: Send {
    /// Lines in the chunk, blank ones included.
    fn line_count(&self) -> u64;
}

/// Read `r` in chunks of about `chunk` bytes: `scan` each on a second thread, then `build`
/// each on this one, in order. A read error is reported after the lines before it are built
/// (an earlier bad line is still the error reported), naming the line being read.
pub(crate) fn read<S: Scanned>(
    r: impl BufRead,
    chunk: usize,
    scan: impl Fn(Vec<u8>) -> S + Send,
    build: impl FnMut(&S) -> Result<(), ParseError>,
) -> Result<(), ParseError> {
    let (to_scan, scan_in) = mpsc::sync_channel::<Vec<u8>>(2);
    let (to_build, build_in) = mpsc::sync_channel::<S>(2);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for text in scan_in {
                if to_build.send(scan(text)).is_err() {
                    return; // the builder stopped at an error
                }
            }
        });
        // Owns its ends of both channels, so that whichever way it returns, the scanning thread
        // sees them closed and ends (the scope waits for it).
        feed_and_build(r, chunk, to_scan, build_in, build)
    })
}

/// Send chunks to the scanning thread, a few ahead, and build the scanned ones in order.
fn feed_and_build<S: Scanned>(
    mut r: impl BufRead,
    chunk_size: usize,
    to_scan: mpsc::SyncSender<Vec<u8>>,
    build_in: mpsc::Receiver<S>,
    mut build: impl FnMut(&S) -> Result<(), ParseError>,
) -> Result<(), ParseError> {
    let mut lines_built = 0u64;
    let mut in_flight = 0usize;
    let mut read_error: Option<std::io::Error> = None;
    let mut eof = false;
    loop {
        while !eof && in_flight < 3 {
            let (chunk, error) = next_chunk(&mut r, chunk_size);
            eof = chunk.is_empty() || error.is_some();
            read_error = error;
            if !chunk.is_empty() {
                to_scan.send(chunk).expect("the scanning thread runs until its input closes");
                in_flight += 1;
            }
        }
        if in_flight == 0 {
            // Every whole line before the error has been built: the error is in the next one.
            return read_error.map_or(Ok(()), |e| Err(ParseError::at(lines_built + 1, format!("cannot read: {e}"))));
        }
        let scanned = build_in.recv().expect("the scanning thread answers every chunk");
        in_flight -= 1;
        build(&scanned)?;
        lines_built += scanned.line_count();
    }
}

/// The next chunk of about `size` bytes of whole lines (empty at the end of the input); on a
/// read error, the whole lines read before it, and the error.
fn next_chunk(r: &mut impl BufRead, size: usize) -> (Vec<u8>, Option<std::io::Error>) {
    let mut chunk = Vec::with_capacity(size + 4096);
    let whole_lines = |mut chunk: Vec<u8>, e: std::io::Error| {
        let whole = chunk.iter().rposition(|c| *c == b'\n').map_or(0, |i| i + 1);
        chunk.truncate(whole);
        (chunk, Some(e))
    };
    // Straight into the chunk, without zeroing it first.
    if let Err(e) = r.by_ref().take(size as u64).read_to_end(&mut chunk) {
        return whole_lines(chunk, e);
    }
    if chunk.len() == size && chunk.last() != Some(&b'\n') {
        let before = chunk.len();
        if let Err(e) = r.by_ref().take(LINE_MAX as u64).read_until(b'\n', &mut chunk) {
            return whole_lines(chunk, e);
        }
        if chunk.len() - before == LINE_MAX && chunk.last() != Some(&b'\n') {
            let e = std::io::Error::other(format!("a line longer than {LINE_MAX} bytes (is this a line-per-record history?)"));
            return whole_lines(chunk, e);
        }
    }
    (chunk, None)
}

/// The lines of `text` (split at `\n`; a last line without one counts), as byte ranges.
pub(crate) fn lines(text: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let end = text[start..].iter().position(|c| *c == b'\n').map_or(text.len(), |i| start + i);
        let line = (start, end);
        start = end + 1;
        Some(line)
    })
}
