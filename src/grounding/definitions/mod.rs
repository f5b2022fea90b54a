//! What a source file defines, read from its tree-sitter syntax tree: every
//! named definition with the type, trait, class or module it sits in, the
//! names its imports bring in, and which types extend or implement which.
//!
//! This is the grounding's own outline. `parse_structure` shows the model
//! the original's lossy outline (capped lists, no methods for Go, no owners
//! for Rust methods); checking a citation needs every name and its owner, so
//! the same grammars are read again with other rules:
//!
//! | language | definitions | owners |
//! |---|---|---|
//! | Rust | fns (with bodies or not), structs, enums and their variants, unions, traits, type aliases, modules, consts, statics, macros, fields | the `impl`'s type and trait, the trait, the struct/enum, the `mod` |
//! | Python | functions, classes, assignments outside functions | the class |
//! | JS/TS/TSX | functions, classes, methods, fields, interfaces, type aliases, enums, namespaces, top-level variables, `x.y = function` | the class, interface, enum or namespace; for `A.prototype.m = ...`, `A` |
//! | Go | funcs, methods, types, top-level consts and vars, struct fields, interface methods | the receiver's type, the type spec |
//!
//! A definition nested in a function has no owner. Names that come from
//! `require(...)` are imports, not definitions.
//!
//! The walk is one pass of a tree cursor that carries each node's context
//! (its owners, whether it is inside a function) down from its ancestors,
//! so no node ever climbs to its parent: tree-sitter finds a parent by
//! descending from the root again, which on a file of many items would make
//! the walk quadratic.

use std::collections::HashSet;
use std::rc::Rc;
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use tree_sitter::Node;

use crate::outline::{Language, ParseError, parse_tree};

/// What one file defines and imports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FileDefs {
    pub defs: Vec<Def>,
    /// Every identifier of every import statement (`use a::b::{C, D as E}`
    /// brings in `a`, `b`, `C`, `D`, `E`).
    pub imports: HashSet<String>,
    /// `(type, base)`: superclasses, implemented traits and interfaces.
    pub bases: Vec<(String, String)>,
}

/// One definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Def {
    pub name: String,
    /// The types, traits, classes or modules it is a member of (an `impl
    /// Trait for Type` method has both).
    pub owners: Vec<String>,
}

/// Read the definitions of `source`, giving up after `budget`.
pub(crate) fn definitions(
    language: Language,
    source: &[u8],
    budget: Duration,
) -> Result<FileDefs, ParseError> {
    let tree = parse_tree(language, source, budget)?;
    let reader = Reader { source, language };
    let mut found = FileDefs::default();
    let mut cursor = tree.walk();
    // The context of the children of each node on the path to the cursor.
    let mut contexts: Vec<Rc<Context>> = vec![Rc::new(Context::default())];
    loop {
        let node = cursor.node();
        let context = contexts.last().cloned().unwrap_or_default();
        if node.is_named() {
            reader.visit(node, &context, &mut found);
        }
        if cursor.goto_first_child() {
            contexts.push(reader.inner_context(node, &context));
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return Ok(found);
            }
            contexts.pop();
        }
    }
}

/// Where a node sits: the owners a definition here belongs to, and whether
/// it is inside a function body.
#[derive(Debug, Clone, Default)]
struct Context {
    owners: Vec<String>,
    in_function: bool,
}

/// Words of an import statement that are syntax, not names.
const IMPORT_KEYWORDS: &[&str] = &[
    "as", "const", "crate", "default", "extern", "from", "import", "let", "pub", "require", "self",
    "super", "type", "typeof", "use", "var",
];

static IDENTIFIER: LazyLock<Regex> =
    LazyLock::new(|| crate::text::constant_regex(r"[A-Za-z_$][A-Za-z0-9_$]*"));

struct Reader<'s> {
    source: &'s [u8],
    language: Language,
}

