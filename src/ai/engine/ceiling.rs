//! A money ceiling for one conversation: before each request, its worst
//! case is priced and checked against what the ceiling leaves, so the
//! conversation never brings the session's spend past it.
//!
//! Used by the two conversations that run on money of their own or on what
//! an investigation left: `luminos ask` (its own small budget) and the
//! refinement (`--refine`, after the synthesis, within the run's budget).
//!
//! The worst case of a request is its prompt as the window counts it
//! ([`crate::ai::engine::window::request_tokens`]), every token of it
//! written to the prompt cache (a five-minute write is the dearest way to
//! pay for an input token: above plain input and far above a read; the
//! only writes luminos asks for), and every one of its `max_tokens`
//! produced, thinking included (thinking is billed as output, and one
//! `max_tokens` ceiling covers thinking and the answer together, adaptive
//! or not), at the catalog's prices for the model and the transport (the
//! session's tracker holds them). Whatever the answer reports, the request
//! cannot cost more. Pages read on 2026-11-27: pricing
//! (<https://platform.claude.com/docs/en/about-claude/pricing>, prompt
//! caching prices), adaptive thinking
//! (<https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking>)
//! and extended thinking
//! (<https://platform.claude.com/docs/en/build-with-claude/extended-thinking>).
//!
//! Its edges: arithmetic over the catalog's [`Pricing`] ([`allow`]), and
//! one turn taken under it ([`priced_turn`]); what the conversation does
//! when a request does not fit is its own business. The hook for a
//! session-wide ceiling: once the session itself prices every request at
//! its worst case before sending it, a conversation builds its session
//! with its ceiling and this check goes.

use crate::ai::api::cost::Pricing;
use crate::ai::engine::agent::{Agent, AgentError, Step};
use crate::ai::engine::session::Session;
use crate::ai::tools::ToolContext;

/// The next request does not fit what the ceiling leaves.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error(
    "the next request may cost up to ${needed:.4} and ${left:.4} is left of the ${limit:.2} budget"
)]
pub(crate) struct OverCeiling {
    /// The request's worst case.
    pub needed: f64,
    /// What the ceiling left for it.
    pub left: f64,
    /// The ceiling.
    pub limit: f64,
}

/// The smallest reply a request is sent with when money is short: room
/// for a short answer or a tool call. Below it a request is not worth
/// sending.
pub(crate) const MIN_REPLY_TOKENS: u32 = 1_024;

/// What the ceiling says about the next request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Allowed {
    /// The `max_tokens` it may ask for: what it wanted while half of what
    /// is left pays for that, less when it does not (a cap, not a target:
    /// a reply rarely comes near it).
    pub max_tokens: u32,
    /// Only what is left as a whole pays for it: the conversation should
    /// finish with this request.
    pub last: bool,
}

/// The most one request of `input_tokens` (as the window counts them) and
/// `max_tokens` of reply can cost on `pricing`: the catalog's worst case,
/// every prompt token a cache write.
pub(crate) fn worst_case(pricing: &Pricing, input_tokens: u64, max_tokens: u32) -> f64 {
    pricing.worst_case(input_tokens, max_tokens, true)
}

/// Whether a request of `input_tokens` that wants `wanted` tokens of reply
/// may go when the session has spent `spent` of `limit` dollars, and with
/// what `max_tokens`. Each request takes at most half of what is left, so
/// the conversation keeps money for the next one; when half no longer pays
/// for the smallest reply, the whole rest pays for a last one.
pub(crate) fn allow(
    pricing: &Pricing,
    input_tokens: u64,
    wanted: u32,
    spent: f64,
    limit: f64,
) -> Result<Allowed, OverCeiling> {
    let left = limit - spent;
    let smallest = wanted.min(MIN_REPLY_TOKENS);
    let fits = |money: f64| {
        (pricing.affordable_output(input_tokens, true, money))
            .filter(|tokens| *tokens >= smallest)
            .map(|tokens| tokens.min(wanted))
    };
    if let Some(max_tokens) = fits(left / 2.0) {
        return Ok(Allowed {
            max_tokens,
            last: false,
        });
    }
    match fits(left) {
        Some(max_tokens) => Ok(Allowed {
            max_tokens,
            last: true,
        }),
        None => Err(OverCeiling {
            needed: worst_case(pricing, input_tokens, smallest),
            left: left.max(0.0),
            limit,
        }),
    }
}

