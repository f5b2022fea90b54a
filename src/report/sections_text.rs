//! The domain sections in the terminal report: one `>> TITLE (AI)` section
//! per field the model filled, in [`SECTION_TITLES`]' order, none for the
//! others. It only renders [`Sections`]; where the sections go in the
//! report is the terminal layout's business (`text.rs`). All of it is
//! model text, so all of it is escaped.

use super::sections::{SECTION_TITLES, Sections};
use crate::text::{escape_control, escape_line};

/// The report lines of every filled section, each section opened by a
/// blank line, its title and a rule; empty when none is filled.
pub(crate) fn sections_text(sections: &Sections) -> Vec<String> {
    let mut lines = Vec::new();
    for (key, title) in SECTION_TITLES {
        let body = body(sections, key);
        if body.is_empty() {
            continue;
        }
        lines.push(String::new());
        lines.push(format!(">> {} (AI)", title.to_uppercase()));
        lines.push("-".repeat(40));
        lines.extend(body);
    }
    lines
}

/// The items of a list section the terminal report shows; the rest are
/// counted, with where to read them (every format but the terminal's
/// shows them all).
pub(crate) const SECTION_ITEMS: usize = 8;

/// The lines of the section `key`; none when it is empty.
fn body(sections: &Sections, key: &str) -> Vec<String> {
    match key {
        "overall_purpose" => prose(&sections.overall_purpose),
        "architecture" => prose(&sections.architecture),
        "components" => listed(
            sections
                .components
                .iter()
                .map(|component| {
                    let uses = after("uses: ", &component.depends_on.join(", "));
                    named(
                        &component.name,
                        component.path.as_deref(),
                        &[&component.role, &uses],
                    )
                })
                .collect(),
        ),
        "entry_points" => listed(
            sections
                .entry_points
                .iter()
                .map(|entry| {
                    let role = after(" — ", &escape_line(&entry.role));
                    vec![format!("  {}{role}", escape_line(&entry.path))]
                })
                .collect(),
        ),
        "commands" => listed(
            sections
                .commands
                .iter()
                .map(|command| {
                    let purpose = after(" — ", &escape_line(&command.purpose));
                    vec![format!(
                        "  {}  (from {}){purpose}",
                        escape_line(&command.command),
                        escape_line(&command.source)
                    )]
                })
                .collect(),
        ),
        "tech_stack" => bullets(&sections.tech_stack),
        "datasets" => listed(
            sections
                .datasets
                .iter()
                .map(|dataset| {
                    named(
                        &dataset.name,
                        dataset.path.as_deref(),
                        &[&dataset.description],
                    )
                })
                .collect(),
        ),
        "schema_summary" => prose(&sections.schema_summary),
        "period_covered" => prose(&sections.period_covered),
        "themes" => bullets(&sections.themes),
        "data_quality" => prose(&sections.data_quality),
        "concerns" => bullets(&sections.concerns),
        _ => Vec::new(),
    }
}

/// A prose section's lines, indented, each escaped.
fn prose(text: &Option<String>) -> Vec<String> {
    text.iter()
        .flat_map(|text| text.split('\n'))
        .map(|line| format!("  {}", escape_control(line)))
        .collect()
}

/// A list of plain items as bullets (see [`listed`]).
fn bullets(items: &[String]) -> Vec<String> {
    listed(
        items
            .iter()
            .map(|item| vec![format!("  - {}", escape_line(item))])
            .collect(),
    )
}

/// A list's items (each its lines), the first [`SECTION_ITEMS`] of them,
/// then one line counting the rest.
fn listed(items: Vec<Vec<String>>) -> Vec<String> {
    let more = items.len().saturating_sub(SECTION_ITEMS);
    let mut lines: Vec<String> = items.into_iter().take(SECTION_ITEMS).flatten().collect();
    if more > 0 {
        lines.push(format!(
            "  ... and {more} more: -o report.html / --format markdown"
        ));
    }
    lines
}

/// A named item (a component, a dataset): `  NAME  (path)`, then each
/// detail that is not empty on a line of its own, indented below it.
fn named(name: &str, path: Option<&str>, details: &[&str]) -> Vec<String> {
    let mut lines = vec![format!("  {}{}", escape_line(name), at(path))];
    lines.extend(
        details
            .iter()
            .filter(|detail| !detail.is_empty())
            .map(|detail| format!("      {}", escape_line(detail))),
    );
    lines
}

/// `text` after `label`, or nothing when `text` is empty.
fn after(label: &str, text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!("{label}{text}")
    }
}

/// `  (path)` after a name, or nothing.
fn at(path: Option<&str>) -> String {
    path.map(|path| format!("  ({})", escape_line(path)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sections::{Component, EntryPoint, every_section_filled};

    #[test]
    fn nothing_filled_renders_nothing() {
        assert!(sections_text(&Sections::default()).is_empty());
    }

    #[test]
    fn every_title_has_a_body() {
        let full = every_section_filled();
        for (key, _) in SECTION_TITLES {
            assert!(!body(&full, key).is_empty(), "{key}");
        }
    }

    #[test]
    fn filled_sections_render_in_order_and_escaped() {
        let sections = Sections {
            architecture: Some("Two layers.\nThe CLI calls the engine.\x1b[2J".into()),
            components: vec![
                Component {
                    name: "cli".into(),
                    path: Some("src/cli".into()),
                    role: "Parses flags.".into(),
                    depends_on: vec!["engine".into()],
                    verified: None,
                },
                Component {
                    name: "engine\nforged line".into(),
                    path: None,
                    role: "Runs the passes.".into(),
                    depends_on: Vec::new(),
                    verified: None,
                },
            ],
            entry_points: vec![EntryPoint {
                path: "src/main.rs".into(),
                role: "The binary.".into(),
                verified: None,
            }],
            tech_stack: vec!["Rust".into(), "tokio".into()],
            period_covered: Some("2019 to 2024".into()),
            concerns: vec!["No tests for the engine.".into()],
            ..Sections::default()
        };
        insta::assert_snapshot!(sections_text(&sections).join("\n"));
    }

    /// A long list shows its first items and counts the rest.
    #[test]
    fn a_long_list_is_cut_with_a_count() {
        let sections = Sections {
            themes: (0..11).map(|i| format!("theme {i}")).collect(),
            ..Sections::default()
        };
        let lines = sections_text(&sections);
        assert!(lines.contains(&"  - theme 7".to_string()));
        assert!(!lines.contains(&"  - theme 8".to_string()));
        assert_eq!(
            lines.last().unwrap(),
            "  ... and 3 more: -o report.html / --format markdown"
        );
    }
}
