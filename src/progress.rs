//! Progress on stderr, for the scan and the investigation.
//!
//! On a terminal this is a live indicatif display: spinners and counters that
//! redraw in place, with permanent lines printed above them. Anywhere else it is
//! plain `[scan] ...` / `[AI] ...` lines with no carriage returns, so logs and
//! CI output stay readable. stdout is never touched here.
//!
//! Every piece of text that may come from a file name or a model is escaped
//! with [`crate::text::escape_control`] before it is printed.
//!
//! [`Progress`] is cheap to clone and safe to share between threads and tasks.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle as BarStyle};

use crate::text::escape_control;

/// How progress is drawn on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressStyle {
    /// A live display (stderr is a terminal).
    Live {
        /// Colour is allowed (`NO_COLOR` unset).
        color: bool,
    },
    /// Plain lines with no carriage returns (stderr is a pipe or file).
    Plain,
}

/// The stderr reporter shared by every phase of a run.
#[derive(Clone)]
pub struct Progress {
    inner: Arc<Inner>,
}

struct Inner {
    mode: Mode,
    // Serializes plain-mode writes so lines from concurrent tasks never interleave.
    plain_lock: Mutex<()>,
}

enum Mode {
    Live { multi: MultiProgress, color: bool },
    Plain,
    Silent,
}

impl Progress {
    /// A reporter for the given style.
    pub fn new(style: ProgressStyle) -> Self {
        let mode = match style {
            ProgressStyle::Live { color } => Mode::Live {
                multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
                color,
            },
            ProgressStyle::Plain => Mode::Plain,
        };
        Progress {
            inner: Arc::new(Inner {
                mode,
                plain_lock: Mutex::new(()),
            }),
        }
    }

    /// A reporter that prints nothing, for library callers and unit tests.
    pub fn silent() -> Self {
        Progress {
            inner: Arc::new(Inner {
                mode: Mode::Silent,
                plain_lock: Mutex::new(()),
            }),
        }
    }

    /// True when drawing a live display on a terminal.
    #[cfg(test)]
    pub(crate) fn is_live(&self) -> bool {
        matches!(self.inner.mode, Mode::Live { .. })
    }

    /// Print a permanent line, above any live display. The text is escaped.
    pub fn println(&self, line: &str) {
        let line = escape_control(line);
        match &self.inner.mode {
            Mode::Live { multi, .. } => {
                // println only fails when the draw target is hidden; fall back.
                if multi.println(line.as_ref()).is_err() {
                    self.write_plain(&line);
                }
            }
            Mode::Plain => self.write_plain(&line),
            Mode::Silent => {}
        }
    }

    /// `  [scan] <msg>`
    pub fn scan(&self, msg: &str) {
        self.println(&format!("  [scan] {msg}"));
    }

    /// `  [AI] <msg>`
    pub fn ai(&self, msg: &str) {
        self.println(&format!("  [AI] {msg}"));
    }

    /// `  [AI] [<dir>] <msg>`: a line that belongs to one directory's loop, so
    /// output from concurrent loops stays attributable.
    pub(crate) fn ai_dir(&self, dir: &str, msg: &str) {
        self.println(&format!("  [AI] [{dir}] {msg}"));
    }

    /// Start a counted phase such as "Classifying files". Live: a spinner with
    /// the running count and the current item. Plain: one line when it starts
    /// and one when it finishes.
    pub fn counter(&self, tag: &str, label: &str) -> Counter {
        let prefix = format!("  [{tag}] {label}...");
        match &self.inner.mode {
            Mode::Live { multi, .. } => {
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_style(
                    BarStyle::with_template("{prefix} {pos} {wide_msg}")
                        .unwrap_or_else(|_| BarStyle::default_spinner()),
                );
                bar.set_prefix(prefix.clone());
                bar.enable_steady_tick(Duration::from_millis(120));
                Counter {
                    progress: self.clone(),
                    bar: Some(bar),
                    prefix,
                }
            }
            Mode::Plain => {
                self.write_plain(&prefix);
                Counter {
                    progress: self.clone(),
                    bar: None,
                    prefix,
                }
            }
            Mode::Silent => Counter {
                progress: self.clone(),
                bar: None,
                prefix,
            },
        }
    }

    /// The live board of the dir-loop phase: directories done out of
    /// `total`, the ones running now, and the spend so far. Draws only on a
    /// terminal; elsewhere the per-directory lines already tell the story.
    pub(crate) fn dir_board(&self, total: usize) -> DirBoard {
        let bar = match &self.inner.mode {
            Mode::Live { multi, color } => {
                let template = if *color {
                    "  [AI] {bar:20.cyan/blue} {pos}/{len} dirs {wide_msg}"
                } else {
                    "  [AI] {bar:20} {pos}/{len} dirs {wide_msg}"
                };
                let bar = multi.add(ProgressBar::new(total as u64));
                bar.set_style(
                    BarStyle::with_template(template)
                        .unwrap_or_else(|_| BarStyle::default_bar())
                        .progress_chars("=> "),
                );
                bar.enable_steady_tick(Duration::from_millis(250));
                Some(bar)
            }
            Mode::Plain | Mode::Silent => None,
        };
        DirBoard {
            bar,
            state: Mutex::new(BoardState::default()),
        }
    }

