//! Where cache entries land: agents that spell paths every way a model does
//! (bare names, `./` prefixes, absolute paths, fields that name the wrong
//! directory) still leave every file's summary keyed by that file and
//! attributed to its own directory, and the root's loop, which runs last,
//! deletes none of them.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use luminos::cache::{Cache, CacheRoot, EntryKind};
use serde_json::{Value, json};
use support::TestEnv;
use support::agent::{
    AgentEnv, PAST_THE_CONTEXT_BUDGET, Pass, Turn, dir_summary, file_summary, visible_files,
};
use support::mock::{MockBlock, Reply};

/// 13 directories and 19 files. `docs/README.md` shares its name with the
/// root's README, so a bare `README.md` from the docs loop is ambiguous.
fn thirteen_dirs() -> TestEnv {
    let env = TestEnv::new();
    env.files(&[
        ("README.md", "# Demo\n"),
        ("Cargo.toml", "[package]\nname = \"demo\"\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/lib.rs", "pub mod core;\n"),
        ("src/core/engine.rs", "pub fn run() {}\n"),
        ("src/core/model.rs", "pub struct Model;\n"),
        ("src/net/mod.rs", "pub mod http;\n"),
        ("src/net/stream.rs", "pub struct Stream;\n"),
        ("src/net/http/stream.rs", "pub struct HttpStream;\n"),
        ("src/net/http/client.rs", "pub struct Client;\n"),
        ("docs/README.md", "# Docs\n"),
        ("docs/guide.md", "Guide\n"),
        ("docs/api/index.md", "API\n"),
        ("tests/it.rs", "#[test] fn it() {}\n"),
        ("tests/unit/parse.rs", "#[test] fn parse() {}\n"),
        ("scripts/build.sh", "#!/bin/sh\necho build\n"),
        ("config/app.toml", "name = 'demo'\n"),
        ("assets/logo.txt", "LOGO\n"),
        ("lib/util.py", "def util():\n    pass\n"),
    ]);
    env
}

/// How a directory's agent spells the paths of the files it caches.
#[derive(Debug, Clone, Copy)]
enum Spelling {
    /// `path` and both fields are the bare file name.
    Bare,
    /// `./name` everywhere.
    DotSlash,
    /// The right absolute `path`, a bare `relative_path` in the data.
    AbsoluteWithBareField,
    /// A right path relative to the target, data fields naming another
    /// directory's file.
    WrongFields,
}

fn spelling_of(rel: &str) -> Spelling {
    match rel {
        "src" | "docs" | "tests/unit" | "assets" => Spelling::Bare,
        "src/core" | "docs/api" | "config" => Spelling::DotSlash,
        "." | "src/net/http" | "scripts" => Spelling::AbsoluteWithBareField,
        _ => Spelling::WrongFields,
    }
}

fn join(rel: &str, name: &str) -> String {
    match rel {
        "." => name.to_string(),
        _ => format!("{rel}/{name}"),
    }
}

/// The `write_cache` input for file `name` of directory `rel`.
fn file_write(target: &Path, rel: &str, name: &str, size: u64, spelling: Spelling) -> Value {
    let absolute = target.join(join(rel, name)).to_string_lossy().into_owned();
    let dotted = format!("./{name}");
    let (path, field_path, field_rel) = match spelling {
        Spelling::Bare => (name.to_string(), name.to_string(), name.to_string()),
        Spelling::DotSlash => (dotted.clone(), dotted.clone(), dotted),
        Spelling::AbsoluteWithBareField => (absolute.clone(), absolute, name.to_string()),
        Spelling::WrongFields => (
            join(rel, name),
            format!("/somewhere/else/{name}"),
            format!("elsewhere/{name}"),
        ),
    };
    json!({"cache_type": "file", "path": path, "data": {
        "path": field_path, "relative_path": field_rel, "size_bytes": size,
        "category": "source", "summary": file_summary(rel, name), "confidence": 0.9,
        "cached_at": "2026-01-01T00:00:00+00:00"
    }})
}

fn tool_use(name: &str, input: Value) -> MockBlock {
    MockBlock::ToolUse {
        id: None,
        name: name.to_string(),
        input,
    }
}

