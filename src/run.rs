//! One run of the binary, start to finish: resolve the configuration, clear the
//! cache if asked, scan, investigate (or only estimate the investigation's
//! cost, or skip it: no credential, `--scan-only`), and write the report,
//! which always says what became of the investigation. `luminos ask` goes
//! its own short way ([`ask`]): the answer, or one line saying why none
//! came.
//!
//! This is the only place besides `main` where `anyhow` is used: below here
//! every module returns its own typed errors.

use anyhow::Context;

use crate::ai::Outcome;
use crate::ai::target::{Reserved, reserve_target, scan_target};
use crate::cache;
use crate::cli::Args;
use crate::config::{Config, Env, Invocation, Mode};
use crate::exit_codes::ExitCode;
use crate::grounding::CheckedCitation;
use crate::output;
use crate::progress::Progress;
use crate::report::{Format, Investigation, InvestigationStatus, RenderOptions, Report};
use crate::scan;

/// The one line printed when no credential is set.
const MISSING_KEY_HINT: &str = "luminos needs an Anthropic API key for its investigation: \
export ANTHROPIC_API_KEY=<your key> (or ANTHROPIC_AUTH_TOKEN) and run it again. \
This run reports the base scan alone.";

/// The report's note when no credential is set.
const NO_KEY_NOTE: &str = "no API key (ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN)";

/// The report's note with `--scan-only`.
const SCAN_ONLY_NOTE: &str = "--scan-only";

/// The one line `luminos mcp` prints when started from a terminal, where
/// it would otherwise wait in silence for a client that is not there.
const MCP_BY_HAND_HINT: &str = "luminos mcp is a Model Context Protocol server: an MCP client \
(Claude Code, Cursor, Claude Desktop, ...) starts it and speaks to it on stdin and stdout, so \
there is nothing to type here; see the README to add it to a client.";

/// Run luminos with parsed arguments.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let env = Env::from_process();
    let invocation = match Invocation::resolve(args, &env) {
        Err(err) if err.is_usage() => {
            output::print_error(&err.into());
            return Ok(ExitCode::Usage);
        }
        resolved => resolved?,
    };
    match invocation {
        Invocation::ClearCacheOnly { cache_root } => {
            clear_cache(&cache_root)?;
            Ok(ExitCode::Success)
        }
        Invocation::Run {
            config,
            clear_cache_first,
        } => run_on_target(&config, clear_cache_first),
        Invocation::Ask { config, question } => {
            print_notes(&config);
            ask(&config, &question)
        }
        Invocation::Mcp => {
            if env.stdin_is_terminal {
                eprintln!("{MCP_BY_HAND_HINT}");
            }
            crate::mcp::serve(env)?;
            Ok(ExitCode::Success)
        }
    }
}

