//! FIFO queues through the official SDK: creating, sending
//! (groups, deduplication, sequence numbers, delays, batches), receiving
//! (order, the group lock, receive attempts, expired handles, attributes)
//! and fair queues (MessageGroupId on a standard queue).
//!
//! SQS time passes only through the manual clock.

mod common;

use std::collections::HashMap;

use aws_sdk_sqs::error::ProvideErrorMetadata;
use aws_sdk_sqs::operation::send_message::SendMessageOutput;
use aws_sdk_sqs::types::{
    Message, MessageSystemAttributeName, QueueAttributeName, SendMessageBatchRequestEntry,
};
use common::*;

const GROUP_ID_INVALID: &str =
    "MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.";
const DEDUP_ID_INVALID: &str = "MessageDeduplicationId can only include alphanumeric and punctuation characters. 1 to 128 in length.";
const NO_GROUP: &str = "The request must contain the parameter MessageGroupId.";
const NO_DEDUP: &str = "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly";
const PUNCTUATION: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

// ---------------------------------------------------------------- helpers

/// Sends `body` in `group` with the body as its deduplication id.
async fn put(t: &TestServer, url: &str, body: &str, group: &str) -> SendMessageOutput {
    t.send_to_group(url, body, group, Some(body)).await
}

fn entry(
    id: &str,
    body: &str,
    group: Option<&str>,
    dedup: Option<&str>,
) -> SendMessageBatchRequestEntry {
    SendMessageBatchRequestEntry::builder()
        .id(id)
        .message_body(body)
        .set_message_group_id(group.map(String::from))
        .set_message_deduplication_id(dedup.map(String::from))
        .build()
        .unwrap()
}

fn seq_of(m: &Message) -> u128 {
    let s = sys(m, MessageSystemAttributeName::SequenceNumber)
        .unwrap_or_else(|| panic!("no SequenceNumber on {m:?}"));
    parse_sequence(&s)
}

fn group_of(m: &Message) -> String {
    sys(m, MessageSystemAttributeName::MessageGroupId).expect("MessageGroupId")
}

/// A SequenceNumber is a 20-digit decimal string.
fn parse_sequence(s: &str) -> u128 {
    assert_eq!(s.len(), 20, "SequenceNumber {s:?} is not 20 digits");
    assert!(s.bytes().all(|b| b.is_ascii_digit()), "{s:?}");
    s.parse().unwrap()
}

async fn delete_all(t: &TestServer, url: &str, msgs: &[Message]) {
    for m in msgs {
        t.delete_message(url, m.receipt_handle().unwrap()).await;
    }
}

/// A short-poll receive with a receive request attempt id.
async fn receive_attempt(t: &TestServer, url: &str, max: i32, attempt: &str) -> Vec<Message> {
    t.client
        .receive_message()
        .queue_url(url)
        .max_number_of_messages(max)
        .wait_time_seconds(0)
        .receive_request_attempt_id(attempt)
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .send()
        .await
        .expect("ReceiveMessage")
        .messages
        .unwrap_or_default()
}

fn expired(handle: &str) -> String {
    format!("Value {handle} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.")
}

// ---------------------------------------------------------------- creating

#[tokio::test]
async fn fifo_name_and_fifo_queue_attribute_must_agree() {
    let t = TestServer::start().await;
    // A .fifo name without FifoQueue=true is an invalid standard name.
    for attrs in [vec![], vec![("FifoQueue", "false")]] {
        let mut req = t.client.create_queue().queue_name("orders.fifo");
        for (k, v) in &attrs {
            req = req.attributes(QueueAttributeName::from(*k), *v);
        }
        let f = failure(req.send().await);
        assert_eq!(f.status, 400);
        assert_eq!(f.err.code(), Some("InvalidParameterValue"), "{attrs:?}");
        assert_eq!(
            f.err.message(),
            Some("Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"),
            "{attrs:?}"
        );
    }
    // FifoQueue=true without the suffix.
    let err = t
        .create_queue_error("orders", &[("FifoQueue", "true")])
        .await;
    assert_eq!(err.code(), Some("InvalidParameterValue"));
    let message = err.message().unwrap_or_default();
    assert!(
        message.starts_with("The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length"),
        "{message}"
    );
    // The suffix counts toward the 80 characters.
    let ok = format!("{}.fifo", "a".repeat(75));
    t.create_fifo_queue(&ok, &[]).await;
    let long = format!("{}.fifo", "a".repeat(76));
    let err = t.create_queue_error(&long, &[("FifoQueue", "true")]).await;
    assert_eq!(err.code(), Some("InvalidParameterValue"));
    // Nothing was created by the failures.
    let listed = t.client.list_queues().send().await.unwrap();
    let urls = listed.queue_urls();
    assert_eq!(urls, [t.queue_url(&ok)]);
}

#[tokio::test]
async fn queue_type_can_never_change() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("typed.fifo", &[]).await;
    let err = t
        .set_attributes_error(&url, &[("FifoQueue", "false")])
        .await;
    assert_service_error(
        &err,
        "InvalidAttributeValue",
        "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.",
    );
    // Restating the type is fine.
    t.set_attributes(&url, &[("FifoQueue", "true")]).await;
    assert_eq!(
        t.attribute(&url, "FifoQueue").await.as_deref(),
        Some("true")
    );

    let std_url = t.create_queue("plain").await;
    let err = t
        .set_attributes_error(&std_url, &[("FifoQueue", "true")])
        .await;
    assert_service_error(&err, "InvalidAttributeName", "Unknown Attribute FifoQueue.");
    assert_eq!(t.attribute(&std_url, "FifoQueue").await, None);
    // FIFO-only settings cannot be added to a standard queue later either.
    let err = t
        .set_attributes_error(&std_url, &[("DeduplicationScope", "messageGroup")])
        .await;
    assert_service_error(
        &err,
        "InvalidAttributeName",
        "You can specify the DeduplicationScope only when FifoQueue is set to true.",
    );
}

