//! Progress on stderr, for the scan and the investigation.
//!
//! On a terminal this is one live line (counters, the dir board, a batch
//! being waited on) redrawn in place, with permanent lines printed above it
//! (`live.rs`). Anywhere else it is plain `[scan] ...` / `[AI] ...` lines
//! with no carriage returns, so logs and CI output stay readable. stdout is
//! never touched here.
//!
//! Every piece of text that may come from a file name or a model is escaped
//! with [`crate::text::escape_control`] before it is printed.
//!
//! What is said is the same on a terminal and on a pipe. By default it is
//! short: a few lines per directory (the loop starting, one line per
//! `think`, one per flag, warnings). The full trace (every tool call, the
//! model's own text, each note field, each cached directory) is for
//! `-v`/`--verbose` ([`Progress::ai_detail`]).
//!
//! The live line is laid out by `line.rs` for the terminal's width at
//! every redraw, never padded to it, so a resized terminal does not
//! scramble the scrollback and no figure is cut in the middle.
//!
//! A caller with no terminal of its own (the MCP server) hands every line
//! to a [`LineSink`] instead ([`Progress::to_sink`]): the same lines as on
//! a pipe, one call each.
//!
//! [`Progress`] is cheap to clone and safe to share between threads and tasks.

mod line;
mod live;
mod money;

pub(crate) use money::budget_line;

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::money::Usd;
use crate::text::{escape_control, format_thousands};
use line::{LiveField, lay_out};
use live::{Draw, Screen};

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
    /// Routine lines only with `-v`: what warns still shows (see
    /// [`Progress::answer_only`]).
    quiet: bool,
    // Serializes plain-mode writes so lines from concurrent tasks never interleave.
    plain_lock: Mutex<()>,
}

enum Mode {
    Live { screen: Arc<Screen>, color: bool },
    Plain,
    Silent,
    Sink(LineSink),
}

/// Where a [`Progress`] made by [`Progress::to_sink`] sends each line
/// (escaped, as a pipe would get it).
pub(crate) type LineSink = Arc<dyn Fn(&str) + Send + Sync>;

impl Progress {
    /// A reporter for the given style; `verbose` prints the full trace.
    pub fn new(style: ProgressStyle, verbose: bool) -> Self {
        Progress::styled(style, verbose, false)
    }

    /// A reporter for a command whose output is one answer (`luminos
    /// ask`): without `-v` it says nothing routine (no scan step, no pass,
    /// no count), only what warns or qualifies the answer (a line that
    /// starts `Warning` or `Note`, a flag, a failed API call that is
    /// retried) and what is printed with
    /// [`Progress::println`]; `-v` shows everything, as [`Progress::new`].
    pub fn answer_only(style: ProgressStyle, verbose: bool) -> Self {
        Progress::styled(style, verbose, !verbose)
    }

    fn styled(style: ProgressStyle, verbose: bool, quiet: bool) -> Self {
        let mode = match style {
            ProgressStyle::Live { color } => Mode::Live {
                screen: Screen::start(),
                color,
            },
            ProgressStyle::Plain => Mode::Plain,
        };
        Progress::with_mode(mode, verbose, quiet)
    }

    fn with_mode(mode: Mode, verbose: bool, quiet: bool) -> Self {
        Progress {
            inner: Arc::new(Inner {
                mode,
                verbose,
                quiet,
                plain_lock: Mutex::new(()),
            }),
        }
    }

    /// Whether a routine line `msg` is held back (see
    /// [`Progress::answer_only`]).
    fn holds_back(&self, msg: &str) -> bool {
        const ALERTS: [&str; 4] = ["Warning", "Note", "FLAG", "API call failed"];
        self.inner.quiet && !ALERTS.iter().any(|alert| msg.starts_with(alert))
    }

    /// A reporter that prints nothing, for library callers and unit tests.
    pub fn silent() -> Self {
        Progress::with_mode(Mode::Silent, false, false)
    }

