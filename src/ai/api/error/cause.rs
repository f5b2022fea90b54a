//! What an API error says about every later call: a rejected credential,
//! an unknown model or an account that cannot pay will be answered the same
//! way however often the request is sent ([`ApiError::final_cause`]), and a
//! prompt past the model's window says how large it was
//! ([`ApiError::prompt_too_long`]).
//!
//! Gateways put these answers in 400s: the LiteLLM proxy answers a wrong key
//! and an unknown model with a 400 whose body names the problem in words,
//! so the words are read as well as the status.

use super::{ApiError, ApiErrorKind, Endpoint};

/// What a final error means for every later call ([`ApiError::final_cause`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalCause {
    /// The key or token is wrong, revoked, or may not do this.
    Credential,
    /// The model does not exist (or no longer does) behind this endpoint.
    UnknownModel,
    /// The account cannot pay: no credit, a spend limit, a budget.
    Billing,
    /// A 404 that is not the API's: the base URL is not a Messages API.
    NotMessagesApi,
    /// A 404 from the Message Batches endpoint: the base URL serves
    /// messages but not batches (a gateway's unified route, say).
    NoBatchesApi,
}

/// Words of a gateway's final answer about the credential (lower case).
const CREDENTIAL_WORDS: &[&str] = &[
    "authentication_error",
    "authentication error",
    "invalid x-api-key",
    "invalid api key",
    "incorrect api key",
    "api key not valid",
    "no api key passed",
    "virtual key expected",
    "invalid proxy server token",
    "token_not_found_in_db",
    "permission_error",
];

/// Words of a final answer about money (lower case).
const BILLING_WORDS: &[&str] = &[
    "billing_error",
    "credit balance is too low",
    "budget_exceeded",
    "exceededbudget",
    "budget has been exceeded",
];

/// Words of a final answer about the model (lower case).
const UNKNOWN_MODEL_WORDS: &[&str] = &[
    "not_found_error",
    "invalid model name",
    "there is no 'model_name'",
    "model_not_found",
    "unsupported model",
];

impl ApiError {
    /// What this error says about every later call, when it says anything:
    /// a rejected credential, an unknown model, or an account that cannot
    /// pay will be answered the same way however often the request is sent.
    ///
    /// The status decides first (401, 402, 403, 404). A 400 (or any other
    /// final status) is read by its words, because gateways put these
    /// answers in 400s: the LiteLLM proxy answers an unknown model with
    /// "`/v1/messages: Invalid model name passed in model=...`" and a key it
    /// does not know with "`Authentication Error, ...`" (shapes seen in its
    /// issue tracker, e.g. BerriAI/litellm#8821 and #39757, 2025-2026), and
    /// the API itself answers an empty prepaid balance with a 400 "credit
    /// balance is too low". Retryable statuses (429, 5xx) are never read
    /// this way: they are transient by definition.
    pub fn final_cause(&self) -> Option<FinalCause> {
        if self.kind.is_transient() {
            return None;
        }
        match self.kind {
            ApiErrorKind::Authentication | ApiErrorKind::Permission => {
                return Some(FinalCause::Credential);
            }
            ApiErrorKind::Billing => return Some(FinalCause::Billing),
            // Creating a batch names no model the API checks up front (each
            // request's errors come with its result), so a 404 there is the
            // endpoint missing, whatever the body says.
            ApiErrorKind::NotFound if self.endpoint == Some(Endpoint::Batches) => {
                return Some(FinalCause::NoBatchesApi);
            }
            ApiErrorKind::NotFound if self.is_unknown_model() => {
                return Some(FinalCause::UnknownModel);
            }
            ApiErrorKind::NotFound => return Some(FinalCause::NotMessagesApi),
            // Any other final kind (400, 413) is read by its words below.
            _ => {}
        }
        let words = format!(
            "{} {}",
            self.error_type.as_deref().unwrap_or(""),
            self.message
        )
        .to_ascii_lowercase();
        let said = |phrases: &[&str]| phrases.iter().any(|p| words.contains(p));
        if said(CREDENTIAL_WORDS) {
            Some(FinalCause::Credential)
        } else if said(BILLING_WORDS) {
            Some(FinalCause::Billing)
        } else if said(UNKNOWN_MODEL_WORDS) {
            Some(FinalCause::UnknownModel)
        } else {
            None
        }
    }

