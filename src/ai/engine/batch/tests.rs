use super::*;
use crate::ai::api::batch::MAX_POLL;
use crate::ai::api::{Auth, ClientConfig, RetryPolicy};
use crate::cache::{Cache, CacheRoot};
use crate::money::Usd;

fn inner(tmp: &tempfile::TempDir) -> Inner {
    let root = CacheRoot::open(&tmp.path().join("root")).unwrap();
    let id = root.investigation_id(tmp.path(), false).unwrap().id;
    let cache = Cache::open(&root, &id, tmp.path()).unwrap();
    let config = ClientConfig::new(
        "http://127.0.0.1:9",
        Auth::ApiKey("k".into()),
        "claude-sonnet-5-5",
    );
    let client = Client::new(config)
        .unwrap()
        .with_retry_policy(RetryPolicy::new(2).with_backoff(Duration::ZERO, Duration::ZERO));
    let tracker = Arc::new(TokenTracker::new("claude-sonnet-5-5"));
    let replay_pricing = tracker.pricing().batch();
    Inner::new(
        client,
        BatchStore::open(&cache).unwrap(),
        tracker,
        &Progress::silent(),
        BatchTiming::default(),
        replay_pricing,
    )
}

type Answer = oneshot::Receiver<Result<Response, ApiError>>;

fn parked(digest: &str) -> (Parked, Answer) {
    let (reply, answer) = oneshot::channel();
    let parked = Parked {
        digest: digest.to_string(),
        params: Arc::from(&b"{}"[..]),
        failures: 0,
        not_before: None,
        reply,
    };
    (parked, answer)
}

