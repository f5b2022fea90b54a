//! Redactor measurements: recall on a fixture holding a sample of every rule
//! (runs in the normal suite), and false positives plus throughput on a real
//! corpus with no secrets in it, the crate sources under
//! `~/.cargo/registry/src` (ignored; run with
//! `cargo test --release --test bench_redact -- --ignored --nocapture`).
//!
//! Fake secrets are generated at run time, so the repository holds nothing a
//! secret scanner would mistake for a live key.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use luminos::redact::{RULES, Redactor, rule_names};

const B62: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const UPPER_NUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const DIGITS: &str = "0123456789";
const HEX: &str = "0123456789abcdef";

/// A deterministic pseudo-random string over `alphabet` (xorshift64).
fn fake(alphabet: &str, len: usize, seed: u64) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chars[(x % chars.len() as u64) as usize]
        })
        .collect()
}

/// One fixture sample: the rule that must fire, the text, and the parts of
/// the text that must not survive.
struct Sample {
    rule: &'static str,
    text: String,
    secrets: Vec<String>,
}

fn sample(rule: &'static str, text: String, secret: &str) -> Sample {
    Sample {
        rule,
        text,
        secrets: vec![secret.to_owned()],
    }
}

/// At least one sample of every rule, in the shapes they take in real files.
fn fixture() -> Vec<Sample> {
    let mut s = Vec::new();
    let key_marker = |edge: &str, kind: &str| format!("-----{edge} {kind}PRIVATE {}-----", "KEY");
    for (i, kind) in ["RSA ", "OPENSSH ", "EC ", ""].iter().enumerate() {
        let lines: Vec<String> = (0..5).map(|j| fake(B64, 64, 100 * i as u64 + j)).collect();
        let block = format!(
            "{}\n{}\n{}",
            key_marker("BEGIN", kind),
            lines.join("\n"),
            key_marker("END", kind)
        );
        s.push(Sample {
            rule: "private-key",
            text: format!("# deploy key\n{block}\n"),
            secrets: lines,
        });
    }
    let akia = format!("AKIA{}", fake(UPPER_NUM, 16, 1));
    s.push(sample(
        "aws-access-key-id",
        format!("[default]\naws_access_key_id = {akia}\n"),
        &akia,
    ));
    let asia = format!("ASIA{}", fake(UPPER_NUM, 16, 2));
    s.push(sample(
        "aws-access-key-id",
        format!("\"AccessKeyId\": \"{asia}\","),
        &asia,
    ));
    let aws_secret = fake(B64, 40, 3);
    s.push(sample(
        "aws-secret-access-key",
        format!("aws_secret_access_key = {aws_secret}\n"),
        &aws_secret,
    ));
    for (i, prefix) in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"].iter().enumerate() {
        let token = format!("{prefix}{}", fake(B62, 36, 10 + i as u64));
        s.push(sample(
            "github-token",
            format!("GITHUB_TOKEN={token}\n"),
            &token,
        ));
    }
    let pat = format!("github_pat_{}_{}", fake(B62, 22, 16), fake(B62, 59, 17));
    s.push(sample("github-token", format!("  token: {pat}\n"), &pat));
    let glpat = format!("glpat-{}", fake(B62, 20, 20));
    s.push(sample(
        "gitlab-token",
        format!("export GL={glpat}\n"),
        &glpat,
    ));
    let xoxb = format!(
        "xoxb-{}-{}-{}",
        fake(DIGITS, 12, 30),
        fake(DIGITS, 13, 31),
        fake(B62, 24, 32)
    );
    s.push(sample(
        "slack-token",
        format!("slack: {{ bot: '{xoxb}' }}\n"),
        &xoxb,
    ));
    let hook = format!(
        "T{}/B{}/{}",
        fake(UPPER_NUM, 8, 33),
        fake(UPPER_NUM, 8, 34),
        fake(B62, 24, 35)
    );
    s.push(sample(
        "slack-webhook",
        format!("notify: https://hooks.slack.com/services/{hook}\n"),
        &hook,
    ));
    let stripe = format!("sk_live_{}", fake(B62, 24, 40));
    s.push(sample(
        "stripe-live-key",
        format!("Stripe.api_key = \"{stripe}\"\n"),
        &stripe,
    ));
    let restricted = format!("rk_live_{}", fake(B62, 24, 41));
    s.push(sample(
        "stripe-live-key",
        format!("{restricted}\n"),
        &restricted,
    ));
    let google = format!("AIza{}", fake(B64URL, 35, 50));
    s.push(sample(
        "google-api-key",
        format!("fetch(`https://maps/api?key={google}`)\n"),
        &google,
    ));
    let ant = format!("sk-ant-api03-{}AA", fake(B64URL, 93, 60));
    s.push(sample(
        "anthropic-api-key",
        format!("ANTHROPIC_API_KEY={ant}\n"),
        &ant,
    ));
    let oai = format!("sk-{}", fake(B62, 48, 61));
    s.push(sample(
        "openai-api-key",
        format!("openai.api_key = '{oai}'\n"),
        &oai,
    ));
    let proj = format!("sk-proj-{}", fake(B64URL, 156, 62));
    s.push(sample(
        "openai-api-key",
        format!("OPENAI_API_KEY={proj}\n"),
        &proj,
    ));
    let jwt = format!(
        "eyJ{}.eyJ{}.{}",
        fake(B64URL, 33, 70),
        fake(B64URL, 80, 71),
        fake(B64URL, 43, 72)
    );
    s.push(sample("jwt", format!("Cookie: session={jwt}\n"), &jwt));
    let db_pw = fake(B62, 18, 80);
    s.push(sample(
        "url-credentials",
        format!("DATABASE_URL=postgres://app:{db_pw}@db.internal:5432/app\n"),
        &db_pw,
    ));
    let bearer = fake(B64URL, 48, 90);
    s.push(sample(
        "bearer-token",
        format!("curl -H \"Authorization: Bearer {bearer}\" https://api.internal/\n"),
        &bearer,
    ));
    let generic = [
        ("DB_PASSWORD=", "\n", fake(B62, 20, 100)),
        ("  password: \"", "\"\n", fake(B62, 16, 101)),
        ("{\"client_secret\": \"", "\"}\n", fake(B62, 32, 102)),
        ("api_key = '", "'\n", fake(HEX, 32, 103)),
        ("const apiKey = \"", "\";\n", fake(B62, 24, 104)),
        ("ACCESS_KEY=", "\n", fake(B64, 28, 105)),
        (
            "passwd = ",
            "\n",
            format!("{}#{}!", fake(B62, 6, 106), fake(B62, 5, 107)),
        ),
    ];
    for (before, after, value) in generic {
        s.push(sample(
            "generic-secret",
            format!("{before}{value}{after}"),
            &value,
        ));
    }
    s
}

