//! The pieces the tools' input schemas are made of (JSON Schema), so each
//! tool writes its schema as one list of properties and the required ones.
//!
//! Key order is kept as written (serde_json's `preserve_order`): the schemas
//! are part of every request's cached prefix, and the same tools must give
//! the same bytes run after run.

use serde_json::{Map, Value, json};

/// An object with `properties`, in order, of which `required` must be given.
pub(crate) fn object<const N: usize>(properties: [(&str, Value); N], required: &[&str]) -> Value {
    let properties: Map<String, Value> = properties
        .into_iter()
        .map(|(name, schema)| (name.to_string(), schema))
        .collect();
    json!({"type": "object", "properties": properties, "required": required})
}

/// A value of JSON type `kind` (`string`, `integer`, `number`, `boolean`,
/// `object`) with a description.
pub(crate) fn typed(kind: &str, description: &str) -> Value {
    json!({"type": kind, "description": description})
}

/// A value of JSON type `kind` whose name says what it holds.
pub(crate) fn bare(kind: &str) -> Value {
    json!({ "type": kind })
}

/// A string property with a description.
pub(crate) fn text(description: &str) -> Value {
    typed("string", description)
}

/// A list of `items` with a description.
pub(crate) fn list_of(items: Value, description: &str) -> Value {
    json!({"type": "array", "items": items, "description": description})
}

/// A list of strings with a description.
pub(crate) fn list_of_text(description: &str) -> Value {
    list_of(json!({"type": "string"}), description)
}

#[cfg(test)]
mod tests {
    use crate::ai::tools::{Toolbox, definitions};

    /// Every toolbox's tool definitions, as the model gets them: the
    /// schemas are part of every request's cached prefix, so their bytes
    /// (key order included) must not drift.
    #[test]
    fn every_toolboxs_definitions_are_pinned() {
        for toolbox in [
            Toolbox::Dir,
            Toolbox::Survey,
            Toolbox::Planning,
            Toolbox::Synthesis,
            Toolbox::Ask,
            Toolbox::Refine,
        ] {
            let json = serde_json::to_string_pretty(&definitions(toolbox)).unwrap();
            insta::assert_snapshot!(format!("definitions_{toolbox:?}"), json);
        }
    }
}
