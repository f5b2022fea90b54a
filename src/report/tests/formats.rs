//! Markdown and HTML: snapshots of the fixture's report, what each must
//! hold (every directory's summary, links from the target's root, the
//! flags table, the pictures), self-containment, and hostile names and
//! model text staying text.

use super::*;

fn markdown(report: &Report) -> String {
    rendered(report, Format::Markdown, "/tmp/mydir")
}

fn html(report: &Report) -> String {
    rendered(report, Format::Html, "/tmp/mydir")
}

#[test]
fn the_fixture_markdown_snapshot() {
    insta::assert_snapshot!(markdown(&fixture()));
}

#[test]
fn the_fixture_html_snapshot() {
    insta::assert_snapshot!(html(&fixture()));
}

/// Every directory gets a heading and its summary; files link from the
/// target's root; flags go in a table; coverage and cost are said.
#[test]
fn markdown_holds_every_directory_and_links_from_the_root() {
    let report = fixture();
    let text = markdown(&report);
    for dir in &report.directories {
        let shown = if dir.path == "." {
            "./".to_string()
        } else {
            format!("{}/", dir.path)
        };
        assert!(
            text.contains(&format!("\n### `{shown}`\n")),
            "{shown} in {text}"
        );
        if let Some(summary) = &dir.summary {
            assert!(
                text.contains(&super::super::markup::md_inline(summary)),
                "{summary}"
            );
        }
    }
    assert_shows(
        &text,
        &[
            "- [`src/main.rs`](src/main.rs): Parses the arguments and runs the engine.",
            "Notable files: [`src/core/engine.rs`](src/core/engine.rs)",
            "| critical | [`Cargo.toml`](Cargo.toml) | A registry token in plain text. | yes |",
            "| info | `src/backdoor.py` | Opens a reverse shell. (Its path was not found in the tree; the agent rated it critical.) | **no** |",
            "- Coverage: 1 directory investigated by a loop of their own",
            "- Cost: about $0.42 for 9 API requests",
            "```mermaid\ngraph LR\n",
            "| `target` | 1.1 GB | ignored |",
        ],
    );
    // No absolute path: the file is meant to be committed.
    assert!(!text.contains("/tmp/mydir"), "{text}");
}

/// The tree picture: the target, its directories with their coverage.
#[test]
fn the_mermaid_graph_draws_the_top_two_levels_with_coverage() {
    let text = markdown(&fixture());
    assert_shows(
        &text,
        &[
            "  n0[\"mydir/<br/>investigated\"]:::root\n",
            "  n1[\"src/<br/>folded\"]:::folded\n",
            "  n2[\"core/<br/>mechanical\"]:::mechanical\n",
            "  n3[\"docs/<br/>none\"]:::none\n",
            "  n0 --> n1\n  n1 --> n2\n  n0 --> n3\n",
        ],
    );
}

/// Hostile names and model text cannot add markup, links, table cells or
/// graph syntax to the Markdown.
#[test]
fn markdown_escapes_hostile_names_and_model_text() {
    let text = markdown(&hostile());
    // Code spans show their text as it is; everything outside them must
    // carry no markup.
    let outside = without_code_spans(&text);
    assert!(outside.contains("&lt;script&gt;"), "{outside}");
    for raw in ["<script", "<img", "<!--"] {
        assert!(!outside.contains(raw), "{raw} in {outside}");
    }
    // The only links are ours: a code span to a percent-encoded path.
    let link = regex::Regex::new(r"(^|[^\\])\]\(").unwrap();
    let ours = regex::Regex::new(r"\[CODE\]\([A-Za-z0-9%._~/-]+\)").unwrap();
    assert!(
        !link.is_match(&ours.replace_all(&outside, "")),
        "a link in {outside}"
    );
    assert!(ours.is_match(&outside));
    assert!(!outside.contains("[link]"), "{outside}");
    assert!(!text.contains('\x1b'));
    assert!(
        !text.contains("\n# heading"),
        "a model line cannot become a heading"
    );
    // Every table row has its four cells.
    for row in text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Severity"))
    {
        let cells = row.replace("\\|", "").matches('|').count();
        assert!(cells == 3 || cells == 5 || cells == 4, "{row}");
    }
    for row in text
        .lines()
        .skip_while(|l| *l != "## Flags")
        .take_while(|l| !l.starts_with("## Detailed"))
        .filter(|l| l.starts_with('|'))
    {
        assert_eq!(row.replace("\\|", "").matches('|').count(), 5, "{row}");
    }
    // Every Mermaid line is ours: a node with a quoted, inert label, an
    // edge or a class.
    let graph: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "```mermaid")
        .skip(1)
        .take_while(|l| *l != "```")
        .collect();
    let node =
        regex::Regex::new(r#"^  n\d+\["[^"<>\[\]]*(<br/>[^"<>\[\]]*)?"\]:::[a-z]+$"#).unwrap();
    let edge = regex::Regex::new(r"^  n\d+ --> n\d+$").unwrap();
    for line in &graph[1..] {
        assert!(
            node.is_match(line) || edge.is_match(line) || line.starts_with("  classDef "),
            "{line}"
        );
    }
}

