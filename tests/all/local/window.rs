//! A run sized to a local model's window: against a server that cuts a
//! longer prompt without a word, no request is longer than the window, and
//! a window too small for luminos's own prompts is refused up front.

use serde_json::{Value, json};

use super::sloppy::LOCAL;
use crate::support::TestEnv;
use crate::support::agent::{AgentEnv, tool_use};
use crate::support::mock::{MockServer, Reply};
use crate::support::output::stderr;

/// The window of these runs: small enough that a fat directory's listing,
/// whole, would pass it.
const WINDOW: u64 = 16_384;

/// A tree with a directory of 1,500 files whose names are long.
fn fat_tree() -> TestEnv {
    let env = TestEnv::new();
    env.file("README.md", "# A data set and its loader\n");
    env.file(
        "loader/load.py",
        "def load(path):\n    return open(path).read()\n",
    );
    for i in 0..1_500 {
        env.file(
            &format!("records/measurement_{i:05}_from_the_long_running_station.csv"),
            "t,v\n",
        );
    }
    env
}

/// The run of `fat_tree` against Ollama's dialect at `window`, with
/// `flags` (and `--json`): the env (with its server) and the output.
fn run(flags: &[&str], window: u64) -> (AgentEnv, std::process::Output) {
    let env = fat_tree().with_agent_on(MockServer::ollama(window), |agent| {
        // A model does not cache 1,500 files in one reply: it reads one and
        // reports.
        agent.dir_script("records", |turn| match turn.turn {
            1 => Reply::blocks(vec![tool_use(
                "read_file",
                json!({"path": turn
                    .dir()
                    .join("measurement_00000_from_the_long_running_station.csv")
                    .to_string_lossy()}),
            )]),
            _ => Reply::tool_use(
                "submit_report",
                json!({"summary": "Station measurements, one CSV a reading.", "completeness": 0.6}),
            ),
        })
    });
    let mut args = flags.to_vec();
    args.push("--json");
    let out = env.output(&args);
    (env, out)
}

#[test]
fn a_run_sized_to_the_window_sends_nothing_longer() {
    let window = WINDOW.to_string();
    let flags = [
        "--model",
        "qwen3-coder",
        "--price",
        "0,0",
        "--context-window",
        &window,
    ];
    let (env, out) = run(&flags, WINDOW);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["investigation"]["status"], "complete", "{err}");
    assert_eq!(env.server.over_window(), [], "{err}");
    // Every reply had its share of the window, and the listing was cut.
    let requests = env.server.requests();
    assert!(
        requests
            .iter()
            .all(|r| r.body["max_tokens"].as_u64().unwrap() <= WINDOW / 8)
    );
    let records = requests
        .iter()
        .find(|r| r.body.to_string().contains("listing of records"))
        .expect("the records loop");
    assert!(
        records
            .body
            .to_string()
            .contains("to fit the model's context window")
    );
    let notes = report["investigation"]["notes"].to_string();
    assert!(
        notes.contains("16,384 tokens, from --context-window"),
        "{notes}"
    );
}

/// The same run without the window: sized to the stand-in's million
/// tokens, the records loop's first request passes the server's window, and
/// the server cuts it without a word (the mock records it).
#[test]
fn without_the_window_a_request_passes_it() {
    let (env, out) = run(&LOCAL[..4], WINDOW);
    assert!(out.status.success(), "{}", stderr(&out));
    let over = env.server.over_window();
    assert!(!over.is_empty());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = report["investigation"]["notes"].to_string();
    assert!(notes.contains("borrowed from Claude Sonnet 5.5"), "{notes}");
}

#[test]
fn a_window_too_small_for_the_prompts_is_a_usage_error_naming_the_smallest() {
    let env = TestEnv::new().with_mock();
    env.file("a.txt", "a\n");
    let out = env.output(&["--model", "qwen3-coder", "--context-window", "2000"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.contains("--context-window 2000"))
        .unwrap_or(&err);
    assert!(
        line.contains("need a context window of at least") && line.contains("(--context-window "),
        "{err}"
    );
    // The smallest it names works.
    let smallest: String = line
        .rsplit("(--context-window ")
        .next()
        .unwrap()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let out = env.output(&[
        "--model",
        "qwen3-coder",
        "--context-window",
        &smallest,
        "--scan-only",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(env.server.request_count(), 0);
}
