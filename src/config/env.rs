//! Reading the process environment, once: [`Env`] captures every variable
//! luminos looks at (unparsed) and whether stderr is a terminal. It decides
//! nothing; `resolve` validates and applies what it holds, so tests build an
//! `Env` by hand instead of touching `std::env`.

use std::ffi::OsString;

use super::{
    ATTEMPT_DEADLINE_VAR, BATCH_POLL_VAR, CONTEXT_WINDOW_VAR, HEADERS_TIMEOUT_VAR,
    IDLE_TIMEOUT_VAR, RETRY_BACKOFF_VAR,
};

/// The environment variables luminos reads, captured once.
#[derive(Debug, Clone, Default)]
pub(crate) struct Env {
    pub anthropic_api_key: Option<String>,
    pub anthropic_auth_token: Option<String>,
    pub anthropic_base_url: Option<String>,
    pub luminos_model: Option<String>,
    pub luminos_cache_dir: Option<OsString>,
    /// `LUMINOS_IDLE_TIMEOUT_SECS`, unparsed.
    pub luminos_idle_timeout: Option<String>,
    /// `LUMINOS_HEADERS_TIMEOUT_SECS`, unparsed.
    pub luminos_headers_timeout: Option<String>,
    /// `LUMINOS_ATTEMPT_DEADLINE_SECS`, unparsed.
    pub luminos_attempt_deadline: Option<String>,
    /// `LUMINOS_RETRY_BACKOFF_MS`, unparsed.
    pub luminos_retry_backoff: Option<String>,
    /// `LUMINOS_BATCH_POLL_MS`, unparsed.
    pub luminos_batch_poll: Option<String>,
    /// `LUMINOS_CONTEXT_WINDOW`, unparsed.
    pub luminos_context_window: Option<String>,
    pub no_color: bool,
    /// Whether stderr is a terminal.
    pub stderr_is_terminal: bool,
    /// Whether stdin is a terminal (`luminos mcp` typed by hand).
    pub stdin_is_terminal: bool,
    /// The width of the terminal stdout is, when it is one: the terminal
    /// report fits it.
    pub stdout_columns: Option<usize>,
}

impl Env {
    /// Read the process environment.
    pub(crate) fn from_process() -> Self {
        use std::io::IsTerminal;
        Env {
            anthropic_api_key: non_empty_var("ANTHROPIC_API_KEY"),
            anthropic_auth_token: non_empty_var("ANTHROPIC_AUTH_TOKEN"),
            anthropic_base_url: non_empty_var("ANTHROPIC_BASE_URL"),
            luminos_model: non_empty_var("LUMINOS_MODEL"),
            luminos_cache_dir: std::env::var_os("LUMINOS_CACHE_DIR").filter(|v| !v.is_empty()),
            luminos_idle_timeout: non_empty_var(IDLE_TIMEOUT_VAR),
            luminos_headers_timeout: non_empty_var(HEADERS_TIMEOUT_VAR),
            luminos_attempt_deadline: non_empty_var(ATTEMPT_DEADLINE_VAR),
            luminos_retry_backoff: non_empty_var(RETRY_BACKOFF_VAR),
            luminos_batch_poll: non_empty_var(BATCH_POLL_VAR),
            luminos_context_window: non_empty_var(CONTEXT_WINDOW_VAR),
            // https://no-color.org: present and non-empty disables colour.
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            stderr_is_terminal: std::io::stderr().is_terminal(),
            stdin_is_terminal: std::io::stdin().is_terminal(),
            stdout_columns: stdout_columns(),
        }
    }
}

/// The columns of the terminal stdout is, or `None` when it is not one.
fn stdout_columns() -> Option<usize> {
    // SAFETY: TIOCGWINSZ only fills in the `winsize` we own; an fd that is
    // not a terminal makes it fail, which is handled.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) };
    (rc == 0 && size.ws_col > 0).then(|| usize::from(size.ws_col))
}

fn non_empty_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}
