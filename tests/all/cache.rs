//! The cache under concurrency and crashes: many threads and processes
//! updating `investigations.json`, writers killed mid-write, run locks held by
//! another process.
//!
//! Child processes are this test binary re-executed with `CHILD_ROLE` set:
//! the `child_entry_point` test does the child's work and is a no-op in a
//! normal run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use luminos::cache::{Cache, CacheError, CacheRoot, EntryKind, clear_cache};
use luminos::report::Flag;
use serde_json::{Value, json};

const ROLE: &str = "LUMINOS_CACHE_TEST_CHILD_ROLE";
const ROOT: &str = "LUMINOS_CACHE_TEST_CHILD_ROOT";
const NAME: &str = "LUMINOS_CACHE_TEST_CHILD_NAME";

/// Registered targets per writer (thread or process).
const TARGETS_PER_WRITER: usize = 12;

fn spawn_child(role: &str, root: &Path, name: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "cache::child_entry_point",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role)
        .env(ROOT, root)
        .env(NAME, name)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

#[test]
fn child_entry_point() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let root = PathBuf::from(std::env::var(ROOT).unwrap());
    let name = std::env::var(NAME).unwrap();
    match role.as_str() {
        "register" => register_targets(&root, &name),
        "write-forever" => write_forever(&root, &name),
        "hold-lock" => hold_lock(&root, &name),
        "append" => append_lines(&root, &name),
        other => panic!("unknown child role {other}"),
    }
}

