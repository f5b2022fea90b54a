//! Go rules, as the original applies them:
//!
//! - top-level `func` declarations are functions: `name(params)`, without
//!   results. Methods (functions with a receiver) are not listed;
//! - each `type` declaration is one class with no methods, named after its
//!   first type spec. A grouped `type ( A ...; B ... )` therefore lists only
//!   `A`, and a declaration with no plain spec (an alias, `type A = B`) is
//!   named by its first 60 characters of text;
//! - `import` declarations, single or grouped, are imports.

use tree_sitter::Node;

use super::{Outline, first_child_of_kind, name_or_text, text_of};

pub(super) fn visit(node: Node<'_>, source: &[u8], outline: &mut Outline) {
    match node.kind() {
        "function_declaration" if outline.wants_function() => {
            let name = text_of(first_child_of_kind(node, &["identifier"]), source);
            let params = text_of(first_child_of_kind(node, &["parameter_list"]), source);
            outline.add_function(format!("{name}{params}"));
        }
        "type_declaration" if outline.wants_class() => {
            let spec_name = first_child_of_kind(node, &["type_spec"])
                .and_then(|spec| first_child_of_kind(spec, &["type_identifier"]));
            let name = text_of(spec_name, source);
            outline.add_class(name_or_text(name, node, source), Vec::new());
        }
        "import_declaration" => outline.add_import(node, source),
        _ => {}
    }
}
