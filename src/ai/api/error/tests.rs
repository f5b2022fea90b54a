//! Unit tests of the typed errors: statuses and kinds, messages from
//! API and non-API bodies, the server's wait and retry headers.

use super::*;

/// A header lookup over `list`, as the client passes one in (shared with
/// the cause tests).
pub(super) fn headers<'a>(list: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a str> + 'a {
    move |name| list.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)
}

#[test]
fn statuses_map_to_kinds() {
    use ApiErrorKind::*;
    let cases = [
        (400, InvalidRequest),
        (401, Authentication),
        (402, Billing),
        (403, Permission),
        (404, NotFound),
        (408, Server),
        (409, Server),
        (413, RequestTooLarge),
        (429, RateLimited),
        (500, Server),
        (502, Server),
        (503, Server),
        (529, Overloaded),
    ];
    for (status, kind) in cases {
        assert_eq!(ApiErrorKind::from_status(status, None), kind, "{status}");
    }
    assert_eq!(
        ApiErrorKind::from_status(422, Some("rate_limit_error")),
        RateLimited
    );
    assert_eq!(ApiErrorKind::from_status(418, None), InvalidRequest);
}

#[test]
fn json_error_body_gives_message_and_request_id() {
    let body = br#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}"#;
    let err = ApiError::from_http_response(
        429,
        headers(&[("request-id", "req_011abc"), ("retry-after", "20")]),
        body,
    );
    assert_eq!(err.kind, ApiErrorKind::RateLimited);
    assert_eq!(err.retry_after, Some(Duration::from_secs(20)));
    assert_eq!(
        err.to_string(),
        "rate limited (HTTP 429): Number of requests has exceeded your rate limit \
         (retry after 20s) [request-id: req_011abc]"
    );
}

#[test]
fn request_id_can_come_from_the_body() {
    let body = br#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"},"request_id":"req_body"}"#;
    let err = ApiError::from_http_response(404, headers(&[]), body);
    assert!(err.is_not_found());
    assert_eq!(
        err.to_string(),
        "not found (HTTP 404): model: claude-nope [request-id: req_body]"
    );
}

#[test]
fn html_pages_become_a_short_escaped_excerpt() {
    let body = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title>\
        <style>body{color:red}</style></head><body><h1>Bad \x1b[31mGateway</h1>\n\n\
        <p>cloudflare</p></body></html>";
    let err = ApiError::from_http_response(502, headers(&[]), body);
    assert_eq!(err.kind, ApiErrorKind::Server);
    assert_eq!(
        err.message,
        "unexpected response body: 502 Bad Gateway Bad \\x1b[31mGateway cloudflare"
    );
    assert!(!err.to_string().contains('\n'));
}

#[test]
fn garbage_bodies_survive() {
    let err = ApiError::from_http_response(500, headers(&[]), b"");
    assert_eq!(err.message, "empty response body");
    let err = ApiError::from_http_response(500, headers(&[]), &[0xff, 0xfe, b'o', b'k']);
    assert!(err.message.starts_with("unexpected response body: "));
    let long = "x".repeat(10_000);
    let err = ApiError::from_http_response(500, headers(&[]), long.as_bytes());
    assert!(err.message.chars().count() < 160, "{}", err.message);
    let err = ApiError::from_http_response(503, headers(&[]), br#"{"error":"upstream down"}"#);
    assert_eq!(err.message, "upstream down");
}

#[test]
fn retry_after_forms() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let wait = |list: &[(&str, &str)]| retry_after_from_headers(&headers(list), now);
    assert_eq!(
        wait(&[("retry-after-ms", "1500"), ("retry-after", "9")]),
        Some(Duration::from_millis(1500))
    );
    assert_eq!(wait(&[("retry-after", "3")]), Some(Duration::from_secs(3)));
    assert_eq!(
        wait(&[("retry-after", "0.25")]),
        Some(Duration::from_millis(250))
    );
    // 1_700_000_000 is Tue, 14 Nov 2023 22:13:20 GMT.
    assert_eq!(
        wait(&[("retry-after", "Tue, 14 Nov 2023 22:13:27 GMT")]),
        Some(Duration::from_secs(7))
    );
    assert_eq!(
        wait(&[("retry-after", "Tue, 14 Nov 2023 22:00:00 GMT")]),
        Some(Duration::ZERO)
    );
    assert_eq!(wait(&[("retry-after", "soon")]), None);
    assert_eq!(wait(&[("retry-after-ms", "-5")]), None);
    assert_eq!(wait(&[]), None);
}

#[test]
fn should_retry_header() {
    assert_eq!(should_retry_from_header(Some("true")), Some(true));
    assert_eq!(should_retry_from_header(Some(" False ")), Some(false));
    assert_eq!(should_retry_from_header(Some("maybe")), None);
    assert_eq!(should_retry_from_header(None), None);
}

#[test]
fn stream_error_types_stay_retryable() {
    use ApiErrorKind::*;
    assert_eq!(
        ApiErrorKind::from_stream_error_type("overloaded_error"),
        Overloaded
    );
    assert_eq!(ApiErrorKind::from_stream_error_type("api_error"), Server);
    assert_eq!(
        ApiErrorKind::from_stream_error_type("rate_limit_error"),
        RateLimited
    );
    assert_eq!(
        ApiErrorKind::from_stream_error_type("invalid_request_error"),
        BrokenStream
    );
    assert_eq!(
        ApiErrorKind::from_stream_error_type("brand_new"),
        BrokenStream
    );
}

#[test]
fn display_without_http_details() {
    let err = ApiError::new(ApiErrorKind::Timeout, "no data for 90s\nwhile streaming");
    assert_eq!(
        err.to_string(),
        "timed out: no data for 90s while streaming"
    );
    assert_eq!(format_wait(Duration::from_millis(1500)), "1.5s");
    assert_eq!(format_wait(Duration::from_millis(250)), "250ms");
}

/// What came back, as the one-line errors name it; a gateway's FastAPI
/// 404 reads as its `detail`.
#[test]
fn the_answer_names_status_and_content_type() {
    let err = ApiError::from_http_response(
        404,
        headers(&[("content-type", " application/json ")]),
        br#"{"detail":"Not Found"}"#,
    );
    assert_eq!(err.answer(), "HTTP 404, application/json");
    assert_eq!(err.message, "Not Found");
    assert!(!err.has_api_error_body());
    let api = ApiError::from_http_response(
        529,
        headers(&[]),
        br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    );
    assert!(api.has_api_error_body());
    assert_eq!(api.answer(), "HTTP 529");
    assert_eq!(
        ApiError::new(ApiErrorKind::Timeout, "x").answer(),
        "no HTTP answer"
    );
    let mut odd = ApiError::new(
        ApiErrorKind::UnexpectedAnswer,
        "no event stream in the body: hi",
    );
    odd.status = Some(200);
    odd.content_type = Some("".into());
    assert_eq!(
        odd.to_string(),
        "not a Messages API answer (HTTP 200, no content type): no event stream in the body: hi"
    );
}
