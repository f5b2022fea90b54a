//! A target that cannot be listed is an error, before any request; a
//! directory inside it that cannot be read is marked so in the report.

use super::*;

/// Mode 000 on the target (run as nobody where the tests run as root): one
/// line, exit 1, no report and no request, not "No files found" and an
/// investigation of nothing.
#[test]
fn an_unreadable_target_is_an_error_before_any_request() {
    let env = TestEnv::with_small_project().with_mock();
    let Some(mut cmd) = unprivileged_cmd(&env, "the unreadable target case is not run") else {
        return;
    };
    set_mode(env.target(), 0o000);
    let out = cmd
        .env("ANTHROPIC_BASE_URL", env.server.url())
        .arg(env.target())
        .output()
        .unwrap();
    set_mode(env.target(), 0o755);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.trim(),
        format!(
            "Error: cannot read the directory '{}': Permission denied (os error 13)",
            env.target().display()
        )
    );
    assert!(stdout(&out).is_empty());
    assert_eq!(env.server.request_count(), 0);
}

/// A directory that can be listed but not searched (mode 0444: its names
/// are readable, nothing else) is marked in the tree and the JSON, like one
/// that cannot be listed at all, rather than shown as empty.
#[test]
fn an_unreadable_subdirectory_is_marked_in_the_tree_and_the_json() {
    let env = TestEnv::new();
    env.files(&[
        ("ok/a.py", "x\n"),
        ("names_only/b.py", "x\n"),
        ("locked/c.py", "x\n"),
    ]);
    let Some(mut cmd) = unprivileged_cmd(&env, "the unreadable subdirectory case is not run")
    else {
        return;
    };
    set_mode(&env.path("names_only"), 0o444);
    set_mode(&env.path("locked"), 0o000);
    let out = cmd
        .args(["--scan-only", "--json"])
        .arg(env.target())
        .output()
        .unwrap();
    let text = {
        let mut cmd = unprivileged_cmd(&env, "").unwrap();
        cmd.arg("--scan-only").arg(env.target()).output().unwrap()
    };
    for dir in ["names_only", "locked"] {
        set_mode(&env.path(dir), 0o755);
    }
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_report(&out);
    let children = report["tree"]["children"].as_array().unwrap();
    let node = |name: &str| {
        children
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {children:?}"))
    };
    assert_eq!(node("names_only")["error"], "permission denied");
    assert_eq!(node("locked")["error"], "permission denied");
    assert!(node("ok").get("error").is_none());
    let rendered = stdout(&text);
    assert!(
        rendered.contains("── names_only/  [permission denied]\n"),
        "{rendered}"
    );
    assert!(
        rendered.contains("├── locked/  [permission denied]\n"),
        "{rendered}"
    );
}
