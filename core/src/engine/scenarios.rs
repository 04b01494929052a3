//! Engine scenarios driven through `Engine::handle` with a manual clock:
//! the state machine's promises, without HTTP in the way.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::api::*;
use crate::clock::ManualClock;
use crate::error::ErrorCode;

struct Fixture {
    engine: Arc<Engine>,
    clock: ManualClock,
    ctx: RequestContext,
}

fn fixture() -> Fixture {
    let clock = ManualClock::new(1_700_000_000_000);
    Fixture {
        engine: Engine::new(Arc::new(clock.clone()), EngineConfig::default()),
        clock,
        ctx: RequestContext::new("us-east-1", "000000000000", "http://localhost:9324"),
    }
}

impl Fixture {
    async fn run(&self, r: Request) -> Result<Response, SqsError> {
        self.engine.handle(&self.ctx, r).await
    }

    async fn create(&self, name: &str, attrs: &[(&str, &str)]) -> String {
        let r = CreateQueueRequest {
            queue_name: Some(name.into()),
            attributes: attrs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            tags: BTreeMap::new(),
        };
        match self.run(Request::CreateQueue(r)).await.unwrap() {
            Response::CreateQueue(r) => r.queue_url,
            _ => unreachable!(),
        }
    }

    async fn send(
        &self,
        url: &str,
        body: &str,
        group: Option<&str>,
        dedup: Option<&str>,
    ) -> SendMessageResult {
        let r = SendMessageRequest {
            queue_url: Some(url.into()),
            message_body: Some(body.into()),
            message_group_id: group.map(String::from),
            message_deduplication_id: dedup.map(String::from),
            ..Default::default()
        };
        match self.run(Request::SendMessage(r)).await.unwrap() {
            Response::SendMessage(r) => r,
            _ => unreachable!(),
        }
    }

    async fn receive(&self, url: &str, max: i64) -> Vec<Message> {
        let r = ReceiveMessageRequest {
            queue_url: Some(url.into()),
            max_number_of_messages: Some(max),
            message_system_attribute_names: vec!["All".into()],
            ..Default::default()
        };
        match self.run(Request::ReceiveMessage(r)).await.unwrap() {
            Response::ReceiveMessage(r) => r.messages,
            _ => unreachable!(),
        }
    }

    async fn delete(&self, url: &str, handle: &str) -> Result<Response, SqsError> {
        self.run(Request::DeleteMessage(DeleteMessageRequest {
            queue_url: Some(url.into()),
            receipt_handle: Some(handle.into()),
        }))
        .await
    }

    async fn attr(&self, url: &str, name: &str) -> String {
        let r = GetQueueAttributesRequest {
            queue_url: Some(url.into()),
            attribute_names: vec![name.into()],
        };
        match self.run(Request::GetQueueAttributes(r)).await.unwrap() {
            Response::GetQueueAttributes(r) => r.attributes[name].clone(),
            _ => unreachable!(),
        }
    }

    fn advance(&self, secs: u64) {
        self.clock.advance(Duration::from_secs(secs));
    }
}

#[tokio::test]
async fn fifo_dedup_survives_delete_and_expires_after_five_minutes() {
    let f = fixture();
    let q = f.create("f.fifo", &[("FifoQueue", "true")]).await;
    let first = f.send(&q, "a", Some("g"), Some("d1")).await;
    let m = f.receive(&q, 1).await;
    f.delete(&q, &m[0].receipt_handle).await.unwrap();
    let dup = f.send(&q, "a", Some("g"), Some("d1")).await;
    assert_eq!(dup.message_id, first.message_id);
    assert_eq!(dup.sequence_number, first.sequence_number);
    assert!(f.receive(&q, 10).await.is_empty(), "duplicate not enqueued");
    f.advance(301);
    let again = f.send(&q, "a", Some("g"), Some("d1")).await;
    assert_ne!(again.message_id, first.message_id);
    assert!(again.sequence_number.as_deref().unwrap() > first.sequence_number.as_deref().unwrap());
    assert_eq!(first.sequence_number.unwrap().len(), 20);
}

