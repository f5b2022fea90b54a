//! The scheduler's dependency graph over the work's order: which directory
//! is ready (everything below it in the order has finished), which is
//! waiting, and which starts next (the earliest ready one). A directory
//! may join later ([`Schedule::add`], a loop a replanning round bought)
//! unless one above it has started: children before parents holds
//! throughout. Pure: it knows paths and indexes only, not loops, money or
//! tasks; [`super::run_work`] drives it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::ai::rules::listed::ListedDirs;

/// Where a directory of the order stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Pending,
    Running,
    Done,
}

/// The dependency graph over an order: who is ready, who is waiting.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    order: Vec<PathBuf>,
    slots: Vec<Slot>,
    /// Indexes of each directory's ancestors that are also in the order.
    ancestors: Vec<Vec<usize>>,
    /// How many listed descendants each directory still waits for.
    waiting: Vec<usize>,
    ready: BTreeSet<usize>,
    index: ListedDirs,
}

impl Schedule {
    /// The graph for `order` (any order; the plan's is children-first).
    pub(crate) fn new(order: &[PathBuf]) -> Schedule {
        let index = ListedDirs::new(order);
        let ancestors: Vec<Vec<usize>> = order
            .iter()
            .map(|dir| index.ancestors(dir).collect())
            .collect();
        let mut waiting = vec![0; order.len()];
        for list in &ancestors {
            for &a in list {
                waiting[a] += 1;
            }
        }
        let ready = (0..order.len()).filter(|&i| waiting[i] == 0).collect();
        Schedule {
            order: order.to_vec(),
            slots: vec![Slot::Pending; order.len()],
            ancestors,
            waiting,
            ready,
            index,
        }
    }

    /// Add `dir` after the others: it waits for the directories below it
    /// that have not finished, and those above it wait for it. A directory
    /// that finished without running (a loop the budget could not start)
    /// may join again. `None` (and nothing added) when one above it has
    /// started already, or it is waiting or running.
    pub(crate) fn add(&mut self, dir: &Path) -> Option<usize> {
        let ancestors: Vec<usize> = self.index.ancestors(dir).collect();
        if ancestors.iter().any(|&a| self.slots[a] != Slot::Pending) {
            return None;
        }
        let existing = self.index.get(dir);
        if existing.is_some_and(|i| self.slots[i] != Slot::Done) {
            return None;
        }
        let n = existing.unwrap_or(self.order.len());
        let below: Vec<usize> = (0..self.order.len())
            .filter(|&i| self.order[i].starts_with(dir) && self.order[i] != dir)
            .collect();
        let mut waiting = 0;
        for &i in &below {
            if existing.is_none() {
                self.ancestors[i].push(n);
            }
            if self.slots[i] != Slot::Done {
                waiting += 1;
            }
        }
        for &a in &ancestors {
            self.waiting[a] += 1;
            self.ready.remove(&a);
        }
        if existing.is_some() {
            self.slots[n] = Slot::Pending;
            self.waiting[n] = waiting;
        } else {
            self.order.push(dir.to_path_buf());
            self.slots.push(Slot::Pending);
            self.ancestors.push(ancestors);
            self.waiting.push(waiting);
            self.index.insert(dir.to_path_buf(), n);
        }
        if waiting == 0 {
            self.ready.insert(n);
        }
        Some(n)
    }

    /// Whether a directory of the graph at or below `dir` has not
    /// finished.
    pub(crate) fn unfinished_at_or_below(&self, dir: &Path) -> bool {
        (0..self.order.len()).any(|i| self.slots[i] != Slot::Done && self.order[i].starts_with(dir))
    }

    /// The earliest ready directory, marked running.
    pub(crate) fn start_next(&mut self) -> Option<usize> {
        let i = self.ready.pop_first()?;
        self.slots[i] = Slot::Running;
        Some(i)
    }

    /// The earliest ready directory for which `wanted` holds, marked
    /// running.
    #[cfg(test)]
    pub(crate) fn start_next_where(&mut self, wanted: impl Fn(usize) -> bool) -> Option<usize> {
        let i = self.ready.iter().copied().find(|&i| wanted(i))?;
        self.ready.remove(&i);
        self.slots[i] = Slot::Running;
        Some(i)
    }

    /// The directory [`Schedule::start_next`] would start.
    pub(crate) fn peek_next(&self) -> Option<usize> {
        self.ready.first().copied()
    }

    /// Whether some directory could start now.
    pub(crate) fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Whether some directory for which `wanted` holds could start now.
    #[cfg(test)]
    pub(crate) fn has_ready_where(&self, wanted: impl Fn(usize) -> bool) -> bool {
        self.ready.iter().any(|&i| wanted(i))
    }

    /// Mark `i` finished; its ancestors may become ready.
    pub(crate) fn finish(&mut self, i: usize) {
        debug_assert_eq!(self.slots[i], Slot::Running);
        if self.slots[i] == Slot::Done {
            return;
        }
        self.slots[i] = Slot::Done;
        for &a in &self.ancestors[i] {
            self.waiting[a] -= 1;
            if self.waiting[a] == 0 {
                self.ready.insert(a);
            }
        }
    }

    /// Directories that never started.
    #[cfg(test)]
    pub(crate) fn not_started(&self) -> usize {
        self.slots.iter().filter(|s| **s == Slot::Pending).count()
    }
}
