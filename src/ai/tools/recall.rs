//! What a resumed run's redactor must know before it sends anything: the
//! values earlier runs of the investigation redacted.
//!
//! The redactor masks any piece of a value it removed before, but it keeps
//! that memory in this process only; writing the values (or hashes of
//! their short pieces, which are quick to guess) to the cache would put
//! them on disk beside the summaries. What the cache does keep is where
//! each value was: the redaction notices in `flags.jsonl` name the file, or
//! the entry whose name held one. So a resumed run reads those again and
//! the rules find the same values the same way, with nothing secret stored.
//! A file that changed since is learned as it is now; a value an earlier
//! run found only in a command's output (flagged under `.`) is found again
//! by its rule, but its pieces are not remembered.
//!
//! Only paths inside the target are read (resolved as every tool resolves
//! the model's paths).

use std::path::Path;

use super::untrusted::{Notice, notice_of};
use super::{ToolContext, is_inner_path, sandbox};
use crate::cache::Cache;
use crate::progress::Progress;
use crate::redact::{REDACTION_MARK, Redactor};

/// Teach `redactor` the values the notices recorded in `cache` point to
/// (see the module docs). Each file is read once, as
/// [`ToolContext::learn_file`] does; a directory whose entry names held a
/// value has its names learned.
pub(crate) fn recall_earlier_redactions(cache: &Cache, redactor: &Redactor, progress: &Progress) {
    if !redactor.is_enabled() {
        return;
    }
    let ctx = ToolContext::new(cache, redactor, progress, "(resume)");
    for flag in cache.read_flags() {
        let Some(notice) = notice_of(&flag) else {
            continue;
        };
        match notice {
            Notice::File if is_inner_path(&flag.path) && !flag.path.contains(REDACTION_MARK) => {
                if let Ok(path) = sandbox::resolve(ctx.target, &flag.path) {
                    ctx.learn_file(&path);
                }
            }
            Notice::Name => {
                let parent = Path::new(&flag.path)
                    .parent()
                    .map_or(String::new(), |p| p.to_string_lossy().into_owned());
                learn_names(&ctx, &parent);
            }
            Notice::File => {}
        }
    }
}

/// Learn the names of the entries of the directory `rel` (relative to the
/// target; empty for the target itself), unless it is outside the target
/// or itself a redacted name.
fn learn_names(ctx: &ToolContext<'_>, rel: &str) {
    if rel.contains(REDACTION_MARK) || !(rel.is_empty() || is_inner_path(rel)) {
        return;
    }
    let dir = if rel.is_empty() {
        Some(ctx.target.to_path_buf())
    } else {
        sandbox::resolve(ctx.target, rel).ok()
    };
    let Some(entries) = dir.and_then(|dir| std::fs::read_dir(dir).ok()) else {
        return;
    };
    let names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    ctx.redactor.learn(None, &names.join("\n"));
}