/// Register `TARGETS_PER_WRITER` targets and write down which id each got.
/// Run `work(root, "thread<n>")` on `count` threads at once and wait for
/// them all.
fn on_threads(count: usize, root: &Path, work: fn(&Path, &str)) {
    let threads: Vec<_> = (0..count)
        .map(|n| {
            let root = root.to_path_buf();
            std::thread::spawn(move || work(&root, &format!("thread{n}")))
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
}

fn register_targets(root: &Path, name: &str) {
    let cache_root = CacheRoot::open(root).unwrap();
    let mut got = BTreeMap::new();
    for i in 0..TARGETS_PER_WRITER {
        let target = format!("/targets/{name}/{i}");
        let id = cache_root
            .investigation_id(Path::new(&target), false)
            .unwrap();
        assert!(id.is_new && id.warnings.is_empty(), "{id:?}");
        got.insert(target, id.id);
    }
    let report = markers(root).join(format!("{name}.report"));
    std::fs::write(report, serde_json::to_string(&got).unwrap()).unwrap();
}

/// Write entries, documents, flags and index updates until killed.
fn write_forever(root: &Path, name: &str) {
    let target = Path::new("/targets/crash").join(name);
    let cache_root = CacheRoot::open(root).unwrap();
    let id = cache_root.investigation_id(&target, false).unwrap();
    let cache = Cache::open(&cache_root, &id.id, &target).unwrap();
    cache.write_meta("model", "start").unwrap();
    // Big enough that a write takes more than one syscall's worth of bytes.
    let summary = "x".repeat(200_000);
    for i in 0u64.. {
        let rel = format!("f{}", i % 7);
        let entry = json!({
            "path": target.join(&rel), "relative_path": rel, "size_bytes": i,
            "category": "source", "summary": summary, "cached_at": i.to_string(),
        });
        cache.write_entry(EntryKind::File, &rel, &entry).unwrap();
        cache
            .write_json("plan.json", &json!({"round": i, "notes": summary}))
            .unwrap();
        let mut fields = serde_json::Map::new();
        fields.insert("total_turns".into(), json!(i));
        cache.update_meta(fields).unwrap();
        cache
            .append_flag(&Flag::new(rel.clone(), &summary[..5000], "info"))
            .unwrap();
        cache.log_tool_call(".", 1, "read_file", &json!({"path": rel}), 1);
        cache_root
            .investigation_id(&target.join(format!("t{i}")), false)
            .unwrap();
        if i == 0 {
            std::fs::write(markers(root).join(format!("{name}.started")), "").unwrap();
        }
    }
}

/// Flags and log lines per appender in the interleaving test.
const LINES_PER_APPENDER: usize = 40;

/// Append big flags and log lines to the shared investigation
/// `/targets/shared`.
fn append_lines(root: &Path, name: &str) {
    let target = Path::new("/targets/shared");
    let cache_root = CacheRoot::open(root).unwrap();
    let id = cache_root.investigation_id(target, false).unwrap();
    let cache = Cache::open(&cache_root, &id.id, target).unwrap();
    // Larger than a pipe buffer and than most page sizes.
    let finding = format!("{name}:{}", "y".repeat(100_000));
    for i in 0..LINES_PER_APPENDER {
        cache
            .append_flag(&Flag::new(
                format!("{name}/{i}"),
                finding.clone(),
                "concern",
            ))
            .unwrap();
        cache.log_tool_call(name, i as u32, "read_file", &json!({"path": finding}), i);
    }
}

fn hold_lock(root: &Path, name: &str) {
    let cache_root = CacheRoot::open(root).unwrap();
    let _lock = cache_root.lock_run(Path::new(name), false).unwrap();
    std::fs::write(markers(root).join("holder.started"), "").unwrap();
    std::thread::sleep(Duration::from_secs(60));
}

/// Where children leave reports and "started" markers: beside the cache
/// root, never inside it (the root must hold only what luminos writes).
fn markers(root: &Path) -> PathBuf {
    root.parent().unwrap().to_path_buf()
}

fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn index_of(root: &Path) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(root.join("investigations.json")).unwrap();
    match serde_json::from_str(&text).unwrap() {
        Value::Object(map) => map,
        other => panic!("index is not an object: {other}"),
    }
}

#[test]
fn concurrent_threads_and_processes_lose_no_index_entry() {
    let tmp = crate::support::fs::temp_dir("luminos-cache-test-");
    let root = tmp.path().join("cache");
    CacheRoot::open(&root).unwrap();

    let children: Vec<(String, Child)> = (0..4)
        .map(|n| {
            let name = format!("proc{n}");
            let child = spawn_child("register", &root, &name);
            (name, child)
        })
        .collect();
    on_threads(4, &root, register_targets);
    let mut names: Vec<String> = (0..4).map(|n| format!("thread{n}")).collect();
    for (name, mut child) in children {
        assert!(child.wait().unwrap().success(), "{name} failed");
        names.push(name);
    }

    let index = index_of(&root);
    assert_eq!(index.len(), names.len() * TARGETS_PER_WRITER);
    for name in names {
        let report =
            std::fs::read_to_string(markers(&root).join(format!("{name}.report"))).unwrap();
        let got: BTreeMap<String, String> = serde_json::from_str(&report).unwrap();
        for (target, id) in got {
            assert_eq!(index[&target], id.as_str(), "{target}");
        }
    }
}

#[test]
fn concurrent_appenders_never_interleave_lines() {
    let tmp = crate::support::fs::temp_dir("luminos-cache-test-");
    let root = tmp.path().join("cache");
    let cache_root = CacheRoot::open(&root).unwrap();
    let target = Path::new("/targets/shared");
    let id = cache_root.investigation_id(target, false).unwrap();
    let cache = Cache::open(&cache_root, &id.id, target).unwrap();

    let children: Vec<Child> = (0..3)
        .map(|n| spawn_child("append", &root, &format!("proc{n}")))
        .collect();
    on_threads(3, &root, append_lines);
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }

    let expected = 6 * LINES_PER_APPENDER;
    let flags_text = std::fs::read_to_string(cache.dir().join("flags.jsonl")).unwrap();
    assert_eq!(flags_text.lines().count(), expected);
    let flags = cache.read_flags();
    assert_eq!(flags.len(), expected);
    for flag in &flags {
        let writer = flag.path.split('/').next().unwrap();
        assert!(
            flag.finding.starts_with(&format!("{writer}:")),
            "{}",
            flag.path
        );
    }
    let log = std::fs::read_to_string(cache.dir().join("investigation.log")).unwrap();
    assert_eq!(log.lines().count(), expected);
    assert_all_json_parses(&root, false);
}

