//! The report's domain sections: what the synthesis says about the whole
//! beyond its verdict, in fields fit for the kind of tree it found
//! (software: architecture, components, tech stack, entry points; data:
//! datasets, schema, period covered, data quality; documents: themes; any
//! tree: concerns, overall purpose). The model fills only those that fit;
//! the rest stay empty and no format shows them.
//!
//! This is the one place their data lives: [`Sections`] is the report's
//! `ai_sections` (JSON), the terminal text renders it in
//! `sections_text.rs`, and every other format reads the same struct.
//!
//! What the model submitted is untrusted and unbounded, so it goes through
//! [`Sections::from_submitted`] first: text is trimmed and capped, empty
//! items and duplicates dropped, lists capped. [`Sections::fill_from`]
//! carries the sections of a synthesis's parts up to its verdict, and
//! [`Sections::drop_dangling`], once the verdict's sections are settled,
//! keeps a component's `depends_on` only where it names another component,
//! so the graph drawn from them has no dangling edge.

use serde::{Deserialize, Serialize};

use crate::lenient;

/// Longest prose field (architecture, schema, data quality, purpose), in
/// characters.
const MAX_PROSE: usize = 4_000;
/// Longest short text: a name, a path, a period, a list item.
const MAX_SHORT: usize = 300;
/// Longest description of a component, entry point or dataset.
const MAX_ROLE: usize = 600;
/// Most items of a list.
const MAX_ITEMS: usize = 40;
/// Most dependencies of one component.
const MAX_DEPENDS: usize = 20;

/// The domain sections; every field is optional and empty when the model
/// left it out. The field names are the JSON keys.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Sections {
    /// What the whole is for, when it mixes kinds of content.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub overall_purpose: Option<String>,
    /// How the parts fit together (prose).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub architecture: Option<String>,
    /// The main parts and how they depend on one another.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::items"
    )]
    pub components: Vec<Component>,
    /// Where execution or reading starts.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::items"
    )]
    pub entry_points: Vec<EntryPoint>,
    /// How to build, test, run or check it: the commands the tree's own
    /// files give, each with the file it came from.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::items"
    )]
    pub commands: Vec<DevCommand>,
    /// Languages, frameworks, tools and formats.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::texts"
    )]
    pub tech_stack: Vec<String>,
    /// The data sets held.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::items"
    )]
    pub datasets: Vec<Dataset>,
    /// The shape of the data: tables, fields, formats (prose).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub schema_summary: Option<String>,
    /// The span of time the content covers, such as `2019-03 to 2024-11`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub period_covered: Option<String>,
    /// Recurring subjects of documents or journals.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::texts"
    )]
    pub themes: Vec<String>,
    /// Gaps, duplicates, inconsistencies in the data (prose).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub data_quality: Option<String>,
    /// What deserves attention, in any kind of tree.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::texts"
    )]
    pub concerns: Vec<String>,
}

/// One main part of the whole.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Component {
    /// Its name, unique among the components.
    #[serde(default, deserialize_with = "lenient::text")]
    pub name: String,
    /// Where it lives, relative to the target.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub path: Option<String>,
    /// What it does.
    #[serde(default, deserialize_with = "lenient::text")]
    pub role: String,
    /// The names of the other components it uses.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::texts"
    )]
    pub depends_on: Vec<String>,
    /// Whether `path` names something in the tree, once the report is
    /// grounded; only a found path is linked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
}

/// Where execution or reading starts.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct EntryPoint {
    /// The file (or command), relative to the target.
    #[serde(default, deserialize_with = "lenient::text")]
    pub path: String,
    /// What starts there.
    #[serde(default, deserialize_with = "lenient::text")]
    pub role: String,
    /// Whether `path` names something in the tree, once the report is
    /// grounded; only a found path is linked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
}

/// A command the tree's own files give (a README, a Makefile, a package
/// manifest, a CI file) for building, testing, running or checking it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct DevCommand {
    /// The command line, as the file gives it.
    #[serde(default, deserialize_with = "lenient::text")]
    pub command: String,
    /// What it does: build, test, run, lint, ...
    #[serde(default, deserialize_with = "lenient::text")]
    pub purpose: String,
    /// The file it came from, relative to the target.
    #[serde(default, deserialize_with = "lenient::text")]
    pub source: String,
    /// Whether `source` names a file in the tree, once the report is
    /// grounded; a command whose source was not found is not one to
    /// follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
}

impl DevCommand {
    /// Its line on one line (the first, trimmed and capped), its purpose
    /// capped, its source spelled as a path; an empty line or source
    /// leaves the command unusable.
    pub(crate) fn normalise(&mut self) {
        let line = self.command.lines().next().unwrap_or_default();
        self.command = text_of(line, MAX_SHORT).unwrap_or_default();
        self.purpose = text_of(&self.purpose, MAX_SHORT).unwrap_or_default();
        self.source = path(&self.source).unwrap_or_default();
    }
}