/// Turn 1 caches every file with the directory's spelling, and the
/// directory itself with a `relative_path` of `.` whatever it is; turn 2
/// writes again, relative to the target, each file the cache refused (as a
/// model reads the error and corrects itself); then the report.
fn agent_turn(turn: &Turn<'_>) -> Reply {
    let dir = turn.dir();
    let rel = match dir.strip_prefix(turn.target) {
        Ok(r) if r.as_os_str().is_empty() => ".".to_string(),
        Ok(r) => r.to_string_lossy().into_owned(),
        Err(_) => panic!("{} is outside the target", dir.display()),
    };
    let files = visible_files(&dir);
    match turn.turn {
        1 => {
            let mut blocks = vec![MockBlock::Text(format!("Step 1: caching {rel}."))];
            for (name, size) in &files {
                let write = file_write(turn.target, &rel, name, *size, spelling_of(&rel));
                blocks.push(tool_use("write_cache", write));
            }
            blocks.push(tool_use(
                "write_cache",
                json!({"cache_type": "dir", "path": dir.to_string_lossy(), "data": {
                    "path": ".", "relative_path": ".", "child_count": files.len(),
                    "dominant_category": "source", "summary": dir_summary(&rel, &files),
                    "confidence": 0.8, "cached_at": "2026-01-01T00:00:00+00:00"
                }}),
            ));
            Reply::blocks(blocks)
        }
        2 => {
            let results = turn.tool_results();
            let retries: Vec<(&str, Value)> = files
                .iter()
                .zip(&results)
                .filter(|(_, result)| result.is_error)
                .map(|((name, size), _)| {
                    (
                        "write_cache",
                        file_write(turn.target, &rel, name, *size, Spelling::WrongFields),
                    )
                })
                .collect();
            if retries.is_empty() {
                report(&rel, &files)
            } else {
                Reply::tool_uses(retries)
            }
        }
        _ => report(&rel, &files),
    }
}

fn report(rel: &str, files: &[(String, u64)]) -> Reply {
    Reply::tool_use(
        "submit_report",
        json!({"summary": dir_summary(rel, files), "completeness": 0.8}),
    )
}

fn cache_of(env: &TestEnv) -> Cache {
    let target = std::fs::canonicalize(env.target()).unwrap();
    let root = CacheRoot::open(env.cache()).unwrap();
    let id = root.investigation_id(&target, false).unwrap();
    assert!(!id.is_new, "no investigation was recorded");
    Cache::open(&root, &id.id, &target).unwrap()
}

/// Every visible file under `target`, relative, with the summary its
/// directory's agent wrote for it.
fn expected_summaries(target: &Path) -> BTreeMap<String, String> {
    let mut expected = BTreeMap::new();
    for dir in walkdir::WalkDir::new(target)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_dir())
    {
        let rel = match dir.path().strip_prefix(target).unwrap() {
            r if r.as_os_str().is_empty() => ".".to_string(),
            r => r.to_string_lossy().into_owned(),
        };
        for (name, _) in visible_files(dir.path()) {
            expected.insert(join(&rel, &name), file_summary(&rel, &name));
        }
    }
    expected
}