#[tokio::test]
async fn fifo_attributes_defaults_and_all() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("defaults.fifo", &[]).await;
    let all = t.attributes(&url, &["All"]).await;
    assert_eq!(all["FifoQueue"], "true");
    assert_eq!(all["ContentBasedDeduplication"], "false");
    assert_eq!(all["DeduplicationScope"], "queue");
    assert_eq!(all["FifoThroughputLimit"], "perQueue");
    assert_eq!(
        all["QueueArn"],
        format!("arn:aws:sqs:{REGION}:{ACCOUNT}:defaults.fifo")
    );
    let mut keys: Vec<&str> = all.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesDelayed",
            "ApproximateNumberOfMessagesNotVisible",
            "ContentBasedDeduplication",
            "CreatedTimestamp",
            "DeduplicationScope",
            "DelaySeconds",
            "FifoQueue",
            "FifoThroughputLimit",
            "LastModifiedTimestamp",
            "MaximumMessageSize",
            "MessageRetentionPeriod",
            "QueueArn",
            "ReceiveMessageWaitTimeSeconds",
            "SqsManagedSseEnabled",
            "VisibilityTimeout",
        ]
    );
}

#[tokio::test]
async fn high_throughput_attributes_are_stored_and_returned() {
    let t = TestServer::start().await;
    let url = t
        .create_fifo_queue(
            "ht.fifo",
            &[
                ("ContentBasedDeduplication", "true"),
                ("DeduplicationScope", "messageGroup"),
                ("FifoThroughputLimit", "perMessageGroupId"),
            ],
        )
        .await;
    let a = t
        .attributes(
            &url,
            &[
                "ContentBasedDeduplication",
                "DeduplicationScope",
                "FifoThroughputLimit",
            ],
        )
        .await;
    assert_eq!(a.len(), 3, "{a:?}");
    assert_eq!(a["ContentBasedDeduplication"], "true");
    assert_eq!(a["DeduplicationScope"], "messageGroup");
    assert_eq!(a["FifoThroughputLimit"], "perMessageGroupId");

    // Back to normal throughput, then each setting on its own.
    t.set_attributes(
        &url,
        &[
            ("FifoThroughputLimit", "perQueue"),
            ("DeduplicationScope", "queue"),
            ("ContentBasedDeduplication", "false"),
        ],
    )
    .await;
    let a = t.attributes(&url, &["All"]).await;
    assert_eq!(a["ContentBasedDeduplication"], "false");
    assert_eq!(a["DeduplicationScope"], "queue");
    assert_eq!(a["FifoThroughputLimit"], "perQueue");

    // perQueue limit with messageGroup scope is a valid combination.
    t.set_attributes(&url, &[("DeduplicationScope", "messageGroup")])
        .await;
    assert_eq!(
        t.attribute(&url, "DeduplicationScope").await.as_deref(),
        Some("messageGroup")
    );
}

#[tokio::test]
async fn per_message_group_id_limit_requires_message_group_scope() {
    let t = TestServer::start().await;
    // At creation.
    let err = t
        .create_queue_error(
            "rule.fifo",
            &[
                ("FifoQueue", "true"),
                ("FifoThroughputLimit", "perMessageGroupId"),
            ],
        )
        .await;
    assert_eq!(err.code(), Some("InvalidAttributeValue"), "{err:?}");
    let message = err.message().unwrap_or_default();
    assert!(
        message.starts_with("Invalid value for the parameter FifoThroughputLimit")
            && message.contains("perMessageGroupId"),
        "{message}"
    );
    let err = t
        .create_queue_error(
            "rule.fifo",
            &[
                ("FifoQueue", "true"),
                ("DeduplicationScope", "queue"),
                ("FifoThroughputLimit", "perMessageGroupId"),
            ],
        )
        .await;
    assert_eq!(err.code(), Some("InvalidAttributeValue"));

    // Later, on a queue-scoped queue; nothing changes on failure.
    let url = t.create_fifo_queue("rule.fifo", &[]).await;
    let err = t
        .set_attributes_error(&url, &[("FifoThroughputLimit", "perMessageGroupId")])
        .await;
    assert_eq!(err.code(), Some("InvalidAttributeValue"));
    assert_eq!(
        t.attribute(&url, "FifoThroughputLimit").await.as_deref(),
        Some("perQueue")
    );
    // Together they are accepted; then scope alone cannot go back to queue.
    t.set_attributes(
        &url,
        &[
            ("DeduplicationScope", "messageGroup"),
            ("FifoThroughputLimit", "perMessageGroupId"),
        ],
    )
    .await;
    let err = t
        .set_attributes_error(&url, &[("DeduplicationScope", "queue")])
        .await;
    assert_eq!(err.code(), Some("InvalidAttributeValue"));
    assert_eq!(
        t.attribute(&url, "DeduplicationScope").await.as_deref(),
        Some("messageGroup")
    );
    // Unknown values.
    for (name, value) in [
        ("DeduplicationScope", "perQueue"),
        ("FifoThroughputLimit", "queue"),
        ("ContentBasedDeduplication", "yes"),
    ] {
        let err = t.set_attributes_error(&url, &[(name, value)]).await;
        assert_eq!(err.code(), Some("InvalidAttributeValue"), "{name}={value}");
    }
}

// ---------------------------------------------------------------- sending

#[tokio::test]
async fn send_without_message_group_id_is_missing_parameter() {
    let t = TestServer::start().await;
    let url = t
        .create_fifo_queue("nogroup.fifo", &[("ContentBasedDeduplication", "true")])
        .await;
    let f = failure(
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("x")
            .message_deduplication_id("d")
            .send()
            .await,
    );
    assert_eq!(f.status, 400);
    assert_service_error(&f.err, "MissingParameter", NO_GROUP);
    assert_eq!(t.counts(&url).await, (0, 0, 0));
}

