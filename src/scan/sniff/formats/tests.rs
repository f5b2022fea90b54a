//! Each case is real bytes (the start of a file made by gcc, py_compile,
//! keytool, gpg or sqlite3 on a Linux machine) and what `file` 5.44 printed
//! for the whole file, cut where our description ends.

use super::*;

macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sniff/",
            $name
        ))
    };
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// `ours` is what `file` printed, or the start of it up to a `, `.
fn assert_prefix_of(ours: &str, file_says: &str) {
    assert!(
        file_says == ours || file_says.starts_with(&format!("{ours}, ")),
        "ours: {ours}\nfile: {file_says}"
    );
}

#[test]
fn elf_objects_name_class_type_machine_abi_and_linking() {
    let cases: [(&[u8], &str, &str); 5] = [
        (
            fixture!("hello-pie"),
            "ELF 64-bit LSB pie executable, x86-64, version 1 (SYSV), dynamically linked, \
             interpreter /lib64/ld-linux-x86-64.so.2",
            "ELF 64-bit LSB pie executable, x86-64, version 1 (SYSV), dynamically linked, \
             interpreter /lib64/ld-linux-x86-64.so.2, \
             BuildID[sha1]=a5591ed99d70ab238fae1bda8a999809209efcf4, for GNU/Linux 3.2.0, stripped",
        ),
        (
            fixture!("libhello.so"),
            "ELF 64-bit LSB shared object, x86-64, version 1 (SYSV), dynamically linked",
            "ELF 64-bit LSB shared object, x86-64, version 1 (SYSV), dynamically linked, \
             BuildID[sha1]=3e9b595b7b5a48f56c8cf900762774681ef0366a, stripped",
        ),
        (
            fixture!("hello-nopie.head"),
            "ELF 64-bit LSB executable, x86-64, version 1 (SYSV), dynamically linked, \
             interpreter /lib64/ld-linux-x86-64.so.2",
            "ELF 64-bit LSB executable, x86-64, version 1 (SYSV), dynamically linked, \
             interpreter /lib64/ld-linux-x86-64.so.2, \
             BuildID[sha1]=506ec0c9e8b45e2d2f2cb43ad16a93605d947963, for GNU/Linux 3.2.0, stripped",
        ),
        (
            fixture!("hello-static.head"),
            "ELF 64-bit LSB executable, x86-64, version 1 (GNU/Linux), statically linked",
            "ELF 64-bit LSB executable, x86-64, version 1 (GNU/Linux), statically linked, \
             BuildID[sha1]=8f170ccb1ce84721e158ccf1c7d09f0ea9c95271, for GNU/Linux 3.2.0, \
             not stripped",
        ),
        (
            fixture!("hello32.o"),
            "ELF 32-bit LSB relocatable, Intel 80386, version 1 (SYSV)",
            "ELF 32-bit LSB relocatable, Intel 80386, version 1 (SYSV), not stripped",
        ),
    ];
    for (bytes, expected, file_says) in cases {
        let ours = binary_format(bytes).unwrap();
        assert_eq!(ours, expected);
        assert_prefix_of(&ours, file_says);
    }
    // With the dynamic section out of sight, the interpreter tells a
    // position-independent executable from a library.
    let pie = fixture!("hello-pie");
    assert!(
        binary_format(&pie[..1024])
            .unwrap()
            .starts_with("ELF 64-bit LSB pie executable,")
    );
    let lib = fixture!("libhello.so");
    assert!(
        binary_format(&lib[..1024])
            .unwrap()
            .starts_with("ELF 64-bit LSB shared object,")
    );
}

/// Machines, flags and ABIs `file` spells in its own ways, on headers made
/// for the purpose and checked against `file`.
#[test]
fn elf_machine_and_abi_wording_follows_file() {
    let header = |wide: bool, machine: u16, flags: u32, os_abi: u8| {
        let mut h = vec![
            0x7f,
            b'E',
            b'L',
            b'F',
            if wide { 2 } else { 1 },
            1,
            1,
            os_abi,
        ];
        h.resize(16, 0);
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&machine.to_le_bytes());
        h.extend_from_slice(&1u32.to_le_bytes());
        h.resize(if wide { 48 } else { 36 }, 0);
        h.extend_from_slice(&flags.to_le_bytes());
        h.resize(128, 0);
        h
    };
    let cases = [
        (
            true,
            183,
            0,
            0,
            "ELF 64-bit LSB executable, ARM aarch64, version 1 (SYSV)",
        ),
        (
            false,
            40,
            0x0500_0000,
            3,
            "ELF 32-bit LSB executable, ARM, EABI5 version 1 (GNU/Linux)",
        ),
        (
            true,
            243,
            5,
            0,
            "ELF 64-bit LSB executable, UCB RISC-V, RVC, double-float ABI, version 1 (SYSV)",
        ),
        (
            false,
            8,
            0x7000_0000,
            0,
            "ELF 32-bit LSB executable, MIPS, MIPS32 rel2 version 1 (SYSV)",
        ),
        (
            true,
            21,
            2,
            0,
            "ELF 64-bit LSB executable, 64-bit PowerPC or cisco 7500, OpenPOWER ELF V2 ABI, version 1 (SYSV)",
        ),
        (
            true,
            62,
            0,
            9,
            "ELF 64-bit LSB executable, x86-64, version 1 (FreeBSD)",
        ),
        (
            true,
            299,
            0,
            0,
            "ELF 64-bit LSB executable, *unknown arch 0x12b* version 1 (SYSV)",
        ),
    ];
    for (wide, machine, flags, os_abi, expected) in cases {
        assert_eq!(
            binary_format(&header(wide, machine, flags, os_abi)).unwrap(),
            expected
        );
    }
    // A class `file` does not know is only `ELF`.
    let mut odd = header(true, 62, 0, 0);
    odd[4] = 3;
    assert_eq!(binary_format(&odd).unwrap(), "ELF");
}

