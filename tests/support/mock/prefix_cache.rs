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

impl Simulated {
    /// A prompt of `tokens` read as plain input: no cache at all.
    pub fn plain(tokens: u64) -> Simulated {
        Simulated {
            usage: Usage {
                input_tokens: tokens,
                ..Usage::default()
            },
            written_1h: 0,
        }
    }
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
                cache_creation_1h_input_tokens: None,
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
        read_prompt(body).0
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

/// A request's prompt segments and its conversation keys: for each `upto`
/// from 0 to the number of messages, a hash of the prompt before message
/// `upto` (the tools, the system prompt and the messages, without caching
/// marks, which move from request to request by design). Every request
/// goes over its whole history, so each block's JSON is written once, into
/// a buffer both read: the cache counts and hashes it, the conversation
/// key hashes it.
pub fn read_prompt(body: &Value) -> (Prompt, Vec<u64>) {
    let mut prompt = Segments::default();
    let mut conversation = DefaultHasher::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        prompt.push("", &Unmarked(tool), mark_of(tool), &mut conversation);
    }
    match &body["system"] {
        Value::String(text) => {
            prompt.push_text("system:", text);
            conversation.write(b"system:");
            conversation.write(text.as_bytes());
            conversation.write_u8(0xff);
        }
        Value::Array(blocks) => {
            for block in blocks {
                prompt.push(
                    "system:",
                    &Unmarked(block),
                    mark_of(block),
                    &mut conversation,
                );
            }
        }
        _ => {}
    }
    let messages = body["messages"].as_array().map_or(&[][..], Vec::as_slice);
    let mut keys = Vec::with_capacity(messages.len() + 1);
    keys.push(conversation.finish());
    for message in messages {
        // The role starts a message: the same block under another role is
        // another prompt.
        let role = format!("{}:", message["role"].as_str().unwrap_or("?"));
        conversation.write(role.as_bytes());
        conversation.write_u8(0xfe);
        match &message["content"] {
            Value::String(text) => {
                // Counted as the block it stands for; hashed as a string,
                // which a conversation tells apart from that block.
                let block = serde_json::json!({"type": "text", "text": text});
                prompt.push(&role, &block, None, &mut DefaultHasher::new());
                conversation.write(b"string:");
                conversation.write(text.as_bytes());
                conversation.write_u8(0xff);
            }
            Value::Array(blocks) => {
                for (i, block) in blocks.iter().enumerate() {
                    let prefix = if i == 0 { role.as_str() } else { "" };
                    prompt.push(prefix, &Unmarked(block), mark_of(block), &mut conversation);
                }
            }
            _ => {}
        }
        keys.push(conversation.finish());
    }
    (Prompt(prompt.segments), keys)
}

/// The segments of a prompt as they are worked out, each hashed onto the
/// prefix before it.
#[derive(Default)]
struct Segments {
    segments: Vec<Segment>,
    hasher: DefaultHasher,
    /// The JSON of the block being pushed, kept for its allocation.
    json: Vec<u8>,
}

impl Segments {
    /// A segment whose text is `prefix` and then `value`'s JSON, hashed
    /// onto the prefix and counted; the JSON is also hashed into
    /// `conversation`.
    fn push(
        &mut self,
        prefix: &str,
        value: &impl Serialize,
        breakpoint: Option<Duration>,
        conversation: &mut DefaultHasher,
    ) {
        self.json.clear();
        serde_json::to_writer(&mut self.json, value).unwrap();
        conversation.write(&self.json);
        conversation.write_u8(0xff);
        self.hasher.write(prefix.as_bytes());
        self.hasher.write(&self.json);
        // As a `str` is hashed: its end is marked.
        self.hasher.write_u8(0xff);
        self.segments.push(Segment {
            tokens: ((prefix.len() + self.json.len()) as u64).div_ceil(4),
            breakpoint,
            prefix_hash: self.hasher.finish(),
        });
    }

    /// A segment of plain text (a system prompt given as a string).
    fn push_text(&mut self, prefix: &str, text: &str) {
        self.hasher.write(prefix.as_bytes());
        self.hasher.write(text.as_bytes());
        self.hasher.write_u8(0xff);
        self.segments.push(Segment {
            tokens: tokens_of(&format!("{prefix}{text}")),
            breakpoint: None,
            prefix_hash: self.hasher.finish(),
        });
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