/// Take `agent`'s next turn if the session's spend stays within `limit`
/// dollars at the request's worst case, with its reply capped to what the
/// money pays for; when it is the last the money pays for, `last_note`
/// tells the model so first. `Ok(Err(_))`: nothing was sent.
pub(crate) async fn priced_turn(
    agent: &mut Agent,
    session: &Session,
    tools: &ToolContext<'_>,
    limit: f64,
    last_note: &str,
) -> Result<Result<Step, OverCeiling>, AgentError> {
    let pricing = session.tracker().pricing();
    let price = |agent: &Agent| {
        let (input_tokens, wanted) = agent.next_request(session);
        allow(&pricing, input_tokens, wanted, session.spent(), limit)
    };
    let mut allowed = match price(agent) {
        Ok(allowed) => allowed,
        Err(over) => return Ok(Err(over)),
    };
    if allowed.last {
        // The note is part of the request: priced again with it.
        agent.append_note(last_note);
        allowed = match price(agent) {
            Ok(allowed) => allowed,
            Err(over) => return Ok(Err(over)),
        };
    }
    agent.cap_reply(allowed.max_tokens);
    agent.turn(session, tools).await.map(Ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::api::Usage;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn the_worst_case_writes_every_input_token_and_uses_every_output_token() {
        let pricing = Pricing::for_model("claude-sonnet-5-5");
        let worst = worst_case(&pricing, 10_000, 4_096);
        let p = pricing.prices;
        let expected = (10_000.0 * p.cache_write_5m + 4_096.0 * p.output) / 1e6;
        assert!(close(worst, expected), "{worst} {expected}");
        // Whatever an answer within those bounds reports costs no more.
        for usage in [
            Usage {
                input_tokens: 10_000,
                output_tokens: 4_096,
                ..Usage::default()
            },
            Usage {
                input_tokens: 2_000,
                cache_read_input_tokens: 8_000,
                output_tokens: 100,
                ..Usage::default()
            },
        ] {
            assert!(pricing.cost(&usage) <= worst + 1e-12, "{usage:?}");
        }
    }

    #[test]
    fn a_request_takes_half_of_what_is_left_then_all_of_it_then_nothing() {
        let pricing = Pricing::for_model("claude-sonnet-5-5");
        let full = worst_case(&pricing, 10_000, 32_768);
        // Plenty: the reply it wants.
        assert_eq!(
            allow(&pricing, 10_000, 32_768, 0.0, full * 2.0),
            Ok(Allowed {
                max_tokens: 32_768,
                last: false
            })
        );
        // Less: a smaller reply, within half of what is left.
        let shared = allow(&pricing, 10_000, 32_768, 0.0, full).unwrap();
        assert!(!shared.last && shared.max_tokens < 32_768);
        assert!(worst_case(&pricing, 10_000, shared.max_tokens) <= full / 2.0 + 1e-12);
        // Half no longer pays for the smallest reply: the rest pays for a
        // last one.
        let smallest = worst_case(&pricing, 10_000, MIN_REPLY_TOKENS);
        let last = allow(&pricing, 10_000, 32_768, 0.0, smallest * 1.5).unwrap();
        assert!(last.last && last.max_tokens >= MIN_REPLY_TOKENS);
        assert!(worst_case(&pricing, 10_000, last.max_tokens) <= smallest * 1.5 + 1e-12);
        // Not even that.
        let over = allow(&pricing, 10_000, 32_768, 0.0, smallest * 0.9).unwrap_err();
        assert!(close(over.needed, smallest) && close(over.left, smallest * 0.9));
        // Spent past the ceiling: nothing is left, never less.
        let over = allow(&pricing, 10_000, 32_768, 1.0, 0.01).unwrap_err();
        assert_eq!(over.left, 0.0);
        assert_eq!(
            over.to_string(),
            format!(
                "the next request may cost up to ${:.4} and $0.0000 is left of the $0.01 budget",
                smallest
            )
        );
        // A reply that wants little asks for no more.
        assert_eq!(
            allow(&pricing, 10_000, 512, 0.0, 10.0),
            Ok(Allowed {
                max_tokens: 512,
                last: false
            })
        );
    }
}
