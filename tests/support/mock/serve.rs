//! The server's connection loop: accepting, reading each HTTP request,
//! preparing its answer (the rules, the queue or responder, the rendered
//! message or stream) and sending it.

use super::count_tokens;
use super::ollama::{self, Dialect};
use super::*;

/// The server thread: accept connections until shutdown.
pub(super) fn serve(
    listener: std::net::TcpListener,
    state: Arc<State>,
    mut stop: watch::Receiver<bool>,
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("mock: runtime");
    runtime.block_on(async move {
        let listener = TcpListener::from_std(listener).expect("mock: tokio listener");
        loop {
            tokio::select! {
                _ = stop.changed() => break,
                accepted = listener.accept() => {
                    if let Ok((sock, _)) = accepted {
                        state.connections.fetch_add(1, Ordering::SeqCst);
                        let _ = sock.set_nodelay(true);
                        tokio::spawn(serve_connection(sock, state.clone()));
                    }
                }
            }
        }
    });
    // Dropping the runtime drops every connection task, closing stalled
    // sockets too.
}

/// What to send for one request.
pub(super) enum Prepared {
    /// Nothing at all: hold the connection open until the client leaves.
    Silent,
    Http {
        status: u16,
        content_type: String,
        body: Vec<u8>,
        headers: Vec<(String, String)>,
    },
    Stream {
        rendered: wire::RenderedStream,
        headers: Vec<(String, String)>,
        rng: fastrand::Rng,
    },
}

async fn serve_connection(mut sock: TcpStream, state: Arc<State>) {
    let mut buf = Vec::new();
    while let Ok(Some(request)) = wire::read_request(&mut sock, &mut buf).await {
        let close = request.wants_close();
        let (prepared, wait, index) = prepare(&state, request);
        if let Some(index) = index {
            let mut hold = state.hold.subscribe();
            // An error is the server going away, which ends this task anyway.
            let _ = hold
                .wait_for(|from| from.is_none_or(|from| index < from))
                .await;
        }
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        let keep_going = match prepared {
            Prepared::Silent => {
                let mut sink = [0u8; 1024];
                use tokio::io::AsyncReadExt;
                while matches!(sock.read(&mut sink).await, Ok(n) if n > 0) {}
                false
            }
            Prepared::Http {
                status,
                content_type,
                body,
                headers,
            } => wire::write_plain(&mut sock, status, &content_type, &headers, &body)
                .await
                .is_ok(),
            Prepared::Stream {
                rendered,
                headers,
                mut rng,
            } => send_stream(&mut sock, rendered, &headers, &mut rng).await,
        };
        if !keep_going || close {
            return;
        }
    }
}

/// Send a stream; returns whether the connection can carry another request.
async fn send_stream(
    sock: &mut TcpStream,
    rendered: wire::RenderedStream,
    headers: &[(String, String)],
    rng: &mut fastrand::Rng,
) -> bool {
    if wire::write_stream_head(sock, headers).await.is_err() {
        return false;
    }
    let limit = match rendered.ending {
        Ending::Complete => rendered.frames.len(),
        Ending::DropAfter(n)
        | Ending::StallAfter(n)
        | Ending::PingsAfter(n, _)
        | Ending::DeltasAfter(n, _) => n,
    };
    let timing = rendered.timing;
    for (i, frame) in rendered.frames[..limit].iter().enumerate() {
        if let Some((after, total, every)) = timing.quiet
            && after == i
            && !ping_for(sock, total, every).await
        {
            return false;
        }
        if let Some(pace) = timing.pace {
            tokio::time::sleep(pace).await;
        }
        let sent = match timing.trickle {
            Some(every) => wire::write_trickle(sock, frame, every).await,
            None => wire::write_frame(sock, frame, rng).await,
        };
        if sent.is_err() {
            return false;
        }
    }
    match rendered.ending {
        Ending::Complete => wire::write_stream_end(sock).await.is_ok(),
        Ending::DropAfter(_) => false,
        Ending::StallAfter(_) => {
            // Silent but open until the client gives up and closes.
            let mut sink = [0u8; 1024];
            use tokio::io::AsyncReadExt;
            while matches!(sock.read(&mut sink).await, Ok(n) if n > 0) {}
            false
        }
        Ending::PingsAfter(_, every) => {
            while ping_for(sock, every, every).await {}
            false
        }
        Ending::DeltasAfter(_, every) => loop {
            tokio::time::sleep(every).await;
            if wire::write_frame(sock, &wire::dot_frame(0), rng)
                .await
                .is_err()
            {
                return false;
            }
        },
    }
}

