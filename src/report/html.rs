//! The HTML report (`--format html`, `-o report.html`): one self-contained
//! page that loads nothing from anywhere and needs no script. A header with
//! the verdict; the structure and the scan's figures as inline SVG
//! (`html_graph`, `html_svg`); the flags in a table with whether grounding found each
//! path; every directory in a collapsible tree (`<details>`, which needs no
//! script) with its summary, coverage and file summaries; the detailed
//! analysis and the domain sections the synthesis filled.
//!
//! Every file name and piece of model text is escaped
//! ([`super::markup::html`]), and the page's content security policy
//! forbids scripts and outside loads besides, so a file named
//! `<script>alert(1)</script>` stays text.

use std::fmt::Write as _;
use std::path::Path;

use super::format::RenderOptions;
use super::graph::structure_graph;
use super::html_graph::graph_svg;
use super::html_svg::{Bar, bar_chart};
use super::markup::html;
use super::sections_view::{Body, filled};
use super::shape::{count, fraction, relative_to};
use super::text_scan::by_count_descending;
use super::verdict::verdict_lines;
use super::{DirectoryReport, FileSummary, Report};
use crate::scan::human_size;

/// Bars in each chart at most (the rest are summed into `other`).
const BARS: usize = 10;
/// Directories opened in the tree when the page loads: the target and the
/// level below it.
const OPEN_DEPTH: usize = 1;

/// The whole page.
pub(crate) fn render(report: &Report, options: &RenderOptions) -> String {
    let target = options.target.as_str();
    let name = &report.scan.tree.name;
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>luminos: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        html(name)
    );
    let _ = write!(
        out,
        "<header>\n<h1>luminos: <code>{}/</code></h1>\n<p class=\"target\">{}</p>\n",
        html(name),
        html(target)
    );
    if !report.ai_brief.is_empty() {
        let _ = writeln!(
            out,
            "<div class=\"brief\">{}</div>",
            paragraphs(&report.ai_brief)
        );
    }
    out.push_str("<ul class=\"facts\">\n");
    for line in verdict_lines(report) {
        let _ = writeln!(out, "<li>{}</li>", html(&line));
    }
    out.push_str("</ul>\n</header>\n<main>\n");

    let _ = write!(
        out,
        "<section id=\"structure\">\n<h2>Structure</h2>\n<div class=\"scroll\">{}</div>\n</section>\n",
        graph_svg(&structure_graph(report, target))
    );
    push_flags(&mut out, report);
    if !report.directories.is_empty() {
        out.push_str("<section id=\"directories\">\n<h2>Directories</h2>\n");
        push_tree(&mut out, &report.directories);
        out.push_str("</section>\n");
    }
    if !report.ai_detailed.is_empty() {
        let _ = write!(
            out,
            "<section id=\"analysis\">\n<h2>Detailed analysis</h2>\n{}</section>\n",
            paragraphs(&report.ai_detailed)
        );
    }
    push_sections(&mut out, report);
    push_scan(&mut out, report, target);
    out.push_str("</main>\n<footer>");
    if let Some(grounding) = &report.grounding {
        let _ = write!(out, "<p>{}</p>", html(&grounding.summary_line()));
    }
    out.push_str("<p>Written by luminos.</p></footer>\n</body>\n</html>");
    out
}

/// Untrusted text as paragraphs: blank lines part them, lines break.
fn paragraphs(text: &str) -> String {
    let mut out = String::new();
    for paragraph in text.split("\n\n").filter(|p| !p.trim().is_empty()) {
        let lines: Vec<String> = paragraph.trim().lines().map(html).collect();
        let _ = writeln!(out, "<p>{}</p>", lines.join("<br>"));
    }
    out
}