/// Every `*.json` under `dir` parses; every JSONL line parses, except that
/// when writers were killed (`killed`) a file's last line may be cut short
/// and then lacks its newline: an append is one `write()`, which the kernel
/// may stop at a page boundary when a SIGKILL arrives.
fn assert_all_json_parses(dir: &Path, killed: bool) -> usize {
    let mut checked = 0;
    for entry in walkdir::WalkDir::new(dir) {
        let entry = entry.unwrap();
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy();
        if name.ends_with(".json") {
            let bytes = std::fs::read(path).unwrap();
            serde_json::from_slice::<Value>(&bytes)
                .unwrap_or_else(|err| panic!("{} does not parse: {err}", path.display()));
            checked += 1;
        } else if name.ends_with(".jsonl") || name.ends_with(".log") {
            let bytes = std::fs::read(path).unwrap();
            let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
            // What follows the last newline: nothing, or a torn line.
            let tail = lines.pop().unwrap_or_default();
            assert!(
                killed || tail.is_empty(),
                "{} ends with a torn line",
                path.display()
            );
            for line in lines {
                serde_json::from_slice::<Value>(line)
                    .unwrap_or_else(|err| panic!("{} has a torn line: {err}", path.display()));
            }
            checked += 1;
        }
    }
    checked
}

/// Writers killed in [`a_killed_writer_never_leaves_unparsable_json`].
const ROUNDS: usize = 10;

#[test]
fn a_killed_writer_never_leaves_unparsable_json() {
    let tmp = crate::support::fs::temp_dir("luminos-cache-test-");
    let root = tmp.path().join("cache");
    CacheRoot::open(&root).unwrap();
    // Varied kill points (seeded, so a failure replays); a non-atomic
    // writer fails this within a few rounds.
    let mut rng = fastrand::Rng::with_seed(0xCA5E_D1ED);
    for round in 0..ROUNDS {
        let delay_ms = rng.u64(0..250);
        let name = format!("writer{round}");
        let mut child = spawn_child("write-forever", &root, &name);
        wait_for(&markers(&root).join(format!("{name}.started")));
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // At least investigations.json and meta.json.
        assert!(assert_all_json_parses(&root, true) >= 2);
    }
    // The killed runs resume: their ids are still in the index and their
    // entries read back.
    let index = index_of(&root);
    let root_handle = CacheRoot::open(&root).unwrap();
    for round in 0..ROUNDS {
        let target = PathBuf::from(format!("/targets/crash/writer{round}"));
        let resumed = root_handle.investigation_id(&target, false).unwrap();
        assert!(!resumed.is_new);
        assert_eq!(index[target.to_str().unwrap()], resumed.id.as_str());
        let cache = Cache::open(&root_handle, &resumed.id, &target).unwrap();
        assert!(cache.read_json("meta.json").is_some());
        assert!(!cache.list_entries(EntryKind::File).is_empty());
    }
}

#[test]
fn a_run_lock_held_by_another_process_names_it_and_dies_with_it() {
    let tmp = crate::support::fs::temp_dir("luminos-cache-test-");
    let root = tmp.path().join("cache");
    let cache_root = CacheRoot::open(&root).unwrap();
    let target = "/targets/locked";
    let mut child = spawn_child("hold-lock", &root, target);
    wait_for(&markers(&root).join("holder.started"));

    match cache_root.lock_run(Path::new(target), false) {
        Err(CacheError::Busy { pid }) => assert_eq!(pid, child.id()),
        other => panic!("expected Busy, got {other:?}"),
    }
    let message = cache_root
        .lock_run(Path::new(target), false)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains(&format!("pid {}", child.id())),
        "{message}"
    );
    let busy = clear_cache(&root).unwrap_err().to_string();
    assert!(
        busy.contains(&format!(
            "(pid {}) is using it to investigate {target}",
            child.id()
        )),
        "{busy}"
    );

    // A waiting run gets the lock once the holder dies.
    let waiter = {
        let cache_root = cache_root.clone();
        std::thread::spawn(move || cache_root.lock_run(Path::new(target), true).map(|_| ()))
    };
    std::thread::sleep(Duration::from_millis(100));
    assert!(!waiter.is_finished());
    child.kill().unwrap();
    child.wait().unwrap();
    waiter.join().unwrap().unwrap();
    cache_root.lock_run(Path::new(target), false).unwrap();
}

