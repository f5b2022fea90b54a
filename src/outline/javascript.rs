//! JavaScript rules (the original's), and the TypeScript/TSX additions
//! (ours: the original promised TypeScript but never wired a grammar).
//!
//! JavaScript, as the original intends it:
//! - function declarations, function expressions, generator functions
//!   (`function*`, declared or as expressions) and arrow functions are
//!   functions: `name(params)`, or `(anonymous)(params)` when unnamed. Arrow
//!   functions are always anonymous; a bare `x => ...` parameter is shown
//!   as `(x)`. Methods are not listed as functions;
//! - `class` declarations are classes; their methods are the method
//!   definitions directly in the class body, `name(params)` (getters, setters
//!   and statics alike, with the modifier dropped);
//! - `import` statements are imports (`require()` calls are not).
//!
//! Where today's grammar differs from the one the original was written
//! against, we keep what it meant to list:
//! - the anonymous function expression node is now `function_expression`
//!   (it was `function`). The original matched kinds by string, so with
//!   either grammar it also matched the `function` keyword token and listed
//!   a bare `(anonymous)` for every `function` keyword; only named nodes
//!   count here. That keyword is how the original lists generators (which it
//!   has no rule for) and anonymous function expressions under today's
//!   grammar, so each of those is one entry here too, with its name (when it
//!   has one) and parameters;
//! - it took a function's name to be its first identifier child, which for
//!   an arrow function is a bare parameter or an identifier body
//!   (`(p, q) => p` became `p(p, q)`); arrows are anonymous here;
//! - method names come from the grammar's `name` field, so `#private()` and
//!   `[computed]()` methods keep their names (the original printed `()`).
//!
//! TypeScript and TSX add, on top of the above:
//! - `function` overloads and ambient declarations (`declare function`) are
//!   functions too, and every signature carries its return type annotation
//!   as written: `parse(input: string): Ast`;
//! - `abstract class` is a class; abstract methods and method overload
//!   signatures in a class body are methods;
//! - `interface` declarations are classes whose methods are their method
//!   signatures (properties, call and construct signatures are not listed);
//! - `type` aliases and `enum`s are classes with no methods, like Rust's
//!   structs and enums;
//! - `import ... = require(...)` and `import type` are imports (both are
//!   import statements in the grammar).

use tree_sitter::Node;

use super::{Outline, text_of};

/// Shown in place of a name for functions that have none.
const ANONYMOUS: &str = "(anonymous)";

pub(super) fn visit(node: Node<'_>, source: &[u8], outline: &mut Outline) {
    match node.kind() {
        "function_declaration"
        | "function_expression"
        | "generator_function_declaration"
        | "generator_function"
        | "function_signature"
            if outline.wants_function() =>
        {
            outline.add_function(signature(node, source));
        }
        "arrow_function" if outline.wants_function() => {
            outline.add_function(arrow_signature(node, source));
        }
        "class_declaration" | "abstract_class_declaration" if outline.wants_class() => {
            let methods = members(node, source, CLASS_METHOD_KINDS);
            outline.add_class(name(node, source), methods);
        }
        "interface_declaration" if outline.wants_class() => {
            let methods = members(node, source, &["method_signature"]);
            outline.add_class(name(node, source), methods);
        }
        "type_alias_declaration" | "enum_declaration" if outline.wants_class() => {
            outline.add_class(name(node, source), Vec::new());
        }
        "import_statement" => outline.add_import(node, source),
        _ => {}
    }
}

/// Class body members listed as methods. Only `method_definition` exists in
/// JavaScript; the signatures are TypeScript's.
const CLASS_METHOD_KINDS: &[&str] = &[
    "method_definition",
    "method_signature",
    "abstract_method_signature",
];

fn name(node: Node<'_>, source: &[u8]) -> String {
    text_of(node.child_by_field_name("name"), source)
}

/// `name(params)`, `(anonymous)(params)`, with `: T` when annotated.
fn signature(node: Node<'_>, source: &[u8]) -> String {
    let name = name(node, source);
    let name = if name.is_empty() { ANONYMOUS } else { &name };
    format!("{name}{}", parameters_and_return(node, source))
}

fn arrow_signature(node: Node<'_>, source: &[u8]) -> String {
    let tail = match node.child_by_field_name("parameter") {
        Some(single) => format!("({})", text_of(Some(single), source)),
        None => parameters_and_return(node, source),
    };
    format!("{ANONYMOUS}{tail}")
}

fn parameters_and_return(node: Node<'_>, source: &[u8]) -> String {
    let params = text_of(node.child_by_field_name("parameters"), source);
    let returns = text_of(node.child_by_field_name("return_type"), source);
    format!("{params}{returns}")
}

/// The signatures of the `kinds` members directly in a declaration's body.
fn members(declaration: Node<'_>, source: &[u8], kinds: &[&str]) -> Vec<String> {
    let Some(body) = declaration.child_by_field_name("body") else {
        return Vec::new();
    };
    let mut cursor = body.walk();
    body.named_children(&mut cursor)
        .filter(|member| kinds.contains(&member.kind()))
        .take(super::MAX_METHODS)
        .map(|member| {
            format!(
                "{}{}",
                name(member, source),
                parameters_and_return(member, source)
            )
        })
        .collect()
}
