//! The language outline parser: a tree-sitter outline of one source file
//! (its functions, classes, imports and how much of it is comments), and
//! the parsed tree itself for whoever reads more of it.
//!
//! It sits below its two users: the agent's `parse_structure` tool
//! ([`crate::ai::tools::structure`]: the file-system half, sandboxed path
//! resolution and the JSON the model reads) and the grounding of the report
//! ([`crate::grounding`], which finds the definitions a citation names). It
//! knows neither. The outline keeps the original implementation's field
//! names, key order, caps and per-language rules, so a prompt written for
//! one reads the same from the other.
//!
//! Edges:
//! - [`parse_source`] is pure: bytes in, [`Structure`] out. It never panics on
//!   garbage, walks the tree without recursion (deep nesting cannot overflow
//!   the stack) and gives up after [`PARSE_TIME_BUDGET`]. Its users read no
//!   file larger than [`MAX_FILE_BYTES`].
//! - One submodule per grammar family holds the rules for what counts as a
//!   function, a class and an import. TypeScript and TSX share the JavaScript
//!   rules plus their own declarations (see `javascript.rs`).

use std::fmt;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use serde::Serialize;
use tree_sitter::{Node, ParseOptions, Parser};

mod go;
mod javascript;
mod python;
mod rust;

#[cfg(test)]
mod tests;

/// The largest file outlined: 2 MiB. Anything that large is generated or
/// minified, and its outline would be capped anyway.
pub(crate) const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// At most this many function signatures are listed.
pub(crate) const MAX_FUNCTIONS: usize = 50;
/// At most this many classes (or class-like types) are listed.
pub(crate) const MAX_CLASSES: usize = 30;
/// At most this many methods are listed per class.
pub(crate) const MAX_METHODS: usize = 20;
/// At most this many import statements are listed.
pub(crate) const MAX_IMPORTS: usize = 30;

/// How long tree-sitter may spend on one file before we give up. Error
/// recovery on pathological input can be slow; an agent turn should not be.
pub(crate) const PARSE_TIME_BUDGET: Duration = Duration::from_secs(5);

/// The extensions with a grammar, sorted, as shown in error messages.
pub(crate) const SUPPORTED_EXTENSIONS: &[&str] =
    &[".go", ".js", ".jsx", ".mjs", ".py", ".rs", ".ts", ".tsx"];

/// A language `parse_structure` has a grammar for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Rust,
    Go,
}

impl Language {
    /// The language for a file extension, with or without its leading dot,
    /// in any case (`.PY` is Python).
    pub fn from_extension(ext: &str) -> Option<Language> {
        let ext = ext.strip_prefix('.').unwrap_or(ext).to_ascii_lowercase();
        match ext.as_str() {
            "py" => Some(Language::Python),
            "js" | "jsx" | "mjs" => Some(Language::JavaScript),
            "ts" => Some(Language::TypeScript),
            "tsx" => Some(Language::Tsx),
            "rs" => Some(Language::Rust),
            "go" => Some(Language::Go),
            _ => None,
        }
    }

