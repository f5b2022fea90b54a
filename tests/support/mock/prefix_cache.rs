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
//!   before any breakpoint, that an earlier request wrote and that has not
//!   expired; reading it starts its lifetime over;
//! - the write runs from there to the last breakpoint;
//! - every breakpoint's prefix is then stored, living as long as its
//!   breakpoint's `ttl` says;
//! - `input_tokens` is everything not read or written.
//!
//! Prefixes shorter than the minimum cacheable length are neither written
//! nor read, as with the real API.
//!
//! **Lifetimes** follow the prompt caching page (read 2026-11-27,
//! <https://platform.claude.com/docs/en/build-with-claude/prompt-caching>):
//! an entry lives 5 minutes (`{"type": "ephemeral"}`, or `"ttl": "5m"`) or
//! an hour (`"ttl": "1h"`) after it was last written or read. The write is
//! billed by lifetime as the page describes for mixed lifetimes: from the
//! read (A) to the last 1-hour breakpoint (B) at the 1-hour rate, from
//! there to the last breakpoint (C) at the 5-minute rate
//! ([`Simulated::written_1h`]). Time is the mock's [`CacheClock`], which a
//! test can run faster than the wall clock, move on by hand, or let each
//! batch move on by the time a batch takes (so that a round that takes a
//! few milliseconds stands for ten minutes, however long the client itself
//! takes between rounds).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};
use std::io::Write;
use std::time::{Duration, Instant};

use luminos::ai::api::Usage;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

/// How many segments before a breakpoint the cache looks for an earlier
/// entry (the API documents about 20 blocks).
pub const LOOKBACK: usize = 20;

/// The smallest prefix the API caches on Sonnet-class models, in tokens.
pub const DEFAULT_MIN_CACHEABLE_TOKENS: u64 = 1024;

/// The default lifetime of a cached prefix.
pub const FIVE_MINUTES: Duration = Duration::from_secs(5 * 60);
/// The lifetime `"ttl": "1h"` asks for.
pub const ONE_HOUR: Duration = Duration::from_secs(60 * 60);

/// The lifetime a `cache_control` mark asks for: `None` when it asks for
/// one the API does not offer (the rules refuse such a request).
pub fn ttl_of(mark: &Value) -> Option<Duration> {
    match mark.get("ttl") {
        None | Some(Value::Null) => Some(FIVE_MINUTES),
        Some(Value::String(ttl)) if ttl == "5m" => Some(FIVE_MINUTES),
        Some(Value::String(ttl)) if ttl == "1h" => Some(ONE_HOUR),
        Some(_) => None,
    }
}

/// The mock's clock for cache lifetimes: the wall clock, times
/// [`CacheClock::speed`], plus whatever a test moved it on by.
#[derive(Debug, Clone, Copy)]
pub struct CacheClock {
    /// The clock's reading at `since`.
    at: Duration,
    since: Instant,
    /// Cache seconds per wall-clock second.
    speed: f64,
}

impl Default for CacheClock {
    fn default() -> Self {
        CacheClock {
            at: Duration::ZERO,
            since: Instant::now(),
            speed: 1.0,
        }
    }
}

impl CacheClock {
    /// The clock's reading now.
    pub fn now(&self) -> Duration {
        self.at + self.since.elapsed().mul_f64(self.speed)
    }

    /// Run `speed` times faster than the wall clock from now on.
    pub fn set_speed(&mut self, speed: f64) {
        assert!(speed.is_finite() && speed > 0.0, "a clock speed of {speed}");
        *self = CacheClock {
            at: self.now(),
            since: Instant::now(),
            speed,
        };
    }

    /// Move the clock on by `by`.
    pub fn advance(&mut self, by: Duration) {
        self.at += by;
    }

    /// Move the clock on to `reading`, if it is not past it already.
    pub fn advance_to(&mut self, reading: Duration) {
        let now = self.now();
        if reading > now {
            self.advance(reading - now);
        }
    }
}

