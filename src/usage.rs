//! Token counts: how many tokens one reply (or a run) read, wrote to the
//! prompt cache, read from it and produced.
//!
//! One type below both the Messages client, which reads a reply's `usage`
//! into it (the API's field names, so it deserializes as it comes), and
//! the report, which prints and saves a run's totals (under names of its
//! own, `report::ReportTokens`). It knows no prices and no model: what a
//! count costs is `ai::api::cost`'s.

use serde::{Deserialize, Serialize};

/// Token usage of one response. `input_tokens` counts only what follows the
/// last cache breakpoint; the context in use is the sum of the three inputs.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    /// Of `cache_creation_input_tokens`, those written at the 1-hour
    /// lifetime (`cache_creation.ephemeral_1h_input_tokens`; the rest were
    /// written at 5 minutes), when the API said; `None` when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_1h_input_tokens: Option<u64>,
}

impl Usage {
    /// Its cache writes by lifetime, `(5 minutes, 1 hour)`, as the API
    /// split them; `None` when it did not say.
    pub fn cache_writes_said(&self) -> Option<(u64, u64)> {
        let total = self.cache_creation_input_tokens;
        (self.cache_creation_1h_input_tokens)
            .map(|hour| (total.saturating_sub(hour), hour.min(total)))
    }

    /// The size of the context this call used: input + cache writes + cache
    /// reads. Budget checks use this, not `input_tokens` alone.
    pub fn context_tokens(&self) -> u64 {
        // Saturating: a broken server's absurd counts must not panic a run.
        self.input_tokens
            .saturating_add(self.cache_creation_input_tokens)
            .saturating_add(self.cache_read_input_tokens)
    }

    /// Add `other`'s counts to these, saturating like [`Usage::context_tokens`].
    pub fn accumulate(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_creation_input_tokens = self
            .cache_creation_input_tokens
            .saturating_add(other.cache_creation_input_tokens);
        self.cache_read_input_tokens = self
            .cache_read_input_tokens
            .saturating_add(other.cache_read_input_tokens);
        self.cache_creation_1h_input_tokens = match (
            self.cache_creation_1h_input_tokens,
            other.cache_creation_1h_input_tokens,
        ) {
            (None, None) => None,
            (mine, theirs) => Some(mine.unwrap_or(0).saturating_add(theirs.unwrap_or(0))),
        };
    }
}
