//! Dead-letter queues, redrive policies and message move tasks through the
//! official SDK. Visibility expiry, retention and move-task rates
//! run on the manual clock.

mod common;

use std::collections::HashSet;

use aws_sdk_sqs::error::ProvideErrorMetadata;
use aws_sdk_sqs::types::{
    ListMessageMoveTasksResultEntry, Message, MessageSystemAttributeName,
    MessageSystemAttributeNameForSends, MessageSystemAttributeValue,
};
use base64::Engine as _;
use common::*;

const DAY: u64 = 86_400;
const TRACE: &str = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
const NOT_A_DLQ: &str = "Source queue must be configured as a Dead Letter Queue.";
const SOURCE_MISSING: &str =
    "The resource that you specified for the SourceArn parameter doesn't exist.";
const DESTINATION_MISSING: &str =
    "The resource that you specified for the DestinationArn parameter doesn't exist.";
const ALREADY_RUNNING: &str = "There is already a task running. Only one active task is allowed for a source queue arn at a given time.";
const NON_EXISTENT_QUEUE: &str = "AWS.SimpleQueueService.NonExistentQueue";

// ---------------------------------------------------------------- helpers

/// Asserts the AWS shape of a RedrivePolicy refusal.
fn assert_redrive_refused<E: ProvideErrorMetadata + std::fmt::Debug>(err: &E, value: &str) {
    assert_eq!(
        err.code(),
        Some("InvalidParameterValue"),
        "{value}: {err:?}"
    );
    let message = err.message().unwrap_or_default();
    let prefix = format!("Value {value} for parameter RedrivePolicy is invalid. Reason: ");
    assert!(
        message.starts_with(&prefix) && message.len() > prefix.len(),
        "{message}"
    );
}

/// Receives with a visibility timeout (short poll, every attribute).
async fn receive_vis(t: &TestServer, url: &str, max: i32, visibility: i32) -> Vec<Message> {
    t.client
        .receive_message()
        .queue_url(url)
        .max_number_of_messages(max)
        .visibility_timeout(visibility)
        .wait_time_seconds(0)
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .message_attribute_names("All")
        .send()
        .await
        .expect("ReceiveMessage")
        .messages
        .unwrap_or_default()
}

/// Drives every available message of `url` (a queue with
/// maxReceiveCount `max`) into its dead-letter queue: `max` receives with
/// visibility 0, then the receive attempt that moves them.
async fn poison_all(t: &TestServer, url: &str, max: u32) {
    for _ in 0..max {
        let got = receive_vis(t, url, 10, 0).await;
        assert!(!got.is_empty());
    }
    let got = receive_vis(t, url, 10, 0).await;
    assert!(
        got.is_empty(),
        "everything should have moved: {:?}",
        bodies(&got)
    );
}

async fn start(t: &TestServer, source_arn: &str, dest: Option<&str>, rate: Option<i32>) -> String {
    t.client
        .start_message_move_task()
        .source_arn(source_arn)
        .set_destination_arn(dest.map(String::from))
        .set_max_number_of_messages_per_second(rate)
        .send()
        .await
        .unwrap_or_else(|e| panic!("StartMessageMoveTask: {e:?}"))
        .task_handle()
        .expect("TaskHandle")
        .to_string()
}

async fn tasks(
    t: &TestServer,
    source_arn: &str,
    max: Option<i32>,
) -> Vec<ListMessageMoveTasksResultEntry> {
    t.client
        .list_message_move_tasks()
        .source_arn(source_arn)
        .set_max_results(max)
        .send()
        .await
        .expect("ListMessageMoveTasks")
        .results()
        .to_vec()
}

/// The most recent task of a source.
async fn latest(t: &TestServer, source_arn: &str) -> ListMessageMoveTasksResultEntry {
    let mut list = tasks(t, source_arn, None).await;
    assert_eq!(list.len(), 1, "{list:?}");
    list.remove(0)
}

async fn sends(t: &TestServer, url: &str, prefix: &str, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        ids.push(t.send(url, &format!("{prefix}{i}")).await);
    }
    ids
}

async fn drain(t: &TestServer, url: &str) -> Vec<Message> {
    let mut out = Vec::new();
    loop {
        let got = t.receive(url, 10).await;
        if got.is_empty() {
            return out;
        }
        out.extend(got);
    }
}

/// Waits (real time, at most 2 s) for the background task runner to bring
/// a queue's counters to `expected`; GetQueueAttributes never drives tasks.
async fn counts_soon(t: &TestServer, url: &str, expected: (u64, u64, u64)) {
    for _ in 0..20 {
        if t.counts(url).await == expected {
            return;
        }
        settle().await;
    }
    assert_eq!(t.counts(url).await, expected);
}

fn sorted_bodies(msgs: &[Message]) -> Vec<String> {
    let mut b: Vec<String> = msgs.iter().map(|m| m.body().unwrap().to_string()).collect();
    b.sort();
    b
}

// ---------------------------------------------------------------- policy

