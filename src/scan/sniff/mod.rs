//! Content sniffing: a libmagic-like description of a file from its bytes.
//!
//! The original asked `file --brief` about every file whose extension it did
//! not know, then searched the answer for words such as `text` or `image`. We
//! answer the same question natively, with texts close to libmagic's so the
//! same words land in the same categories:
//!
//! - `empty` for a file with no bytes, `very short file (no magic)` for one;
//! - formats common in source trees named with `file`'s details
//!   ([`formats`]: ELF objects, compiled Python, Java keystores, OpenPGP
//!   keys, SQLite databases);
//! - other binary signatures from the `infer` crate, named as libmagic names
//!   them (`PNG image data`, `gzip compressed data`, `Zip archive data`, ...);
//! - text: `ASCII text`, `UTF-8 Unicode text`, `ISO-8859 text`,
//!   `Non-ISO extended-ASCII text`, and a few text formats libmagic
//!   recognises by their first bytes (`<interpreter> script, ASCII text
//!   executable` for a shebang, XML, HTML, JSON, PEM keys, ...);
//! - `data` for anything else.
//!
//! Text is judged with libmagic's byte classes over the first
//! [`TEXT_WINDOW`] bytes, fed chunk by chunk through [`TextSniffer`] so the
//! caller can count lines in the same read. Signatures look at the first
//! chunk only.

mod formats;

/// How many leading bytes decide whether a file is text (libmagic's default
/// `bytes_max`).
pub(crate) const TEXT_WINDOW: u64 = 1024 * 1024;

/// Byte classes from libmagic's text detection: bytes that never appear in
/// text (`F`), plain ASCII text (`T`), ISO-8859 (`I`) and other 8-bit sets
/// (`X`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    F,
    T,
    I,
    X,
}

const fn byte_class(b: u8) -> Class {
    match b {
        // BEL BS HT LF VT FF CR, and ESC.
        0x07..=0x0d | 0x1b => Class::T,
        0x00..=0x1f | 0x7f => Class::F,
        0x20..=0x7e => Class::T,
        0x80..=0x9f => Class::X,
        0xa0..=0xff => Class::I,
    }
}

static CLASSES: [Class; 256] = {
    let mut table = [Class::F; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = byte_class(i as u8);
        i += 1;
    }
    table
};

/// Incremental text detection over consecutive chunks of a file.
#[derive(Debug, Clone)]
pub(crate) struct TextSniffer {
    seen: u64,
    binary: bool,
    non_ascii: bool,
    utf8: bool,
    c1_controls: bool,
}

impl Default for TextSniffer {
    fn default() -> Self {
        TextSniffer {
            seen: 0,
            binary: false,
            non_ascii: false,
            utf8: true,
            c1_controls: false,
        }
    }
}

/// What the text detection concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextKind {
    Ascii,
    Utf8,
    Utf8Bom,
    Iso8859,
    ExtendedAscii,
    Binary,
}

impl TextKind {
    fn label(self) -> &'static str {
        match self {
            TextKind::Ascii => "ASCII text",
            TextKind::Utf8 => "UTF-8 Unicode text",
            TextKind::Utf8Bom => "UTF-8 Unicode (with BOM) text",
            TextKind::Iso8859 => "ISO-8859 text",
            TextKind::ExtendedAscii => "Non-ISO extended-ASCII text",
            TextKind::Binary => "data",
        }
    }
}

impl TextSniffer {
    /// True once enough bytes were seen to decide.
    pub(super) fn decided(&self) -> bool {
        self.binary || self.seen >= TEXT_WINDOW
    }

    /// Feed the next chunk. `carry` is how many bytes at the start of `chunk`
    /// were already fed (an incomplete UTF-8 sequence kept from the previous
    /// chunk); they are re-validated but not re-classified. Returns how many
    /// bytes at the end form an incomplete UTF-8 sequence that the caller
    /// should keep in front of the next chunk.
    pub(super) fn feed(&mut self, chunk: &[u8], carry: usize, at_eof: bool) -> usize {
        if self.decided() {
            return 0;
        }
        let remaining = (TEXT_WINDOW - self.seen) as usize;
        let fresh = &chunk[carry..];
        let fresh = &fresh[..fresh.len().min(remaining)];
        self.seen += fresh.len() as u64;
        if !fresh.is_ascii() {
            self.non_ascii = true;
        }
        for &b in fresh {
            match CLASSES[b as usize] {
                Class::F => {
                    self.binary = true;
                    return 0;
                }
                Class::X => self.c1_controls = true,
                Class::T | Class::I => {}
            }
        }
        if !self.utf8 || !self.non_ascii {
            return 0;
        }
        let window = &chunk[..carry + fresh.len()];
        match std::str::from_utf8(window) {
            Ok(_) => 0,
            // A sequence cut by the end of the file or of the window counts
            // as valid, as with libmagic, which only sees those bytes.
            Err(e) if e.error_len().is_none() && (at_eof || self.decided()) => 0,
            Err(e) if e.error_len().is_none() => window.len() - e.valid_up_to(),
            Err(_) => {
                self.utf8 = false;
                0
            }
        }
    }

