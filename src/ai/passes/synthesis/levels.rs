//! Synthesis in levels, carried out: the run's half of
//! [`crate::ai::rules::levels`].
//!
//! Every section is first cut to a quarter of what one call may carry, so
//! that each group holds several and the levels always narrow; when the run
//! has a budget and the calls would cost more than the money left, the
//! sections are cut shorter still. No request is ever larger than the
//! window: the input shrinks instead. When everything fits one call uncut,
//! this is the one-call synthesis it always was.
//!
//! A group's `submit_report` may fill the domain sections too: they are
//! shown to the level above with the group's summary, and whatever a level
//! leaves empty is filled from the levels below it
//! ([`Sections::fill_from`]), so what a part found reaches the report.
//!
//! Each group's summary is saved in `synthesis_groups.json` under the
//! digest of its input, so a rerun after a change pays only for the groups
//! the change reaches (their input differs) and the verdict. The file is
//! written after every group, so an interrupted synthesis keeps what it
//! paid for.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use super::groups::{GroupSummary, Groups, digest, save_groups, saved_groups};
use super::sections::sections_for_prompt;
use super::{
    SYNTHESIS_CALL, SubmittedReport, SynthesisOutcome, WITHOUT_VERDICT, render_summaries,
    run_synthesis, synthesize_from_cache, verdict_of,
};
use crate::ai::api::tokens::TokenEstimate;
use crate::ai::engine::context::RunContext;
use crate::ai::engine::conversation::CallEnd;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::one_call::converse;
use crate::ai::passes::record_refusal;
use crate::ai::prompts::{SynthesisGroupPrompt, SynthesisPrompt, language_rule};
use crate::ai::rules::decide::synthesis_cost;
use crate::ai::rules::levels::{self, Capacity, Layout, Output, Section};
use crate::ai::rules::projection::GROUP_OUTPUT_TOKENS;
use crate::ai::rules::projection::ModelTerms;
use crate::ai::tools::frame_untrusted;
use crate::cache::{DirEntry, SYNTHESIS_GROUPS_FILE, now_iso};
use crate::report::Sections;
use crate::text::{cut_marked, escape_line};

/// Sections are never cut shorter than this many bytes.
pub(super) const MIN_SECTION_BYTES: u64 = 240;
/// A part's label names at most this many of its inputs.
const LABEL_NAMES: usize = 3;

/// What a synthesis needs besides its entries.
pub(crate) struct SynthesisRun<'a> {
    /// The session, cache and progress every call of it uses.
    pub ctx: &'a RunContext,
    /// The canonical target, as the prompts show it.
    pub target: &'a str,
    /// What one call may carry.
    pub capacity: Capacity,
    /// How many tokens the model makes of text (catalog).
    pub tokens: TokenEstimate,
    /// What the calls cost.
    pub terms: ModelTerms,
    /// Money left for the synthesis, when the run has a budget.
    pub money_left: Option<f64>,
    /// What the summaries and the verdict are written in (`--language`).
    pub language: Option<&'a str>,
}

/// What [`synthesize`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Synthesized {
    pub outcome: SynthesisOutcome,
    /// Levels below the verdict (0: one call).
    pub levels: usize,
    /// Group summaries read back from `synthesis_groups.json`.
    pub groups_reused: usize,
}

/// One input of a level: its text and its label, and the domain sections
/// of what it summarises (none for a directory's summary).
#[derive(Debug, Clone)]
struct Input {
    label: String,
    text: String,
    sections: Sections,
}

/// A group of a level: its summary saved by an earlier run, or the system
/// prompt of the call that writes it.
enum GroupCall {
    Saved(Box<GroupSummary>),
    Ask(String),
}

/// `text` cut to at most `max_bytes` (on a character boundary), marked.
fn cut(text: &str, max_bytes: u64) -> String {
    let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    cut_marked(text, max, "\n[... cut to fit the synthesis]\n")
}

