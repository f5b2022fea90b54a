//! File classes: the original's extension table, its description patterns,
//! the per-category counts and the raw signals for the survey pass.
//!
//! A file's category comes from its extension when the table knows it (and
//! then it has no description). Otherwise its content is described
//! (`super::sniff`) and the category is the first description pattern that
//! matches, case-insensitively, in the original's order, else `unknown`.
//! Reading the files is `super::inspect`'s job; this module is pure.

use indexmap::IndexMap;

use super::{ClassifiedFile, SurveySignals};

/// The original's extension table. Where it listed a key twice (`.sql`) the
/// later entry won, so `.sql` is `data`.
pub(crate) fn extension_category(ext: &str) -> Option<&'static str> {
    let category = match ext {
        ".py" | ".js" | ".ts" | ".jsx" | ".tsx" | ".java" | ".c" | ".cpp" | ".cc" | ".h"
        | ".hpp" | ".go" | ".rs" | ".rb" | ".php" | ".swift" | ".kt" | ".scala" | ".sh"
        | ".bash" | ".zsh" | ".pl" | ".lua" | ".r" | ".m" | ".cs" | ".hs" | ".ex" | ".exs"
        | ".erl" | ".clj" | ".vim" | ".el" => "source",
        ".json" | ".yaml" | ".yml" | ".toml" | ".ini" | ".cfg" | ".conf" | ".xml" | ".env"
        | ".properties" | ".editorconfig" => "config",
        ".csv" | ".tsv" | ".parquet" | ".sqlite" | ".db" | ".sql" | ".ndjson" | ".jsonl" => "data",
        ".png" | ".jpg" | ".jpeg" | ".gif" | ".svg" | ".bmp" | ".ico" | ".webp" | ".mp3"
        | ".wav" | ".mp4" | ".avi" | ".mkv" | ".mov" | ".flac" | ".ogg" => "media",
        ".md" | ".txt" | ".rst" | ".pdf" | ".doc" | ".docx" | ".odt" | ".rtf" | ".tex"
        | ".html" | ".htm" | ".css" => "document",
        ".zip" | ".tar" | ".gz" | ".bz2" | ".xz" | ".7z" | ".rar" | ".tgz" => "archive",
        _ => return None,
    };
    Some(category)
}

/// Names of the prose a tree carries beside its code (the part before a
/// `.` or `-`, in any case: `LICENSE-MIT`, `COPYING.LIB`, Debian's
/// `copyright`). The original called such a file, being text, `source`,
/// and counted a licence as lines of code; luminos calls it a document.
const PROSE_NAMES: [&str; 17] = [
    "AUTHORS",
    "CHANGELOG",
    "CHANGES",
    "CONTRIBUTORS",
    "COPYING",
    "COPYRIGHT",
    "CREDITS",
    "HISTORY",
    "INSTALL",
    "LICENCE",
    "LICENSE",
    "NEWS",
    "NOTICE",
    "PATENTS",
    "README",
    "THANKS",
    "TODO",
];

/// Whether `name` is one of [`PROSE_NAMES`].
pub(crate) fn is_prose_name(name: &str) -> bool {
    let stem = name.split(['.', '-']).next().unwrap_or(name);
    PROSE_NAMES
        .iter()
        .any(|prose| stem.eq_ignore_ascii_case(prose))
}

/// The original's description patterns, in the order they are tried.
const DESCRIPTION_PATTERNS: [(&str, &str); 12] = [
    ("text", "source"),
    ("script", "source"),
    ("program", "source"),
    ("json", "config"),
    ("xml", "config"),
    ("image", "media"),
    ("audio", "media"),
    ("video", "media"),
    ("pdf", "document"),
    ("document", "document"),
    ("archive", "archive"),
    ("compressed", "archive"),
];

/// The category of a file that was described by its content.
pub(crate) fn description_category(description: &str) -> &'static str {
    let lower = description.to_lowercase();
    DESCRIPTION_PATTERNS
        .iter()
        .find(|(pattern, _)| lower.contains(pattern))
        .map_or("unknown", |(_, category)| category)
}

