//! FIFO essentials over the legacy query protocol, with raw
//! form posts: the parameter names that differ on that wire
//! (`MessageGroupId`, `MessageDeduplicationId`,
//! `SendMessageBatchRequestEntry.N.MessageGroupId`, `AttributeName.N`,
//! `ReceiveRequestAttemptId`) and the XML that comes back.

mod common;

use std::collections::HashMap;

use common::*;

const NO_GROUP: &str = "The request must contain the parameter MessageGroupId.";

/// A query request to `/`, with Action and Version added.
async fn query(t: &TestServer, action: &str, params: &[(&str, &str)]) -> Raw {
    query_at(t, "/", action, params).await
}

async fn query_at(t: &TestServer, path: &str, action: &str, params: &[(&str, &str)]) -> Raw {
    let mut all = vec![("Action", action), ("Version", "2012-11-05")];
    all.extend_from_slice(params);
    t.form_post(path, &all).await
}

async fn ok(t: &TestServer, action: &str, params: &[(&str, &str)]) -> String {
    let raw = query(t, action, params).await;
    assert_eq!(raw.status, 200, "{action}: {}", raw.body);
    let xml = raw.compact_xml();
    assert!(
        xml.contains(&format!("<{action}Response xmlns=\"{XMLNS}\">")),
        "{xml}"
    );
    xml
}

/// Checks a query error response: status, Type, Code and Message.
fn assert_error(raw: &Raw, status: u16, code: &str, message: &str) {
    assert_eq!(raw.status, status, "{}", raw.body);
    let xml = raw.compact_xml();
    assert!(xml.contains("<ErrorResponse"), "{xml}");
    assert_eq!(xml_text(&xml, "Type"), "Sender");
    assert_eq!(xml_text(&xml, "Code"), code);
    assert_eq!(xml_text(&xml, "Message"), message);
}

async fn create_fifo(t: &TestServer, name: &str, cbd: bool) -> String {
    let xml = ok(
        t,
        "CreateQueue",
        &[
            ("QueueName", name),
            ("Attribute.1.Name", "FifoQueue"),
            ("Attribute.1.Value", "true"),
            ("Attribute.2.Name", "ContentBasedDeduplication"),
            ("Attribute.2.Value", if cbd { "true" } else { "false" }),
        ],
    )
    .await;
    let url = xml_text(&xml, "QueueUrl");
    assert_eq!(url, t.queue_url(name));
    url
}

/// (MessageId, SequenceNumber) of a successful SendMessage.
async fn send(t: &TestServer, url: &str, body: &str, group: &str, dedup: &str) -> (String, String) {
    let xml = ok(
        t,
        "SendMessage",
        &[
            ("QueueUrl", url),
            ("MessageBody", body),
            ("MessageGroupId", group),
            ("MessageDeduplicationId", dedup),
        ],
    )
    .await;
    assert_eq!(xml_text(&xml, "MD5OfMessageBody"), md5_hex(body.as_bytes()));
    (
        xml_text(&xml, "MessageId"),
        xml_text(&xml, "SequenceNumber"),
    )
}

fn assert_sequence(s: &str) -> u128 {
    assert_eq!(s.len(), 20, "SequenceNumber {s:?}");
    assert!(s.bytes().all(|b| b.is_ascii_digit()), "{s:?}");
    s.parse().unwrap()
}

/// One `<Message>` of a ReceiveMessage response.
#[derive(Debug)]
struct Msg {
    id: String,
    handle: String,
    body: String,
    attributes: HashMap<String, String>,
}

fn messages(xml: &str) -> Vec<Msg> {
    xml_all(xml, "Message")
        .iter()
        .map(|m| Msg {
            id: xml_text(m, "MessageId"),
            handle: xml_text(m, "ReceiptHandle"),
            body: xml_text(m, "Body"),
            attributes: xml_all(m, "Attribute")
                .iter()
                .map(|a| (xml_text(a, "Name"), xml_text(a, "Value")))
                .collect(),
        })
        .collect()
}

