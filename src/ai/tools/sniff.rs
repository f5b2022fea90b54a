//! Mime types by content, for `list_directory` and the dir loop's listing.
//!
//! The original asks libmagic. We read at most the first 8 KiB and ask
//! `infer` (magic numbers of binary formats, plus HTML, XML and shebang
//! scripts); anything else is `text/plain` when it looks like text and
//! `application/octet-stream` when we cannot tell. Non-regular files get
//! libmagic's `inode/*` names and are never opened, so a FIFO cannot block.

use std::fs::{Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// How much of a file is read to recognise it (its type, or that it is
/// binary).
pub(crate) const SNIFF_BYTES: usize = 8192;

/// The mime type of the file at `path`, whose (symlink-resolved) metadata is
/// `meta`.
pub(crate) fn mime_of(path: &Path, meta: &Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "inode/directory";
    }
    if kind.is_fifo() {
        return "inode/fifo";
    }
    if kind.is_socket() {
        return "inode/socket";
    }
    if kind.is_char_device() {
        return "inode/chardevice";
    }
    if kind.is_block_device() {
        return "inode/blockdevice";
    }
    if meta.len() == 0 {
        return "inode/x-empty";
    }
    match read_head(path) {
        Some(head) if head.is_empty() => "inode/x-empty",
        Some(head) => mime_of_bytes(&head),
        None => "application/octet-stream",
    }
}

/// The mime type of a file that starts with `head`.
pub(crate) fn mime_of_bytes(head: &[u8]) -> &'static str {
    if let Some(kind) = infer::get(head) {
        return kind.mime_type();
    }
    if looks_like_text(head) {
        "text/plain"
    } else {
        "application/octet-stream"
    }
}

/// Text: no control bytes other than whitespace, backspace and escape (no
/// NUL, no DEL). Bytes from 0x80 up are accepted, so UTF-8 (even a sequence
/// cut by the sniff window) and 8-bit encodings such as Latin-1 count.
pub(crate) fn looks_like_text(head: &[u8]) -> bool {
    head.iter().all(|&b| {
        (b >= 0x20 && b != 0x7f) || matches!(b, b'\t' | b'\n' | b'\r' | 0x0b | 0x0c | 0x08 | 0x1b)
    })
}

/// The first bytes of a regular file, opened so that a file swapped for a
/// FIFO after the caller's stat cannot block us.
fn read_head(path: &Path) -> Option<Vec<u8>> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    file.take(SNIFF_BYTES as u64).read_to_end(&mut head).ok()?;
    Some(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_classified() {
        assert_eq!(mime_of_bytes(b"hello world\n"), "text/plain");
        assert_eq!(
            mime_of_bytes("na\u{ef}ve caf\u{e9}\n".as_bytes()),
            "text/plain"
        );
        assert_eq!(mime_of_bytes(b"caf\xe9 latin-1\n"), "text/plain");
        assert_eq!(mime_of_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), "image/png");
        let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
        elf.resize(64, 0);
        assert_eq!(mime_of_bytes(&elf), "application/x-executable");
        assert_eq!(mime_of_bytes(b"#!/bin/sh\necho hi\n"), "text/x-shellscript");
        assert_eq!(
            mime_of_bytes(b"\x01\x02\x03\x00\xff"),
            "application/octet-stream"
        );
        assert_eq!(
            mime_of_bytes(b"\x01\x02\x03\x04"),
            "application/octet-stream"
        );
    }

    #[test]
    fn a_cut_utf8_sequence_is_still_text() {
        let text = "é".repeat(10);
        assert!(looks_like_text(&text.as_bytes()[..5]));
    }

    #[test]
    fn special_files_are_named_without_opening() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo");
        crate::testing::mkfifo(&fifo);
        let meta = std::fs::metadata(&fifo).unwrap();
        assert_eq!(mime_of(&fifo, &meta), "inode/fifo");
        let empty = tmp.path().join("empty");
        std::fs::write(&empty, "").unwrap();
        assert_eq!(
            mime_of(&empty, &std::fs::metadata(&empty).unwrap()),
            "inode/x-empty"
        );
        let dev_null = Path::new("/dev/null");
        assert_eq!(
            mime_of(dev_null, &std::fs::metadata(dev_null).unwrap()),
            "inode/chardevice"
        );
    }
}
