//! Every dollar accounted, end to end against the mock Messages API: the
//! budget is a hard ceiling (every request priced at its worst case before
//! it is sent, counted here from the tokens each answer reports), a budget
//! too small for an investigation sends nothing and names one that is not,
//! the run replans on handoffs (leads first) and keeps each round so a
//! resumed run carries on with it, a later run with more money deepens what
//! the one before left to the scan, and reruns under one `--max-cost`
//! finish the work.

use crate::support;

use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

use luminos::ai::api::DEFAULT_MODEL;
use luminos::ai::api::cost::Pricing;
use serde_json::{Value, json};
use support::TestEnv;
use support::agent::{AgentEnv, MockAgent, Pass, tool_use, unit_members, visible_files};
use support::entries::cache_entries;
use support::mock::{MockBlock, Reply};
use support::output::{fields, stderr};

/// What the requests from `from` on were billed, at the default model's
/// list prices, from the usage each answer reported.
fn billed_since(env: &AgentEnv, from: usize) -> f64 {
    let pricing = Pricing::for_model(DEFAULT_MODEL);
    env.server.requests()[from..]
        .iter()
        .filter_map(|r| r.reported_usage)
        .map(|usage| pricing.cost(&usage))
        .sum()
}

fn report(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).expect("one JSON report")
}

/// The investigation's document `name`, if written (and the investigation
/// begun).
fn document(env: &TestEnv, name: &str) -> Option<Value> {
    let dir = std::fs::read_dir(env.cache())
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.join("meta.json").is_file())?;
    serde_json::from_slice(&std::fs::read(dir.join(name)).ok()?).ok()
}

#[test]
fn a_budget_too_small_for_an_investigation_sends_nothing_and_names_one_that_is_not() {
    let env = TestEnv::with_deep_project().with_mock();
    let out = env.run_ok(&["--json", "--budget", "0.01"]);
    assert_eq!(env.server.request_count(), 0, "{}", stderr(&out));
    let report = report(&out);
    let investigation = &report["investigation"];
    assert_eq!(investigation["status"], "partial", "{investigation}");
    let note = investigation["note"].as_str().unwrap();
    assert!(
        note.contains("the budget ($0.01) cannot buy an investigation"),
        "{note}"
    );
    // The scan report stands, with no word of an agent that was never
    // asked, and the last line says nothing was spent.
    assert!(report["file_categories"].is_object(), "{report}");
    let err = stderr(&out);
    assert!(!err.contains("agent produced no output"), "{err}");
    assert_eq!(
        err.lines().last().unwrap(),
        "Spent: $0.00; no request was sent."
    );
    let smallest = note
        .split("--budget ")
        .nth(1)
        .and_then(|rest| rest.trim_end_matches(')').parse::<f64>().ok())
        .expect("the note names a budget");
    assert!(smallest > 0.01, "{smallest}");
    // That budget buys one: a model reads a directory, within it.
    let out = env.run_ok(&["--json", "--budget", &format!("{smallest:.2}")]);
    let loops = env
        .passes()
        .iter()
        .filter(|(pass, _)| matches!(pass, Pass::Dir(_)))
        .count();
    assert!(loops > 0, "{}", stderr(&out));
    let billed = billed_since(&env, 0);
    assert!(billed <= smallest, "billed ${billed} of ${smallest}");
}

/// A loop that reads eight files a turn and never reports: each turn's
/// context grows by about 32 KiB, so a loop costs several times what one
/// is expected to.
fn heavy(turn: &support::agent::Turn<'_>) -> Reply {
    let dirs = std::iter::once(turn.dir()).chain(
        unit_members(turn.body)
            .into_iter()
            .map(|member| turn.target.join(member)),
    );
    let files: Vec<PathBuf> = dirs
        .flat_map(|dir| {
            visible_files(&dir)
                .into_iter()
                .map(move |(name, _)| dir.join(name))
        })
        .collect();
    if files.is_empty() {
        return Reply::tool_use(
            "submit_report",
            json!({"summary": "Empty.", "completeness": 0.5}),
        );
    }
    let mut blocks = vec![MockBlock::Text(format!("Step {}: reading on.", turn.turn))];
    for k in 0..8 {
        let path = &files[(turn.turn * 8 + k) % files.len()];
        blocks.push(tool_use(
            "read_file",
            json!({"path": path.to_string_lossy(), "max_bytes": 16_384}),
        ));
    }
    Reply::blocks(blocks)
}

