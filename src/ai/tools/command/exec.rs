//! Running one checked program as a well-behaved child process.
//!
//! The child gets a clean environment (`PATH=/usr/bin:/bin`, `LC_ALL=C`,
//! nothing else), `/dev/null` as stdin, and its own process group. Its stdout
//! and stderr are drained concurrently by two threads so neither pipe can
//! fill up and stall it. It is stopped, with everything it started, when:
//!
//! - the deadline passes (the run reports a timeout), or
//! - stdout grows past the cap (the output is kept up to the cap and marked
//!   as cut; running on would only burn CPU).
//!
//! Stopping means `SIGKILL` to the whole process group, then reaping. The
//! group is also killed after a normal exit, so nothing the program left
//! behind outlives the call.
//!
//! This module knows nothing about which programs are allowed; the checker
//! decided that. It only refuses to look anywhere but the fixed directories
//! for the program itself.

use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Where programs are looked up, and the child's `PATH`.
pub(super) const SYSTEM_PATH: &str = "/usr/bin:/bin";

/// How much stderr is kept for the failure note.
const STDERR_CAP: usize = 8 * 1024;

/// How long to wait for the pipe readers once the group is dead. They only
/// outlive it if something escaped the group and holds a pipe open.
const READER_GRACE: Duration = Duration::from_secs(1);

/// Limits for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Limits {
    pub timeout: Duration,
    /// Bytes of stdout kept; more stops the program.
    pub output_cap: usize,
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    /// The program exited (or was stopped because its output was cut).
    Exited(ExitStatus),
    /// The deadline passed and the process group was killed.
    TimedOut,
}

/// What a run produced.
#[derive(Debug)]
pub(super) struct Execution {
    pub ending: Ending,
    /// At most `output_cap` bytes.
    pub stdout: Vec<u8>,
    /// Whether stdout went past the cap (and the program was stopped).
    pub stdout_cut: bool,
    /// At most [`STDERR_CAP`] bytes.
    pub stderr: Vec<u8>,
}

