//! Lenient readers of what the model hands a submit tool: a missing or
//! mistyped field becomes empty (or `None`) instead of an error, because a
//! pass must go on with what it got. The schemas say what is asked for
//! (`schema.rs`); these say how an answer that strays from them is read.

use serde_json::Value;

/// A string field, or empty when missing or not a string.
pub(crate) fn string_field(input: &Value, key: &str) -> String {
    input
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

pub(crate) fn string_list(input: &Value, key: &str) -> Vec<String> {
    input
        .get(key)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// A number (or numeric string) clamped to [0, 1]; `None` when unreadable.
pub(crate) fn unit_interval(value: Option<&Value>) -> Option<f64> {
    let number = match value? {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        Value::Null => 0.0,
        _ => return None,
    };
    number.is_finite().then(|| number.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strays_from_the_schema_read_as_empty() {
        let input = json!({"s": "text", "n": 3, "list": ["a", 2, "b"], "not_list": "a"});
        assert_eq!(string_field(&input, "s"), "text");
        assert_eq!(string_field(&input, "n"), "");
        assert_eq!(string_field(&input, "missing"), "");
        assert_eq!(string_list(&input, "list"), ["a", "b"]);
        assert!(string_list(&input, "not_list").is_empty());
    }

    #[test]
    fn unit_interval_clamps_numbers_and_numeric_strings() {
        for (value, expected) in [
            (json!(0.5), Some(0.5)),
            (json!(7), Some(1.0)),
            (json!(-2), Some(0.0)),
            (json!(" 0.25 "), Some(0.25)),
            (json!(null), Some(0.0)),
            (json!("high"), None),
            (json!([1]), None),
        ] {
            assert_eq!(unit_interval(Some(&value)), expected, "{value}");
        }
        assert_eq!(unit_interval(None), None);
    }
}