    /// The verdict; `head` is the file's first chunk (for the BOM).
    pub(super) fn kind(&self, head: &[u8]) -> TextKind {
        if self.binary {
            TextKind::Binary
        } else if !self.non_ascii {
            TextKind::Ascii
        } else if self.utf8 && head.starts_with(b"\xef\xbb\xbf") {
            TextKind::Utf8Bom
        } else if self.utf8 {
            TextKind::Utf8
        } else if !self.c1_controls {
            TextKind::Iso8859
        } else {
            TextKind::ExtendedAscii
        }
    }
}

/// Describe a file from its first chunk `head` and the text verdict.
/// `whole` is true when `head` holds the entire file.
pub(crate) fn describe(head: &[u8], text: TextKind, whole: bool) -> String {
    if head.is_empty() {
        return "empty".to_string();
    }
    if head.len() == 1 && whole {
        // libmagic does not judge a one-byte file at all.
        return "very short file (no magic)".to_string();
    }
    if head.starts_with(b"%PDF-") {
        return pdf(head);
    }
    if text == TextKind::Binary {
        return describe_binary(head);
    }
    let encoding = text.label();
    if let Some(known) = text_signature(head) {
        return known.to_string();
    }
    if let Some(armored) = formats::pgp_armor(head) {
        return armored;
    }
    if let Some(script) = shebang(head) {
        return format!("{script} script, {encoding} executable");
    }
    let body = skip_bom_and_space(head);
    if starts_with_ignore_case(body, b"<?xml") {
        return format!("XML 1.0 document, {encoding}");
    }
    if starts_with_ignore_case(body, b"<!doctype html") || starts_with_ignore_case(body, b"<html") {
        return format!("HTML document, {encoding}");
    }
    if whole && looks_like_json(body) {
        return "JSON data".to_string();
    }
    encoding.to_string()
}

/// Binary content: a known signature or `data`.
fn describe_binary(head: &[u8]) -> String {
    if head.starts_with(b"\xff\xfe") {
        return "Little-endian UTF-16 Unicode text".to_string();
    }
    if head.starts_with(b"\xfe\xff") {
        return "Big-endian UTF-16 Unicode text".to_string();
    }
    if let Some(known) = formats::binary_format(head) {
        return known;
    }
    match infer::get(head) {
        Some(kind) if kind.matcher_type() != infer::MatcherType::Text => {
            libmagic_name(kind.extension()).to_string()
        }
        _ => "data".to_string(),
    }
}

fn pdf(head: &[u8]) -> String {
    let version: String = head[5..]
        .iter()
        .take_while(|b| b.is_ascii_digit() || **b == b'.')
        .take(4)
        .map(|&b| b as char)
        .collect();
    if version.is_empty() {
        "PDF document".to_string()
    } else {
        format!("PDF document, version {version}")
    }
}

