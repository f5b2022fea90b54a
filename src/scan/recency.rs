//! The most recently modified files: what
//! `find TARGET -type f -not -path '*/.*' -printf '%T@\t%p\n'`, sorted newest
//! first, gave the original.
//!
//! - Only regular files count; symlinks are not followed (`-type f`).
//! - Hidden paths are skipped unless `-a`. The original matched `*/.*`
//!   against the whole path, so a target whose own path had a dot component
//!   (`~/.config/app`) lost every file; we look only below the target.
//! - A `-x` name excludes a directory of that name and a file of that name
//!   (the original's `*/NAME/*` and `*/NAME` patterns), again below the
//!   target only.
//! - Ties on the modification time are broken by path, so the answer does
//!   not depend on directory order.
//! - Unlike the original, nothing in a directory luminos skips (build
//!   output, the skip list: [`super::skip`]) is listed: a build touches
//!   every file there, and would push the sources off the list.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use chrono::{Local, TimeZone};

use super::RecentFile;
use super::walk::{Kind, Walk, WalkRules, in_skipped_subtree};

/// How many files the report lists.
pub(crate) const RECENT_COUNT: usize = 10;

struct Candidate {
    secs: i64,
    nanos: i64,
    path: PathBuf,
}

/// Newest first; equal times by path.
fn rank(a: &Candidate, b: &Candidate) -> Ordering {
    (b.secs, b.nanos)
        .cmp(&(a.secs, a.nanos))
        .then_with(|| a.path.as_os_str().cmp(b.path.as_os_str()))
}

/// The `n` best-ranked files offered so far, best first. A tree of 200,000
/// files keeps ten paths, not 200,000, and builds a path only for a file
/// at least as new as the tenth.
struct Newest {
    n: usize,
    top: Vec<Candidate>,
}

impl Newest {
    fn new(n: usize) -> Newest {
        Newest {
            n,
            top: Vec::with_capacity(n + 1),
        }
    }

    fn offer(&mut self, secs: i64, nanos: i64, path: impl FnOnce() -> PathBuf) {
        if let Some(last) = self.top.last()
            && self.top.len() >= self.n
            && (secs, nanos) < (last.secs, last.nanos)
        {
            return;
        }
        let candidate = Candidate {
            secs,
            nanos,
            path: path(),
        };
        let at = self
            .top
            .partition_point(|c| rank(c, &candidate) == Ordering::Less);
        if at < self.n {
            self.top.insert(at, candidate);
            self.top.truncate(self.n);
        }
    }
}

/// The `n` newest regular files under `target`.
pub(crate) fn find_recent_files(
    target: &Path,
    walk: &Walk,
    rules: &WalkRules,
    n: usize,
) -> Vec<RecentFile> {
    let mut newest = Newest::new(n);
    let skipped = walk.skipped_roots();
    for (rel, record) in &walk.dirs {
        if !record.visible || in_skipped_subtree(&skipped, rel) {
            continue;
        }
        let dir = super::join_rel(target, rel);
        for entry in &record.listing.entries {
            if entry.kind != Kind::File
                || entry.excluded
                || (!rules.show_hidden && entry.is_hidden())
            {
                continue;
            }
            newest.offer(entry.mtime_secs, entry.mtime_nanos, || {
                dir.join(&entry.name)
            });
        }
    }
    newest
        .top
        .into_iter()
        .map(|c| {
            let modified = timestamp(c.secs, c.nanos);
            RecentFile {
                name: c
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                path: c.path.to_string_lossy().into_owned(),
                modified,
                modified_human: local_time(modified),
            }
        })
        .collect()
}

/// Seconds since the epoch as the float Python parsed from find's `%T@`.
pub(crate) fn timestamp(secs: i64, nanos: i64) -> f64 {
    if secs >= 0 && (0..1_000_000_000).contains(&nanos) {
        // Parsing the decimal text gives the same float as Python's float().
        format!("{secs}.{nanos:09}")
            .parse()
            .unwrap_or(secs as f64 + nanos as f64 / 1e9)
    } else {
        secs as f64 + nanos as f64 / 1e9
    }
}

/// `datetime.fromtimestamp(ts).strftime('%Y-%m-%d %H:%M:%S')`: local time,
/// with Python's rounding to the microsecond (which can carry into the next
/// second).
pub(crate) fn local_time(ts: f64) -> String {
    let mut secs = ts.trunc();
    let micros = ((ts - secs) * 1e6).round_ties_even();
    if micros >= 1e6 {
        secs += 1.0;
    } else if micros < 0.0 {
        secs -= 1.0;
    }
    match Local.timestamp_opt(secs as i64, 0).earliest() {
        Some(time) => time.format("%Y-%m-%d %H:%M:%S").to_string(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Keeping the best `n` as files come gives what sorting them all
        /// and taking `n` gives, ties and all.
        #[test]
        fn newest_keeps_what_a_full_sort_keeps(
            files in proptest::collection::vec((0..4i64, 0..3i64, "[a-c]{1,3}"), 0..40),
            n in 0..12usize,
        ) {
            let mut seen = std::collections::HashSet::new();
            let files: Vec<Candidate> = files
                .into_iter()
                .filter(|(_, _, name)| seen.insert(name.clone()))
                .map(|(secs, nanos, name)| Candidate { secs, nanos, path: PathBuf::from(name) })
                .collect();
            let mut newest = Newest::new(n);
            for file in &files {
                newest.offer(file.secs, file.nanos, || file.path.clone());
            }
            let mut sorted: Vec<&Candidate> = files.iter().collect();
            sorted.sort_by(|a, b| rank(a, b));
            let want: Vec<_> = sorted.iter().take(n).map(|c| (c.secs, c.nanos, &c.path)).collect();
            let got: Vec<_> = newest.top.iter().map(|c| (c.secs, c.nanos, &c.path)).collect();
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn timestamps_parse_like_python() {
        assert_eq!(timestamp(1_700_000_000, 0), 1_700_000_000.0);
        assert_eq!(timestamp(1_700_000_000, 500_000_000), 1_700_000_000.5);
        assert_eq!(timestamp(1, 123_456_789), 1.123456789);
        assert_eq!(timestamp(-2, 500_000_000), -1.5);
    }

    #[test]
    fn local_time_rounds_to_the_microsecond_like_python() {
        let base = local_time(1_700_000_000.0);
        assert_eq!(base.len(), 19);
        assert_eq!(local_time(1_700_000_000.4), base);
        assert_eq!(
            local_time(1_700_000_000.999_999_7),
            local_time(1_700_000_001.0)
        );
        assert_ne!(local_time(1_700_000_000.999_999_7), base);
    }
}
