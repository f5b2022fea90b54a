//! Who may use a cache and how: resuming instances, private directories,
//! refused symlinks, bad ids and foreign owners, clearing, the run lock.

use super::*;
use crate::money::Usd;

#[test]
fn a_second_instance_resumes_the_first() {
    let f = fixture();
    f.cache.write_meta("m", "t").unwrap();
    f.cache
        .write_entry(EntryKind::Dir, "src", &dir_entry("src"))
        .unwrap();
    let again = f.root.investigation_id(&f.target, false).unwrap();
    assert_eq!(again.id, f.cache.id());
    assert!(!again.is_new);
    let cache = Cache::open(&f.root, &again.id, &f.target).unwrap();
    assert!(cache.has_entry(EntryKind::Dir, f.target.join("src").to_str().unwrap()));
}

#[test]
fn directories_are_private_and_symlinks_or_bad_ids_refused() {
    let f = fixture();
    for dir in [
        f.root.path().to_path_buf(),
        f.cache.dir().to_path_buf(),
        f.cache.dir().join("files"),
    ] {
        assert_eq!(
            std::fs::metadata(&dir).unwrap().mode() & 0o777,
            0o700,
            "{}",
            dir.display()
        );
    }
    let elsewhere = tempfile::tempdir().unwrap();
    let id = "33333333-3333-4333-8333-333333333333";
    symlink(elsewhere.path(), f.root.path().join(id)).unwrap();
    assert!(matches!(
        Cache::open(&f.root, id, &f.target),
        Err(CacheError::Symlink(_))
    ));
    assert!(
        std::fs::read_dir(elsewhere.path())
            .unwrap()
            .next()
            .is_none()
    );
    assert!(Cache::open(&f.root, "../escape", &f.target).is_err());
    let link_root = f.root.path().parent().unwrap().join("root-link");
    symlink(f.root.path(), &link_root).unwrap();
    let err = CacheRoot::open(&link_root).unwrap_err();
    assert!(matches!(err, CacheError::Symlink(_)));
    assert!(!err.to_string().contains('\n'));
}

#[test]
fn a_foreign_owner_is_refused() {
    // Root can own anything, so the check is only observable as a normal user
    // looking at a directory owned by someone else (/ is owned by root).
    if fsio::effective_uid() == 0 {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("theirs");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        let err = CacheRoot::open(&dir).unwrap_err();
        assert!(
            matches!(err, CacheError::ForeignOwner { owner: 65534, .. }),
            "{err}"
        );
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o755
        );
    } else {
        let err = CacheRoot::open(Path::new("/")).unwrap_err();
        assert!(
            matches!(err, CacheError::ForeignOwner { owner: 0, .. }),
            "{err}"
        );
    }
}

#[test]
fn clear_cache_removes_only_a_luminos_cache() {
    let f = fixture();
    f.cache.write_meta("m", "t").unwrap();
    f.cache.add_spending(Usd::new(0.25), 3).unwrap();
    f.cache.add_spending(Usd::new(0.5), 2).unwrap();
    // An investigation with no record of its cost (an older luminos).
    let other = f
        .root
        .investigation_id(Path::new("/elsewhere"), false)
        .unwrap();
    Cache::open(&f.root, &other.id, Path::new("/elsewhere")).unwrap();
    let root = f.root.path().to_path_buf();
    assert_eq!(
        clear_cache(&root).unwrap(),
        Cleared::Removed {
            root: root.clone(),
            removed: Removed {
                investigations: 2,
                recorded_cost_usd: Usd::new(0.75),
                unrecorded: 1,
            }
        }
    );
    assert!(!root.exists());
    assert_eq!(clear_cache(&root).unwrap(), Cleared::Absent(root.clone()));
    assert!(f.target.exists());
}

#[test]
fn clear_cache_refuses_foreign_contents_symlinks_and_busy_caches() {
    let f = fixture();
    let root = f.root.path().to_path_buf();
    std::fs::write(root.join("thesis.tex"), "precious").unwrap();
    let err = clear_cache(&root).unwrap_err();
    assert!(err.to_string().contains("thesis.tex"), "{err}");
    assert!(root.join("thesis.tex").exists());
    std::fs::remove_file(root.join("thesis.tex")).unwrap();

    let link = root.parent().unwrap().join("link");
    symlink(&root, &link).unwrap();
    assert!(matches!(clear_cache(&link), Err(CacheError::Symlink(_))));
    assert!(link.exists() && root.exists());

    let held = f.root.lock_run(&f.target, false).unwrap();
    let err = clear_cache(&root).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "refusing to remove {}: luminos run (pid {}) is using it to investigate {}; \
             wait for it or stop it",
            root.display(),
            std::process::id(),
            f.target.display()
        )
    );
    drop(held);
    assert!(matches!(
        clear_cache(&root).unwrap(),
        Cleared::Removed { .. }
    ));
}

/// `--clear-cache TARGET`: that target's investigation, and the ones
/// earlier `--fresh` runs left for it, go; another target's stays; a run
/// on the target refuses it.
#[test]
fn clearing_one_target_keeps_the_others() {
    let f = fixture();
    f.cache.write_meta("m", "t").unwrap();
    f.cache.add_spending(Usd::new(0.5), 4).unwrap();
    let abandoned = f.cache.dir().to_path_buf();
    // A `--fresh` run: a new id for the same target.
    let fresh = f.root.investigation_id(&f.target, true).unwrap();
    let newer = Cache::open(&f.root, &fresh.id, &f.target).unwrap();
    newer.write_meta("m", "t").unwrap();
    newer.add_spending(Usd::new(0.25), 1).unwrap();
    let other_target = Path::new("/srv/other");
    let other = f.root.investigation_id(other_target, false).unwrap();
    let kept = Cache::open(&f.root, &other.id, other_target).unwrap();
    kept.write_meta("m", "t").unwrap();

    let held = f.root.lock_run(&f.target, false).unwrap();
    let err = clear_investigation(f.root.path(), &f.target).unwrap_err();
    assert!(err.to_string().contains("is using it"), "{err}");
    drop(held);

    let removed = clear_investigation(f.root.path(), &f.target).unwrap();
    assert_eq!(
        removed,
        Removed {
            investigations: 2,
            recorded_cost_usd: Usd::new(0.75),
            unrecorded: 0,
        }
    );
    assert!(!abandoned.exists() && !newer.dir().exists());
    assert!(kept.dir().exists());
    assert!(Cache::find_existing(f.root.path(), &f.target).is_none());
    assert!(Cache::find_existing(f.root.path(), other_target).is_some());
    assert_eq!(
        clear_investigation(f.root.path(), &f.target).unwrap(),
        Removed::default()
    );
}

#[test]
fn run_lock_is_per_target() {
    let f = fixture();
    let held = f.cache.lock_run(false).unwrap();
    match f.root.lock_run(&f.target, false) {
        Err(CacheError::Busy { pid }) => assert_eq!(pid, std::process::id()),
        other => panic!("expected Busy, got {other:?}"),
    }
    let other = f
        .root
        .lock_run(Path::new("/some/other/target"), false)
        .unwrap();
    drop(other);
    drop(held);
    f.root.lock_run(&f.target, false).unwrap();
}
