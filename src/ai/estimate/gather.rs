//! The I/O half of `--estimate`: measure what a run would send, reading the
//! target and the cache but writing nothing and calling nothing.
//!
//! It gathers the run's own situation ([`Situation`]) read-only, takes the run's
//! own decision ([`decide`]) and renders the real prompts of that decision
//! through the passes' own builders (the survey and planning prompts, each
//! loop's system prompt and assignment, the synthesis's sections and
//! layout), so the estimate moves when any of them changes.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::calibrate::Probe;
use super::{Counts, Estimate};
use crate::ai::api::settings::Workload;
use crate::ai::engine::plan_money::PlanMoney;
use crate::ai::failure::InvestigationError;
use crate::ai::orchestrator::{SURVEY_TREE_DEPTH, planning_tree, spending};
use crate::ai::passes::dir_loop::{
    TaskRoom, compose_dir_task, dir_context_in, dir_system_prompt, named_child_entries,
    outside_children,
};
use crate::ai::passes::planning::{PlanningInputs, planning_prompt};
use crate::ai::passes::survey::{NO_SURVEY, SurveyInputs, format_survey_signals, survey_prompt};
use crate::ai::passes::synthesis::{lay_out, synthesis_entries, synthesis_prompt};
use crate::ai::prompts::kickoff;
use crate::ai::rules::decide::{
    Decision, MECHANICAL_SECTION_BYTES, PassChoice, PlannedLoop, SECTION_BYTES, decide,
    expected_read_bytes,
};
use crate::ai::rules::discover::relative;
use crate::ai::rules::levels::{Capacity, call_inputs};
use crate::ai::rules::projection::{
    Ceiling, DirInput, GROUP_OUTPUT_TOKENS, Inputs, ModelTerms, SUMMARY_BYTES, SURVEY_BLOCK_BYTES,
    reference_tokens,
};
use crate::ai::rules::room::{Part, Room};
use crate::ai::rules::tree_view::prompt_tree;
use crate::ai::situation::{Situation, tools_tokens};
use crate::ai::tools::Toolbox;
use crate::cache::{Cache, DirEntry};
use crate::config::Config;
use crate::scan::{BaseScan, ScanFilter, ScannedDirs};

/// A prompt could not be built (a template and its caller disagree).
#[derive(Debug, thiserror::Error)]
#[error("building the {pass} prompt for the estimate: {source}")]
pub(crate) struct EstimateError {
    pass: &'static str,
    #[source]
    source: Box<InvestigationError>,
}

fn prompt_error(pass: &'static str) -> impl Fn(InvestigationError) -> EstimateError {
    move |err| EstimateError {
        pass,
        source: Box::new(err),
    }
}

/// Project the cost of investigating `config.target` after `scan`, over the
/// directories it found (`dirs`).
pub(crate) fn estimate(
    config: &Config,
    scan: &BaseScan,
    dirs: &ScannedDirs,
) -> Result<Estimate, EstimateError> {
    let target = config.target_canonical.as_path();
    let scope = ScanFilter::new(target, &config.scan);
    let cache = existing_investigation(config);
    let situation = Situation::gather(config, scan, dirs, &scope, cache.as_ref());
    let decision = decide(&situation.inputs(), None);
    let measure = Measure {
        config,
        scan,
        scope: &scope,
        cache: cache.as_ref(),
        situation: &situation,
        decision: &decision,
        renewed: decision.renewed(),
        surveyed: matches!(decision.survey, PassChoice::Run | PassChoice::Reuse),
        room: Room::of(config.investigation.model_facts.model, Workload::Judgment),
    };
    let kept = |dir: &Path| measure.kept(dir);

    let survey = measure.survey()?;
    let planning = measure.planning()?;
    let (loops, probe) = measure.loops()?;
    let synthesis = if decision.work.synthesis.reused {
        Vec::new()
    } else {
        synthesis_calls(config, &situation, &decision, &kept)?
    };

    let inputs = Inputs {
        survey,
        planning,
        synthesis,
        dirs: loops,
        ceiling: Ceiling::with_tokens(
            config.investigation.budget,
            config.investigation.max_cost,
            config.investigation.token_budget,
        ),
    };
    let mut estimate = Estimate::new(measure.counts(), &inputs);
    estimate.counts.synthesis_levels = synthesis_levels(config, &situation, &decision, &kept);
    estimate.probe = probe;
    Ok(estimate)
}