    /// The live line of a batch being waited on: what it holds and how
    /// long luminos has waited. Draws only on a terminal; elsewhere the
    /// batcher prints a line when a round is sent and one when it is read.
    pub(crate) fn batch_line(&self) -> BatchLine {
        let bar = match &self.inner.mode {
            Mode::Live { multi, .. } => {
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_style(
                    BarStyle::with_template("  [AI] {spinner} {wide_msg}")
                        .unwrap_or_else(|_| BarStyle::default_spinner()),
                );
                bar.enable_steady_tick(Duration::from_millis(250));
                Some(bar)
            }
            Mode::Plain | Mode::Silent => None,
        };
        BatchLine { bar }
    }

    fn write_plain(&self, line: &str) {
        let _guard = self
            .inner
            .plain_lock
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }
}

/// A counted phase started by [`Progress::counter`].
pub struct Counter {
    progress: Progress,
    bar: Option<ProgressBar>,
    prefix: String,
}

impl Counter {
    /// Count one more item; `current` names it on the live display.
    #[cfg(test)]
    pub(crate) fn tick(&self, current: &str) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(escape_control(current).into_owned());
        }
    }

    /// Count `n` more items without naming them.
    pub fn add(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }

    /// End the phase with `  [tag] label... done`.
    pub fn finish(self) {
        let line = format!("{} done", self.prefix);
        match &self.bar {
            Some(bar) => {
                bar.finish_and_clear();
                self.progress.println(&line);
            }
            None => {
                if !matches!(self.progress.inner.mode, Mode::Silent) {
                    self.progress.write_plain(&line);
                }
            }
        }
    }
}

/// The dir-loop phase's live display; see [`Progress::dir_board`].
pub(crate) struct DirBoard {
    bar: Option<ProgressBar>,
    state: Mutex<BoardState>,
}

#[derive(Default)]
struct BoardState {
    running: Vec<String>,
    tokens: u64,
    dollars: f64,
    /// The model is not in the catalog: the dollars use a stand-in's prices.
    assumed: bool,
}

impl DirBoard {
    /// A loop started on `dir` (its shown name).
    pub(crate) fn started(&self, dir: &str) {
        let mut state = self.lock();
        state.running.push(escape_control(dir).into_owned());
        self.redraw(&state);
    }

    /// `n` more loops were bought while the work ran.
    pub(crate) fn add_to_total(&self, n: usize) {
        if let Some(bar) = &self.bar {
            bar.inc_length(n as u64);
        }
    }

    /// The loop on `dir` finished.
    pub(crate) fn finished(&self, dir: &str) {
        let mut state = self.lock();
        let dir = escape_control(dir);
        if let Some(at) = state.running.iter().position(|d| *d == dir) {
            state.running.remove(at);
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        self.redraw(&state);
    }

    /// Say on the live line that the dollars are at assumed prices (the
    /// model is not in the catalog).
    pub(crate) fn assume_prices(&self) {
        let mut state = self.lock();
        state.assumed = true;
        self.redraw(&state);
    }

    /// The run's totals so far: `tokens` processed and produced, `dollars`.
    pub(crate) fn spent(&self, tokens: u64, dollars: f64) {
        let mut state = self.lock();
        if (state.tokens, state.dollars) == (tokens, dollars) {
            return;
        }
        state.tokens = tokens;
        state.dollars = dollars;
        self.redraw(&state);
    }

    /// The message line: what runs now and what it cost so far.
    fn message(state: &BoardState) -> String {
        let running = if state.running.is_empty() {
            String::from("-")
        } else {
            state.running.join(", ")
        };
        let assumed = if state.assumed {
            " at assumed prices"
        } else {
            ""
        };
        format!(
            "| {} tokens, ${:.2}{assumed} | running: {running}",
            crate::text::format_thousands(state.tokens),
            state.dollars
        )
    }

    fn redraw(&self, state: &BoardState) {
        if let Some(bar) = &self.bar {
            bar.set_message(Self::message(state));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BoardState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for DirBoard {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A batch's live line; see [`Progress::batch_line`].
pub(crate) struct BatchLine {
    bar: Option<ProgressBar>,
}

impl BatchLine {
    /// Show `text` (escaped) on the line.
    pub(crate) fn set(&self, text: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(escape_control(text).into_owned());
        }
    }
}

impl Drop for BatchLine {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silent_progress_is_a_no_op() {
        let p = Progress::silent();
        p.scan("hello");
        let c = p.counter("scan", "Counting");
        c.tick("x");
        c.finish();
        assert!(!p.is_live());
    }

    #[test]
    fn the_board_tracks_running_directories_and_spend() {
        let board = Progress::silent().dir_board(3);
        board.started("src");
        board.started("docs\x1b[31m");
        board.finished("src");
        board.spent(12_345, 0.5);
        {
            let state = board.lock();
            assert_eq!(
                DirBoard::message(&state),
                "| 12,345 tokens, $0.50 | running: docs\\x1b[31m"
            );
        }
        board.assume_prices();
        assert_eq!(
            DirBoard::message(&board.lock()),
            "| 12,345 tokens, $0.50 at assumed prices | running: docs\\x1b[31m"
        );
    }
}
