//! The lifetime a batch run's prompt-cache marks ask for: what its rounds
//! need, and no more.
//!
//! A prefix one round writes is read by the next round, after the rest of
//! the first round, the client's own work between the two, and part of the
//! second: about two rounds' worth of time. A 5-minute mark (written at
//! 1.25x the input price) serves while rounds come back well within that;
//! a round that takes longer lets it lapse, and the next round writes
//! again what it should have read. An hour-long mark (2x) survives any
//! round short of an hour, the time most batches take (batch processing
//! page, read 2026-11-27). So marks last 5 minutes until a round takes
//! longer than [`QUICK_ROUND`] (half the 5-minute lifetime) or a round of
//! [`LARGE_ROUND`] requests or more is coming (a large batch is likely to
//! be slow), and an hour from then on: a run never goes back, since a slow
//! round says the API is busy. The choice is the pure [`choose`]; what the
//! run saw is [`RoundPace`], which the batcher keeps (with the longest round in
//! the batch state, so a resumed run starts where the killed one was).

use std::time::Duration;

use crate::ai::api::catalog::CacheTtl;

/// The longest round after which 5-minute marks still serve: half their
/// lifetime, since a prefix is read about two rounds' worth of time after
/// it was written.
pub(crate) const QUICK_ROUND: Duration = Duration::from_secs(150);

/// A round of this many requests or more is taken to be slow: a guess (the
/// API says how long most batches take, not how that grows with their
/// size), chosen so that the first rounds of a large tree, hundreds of
/// directory loops wide, start with hour-long marks.
pub(crate) const LARGE_ROUND: usize = 100;

/// Why marks ask for an hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slow {
    /// A round took this long.
    Round(Duration),
    /// A round of this many requests was coming.
    Wide(usize),
}

/// What a batch run has seen of its rounds, and what it chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct RoundPace {
    /// The longest round so far.
    pub longest: Duration,
    /// Since when marks ask for an hour (the round, 1-based), and why.
    pub hour_from: Option<(u32, Slow)>,
}

/// The lifetime of the marks of a round about to go (`round`, 1-based) of
/// `width` requests, after rounds whose longest took `longest`: an hour
/// when one was slow or this one is large (and why), else 5 minutes.
pub(crate) fn choose(longest: Duration, width: usize) -> Option<Slow> {
    if longest > QUICK_ROUND {
        Some(Slow::Round(longest))
    } else if width >= LARGE_ROUND {
        Some(Slow::Wide(width))
    } else {
        None
    }
}

impl RoundPace {
    /// A run whose earlier rounds (a killed run's) took at most `longest`.
    pub(crate) fn resumed(longest: Duration) -> RoundPace {
        RoundPace {
            longest,
            hour_from: None,
        }
    }

    /// A round took `took`.
    pub(crate) fn round_took(&mut self, took: Duration) {
        self.longest = self.longest.max(took);
    }

    /// The lifetime for a request of round `round` (1-based), which is
    /// about `width` requests wide: once an hour, always an hour.
    pub(crate) fn lifetime(&mut self, round: u32, width: usize) -> CacheTtl {
        if self.hour_from.is_none() {
            self.hour_from = choose(self.longest, width).map(|why| (round, why));
        }
        match self.hour_from {
            Some(_) => CacheTtl::OneHour,
            None => CacheTtl::FiveMinutes,
        }
    }

    /// The run's note on it.
    pub(crate) fn note(&self) -> String {
        let quick = crate::text::format_duration(QUICK_ROUND);
        match self.hour_from {
            None => format!(
                "Batch rounds came back within {quick}, so prompt-cache marks asked for 5 \
                 minutes (a write at 1.25x the input price rather than 2x for an hour)"
            ),
            Some((round, why)) => {
                let because = match why {
                    Slow::Round(took) => format!(
                        "a round took {}, longer than a 5-minute mark can wait for the next \
                         (within {quick})",
                        crate::text::format_duration(took)
                    ),
                    Slow::Wide(width) => format!(
                        "a round of {width} requests (from {LARGE_ROUND}) is likely to take \
                         longer than a 5-minute mark can wait"
                    ),
                };
                let from = if round <= 1 {
                    "From the first batch round".to_string()
                } else {
                    format!("From batch round {round}")
                };
                format!("{from}, prompt-cache marks asked for an hour: {because}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_small_rounds_keep_five_minutes() {
        assert_eq!(choose(Duration::from_secs(2), 3), None);
        assert_eq!(choose(QUICK_ROUND, LARGE_ROUND - 1), None);
        let mut pace = RoundPace::default();
        for round in 1..=5 {
            pace.round_took(Duration::from_millis(300));
            assert_eq!(pace.lifetime(round, 4), CacheTtl::FiveMinutes);
        }
        assert!(
            pace.note().contains("asked for 5 minutes"),
            "{}",
            pace.note()
        );
    }

    #[test]
    fn a_slow_round_moves_to_an_hour_for_good() {
        let mut pace = RoundPace::default();
        assert_eq!(pace.lifetime(1, 1), CacheTtl::FiveMinutes);
        pace.round_took(Duration::from_secs(600));
        assert_eq!(pace.lifetime(2, 1), CacheTtl::OneHour);
        pace.round_took(Duration::from_secs(1));
        assert_eq!(pace.lifetime(3, 1), CacheTtl::OneHour);
        assert_eq!(
            pace.hour_from,
            Some((2, Slow::Round(Duration::from_secs(600))))
        );
        assert!(
            pace.note().starts_with(
                "From batch round 2, prompt-cache marks asked for an hour: a round took 10m 00s"
            ),
            "{}",
            pace.note()
        );
    }

    #[test]
    fn a_wide_round_starts_at_an_hour() {
        let mut pace = RoundPace::default();
        assert_eq!(pace.lifetime(1, LARGE_ROUND), CacheTtl::OneHour);
        assert_eq!(pace.hour_from, Some((1, Slow::Wide(LARGE_ROUND))));
        assert!(
            pace.note().starts_with("From the first batch round"),
            "{}",
            pace.note()
        );
        // A resumed run remembers how slow the killed one's rounds were.
        let mut resumed = RoundPace::resumed(Duration::from_secs(900));
        assert_eq!(resumed.lifetime(1, 1), CacheTtl::OneHour);
    }
}
