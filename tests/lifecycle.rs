//! The standard-queue message lifecycle, with time moved by the manual
//! clock: visibility and redelivery, receipt handles, ChangeMessageVisibility,
//! delays, retention, long polling and the in-flight limit.

mod common;

use std::time::Duration;

use aws_sdk_sqs::error::ProvideErrorMetadata;
use aws_sdk_sqs::types::MessageSystemAttributeName;
use common::*;

// ------------------------------------------------------ visibility timeout

#[tokio::test]
async fn visibility_expiry_redelivers_with_a_new_handle_and_count() {
    let t = TestServer::start().await;
    let url = t.create_queue("redeliver").await;
    let id = t.send(&url, "again").await;

    let first_at = t.now_ms();
    let first = t.receive_one(&url).await;
    assert_eq!(first.message_id(), Some(id.as_str()));
    let a = system_attrs(&first);
    assert_eq!(a["ApproximateReceiveCount"], "1");
    assert_eq!(a["ApproximateFirstReceiveTimestamp"], first_at.to_string());

    // Hidden for exactly the default 30 s.
    t.advance_ms(29_999);
    assert!(t.receive(&url, 10).await.is_empty());
    assert_eq!(t.counts(&url).await, (0, 1, 0));
    t.advance_ms(1);
    assert_eq!(t.counts(&url).await, (1, 0, 0));

    let second = t.receive_one(&url).await;
    assert_eq!(second.message_id(), Some(id.as_str()));
    assert_eq!(second.body(), Some("again"));
    assert_ne!(second.receipt_handle(), first.receipt_handle());
    let a = system_attrs(&second);
    assert_eq!(a["ApproximateReceiveCount"], "2");
    assert_eq!(
        a["ApproximateFirstReceiveTimestamp"],
        first_at.to_string(),
        "the first receive time does not change"
    );
}

#[tokio::test]
async fn receive_visibility_timeout_overrides_the_queue_default_once() {
    let t = TestServer::start().await;
    let url = t.create_queue("override-vt").await;
    t.send(&url, "m").await;
    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(100)
        .send()
        .await
        .unwrap();
    assert_eq!(out.messages().len(), 1);
    t.advance_secs(99);
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_secs(1);
    // The next receive uses the queue default (30 s) again.
    t.receive_one(&url).await;
    t.advance_ms(29_999);
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_ms(1);
    t.receive_one(&url).await;
}

#[tokio::test]
async fn receive_with_visibility_timeout_zero_leaves_it_receivable() {
    let t = TestServer::start().await;
    let url = t.create_queue("vt-zero").await;
    t.send(&url, "m").await;
    for n in 1..=3 {
        let out = t
            .client
            .receive_message()
            .queue_url(&url)
            .visibility_timeout(0)
            .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
            .send()
            .await
            .unwrap();
        assert_eq!(receive_count(&out.messages()[0]), n.to_string());
    }
}

// ---------------------------------------------------------- receipt handles

#[tokio::test]
async fn a_stale_handle_deletes_nothing_and_the_current_one_deletes() {
    let t = TestServer::start().await;
    let url = t.create_queue("stale").await;
    t.send(&url, "m").await;
    let first = t.receive_one(&url).await;
    t.advance_secs(30);
    let second = t.receive_one(&url).await;
    assert_eq!(receive_count(&second), "2");

    // The first handle still "succeeds"...
    t.delete_message(&url, first.receipt_handle().unwrap())
        .await;
    // ...but the message is still there, in flight under the second receive.
    assert_eq!(t.counts(&url).await, (0, 1, 0));
    t.advance_secs(30);
    let third = t.receive_one(&url).await;
    assert_eq!(receive_count(&third), "3");

    // The current handle deletes it.
    t.delete_message(&url, third.receipt_handle().unwrap())
        .await;
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    t.advance_secs(60);
    assert!(t.receive(&url, 10).await.is_empty());
    // Deleting again with any of its handles succeeds.
    t.delete_message(&url, third.receipt_handle().unwrap())
        .await;
    t.delete_message(&url, first.receipt_handle().unwrap())
        .await;
}

