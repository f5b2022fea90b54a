//! What a question starts from: the cached investigation of its tree,
//! read without changing it ([`Learned`]), or, for a tree never
//! investigated, nothing but an empty cache of the question's own for its
//! tools ([`Scratch`]).

use std::path::Path;

use super::{NOT_INVESTIGATED_NOTE, UNREDACTED_NOTE};
use crate::ai::passes::synthesis::SavedSynthesis;
use crate::cache::{Cache, CacheEntry, CacheError, CacheRoot, DirEntry, FileEntry, SYNTHESIS_FILE};
use crate::config::Config;
use crate::report::Flag;

/// The entries of type `E` whose location still exists (`exists`).
fn live<E: CacheEntry>(cache: &Cache, exists: fn(&Path) -> bool) -> Vec<E> {
    cache
        .located::<E>()
        .into_iter()
        .filter(|(path, _)| exists(path))
        .map(|(_, entry)| entry)
        .collect()
}

/// What the cache knows about the tree, read without changing it.
pub(super) struct Learned {
    /// The investigation's cache, when it is used.
    pub cache: Option<Cache>,
    pub verdict: Option<(String, String)>,
    pub dirs: Vec<DirEntry>,
    pub files: Vec<FileEntry>,
    pub flags: Vec<Flag>,
    /// Why the cache is not used, when it is not.
    pub note: Option<&'static str>,
}

impl Learned {
    fn nothing(note: &'static str) -> Learned {
        Learned {
            cache: None,
            verdict: None,
            dirs: Vec::new(),
            files: Vec::new(),
            flags: Vec::new(),
            note: Some(note),
        }
    }

    /// Read `config`'s target's investigation, if there is one worth using:
    /// summaries of what still exists.
    pub(super) fn read(config: &Config) -> Learned {
        let Some(cache) = Cache::find_existing(&config.cache_root, &config.target_canonical) else {
            return Learned::nothing(NOT_INVESTIGATED_NOTE);
        };
        if config.investigation.redact && cache.written_without_redaction() {
            return Learned::nothing(UNREDACTED_NOTE);
        }
        let dirs: Vec<DirEntry> = live(&cache, Path::is_dir);
        if dirs.is_empty() {
            return Learned::nothing(NOT_INVESTIGATED_NOTE);
        }
        let files: Vec<FileEntry> = live(&cache, Path::is_file);
        let verdict = cache
            .read_document::<SavedSynthesis>(SYNTHESIS_FILE)
            .and_then(|saved| saved.verdict());
        let flags = cache.read_flags();
        Learned {
            cache: Some(cache),
            verdict,
            dirs,
            files,
            flags,
            note: None,
        }
    }

    /// What the prompt says is known.
    pub(super) fn knowledge(&self) -> String {
        match &self.cache {
            Some(cache) => format!(
                "This tree was investigated (investigation {}): agents read its directories and \
                 cached {} directory and {} file summaries, and {}. The parts of it that matter \
                 most for the question are below; the tree may have changed since.",
                cache.id(),
                self.dirs.len(),
                self.files.len(),
                if self.verdict.is_some() {
                    "a synthesis wrote the verdict"
                } else {
                    "no verdict was written"
                }
            ),
            None if self.note == Some(UNREDACTED_NOTE) => "This tree's cached investigation \
                 cannot be used here: all that is known is what a quick scan counted (below). \
                 Read the files to answer."
                .to_string(),
            None => "This tree was never investigated: all that is known is what a quick scan \
                     counted (below). Read the files to answer."
                .to_string(),
        }
    }
}

/// An empty cache of the question's own, in a temporary directory removed
/// when it drops: what the tools are handed for a tree never investigated.
/// Nothing is written to it (the question's tools record nothing).
pub(super) struct Scratch {
    pub cache: Cache,
    _dir: tempfile::TempDir,
}

/// Why the scratch cache could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ScratchError {
    #[error("a temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
    #[error(transparent)]
    Cache(#[from] CacheError),
}

impl Scratch {
    pub(super) fn new(target: &Path) -> Result<Scratch, ScratchError> {
        let dir = tempfile::Builder::new()
            .prefix("luminos-ask-")
            .tempdir()
            .map_err(ScratchError::TempDir)?;
        let root = CacheRoot::open(dir.path())?;
        let id = uuid::Uuid::new_v4().hyphenated().to_string();
        let cache = Cache::open(&root, &id, target)?;
        Ok(Scratch { cache, _dir: dir })
    }
}
