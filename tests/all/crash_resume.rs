//! Crash and resume: SIGKILL the binary at chosen points of an investigation
//! (while it waits on a given API request, and at random instants while it
//! writes dozens of cache entries and flags), check after every kill that
//! everything it left on disk still reads, then resume to completion and
//! compare the cache with an uninterrupted run's.
//!
//! Kill points are found by the mock, not by sleeping: the responder signals
//! the test when the chosen request arrives and holds its reply until the
//! process is dead, so the process is killed exactly there. Only the
//! mid-write kills use (seeded) delays, counted from the request whose reply
//! carries the writes.

use crate::support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::agent::{AgentEnv, MockAgent, Pass};
use support::entries::{Entries, all_dirs, cache_entries, investigation_dir, module_tree};
use support::gate::{Gate, OpenOnDrop};

/// How long a run may take to reach its kill point.
const DEADLINE: Duration = Duration::from_secs(30);

/// When to kill a run.
#[derive(Debug, Clone)]
enum KillAt {
    /// When the `n`-th request (0-based, counted within this run) of this
    /// pass kind arrives.
    Nth { pass: PassKind, n: usize },
    /// Once `investigation.log` holds `calls` more tool calls of directory
    /// `dir` than when this run began (a line is logged per call, right after
    /// it): inside that loop's writes.
    Logged { dir: String, calls: usize },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PassKind {
    Survey,
    Planning,
    Dir,
    Synthesis,
}

fn kind(pass: &Pass) -> PassKind {
    match pass {
        Pass::Survey => PassKind::Survey,
        Pass::Planning => PassKind::Planning,
        Pass::Dir(_) => PassKind::Dir,
        Pass::Synthesis => PassKind::Synthesis,
        Pass::Ask | Pass::Refine => panic!("{pass:?} in a plain run"),
    }
}

/// What one run asked for.
#[derive(Default)]
struct RunLog {
    /// Directories whose loop sent at least one request.
    dirs: BTreeSet<String>,
}

/// The binary on `env`'s target with `cache_root`, spawned.
fn spawn(env: &AgentEnv, cache_root: &Path, jobs: &[&str]) -> Child {
    let mut cmd = env.bare_cmd();
    cmd.env("ANTHROPIC_API_KEY", "test-key")
        .env("LUMINOS_CACHE_DIR", cache_root)
        .args(jobs)
        .arg(env.target())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd.spawn().expect("spawn luminos")
}

fn sigkill(child: &mut Child) {
    // SAFETY: kill(2) on our own child's pid, which is not reaped yet.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
    assert_eq!(rc, 0, "kill: {}", std::io::Error::last_os_error());
    let status = child.wait().unwrap();
    assert!(!status.success(), "the run ended before it was killed");
}

/// Answer as `agent`, recording the run's dir loops; signal `hit` when the
/// kill point arrives and, for [`KillAt::Nth`], hold that reply until the
/// returned gate opens.
fn serve(
    env: &AgentEnv,
    agent: MockAgent,
    kill: Option<KillAt>,
) -> (Arc<Mutex<RunLog>>, mpsc::Receiver<()>, Gate) {
    let target = agent.target().to_path_buf();
    let log = Arc::new(Mutex::new(RunLog::default()));
    let (hit, hits) = mpsc::channel();
    let hit = Mutex::new(hit);
    let released = Gate::default();
    let counts: [AtomicUsize; 4] = Default::default();
    let fired = AtomicBool::new(false);
    let (record, release) = (log.clone(), released.clone());
    env.server.respond_with(move |request| {
        let pass = Pass::of(&request.body, &target);
        let seen = counts[kind(&pass) as usize].fetch_add(1, Ordering::SeqCst);
        if let Pass::Dir(dir) = &pass {
            record.lock().unwrap().dirs.insert(dir.clone());
        }
        let hold = match &kill {
            Some(KillAt::Nth { pass: want, n }) => *want == kind(&pass) && seen == *n,
            Some(KillAt::Logged { .. }) | None => false,
        };
        if hold && !fired.swap(true, Ordering::SeqCst) {
            let _ = hit.lock().unwrap().send(());
            release.wait(DEADLINE);
        }
        agent.reply(&request.body)
    });
    (log, hits, released)
}

/// Run once on `cache_root`: killed at `kill`, or to completion (asserting
/// success) when `kill` is `None`. Returns the directories whose loops ran.
fn run_once(
    env: &AgentEnv,
    agent: MockAgent,
    cache_root: &Path,
    jobs: &[&str],
    kill: Option<KillAt>,
) -> BTreeSet<String> {
    let (log, hits, released) = serve(env, agent, kill.clone());
    let _release = OpenOnDrop(released);
    let logged_before = match &kill {
        Some(KillAt::Logged { dir, .. }) => logged_calls(cache_root, dir),
        _ => 0,
    };
    let mut child = spawn(env, cache_root, jobs);
    match &kill {
        None => {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "resumed run failed: {}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Some(point) => {
            let until = Instant::now() + DEADLINE;
            let reached = || match point {
                KillAt::Nth { .. } => hits.recv_timeout(Duration::from_millis(20)).is_ok(),
                KillAt::Logged { dir, calls } => {
                    // Poll gently: the machine's cores are the run's too.
                    std::thread::sleep(Duration::from_micros(300));
                    logged_calls(cache_root, dir) >= logged_before + calls
                }
            };
            while !reached() {
                if let Some(status) = child.try_wait().unwrap() {
                    panic!("the run ended ({status}) before reaching {point:?}");
                }
                assert!(Instant::now() < until, "never reached {point:?}");
            }
            sigkill(&mut child);
        }
    }
    log.lock().unwrap().dirs.clone()
}

/// Tool calls of directory `dir` (relative) in the investigation's
/// `investigation.log` (0 before it exists).
fn logged_calls(cache_root: &Path, dir: &str) -> usize {
    let suffix = format!("/{dir}");
    std::fs::read_dir(cache_root)
        .into_iter()
        .flatten()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("investigation.log")).ok())
        .map(|bytes| {
            bytes
                .split(|b| *b == b'\n')
                .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
                .filter(|line| {
                    line["directory"]
                        .as_str()
                        .is_some_and(|d| d == dir || d.ends_with(&suffix))
                })
                .count()
        })
        .sum()
}

