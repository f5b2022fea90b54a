//! `-o FILE`: checked before anything is spent, and replaced atomically so
//! that a failed write (a full disk) leaves the old report whole.

use super::*;

/// A tree whose report runs to tens of kilobytes.
fn wide_tree() -> TestEnv {
    let env = TestEnv::new();
    for n in 0..400 {
        env.file(&format!("file_{n:03}.txt"), "some text\n");
    }
    env
}

/// The old report a failed write must not touch: 60 KB of known lines.
fn old_report(path: &Path) -> String {
    let text: String = (0..2_000)
        .map(|n| format!("old report line {n}\n"))
        .collect();
    std::fs::write(path, &text).unwrap();
    text
}

/// A failed write left the old report at `path` as it was, and nothing in
/// its directory but the names in `keep`.
#[track_caller]
fn assert_old_report_whole(path: &Path, old: &str, keep: &[&str]) {
    assert!(
        std::fs::read_to_string(path).unwrap() == old,
        "the old report was damaged"
    );
    let leftovers: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !keep.contains(&name.as_str()))
        .collect();
    assert_eq!(leftovers, Vec::<String>::new());
}

/// A destination that cannot be written stops the run with one line and
/// exit 1 before the scan and before any request, not after the
/// investigation was paid for.
#[test]
fn an_unwritable_report_file_stops_the_run_before_any_request() {
    let env = TestEnv::with_small_project().with_mock();
    let reports = env.root().join("reports");
    std::fs::create_dir(&reports).unwrap();
    let missing = env.root().join("missing/dir/report.txt");
    let cases: [(&Path, &str); 2] = [
        (&missing, "the directory '"),
        (&reports, "it is a directory"),
    ];
    for (path, why) in cases {
        let out = env.output(&["-o", path.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "one line:\n{err}");
        assert!(
            err.starts_with("Error: cannot write the report to '") && err.contains(why),
            "{err}"
        );
        assert!(stdout(&out).is_empty());
    }
    assert_eq!(env.server.request_count(), 0, "nothing was spent");

    // A directory the run may not write to, as whoever runs it.
    let Some(mut cmd) = unprivileged_cmd(&env, "the unwritable directory case is not run") else {
        return;
    };
    if !is_root() {
        set_mode(&reports, 0o555);
    }
    let target = reports.join("report.txt");
    let out = cmd
        .args(["-o", target.to_str().unwrap()])
        .arg(env.target())
        .output()
        .unwrap();
    set_mode(&reports, 0o755);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no new file can be created in") && err.contains("Permission denied"),
        "{err}"
    );
    assert_eq!(env.server.request_count(), 0, "nothing was spent");
}

/// A write that fails part-way (here the file size limit, a real kernel
/// fault that needs no privilege) leaves the old report as it was and no
/// temporary file behind.
#[test]
fn a_failed_report_write_leaves_the_old_report_whole() {
    let env = wide_tree();
    let path = env.root().join("report.txt");
    let old = old_report(&path);
    let mut cmd = env.bare_cmd();
    // The JSON keeps every file (the terminal report's tree stays within
    // 120 lines), so it is well past the limit.
    cmd.args(["--scan-only", "--json", "-o", "report.txt"])
        .arg(env.target());
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 8 * 1024,
                rlim_max: 8 * 1024,
            };
            // Past the limit a write fails with EFBIG instead of a signal.
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("Error writing to 'report.txt': File too large"),
        "{err}"
    );
    assert_old_report_whole(&path, &old, &["report.txt", "target"]);

    // Without the limit the report replaces the old one, keeping its mode.
    set_mode(&path, 0o640);
    support::output::assert_success(
        env.bare_cmd()
            .args(["--scan-only", "--json", "-o", "report.txt"])
            .arg(env.target())
            .output()
            .unwrap(),
        "luminos",
    );
    let new = std::fs::read_to_string(&path).unwrap();
    assert!(new.contains("file_399.txt") && new != old);
    assert_eq!(mode_of(&path), 0o640);
}

/// Through a symlink, the file it names is replaced and the link stays.
#[test]
fn a_report_through_a_symlink_replaces_the_file_and_keeps_the_link() {
    let env = TestEnv::with_small_project();
    let real = env.root().join("real.txt");
    old_report(&real);
    let link = env.root().join("link.txt");
    std::os::unix::fs::symlink("real.txt", &link).unwrap();
    support::output::assert_success(
        env.bare_cmd()
            .args(["--scan-only", "-o", "link.txt"])
            .arg(env.target())
            .output()
            .unwrap(),
        "luminos",
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(std::fs::read_to_string(&real).unwrap().contains("LUMINOS"));
}

/// The disk of the report fills up: the old report stays whole.
#[test]
fn a_report_on_a_full_disk_leaves_the_old_one_whole() {
    let Some(disk) = Tmpfs::mount("64k") else {
        return;
    };
    let env = wide_tree();
    let path = disk.path().join("report.txt");
    let old = old_report(&path);
    // Fill what is left.
    let filler = std::fs::File::create(disk.path().join("filler")).unwrap();
    let _ = std::io::Write::write_all(&mut &filler, &vec![0u8; 128 * 1024]);
    let out = env
        .bare_cmd()
        .args(["--scan-only", "-o", path.to_str().unwrap()])
        .arg(env.target())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert_old_report_whole(&path, &old, &["report.txt", "filler"]);
}

/// A pipe named as the report file is written in place, and stays a pipe.
#[test]
fn a_report_to_a_pipe_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let env = TestEnv::with_small_project();
    let fifo = env.root().join("report.fifo");
    support::fs::mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    support::output::assert_success(
        env.bare_cmd()
            .args(["--scan-only", "-o", fifo.to_str().unwrap()])
            .arg(env.target())
            .output()
            .unwrap(),
        "luminos",
    );
    assert!(reader.join().unwrap().contains("LUMINOS"));
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}