/// The extension of a file name as Python's `os.path.splitext` sees it,
/// lower-cased: from the last dot, unless the name is only dots before it
/// (`.bashrc` has none, `a.tar.gz` has `.gz`, `x.` has `.`).
pub(crate) fn extension_of(name: &str) -> String {
    match name.rfind('.') {
        Some(dot) if name[..dot].bytes().any(|b| b != b'.') => name[dot..].to_lowercase(),
        _ => String::new(),
    }
}

/// Count per category, in first-seen order.
pub(crate) fn summarize_categories(classified: &[ClassifiedFile]) -> IndexMap<String, u64> {
    let mut counts = IndexMap::new();
    for file in classified {
        *counts.entry(file.category.clone()).or_insert(0) += 1;
    }
    counts
}

/// How many entries each survey histogram keeps.
const SURVEY_TOP_N: usize = 20;
/// Longer descriptions are cut to this many characters plus `...`.
const SURVEY_DESCRIPTION_CHARS: usize = 80;
/// How many file names the survey sees.
const SURVEY_SAMPLES: usize = 20;

/// The raw signals the survey pass reads, with the original's rules.
pub(crate) fn survey_signals(classified: &[ClassifiedFile]) -> SurveySignals {
    let mut extensions: IndexMap<String, u64> = IndexMap::new();
    let mut descriptions: IndexMap<String, u64> = IndexMap::new();
    for file in classified {
        let ext = extension_of(&file.name);
        let ext = if ext.is_empty() {
            "(none)".to_string()
        } else {
            ext
        };
        *extensions.entry(ext).or_insert(0) += 1;

        let description = file.description.as_deref().unwrap_or("").trim();
        if !description.is_empty() {
            *descriptions
                .entry(truncate_description(description))
                .or_insert(0) += 1;
        }
    }
    SurveySignals {
        total_files: classified.len() as u64,
        extension_histogram: top_n(extensions),
        file_descriptions: top_n(descriptions),
        filename_samples: sample_names(classified, SURVEY_SAMPLES),
    }
}

fn truncate_description(description: &str) -> String {
    match description.char_indices().nth(SURVEY_DESCRIPTION_CHARS) {
        Some((cut, _)) => format!("{}...", &description[..cut]),
        None => description.to_string(),
    }
}

/// The top entries by count, ties by key.
fn top_n(counts: IndexMap<String, u64>) -> IndexMap<String, u64> {
    let mut items: Vec<(String, u64)> = counts.into_iter().collect();
    items.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    items.into_iter().take(SURVEY_TOP_N).collect()
}

