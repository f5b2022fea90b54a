//! `luminos ask TARGET QUESTION`: one agent answers one question about a
//! tree, from what its investigation cached and from its files.
//!
//! [`answer`] is the whole of it, for the binary and for any other caller
//! (an MCP server): it needs no terminal, prints nothing on stdout, and
//! reports progress on the [`Progress`] it is given. It
//! - scans the tree (the scope the tools keep to, and the file list its
//!   citations are checked against);
//! - reads the cached investigation without changing it
//!   ([`crate::cache::Cache::find_existing`] takes no lock and writes
//!   nothing), or, for a tree never investigated, takes the scan instead
//!   and says an investigation would give better answers;
//! - runs one conversation (`context.rs` chooses what it is shown) with
//!   the dir loop's read-only tools and `read_cache`, sandboxed, redacted
//!   and framed as every tool result is, which records nothing in the cache
//!   ([`ToolContext::records`]): no log line, no flag;
//! - prices each request at its worst case before it goes, within the
//!   question's own budget: its session's purse, which each request may
//!   take half of, and the whole rest of for a last one
//!   ([`crate::ai::engine::purse::Pace::Alone`]);
//! - checks every path and symbol the answer cites against the tree
//!   ([`crate::grounding::cite`]).
//!
//! The answer is not recorded anywhere: the cache is the investigation's,
//! and a question leaves it exactly as it was.

pub(crate) mod context;
mod known;

use serde::Serialize;
use serde_json::Value;

use crate::ai::api::settings::Workload;
use crate::ai::api::{ApiError, Usage};
use crate::ai::engine::agent::{Agent, MALFORMED_IN_A_ROW, ModelRefusal, Printer};
use crate::ai::engine::conversation::{CallEnd, Closing, Policy, converse as drive};
use crate::ai::engine::purse::{Meter, OverBudget, Pace};
use crate::ai::engine::session::Session;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::survey::format_survey_signals;
use crate::ai::prompts::{self, AskPrompt, AskQuestionPrompt, PromptError};
use crate::ai::rules::room::{Part, Room};
use crate::ai::rules::tree_view::prompt_tree;
use crate::ai::tools::{self, FatalToolError, ToolContext, Toolbox};
use crate::config::Config;
use crate::grounding::{CheckedCitation, Scope, cite, outlines::Source};
use crate::money::Usd;
use crate::progress::Progress;
use crate::report::ReportTokens;
use crate::scan::{self, BaseScan, ScanFilter, ScannedDirs};
use crate::text::{escape_control, escape_line};
use known::{Learned, Scratch, ScratchError};

/// Turns the question's agent may take.
pub(crate) const ASK_MAX_TURNS: u32 = 12;
/// The longest question, in characters.
pub(crate) const MAX_QUESTION_CHARS: usize = 8_000;
/// How deep the tree of a tree never investigated is shown.
const SCAN_TREE_DEPTH: usize = 3;
/// The `directory` name of the conversation's lines.
const ASK_NAME: &str = "(ask)";

/// The note of an answer about a tree never investigated.
pub(crate) const NOT_INVESTIGATED_NOTE: &str = "this tree was never investigated, so the answer \
rests on the scan and the files the agent read; run `luminos TARGET` first for better answers";

/// The note of an answer when the cached investigation was made with
/// `--no-redact` and this question redacts.
pub(crate) const UNREDACTED_NOTE: &str = "the cached investigation was made with --no-redact and \
its summaries may quote secrets, so it was not used (ask with --no-redact to use it); the answer \
rests on the scan and the files the agent read";

/// The answer to one question.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Answer {
    pub question: String,
    pub answer: String,
    /// Every distinct path and symbol the answer cites, checked.
    pub citations: Vec<CheckedCitation>,
    pub cost: Cost,
    /// Why the answer may be weaker than it could be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What answering cost.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Cost {
    pub usd: Usd,
    /// The question's budget (`null`: no ceiling).
    pub budget_usd: Option<Usd>,
    pub api_requests: u64,
    #[serde(with = "ReportTokens")]
    pub tokens: Usage,
}

