//! `investigations.json`: which investigation belongs to which target.
//!
//! The file maps a canonical target path to an investigation id (a UUID, the
//! name of the investigation's directory). Every update is a
//! read-modify-write under an exclusive lock, so concurrent runs on
//! different targets never lose each other's entries. A corrupt file is not
//! fatal: the index is rebuilt from the `meta.json` of each investigation
//! directory and the caller gets a warning.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::CacheError;
use super::InvestigationId;
use super::documents::Meta;
use super::fsio::{io_err, read_nofollow, write_json_atomic};
use super::lock::{ExclusiveLock, LOCK_DIR};

/// The index file's name in the cache root.
pub(crate) const INDEX_FILE: &str = "investigations.json";
/// The lock guarding the index's read-modify-write.
const INDEX_LOCK: &str = "investigations.lock";

/// Find or create the investigation for `target` (see
/// [`super::CacheRoot::investigation_id`]).
pub(crate) fn investigation_id(
    root: &Path,
    target: &Path,
    fresh: bool,
) -> Result<InvestigationId, CacheError> {
    let _lock = ExclusiveLock::acquire(&root.join(LOCK_DIR).join(INDEX_LOCK))?;
    let index_path = root.join(INDEX_FILE);
    let (mut index, warnings) = load_index(root, &index_path);
    let key = target.to_string_lossy().into_owned();

    let resumable = index
        .get(&key)
        .and_then(Value::as_str)
        .filter(|id| !fresh && is_investigation_dir(root, id))
        .map(str::to_string);
    let is_new = resumable.is_none();
    let id = resumable.unwrap_or_else(|| uuid::Uuid::new_v4().hyphenated().to_string());
    // Write when the entry is new, or when the file was rebuilt so the next
    // run does not warn again.
    if is_new || !warnings.is_empty() {
        index.insert(key, Value::String(id.clone()));
        write_json_atomic(&index_path, &Value::Object(index))
            .map_err(io_err("writing", &index_path))?;
    }
    Ok(InvestigationId {
        id,
        is_new,
        warnings,
    })
}

/// Take `target` out of the index (under its lock); the id it had, if
/// any. A missing index holds nothing to take out.
pub(crate) fn forget(root: &Path, target: &Path) -> Result<Option<String>, CacheError> {
    let index_path = root.join(INDEX_FILE);
    let lock_dir = root.join(LOCK_DIR);
    let _lock = if lock_dir.is_dir() {
        Some(ExclusiveLock::acquire(&lock_dir.join(INDEX_LOCK))?)
    } else {
        None
    };
    if !index_path.exists() {
        return Ok(None);
    }
    let (mut index, _) = load_index(root, &index_path);
    let removed = index.remove(target.to_string_lossy().as_ref());
    if removed.is_some() {
        write_json_atomic(&index_path, &Value::Object(index))
            .map_err(io_err("writing", &index_path))?;
    }
    Ok(removed.and_then(|id| id.as_str().map(str::to_string)))
}

/// Whether `id` names an investigation directory: a canonical UUID (so it
/// cannot walk out of the root) whose directory exists and is no symlink.
pub(crate) fn is_investigation_dir(root: &Path, id: &str) -> bool {
    is_canonical_uuid(id)
        && std::fs::symlink_metadata(root.join(id)).is_ok_and(|meta| meta.is_dir())
}

/// The lowercase hyphenated UUID form every investigation id has.
pub(crate) fn is_canonical_uuid(id: &str) -> bool {
    uuid::Uuid::parse_str(id).is_ok_and(|uuid| uuid.hyphenated().to_string() == id)
}

/// The index as a JSON object, plus warnings. Unknown keys and values are
/// kept as they are, so entries written by another implementation survive.
fn load_index(root: &Path, index_path: &Path) -> (Map<String, Value>, Vec<String>) {
    let bytes = match read_nofollow(index_path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return (Map::new(), vec![]),
        Err(err) => return rebuilt(root, index_path, &err.to_string()),
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => (map, vec![]),
        Ok(_) => rebuilt(root, index_path, "it is not a JSON object"),
        Err(err) => rebuilt(root, index_path, &err.to_string()),
    }
}

fn rebuilt(root: &Path, index_path: &Path, why: &str) -> (Map<String, Value>, Vec<String>) {
    let index = rebuild_from_meta(root);
    let warning = format!(
        "{} could not be read ({why}); rebuilt it from the investigations' meta.json files ({} target(s) recovered)",
        index_path.display(),
        index.len()
    );
    (index, vec![warning])
}

