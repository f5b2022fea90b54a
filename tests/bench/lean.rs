//! Lean prompts and cache marks benchmark (ignored in the normal suite):
//! what a plain run on the parity fixture sends and bills, before and
//! after, on the same conversation; and what `--batch` bills against the
//! same run without it.
//!
//! ```text
//! LUMINOS_BENCH_BASELINE_BIN=/path/to/an/earlier/luminos \
//!   cargo test --release --test bench -- --ignored --nocapture lean::
//! ```
//!
//! The parity fixture is the pipeline tests' small project
//! (`TestEnv::small_project`), run as `luminos --no-redact --no-ignore -j1
//! --json` against the suite's mock with its default scripted agent, from
//! an empty cache and a cold prompt cache. The agent's replies depend only
//! on the tools offered and the directories, so every build holds the same
//! conversation (the requests are counted to make sure). Each request's
//! reported usage is billed at Sonnet 4.6's list prices (cache writes at
//! the lifetime the mock reports for them), the prices the issue's figures
//! use.
//!
//! [`the_same_conversation_in_fewer_tokens`] prints, for this build and
//! the baseline (`LUMINOS_BENCH_BASELINE_BIN`, or `LUMINOS_BENCH_BASELINE`,
//! another build of luminos): the requests, the prompt tokens (input,
//! cache writes and cache reads together), the bytes of the request bodies
//! (the tokenizer-free proxy: in all and per request, and by part: the
//! tools, the system prompts, the tool results), the cache writes and the
//! bill. Asserted, with a baseline: this build bills at most 0.8x the
//! baseline and sends at most 0.78x its prompt tokens.
//!
//! [`batches_against_the_same_run_without_them`] runs the same fixture
//! with `--batch` twice, with instant rounds and with rounds that take ten
//! minutes on the mock's prompt-cache clock, each against the interactive
//! run, and prints the ratios and the run's note about the marks'
//! lifetime; asserts at most 0.55 for this build in both.
//!
//! `LUMINOS_BENCH_VERBOSE=1` prints each request's pass, turn, usage and
//! bytes; `LUMINOS_BENCH_DUMP=DIR` writes the request bodies there;
//! `LUMINOS_BENCH_THOROUGH=N` has every dir loop take N turns (the
//! scripted agent's careful loops) instead of the default agent's two.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use luminos::ai::api::cost::Pricing;
use serde_json::Value;

use crate::support::TestEnv;
use crate::support::agent::MockAgent;
use crate::support::mock::{MockServer, RecordedRequest};

/// The prices the issue's figures are at.
const PRICES: &str = "claude-sonnet-4-6";
/// The flags of a plain run on the parity fixture.
const PLAIN: [&str; 4] = ["--no-redact", "--no-ignore", "-j", "1"];
/// A slow round: ten minutes on the prompt cache's clock.
const SLOW_ROUND: Duration = Duration::from_secs(10 * 60);

/// The other build, when one is named.
fn baseline() -> Option<PathBuf> {
    ["LUMINOS_BENCH_BASELINE_BIN", "LUMINOS_BENCH_BASELINE"]
        .iter()
        .find_map(std::env::var_os)
        .map(PathBuf::from)
        .filter(|bin| bin.is_file())
}

/// The builds measured: this one first.
fn builds() -> Vec<(&'static str, PathBuf)> {
    let mut builds = vec![("this build", PathBuf::from(env!("CARGO_BIN_EXE_luminos")))];
    if let Some(other) = baseline() {
        builds.push(("baseline", other));
    }
    builds
}

/// What one run sent and billed.
#[derive(Debug, Default, Clone)]
struct Figures {
    requests: usize,
    prompt_tokens: u64,
    written: u64,
    read: u64,
    billed: f64,
    bytes: usize,
    tool_bytes: usize,
    system_bytes: usize,
    result_bytes: usize,
    results: usize,
    /// The report's `investigation` object.
    investigation: Value,
}

