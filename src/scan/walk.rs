//! The one walk of the target that every part of the base scan reads from.
//!
//! The original walked the tree five times (`build_tree`, `os.walk`, `find`,
//! `du`, and `wc` per file). Here the tree is listed once, in parallel, and
//! every directory's entries are kept with the metadata the other modules
//! need: the tree and classification read names and followed types, recency
//! reads modification times, disk usage reads apparent sizes and inode
//! numbers. The investigation reads directories: each visible one's
//! fingerprint is digested by the worker that listed it
//! (`super::fingerprint`), so nothing walks the tree again before the first
//! API request (`super::dirs`).
//!
//! What the walk leaves out, it leaves out for everyone:
//! - directories named by `-x` are not entered (files with such a name are
//!   kept but marked, because the original's classification kept them);
//! - entries matched by ignore rules (`super::ignore_files`) are dropped, and the
//!   visible ones among them are counted for the report; an ignored directory
//!   is only listed (`super::ignored`) to count the files it removed and the
//!   bytes it takes (disk usage counts them), never read;
//! - symlinks are never followed (each one is `stat`ed once, to know what it
//!   points to, unless it resolves outside the target: then it is only a
//!   link, [`LinkTarget::Outside`]), and a directory that is its own
//!   ancestor (bind mounts) is not entered twice.
//!
//! Hidden directories *are* walked even without `-a`: `du` counts their bytes
//! in their parents. Each consumer applies its own hidden rule.
//!
//! `list_dir` is also what the tree uses to list a symlinked directory,
//! which the walk itself does not enter.
//!
//! This file says what one listing holds; `walk/workers.rs` schedules the
//! listings over the worker threads and merges what they found.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::scan::ScanOptions;

use super::IgnoreSummary;
use super::fingerprint::Fingerprint;
use super::ignore_files::{RuleFilesPresent, RuleStack};
use super::ignored::IgnoredTally;

mod workers;

pub(crate) use workers::{thread_count, walk};

/// What an entry is, from `lstat` (symlinks are not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Dir,
    File,
    Symlink,
    /// FIFO, socket or device: counted by disk usage, never opened.
    Other,
}

/// What a symlink points to, from `stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkTarget {
    Dir,
    File {
        size: u64,
    },
    /// Broken, a loop, or not a regular file or directory.
    Other,
    /// It resolves outside the target: shown as a link, never followed
    /// (neither its size nor its contents are the target's).
    Outside,
}

/// One directory entry and what the scan needs to know about it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub name: OsString,
    pub kind: Kind,
    /// Apparent size from `lstat`.
    pub size: u64,
    pub dev: u64,
    pub ino: u64,
    pub nlink: u64,
    pub mtime_secs: i64,
    pub mtime_nanos: i64,
    /// Set for symlinks only.
    pub link: Option<LinkTarget>,
    /// The name is one of the `-x` names (only non-directories are kept).
    pub excluded: bool,
}

impl Entry {
    /// `os.path.isdir`: a directory, or a symlink to one.
    pub(crate) fn is_dir_followed(&self) -> bool {
        self.kind == Kind::Dir || self.link == Some(LinkTarget::Dir)
    }

    /// `os.path.isfile` with `os.path.getsize`: the size of a regular file or
    /// of the regular file a symlink points to.
    pub(crate) fn file_size_followed(&self) -> Option<u64> {
        match (self.kind, self.link) {
            (Kind::File, _) => Some(self.size),
            (Kind::Symlink, Some(LinkTarget::File { size })) => Some(size),
            _ => None,
        }
    }

    /// A hidden name (starts with a dot).
    pub(crate) fn is_hidden(&self) -> bool {
        is_hidden_name(&self.name)
    }
}

/// Dot names are hidden.
pub(crate) fn is_hidden_name(name: &OsStr) -> bool {
    name.as_encoded_bytes().first() == Some(&b'.')
}

/// Why a directory could not be listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListError {
    PermissionDenied,
    /// Any other error, by kind (a fingerprint names it).
    Other(io::ErrorKind),
}