/// One data set.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Dataset {
    #[serde(default, deserialize_with = "lenient::text")]
    pub name: String,
    /// Where it lives, relative to the target.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub path: Option<String>,
    /// What it holds.
    #[serde(default, deserialize_with = "lenient::text")]
    pub description: String,
    /// Whether `path` names something in the tree, once the report is
    /// grounded; only a found path is linked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
}

/// A section's key and the title every format shows for it, in the order
/// the formats show them.
pub const SECTION_TITLES: [(&str, &str); 12] = [
    ("overall_purpose", "Overall purpose"),
    ("architecture", "Architecture"),
    ("components", "Components"),
    ("entry_points", "Entry points"),
    ("commands", "Commands"),
    ("tech_stack", "Tech stack"),
    ("datasets", "Datasets"),
    ("schema_summary", "Schema"),
    ("period_covered", "Period covered"),
    ("themes", "Themes"),
    ("data_quality", "Data quality"),
    ("concerns", "Concerns"),
];

impl Sections {
    /// No section was filled.
    pub fn is_empty(&self) -> bool {
        *self == Sections::default()
    }

    /// The sections of a `submit_report` input, as a synthesis reads them.
    #[cfg(test)]
    pub(crate) fn from_submitted(input: &serde_json::Value) -> Sections {
        Sections::deserialize(input)
            .unwrap_or_default()
            .normalised()
    }

    /// The sections as a model submitted them (read leniently: fields of
    /// the wrong type are left out, as if it had not filled them),
    /// normalised: text trimmed and capped, blank items and duplicates
    /// dropped, paths spelled without `./` or a trailing `/`, lists capped.
    pub(crate) fn normalised(mut self) -> Sections {
        let short = |text: &mut String, max| *text = text_of(text, max).unwrap_or_default();
        self.period_covered = self
            .period_covered
            .and_then(|period| text_of(&period, MAX_SHORT));
        for list in [&mut self.tech_stack, &mut self.themes, &mut self.concerns] {
            list.truncate(MAX_ITEMS * 4);
            *list = list
                .iter()
                .filter_map(|item| text_of(item, MAX_SHORT))
                .collect();
        }
        self.components.truncate(MAX_ITEMS * 4);
        for component in &mut self.components {
            short(&mut component.name, MAX_SHORT);
            short(&mut component.role, MAX_ROLE);
            component.path = component.path.as_deref().and_then(path);
            component.depends_on = component
                .depends_on
                .iter()
                .filter_map(|name| text_of(name, MAX_SHORT))
                .collect();
        }
        self.components.retain(|c| !c.name.is_empty());
        self.entry_points.truncate(MAX_ITEMS * 4);
        for entry in &mut self.entry_points {
            short(&mut entry.role, MAX_ROLE);
            entry.path = path(&entry.path).unwrap_or_default();
        }
        self.entry_points.retain(|e| !e.path.is_empty());
        self.datasets.truncate(MAX_ITEMS * 4);
        for dataset in &mut self.datasets {
            short(&mut dataset.name, MAX_SHORT);
            short(&mut dataset.description, MAX_ROLE);
            dataset.path = dataset.path.as_deref().and_then(path);
        }
        self.datasets.retain(|d| !d.name.is_empty());
        self.commands.truncate(MAX_ITEMS * 4);
        for command in &mut self.commands {
            command.normalise();
        }
        self.commands
            .retain(|c| !c.command.is_empty() && !c.source.is_empty());
        self.tidy();
        self
    }

