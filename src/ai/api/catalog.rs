//! The model catalog: every fact luminos uses about a model, in one table.
//!
//! Prices, context windows, output limits, thinking behaviour, the minimum
//! cacheable prompt, how many tokens a byte of text becomes, and where the
//! model is in its lifecycle. Cost accounting, `--estimate`, `--max-cost`,
//! the budget, the context guards and the live spend line all read it, so a
//! dollar figure is never a guess: when a model is not in the table, the
//! caller is told ([`ModelFacts::known`] is `false`) and says so to the user.
//!
//! Sources, read on 2026-11-23 (the pages' newest snapshots, dated by their
//! content):
//! - models overview, <https://platform.claude.com/docs/en/models/overview>
//!   (snapshot of 2026-11-09 or later: Fable 5.2, Opus 5.5, Sonnet 5.5,
//!   Haiku 5.5), and each model's overview page under
//!   `platform.claude.com/docs/*/models/<model>/overview` (2026-09-22 to
//!   2026-11-09);
//! - pricing, <https://platform.claude.com/docs/en/about-claude/pricing>
//!   (2026-09) and the release notes of 2026-10-07 (Sonnet 5.5 cache reads
//!   cut to $0.10) and 2026-11-09 (Fable 5.2 at $8/$40);
//! - model deprecations,
//!   <https://platform.claude.com/docs/en/about-claude/model-deprecations>,
//!   and the Sonnet 4.5 model page (deprecated, retires 2026-11-30, replaced
//!   by Sonnet 5.5);
//! - token counting, <https://platform.claude.com/docs/en/build-with-claude/token-counting>
//!   (Opus 4.7 and later, and the 5.x models, use a tokenizer that yields
//!   about 30% more tokens for the same text);
//! - adaptive thinking, effort and preserved thinking pages under
//!   `platform.claude.com/docs/en/build-with-claude/` (2026-10/11).
//!
//! - re-read on 2026-11-27 for `--batch` and `--price`: pricing
//!   (<https://platform.claude.com/docs/en/about-claude/pricing>: the batch
//!   discount is 50% of every rate, cache writes and reads included; a
//!   5-minute cache write is 1.25x the input price, a 1-hour write 2x, a
//!   read 0.1x), prompt caching
//!   (<https://platform.claude.com/docs/en/build-with-claude/prompt-caching>:
//!   `"ttl": "1h"` on `cache_control`, at most 4 breakpoints, entries of a
//!   longer lifetime before shorter ones) and batch processing
//!   (<https://platform.claude.com/docs/en/build-with-claude/batch-processing>:
//!   a batch can take longer than 5 minutes, so the guide suggests the
//!   1-hour lifetime for requests that share a prefix).
//!
//! A model the catalog does not know can be given its price with `--price`
//! ([`ModelFacts::with_price`]): the row then used is the stand-in's with
//! those prices, cache rates from the documented multipliers, so that
//! `--budget` and the cost figures mean something for a model behind a
//! gateway.
//!
//! Where the pages disagree or are silent (the minimum cacheable prompt of
//! Sonnet 4.6 is given as 1,024 in one snapshot and 2,048 in another; Haiku
//! 5.5's cache rates come from its tier table as reported by third parties),
//! the row says which value was chosen and why.

/// The model used when neither `--model` nor `LUMINOS_MODEL` names one: the
/// current Sonnet.
pub const DEFAULT_MODEL: &str = "claude-sonnet-5-5";

/// Prices in US dollars per million tokens, one per kind of token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    /// Plain input (after the last cache breakpoint).
    pub input: f64,
    /// Output, thinking included.
    pub output: f64,
    /// Writing a prefix to the 5-minute cache.
    pub cache_write_5m: f64,
    /// Writing a prefix to the 1-hour cache.
    pub cache_write_1h: f64,
    /// Reading a cached prefix.
    pub cache_read: f64,
}