impl ListError {
    pub(crate) fn kind(self) -> io::ErrorKind {
        match self {
            ListError::PermissionDenied => io::ErrorKind::PermissionDenied,
            ListError::Other(kind) => kind,
        }
    }
}

/// One directory's entries, sorted by name (bytes).
#[derive(Clone, Default)]
pub(crate) struct Listing {
    pub error: Option<ListError>,
    pub entries: Vec<Entry>,
    /// Rules in effect for these entries; the base for subdirectories.
    pub rules: RuleStack,
    /// Entries the ignore rules left out, sorted by name, with their sizes
    /// for disk usage (`-x` names are not among them).
    pub ignored: Vec<Entry>,
    /// Names the directory's listing gave as subdirectories that could not
    /// be examined (`lstat` failed: the directory is readable but not
    /// searchable, or they vanished). `entries` leaves them out, as `du`
    /// does; directory discovery counts them (see [`DirRecord::unexamined`]).
    pub unexamined_dirs: Vec<OsString>,
    /// Why entries the listing named could not be examined (the first
    /// such error; entries that vanished do not count): a directory that
    /// can be read but not searched lists names and nothing else.
    pub entries_error: Option<ListError>,
}

/// A directory the walk listed.
pub(crate) struct DirRecord {
    pub listing: Listing,
    /// No hidden component below the target (or `-a`).
    pub visible: bool,
    /// The fingerprint of its direct contents in scope; visible directories
    /// only (nothing else is investigated).
    pub fingerprint: Option<Fingerprint>,
    /// `listing.unexamined_dirs` that `-x` and the ignore rules leave in
    /// scope, as the investigation's discovery always counted them: leaves
    /// whose fingerprint must be read from the disk. Hidden names are
    /// still in (see `visible`).
    pub unexamined: Vec<OsString>,
    /// Why no model is sent into it, if none is (see [`super::skip`]);
    /// the target itself is never skipped.
    pub skipped: Option<super::skip::Skipped>,
}

/// Everything the walk saw.
pub(crate) struct Walk {
    /// Directories by path relative to the target (`""` is the target).
    pub dirs: HashMap<PathBuf, DirRecord>,
    /// Apparent size of the target directory itself.
    pub root_size: u64,
    pub ignore: IgnoreSummary,
    /// What the ignored directories hold, for disk usage.
    pub ignored: IgnoredTally,
}

impl Walk {
    /// The directories (relative) that are skipped themselves, not only
    /// below a skipped one: a path is in a skipped subtree when one of its
    /// ancestors is here ([`in_skipped_subtree`]).
    pub(crate) fn skipped_roots(&self) -> HashSet<PathBuf> {
        skipped_roots(&self.dirs)
    }
}

/// [`Walk::skipped_roots`] of a walk's records.
pub(crate) fn skipped_roots(dirs: &HashMap<PathBuf, DirRecord>) -> HashSet<PathBuf> {
    dirs.iter()
        .filter(|(_, record)| record.skipped.is_some())
        .map(|(rel, _)| rel.clone())
        .collect()
}

/// Whether `rel` is, or lies below, one of `roots`.
pub(crate) fn in_skipped_subtree(roots: &HashSet<PathBuf>, rel: &Path) -> bool {
    !roots.is_empty() && rel.ancestors().any(|dir| roots.contains(dir))
}

/// The walk's view of the scan options.
pub(crate) struct WalkRules {
    pub show_hidden: bool,
    pub exclude: HashSet<OsString>,
    pub respect_ignore: bool,
    /// Names taken back from the skip list (`--include`).
    pub include: HashSet<OsString>,
    /// luminos's own outputs inside the target, relative to it (see
    /// [`ScanOptions::own_outputs`]).
    pub own_outputs: HashSet<PathBuf>,
    /// The canonical target, when symlinks are judged against it (see
    /// [`WalkRules::within`]).
    root: Option<PathBuf>,
}

