//! The refinement phase (`--refine`): after the synthesis, refine its
//! report in up to `--refine-depth` rounds, within the run's budget,
//! reusing the rounds `refinement.json` holds for the same synthesis; and
//! say what changed. The rounds themselves are
//! [`crate::ai::passes::refine`]'s.

use std::path::PathBuf;

use super::Phases;
use crate::ai::Outcome;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::refine::{
    Draft, RefineRun, RoundEnd, SavedRefinement, round, synthesis_digest,
};
use crate::ai::passes::synthesis::SynthesisOutcome;
use crate::cache::{DirEntry, FileEntry, REFINEMENT_FILE, now_iso};
use crate::money::Usd;
use crate::report::{Flag, RefineStop, Refinement};

/// The report after the refinement, and what it changed.
pub(super) struct Refined {
    pub synthesis: SynthesisOutcome,
    /// What to say of it; `None` without `--refine`.
    pub refinement: Option<Refinement>,
}

impl Refined {
    /// Put the refinement's flags and its account into `outcome` (whose
    /// flags are the recorded ones).
    pub(super) fn apply(self, outcome: &mut Outcome) {
        let Some(refinement) = self.refinement else {
            return;
        };
        let same = |a: &Flag, b: &Flag| {
            a.path == b.path && a.finding == b.finding && a.severity == b.severity
        };
        outcome
            .flags
            .retain(|flag| !refinement.flags_withdrawn.iter().any(|w| same(w, flag)));
        for flag in &refinement.flags_added {
            if !outcome.flags.iter().any(|f| same(f, flag)) {
                outcome.flags.push(flag.clone());
            }
        }
        outcome.status.refinement = Some(refinement);
    }
}

/// The refinement phase over `synthesis` (the entries of `all_dirs` that
/// exist are what it may find uncertain).
pub(super) async fn refine_phase(
    run: &Phases<'_>,
    all_dirs: &[PathBuf],
    synthesis: SynthesisOutcome,
) -> Result<Refined, InvestigationError> {
    let Some(depth) = run.config.investigation.refine else {
        return Ok(Refined {
            synthesis,
            refinement: None,
        });
    };
    if !synthesis.submitted {
        run.ctx
            .progress
            .ai("Refinement skipped: no synthesis was written.");
        return Ok(Refined {
            synthesis,
            refinement: Some(Refinement {
                stopped: RefineStop::NoSynthesis,
                ..Refinement::default()
            }),
        });
    }
    let spent_before = run.ctx.session.spent();
    let first = Draft::new(synthesis.as_report());
    let mut rounds = Rounds::resumed(run, &first, depth as usize);
    if rounds.stopped.is_none() {
        rounds.run(run, all_dirs, depth as usize).await?;
    }
    let refinement = account(
        &first,
        &rounds.draft,
        rounds.done,
        rounds.reused,
        rounds.stopped.unwrap_or(RefineStop::Depth),
        run.ctx.session.spent() - spent_before,
    );
    run.ctx.progress.ai(&refinement.line());
    Ok(Refined {
        synthesis: SynthesisOutcome::submitted(rounds.draft.report.clone()),
        refinement: Some(refinement),
    })
}

/// The refinement's rounds as they go: what is saved, the draft as the
/// rounds left it, how many are done (and of those, read back), and why
/// they stopped, once they have.
struct Rounds {
    saved: SavedRefinement,
    draft: Draft,
    done: usize,
    reused: usize,
    stopped: Option<RefineStop>,
}

impl Rounds {
    /// The rounds an earlier run paid for over the same synthesis (whose
    /// `first` draft this is), up to `depth`, read back from the cache.
    fn resumed(run: &Phases<'_>, first: &Draft, depth: usize) -> Rounds {
        let digest = synthesis_digest(&first.report);
        let saved = SavedRefinement::of(run.ctx.cache.read_document(REFINEMENT_FILE), &digest)
            .unwrap_or(SavedRefinement {
                synthesis_digest: digest,
                rounds: Vec::new(),
                settled: None,
                updated_at: now_iso(),
            });
        let reused = saved.rounds.len().min(depth);
        let draft = saved.rounds[..reused]
            .iter()
            .fold(first.clone(), |draft, round| draft.after(round));
        let stopped = match saved.settled {
            Some(settled) if reused == saved.rounds.len() => Some(settled),
            _ if reused == depth => Some(RefineStop::Depth),
            _ => None,
        };
        if reused > 0 {
            run.ctx.progress.ai(&format!(
                "Refinement: {reused} round{} loaded from cache.",
                if reused == 1 { "" } else { "s" }
            ));
        }
        Rounds {
            saved,
            draft,
            done: reused,
            reused,
            stopped,
        }
    }

