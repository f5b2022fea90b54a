//! Run a child process under watch: a deadline (it is killed past it), its
//! output collected, and its own peak RSS.
//!
//! The peak is read from the child's `/proc/<pid>/status` (`VmHWM`, the high
//! water mark of its own address space) while it runs, not from `wait4`'s
//! `ru_maxrss`: a child spawned with `vfork` semantics (as `posix_spawn`
//! does) inherits the spawning process's peak into `ru_maxrss` when it
//! execs, and the suite's one test process is large, so `ru_maxrss` would
//! report the test process rather than luminos.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How a watched child ended.
#[derive(Debug)]
pub struct Watched {
    /// The exit code; `None` when a signal ended it (or the deadline did).
    pub code: Option<i32>,
    pub status: ExitStatus,
    /// The deadline passed and the child was killed.
    pub timed_out: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The child's peak resident set size, in KiB (the largest `VmHWM` seen
    /// while it ran; polled every few milliseconds, so growth in the last
    /// poll interval before exit is not seen).
    pub peak_rss_kib: u64,
    pub elapsed: Duration,
}

impl Watched {
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Spawn `cmd` with piped stdout and stderr, kill it at `timeout`, reap it
/// and return what it did.
#[allow(clippy::zombie_processes, reason = "reaped with waitpid below")]
pub fn run_watched(mut cmd: Command, timeout: Duration) -> Watched {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the child starts");
    let pid = child.id() as libc::pid_t;
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let mut timed_out = false;
    let mut status = 0;
    let mut peak_rss_kib = 0;
    loop {
        // SAFETY: pid is our own child, not yet reaped; the pointers are valid.
        let got = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if got == pid {
            break;
        }
        peak_rss_kib = peak_rss_kib.max(vm_hwm_kib(pid).unwrap_or(0));
        if got < 0 {
            let err = std::io::Error::last_os_error();
            assert_eq!(
                err.kind(),
                std::io::ErrorKind::Interrupted,
                "waitpid: {err}"
            );
            continue;
        }
        if !timed_out && started.elapsed() > timeout {
            timed_out = true;
            // SAFETY: signalling our own unreaped child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let elapsed = started.elapsed();
    Watched {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        status: ExitStatus::from_raw(status),
        timed_out,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
        peak_rss_kib,
        elapsed,
    }
}

/// `cmd`'s output, as `Command::output` gives it, failing the test if it
/// runs past `limit` (it is killed there, so a hang cannot stall the suite).
pub fn output_within(cmd: Command, limit: Duration) -> Output {
    let watched = run_watched(cmd, limit);
    assert!(
        !watched.timed_out,
        "still running after {limit:?}; stderr:\n{}",
        watched.stderr_text()
    );
    Output {
        status: watched.status,
        stdout: watched.stdout,
        stderr: watched.stderr,
    }
}

/// The `VmHWM` line of `/proc/<pid>/status`, in KiB; `None` once the child
/// has exited (a zombie has no address space).
fn vm_hwm_kib(pid: libc::pid_t) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}
