//! Prompt-caching breakpoints, placed by the client on every request so that
//! callers never think about them.
//!
//! The cache works on prefixes in the order tools → system → messages. Four
//! marks cover an agent loop: the last tool definition (the toolbelt), the
//! system prompt, the last block of the newest user message, and the last
//! block of the user message before it. On the next turn the history up to
//! the previous mark is read back at a tenth of the input price, and only
//! the new exchange is paid in full. The mark on the previous user message
//! sits exactly where the last request's newest mark was: the API looks for
//! an earlier prefix only about 20 blocks back from a mark, so after a turn
//! of many tool calls (each call and each result is a block) the newest mark
//! alone would miss it and the whole history would be written again. The
//! API allows at most [`MAX_BREAKPOINTS`]; we use all four.
//!
//! A caller that expects no later request to resend a prompt (a pass that
//! asks for its answer in one call) says so with [`Reuse::None`]: writing a
//! prefix costs 1.25x the input price, so a prefix never read back costs a
//! quarter more than sending it plainly.
//!
//! **Lifetimes.** Interactive requests keep the default 5 minutes: a loop's
//! next turn comes within seconds, and every read starts the lifetime over.
//! A batch round can take longer than that (most batches end within an
//! hour), so the next turn would find its prefix gone and write it again:
//! batch requests mark their prefixes with the 1-hour lifetime (written at
//! 2x the input price instead of 1.25x, read at the same price), as the
//! batch processing guide suggests. All marks of a request share one
//! lifetime, so the rule for mixing them (a longer lifetime before a shorter
//! one, [`lifetimes_in_order`]) always holds. Prompt caching and batch
//! processing pages, read 2026-11-27.

use super::catalog::CacheTtl;
use super::types::{CacheControl, Content, ContentBlock, Message, MessagesRequest, Role};

/// The API's limit on `cache_control` marks per request.
pub(crate) const MAX_BREAKPOINTS: usize = 4;

/// Whether later requests are expected to resend a request's prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// They are: mark the prefixes (the usual case in a conversation).
    Expected,
    /// They are not: mark nothing, so nothing is written to the cache.
    None,
}

/// Replace whatever marks `request` carries with ours for `reuse`, each
/// asking its prefix to live `ttl`.
pub(crate) fn mark_breakpoints_for(request: &mut MessagesRequest, reuse: Reuse, ttl: CacheTtl) {
    match reuse {
        Reuse::Expected => mark_breakpoints_lasting(request, ttl),
        Reuse::None => clear_breakpoints(request),
    }
}

/// Replace whatever marks `request` carries with ours (5 minutes).
#[cfg(test)]
pub(crate) fn mark_breakpoints(request: &mut MessagesRequest) {
    mark_breakpoints_lasting(request, CacheTtl::FiveMinutes);
}

/// Replace whatever marks `request` carries with ours, each asking its
/// prefix to live `ttl`.
fn mark_breakpoints_lasting(request: &mut MessagesRequest, ttl: CacheTtl) {
    clear_breakpoints(request);
    let mark = || Some(CacheControl::lasting(ttl));
    if let Some(tool) = request.tools.last_mut() {
        tool.cache_control = mark();
    }
    if let Some(block) = request.system.last_mut() {
        block.cache_control = mark();
    }
    let newest: Vec<usize> = marked_user_messages(&request.messages).collect();
    for n in newest {
        let message = &mut request.messages[n];
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
    let blocks = request
        .messages
        .iter()
        .filter_map(|m| match &m.content {
            Content::Blocks(blocks) => Some(blocks),
            Content::Text(_) => None,
        })
        .flatten()
        .filter_map(|b| b.cache_control());
    let lifetimes: Vec<CacheTtl> = tools.chain(system).chain(blocks).map(lifetime).collect();
    lifetimes.windows(2).all(|pair| pair[0] >= pair[1])
}

/// The user messages whose last block carries a mark: the newest two, by
/// index, newest first.
pub(crate) fn marked_user_messages(messages: &[Message]) -> impl Iterator<Item = usize> + '_ {
    messages
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, m)| m.role == Role::User)
        .map(|(n, _)| n)
        .take(2)
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
    let blocks = request
        .messages
        .iter()
        .filter_map(|m| match &m.content {
            Content::Blocks(blocks) => Some(blocks),
            Content::Text(_) => None,
        })
        .flatten()
        .filter(|b| b.cache_control().is_some());
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
}
