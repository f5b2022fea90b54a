//! `write_cache`, `read_cache` and `list_cache`: the agent's access to the
//! investigation cache.
//!
//! The dir loop writes summaries with `write_cache` (validated by
//! [`Cache::write_entry`]); synthesis reads them back with `read_cache` and
//! `list_cache`. What comes back from the cache is the agent's words about
//! the target's files, and paths from the target: it passes through the
//! redactor once more (an entry may have been written by a run with
//! redaction off) and is framed as untrusted data, as the synthesis prompt
//! frames the same summaries.
//!
//! [`Cache::write_entry`]: crate::cache::Cache::write_entry

use serde_json::{Map, Value, json};

use super::{
    FatalToolError, Tool, ToolContext, ToolOutput, Toolbox, frame_untrusted, required_str, respond,
    sandbox,
};
use crate::cache::EntryKind;
use crate::text::escape_line;

/// The `cache_type` argument.
fn cache_type_arg(input: &Value) -> Result<EntryKind, ToolOutput> {
    input
        .get("cache_type")
        .and_then(Value::as_str)
        .and_then(EntryKind::parse)
        .ok_or_else(|| ToolOutput::error("Error: cache_type must be 'file' or 'dir'."))
}

/// The `cache_type` property, shared by the three schemas.
fn cache_type_schema(description: Option<&str>) -> Value {
    let mut schema = json!({"type": "string", "enum": ["file", "dir"]});
    if let Some(description) = description {
        schema["description"] = json!(description);
    }
    schema
}

/// `write_cache(cache_type, path, data)`.
pub struct WriteCache;

impl Tool for WriteCache {
    fn name(&self) -> &'static str {
        "write_cache"
    }

    fn description(&self) -> &'static str {
        "Save the summary of one file or directory to the investigation cache. Store \
         summaries only: an entry holding raw file contents is refused."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "cache_type": cache_type_schema(Some("'file' for a file summary, 'dir' for a directory summary.")),
                "path": {
                    "type": "string",
                    "description": "The file or directory the entry describes.",
                },
                "data": {
                    "type": "object",
                    "description": "The entry. A file: {path, relative_path, size_bytes, category, \
                        summary, notable, notable_reason, confidence, confidence_reason, cached_at}. \
                        A directory: {path, relative_path, child_count, summary, dominant_category, \
                        notable_files, confidence, confidence_reason, cached_at}. Always give \
                        confidence (0.0-1.0, calibrated as the system prompt says); give \
                        confidence_reason only when confidence is below 0.7.",
                },
            },
            "required": ["cache_type", "path", "data"],
        })
    }

    fn toolboxes(&self) -> &'static [Toolbox] {
        &[Toolbox::Dir]
    }

    fn run(&self, ctx: &ToolContext<'_>, input: &Value) -> Result<ToolOutput, FatalToolError> {
        respond(|| {
            let kind = cache_type_arg(input)?;
            let path = required_str(input, "path")?;
            // Keys are absolute paths; one outside the target would only be
            // clutter that no loop reads back.
            if !sandbox::is_within(ctx.target, &ctx.cache.absolute_entry_path(path)) {
                return Err(ToolOutput::error(format!(
                    "Error: path '{}' is outside the target directory.",
                    escape_line(path)
                )));
            }
            let no_data = Value::Object(Map::new());
            let data = input.get("data").unwrap_or(&no_data);
            ctx.cache
                .write_entry(kind, path, data)
                .map_err(ToolOutput::error)?;
            Ok(ToolOutput::ok("ok"))
        })
    }
}

/// `read_cache(cache_type, path)`.
pub struct ReadCache;

impl Tool for ReadCache {
    fn name(&self) -> &'static str {
        "read_cache"
    }

    fn description(&self) -> &'static str {
        "Return the cached summary of a file or directory as JSON, or null when there is none."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "cache_type": cache_type_schema(None),
                "path": {
                    "type": "string",
                    "description": "The file or directory to look up.",
                },
            },
            "required": ["cache_type", "path"],
        })
    }

    fn toolboxes(&self) -> &'static [Toolbox] {
        &[Toolbox::Synthesis]
    }

    fn run(&self, ctx: &ToolContext<'_>, input: &Value) -> Result<ToolOutput, FatalToolError> {
        respond(|| {
            let kind = cache_type_arg(input)?;
            let path = required_str(input, "path")?;
            let Some(entry) = ctx.cache.read_entry(kind, path) else {
                return Ok(ToolOutput::ok("null"));
            };
            let text = serde_json::to_string_pretty(&entry).unwrap_or_default();
            Ok(ToolOutput::ok(frame_untrusted(
                &format!("cached {} entry: {path}", kind.as_str()),
                &ctx.redact_unflagged(&text),
            )))
        })
    }
}

/// `list_cache(cache_type)`.
pub struct ListCache;

impl Tool for ListCache {
    fn name(&self) -> &'static str {
        "list_cache"
    }

    fn description(&self) -> &'static str {
        "List the paths that have a cached summary of the given type, one per line."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "cache_type": cache_type_schema(None),
            },
            "required": ["cache_type"],
        })
    }

    fn toolboxes(&self) -> &'static [Toolbox] {
        &[Toolbox::Synthesis]
    }

    fn run(&self, ctx: &ToolContext<'_>, input: &Value) -> Result<ToolOutput, FatalToolError> {
        respond(|| {
            let kind = cache_type_arg(input)?;
            let paths = ctx.cache.list_entries(kind);
            if paths.is_empty() {
                return Ok(ToolOutput::ok("(no cached entries)"));
            }
            let lines: Vec<String> = paths
                .iter()
                .map(|path| escape_line(path).into_owned())
                .collect();
            Ok(ToolOutput::ok(frame_untrusted(
                &format!("cached {} entries", kind.as_str()),
                &ctx.redact_unflagged(&lines.join("\n")),
            )))
        })
    }
}