/// How a synthesis over some entries is laid out.
#[derive(Debug, Clone)]
pub(crate) struct LaidOut {
    /// Level 1's inputs: each entry's section, cut, in tree order.
    inputs: Vec<Input>,
    /// Their sizes.
    pub sections: Vec<Section>,
    pub layout: Layout,
    /// No section had to be cut.
    pub uncut: bool,
}

/// Lay out a synthesis over `entries` for calls of `capacity`: sections cut
/// to a quarter of a call, then shorter while the calls would cost more
/// than `money_left` (on `terms`).
pub(crate) fn lay_out(
    entries: &[DirEntry],
    capacity: Capacity,
    estimate: TokenEstimate,
    terms: &ModelTerms,
    money_left: Option<f64>,
) -> LaidOut {
    let mut ordered: Vec<(String, &DirEntry)> = entries
        .iter()
        .map(|entry| {
            let rel = match entry.relative_path.as_str() {
                "" => "?",
                rel => rel,
            };
            (rel.to_string(), entry)
        })
        .collect();
    ordered.sort_by(|a, b| levels::tree_key(&a.0).cmp(&levels::tree_key(&b.0)));
    let texts: Vec<String> = ordered
        .iter()
        .map(|(_, entry)| render_summaries(std::slice::from_ref(*entry)))
        .collect();
    let mut limit = estimate.bytes_expected_within(capacity.tokens / 4);
    loop {
        let inputs: Vec<Input> = ordered
            .iter()
            .zip(&texts)
            .map(|((rel, _), text)| Input {
                label: format!("{}/", escape_line(rel)),
                text: cut(text, limit),
                sections: Sections::default(),
            })
            .collect();
        let sections: Vec<Section> = ordered
            .iter()
            .zip(&inputs)
            .map(|((rel, _), input)| Section {
                rel: rel.clone(),
                tokens: estimate.expected(input.text.len()),
            })
            .collect();
        let layout = levels::layout(&sections, capacity, GROUP_OUTPUT_TOKENS);
        let affordable =
            money_left.is_none_or(|left| synthesis_cost(&sections, &layout, terms) <= left);
        if affordable || limit <= MIN_SECTION_BYTES {
            let uncut = inputs
                .iter()
                .zip(&texts)
                .all(|(input, text)| input.text == *text);
            return LaidOut {
                inputs,
                sections,
                layout,
                uncut,
            };
        }
        limit = (limit / 2).max(MIN_SECTION_BYTES);
    }
}

/// Synthesize over `entries` (the entries the synthesis reads, in report
/// order): in one call when they fit uncut, else in levels.
pub(crate) async fn synthesize(
    run: &SynthesisRun<'_>,
    entries: &[DirEntry],
) -> Result<Synthesized, InvestigationError> {
    let laid = lay_out(
        entries,
        run.capacity,
        run.tokens,
        &run.terms,
        run.money_left,
    );
    let mut done = if laid.layout.levels.is_empty() && laid.uncut {
        Synthesized {
            outcome: run_synthesis(run.ctx, run.target, entries, run.language).await?,
            ..Synthesized::default()
        }
    } else {
        in_levels(run, entries, laid.inputs, &laid.layout).await?
    };
    done.outcome.sections.drop_dangling();
    Ok(done)
}

/// The synthesis of `inputs` (level 1: the cut sections in tree order)
/// along `layout`: each level's groups summarised in turn (level 1 follows
/// the tree; each level above is laid out from the real summaries of the
/// one below, as they come), then the verdict over what the last level
/// left.
async fn in_levels(
    run: &SynthesisRun<'_>,
    entries: &[DirEntry],
    mut inputs: Vec<Input>,
    layout: &Layout,
) -> Result<Synthesized, InvestigationError> {
    let mut levels = Levels {
        run,
        saved: saved_groups(&run.ctx.cache),
        used: Groups::new(),
        done: Synthesized::default(),
        first_brief: None,
    };
    let mut next = layout.levels.first().cloned();
    while let Some(level) = next {
        inputs = levels.summarise(&level, inputs).await?;
        let sizes: Vec<u64> = inputs
            .iter()
            .map(|i| run.tokens.expected(i.text.len()))
            .collect();
        next = levels::next_level(&sizes, run.capacity);
    }
    // Only what this run used is kept.
    levels.save(&Groups::new());
    levels.verdict(entries, &inputs).await
}