/// Up to `max` names drawn at an even stride through the list.
fn sample_names(classified: &[ClassifiedFile], max: usize) -> Vec<String> {
    let total = classified.len();
    if total == 0 || max == 0 {
        return Vec::new();
    }
    if total <= max {
        return classified.iter().map(|f| f.name.clone()).collect();
    }
    let stride = total as f64 / max as f64;
    (0..max)
        .map(|i| classified[(i as f64 * stride) as usize].name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_is_known_by_its_name() {
        for name in [
            "LICENSE",
            "license",
            "LICENSE-MIT",
            "COPYING.LIB",
            "copyright",
            "README",
            "Changelog",
        ] {
            assert!(is_prose_name(name), "{name}");
        }
        for name in ["main", "Makefile", "readme_parser", "NOTICES", ""] {
            assert!(!is_prose_name(name), "{name}");
        }
    }

    fn file(name: &str, description: Option<&str>) -> ClassifiedFile {
        ClassifiedFile {
            path: format!("/x/{name}"),
            name: name.to_string(),
            category: "source".to_string(),
            size: 10,
            description: description.map(str::to_string),
        }
    }

    #[test]
    fn the_extension_table_matches_the_original() {
        assert_eq!(extension_category(".py"), Some("source"));
        assert_eq!(extension_category(".json"), Some("config"));
        assert_eq!(extension_category(".csv"), Some("data"));
        assert_eq!(extension_category(".png"), Some("media"));
        assert_eq!(extension_category(".md"), Some("document"));
        assert_eq!(extension_category(".zip"), Some("archive"));
        assert_eq!(
            extension_category(".sql"),
            Some("data"),
            "the later key wins"
        );
        assert_eq!(extension_category(".xyz"), None);
        assert_eq!(extension_category(""), None);
    }

    #[test]
    fn extensions_follow_python_splitext() {
        for (name, extension) in [
            ("image.PNG", ".png"),
            ("a.tar.gz", ".gz"),
            (".bashrc", ""),
            ("...", ""),
            ("..a.b", ".b"),
            ("x.", "."),
            ("Makefile", ""),
            // `.env` is only an extension after a stem, as in the original.
            (".env", ""),
            ("prod.env", ".env"),
        ] {
            assert_eq!(extension_of(name), extension, "{name}");
        }
    }

    #[test]
    fn descriptions_map_in_pattern_order() {
        for (description, category) in [
            ("ASCII text", "source"),
            ("Python script, ASCII text executable", "source"),
            ("JSON data", "config"),
            ("XML 1.0 document, ASCII text", "source"),
            ("PNG image data", "media"),
            ("PDF document, version 1.4", "document"),
            ("Zip archive data", "archive"),
            ("gzip compressed data", "archive"),
            ("data", "unknown"),
            ("empty", "unknown"),
            ("", "unknown"),
            ("ELF 64-bit LSB executable", "unknown"),
        ] {
            assert_eq!(
                description_category(description),
                category,
                "{description:?}"
            );
        }
    }

    #[test]
    fn categories_are_counted_in_first_seen_order() {
        let mut files = vec![file("a.py", None), file("b.json", None), file("c.py", None)];
        files[1].category = "config".into();
        let counts = summarize_categories(&files);
        assert_eq!(
            counts.into_iter().collect::<Vec<_>>(),
            [("source".to_string(), 2), ("config".to_string(), 1)]
        );
        assert!(summarize_categories(&[]).is_empty());
    }

    #[test]
    fn survey_of_nothing_is_empty() {
        let s = survey_signals(&[]);
        assert_eq!(s.total_files, 0);
        assert!(s.extension_histogram.is_empty());
        assert!(s.file_descriptions.is_empty());
        assert!(s.filename_samples.is_empty());
    }

    #[test]
    fn survey_histogram_lowercases_and_keeps_none() {
        let files: Vec<_> = ["a.PY", "b.py", "c.py", "README", "Makefile"]
            .iter()
            .map(|n| file(n, None))
            .collect();
        let s = survey_signals(&files);
        assert_eq!(s.extension_histogram[".py"], 3);
        assert_eq!(s.extension_histogram["(none)"], 2);
        assert_eq!(s.extension_histogram.keys().next().unwrap(), ".py");
    }

    #[test]
    fn survey_descriptions_are_counted_and_cut() {
        let long = "x".repeat(200);
        let files = vec![
            file("a", Some("Python script, ASCII text")),
            file("b", Some("Python script, ASCII text")),
            file("c", Some(&long)),
            file("d", Some("  ")),
            file("e", None),
        ];
        let s = survey_signals(&files);
        assert_eq!(s.file_descriptions["Python script, ASCII text"], 2);
        let cut = format!("{}...", "x".repeat(80));
        assert_eq!(s.file_descriptions[&cut], 1);
        assert_eq!(s.file_descriptions.len(), 2);
    }

    #[test]
    fn survey_keeps_the_top_twenty_with_ties_by_key() {
        let files: Vec<_> = (0..50)
            .map(|i| file(&format!("f{i}.ext{i}"), None))
            .collect();
        let s = survey_signals(&files);
        assert_eq!(s.extension_histogram.len(), 20);
        // All counts are 1, so the keys sort as strings.
        assert_eq!(s.extension_histogram.keys().next().unwrap(), ".ext0");
        assert_eq!(s.extension_histogram.keys().nth(2).unwrap(), ".ext10");
    }

    #[test]
    fn survey_samples_are_evenly_strided() {
        let files: Vec<_> = (0..100)
            .map(|i| file(&format!("file_{i:04}.txt"), None))
            .collect();
        let samples = sample_names(&files, 10);
        assert_eq!(samples.len(), 10);
        assert_eq!(samples[0], "file_0000.txt");
        assert_eq!(samples[9], "file_0090.txt");
        let few: Vec<_> = (0..5).map(|i| file(&format!("f{i}.txt"), None)).collect();
        assert_eq!(survey_signals(&few).filename_samples.len(), 5);
        let many: Vec<_> = (0..7).map(|i| file(&format!("f{i}.py"), None)).collect();
        assert_eq!(survey_signals(&many).total_files, 7);
    }
}
