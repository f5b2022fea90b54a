//! File classification against the reference, binary formats described as
//! `file` does, and pruned hidden/excluded directories.

use super::*;
use similar_asserts::assert_eq;

#[test]
fn classification_follows_the_reference() {
    let env = TestEnv::new();
    env.files(&[
        ("script.py", "print('hello')\n"),
        ("image.PNG", "not really"),
        ("data.json", "{\"key\": \"value\"}"),
        ("query.sql", "select 1;\n"),
        ("README", "plain words\n"),
        ("run", "#!/usr/bin/env python3\nprint(1)\n"),
    ])
    .file("blob", [0u8, 1, 2, 3, 255])
    .file("empty", "")
    .file("pic", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01")
    .file("archive", b"\x1f\x8b\x08\0\0\0\0\0\0\x03abc")
    .file("doc", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    .file("sub/.hidden.py", "x")
    .file(".hidden_dir/x.py", "x")
    .symlink("script.py", "link.py")
    .symlink("README", "README_link")
    .symlink("sub", "sub_link");
    mkfifo(&env.path("fifo"));
    let _socket = std::os::unix::net::UnixListener::bind(env.path("sock")).unwrap();
    let report = run(env.target(), &options());

    let paths: Vec<&str> = report
        .classified_files
        .iter()
        .map(|f| f.path.as_str())
        .collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted, "sorted by path");

    let get = |name: &str| {
        report
            .classified_files
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("{name} not classified"))
    };
    let expect = |name: &str, category: &str, description: Option<&str>| {
        let f = get(name);
        assert_eq!(
            (f.category.as_str(), f.description.as_deref()),
            (category, description),
            "{name}"
        );
    };
    expect("script.py", "source", None);
    expect("image.PNG", "media", None);
    expect("data.json", "config", None);
    expect("query.sql", "data", None);
    // Prose by its name is a document, not source (the original said
    // source); its description stays.
    expect("README", "document", Some("ASCII text"));
    expect(
        "run",
        "source",
        Some("Python script, ASCII text executable"),
    );
    expect("blob", "unknown", Some("data"));
    expect("empty", "unknown", Some("empty"));
    expect("pic", "media", Some("PNG image data"));
    expect("archive", "archive", Some("gzip compressed data"));
    expect("doc", "document", Some("PDF document, version 1.7"));
    expect("link.py", "source", None);
    // `file` does not follow symlinks, so the original saw only the link.
    expect("README_link", "unknown", Some("symbolic link to README"));
    assert_eq!(get("link.py").size, get("script.py").size);
    assert_eq!(
        get("script.py").path,
        env.path("script.py").to_string_lossy()
    );
    for absent in ["fifo", "sock", ".hidden.py", "x.py", "sub_link"] {
        assert!(!classified_names(&report).contains(&absent), "{absent}");
    }
    assert_eq!(report.survey_signals.total_files, 13);
    assert_eq!(report.file_categories.values().sum::<u64>(), 13);
    // First-seen order over the sorted list: README comes first.
    assert_eq!(report.file_categories.keys().next().unwrap(), "document");
    assert_eq!(report.survey_signals.file_descriptions["data"], 1);
}

/// A licence, Debian's `copyright` and a changelog are prose: documents
/// whose lines are not code, so no `Other` language appears for them.
#[test]
fn licences_and_copyright_files_are_not_source_lines() {
    let env = TestEnv::new();
    env.files(&[
        ("main.py", "print('hello')\n"),
        (
            "LICENSE",
            "Permission is hereby granted, free of charge...\nline two\n",
        ),
        ("LICENSE-APACHE", "Apache License\nVersion 2.0\n"),
        (
            "debian/copyright",
            "Format: https://www.debian.org/doc/\nFiles: *\n",
        ),
        ("CHANGELOG", "v1: first\n"),
        ("notes", "plain words\n"),
    ]);
    let report = run(env.target(), &options());
    let category = |name: &str| {
        report
            .classified_files
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.category.clone())
            .unwrap()
    };
    for prose in ["LICENSE", "LICENSE-APACHE", "copyright", "CHANGELOG"] {
        assert_eq!(category(prose), "document", "{prose}");
    }
    // Any other text file without an extension is source, as the
    // original says.
    assert_eq!(category("notes"), "source");
    assert_eq!(report.lines_of_code["Python"], 1);
    assert_eq!(report.lines_of_code["Other"], 1, "only notes");
}

