//! ELF objects as `file` names them: class, byte order, type, machine
//! (with the details some machines' flags carry), OS/ABI and how the object
//! is linked. Only the first chunk is read: a position-independent
//! executable is told from a shared object by `DF_1_PIE` when the dynamic
//! section lies within it, otherwise by its program interpreter.

use super::alt_hex;

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
pub(super) fn elf(head: &[u8]) -> String {
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
