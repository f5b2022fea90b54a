//! The process exit codes luminos uses, in one place so the binary, the docs and
//! the tests agree.

/// How a run ended, as seen by the shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// The report was produced, with the investigation complete, partial
    /// or skipped.
    Success,
    /// Bad input or an error that stopped the run.
    Failure,
    /// A usage error the command line parser did not catch (a value it
    /// takes as text, such as `--language`'s, flags that contradict one
    /// another, an empty question to `luminos ask`), as its own errors
    /// exit.
    Usage,
    /// The report was produced, but the investigation failed (its status
    /// and error are in the report).
    InvestigationFailed,
    /// Interrupted with Ctrl-C; the next run resumes.
    Interrupted,
}

impl ExitCode {
    /// The numeric status handed to the operating system.
    pub fn code(self) -> u8 {
        match self {
            ExitCode::Success => 0,
            ExitCode::Failure => 1,
            ExitCode::Usage => 2,
            ExitCode::InvestigationFailed => 3,
            ExitCode::Interrupted => 130,
        }
    }
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code.code())
    }
}