    /// A reporter that hands each line, as plain mode would print it, to
    /// `sink`; nothing is drawn and nothing goes to stderr by itself.
    pub(crate) fn to_sink(sink: LineSink, verbose: bool) -> Self {
        Progress::with_mode(Mode::Sink(sink), verbose, false)
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
            Mode::Live { screen, .. } => screen.println(&line),
            Mode::Plain | Mode::Sink(_) => self.write_plain(&line),
            Mode::Silent => {}
        }
    }

    /// `  [scan] <msg>`
    pub fn scan(&self, msg: &str) {
        if !self.holds_back(msg) {
            self.println(&format!("  [scan] {msg}"));
        }
    }

    /// `  [AI] <msg>`
    pub fn ai(&self, msg: &str) {
        if !self.holds_back(msg) {
            self.println(&format!("  [AI] {msg}"));
        }
    }

    /// `  [AI] [<dir>] <msg>`: a line that belongs to one directory's loop, so
    /// output from concurrent loops stays attributable.
    pub(crate) fn ai_dir(&self, dir: &str, msg: &str) {
        if !self.holds_back(msg) {
            self.println(&format!("  [AI] [{dir}] {msg}"));
        }
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

    /// Take the live line off the terminal for good (Ctrl-C: what follows
    /// is the last word, and no half-drawn line stays above the shell's
    /// prompt).
    pub(crate) fn clear_live(&self) {
        if let Mode::Live { screen, .. } = &self.inner.mode {
            screen.clear();
        }
    }

    /// Show `draw`'s line live until the source is dropped; none off a
    /// terminal.
    fn live(
        &self,
        draw: impl Fn(usize, bool) -> String + Send + Sync + 'static,
    ) -> Option<LiveSource> {
        let Mode::Live { screen, color } = &self.inner.mode else {
            return None;
        };
        let color = *color;
        let draw: Draw = Arc::new(move |width| draw(width, color));
        Some(LiveSource {
            id: screen.add(draw),
            screen: screen.clone(),
        })
    }

    /// Start a counted phase such as "Classifying files". Live: a line with
    /// the running count. Plain: one line, when it finishes (a step is one
    /// line on a pipe).
    pub fn counter(&self, tag: &str, label: &str) -> Counter {
        let prefix = format!("  [{tag}] {label}...");
        let count = Arc::new(AtomicU64::new(0));
        let (shown, counted) = (prefix.clone(), count.clone());
        if self.inner.quiet {
            return Counter {
                progress: Progress::silent(),
                live: None,
                prefix,
                count,
            };
        }
        let live = self.live(move |width, _| {
            let count = [LiveField::kept(
                " ",
                format_thousands(counted.load(Ordering::Relaxed)),
            )];
            lay_out(&shown, &count, width)
        });
        Counter {
            progress: self.clone(),
            live,
            prefix,
            count,
        }
    }

    /// The live board of the dir-loop phase: directories done out of
    /// `total`, the spend so far and the loops running now. Draws only on a
    /// terminal; elsewhere the per-directory lines already tell the story.
    pub(crate) fn dir_board(&self, total: usize, budget: Option<Usd>) -> DirBoard {
        let state = Arc::new(Mutex::new(BoardState {
            total: total as u64,
            budget,
            ..BoardState::default()
        }));
        let shared = state.clone();
        let live = self.live(move |width, color| board_line(&lock(&shared), width, color));
        DirBoard { live, state }
    }

    /// The live line of a batch being waited on: what it holds and how
    /// long luminos has waited. Draws only on a terminal; elsewhere the
    /// batcher prints a line when a round is sent and one when it is read.
    pub(crate) fn batch_line(&self) -> BatchLine {
        let fields: Arc<Mutex<Vec<LiveField>>> = Arc::default();
        let shown = fields.clone();
        let live = self.live(move |width, _| lay_out("  [AI]", &lock(&shown), width));
        BatchLine { live, fields }
    }

    /// One plain line: on stderr, or to the sink.
    fn write_plain(&self, line: &str) {
        let _guard = self
            .inner
            .plain_lock
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        match &self.inner.mode {
            Mode::Sink(sink) => sink(line),
            Mode::Live { .. } | Mode::Plain | Mode::Silent => {
                let _ = writeln!(std::io::stderr().lock(), "{line}");
            }
        }
    }
}

