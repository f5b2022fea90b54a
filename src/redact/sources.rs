//! Which sources (files) a run's redactor has learned whole, and the gate
//! that holds tool results until the learning before them is over.
//!
//! A source is learned once per run: the first caller reads it and runs the
//! rules over it; a caller that comes while it is being learned waits, so
//! its output is not redacted before the values it may quote are known
//! (two directory loops grepping the same tree at once once raced here:
//! the second sent its output while the first was still reading). The
//! hits are reported once, to the first caller that records them as the
//! file's notice (see [`super::Redactor::learn_source`]).
//!
//! The gate: the orchestrator learns every text file of the tree beside the
//! survey and planning calls; tools wait for it before they run
//! ([`super::Redactor::wait_learned`]). A guard ends the learning when it
//! drops, so a learning thread that fails still opens the gate.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard};

use super::Hit;

/// Where a source stands.
#[derive(Debug)]
enum State {
    /// A thread is reading and learning it.
    Learning,
    /// Learned: its hits, and whether a caller has reported them.
    Learned { hits: Vec<Hit>, told: bool },
}

#[derive(Debug, Default)]
struct Inner {
    sources: HashMap<String, State>,
    /// Learnings before the first tool result still running.
    learning: usize,
}

/// The sources learned, and the gate.
#[derive(Debug, Default)]
pub(crate) struct LearnedSources {
    inner: Mutex<Inner>,
    changed: Condvar,
}

/// What a caller of [`LearnedSources::claim`] is to do.
pub(super) enum Claim {
    /// Learn it (then [`Learning::finish`]).
    Learn,
    /// It is learned: these hits are this caller's to report (none when it
    /// does not tell, or another caller already did).
    Done(Vec<Hit>),
}

impl LearnedSources {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Claim `key` for learning, or wait while another thread learns it.
    pub(super) fn claim(&self, key: &str, tell: bool) -> Claim {
        let mut inner = self.lock();
        loop {
            match inner.sources.get_mut(key) {
                None => {
                    inner.sources.insert(key.to_owned(), State::Learning);
                    return Claim::Learn;
                }
                Some(State::Learning) => {
                    inner = self.changed.wait(inner).unwrap_or_else(|e| e.into_inner());
                }
                Some(State::Learned { hits, told }) => {
                    if tell && !*told {
                        *told = true;
                        return Claim::Done(hits.clone());
                    }
                    return Claim::Done(Vec::new());
                }
            }
        }
    }

    /// Whether `key` was learned and held a value (its hits not yet told).
    pub(super) fn held_values(&self, key: &str) -> bool {
        matches!(
            self.lock().sources.get(key),
            Some(State::Learned { hits, .. }) if !hits.is_empty()
        )
    }

    /// The learning before the first tool result begins.
    pub(super) fn begin(&self) {
        self.lock().learning += 1;
    }

    /// A learning before the first tool result ends.
    pub(super) fn end(&self) {
        let mut inner = self.lock();
        inner.learning = inner.learning.saturating_sub(1);
        drop(inner);
        self.changed.notify_all();
    }

    /// Block until no learning before the first tool result runs.
    pub(super) fn wait_learned(&self) {
        let mut inner = self.lock();
        while inner.learning > 0 {
            inner = self.changed.wait(inner).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// A source being learned by this thread: finished with its hits, or (when
/// the thread panics) marked learned with none, so no caller waits forever.
pub(super) struct Learning<'a> {
    sources: &'a LearnedSources,
    key: &'a str,
    done: bool,
}

impl<'a> Learning<'a> {
    pub(super) fn new(sources: &'a LearnedSources, key: &'a str) -> Learning<'a> {
        Learning {
            sources,
            key,
            done: false,
        }
    }

    /// Record the hits; the caller's share of them (all when it tells).
    pub(super) fn finish(&mut self, hits: Vec<Hit>, tell: bool) -> Vec<Hit> {
        self.done = true;
        self.sources.lock().sources.insert(
            self.key.to_owned(),
            State::Learned {
                hits: if tell { Vec::new() } else { hits.clone() },
                told: tell,
            },
        );
        self.sources.changed.notify_all();
        if tell { hits } else { Vec::new() }
    }
}

impl Drop for Learning<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.sources.lock().sources.insert(
                self.key.to_owned(),
                State::Learned {
                    hits: Vec::new(),
                    told: true,
                },
            );
            self.sources.changed.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_source_is_learned_once_and_its_hits_told_once() {
        let sources = LearnedSources::default();
        assert!(matches!(sources.claim("a", false), Claim::Learn));
        let hit = Hit {
            rule: "jwt",
            line: 1,
            severity: crate::redact::RuleSeverity::Critical,
            known: false,
        };
        Learning::new(&sources, "a").finish(vec![hit.clone()], false);
        assert!(matches!(sources.claim("a", false), Claim::Done(h) if h.is_empty()));
        assert!(matches!(sources.claim("a", true), Claim::Done(h) if h == vec![hit.clone()]));
        assert!(matches!(sources.claim("a", true), Claim::Done(h) if h.is_empty()));
    }

    #[test]
    fn a_second_caller_waits_for_the_first() {
        let sources = Arc::new(LearnedSources::default());
        assert!(matches!(sources.claim("k", true), Claim::Learn));
        let waiting = {
            let sources = sources.clone();
            std::thread::spawn(move || matches!(sources.claim("k", true), Claim::Done(_)))
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiting.is_finished(), "it waits while k is learned");
        drop(Learning::new(&sources, "k"));
        assert!(waiting.join().unwrap());
    }

    #[test]
    fn the_gate_opens_when_the_learning_ends() {
        let sources = Arc::new(LearnedSources::default());
        sources.wait_learned();
        sources.begin();
        let waiting = {
            let sources = sources.clone();
            std::thread::spawn(move || sources.wait_learned())
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiting.is_finished());
        sources.end();
        waiting.join().unwrap();
    }
}
