//! Synthesis: the final pass that turns every cached directory summary into
//! the report's brief and detailed analysis.
//!
//! The pass reads only dir entries (never files), all of them in its
//! prompt; it offers `flag` and `submit_report(brief, detailed, ...)`, and has
//! at most 5 turns. Besides the verdict, `submit_report` takes the optional
//! domain sections ([`Sections`]: architecture, components, datasets, ...),
//! normalised here before they reach the report. When the turns run out it falls back to [`synthesize_from_cache`],
//! a mechanical report built without the model, so the report always says
//! something. An API error ends the pass with empty fields, as in the
//! original.
//!
//! Unlike the original, a submitted synthesis is saved (`synthesis.json`)
//! with a digest of the entries it read ([`entries_digest`]); a later run
//! whose entries have the same digest reuses it ([`SavedSynthesis::reuse`])
//! instead of paying for the same verdict again. The fallback is never saved.
//!
//! Also unlike the original, the summaries need not fit one call: when they
//! do not ([`crate::ai::rules::levels`]), [`synthesize`] summarises parts of
//! the tree first and writes the verdict from those summaries (`levels.rs`).
//! Mechanical entries are read only where no mechanical parent already
//! describes their subtree ([`synthesis_entries`]). How a part's domain
//! sections are shown to the level above is `sections.rs`.

use crate::report::sections::DevCommand;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

mod groups;
mod levels;
mod saved;
mod sections;

pub(crate) use saved::SavedSynthesis;
pub(crate) use sections::sections_for_prompt;

use crate::ai::engine::context::RunContext;
use crate::ai::engine::conversation::CallEnd;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::one_call::{OneCall, Without, converse};
use crate::ai::prompts::{self, SynthesisPrompt};
use crate::ai::rules::decide::in_synthesis;
use crate::ai::rules::fingerprint::language_key;
use crate::ai::tools::{Toolbox, frame_untrusted};
use crate::cache::{Cache, DirEntry, EntryKind};
use crate::lenient;
use crate::report::Sections;
use crate::text::escape_line;
pub(crate) use levels::{LaidOut, SynthesisRun, lay_out, synthesize};

/// Turns the synthesis pass may take.
pub(crate) const SYNTHESIS_MAX_TURNS: u32 = 5;

/// The `directory` name of synthesis tool calls in `investigation.log`.
pub(crate) const SYNTHESIS_LOG_NAME: &str = "(synthesis)";

/// Dir entries in report order: the root first, then top-down (the reverse of
/// the leaf-first investigation order).
pub(crate) fn report_order(mut entries: Vec<DirEntry>) -> Vec<DirEntry> {
    fn key(entry: &DirEntry) -> (usize, String) {
        match entry.relative_path.as_str() {
            "" | "." => (0, String::new()),
            rel => (rel.matches('/').count() + 1, rel.to_string()),
        }
    }
    entries.sort_by_key(key);
    entries
}

/// The dir entries the synthesis reads, in report order: the entry of
/// every directory in `dirs` that a model wrote, and a mechanical entry
/// only where its parent's entry is not mechanical too (the parent's
/// already describes its subtree). Without mechanical entries, that is
/// every entry.
pub(crate) fn synthesis_entries(
    target: &Path,
    dirs: &[PathBuf],
    entries: &HashMap<PathBuf, DirEntry>,
) -> Vec<DirEntry> {
    let mechanical = |dir: &Path| entries.get(dir).map(|entry| entry.mechanical);
    report_order(
        dirs.iter()
            .filter_map(|dir| {
                let entry = entries.get(dir)?;
                let parent = dir.parent().filter(|_| dir != target).and_then(mechanical);
                in_synthesis(entry.mechanical, parent).then(|| entry.clone())
            })
            .collect(),
    )
}

/// The `summaries_text` block: one section per dir entry.
pub(crate) fn render_summaries(entries: &[DirEntry]) -> String {
    if entries.is_empty() {
        return "(none)".to_string();
    }
    let or = |text: &str, fallback: &'static str| {
        if text.is_empty() {
            fallback.to_string()
        } else {
            text.to_string()
        }
    };
    let mut lines = Vec::new();
    for entry in entries {
        lines.push(format!(
            "### {}/",
            escape_line(&or(&entry.relative_path, "?"))
        ));
        lines.push(format!("Category: {}", or(&entry.dominant_category, "?")));
        lines.push(format!("Summary: {}", or(&entry.summary, "(no summary)")));
        if !entry.notable_files.is_empty() {
            lines.push(format!("Notable files: {}", entry.notable_files.join(", ")));
        }
        let commands = entry_commands(entry);
        if !commands.is_empty() {
            lines.push(format!("Commands: {}", commands_line(&commands)));
        }
        lines.push(String::new());
    }
    lines.join("\n")
}

