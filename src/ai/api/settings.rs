//! How luminos asks each model to work: `max_tokens`, how much to think,
//! and how large a loop's context may grow. Pure decisions over the
//! [`catalog`](super::catalog), made here once and used alike by the run
//! (every request) and by `--estimate` (its thinking allowance and budget).
//!
//! # Thinking
//!
//! Thinking tokens are billed as output (thinking page, read 2026-11-23),
//! and on Sonnet 5.5 output costs five times input. A run's calls are of two
//! kinds ([`Workload`]):
//! - **judgment**: the survey, the plan and the synthesis, a handful of
//!   calls whose answers shape the whole report. They keep the model's
//!   default: adaptive thinking at its default effort where the model
//!   thinks by default, none where thinking is opt-in (as the original,
//!   which never asked for it);
//! - **routine**: the directory loops, most of a run's calls, whose turns
//!   read files and write summaries. They think as little as the model
//!   allows: Sonnet 5.5 with `thinking: {"type": "between_tools"}` (its
//!   lowest setting: no thinking up front, short notes between tool calls;
//!   `disabled` is refused), models that may turn thinking off (Sonnet 5,
//!   Opus 5, Haiku 5.5) with `disabled`, and models that always think with
//!   `output_config.effort` lowered to `medium` where their default is
//!   higher (effort page, 2026-10: effort steers all output tokens, thinking
//!   included, and is a signal rather than a hard budget).
//!
//! # max_tokens
//!
//! Thinking counts toward `max_tokens`. A reply that thinks gets
//! [`THINKING_ROOM`] on top of the [`REPLY_TOKENS`] the original gave every
//! reply, so that thinking cannot starve the tool calls that follow it
//! (third-party clients reserve 32K for the 5.5 models); a reply that does
//! not think keeps the original's 4,096. Never more than the model's
//! maximum output, and never more than an eighth of its window
//! ([`reply_cap`]): that only bites on a small window given with
//! `--context-window`, where the prompt needs the rest. A larger
//! `max_tokens` costs nothing by itself: only the tokens produced are
//! billed.
//!
//! # Context budget
//!
//! A dir loop stops once a call's context passes [`context_budget`]: 70% of
//! the smallest of the model's window, [`BUDGET_WINDOW_CAP`] and the prompt
//! length above which the model charges a higher rate. Every turn resends
//! the context, so a larger window would buy a dearer loop, not a better
//! one; and on Haiku 5.5 a request whose prompt passes 100K tokens pays five
//! times the rate on every token. On a small window it is also no more than
//! the window less the reply and [`NEXT_TURN_ROOM`].

use super::catalog::{Effort, Model, Thinking};
use super::types::{MessagesRequest, OutputConfig, ThinkingParam};

/// `max_tokens` of a reply that does not think: the original's figure.
pub(crate) const REPLY_TOKENS: u32 = 4096;

/// The smallest `max_tokens` a request is sent with when money is short
/// (see [`crate::ai::engine::purse`]): room for a step line and a tool call
/// or a short report. Below it a request is not worth sending.
pub(crate) const MIN_REPLY_TOKENS: u32 = 1_024;

/// A request's tokens are counted this much above the catalog's tokens per
/// byte before it is sent, for text that tokenizes denser than code (the
/// window and the budget both count so).
pub(crate) const COUNT_MARGIN: f64 = 1.2;

/// Room for thinking on top of [`REPLY_TOKENS`] when a reply thinks, for
/// 32,768 in all.
pub(crate) const THINKING_ROOM: u32 = 28_672;

/// The share of the usable window a loop may fill before it stops, leaving
/// room for the reply and the next tool result (as the original).
pub(crate) const BUDGET_SHARE_PERCENT: u64 = 70;

/// The largest window a loop budget is taken from (the original's 200K).
pub(crate) const BUDGET_WINDOW_CAP: u64 = 200_000;

