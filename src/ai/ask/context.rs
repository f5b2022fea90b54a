//! What the question's agent is shown before its first turn: the cached
//! investigation, cut to what matters for the question, or the scan when
//! there is none.
//!
//! The choice is deterministic and bounded, so the same question over the
//! same cache sends the same prompt:
//! - the verdict (brief and detailed analysis), cut to [`VERDICT_BYTES`];
//! - the flags, most severe first, up to [`FLAGS_BYTES`];
//! - directory summaries: the target and the directories right below it
//!   always (what the tree is), then those the question's words point at
//!   ([`relevance`]: a word in the directory's path counts three times one
//!   in its summary), best first, then by path, up to
//!   [`DIR_SUMMARIES_BYTES`], each summary cut to [`SUMMARY_BYTES`];
//! - file summaries the question's words point at, the same way, up to
//!   [`FILE_SUMMARIES_BYTES`].
//!
//! Everything quoted from the cache was written from the target's files,
//! so each part is framed as untrusted data. What was left out is counted,
//! and `read_cache` looks it up.
//!
//! Its edges: pure functions over entries and flags already read; reading
//! the cache and the scan is the parent module's job.

use crate::ai::tools::frame_untrusted;
use crate::cache::{CacheEntry, DirEntry, FileEntry};
use crate::report::Flag;
use crate::text::{cut_marked, escape_line};

/// The verdict's share of the prompt, in bytes.
pub(crate) const VERDICT_BYTES: usize = 12 * 1024;
/// The flags' share.
pub(crate) const FLAGS_BYTES: usize = 6 * 1024;
/// The directory summaries' share.
pub(crate) const DIR_SUMMARIES_BYTES: usize = 32 * 1024;
/// The file summaries' share.
pub(crate) const FILE_SUMMARIES_BYTES: usize = 12 * 1024;
/// One summary is cut to this many bytes.
pub(crate) const SUMMARY_BYTES: usize = 1_500;
/// The scan's tree and signals (a tree never investigated), in bytes.
pub(crate) const SCAN_BYTES: usize = 24 * 1024;
/// The whole context of an investigated tree at most, in bytes (the
/// room's cap for it): its parts' shares together. On a small window every
/// share shrinks in proportion ([`Shares::within`]).
pub(crate) use crate::ai::rules::room::ASK_CONTEXT_BYTES as ALL_CONTEXT_BYTES;
const _: () = assert!(
    VERDICT_BYTES + FLAGS_BYTES + DIR_SUMMARIES_BYTES + FILE_SUMMARIES_BYTES == ALL_CONTEXT_BYTES
);

/// What each part of the context may take, in bytes: the constants above,
/// all shrunk in proportion when the model's window leaves less room than
/// [`ALL_CONTEXT_BYTES`] (see [`crate::ai::rules::room`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shares {
    verdict: usize,
    flags: usize,
    dirs: usize,
    files: usize,
    scan: usize,
}

impl Shares {
    /// The shares of a context that may take `room` bytes.
    pub(crate) fn within(room: usize) -> Shares {
        let part = |bytes: usize| {
            if room >= ALL_CONTEXT_BYTES {
                bytes
            } else {
                bytes * room / ALL_CONTEXT_BYTES
            }
        };
        Shares {
            verdict: part(VERDICT_BYTES),
            flags: part(FLAGS_BYTES),
            dirs: part(DIR_SUMMARIES_BYTES),
            files: part(FILE_SUMMARIES_BYTES),
            scan: part(SCAN_BYTES),
        }
    }
}

/// Words too common to point anywhere.
const STOP_WORDS: &[&str] = &[
    "the",
    "and",
    "for",
    "are",
    "was",
    "were",
    "what",
    "which",
    "who",
    "whom",
    "where",
    "when",
    "why",
    "how",
    "does",
    "did",
    "this",
    "that",
    "these",
    "those",
    "there",
    "here",
    "with",
    "from",
    "into",
    "about",
    "any",
    "all",
    "can",
    "could",
    "should",
    "would",
    "will",
    "has",
    "have",
    "had",
    "not",
    "but",
    "its",
    "it's",
    "you",
    "your",
    "our",
    "they",
    "them",
    "their",
    "use",
    "used",
    "uses",
    "using",
    "tree",
    "code",
    "file",
    "files",
    "directory",
    "directories",
    "project",
    "repo",
    "repository",
    "tell",
    "explain",
    "show",
    "please",
    "is",
    "in",
];

