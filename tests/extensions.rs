//! Opt-in extensions: per-message time to live
//! (`retsu.ttl-seconds`) and priority (`retsu.priority`) on queues tagged
//! `retsu:extensions`, through HTTP with the real SDK; queues without the
//! tag keep SQS's behaviour. Time moves only through the manual clock.

mod common;

use aws_sdk_sqs::types::MessageAttributeValue;
use common::*;
use serde_json::Value;

async fn create_tagged(s: &TestServer, name: &str, extensions: &str) -> String {
    s.client
        .create_queue()
        .queue_name(name)
        .tags("retsu:extensions", extensions)
        .send()
        .await
        .expect("CreateQueue")
        .queue_url()
        .unwrap()
        .to_string()
}

fn number(value: &str) -> MessageAttributeValue {
    typed_attr("Number", value)
}

/// Sends `body` with the given extension attributes.
async fn send_with(s: &TestServer, url: &str, body: &str, attrs: &[(&str, &str)]) -> String {
    let mut req = s.client.send_message().queue_url(url).message_body(body);
    for (name, value) in attrs {
        req = req.message_attributes(*name, number(value));
    }
    req.send()
        .await
        .expect("SendMessage")
        .message_id()
        .unwrap()
        .to_string()
}

async fn history_kinds(s: &TestServer, id: &str) -> Vec<(String, Value)> {
    s.message_history(id).await["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["kind"].as_str().unwrap().to_string(), e["detail"].clone()))
        .collect()
}

#[tokio::test]
async fn priority_receives_the_highest_first_equal_ones_in_send_order() {
    let s = TestServer::start().await;
    let url = create_tagged(&s, "ranked", "priority").await;
    for (body, priority) in [
        ("p1", Some("1")),
        ("p5-a", Some("5")),
        ("none", None),
        ("p5-b", Some("5")),
        ("minus", Some("-2")),
        ("p3", Some("3")),
    ] {
        let attrs: Vec<(&str, &str)> = priority
            .map(|p| ("retsu.priority", p))
            .into_iter()
            .collect();
        send_with(&s, &url, body, &attrs).await;
    }
    // The admin peek shows the order a receive takes.
    let peek = s.peek("ranked", "?state=available").await;
    let peeked: Vec<&str> = peek["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["body"].as_str().unwrap())
        .collect();
    let expected = ["p5-a", "p5-b", "p3", "p1", "none", "minus"];
    assert_eq!(peeked, expected);

    let first = s.receive(&url, 2).await;
    assert_eq!(bodies(&first), ["p5-a", "p5-b"]);
    // A message back from its flight takes its rank again.
    s.change_visibility(&url, first[1].receipt_handle().unwrap(), 0)
        .await
        .unwrap();
    let next = s.receive(&url, 10).await;
    assert_eq!(bodies(&next), ["p5-b", "p3", "p1", "none", "minus"]);
    s.advance_secs(30);
    let all = s.receive(&url, 10).await;
    assert_eq!(bodies(&all), expected);
}

#[tokio::test]
async fn queues_without_the_tag_keep_sqs_behaviour() {
    let s = TestServer::start().await;
    let url = s.create_queue("plain").await;
    send_with(
        &s,
        &url,
        "low",
        &[("retsu.priority", "1"), ("retsu.ttl-seconds", "5")],
    )
    .await;
    send_with(&s, &url, "high", &[("retsu.priority", "9")]).await;
    s.advance_secs(60);
    let got = s.receive(&url, 10).await;
    assert_eq!(bodies(&got), ["low", "high"], "send order, no expiry");
    // The attributes are ordinary message attributes, delivered as sent.
    assert_eq!(
        got[0].message_attributes().unwrap()["retsu.ttl-seconds"].string_value(),
        Some("5")
    );
}

#[tokio::test]
async fn ttl_removes_a_message_when_it_ends() {
    let s = TestServer::start().await;
    let url = create_tagged(&s, "short-lived", "ttl").await;
    let id = send_with(&s, &url, "brief", &[("retsu.ttl-seconds", "60")]).await;
    send_with(&s, &url, "lasting", &[]).await;
    s.advance_secs(59);
    assert_eq!(s.counts(&url).await, (2, 0, 0));
    s.advance_secs(1);
    assert_eq!(s.counts(&url).await, (1, 0, 0));
    assert_eq!(bodies(&s.receive(&url, 10).await), ["lasting"]);
    let kinds = history_kinds(&s, &id).await;
    assert_eq!(kinds.last().unwrap().0, "expired", "{kinds:?}");
    assert_eq!(kinds.last().unwrap().1, "retsu.ttl-seconds", "{kinds:?}");
}

#[tokio::test]
async fn ttl_never_ends_a_delivery_in_flight() {
    let s = TestServer::start().await;
    let url = create_tagged(&s, "careful", "all").await;
    let id = send_with(&s, &url, "slow-work", &[("retsu.ttl-seconds", "10")]).await;
    let got = s.receive_one(&url).await;
    // Its time to live ends during the 30 s delivery: it stays in flight,
    // and the consumer can still extend and delete it.
    s.advance_secs(20);
    assert_eq!(s.counts(&url).await, (0, 1, 0));
    s.change_visibility(&url, got.receipt_handle().unwrap(), 30)
        .await
        .unwrap();
    s.advance_secs(25);
    assert_eq!(s.counts(&url).await, (0, 1, 0));
    // When the delivery ends, it is gone rather than delivered again.
    s.advance_secs(5);
    assert_eq!(s.counts(&url).await, (0, 0, 0));
    assert!(s.receive(&url, 10).await.is_empty());
    let kinds: Vec<String> = history_kinds(&s, &id)
        .await
        .into_iter()
        .map(|k| k.0)
        .collect();
    assert_eq!(kinds, ["sent", "received", "visibility_changed", "expired"]);

    // Deleted during the flight: deleted, not expired.
    let id = send_with(&s, &url, "done-in-time", &[("retsu.ttl-seconds", "1")]).await;
    let got = s.receive_one(&url).await;
    s.advance_secs(5);
    s.delete_message(&url, got.receipt_handle().unwrap()).await;
    s.advance_secs(60);
    let kinds: Vec<String> = history_kinds(&s, &id)
        .await
        .into_iter()
        .map(|k| k.0)
        .collect();
    assert_eq!(kinds, ["sent", "received", "deleted"]);
}

#[tokio::test]
async fn tagging_later_turns_the_extensions_on_for_stored_messages_and_untagging_off() {
    let s = TestServer::start().await;
    let url = s.create_queue("later").await;
    send_with(&s, &url, "a", &[("retsu.ttl-seconds", "30")]).await;
    send_with(&s, &url, "b", &[("retsu.priority", "7")]).await;
    s.client
        .tag_queue()
        .queue_url(&url)
        .tags("retsu:extensions", "ttl,priority")
        .send()
        .await
        .unwrap();
    let peek = s.peek("later", "").await;
    assert_eq!(peek["messages"][0]["body"], "b");
    s.advance_secs(30);
    assert_eq!(s.counts(&url).await, (1, 0, 0), "a's time to live ended");

    s.client
        .untag_queue()
        .queue_url(&url)
        .tag_keys("retsu:extensions")
        .send()
        .await
        .unwrap();
    send_with(
        &s,
        &url,
        "c",
        &[("retsu.priority", "99"), ("retsu.ttl-seconds", "1")],
    )
    .await;
    s.advance_secs(10);
    assert_eq!(bodies(&s.receive(&url, 10).await), ["b", "c"]);
}
