//! Unit tests of resolving a run's configuration: targets, money flags,
//! credentials and model precedence, timing variables, batch flags, and
//! lexical path normalisation.

use std::path::Path;
use std::time::Duration;

use clap::Parser;

use super::*;
use crate::ai::api::Auth;
use crate::ai::api::batch::BatchTiming;
use crate::ai::api::{self, DEFAULT_BASE_URL, DEFAULT_MODEL};
use crate::cli::Args;
use crate::config::defaults::{DEFAULT_ASK_BUDGET_USD, DEFAULT_BUDGET_USD, DEFAULT_CACHE_ROOT};
use crate::config::{ATTEMPT_DEADLINE_VAR, BATCH_POLL_VAR};
use crate::money::Usd;
use crate::report::Format;

fn args(list: &[&str]) -> Args {
    Args::try_parse_from(std::iter::once("luminos").chain(list.iter().copied())).unwrap()
}

fn config(list: &[&str], env: &Env) -> Config {
    match Invocation::resolve(args(list), env).unwrap() {
        Invocation::Run { config, .. } => *config,
        other => panic!("expected a run, got {other:?}"),
    }
}

#[test]
fn clear_cache_alone_needs_no_target() {
    let plan = Invocation::resolve(args(&["--clear-cache"]), &Env::default()).unwrap();
    assert!(
        matches!(plan, Invocation::ClearCacheOnly { cache_root } if cache_root == Path::new(DEFAULT_CACHE_ROOT))
    );
}

#[test]
fn missing_target_is_an_error() {
    // clap refuses it first; resolve() still refuses it for library callers.
    assert!(Args::try_parse_from(["luminos"]).is_err());
    let mut raw = args(&["--clear-cache"]);
    raw.clear_cache = false;
    let err = Invocation::resolve(raw, &Env::default()).unwrap_err();
    assert_eq!(err, ConfigError::MissingTarget);
}

/// The investigation options `flags` resolve to, for a real target.
fn investigation_with(flags: &[&str]) -> InvestigationOptions {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().to_str().unwrap();
    let list: Vec<&str> = flags.iter().copied().chain([target]).collect();
    match Invocation::resolve(args(&list), &Env::default()).unwrap() {
        Invocation::Run { config, .. } => config.investigation,
        other => panic!("expected a run, got {other:?}"),
    }
}

/// The money flags reach the run as dollars (their bad values are clap's
/// usage errors: see `cli`'s tests).
#[test]
fn money_flags_resolve_to_dollars() {
    let cap = |flags: &[&str]| investigation_with(flags).max_cost;
    assert_eq!(cap(&[]), None);
    assert_eq!(cap(&["--max-cost", "2.50"]), Some(Usd::new(2.5)));
    assert_eq!(cap(&["--max-cost=$3"]), Some(Usd::new(3.0)));
    let budget = |flags: &[&str]| investigation_with(flags).budget;
    assert_eq!(budget(&[]), Some(DEFAULT_BUDGET_USD));
    assert_eq!(budget(&["--budget", "2.50"]), Some(Usd::new(2.5)));
    assert_eq!(budget(&["--budget=$20"]), Some(Usd::new(20.0)));
    assert_eq!(budget(&["--budget", " None "]), None);
}

#[test]
fn a_file_is_not_a_directory() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let shown = file.path().to_string_lossy().into_owned();
    let err = Invocation::resolve(args(&[&shown]), &Env::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "'{shown}' is a file; luminos investigates a directory (the one that holds it, say)"
        )
    );
}

#[test]
fn more_than_one_target_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let shown = dir.path().to_string_lossy().into_owned();
    let err = Invocation::resolve(args(&[&shown, "b\x1b"]), &Env::default()).unwrap_err();
    assert!(err.is_usage());
    assert_eq!(
        err.to_string(),
        format!(
            "luminos investigates one directory at a time, and was given 2: '{shown}', \
             'b\\x1b'; run it once for each"
        )
    );
}

#[test]
fn api_key_wins_over_token_and_model_flag_over_env() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().to_str().unwrap();
    let env = Env {
        anthropic_api_key: Some("k".into()),
        anthropic_auth_token: Some("t".into()),
        luminos_model: Some("env-model".into()),
        anthropic_base_url: Some("http://127.0.0.1:9/".into()),
        ..Env::default()
    };
    let cfg = config(&[target, "--model", "flag-model"], &env);
    assert_eq!(cfg.api.auth, Some(Auth::ApiKey("k".into())));
    assert_eq!(cfg.investigation.model, "flag-model");
    assert_eq!(cfg.api.base_url, "http://127.0.0.1:9");
    let cfg = config(&[target], &env);
    assert_eq!(cfg.investigation.model, "env-model");
    let cfg = config(&[target], &Env::default());
    assert_eq!(cfg.investigation.model, DEFAULT_MODEL);
    assert_eq!(cfg.api.auth, None);
    assert_eq!(cfg.api.base_url, DEFAULT_BASE_URL);
}