#[tokio::test]
async fn redrive_policy_is_validated_at_creation() {
    let t = TestServer::start().await;
    t.create_queue("dlq").await;
    let dlq_arn = arn("dlq");
    let bad = [
        "not json".to_string(),
        "[1,2]".to_string(),
        r#"{"maxReceiveCount":5}"#.to_string(),
        format!(r#"{{"deadLetterTargetArn":"{dlq_arn}"}}"#),
        format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":"many"}}"#),
    ];
    for value in &bad {
        let err = t
            .create_queue_error("src", &[("RedrivePolicy", value)])
            .await;
        assert_redrive_refused(&err, value);
    }
    for count in ["0", "1001", "-1", "\"0\"", "\"1001\""] {
        let value = format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":{count}}}"#);
        let err = t
            .create_queue_error("src", &[("RedrivePolicy", &value)])
            .await;
        assert_redrive_refused(&err, &value);
        let shown = count.trim_matches('"');
        if shown != "-1" {
            assert_eq!(
                err.message(),
                Some(format!("Value {value} for parameter RedrivePolicy is invalid. Reason: Invalid value for maxReceiveCount: {shown}, valid values are from 1 to 1000 both inclusive.").as_str())
            );
        }
    }
    // Nothing was created.
    let listed = t.client.list_queues().send().await.unwrap();
    assert_eq!(listed.queue_urls(), [t.queue_url("dlq")]);

    // The bounds, and counts as numbers or strings.
    for (name, count) in [
        ("s1", "1"),
        ("s1000", "1000"),
        ("sstr", "\"7\""),
        ("snum", "7"),
    ] {
        let value = format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":{count}}}"#);
        let url = t
            .create_queue_with(name, &[("RedrivePolicy", &value)])
            .await;
        let stored = t
            .attribute(&url, "RedrivePolicy")
            .await
            .expect("RedrivePolicy");
        let doc: serde_json::Value = serde_json::from_str(&stored).unwrap();
        assert_eq!(doc["deadLetterTargetArn"], dlq_arn.as_str(), "{stored}");
        let expected = count.trim_matches('"');
        let got = match &doc["maxReceiveCount"] {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        assert_eq!(got, expected, "{stored}");
    }
}

#[tokio::test]
async fn redrive_policy_target_must_exist_and_be_of_the_same_type() {
    let t = TestServer::start().await;
    t.create_queue("std-dlq").await;
    t.create_fifo_queue("fifo-dlq.fifo", &[]).await;

    // No such queue.
    let value = redrive_policy("nowhere", 3);
    let err = t
        .create_queue_error("src", &[("RedrivePolicy", &value)])
        .await;
    assert_redrive_refused(&err, &value);
    // Standard source, FIFO target.
    let value = redrive_policy("fifo-dlq.fifo", 3);
    let err = t
        .create_queue_error("src", &[("RedrivePolicy", &value)])
        .await;
    assert_redrive_refused(&err, &value);
    // FIFO source, standard target.
    let value = redrive_policy("std-dlq", 3);
    let err = t
        .create_queue_error(
            "src.fifo",
            &[("FifoQueue", "true"), ("RedrivePolicy", &value)],
        )
        .await;
    assert_redrive_refused(&err, &value);
    // The same later, through SetQueueAttributes; nothing changes.
    let std_src = t.create_queue("src").await;
    let fifo_src = t.create_fifo_queue("src.fifo", &[]).await;
    let value = redrive_policy("fifo-dlq.fifo", 3);
    assert_redrive_refused(
        &t.set_attributes_error(&std_src, &[("RedrivePolicy", &value)])
            .await,
        &value,
    );
    let value = redrive_policy("std-dlq", 3);
    assert_redrive_refused(
        &t.set_attributes_error(&fifo_src, &[("RedrivePolicy", &value)])
            .await,
        &value,
    );
    let value = redrive_policy("nowhere", 3);
    assert_redrive_refused(
        &t.set_attributes_error(&std_src, &[("RedrivePolicy", &value)])
            .await,
        &value,
    );
    let value = r#"{"deadLetterTargetArn":"x","maxReceiveCount":0}"#;
    assert_redrive_refused(
        &t.set_attributes_error(&std_src, &[("RedrivePolicy", value)])
            .await,
        value,
    );
    assert_eq!(t.attribute(&std_src, "RedrivePolicy").await, None);
    assert_eq!(t.attribute(&fifo_src, "RedrivePolicy").await, None);
    // Matching types are fine.
    t.set_attributes(
        &std_src,
        &[("RedrivePolicy", &redrive_policy("std-dlq", 3))],
    )
    .await;
    t.set_attributes(
        &fifo_src,
        &[("RedrivePolicy", &redrive_policy("fifo-dlq.fifo", 3))],
    )
    .await;
}

#[tokio::test]
async fn redrive_policy_set_later_and_removed_with_an_empty_string() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq").await;
    let src = t.create_queue("src").await;
    t.send(&src, "m").await;
    // No policy: receives go on forever.
    for n in 1..=3 {
        let got = receive_vis(&t, &src, 1, 0).await;
        assert_eq!(receive_count(&got[0]), n.to_string());
    }
    t.set_attributes(&src, &[("RedrivePolicy", &redrive_policy("dlq", 3))])
        .await;
    let listed = t
        .client
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.queue_urls(), std::slice::from_ref(&src));
    // The count so far counts: the next receive attempt moves it.
    assert!(receive_vis(&t, &src, 1, 0).await.is_empty());
    counts_in_cluster_soon(&t, &dlq, (1, 0, 0)).await;

    // Removed: gone from the attributes and from the DLQ's sources, and
    // nothing moves any more.
    t.set_attributes(&src, &[("RedrivePolicy", "")]).await;
    assert!(!t
        .attributes(&src, &["All"])
        .await
        .contains_key("RedrivePolicy"));
    let listed = t
        .client
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .send()
        .await
        .unwrap();
    assert!(listed.queue_urls().is_empty());
    t.send(&src, "n").await;
    for n in 1..=5 {
        let got = receive_vis(&t, &src, 1, 0).await;
        assert_eq!(bodies(&got), ["n"]);
        assert_eq!(receive_count(&got[0]), n.to_string());
    }
    counts_in_cluster_soon(&t, &dlq, (1, 0, 0)).await;
}

// ---------------------------------------------------------------- the move

#[tokio::test]
async fn the_move_happens_on_a_receive_attempt_not_on_failure() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq").await;
    let src = t.create_source_queue("src", "dlq", 2, &[]).await;
    t.send(&src, "poison").await;
    for n in 1..=2 {
        let got = t.receive(&src, 1).await;
        assert_eq!(receive_count(&got[0]), n.to_string());
        t.advance_secs(30);
    }
    // The message is doomed, but nobody polls: it stays where it is.
    t.advance_secs(3_600);
    counts_in_cluster_soon(&t, &src, (1, 0, 0)).await;
    counts_in_cluster_soon(&t, &dlq, (0, 0, 0)).await;

    // The receive that moves it goes on and returns another message.
    t.send(&src, "fresh").await;
    let got = t.receive(&src, 1).await;
    assert_eq!(bodies(&got), ["fresh"]);
    counts_in_cluster_soon(&t, &src, (0, 1, 0)).await;
    counts_in_cluster_soon(&t, &dlq, (1, 0, 0)).await;
    let moved = t.receive_one(&dlq).await;
    assert_eq!(moved.body(), Some("poison"));
}

#[tokio::test]
async fn the_worked_example_visibility_ten_minutes_max_receive_count_three() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("orders-dlq").await;
    let src = t
        .create_source_queue("orders", "orders-dlq", 3, &[("VisibilityTimeout", "600")])
        .await;
    let id = t.send(&src, "order 42").await;
    for n in 1..=3 {
        let got = t.receive(&src, 10).await;
        assert_eq!(bodies(&got), ["order 42"], "receive {n}");
        assert_eq!(receive_count(&got[0]), n.to_string());
        // No delete. Not yet back before ten minutes.
        t.advance_secs(599);
        assert!(t.receive(&src, 10).await.is_empty());
        t.advance_secs(1);
    }
    counts_in_cluster_soon(&t, &dlq, (0, 0, 0)).await;
    // The fourth receive attempt moves it.
    assert!(t.receive(&src, 10).await.is_empty());
    counts_in_cluster_soon(&t, &src, (0, 0, 0)).await;
    counts_in_cluster_soon(&t, &dlq, (1, 0, 0)).await;
    let m = t.receive_one(&dlq).await;
    assert_eq!(m.message_id(), Some(id.as_str()));
    assert_eq!(receive_count(&m), "4");
    assert_eq!(
        sys(&m, MessageSystemAttributeName::DeadLetterQueueSourceArn),
        Some(arn("orders"))
    );
}