    /// The `language` field of the output.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Rust => "rust",
            Language::Go => "go",
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }

    /// Look at one named node (every one but the root, in document order)
    /// and record what it contributes.
    fn visit(self, node: Node<'_>, source: &[u8], outline: &mut Outline) {
        match self {
            Language::Python => python::visit(node, source, outline),
            Language::JavaScript | Language::TypeScript | Language::Tsx => {
                javascript::visit(node, source, outline)
            }
            Language::Rust => rust::visit(node, source, outline),
            Language::Go => go::visit(node, source, outline),
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The outline of one file. Field order is the JSON key order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Structure {
    pub language: &'static str,
    /// Signatures such as `load(self, name) -> Optional[Item]`.
    pub functions: Vec<String>,
    pub classes: Vec<Class>,
    /// Import statements, verbatim apart from surrounding whitespace.
    pub imports: Vec<String>,
    /// Segments when the text is split on `\n`: one more than the newlines.
    pub line_count: usize,
    /// Python only: some statement is a bare string literal.
    pub has_docstrings: bool,
    pub has_comments: bool,
    /// Comment lines per non-comment line, rounded to two decimals.
    pub comment_to_code_ratio: f64,
}

/// A class, or whatever a language's rules file under `classes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Class {
    pub name: String,
    pub methods: Vec<String>,
}

impl Structure {
    /// The JSON the model sees: compact (indentation would be paid for in
    /// every later request of the conversation), keys in field order.
    #[allow(
        clippy::expect_used,
        reason = "strings and vectors of strings always serialize"
    )]
    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a Structure always serializes")
    }

    /// Replace every string that came from the file (signatures, names,
    /// imports) with `f(string)`. Used to redact before the text leaves.
    pub(crate) fn map_source_text(&mut self, mut f: impl FnMut(&str) -> String) {
        for text in self.functions.iter_mut().chain(self.imports.iter_mut()) {
            *text = f(text);
        }
        for class in &mut self.classes {
            class.name = f(&class.name);
            for method in &mut class.methods {
                *method = f(method);
            }
        }
    }
}

/// Why [`parse_source`] produced no outline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("parsing did not finish within {} seconds", .0.as_secs())]
    TimedOut(Duration),
    #[error("the {0} grammar could not be loaded: {1}")]
    Grammar(Language, String),
}

/// Outline `source` as `language`.
pub fn parse_source(language: Language, source: &[u8]) -> Result<Structure, ParseError> {
    parse_source_within(language, source, PARSE_TIME_BUDGET)
}

/// [`parse_source`] with an explicit time budget.
pub(crate) fn parse_source_within(
    language: Language,
    source: &[u8],
    budget: Duration,
) -> Result<Structure, ParseError> {
    let tree = parse_tree(language, source, budget)?;
    let mut outline = Outline::default();
    // Rules are about named nodes only. Anonymous tokens can share a kind's
    // spelling (JavaScript's `function` keyword) without being that node.
    for_each_descendant(tree.root_node(), |node| {
        if node.is_named() {
            outline.count_comment(node, source);
            language.visit(node, source, &mut outline);
        }
    });
    Ok(outline.finish(language, source))
}