impl Prices {
    /// The standard rates: cache writes at 1.25× (5 min) and 2× (1 h) the
    /// input price, reads at 0.1× (pricing page, prompt caching section,
    /// read 2026-11-27).
    pub(crate) const fn standard(input: f64, output: f64) -> Prices {
        Prices {
            input,
            output,
            cache_write_5m: input * 1.25,
            cache_write_1h: input * 2.0,
            cache_read: input / 10.0,
        }
    }

    /// Every kind of token at a dollar a million: prices that count tokens
    /// (a cost is the tokens in millions).
    pub(crate) const PER_TOKEN: Prices = Prices {
        input: 1.0,
        output: 1.0,
        cache_write_5m: 1.0,
        cache_write_1h: 1.0,
        cache_read: 1.0,
    };

    /// The standard rates with a cache read price of its own (the 5.x
    /// models read their cache at 0.025× to 0.05× the input price).
    const fn with_cache_read(self, cache_read: f64) -> Prices {
        Prices { cache_read, ..self }
    }

    /// Every rate multiplied by `factor` (the batch discount, a long-prompt
    /// tier).
    pub(crate) fn scaled(&self, factor: f64) -> Prices {
        Prices {
            input: self.input * factor,
            output: self.output * factor,
            cache_write_5m: self.cache_write_5m * factor,
            cache_write_1h: self.cache_write_1h * factor,
            cache_read: self.cache_read * factor,
        }
    }
}

/// The Message Batches API bills every token at half the listed rate
/// (pricing page, read 2026-11-27: the discount stacks with the cache
/// rates, the 1-hour write's included).
pub(crate) const BATCH_DISCOUNT: f64 = 0.5;

/// How long a cached prefix lives unless it is read again (each read starts
/// its lifetime over): the two lifetimes `cache_control` takes (prompt
/// caching page, read 2026-11-27), each written at its own price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CacheTtl {
    /// The default, `{"type": "ephemeral"}`: written at 1.25x the input
    /// price.
    FiveMinutes,
    /// `{"type": "ephemeral", "ttl": "1h"}`: written at 2x the input price;
    /// what a batch needs, whose rounds can each take longer than five
    /// minutes.
    OneHour,
}

impl Prices {
    /// The price of writing a prefix that lives `ttl`.
    pub(crate) fn cache_write(&self, ttl: CacheTtl) -> f64 {
        match ttl {
            CacheTtl::FiveMinutes => self.cache_write_5m,
            CacheTtl::OneHour => self.cache_write_1h,
        }
    }
}

/// A price tier by prompt length: a request whose prompt (input, cache
/// writes and cache reads) is above `above_tokens` pays `multiplier` times
/// every rate, output included (Haiku 5.5).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LongPromptTier {
    pub above_tokens: u64,
    pub multiplier: f64,
}

/// How a model thinks, and whether luminos can turn it off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Thinking {
    /// Thinking is opt-in (`{"type": "enabled", "budget_tokens": N}` or
    /// `{"type": "adaptive"}`) and off unless asked for. luminos does not
    /// ask, so these models answer without thinking blocks.
    OptIn,
    /// Adaptive thinking is on unless `{"type": "disabled"}` is sent.
    OnByDefault,
    /// Adaptive thinking is always on; `disabled` is refused with a 400.
    Always,
}

/// The effort levels of `output_config.effort`, lowest first.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    Low,
    Medium,
    High,
    XHigh,
    Max,
}

impl Effort {
    /// The value sent in `output_config.effort`.
    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
            Effort::XHigh => "xhigh",
            Effort::Max => "max",
        }
    }
}

/// Where a model is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    /// Current or legacy: no retirement date has been announced.
    Active,
    /// Still served until `retires` (an ISO date), then gone; `replacement`
    /// is the id the deprecation notice recommends (or the family's current
    /// model where the notice names none).
    Deprecated {
        retires: &'static str,
        replacement: &'static str,
    },
    /// No longer served by the Claude API since `retired` (an ISO date).
    Retired {
        retired: &'static str,
        replacement: &'static str,
    },
}