impl Figures {
    fn of(requests: &[RecordedRequest], investigation: Value) -> Figures {
        let mut f = Figures {
            requests: requests.len(),
            investigation,
            ..Figures::default()
        };
        let pricing = Pricing::for_model(PRICES);
        for request in requests {
            let usage = request.reported_usage.unwrap_or_default();
            f.prompt_tokens += usage.context_tokens();
            f.written += usage.cache_creation_input_tokens;
            f.read += usage.cache_read_input_tokens;
            f.billed += bill(&pricing, request, request.batch.is_some());
            f.bytes += serde_json::to_vec(&request.body).unwrap().len();
            f.tool_bytes += serde_json::to_vec(&request.body["tools"]).unwrap().len();
            f.system_bytes += serde_json::to_vec(&request.body["system"]).unwrap().len();
            for message in request.messages() {
                for block in message["content"].as_array().into_iter().flatten() {
                    if block["type"] == "tool_result" {
                        f.results += 1;
                        f.result_bytes += serde_json::to_vec(&block["content"]).unwrap().len();
                    }
                }
            }
        }
        f
    }

    fn show(&self, name: &str) {
        println!(
            "  {name:>10}: {} requests, {} prompt tokens ({} written, {} read), {} bytes \
             ({} a request; tools {}, system {}, {} tool results {}), billed ${:.5}",
            self.requests,
            self.prompt_tokens,
            self.written,
            self.read,
            self.bytes,
            self.bytes / self.requests.max(1),
            self.tool_bytes,
            self.system_bytes,
            self.results,
            self.result_bytes,
            self.billed
        );
    }
}

/// One line per request: its pass, turn, usage and bytes.
fn each_request(requests: &[RecordedRequest], target: &Path) {
    for r in requests {
        if let Some(dir) = std::env::var_os("LUMINOS_BENCH_DUMP") {
            std::fs::create_dir_all(&dir).unwrap();
            let path = Path::new(&dir).join(format!("{:02}.json", r.index));
            std::fs::write(path, serde_json::to_vec_pretty(&r.body).unwrap()).unwrap();
        }
        let u = r.reported_usage.unwrap_or_default();
        println!(
            "    {:?} turn {}: in {} write {} (1h {}) read {} out {}; bytes {} (tools {}, system {})",
            crate::support::agent::Pass::of(&r.body, target),
            r.turn() + 1,
            u.input_tokens,
            u.cache_creation_input_tokens,
            r.reported_cache_1h,
            u.cache_read_input_tokens,
            u.output_tokens,
            serde_json::to_vec(&r.body).unwrap().len(),
            serde_json::to_vec(&r.body["tools"]).unwrap().len(),
            serde_json::to_vec(&r.body["system"]).unwrap().len(),
        );
    }
}

/// `request`'s reported usage at Sonnet 4.6's prices: its cache writes
/// at the lifetime the mock reports (1 hour or 5 minutes), halved in a
/// batch.
fn bill(pricing: &Pricing, request: &RecordedRequest, batch: bool) -> f64 {
    let usage = request.reported_usage.unwrap_or_default();
    let p = pricing.prices;
    let hour = request.reported_cache_1h;
    let five = usage.cache_creation_input_tokens - hour;
    let dollars = (usage.input_tokens as f64 * p.input
        + five as f64 * p.cache_write_5m
        + hour as f64 * p.cache_write_1h
        + usage.cache_read_input_tokens as f64 * p.cache_read
        + usage.output_tokens as f64 * p.output)
        / 1e6;
    if batch { dollars / 2.0 } else { dollars }
}

/// One run of `binary` with `args` on `target` against `server`, from an
/// empty cache (under `root`) and a cold prompt cache: the requests it
/// made and its report's `investigation`.
fn run(
    binary: &Path,
    server: &MockServer,
    target: &Path,
    root: &Path,
    args: &[&str],
) -> (Vec<RecordedRequest>, Value) {
    server.clear_prompt_cache();
    let from = server.request_count();
    let out = crate::isolated_against(binary, server, root)
        .args(PLAIN)
        .args(args)
        .arg("--json")
        .arg(target)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} {args:?}: {}",
        binary.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let requests = server.requests()[from..].to_vec();
    (requests, report["investigation"].clone())
}

/// The agent the runs talk to, as the figures name it.
fn agent_name() -> String {
    match std::env::var("LUMINOS_BENCH_THOROUGH") {
        Ok(turns) => format!("loops of {turns} turns"),
        Err(_) => "default agent".to_string(),
    }
}

