//! Several runs of the real binary at once against the mock Messages API:
//! two runs on one target never both investigate it, and runs on different
//! targets sharing one cache root all succeed and all get recorded.

use crate::support;

use std::collections::HashSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use support::TestEnv;
use support::agent::{MockAgent, Pass};
use support::gate::{Gate, OpenOnDrop};
use support::mock::MockServer;
use support::watch::run_watched;

/// Safety net only: a run that takes this long is stuck, and the test fails
/// instead of hanging. Nothing is asserted about how long runs take.
const STUCK: Duration = Duration::from_secs(120);

/// 4 directories and 6 files: survey, planning, 4 dir loops, synthesis.
fn project(env: &TestEnv) {
    env.small_project();
}

/// `luminos TARGET` with a test key, as a plain command.
fn luminos(env: &TestEnv) -> Command {
    let mut cmd = env.bare_cmd();
    cmd.env("ANTHROPIC_API_KEY", "test-key").arg(env.target());
    cmd
}

fn spawn(mut cmd: Command) -> Child {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("luminos starts")
}

#[test]
fn a_second_run_on_the_same_target_names_the_first_and_stays_out() {
    let server = MockServer::start();
    let env = TestEnv::new().with_base_url(server.url());
    project(&env);
    let agent = MockAgent::new(env.target());
    let target = agent.target().to_path_buf();
    let gate = Gate::default();
    let held = gate.clone();
    // The first run's survey is answered only once the gate opens: until
    // then it holds the target's run lock (taken before the survey).
    server.respond_with(move |request| {
        if Pass::of(&request.body, &target) == Pass::Survey {
            held.wait(STUCK);
        }
        agent.reply(&request.body)
    });
    let release = OpenOnDrop(gate);

    let first = spawn(luminos(&env));
    assert!(
        server.wait_for_requests(1, STUCK),
        "the first run never reached the API"
    );

    let second = run_watched(luminos(&env), STUCK);
    assert!(
        !second.timed_out,
        "the second run waited instead of stopping"
    );
    let stderr = second.stderr_text();
    assert_eq!(second.code, Some(1), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("Error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains(&format!("pid {}", first.id())),
        "the error names the first run's pid {}: {stderr}",
        first.id()
    );
    assert!(second.stdout.is_empty(), "no report from the refused run");
    assert!(!stderr.contains("Investigation ID"), "{stderr}");
    assert!(
        !stderr.contains("[scan]"),
        "refused before scanning: {stderr}"
    );
    assert_eq!(
        server.request_count(),
        1,
        "only the first run's survey reached the API"
    );

    // --clear-cache, with no target to compare with, names what is busy:
    // the cache, the run and the target that run investigates.
    let mut clear = env.bare_cmd();
    clear.arg("--clear-cache");
    let clear = run_watched(clear, STUCK);
    let stderr = clear.stderr_text();
    assert_eq!(clear.code, Some(1), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "Error: refusing to remove {}: luminos run (pid {}) is using it to investigate {}; \
             wait for it or stop it\n",
            env.cache().display(),
            first.id(),
            std::fs::canonicalize(env.target()).unwrap().display()
        )
    );
    assert!(env.cache().exists());

    drop(release);
    let first = first.wait_with_output().unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let canonical = std::fs::canonicalize(env.target()).unwrap();
    let passes: Vec<Pass> = server
        .requests()
        .iter()
        .map(|r| Pass::of(&r.body, &canonical))
        .collect();
    let count = |wanted: &Pass| passes.iter().filter(|p| *p == wanted).count();
    assert_eq!(count(&Pass::Survey), 1, "{passes:?}");
    assert_eq!(count(&Pass::Planning), 1, "{passes:?}");
    assert_eq!(count(&Pass::Synthesis), 1, "{passes:?}");
    for dir in [".", "src", "src/core", "docs"] {
        // The default agent caches on turn 1 and reports on turn 2.
        assert_eq!(count(&Pass::Dir(dir.to_string())), 2, "{dir}: {passes:?}");
    }
}

#[test]
fn runs_on_different_targets_share_one_cache_root() {
    const TARGETS: usize = 6;
    let shared = crate::support::fs::temp_dir("luminos-shared-cache-");
    let cache = shared.path().join("cache");
    let envs: Vec<_> = (0..TARGETS)
        .map(|_| {
            let env = TestEnv::new().with_mock();
            project(&env);
            env
        })
        .collect();
    let children: Vec<Child> = envs
        .iter()
        .map(|env| {
            let mut cmd = luminos(env);
            cmd.env("LUMINOS_CACHE_DIR", &cache);
            spawn(cmd)
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    let index: Value =
        serde_json::from_slice(&std::fs::read(cache.join("investigations.json")).unwrap()).unwrap();
    let index = index.as_object().unwrap();
    assert_eq!(index.len(), TARGETS, "{index:?}");
    let ids: HashSet<&str> = index.values().filter_map(Value::as_str).collect();
    assert_eq!(ids.len(), TARGETS, "distinct ids: {index:?}");
    for env in &envs {
        let target = std::fs::canonicalize(env.target()).unwrap();
        let id = index[target.to_str().unwrap()].as_str().unwrap();
        let meta: Value =
            serde_json::from_slice(&std::fs::read(cache.join(id).join("meta.json")).unwrap())
                .unwrap();
        assert_eq!(meta["target"], target.to_str().unwrap());
        assert_eq!(meta["directories_investigated"], 4);
        assert!(env.server.request_count() > 0);
        assert!(
            !Path::new(&env.cache()).exists(),
            "the env's own cache is unused"
        );
    }
}
