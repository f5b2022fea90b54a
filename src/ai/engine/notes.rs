//! The run's notes: what the engine did that a reader of the report should
//! know and that is no failure (a tool input read leniently, the window a
//! run was sized to, the prompt cache's lifetime under `--batch`). Each
//! note has a key, and says how many times it happened. The report
//! shows them in the order they were first said (`investigation.notes`).
//!
//! Its edges: it holds text; what is noted, and when, is its callers'.

use std::sync::Mutex;

/// Notes of one run, shared by its conversations.
#[derive(Debug, Default)]
pub(crate) struct RunNotes {
    notes: Mutex<Vec<Note>>,
}

#[derive(Debug)]
struct Note {
    key: &'static str,
    times: u32,
    text: String,
}

impl RunNotes {
    /// Count one more time under `key`, the note said as `say(times)`.
    pub(crate) fn count(&self, key: &'static str, say: fn(u32) -> String) {
        let mut notes = self.lock();
        match notes.iter_mut().find(|note| note.key == key) {
            Some(note) => {
                note.times += 1;
                note.text = say(note.times);
            }
            None => notes.push(Note {
                key,
                times: 1,
                text: say(1),
            }),
        }
    }

    /// Say the note under `key` once: `text` replaces what it said before
    /// (a fact of the run, such as the window it was sized to, rather than
    /// something counted).
    pub(crate) fn set(&self, key: &'static str, text: String) {
        let mut notes = self.lock();
        match notes.iter_mut().find(|note| note.key == key) {
            Some(note) => note.text = text,
            None => notes.push(Note {
                key,
                times: 1,
                text,
            }),
        }
    }

    /// Every note, in the order first said.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.lock().iter().map(|note| note.text.clone()).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Note>> {
        self.notes.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_keep_their_order_and_counted_ones_their_count() {
        let notes = RunNotes::default();
        notes.count("lenient", |n| format!("{n} times"));
        notes.count("other", |n| format!("other {n}"));
        notes.count("lenient", |n| format!("{n} times"));
        assert_eq!(notes.lines(), ["2 times", "other 1"]);
        notes.set("window", "first".into());
        notes.set("window", "second".into());
        notes.count("lenient", |n| format!("{n} times"));
        assert_eq!(notes.lines(), ["3 times", "other 1", "second"]);
    }
}