/// libmagic's wording for the types `infer` recognises, keyed by infer's
/// extension. What matters downstream is the category word each contains
/// (or not), which follows libmagic.
const LIBMAGIC_NAMES: &[(&str, &str)] = &[
    ("wasm", "WebAssembly (wasm) binary module"),
    ("exe", "PE32 executable, for MS Windows"),
    ("dll", "PE32 executable (DLL), for MS Windows"),
    ("class", "compiled Java class data"),
    ("bc", "LLVM IR bitcode"),
    ("mach", "Mach-O executable"),
    ("dex", "Dalvik dex file"),
    ("dey", "Dalvik dex file"),
    ("der", "Certificate, DER encoded"),
    ("obj", "Intel amd64 COFF object file"),
    ("pem", "PEM certificate"),
    ("qcow2", "QEMU QCOW2 Image"),
    ("epub", "EPUB document"),
    ("mobi", "Mobipocket E-book"),
    ("jpg", "JPEG image data"),
    ("jp2", "JPEG 2000 image data"),
    ("png", "PNG image data"),
    ("gif", "GIF image data"),
    ("webp", "RIFF (little-endian) data, Web/P image"),
    ("cr2", "Canon CR2 raw image data"),
    ("tif", "TIFF image data"),
    ("bmp", "PC bitmap"),
    ("jxr", "JPEG-XR image"),
    ("psd", "Adobe Photoshop Image"),
    ("ico", "MS Windows icon resource"),
    ("heif", "ISO Media, HEIF Image"),
    ("avif", "ISO Media, AVIF Image"),
    ("jxl", "JPEG XL codestream"),
    ("ora", "OpenRaster image data"),
    ("djvu", "DjVu image or single page document"),
    ("dwg", "DWG AutoDesk AutoCAD drawing"),
    ("mp4", "ISO Media, MP4 v2 [ISO 14496-14]"),
    ("m4v", "ISO Media, Apple iTunes Video (.M4V) Video"),
    ("mkv", "Matroska data"),
    ("webm", "WebM"),
    ("mov", "ISO Media, Apple QuickTime movie"),
    ("avi", "RIFF (little-endian) data, AVI"),
    ("wmv", "Microsoft ASF"),
    ("mpg", "MPEG sequence"),
    ("flv", "Macromedia Flash Video"),
    ("midi", "Standard MIDI data"),
    ("mp3", "Audio file with ID3 version 2"),
    ("m4a", "ISO Media, Apple iTunes ALAC/AAC-LC (.M4A) Audio"),
    ("opus", "Ogg data, Opus audio"),
    ("ogg", "Ogg data, Vorbis audio"),
    ("flac", "FLAC audio bitstream data"),
    ("wav", "RIFF (little-endian) data, WAVE audio"),
    ("amr", "Adaptive Multi-Rate Codec (GSM telephony)"),
    ("aac", "MPEG ADTS, AAC"),
    ("aiff", "IFF data, AIFF audio"),
    ("dsf", "DSF audio bitstream data"),
    ("ape", "Monkey's Audio compressed format"),
    ("woff", "Web Open Font Format"),
    ("woff2", "Web Open Font Format (Version 2)"),
    ("ttf", "TrueType Font data"),
    ("otf", "OpenType font data"),
    ("doc", "Composite Document File V2 Document"),
    ("xls", "Composite Document File V2 Document"),
    ("ppt", "Composite Document File V2 Document"),
    ("msi", "Composite Document File V2 Document"),
    ("docx", "Microsoft Word 2007+"),
    ("xlsx", "Microsoft Excel 2007+"),
    ("pptx", "Microsoft PowerPoint 2007+"),
    ("odt", "OpenDocument Text"),
    ("ods", "OpenDocument Spreadsheet"),
    ("odp", "OpenDocument Presentation"),
    ("zip", "Zip archive data"),
    ("tar", "POSIX tar archive"),
    ("par2", "Parity Archive Volume Set"),
    ("rar", "RAR archive data"),
    ("gz", "gzip compressed data"),
    ("bz2", "bzip2 compressed data"),
    ("bz3", "bzip3 compressed data"),
    ("7z", "7-zip archive data"),
    ("xz", "XZ compressed data"),
    ("pdf", "PDF document"),
    ("swf", "Macromedia Flash data"),
    ("rtf", "Rich Text Format data"),
    ("eot", "Embedded OpenType (EOT) font"),
    ("ps", "PostScript document"),
    ("sqlite", "SQLite 3.x database"),
    ("nes", "iNES ROM dump"),
    ("crx", "Google Chrome extension"),
    ("cab", "Microsoft Cabinet archive data"),
    ("deb", "Debian binary package"),
    ("ar", "current ar archive"),
    ("Z", "compress'd data"),
    ("lz", "lzip compressed data"),
    ("rpm", "RPM"),
    ("dcm", "DICOM medical imaging data"),
    ("zst", "Zstandard compressed data"),
    ("lz4", "LZ4 compressed data"),
    ("cpio", "cpio archive"),
];

/// libmagic's wording for the type `infer` names by `extension`
/// ([`LIBMAGIC_NAMES`]), or `data` for one it does not list.
fn libmagic_name(extension: &str) -> &'static str {
    LIBMAGIC_NAMES
        .iter()
        .find(|(known, _)| *known == extension)
        .map_or("data", |(_, name)| name)
}

