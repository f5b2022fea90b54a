//! Prompt-caching breakpoints: where a request's `cache_control` marks go,
//! decided by what later requests are expected to read back, at a price
//! that pays back. The client places them on every request, so callers
//! never write one.
//!
//! The cache works on prefixes in the order tools → system → messages, and
//! a request may carry at most [`MAX_BREAKPOINTS`] marks. We use up to four:
//! - the **shared prefix**, the last tool and the system prompt: every dir
//!   loop of a run opens with the same tools and system prompt, so a loop
//!   after the first reads them back;
//! - the **read mark**, on the user message where an earlier request of the
//!   same conversation wrote its cache: this request reads the history up
//!   to there back at a tenth of the input price. The API looks for an
//!   earlier prefix only about 20 blocks back from a mark, so after a turn
//!   of many tool calls (each call and each result is a block) the newest
//!   mark alone would miss it; a mark exactly there cannot;
//! - the **write mark**, on the newest user message: the conversation up to
//!   there is written, for the next request to read.
//!
//! **What pays back** ([`pays_back`]). A prefix written once and read `r`
//! times costs the write plus `r` reads; sent plainly instead it costs
//! `1 + r` plain inputs. With the catalog's multipliers (a 5-minute write at
//! 1.25x the input price, a 1-hour write at 2x, a read at 0.1x) a 5-minute
//! write pays back after one read (1.35 < 2), a 1-hour write after two
//! (2.2 < 3; one read, 2.1, costs more than the two plain sends). The
//! engine says how many later requests it expects to read each part
//! ([`ExpectedReads`]): none after a conversation's last request (its last
//! allowed turn, or the one the money leaves it), none for a pass that asks
//! for its answer in one call, the turns left otherwise; and many for a
//! shared prefix. [`Marks::place`] marks what pays back, and nothing else,
//! so no write is ever made that is not expected to be read again.
//!
//! **Lifetimes.** Interactive requests keep the default 5 minutes: a loop's
//! next turn comes within seconds, and every read starts the lifetime over.
//! A batch asks for the lifetime its rounds need (see
//! [`crate::ai::engine::batch`]): 5 minutes while rounds come back quickly,
//! an hour once one did not. All marks of a request share one lifetime, so
//! the rule for mixing them (a longer lifetime before a shorter one,
//! [`lifetimes_in_order`]) always holds. Prompt caching and batch
//! processing pages, read 2026-11-27.

use super::catalog::{CacheTtl, Prices};
use super::types::{CacheControl, Content, ContentBlock, Message, MessagesRequest, Role};

/// The API's limit on `cache_control` marks per request.
pub(crate) const MAX_BREAKPOINTS: usize = 4;

/// Whether later requests are expected to resend a request's prompt: the
/// plain choice of a caller that builds its own [`MessagesRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// They are: mark the shared prefix and the newest two user messages
    /// (the usual case in a conversation).
    Expected,
    /// They are not: mark nothing, so nothing is written to the cache.
    None,
}

/// How many later requests are expected to read back what one request
/// writes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct ExpectedReads {
    /// Of its shared prefix (the tools and the system prompt): the
    /// conversation's later requests, and the other conversations that open
    /// with the same prefix.
    pub prefix: f64,
    /// Of the conversation up to its newest user message: the
    /// conversation's later requests.
    pub tail: f64,
}

impl ExpectedReads {
    /// A conversation that expects `later` more requests (an expectation:
    /// it may be a fraction); `shared` when other conversations open with
    /// its prefix too ([`SHARED_READS`]).
    pub(crate) fn of(later: f64, shared: bool) -> ExpectedReads {
        ExpectedReads {
            prefix: if shared {
                SHARED_READS.max(later)
            } else {
                later
            },
            tail: later,
        }
    }
}

/// What a prefix every dir loop of a run opens with is expected to be read
/// back: by the loop's own later turns and by every loop after it. Any
/// number from two on says the same (it pays back at either lifetime).
pub(crate) const SHARED_READS: f64 = 8.0;

/// Whether writing a prefix that `reads` later requests are expected to
/// read back costs less than sending it plainly every time: one write (at
/// the price of a prefix that lives `ttl`) and `reads` reads, against
/// `1 + reads` plain inputs, at `prices`.
pub(crate) fn pays_back(reads: f64, ttl: CacheTtl, prices: &Prices) -> bool {
    prices.cache_write(ttl) + reads * prices.cache_read < (1.0 + reads) * prices.input
}

