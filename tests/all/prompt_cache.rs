//! Prompt caching across a run, measured on the pipeline tests' scripted
//! conversation (the 4-directory small project, one loop at a time): every
//! dir loop sends the same system prompt and tools, so every loop after the
//! first reads that prefix from the cache, and the prompts are billed at
//! most half of what they would cost with no prompt caching (the original
//! used none). The replies cost what they cost either way, so they are left
//! out of the ratio: with them, the leaner the prompts, the worse caching
//! would look. Deterministic: the mock counts tokens from the bytes it
//! receives, so the ratio is the same on every run.

use crate::support;

use luminos::ai::api::DEFAULT_MODEL;
use luminos::ai::api::catalog::ModelFacts;
use serde_json::Value;
use support::TestEnv;
use support::agent::Pass;

/// The target of issue 14: at most half the uncached price of the prompts.
const TARGET_RATIO: f64 = 0.5;

#[test]
fn loops_share_their_prefix_and_the_run_bills_at_most_half_the_uncached_price() {
    let env = TestEnv::with_small_project();
    let env = env.with_mock();
    // The cache minimum of the model the run uses, from the catalog.
    env.server
        .set_min_cacheable_tokens(ModelFacts::of(DEFAULT_MODEL).model.min_cacheable_tokens);
    let out = env.run_ok(&["--jobs=1", "--json"]);

    let dir_requests: Vec<_> = env
        .passes()
        .into_iter()
        .filter(|(pass, _)| matches!(pass, Pass::Dir(_)))
        .map(|(_, request)| request)
        .collect();
    assert_eq!(dir_requests.len(), 8);
    let first_calls: Vec<_> = dir_requests.iter().filter(|r| r.turn() == 0).collect();
    assert_eq!(first_calls.len(), 4);
    let shared =
        |r: &&support::mock::RecordedRequest| (r.body["system"].clone(), r.body["tools"].clone());
    for call in &first_calls[1..] {
        assert_eq!(
            shared(call),
            shared(&first_calls[0]),
            "one prefix for every loop"
        );
        let usage = call.reported_usage.expect("usage reported");
        // What the first loop wrote (tools and system) is read back.
        let written = first_calls[0]
            .reported_usage
            .unwrap()
            .cache_creation_input_tokens;
        assert!(usage.cache_read_input_tokens > 0, "{usage:?}");
        assert!(usage.cache_creation_input_tokens < written, "{usage:?}");
    }

    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cost = report["investigation"]["cost_usd"].as_f64().unwrap();
    let saved = report["investigation"]["cache_savings_usd"]
        .as_f64()
        .unwrap();
    let output = report["investigation"]["tokens"]["output"]
        .as_u64()
        .unwrap();
    let replies = output as f64 * ModelFacts::of(DEFAULT_MODEL).model.prices.output / 1e6;
    let ratio = (cost - replies) / (cost + saved - replies);
    println!("prompts billed / uncached: {ratio:.3} (target <= {TARGET_RATIO})");
    assert!(
        ratio <= TARGET_RATIO,
        "prompts billed {ratio:.3} of their uncached price"
    );
}

/// A loop that never submits runs to its last allowed turn: that request
/// writes nothing to the prompt cache (no later turn would read it), yet
/// keeps the shared prefix of tools and system prompt marked for the loops
/// after it, and reads back what the turn before wrote.
#[test]
fn the_last_allowed_turn_writes_nothing_but_keeps_the_shared_prefix() {
    let env = TestEnv::with_small_project().with_agent(|agent| {
        agent.every_dir_script(|_| {
            support::mock::Reply::tool_use(
                "think",
                serde_json::json!({"observation": "o", "hypothesis": "h", "next_action": "n"}),
            )
        })
    });
    env.run_ok(&["--jobs=1", "--json"]);
    let loops: Vec<_> = env
        .passes()
        .into_iter()
        .filter_map(|(pass, request)| match pass {
            Pass::Dir(dir) => Some((dir, request)),
            _ => None,
        })
        .collect();
    let dirs: std::collections::BTreeSet<&String> = loops.iter().map(|(dir, _)| dir).collect();
    assert_eq!(dirs.len(), 4);
    for dir in dirs {
        let turns: Vec<_> = loops
            .iter()
            .filter(|(d, _)| d == dir)
            .map(|(_, r)| r)
            .collect();
        let (last, before) = turns.split_last().unwrap();
        assert!(turns.len() >= 3, "{dir}: {} turns", turns.len());
        assert!(last.last_user_text().contains("1 turn left"), "{dir}");
        assert!(
            !last.writes_its_newest_message(),
            "{dir}: the last turn wrote"
        );
        assert!(
            last.marks_its_system_prompt(),
            "{dir}: the shared prefix is unmarked"
        );
        assert!(
            before[0].writes_its_newest_message(),
            "{dir}: the first turn wrote nothing"
        );
        // What the turn before wrote is read back.
        let usage = last.reported_usage.unwrap();
        assert!(usage.cache_read_input_tokens > 0, "{dir}: {usage:?}");
        assert_eq!(usage.cache_creation_input_tokens, 0, "{dir}: {usage:?}");
    }
}