    /// Fill what this synthesis left empty from `parts` (the sections of
    /// the parts it was written from, in tree order): lists are the parts'
    /// joined, prose is the one part's or, from several, each headed by
    /// its part's label. What this synthesis filled itself stays as it is.
    pub(crate) fn fill_from(&mut self, parts: &[(String, Sections)]) {
        fn prose(
            mine: &mut Option<String>,
            parts: &[(String, Sections)],
            of: fn(&Sections) -> &Option<String>,
        ) {
            if mine.is_some() {
                return;
            }
            let filled: Vec<(&str, &str)> = parts
                .iter()
                .filter_map(|(label, part)| Some((label.as_str(), of(part).as_deref()?)))
                .collect();
            *mine = match filled.as_slice() {
                [] => None,
                [(_, only)] => Some(only.to_string()),
                many => Some(
                    many.iter()
                        .map(|(label, text)| format!("{label}: {text}"))
                        .collect::<Vec<_>>()
                        .join("\n\n"),
                ),
            };
        }
        fn list<T: Clone>(
            mine: &mut Vec<T>,
            parts: &[(String, Sections)],
            of: fn(&Sections) -> &Vec<T>,
        ) {
            if mine.is_empty() {
                *mine = parts
                    .iter()
                    .flat_map(|(_, part)| of(part).clone())
                    .collect();
            }
        }
        prose(&mut self.overall_purpose, parts, |s| &s.overall_purpose);
        prose(&mut self.architecture, parts, |s| &s.architecture);
        list(&mut self.components, parts, |s| &s.components);
        list(&mut self.entry_points, parts, |s| &s.entry_points);
        list(&mut self.commands, parts, |s| &s.commands);
        list(&mut self.tech_stack, parts, |s| &s.tech_stack);
        list(&mut self.datasets, parts, |s| &s.datasets);
        prose(&mut self.schema_summary, parts, |s| &s.schema_summary);
        // A period is one span: the first part's stands.
        if self.period_covered.is_none() {
            self.period_covered = parts.iter().find_map(|(_, p)| p.period_covered.clone());
        }
        list(&mut self.themes, parts, |s| &s.themes);
        prose(&mut self.data_quality, parts, |s| &s.data_quality);
        list(&mut self.concerns, parts, |s| &s.concerns);
        self.tidy();
    }

    /// Drop duplicates and dangling dependencies, and cap the lists and
    /// the prose joined from several parts.
    fn tidy(&mut self) {
        for prose in [
            &mut self.overall_purpose,
            &mut self.architecture,
            &mut self.schema_summary,
            &mut self.data_quality,
        ] {
            *prose = text_of(prose.as_deref().unwrap_or_default(), MAX_PROSE);
        }
        dedupe(&mut self.components, |c| c.name.to_lowercase());
        for component in &mut self.components {
            let own = component.name.to_lowercase();
            component
                .depends_on
                .retain(|name| name.to_lowercase() != own);
            dedupe(&mut component.depends_on, |name| name.to_lowercase());
            component.depends_on.truncate(MAX_DEPENDS);
        }
        dedupe(&mut self.entry_points, |e| e.path.clone());
        dedupe(&mut self.commands, |c| {
            format!("{}\0{}", c.command, c.source)
        });
        dedupe(&mut self.datasets, |d| d.name.to_lowercase());
        for list in [&mut self.tech_stack, &mut self.themes, &mut self.concerns] {
            dedupe(list, |item| item.to_lowercase());
        }
        self.components.truncate(MAX_ITEMS);
        self.entry_points.truncate(MAX_ITEMS);
        self.commands.truncate(MAX_ITEMS);
        self.datasets.truncate(MAX_ITEMS);
        self.tech_stack.truncate(MAX_ITEMS);
        self.themes.truncate(MAX_ITEMS);
        self.concerns.truncate(MAX_ITEMS);
    }
}

impl Sections {
    /// Keep in each component's `depends_on` only the names of components
    /// there are (a part's component may name one of another part, so
    /// this waits until the parts are joined).
    pub(crate) fn drop_dangling(&mut self) {
        let names: Vec<String> = self
            .components
            .iter()
            .map(|c| c.name.to_lowercase())
            .collect();
        for component in &mut self.components {
            component
                .depends_on
                .retain(|name| names.contains(&name.to_lowercase()));
        }
    }
}

/// Keep the first of the items with the same `key`, in order.
fn dedupe<T>(items: &mut Vec<T>, key: impl Fn(&T) -> String) {
    let mut seen = std::collections::HashSet::new();
    items.retain(|item| seen.insert(key(item)));
}

fn text_of(raw: &str, max: usize) -> Option<String> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return None;
    }
    Some(match trimmed.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", trimmed[..cut].trim_end()),
        None => trimmed.to_string(),
    })
}

/// A path relative to the target as the model wrote it, short text
/// without a leading `./` or a trailing `/`.
fn path(raw: &str) -> Option<String> {
    let path = text_of(raw, MAX_SHORT)?;
    let path = path
        .strip_prefix("./")
        .unwrap_or(&path)
        .trim_end_matches('/');
    (!path.is_empty()).then(|| path.to_string())
}