#[tokio::test]
async fn the_moved_message_keeps_its_identity_and_gains_the_source_arn() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq").await;
    let src = t.create_source_queue("src", "dlq", 1, &[]).await;
    let sent_at = t.now_ms();
    let sent = t
        .client
        .send_message()
        .queue_url(&src)
        .message_body("payload")
        .message_attributes("color", string_attr("blue"))
        .message_attributes("size", typed_attr("Number", "3"))
        .message_system_attributes(
            MessageSystemAttributeNameForSends::AwsTraceHeader,
            MessageSystemAttributeValue::builder()
                .data_type("String")
                .string_value(TRACE)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    t.advance_secs(5);
    let first = receive_vis(&t, &src, 1, 0).await;
    assert_eq!(receive_count(&first[0]), "1");
    t.advance_secs(5);
    assert!(receive_vis(&t, &src, 1, 0).await.is_empty());

    let m = t.receive_one(&dlq).await;
    assert_eq!(m.message_id(), sent.message_id());
    assert_eq!(m.body(), Some("payload"));
    assert_eq!(m.md5_of_body(), Some(md5_hex(b"payload").as_str()));
    let attrs = m.message_attributes().expect("message attributes");
    assert_eq!(attrs.len(), 2);
    assert_eq!(attrs["color"].string_value(), Some("blue"));
    assert_eq!(attrs["size"].data_type(), "Number");
    assert_eq!(attrs["size"].string_value(), Some("3"));
    assert_eq!(
        m.md5_of_message_attributes(),
        sent.md5_of_message_attributes()
    );
    assert_eq!(
        sys(&m, MessageSystemAttributeName::SentTimestamp),
        Some(sent_at.to_string())
    );
    assert_eq!(
        sys(&m, MessageSystemAttributeName::AwsTraceHeader).as_deref(),
        Some(TRACE)
    );
    assert_eq!(
        sys(&m, MessageSystemAttributeName::SenderId).as_deref(),
        Some(ACCOUNT)
    );
    assert_eq!(
        sys(&m, MessageSystemAttributeName::DeadLetterQueueSourceArn),
        Some(arn("src"))
    );
    // maxReceiveCount 1: the first receive from the DLQ shows 2.
    assert_eq!(receive_count(&m), "2");
    // It was never in the source's DeadLetterQueueSourceArn before.
    assert_eq!(
        sys(
            &first[0],
            MessageSystemAttributeName::DeadLetterQueueSourceArn
        ),
        None
    );
}

#[tokio::test]
async fn a_standard_dead_letter_queue_keeps_the_original_enqueue_time() {
    let t = TestServer::start().await;
    let dlq = t
        .create_queue_with("dlq", &[("MessageRetentionPeriod", "345600")])
        .await;
    let src = t
        .create_source_queue("src", "dlq", 1, &[("MessageRetentionPeriod", "345600")])
        .await;
    t.send(&src, "old").await;
    assert_eq!(t.receive(&src, 1).await.len(), 1);
    t.advance_secs(3 * DAY);
    assert!(t.receive(&src, 1).await.is_empty(), "moved on this attempt");
    counts_in_cluster_soon(&t, &dlq, (1, 0, 0)).await;
    // One day left, not four.
    t.advance_secs(DAY - 10);
    counts_in_cluster_soon(&t, &dlq, (1, 0, 0)).await;
    t.advance_secs(20);
    counts_in_cluster_soon(&t, &dlq, (0, 0, 0)).await;
    assert!(t.receive(&dlq, 10).await.is_empty());
}

#[tokio::test]
async fn a_fifo_dead_letter_queue_resets_the_enqueue_time() {
    let t = TestServer::start().await;
    let dlq = t.create_fifo_queue("dlq.fifo", &[]).await;
    let src = t
        .create_source_queue("src.fifo", "dlq.fifo", 1, &[("FifoQueue", "true")])
        .await;
    t.send_to_group(&src, "old", "g", Some("d")).await;
    assert_eq!(t.receive(&src, 1).await.len(), 1);
    t.advance_secs(3 * DAY);
    assert!(t.receive(&src, 1).await.is_empty(), "moved on this attempt");
    counts_in_cluster_soon(&t, &dlq, (1, 0, 0)).await;
    // Four full days from the move.
    t.advance_secs(DAY + 10);
    counts_in_cluster_soon(&t, &dlq, (1, 0, 0)).await;
    t.advance_secs(3 * DAY - 20);
    counts_in_cluster_soon(&t, &dlq, (1, 0, 0)).await;
    t.advance_secs(20);
    counts_in_cluster_soon(&t, &dlq, (0, 0, 0)).await;
}

#[tokio::test]
async fn a_deleted_dead_letter_queue_loses_nothing() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq").await;
    let src = t.create_source_queue("src", "dlq", 1, &[]).await;
    t.send(&src, "keep me").await;
    assert_eq!(receive_count(&receive_vis(&t, &src, 1, 0).await[0]), "1");
    t.delete_queue(&dlq).await;
    if common::in_cluster() {
        // The dead-letter queue may be in another shard, and a receive
        // may act on what its node read of that shard a moment before the
        // delete (as AWS takes a while to see a queue gone): the message
        // then goes back to its source, not to the deleted queue.
        let got = receive_vis(&t, &src, 1, 0).await;
        if got.is_empty() {
            assert_eq!(t.counts(&src).await, (1, 0, 0), "back in its source");
        } else {
            assert_eq!(bodies(&got), ["keep me"]);
            assert_eq!(receive_count(&got[0]), "2");
        }
        for _ in 0..3 {
            let got = receive_vis(&t, &src, 1, 0).await;
            assert_eq!(bodies(&got), ["keep me"]);
        }
        counts_in_cluster_soon(&t, &src, (1, 0, 0)).await;
        return;
    }
    // Delivered as if there were no policy.
    for n in 2..=4 {
        let got = receive_vis(&t, &src, 1, 0).await;
        assert_eq!(bodies(&got), ["keep me"]);
        assert_eq!(receive_count(&got[0]), n.to_string());
    }
    counts_in_cluster_soon(&t, &src, (1, 0, 0)).await;
}

