//! Redactor measurements on a real corpus with no live secrets in it, the
//! crate sources under `~/.cargo/registry/src` (recall on the fixture runs in
//! the normal suite, `all::redaction`): redacted spans, hits taken for real
//! credentials and redaction notices (one `info` flag per file) per 10,000
//! files, and throughput against a plain copy of the same text.
//!
//! Fake secrets are generated at run time, so the repository holds nothing a
//! secret scanner would mistake for a live key.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use luminos::redact::{RULES, Redactor};

use crate::support::secrets::{examples, fixture};

/// The corpus: `LUMINOS_REDACT_CORPUS` if set, else where cargo keeps
/// downloaded crate sources.
pub(crate) fn registry_src() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("LUMINOS_REDACT_CORPUS") {
        return Some(PathBuf::from(dir)).filter(|d| d.is_dir());
    }
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))?;
    let src = home.join("registry").join("src");
    src.is_dir().then_some(src)
}

/// Every text file (valid UTF-8, no NUL) of at most 1 MiB under `root`.
fn load_corpus(root: &Path) -> (Vec<(PathBuf, String)>, usize) {
    let mut files = Vec::new();
    let mut skipped = 0;
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_file() {
            continue;
        }
        let small = entry.metadata().is_ok_and(|m| m.len() <= 1 << 20);
        let text = small
            .then(|| std::fs::read(entry.path()).ok())
            .flatten()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .filter(|text| !text.contains('\0'));
        match text {
            Some(text) => files.push((entry.path().to_path_buf(), text)),
            None => skipped += 1,
        }
    }
    (files, skipped)
}

fn mb_per_s(bytes: usize, elapsed: Duration) -> f64 {
    bytes as f64 / 1e6 / elapsed.as_secs_f64()
}

/// The fastest of three runs of `f`, to keep a shared machine's noise out.
fn best_of_three(mut f: impl FnMut()) -> Duration {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .expect("three runs")
}

/// The corpus re-cut into texts of about 1 MiB, the size of a large request
/// body, to show the rate on big inputs rather than on many small files.
fn one_mib_texts(files: &[(PathBuf, String)]) -> Vec<String> {
    let mut texts = vec![String::new()];
    for (_, text) in files {
        let last = texts.last_mut().expect("never empty");
        last.push_str(text);
        if last.len() >= 1 << 20 {
            texts.push(String::new());
        }
    }
    texts
}

/// What the redactor did to the corpus, file by file with one redactor (as
/// in a run): every span it masked and every flag it would raise.
#[derive(Default)]
struct Tally {
    /// `[REDACTED:` markers added: rule matches and remembered stretches.
    spans: usize,
    files_with_spans: usize,
    /// Distinct (file, rule, line) of hits whose severity is not `info`:
    /// how often a rule takes something for a real credential.
    flags: usize,
    files_with_flags: usize,
    /// Every hit, examples included.
    hits: usize,
    /// Files with any hit: the redaction notices a run would raise (one
    /// `info` flag per file).
    files_with_hits: usize,
    /// Spans by rule and flag severity, for saying where they come from.
    by_rule: std::collections::BTreeMap<(&'static str, &'static str), usize>,
}

/// Redact every file, tally the spans and flags, and print each non-`info`
/// hit with its line (every hit with `LUMINOS_REDACT_SHOW=all`).
fn tally(root: &Path, files: &[(PathBuf, String)], redactor: &Redactor) -> Tally {
    let show_all = std::env::var("LUMINOS_REDACT_SHOW").is_ok_and(|v| v == "all");
    let mut tally = Tally::default();
    for (path, text) in files {
        // Named, as a run reads a file (some rules count only in files
        // named like credentials).
        let name = path.file_name().and_then(|n| n.to_str());
        let out = redactor.redact_named(name, text);
        let spans = out.text.matches("[REDACTED:").count() - text.matches("[REDACTED:").count();
        tally.spans += spans;
        tally.files_with_spans += usize::from(spans > 0);
        let mut flagged = std::collections::BTreeSet::new();
        for hit in &out.hits {
            let severity = hit.severity.as_str();
            *tally.by_rule.entry((hit.rule, severity)).or_default() += 1;
            if severity != "info" {
                flagged.insert((hit.rule, hit.line));
            }
            if severity != "info" || show_all {
                let line = text.lines().nth(hit.line - 1).unwrap_or("");
                let shown: String = line.trim().chars().take(160).collect();
                let rel = path.strip_prefix(root).unwrap_or(path);
                println!(
                    "hit {} {}:{} ({severity})\n    {shown}",
                    hit.rule,
                    rel.display(),
                    hit.line,
                );
            }
        }
        tally.flags += flagged.len();
        tally.files_with_flags += usize::from(!flagged.is_empty());
        tally.hits += out.hits.len();
        tally.files_with_hits += usize::from(!out.hits.is_empty());
    }
    tally
}

