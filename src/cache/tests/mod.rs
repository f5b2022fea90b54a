//! Unit tests of the cache API on temp roots (the original's test_cache.py
//! cases plus our differences). Process-level tests live in tests/cache.rs.

use super::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

use serde_json::{Map, Value, json};

use crate::report::Flag;

mod access;
mod entries;
mod records;

struct Fixture {
    _tmp: tempfile::TempDir,
    root: CacheRoot,
    target: PathBuf,
    cache: Cache,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let target = std::fs::canonicalize(target).unwrap();
    let (root, cache) = crate::testing::open_cache(tmp.path(), &target);
    Fixture {
        _tmp: tmp,
        root,
        target,
        cache,
    }
}

/// A valid entry for `rel` under /t: the fields every kind needs, then
/// `fields`.
fn entry(rel: &str, fields: Value) -> Value {
    let mut entry = json!({
        "path": format!("/t/{rel}"),
        "relative_path": rel,
        "cached_at": now_iso(),
    });
    let Value::Object(fields) = fields else {
        panic!("fields are an object")
    };
    entry.as_object_mut().unwrap().extend(fields);
    entry
}

fn file_entry(rel: &str) -> Value {
    let fields = json!({"summary": "A Python file.", "size_bytes": 128, "category": "source"});
    entry(rel, fields)
}

fn dir_entry(rel: &str) -> Value {
    let fields =
        json!({"summary": "A directory.", "child_count": 3, "dominant_category": "source"});
    entry(rel, fields)
}

fn with(mut entry: Value, field: &str, value: Value) -> Value {
    entry[field] = value;
    entry
}

fn without(mut entry: Value, field: &str) -> Value {
    entry.as_object_mut().unwrap().remove(field);
    entry
}
