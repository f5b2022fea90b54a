//! `investigate {target, budget?}`: run or resume an investigation through
//! the same steps as `luminos TARGET` (the target's run lock, the base
//! scan, [`crate::ai::orchestrator::investigate`], the report), its
//! progress sent as the call's progress notifications, and answer with the
//! overview of the report and what the run cost.
//!
//! A client that cancels the call stops the run as Ctrl-C stops the
//! binary's: what was already cached stays, and the next call resumes.

use serde_json::{Value, json};

use super::convert::ToolFailure;
use super::notify::CallProgress;
use super::overview::overview_json;
use super::read::{shown, tree_block};
use super::target;
use super::tools::{BudgetArg, Call, InvestigateArgs};
use crate::ai::failure::InvestigationError;
use crate::ai::orchestrator::TreeChanges;
use crate::cache::CacheError;
use crate::report::InvestigationStatus;
use crate::scan;

/// Why there is no investigation without a credential, for a server whose
/// environment the client's configuration sets.
const NO_KEY: &str = "luminos needs an Anthropic API key to investigate: set ANTHROPIC_API_KEY \
(or ANTHROPIC_AUTH_TOKEN) in the MCP server's environment (the env block of its entry in the \
client's configuration). overview, directory and flags need no key.";

/// Why the target's run lock could not be taken, in one line. When this
/// server holds it (an `investigate` call of this session, or of another
/// session of this process, is still running), the binary's "another
/// luminos run (pid N) ... stop it" would name the server itself.
fn busy_failure(err: InvestigationError) -> ToolFailure {
    match err {
        InvestigationError::Cache(CacheError::Busy { pid }) if pid == std::process::id() => {
            ToolFailure::new(SELF_BUSY)
        }
        err => ToolFailure::new(err),
    }
}

/// The refusal of a second `investigate` of a target this server is
/// investigating.
pub(super) const SELF_BUSY: &str = "this MCP server is already investigating this target (an \
investigate call that has not finished); wait for that call's answer, or cancel it, and call \
investigate again to resume";

/// Answer `investigate`.
pub(super) async fn investigate(call: &Call, args: InvestigateArgs) -> Result<Value, ToolFailure> {
    let flags = BudgetArg::flags(args.budget.as_ref());
    let config = target::resolve(&call.env, &flags, &args.target)?;
    if config.api.auth.is_none() {
        return Err(ToolFailure::new(NO_KEY));
    }
    // A busy target is refused before the scan, as the binary does.
    let reserved = crate::ai::reserve_target(&config).map_err(busy_failure)?;

    let (notes, warnings) = CallProgress::for_run(call, &config);
    let progress = notes.progress.clone();
    let scanning = (config.clone(), progress.clone());
    let scanned = tokio::task::spawn_blocking(move || {
        let (config, progress) = scanning;
        scan::scan_with_dirs(&config.target, &config.scan, &progress)
    })
    .await;
    let (base, dirs) = match scanned {
        Ok(scanned) => scanned,
        Err(err) => {
            notes.finish().await;
            return Err(ToolFailure::new(format!("the scan failed: {err}")));
        }
    };
    let outcome = tokio::select! {
        outcome = crate::ai::orchestrator::investigate(&config, &base, &dirs, &progress, reserved) => Some(outcome),
        // Dropping the run stops it at its next await, as Ctrl-C does.
        () = call.request.ct.cancelled() => None,
    };
    drop(dirs);
    drop(progress);
    notes.finish().await;
    let outcome = match outcome {
        Some(Ok(outcome)) if !outcome.interrupted => outcome,
        Some(Err(err)) => return Err(ToolFailure::new(err)),
        Some(Ok(_)) | None => {
            return Err(ToolFailure::new(
                "the investigation was interrupted; what it cached is kept, and investigate \
                 resumes it",
            ));
        }
    };
    let report = outcome.into_report(base);
    if report.investigation.status == InvestigationStatus::Failed {
        return Err(ToolFailure::new(report.investigation.line()));
    }
    let mut investigation = json!(report.investigation);
    if !warnings.is_empty() {
        investigation["warnings"] = json!(warnings);
    }
    Ok(overview_json(
        &shown(&config),
        &report,
        investigation,
        tree_block(&TreeChanges::default()),
    ))
}