/// The program `name` in one of [`SYSTEM_PATH`]'s directories, if installed.
pub(super) fn locate(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if name.is_empty() || name.contains('/') {
        return None;
    }
    SYSTEM_PATH
        .split(':')
        .map(|dir| Path::new(dir).join(name))
        .find(|path| {
            path.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Run `program` with `args` in `cwd` under `limits`.
pub(super) fn execute(
    program: &Path,
    args: &[&str],
    cwd: &Path,
    limits: Limits,
) -> io::Result<Execution> {
    let mut command = Command::new(program);
    // Messages then read "grep: ..." rather than "/usr/bin/grep: ...".
    if let Some(name) = program.file_name() {
        command.arg0(name);
    }
    let mut child = command
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", SYSTEM_PATH)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let pgid = child.id() as libc::pid_t;

    let cut = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = mpsc::channel();
    let stdout = drain(
        child.stdout.take(),
        limits.output_cap,
        Some(Arc::clone(&cut)),
        done_tx.clone(),
    );
    let stderr = drain(child.stderr.take(), STDERR_CAP, None, done_tx);

    let timed_out = wait_until_done(&mut child, pgid, limits.timeout, &cut)?;
    kill_group(pgid);
    let status = child.wait()?;

    // Two readers; each signals once when its pipe closes.
    let grace_end = Instant::now() + READER_GRACE;
    for _ in 0..2 {
        let left = grace_end.saturating_duration_since(Instant::now());
        if done_rx.recv_timeout(left).is_err() {
            break;
        }
    }
    Ok(Execution {
        ending: if timed_out {
            Ending::TimedOut
        } else {
            Ending::Exited(status)
        },
        stdout: take(&stdout),
        stdout_cut: cut.load(Ordering::SeqCst),
        stderr: take(&stderr),
    })
}

/// Poll until the group leader has exited, the output was cut or the
/// deadline passed. Returns whether the deadline passed. The leader is not
/// reaped here (where the platform allows), so its pid, which is the group
/// id, cannot be reused before [`kill_group`].
fn wait_until_done(
    child: &mut Child,
    pgid: libc::pid_t,
    timeout: Duration,
    cut: &AtomicBool,
) -> io::Result<bool> {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    loop {
        if leader_exited(child, pgid)? || cut.load(Ordering::SeqCst) {
            return Ok(false);
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(true);
        }
        thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

#[cfg(target_os = "linux")]
fn leader_exited(_child: &mut Child, pid: libc::pid_t) -> io::Result<bool> {
    // WNOWAIT leaves the exited leader a zombie, keeping its pid (our group
    // id) reserved until we have killed the group and reaped it.
    // SAFETY: a zeroed siginfo_t is a valid out-parameter for waitid, which
    // only writes into it.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: plain syscall on our own child's pid with a valid pointer.
    let rc = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: waitid filled `info` (or left it zeroed when nothing changed).
    Ok(unsafe { info.si_pid() } != 0)
}

#[cfg(not(target_os = "linux"))]
fn leader_exited(child: &mut Child, _pid: libc::pid_t) -> io::Result<bool> {
    // Reaping here leaves a window of microseconds in which the group id
    // could be reused before kill_group; pid reuse that fast does not happen
    // in practice.
    Ok(child.try_wait()?.is_some())
}

/// SIGKILL every process in the group. Errors (the group is already empty)
/// are expected and ignored.
fn kill_group(pgid: libc::pid_t) {
    // SAFETY: kill(2) with a negative pid targets exactly the group we
    // created for the child; it has no memory-safety preconditions.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// Read `pipe` to its end on a thread, keeping at most `cap` bytes. With a
/// `cut` flag, going past the cap sets it and stops reading (closing our end,
/// so a writer gets `EPIPE`); without one, the rest is read and dropped.
fn drain<R: Read + Send + 'static>(
    pipe: Option<R>,
    cap: usize,
    cut: Option<Arc<AtomicBool>>,
    done: mpsc::Sender<()>,
) -> Arc<Mutex<Vec<u8>>> {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let shared = Arc::clone(&buffer);
    thread::spawn(move || {
        if let Some(mut pipe) = pipe {
            let mut chunk = [0u8; 8192];
            loop {
                let n = match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                let mut kept = shared.lock().unwrap_or_else(|e| e.into_inner());
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
                if let Some(flag) = cut.as_ref().filter(|_| n > room) {
                    flag.store(true, Ordering::SeqCst);
                    break;
                }
            }
        }
        let _ = done.send(());
    });
    buffer
}

fn take(buffer: &Mutex<Vec<u8>>) -> Vec<u8> {
    std::mem::take(&mut *buffer.lock().unwrap_or_else(|e| e.into_inner()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(timeout_ms: u64, cap: usize) -> Limits {
        Limits {
            timeout: Duration::from_millis(timeout_ms),
            output_cap: cap,
        }
    }

    /// Runs `program` with `args` in a fresh empty directory.
    fn run_in_a_temp_dir(program: &str, args: &[&str], limits: Limits) -> Execution {
        let dir = tempfile::tempdir().unwrap();
        execute(Path::new(program), args, dir.path(), limits).unwrap()
    }

    fn alive(pid: libc::pid_t) -> bool {
        // SAFETY: signal 0 only checks for existence.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    #[test]
    fn locates_only_in_system_directories() {
        assert!(locate("grep").is_some_and(|p| p.starts_with("/usr/bin") || p.starts_with("/bin")));
        assert!(locate("no-such-program-here").is_none());
        assert!(locate("../bin/grep").is_none());
        assert!(locate("").is_none());
    }

    #[test]
    fn environment_is_clean_and_fixed() {
        let out = run_in_a_temp_dir("/usr/bin/env", &[], limits(5000, 4096));
        let mut vars: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        vars.sort();
        assert_eq!(vars, ["LC_ALL=C", "PATH=/usr/bin:/bin"]);
    }

    #[test]
    fn stdout_and_stderr_are_captured_with_the_status() {
        let script = ["-c", "echo out; echo err >&2; exit 3"];
        let out = run_in_a_temp_dir("/bin/sh", &script, limits(5000, 4096));
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
        assert!(matches!(out.ending, Ending::Exited(s) if s.code() == Some(3)));
        assert!(!out.stdout_cut);
    }

    #[test]
    fn stdin_is_empty() {
        let out = run_in_a_temp_dir("/bin/cat", &[], limits(5000, 4096));
        assert!(out.stdout.is_empty());
        assert!(matches!(out.ending, Ending::Exited(s) if s.success()));
    }

    /// Runs `sh -c` on a script that puts `sleep 30` in the background
    /// (`background` starts it, `rest` follows); returns how the call ended
    /// and the background sleep's pid.
    fn run_leaving_a_sleep(background: &str, rest: &str, timeout_ms: u64) -> (Ending, libc::pid_t) {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("bg.pid");
        let script = format!("{background} & echo $! > {}{rest}", pidfile.display());
        let out = execute(
            Path::new("/bin/sh"),
            &["-c", &script],
            dir.path(),
            limits(timeout_ms, 4096),
        )
        .unwrap();
        let bg = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        (out.ending, bg)
    }

    /// The background sleep was reparented (not our child), so it may take
    /// a moment for init to reap it; a killed process never runs again.
    fn assert_dies(bg: libc::pid_t) {
        let gone_by = Instant::now() + Duration::from_secs(5);
        while alive(bg) && !is_zombie(bg) && Instant::now() < gone_by {
            thread::sleep(Duration::from_millis(10));
        }
        assert!(
            !alive(bg) || is_zombie(bg),
            "background child {bg} survived"
        );
    }

    /// The timeout kills the whole group: the shell and a grandchild it put in
    /// the background both die, and the call returns.
    #[test]
    fn timeout_kills_the_whole_process_group() {
        let (ending, bg) = run_leaving_a_sleep("sleep 30", "; wait", 300);
        assert_eq!(ending, Ending::TimedOut);
        assert_dies(bg);
    }

    fn is_zombie(pid: libc::pid_t) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(true)
    }

    /// After a normal exit, anything left running in the group is killed too.
    #[test]
    fn leftovers_die_with_the_leader() {
        let (ending, bg) = run_leaving_a_sleep("sleep 30 >/dev/null 2>&1", "", 5000);
        assert!(matches!(ending, Ending::Exited(s) if s.success()));
        assert_dies(bg);
    }

    #[test]
    fn output_past_the_cap_is_cut_and_the_program_stopped() {
        // `yes` never ends on its own; only the cap can stop it.
        let out = run_in_a_temp_dir("/usr/bin/yes", &[], limits(10_000, 1000));
        assert!(out.stdout_cut);
        assert_eq!(out.stdout.len(), 1000);
        assert!(matches!(out.ending, Ending::Exited(_)));
    }
}