/// A reply may take at most this share (1/N) of the model's window, so
/// that a small window keeps room for the prompt (never less than
/// [`MIN_REPLY_TOKENS`]). Every catalog window is at least 200K, where
/// the share (25K) is above what any request of luminos asks for without
/// thinking, and no catalog model with a 200K window thinks: only a window
/// given with `--context-window` ever lowers a reply.
pub(crate) const REPLY_WINDOW_SHARE: u64 = 8;

/// Room kept in a loop's context, below the window less the reply, for the
/// next turn's tool results (a file read at `read_file`'s default size is
/// about 1,600 tokens).
pub(crate) const NEXT_TURN_ROOM: u64 = 2_048;

/// The effort routine work asks for on models that always think.
pub(crate) const ROUTINE_EFFORT: Effort = Effort::Medium;

/// Output the estimate expects one call's thinking to add, by kind of call.
/// Allowances, not measurements: adaptive thinking decides per turn.
pub(crate) const JUDGMENT_THINKING_TOKENS: u64 = 2_000;
/// ...a routine turn at `between_tools` (only the notes between calls).
pub(crate) const BETWEEN_TOOLS_THINKING_TOKENS: u64 = 300;
/// ...a routine turn at [`ROUTINE_EFFORT`].
pub(crate) const ROUTINE_THINKING_TOKENS: u64 = 1_000;

/// What kind of conversation a request belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// Few calls that shape the report: the model's own defaults.
    Judgment,
    /// The bulk of a run: as little thinking as the model allows.
    Routine,
}

/// The per-request settings of one conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallSettings {
    pub max_tokens: u32,
    /// `None`: the model's default.
    pub thinking: Option<ThinkingParam>,
    /// `None`: the model's default effort.
    pub output_config: Option<OutputConfig>,
    /// Whether answers will carry thinking blocks.
    pub thinks: bool,
}

impl CallSettings {
    /// The settings for `workload` on `model` (see the module docs).
    pub fn new(model: &Model, workload: Workload) -> CallSettings {
        let (thinking, effort) = match (workload, model.thinking) {
            (Workload::Judgment, _) | (Workload::Routine, Thinking::OptIn) => (None, None),
            (Workload::Routine, Thinking::OnByDefault) => (Some(ThinkingParam::Disabled), None),
            (Workload::Routine, Thinking::Always) if model.between_tools => {
                (Some(ThinkingParam::BetweenTools), None)
            }
            (Workload::Routine, Thinking::Always) => (
                None,
                model
                    .default_effort
                    .filter(|default| *default > ROUTINE_EFFORT)
                    .map(|_| ROUTINE_EFFORT),
            ),
        };
        let thinks = thinks(model, thinking);
        let wanted = if thinks {
            REPLY_TOKENS + THINKING_ROOM
        } else {
            REPLY_TOKENS
        };
        CallSettings {
            max_tokens: wanted.min(model.max_output).min(reply_cap(model)),
            thinking,
            output_config: effort.map(|effort| OutputConfig { effort }),
            thinks,
        }
    }

    /// The thinking the estimate expects one call with these settings to
    /// produce, in tokens (see the `*_THINKING_TOKENS` allowances).
    pub(crate) fn expected_thinking_tokens(&self) -> u64 {
        if !self.thinks {
            return 0;
        }
        match (self.thinking, self.output_config) {
            (Some(ThinkingParam::BetweenTools), _) => BETWEEN_TOOLS_THINKING_TOKENS,
            (_, Some(_)) => ROUTINE_THINKING_TOKENS,
            _ => JUDGMENT_THINKING_TOKENS,
        }
    }
}

