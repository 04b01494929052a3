//! Seeded faults ("realism mode") through HTTP with the real SDK
//! (retries off, so every injected fault is seen): the same seed gives the
//! same outcomes run to run, each kind is observed, a duplicate is a real
//! copy a client can delete, FIFO order and exactly-once survive, and the
//! admin endpoints validate what they are given.
//!
//! Time in SQS terms moves only through the manual clock.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use aws_sdk_sqs::error::{ProvideErrorMetadata, SdkError};
use common::*;
use reqwest::Method;
use serde_json::{json, Value};

async fn set_faults(s: &TestServer, body: Value) -> Value {
    s.admin_post("/_retsu/faults", body).await
}

async fn clear_faults(s: &TestServer) {
    let (status, answer) = s.admin(Method::DELETE, "/_retsu/faults", None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["active"], false);
}

fn queue_scope(name: &str) -> String {
    format!("{REGION}/{ACCOUNT}/{name}")
}

/// The error code of a failed SDK call.
fn code<E: ProvideErrorMetadata, R>(e: &SdkError<E, R>) -> String {
    match e {
        SdkError::ServiceError(se) => se.err().code().unwrap_or("?").to_string(),
        other => format!("not a service error: {}", std::any::type_name_of_val(other)),
    }
}

/// A scripted consumer on a standard queue under faults; returns what it
/// saw, one line per call, and the bodies it got after deleting them.
async fn scripted_run(seed: u64) -> (Vec<String>, Value) {
    let s = TestServer::start().await;
    let url = s.create_queue("jobs").await;
    for i in 0..20 {
        s.send(&url, &format!("m{i:02}")).await;
    }
    set_faults(
        &s,
        json!({"seed": seed, "queue": queue_scope("jobs"), "duplicate": 0.2,
               "reorder": 0.5, "short_receive": 0.5, "throttle": 0.1,
               "internal_error": 0.1}),
    )
    .await;
    let mut log = Vec::new();
    for _round in 0..30 {
        let received = s
            .client
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .wait_time_seconds(0)
            .visibility_timeout(30)
            .send()
            .await;
        let messages = match received {
            Ok(r) => r.messages.unwrap_or_default(),
            Err(e) => {
                log.push(format!("receive error {}", code(&e)));
                s.advance_secs(31);
                continue;
            }
        };
        let bodies: Vec<&str> = messages.iter().filter_map(|m| m.body()).collect();
        log.push(format!("receive {}", bodies.join(",")));
        for m in &messages {
            let deleted = s
                .client
                .delete_message()
                .queue_url(&url)
                .receipt_handle(m.receipt_handle().unwrap())
                .send()
                .await;
            match deleted {
                Ok(_) => log.push(format!("deleted {}", m.body().unwrap())),
                Err(e) => log.push(format!("delete error {}", code(&e))),
            }
        }
        s.advance_secs(31);
    }
    let (_, view) = s.admin(Method::GET, "/_retsu/faults", None).await;
    (log, view)
}

#[tokio::test]
async fn the_same_seed_gives_the_same_outcomes_and_every_kind_shows() {
    let (first, view) = scripted_run(42).await;
    let (second, _) = scripted_run(42).await;
    assert_eq!(first, second, "same seed, same sequence of outcomes");
    let (other, _) = scripted_run(43).await;
    assert_ne!(first, other, "another seed, another sequence");

    // Every kind was injected, and the consumer saw each.
    let injected = &view["queues"][0]["injected"];
    for kind in [
        "duplicate",
        "reorder",
        "short_receive",
        "empty_receive",
        "throttle",
        "internal_error",
    ] {
        assert!(injected[kind].as_u64().unwrap() > 0, "{kind}: {view}");
    }
    assert!(first.iter().any(|l| l.ends_with("RequestThrottled")));
    assert!(first.iter().any(|l| l.ends_with("InternalError")));
    assert!(first.iter().any(|l| l == "receive "), "an empty short poll");
    // A short receive: fewer messages than were receivable (every message
    // not yet deleted is visible again at the start of a round), a batch
    // out of send order, and a message delivered again after its delete
    // succeeded.
    let mut deleted = BTreeSet::new();
    let (mut short, mut unordered, mut again) = (false, false, false);
    for line in &first {
        if let Some(body) = line.strip_prefix("deleted ") {
            again |= !deleted.insert(body.to_string());
        } else if let Some(batch) = line.strip_prefix("receive ").filter(|b| !b.is_empty()) {
            let batch: Vec<&str> = batch.split(',').collect();
            short |= batch.len() < 10.min(20 - deleted.len());
            unordered |= batch.windows(2).any(|w| w[0] > w[1]);
        }
    }
    assert!(short && unordered && again, "{first:?}");
    // Every message was consumed in the end.
    assert_eq!(deleted.len(), 20, "{first:?}");
}

