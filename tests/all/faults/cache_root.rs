//! The cache directory the user names: never taken over when it holds
//! other things, never changed in mode; refused in one line, before the
//! scan, when it cannot be one; and its errors said once, in the system's
//! words.

use super::*;

use std::ffi::OsStr;

/// `luminos ARG` with `LUMINOS_CACHE_DIR` set to `cache`, whatever its
/// exit.
fn with_cache_dir(env: &TestEnv, cache: &Path, arg: impl AsRef<OsStr>) -> Output {
    env.cmd()
        .env("LUMINOS_CACHE_DIR", cache)
        .arg(arg)
        .output()
        .unwrap()
}

/// `LUMINOS_CACHE_DIR` names a shared directory (mode 1777, someone
/// else's file in it): luminos keeps its cache in `luminos/` inside it and
/// changes nothing else; `--clear-cache` removes that subdirectory only.
#[test]
fn a_populated_cache_directory_gets_a_subdirectory_and_keeps_its_mode() {
    let env = TestEnv::with_small_project().with_mock();
    let shared = env.root().join("shared");
    std::fs::create_dir(&shared).unwrap();
    set_mode(&shared, 0o1777);
    std::fs::write(shared.join("someone-elses.txt"), "theirs").unwrap();
    let out = with_cache_dir(&env, &shared, env.target());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        mode_of(&shared),
        0o1777,
        "the shared directory's mode changed"
    );
    assert_eq!(
        std::fs::read_to_string(shared.join("someone-elses.txt")).unwrap(),
        "theirs"
    );
    let cache = shared.join("luminos");
    assert!(cache.join("investigations.json").is_file());
    assert_eq!(mode_of(&cache), 0o700);
    assert!(
        stderr(&out).contains(&format!("Cache: {}/", cache.display())),
        "{}",
        stderr(&out)
    );

    let out = with_cache_dir(&env, &shared, "--clear-cache");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).trim().starts_with(&format!(
            "Removed the luminos cache at {}: 1 investigation, which cost $",
            cache.display()
        )),
        "{}",
        stderr(&out)
    );
    assert!(!cache.exists());
    assert!(shared.join("someone-elses.txt").exists());
    assert_eq!(mode_of(&shared), 0o1777);
}

/// An empty directory of the user's own is used as it is, with its mode.
#[test]
fn an_empty_cache_directory_keeps_its_mode() {
    let env = TestEnv::with_small_project().with_mock();
    std::fs::create_dir(env.cache()).unwrap();
    set_mode(env.cache(), 0o755);
    env.run_ok(&[]);
    assert_eq!(mode_of(env.cache()), 0o755);
    assert!(env.cache().join("investigations.json").is_file());
}

/// A cache path that is a file, or has a file on the way, is refused in one
/// line before the scan, as a symlink is: nothing is scanned or sent.
#[test]
fn a_cache_path_that_is_a_file_fails_before_the_scan() {
    let env = TestEnv::with_small_project().with_mock();
    let file = env.root().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    for named in [file.clone(), file.join("sub")] {
        let out = with_cache_dir(&env, &named, env.target());
        assert_one_line_error(
            &out,
            &format!(
                "Error: refusing cache directory {}: it is not a directory",
                file.display()
            ),
        );
    }
    assert_eq!(env.server.request_count(), 0);
}

/// A cache directory that cannot be created says why in the system's
/// words (permission denied, a read-only file system), not "No such file
/// or directory".
#[test]
fn an_unwritable_cache_directory_names_the_real_error() {
    let env = TestEnv::with_small_project().with_mock();
    let Some(mut cmd) = unprivileged_cmd(&env, "the unwritable cache case is not run") else {
        return;
    };
    // Root's directory, or one of ours without write permission.
    let parent = env.root().join("locked");
    std::fs::create_dir(&parent).unwrap();
    if !is_root() {
        set_mode(&parent, 0o555);
    }
    let out = cmd
        .env("LUMINOS_CACHE_DIR", parent.join("cache"))
        .env("ANTHROPIC_BASE_URL", env.server.url())
        .arg(env.target())
        .output()
        .unwrap();
    set_mode(&parent, 0o755);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "creating {}: Permission denied",
            parent.join("cache").display()
        )),
        "{err}"
    );
    assert!(!err.contains("No such file"), "{err}");
    assert_eq!(env.server.request_count(), 0);

    let Some(disk) = Tmpfs::mount("64k") else {
        return;
    };
    std::fs::create_dir(disk.path().join("ro")).unwrap();
    let ro = disk.path().join("ro");
    // SAFETY: valid NUL-terminated strings; a bind mount remounted read-only.
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    let rc = unsafe {
        libc::mount(
            c(&ro).as_ptr(),
            c(&ro).as_ptr(),
            std::ptr::null(),
            libc::MS_BIND,
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    // SAFETY: as above.
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            c(&ro).as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY,
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    let out = with_cache_dir(&env, &ro.join("cache"), env.target());
    // SAFETY: a valid path; a lazy unmount.
    unsafe { libc::umount2(c(&ro).as_ptr(), libc::MNT_DETACH) };
    let err = stderr(&out);
    assert!(err.contains("Read-only file system"), "{err}");
    assert!(!err.contains("No such file"), "{err}");
}

/// `--clear-cache` that fails says so once, not the system's words twice.
#[test]
fn clear_cache_prints_its_error_once() {
    let env = TestEnv::new();
    let Some(mut cmd) = unprivileged_cmd(&env, "the clear-cache error case is not run") else {
        return;
    };
    let root = if is_root() {
        env.cache().join("own")
    } else {
        env.cache().to_path_buf()
    };
    let id = "11111111-1111-4111-8111-111111111111";
    let files = root.join(id).join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::create_dir_all(root.join("locks")).unwrap();
    std::fs::write(files.join("a.json"), "{}").unwrap();
    std::fs::write(root.join("investigations.json"), "{}").unwrap();
    if is_root() {
        for path in [&root, &root.join(id), &files, &root.join("locks")] {
            std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
        }
    }
    set_mode(&root, 0o700);
    // What is inside cannot be removed.
    set_mode(&files, 0o500);
    let out = cmd.arg("--clear-cache").output().unwrap();
    set_mode(&files, 0o700);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err.matches("Permission denied").count(), 1, "{err}");
}
