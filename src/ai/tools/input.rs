//! The argument types the tools' inputs are made of. Each reads any JSON
//! and keeps what came: the registry reads a whole input at once
//! ([`super::handle`]), and each handler then checks its arguments in its
//! own order, with the error line the model has always seen for each.
//! Its edges: shapes only (a handler's own arguments, such as `max_bytes`
//! or `cache_type`, have their types beside it).

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::ToolOutput;

/// A string argument, as given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Text {
    /// Absent or null.
    #[default]
    Missing,
    /// A string.
    Given(String),
    /// Anything else.
    Wrong,
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Null => Text::Missing,
            Value::String(text) => Text::Given(text),
            _ => Text::Wrong,
        })
    }
}

impl Text {
    /// The argument `name`: `Ok(None)` when absent or null, an error
    /// result when it is not a string.
    pub(crate) fn optional(&self, name: &str) -> Result<Option<&str>, ToolOutput> {
        match self {
            Text::Missing => Ok(None),
            Text::Given(text) => Ok(Some(text)),
            Text::Wrong => Err(ToolOutput::error(format!(
                "Error: '{name}' must be a string."
            ))),
        }
    }

    /// The argument `name`, which must be present and non-empty.
    pub(crate) fn required(&self, name: &str) -> Result<&str, ToolOutput> {
        match self.optional(name)? {
            Some(text) if !text.is_empty() => Ok(text),
            _ => Err(ToolOutput::error(format!(
                "Error: the '{name}' argument is required."
            ))),
        }
    }

    /// The string, when it is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Text::Given(text) => Some(text),
            Text::Missing | Text::Wrong => None,
        }
    }
}

/// A boolean argument: `true`/`false`, or those words as a string in any
/// case; false when absent or null.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Switch(Option<bool>);

impl<'de> Deserialize<'de> for Switch {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Switch(match Value::deserialize(d)? {
            Value::Null => Some(false),
            Value::Bool(flag) => Some(flag),
            Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
            Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
            _ => None,
        }))
    }
}

impl Default for Switch {
    fn default() -> Self {
        Switch(Some(false))
    }
}

impl Switch {
    /// The argument `name`, or the error result when it is not a boolean.
    pub(crate) fn value(self, name: &str) -> Result<bool, ToolOutput> {
        self.0
            .ok_or_else(|| ToolOutput::error(format!("Error: {name} must be true or false.")))
    }
}