/// Text formats libmagic names by their opening bytes.
fn text_signature(head: &[u8]) -> Option<&'static str> {
    const SIGNATURES: [(&[u8], &str); 12] = [
        (b"%!PS", "PostScript document text"),
        (b"{\\rtf", "Rich Text Format data"),
        (
            b"-----BEGIN CERTIFICATE REQUEST-----",
            "PEM certificate request",
        ),
        (b"-----BEGIN CERTIFICATE-----", "PEM certificate"),
        (b"-----BEGIN RSA PRIVATE KEY-----", "PEM RSA private key"),
        (b"-----BEGIN DSA PRIVATE KEY-----", "PEM DSA private key"),
        (b"-----BEGIN EC PRIVATE KEY-----", "PEM EC private key"),
        (
            b"-----BEGIN OPENSSH PRIVATE KEY-----",
            "OpenSSH private key",
        ),
        (b"ssh-rsa ", "OpenSSH RSA public key"),
        (b"ssh-ed25519 ", "OpenSSH ED25519 public key"),
        (b"ssh-dss ", "OpenSSH DSA public key"),
        (b"ecdsa-sha2-nistp", "OpenSSH ECDSA public key"),
    ];
    SIGNATURES
        .iter()
        .find(|(magic, _)| head.starts_with(magic))
        .map(|(_, name)| *name)
}

/// The script kind named by a `#!` line, libmagic style: `Python`,
/// `Bourne-Again shell`, or `a <interpreter> script` for unknown ones.
fn shebang(head: &[u8]) -> Option<String> {
    let rest = head.strip_prefix(b"#!")?;
    let line_end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    let line = String::from_utf8_lossy(&rest[..line_end]);
    let line = line.trim_end_matches('\r').trim();
    let mut words = line.split_whitespace();
    let interpreter = words.next()?;
    let mut program = basename(interpreter);
    let mut shown = line.to_string();
    if program == "env" {
        let named = words.find(|w| !w.starts_with('-') && !w.contains('='))?;
        program = basename(named);
        shown = line
            .strip_prefix(interpreter)
            .unwrap_or(line)
            .trim()
            .to_string();
    }
    let known = match program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.') {
        "sh" => Some("POSIX shell"),
        "bash" => Some("Bourne-Again shell"),
        "zsh" => Some("Paul Falstad's zsh"),
        "ksh" | "mksh" => Some("Korn shell"),
        "csh" => Some("C shell"),
        "tcsh" => Some("Tenex C shell"),
        "python" | "pypy" => Some("Python"),
        "perl" => Some("Perl"),
        "ruby" => Some("Ruby"),
        "node" | "nodejs" => Some("Node.js"),
        "php" => Some("PHP"),
        "lua" => Some("Lua"),
        "tclsh" | "wish" => Some("Tcl"),
        "awk" | "gawk" | "nawk" => Some("awk"),
        _ => None,
    };
    Some(match known {
        Some(name) => name.to_string(),
        None => format!("a {shown}"),
    })
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn skip_bom_and_space(head: &[u8]) -> &[u8] {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    &head[start..]
}

fn starts_with_ignore_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.len() >= needle.len() && haystack[..needle.len()].eq_ignore_ascii_case(needle)
}