/// Where one request's marks go, and the lifetime they ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Marks {
    /// The shared prefix: the last tool and the system prompt.
    pub(crate) prefix: bool,
    /// The user message (by index) where an earlier request of the
    /// conversation wrote: its last block is marked, to read it back.
    pub(crate) read: Option<usize>,
    /// The newest user message (by index): its last block is marked, to
    /// write the conversation up to it.
    pub(crate) write: Option<usize>,
    /// The lifetime every mark asks for.
    pub(crate) ttl: CacheTtl,
}

impl Marks {
    /// No mark at all: nothing is read from or written to the cache.
    pub(crate) const NONE: Marks = Marks {
        prefix: false,
        read: None,
        write: None,
        ttl: CacheTtl::FiveMinutes,
    };

    /// The marks of a request whose parts later requests are expected to
    /// read `reads` times, at `prices` for marks that live `ttl`: the
    /// shared prefix and the newest user message (`newest`) each when
    /// writing it pays back (the tail's write holds the prefix, so a tail
    /// worth writing marks the prefix too), and the message where the
    /// conversation last wrote (`written`) whenever there is one, to read
    /// it back.
    pub(crate) fn place(
        reads: ExpectedReads,
        written: Option<usize>,
        newest: Option<usize>,
        ttl: CacheTtl,
        prices: &Prices,
    ) -> Marks {
        let tail = pays_back(reads.tail, ttl, prices);
        let prefix = tail || pays_back(reads.prefix, ttl, prices);
        let write = newest.filter(|_| tail);
        Marks {
            prefix,
            read: written.filter(|at| Some(*at) != write),
            write,
            ttl,
        }
    }

    /// The marks `reuse` calls for on `messages`: the shared prefix and the
    /// newest two user messages (the newest written, the one before read
    /// back), or none.
    pub(crate) fn for_reuse(reuse: Reuse, messages: &[Message], ttl: CacheTtl) -> Marks {
        match reuse {
            Reuse::None => Marks::NONE,
            Reuse::Expected => {
                let mut users = messages
                    .iter()
                    .enumerate()
                    .rev()
                    .filter(|(_, m)| m.role == Role::User)
                    .map(|(n, _)| n);
                let write = users.next();
                Marks {
                    prefix: true,
                    read: users.next(),
                    write,
                    ttl,
                }
            }
        }
    }

    /// Whether the request may write to the cache (a read mark whose entry
    /// has lapsed is written again): what its worst case is priced as.
    pub(crate) fn may_write(&self) -> bool {
        self.prefix || self.read.is_some() || self.write.is_some()
    }

    /// The user messages whose last block is marked.
    pub(crate) fn messages(&self) -> impl Iterator<Item = usize> + '_ {
        self.read.into_iter().chain(self.write)
    }
}

/// Replace whatever marks `request` carries with those `reuse` calls for,
/// each asking its prefix to live `ttl`.
pub(crate) fn mark_breakpoints_for(request: &mut MessagesRequest, reuse: Reuse, ttl: CacheTtl) {
    let marks = Marks::for_reuse(reuse, &request.messages, ttl);
    apply_marks(request, marks);
}

/// Replace whatever marks `request` carries with ours (5 minutes).
#[cfg(test)]
pub(crate) fn mark_breakpoints(request: &mut MessagesRequest) {
    mark_breakpoints_for(request, Reuse::Expected, CacheTtl::FiveMinutes);
}

/// Replace whatever marks `request` carries with `marks`.
pub(crate) fn apply_marks(request: &mut MessagesRequest, marks: Marks) {
    clear_breakpoints(request);
    let mark = || Some(CacheControl::lasting(marks.ttl));
    if marks.prefix {
        if let Some(tool) = request.tools.last_mut() {
            tool.cache_control = mark();
        }
        if let Some(block) = request.system.last_mut() {
            block.cache_control = mark();
        }
    }
    for n in marks.messages() {
        let Some(message) = request.messages.get_mut(n) else {
            continue;
        };
        match &mut message.content {
            // A plain string cannot carry a mark: it becomes one text block.
            Content::Text(text) if !text.is_empty() => {
                let mut block = ContentBlock::text(std::mem::take(text));
                block.set_cache_control(mark());
                message.content = Content::Blocks(vec![block]);
            }
            Content::Text(_) => {}
            Content::Blocks(blocks) => {
                if let Some(block) = blocks.last_mut() {
                    block.set_cache_control(mark());
                }
            }
        }
    }
    debug_assert!(count_breakpoints(request) <= MAX_BREAKPOINTS);
    debug_assert!(lifetimes_in_order(request));
}

