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
//! What is said is the same on a terminal and on a pipe. By default it is
//! short: a few lines per directory (the loop starting, one line per
//! `think`, one per flag, warnings). The full trace (every tool call, the
//! model's own text, each note field, each cached directory) is for
//! `-v`/`--verbose` ([`Progress::ai_detail`], [`Progress::ai_dir_detail`]).
//!
//! The live lines are laid out by `line.rs` for the terminal's width at
//! every redraw, never padded to it, so a resized terminal does not
//! scramble the scrollback and no figure is cut in the middle.
//!
//! [`Progress`] is cheap to clone and safe to share between threads and tasks.

mod line;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{
    MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle as BarStyle,
};

use crate::text::{escape_control, format_thousands};
use line::{LiveField, lay_out};

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
    /// `-v`: the full trace.
    verbose: bool,
    // Serializes plain-mode writes so lines from concurrent tasks never interleave.
    plain_lock: Mutex<()>,
}

enum Mode {
    Live { multi: MultiProgress, color: bool },
    Plain,
    Silent,
}

impl Progress {
    /// A reporter for the given style; `verbose` prints the full trace.
    pub fn new(style: ProgressStyle, verbose: bool) -> Self {
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
                verbose,
                plain_lock: Mutex::new(()),
            }),
        }
    }

    /// A reporter that prints nothing, for library callers and unit tests.
    pub fn silent() -> Self {
        Progress {
            inner: Arc::new(Inner {
                mode: Mode::Silent,
                verbose: false,
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

    /// The full trace (`-v`) is on.
    pub(crate) fn is_verbose(&self) -> bool {
        self.inner.verbose
    }

    /// [`Progress::ai`], with `-v` only: a line of the full trace.
    pub(crate) fn ai_detail(&self, msg: &str) {
        if self.is_verbose() {
            self.ai(msg);
        }
    }

    /// Take the live lines off the terminal (Ctrl-C: what follows is the
    /// last word, and no half-drawn line stays above the shell's prompt).
    pub(crate) fn clear_live(&self) {
        if let Mode::Live { multi, .. } = &self.inner.mode {
            let _ = multi.clear();
        }
    }

    /// Start a counted phase such as "Classifying files". Live: a line with
    /// the running count. Plain: one line when it starts and one when it
    /// finishes.
    pub fn counter(&self, tag: &str, label: &str) -> Counter {
        let prefix = format!("  [{tag}] {label}...");
        let bar = match &self.inner.mode {
            Mode::Live { multi, .. } => {
                let shown = prefix.clone();
                let bar = live_bar(multi, None, move |state| {
                    let count = [LiveField::kept(" ", format_thousands(state.pos()))];
                    lay_out(&shown, &count, terminal_width())
                });
                bar.enable_steady_tick(Duration::from_millis(120));
                Some(bar)
            }
            Mode::Plain => {
                self.write_plain(&prefix);
                None
            }
            Mode::Silent => None,
        };
        Counter {
            progress: self.clone(),
            bar,
            prefix,
        }
    }

    /// The live board of the dir-loop phase: directories done out of
    /// `total`, the spend so far and the loops running now. Draws only on a
    /// terminal; elsewhere the per-directory lines already tell the story.
    pub(crate) fn dir_board(&self, total: usize) -> DirBoard {
        let state = Arc::new(Mutex::new(BoardState::default()));
        let bar = match &self.inner.mode {
            Mode::Live { multi, color } => {
                let (shared, color) = (state.clone(), *color);
                let bar = live_bar(multi, Some(total as u64), move |progress| {
                    board_line(&lock(&shared), progress, terminal_width(), color)
                });
                bar.enable_steady_tick(Duration::from_millis(250));
                Some(bar)
            }
            Mode::Plain | Mode::Silent => None,
        };
        DirBoard { bar, state }
    }

    /// The live line of a batch being waited on: what it holds and how
    /// long luminos has waited. Draws only on a terminal; elsewhere the
    /// batcher prints a line when a round is sent and one when it is read.
    pub(crate) fn batch_line(&self) -> BatchLine {
        let fields: Arc<Mutex<Vec<LiveField>>> = Arc::default();
        let bar = match &self.inner.mode {
            Mode::Live { multi, .. } => {
                let shown = fields.clone();
                let bar = live_bar(multi, None, move |_| {
                    lay_out("  [AI]", &lock(&shown), terminal_width())
                });
                bar.enable_steady_tick(Duration::from_millis(250));
                Some(bar)
            }
            Mode::Plain | Mode::Silent => None,
        };
        BatchLine { bar, fields }
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

/// A live line of `multi` whose whole text is `draw`'s, asked again at
/// every redraw (so a resized terminal gets a line laid out for its new
/// width within a tick). `len`: the bar's total, when it counts to one.
fn live_bar(
    multi: &MultiProgress,
    len: Option<u64>,
    draw: impl Fn(&ProgressState) -> String + Send + Sync + 'static,
) -> ProgressBar {
    let bar = multi.add(match len {
        Some(len) => ProgressBar::new(len),
        None => ProgressBar::new_spinner(),
    });
    let draw = Arc::new(draw);
    let style = BarStyle::with_template("{line}")
        .map(|style| {
            style.with_key(
                "line",
                move |state: &ProgressState, out: &mut dyn std::fmt::Write| {
                    let _ = out.write_str(&draw(state));
                },
            )
        })
        .unwrap_or_else(|_| BarStyle::default_spinner());
    bar.set_style(style);
    bar
}

/// The terminal's width in columns (80 when stderr is not a terminal or
/// does not say).
fn terminal_width() -> usize {
    // SAFETY: TIOCGWINSZ only fills in the `winsize` we own; an fd that is
    // not a terminal makes it fail, which is handled.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut size) };
    if rc == 0 && size.ws_col > 0 {
        usize::from(size.ws_col)
    } else {
        80
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A counted phase started by [`Progress::counter`].
pub struct Counter {
    progress: Progress,
    bar: Option<ProgressBar>,
    prefix: String,
}

impl Counter {
    /// Count one more item.
    #[cfg(test)]
    pub(crate) fn tick(&self) {
        self.add(1);
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
    state: Arc<Mutex<BoardState>>,
}

#[derive(Default)]
struct BoardState {
    running: Vec<String>,
    tokens: u64,
    dollars: f64,
    /// The model is not in the catalog: the dollars use a stand-in's prices.
    assumed: bool,
}

/// Columns of the board's bar, brackets included.
const BOARD_BAR: usize = 22;

/// The board's fields for `done` of `total` directories: what gives way
/// first on a narrow terminal is the bar, then the token count, then the
/// list of running loops (shortened before it goes); the count and the
/// spend always stay.
fn board_fields(state: &BoardState, done: u64, total: u64) -> Vec<LiveField> {
    let running = if state.running.is_empty() {
        String::from("-")
    } else {
        state.running.join(", ")
    };
    let mut fields = vec![
        LiveField::droppable("", bar_text(done, total), 4),
        LiveField::kept(" ", format!("{done}/{total} dirs")),
        LiveField::kept(" | ", format!("${:.2}", state.dollars)),
    ];
    if state.assumed {
        fields.push(LiveField::kept(" ", "at assumed prices"));
    }
    fields.push(LiveField::droppable(
        " | ",
        format!("{} tokens", format_thousands(state.tokens)),
        3,
    ));
    fields.push(LiveField::cuttable(" | ", format!("running: {running}"), 2));
    fields
}

/// `[=========>          ]`.
fn bar_text(done: u64, total: u64) -> String {
    let inside = BOARD_BAR - 2;
    let filled = if total == 0 {
        inside
    } else {
        (done.min(total) as usize * inside) / total as usize
    };
    let arrow = usize::from(filled < inside && done > 0);
    format!(
        "[{}{}{}]",
        "=".repeat(filled),
        ">".repeat(arrow),
        " ".repeat(inside - filled - arrow)
    )
}

/// The board's line at `width` columns; the bar coloured when `color`.
fn board_line(state: &BoardState, progress: &ProgressState, width: usize, color: bool) -> String {
    let (done, total) = (progress.pos(), progress.len().unwrap_or_default());
    let line = lay_out("  [AI]", &board_fields(state, done, total), width);
    let bar = bar_text(done, total);
    if color && line.contains(&bar) {
        line.replacen(&bar, &format!("\x1b[36m{bar}\x1b[0m"), 1)
    } else {
        line
    }
}

impl DirBoard {
    /// A loop started on `dir` (its shown name).
    pub(crate) fn started(&self, dir: &str) {
        lock(&self.state)
            .running
            .push(escape_control(dir).into_owned());
    }

    /// The loop on `dir` finished.
    pub(crate) fn finished(&self, dir: &str) {
        let mut state = lock(&self.state);
        let dir = escape_control(dir);
        if let Some(at) = state.running.iter().position(|d| *d == dir) {
            state.running.remove(at);
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// Say on the live line that the dollars are at assumed prices (the
    /// model is not in the catalog).
    pub(crate) fn assume_prices(&self) {
        lock(&self.state).assumed = true;
    }

    /// The run's totals so far: `tokens` processed and produced, `dollars`.
    pub(crate) fn spent(&self, tokens: u64, dollars: f64) {
        let mut state = lock(&self.state);
        state.tokens = tokens;
        state.dollars = dollars;
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
    fields: Arc<Mutex<Vec<LiveField>>>,
}

impl BatchLine {
    /// Show where batch `round` (`id`, escaped) stands: requests pending,
    /// succeeded and errored (when any), and the wait so far. On a narrow
    /// terminal the batch id is shortened or goes first, then the wait;
    /// the counts always stay.
    pub(crate) fn waiting(&self, round: u32, id: &str, counts: [u64; 3], waited: Duration) {
        if self.bar.is_none() {
            return;
        }
        let [pending, succeeded, errored] = counts;
        let mut fields = vec![
            LiveField::kept("", format!("round {round}")),
            LiveField::cuttable(" ", format!("({})", escape_control(id)), 3),
            LiveField::kept(": ", format!("{} pending", format_thousands(pending))),
            LiveField::kept(", ", format!("{} succeeded", format_thousands(succeeded))),
        ];
        if errored > 0 {
            fields.push(LiveField::kept(
                ", ",
                format!("{} errored", format_thousands(errored)),
            ));
        }
        fields.push(LiveField::droppable(
            "; ",
            format!("waited {}", crate::text::format_duration(waited)),
            2,
        ));
        *lock(&self.fields) = fields;
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
        c.tick();
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
        let line = |width| lay_out("  [AI]", &board_fields(&lock(&board.state), 1, 3), width);
        assert_eq!(
            line(200),
            "  [AI] [======>             ] 1/3 dirs | $0.50 | 12,345 tokens | running: \
             docs\\x1b[31m"
        );
        board.assume_prices();
        assert_eq!(
            line(200),
            "  [AI] [======>             ] 1/3 dirs | $0.50 at assumed prices | 12,345 tokens \
             | running: docs\\x1b[31m"
        );
    }

    /// The board at the widths users have: everything at 200 columns, the
    /// list of running loops shortened at 80, whole fields dropped at 60,
    /// and never a figure cut in the middle.
    #[test]
    fn the_board_fits_60_80_and_200_columns() {
        let board = Progress::silent().dir_board(41);
        for dir in ["pkg0/part1", "pkg3/part2", "pkg7", "docs/guide"] {
            board.started(dir);
        }
        board.spent(1_234_567, 0.523);
        let state = lock(&board.state);
        let fields = board_fields(&state, 17, 41);
        let at = |width| lay_out("  [AI]", &fields, width);
        assert_eq!(
            at(200),
            "  [AI] [========>           ] 17/41 dirs | $0.52 | 1,234,567 tokens | running: \
             pkg0/part1, pkg3/part2, pkg7, docs/guide"
        );
        assert_eq!(
            at(80),
            "  [AI] 17/41 dirs | $0.52 | 1,234,567 tokens | running: pkg0/part1, pkg3/part2…"
        );
        assert_eq!(
            at(60),
            "  [AI] 17/41 dirs | $0.52 | running: pkg0/part1, pkg3/part…"
        );
        for width in [60, 80, 200] {
            assert!(line::columns(&at(width)) < width);
        }
    }

    #[test]
    fn the_bar_fills_in_proportion() {
        assert_eq!(bar_text(0, 4), format!("[{}]", " ".repeat(20)));
        assert_eq!(
            bar_text(1, 4),
            format!("[{}>{}]", "=".repeat(5), " ".repeat(14))
        );
        assert_eq!(bar_text(4, 4), format!("[{}]", "=".repeat(20)));
        assert_eq!(bar_text(0, 0), format!("[{}]", "=".repeat(20)));
    }

    #[test]
    fn a_batch_line_keeps_its_counts_whole() {
        let line = Progress::silent().batch_line();
        let fields = |errored| {
            let line = BatchLine {
                bar: Some(ProgressBar::hidden()),
                fields: line.fields.clone(),
            };
            line.waiting(
                2,
                "msgbatch_01HkcTjaV5uDC8jWR4ZsDV8d",
                [1_204, 17, errored],
                Duration::from_secs(245),
            );
            lock(&line.fields).clone()
        };
        assert_eq!(
            lay_out("  [AI]", &fields(0), 200),
            "  [AI] round 2 (msgbatch_01HkcTjaV5uDC8jWR4ZsDV8d): 1,204 pending, 17 succeeded; \
             waited 4m 05s"
        );
        assert_eq!(
            lay_out("  [AI]", &fields(0), 80),
            "  [AI] round 2 (msgbatch_01HkcTjaV…: 1,204 pending, 17 succeeded; waited 4m 05s"
        );
        assert_eq!(
            lay_out("  [AI]", &fields(3), 60),
            "  [AI] round 2: 1,204 pending, 17 succeeded, 3 errored"
        );
    }
}
