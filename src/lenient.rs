//! Reading what a model or an earlier luminos wrote, leniently: serde field
//! readers (for `deserialize_with`) that take a value of the wrong type as
//! the field's default instead of failing the whole document. A model fills
//! a tool's input as it sees fit, and a cache outlives the luminos that
//! wrote it, so one odd field must never cost the rest.
//!
//! Each reader says what it accepts; everything else reads as the default
//! (empty, none, zero, false). Its edges: shapes only; what a field means
//! is its document's business.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A string; anything else reads as empty.
pub(crate) fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(text) => text,
        _ => String::new(),
    })
}

/// A string, or nothing.
pub(crate) fn some_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(text) => Some(text),
        _ => None,
    })
}

/// The strings of a list (other items left out); anything else reads as
/// none.
pub(crate) fn texts<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(items) => items
            .into_iter()
            .filter_map(|item| match item {
                Value::String(text) => Some(text),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    })
}

/// A whole number of at least 0 (a float is cut, a numeric string read);
/// anything else reads as 0.
pub(crate) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .unwrap_or(0),
        Value::String(s) => s.trim().parse().unwrap_or(0),
        _ => 0,
    })
}

/// A number from 0 to 1 (clamped; a numeric string read); anything else,
/// nothing.
pub(crate) fn fraction<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let number = match Value::deserialize(d)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    Ok(number.filter(|n| n.is_finite()).map(|n| n.clamp(0.0, 1.0)))
}

/// [`fraction`], where `null` reads as 0 (a rating given as nothing).
pub(crate) fn fraction_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(Some(0.0)),
        other => fraction(other).map_err(serde::de::Error::custom),
    }
}

/// A number from 0 to 1 as [`fraction_or_null`] reads it, 0 when
/// unreadable.
pub(crate) fn rating<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(fraction_or_null(d)?.unwrap_or(0.0))
}

/// `true`; anything else reads as false.
pub(crate) fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Value::deserialize(d)? == Value::Bool(true))
}

/// The items of a list that read as `T` (the others left out); anything
/// but a list reads as none.
pub(crate) fn items<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(items) => items
            .into_iter()
            .filter_map(|item| serde_json::from_value(item).ok())
            .collect(),
        _ => Vec::new(),
    })
}

/// The entries of an object whose values read as `T` (the others left
/// out), by key; anything but an object reads as none.
pub(crate) fn values<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<std::collections::BTreeMap<String, T>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Object(entries) => entries
            .into_iter()
            .filter_map(|(key, value)| Some((key, serde_json::from_value(value).ok()?)))
            .collect(),
        _ => Default::default(),
    })
}

/// A `T`, or nothing when the value does not read as one.
pub(crate) fn some<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(d)?).ok())
}

/// A `T`, or its default when the value does not read as one.
pub(crate) fn or_default<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(
    d: D,
) -> Result<T, D::Error> {
    Ok(some(d)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Default, Deserialize, PartialEq)]
    struct Sample {
        #[serde(default, deserialize_with = "super::text")]
        text: String,
        #[serde(default, deserialize_with = "super::texts")]
        texts: Vec<String>,
        #[serde(default, deserialize_with = "super::count")]
        count: u64,
        #[serde(default, deserialize_with = "super::fraction")]
        fraction: Option<f64>,
        #[serde(default, deserialize_with = "super::fraction_or_null")]
        rating: Option<f64>,
        #[serde(default, deserialize_with = "super::flag")]
        flag: bool,
        #[serde(default, deserialize_with = "super::items")]
        pairs: Vec<(u8, u8)>,
    }

    fn read(value: serde_json::Value) -> Sample {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_field_of_the_wrong_type_reads_as_its_default() {
        assert_eq!(
            read(
                json!({"text": 3, "texts": "a", "count": "x", "fraction": "high",
                        "flag": "yes", "pairs": {}})
            ),
            Sample::default()
        );
        let sample = read(json!({"text": "t", "texts": ["a", 1, "b"], "count": "7",
                                 "fraction": 1.5, "rating": null, "flag": true,
                                 "pairs": [[1, 2], "x", [3, 4]]}));
        assert_eq!(
            sample,
            Sample {
                text: "t".into(),
                texts: vec!["a".into(), "b".into()],
                count: 7,
                fraction: Some(1.0),
                rating: Some(0.0),
                flag: true,
                pairs: vec![(1, 2), (3, 4)],
            }
        );
        assert_eq!(
            read(json!({"fraction": " 0.25 ", "count": 2.9})).fraction,
            Some(0.25)
        );
        assert_eq!(read(json!({"count": 2.9})).count, 2);
    }
}
