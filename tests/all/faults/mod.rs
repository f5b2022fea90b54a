//! The promises at the edges of the file system: nothing is lost (the
//! report file, the cache on a disk that fills up, a damaged flags file),
//! nothing luminos did not create is changed (a shared cache directory),
//! and a target or directory that cannot be read is said to be so.
//!
//! Disk faults are real: a small tmpfs that fills up (where the tests may
//! mount one; otherwise the test says it skipped), a file size limit
//! (`RLIMIT_FSIZE`, anywhere), and permissions taken away mid-run. As root
//! permission bits do not stop anything, so those tests run the binary as
//! nobody, or say why they cannot.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::TestEnv;
use support::agent::Pass;
use support::fs::{Tmpfs, is_root};
use support::output::{stderr, stdout};

mod cache_full;
mod cache_root;
mod flags_repair;
mod output_file;
mod unreadable;

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// The run stopped with exit 1 and `line` alone on stderr, before any
/// report.
#[track_caller]
fn assert_one_line_error(out: &Output, line: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim(), line);
    assert!(stdout(out).is_empty());
}

/// The parsed `--json` report of `out`.
fn json_report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|err| panic!("{err}: {}\n{}", stdout(out), stderr(out)))
}

/// A command of `env` with the test key that runs as nobody when the tests
/// run as root (see [`TestEnv::run_unprivileged`]), or `None` when that is
/// impossible here, said on stdout.
fn unprivileged_cmd(env: &TestEnv, why: &str) -> Option<std::process::Command> {
    let mut cmd = env.bare_cmd();
    cmd.env("ANTHROPIC_API_KEY", "test-key");
    if env.run_unprivileged(&mut cmd) {
        Some(cmd)
    } else {
        println!("SKIPPED: running as root and the binary is not reachable by nobody; {why}");
        None
    }
}
