//! Output files opened without following symbolic links.
//!
//! Checking for a link and then writing leaves a window in which one can be planted, and a
//! link at an output path would send causim's bytes to wherever it points (a file outside
//! `--out`, someone else's file). So every output file is opened with `O_NOFOLLOW`: a link at
//! the path makes the open itself fail, and the link's target is never touched. The error says
//! so in words instead of the system's "too many levels of symbolic links".

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// Creates (or truncates) `path` for writing; a symbolic link there is refused.
pub fn create(path: &Path) -> io::Result<File> {
    open(OpenOptions::new().write(true).create(true).truncate(true), path)
}

/// Opens an existing `path` to append; a symbolic link there is refused.
pub fn append(path: &Path) -> io::Result<File> {
    open(OpenOptions::new().append(true), path)
}

/// Writes `bytes` as the whole of `path`; a symbolic link there is refused.
pub fn write(path: &Path, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    create(path)?.write_all(bytes.as_ref())
}

/// Whether `path` could be created by [`create`]: fails on a symbolic link. Creates the file
/// (empty) when it does not exist; an existing file is left as it is.
pub fn probe(path: &Path) -> io::Result<()> {
    open(OpenOptions::new().write(true).create(true), path).map(drop)
}

#[cfg(unix)]
fn open(options: &mut OpenOptions, path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    options.custom_flags(libc::O_NOFOLLOW).open(path).map_err(|e| {
        // ELOOP is how the system refuses a link under O_NOFOLLOW.
        if e.raw_os_error() == Some(libc::ELOOP) {
            io::Error::other("it is a symbolic link, and causim does not write through links (remove it)")
        } else {
            e
        }
    })
}

#[cfg(not(unix))]
fn open(options: &mut OpenOptions, path: &Path) -> io::Result<File> {
    // No O_NOFOLLOW: refuse a link seen before opening (a narrow race remains).
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(io::Error::other("it is a symbolic link, and causim does not write through links (remove it)"));
    }
    options.open(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_link_at_the_path_is_refused_and_its_target_untouched() {
        let dir = std::env::temp_dir().join(format!("causim-out-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (target, link) = (dir.join("target.txt"), dir.join("out.txt"));
        std::fs::write(&target, "keep").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        for result in [write(&link, "lost").err(), append(&link).err(), probe(&link).err()] {
            let e = result.expect("refused");
            assert!(e.to_string().contains("symbolic link"), "{e}");
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        // A plain file is written as usual.
        write(&dir.join("plain.txt"), "new").unwrap();
        write!(append(&dir.join("plain.txt")).unwrap(), " more").unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("plain.txt")).unwrap(), "new more");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