/// One source of the live line; dropping it takes its line away.
struct LiveSource {
    screen: Arc<Screen>,
    id: u64,
}

impl LiveSource {
    /// Draw again now: what the line shows changed.
    fn refresh(&self) {
        self.screen.refresh();
    }
}

impl Drop for LiveSource {
    fn drop(&mut self) {
        self.screen.remove(self.id);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A counted phase started by [`Progress::counter`].
pub struct Counter {
    progress: Progress,
    live: Option<LiveSource>,
    prefix: String,
    count: Arc<AtomicU64>,
}

impl Counter {
    /// Count one more item.
    #[cfg(test)]
    pub(crate) fn tick(&self) {
        self.add(1);
    }

    /// Count `n` more items without naming them. (The live line shows the
    /// count at its next redraw.)
    pub fn add(&self, n: u64) {
        self.count.fetch_add(n, Ordering::Relaxed);
    }

    /// End the phase with `  [tag] label... done`.
    pub fn finish(mut self) {
        let line = format!("{} done", self.prefix);
        // The live line goes before the permanent one is printed.
        let was_live = self.live.take().is_some();
        match &self.progress.inner.mode {
            Mode::Live { .. } if was_live => self.progress.println(&line),
            Mode::Live { .. } | Mode::Plain | Mode::Sink(_) => self.progress.write_plain(&line),
            Mode::Silent => {}
        }
    }
}

/// The dir-loop phase's live display; see [`Progress::dir_board`].
pub(crate) struct DirBoard {
    live: Option<LiveSource>,
    state: Arc<Mutex<BoardState>>,
}

#[derive(Default)]
struct BoardState {
    done: u64,
    total: u64,
    running: Vec<String>,
    tokens: u64,
    dollars: Usd,
    /// What the run may spend (`--budget`), shown beside the spend.
    budget: Option<Usd>,
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
        LiveField::kept(" | ", spend_of_budget(state.dollars, state.budget)),
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

/// `$0.41 of $5.00`, or `$0.41` without a budget.
fn spend_of_budget(dollars: Usd, budget: Option<Usd>) -> String {
    match budget {
        Some(budget) => format!("{dollars} of {budget}"),
        None => dollars.to_string(),
    }
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
fn board_line(state: &BoardState, width: usize, color: bool) -> String {
    let line = lay_out(
        "  [AI]",
        &board_fields(state, state.done, state.total),
        width,
    );
    let bar = bar_text(state.done, state.total);
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
        self.refresh();
    }

    /// `n` more loops were bought while the work ran.
    pub(crate) fn add_to_total(&self, n: usize) {
        lock(&self.state).total += n as u64;
        self.refresh();
    }

    /// The loop on `dir` finished.
    pub(crate) fn finished(&self, dir: &str) {
        {
            let mut state = lock(&self.state);
            let dir = escape_control(dir);
            if let Some(at) = state.running.iter().position(|d| *d == dir) {
                state.running.remove(at);
            }
            state.done += 1;
        }
        self.refresh();
    }

    /// Say on the live line that the dollars are at assumed prices (the
    /// model is not in the catalog).
    pub(crate) fn assume_prices(&self) {
        lock(&self.state).assumed = true;
        self.refresh();
    }

    /// The run's totals so far: `tokens` processed and produced, `dollars`.
    pub(crate) fn spent(&self, tokens: u64, dollars: Usd) {
        {
            let mut state = lock(&self.state);
            state.tokens = tokens;
            state.dollars = dollars;
        }
        self.refresh();
    }

    fn refresh(&self) {
        if let Some(live) = &self.live {
            live.refresh();
        }
    }
}

/// A batch's live line; see [`Progress::batch_line`].
pub(crate) struct BatchLine {
    live: Option<LiveSource>,
    fields: Arc<Mutex<Vec<LiveField>>>,
}

impl BatchLine {
    /// Show where batch `round` (`id`, escaped) stands: requests pending,
    /// succeeded and errored (when any), and the wait so far. On a narrow
    /// terminal the batch id is shortened or goes first, then the wait;
    /// the counts always stay.
    pub(crate) fn waiting(&self, round: u32, id: &str, counts: [u64; 3], waited: Duration) {
        let Some(live) = &self.live else {
            return;
        };
        *lock(&self.fields) = batch_fields(round, id, counts, waited);
        live.refresh();
    }
}

/// The batch line's fields; see [`BatchLine::waiting`].
fn batch_fields(round: u32, id: &str, counts: [u64; 3], waited: Duration) -> Vec<LiveField> {
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
    fields
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
    fn a_sink_gets_the_plain_lines_escaped_and_in_order() {
        let lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let seen = lines.clone();
        let p = Progress::to_sink(
            Arc::new(move |line: &str| seen.lock().unwrap().push(line.to_string())),
            false,
        );
        p.scan("hello");
        let c = p.counter("scan", "Counting");
        c.add(3);
        c.finish();
        p.ai("bad\x1b[31m");
        p.ai_detail("only with -v");
        assert_eq!(
            *lines.lock().unwrap(),
            [
                "  [scan] hello",
                "  [scan] Counting... done",
                "  [AI] bad\\x1b[31m",
            ]
        );
    }

    /// Answer-only progress says what warns, and nothing routine.
    #[test]
    fn answer_only_progress_keeps_warnings_alone() {
        let lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let seen = lines.clone();
        let p = Progress::with_mode(
            Mode::Sink(Arc::new(move |line: &str| {
                seen.lock().unwrap().push(line.to_string())
            })),
            false,
            true,
        );
        p.scan("Building directory tree");
        p.counter("scan", "Classifying files").finish();
        p.ai("Question: what?");
        p.ai("Warning: could not save x");
        p.ai_dir("ask", "FLAG [INFO] a.env: 1 secret redacted");
        p.ai("API call failed: overloaded; retry 1/6 in 480ms");
        p.println("Warning: model x is deprecated");
        assert_eq!(
            *lines.lock().unwrap(),
            [
                "  [AI] Warning: could not save x",
                "  [AI] [ask] FLAG [INFO] a.env: 1 secret redacted",
                "  [AI] API call failed: overloaded; retry 1/6 in 480ms",
                "Warning: model x is deprecated",
            ]
        );
    }

    #[test]
    fn the_board_tracks_running_directories_and_spend() {
        let board = Progress::silent().dir_board(3, None);
        board.started("src");
        board.started("docs\x1b[31m");
        board.finished("src");
        board.spent(12_345, Usd::new(0.5));
        let line = |width| board_line(&lock(&board.state), width, false);
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
        let board = Progress::silent().dir_board(41, Some(Usd::new(5.0)));
        for dir in ["pkg0/part1", "pkg3/part2", "pkg7", "docs/guide"] {
            board.started(dir);
        }
        board.spent(1_234_567, Usd::new(0.523));
        let state = lock(&board.state);
        let fields = board_fields(&state, 17, 41);
        let at = |width| lay_out("  [AI]", &fields, width);
        assert_eq!(
            at(200),
            "  [AI] [========>           ] 17/41 dirs | $0.52 of $5.00 | 1,234,567 tokens | \
             running: pkg0/part1, pkg3/part2, pkg7, docs/guide"
        );
        assert_eq!(
            at(80),
            "  [AI] 17/41 dirs | $0.52 of $5.00 | 1,234,567 tokens | running: pkg0/part1, p…"
        );
        assert_eq!(
            at(60),
            "  [AI] 17/41 dirs | $0.52 of $5.00 | running: pkg0/part1, …"
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
        let fields = |errored| {
            batch_fields(
                2,
                "msgbatch_01HkcTjaV5uDC8jWR4ZsDV8d",
                [1_204, 17, errored],
                Duration::from_secs(245),
            )
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
