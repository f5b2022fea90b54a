//! The real binary against endpoints that are dead without closing the
//! connection, that are not the Messages API, or that are overloaded:
//! each run ends `failed` (exit 3) after a handful of requests, with one
//! line naming what to check, instead of failing one directory after
//! another. Timeouts and backoff are scaled down through the environment;
//! the defaults' give-up times are measured by the ignored benchmark
//! `bench::dead_endpoint`.

use super::*;

/// Longest a scaled-down run may take here (a debug binary, a shared
/// machine); the old client never ended at all on most of these.
const LIMIT: Duration = Duration::from_secs(60);

/// One bad endpoint: its name, the mock's answer to every request, and
/// what the run's error line says.
type Case = (&'static str, fn() -> Reply, &'static str);

/// A small project whose every request `reply` answers.
fn answering(reply: impl Fn() -> Reply + Send + Sync + 'static) -> (TestEnv, MockServer) {
    let server = MockServer::start();
    server.respond_with(move |_| reply());
    let env = TestEnv::new().with_base_url(server.url());
    env.small_project();
    (env, server)
}

/// `luminos --json TARGET` with every clock scaled down (`idle` for the
/// idle and headers timeouts), stopped if it outlives [`LIMIT`].
fn run_scaled(env: &TestEnv, idle: &str, extra: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let mut cmd = env.cmd();
    cmd.env("LUMINOS_RETRY_BACKOFF_MS", "1")
        .env("LUMINOS_IDLE_TIMEOUT_SECS", idle)
        .env("LUMINOS_HEADERS_TIMEOUT_SECS", idle)
        .args(["--json", "-j", "1"])
        .args(extra)
        .arg(env.target());
    let out = support::watch::output_within(cmd, LIMIT);
    (out, started.elapsed())
}

/// A stream of pings alone, headers then silence, and a reply trickled a
/// byte at a time: each is a dead attempt after the idle timeout, and the
/// run gives up after two of them.
#[test]
fn streams_that_make_no_progress_fail_the_run() {
    let cases: [Case; 3] = [
        (
            "pings only",
            || Reply::pings_only(Duration::from_millis(50)),
            "keep-alives only",
        ),
        (
            "headers then silence",
            Reply::headers_then_silence,
            "nothing came",
        ),
        (
            "trickle",
            || Reply::text("slowly").trickle(Duration::from_millis(20)),
            "no event of the Messages API",
        ),
    ];
    // Side by side: each run mostly waits out its idle timeouts.
    std::thread::scope(|scope| {
        for (name, reply, said) in cases {
            scope.spawn(move || {
                let (env, server) = answering(reply);
                let (out, elapsed) = run_scaled(&env, "0.4", &[]);
                let error = failure_of(&out);
                assert!(
                    error.starts_with(&format!(
                        "the API at {} answered but never finished a reply",
                        server.url()
                    )),
                    "{name}: {error}"
                );
                assert!(error.contains(said), "{name}: {error}");
                assert_eq!(server.request_count(), 2, "{name}");
                assert!(elapsed < Duration::from_secs(20), "{name}: {elapsed:?}");
            });
        }
    });
}

/// A web page, garbage and JSON of another API, each with a 200: the run
/// fails at the first request, naming `ANTHROPIC_BASE_URL`, its value and
/// what came back.
#[test]
fn an_endpoint_that_is_not_the_messages_api_is_named_at_once() {
    let cases: [Case; 4] = [
        (
            "web page",
            Reply::web_page,
            "got HTTP 200, text/html; charset=utf-8 (no event stream in the body: Welcome to nginx!",
        ),
        (
            "garbage",
            Reply::garbage_stream,
            "got HTTP 200, text/event-stream (no event stream in the body:",
        ),
        (
            "wrong json",
            Reply::wrong_json,
            "got HTTP 200, application/json (JSON that is not a message:",
        ),
        (
            "404 page",
            || Reply::html(404),
            "got HTTP 404, text/html (unexpected response body: 404 Bad Gateway",
        ),
    ];
    for (name, reply, said) in cases {
        let (env, server) = answering(reply);
        // The real clocks: nothing here waits for one.
        let started = Instant::now();
        let out = run_json_failing_fast(&env, &[]);
        let elapsed = started.elapsed();
        let error = failure_of(&out);
        let expected = format!(
            "ANTHROPIC_BASE_URL={} does not answer as the Messages API: POST /v1/messages {said}",
            server.url()
        );
        assert!(error.starts_with(&expected), "{name}: {error}");
        assert!(
            error.ends_with("; check ANTHROPIC_BASE_URL"),
            "{name}: {error}"
        );
        assert!(
            !error.contains('\x1b') && !error.contains('<'),
            "{name}: {error}"
        );
        assert_eq!(server.request_count(), 1, "{name}: no retry before a reply");
        assert!(elapsed < Duration::from_secs(30), "{name}: {elapsed:?}");
    }
}