/// Why no answer came.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AskError {
    /// The question is empty or blank.
    #[error("the question is empty; ask something, such as luminos ask . \"What does it do?\"")]
    EmptyQuestion,
    /// The question is longer than [`MAX_QUESTION_CHARS`].
    #[error("the question is {0} characters long; ask one of at most {MAX_QUESTION_CHARS}")]
    LongQuestion(usize),
    /// No credential is set.
    #[error(
        "luminos ask needs an Anthropic API key: export ANTHROPIC_API_KEY=<your key> (or \
         ANTHROPIC_AUTH_TOKEN) and ask again"
    )]
    NoCredential,
    /// A failure that would end an investigation: an unreachable endpoint,
    /// a rejected key, an unknown model, billing, a bad base URL.
    #[error(transparent)]
    Failed(InvestigationError),
    /// An API call failed after its retries.
    #[error("the API call failed: {0}")]
    Api(ApiError),
    /// A budget (this one's, in dollars or in tokens) cannot pay for the
    /// next request; `limit` is that budget, in its meter.
    #[error("{}", budget_error(over, *limit))]
    Budget { over: OverBudget, limit: f64 },
    /// The model declined to answer.
    #[error("no answer: {}", .0.describe())]
    Declined(ModelRefusal),
    /// The turns ran out without an answer.
    #[error("no answer after {0} turns")]
    OutOfTurns(u32),
    /// The model's tool calls kept being malformed.
    #[error("no answer: the model made {MALFORMED_IN_A_ROW} malformed tool calls in a row")]
    Malformed,
    /// The conversation outgrew the model's context window.
    #[error("no answer: the conversation outgrew the model's context window")]
    ContextFull,
    /// A tool failed in a way that makes going on unsafe.
    #[error(transparent)]
    Tool(#[from] FatalToolError),
    /// A prompt did not render.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The scan (with the cache's read) stopped before it ended.
    #[error("could not prepare the question: the scan stopped: {0}")]
    Scan(#[source] tokio::task::JoinError),
    /// The scratch cache of a tree never investigated could not be made.
    #[error("could not prepare the question: {0}")]
    Scratch(#[from] ScratchError),
}

impl AskError {
    /// Whether the question itself is at fault (a usage error).
    pub(crate) fn is_usage(&self) -> bool {
        matches!(self, AskError::EmptyQuestion | AskError::LongQuestion(_))
    }

    /// Whether an API call failed (the run's exit status 3).
    pub(crate) fn is_api_failure(&self) -> bool {
        matches!(self, AskError::Failed(_) | AskError::Api(_))
    }
}

/// No answer, and what was spent trying.
#[derive(Debug)]
pub(crate) struct AskFailure {
    pub error: AskError,
    pub api_requests: u64,
    pub cost_usd: Usd,
}

impl std::fmt::Display for AskFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.error)?;
        if self.api_requests > 0 {
            write!(
                f,
                " (after {} API request{}, about {})",
                self.api_requests,
                if self.api_requests == 1 { "" } else { "s" },
                self.cost_usd.precise()
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for AskFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl From<AskError> for AskFailure {
    fn from(error: AskError) -> AskFailure {
        AskFailure {
            error,
            api_requests: 0,
            cost_usd: Usd::ZERO,
        }
    }
}

/// `question` as the agent is given it: trimmed, with control characters
/// (other than newlines and tabs) escaped, so nothing in it can drive a
/// terminal when it is printed back; an error when it is empty or too long.
pub(crate) fn checked_question(question: &str) -> Result<String, AskError> {
    let question = question.trim();
    if question.is_empty() {
        return Err(AskError::EmptyQuestion);
    }
    let chars = question.chars().count();
    if chars > MAX_QUESTION_CHARS {
        return Err(AskError::LongQuestion(chars));
    }
    Ok(escape_control(question).into_owned())
}

/// Answer `question` about `config.target`, within `config`'s budget (the
/// caller resolves the question's default, [`DEFAULT_ASK_BUDGET_USD`]).
/// Progress goes to `progress`; nothing goes to stdout.
pub(crate) async fn answer(
    config: &Config,
    question: &str,
    progress: &Progress,
) -> Result<Answer, AskFailure> {
    let question = checked_question(question)?;
    if config.api.auth.is_none() {
        return Err(AskError::NoCredential.into());
    }
    progress.ai(&format!("Question: {}", escape_line(&question)));

    let ((scan, walked), known) = scan_and_read(config, progress).await?;
    say_known(&known, progress);

    let filter = ScanFilter::new(&config.target_canonical, &config.scan);
    let (system, kickoff) = question_prompts(config, &question, &scan, &known, &filter)?;
    let ready = (system, kickoff.as_str(), &walked);
    let (text, cost) = run_agent(config, progress, &known, &filter, ready).await?;

    let grounding = Scope::from_scan(&scan, &config.target, &config.target_canonical);
    let citations = cite(
        &grounding,
        Source::Disk(config.target_canonical.clone()),
        &text,
    );
    Ok(Answer {
        question,
        answer: text,
        citations,
        cost,
        note: known.note.map(str::to_string),
    })
}

/// Scan the tree and read what its investigation cached, off the async
/// threads: both block.
async fn scan_and_read(
    config: &Config,
    progress: &Progress,
) -> Result<((BaseScan, ScannedDirs), Learned), AskError> {
    let (config, progress) = (config.clone(), progress.clone());
    tokio::task::spawn_blocking(move || {
        let scan = scan::scan_with_dirs(&config.target, &config.scan, &progress);
        (scan, Learned::read(&config))
    })
    .await
    .map_err(AskError::Scan)
}

/// Say on `progress` what the answer rests on: the investigation's
/// summaries, or the note of why there are none.
fn say_known(known: &Learned, progress: &Progress) {
    match &known.cache {
        Some(cache) => progress.ai(&format!(
            "Investigation {}: {} directory summaries, {} file summaries{}.",
            cache.id(),
            known.dirs.len(),
            known.files.len(),
            if known.verdict.is_some() {
                ", the verdict"
            } else {
                ""
            }
        )),
        None => progress.ai(&format!("Note: {}.", known.note.unwrap_or_default())),
    }
}

/// The context the question is shown: what the investigation cached that
/// bears on it, or for a tree never investigated, the scan's tree and
/// signals, each part within its share of the model's room.
fn question_context(
    config: &Config,
    question: &str,
    scan: &BaseScan,
    known: &Learned,
    filter: &ScanFilter,
) -> String {
    let room = Room::of(config.investigation.model_facts.model, Workload::Routine);
    let shares = context::Shares::within(room.bytes(Part::AskContext));
    match &known.cache {
        Some(_) => context::investigated_context(
            question,
            &context::Cached {
                verdict: known
                    .verdict
                    .as_ref()
                    .map(|(brief, detailed)| (brief.as_str(), detailed.as_str())),
                dirs: &known.dirs,
                files: &known.files,
                flags: &known.flags,
            },
            shares,
        ),
        None => context::scan_context(
            &prompt_tree(
                &config.target_canonical,
                filter,
                SCAN_TREE_DEPTH,
                room.bytes(Part::Tree),
            ),
            &format_survey_signals(&scan.survey_signals, room.bytes(Part::Signals)),
            shares,
        ),
    }
}

/// The question's agent, offered the ask tools; `read_cache` only when
/// there is an investigation to read.
fn ask_agent(system: String, kickoff: &str, investigated: bool, progress: &Progress) -> Agent {
    let offered: Vec<_> = tools::definitions(Toolbox::Ask)
        .into_iter()
        .filter(|tool| investigated || tool.name != "read_cache")
        .collect();
    Agent::new(
        Toolbox::Ask,
        system,
        kickoff,
        offered,
        prompts::nudge::ASK,
        Printer::Quiet(progress.clone()),
    )
}

/// The question's system prompt (the target, what is known of it, and the
/// context chosen for the question) and its kickoff.
fn question_prompts(
    config: &Config,
    question: &str,
    scan: &BaseScan,
    known: &Learned,
    filter: &ScanFilter,
) -> Result<(String, String), AskError> {
    let context = question_context(config, question, scan, known, filter);
    let system = system_prompt(
        &config.target_canonical.to_string_lossy(),
        &known.knowledge(),
        &context,
    )
    .map_err(AskError::from)?;
    let kickoff = AskQuestionPrompt { question }
        .render()
        .map_err(AskError::from)?;
    Ok((system, kickoff))
}

/// Run the question's agent (its system prompt and kickoff, over the
/// directories `walked`) on a session of its own, with the tools kept to
/// `filter`'s scope and recording nothing: the answer's text and what it
/// cost, or why none came and what was spent trying.
async fn run_agent(
    config: &Config,
    progress: &Progress,
    known: &Learned,
    filter: &ScanFilter,
    (system, kickoff, walked): (String, &str, &ScannedDirs),
) -> Result<(String, Cost), AskFailure> {
    let session = Session::for_run(config, progress).map_err(|err| match err {
        InvestigationError::NoCredential => AskError::NoCredential,
        other => AskError::Failed(other),
    })?;
    // A tree never investigated has no cache to read: the tools get an
    // empty one of their own, and no read_cache.
    let scratch;
    let cache = match &known.cache {
        Some(cache) => cache,
        None => {
            scratch = Scratch::new(&config.target_canonical).map_err(AskError::Scratch)?;
            &scratch.cache
        }
    };
    // Every value of the tree known before the first tool result (see
    // `tools::learning`); the cache stays as it was.
    let learner = (session.shared_redactor(), session.first_request());
    let files = walked.files_by_dir();
    tools::learning::start_learning(
        learner,
        &config.target_canonical,
        files,
        (cache, false),
        progress,
    );
    let agent = ask_agent(system, kickoff, known.cache.is_some(), progress);
    let tools = ToolContext {
        scope: Some(filter),
        records: false,
        ..ToolContext::new(cache, session.redactor(), progress, ASK_NAME)
    };
    let result = converse(agent, &session, &tools).await;
    let totals = session.tracker().totals();
    let spent = |error: AskError| AskFailure {
        error,
        api_requests: totals.requests,
        cost_usd: session.tracker().cost(),
    };
    let text = result.map_err(spent)?;
    let cost = Cost {
        usd: session.tracker().cost(),
        budget_usd: config.investigation.budget,
        api_requests: totals.requests,
        tokens: totals.usage,
    };
    Ok((text, cost))
}

/// The question's system prompt: the target, what is known of it, and the
/// context chosen for the question.
fn system_prompt(target: &str, knowledge: &str, context: &str) -> Result<String, PromptError> {
    AskPrompt {
        target: &escape_line(target),
        knowledge,
        max_turns: ASK_MAX_TURNS,
        context,
    }
    .render()
}

/// The conversation, on the engine's driver, until the model answers:
/// the answer, or why none came.
async fn converse(
    mut agent: Agent,
    session: &Session,
    tools: &ToolContext<'_>,
) -> Result<String, AskError> {
    let policy = Policy {
        closing: Some(Closing {
            from: 1,
            note: |_| LAST_TURN_NOTE.to_string(),
        }),
        pace: Pace::Alone,
        last_call_note: Some(prompts::last_call::ASK),
        answer: Some(Box::new(|input: &Value| {
            let answered = input
                .get("answer")
                .and_then(Value::as_str)
                .is_some_and(|text| !text.trim().is_empty());
            (!answered).then(|| "Error: 'answer' must be a non-empty string.".to_string())
        })),
        ..Policy::turns(ASK_MAX_TURNS)
    };
    let conversed = drive(&mut agent, session, tools, policy)
        .await
        .map_err(|err| match err {
            InvestigationError::Tool(err) => AskError::Tool(err),
            InvestigationError::Prompt(err) => AskError::Prompt(err),
            other => AskError::Failed(other),
        })?;
    match conversed.end {
        CallEnd::Submitted(input) => Ok(input
            .get("answer")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim()
            .to_string()),
        CallEnd::Refused(refusal) => Err(AskError::Declined(refusal)),
        CallEnd::ContextFull => Err(AskError::ContextFull),
        CallEnd::OutOfTurns => Err(AskError::OutOfTurns(ASK_MAX_TURNS)),
        CallEnd::Malformed => Err(AskError::Malformed),
        CallEnd::ApiError(err) => Err(AskError::Api(err)),
        CallEnd::OverBudget(over) => Err(AskError::Budget {
            over,
            limit: session
                .purse()
                .limit_of(over.meter)
                .unwrap_or(f64::INFINITY),
        }),
    }
}

/// Why no answer came when `over` (of a budget of `limit` in its meter)
/// stopped the next request.
fn budget_error(over: &OverBudget, limit: f64) -> String {
    match over.meter {
        Meter::Dollars => format!(
            "no answer: the next request may cost up to {} and {} is left of the {} budget; \
             raise {}",
            Usd::new(over.needed).precise(),
            Usd::new(over.left).precise(),
            Usd::new(limit),
            over.flag()
        ),
        Meter::Tokens => format!(
            "no answer: the next request may take up to {} and {} are left of the {} budget; \
             raise {}",
            over.meter.show(over.needed),
            over.meter.show(over.left),
            over.meter.show(limit),
            over.flag()
        ),
    }
}

/// The note before the last turn.
const LAST_TURN_NOTE: &str =
    "[luminos] This is your last turn: call submit_answer now with what you know.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_is_trimmed_escaped_and_bounded() {
        assert_eq!(
            checked_question("  What\u{1b}[31m is it?\n ").unwrap(),
            "What\\x1b[31m is it?"
        );
        assert_eq!(
            checked_question("two\nlines\tok").unwrap(),
            "two\nlines\tok"
        );
        assert!(matches!(
            checked_question(" \n\t"),
            Err(AskError::EmptyQuestion)
        ));
        let long = "é".repeat(MAX_QUESTION_CHARS + 1);
        assert!(matches!(
            checked_question(&long),
            Err(AskError::LongQuestion(n)) if n == MAX_QUESTION_CHARS + 1
        ));
        assert!(checked_question(&long[..long.len() - 2]).is_ok());
    }

    /// The prompt as the model sees it, over a small investigated tree.
    #[test]
    fn ask_prompt_rendered() {
        use crate::report::Flag;
        use serde_json::json;
        let dirs = [
            json!({"relative_path": ".", "summary": "A Rust command-line tool.",
                   "notable_files": ["Cargo.toml"]}),
            json!({"relative_path": "src", "summary": "Entry point and modules."}),
            json!({"relative_path": "src/net", "summary": "The HTTP client and its retries."}),
            json!({"relative_path": "src/store", "summary": "The on-disk cache."}),
        ]
        .map(|value| crate::cache::DirEntry::from_value(value).unwrap());
        let files =
            [json!({"relative_path": "src/net/retry.rs", "summary": "Backoff with jitter."})]
                .map(|value| crate::cache::FileEntry::from_value(value).unwrap());
        let flags = [
            Flag::new(
                "src/net/tls.rs",
                "Certificate checks are disabled.",
                "critical",
            ),
            Flag::new("general", "No tests for the cache.", "info"),
        ];
        let context = context::investigated_context(
            "How are retries of the HTTP client timed?",
            &context::Cached {
                verdict: Some((
                    "A CLI that fetches and caches.",
                    "src/net fetches; src/store caches.",
                )),
                dirs: &dirs,
                files: &files,
                flags: &flags,
            },
            context::Shares::within(context::ALL_CONTEXT_BYTES),
        );
        let knowledge = "This tree was investigated (investigation 0000): agents read its \
                         directories and cached 4 directory and 1 file summaries.";
        let prompt = system_prompt("/home/user/proj", knowledge, &context).unwrap();
        insta::assert_snapshot!(prompt);
    }

    #[test]
    fn a_failure_says_what_it_spent() {
        let failure = AskFailure {
            error: AskError::OutOfTurns(12),
            api_requests: 3,
            cost_usd: Usd::new(0.0123),
        };
        assert_eq!(
            failure.to_string(),
            "no answer after 12 turns (after 3 API requests, about $0.0123)"
        );
        assert_eq!(
            AskFailure::from(AskError::EmptyQuestion).to_string(),
            AskError::EmptyQuestion.to_string()
        );
    }
}
