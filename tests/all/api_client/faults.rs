//! Faults: each retryable one recovers, final ones fail fast, the server's
//! wait and `x-should-retry` are obeyed, stalls time out, garbage is survived.

use luminos::ai::api::error::ApiError;

use super::*;

/// Sends `hello` once to a fresh mock answering `replies` in turn, from a
/// client with `retries` fast retries, and returns the error the call ends
/// in, the server and the retry notices given on the way.
async fn send_failing(
    replies: impl IntoIterator<Item = Reply>,
    retries: u32,
) -> (ApiError, MockServer, Vec<RetryNotice>) {
    send_failing_with(replies, retries, |_| {}).await
}

/// [`send_failing`] with the client's config changed by `adjust` first.
async fn send_failing_with(
    replies: impl IntoIterator<Item = Reply>,
    retries: u32,
    adjust: impl FnOnce(&mut ClientConfig),
) -> (ApiError, MockServer, Vec<RetryNotice>) {
    let server = MockServer::start();
    server.push_all(replies);
    let mut config = config(&server);
    adjust(&mut config);
    let (client, notices) = client_with(config, retries);
    let err = client.send(&hello(&client)).await.unwrap_err();
    let notices = notices.lock().unwrap().clone();
    (err, server, notices)
}

/// Each retryable fault, then a good reply: the client must come back with
/// the good reply after exactly one retry.
#[tokio::test]
async fn every_retryable_fault_recovers() {
    let faults: Vec<(&str, Reply, ApiErrorKind)> = vec![
        ("429", Reply::rate_limited(), ApiErrorKind::RateLimited),
        ("529", Reply::overloaded(), ApiErrorKind::Overloaded),
        ("500", Reply::server_error(), ApiErrorKind::Server),
        (
            "503",
            Reply::error(503, "api_error", "unavailable"),
            ApiErrorKind::Server,
        ),
        (
            "408",
            Reply::error(408, "timeout_error", "slow"),
            ApiErrorKind::Server,
        ),
        (
            "409",
            Reply::error(409, "api_error", "conflict"),
            ApiErrorKind::Server,
        ),
        ("html 502", Reply::html(502), ApiErrorKind::Server),
        (
            "plain 500",
            Reply::raw(500, "text/plain", "upstream exploded"),
            ApiErrorKind::Server,
        ),
        (
            "dropped",
            Reply::text("a long enough reply to cut in half").drop_mid_stream(),
            ApiErrorKind::BrokenStream,
        ),
        (
            "error event",
            Reply::text("partial answer here").error_event("overloaded_error", "Overloaded"),
            ApiErrorKind::Overloaded,
        ),
        (
            "api_error event",
            Reply::text("partial answer here").error_event("api_error", "boom"),
            ApiErrorKind::Server,
        ),
        (
            "cut tool json",
            Reply::tool_use("read_file", json!({"path": "a/b/c.txt"})).truncate_tool_json(),
            ApiErrorKind::MalformedToolInput,
        ),
        (
            "200 garbage",
            Reply::raw(200, "text/plain", "definitely not an event stream"),
            ApiErrorKind::UnexpectedAnswer,
        ),
    ];
    for (name, fault, kind) in faults {
        let server = MockServer::start();
        // A first reply proves the endpoint: an answer that is not the
        // API's is retried only then (see `edges`).
        server
            .push(Reply::text("proven"))
            .push(fault)
            .push(Reply::text("recovered"));
        let (client, notices) = mock_client(&server);
        client.send(&hello(&client)).await.unwrap();
        let response = client
            .send(&hello(&client))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(response.texts(), vec!["recovered"], "{name}");
        assert_eq!(server.request_count(), 3, "{name}");
        let notices = notices.lock().unwrap();
        assert_eq!(notices.len(), 1, "{name}");
        assert_eq!(notices[0].error.kind, kind, "{name}: {}", notices[0].error);
        assert_eq!(notices[0].attempt, 1);
        assert_eq!(notices[0].max_retries, 6);
        let line = notices[0].to_string();
        assert!(line.starts_with("API call failed: "), "{line}");
        assert!(line.contains("retry 1/6 in "), "{line}");
        assert!(!line.contains('\n'));
    }
}