#[tokio::test]
async fn an_expired_handle_not_yet_superseded_still_deletes() {
    let t = TestServer::start().await;
    let url = t.create_queue("expired-handle").await;
    t.send(&url, "m").await;
    let m = t.receive_one(&url).await;
    t.advance_secs(45);
    assert_eq!(t.counts(&url).await, (1, 0, 0));
    t.delete_message(&url, m.receipt_handle().unwrap()).await;
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    assert!(t.receive(&url, 10).await.is_empty());
}

#[tokio::test]
async fn malformed_and_foreign_handles_are_receipt_handle_is_invalid() {
    let t = TestServer::start().await;
    let url = t.create_queue("handles").await;
    let other = t.create_queue("handles-other").await;
    t.send(&other, "elsewhere").await;
    let foreign = t.receive_one(&other).await;
    let foreign_handle = foreign.receipt_handle().unwrap().to_string();

    let f = t.delete_message_failure(&url, "garbage").await;
    assert!(f.err.is_receipt_handle_is_invalid(), "{:?}", f.err);
    assert_service_error(
        &f.err,
        "ReceiptHandleIsInvalid",
        "The input receipt handle \"garbage\" is not a valid receipt handle.",
    );
    assert!(
        f.status == 404 || f.status == 400,
        "status {} (the model says 404)",
        f.status
    );

    let err = t.delete_message_failure(&url, &foreign_handle).await.err;
    assert!(err.is_receipt_handle_is_invalid(), "{err:?}");
    assert_eq!(
        err.message().map(str::to_string),
        Some(format!(
            "The input receipt handle \"{foreign_handle}\" is not a valid receipt handle."
        ))
    );
    // A corrupted copy of a real handle.
    let mut corrupted = foreign_handle.clone();
    corrupted.truncate(corrupted.len() - 2);
    let err = t.delete_message_failure(&other, &corrupted).await.err;
    assert!(err.is_receipt_handle_is_invalid(), "{err:?}");

    // The same for ChangeMessageVisibility.
    let err = t.change_visibility(&url, "garbage", 10).await.unwrap_err();
    assert!(err.is_receipt_handle_is_invalid(), "{err:?}");
    let err = t
        .change_visibility(&url, &foreign_handle, 10)
        .await
        .unwrap_err();
    assert!(err.is_receipt_handle_is_invalid(), "{err:?}");

    // The foreign message was not touched by any of this.
    assert_eq!(t.counts(&other).await, (0, 1, 0));
    t.delete_message(&other, &foreign_handle).await;
    assert_eq!(t.counts(&other).await, (0, 0, 0));
}

#[tokio::test]
async fn a_handle_from_a_deleted_queue_of_the_same_name_is_invalid() {
    let t = TestServer::start().await;
    let url = t.create_queue("reborn").await;
    t.send(&url, "old").await;
    let old = t.receive_one(&url).await;
    t.delete_queue(&url).await;
    t.create_queue("reborn").await;
    t.send(&url, "new").await;
    let err = t
        .delete_message_failure(&url, old.receipt_handle().unwrap())
        .await
        .err;
    assert!(err.is_receipt_handle_is_invalid(), "{err:?}");
    assert_eq!(t.counts(&url).await, (1, 0, 0));
}

// ---------------------------------------------------- ChangeMessageVisibility

#[tokio::test]
async fn change_visibility_zero_releases_at_once() {
    let t = TestServer::start().await;
    let url = t.create_queue("release").await;
    t.send(&url, "m").await;
    let m = t.receive_one(&url).await;
    assert_eq!(t.counts(&url).await, (0, 1, 0));
    t.change_visibility(&url, m.receipt_handle().unwrap(), 0)
        .await
        .unwrap();
    assert_eq!(t.counts(&url).await, (1, 0, 0));
    let again = t.receive_one(&url).await;
    assert_eq!(receive_count(&again), "2");
    assert_ne!(again.receipt_handle(), m.receipt_handle());
}