#[test]
fn the_budget_is_a_hard_ceiling_however_dear_the_loops_turn_out() {
    // Eight directories too large to fold, each loop reading 128 KiB a
    // turn: four run at once, and each costs many times what a loop is
    // expected to.
    let env = TestEnv::new();
    let text = "let value = compute(42) + other_value * 3; // a line of code\n".repeat(256);
    for d in 0..8 {
        for f in 0..20 {
            env.file(&format!("area{d}/f{f:02}.rs"), &text);
        }
    }
    let env = env.with_agent(|agent| agent.every_dir_script(heavy));
    let budget = 0.6;
    let out = env.run_ok(&["--json", "--jobs=4", "--budget", &budget.to_string()]);
    let billed = billed_since(&env, 0);
    let err = stderr(&out);
    assert!(billed <= budget, "billed ${billed:.4} of ${budget}: {err}");
    // It did spend: the loops read on until their next request could have
    // passed what was left (every prompt token priced as a cache write,
    // every reply token as used), then stopped.
    assert!(billed > budget / 4.0, "billed ${billed:.4}: {err}");
    assert!(err.contains("Budget reached"), "{err}");
    // Every directory still has an entry, and the report its summary.
    let report = report(&out);
    assert_eq!(cache_entries(env.cache()).dirs.len(), 9, "{report}");
    assert!(report["investigation"]["cost_usd"].as_f64().unwrap() <= budget);
}

/// The 107-directory tree of the budget tests, with `agent` adjusted.
fn budget_tree(adjust: impl FnOnce(MockAgent) -> MockAgent) -> AgentEnv {
    crate::budget::tree().with_agent(|agent| adjust(agent.summary_chars(1_200)))
}

/// The rounds kept in `replans.json`.
fn rounds(env: &TestEnv) -> Vec<Value> {
    document(env, "replans.json")
        .and_then(|doc| doc["rounds"].as_array().cloned())
        .unwrap_or_default()
}

/// `Budget $0.60: N loops ...`: the loops the first decision bought.
fn first_loops(err: &str) -> u64 {
    let line = err
        .lines()
        .find(|l| l.contains("[AI] Budget $"))
        .expect("a budget line");
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| w.starts_with("loop")).unwrap();
    words[at - 1].parse().unwrap()
}

#[test]
fn money_left_buys_more_loops_as_they_finish_and_a_lead_comes_first() {
    // big00's loop flags a file of big99, the last of the order of
    // interest.
    let env = budget_tree(|agent| {
        agent.flag(
            "big00",
            "big99/f03.rs",
            "concern",
            "The same unsafe pattern is copied in big99.",
        )
    });
    // The rounds are said with -v.
    let out = env.run_ok(&[
        "--jobs=1",
        "--json",
        "-v",
        "--budget",
        crate::budget::BUDGET,
    ]);
    let err = stderr(&out);
    let report = report(&out);
    let billed = billed_since(&env, 0);
    assert!(billed <= 0.6, "billed ${billed}");
    let rounds = rounds(&env);
    assert!(!rounds.is_empty(), "{err}");
    assert!(
        err.contains("[AI] Replanning (round 1, 3 handoffs)"),
        "{err}"
    );
    // The rounds bought loops the first decision could not pay for.
    let coverage = &report["investigation"]["coverage"];
    let looped = coverage["investigated"].as_u64().unwrap();
    assert!(looped > first_loops(&err), "{coverage} vs {err}");
    let bought: u64 = rounds
        .iter()
        .map(|r| r["bought"].as_array().unwrap().len() as u64)
        .sum();
    assert!(bought > 0);
    // The first round's handoffs are the loops since the start, with what
    // each cost; its first purchase is the directory the lead named.
    let first = &rounds[0];
    assert_eq!(first["handoffs"].as_array().unwrap().len(), 3, "{first}");
    assert!(first["handoffs"][0]["cost_usd"].as_f64().unwrap() > 0.0);
    assert_eq!(first["bought"][0]["root"], "big99", "{first}");
    assert_eq!(first["bought"][0]["lead"], true, "{first}");
    let entries = cache_entries(env.cache());
    let big99 = entries
        .dirs
        .values()
        .find(|e| e["relative_path"] == "big99")
        .unwrap();
    assert_ne!(big99["mechanical"], true, "{big99}");
    // Everything still ends with an entry.
    assert_eq!(entries.dirs.len(), crate::budget::DIRS);
}

