//! The README a first user reads: a quick start with a `luminos` command in
//! its first 40 lines, a table of contents, at most 500 lines, and links
//! that lead somewhere (the details live in `docs/`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The anchors GitHub makes of a Markdown file's headings (outside code).
fn anchors(text: &str) -> HashSet<String> {
    let mut found = HashSet::new();
    let mut code = false;
    for line in text.lines() {
        if line.starts_with("```") {
            code = !code;
        }
        if code || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim().to_lowercase();
        let anchor: String = title
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        found.insert(anchor);
    }
    found
}

/// Every relative link of `file` (a file, or a heading of one) exists.
fn links_resolve(file: &Path) {
    let text = read(file);
    let links = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    for link in links.captures_iter(&text).map(|c| c[1].to_string()) {
        if link.starts_with("http") {
            continue;
        }
        let (path, anchor) = link.split_once('#').unwrap_or((link.as_str(), ""));
        let target = if path.is_empty() {
            file.to_path_buf()
        } else {
            file.parent().unwrap().join(path)
        };
        assert!(target.exists(), "{}: {link} leads nowhere", file.display());
        if !anchor.is_empty() && target.extension().is_some_and(|e| e == "md") {
            assert!(
                anchors(&read(&target)).contains(anchor),
                "{}: no heading for {link}",
                file.display()
            );
        }
    }
}

#[test]
fn the_readme_starts_with_a_quick_start_and_stays_short() {
    let readme = read(&repository().join("README.md"));
    let lines: Vec<&str> = readme.lines().collect();
    assert!(lines.len() <= 500, "{} lines", lines.len());
    // A `luminos` command in a code block within the first 40 lines.
    let mut code = false;
    let command = lines.iter().take(40).any(|line| {
        if line.starts_with("```") {
            code = !code;
            return false;
        }
        code && line.starts_with("luminos ")
    });
    assert!(
        command,
        "no luminos command in a code block in the first 40 lines"
    );
    assert!(lines[..40].contains(&"## Quick start"));
    assert!(readme.contains("\n## Contents\n"), "no table of contents");
    // The benchmark tables and the internals live in docs/.
    assert!(!readme.contains("| build | interactive |"));
    for doc in ["docs/benchmarks.md", "docs/internals.md", "docs/json.md"] {
        assert!(readme.contains(&format!("]({doc}")), "{doc} not linked");
    }
}

#[test]
fn the_readme_and_the_docs_link_to_what_exists() {
    let root = repository();
    links_resolve(&root.join("README.md"));
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        links_resolve(&entry.unwrap().path());
    }
}