#[tokio::test]
async fn final_errors_fail_fast_with_their_kind() {
    let cases = [
        (400, "invalid_request_error", ApiErrorKind::InvalidRequest),
        (401, "authentication_error", ApiErrorKind::Authentication),
        (403, "permission_error", ApiErrorKind::Permission),
        (404, "not_found_error", ApiErrorKind::NotFound),
        (413, "request_too_large", ApiErrorKind::RequestTooLarge),
    ];
    for (status, error_type, kind) in cases {
        let (err, server, notices) =
            send_failing([Reply::error(status, error_type, "nope")], 6).await;
        assert_eq!(err.kind, kind, "{status}");
        assert_eq!(err.status, Some(status));
        assert_eq!(server.request_count(), 1, "{status}");
        assert!(notices.is_empty(), "{status}");
        assert!(
            err.to_string().ends_with("[request-id: req_mock_0000]"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn an_unknown_model_says_so_in_one_line() {
    let (err, _, _) = send_failing([Reply::unknown_model("claude-nope")], 6).await;
    assert!(err.is_not_found());
    assert_eq!(
        err.to_string(),
        "not found (HTTP 404): model: claude-nope [request-id: req_mock_0000]"
    );
}

#[tokio::test]
async fn the_servers_wait_is_honoured() {
    let server = MockServer::start();
    server
        .push(
            Reply::rate_limited()
                .retry_after_ms(300)
                .retry_after_secs(30),
        )
        .push(Reply::overloaded().retry_after_secs(1))
        .push(Reply::text("ok"));
    let (client, notices) = mock_client(&server);
    let started = Instant::now();
    client.send(&hello(&client)).await.unwrap();
    let elapsed = started.elapsed();
    let waits: Vec<Duration> = notices.lock().unwrap().iter().map(|n| n.wait).collect();
    // retry-after-ms wins over retry-after; both win over the tiny backoff.
    assert_eq!(
        waits,
        vec![Duration::from_millis(300), Duration::from_secs(1)]
    );
    assert!(elapsed >= Duration::from_millis(1250), "{elapsed:?}");
    let first = &notices.lock().unwrap()[0];
    assert!(first.to_string().contains("retry 1/6 in 300ms"), "{first}");
}

#[tokio::test]
async fn x_should_retry_is_obeyed() {
    let (err, server, _) = send_failing([Reply::server_error().should_retry(false)], 6).await;
    assert_eq!(err.kind, ApiErrorKind::Server);
    assert_eq!(server.request_count(), 1);

    // A final status is never retried, even when the server says so.
    let final_status = Reply::error(400, "invalid_request_error", "try again").should_retry(true);
    let (err, server, _) = send_failing([final_status, Reply::text("ok")], 6).await;
    assert_eq!(err.kind, ApiErrorKind::InvalidRequest);
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn retries_run_out_with_the_typed_error() {
    let (err, server, notices) = send_failing((0..10).map(|_| Reply::overloaded()), 3).await;
    assert_eq!(err.kind, ApiErrorKind::Overloaded);
    assert_eq!(server.request_count(), 4);
    let attempts: Vec<u32> = notices.iter().map(|n| n.attempt).collect();
    assert_eq!(attempts, vec![1, 2, 3]);
    assert_eq!(server.queued(), 6);
}

#[tokio::test]
async fn the_idle_timeout_ends_a_stalled_stream_and_the_headers_timeout_a_slow_first_byte() {
    let server = MockServer::start();
    server
        // Proven first: before any reply, timeouts get one retry.
        .push(Reply::text("proven"))
        .push(Reply::text("this reply will stall halfway through").stall_mid_stream())
        .push(Reply::text("late").delay(Duration::from_secs(5)));
    server.respond_with(|_| Reply::text("fine"));
    let mut config = config(&server);
    config.idle_timeout = Duration::from_millis(500);
    config.headers_timeout = Duration::from_millis(500);
    let (client, notices) = client_with(config, 6);
    client.send(&hello(&client)).await.unwrap();
    let started = Instant::now();
    let response = client.send(&hello(&client)).await.unwrap();
    assert_eq!(response.texts(), vec!["fine"]);
    assert!(started.elapsed() >= Duration::from_millis(1000));
    let notices = notices.lock().unwrap();
    assert_eq!(notices[0].error.kind, ApiErrorKind::Timeout);
    assert!(
        notices[0].error.message.contains("stalled"),
        "{}",
        notices[0].error
    );
    assert_eq!(notices[1].error.kind, ApiErrorKind::Timeout);
    assert!(
        notices[1]
            .error
            .message
            .contains("no response headers within 500ms"),
        "{}",
        notices[1].error
    );
}

#[tokio::test]
async fn a_stall_with_no_retries_left_is_a_timeout() {
    let stalling = Reply::text("stalling").stall_mid_stream();
    let (err, _, _) = send_failing_with([stalling], 0, |config| {
        config.idle_timeout = Duration::from_millis(500);
    })
    .await;
    assert_eq!(err.kind, ApiErrorKind::Timeout);
    assert!(
        err.to_string().contains("[request-id: req_mock_0000]"),
        "{err}"
    );
}

#[tokio::test]
async fn garbage_is_survived() {
    let server = MockServer::start();
    server
        // Proven first, so the 200 garbage at the end is retried too.
        .push(Reply::text("proven"))
        .push(Reply::html(502))
        .push(Reply::raw(
            500,
            "application/octet-stream",
            vec![0xff, 0x00, 0x1b, b'[', b'2', b'J'],
        ))
        .push(Reply::raw(503, "application/json", "{\"error\": "))
        .push(Reply::raw(
            200,
            "text/event-stream",
            "data: {\"type\":\"message_start\"\n\nevent: x\n\n",
        ))
        .push(
            Reply::text("made it through the noise")
                .with_noise()
                .with_crlf(),
        );
    let (client, notices) = mock_client(&server);
    client.send(&hello(&client)).await.unwrap();
    let response = client.send(&hello(&client)).await.unwrap();
    assert_eq!(response.texts(), vec!["made it through the noise"]);
    let notices = notices.lock().unwrap();
    let lines: Vec<String> = notices.iter().map(|n| n.error.to_string()).collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[0].contains("502 Bad Gateway"), "{}", lines[0]);
    assert!(!lines[0].contains('<'), "{}", lines[0]);
    assert!(!lines[1].contains('\x1b'), "{}", lines[1]);
    assert!(
        lines[2].starts_with("server error (HTTP 503): unexpected response body"),
        "{}",
        lines[2]
    );
    assert_eq!(notices[3].error.kind, ApiErrorKind::UnexpectedAnswer);
    assert!(
        lines[3].starts_with("not a Messages API answer (HTTP 200, text/event-stream)"),
        "{}",
        lines[3]
    );
}

#[tokio::test]
async fn a_200_that_is_not_an_event_stream_says_so() {
    let portal = Reply::raw(200, "text/html", "<html>captive portal</html>");
    let (err, _, _) = send_failing([portal], 0).await;
    assert_eq!(err.kind, ApiErrorKind::UnexpectedAnswer);
    assert_eq!(
        err.to_string(),
        "not a Messages API answer (HTTP 200, text/html): no event stream in the body: \
         captive portal [request-id: req_mock_0000]"
    );
}
