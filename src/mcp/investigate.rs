//! `investigate {target, budget?}`: run or resume an investigation through
//! the same steps as `luminos TARGET` ([`crate::ai::target`]: the target's
//! run lock, the base scan off the async threads, the investigation, the
//! report), its
//! progress sent as the call's progress notifications, and answer with the
//! overview of the report and what the run cost.
//!
//! A client that cancels the call stops the run as Ctrl-C stops the
//! binary's: what was already cached stays, and the next call resumes.

use super::convert::{ToolFailure, Warned};
use super::notify::CallProgress;
use super::overview::{Overview, RunFacts};
use super::read::{shown, tree_block};
use super::target;
use super::tools::{BudgetArg, Call, InvestigateArgs};
use crate::ai::failure::InvestigationError;
use crate::ai::orchestrator::TreeChanges;
use crate::ai::target::{reserve_target, scan_target};
use crate::cache::CacheError;
use crate::report::InvestigationStatus;

/// Why the target's run lock could not be taken: when this server holds
/// it, [`ToolFailure::ServerBusy`].
fn busy_failure(err: InvestigationError) -> ToolFailure {
    match err {
        InvestigationError::Cache(CacheError::Busy { pid }) if pid == std::process::id() => {
            ToolFailure::ServerBusy
        }
        err => ToolFailure::Investigation(err),
    }
}

/// Answer `investigate`.
pub(super) async fn investigate(
    call: &Call,
    args: InvestigateArgs,
) -> Result<Overview<RunFacts>, ToolFailure> {
    let flags = BudgetArg::flags(args.budget.as_ref());
    let config = target::resolve(&call.env, &flags, &args.target)?;
    if config.api.auth.is_none() {
        return Err(ToolFailure::NoKey);
    }
    // A busy target is refused before the scan, as the binary does.
    let reserved = reserve_target(&config).map_err(busy_failure)?;

    let (notes, warnings) = CallProgress::for_run(call, &config);
    let progress = notes.progress.clone();
    let scanning = (config.clone(), progress.clone());
    let scanned = tokio::task::spawn_blocking(move || {
        let (config, progress) = scanning;
        scan_target(&config, &progress)
    })
    .await;
    let scanned = match scanned {
        Ok(scanned) => scanned,
        Err(err) => {
            notes.finish().await;
            return Err(ToolFailure::Stopped {
                step: "the scan",
                source: err,
            });
        }
    };
    let investigated = tokio::select! {
        investigated = reserved.investigate(&config, scanned, &progress) => Some(investigated),
        // Dropping the run stops it at its next await, as Ctrl-C does.
        () = call.request.ct.cancelled() => None,
    };
    drop(progress);
    notes.finish().await;
    let report = match investigated {
        Some(Ok(investigated)) if !investigated.interrupted => investigated.report,
        Some(Err(err)) => return Err(err.into()),
        Some(Ok(_)) | None => return Err(ToolFailure::Interrupted),
    };
    if report.investigation.status == InvestigationStatus::Failed {
        return Err(ToolFailure::Failed(Box::new(report.investigation.clone())));
    }
    let investigation = Warned {
        answer: report.investigation.clone(),
        warnings,
    };
    Ok(Overview::of(
        &shown(&config),
        &report,
        investigation,
        tree_block(&TreeChanges::default()),
    ))
}
