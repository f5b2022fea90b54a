//! The synthesis phase: gather the entries of the directories that still
//! exist, reuse `synthesis.json` when none of them changed, or run the
//! synthesis pass (in levels when they do not fit one call) within the
//! money left and save what it wrote. The pass itself is
//! [`crate::ai::passes::synthesis`]'s.

use std::collections::HashMap;
use std::path::PathBuf;

use super::{Phases, save_json};
use crate::ai::engine::plan_money::PlanMoney;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::synthesis::{
    SavedSynthesis, SynthesisOutcome, SynthesisRun, entries_digest, synthesis_entries, synthesize,
};
use crate::ai::rules::levels::Capacity;
use crate::ai::rules::projection::ModelTerms;
use crate::cache::{DirEntry, SYNTHESIS_FILE, now_iso};

/// Phase 8: the synthesis pass over the `entries` of directories that still
/// exist (those [`synthesis_entries`] keeps), or the saved synthesis when
/// those entries have not changed since.
pub(super) async fn synthesis_phase(
    run: &Phases<'_>,
    all_dirs: &[PathBuf],
    entries: &HashMap<PathBuf, DirEntry>,
) -> Result<SynthesisOutcome, InvestigationError> {
    let entries = synthesis_entries(run.ctx.target(), all_dirs, entries);
    let language = run.config.investigation.language.as_deref();
    let digest = entries_digest(&run.ctx.cache, &entries, language);
    if !run.config.investigation.fresh
        && let Some(saved) = run
            .ctx
            .cache
            .read_document::<SavedSynthesis>(SYNTHESIS_FILE)
            .and_then(|saved| saved.reuse(&digest))
    {
        run.ctx
            .progress
            .ai("Synthesis loaded from cache (no summary changed).");
        return Ok(saved);
    }
    run.ctx.progress.ai("Synthesis pass...");
    let model = run.ctx.session.model_facts().model;
    // The synthesis is cut to the money left as the run's plan counts it:
    // dollars, or tokens under a token budget that binds first.
    let plan = PlanMoney::of(&run.config.investigation);
    let budget = plan.budget;
    let terms = ModelTerms::for_run(plan.facts, run.config.investigation.batch);
    let target = run.ctx.target().to_string_lossy();
    let synthesis = SynthesisRun {
        ctx: &run.ctx,
        target: &target,
        capacity: Capacity::new(model.context_window, budget, terms.pricing.prices.input),
        tokens: crate::ai::api::tokens::TokenEstimate::of(model),
        terms,
        money_left: budget.map(|limit| (limit - run.ctx.session.plan_spent()).max(0.0)),
        language,
    };
    let outcome = synthesize(&synthesis, &entries).await?.outcome;
    if outcome.submitted {
        save_json(
            run,
            SYNTHESIS_FILE,
            &SavedSynthesis::of(&outcome, &digest, &now_iso()),
        );
    }
    Ok(outcome)
}