    /// `(tokens, maximum)` when this is the API's 400 for a prompt larger
    /// than the model's window: "prompt is too long: N tokens > M maximum"
    /// (the wording reported by users of the API; the maximum may sit a
    /// little below the nominal window).
    pub fn prompt_too_long(&self) -> Option<(u64, u64)> {
        if self.kind != ApiErrorKind::InvalidRequest {
            return None;
        }
        let lower = self.message.to_ascii_lowercase();
        let rest = &lower[lower.find("prompt is too long")? + "prompt is too long".len()..];
        let mut numbers = rest
            .split(|c: char| !c.is_ascii_digit())
            .filter(|part| !part.is_empty())
            .map(|part| part.parse::<u64>().ok());
        match (numbers.next(), numbers.next()) {
            (Some(Some(tokens)), Some(Some(maximum))) => Some((tokens, maximum)),
            _ => Some((0, 0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::headers;
    use super::*;

    #[test]
    fn final_causes_from_the_api_and_from_gateways() {
        let cause = |status, body: &str| {
            ApiError::from_http_response(status, headers(&[]), body.as_bytes()).final_cause()
        };
        let api = |status, kind: &str, message: &str| {
            cause(
                status,
                &format!(r#"{{"type":"error","error":{{"type":"{kind}","message":"{message}"}}}}"#),
            )
        };
        use FinalCause::*;
        assert_eq!(
            api(401, "authentication_error", "invalid x-api-key"),
            Some(Credential)
        );
        assert_eq!(api(403, "permission_error", "no"), Some(Credential));
        assert_eq!(api(402, "billing_error", "pay up"), Some(Billing));
        assert_eq!(api(404, "not_found_error", "model: x"), Some(UnknownModel));
        assert_eq!(cause(404, "<html>nope</html>"), Some(NotMessagesApi));
        // The same 404s from the batches endpoint say batches are missing.
        let batches = |body: &str| {
            ApiError::from_http_response(404, headers(&[]), body.as_bytes())
                .at(Endpoint::Batches)
                .final_cause()
        };
        assert_eq!(batches(r#"{"detail":"Not Found"}"#), Some(NoBatchesApi));
        assert_eq!(
            batches(r#"{"type":"error","error":{"type":"not_found_error","message":"x"}}"#),
            Some(NoBatchesApi)
        );
        assert_eq!(
            api(
                400,
                "invalid_request_error",
                "Your credit balance is too low to access the API."
            ),
            Some(Billing)
        );
        // LiteLLM's 400s: an unknown model (message nested or flat) and a key
        // it does not know.
        assert_eq!(
            cause(
                400,
                r#"{"error":{"message":{"error":"/v1/messages: Invalid model name passed in model=claude-x. Call `/v1/models` to view available models for your key."},"type":"None","param":"None","code":"400"}}"#
            ),
            Some(UnknownModel)
        );
        assert_eq!(
            cause(
                400,
                r#"{"error":{"message":"400: {'error': '/v1/messages: Invalid model name passed in model=claude-x'}","type":"None","param":"None","code":"400"}}"#
            ),
            Some(UnknownModel)
        );
        assert_eq!(
            cause(
                400,
                r#"{"error":{"message":"Authentication Error, Invalid proxy server token passed. Received API Key = sk-...abcd","type":"token_not_found_in_db","param":"key","code":"400"}}"#
            ),
            Some(Credential)
        );
        assert_eq!(
            cause(
                400,
                r#"{"error":{"message":"litellm.AuthenticationError: AnthropicException - {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}","type":null,"param":null,"code":"400"}}"#
            ),
            Some(Credential)
        );
        // What a request itself got wrong says nothing about the next one,
        // and transient statuses are never read for words.
        assert_eq!(
            api(400, "invalid_request_error", "messages: bad block"),
            None
        );
        assert_eq!(api(429, "rate_limit_error", "invalid api key"), None);
        assert_eq!(api(529, "overloaded_error", "Overloaded"), None);
    }

    #[test]
    fn a_prompt_too_long_names_its_size() {
        let err = ApiError::from_http_response(
            400,
            headers(&[]),
            br#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208656 tokens > 200000 maximum"}}"#,
        );
        assert_eq!(err.prompt_too_long(), Some((208_656, 200_000)));
        assert_eq!(err.final_cause(), None);
        let other = ApiError::from_http_response(400, headers(&[]), b"{}");
        assert_eq!(other.prompt_too_long(), None);
    }
}
