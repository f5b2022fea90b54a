//! `run_command`: the agent's read-only command line, without a shell.
//!
//! The original checked only the first word and then handed the whole string
//! to `sh -c`, so `grep x .; touch /tmp/x`, `find . -delete` and
//! `head /etc/passwd` all ran. Here the string goes through three stages, each
//! in its own module:
//!
//! 1. [`argv`] splits it into words like a POSIX shell would (quotes,
//!    backslashes) and refuses anything a shell would act on;
//! 2. [`check`](mod@check) reads the words the way the program will, with a table per
//!    program ([`spec`]), refuses dangerous options and find actions, checks
//!    every path against the sandbox and expands globs inside it ([`glob`]);
//! 3. `exec` runs the system's binary directly with a clean environment, a
//!    timeout and an output cap, killing its whole process group at the end.
//!
//! The result has the original's shape: stdout, a `(stderr: ...)` note when
//! the program failed, or `(no output)`. Refusals, timeouts and failures to
//! start are error results.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::input::Text;
use super::{FatalToolError, Tool, ToolContext, ToolOutput, ToolSpec, frame_untrusted};
use crate::ai::tools::schema::{object, text};

pub(crate) mod argv;
pub(crate) mod check;
mod exec;
pub(crate) mod glob;
mod quoted;
pub(crate) mod refusal;
pub(crate) mod spec;

pub use check::check;

pub(crate) use check::CheckedCommand;
pub use refusal::Refusal;

/// The original's timeout.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);
/// Bytes of stdout passed to the model.
pub(crate) const OUTPUT_CAP: usize = 64 * 1024;

const DESCRIPTION: &str = "One read-only command in the target, and its output: du, file, \
find, grep, head, stat, tail or wc. There is no shell: pipes, redirection, ;, &&, $(...), \
backticks and variables are refused (single-quote them to pass them). Unquoted globs are \
expanded inside the target (dot files only with a leading dot). Refused: leaving the target, \
find's actions that run or write, following links (-L, grep -R), tail -f, FIFOs and \
devices. Stopped after 15 seconds; output cut at 64 KiB.";

const COMMAND_DESCRIPTION: &str = "E.g. \"grep -rn 'TODO' src\" or \"wc -l src/*.rs\".";

/// The `run_command` tool. Its limits are fixed for the agent
/// ([`RunCommand::new`]); tests may shorten them.
#[derive(Debug, Clone, Copy)]
pub struct RunCommand {
    limits: exec::Limits,
}

impl RunCommand {
    /// The tool as the agent gets it: 15 s, 64 KiB.
    pub const fn new() -> RunCommand {
        RunCommand::with_limits(DEFAULT_TIMEOUT, OUTPUT_CAP)
    }

    /// The tool with other limits (for tests of the timeout and the cap).
    pub const fn with_limits(timeout: Duration, output_cap: usize) -> RunCommand {
        RunCommand {
            limits: exec::Limits {
                timeout,
                output_cap,
            },
        }
    }

    /// Check and run `command` in `target` (canonical), returning the result
    /// before redaction and framing. The agent goes through [`Tool::run`].
    pub fn execute(&self, target: &Path, command: &str) -> ToolOutput {
        match self.run_checked(target, command) {
            Ok((_, rendered)) => rendered.plain(),
            Err(error) => error,
        }
    }

    /// Check and run `command`; refusals, failures to start and timeouts are
    /// the error result.
    fn run_checked(
        &self,
        target: &Path,
        command: &str,
    ) -> Result<(CheckedCommand, Rendered), ToolOutput> {
        let plan =
            check(target, command).map_err(|refusal| ToolOutput::error(refusal.to_string()))?;
        let Some(program) = exec::locate(plan.program) else {
            return Err(ToolOutput::error(format!(
                "Error: '{}' is not installed in {}.",
                plan.program,
                exec::SYSTEM_PATH
            )));
        };
        let execution = exec::execute(&program, &plan.argv(), target, self.limits)
            .map_err(|err| ToolOutput::error(format!("Error running command: {err}")))?;
        let rendered = render(execution, self.limits, &plan.notes)?;
        Ok((plan, rendered))
    }
}

impl Default for RunCommand {
    fn default() -> Self {
        RunCommand::new()
    }
}

/// `run_command`'s input.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct RunCommandInput {
    command: Text,
}