#[tokio::test]
async fn batch_without_message_group_id_fails_the_whole_request() {
    let t = TestServer::start().await;
    let url = t
        .create_fifo_queue(
            "nogroup-batch.fifo",
            &[("ContentBasedDeduplication", "true")],
        )
        .await;
    let f = failure(
        t.client
            .send_message_batch()
            .queue_url(&url)
            .entries(entry("ok", "fine", Some("g"), None))
            .entries(entry("bad", "no group", None, None))
            .send()
            .await,
    );
    assert_eq!(f.status, 400);
    assert_service_error(&f.err, "InvalidParameterValue", NO_GROUP);
    // The valid entry was not enqueued either.
    assert_eq!(t.counts(&url).await, (0, 0, 0));
}

#[tokio::test]
async fn group_and_deduplication_id_charset_and_length() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("ids.fifo", &[]).await;
    // Accepted: every punctuation character, 1 and 128 characters.
    let long = "g".repeat(128);
    for (i, id) in ["a", PUNCTUATION, long.as_str(), "Az09-_.~"]
        .iter()
        .enumerate()
    {
        let sent = t
            .send_to_group(&url, &format!("ok {i}"), id, Some(id))
            .await;
        assert!(sent.sequence_number().is_some());
    }
    let m = t.receive(&url, 10).await;
    let groups: Vec<String> = m.iter().map(group_of).collect();
    for id in ["a", PUNCTUATION, long.as_str(), "Az09-_.~"] {
        assert!(groups.iter().any(|g| g == id), "{id:?} in {groups:?}");
    }
    for m in &m {
        assert_eq!(
            sys(m, MessageSystemAttributeName::MessageDeduplicationId),
            Some(group_of(m)),
        );
    }

    let too_long = "g".repeat(129);
    for bad in ["group 123", "", too_long.as_str(), "grüße", "tab\there"] {
        let f = failure(
            t.client
                .send_message()
                .queue_url(&url)
                .message_body("x")
                .message_group_id(bad)
                .message_deduplication_id("d-bad")
                .send()
                .await,
        );
        assert_eq!(f.status, 400);
        assert_eq!(f.err.code(), Some("InvalidParameterValue"), "{bad:?}");
        assert_eq!(
            f.err.message(),
            Some(format!("Value {bad} for parameter MessageGroupId is invalid. Reason: {GROUP_ID_INVALID}").as_str()),
            "{bad:?}"
        );
        let f = failure(
            t.client
                .send_message()
                .queue_url(&url)
                .message_body("x")
                .message_group_id("g")
                .message_deduplication_id(bad)
                .send()
                .await,
        );
        assert_eq!(f.err.code(), Some("InvalidParameterValue"), "{bad:?}");
        assert_eq!(
            f.err.message(),
            Some(format!("Value {bad} for parameter MessageDeduplicationId is invalid. Reason: {DEDUP_ID_INVALID}").as_str()),
            "{bad:?}"
        );
    }
    // Only the four good sends were stored (and are in flight).
    assert_eq!(t.counts(&url).await, (0, 4, 0));
}

#[tokio::test]
async fn no_deduplication_id_without_content_based_deduplication_is_refused() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("nodedup.fifo", &[]).await;
    let err = service_error(
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("x")
            .message_group_id("g")
            .send()
            .await,
    );
    assert_service_error(&err, "InvalidParameterValue", NO_DEDUP);
    // In a batch: the whole request.
    let err = service_error(
        t.client
            .send_message_batch()
            .queue_url(&url)
            .entries(entry("a", "with", Some("g"), Some("d1")))
            .entries(entry("b", "without", Some("g"), None))
            .send()
            .await,
    );
    assert_service_error(&err, "InvalidParameterValue", NO_DEDUP);
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    // Switching content-based deduplication on makes the same send work.
    t.set_attributes(&url, &[("ContentBasedDeduplication", "true")])
        .await;
    t.send_to_group(&url, "x", "g", None).await;
    assert_eq!(t.counts(&url).await, (1, 0, 0));
}

#[tokio::test]
async fn content_based_deduplication_uses_the_body_and_an_explicit_id_wins() {
    let t = TestServer::start().await;
    let url = t
        .create_fifo_queue("cbd.fifo", &[("ContentBasedDeduplication", "true")])
        .await;
    // Content-based: same body → duplicate, even with other attributes.
    let first = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("same body")
        .message_group_id("g")
        .message_attributes("k", string_attr("1"))
        .send()
        .await
        .unwrap();
    let again = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("same body")
        .message_group_id("g")
        .message_attributes("k", string_attr("2"))
        .send()
        .await
        .unwrap();
    assert_eq!(again.message_id(), first.message_id());
    assert_eq!(again.sequence_number(), first.sequence_number());
    // A different body is a different message.
    let other = t.send_to_group(&url, "other body", "g", None).await;
    assert_ne!(other.message_id(), first.message_id());

    // An explicit id wins: the same body under a new id is a new message...
    let explicit = t
        .send_to_group(&url, "same body", "g", Some("explicit-1"))
        .await;
    assert_ne!(explicit.message_id(), first.message_id());
    // ...and a different body under that id is its duplicate.
    let dup = t
        .send_to_group(&url, "a different body", "g", Some("explicit-1"))
        .await;
    assert_eq!(dup.message_id(), explicit.message_id());
    assert_eq!(dup.sequence_number(), explicit.sequence_number());

    let msgs = t.receive(&url, 10).await;
    assert_eq!(bodies(&msgs), ["same body", "other body", "same body"]);
    // The first message kept the attributes it was sent with.
    assert_eq!(
        msgs[0].message_attributes().unwrap()["k"].string_value(),
        Some("1")
    );
    let content_id = sys(&msgs[0], MessageSystemAttributeName::MessageDeduplicationId)
        .expect("content-based MessageDeduplicationId");
    assert!(!content_id.is_empty());
    assert_ne!(
        content_id,
        sys(&msgs[1], MessageSystemAttributeName::MessageDeduplicationId).unwrap()
    );
    assert_eq!(
        sys(&msgs[2], MessageSystemAttributeName::MessageDeduplicationId).as_deref(),
        Some("explicit-1")
    );
}

