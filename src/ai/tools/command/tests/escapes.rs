//! The property: no random command line gets past the checker with shell
//! syntax, a write/exec find action, or a path outside the target; and what
//! does get past, run for real, changes nothing and shows nothing from outside.
//! With a guard that the oracles themselves catch what they look for.

use super::oracles::{find_action_in, has_shell_syntax, stays_inside};
use super::strategy::command_line;
use super::*;

const SENTINEL: &str = "SENTINEL-OUTSIDE-7f3a";
const HIDDEN_NAME: &str = "hidden-name-q7";

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    target: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let t = root.join("t");
    std::fs::create_dir_all(t.join("src/sub")).unwrap();
    std::fs::write(t.join("README"), "hello\nTODO one\n").unwrap();
    std::fs::write(t.join("src/a.rs"), "fn a() {} // TODO\n").unwrap();
    std::fs::write(t.join("src/sub/b.py"), "def b(): pass\n").unwrap();
    std::fs::write(t.join("pat.txt"), "TODO\n").unwrap();
    std::fs::write(t.join("-rf"), "dash\n").unwrap();
    std::fs::create_dir(root.join("out")).unwrap();
    std::fs::write(root.join("out/secret"), format!("{SENTINEL}\n")).unwrap();
    std::fs::write(root.join("out").join(HIDDEN_NAME), SENTINEL).unwrap();
    symlink(root.join("out/secret"), t.join("link-out")).unwrap();
    symlink(root.join("out"), t.join("dir-out")).unwrap();
    crate::testing::mkfifo(&t.join("fifo"));
    Fixture {
        _dir: dir,
        root,
        target: t,
    }
}

#[test]
fn no_random_command_escapes() {
    let fx = fixture();
    let target = fx.target.clone();
    let before = snapshot(&fx.root);
    let tool = RunCommand::with_limits(Duration::from_secs(2), OUTPUT_CAP);
    let mut runner = TestRunner::new(Config {
        cases: 1024,
        failure_persistence: None,
        // A failing case runs commands on every shrink step; keep that short.
        max_shrink_iters: 32,
        ..Config::default()
    });
    runner
        .run(&command_line(), |line| {
            let Ok(plan) = check(&target, &line) else {
                return Ok(());
            };
            prop_assert!(!has_shell_syntax(&line), "shell syntax accepted: {line:?}");
            prop_assert!(spec::WHITELIST.contains(&plan.program));
            let args = plan.argv();
            if plan.program == "find" {
                prop_assert_eq!(find_action_in(&args), None, "{:?}", line);
            }
            for arg in &plan.args {
                if arg.role == check::ArgRole::Path {
                    prop_assert!(stays_inside(&target, &arg.text), "{line:?}: {}", arg.text);
                }
            }
            // Run it for real: nothing changes, nothing from outside shows.
            let out = tool.execute(&target, &line);
            prop_assert!(
                !out.content.contains(SENTINEL),
                "{line:?} leaked: {}",
                out.content
            );
            prop_assert!(
                !out.content.contains(HIDDEN_NAME),
                "{line:?} listed outside"
            );
            prop_assert!(
                !out.content.contains("root:x:0"),
                "{line:?} read /etc/passwd"
            );
            prop_assert!(
                !out.content.contains("timed out"),
                "{line:?} hung: {}",
                out.content
            );
            prop_assert_eq!(&snapshot(&fx.root), &before, "{:?} changed the tree", line);
            Ok(())
        })
        .unwrap();
}

#[test]
fn the_oracles_themselves_catch_what_they_look_for() {
    // Guard against a property that can never fail.
    assert!(has_shell_syntax("grep x .; id"));
    assert!(has_shell_syntax("grep \"$(id)\" ."));
    assert!(!has_shell_syntax("grep 'a;b' ."));
    assert_eq!(find_action_in(&[".", "-delete"]), Some("-delete".into()));
    assert_eq!(find_action_in(&[".", "-name", "-delete"]), None);
    let fx = fixture();
    assert!(!stays_inside(&fx.target, "link-out"));
    assert!(!stays_inside(&fx.target, "../out"));
    assert!(stays_inside(&fx.target, "src/nope"));
}