/// Everything luminos knows about one model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    /// The id luminos sends for it (the dateless id or the alias).
    pub id: &'static str,
    /// Other ids that name the same model (dated snapshots).
    pub aliases: &'static [&'static str],
    /// The marketing name, for messages.
    pub name: &'static str,
    pub prices: Prices,
    /// A higher rate for long prompts, if the model has one.
    pub long_prompt_tier: Option<LongPromptTier>,
    /// The context window in tokens (input and output together).
    pub context_window: u64,
    /// The largest `max_tokens` the model accepts (interactive calls).
    pub max_output: u32,
    pub thinking: Thinking,
    /// The effort the model uses when none is sent; `None` when the model
    /// does not take `output_config.effort`.
    pub default_effort: Option<Effort>,
    /// Thinking blocks are bound to the conversation that produced them: a
    /// continued turn must send them back unaltered, and nothing before them
    /// may change, or the API answers 400 (preserved-thinking prefix check).
    pub binds_thinking: bool,
    /// The model takes `thinking: {"type": "between_tools"}` (no thinking up
    /// front, short notes between tool calls): Sonnet 5.5 only, where it is
    /// the lowest setting (Sonnet 5.5 "what's new" page, 2026-09-28).
    pub between_tools: bool,
    /// Below this many tokens a prefix is not cached (no error, no write).
    pub min_cacheable_tokens: u64,
    /// Tokens per byte of typical source text: 1 token per 4 bytes with the
    /// older tokenizer, about 30% more with the newer one.
    pub tokens_per_byte: f64,
    pub lifecycle: Lifecycle,
}

/// Tokens per byte with the tokenizer of the Claude 4.6 generation and
/// earlier: the 4 bytes a token the estimate has always assumed.
const OLD_TOKENIZER: f64 = 0.25;
/// Opus 4.7 and later, and every 5.x model: the same text gives about 30%
/// more tokens (token counting page).
const NEW_TOKENIZER: f64 = OLD_TOKENIZER * 1.3;

const fn model(id: &'static str, name: &'static str, prices: Prices) -> Model {
    Model {
        id,
        aliases: &[],
        name,
        prices,
        long_prompt_tier: None,
        context_window: 1_000_000,
        max_output: 128_000,
        thinking: Thinking::OptIn,
        default_effort: Some(Effort::High),
        binds_thinking: false,
        between_tools: false,
        min_cacheable_tokens: 1024,
        tokens_per_byte: NEW_TOKENIZER,
        lifecycle: Lifecycle::Active,
    }
}

/// The Claude 4.5 generation: dated ids with an alias, a 200K window, 64K
/// of output, opt-in extended thinking and the older tokenizer.
const fn gen_4_5(
    id: &'static str,
    dated: &'static [&'static str],
    name: &'static str,
    prices: Prices,
) -> Model {
    Model {
        aliases: dated,
        context_window: 200_000,
        max_output: 64_000,
        min_cacheable_tokens: 4096,
        tokens_per_byte: OLD_TOKENIZER,
        ..model(id, name, prices)
    }
}

/// The Claude 4 models before 4.5: a 200K window, the old tokenizer and no
/// effort parameter.
const fn gen_4(id: &'static str, name: &'static str, prices: Prices) -> Model {
    Model {
        context_window: 200_000,
        tokens_per_byte: OLD_TOKENIZER,
        default_effort: None,
        ..model(id, name, prices)
    }
}

/// Retired on `retired` (the API no longer serves it); the notice names
/// `replacement`.
const fn retired(retired: &'static str, replacement: &'static str) -> Lifecycle {
    Lifecycle::Retired {
        retired,
        replacement,
    }
}

/// The 5.5 family and Fable 5.1/5.2: thinking they bind to the conversation,
/// and a 512-token cache minimum.
const fn bound(m: Model) -> Model {
    Model {
        binds_thinking: true,
        min_cacheable_tokens: 512,
        ..m
    }
}