#[tokio::test]
async fn change_visibility_counts_from_now() {
    let t = TestServer::start().await;
    let url = t.create_queue("from-now").await;
    t.send(&url, "m").await;
    let m = t.receive_one(&url).await;
    t.advance_secs(20);
    // 30 s from now, i.e. 50 s after the receive (not 30 s after it).
    t.change_visibility(&url, m.receipt_handle().unwrap(), 30)
        .await
        .unwrap();
    t.advance_secs(10);
    assert!(t.receive(&url, 10).await.is_empty(), "at 30 s");
    t.advance_ms(19_999);
    assert!(t.receive(&url, 10).await.is_empty(), "just before 50 s");
    t.advance_ms(1);
    t.receive_one(&url).await;
}

#[tokio::test]
async fn change_visibility_can_shorten_and_extend_repeatedly() {
    let t = TestServer::start().await;
    let url = t.create_queue("extend").await;
    t.send(&url, "m").await;
    let m = t.receive_one(&url).await;
    let h = m.receipt_handle().unwrap();
    t.change_visibility(&url, h, 5).await.unwrap();
    t.advance_secs(4);
    t.change_visibility(&url, h, 5).await.unwrap();
    t.advance_secs(4);
    t.change_visibility(&url, h, 5).await.unwrap();
    t.advance_secs(4);
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_secs(1);
    t.receive_one(&url).await;
}

#[tokio::test]
async fn change_visibility_after_expiry_hides_the_message_again() {
    let t = TestServer::start().await;
    let url = t.create_queue("rehide").await;
    t.send(&url, "m").await;
    let m = t.receive_one(&url).await;
    t.advance_secs(31);
    assert_eq!(t.counts(&url).await, (1, 0, 0));
    t.change_visibility(&url, m.receipt_handle().unwrap(), 60)
        .await
        .unwrap();
    assert_eq!(t.counts(&url).await, (0, 1, 0));
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_secs(60);
    assert_eq!(receive_count(&t.receive_one(&url).await), "2");
}

#[tokio::test]
async fn change_visibility_is_capped_at_twelve_hours_after_the_receive() {
    let t = TestServer::start().await;
    let url = t.create_queue("cap").await;
    t.send(&url, "m").await;
    let m = t.receive_one(&url).await;
    let h = m.receipt_handle().unwrap();
    t.advance_secs(3_600);
    let err = t.change_visibility(&url, h, 43_200).await.unwrap_err();
    assert_eq!(err.code(), Some("InvalidParameterValue"), "{err:?}");
    assert_eq!(
        err.message(),
        Some("Value 43200 for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]")
    );
    let err = t.change_visibility(&url, h, 39_601).await.unwrap_err();
    assert_eq!(
        err.message(),
        Some("Value 39601 for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]")
    );
    // Exactly 12 hours after the receive is allowed.
    t.change_visibility(&url, h, 39_600).await.unwrap();
    t.advance_secs(39_599);
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_secs(1);
    t.receive_one(&url).await;
    // The range itself.
    let err = t.change_visibility(&url, h, 43_201).await.unwrap_err();
    assert_eq!(err.code(), Some("InvalidParameterValue"));
    let err = t.change_visibility(&url, h, -1).await.unwrap_err();
    assert_eq!(err.code(), Some("InvalidParameterValue"));
}

#[tokio::test]
async fn change_visibility_of_a_deleted_message() {
    let t = TestServer::start().await;
    let url = t.create_queue("cmv-deleted").await;
    t.send(&url, "m").await;
    let m = t.receive_one(&url).await;
    let h = m.receipt_handle().unwrap();
    t.delete_message(&url, h).await;
    let err = t.change_visibility(&url, h, 10).await.unwrap_err();
    assert_eq!(err.code(), Some("InvalidParameterValue"), "{err:?}");
    assert_eq!(
        err.message().map(str::to_string),
        Some(format!(
            "Value {h} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change."
        ))
    );
}

// ------------------------------------------------------------------ delay