#[tokio::test]
async fn a_duplicate_is_a_real_copy_with_a_handle_that_deletes_it() {
    let s = TestServer::start().await;
    let url = s.create_queue("dup").await;
    let id = s.send(&url, "once").await;
    set_faults(
        &s,
        json!({"seed": 1, "queue": queue_scope("dup"), "duplicate": 1.0}),
    )
    .await;
    let first = s.receive_one(&url).await;
    clear_faults(&s).await;
    s.delete_message(&url, first.receipt_handle().unwrap())
        .await;
    // Hidden until the original's visibility deadline, then delivered again.
    assert!(s.receive(&url, 10).await.is_empty());
    s.advance_secs(30);
    let again = s.receive_one(&url).await;
    assert_eq!(again.message_id(), Some(id.as_str()));
    assert_eq!(again.body(), Some("once"));
    assert_eq!(again.md5_of_body(), first.md5_of_body());
    assert_ne!(again.receipt_handle(), first.receipt_handle());
    s.delete_message(&url, again.receipt_handle().unwrap())
        .await;
    s.advance_secs(3600);
    assert!(s.receive(&url, 10).await.is_empty());
    assert_eq!(s.counts(&url).await, (0, 0, 0));

    // The history tells the story, under the one message id.
    let (status, history) = s
        .admin(Method::GET, &format!("/_retsu/messages/{id}"), None)
        .await;
    assert_eq!(status, 200, "{history}");
    let kinds: Vec<&str> = history["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "sent",
            "received",
            "duplicated",
            "deleted",
            "delay_ended",
            "received",
            "deleted"
        ],
        "{history}"
    );
}

#[tokio::test]
async fn fifo_keeps_order_and_exactly_once_under_every_fault() {
    let s = TestServer::start().await;
    let url = s
        .create_fifo_queue("orders.fifo", &[("ContentBasedDeduplication", "true")])
        .await;
    set_faults(
        &s,
        json!({"seed": 7, "queue": queue_scope("orders.fifo"), "duplicate": 1.0,
               "reorder": 1.0, "short_receive": 0.7, "throttle": 0.2,
               "internal_error": 0.2}),
    )
    .await;
    let mut sent: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for i in 0..30 {
        let group = format!("g{}", i % 3);
        let body = format!("{group}-{i:02}");
        // Throttled or failed sends changed nothing: retry until stored.
        loop {
            let r = s
                .client
                .send_message()
                .queue_url(&url)
                .message_group_id(&group)
                .message_body(&body)
                .send()
                .await;
            if r.is_ok() {
                break;
            }
        }
        sent.entry(group).or_default().push(body);
    }
    let mut got: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut total = 0;
    for _ in 0..500 {
        if total == 30 {
            break;
        }
        let Ok(r) = s
            .client
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .wait_time_seconds(0)
            .send()
            .await
        else {
            continue;
        };
        for m in r.messages.unwrap_or_default() {
            let body = m.body().unwrap().to_string();
            got.entry(body[..2].to_string()).or_default().push(body);
            total += 1;
            while s
                .client
                .delete_message()
                .queue_url(&url)
                .receipt_handle(m.receipt_handle().unwrap())
                .send()
                .await
                .is_err()
            {}
        }
    }
    assert_eq!(got, sent, "every message once, each group in send order");
    let (_, view) = s.admin(Method::GET, "/_retsu/faults", None).await;
    let injected = &view["queues"][0]["injected"];
    assert_eq!(injected["duplicate"], 0, "{view}");
    assert_eq!(injected["reorder"], 0, "{view}");
    assert!(injected["throttle"].as_u64().unwrap() > 0, "{view}");
    assert!(injected["internal_error"].as_u64().unwrap() > 0, "{view}");
    assert!(injected["short_receive"].as_u64().unwrap() > 0, "{view}");
    clear_faults(&s).await;
    s.advance_secs(3600);
    assert!(s.receive(&url, 10).await.is_empty(), "no duplicate");
}

