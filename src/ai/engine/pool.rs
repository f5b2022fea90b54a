//! The shared turn pool: the plan's global budget made real.
//!
//! The planner is told it has 10 turns per directory to spread. In the
//! original that number was advice only: a loop that ran out of its own
//! allocation stopped even when its siblings had finished early. Here the
//! budget is a pool. What the plan did not allocate, and what finished loops
//! did not use, can be borrowed one turn at a time by a loop that reached its
//! allocation without submitting, up to the per-directory ceiling.
//!
//! The pool is the only state dir loops share besides the cache and the token
//! tracker; it is a mutex around two counters.

use std::sync::Mutex;

use crate::ai::rules::plan::{BASE_TURNS_PER_DIR, MAX_TURNS_CEILING};

/// Turns the run may still hand out beyond the loops' allocations.
#[derive(Debug)]
pub(crate) struct TurnPool {
    state: Mutex<PoolState>,
}

#[derive(Debug, Clone, Copy)]
struct PoolState {
    available: u32,
    borrowed: u32,
}

impl TurnPool {
    /// The pool of a run investigating `allocations.len()` directories: the
    /// global budget minus what the plan allocated (never below zero, since a
    /// plan may give priority directories more than the average).
    pub(crate) fn new(allocations: &[u32]) -> TurnPool {
        let dirs = u32::try_from(allocations.len()).unwrap_or(u32::MAX);
        let budget = BASE_TURNS_PER_DIR.saturating_mul(dirs);
        let allocated = allocations
            .iter()
            .fold(0u32, |sum, turns| sum.saturating_add(*turns));
        TurnPool {
            state: Mutex::new(PoolState {
                available: budget.saturating_sub(allocated),
                borrowed: 0,
            }),
        }
    }

    /// Take one more turn for a loop whose limit is `current_limit`: granted
    /// when the pool has one and the loop is below the ceiling.
    pub(crate) fn borrow_one(&self, current_limit: u32) -> bool {
        if current_limit >= MAX_TURNS_CEILING {
            return false;
        }
        let mut state = self.lock();
        if state.available == 0 {
            return false;
        }
        state.available -= 1;
        state.borrowed += 1;
        true
    }

    /// Whether a loop whose limit is `current_limit` could borrow a turn
    /// now (without taking it).
    pub(crate) fn could_lend(&self, current_limit: u32) -> bool {
        current_limit < MAX_TURNS_CEILING && self.lock().available > 0
    }

    /// A finished loop returns the turns it had (allocated plus borrowed) but
    /// did not use.
    pub(crate) fn give_back(&self, unused: u32) {
        let mut state = self.lock();
        state.available = state.available.saturating_add(unused);
    }

    /// Turns that can still be borrowed.
    #[cfg(test)]
    pub(crate) fn available(&self) -> u32 {
        self.lock().available
    }

    /// Turns borrowed so far by all loops.
    #[cfg(test)]
    pub(crate) fn borrowed(&self) -> u32 {
        self.lock().borrowed
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_starts_with_what_the_plan_left_unallocated() {
        // 3 dirs → budget 30; 5 + 10 + 10 allocated.
        assert_eq!(TurnPool::new(&[5, 10, 10]).available(), 5);
        // A generous plan leaves nothing, never a negative pool.
        assert_eq!(TurnPool::new(&[25, 25]).available(), 0);
        assert_eq!(TurnPool::new(&[]).available(), 0);
    }

    #[test]
    fn borrowing_stops_at_the_ceiling_and_when_empty() {
        let pool = TurnPool::new(&[5, 5]);
        assert_eq!(pool.available(), 10);
        assert!(!pool.borrow_one(MAX_TURNS_CEILING));
        assert!(pool.borrow_one(MAX_TURNS_CEILING - 1));
        assert_eq!((pool.available(), pool.borrowed()), (9, 1));
        for _ in 0..9 {
            assert!(pool.borrow_one(5));
        }
        assert!(!pool.borrow_one(5), "empty pool");
        pool.give_back(3);
        assert!(pool.borrow_one(5), "unused turns of a finished loop");
        assert_eq!((pool.available(), pool.borrowed()), (2, 11));
    }

    #[test]
    fn concurrent_borrowers_never_overdraw() {
        let pool = std::sync::Arc::new(TurnPool::new(&[5; 10]));
        let granted: u32 = (0..8)
            .map(|_| {
                let pool = pool.clone();
                std::thread::spawn(move || (0..20).filter(|_| pool.borrow_one(0)).count() as u32)
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .sum();
        assert_eq!(granted, 50);
        assert_eq!(pool.available(), 0);
    }
}