/// The lines of the investigation's `flags.jsonl`, sorted.
fn flag_lines(cache_root: &Path) -> Vec<String> {
    let path = investigation_dir(cache_root).join("flags.jsonl");
    let mut lines: Vec<String> = std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

/// The torn tails killed runs left in JSONL files: an append is one
/// `write()`, but the kernel may end a write at a page boundary when a
/// SIGKILL arrives, so a kill can leave a file's last line cut short (the
/// next append starts on a line of its own, readers skip the fragment,
/// and a completed run rewrites `flags.jsonl` from the flags' records).
type TornTails = BTreeSet<(std::path::PathBuf, Vec<u8>)>;

/// Everything a run leaves must read: each `*.json` parses, and each JSONL
/// file (`flags.jsonl`, `investigation.log`) is lines that parse, except
/// the torn tails of killed runs: after a kill (`killed`), the last line may
/// be one (it is recorded in `torn`); a line that does not parse must be
/// one recorded, and after a completed run `flags.jsonl` holds none.
/// Returns how many atomic-write temp files were left behind.
fn assert_cache_readable(cache_root: &Path, killed: bool, torn: &mut TornTails) -> usize {
    let mut leftovers = 0;
    for entry in walkdir::WalkDir::new(cache_root) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let path = entry.path();
        let name = entry.file_name().to_string_lossy();
        let bytes = std::fs::read(path).unwrap();
        if name.ends_with(".json") {
            serde_json::from_slice::<Value>(&bytes)
                .unwrap_or_else(|err| panic!("{} does not parse: {err}", path.display()));
        } else if name.ends_with(".jsonl") || name == "investigation.log" {
            let whole = bytes.is_empty() || bytes.ends_with(b"\n");
            if !whole {
                assert!(killed, "{} ends with a torn line", path.display());
                let tail = bytes.rsplit(|b| *b == b'\n').next().unwrap_or_default();
                torn.insert((path.to_path_buf(), tail.to_vec()));
            }
            let repaired = !killed && name == "flags.jsonl";
            for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let Err(err) = serde_json::from_slice::<Value>(line) else {
                    continue;
                };
                assert!(
                    !repaired && torn.contains(&(path.to_path_buf(), line.to_vec())),
                    "{}: unreadable line {:?}: {err}",
                    path.display(),
                    String::from_utf8_lossy(line)
                );
            }
        } else if name.ends_with(".partial") {
            leftovers += 1;
        }
    }
    leftovers
}

