//! Odd cases: non-UTF-8 names, a symlinked target, files changing during the
//! scan, and the JSON keys in the reference's order.

use super::*;
use similar_asserts::assert_eq;

#[test]
fn non_utf8_names_are_lossy_but_present() {
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.py");
    fs::write(env.target().join(name), "x\n").unwrap();
    let report = run(env.target(), &options());
    assert_eq!(classified_names(&report), ["caf\u{fffd}.py"]);
    assert_eq!(report.languages, ["Python"]);
    serde_json::to_string(&report).unwrap();
}

#[test]
fn a_symlinked_target_is_scanned_through() {
    let env = TestEnv::new();
    env.file("real/a.py", "x\n");
    let link = env.root().join("link");
    symlink(env.path("real"), &link).unwrap();
    let report = run(&link, &options());
    assert_eq!(report.tree.name, "link");
    assert_eq!(
        report.classified_files[0].path,
        link.join("a.py").to_string_lossy()
    );
    assert_eq!(report.recent_files.len(), 1);
    assert_eq!(
        report.disk_usage.last().unwrap().path,
        link.to_string_lossy()
    );
}

#[test]
fn files_changing_during_the_scan_do_not_break_it() {
    let env = TestEnv::new();
    for i in 0..200 {
        env.file(&format!("d{}/f{i}.py", i % 10), "x\n".repeat(i));
    }
    let target = env.target().to_path_buf();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let path = target.join(format!("d{}/f{}.py", i % 10, i % 200));
                let _ = fs::remove_file(&path);
                let _ = fs::write(&path, "y\n".repeat((i % 50) as usize));
                let _ = fs::remove_dir_all(target.join(format!("churn{}", i % 3)));
                let _ = fs::create_dir_all(target.join(format!("churn{}/x", (i + 1) % 3)));
                i += 1;
            }
        });
        for _ in 0..5 {
            let report = run(&target, &options());
            assert!(report.survey_signals.total_files <= 200);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
}

#[test]
fn the_json_keys_are_the_references_in_order() {
    let env = TestEnv::new();
    env.file("a.py", "x\n");
    let report = run(env.target(), &options());
    let value = serde_json::to_value(&report).unwrap();
    assert_eq!(keys(&value), SCAN_KEYS);
    let file = &value["classified_files"][0];
    assert_eq!(
        keys(file),
        ["path", "name", "category", "size", "description"]
    );
    assert!(file["description"].is_null());
}
