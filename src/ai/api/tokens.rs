//! The one estimate of how many tokens a text makes for a model, before
//! anything is counted: the catalog's tokens per byte
//! ([`super::catalog::Model::tokens_per_byte`]) times the text's bytes.
//!
//! It is used two ways, and each has its name: [`TokenEstimate::expected`]
//! for what a projection or a price expects, and [`TokenEstimate::at_most`]
//! (with [`COUNT_MARGIN`], for text that tokenizes denser than code) for a
//! limit that must not be passed: the context window, a prompt part's room,
//! the money a request is held to. The projection's constants are measured
//! in reference tokens ([`reference_tokens`], four bytes each), which
//! [`TokenEstimate::per_reference_token`] turns into the model's.
//!
//! What the API counts (`count_tokens`, a reply's usage) is the truth; this
//! is only what luminos takes it to be before it asks.

use super::catalog::Model;
use super::settings::COUNT_MARGIN;

/// Bytes per reference token: the rule of thumb the projection's constants
/// are measured in.
pub(crate) const BYTES_PER_TOKEN: u64 = 4;

/// `bytes / 4`, rounded up: reference tokens, the projection's unit (not
/// yet a model's tokens: see [`TokenEstimate::per_reference_token`]).
pub(crate) fn reference_tokens(bytes: u64) -> u64 {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// How many tokens a model makes of text, by its bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TokenEstimate {
    per_byte: f64,
}

impl TokenEstimate {
    /// The estimate for `model`, from the catalog.
    pub(crate) fn of(model: &Model) -> TokenEstimate {
        TokenEstimate::per_byte(model.tokens_per_byte)
    }

    /// An estimate of `per_byte` tokens a byte (never zero, so the inverse
    /// is finite).
    pub(crate) fn per_byte(per_byte: f64) -> TokenEstimate {
        TokenEstimate {
            per_byte: per_byte.max(f64::MIN_POSITIVE),
        }
    }

    /// The tokens `bytes` of text are expected to make: what a projection
    /// or a price counts.
    pub(crate) fn expected(self, bytes: usize) -> u64 {
        (bytes as f64 * self.per_byte).ceil() as u64
    }

    /// The most tokens `bytes` of text are taken to make, with the margin:
    /// what a limit that must not be passed counts.
    pub(crate) fn at_most(self, bytes: usize) -> u64 {
        (bytes as f64 * self.at_most_per_byte()).ceil() as u64
    }

    /// The bytes whose [`TokenEstimate::at_most`] stays within `tokens`.
    pub(crate) fn bytes_within(self, tokens: u64) -> usize {
        (tokens as f64 / self.at_most_per_byte()) as usize
    }

    /// The bytes of text to cut to save at least `tokens` by
    /// [`TokenEstimate::at_most`].
    pub(crate) fn bytes_to_save(self, tokens: u64) -> usize {
        (tokens as f64 / self.at_most_per_byte()).ceil() as usize
    }

    /// The bytes whose [`TokenEstimate::expected`] stays within `tokens`.
    pub(crate) fn bytes_expected_within(self, tokens: u64) -> u64 {
        (tokens as f64 / self.per_byte) as u64
    }

    /// The model's tokens per reference token: 1.0 on the older tokenizer,
    /// about 1.3 on the newer one.
    pub(crate) fn per_reference_token(self) -> f64 {
        self.per_byte * BYTES_PER_TOKEN as f64
    }

    fn at_most_per_byte(self) -> f64 {
        self.per_byte * COUNT_MARGIN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_is_the_expected_count_with_the_margin_and_inverts() {
        let estimate = TokenEstimate::per_byte(0.25);
        assert_eq!(estimate.expected(4_000), 1_000);
        assert_eq!(
            estimate.at_most(4_000),
            (1_000.0 * COUNT_MARGIN).ceil() as u64
        );
        let bytes = estimate.bytes_within(1_200);
        assert!(estimate.at_most(bytes) <= 1_200);
        assert!(estimate.at_most(bytes + 10) > 1_200);
        assert!(estimate.at_most(estimate.bytes_to_save(500)) >= 500);
        assert_eq!(estimate.per_reference_token(), 1.0);
        assert_eq!(reference_tokens(5), 2);
    }

    #[test]
    fn a_zero_rate_stays_finite() {
        let estimate = TokenEstimate::per_byte(0.0);
        assert_eq!(estimate.expected(1_000), 1);
        assert!(estimate.bytes_within(10) > 0);
    }
}