/// An HTML error page on every request (a proxy whose upstream is down) is
/// retried like any 5xx, then named the same way.
#[test]
fn a_proxy_error_page_on_every_request_names_the_base_url() {
    let (env, server) = answering(|| Reply::html(502));
    let (out, _) = run_scaled(&env, "5", &[]);
    let error = failure_of(&out);
    assert!(
        error.starts_with(&format!(
            "ANTHROPIC_BASE_URL={} does not answer as the Messages API: POST /v1/messages got \
             HTTP 502, text/html (unexpected response body: 502 Bad Gateway",
            server.url()
        )),
        "{error}"
    );
    assert_eq!(server.request_count(), 7, "one call's retries, then done");
}

/// 529 `overloaded_error` on every request: one call's retries, then the
/// run fails saying the API is overloaded and to try again later.
#[test]
fn an_api_overloaded_on_every_request_fails_the_run() {
    let (env, server) = answering(Reply::overloaded);
    let (out, _) = run_scaled(&env, "5", &[]);
    let error = failure_of(&out);
    assert!(
        error.starts_with(
            "the API is overloaded and refused every attempt (overloaded (HTTP 529): Overloaded"
        ),
        "{error}"
    );
    assert!(error.ends_with("; try again later"), "{error}");
    assert_eq!(server.request_count(), 7);
    // The same through `overloaded_error` events inside 200 streams.
    let (env, server) =
        answering(|| Reply::text("partial").error_event("overloaded_error", "Overloaded"));
    let error = failure_of(&run_scaled(&env, "5", &[]).0);
    assert!(error.starts_with("the API is overloaded"), "{error}");
    assert_eq!(server.request_count(), 7);
}

/// Overloaded once the run is under way: the first call to run out of
/// retries ends the run, instead of each directory spending its own.
#[test]
fn a_run_gives_up_as_a_whole_not_directory_by_directory() {
    let (env, server) = failing_after_the_survey(Reply::overloaded);
    let (out, _) = run_scaled(&env, "5", &[]);
    let error = failure_of(&out);
    assert!(error.starts_with("the API is overloaded"), "{error}");
    assert_eq!(
        server.request_count(),
        1 + 7,
        "the survey, then one call's retries"
    );
    // A rate limit that outlasts the retries, a server error, and streams
    // that break every time, too.
    for (name, reply) in [
        ("429", Reply::rate_limited as fn() -> Reply),
        ("500", Reply::server_error),
        ("dropped", || {
            Reply::text("cut off halfway").drop_mid_stream()
        }),
    ] {
        let (env, server) = failing_after_the_survey(reply);
        let error = failure_of(&run_scaled(&env, "5", &[]).0);
        assert!(
            error.starts_with("the API is failing for now ("),
            "{name}: {error}"
        );
        assert!(error.ends_with("; try again later"), "{name}: {error}");
        assert_eq!(server.request_count(), 1 + 7, "{name}");
    }
}

/// `--batch` through a gateway that serves `/v1/messages` but has no
/// Message Batches API: its 404 names the Batches endpoint and says to
/// run without `--batch`.
#[test]
fn batch_through_a_gateway_without_batches_says_so() {
    let env = TestEnv::with_small_project().with_mock();
    env.server.without_batches();
    let out = run_json(&env, "cache", &["--batch"]);
    let error = failure_of(&out);
    assert_eq!(
        error,
        format!(
            "ANTHROPIC_BASE_URL={} has no Message Batches API: POST /v1/messages/batches got \
             HTTP 404, application/json (Not Found); run without --batch",
            env.server.url()
        )
    );
    // No request reached the Messages API.
    assert_eq!(env.server.request_count(), 0);
    assert!(!error.contains("Messages API was not found"), "{error}");
}
