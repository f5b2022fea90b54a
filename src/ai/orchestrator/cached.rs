//! A target's investigation read back from the cache, without the API and
//! without writing anything: what the MCP server's `overview`, `directory`
//! and `flags` tools answer from.
//!
//! It is the report a rerun over an unchanged tree would print, put
//! together the same way: what a run gathers ([`Situation`], with the
//! investigation looked up read-only as `--estimate` does), the verdict
//! `synthesis.json` saved, every flag, the grounding and the `directories`
//! of `ground.rs` and `directories.rs`, and the flags in report order. What
//! a run would have said of itself (complete, partial, and why) is the one
//! thing the cache cannot rebuild, so each run that reaches its end records
//! it in `meta.json` ([`record_last_run`]), and this reads it back.
//!
//! What it adds is what has moved since: the directories whose contents no
//! longer match the fingerprint their summary was written against, and
//! those with a summary that are gone ([`TreeChanges`]).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, json};

use super::ground::ground_outcome;
use crate::ai::Outcome;
use crate::ai::passes::synthesis::SavedSynthesis;
use crate::ai::rules::discover::relative;
use crate::ai::rules::fingerprint::DirState;
use crate::ai::situation::Situation;
use crate::cache::{Cache, CacheError, EntryKind, META_FILE, SYNTHESIS_FILE, now_iso};
use crate::config::Config;
use crate::grounding::Scope;
use crate::lenient;
use crate::progress::Progress;
use crate::report::{Investigation, InvestigationStatus, Report, tree_order};
use crate::scan::{BaseScan, ScanFilter, ScannedDirs};

/// The `meta.json` field where a run that reached its end says how it
/// ended (ours; the original has no such field).
pub(crate) const LAST_RUN_FIELD: &str = "last_run";

/// Why there is nothing to read back.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum NotCached {
    /// No investigation of the target in the cache, or one without a
    /// single directory summary.
    #[error("'{0}' has not been investigated yet: investigate it first")]
    NeverInvestigated(String),
    /// Its summaries were written with `--no-redact` and may quote secrets.
    #[error(
        "the cached investigation of '{0}' was made with --no-redact and its summaries may quote \
         secrets, so luminos does not hand it out; investigate it again without --no-redact"
    )]
    Unredacted(String),
}

/// A target's investigation, as the cache holds it now.
#[derive(Debug, Clone)]
pub(crate) struct CachedInvestigation {
    /// The base scan of the tree as it is now, with the verdict, the flags
    /// (grounded, in report order), the domain sections, the
    /// `directories` and the grounding read back. Its `investigation` is
    /// [`LastRun::status`] when a run recorded one.
    pub report: Report,
    /// The investigation id (its cache directory's name).
    pub id: String,
    /// The model the investigation was started with.
    pub model: Option<String>,
    /// When `synthesis.json` was written; `None`: no verdict was saved.
    pub verdict_at: Option<String>,
    /// How the last run that reached its end ended, when one recorded it.
    pub last_run: Option<LastRun>,
    /// What moved since the summaries were written.
    pub changes: TreeChanges,
}

/// How the last run that reached its end ended, as `meta.json` keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LastRun {
    pub status: InvestigationStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub finished_at: String,
}

/// What a cached report reads of `meta.json` besides the cache's own
/// fields, leniently: a field that does not read is not there.
#[derive(Debug, Default, Deserialize)]
struct MetaForReport {
    #[serde(default, deserialize_with = "lenient::some_text")]
    model: Option<String>,
    #[serde(default, deserialize_with = "lenient::some")]
    last_run: Option<LastRun>,
}

/// What changed in the tree since its summaries were written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct TreeChanges {
    /// Directories whose own contents (names, sizes, times) differ from
    /// when their summary was written, relative to the target, in tree
    /// order.
    pub changed: Vec<String>,
    /// Directories with a summary that no longer exist, the same way.
    pub removed: Vec<String>,
}