impl WalkRules {
    pub(crate) fn new(options: &ScanOptions) -> WalkRules {
        WalkRules {
            show_hidden: options.show_hidden,
            exclude: options.exclude.iter().map(OsString::from).collect(),
            respect_ignore: options.respect_ignore,
            include: options.include.iter().map(OsString::from).collect(),
            own_outputs: options.own_outputs.iter().cloned().collect(),
            root: None,
        }
    }

    /// Whether the entry `name` of the directory `parent` (relative to the
    /// target) is one of luminos's own outputs.
    pub(crate) fn is_own_output(&self, parent: &Path, name: &OsStr) -> bool {
        !self.own_outputs.is_empty() && self.own_outputs.contains(&parent.join(name))
    }

    /// These rules for a scan of `target`: a symlink that resolves outside
    /// it is never followed by anyone (the tree shows the link, the
    /// classification leaves it out).
    pub(crate) fn within(mut self, target: &Path) -> WalkRules {
        self.root = fs::canonicalize(target).ok();
        self
    }

    pub(crate) fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// True when an entry named `name` inside a visible directory is visible.
    pub(crate) fn child_visible(&self, parent_visible: bool, name: &OsStr) -> bool {
        parent_visible && (self.show_hidden || !is_hidden_name(name))
    }
}

/// What listing one directory removed through ignore rules, for the
/// report's ignore line.
#[derive(Default)]
pub(crate) struct IgnoredCount {
    /// Visible files matched directly.
    pub files: u64,
    /// Visible directories matched (the files under them are counted
    /// through).
    pub dirs: u64,
}

/// List `dir` with the rules in effect in its parent. `visible` says whether
/// removals should be counted. Ignore files read are appended to `rule_files`.
pub(crate) fn list_dir(
    rules: &WalkRules,
    dir: &Path,
    parent_rules: &RuleStack,
    visible: bool,
    rule_files: &mut Vec<PathBuf>,
    removed: &mut IgnoredCount,
) -> Listing {
    let reader = match fs::read_dir(dir) {
        Ok(reader) => reader,
        Err(err) => return Listing::unreadable(&err, parent_rules),
    };
    let raw: Vec<fs::DirEntry> = reader.filter_map(Result::ok).collect();
    let stack = rules_inside(rules, dir, parent_rules, &raw, rule_files);

    let mut entries = Vec::with_capacity(raw.len());
    let mut ignored = Vec::new();
    let mut unexamined = Unexamined::default();
    for dirent in raw {
        let name = dirent.file_name();
        // An entry that vanished or cannot be examined is skipped, as du does.
        let meta = match dirent.metadata() {
            Ok(meta) => meta,
            Err(err) => {
                unexamined.note(&dirent, name, &err);
                continue;
            }
        };
        let kind = kind_of(meta.file_type());
        let excluded = rules.exclude.contains(&name);
        if excluded && kind == Kind::Dir {
            continue;
        }
        if !stack.is_empty() {
            let path = dirent.path();
            if stack.is_ignored(&path, kind == Kind::Dir) {
                if rules.child_visible(visible, &name) {
                    note_removed(kind, &path, removed, rules.root());
                }
                if !excluded {
                    ignored.push(entry_of(name, kind, &meta, None, false));
                }
                continue;
            }
        }
        let link = (kind == Kind::Symlink).then(|| link_target(&dirent.path(), rules.root()));
        entries.push(entry_of(name, kind, &meta, link, excluded));
    }
    entries.sort_unstable_by(|a, b| a.name.as_encoded_bytes().cmp(b.name.as_encoded_bytes()));
    ignored.sort_unstable_by(|a, b| a.name.as_encoded_bytes().cmp(b.name.as_encoded_bytes()));
    Listing {
        error: None,
        entries,
        rules: stack,
        ignored,
        unexamined_dirs: unexamined.dirs,
        entries_error: unexamined.error,
    }
}

