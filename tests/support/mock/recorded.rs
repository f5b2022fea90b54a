//! What the mock records of each request ([`RecordedRequest`]) and the
//! readers tests use on it: headers, messages, prompt and system text, tools,
//! tool results.

use super::*;

/// One request as the mock received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// 0-based arrival order.
    pub index: usize,
    pub path: String,
    /// Lower-case names, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The parsed body; `Value::Null` when it was not JSON.
    pub body: Value,
    /// The usage the mock reported for it (a streamed reply, or a batch
    /// request that succeeded).
    pub reported_usage: Option<Usage>,
    /// Of `reported_usage`'s cache writes, the tokens written at the
    /// 1-hour lifetime (`cache_creation.ephemeral_1h_input_tokens`); the
    /// rest were written at 5 minutes.
    pub reported_cache_1h: u64,
    /// The batch request it was, when it came in a batch.
    pub batch: Option<BatchRef>,
}

/// A `tool_result` block seen in a request.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResultSeen {
    pub tool_use_id: String,
    /// The text content (blocks joined with `\n`).
    pub content: String,
    pub is_error: bool,
}

/// The `tool_result` blocks of the newest user message of a request body.
pub fn tool_results_of(body: &Value) -> Vec<ToolResultSeen> {
    let Some(message) = body["messages"]
        .as_array()
        .and_then(|messages| messages.iter().rev().find(|m| m["role"] == "user"))
    else {
        return Vec::new();
    };
    message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| ToolResultSeen {
            tool_use_id: b["tool_use_id"].as_str().unwrap_or("").to_string(),
            content: match &b["content"] {
                Value::String(s) => s.clone(),
                other => text_of(other),
            },
            is_error: b["is_error"].as_bool().unwrap_or(false),
        })
        .collect()
}

impl RecordedRequest {
    /// A header by (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn messages(&self) -> &[Value] {
        self.body["messages"].as_array().map_or(&[], Vec::as_slice)
    }

    /// Assistant messages in the history: 0 on a conversation's first call,
    /// 1 after one reply, and so on. Handy for scripting an agent loop.
    pub fn turn(&self) -> usize {
        self.messages()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count()
    }

    /// The system prompt's text (blocks joined with `\n`).
    pub fn system_text(&self) -> String {
        text_of(&self.body["system"])
    }

    /// What the model is told before its first reply: the system prompt
    /// and the first user message (a dir loop's assignment), joined.
    pub fn prompt_text(&self) -> String {
        super::super::agent::prompt_text(&self.body)
    }

    /// Names of the tools offered.
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect()
    }

    /// The text of the newest user message (text blocks only).
    pub fn last_user_text(&self) -> String {
        self.last_user_message()
            .map(|m| text_of(&m["content"]))
            .unwrap_or_default()
    }

    /// The `tool_result` blocks of the newest user message.
    pub fn tool_results(&self) -> Vec<ToolResultSeen> {
        tool_results_of(&self.body)
    }

    /// Whether the serialized body contains `needle` anywhere.
    pub fn body_contains(&self, needle: &str) -> bool {
        self.body.to_string().contains(needle)
    }

    /// Whether the newest user message carries a caching mark: the request
    /// writes the conversation up to it to the prompt cache.
    pub fn writes_its_newest_message(&self) -> bool {
        self.last_user_message()
            .and_then(|m| m["content"].as_array())
            .is_some_and(|blocks| blocks.iter().any(|b| b.get("cache_control").is_some()))
    }

    /// Whether the system prompt carries a caching mark (the prefix of
    /// tools and system prompt is cached).
    pub fn marks_its_system_prompt(&self) -> bool {
        self.body["system"]
            .as_array()
            .is_some_and(|blocks| blocks.iter().any(|b| b.get("cache_control").is_some()))
    }

    fn last_user_message(&self) -> Option<&Value> {
        self.messages().iter().rev().find(|m| m["role"] == "user")
    }
}

/// The text of a string or of the text blocks of a block list.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
