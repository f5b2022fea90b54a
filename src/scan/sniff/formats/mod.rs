//! Formats named the way `file` names them, down to its details, because
//! these descriptions feed the survey's signals and the original got them
//! from `file`: ELF objects, compiled Python, Java keystores, OpenPGP keys
//! (binary and ASCII-armored) and SQLite databases. The wording was checked
//! against `file` 5.44 on real samples (gcc output, `py_compile` of CPython
//! 2.7 to 3.13, `keytool`, `gpg`, `sqlite3`).
//!
//! Each reader sees only the file's first chunk (the caller's `head`). What
//! lies beyond it is left out, where `file`, reading the whole file, would
//! say more: the build ID, the ABI note and `stripped` of an ELF object, and
//! the packets after the first one of an OpenPGP key. A position-independent
//! executable is told from a shared object by the `DF_1_PIE` flag, as `file`
//! does, when the dynamic section lies within the chunk; otherwise by its
//! program interpreter (an executable has one, a library does not).

use chrono::DateTime;

mod elf;

use elf::elf;

/// The description of a binary `head` in one of these formats, if it is one.
pub(super) fn binary_format(head: &[u8]) -> Option<String> {
    if head.starts_with(b"\x7fELF") {
        return Some(elf(head));
    }
    if head.starts_with(b"SQLite format 3\0") {
        return Some(sqlite(head));
    }
    if head.starts_with(b"\xfe\xed\xfe\xed") {
        return Some("Java KeyStore".to_string());
    }
    if head.starts_with(b"\xce\xce\xce\xce") {
        return Some("Java JCE KeyStore".to_string());
    }
    compiled_python(head).or_else(|| openpgp_key(head))
}

/// `Mon Nov 23 22:16:03 2026`: C's `ctime` in UTC, as `file` prints dates.
fn ctime_utc(secs: u32) -> String {
    DateTime::from_timestamp(i64::from(secs), 0)
        .map(|t| t.format("%a %b %e %H:%M:%S %Y").to_string())
        .unwrap_or_default()
}

/// C's `%#x`: `0` for zero, `0x1f` otherwise.
fn alt_hex(n: u64) -> String {
    if n == 0 {
        "0".to_string()
    } else {
        format!("{n:#x}")
    }
}

fn be_u32(head: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(head.get(at..at + 4)?.try_into().ok()?))
}

fn le_u32(head: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(head.get(at..at + 4)?.try_into().ok()?))
}

// ---- compiled Python -----------------------------------------------------