/// The syntax tree of `source` as `language`, or an error once `budget` is
/// spent. Shared with [`crate::grounding`], which reads its own facts from it.
pub(crate) fn parse_tree(
    language: Language,
    source: &[u8],
    budget: Duration,
) -> Result<tree_sitter::Tree, ParseError> {
    let mut parser = Parser::new();
    parser
        .set_language(&language.grammar())
        .map_err(|e| ParseError::Grammar(language, e.to_string()))?;
    let deadline = Instant::now() + budget;
    let mut over_budget = |_: &tree_sitter::ParseState| {
        if Instant::now() >= deadline {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let options = ParseOptions::new().progress_callback(&mut over_budget);
    parser
        .parse_with_options(
            &mut |offset, _| source.get(offset..).unwrap_or_default(),
            None,
            Some(options),
        )
        .ok_or(ParseError::TimedOut(budget))
}

/// Call `f` on every node below `root` (not `root` itself) in pre-order,
/// i.e. document order. Iterative: nesting depth costs no stack.
pub(crate) fn for_each_descendant<'t>(root: Node<'t>, mut f: impl FnMut(Node<'t>)) {
    let mut cursor = root.walk();
    if !cursor.goto_first_child() {
        return;
    }
    loop {
        f(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        // Climb until a sibling is found; the cursor cannot leave `root`, so
        // failing to climb means the walk is over.
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// What the per-language rules have found so far. The caps are applied as
/// items arrive; the result equals collecting everything and truncating.
#[derive(Debug, Default)]
struct Outline {
    functions: Vec<String>,
    classes: Vec<Class>,
    imports: Vec<String>,
    comment_lines: usize,
    has_docstrings: bool,
}

impl Outline {
    fn wants_function(&self) -> bool {
        self.functions.len() < MAX_FUNCTIONS
    }

    fn wants_class(&self) -> bool {
        self.classes.len() < MAX_CLASSES
    }

    fn add_function(&mut self, signature: String) {
        if self.wants_function() {
            self.functions.push(signature);
        }
    }

    fn add_class(&mut self, name: String, mut methods: Vec<String>) {
        if self.wants_class() {
            methods.truncate(MAX_METHODS);
            self.classes.push(Class { name, methods });
        }
    }

    fn add_import(&mut self, node: Node<'_>, source: &[u8]) {
        if self.imports.len() < MAX_IMPORTS {
            self.imports
                .push(trim_python_whitespace(&text(node, source)).to_string());
        }
    }

    /// Comments count for every line they touch: newlines inside plus one.
    fn count_comment(&mut self, node: Node<'_>, source: &[u8]) {
        if COMMENT_KINDS.contains(&node.kind()) {
            self.comment_lines += 1 + count_newlines(bytes(node, source));
        }
    }

    fn finish(self, language: Language, source: &[u8]) -> Structure {
        let line_count = count_newlines(source) + 1;
        let code_lines = line_count.saturating_sub(self.comment_lines).max(1);
        Structure {
            language: language.name(),
            functions: self.functions,
            classes: self.classes,
            imports: self.imports,
            line_count,
            has_docstrings: self.has_docstrings,
            has_comments: self.comment_lines > 0,
            comment_to_code_ratio: round_to_hundredths(
                self.comment_lines as f64 / code_lines as f64,
            ),
        }
    }
}

/// Node kinds counted as comments, in every grammar.
const COMMENT_KINDS: &[&str] = &["comment", "line_comment", "block_comment"];

/// Round to two decimals the way Python's `round(x, 2)` does: to the nearest
/// representable result of the exact binary value, ties to even. Rust's
/// fixed-precision formatting is exact in the same sense, so going through
/// it gives the same digits.
fn round_to_hundredths(x: f64) -> f64 {
    format!("{x:.2}").parse().unwrap_or(x)
}

fn count_newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// The bytes a node spans. Ranges always lie inside the parsed text, but a
/// garbage-in path must not panic, so an impossible range yields nothing.
fn bytes<'s>(node: Node<'_>, source: &'s [u8]) -> &'s [u8] {
    source.get(node.byte_range()).unwrap_or_default()
}

/// A node's text, invalid UTF-8 replaced by U+FFFD.
fn text(node: Node<'_>, source: &[u8]) -> String {
    String::from_utf8_lossy(bytes(node, source)).into_owned()
}

/// The text of an optional node; empty when absent.
fn text_of(node: Option<Node<'_>>, source: &[u8]) -> String {
    node.map(|n| text(n, source)).unwrap_or_default()
}

/// The first direct child that is a named node of one of `kinds`.
///
/// Only named nodes count: an anonymous token whose text happens to equal a
/// kind name (JavaScript's `function` keyword) is not that kind of node.
fn first_child_of_kind<'t>(node: Node<'t>, kinds: &[&str]) -> Option<Node<'t>> {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .find(|child| child.is_named() && kinds.contains(&child.kind()))
}

/// How much of an unnamed declaration's text stands in for its name.
const FALLBACK_NAME_CHARS: usize = 60;

/// `name`, or for a declaration without one (Go and Rust outline such
/// types too), the start of `node`'s text.
fn name_or_text(name: String, node: Node<'_>, source: &[u8]) -> String {
    if name.is_empty() {
        first_chars(&text(node, source), FALLBACK_NAME_CHARS)
    } else {
        name
    }
}

/// At most `max` characters (not bytes) of `s`.
fn first_chars(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// Strip the characters Python's `str.strip()` strips: Unicode whitespace
/// plus the ASCII separators U+001C..U+001F.
fn trim_python_whitespace(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}