/// What the estimate measures each pass's prompts against: the run's
/// situation and decision, and the investigation it would resume.
struct Measure<'a> {
    config: &'a Config,
    scan: &'a BaseScan,
    scope: &'a ScanFilter,
    cache: Option<&'a Cache>,
    situation: &'a Situation,
    decision: &'a Decision,
    /// Directories that get a new entry this run.
    renewed: HashSet<&'a Path>,
    /// Whether later prompts carry the survey block (run or reused).
    surveyed: bool,
    /// The room the one-call passes' prompts have.
    room: Room,
}

impl Measure<'_> {
    /// The entry a run would keep for `dir`: the cached one, unless the
    /// run writes it anew.
    fn kept(&self, dir: &Path) -> Option<DirEntry> {
        self.cache
            .filter(|_| !self.renewed.contains(dir))
            .and_then(|c| c.entry::<DirEntry>(&dir.to_string_lossy()))
    }

    /// Prompt tokens of the survey call, when the survey runs.
    fn survey(&self) -> Result<Option<u64>, EstimateError> {
        if self.decision.survey != PassChoice::Run {
            return Ok(None);
        }
        let target = self.config.target_canonical.as_path();
        let tree_preview = prompt_tree(
            target,
            self.scope,
            SURVEY_TREE_DEPTH,
            self.room.bytes(Part::Tree),
        );
        let prompt = survey_prompt(&SurveyInputs {
            target: &target.to_string_lossy(),
            signals: &self.scan.survey_signals,
            tree_preview: &tree_preview,
            room: self.room,
        })
        .map_err(prompt_error("survey"))?;
        Ok(Some(call_tokens(&prompt, kickoff::SURVEY, Toolbox::Survey)))
    }

    /// Prompt tokens of the planning call, when planning runs.
    fn planning(&self) -> Result<Option<u64>, EstimateError> {
        if self.decision.planning != PassChoice::Run {
            return Ok(None);
        }
        let target = self.config.target_canonical.as_path();
        let cached_rel: Vec<String> = self
            .decision
            .freshness
            .fresh
            .iter()
            .map(|d| relative(target, d))
            .collect();
        let prompt = planning_prompt(&PlanningInputs {
            target: &target.to_string_lossy(),
            survey_block: NO_SURVEY,
            tree_text: &planning_tree(target, self.scope, self.situation, &self.room),
            file_signals: &format_survey_signals(
                &self.scan.survey_signals,
                self.room.bytes(Part::Signals),
            ),
            dir_count: self.situation.dirs.len(),
            cached_dirs: &cached_rel,
            spending: spending(self.decision),
        })
        .map_err(prompt_error("planning"))?;
        Ok(Some(
            call_tokens(&prompt, kickoff::PLANNING, Toolbox::Planning)
                + survey_block(self.surveyed),
        ))
    }

    /// Each dir loop's projected input, and the first loop's prompt as the
    /// probe the calibration counts.
    fn loops(&self) -> Result<(Vec<DirInput>, Option<Probe>), EstimateError> {
        let config = self.config;
        let situation = self.situation;
        let system = dir_system_prompt(NO_SURVEY, config.investigation.language.as_deref())
            .map_err(prompt_error("directory"))?;
        let shared_prefix = reference_tokens(system.len() as u64) + tools_tokens(Toolbox::Dir);
        let mut loops = Vec::with_capacity(self.decision.work.loops.len());
        let mut probe = None;
        for (n, planned) in self.decision.work.loops.iter().enumerate() {
            let unit = &planned.unit;
            let (task, pending) = self.loop_task(planned)?;
            if n == 0 {
                probe = Some(Probe::of_loop(
                    &config.investigation.model,
                    config.investigation.model_facts,
                    &system,
                    &task,
                ));
            }
            loops.push(DirInput {
                prompt_tokens: shared_prefix
                    + reference_tokens(task.len() as u64)
                    + pending * reference_tokens(SUMMARY_BYTES as u64)
                    + survey_block(self.surveyed),
                read_tokens: unit
                    .dirs()
                    .map(|d| reference_tokens(situation.stats.of(d).read_bytes))
                    .sum(),
                read_tokens_low: reference_tokens(expected_read_bytes(&situation.stats, unit)),
                turns: planned.turns,
                // The first loop writes the shared prefix; the others read it.
                prefix_tokens: if n == 0 { 0 } else { shared_prefix },
            });
        }
        Ok((loops, probe))
    }

    /// One loop's real assignment, and how many of its children are
    /// summarized this run (each counted as an allowance, since their
    /// summaries are not written yet).
    fn loop_task(&self, planned: &PlannedLoop) -> Result<(String, u64), EstimateError> {
        let target = self.config.target_canonical.as_path();
        let unit = &planned.unit;
        let outside = outside_children(&self.situation.children, &unit.root, &unit.members);
        let children = named_child_entries(&outside, |child| self.kept(child));
        let pending = outside
            .iter()
            .filter(|child| self.renewed.contains(child.as_path()))
            .count() as u64;
        let listings: Vec<String> = unit
            .dirs()
            .map(|dir| dir_context_in(target, dir, Some(self.scope)))
            .collect();
        let task = compose_dir_task(
            target,
            &unit.root,
            &unit.members,
            planned.turns,
            &listings,
            &children,
            TaskRoom::of(self.config.investigation.model_facts.model),
        )
        .map_err(prompt_error("directory"))?;
        Ok((task, pending))
    }

    /// The counts the estimate reports beside its projection.
    fn counts(&self) -> Counts {
        let config = self.config;
        let decision = self.decision;
        let directories = decision.directory_counts(self.situation.dirs.len());
        Counts {
            target: config.target.to_string_lossy().into_owned(),
            model: config.investigation.model.clone(),
            model_facts: config.investigation.model_facts,
            model_warning: crate::ai::model_warning(&config.investigation),
            investigation_id: self.cache.map(|c| c.id().to_string()),
            batch: config.investigation.batch,
            directories_total: directories.total,
            directories_cached: directories.cached,
            directories_skipped: directories.skipped,
            budget_usd: config.investigation.budget,
            max_cost_usd: config.investigation.max_cost,
            token_budget: config.investigation.token_budget,
            tokens_per_second: config.investigation.tokens_per_second,
            plan_meter: PlanMoney::of(&config.investigation).meter,
            budget_binding: decision.work.budget.binding,
            units: decision.work.budget.units,
            loops_affordable: decision.work.budget.loops_affordable,
            directories_folded: decision.folded(),
            directories_mechanical: directories.from_scan,
            synthesis_levels: 0,
            token_calibration: None,
            token_calibration_error: None,
        }
    }
}