#[tokio::test]
async fn queue_delay_seconds() {
    let t = TestServer::start().await;
    let url = t
        .create_queue_with("delayed-queue", &[("DelaySeconds", "5")])
        .await;
    t.send(&url, "later").await;
    assert_eq!(t.counts(&url).await, (0, 0, 1));
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_ms(4_999);
    assert!(t.receive(&url, 10).await.is_empty());
    assert_eq!(t.counts(&url).await, (0, 0, 1));
    t.advance_ms(1);
    assert_eq!(t.counts(&url).await, (1, 0, 0));
    let m = t.receive_one(&url).await;
    assert_eq!(m.body(), Some("later"));

    // A per-message delay overrides the queue's, both ways.
    t.send_delayed(&url, "now", 0).await;
    assert_eq!(t.receive_one(&url).await.body(), Some("now"));
    t.send_delayed(&url, "much later", 20).await;
    t.advance_secs(19);
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_secs(1);
    assert_eq!(t.receive_one(&url).await.body(), Some("much later"));
}

#[tokio::test]
async fn per_message_delay_seconds_and_the_delayed_counter() {
    let t = TestServer::start().await;
    let url = t.create_queue("delayed-messages").await;
    for d in [0, 3, 6] {
        t.client
            .send_message()
            .queue_url(&url)
            .message_body(format!("d{d}"))
            .delay_seconds(d)
            .send()
            .await
            .unwrap();
    }
    assert_eq!(t.counts(&url).await, (1, 0, 2));
    t.advance_secs(3);
    assert_eq!(t.counts(&url).await, (2, 0, 1));
    t.advance_secs(3);
    assert_eq!(t.counts(&url).await, (3, 0, 0));
    let mut bodies: Vec<String> = t
        .receive(&url, 10)
        .await
        .iter()
        .map(|m| m.body().unwrap().to_string())
        .collect();
    bodies.sort();
    assert_eq!(bodies, vec!["d0", "d3", "d6"]);
}

#[tokio::test]
async fn changing_the_queue_delay_is_not_retroactive() {
    let t = TestServer::start().await;
    let url = t.create_queue("not-retro").await;
    t.send(&url, "before").await;
    t.set_attributes(&url, &[("DelaySeconds", "60")]).await;
    t.send(&url, "after").await;
    assert_eq!(t.counts(&url).await, (1, 0, 1));
    assert_eq!(t.receive_one(&url).await.body(), Some("before"));
}

// -------------------------------------------------------------- retention

#[tokio::test]
async fn retention_expires_messages() {
    let t = TestServer::start().await;
    let url = t
        .create_queue_with("retention", &[("MessageRetentionPeriod", "60")])
        .await;
    t.send(&url, "short-lived").await;
    t.advance_ms(59_999);
    assert_eq!(t.counts(&url).await, (1, 0, 0));
    t.advance_ms(1);
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    assert!(t.receive(&url, 10).await.is_empty());
}

#[tokio::test]
async fn retention_expires_in_flight_messages_too() {
    let t = TestServer::start().await;
    let url = t
        .create_queue_with("retention-inflight", &[("MessageRetentionPeriod", "60")])
        .await;
    t.send(&url, "held").await;
    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(3_600)
        .send()
        .await
        .unwrap();
    let m = &out.messages()[0];
    assert_eq!(t.counts(&url).await, (0, 1, 0));
    t.advance_secs(60);
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    // It does not come back when its visibility would have ended.
    t.advance_secs(3_600);
    assert!(t.receive(&url, 10).await.is_empty());
    // Its handle can no longer change its visibility.
    let err = t
        .change_visibility(&url, m.receipt_handle().unwrap(), 10)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("InvalidParameterValue"), "{err:?}");
}

#[tokio::test]
async fn retention_counts_from_the_send_not_from_the_delay() {
    let t = TestServer::start().await;
    let url = t
        .create_queue_with("retention-delay", &[("MessageRetentionPeriod", "60")])
        .await;
    t.send_delayed(&url, "x", 30).await;
    t.advance_secs(30);
    assert_eq!(t.counts(&url).await, (1, 0, 0));
    t.advance_secs(30);
    assert_eq!(t.counts(&url).await, (0, 0, 0));
}

#[tokio::test]
async fn lowering_retention_expires_existing_messages() {
    let t = TestServer::start().await;
    let url = t.create_queue("lower-retention").await;
    t.send(&url, "old").await;
    t.advance_secs(100);
    t.send(&url, "new").await;
    t.set_attributes(&url, &[("MessageRetentionPeriod", "60")])
        .await;
    assert_eq!(t.counts(&url).await, (1, 0, 0));
    assert_eq!(t.receive_one(&url).await.body(), Some("new"));
}

