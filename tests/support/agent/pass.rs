//! Reading a request the way [`MockAgent`] does: which [`Pass`] it belongs
//! to, its system and prompt text, tools, directory, unit members and turn.

use super::*;

/// How the line of the dir prompt that names the directory's absolute path
/// begins (the first line that does is the one).
pub const DIR_MARKER: &str = "Directory: ";

/// Which pass a request belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Pass {
    Survey,
    Planning,
    /// A dir loop, by the directory's path relative to the target (`.` for
    /// the target itself).
    Dir(String),
    Synthesis,
    /// `luminos ask`.
    Ask,
    /// A round of the refinement (`--refine`).
    Refine,
}

impl Pass {
    /// Recognize the pass of a request body (`target` is canonical).
    pub fn of(body: &Value, target: &Path) -> Pass {
        let tools = tool_names(body);
        if tools.iter().any(|t| t == "submit_survey") {
            return Pass::Survey;
        }
        if tools.iter().any(|t| t == "submit_plan") {
            return Pass::Planning;
        }
        if tools.iter().any(|t| t == "submit_answer") {
            return Pass::Ask;
        }
        let report_with = |field: &str| {
            body["tools"].as_array().into_iter().flatten().any(|tool| {
                tool["name"] == "submit_report"
                    && tool["input_schema"]["properties"].get(field).is_some()
            })
        };
        if report_with("flags_withdrawn") {
            return Pass::Refine;
        }
        if report_with("brief") {
            return Pass::Synthesis;
        }
        let dir = dir_of(body).unwrap_or_default();
        Pass::Dir(relative(target, &dir))
    }
}

/// The names of the tools a request offers, in order.
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// The system prompt of a request (its text blocks joined).
pub fn system_text(body: &Value) -> String {
    text_of(&body["system"])
}

/// A message content or system field as text: a string as it is, a list
/// of blocks as their text blocks joined.
pub(super) fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// What the model is told before its first reply: the system prompt and
/// the first user message (where a dir loop's assignment is), joined.
pub fn prompt_text(body: &Value) -> String {
    let first = body["messages"]
        .as_array()
        .and_then(|messages| messages.first())
        .map(|message| text_of(&message["content"]))
        .unwrap_or_default();
    format!("{}\n{first}", system_text(body))
}

/// The absolute directory a dir-loop request is about.
pub fn dir_of(body: &Value) -> Option<PathBuf> {
    let prompt = prompt_text(body);
    let line = prompt.lines().find(|l| l.starts_with(DIR_MARKER))?;
    Some(PathBuf::from(line[DIR_MARKER.len()..].trim()))
}

/// The other directories of a dir-loop's unit (relative to the target, as
/// its first message lists them); empty for a single directory.
pub fn unit_members(body: &Value) -> Vec<String> {
    let prompt = prompt_text(body);
    let opening = format!(
        "<untrusted-data source=\"{}\"",
        luminos::ai::passes::dir_loop::UNIT_FRAME
    );
    let Some(at) = prompt.find(&opening) else {
        return Vec::new();
    };
    prompt[at..]
        .lines()
        .skip(1)
        .take_while(|line| *line != "</untrusted-data>")
        .map(str::to_string)
        .collect()
}

/// 1-based turn of the conversation this request continues.
pub fn turn_of(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .map(|m| m.iter().filter(|msg| msg["role"] == "assistant").count())
        .unwrap_or(0)
        + 1
}

pub(super) fn relative(target: &Path, dir: &Path) -> String {
    match dir.strip_prefix(target) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => dir.to_string_lossy().into_owned(),
    }
}