#[tokio::test]
async fn fifo_source_and_fifo_dead_letter_queue() {
    let t = TestServer::start().await;
    let dlq = t.create_fifo_queue("dlq.fifo", &[]).await;
    let src = t
        .create_source_queue("src.fifo", "dlq.fifo", 1, &[("FifoQueue", "true")])
        .await;
    let mut sent = Vec::new();
    for (b, g) in [("g1-a", "g1"), ("g1-b", "g1"), ("g2-a", "g2")] {
        let out = t
            .send_to_group(&src, b, g, Some(&format!("dedup-{b}")))
            .await;
        sent.push(out);
    }
    // g1-a is received once and released; the next attempt moves it and
    // goes on with the next message of its group.
    let first = receive_vis(&t, &src, 1, 0).await;
    assert_eq!(bodies(&first), ["g1-a"]);
    let next = t.receive(&src, 10).await;
    assert_eq!(sorted_bodies(&next), ["g1-b", "g2-a"]);
    assert!(next.iter().all(|m| receive_count(m) == "1"));
    counts_in_cluster_soon(&t, &dlq, (1, 0, 0)).await;

    let m = t.receive_one(&dlq).await;
    assert_eq!(m.message_id(), sent[0].message_id());
    assert_eq!(m.body(), Some("g1-a"));
    assert_eq!(
        sys(&m, MessageSystemAttributeName::MessageGroupId).as_deref(),
        Some("g1")
    );
    assert_eq!(
        sys(&m, MessageSystemAttributeName::MessageDeduplicationId).as_deref(),
        Some("dedup-g1-a")
    );
    assert_eq!(
        sys(&m, MessageSystemAttributeName::DeadLetterQueueSourceArn),
        Some(arn("src.fifo"))
    );
    assert_eq!(receive_count(&m), "2");
    let seq = sys(&m, MessageSystemAttributeName::SequenceNumber).expect("SequenceNumber");
    assert_eq!(seq.len(), 20, "{seq}");
    assert!(seq.bytes().all(|b| b.is_ascii_digit()));
    // The DLQ's group lock holds too.
    assert!(t.receive(&dlq, 10).await.is_empty());
}

#[tokio::test]
async fn fifo_dead_letter_queue_keeps_group_order() {
    let t = TestServer::start().await;
    let dlq = t.create_fifo_queue("dlq.fifo", &[]).await;
    let src = t
        .create_source_queue("src.fifo", "dlq.fifo", 1, &[("FifoQueue", "true")])
        .await;
    for i in 0..4 {
        t.send_to_group(&src, &format!("m{i}"), "g", Some(&format!("d{i}")))
            .await;
    }
    poison_all(&t, &src, 1).await;
    counts_in_cluster_soon(&t, &dlq, (4, 0, 0)).await;
    let got = t.receive(&dlq, 10).await;
    assert_eq!(bodies(&got), ["m0", "m1", "m2", "m3"]);
}

// ---------------------------------------------------------------- allow policy

