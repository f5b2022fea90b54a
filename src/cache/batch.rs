//! What a `--batch` run keeps on disk so that no request is paid for twice:
//! the batches it is waiting for, and every answer it has read back.
//!
//! ```text
//! <id>/batch/
//!   state.json               the rounds so far and the batches in flight
//!   results/<digest>.json    one succeeded answer (a whole message) per request
//! ```
//!
//! A request is named by the digest of its exact body (see
//! [`crate::ai::engine::batch`]), which is also its `custom_id` in the
//! batch, so an answer read back is found again by asking the same
//! question. Every file is written atomically, like the rest of the cache:
//! a run killed at any instant leaves the old state or the new one. The
//! state is written before luminos waits on a batch, so a later run knows
//! which batch to wait for instead of sending its requests again; an
//! answer is written as soon as it is read, so it is never read or billed
//! again.
//!
//! This module knows files, not rounds: the engine decides what the state
//! means.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::fsio::{
    ensure_private_dir, io_err, read_json, read_nofollow, remove_temp_files, write_atomic,
    write_json_atomic,
};
use super::{Cache, CacheError};

/// `<id>/batch/`: everything a batch run keeps.
pub(crate) const BATCH_DIR: &str = "batch";
/// `<id>/batch/state.json`.
pub(crate) const STATE_FILE: &str = "state.json";
/// `<id>/batch/results/`.
pub(crate) const RESULTS_DIR: &str = "results";

/// Under the batch directory: for each request sent in a batch, the name
/// of the request without its `max_tokens` and its caching marks, holding
/// the request's own digest and its `max_tokens` (see
/// [`BatchStore::store_alias`]).
pub(crate) const ALIASES_DIR: &str = "aliases";

/// What an alias says of the request sent under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Alias {
    /// The request's own digest (its `custom_id`).
    pub digest: String,
    /// The `max_tokens` it asked for; `None` in an alias written before it
    /// was recorded.
    pub max_tokens: Option<u32>,
}

/// What a batch run has under way.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BatchState {
    /// Rounds this investigation has submitted so far (the last round's
    /// number).
    #[serde(default)]
    pub round: u32,
    /// Batches created and not read back yet, oldest first.
    #[serde(default)]
    pub in_flight: Vec<InFlightBatch>,
    /// The longest a round has taken, in seconds: a resumed run asks the
    /// prompt cache for the lifetime its rounds need from the start.
    #[serde(default)]
    pub longest_round_secs: u64,
}

/// One batch created and not read back yet.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct InFlightBatch {
    /// The API's id (`msgbatch_...`).
    pub id: String,
    /// The round it carries.
    pub round: u32,
    /// When it was created (RFC 3339).
    pub submitted_at: String,
    /// The `custom_id` (request digest) of each of its requests.
    pub requests: Vec<String>,
    /// `--cancel-batch` asked the API to cancel it.
    #[serde(default)]
    pub cancel_requested: bool,
}

/// The batch files of one investigation.
#[derive(Debug, Clone)]
pub(crate) struct BatchStore {
    dir: PathBuf,
}

impl BatchStore {
    /// The batch files of `cache`, creating their directories (private,
    /// like every cache directory).
    pub(crate) fn open(cache: &Cache) -> Result<BatchStore, CacheError> {
        let store = BatchStore::at(cache);
        ensure_private_dir(&store.dir.join(RESULTS_DIR))?;
        ensure_private_dir(&store.dir.join(ALIASES_DIR))?;
        Ok(store)
    }

    /// The batch files of `cache` for reading only: nothing is created.
    pub(crate) fn at(cache: &Cache) -> BatchStore {
        BatchStore {
            dir: cache.dir().join(BATCH_DIR),
        }
    }

    /// `<id>/batch`.
    #[cfg(test)]
    pub(crate) fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// The state, or the empty one when there is none (or it is
    /// unreadable: a state that cannot be read names no batch to wait
    /// for, and the answers already read stay usable).
    pub(crate) fn state(&self) -> BatchState {
        read_json(&self.dir.join(STATE_FILE))
            .and_then(|value| serde_json::from_value(value).ok())
            .unwrap_or_default()
    }

    /// Replace the state, atomically.
    pub(crate) fn write_state(&self, state: &BatchState) -> Result<(), CacheError> {
        let path = self.dir.join(STATE_FILE);
        let value = serde_json::to_value(state).unwrap_or(Value::Null);
        write_json_atomic(&path, &value).map_err(io_err("writing", &path))
    }

    /// The answer kept for the request named `digest` (the message as the
    /// API returned it), if any.
    pub(crate) fn result(&self, digest: &str) -> Option<Vec<u8>> {
        let path = self.result_path(digest)?;
        read_nofollow(&path).ok()
    }

    /// Whether an answer is kept for `digest`.
    pub(crate) fn has_result(&self, digest: &str) -> bool {
        self.result_path(digest).is_some_and(|p| p.is_file())
    }