#[tokio::test]
async fn dedup_window_outlives_receive_and_delete_and_ends_after_five_minutes() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("window.fifo", &[]).await;
    let original = t.send_to_group(&url, "first", "g", Some("d-1")).await;
    let original_id = original.message_id().unwrap().to_string();
    let original_seq = original.sequence_number().unwrap().to_string();
    let m = t.receive_one(&url).await;
    assert_eq!(m.message_id(), Some(original_id.as_str()));
    t.delete_message(&url, m.receipt_handle().unwrap()).await;
    assert_eq!(t.counts(&url).await, (0, 0, 0));

    // Within the window: accepted, not enqueued, answered as the original.
    t.advance_secs(60);
    let dup = t.send_to_group(&url, "second", "g", Some("d-1")).await;
    assert_eq!(dup.message_id(), Some(original_id.as_str()));
    assert_eq!(dup.sequence_number(), Some(original_seq.as_str()));
    // Its own body checksum.
    assert_eq!(dup.md5_of_message_body(), Some(md5_hex(b"second").as_str()));
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    assert!(t.receive(&url, 10).await.is_empty());

    // A duplicate does not extend the window: it counts from the original.
    t.advance_secs(239); // 299 s after the original send
    let dup = t.send_to_group(&url, "third", "g", Some("d-1")).await;
    assert_eq!(dup.message_id(), Some(original_id.as_str()));
    assert_eq!(t.counts(&url).await, (0, 0, 0));

    t.advance_secs(2); // 301 s
    let fresh = t.send_to_group(&url, "fourth", "g", Some("d-1")).await;
    assert_ne!(fresh.message_id(), Some(original_id.as_str()));
    assert!(
        parse_sequence(fresh.sequence_number().unwrap()) > parse_sequence(&original_seq),
        "sequence numbers only grow"
    );
    let m = t.receive_one(&url).await;
    assert_eq!(m.body(), Some("fourth"));
    assert_eq!(m.message_id(), fresh.message_id());
}

#[tokio::test]
async fn duplicate_of_a_message_still_queued_is_not_enqueued() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("dup-queued.fifo", &[]).await;
    let a = t.send_to_group(&url, "a", "g", Some("same")).await;
    for _ in 0..3 {
        let d = t.send_to_group(&url, "a", "g", Some("same")).await;
        assert_eq!(d.message_id(), a.message_id());
        assert_eq!(d.sequence_number(), a.sequence_number());
    }
    assert_eq!(t.counts(&url).await, (1, 0, 0));
    // Queue scope (the default): the same id in another group is a duplicate.
    let other_group = t.send_to_group(&url, "a", "other", Some("same")).await;
    assert_eq!(other_group.message_id(), a.message_id());
    assert_eq!(t.counts(&url).await, (1, 0, 0));
}

#[tokio::test]
async fn message_group_scope_deduplicates_per_group() {
    let t = TestServer::start().await;
    let url = t
        .create_fifo_queue("scope.fifo", &[("DeduplicationScope", "messageGroup")])
        .await;
    let g1 = t.send_to_group(&url, "one", "g1", Some("same-id")).await;
    let g2 = t.send_to_group(&url, "two", "g2", Some("same-id")).await;
    assert_ne!(g1.message_id(), g2.message_id());
    assert_ne!(g1.sequence_number(), g2.sequence_number());
    // Within one group it is still a duplicate.
    let dup = t.send_to_group(&url, "three", "g1", Some("same-id")).await;
    assert_eq!(dup.message_id(), g1.message_id());
    assert_eq!(t.counts(&url).await, (2, 0, 0));
    let mut got: Vec<String> = t
        .receive(&url, 10)
        .await
        .iter()
        .map(|m| m.body().unwrap().to_string())
        .collect();
    got.sort();
    assert_eq!(got, ["one", "two"]);
}

#[tokio::test]
async fn sequence_numbers_are_20_digits_and_strictly_increasing() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("seq.fifo", &[]).await;
    let mut sent: Vec<(String, u128)> = Vec::new();
    for i in 0..12 {
        let group = format!("g{}", i % 3);
        let out = put(&t, &url, &format!("s{i}"), &group).await;
        sent.push((
            out.message_id().unwrap().to_string(),
            parse_sequence(out.sequence_number().expect("SequenceNumber on send")),
        ));
        if i % 4 == 3 {
            t.advance_ms(1);
        }
    }
    let batch = t
        .client
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("b0", "b0", Some("g0"), Some("b0")))
        .entries(entry("b1", "b1", Some("g1"), Some("b1")))
        .entries(entry("b2", "b2", Some("g0"), Some("b2")))
        .send()
        .await
        .unwrap();
    assert!(batch.failed().is_empty());
    for e in batch.successful() {
        sent.push((
            e.message_id().to_string(),
            parse_sequence(e.sequence_number().expect("SequenceNumber in batch result")),
        ));
    }
    for w in sent.windows(2) {
        assert!(w[0].1 < w[1].1, "{} then {}", w[0].1, w[1].1);
    }
    // The same numbers come back as a system attribute.
    let by_id: HashMap<String, u128> = sent.into_iter().collect();
    let mut seen = 0;
    loop {
        let msgs = t.receive(&url, 10).await;
        if msgs.is_empty() {
            break;
        }
        for m in &msgs {
            assert_eq!(seq_of(m), by_id[m.message_id().unwrap()]);
            seen += 1;
        }
        delete_all(&t, &url, &msgs).await;
    }
    assert_eq!(seen, 15);
}

#[tokio::test]
async fn per_message_delay_is_refused_but_zero_and_queue_delay_work() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("delay.fifo", &[]).await;
    let err = service_error(
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("x")
            .message_group_id("g")
            .message_deduplication_id("d")
            .delay_seconds(2)
            .send()
            .await,
    );
    assert_service_error(&err, "InvalidParameterValue", "Value 2 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.");
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    // An explicit 0 is accepted.
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .message_group_id("g")
        .message_deduplication_id("d")
        .delay_seconds(0)
        .send()
        .await
        .expect("DelaySeconds=0 on FIFO");
    assert_eq!(t.counts(&url).await, (1, 0, 0));

    // The queue-level delay applies.
    let delayed = t
        .create_fifo_queue("delayed.fifo", &[("DelaySeconds", "5")])
        .await;
    put(&t, &delayed, "later", "g").await;
    assert_eq!(t.counts(&delayed).await, (0, 0, 1));
    assert!(t.receive(&delayed, 10).await.is_empty());
    t.advance_secs(4);
    assert!(t.receive(&delayed, 10).await.is_empty());
    t.advance_secs(1);
    let m = t.receive_one(&delayed).await;
    assert_eq!(m.body(), Some("later"));
}

