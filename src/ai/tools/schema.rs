//! The tools' input schemas (JSON Schema) as a small typed value: each
//! tool writes its schema as one list of properties and the required ones,
//! and nothing but [`Schema`]'s `Serialize` turns it into JSON (once, where
//! the definition goes on the wire: [`super::ToolSpec::input_schema`]).
//!
//! Key order is the order written: the schemas are part of every request's
//! cached prefix, and the same tools must give the same bytes run after
//! run (pinned by the snapshots of every toolbox's definitions below).

use serde::ser::{Serialize, SerializeMap, Serializer};

/// A JSON type a property may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonType {
    String,
    Integer,
    Number,
    Boolean,
    Object,
}

impl JsonType {
    fn as_str(self) -> &'static str {
        match self {
            JsonType::String => "string",
            JsonType::Integer => "integer",
            JsonType::Number => "number",
            JsonType::Boolean => "boolean",
            JsonType::Object => "object",
        }
    }
}

/// One schema: a tool's whole input, or one of its properties.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Schema {
    /// An object with `properties`, in order, of which `required` must be
    /// given.
    Object {
        properties: Vec<(&'static str, Schema)>,
        required: Vec<&'static str>,
    },
    /// A value of one JSON type, described unless its name says it all.
    Typed {
        kind: JsonType,
        description: Option<&'static str>,
    },
    /// One of a few strings.
    OneOf {
        values: &'static [&'static str],
        description: Option<&'static str>,
    },
    /// A list of `items`.
    List {
        items: Box<Schema>,
        description: &'static str,
    },
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self {
            Schema::Object {
                properties,
                required,
            } => {
                map.serialize_entry("type", JsonType::Object.as_str())?;
                map.serialize_entry("properties", &Properties(properties))?;
                map.serialize_entry("required", required)?;
            }
            Schema::Typed { kind, description } => {
                map.serialize_entry("type", kind.as_str())?;
                if let Some(description) = description {
                    map.serialize_entry("description", description)?;
                }
            }
            Schema::OneOf {
                values,
                description,
            } => {
                map.serialize_entry("type", JsonType::String.as_str())?;
                map.serialize_entry("enum", values)?;
                if let Some(description) = description {
                    map.serialize_entry("description", description)?;
                }
            }
            Schema::List { items, description } => {
                map.serialize_entry("type", "array")?;
                map.serialize_entry("items", items)?;
                map.serialize_entry("description", description)?;
            }
        }
        map.end()
    }
}

/// An object's properties: a JSON object keyed by name, in order.
struct Properties<'a>(&'a [(&'static str, Schema)]);

impl Serialize for Properties<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, schema) in self.0 {
            map.serialize_entry(name, schema)?;
        }
        map.end()
    }
}

/// An object with `properties`, in order, of which `required` must be given.
pub(crate) fn object(
    properties: impl IntoIterator<Item = (&'static str, Schema)>,
    required: &[&'static str],
) -> Schema {
    Schema::Object {
        properties: properties.into_iter().collect(),
        required: required.to_vec(),
    }
}

/// A value of JSON type `kind` with a description.
pub(crate) fn typed(kind: JsonType, description: &'static str) -> Schema {
    Schema::Typed {
        kind,
        description: Some(description),
    }
}

/// A value of JSON type `kind` whose name says what it holds.
pub(crate) fn bare(kind: JsonType) -> Schema {
    Schema::Typed {
        kind,
        description: None,
    }
}

/// A string property with a description.
pub(crate) fn text(description: &'static str) -> Schema {
    typed(JsonType::String, description)
}

/// One of `values`, described unless the name says it all.
pub(crate) fn one_of(values: &'static [&'static str], description: Option<&'static str>) -> Schema {
    Schema::OneOf {
        values,
        description,
    }
}

/// A list of `items` with a description.
pub(crate) fn list_of(items: Schema, description: &'static str) -> Schema {
    Schema::List {
        items: Box::new(items),
        description,
    }
}

/// A list of strings with a description.
pub(crate) fn list_of_text(description: &'static str) -> Schema {
    list_of(bare(JsonType::String), description)
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