async fn receive(t: &TestServer, url: &str, extra: &[(&str, &str)]) -> Vec<Msg> {
    let mut params = vec![("QueueUrl", url)];
    if !extra.iter().any(|(k, _)| *k == "MaxNumberOfMessages") {
        params.push(("MaxNumberOfMessages", "10"));
    }
    if !extra.iter().any(|(k, _)| k.starts_with("AttributeName")) {
        params.push(("AttributeName.1", "All"));
    }
    params.extend_from_slice(extra);
    let xml = ok(t, "ReceiveMessage", &params).await;
    messages(&xml)
}

async fn delete(t: &TestServer, url: &str, handle: &str) {
    ok(
        t,
        "DeleteMessage",
        &[("QueueUrl", url), ("ReceiptHandle", handle)],
    )
    .await;
}

fn bodies(msgs: &[Msg]) -> Vec<&str> {
    msgs.iter().map(|m| m.body.as_str()).collect()
}

// ------------------------------------------------------------------ tests

#[tokio::test]
async fn fifo_queue_attributes_over_query() {
    let t = TestServer::start().await;
    let url = create_fifo(&t, "q-attrs.fifo", true).await;
    let xml = ok(
        &t,
        "GetQueueAttributes",
        &[("QueueUrl", &url), ("AttributeName.1", "All")],
    )
    .await;
    let attrs: HashMap<String, String> = xml_all(&xml, "Attribute")
        .iter()
        .map(|a| (xml_text(a, "Name"), xml_text(a, "Value")))
        .collect();
    assert_eq!(attrs["FifoQueue"], "true");
    assert_eq!(attrs["ContentBasedDeduplication"], "true");
    assert_eq!(attrs["DeduplicationScope"], "queue");
    assert_eq!(attrs["FifoThroughputLimit"], "perQueue");

    // The type cannot change.
    let raw = query(
        &t,
        "SetQueueAttributes",
        &[
            ("QueueUrl", &url),
            ("Attribute.1.Name", "FifoQueue"),
            ("Attribute.1.Value", "false"),
        ],
    )
    .await;
    assert_error(
        &raw,
        400,
        "InvalidAttributeValue",
        "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.",
    );
    // Name without the suffix.
    let raw = query(
        &t,
        "CreateQueue",
        &[
            ("QueueName", "nosuffix"),
            ("Attribute.1.Name", "FifoQueue"),
            ("Attribute.1.Value", "true"),
        ],
    )
    .await;
    assert_eq!(raw.status, 400);
    assert_eq!(
        xml_text(&raw.compact_xml(), "Code"),
        "InvalidParameterValue"
    );
}

#[tokio::test]
async fn send_and_receive_carry_group_dedup_and_sequence_number() {
    let t = TestServer::start().await;
    let url = create_fifo(&t, "q-send.fifo", false).await;
    let (id, seq) = send(&t, &url, "hello", "grp-1", "dd-1").await;
    assert!(is_uuid(&id), "{id}");
    let seq_n = assert_sequence(&seq);

    let got = receive(&t, &url, &[]).await;
    assert_eq!(got.len(), 1);
    let m = &got[0];
    assert_eq!(m.id, id);
    assert_eq!(m.body, "hello");
    assert_eq!(m.attributes["MessageGroupId"], "grp-1");
    assert_eq!(m.attributes["MessageDeduplicationId"], "dd-1");
    assert_eq!(m.attributes["SequenceNumber"], seq);
    assert_eq!(m.attributes["ApproximateReceiveCount"], "1");
    assert_eq!(m.attributes["SenderId"], ACCOUNT);
    assert_eq!(m.attributes["SentTimestamp"], t.now_ms().to_string());
    assert!(m
        .attributes
        .contains_key("ApproximateFirstReceiveTimestamp"));
    assert_eq!(m.attributes.len(), 7, "{:?}", m.attributes);

    // Sequence numbers keep growing across sends; the unindexed
    // `AttributeName=All` form works too.
    delete(&t, &url, &m.handle).await;
    let (_, seq2) = send(&t, &url, "again", "grp-1", "dd-2").await;
    assert!(assert_sequence(&seq2) > seq_n);
    let xml = ok(
        &t,
        "ReceiveMessage",
        &[("QueueUrl", &url), ("AttributeName", "All")],
    )
    .await;
    assert!(
        xml.contains(&format!(
            "<Attribute><Name>SequenceNumber</Name><Value>{seq2}</Value></Attribute>"
        )),
        "{xml}"
    );
    assert!(
        xml.contains("<Attribute><Name>MessageGroupId</Name><Value>grp-1</Value></Attribute>"),
        "{xml}"
    );

    // Only the attributes asked for.
    let (_, _) = send(&t, &url, "third", "grp-2", "dd-3").await;
    let got = receive(
        &t,
        &url,
        &[
            ("AttributeName.1", "SequenceNumber"),
            ("AttributeName.2", "MessageGroupId"),
        ],
    )
    .await;
    assert_eq!(bodies(&got), ["third"]);
    let mut names: Vec<&str> = got[0].attributes.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(names, ["MessageGroupId", "SequenceNumber"]);
}

