//! How every tool reads its arguments: the leniencies a model relies on
//! (booleans as words, numbers as strings, null as absent, fields it does
//! not know ignored, anything but an object as no arguments) and, for
//! input it cannot use, the one error line it is told, in the order the
//! tool checks its arguments.

use super::*;

/// `(toolbox, tool, input, answer)`: the whole answer for an error, the
/// start of it otherwise.
fn cases() -> Vec<(Toolbox, &'static str, Value, &'static str)> {
    use Toolbox::{Dir, Refine};
    vec![
        // read_file: path, then max_bytes, then the path itself, then hex.
        (
            Dir,
            "read_file",
            json!({}),
            "Error: the 'path' argument is required.",
        ),
        (
            Dir,
            "read_file",
            json!({"path": ""}),
            "Error: the 'path' argument is required.",
        ),
        (
            Dir,
            "read_file",
            json!({"path": 7}),
            "Error: 'path' must be a string.",
        ),
        (
            Dir,
            "read_file",
            json!(["README.md"]),
            "Error: the 'path' argument is required.",
        ),
        (
            Dir,
            "read_file",
            json!({"path": 7, "max_bytes": "lots"}),
            "Error: 'path' must be a string.",
        ),
        (
            Dir,
            "read_file",
            json!({"path": "nope", "max_bytes": 0}),
            "Error: max_bytes must be a positive whole number of bytes.",
        ),
        (
            Dir,
            "read_file",
            json!({"path": "nope", "hex": 3}),
            "Error: path 'nope' does not exist.",
        ),
        (
            Dir,
            "read_file",
            json!({"path": "README.md", "hex": "maybe"}),
            "Error: hex must be true or false.",
        ),
        (
            Dir,
            "read_file",
            json!({"path": "README.md", "max_bytes": " 6 ", "hex": "FALSE", "why": [1]}),
            "<untrusted-data source=\"README.md\">\n# Demo",
        ),
        (
            Dir,
            "read_file",
            json!({"path": "README.md", "max_bytes": null, "hex": null}),
            "<untrusted-data source=\"README.md\">\n# Demo\nA small demo.",
        ),
        // list_directory: path (the target when absent), then show_hidden.
        (
            Dir,
            "list_directory",
            json!({"path": 3, "show_hidden": 1}),
            "Error: 'path' must be a string.",
        ),
        (
            Dir,
            "list_directory",
            json!({"show_hidden": 1}),
            "Error: show_hidden must be true or false.",
        ),
        (
            Dir,
            "list_directory",
            json!({"path": null, "show_hidden": "True"}),
            "<untrusted-data source=\"listing of .\">\n  .hidden",
        ),
        (
            Dir,
            "list_directory",
            json!("src"),
            "<untrusted-data source=\"listing of .\">",
        ),
        // run_command and parse_structure: one string each.
        (
            Dir,
            "run_command",
            json!({"command": ["wc", "README.md"]}),
            "Error: 'command' is required and must be a string.",
        ),
        (
            Dir,
            "run_command",
            json!({"command": "wc -l README.md", "timeout": 99}),
            "<untrusted-data",
        ),
        (
            Dir,
            "parse_structure",
            json!({"path": null}),
            "Error: parse_structure needs a 'path' string.",
        ),
        // The cache tools: cache_type, then path, then the entry.
        (
            Dir,
            "write_cache",
            json!({"cache_type": "FILE", "path": 1}),
            "Error: cache_type must be 'file' or 'dir'.",
        ),
        (
            Dir,
            "write_cache",
            json!({"cache_type": "file", "path": 1}),
            "Error: 'path' must be a string.",
        ),
        (
            Dir,
            "write_cache",
            json!({"cache_type": "file", "path": "src/main.rs", "data": null}),
            "Error: data must be a JSON object.",
        ),
        (
            Dir,
            "write_cache",
            json!({"cache_type": "file", "path": "src/main.rs"}),
            "Error: missing required fields: cached_at, category, size_bytes, summary",
        ),
        (
            Refine,
            "read_cache",
            json!({"cache_type": "dir", "path": ""}),
            "Error: the 'path' argument is required.",
        ),
        (
            Refine,
            "read_cache",
            json!({"cache_type": "dir", "path": "src", "x": 1}),
            "null",
        ),
        (
            Refine,
            "list_cache",
            json!({"cache_type": 1}),
            "Error: cache_type must be 'file' or 'dir'.",
        ),
        // The notes: anything goes.
        (
            Dir,
            "think",
            json!({"observation": {"a": 1}, "hypothesis": null}),
            "ok",
        ),
        (Dir, "checkpoint", json!(42), "ok"),
        // flag: path, finding, severity, each a string when given.
        (
            Dir,
            "flag",
            json!({"path": 1, "finding": 2, "severity": 3}),
            "Error: 'path' must be a string.",
        ),
        (
            Dir,
            "flag",
            json!({"path": "", "finding": 2, "severity": 3}),
            "Error: 'finding' must be a string.",
        ),
        (
            Dir,
            "flag",
            json!({"finding": "f", "severity": 3}),
            "Error: 'severity' must be a string.",
        ),
        (
            Dir,
            "flag",
            json!({"finding": "f", "severity": "urgent\n"}),
            "Error: severity must be info, concern or critical, not 'urgent\\n'.",
        ),
        (
            Dir,
            "flag",
            json!({"path": null, "finding": "f", "severity": null}),
            "ok",
        ),
    ]
}

#[test]
fn every_tool_reads_its_arguments_as_before() {
    let e = env();
    for (toolbox, tool, input, expected) in cases() {
        let out = e.call_in(toolbox, tool, input.clone());
        if expected.starts_with("Error") {
            assert!(out.is_error, "{tool}({input}): {}", out.content);
            assert_eq!(out.content, expected, "{tool}({input})");
        } else {
            assert!(!out.is_error, "{tool}({input}): {}", out.content);
            assert!(
                out.content.starts_with(expected),
                "{tool}({input}): {}",
                out.content
            );
        }
    }
    // Nothing that failed reached the cache; the one flag given with null
    // fields is on `general`, as `info`.
    assert!(e.cache.list_entries(EntryKind::File).is_empty());
    let flags = e.cache.read_flags();
    assert_eq!(flags.len(), 1, "{flags:?}");
    assert_eq!(
        (flags[0].path.as_str(), flags[0].finding.as_str()),
        ("general", "f")
    );
    assert_eq!(flags[0].severity, luminos::report::Severity::Info);
}
