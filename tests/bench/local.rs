//! Local models (ignored in the normal suite): a whole investigation of the
//! scan benchmark's tree (20,000 files in 1,021 directories) against the
//! mock answering as Ollama's Anthropic layer does with a 32,768-token
//! window, whose scripted agents work as `budget`'s realistic ones do.
//!
//! ```text
//! cargo test --release --test bench -- --ignored --nocapture local::
//! ```
//!
//! - `local_model_on_1021_directories`: the run with `--model qwen3-coder
//!   --price 0,0` and no window (sized to the stand-in's million tokens,
//!   the baseline) and with `--context-window 32768`; printed for each: the
//!   requests, the tokens, the largest prompt against the window, the
//!   requests longer than the window (which Ollama would have cut), the
//!   status and the wall time. Asserted: with the window, none is longer,
//!   the run exits 0, and its status is complete or, when partial, says why.
//! - `token_budget_on_1021_directories`: the same with `--token-budget
//!   300000`: the requests' input and output tokens add up to at most
//!   300,000, and the verdict is written.
//!
//! Set `LUMINOS_BENCH_TREE=DIR` to keep the tree between runs.

use std::path::Path;
use std::time::Instant;

use serde_json::Value;

use crate::budget::{DIR_SUMMARY_CHARS, Tree, command, generated_tree, realistic, thousands};
use crate::support::agent::MockAgent;
use crate::support::entries::cache_entries;
use crate::support::mock::MockServer;

/// The window of the local model.
const WINDOW: u64 = 32_768;
/// The token budget of the second benchmark.
const TOKEN_BUDGET: u64 = 300_000;
/// A local model's flags.
const LOCAL: [&str; 4] = ["--model", "qwen3-coder", "--price", "0,0"];

/// What one run did.
struct Ran {
    status: String,
    note: String,
    requests: usize,
    tokens: u64,
    largest: u64,
    over_window: usize,
    entries: usize,
    brief: bool,
    seconds: f64,
}

/// Investigate `tree` against a fresh Ollama mock with `extra` flags.
fn run(tree: &Tree, extra: &[&str]) -> Ran {
    let work = crate::support::fs::temp_dir("luminos-local-run-");
    let cache = work.path().join("cache");
    let server = MockServer::ollama(WINDOW);
    let agent = MockAgent::new(&tree.root)
        .summary_chars(DIR_SUMMARY_CHARS)
        .every_dir_script(realistic);
    server.respond_with(move |request| agent.reply(&request.body));
    let started = Instant::now();
    let out = command(Path::new(env!("CARGO_BIN_EXE_luminos")), &server, &cache)
        .env_remove("ANTHROPIC_API_KEY")
        .env("ANTHROPIC_AUTH_TOKEN", "ollama")
        .args(LOCAL)
        .args(extra)
        .arg("--json")
        .arg(&tree.root)
        .output()
        .unwrap();
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}:\n{stderr}",
        out.status.code()
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let usages = server.reported_usages();
    let investigation = &report["investigation"];
    Ran {
        status: investigation["status"].as_str().unwrap_or("?").to_string(),
        note: investigation["note"].as_str().unwrap_or("").to_string(),
        requests: server.request_count(),
        tokens: usages
            .iter()
            .map(|u| u.context_tokens() + u.output_tokens)
            .sum(),
        // About as the mock counts a prompt (a token per four bytes of its
        // JSON); the window itself is checked by the mock's exact count.
        largest: server
            .requests()
            .iter()
            .map(|r| (r.body.to_string().len() as u64).div_ceil(4))
            .max()
            .unwrap_or(0),
        over_window: server.over_window().len(),
        entries: cache_entries(&cache).dirs.len(),
        brief: !report["ai_brief"].as_str().unwrap_or("").is_empty(),
        seconds,
    }
}

fn show(label: &str, tree: &Tree, ran: &Ran) {
    println!(
        "  {label}: {} requests, {} tokens (input and output), largest prompt {} of a {} \
         window, {} longer than the window; {} of {} directories with an entry; status {}{}; \
         {:.1} s",
        thousands(ran.requests as u64),
        thousands(ran.tokens),
        thousands(ran.largest),
        thousands(WINDOW),
        ran.over_window,
        ran.entries,
        tree.dirs,
        ran.status,
        if ran.note.is_empty() {
            String::new()
        } else {
            format!(" ({})", ran.note)
        },
        ran.seconds
    );
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn local_model_on_1021_directories() {
    let tree = generated_tree("20k", 20_000, false);
    println!(
        "a local model with a {WINDOW}-token window on {} directories:",
        tree.dirs
    );
    let before = run(&tree, &[]);
    show("without --context-window", &tree, &before);
    let window = WINDOW.to_string();
    let after = run(&tree, &["--context-window", &window]);
    show("with --context-window 32768", &tree, &after);
    assert_eq!(after.over_window, 0, "requests longer than the window");
    assert!(after.brief, "no verdict");
    assert!(
        after.status == "complete" || (after.status == "partial" && !after.note.is_empty()),
        "{} {}",
        after.status,
        after.note
    );
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn token_budget_on_1021_directories() {
    let tree = generated_tree("20k", 20_000, false);
    let window = WINDOW.to_string();
    let budget = TOKEN_BUDGET.to_string();
    println!(
        "--token-budget {TOKEN_BUDGET} on {} directories:",
        tree.dirs
    );
    let ran = run(
        &tree,
        &["--context-window", &window, "--token-budget", &budget],
    );
    show("with --token-budget", &tree, &ran);
    assert!(ran.tokens <= TOKEN_BUDGET, "{} tokens", ran.tokens);
    assert_eq!(ran.over_window, 0);
    assert!(ran.brief, "no verdict");
    assert_eq!(ran.entries, tree.dirs, "every directory has an entry");
}
