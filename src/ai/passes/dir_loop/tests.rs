use std::path::Path;

use super::briefing::{LEAF_PLACEHOLDER, UNINVESTIGATED_PLACEHOLDER};
use super::entries::{
    INCOMPLETE_REASON, INCOMPLETE_SUMMARY, TURN_LIMIT_STUB_REASON, TURN_LIMIT_SUMMARY,
    build_partial_entry,
};
use super::*;
use crate::cache::{DirEntry, FileEntry};
use serde_json::json;

const T: &str = "/w/proj";

fn entry(rel: &str, summary: &str) -> DirEntry {
    DirEntry::from_value(json!({"relative_path": rel, "summary": summary})).unwrap()
}

fn file(value: Value) -> FileEntry {
    FileEntry::from_value(value).unwrap()
}

/// An entry as the cache writes it.
fn json_of(entry: &DirEntry) -> Value {
    serde_json::to_value(entry).unwrap()
}

#[test]
fn child_summaries_and_both_placeholders() {
    assert_eq!(render_child_summaries(&[]), LEAF_PLACEHOLDER);
    assert_eq!(
        render_child_summaries(&[("child".into(), None)]),
        UNINVESTIGATED_PLACEHOLDER
    );
    assert_ne!(LEAF_PLACEHOLDER, UNINVESTIGATED_PLACEHOLDER);
    let rendered = render_child_summaries(&[
        (
            "auth".into(),
            Some(entry("src/auth", "Login and sessions.")),
        ),
        ("db".into(), None),
        ("web".into(), Some(DirEntry::default())),
    ]);
    assert_eq!(
        rendered,
        "- src/auth/: Login and sessions.\n- web/: (no summary)"
    );
}

#[test]
fn completeness_follows_the_original() {
    assert_eq!(report_completeness(&json!({"summary": "s"})), Some(0.0));
    assert_eq!(
        report_completeness(&json!({"completeness": 0.75})),
        Some(0.75)
    );
    assert_eq!(
        report_completeness(&json!({"completeness": null})),
        Some(0.0)
    );
    assert_eq!(report_completeness(&json!({"completeness": "high"})), None);
    assert_eq!(report_completeness(&json!({"completeness": 3})), Some(1.0));
}

#[test]
fn report_entry_shape() {
    let t = Path::new(T);
    let e = report_entry(t, &t.join("src"), "Core.", Some(0.9), 4, "now");
    assert_eq!(
        json_of(&e),
        json!({
            "path": "/w/proj/src", "relative_path": "src", "child_count": 4,
            "summary": "Core.", "dominant_category": "unknown", "notable_files": [],
            "cached_at": "now", "completeness": 0.9
        })
    );
    let root = report_entry(t, t, "Root.", None, 0, "now");
    assert_eq!(root.relative_path, ".");
    assert!(json_of(&root).get("completeness").is_none());
}

/// Attribution goes by the path an entry is keyed by; the fields inside it
/// are the agent's words and may name anything.
#[test]
fn direct_files_only() {
    let t = Path::new(T);
    let dir = t.join("sub");
    let at = |rel: &str, summary: &str, fields: Value| {
        let mut entry = file(fields);
        entry.summary = summary.to_string();
        (t.join(rel), entry)
    };
    let located = vec![
        at(
            "sub/b.py",
            "B",
            json!({"path": "b.py", "relative_path": "b.py"}),
        ),
        at("sub/a.py", "A", json!({"relative_path": "sub/a.py"})),
        at("sub/c.py", "C", json!({"path": "/elsewhere/c.py"})),
        at("sub/deeper/d.py", "D", json!({"relative_path": "sub/d.py"})),
        at("e.py", "E", json!({"relative_path": "sub/e.py"})),
        at("sub", "the dir itself is not a file in it", json!({})),
    ];
    let direct: Vec<(&Path, &str)> = direct_file_entries(&dir, &located)
        .into_iter()
        .map(|(path, e)| (path, e.summary.as_str()))
        .collect();
    assert_eq!(
        direct,
        [
            (dir.join("a.py").as_path(), "A"),
            (dir.join("b.py").as_path(), "B"),
            (dir.join("c.py").as_path(), "C")
        ]
    );
}

