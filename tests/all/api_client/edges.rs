//! Endpoints that are dead without closing the connection, or are not the
//! Messages API at all, against the client: every attempt ends (no
//! progress for the idle timeout, or its deadline), a dead or wrong
//! endpoint costs few attempts before it has ever replied, and a real
//! reply that is slow, or works a long while without showing it, is left
//! to finish. Timeouts are scaled down here; the defaults are measured by
//! the ignored benchmark `bench::dead_endpoint`.

use luminos::ai::api::Response;
use luminos::ai::api::error::ApiError;

use super::*;

/// Idle timeout of these tests: a stream without progress for this long is
/// dead.
const IDLE: Duration = Duration::from_millis(400);

/// A client for `server` with [`IDLE`], the headers timeout at [`IDLE`],
/// an attempt deadline of `deadline`, and six fast retries.
fn edge_client(server: &MockServer, deadline: Duration) -> (Client, Arc<Mutex<Vec<RetryNotice>>>) {
    let mut config = config(server);
    config.idle_timeout = IDLE;
    config.headers_timeout = IDLE;
    config.attempt_deadline = deadline;
    client_with(config, 6)
}

/// Send `hello` and fail the test if the call has not ended within `limit`
/// (a client that waits on keep-alives would wait for ever).
async fn send_within(client: &Client, limit: Duration) -> (Result<Response, ApiError>, Duration) {
    let started = Instant::now();
    let result = tokio::time::timeout(limit, client.send(&hello(client)))
        .await
        .unwrap_or_else(|_| panic!("the call was still waiting after {limit:?}"));
    (result, started.elapsed())
}

/// Every request of a fresh mock answered with `reply`, from a client
/// with an attempt deadline of `deadline`: the call's error (a timeout),
/// with `said` in its message, after two attempts (one retry before any
/// reply), and how long it took.
async fn dead(reply: fn() -> Reply, deadline: Duration, said: &str) -> (Client, Duration) {
    let server = MockServer::start();
    server.respond_with(move |_| reply());
    let (client, notices) = edge_client(&server, deadline);
    let (result, elapsed) = send_within(&client, Duration::from_secs(15)).await;
    let err = result.unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Timeout, "{err}");
    assert!(err.message.contains(said), "{err}");
    assert_eq!(server.request_count(), 2, "one retry before any reply");
    assert_eq!(notices.lock().unwrap().len(), 1);
    (client, elapsed)
}

