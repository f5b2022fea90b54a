//! The parallel walk: a queue of jobs (list a directory, count what an
//! ignored one holds) that the workers drain, each listing with
//! [`list_dir`], digesting the fingerprints of the visible directories it
//! listed and queueing their subdirectories, and keeping what it found in a
//! harvest of its own; the harvests are merged once the queue is empty and
//! no worker can add to it.
//!
//! Its edges: what one listing holds, and what is left out of it, is
//! `walk.rs`'s; this file only schedules the listings, refuses a directory
//! that is its own ancestor, and merges.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use super::{DirRecord, IgnoredCount, Kind, Listing, Walk, WalkRules, list_dir};
use crate::progress::Counter;
use crate::scan::IgnoreSummary;
use crate::scan::ScanOptions;
use crate::scan::dirs;
use crate::scan::fingerprint;
use crate::scan::ignore_files::RuleStack;
use crate::scan::ignored::{CountTask, IgnoredTally, count_dir};

/// The chain of directories from the target down to a job, to refuse
/// entering a directory that is its own ancestor.
struct Ancestor {
    dev: u64,
    ino: u64,
    parent: Option<Arc<Ancestor>>,
}

fn has_ancestor(chain: &Option<Arc<Ancestor>>, dev: u64, ino: u64) -> bool {
    let mut node = chain.as_deref();
    while let Some(a) = node {
        if a.dev == dev && a.ino == ino {
            return true;
        }
        node = a.parent.as_deref();
    }
    false
}

enum Job {
    /// List a directory and record it.
    List {
        rel: PathBuf,
        visible: bool,
        rules: RuleStack,
        chain: Option<Arc<Ancestor>>,
    },
    /// Count the files and bytes under an ignored directory.
    Count(CountTask),
}

struct Queue {
    jobs: Vec<Job>,
    active: usize,
}

/// Per-thread results, merged at the end.
#[derive(Default)]
struct Harvest {
    dirs: Vec<(PathBuf, DirRecord)>,
    rule_files: Vec<PathBuf>,
    files_removed: u64,
    dirs_removed: u64,
    ignored: IgnoredTally,
}

struct Shared<'a> {
    target: &'a Path,
    rules: &'a WalkRules,
    queue: Mutex<Queue>,
    ready: Condvar,
    counter: &'a Counter,
}

/// Walk `target` with `threads` workers.
pub(crate) fn walk(
    target: &Path,
    options: &ScanOptions,
    threads: usize,
    counter: &Counter,
) -> Walk {
    let rules = WalkRules::new(options).within(target);
    let root_meta = fs::metadata(target).ok();
    let shared = Shared {
        target,
        rules: &rules,
        queue: Mutex::new(Queue {
            jobs: vec![root_job(root_meta.as_ref())],
            active: 0,
        }),
        ready: Condvar::new(),
        counter,
    };
    let harvests: Vec<Harvest> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| scope.spawn(|| work(&shared)))
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_default())
            .collect()
    });

    let mut dirs = HashMap::new();
    let mut ignore = IgnoreSummary {
        enabled: options.respect_ignore,
        ..IgnoreSummary::default()
    };
    let mut rule_files = Vec::new();
    let mut ignored = IgnoredTally::default();
    for harvest in harvests {
        dirs.extend(harvest.dirs);
        rule_files.extend(harvest.rule_files);
        ignore.files_removed += harvest.files_removed;
        ignore.dirs_removed += harvest.dirs_removed;
        ignored.merge(harvest.ignored);
    }
    ignore.files_removed += ignored.files;
    ignore.rule_files = shown_rule_files(&rule_files, target);
    Walk {
        dirs,
        root_size: root_meta.map_or(0, |m| m.len()),
        ignore,
        ignored,
    }
}

/// The first job: list the target (`root_meta`: its metadata, when it can
/// be read), with no rules yet, at the top of the chain of ancestors.
fn root_job(root_meta: Option<&fs::Metadata>) -> Job {
    let root_chain = root_meta.map(|m| {
        Arc::new(Ancestor {
            dev: m.dev(),
            ino: m.ino(),
            parent: None,
        })
    });
    Job::List {
        rel: PathBuf::new(),
        visible: true,
        rules: RuleStack::empty(),
        chain: root_chain,
    }
}

/// The ignore files read, as the report names them: relative to
/// `target`, sorted, each once.
fn shown_rule_files(rule_files: &[PathBuf], target: &Path) -> Vec<String> {
    let mut shown: Vec<String> = rule_files
        .iter()
        .map(|p| {
            p.strip_prefix(target)
                .unwrap_or(p)
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    shown.sort();
    shown.dedup();
    shown
}

fn work(shared: &Shared) -> Harvest {
    let mut harvest = Harvest::default();
    while let Some(job) = next_job(shared) {
        // A panic must not leave the job counted as active, or every other
        // worker would wait for it forever.
        let spawned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_job(shared, job, &mut harvest)
        }))
        .unwrap_or_default();
        finish_job(shared, spawned);
    }
    harvest
}

