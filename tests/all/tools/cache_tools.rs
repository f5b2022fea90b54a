//! The cache tools: writing, reading and listing entries, their errors, and
//! how a dir loop keys entries by the real file.

use super::*;

#[test]
fn write_read_and_list_the_cache() {
    let e = env();
    let list = |kind: &str| {
        e.call_in(Toolbox::Refine, "list_cache", json!({ "cache_type": kind }))
            .content
    };
    assert_eq!(list("file"), "(no cached entries)");
    assert_eq!(
        e.call_in(
            Toolbox::Refine,
            "read_cache",
            json!({"cache_type": "file", "path": "src/main.rs"})
        )
        .content,
        "null"
    );
    assert_eq!(
        e.ok(
            "write_cache",
            json!({"cache_type": "file", "path": "src/main.rs", "data": file_data("src/main.rs")})
        ),
        "ok"
    );
    // Any spelling of the path finds the entry.
    let abs = e.target.join("src/main.rs");
    let read = e.call_in(
        Toolbox::Refine,
        "read_cache",
        json!({"cache_type": "file", "path": abs}),
    );
    assert!(!read.is_error);
    // The entry is the agent's words about a file: framed as untrusted data.
    assert!(
        read.content.starts_with(&format!(
            "<untrusted-data source=\"cached file entry: {}\"",
            abs.display()
        )),
        "{}",
        read.content
    );
    let entry: Value = serde_json::from_str(&inside_frame(&read.content)).unwrap();
    assert_eq!(entry["summary"], "Entry point.");
    assert!(
        read.content.contains("\n{\"") && !read.content.contains("\n  \""),
        "compact JSON"
    );
    assert_eq!(list("file"), framed("cached file entries", "src/main.rs"));
    assert_eq!(list("dir"), "(no cached entries)");
}

#[test]
fn cache_tool_errors() {
    let e = env();
    e.assert_refusals(
        "write_cache",
        &[
            (
                json!({"cache_type": "blob", "path": "a", "data": {}}),
                "'file' or 'dir'",
            ),
            (json!({"path": "a", "data": {}}), "'file' or 'dir'"),
        ],
    );
    let missing = e.err(
        "write_cache",
        json!({"cache_type": "dir", "path": "src", "data": {"summary": "x"}}),
    );
    // luminos fills in path and relative_path itself.
    assert_eq!(
        missing,
        "Error: missing required fields: cached_at, child_count, dominant_category"
    );
    let mut raw = file_data("README.md");
    raw["content"] = json!("fn main() {}");
    // An entry describes something real, of its own kind, inside the target.
    let x = file_data("x");
    e.assert_refusals(
        "write_cache",
        &[
            (
                json!({"cache_type": "file", "path": "README.md", "data": raw}),
                "content",
            ),
            (
                json!({"cache_type": "file", "path": "README.md"}),
                "missing required fields",
            ),
            (
                json!({"cache_type": "file", "path": "src", "data": x}),
                "is a directory",
            ),
            (
                json!({"cache_type": "dir", "path": "README.md", "data": {}}),
                "is not a directory",
            ),
            (
                json!({"cache_type": "file", "path": "../x", "data": x}),
                "outside",
            ),
            (
                json!({"cache_type": "file", "path": "/etc/passwd", "data": x}),
                "outside",
            ),
            (json!({"cache_type": "file", "data": x}), "'path'"),
        ],
    );
    assert_eq!(
        e.err(
            "write_cache",
            json!({"cache_type": "file", "path": "src/gone.rs", "data": x})
        ),
        "Error: path 'src/gone.rs' does not exist."
    );
    assert!(
        e.cache
            .list_entries(luminos::cache::EntryKind::File)
            .is_empty()
    );
    for (tool, input) in [
        ("read_cache", json!({"cache_type": "files", "path": "a"})),
        ("read_cache", json!({"cache_type": "file"})),
        ("list_cache", json!({})),
    ] {
        assert!(e.call_in(Toolbox::Refine, tool, input).is_error, "{tool}");
    }
}

/// In a dir loop, a relative path that names nothing from the root is read
/// from the loop's directory; entries always record where they really are,
/// and a loop writes no other directory's dir entry.
#[test]
fn write_cache_in_a_dir_loop_keys_entries_by_the_real_file() {
    let e = env();
    e.write("src/README.md", "# src\n").unwrap();
    let src = e.target.join("src");
    let ctx = ToolContext {
        home: Some(&src),
        ..e.ctx()
    };
    let write = |kind: &str, path: &str, data: Value| {
        let input = json!({"cache_type": kind, "path": path, "data": data});
        match dispatch(Toolbox::Dir, "write_cache", &input, &ctx).unwrap() {
            Dispatch::Ran(out) => out,
            other => panic!("{other:?}"),
        }
    };
    // A bare name with wrong fields: keyed and recorded as src/main.rs.
    let out = write("file", "main.rs", file_data("main.rs"));
    assert!(!out.is_error, "{}", out.content);
    let entry = e
        .cache
        .read_entry(EntryKind::File, "src/main.rs")
        .expect("keyed by the real file");
    assert_eq!(entry["relative_path"], "src/main.rs");
    assert_eq!(
        entry["path"],
        e.target.join("src/main.rs").to_str().unwrap()
    );
    assert!(!e.cache.has_entry(EntryKind::File, "main.rs"));
    // A name both places have is refused, not guessed.
    let out = write("file", "README.md", file_data("README.md"));
    assert!(
        out.is_error && out.content.contains("ambiguous"),
        "{}",
        out.content
    );
    // Its own dir entry, by any spelling; never another directory's.
    let dir = json!({"child_count": 1, "dominant_category": "source", "summary": "s",
                     "cached_at": "now", "relative_path": "."});
    assert!(!write("dir", "src", dir.clone()).is_error);
    assert_eq!(
        e.cache.read_entry(EntryKind::Dir, "src").unwrap()["relative_path"],
        "src"
    );
    let out = write("dir", "nested", dir.clone());
    assert!(out.is_error, "{}", out.content);
    assert_eq!(
        out.content,
        "Error: 'nested' is not the directory you are investigating; write the dir entry of src/ only."
    );
    assert!(write("dir", "empty", dir).is_error);
    assert_eq!(e.cache.list_entries(EntryKind::Dir), ["src"]);
    assert_eq!(e.cache.list_entries(EntryKind::File), ["src/main.rs"]);
}
