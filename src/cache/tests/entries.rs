//! Entries: written and read back as pretty JSON, keyed by absolute
//! normalized paths, their required fields and confidence checked, listings
//! sorted, low confidence as in the original, batches written whole.

use super::*;

#[test]
fn valid_entries_are_written_and_read_back() {
    let f = fixture();
    f.cache
        .write_entry(EntryKind::File, "foo.py", &file_entry("foo.py"))
        .unwrap();
    f.cache
        .write_entry(EntryKind::Dir, "mydir", &dir_entry("mydir"))
        .unwrap();
    assert_eq!(
        f.cache.read_entry(EntryKind::File, "foo.py").unwrap()["summary"],
        "A Python file."
    );
    assert!(f.cache.has_entry(EntryKind::Dir, "mydir"));
    assert!(!f.cache.has_entry(EntryKind::File, "mydir"));
    assert!(!f.cache.has_entry(EntryKind::File, "missing.py"));
    assert_eq!(f.cache.read_entry(EntryKind::File, "missing.py"), None);
}

#[test]
fn entries_are_pretty_json_with_two_space_indent() {
    let f = fixture();
    let entry = json!({"path": "/t/a", "relative_path": "a", "size_bytes": 1,
        "category": "source", "summary": "s", "cached_at": "now"});
    f.cache.write_entry(EntryKind::File, "a", &entry).unwrap();
    let file = f
        .cache
        .dir()
        .join("files")
        .join(format!("{}.json", f.cache.entry_key("a")));
    let text = std::fs::read_to_string(file).unwrap();
    let head = format!(
        "{{\n  \"path\": \"{}\",\n  \"relative_path\": \"a\",",
        f.target.join("a").display()
    );
    assert!(text.starts_with(&head), "{text}");
}

/// An entry's location is the path it is written under: the agent's `path`
/// and `relative_path` fields are replaced (or added, first), whatever they
/// said.
#[test]
fn writes_record_the_path_they_are_keyed_by() {
    let f = fixture();
    let cases = [
        (
            "src/core/engine.rs",
            json!({"path": "engine.rs", "relative_path": "engine.rs"}),
        ),
        (
            "./src/x.rs",
            json!({"path": "/elsewhere/x.rs", "relative_path": "lib/x.rs"}),
        ),
        ("src/y.rs", json!({})),
    ];
    for (spelling, fields) in cases {
        let mut entry = file_entry("ignored");
        for (key, value) in fields.as_object().unwrap() {
            entry[key] = value.clone();
        }
        if fields.as_object().unwrap().is_empty() {
            entry = without(without(entry, "path"), "relative_path");
        }
        f.cache
            .write_entry(EntryKind::File, spelling, &entry)
            .unwrap();
        let stored = f.cache.read_entry(EntryKind::File, spelling).unwrap();
        let location = f.cache.absolute_entry_path(spelling);
        assert_eq!(stored["path"], location.to_str().unwrap(), "{spelling}");
        let relative = location.strip_prefix(&f.target).unwrap().to_str().unwrap();
        assert_eq!(stored["relative_path"], relative, "{spelling}");
        let keys: Vec<&String> = stored.as_object().unwrap().keys().take(2).collect();
        assert_eq!(keys, ["path", "relative_path"]);
    }
    let root = f.target.to_str().unwrap();
    f.cache
        .write_entry(EntryKind::Dir, root, &dir_entry("x"))
        .unwrap();
    assert_eq!(
        f.cache.read_entry(EntryKind::Dir, ".").unwrap()["relative_path"],
        "."
    );
}

