//! The agent's stock replies and the pieces tests build their own from: tool
//! calls, file entries, summaries, the default survey and synthesis, a usage
//! past the context budget.

use super::*;

/// A reply's usage whose context (151,000 tokens, mostly read from the
/// prompt cache) is past the default 140,000-token context budget.
pub const PAST_THE_CONTEXT_BUDGET: Usage = Usage {
    input_tokens: 1_000,
    output_tokens: 50,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 150_000,
    cache_creation_1h_input_tokens: None,
};

/// A call of the tool `name` with `input`.
pub fn tool_use(name: &str, input: Value) -> MockBlock {
    MockBlock::ToolUse {
        id: None,
        name: name.to_string(),
        input,
    }
}

/// The `write_cache` call of a plausible file entry: the file at `path`
/// (`rel` from the target), `size_bytes` long, described by `summary`.
pub fn file_entry_call(path: &Path, rel: &str, size_bytes: u64, summary: &str) -> MockBlock {
    tool_use(
        "write_cache",
        json!({
            "cache_type": "file",
            "path": path.to_string_lossy(),
            "data": {
                "path": path.to_string_lossy(),
                "relative_path": rel,
                "size_bytes": size_bytes,
                "category": "source",
                "summary": summary,
                "confidence": 0.9,
                "cached_at": "2026-01-01T00:00:00+00:00"
            }
        }),
    )
}

/// The `write_cache` call of a plausible dir entry: the directory at
/// `path` (`rel` from the target) with `child_count` children, described by
/// `summary`.
pub fn dir_entry_call(path: &Path, rel: &str, child_count: usize, summary: &str) -> MockBlock {
    tool_use(
        "write_cache",
        json!({
            "cache_type": "dir",
            "path": path.to_string_lossy(),
            "data": {
                "path": path.to_string_lossy(),
                "relative_path": rel,
                "child_count": child_count,
                "summary": summary,
                "dominant_category": "source",
                "confidence": 0.8,
                "cached_at": "2026-01-01T00:00:00+00:00"
            }
        }),
    )
}

pub(super) fn silent(turn: &Turn<'_>) -> Reply {
    Reply::text(format!("Thinking it over (turn {}).", turn.turn))
}

/// The summary the default agent caches for `name` in directory `rel`.
pub fn file_summary(rel: &str, name: &str) -> String {
    format!("File {name} of directory {rel}.")
}

/// `text` made `chars` characters long with plausible filler sentences.
pub fn padded(text: &str, chars: usize) -> String {
    const FILLER: &str = " Its files were read closely; the summaries of each describe what they \
        do, how they fit together and what deserves a second look.";
    let mut out = text.to_string();
    while out.chars().count() < chars {
        out.push_str(FILLER);
    }
    out.chars().take(chars.max(text.chars().count())).collect()
}

/// The summary the default agent reports for directory `rel`.
pub fn dir_summary(rel: &str, files: &[(String, u64)]) -> String {
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    format!(
        "Directory {rel} holds {} files [{}].",
        files.len(),
        names.join(", ")
    )
}

/// `(name, size)` of the visible regular files directly in `dir`, by name.
pub fn visible_files(dir: &Path) -> Vec<(String, u64)> {
    let mut files: Vec<(String, u64)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| {
                    let size = e.metadata().map(|m| m.len()).unwrap_or(0);
                    (e.file_name().to_string_lossy().into_owned(), size)
                })
                .filter(|(name, _)| !name.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

pub(super) fn default_survey(_turn: &Turn<'_>) -> Value {
    json!({
        "description": "A scripted test target",
        "approach": "Read every file.",
        "relevant_tools": ["read_file"],
        "skip_tools": [],
        "domain_notes": "",
        "confidence": 0.9
    })
}

/// The brief names how many directory sections synthesis was shown; the
/// detailed report lists their headings.
pub(super) fn default_synthesis(turn: &Turn<'_>) -> Value {
    let system = system_text(turn.body);
    let sections: Vec<&str> = system
        .lines()
        .filter_map(|l| l.strip_prefix("### "))
        .collect();
    json!({
        "brief": format!("Scripted brief over {} directory summaries.", sections.len()),
        "detailed": format!("Scripted detailed report covering: {}.", sections.join(" ")),
    })
}

/// The answer the default agent gives a question: it names the target's
/// first visible file.
pub(super) fn default_answer(turn: &Turn<'_>) -> Value {
    let first = visible_files(turn.target)
        .into_iter()
        .next()
        .map(|(name, _)| name)
        .unwrap_or_else(|| "nothing".to_string());
    json!({"answer": format!("Scripted answer: start with {first}.")})
}

/// The default refinement hands the report back refined, with no flag
/// added or withdrawn.
pub(super) fn default_refinement(_turn: &Turn<'_>) -> Value {
    json!({
        "brief": "Refined brief.",
        "detailed": "Refined detailed report.",
        "flags_added": [],
        "flags_withdrawn": []
    })
}

/// The most a reply to `body` can report on Sonnet 5.5 without the client
/// having counted its prompt short: every token of the prompt as the
/// client counts it before sending (the bytes of its system prompt,
/// messages and tools at the catalog's tokens per byte, with the window's
/// margin) written to the prompt cache, and every `max_tokens` produced.
pub fn worst_case_usage(body: &Value) -> Usage {
    // The caching marks are the request's, not the conversation's.
    fn unmarked(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(key, _)| *key != "cache_control")
                    .map(|(key, value)| (key.clone(), unmarked(value)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(unmarked).collect()),
            other => other.clone(),
        }
    }
    let facts = luminos::ai::api::catalog::ModelFacts::of("claude-sonnet-5-5");
    let system = match &body["system"] {
        Value::String(text) => text.len(),
        blocks => blocks
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["text"].as_str())
            .map(str::len)
            .sum(),
    };
    let bytes = system
        + unmarked(&body["messages"]).to_string().len()
        + unmarked(&body["tools"]).to_string().len();
    Usage {
        input_tokens: 0,
        cache_creation_input_tokens: (bytes as f64 * facts.model.tokens_per_byte * 1.2).floor()
            as u64,
        cache_read_input_tokens: 0,
        cache_creation_1h_input_tokens: None,
        output_tokens: body["max_tokens"].as_u64().unwrap_or(0),
    }
}