/// A synthesis in levels as it goes: the group summaries saved by earlier
/// runs and not used yet, those this run used, and what it did so far.
struct Levels<'r, 'a> {
    run: &'r SynthesisRun<'a>,
    saved: Groups,
    used: Groups,
    done: Synthesized,
    /// The first part's brief, which stands in for the verdict's without one.
    first_brief: Option<String>,
}

/// A group of a level, ready: the inputs it reads, its label, the digest
/// of its input, and its saved summary or the prompt that asks for one.
struct Prepared {
    members: Vec<usize>,
    label: String,
    digest: String,
    call: GroupCall,
}

impl Levels<'_, '_> {
    /// Summarise each group of `level` over `inputs`: the next level's
    /// inputs.
    async fn summarise(
        &mut self,
        level: &levels::Level,
        inputs: Vec<Input>,
    ) -> Result<Vec<Input>, InvestigationError> {
        self.done.levels += 1;
        let groups = level.groups.len();
        self.run.ctx.progress.ai(&format!(
            "Synthesis level {}: {groups} part{} to summarise first.",
            self.done.levels,
            if groups == 1 { "" } else { "s" }
        ));
        let prepared = self.prepare(level, &inputs)?;
        let mut ended = self.ask_side_by_side(&prepared).await?;
        let mut outputs = Vec::with_capacity(groups);
        for (n, group) in prepared.into_iter().enumerate() {
            let summary = match group.call {
                GroupCall::Saved(summary) => Some(*summary),
                GroupCall::Ask(system) => {
                    let end = match ended[n].take() {
                        Some(end) => end,
                        None => {
                            self.say_part(n, groups, &group.label);
                            converse(self.run.ctx, SYNTHESIS_CALL, system, true).await?
                        }
                    };
                    self.read_part(&group.label, end)
                }
            };
            let members: Vec<&Input> = group.members.iter().map(|&i| &inputs[i]).collect();
            outputs.push(self.output(n + 1, &members, group.label, group.digest, summary));
        }
        let mut outputs = outputs.into_iter().map(Some).collect::<Vec<_>>();
        Ok(level
            .outputs()
            .into_iter()
            .map(|output| match output {
                Output::Group(g) => outputs[g].take().unwrap_or_else(|| Input {
                    label: String::new(),
                    text: String::new(),
                    sections: Sections::default(),
                }),
                Output::Passed(i) => inputs[i].clone(),
            })
            .collect())
    }