/// Every model luminos knows, newest families first. The first row of a
/// family is its current model, used to price an unknown id of that family.
pub(crate) static MODELS: &[Model] = &[
    // Sonnet
    bound(Model {
        thinking: Thinking::Always,
        between_tools: true,
        ..model(
            "claude-sonnet-5-5",
            "Claude Sonnet 5.5",
            Prices::standard(2.0, 10.0).with_cache_read(0.10),
        )
    }),
    Model {
        thinking: Thinking::OnByDefault,
        ..model(
            "claude-sonnet-5",
            "Claude Sonnet 5",
            Prices::standard(2.0, 10.0).with_cache_read(0.20),
        )
    },
    Model {
        // One snapshot of the caching page says 1,024, a later one 2,048:
        // the larger is the safe assumption for estimates.
        min_cacheable_tokens: 2048,
        tokens_per_byte: OLD_TOKENIZER,
        ..model(
            "claude-sonnet-4-6",
            "Claude Sonnet 4.6",
            Prices::standard(3.0, 15.0),
        )
    },
    Model {
        min_cacheable_tokens: 1024,
        default_effort: None,
        lifecycle: Lifecycle::Deprecated {
            retires: "2026-11-30",
            replacement: "claude-sonnet-5-5",
        },
        ..gen_4_5(
            "claude-sonnet-4-5",
            &["claude-sonnet-4-5-20250929"],
            "Claude Sonnet 4.5",
            Prices::standard(3.0, 15.0),
        )
    },
    Model {
        max_output: 64_000,
        // The retirement notice names Sonnet 4.6 (release notes via the
        // Python SDK's table of deprecated models).
        lifecycle: retired("2026-06-15", "claude-sonnet-4-6"),
        aliases: &["claude-sonnet-4-20250514", "claude-sonnet-4-0"],
        ..gen_4(
            "claude-sonnet-4",
            "Claude Sonnet 4",
            Prices::standard(3.0, 15.0),
        )
    },
    // Opus
    bound(Model {
        thinking: Thinking::Always,
        default_effort: Some(Effort::Medium),
        ..model(
            "claude-opus-5-5",
            "Claude Opus 5.5",
            Prices::standard(4.0, 20.0).with_cache_read(0.20),
        )
    }),
    Model {
        thinking: Thinking::OnByDefault,
        min_cacheable_tokens: 512,
        ..model(
            "claude-opus-5",
            "Claude Opus 5",
            Prices::standard(5.0, 25.0),
        )
    },
    model(
        "claude-opus-4-8",
        "Claude Opus 4.8",
        Prices::standard(5.0, 25.0),
    ),
    Model {
        min_cacheable_tokens: 2048,
        ..model(
            "claude-opus-4-7",
            "Claude Opus 4.7",
            Prices::standard(5.0, 25.0),
        )
    },
    Model {
        min_cacheable_tokens: 4096,
        tokens_per_byte: OLD_TOKENIZER,
        ..model(
            "claude-opus-4-6",
            "Claude Opus 4.6",
            Prices::standard(5.0, 25.0),
        )
    },
    gen_4_5(
        "claude-opus-4-5",
        &["claude-opus-4-5-20251101"],
        "Claude Opus 4.5",
        Prices::standard(5.0, 25.0),
    ),
    Model {
        max_output: 32_000,
        lifecycle: retired("2026-08-05", "claude-opus-5-5"),
        aliases: &["claude-opus-4-1-20250805"],
        ..gen_4(
            "claude-opus-4-1",
            "Claude Opus 4.1",
            Prices::standard(15.0, 75.0),
        )
    },
    Model {
        max_output: 32_000,
        // The retirement notice names Opus 4.8.
        lifecycle: retired("2026-06-15", "claude-opus-4-8"),
        aliases: &["claude-opus-4-20250514", "claude-opus-4-0"],
        ..gen_4(
            "claude-opus-4",
            "Claude Opus 4",
            Prices::standard(15.0, 75.0),
        )
    },
    // Haiku
    bound(Model {
        thinking: Thinking::OnByDefault,
        default_effort: Some(Effort::Medium),
        long_prompt_tier: Some(LongPromptTier {
            above_tokens: 100_000,
            multiplier: 5.0,
        }),
        ..model(
            "claude-haiku-5-5",
            "Claude Haiku 5.5",
            Prices::standard(0.10, 0.50),
        )
    }),
    Model {
        default_effort: None,
        ..gen_4_5(
            "claude-haiku-4-5",
            &["claude-haiku-4-5-20251001"],
            "Claude Haiku 4.5",
            Prices::standard(1.0, 5.0),
        )
    },
    // Fable and Mythos (one model each, Mythos for verified organisations)
    bound(Model {
        thinking: Thinking::Always,
        ..model(
            "claude-fable-5-2",
            "Claude Fable 5.2",
            Prices::standard(8.0, 40.0).with_cache_read(0.20),
        )
    }),
    bound(Model {
        thinking: Thinking::Always,
        ..model(
            "claude-mythos-5-2",
            "Claude Mythos 5.2",
            Prices::standard(8.0, 40.0).with_cache_read(0.20),
        )
    }),
    bound(Model {
        thinking: Thinking::Always,
        ..model(
            "claude-fable-5-1",
            "Claude Fable 5.1",
            Prices::standard(10.0, 50.0).with_cache_read(0.25),
        )
    }),
    bound(Model {
        thinking: Thinking::Always,
        ..model(
            "claude-mythos-5-1",
            "Claude Mythos 5.1",
            Prices::standard(10.0, 50.0).with_cache_read(0.25),
        )
    }),
    Model {
        thinking: Thinking::Always,
        min_cacheable_tokens: 512,
        ..model(
            "claude-fable-5",
            "Claude Fable 5",
            Prices::standard(10.0, 50.0).with_cache_read(1.0),
        )
    },
    Model {
        thinking: Thinking::Always,
        min_cacheable_tokens: 512,
        ..model(
            "claude-mythos-5",
            "Claude Mythos 5",
            Prices::standard(10.0, 50.0).with_cache_read(1.0),
        )
    },
];

