//! Rust rules, as the original applies them:
//!
//! - every `fn` with a body (`function_item`), free or in an `impl`/`mod`, is
//!   a function: `name(params)`, plus ` -> T` only when the return type is a
//!   plain, generic, reference or path type (so `-> bool`, `-> ()` and
//!   `-> impl Trait` are not shown);
//! - `struct`, `enum` and `impl` blocks are listed as classes with no
//!   methods. The name is the first type name directly inside the item —
//!   for `impl Trait for Type` that is the trait — and when there is none
//!   (`impl<T> Foo<T>`) the first 60 characters of the item's text;
//! - `use` declarations are imports.
//!
//! Traits, `fn` signatures without bodies, macros and `mod` are not listed.

use tree_sitter::Node;

use super::{Outline, first_child_of_kind, name_or_text, text, text_of};

/// Return types worth showing after ` -> `.
const SHOWN_RETURN_KINDS: &[&str] = &[
    "type_identifier",
    "generic_type",
    "reference_type",
    "scoped_type_identifier",
];

pub(super) fn visit(node: Node<'_>, source: &[u8], outline: &mut Outline) {
    match node.kind() {
        "function_item" if outline.wants_function() => {
            outline.add_function(signature(node, source));
        }
        "struct_item" | "enum_item" | "impl_item" if outline.wants_class() => {
            let name = text_of(first_child_of_kind(node, &["type_identifier"]), source);
            outline.add_class(name_or_text(name, node, source), Vec::new());
        }
        "use_declaration" => outline.add_import(node, source),
        _ => {}
    }
}

fn signature(function: Node<'_>, source: &[u8]) -> String {
    let name = text_of(first_child_of_kind(function, &["identifier"]), source);
    let params = text_of(first_child_of_kind(function, &["parameters"]), source);
    match first_child_of_kind(function, SHOWN_RETURN_KINDS) {
        Some(returns) => format!("{name}{params} -> {}", text(returns, source)),
        None => format!("{name}{params}"),
    }
}
