use super::*;

/// A tree with `src/`, `docs/`, `tests/` and a few files.
fn vocabulary() -> Vocabulary {
    Vocabulary::new(
        ["main.rs", "lib.rs", "guide.md", "App.tsx", "weird.qzx"],
        ["src", "docs", "tests", "ai"],
    )
}

/// `(written text, normalized path, line)` of each path citation.
fn paths(text: &str) -> Vec<(String, String, Option<u32>)> {
    paths_with(text, &vocabulary())
}

fn paths_with(text: &str, vocabulary: &Vocabulary) -> Vec<(String, String, Option<u32>)> {
    extract(text, vocabulary)
        .into_iter()
        .filter_map(|c| match c.cited {
            Cited::Path(p) => Some((text[c.span].to_string(), p.shown(), p.line)),
            Cited::Symbol(_) => None,
        })
        .collect()
}

fn path_names(text: &str) -> Vec<String> {
    paths(text).into_iter().map(|(_, path, _)| path).collect()
}

fn symbols(text: &str) -> Vec<Vec<String>> {
    extract(text, &vocabulary())
        .into_iter()
        .filter_map(|c| match c.cited {
            Cited::Symbol(s) => {
                assert_eq!(
                    &text[c.span.clone()],
                    s.text,
                    "a symbol's span is its code span"
                );
                Some(s.segments)
            }
            Cited::Path(_) => None,
        })
        .collect()
}