/// The flags table, most severe first, with whether each path was found.
fn push_flags(out: &mut String, report: &Report) {
    if report.flags.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<section id=\"flags\">\n<h2>Flags ({})</h2>\n<table class=\"flags\">\n\
         <thead><tr><th>Severity</th><th>Path</th><th>Finding</th><th>In the tree</th></tr></thead>\n<tbody>\n",
        report.flags.len()
    );
    for flag in &report.flags {
        let severity = html(&flag.severity);
        let mut finding = html(&flag.finding);
        if let (Some(_), Some(note)) = (&flag.original_severity, &flag.note) {
            let _ = write!(finding, "<br><span class=\"note\">{}</span>", html(note));
        }
        let (mark, class) = match flag.verified {
            Some(true) => ("✓ found", "found"),
            Some(false) => ("✗ not found", "missing"),
            None => ("–", "unchecked"),
        };
        let _ = writeln!(
            out,
            "<tr><td><span class=\"sev sev-{severity}\">{severity}</span></td>\
             <td><code>{}</code>{}</td><td>{finding}</td><td class=\"{class}\">{mark}</td></tr>",
            html(&flag.path),
            flag.line.map(|n| format!(":{n}")).unwrap_or_default(),
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

/// Every directory as nested `<details>`, in tree order: its name, coverage
/// and the start of its summary on the line that opens it; the whole
/// summary and its file summaries inside.
fn push_tree(out: &mut String, directories: &[DirectoryReport]) {
    let mut open: Vec<usize> = Vec::new();
    out.push_str("<div class=\"tree\">\n");
    for dir in directories {
        let depth = dir.depth();
        while open.last().is_some_and(|d| *d >= depth) {
            out.push_str("</div></details>\n");
            open.pop();
        }
        push_dir_summary(out, dir, depth);
        push_notable(out, &dir.notable_files);
        push_file_summaries(out, &dir.files);
        open.push(depth);
    }
    for _ in open {
        out.push_str("</div></details>\n");
    }
    out.push_str("</div>\n");
}

/// Open a directory's `<details>` (open down to [`OPEN_DEPTH`]): its name,
/// coverage, facts and the start of its summary on the line that opens it,
/// the whole summary inside.
fn push_dir_summary(out: &mut String, dir: &DirectoryReport, depth: usize) {
    let name = if dir.path == "." {
        "./".to_string()
    } else {
        format!("{}/", dir.name())
    };
    let summary = dir.summary.as_deref().unwrap_or("");
    let gist: String = summary.chars().take(160).collect();
    let _ = write!(
        out,
        "<details{}><summary><code title=\"{}\">{}</code> \
         <span class=\"cov cov-{}\">{}</span>{} <span class=\"gist\">{}</span></summary>\
         <div class=\"dir\">",
        if depth <= OPEN_DEPTH { " open" } else { "" },
        html(&dir.path),
        html(&name),
        dir.coverage.as_str(),
        dir.coverage.as_str(),
        facts(dir),
        html(&gist),
    );
    if summary.trim().is_empty() {
        out.push_str("<p class=\"none\">No summary.</p>");
    } else {
        out.push_str(&paragraphs(summary));
    }
}

/// A directory's notable files, on one line; nothing when there are none.
fn push_notable(out: &mut String, notable_files: &[String]) {
    if !notable_files.is_empty() {
        let names: Vec<String> = notable_files
            .iter()
            .map(|n| format!("<code>{}</code>", html(n)))
            .collect();
        let _ = write!(
            out,
            "<p class=\"notable\">Notable: {}</p>",
            names.join(", ")
        );
    }
}

/// A directory's file summaries, folded under their count; nothing when
/// there are none.
fn push_file_summaries(out: &mut String, files: &[FileSummary]) {
    if !files.is_empty() {
        let heading = count(files.len() as u64, "file summary", "file summaries");
        let _ = write!(
            out,
            "<details class=\"files\"><summary>{heading}</summary><ul>"
        );
        for file in files {
            let file_name = Path::new(&file.path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| file.path.clone());
            let _ = write!(
                out,
                "<li><code title=\"{}\">{}</code> {}</li>",
                html(&file.path),
                html(&file_name),
                html(&file.summary)
            );
        }
        out.push_str("</ul></details>");
    }
}

/// ` · confidence 0.9 · 2 flags` for a directory's line.
fn facts(dir: &DirectoryReport) -> String {
    let mut facts = String::new();
    if dir.partial_reason.is_some() {
        facts.push_str(" <span class=\"meta\">partial</span>");
    }
    if let Some(confidence) = dir.confidence {
        let _ = write!(
            facts,
            " <span class=\"meta\">confidence {}</span>",
            fraction(confidence)
        );
    }
    if !dir.flags.is_empty() {
        let flags = count(dir.flags.len() as u64, "flag", "flags");
        let _ = write!(facts, " <span class=\"meta flagged\">{flags}</span>");
    }
    facts
}

/// Each domain section the synthesis filled, under its own heading.
fn push_sections(out: &mut String, report: &Report) {
    for (title, body) in filled(&report.ai_sections) {
        let _ = write!(
            out,
            "<section class=\"domain\">\n<h2>{}</h2>\n",
            html(title)
        );
        match body {
            Body::Prose(text) => out.push_str(&paragraphs(text)),
            Body::Items(items) => {
                out.push_str("<ul>");
                for item in items {
                    let _ = write!(out, "<li><strong>{}</strong>", html(item.name));
                    if let Some(path) = item.path {
                        let _ = write!(out, " <code>{}</code>", html(path));
                    }
                    if item.verified == Some(false) {
                        out.push_str(" <span class=\"note\">not found in the tree</span>");
                    }
                    if !item.text.is_empty() {
                        let _ = write!(out, ": {}", html(item.text));
                    }
                    if !item.uses.is_empty() {
                        let _ = write!(
                            out,
                            " <span class=\"note\">uses {}</span>",
                            html(&item.uses.join(", "))
                        );
                    }
                    out.push_str("</li>");
                }
                out.push_str("</ul>\n");
            }
        }
        out.push_str("</section>\n");
    }
}

/// The scan's charts (lines of code by language, disk usage by top
/// directory, file categories) and lists.
fn push_scan(out: &mut String, report: &Report, target: &str) {
    let scan = &report.scan;
    out.push_str("<section id=\"scan\">\n<h2>Scan</h2>\n<div class=\"charts\">\n");
    let mut figure = |title: &str, bars: Vec<Bar>| {
        if !bars.is_empty() {
            let _ = writeln!(
                out,
                "<figure><figcaption>{}</figcaption>{}</figure>",
                html(title),
                bar_chart(title, &bars)
            );
        }
    };
    figure(
        "Lines of code by language",
        counted_bars(&scan.lines_of_code, "lines"),
    );
    figure("Disk usage by top directory", disk_bars(report, target));
    figure(
        "Files by category",
        counted_bars(&scan.file_categories, "files"),
    );
    out.push_str("</div>\n");
    if scan.ignore.enabled && !scan.ignore.rule_files.is_empty() {
        let _ = writeln!(
            out,
            "<p>Ignored by {}: {}, {} (disk usage still counts them).</p>",
            html(&scan.ignore.rule_files.join(", ")),
            count(scan.ignore.files_removed, "file", "files"),
            count(scan.ignore.dirs_removed, "directory", "directories")
        );
    }
    push_list(
        out,
        "Unusually large files",
        ("<ul>", "</ul>"),
        &scan.large_files,
        |file| {
            format!(
                "<li><code>{}</code> ({})</li>",
                html(&relative_to(target, &file.path)),
                html(&file.reasons.join(", "))
            )
        },
    );
    push_list(
        out,
        "Recently modified",
        ("<table><tbody>", "</tbody></table>"),
        &scan.recent_files,
        |file| {
            format!(
                "<tr><td>{}</td><td><code>{}</code></td></tr>",
                html(&file.modified_human),
                html(&relative_to(target, &file.path))
            )
        },
    );
    out.push_str("</section>\n");
}

/// The bars of `counts` (in `unit`), largest first: the first [`BARS`],
/// then one for all the others together.
fn counted_bars(counts: &indexmap::IndexMap<String, u64>, unit: &str) -> Vec<Bar> {
    let sorted = by_count_descending(counts);
    let mut bars: Vec<Bar> = sorted
        .iter()
        .take(BARS)
        .map(|(label, value)| Bar {
            label: label.to_string(),
            value: *value,
            shown: format!("{} {unit}", crate::text::format_thousands(*value)),
            apart: false,
        })
        .collect();
    let rest: u64 = sorted.iter().skip(BARS).map(|(_, v)| v).sum();
    if rest > 0 {
        bars.push(Bar {
            label: "other".into(),
            value: rest,
            shown: format!("{} {unit}", crate::text::format_thousands(rest)),
            apart: false,
        });
    }
    bars
}

/// A titled list of `items`, each written by `item`, between the `open`
/// and `close` tags; nothing when there are none.
fn push_list<T>(
    out: &mut String,
    title: &str,
    (open, close): (&str, &str),
    items: &[T],
    item: impl Fn(&T) -> String,
) {
    if items.is_empty() {
        return;
    }
    let _ = write!(out, "<h3>{title}</h3>\n{open}");
    for each in items {
        out.push_str(&item(each));
    }
    let _ = writeln!(out, "{close}");
}

/// The directories one level below the target by size (ignored ones set
/// apart), or the target alone when it has none.
fn disk_bars(report: &Report, target: &str) -> Vec<Bar> {
    let mut rows: Vec<_> = report
        .scan
        .disk_usage
        .iter()
        .filter(|e| Path::new(&e.path).parent() == Some(Path::new(target)))
        .collect();
    if rows.is_empty() {
        rows = report.scan.disk_usage.iter().rev().take(1).collect();
    }
    rows.sort_by_key(|e| std::cmp::Reverse(e.size_bytes));
    rows.iter()
        .take(BARS)
        .map(|e| Bar {
            label: format!(
                "{}{}",
                relative_to(target, &e.path),
                if e.ignored { " (ignored)" } else { "" }
            ),
            value: e.size_bytes,
            shown: human_size(e.size_bytes),
            apart: e.ignored,
        })
        .collect()
}

/// The page's style: readable without script, printable, light and dark.
const STYLE: &str = "
:root{--fg:#1d2330;--muted:#5b6475;--bg:#fff;--panel:#f5f7fa;--line:#d9dee7;--accent:#3b5b92}
@media (prefers-color-scheme:dark){:root{--fg:#e4e7ee;--muted:#9aa3b5;--bg:#14171d;--panel:#1c2029;--line:#333a48;--accent:#8fb0e8}}
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:1100px;padding:0 20px 40px}
header{border-bottom:2px solid var(--line);padding:16px 0 8px}
h1{font-size:1.6em;margin:0}h2{border-bottom:1px solid var(--line);padding-bottom:4px;margin-top:32px}
.target{color:var(--muted);margin:2px 0 12px;word-break:break-all}
.brief p{font-size:1.08em}
.facts{color:var(--muted);padding-left:18px}
code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--panel);padding:1px 4px;border-radius:3px;word-break:break-all}
.scroll{overflow-x:auto}
svg text{font:12px system-ui,sans-serif;fill:var(--fg)}
svg .note{fill:var(--muted);font-size:11px}
svg .bar{fill:#5b84c4}svg .bar.apart{fill:#b9a37a}
svg .value{fill:var(--muted)}
svg .edge{fill:none;stroke:#9aa3b5;stroke-width:1.3}
svg .node rect{fill:#f4f6fa;stroke:#556}
svg .root rect{fill:#dde7f7;stroke:#3b5b92;stroke-width:2}
svg .investigated rect{fill:#d9f2dd;stroke:#2f7d3b}
svg .folded rect{fill:#e6f0d0;stroke:#6b8a2a}
svg .mechanical rect{fill:#f1ede2;stroke:#8a7a4d}
svg .none rect,svg .more rect{fill:#fff;stroke:#aaa;stroke-dasharray:3 3}
svg .node text{fill:#1d2330}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
.sev{font-weight:600;text-transform:uppercase;font-size:12px;padding:1px 6px;border-radius:3px;background:var(--panel)}
.sev-critical{background:#c62828;color:#fff}.sev-concern{background:#f0a500;color:#1d2330}.sev-info{background:#dde7f7;color:#1d2330}
.found{color:#2f7d3b}.missing{color:#c62828;font-weight:600}.unchecked{color:var(--muted)}
.note{color:var(--muted)}
.tree details{margin-left:18px}
.tree>details{margin-left:0}
.tree summary{cursor:pointer;padding:2px 0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.tree .gist{color:var(--muted)}
details[open]>summary>.gist{display:none}
.dir{border-left:2px solid var(--line);padding:2px 0 4px 12px;margin:2px 0 6px 6px}
.dir p{margin:4px 0}
.cov{font-size:11px;padding:0 6px;border-radius:8px;border:1px solid var(--line)}
.cov-investigated{background:#d9f2dd;color:#1d4d26}.cov-folded{background:#e6f0d0;color:#3d5216}
.cov-mechanical{background:#f1ede2;color:#5a4e2d}.cov-none{background:#eee;color:#555}
.meta{font-size:12px;color:var(--muted)}.flagged{color:#c62828}
.files summary{font-size:13px;color:var(--muted)}
.files ul{margin:4px 0;padding-left:18px;font-size:14px}
.charts{display:flex;flex-wrap:wrap;gap:14px}
figure{margin:0;background:var(--panel);padding:8px 10px;border-radius:6px}
figcaption{font-weight:600;margin-bottom:4px}
footer{color:var(--muted);border-top:1px solid var(--line);margin-top:32px}
";