/// Directories a model read (their dir entry is not the scan's), by
/// relative path. One the scan summarised may be read by a rerun, which
/// has its whole budget for what is left.
fn cached_dirs(cache_root: &Path) -> BTreeSet<String> {
    let started = std::fs::read_dir(cache_root)
        .into_iter()
        .flatten()
        .any(|e| e.unwrap().path().join("meta.json").is_file());
    if !started {
        // Killed before the investigation was recorded: nothing is cached.
        return BTreeSet::new();
    }
    cache_entries(cache_root).model_read().into_iter().collect()
}

/// Kill a run at each point in turn on one cache root, resuming each time;
/// then resume to completion. Checks the cache after every kill, that no
/// resumed run repeats a directory already cached, and returns the final
/// entries.
fn kill_and_resume(
    env: &AgentEnv,
    agent: &MockAgent,
    cache_root: &Path,
    jobs: &[&str],
    points: &[KillAt],
) -> Entries {
    let mut torn = TornTails::new();
    for point in points.iter().cloned().map(Some).chain([None]) {
        let cached = cached_dirs(cache_root);
        if let Some(KillAt::Logged { dir, .. }) = &point
            && cached.contains(dir)
        {
            // An earlier run finished that directory: no loop to kill.
            continue;
        }
        let ran = run_once(env, agent.clone(), cache_root, jobs, point.clone());
        let repeated: Vec<_> = ran.intersection(&cached).collect();
        assert!(
            repeated.is_empty(),
            "{jobs:?} at {point:?}: investigated again though cached: {repeated:?}"
        );
        assert_cache_readable(cache_root, point.is_some(), &mut torn);
    }
    // The completed run removed what killed runs left mid-write.
    let leftovers = assert_cache_readable(&investigation_dir(cache_root), false, &mut torn);
    assert_eq!(leftovers, 0, "temp files left in {}", cache_root.display());
    cache_entries(cache_root)
}

fn nth(pass: PassKind, n: usize) -> KillAt {
    KillAt::Nth { pass, n }
}

#[test]
fn killed_between_requests_resumes_to_the_same_cache() {
    let env = module_tree(8).with_mock();
    let dirs = all_dirs(env.target());
    let agent = MockAgent::new(env.target());
    let clean_root = env.root().join("cache-clean");
    let clean = kill_and_resume(&env, &agent, &clean_root, &["-j", "1"], &[]);
    assert_eq!(clean.dir_paths(), dirs);

    // Survey, planning, the first and a later dir loop request, a second
    // kill among the dir loops after resuming, and synthesis.
    let points = [
        nth(PassKind::Survey, 0),
        nth(PassKind::Planning, 0),
        nth(PassKind::Dir, 0),
        nth(PassKind::Dir, 5),
        nth(PassKind::Dir, 3),
        nth(PassKind::Synthesis, 0),
    ];
    for jobs in [&["-j", "1"][..], &[]] {
        let root = env.root().join(format!("cache-killed{}", jobs.len()));
        let resumed = kill_and_resume(&env, &agent, &root, jobs, &points);
        similar_asserts::assert_eq!(clean.dirs, resumed.dirs, "{jobs:?}: dir entries");
        similar_asserts::assert_eq!(clean.files, resumed.files, "{jobs:?}: file entries");
    }
}