#[tokio::test]
async fn batch_entries_are_enqueued_in_entry_order() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("batch-order.fifo", &[]).await;
    let mut req = t.client.send_message_batch().queue_url(&url);
    for i in 0..10 {
        let group = if i % 3 == 0 { "x" } else { "y" };
        req = req.entries(entry(
            &format!("e{i}"),
            &format!("m{i}"),
            Some(group),
            Some(&format!("d{i}")),
        ));
    }
    let out = req.send().await.unwrap();
    assert!(out.failed().is_empty(), "{:?}", out.failed());
    let ids: Vec<&str> = out.successful().iter().map(|e| e.id()).collect();
    assert_eq!(
        ids,
        ["e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9"]
    );
    let seqs: Vec<u128> = out
        .successful()
        .iter()
        .map(|e| parse_sequence(e.sequence_number().unwrap()))
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");

    let msgs = t.receive(&url, 10).await;
    assert_eq!(msgs.len(), 10);
    let of = |g: &str| -> Vec<&str> {
        msgs.iter()
            .filter(|m| group_of(m) == g)
            .map(|m| m.body().unwrap())
            .collect()
    };
    assert_eq!(of("x"), ["m0", "m3", "m6", "m9"]);
    assert_eq!(of("y"), ["m1", "m2", "m4", "m5", "m7", "m8"]);
}

// ---------------------------------------------------------------- receiving

#[tokio::test]
async fn messages_of_a_group_come_out_in_send_order() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("order.fifo", &[]).await;
    for i in 0..6 {
        put(&t, &url, &format!("a{i}"), "A").await;
        put(&t, &url, &format!("b{i}"), "B").await;
    }
    let mut per_group: HashMap<String, Vec<String>> = HashMap::new();
    let mut total = 0;
    for _ in 0..40 {
        let msgs = t.receive(&url, 1).await;
        if msgs.is_empty() {
            break;
        }
        let m = &msgs[0];
        per_group
            .entry(group_of(m))
            .or_default()
            .push(m.body().unwrap().to_string());
        t.delete_message(&url, m.receipt_handle().unwrap()).await;
        total += 1;
    }
    assert_eq!(total, 12);
    assert_eq!(per_group["A"], ["a0", "a1", "a2", "a3", "a4", "a5"]);
    assert_eq!(per_group["B"], ["b0", "b1", "b2", "b3", "b4", "b5"]);
}

#[tokio::test]
async fn a_group_whose_oldest_message_is_in_flight_is_blocked() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("lock.fifo", &[]).await;
    for b in ["a1", "a2", "a3"] {
        put(&t, &url, b, "A").await;
    }
    put(&t, &url, "b1", "B").await;

    let first = t.receive(&url, 1).await;
    assert_eq!(bodies(&first), ["a1"]);
    // A is locked: only B comes out, from any client.
    let other = t.new_client(REGION);
    let out = receive_via(&other, &url).await;
    assert_eq!(bodies(&out), ["b1"]);
    assert!(t.receive(&url, 10).await.is_empty());
    // Deleting B's message does not unlock A.
    t.delete_message(&url, out[0].receipt_handle().unwrap())
        .await;
    assert!(t.receive(&url, 10).await.is_empty());
    // Nor does time short of the visibility timeout.
    t.advance_secs(29);
    assert!(t.receive(&url, 10).await.is_empty());
    // Deleting a1 does.
    t.delete_message(&url, first[0].receipt_handle().unwrap())
        .await;
    let rest = t.receive(&url, 10).await;
    assert_eq!(bodies(&rest), ["a2", "a3"]);
    assert!(t.receive(&url, 10).await.is_empty());
    // Releasing a3 (visibility 0) while a2 is in flight: a2 blocks it.
    t.change_visibility(&url, rest[1].receipt_handle().unwrap(), 0)
        .await
        .unwrap();
    assert!(t.receive(&url, 10).await.is_empty());
    // Releasing a2 too: both come back, in order.
    t.change_visibility(&url, rest[0].receipt_handle().unwrap(), 0)
        .await
        .unwrap();
    let again = t.receive(&url, 10).await;
    assert_eq!(bodies(&again), ["a2", "a3"]);
    assert_eq!(receive_count(&again[0]), "2");
    // As on AWS, an earlier message released while a later one is in
    // flight comes back on its own: a2 yes, a3 not.
    t.change_visibility(&url, again[0].receipt_handle().unwrap(), 0)
        .await
        .unwrap();
    let head = t.receive(&url, 10).await;
    assert_eq!(bodies(&head), ["a2"]);
    assert_eq!(receive_count(&head[0]), "3");
}

#[tokio::test]
async fn one_receive_takes_up_to_ten_of_a_group_in_order() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("ten.fifo", &[]).await;
    for i in 0..12 {
        put(&t, &url, &format!("m{i:02}"), "only").await;
    }
    let first = t.receive(&url, 10).await;
    let expected: Vec<String> = (0..10).map(|i| format!("m{i:02}")).collect();
    assert_eq!(bodies(&first), expected);
    assert!(t.receive(&url, 10).await.is_empty(), "group is locked");
    delete_all(&t, &url, &first[..9]).await;
    assert!(t.receive(&url, 10).await.is_empty(), "m09 still in flight");
    t.delete_message(&url, first[9].receipt_handle().unwrap())
        .await;
    assert_eq!(bodies(&t.receive(&url, 10).await), ["m10", "m11"]);
}