impl TreeChanges {
    /// Nothing moved.
    pub(crate) fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.removed.is_empty()
    }
}

/// Read `config.target`'s investigation back, after `scan` found the
/// directories `dirs`. Writes nothing and calls nothing.
pub(crate) fn read_cached(
    config: &Config,
    scan: BaseScan,
    dirs: &ScannedDirs,
) -> Result<CachedInvestigation, NotCached> {
    let shown = config.target_arg.clone();
    let cache = Cache::find_existing(&config.cache_root, &config.target_canonical)
        .ok_or_else(|| NotCached::NeverInvestigated(shown.clone()))?;
    if cache.written_without_redaction() {
        return Err(NotCached::Unredacted(shown));
    }
    let located = cache.located_entries(EntryKind::Dir);
    if located.is_empty() {
        return Err(NotCached::NeverInvestigated(shown));
    }
    let target = config.target_canonical.as_path();
    let scope = ScanFilter::new(target, &config.scan);
    let situation = Situation::gather(config, &scan, dirs, &scope, Some(&cache));
    let changes = tree_changes(target, &situation, located.iter().map(|(dir, _)| dir));

    let saved = cache
        .read_document::<SavedSynthesis>(SYNTHESIS_FILE)
        .unwrap_or_default();
    let MetaForReport { model, last_run } = cache
        .read_document::<MetaForReport>(META_FILE)
        .unwrap_or_default();
    let mut outcome = Outcome {
        brief: saved.brief.unwrap_or_default(),
        detailed: saved.detailed.unwrap_or_default(),
        sections: saved.sections,
        flags: cache.read_flags_unrepaired(),
        status: last_run
            .as_ref()
            .map(|run| Investigation {
                status: run.status,
                note: run.note.clone(),
                ..Investigation::default()
            })
            .unwrap_or_default(),
        ..Outcome::default()
    };
    let grounding = Scope::from_scan(&scan, &config.target, target);
    // Read as a run reads them; the grounding's summary line goes nowhere.
    let entries = cache.dir_entries(&situation.dirs);
    ground_outcome(
        &cache,
        &grounding,
        &Progress::silent(),
        &situation.dirs,
        entries,
        &mut outcome,
    );
    Ok(CachedInvestigation {
        report: outcome.into_report(scan),
        id: cache.id().to_string(),
        model,
        verdict_at: saved.created_at,
        last_run,
        changes,
    })
}

/// What moved in the tree since its summaries were written: the
/// directories `situation` found changed, and those of the `summarized`
/// ones that no longer exist, each relative to `target` in tree order.
fn tree_changes<'a>(
    target: &Path,
    situation: &Situation,
    summarized: impl Iterator<Item = &'a PathBuf>,
) -> TreeChanges {
    let mut changed: Vec<String> = situation
        .states
        .iter()
        .filter(|(_, state)| **state == DirState::Changed)
        .map(|(dir, _)| relative(target, dir))
        .collect();
    let in_scope: HashSet<&PathBuf> = situation.dirs.iter().collect();
    let mut removed: Vec<String> = summarized
        .filter(|dir| !in_scope.contains(dir) && !dir.is_dir())
        .map(|dir| relative(target, dir))
        .collect();
    changed.sort_by(|a, b| tree_order(a, b));
    removed.sort_by(|a, b| tree_order(a, b));
    TreeChanges { changed, removed }
}

/// Record in `meta.json` how a run that reached its end ended (a failed or
/// interrupted run leaves the last record as it was).
pub(super) fn record_last_run(cache: &Cache, status: &Investigation) -> Result<(), CacheError> {
    let run = LastRun {
        status: status.status,
        note: status.note.clone(),
        finished_at: now_iso(),
    };
    let mut fields = Map::new();
    fields.insert(LAST_RUN_FIELD.to_string(), json!(run));
    cache.update_meta(fields)
}