impl Reader<'_> {
    fn text(&self, node: Node<'_>) -> String {
        String::from_utf8_lossy(self.source.get(node.byte_range()).unwrap_or_default()).into_owned()
    }

    fn field_text(&self, node: Node<'_>, field: &str) -> Option<String> {
        let name = node.child_by_field_name(field)?;
        let text = self.text(name);
        let text = text
            .trim_matches(|c| c == '"' || c == '\'')
            .trim_start_matches('#');
        (!text.is_empty()).then(|| text.to_string())
    }

    fn add(&self, found: &mut FileDefs, name: Option<String>, owners: &[String]) {
        if let Some(name) = name {
            found.defs.push(Def {
                name,
                owners: owners.to_vec(),
            });
        }
    }

    fn add_imports(&self, node: Node<'_>, found: &mut FileDefs) {
        let text = self.text(node);
        for word in IDENTIFIER.find_iter(&text) {
            if !IMPORT_KEYWORDS.contains(&word.as_str()) {
                found.imports.insert(word.as_str().to_string());
            }
        }
    }

    /// Record what `node`, sitting in `context`, defines or imports.
    fn visit(&self, node: Node<'_>, context: &Context, found: &mut FileDefs) {
        match self.language {
            Language::Rust => self.rust(node, context, found),
            Language::Python => self.python(node, context, found),
            Language::JavaScript | Language::TypeScript | Language::Tsx => {
                self.javascript(node, context, found)
            }
            Language::Go => self.go(node, context, found),
        }
    }

    /// The context of `node`'s children: a new owner, a function body, or
    /// the same as `node`'s own.
    fn inner_context(&self, node: Node<'_>, context: &Rc<Context>) -> Rc<Context> {
        let owned = |owners: Vec<String>| {
            Rc::new(Context {
                owners,
                in_function: false,
            })
        };
        let function = || {
            Rc::new(Context {
                owners: Vec::new(),
                in_function: true,
            })
        };
        let named = |node: Node<'_>| self.field_text(node, "name").into_iter().collect();
        let kind = node.kind();
        match self.language {
            Language::Rust => match kind {
                "impl_item" => owned(
                    ["type", "trait"]
                        .iter()
                        .filter_map(|f| node.child_by_field_name(f))
                        .map(|t| self.rust_type_name(t))
                        .collect(),
                ),
                "trait_item" | "struct_item" | "enum_item" | "union_item" | "mod_item" => {
                    owned(named(node))
                }
                "function_item" | "closure_expression" => function(),
                _ => context.clone(),
            },
            Language::Python => match kind {
                "class_definition" => owned(named(node)),
                "function_definition" | "lambda" => function(),
                _ => context.clone(),
            },
            Language::JavaScript | Language::TypeScript | Language::Tsx => match kind {
                "class_declaration"
                | "abstract_class_declaration"
                | "class"
                | "interface_declaration"
                | "enum_declaration"
                | "internal_module"
                | "module" => owned(named(node)),
                kind if is_js_function(kind) => function(),
                _ => context.clone(),
            },
            Language::Go => match kind {
                "type_spec" => owned(named(node)),
                "function_declaration" | "method_declaration" | "func_literal" => function(),
                _ => context.clone(),
            },
        }
    }

    // ---- Rust ----

    fn rust(&self, node: Node<'_>, context: &Context, found: &mut FileDefs) {
        match node.kind() {
            "function_item"
            | "function_signature_item"
            | "struct_item"
            | "enum_item"
            | "union_item"
            | "trait_item"
            | "type_item"
            | "mod_item"
            | "const_item"
            | "static_item"
            | "macro_definition"
            | "enum_variant"
            | "field_declaration"
            | "associated_type" => {
                self.add(found, self.field_text(node, "name"), &context.owners);
            }
            "impl_item" => {
                let ty = node
                    .child_by_field_name("type")
                    .map(|t| self.rust_type_name(t));
                let tr = node
                    .child_by_field_name("trait")
                    .map(|t| self.rust_type_name(t));
                if let (Some(ty), Some(tr)) = (ty, tr) {
                    found.bases.push((ty, tr));
                }
            }
            "use_declaration" | "extern_crate_declaration" => self.add_imports(node, found),
            _ => {}
        }
    }

    /// `Foo` for `Foo`, `Foo<T>`, `a::Foo`, `&Foo`.
    fn rust_type_name(&self, node: Node<'_>) -> String {
        match node.kind() {
            "generic_type" | "reference_type" => node
                .child_by_field_name("type")
                .map_or_else(|| self.text(node), |inner| self.rust_type_name(inner)),
            "scoped_type_identifier" => self
                .field_text(node, "name")
                .unwrap_or_else(|| self.text(node)),
            _ => self.text(node),
        }
    }

    // ---- Python ----

    fn python(&self, node: Node<'_>, context: &Context, found: &mut FileDefs) {
        match node.kind() {
            "function_definition" | "class_definition" => {
                let name = self.field_text(node, "name");
                if node.kind() == "class_definition"
                    && let (Some(class), Some(bases)) =
                        (&name, node.child_by_field_name("superclasses"))
                {
                    let mut cursor = bases.walk();
                    for base in bases.named_children(&mut cursor) {
                        if matches!(base.kind(), "identifier" | "attribute") {
                            let text = self.text(base);
                            let last = text.rsplit('.').next().unwrap_or(&text).to_string();
                            found.bases.push((class.clone(), last));
                        }
                    }
                }
                self.add(found, name, &context.owners);
            }
            "assignment" if !context.in_function => {
                if let Some(left) = node
                    .child_by_field_name("left")
                    .filter(|left| left.kind() == "identifier")
                {
                    self.add(found, Some(self.text(left)), &context.owners);
                }
            }
            "import_statement" | "import_from_statement" | "future_import_statement" => {
                self.add_imports(node, found)
            }
            _ => {}
        }
    }

    // ---- JavaScript, TypeScript, TSX ----

    fn javascript(&self, node: Node<'_>, context: &Context, found: &mut FileDefs) {
        match node.kind() {
            "function_declaration"
            | "generator_function_declaration"
            | "function_signature"
            | "method_definition"
            | "method_signature"
            | "abstract_method_signature"
            | "public_field_definition"
            | "property_signature"
            | "type_alias_declaration"
            | "internal_module"
            | "module" => {
                self.add(found, self.field_text(node, "name"), &context.owners);
            }
            "class_declaration"
            | "abstract_class_declaration"
            | "class"
            | "interface_declaration"
            | "enum_declaration" => {
                let name = self.field_text(node, "name");
                if let Some(name) = &name {
                    self.js_bases(node, name, found);
                }
                self.add(found, name, &context.owners);
            }
            "field_definition" => {
                self.add(found, self.field_text(node, "property"), &context.owners);
            }
            "variable_declarator" => {
                let Some(name) = node.child_by_field_name("name") else {
                    return;
                };
                let required = node.child_by_field_name("value").is_some_and(|value| {
                    value.kind() == "call_expression"
                        && value
                            .child_by_field_name("function")
                            .is_some_and(|f| self.text(f) == "require")
                });
                if required {
                    self.add_imports(name, found);
                } else if name.kind() == "identifier" && !context.in_function {
                    self.add(found, Some(self.text(name)), &context.owners);
                }
            }
            "assignment_expression" => self.js_member_assignment(node, found),
            "import_statement" => self.add_imports(node, found),
            _ => {}
        }
    }

    /// `exports.run = function ...`, `App.prototype.start = () => ...`.
    fn js_member_assignment(&self, node: Node<'_>, found: &mut FileDefs) {
        let (Some(left), Some(right)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ) else {
            return;
        };
        let defines = matches!(
            right.kind(),
            "function_expression" | "arrow_function" | "class" | "function"
        );
        if left.kind() != "member_expression" || !defines {
            return;
        }
        let name = self.field_text(left, "property");
        let owner: Vec<String> = left
            .child_by_field_name("object")
            .map(|object| {
                let text = self.text(object);
                let text = text.strip_suffix(".prototype").unwrap_or(&text).to_string();
                text.rsplit('.').next().unwrap_or(&text).to_string()
            })
            .into_iter()
            .collect();
        self.add(found, name, &owner);
    }

    fn js_bases(&self, node: Node<'_>, class: &str, found: &mut FileDefs) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if matches!(
                child.kind(),
                "class_heritage" | "extends_type_clause" | "extends_clause" | "implements_clause"
            ) {
                let text = self.text(child);
                for word in IDENTIFIER.find_iter(&text) {
                    if !matches!(word.as_str(), "extends" | "implements") {
                        found
                            .bases
                            .push((class.to_string(), word.as_str().to_string()));
                    }
                }
            }
        }
    }

    // ---- Go ----

    fn go(&self, node: Node<'_>, context: &Context, found: &mut FileDefs) {
        match node.kind() {
            "function_declaration" | "type_spec" | "type_alias" => {
                self.add(found, self.field_text(node, "name"), &[]);
            }
            "method_declaration" => {
                let receiver: Vec<String> = node
                    .child_by_field_name("receiver")
                    .and_then(|r| self.go_receiver_type(r))
                    .into_iter()
                    .collect();
                self.add(found, self.field_text(node, "name"), &receiver);
            }
            "const_spec" | "var_spec" if !context.in_function => {
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    self.add(found, Some(self.text(name)), &[]);
                }
            }
            "field_declaration" | "method_elem" => {
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    self.add(found, Some(self.text(name)), &context.owners);
                }
            }
            "import_declaration" => self.add_imports(node, found),
            _ => {}
        }
    }

    /// `B` for the receiver `(b *B)`, `(B)` or `(b B[T])`.
    fn go_receiver_type(&self, receiver: Node<'_>) -> Option<String> {
        let text = self.text(receiver);
        let inside = text.trim_start_matches('(').trim_end_matches(')');
        let ty = inside.split_whitespace().next_back()?;
        let ty = ty.trim_start_matches('*');
        let ty = ty.split('[').next().unwrap_or(ty);
        (!ty.is_empty()).then(|| ty.to_string())
    }
}

fn is_js_function(kind: &str) -> bool {
    matches!(
        kind,
        "function_declaration"
            | "generator_function_declaration"
            | "function_expression"
            | "function"
            | "arrow_function"
            | "method_definition"
            | "generator_function"
    )
}

#[cfg(test)]
mod tests;