/// The file entries of the cache: relative location (from the key) ->
/// (the entry's own `relative_path`, its summary).
fn file_entries(cache: &Cache, target: &Path) -> BTreeMap<String, (String, String)> {
    cache
        .located_entries(EntryKind::File)
        .into_iter()
        .map(|(path, entry)| {
            let rel = path.strip_prefix(target).unwrap().to_string_lossy();
            (
                rel.into_owned(),
                (
                    entry["relative_path"].as_str().unwrap().to_string(),
                    entry["summary"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

fn assert_every_file_has_its_entry(env: &AgentEnv, target: &Path) {
    let expected = expected_summaries(target);
    assert_eq!(expected.len(), 19);
    let cache = cache_of(env);
    let found = file_entries(&cache, target);
    let wanted: BTreeMap<String, (String, String)> = expected
        .into_iter()
        .map(|(rel, summary)| (rel.clone(), (rel, summary)))
        .collect();
    similar_asserts::assert_eq!(found, wanted);
    // Nothing else: no entry keyed by a path that is not a file of the tree.
    assert_eq!(cache.read_all_entries(EntryKind::File).len(), 19);
}

/// The data loss: on a fresh run the root's loop (last, with its own
/// contents "changed") used to delete every file entry whose fields looked
/// like they sat in the root. Now 19 files written means 19 entries, on the
/// first run and on a `--fresh` one, each under its own directory.
#[test]
fn a_fresh_run_keeps_every_file_entry_under_its_own_directory() {
    let env = thirteen_dirs().with_agent(|a| a.every_dir_script(agent_turn));
    let target = std::fs::canonicalize(env.target()).unwrap();
    env.run_ok(&["--jobs=1"]);
    assert_every_file_has_its_entry(&env, &target);

    // The docs loop's bare README.md was refused as ambiguous, then written
    // again under its full path.
    let docs: Vec<_> = env
        .passes()
        .into_iter()
        .filter(|(pass, _)| *pass == Pass::Dir("docs".into()))
        .map(|(_, request)| request)
        .collect();
    let refused: Vec<_> = docs[1]
        .tool_results()
        .into_iter()
        .filter(|r| r.is_error)
        .collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].content.contains("ambiguous"), "{refused:?}");

    // Dir entries name their own directories, whatever the agents wrote, so
    // parents and synthesis see the right headings in the right order.
    let cache = cache_of(&env);
    for (path, entry) in cache.located_entries(EntryKind::Dir) {
        let rel = match path.strip_prefix(&target).unwrap() {
            r if r.as_os_str().is_empty() => ".".to_string(),
            r => r.to_string_lossy().into_owned(),
        };
        assert_eq!(entry["relative_path"], rel.as_str());
        assert_eq!(entry["summary"], dir_summary(&rel, &visible_files(&path)));
    }
    let synthesis = env
        .passes()
        .into_iter()
        .find(|(pass, _)| *pass == Pass::Synthesis)
        .unwrap()
        .1
        .system_text();
    let headings: Vec<&str> = synthesis
        .lines()
        .filter_map(|l| l.strip_prefix("### "))
        .collect();
    assert_eq!(headings.len(), 13, "{synthesis}");
    assert_eq!(headings[0], "./");
    assert!(headings.contains(&"src/net/http/"), "{headings:?}");
    let net = env
        .passes()
        .into_iter()
        .find(|(pass, _)| *pass == Pass::Dir("src/net".into()))
        .unwrap()
        .1
        .prompt_text();
    assert!(
        net.contains("- src/net/http/: Directory src/net/http holds 2 files"),
        "{net}"
    );

    env.run_ok(&["--jobs=1", "--fresh"]);
    assert_every_file_has_its_entry(&env, &target);
}

/// A loop stopped by the context budget salvages a partial summary from the
/// file entries it wrote, however it spelled their paths; its notable files
/// are named by where they are.
#[test]
fn a_partial_entry_finds_files_cached_under_bare_names() {
    let big = PAST_THE_CONTEXT_BUDGET;
    let env = thirteen_dirs().with_agent(|a| {
        a.every_dir_script(agent_turn)
            .dir_script("src/net/http", |turn| {
                let mut write =
                    file_write(turn.target, "src/net/http", "stream.rs", 23, Spelling::Bare);
                write["data"]["notable"] = json!(true);
                Reply::tool_uses([
                    ("write_cache", write),
                    (
                        "write_cache",
                        file_write(turn.target, "src/net/http", "client.rs", 19, Spelling::Bare),
                    ),
                ])
            })
            .usage(Pass::Dir("src/net/http".into()), big)
    });
    let target: PathBuf = std::fs::canonicalize(env.target()).unwrap();
    env.run_ok(&["--jobs=1", "--fresh"]);
    let cache = cache_of(&env);
    let entry = cache
        .read_entry(
            EntryKind::Dir,
            &target.join("src/net/http").to_string_lossy(),
        )
        .expect("a partial entry");
    assert_eq!(entry["partial"], true);
    assert_eq!(
        entry["summary"],
        format!(
            "{} {}",
            file_summary("src/net/http", "client.rs"),
            file_summary("src/net/http", "stream.rs")
        )
    );
    assert_eq!(entry["notable_files"], json!(["src/net/http/stream.rs"]));
    assert_every_file_has_its_entry(&env, &target);
}