/// Send a ping every `every` for `total`; false once the client has gone.
async fn ping_for(sock: &mut TcpStream, total: Duration, every: Duration) -> bool {
    let until = tokio::time::Instant::now() + total;
    let mut rng = fastrand::Rng::with_seed(0);
    while tokio::time::Instant::now() < until {
        tokio::time::sleep(every.min(until - tokio::time::Instant::now())).await;
        if wire::write_frame(sock, &wire::ping_frame(), &mut rng)
            .await
            .is_err()
        {
            return false;
        }
    }
    true
}

/// Record and check the request, pick its reply, and render it. Returns the
/// response, how long to wait before sending it, and the index it was
/// recorded at (none for the batch and token-counting endpoints, which are
/// never held).
fn prepare(state: &State, request: HttpRequest) -> (Prepared, Duration, Option<usize>) {
    let dialect = state.lock().dialect;
    let path = request.path.split('?').next();
    if matches!(dialect, Dialect::Ollama { .. })
        && (request.path.starts_with(batch::BATCHES_PATH)
            || path == Some(count_tokens::COUNT_TOKENS_PATH))
    {
        let reply = Reply::raw(404, "text/plain; charset=utf-8", ollama::NOT_FOUND);
        let latency = state.lock().latency;
        return (
            http(reply, ("request-id".into(), "req_mock_none".into())),
            latency,
            None,
        );
    }
    if request.path.starts_with(batch::BATCHES_PATH) {
        let (prepared, wait) = batch::handle(state, request);
        return (prepared, wait, None);
    }
    if request.path.split('?').next() == Some(count_tokens::COUNT_TOKENS_PATH) {
        let (prepared, wait) = count_tokens::handle(state, request);
        return (prepared, wait, None);
    }
    let body: Option<Value> = serde_json::from_slice(&request.body).ok();
    let problems = protocol::check_request(
        &request.method,
        &request.path,
        |name| request.header(name).map(str::to_string),
        body.as_ref(),
    );
    let mut inner = state.lock();
    let index = inner.requests.len();
    let request_id = ("request-id".to_string(), format!("req_mock_{index:04}"));
    let recorded = RecordedRequest {
        index,
        path: request.path.clone(),
        headers: request.headers.clone(),
        body: body.clone().unwrap_or(Value::Null),
        reported_usage: None,
        reported_cache_1h: 0,
        batch: None,
    };
    inner.requests.push(recorded.clone());
    state.arrived.notify_all();
    let latency = inner.latency;
    if !problems.is_empty() {
        for problem in &problems {
            inner
                .violations
                .push(format!("request #{index}: {problem}"));
        }
        let reply = Reply::error(
            400,
            "invalid_request_error",
            &format!("mock: {}", problems.join("; ")),
        );
        return (http(reply, request_id), latency, Some(index));
    }
    let checked = match (dialect, body.as_ref()) {
        (Dialect::Ollama { window }, Some(body)) => Some(Ok(ollama::accept(
            body,
            window,
            index,
            &mut inner.over_window,
        ))),
        (Dialect::Anthropic, body) => body.map(|b| inner.conversations.check(b)),
        (Dialect::Ollama { .. }, None) => None,
    };
    let accepted = match checked {
        Some(Ok(accepted)) => accepted,
        Some(Err(rejection)) => {
            if rejection.violation {
                inner
                    .violations
                    .push(format!("request #{index}: {}", rejection.message));
            }
            let reply = Reply::error(400, "invalid_request_error", &rejection.message);
            return (http(reply, request_id), latency, Some(index));
        }
        None => unreachable!("a body that is not JSON is a rule violation"),
    };
    let queued = inner.queue.pop_front();
    let responder = inner.responder.clone();
    drop(inner);

    // The responder runs without the lock: it may be slow or call back.
    let reply = queued.or_else(|| responder.map(|r| r(&recorded)));
    let Some(reply) = reply else {
        state
            .lock()
            .violations
            .push(format!("request #{index}: no reply scripted"));
        let reply = Reply::error(500, "api_error", "mock: no reply scripted for this request");
        return (http(reply, request_id), latency, Some(index));
    };
    let wait = latency + reply.delay;
    let mut stream = match &reply.body {
        ReplyBody::Stream(stream) => stream.clone(),
        ReplyBody::Http { .. } => return (http(reply, request_id), wait, Some(index)),
        ReplyBody::Silent => return (Prepared::Silent, wait, Some(index)),
    };
    let body = body.unwrap_or(Value::Null);
    let (rendered, rng) = render_message(state, &mut stream, &body, accepted, index);
    let mut headers = vec![request_id];
    headers.extend(reply.headers);
    (
        Prepared::Stream {
            rendered,
            headers,
            rng,
        },
        wait,
        Some(index),
    )
}

