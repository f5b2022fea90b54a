//! Where a conversation prints its lines on stderr (a whole-run pass's
//! `  [AI]   ...`, or one directory's `  [AI] [dir] ...`) and how a tool
//! call's arguments are shown there. The model's words and its tool calls
//! are the full trace, printed with `-v` only ([`Printer::detail`]). It only formats and prints; what is
//! printed when is the turn's business (`turn.rs`).

use serde_json::Value;

use crate::progress::Progress;

/// Longest argument value shown in a tool-call line.
const SHOWN_ARG_CHARS: usize = 200;

/// Where a conversation prints its lines.
#[derive(Clone)]
pub(crate) enum Printer {
    /// A whole-run pass (survey, planning, synthesis): `  [AI]   ...`.
    Pass(Progress),
    /// One directory's loop: `  [AI] [dir] ...`.
    Dir { progress: Progress, dir: String },
    /// A conversation whose caller says how it ended (`luminos ask`): its
    /// lines are the full trace, printed as a pass's with `-v` only.
    Quiet(Progress),
}

impl Printer {
    /// The progress reporter behind this printer.
    pub(crate) fn progress(&self) -> &Progress {
        match self {
            Printer::Pass(progress) | Printer::Dir { progress, .. } | Printer::Quiet(progress) => {
                progress
            }
        }
    }

    /// Print one line of this conversation.
    pub(crate) fn line(&self, text: &str) {
        match self {
            Printer::Pass(progress) => progress.ai(&format!("  {text}")),
            Printer::Dir { progress, dir } => progress.ai_dir(dir, text),
            Printer::Quiet(progress) if progress.is_verbose() => {
                progress.ai(&format!("  {text}"));
            }
            Printer::Quiet(_) => {}
        }
    }

    /// Print one line of the full trace (`-v` only): the model's words and
    /// its tool calls.
    pub(crate) fn detail(&self, text: &str) {
        if self.progress().is_verbose() {
            self.line(text);
        }
    }
}

/// `path="src/main.rs", max_bytes=8192`: the call's arguments without `data`,
/// each value cut to a readable length.
pub(crate) fn format_args_for_display(input: &Value) -> String {
    let Some(map) = input.as_object() else {
        return String::new();
    };
    map.iter()
        .filter(|(key, _)| key.as_str() != "data")
        .map(|(key, value)| format!("{key}={}", shorten(&value.to_string())))
        .collect::<Vec<_>>()
        .join(", ")
}

fn shorten(text: &str) -> String {
    match text.char_indices().nth(SHOWN_ARG_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn args_are_shown_without_data_and_shortened() {
        let input = json!({
            "cache_type": "file",
            "path": "src/main.rs",
            "data": {"summary": "secret-ish"},
            "max_bytes": 8192
        });
        assert_eq!(
            format_args_for_display(&input),
            "cache_type=\"file\", path=\"src/main.rs\", max_bytes=8192"
        );
        assert_eq!(format_args_for_display(&json!({})), "");
        let long = json!({ "notes": "x".repeat(500) });
        let shown = format_args_for_display(&long);
        assert!(shown.ends_with("...") && shown.len() < 220, "{shown}");
    }
}
