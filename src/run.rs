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

use crate::cache;
use crate::cli::Args;
use crate::config::{Config, Env, Invocation, Mode};
use crate::exit_codes::ExitCode;
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
    let (config, clear_first) = match invocation {
        Invocation::ClearCacheOnly { cache_root } => {
            clear_cache(&cache_root)?;
            return Ok(ExitCode::Success);
        }
        Invocation::Run {
            config,
            clear_cache_first,
        } => (config, clear_cache_first),
        Invocation::Ask { config, question } => return ask(&config, &question),
        Invocation::Mcp => {
            crate::mcp::serve(env)?;
            return Ok(ExitCode::Success);
        }
    };
    // A report that could not be written would waste the whole run: the
    // file is checked before anything is spent.
    if config.investigation.mode != Mode::CancelBatch
        && let Some(file) = &config.output.file
    {
        output::check_output_file(file)?;
    }
    if clear_first {
        clear_cache(&config.cache_root)?;
    }

    // Why no investigation runs, if none does.
    let skipped = match config.investigation.mode {
        Mode::CancelBatch => return cancel_batches(&config),
        Mode::ScanOnly => Some(SCAN_ONLY_NOTE),
        Mode::Estimate => None,
        Mode::Investigate if config.api.auth.is_none() => {
            eprintln!("{MISSING_KEY_HINT}");
            Some(NO_KEY_NOTE)
        }
        Mode::Investigate => None,
    };
    let estimate = config.investigation.mode == Mode::Estimate;

    // A busy target is refused before the scan, not after it.
    let reserved = if estimate || skipped.is_some() {
        None
    } else {
        crate::ai::reserve_target(&config)?
    };

    let progress = Progress::new(config.progress, config.verbose);
    if !config.scan.exclude.is_empty() {
        progress.scan(&format!("Excluding: {}", config.scan.exclude.join(", ")));
    }

    // The scan's directories (with their fingerprints) spare the
    // investigation a second walk of the tree.
    // Ctrl-C during it ends the run with status 130, the live line erased.
    let (base, dirs) = {
        let _watch = crate::interrupt::ScanWatch::start(&progress);
        scan::scan_with_dirs(&config.target, &config.scan, &progress)
    };

    // No billed API call, no cache write: the projection is the result,
    // its token counts calibrated by the free token-counting endpoint
    // where a key is set.
    if estimate {
        let estimate = crate::ai::estimate::estimate(&config, &base, &dirs)?;
        let estimate = match config.client_config() {
            Some(client) => tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("starting the async runtime")?
                .block_on(crate::ai::estimate::calibrate(estimate, client)),
            None => estimate,
        };
        // The model's warning reaches the terminal once, as a run's does:
        // in the text estimate on stdout, or on stderr when stdout carries
        // JSON (a `jq` pipeline shows only what it selects) or the
        // estimate goes to a file.
        let json = config.output.format == Format::Json;
        let text_on_stdout = !json && config.output.file.is_none();
        if !text_on_stdout && let Some(warning) = crate::ai::model_warning(&config.investigation) {
            progress.println(&format!("Warning: {warning}"));
        }
        let text = (!json).then(|| estimate.render_text());
        return write_output(&config, |out: &mut dyn std::io::Write| match &text {
            Some(text) => out.write_all(text.as_bytes()),
            None => crate::report::json::write_pretty(&estimate, out),
        });
    }

    let outcome = match skipped {
        Some(reason) => crate::ai::Outcome {
            status: Investigation::skipped(reason),
            ..crate::ai::Outcome::default()
        },
        None => {
            let runtime = api_runtime(&config, &progress)?;
            runtime.block_on(crate::ai::orchestrator::investigate(
                &config, &base, &dirs, &progress, reserved,
            ))?
        }
    };
    drop(dirs);

    if outcome.interrupted {
        return Ok(ExitCode::Interrupted);
    }

    let failed = outcome.status.status == InvestigationStatus::Failed;
    let report = outcome.into_report(base);
    match write_report(&config, &report)? {
        // The report is out; the status says the investigation failed, so
        // scripts and CI notice.
        ExitCode::Success if failed => Ok(ExitCode::InvestigationFailed),
        code => Ok(code),
    }
}

/// Render the report in the format asked for and write it where the user
/// asked.
fn write_report(config: &Config, report: &Report) -> anyhow::Result<ExitCode> {
    let options = RenderOptions {
        target: config.target.to_string_lossy().into_owned(),
        depth: config.scan.depth,
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
    let progress = Progress::new(config.progress, config.verbose);
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
    let found = answer.citations.iter().filter(|c| c.found).count();
    if !answer.citations.is_empty() {
        let missing: Vec<&str> = answer
            .citations
            .iter()
            .filter(|c| !c.found)
            .map(|c| c.citation.as_str())
            .collect();
        let mut line = format!(
            "Citations: {found} of {} found in the tree",
            answer.citations.len()
        );
        if !missing.is_empty() {
            line.push_str(&format!("; not found: {}", missing.join(", ")));
        }
        progress.ai(&line);
    }
    progress.ai(&format!(
        "Cost: ${:.4}{} ({} API request{})",
        answer.cost.usd,
        answer
            .cost
            .budget_usd
            .map(|budget| format!(" of the ${budget:.2} budget"))
            .unwrap_or_default(),
        answer.cost.api_requests,
        if answer.cost.api_requests == 1 {
            ""
        } else {
            "s"
        }
    ));
    let text = (config.output.format != crate::report::Format::Json)
        .then(|| crate::text::escape_control(&answer.answer).into_owned());
    output::write_stdout_with(|out: &mut dyn std::io::Write| match &text {
        Some(text) => out.write_all(text.as_bytes()),
        None => crate::report::json::write_pretty(&answer, out),
    })
    .context("writing the answer to stdout")?;
    Ok(ExitCode::Success)
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
        cache::Cleared::Removed(root) => {
            eprintln!("Removed the luminos cache at {}", root.display());
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
