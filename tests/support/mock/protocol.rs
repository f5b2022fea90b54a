//! The protocol rules the mock enforces on every request. A broken rule is a
//! bug in the client or the agent loop that the real API would answer with a
//! 400, so the mock answers 400 too and records the violation, which fails
//! the test.

use std::collections::HashSet;

use serde_json::Value;

/// The version header value every request must carry.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The most `cache_control` breakpoints the API accepts.
pub const MAX_BREAKPOINTS: usize = 4;

/// Everything wrong with one request, in words; empty when it is fine.
pub fn check_request(
    method: &str,
    path: &str,
    header: impl Fn(&str) -> Option<String>,
    body: Option<&Value>,
) -> Vec<String> {
    let mut problems = Vec::new();
    if method != "POST" || path.split('?').next() != Some("/v1/messages") {
        problems.push(format!(
            "unexpected {method} {path} (only POST /v1/messages exists)"
        ));
        return problems;
    }
    check_headers(&header, &mut problems);
    match body {
        Some(body @ Value::Object(_)) => check_body(body, &mut problems),
        Some(_) => problems.push("the body is JSON but not an object".into()),
        None => problems.push("the body is not JSON".into()),
    }
    problems
}

pub fn check_headers(header: &impl Fn(&str) -> Option<String>, problems: &mut Vec<String>) {
    let key = header("x-api-key").filter(|v| !v.trim().is_empty());
    let bearer = header("authorization").filter(|v| {
        v.strip_prefix("Bearer ")
            .is_some_and(|t| !t.trim().is_empty())
    });
    if key.is_none() && bearer.is_none() {
        problems.push("no credential: neither x-api-key nor authorization: Bearer".into());
    }
    match header("anthropic-version") {
        None => problems.push("missing anthropic-version header".into()),
        Some(v) if v != ANTHROPIC_VERSION => problems.push(format!(
            "anthropic-version is {v:?}, expected {ANTHROPIC_VERSION}"
        )),
        Some(_) => {}
    }
    if !header("content-type").is_some_and(|v| v.starts_with("application/json")) {
        problems.push("content-type is not application/json".into());
    }
}

/// Everything wrong with the `params` of one batch request: the Messages
/// rules, except that a batch answers with whole messages, so `stream`
/// must not be set (batch-processing guide: streaming is not supported in
/// a batch).
pub fn check_batch_params(params: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    match params {
        Value::Object(_) => check_body_as(params, false, &mut problems),
        _ => problems.push("params must be an object".into()),
    }
    problems
}

fn check_body(body: &Value, problems: &mut Vec<String>) {
    check_body_as(body, true, problems);
}

fn check_body_as(body: &Value, streamed: bool, problems: &mut Vec<String>) {
    if body["model"].as_str().is_none_or(str::is_empty) {
        problems.push("model is missing".into());
    }
    if body["max_tokens"].as_u64().is_none_or(|n| n == 0) {
        problems.push("max_tokens must be a positive integer".into());
    }
    if streamed && body["stream"] != Value::Bool(true) {
        problems.push("stream is not true (the mock only streams)".into());
    }
    if !streamed && !matches!(body.get("stream"), None | Some(Value::Bool(false))) {
        problems.push("stream cannot be set in a batch request's params".into());
    }
    check_system(&body["system"], problems);
    check_tools(&body["tools"], problems);
    match body["messages"].as_array() {
        Some(messages) if !messages.is_empty() => check_messages(messages, problems),
        _ => problems.push("messages must be a non-empty array".into()),
    }
    let marks = count_marks(body);
    if marks > MAX_BREAKPOINTS {
        problems.push(format!(
            "{marks} cache_control breakpoints; at most {MAX_BREAKPOINTS} are allowed"
        ));
    }
    check_mark_lifetimes(body, problems);
}