fn owned(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// One path citation: `(as written, normalized, line)`.
type Citation = (&'static str, &'static str, Option<u32>);

/// Texts and the paths they cite.
const CITED: &[(&str, &[Citation])] = &[
    // In backticks and in prose.
    (
        "The entry point is `src/main.rs`, which calls engine.rs and lib.rs",
        &[
            ("src/main.rs", "src/main.rs", None),
            ("engine.rs", "engine.rs", None),
            ("lib.rs", "lib.rs", None),
        ],
    ),
    // Line suffixes are split off.
    (
        "main.rs:42, src/lib.rs:10:5, `docs/guide.md:3-9` and App.tsx#L12-L20.",
        &[
            ("main.rs", "main.rs", Some(42)),
            ("src/lib.rs", "src/lib.rs", Some(10)),
            ("docs/guide.md", "docs/guide.md", Some(3)),
            ("App.tsx", "App.tsx", Some(12)),
        ],
    ),
    ("see main.rs:", &[("main.rs", "main.rs", None)]),
    // `./` and Windows separators are normalized.
    (
        "run ./src/main.rs or .\\src\\lib.rs or src\\ai\\mod.rs",
        &[
            ("./src/main.rs", "src/main.rs", None),
            (".\\src\\lib.rs", "src/lib.rs", None),
            ("src\\ai\\mod.rs", "src/ai/mod.rs", None),
        ],
    ),
];

#[test]
fn cited_paths_are_found_with_their_lines() {
    for (text, expected) in CITED {
        let expected: Vec<(String, String, Option<u32>)> = expected
            .iter()
            .map(|(written, path, line)| (written.to_string(), path.to_string(), *line))
            .collect();
        assert_eq!(paths(text), expected, "{text:?}");
    }
}

#[test]
fn sentence_punctuation_is_not_part_of_a_path() {
    assert_eq!(
        path_names("See main.rs. Then (docs/guide.md), \"lib.rs\"; **App.tsx**! Or README.md?"),
        ["main.rs", "docs/guide.md", "lib.rs", "App.tsx", "README.md"]
    );
    let found = paths("It ends at main.rs.");
    assert_eq!(found[0].0, "main.rs", "the span stops before the full stop");
    assert_eq!(
        path_names("main.rs's parser and “lib.rs”"),
        ["main.rs", "lib.rs"]
    );
}

#[test]
fn a_parent_relative_path_is_kept_as_written() {
    assert_eq!(path_names("the parent ../other/x"), ["../other/x"]);
}

#[test]
fn directories_need_a_separator_and_a_known_first_component() {
    assert_eq!(
        path_names("src/ai holds the agents; src/ and tests/support/ too, and/or I/O"),
        ["src/ai", "src/", "tests/support/"]
    );
}

/// Texts that cite no path at all, and why.
const NO_PATHS: &[(&str, &str)] = &[
    (
        "application/json, TCP/IP, read/write, client/server",
        "words joined by a slash, with no known first component",
    ),
    ("the src directory", "a bare name is a word"),
    (
        "https://example.com/src/main.rs, <http://x.io/a.py>, www.example.com/app.js, \
         github.com/owner/repo/lib.rs and me@example.com",
        "URLs and mail addresses",
    ),
    (
        "Version 1.2.3 (v2.0, 2.0.0-rc1) needs Python 3.11, e.g. on Node 18.17; i.e. etc. \
         vs. U.S. 3.5x",
        "versions and abbreviations",
    ),
    ("ASP.NET on .NET", "bare extensions"),
    ("a file.zzq", "an extension neither known nor in the tree"),
    (
        "built with Node.js and Vue.js",
        "product names the tree does not hold",
    ),
    (
        "--no-ignore -x target src/**/*.rs *.py crate::scan::walk",
        "options, globs and Rust paths",
    ),
    ("C:\\Users\\me\\x.rs", "a drive path is never inside"),
];

#[test]
fn texts_that_name_no_path() {
    for (text, why) in NO_PATHS {
        assert_eq!(path_names(text), Vec::<String>::new(), "{why}: {text:?}");
    }
}

#[test]
fn dotfiles_are_paths_and_bare_extensions_are_not() {
    assert_eq!(
        path_names("the .env and .gitignore files, unlike the .rs and .json files"),
        [".env", ".gitignore"]
    );
    assert_eq!(path_names("config/.env"), ["config/.env"]);
}

#[test]
fn unknown_extensions_come_from_the_tree() {
    assert_eq!(
        path_names("weird.qzx and other.qzx"),
        ["weird.qzx", "other.qzx"]
    );
}

#[test]
fn product_names_are_paths_only_when_the_tree_has_them() {
    let vocabulary = Vocabulary::new(["node.js"], ["src"]);
    assert_eq!(
        paths_with("see node.js", &vocabulary)
            .into_iter()
            .map(|p| p.1)
            .collect::<Vec<_>>(),
        ["node.js"]
    );
}

#[test]
fn markdown_links_yield_their_target() {
    assert_eq!(path_names("[the guide](docs/guide.md)"), ["docs/guide.md"]);
}

#[test]
fn absolute_paths_are_kept_for_resolution() {
    let found = extract("reads /etc/passwd", &vocabulary());
    let Cited::Path(path) = &found[0].cited else {
        panic!("a path");
    };
    assert!(path.absolute);
    assert_eq!(path.path, "/etc/passwd");
}

#[test]
fn symbols_are_written_as_code() {
    assert_eq!(
        symbols(
            "`Engine::start`, `parse_args()`, `class App`, `app.run(port)`, `self.load()`, \
             `fn start(&self) -> bool`, `pub fn new()`, `crate::scan::walk`, \
             `func (b *Bucket) Describe()`, `def load(self, name):`"
        ),
        [
            owned(&["Engine", "start"]),
            owned(&["parse_args"]),
            owned(&["App"]),
            owned(&["app", "run"]),
            owned(&["load"]),
            owned(&["start"]),
            owned(&["new"]),
            owned(&["scan", "walk"]),
            owned(&["Bucket", "Describe"]),
            owned(&["load"]),
        ]
    );
}

#[test]
fn words_and_expressions_in_backticks_are_not_symbols() {
    assert!(
        symbols(
            "`config`, `MAX_BATCH`, `Vec<u8>`, `println!()`, `x == y`, `a.b`, `self`, Engine::start"
        )
        .is_empty()
    );
}

#[test]
fn a_code_span_can_hold_a_path_and_a_call() {
    let found = extract("`open(\"config.yaml\")` and `main.rs:42`", &vocabulary());
    let kinds: Vec<&str> = found
        .iter()
        .map(|c| match &c.cited {
            Cited::Path(p) => p.path.as_str(),
            Cited::Symbol(s) => s.member(),
        })
        .collect();
    assert_eq!(kinds, ["config.yaml", "open", "main.rs"]);
}

#[test]
fn commands_in_code_spans_yield_their_paths() {
    assert_eq!(
        path_names("`cargo run -- src/main.rs --json` and ``lib.rs``"),
        ["src/main.rs", "lib.rs"]
    );
}

#[test]
fn an_unmatched_backtick_is_text() {
    assert_eq!(path_names("a ` stray main.rs"), ["main.rs"]);
}

#[test]
fn a_path_field_takes_any_single_word() {
    let fields = |field: &str| -> Vec<String> {
        path_field(field, &vocabulary())
            .into_iter()
            .map(|c| match c.cited {
                Cited::Path(p) => p.shown(),
                Cited::Symbol(_) => unreachable!(),
            })
            .collect()
    };
    assert_eq!(fields("Makefile"), ["Makefile"]);
    assert_eq!(fields(" src/main.rs:7 "), ["src/main.rs"]);
    assert_eq!(fields("src/app.py (grep output)"), ["src/app.py"]);
    assert!(fields("general").is_empty());
    assert!(fields("").is_empty());
    assert!(fields("multiple files").is_empty());
    assert!(fields("https://x.io/a").is_empty());
}

#[test]
fn spans_allow_rewriting_in_place() {
    let text = "Start at ./src/main.rs:3.";
    let found = extract(text, &vocabulary());
    assert_eq!(&text[found[0].span.clone()], "./src/main.rs");
}

#[test]
fn names_with_spaces_are_read_whole_when_the_tree_has_them() {
    let vocabulary = Vocabulary::new(
        [
            "my notes.txt",
            "notes.txt",
            "main.rs",
            "Q3 report final.pdf",
        ],
        ["docs", "Meeting Minutes"],
    );
    let found = |text: &str| paths_with(text, &vocabulary);
    assert_eq!(
        found("Largest: my notes.txt (9.4 KB), main.rs."),
        [
            ("my notes.txt".into(), "my notes.txt".into(), None),
            ("main.rs".into(), "main.rs".into(), None),
        ]
    );
    // Under a directory, with a line, in backticks, at a sentence's end.
    assert_eq!(
        found("See `docs/my notes.txt:4` and ./Q3 report final.pdf."),
        [
            (
                "docs/my notes.txt".into(),
                "docs/my notes.txt".into(),
                Some(4)
            ),
            (
                "./Q3 report final.pdf".into(),
                "Q3 report final.pdf".into(),
                None
            ),
        ]
    );
    // A directory with spaces, and the rest of a path after it.
    assert_eq!(
        found("Minutes live in Meeting Minutes/2024.md and Meeting Minutes/."),
        [
            (
                "Meeting Minutes/2024.md".into(),
                "Meeting Minutes/2024.md".into(),
                None
            ),
            ("Meeting Minutes/".into(), "Meeting Minutes/".into(), None),
        ]
    );
    // Without the rest of the name before it, the word is read alone.
    assert_eq!(
        found("Only notes.txt here; your notes.txt too."),
        [
            ("notes.txt".into(), "notes.txt".into(), None),
            ("notes.txt".into(), "notes.txt".into(), None),
        ]
    );
    // A tree without such names reads words as before.
    assert_eq!(path_names("my notes.txt"), ["notes.txt"]);
}