/// The page is one file: no script, no outside URL, nothing loaded.
#[test]
fn html_is_self_contained_and_readable_without_script() {
    let page = html(&fixture());
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.ends_with("</html>"));
    for forbidden in [
        "<script", "<link", "<img", "<iframe", "src=", "href=", "url(", "@import",
    ] {
        assert!(!page.contains(forbidden), "{forbidden}");
    }
    // The only URL is the SVG namespace, which loads nothing.
    let urls = page.matches("://").count();
    assert_eq!(
        urls,
        page.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
    assert!(page.contains("default-src 'none'"));
    assert_shows(
        &page,
        &[
            "<svg class=\"graph\"",
            "aria-label=\"Lines of code by language\"",
            "aria-label=\"Disk usage by top directory\"",
            "aria-label=\"Files by category\"",
            "<td class=\"found\">✓ found</td>",
            "<td class=\"missing\">✗ not found</td>",
            "<details open><summary><code title=\".\">./</code> <span class=\"cov cov-investigated\">",
            "<details><summary><code title=\"src/core\">core/</code> <span class=\"cov cov-mechanical\">",
            "Parses the arguments and runs the engine.",
            "target (ignored)",
        ],
    );
    for dir in fixture().directories {
        if let Some(summary) = dir.summary {
            assert!(page.contains(&super::super::markup::html(&summary)));
        }
    }
}

/// A file named `<script>alert(1)</script>` and model text full of markup
/// stay text: every tag in the page is one luminos writes.
#[test]
fn html_escapes_hostile_names_and_model_text() {
    let page = html(&hostile());
    const OURS: &[&str] = &[
        "!DOCTYPE",
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "header",
        "h1",
        "h2",
        "h3",
        "p",
        "code",
        "ul",
        "li",
        "main",
        "section",
        "div",
        "svg",
        "g",
        "text",
        "rect",
        "path",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "span",
        "details",
        "summary",
        "figure",
        "figcaption",
        "br",
        "footer",
        "strong",
    ];
    for (at, _) in page.match_indices('<') {
        let rest = &page[at + 1..];
        let name: String = rest
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '!')
            .collect();
        assert!(
            OURS.contains(&name.as_str()),
            "a tag <{name}> at {}",
            &page[at..at + 40]
        );
    }
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!page.contains('\x1b'));
    // No attribute was closed early: every quote in a tag pairs up.
    for tag in page
        .split('<')
        .skip(1)
        .map(|t| t.split('>').next().unwrap())
    {
        assert_eq!(tag.matches('"').count() % 2, 0, "<{tag}>");
    }
}

/// With no investigation there is still a page and a document: the scan,
/// and the tree's picture without coverage.
#[test]
fn a_scan_alone_renders_in_every_format() {
    let mut report = fixture();
    report.directories.clear();
    report.flags.clear();
    report.ai_brief.clear();
    report.ai_detailed.clear();
    report.investigation = Investigation::skipped("--scan-only");
    let text = markdown(&report);
    assert!(text.contains("- Investigation skipped: --scan-only"));
    assert!(text.contains("  n1[\"src/\"]:::plain"), "{text}");
    assert!(!text.contains("## Directories"));
    let page = html(&report);
    assert!(!page.contains("id=\"directories\""));
    assert!(page.contains("Investigation skipped: --scan-only"));
}

/// `text` without its code spans, read as CommonMark reads them: a run of
/// backticks opens a span that the next run of the same length closes.
fn without_code_spans(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            out.push_str(&text[i..i + 2]);
            i += 2;
            continue;
        }
        if bytes[i] != b'`' {
            let next = text[i..].find(['`', '\\']).map_or(text.len(), |n| i + n);
            out.push_str(&text[i..next]);
            i = next;
            continue;
        }
        let run = text[i..].chars().take_while(|c| *c == '`').count();
        let fence = "`".repeat(run);
        let mut search = i + run;
        let mut closed = None;
        while let Some(found) = text[search..].find(&fence) {
            let at = search + found;
            let len = text[at..].chars().take_while(|c| *c == '`').count();
            if len == run {
                closed = Some(at + run);
                break;
            }
            search = at + len;
        }
        match closed {
            Some(end) => {
                out.push_str("CODE");
                i = end;
            }
            None => {
                out.push_str(&fence);
                i += run;
            }
        }
    }
    out
}

