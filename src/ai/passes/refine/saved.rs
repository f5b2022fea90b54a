//! `refinement.json`: the rounds of a refinement, kept so a later run with
//! `--refine` over the same synthesis pays for none of them again.
//!
//! A refinement belongs to the synthesis it refined, named by the digest
//! of its report ([`synthesis_digest`]): a run whose
//! synthesis is another (the summaries changed and it was written again)
//! starts over. Each round is written as soon as it is done, so an
//! interrupted refinement keeps what it paid for, and the next run goes on
//! from there.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::ai::passes::synthesis::SubmittedReport;
use crate::money::Usd;
use crate::report::{Flag, RefineStop};

/// One round as it was handed in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SavedRound {
    /// The improved report, without the flag lists.
    pub report: SubmittedReport,
    /// The flags it added.
    pub flags_added: Vec<Flag>,
    /// The recorded flags it withdrew.
    pub flags_withdrawn: Vec<Flag>,
    /// Read tool calls it made.
    pub reads: u32,
    /// What it cost when it was paid for.
    pub cost_usd: Usd,
}

/// The refinement of one synthesis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SavedRefinement {
    pub synthesis_digest: String,
    pub rounds: Vec<SavedRound>,
    /// Why it stopped, when it stopped on its own (a round read nothing
    /// new, nothing was left to settle): more rounds would change nothing.
    /// `None` while more rounds may still be run.
    pub settled: Option<RefineStop>,
    pub updated_at: String,
}

impl SavedRefinement {
    /// `saved` (as `refinement.json` held it), if it refined the synthesis
    /// with `digest`.
    pub(crate) fn of(saved: Option<SavedRefinement>, digest: &str) -> Option<SavedRefinement> {
        saved.filter(|saved| saved.synthesis_digest == digest)
    }
}

/// The digest that names a synthesis: its report's fields (the brief, the
/// detailed analysis, the sections), as `submit_report` gives them.
pub(crate) fn synthesis_digest(report: &SubmittedReport) -> String {
    let json = serde_json::to_string(report).unwrap_or_default();
    crate::text::hex(&Sha256::digest(json.as_bytes()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_saved_refinement_is_read_back_only_for_its_synthesis() {
        let report = |brief: &str, detailed: &str| {
            serde_json::from_value::<SubmittedReport>(json!({"brief": brief, "detailed": detailed}))
                .unwrap()
        };
        let digest = synthesis_digest(&report("B", "D"));
        assert_ne!(digest, synthesis_digest(&report("B", "D.")));
        assert_ne!(
            synthesis_digest(&report("ab", "c")),
            synthesis_digest(&report("a", "bc"))
        );
        let mut with_sections = report("B", "D");
        with_sections.sections.themes = vec!["Tax".into()];
        assert_ne!(digest, synthesis_digest(&with_sections));
        let saved = SavedRefinement {
            synthesis_digest: digest.clone(),
            rounds: vec![SavedRound {
                report: report("B2", "D2"),
                flags_added: vec![Flag::new("src/a.rs", "Bad.", "concern")],
                flags_withdrawn: vec![],
                reads: 3,
                cost_usd: Usd::new(0.02),
            }],
            settled: Some(RefineStop::NoNewReads),
            updated_at: "now".into(),
        };
        let value = serde_json::to_value(&saved).unwrap();
        assert_eq!(value["settled"], "no_new_reads");
        let read = || serde_json::from_value::<SavedRefinement>(value.clone()).ok();
        assert_eq!(SavedRefinement::of(read(), &digest), Some(saved));
        assert_eq!(
            SavedRefinement::of(read(), &synthesis_digest(&report("x", "y"))),
            None
        );
        assert!(serde_json::from_value::<SavedRefinement>(json!({"rounds": 3})).is_err());
        assert_eq!(SavedRefinement::of(None, &digest), None);
    }
}
