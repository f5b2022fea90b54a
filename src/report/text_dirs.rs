//! The terminal report's `>> DIRECTORIES`: what the investigation learned
//! of the directories a person reads first, within a line budget.
//!
//! Shown: each directory a model read (on a loop of its own or in a unit),
//! down to `--depth`, and each that holds a flag, at any depth; in tree
//! order, indented by depth, with how it got its summary and the summary
//! under it. When they do not fit [`DIRECTORY_LINES`], each summary is cut
//! to [`SHORT_SUMMARY_LINES`] and the flagged and shallow ones come first.
//! Everything else is counted in one line each, with where to read it: the
//! directories summarised from the scan (which no model read), those with
//! no summary, those below `--depth` and those the budget left out. The
//! JSON, Markdown and HTML reports hold every one in full.

use super::shape::{count, coverage_facts};
use super::{DirCoverage, DirectoryReport};
use crate::text::{escape_control, escape_line};

/// The most lines the section's directories take (its closing counts
/// come on top).
pub(crate) const DIRECTORY_LINES: usize = 60;

/// The lines a summary keeps when not every one fits whole, longest
/// first: the most that lets every directory at the top two levels show.
const SHORT_SUMMARY_LINES: [usize; 3] = [3, 2, 1];

/// Where the reports that hold every directory are.
const FULL_REPORT: &str = "-o report.html / --format markdown";

/// One directory's lines: its header and its summary, wrapped.
struct Block<'a> {
    dir: &'a DirectoryReport,
    header: String,
    summary: Vec<String>,
}

impl Block<'_> {
    fn lines(&self, cap: Option<usize>) -> usize {
        1 + cap.map_or(self.summary.len(), |cap| self.summary.len().min(cap))
    }
}

/// The section's lines (without its title) for `directories` down to
/// `depth`, summaries wrapped to `width` columns.
pub(crate) fn directory_lines(
    directories: &[DirectoryReport],
    depth: usize,
    width: usize,
) -> Vec<String> {
    let flagged = |dir: &DirectoryReport| !dir.flags.is_empty();
    let read = |dir: &DirectoryReport| {
        matches!(
            dir.coverage,
            DirCoverage::Investigated | DirCoverage::Folded
        )
    };
    let shown: Vec<Block<'_>> = directories
        .iter()
        .filter(|dir| flagged(dir) || (read(dir) && dir.depth() <= depth))
        .map(|dir| block(dir, width))
        .collect();
    let cap = summary_cap(&shown);
    let kept = within_budget(&shown, cap);

    let mut lines = Vec::new();
    let limit = cap.unwrap_or(usize::MAX);
    for block in shown
        .iter()
        .zip(&kept)
        .filter(|(_, kept)| **kept)
        .map(|(b, _)| b)
    {
        lines.push(block.header.clone());
        for (n, line) in block.summary.iter().enumerate().take(limit) {
            let cut_here = n + 1 == limit && block.summary.len() > limit;
            lines.push(if cut_here {
                ellipsis(line, width)
            } else {
                line.clone()
            });
        }
    }
    lines.extend(counted(directories, &shown, &kept, depth, cap.is_some()));
    lines
}

