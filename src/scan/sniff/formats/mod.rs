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

// ---- ELF ---------------------------------------------------------------

/// Reads the fields of an ELF file in its own byte order and class.
struct Elf<'a> {
    head: &'a [u8],
    little: bool,
    wide: bool,
}

impl Elf<'_> {
    /// The `N` bytes at `at`, least significant first whatever the file's
    /// byte order (a big-endian field is reversed), so every width reads
    /// them with `from_le_bytes`.
    fn field<const N: usize>(&self, at: usize) -> Option<[u8; N]> {
        let mut bytes: [u8; N] = self.head.get(at..at.checked_add(N)?)?.try_into().ok()?;
        if !self.little {
            bytes.reverse();
        }
        Some(bytes)
    }

    fn u16(&self, at: usize) -> Option<u16> {
        self.field(at).map(u16::from_le_bytes)
    }

    fn u32(&self, at: usize) -> Option<u32> {
        self.field(at).map(u32::from_le_bytes)
    }

    fn u64(&self, at: usize) -> Option<u64> {
        self.field(at).map(u64::from_le_bytes)
    }

    /// A word of the file's class: 8 bytes in a 64-bit file, else 4.
    fn word(&self, at: usize) -> Option<u64> {
        if self.wide {
            self.u64(at)
        } else {
            self.u32(at).map(u64::from)
        }
    }

    /// `(type, offset, size)` of each program header within the chunk.
    fn program_headers(&self) -> Option<Vec<(u32, u64, u64)>> {
        let (phoff, phentsize, phnum) = if self.wide {
            (self.u64(32)?, self.u16(54)?, self.u16(56)?)
        } else {
            (u64::from(self.u32(28)?), self.u16(42)?, self.u16(44)?)
        };
        let (offset_at, size_at) = if self.wide { (8, 32) } else { (4, 16) };
        (0..u64::from(phnum))
            .map(|i| {
                let at = usize::try_from(phoff + i * u64::from(phentsize)).ok()?;
                Some((
                    self.u32(at)?,
                    self.word(at + offset_at)?,
                    self.word(at + size_at)?,
                ))
            })
            .collect()
    }

    /// Whether the dynamic section at `offset` sets `DF_1_PIE`; `None` when
    /// it does not lie within the chunk.
    fn pie_flag(&self, offset: u64, size: u64) -> Option<bool> {
        const DT_NULL: u64 = 0;
        const DT_FLAGS_1: u64 = 0x6fff_fffb;
        const DF_1_PIE: u64 = 0x0800_0000;
        let entry = if self.wide { 16 } else { 8 };
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(usize::try_from(size).ok()?)?;
        self.head.get(start..end)?;
        for at in (start..end).step_by(entry) {
            match self.word(at)? {
                DT_NULL => return Some(false),
                DT_FLAGS_1 => return Some(self.word(at + entry / 2)? & DF_1_PIE != 0),
                _ => {}
            }
        }
        Some(false)
    }
}

/// `ELF 64-bit LSB pie executable, x86-64, version 1 (SYSV), dynamically
/// linked, interpreter /lib64/ld-linux-x86-64.so.2`.
fn elf(head: &[u8]) -> String {
    let wide = match head.get(4) {
        Some(1) => false,
        Some(2) => true,
        _ => return "ELF".to_string(),
    };
    let little = head.get(5) != Some(&2);
    let elf = Elf { head, little, wide };
    let class = if wide { "64-bit" } else { "32-bit" };
    let order = if little { "LSB" } else { "MSB" };
    let layout = Layout::of(&elf);
    let mut text = format!("ELF {class} {order}");
    let machine = machine(&elf);
    match layout.kind() {
        Some(kind) => text.push_str(&format!(" {kind}, {}", machine.0)),
        None => text.push_str(&format!(" {}", machine.0)),
    }
    // `file` puts no comma after some machine names (`MIPS, MIPS-I version 1`).
    text.push_str(if machine.1 { ", " } else { " " });
    if elf.u32(20) == Some(1) {
        text.push_str("version 1 ");
    }
    text.push_str(&format!("({})", os_abi(head.get(7).copied().unwrap_or(0))));
    if let Some(linked) = layout.linked() {
        text.push_str(&format!(", {linked}"));
    }
    if let Some(interpreter) = layout.interpreter {
        text.push_str(&format!(", interpreter {interpreter}"));
    }
    text
}

/// What an ELF object's type and program headers (those within the chunk)
/// say of what it is and how it runs.
struct Layout {
    /// `e_type`: relocatable, executable, shared object, core, ...
    e_type: u16,
    /// Whether any program header was read.
    has_headers: bool,
    /// Whether it has a dynamic section.
    dynamic: bool,
    /// The program interpreter it names, if any.
    interpreter: Option<String>,
    /// With a dynamic section: whether it is a position-independent
    /// executable (`DF_1_PIE`, or having an interpreter when the flag lies
    /// beyond the chunk).
    pie: Option<bool>,
}

impl Layout {
    fn of(elf: &Elf<'_>) -> Layout {
        const PT_DYNAMIC: u32 = 2;
        const PT_INTERP: u32 = 3;
        let headers = elf.program_headers().unwrap_or_default();
        let find = |kind: u32| headers.iter().find(|(t, _, _)| *t == kind);
        let interpreter = find(PT_INTERP).and_then(|(_, offset, size)| {
            let start = usize::try_from(*offset).ok()?;
            let bytes = elf
                .head
                .get(start..start.checked_add(usize::try_from(*size).ok()?)?)?;
            let path = bytes.split(|b| *b == 0).next()?;
            Some(String::from_utf8_lossy(path).into_owned())
        });
        let dynamic = find(PT_DYNAMIC);
        let pie = dynamic.map(|(_, offset, size)| {
            elf.pie_flag(*offset, *size)
                .unwrap_or(find(PT_INTERP).is_some())
        });
        Layout {
            e_type: elf.u16(16).unwrap_or(0),
            has_headers: !headers.is_empty(),
            dynamic: dynamic.is_some(),
            interpreter,
            pie,
        }
    }