#[tokio::test]
async fn the_queue_url_path_identifies_the_queue() {
    let t = TestServer::start().await;
    let url = create_fifo(&t, "q-path.fifo", false).await;
    let path = format!("/{ACCOUNT}/q-path.fifo");
    let raw = query_at(
        &t,
        &path,
        "SendMessage",
        &[
            ("MessageBody", "via path"),
            ("MessageGroupId", "g"),
            ("MessageDeduplicationId", "d"),
        ],
    )
    .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert_sequence(&xml_text(&raw.compact_xml(), "SequenceNumber"));
    // A GET with a query string, too.
    let raw = t
        .get(
            &path,
            &[
                ("Action", "SendMessage"),
                ("MessageBody", "via get"),
                ("MessageGroupId", "g"),
                ("MessageDeduplicationId", "d2"),
            ],
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert_eq!(
        bodies(&receive(&t, &url, &[]).await),
        ["via path", "via get"]
    );
}

#[tokio::test]
async fn missing_group_id_errors_on_the_query_wire() {
    let t = TestServer::start().await;
    let url = create_fifo(&t, "q-nogroup.fifo", true).await;
    let raw = query(
        &t,
        "SendMessage",
        &[("QueueUrl", &url), ("MessageBody", "x")],
    )
    .await;
    assert_error(&raw, 400, "MissingParameter", NO_GROUP);

    let raw = query(
        &t,
        "SendMessageBatch",
        &[
            ("QueueUrl", &url),
            ("SendMessageBatchRequestEntry.1.Id", "a"),
            ("SendMessageBatchRequestEntry.1.MessageBody", "with"),
            ("SendMessageBatchRequestEntry.1.MessageGroupId", "g"),
            ("SendMessageBatchRequestEntry.2.Id", "b"),
            ("SendMessageBatchRequestEntry.2.MessageBody", "without"),
        ],
    )
    .await;
    assert_error(&raw, 400, "InvalidParameterValue", NO_GROUP);

    // Neither a dedup id nor content-based deduplication.
    let plain = create_fifo(&t, "q-nodedup.fifo", false).await;
    let raw = query(
        &t,
        "SendMessage",
        &[
            ("QueueUrl", &plain),
            ("MessageBody", "x"),
            ("MessageGroupId", "g"),
        ],
    )
    .await;
    assert_error(
        &raw,
        400,
        "InvalidParameterValue",
        "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
    );
    // Bad group id.
    let raw = query(
        &t,
        "SendMessage",
        &[
            ("QueueUrl", &plain),
            ("MessageBody", "x"),
            ("MessageGroupId", "group 123"),
            ("MessageDeduplicationId", "d"),
        ],
    )
    .await;
    assert_error(
        &raw,
        400,
        "InvalidParameterValue",
        "Value group 123 for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
    );
    // Per-message delay.
    let raw = query(
        &t,
        "SendMessage",
        &[
            ("QueueUrl", &plain),
            ("MessageBody", "x"),
            ("MessageGroupId", "g"),
            ("MessageDeduplicationId", "d"),
            ("DelaySeconds", "2"),
        ],
    )
    .await;
    assert_error(
        &raw,
        400,
        "InvalidParameterValue",
        "Value 2 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.",
    );
    let counts = ok(
        &t,
        "GetQueueAttributes",
        &[
            ("QueueUrl", &url),
            ("AttributeName.1", "ApproximateNumberOfMessages"),
        ],
    )
    .await;
    assert!(counts.contains("<Value>0</Value>"), "{counts}");
}

#[tokio::test]
async fn batch_entries_use_indexed_group_and_dedup_names_and_keep_order() {
    let t = TestServer::start().await;
    let url = create_fifo(&t, "q-batch.fifo", false).await;
    let mut owned: Vec<(String, String)> = vec![("QueueUrl".into(), url.clone())];
    for i in 1..=6 {
        let p = format!("SendMessageBatchRequestEntry.{i}");
        owned.push((format!("{p}.Id"), format!("e{i}")));
        owned.push((format!("{p}.MessageBody"), format!("m{i}")));
        owned.push((
            format!("{p}.MessageGroupId"),
            if i % 2 == 0 { "even" } else { "odd" }.into(),
        ));
        owned.push((format!("{p}.MessageDeduplicationId"), format!("d{i}")));
    }
    let params: Vec<(&str, &str)> = owned
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let xml = ok(&t, "SendMessageBatch", &params).await;
    assert!(!xml.contains("<BatchResultErrorEntry>"), "{xml}");
    let entries = xml_all(&xml, "SendMessageBatchResultEntry");
    assert_eq!(entries.len(), 6);
    let ids: Vec<String> = entries.iter().map(|e| xml_text(e, "Id")).collect();
    assert_eq!(ids, ["e1", "e2", "e3", "e4", "e5", "e6"]);
    let seqs: Vec<u128> = entries
        .iter()
        .map(|e| assert_sequence(&xml_text(e, "SequenceNumber")))
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");

    let got = receive(&t, &url, &[]).await;
    assert_eq!(got.len(), 6);
    let of = |g: &str| -> Vec<&str> {
        got.iter()
            .filter(|m| m.attributes["MessageGroupId"] == g)
            .map(|m| m.body.as_str())
            .collect()
    };
    assert_eq!(of("odd"), ["m1", "m3", "m5"]);
    assert_eq!(of("even"), ["m2", "m4", "m6"]);
    for m in &got {
        let seq = &m.attributes["SequenceNumber"];
        assert!(
            entries
                .iter()
                .any(|e| &xml_text(e, "SequenceNumber") == seq && xml_text(e, "MessageId") == m.id),
            "{seq} for {}",
            m.id
        );
    }
}

#[tokio::test]
async fn duplicates_return_the_original_and_the_window_is_five_minutes() {
    let t = TestServer::start().await;
    let url = create_fifo(&t, "q-dedup.fifo", false).await;
    let (id, seq) = send(&t, &url, "first", "g", "same").await;
    let got = receive(&t, &url, &[]).await;
    delete(&t, &url, &got[0].handle).await;

    t.advance_secs(299);
    let (dup_id, dup_seq) = send(&t, &url, "second", "g", "same").await;
    assert_eq!(
        (dup_id.as_str(), dup_seq.as_str()),
        (id.as_str(), seq.as_str())
    );
    assert!(receive(&t, &url, &[]).await.is_empty());

    t.advance_secs(2);
    let (new_id, new_seq) = send(&t, &url, "third", "g", "same").await;
    assert_ne!(new_id, id);
    assert!(assert_sequence(&new_seq) > assert_sequence(&seq));
    assert_eq!(bodies(&receive(&t, &url, &[]).await), ["third"]);
}

/// SendMessage with a group and no deduplication id; returns the MessageId.
async fn send_cbd(t: &TestServer, url: &str, body: &str) -> String {
    let xml = ok(
        t,
        "SendMessage",
        &[
            ("QueueUrl", url),
            ("MessageBody", body),
            ("MessageGroupId", "g"),
        ],
    )
    .await;
    xml_text(&xml, "MessageId")
}

#[tokio::test]
async fn content_based_deduplication_over_query() {
    let t = TestServer::start().await;
    let url = create_fifo(&t, "q-cbd.fifo", true).await;
    let a = send_cbd(&t, &url, "payload").await;
    let b = send_cbd(&t, &url, "payload").await;
    assert_eq!(a, b);
    let c = send_cbd(&t, &url, "other").await;
    assert_ne!(a, c);
    let got = receive(&t, &url, &[]).await;
    assert_eq!(bodies(&got), ["payload", "other"]);
    assert!(!got[0].attributes["MessageDeduplicationId"].is_empty());
}

#[tokio::test]
async fn group_lock_and_receive_request_attempt_id_over_query() {
    let t = TestServer::start().await;
    let url = create_fifo(&t, "q-attempt.fifo", false).await;
    for (b, g) in [("a1", "A"), ("a2", "A"), ("b1", "B")] {
        send(&t, &url, b, g, b).await;
    }
    let first = receive(
        &t,
        &url,
        &[
            ("MaxNumberOfMessages", "1"),
            ("ReceiveRequestAttemptId", "try-1"),
        ],
    )
    .await;
    assert_eq!(bodies(&first), ["a1"], "{first:?}");
    let retry = receive(
        &t,
        &url,
        &[
            ("MaxNumberOfMessages", "1"),
            ("ReceiveRequestAttemptId", "try-1"),
        ],
    )
    .await;
    assert_eq!(bodies(&retry), ["a1"]);
    assert_eq!(retry[0].handle, first[0].handle);
    assert_eq!(retry[0].id, first[0].id);

    // Group A is locked: only b1 is left to receive.
    let other = receive(&t, &url, &[("ReceiveRequestAttemptId", "try-2")]).await;
    assert_eq!(bodies(&other), ["b1"]);
    assert!(receive(&t, &url, &[]).await.is_empty());

    // The visibility timeout runs out: a1's handle has expired.
    t.advance_secs(31);
    let raw = query(
        &t,
        "DeleteMessage",
        &[("QueueUrl", &url), ("ReceiptHandle", &first[0].handle)],
    )
    .await;
    assert_error(
        &raw,
        400,
        "InvalidParameterValue",
        &format!(
            "Value {} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.",
            first[0].handle
        ),
    );
    let raw = query(
        &t,
        "ChangeMessageVisibility",
        &[
            ("QueueUrl", &url),
            ("ReceiptHandle", &first[0].handle),
            ("VisibilityTimeout", "10"),
        ],
    )
    .await;
    assert_error(
        &raw,
        400,
        "InvalidParameterValue",
        &format!(
            "Value {} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.",
            first[0].handle
        ),
    );
    // a1 is back at the head of its group, received a second time.
    let again = receive(&t, &url, &[]).await;
    let a: Vec<&Msg> = again
        .iter()
        .filter(|m| m.attributes["MessageGroupId"] == "A")
        .collect();
    assert_eq!(a.len(), 2, "{again:?}");
    assert_eq!((a[0].body.as_str(), a[1].body.as_str()), ("a1", "a2"));
    assert_eq!(a[0].attributes["ApproximateReceiveCount"], "2");
}

#[tokio::test]
async fn message_group_id_on_a_standard_queue_over_query() {
    let t = TestServer::start().await;
    let xml = ok(&t, "CreateQueue", &[("QueueName", "q-fair")]).await;
    let url = xml_text(&xml, "QueueUrl");
    let xml = ok(
        &t,
        "SendMessage",
        &[
            ("QueueUrl", &url),
            ("MessageBody", "tenant message"),
            ("MessageGroupId", "tenant-1"),
        ],
    )
    .await;
    assert!(!xml.contains("<SequenceNumber>"), "{xml}");
    ok(
        &t,
        "SendMessage",
        &[
            ("QueueUrl", &url),
            ("MessageBody", "second"),
            ("MessageGroupId", "tenant-1"),
        ],
    )
    .await;
    let first = receive(&t, &url, &[("MaxNumberOfMessages", "1")]).await;
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].attributes["MessageGroupId"], "tenant-1");
    assert!(!first[0].attributes.contains_key("SequenceNumber"));
    // No group lock on a standard queue.
    let second = receive(&t, &url, &[("MaxNumberOfMessages", "1")]).await;
    assert_eq!(second.len(), 1);
    assert_ne!(second[0].id, first[0].id);
}