/// How `file` names a `.pyc` magic number: the old one-line form, or the
/// form with the header's details (CPython 3.7 and later, PyPy 3).
enum PythonMagic {
    Old(&'static str),
    Detailed(&'static str),
}

/// The versions `file` knows by magic number (the first two bytes, little
/// endian, before `\r\n`).
fn python_magic(magic: u16) -> Option<PythonMagic> {
    use PythonMagic::{Detailed, Old};
    let old = match magic {
        11913 => "python 1.3 byte-compiled",
        5892 => "python 1.4 byte-compiled",
        20121 => "python 1.5 byte-compiled",
        50428 | 50429 => "python 1.6 byte-compiled",
        50823 | 50824 => "python 2.0 byte-compiled",
        60202 | 60203 => "python 2.1 byte-compiled",
        60717 | 60718 => "python 2.2 byte-compiled",
        62011 | 62012 | 62021 => "python 2.3 byte-compiled",
        62041 | 62051 | 62061 | 62062 => "python 2.4 byte-compiled",
        62071 | 62081 | 62091 | 62092 | 62101 | 62111 | 62121 | 62131 | 62132 => {
            "python 2.5 byte-compiled"
        }
        62151 | 62161 | 62162 => "python 2.6 byte-compiled",
        62171 | 62181 | 62191 | 62201 | 62211 | 62212 => "python 2.7 byte-compiled",
        62218 => "PyPy2.7 byte-compiled",
        3000 | 3010 | 3020 | 3030 | 3040 | 3050 | 3060 | 3061 | 3071 | 3081 | 3091 | 3101
        | 3103 | 3111 | 3131 => "python 3.0 byte-compiled",
        3141 | 3151 => "python 3.1 byte-compiled",
        3160 | 3170 | 3180 => "python 3.2 byte-compiled",
        3190 | 3200 | 3210 | 3220 | 3230 => "python 3.3 byte-compiled",
        3250 | 3260 | 3270 | 3280 | 3290 | 3300 | 3310 => "python 3.4 byte-compiled",
        3320 | 3330 | 3340 | 3350 => "python 3.5.1- byte-compiled",
        3351 => "python 3.5.2+ byte-compiled",
        3360 | 3361 | 3370..=3373 | 3375..=3379 => "python 3.6 byte-compiled",
        3390 | 3391 => "python 3.7 byte-compiled",
        _ => {
            let detailed = match magic {
                240 => "PyPy3.7",
                256 => "PyPy3.8",
                336 => "PyPy3.9",
                3328..=3399 => "CPython 3.7",
                3400..=3419 => "CPython 3.8",
                3420..=3429 => "CPython 3.9",
                3430..=3449 => "CPython 3.10",
                3450..=3499 => "CPython 3.11",
                3500..=3583 => "CPython 3.12 or newer",
                _ => return None,
            };
            return Some(Detailed(detailed));
        }
    };
    Some(Old(old))
}

/// `Byte-compiled Python module for CPython 3.11, timestamp-based, .py
/// timestamp: Mon Nov 23 22:15:54 2026 UTC, .py size: 9 bytes`, or the old
/// `python 2.7 byte-compiled`.
fn compiled_python(head: &[u8]) -> Option<String> {
    if head.get(2..4) != Some(b"\r\n") {
        return None;
    }
    let magic = u16::from_le_bytes([head[0], head[1]]);
    let name = match python_magic(magic)? {
        PythonMagic::Old(text) => return Some(text.to_string()),
        PythonMagic::Detailed(name) => name,
    };
    let mut text = format!("Byte-compiled Python module for {name}");
    let (Some(flags), Some(first), Some(second)) =
        (le_u32(head, 4), le_u32(head, 8), le_u32(head, 12))
    else {
        return Some(text);
    };
    if flags & 1 == 0 {
        text.push_str(&format!(
            ", timestamp-based, .py timestamp: {} UTC, .py size: {second} bytes",
            ctime_utc(first)
        ));
    } else {
        let checked = if flags & 2 != 0 { "set" } else { "unset" };
        let hash = u64::from(first) | (u64::from(second) << 32);
        text.push_str(&format!(
            ", hash-based, check-source flag {checked}, hash: 0x{hash:016x}"
        ));
    }
    Some(text)
}

// ---- OpenPGP -------------------------------------------------------------

/// `OpenPGP Public Key Version 4, Created Mon Nov 23 22:16:03 2026, RSA
/// (Encrypt or Sign, 2048 bits)`: a file whose first packet is a version 4
/// public or secret key.
fn openpgp_key(head: &[u8]) -> Option<String> {
    let first = *head.first()?;
    let (tag, body_at) = match first & 0xc0 {
        // Old format: the tag in bits 2-5, the length's size in bits 0-1.
        0x80 => {
            let length_bytes = match first & 3 {
                0 => 1,
                1 => 2,
                2 => 4,
                _ => 0,
            };
            ((first >> 2) & 0x0f, 1 + length_bytes)
        }
        // New format: the tag in bits 0-5, then a one, two or five byte length.
        0xc0 => {
            let length_bytes = match *head.get(1)? {
                0..=191 => 1,
                192..=223 => 2,
                255 => 5,
                _ => 1,
            };
            (first & 0x3f, 1 + length_bytes)
        }
        _ => return None,
    };
    let kind = match tag {
        5 => "Secret",
        6 => "Public",
        _ => return None,
    };
    let body = head.get(body_at..)?;
    if body.first() != Some(&4) {
        return None;
    }
    let created = be_u32(body, 1)?;
    let algorithm = *body.get(5)?;
    let bits = body
        .get(6..8)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
        .unwrap_or(0);
    let algorithm = match algorithm {
        1 => format!("RSA (Encrypt or Sign, {bits} bits)"),
        2 => format!("RSA (Encrypt, {bits} bits)"),
        3 => format!("RSA (Sign, {bits} bits)"),
        16 => format!("El Gamal (Encrypt, {bits} bits)"),
        17 => format!("DSA ({bits} bits)"),
        18 => "ECDH".to_string(),
        19 => "ECDSA".to_string(),
        20 => format!("El Gamal (Encrypt or Sign, {bits} bits)"),
        22 => "EdDSA".to_string(),
        other => format!("Unknown Algorithm ({})", alt_hex(u64::from(other))),
    };
    Some(format!(
        "OpenPGP {kind} Key Version 4, Created {}, {algorithm}",
        ctime_utc(created)
    ))
}

/// An ASCII-armored OpenPGP block (`-----BEGIN PGP ...-----`), named as
/// `file` names it: public keys, signatures and messages add the kind of
/// their first packet when it is in the old format, as `gpg` writes them
/// (`PGP public key block Public-Key (old)`).
pub(super) fn pgp_armor(head: &[u8]) -> Option<String> {
    const BLOCKS: [(&[u8], &str, bool); 5] = [
        (
            b"-----BEGIN PGP PUBLIC KEY BLOCK-----",
            "PGP public key block",
            true,
        ),
        (
            b"-----BEGIN PGP PRIVATE KEY BLOCK-----",
            "PGP private key block",
            false,
        ),
        (
            b"-----BEGIN PGP SIGNED MESSAGE-----",
            "PGP signed message",
            false,
        ),
        (b"-----BEGIN PGP SIGNATURE-----", "PGP signature", true),
        (b"-----BEGIN PGP MESSAGE-----", "PGP message", true),
    ];
    let (_, name, with_packet) = BLOCKS
        .iter()
        .find(|(start, _, _)| head.starts_with(start))?;
    let packet = with_packet
        .then(|| first_armored_packet(head))
        .flatten()
        .map(|packet| format!(" {packet}"))
        .unwrap_or_default();
    Some(format!("{name}{packet}"))
}

/// The kind of the first packet of an armored block: the body starts after
/// the first empty line; its first base64 characters hold the packet tag.
fn first_armored_packet(head: &[u8]) -> Option<&'static str> {
    let text = std::str::from_utf8(head.get(..head.len().min(4096))?).ok()?;
    let body = text
        .split_once("\n\n")
        .or_else(|| text.split_once("\r\n\r\n"))?
        .1;
    let (first, second) = match body.as_bytes() {
        [first, second, ..] => (*first, *second),
        _ => return None,
    };
    let sextet = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let byte = (sextet(first)? << 2) | (sextet(second)? >> 4);
    if byte & 0xc0 != 0x80 {
        return None;
    }
    match (byte >> 2) & 0x0f {
        1 => Some("Public-Key Encrypted Session Key (old)"),
        2 => Some("Signature (old)"),
        5 => Some("Secret-Key (old)"),
        6 => Some("Public-Key (old)"),
        _ => None,
    }
}

// ---- SQLite --------------------------------------------------------------

/// `SQLite 3.x database, last written using SQLite version 3040001, file
/// counter 1, database pages 2, cookie 0x1, schema 4, UTF-8,
/// version-valid-for 1`, from the 100-byte header.
fn sqlite(head: &[u8]) -> String {
    let mut parts = vec!["SQLite 3.x database".to_string()];
    let field = |at: usize| be_u32(head, at);
    let (Some(version), Some(counter), Some(pages), Some(cookie)) =
        (field(96), field(24), field(28), field(40))
    else {
        return parts.remove(0);
    };
    let signed = |at: usize| field(at).map(|n| n as i32).unwrap_or(0);
    if signed(68) != 0 {
        parts.push(format!("application id {}", signed(68)));
    }
    if signed(60) != 0 {
        parts.push(format!("user version {}", signed(60)));
    }
    parts.push(format!("last written using SQLite version {version}"));
    match (head[18], head[19]) {
        (1, 1) => {}
        (writer, 1) => parts.push(format!("writer version {writer}")),
        (1, reader) => parts.push(format!("read version {reader}")),
        (writer, reader) => {
            parts.push(format!("writer version {writer}"));
            parts.push(format!("read version {reader}"));
        }
    }
    parts.push(format!("file counter {counter}"));
    parts.push(format!("database pages {pages}"));
    parts.push(format!("cookie {}", alt_hex(u64::from(cookie))));
    parts.push(format!("schema {}", field(44).unwrap_or(0)));
    parts.push(match field(56).unwrap_or(0) {
        1 => "UTF-8".to_string(),
        2 => "UTF-16 little endian".to_string(),
        3 => "UTF-16 big endian".to_string(),
        other => format!("unknown {} encoding", alt_hex(u64::from(other))),
    });
    parts.push(format!("version-valid-for {}", field(92).unwrap_or(0)));
    parts.join(", ")
}

#[cfg(test)]
mod tests;
