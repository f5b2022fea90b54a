//! `synthesis.json`: a submitted verdict kept with the digest of the
//! entries it read, so a later run over the same entries reuses it instead
//! of paying for it again, and `ask` and a cached report can quote it.
//!
//! Read leniently ([`crate::lenient`]): a file an earlier luminos wrote, or
//! one cut short, reads as far as it holds; a verdict without its brief or
//! its detailed analysis is never reused. What the digest covers is
//! [`super::entries_digest`]'s business.

use serde::{Deserialize, Serialize};

use super::SynthesisOutcome;
use crate::lenient;
use crate::report::Sections;

/// The content of `synthesis.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct SavedSynthesis {
    #[serde(default, deserialize_with = "lenient::some_text")]
    pub brief: Option<String>,
    #[serde(default, deserialize_with = "lenient::some_text")]
    pub detailed: Option<String>,
    /// Saved before there were sections, or unreadable: none.
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub sections: Sections,
    #[serde(default, deserialize_with = "lenient::some_text")]
    pub entries_digest: Option<String>,
    #[serde(default, deserialize_with = "lenient::some_text")]
    pub created_at: Option<String>,
}

impl SavedSynthesis {
    /// What is saved for `outcome`, built from entries with `digest`.
    pub(crate) fn of(outcome: &SynthesisOutcome, digest: &str, now: &str) -> Self {
        SavedSynthesis {
            brief: Some(outcome.brief.clone()),
            detailed: Some(outcome.detailed.clone()),
            sections: outcome.sections.clone(),
            entries_digest: Some(digest.to_string()),
            created_at: Some(now.to_string()),
        }
    }

    /// The saved verdict, if it was built from entries with `digest`.
    pub(crate) fn reuse(&self, digest: &str) -> Option<SynthesisOutcome> {
        if self.entries_digest.as_deref() != Some(digest) {
            return None;
        }
        let (brief, detailed) = self.verdict()?;
        Some(SynthesisOutcome {
            brief,
            detailed,
            sections: self.sections.clone(),
            submitted: true,
        })
    }

    /// The brief and the detailed analysis, when both were saved.
    pub(crate) fn verdict(&self) -> Option<(String, String)> {
        Some((self.brief.clone()?, self.detailed.clone()?))
    }
}