#[tokio::test]
async fn a_receive_fills_up_from_other_groups() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("fill.fifo", &[]).await;
    let mut sent: HashMap<String, Vec<String>> = HashMap::new();
    for g in ["A", "B", "C"] {
        for i in 0..4 {
            let body = format!("{g}{i}");
            put(&t, &url, &body, g).await;
            sent.entry(g.to_string()).or_default().push(body);
        }
    }
    let msgs = t.receive(&url, 10).await;
    assert_eq!(msgs.len(), 10, "{:?}", bodies(&msgs));
    // Each group's messages are contiguous, a prefix of its sends, in order.
    let mut taken: Vec<(String, Vec<String>)> = Vec::new();
    for m in &msgs {
        let g = group_of(m);
        match taken.last_mut() {
            Some((last, list)) if *last == g => list.push(m.body().unwrap().to_string()),
            _ => {
                assert!(
                    taken.iter().all(|(x, _)| *x != g),
                    "group {g} split: {:?}",
                    bodies(&msgs)
                );
                taken.push((g, vec![m.body().unwrap().to_string()]));
            }
        }
    }
    let mut sizes: Vec<usize> = taken.iter().map(|(_, l)| l.len()).collect();
    for (g, list) in &taken {
        assert_eq!(list[..], sent[g][..list.len()], "group {g}");
    }
    sizes.sort();
    assert_eq!(sizes, [2, 4, 4]);
    // The partly taken group is locked, so nothing is left to receive.
    assert!(t.receive(&url, 10).await.is_empty());
}

#[tokio::test]
async fn a_crashed_consumer_leaves_order_intact() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("crash.fifo", &[]).await;
    for b in ["a1", "a2", "a3"] {
        put(&t, &url, b, "A").await;
    }
    // The consumer takes a1 and dies.
    let taken = t.receive(&url, 1).await;
    assert_eq!(bodies(&taken), ["a1"]);
    t.advance_secs(29);
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_secs(1);
    // a1 is back at the head of its group.
    let again = t.receive(&url, 10).await;
    assert_eq!(bodies(&again), ["a1", "a2", "a3"]);
    assert_eq!(receive_count(&again[0]), "2");
    assert_eq!(receive_count(&again[1]), "1");
    // The second consumer takes all three and dies too.
    t.advance_secs(30);
    let third = t.receive(&url, 2).await;
    assert_eq!(bodies(&third), ["a1", "a2"]);
    assert_eq!(receive_count(&third[0]), "3");
    assert!(t.receive(&url, 10).await.is_empty());
}

#[tokio::test]
async fn receive_request_attempt_id_replays_the_same_messages_and_handles() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("attempt.fifo", &[]).await;
    for b in ["a1", "a2", "a3"] {
        put(&t, &url, b, "A").await;
    }
    let first = receive_attempt(&t, &url, 2, "attempt-1").await;
    assert_eq!(bodies(&first), ["a1", "a2"]);
    let retry = receive_attempt(&t, &url, 2, "attempt-1").await;
    assert_eq!(bodies(&retry), ["a1", "a2"]);
    for (a, b) in first.iter().zip(&retry) {
        assert_eq!(a.message_id(), b.message_id());
        assert_eq!(a.receipt_handle(), b.receipt_handle());
        // A replay is not a new receive.
        assert_eq!(receive_count(b), "1");
    }
    // Another attempt id is a new receive: group A is locked.
    assert!(receive_attempt(&t, &url, 10, "attempt-2").await.is_empty());
    // The original handles work.
    t.delete_message(&url, retry[0].receipt_handle().unwrap())
        .await;
    // After a delete the retry is a new receive and never returns a1.
    let after = receive_attempt(&t, &url, 2, "attempt-1").await;
    assert!(
        after.iter().all(|m| m.body() != Some("a1")),
        "{:?}",
        bodies(&after)
    );
    assert!(
        after.is_empty(),
        "a2 is still in flight: {:?}",
        bodies(&after)
    );
    t.delete_message(&url, first[1].receipt_handle().unwrap())
        .await;
    assert_eq!(
        bodies(&receive_attempt(&t, &url, 2, "attempt-1").await),
        ["a3"]
    );
}

#[tokio::test]
async fn receive_attempt_retry_after_a_visibility_change_is_a_new_receive() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("attempt-cmv.fifo", &[]).await;
    put(&t, &url, "a1", "A").await;
    let first = receive_attempt(&t, &url, 1, "att").await;
    assert_eq!(bodies(&first), ["a1"]);
    t.change_visibility(&url, first[0].receipt_handle().unwrap(), 0)
        .await
        .unwrap();
    // The message was changed: the retry receives it afresh.
    let retry = receive_attempt(&t, &url, 1, "att").await;
    assert_eq!(bodies(&retry), ["a1"]);
    assert_ne!(retry[0].receipt_handle(), first[0].receipt_handle());
    assert_eq!(receive_count(&retry[0]), "2");
}

#[tokio::test]
async fn receive_attempt_retry_resets_visibility_and_lasts_five_minutes() {
    let t = TestServer::start().await;
    let url = t
        .create_fifo_queue("attempt-time.fifo", &[("VisibilityTimeout", "120")])
        .await;
    put(&t, &url, "a1", "A").await;
    put(&t, &url, "a2", "A").await;
    let first = receive_attempt(&t, &url, 1, "att").await;
    assert_eq!(bodies(&first), ["a1"]);
    // 100 s later the retry gets the same handle and restarts the timeout.
    t.advance_secs(100);
    let retry = receive_attempt(&t, &url, 1, "att").await;
    assert_eq!(retry[0].receipt_handle(), first[0].receipt_handle());
    t.advance_secs(110); // 210 s: past the first timeout, within the second
    assert!(t.receive(&url, 10).await.is_empty(), "visibility was reset");
    t.advance_secs(5); // 215 s: hidden until 335 s after this retry
    let retry = receive_attempt(&t, &url, 1, "att").await;
    assert_eq!(retry[0].receipt_handle(), first[0].receipt_handle());
    // Still within five minutes of the attempt: the same again.
    t.advance_secs(84); // 299 s
    let retry = receive_attempt(&t, &url, 1, "att").await;
    assert_eq!(retry[0].receipt_handle(), first[0].receipt_handle());
    // Past five minutes the id is forgotten: a new receive, and a1 is
    // still in flight (the 299 s retry hid it until 419 s).
    t.advance_secs(2); // 301 s
    assert!(receive_attempt(&t, &url, 1, "att").await.is_empty());
    t.advance_secs(118); // 419 s
    let back = receive_attempt(&t, &url, 1, "att").await;
    assert_eq!(bodies(&back), ["a1"]);
    assert_ne!(back[0].receipt_handle(), first[0].receipt_handle());
    assert_eq!(receive_count(&back[0]), "2");
}