#[test]
fn recall_every_rule_on_the_fixture() {
    let redactor = Redactor::new();
    let samples = fixture();

    let covered: BTreeSet<&str> = samples.iter().map(|s| s.rule).collect();
    let all: BTreeSet<&str> = rule_names().collect();
    assert_eq!(covered, all, "the fixture must hold a sample of every rule");

    let mut redacted = 0;
    for sample in &samples {
        let out = redactor.redact(&sample.text);
        let leaked: Vec<&String> = sample
            .secrets
            .iter()
            .filter(|secret| out.text.contains(secret.as_str()))
            .collect();
        let rules: Vec<&str> = out.hits.iter().map(|h| h.rule).collect();
        assert!(
            leaked.is_empty(),
            "{}: leaked in {:?}",
            sample.rule,
            out.text
        );
        assert_eq!(rules, [sample.rule], "in {:?}", sample.text);
        redacted += 1;
    }

    // The same samples as one file: nothing survives, one hit per sample.
    let whole: String = samples.iter().map(|s| s.text.as_str()).collect();
    let out = redactor.redact(&whole);
    for secret in samples.iter().flat_map(|s| &s.secrets) {
        assert!(!out.text.contains(secret.as_str()), "leaked {secret:?}");
    }
    assert_eq!(out.hits.len(), samples.len());
    // Text that comes back through the redactor (a cached summary quoting a
    // redacted file) gains nothing and loses nothing.
    let again = redactor.redact(&out.text);
    assert!(again.hits.is_empty(), "second pass fired: {:?}", again.hits);
    assert_eq!(again.text, out.text);
    println!(
        "recall: {redacted}/{} samples over {} rules redacted (100%)",
        samples.len(),
        all.len()
    );
}

/// The corpus: `LUMINOS_REDACT_CORPUS` if set, else where cargo keeps
/// downloaded crate sources.
fn registry_src() -> Option<PathBuf> {
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

/// Print every span the redactor fired on, with its line, for inspection.
fn print_hits(root: &Path, files: &[(PathBuf, String)], redactor: &Redactor) -> (usize, usize) {
    let mut spans = 0;
    let mut files_hit = 0;
    for (path, text) in files {
        let out = redactor.redact(text);
        files_hit += usize::from(!out.hits.is_empty());
        for hit in &out.hits {
            spans += 1;
            let line = text.lines().nth(hit.line - 1).unwrap_or("");
            let shown: String = line.trim().chars().take(160).collect();
            let rel = path.strip_prefix(root).unwrap_or(path);
            println!(
                "hit {} {}:{} ({})\n    {shown}",
                hit.rule,
                rel.display(),
                hit.line,
                hit.severity.as_str()
            );
        }
    }
    (spans, files_hit)
}

#[test]
#[ignore = "benchmark: needs ~/.cargo/registry/src; run with --release --ignored"]
fn false_positives_and_throughput_on_crate_sources() {
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

    let redactor = Redactor::new();
    let (spans, files_hit) = print_hits(&root, &files, &redactor);
    println!(
        "false positives: {spans} spans in {files_hit} files = {:.2} per 10,000 files (target < 5)",
        spans as f64 * 10_000.0 / files.len() as f64
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
