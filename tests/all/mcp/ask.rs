//! `ask` over MCP: the library function of `luminos ask` against the mock,
//! answering from the cached investigation with its own budget, its
//! progress as notifications, the cache left as it was; and what goes
//! wrong, as one line.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::agent::{AgentEnv, Pass};
use crate::support::mock::Reply;

use super::*;

const QUESTION: &str = "How does the engine run?";
const ANSWER: &str = "It runs from `run` in src/core/engine.rs; src/nowhere.rs is not there.";

/// Every file under `dir` and its bytes.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_file())
        .map(|entry| {
            (
                entry.path().to_string_lossy().into_owned(),
                std::fs::read(entry.path()).unwrap(),
            )
        })
        .collect()
}

/// The question's agent reads `engine.rs`, then answers [`ANSWER`].
fn reads_then_answers(env: &AgentEnv) {
    env.set_agent(|agent| {
        agent.pass_script(Pass::Ask, |turn| match turn.turn {
            1 => Reply::tool_use("read_file", json!({"path": "src/core/engine.rs"})),
            _ => Reply::tool_use("submit_answer", json!({"answer": ANSWER})),
        })
    });
}

#[test]
fn ask_answers_from_the_investigation_and_changes_nothing() {
    let env = investigated();
    let before = env.server.request_count();
    let cache = contents(env.cache());
    reads_then_answers(&env);
    let mcp = Mcp::of(&env);
    let answer = mcp.answer("ask", args(&env, json!({"question": QUESTION})));

    assert_eq!(answer["question"], QUESTION);
    assert_eq!(answer["answer"], ANSWER);
    assert!(answer.get("note").is_none(), "{answer}");
    // Its citations, checked against the tree.
    let cited: Vec<(&str, bool)> = answer["citations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "path")
        .map(|c| {
            (
                c["citation"].as_str().unwrap(),
                c["found"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(cited.contains(&("src/core/engine.rs", true)), "{cited:?}");
    assert!(cited.contains(&("src/nowhere.rs", false)), "{cited:?}");
    // Two turns, two requests, all of them the question's, within the
    // question's own budget.
    let asked = env.requests_of(&Pass::Ask);
    assert_eq!(asked.len(), 2);
    assert_eq!(env.server.request_count(), before + 2);
    assert_eq!(answer["cost"]["api_requests"], 2);
    // $0.50, the default the README and `luminos ask --help` state.
    assert_eq!(answer["cost"]["budget_usd"], 0.5);
    assert!(answer["cost"]["usd"].as_f64().unwrap() > 0.0);
    // It was shown the investigation the cache holds.
    assert!(
        asked[0]
            .system_text()
            .contains("Scripted brief over 4 directory summaries.")
    );
    // Its progress, as notifications under the call's token.
    let progress = mcp.progress_through(&format!("[AI] Question: {QUESTION}"));
    assert!(
        progress
            .iter()
            .any(|n| n.message.as_deref() == Some(&format!("[AI] Question: {QUESTION}"))),
        "{progress:?}"
    );
    // The cache is the investigation's: a question leaves it as it was.
    assert_eq!(contents(env.cache()), cache);

    // `budget` is the question's: "none" lifts the ceiling.
    let unbounded = mcp.answer(
        "ask",
        args(&env, json!({"question": QUESTION, "budget": "none"})),
    );
    assert_eq!(unbounded["cost"]["budget_usd"], Value::Null);
}

#[test]
fn ask_on_a_tree_never_investigated_says_its_answer_rests_on_the_files() {
    let env = TestEnv::with_small_project().with_mock();
    let mcp = Mcp::of(&env);
    let answer = mcp.answer("ask", args(&env, json!({"question": QUESTION})));
    assert!(
        answer["answer"]
            .as_str()
            .unwrap()
            .starts_with("Scripted answer")
    );
    assert!(
        answer["note"]
            .as_str()
            .unwrap()
            .starts_with("this tree was never investigated"),
        "{answer}"
    );
    // Nothing was made in the cache for it.
    assert!(contents(env.cache()).is_empty());
}

#[test]
fn ask_failures_are_one_line() {
    let env = TestEnv::with_small_project().with_mock();
    let mcp = Mcp::of(&env);
    let missing = env.path("nope");
    assert_eq!(
        mcp.failure("ask", json!({"target": missing, "question": QUESTION})),
        format!(
            "'{}' is not a directory or does not exist.",
            missing.display()
        )
    );
    assert_eq!(
        mcp.failure("ask", args(&env, json!({}))),
        "ask: bad arguments: missing field `question`"
    );
    assert!(
        mcp.failure("ask", args(&env, json!({"question": "  \n "})))
            .starts_with("the question is empty")
    );
    assert_eq!(
        mcp.failure(
            "ask",
            args(&env, json!({"question": QUESTION, "budget": 0}))
        ),
        "invalid value '0' for '--budget <USD>': a dollar amount above zero, such as 5, or none"
    );
    // A budget that cannot pay for the first request: refused before it goes.
    let poor = mcp.failure(
        "ask",
        args(&env, json!({"question": QUESTION, "budget": 0.000001})),
    );
    assert!(poor.starts_with("no answer: "), "{poor}");
    assert!(poor.ends_with("raise --budget"), "{poor}");
    assert_eq!(env.server.request_count(), 0);
    // No key in the server's environment.
    let keyless = Mcp::without_key(&env);
    assert!(
        keyless
            .failure("ask", args(&env, json!({"question": QUESTION})))
            .starts_with("luminos ask needs an Anthropic API key")
    );
    assert_eq!(env.server.request_count(), 0);
}
