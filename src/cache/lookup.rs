//! Finding a target's investigation without touching the cache, for
//! `--estimate`, which must leave no trace: nothing here creates a directory,
//! takes a lock, tightens a mode or writes a file.
//!
//! Anything doubtful (no root, a root that is a symlink or someone else's, an
//! unreadable or corrupt `investigations.json`, an id without its directory)
//! answers "no investigation": the estimate then counts every directory as
//! uncached, which errs on the side of a higher projection. A real run would
//! rebuild a corrupt index from `meta.json`; the estimate does not.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde_json::Value;

use super::Cache;
use super::fsio::{effective_uid, read_nofollow};
use super::index::{INDEX_FILE, is_investigation_dir};

impl Cache {
    /// The existing investigation of `target_canonical` under the cache root
    /// for the path the user named (`named`, or its `luminos` subdirectory),
    /// opened read-only in effect (the returned handle can write, so
    /// callers that promise not to, like `--estimate`, only read through it).
    pub(crate) fn find_existing(named: &Path, target_canonical: &Path) -> Option<Cache> {
        let root = &super::root::choose_root(named).ok()?;
        let meta = std::fs::symlink_metadata(root).ok()?;
        if !meta.is_dir() || meta.uid() != effective_uid() {
            return None;
        }
        let bytes = read_nofollow(&root.join(INDEX_FILE)).ok()?;
        let index: Value = serde_json::from_slice(&bytes).ok()?;
        let id = index
            .get(target_canonical.to_string_lossy().as_ref())?
            .as_str()?;
        let dir = root.join(id);
        let owned = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.uid() == effective_uid());
        (is_investigation_dir(root, id) && owned).then(|| Cache {
            id: id.to_string(),
            target: target_canonical.to_path_buf(),
            dir,
            fault: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{CacheRoot, EntryKind};
    use crate::testing::temp_path;

    #[test]
    fn finds_only_what_a_run_created_and_creates_nothing() {
        let (_tmp, root) = temp_path("cache");
        let target = Path::new("/srv/app");
        assert!(Cache::find_existing(&root, target).is_none());
        assert!(!root.exists(), "a lookup must not create the root");

        let opened = CacheRoot::open(&root).unwrap();
        let id = opened.investigation_id(target, false).unwrap().id;
        // Indexed but without its directory: not an investigation yet.
        assert!(Cache::find_existing(&root, target).is_none());
        let cache = Cache::open(&opened, &id, target).unwrap();
        let entry = serde_json::json!({"path": "/srv/app", "relative_path": ".",
            "child_count": 0, "dominant_category": "x", "summary": "s", "cached_at": "t"});
        cache
            .write_entry(EntryKind::Dir, "/srv/app", &entry)
            .unwrap();

        let found = Cache::find_existing(&root, target).unwrap();
        assert_eq!(found.id(), id);
        assert!(found.has_entry(EntryKind::Dir, "/srv/app"));
        assert!(Cache::find_existing(&root, Path::new("/srv/other")).is_none());

        std::fs::write(root.join(INDEX_FILE), "{not json").unwrap();
        assert!(Cache::find_existing(&root, target).is_none());
    }
}
