//! A cache written by an earlier luminos still reads: the investigation of
//! the seven-directory project that the build of main before the one
//! conversation engine (commit 6c2caed) wrote against the mock Messages
//! API, kept in `tests/fixtures/cache_from_0_main/`, is loaded by today's
//! binary, which sends no request and reports what that build reported.
//!
//! The fixture was made by running that build on
//! [`TestEnv::with_deep_project`] (every file's time set to
//! [`FIXTURE_MTIME`], so the fingerprints match again here) with the
//! default mock agent and two flags, then putting `@TARGET@` for the
//! target's path (`origin.txt` keeps what it was) and `@ID@` for the
//! investigation's id. Entries are keyed by the hash of their absolute
//! path, so they are renamed for the target they land under; and the saved
//! verdict's digest covers the entries as stored, paths included, so it is
//! computed again for that target, by the formula the test first checks
//! against the digest the old build saved.

use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::support;
use support::TestEnv;
use support::agent::Pass;
use support::snapshot::snapshot;

/// The time every file of the fixture's tree had (2026-01-01T00:00:00Z).
const FIXTURE_MTIME: u64 = 1_767_225_600;
/// The investigation's id in the copy.
const ID: &str = "0b1dcafe-0000-4000-8000-000000000001";

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cache_from_0_main")
}

fn placed(text: &str, target: &str) -> String {
    text.replace("@TARGET@", target).replace("@ID@", ID)
}

/// Copy the fixture's cache under `root` for `target`, each entry under
/// the key of the path it names.
fn place_cache(root: &Path, target: &str) {
    let from = fixture().join("cache");
    for entry in walkdir::WalkDir::new(&from) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(&from).unwrap();
        let rel = Path::new(&placed(&rel.to_string_lossy(), target)).to_path_buf();
        let rel = if rel.starts_with("investigation") {
            Path::new(ID).join(rel.strip_prefix("investigation").unwrap())
        } else {
            rel
        };
        let mut to = root.join(&rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
            continue;
        }
        let text = placed(&std::fs::read_to_string(entry.path()).unwrap(), target);
        let in_entries = rel
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|dir| dir == "dirs" || dir == "files");
        if in_entries {
            let stored: Value = serde_json::from_str(&text).unwrap();
            let path = stored["path"].as_str().unwrap();
            let key = hex(&Sha256::digest(path.as_bytes()));
            to.set_file_name(format!("{key}.json"));
        }
        std::fs::write(&to, text).unwrap();
    }
    let saved = root.join(ID).join("synthesis.json");
    let mut synthesis: Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    let dirs = fixture().join("cache/investigation/dirs");
    let origin = std::fs::read_to_string(fixture().join("origin.txt")).unwrap();
    assert_eq!(
        synthesis["entries_digest"],
        entries_digest(&dirs, &origin),
        "the digest's formula is the one the old build saved"
    );
    synthesis["entries_digest"] = Value::from(entries_digest(&dirs, target));
    std::fs::write(&saved, synthesis.to_string()).unwrap();
}

/// The digest a synthesis saves of the dir entries it read: each stored
/// entry's compact JSON and a newline, top-down (by depth, then path).
fn entries_digest(dirs: &Path, target: &str) -> String {
    let mut entries: Vec<Value> = std::fs::read_dir(dirs)
        .unwrap()
        .map(|file| {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            serde_json::from_str(&placed(&text, target)).unwrap()
        })
        .collect();
    let depth = |entry: &Value| match entry["relative_path"].as_str().unwrap() {
        "." => (0, String::new()),
        rel => (rel.matches('/').count() + 1, rel.to_string()),
    };
    entries.sort_by_key(depth);
    let mut hasher = Sha256::new();
    for entry in &entries {
        hasher.update(serde_json::to_string(entry).unwrap().as_bytes());
        hasher.update(b"\n");
    }
    hex(&hasher.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[test]
fn a_cache_written_by_the_main_before_the_engine_loads_without_a_request() {
    let env = TestEnv::with_deep_project();
    env.set_mtimes(FIXTURE_MTIME);
    let env = env.with_mock();
    let target = std::fs::canonicalize(env.target()).unwrap();
    let target = target.to_string_lossy();
    std::fs::create_dir_all(env.cache()).unwrap();
    place_cache(env.cache(), &target);

    let output = env.run_ok(&["--json"]);
    assert_eq!(
        env.server.request_count(),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let then: Value = serde_json::from_str(&placed(
        &std::fs::read_to_string(fixture().join("report.json")).unwrap(),
        &target,
    ))
    .unwrap();
    for key in ["ai_brief", "ai_detailed", "flags", "directories"] {
        assert_eq!(report[key], then[key], "{key}");
    }
    assert_eq!(report["investigation"]["directories_cached"], 7);
    assert_eq!(report["investigation"]["status"], "complete");

    // A question reads the same cache (its prompt names the investigation
    // and quotes its verdict) and leaves it as it was.
    let before = snapshot(env.cache());
    let asked = env
        .cmd()
        .args(["ask", "--json"])
        .arg(env.target())
        .arg("What is this?")
        .output()
        .unwrap();
    assert!(
        asked.status.success(),
        "{}",
        String::from_utf8_lossy(&asked.stderr)
    );
    let answer: Value = serde_json::from_slice(&asked.stdout).unwrap();
    assert!(answer.get("note").is_none(), "{answer}");
    let sent = env.requests_of(&Pass::Ask);
    let system = sent[0].body["system"].to_string();
    assert!(
        system.contains(&format!("was investigated (investigation {ID})")),
        "{system}"
    );
    assert!(
        system.contains(then["ai_brief"].as_str().unwrap()),
        "{system}"
    );
    assert_eq!(snapshot(env.cache()), before);
}
