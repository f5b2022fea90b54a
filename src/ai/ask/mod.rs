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
//!   question's own budget ([`crate::ai::engine::ceiling`]);
//! - checks every path and symbol the answer cites against the tree
//!   ([`crate::grounding::cite`]).
//!
//! The answer is not recorded anywhere: the cache is the investigation's,
//! and a question leaves it exactly as it was.

mod context;
mod known;

use serde::Serialize;
use serde_json::Value;

use crate::ai::api::{ApiError, Usage};
use crate::ai::batch_mode;
use crate::ai::engine::agent::{Agent, AgentError, CallEnd, Printer};
use crate::ai::engine::ceiling::{OverCeiling, priced_turn};
use crate::ai::engine::session::{Session, stop_for_api_error};
use crate::ai::failure::InvestigationError;
use crate::ai::orchestrator::new_session;
use crate::ai::passes::survey::format_survey_signals;
use crate::ai::prompts::{self, AskPrompt, AskQuestionPrompt, PromptError};
use crate::ai::rules::tree_view::prompt_tree;
use crate::ai::tools::{self, FatalToolError, ToolContext, Toolbox};
use crate::config::Config;
use crate::grounding::{CheckedCitation, Scope, cite, outlines::Source};
use crate::progress::Progress;
use crate::report::ReportTokens;
use crate::scan::{self, ScanFilter};
use crate::text::{escape_control, escape_line};
use known::{Known, Scratch};

/// What a question may spend when `--budget` does not say, in dollars.
pub(crate) const DEFAULT_ASK_BUDGET_USD: f64 = 0.50;
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
    pub usd: f64,
    /// The question's budget (`null`: no ceiling).
    pub budget_usd: Option<f64>,
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
    /// The budget cannot pay for the next request.
    #[error("no answer: {0}; raise --budget")]
    Budget(OverCeiling),
    /// The model declined to answer.
    #[error("no answer: {0}")]
    Declined(String),
    /// The turns ran out without an answer.
    #[error("no answer after {0} turns")]
    OutOfTurns(u32),
    /// The conversation outgrew the model's context window.
    #[error("no answer: the conversation outgrew the model's context window")]
    ContextFull,
    /// A tool failed in a way that makes going on unsafe.
    #[error(transparent)]
    Tool(#[from] FatalToolError),
    /// A prompt did not render.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The scan could not be run, or the scratch cache of a tree never
    /// investigated could not be made.
    #[error("could not prepare the question: {0}")]
    Prepare(String),
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
    pub cost_usd: f64,
}

impl std::fmt::Display for AskFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.error)?;
        if self.api_requests > 0 {
            write!(
                f,
                " (after {} API request{}, about ${:.4})",
                self.api_requests,
                if self.api_requests == 1 { "" } else { "s" },
                self.cost_usd
            )?;
        }
        Ok(())
    }
}