#[tokio::test]
async fn fifo_dedup_scope_message_group() {
    let f = fixture();
    let q = f
        .create(
            "g.fifo",
            &[
                ("FifoQueue", "true"),
                ("DeduplicationScope", "messageGroup"),
            ],
        )
        .await;
    let a = f.send(&q, "x", Some("g1"), Some("same")).await;
    let b = f.send(&q, "x", Some("g2"), Some("same")).await;
    assert_ne!(a.message_id, b.message_id);
    assert_eq!(f.receive(&q, 10).await.len(), 2);
}

#[tokio::test]
async fn fifo_expired_handle_is_refused() {
    let f = fixture();
    let q = f
        .create(
            "h.fifo",
            &[("FifoQueue", "true"), ("ContentBasedDeduplication", "true")],
        )
        .await;
    f.send(&q, "x", Some("g"), None).await;
    let m = f.receive(&q, 1).await;
    f.advance(31);
    let e = f.delete(&q, &m[0].receipt_handle).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParameterValue);
    assert!(
        e.message
            .ends_with("Reason: The receipt handle has expired."),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn dead_letter_on_the_receive_after_max_receive_count() {
    let f = fixture();
    let dlq = f.create("dlq", &[]).await;
    let arn = f.attr(&dlq, "QueueArn").await;
    let policy = format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":3}}"#);
    let q = f
        .create(
            "src",
            &[("VisibilityTimeout", "600"), ("RedrivePolicy", &policy)],
        )
        .await;
    let sent = f.send(&q, "poison", None, None).await;
    for i in 1..=3 {
        let m = f.receive(&q, 1).await;
        assert_eq!(m[0].attributes["ApproximateReceiveCount"], i.to_string());
        f.advance(600);
    }
    assert!(
        f.receive(&q, 1).await.is_empty(),
        "the fourth attempt moves it"
    );
    assert_eq!(f.attr(&q, "ApproximateNumberOfMessages").await, "0");
    let m = f.receive(&dlq, 1).await;
    assert_eq!(m[0].message_id, sent.message_id.to_string());
    assert_eq!(m[0].attributes["ApproximateReceiveCount"], "4");
    assert_eq!(
        m[0].attributes["DeadLetterQueueSourceArn"],
        f.attr(&q, "QueueArn").await
    );
}

#[tokio::test]
async fn move_task_returns_each_message_to_its_source_at_the_rate() {
    let f = fixture();
    let dlq = f.create("dlq", &[]).await;
    let dlq_arn = f.attr(&dlq, "QueueArn").await;
    let policy = format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":"1"}}"#);
    let a = f
        .create(
            "a",
            &[("VisibilityTimeout", "0"), ("RedrivePolicy", &policy)],
        )
        .await;
    let b = f
        .create(
            "b",
            &[("VisibilityTimeout", "0"), ("RedrivePolicy", &policy)],
        )
        .await;
    let mut original_ids = Vec::new();
    for i in 0..2 {
        original_ids.push(
            f.send(&a, &format!("a{i}"), None, None)
                .await
                .message_id
                .to_string(),
        );
        original_ids.push(
            f.send(&b, &format!("b{i}"), None, None)
                .await
                .message_id
                .to_string(),
        );
    }
    for q in [&a, &b] {
        f.receive(q, 10).await;
        assert!(f.receive(q, 10).await.is_empty());
    }
    assert_eq!(f.attr(&dlq, "ApproximateNumberOfMessages").await, "4");
    let start = StartMessageMoveTaskRequest {
        source_arn: Some(dlq_arn.clone()),
        max_number_of_messages_per_second: Some(1),
        ..Default::default()
    };
    f.run(Request::StartMessageMoveTask(start.clone()))
        .await
        .unwrap();
    let again = f
        .run(Request::StartMessageMoveTask(start))
        .await
        .unwrap_err();
    assert!(again.message.starts_with("There is already a task running"));
    f.engine.run_move_tasks();
    assert_eq!(
        f.attr(&dlq, "ApproximateNumberOfMessages").await,
        "3",
        "one per second"
    );
    f.advance(1);
    f.engine.run_move_tasks();
    assert_eq!(f.attr(&dlq, "ApproximateNumberOfMessages").await, "2");
    f.advance(5);
    let list = ListMessageMoveTasksRequest {
        source_arn: Some(dlq_arn),
        max_results: Some(10),
    };
    let Response::ListMessageMoveTasks(list) =
        f.run(Request::ListMessageMoveTasks(list)).await.unwrap()
    else {
        unreachable!()
    };
    assert_eq!(list.results[0].status, "COMPLETED");
    assert_eq!(list.results[0].approximate_number_of_messages_moved, 4);
    let bodies = |ms: Vec<Message>| {
        let mut b: Vec<String> = ms.into_iter().map(|m| m.body).collect();
        b.sort();
        b
    };
    // Moved messages are new: receive count starts again.
    let got_a = f.receive(&a, 10).await;
    assert!(got_a.iter().all(|m| !original_ids.contains(&m.message_id)));
    assert!(got_a
        .iter()
        .all(|m| m.attributes["ApproximateReceiveCount"] == "1"));
    assert_eq!(bodies(got_a), vec!["a0", "a1"]);
    assert_eq!(bodies(f.receive(&b, 10).await), vec!["b0", "b1"]);
}

#[tokio::test]
async fn long_poll_wakes_on_visibility_expiry() {
    let f = fixture();
    let q = f.create("lp", &[]).await;
    f.send(&q, "x", None, None).await;
    let first = f.receive(&q, 1).await;
    let engine = f.engine.clone();
    let ctx = f.ctx.clone();
    let q2 = q.clone();
    let poll = tokio::spawn(async move {
        let r = ReceiveMessageRequest {
            queue_url: Some(q2),
            wait_time_seconds: Some(20),
            ..Default::default()
        };
        engine.handle(&ctx, Request::ReceiveMessage(r)).await
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!poll.is_finished());
    f.advance(30);
    let Response::ReceiveMessage(r) = tokio::time::timeout(Duration::from_secs(5), poll)
        .await
        .unwrap()
        .unwrap()
        .unwrap()
    else {
        unreachable!()
    };
    assert_eq!(r.messages.len(), 1);
    assert_ne!(r.messages[0].receipt_handle, first[0].receipt_handle);
}

/// A send that wakes a waiting long poll lets it answer first: on one
/// thread the send finishes only after the poll it woke has its message
/// (queue.rs, `let_woken_polls_run_first`).
#[tokio::test(flavor = "current_thread")]
async fn a_woken_long_poll_answers_before_the_send_that_woke_it() {
    let f = fixture();
    let q = f.create("first", &[]).await;
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (engine, ctx, url, log) = (f.engine.clone(), f.ctx.clone(), q.clone(), order.clone());
    let poll = tokio::spawn(async move {
        let r = ReceiveMessageRequest {
            queue_url: Some(url),
            wait_time_seconds: Some(20),
            ..Default::default()
        };
        let got = engine.handle(&ctx, Request::ReceiveMessage(r)).await;
        log.lock().unwrap().push("poll");
        got
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!poll.is_finished());
    let (engine, ctx, url, log) = (f.engine.clone(), f.ctx.clone(), q.clone(), order.clone());
    let send = tokio::spawn(async move {
        let r = SendMessageRequest {
            queue_url: Some(url),
            message_body: Some("now".into()),
            ..Default::default()
        };
        let sent = engine.handle(&ctx, Request::SendMessage(r)).await;
        log.lock().unwrap().push("send");
        sent
    });
    send.await.unwrap().unwrap();
    let Response::ReceiveMessage(r) = poll.await.unwrap().unwrap() else {
        unreachable!()
    };
    assert_eq!(r.messages[0].body, "now");
    assert_eq!(*order.lock().unwrap(), ["poll", "send"]);
}

/// A delayed send must tell every waiting poll when to look again: if only
/// one learnt of it and its client hung up, the message would sit unseen
/// by the others until their waits ended.
#[tokio::test]
async fn delayed_send_reaches_every_waiting_poll() {
    let f = fixture();
    let q = f.create("delayed-wake", &[]).await;
    let spawn_poll = || {
        let (engine, ctx, url) = (f.engine.clone(), f.ctx.clone(), q.clone());
        tokio::spawn(async move {
            let r = ReceiveMessageRequest {
                queue_url: Some(url),
                wait_time_seconds: Some(20),
                ..Default::default()
            };
            engine.handle(&ctx, Request::ReceiveMessage(r)).await
        })
    };
    let first = spawn_poll();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let second = spawn_poll();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let r = SendMessageRequest {
        queue_url: Some(q.clone()),
        message_body: Some("later".into()),
        delay_seconds: Some(5),
        ..Default::default()
    };
    f.run(Request::SendMessage(r)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    // The first poller's client hangs up.
    first.abort();
    f.advance(5);
    let got = tokio::time::timeout(Duration::from_secs(5), second)
        .await
        .expect("the remaining poll woke when the delay ended")
        .unwrap()
        .unwrap();
    let Response::ReceiveMessage(r) = got else {
        unreachable!()
    };
    assert_eq!(r.messages[0].body, "later");
}

/// Shortening a visibility timeout brings the message back sooner: a poll
/// already waiting must see it then, not at the time it had planned for.
#[tokio::test]
async fn shortened_visibility_wakes_a_waiting_poll_in_time() {
    let f = fixture();
    let q = f.create("shorten", &[("VisibilityTimeout", "30")]).await;
    f.send(&q, "x", None, None).await;
    let held = f.receive(&q, 1).await;
    let (engine, ctx, url) = (f.engine.clone(), f.ctx.clone(), q.clone());
    let poll = tokio::spawn(async move {
        let r = ReceiveMessageRequest {
            queue_url: Some(url),
            wait_time_seconds: Some(20),
            ..Default::default()
        };
        engine.handle(&ctx, Request::ReceiveMessage(r)).await
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    let change = ChangeMessageVisibilityRequest {
        queue_url: Some(q.clone()),
        receipt_handle: Some(held[0].receipt_handle.clone()),
        visibility_timeout: Some(5),
    };
    f.run(Request::ChangeMessageVisibility(change))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    f.advance(5);
    let Response::ReceiveMessage(r) = tokio::time::timeout(Duration::from_secs(5), poll)
        .await
        .expect("the poll returned when the shortened timeout ran out")
        .unwrap()
        .unwrap()
    else {
        unreachable!()
    };
    assert_eq!(r.messages.len(), 1, "returned with the message, not empty");
}

/// A journal stand-in: durable at once; records, for every queue-level
/// report, whether each queue it names was already visible to requests.
struct VisibilityProbe {
    engine: std::sync::OnceLock<std::sync::Weak<Engine>>,
    seen_visible: std::sync::Mutex<Vec<(String, bool)>>,
}

impl persist::Durability for VisibilityProbe {
    fn failing(&self) -> bool {
        false
    }

    fn wait(
        &self,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), SqsError>> + Send + '_>>
    {
        Box::pin(async { Ok(()) })
    }
}

impl events::Subscriber for VisibilityProbe {
    fn publish(&self, _events: &[events::Event]) {}

    fn queues_changed(&self, state: &persist::EngineState) {
        let engine = self.engine.get().and_then(|w| w.upgrade()).unwrap();
        let mut seen = self.seen_visible.lock().unwrap();
        for q in &state.queues {
            if seen.iter().any(|(name, _)| name == &q.name) {
                continue;
            }
            let key = QueueKey {
                region: q.region.clone(),
                account: q.account.clone(),
                name: q.name.clone(),
            };
            // Subscribers must not call into the engine; this peeks at the
            // map without waiting (a creator holding the queue's entry
            // shows as locked: not visible yet).
            let visible = engine.queues.try_get(&key).is_present();
            seen.push((q.name.clone(), visible));
        }
    }
}

/// A message sent to a just-created queue must never reach the journal
/// ahead of the queue itself (a crash would then drop it as an orphan):
/// the queue's first report is made before any request can see it.
#[tokio::test]
async fn a_new_queue_is_reported_to_the_journal_before_it_is_visible() {
    let f = fixture();
    let probe = Arc::new(VisibilityProbe {
        engine: std::sync::OnceLock::new(),
        seen_visible: std::sync::Mutex::new(Vec::new()),
    });
    let _ = probe.engine.set(Arc::downgrade(&f.engine));
    f.engine.subscribe(probe.clone());
    f.engine.set_durability(probe.clone());
    f.create("first", &[]).await;
    f.create("second.fifo", &[("FifoQueue", "true")]).await;
    let seen = probe.seen_visible.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            ("first".to_string(), false),
            ("second.fifo".to_string(), false)
        ],
        "each queue's first report came before it was visible"
    );
}