/// A stored prefix.
#[derive(Debug, Clone, Copy)]
struct Entry {
    ttl: Duration,
    expires: Duration,
}

#[derive(Debug)]
pub struct PrefixCache {
    entries: HashMap<u64, Entry>,
    pub min_tokens: u64,
    pub clock: CacheClock,
}

impl Default for PrefixCache {
    fn default() -> Self {
        PrefixCache {
            entries: HashMap::new(),
            min_tokens: DEFAULT_MIN_CACHEABLE_TOKENS,
            clock: CacheClock::default(),
        }
    }
}

/// What the cache made of one request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Simulated {
    /// Its input usage (output left at 0).
    pub usage: Usage,
    /// How much of `usage.cache_creation_input_tokens` was written at the
    /// 1-hour lifetime (`cache_creation.ephemeral_1h_input_tokens`); the
    /// rest at 5 minutes.
    pub written_1h: u64,
}

#[derive(Debug, Clone)]
struct Segment {
    tokens: u64,
    /// The lifetime its `cache_control` asks for, if it has one.
    breakpoint: Option<Duration>,
    /// Hash of the prefix ending with this segment.
    prefix_hash: u64,
}

impl PrefixCache {
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The input usage of `body`, updating the cache as the API would at
    /// the clock's present reading.
    pub fn process(&mut self, prompt: &Prompt) -> Simulated {
        let now = self.clock.now();
        self.entries.retain(|_, entry| entry.expires > now);
        let segments = &prompt.0;
        let mut prefix_tokens = Vec::with_capacity(segments.len() + 1);
        prefix_tokens.push(0u64);
        for s in segments {
            prefix_tokens.push(prefix_tokens.last().unwrap() + s.tokens);
        }
        let total = *prefix_tokens.last().unwrap();
        // `end` = number of segments in the prefix.
        let cacheable = |end: usize| prefix_tokens[end] >= self.min_tokens;
        let breakpoints: Vec<(usize, Duration)> = segments
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.breakpoint.map(|ttl| (i + 1, ttl)))
            .filter(|&(end, _)| cacheable(end))
            .collect();

        let mut read_end = 0;
        for &(bp, _) in &breakpoints {
            for end in bp.saturating_sub(LOOKBACK).max(1)..=bp {
                if end > read_end
                    && cacheable(end)
                    && self.entries.contains_key(&segments[end - 1].prefix_hash)
                {
                    read_end = end;
                }
            }
        }
        if read_end > 0
            && let Some(entry) = self.entries.get_mut(&segments[read_end - 1].prefix_hash)
        {
            entry.expires = now + entry.ttl;
        }
        let write_end = breakpoints.last().map_or(0, |&(end, _)| end).max(read_end);
        // The last 1-hour breakpoint past the read: the 1-hour write ends
        // there, the 5-minute one runs on to the last breakpoint.
        let long_end = breakpoints
            .iter()
            .filter(|&&(end, ttl)| ttl == ONE_HOUR && end > read_end)
            .map(|&(end, _)| end)
            .max()
            .unwrap_or(read_end);
        for &(bp, ttl) in &breakpoints {
            let entry = self
                .entries
                .entry(segments[bp - 1].prefix_hash)
                .or_insert(Entry { ttl, expires: now });
            entry.ttl = entry.ttl.max(ttl);
            entry.expires = entry.expires.max(now + entry.ttl);
        }
        let read = prefix_tokens[read_end];
        let written = prefix_tokens[write_end] - read;
        Simulated {
            usage: Usage {
                input_tokens: total - read - written,
                output_tokens: 0,
                cache_creation_input_tokens: written,
                cache_read_input_tokens: read,
            },
            written_1h: prefix_tokens[long_end] - read,
        }
    }
}

/// The whole prompt of `body` in tokens, as [`PrefixCache::process`] counts
/// them (cached or not).
pub fn prompt_tokens(body: &Value) -> u64 {
    Prompt::of(body).tokens()
}