    /// Run rounds until one stops them or `depth` are done, each saved as
    /// soon as it is.
    async fn run(
        &mut self,
        run: &Phases<'_>,
        all_dirs: &[PathBuf],
        depth: usize,
    ) -> Result<(), InvestigationError> {
        let (dirs, files) = entries(run, all_dirs);
        let recorded = run.ctx.cache.read_flags();
        let target = run.ctx.target().to_string_lossy();
        let scope = run.grounding();
        let refine = RefineRun {
            ctx: &run.ctx,
            target: &target,
            scope: &scope,
            dirs: &dirs,
            files: &files,
            recorded: &recorded,
            language: run.config.investigation.language.as_deref(),
        };
        while self.stopped.is_none() && self.done < depth {
            match round(&refine, &self.draft, self.done as u32 + 1).await? {
                RoundEnd::Submitted(round) => {
                    // A round that read nothing found nothing new: the
                    // next would not either.
                    if round.reads == 0 {
                        self.saved.settled = Some(RefineStop::NoNewReads);
                        self.stopped = self.saved.settled;
                    }
                    self.draft = self.draft.after(&round);
                    self.saved.rounds.truncate(self.done);
                    self.saved.rounds.push(*round);
                    self.done += 1;
                    save(run, &mut self.saved);
                }
                RoundEnd::Stopped(why) => {
                    if why == RefineStop::NothingToSettle {
                        self.saved.rounds.truncate(self.done);
                        self.saved.settled = Some(why);
                        save(run, &mut self.saved);
                    }
                    self.stopped = Some(why);
                }
            }
        }
        Ok(())
    }
}

/// What the refinement changed, from the synthesis's `first` draft to
/// `last`, in `rounds` rounds (`reused` of them from the cache).
fn account(
    first: &Draft,
    last: &Draft,
    rounds: usize,
    reused: usize,
    stopped: RefineStop,
    cost_usd: Usd,
) -> Refinement {
    Refinement {
        rounds: rounds as u32,
        rounds_reused: reused as u32,
        stopped,
        brief_changed: first.report.brief != last.report.brief,
        detailed_changed: first.report.detailed != last.report.detailed,
        sections_changed: first.report.sections.clone().normalised()
            != last.report.sections.clone().normalised(),
        flags_added: last.added.clone(),
        flags_withdrawn: last.withdrawn.clone(),
        cost_usd,
    }
}

/// Save the refinement's rounds; failing to is only a warning (the next
/// run would pay for them again).
fn save(run: &Phases<'_>, saved: &mut SavedRefinement) {
    saved.updated_at = now_iso();
    if let Err(err) = run.ctx.cache.write_json(REFINEMENT_FILE, &saved) {
        run.ctx
            .progress
            .ai(&format!("Warning: could not save {REFINEMENT_FILE}: {err}"));
    }
}

/// The dir entries of the directories in `all_dirs` that have one, each
/// with its parent's entry, and the file entries.
#[allow(clippy::type_complexity)]
fn entries(
    run: &Phases<'_>,
    all_dirs: &[PathBuf],
) -> (Vec<(DirEntry, Option<DirEntry>)>, Vec<FileEntry>) {
    let cache = &run.ctx.cache;
    let by_dir = cache.dir_entries(all_dirs);
    let target = run.ctx.target();
    let mut dirs: Vec<(DirEntry, Option<DirEntry>)> = all_dirs
        .iter()
        .filter_map(|dir| {
            let entry = by_dir.get(dir)?.clone();
            let parent = dir
                .parent()
                .filter(|_| dir.as_path() != target)
                .and_then(|parent| by_dir.get(parent).cloned());
            Some((entry, parent))
        })
        .collect();
    dirs.sort_by(|a, b| a.0.relative_path.cmp(&b.0.relative_path));
    let files = cache
        .located::<FileEntry>()
        .into_iter()
        .filter(|(path, _)| path.is_file())
        .map(|(_, entry)| entry)
        .collect();
    (dirs, files)
}
