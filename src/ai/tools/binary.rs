//! `read_file` on a binary file: what it is and how large, and its bytes
//! only when the agent asks for a hex view.
//!
//! A binary file's bytes as text are NULs, replacement characters and
//! fragments: they cost the model tokens and tell it nothing the file's
//! type and size do not. So a file whose start does not read as text
//! ([`looks_like_text`]) is answered with one line naming its content type
//! (as `infer` knows it) and size. With `hex: true` the agent gets the start
//! as a hex dump (offset, sixteen bytes in hex, the printable ones as
//! characters), at most [`HEX_CAP`] bytes.
//!
//! The dump goes through the redactor like any text: the bytes are read as
//! Latin-1 (one character a byte, so every match maps back to its bytes)
//! and every byte of a redacted range is shown as `**` and `*`, so a token
//! stored in a binary file leaves neither as characters nor as hex. The
//! rules that masked something are named after the dump.

use super::sniff::{SNIFF_BYTES, looks_like_text};
use super::{ToolContext, frame_untrusted};

/// The most bytes a hex view shows, whatever `max_bytes` says: each byte
/// takes about four characters of dump.
pub(crate) const HEX_CAP: usize = 16 * 1024;

/// Whether a file that starts with `head` is binary: control bytes (a
/// NUL), a format `infer` knows that is not text (an image, an archive, an
/// executable), or mostly bytes that are not UTF-8 (a Latin-1 text has a
/// few accented letters among its ASCII).
pub(super) fn is_binary(head: &[u8]) -> bool {
    let head = &head[..head.len().min(SNIFF_BYTES)];
    if !looks_like_text(head) {
        return true;
    }
    if infer::get(head).is_some_and(|kind| kind.matcher_type() != infer::MatcherType::Text) {
        return true;
    }
    let invalid: usize = head.utf8_chunks().map(|chunk| chunk.invalid().len()).sum();
    invalid * 2 > head.len()
}

/// The answer for a binary file without a hex view: its type and size.
pub(super) fn describe(rel: &str, head: &[u8], size: u64) -> String {
    format!(
        "'{}' is a binary file ({}, {size} bytes); its bytes are not shown. To see its start \
         as a hex dump, call read_file again with hex set to true (at most {HEX_CAP} bytes).",
        crate::text::escape_line(rel),
        infer::get(head).map_or("application/octet-stream", |kind| kind.mime_type())
    )
}

/// The hex view of the first `max_bytes` (at most [`HEX_CAP`]) of `bytes`
/// (the start of the file `rel` of `size` bytes), redacted and framed.
pub(super) fn hex_view(
    ctx: &ToolContext<'_>,
    rel: &str,
    bytes: &[u8],
    size: u64,
    max_bytes: u64,
) -> String {
    let shown = &bytes[..bytes.len().min(HEX_CAP).min(max_bytes as usize)];
    ctx.learn_file(&ctx.target.join(rel));
    let masked = masked_bytes(ctx, rel, shown);
    let mut out = frame_untrusted(rel, &dump(shown, &masked));
    if (shown.len() as u64) < size {
        out.push_str(&format!(
            "\n[Showed the first {} of {size} bytes.]",
            shown.len()
        ));
    }
    out
}

/// Which bytes of `bytes` the redactor masks (the file's redactions are
/// recorded as its notice).
fn masked_bytes(ctx: &ToolContext<'_>, rel: &str, bytes: &[u8]) -> Vec<bool> {
    let latin1: String = bytes.iter().map(|&b| char::from(b)).collect();
    let (ranges, hits) = ctx.redactor.redacted_ranges(&latin1);
    let new: Vec<_> = hits.into_iter().filter(|h| !h.known).collect();
    ctx.record_redactions(rel, &new);
    // Character offsets of the Latin-1 text back to byte offsets.
    let mut byte_at = Vec::with_capacity(latin1.len() + 1);
    for (i, c) in latin1.chars().enumerate() {
        byte_at.extend(std::iter::repeat_n(i, c.len_utf8()));
    }
    byte_at.push(bytes.len());
    let mut masked = vec![false; bytes.len()];
    for range in ranges {
        let (start, end) = (byte_at[range.start], byte_at[range.end]);
        masked[start..end].iter_mut().for_each(|m| *m = true);
    }
    masked
}

/// `xxd`-like lines: offset, sixteen bytes in hex, the printable ones.
fn dump(bytes: &[u8], masked: &[bool]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 4 + 64);
    for (row, chunk) in bytes.chunks(16).enumerate() {
        let at = row * 16;
        let _ = write!(out, "{at:08x}:");
        for (i, byte) in chunk.iter().enumerate() {
            if i % 2 == 0 {
                out.push(' ');
            }
            if masked[at + i] {
                out.push_str("**");
            } else {
                let _ = write!(out, "{byte:02x}");
            }
        }
        let pad = (16 - chunk.len()) * 2 + (8 - chunk.len().div_ceil(2));
        out.push_str(&" ".repeat(pad + 2));
        for (i, &byte) in chunk.iter().enumerate() {
            out.push(if masked[at + i] {
                '*'
            } else if byte.is_ascii_graphic() || byte == b' ' {
                char::from(byte)
            } else {
                '.'
            });
        }
        out.push('\n');
    }
    if masked.contains(&true) {
        out.push_str("(** and * stand for bytes of a value redacted as a credential)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_is_what_does_not_read_as_text() {
        assert!(is_binary(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"));
        assert!(is_binary(b"SQLite format 3\0"));
        let mut blob = b"ELF".to_vec();
        blob.extend([0xff; 100]);
        assert!(is_binary(&blob), "not UTF-8");
        assert!(!is_binary("naïve café\n".as_bytes()));
        assert!(!is_binary(b"caf\xe9 latin-1 text, mostly ASCII\n"));
        assert!(!is_binary(b"#!/bin/sh\necho hi\n"));
    }

    #[test]
    fn the_dump_reads_like_xxd_and_masks_bytes() {
        let bytes = b"SQLite\0\x01token=abc";
        let mut masked = vec![false; bytes.len()];
        masked[14..17].iter_mut().for_each(|m| *m = true);
        let text = dump(bytes, &masked);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "00000000: 5351 4c69 7465 0001 746f 6b65 6e3d ****  SQLite..token=**"
        );
        // A short last row keeps the columns.
        assert_eq!(lines[1].find("  *"), lines[0].find("  SQLite"));
        assert!(lines[1].starts_with("00000010: ** ") && lines[1].ends_with('*'));
        assert!(lines[2].starts_with("(** and *"));
    }
}
