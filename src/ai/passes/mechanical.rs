//! The pass without a model: writing the mechanical entry of a directory no
//! loop investigates ([`crate::ai::rules::mechanical`] builds it).
//!
//! It reads what the entry needs that the scan did not keep (the newest
//! files' dates, the children's cached entries), sends the names it quotes
//! through the redactor as a listing would (a secret in a file name is
//! redacted and flagged here too), stamps the directory's fingerprint, and
//! writes the entry only when it differs from the cached one apart from its
//! time, so a rerun over an unchanged tree changes nothing. Entries ready at
//! the same moment are written as one batch ([`write_mechanical`]): on a
//! tree of 13,000 directories, two flushes per entry would take minutes.

use std::path::Path;

use serde_json::Value;

use crate::ai::failure::InvestigationError;
use crate::ai::passes::dir_loop::{DirShared, direct_file_entries};
use crate::ai::rules::dir_stats::TreeStats;
use crate::ai::rules::discover::{display_name, relative};
use crate::ai::rules::fingerprint::fingerprint;
use crate::ai::rules::mechanical::{Child, MechanicalReason, mechanical_entry};
use crate::ai::tools::ToolContext;
use crate::cache::{DirEntry, EntryKind, FileEntry, now_iso};

/// How many of a directory's newest files an entry names.
pub(crate) const NEWEST_KEPT: usize = 3;

/// Write a batch of mechanical entries (from [`mechanical_update`]) at
/// once: the cache makes them durable together. Returns how many.
pub(crate) fn write_mechanical(
    shared: &DirShared,
    batch: &[(String, DirEntry)],
) -> Result<usize, InvestigationError> {
    shared
        .run
        .cache
        .write_all_typed(batch)
        .map_err(|source| InvestigationError::EntryWrite {
            what: "writing mechanical entries",
            source,
        })?;
    Ok(batch.len())
}

/// The mechanical entry of `dir` to write (its path and the entry), or
/// `None` when the cached one says the same already. `contents_changed`
/// says its own files changed since its cached entry (their file summaries
/// go, when it had one).
pub(crate) fn mechanical_update(
    shared: &DirShared,
    stats: &TreeStats,
    dir: &Path,
    contents_changed: bool,
    reason: MechanicalReason,
) -> Result<Option<(String, DirEntry)>, InvestigationError> {
    let path = dir.to_string_lossy();
    let print = fingerprint(dir, Some(&shared.run.scope));
    let cache = &shared.run.cache;
    // Only a directory summarised before can hold file summaries of files
    // that changed since.
    if contents_changed && cache.has_entry(EntryKind::Dir, &path) {
        let files = cache.located::<FileEntry>();
        for (file, _) in direct_file_entries(dir, &files) {
            cache.remove_entry(EntryKind::File, &file.to_string_lossy())?;
        }
    }
    let children: Vec<Child<'_>> = shared
        .children
        .of(dir)
        .iter()
        .map(|child| Child {
            name: child
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            stats: stats.of(child),
            entry: cache.entry(&child.to_string_lossy()),
        })
        .collect();
    let newest = newest_files(shared, dir);
    let mut entry = mechanical_entry(
        shared.run.target(),
        dir,
        stats.of(dir),
        &newest,
        &children,
        reason,
    );
    redact_names(shared, dir, &mut entry);
    entry.fingerprint = Some(print);
    if let Some(old) = cache.entry::<DirEntry>(&path)
        && (DirEntry {
            cached_at: String::new(),
            ..old
        }) == entry
    {
        return Ok(None);
    }
    entry.cached_at = now_iso();
    Ok(Some((path.into_owned(), entry)))
}

/// The newest files directly in `dir` within the run's scope, newest
/// first (ties by name), each with its modification date (UTC).
fn newest_files(shared: &DirShared, dir: &Path) -> Vec<(String, String)> {
    let scope = Some(&shared.run.scope);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(std::time::SystemTime, String)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let meta = entry.metadata().ok()?;
            if !meta.is_file() || scope.is_some_and(|s| !s.allows_file(&entry.path())) {
                return None;
            }
            Some((
                meta.modified().ok()?,
                entry.file_name().to_string_lossy().into_owned(),
            ))
        })
        .collect();
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    files
        .into_iter()
        .take(NEWEST_KEPT)
        .map(|(time, name)| {
            let date: chrono::DateTime<chrono::Utc> = time.into();
            (name, date.format("%Y-%m-%d").to_string())
        })
        .collect()
}

/// Pass the file names the entry quotes through the redactor, as a
/// listing of `dir`: a secret in a name is flagged under the file's path
/// and masked wherever the entry shows the name (every text of it but its
/// absolute `path`).
fn redact_names(shared: &DirShared, dir: &Path, entry: &mut DirEntry) {
    let directory = display_name(shared.run.target(), dir);
    let ctx = shared.run.tools(&directory);
    let mut names: Vec<String> = Vec::new();
    for key in ["largest_files", "newest_files"] {
        for file in entry
            .extra
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = file["name"].as_str() {
                names.push(format!("  {name}"));
            }
        }
    }
    names.sort();
    names.dedup();
    ctx.redact_listing(&relative(shared.run.target(), dir), &names.join("\n"));
    let redact = |text: &mut String| *text = ctx.redact_unflagged(text);
    redact(&mut entry.relative_path);
    redact(&mut entry.summary);
    redact(&mut entry.dominant_category);
    entry.notable_files.iter_mut().for_each(redact);
    for text in [&mut entry.confidence_reason, &mut entry.mechanical_reason]
        .into_iter()
        .flatten()
    {
        redact(text);
    }
    entry
        .extra
        .values_mut()
        .for_each(|value| redact_strings(&ctx, value));
}

/// Redact every string of `value` in place (no flags: the names were
/// flagged above).
fn redact_strings(ctx: &ToolContext<'_>, value: &mut Value) {
    match value {
        Value::String(text) => *text = ctx.redact_unflagged(text),
        Value::Array(items) => items.iter_mut().for_each(|v| redact_strings(ctx, v)),
        Value::Object(map) => map
            .iter_mut()
            .filter(|(key, _)| key.as_str() != "path")
            .for_each(|(_, v)| redact_strings(ctx, v)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}