#[test]
fn polls_start_soon_and_back_off_to_a_ceiling() {
    let timing = BatchTiming::default();
    assert_eq!(timing.first_poll, Duration::from_secs(5));
    let mut wait = timing.first_poll;
    let mut waits = vec![wait];
    for _ in 0..8 {
        wait = timing.next_wait(wait);
        waits.push(wait);
    }
    assert_eq!(waits[1], Duration::from_millis(7_500));
    assert!(waits.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(*waits.last().unwrap(), MAX_POLL);
    let fast = BatchTiming::starting_at(Duration::from_millis(20));
    assert_eq!(fast.max_poll, Duration::from_millis(240));
    assert_eq!(
        fast.next_wait(Duration::from_millis(200)),
        Duration::from_millis(240)
    );
    // A first wait past the ceiling is kept, never shortened.
    let slow = BatchTiming::starting_at(Duration::from_secs(120));
    assert_eq!(slow.max_poll, Duration::from_secs(120));
}

#[test]
fn a_request_is_named_by_its_exact_body() {
    let a = request_digest(br#"{"model":"m","messages":[]}"#);
    assert_eq!(a.len(), 64);
    assert!(crate::ai::api::batch::is_valid_custom_id(&a));
    assert_eq!(a, request_digest(br#"{"model":"m","messages":[]}"#));
    assert_ne!(a, request_digest(br#"{"model":"m","messages":[ ]}"#));
}

#[test]
fn a_request_without_its_max_tokens_has_one_loose_name() {
    let small = br#"{"model":"m","max_tokens":1024,"messages":[]}"#;
    let large = br#"{"model":"m","max_tokens":32768,"messages":[]}"#;
    assert_ne!(request_digest(small), request_digest(large));
    let loose = loose_digest(small).unwrap();
    assert_eq!(Some(loose.clone()), loose_digest(large));
    assert_ne!(
        Some(loose),
        loose_digest(br#"{"model":"n","max_tokens":1024,"messages":[]}"#)
    );
    assert_eq!(loose_digest(b"[1]"), None);
    assert_eq!(loose_digest(b"not json"), None);
    assert_eq!(loose_name(large).map(|(_, n)| n), Some(32768));
}

#[test]
fn a_request_with_other_caching_marks_has_the_same_loose_name() {
    let five = br#"{"model":"m","max_tokens":10,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"q","cache_control":{"type":"ephemeral"}}]}]}"#;
    let hour = br#"{"model":"m","max_tokens":10,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":[{"type":"text","text":"q"}]}]}"#;
    let none = br#"{"model":"m","max_tokens":10,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"text","text":"q"}]}]}"#;
    assert_ne!(request_digest(five), request_digest(hour));
    assert_eq!(loose_digest(five), loose_digest(hour));
    assert_eq!(loose_digest(five), loose_digest(none));
    let other = br#"{"model":"m","max_tokens":10,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"text","text":"r"}]}]}"#;
    assert_ne!(loose_digest(none), loose_digest(other));
}

#[test]
fn an_alias_leads_to_the_kept_digest_and_names_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let inner = inner(&tmp);
    let loose = loose_digest(br#"{"model":"m","messages":[]}"#).unwrap();
    let digest = request_digest(b"sent");
    assert_eq!(inner.store.alias(&loose), None);
    inner.store.store_alias(&loose, &digest, 512).unwrap();
    let alias = inner.store.alias(&loose).unwrap();
    assert_eq!(
        (alias.digest, alias.max_tokens),
        (digest.clone(), Some(512))
    );
    // An alias an earlier version wrote holds the digest alone.
    let path = inner
        .store
        .dir()
        .join(crate::cache::batch::ALIASES_DIR)
        .join(&loose);
    std::fs::write(&path, &digest).unwrap();
    assert_eq!(inner.store.alias(&loose).unwrap().max_tokens, None);
    assert!(inner.store.store_alias("../escape", &digest, 1).is_err());
    assert!(inner.store.store_alias(&loose, "not a digest", 1).is_err());
    assert_eq!(inner.store.alias("../escape"), None);
}

#[test]
fn a_round_goes_once_every_lane_waits() {
    let tmp = tempfile::tempdir().unwrap();
    let inner = inner(&tmp);
    // Nothing waits: no round.
    assert!(inner.take_round().is_none());
    // Alone (the survey, the plan, the synthesis): at once.
    let (first, _a) = parked("a");
    inner.queue().parked.push(first);
    assert_eq!(inner.take_round().map(|p| p.len()), Some(1));
    // Two lanes: one waiting is not enough, two are.
    inner.queue().lanes = 2;
    let (first, _a) = parked("a");
    inner.queue().parked.push(first);
    assert!(inner.take_round().is_none());
    let (second, _b) = parked("b");
    inner.queue().parked.push(second);
    let round = inner.take_round().unwrap();
    assert_eq!(round.len(), 2);
    // What waits for a later round keeps its place before newer requests.
    let (newer, _c) = parked("c");
    inner.queue().parked.push(newer);
    inner.requeue(round);
    let order: Vec<String> = inner
        .queue()
        .parked
        .iter()
        .map(|p| p.digest.clone())
        .collect();
    assert_eq!(order, ["a", "b", "c"]);
}

#[test]
fn failures_go_again_or_reach_the_conversation_by_the_retry_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let inner = inner(&tmp);
    let overloaded = ApiError::new(ApiErrorKind::Overloaded, "Overloaded");
    let billing = ApiError::new(ApiErrorKind::Billing, "no credit");
    let answer = Response {
        id: "msg_1".into(),
        ..Response::default()
    };
    let mut outcomes = Outcomes::new();
    outcomes.insert("ok".into(), Outcome::Answered(Box::new(answer.clone())));
    outcomes.insert("busy".into(), Outcome::Failed(overloaded.clone()));
    outcomes.insert("broke".into(), Outcome::Failed(billing.clone()));
    let (ok, mut ok_answer) = parked("ok");
    let (busy, mut busy_answer) = parked("busy");
    let (broke, mut broke_answer) = parked("broke");
    let (other, _other_answer) = parked("not-in-this-round");
    let later = rounds::deliver(&inner, vec![ok, busy, broke, other], &outcomes);
    assert_eq!(ok_answer.try_recv().unwrap().unwrap(), answer);
    assert_eq!(broke_answer.try_recv().unwrap().unwrap_err(), billing);
    assert!(
        busy_answer.try_recv().is_err(),
        "no answer yet: it goes again"
    );
    let again: Vec<(&str, u32, bool)> = later
        .iter()
        .map(|p| (p.digest.as_str(), p.failures, p.not_before.is_some()))
        .collect();
    assert_eq!(again, [("busy", 1, true), ("not-in-this-round", 0, false)]);
    assert_eq!(inner.stats().totals.retried, 1);
    // Past the policy's retries (2), the error reaches the conversation.
    let mut busy = later.into_iter().next().unwrap();
    busy.failures = 2;
    let later = rounds::deliver(&inner, vec![busy], &outcomes);
    assert!(later.is_empty());
    assert_eq!(busy_answer.try_recv().unwrap().unwrap_err(), overloaded);
}

#[test]
fn kept_answers_are_replayed_and_counted_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let inner = inner(&tmp);
    let digest = request_digest(b"question");
    assert!(inner.replay(&digest).is_none());
    let message = serde_json::json!({
        "id": "msg_k", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": "kept"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 1_000_000, "output_tokens": 0}
    });
    inner.store.store_result(&digest, &message).unwrap();
    let response = inner.replay(&digest).unwrap();
    assert_eq!(response.texts(), vec!["kept"]);
    let stats = inner.stats().clone();
    assert_eq!(stats.totals.replayed, 1);
    // A million input tokens on Sonnet 5.5: $1 at the batch prices the
    // earlier (batch) run paid, and nothing for this one.
    assert!(
        (stats.totals.replayed_cost_usd.as_f64() - 1.0).abs() < 1e-9,
        "{}",
        stats.totals.replayed_cost_usd
    );
    assert_eq!(inner.tracker.cost(), Usd::ZERO);
}

#[test]
fn a_request_in_flight_under_other_marks_is_waited_for_under_its_name() {
    let tmp = tempfile::tempdir().unwrap();
    let inner = inner(&tmp);
    let sent = br#"{"model":"m","max_tokens":10,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[]}"#;
    let asked = br#"{"model":"m","max_tokens":10,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[]}"#;
    let (loose, max_tokens) = loose_name(sent).unwrap();
    let sent_as = request_digest(sent);
    inner
        .store
        .store_alias(&loose, &sent_as, max_tokens)
        .unwrap();
    let (mut request, _answer) = parked(&request_digest(asked));
    request.params = Arc::from(&asked[..]);
    let carried: HashSet<&str> = [sent_as.as_str()].into();
    assert_eq!(
        inner.carried_name(&request, &carried),
        Some(sent_as.clone())
    );
    // Nothing in flight under that name: it goes under its own.
    assert_eq!(inner.carried_name(&request, &HashSet::new()), None);
    // Another max_tokens is another request.
    let other =
        br#"{"model":"m","max_tokens":20,"system":[{"type":"text","text":"s"}],"messages":[]}"#;
    request.params = Arc::from(&other[..]);
    assert_eq!(inner.carried_name(&request, &carried), None);
}