#[test]
fn timing_knobs_default_and_parse() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().to_str().unwrap();
    let cfg = config(&[target], &Env::default());
    assert_eq!(cfg.api.idle_timeout, api::IDLE_TIMEOUT);
    assert_eq!(cfg.api.headers_timeout, api::HEADERS_TIMEOUT);
    assert_eq!(cfg.api.attempt_deadline, api::ATTEMPT_DEADLINE);
    // A dead endpoint costs two timeouts and one backoff before any reply
    // came: within the 150 s the README promises.
    let dead = 2 * api::HEADERS_TIMEOUT.max(api::IDLE_TIMEOUT) + api::retry::INITIAL_BACKOFF;
    assert!(dead <= Duration::from_secs(150), "{dead:?}");
    assert!(api::ATTEMPT_DEADLINE > api::IDLE_TIMEOUT);
    assert_eq!(cfg.api.retry_backoff, api::retry::INITIAL_BACKOFF);
    let env = Env {
        luminos_idle_timeout: Some(" 0.25 ".into()),
        luminos_headers_timeout: Some("1.5".into()),
        luminos_attempt_deadline: Some("2".into()),
        luminos_retry_backoff: Some("0".into()),
        ..Env::default()
    };
    let cfg = config(&[target], &env);
    assert_eq!(cfg.api.idle_timeout, Duration::from_millis(250));
    assert_eq!(cfg.api.retry_backoff, Duration::ZERO);
    // They reach the client and its retry policy.
    let env = Env {
        anthropic_api_key: Some("k".into()),
        ..env
    };
    let cfg = config(&[target], &env);
    let client = cfg.client_config().unwrap();
    assert_eq!(client.idle_timeout, Duration::from_millis(250));
    assert_eq!(client.headers_timeout, Duration::from_millis(1500));
    assert_eq!(client.attempt_deadline, Duration::from_secs(2));
    let client = api::Client::new(client).unwrap();
    assert_eq!(client.retry_policy().initial_backoff, Duration::ZERO);
    assert_eq!(client.retry_policy().max_backoff, api::retry::MAX_BACKOFF);
    for (idle, headers, backoff) in [
        ("0", "1", "5"),
        ("-1", "1", "5"),
        ("soon", "1", "5"),
        ("1", "1", "1.5"),
        ("1", "1", "60001"),
        ("1", "0", "5"),
        ("1", "never", "5"),
    ] {
        let env = Env {
            luminos_idle_timeout: Some(idle.into()),
            luminos_headers_timeout: Some(headers.into()),
            luminos_retry_backoff: Some(backoff.into()),
            ..Env::default()
        };
        let err = Invocation::resolve(args(&[target]), &env).unwrap_err();
        assert!(
            matches!(err, ConfigError::InvalidVar { .. }),
            "{idle} {headers} {backoff}: {err}"
        );
    }
    for deadline in ["0", "-3", "later"] {
        let env = Env {
            luminos_attempt_deadline: Some(deadline.into()),
            ..Env::default()
        };
        assert_eq!(
            refused_var(target, &env),
            ATTEMPT_DEADLINE_VAR,
            "{deadline}"
        );
    }
}

/// The variable a run on `target` is refused for, with `env`.
fn refused_var(target: &str, env: &Env) -> &'static str {
    match Invocation::resolve(args(&[target]), env) {
        Err(ConfigError::InvalidVar { name, .. }) => name,
        other => panic!("expected a refused variable, got {other:?}"),
    }
}

