//! The mock's token-counting endpoint, `POST /v1/messages/count_tokens`,
//! as the token counting page describes it (read 2026-11-27,
//! <https://platform.claude.com/docs/en/build-with-claude/token-counting>):
//! it takes a Messages request's structured inputs (`model`, `system`,
//! `messages`, `tools`, `tool_choice`, `thinking`) and answers
//! `{"input_tokens": N}`, counting the prompt as the mock's own usage does
//! ([`super::prefix_cache::prompt_tokens`]). Fields that are not among its
//! inputs (`max_tokens`, `stream`) are refused with a 400 and recorded as a
//! violation. Each call is kept apart from the Messages requests
//! ([`super::MockServer::token_counts`]): it is free and creates nothing.
//! [`super::MockServer::fail_token_counts`] answers every call with a
//! scripted error instead.

use std::time::Duration;

use serde_json::{Value, json};

use super::serve::{Prepared, http};
use super::wire::HttpRequest;
use super::{Reply, State, prefix_cache, protocol};

/// Where the endpoint lives.
pub const COUNT_TOKENS_PATH: &str = "/v1/messages/count_tokens";

/// Answer a call to the endpoint.
pub(super) fn handle(state: &State, request: HttpRequest) -> (Prepared, Duration) {
    let request_id = ("request-id".to_string(), "req_mock_count".to_string());
    let body: Option<Value> = serde_json::from_slice(&request.body).ok();
    let mut problems = Vec::new();
    if request.method != "POST" {
        problems.push(format!(
            "{} {COUNT_TOKENS_PATH} (only POST)",
            request.method
        ));
    }
    protocol::check_headers(
        &|name: &str| request.header(name).map(str::to_string),
        &mut problems,
    );
    match &body {
        Some(body @ Value::Object(fields)) => {
            if body["model"].as_str().is_none_or(str::is_empty) {
                problems.push("model is missing".into());
            }
            if body["messages"].as_array().is_none_or(Vec::is_empty) {
                problems.push("messages must be a non-empty array".into());
            }
            for field in ["max_tokens", "stream"] {
                if fields.contains_key(field) {
                    problems.push(format!("{field}: extra inputs are not permitted"));
                }
            }
        }
        _ => problems.push("the body is not a JSON object".into()),
    }
    let mut inner = state.lock();
    inner.token_counts.push(body.clone().unwrap_or(Value::Null));
    let latency = inner.latency;
    if !problems.is_empty() {
        for problem in &problems {
            inner.violations.push(format!("count_tokens: {problem}"));
        }
        let reply = Reply::error(
            400,
            "invalid_request_error",
            &format!("mock: {}", problems.join("; ")),
        );
        return (http(reply, request_id), latency);
    }
    if let Some(reply) = inner.token_count_failure.clone() {
        return (http(reply, request_id), latency);
    }
    let tokens = prefix_cache::prompt_tokens(body.as_ref().unwrap_or(&Value::Null));
    let reply = Reply::raw(
        200,
        "application/json",
        json!({"input_tokens": tokens}).to_string(),
    );
    (http(reply, request_id), latency)
}
