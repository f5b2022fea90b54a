//! `synthesis_groups.json`: each part's summary of a synthesis in levels,
//! kept under the digest of its input ([`digest`]) so a rerun after a
//! change pays only for the parts the change reaches.
//!
//! Read leniently ([`crate::lenient`]): a summary that does not read is
//! left out, never the file. Which parts there are and when the file is
//! written is `levels.rs`'s business.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::SubmittedReport;
use crate::ai::rules::fingerprint::language_key;
use crate::cache::{Cache, CacheError, SYNTHESIS_GROUPS_FILE};
use crate::lenient;
use crate::report::Sections;

/// The summaries, by digest, in key order (as they always were).
pub(super) type Groups = BTreeMap<String, GroupSummary>;

/// One part's saved summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct GroupSummary {
    /// The part's label (its directories).
    #[serde(default, deserialize_with = "lenient::text")]
    pub part: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub brief: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub detailed: String,
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub sections: Sections,
    #[serde(default, deserialize_with = "lenient::text")]
    pub created_at: String,
}

impl GroupSummary {
    /// What part `part` handed in, written at `now`.
    pub(super) fn of(part: &str, report: SubmittedReport, now: &str) -> Self {
        let report = report.normalised();
        GroupSummary {
            part: part.to_string(),
            brief: report.brief,
            detailed: report.detailed,
            sections: report.sections,
            created_at: now.to_string(),
        }
    }
}

/// The file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
struct GroupsFile {
    #[serde(default, deserialize_with = "lenient::values")]
    groups: Groups,
}

/// The key of a group's saved summary: its input, and the language it is
/// written in (none: the key it always had).
pub(super) fn digest(target: &str, summaries: &str, language: Option<&str>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(target.as_bytes());
    hasher.update(b"\0");
    hasher.update(summaries.as_bytes());
    if let Some(language) = language {
        hasher.update(b"\0language\0");
        hasher.update(language_key(language).as_bytes());
    }
    crate::text::hex(&hasher.finalize())
}

/// The saved group summaries, by digest.
pub(super) fn saved_groups(cache: &Cache) -> Groups {
    cache
        .read_document::<GroupsFile>(SYNTHESIS_GROUPS_FILE)
        .map(|file| file.groups)
        .unwrap_or_default()
}

/// Save the group summaries: those of earlier runs not used yet (`old`)
/// and those this run used (which win).
pub(super) fn save_groups(cache: &Cache, old: &Groups, used: &Groups) -> Result<(), CacheError> {
    let mut groups = old.clone();
    groups.extend(used.iter().map(|(k, v)| (k.clone(), v.clone())));
    cache.write_json(SYNTHESIS_GROUPS_FILE, &GroupsFile { groups })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn group_keys_follow_their_input() {
        assert_eq!(digest("/t", "x", None), digest("/t", "x", None));
        assert_ne!(digest("/t", "x", None), digest("/t", "y", None));
        assert_ne!(digest("/t", "x", None), digest("/u", "x", None));
        assert_ne!(digest("/t", "x", None), digest("/t", "x", Some("French")));
    }

    #[test]
    fn a_summary_that_does_not_read_is_left_out_not_the_file() {
        let file: GroupsFile = serde_json::from_value(json!({"groups": {
            "a": {"part": "src/", "brief": "B", "detailed": "D", "created_at": "t"},
            "b": "not a summary",
            "c": {"brief": 3, "sections": "none"}
        }}))
        .unwrap();
        assert_eq!(file.groups.len(), 2);
        assert_eq!(file.groups["a"].brief, "B");
        assert_eq!(file.groups["c"], GroupSummary::default());
        let written = serde_json::to_value(&file).unwrap();
        assert_eq!(written["groups"]["a"]["part"], "src/");
    }
}