/// Only pings, never `message_start`: dead after the idle timeout, and
/// given up on after two attempts, though bytes keep coming.
#[tokio::test]
async fn a_stream_of_pings_alone_is_dead() {
    let pings = || Reply::pings_only(Duration::from_millis(50));
    let (_, elapsed) = dead(pings, Duration::from_secs(60), "keep-alives only").await;
    assert!(elapsed >= 2 * IDLE, "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(4), "{elapsed:?}");
}

/// The headers of a 200 stream, then nothing: two idle timeouts, not
/// seven, though the endpoint did answer.
#[tokio::test]
async fn headers_then_silence_is_dead() {
    let said = "nothing came in the 400ms after the response headers";
    let (client, elapsed) = dead(Reply::headers_then_silence, Duration::from_secs(60), said).await;
    assert!(elapsed < Duration::from_secs(4), "{elapsed:?}");
    assert!(client.has_answered() && !client.has_succeeded());
}

/// A real reply sent a byte at a time, too slowly for any event to come
/// within the idle timeout: bytes are not progress.
#[tokio::test]
async fn a_trickle_of_bytes_is_dead() {
    let trickle = || Reply::text("slowly").trickle(Duration::from_millis(20));
    let said = "bytes but no event of the Messages API";
    let (_, elapsed) = dead(trickle, Duration::from_secs(60), said).await;
    assert!(elapsed < Duration::from_secs(4), "{elapsed:?}");
}

/// A reply that progresses for ever is cut at the attempt's deadline.
#[tokio::test]
async fn every_attempt_has_a_deadline() {
    let endless = || Reply::endless(Duration::from_millis(50));
    let deadline = Duration::from_millis(1200);
    let said = "the attempt passed its deadline of 1.2s";
    let (_, elapsed) = dead(endless, deadline, said).await;
    assert!(elapsed >= 2 * deadline, "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(6), "{elapsed:?}");
}

/// Real replies that take far longer than the idle timeout still come
/// through: a slow, steady one, and ones whose model works unseen for a
/// while (thinking whose text is omitted, a long tool input), with only
/// the API's pings meanwhile.
#[tokio::test]
async fn a_slow_real_reply_keeps_working() {
    let every = Duration::from_millis(100);
    let quiet = Duration::from_millis(1500);
    let replies = [
        (
            "paced",
            Reply::text("a reply that takes its time, frame by frame").paced(every),
        ),
        (
            "thinking",
            Reply::text("after thinking")
                .with_thinking("")
                .working_quietly(quiet, every),
        ),
        (
            "tool input",
            Reply::tool_use("read_file", json!({"path": "README.md"}))
                .working_quietly(quiet, every),
        ),
    ];
    // The three wait side by side: each is a slow reply, not work.
    let [paced, thinking, tool] = replies.map(|(name, reply)| async move {
        let server = MockServer::start();
        server.push(reply);
        let (client, notices) = edge_client(&server, Duration::from_secs(60));
        let (result, elapsed) = send_within(&client, Duration::from_secs(20)).await;
        let response = result.unwrap_or_else(|err| panic!("{name}: {err}"));
        assert!(!response.content.is_empty(), "{name}");
        assert_eq!(server.request_count(), 1, "{name}");
        assert!(notices.lock().unwrap().is_empty(), "{name}");
        assert!(elapsed > 2 * IDLE, "{name}: {elapsed:?}");
    });
    tokio::join!(paced, thinking, tool);
}

/// A success status whose body is not the Messages API's (a web page,
/// bytes that hold no event, JSON that is no message) ends the call at
/// once, before the endpoint has ever replied, saying what came back.
#[tokio::test]
async fn an_answer_that_is_not_the_api_is_final_before_any_reply() {
    let cases = [
        (
            "web page",
            Reply::web_page(),
            "HTTP 200, text/html; charset=utf-8",
            "Welcome to nginx!",
        ),
        (
            "garbage",
            Reply::garbage_stream(),
            "HTTP 200, text/event-stream",
            "garbage",
        ),
        (
            "wrong json",
            Reply::wrong_json(),
            "HTTP 200, application/json",
            "\"status\":\"ok\"",
        ),
    ];
    for (name, reply, answer, quoted) in cases {
        let server = MockServer::start();
        server.respond_with(move |_| reply.clone());
        let (client, notices) = edge_client(&server, Duration::from_secs(60));
        let (result, _) = send_within(&client, Duration::from_secs(10)).await;
        let err = result.unwrap_err();
        assert_eq!(err.kind, ApiErrorKind::UnexpectedAnswer, "{name}: {err}");
        assert_eq!(err.answer(), answer, "{name}");
        assert!(err.message.contains(quoted), "{name}: {err}");
        assert!(!err.to_string().contains('\x1b'), "{name}: {err}");
        assert_eq!(server.request_count(), 1, "{name}");
        assert!(notices.lock().unwrap().is_empty(), "{name}");
    }
}

/// However many retries are allowed, a call stops waiting once its waits
/// would pass the policy's total (two minutes by default): a server that
/// asks for a long wait on every 529 is given up on in bounded time.
#[tokio::test]
async fn a_call_waits_a_bounded_time_in_all() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::overloaded().retry_after_ms(200));
    let policy = RetryPolicy {
        max_total_wait: Duration::from_millis(500),
        ..fast(6)
    };
    let client = Client::new(config(&server))
        .unwrap()
        .with_retry_policy(policy);
    let (result, elapsed) = send_within(&client, Duration::from_secs(10)).await;
    assert_eq!(result.unwrap_err().kind, ApiErrorKind::Overloaded);
    assert_eq!(server.request_count(), 3, "two waits of 200ms, not six");
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
}