/// Sections with every field filled, for the tests of what renders them.
#[cfg(test)]
pub(crate) fn every_section_filled() -> Sections {
    Sections {
        overall_purpose: Some("p".into()),
        architecture: Some("a".into()),
        components: vec![Component {
            name: "c".into(),
            ..Component::default()
        }],
        entry_points: vec![EntryPoint {
            path: "main.rs".into(),
            ..EntryPoint::default()
        }],
        commands: vec![DevCommand {
            command: "make".into(),
            source: "Makefile".into(),
            ..DevCommand::default()
        }],
        tech_stack: vec!["t".into()],
        datasets: vec![Dataset {
            name: "d".into(),
            ..Dataset::default()
        }],
        schema_summary: Some("s".into()),
        period_covered: Some("p".into()),
        themes: vec!["t".into()],
        data_quality: Some("q".into()),
        concerns: vec!["c".into()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::json_keys;
    use serde_json::json;

    #[test]
    fn nothing_submitted_is_nothing_shown() {
        let sections = Sections::from_submitted(&json!({"brief": "b", "detailed": "d"}));
        assert!(sections.is_empty());
        assert_eq!(serde_json::to_value(&sections).unwrap(), json!({}));
    }

    #[test]
    fn submitted_sections_are_trimmed_deduplicated_and_kept_to_known_names() {
        let input = json!({
            "architecture": "  A pipeline.  ",
            "overall_purpose": "   ",
            "tech_stack": ["Rust", "rust", "", 7, "tokio"],
            "components": [
                {"name": "cli", "path": "./src/cli/", "role": "Parses flags.",
                 "depends_on": ["engine", "serde", "cli", "Engine"]},
                {"name": "engine", "role": "Runs passes.", "depends_on": []},
                {"name": "CLI", "role": "A duplicate."},
                {"role": "No name."},
                "not an object"
            ],
            "entry_points": [{"path": "src/main.rs", "role": "The binary."}, {"role": "x"}],
            "datasets": "not a list",
            "period_covered": 2024,
            "concerns": ["No tests for the engine."]
        });
        let mut sections = Sections::from_submitted(&input);
        assert_eq!(sections.components[0].depends_on, ["engine", "serde"]);
        sections.drop_dangling();
        assert_eq!(
            serde_json::to_value(&sections).unwrap(),
            json!({
                "architecture": "A pipeline.",
                "components": [
                    {"name": "cli", "path": "src/cli", "role": "Parses flags.",
                     "depends_on": ["engine"]},
                    {"name": "engine", "role": "Runs passes."}
                ],
                "entry_points": [{"path": "src/main.rs", "role": "The binary."}],
                "tech_stack": ["Rust", "tokio"],
                "concerns": ["No tests for the engine."]
            })
        );
    }

    #[test]
    fn long_text_and_long_lists_are_capped() {
        let input = json!({
            "architecture": "é".repeat(MAX_PROSE + 50),
            "themes": (0..100).map(|n| format!("theme {n}")).collect::<Vec<_>>(),
            "concerns": ["x".repeat(MAX_SHORT * 2)],
        });
        let sections = Sections::from_submitted(&input);
        let architecture = sections.architecture.unwrap();
        assert_eq!(architecture.chars().count(), MAX_PROSE + 1);
        assert!(architecture.ends_with('…'));
        assert_eq!(sections.themes.len(), MAX_ITEMS);
        assert_eq!(sections.concerns[0].chars().count(), MAX_SHORT + 1);
    }

    #[test]
    fn the_parts_fill_only_what_the_verdict_left_empty() {
        let part = |input: serde_json::Value| Sections::from_submitted(&input);
        let parts = vec![
            (
                "src/".to_string(),
                part(json!({"architecture": "Layered.", "tech_stack": ["Rust"],
                            "components": [{"name": "api", "role": "Serves.",
                                            "depends_on": ["store"]}]})),
            ),
            (
                "data/, docs/".to_string(),
                part(
                    json!({"architecture": "Flat files.", "tech_stack": ["CSV", "rust"],
                            "components": [{"name": "store", "role": "Keeps."}],
                            "period_covered": "2020 to 2024"}),
                ),
            ),
        ];
        let mut verdict = part(json!({"concerns": ["One."]}));
        verdict.fill_from(&parts);
        verdict.drop_dangling();
        assert_eq!(
            verdict.architecture.as_deref(),
            Some("src/: Layered.\n\ndata/, docs/: Flat files.")
        );
        assert_eq!(verdict.tech_stack, ["Rust", "CSV"]);
        // A dependency on a component of another part holds once both
        // are in the verdict.
        assert_eq!(verdict.components[0].depends_on, ["store"]);
        assert_eq!(verdict.period_covered.as_deref(), Some("2020 to 2024"));
        assert_eq!(verdict.concerns, ["One."]);

        let mut own = part(json!({"tech_stack": ["Go"], "architecture": "Mine."}));
        own.fill_from(&parts);
        assert_eq!(own.tech_stack, ["Go"]);
        assert_eq!(own.architecture.as_deref(), Some("Mine."));
    }

    #[test]
    fn every_section_has_a_title() {
        let keys: Vec<&str> = SECTION_TITLES.iter().map(|(key, _)| *key).collect();
        let value = serde_json::to_value(every_section_filled()).unwrap();
        assert_eq!(json_keys(&value), keys);
    }
}
