//! Reading what a finished `luminos` wrote: its stdout and stderr as text,
//! the JSON report's keys, and the success check every runner shares.

use std::process::Output;

use serde_json::Value;

/// The base scan's report keys, in the order the report writes them (the
/// original's JSON references).
pub const SCAN_KEYS: [&str; 12] = [
    "tree",
    "tree_rendered",
    "file_categories",
    "classified_files",
    "survey_signals",
    "languages",
    "lines_of_code",
    "large_files",
    "recent_files",
    "disk_usage",
    "top_directories",
    "ignore",
];

/// The keys a run with the AI passes adds after [`SCAN_KEYS`].
pub const AI_KEYS: [&str; 5] = [
    "ai_brief",
    "ai_detailed",
    "flags",
    "ai_sections",
    "directories",
];

/// `text` with every run of whitespace (line breaks and indentation
/// included) made one space: what the terminal report says, whatever
/// width it was wrapped to.
pub fn squashed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Stdout as text; the report must be UTF-8, so anything else fails.
pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// Stderr as text (progress may quote odd names: invalid bytes are shown,
/// not fatal).
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The keys of a JSON object, in order.
pub fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .expect("a JSON object")
        .keys()
        .map(String::as_str)
        .collect()
}

/// `output`, after insisting that `what` succeeded (showing its stderr when
/// it did not).
pub fn assert_success(output: Output, what: &str) -> Output {
    assert!(
        output.status.success(),
        "{what} failed: {}\n{}",
        output.status,
        stderr(&output)
    );
    output
}

/// The string `field` of every object in the JSON array `list`.
pub fn fields<'a>(list: &'a Value, field: &str) -> Vec<&'a str> {
    list.as_array()
        .expect("a JSON array")
        .iter()
        .map(|item| item[field].as_str().expect("a string field"))
        .collect()
}

/// The string fields `first` and `second` of every object in the JSON array
/// `list`, as pairs.
pub fn field_pairs<'a>(list: &'a Value, first: &str, second: &str) -> Vec<(&'a str, &'a str)> {
    fields(list, first)
        .into_iter()
        .zip(fields(list, second))
        .collect()
}

/// The values of `keys` in every object of the JSON array `list`, one JSON
/// array per object (a missing key reads `null`): a table to compare whole.
pub fn rows(list: &Value, keys: &[&str]) -> Vec<Value> {
    list.as_array()
        .expect("a JSON array")
        .iter()
        .map(|item| keys.iter().map(|key| item[*key].clone()).collect())
        .collect()
}

/// The error of the investigation that the JSON `report` says failed.
#[track_caller]
pub fn failed_error(report: &Value) -> &str {
    let investigation = &report["investigation"];
    assert_eq!(investigation["status"], "failed", "{investigation}");
    investigation["error"]
        .as_str()
        .expect("a failed investigation says why")
}

/// `part` is in `text` (a report or a stream); if not, both are shown.
#[track_caller]
pub fn assert_contains(text: &str, part: &str) {
    assert!(text.contains(part), "missing {part:?} in:\n{text}");
}

/// Every one of `parts` is in `text` (a report or a stream), each missing
/// one named.
#[track_caller]
pub fn assert_contains_all(text: &str, parts: &[&str]) {
    for part in parts {
        assert_contains(text, part);
    }
}

/// The lines of `text` that `keep` accepts.
pub fn lines_where(text: &str, keep: impl Fn(&str) -> bool) -> Vec<&str> {
    text.lines().filter(|line| keep(line)).collect()
}

/// The object of the JSON array `list` whose `field` is `value`.
#[track_caller]
pub fn item_where<'a>(list: &'a Value, field: &str, value: &str) -> &'a Value {
    let items = list.as_array().expect("a JSON array");
    let found = items.iter().find(|item| item[field] == value);
    found.unwrap_or_else(|| panic!("no item with {field} {value:?} in {list}"))
}

/// Every string in a JSON value (keys too), one per line: the text as the
/// API decodes it, escapes undone.
pub fn json_strings(value: &Value) -> String {
    fn walk(value: &Value, out: &mut String) {
        match value {
            Value::String(text) => {
                out.push_str(text);
                out.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => {
                for (key, v) in map {
                    out.push_str(key);
                    out.push('\n');
                    walk(v, out);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    let mut out = String::new();
    walk(value, &mut out);
    out
}
