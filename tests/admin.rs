//! The admin API through HTTP against the real server: health,
//! queues, peek (which must change nothing an SQS client sees), the clock
//! API driving every timer, dead-letter delete and restore, reset, the
//! admin token, --no-admin and LocalStack's peek in both protocols.
//!
//! Time moves only through `POST /_retsu/clock` (the test server's manual
//! clock is a frozen controllable clock), never by sleeping.

mod common;

use aws_sdk_sqs::types::{MessageAttributeValue, MessageSystemAttributeName, QueueAttributeName};
use common::*;
use reqwest::Method;
use retsu::config::Config;
use serde_json::{json, Value};

async fn clock(s: &TestServer, change: Value) -> Value {
    s.admin_post("/_retsu/clock", change).await
}

fn q(name: &str) -> String {
    format!("/_retsu/queues/{REGION}/{ACCOUNT}/{name}")
}

/// The admin path that restores message `id` from the dead-letter queue
/// `dlq`.
fn restore_path(dlq: &str, id: &str) -> String {
    format!("{}/messages/{id}/restore", q(dlq))
}

/// Asks for message `id` of the dead-letter queue `dlq` back.
async fn restore(s: &TestServer, dlq: &str, id: &str, body: Value) -> (u16, Value) {
    s.admin(Method::POST, &restore_path(dlq, id), Some(body))
        .await
}

/// Deletes message `id` of queue `name` through the admin API.
async fn delete_by_id(s: &TestServer, name: &str, id: &str) -> (u16, Value) {
    s.admin(Method::DELETE, &format!("{}/messages/{id}", q(name)), None)
        .await
}

fn error_code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or("")
}