/// Render the scripted message `stream` answering request `index` (whose
/// body is `body`) as the API would: a thinking block first from a model
/// that thinks, usage from the simulated prompt cache, the reply
/// remembered for the thinking round-trip checks, and the usage recorded.
pub(super) fn render_message(
    state: &State,
    stream: &mut reply::StreamReply,
    body: &Value,
    accepted: thinking::Accepted,
    index: usize,
) -> (wire::RenderedStream, fastrand::Rng) {
    let has_thinking = stream
        .blocks
        .iter()
        .any(|b| matches!(b, MockBlock::Thinking(_) | MockBlock::RedactedThinking));
    let mut inner = state.lock();
    let ollama = inner.dialect;
    if accepted.thinks && !has_thinking && !stream.no_thinking {
        // The 5.x models omit the thinking text by default: only the
        // signature comes, and the tokens are billed all the same. A model
        // behind Ollama streams what it thought.
        let text = match ollama {
            Dialect::Anthropic => String::new(),
            Dialect::Ollama { .. } => ollama::THINKING_TEXT.to_string(),
        };
        stream.blocks.insert(0, MockBlock::Thinking(text));
    }
    let simulated = match ollama {
        Dialect::Anthropic => inner.cache.process(&accepted.prompt),
        // No prompt cache: every token of the prompt (as far as the window
        // goes) is plain input.
        Dialect::Ollama { window } => {
            prefix_cache::Simulated::plain(accepted.prompt.tokens().min(window))
        }
    };
    // A scripted usage is written at 5 minutes, as before lifetimes.
    let written_1h = match stream.usage {
        Some(_) => 0,
        None => simulated.written_1h,
    };
    let mut rng = fastrand::Rng::with_seed(
        inner
            .seed
            .wrapping_add((index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
    );
    let input = stream.usage.unwrap_or(simulated.usage);
    let model = body["model"].as_str().unwrap_or("claude-mock");
    let rendered = wire::render_stream(
        stream,
        index,
        model,
        wire::Billing {
            usage: input,
            written_1h,
            thinking_tokens: inner.thinking_tokens,
        },
        wire::Speaker {
            seal: &thinking::seal(accepted.key),
            ollama: matches!(ollama, Dialect::Ollama { .. }),
        },
        accepted.max_tokens,
        &mut rng,
    );
    inner.conversations.produced(
        accepted.key,
        thinking::produced_message(rendered.content.clone()),
        &rendered.stop_reason,
    );
    // As the client reads it: the writes split by lifetime, as reported.
    inner.requests[index].reported_usage = Some(Usage {
        output_tokens: rendered.output_tokens,
        cache_creation_1h_input_tokens: Some(written_1h),
        ..input
    });
    inner.requests[index].reported_cache_1h = written_1h;
    (rendered, rng)
}

pub(super) fn http(reply: Reply, request_id: (String, String)) -> Prepared {
    let mut headers = vec![request_id];
    headers.extend(reply.headers);
    match reply.body {
        ReplyBody::Http {
            status,
            content_type,
            body,
        } => Prepared::Http {
            status,
            content_type,
            body,
            headers,
        },
        ReplyBody::Stream(_) | ReplyBody::Silent => {
            unreachable!("streams and silence are handled by prepare")
        }
    }
}