/// Whether `model`'s answers carry thinking blocks when a request sends
/// `thinking` (`None` = the parameter left out), per the thinking page: the
/// 5.x models think unless `disabled` is accepted; earlier ones only when
/// asked.
pub fn thinks(model: &Model, thinking: Option<ThinkingParam>) -> bool {
    match (model.thinking, thinking) {
        (_, Some(ThinkingParam::Disabled)) => false,
        (Thinking::Always | Thinking::OnByDefault, _) => true,
        (
            Thinking::OptIn,
            Some(
                ThinkingParam::Adaptive
                | ThinkingParam::BetweenTools
                | ThinkingParam::Enabled { .. },
            ),
        ) => true,
        (Thinking::OptIn, None) => false,
    }
}

/// The most `max_tokens` a request to `model` asks for, whatever it
/// wants: a share of its window ([`REPLY_WINDOW_SHARE`]), at least
/// [`MIN_REPLY_TOKENS`].
pub(crate) fn reply_cap(model: &Model) -> u32 {
    let share = model.context_window / REPLY_WINDOW_SHARE;
    u32::try_from(share)
        .unwrap_or(u32::MAX)
        .max(MIN_REPLY_TOKENS)
}

/// The context, in tokens, past which a dir loop stops (module docs); on a
/// small window, no more than what leaves room for the reply and the next
/// turn's results.
pub(crate) fn context_budget(model: &Model) -> u64 {
    let tier = model
        .long_prompt_tier
        .map_or(u64::MAX, |tier| tier.above_tokens);
    let share = model.context_window.min(BUDGET_WINDOW_CAP).min(tier) * BUDGET_SHARE_PERCENT / 100;
    let reply = u64::from(CallSettings::new(model, Workload::Routine).max_tokens);
    let room = model
        .context_window
        .saturating_sub(reply)
        .saturating_sub(NEXT_TURN_ROOM);
    share.min(room)
}

// Defined here rather than beside the request type, so that the protocol
// types know nothing of how a conversation is tuned.
impl MessagesRequest {
    /// This request with a conversation's [`CallSettings`]: its
    /// `max_tokens`, `thinking` and `output_config`.
    pub fn with_settings(mut self, settings: &CallSettings) -> MessagesRequest {
        self.max_tokens = settings.max_tokens;
        self.thinking = settings.thinking;
        self.output_config = settings.output_config;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::api::catalog::{DEFAULT_MODEL, MODELS, ModelFacts, lookup};

    fn settings(id: &str, workload: Workload) -> CallSettings {
        CallSettings::new(lookup(id).unwrap(), workload)
    }

    #[test]
    fn the_default_model_thinks_between_tools_in_loops_and_freely_elsewhere() {
        let routine = settings(DEFAULT_MODEL, Workload::Routine);
        assert_eq!(routine.thinking, Some(ThinkingParam::BetweenTools));
        assert_eq!(routine.output_config, None);
        assert!(routine.thinks);
        assert_eq!(routine.max_tokens, 32_768);
        let judgment = settings(DEFAULT_MODEL, Workload::Judgment);
        assert_eq!((judgment.thinking, judgment.output_config), (None, None));
        assert!(judgment.thinks);
        assert_eq!(judgment.max_tokens, 32_768);
    }

    #[test]
    fn routine_work_thinks_as_little_as_each_model_allows() {
        // May switch thinking off.
        for id in ["claude-sonnet-5", "claude-opus-5", "claude-haiku-5-5"] {
            let s = settings(id, Workload::Routine);
            assert_eq!(s.thinking, Some(ThinkingParam::Disabled), "{id}");
            assert!(!s.thinks, "{id}");
            assert_eq!(s.max_tokens, REPLY_TOKENS, "{id}");
        }
        // Always thinks, default effort high: effort lowered to medium.
        let fable = settings("claude-fable-5-2", Workload::Routine);
        assert_eq!(fable.thinking, None);
        assert_eq!(
            fable.output_config,
            Some(OutputConfig {
                effort: Effort::Medium
            })
        );
        // Opus 5.5 already defaults to medium: nothing to send.
        let opus = settings("claude-opus-5-5", Workload::Routine);
        assert_eq!((opus.thinking, opus.output_config), (None, None));
        assert!(opus.thinks);
        // Thinking is opt-in: luminos never opts in.
        for id in ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-8"] {
            for workload in [Workload::Routine, Workload::Judgment] {
                let s = settings(id, workload);
                assert_eq!((s.thinking, s.output_config, s.thinks), (None, None, false));
                assert_eq!(s.max_tokens, REPLY_TOKENS);
            }
        }
    }

