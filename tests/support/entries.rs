//! What a run left in the cache, in a form two runs can be compared by: the
//! dir and file entries of the one investigation under a cache root, keyed by
//! entry file name, without the fields that record when they were written.
//! Also the module trees the soak and crash tests investigate.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::TestEnv;

/// Fields whose value depends on when an entry was written.
pub const VOLATILE: [&str; 1] = ["cached_at"];

/// Dir and file entries by entry file name (`<sha256>.json`).
#[derive(Debug, Clone, PartialEq)]
pub struct Entries {
    pub dirs: BTreeMap<String, Value>,
    pub files: BTreeMap<String, Value>,
}

impl Entries {
    /// The `relative_path` of every dir entry a model wrote (not built from
    /// the scan), sorted.
    pub fn model_read(&self) -> Vec<String> {
        let mut paths: Vec<String> = self
            .dirs
            .values()
            .filter(|e| e["mechanical"] != true)
            .map(|e| e["relative_path"].as_str().unwrap_or("").to_string())
            .collect();
        paths.sort();
        paths
    }

    /// Assert that a run resumed after an interruption (`self`) carried on
    /// with what the uninterrupted run `clean` decided: every directory has
    /// an entry, none partial, and every directory a model read in `clean`
    /// was read by a model here too. (A resumed run has its whole budget
    /// for what is left, so its replanning may buy more.)
    pub fn assert_carries_on(&self, clean: &Entries) {
        assert_eq!(self.dir_paths(), clean.dir_paths(), "every directory");
        let read = self.model_read();
        for dir in clean.model_read() {
            assert!(read.contains(&dir), "{dir} is no longer read by a model");
        }
        for entry in self.dirs.values() {
            assert_ne!(entry["partial"], true, "{entry}");
        }
    }

    /// The `relative_path` of every dir entry, sorted.
    pub fn dir_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = self
            .dirs
            .values()
            .map(|e| e["relative_path"].as_str().unwrap_or("").to_string())
            .collect();
        paths.sort();
        paths
    }
}

/// The investigation directory under `cache_root` (the one with a
/// `meta.json`); panics unless there is exactly one.
pub fn investigation_dir(cache_root: &Path) -> std::path::PathBuf {
    let ids: Vec<_> = std::fs::read_dir(cache_root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("meta.json").is_file())
        .collect();
    assert_eq!(
        ids.len(),
        1,
        "one investigation in {}",
        cache_root.display()
    );
    ids.into_iter().next().unwrap()
}

/// The entries of the only investigation under `cache_root`. Every entry
/// file must parse.
pub fn cache_entries(cache_root: &Path) -> Entries {
    let dir = investigation_dir(cache_root);
    let read = |sub: &str| -> BTreeMap<String, Value> {
        std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| {
                let mut value: Value = serde_json::from_slice(&std::fs::read(&p).unwrap())
                    .unwrap_or_else(|err| panic!("{}: {err}", p.display()));
                for field in VOLATILE {
                    value.as_object_mut().unwrap().remove(field);
                }
                (p.file_name().unwrap().to_string_lossy().into_owned(), value)
            })
            .collect()
    };
    Entries {
        dirs: read("dirs"),
        files: read("files"),
    }
}

/// `n` leaf directories in groups of ten (`pkg<g>/mod<i>`), each with a
/// source file and a note, plus a README at the root.
pub fn module_tree(n: usize) -> TestEnv {
    let env = TestEnv::new();
    env.file("README.md", "# Test target\n");
    for i in 0..n {
        let dir = format!("pkg{}/mod{i:03}", i / 10);
        env.file(
            &format!("{dir}/lib.rs"),
            format!("pub fn f{i}() -> u32 {{ {i} }}\n"),
        )
        .file(&format!("{dir}/notes.txt"), format!("Module {i}.\n"));
    }
    env
}

/// Every directory under `target`, relative (`.` for the target), sorted.
pub fn all_dirs(target: &Path) -> Vec<String> {
    let mut dirs: Vec<String> = walkdir::WalkDir::new(target)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_dir())
        .map(|e| match e.path().strip_prefix(target).unwrap() {
            rel if rel.as_os_str().is_empty() => ".".to_string(),
            rel => rel.to_string_lossy().into_owned(),
        })
        .collect();
    dirs.sort();
    dirs
}

/// The batch ids the investigation under `cache_root` has in flight (its
/// `batch/state.json`), none when there is no such file.
pub fn batches_in_flight(cache_root: &Path) -> Vec<String> {
    std::fs::read_dir(cache_root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("batch/state.json")).ok())
        .filter_map(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .flat_map(|state| {
            state["in_flight"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|b| b["id"].as_str().map(str::to_string))
                .collect::<Vec<_>>()
        })
        .collect()
}