    /// Each group of `level`: its label, its input's digest, and its saved
    /// summary or the prompt of the call that writes one.
    fn prepare(
        &mut self,
        level: &levels::Level,
        inputs: &[Input],
    ) -> Result<Vec<Prepared>, InvestigationError> {
        let (run, groups) = (self.run, level.groups.len());
        let mut prepared = Vec::with_capacity(groups);
        for (n, group) in level.groups.iter().enumerate() {
            let members: Vec<&Input> = group.inputs.iter().map(|&i| &inputs[i]).collect();
            let label = part_label(&members);
            let summaries = frame_untrusted(
                "cached directory summaries",
                &members
                    .iter()
                    .map(|i| i.text.as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            let digest = digest(run.target, &summaries, run.language);
            let call = match self.saved.remove(&digest) {
                Some(summary) => {
                    run.ctx.progress.ai(&format!(
                        "Synthesis part {}/{groups} (cached): {label}",
                        n + 1
                    ));
                    self.done.groups_reused += 1;
                    GroupCall::Saved(Box::new(summary))
                }
                None => GroupCall::Ask(
                    SynthesisGroupPrompt {
                        target: &escape_line(run.target),
                        part: &label,
                        summaries_text: &summaries,
                        language_rule: &language_rule(run.language),
                    }
                    .render()?,
                ),
            };
            prepared.push(Prepared {
                members: group.inputs.clone(),
                label,
                digest,
                call,
            });
        }
        Ok(prepared)
    }

    /// Under --batch the level's calls go out side by side, so they share a
    /// round: how each ended, by group. Interactively none is asked here:
    /// they go one after another, each group saved as it is paid for.
    async fn ask_side_by_side(
        &self,
        prepared: &[Prepared],
    ) -> Result<Vec<Option<CallEnd>>, InvestigationError> {
        let mut ended: Vec<Option<CallEnd>> = (0..prepared.len()).map(|_| None).collect();
        if !self.run.ctx.session.is_batching() {
            return Ok(ended);
        }
        let calls: Vec<_> = prepared
            .iter()
            .enumerate()
            .filter_map(|(n, group)| match &group.call {
                GroupCall::Ask(system) => Some((n, &group.label, system)),
                GroupCall::Saved(_) => None,
            })
            .map(|(n, label, system)| {
                self.say_part(n, prepared.len(), label);
                let lane = self.run.ctx.session.lane();
                async move {
                    let end = converse(self.run.ctx, SYNTHESIS_CALL, system.clone(), true).await;
                    drop(lane);
                    (n, end)
                }
            })
            .collect();
        for (n, end) in join_all(calls).await {
            ended[n] = Some(end?);
        }
        Ok(ended)
    }

    fn say_part(&self, n: usize, groups: usize, label: &str) {
        self.run
            .ctx
            .progress
            .ai(&format!("Synthesis part {}/{groups}: {label}", n + 1));
    }

    /// The summary a part's conversation ended on, if any; a refusal is
    /// recorded as an `info` flag.
    fn read_part(&self, label: &str, end: CallEnd) -> Option<GroupSummary> {
        match end {
            CallEnd::Submitted(input) => Some(GroupSummary::of(
                label,
                serde_json::from_value::<SubmittedReport>(input).unwrap_or_default(),
                &now_iso(),
            )),
            CallEnd::Refused(refusal) => {
                let finding = format!(
                    "A part of the synthesis ({label}) was not summarised: {}. Its directory \
                     summaries stand in for it.",
                    refusal.describe()
                );
                record_refusal(
                    &self.run.ctx.cache,
                    &self.run.ctx.progress,
                    "general",
                    finding,
                );
                None
            }
            CallEnd::ApiError(_)
            | CallEnd::OutOfTurns
            | CallEnd::Malformed
            | CallEnd::ContextFull
            | CallEnd::OverBudget(_) => None,
        }
    }

    /// Save the summaries this run used and, of earlier runs', those in
    /// `old`. Failing to is only a warning.
    fn save(&self, old: &Groups) {
        if let Err(err) = save_groups(&self.run.ctx.cache, old, &self.used) {
            self.run.ctx.progress.ai(&format!(
                "Warning: could not save {SYNTHESIS_GROUPS_FILE}: {err}"
            ));
        }
    }

    /// Part `part`'s input to the next level: its summary (saved for later
    /// runs) with its sections, or, without one, its members' sections.
    fn output(
        &mut self,
        part: usize,
        members: &[&Input],
        label: String,
        digest: String,
        summary: Option<GroupSummary>,
    ) -> Input {
        let run = self.run;
        let output_bytes = run.tokens.bytes_expected_within(run.capacity.tokens / 4);
        // The part's sections: those its summary filled, and what it left
        // empty from the parts below it.
        let below = labelled_sections(members);
        let mut sections = summary
            .as_ref()
            .map(|summary| summary.sections.clone())
            .unwrap_or_default();
        sections.fill_from(&below);
        let text = match summary {
            Some(summary) => {
                let text = format!(
                    "### Part: {label}\nSummary: {}\n{}\n{}",
                    summary.brief,
                    summary.detailed,
                    sections_for_prompt(&sections)
                );
                self.first_brief
                    .get_or_insert_with(|| summary.brief.clone());
                self.used.insert(digest, summary);
                self.save(&self.saved);
                text
            }
            None => {
                run.ctx.progress.ai(&format!(
                    "Warning: part {part} was not summarised; its first sections stand in."
                ));
                let joined: Vec<&str> = members.iter().map(|i| i.text.as_str()).collect();
                format!("### Part: {label} (not summarised)\n{}", joined.join("\n"))
            }
        };
        Input {
            label,
            text: cut(&text, output_bytes),
            sections,
        }
    }

    /// The verdict over the last level's `inputs`; without one, the parts'
    /// summaries joined stand in for it. What the parts found reaches the
    /// report where the verdict left a section empty (or was not written).
    async fn verdict(
        self,
        entries: &[DirEntry],
        inputs: &[Input],
    ) -> Result<Synthesized, InvestigationError> {
        let run = self.run;
        let joined = inputs
            .iter()
            .map(|i| i.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let note = if self.done.levels == 0 {
            "The summaries below were shortened to fit the synthesis's share of the budget."
        } else {
            "The tree was too large to read in one call: each part (headed `Part:`) was \
             summarised on its own first, and the directories above those parts are shown as \
             they are. Name the parts' directories in the report."
        };
        let system = SynthesisPrompt {
            target: &escape_line(run.target),
            summaries_text: &format!(
                "{note}\n{}",
                frame_untrusted(
                    "summaries of the tree's parts and the directories above them",
                    &joined
                )
            ),
            language_rule: &language_rule(run.language),
        }
        .render()?;
        let end = converse(run.ctx, SYNTHESIS_CALL, system, false).await?;
        let mut done = self.done;
        done.outcome = verdict_of(WITHOUT_VERDICT.settle(run.ctx, end), || {
            let (fallback_brief, _) = synthesize_from_cache(entries);
            SynthesisOutcome {
                brief: self.first_brief.unwrap_or(fallback_brief),
                detailed: joined,
                sections: Sections::default(),
                submitted: false,
            }
        });
        done.outcome
            .sections
            .fill_from(&labelled_sections(&inputs.iter().collect::<Vec<_>>()));
        Ok(done)
    }
}

/// Every future of `futures` run to its end, side by side on this task;
/// their outputs in order. (A level's group calls borrow the run, so they
/// cannot be spawned.)
async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(value) => *output = Some(value),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// Each input's label and sections, for [`Sections::fill_from`].
fn labelled_sections(inputs: &[&Input]) -> Vec<(String, Sections)> {
    inputs
        .iter()
        .filter(|input| !input.sections.is_empty())
        .map(|input| (input.label.clone(), input.sections.clone()))
        .collect()
}

/// `src/, docs/ and 12 more`.
fn part_label(members: &[&Input]) -> String {
    let names: Vec<&str> = members
        .iter()
        .take(LABEL_NAMES)
        .map(|i| i.label.as_str())
        .collect();
    let mut label = names.join(", ");
    if members.len() > LABEL_NAMES {
        label.push_str(&format!(" and {} more", members.len() - LABEL_NAMES));
    }
    label
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutting_keeps_short_text_and_marks_long_text() {
        assert_eq!(cut("short", 100), "short");
        let long = "é".repeat(100);
        let shortened = cut(&long, 51);
        assert!(shortened.starts_with(&"é".repeat(25)));
        assert!(shortened.ends_with("[... cut to fit the synthesis]\n"));
    }

    #[test]
    fn labels_name_a_few_parts() {
        let input = |l: &str| Input {
            label: l.to_string(),
            text: String::new(),
            sections: Sections::default(),
        };
        let list = [
            input("a/"),
            input("b/"),
            input("c/"),
            input("d/"),
            input("e/"),
        ];
        let refs: Vec<&Input> = list.iter().collect();
        assert_eq!(part_label(&refs[..2]), "a/, b/");
        assert_eq!(part_label(&refs), "a/, b/, c/ and 2 more");
    }
}