fn per_10k(count: usize, files: usize) -> f64 {
    count as f64 * 10_000.0 / files as f64
}

#[test]
#[ignore = "benchmark: needs ~/.cargo/registry/src; run with --release --ignored"]
fn spans_flags_and_throughput_on_crate_sources() {
    let Some(root) = registry_src() else {
        println!("no cargo registry sources found; nothing to measure");
        return;
    };
    let (files, skipped) = load_corpus(&root);
    if files.is_empty() {
        println!("{}: no text files; nothing to measure", root.display());
        return;
    }
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    let packages: usize = walkdir::WalkDir::new(&root)
        .min_depth(2)
        .max_depth(2)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_dir())
        .count();
    println!(
        "corpus: {} ({packages} packages, {} text files, {:.1} MB; {skipped} binary or >1 MiB files skipped)",
        root.display(),
        files.len(),
        bytes as f64 / 1e6
    );

    // The corpus holds no live secret, so every flag is a false alarm;
    // `info` spans (examples, placeholders, words assigned to secret names)
    // are masked without asking the user to look.
    let redactor = Redactor::new();
    let tally = tally(&root, &files, &redactor);
    for ((rule, severity), count) in &tally.by_rule {
        println!("  spans {rule:<22} {severity:<8} {count:>6}");
    }
    println!(
        "redacted spans: {} in {} files = {:.2} per 10,000 files",
        tally.spans,
        tally.files_with_spans,
        per_10k(tally.spans, files.len())
    );
    println!(
        "non-info hits: {} in {} files = {:.2} per 10,000 files (target < 5)",
        tally.flags,
        tally.files_with_flags,
        per_10k(tally.flags, files.len())
    );
    println!(
        "all hits: {} = {:.2} per 10,000 files; redaction notices (one info flag per file \
         with a hit): {} = {:.2} per 10,000 files",
        tally.hits,
        per_10k(tally.hits, files.len()),
        tally.files_with_hits,
        per_10k(tally.files_with_hits, files.len())
    );

    // The prefilter the learning before the first tool result uses: how
    // many files it sends to the full redactor, and that it never skips a
    // file the redactor finds something in (asserted: it must be sound).
    let passed: Vec<bool> = files
        .iter()
        .map(|(path, text)| {
            let name = path.file_name().and_then(|n| n.to_str());
            luminos::redact::may_hold_secret(name, text.as_bytes())
        })
        .collect();
    let missed: Vec<&PathBuf> = files
        .iter()
        .zip(&passed)
        .filter(|((path, text), passed)| {
            let name = path.file_name().and_then(|n| n.to_str());
            !**passed && !Redactor::new().redact_named(name, text).hits.is_empty()
        })
        .map(|((path, _), _)| path)
        .collect();
    let through = passed.iter().filter(|p| **p).count();
    let prefilter = best_of_three(|| {
        for (path, text) in &files {
            let name = path.file_name().and_then(|n| n.to_str());
            std::hint::black_box(luminos::redact::may_hold_secret(name, text.as_bytes()));
        }
    });
    println!(
        "prefilter: {through} of {} files ({:.1}%) go to the full redactor; {:.0} MB/s; \
         files with a hit it would have skipped: {}",
        files.len(),
        through as f64 * 100.0 / files.len() as f64,
        mb_per_s(bytes, prefilter),
        missed.len()
    );
    assert!(
        missed.is_empty(),
        "the prefilter skipped files with hits: {missed:?}"
    );

    // Baseline in the same run: copying every file, which any filter that
    // returns an owned String must do at least once.
    let copy = best_of_three(|| {
        for (_, text) in &files {
            std::hint::black_box(text.to_owned());
        }
    });
    let per_file = best_of_three(|| {
        for (_, text) in &files {
            std::hint::black_box(redactor.redact(text));
        }
    });
    let big = one_mib_texts(&files);
    let per_mib = best_of_three(|| {
        for text in &big {
            std::hint::black_box(redactor.redact(text));
        }
    });
    println!(
        "throughput: file by file {:.0} MB/s, in 1 MiB texts {:.0} MB/s; copy baseline {:.0} MB/s \
         (redact takes {:.1}x / {:.1}x the copy's time)",
        mb_per_s(bytes, per_file),
        mb_per_s(bytes, per_mib),
        mb_per_s(bytes, copy),
        per_file.as_secs_f64() / copy.as_secs_f64(),
        per_mib.as_secs_f64() / copy.as_secs_f64()
    );

    // A run that has already removed secrets also masks any stretch shared
    // with them: the same corpus, after every fixture secret was learned.
    let samples: Vec<_> = fixture().into_iter().chain(examples()).collect();
    let seasoned = Redactor::new();
    for sample in &samples {
        seasoned.redact(&sample.text);
    }
    let remembering = best_of_three(|| {
        for text in &big {
            std::hint::black_box(seasoned.redact(text));
        }
    });
    // Files where the remembered secrets masked something a redactor that
    // never saw them left alone.
    let fresh = Redactor::new();
    let mut masked = 0;
    for (path, text) in &files {
        let (remembering, plain) = (seasoned.redact(text).text, fresh.redact(text).text);
        if remembering == plain {
            continue;
        }
        masked += 1;
        // The first few, with the first line that differs, to say why.
        if masked <= 5 {
            let (line, was) = remembering
                .lines()
                .zip(plain.lines())
                .find(|(a, b)| a != b)
                .unwrap_or(("", ""));
            let rel = path.strip_prefix(&root).unwrap_or(path);
            let shown = |line: &str| line.trim().chars().take(160).collect::<String>();
            println!(
                "  changed {}\n    {}\n    was {}",
                rel.display(),
                shown(line),
                shown(was)
            );
        }
    }
    println!(
        "with {} fixture secrets remembered: in 1 MiB texts {:.0} MB/s ({:.2}x the time of a \
         fresh redactor), {masked} files changed",
        samples.len(),
        mb_per_s(bytes, remembering),
        remembering.as_secs_f64() / per_mib.as_secs_f64()
    );

    // Hostile text: 1 MiB of matches the generic rule rejects, in values
    // short enough to be searched again (`token:token:…` in 250-byte words).
    let word = format!("{} ", "token:".repeat(41));
    let hostile = word.repeat((1 << 20) / word.len());
    let hostile_time = best_of_three(|| {
        std::hint::black_box(redactor.redact(&hostile));
    });
    let hostile_copy = best_of_three(|| {
        std::hint::black_box(hostile.to_owned());
    });
    println!(
        "hostile 1 MiB of rejected `token:token:…` values: {:.0} MB/s ({:.0}x the copy's time)",
        mb_per_s(hostile.len(), hostile_time),
        hostile_time.as_secs_f64() / hostile_copy.as_secs_f64()
    );

    // Where the time goes: each rule's pattern alone over the same files.
    let lowered: Vec<String> = files.iter().map(|(_, t)| t.to_ascii_lowercase()).collect();
    for rule in RULES {
        let regex = regex::Regex::new(rule.pattern).expect("rule compiles");
        let mut found = 0;
        let elapsed = best_of_three(|| {
            found = files
                .iter()
                .zip(&lowered)
                .map(|((_, text), low)| {
                    let haystack = if rule.lowercase { low } else { text };
                    regex.find_iter(haystack).count()
                })
                .sum();
        });
        println!(
            "  pattern {:<22} {:>6.0} MB/s, {found} raw matches before the rule's checks",
            rule.name,
            mb_per_s(bytes, elapsed)
        );
    }
}
