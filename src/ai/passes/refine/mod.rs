//! The refinement (`--refine`, the original's PLAN Part 7): after the
//! synthesis, an agent goes back to what the investigation was unsure of,
//! settles it from the files, and hands in an improved report.
//!
//! Each round is one conversation. It is shown the report as it stands,
//! the summaries their authors were unsure of, the flags whose path was
//! not found (numbered, so it can withdraw them) and the summaries at odds
//! with a finding (`inputs.rs`, `contradictions.rs`); it has the dir
//! loop's read-only tools, `read_cache` and `list_cache`; and it ends with
//! `submit_report`: the synthesis's fields rewritten, the flags it adds and
//! the ids of those it withdraws. The next round starts from that report.
//!
//! The rounds stop at `--refine-depth`, at the first round that read
//! nothing (made no tool call that reads: it found nothing new), when
//! nothing is left to settle, or when a round ends without a report. Every
//! request is priced at its worst case before it goes and sent only if the
//! run's spend stays within its budget (the run's purse,
//! [`crate::ai::engine::purse`], which the conversation driver asks).
//! Each round is saved as soon as it is done (`saved.rs`), so a later run
//! over the same synthesis pays for it once.
//!
//! Its edges: it reads the cache's entries and flags it is handed and
//! writes nothing to them; the flags it adds and withdraws live in
//! `refinement.json` and in the report, never in `flags.jsonl`. Which run
//! refines, and what the report says of it, is the orchestrator's.

mod contradictions;
mod inputs;
mod saved;

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::Value;

use crate::ai::engine::agent::{Agent, Printer};
use crate::ai::engine::context::RunContext;
use crate::ai::engine::conversation::{CallEnd, Closing, Policy, converse};
use crate::ai::engine::purse::Pace;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::synthesis::{SubmittedReport, sections_for_prompt};
use crate::ai::prompts::{self, RefinePrompt};
use crate::ai::tools::{self, Toolbox, frame_untrusted};
use crate::cache::{DirEntry, FileEntry};
use crate::grounding::{self, Scope};
use crate::lenient;
use crate::report::{Flag, RefineStop, Severity};
use crate::text::escape_line;

pub(crate) use saved::{SavedRefinement, SavedRound, synthesis_digest};

/// Turns one round may take.
pub(crate) const REFINE_MAX_TURNS: u32 = 10;
/// The `directory` name of the refinement's tool calls in `investigation.log`.
pub(crate) const REFINE_LOG_NAME: &str = "(refine)";

/// The report as the rounds improve it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Draft {
    /// The report as it stands.
    pub report: SubmittedReport,
    /// Flags added so far.
    pub added: Vec<Flag>,
    /// Recorded flags withdrawn so far.
    pub withdrawn: Vec<Flag>,
}

impl Draft {
    /// The report the synthesis wrote, with no flag changed yet.
    pub(crate) fn new(report: SubmittedReport) -> Draft {
        Draft {
            report,
            added: Vec::new(),
            withdrawn: Vec::new(),
        }
    }

    /// This draft after `round`.
    pub(crate) fn after(&self, round: &SavedRound) -> Draft {
        let mut next = Draft {
            report: round.report.clone(),
            added: self.added.clone(),
            withdrawn: self.withdrawn.clone(),
        };
        for flag in &round.flags_withdrawn {
            // Withdrawing a flag the refinement itself added takes it back.
            if let Some(at) = next.added.iter().position(|f| same(f, flag)) {
                next.added.remove(at);
            } else if !next.withdrawn.iter().any(|f| same(f, flag)) {
                next.withdrawn.push(flag.clone());
            }
        }
        for flag in &round.flags_added {
            if !next.added.iter().any(|f| same(f, flag)) {
                next.added.push(flag.clone());
            }
        }
        next
    }

    /// `recorded` (the flags of `flags.jsonl`) with this draft's changes.
    pub(crate) fn flags(&self, recorded: &[Flag]) -> Vec<Flag> {
        recorded
            .iter()
            .filter(|flag| !self.withdrawn.iter().any(|w| same(w, flag)))
            .chain(&self.added)
            .cloned()
            .collect()
    }
}

/// The same finding: path, finding and severity as recorded.
fn same(a: &Flag, b: &Flag) -> bool {
    a.path == b.path && a.finding == b.finding && a.severity == b.severity
}

