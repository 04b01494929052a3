//! Sending, receiving and deleting messages through the official SDK:
//! attributes, checksums, attribute filters, batches and the limits.

mod common;

use std::collections::HashMap;

use aws_sdk_sqs::error::ProvideErrorMetadata;
use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry, Message,
    MessageAttributeValue, MessageSystemAttributeName, MessageSystemAttributeNameForSends,
    MessageSystemAttributeValue, QueueAttributeName, SendMessageBatchRequestEntry,
};
use common::*;

const TRACE: &str = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
const INVALID_CHARS: &str = "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF";

fn attr_names(m: &Message) -> Vec<String> {
    let mut names: Vec<String> = m
        .message_attributes()
        .map(|a| a.keys().cloned().collect())
        .unwrap_or_default();
    names.sort();
    names
}

fn trace_value(v: &str) -> MessageSystemAttributeValue {
    MessageSystemAttributeValue::builder()
        .data_type("String")
        .string_value(v)
        .build()
        .unwrap()
}

fn entry(id: &str, body: &str) -> SendMessageBatchRequestEntry {
    SendMessageBatchRequestEntry::builder()
        .id(id)
        .message_body(body)
        .build()
        .unwrap()
}

// ------------------------------------------------------- send / receive

#[tokio::test]
async fn send_receive_delete() {
    let t = TestServer::start().await;
    let url = t.create_queue("basic").await;
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("msg")
        .send()
        .await
        .unwrap();
    let id = sent.message_id().unwrap().to_string();
    assert!(is_uuid(&id), "{id}");
    assert_eq!(
        sent.md5_of_message_body(),
        Some("6e2baaf3b97dbeef01c0043275f9a0e7")
    );
    assert_eq!(sent.md5_of_message_attributes(), None);
    assert_eq!(sent.md5_of_message_system_attributes(), None);
    assert_eq!(sent.sequence_number(), None);

    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .unwrap();
    let msgs = out.messages();
    assert_eq!(msgs.len(), 1);
    let m = &msgs[0];
    assert_eq!(m.message_id(), Some(id.as_str()));
    assert_eq!(m.body(), Some("msg"));
    assert_eq!(m.md5_of_body(), Some("6e2baaf3b97dbeef01c0043275f9a0e7"));
    assert!(!m.receipt_handle().unwrap().is_empty());
    // Nothing asked for, nothing returned.
    assert!(m.attributes().is_none(), "{:?}", m.attributes());
    assert!(m.message_attributes().is_none());
    assert_eq!(m.md5_of_message_attributes(), None);

    t.delete_message(&url, m.receipt_handle().unwrap()).await;
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    // Even once the visibility timeout would have run out.
    t.advance_secs(31);
    assert!(t.receive(&url, 10).await.is_empty());
}