#[tokio::test]
async fn an_expired_receipt_handle_is_refused() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("expired.fifo", &[]).await;
    put(&t, &url, "a1", "A").await;
    let first = t.receive_one(&url).await;
    let old = first.receipt_handle().unwrap().to_string();
    t.advance_secs(31);

    let f = t.delete_message_failure(&url, &old).await;
    assert_eq!(f.status, 400);
    assert_service_error(&f.err, "InvalidParameterValue", expired(&old).as_str());
    let err = t.change_visibility(&url, &old, 60).await.unwrap_err();
    assert_service_error(&err, "InvalidParameterValue", expired(&old).as_str());
    // The message is still there.
    assert_eq!(t.counts(&url).await, (1, 0, 0));

    // Received again: the old handle stays expired, the new one works.
    let second = t.receive_one(&url).await;
    assert_eq!(receive_count(&second), "2");
    let f = t.delete_message_failure(&url, &old).await;
    assert_eq!(f.err.message(), Some(expired(&old).as_str()));
    assert_eq!(t.counts(&url).await, (0, 1, 0));
    t.change_visibility(&url, second.receipt_handle().unwrap(), 60)
        .await
        .unwrap();
    t.delete_message(&url, second.receipt_handle().unwrap())
        .await;
    assert_eq!(t.counts(&url).await, (0, 0, 0));

    // In a batch, per entry.
    put(&t, &url, "a2", "A").await;
    let m = t.receive_one(&url).await;
    t.advance_secs(31);
    let out = t
        .client
        .delete_message_batch()
        .queue_url(&url)
        .entries(
            aws_sdk_sqs::types::DeleteMessageBatchRequestEntry::builder()
                .id("e1")
                .receipt_handle(m.receipt_handle().unwrap())
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert!(out.successful().is_empty());
    assert_eq!(out.failed().len(), 1);
    assert_eq!(out.failed()[0].code(), "InvalidParameterValue");
    assert_eq!(
        out.failed()[0].message(),
        Some(expired(m.receipt_handle().unwrap()).as_str())
    );
}

#[tokio::test]
async fn fifo_system_attributes_on_receive() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("attrs.fifo", &[]).await;
    let sent_at = t.now_ms();
    let sent = t.send_to_group(&url, "hello", "grp-1", Some("dd-1")).await;
    t.advance_secs(2);
    let m = t.receive_one(&url).await;
    let attrs: HashMap<String, String> = m
        .attributes()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), v.clone()))
        .collect();
    let mut names: Vec<&str> = attrs.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "ApproximateFirstReceiveTimestamp",
            "ApproximateReceiveCount",
            "MessageDeduplicationId",
            "MessageGroupId",
            "SenderId",
            "SentTimestamp",
            "SequenceNumber",
        ]
    );
    assert_eq!(attrs["MessageGroupId"], "grp-1");
    assert_eq!(attrs["MessageDeduplicationId"], "dd-1");
    assert_eq!(
        Some(attrs["SequenceNumber"].as_str()),
        sent.sequence_number()
    );
    assert_eq!(attrs["SentTimestamp"], sent_at.to_string());
    assert_eq!(
        attrs["ApproximateFirstReceiveTimestamp"],
        (sent_at + 2000).to_string()
    );
    assert_eq!(attrs["ApproximateReceiveCount"], "1");

    // Only what is asked for.
    t.change_visibility(&url, m.receipt_handle().unwrap(), 0)
        .await
        .unwrap();
    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .message_system_attribute_names(MessageSystemAttributeName::SequenceNumber)
        .message_system_attribute_names(MessageSystemAttributeName::MessageGroupId)
        .send()
        .await
        .unwrap();
    let m = &out.messages()[0];
    let a = m.attributes().unwrap();
    assert_eq!(a.len(), 2, "{a:?}");
    assert_eq!(
        a[&MessageSystemAttributeName::SequenceNumber].as_str(),
        sent.sequence_number().unwrap()
    );
    assert_eq!(a[&MessageSystemAttributeName::MessageGroupId], "grp-1");
}

// ---------------------------------------------------------------- fair queues

#[tokio::test]
async fn message_group_id_on_a_standard_queue_keeps_standard_semantics() {
    let t = TestServer::start().await;
    let url = t.create_queue("fair").await;
    let s1 = t.send_to_group(&url, "t1-a", "tenant-1", None).await;
    assert_eq!(s1.sequence_number(), None);
    t.send_to_group(&url, "t1-b", "tenant-1", None).await;
    let out = t
        .client
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("e1", "t2-a", Some("tenant-2"), None))
        .send()
        .await
        .unwrap();
    assert!(out.failed().is_empty());
    assert_eq!(out.successful()[0].sequence_number(), None);

    // No group lock: the second message of tenant-1 comes out while the
    // first is in flight.
    let first = t.receive(&url, 1).await;
    assert_eq!(bodies(&first), ["t1-a"]);
    let second = t.receive(&url, 1).await;
    assert_eq!(bodies(&second), ["t1-b"]);
    let m = &second[0];
    assert_eq!(group_of(m), "tenant-1");
    assert_eq!(sys(m, MessageSystemAttributeName::SequenceNumber), None);
    assert_eq!(
        sys(m, MessageSystemAttributeName::MessageDeduplicationId),
        None
    );
    let third = t.receive_one(&url).await;
    assert_eq!(group_of(&third), "tenant-2");
    // Same content twice is two messages (no deduplication).
    t.send_to_group(&url, "t1-a", "tenant-1", None).await;
    assert_eq!(t.counts(&url).await, (1, 3, 0));
    // A handle whose visibility ran out still deletes on a standard queue.
    t.advance_secs(31);
    t.delete_message(&url, first[0].receipt_handle().unwrap())
        .await;

    // The group id rules apply here too.
    let err = service_error(
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("x")
            .message_group_id("group 123")
            .send()
            .await,
    );
    assert_service_error(
        &err,
        "InvalidParameterValue",
        format!(
            "Value group 123 for parameter MessageGroupId is invalid. Reason: {GROUP_ID_INVALID}"
        )
        .as_str(),
    );
    // A deduplication id is for FIFO queues only.
    let err = service_error(
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("x")
            .message_deduplication_id("d")
            .send()
            .await,
    );
    assert_eq!(err.code(), Some("InvalidParameterValue"));
    // Per-message delay is allowed on standard queues, with a group.
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("later")
        .message_group_id("tenant-3")
        .delay_seconds(5)
        .send()
        .await
        .unwrap();
    assert_eq!(t.counts(&url).await.2, 1);
}