#[tokio::test]
async fn default_retention_is_four_days() {
    let t = TestServer::start().await;
    let url = t.create_queue("four-days").await;
    t.send(&url, "x").await;
    t.advance_ms(345_600_000 - 1);
    assert_eq!(t.counts(&url).await, (1, 0, 0));
    t.advance_ms(1);
    assert_eq!(t.counts(&url).await, (0, 0, 0));
}

// ------------------------------------------------------------ long polling

#[tokio::test]
async fn long_poll_returns_when_a_message_is_sent() {
    let t = TestServer::start().await;
    let url = t.create_queue("lp-send").await;
    let poll = spawn_receive(&t.client, &url, Some(20));
    settle().await;
    assert!(
        !poll.is_finished(),
        "an empty queue must make the poll wait"
    );
    t.advance_secs(5);
    settle().await;
    assert!(!poll.is_finished(), "still within the 20 s wait");
    t.send(&url, "wake up").await;
    let got = finish(poll, 5).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body(), Some("wake up"));
    assert_eq!(receive_count(&got[0]), "1");
    assert_eq!(t.counts(&url).await, (0, 1, 0));
}

#[tokio::test]
async fn long_poll_returns_every_message_of_a_batch() {
    let t = TestServer::start().await;
    let url = t.create_queue("lp-batch").await;
    let poll = spawn_receive(&t.client, &url, Some(20));
    settle().await;
    let mut req = t.client.send_message_batch().queue_url(&url);
    for i in 0..3 {
        req = req.entries(
            aws_sdk_sqs::types::SendMessageBatchRequestEntry::builder()
                .id(format!("e{i}"))
                .message_body(format!("b{i}"))
                .build()
                .unwrap(),
        );
    }
    req.send().await.unwrap();
    let got = finish(poll, 5).await;
    assert_eq!(got.len(), 3);
}

#[tokio::test]
async fn long_poll_returns_when_a_visibility_timeout_expires() {
    let t = TestServer::start().await;
    let url = t.create_queue("lp-visibility").await;
    t.send(&url, "m").await;
    t.client
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(5)
        .send()
        .await
        .unwrap();
    let poll = spawn_receive(&t.client, &url, Some(20));
    settle().await;
    t.advance_secs(4);
    settle().await;
    assert!(!poll.is_finished());
    t.advance_secs(1);
    let got = finish(poll, 5).await;
    assert_eq!(got.len(), 1);
    assert_eq!(receive_count(&got[0]), "2");
}

#[tokio::test]
async fn long_poll_returns_when_a_message_is_released_by_change_visibility() {
    let t = TestServer::start().await;
    let url = t.create_queue("lp-release").await;
    t.send(&url, "m").await;
    let m = t.receive_one(&url).await;
    let poll = spawn_receive(&t.client, &url, Some(20));
    settle().await;
    assert!(!poll.is_finished());
    t.change_visibility(&url, m.receipt_handle().unwrap(), 0)
        .await
        .unwrap();
    let got = finish(poll, 5).await;
    assert_eq!(got.len(), 1);
    assert_eq!(receive_count(&got[0]), "2");
}

#[tokio::test]
async fn long_poll_returns_when_a_delay_ends() {
    let t = TestServer::start().await;
    let url = t.create_queue("lp-delay").await;
    t.send_delayed(&url, "delayed", 3).await;
    let poll = spawn_receive(&t.client, &url, Some(10));
    settle().await;
    t.advance_secs(2);
    settle().await;
    assert!(!poll.is_finished());
    t.advance_secs(1);
    let got = finish(poll, 5).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body(), Some("delayed"));
}

#[tokio::test]
async fn long_poll_returns_empty_at_the_end_of_the_wait() {
    let t = TestServer::start().await;
    let url = t.create_queue("lp-empty").await;
    let poll = spawn_receive(&t.client, &url, Some(2));
    settle().await;
    t.advance_ms(1_999);
    settle().await;
    assert!(!poll.is_finished(), "answered before the wait was over");
    t.advance_ms(1);
    let got = finish(poll, 5).await;
    assert!(got.is_empty(), "{got:?}");
}