/// The families an unknown id is matched to by name, with the row whose
/// prices it then assumes (the family's current model).
const FAMILIES: &[(&str, &str)] = &[
    ("sonnet", "claude-sonnet-5-5"),
    ("opus", "claude-opus-5-5"),
    ("haiku", "claude-haiku-5-5"),
    ("fable", "claude-fable-5-2"),
    ("mythos", "claude-mythos-5-2"),
];

/// The most dollars per million tokens `--price` takes: far above every
/// listed price (Opus 4.1's $75 output), far below what would overflow a
/// bill.
pub const MAX_GIVEN_PRICE: f64 = 1_000_000.0;

/// The largest context window `--context-window` takes, in tokens: far
/// above any model's (the catalog's largest is a million).
pub const MAX_GIVEN_WINDOW: u64 = 100_000_000;

/// The catalog row of `id` (its id or one of its aliases), if luminos knows
/// the model.
pub fn lookup(id: &str) -> Option<&'static Model> {
    let id = id.trim();
    MODELS.iter().find(|m| {
        m.id.eq_ignore_ascii_case(id) || m.aliases.iter().any(|a| a.eq_ignore_ascii_case(id))
    })
}

/// What luminos assumes about a model: its own row when it is known, else
/// the current model of the family its name mentions, else the default
/// model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelFacts {
    /// The row the figures use.
    pub model: &'static Model,
    /// The id asked for is in the catalog (the figures are its own).
    pub known: bool,
    /// Its prices are the ones `--price` gave ([`ModelFacts::with_price`]).
    pub price_given: bool,
    /// Where the row's context window comes from.
    pub window: WindowSource,
    /// Its prices count tokens, a dollar a million of every kind
    /// ([`ModelFacts::counting_tokens`]): the facts a run held by a token
    /// budget plans with.
    pub counts_tokens: bool,
}