/// A directory of 24 files whose loop caches all of them and raises eight
/// flags in one turn: kills at seeded random instants land inside those
/// writes and appends.
#[test]
fn killed_while_writing_the_cache_leaves_it_readable_and_resumable() {
    let env = module_tree(2);
    for i in 0..24 {
        env.file(&format!("bulk/item{i:02}.txt"), format!("item {i}\n"));
    }
    let env = env.with_mock();
    let build = |agent: MockAgent| {
        (0..8).fold(agent, |agent, i| {
            agent.flag(
                "bulk",
                &format!("bulk/item{i:02}.txt"),
                "concern",
                &format!("Finding number {i}."),
            )
        })
    };
    let agent = build(MockAgent::new(env.target()));
    let clean_root = env.root().join("cache-clean");
    let clean = kill_and_resume(&env, &agent, &clean_root, &["-j", "1"], &[]);

    // The bulk turn makes 32 calls, after the file writes of the module
    // directories and the README that may run before it; each kill stops
    // the run somewhere in the writes or the flag appends, and the next run
    // starts that directory over.
    let mut rng = fastrand::Rng::with_seed(0xC4A5);
    let points: Vec<KillAt> = (0..6)
        .map(|_| KillAt::Logged {
            dir: "bulk".to_string(),
            calls: rng.usize(1..33),
        })
        .collect();
    let root = env.root().join("cache-killed");
    let resumed = kill_and_resume(&env, &agent, &root, &[], &points);
    similar_asserts::assert_eq!(clean.dirs, resumed.dirs, "dir entries");
    similar_asserts::assert_eq!(clean.files, resumed.files, "file entries");
    // A directory investigated again after a kill raises its flags again;
    // the report (which reads flags.jsonl) must still list each once.
    let clean_flags = flag_lines(&clean_root);
    assert_eq!(clean_flags.len(), 8);
    similar_asserts::assert_eq!(clean_flags, flag_lines(&root), "flags");
}

/// Under a budget that folds units and leaves directories to the scan, a
/// killed run resumed carries on with the same work: every directory the
/// uninterrupted run had a model read is read here too (each rerun has its
/// whole budget for what is left, so it may buy more), and every file
/// summary a loop wrote is the same.
#[test]
fn killed_under_a_budget_resumes_to_the_same_units_and_mechanical_entries() {
    let env = module_tree(30).with_mock();
    let dirs = all_dirs(env.target());
    let agent = MockAgent::new(env.target());
    // A budget whose first decision buys what the run reads: a replanning
    // round may buy a loop below a parent only while the parent's loop has
    // not run, so a kill that lands after a parent's loop leaves the
    // resumed run other candidates than the uninterrupted run's rounds had
    // (at $0.50, with the prompts of issue 37, the clean run's rounds buy
    // pkg0/mod007 and mod008, which a run resumed after pkg0's loop cannot).
    let args = ["-j", "1", "--budget", "0.45"];
    let clean_root = env.root().join("cache-clean");
    let clean = kill_and_resume(&env, &agent, &clean_root, &args, &[]);
    assert_eq!(clean.dir_paths(), dirs);
    let mechanical = clean
        .dirs
        .values()
        .filter(|e| e["mechanical"] == true)
        .count();
    let folded = clean
        .dirs
        .values()
        .filter(|e| e["unit"].is_string())
        .count();
    assert!(
        mechanical > 0 && folded > 0,
        "{mechanical} mechanical, {folded} folded"
    );

    let points = [
        nth(PassKind::Planning, 0),
        nth(PassKind::Dir, 0),
        nth(PassKind::Dir, 2),
        nth(PassKind::Synthesis, 0),
    ];
    let root = env.root().join("cache-killed");
    let resumed = kill_and_resume(&env, &agent, &root, &args, &points);
    resumed.assert_carries_on(&clean);
    for (name, entry) in &clean.files {
        similar_asserts::assert_eq!(Some(entry), resumed.files.get(name), "file entries");
    }
}