    /// The object's type as `file` names it; `None` for a type it does not
    /// name.
    fn kind(&self) -> Option<&'static str> {
        match self.e_type {
            0 => Some("no file type"),
            1 => Some("relocatable"),
            2 => Some("executable"),
            3 if self.pie == Some(true) => Some("pie executable"),
            3 => Some("shared object"),
            4 => Some("core file"),
            _ => None,
        }
    }

    /// How it is linked; `None` for a core file, or when no program header
    /// was read.
    fn linked(&self) -> Option<&'static str> {
        if self.e_type == 4 || !self.has_headers {
            None
        } else if self.e_type == 3 && self.pie == Some(true) && self.interpreter.is_none() {
            Some("static-pie linked")
        } else if self.dynamic || self.interpreter.is_some() {
            Some("dynamically linked")
        } else {
            Some("statically linked")
        }
    }
}

/// The machines `file` names by their number alone.
const MACHINES: &[(u16, &str)] = &[
    (0, "no machine"),
    (2, "SPARC"),
    (3, "Intel 80386"),
    (4, "Motorola m68k"),
    (20, "PowerPC or cisco 4500"),
    (22, "IBM S/390"),
    (41, "Alpha"),
    (42, "Renesas SH"),
    (50, "IA-64"),
    (62, "x86-64"),
    (83, "Atmel AVR 8-bit"),
    (94, "Tensilica Xtensa"),
    (105, "TI msp430"),
    (183, "ARM aarch64"),
    (189, "Xilinx MicroBlaze 32-bit RISC"),
    (190, "NVIDIA CUDA architecture"),
    (247, "eBPF"),
    (258, "LoongArch"),
];

/// The machine as `file` names it, and whether a comma follows the name:
/// from [`MACHINES`], or with details from the header's flags for MIPS,
/// 64-bit PowerPC, ARM and RISC-V. Machines outside these are shown by
/// number, as `file` shows the ones it does not know.
fn machine(elf: &Elf<'_>) -> (String, bool) {
    let flags = elf.u32(if elf.wide { 48 } else { 36 }).unwrap_or(0);
    let code = elf.u16(18).unwrap_or(0);
    match code {
        8 => mips(flags),
        21 => power64(flags),
        40 => arm(flags),
        243 => risc_v(flags),
        _ => match MACHINES.iter().find(|(known, _)| *known == code) {
            Some((_, name)) => ((*name).to_string(), true),
            None => (
                format!("*unknown arch {}*", alt_hex(u64::from(code))),
                false,
            ),
        },
    }
}

/// MIPS with its architecture level (the flags' top four bits), after
/// which `file` puts no comma.
fn mips(flags: u32) -> (String, bool) {
    const ARCHES: [&str; 11] = [
        "MIPS-I",
        "MIPS-II",
        "MIPS-III",
        "MIPS-IV",
        "MIPS-V",
        "MIPS32",
        "MIPS64",
        "MIPS32 rel2",
        "MIPS64 rel2",
        "MIPS32 rel6",
        "MIPS64 rel6",
    ];
    match ARCHES.get((flags >> 28) as usize) {
        Some(arch) => (format!("MIPS, {arch}"), false),
        None => ("MIPS".to_string(), true),
    }
}

/// 64-bit PowerPC with its ABI (the flags' low two bits).
fn power64(flags: u32) -> (String, bool) {
    let abi = match flags & 3 {
        1 => "Power ELF V1 ABI",
        2 => "OpenPOWER ELF V2 ABI",
        _ => "Unspecified or Power ELF V1 ABI",
    };
    (format!("64-bit PowerPC or cisco 7500, {abi}"), true)
}

/// ARM with its EABI version (the flags' top byte), after which `file`
/// puts no comma.
fn arm(flags: u32) -> (String, bool) {
    match flags >> 24 {
        0 => ("ARM".to_string(), true),
        eabi => (format!("ARM, EABI{eabi}"), false),
    }
}

/// RISC-V with its compressed (RVC) and embedded (RVE) extensions and its
/// float ABI.
fn risc_v(flags: u32) -> (String, bool) {
    let mut name = "UCB RISC-V".to_string();
    if flags & 1 != 0 {
        name.push_str(", RVC");
    }
    if flags & 8 != 0 {
        name.push_str(", RVE");
    }
    let abi = ["soft-float", "single-float", "double-float", "quad-float"];
    name.push_str(&format!(", {} ABI", abi[((flags >> 1) & 3) as usize]));
    (name, true)
}

/// The OS/ABI byte as `file` names it.
fn os_abi(code: u8) -> &'static str {
    match code {
        0 => "SYSV",
        1 => "HP-UX",
        2 => "NetBSD",
        3 => "GNU/Linux",
        4 => "GNU/Hurd",
        5 => "86Open",
        6 => "Solaris",
        7 => "Monterey",
        8 => "IRIX",
        9 => "FreeBSD",
        10 => "Tru64",
        11 => "Novell Modesto",
        12 => "OpenBSD",
        13 => "OpenVMS",
        14 => "HP NonStop Kernel",
        15 => "AROS Research Operating System",
        16 => "FenixOS",
        17 => "Nuxi CloudABI",
        97 => "ARM",
        255 => "embedded",
        _ => "unknown",
    }
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