impl From<AskError> for AskFailure {
    fn from(error: AskError) -> AskFailure {
        AskFailure {
            error,
            api_requests: 0,
            cost_usd: 0.0,
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
    let limit = config.investigation.budget;
    progress.ai(&format!("Question: {}", escape_line(&question)));

    let ((scan, walked), known) = {
        let (config, progress) = (config.clone(), progress.clone());
        // The scan blocks; so does reading the cache.
        tokio::task::spawn_blocking(move || {
            let scan = scan::scan_with_dirs(&config.target, &config.scan, &progress);
            (scan, Known::read(&config))
        })
        .await
        .map_err(|err| AskError::Prepare(err.to_string()))?
    };
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

    let filter = ScanFilter::new(&config.target_canonical, &config.scan);
    let context = match &known.cache {
        Some(_) => context::investigated_context(
            &question,
            &context::Cached {
                verdict: known
                    .verdict
                    .as_ref()
                    .map(|(brief, detailed)| (brief.as_str(), detailed.as_str())),
                dirs: &known.dirs,
                files: &known.files,
                flags: &known.flags,
            },
        ),
        None => context::scan_context(
            &prompt_tree(&config.target_canonical, &filter, SCAN_TREE_DEPTH),
            &format_survey_signals(&scan.survey_signals),
        ),
    };
    let system = system_prompt(
        &config.target_canonical.to_string_lossy(),
        &known.knowledge(),
        &context,
    )
    .map_err(AskError::from)?;
    let kickoff = AskQuestionPrompt {
        question: &question,
    }
    .render()
    .map_err(AskError::from)?;

    let tracker = batch_mode::tracker(config);
    let session = new_session(config, progress, &tracker).map_err(|err| match err {
        InvestigationError::NoCredential => AskError::NoCredential,
        other => AskError::Failed(other),
    })?;
    // A tree never investigated has no cache to read: the tools get an
    // empty one of their own, and no read_cache.
    let scratch;
    let cache = match &known.cache {
        Some(cache) => cache,
        None => {
            scratch = Scratch::new(&config.target_canonical).map_err(AskError::Prepare)?;
            &scratch.cache
        }
    };
    // Every value of the tree known before the first tool result (see
    // `tools::learning`); the cache stays as it was.
    let learner = (session.shared_redactor(), session.first_request());
    let (target, files) = (&config.target_canonical, walked.files_by_dir());
    tools::learning::start_learning(learner, target, files, (cache, false), progress);
    let offered: Vec<_> = tools::definitions(Toolbox::Ask)
        .into_iter()
        .filter(|tool| known.cache.is_some() || tool.name != "read_cache")
        .collect();
    let agent = Agent::new(
        Toolbox::Ask,
        system,
        &kickoff,
        offered,
        prompts::nudge::ASK,
        Printer::Pass(progress.clone()),
    )
    .with_submit_check(Box::new(|input: &Value| {
        let answered = input
            .get("answer")
            .and_then(Value::as_str)
            .is_some_and(|text| !text.trim().is_empty());
        (!answered).then(|| "Error: 'answer' must be a non-empty string.".to_string())
    }));
    let tools = ToolContext {
        scope: Some(&filter),
        records: false,
        ..ToolContext::new(cache, session.redactor(), progress, ASK_NAME)
    };
    let result = converse(agent, &session, &tools, limit).await;
    let totals = session.tracker().totals();
    let spent = |error: AskError| AskFailure {
        error,
        api_requests: totals.requests,
        cost_usd: session.tracker().cost(),
    };
    let text = result.map_err(spent)?;

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
        cost: Cost {
            usd: session.tracker().cost(),
            budget_usd: limit,
            api_requests: totals.requests,
            tokens: totals.usage,
        },
        note: known.note.map(str::to_string),
    })
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

/// The conversation, turn by turn, until the model answers.
async fn converse(
    mut agent: Agent,
    session: &Session,
    tools: &ToolContext<'_>,
    limit: Option<f64>,
) -> Result<String, AskError> {
    let limit = limit.unwrap_or(f64::INFINITY);
    for turn in 1..=ASK_MAX_TURNS {
        if turn == ASK_MAX_TURNS {
            agent.append_note(LAST_TURN_NOTE);
        }
        let tools = ToolContext { turn, ..*tools };
        let step =
            match priced_turn(&mut agent, session, &tools, limit, prompts::last_call::ASK).await {
                Ok(Ok(step)) => step,
                Ok(Err(over)) => return Err(AskError::Budget(over)),
                // The run's purse refused it: the same end, in its figures.
                Err(AgentError::OverBudget(over)) => {
                    return Err(AskError::Budget(OverCeiling {
                        needed: over.needed,
                        left: over.left,
                        limit,
                    }));
                }
                Err(AgentError::Api(err)) => {
                    stop_for_api_error(session, &err).map_err(AskError::Failed)?;
                    return Err(AskError::Api(err));
                }
                Err(AgentError::TooLarge(_)) => return Err(AskError::ContextFull),
                Err(AgentError::CacheWrite(fault)) => {
                    return Err(AskError::Failed(InvestigationError::CacheWrite(fault)));
                }
                Err(AgentError::Tool(err)) => return Err(err.into()),
                Err(AgentError::Prompt(err)) => return Err(err.into()),
            };
        match step.end {
            None => {}
            Some(CallEnd::Submitted(input)) => {
                return Ok(input
                    .get("answer")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .trim()
                    .to_string());
            }
            Some(CallEnd::Refused(refusal)) => return Err(AskError::Declined(refusal.describe())),
            Some(CallEnd::ContextFull) => return Err(AskError::ContextFull),
            // A turn never ends on these: the loop counts its turns and
            // meets API errors itself.
            Some(CallEnd::OutOfTurns | CallEnd::ApiError | CallEnd::OverBudget) => break,
        }
    }
    Err(AskError::OutOfTurns(ASK_MAX_TURNS))
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
        ];
        let files =
            [json!({"relative_path": "src/net/retry.rs", "summary": "Backoff with jitter."})];
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
            cost_usd: 0.0123,
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