/// Map each target to its most recently started investigation, from the
/// `meta.json` files in the root.
fn rebuild_from_meta(root: &Path) -> Map<String, Value> {
    let mut latest: HashMap<String, (String, String)> = HashMap::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return Map::new();
    };
    for entry in entries.flatten() {
        let Some(id) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if !is_investigation_dir(root, &id) {
            continue;
        }
        let Some(meta) = Meta::of(&root.join(&id)) else {
            continue;
        };
        if meta.target.is_empty() {
            continue;
        }
        let (target, started) = (meta.target.as_str(), meta.start_time.clone());
        let newer = latest
            .get(target)
            .is_none_or(|(seen, seen_id)| (&started, &id) > (seen, seen_id));
        if newer {
            latest.insert(target.to_string(), (started, id));
        }
    }
    let mut targets: Vec<_> = latest.into_iter().collect();
    targets.sort();
    targets
        .into_iter()
        .map(|(target, (_, id))| (target, Value::String(id)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join(LOCK_DIR)).unwrap();
        tmp
    }

    #[test]
    fn canonical_uuids_only() {
        assert!(is_canonical_uuid("0f8fad5b-d9cb-469f-a165-70867728950e"));
        assert!(!is_canonical_uuid("0F8FAD5B-D9CB-469F-A165-70867728950E"));
        assert!(!is_canonical_uuid("{0f8fad5b-d9cb-469f-a165-70867728950e}"));
        assert!(!is_canonical_uuid("../etc"));
        assert!(!is_canonical_uuid(""));
    }

    #[test]
    fn resumes_only_when_the_directory_exists() {
        let tmp = root();
        let target = Path::new("/srv/app");
        let first = investigation_id(tmp.path(), target, false).unwrap();
        assert!(first.is_new);
        // No directory yet: a new id.
        let second = investigation_id(tmp.path(), target, false).unwrap();
        assert!(second.is_new);
        assert_ne!(first.id, second.id);
        std::fs::create_dir(tmp.path().join(&second.id)).unwrap();
        let third = investigation_id(tmp.path(), target, false).unwrap();
        assert_eq!(third.id, second.id);
        assert!(!third.is_new);
        let fresh = investigation_id(tmp.path(), target, true).unwrap();
        assert!(fresh.is_new);
        assert_ne!(fresh.id, second.id);
    }

    #[test]
    fn an_id_that_is_not_a_uuid_is_never_resumed() {
        let tmp = root();
        std::fs::create_dir(tmp.path().join("locks-evil")).unwrap();
        std::fs::write(
            tmp.path().join(INDEX_FILE),
            r#"{"/srv/app": "../outside", "/srv/b": "locks-evil"}"#,
        )
        .unwrap();
        let a = investigation_id(tmp.path(), Path::new("/srv/app"), false).unwrap();
        assert!(a.is_new && is_canonical_uuid(&a.id));
        let b = investigation_id(tmp.path(), Path::new("/srv/b"), false).unwrap();
        assert!(b.is_new && is_canonical_uuid(&b.id));
    }

    #[test]
    fn foreign_keys_survive_an_update() {
        let tmp = root();
        std::fs::write(
            tmp.path().join(INDEX_FILE),
            r#"{"/other": "kept-as-is", "/n": 5}"#,
        )
        .unwrap();
        investigation_id(tmp.path(), Path::new("/srv/app"), false).unwrap();
        let index = super::super::fsio::read_json::<Value>(&tmp.path().join(INDEX_FILE)).unwrap();
        assert_eq!(index["/other"], "kept-as-is");
        assert_eq!(index["/n"], 5);
        assert!(index["/srv/app"].is_string());
    }

    #[test]
    fn corrupt_index_is_rebuilt_from_meta_with_a_warning() {
        let tmp = root();
        let old = "11111111-1111-4111-8111-111111111111";
        let new = "22222222-2222-4222-8222-222222222222";
        for (id, started) in [
            (old, "2024-01-01T00:00:00+00:00"),
            (new, "2025-01-01T00:00:00+00:00"),
        ] {
            std::fs::create_dir(tmp.path().join(id)).unwrap();
            std::fs::write(
                tmp.path().join(id).join("meta.json"),
                serde_json::json!({"target": "/srv/app", "start_time": started}).to_string(),
            )
            .unwrap();
        }
        std::fs::write(tmp.path().join(INDEX_FILE), "{\"/srv/app\": \"1111").unwrap();
        let got = investigation_id(tmp.path(), Path::new("/srv/app"), false).unwrap();
        assert_eq!(got.id, new);
        assert!(!got.is_new);
        assert_eq!(got.warnings.len(), 1);
        assert!(
            got.warnings[0].contains("(1 target(s) recovered)"),
            "{:?}",
            got.warnings
        );

        std::fs::write(tmp.path().join(INDEX_FILE), "[1, 2]").unwrap();
        let other = investigation_id(tmp.path(), Path::new("/srv/other"), false).unwrap();
        assert!(other.is_new);
        assert!(other.warnings[0].contains("not a JSON object"));
        // The rebuilt index was written back, with the new entry.
        let index = super::super::fsio::read_json::<Value>(&tmp.path().join(INDEX_FILE)).unwrap();
        assert_eq!(index["/srv/app"], new);
        assert_eq!(index["/srv/other"], other.id.as_str());
    }
}
