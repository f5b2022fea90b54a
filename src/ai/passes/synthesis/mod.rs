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
//! whose entries have the same digest reuses it ([`reusable_synthesis`])
//! instead of paying for the same verdict again. The fallback is never saved.
//!
//! Also unlike the original, the summaries need not fit one call: when they
//! do not ([`crate::ai::rules::levels`]), [`synthesize`] summarises parts of
//! the tree first and writes the verdict from those summaries (`levels.rs`).
//! Mechanical entries are read only where no mechanical parent already
//! describes their subtree ([`synthesis_entries`]). How a part's domain
//! sections are shown to the level above is `sections.rs`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

mod levels;
mod sections;

pub(crate) use sections::sections_for_prompt;

use crate::ai::engine::context::RunContext;
use crate::ai::engine::conversation::CallEnd;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::one_call::{OneCall, Without, converse};
use crate::ai::prompts::{self, SynthesisPrompt};
use crate::ai::rules::decide::in_synthesis;
use crate::ai::rules::fingerprint::language_key;
use crate::ai::rules::mechanical::is_mechanical;
use crate::ai::tools::input::{string_field, string_list};
use crate::ai::tools::{Toolbox, frame_untrusted};
use crate::report::Sections;
use crate::text::escape_line;
pub(crate) use levels::{LaidOut, SynthesisRun, lay_out, synthesize};

/// Turns the synthesis pass may take.
pub(crate) const SYNTHESIS_MAX_TURNS: u32 = 5;

/// The `directory` name of synthesis tool calls in `investigation.log`.
pub(crate) const SYNTHESIS_LOG_NAME: &str = "(synthesis)";

/// Dir entries in report order: the root first, then top-down (the reverse of
/// the leaf-first investigation order).
pub(crate) fn report_order(mut entries: Vec<Value>) -> Vec<Value> {
    fn key(entry: &Value) -> (usize, String) {
        match entry.get("relative_path").and_then(Value::as_str) {
            None | Some("" | ".") => (0, String::new()),
            Some(rel) => (rel.matches('/').count() + 1, rel.to_string()),
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
    entries: &HashMap<PathBuf, Value>,
) -> Vec<Value> {
    let mechanical = |dir: &Path| entries.get(dir).map(is_mechanical);
    report_order(
        dirs.iter()
            .filter_map(|dir| {
                let entry = entries.get(dir)?;
                let parent = dir.parent().filter(|_| dir != target).and_then(mechanical);
                in_synthesis(is_mechanical(entry), parent).then(|| entry.clone())
            })
            .collect(),
    )
}

/// The `summaries_text` block: one section per dir entry.
pub(crate) fn render_summaries(entries: &[Value]) -> String {
    if entries.is_empty() {
        return "(none)".to_string();
    }
    let mut lines = Vec::new();
    for entry in entries {
        let text = |key: &str, fallback: &'static str| {
            entry
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| fallback.to_string())
        };
        lines.push(format!("### {}/", escape_line(&text("relative_path", "?"))));
        lines.push(format!("Category: {}", text("dominant_category", "?")));
        lines.push(format!("Summary: {}", text("summary", "(no summary)")));
        let notable = string_list(entry, "notable_files");
        if !notable.is_empty() {
            lines.push(format!("Notable files: {}", notable.join(", ")));
        }
        lines.push(String::new());
    }
    lines.join("\n")
}