/// What a refinement works from.
pub(crate) struct RefineRun<'a> {
    /// The session, cache and progress every call uses.
    pub ctx: &'a RunContext,
    /// The canonical target, as the prompt shows it.
    pub target: &'a str,
    /// The tree as the scan saw it, for grounding the flags.
    pub scope: &'a Scope,
    /// Dir entries of the directories that exist, each with its parent's.
    pub dirs: &'a [(DirEntry, Option<DirEntry>)],
    /// File entries.
    pub files: &'a [FileEntry],
    /// The flags of `flags.jsonl`.
    pub recorded: &'a [Flag],
    /// `--language`: the language the report is written in.
    pub language: Option<&'a str>,
}

/// How one round ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RoundEnd {
    /// It handed in a report.
    Submitted(Box<SavedRound>),
    /// It stopped without one (no request at all for
    /// [`RefineStop::NothingToSettle`] and, on its first request,
    /// [`RefineStop::Budget`]).
    Stopped(RefineStop),
}

/// What a round is shown: the lists, and the flags it may withdraw by id.
struct Shown {
    uncertain: Vec<String>,
    unverified: Vec<(String, Flag, String)>,
    at_odds: Vec<String>,
}

impl Shown {
    fn of(run: &RefineRun<'_>, draft: &Draft) -> Shown {
        let raw = draft.flags(run.recorded);
        let mut grounded = raw.clone();
        grounding::ground(
            run.scope,
            grounding::outlines::Source::Disk(run.ctx.target().to_path_buf()),
            grounding::Sources::default(),
            &mut String::new(),
            &mut String::new(),
            &mut grounded,
            &mut crate::report::Sections::default(),
        );
        let dirs: Vec<(&DirEntry, Option<&DirEntry>)> = run
            .dirs
            .iter()
            .map(|(entry, parent)| (entry, parent.as_ref()))
            .collect();
        let files: Vec<&FileEntry> = run.files.iter().collect();
        let entries: Vec<DirEntry> = run.dirs.iter().map(|(entry, _)| entry.clone()).collect();
        Shown {
            uncertain: inputs::uncertain_entries(&dirs, &files)
                .into_iter()
                .map(|u| u.line)
                .collect(),
            unverified: inputs::numbered_unverified(&raw, &grounded),
            at_odds: contradictions::at_odds(
                &draft.report.brief,
                &draft.report.detailed,
                &entries,
                &grounded,
            ),
        }
    }

    fn is_empty(&self) -> bool {
        self.uncertain.is_empty() && self.unverified.is_empty() && self.at_odds.is_empty()
    }

    /// A list framed as data, or a plain `(none)`.
    fn framed(label: &str, lines: &[String]) -> String {
        if lines.is_empty() {
            "(none)".to_string()
        } else {
            frame_untrusted(label, &lines.join("\n"))
        }
    }

    fn prompt(
        &self,
        run: &RefineRun<'_>,
        draft: &Draft,
        round: u32,
    ) -> Result<String, InvestigationError> {
        let unverified: Vec<String> = self
            .unverified
            .iter()
            .map(|(_, _, line)| line.clone())
            .collect();
        Ok(RefinePrompt {
            target: &escape_line(run.target),
            round,
            max_turns: REFINE_MAX_TURNS,
            verdict: &frame_untrusted(
                "the report being refined",
                &inputs::render_verdict(
                    &draft.report.brief,
                    &draft.report.detailed,
                    &sections_for_prompt(&draft.report.sections.clone().normalised()),
                ),
            ),
            uncertain: &Shown::framed("summaries their authors were unsure of", &self.uncertain),
            unverified: &Shown::framed("flags whose path was not found", &unverified),
            contradictions: &Shown::framed("summaries at odds with a finding", &self.at_odds),
            language_rule: &prompts::language_rule(run.language),
        }
        .render()?)
    }
}

/// Run round `number` over `draft`: what it handed in, or why it stopped.
/// An error only for failures that end the run (a dead endpoint, a
/// rejected key, ...).
pub(crate) async fn round(
    run: &RefineRun<'_>,
    draft: &Draft,
    number: u32,
) -> Result<RoundEnd, InvestigationError> {
    let shown = Shown::of(run, draft);
    if shown.is_empty() {
        return Ok(RoundEnd::Stopped(RefineStop::NothingToSettle));
    }
    let ctx = run.ctx;
    ctx.progress.ai(&format!(
        "Refinement round {number}: {} uncertain summaries, {} flags not found, {} at odds...",
        shown.uncertain.len(),
        shown.unverified.len(),
        shown.at_odds.len()
    ));
    let ids: HashSet<String> = shown
        .unverified
        .iter()
        .map(|(id, _, _)| id.clone())
        .collect();
    let mut agent = Agent::new(
        Toolbox::Refine,
        shown.prompt(run, draft, number)?,
        prompts::kickoff::REFINE,
        tools::definitions(Toolbox::Refine),
        prompts::nudge::REFINE,
        Printer::Pass(ctx.progress.clone()),
    );
    let spent_before = ctx.session.spent();
    let conversed = converse(
        &mut agent,
        &ctx.session,
        &ctx.tools(REFINE_LOG_NAME),
        round_policy(ids),
    )
    .await?;
    let stop = match conversed.end {
        CallEnd::Submitted(input) => {
            let (report, flags_added, flags_withdrawn) =
                read_report(RefinedSubmit::read(&input), &shown.unverified);
            return Ok(RoundEnd::Submitted(Box::new(SavedRound {
                report,
                flags_added,
                flags_withdrawn,
                reads: conversed.tools_run,
                cost_usd: ctx.session.spent() - spent_before,
            })));
        }
        CallEnd::Refused(_) => RefineStop::Declined,
        CallEnd::OverBudget(_) => RefineStop::Budget,
        CallEnd::ApiError(_) => RefineStop::ApiError,
        CallEnd::ContextFull | CallEnd::OutOfTurns | CallEnd::Malformed => RefineStop::NoReport,
    };
    Ok(RoundEnd::Stopped(stop))
}