#[tokio::test]
async fn empty_receive_has_no_messages_key() {
    let t = TestServer::start().await;
    let url = t.create_queue("empty").await;
    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .unwrap();
    assert!(out.messages.is_none());
    let raw = t
        .json_post("ReceiveMessage", &format!(r#"{{"QueueUrl":"{url}"}}"#))
        .await;
    assert_eq!(raw.status, 200);
    assert_eq!(raw.json(), serde_json::json!({}));
}

#[tokio::test]
async fn unicode_and_whitespace_bodies_round_trip() {
    let t = TestServer::start().await;
    let url = t.create_queue("unicode").await;
    let bodies = [
        "tab\there\nnewline\r\ncrlf",
        "日本語のメッセージ 🎉",
        "\u{D7FF}\u{E000}\u{FFFD}\u{10000}\u{10FFFF}",
        "<xml attr=\"x\">&amp;</xml>",
        " ",
        "{\"json\": [1, 2, 3]}",
    ];
    for b in bodies {
        let sent = t
            .client
            .send_message()
            .queue_url(&url)
            .message_body(b)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{b:?}: {e:?}"));
        assert_eq!(
            sent.md5_of_message_body(),
            Some(md5_hex(b.as_bytes()).as_str())
        );
        let m = t.receive_one(&url).await;
        assert_eq!(m.body(), Some(b));
        assert_eq!(m.md5_of_body(), Some(md5_hex(b.as_bytes()).as_str()));
        t.delete_message(&url, m.receipt_handle().unwrap()).await;
    }
}

#[tokio::test]
async fn invalid_body_characters_are_refused() {
    let t = TestServer::start().await;
    let url = t.create_queue("invalid-chars").await;
    for bad in [
        "\u{0}",
        "a\u{8}b",
        "\u{13}",
        "x\u{FFFF}",
        "\u{1F}",
        "\u{FFFE}",
    ] {
        let f = failure(
            t.client
                .send_message()
                .queue_url(&url)
                .message_body(bad)
                .send()
                .await,
        );
        assert!(f.err.is_invalid_message_contents(), "{bad:?}: {:?}", f.err);
        assert_eq!(f.status, 400);
        assert_service_error(&f.err, "InvalidMessageContents", INVALID_CHARS);
    }
    assert_eq!(t.counts(&url).await, (0, 0, 0));
}

#[tokio::test]
async fn empty_body_is_missing_parameter() {
    let t = TestServer::start().await;
    let url = t.create_queue("empty-body").await;
    let err = service_error(
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("")
            .send()
            .await,
    );
    assert_eq!(err.code(), Some("MissingParameter"), "{err:?}");
    assert_eq!(
        err.message(),
        Some("The request must contain the parameter MessageBody.")
    );
    let err = service_error(t.client.send_message().queue_url(&url).send().await);
    assert_eq!(err.code(), Some("MissingParameter"));
    let raw = t
        .json_post("SendMessage", &format!(r#"{{"QueueUrl":"{url}"}}"#))
        .await;
    assert_eq!(raw.status, 400);
    assert_eq!(
        raw.header("x-amzn-query-error"),
        Some("MissingParameter;Sender")
    );
    assert_eq!(
        raw.json()["__type"],
        "com.amazon.coral.service#MissingRequiredParameterException"
    );
}

// ------------------------------------------------------------ size limit

#[tokio::test]
async fn body_of_exactly_one_mebibyte_is_accepted() {
    let t = TestServer::start().await;
    let url = t.create_queue("big").await;
    let body = "x".repeat(1_048_576);
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body(&body)
        .send()
        .await
        .expect("1048576 bytes are allowed");
    assert_eq!(
        sent.md5_of_message_body(),
        Some(md5_hex(body.as_bytes()).as_str())
    );
    let m = t.receive_one(&url).await;
    assert_eq!(m.body().map(str::len), Some(1_048_576));
    assert_eq!(m.body(), Some(body.as_str()));
}

#[tokio::test]
async fn one_byte_more_than_one_mebibyte_is_refused() {
    let t = TestServer::start().await;
    let url = t.create_queue("too-big").await;
    let err = service_error(
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("x".repeat(1_048_577))
            .send()
            .await,
    );
    assert_eq!(err.code(), Some("InvalidParameterValue"), "{err:?}");
    assert_eq!(
        err.message(),
        Some("One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes.")
    );
    // Multi-byte characters count as their UTF-8 bytes: 349526 × 3 bytes.
    let err = service_error(
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("語".repeat(349_526))
            .send()
            .await,
    );
    assert_eq!(err.code(), Some("InvalidParameterValue"));
    t.client
        .send_message()
        .queue_url(&url)
        .message_body(format!("{}a", "語".repeat(349_525)))
        .send()
        .await
        .expect("1048576 bytes of UTF-8");
    assert_eq!(t.counts(&url).await, (1, 0, 0));
}

#[tokio::test]
async fn attributes_count_toward_the_size_limit() {
    let t = TestServer::start().await;
    let url = t.create_queue("size-attrs").await;
    // name (4) + type (6) + value (5) = 15 bytes of attribute.
    let attr_bytes = "attr".len() + "String".len() + "value".len();
    let fits = "x".repeat(1_048_576 - attr_bytes);
    t.client
        .send_message()
        .queue_url(&url)
        .message_body(&fits)
        .message_attributes("attr", string_attr("value"))
        .send()
        .await
        .expect("exactly at the limit");
    let err = service_error(
        t.client
            .send_message()
            .queue_url(&url)
            .message_body(format!("{fits}x"))
            .message_attributes("attr", string_attr("value"))
            .send()
            .await,
    );
    assert_eq!(err.code(), Some("InvalidParameterValue"));
    // A binary value counts as its raw bytes, not its base64 text:
    // name (1) + type (6) + 10 bytes = 17.
    let fits = "x".repeat(1_048_576 - 17);
    t.client
        .send_message()
        .queue_url(&url)
        .message_body(&fits)
        .message_attributes("b", binary_attr("Binary", &[7u8; 10]))
        .send()
        .await
        .expect("exactly at the limit, binary");
    let err = service_error(
        t.client
            .send_message()
            .queue_url(&url)
            .message_body(format!("{fits}x"))
            .message_attributes("b", binary_attr("Binary", &[7u8; 10]))
            .send()
            .await,
    );
    assert_eq!(err.code(), Some("InvalidParameterValue"));
    // System attributes do not count.
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("x".repeat(1_048_576))
        .message_system_attributes(
            MessageSystemAttributeNameForSends::AwsTraceHeader,
            trace_value(TRACE),
        )
        .send()
        .await
        .expect("system attributes are not counted");
}

#[tokio::test]
async fn queue_maximum_message_size_is_enforced() {
    let t = TestServer::start().await;
    let url = t
        .create_queue_with("small", &[("MaximumMessageSize", "1024")])
        .await;
    t.send(&url, &"a".repeat(1024)).await;
    let err = service_error(
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("a".repeat(1025))
            .send()
            .await,
    );
    assert_eq!(
        err.message(),
        Some(
            "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes."
        )
    );
}

// --------------------------------------------------- message attributes

#[tokio::test]
async fn message_attributes_of_every_type_round_trip() {
    let t = TestServer::start().await;
    let url = t.create_queue("attr-types").await;
    let mut attrs: HashMap<String, MessageAttributeValue> = HashMap::new();
    attrs.insert("s".into(), string_attr("hello"));
    attrs.insert("n".into(), typed_attr("Number", "-12.5e3"));
    attrs.insert("b".into(), binary_attr("Binary", &[0, 1, 2, 255, 254]));
    attrs.insert("custom.float".into(), typed_attr("Number.float", "3.14"));
    attrs.insert("custom.json".into(), typed_attr("String.json", "{\"a\":1}"));
    attrs.insert("custom.gif".into(), binary_attr("Binary.gif", b"GIF89a"));
    attrs.insert("uni".into(), string_attr("日本 🎉"));
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("typed")
        .set_message_attributes(Some(attrs.clone()))
        .send()
        .await
        .unwrap();
    let expected_md5 = md5_of_attributes(&attrs);
    assert_eq!(
        sent.md5_of_message_attributes(),
        Some(expected_md5.as_str())
    );

    let m = t.receive_one(&url).await;
    let got = m.message_attributes().expect("attributes returned");
    assert_eq!(got, &attrs);
    assert_eq!(m.md5_of_message_attributes(), Some(expected_md5.as_str()));
    assert_eq!(
        got["b"].binary_value().unwrap().as_ref(),
        &[0u8, 1, 2, 255, 254]
    );
    assert_eq!(got["custom.float"].data_type(), "Number.float");
}

#[tokio::test]
async fn md5_of_message_attributes_matches_the_spec_vectors() {
    let t = TestServer::start().await;
    let url = t.create_queue("md5").await;
    let binary = b"traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01";
    let cases: Vec<(&str, MessageAttributeValue, &str)> = vec![
        (
            "Foo",
            string_attr("Bar"),
            "ae7155c6026991b6d54b11589678bf9c",
        ),
        ("k", string_attr("x"), "a45daa70926828a2f0a1db3418e6feb4"),
        (
            "MyAttribute",
            string_attr("foobar"),
            "adb59cd4678ea5a855436b949cd07ab6",
        ),
        (
            "attr1",
            binary_attr("Binary", binary),
            "8cbe4db156db8a94db8b801b7addb984",
        ),
        (
            "timestamp",
            typed_attr("Number", "1493147359900"),
            "235c5c510d26fb653d073faed50ae77c",
        ),
    ];
    for (name, value, md5) in cases {
        // The independent implementation agrees with the vector...
        let mut one = HashMap::new();
        one.insert(name.to_string(), value.clone());
        assert_eq!(md5_of_attributes(&one), md5, "test helper, {name}");
        // ...and so does the server, on send and on receive.
        let sent = t
            .client
            .send_message()
            .queue_url(&url)
            .message_body("message")
            .message_attributes(name, value)
            .send()
            .await
            .unwrap();
        assert_eq!(sent.md5_of_message_attributes(), Some(md5), "{name}");
        assert_eq!(
            sent.md5_of_message_body(),
            Some("78e731027d8fd50ed642340b7c9a63b3")
        );
        let m = t.receive_one(&url).await;
        assert_eq!(m.md5_of_message_attributes(), Some(md5), "{name}");
        t.delete_message(&url, m.receipt_handle().unwrap()).await;
    }
}

#[tokio::test]
async fn system_attribute_trace_header_and_its_md5() {
    let t = TestServer::start().await;
    let url = t.create_queue("trace").await;
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("traced")
        .message_system_attributes(
            MessageSystemAttributeNameForSends::AwsTraceHeader,
            trace_value(TRACE),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        sent.md5_of_message_system_attributes(),
        Some("5ae4d5d7636402d80f4eb6d213245a88")
    );
    assert_eq!(sent.md5_of_message_attributes(), None);

    // With a user attribute too: the two checksums are independent.
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("traced")
        .message_attributes("Foo", string_attr("Bar"))
        .message_system_attributes(
            MessageSystemAttributeNameForSends::AwsTraceHeader,
            trace_value(TRACE),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        sent.md5_of_message_attributes(),
        Some("ae7155c6026991b6d54b11589678bf9c")
    );
    assert_eq!(
        sent.md5_of_message_system_attributes(),
        Some("5ae4d5d7636402d80f4eb6d213245a88")
    );

    let msgs = t.receive(&url, 10).await;
    assert_eq!(msgs.len(), 2);
    for m in &msgs {
        assert_eq!(system_attrs(m)["AWSTraceHeader"], TRACE);
    }
    // AWSTraceHeader can be asked for by name.
    t.advance_secs(30);
    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .message_system_attribute_names(MessageSystemAttributeName::AwsTraceHeader)
        .send()
        .await
        .unwrap();
    for m in out.messages() {
        let a = system_attrs(m);
        assert_eq!(a.len(), 1, "{a:?}");
        assert_eq!(a["AWSTraceHeader"], TRACE);
    }
}

#[tokio::test]
async fn trace_header_from_the_http_header() {
    let t = TestServer::start().await;
    let url = t.create_queue("trace-http").await;
    let raw = t
        .json_post_with(
            "SendMessage",
            &format!(r#"{{"QueueUrl":"{url}","MessageBody":"hi"}}"#),
            &[("x-amzn-trace-id", "Root=1-abc-def;Sampled=0")],
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    let m = t.receive_one(&url).await;
    assert_eq!(
        system_attrs(&m)["AWSTraceHeader"],
        "Root=1-abc-def;Sampled=0"
    );
    // Without the header and without the attribute there is none.
    t.send(&url, "plain").await;
    let m = t.receive_one(&url).await;
    assert!(!system_attrs(&m).contains_key("AWSTraceHeader"));
}

#[tokio::test]
async fn invalid_system_attributes_are_refused() {
    let t = TestServer::start().await;
    let url = t.create_queue("bad-system").await;
    let raw = t
        .json_post(
            "SendMessage",
            &format!(
                r#"{{"QueueUrl":"{url}","MessageBody":"x","MessageSystemAttributes":{{"Other":{{"DataType":"String","StringValue":"v"}}}}}}"#
            ),
        )
        .await;
    assert_eq!(raw.status, 400, "{}", raw.body);
    assert_eq!(
        raw.header("x-amzn-query-error"),
        Some("InvalidParameterValue;Sender")
    );
    let raw = t
        .json_post(
            "SendMessage",
            &format!(
                r#"{{"QueueUrl":"{url}","MessageBody":"x","MessageSystemAttributes":{{"AWSTraceHeader":{{"DataType":"Number","StringValue":"1"}}}}}}"#
            ),
        )
        .await;
    assert_eq!(raw.status, 400, "{}", raw.body);
    assert_eq!(t.counts(&url).await, (0, 0, 0));
}

#[tokio::test]
async fn message_attribute_validation() {
    let t = TestServer::start().await;
    let url = t.create_queue("attr-rules").await;
    let send_one = |name: &str, value: MessageAttributeValue| {
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("x")
            .message_attributes(name, value)
            .send()
    };
    let err = service_error(send_one("ErrorDetails", string_attr("")).await);
    assert_service_error(
        &err,
        "InvalidParameterValue",
        "Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'.",
    );
    for bad_name in [
        "AWS.reserved",
        "amazon.x",
        ".lead",
        "trail.",
        "dou..ble",
        "sp ace",
    ] {
        let err = service_error(send_one(bad_name, string_attr("v")).await);
        assert_eq!(err.code(), Some("InvalidParameterValue"), "{bad_name}");
    }
    for bad_type in ["Text", "string", "Int.x", ""] {
        let err = service_error(send_one("a", typed_attr(bad_type, "1")).await);
        assert_eq!(err.code(), Some("InvalidParameterValue"), "{bad_type:?}");
    }
    let err = service_error(send_one("n", typed_attr("Number", "not a number")).await);
    assert_eq!(err.code(), Some("InvalidParameterValue"));
    // A String value with invalid characters: InvalidParameterValue, not
    // InvalidMessageContents.
    let err = service_error(send_one("s", string_attr("bad\u{0}")).await);
    assert_eq!(err.code(), Some("InvalidParameterValue"), "{err:?}");

    // At most ten attributes.
    let mut eleven = HashMap::new();
    for i in 0..11 {
        eleven.insert(format!("a{i}"), string_attr("v"));
    }
    let err = service_error(
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("x")
            .set_message_attributes(Some(eleven.clone()))
            .send()
            .await,
    );
    assert_eq!(
        err.message(),
        Some("Number of message attributes [11] exceeds the allowed maximum [10].")
    );
    eleven.remove("a10");
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .set_message_attributes(Some(eleven))
        .send()
        .await
        .expect("ten attributes are fine");
    assert_eq!(t.counts(&url).await, (1, 0, 0));
}

#[tokio::test]
async fn message_attribute_name_filters() {
    let t = TestServer::start().await;
    let url = t.create_queue("filters").await;
    let mut attrs = HashMap::new();
    attrs.insert("Hello".to_string(), string_attr("1"));
    attrs.insert("Help.Me".to_string(), typed_attr("Number", "2"));
    attrs.insert("Other".to_string(), binary_attr("Binary", b"3"));
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("filtered")
        .set_message_attributes(Some(attrs.clone()))
        .send()
        .await
        .unwrap();

    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["All"], vec!["Hello", "Help.Me", "Other"]),
        (vec![".*"], vec!["Hello", "Help.Me", "Other"]),
        (vec!["Hel.*"], vec!["Hello", "Help.Me"]),
        (vec!["Help.*"], vec!["Help.Me"]),
        (vec!["Other"], vec!["Other"]),
        (vec!["Other", "Hello"], vec!["Hello", "Other"]),
        (vec!["other"], vec![]),
        (vec!["Missing"], vec![]),
        (vec!["AWS."], vec![]),
        (vec!["..foo"], vec![]),
        (vec![], vec![]),
    ];
    for (filter, expected) in cases {
        let out = t
            .client
            .receive_message()
            .queue_url(&url)
            .visibility_timeout(0)
            .set_message_attribute_names(Some(filter.iter().map(|s| s.to_string()).collect()))
            .send()
            .await
            .unwrap();
        let m = &out.messages()[0];
        assert_eq!(attr_names(m), expected, "filter {filter:?}");
        if expected.is_empty() {
            assert_eq!(m.md5_of_message_attributes(), None, "filter {filter:?}");
        } else {
            // The checksum covers exactly the returned attributes.
            let returned: HashMap<String, MessageAttributeValue> = expected
                .iter()
                .map(|n| (n.to_string(), attrs[*n].clone()))
                .collect();
            assert_eq!(
                m.md5_of_message_attributes(),
                Some(md5_of_attributes(&returned).as_str()),
                "filter {filter:?}"
            );
            assert_eq!(m.message_attributes().unwrap(), &returned);
        }
    }
}

#[tokio::test]
async fn system_attribute_filters() {
    let t = TestServer::start().await;
    let url = t.create_queue("sys-filters").await;
    let sent_at = t.now_ms();
    t.send(&url, "x").await;
    t.advance_secs(2);
    let received_at = t.now_ms();

    // All: exactly the four standard-queue attributes.
    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(0)
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .send()
        .await
        .unwrap();
    let a = system_attrs(&out.messages()[0]);
    let mut keys: Vec<&str> = a.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        vec![
            "ApproximateFirstReceiveTimestamp",
            "ApproximateReceiveCount",
            "SenderId",
            "SentTimestamp"
        ]
    );
    assert_eq!(a["SentTimestamp"], sent_at.to_string());
    assert_eq!(
        a["ApproximateFirstReceiveTimestamp"],
        received_at.to_string()
    );
    assert_eq!(a["ApproximateReceiveCount"], "1");
    assert_eq!(a["SenderId"], ACCOUNT);

    // Named ones only.
    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(0)
        .message_system_attribute_names(MessageSystemAttributeName::SentTimestamp)
        .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
        .send()
        .await
        .unwrap();
    let a = system_attrs(&out.messages()[0]);
    assert_eq!(a.len(), 2, "{a:?}");
    assert_eq!(a["ApproximateReceiveCount"], "2");
    assert_eq!(a["SentTimestamp"], sent_at.to_string());

    // Requested but absent on a standard queue: omitted.
    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(0)
        .message_system_attribute_names(MessageSystemAttributeName::SequenceNumber)
        .message_system_attribute_names(MessageSystemAttributeName::MessageGroupId)
        .send()
        .await
        .unwrap();
    assert!(out.messages()[0].attributes().is_none());
}

#[tokio::test]
#[allow(deprecated)]
async fn deprecated_attribute_names_work_and_combine() {
    let t = TestServer::start().await;
    let url = t.create_queue("deprecated").await;
    t.send(&url, "x").await;
    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(0)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .unwrap();
    assert_eq!(system_attrs(&out.messages()[0]).len(), 4);
    // The union of both lists.
    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(0)
        .attribute_names(QueueAttributeName::from("SenderId"))
        .message_system_attribute_names(MessageSystemAttributeName::SentTimestamp)
        .send()
        .await
        .unwrap();
    let a = system_attrs(&out.messages()[0]);
    let mut keys: Vec<&str> = a.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, vec!["SenderId", "SentTimestamp"]);
}

// --------------------------------------------------- receive validation

#[tokio::test]
async fn max_number_of_messages_bounds() {
    let t = TestServer::start().await;
    let url = t.create_queue("max-n").await;
    for (n, text) in [
        (11, "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."),
        (0, "Value 0 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."),
        (-1, "Value -1 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."),
    ] {
        let err = service_error(
            t.client
                .receive_message()
                .queue_url(&url)
                .max_number_of_messages(n)
                .send()
                .await,
        );
        assert_service_error(&err, "InvalidParameterValue", text);
    }
    for i in 0..15 {
        t.send(&url, &format!("m{i}")).await;
    }
    // Default: one message.
    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .unwrap();
    assert_eq!(out.messages().len(), 1);
    // At most ten.
    assert_eq!(receive_via(&t.client, &url).await.len(), 10);
    assert_eq!(receive_via(&t.client, &url).await.len(), 4);
    // Every message exactly once.
    assert_eq!(t.counts(&url).await, (0, 15, 0));
}

#[tokio::test]
async fn wait_time_seconds_bounds() {
    let t = TestServer::start().await;
    let url = t.create_queue("wait-bounds").await;
    for (w, text) in [
        (21, "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."),
        (-1, "Value -1 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."),
    ] {
        let err = service_error(
            t.client
                .receive_message()
                .queue_url(&url)
                .wait_time_seconds(w)
                .send()
                .await,
        );
        assert_service_error(&err, "InvalidParameterValue", text);
    }
    let err = service_error(
        t.client
            .receive_message()
            .queue_url(&url)
            .visibility_timeout(43_201)
            .send()
            .await,
    );
    assert_eq!(err.code(), Some("InvalidParameterValue"));
}

#[tokio::test]
async fn per_message_delay_seconds_bounds() {
    let t = TestServer::start().await;
    let url = t.create_queue("delay-bounds").await;
    for d in [901, -1] {
        let err = service_error(
            t.client
                .send_message()
                .queue_url(&url)
                .message_body("x")
                .delay_seconds(d)
                .send()
                .await,
        );
        assert_eq!(err.code(), Some("InvalidParameterValue"));
        assert_eq!(
            err.message().map(str::to_string),
            Some(format!(
                "Value {d} for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900."
            ))
        );
    }
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .delay_seconds(900)
        .send()
        .await
        .expect("900 is allowed");
    assert_eq!(t.counts(&url).await, (0, 0, 1));
}

// ---------------------------------------------------------------- batches

#[tokio::test]
async fn send_message_batch_all_succeed() {
    let t = TestServer::start().await;
    let url = t.create_queue("batch").await;
    let with_attr = SendMessageBatchRequestEntry::builder()
        .id("with-attr")
        .message_body("second")
        .message_attributes("Foo", string_attr("Bar"))
        .message_system_attributes(
            MessageSystemAttributeNameForSends::AwsTraceHeader,
            trace_value(TRACE),
        )
        .build()
        .unwrap();
    let delayed = SendMessageBatchRequestEntry::builder()
        .id("delayed_3")
        .message_body("third")
        .delay_seconds(5)
        .build()
        .unwrap();
    let out = t
        .client
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("plain", "msg"))
        .entries(with_attr)
        .entries(delayed)
        .send()
        .await
        .unwrap();
    assert!(out.failed().is_empty(), "{:?}", out.failed());
    let ok: HashMap<&str, _> = out.successful().iter().map(|e| (e.id(), e)).collect();
    assert_eq!(ok.len(), 3);
    assert_eq!(
        ok["plain"].md5_of_message_body(),
        "6e2baaf3b97dbeef01c0043275f9a0e7"
    );
    assert_eq!(ok["plain"].md5_of_message_attributes(), None);
    assert_eq!(
        ok["with-attr"].md5_of_message_attributes(),
        Some("ae7155c6026991b6d54b11589678bf9c")
    );
    assert_eq!(
        ok["with-attr"].md5_of_message_system_attributes(),
        Some("5ae4d5d7636402d80f4eb6d213245a88")
    );
    let ids: std::collections::HashSet<&str> =
        out.successful().iter().map(|e| e.message_id()).collect();
    assert_eq!(ids.len(), 3, "distinct message ids");
    assert!(ids.iter().all(|id| is_uuid(id)));
    assert_eq!(t.counts(&url).await, (2, 0, 1));

    let msgs = t.receive(&url, 10).await;
    let mut bodies: Vec<&str> = msgs.iter().filter_map(|m| m.body()).collect();
    bodies.sort();
    assert_eq!(bodies, vec!["msg", "second"]);
    let second = msgs.iter().find(|m| m.body() == Some("second")).unwrap();
    assert_eq!(second.message_id(), Some(ok["with-attr"].message_id()));
    assert_eq!(system_attrs(second)["AWSTraceHeader"], TRACE);
    t.advance_secs(5);
    assert_eq!(t.receive_one(&url).await.body(), Some("third"));

    // AWS omits Failed when everything succeeded.
    let raw = t
        .json_post(
            "SendMessageBatch",
            &format!(r#"{{"QueueUrl":"{url}","Entries":[{{"Id":"a","MessageBody":"x"}}]}}"#),
        )
        .await;
    assert_eq!(raw.status, 200);
    let json = raw.json();
    assert!(json.get("Failed").is_none(), "{json}");
    assert_eq!(json["Successful"][0]["Id"], "a");
}

#[tokio::test]
async fn send_message_batch_partial_failure() {
    let t = TestServer::start().await;
    let url = t
        .create_queue_with("partial", &[("MaximumMessageSize", "1024")])
        .await;
    let out = t
        .client
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("good1", "fine"))
        .entries(entry("badchars", "nul\u{0}here"))
        .entries(entry("toolarge", &"x".repeat(1025)))
        .entries(entry("good2", "also fine"))
        .entries(
            SendMessageBatchRequestEntry::builder()
                .id("baddelay")
                .message_body("x")
                .delay_seconds(901)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("a partial failure is still a 200");
    let mut ok: Vec<&str> = out.successful().iter().map(|e| e.id()).collect();
    ok.sort();
    assert_eq!(ok, vec!["good1", "good2"]);
    let failed: HashMap<&str, _> = out.failed().iter().map(|e| (e.id(), e)).collect();
    assert_eq!(failed.len(), 3);
    let bad = failed["badchars"];
    assert_eq!(bad.code(), "InvalidMessageContents");
    assert!(bad.sender_fault());
    assert_eq!(bad.message(), Some(INVALID_CHARS));
    let big = failed["toolarge"];
    assert_eq!(big.code(), "InvalidParameterValue");
    assert!(big.sender_fault());
    assert_eq!(
        big.message(),
        Some("One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes.")
    );
    assert_eq!(failed["baddelay"].code(), "InvalidParameterValue");
    assert!(failed["baddelay"].sender_fault());
    assert_eq!(t.counts(&url).await, (2, 0, 0));
}

#[tokio::test]
async fn batch_envelope_errors_for_every_batch_action() {
    let t = TestServer::start().await;
    let url = t.create_queue("envelope").await;

    // Empty.
    let f = failure(
        t.client
            .send_message_batch()
            .queue_url(&url)
            .set_entries(Some(vec![]))
            .send()
            .await,
    );
    assert!(f.err.is_empty_batch_request(), "{:?}", f.err);
    assert_eq!(
        f.err.code(),
        Some("AWS.SimpleQueueService.EmptyBatchRequest")
    );
    let err = service_error(t.client.send_message_batch().queue_url(&url).send().await);
    assert!(err.is_empty_batch_request(), "no Entries at all: {err:?}");
    let err = service_error(
        t.client
            .delete_message_batch()
            .queue_url(&url)
            .set_entries(Some(vec![]))
            .send()
            .await,
    );
    assert!(err.is_empty_batch_request());
    let err = service_error(
        t.client
            .change_message_visibility_batch()
            .queue_url(&url)
            .set_entries(Some(vec![]))
            .send()
            .await,
    );
    assert!(err.is_empty_batch_request());

    // More than ten.
    let eleven: Vec<_> = (0..11).map(|i| entry(&format!("e{i}"), "x")).collect();
    let f = failure(
        t.client
            .send_message_batch()
            .queue_url(&url)
            .set_entries(Some(eleven))
            .send()
            .await,
    );
    assert!(f.err.is_too_many_entries_in_batch_request(), "{:?}", f.err);
    assert_eq!(f.status, 400);
    assert_eq!(
        f.err.message(),
        Some("Maximum number of entries per request are 10. You have sent 11.")
    );
    let twenty: Vec<_> = (0..20)
        .map(|i| {
            DeleteMessageBatchRequestEntry::builder()
                .id(format!("d{i}"))
                .receipt_handle("h")
                .build()
                .unwrap()
        })
        .collect();
    let err = service_error(
        t.client
            .delete_message_batch()
            .queue_url(&url)
            .set_entries(Some(twenty))
            .send()
            .await,
    );
    assert!(err.is_too_many_entries_in_batch_request());
    assert_eq!(
        err.message(),
        Some("Maximum number of entries per request are 10. You have sent 20.")
    );
    let cmv: Vec<_> = (0..11)
        .map(|i| {
            ChangeMessageVisibilityBatchRequestEntry::builder()
                .id(format!("c{i}"))
                .receipt_handle("h")
                .visibility_timeout(1)
                .build()
                .unwrap()
        })
        .collect();
    let err = service_error(
        t.client
            .change_message_visibility_batch()
            .queue_url(&url)
            .set_entries(Some(cmv))
            .send()
            .await,
    );
    assert!(err.is_too_many_entries_in_batch_request());

    // Bad ids.
    for bad in ["has space", "dot.ted", &"a".repeat(81), "ü", ""] {
        let f = failure(
            t.client
                .send_message_batch()
                .queue_url(&url)
                .entries(entry("fine", "x"))
                .entries(entry(bad, "x"))
                .send()
                .await,
        );
        assert!(f.err.is_invalid_batch_entry_id(), "{bad:?}: {:?}", f.err);
        assert_eq!(f.status, 400);
        assert_eq!(
            f.err.message(),
            Some("A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.")
        );
    }
    let err = service_error(
        t.client
            .delete_message_batch()
            .queue_url(&url)
            .entries(
                DeleteMessageBatchRequestEntry::builder()
                    .id("bad id")
                    .receipt_handle("h")
                    .build()
                    .unwrap(),
            )
            .send()
            .await,
    );
    assert!(err.is_invalid_batch_entry_id());
    // An 80-character id is fine.
    t.client
        .send_message_batch()
        .queue_url(&url)
        .entries(entry(&"A-_9".repeat(20), "x"))
        .send()
        .await
        .expect("80 characters");

    // Duplicate ids.
    let err = service_error(
        t.client
            .send_message_batch()
            .queue_url(&url)
            .entries(entry("same", "x"))
            .entries(entry("other", "y"))
            .entries(entry("same", "z"))
            .send()
            .await,
    );
    assert!(err.is_batch_entry_ids_not_distinct(), "{err:?}");
    assert_eq!(
        err.code(),
        Some("AWS.SimpleQueueService.BatchEntryIdsNotDistinct")
    );
    let dup = DeleteMessageBatchRequestEntry::builder()
        .id("d")
        .receipt_handle("h")
        .build()
        .unwrap();
    let err = service_error(
        t.client
            .delete_message_batch()
            .queue_url(&url)
            .entries(dup.clone())
            .entries(dup)
            .send()
            .await,
    );
    assert!(err.is_batch_entry_ids_not_distinct());
    let dup = ChangeMessageVisibilityBatchRequestEntry::builder()
        .id("c")
        .receipt_handle("h")
        .visibility_timeout(1)
        .build()
        .unwrap();
    let err = service_error(
        t.client
            .change_message_visibility_batch()
            .queue_url(&url)
            .entries(dup.clone())
            .entries(dup)
            .send()
            .await,
    );
    assert!(err.is_batch_entry_ids_not_distinct());

    // Exactly ten entries are fine.
    let ten: Vec<_> = (0..10).map(|i| entry(&format!("t{i}"), "x")).collect();
    let out = t
        .client
        .send_message_batch()
        .queue_url(&url)
        .set_entries(Some(ten))
        .send()
        .await
        .expect("ten entries");
    assert_eq!(out.successful().len(), 10);

    // Only the two good batches were enqueued.
    assert_eq!(t.counts(&url).await, (11, 0, 0));
}

#[tokio::test]
async fn batch_request_too_long() {
    let t = TestServer::start().await;
    let url = t.create_queue("batch-size").await;
    let half = "x".repeat(524_288);
    // Exactly 1048576 bytes in total: accepted.
    let out = t
        .client
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("a", &half))
        .entries(entry("b", &half))
        .send()
        .await
        .expect("1048576 bytes in total are allowed");
    assert_eq!(out.successful().len(), 2);
    // One byte more: the whole batch is refused.
    let f = failure(
        t.client
            .send_message_batch()
            .queue_url(&url)
            .entries(entry("a", &half))
            .entries(entry("b", &format!("{half}x")))
            .send()
            .await,
    );
    assert!(f.err.is_batch_request_too_long(), "{:?}", f.err);
    assert_eq!(f.status, 400);
    assert_eq!(
        f.err.code(),
        Some("AWS.SimpleQueueService.BatchRequestTooLong")
    );
    assert_eq!(
        f.err.message(),
        Some("Batch requests cannot be longer than 1048576 bytes. You have sent 1048577 bytes.")
    );
    // Attributes count toward the batch size too.
    let f = failure(
        t.client
            .send_message_batch()
            .queue_url(&url)
            .entries(entry("a", &half))
            .entries(
                SendMessageBatchRequestEntry::builder()
                    .id("b")
                    .message_body(&half)
                    .message_attributes("k", string_attr("x"))
                    .build()
                    .unwrap(),
            )
            .send()
            .await,
    );
    assert!(f.err.is_batch_request_too_long());
    assert_eq!(
        f.err.message(),
        Some("Batch requests cannot be longer than 1048576 bytes. You have sent 1048584 bytes.")
    );
    assert_eq!(t.counts(&url).await, (2, 0, 0));
}

#[tokio::test]
async fn delete_message_batch_partial_failure() {
    let t = TestServer::start().await;
    let url = t.create_queue("del-batch").await;
    for i in 0..3 {
        t.send(&url, &format!("m{i}")).await;
    }
    let msgs = t.receive(&url, 10).await;
    assert_eq!(msgs.len(), 3);
    let del = |id: &str, handle: &str| {
        DeleteMessageBatchRequestEntry::builder()
            .id(id)
            .receipt_handle(handle)
            .build()
            .unwrap()
    };
    let out = t
        .client
        .delete_message_batch()
        .queue_url(&url)
        .entries(del("first", msgs[0].receipt_handle().unwrap()))
        .entries(del("garbage", "garbage"))
        .entries(del("second", msgs[1].receipt_handle().unwrap()))
        .send()
        .await
        .unwrap();
    let mut ok: Vec<&str> = out.successful().iter().map(|e| e.id()).collect();
    ok.sort();
    assert_eq!(ok, vec!["first", "second"]);
    assert_eq!(out.failed().len(), 1);
    let f = &out.failed()[0];
    assert_eq!(f.id(), "garbage");
    assert_eq!(f.code(), "ReceiptHandleIsInvalid");
    assert!(f.sender_fault());
    assert_eq!(
        f.message(),
        Some("The input receipt handle \"garbage\" is not a valid receipt handle.")
    );
    assert_eq!(t.counts(&url).await, (0, 1, 0));
    t.advance_secs(30);
    assert_eq!(t.receive_one(&url).await.body(), msgs[2].body());
}

#[tokio::test]
async fn change_message_visibility_batch() {
    let t = TestServer::start().await;
    let url = t.create_queue("cmv-batch").await;
    for i in 0..3 {
        t.send(&url, &format!("m{i}")).await;
    }
    let msgs = t.receive(&url, 10).await;
    assert_eq!(msgs.len(), 3);
    let change = |id: &str, handle: &str, timeout: i32| {
        ChangeMessageVisibilityBatchRequestEntry::builder()
            .id(id)
            .receipt_handle(handle)
            .visibility_timeout(timeout)
            .build()
            .unwrap()
    };
    let out = t
        .client
        .change_message_visibility_batch()
        .queue_url(&url)
        .entries(change("release", msgs[0].receipt_handle().unwrap(), 0))
        .entries(change("extend", msgs[1].receipt_handle().unwrap(), 100))
        .entries(change("garbage", "garbage", 0))
        .entries(change("toolong", msgs[2].receipt_handle().unwrap(), 43_201))
        .send()
        .await
        .unwrap();
    let mut ok: Vec<&str> = out.successful().iter().map(|e| e.id()).collect();
    ok.sort();
    assert_eq!(ok, vec!["extend", "release"]);
    let failed: HashMap<&str, _> = out.failed().iter().map(|e| (e.id(), e)).collect();
    assert_eq!(failed.len(), 2);
    assert_eq!(failed["garbage"].code(), "ReceiptHandleIsInvalid");
    assert!(failed["garbage"].sender_fault());
    assert_eq!(failed["toolong"].code(), "InvalidParameterValue");
    // Released at once.
    assert_eq!(t.counts(&url).await, (1, 2, 0));
    let again = t.receive_one(&url).await;
    assert_eq!(again.body(), msgs[0].body());
    t.delete_message(&url, again.receipt_handle().unwrap())
        .await;
    // m2 keeps its 30 s; m1 now needs 100 s.
    t.advance_secs(30);
    let third = t.receive_one(&url).await;
    assert_eq!(third.body(), msgs[2].body());
    t.delete_message(&url, third.receipt_handle().unwrap())
        .await;
    t.advance_secs(69);
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_secs(1);
    assert_eq!(t.receive_one(&url).await.body(), msgs[1].body());
}

#[tokio::test]
async fn sdk_responses_carry_request_ids() {
    use aws_sdk_sqs::operation::RequestId;
    let t = TestServer::start().await;
    let out = t
        .client
        .create_queue()
        .queue_name("rid")
        .send()
        .await
        .unwrap();
    let id = out.request_id().expect("request id on success");
    assert!(is_uuid(id), "{id}");
    let err = t
        .client
        .get_queue_url()
        .queue_name("nope")
        .send()
        .await
        .unwrap_err();
    let id = err.request_id().expect("request id on error");
    assert!(is_uuid(id), "{id}");
}
