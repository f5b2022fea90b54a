use super::*;
use serde_json::json;

fn item(id: &str, params: &str) -> BatchItem {
    BatchItem {
        custom_id: id.to_string(),
        params: Arc::from(params.as_bytes()),
    }
}

#[test]
fn custom_ids_follow_the_documented_pattern() {
    assert!(is_valid_custom_id("a"));
    assert!(is_valid_custom_id(&"f".repeat(64)));
    assert!(is_valid_custom_id("dir-loop_07"));
    for bad in ["", "has space", "dot.", "slash/", "é", &"f".repeat(65)] {
        assert!(!is_valid_custom_id(bad), "{bad:?}");
    }
}

#[test]
fn the_create_body_carries_params_verbatim() {
    let items = [item("a1", r#"{"model":"m","z":1,"a":2}"#), item("b2", "{}")];
    let body = create_body(&items);
    let value: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        value,
        json!({"requests": [
            {"custom_id": "a1", "params": {"model": "m", "z": 1, "a": 2}},
            {"custom_id": "b2", "params": {}}
        ]})
    );
    // The params bytes go in unchanged (the request digest is over them).
    let text = String::from_utf8(body).unwrap();
    assert!(
        text.contains(r#""params":{"model":"m","z":1,"a":2}"#),
        "{text}"
    );
    assert!(body_len_bound(&items) >= text.len());
}

fn body_len_bound(items: &[BatchItem]) -> usize {
    items.iter().map(BatchItem::encoded_len).sum::<usize>() + 16
}

#[test]
fn batches_are_cut_at_the_request_and_byte_limits() {
    let items: Vec<BatchItem> = (0..7)
        .map(|i| item(&format!("r{i}"), "{\"x\":1}"))
        .collect();
    let sizes = |batches: &[Vec<BatchItem>]| batches.iter().map(Vec::len).collect::<Vec<_>>();
    assert_eq!(
        sizes(&split_for_limits(items.clone(), 3, MAX_BYTES)),
        [3, 3, 1]
    );
    let one = items[0].encoded_len();
    assert_eq!(
        sizes(&split_for_limits(items.clone(), 100, one * 2)),
        [2, 2, 2, 1]
    );
    // Every batch body really fits the byte limit.
    for batch in split_for_limits(items.clone(), 100, one * 2) {
        assert!(create_body(&batch).len() <= one * 2 + 16);
    }
    // An item over the byte limit alone still goes, alone.
    let big = item("big", &format!("{{\"x\":\"{}\"}}", "y".repeat(100)));
    let mixed = vec![items[0].clone(), big.clone(), items[1].clone()];
    assert_eq!(sizes(&split_for_limits(mixed, 100, one * 2)), [1, 1, 1]);
    assert!(split_for_limits(Vec::new(), 10, 10).is_empty());
    // Order is kept.
    let flat: Vec<String> = split_for_limits(items.clone(), 2, MAX_BYTES)
        .into_iter()
        .flatten()
        .map(|i| i.custom_id)
        .collect();
    assert_eq!(flat, ["r0", "r1", "r2", "r3", "r4", "r5", "r6"]);
}

#[test]
fn result_lines_of_every_kind_are_read() {
    let line = |v: Value| parse_result_line(v.to_string().as_bytes());
    let ok = line(json!({"custom_id": "a", "result": {"type": "succeeded",
        "message": {"id": "msg_1", "type": "message", "content": []}}}))
    .unwrap();
    assert_eq!(ok.custom_id, "a");
    assert!(matches!(ok.outcome, BatchOutcome::Succeeded(ref m) if m["id"] == "msg_1"));
    let errored = line(
        json!({"custom_id": "b", "result": {"type": "errored", "error": {
        "type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"},
        "request_id": "req_9"}}}),
    )
    .unwrap();
    let BatchOutcome::Errored(err) = errored.outcome else {
        panic!("errored expected");
    };
    assert_eq!(err.kind, ApiErrorKind::Overloaded);
    assert_eq!(err.status, None);
    assert_eq!(err.request_id.as_deref(), Some("req_9"));
    assert_eq!(
        err.to_string(),
        "overloaded: Overloaded [request-id: req_9]"
    );
    let billing = line(
        json!({"custom_id": "b", "result": {"type": "errored", "error": {
        "type": "error", "error": {"type": "billing_error", "message": "no credit"}}}}),
    )
    .unwrap();
    assert!(matches!(billing.outcome, BatchOutcome::Errored(ref e)
        if e.final_cause() == Some(crate::ai::api::error::FinalCause::Billing)));
    let canceled = line(json!({"custom_id": "c", "result": {"type": "canceled"}})).unwrap();
    assert_eq!(canceled.outcome, BatchOutcome::Canceled);
    let expired = line(json!({"custom_id": "d", "result": {"type": "expired"}})).unwrap();
    assert_eq!(expired.outcome, BatchOutcome::Expired);
    for bad in [
        json!({"custom_id": "a b", "result": {"type": "expired"}}),
        json!({"result": {"type": "expired"}}),
        json!({"custom_id": "a", "result": {"type": "mystery"}}),
        json!({"custom_id": "a", "result": {"type": "succeeded"}}),
    ] {
        let err = line(bad.clone()).unwrap_err();
        assert_eq!(err.kind, ApiErrorKind::BrokenStream, "{bad}");
    }
    assert!(parse_result_line(b"not json").is_err());
}

#[test]
fn batch_objects_parse_and_unknown_statuses_count_as_going() {
    let batch: MessageBatch = serde_json::from_value(json!({
        "id": "msgbatch_1", "type": "message_batch", "processing_status": "ended",
        "request_counts": {"processing": 0, "succeeded": 2, "errored": 1, "canceled": 0, "expired": 0},
        "created_at": "2026-11-23T10:00:00Z", "expires_at": "2026-11-24T10:00:00Z",
        "ended_at": "2026-11-23T10:05:00Z", "results_url": "https://api.example/v1/messages/batches/msgbatch_1/results",
        "archived_at": null, "cancel_initiated_at": null
    }))
    .unwrap();
    assert!(batch.has_ended());
    assert_eq!(batch.request_counts.succeeded, 2);
    let later: MessageBatch = serde_json::from_value(
        json!({"id": "msgbatch_2", "processing_status": "paused_for_maintenance"}),
    )
    .unwrap();
    assert_eq!(later.processing_status, ProcessingStatus::Unknown);
    assert!(!later.has_ended());
}

#[test]
fn batch_ids_never_shape_the_url() {
    assert!(path_segment("msgbatch_01HkcTjaV5uDC8jWR4ZsDV8d").is_ok());
    for bad in ["", "../x", "a/b", "a?b", "a%2f"] {
        assert!(path_segment(bad).is_err(), "{bad:?}");
    }
}