impl Listing {
    /// The listing of a directory that could not be read: its error, no
    /// entries, and the parent's rules.
    fn unreadable(err: &io::Error, parent_rules: &RuleStack) -> Listing {
        Listing {
            error: Some(list_error(err)),
            entries: Vec::new(),
            rules: parent_rules.clone(),
            ignored: Vec::new(),
            unexamined_dirs: Vec::new(),
            entries_error: None,
        }
    }
}

/// The entries of a listing that could not be examined (see
/// [`Listing::unexamined_dirs`] and [`Listing::entries_error`]).
#[derive(Default)]
struct Unexamined {
    dirs: Vec<OsString>,
    error: Option<ListError>,
}

impl Unexamined {
    /// Note the entry `name` that could not be examined (`err`): the first
    /// such error (entries that vanished do not count), and the name when
    /// the listing itself says it is a directory.
    fn note(&mut self, dirent: &fs::DirEntry, name: OsString, err: &io::Error) {
        if err.kind() != io::ErrorKind::NotFound {
            self.error.get_or_insert(list_error(err));
        }
        // The type the listing itself gave (no `lstat`) still tells a
        // directory.
        if dirent.file_type().is_ok_and(|t| t.is_dir()) {
            self.dirs.push(name);
        }
    }
}

/// The ignore rules in effect inside `dir`, when `rules` respect them: the
/// parent's, with those of the ignore files among its entries (`raw`),
/// whose paths are appended to `rule_files`.
fn rules_inside(
    rules: &WalkRules,
    dir: &Path,
    parent_rules: &RuleStack,
    raw: &[fs::DirEntry],
    rule_files: &mut Vec<PathBuf>,
) -> RuleStack {
    if !rules.respect_ignore {
        return RuleStack::empty();
    }
    let mut present = RuleFilesPresent::default();
    raw.iter().for_each(|e| present.note(&e.file_name()));
    let (stack, read) = parent_rules.enter(dir, present);
    rule_files.extend(read.into_iter().map(|f| f.path));
    stack
}

fn entry_of(
    name: OsString,
    kind: Kind,
    meta: &fs::Metadata,
    link: Option<LinkTarget>,
    excluded: bool,
) -> Entry {
    Entry {
        name,
        kind,
        size: meta.len(),
        dev: meta.dev(),
        ino: meta.ino(),
        nlink: meta.nlink(),
        mtime_secs: meta.mtime(),
        mtime_nanos: meta.mtime_nsec(),
        link,
        excluded,
    }
}

fn note_removed(kind: Kind, path: &Path, removed: &mut IgnoredCount, root: Option<&Path>) {
    match kind {
        Kind::Dir => removed.dirs += 1,
        Kind::File => removed.files += 1,
        Kind::Symlink => {
            if matches!(link_target(path, root), LinkTarget::File { .. }) {
                removed.files += 1;
            }
        }
        Kind::Other => {}
    }
}

fn list_error(err: &io::Error) -> ListError {
    match err.kind() {
        io::ErrorKind::PermissionDenied => ListError::PermissionDenied,
        kind => ListError::Other(kind),
    }
}

fn kind_of(file_type: fs::FileType) -> Kind {
    if file_type.is_dir() {
        Kind::Dir
    } else if file_type.is_file() {
        Kind::File
    } else if file_type.is_symlink() {
        Kind::Symlink
    } else {
        Kind::Other
    }
}

/// What the symlink at `path` leads to; [`LinkTarget::Outside`] when it
/// resolves outside `root` (the canonical target), which is then not
/// looked at at all.
pub(crate) fn link_target(path: &Path, root: Option<&Path>) -> LinkTarget {
    let followed = match root {
        Some(root) => match fs::canonicalize(path) {
            Ok(real) if !real.starts_with(root) => return LinkTarget::Outside,
            Ok(real) => fs::metadata(real),
            Err(_) => return LinkTarget::Other,
        },
        None => fs::metadata(path),
    };
    match followed {
        Ok(meta) if meta.is_dir() => LinkTarget::Dir,
        Ok(meta) if meta.is_file() => LinkTarget::File { size: meta.len() },
        _ => LinkTarget::Other,
    }
}
