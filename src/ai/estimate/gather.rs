//! The I/O half of `--estimate`: measure what a run would send, reading the
//! target and the cache but writing nothing and calling nothing.
//!
//! It follows the run's own phases (discovery among the scan's directories,
//! the tiny target rule, partition by the scan's fingerprints against the
//! dir entries, a saved survey, plan and synthesis on resume) and renders
//! the real prompts through the passes' own builders, so the estimate moves
//! when they change.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Counts, DirInput, Estimate, Inputs, SUMMARY_BYTES, SURVEY_BLOCK_BYTES};
use super::{read_tokens, tokens_of_bytes};
use crate::ai::PassError;
use crate::ai::orchestrator::{
    PLANNING_TREE_DEPTH, SURVEY_TREE_DEPTH, current_states, discover, settle_plan,
};
use crate::ai::passes::dir_loop::{compose_dir_prompt, dir_context_in, named_child_entries};
use crate::ai::passes::planning::{PlanningInputs, planning_prompt};
use crate::ai::passes::survey::{
    NO_SURVEY, SurveyInputs, format_survey_signals, should_skip_survey, survey_prompt,
};
use crate::ai::passes::synthesis::{
    entries_digest, report_order, reusable_synthesis, synthesis_prompt,
};
use crate::ai::prompts::kickoff;
use crate::ai::rules::discover::{ChildIndex, relative};
use crate::ai::rules::fingerprint::classify;
use crate::ai::rules::plan::Plan;
use crate::ai::rules::tree_view::prompt_tree;
use crate::ai::tools::{self, Toolbox};
use crate::cache::{Cache, EntryKind, PLAN_FILE, SURVEY_FILE, SYNTHESIS_FILE};
use crate::config::Config;
use crate::scan::{BaseScan, ScanFilter, ScannedDirs};

/// A prompt could not be built (a template and its caller disagree).
#[derive(Debug, thiserror::Error)]
#[error("building the {pass} prompt for the estimate: {message}")]
pub struct EstimateError {
    pass: &'static str,
    message: String,
}

fn prompt_error(pass: &'static str) -> impl Fn(PassError) -> EstimateError {
    move |err| EstimateError {
        pass,
        message: match err {
            PassError::Fatal(err) => err.to_string(),
            PassError::Failed(message) => message,
        },
    }
}

