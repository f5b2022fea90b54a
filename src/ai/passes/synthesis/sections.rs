//! What a synthesis in levels shows the level above of a part's domain
//! sections: a compact text, one `Title: ...` line per filled section, for
//! the model to read beside the part's summary. (The sections themselves
//! travel as data and are joined by [`crate::report::Sections::fill_from`].)

use serde_json::Value;

use crate::report::Sections;
use crate::report::sections::SECTION_TITLES;

/// A part's sections as the level above reads them: one `Title: ...`
/// line per filled section (empty when none is).
pub(crate) fn sections_for_prompt(sections: &Sections) -> String {
    let Ok(Value::Object(fields)) = serde_json::to_value(sections) else {
        return String::new();
    };
    let mut lines = Vec::new();
    for (key, title) in SECTION_TITLES {
        let Some(value) = fields.get(key) else {
            continue;
        };
        let said = match value {
            Value::String(text) => text.replace('\n', " "),
            Value::Array(items) => items
                .iter()
                .map(|item| match item {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join("; "),
            other => other.to_string(),
        };
        lines.push(format!("{title}: {said}\n"));
    }
    lines.concat()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_part_s_sections_are_one_line_each() {
        assert_eq!(sections_for_prompt(&Sections::default()), "");
        let sections = Sections::from_submitted(&json!({
            "architecture": "Two layers.\nThe CLI calls the engine.",
            "tech_stack": ["Rust", "tokio"],
            "components": [{"name": "cli", "role": "Parses flags."}]
        }));
        assert_eq!(
            sections_for_prompt(&sections),
            "Architecture: Two layers. The CLI calls the engine.\n\
             Components: {\"name\":\"cli\",\"role\":\"Parses flags.\"}\n\
             Tech stack: Rust; tokio\n"
        );
    }
}