#[tokio::test]
async fn redrive_allow_policy_is_enforced() {
    let t = TestServer::start().await;
    let closed = t
        .create_queue_with(
            "closed",
            &[("RedriveAllowPolicy", r#"{"redrivePermission":"denyAll"}"#)],
        )
        .await;
    let by_queue = format!(
        r#"{{"redrivePermission":"byQueue","sourceQueueArns":["{}"]}}"#,
        arn("allowed")
    );
    let picky = t
        .create_queue_with("picky", &[("RedriveAllowPolicy", &by_queue)])
        .await;
    let open = t
        .create_queue_with(
            "open",
            &[("RedriveAllowPolicy", r#"{"redrivePermission":"allowAll"}"#)],
        )
        .await;

    // denyAll: no source at all, at creation or later.
    let value = redrive_policy("closed", 2);
    assert_redrive_refused(
        &t.create_queue_error("allowed", &[("RedrivePolicy", &value)])
            .await,
        &value,
    );
    let other = t.create_queue("other").await;
    assert_redrive_refused(
        &t.set_attributes_error(&other, &[("RedrivePolicy", &value)])
            .await,
        &value,
    );
    // byQueue: only the listed sources.
    let value = redrive_policy("picky", 2);
    assert_redrive_refused(
        &t.set_attributes_error(&other, &[("RedrivePolicy", &value)])
            .await,
        &value,
    );
    let allowed = t
        .create_queue_with("allowed", &[("RedrivePolicy", &value)])
        .await;
    assert_eq!(
        t.attribute(&allowed, "RedrivePolicy")
            .await
            .map(
                |s| serde_json::from_str::<serde_json::Value>(&s).unwrap()["deadLetterTargetArn"]
                    .clone()
            ),
        Some(serde_json::Value::String(arn("picky")))
    );
    // allowAll: anyone.
    t.set_attributes(&other, &[("RedrivePolicy", &redrive_policy("open", 2))])
        .await;

    // The policies read back as set.
    let stored = t.attribute(&picky, "RedriveAllowPolicy").await.unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&stored).unwrap(),
        serde_json::from_str::<serde_json::Value>(&by_queue).unwrap()
    );
    let stored = t.attribute(&closed, "RedriveAllowPolicy").await.unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&stored).unwrap()["redrivePermission"],
        "denyAll"
    );
    assert!(t.attribute(&open, "RedriveAllowPolicy").await.is_some());
    let fresh = t.create_queue("fresh").await;
    assert_eq!(t.attribute(&fresh, "RedriveAllowPolicy").await, None);

    // Opening the closed queue later lets sources in.
    t.set_attributes(
        &closed,
        &[("RedriveAllowPolicy", r#"{"redrivePermission":"allowAll"}"#)],
    )
    .await;
    t.set_attributes(&fresh, &[("RedrivePolicy", &redrive_policy("closed", 2))])
        .await;
}

#[tokio::test]
async fn redrive_allow_policy_values_are_validated() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq").await;
    let eleven: Vec<String> = (0..11)
        .map(|i| format!("\"{}\"", arn(&format!("s{i}"))))
        .collect();
    let ten: Vec<String> = (0..10)
        .map(|i| format!("\"{}\"", arn(&format!("s{i}"))))
        .collect();
    let bad = [
        "not json".to_string(),
        r#"{"redrivePermission":"sometimes"}"#.to_string(),
        r#"{"sourceQueueArns":[]}"#.to_string(),
        format!(
            r#"{{"redrivePermission":"byQueue","sourceQueueArns":[{}]}}"#,
            eleven.join(",")
        ),
        format!(
            r#"{{"redrivePermission":"allowAll","sourceQueueArns":[{}]}}"#,
            ten[0]
        ),
    ];
    for value in &bad {
        let err = t
            .set_attributes_error(&dlq, &[("RedriveAllowPolicy", value)])
            .await;
        assert!(
            matches!(
                err.code(),
                Some("InvalidAttributeValue" | "InvalidParameterValue")
            ),
            "{value}: {err:?}"
        );
        assert_eq!(
            t.attribute(&dlq, "RedriveAllowPolicy").await,
            None,
            "{value}"
        );
    }
    let value = format!(
        r#"{{"redrivePermission":"byQueue","sourceQueueArns":[{}]}}"#,
        ten.join(",")
    );
    t.set_attributes(&dlq, &[("RedriveAllowPolicy", &value)])
        .await;
    // Removable with "".
    t.set_attributes(&dlq, &[("RedriveAllowPolicy", "")]).await;
    assert_eq!(t.attribute(&dlq, "RedriveAllowPolicy").await, None);
}

// ---------------------------------------------------------------- listing sources

#[tokio::test]
async fn list_dead_letter_source_queues_paginates() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq").await;
    let other_dlq = t.create_queue("other-dlq").await;
    let mut expected = HashSet::new();
    for i in 0..5 {
        expected.insert(
            t.create_source_queue(&format!("src-{i}"), "dlq", 3, &[])
                .await,
        );
    }
    t.create_source_queue("elsewhere", "other-dlq", 3, &[])
        .await;
    t.create_queue("unrelated").await;

    let all = t
        .client
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .send()
        .await
        .unwrap();
    assert_eq!(all.next_token(), None, "no NextToken without MaxResults");
    let got: HashSet<String> = all.queue_urls().iter().cloned().collect();
    assert_eq!(got, expected);
    assert_eq!(all.queue_urls().len(), 5);

    let mut pages = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let page = t
            .client
            .list_dead_letter_source_queues()
            .queue_url(&dlq)
            .max_results(2)
            .set_next_token(token.clone())
            .send()
            .await
            .unwrap();
        pages.push(page.queue_urls().to_vec());
        token = page.next_token().map(String::from);
        if token.is_none() {
            break;
        }
        assert!(pages.len() < 10, "pagination does not end");
    }
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [2, 2, 1]);
    let flat: Vec<String> = pages.into_iter().flatten().collect();
    let unique: HashSet<String> = flat.iter().cloned().collect();
    assert_eq!(unique.len(), 5, "{flat:?}");
    assert_eq!(unique, expected);

    // Exactly a page's worth: no token.
    let page = t
        .client
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .max_results(5)
        .send()
        .await
        .unwrap();
    assert_eq!(page.queue_urls().len(), 5);
    assert_eq!(page.next_token(), None);

    let other = t
        .client
        .list_dead_letter_source_queues()
        .queue_url(&other_dlq)
        .send()
        .await
        .unwrap();
    assert_eq!(other.queue_urls(), [t.queue_url("elsewhere")]);
    let none = t
        .client
        .list_dead_letter_source_queues()
        .queue_url(t.queue_url("unrelated"))
        .send()
        .await
        .unwrap();
    assert!(none.queue_urls().is_empty());
    // Out of range.
    for bad in [0, 1001] {
        let err = service_error(
            t.client
                .list_dead_letter_source_queues()
                .queue_url(&dlq)
                .max_results(bad)
                .send()
                .await,
        );
        assert_eq!(err.code(), Some("InvalidParameterValue"), "{bad}");
    }
}

// ---------------------------------------------------------------- move tasks

#[tokio::test]
async fn start_message_move_task_errors() {
    let t = TestServer::start().await;
    t.create_queue("dlq").await;
    t.create_source_queue("src", "dlq", 1, &[]).await;
    t.create_queue("lonely").await;

    // Not anyone's dead-letter queue.
    let f = failure(
        t.client
            .start_message_move_task()
            .source_arn(arn("lonely"))
            .send()
            .await,
    );
    assert_eq!(f.status, 400);
    assert_service_error(&f.err, "InvalidParameterValue", NOT_A_DLQ);
    // No such source.
    let f = failure(
        t.client
            .start_message_move_task()
            .source_arn(arn("missing"))
            .send()
            .await,
    );
    assert_eq!(f.status, 404);
    assert!(f.err.is_resource_not_found_exception(), "{:?}", f.err);
    assert_service_error(&f.err, "ResourceNotFoundException", SOURCE_MISSING);
    // No such destination.
    let f = failure(
        t.client
            .start_message_move_task()
            .source_arn(arn("dlq"))
            .destination_arn(arn("missing"))
            .send()
            .await,
    );
    assert_eq!(f.status, 404);
    assert!(f.err.is_resource_not_found_exception());
    assert_eq!(f.err.message(), Some(DESTINATION_MISSING));
    // Rate above 500 (and below 1).
    for rate in [501, 0] {
        let err = service_error(
            t.client
                .start_message_move_task()
                .source_arn(arn("dlq"))
                .max_number_of_messages_per_second(rate)
                .send()
                .await,
        );
        assert_eq!(err.code(), Some("InvalidParameterValue"), "{rate}");
    }
    // None of that started a task.
    assert!(tasks(&t, &arn("dlq"), Some(10)).await.is_empty());
    // 500 is the maximum allowed.
    start(&t, &arn("dlq"), None, Some(500)).await;
    let task = latest(&t, &arn("dlq")).await;
    assert_eq!(task.max_number_of_messages_per_second(), Some(500));
    assert_eq!(task.status(), Some("COMPLETED"));
}

#[tokio::test]
async fn one_active_task_per_source() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq").await;
    let src = t.create_source_queue("src", "dlq", 1, &[]).await;
    sends(&t, &src, "m", 3).await;
    poison_all(&t, &src, 1).await;
    counts_in_cluster_soon(&t, &dlq, (3, 0, 0)).await;

    let handle = start(&t, &arn("dlq"), None, Some(1)).await;
    let f = failure(
        t.client
            .start_message_move_task()
            .source_arn(arn("dlq"))
            .send()
            .await,
    );
    assert_eq!(f.status, 400);
    assert_service_error(&f.err, "InvalidParameterValue", ALREADY_RUNNING);
    assert_eq!(tasks(&t, &arn("dlq"), Some(10)).await.len(), 1);
    // Once it has finished another may start.
    t.advance_secs(2);
    let done = latest(&t, &arn("dlq")).await;
    assert_eq!(done.status(), Some("COMPLETED"));
    assert_eq!(done.approximate_number_of_messages_moved(), 3);
    let second = start(&t, &arn("dlq"), None, None).await;
    assert_ne!(second, handle);
}

