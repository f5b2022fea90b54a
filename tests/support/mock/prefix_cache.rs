//! A deterministic stand-in for the API's prompt cache, so usage (and so
//! cost) behaves under the mock as it does for real.
//!
//! The prompt is a sequence of segments in the API's prefix order: each tool
//! definition, each system block, then each content block of each message (a
//! string content counts as one text block, so both spellings hit the same
//! entries). A segment costs `ceil(bytes / 4)` tokens of its JSON without
//! `cache_control`.
//!
//! For a request with breakpoints (segments carrying `cache_control`):
//! - the read is the longest prefix, ending at most [`LOOKBACK`] segments
//!   before any breakpoint, that an earlier request wrote;
//! - the write runs from there to the last breakpoint;
//! - every breakpoint's prefix is then stored;
//! - `input_tokens` is everything not read or written.
//!
//! Prefixes shorter than the minimum cacheable length are neither written
//! nor read, as with the real API. Entries never expire.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use luminos::ai::api::Usage;
use serde_json::Value;

/// How many segments before a breakpoint the cache looks for an earlier
/// entry (the API documents about 20 blocks).
pub const LOOKBACK: usize = 20;

/// The smallest prefix the API caches on Sonnet-class models, in tokens.
pub const DEFAULT_MIN_CACHEABLE_TOKENS: u64 = 1024;

#[derive(Debug)]
pub struct PrefixCache {
    entries: HashSet<u64>,
    pub min_tokens: u64,
}

impl Default for PrefixCache {
    fn default() -> Self {
        PrefixCache {
            entries: HashSet::new(),
            min_tokens: DEFAULT_MIN_CACHEABLE_TOKENS,
        }
    }
}

struct Segment {
    tokens: u64,
    breakpoint: bool,
    /// Hash of the prefix ending with this segment.
    prefix_hash: u64,
}

impl PrefixCache {
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The input usage of `body` (output tokens left at 0), updating the
    /// cache as the API would.
    pub fn process(&mut self, body: &Value) -> Usage {
        let segments = segments(body);
        let mut prefix_tokens = Vec::with_capacity(segments.len() + 1);
        prefix_tokens.push(0u64);
        for s in &segments {
            prefix_tokens.push(prefix_tokens.last().unwrap() + s.tokens);
        }
        let total = *prefix_tokens.last().unwrap();
        // `end` = number of segments in the prefix.
        let cacheable = |end: usize| prefix_tokens[end] >= self.min_tokens;
        let breakpoints: Vec<usize> = segments
            .iter()
            .enumerate()
            .filter(|(_, s)| s.breakpoint)
            .map(|(i, _)| i + 1)
            .filter(|&end| cacheable(end))
            .collect();

        let mut read_end = 0;
        for &bp in &breakpoints {
            for end in bp.saturating_sub(LOOKBACK).max(1)..=bp {
                if end > read_end
                    && cacheable(end)
                    && self.entries.contains(&segments[end - 1].prefix_hash)
                {
                    read_end = end;
                }
            }
        }
        let write_end = breakpoints.last().copied().unwrap_or(0).max(read_end);
        for &bp in &breakpoints {
            self.entries.insert(segments[bp - 1].prefix_hash);
        }
        let read = prefix_tokens[read_end];
        let written = prefix_tokens[write_end] - read;
        Usage {
            input_tokens: total - read - written,
            output_tokens: 0,
            cache_creation_input_tokens: written,
            cache_read_input_tokens: read,
        }
    }
}

/// The whole prompt of `body` in tokens, as [`PrefixCache::process`] counts
/// them (cached or not).
pub fn prompt_tokens(body: &Value) -> u64 {
    segments(body).iter().map(|s| s.tokens).sum()
}

/// Rough token count of a text: a token per four bytes, at least one for
/// anything non-empty.
pub fn tokens_of(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

fn segments(body: &Value) -> Vec<Segment> {
    let mut raw: Vec<(String, bool)> = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        raw.push(strip_mark(tool));
    }
    match &body["system"] {
        Value::String(text) => raw.push((format!("system:{text}"), false)),
        Value::Array(blocks) => {
            for block in blocks {
                let (text, mark) = strip_mark(block);
                raw.push((format!("system:{text}"), mark));
            }
        }
        _ => {}
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or("?");
        let blocks = match &message["content"] {
            Value::String(text) => vec![(
                serde_json::json!({"type": "text", "text": text}).to_string(),
                false,
            )],
            Value::Array(blocks) => blocks.iter().map(strip_mark).collect(),
            _ => Vec::new(),
        };
        for (i, (text, mark)) in blocks.into_iter().enumerate() {
            // The role starts a message: the same block under another role
            // is another prompt.
            let text = if i == 0 {
                format!("{role}:{text}")
            } else {
                text
            };
            raw.push((text, mark));
        }
    }
    let mut hasher = DefaultHasher::new();
    raw.into_iter()
        .map(|(text, breakpoint)| {
            text.hash(&mut hasher);
            Segment {
                tokens: tokens_of(&text),
                breakpoint,
                prefix_hash: hasher.finish(),
            }
        })
        .collect()
}

/// The JSON of `value` without its `cache_control`, and whether it had one.
fn strip_mark(value: &Value) -> (String, bool) {
    let mut value = value.clone();
    let mark = value
        .as_object_mut()
        .and_then(|o| o.remove("cache_control"))
        .is_some();
    (value.to_string(), mark)
}