#[test]
fn partial_entry_from_cached_files() {
    let t = Path::new(T);
    let dir = t.join("sub");
    let a = file(json!({"summary": "prints x"}));
    // The notable file is named by its location, not by its fields.
    let b = file(json!({"relative_path": "b.py", "summary": "important thing", "notable": true}));
    let c = file(json!({"summary": ""}));
    let (pa, pb, pc) = (dir.join("a.py"), dir.join("b.py"), dir.join("c.bin"));
    let files = [(pa.as_path(), &a), (pb.as_path(), &b), (pc.as_path(), &c)];
    let (e, summary) = build_partial_entry(t, &dir, &files, 3, "now", PartialCause::ContextFull);
    assert_eq!(summary, "prints x important thing");
    assert_eq!(
        json_of(&e),
        json!({
            "path": "/w/proj/sub", "relative_path": "sub", "child_count": 3,
            "summary": "prints x important thing", "dominant_category": "unknown",
            "notable_files": ["sub/b.py"], "partial": true,
            "partial_reason": "context budget reached", "cached_at": "now"
        })
    );
}

#[test]
fn incomplete_stub_without_files() {
    let t = Path::new(T);
    let (e, summary) =
        build_partial_entry(t, &t.join("sub"), &[], 7, "now", PartialCause::ContextFull);
    assert_eq!(summary, "");
    assert!(e.partial);
    assert_eq!(e.child_count, 0);
    assert_eq!(e.summary, INCOMPLETE_SUMMARY);
    assert_eq!(e.partial_reason.as_deref(), Some(INCOMPLETE_REASON));
    assert!(INCOMPLETE_REASON.contains("before files processed"));
}

#[test]
fn turn_limit_partials_say_so() {
    let t = Path::new(T);
    let a = file(json!({"summary": "prints x"}));
    let pa = t.join("sub/a.py");
    let (e, summary) = build_partial_entry(
        t,
        &t.join("sub"),
        &[(pa.as_path(), &a)],
        1,
        "now",
        PartialCause::TurnLimit,
    );
    assert_eq!(summary, "prints x");
    assert_eq!(e.partial_reason.as_deref(), Some("turn limit reached"));
    let (stub, _) = build_partial_entry(t, &t.join("sub"), &[], 1, "now", PartialCause::TurnLimit);
    assert_eq!(stub.summary, TURN_LIMIT_SUMMARY);
    assert_eq!(stub.partial_reason.as_deref(), Some(TURN_LIMIT_STUB_REASON));
}

#[test]
fn the_turns_left_note_counts_down() {
    assert!(turns_left_note(2).starts_with("[luminos] 2 turns left"));
    assert!(turns_left_note(1).starts_with("[luminos] 1 turn left"));
    assert!(turns_left_note(1).contains("submit_report"));
}

#[test]
fn visible_children_are_counted() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a"), "x").unwrap();
    std::fs::write(tmp.path().join(".hidden"), "x").unwrap();
    std::fs::create_dir(tmp.path().join("d")).unwrap();
    assert_eq!(visible_child_count(tmp.path()), 2);
    assert_eq!(visible_child_count(&tmp.path().join("missing")), 0);
}

/// A scheduler must be able to spawn dir loops on a multi-threaded runtime:
/// this only compiles while the loop's future is `Send` and the shared
/// context `Sync`.
#[allow(dead_code)]
fn dir_loops_can_be_spawned(shared: std::sync::Arc<DirShared>, job: DirJob) {
    fn spawnable<T: Send + 'static>(_: T) {}
    fn shareable<T: Send + Sync>() {}
    shareable::<DirShared>();
    spawnable(async move { investigate_dir(&shared, &job).await.ok() });
}

#[test]
fn a_loop_expects_what_the_loops_below_it_took_or_the_prior() {
    let lengths = LoopLengths::default();
    let t = Path::new("/t");
    assert_eq!(lengths.expected_below(t), [PRIOR_LOOP_TURNS as u32]);
    lengths.ended(&t.join("a/x"), 2);
    lengths.ended(&t.join("b"), 5);
    lengths.ended(&t.join("a"), 4);
    // A loop's own length and its siblings' do not count.
    assert_eq!(lengths.expected_below(&t.join("a")), [2]);
    assert_eq!(
        lengths.expected_below(&t.join("a/x")),
        [PRIOR_LOOP_TURNS as u32]
    );
    assert_eq!(lengths.expected_below(t), [4, 2, 5]);
}
