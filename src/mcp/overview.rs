//! `overview {target}`: the verdict, the analysis, the domain sections,
//! coverage and every flag of the cached investigation; also what
//! `investigate` answers once its run ends ([`overview_json`]).

use serde_json::{Map, Value, json};

use super::convert::ToolFailure;
use super::read::{read, shown, tree_block};
use super::tools::{Call, TargetArgs};
use crate::ai::orchestrator::CachedInvestigation;
use crate::report::{DirCoverage, DirectoryReport, Report};

/// Answer `overview`.
pub(super) async fn overview(call: &Call, args: TargetArgs) -> Result<Value, ToolFailure> {
    let (config, cached) = read(call, &args.target).await?;
    Ok(overview_json(
        &shown(&config),
        &cached.report,
        cached_investigation(&cached),
        tree_block(&cached.changes),
    ))
}

/// What the cache says of the investigation itself: its id and model, and
/// how the last run that reached its end ended (`unknown` when no run
/// recorded it).
fn cached_investigation(cached: &CachedInvestigation) -> Value {
    let mut fields = Map::new();
    fields.insert("id".into(), json!(cached.id));
    fields.insert("model".into(), json!(cached.model));
    match &cached.last_run {
        Some(run) => {
            fields.insert("status".into(), json!(run.status));
            if let Some(note) = &run.note {
                fields.insert("note".into(), json!(note));
            }
            fields.insert("finished_at".into(), json!(run.finished_at));
        }
        None => {
            fields.insert("status".into(), json!("unknown"));
        }
    }
    fields.insert("verdict_written_at".into(), json!(cached.verdict_at));
    Value::Object(fields)
}

/// The overview of `report` (over `target`), with what is known of the
/// `investigation` and the `tree` block.
pub(super) fn overview_json(
    target: &str,
    report: &Report,
    investigation: Value,
    tree: Value,
) -> Value {
    let mut answer = Map::new();
    answer.insert("target".into(), json!(target));
    answer.insert("investigation".into(), investigation);
    answer.insert("tree".into(), tree);
    answer.insert("brief".into(), json!(report.ai_brief));
    answer.insert("analysis".into(), json!(report.ai_detailed));
    if !report.ai_sections.is_empty() {
        answer.insert("sections".into(), json!(report.ai_sections));
    }
    answer.insert("coverage".into(), coverage(&report.directories));
    answer.insert("flags".into(), json!(report.flags));
    if let Some(grounding) = &report.grounding {
        answer.insert(
            "citations".into(),
            json!({"checked": grounding.citations, "found": grounding.resolved}),
        );
    }
    Value::Object(answer)
}

/// How many directories in scope got their summary which way.
fn coverage(directories: &[DirectoryReport]) -> Value {
    let count = |wanted: DirCoverage| {
        directories
            .iter()
            .filter(|dir| dir.coverage == wanted)
            .count()
    };
    json!({
        "directories": directories.len(),
        "investigated": count(DirCoverage::Investigated),
        "folded": count(DirCoverage::Folded),
        "mechanical": count(DirCoverage::Mechanical),
        "without_summary": count(DirCoverage::None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Flag;

    #[test]
    fn the_overview_names_its_parts_and_counts_coverage() {
        let dir = |path: &str, coverage| DirectoryReport {
            path: path.into(),
            coverage,
            ..DirectoryReport::default()
        };
        let report = Report {
            ai_brief: "A demo.".into(),
            ai_detailed: "More.".into(),
            flags: vec![Flag::new("src/a.rs", "unsafe", "concern")],
            directories: vec![
                dir(".", DirCoverage::Investigated),
                dir("src", DirCoverage::Folded),
                dir("docs", DirCoverage::None),
            ],
            ..Report::default()
        };
        let answer = overview_json("/t", &report, json!({"status": "complete"}), json!({}));
        assert_eq!(answer["brief"], "A demo.");
        assert_eq!(answer["analysis"], "More.");
        assert!(answer.get("sections").is_none());
        assert_eq!(answer["flags"][0]["severity"], "concern");
        assert_eq!(
            answer["coverage"],
            json!({"directories": 3, "investigated": 1, "folded": 1, "mechanical": 0,
                   "without_summary": 1})
        );
    }
}