/// The mechanical report: the first non-empty summary as the brief, every
/// non-empty summary as `**<dir>/**: <summary>` paragraphs.
pub(crate) fn synthesize_from_cache(entries: &[Value]) -> (String, String) {
    if entries.is_empty() {
        return (
            "(AI analysis incomplete — no data was cached)".to_string(),
            String::new(),
        );
    }
    let with_summary: Vec<(String, String)> = entries
        .iter()
        .filter_map(|entry| {
            let summary = entry.get("summary").and_then(Value::as_str)?;
            if summary.is_empty() {
                return None;
            }
            let rel = entry
                .get("relative_path")
                .and_then(Value::as_str)
                .unwrap_or("?");
            Some((rel.to_string(), summary.to_string()))
        })
        .collect();
    let brief = with_summary
        .first()
        .map(|(_, summary)| summary.clone())
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
    entries: &[Value],
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

impl SynthesisOutcome {
    /// The synthesis the model submitted (`submit_report`'s input, or the
    /// refinement's improved report).
    pub(crate) fn submitted(input: &Value) -> SynthesisOutcome {
        SynthesisOutcome {
            brief: string_field(input, "brief"),
            detailed: string_field(input, "detailed"),
            sections: Sections::from_submitted(input),
            submitted: true,
        }
    }
}

impl SynthesisOutcome {
    /// This synthesis as `submit_report`'s input would give it: the brief,
    /// the detailed analysis and the sections' fields (what the refinement
    /// starts from and hands back).
    pub(crate) fn as_report(&self) -> Value {
        let mut report = serde_json::Map::new();
        report.insert("brief".into(), Value::String(self.brief.clone()));
        report.insert("detailed".into(), Value::String(self.detailed.clone()));
        if let Ok(Value::Object(sections)) = serde_json::to_value(&self.sections) {
            report.extend(sections);
        }
        Value::Object(report)
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
    entries: &[Value],
    language: Option<&str>,
) -> Result<SynthesisOutcome, InvestigationError> {
    let system = synthesis_prompt(target, entries, language)?;
    let end = converse(ctx, SYNTHESIS_CALL, system, false).await?;
    Ok(match WITHOUT.settle(ctx, end) {
        CallEnd::Submitted(input) => SynthesisOutcome::submitted(&input),
        CallEnd::ApiError(_) => SynthesisOutcome::default(),
        // The summaries stand on their own: the report is built from them
        // without the model, and says why.
        CallEnd::Refused(_)
        | CallEnd::ContextFull
        | CallEnd::OutOfTurns
        | CallEnd::Malformed
        | CallEnd::OverBudget(_) => mechanical_synthesis(entries),
    })
}

/// The synthesis built from the summaries without the model.
fn mechanical_synthesis(entries: &[Value]) -> SynthesisOutcome {
    let (brief, detailed) = synthesize_from_cache(entries);
    SynthesisOutcome {
        brief,
        detailed,
        sections: Sections::default(),
        submitted: false,
    }
}

/// A digest of the dir entries a synthesis reads and of the `--language`
/// it is written in: any change to any entry (a new summary, a new
/// timestamp, one entry more or less) or to the language changes it.
/// Without a language it is what it always was, so a saved synthesis still
/// holds.
pub(crate) fn entries_digest(entries: &[Value], language: Option<&str>) -> String {
    let mut hasher = Sha256::new();
    for entry in entries {
        hasher.update(entry.to_string().as_bytes());
        hasher.update(b"\n");
    }
    if let Some(language) = language {
        hasher.update(b"\0language\0");
        hasher.update(language_key(language).as_bytes());
    }
    crate::text::hex(&hasher.finalize())
}

/// `synthesis.json`'s content for `outcome` built from entries with `digest`.
pub(crate) fn saved_synthesis(outcome: &SynthesisOutcome, digest: &str, now: &str) -> Value {
    json!({
        "brief": outcome.brief,
        "detailed": outcome.detailed,
        "sections": outcome.sections,
        "entries_digest": digest,
        "created_at": now,
    })
}

/// The saved synthesis, if it was built from entries with `digest`.
pub(crate) fn reusable_synthesis(saved: Option<&Value>, digest: &str) -> Option<SynthesisOutcome> {
    let saved = saved?;
    if saved.get("entries_digest").and_then(Value::as_str) != Some(digest) {
        return None;
    }
    Some(SynthesisOutcome {
        brief: saved.get("brief")?.as_str()?.to_string(),
        detailed: saved.get("detailed")?.as_str()?.to_string(),
        // Saved before there were sections (or unreadable): none.
        sections: saved
            .get("sections")
            .and_then(|sections| serde_json::from_value(sections.clone()).ok())
            .unwrap_or_default(),
        submitted: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(rel: &str, summary: &str) -> Value {
        json!({"path": format!("/x/{rel}"), "relative_path": rel, "child_count": 1,
               "summary": summary, "dominant_category": "source",
               "cached_at": "2026-04-11T00:00:00+00:00"})
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
        a["notable_files"] = json!(["src/main.rs", "src/lib.rs"]);
        let b = json!({"summary": "Loose."});
        assert_eq!(
            render_summaries(&[a, b]),
            "### src/\nCategory: source\nSummary: Core logic.\n\
             Notable files: src/main.rs, src/lib.rs\n\n### ?/\nCategory: ?\nSummary: Loose.\n"
        );
    }

    #[test]
    fn a_saved_synthesis_is_reused_only_for_the_same_entries() {
        let entries = vec![dir(".", "root"), dir("a", "A.")];
        let digest = entries_digest(&entries, None);
        let outcome = SynthesisOutcome {
            brief: "B".into(),
            detailed: "D".into(),
            sections: Sections::from_submitted(&json!({"themes": ["Tax returns"]})),
            submitted: true,
        };
        let saved = saved_synthesis(&outcome, &digest, "now");
        assert_eq!(reusable_synthesis(Some(&saved), &digest), Some(outcome));
        let changed = vec![dir(".", "root"), dir("a", "A, edited.")];
        assert_ne!(entries_digest(&changed, None), digest);
        assert_eq!(
            reusable_synthesis(Some(&saved), &entries_digest(&changed, None)),
            None
        );
        assert_eq!(
            reusable_synthesis(Some(&saved), &entries_digest(&entries[..1], None)),
            None
        );
        // Another language is another synthesis; the same one, however
        // spelled, is not.
        let french = entries_digest(&entries, Some("French"));
        assert_ne!(french, digest);
        assert_eq!(entries_digest(&entries, Some(" french")), french);
        assert_eq!(reusable_synthesis(Some(&saved), &french), None);
        assert_eq!(reusable_synthesis(None, &digest), None);
        assert_eq!(
            reusable_synthesis(Some(&json!({"entries_digest": digest})), &digest),
            None
        );
    }

    #[test]
    fn report_order_is_top_down() {
        let ordered = report_order(vec![
            dir("a/b", "1"),
            dir("a-b", "2"),
            dir(".", "root"),
            dir("a", "3"),
        ]);
        let rels: Vec<&str> = ordered
            .iter()
            .map(|e| e["relative_path"].as_str().unwrap())
            .collect();
        assert_eq!(rels, [".", "a", "a-b", "a/b"]);
    }
}
