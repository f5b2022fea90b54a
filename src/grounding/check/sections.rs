//! The domain sections' paths as grounding sees them: which items hold a
//! path to check, and where a checked path and its verdict go back. The
//! checking itself is the same as for any path a model wrote (`mod.rs`).

use crate::report::sections::Sections;

/// An item of the domain sections that has a path, by its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SectionItem {
    Component(usize),
    EntryPoint(usize),
    Command(usize),
    Dataset(usize),
}

impl SectionItem {
    /// Give the item its checked `path` (target-relative when found) and
    /// whether it was found.
    pub(super) fn mark(self, sections: &mut Sections, path: String, verified: bool) {
        let (slot, mark) = match self {
            SectionItem::Component(i) => {
                let c = &mut sections.components[i];
                (c.path.get_or_insert_default(), &mut c.verified)
            }
            SectionItem::EntryPoint(i) => {
                let e = &mut sections.entry_points[i];
                (&mut e.path, &mut e.verified)
            }
            SectionItem::Command(i) => {
                let c = &mut sections.commands[i];
                (&mut c.source, &mut c.verified)
            }
            SectionItem::Dataset(i) => {
                let d = &mut sections.datasets[i];
                (d.path.get_or_insert_default(), &mut d.verified)
            }
        };
        *slot = path;
        *mark = Some(verified);
    }
}

/// Every path the domain sections hold (a command's is the file it came
/// from), with its item, in report order.
pub(super) fn section_paths(sections: &Sections) -> Vec<(SectionItem, &str)> {
    let components = sections.components.iter().enumerate();
    let entry_points = sections.entry_points.iter().enumerate();
    let commands = sections.commands.iter().enumerate();
    let datasets = sections.datasets.iter().enumerate();
    components
        .filter_map(|(i, c)| Some((SectionItem::Component(i), c.path.as_deref()?)))
        .chain(entry_points.map(|(i, e)| (SectionItem::EntryPoint(i), e.path.as_str())))
        .chain(commands.map(|(i, c)| (SectionItem::Command(i), c.source.as_str())))
        .chain(datasets.filter_map(|(i, d)| Some((SectionItem::Dataset(i), d.path.as_deref()?))))
        .collect()
}