impl Tool for RunCommand {
    type Input = RunCommandInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "run_command",
            description: DESCRIPTION,
            toolboxes: super::READERS,
            schema: || object([("command", text(COMMAND_DESCRIPTION))], &["command"]),
        }
    }

    fn run(
        &self,
        ctx: &ToolContext<'_>,
        input: RunCommandInput,
    ) -> Result<ToolOutput, FatalToolError> {
        let Some(command) = input.command.as_str() else {
            return Ok(ToolOutput::error(
                "Error: 'command' is required and must be a string.",
            ));
        };
        Ok(match self.run_checked(ctx.target, command) {
            Ok((plan, rendered)) => rendered.presented(ctx, command, &plan),
            Err(error) => error,
        })
    }
}

/// A finished command, split into what the program printed (text from the
/// target) and our own notes about it.
#[derive(Debug)]
struct Rendered {
    /// stdout, then `(stderr: ...)` if the program failed; trimmed; empty when
    /// the program printed nothing.
    program_text: String,
    /// Our notes (output cut, glob matches left out), shown after it.
    notes: String,
}

impl Rendered {
    /// The original's shape: the program's text, or `(no output)`, then the
    /// notes.
    fn plain(self) -> ToolOutput {
        let body = if self.program_text.is_empty() {
            "(no output)".to_string()
        } else {
            self.program_text
        };
        ToolOutput::ok(body + &self.notes)
    }

    /// What the model sees: the program's text is file content from the
    /// target, so it is redacted and framed as untrusted data; our notes stay
    /// outside the frame. The files it may quote are learned first (see
    /// `quoted.rs`), which flags their secrets under their own paths; a
    /// secret the output holds that none of them did is flagged under the
    /// entry it names, or the target root `.`
    /// ([`ToolContext::redact_command_output`]).
    fn presented(self, ctx: &ToolContext<'_>, command: &str, plan: &CheckedCommand) -> ToolOutput {
        if self.program_text.is_empty() {
            return self.plain();
        }
        quoted::learn_quoted_files(ctx, plan);
        let text = ctx.redact_command_output(&self.program_text);
        let framed = frame_untrusted(&format!("run_command: {command}"), &text);
        ToolOutput::ok(framed + &self.notes)
    }
}

/// Shape an execution like the original: stdout, then a stderr note if the
/// program failed, trimmed; then our notes. A timeout is an error result.
fn render(
    execution: exec::Execution,
    limits: exec::Limits,
    notes: &[String],
) -> Result<Rendered, ToolOutput> {
    let status = match execution.ending {
        exec::Ending::TimedOut => {
            return Err(ToolOutput::error(format!(
                "Error: command timed out after {} and was stopped. Narrow it (a smaller \
                 directory, -maxdepth, a simpler pattern).",
                seconds(limits.timeout)
            )));
        }
        exec::Ending::Exited(status) => status,
    };
    let mut body = decode(&execution.stdout, execution.stdout_cut);
    let mut trailer = String::new();
    if execution.stdout_cut {
        // The last line was cut mid-way; dropping it keeps a secret that the
        // cap split from reaching the model half-redacted.
        if let Some(end) = body.rfind('\n') {
            body.truncate(end + 1);
        }
        trailer.push_str(&format!(
            "\n[output cut at {}; the command was stopped there. Narrow it (head -n, \
             grep -l or -m, find -maxdepth) to see less at a time.]",
            size(limits.output_cap)
        ));
    } else if !status.success() {
        let stderr = String::from_utf8_lossy(&execution.stderr);
        if !stderr.trim().is_empty() {
            body.push_str(&format!("\n(stderr: {})", stderr.trim()));
        }
    }
    for note in notes {
        trailer.push_str(&format!("\n(note: {note})"));
    }
    Ok(Rendered {
        program_text: body.trim().to_string(),
        notes: trailer,
    })
}

/// Bytes as text; when cut mid-character, the partial character is dropped
/// rather than shown as a replacement mark.
fn decode(bytes: &[u8], cut: bool) -> String {
    let end = match std::str::from_utf8(bytes) {
        Err(err) if cut && err.error_len().is_none() => err.valid_up_to(),
        _ => bytes.len(),
    };
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        let s = d.as_secs();
        format!("{s} second{}", if s == 1 { "" } else { "s" })
    } else {
        format!("{:.1} seconds", d.as_secs_f64())
    }
}

fn size(bytes: usize) -> String {
    if bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests;