/// Every `cache_control` mark is `{"type": "ephemeral"}` with, at most, a
/// `ttl` of `"5m"` or `"1h"`; and a request that mixes them puts the
/// longer lifetime first, in the prefix order tools, system, messages
/// (prompt caching page, read 2026-11-27: "cache entries with longer TTL
/// must appear before shorter TTLs").
fn check_mark_lifetimes(body: &Value, problems: &mut Vec<String>) {
    let list = |key: &str| body[key].as_array().into_iter().flatten();
    let mut shortest: Option<std::time::Duration> = None;
    for mark in list("tools")
        .chain(list("system"))
        .chain(list("messages").flat_map(blocks))
        .filter_map(|v| v.get("cache_control"))
        .filter(|mark| !mark.is_null())
    {
        if mark["type"] != "ephemeral" {
            problems.push(format!(
                "cache_control must be {{\"type\":\"ephemeral\"}}, not {mark}"
            ));
            continue;
        }
        let Some(ttl) = super::prefix_cache::ttl_of(mark) else {
            problems.push(format!(
                "cache_control.ttl must be \"5m\" or \"1h\", not {}",
                mark["ttl"]
            ));
            continue;
        };
        if shortest.is_some_and(|shortest| ttl > shortest) {
            problems.push(
                "a cache_control with a longer ttl comes after a shorter one: entries with a \
                 longer ttl must appear before shorter ones"
                    .into(),
            );
        }
        shortest = Some(shortest.map_or(ttl, |s| s.min(ttl)));
    }
}

fn check_system(system: &Value, problems: &mut Vec<String>) {
    match system {
        Value::Null | Value::String(_) => {}
        Value::Array(blocks) => {
            for block in blocks {
                if block["type"] != "text" || !block["text"].is_string() {
                    problems.push(format!("system block is not a text block: {block}"));
                } else if block["text"].as_str() == Some("") {
                    problems.push("system text block is empty".into());
                }
            }
        }
        other => problems.push(format!("system must be a string or blocks, got {other}")),
    }
}

fn check_tools(tools: &Value, problems: &mut Vec<String>) {
    let tools = match tools {
        Value::Null => return,
        Value::Array(tools) => tools,
        _ => return problems.push("tools must be an array".into()),
    };
    let mut names = HashSet::new();
    for tool in tools {
        let name = tool["name"].as_str().unwrap_or("");
        let valid_name = !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_name {
            problems.push(format!("invalid tool name {name:?}"));
        }
        if !names.insert(name.to_string()) {
            problems.push(format!("tool {name:?} is defined twice"));
        }
        if tool["input_schema"]["type"] != "object" {
            problems.push(format!(
                "tool {name:?}: input_schema.type must be \"object\""
            ));
        }
    }
}

/// The tool_use ids of an assistant message, in order.
fn tool_use_ids(message: &Value) -> Vec<&str> {
    blocks(message)
        .filter(|b| b["type"] == "tool_use")
        .filter_map(|b| b["id"].as_str())
        .collect()
}

fn blocks(message: &Value) -> impl Iterator<Item = &Value> {
    message["content"].as_array().into_iter().flatten()
}

fn check_messages(messages: &[Value], problems: &mut Vec<String>) {
    if messages[0]["role"] != "user" {
        problems.push("the first message must be from the user".into());
    }
    let mut seen_ids = HashSet::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or("");
        if role != "user" && role != "assistant" {
            problems.push(format!("messages[{i}]: unknown role {role:?}"));
            continue;
        }
        check_content(i, role, &message["content"], problems);
        for id in tool_use_ids(message) {
            if !seen_ids.insert(id.to_string()) {
                problems.push(format!("messages[{i}]: tool_use id {id} is used twice"));
            }
        }
        check_tool_pairing(messages, i, problems);
    }
}

