//! A cache that stops taking writes mid-run (a full disk, permissions taken
//! away) stops new requests at once: the run ends `failed`, exit 3, naming
//! what could not be written and where, and the rerun pays for little more
//! than what the failed run could not keep.

use super::*;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use support::agent::MockAgent;

/// Directory loops at once in these runs.
const JOBS: usize = 4;

/// 16 directories of 6 files each: every loop caches six file summaries.
fn wide_project() -> TestEnv {
    let env = TestEnv::new();
    for d in 0..16 {
        for f in 0..6 {
            env.file(
                &format!("pkg_{d:02}/module_{f}.py"),
                format!("def f{f}():\n    return {d}\n"),
            );
        }
    }
    env
}

/// The uuid-named investigation directory under the cache root `root`.
fn investigation_dir(root: &Path) -> Option<std::path::PathBuf> {
    std::fs::read_dir(root)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir() && p.file_name().is_some_and(|n| n.len() == 36))
}

/// The disk holding the cache fills up mid-run. Measured: the full-disk
/// run plus its rerun (once space is freed) bill at most the requests of
/// one clean run plus 2 x `-j`.
#[test]
fn a_cache_disk_that_fills_up_stops_new_requests_and_the_rerun_resumes() {
    // 40 pages: the investigation opens, and the disk fills a few loops in.
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let Some(disk) = Tmpfs::mount(&format!("{}k", 40 * page / 1024)) else {
        return;
    };
    let jobs = JOBS.to_string();
    let args = ["--json", "-j", &jobs];

    // The baseline, in the same test: a clean run on an ordinary disk.
    let clean = wide_project().with_mock();
    clean.run_ok(&args);
    let clean_requests = clean.server.request_count();

    let env = wide_project().with_mock();
    let root = disk.path().join("cache");
    let run = || {
        env.cmd()
            .env("LUMINOS_CACHE_DIR", &root)
            .args(args)
            .arg(env.target())
            .output()
            .unwrap()
    };
    let out = run();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let report = json_report(&out);
    assert_eq!(report["investigation"]["status"], "failed", "{err}");
    let error = report["investigation"]["error"].as_str().unwrap();
    assert!(
        error.contains("the cache could not be written")
            && error.contains("No space left on device")
            && error.contains(&root.display().to_string()),
        "{error}"
    );
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("Investigation failed"))
            .count(),
        1,
        "{err}"
    );
    let full_run = env.server.request_count();
    assert!(
        full_run > 2 && full_run < clean_requests,
        "the disk filled up mid-run ({full_run} of {clean_requests} requests)"
    );

    disk.resize("16m");
    let out = run();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        json_report(&out)["investigation"]["status"],
        "complete",
        "{err}"
    );
    let total = env.server.request_count();
    println!(
        "clean run: {clean_requests} requests; the run on a full disk: {full_run}; its rerun: {}; \
         together {total} = clean + {} (the bound is clean + 2 x -j = clean + {})",
        total - full_run,
        total as i64 - clean_requests as i64,
        2 * JOBS
    );
    assert!(
        total <= clean_requests + 2 * JOBS,
        "{total} requests in all against {clean_requests} for a clean run"
    );
}

/// The cache's directories stop taking new files in the middle of the
/// first directory loop (permissions taken away: a fault that needs no
/// mount, run as nobody where the tests run as root). The loop's answer
/// cannot be kept, so no request follows it.
#[test]
fn a_cache_that_stops_taking_writes_stops_the_next_request() {
    let env = wide_project();
    let Some(mut cmd) = unprivileged_cmd(&env, "the read-only cache case is not run") else {
        return;
    };
    let server = support::mock::MockServer::start();
    let root = if is_root() {
        env.cache().join("own")
    } else {
        env.cache().to_path_buf()
    };
    let agent = MockAgent::new(env.target());
    let target = std::fs::canonicalize(env.target()).unwrap();
    // The request count when the directories were locked.
    let locked_at = Arc::new(AtomicUsize::new(0));
    let (seen, count) = (locked_at.clone(), Arc::new(AtomicUsize::new(0)));
    let (lock_root, locked) = (root.clone(), Arc::new(std::sync::Mutex::new(Vec::new())));
    let locked_dirs = locked.clone();
    server.respond_with(move |request| {
        let n = count.fetch_add(1, Ordering::SeqCst) + 1;
        if matches!(Pass::of(&request.body, &target), Pass::Dir(_))
            && seen.load(Ordering::SeqCst) == 0
        {
            let dir = investigation_dir(&lock_root).expect("the investigation is open");
            for sub in [dir.join("files"), dir.join("dirs"), dir.clone()] {
                set_mode(&sub, 0o500);
                locked_dirs.lock().unwrap().push(sub);
            }
            seen.store(n, Ordering::SeqCst);
        }
        agent.reply(&request.body)
    });
    let out = cmd
        .env("ANTHROPIC_BASE_URL", server.url())
        .args(["--json", "-j", "1"])
        .arg(env.target())
        .output()
        .unwrap();
    for dir in locked.lock().unwrap().iter() {
        set_mode(dir, 0o700);
    }
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let report = json_report(&out);
    assert_eq!(report["investigation"]["status"], "failed");
    let error = report["investigation"]["error"].as_str().unwrap();
    assert!(
        error.contains("the cache could not be written") && error.contains("Permission denied"),
        "{error}"
    );
    let locked_at = locked_at.load(Ordering::SeqCst);
    assert!(locked_at > 0, "no directory loop ran:\n{err}");
    assert_eq!(
        server.request_count(),
        locked_at,
        "a request was sent after the cache failed:\n{err}"
    );
}