/// Take a job, or `None` once the queue is empty and nobody can add to it.
fn next_job(shared: &Shared) -> Option<Job> {
    let mut queue = shared.queue.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if let Some(job) = queue.jobs.pop() {
            queue.active += 1;
            return Some(job);
        }
        if queue.active == 0 {
            shared.ready.notify_all();
            return None;
        }
        queue = shared.ready.wait(queue).unwrap_or_else(|e| e.into_inner());
    }
}

fn finish_job(shared: &Shared, spawned: Vec<Job>) {
    let mut queue = shared.queue.lock().unwrap_or_else(|e| e.into_inner());
    queue.active -= 1;
    let wake = !spawned.is_empty() || queue.active == 0;
    queue.jobs.extend(spawned);
    drop(queue);
    if wake {
        shared.ready.notify_all();
    }
}

fn run_job(shared: &Shared, job: Job, harvest: &mut Harvest) -> Vec<Job> {
    match job {
        Job::List {
            rel,
            visible,
            rules,
            chain,
        } => list_job(shared, rel, visible, &rules, chain, harvest),
        Job::Count(task) => count_dir(shared.rules, &task, &mut harvest.ignored)
            .into_iter()
            .map(Job::Count)
            .collect(),
    }
}

fn list_job(
    shared: &Shared,
    rel: PathBuf,
    visible: bool,
    parent_rules: &RuleStack,
    chain: Option<Arc<Ancestor>>,
    harvest: &mut Harvest,
) -> Vec<Job> {
    let dir = crate::scan::join_rel(shared.target, &rel);
    let mut removed = IgnoredCount::default();
    let mut listing = list_dir(
        shared.rules,
        &dir,
        parent_rules,
        visible,
        &mut harvest.rule_files,
        &mut removed,
    );
    // luminos's own outputs are not part of the tree, for anyone.
    if !shared.rules.own_outputs.is_empty() {
        listing
            .entries
            .retain(|entry| !shared.rules.is_own_output(&rel, &entry.name));
    }
    let skipped = rel.file_name().and_then(|name| {
        crate::scan::skip::skip_reason(&dir, name, Some(&listing), &shared.rules.include)
    });
    shared.counter.add(listing.entries.len() as u64);
    harvest.files_removed += removed.files;
    harvest.dirs_removed += removed.dirs;
    let jobs = subdirectory_jobs(shared.rules, &rel, &dir, visible, &listing, &chain);
    let fingerprint =
        visible.then(|| fingerprint::of_listing(&dir, &listing, shared.rules.show_hidden));
    let unexamined = if visible {
        dirs::unexamined_in_scope(shared.rules, &dir, parent_rules, &listing)
    } else {
        Vec::new()
    };
    harvest.dirs.push((
        rel,
        DirRecord {
            listing,
            visible,
            fingerprint,
            unexamined,
            skipped,
        },
    ));
    jobs
}

/// The jobs the listing of `dir` (`rel` to the target, in `chain`) gives:
/// counting what each ignored subdirectory holds, and listing each other
/// subdirectory that is not its own ancestor.
fn subdirectory_jobs(
    rules: &WalkRules,
    rel: &Path,
    dir: &Path,
    visible: bool,
    listing: &Listing,
    chain: &Option<Arc<Ancestor>>,
) -> Vec<Job> {
    let mut jobs: Vec<Job> = listing
        .ignored
        .iter()
        .filter(|e| e.kind == Kind::Dir)
        .map(|e| {
            Job::Count(CountTask::top(
                dir.join(&e.name),
                rel.join(&e.name),
                rules.child_visible(visible, &e.name),
            ))
        })
        .collect();
    for entry in listing.entries.iter().filter(|e| e.kind == Kind::Dir) {
        if has_ancestor(chain, entry.dev, entry.ino) {
            continue;
        }
        jobs.push(Job::List {
            rel: rel.join(&entry.name),
            visible: rules.child_visible(visible, &entry.name),
            rules: listing.rules.clone(),
            chain: Some(Arc::new(Ancestor {
                dev: entry.dev,
                ino: entry.ino,
                parent: chain.clone(),
            })),
        });
    }
    jobs
}

/// How many worker threads the scan uses.
pub(crate) fn thread_count() -> usize {
    std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(2)
        .clamp(2, 8)
}