#[test]
fn a_resumed_run_carries_on_with_what_the_rounds_bought() {
    let env = budget_tree(|agent| agent);
    env.server.set_latency(Duration::from_millis(120));
    let args = ["--jobs=1", "--json", "--budget", crate::budget::BUDGET];
    let mut child = env
        .bare_cmd()
        .env("ANTHROPIC_API_KEY", "test-key")
        .args(args)
        .arg(env.target())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let first = loop {
        let kept = rounds(&env);
        if kept
            .iter()
            .any(|r| !r["bought"].as_array().unwrap().is_empty())
        {
            break kept;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no round bought anything"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // SAFETY: kill(2) on our own child's pid, which is not reaped yet.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let bought: Vec<String> = first
        .iter()
        .flat_map(|r| r["bought"].as_array().unwrap().clone())
        .map(|b| b["root"].as_str().unwrap().to_string())
        .collect();
    // The work plan holds what the rounds bought.
    let plan = document(&env, "work_plan.json").unwrap();
    let loops = fields(&plan["loops"], "root");
    for root in &bought {
        assert!(loops.contains(&root.as_str()), "{root} not in {loops:?}");
    }
    env.server.set_latency(Duration::ZERO);
    let out = env.run_ok(&args);
    assert!(stderr(&out).contains("Work plan loaded from cache."));
    // The interrupted run's rounds are kept, and what they bought was read
    // by a model.
    let after = rounds(&env);
    assert_eq!(after[..first.len()], first[..]);
    let read = cache_entries(env.cache()).model_read();
    for root in &bought {
        assert!(read.contains(root), "{root} was bought but not read");
    }
}

#[test]
fn a_later_run_with_more_money_deepens_what_the_one_before_left_to_the_scan() {
    let env = budget_tree(|agent| agent);
    env.run_ok(&["--jobs=1", "--json", "--budget", "0.3"]);
    let before = cache_entries(env.cache());
    let read_before = before.model_read();
    let left = before.dirs.len() - read_before.len();
    assert!(left > 20, "{left} left to the scan");

    // The same money again: nothing to do, nothing spent.
    let from = env.server.request_count();
    env.run_ok(&["--jobs=1", "--json", "--budget", "0.3"]);
    assert_eq!(
        env.server.request_count(),
        from,
        "an unchanged rerun pays nothing"
    );

    // More money, no --fresh: loops for what was left, within the budget;
    // the survey and the plan are reused, not paid again.
    let out = env.run_ok(&["--jobs=1", "--json", "--budget", "1"]);
    let passes: Vec<Pass> = env.passes()[from..]
        .iter()
        .map(|(p, _)| p.clone())
        .collect();
    assert!(!passes.contains(&Pass::Survey) && !passes.contains(&Pass::Planning));
    assert!(
        passes.iter().any(|p| matches!(p, Pass::Dir(_))),
        "{}",
        stderr(&out)
    );
    let billed = billed_since(&env, from);
    assert!(billed <= 1.0, "billed ${billed}");
    let after = cache_entries(env.cache());
    let read_after = after.model_read();
    assert!(
        read_after.len() > read_before.len() + 5,
        "{} -> {}",
        read_before.len(),
        read_after.len()
    );
    for dir in &read_before {
        assert!(read_after.contains(dir), "{dir}");
    }
    assert_eq!(after.dirs.len(), before.dirs.len());
    // Best first: among the bigs (all alike), those bought come first in
    // the order of interest (by name).
    let bigs_read: Vec<&String> = read_after.iter().filter(|d| d.starts_with("big")).collect();
    let bigs_left: Vec<String> = after
        .dirs
        .values()
        .filter(|e| e["mechanical"] == true)
        .filter_map(|e| e["relative_path"].as_str())
        .filter(|d| d.starts_with("big"))
        .map(str::to_string)
        .collect();
    if let (Some(last_read), Some(first_left)) = (bigs_read.last(), bigs_left.iter().min()) {
        assert!(
            last_read.as_str() < first_left.as_str(),
            "{last_read} {first_left}"
        );
    }
}

#[test]
fn reruns_under_the_same_cap_carry_on_until_the_investigation_completes() {
    let env = TestEnv::with_deep_project().with_mock();
    let mut runs = 0;
    loop {
        runs += 1;
        assert!(runs <= 12, "still not complete after {} runs", runs - 1);
        let from = env.server.request_count();
        let out = env.run_ok(&["--json", "--max-cost", "0.02"]);
        let report = report(&out);
        let investigation = &report["investigation"];
        if investigation["directories_remaining"] == 0 && investigation["cost_cap_hit"] == false {
            break;
        }
        // Every run under the cap makes progress: a loop at least.
        let loops = env.passes()[from..]
            .iter()
            .filter(|(pass, _)| matches!(pass, Pass::Dir(_)))
            .count();
        assert!(loops > 0, "run {runs} made no loop: {investigation}");
    }
    let entries = cache_entries(env.cache());
    assert_eq!(entries.dirs.len(), 7);
    assert_eq!(entries.model_read().len(), 7);
}