/// Where the context window a run is sized to comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    /// The catalog's row for the model.
    Catalog,
    /// The row of the stand-in a model the catalog does not know borrows.
    StandIn,
    /// The user gave it (`--context-window` or `LUMINOS_CONTEXT_WINDOW`,
    /// named here).
    Given(&'static str),
}

impl ModelFacts {
    /// These facts with the price `--price` gave: `input` and `output`
    /// dollars per million tokens, cache writes and reads by the documented
    /// multipliers of the input price ([`Prices::standard`]), no long-prompt
    /// tier. Every other fact stays the model's (or the stand-in's, for a
    /// model the catalog does not know). The row is leaked so that it lives
    /// as long as the catalog's own: one per run.
    pub fn with_price(self, input: f64, output: f64) -> ModelFacts {
        let row: &'static Model = Box::leak(Box::new(Model {
            prices: Prices::standard(input, output),
            long_prompt_tier: None,
            ..*self.model
        }));
        ModelFacts {
            model: row,
            price_given: true,
            ..self
        }
    }

    /// These facts with a context window of `tokens`, as the user gave it
    /// (`by` names the flag or variable): for a model the catalog does not
    /// know (a local model's window is far smaller than the stand-in's), or
    /// to lower a known one's. Every other fact stays as it was; the row is
    /// leaked as in [`ModelFacts::with_price`]. The window, the purse and
    /// `--estimate` all read it from here.
    pub fn with_window(self, tokens: u64, by: &'static str) -> ModelFacts {
        let row: &'static Model = Box::leak(Box::new(Model {
            context_window: tokens,
            ..*self.model
        }));
        ModelFacts {
            model: row,
            window: WindowSource::Given(by),
            ..self
        }
    }

    /// These facts priced in tokens: every kind of token at a dollar a
    /// million, no long-prompt tier, so a cost is the tokens in millions and
    /// a token budget plans as a dollar one does (the batch discount does
    /// not apply: a token is a token). Every other fact stays; the row is
    /// leaked as in [`ModelFacts::with_price`].
    pub fn counting_tokens(self) -> ModelFacts {
        let row: &'static Model = Box::leak(Box::new(Model {
            prices: Prices::PER_TOKEN,
            long_prompt_tier: None,
            ..*self.model
        }));
        ModelFacts {
            model: row,
            counts_tokens: true,
            ..self
        }
    }

    /// Which context window these facts size a run to, and where it comes
    /// from, in one line (the run's notes say it).
    pub fn window_note(&self) -> String {
        let tokens = crate::text::format_thousands(self.model.context_window);
        match self.window {
            WindowSource::Catalog => format!(
                "requests were sized to a context window of {tokens} tokens, the catalog's \
                 for {}",
                self.model.name
            ),
            WindowSource::StandIn => format!(
                "requests were sized to a context window of {tokens} tokens, borrowed from \
                 {} because the catalog does not know the model; give its own with \
                 --context-window",
                self.model.name
            ),
            WindowSource::Given(by) => {
                format!("requests were sized to a context window of {tokens} tokens, from {by}")
            }
        }
    }

    /// Whether the figures priced with these facts are the model's own
    /// (the catalog's or the ones given), not a stand-in's.
    pub fn prices_known(&self) -> bool {
        self.known || self.price_given
    }

    /// The catalog's facts for `id`.
    pub fn of(id: &str) -> ModelFacts {
        if let Some(model) = lookup(id) {
            return ModelFacts {
                model,
                known: true,
                price_given: false,
                window: WindowSource::Catalog,
                counts_tokens: false,
            };
        }
        let lower = id.to_ascii_lowercase();
        let stand_in = FAMILIES
            .iter()
            .find(|(family, _)| lower.contains(family))
            .map_or(DEFAULT_MODEL, |(_, current)| current);
        ModelFacts {
            model: lookup(stand_in).unwrap_or(&MODELS[0]),
            known: false,
            price_given: false,
            window: WindowSource::StandIn,
            counts_tokens: false,
        }
    }

    /// The one-line warning to print before using these facts, if any:
    /// an unknown model (whose prices are assumed), a deprecated one (with
    /// its retirement date and replacement) or a retired one. `today` is
    /// an ISO date (`YYYY-MM-DD`). The model is named as asked, escaped
    /// to stay on the one line (`--model` takes any text).
    pub fn warning(&self, asked: &str, today: &str) -> Option<String> {
        let asked = crate::text::escape_line(asked);
        if !self.known {
            // A model priced with --price needs no warning about its price
            // (and the stand-in's lifecycle is not its own).
            if self.price_given {
                return None;
            }
            let m = self.model;
            return Some(format!(
                "model '{asked}' is not in luminos's catalog, so its price is unknown; \
                 costs and budgets assume {}'s prices (${} input / ${} output per million tokens)",
                m.name,
                trim_price(m.prices.input),
                trim_price(m.prices.output)
            ));
        }
        match self.model.lifecycle {
            Lifecycle::Active => None,
            Lifecycle::Deprecated {
                retires,
                replacement,
            } if today < retires => Some(format!(
                "model '{asked}' is deprecated and retires on {retires}; \
                 its replacement is {replacement} (--model {replacement})"
            )),
            Lifecycle::Deprecated {
                retires: retired,
                replacement,
            }
            | Lifecycle::Retired {
                retired,
                replacement,
            } => Some(format!(
                "model '{asked}' was retired on {retired} and the API no longer serves it; \
                 use {replacement} instead (--model {replacement})"
            )),
        }
    }
}

