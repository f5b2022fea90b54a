//! Python rules, as the original applies them:
//!
//! - every `function_definition` anywhere is a function, methods and nested
//!   functions included: `name(params)`, plus ` -> T` when annotated;
//! - a `class_definition` is a class; its methods are the
//!   `function_definition`s directly in its body (a decorated method sits
//!   inside a `decorated_definition` and is therefore not listed as a method,
//!   though it still appears among the functions);
//! - `import` and `from ... import` statements are imports;
//! - any expression statement whose first child is a string literal (a
//!   module, class or function docstring, or any other bare string
//!   statement, wherever it is) sets `has_docstrings`.

use tree_sitter::Node;

use super::{Outline, first_child_of_kind, text, text_of};

pub(super) fn visit(node: Node<'_>, source: &[u8], outline: &mut Outline) {
    match node.kind() {
        "function_definition" if outline.wants_function() => {
            outline.add_function(signature(node, source));
        }
        "class_definition" if outline.wants_class() => {
            let name = text_of(first_child_of_kind(node, &["identifier"]), source);
            outline.add_class(name, methods(node, source));
        }
        "import_statement" | "import_from_statement" => outline.add_import(node, source),
        "expression_statement" if starts_with_string(node) => outline.has_docstrings = true,
        _ => {}
    }
}

fn starts_with_string(statement: Node<'_>) -> bool {
    statement
        .child(0)
        .is_some_and(|first| first.kind() == "string")
}

/// `name(params)` or `name(params) -> T`.
fn signature(function: Node<'_>, source: &[u8]) -> String {
    let name = text_of(first_child_of_kind(function, &["identifier"]), source);
    let params = text_of(first_child_of_kind(function, &["parameters"]), source);
    match first_child_of_kind(function, &["type"]) {
        Some(returns) => format!("{name}{params} -> {}", text(returns, source)),
        None => format!("{name}{params}"),
    }
}

fn methods(class: Node<'_>, source: &[u8]) -> Vec<String> {
    let Some(body) = first_child_of_kind(class, &["block"]) else {
        return Vec::new();
    };
    let mut cursor = body.walk();
    body.named_children(&mut cursor)
        .filter(|child| child.kind() == "function_definition")
        .take(super::MAX_METHODS)
        .map(|method| signature(method, source))
        .collect()
}