#[tokio::test]
async fn without_a_destination_each_message_returns_to_its_own_source() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("shared-dlq").await;
    let a = t.create_source_queue("src-a", "shared-dlq", 1, &[]).await;
    let b = t.create_source_queue("src-b", "shared-dlq", 1, &[]).await;
    // Interleave the arrivals in the DLQ: a0, b0, a1, b1.
    for i in 0..2 {
        t.client
            .send_message()
            .queue_url(&a)
            .message_body(format!("a{i}"))
            .message_attributes("origin", string_attr("a"))
            .send()
            .await
            .unwrap();
        poison_all(&t, &a, 1).await;
        t.send(&b, &format!("b{i}")).await;
        poison_all(&t, &b, 1).await;
    }
    let in_dlq = receive_vis(&t, &dlq, 10, 0).await;
    assert_eq!(sorted_bodies(&in_dlq), ["a0", "a1", "b0", "b1"]);
    let dlq_ids: HashSet<String> = in_dlq
        .iter()
        .map(|m| m.message_id().unwrap().to_string())
        .collect();

    let started_at = t.now_ms();
    let handle = start(&t, &arn("shared-dlq"), None, None).await;
    let task = latest(&t, &arn("shared-dlq")).await;
    assert_eq!(task.status(), Some("COMPLETED"), "{task:?}");
    assert_eq!(task.approximate_number_of_messages_moved(), 4);
    assert_eq!(task.approximate_number_of_messages_to_move(), Some(4));
    assert_eq!(task.source_arn(), Some(arn("shared-dlq").as_str()));
    assert_eq!(task.destination_arn(), None);
    assert_eq!(task.max_number_of_messages_per_second(), None);
    assert_eq!(task.failure_reason(), None);
    assert_eq!(task.task_handle(), None, "TaskHandle only while RUNNING");
    assert_eq!(task.started_timestamp(), started_at as i64);
    assert!(!handle.is_empty());
    counts_in_cluster_soon(&t, &dlq, (0, 0, 0)).await;
    // In a cluster a source in another shard takes its messages in from the
    // outbox a moment after the task has ended.
    counts_in_cluster_soon(&t, &a, (2, 0, 0)).await;
    counts_in_cluster_soon(&t, &b, (2, 0, 0)).await;

    let back_a = drain(&t, &a).await;
    let back_b = drain(&t, &b).await;
    assert_eq!(sorted_bodies(&back_a), ["a0", "a1"]);
    assert_eq!(sorted_bodies(&back_b), ["b0", "b1"]);
    for m in back_a.iter().chain(&back_b) {
        // New messages: new id, receive count reset.
        assert!(!dlq_ids.contains(m.message_id().unwrap()), "{m:?}");
        assert_eq!(receive_count(m), "1");
    }
    for m in &back_a {
        assert_eq!(
            m.message_attributes().unwrap()["origin"].string_value(),
            Some("a")
        );
    }
}

#[tokio::test]
async fn with_a_destination_every_message_goes_there() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq").await;
    let a = t.create_source_queue("src-a", "dlq", 1, &[]).await;
    let b = t.create_source_queue("src-b", "dlq", 1, &[]).await;
    let dest = t.create_queue("dest").await;
    sends(&t, &a, "a", 2).await;
    sends(&t, &b, "b", 2).await;
    poison_all(&t, &a, 1).await;
    poison_all(&t, &b, 1).await;
    counts_in_cluster_soon(&t, &dlq, (4, 0, 0)).await;

    start(&t, &arn("dlq"), Some(&arn("dest")), None).await;
    let task = latest(&t, &arn("dlq")).await;
    assert_eq!(task.status(), Some("COMPLETED"));
    assert_eq!(task.destination_arn(), Some(arn("dest").as_str()));
    assert_eq!(task.approximate_number_of_messages_moved(), 4);
    counts_in_cluster_soon(&t, &dest, (4, 0, 0)).await;
    counts_in_cluster_soon(&t, &a, (0, 0, 0)).await;
    counts_in_cluster_soon(&t, &b, (0, 0, 0)).await;
    counts_in_cluster_soon(&t, &dlq, (0, 0, 0)).await;
    let moved = drain(&t, &dest).await;
    assert_eq!(sorted_bodies(&moved), ["a0", "a1", "b0", "b1"]);
    for m in &moved {
        assert_eq!(receive_count(m), "1");
    }
}

#[tokio::test]
async fn max_number_of_messages_per_second_is_honoured() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq").await;
    let src = t.create_source_queue("src", "dlq", 1, &[]).await;
    sends(&t, &src, "m", 7).await;
    poison_all(&t, &src, 1).await;
    counts_in_cluster_soon(&t, &dlq, (7, 0, 0)).await;

    let handle = start(&t, &arn("dlq"), None, Some(2)).await;
    let task = latest(&t, &arn("dlq")).await;
    assert_eq!(task.status(), Some("RUNNING"));
    assert_eq!(task.task_handle(), Some(handle.as_str()));
    assert_eq!(task.max_number_of_messages_per_second(), Some(2));
    assert_eq!(task.approximate_number_of_messages_to_move(), Some(7));
    assert_eq!(task.approximate_number_of_messages_moved(), 2);
    counts_in_cluster_soon(&t, &src, (2, 0, 0)).await;
    // Asking again without time passing moves nothing more.
    assert_eq!(
        latest(&t, &arn("dlq"))
            .await
            .approximate_number_of_messages_moved(),
        2
    );
    counts_in_cluster_soon(&t, &src, (2, 0, 0)).await;

    t.advance_secs(1);
    assert_eq!(
        latest(&t, &arn("dlq"))
            .await
            .approximate_number_of_messages_moved(),
        4
    );
    counts_in_cluster_soon(&t, &src, (4, 0, 0)).await;
    counts_in_cluster_soon(&t, &dlq, (3, 0, 0)).await;
    t.advance_secs(1);
    assert_eq!(
        latest(&t, &arn("dlq"))
            .await
            .approximate_number_of_messages_moved(),
        6
    );
    t.advance_secs(1);
    let done = latest(&t, &arn("dlq")).await;
    assert_eq!(done.approximate_number_of_messages_moved(), 7);
    assert_eq!(done.status(), Some("COMPLETED"));
    assert_eq!(done.task_handle(), None);
    counts_in_cluster_soon(&t, &src, (7, 0, 0)).await;
    counts_in_cluster_soon(&t, &dlq, (0, 0, 0)).await;
}