/// Entries written before locations were recorded on write may name any
/// path: a keyed read corrects the fields, and a listing trusts a stored
/// location only when it hashes to the entry's key.
#[test]
fn stored_locations_count_only_when_they_match_the_key() {
    let f = fixture();
    let files = f.cache.dir().join("files");
    let raw = |spelling: &str, fields: Value| {
        let key = f.cache.entry_key(spelling);
        std::fs::write(files.join(format!("{key}.json")), fields.to_string()).unwrap();
    };
    let abs = |rel: &str| f.target.join(rel).to_str().unwrap().to_string();
    // The original issue: an absolute path that is right and a bare name.
    raw(
        "src/core/a.rs",
        json!({"path": abs("src/core/a.rs"), "relative_path": "a.rs", "summary": "A"}),
    );
    // Relative fields that are right.
    raw(
        "src/b.rs",
        json!({"path": "b.rs", "relative_path": "src/b.rs", "summary": "B"}),
    );
    // Fields that name another file entirely.
    raw(
        "src/c.rs",
        json!({"path": "c.rs", "relative_path": "c.rs", "summary": "C"}),
    );

    let located: Vec<(String, String, String)> = f
        .cache
        .located_entries(EntryKind::File)
        .into_iter()
        .map(|(path, entry)| {
            (
                path.strip_prefix(&f.target)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_string(),
                entry["relative_path"].as_str().unwrap().to_string(),
                entry["summary"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut expected = vec![
        (
            "src/core/a.rs".to_string(),
            "src/core/a.rs".to_string(),
            "A".to_string(),
        ),
        (
            "src/b.rs".to_string(),
            "src/b.rs".to_string(),
            "B".to_string(),
        ),
    ];
    expected.sort_by_key(|(rel, _, _)| f.cache.entry_key(rel));
    assert_eq!(located, expected);
    // Listed by location where it is known; the unconfirmed one as it says.
    let mut listed = f.cache.list_entries(EntryKind::File);
    listed.sort();
    assert_eq!(listed, ["c.rs", "src/b.rs", "src/core/a.rs"]);
    // A keyed read knows the location whatever the fields say.
    let c = f.cache.read_entry(EntryKind::File, "src/c.rs").unwrap();
    assert_eq!(c["path"], abs("src/c.rs"));
    assert_eq!(c["relative_path"], "src/c.rs");
}

#[test]
fn missing_required_fields_are_listed_sorted() {
    let f = fixture();
    let err = f
        .cache
        .write_entry(
            EntryKind::File,
            "foo.py",
            &without(without(file_entry("foo.py"), "summary"), "category"),
        )
        .unwrap_err()
        .to_string();
    assert_eq!(err, "Error: missing required fields: category, summary");
    let err = f
        .cache
        .write_entry(EntryKind::Dir, "d", &without(dir_entry("d"), "child_count"))
        .unwrap_err()
        .to_string();
    assert_eq!(err, "Error: missing required fields: child_count");
    // A dir entry needs dir fields, not file fields.
    let err = f
        .cache
        .write_entry(EntryKind::Dir, "d", &file_entry("d"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "Error: missing required fields: child_count, dominant_category"
    );
    assert!(!f.cache.has_entry(EntryKind::Dir, "d"));
}

#[test]
fn raw_content_is_refused() {
    let f = fixture();
    for field in ["content", "contents", "raw"] {
        let err = f
            .cache
            .write_entry(
                EntryKind::File,
                "a",
                &with(file_entry("a"), field, json!("data")),
            )
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("Error:") && err.contains(field), "{err}");
    }
    assert!(!f.cache.has_entry(EntryKind::File, "a"));
}

#[test]
fn confidence_must_be_a_number_in_the_unit_interval() {
    let f = fixture();
    for good in [json!(0), json!(0.0), json!(0.85), json!(1), json!(1.0)] {
        f.cache
            .write_entry(
                EntryKind::File,
                "a",
                &with(file_entry("a"), "confidence", good),
            )
            .unwrap();
    }
    for bad in [
        json!(1.5),
        json!(-0.1),
        json!("high"),
        json!(true),
        json!(null),
        json!([0.5]),
    ] {
        let err = f
            .cache
            .write_entry(
                EntryKind::File,
                "a",
                &with(file_entry("a"), "confidence", bad.clone()),
            )
            .unwrap_err()
            .to_string();
        assert!(err.contains("confidence"), "{bad}: {err}");
    }
    let ok = with(
        with(file_entry("a"), "confidence", json!(0.5)),
        "confidence_reason",
        json!(""),
    );
    f.cache.write_entry(EntryKind::File, "a", &ok).unwrap();
    let bad = with(file_entry("a"), "confidence_reason", json!(42));
    assert_eq!(
        f.cache
            .write_entry(EntryKind::File, "a", &bad)
            .unwrap_err()
            .to_string(),
        "Error: confidence_reason must be a string."
    );
    assert!(
        f.cache
            .write_entry(EntryKind::File, "a", &json!([1]))
            .is_err()
    );
}

#[test]
fn keys_are_absolute_and_lexically_normalized() {
    let f = fixture();
    let abs = f.target.join("src/lib.rs");
    let abs = abs.to_str().unwrap();
    let key = f.cache.entry_key(abs);
    for spelling in [
        "src/lib.rs",
        "./src/lib.rs",
        "src/./lib.rs",
        "src/../src/lib.rs",
        "src//lib.rs",
    ] {
        assert_eq!(f.cache.entry_key(spelling), key, "{spelling}");
    }
    let dir_abs = f.target.join("src");
    let dir_key = f.cache.entry_key(dir_abs.to_str().unwrap());
    for spelling in ["src", "src/", "./src/.", &format!("{}/", dir_abs.display())] {
        assert_eq!(f.cache.entry_key(spelling), dir_key, "{spelling}");
    }
    let target_key = f.cache.entry_key(f.target.to_str().unwrap());
    assert_eq!(f.cache.entry_key("."), target_key);
    assert_eq!(f.cache.entry_key(""), target_key);
    // The key is the original's: sha256 of the absolute path's UTF-8.
    let expected = crate::text::hex(&Sha256::digest(abs.as_bytes()));
    assert_eq!(key, expected);
    assert_eq!(key.len(), 64);
    assert_ne!(f.cache.entry_key("src/main.rs"), key);

    f.cache
        .write_entry(EntryKind::File, "src/lib.rs", &file_entry("src/lib.rs"))
        .unwrap();
    assert!(f.cache.has_entry(EntryKind::File, abs));
    assert_eq!(f.cache.list_entries(EntryKind::File).len(), 1);
}

#[test]
fn listings_are_sorted_by_key_and_skip_garbage() {
    let f = fixture();
    for rel in ["a.py", "b.py", "c.py"] {
        f.cache
            .write_entry(EntryKind::File, rel, &file_entry(rel))
            .unwrap();
    }
    // A path-less entry shows its file name; garbage and non-objects are skipped.
    let files = f.cache.dir().join("files");
    std::fs::write(files.join("zz.json"), "{\"summary\": \"x\"}").unwrap();
    std::fs::write(files.join("broken.json"), "{\"summary\": ").unwrap();
    std::fs::write(files.join("list.json"), "[1, 2]").unwrap();
    std::fs::write(files.join("notes.txt"), "{}").unwrap();

    let mut by_key: Vec<(String, &str)> = ["a.py", "b.py", "c.py"]
        .iter()
        .map(|rel| (f.cache.entry_key(rel), *rel))
        .collect();
    by_key.push(("zz".to_string(), "zz.json"));
    by_key.sort();
    let expected: Vec<&str> = by_key.iter().map(|(_, rel)| *rel).collect();
    assert_eq!(f.cache.list_entries(EntryKind::File), expected);
    assert_eq!(f.cache.read_all_entries(EntryKind::File).len(), 4);
    assert!(f.cache.list_entries(EntryKind::Dir).is_empty());
}

#[test]
fn low_confidence_entries_follow_the_original() {
    let f = fixture();
    let put = |kind, rel: &str, confidence: Option<f64>| {
        let base = match kind {
            EntryKind::File => file_entry(rel),
            EntryKind::Dir => dir_entry(rel),
        };
        let entry = match confidence {
            Some(c) => with(base, "confidence", json!(c)),
            None => base,
        };
        f.cache.write_entry(kind, rel, &entry).unwrap();
    };
    assert!(f.cache.low_confidence_entries(0.7).is_empty());
    put(EntryKind::File, "a.py", Some(0.6));
    put(EntryKind::File, "b.py", Some(0.9));
    put(EntryKind::File, "c.py", Some(0.7));
    put(EntryKind::File, "d.py", None);
    put(EntryKind::File, "e.py", Some(0.2));
    put(EntryKind::Dir, "mydir", Some(0.3));
    let rels: Vec<String> = f
        .cache
        .low_confidence_entries(0.7)
        .iter()
        .map(|e| e["relative_path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(rels, ["d.py", "e.py", "mydir", "a.py"]);
    let custom: Vec<Value> = f.cache.low_confidence_entries(0.25);
    assert_eq!(custom.len(), 2);
}

#[test]
fn a_batch_of_entries_is_written_whole_or_not_at_all() {
    let fixture = fixture();
    let (cache, target) = (&fixture.cache, &fixture.target);
    let entry = |rel: &str| with(dir_entry(rel), "summary", json!(rel));
    let batch: Vec<(String, Value)> = ["a", "b", "c"]
        .iter()
        .map(|rel| (target.join(rel).to_string_lossy().into_owned(), entry(rel)))
        .collect();
    cache.write_entries(EntryKind::Dir, &batch).unwrap();
    for (path, written) in &batch {
        // Each entry records where it is keyed.
        let read = cache.read_entry(EntryKind::Dir, path).unwrap();
        assert_eq!(read["path"], json!(path));
        assert_eq!(read["summary"], written["summary"]);
    }
    // One invalid entry: none of the batch is written.
    let bad = vec![
        ("d".to_string(), entry("d")),
        ("e".to_string(), json!({"summary": "no required fields"})),
    ];
    assert!(cache.write_entries(EntryKind::Dir, &bad).is_err());
    assert!(!cache.has_entry(EntryKind::Dir, "d"));
    cache.write_entries(EntryKind::Dir, &[]).unwrap();
}
