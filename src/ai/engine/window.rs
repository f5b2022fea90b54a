//! The context window, kept: no request is ever sent larger than the
//! model's window (from the catalog) less the room its reply needs.
//!
//! A request is measured before it goes: the bytes of its system prompt,
//! messages and tools, at most ([`TokenEstimate::at_most`]: the catalog's
//! tokens per byte, with a margin for text that tokenizes denser than
//! code). When it would not
//! fit, the input shrinks: the tool results of the message about to be sent
//! (not yet part of any history the model has seen) are cut, the largest
//! first, each to no less than [`KEPT_BYTES`] with a note saying so. What
//! still does not fit is refused ([`TooLarge`]) and never sent; the pass
//! ends as it would on its context budget.

use serde::Serialize;

use crate::ai::api::tokens::TokenEstimate;
use crate::ai::api::types::Content;
use crate::ai::api::{ContentBlock, Message, ToolDefinition};

/// A cut tool result keeps at least this many bytes.
pub(crate) const KEPT_BYTES: usize = 2 * 1024;
/// What a cut tool result says after what it kept.
pub(crate) const CUT_NOTE: &str =
    "\n[luminos: the rest of this result was cut: it would not fit the model's context window]";

/// A request that cannot be made to fit the window.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the request would take about {tokens} tokens, more than the {limit} the model's window leaves for it"
)]
pub(crate) struct TooLarge {
    pub tokens: u64,
    pub limit: u64,
}

/// The tokens a request of these parts is taken to be.
pub(crate) fn request_tokens(
    system: &str,
    messages: &[Message],
    tools: &[ToolDefinition],
    estimate: TokenEstimate,
) -> u64 {
    estimate.at_most(system.len() + json_len(messages) + json_len(tools))
}

/// The length of `value`'s JSON, counted as it is written (0 if it does
/// not serialize).
pub(crate) fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => 0,
    }
}

/// A writer that only counts.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Cut the tool results of the last message (the one about to be sent) by
/// about `excess` tokens, the largest first, none below [`KEPT_BYTES`].
/// Returns whether anything was cut.
pub(crate) fn shrink_pending(
    messages: &mut [Message],
    excess: u64,
    estimate: TokenEstimate,
) -> bool {
    let Some(Message {
        content: Content::Blocks(blocks),
        ..
    }) = messages.last_mut()
    else {
        return false;
    };
    let mut to_cut = estimate.bytes_to_save(excess) + CUT_NOTE.len() * blocks.len();
    let mut order: Vec<usize> = (0..blocks.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(result_len(&blocks[i])));
    let mut cut_any = false;
    for i in order {
        if to_cut == 0 {
            break;
        }
        let ContentBlock::ToolResult { content, .. } = &mut blocks[i] else {
            continue;
        };
        if content.len() <= KEPT_BYTES {
            continue;
        }
        let keep = content.len().saturating_sub(to_cut).max(KEPT_BYTES);
        let mut end = keep;
        while !content.is_char_boundary(end) {
            end -= 1;
        }
        to_cut = to_cut.saturating_sub(content.len() - end);
        content.truncate(end);
        content.push_str(CUT_NOTE);
        cut_any = true;
    }
    cut_any
}

fn result_len(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::ToolResult { content, .. } => content.len(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(sizes: &[usize]) -> Vec<Message> {
        vec![
            Message::user_text("start"),
            Message::user_blocks(
                sizes
                    .iter()
                    .enumerate()
                    .map(|(i, n)| ContentBlock::tool_result(format!("t{i}"), "x".repeat(*n), false))
                    .collect(),
            ),
        ]
    }

    #[test]
    fn requests_are_measured_with_a_margin() {
        let messages = pending(&[1_000]);
        let tokens = request_tokens("system", &messages, &[], TokenEstimate::per_byte(0.25));
        let bytes = 6 + serde_json::to_vec(&messages).unwrap().len();
        assert_eq!(
            tokens,
            (bytes as f64 * 0.25 * crate::ai::api::settings::COUNT_MARGIN).ceil() as u64
        );
    }

    #[test]
    fn the_largest_results_are_cut_first_and_never_below_the_floor() {
        let mut messages = pending(&[100_000, 3_000, 50_000]);
        let before = request_tokens("", &messages, &[], TokenEstimate::per_byte(0.25));
        assert!(shrink_pending(
            &mut messages,
            10_000,
            TokenEstimate::per_byte(0.25)
        ));
        let after = request_tokens("", &messages, &[], TokenEstimate::per_byte(0.25));
        assert!(before - after >= 10_000, "{before} -> {after}");
        let Content::Blocks(blocks) = &messages[1].content else {
            panic!()
        };
        let lens: Vec<usize> = blocks.iter().map(result_len).collect();
        // The 100,000-byte result took the cut; the small one is whole.
        assert!(
            lens[0] < 100_000 && lens[1] == 3_000 && lens[2] == 50_000,
            "{lens:?}"
        );
        let ContentBlock::ToolResult { content, .. } = &blocks[0] else {
            panic!()
        };
        assert!(content.ends_with(CUT_NOTE));
        // Asked for more than there is: everything down to the floor.
        assert!(shrink_pending(
            &mut messages,
            10_000_000,
            TokenEstimate::per_byte(0.25)
        ));
        let Content::Blocks(blocks) = &messages[1].content else {
            panic!()
        };
        assert!(
            blocks
                .iter()
                .all(|b| result_len(b) <= KEPT_BYTES + CUT_NOTE.len() || result_len(b) == 3_000)
        );
        // A plain message has nothing to cut.
        assert!(!shrink_pending(
            &mut [Message::user_text("hi")],
            10,
            TokenEstimate::per_byte(0.25)
        ));
    }
}