#[tokio::test]
async fn the_task_handle_is_base64_json_of_task_id_and_source_arn() {
    let t = TestServer::start().await;
    t.create_queue("dlq").await;
    t.create_source_queue("src", "dlq", 1, &[]).await;
    let handle = start(&t, &arn("dlq"), None, None).await;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(&handle)
        .expect("base64");
    let doc: serde_json::Value = serde_json::from_slice(&raw).expect("JSON");
    let obj = doc.as_object().expect("object");
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["sourceArn", "taskId"]);
    assert_eq!(doc["sourceArn"], arn("dlq").as_str());
    assert!(is_uuid(doc["taskId"].as_str().unwrap()), "{doc}");
}

#[tokio::test]
async fn cancel_keeps_what_was_moved() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq").await;
    let src = t.create_source_queue("src", "dlq", 1, &[]).await;
    sends(&t, &src, "m", 5).await;
    poison_all(&t, &src, 1).await;

    let handle = start(&t, &arn("dlq"), None, Some(1)).await;
    t.advance_secs(1);
    assert_eq!(
        latest(&t, &arn("dlq"))
            .await
            .approximate_number_of_messages_moved(),
        2
    );
    let out = t
        .client
        .cancel_message_move_task()
        .task_handle(&handle)
        .send()
        .await
        .unwrap();
    assert_eq!(out.approximate_number_of_messages_moved(), 2);
    let task = latest(&t, &arn("dlq")).await;
    assert!(
        matches!(task.status(), Some("CANCELLING" | "CANCELLED")),
        "{task:?}"
    );
    assert_eq!(task.task_handle(), None);
    // Time passes: nothing more moves.
    t.advance_secs(10);
    let task = latest(&t, &arn("dlq")).await;
    assert_eq!(task.status(), Some("CANCELLED"));
    assert_eq!(task.approximate_number_of_messages_moved(), 2);
    assert_eq!(task.approximate_number_of_messages_to_move(), Some(5));
    counts_in_cluster_soon(&t, &src, (2, 0, 0)).await;
    counts_in_cluster_soon(&t, &dlq, (3, 0, 0)).await;
    // A cancelled task cannot be cancelled again; a new one may start.
    assert!(t
        .client
        .cancel_message_move_task()
        .task_handle(&handle)
        .send()
        .await
        .is_err());
    start(&t, &arn("dlq"), None, None).await;
    let list = tasks(&t, &arn("dlq"), Some(10)).await;
    let statuses: Vec<&str> = list.iter().map(|e| e.status().unwrap()).collect();
    assert_eq!(statuses, ["COMPLETED", "CANCELLED"]);
    assert_eq!(list[0].approximate_number_of_messages_moved(), 3);
    counts_in_cluster_soon(&t, &src, (5, 0, 0)).await;
}

#[tokio::test]
async fn cancel_message_move_task_errors() {
    let t = TestServer::start().await;
    t.create_queue("dlq").await;
    t.create_source_queue("src", "dlq", 1, &[]).await;
    let b64 = |s: String| base64::engine::general_purpose::STANDARD.encode(s);

    let f = failure(
        t.client
            .cancel_message_move_task()
            .task_handle("garbage")
            .send()
            .await,
    );
    assert_eq!(f.status, 400);
    assert_service_error(
        &f.err,
        "InvalidParameterValue",
        "Value for parameter TaskHandle is invalid.",
    );

    let unknown_task = b64(format!(
        r#"{{"taskId":"9f1f6ab4-6d4c-4d6e-8a8e-2f0f5f1c2b3a","sourceArn":"{}"}}"#,
        arn("dlq")
    ));
    let f = failure(
        t.client
            .cancel_message_move_task()
            .task_handle(unknown_task)
            .send()
            .await,
    );
    assert_eq!(f.status, 404);
    assert!(f.err.is_resource_not_found_exception());
    assert_eq!(f.err.message(), Some("Task does not exist."));

    let unknown_source = b64(format!(
        r#"{{"taskId":"9f1f6ab4-6d4c-4d6e-8a8e-2f0f5f1c2b3a","sourceArn":"{}"}}"#,
        arn("missing")
    ));
    let f = failure(
        t.client
            .cancel_message_move_task()
            .task_handle(unknown_source)
            .send()
            .await,
    );
    assert_eq!(f.status, 404);
    assert!(f.err.is_resource_not_found_exception());
    assert_eq!(f.err.message(), Some(SOURCE_MISSING));
}

#[tokio::test]
async fn list_message_move_tasks_most_recent_first_up_to_ten() {
    let t = TestServer::start().await;
    t.create_queue("dlq").await;
    t.create_queue("dest").await;
    t.create_source_queue("src", "dlq", 1, &[]).await;
    // A queue with no tasks, and a missing one.
    assert!(tasks(&t, &arn("src"), Some(10)).await.is_empty());
    let f = failure(
        t.client
            .list_message_move_tasks()
            .source_arn(arn("missing"))
            .send()
            .await,
    );
    assert_eq!(f.status, 404);
    assert_eq!(f.err.code(), Some("ResourceNotFoundException"));

    let mut started = Vec::new();
    for i in 0..12 {
        started.push(t.now_ms() as i64);
        let dest = (i % 2 == 1).then(|| arn("dest"));
        start(&t, &arn("dlq"), dest.as_deref(), None).await;
        // An empty DLQ: done at once.
        assert_eq!(latest(&t, &arn("dlq")).await.status(), Some("COMPLETED"));
        t.advance_secs(1);
    }
    // Default: the most recent one.
    let one = tasks(&t, &arn("dlq"), None).await;
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].started_timestamp(), started[11]);
    // Up to ten, most recent first.
    let ten = tasks(&t, &arn("dlq"), Some(10)).await;
    assert_eq!(ten.len(), 10);
    let stamps: Vec<i64> = ten.iter().map(|e| e.started_timestamp()).collect();
    let expected: Vec<i64> = started[2..].iter().rev().copied().collect();
    assert_eq!(stamps, expected);
    for (e, i) in ten.iter().zip((2..12).rev()) {
        assert_eq!(e.status(), Some("COMPLETED"));
        assert_eq!(e.approximate_number_of_messages_moved(), 0);
        assert_eq!(e.approximate_number_of_messages_to_move(), Some(0));
        assert_eq!(e.task_handle(), None);
        assert_eq!(e.failure_reason(), None);
        // DestinationArn only when it was given.
        let dest = (i % 2 == 1).then(|| arn("dest"));
        assert_eq!(e.destination_arn(), dest.as_deref(), "task {i}");
    }
    let three = tasks(&t, &arn("dlq"), Some(3)).await;
    assert_eq!(three.len(), 3);
    assert_eq!(three[0].started_timestamp(), started[11]);
    for bad in [0, 11] {
        let err = service_error(
            t.client
                .list_message_move_tasks()
                .source_arn(arn("dlq"))
                .max_results(bad)
                .send()
                .await,
        );
        assert_eq!(err.code(), Some("InvalidParameterValue"), "{bad}");
    }
}

