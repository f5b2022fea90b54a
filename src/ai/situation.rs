//! The run's situation: what it knows before it decides, gathered once:
//! the directories to consider, the scan's figures for each, what the cache
//! holds about them, which saved pass results exist, the budget, and what
//! every loop's shared prompt prefix weighs.
//!
//! The run and `--estimate` gather the same [`Situation`] (the estimate
//! without writing anything: it looks the investigation up read-only) and
//! hand its [`DecisionInputs`] to the one pure decision,
//! [`crate::ai::rules::decide::decide`].

use crate::ai::engine::plan_money::PlanMoney;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::ai::api::catalog::ModelFacts;
use crate::ai::passes::dir_loop::dir_system_prompt;
use crate::ai::passes::survey::{NO_SURVEY, Survey};
use crate::ai::passes::synthesis::{SavedSynthesis, entries_digest, synthesis_entries};
use crate::ai::rules::decide::{DecisionInputs, SavedWork, WorkPlan};
use crate::ai::rules::dir_stats::TreeStats;
use crate::ai::rules::discover::{ChildIndex, Discovery, discover_directories};
use crate::ai::rules::fingerprint::{DirState, classify, fingerprint};
use crate::ai::rules::plan::Plan;
use crate::ai::rules::projection::{SURVEY_BLOCK_BYTES, reference_tokens};
use crate::ai::tools::{self, Toolbox};
use crate::cache::{Cache, DirEntry, PLAN_FILE, SURVEY_FILE, SYNTHESIS_FILE, WORK_PLAN_FILE};
use crate::config::Config;
use crate::scan::{BaseScan, ScanFilter, ScannedDirs};

/// Everything [`DecisionInputs`] borrows, owned.
#[derive(Debug)]
pub(crate) struct Situation {
    /// The canonical target.
    pub target: PathBuf,
    /// Every directory to consider, leaf-first.
    pub dirs: Vec<PathBuf>,
    pub children: ChildIndex,
    pub stats: TreeStats,
    pub states: HashMap<PathBuf, DirState>,
    pub mechanical: HashSet<PathBuf>,
    pub total_files: u64,
    pub fresh: bool,
    /// The saved survey, when one parses.
    pub saved_survey: Option<Survey>,
    /// The saved plan.
    pub saved_plan: Option<Plan>,
    /// The saved work plan.
    pub saved_work: Option<SavedWork>,
    pub synthesis_current: bool,
    pub budget: Option<f64>,
    pub model: ModelFacts,
    /// `--batch`.
    pub batch: bool,
    pub loop_prefix_tokens: u64,
}

impl Situation {
    /// Gather the facts of a run over `config.target` after `scan` (which
    /// found the directories `scanned`), within `scope`, against the
    /// investigation `cache` (none: a fresh start, where no directory has an
    /// entry).
    pub(crate) fn gather(
        config: &Config,
        scan: &BaseScan,
        scanned: &ScannedDirs,
        scope: &ScanFilter,
        cache: Option<&Cache>,
    ) -> Situation {
        let target = config.target_canonical.clone();
        let plan = PlanMoney::of(&config.investigation);
        let discovery = discover_directories(&target, scanned);
        let language = config.investigation.language.as_deref();
        let states = match cache {
            Some(cache) => current_states(cache, &discovery, Some(scope), language),
            None => HashMap::new(),
        };
        let dirs = discovery.dirs;
        let stats = TreeStats::new(&target, &config.target, &scan.classified_files, &dirs);
        let fresh = config.investigation.fresh;
        let entries = cache
            .map(|cache| cache.dir_entries(&dirs))
            .unwrap_or_default();
        let mechanical = entries
            .iter()
            .filter(|(_, entry)| entry.mechanical)
            .map(|(dir, _)| dir.clone())
            .collect();
        let saved = |name: &str| cache.filter(|_| !fresh).and_then(|c| c.read_json(name));
        let saved_survey = saved(SURVEY_FILE).and_then(|v| serde_json::from_value(v).ok());
        let saved_plan = saved(PLAN_FILE).map(|v| Plan::from_value(&v));
        let saved_work = cache
            .filter(|_| !fresh)
            .and_then(|c| c.read_document::<WorkPlan>(WORK_PLAN_FILE))
            .map(|document| SavedWork::of(document, &target));
        // Whether the saved synthesis still holds only matters when nothing
        // is left to investigate.
        let synthesis_current = classify(&dirs, &states).stale.is_empty()
            && cache.is_some_and(|cache| {
                (!fresh)
                    .then(|| cache.read_document::<SavedSynthesis>(SYNTHESIS_FILE))
                    .flatten()
                    .is_some_and(|saved| {
                        let read = synthesis_entries(&target, &dirs, &entries);
                        let digest = entries_digest(cache, &read, language);
                        saved.reuse(&digest).is_some()
                    })
            });
        Situation {
            children: ChildIndex::new(&dirs),
            total_files: scan.file_categories.values().sum(),
            loop_prefix_tokens: loop_prefix_tokens(),
            // The plan counts in dollars, or in tokens under a token budget
            // that binds first.
            budget: plan.budget,
            model: plan.facts,
            batch: config.investigation.batch,
            target,
            dirs,
            stats,
            states,
            mechanical,
            fresh,
            saved_survey,
            saved_plan,
            saved_work,
            synthesis_current,
        }
    }

    /// The situation as [`crate::ai::rules::decide::decide`] reads it.
    pub(crate) fn inputs(&self) -> DecisionInputs<'_> {
        DecisionInputs {
            target: &self.target,
            dirs: &self.dirs,
            children: &self.children,
            stats: &self.stats,
            states: &self.states,
            mechanical: &self.mechanical,
            total_files: self.total_files,
            fresh: self.fresh,
            saved_survey: self.saved_survey.is_some(),
            saved_plan: self.saved_plan.as_ref(),
            saved_work: self.saved_work.as_ref(),
            synthesis_current: self.synthesis_current,
            budget: self.budget,
            model: self.model,
            batch: self.batch,
            loop_prefix_tokens: self.loop_prefix_tokens,
        }
    }
}

/// Tokens of what every dir loop sends before its assignment: the tools
/// and the system prompt (with an allowance for the survey block).
pub(crate) fn loop_prefix_tokens() -> u64 {
    let system = dir_system_prompt(NO_SURVEY, None).map_or(0, |s| s.len() as u64);
    reference_tokens(system + SURVEY_BLOCK_BYTES) + tools_tokens(Toolbox::Dir)
}

/// Tokens of the tool definitions a pass sends with every request.
pub(crate) fn tools_tokens(toolbox: Toolbox) -> u64 {
    let bytes = serde_json::to_vec(&tools::definitions(toolbox)).map_or(0, |json| json.len());
    reference_tokens(bytes as u64)
}

/// What the cache knows about each discovered directory, compared with the
/// fingerprint the scan took (or, for a directory the scan could not
/// examine, with the disk read within `scope`) and with the run's
/// `--language`.
fn current_states(
    cache: &Cache,
    discovery: &Discovery,
    scope: Option<&ScanFilter>,
    language: Option<&str>,
) -> HashMap<PathBuf, DirState> {
    discovery
        .iter()
        .map(|(dir, scanned)| {
            let entry = cache.entry::<DirEntry>(&dir.to_string_lossy());
            let current = match scanned {
                Some(fingerprint) => fingerprint.to_string(),
                None => fingerprint(dir, scope),
            };
            (
                dir.clone(),
                DirState::of(entry.as_ref(), &current, language),
            )
        })
        .collect()
}