/// A round's policy: its turns, the note of its last one, the money it
/// runs alone on (and the note of its last request), and its report
/// refused without its text or when it withdraws a flag not among `ids`.
fn round_policy(ids: HashSet<String>) -> Policy<'static> {
    Policy {
        closing: Some(Closing {
            from: 1,
            note: |_| LAST_TURN_NOTE.to_string(),
        }),
        pace: Pace::Alone,
        last_call_note: Some(prompts::last_call::REFINE),
        answer: Some(Box::new(move |input: &Value| {
            check_report(&RefinedSubmit::read(input), &ids)
        })),
        ..Policy::turns(REFINE_MAX_TURNS)
    }
}

/// The note before a round's last turn.
const LAST_TURN_NOTE: &str =
    "[luminos] This is your last turn: call submit_report now with the improved report.";

/// What a round hands in with `submit_report`, read leniently
/// ([`crate::lenient`]): the report's fields, the flags it adds and the ids
/// of the listed flags it withdraws.
#[derive(Debug, Default, Deserialize)]
struct RefinedSubmit {
    #[serde(flatten)]
    report: SubmittedReport,
    #[serde(default, deserialize_with = "lenient::items")]
    flags_added: Vec<AddedFlag>,
    #[serde(default, deserialize_with = "lenient::texts")]
    flags_withdrawn: Vec<String>,
}

/// A flag a round adds, as it wrote it.
#[derive(Debug, Deserialize)]
struct AddedFlag {
    #[serde(default, deserialize_with = "lenient::text")]
    path: String,
    #[serde(default, deserialize_with = "lenient::text")]
    finding: String,
    #[serde(default, deserialize_with = "lenient::text")]
    severity: String,
}

impl RefinedSubmit {
    /// `submit_report`'s input; what does not read is empty.
    fn read(input: &Value) -> RefinedSubmit {
        RefinedSubmit::deserialize(input).unwrap_or_default()
    }

    /// The ids in `flags_withdrawn`, trimmed, upper-cased.
    fn withdrawn_ids(&self) -> Vec<String> {
        self.flags_withdrawn
            .iter()
            .map(|id| id.trim().to_uppercase())
            .collect()
    }
}