#[tokio::test]
async fn deleting_the_destination_mid_task_fails_it_and_loses_nothing() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq").await;
    let src = t.create_source_queue("src", "dlq", 1, &[]).await;
    let dest = t.create_queue("dest").await;
    sends(&t, &src, "m", 5).await;
    poison_all(&t, &src, 1).await;

    start(&t, &arn("dlq"), Some(&arn("dest")), Some(1)).await;
    assert_eq!(
        latest(&t, &arn("dlq"))
            .await
            .approximate_number_of_messages_moved(),
        1
    );
    t.delete_queue(&dest).await;
    t.advance_secs(1);
    let task = latest(&t, &arn("dlq")).await;
    assert_eq!(task.status(), Some("FAILED"), "{task:?}");
    assert_eq!(task.failure_reason(), Some(NON_EXISTENT_QUEUE));
    assert_eq!(task.task_handle(), None);
    assert_eq!(task.approximate_number_of_messages_moved(), 1);
    assert_eq!(task.approximate_number_of_messages_to_move(), Some(5));
    // Everything not moved is still in the dead-letter queue.
    t.advance_secs(10);
    counts_in_cluster_soon(&t, &dlq, (4, 0, 0)).await;
    let left = drain(&t, &dlq).await;
    assert_eq!(sorted_bodies(&left).len(), 4);
    assert_eq!(latest(&t, &arn("dlq")).await.status(), Some("FAILED"));
}

#[tokio::test]
async fn a_deleted_original_source_fails_the_task_and_loses_nothing() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq").await;
    let gone = t.create_source_queue("gone", "dlq", 1, &[]).await;
    t.create_source_queue("stays", "dlq", 1, &[]).await;
    sends(&t, &gone, "g", 3).await;
    poison_all(&t, &gone, 1).await;
    t.delete_queue(&gone).await;

    start(&t, &arn("dlq"), None, None).await;
    let task = latest(&t, &arn("dlq")).await;
    assert_eq!(task.status(), Some("FAILED"), "{task:?}");
    assert_eq!(task.failure_reason(), Some(NON_EXISTENT_QUEUE));
    assert_eq!(task.approximate_number_of_messages_moved(), 0);
    counts_in_cluster_soon(&t, &dlq, (3, 0, 0)).await;
    let left = drain(&t, &dlq).await;
    assert_eq!(sorted_bodies(&left), ["g0", "g1", "g2"]);
    for m in &left {
        assert_eq!(
            sys(m, MessageSystemAttributeName::DeadLetterQueueSourceArn),
            Some(arn("gone"))
        );
    }
}

#[tokio::test]
async fn moved_messages_join_the_back_of_their_fifo_group() {
    let t = TestServer::start().await;
    let dlq = t.create_fifo_queue("dlq.fifo", &[]).await;
    let src = t
        .create_source_queue("src.fifo", "dlq.fifo", 1, &[("FifoQueue", "true")])
        .await;
    let original = t.send_to_group(&src, "first", "g", Some("first")).await;
    poison_all(&t, &src, 1).await;
    counts_in_cluster_soon(&t, &dlq, (1, 0, 0)).await;
    let second = t.send_to_group(&src, "second", "g", Some("second")).await;
    t.send_to_group(&src, "third", "g", Some("third")).await;

    start(&t, &arn("dlq.fifo"), None, None).await;
    assert_eq!(
        latest(&t, &arn("dlq.fifo")).await.status(),
        Some("COMPLETED")
    );
    counts_in_cluster_soon(&t, &src, (3, 0, 0)).await;
    let got = t.receive(&src, 10).await;
    assert_eq!(bodies(&got), ["second", "third", "first"]);
    let back = &got[2];
    assert_ne!(back.message_id(), original.message_id());
    assert_eq!(receive_count(back), "1");
    assert_eq!(
        sys(back, MessageSystemAttributeName::MessageGroupId).as_deref(),
        Some("g")
    );
    let seq = |m: &Message| -> u128 {
        sys(m, MessageSystemAttributeName::SequenceNumber)
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(seq(back) > seq(&got[1]));
    assert_eq!(
        sys(&got[0], MessageSystemAttributeName::SequenceNumber).as_deref(),
        second.sequence_number()
    );
}

#[tokio::test]
async fn tasks_progress_with_the_clock_alone_and_wake_long_polls() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq").await;
    let src = t.create_source_queue("src", "dlq", 1, &[]).await;
    sends(&t, &src, "m", 3).await;
    poison_all(&t, &src, 1).await;
    start(&t, &arn("dlq"), None, Some(1)).await;
    // The first second's worth moves at once; nobody lists the tasks.
    counts_soon(&t, &src, (1, 0, 0)).await;
    assert_eq!(receive_vis(&t, &src, 10, 600).await.len(), 1);

    // A long poll on the destination is answered when the clock brings
    // the next message, without any other request.
    let client = t.new_client(REGION);
    let poll_url = src.clone();
    let poll = tokio::spawn(async move {
        client
            .receive_message()
            .queue_url(&poll_url)
            .wait_time_seconds(20)
            .send()
            .await
            .expect("ReceiveMessage")
            .messages
            .unwrap_or_default()
    });
    settle().await;
    assert!(!poll.is_finished());
    t.advance_secs(1);
    let got = finish(poll, 5).await;
    assert_eq!(got.len(), 1);
    counts_in_cluster_soon(&t, &dlq, (1, 0, 0)).await;
    t.advance_secs(1);
    counts_soon(&t, &dlq, (0, 0, 0)).await;
    counts_in_cluster_soon(&t, &src, (1, 2, 0)).await;
}

/// Asserts a queue's counts; in a cluster, as [`counts_soon`] does: a
/// message a task's timer moved into a queue of another shard is handed
/// across and arrives a moment after the move, with no request waiting
/// for it.
async fn counts_in_cluster_soon(t: &TestServer, url: &str, expected: (u64, u64, u64)) {
    if common::in_cluster() {
        counts_soon(t, url, expected).await;
    } else {
        assert_eq!(t.counts(url).await, expected);
    }
}