/// The lifetime a mark asks for.
fn lifetime(mark: &CacheControl) -> CacheTtl {
    match mark.ttl.as_deref() {
        Some("1h") => CacheTtl::OneHour,
        _ => CacheTtl::FiveMinutes,
    }
}

/// Whether `request`'s marks, in prefix order (tools, system, messages),
/// never ask for a longer lifetime after a shorter one: the API refuses a
/// request that does.
pub(crate) fn lifetimes_in_order(request: &MessagesRequest) -> bool {
    let tools = request
        .tools
        .iter()
        .filter_map(|t| t.cache_control.as_ref());
    let system = request
        .system
        .iter()
        .filter_map(|b| b.cache_control.as_ref());
    let blocks = message_blocks(request).filter_map(|b| b.cache_control());
    let lifetimes: Vec<CacheTtl> = tools.chain(system).chain(blocks).map(lifetime).collect();
    lifetimes.windows(2).all(|pair| pair[0] >= pair[1])
}

/// Every block of `request`'s messages, in order (a plain-text message has
/// none, so it carries no mark).
fn message_blocks(request: &MessagesRequest) -> impl Iterator<Item = &ContentBlock> {
    request
        .messages
        .iter()
        .filter_map(|m| match &m.content {
            Content::Blocks(blocks) => Some(blocks),
            Content::Text(_) => None,
        })
        .flatten()
}

/// Remove every mark.
pub(crate) fn clear_breakpoints(request: &mut MessagesRequest) {
    for tool in &mut request.tools {
        tool.cache_control = None;
    }
    for block in &mut request.system {
        block.cache_control = None;
    }
    for message in &mut request.messages {
        if let Content::Blocks(blocks) = &mut message.content {
            for block in blocks {
                block.set_cache_control(None);
            }
        }
    }
}

