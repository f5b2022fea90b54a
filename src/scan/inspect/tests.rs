//! Classification and line counting on real files: chunk and UTF-8
//! boundaries, size hints, sparse files, special and unreadable files.

use super::*;
use std::fs;
use std::os::unix::fs::FileExt;

fn facts(content: &[u8], name: &str, by_ext: Option<&'static str>) -> Inspection {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    fs::write(&path, content).unwrap();
    inspect_path(&path, by_ext, content.len() as u64, &mut Buffer::new())
}

#[test]
fn newline_counting_matches_a_naive_count() {
    for len in [0, 1, 7, 8, 9, 2039, 2040, 2041, 8161, 70_000] {
        let bytes: Vec<u8> = (0..len)
            .map(|i| if i % 7 == 0 { b'\n' } else { b'x' })
            .collect();
        let naive = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        assert_eq!(count_newlines(&bytes), naive, "len {len}");
    }
    // A block of nothing but newlines must not overflow a lane.
    assert_eq!(count_newlines(&vec![b'\n'; 100_000]), 100_000);
}

proptest::proptest! {
    #[test]
    fn newline_counting_is_exact(bytes in proptest::collection::vec(
        proptest::sample::select(vec![b'\n', b'a', 0u8, 0x8a, 0x0b, 0xff]), 0..6000))
    {
        let naive = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        proptest::prop_assert_eq!(count_newlines(&bytes), naive);
    }
}

#[test]
fn source_by_extension_counts_newlines_like_wc() {
    let f = facts(b"a\nb\nc", "x.py", Some("source"));
    assert_eq!(
        f,
        Inspection {
            category: "source",
            description: None,
            lines: 2
        }
    );
}

#[test]
fn other_extensions_are_not_read() {
    let f = facts(b"a\nb\n", "x.json", Some("config"));
    assert_eq!(
        f,
        Inspection {
            category: "config",
            description: None,
            lines: 0
        }
    );
}

#[test]
fn extensionless_text_is_source_and_counted() {
    let f = facts(b"hello\nworld\n", "README", None);
    assert_eq!(f.category, "source");
    assert_eq!(f.description.as_deref(), Some("ASCII text"));
    assert_eq!(f.lines, 2);
}

#[test]
fn binary_and_empty_files_are_unknown() {
    let f = facts(b"\0\x01\x02\n", "blob", None);
    assert_eq!(
        (f.category, f.description.as_deref(), f.lines),
        ("unknown", Some("data"), 0)
    );
    let f = facts(b"", "nothing", None);
    assert_eq!(
        (f.category, f.description.as_deref()),
        ("unknown", Some("empty"))
    );
}

#[test]
fn large_text_is_counted_across_chunks_and_utf8_boundaries() {
    // 'é' is two bytes; an odd prefix puts one across every chunk boundary.
    let mut text = b"x".to_vec();
    while text.len() < 3 * CHUNK + 10 {
        text.extend_from_slice("caf\u{e9}\n".as_bytes());
    }
    let expected = count_newlines(&text);
    let f = facts(&text, "notes", None);
    assert_eq!(f.description.as_deref(), Some("UTF-8 Unicode text"));
    assert_eq!(f.lines, expected);
}

#[test]
fn a_wrong_size_hint_still_reads_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grew.py");
    fs::write(&path, b"1\n2\n3\n").unwrap();
    let f = inspect_path(&path, Some("source"), 2, &mut Buffer::new());
    assert_eq!(f.lines, 3);
    let f = inspect_path(&path, None, 1 << 40, &mut Buffer::new());
    assert_eq!(f.lines, 3);
}

/// Write `pieces` at their offsets into a file of `len` bytes that is
/// otherwise holes.
fn sparse_file(path: &Path, len: u64, pieces: &[(u64, &[u8])]) {
    let file = File::create(path).unwrap();
    file.set_len(len).unwrap();
    for (offset, bytes) in pieces {
        file.write_all_at(bytes, *offset).unwrap();
    }
}

/// Run `f` on another thread; fail if it takes longer than a terabyte of
/// zeros could never be read in.
fn within_a_minute<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(f()));
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{what}: still reading after a minute; holes are being read"))
}

#[test]
fn sparse_files_are_counted_exactly_without_reading_their_holes() {
    const TIB: u64 = 1 << 40;
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("huge.py");
    sparse_file(
        &source,
        TIB,
        &[(0, b"a\n"), (TIB / 2, b"b\nc\n"), (TIB - 4, b"end\n")],
    );
    // Text for more than the sniffing window, then a hole, then a line.
    let text = dir.path().join("huge_notes");
    let head = "line\n".repeat(300_000);
    sparse_file(&text, TIB, &[(0, head.as_bytes()), (TIB - 5, b"tail\n")]);
    let facts = within_a_minute("a sparse source file", move || {
        let by_extension = inspect_path(&source, Some("source"), TIB, &mut Buffer::new());
        let sniffed = inspect_path(&text, None, TIB, &mut Buffer::new());
        (by_extension, sniffed)
    });
    assert_eq!(facts.0.lines, 4);
    assert_eq!(facts.1.description.as_deref(), Some("ASCII text"));
    assert_eq!(facts.1.lines, 300_001);
}

#[test]
fn hole_skipping_counts_what_reading_counts() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = fastrand::Rng::with_seed(11);
    for round in 0..20 {
        let len = rng.u64(1..(8 << 20));
        let pieces: Vec<(u64, Vec<u8>)> = (0..rng.usize(0..6))
            .map(|_| {
                let mut bytes: Vec<u8> = (0..rng.usize(1..(300 << 10)))
                    .map(|_| if rng.u8(..) < 16 { b'\n' } else { b'x' })
                    .collect();
                // Newlines right at the edges of data extents too.
                bytes[0] = b'\n';
                *bytes.last_mut().unwrap() = b'\n';
                let offset = rng.u64(0..len);
                let offset = if rng.bool() { offset & !4095 } else { offset };
                (offset, bytes)
            })
            .collect();
        let path = dir.path().join(format!("f{round}.py"));
        let borrowed: Vec<(u64, &[u8])> = pieces.iter().map(|(o, b)| (*o, b.as_slice())).collect();
        sparse_file(&path, len, &borrowed);
        let naive = count_newlines(&fs::read(&path).unwrap());
        let size = fs::metadata(&path).unwrap().len();
        let f = inspect_path(&path, Some("source"), size, &mut Buffer::new());
        assert_eq!(f.lines, naive, "round {round}");
    }
}

#[test]
fn unreadable_and_vanished_files_do_not_fail() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let f = inspect_path(&gone, Some("source"), 10, &mut Buffer::new());
    assert_eq!(f.lines, 0);
    let f = inspect_path(&gone, None, 10, &mut Buffer::new());
    assert_eq!(f.category, "unknown");
    assert!(f.description.unwrap().starts_with("cannot open"));
}

#[test]
fn symlinks_are_described_as_links_like_file_does() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("../elsewhere/AUTHORS", dir.path().join("AUTHORS")).unwrap();
    let f = describe_symlink(&dir.path().join("AUTHORS"));
    assert_eq!(f.category, "unknown");
    assert_eq!(
        f.description.as_deref(),
        Some("symbolic link to ../elsewhere/AUTHORS")
    );
}

#[test]
fn a_fifo_is_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    crate::testing::mkfifo(&fifo);
    let f = inspect_path(&fifo, None, 0, &mut Buffer::new());
    assert_eq!(f.description.as_deref(), Some("fifo (named pipe)"));
    let f = inspect_path(&fifo, Some("source"), 0, &mut Buffer::new());
    assert_eq!(f.lines, 0);
}