/// What a run on a target does after its scan.
enum AfterScan {
    /// Investigate the target it reserved.
    Investigate(Reserved),
    /// Project the cost, calling nothing billed.
    Estimate,
    /// Report the scan alone, saying why.
    Skip(&'static str),
}

/// `luminos TARGET`: scan, then investigate, estimate or skip, and report.
fn run_on_target(config: &Config, clear_first: bool) -> anyhow::Result<ExitCode> {
    prepare(config, clear_first)?;

    let after = match config.investigation.mode {
        Mode::CancelBatch => return cancel_batches(config),
        Mode::ScanOnly => AfterScan::Skip(SCAN_ONLY_NOTE),
        Mode::Estimate => AfterScan::Estimate,
        Mode::Investigate if config.api.auth.is_none() => {
            eprintln!("{MISSING_KEY_HINT}");
            AfterScan::Skip(NO_KEY_NOTE)
        }
        // A busy target is refused before the scan, not after it.
        Mode::Investigate => AfterScan::Investigate(reserve_target(config)?),
    };

    let progress = Progress::new(config.progress, config.verbose);
    let investigating = matches!(after, AfterScan::Investigate(_));
    say_before_scan(config, &progress, investigating);

    // The scan's directories (with their fingerprints) spare the
    // investigation a second walk of the tree.
    // Ctrl-C during it ends the run with status 130, the live line erased.
    let scanned = {
        let _watch = crate::interrupt::ScanWatch::start(&progress);
        scan_target(config, &progress)
    };

    let report = match after {
        AfterScan::Estimate => {
            return write_estimate(config, &scanned.base, &scanned.dirs, &progress);
        }
        AfterScan::Skip(reason) => Outcome {
            status: Investigation::skipped(reason),
            ..Outcome::default()
        }
        .into_report(scanned.base),
        AfterScan::Investigate(reserved) => {
            let runtime = api_runtime(config, &progress)?;
            let investigated =
                runtime.block_on(reserved.investigate(config, scanned, &progress))?;
            if investigated.interrupted {
                return Ok(ExitCode::Interrupted);
            }
            say_spent(config, &progress, &investigated.report.investigation);
            investigated.report
        }
    };

    let failed = report.investigation.status == InvestigationStatus::Failed;
    match write_report(config, &report)? {
        // The report is out; the status says the investigation failed, so
        // scripts and CI notice.
        ExitCode::Success if failed => Ok(ExitCode::InvestigationFailed),
        code => Ok(code),
    }
}

/// What comes before anything is scanned or spent: the configuration's
/// notes, the output file checked (a report that could not be written
/// would waste the whole run), and the investigation cleared if asked.
fn prepare(config: &Config, clear_first: bool) -> anyhow::Result<()> {
    print_notes(config);
    if config.investigation.mode != Mode::CancelBatch
        && let Some(file) = &config.output.file
    {
        output::check_output_file(file)?;
    }
    if clear_first {
        clear_investigation(config)?;
    }
    Ok(())
}

/// The lines before the scan: the budget when an investigation will
/// spend (money is said before any is spent), and what is excluded.
fn say_before_scan(config: &Config, progress: &Progress, investigating: bool) {
    if investigating {
        progress.println(&crate::progress::budget_line(config.investigation.budget));
    }
    if !config.scan.exclude.is_empty() {
        progress.scan(&format!("Excluding: {}", config.scan.exclude.join(", ")));
    }
}

/// The run's spent line, at the prices it was priced at.
fn say_spent(config: &Config, progress: &Progress, status: &Investigation) {
    let prices = crate::report::PriceBasis {
        assumed: !config.investigation.model_facts.prices_known(),
        batch: config.investigation.batch,
    };
    progress.println(&crate::report::spent_line(status, prices));
}

/// `--estimate`: no billed API call, no cache write; the projection is the
/// result, its token counts calibrated by the free token-counting endpoint
/// where a key is set.
fn write_estimate(
    config: &Config,
    base: &scan::BaseScan,
    dirs: &scan::ScannedDirs,
    progress: &Progress,
) -> anyhow::Result<ExitCode> {
    let estimate = crate::ai::estimate::estimate(config, base, dirs)?;
    let estimate = match config.client_config() {
        Some(client) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?
            .block_on(crate::ai::estimate::calibrate(estimate, client)),
        None => estimate,
    };
    // The model's warning reaches the terminal once, as a run's does: in
    // the text estimate on stdout, or on stderr when stdout carries JSON (a
    // `jq` pipeline shows only what it selects) or the estimate goes to a
    // file.
    let json = config.output.format == Format::Json;
    let text_on_stdout = !json && config.output.file.is_none();
    if !text_on_stdout && let Some(warning) = crate::ai::model_warning(&config.investigation) {
        progress.println(&format!("Warning: {warning}"));
    }
    let text = (!json).then(|| estimate.render_text());
    write_output(config, |out: &mut dyn std::io::Write| match &text {
        Some(text) => out.write_all(text.as_bytes()),
        None => crate::report::json::write_pretty(&estimate, out),
    })
}

/// What resolving the settings changed, one line each on stderr, before
/// the scan.
fn print_notes(config: &Config) {
    for note in &config.notes {
        eprintln!("{note}");
    }
}

/// Render the report in the format asked for and write it where the user
/// asked.
fn write_report(config: &Config, report: &Report) -> anyhow::Result<ExitCode> {
    let options = RenderOptions {
        target: config.target.to_string_lossy().into_owned(),
        depth: config.scan.depth,
        width: config.output.width,
    };
    write_output(config, |out: &mut dyn std::io::Write| {
        crate::report::render(report, config.output.format, &options, out)
    })
}

/// Write what `render` produces to stdout, or to `-o FILE` followed by a
/// `Report written to FILE` line.
fn write_output(
    config: &Config,
    render: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<ExitCode> {
    match &config.output.file {
        Some(path) => match output::write_file_with(path, render) {
            Ok(()) => {
                output::write_stdout(&format!("Report written to {}", path.display()))
                    .context("writing to stdout")?;
                Ok(ExitCode::Success)
            }
            Err(err) => {
                eprintln!(
                    "Error writing to '{}': {err}",
                    crate::text::escape_control(&path.to_string_lossy())
                );
                Ok(ExitCode::Failure)
            }
        },
        None => {
            output::write_stdout_with(render).context("writing the report to stdout")?;
            Ok(ExitCode::Success)
        }
    }
}

/// The runtime that billed API calls run on, once the model's warning (a
/// model unknown, deprecated or retired), if any, is on stderr.
fn api_runtime(config: &Config, progress: &Progress) -> anyhow::Result<tokio::runtime::Runtime> {
    if let Some(warning) = crate::ai::model_warning(&config.investigation) {
        progress.println(&format!("Warning: {warning}"));
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// `luminos ask`: the answer on stdout (as JSON with `--json`), what it
/// cost and how its citations fared on stderr; or one line saying why no
/// answer came, with exit status 2 for a question that is not one, 3 when
/// an API call failed (as a run whose investigation failed), 1 otherwise.
fn ask(config: &Config, question: &str) -> anyhow::Result<ExitCode> {
    // The answer is the output: the scan, the passes and the cost are for
    // -v.
    let progress = Progress::answer_only(config.progress, config.verbose);
    let runtime = api_runtime(config, &progress)?;
    let answered = runtime.block_on(async {
        tokio::select! {
            answered = crate::ai::ask::answer(config, question, &progress) => Some(answered),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    let answer = match answered {
        Some(Ok(answer)) => answer,
        Some(Err(failure)) => {
            output::print_error(&anyhow::anyhow!("{failure}"));
            return Ok(if failure.error.is_usage() {
                ExitCode::Usage
            } else if failure.error.is_api_failure() {
                ExitCode::InvestigationFailed
            } else {
                ExitCode::Failure
            });
        }
        None => {
            eprintln!("Interrupted: no answer.");
            return Ok(ExitCode::Interrupted);
        }
    };
    say_citations(&progress, &answer.citations);
    progress.ai(&ask_cost_line(&answer.cost));
    let text = (config.output.format != crate::report::Format::Json)
        .then(|| crate::text::escape_control(&answer.answer).into_owned());
    output::write_stdout_with(|out: &mut dyn std::io::Write| match &text {
        Some(text) => out.write_all(text.as_bytes()),
        None => crate::report::json::write_pretty(&answer, out),
    })
    .context("writing the answer to stdout")?;
    Ok(ExitCode::Success)
}

/// How many of the answer's citations the tree has, and which it lacks;
/// nothing when the answer cites nothing.
fn say_citations(progress: &Progress, citations: &[CheckedCitation]) {
    if citations.is_empty() {
        return;
    }
    let found = citations.iter().filter(|c| c.found).count();
    let missing: Vec<&str> = citations
        .iter()
        .filter(|c| !c.found)
        .map(|c| c.citation.as_str())
        .collect();
    let mut line = format!(
        "Citations: {found} of {} found in the tree",
        citations.len()
    );
    if !missing.is_empty() {
        line.push_str(&format!("; not found: {}", missing.join(", ")));
    }
    progress.ai(&line);
}

/// What the answer cost, against its budget when it had one.
fn ask_cost_line(cost: &crate::ai::ask::Cost) -> String {
    format!(
        "Cost: {}{} ({} API request{})",
        cost.usd.precise(),
        cost.budget_usd
            .map(|budget| format!(" of the {budget} budget"))
            .unwrap_or_default(),
        cost.api_requests,
        if cost.api_requests == 1 { "" } else { "s" }
    )
}

/// `--clear-cache TARGET`: that target's investigation only, said in one
/// line; the cache's other investigations stay.
fn clear_investigation(config: &Config) -> anyhow::Result<()> {
    let removed = cache::clear_investigation(&config.cache_root, &config.target_canonical)?;
    let target = crate::text::escape_line(&config.target_arg);
    let cost = if removed.unrecorded > 0 {
        "with no record of its cost".to_string()
    } else {
        format!("it cost {} as its runs recorded", removed.recorded_cost_usd)
    };
    match removed.investigations {
        0 => eprintln!("There is no cached investigation of '{target}'; nothing to remove."),
        1 => eprintln!(
            "Removed the cached investigation of '{target}' ({cost}); the cache's other \
             investigations are kept."
        ),
        // Earlier `--fresh` runs left more than one behind.
        _ => eprintln!(
            "Removed the cached investigations of '{target}' ({}); the cache's other \
             investigations are kept.",
            removed_words(&removed)
        ),
    }
    Ok(())
}

/// `3 investigations, which cost $4.12 as their runs recorded (1 has no
/// record of its cost)`.
fn removed_words(removed: &cache::Removed) -> String {
    let n = removed.investigations;
    if n == 0 {
        return "it held no investigation".to_string();
    }
    let recorded = n - removed.unrecorded;
    let mut words = format!("{n} investigation{}", if n == 1 { "" } else { "s" });
    if recorded > 0 {
        words.push_str(&format!(
            ", which cost {} as their runs recorded",
            removed.recorded_cost_usd
        ));
    }
    match (recorded, removed.unrecorded) {
        (_, 0) => {}
        (0, _) => words.push_str(", with no record of their cost"),
        (_, 1) => words.push_str(" (1 has no record of its cost)"),
        (_, k) => words.push_str(&format!(" ({k} have no record of their cost)")),
    }
    words
}

/// `--cancel-batch`: no scan and no report, only what became of each batch.
fn cancel_batches(config: &Config) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    for line in runtime.block_on(crate::ai::batch_mode::cancel_batches(config))? {
        eprintln!("{line}");
    }
    Ok(ExitCode::Success)
}

fn clear_cache(root: &std::path::Path) -> anyhow::Result<()> {
    match cache::clear_cache(root)? {
        cache::Cleared::Removed { root, removed } => {
            eprintln!(
                "Removed the luminos cache at {}: {}.",
                crate::text::escape_control(&root.to_string_lossy()),
                removed_words(&removed)
            );
        }
        cache::Cleared::Absent(root) => {
            eprintln!(
                "There is no luminos cache at {}; nothing to remove.",
                root.display()
            );
        }
    }
    Ok(())
}
