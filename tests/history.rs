//! Message history and the recent-events window (`/_retsu/messages/{id}`,
//! `/_retsu/events`): every transition of the state machine recorded once,
//! with its time, including the ones real SQS keeps silent — a delete with
//! a stale handle that removed nothing, an expiry, a move to the
//! dead-letter queue on the receive after the last allowed one.

mod common;

use std::time::Duration;

use common::*;
use serde_json::Value;

fn kinds(h: &Value) -> Vec<String> {
    h["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_message_through_every_state_to_the_dead_letter_queue() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("hist-dlq").await;
    let url = t.create_source_queue("hist", "hist-dlq", 2, &[]).await;
    let sent_at = t.now_ms();
    let id = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("poison")
        .delay_seconds(5)
        .send()
        .await
        .unwrap()
        .message_id()
        .unwrap()
        .to_string();
    t.advance_secs(5);
    let first = t.receive_one(&url).await;
    let first_handle = first.receipt_handle().unwrap().to_string();
    t.change_visibility(&url, &first_handle, 10).await.unwrap();
    t.advance_secs(10);
    let second = t.receive_one(&url).await;
    // The first handle is stale now: the delete succeeds and removes nothing.
    t.delete_message(&url, &first_handle).await;
    assert_eq!(t.counts(&url).await, (0, 1, 0));
    t.advance_secs(30);
    // The receive after the last allowed one moves it to the DLQ instead.
    assert!(t.receive(&url, 1).await.is_empty());
    assert_eq!(t.counts(&dlq).await, (1, 0, 0));

    let h = t.message_history(&id).await;
    assert_eq!(
        kinds(&h),
        [
            "sent",
            "delay_ended",
            "received",
            "visibility_changed",
            "released",
            "received",
            "stale_delete",
            "released",
            "dead_lettered",
            "arrived_from_source",
        ]
    );
    assert_eq!(h["truncated"], false);
    let e = h["events"].as_array().unwrap();
    // Times: the send, the delay's end, and each release at its deadline.
    assert_eq!(e[0]["at_ms"], sent_at);
    assert_eq!(e[0]["visible_at_ms"], sent_at + 5_000);
    assert_eq!(e[1]["at_ms"], sent_at + 5_000);
    assert_eq!(e[2]["receipt_handle"], first_handle.as_str());
    assert_eq!(e[2]["visible_at_ms"], sent_at + 5_000 + 30_000);
    assert_eq!(e[3]["visible_at_ms"], sent_at + 5_000 + 10_000);
    assert_eq!(e[4]["at_ms"], sent_at + 15_000);
    assert_eq!(e[5]["receipt_handle"], second.receipt_handle().unwrap());
    assert_eq!(e[5]["receive_count"], 2);
    assert_eq!(e[7]["at_ms"], sent_at + 15_000 + 30_000);
    assert_eq!(e[8]["queue"]["name"], "hist");
    assert_eq!(e[9]["queue"]["name"], "hist-dlq");
    assert_eq!(e[9]["detail"], arn("hist"));
    // It is still stored, in the dead-letter queue.
    assert_eq!(h["current"]["state"], "available");
    assert_eq!(h["current"]["dead_letter_source_arn"], arn("hist"));
}

#[tokio::test]
async fn expiry_and_deletion_are_recorded_and_outlive_the_message() {
    let t = TestServer::start().await;
    let url = t
        .create_queue_with("short", &[("MessageRetentionPeriod", "60")])
        .await;
    let sent_at = t.now_ms();
    let doomed = t.send(&url, "forgotten").await;
    t.advance(Duration::from_secs(61));
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    let h = t.message_history(&doomed).await;
    assert_eq!(kinds(&h), ["sent", "expired"]);
    // Recorded at the moment retention ran out, not when it was noticed.
    assert_eq!(h["events"][1]["at_ms"], sent_at + 60_000);
    assert_eq!(h["current"], Value::Null);

    let kept = t.send(&url, "done").await;
    let m = t.receive_one(&url).await;
    t.delete_message(&url, m.receipt_handle().unwrap()).await;
    assert_eq!(
        kinds(&t.message_history(&kept).await),
        ["sent", "received", "deleted"]
    );

    // The window, filtered by kind and queue.
    let raw = t
        .get(
            "/_retsu/events",
            &[
                ("kind", "expired"),
                ("queue", "us-east-1/000000000000/short"),
            ],
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    let events = raw.json();
    let listed = events["events"].as_array().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["message_id"], doomed.as_str());
    // `since` pages on: nothing after the newest. (A cluster's cursor is
    // text, a number per shard.)
    let next = match &events["next"] {
        Value::String(cursor) => cursor.clone(),
        n => n.as_u64().unwrap().to_string(),
    };
    let raw = t
        .get("/_retsu/events", &[("since", &next), ("kind", "expired")])
        .await;
    assert!(raw.json()["events"].as_array().unwrap().is_empty());
    // Every event, in order.
    let all = t.get("/_retsu/events", &[]).await.json();
    let seqs: Vec<u64> = all["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    assert_eq!(seqs.len(), 5);
}

#[tokio::test]
async fn purge_and_queue_deletion_say_how_messages_left() {
    let t = TestServer::start().await;
    let url = t.create_queue("gone").await;
    let purged = t.send(&url, "a").await;
    t.client.purge_queue().queue_url(&url).send().await.unwrap();
    let with_queue = t.send(&url, "b").await;
    t.delete_queue(&url).await;
    assert_eq!(kinds(&t.message_history(&purged).await), ["sent", "purged"]);
    assert_eq!(
        kinds(&t.message_history(&with_queue).await),
        ["sent", "queue_deleted"]
    );
}

#[tokio::test]
async fn bad_requests_and_unknown_messages() {
    let t = TestServer::start().await;
    assert_eq!(t.get("/_retsu/messages/not-an-id", &[]).await.status, 400);
    let raw = t
        .get("/_retsu/messages/6f1c1a8e-0000-4000-8000-000000000000", &[])
        .await;
    assert_eq!(raw.status, 404);
    assert_eq!(raw.json()["error"]["code"], "NotFound");
    let raw = t.get("/_retsu/events", &[("kind", "vanished")]).await;
    assert_eq!(raw.status, 400);
    assert!(raw.body.contains("stale_delete"), "{}", raw.body);
}
