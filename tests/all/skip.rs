//! What no model is sent into, and what luminos leaves out of the tree:
//!
//! - build output: `target/` (cargo's, on the built-in skip list with
//!   `build/`, `dist/`, `node_modules/`, ...) and any directory holding a
//!   `CACHEDIR.TAG` are not investigated, shown as one marked line in the
//!   terminal report's tree and marked `skipped` in the JSON tree;
//!   `--include NAME` takes a name back;
//! - luminos's own output inside the target (`-o TARGET/LUMINOS.md`, a
//!   cache placed there) is not part of the tree at all, so writing it does
//!   not make the next run pay again.

use crate::support;

use serde_json::Value;
use support::TestEnv;
use support::agent::AgentEnv;
use support::output::{item_where, stderr, stdout};

/// A cache directory tag as the specification writes it.
const TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
                   # This file is a cache directory tag created by a build tool.\n";

/// A Rust repository without a `.gitignore`: sources, cargo's `target/`
/// full of build output, another tool's tagged cache `out/`, and `fake/`,
/// whose `CACHEDIR.TAG` is not a tag.
fn rust_repo() -> AgentEnv {
    let env = TestEnv::new();
    env.files(&[
        ("Cargo.toml", "[package]\nname = \"demo\"\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/net/http.rs", "pub fn get() {}\n"),
        ("target/CACHEDIR.TAG", TAG),
        ("out/CACHEDIR.TAG", TAG),
        ("out/gen/data.bin", "generated\n"),
        ("fake/CACHEDIR.TAG", "just notes\n"),
    ]);
    for n in 0..40 {
        env.file(
            &format!("target/debug/deps/libdep{n}.rlib"),
            vec![b'x'; 4096],
        );
    }
    env.with_mock()
}

/// The directories the run sent a loop into, sorted.
fn investigated(env: &AgentEnv) -> Vec<String> {
    env.loop_dirs_since(0).into_iter().collect()
}

#[test]
fn build_output_is_skipped_and_marked() {
    let env = rust_repo();
    let estimate: Value =
        serde_json::from_str(&stdout(&env.run_ok(&["--estimate", "--json"]))).unwrap();
    assert_eq!(estimate["directories_total"], 4, "{estimate}");

    let out = env.run_ok(&["--json"]);
    assert_eq!(
        investigated(&env),
        [".", "fake", "src", "src/net"],
        "{}",
        stderr(&out)
    );
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let top = &report["tree"]["children"];
    assert_eq!(item_where(top, "name", "target")["skipped"], "skip list");
    assert_eq!(item_where(top, "name", "out")["skipped"], "CACHEDIR.TAG");
    assert!(item_where(top, "name", "fake").get("skipped").is_none());
    assert!(item_where(top, "name", "src").get("skipped").is_none());

    // The terminal report, from the cache: each skipped directory is one
    // marked line, its contents counted, never drawn.
    let text = stdout(&env.run_ok_from_cache(&[], "the investigation"));
    assert!(
        text.contains("target/  [skipped: on the skip list]  (2 entries, 160.1 KB)"),
        "{text}"
    );
    assert!(
        text.contains("out/  [skipped: holds CACHEDIR.TAG]  (2 entries"),
        "{text}"
    );
    assert!(!text.contains(".rlib") && !text.contains("deps/"), "{text}");
    assert!(text.contains("src/"), "{text}");
}

/// `--include NAME` sends a model into a directory the skip list or its
/// tag would keep it out of.
#[test]
fn include_takes_a_name_back_from_the_skip_list_and_the_tag() {
    let env = rust_repo();
    env.run_ok(&["--include", "out", "--include", "target"]);
    let dirs = investigated(&env);
    for dir in [
        "out",
        "out/gen",
        "target",
        "target/debug",
        "target/debug/deps",
    ] {
        assert!(dirs.iter().any(|d| d == dir), "{dir} not in {dirs:?}");
    }
}

/// `-o TARGET/LUMINOS.md` three times on an unchanged tree: the first run
/// pays, the second and third send nothing, and the report never
/// describes itself.
#[test]
fn a_report_written_inside_the_target_does_not_change_the_tree() {
    let env = TestEnv::with_small_project().with_mock();
    let report = env.path("LUMINOS.md");
    let arg = report.to_string_lossy().into_owned();
    env.run_ok(&["-o", &arg]);
    assert!(env.server.request_count() > 0);
    for run in [2, 3] {
        let out = env.run_ok_from_cache(&["-o", &arg], "the root and the synthesis");
        assert!(
            stderr(&out).contains("Investigation complete."),
            "run {run}"
        );
    }
    let written = std::fs::read_to_string(&report).unwrap();
    assert!(!written.contains("LUMINOS.md"), "{written}");
    // The JSON of the same unchanged tree does not list it either.
    let json: Value =
        serde_json::from_str(&stdout(&env.run_ok_from_cache(&["--json"], "the report"))).unwrap();
    assert!(!json.to_string().contains("LUMINOS.md"));
}

/// A cache placed inside the target is not part of the tree either.
#[test]
fn a_cache_inside_the_target_does_not_change_the_tree() {
    let env = TestEnv::with_small_project().with_mock();
    let cache = env.path("luminos-cache");
    let run = |json: bool| {
        let mut cmd = env.cmd();
        cmd.env("LUMINOS_CACHE_DIR", &cache);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.arg(env.target()).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        out
    };
    run(false);
    let paid = env.server.request_count();
    assert!(paid > 0);
    let report: Value = serde_json::from_str(&stdout(&run(true))).unwrap();
    assert_eq!(env.server.request_count(), paid, "a rerun paid again");
    assert!(!report.to_string().contains("luminos-cache"), "{report}");
}
