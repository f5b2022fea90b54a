//! Code detection: languages, lines of code and unusually large source files.
//!
//! Only files classified as `source` count. The language comes from the
//! original's extension table (`Other` for source files it does not name,
//! such as an extensionless script). Line counts are the number of `\n` bytes,
//! as `wc -l` reports; they are measured while the file is classified
//! (`super::inspect`), so this module only aggregates.

use std::collections::BTreeSet;

use indexmap::IndexMap;

use super::filetypes::extension_of;
use super::{ClassifiedFile, LargeFile};

/// A source file with more lines than this is large.
pub(crate) const LARGE_LINE_THRESHOLD: u64 = 1000;
/// A source file with more bytes than this (10 MiB) is large.
pub(crate) const LARGE_SIZE_THRESHOLD: u64 = 10 * 1024 * 1024;

/// The original's language table.
pub(crate) fn language_of(ext: &str) -> Option<&'static str> {
    let language = match ext {
        ".py" => "Python",
        ".js" => "JavaScript",
        ".ts" => "TypeScript",
        ".jsx" => "JavaScript (JSX)",
        ".tsx" => "TypeScript (TSX)",
        ".java" => "Java",
        ".c" => "C",
        ".cpp" | ".cc" => "C++",
        ".h" => "C/C++ Header",
        ".hpp" => "C++ Header",
        ".go" => "Go",
        ".rs" => "Rust",
        ".rb" => "Ruby",
        ".php" => "PHP",
        ".swift" => "Swift",
        ".kt" => "Kotlin",
        ".scala" => "Scala",
        ".sh" => "Shell",
        ".bash" => "Bash",
        ".zsh" => "Zsh",
        ".pl" => "Perl",
        ".lua" => "Lua",
        ".r" => "R",
        ".m" => "Objective-C",
        ".cs" => "C#",
        ".hs" => "Haskell",
        ".ex" | ".exs" => "Elixir",
        ".erl" => "Erlang",
        ".clj" => "Clojure",
        ".sql" => "SQL",
        _ => return None,
    };
    Some(language)
}

/// A classified file with its line count (0 when not source or unreadable).
pub(crate) struct Counted<'a> {
    pub file: &'a ClassifiedFile,
    pub lines: u64,
}

/// Languages present (sorted) and lines per language (first-seen order).
pub(crate) fn detect_languages(files: &[Counted]) -> (Vec<String>, IndexMap<String, u64>) {
    let mut languages = BTreeSet::new();
    let mut loc: IndexMap<String, u64> = IndexMap::new();
    for counted in files.iter().filter(|c| c.file.category == "source") {
        let language = language_of(&extension_of(&counted.file.name)).unwrap_or("Other");
        languages.insert(language.to_string());
        *loc.entry(language.to_string()).or_insert(0) += counted.lines;
    }
    (languages.into_iter().collect(), loc)
}

/// Source files over 1000 lines or 10 MiB, with the reasons.
pub(crate) fn find_large_files(files: &[Counted]) -> Vec<LargeFile> {
    files
        .iter()
        .filter(|c| c.file.category == "source")
        .filter_map(|c| {
            let mut reasons = Vec::new();
            if c.file.size > LARGE_SIZE_THRESHOLD {
                reasons.push(format!(
                    "size: {:.1} MB",
                    c.file.size as f64 / (1024.0 * 1024.0)
                ));
            }
            if c.lines > LARGE_LINE_THRESHOLD {
                reasons.push(format!("lines: {}", c.lines));
            }
            (!reasons.is_empty()).then(|| LargeFile {
                path: c.file.path.clone(),
                name: c.file.name.clone(),
                reasons,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, category: &str, size: u64) -> ClassifiedFile {
        ClassifiedFile {
            path: format!("/tmp/{name}"),
            name: name.into(),
            category: category.into(),
            size,
            description: None,
        }
    }

    fn counted(files: &[ClassifiedFile], lines: &[u64]) -> Vec<Counted<'static>> {
        let files: &'static [ClassifiedFile] = Box::leak(files.to_vec().into_boxed_slice());
        files
            .iter()
            .zip(lines)
            .map(|(file, &lines)| Counted { file, lines })
            .collect()
    }

    #[test]
    fn languages_are_sorted_and_lines_accumulate() {
        let files = [
            file("main.py", "source", 10),
            file("b.py", "source", 10),
            file("app.js", "source", 10),
            file("run", "source", 10),
            file("data.csv", "data", 10),
        ];
        let (langs, loc) = detect_languages(&counted(&files, &[100, 100, 5, 3, 999]));
        assert_eq!(langs, ["JavaScript", "Other", "Python"]);
        assert_eq!(
            loc.into_iter().collect::<Vec<_>>(),
            [
                ("Python".to_string(), 200),
                ("JavaScript".to_string(), 5),
                ("Other".to_string(), 3)
            ]
        );
        let (langs, loc) = detect_languages(&[]);
        assert!(langs.is_empty() && loc.is_empty());
    }

    #[test]
    fn uppercase_extensions_still_name_the_language() {
        let files = [file("LEGACY.C", "source", 1)];
        let (langs, _) = detect_languages(&counted(&files, &[1]));
        assert_eq!(langs, ["C"]);
    }

    #[test]
    fn large_by_lines_and_by_size() {
        let files = [
            file("big.py", "source", 100),
            file("huge.py", "source", LARGE_SIZE_THRESHOLD + 1),
            file("small.py", "source", 500),
            file("data.csv", "data", LARGE_SIZE_THRESHOLD + 1),
            file("edge.py", "source", LARGE_SIZE_THRESHOLD),
        ];
        let large = find_large_files(&counted(&files, &[1001, 10, 50, 5000, 1000]));
        assert_eq!(large.len(), 2);
        assert_eq!(large[0].name, "big.py");
        assert_eq!(large[0].reasons, ["lines: 1001"]);
        assert_eq!(large[1].name, "huge.py");
        assert_eq!(large[1].reasons, ["size: 10.0 MB"]);
    }

    #[test]
    fn both_reasons_in_the_reference_order() {
        let files = [file("gen.rs", "source", 12_900_000)];
        let large = find_large_files(&counted(&files, &[250_000]));
        assert_eq!(large[0].reasons, ["size: 12.3 MB", "lines: 250000"]);
    }
}