fn check_content(i: usize, role: &str, content: &Value, problems: &mut Vec<String>) {
    let blocks = match content {
        Value::String(text) => {
            if text.is_empty() {
                problems.push(format!("messages[{i}]: empty content"));
            }
            return;
        }
        Value::Array(blocks) if blocks.is_empty() => {
            return problems.push(format!("messages[{i}]: empty content"));
        }
        Value::Array(blocks) => blocks,
        _ => return problems.push(format!("messages[{i}]: content must be a string or blocks")),
    };
    // A user message's tool_results come before anything else in it.
    let mut saw_other = false;
    for (j, block) in blocks.iter().enumerate() {
        let at = format!("messages[{i}].content[{j}]");
        let kind = block["type"].as_str().unwrap_or("");
        match kind {
            "text" => {
                if block["text"].as_str().is_none_or(str::is_empty) {
                    problems.push(format!("{at}: text blocks must be non-empty"));
                }
            }
            "tool_use" if role == "assistant" => {
                if !block["input"].is_object() {
                    problems.push(format!("{at}: tool_use input must be an object"));
                }
            }
            "thinking" if role == "assistant" => {
                if !block["thinking"].is_string() || !block["signature"].is_string() {
                    problems.push(format!("{at}: thinking needs `thinking` and `signature`"));
                }
                if block.get("cache_control").is_some() {
                    problems.push(format!("{at}: thinking blocks cannot carry cache_control"));
                }
            }
            "redacted_thinking" if role == "assistant" => {
                if !block["data"].is_string() {
                    problems.push(format!("{at}: redacted_thinking needs `data`"));
                }
            }
            "tool_result" if role == "user" => {
                if saw_other {
                    problems.push(format!("{at}: tool_result after other content"));
                }
                if !(block["content"].is_string()
                    || block["content"].is_array()
                    || block["content"].is_null())
                {
                    problems.push(format!(
                        "{at}: tool_result content must be a string or blocks"
                    ));
                }
                if !(block["is_error"].is_boolean() || block["is_error"].is_null()) {
                    problems.push(format!("{at}: is_error must be a boolean"));
                }
            }
            other => problems.push(format!(
                "{at}: a {other:?} block cannot appear in a {role} message"
            )),
        }
        saw_other |= !(kind == "tool_result" && role == "user");
        if let Some(mark) = block.get("cache_control")
            && mark["type"] != "ephemeral"
        {
            problems.push(format!(
                "{at}: cache_control must be {{\"type\":\"ephemeral\"}}"
            ));
        }
    }
}

/// Tool uses and their results pair up across message `i`'s borders: every
/// tool_use of an assistant message is answered by a tool_result in the
/// very next message, which is the user's, and every tool_result of a user
/// message answers a tool_use of the assistant message just before it.
fn check_tool_pairing(messages: &[Value], i: usize, problems: &mut Vec<String>) {
    let with_role = |j: Option<usize>, role: &str| {
        j.and_then(|j| messages.get(j))
            .filter(|m| m["role"] == role)
    };
    // The tool_use ids of message `j`, if it is the assistant's.
    let asked_in = |j| {
        with_role(j, "assistant")
            .map(tool_use_ids)
            .unwrap_or_default()
    };
    // The ids the tool_results of message `j` answer, if it is the user's
    // ("" for a result that names none).
    let answered_in = |j| -> Vec<&str> {
        with_role(j, "user")
            .map(|m| {
                blocks(m)
                    .filter(|b| b["type"] == "tool_result")
                    .map(|b| b["tool_use_id"].as_str().unwrap_or(""))
                    .collect()
            })
            .unwrap_or_default()
    };
    let answered: HashSet<&str> = answered_in(Some(i + 1)).into_iter().collect();
    for id in asked_in(Some(i))
        .into_iter()
        .filter(|id| !answered.contains(id))
    {
        problems.push(format!(
            "messages[{i}]: tool_use {id} has no tool_result in the next user message"
        ));
    }
    let asked: HashSet<&str> = asked_in(i.checked_sub(1)).into_iter().collect();
    for id in answered_in(Some(i))
        .into_iter()
        .filter(|id| !asked.contains(id))
    {
        problems.push(format!(
            "messages[{i}]: tool_result for {id:?} answers no tool_use in the previous assistant message"
        ));
    }
}

/// `cache_control` marks anywhere in the body.
pub fn count_marks(body: &Value) -> usize {
    let marked = |v: &&Value| v.get("cache_control").is_some_and(|m| !m.is_null());
    let list = |key: &str| body[key].as_array().into_iter().flatten();
    list("tools")
        .chain(list("system"))
        .chain(list("messages").flat_map(blocks))
        .filter(marked)
        .count()
}
