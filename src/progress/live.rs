//! The live line on a terminal: one line at the bottom of stderr, redrawn
//! in place with a carriage return and clear-line, with permanent lines
//! printed above it.
//!
//! Nothing is padded to the terminal's width and the last column is never
//! written (the line comes from `line.rs`, laid out for the width at every
//! redraw), so no line relies on the terminal wrapping it: a resize leaves
//! the scrollback as it was printed. (The progress-bar library used before
//! padded every line to the width and let the terminal wrap it, so any
//! resize scrambled what was above.)
//!
//! Several live sources may exist at once (the dir board, and a batch
//! being waited on); the newest is the one shown. A thread redraws it
//! every [`TICK`], so counts and spend move and a resized terminal gets a
//! line that fits; the thread ends with the last [`Progress`](super::Progress).
//! After [`Screen::clear`] (Ctrl-C) nothing is drawn live again.

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

/// How often the live line is redrawn.
const TICK: Duration = Duration::from_millis(200);

/// `\r` then erase the whole line: the cursor is back at the start of an
/// empty line.
const CLEAR: &str = "\r\x1b[2K";

/// What draws one live line for a terminal `width` columns wide.
pub(crate) type Draw = Arc<dyn Fn(usize) -> String + Send + Sync>;

/// The terminal side of the live display.
pub(crate) struct Screen {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The live sources, oldest first, by id.
    sources: Vec<(u64, Draw)>,
    next_id: u64,
    /// The text of the live line on the screen now, if one is.
    shown: Option<String>,
    /// Ctrl-C: nothing more is drawn live.
    stopped: bool,
}

impl Screen {
    /// A screen, and the thread that redraws it while it is in use.
    pub(crate) fn start() -> Arc<Screen> {
        let screen = Arc::new(Screen {
            state: Mutex::new(State::default()),
        });
        let weak = Arc::downgrade(&screen);
        // Without the thread the line is still drawn at every change; it
        // only stops moving between changes.
        let _ = std::thread::Builder::new()
            .name("luminos-progress".into())
            .spawn(move || tick(weak));
        screen
    }

    /// Print `line` (already escaped) as a permanent line above the live
    /// one.
    pub(crate) fn println(&self, line: &str) {
        let mut state = self.lock();
        let mut out = String::new();
        if state.shown.take().is_some() {
            out.push_str(CLEAR);
        }
        out.push_str(line);
        out.push('\n');
        state.draw_into(&mut out, terminal_width());
        write(&out);
    }

    /// Show `draw`'s line until the returned id is [`Screen::remove`]d.
    pub(crate) fn add(&self, draw: Draw) -> u64 {
        let mut state = self.lock();
        let id = state.next_id;
        state.next_id += 1;
        state.sources.push((id, draw));
        state.redraw();
        id
    }

    /// Take the source `id` off; the next newest is shown, if any.
    pub(crate) fn remove(&self, id: u64) {
        let mut state = self.lock();
        state.sources.retain(|(source, _)| *source != id);
        state.redraw();
    }

    /// Take the live line off the screen for good.
    pub(crate) fn clear(&self) {
        let mut state = self.lock();
        state.stopped = true;
        if state.shown.take().is_some() {
            write(CLEAR);
        }
    }

    /// Draw the live line again now (a count or figure changed).
    pub(crate) fn refresh(&self) {
        self.lock().redraw();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        self.clear();
    }
}

impl State {
    /// Redraw the live line when its text changed.
    fn redraw(&mut self) {
        let mut out = String::new();
        let width = terminal_width();
        let line = self.line(width);
        if line == self.shown {
            return;
        }
        if self.shown.take().is_some() {
            out.push_str(CLEAR);
        }
        self.draw_into(&mut out, width);
        write(&out);
    }

    /// The newest source's line, unless stopped or there is none.
    fn line(&self, width: usize) -> Option<String> {
        if self.stopped {
            return None;
        }
        let (_, draw) = self.sources.last()?;
        Some(draw(width)).filter(|line| !line.is_empty())
    }

    /// Append the live line to `out` (the cursor is at the start of an
    /// empty line) and remember it.
    fn draw_into(&mut self, out: &mut String, width: usize) {
        self.shown = self.line(width);
        if let Some(line) = &self.shown {
            out.push_str(line);
        }
    }
}

/// Redraw every [`TICK`] while the screen is in use.
fn tick(screen: Weak<Screen>) {
    loop {
        std::thread::sleep(TICK);
        match screen.upgrade() {
            Some(screen) => screen.refresh(),
            None => return,
        }
    }
}

fn write(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
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