/// Project the cost of investigating `config.target` after `scan`, over the
/// directories it found (`dirs`).
pub fn estimate(
    config: &Config,
    scan: &BaseScan,
    dirs: &ScannedDirs,
) -> Result<Estimate, EstimateError> {
    let target = config.target_canonical.as_path();
    let target_text = target.to_string_lossy();
    let scope = ScanFilter::new(target, &config.scan);
    let discovery = discover(target, dirs);
    let cache = existing_investigation(config);
    let states = match &cache {
        Some(cache) => current_states(cache, &discovery, Some(&scope)),
        None => HashMap::new(),
    };
    let all_dirs = discovery.dirs;
    let total_files: u64 = scan.file_categories.values().sum();
    let tiny = should_skip_survey(total_files, all_dirs.len());
    let first_look = classify(&all_dirs, &states);
    let something_stale = !first_look.stale.is_empty();
    // A resumed run loads plan.json instead of planning (never for a tiny
    // target, which always takes the default plan).
    let saved = |name: &str| {
        cache
            .as_ref()
            .filter(|_| !tiny)
            .and_then(|c| c.read_json(name))
    };
    let saved_plan = saved(PLAN_FILE).map(|value| Plan::from_value(&value));
    let plan = saved_plan.clone().unwrap_or_default();
    let (applied, freshness) = settle_plan(&all_dirs, &states, &first_look, &plan, target);
    let stale: HashSet<&PathBuf> = freshness.stale.iter().map(|(dir, _)| dir).collect();

    let survey = if tiny || !something_stale || saved(SURVEY_FILE).is_some() {
        None
    } else {
        let tree_preview = prompt_tree(target, &scope, SURVEY_TREE_DEPTH);
        let prompt = survey_prompt(&SurveyInputs {
            target: &target_text,
            signals: &scan.survey_signals,
            tree_preview: &tree_preview,
        })
        .map_err(prompt_error("survey"))?;
        Some(call_tokens(&prompt, kickoff::SURVEY, Toolbox::Survey))
    };
    let planning = if tiny || !something_stale || saved_plan.is_some() {
        None
    } else {
        let cached_rel: Vec<String> = first_look
            .fresh
            .iter()
            .map(|d| relative(target, d))
            .collect();
        let prompt = planning_prompt(&PlanningInputs {
            target: &target_text,
            survey_block: NO_SURVEY,
            tree_text: &prompt_tree(target, &scope, PLANNING_TREE_DEPTH),
            file_signals: &format_survey_signals(&scan.survey_signals),
            dir_count: all_dirs.len(),
            cached_dirs: &cached_rel,
        })
        .map_err(prompt_error("planning"))?;
        Some(call_tokens(&prompt, kickoff::PLANNING, Toolbox::Planning) + survey_block(!tiny))
    };

    let files = file_tokens_by_dir(config, scan);
    let dir_tools = tools_tokens(Toolbox::Dir);
    let child_index = ChildIndex::new(&all_dirs);
    let mut dirs = Vec::with_capacity(applied.order.len());
    for dir in &applied.order {
        let turns = applied.turns_for(dir);
        // A child investigated again is counted by `pending` below.
        let children = named_child_entries(child_index.of(dir), |child| {
            cache
                .as_ref()
                .filter(|_| !stale.contains(child))
                .and_then(|c| c.read_entry(EntryKind::Dir, &child.to_string_lossy()))
        });
        let pending = child_index
            .of(dir)
            .iter()
            .filter(|child| stale.contains(*child))
            .count() as u64;
        let listing = dir_context_in(target, dir, Some(&scope));
        let prompt = compose_dir_prompt(target, dir, turns, &listing, &children, NO_SURVEY)
            .map_err(prompt_error("directory"))?;
        dirs.push(DirInput {
            prompt_tokens: tokens_of_bytes((prompt.len() + kickoff::DIR.len()) as u64)
                + dir_tools
                + pending * tokens_of_bytes(SUMMARY_BYTES as u64)
                + survey_block(!tiny),
            read_tokens: files.get(dir).copied().unwrap_or(0),
            turns,
        });
    }

    // Synthesis reads the entries of the directories that still exist: those
    // that stay, and one summary-sized entry per directory investigated now.
    // When none is investigated, a saved synthesis of the same entries is
    // reused as the run would.
    let kept: Vec<Value> = all_dirs
        .iter()
        .filter(|dir| !stale.contains(dir))
        .filter_map(|dir| {
            cache
                .as_ref()
                .and_then(|c| c.read_entry(EntryKind::Dir, &dir.to_string_lossy()))
        })
        .collect();
    let reused = applied.order.is_empty()
        && cache.as_ref().is_some_and(|c| {
            let digest = entries_digest(&report_order(kept.clone()));
            reusable_synthesis(c.read_json(SYNTHESIS_FILE).as_ref(), &digest).is_some()
        });
    let synthesis = if reused {
        None
    } else {
        let allowance = "x".repeat(SUMMARY_BYTES);
        let mut entries = kept;
        entries.extend(applied.order.iter().map(|dir| {
            json!({"relative_path": relative(target, dir), "dominant_category": "unknown",
                   "summary": allowance})
        }));
        let prompt = synthesis_prompt(&target_text, &report_order(entries))
            .map_err(prompt_error("synthesis"))?;
        Some(call_tokens(&prompt, kickoff::SYNTHESIS, Toolbox::Synthesis))
    };

    let inputs = Inputs {
        survey,
        planning,
        synthesis,
        dirs,
    };
    let counts = Counts {
        target: config.target.to_string_lossy().into_owned(),
        model: config.investigation.model.clone(),
        model_warning: crate::ai::model_warning(&config.investigation.model),
        investigation_id: cache.as_ref().map(|c| c.id().to_string()),
        batch: config.investigation.batch,
        total: all_dirs.len(),
        cached: freshness.fresh.len(),
        skipped: applied.skipped.len(),
    };
    Ok(Estimate::new(counts, &inputs))
}

/// The investigation a run would resume, looked up without writing: none
/// with `--fresh`, and none when a redacting run would refuse it (it was
/// written with `--no-redact`) and start fresh.
fn existing_investigation(config: &Config) -> Option<Cache> {
    if config.investigation.fresh {
        return None;
    }
    Cache::find_existing(&config.cache_root, &config.target_canonical)
        .filter(|cache| !(config.investigation.redact && cache.written_without_redaction()))
}

/// Tokens of one call's fixed input: system prompt, kickoff, tools.
fn call_tokens(system: &str, kickoff: &str, toolbox: Toolbox) -> u64 {
    tokens_of_bytes((system.len() + kickoff.len()) as u64) + tools_tokens(toolbox)
}

/// Tokens of the tool definitions a pass sends with every request.
fn tools_tokens(toolbox: Toolbox) -> u64 {
    let bytes = serde_json::to_vec(&tools::definitions(toolbox)).map_or(0, |json| json.len());
    tokens_of_bytes(bytes as u64)
}

/// The survey block's allowance, when a survey runs.
fn survey_block(surveyed: bool) -> u64 {
    if surveyed {
        tokens_of_bytes(SURVEY_BLOCK_BYTES)
    } else {
        0
    }
}

/// [`read_tokens`] of the scanned files directly in each directory, keyed
/// by the canonical directory (the scan names files under `config.target`).
fn file_tokens_by_dir(config: &Config, scan: &BaseScan) -> HashMap<PathBuf, u64> {
    let mut sizes: HashMap<PathBuf, Vec<u64>> = HashMap::new();
    for file in &scan.classified_files {
        let path = Path::new(&file.path);
        let Some(parent) = path.parent() else {
            continue;
        };
        let Ok(rel) = parent.strip_prefix(&config.target) else {
            continue;
        };
        let dir = if rel.as_os_str().is_empty() {
            config.target_canonical.clone()
        } else {
            config.target_canonical.join(rel)
        };
        sizes.entry(dir).or_default().push(file.size);
    }
    sizes
        .into_iter()
        .map(|(dir, sizes)| (dir, read_tokens(sizes)))
        .collect()
}