#[tokio::test]
async fn health_and_queue_listing() {
    let s = TestServer::start().await;
    let dlq = s.create_queue("a-dlq").await;
    let src = s.create_source_queue("b-jobs", "a-dlq", 3, &[]).await;
    s.client
        .tag_queue()
        .queue_url(&src)
        .tags("team", "core")
        .send()
        .await
        .unwrap();
    s.create_fifo_queue("c.fifo", &[("ContentBasedDeduplication", "true")])
        .await;
    let west = s.new_client("eu-west-1");
    west.create_queue()
        .queue_name("b-jobs")
        .send()
        .await
        .unwrap();

    s.send(&src, "one").await;
    s.advance_secs(10);
    s.send(&src, "two").await;
    s.send_delayed(&src, "later", 60).await;
    s.client
        .receive_message()
        .queue_url(&src)
        .max_number_of_messages(1)
        .send()
        .await
        .unwrap();
    s.advance_secs(5);

    let health = s.admin_get("/_retsu/health").await;
    assert_eq!(health["status"], "ok");
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(health["queues"], 4);
    assert!(health["uptime_seconds"].is_u64());
    assert_eq!(health["clock"]["now_ms"], s.now_ms());
    assert_eq!(health["clock"]["frozen"], true);

    let list = s.admin_get("/_retsu/queues").await;
    let names: Vec<(String, String)> = list["queues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["region"].as_str().unwrap().to_string(),
                q["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("eu-west-1", "b-jobs"),
        ("us-east-1", "a-dlq"),
        ("us-east-1", "b-jobs"),
        ("us-east-1", "c.fifo"),
    ]
    .iter()
    .map(|(r, n)| (r.to_string(), n.to_string()))
    .collect();
    assert_eq!(names, expected);

    let jobs = s.admin_get(&q("b-jobs")).await;
    assert_eq!(jobs, list["queues"][2]);
    assert_eq!(jobs["url"], src);
    assert_eq!(jobs["arn"], arn("b-jobs"));
    assert_eq!(jobs["fifo"], false);
    assert_eq!(
        jobs["counts"],
        json!({"available": 1, "in_flight": 1, "delayed": 1})
    );
    assert_eq!(jobs["oldest_age_seconds"], 15);
    assert_eq!(
        jobs["dead_letter_queue"],
        json!({"arn": arn("a-dlq"), "region": REGION, "account": ACCOUNT, "name": "a-dlq", "max_receive_count": 3})
    );
    assert_eq!(jobs["dead_letter_sources"], json!([]));
    assert_eq!(jobs["tags"], json!({"team": "core"}));
    assert_eq!(jobs["attributes"]["VisibilityTimeout"], "30");
    assert_eq!(jobs["attributes"]["ApproximateNumberOfMessages"], "1");
    assert_eq!(jobs["attributes"]["QueueArn"], arn("b-jobs"));
    assert!(jobs["created_ms"].is_u64());

    let dead = s.admin_get(&q("a-dlq")).await;
    assert_eq!(dead["url"], dlq);
    assert_eq!(dead["oldest_age_seconds"], Value::Null);
    assert_eq!(dead["dead_letter_queue"], Value::Null);
    assert_eq!(
        dead["dead_letter_sources"],
        json!([{"arn": arn("b-jobs"), "region": REGION, "account": ACCOUNT, "name": "b-jobs"}])
    );
    let west_jobs = s
        .admin_get("/_retsu/queues/eu-west-1/000000000000/b-jobs")
        .await;
    assert_eq!(
        west_jobs["url"],
        format!("{}/queue/eu-west-1/{ACCOUNT}/b-jobs", s.endpoint)
    );
    assert_eq!(s.admin_get(&q("c.fifo")).await["fifo"], true);

    let (status, body) = s.admin(Method::GET, &q("nope"), None).await;
    assert_eq!((status, error_code(&body)), (404, "NotFound"));
    let (status, body) = s.admin(Method::GET, "/_retsu/nothing/here", None).await;
    assert_eq!((status, error_code(&body)), (404, "NotFound"));
    let (status, body) = s.admin(Method::PUT, "/_retsu/health", None).await;
    assert_eq!((status, error_code(&body)), (404, "NotFound"));
}

#[tokio::test]
async fn peek_shows_every_state_in_order_and_changes_nothing() {
    let s = TestServer::start().await;
    let url = s.create_queue("peeked").await;
    let mut attrs = std::collections::HashMap::new();
    attrs.insert("color".to_string(), string_attr("blue"));
    attrs.insert("blob".to_string(), binary_attr("Binary", b"\x00\x01"));
    s.client
        .send_message()
        .queue_url(&url)
        .message_body("first")
        .set_message_attributes(Some(attrs))
        .send()
        .await
        .unwrap();
    s.advance_ms(1);
    s.send(&url, "second").await;
    s.advance_ms(1);
    s.send(&url, "third").await;
    s.send_delayed(&url, "delayed", 30).await;
    // "first" goes in flight for 60 s.
    let received = s
        .client
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(60)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap();
    assert_eq!(bodies(&received), ["first"]);
    let t0 = s.now_ms();

    let all = s.peek("peeked", "").await;
    assert_eq!(all["truncated"], false);
    let msgs = all["messages"].as_array().unwrap();
    let listed: Vec<(&str, &str)> = msgs
        .iter()
        .map(|m| (m["body"].as_str().unwrap(), m["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [
            ("second", "available"),
            ("third", "available"),
            ("first", "inflight"),
            ("delayed", "delayed")
        ]
    );
    let first = &msgs[2];
    assert_eq!(first["message_id"], received[0].message_id().unwrap());
    assert_eq!(first["receive_count"], 1);
    assert_eq!(first["visible_at_ms"], t0 + 60_000);
    assert_eq!(first["first_receive_ms"], t0);
    assert_eq!(first["md5_of_body"], md5_hex(b"first"));
    assert_eq!(
        first["message_attributes"],
        json!({"blob": {"DataType": "Binary", "BinaryValue": "AAE="},
               "color": {"DataType": "String", "StringValue": "blue"}})
    );
    assert_eq!(first["group_id"], Value::Null);
    assert_eq!(first["sequence_number"], Value::Null);
    assert_eq!(
        first["expires_ms"],
        first["enqueued_ms"].as_u64().unwrap() + 345_600_000
    );
    assert_eq!(msgs[0]["visible_at_ms"], Value::Null);
    assert_eq!(msgs[0]["receive_count"], 0);
    assert_eq!(msgs[3]["visible_at_ms"], t0 + 30_000);

    // Filters, limits and truncation.
    let one = s.peek("peeked", "?state=available&limit=1").await;
    assert_eq!(one["messages"].as_array().unwrap().len(), 1);
    assert_eq!(one["messages"][0]["body"], "second");
    assert_eq!(one["truncated"], true);
    let inflight = s.peek("peeked", "?state=inflight").await;
    assert_eq!(inflight["messages"][0]["body"], "first");
    assert_eq!(inflight["truncated"], false);
    let delayed = s.peek("peeked", "?state=delayed").await;
    assert_eq!(delayed["messages"][0]["body"], "delayed");
    for bad in ["?state=gone", "?limit=0", "?limit=10001", "?limit=ten"] {
        let (status, body) = s
            .admin(Method::GET, &format!("{}/messages{bad}", q("peeked")), None)
            .await;
        assert_eq!((status, error_code(&body)), (400, "BadRequest"), "{bad}");
    }
    let by_id = s
        .admin_get(&format!(
            "{}/messages/{}",
            q("peeked"),
            first["message_id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(&by_id, first);

    // None of it changed what SQS clients see: same counts, and the next
    // receives get "second" and "third" for the first time, in order.
    assert_eq!(s.counts(&url).await, (2, 1, 1));
    let got = s.receive(&url, 10).await;
    assert_eq!(bodies(&got), ["second", "third"]);
    assert!(got.iter().all(|m| receive_count(m) == "1"));
    // And "first" stays hidden until its own deadline (the others come
    // back, or out of their delay, at 30 s).
    s.advance_ms(59_999);
    let mut others = bodies(&s.receive(&url, 10).await)
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    others.sort();
    assert_eq!(others, ["delayed", "second", "third"]);
    s.advance_ms(1);
    let again = s.receive_one(&url).await;
    assert_eq!(again.body(), Some("first"));
    assert_eq!(receive_count(&again), "2");
}

#[tokio::test]
async fn peek_a_fifo_queue_in_receive_order() {
    let s = TestServer::start().await;
    let url = s.create_fifo_queue("order.fifo", &[]).await;
    s.send_to_group(&url, "a1", "a", Some("1")).await;
    s.send_to_group(&url, "b1", "b", Some("2")).await;
    s.send_to_group(&url, "a2", "a", Some("3")).await;
    s.send_to_group(&url, "b2", "b", Some("4")).await;
    let m = s
        .client
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(1)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap();
    assert_eq!(bodies(&m), ["a1"]);
    let all = s.peek("order.fifo", "").await;
    let listed: Vec<(&str, &str)> = all["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["body"].as_str().unwrap(), m["state"].as_str().unwrap()))
        .collect();
    // Group b is receivable; a2 waits behind a1 in flight.
    assert_eq!(
        listed,
        [
            ("b1", "available"),
            ("b2", "available"),
            ("a2", "available"),
            ("a1", "inflight")
        ]
    );
    let b1 = &all["messages"][0];
    assert_eq!(b1["group_id"], "b");
    assert_eq!(b1["dedup_id"], "2");
    assert!(b1["sequence_number"].as_str().unwrap().len() >= 20);
    let got = s.receive(&url, 10).await;
    assert_eq!(bodies(&got), ["b1", "b2"]);
}

#[tokio::test]
async fn clock_api_freezes_advances_sets_and_resumes() {
    let s = TestServer::start().await;
    let now = s.now_ms();
    let shown = s.admin_get("/_retsu/clock").await;
    assert_eq!(shown["now_ms"], now);
    assert_eq!(shown["frozen"], true);
    assert!(shown["now"].as_str().unwrap().ends_with('Z'));

    let after = clock(&s, json!({"advance": "1h30m"})).await;
    assert_eq!(after["now_ms"], now + 5_400_000);
    assert_eq!(s.now_ms(), now + 5_400_000);
    assert_eq!(
        clock(&s, json!({"advance": 250})).await["now_ms"],
        now + 5_400_250
    );
    assert_eq!(
        clock(&s, json!({"advance": "2d"})).await["now_ms"],
        now + 5_400_250 + 172_800_000
    );

    let set = clock(&s, json!({"set": "2099-01-01T00:00:00Z"})).await;
    assert_eq!(set["now"], "2099-01-01T00:00:00.000Z");
    assert_eq!(set["now_ms"], 4_070_908_800_000u64);

    for bad in [
        json!({"set": "2020-01-01T00:00:00Z"}),
        json!({"set": "tomorrow"}),
        json!({"advance": "5 minutes"}),
        json!({"advance": -1}),
        json!({"freeze": true, "advance": "1s"}),
        json!({}),
        json!({"rewind": "1s"}),
    ] {
        let (status, body) = s
            .admin(Method::POST, "/_retsu/clock", Some(bad.clone()))
            .await;
        assert_eq!((status, error_code(&body)), (400, "BadRequest"), "{bad}");
    }
    let raw = s
        .raw(
            s.http
                .post(format!("{}/_retsu/clock", s.endpoint))
                .body("{not json"),
        )
        .await;
    assert_eq!(raw.status, 400);
    assert_eq!(s.now_ms(), 4_070_908_800_000u64, "refused changes left it");

    let running = clock(&s, json!({"resume": true})).await;
    assert_eq!(running["frozen"], false);
    assert!(running["now_ms"].as_u64().unwrap() >= 4_070_908_800_000u64);
    assert!(running["offset_ms"].as_i64().unwrap() > 0);
    let frozen = clock(&s, json!({"freeze": true})).await;
    assert_eq!(frozen["frozen"], true);
    assert_eq!(
        s.admin_get("/_retsu/clock").await["now_ms"],
        frozen["now_ms"]
    );
}

#[tokio::test]
async fn clock_drives_delays() {
    let s = TestServer::start().await;
    let url = s
        .create_queue_with("delays", &[("DelaySeconds", "45")])
        .await;
    s.send(&url, "d").await;
    clock(&s, json!({"advance": "44s"})).await;
    assert!(s.receive(&url, 1).await.is_empty());
    assert_eq!(s.counts(&url).await, (0, 0, 1));
    clock(&s, json!({"advance": "1s"})).await;
    assert_eq!(s.receive_one(&url).await.body(), Some("d"));
}

#[tokio::test]
async fn clock_advance_wakes_a_waiting_long_poll() {
    let s = TestServer::start().await;
    let url = s.create_queue("wake").await;
    s.send_delayed(&url, "soon", 600).await;
    let poll = spawn_receive(&s.client, &url, Some(20));
    settle().await;
    assert!(!poll.is_finished());
    clock(&s, json!({"advance": "10m"})).await;
    let got = finish(poll, 5).await;
    assert_eq!(bodies(&got), ["soon"]);
}

#[tokio::test]
async fn clock_drives_visibility_timeouts() {
    let s = TestServer::start().await;
    let url = s
        .create_queue_with("vis", &[("VisibilityTimeout", "30")])
        .await;
    s.send(&url, "v").await;
    assert_eq!(receive_count(&s.receive_one(&url).await), "1");
    clock(&s, json!({"advance": "29s"})).await;
    assert!(s.receive(&url, 1).await.is_empty());
    clock(&s, json!({"advance": 1000})).await;
    assert_eq!(receive_count(&s.receive_one(&url).await), "2");
}

#[tokio::test]
async fn clock_drives_four_day_retention_in_milliseconds() {
    let s = TestServer::start().await;
    let url = s.create_queue("retained").await;
    s.send(&url, "old").await;
    let started = std::time::Instant::now();
    clock(&s, json!({"advance": "3d23h59m59s"})).await;
    assert_eq!(s.counts(&url).await, (1, 0, 0));
    clock(&s, json!({"advance": "1s"})).await;
    assert_eq!(s.counts(&url).await, (0, 0, 0));
    assert!(s.peek("retained", "").await["messages"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
}

#[tokio::test]
async fn clock_drives_the_dedup_window() {
    let s = TestServer::start().await;
    let url = s.create_fifo_queue("dedup.fifo", &[]).await;
    let first = s.send_to_group(&url, "x", "g", Some("same")).await;
    clock(&s, json!({"advance": "4m59s"})).await;
    let dup = s.send_to_group(&url, "x", "g", Some("same")).await;
    assert_eq!(dup.message_id(), first.message_id());
    clock(&s, json!({"advance": "1s"})).await;
    let fresh = s.send_to_group(&url, "x", "g", Some("same")).await;
    assert_ne!(fresh.message_id(), first.message_id());
    assert_eq!(s.counts(&url).await.0, 2);
}

#[tokio::test]
async fn clock_drives_move_task_rate() {
    let s = TestServer::start().await;
    let dlq = s.create_queue("rate-dlq").await;
    let src = s.create_source_queue("rate-src", "rate-dlq", 1, &[]).await;
    for i in 0..5 {
        s.send(&dlq, &format!("m{i}")).await;
    }
    s.client
        .start_message_move_task()
        .source_arn(arn("rate-dlq"))
        .destination_arn(arn("rate-src"))
        .max_number_of_messages_per_second(2)
        .send()
        .await
        .unwrap();
    let moved = || async {
        s.client
            .list_message_move_tasks()
            .source_arn(arn("rate-dlq"))
            .send()
            .await
            .unwrap()
            .results
            .unwrap()[0]
            .approximate_number_of_messages_moved
    };
    assert_eq!(moved().await, 2, "the first second's worth at once");
    clock(&s, json!({"advance": "999ms"})).await;
    assert_eq!(moved().await, 2);
    clock(&s, json!({"advance": "1ms"})).await;
    assert_eq!(moved().await, 4);
    // The background runner wakes on the advance by itself: nothing but
    // GetQueueAttributes is called (it does not run move tasks).
    clock(&s, json!({"advance": "1s"})).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while s.counts(&src).await.0 < 5 {
        assert!(
            std::time::Instant::now() < deadline,
            "the move task did not wake on the clock advance"
        );
        tokio::task::yield_now().await;
    }
    assert_eq!(moved().await, 5);
    assert_eq!(s.counts(&dlq).await, (0, 0, 0));
}

#[tokio::test]
async fn clock_drives_the_strict_sixty_second_rules() {
    let s = TestServer::start_strict().await;
    let url = s.create_queue("strict").await;
    s.client.purge_queue().queue_url(&url).send().await.unwrap();
    let err = s
        .client
        .purge_queue()
        .queue_url(&url)
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        aws_sdk_sqs::error::ProvideErrorMetadata::code(&err.into_service_error()),
        Some("AWS.SimpleQueueService.PurgeQueueInProgress")
    );
    clock(&s, json!({"advance": "60s"})).await;
    s.client.purge_queue().queue_url(&url).send().await.unwrap();

    s.delete_queue(&url).await;
    let again = s.client.create_queue().queue_name("strict").send().await;
    assert!(again.is_err(), "QueueDeletedRecently within 60 s");
    clock(&s, json!({"advance": "1m"})).await;
    s.create_queue("strict").await;
}

/// Sends `body` to `src` (maxReceiveCount 1) and receives it twice, the
/// second receive moving it to the dead-letter queue. Returns its id.
async fn dead_letter(s: &TestServer, src: &str, body: &str) -> String {
    let mut attrs = std::collections::HashMap::new();
    attrs.insert("kind".to_string(), string_attr("poison"));
    let id = s
        .client
        .send_message()
        .queue_url(src)
        .message_body(body)
        .set_message_attributes(Some(attrs))
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();
    assert_eq!(s.receive_one(src).await.message_id(), Some(id.as_str()));
    clock(s, json!({"advance": "30s"})).await;
    assert!(s.receive(src, 10).await.is_empty(), "moved on this receive");
    id
}

async fn redrive_pair(s: &TestServer) -> (String, String) {
    let dlq = s.create_queue("dl-dlq").await;
    let src = s.create_source_queue("dl-src", "dl-dlq", 1, &[]).await;
    (src, dlq)
}

#[tokio::test]
async fn restore_a_dead_letter_to_its_source() {
    let s = TestServer::start().await;
    let (src, dlq) = redrive_pair(&s).await;
    let id = dead_letter(&s, &src, "poison").await;
    let other = s.send(&dlq, "bystander").await;

    let listed = s.peek("dl-dlq", "").await;
    let dead = &listed["messages"][0];
    assert_eq!(dead["message_id"], id.as_str());
    assert_eq!(dead["dead_letter_source_arn"], arn("dl-src"));
    assert_eq!(dead["receive_count"], 1);

    let restored = s.admin_post(&restore_path("dl-dlq", &id), json!({})).await;
    assert_eq!(
        restored,
        json!({"restored": true, "queue": {"region": REGION, "account": ACCOUNT, "name": "dl-src", "arn": arn("dl-src")}})
    );
    // Back in its source, same id, body and attributes, received afresh.
    let back = s.receive_one(&src).await;
    assert_eq!(back.message_id(), Some(id.as_str()));
    assert_eq!(back.body(), Some("poison"));
    assert_eq!(receive_count(&back), "1");
    assert_eq!(
        back.message_attributes().unwrap()["kind"].string_value(),
        Some("poison")
    );
    assert_eq!(
        sys(&back, MessageSystemAttributeName::DeadLetterQueueSourceArn),
        None
    );
    // The other dead letter is untouched.
    let left = s.peek("dl-dlq", "").await;
    assert_eq!(left["messages"].as_array().unwrap().len(), 1);
    assert_eq!(left["messages"][0]["message_id"], other.as_str());

    // A message with no source needs "to"; "to" takes a URL or an ARN.
    let path = restore_path("dl-dlq", &other);
    let (status, body) = restore(&s, "dl-dlq", &other, json!({})).await;
    assert_eq!((status, error_code(&body)), (409, "Conflict"));
    let (status, body) = restore(&s, "dl-dlq", &other, json!({"to": arn("missing")})).await;
    assert_eq!((status, error_code(&body)), (404, "NotFound"));
    let moved = s.admin_post(&path, json!({"to": src})).await;
    assert_eq!(moved["queue"]["name"], "dl-src");
    assert_eq!(s.counts(&dlq).await, (0, 0, 0));

    let (status, body) = restore(&s, "dl-dlq", &id, json!({})).await;
    assert_eq!((status, error_code(&body)), (404, "NotFound"));
}

#[tokio::test]
async fn restore_to_a_deleted_source_is_a_conflict() {
    let s = TestServer::start().await;
    let (src, _dlq) = redrive_pair(&s).await;
    let id = dead_letter(&s, &src, "orphan").await;
    s.delete_queue(&src).await;
    let (status, body) = restore(&s, "dl-dlq", &id, json!({})).await;
    assert_eq!((status, error_code(&body)), (409, "Conflict"), "{body}");
    assert_eq!(s.peek("dl-dlq", "").await["messages"][0]["message_id"], id);
}

#[tokio::test]
async fn restore_into_a_fifo_queue_keeps_the_group() {
    let s = TestServer::start().await;
    let dlq = s.create_fifo_queue("f-dlq.fifo", &[]).await;
    let src = s
        .create_source_queue("f-src.fifo", "f-dlq.fifo", 1, &[("FifoQueue", "true")])
        .await;
    let sent = s.send_to_group(&src, "fx", "grp", Some("d1")).await;
    let id = sent.message_id().unwrap().to_string();
    s.receive_one(&src).await;
    clock(&s, json!({"advance": "30s"})).await;
    assert!(s.receive(&src, 10).await.is_empty());
    let in_dlq = s.peek("f-dlq.fifo", "").await["messages"][0].clone();
    s.admin_post(&restore_path("f-dlq.fifo", &id), json!({}))
        .await;
    let back = s.receive_one(&src).await;
    assert_eq!(back.message_id(), Some(id.as_str()));
    assert_eq!(
        sys(&back, MessageSystemAttributeName::MessageGroupId).as_deref(),
        Some("grp")
    );
    let seq = sys(&back, MessageSystemAttributeName::SequenceNumber).unwrap();
    // A new sequence number, later than the original send's.
    assert!(in_dlq["sequence_number"].is_string());
    assert!(seq.as_str() > sent.sequence_number().unwrap());
    assert_eq!(s.counts(&dlq).await, (0, 0, 0));
}

#[tokio::test]
async fn delete_one_message_by_id_in_any_state() {
    let s = TestServer::start().await;
    let (src, dlq) = redrive_pair(&s).await;
    let poison = dead_letter(&s, &src, "poison").await;
    let keep = s.send(&dlq, "keep").await;
    let (status, body) = delete_by_id(&s, "dl-dlq", &poison).await;
    assert_eq!((status, body), (200, json!({"deleted": true})));
    let left = s.peek("dl-dlq", "").await;
    assert_eq!(left["messages"].as_array().unwrap().len(), 1);
    assert_eq!(left["messages"][0]["message_id"], keep.as_str());
    let (status, body) = delete_by_id(&s, "dl-dlq", &poison).await;
    assert_eq!((status, error_code(&body)), (404, "NotFound"));

    // In flight: deleted without its receipt handle; the handle then
    // deletes nothing.
    let url = s.create_queue("busy").await;
    let id = s.send(&url, "busy").await;
    let handle = s.receive_one(&url).await.receipt_handle.unwrap();
    let (status, _) = delete_by_id(&s, "busy", &id).await;
    assert_eq!(status, 200);
    assert_eq!(s.counts(&url).await, (0, 0, 0));
    s.delete_message(&url, &handle).await;
    let (status, body) = delete_by_id(&s, "busy", "not-a-uuid").await;
    assert_eq!((status, error_code(&body)), (404, "NotFound"));
    let (status, _) = delete_by_id(&s, "no-such-queue", &id).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn reset_everything() {
    let s = TestServer::start().await;
    let url = s.create_fifo_queue("r.fifo", &[]).await;
    s.create_queue("other").await;
    s.send_to_group(&url, "x", "g", Some("d")).await;
    clock(&s, json!({"advance": "1h"})).await;
    let answer = s.admin_post("/_retsu/reset", json!({})).await;
    assert_eq!(
        answer,
        json!({"reset": true, "queues_deleted": 2, "topics_deleted": 0})
    );
    let listed = s.client.list_queues().send().await.unwrap();
    assert!(listed.queue_urls.unwrap_or_default().is_empty());
    assert_eq!(s.admin_get("/_retsu/queues").await, json!({"queues": []}));
    let c = s.admin_get("/_retsu/clock").await;
    assert_eq!(c["frozen"], false);
    assert!(c["offset_ms"].as_i64().unwrap().abs() < 5_000, "{c}");
    // The same name is a fresh queue, with a fresh dedup window.
    let url = s.create_fifo_queue("r.fifo", &[]).await;
    s.send_to_group(&url, "x", "g", Some("d")).await;
    assert_eq!(s.counts(&url).await.0, 1);
}

#[tokio::test]
async fn reset_one_queue_keeps_its_attributes() {
    let s = TestServer::start().await;
    let url = s
        .create_fifo_queue("keep.fifo", &[("VisibilityTimeout", "99")])
        .await;
    s.client
        .tag_queue()
        .queue_url(&url)
        .tags("t", "v")
        .send()
        .await
        .unwrap();
    let other = s.create_queue("untouched").await;
    s.send(&other, "stay").await;
    let first = s.send_to_group(&url, "x", "g", Some("d")).await;
    s.send_to_group(&url, "y", "g", Some("e")).await;
    s.receive(&url, 1).await;
    let answer = s
        .admin_post(&format!("{}/reset", q("keep.fifo")), json!({}))
        .await;
    assert_eq!(answer, json!({"reset": true, "messages_removed": 2}));
    assert_eq!(s.counts(&url).await, (0, 0, 0));
    assert_eq!(
        s.attribute(&url, "VisibilityTimeout").await.as_deref(),
        Some("99")
    );
    let tags = s
        .client
        .list_queue_tags()
        .queue_url(&url)
        .send()
        .await
        .unwrap();
    assert_eq!(tags.tags().unwrap()["t"], "v");
    // Its dedup window is gone: the same id is a new message.
    let again = s.send_to_group(&url, "x", "g", Some("d")).await;
    assert_ne!(again.message_id(), first.message_id());
    assert_eq!(s.counts(&other).await.0, 1);
    assert_eq!(s.admin_get("/_retsu/clock").await["frozen"], false);
    let (status, _) = s
        .admin(Method::POST, &format!("{}/reset", q("nope")), None)
        .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn admin_token_is_required_when_set() {
    let s = TestServer::start_with(Config {
        admin_token: Some("s3cret".into()),
        ..Config::ephemeral()
    })
    .await;
    let url = s.create_queue("guarded").await;
    s.send(&url, "m").await;
    for path in ["/_retsu/health", "/_retsu/queues", "/_retsu/nothing"] {
        let (status, body) = s.admin(Method::GET, path, None).await;
        assert_eq!((status, error_code(&body)), (401, "Unauthorized"), "{path}");
        let (status, _) = s
            .admin_with_token(Method::GET, path, None, Some("wrong"))
            .await;
        assert_eq!(status, 401);
    }
    let raw = s
        .raw(s.http.get(format!("{}/_retsu/health", s.endpoint)))
        .await;
    assert_eq!(raw.header("www-authenticate"), Some("Bearer"));
    let (status, body) = s
        .admin_with_token(Method::GET, "/_retsu/health", None, Some("s3cret"))
        .await;
    assert_eq!((status, &body["status"]), (200, &json!("ok")));
    let raw = s
        .raw(
            s.http
                .get(format!("{}/_aws/sqs/messages?QueueUrl={url}", s.endpoint)),
        )
        .await;
    assert_eq!(raw.status, 401);
    // SQS itself needs no token.
    assert_eq!(s.receive_one(&url).await.body(), Some("m"));
    // Nor does the plain health check.
    let raw = s.raw(s.http.get(format!("{}/health", s.endpoint))).await;
    assert_eq!((raw.status, raw.body.as_str()), (200, "ok"));
}

#[tokio::test]
async fn no_admin_leaves_the_paths_to_sqs() {
    let s = TestServer::start_with(Config {
        no_admin: true,
        ..Config::ephemeral()
    })
    .await;
    let url = s.create_queue("plain").await;
    for path in [
        "/_retsu/health",
        "/_retsu/queues",
        "/_aws/sqs/messages",
        "/_localstack/health",
    ] {
        let raw = s.raw(s.http.get(format!("{}{path}", s.endpoint))).await;
        assert_eq!(raw.status, 404, "{path}");
        assert_eq!(raw.body, "<UnknownOperationException/>", "{path}");
    }
    let raw = s
        .raw(
            s.http
                .post(format!("{}/_retsu/clock", s.endpoint))
                .header("content-type", "application/json")
                .body(r#"{"advance":"1h"}"#),
        )
        .await;
    assert_ne!(raw.status, 200);
    assert!(raw.header("content-type") != Some("application/json") || raw.body.contains("__type"));
    s.send(&url, "still sqs").await;
    assert_eq!(s.receive_one(&url).await.body(), Some("still sqs"));
}

#[tokio::test]
async fn localstack_peek_in_both_protocols() {
    let s = TestServer::start().await;
    let url = s.create_queue("ls").await;
    s.client
        .send_message()
        .queue_url(&url)
        .message_body("visible")
        .message_attributes(
            "k",
            MessageAttributeValue::builder()
                .data_type("String")
                .string_value("v")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    s.send_delayed(&url, "delayed", 60).await;
    s.send(&url, "taken").await;
    s.client
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(1)
        .send()
        .await
        .unwrap();
    // "visible" is in flight now (received first); "taken" is available.
    let before = s.counts(&url).await;
    assert_eq!(before, (1, 1, 1));

    // Query/XML: GET with QueueUrl in the query string.
    let raw = s
        .get("/_aws/sqs/messages", &[("QueueUrl", url.as_str())])
        .await;
    assert_eq!(raw.status, 200);
    assert_eq!(raw.header("content-type"), Some("text/xml"));
    let xml = raw.compact_xml();
    assert_eq!(xml_all(&xml, "Body"), ["taken"]);
    // Form style with ShowInvisible and ShowDelayed.
    let raw = s
        .form_post(
            "/_aws/sqs/messages",
            &[
                ("Action", "ReceiveMessage"),
                ("QueueUrl", url.as_str()),
                ("ShowInvisible", "true"),
                ("ShowDelayed", "true"),
            ],
        )
        .await;
    assert_eq!(raw.status, 200, "{raw:?}");
    let xml = raw.compact_xml();
    assert_eq!(xml_all(&xml, "Body"), ["taken", "visible", "delayed"]);
    assert!(
        xml.contains("<Name>ApproximateReceiveCount</Name><Value>1</Value>"),
        "{xml}"
    );

    // JSON: by Accept header, and by a JSON body.
    let raw = s
        .raw(
            s.http
                .get(format!("{}/_aws/sqs/messages", s.endpoint))
                .query(&[("QueueUrl", url.as_str()), ("ShowInvisible", "true")])
                .header("accept", "application/json"),
        )
        .await;
    assert_eq!(raw.status, 200);
    let body = raw.json();
    let msgs = body["Messages"].as_array().unwrap();
    let listed: Vec<&str> = msgs.iter().map(|m| m["Body"].as_str().unwrap()).collect();
    assert_eq!(listed, ["taken", "visible"]);
    assert_eq!(msgs[1]["Attributes"]["ApproximateReceiveCount"], "1");
    assert_eq!(msgs[1]["Attributes"]["IsVisible"], "false");
    assert_eq!(msgs[1]["MessageAttributes"]["k"]["StringValue"], "v");
    assert!(msgs[1]["Attributes"]["SentTimestamp"].is_string());
    let raw = s
        .raw(
            s.http
                .post(format!("{}/_aws/sqs/messages", s.endpoint))
                .header("content-type", "application/x-amz-json-1.0")
                .body(json!({"QueueUrl": url, "ShowDelayed": true}).to_string()),
        )
        .await;
    let body = raw.json();
    let listed: Vec<&str> = body["Messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["Body"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["taken", "delayed"]);

    // Errors in the caller's protocol.
    let raw = s.get("/_aws/sqs/messages", &[]).await;
    assert_eq!(raw.status, 400);
    assert!(
        raw.body.contains("<Code>MissingParameter</Code>"),
        "{raw:?}"
    );
    let raw = s
        .raw(
            s.http
                .get(format!("{}/_aws/sqs/messages", s.endpoint))
                .query(&[("QueueUrl", &format!("{}/{ACCOUNT}/nope", s.endpoint))])
                .header("accept", "application/json"),
        )
        .await;
    assert_eq!(raw.status, 400);
    assert!(raw.body.contains("QueueDoesNotExist"), "{raw:?}");

    // Nothing changed.
    assert_eq!(s.counts(&url).await, before);
    let got = s.receive_one(&url).await;
    assert_eq!(got.body(), Some("taken"));
    assert_eq!(receive_count(&got), "1");
    let _ = QueueAttributeName::All;
}

/// LocalStack's status endpoints answer in LocalStack's shapes, without the
/// admin token (a container health check sends none).
#[tokio::test]
async fn localstack_status_endpoints() {
    let s = TestServer::start_with(Config {
        admin_token: Some("secret".into()),
        ..Config::ephemeral()
    })
    .await;
    let json = |raw: &common::Raw| -> serde_json::Value {
        serde_json::from_str(&raw.body).unwrap_or_else(|e| panic!("{e}: {}", raw.body))
    };
    let health = s.get("/_localstack/health", &[]).await;
    assert_eq!(health.status, 200, "{}", health.body);
    let health = json(&health);
    assert_eq!(health["services"]["sqs"], "running");
    assert_eq!(health["services"]["sns"], "running");
    assert_eq!(health["edition"], "community");
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));

    let info = json(&s.get("/_localstack/info", &[]).await);
    assert_eq!(info["is_license_activated"], false);
    assert!(info["session_id"].as_str().is_some_and(|v| v.len() == 36));
    assert!(info["uptime"].is_u64());

    let init = json(&s.get("/_localstack/init", &[]).await);
    assert_eq!(init["completed"]["READY"], true);
    assert_eq!(init["completed"]["SHUTDOWN"], false);
    assert_eq!(init["scripts"], serde_json::json!([]));
    let ready = json(&s.get("/_localstack/init/ready", &[]).await);
    assert_eq!(ready["completed"], true);
    let unknown = s.get("/_localstack/init/later", &[]).await;
    assert_eq!(unknown.status, 404);
}