/// The entries the synthesis would read after the run: the kept ones as
/// they are, and one with an allowance-sized summary for each directory a
/// loop (or the scan) summarizes this run.
fn entries_after(
    target: &Path,
    situation: &Situation,
    decision: &Decision,
    kept: &dyn Fn(&Path) -> Option<DirEntry>,
) -> Vec<DirEntry> {
    // The same allowances the decision projects the synthesis with.
    let allowance = "x".repeat(SECTION_BYTES as usize);
    let scan_allowance = "x".repeat(MECHANICAL_SECTION_BYTES as usize);
    let mechanical: HashSet<&Path> = decision
        .work
        .mechanical
        .iter()
        .map(PathBuf::as_path)
        .collect();
    let looped: HashSet<&Path> = decision
        .work
        .loops
        .iter()
        .flat_map(|l| l.unit.dirs())
        .map(PathBuf::as_path)
        .collect();
    let entries: HashMap<PathBuf, DirEntry> = situation
        .dirs
        .iter()
        .filter_map(|dir| {
            let projected = |summary: &str, mechanical| DirEntry {
                relative_path: relative(target, dir),
                dominant_category: "unknown".to_string(),
                summary: summary.to_string(),
                mechanical,
                ..DirEntry::default()
            };
            let entry = if looped.contains(dir.as_path()) {
                projected(&allowance, false)
            } else if mechanical.contains(dir.as_path()) {
                projected(&scan_allowance, true)
            } else {
                kept(dir)?
            };
            Some((dir.clone(), entry))
        })
        .collect();
    synthesis_entries(target, &situation.dirs, &entries)
}