#[test]
fn batch_flags_and_poll_timing() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().to_str().unwrap();
    let cfg = config(&[target], &Env::default());
    assert!(!cfg.investigation.batch);
    assert_eq!(cfg.investigation.mode, Mode::Investigate);
    assert_eq!(cfg.api.batch_timing, BatchTiming::default());
    let env = Env {
        luminos_batch_poll: Some("20".into()),
        ..Env::default()
    };
    let cfg = config(&["--batch", target], &env);
    assert!(cfg.investigation.batch);
    assert_eq!(cfg.investigation.batch_size, api::batch::MAX_REQUESTS);
    assert_eq!(
        config(&["--batch", "--batch-size", "500", target], &env)
            .investigation
            .batch_size,
        500
    );
    for bad in [
        &["--batch-size", "5"][..],
        &["--batch", "--batch-size", "0"],
    ] {
        let list: Vec<&str> = bad.iter().copied().chain([target]).collect();
        assert!(Args::try_parse_from(std::iter::once("luminos").chain(list)).is_err());
    }
    assert_eq!(cfg.api.batch_timing.first_poll, Duration::from_millis(20));
    assert_eq!(cfg.api.batch_timing.max_poll, Duration::from_millis(240));
    assert_eq!(
        config(&["--cancel-batch", target], &Env::default())
            .investigation
            .mode,
        Mode::CancelBatch
    );
    for bad in ["0", "-5", "soon", "3600001"] {
        let env = Env {
            luminos_batch_poll: Some(bad.into()),
            ..Env::default()
        };
        assert_eq!(refused_var(target, &env), BATCH_POLL_VAR, "{bad}");
    }
    for clash in [
        &["--cancel-batch", "--batch"][..],
        &["--cancel-batch", "--estimate"],
        &["--batch", "--scan-only"],
    ] {
        let list: Vec<&str> = clash.iter().copied().chain([target]).collect();
        assert!(
            Args::try_parse_from(std::iter::once("luminos").chain(list)).is_err(),
            "{clash:?}"
        );
    }
    // --estimate --batch prices a batch run.
    assert!(
        config(&["--estimate", "--batch", target], &Env::default())
            .investigation
            .batch
    );
}

#[test]
fn auth_debug_never_shows_the_secret() {
    let shown = format!("{:?}", Auth::ApiKey("sk-secret".into()));
    assert!(!shown.contains("sk-secret"));
}

/// The report's format: `--format`, `--json` (its short form), the `-o`
/// file's extension, else text; contradictions are usage errors.
#[test]
fn the_format_comes_from_the_flags_then_the_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().to_str().unwrap();
    let format = |flags: &[&str]| {
        let list: Vec<&str> = flags.iter().copied().chain([target]).collect();
        Invocation::resolve(args(&list), &Env::default()).map(|plan| match plan {
            Invocation::Run { config, .. } => config.output.format,
            other => panic!("expected a run, got {other:?}"),
        })
    };
    assert_eq!(format(&[]), Ok(Format::Text));
    assert_eq!(format(&["--json"]), Ok(Format::Json));
    assert_eq!(format(&["--format", "markdown"]), Ok(Format::Markdown));
    assert_eq!(format(&["--format", "md"]), Ok(Format::Markdown));
    assert_eq!(format(&["--format", "html"]), Ok(Format::Html));
    assert_eq!(format(&["-o", "LUMINOS.md"]), Ok(Format::Markdown));
    assert_eq!(format(&["-o", "out/report.HTML"]), Ok(Format::Html));
    assert_eq!(format(&["-o", "r.json"]), Ok(Format::Json));
    assert_eq!(format(&["-o", "report.txt"]), Ok(Format::Text));
    // The flag wins over the name.
    assert_eq!(
        format(&["--format", "text", "-o", "r.md"]),
        Ok(Format::Text)
    );
    assert_eq!(format(&["--json", "-o", "r.html"]), Ok(Format::Json));
    assert_eq!(format(&["--json", "--format", "json"]), Ok(Format::Json));
    assert!(matches!(
        format(&["--json", "--format", "html"]),
        Err(ConfigError::Conflict(message)) if message.contains("--json is short for --format json")
    ));
    assert!(matches!(
        format(&["--estimate", "--format", "markdown"]),
        Err(ConfigError::Conflict(message)) if message == "--estimate writes text or JSON, not markdown"
    ));
    assert!(matches!(
        format(&["--estimate", "-o", "cost.html"]),
        Err(ConfigError::Conflict(message)) if message.contains("from the -o file's extension")
    ));
    assert_eq!(format(&["--estimate", "-o", "cost.json"]), Ok(Format::Json));
}

#[test]
fn refine_is_one_round_unless_a_depth_is_given() {
    let refine = |flags: &[&str]| investigation_with(flags).refine;
    assert_eq!(refine(&[]), None);
    assert_eq!(refine(&["--refine"]), Some(1));
    assert_eq!(refine(&["--refine", "--refine-depth", "3"]), Some(3));
    // A depth alone asks for the refinement too.
    assert_eq!(refine(&["--refine-depth", "2"]), Some(2));
}