#[tokio::test]
async fn long_poll_uses_the_queue_wait_time_when_the_request_has_none() {
    let t = TestServer::start().await;
    let url = t
        .create_queue_with("lp-queue-wait", &[("ReceiveMessageWaitTimeSeconds", "5")])
        .await;
    let poll = spawn_receive(&t.client, &url, None);
    settle().await;
    assert!(!poll.is_finished(), "the queue's 5 s wait must apply");
    t.advance_secs(4);
    settle().await;
    assert!(!poll.is_finished());
    t.advance_secs(1);
    assert!(finish(poll, 5).await.is_empty());

    // It returns early too.
    let poll = spawn_receive(&t.client, &url, None);
    settle().await;
    t.send(&url, "m").await;
    assert_eq!(finish(poll, 5).await.len(), 1);

    // An explicit WaitTimeSeconds=0 is a short poll on this queue.
    let poll = spawn_receive(&t.client, &url, Some(0));
    assert!(finish(poll, 5).await.is_empty());
}

#[tokio::test]
async fn a_message_wakes_exactly_one_of_two_long_polls() {
    let t = TestServer::start().await;
    let url = t.create_queue("lp-two").await;
    let other = t.new_client(REGION);
    let a = spawn_receive(&t.client, &url, Some(20));
    let b = spawn_receive(&other, &url, Some(20));
    settle().await;
    t.send(&url, "only one").await;
    settle().await;
    let (done, waiting) = match (a.is_finished(), b.is_finished()) {
        (true, false) => (a, b),
        (false, true) => (b, a),
        states => panic!("exactly one poll should have answered: {states:?}"),
    };
    assert_eq!(finish(done, 5).await.len(), 1);
    t.advance_secs(20);
    assert!(finish(waiting, 5).await.is_empty());
}

#[tokio::test]
async fn a_client_that_hangs_up_mid_poll_leaves_nothing_behind() {
    let t = TestServer::start().await;
    let url = t.create_queue("lp-hangup").await;
    // A separate client, so its connection is its own.
    let quitter = t.new_client(REGION);
    let poll = spawn_receive(&quitter, &url, Some(20));
    settle().await;
    assert!(!poll.is_finished());
    poll.abort();
    drop(quitter);
    settle().await;

    t.send(&url, "for the next one").await;
    assert_eq!(t.counts(&url).await, (1, 0, 0), "nobody took it");
    let m = t.receive_one(&url).await;
    assert_eq!(m.body(), Some("for the next one"));
    assert_eq!(receive_count(&m), "1");
}

#[tokio::test]
async fn shutdown_answers_waiting_long_polls() {
    let t = TestServer::start().await;
    let url = t.create_queue("lp-shutdown").await;
    let poll = spawn_receive(&t.client, &url, Some(20));
    settle().await;
    assert!(!poll.is_finished());
    let TestServer { server, .. } = t;
    tokio::time::timeout(Duration::from_secs(10), server.shutdown())
        .await
        .expect("shutdown completes without the clock moving")
        .unwrap();
    assert!(finish(poll, 5).await.is_empty());
}

// ------------------------------------------------------- in-flight limit