/// The parity fixture and a mock answering as the default agent.
fn fixture() -> (TestEnv, PathBuf, MockServer) {
    let env = TestEnv::with_small_project();
    let target = std::fs::canonicalize(env.target()).unwrap();
    let server = MockServer::start();
    let agent = match std::env::var("LUMINOS_BENCH_THOROUGH") {
        Ok(turns) => MockAgent::new(&target).thorough_dirs(turns.parse().unwrap()),
        Err(_) => MockAgent::new(&target),
    };
    server.respond_with(move |request| agent.reply(&request.body));
    (env, target, server)
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn the_same_conversation_in_fewer_tokens() {
    let (_env, target, server) = fixture();
    let work = crate::support::fs::temp_dir("luminos-lean-");
    println!(
        "parity fixture, luminos {} --json, {}, billed at {PRICES}'s prices",
        PLAIN.join(" "),
        agent_name()
    );
    let mut figures = Vec::new();
    for (name, binary) in builds() {
        let (requests, investigation) =
            run(&binary, &server, &target, &work.path().join(name), &[]);
        let f = Figures::of(&requests, investigation);
        f.show(name);
        if std::env::var_os("LUMINOS_BENCH_VERBOSE").is_some() {
            each_request(&requests, &target);
        }
        figures.push(f);
    }
    server.assert_no_violations();
    let [ours, before] = &figures[..] else {
        println!("  (no baseline: set LUMINOS_BENCH_BASELINE_BIN for the ratios)");
        return;
    };
    let ratio = |a: f64, b: f64| a / b.max(1e-12);
    println!(
        "  this build / baseline: billed {:.3}x, prompt tokens {:.3}x, bytes {:.3}x (a request \
         {:.3}x), tools {:.3}x, system {:.3}x, tool results {:.3}x, cache writes {:.3}x",
        ratio(ours.billed, before.billed),
        ratio(ours.prompt_tokens as f64, before.prompt_tokens as f64),
        ratio(ours.bytes as f64, before.bytes as f64),
        ratio(
            (ours.bytes / ours.requests) as f64,
            (before.bytes / before.requests) as f64
        ),
        ratio(ours.tool_bytes as f64, before.tool_bytes as f64),
        ratio(ours.system_bytes as f64, before.system_bytes as f64),
        ratio(ours.result_bytes as f64, before.result_bytes as f64),
        ratio(ours.written as f64, before.written as f64),
    );
    assert_eq!(ours.requests, before.requests, "not the same conversation");
    assert_eq!(ours.results, before.results, "not the same conversation");
    assert!(
        ours.billed <= 0.8 * before.billed,
        "billed {}",
        ours.billed / before.billed
    );
    assert!(
        ours.prompt_tokens as f64 <= 0.78 * before.prompt_tokens as f64,
        "prompt tokens {}",
        ours.prompt_tokens as f64 / before.prompt_tokens as f64
    );
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn batches_against_the_same_run_without_them() {
    let (_env, target, server) = fixture();
    let work = crate::support::fs::temp_dir("luminos-lean-batch-");
    println!(
        "parity fixture, luminos {} --json [--batch], {}, billed at {PRICES}'s prices",
        PLAIN.join(" "),
        agent_name()
    );
    let mut ours = Vec::new();
    for (name, binary) in builds() {
        let root = |what: &str| work.path().join(format!("{name}-{what}"));
        server.set_batch_delay(Duration::from_millis(5));
        let (plain, i) = run(&binary, &server, &target, &root("plain"), &[]);
        let plain = Figures::of(&plain, i);
        for (rounds, round_time) in [("instant", None), ("ten-minute", Some(SLOW_ROUND))] {
            match round_time {
                Some(time) => server.set_batch_round_time(time),
                None => server.set_batch_round_time(Duration::ZERO),
            };
            let (batch, b) = run(&binary, &server, &target, &root(rounds), &["--batch"]);
            if std::env::var_os("LUMINOS_BENCH_VERBOSE").is_some() {
                each_request(&batch, &target);
            }
            let batch = Figures::of(&batch, b);
            let ratio = batch.billed / plain.billed;
            println!(
                "  {name:>10}, {rounds:>10} rounds: interactive ${:.5}, --batch ${:.5} ({} rounds, \
                 {} written, {} read): {ratio:.3}x; notes {}",
                plain.billed,
                batch.billed,
                batch.investigation["batch"]["rounds"],
                batch.written,
                batch.read,
                batch.investigation["notes"]
            );
            if name == "this build" {
                ours.push((rounds, ratio));
            }
        }
    }
    server.assert_no_violations();
    for (rounds, ratio) in ours {
        assert!(ratio <= 0.55, "{rounds} rounds: batch/interactive {ratio}");
    }
}