/// The words of `question` that can point at a path or a summary:
/// lowercase, split at anything but letters, digits and `_`, at least
/// three characters, no stop words, each once, in order.
pub(crate) fn question_words(question: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in question
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map(str::to_lowercase)
    {
        if word.chars().count() >= 3
            && !STOP_WORDS.contains(&word.as_str())
            && !words.contains(&word)
        {
            words.push(word);
        }
    }
    words
}

/// `word` without a plural ending (`retries` → `retry`, `classes` →
/// `class`, `files` → `file`), when what is left is still a word.
fn singular(word: &str) -> &str {
    let stem = if let Some(stem) = word.strip_suffix("ies") {
        // `retries` → `retr`, which `retry` contains.
        stem
    } else if let Some(stem) = word.strip_suffix("sses") {
        &word[..stem.len() + 2]
    } else if word.ends_with("ss") {
        word
    } else {
        word.strip_suffix('s').unwrap_or(word)
    };
    if stem.chars().count() >= 3 {
        stem
    } else {
        word
    }
}

/// How much `words` point at an entry at `path` (target-relative) with
/// `summary`: 3 for each word in the path, 1 for each in the summary (a
/// word in its singular form counts too).
pub(crate) fn relevance(words: &[String], path: &str, summary: &str) -> u32 {
    let path = path.to_lowercase();
    let summary = summary.to_lowercase();
    words
        .iter()
        .map(|word| {
            let stem = singular(word);
            3 * u32::from(path.contains(stem)) + u32::from(summary.contains(stem))
        })
        .sum()
}

/// What the cache holds about the tree, read by the caller.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cached<'a> {
    /// The verdict, when the synthesis was written.
    pub verdict: Option<(&'a str, &'a str)>,
    /// Dir entries of directories that still exist.
    pub dirs: &'a [DirEntry],
    /// File entries of files that still exist.
    pub files: &'a [FileEntry],
    pub flags: &'a [Flag],
}

/// An entry's target-relative path (`.` for the target).
fn entry_rel(entry: &impl CacheEntry) -> String {
    match entry.relative_path() {
        "" => ".".to_string(),
        rel => rel.trim_end_matches('/').to_string(),
    }
}

/// `text` cut to at most `max` bytes on a character boundary, marked.
pub(crate) fn cut(text: &str, max: usize) -> String {
    cut_marked(text, max, " [...]")
}

/// One entry's section: a heading with its path, then its summary (and a
/// dir entry's notable files).
fn entry_section(entry: &impl CacheEntry, dir: bool) -> String {
    let rel = entry_rel(entry);
    let heading = if dir && rel != "." {
        format!("#### {}/", escape_line(&rel))
    } else {
        format!("#### {}", escape_line(&rel))
    };
    let mut text = format!("{heading}\n{}", cut(entry.summary(), SUMMARY_BYTES));
    let notable = entry.notable_files();
    if !notable.is_empty() {
        text.push_str(&format!("\nNotable files: {}", notable.join(", ")));
    }
    text
}

/// Entries in the order they are offered: first those `always` keeps (in
/// path order), then the others the question points at, best first, then
/// by path; taken while their sections fit `budget` bytes. Returns the
/// sections and how many entries were left out.
fn choose<E: CacheEntry>(
    entries: &[E],
    words: &[String],
    dir: bool,
    always: impl Fn(&str) -> bool,
    budget: usize,
) -> (Vec<String>, usize) {
    let mut ranked: Vec<(bool, u32, String, &E)> = entries
        .iter()
        .map(|entry| {
            let rel = entry_rel(entry);
            let score = relevance(words, &rel, entry.summary());
            (always(&rel), score, rel, entry)
        })
        .filter(|(kept, score, _, _)| *kept || *score > 0)
        .collect();
    ranked.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| {
                if a.0 {
                    std::cmp::Ordering::Equal
                } else {
                    b.1.cmp(&a.1)
                }
            })
            .then_with(|| a.2.cmp(&b.2))
    });
    let mut used = 0;
    let mut sections = Vec::new();
    for (_, _, _, entry) in ranked {
        let section = entry_section(entry, dir);
        if used + section.len() > budget {
            continue;
        }
        used += section.len() + 2;
        sections.push(section);
    }
    let left_out = entries.len() - sections.len();
    (sections, left_out)
}