#[test]
fn compiled_python_names_its_version_and_header() {
    let cases: [(&[u8], &str); 5] = [
        (
            b"\x03\xf3\x0d\x0a\x1a\xbb\x04\x6b\x63\x00\x00\x00\x00\x00\x00\x00",
            "python 2.7 byte-compiled",
        ),
        (
            b"\x33\x0d\x0d\x0a\x1a\xbb\x04\x6b\x09\x00\x00\x00\xe3\x00\x00\x00",
            "python 3.6 byte-compiled",
        ),
        (
            b"\xa7\x0d\x0d\x0a\x00\x00\x00\x00\x1a\xbb\x04\x6b\x09\x00\x00\x00",
            "Byte-compiled Python module for CPython 3.11, timestamp-based, \
             .py timestamp: Mon Nov 23 22:15:54 2026 UTC, .py size: 9 bytes",
        ),
        (
            b"\xcb\x0d\x0d\x0a\x03\x00\x00\x00\xbf\x71\xf3\x61\xa5\xf8\xcd\x69",
            "Byte-compiled Python module for CPython 3.12 or newer, hash-based, \
             check-source flag set, hash: 0x69cdf8a561f371bf",
        ),
        (
            b"\xcb\x0d\x0d\x0a\x01\x00\x00\x00\xbf\x71\xf3\x61\xa5\xf8\xcd\x69",
            "Byte-compiled Python module for CPython 3.12 or newer, hash-based, \
             check-source flag unset, hash: 0x69cdf8a561f371bf",
        ),
    ];
    for (bytes, expected) in cases {
        assert_eq!(binary_format(bytes).unwrap(), expected);
    }
    // Days below ten are padded with a space, as ctime pads them.
    let epoch = b"\xa7\x0d\x0d\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00";
    assert!(
        binary_format(epoch)
            .unwrap()
            .contains(".py timestamp: Thu Jan  1 00:00:00 1970 UTC, .py size: 0 bytes")
    );
    // A magic number `file` does not know, or no `\r\n`, is no Python.
    assert_eq!(
        binary_format(b"\x10\x27\x0d\x0a\0\0\0\0\0\0\0\0\0\0\0\0"),
        None
    );
    assert_eq!(
        binary_format(b"\xa7\x0d\x0a\x0d\0\0\0\0\0\0\0\0\0\0\0\0"),
        None
    );
}

#[test]
fn java_keystores_are_named() {
    assert_eq!(
        binary_format(b"\xfe\xed\xfe\xed\x00\x00\x00\x02").unwrap(),
        "Java KeyStore"
    );
    assert_eq!(
        binary_format(b"\xce\xce\xce\xce\x00\x00\x00\x02").unwrap(),
        "Java JCE KeyStore"
    );
    // A PKCS#12 keystore is `data` to `file`; it is not one of ours.
    assert_eq!(binary_format(b"\x30\x82\x09\xda\x02\x01\x03\x30"), None);
}

