//! The survey phase: carry out what the decision chose for the survey
//! (reuse `survey.json`, skip it for a tiny target, run the pass, or none)
//! and say what it found. The pass itself (prompt, model call) is
//! [`crate::ai::passes::survey`]'s.

use std::sync::Mutex;
use std::thread::JoinHandle;

use serde_json::Value;

use super::{Phases, save_json};
use crate::ai::api::settings::Workload;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::one_call::converse;
use crate::ai::passes::survey::{
    SURVEY_CALL, Survey, SurveyInputs, read_survey, survey_prompt, survey_report_lines,
};
use crate::ai::rules::decide::PassChoice;
use crate::ai::rules::room::{Part, Room};
use crate::ai::rules::tree_view::prompt_tree;
use crate::ai::situation::Situation;
use crate::cache::{Cache, SURVEY_FILE};
use crate::config::Config;
use crate::scan::ScanFilter;

/// Depth of the tree the survey sees.
pub(crate) const SURVEY_TREE_DEPTH: usize = 2;

/// The survey's two-level tree, walked on a thread of its own from the
/// moment the investigation is open: the run gathers its situation and
/// decides meanwhile, so the walk (a thousand directories on a large tree)
/// no longer stands between the scan and the survey's request.
pub(super) struct SurveyTree(Mutex<Option<JoinHandle<String>>>);

impl SurveyTree {
    /// Start walking the tree of `config`'s target, unless `cache` holds a
    /// survey (a resumed run reuses it, and needs no tree).
    pub(super) fn start(config: &Config, cache: &Cache) -> SurveyTree {
        if cache.read_json(SURVEY_FILE).is_some() && !config.investigation.fresh {
            return SurveyTree(Mutex::new(None));
        }
        let target = config.target_canonical.clone();
        let options = config.scan.clone();
        let room = Room::of(config.investigation.model_facts.model, Workload::Judgment);
        let room = room.bytes(Part::Tree);
        let walk = std::thread::Builder::new()
            .name("survey-tree".into())
            .spawn(move || {
                let scope = ScanFilter::new(&target, &options);
                prompt_tree(&target, &scope, SURVEY_TREE_DEPTH, room)
            });
        SurveyTree(Mutex::new(walk.ok()))
    }

    /// The tree walked, when a walk was started and it finished.
    fn take(&self) -> Option<String> {
        let walk = self.0.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        walk.join().ok()
    }
}

/// The survey's prompt (its two-level tree and the scan's signals, each
/// within its room in the model's window).
pub(super) fn survey_system(run: &Phases<'_>) -> Result<String, InvestigationError> {
    let room = Room::of(run.ctx.session.model_facts().model, Workload::Judgment);
    let tree_preview = run.survey_tree.take().unwrap_or_else(|| {
        let bytes = room.bytes(Part::Tree);
        prompt_tree(run.ctx.target(), &run.ctx.scope, SURVEY_TREE_DEPTH, bytes)
    });
    let target = run.ctx.target().to_string_lossy();
    let inputs = SurveyInputs {
        target: &target,
        signals: &run.scan.survey_signals,
        tree_preview: &tree_preview,
        room,
    };
    survey_prompt(&inputs)
}

/// Phase 3: the survey as decided: the saved one, the synthetic one of a
/// tiny target, a new one (over `system`, its prompt, when it runs), or
/// none when nothing is left to investigate.
pub(super) async fn survey_phase(
    run: &Phases<'_>,
    situation: &Situation,
    choice: PassChoice,
    system: Option<String>,
) -> Result<Option<Survey>, InvestigationError> {
    let survey = match choice {
        PassChoice::NotNeeded => return Ok(None),
        PassChoice::Reuse => {
            run.ctx.progress.ai("Survey loaded from cache.");
            situation.saved_survey.clone()
        }
        PassChoice::Skip => {
            run.ctx.progress.ai(&format!(
                "Survey skipped — {} files, {} dirs (below threshold).",
                situation.total_files,
                situation.dirs.len()
            ));
            Some(Survey::skipped())
        }
        PassChoice::Run => {
            run.ctx.progress.ai("Survey pass...");
            let system = match system {
                Some(system) => system,
                None => survey_system(run)?,
            };
            let ctx = &run.ctx;
            let end = converse(ctx, SURVEY_CALL, system, false).await?;
            let survey = read_survey(ctx, end);
            if let Some(survey) = &survey {
                save_json(
                    run,
                    SURVEY_FILE,
                    &serde_json::to_value(survey).unwrap_or(Value::Null),
                );
            }
            survey
        }
    };
    // What the survey found, in one line; its notes and tool lists are
    // the full trace's.
    for (i, line) in survey_report_lines(survey.as_ref()).iter().enumerate() {
        if i == 0 {
            run.ctx.progress.ai(line);
        } else {
            run.ctx.progress.ai_detail(line);
        }
    }
    Ok(survey)
}
