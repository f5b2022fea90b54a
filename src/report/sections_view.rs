//! The domain sections as Markdown and HTML show them: each filled section
//! as prose or as a list of items ([`Body`]), in [`SECTION_TITLES`]' order,
//! so the two formats share which field goes where and only differ in
//! markup. Still untrusted text: each format escapes it as it writes it.
//! (The terminal's rendering is `sections_text`.)

use super::sections::{SECTION_TITLES, Sections};

/// What a filled section holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Body<'a> {
    Prose(&'a str),
    Items(Vec<Item<'a>>),
}

/// One entry of a list section.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Item<'a> {
    /// A name, a path, or the item's whole text.
    pub name: &'a str,
    /// Where it lives, relative to the target.
    pub path: Option<&'a str>,
    /// What it is or does.
    pub text: &'a str,
    /// What it uses (a component's dependencies).
    pub uses: &'a [String],
    /// Whether its path (or, for an entry point, its name) was found in
    /// the tree; `None` before grounding.
    pub verified: Option<bool>,
}

/// Every filled section with its title, in order.
pub(crate) fn filled(sections: &Sections) -> Vec<(&'static str, Body<'_>)> {
    SECTION_TITLES
        .iter()
        .filter_map(|(key, title)| Some((*title, body(sections, key)?)))
        .collect()
}

fn body<'a>(sections: &'a Sections, key: &str) -> Option<Body<'a>> {
    let prose = |text: &'a Option<String>| text.as_deref().map(Body::Prose);
    let list = |items: &'a [String]| {
        items
            .iter()
            .map(|item| Item {
                name: item,
                ..Item::default()
            })
            .collect()
    };
    let items = match key {
        "overall_purpose" => return prose(&sections.overall_purpose),
        "architecture" => return prose(&sections.architecture),
        "schema_summary" => return prose(&sections.schema_summary),
        "period_covered" => return prose(&sections.period_covered),
        "data_quality" => return prose(&sections.data_quality),
        "components" => sections
            .components
            .iter()
            .map(|c| Item {
                name: &c.name,
                path: c.path.as_deref(),
                text: &c.role,
                uses: &c.depends_on,
                verified: c.verified,
            })
            .collect(),
        "entry_points" => sections
            .entry_points
            .iter()
            .map(|e| Item {
                name: &e.path,
                path: None,
                text: &e.role,
                uses: &[],
                verified: e.verified,
            })
            .collect(),
        "datasets" => sections
            .datasets
            .iter()
            .map(|d| Item {
                name: &d.name,
                path: d.path.as_deref(),
                text: &d.description,
                uses: &[],
                verified: d.verified,
            })
            .collect(),
        "commands" => sections
            .commands
            .iter()
            .map(|c| Item {
                name: &c.command,
                path: Some(&c.source),
                text: &c.purpose,
                uses: &[],
                verified: c.verified,
            })
            .collect(),
        "tech_stack" => list(&sections.tech_stack),
        "themes" => list(&sections.themes),
        "concerns" => list(&sections.concerns),
        _ => Vec::new(),
    };
    (!items.is_empty()).then_some(Body::Items(items))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sections::every_section_filled;

    #[test]
    fn every_section_has_a_body_and_none_filled_has_none() {
        let full = every_section_filled();
        assert_eq!(filled(&full).len(), SECTION_TITLES.len());
        assert!(filled(&Sections::default()).is_empty());
    }
}