/// The flags, most severe first (in their recorded order within a
/// severity), as many as fit `budget` bytes ([`FLAGS_BYTES`] at most).
fn flags_block(flags: &[Flag], budget: usize) -> (String, usize) {
    let mut ordered: Vec<&Flag> = flags.iter().collect();
    ordered.sort_by(|a, b| a.severity.cmp(&b.severity));
    let mut lines = Vec::new();
    let mut used = 0;
    for flag in &ordered {
        let line = format!(
            "- [{}] {}: {}",
            escape_line(flag.severity.as_str()),
            escape_line(&flag.path),
            escape_line(&cut(&flag.finding, 600))
        );
        if used + line.len() > budget {
            break;
        }
        used += line.len() + 1;
        lines.push(line);
    }
    let left_out = ordered.len() - lines.len();
    (lines.join("\n"), left_out)
}

/// Whether `rel` is the target or a directory right below it.
fn top_level(rel: &str) -> bool {
    rel == "." || !rel.contains('/')
}

/// The context of a tree that was investigated: the verdict, the flags and
/// the summaries that matter for `question`, each part framed as data and
/// within its share.
pub(crate) fn investigated_context(question: &str, cached: &Cached<'_>, shares: Shares) -> String {
    let words = question_words(question);
    let mut parts = Vec::new();
    match cached.verdict {
        Some((brief, detailed)) => {
            let verdict = format!("Brief: {brief}\n\nDetailed analysis:\n{detailed}");
            parts.push(format!(
                "### The investigation's verdict\n{}",
                frame_untrusted(
                    "the investigation's verdict",
                    &cut(&verdict, shares.verdict)
                )
            ));
        }
        None => parts.push(
            "### The investigation's verdict\n(none: the synthesis was not written)".to_string(),
        ),
    }
    let (flags, flags_left) = flags_block(cached.flags, shares.flags);
    parts.push(if flags.is_empty() {
        "### Flags\n(none)".to_string()
    } else {
        let more = more_line(flags_left, "flag", "flags");
        format!(
            "### Flags, most severe first\n{}{more}",
            frame_untrusted("the investigation's flags", &flags)
        )
    });
    let (dirs, dirs_left) = choose(cached.dirs, &words, true, top_level, shares.dirs);
    parts.push(format!(
        "### Directory summaries: the top levels and those the question points at\n{}{}",
        frame_untrusted("cached directory summaries", &dirs.join("\n\n")),
        more_line(dirs_left, "directory summary", "directory summaries")
    ));
    let (files, files_left) = choose(cached.files, &words, false, |_| false, shares.files);
    if !files.is_empty() {
        parts.push(format!(
            "### File summaries the question points at\n{}{}",
            frame_untrusted("cached file summaries", &files.join("\n\n")),
            more_line(files_left, "file summary", "file summaries")
        ));
    } else if files_left > 0 {
        let cached = match files_left {
            1 => "1 file summary is cached; read_cache looks it up.".to_string(),
            n => format!("{n} file summaries are cached; read_cache looks one up."),
        };
        parts.push(format!("### File summaries\n{cached}"));
    }
    parts.join("\n\n")
}

/// `\n(N more ...: read_cache looks one up.)`, or nothing.
fn more_line(left_out: usize, one: &str, many: &str) -> String {
    match left_out {
        0 => String::new(),
        1 => format!("\n(1 more {one} is cached; read_cache looks it up.)"),
        n => format!("\n({n} more {many} are cached; read_cache looks one up.)"),
    }
}