#[tokio::test]
async fn receive_beyond_120000_in_flight_is_over_limit() {
    use retsu::api::{Action, RequestContext, Response};
    let t = TestServer::start().await;
    let url = t.create_queue("over-limit").await;
    let engine = t.server.engine();
    let ctx = RequestContext::new(REGION, ACCOUNT, t.endpoint.clone());
    // Set-up straight through the engine: 120,000 messages, all received.
    let entries: Vec<serde_json::Value> = (0..10)
        .map(|i| serde_json::json!({"Id": format!("e{i}"), "MessageBody": "x"}))
        .collect();
    let batch = serde_json::json!({"QueueUrl": url, "Entries": entries});
    for _ in 0..12_001 {
        let req = Action::SendMessageBatch.decode(batch.clone()).unwrap();
        engine.handle(&ctx, req).await.unwrap();
    }
    let receive =
        serde_json::json!({"QueueUrl": url, "MaxNumberOfMessages": 10, "VisibilityTimeout": 3600});
    let mut last_handle = String::new();
    for _ in 0..12_000 {
        let req = Action::ReceiveMessage.decode(receive.clone()).unwrap();
        match engine.handle(&ctx, req).await.unwrap() {
            Response::ReceiveMessage(r) => {
                assert_eq!(r.messages.len(), 10);
                last_handle = r.messages[9].receipt_handle.clone();
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(t.counts(&url).await, (10, 120_000, 0));

    let f = failure(t.client.receive_message().queue_url(&url).send().await);
    assert!(f.err.is_over_limit(), "{:?}", f.err);
    assert_eq!(f.status, 403);
    assert_eq!(f.err.code(), Some("OverLimit"));

    // One fewer in flight: receiving works again.
    t.delete_message(&url, &last_handle).await;
    assert_eq!(t.receive(&url, 10).await.len(), 1);
}

#[tokio::test]
async fn change_visibility_with_a_stale_handle_of_an_available_message() {
    let t = TestServer::start().await;
    let url = t.create_queue("not-inflight").await;
    t.send(&url, "m").await;
    let first = t.receive_one(&url).await;
    t.change_visibility(&url, first.receipt_handle().unwrap(), 0)
        .await
        .unwrap();
    let second = t.receive_one(&url).await;
    t.change_visibility(&url, second.receipt_handle().unwrap(), 0)
        .await
        .unwrap();
    // The message is available; the first handle is from an earlier receive.
    let err = t
        .change_visibility(&url, first.receipt_handle().unwrap(), 10)
        .await
        .unwrap_err();
    assert!(err.is_message_not_inflight(), "{err:?}");
    assert_eq!(
        err.code(),
        Some("AWS.SimpleQueueService.MessageNotInflight")
    );
    assert_eq!(t.counts(&url).await, (1, 0, 0));
}

#[tokio::test]
async fn deleting_a_queue_answers_its_long_polls() {
    let t = TestServer::start().await;
    let url = t.create_queue("lp-deleted").await;
    let client = t.client.clone();
    let poll_url = url.clone();
    let poll = tokio::spawn(async move {
        client
            .receive_message()
            .queue_url(poll_url)
            .wait_time_seconds(20)
            .send()
            .await
    });
    settle().await;
    assert!(!poll.is_finished());
    t.delete_queue(&url).await;
    match finish(poll, 5).await {
        Ok(out) => assert!(out.messages().is_empty(), "{out:?}"),
        Err(e) => assert!(
            e.into_service_error().is_queue_does_not_exist(),
            "unexpected error"
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_receivers_never_share_a_message() {
    let t = TestServer::start().await;
    let url = t.create_queue("concurrent").await;
    for batch in 0..20 {
        let mut req = t.client.send_message_batch().queue_url(&url);
        for i in 0..10 {
            req = req.entries(
                aws_sdk_sqs::types::SendMessageBatchRequestEntry::builder()
                    .id(format!("e{i}"))
                    .message_body(format!("{batch}-{i}"))
                    .build()
                    .unwrap(),
            );
        }
        req.send().await.unwrap();
    }
    let mut consumers = Vec::new();
    for _ in 0..6 {
        let client = t.new_client(REGION);
        let url = url.clone();
        consumers.push(tokio::spawn(async move {
            let mut bodies = Vec::new();
            loop {
                let out = client
                    .receive_message()
                    .queue_url(&url)
                    .max_number_of_messages(7)
                    .send()
                    .await
                    .unwrap();
                if out.messages().is_empty() {
                    return bodies;
                }
                bodies.extend(out.messages().iter().map(|m| m.body().unwrap().to_string()));
            }
        }));
    }
    let mut all = Vec::new();
    for c in consumers {
        all.extend(finish(c, 60).await);
    }
    assert_eq!(all.len(), 200, "every message exactly once");
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 200, "no message twice");
    assert_eq!(t.counts(&url).await, (0, 200, 0));
}