#[tokio::test]
async fn throttling_and_internal_errors_in_the_wire_shapes_of_aws() {
    let s = TestServer::start().await;
    s.create_queue("calm").await;
    set_faults(&s, json!({"seed": 3, "throttle": 1.0})).await;
    let raw = s.json_post("ListQueues", "{}").await;
    assert_eq!(raw.status, 403, "{raw:?}");
    assert_eq!(
        raw.header("x-amzn-query-error"),
        Some("RequestThrottled;Sender")
    );
    assert_eq!(raw.json()["__type"], "com.amazonaws.sqs#RequestThrottled");
    let raw = s
        .form_post("/", &[("Action", "ListQueues"), ("Version", "2012-11-05")])
        .await;
    assert_eq!(raw.status, 403);
    assert!(
        raw.body.contains("<Code>RequestThrottled</Code>"),
        "{raw:?}"
    );

    // A queue's own scope overrides the server-wide one.
    set_faults(
        &s,
        json!({"seed": 3, "queue": queue_scope("calm"), "internal_error": 1.0}),
    )
    .await;
    let calm = s.queue_url("calm");
    let raw = s
        .json_post("GetQueueAttributes", &json!({"QueueUrl": calm}).to_string())
        .await;
    assert_eq!(raw.status, 500, "{raw:?}");
    assert_eq!(
        raw.header("x-amzn-query-error"),
        Some("InternalError;Receiver")
    );
    let raw = s.json_post("ListQueues", "{}").await;
    assert_eq!(raw.status, 403);

    // Per queue clear, then everything.
    let (status, view) = s
        .admin(
            Method::DELETE,
            &format!("/_retsu/faults?queue={}", queue_scope("calm")),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(view["queues"], json!([]));
    assert_eq!(view["active"], true);
    clear_faults(&s).await;
    assert_eq!(s.json_post("ListQueues", "{}").await.status, 200);
}

#[tokio::test]
async fn latency_is_added_within_the_range() {
    let s = TestServer::start().await;
    let url = s.create_queue("slow").await;
    set_faults(
        &s,
        json!({"seed": 1, "queue": queue_scope("slow"), "latency_ms": [150, 200]}),
    )
    .await;
    let started = std::time::Instant::now();
    s.send(&url, "x").await;
    let took = started.elapsed().as_millis();
    assert!(took >= 150, "{took} ms");
    let (_, view) = s.admin(Method::GET, "/_retsu/faults", None).await;
    assert_eq!(view["queues"][0]["injected"]["latency"], 1, "{view}");
    // Other queues are not slowed: no scope applies to them.
    let other = s.create_queue("fast").await;
    s.send(&other, "x").await;
    let (_, view) = s.admin(Method::GET, "/_retsu/faults", None).await;
    assert_eq!(view["queues"][0]["injected"]["latency"], 1, "{view}");
}

#[tokio::test]
async fn the_aws_like_profile_and_what_the_endpoint_refuses() {
    let s = TestServer::start().await;
    let (_, view) = s.admin(Method::GET, "/_retsu/faults", None).await;
    assert_eq!(view, json!({"active": false, "server": null, "queues": []}));

    let view = set_faults(&s, json!({"seed": 5, "profile": "aws-like"})).await;
    let server = &view["server"];
    assert_eq!(server["profile"], "aws-like");
    assert_eq!(server["seed"], 5);
    assert_eq!(server["duplicate"], 0.01);
    assert_eq!(server["short_receive"], 0.5);
    assert_eq!(server["latency_ms"], json!([5, 30]));
    // Explicit rates override the profile's.
    let view = set_faults(
        &s,
        json!({"seed": 5, "profile": "aws-like", "latency_ms": [0, 0], "throttle": 0}),
    )
    .await;
    assert_eq!(view["server"]["latency_ms"], json!([0, 0]));
    assert_eq!(view["server"]["throttle"], 0.0);
    // No seed: one is drawn and shown, so the run can be repeated.
    let view = set_faults(&s, json!({"reorder": 1})).await;
    assert!(view["server"]["seed"].is_u64());

    let mut refused = HashMap::new();
    for body in [
        json!({"throttle": 2}),
        json!({"duplicate": "often"}),
        json!({"profile": "chaos"}),
        json!({"latency_ms": [50, 10]}),
        json!({"latency_ms": [0, 600000]}),
        json!({"speed": 1}),
        json!({"queue": 5}),
        json!({"seed": -1}),
    ] {
        let (status, answer) = s
            .admin(Method::POST, "/_retsu/faults", Some(body.clone()))
            .await;
        refused.insert(body.to_string(), (status, answer["error"]["code"].clone()));
    }
    for (body, (status, code)) in refused {
        assert_eq!((status, code), (400, json!("BadRequest")), "{body}");
    }
    clear_faults(&s).await;
}

/// A reset of everything returns the server to its start-up state, faults
/// included; a queue's own reset keeps its faults, as it keeps its
/// attributes.
#[tokio::test]
async fn reset_of_everything_switches_faults_off() {
    let s = TestServer::start().await;
    s.create_queue("jobs").await;
    set_faults(&s, json!({"seed": 7, "internal_error": 1.0})).await;
    set_faults(
        &s,
        json!({"seed": 7, "queue": queue_scope("jobs"), "throttle": 1.0}),
    )
    .await;

    let (status, _) = s
        .admin(
            Method::POST,
            &format!("/_retsu/queues/{}/reset", queue_scope("jobs")),
            None,
        )
        .await;
    assert_eq!(status, 200);
    let (_, shown) = s.admin(Method::GET, "/_retsu/faults", None).await;
    assert_eq!(shown["active"], true);
    assert_eq!(shown["queues"].as_array().unwrap().len(), 1);

    let (status, answer) = s.admin(Method::POST, "/_retsu/reset", None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["reset"], true, "{answer}");
    let (_, shown) = s.admin(Method::GET, "/_retsu/faults", None).await;
    assert_eq!(shown["active"], false, "{shown}");
    assert_eq!(shown["server"], Value::Null);
    assert_eq!(shown["queues"], json!([]));
    // And SQS requests are served without injected errors again.
    let url = s.create_queue("after").await;
    s.send(&url, "ok").await;
}

/// SNS's deliveries draw from the queue's scope: into a standard queue
/// each is made twice (duplicate 1.0) and arrives the latency range late on
/// the engine's clock; a FIFO queue keeps exactly-once, undelayed delivery.
#[tokio::test]
async fn sns_deliveries_into_standard_queues_are_duplicated_and_delayed() {
    let s = TestServer::start().await;
    let sns = sns_client(&s.endpoint);
    let url = s.create_queue("fanned").await;
    let fifo_url = s
        .create_queue_with("ordered.fifo", &[("FifoQueue", "true")])
        .await;
    let topic = |name: &str, fifo: bool| {
        let mut req = sns.create_topic().name(name);
        if fifo {
            req = req
                .attributes("FifoTopic", "true")
                .attributes("ContentBasedDeduplication", "true");
        }
        req.send()
    };
    let standard = topic("news", false).await.unwrap().topic_arn.unwrap();
    let fifo = topic("ordered.fifo", true)
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    for (topic_arn, queue) in [(&standard, "fanned"), (&fifo, "ordered.fifo")] {
        sns.subscribe()
            .topic_arn(topic_arn)
            .protocol("sqs")
            .endpoint(queue_arn(queue))
            .send()
            .await
            .unwrap();
    }
    for queue in ["fanned", "ordered.fifo"] {
        set_faults(
            &s,
            json!({"seed": 3, "queue": queue_scope(queue), "duplicate": 1.0,
                   "latency_ms": [250, 250]}),
        )
        .await;
    }
    for i in 0..3 {
        sns.publish()
            .topic_arn(&standard)
            .message(format!("n{i}"))
            .send()
            .await
            .unwrap();
        sns.publish()
            .topic_arn(&fifo)
            .message(format!("f{i}"))
            .message_group_id("g")
            .send()
            .await
            .unwrap();
    }
    // Six copies, none receivable until the engine's clock moves 250 ms.
    assert_eq!(s.counts(&url).await, (0, 0, 6));
    assert_eq!(s.counts(&fifo_url).await, (3, 0, 0));
    s.advance_ms(249);
    assert_eq!(s.counts(&url).await, (0, 0, 6));
    s.advance_ms(1);
    assert_eq!(s.counts(&url).await, (6, 0, 0));
    let (_, shown) = s.admin(Method::GET, "/_retsu/faults", None).await;
    let fanned = shown["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["queue"] == queue_scope("fanned"))
        .unwrap();
    assert_eq!(fanned["injected"]["duplicate"], 3, "{shown}");

    clear_faults(&s).await;
    let got = s.receive(&url, 10).await;
    assert_eq!(got.len(), 6);
    // Each SNS message twice, as two SQS messages.
    let mut by_sns_id: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for m in &got {
        let envelope: Value = serde_json::from_str(m.body().unwrap()).unwrap();
        by_sns_id
            .entry(envelope["MessageId"].as_str().unwrap().to_string())
            .or_default()
            .insert(m.message_id().unwrap().to_string());
    }
    assert_eq!(by_sns_id.len(), 3);
    assert!(
        by_sns_id.values().all(|ids| ids.len() == 2),
        "{by_sns_id:?}"
    );
    let ordered: Vec<String> = s
        .receive(&fifo_url, 10)
        .await
        .iter()
        .map(|m| {
            let envelope: Value = serde_json::from_str(m.body().unwrap()).unwrap();
            envelope["Message"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(ordered, ["f0", "f1", "f2"]);
}