/// libmagic reports `JSON data` for a whole file that is a JSON object or array.
fn looks_like_json(body: &[u8]) -> bool {
    matches!(body.first(), Some(b'{' | b'['))
        && serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sniff(bytes: &[u8]) -> String {
        let mut s = TextSniffer::default();
        s.feed(bytes, 0, true);
        describe(bytes, s.kind(bytes), true)
    }

    #[test]
    fn texts_are_named_like_libmagic() {
        assert_eq!(sniff(b""), "empty");
        assert_eq!(sniff(b"\n"), "very short file (no magic)");
        assert_eq!(sniff(b"hello\n"), "ASCII text");
        assert_eq!(sniff(b"esc \x1b[31m red\n"), "ASCII text");
        assert_eq!(sniff("h\u{e9}llo\n".as_bytes()), "UTF-8 Unicode text");
        assert_eq!(sniff(b"\xef\xbb\xbfhi\n"), "UTF-8 Unicode (with BOM) text");
        assert_eq!(sniff(b"h\xe9llo\n"), "ISO-8859 text");
        assert_eq!(sniff(b"h\x85llo\x90\n"), "Non-ISO extended-ASCII text");
        assert_eq!(sniff(b"hi\x00there"), "data");
        assert_eq!(sniff(b"a\x01b\n"), "data");
    }

    #[test]
    fn shebangs_name_the_interpreter() {
        assert_eq!(
            sniff(b"#!/bin/sh\necho hi\n"),
            "POSIX shell script, ASCII text executable"
        );
        assert_eq!(
            sniff(b"#!/usr/bin/env bash\n"),
            "Bourne-Again shell script, ASCII text executable"
        );
        assert_eq!(
            sniff(b"#!/usr/bin/env python3\nprint(1)\n"),
            "Python script, ASCII text executable"
        );
        assert_eq!(
            sniff("#!/usr/bin/python3.11\nprint('\u{e9}')\n".as_bytes()),
            "Python script, UTF-8 Unicode text executable"
        );
        assert_eq!(
            sniff(b"#!/usr/bin/env foo\n"),
            "a foo script, ASCII text executable"
        );
        assert_eq!(
            sniff(b"#!/opt/x/bar -q\n"),
            "a /opt/x/bar -q script, ASCII text executable"
        );
    }

    #[test]
    fn text_formats_are_recognised() {
        assert_eq!(sniff(b"{\"a\": 1}\n"), "JSON data");
        assert_eq!(sniff(b"[1, 2]"), "JSON data");
        assert_eq!(sniff(b"{not json"), "ASCII text");
        assert_eq!(
            sniff(b"<?xml version=\"1.0\"?>\n<a/>\n"),
            "XML 1.0 document, ASCII text"
        );
        assert_eq!(
            sniff(b"<!DOCTYPE html>\n<html></html>\n"),
            "HTML document, ASCII text"
        );
        assert_eq!(
            sniff(b"-----BEGIN RSA PRIVATE KEY-----\nMIIB\n"),
            "PEM RSA private key"
        );
        assert_eq!(sniff(b"%PDF-1.4\n%\xe2\xe3\n"), "PDF document, version 1.4");
    }

    #[test]
    fn binary_signatures_use_libmagic_words() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), "PNG image data");
        assert_eq!(
            sniff(b"\x1f\x8b\x08\0\0\0\0\0\0\x03"),
            "gzip compressed data"
        );
        assert_eq!(sniff(b"PK\x03\x04\x14\0\0\0\0\0"), "Zip archive data");
        assert_eq!(sniff(b"BZh91AY&SY\0\0"), "bzip2 compressed data");
        let mut elf = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0".to_vec();
        elf.resize(64, 0);
        assert_eq!(
            sniff(&elf),
            "ELF 64-bit LSB shared object, x86-64, version 1 (SYSV)"
        );
        // The formats with `file`'s details (see `formats`), through the
        // text/binary split.
        assert_eq!(
            sniff(b"\xa7\x0d\x0d\x0a\0\0\0\0\x1a\xbb\x04\x6b\x09\0\0\0\xe3\0"),
            "Byte-compiled Python module for CPython 3.11, timestamp-based, \
             .py timestamp: Mon Nov 23 22:15:54 2026 UTC, .py size: 9 bytes"
        );
        assert_eq!(sniff(b"\xfe\xed\xfe\xed\0\0\0\x02"), "Java KeyStore");
        assert_eq!(
            sniff(b"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEawS7IxYJKwYB\n"),
            "PGP public key block Public-Key (old)"
        );
        assert_eq!(sniff(b"\x00\x01\x02\x03\x04"), "data");
        assert_eq!(
            sniff(b"\xff\xfeh\0i\0\n\0"),
            "Little-endian UTF-16 Unicode text"
        );
    }

    #[test]
    fn text_that_only_looks_like_a_signature_stays_text() {
        // "BM" opens a bitmap, but a text file starting with it is text.
        assert_eq!(sniff(b"BM is a fine acronym\n"), "ASCII text");
    }

    #[test]
    fn utf8_split_across_chunks_is_still_utf8() {
        let text = "caf\u{e9} au lait\n".as_bytes();
        let split = 4; // inside the two-byte é
        let mut s = TextSniffer::default();
        let carry = s.feed(&text[..split], 0, false);
        assert_eq!(carry, 1);
        let mut next = text[split - carry..split].to_vec();
        next.extend_from_slice(&text[split..]);
        assert_eq!(s.feed(&next, carry, true), 0);
        assert_eq!(s.kind(text), TextKind::Utf8);
    }

    #[test]
    fn a_sequence_cut_by_eof_still_counts_as_utf8() {
        let mut s = TextSniffer::default();
        s.feed(b"caf\xc3", 0, true);
        assert_eq!(s.kind(b"caf\xc3"), TextKind::Utf8);
        let mut s = TextSniffer::default();
        s.feed(b"caf\xc3(", 0, true);
        assert_eq!(s.kind(b"caf\xc3("), TextKind::Iso8859);
    }

    #[test]
    fn binary_after_the_window_does_not_matter() {
        let mut s = TextSniffer::default();
        let text = vec![b'a'; TEXT_WINDOW as usize];
        s.feed(&text, 0, false);
        assert!(s.decided());
        s.feed(b"\0\0\0", 0, true);
        assert_eq!(s.kind(&text), TextKind::Ascii);
    }
}
