//! Grounding figures (ignored in the normal suite):
//!
//! ```text
//! cargo test --release --test bench -- --ignored --nocapture grounding::
//! ```
//!
//! The real binary investigates two trees against the mock Messages API and
//! the report's `grounding` object is read back:
//! - the pipeline parity fixture (`TestEnv::small_project`) with the default
//!   scripted agents;
//! - this repository's own `src/`, with agents whose summaries cite files
//!   and symbols the way a model does (bare names, full paths, `:line`
//!   suffixes, `module::function`, `fn()` calls, `struct Name`), taken from
//!   each file's real `parse_structure` outline, plus a few invented files,
//!   symbols and critical flags.
//!
//! Asserted: every citation the agents invented is unresolved, and nothing
//! else is (no real file or symbol is called invented); every invented
//! critical flag is shown as `info`. Reported: the citations found and
//! resolved, by kind, and the wall time of the resumed run (scan, cache,
//! grounding; no request) as ratios to two baselines measured in the same
//! run: an `--estimate` run over the same tree (scan and estimate only), and
//! one `parse_structure` outline of every source file of the tree, in this
//! process, one after the other.

use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use luminos::ai::tools::structure::{Language, parse_source};
use serde_json::{Value, json};
use support::TestEnv;
use support::agent::{MockAgent, Pass, Turn, file_entry_call, tool_use, visible_files};
use support::mock::{MockServer, Reply};
use support::output::assert_success;

/// What an agent would say about one source file: its first functions and
/// types, from the real outline.
struct FileFacts {
    name: String,
    rel: String,
    functions: Vec<String>,
    types: Vec<String>,
}

fn facts(target: &Path, dir: &Path, name: &str) -> FileFacts {
    let path = dir.join(name);
    let rel = path
        .strip_prefix(target)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let outline = name
        .rsplit_once('.')
        .and_then(|(_, ext)| Language::from_extension(ext))
        .and_then(|language| parse_source(language, &std::fs::read(&path).ok()?).ok());
    let identifier = |s: &str| {
        let name: String = s
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        (!name.is_empty() && !name.starts_with(char::is_numeric)).then_some(name)
    };
    let (functions, types) = outline
        .map(|o| {
            (
                o.functions.iter().filter_map(|f| identifier(f)).collect(),
                o.classes
                    .iter()
                    .filter_map(|c| identifier(&c.name))
                    .collect(),
            )
        })
        .unwrap_or_default();
    FileFacts {
        name: name.to_string(),
        rel,
        functions,
        types,
    }
}

