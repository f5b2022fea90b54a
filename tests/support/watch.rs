//! Run a child process under watch: a deadline (it is killed past it), its
//! output collected, and its own peak RSS read from `wait4`'s resource usage.

use std::io::Read;
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How a watched child ended.
#[derive(Debug)]
pub struct Watched {
    /// The exit code; `None` when a signal ended it (or the deadline did).
    pub code: Option<i32>,
    /// The deadline passed and the child was killed.
    pub timed_out: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The child's peak resident set size, in KiB.
    pub peak_rss_kib: u64,
    pub elapsed: Duration,
}

impl Watched {
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Spawn `cmd` with piped stdout and stderr, kill it at `timeout`, reap it
/// with `wait4` and return what it did.
#[allow(
    clippy::zombie_processes,
    reason = "reaped with wait4, which also gives its resource usage"
)]
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
    // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our own child, not yet reaped; the pointers are valid.
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if got == pid {
            break;
        }
        if got < 0 {
            let err = std::io::Error::last_os_error();
            assert_eq!(err.kind(), std::io::ErrorKind::Interrupted, "wait4: {err}");
            continue;
        }
        if !timed_out && started.elapsed() > timeout {
            timed_out = true;
            // SAFETY: signalling our own unreaped child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let elapsed = started.elapsed();
    Watched {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        timed_out,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
        peak_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
        elapsed,
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}