#[test]
fn a_corrupt_index_is_a_warning_not_a_failure() {
    let tmp = crate::support::fs::temp_dir("luminos-cache-test-");
    let root = tmp.path().join("cache");
    let cache_root = CacheRoot::open(&root).unwrap();
    std::fs::write(root.join("investigations.json"), "{ not json").unwrap();
    let id = cache_root
        .investigation_id(Path::new("/targets/a"), false)
        .unwrap();
    assert!(id.is_new);
    assert_eq!(id.warnings.len(), 1);
    assert!(!id.warnings[0].contains('\n'));
    // Repaired: the next call is quiet and resumes once the directory exists.
    Cache::open(&cache_root, &id.id, Path::new("/targets/a")).unwrap();
    let again = cache_root
        .investigation_id(Path::new("/targets/a"), false)
        .unwrap();
    assert_eq!((again.id.as_str(), again.is_new), (id.id.as_str(), false));
    assert!(again.warnings.is_empty());
}

mod keys {
    use super::*;
    use proptest::prelude::*;

    /// Relative paths built from ordinary names, `.`, `..` and doubled or
    /// trailing slashes.
    fn spelling() -> impl Strategy<Value = String> {
        let part = prop_oneof![
            4 => "[a-z]{1,4}",
            1 => Just(".".to_string()),
            1 => Just("..".to_string()),
            1 => Just(String::new()),
        ];
        (prop::collection::vec(part, 1..6), any::<bool>()).prop_map(|(parts, trailing)| {
            let mut path = parts.join("/");
            if trailing {
                path.push('/');
            }
            path
        })
    }

    /// One cache for every case: keys depend only on the target path.
    fn shared_cache() -> (&'static PathBuf, &'static Cache) {
        static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
        static SHARED: std::sync::OnceLock<(PathBuf, Cache)> = std::sync::OnceLock::new();
        let (target, cache) = SHARED.get_or_init(|| {
            let tmp = crate::support::fs::shared_dir(&DIR, "luminos-cache-keys-", |_| {});
            let target = tmp.join("srv/app");
            let root = CacheRoot::open(&tmp.join("cache")).unwrap();
            let id = uuid::Uuid::new_v4().to_string();
            let cache = Cache::open(&root, &id, &target).unwrap();
            (target, cache)
        });
        (target, cache)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Relative and absolute spellings of one path give one key.
        #[test]
        fn relative_and_absolute_spellings_share_a_key(rel in spelling()) {
            // A leading empty part would make the spelling absolute.
            prop_assume!(!rel.starts_with('/'));
            let (target, cache) = shared_cache();

            let absolute = format!("{}/{rel}", target.display());
            let key = cache.entry_key(&rel);
            let dotted = if rel.is_empty() { ".".to_string() } else { format!("{rel}/.") };
            prop_assert_eq!(&cache.entry_key(&dotted), &key);
            prop_assert_eq!(&cache.entry_key(&absolute), &key);
            prop_assert_eq!(&cache.entry_key(&format!("./{rel}")), &key);
            let normalized = cache.absolute_entry_path(&rel);
            prop_assert!(normalized.is_absolute());
            prop_assert_eq!(&cache.entry_key(normalized.to_str().unwrap()), &key);
        }
    }
}