fn stem(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// A file summary as a model writes one.
fn file_summary(file: &FileFacts, siblings: &[FileFacts]) -> String {
    let mut text = format!("`{}`", file.name);
    match (file.functions.first(), file.types.first()) {
        (Some(function), Some(ty)) => text.push_str(&format!(
            " defines `{function}()` and `struct {ty}`, used as `{}::{function}`.",
            stem(&file.name)
        )),
        (Some(function), None) => text.push_str(&format!(" provides `{function}()`.")),
        (None, Some(ty)) => text.push_str(&format!(" declares `struct {ty}`.")),
        (None, None) => text.push_str(" holds no code of note."),
    }
    if let Some(other) = siblings.iter().find(|s| s.name != file.name) {
        text.push_str(&format!(
            " It works with {} (see {}:1).",
            other.name, other.rel
        ));
    }
    text
}

/// The scripted agents for a real source tree; what they invent is
/// recorded in `invented`.
fn realistic_agent(target: &Path, invented: Arc<Mutex<BTreeSet<String>>>) -> MockAgent {
    let all_dirs: Arc<Vec<PathBuf>> = Arc::new({
        let mut dirs: Vec<PathBuf> = walkdir::WalkDir::new(target)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_dir())
            .map(|e| e.into_path())
            .collect();
        dirs.sort();
        dirs
    });
    let for_dirs = invented.clone();
    MockAgent::new(target)
        .every_dir_script(move |turn: &Turn<'_>| {
            let dir = turn.dir();
            let index = all_dirs.iter().position(|d| *d == dir).unwrap_or(0);
            let rel = dir
                .strip_prefix(turn.target)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let shown = if rel.is_empty() { ".".to_string() } else { rel.clone() };
            let prefix = if rel.is_empty() { String::new() } else { format!("{rel}/") };
            let files: Vec<FileFacts> = visible_files(&dir)
                .iter()
                .map(|(name, _)| facts(turn.target, &dir, name))
                .collect();
            let invents_file = index % 6 == 0;
            let invents_symbol = index % 7 == 3 && files.iter().any(|f| !f.functions.is_empty());
            let invents_flag = index % 9 == 4;
            if turn.turn == 1 {
                let mut blocks = Vec::new();
                for file in &files {
                    let path = dir.join(&file.name);
                    let summary = file_summary(file, &files);
                    blocks.push(file_entry_call(&path, &file.rel, 1, &summary));
                }
                if let Some(file) = files.first() {
                    blocks.push(tool_use(
                        "flag",
                        json!({"path": file.name, "severity": "info",
                               "finding": format!("{} is the first file to read here.", file.name)}),
                    ));
                }
                if invents_flag {
                    let ghost = format!("{prefix}legacy_shim.rs");
                    for_dirs.lock().unwrap().insert(ghost.clone());
                    blocks.push(tool_use(
                        "flag",
                        json!({"path": ghost, "severity": "critical",
                               "finding": "Runs shell commands from the network."}),
                    ));
                }
                if !blocks.is_empty() {
                    return Reply::blocks(blocks);
                }
            }
            let mut summary = format!("`{shown}/` holds {} files.", files.len());
            for (i, file) in files.iter().enumerate() {
                let named = if i < 2 { file.rel.clone() } else { file.name.clone() };
                summary.push_str(&format!(" {named}"));
                if let Some(function) = file.functions.first() {
                    summary.push_str(&format!(" has `{function}()`"));
                }
                summary.push(';');
            }
            if invents_file {
                let ghost = format!("{prefix}compat_layer.rs");
                for_dirs.lock().unwrap().insert(ghost.clone());
                summary.push_str(&format!(" Older code lives in {ghost}."));
            }
            if invents_symbol && let Some(file) = files.iter().find(|f| !f.functions.is_empty()) {
                let ghost = format!("{}::frobnicate_all", stem(&file.name));
                for_dirs.lock().unwrap().insert(format!("`{ghost}`"));
                summary.push_str(&format!(" Everything goes through `{ghost}`."));
            }
            Reply::tool_use(
                "submit_report",
                json!({"summary": summary, "completeness": 0.9}),
            )
        })
        .submits(Pass::Synthesis, {
            let ghost = "plugins/loader.rs";
            invented.lock().unwrap().insert(ghost.to_string());
            invented.lock().unwrap().insert("`Orchestrator::warp`".to_string());
            json!({
                "brief": format!(
                    "A Rust CLI: main.rs hands over to `run::run`, which calls `scan::scan` \
                     and `orchestrator::investigate`; src/report/mod.rs renders the result. \
                     Plugins load from {ghost}."
                ),
                "detailed": "The agent loop (src/ai/engine/agent/mod.rs) drives tools from \
                             ai/tools/mod.rs via `dispatch()`; `Orchestrator::warp` is the fast path. \
                             Caching lives in cache\\mod.rs, redaction in `./redact/mod.rs:1`.",
            })
        })
}

struct Run {
    report: Value,
    wall: Duration,
    requests: usize,
}

fn run(env: &TestEnv, server: &MockServer, target: &Path, extra: &[&str]) -> Run {
    let before = server.request_count();
    let started = Instant::now();
    let out = env.cmd().args(["--json"]).args(extra).arg(target).output();
    let wall = started.elapsed();
    let out = assert_success(out.expect("run luminos"), "luminos");
    Run {
        report: serde_json::from_slice(&out.stdout).expect("JSON report"),
        wall,
        requests: server.request_count() - before,
    }
}