/// A report of 20 packages of 10 modules each, investigated three ways.
fn large() -> Report {
    let mut report = Report::default();
    let mut packages = Vec::new();
    for p in 0..20 {
        let mut modules = Vec::new();
        for m in 0..10 {
            let rel = format!("pkg{p:02}/mod{m}");
            modules.push(dir_node(&rel, vec![file_node(&format!("{rel}/a.rs"), 100)]));
            report.scan.classified_files.push(ClassifiedFile {
                path: format!("/tmp/mydir/{rel}/a.rs"),
                name: "a.rs".into(),
                category: "source".into(),
                size: (p * 10 + m + 1) as u64 * 100,
                description: None,
            });
            report.directories.push(DirectoryReport {
                path: rel,
                summary: Some(format!("Module {m} of package {p}.")),
                coverage: [
                    DirCoverage::Investigated,
                    DirCoverage::Folded,
                    DirCoverage::Mechanical,
                ][m % 3],
                ..DirectoryReport::default()
            });
        }
        packages.push(dir_node(&format!("pkg{p:02}"), modules));
        report.directories.push(DirectoryReport {
            path: format!("pkg{p:02}"),
            summary: Some(format!("Package {p}.")),
            coverage: DirCoverage::Folded,
            ..DirectoryReport::default()
        });
    }
    report.scan.tree = dir_node("", packages);
    report.directories.push(DirectoryReport {
        path: ".".into(),
        summary: Some("The root.".into()),
        coverage: DirCoverage::Investigated,
        ..DirectoryReport::default()
    });
    report
        .directories
        .sort_by(|a, b| tree_order(&a.path, &b.path));
    report
}

/// The picture of a large tree stays one screen: eight directories and
/// four below each, the rest counted, in columns.
#[test]
fn the_structure_stays_small_on_a_large_tree() {
    let report = large();
    let page = html(&report);
    let svg = &page[page.find("<svg class=\"graph\"").unwrap()..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    assert_eq!(
        svg.matches("<rect").count(),
        1 + 9 + 8 * 5 + 4,
        "boxes and the legend"
    );
    let height: f64 = svg
        .split("height=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(height < 400.0, "{height}");
    assert!(svg.contains(">12 more<"), "{svg}");
    assert!(svg.contains(">6 more<"), "{svg}");
    // The largest package first.
    let first = svg.find(">pkg19/<").unwrap();
    assert!(first < svg.find(">pkg18/<").unwrap());
}

/// The domain sections the synthesis filled show in Markdown and HTML
/// under their titles, and its components become the picture of the
/// structure (Mermaid and SVG), an edge for each dependency.
#[test]
fn domain_sections_and_components_render_in_markdown_and_html() {
    let mut report = fixture();
    report.ai_sections = sections::Sections {
        architecture: Some("A command line over an engine.".into()),
        components: vec![
            sections::Component {
                name: "CLI".into(),
                path: Some("src/main.rs".into()),
                role: "Parses the arguments.".into(),
                depends_on: vec!["Engine".into()],
                verified: None,
            },
            sections::Component {
                name: "Engine".into(),
                path: Some("src/core".into()),
                role: "Walks the tree.".into(),
                depends_on: Vec::new(),
                verified: None,
            },
        ],
        tech_stack: vec!["Rust".into()],
        ..sections::Sections::default()
    };
    let text = markdown(&report);
    assert_shows(
        &text,
        &[
            "\n## Architecture\n\nA command line over an engine.\n",
            "\n## Components\n\n- **CLI** ([`src/main.rs`](src/main.rs)): Parses the arguments. Uses: Engine.\n- **Engine** (`src/core`): Walks the tree.\n",
            "\n## Tech stack\n\n- **Rust**\n",
            "  n0[\"CLI<br/>src/main.rs\"]:::plain\n  n1[\"Engine<br/>src/core\"]:::plain\n  n0 --> n1\n",
        ],
    );
    // Sections come after the analysis, before the directories.
    assert!(text.find("## Detailed analysis").unwrap() < text.find("## Architecture").unwrap());
    assert!(text.find("## Tech stack").unwrap() < text.find("## Directories").unwrap());
    let page = html(&report);
    assert_shows(
        &page,
        &[
            "<h2>Architecture</h2>\n<p>A command line over an engine.</p>",
            "<li><strong>CLI</strong> <code>src/main.rs</code>: Parses the arguments. <span class=\"note\">uses Engine</span></li>",
            "<title>CLI (src/main.rs)</title>",
        ],
    );
    let text = rendered(&report, Format::Text, "/tmp/mydir");
    assert_shows(&text, &[">> COMPONENTS (AI)", ">> TECH STACK (AI)"]);
    assert!(
        text.find(">> DETAILED AI ANALYSIS").unwrap() < text.find(">> ARCHITECTURE (AI)").unwrap()
    );
}
