//! The client's Message Batches calls against the mock's batch endpoint:
//! create, poll, results (out of order), cancel and expiry, and the rules
//! the mock enforces as the documented API does.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use luminos::ai::api::batch::{
    BatchItem, BatchOutcome, MessageBatch, ProcessingStatus, ResultLine, ResultsError,
};
use luminos::ai::api::stream::response_from_message_json;
use luminos::ai::api::{ApiErrorKind, Client, Message};
use luminos::ai::engine::batch::request_digest;

use super::{echo_server, hello, mock_client, tools};
use crate::support::mock::{MockServer, Reply};

/// A batch item for `request`, named by its digest as the engine names it.
fn item(client: &Client, request: &luminos::ai::api::MessagesRequest) -> BatchItem {
    let params = serde_json::to_vec(
        &client.batch_params(request, luminos::ai::api::caching::Reuse::Expected),
    )
    .unwrap();
    BatchItem {
        custom_id: request_digest(&params),
        params: Arc::from(params),
    }
}

fn question(client: &Client, n: usize) -> luminos::ai::api::MessagesRequest {
    client.request(
        "You are terse.",
        vec![Message::user_text(format!("question {n}"))],
        tools(),
    )
}

async fn until_ended(client: &Client, id: &str) -> MessageBatch {
    for _ in 0..400 {
        let batch = client.retrieve_batch(id).await.unwrap();
        if batch.has_ended() {
            return batch;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("batch {id} never ended");
}

async fn results(client: &Client, batch: &MessageBatch) -> Vec<ResultLine> {
    let mut lines = Vec::new();
    client
        .batch_results(batch, |line| {
            lines.push(line);
            Ok::<(), ()>(())
        })
        .await
        .map_err(|err| match err {
            ResultsError::Api(err) => err.to_string(),
            ResultsError::Handler(()) => "handler".to_string(),
        })
        .unwrap();
    lines
}

#[tokio::test]
async fn a_batch_is_created_polled_and_read_back_out_of_order() {
    let server = echo_server();
    server.set_batch_delay(Duration::from_millis(60));
    let (client, _) = mock_client(&server);
    let items: Vec<BatchItem> = (0..12)
        .map(|n| item(&client, &question(&client, n)))
        .collect();
    let created = client.create_batch(&items).await.unwrap();
    assert!(created.id.starts_with("msgbatch_"));
    assert_eq!(created.processing_status, ProcessingStatus::InProgress);
    assert_eq!(created.request_counts.processing, 12);
    assert!(created.results_url.is_none());
    let ended = until_ended(&client, &created.id).await;
    assert_eq!(ended.request_counts.succeeded, 12);
    let lines = results(&client, &ended).await;
    let order: Vec<&str> = lines.iter().map(|l| l.custom_id.as_str()).collect();
    let sent: Vec<&str> = items.iter().map(|i| i.custom_id.as_str()).collect();
    assert_ne!(order, sent, "the mock shuffles results, as the API may");
    let by_id: HashMap<&str, &ResultLine> =
        lines.iter().map(|l| (l.custom_id.as_str(), l)).collect();
    for (n, sent) in items.iter().enumerate() {
        let BatchOutcome::Succeeded(message) = &by_id[sent.custom_id.as_str()].outcome else {
            panic!("request {n} did not succeed");
        };
        let response = response_from_message_json(message.to_string().as_bytes()).unwrap();
        assert_eq!(response.texts(), vec![format!("echo question {n}")]);
        assert!(response.usage.input_tokens + response.usage.cache_creation_input_tokens > 0);
    }
    // What the mock processed: each request once, with our breakpoints
    // and no `stream`.
    let processed: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.batch.is_some())
        .collect();
    assert_eq!(processed.len(), 12);
    for request in &processed {
        assert!(request.body.get("stream").is_none(), "{}", request.body);
        assert!(request.body_contains("cache_control"));
    }
    let paths: Vec<String> = server
        .batch_calls()
        .into_iter()
        .map(|c| format!("{} {}", c.method, c.path))
        .collect();
    assert_eq!(paths[0], "POST /v1/messages/batches");
    assert!(paths.contains(&format!("GET /v1/messages/batches/{}/results", created.id)));
}

#[tokio::test]
async fn errors_cancels_and_expiries_come_back_per_request() {
    let server = MockServer::start();
    server.set_batch_delay(Duration::from_millis(400));
    server.process_at_once(2);
    server.push_all([Reply::text("first"), Reply::overloaded()]);
    server.respond_with(|_| Reply::text("later"));
    let (client, _) = mock_client(&server);
    let items: Vec<BatchItem> = (0..5)
        .map(|n| item(&client, &question(&client, n)))
        .collect();
    let batch = client.create_batch(&items).await.unwrap();
    // The first two are processed at once; the cancel stops the rest.
    let canceling = client.cancel_batch(&batch.id).await.unwrap();
    assert_eq!(canceling.processing_status, ProcessingStatus::Canceling);
    let ended = until_ended(&client, &batch.id).await;
    assert_eq!(
        (
            ended.request_counts.succeeded,
            ended.request_counts.errored,
            ended.request_counts.canceled
        ),
        (1, 1, 3)
    );
    let lines = results(&client, &ended).await;
    let outcome = |n: usize| {
        lines
            .iter()
            .find(|l| l.custom_id == items[n].custom_id)
            .unwrap()
            .outcome
            .clone()
    };
    assert!(matches!(outcome(0), BatchOutcome::Succeeded(_)));
    assert!(
        matches!(outcome(1), BatchOutcome::Errored(ref e) if e.kind == ApiErrorKind::Overloaded)
    );
    for n in 2..5 {
        assert_eq!(outcome(n), BatchOutcome::Canceled);
    }

    // An expiring batch: what was not processed by its delay is expired.
    server.expire_batches(&[1]);
    server.set_batch_delay(Duration::from_millis(30));
    let items: Vec<BatchItem> = (10..14)
        .map(|n| item(&client, &question(&client, n)))
        .collect();
    let batch = client.create_batch(&items).await.unwrap();
    let ended = until_ended(&client, &batch.id).await;
    assert_eq!(
        (ended.request_counts.succeeded, ended.request_counts.expired),
        (2, 2)
    );
    // Only the processed ones were billed.
    let billed = server
        .requests()
        .into_iter()
        .filter(|r| r.batch.as_ref().is_some_and(|b| b.batch_id == batch.id))
        .count();
    assert_eq!(billed, 2);
}

#[tokio::test]
async fn the_mock_holds_batches_to_the_documented_rules() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::text("ok"));
    let (client, _) = mock_client(&server);
    let good = item(&client, &hello(&client));
    // A custom_id outside ^[a-zA-Z0-9_-]{1,64}$, and one used twice.
    for items in [
        vec![BatchItem {
            custom_id: "has space".into(),
            ..good.clone()
        }],
        vec![BatchItem {
            custom_id: "x".repeat(65),
            ..good.clone()
        }],
        vec![good.clone(), good.clone()],
    ] {
        let err = client.create_batch(&items).await.unwrap_err();
        assert_eq!(err.kind, ApiErrorKind::InvalidRequest, "{err}");
        assert_eq!(server.take_violations().len(), 1);
    }
    // Over the request limit.
    server.set_batch_limits(2, 256 * 1024 * 1024);
    let three: Vec<BatchItem> = (0..3)
        .map(|n| item(&client, &question(&client, n)))
        .collect();
    assert!(client.create_batch(&three).await.is_err());
    assert_eq!(server.take_violations().len(), 1);
    server.set_batch_limits(100, 256 * 1024 * 1024);
    // Params are checked when processed, as on /v1/messages: `stream` set
    // in a batch is an errored request (and a client bug).
    let mut streamed = client.prepare(&hello(&client));
    streamed.stream = true;
    let bytes = serde_json::to_vec(&streamed).unwrap();
    let bad = BatchItem {
        custom_id: "streamed".into(),
        params: Arc::from(bytes),
    };
    let batch = client.create_batch(&[bad]).await.unwrap();
    let ended = until_ended(&client, &batch.id).await;
    let lines = results(&client, &ended).await;
    assert!(
        matches!(&lines[0].outcome, BatchOutcome::Errored(e) if e.kind == ApiErrorKind::InvalidRequest)
    );
    let violations = server.take_violations();
    assert!(
        violations
            .iter()
            .any(|v| v.contains("stream cannot be set")),
        "{violations:?}"
    );
    // An unknown batch is the API's 404.
    let err = client.retrieve_batch("msgbatch_nope").await.unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::NotFound);
}

#[tokio::test]
async fn results_are_read_from_the_base_url_only() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::text("ok"));
    let (client, _) = mock_client(&server);
    let batch = client
        .create_batch(&[item(&client, &hello(&client))])
        .await
        .unwrap();
    let mut ended = until_ended(&client, &batch.id).await;
    // A results_url on another origin is not where the key goes.
    ended.results_url = Some(format!(
        "http://127.0.0.1:9/v1/messages/batches/{}/results",
        batch.id
    ));
    assert_eq!(results(&client, &ended).await.len(), 1);
    assert!(
        server
            .batch_calls()
            .iter()
            .any(|c| c.path.ends_with("/results"))
    );
}
