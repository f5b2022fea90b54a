//! One HTTP exchange with the endpoint: the fixed request headers, the
//! POST (or GET) under the headers timeout and the attempt's deadline, the
//! choice of reader for the answer, and how transport failures become
//! typed errors. Retrying is the caller's business
//! ([`Client::post`](super::Client::post)); reading a body once it has
//! started is [`super::reading`]'s.

use std::sync::atomic::Ordering;

use reqwest::header::{self, HeaderMap, HeaderValue};
use tokio::time::Instant;

use super::error::{Endpoint, format_wait};
use super::reading::{Answered, error_chain, header_str};
use super::{ANTHROPIC_VERSION, ApiError, ApiErrorKind, Auth, Client, MessagesRequest, Response};

impl Client {
    /// When an attempt that starts now must be over.
    pub(super) fn deadline(&self) -> Instant {
        Instant::now() + self.config.attempt_deadline
    }

    /// One HTTP exchange whose answer is read whole: `body` is posted as
    /// JSON, or the URL is fetched with `GET` when there is none. A status
    /// other than success becomes its typed error, naming `endpoint`.
    pub(super) async fn exchange(
        &self,
        url: reqwest::Url,
        body: Option<Vec<u8>>,
        endpoint: Endpoint,
        deadline: Instant,
    ) -> Result<reqwest::Response, ApiError> {
        let builder = match body {
            Some(body) => self.http.post(url).body(body),
            None => self.http.get(url),
        };
        let pending = builder.headers(self.headers.clone()).send();
        let timeout = self.config.headers_timeout;
        let until = (Instant::now() + timeout).min(deadline);
        let response = match tokio::time::timeout_at(until, pending).await {
            Err(_) => {
                return Err(ApiError::new(
                    ApiErrorKind::Timeout,
                    format!("no response headers within {}", format_wait(timeout)),
                )
                .at(endpoint));
            }
            Ok(Err(err)) => return Err(transport_error(&err).at(endpoint)),
            Ok(Ok(response)) => response,
        };
        self.endpoint.answered.store(true, Ordering::Relaxed);
        if !response.status().is_success() {
            return Err(self
                .error_from_response(response, deadline)
                .await
                .at(endpoint));
        }
        Ok(response)
    }

    /// The reply of a Messages API exchange whose headers are in, read
    /// within the attempt's `deadline`: a whole message or a stream, as its
    /// content type says.
    pub(super) async fn read_reply(
        &self,
        response: reqwest::Response,
        deadline: Instant,
    ) -> Result<Response, ApiError> {
        let request_id = header_str(response.headers(), "request-id")
            .or_else(|| header_str(response.headers(), "x-request-id"))
            .map(str::to_string);
        let answered = Answered {
            status: response.status().as_u16(),
            content_type: header_str(response.headers(), "content-type")
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase(),
        };
        let result = if answered.content_type.starts_with("application/json") {
            self.read_message_json(response, &answered, deadline).await
        } else {
            self.read_stream(response, &answered, deadline).await
        };
        result.map_err(|err| err.with_request_id(request_id).at(Endpoint::Messages))
    }
}

/// A request body as JSON bytes.
pub(super) fn encode(request: &MessagesRequest) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(request).map_err(|err| {
        ApiError::new(
            ApiErrorKind::InvalidRequest,
            format!("could not encode the request: {err}"),
        )
    })
}

/// The fixed headers of every request.
pub(super) fn request_headers(auth: &Auth) -> Result<HeaderMap, ApiError> {
    let invalid = |what: &str| {
        ApiError::new(
            ApiErrorKind::Authentication,
            format!("the {what} contains characters that cannot be sent in an HTTP header"),
        )
    };
    let mut headers = HeaderMap::new();
    match auth {
        Auth::ApiKey(key) => {
            let mut value = HeaderValue::from_str(key.trim()).map_err(|_| invalid("API key"))?;
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
        Auth::BearerToken(token) => {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", token.trim()))
                .map_err(|_| invalid("auth token"))?;
            value.set_sensitive(true);
            headers.insert(header::AUTHORIZATION, value);
        }
    }
    headers.insert(
        "anthropic-version",
        HeaderValue::from_static(ANTHROPIC_VERSION),
    );
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(headers)
}

/// Classify a failure to get a response at all. A connection that could
/// not be made, even for lack of time, is a connection failure: the
/// endpoint never heard the request.
fn transport_error(err: &reqwest::Error) -> ApiError {
    let kind = if err.is_timeout() && !err.is_connect() {
        ApiErrorKind::Timeout
    } else {
        ApiErrorKind::Connection
    };
    ApiError::new(kind, error_chain(err))
}
