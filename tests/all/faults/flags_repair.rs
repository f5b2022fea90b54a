//! No finding is lost to a damaged `flags.jsonl`: the next run repairs it
//! from the flags' own records, and the report says so.

use super::*;

use luminos::cache::{Cache, CacheRoot};
use support::output::field_pairs;

fn flags_file(env: &TestEnv) -> std::path::PathBuf {
    let target = std::fs::canonicalize(env.target()).unwrap();
    let root = CacheRoot::open(env.cache()).unwrap();
    let id = root.investigation_id(&target, false).unwrap();
    Cache::open(&root, &id.id, &target)
        .unwrap()
        .dir()
        .join("flags.jsonl")
}

/// Paths and severities of the report's flags, sorted.
fn flags_of(report: &Value) -> Vec<(&str, &str)> {
    let mut flags = field_pairs(&report["flags"], "path", "severity");
    flags.sort();
    flags
}

/// Four flags, two critical; `flags.jsonl` is cut in half between runs.
/// The resumed run (no request: nothing changed) reports all four and says
/// the file was repaired; the file is whole again.
#[test]
fn a_truncated_flags_file_loses_no_finding() {
    let env = TestEnv::with_small_project().with_agent(|agent| {
        agent.flags(&[
            (
                "src/core",
                "src/core/engine.rs",
                "critical",
                "Runs unchecked input.",
            ),
            ("src/core", "src/core/model.rs", "concern", "No validation."),
            ("docs", "docs/guide.md", "critical", "Publishes a password."),
            ("src", "src/main.rs", "info", "The entry point."),
        ])
    });
    let first = json_report(&env.run_ok(&["--json"]));
    let flags = flags_of(&first);
    assert_eq!(flags.len(), 4, "{flags:?}");
    let path = flags_file(&env);
    let whole = std::fs::read(&path).unwrap();
    std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();

    let out = env.run_ok_from_cache(&["--json"], "the investigation");
    let report = json_report(&out);
    assert_eq!(flags_of(&report), flags);
    let note = report["investigation"]["note"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("flags.jsonl was damaged and has been repaired"),
        "{}",
        report["investigation"]
    );
    assert_eq!(report["investigation"]["status"], "complete");
    let err = stderr(&out);
    assert!(err.contains("Warning: flags.jsonl was damaged"), "{err}");
    assert_eq!(
        std::fs::read(&path).unwrap().len(),
        whole.len(),
        "repaired in place"
    );

    // Once repaired, nothing more is said.
    let out = env.run_ok(&[]);
    assert!(
        stdout(&out).contains("Investigation complete."),
        "{}",
        stdout(&out)
    );

    // A line no record accounts for may have been a finding: the
    // investigation is partial, and says so.
    let mut damaged = std::fs::read(&path).unwrap();
    damaged.extend_from_slice(b"{\"path\": \"src/lost.rs\", \"find\n");
    std::fs::write(&path, damaged).unwrap();
    let out = env.run_ok(&[]);
    let report = stdout(&out);
    assert!(
        support::output::squashed(&report).contains(
            "Investigation partial: flags.jsonl was damaged and has been repaired: 0 flags \
             restored from their records; 1 unreadable line could not be recovered"
        ),
        "{report}"
    );
}