/// A request's prompt as the cache sees it: its segments, worked out once
/// per request for both the window check and the cache.
#[derive(Debug, Clone)]
pub struct Prompt(Vec<Segment>);

impl Prompt {
    pub fn of(body: &Value) -> Prompt {
        Prompt(segments(body))
    }

    /// Tokens of the whole prompt.
    pub fn tokens(&self) -> u64 {
        self.0.iter().map(|s| s.tokens).sum()
    }
}

/// Rough token count of a text: a token per four bytes, at least one for
/// anything non-empty.
pub fn tokens_of(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

fn segments(body: &Value) -> Vec<Segment> {
    let mut prompt = Segments::default();
    for tool in body["tools"].as_array().into_iter().flatten() {
        prompt.push("", &Unmarked(tool), mark_of(tool));
    }
    match &body["system"] {
        Value::String(text) => prompt.push_text("system:", text),
        Value::Array(blocks) => {
            for block in blocks {
                prompt.push("system:", &Unmarked(block), mark_of(block));
            }
        }
        _ => {}
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        // The role starts a message: the same block under another role is
        // another prompt.
        let role = format!("{}:", message["role"].as_str().unwrap_or("?"));
        match &message["content"] {
            Value::String(text) => {
                let block = serde_json::json!({"type": "text", "text": text});
                prompt.push(&role, &block, None);
            }
            Value::Array(blocks) => {
                for (i, block) in blocks.iter().enumerate() {
                    let prefix = if i == 0 { role.as_str() } else { "" };
                    prompt.push(prefix, &Unmarked(block), mark_of(block));
                }
            }
            _ => {}
        }
    }
    prompt.0
}

/// The segments of a prompt as they are worked out, each hashed onto the
/// prefix before it.
#[derive(Default)]
struct Segments(Vec<Segment>, DefaultHasher);

impl Segments {
    /// A segment whose text is `prefix` and then `value`'s JSON. The JSON is
    /// hashed and counted as it is written, never built: every request
    /// goes over its whole history.
    fn push(&mut self, prefix: &str, value: &impl Serialize, breakpoint: Option<Duration>) {
        let Segments(segments, hasher) = self;
        let mut text = Digest { hasher, bytes: 0 };
        text.write_all(prefix.as_bytes()).unwrap();
        serde_json::to_writer(&mut text, value).unwrap();
        let bytes = text.bytes;
        // As a `str` is hashed: its end is marked.
        hasher.write_u8(0xff);
        segments.push(Segment {
            tokens: (bytes as u64).div_ceil(4),
            breakpoint,
            prefix_hash: hasher.finish(),
        });
    }

    /// A segment of plain text (a system prompt given as a string).
    fn push_text(&mut self, prefix: &str, text: &str) {
        let Segments(segments, hasher) = self;
        hasher.write(prefix.as_bytes());
        hasher.write(text.as_bytes());
        hasher.write_u8(0xff);
        segments.push(Segment {
            tokens: tokens_of(&format!("{prefix}{text}")),
            breakpoint: None,
            prefix_hash: hasher.finish(),
        });
    }
}

/// Bytes written through it are fed to the running hash and counted.
pub(super) struct Digest<'a> {
    pub(super) hasher: &'a mut DefaultHasher,
    pub(super) bytes: usize,
}

impl Write for Digest<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.hasher.write(buf);
        self.bytes += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A block as JSON without its `cache_control` (the other keys in their
/// order).
struct Unmarked<'a>(&'a Value);

impl Serialize for Unmarked<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => {
                let mut out = serializer.serialize_map(None)?;
                for (key, value) in map.iter().filter(|(key, _)| *key != "cache_control") {
                    out.serialize_entry(key, value)?;
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

/// The lifetime a block's `cache_control` asks for, if it has one.
fn mark_of(value: &Value) -> Option<Duration> {
    value
        .get("cache_control")
        .filter(|mark| !mark.is_null())
        .map(|mark| ttl_of(mark).unwrap_or(FIVE_MINUTES))
}