#[tokio::test]
async fn a_duplicate_inside_one_batch_is_answered_as_the_first_entry() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("batch-dup.fifo", &[]).await;
    let out = t
        .client
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("first", "one", Some("g"), Some("same")))
        .entries(entry("second", "two", Some("g"), Some("same")))
        .entries(entry("third", "three", Some("g"), Some("other")))
        .send()
        .await
        .unwrap();
    assert!(out.failed().is_empty());
    let ok = out.successful();
    assert_eq!(ok.len(), 3);
    assert_eq!(ok[1].message_id(), ok[0].message_id());
    assert_eq!(ok[1].sequence_number(), ok[0].sequence_number());
    assert_ne!(ok[2].message_id(), ok[0].message_id());
    assert_eq!(t.counts(&url).await, (2, 0, 0));
    assert_eq!(bodies(&t.receive(&url, 10).await), ["one", "three"]);
}

#[tokio::test]
async fn deleting_the_in_flight_message_wakes_a_long_poll_waiting_on_its_group() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("wake.fifo", &[]).await;
    put(&t, &url, "a1", "A").await;
    put(&t, &url, "a2", "A").await;
    let first = t.receive(&url, 1).await;
    assert_eq!(bodies(&first), ["a1"]);

    let poll = spawn_receive(&t.new_client(REGION), &url, Some(20));
    settle().await;
    assert!(!poll.is_finished(), "group A is locked: the poll must wait");
    // The clock does not move: only the delete can unlock the group.
    t.delete_message(&url, first[0].receipt_handle().unwrap())
        .await;
    let got = finish(poll, 5).await;
    assert_eq!(bodies(&got), ["a2"]);
}

#[tokio::test]
async fn releasing_the_in_flight_message_wakes_a_long_poll_waiting_on_its_group() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("wake-cmv.fifo", &[]).await;
    put(&t, &url, "a1", "A").await;
    put(&t, &url, "a2", "A").await;
    let first = t.receive(&url, 1).await;

    let poll = spawn_receive(&t.new_client(REGION), &url, Some(20));
    settle().await;
    assert!(!poll.is_finished());
    t.change_visibility(&url, first[0].receipt_handle().unwrap(), 0)
        .await
        .unwrap();
    let got = finish(poll, 5).await;
    assert_eq!(bodies(&got), ["a1", "a2"]);
}

#[tokio::test]
async fn visibility_expiry_wakes_a_long_poll_waiting_on_its_group() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("wake-expiry.fifo", &[]).await;
    put(&t, &url, "a1", "A").await;
    assert_eq!(bodies(&t.receive(&url, 1).await), ["a1"]);
    t.advance_secs(15);

    let poll = spawn_receive(&t.new_client(REGION), &url, Some(20));
    settle().await;
    t.advance_secs(14); // 29 s after the receive, 14 s into the poll
    settle().await;
    assert!(!poll.is_finished());
    t.advance_secs(1);
    let got = finish(poll, 5).await;
    assert_eq!(bodies(&got), ["a1"]);
}

#[tokio::test]
async fn a_batch_delete_of_the_in_flight_message_wakes_a_long_poll_waiting_on_its_group() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("wake-batch.fifo", &[]).await;
    put(&t, &url, "a1", "A").await;
    put(&t, &url, "a2", "A").await;
    let first = t.receive(&url, 1).await;

    let poll = spawn_receive(&t.new_client(REGION), &url, Some(20));
    settle().await;
    assert!(!poll.is_finished());
    let out = t
        .client
        .delete_message_batch()
        .queue_url(&url)
        .entries(
            aws_sdk_sqs::types::DeleteMessageBatchRequestEntry::builder()
                .id("e1")
                .receipt_handle(first[0].receipt_handle().unwrap())
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(out.successful().len(), 1);
    let got = finish(poll, 5).await;
    assert_eq!(bodies(&got), ["a2"]);
}

#[tokio::test]
async fn receive_request_attempt_id_charset_and_length() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("attempt-ids.fifo", &[]).await;
    put(&t, &url, "a1", "A").await;
    let too_long = "a".repeat(129);
    for bad in ["has space", too_long.as_str(), "ünïcode"] {
        let err = service_error(
            t.client
                .receive_message()
                .queue_url(&url)
                .receive_request_attempt_id(bad)
                .send()
                .await,
        );
        assert_eq!(err.code(), Some("InvalidParameterValue"), "{bad:?}");
    }
    // Nothing was received by the refused calls.
    assert_eq!(t.counts(&url).await, (1, 0, 0));
    let ok = "a".repeat(128);
    let got = receive_attempt(&t, &url, 1, &ok).await;
    assert_eq!(bodies(&got), ["a1"]);
    let got = receive_attempt(&t, &url, 1, PUNCTUATION).await;
    assert!(got.is_empty(), "group A is locked");
}
