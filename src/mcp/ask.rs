//! `ask {target, question, budget?}`: one question about a tree, answered
//! by the library function behind `luminos ask` ([`crate::ai::ask::answer`])
//! with the question's own budget ($0.50 unless `budget` says), its
//! progress sent as the call's progress notifications, and the answer as
//! `luminos ask --json` gives it: the answer, its citations checked against
//! the tree, what it cost, and a note when it may be weaker than it could
//! be.
//!
//! Like `luminos ask`, it leaves the cache exactly as it was, and a client
//! that cancels the call stops the question at its next await.

use super::convert::{ToolFailure, Warned};
use super::notify::CallProgress;
use super::target;
use super::tools::{BudgetArg, Call, QuestionArgs};
use crate::ai::ask::Answer;

/// Answer `ask`.
pub(super) async fn ask(call: &Call, args: QuestionArgs) -> Result<Warned<Answer>, ToolFailure> {
    let flags = BudgetArg::flags(args.budget.as_ref());
    let config = target::resolve_ask(&call.env, &flags, &args.target, &args.question)?;

    let (notes, warnings) = CallProgress::for_run(call, &config);
    let progress = notes.progress.clone();
    let answered = tokio::select! {
        answered = crate::ai::ask::answer(&config, &args.question, &progress) => Some(answered),
        () = call.request.ct.cancelled() => None,
    };
    drop(progress);
    notes.finish().await;
    let answer = match answered {
        Some(Ok(answer)) => answer,
        Some(Err(failure)) => return Err(failure.into()),
        None => return Err(ToolFailure::Cancelled),
    };
    Ok(Warned { answer, warnings })
}