/// What the synthesis would carry: the capacity of a call, and the
/// layout of the entries after the run.
fn synthesis_layout(
    config: &Config,
    situation: &Situation,
    decision: &Decision,
    kept: &dyn Fn(&Path) -> Option<DirEntry>,
) -> crate::ai::passes::synthesis::LaidOut {
    let model = config.investigation.model_facts.model;
    // Priced as the decision was: in the plan's meter.
    let plan = PlanMoney::of(&config.investigation);
    let terms = ModelTerms::for_run(plan.facts, config.investigation.batch);
    let capacity = Capacity::new(
        model.context_window,
        decision.work.budget.limit,
        terms.pricing.prices.input,
    );
    let entries = entries_after(&situation.target, situation, decision, kept);
    let money_left = decision
        .work
        .budget
        .limit
        .filter(|_| decision.work.budget.binding)
        .map(|_| decision.work.budget.synthesis_reserve);
    lay_out(
        &entries,
        capacity,
        crate::ai::api::tokens::TokenEstimate::of(model),
        &terms,
        money_left,
    )
}

/// Prompt tokens of each synthesis call: its sections, its own text, the
/// kickoff and the tools.
fn synthesis_calls(
    config: &Config,
    situation: &Situation,
    decision: &Decision,
    kept: &dyn Fn(&Path) -> Option<DirEntry>,
) -> Result<Vec<u64>, EstimateError> {
    let laid = synthesis_layout(config, situation, decision, kept);
    let language = config.investigation.language.as_deref();
    let empty = synthesis_prompt(&situation.target.to_string_lossy(), &[], language)
        .map_err(prompt_error("synthesis"))?;
    let fixed = call_tokens(&empty, kickoff::SYNTHESIS, Toolbox::Synthesis);
    // The layout counts the model's tokens; the inputs are reference
    // tokens, which the projection scales.
    let scale = ModelTerms::new(config.investigation.model_facts).text_scale;
    Ok(
        call_inputs(&laid.sections, &laid.layout, GROUP_OUTPUT_TOKENS)
            .into_iter()
            .map(|sections| (sections as f64 / scale).ceil() as u64 + fixed)
            .collect(),
    )
}

/// Levels below the verdict the synthesis would take.
fn synthesis_levels(
    config: &Config,
    situation: &Situation,
    decision: &Decision,
    kept: &dyn Fn(&Path) -> Option<DirEntry>,
) -> usize {
    if decision.work.synthesis.reused {
        return 0;
    }
    synthesis_layout(config, situation, decision, kept)
        .layout
        .levels
        .len()
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
    reference_tokens((system.len() + kickoff.len()) as u64) + tools_tokens(toolbox)
}

/// The survey block's allowance, when there is a survey.
fn survey_block(surveyed: bool) -> u64 {
    if surveyed {
        reference_tokens(SURVEY_BLOCK_BYTES)
    } else {
        0
    }
}