    #[test]
    fn settings_never_ask_what_a_model_refuses() {
        for model in MODELS {
            for workload in [Workload::Routine, Workload::Judgment] {
                let s = CallSettings::new(model, workload);
                assert!(s.max_tokens <= model.max_output, "{}", model.id);
                match s.thinking {
                    Some(ThinkingParam::BetweenTools) => assert!(model.between_tools),
                    Some(ThinkingParam::Disabled) => {
                        assert_eq!(model.thinking, Thinking::OnByDefault, "{}", model.id)
                    }
                    Some(ThinkingParam::Adaptive | ThinkingParam::Enabled { .. }) => {
                        panic!("{} is asked to think", model.id)
                    }
                    None => {}
                }
                if s.output_config.is_some() {
                    assert!(model.default_effort.is_some(), "{}", model.id);
                }
            }
        }
    }

    #[test]
    fn thinking_allowances_follow_the_settings() {
        assert_eq!(
            settings(DEFAULT_MODEL, Workload::Routine).expected_thinking_tokens(),
            BETWEEN_TOOLS_THINKING_TOKENS
        );
        assert_eq!(
            settings("claude-fable-5-2", Workload::Routine).expected_thinking_tokens(),
            ROUTINE_THINKING_TOKENS
        );
        assert_eq!(
            settings(DEFAULT_MODEL, Workload::Judgment).expected_thinking_tokens(),
            JUDGMENT_THINKING_TOKENS
        );
        assert_eq!(
            settings("claude-sonnet-4-5", Workload::Judgment).expected_thinking_tokens(),
            0
        );
    }

    #[test]
    fn budgets_come_from_the_window_the_cap_and_the_price_tier() {
        let budget = |id| context_budget(lookup(id).unwrap());
        assert_eq!(budget("claude-sonnet-4-5"), 140_000);
        assert_eq!(budget(DEFAULT_MODEL), 140_000);
        // Haiku 5.5 charges 5x past a 100K prompt.
        assert_eq!(budget("claude-haiku-5-5"), 70_000);
        // A small window: its share, unless the reply and the next turn's
        // room leave less.
        let window = |tokens| ModelFacts::of("qwen3-coder").with_window(tokens, "test");
        assert_eq!(context_budget(window(32_768).model), 32_768 * 7 / 10);
        assert_eq!(
            context_budget(window(8_192).model),
            8_192 - u64::from(MIN_REPLY_TOKENS) - NEXT_TURN_ROOM
        );
    }

    /// On every catalog model the window leaves the replies as they were;
    /// a small window given for a local model shares itself with the
    /// prompt, and never below the smallest reply.
    #[test]
    fn only_a_small_window_lowers_a_reply() {
        for model in MODELS {
            for workload in [Workload::Routine, Workload::Judgment] {
                let s = CallSettings::new(model, workload);
                let wanted = if s.thinks {
                    REPLY_TOKENS + THINKING_ROOM
                } else {
                    REPLY_TOKENS
                };
                assert_eq!(s.max_tokens, wanted.min(model.max_output), "{}", model.id);
            }
        }
        let window = |tokens| ModelFacts::of("qwen3-coder").with_window(tokens, "test");
        let judgment = |tokens| CallSettings::new(window(tokens).model, Workload::Judgment);
        assert_eq!(judgment(32_768).max_tokens, 4_096);
        assert_eq!(judgment(131_072).max_tokens, 16_384);
        assert_eq!(judgment(4_000).max_tokens, MIN_REPLY_TOKENS);
    }
}