/// `2.5` → `2.50`, `3` → `3`, `0.1` → `0.10`: prices as the pricing page
/// writes them.
fn trim_price(price: f64) -> String {
    if price.fract() == 0.0 {
        format!("{price:.0}")
    } else {
        format!("{price:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table, pinned: a change to any model fact must change this test,
    /// with a source for the new value in the row's comment.
    #[test]
    fn the_catalog_is_pinned() {
        let rows: Vec<String> = MODELS
            .iter()
            .map(|m| {
                format!(
                    "{} {:?} in={} out={} w5m={} w1h={} read={} tier={:?} window={} max_out={} \
                     thinking={:?} effort={:?} binds={} between_tools={} min_cache={} tpb={} {:?}",
                    m.id,
                    m.aliases,
                    m.prices.input,
                    m.prices.output,
                    m.prices.cache_write_5m,
                    m.prices.cache_write_1h,
                    m.prices.cache_read,
                    m.long_prompt_tier.map(|t| (t.above_tokens, t.multiplier)),
                    m.context_window,
                    m.max_output,
                    m.thinking,
                    m.default_effort,
                    m.binds_thinking,
                    m.between_tools,
                    m.min_cacheable_tokens,
                    m.tokens_per_byte,
                    m.lifecycle,
                )
            })
            .collect();
        insta::assert_snapshot!(rows.join("\n"));
    }

    #[test]
    fn ids_and_aliases_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for m in MODELS {
            for id in std::iter::once(&m.id).chain(m.aliases) {
                assert!(seen.insert(*id), "{id} is listed twice");
                assert!(
                    id.starts_with("claude-")
                        && id
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                    "{id}"
                );
            }
        }
    }

    #[test]
    fn dates_are_iso_and_replacements_are_known() {
        for m in MODELS {
            let (date, replacement) = match m.lifecycle {
                Lifecycle::Active => continue,
                Lifecycle::Deprecated {
                    retires,
                    replacement,
                } => (retires, replacement),
                Lifecycle::Retired {
                    retired,
                    replacement,
                } => (retired, replacement),
            };
            assert!(
                chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").is_ok(),
                "{}: {date}",
                m.id
            );
            let next = lookup(replacement).unwrap_or_else(|| panic!("{}: {replacement}", m.id));
            assert_eq!(next.lifecycle, Lifecycle::Active, "{}", m.id);
        }
    }

    #[test]
    fn the_default_is_a_current_sonnet() {
        let m = lookup(DEFAULT_MODEL).unwrap();
        assert_eq!(m.lifecycle, Lifecycle::Active);
        assert!(m.id.contains("sonnet"));
        for (_, current) in FAMILIES {
            assert_eq!(lookup(current).unwrap().lifecycle, Lifecycle::Active);
        }
    }

    #[test]
    fn lookup_takes_ids_and_dated_aliases() {
        assert_eq!(
            lookup("claude-sonnet-4-5-20250929").unwrap().id,
            "claude-sonnet-4-5"
        );
        assert_eq!(
            lookup(" CLAUDE-SONNET-5-5 ").unwrap().id,
            "claude-sonnet-5-5"
        );
        assert!(lookup("claude-sonnet-9").is_none());
    }

    #[test]
    fn unknown_models_borrow_their_family_and_say_so() {
        let facts = ModelFacts::of("claude-opus-9-preview");
        assert!(!facts.known);
        assert_eq!(facts.model.id, "claude-opus-5-5");
        let facts = ModelFacts::of("my-proxy-model");
        assert_eq!(facts.model.id, DEFAULT_MODEL);
        let warning = facts.warning("my-proxy-model", "2026-11-23").unwrap();
        assert_eq!(
            warning,
            "model 'my-proxy-model' is not in luminos's catalog, so its price is unknown; \
             costs and budgets assume Claude Sonnet 5.5's prices ($2 input / $10 output per \
             million tokens)"
        );
    }

    #[test]
    fn a_given_price_prices_a_model_the_catalog_does_not_know() {
        let id = "local-model";
        let facts = ModelFacts::of(id).with_price(0.5, 1.5);
        assert!(!facts.known && facts.price_given && facts.prices_known());
        assert!(!ModelFacts::of(id).prices_known());
        let p = facts.model.prices;
        assert_eq!((p.input, p.output), (0.5, 1.5));
        // Cache rates by the documented multipliers of the input price.
        assert_eq!(
            (p.cache_write_5m, p.cache_write_1h, p.cache_read),
            (0.625, 1.0, 0.05)
        );
        // The rest is the stand-in's, and no warning is needed.
        assert_eq!(
            facts.model.context_window,
            lookup(DEFAULT_MODEL).unwrap().context_window
        );
        assert_eq!(facts.warning(id, "2026-11-27"), None);
        // A local model: free.
        let free = ModelFacts::of(id).with_price(0.0, 0.0);
        assert_eq!(free.model.prices.output, 0.0);
        // A known model keeps its other facts and its lifecycle warning.
        let facts = ModelFacts::of("claude-opus-4-0").with_price(1.0, 2.0);
        assert!(facts.known && facts.price_given);
        assert_eq!(facts.model.prices.input, 1.0);
        assert_eq!(facts.model.max_output, 32_000);
        assert!(
            facts
                .warning("claude-opus-4-0", "2026-11-27")
                .unwrap()
                .contains("was retired")
        );
        // The catalog's own row is untouched.
        assert_eq!(lookup("claude-opus-4-0").unwrap().prices.input, 15.0);
    }

    #[test]
    fn lifecycle_warnings_follow_the_date() {
        let facts = ModelFacts::of("claude-sonnet-4-5");
        assert_eq!(
            facts.warning("claude-sonnet-4-5", "2026-11-29").unwrap(),
            "model 'claude-sonnet-4-5' is deprecated and retires on 2026-11-30; its replacement \
             is claude-sonnet-5-5 (--model claude-sonnet-5-5)"
        );
        assert!(
            facts
                .warning("claude-sonnet-4-5", "2026-11-30")
                .unwrap()
                .contains("was retired on 2026-11-30")
        );
        assert_eq!(
            ModelFacts::of(DEFAULT_MODEL).warning(DEFAULT_MODEL, "2026-11-30"),
            None
        );
    }
}