/// How many lines each summary keeps: all when every block fits whole,
/// else the most that lets the target and the directories right below it
/// show (one when not even that does).
fn summary_cap(blocks: &[Block<'_>]) -> Option<usize> {
    let total = |cap: Option<usize>, top_only: bool| -> usize {
        blocks
            .iter()
            .filter(|b| !top_only || b.dir.depth() <= 1)
            .map(|b| b.lines(cap))
            .sum()
    };
    if total(None, false) <= DIRECTORY_LINES {
        return None;
    }
    SHORT_SUMMARY_LINES
        .iter()
        .copied()
        .find(|cap| total(Some(*cap), true) <= DIRECTORY_LINES)
        .or(SHORT_SUMMARY_LINES.last().copied())
}

/// Which blocks fit the budget: the shallow first (the flagged first at
/// each depth; the flags section names every flag anyway), each in tree
/// order; every one when they all fit.
fn within_budget(blocks: &[Block<'_>], cap: Option<usize>) -> Vec<bool> {
    let mut order: Vec<usize> = (0..blocks.len()).collect();
    order.sort_by_key(|&i| (blocks[i].dir.depth(), blocks[i].dir.flags.is_empty(), i));
    let mut kept = vec![false; blocks.len()];
    let mut used = 0;
    for i in order {
        let lines = blocks[i].lines(cap);
        if used + lines <= DIRECTORY_LINES {
            used += lines;
            kept[i] = true;
        }
    }
    kept
}

/// A directory's header (`  src/core/  investigated · confidence 0.9`) and
/// its summary wrapped under it.
fn block(dir: &DirectoryReport, width: usize) -> Block<'_> {
    // Indentation stops growing past a few levels, so deep paths keep room.
    let indent = "  ".repeat(dir.depth().min(4) + 1);
    let path = if dir.path == "." {
        "./".to_string()
    } else {
        format!("{}/", escape_line(&dir.path))
    };
    let mut facts = coverage_facts(dir, |reason| escape_line(reason).into_owned());
    if !dir.flags.is_empty() {
        facts.push(count(dir.flags.len() as u64, "flag", "flags"));
    }
    let text_indent = format!("{indent}    ");
    let mut summary = Vec::new();
    match &dir.summary {
        Some(text) if !text.trim().is_empty() => {
            for paragraph in text.split('\n').filter(|p| !p.trim().is_empty()) {
                wrap_into(
                    &mut summary,
                    &escape_control(paragraph),
                    &text_indent,
                    width,
                );
            }
        }
        _ => summary.push(format!("{text_indent}(no summary)")),
    }
    Block {
        dir,
        header: format!("{indent}{path}  {}", facts.join(" · ")),
        summary,
    }
}

/// `line` ending in ` …` within `width` columns: its last words give way.
fn ellipsis(line: &str, width: usize) -> String {
    let mut kept = line.to_string();
    while kept.chars().count() + 2 > width {
        match kept.trim_end().rfind(' ') {
            Some(at) if !kept[..at].trim().is_empty() => kept.truncate(at),
            _ => break,
        }
    }
    format!("{} …", kept.trim_end())
}

/// The one-line counts of what the section does not show.
fn counted(
    directories: &[DirectoryReport],
    shown: &[Block<'_>],
    kept: &[bool],
    depth: usize,
    cut: bool,
) -> Vec<String> {
    let dirs = |n: usize| count(n as u64, "directory", "directories");
    // Each directory is counted once: a candidate the budget left out in
    // `left_out`, any other by how it got its summary.
    let candidate = |dir: &DirectoryReport| shown.iter().any(|block| std::ptr::eq(block.dir, dir));
    let left_out = shown.iter().zip(kept).filter(|(_, kept)| !**kept).count();
    let unshown = || directories.iter().filter(|dir| !candidate(dir));
    let mechanical = unshown()
        .filter(|d| d.coverage == DirCoverage::Mechanical)
        .count();
    let without = unshown()
        .filter(|d| d.coverage == DirCoverage::None)
        .count();
    let deeper = unshown()
        .filter(|d| matches!(d.coverage, DirCoverage::Investigated | DirCoverage::Folded))
        .filter(|d| d.depth() > depth)
        .count();
    let mut lines = Vec::new();
    if left_out > 0 {
        lines.push(format!(
            "  {left_out} more did not fit here, and the summaries are whole in {FULL_REPORT}"
        ));
    } else if cut {
        lines.push(format!("  The summaries are whole in {FULL_REPORT}"));
    }
    if deeper > 0 {
        lines.push(format!(
            "  {} a model read lie below --depth {depth}: {FULL_REPORT}",
            dirs(deeper)
        ));
    }
    if mechanical > 0 {
        lines.push(format!(
            "  {} from the scan alone (no model read them): {FULL_REPORT}",
            dirs(mechanical)
        ));
    }
    if without > 0 {
        lines.push(format!("  {} without a summary.", dirs(without)));
    }
    lines
}

/// `text` in lines of at most `width` columns after `indent`, broken at
/// spaces (a word longer than the room gets a line of its own).
fn wrap_into(lines: &mut Vec<String>, text: &str, indent: &str, width: usize) {
    let room = width.saturating_sub(indent.chars().count()).max(20);
    let mut line = String::new();
    let mut used = 0;
    for word in text.split_whitespace() {
        let w = word.chars().count();
        if used > 0 && used + 1 + w > room {
            lines.push(format!("{indent}{line}"));
            line.clear();
            used = 0;
        }
        if used > 0 {
            line.push(' ');
            used += 1;
        }
        line.push_str(word);
        used += w;
    }
    if used > 0 {
        lines.push(format!("{indent}{line}"));
    }
}