    /// Keep `message`, the answer to the request named `digest`.
    pub(crate) fn store_result(&self, digest: &str, message: &Value) -> Result<(), CacheError> {
        let path = self.result_path(digest).ok_or_else(|| {
            io_err("writing a batch result for", &self.dir)(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a request digest is 64 hex digits",
            ))
        })?;
        write_atomic(&path, message.to_string().as_bytes()).map_err(io_err("writing", &path))
    }

    /// Remember that the request named `loose` when its `max_tokens` and
    /// caching marks are left out was sent as `digest`, asking for
    /// `max_tokens`. A later run whose purse gives the same request another
    /// `max_tokens` (money is shared another way in a plain run than in a
    /// batch), or whose marks differ (they follow how long its rounds
    /// take), can then find the answer kept for it.
    pub(crate) fn store_alias(
        &self,
        loose: &str,
        digest: &str,
        max_tokens: u32,
    ) -> Result<(), CacheError> {
        let (Some(path), Some(_)) = (self.alias_path(loose), self.result_path(digest)) else {
            return Err(io_err("writing a batch alias for", &self.dir)(
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "a request digest is 64 hex digits",
                ),
            ));
        };
        ensure_private_dir(&self.dir.join(ALIASES_DIR))?;
        let text = format!("{digest} {max_tokens}");
        write_atomic(&path, text.as_bytes()).map_err(io_err("writing", &path))
    }

    /// What a request named `loose` (without its `max_tokens` and marks)
    /// was sent as, if one was recorded and reads as a digest.
    pub(crate) fn alias(&self, loose: &str) -> Option<Alias> {
        let bytes = std::fs::read(self.alias_path(loose)?).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let mut words = text.split(' ');
        let digest = words.next()?.to_string();
        let max_tokens = words.next().and_then(|n| n.parse().ok());
        self.result_path(&digest)
            .map(|_| Alias { digest, max_tokens })
    }

    /// How many answers are kept.
    pub(crate) fn result_count(&self) -> usize {
        std::fs::read_dir(self.dir.join(RESULTS_DIR))
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                    .count()
            })
            .unwrap_or(0)
    }

    /// Remove every batch file: the investigation is complete and nothing
    /// is waiting.
    pub(crate) fn clear(&self) -> Result<(), CacheError> {
        match std::fs::remove_dir_all(&self.dir) {
            Ok(()) => Ok(()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(io_err("removing", &self.dir)(err)),
        }
    }

    /// Remove the temp files a killed run left here; see
    /// [`Cache::remove_stale_temp_files`].
    pub(super) fn remove_temp_files(&self) -> usize {
        remove_temp_files(&self.dir)
            + remove_temp_files(&self.dir.join(RESULTS_DIR))
            + remove_temp_files(&self.dir.join(ALIASES_DIR))
    }

    /// Digests are file names: only 64 lowercase hex digits are.
    fn result_path(&self, digest: &str) -> Option<PathBuf> {
        is_digest(digest).then(|| self.dir.join(RESULTS_DIR).join(format!("{digest}.json")))
    }

    fn alias_path(&self, loose: &str) -> Option<PathBuf> {
        is_digest(loose).then(|| self.dir.join(ALIASES_DIR).join(loose))
    }
}

/// 64 lowercase hex digits: a request digest, safe as a file name.
fn is_digest(name: &str) -> bool {
    name.len() == 64
        && name
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::CacheRoot;
    use serde_json::json;

    fn cache() -> (tempfile::TempDir, Cache) {
        let tmp = tempfile::tempdir().unwrap();
        let root = CacheRoot::open(&tmp.path().join("root")).unwrap();
        let target = tmp.path().to_path_buf();
        let id = root.investigation_id(&target, false).unwrap().id;
        let cache = Cache::open(&root, &id, &target).unwrap();
        (tmp, cache)
    }

    const DIGEST: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn state_and_results_round_trip() {
        let (_tmp, cache) = cache();
        let peek = BatchStore::at(&cache);
        assert_eq!(peek.state(), BatchState::default());
        assert!(!peek.dir().exists(), "reading creates nothing");
        let store = BatchStore::open(&cache).unwrap();
        let state = BatchState {
            round: 3,
            in_flight: vec![InFlightBatch {
                id: "msgbatch_1".into(),
                round: 3,
                submitted_at: "2026-11-23T10:00:00Z".into(),
                requests: vec![DIGEST.into()],
                cancel_requested: false,
            }],
            longest_round_secs: 600,
        };
        store.write_state(&state).unwrap();
        assert_eq!(BatchStore::at(&cache).state(), state);
        assert!(!store.has_result(DIGEST));
        let message = json!({"id": "msg_1", "content": [{"type": "text", "text": "hi"}]});
        store.store_result(DIGEST, &message).unwrap();
        assert!(store.has_result(DIGEST));
        let kept: Value = serde_json::from_slice(&store.result(DIGEST).unwrap()).unwrap();
        assert_eq!(kept, message);
        assert_eq!(store.result_count(), 1);
        store.clear().unwrap();
        assert!(!store.dir().exists());
        assert_eq!(store.state(), BatchState::default());
    }

    #[test]
    fn only_digests_name_result_files() {
        let (_tmp, cache) = cache();
        let store = BatchStore::open(&cache).unwrap();
        for bad in ["../../meta", "ABCDEF", &DIGEST.to_uppercase(), &DIGEST[1..]] {
            assert!(store.store_result(bad, &json!({})).is_err(), "{bad}");
            assert!(store.result(bad).is_none());
        }
    }

    #[test]
    fn an_unreadable_state_names_no_batch() {
        let (_tmp, cache) = cache();
        let store = BatchStore::open(&cache).unwrap();
        std::fs::write(store.dir().join(STATE_FILE), b"{ torn").unwrap();
        assert_eq!(store.state(), BatchState::default());
    }
}