fn figures(label: &str, grounding: &Value) {
    println!(
        "{label}: {} of {} citations found in the tree (paths {} of {}, symbols {} of {}, {} unchecked)",
        grounding["resolved"],
        grounding["citations"],
        grounding["paths"]["resolved"],
        grounding["paths"]["citations"],
        grounding["symbols"]["resolved"],
        grounding["symbols"]["citations"],
        grounding["unchecked"],
    );
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn grounding_figures_on_the_parity_fixture_and_our_own_src() {
    // The parity fixture, default agents.
    let parity = TestEnv::new();
    parity.small_project();
    let parity = parity.with_mock();
    let out = parity.run_ok(&["--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    figures("parity fixture", &report["grounding"]);
    assert_eq!(report["grounding"]["unresolved"], json!([]));
    assert_eq!(report["investigation"]["status"], "complete");

    // This repository's src/, realistic agents.
    let src = std::fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("src")).unwrap();
    let invented: Arc<Mutex<BTreeSet<String>>> = Arc::default();
    let server = MockServer::start();
    let agent = realistic_agent(&src, invented.clone());
    server.respond_with(move |request| agent.reply(&request.body));
    let env = TestEnv::new().with_base_url(server.url());

    let first = run(&env, &server, &src, &[]);
    let grounding = &first.report["grounding"];
    figures("src/", grounding);
    let unresolved: BTreeSet<String> = grounding["unresolved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| match u["kind"].as_str() {
            Some("symbol") => format!("`{}`", u["citation"].as_str().unwrap().trim_matches('`')),
            _ => u["citation"].as_str().unwrap().to_string(),
        })
        .collect();
    let invented = invented.lock().unwrap().clone();
    let coverage = &first.report["investigation"]["coverage"];
    println!(
        "  directories: {} investigated by a loop of their own, {} folded into a unit, {} \
         summarised from the scan",
        coverage["investigated"], coverage["folded"], coverage["mechanical"]
    );
    println!(
        "  {} requests; {} distinct citations invented, {} distinct unresolved:",
        first.requests,
        invented.len(),
        unresolved.len()
    );
    for u in grounding["unresolved"].as_array().unwrap() {
        println!(
            "    {} ({} {} {})",
            u["citation"].as_str().unwrap_or(""),
            u["kind"].as_str().unwrap_or(""),
            u["cited_in"].as_str().unwrap_or(""),
            u["entry"].as_str().unwrap_or("")
        );
    }
    assert_eq!(
        unresolved, invented,
        "exactly the invented citations are unresolved"
    );
    for flag in first.report["flags"].as_array().unwrap() {
        if flag["finding"] == "Runs shell commands from the network." {
            assert_eq!(flag["severity"], "info");
            assert_eq!(flag["verified"], false);
        } else {
            assert_eq!(flag["verified"], true, "{flag}");
        }
    }

    // The resumed run: no request, grounded again, against --estimate.
    let mut resumed = Duration::MAX;
    let mut estimate = Duration::MAX;
    for _ in 0..3 {
        let again = run(&env, &server, &src, &[]);
        assert_eq!(again.requests, 0);
        assert_eq!(again.report["grounding"], first.report["grounding"]);
        resumed = resumed.min(again.wall);
        let started = Instant::now();
        let out = env
            .cmd()
            .args(["--estimate", "--json"])
            .arg(&src)
            .output()
            .unwrap();
        assert!(out.status.success());
        estimate = estimate.min(started.elapsed());
    }
    let sources: Vec<(Language, Vec<u8>)> = walkdir::WalkDir::new(&src)
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let language = Language::from_extension(e.path().extension()?.to_str()?)?;
            Some((language, std::fs::read(e.path()).ok()?))
        })
        .collect();
    let mut outline_all = Duration::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        for (language, bytes) in &sources {
            parse_source(*language, bytes).unwrap();
        }
        outline_all = outline_all.min(started.elapsed());
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "  resumed run {:.0} ms (best of 3) = {:.1}x an --estimate run ({:.0} ms) = {:.2}x \
         outlining all {} source files once ({:.0} ms)",
        ms(resumed),
        resumed.as_secs_f64() / estimate.as_secs_f64(),
        ms(estimate),
        resumed.as_secs_f64() / outline_all.as_secs_f64(),
        sources.len(),
        ms(outline_all),
    );
}
