//! `overview {target}`: the verdict, the analysis, the domain sections,
//! coverage and every flag of the cached investigation; also what
//! `investigate` answers once its run ends ([`overview_json`]).

use serde::{Serialize, Serializer};

use super::convert::{ToolFailure, Warned};
use super::read::{TreeBlock, read, shown, tree_block};
use super::tools::{Call, TargetArgs};
use crate::ai::orchestrator::CachedInvestigation;
use crate::report::{
    DirCoverage, DirectoryReport, Flag, Investigation, InvestigationStatus, Report, Sections,
};

/// The answer of `overview` and `investigate`: the report's verdict,
/// sections, coverage and flags, with what is known of the
/// `investigation` (`I`: what the cache says, or the run's own status).
#[derive(Debug, Serialize)]
pub(super) struct Overview<I> {
    target: String,
    investigation: I,
    tree: TreeBlock,
    brief: String,
    analysis: String,
    #[serde(skip_serializing_if = "Sections::is_empty")]
    sections: Sections,
    coverage: Coverage,
    flags: Vec<Flag>,
    #[serde(skip_serializing_if = "Option::is_none")]
    citations: Option<Citations>,
}

/// What the cache says of the investigation itself: its id and model, and
/// how the last run that reached its end ended (`unknown` when no run
/// recorded it).
#[derive(Debug, Serialize)]
pub(super) struct CachedFacts {
    id: String,
    model: Option<String>,
    #[serde(serialize_with = "status_or_unknown")]
    status: Option<InvestigationStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    finished_at: Option<String>,
    verdict_written_at: Option<String>,
}

/// How many directories in scope got their summary which way.
#[derive(Debug, PartialEq, Eq, Serialize)]
struct Coverage {
    directories: usize,
    investigated: usize,
    folded: usize,
    mechanical: usize,
    without_summary: usize,
}

/// The citations the grounding checked, and how many it found.
#[derive(Debug, Serialize)]
struct Citations {
    checked: usize,
    found: usize,
}

/// Answer `overview`.
pub(super) async fn overview(
    call: &Call,
    args: TargetArgs,
) -> Result<Overview<CachedFacts>, ToolFailure> {
    let (config, cached) = read(call, &args.target).await?;
    let answer = Overview::of(
        &shown(&config),
        &cached.report,
        cached_facts(&cached),
        tree_block(&cached.changes),
    );
    Ok(answer)
}

fn cached_facts(cached: &CachedInvestigation) -> CachedFacts {
    let run = cached.last_run.as_ref();
    CachedFacts {
        id: cached.id.clone(),
        model: cached.model.clone(),
        status: run.map(|run| run.status),
        note: run.and_then(|run| run.note.clone()),
        finished_at: run.map(|run| run.finished_at.clone()),
        verdict_written_at: cached.verdict_at.clone(),
    }
}

impl<I: Serialize> Overview<I> {
    /// The overview of `report` (over `target`), with what is known of the
    /// `investigation` and the `tree` block.
    pub(super) fn of(target: &str, report: &Report, investigation: I, tree: TreeBlock) -> Self {
        Overview {
            target: target.to_string(),
            investigation,
            tree,
            brief: report.ai_brief.clone(),
            analysis: report.ai_detailed.clone(),
            sections: report.ai_sections.clone(),
            coverage: coverage(&report.directories),
            flags: report.flags.clone(),
            citations: report.grounding.as_ref().map(|grounding| Citations {
                checked: grounding.citations,
                found: grounding.resolved,
            }),
        }
    }
}

/// The run's own status, as `investigate` answers it.
pub(super) type RunFacts = Warned<Investigation>;

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's serialize_with hands the field by reference"
)]
fn status_or_unknown<S: Serializer>(
    status: &Option<InvestigationStatus>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match status {
        Some(status) => status.serialize(serializer),
        None => serializer.serialize_str("unknown"),
    }
}

fn coverage(directories: &[DirectoryReport]) -> Coverage {
    let count = |wanted: DirCoverage| {
        directories
            .iter()
            .filter(|dir| dir.coverage == wanted)
            .count()
    };
    Coverage {
        directories: directories.len(),
        investigated: count(DirCoverage::Investigated),
        folded: count(DirCoverage::Folded),
        mechanical: count(DirCoverage::Mechanical),
        without_summary: count(DirCoverage::None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        let tree = tree_block(&crate::ai::orchestrator::TreeChanges::default());
        let answer = serde_json::to_value(Overview::of(
            "/t",
            &report,
            json!({"status": "complete"}),
            tree,
        ))
        .unwrap();
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