/// The context of a tree never investigated: the scan's tree and signals,
/// framed as data, within their share.
pub(crate) fn scan_context(tree: &str, signals: &str, shares: Shares) -> String {
    format!(
        "### The tree, from the scan\n{}\n\n### What the scan counted\n{}",
        frame_untrusted("the directory tree", &cut(tree, shares.scan)),
        frame_untrusted("file signals", &cut(signals, shares.scan / 4)),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Every part at its own limit.
    const WHOLE: Shares = Shares {
        verdict: VERDICT_BYTES,
        flags: FLAGS_BYTES,
        dirs: DIR_SUMMARIES_BYTES,
        files: FILE_SUMMARIES_BYTES,
        scan: SCAN_BYTES,
    };

    fn dir(rel: &str, summary: &str) -> DirEntry {
        DirEntry::from_value(
            json!({"path": format!("/t/{rel}"), "relative_path": rel, "summary": summary}),
        )
        .unwrap()
    }

    #[test]
    fn the_questions_words_are_the_ones_that_can_point_somewhere() {
        assert_eq!(
            question_words(
                "How does the Engine start? Where is engine_loop in src/core/engine.rs?"
            ),
            ["engine", "start", "engine_loop", "src", "core"]
        );
        assert!(question_words("Is it? What is the, and how").is_empty());
    }

    #[test]
    fn a_word_in_a_path_counts_three_times_one_in_a_summary() {
        let words = question_words("database migrations");
        assert_eq!(relevance(&words, "db/migrations", "Schema changes."), 3);
        assert_eq!(relevance(&words, "db", "Database migrations, in order."), 2);
        assert_eq!(relevance(&words, "docs", "A guide."), 0);
        // Plurals find the singular.
        let words = question_words("retries classes modules");
        assert_eq!(relevance(&words, "src/net/retry.rs", ""), 3);
        assert_eq!(relevance(&words, "", "One class per module."), 2);
        assert_eq!(singular("its"), "its");
        assert_eq!(singular("process"), "process");
        assert_eq!(singular("addresses"), "address");
    }

    #[test]
    fn the_top_levels_come_first_then_what_the_question_points_at() {
        let dirs = [
            dir("src/net/tls", "Certificates and the TLS handshake."),
            dir("docs", "A user guide."),
            dir(".", "A Rust service."),
            dir("src", "The sources."),
            dir("src/db", "The database layer."),
            dir("src/net", "Networking, including TLS."),
            dir("vendor/x", "Third-party code."),
        ];
        let cached = Cached {
            verdict: Some(("A service.", "It serves.")),
            dirs: &dirs,
            files: &[],
            flags: &[],
        };
        let context = investigated_context("How is TLS set up?", &cached, WHOLE);
        let headings: Vec<&str> = context
            .lines()
            .filter_map(|l| l.strip_prefix("#### "))
            .collect();
        assert_eq!(headings, [".", "docs/", "src/", "src/net/tls/", "src/net/"]);
        assert!(
            context.contains("(2 more directory summaries are cached"),
            "{context}"
        );
        assert!(context.contains("Brief: A service."), "{context}");
        // Every part quoted from the cache is framed.
        assert_eq!(context.matches("<untrusted-data").count(), 2, "{context}");
        // The same question over the same cache: the same prompt.
        assert_eq!(
            context,
            investigated_context("How is TLS set up?", &cached, WHOLE)
        );
    }

    #[test]
    fn every_share_is_bounded() {
        let long = "word ".repeat(2_000);
        let dirs: Vec<DirEntry> = (0..200)
            .map(|i| dir(&format!("d{i:03}"), &format!("tls {long}")))
            .collect();
        let files: Vec<FileEntry> = dirs
            .iter()
            .map(|d| FileEntry::from_value(serde_json::to_value(d).unwrap()).unwrap())
            .collect();
        let flags: Vec<Flag> = (0..500)
            .map(|i| Flag::new(format!("f{i}"), long.clone(), "concern"))
            .collect();
        let verdict = long.repeat(10);
        let cached = Cached {
            verdict: Some((&verdict, &verdict)),
            dirs: &dirs,
            files: &files,
            flags: &flags,
        };
        let context = investigated_context("tls", &cached, WHOLE);
        let most = VERDICT_BYTES + FLAGS_BYTES + DIR_SUMMARIES_BYTES + FILE_SUMMARIES_BYTES;
        assert!(context.len() < most + 4_096, "{}", context.len());
        assert!(context.contains("more flags are cached"));
        // A small window: every part shrinks in proportion.
        let small = investigated_context("tls", &cached, Shares::within(ALL_CONTEXT_BYTES / 4));
        assert!(small.len() < most / 4 + 4_096, "{}", small.len());
        assert!(small.contains("more flags are cached"));
    }

    #[test]
    fn flags_come_most_severe_first() {
        let flags = [
            Flag::new("a", "minor", "info"),
            Flag::new("b", "bad", "critical"),
            Flag::new("c", "odd", "concern"),
        ];
        let (block, left) = flags_block(&flags, FLAGS_BYTES);
        assert_eq!(
            block,
            "- [critical] b: bad\n- [concern] c: odd\n- [info] a: minor"
        );
        assert_eq!(left, 0);
    }
}