/// Compiled Python, ELF objects, keystores, OpenPGP keys and SQLite
/// databases are described as `file` describes them (real bytes of each),
/// and those descriptions are what the survey sees (cut at 80 characters).
#[test]
fn common_binary_formats_are_described_as_file_does() {
    let env = TestEnv::new();
    let sqlite_header: Vec<u8> = (0..100)
        .map(|i| match i {
            0..=15 => b"SQLite format 3\0"[i],
            16 => 0x10,
            18 | 19 | 27 | 31 | 43 | 59 | 95 => 1,
            47 => 4,
            96 => 0x00,
            97 => 0x2e,
            98 => 0x63,
            99 => 0x01,
            _ => 0,
        })
        .collect();
    env.file(
        "__pycache__/m.cpython-311.pyc",
        b"\xa7\x0d\x0d\x0a\0\0\0\0\x1a\xbb\x04\x6b\x09\0\0\0\xe3\0\0\0",
    )
    .file(
        "bin/hello",
        std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sniff/hello-pie"),
        )
        .unwrap(),
    )
    .file("keys/store.jks", b"\xfe\xed\xfe\xed\0\0\0\x02\0\0\0\x01")
    .file(
        "keys/pub.gpg",
        b"\x98\x33\x04\x6b\x04\xbb\x23\x16\x09\x2b\x06\x01",
    )
    .file(
        "keys/pub.asc",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEawS7IxYJKwYBBAHaRw8BAQdA\n",
    )
    .file("state.sqlite3", sqlite_header);
    let report = run(env.target(), &options());
    let description = |name: &str| {
        report
            .classified_files
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| f.description.clone())
            .unwrap_or_else(|| panic!("{name} has no description"))
    };
    assert_eq!(
        description("m.cpython-311.pyc"),
        "Byte-compiled Python module for CPython 3.11, timestamp-based, \
         .py timestamp: Mon Nov 23 22:15:54 2026 UTC, .py size: 9 bytes"
    );
    assert_eq!(
        description("hello"),
        "ELF 64-bit LSB pie executable, x86-64, version 1 (SYSV), dynamically linked, \
         interpreter /lib64/ld-linux-x86-64.so.2"
    );
    assert_eq!(description("store.jks"), "Java KeyStore");
    assert_eq!(
        description("pub.gpg"),
        "OpenPGP Public Key Version 4, Created Mon Nov 23 22:16:03 2026, EdDSA"
    );
    assert_eq!(
        description("pub.asc"),
        "PGP public key block Public-Key (old)"
    );
    assert_eq!(
        description("state.sqlite3"),
        "SQLite 3.x database, last written using SQLite version 3040001, file counter 1, \
         database pages 1, cookie 0x1, schema 4, UTF-8, version-valid-for 1"
    );
    let signals = &report.survey_signals.file_descriptions;
    let elf = description("hello");
    assert_eq!(signals[&format!("{}...", &elf[..80])], 1, "{signals:?}");
    assert_eq!(signals["Java KeyStore"], 1);
}

#[test]
fn hidden_and_excluded_directories_are_pruned_from_classification() {
    let env = TestEnv::new();
    env.files(&[
        (".hidden.py", "x"),
        ("visible.py", "x"),
        ("node_modules/pkg.js", "x"),
        ("src/node_modules/dep.js", "x"),
    ]);
    let mut opts = options();
    opts.exclude = vec!["node_modules".into()];
    let report = run(env.target(), &opts);
    assert_eq!(classified_names(&report), ["visible.py"]);
    opts.show_hidden = true;
    let report = run(env.target(), &opts);
    assert_eq!(classified_names(&report), [".hidden.py", "visible.py"]);
}