/// How many marks `request` carries.
pub(crate) fn count_breakpoints(request: &MessagesRequest) -> usize {
    let tools = request.tools.iter().filter(|t| t.cache_control.is_some());
    let system = request.system.iter().filter(|b| b.cache_control.is_some());
    let blocks = message_blocks(request).filter(|b| b.cache_control().is_some());
    tools.count() + system.count() + blocks.count()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ai::api::types::{Message, SystemBlock, ToolDefinition};

    fn tool(name: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: "d".into(),
            input_schema: json!({"type": "object"}),
            cache_control: Some(CacheControl::ephemeral()),
        }
    }

    fn request(messages: Vec<Message>) -> MessagesRequest {
        MessagesRequest {
            model: "m".into(),
            max_tokens: 10,
            system: vec![SystemBlock::text("sys")],
            messages,
            tools: vec![tool("a"), tool("b"), tool("c")],
            thinking: None,
            output_config: None,
            stream: true,
        }
    }

    #[test]
    fn marks_last_tool_system_and_the_two_newest_user_blocks() {
        let mut req = request(vec![
            Message::user_text("start"),
            Message::assistant(vec![ContentBlock::ToolUse {
                id: "t1".into(),
                name: "a".into(),
                input: json!({}),
                cache_control: Some(CacheControl::ephemeral()),
            }]),
            Message::user_blocks(vec![
                ContentBlock::tool_result("t1", "one", false),
                ContentBlock::tool_result("t2", "two", false),
            ]),
        ]);
        mark_breakpoints(&mut req);
        assert_eq!(count_breakpoints(&req), 4);
        let value = serde_json::to_value(&req).unwrap();
        assert_eq!(
            value["tools"][2]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert!(value["tools"][0].get("cache_control").is_none());
        assert_eq!(value["system"][0]["cache_control"]["type"], "ephemeral");
        // The user message before the newest keeps its mark, where the
        // last request's newest mark was.
        assert_eq!(
            value["messages"][0]["content"],
            json!([{"type": "text", "text": "start", "cache_control": {"type": "ephemeral"}}])
        );
        assert!(
            value["messages"][1]["content"][0]
                .get("cache_control")
                .is_none()
        );
        assert!(
            value["messages"][2]["content"][0]
                .get("cache_control")
                .is_none()
        );
        assert_eq!(
            value["messages"][2]["content"][1]["cache_control"]["type"],
            "ephemeral"
        );
    }

    #[test]
    fn a_string_user_message_becomes_one_marked_block() {
        let mut req = request(vec![Message::user_text("hello")]);
        req.tools.clear();
        mark_breakpoints(&mut req);
        assert_eq!(count_breakpoints(&req), 2);
        assert_eq!(
            serde_json::to_value(&req.messages[0]).unwrap(),
            json!({"role": "user", "content": [
                {"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}
            ]})
        );
    }

    #[test]
    fn never_more_than_the_limit_whatever_came_in() {
        let mut blocks: Vec<ContentBlock> = (0..10)
            .map(|i| ContentBlock::text(format!("b{i}")))
            .collect();
        for block in &mut blocks {
            block.set_cache_control(Some(CacheControl::ephemeral()));
        }
        let mut req = request(vec![Message::user_blocks(blocks)]);
        assert!(count_breakpoints(&req) > MAX_BREAKPOINTS);
        mark_breakpoints(&mut req);
        assert_eq!(count_breakpoints(&req), 3);
        // Marking twice changes nothing.
        let once = req.clone();
        mark_breakpoints(&mut req);
        assert_eq!(req, once);
    }

    #[test]
    fn no_reuse_means_no_marks() {
        let mut req = request(vec![Message::user_text("q")]);
        mark_breakpoints_for(&mut req, Reuse::None, CacheTtl::FiveMinutes);
        assert_eq!(count_breakpoints(&req), 0);
        mark_breakpoints_for(&mut req, Reuse::Expected, CacheTtl::FiveMinutes);
        assert_eq!(count_breakpoints(&req), 3);
    }

    #[test]
    fn every_mark_of_a_batch_request_asks_for_an_hour() {
        let mut req = request(vec![
            Message::user_text("start"),
            Message::assistant(vec![ContentBlock::text("ok")]),
            Message::user_text("next"),
        ]);
        mark_breakpoints_for(&mut req, Reuse::Expected, CacheTtl::OneHour);
        assert_eq!(count_breakpoints(&req), 4);
        let value = serde_json::to_value(&req).unwrap();
        let hour = json!({"type": "ephemeral", "ttl": "1h"});
        assert_eq!(value["tools"][2]["cache_control"], hour);
        assert_eq!(value["system"][0]["cache_control"], hour);
        assert_eq!(value["messages"][0]["content"][0]["cache_control"], hour);
        assert_eq!(value["messages"][2]["content"][0]["cache_control"], hour);
        assert!(lifetimes_in_order(&req));
        // The default lifetime is written as the API's default.
        mark_breakpoints_for(&mut req, Reuse::Expected, CacheTtl::FiveMinutes);
        let value = serde_json::to_value(&req).unwrap();
        assert_eq!(
            value["system"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
    }

    #[test]
    fn a_longer_lifetime_after_a_shorter_one_is_out_of_order() {
        let mut req = request(vec![Message::user_text("q")]);
        mark_breakpoints_for(&mut req, Reuse::Expected, CacheTtl::FiveMinutes);
        assert!(lifetimes_in_order(&req));
        // An hour on the system prompt before 5 minutes after it: fine.
        req.system[0].cache_control = Some(CacheControl::lasting(CacheTtl::OneHour));
        req.tools[2].cache_control = Some(CacheControl::lasting(CacheTtl::OneHour));
        assert!(lifetimes_in_order(&req));
        // 5 minutes on the tools, then an hour on the system prompt: not.
        req.tools[2].cache_control = Some(CacheControl::ephemeral());
        assert!(!lifetimes_in_order(&req));
    }

    #[test]
    fn prefill_after_the_newest_user_message() {
        let mut req = request(vec![
            Message::user_text("q"),
            Message::assistant(vec![ContentBlock::text("{")]),
        ]);
        mark_breakpoints(&mut req);
        assert_eq!(count_breakpoints(&req), 3);
        assert!(matches!(&req.messages[0].content, Content::Blocks(_)));
    }

    fn sonnet() -> Prices {
        crate::ai::api::catalog::lookup(crate::ai::api::DEFAULT_MODEL)
            .unwrap()
            .prices
    }

    #[test]
    fn a_five_minute_write_pays_back_after_one_read_an_hour_long_one_after_two() {
        for prices in [sonnet(), sonnet().scaled(0.5)] {
            assert!(!pays_back(0.0, CacheTtl::FiveMinutes, &prices));
            assert!(pays_back(1.0, CacheTtl::FiveMinutes, &prices));
            assert!(!pays_back(0.0, CacheTtl::OneHour, &prices));
            assert!(!pays_back(1.0, CacheTtl::OneHour, &prices));
            assert!(pays_back(2.0, CacheTtl::OneHour, &prices));
            assert!(pays_back(SHARED_READS, CacheTtl::OneHour, &prices));
            // An expectation may be a fraction: a third of a read is enough
            // for a 5-minute write (1.25 + 0.033 < 1.33), a fifth is not.
            assert!(pays_back(1.0 / 3.0, CacheTtl::FiveMinutes, &prices));
            assert!(!pays_back(0.2, CacheTtl::FiveMinutes, &prices));
        }
        // The rule is the prices': with writes as cheap as plain input, one
        // read would pay back at either lifetime.
        let flat = Prices {
            cache_write_1h: sonnet().input,
            ..sonnet()
        };
        assert!(pays_back(1.0, CacheTtl::OneHour, &flat));
    }

    #[test]
    fn marks_go_where_a_write_pays_back_and_where_the_last_write_is() {
        let prices = sonnet();
        let five = CacheTtl::FiveMinutes;
        let place = |later: f64, shared: bool, ttl: CacheTtl| {
            Marks::place(
                ExpectedReads::of(later, shared),
                Some(2),
                Some(4),
                ttl,
                &prices,
            )
        };
        // A turn with more to come writes its tail, and reads the last one.
        assert_eq!(
            place(3.0, false, five),
            Marks {
                prefix: true,
                read: Some(2),
                write: Some(4),
                ttl: five
            }
        );
        // The last request writes nothing, but still reads what was
        // written; a shared prefix stays marked for the loops after it.
        let last = place(0.0, false, five);
        assert_eq!((last.prefix, last.read, last.write), (false, Some(2), None));
        let last_shared = place(0.0, true, five);
        assert_eq!(
            (last_shared.prefix, last_shared.read, last_shared.write),
            (true, Some(2), None)
        );
        // An hour-long write needs two reads: one more request is not
        // enough for the tail, the shared prefix still pays back.
        let hour = place(1.0, true, CacheTtl::OneHour);
        assert_eq!((hour.prefix, hour.write), (true, None));
        assert_eq!(place(2.0, true, CacheTtl::OneHour).write, Some(4));
        // A one-call pass writes and reads nothing.
        assert_eq!(
            Marks::place(ExpectedReads::default(), None, Some(0), five, &prices),
            Marks::NONE
        );
        // Reading back where the newest message was written is its write.
        let again = Marks::place(
            ExpectedReads::of(3.0, false),
            Some(4),
            Some(4),
            five,
            &prices,
        );
        assert_eq!((again.read, again.write), (None, Some(4)));
    }

    #[test]
    fn placed_marks_land_on_the_request() {
        let mut req = request(vec![
            Message::user_text("start"),
            Message::assistant(vec![ContentBlock::text("ok")]),
            Message::user_text("next"),
        ]);
        let marks = Marks {
            prefix: false,
            read: Some(0),
            write: None,
            ttl: CacheTtl::OneHour,
        };
        apply_marks(&mut req, marks);
        assert_eq!(count_breakpoints(&req), 1);
        let value = serde_json::to_value(&req).unwrap();
        assert_eq!(
            value["messages"][0]["content"][0]["cache_control"],
            json!({"type": "ephemeral", "ttl": "1h"})
        );
        assert!(value["tools"][2].get("cache_control").is_none());
        apply_marks(&mut req, Marks::NONE);
        assert_eq!(count_breakpoints(&req), 0);
    }
}