#[test]
fn ask_takes_the_run_flags_it_shares_and_a_budget_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().to_str().unwrap();
    let ask = |flags: &[&str]| {
        let list: Vec<&str> = ["ask"]
            .into_iter()
            .chain(flags.iter().copied())
            .chain([target, "What is it?"])
            .collect();
        match Invocation::resolve(args(&list), &Env::default()) {
            Ok(Invocation::Ask { config, question }) => Ok((*config, question)),
            Ok(other) => panic!("expected a question, got {other:?}"),
            Err(err) => Err(err),
        }
    };
    let (config, question) = ask(&[]).unwrap();
    assert_eq!(question, "What is it?");
    assert_eq!(config.investigation.budget, Some(DEFAULT_ASK_BUDGET_USD));
    assert_eq!(config.investigation.model, DEFAULT_MODEL);
    assert!(config.investigation.redact && config.output.format == Format::Text);
    assert_eq!(config.target, Path::new(target));

    let (config, _) = ask(&[
        "--json",
        "--budget",
        "0.01",
        "--model",
        "claude-haiku-5-5",
        "--price",
        "1,2",
        "-x",
        "vendor",
        "--no-redact",
    ])
    .unwrap();
    assert_eq!(config.investigation.budget, Some(Usd::new(0.01)));
    assert_eq!(config.investigation.model, "claude-haiku-5-5");
    let prices = config.investigation.model_facts.model.prices;
    assert_eq!((prices.input, prices.output), (1.0, 2.0));
    assert_eq!(config.scan.exclude, ["vendor"]);
    assert!(config.output.format == Format::Json && !config.investigation.redact);
    assert_eq!(
        ask(&["--budget", "none"]).unwrap().0.investigation.budget,
        None
    );
}

/// A window given with the flag (or, without it, the variable) is the
/// model's from then on, with where it came from; one too small for the
/// fixed prompts is a usage error naming the smallest that works.
#[test]
fn a_given_window_is_the_models_and_too_small_a_one_is_refused() {
    use crate::ai::api::catalog::WindowSource;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().to_str().unwrap();
    let resolve = |flags: &[&str], env: &Env| {
        let list: Vec<&str> = flags.iter().copied().chain([target]).collect();
        Invocation::resolve(args(&list), env)
    };
    let facts = |flags: &[&str], env: &Env| match resolve(flags, env).unwrap() {
        Invocation::Run { config, .. } => config.investigation.model_facts,
        other => panic!("expected a run, got {other:?}"),
    };
    let none = Env::default();
    let stand_in = facts(&["--model", "qwen3-coder"], &none);
    assert_eq!(stand_in.window, WindowSource::StandIn);
    let flag = facts(
        &["--model", "qwen3-coder", "--context-window", "32768"],
        &none,
    );
    assert_eq!(flag.model.context_window, 32_768);
    assert_eq!(flag.window, WindowSource::Given("--context-window"));
    // The other facts stay the stand-in's, a price given with them too.
    assert_eq!(flag.model.tokens_per_byte, stand_in.model.tokens_per_byte);
    let priced = facts(&["--context-window", "65536", "--price", "0,0"], &none);
    assert_eq!(
        (priced.model.context_window, priced.model.prices.input),
        (65_536, 0.0)
    );
    let env = Env {
        luminos_context_window: Some(" 40000 ".into()),
        ..Env::default()
    };
    assert_eq!(
        facts(&[], &env).window,
        WindowSource::Given(CONTEXT_WINDOW_VAR)
    );
    assert_eq!(facts(&[], &env).model.context_window, 40_000);
    assert_eq!(
        facts(&["--context-window", "50000"], &env)
            .model
            .context_window,
        50_000
    );
    let smallest = crate::ai::smallest_window::smallest_window(stand_in.model, None);
    let err = resolve(&["--context-window", "2000"], &none).unwrap_err();
    assert!(err.is_usage());
    assert_eq!(
        err,
        ConfigError::WindowTooSmall {
            by: "--context-window",
            given: 2000,
            smallest
        }
    );
    assert!(
        err.to_string()
            .contains(&format!("--context-window {smallest}"))
    );
    let exact = smallest.to_string();
    assert!(resolve(&["--context-window", &exact], &none).is_ok());
    let bad = Env {
        luminos_context_window: Some("lots".into()),
        ..Env::default()
    };
    assert!(matches!(
        resolve(&[], &bad),
        Err(ConfigError::InvalidVar {
            name: CONTEXT_WINDOW_VAR,
            ..
        })
    ));
}