#[test]
fn openpgp_keys_name_kind_version_date_and_algorithm() {
    let cases: [(&[u8], &str); 3] = [
        (
            b"\x98\x33\x04\x6b\x04\xbb\x23\x16\x09\x2b\x06\x01",
            "OpenPGP Public Key Version 4, Created Mon Nov 23 22:16:03 2026, EdDSA",
        ),
        (
            b"\x94\x58\x04\x6b\x04\xbb\x23\x16\x09\x2b\x06\x01",
            "OpenPGP Secret Key Version 4, Created Mon Nov 23 22:16:03 2026, EdDSA",
        ),
        (
            b"\x99\x01\x0d\x04\x6b\x04\xbb\x23\x01\x08\x00\xe6",
            "OpenPGP Public Key Version 4, Created Mon Nov 23 22:16:03 2026, \
             RSA (Encrypt or Sign, 2048 bits)",
        ),
    ];
    for (bytes, expected) in cases {
        let ours = binary_format(bytes).unwrap();
        assert_eq!(ours, expected);
    }
    // The new packet format, and the other algorithms, as `file` words them.
    let key = |header: &[u8], algorithm: u8| {
        let mut bytes = header.to_vec();
        bytes.extend_from_slice(b"\x04\x6b\x04\xbb\x23");
        bytes.push(algorithm);
        bytes.extend_from_slice(b"\x08\x00");
        binary_format(&bytes).unwrap()
    };
    assert_eq!(
        key(b"\xc5\x33", 17),
        "OpenPGP Secret Key Version 4, Created Mon Nov 23 22:16:03 2026, DSA (2048 bits)"
    );
    assert!(key(b"\xc6\x33", 16).ends_with(", El Gamal (Encrypt, 2048 bits)"));
    assert!(key(b"\x98\x33", 3).ends_with(", RSA (Sign, 2048 bits)"));
    assert!(key(b"\x98\x33", 99).ends_with(", Unknown Algorithm (0x63)"));
    // Other packets (a signature first) are not keys.
    assert_eq!(binary_format(b"\x89\x01\x33\x04\x00\x01\x08\x00"), None);
}

#[test]
fn armored_openpgp_blocks_name_their_first_packet() {
    let cases = [
        (
            "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEawS7IxYJKwYBBAHaRw8BAQdAOzXZ/Tc337Cl\n",
            "PGP public key block Public-Key (old)",
        ),
        (
            "-----BEGIN PGP PUBLIC KEY BLOCK-----\nVersion: GnuPG v1\n\nmQINBGsEuyMBEACu1Y\n",
            "PGP public key block Public-Key (old)",
        ),
        (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlFgEawS7IxYJKwYBBAHaRw8BAQdAOzXZ/Tc337Cl\n",
            "PGP private key block",
        ),
        (
            "-----BEGIN PGP SIGNATURE-----\n\niHUEABYIAB0WIQRN6AaEiC6++WaYhGZpHbKpu2IK\n",
            "PGP signature Signature (old)",
        ),
        (
            "-----BEGIN PGP MESSAGE-----\n\nhQEMA\n",
            "PGP message Public-Key Encrypted Session Key (old)",
        ),
        (
            "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nhello\n",
            "PGP signed message",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(pgp_armor(text.as_bytes()).unwrap(), expected, "{text}");
    }
    assert_eq!(pgp_armor(b"-----BEGIN CERTIFICATE-----\n"), None);
}

#[test]
fn sqlite_databases_show_their_header() {
    let cases = [
        (
            "53514c69746520666f726d61742033001000010100402020000000010000000200000000000000000000000100000004000000000000000000000001000000000000000000000000000000000000000000000000000000000000000000000001002e6301",
            "SQLite 3.x database, last written using SQLite version 3040001, file counter 1, \
             database pages 2, cookie 0x1, schema 4, UTF-8, version-valid-for 1",
        ),
        (
            "53514c69746520666f726d617420330010000101004020200000000300000002000000000000000000000001000000040000000000000000000000010000000700000000000004d2000000000000000000000000000000000000000000000003002e6301",
            "SQLite 3.x database, application id 1234, user version 7, last written using \
             SQLite version 3040001, file counter 3, database pages 2, cookie 0x1, schema 4, \
             UTF-8, version-valid-for 3",
        ),
        (
            "53514c69746520666f726d61742033001000020200402020000000020000000200000000000000000000000100000004000000000000000000000001000000000000000000000000000000000000000000000000000000000000000000000002002e6301",
            "SQLite 3.x database, last written using SQLite version 3040001, writer version 2, \
             read version 2, file counter 2, database pages 2, cookie 0x1, schema 4, UTF-8, \
             version-valid-for 2",
        ),
    ];
    for (header, expected) in cases {
        assert_eq!(binary_format(&hex(header)).unwrap(), expected);
    }
    // An empty database has no schema and no encoding yet.
    let mut empty = hex(cases[0].0);
    for at in [28, 40, 44, 56] {
        empty[at..at + 4].copy_from_slice(&[0, 0, 0, 0]);
    }
    empty[31] = 1;
    assert!(binary_format(&empty).unwrap().ends_with(
        "database pages 1, cookie 0, schema 0, unknown 0 encoding, version-valid-for 1"
    ));
    // A header cut short is named without details.
    assert_eq!(
        binary_format(&hex(cases[0].0)[..40]).unwrap(),
        "SQLite 3.x database"
    );
}