/// The commands a dir entry lists (`commands`, which its loop's agent
/// writes with the entry), each read leniently and normalised as the synthesis's own section is; those
/// without a line or a source are left out.
pub(crate) fn entry_commands(entry: &DirEntry) -> Vec<DevCommand> {
    entry
        .commands
        .iter()
        .cloned()
        .map(|mut command| {
            command.normalise();
            command
        })
        .filter(|c| !c.command.is_empty() && !c.source.is_empty())
        .take(MAX_ENTRY_COMMANDS)
        .collect()
}

/// Commands one directory's summary passes on to the synthesis.
const MAX_ENTRY_COMMANDS: usize = 12;

/// `make test` (test; from Makefile); ...: a directory's commands as the
/// synthesis reads them (one line).
fn commands_line(commands: &[DevCommand]) -> String {
    commands
        .iter()
        .map(|c| {
            let purpose = if c.purpose.is_empty() {
                String::new()
            } else {
                format!("{}; ", escape_line(&c.purpose))
            };
            format!(
                "{} ({purpose}from {})",
                escape_line(&c.command),
                escape_line(&c.source)
            )
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The mechanical report: the first non-empty summary as the brief, every
/// non-empty summary as `**<dir>/**: <summary>` paragraphs.
pub(crate) fn synthesize_from_cache(entries: &[DirEntry]) -> (String, String) {
    if entries.is_empty() {
        return (
            "(AI analysis incomplete — no data was cached)".to_string(),
            String::new(),
        );
    }
    let with_summary: Vec<(&str, &str)> = entries
        .iter()
        .filter(|entry| !entry.summary.is_empty())
        .map(|entry| {
            let rel = entry.relative_path.as_str();
            (
                if rel.is_empty() { "?" } else { rel },
                entry.summary.as_str(),
            )
        })
        .collect();
    let brief = with_summary
        .first()
        .map(|(_, summary)| summary.to_string())
        .unwrap_or_else(|| "(AI analysis incomplete)".to_string());
    let detailed = with_summary
        .iter()
        .map(|(rel, summary)| format!("**{rel}/**: {summary}"))
        .collect::<Vec<_>>()
        .join("\n\n");
    (brief, detailed)
}

/// The synthesis prompt over `entries` (in report order), written in
/// `language`; the summaries are framed as untrusted data, and each
/// directory heading is escaped to one line.
pub(crate) fn synthesis_prompt(
    target: &str,
    entries: &[DirEntry],
    language: Option<&str>,
) -> Result<String, InvestigationError> {
    let rendered = render_summaries(entries);
    let summaries_text = if entries.is_empty() {
        rendered
    } else {
        frame_untrusted("cached directory summaries", &rendered)
    };
    Ok(SynthesisPrompt {
        target: &escape_line(target),
        summaries_text: &summaries_text,
        language_rule: &prompts::language_rule(language),
    }
    .render()?)
}

/// What the synthesis pass produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SynthesisOutcome {
    pub brief: String,
    pub detailed: String,
    /// The domain sections it filled, normalised.
    pub sections: Sections,
    /// The model submitted it (not the mechanical fallback, not an API
    /// failure): only such a result is worth saving for reuse.
    pub submitted: bool,
}

/// What a synthesis (a part of one, or a refinement) hands in with
/// `submit_report`, read leniently ([`crate::lenient`]): the brief, the
/// detailed analysis and the domain sections' fields beside them, as the
/// schema puts them. Written back, it is the same object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SubmittedReport {
    #[serde(default, deserialize_with = "lenient::text")]
    pub brief: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub detailed: String,
    #[serde(flatten)]
    pub sections: Sections,
}

impl SubmittedReport {
    /// This report with its sections normalised ([`Sections::normalised`]).
    pub(crate) fn normalised(self) -> SubmittedReport {
        SubmittedReport {
            sections: self.sections.normalised(),
            ..self
        }
    }
}

impl SynthesisOutcome {
    /// The synthesis the model submitted (`submit_report`'s input, or the
    /// refinement's improved report).
    pub(crate) fn submitted(report: SubmittedReport) -> SynthesisOutcome {
        let report = report.normalised();
        SynthesisOutcome {
            brief: report.brief,
            detailed: report.detailed,
            sections: report.sections,
            submitted: true,
        }
    }

    /// This synthesis as `submit_report`'s input would give it (what the
    /// refinement starts from and hands back).
    pub(crate) fn as_report(&self) -> SubmittedReport {
        SubmittedReport {
            brief: self.brief.clone(),
            detailed: self.detailed.clone(),
            sections: self.sections.clone(),
        }
    }
}

/// The synthesis's conversation: the verdict, or one group of a synthesis
/// in levels.
pub(crate) const SYNTHESIS_CALL: OneCall = OneCall {
    toolbox: Toolbox::Synthesis,
    kickoff: prompts::kickoff::SYNTHESIS,
    nudge: prompts::nudge::SYNTHESIS,
    log_name: SYNTHESIS_LOG_NAME,
    max_turns: SYNTHESIS_MAX_TURNS,
};

/// What a synthesis in one call says when it has no answer: the directory
/// summaries stand in for it.
const WITHOUT: Without = Without {
    name: "synthesis",
    missing: "The synthesis was not written",
    instead: "The summary above is the directory summaries joined.",
};

/// What the verdict over the levels says when it has no answer.
pub(super) const WITHOUT_VERDICT: Without = Without {
    instead: "The summary above is the parts' summaries joined.",
    ..WITHOUT
};

/// Run the synthesis pass over `entries` (the live dir entries, in report
/// order) in one call.
pub(crate) async fn run_synthesis(
    ctx: &RunContext,
    target: &str,
    entries: &[DirEntry],
    language: Option<&str>,
) -> Result<SynthesisOutcome, InvestigationError> {
    let system = synthesis_prompt(target, entries, language)?;
    let end = converse(ctx, SYNTHESIS_CALL, system, false).await?;
    // The summaries stand on their own: without a verdict, the report is
    // built from them without the model, and says why.
    Ok(verdict_of(WITHOUT.settle(ctx, end), || {
        mechanical_synthesis(entries)
    }))
}

/// The synthesis built from the summaries without the model.
/// What the end of a call that writes the verdict makes of it: the verdict
/// submitted; nothing when the API failed (the run's failure says why); or
/// `fallback`, built without the model, when the call ended without one.
pub(super) fn verdict_of(
    end: CallEnd,
    fallback: impl FnOnce() -> SynthesisOutcome,
) -> SynthesisOutcome {
    match end {
        CallEnd::Submitted(input) => {
            SynthesisOutcome::submitted(serde_json::from_value(input).unwrap_or_default())
        }
        CallEnd::ApiError(_) => SynthesisOutcome::default(),
        CallEnd::Refused(_)
        | CallEnd::ContextFull
        | CallEnd::OutOfTurns
        | CallEnd::Malformed
        | CallEnd::OverBudget(_) => fallback(),
    }
}

fn mechanical_synthesis(entries: &[DirEntry]) -> SynthesisOutcome {
    let (brief, detailed) = synthesize_from_cache(entries);
    SynthesisOutcome {
        brief,
        detailed,
        sections: Sections::default(),
        submitted: false,
    }
}

/// A digest of the dir entries a synthesis reads (as `cache` stores them)
/// and of the `--language` it is written in: any change to any entry (a new
/// summary, a new timestamp, one entry more or less) or to the language
/// changes it. It hashes each entry's JSON as stored, not as luminos types
/// it: a cache an earlier luminos wrote keeps its digest, so its saved
/// synthesis still holds. Without a language it is what it always was.
pub(crate) fn entries_digest(
    cache: &Cache,
    entries: &[DirEntry],
    language: Option<&str>,
) -> String {
    let mut hasher = Sha256::new();
    for entry in entries {
        let stored = cache
            .read_entry(EntryKind::Dir, &entry.path)
            .unwrap_or_else(|| serde_json::to_value(entry).unwrap_or_default());
        hasher.update(stored.to_string().as_bytes());
        hasher.update(b"\n");
    }
    if let Some(language) = language {
        hasher.update(b"\0language\0");
        hasher.update(language_key(language).as_bytes());
    }
    crate::text::hex(&hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dir(rel: &str, summary: &str) -> DirEntry {
        DirEntry::from_value(json!({"path": format!("/x/{rel}"), "relative_path": rel,
               "child_count": 1, "summary": summary, "dominant_category": "source",
               "cached_at": "2026-04-11T00:00:00+00:00"}))
        .unwrap()
    }

    /// A directory's commands reach the synthesis on one line, each with
    /// the file it came from; those without a line or a source do not.
    #[test]
    fn a_directory_s_commands_reach_the_synthesis() {
        let mut stored = serde_json::to_value(dir(".", "The root.")).unwrap();
        stored["commands"] = json!([
            {"command": "make test", "purpose": "test", "source": "Makefile"},
            {"command": "cargo build\nrm -rf /", "source": "./Cargo.toml"},
            {"command": "no source"},
            {"source": "README.md"},
            "not an object"
        ]);
        let entry = DirEntry::from_value(stored).unwrap();
        let text = render_summaries(&[entry]);
        assert!(
            text.contains(
                "\nCommands: make test (test; from Makefile) | cargo build (from Cargo.toml)\n"
            ),
            "{text}"
        );
        assert!(!render_summaries(&[dir("a", "A.")]).contains("Commands:"));
    }

    #[test]
    fn fallback_without_entries() {
        let (brief, detailed) = synthesize_from_cache(&[]);
        assert!(brief.contains("incomplete"));
        assert_eq!(detailed, "");
    }

    #[test]
    fn fallback_brief_is_first_summary_and_skips_empty_ones() {
        let entries = vec![
            dir("empty", ""),
            dir("auth", "Auth code."),
            dir("db", "Database layer."),
        ];
        let (brief, detailed) = synthesize_from_cache(&entries);
        assert_eq!(brief, "Auth code.");
        assert_eq!(
            detailed,
            "**auth/**: Auth code.\n\n**db/**: Database layer."
        );
        let (brief, detailed) = synthesize_from_cache(&[dir("empty", "")]);
        assert_eq!(brief, "(AI analysis incomplete)");
        assert_eq!(detailed, "");
    }

    #[test]
    fn summaries_block() {
        assert_eq!(render_summaries(&[]), "(none)");
        let mut a = dir("src", "Core logic.");
        a.notable_files = vec!["src/main.rs".into(), "src/lib.rs".into()];
        let b = DirEntry {
            summary: "Loose.".into(),
            dominant_category: String::new(),
            ..DirEntry::default()
        };
        assert_eq!(
            render_summaries(&[a, b]),
            "### src/\nCategory: source\nSummary: Core logic.\n\
             Notable files: src/main.rs, src/lib.rs\n\n### ?/\nCategory: ?\nSummary: Loose.\n"
        );
    }

    #[test]
    fn a_saved_synthesis_is_reused_only_for_the_same_entries() {
        let tmp = tempfile::tempdir().unwrap();
        let (_root, cache) = crate::testing::open_cache(tmp.path(), Path::new("/x"));
        let entries_digest =
            |entries: &[DirEntry], language| entries_digest(&cache, entries, language);
        let entries = vec![dir(".", "root"), dir("a", "A.")];
        let digest = entries_digest(&entries, None);
        let outcome = SynthesisOutcome {
            brief: "B".into(),
            detailed: "D".into(),
            sections: serde_json::from_value::<Sections>(json!({"themes": ["Tax returns"]}))
                .unwrap()
                .normalised(),
            submitted: true,
        };
        let saved = SavedSynthesis::of(&outcome, &digest, "now");
        assert_eq!(saved.reuse(&digest), Some(outcome));
        let changed = vec![dir(".", "root"), dir("a", "A, edited.")];
        assert_ne!(entries_digest(&changed, None), digest);
        assert_eq!(saved.reuse(&entries_digest(&changed, None)), None);
        assert_eq!(saved.reuse(&entries_digest(&entries[..1], None)), None);
        // Another language is another synthesis; the same one, however
        // spelled, is not.
        let french = entries_digest(&entries, Some("French"));
        assert_ne!(french, digest);
        assert_eq!(entries_digest(&entries, Some(" french")), french);
        assert_eq!(saved.reuse(&french), None);
        let without_verdict: SavedSynthesis =
            serde_json::from_value(json!({"entries_digest": digest, "brief": 3})).unwrap();
        assert_eq!(without_verdict.reuse(&digest), None);
        // A file an earlier luminos wrote reads the same.
        let stored: SavedSynthesis =
            serde_json::from_value(serde_json::to_value(&saved).unwrap()).unwrap();
        assert_eq!(stored, saved);
    }

    #[test]
    fn report_order_is_top_down() {
        let ordered = report_order(vec![
            dir("a/b", "1"),
            dir("a-b", "2"),
            dir(".", "root"),
            dir("a", "3"),
        ]);
        let rels: Vec<&str> = ordered.iter().map(|e| e.relative_path.as_str()).collect();
        assert_eq!(rels, [".", "a", "a-b", "a/b"]);
    }
}
