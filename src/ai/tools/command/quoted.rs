//! The files a command quotes, learned whole before its output is redacted.
//!
//! `grep`, `head` and `tail` print pieces of files: a few lines, each maybe
//! prefixed with `path:line:`. A secret that only has a recognisable shape
//! whole (a private key between its BEGIN and END lines) loses it in such a
//! piece. So before the output goes out, every file the command could have
//! quoted is read and passed through [`Redactor::learn_source`]: its secrets
//! are remembered (and masked wherever a piece of them turns up in the
//! output) and recorded as flags under the file's own path and line.
//!
//! Which files: the program's path operands, and for `grep` every regular
//! file under a directory operand (or under the target when it names none,
//! as `grep -r pattern` does), symlinks not followed, as `grep -r` walks.
//! Each file is learned once per run while it is unchanged
//! ([`ToolContext::learn_file`]).
//!
//! [`Redactor::learn_source`]: crate::redact::Redactor::learn_source

use std::path::{Path, PathBuf};

use super::check::{ArgRole, CheckedCommand};
use crate::ai::tools::{ToolContext, sandbox};

/// Programs whose output quotes file content.
const QUOTING_PROGRAMS: &[&str] = &["grep", "head", "tail"];
/// Files learned for one command, at most.
const LEARN_FILES: usize = 4096;

/// Learn the secrets of every file `plan` may have quoted (see the module
/// docs), recording each as a flag.
pub(super) fn learn_quoted_files(ctx: &ToolContext<'_>, plan: &CheckedCommand) {
    if !ctx.redactor.is_enabled() || !QUOTING_PROGRAMS.contains(&plan.program) {
        return;
    }
    for file in quoted_files(ctx.target, plan) {
        ctx.learn_file(&file);
    }
}

/// The regular files `plan` may read, canonical, at most [`LEARN_FILES`].
fn quoted_files(target: &Path, plan: &CheckedCommand) -> Vec<PathBuf> {
    let mut operands: Vec<PathBuf> = plan
        .args
        .iter()
        .filter(|arg| arg.role == ArgRole::Path)
        .filter_map(|arg| sandbox::resolve(target, &arg.text).ok())
        .collect();
    if operands.is_empty() && plan.program == "grep" {
        operands.push(target.to_path_buf());
    }
    let mut files = Vec::new();
    for operand in operands {
        if operand.is_file() {
            files.push(operand);
        } else if operand.is_dir() && plan.program == "grep" {
            let walk = walkdir::WalkDir::new(&operand)
                .follow_links(false)
                .into_iter()
                .filter_map(Result::ok)
                .filter(|entry| entry.file_type().is_file())
                .map(walkdir::DirEntry::into_path);
            files.extend(walk.take(LEARN_FILES.saturating_sub(files.len())));
        }
        if files.len() >= LEARN_FILES {
            files.truncate(LEARN_FILES);
            break;
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::tools::command::check;

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let target = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(target.join("keys/deep")).unwrap();
        std::fs::write(target.join("keys/a.pem"), "a\n").unwrap();
        std::fs::write(target.join("keys/deep/b.pem"), "b\n").unwrap();
        std::fs::write(target.join("notes.txt"), "n\n").unwrap();
        std::os::unix::fs::symlink(target.join("notes.txt"), target.join("keys/link")).unwrap();
        (dir, target)
    }

    fn files(target: &Path, command: &str) -> Vec<String> {
        let plan = check(target, command).unwrap();
        let mut files: Vec<String> = quoted_files(target, &plan)
            .iter()
            .map(|path| sandbox::relative_display(target, path))
            .collect();
        files.sort();
        files
    }

    #[test]
    fn operands_and_the_files_under_grep_directories() {
        let (_dir, target) = tree();
        assert_eq!(files(&target, "tail -n 2 keys/a.pem"), ["keys/a.pem"]);
        assert_eq!(
            files(&target, "head keys/a.pem notes.txt"),
            ["keys/a.pem", "notes.txt"]
        );
        assert_eq!(
            files(&target, "grep -rn x keys"),
            ["keys/a.pem", "keys/deep/b.pem"],
            "the walk does not follow keys/link"
        );
        assert_eq!(
            files(&target, "grep -rh x"),
            ["keys/a.pem", "keys/deep/b.pem", "notes.txt"],
            "no operand: the whole target"
        );
        assert_eq!(files(&target, "grep -n x keys/*.pem"), ["keys/a.pem"]);
        assert!(
            files(&target, "head keys").is_empty(),
            "head reads no directory"
        );
    }
}
