//! How severe a finding is: the one type the flags, the report, the
//! cache's flag records, the grounding, the refinement and the MCP server
//! share.
//!
//! On the wire and in `flags.jsonl` it is the lowercase word (`critical`,
//! `concern`, `info`). luminos raises only those three; a flag written by
//! another implementation with a word luminos does not know keeps it
//! ([`Severity::Other`]) and sorts after `info`, as the original sorted
//! it, so one odd word never costs the finding. A value that is not a
//! word at all reads as `info`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A finding's severity, most severe first (the derived order is the
/// report's: `Critical < Concern < Info < Other`).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Critical,
    Concern,
    #[default]
    Info,
    /// A word another implementation wrote that luminos does not know,
    /// kept as written (it is foreign text: escape it where it is shown).
    Other(String),
}

impl Severity {
    /// The severities luminos raises, most severe first.
    pub const ALL: [Severity; 3] = [Severity::Critical, Severity::Concern, Severity::Info];

    /// The word a flag spells it with.
    pub fn as_str(&self) -> &str {
        match self {
            Severity::Critical => "critical",
            Severity::Concern => "concern",
            Severity::Info => "info",
            Severity::Other(word) => word,
        }
    }

    /// The severity luminos raises that `word` names exactly; `None` for
    /// any other word.
    pub fn named(word: &str) -> Option<Severity> {
        Severity::ALL.into_iter().find(|s| s.as_str() == word)
    }

    /// Worth a reader's attention before anything else: critical or
    /// concern.
    pub fn is_serious(&self) -> bool {
        matches!(self, Severity::Critical | Severity::Concern)
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word as written: one of luminos's, or kept as [`Severity::Other`].
impl From<&str> for Severity {
    fn from(word: &str) -> Severity {
        Severity::named(word).unwrap_or_else(|| Severity::Other(word.to_string()))
    }
}

impl Serialize for Severity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Severity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Severity, D::Error> {
        Ok(match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(word) => Severity::from(word.as_str()),
            _ => Severity::Info,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_set_is_pinned_most_severe_first() {
        let words: Vec<&str> = Severity::ALL.iter().map(Severity::as_str).collect();
        assert_eq!(words, ["critical", "concern", "info"]);
        let mut sorted = [
            Severity::Other("weird".into()),
            Severity::Info,
            Severity::Critical,
            Severity::Concern,
        ];
        sorted.sort();
        assert_eq!(sorted[..3], Severity::ALL);
        assert_eq!(sorted[3], Severity::Other("weird".into()));
        for severity in Severity::ALL {
            assert_eq!(Severity::named(severity.as_str()), Some(severity.clone()));
            assert_eq!(serde_json::to_value(&severity).unwrap(), severity.as_str());
        }
    }

    #[test]
    fn an_unknown_word_is_kept_and_a_non_word_reads_as_info() {
        assert_eq!(Severity::named("high"), None);
        assert_eq!(Severity::named("Critical"), None);
        let read = |v: serde_json::Value| serde_json::from_value::<Severity>(v).unwrap();
        assert_eq!(
            read(serde_json::json!("high")),
            Severity::Other("high".into())
        );
        assert_eq!(
            serde_json::to_value(read(serde_json::json!("high"))).unwrap(),
            "high"
        );
        assert_eq!(read(serde_json::json!(3)), Severity::Info);
        assert_eq!(read(serde_json::json!("concern")), Severity::Concern);
    }
}