/// Refuse a report without its text, or that withdraws a flag not listed.
fn check_report(submit: &RefinedSubmit, ids: &HashSet<String>) -> Option<String> {
    for (field, text) in [
        ("brief", &submit.report.brief),
        ("detailed", &submit.report.detailed),
    ] {
        if text.trim().is_empty() {
            return Some(format!("Error: '{field}' must be a non-empty string."));
        }
    }
    let unknown: Vec<String> = submit
        .withdrawn_ids()
        .into_iter()
        .filter(|id| !ids.contains(id))
        .collect();
    if unknown.is_empty() {
        return None;
    }
    let mut listed: Vec<&String> = ids.iter().collect();
    listed.sort_by_key(|id| id[1..].parse::<usize>().unwrap_or(usize::MAX));
    Some(format!(
        "Error: flags_withdrawn names {}, which is not a listed flag; the listed ids are: {}.",
        escape_line(&unknown.join(", ")),
        if listed.is_empty() {
            "none".to_string()
        } else {
            listed
                .iter()
                .map(|id| id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        }
    ))
}

/// A submitted report: its report's fields (without the flag lists), the
/// flags it adds (each with a path, a finding and a known severity; `info`
/// for an unknown one) and the listed flags (`unverified`, by id) it
/// withdraws.
fn read_report(
    submit: RefinedSubmit,
    unverified: &[(String, Flag, String)],
) -> (SubmittedReport, Vec<Flag>, Vec<Flag>) {
    let ids = submit.withdrawn_ids();
    let added: Vec<Flag> = submit
        .flags_added
        .iter()
        .filter_map(|flag| {
            let finding = Some(flag.finding.trim()).filter(|f| !f.is_empty())?;
            let path = Some(flag.path.trim())
                .filter(|p| !p.is_empty())
                .unwrap_or("general");
            let severity = Severity::named(flag.severity.trim()).unwrap_or_default();
            Some(Flag::new(path, finding, severity))
        })
        .collect();
    let withdrawn = unverified
        .iter()
        .filter(|(id, _, _)| ids.contains(id))
        .map(|(_, flag, _)| flag.clone())
        .collect();
    (submit.report, added, withdrawn)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn report(brief: &str, detailed: &str) -> SubmittedReport {
        SubmittedReport {
            brief: brief.into(),
            detailed: detailed.into(),
            ..SubmittedReport::default()
        }
    }

    fn listed() -> Vec<(String, Flag, String)> {
        vec![
            (
                "F1".into(),
                Flag::new("src/ghost.rs", "Leak.", "critical"),
                String::new(),
            ),
            (
                "F2".into(),
                Flag::new("old.py", "Dead.", "concern"),
                String::new(),
            ),
        ]
    }

    #[test]
    fn a_report_gives_its_fields_the_flags_it_adds_and_those_it_withdraws() {
        let input = json!({
            "brief": "B", "detailed": "D",
            "flags_added": [
                {"path": "src/real.rs", "finding": "Leak, found here.", "severity": "critical"},
                {"path": "", "finding": "No tests.", "severity": "dire"},
                {"path": "x", "finding": "  "}
            ],
            "flags_withdrawn": [" f1 ", "F9"]
        });
        let (report, added, withdrawn) = read_report(RefinedSubmit::read(&input), &listed());
        assert_eq!(
            serde_json::to_value(&report).unwrap(),
            json!({"brief": "B", "detailed": "D"})
        );
        assert_eq!(
            added,
            [
                Flag::new("src/real.rs", "Leak, found here.", "critical"),
                Flag::new("general", "No tests.", "info"),
            ]
        );
        assert_eq!(withdrawn, [listed()[0].1.clone()]);
    }

    #[test]
    fn a_report_without_text_or_naming_an_unlisted_flag_is_refused() {
        let ids: HashSet<String> = ["F1".to_string(), "F2".to_string()].into();
        assert_eq!(
            check_report(
                &RefinedSubmit::read(
                    &json!({"brief": "B", "detailed": "D", "flags_withdrawn": ["F2"]})
                ),
                &ids
            ),
            None
        );
        assert_eq!(
            check_report(
                &RefinedSubmit::read(&json!({"brief": " ", "detailed": "D"})),
                &ids
            )
            .unwrap(),
            "Error: 'brief' must be a non-empty string."
        );
        assert_eq!(
            check_report(
                &RefinedSubmit::read(
                    &json!({"brief": "B", "detailed": "D", "flags_withdrawn": ["F7"]})
                ),
                &ids
            )
            .unwrap(),
            "Error: flags_withdrawn names F7, which is not a listed flag; the listed ids are: F1, F2."
        );
    }

    #[test]
    fn each_round_starts_from_the_last_and_a_flag_added_then_withdrawn_is_gone() {
        let recorded = [
            Flag::new("src/ghost.rs", "Leak.", "critical"),
            Flag::new("src/main.rs", "Fine.", "info"),
        ];
        let first = SavedRound {
            report: report("B1", "D1"),
            flags_added: vec![Flag::new("src/real.rs", "Leak.", "critical")],
            flags_withdrawn: vec![recorded[0].clone()],
            reads: 2,
            cost_usd: crate::money::Usd::new(0.01),
        };
        let draft = Draft::new(report("B", "D")).after(&first);
        assert_eq!(draft.report.brief, "B1");
        assert_eq!(
            draft.flags(&recorded),
            [
                recorded[1].clone(),
                Flag::new("src/real.rs", "Leak.", "critical")
            ]
        );
        let second = SavedRound {
            report: report("B2", "D2"),
            flags_added: vec![],
            flags_withdrawn: vec![Flag::new("src/real.rs", "Leak.", "critical")],
            reads: 0,
            cost_usd: crate::money::Usd::ZERO,
        };
        let draft = draft.after(&second);
        assert_eq!(draft.flags(&recorded), [recorded[1].clone()]);
        assert!(draft.added.is_empty());
        assert_eq!(draft.withdrawn, [recorded[0].clone()]);
    }
}
