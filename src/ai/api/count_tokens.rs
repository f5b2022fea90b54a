//! The token-counting endpoint, `POST /v1/messages/count_tokens`: how many
//! input tokens a request's prompt makes on its model, counted by the API
//! itself. `--estimate` uses it, where a key is set, to calibrate the token
//! counts it otherwise derives from bytes.
//!
//! From the token counting page, read 2026-11-27
//! (<https://platform.claude.com/docs/en/build-with-claude/token-counting>):
//! the endpoint takes the structured inputs of a Messages request (`model`,
//! `system`, `messages`, `tools`, `tool_choice`, `thinking`), answers
//! `{"input_tokens": N}`, is free, and has its own requests-per-minute
//! limit by usage tier (100 at tier 1), apart from message creation; the
//! count is an estimate that may differ from a real request's by a little;
//! `cache_control` marks are accepted but nothing is cached. So the
//! request carries no `max_tokens`, `stream` or output settings, and the
//! caller asks it rarely (once per estimate), once, under a short time
//! limit: a count that does not come is no reason to fail anything.

use std::time::Duration;

use serde_json::Value;

use super::reading::read_body;
use super::{ApiError, ApiErrorKind, Client, Endpoint, MessagesRequest, caching};

/// The most a token count may take before the caller goes on without it.
pub(crate) const COUNT_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest answer read (`{"input_tokens": N}` is a few bytes).
const MAX_COUNT_BYTES: usize = 64 * 1024;

impl Client {
    /// The API's count of `request`'s input tokens. One attempt, within
    /// [`COUNT_TIMEOUT`]; no retry (the caller does without).
    pub(crate) async fn count_tokens(&self, request: &MessagesRequest) -> Result<u64, ApiError> {
        let url = format!(
            "{}/v1/messages/count_tokens",
            self.config.base_url.trim_end_matches('/')
        );
        let url = reqwest::Url::parse(&url).map_err(|err| {
            ApiError::new(
                ApiErrorKind::Connection,
                format!("invalid API base URL '{}': {err}", self.config.base_url),
            )
        })?;
        let body = serde_json::to_vec(&count_body(request)).map_err(|err| {
            ApiError::new(
                ApiErrorKind::InvalidRequest,
                format!("could not encode the request: {err}"),
            )
        })?;
        let deadline = tokio::time::Instant::now() + COUNT_TIMEOUT;
        let answer = async {
            let response = self
                .exchange(url, Some(body), Endpoint::CountTokens, deadline)
                .await?;
            read_body(
                response,
                self.config.idle_timeout,
                MAX_COUNT_BYTES,
                deadline,
            )
            .await
        };
        let body = tokio::time::timeout(COUNT_TIMEOUT, answer)
            .await
            .map_err(|_| {
                ApiError::new(
                    ApiErrorKind::Timeout,
                    "the token count did not come in time",
                )
            })??;
        serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|answer| answer.get("input_tokens")?.as_u64())
            .ok_or_else(|| {
                ApiError::new(
                    ApiErrorKind::BrokenStream,
                    "the token count's answer has no input_tokens",
                )
            })
    }
}

/// `request` as the endpoint takes it: the prompt (model, system, messages,
/// tools, thinking) without cache marks, and nothing a count has no use for.
fn count_body(request: &MessagesRequest) -> Value {
    let mut request = request.clone();
    caching::clear_breakpoints(&mut request);
    let mut body = serde_json::to_value(&request).unwrap_or(Value::Null);
    if let Some(fields) = body.as_object_mut() {
        for field in ["max_tokens", "stream", "output_config"] {
            fields.remove(field);
        }
    }
    body
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ai::api::types::{Message, SystemBlock};

    #[test]
    fn the_body_is_the_prompt_alone() {
        let mut request = MessagesRequest {
            model: "claude-sonnet-5-5".into(),
            max_tokens: 100,
            system: vec![SystemBlock::text("sys")],
            messages: vec![Message::user_text("hello")],
            tools: Vec::new(),
            thinking: None,
            output_config: None,
            stream: true,
        };
        caching::mark_breakpoints(&mut request);
        let body = count_body(&request);
        assert_eq!(body["model"], "claude-sonnet-5-5");
        assert!(body.get("max_tokens").is_none() && body.get("stream").is_none());
        assert_eq!(body["system"], json!([{"type": "text", "text": "sys"}]));
        assert!(!body.to_string().contains("cache_control"), "{body}");
    }
}
