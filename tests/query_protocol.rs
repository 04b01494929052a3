//! Wire-level details over raw HTTP: the AWS Query (XML) protocol with form
//! POST, GET and queue-URL paths, its error documents, and the JSON
//! protocol's error shape, malformed input and request ids.

mod common;

use std::collections::HashMap;

use aws_sdk_sqs::types::MessageAttributeValue;
use common::*;

const V: (&str, &str) = ("Version", "2012-11-05");

/// Checks a query success response and returns the inside of
/// `<{op}Result>` ("" when the operation has no result element).
fn ok_xml(raw: &Raw, op: &str) -> String {
    assert_eq!(raw.status, 200, "{op}: {}", raw.body);
    assert_eq!(raw.header("content-type"), Some("text/xml"), "{op}");
    let id = raw.request_id();
    let body = raw.compact_xml();
    let head = format!("<{op}Response xmlns=\"{XMLNS}\">");
    let tail =
        format!("<ResponseMetadata><RequestId>{id}</RequestId></ResponseMetadata></{op}Response>");
    assert!(body.starts_with(&head), "{op}: {body}");
    assert!(body.ends_with(&tail), "{op}: {body}");
    let inner = &body[head.len()..body.len() - tail.len()];
    if inner.is_empty() || inner == format!("<{op}Result/>") {
        return String::new();
    }
    let open = format!("<{op}Result>");
    let close = format!("</{op}Result>");
    assert!(
        inner.starts_with(&open) && inner.ends_with(&close),
        "{op}: {inner}"
    );
    inner[open.len()..inner.len() - close.len()].to_string()
}

/// Checks a query error document exactly (spec §1.3).
fn error_xml(raw: &Raw, status: u16, code: &str, message: &str) {
    assert_eq!(raw.status, status, "{}", raw.body);
    assert_eq!(raw.header("content-type"), Some("text/xml"));
    let id = raw.request_id();
    let expected = format!(
        "<?xml version=\"1.0\"?><ErrorResponse xmlns=\"{XMLNS}\"><Error><Type>Sender</Type><Code>{code}</Code><Message>{message}</Message><Detail/></Error><RequestId>{id}</RequestId></ErrorResponse>"
    );
    assert_eq!(raw.compact_xml(), expected);
}

/// The `<Name>…</Name><Value>…</Value>` pairs of repeated `<elem>` entries.
fn name_values(xml: &str, elem: &str, key: &str, value: &str) -> HashMap<String, String> {
    xml_all(xml, elem)
        .iter()
        .map(|e| (xml_text(e, key), xml_text(e, value)))
        .collect()
}

async fn create(t: &TestServer, name: &str) -> String {
    let raw = t
        .form_post("/", &[("Action", "CreateQueue"), ("QueueName", name), V])
        .await;
    xml_text(&ok_xml(&raw, "CreateQueue"), "QueueUrl")
}

// ---------------------------------------------------------------- success

#[tokio::test]
async fn create_queue_by_form_post() {
    let t = TestServer::start().await;
    let raw = t
        .form_post("/", &[("Action", "CreateQueue"), ("QueueName", "xml-q"), V])
        .await;
    let id = raw.request_id();
    assert_eq!(
        raw.compact_xml(),
        format!(
            "<CreateQueueResponse xmlns=\"{XMLNS}\"><CreateQueueResult><QueueUrl>{}</QueueUrl></CreateQueueResult><ResponseMetadata><RequestId>{id}</RequestId></ResponseMetadata></CreateQueueResponse>",
            t.queue_url("xml-q")
        )
    );
    // The queue is the one the SDK sees.
    let got = t
        .client
        .get_queue_url()
        .queue_name("xml-q")
        .send()
        .await
        .unwrap();
    assert_eq!(got.queue_url(), Some(t.queue_url("xml-q").as_str()));
    // GetQueueUrl over query returns the same URL.
    let raw = t
        .form_post("/", &[("Action", "GetQueueUrl"), ("QueueName", "xml-q")])
        .await;
    assert_eq!(
        xml_text(&ok_xml(&raw, "GetQueueUrl"), "QueueUrl"),
        t.queue_url("xml-q")
    );
}

#[tokio::test]
async fn create_queue_with_attributes_and_tags_then_read_them() {
    let t = TestServer::start().await;
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "CreateQueue"),
                ("QueueName", "xml-attrs"),
                ("Attribute.1.Name", "VisibilityTimeout"),
                ("Attribute.1.Value", "60"),
                ("Attribute.2.Name", "DelaySeconds"),
                ("Attribute.2.Value", "2"),
                ("Tag.1.Key", "team"),
                ("Tag.1.Value", "core"),
                V,
            ],
        )
        .await;
    let url = xml_text(&ok_xml(&raw, "CreateQueue"), "QueueUrl");

    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "GetQueueAttributes"),
                ("QueueUrl", &url),
                ("AttributeName.1", "VisibilityTimeout"),
                ("AttributeName.2", "DelaySeconds"),
            ],
        )
        .await;
    let inner = ok_xml(&raw, "GetQueueAttributes");
    let attrs = name_values(&inner, "Attribute", "Name", "Value");
    assert_eq!(attrs.len(), 2, "{inner}");
    assert_eq!(attrs["VisibilityTimeout"], "60");
    assert_eq!(attrs["DelaySeconds"], "2");
    assert!(
        inner.contains("<Attribute><Name>VisibilityTimeout</Name><Value>60</Value></Attribute>"),
        "{inner}"
    );

    // `AttributeName=All` without an index is accepted (lenient, as AWS).
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "GetQueueAttributes"),
                ("QueueUrl", &url),
                ("AttributeName", "All"),
            ],
        )
        .await;
    let attrs = name_values(
        &ok_xml(&raw, "GetQueueAttributes"),
        "Attribute",
        "Name",
        "Value",
    );
    assert_eq!(attrs.len(), 12, "{attrs:?}");
    assert_eq!(
        attrs["QueueArn"],
        format!("arn:aws:sqs:{REGION}:{ACCOUNT}:xml-attrs")
    );

    let raw = t
        .form_post("/", &[("Action", "ListQueueTags"), ("QueueUrl", &url)])
        .await;
    assert_eq!(
        ok_xml(&raw, "ListQueueTags"),
        "<Tag><Key>team</Key><Value>core</Value></Tag>"
    );

    // TagQueue / UntagQueue / SetQueueAttributes have no result element.
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "TagQueue"),
                ("QueueUrl", &url),
                ("Tag.1.Key", "env"),
                ("Tag.1.Value", "ci"),
            ],
        )
        .await;
    assert_eq!(ok_xml(&raw, "TagQueue"), "");
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "UntagQueue"),
                ("QueueUrl", &url),
                ("TagKey.1", "team"),
            ],
        )
        .await;
    assert_eq!(ok_xml(&raw, "UntagQueue"), "");
    let raw = t
        .form_post("/", &[("Action", "ListQueueTags"), ("QueueUrl", &url)])
        .await;
    assert_eq!(
        ok_xml(&raw, "ListQueueTags"),
        "<Tag><Key>env</Key><Value>ci</Value></Tag>"
    );
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "SetQueueAttributes"),
                ("QueueUrl", &url),
                ("Attribute.1.Name", "VisibilityTimeout"),
                ("Attribute.1.Value", "90"),
            ],
        )
        .await;
    assert_eq!(ok_xml(&raw, "SetQueueAttributes"), "");
    assert_eq!(
        t.attribute(&url, "VisibilityTimeout").await.as_deref(),
        Some("90")
    );
}

#[tokio::test]
async fn send_receive_delete_over_query() {
    let t = TestServer::start().await;
    let url = create(&t, "xml-msgs").await;
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "SendMessage"),
                ("QueueUrl", &url),
                ("MessageBody", "hello & <world>"),
                ("MessageAttribute.1.Name", "Foo"),
                ("MessageAttribute.1.Value.DataType", "String"),
                ("MessageAttribute.1.Value.StringValue", "Bar"),
                ("MessageAttribute.2.Name", "bin"),
                ("MessageAttribute.2.Value.DataType", "Binary"),
                ("MessageAttribute.2.Value.BinaryValue", "AAE="),
                ("MessageSystemAttribute.1.Name", "AWSTraceHeader"),
                ("MessageSystemAttribute.1.Value.DataType", "String"),
                (
                    "MessageSystemAttribute.1.Value.StringValue",
                    "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
                ),
                V,
            ],
        )
        .await;
    let inner = ok_xml(&raw, "SendMessage");
    let mut attrs = HashMap::new();
    attrs.insert("Foo".to_string(), string_attr("Bar"));
    attrs.insert("bin".to_string(), binary_attr("Binary", &[0, 1]));
    let attrs_md5 = md5_of_attributes(&attrs);
    let message_id = xml_text(&inner, "MessageId");
    assert!(is_uuid(&message_id), "{message_id}");
    assert_eq!(
        inner,
        format!(
            "<MD5OfMessageBody>{}</MD5OfMessageBody><MD5OfMessageAttributes>{attrs_md5}</MD5OfMessageAttributes><MD5OfMessageSystemAttributes>5ae4d5d7636402d80f4eb6d213245a88</MD5OfMessageSystemAttributes><MessageId>{message_id}</MessageId>",
            md5_hex(b"hello & <world>")
        )
    );

    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "ReceiveMessage"),
                ("QueueUrl", &url),
                ("AttributeName.1", "All"),
                ("MessageAttributeName.1", "All"),
                ("MaxNumberOfMessages", "10"),
                V,
            ],
        )
        .await;
    let inner = ok_xml(&raw, "ReceiveMessage");
    let messages = xml_all(&inner, "Message");
    assert_eq!(messages.len(), 1, "{inner}");
    let m = &messages[0];
    assert_eq!(xml_text(m, "MessageId"), message_id);
    assert_eq!(xml_text(m, "Body"), "hello & <world>");
    assert!(m.contains("<Body>hello &amp; &lt;world&gt;</Body>"), "{m}");
    assert_eq!(xml_text(m, "MD5OfBody"), md5_hex(b"hello & <world>"));
    assert_eq!(xml_text(m, "MD5OfMessageAttributes"), attrs_md5);
    let system = name_values(m, "Attribute", "Name", "Value");
    assert_eq!(system["ApproximateReceiveCount"], "1");
    assert_eq!(system["SenderId"], ACCOUNT);
    assert_eq!(
        system["AWSTraceHeader"],
        "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
    );
    assert!(system.contains_key("SentTimestamp"));
    assert!(system.contains_key("ApproximateFirstReceiveTimestamp"));
    let user = xml_all(m, "MessageAttribute");
    assert_eq!(user.len(), 2, "{m}");
    assert!(user.contains(
        &"<Name>Foo</Name><Value><StringValue>Bar</StringValue><DataType>String</DataType></Value>"
            .to_string()
    ), "{user:?}");
    assert!(user.contains(
        &"<Name>bin</Name><Value><BinaryValue>AAE=</BinaryValue><DataType>Binary</DataType></Value>"
            .to_string()
    ), "{user:?}");
    // Element order inside <Message> follows the model.
    let order: Vec<usize> = [
        "<MessageId>",
        "<ReceiptHandle>",
        "<MD5OfBody>",
        "<Body>",
        "<Attribute>",
        "<MD5OfMessageAttributes>",
        "<MessageAttribute>",
    ]
    .iter()
    .map(|tag| {
        m.find(tag)
            .unwrap_or_else(|| panic!("{tag} missing in {m}"))
    })
    .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted, "{m}");

    let handle = xml_text(m, "ReceiptHandle");
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "DeleteMessage"),
                ("QueueUrl", &url),
                ("ReceiptHandle", &handle),
                V,
            ],
        )
        .await;
    let id = raw.request_id();
    assert_eq!(
        raw.compact_xml(),
        format!("<DeleteMessageResponse xmlns=\"{XMLNS}\"><ResponseMetadata><RequestId>{id}</RequestId></ResponseMetadata></DeleteMessageResponse>")
    );
    assert_eq!(t.counts(&url).await, (0, 0, 0));

    // An empty receive has an empty result element.
    let raw = t
        .form_post("/", &[("Action", "ReceiveMessage"), ("QueueUrl", &url)])
        .await;
    let id = raw.request_id();
    assert_eq!(
        raw.compact_xml(),
        format!("<ReceiveMessageResponse xmlns=\"{XMLNS}\"><ReceiveMessageResult/><ResponseMetadata><RequestId>{id}</RequestId></ResponseMetadata></ReceiveMessageResponse>")
    );
}

#[tokio::test]
async fn message_attribute_filter_over_query() {
    let t = TestServer::start().await;
    let url = create(&t, "xml-filter").await;
    let mut attrs = HashMap::new();
    attrs.insert("Hello".to_string(), string_attr("1"));
    attrs.insert("Other".to_string(), string_attr("2"));
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .set_message_attributes(Some(attrs))
        .send()
        .await
        .unwrap();
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "ReceiveMessage"),
                ("QueueUrl", &url),
                ("MessageAttributeName.1", "Hel.*"),
                ("AttributeName.1", "ApproximateReceiveCount"),
            ],
        )
        .await;
    let inner = ok_xml(&raw, "ReceiveMessage");
    let m = &xml_all(&inner, "Message")[0];
    let names: Vec<String> = xml_all(m, "MessageAttribute")
        .iter()
        .map(|a| xml_text(a, "Name"))
        .collect();
    assert_eq!(names, vec!["Hello"]);
    let mut only = HashMap::new();
    only.insert("Hello".to_string(), string_attr("1"));
    assert_eq!(
        xml_text(m, "MD5OfMessageAttributes"),
        md5_of_attributes(&only)
    );
    let system = name_values(m, "Attribute", "Name", "Value");
    assert_eq!(system.len(), 1);
    assert_eq!(system["ApproximateReceiveCount"], "1");
}

#[tokio::test]
async fn xml_escaping_round_trips_quotes_and_carriage_returns() {
    let t = TestServer::start().await;
    let url = create(&t, "xml-escape").await;
    let body = "\"&quot;&quot;\r";
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "SendMessage"),
                ("QueueUrl", &url),
                ("MessageBody", body),
            ],
        )
        .await;
    assert_eq!(
        xml_text(&ok_xml(&raw, "SendMessage"), "MD5OfMessageBody"),
        md5_hex(body.as_bytes())
    );
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "ReceiveMessage"),
                ("QueueUrl", &url),
                ("VisibilityTimeout", "0"),
            ],
        )
        .await;
    let inner = ok_xml(&raw, "ReceiveMessage");
    assert!(
        inner.contains("<Body>&quot;&amp;quot;&amp;quot;&#xD;</Body>"),
        "{inner}"
    );
    // The JSON side sees the same bytes.
    let m = t.receive_one(&url).await;
    assert_eq!(m.body(), Some(body));
}

#[tokio::test]
async fn get_requests_with_a_query_string() {
    let t = TestServer::start().await;
    let raw = t
        .get(
            "/",
            &[("Action", "CreateQueue"), ("QueueName", "get-one"), V],
        )
        .await;
    let url = xml_text(&ok_xml(&raw, "CreateQueue"), "QueueUrl");
    assert_eq!(url, t.queue_url("get-one"));
    create(&t, "get-two").await;
    create(&t, "other").await;

    let raw = t
        .get(
            "/",
            &[("Action", "ListQueues"), ("QueueNamePrefix", "get-"), V],
        )
        .await;
    let mut urls = xml_all(&ok_xml(&raw, "ListQueues"), "QueueUrl");
    urls.sort();
    assert_eq!(urls, vec![t.queue_url("get-one"), t.queue_url("get-two")]);

    // Pagination over query: MaxResults gives a NextToken.
    let raw = t
        .get(
            "/",
            &[
                ("Action", "ListQueues"),
                ("QueueNamePrefix", "get-"),
                ("MaxResults", "1"),
            ],
        )
        .await;
    let inner = ok_xml(&raw, "ListQueues");
    assert_eq!(xml_all(&inner, "QueueUrl").len(), 1);
    let token = xml_text(&inner, "NextToken");
    let raw = t
        .get(
            "/",
            &[
                ("Action", "ListQueues"),
                ("QueueNamePrefix", "get-"),
                ("MaxResults", "1"),
                ("NextToken", &token),
            ],
        )
        .await;
    let inner = ok_xml(&raw, "ListQueues");
    assert_eq!(xml_all(&inner, "QueueUrl").len(), 1);
    assert!(xml_all(&inner, "NextToken").is_empty(), "{inner}");

    // A GET naming the queue by its path.
    let raw = t
        .get(
            &format!("/{ACCOUNT}/get-one"),
            &[("Action", "SendMessage"), ("MessageBody", "via GET")],
        )
        .await;
    ok_xml(&raw, "SendMessage");
    assert_eq!(t.receive_one(&url).await.body(), Some("via GET"));

    // No match: an empty result.
    let raw = t
        .get("/", &[("Action", "ListQueues"), ("QueueNamePrefix", "zzz")])
        .await;
    assert_eq!(ok_xml(&raw, "ListQueues"), "");
}

#[tokio::test]
async fn requests_posted_to_the_queue_url_path() {
    let t = TestServer::start().await;
    let url = create(&t, "by-path").await;
    let path = format!("/{ACCOUNT}/by-path");

    // Java v1 style: no QueueUrl, the path names the queue.
    let raw = t
        .form_post(
            &path,
            &[("Action", "SendMessage"), ("MessageBody", "one"), V],
        )
        .await;
    ok_xml(&raw, "SendMessage");
    let raw = t
        .form_post(
            &path,
            &[
                ("Action", "GetQueueAttributes"),
                ("AttributeName.1", "ApproximateNumberOfMessages"),
            ],
        )
        .await;
    assert_eq!(
        ok_xml(&raw, "GetQueueAttributes"),
        "<Attribute><Name>ApproximateNumberOfMessages</Name><Value>1</Value></Attribute>"
    );
    let raw = t.form_post(&path, &[("Action", "ReceiveMessage")]).await;
    let inner = ok_xml(&raw, "ReceiveMessage");
    assert_eq!(xml_text(&inner, "Body"), "one");
    let handle = xml_text(&inner, "ReceiptHandle");
    let raw = t
        .form_post(
            &path,
            &[
                ("Action", "ChangeMessageVisibility"),
                ("ReceiptHandle", &handle),
                ("VisibilityTimeout", "0"),
            ],
        )
        .await;
    assert_eq!(ok_xml(&raw, "ChangeMessageVisibility"), "");
    assert_eq!(t.counts(&url).await, (1, 0, 0));
    let raw = t.form_post(&path, &[("Action", "ReceiveMessage")]).await;
    let handle = xml_text(&ok_xml(&raw, "ReceiveMessage"), "ReceiptHandle");
    let raw = t
        .form_post(
            &path,
            &[("Action", "DeleteMessage"), ("ReceiptHandle", &handle)],
        )
        .await;
    assert_eq!(ok_xml(&raw, "DeleteMessage"), "");
    assert_eq!(t.counts(&url).await, (0, 0, 0));

    // LocalStack's path form names the queue too.
    let raw = t
        .form_post(
            &format!("/queue/{REGION}/{ACCOUNT}/by-path"),
            &[("Action", "SendMessage"), ("MessageBody", "two")],
        )
        .await;
    ok_xml(&raw, "SendMessage");
    assert_eq!(t.receive_one(&url).await.body(), Some("two"));

    // A QueueUrl parameter wins over the path.
    let other = create(&t, "by-path-other").await;
    let raw = t
        .form_post(
            &path,
            &[
                ("Action", "SendMessage"),
                ("QueueUrl", &other),
                ("MessageBody", "three"),
            ],
        )
        .await;
    ok_xml(&raw, "SendMessage");
    assert_eq!(t.counts(&other).await, (1, 0, 0));
    assert_eq!(t.counts(&url).await, (0, 1, 0));

    // PurgeQueue and DeleteQueue on the path.
    let raw = t.form_post(&path, &[("Action", "PurgeQueue")]).await;
    assert_eq!(ok_xml(&raw, "PurgeQueue"), "");
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    let raw = t.form_post(&path, &[("Action", "DeleteQueue")]).await;
    assert_eq!(ok_xml(&raw, "DeleteQueue"), "");
    let err = t
        .form_post(&path, &[("Action", "SendMessage"), ("MessageBody", "x")])
        .await;
    error_xml(
        &err,
        400,
        "AWS.SimpleQueueService.NonExistentQueue",
        "The specified queue does not exist for this wsdl version.",
    );
}

#[tokio::test]
async fn batches_over_query() {
    let t = TestServer::start().await;
    let url = create(&t, "xml-batch").await;
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "SendMessageBatch"),
                ("QueueUrl", &url),
                ("SendMessageBatchRequestEntry.1.Id", "ok"),
                ("SendMessageBatchRequestEntry.1.MessageBody", "fine"),
                (
                    "SendMessageBatchRequestEntry.1.MessageAttribute.1.Name",
                    "Foo",
                ),
                (
                    "SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType",
                    "String",
                ),
                (
                    "SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue",
                    "Bar",
                ),
                ("SendMessageBatchRequestEntry.2.Id", "bad"),
                ("SendMessageBatchRequestEntry.2.MessageBody", "nul\u{1}"),
                ("SendMessageBatchRequestEntry.3.Id", "later"),
                ("SendMessageBatchRequestEntry.3.MessageBody", "delayed"),
                ("SendMessageBatchRequestEntry.3.DelaySeconds", "5"),
                V,
            ],
        )
        .await;
    let inner = ok_xml(&raw, "SendMessageBatch");
    let ok = xml_all(&inner, "SendMessageBatchResultEntry");
    assert_eq!(ok.len(), 2, "{inner}");
    let first = ok
        .iter()
        .find(|e| xml_text(e, "Id") == "ok")
        .expect("ok entry");
    assert_eq!(xml_text(first, "MD5OfMessageBody"), md5_hex(b"fine"));
    assert_eq!(
        xml_text(first, "MD5OfMessageAttributes"),
        "ae7155c6026991b6d54b11589678bf9c"
    );
    assert!(is_uuid(&xml_text(first, "MessageId")));
    let failed = xml_all(&inner, "BatchResultErrorEntry");
    assert_eq!(failed.len(), 1, "{inner}");
    assert_eq!(xml_text(&failed[0], "Id"), "bad");
    assert_eq!(xml_text(&failed[0], "Code"), "InvalidMessageContents");
    assert_eq!(xml_text(&failed[0], "SenderFault"), "true");
    assert!(!xml_text(&failed[0], "Message").is_empty());
    assert_eq!(t.counts(&url).await, (1, 0, 1));

    t.advance_secs(5);
    let msgs = t.receive(&url, 10).await;
    assert_eq!(msgs.len(), 2);
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "ChangeMessageVisibilityBatch"),
                ("QueueUrl", &url),
                ("ChangeMessageVisibilityBatchRequestEntry.1.Id", "c1"),
                (
                    "ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle",
                    msgs[0].receipt_handle().unwrap(),
                ),
                (
                    "ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout",
                    "0",
                ),
                ("ChangeMessageVisibilityBatchRequestEntry.2.Id", "c2"),
                (
                    "ChangeMessageVisibilityBatchRequestEntry.2.ReceiptHandle",
                    "garbage",
                ),
                (
                    "ChangeMessageVisibilityBatchRequestEntry.2.VisibilityTimeout",
                    "0",
                ),
            ],
        )
        .await;
    let inner = ok_xml(&raw, "ChangeMessageVisibilityBatch");
    assert_eq!(
        xml_all(&inner, "ChangeMessageVisibilityBatchResultEntry"),
        vec!["<Id>c1</Id>"]
    );
    let failed = xml_all(&inner, "BatchResultErrorEntry");
    assert_eq!(failed.len(), 1);
    assert_eq!(xml_text(&failed[0], "Id"), "c2");
    assert_eq!(xml_text(&failed[0], "Code"), "ReceiptHandleIsInvalid");
    assert_eq!(t.counts(&url).await, (1, 1, 0));

    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "DeleteMessageBatch"),
                ("QueueUrl", &url),
                ("DeleteMessageBatchRequestEntry.1.Id", "d1"),
                (
                    "DeleteMessageBatchRequestEntry.1.ReceiptHandle",
                    msgs[1].receipt_handle().unwrap(),
                ),
            ],
        )
        .await;
    let inner = ok_xml(&raw, "DeleteMessageBatch");
    assert_eq!(
        inner,
        "<DeleteMessageBatchResultEntry><Id>d1</Id></DeleteMessageBatchResultEntry>"
    );
    assert_eq!(t.counts(&url).await, (1, 0, 0));

    // Envelope errors are whole-request errors in XML.
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "DeleteMessageBatch"),
                ("QueueUrl", &url),
                ("DeleteMessageBatchRequestEntry.1.Id", "same"),
                ("DeleteMessageBatchRequestEntry.1.ReceiptHandle", "h"),
                ("DeleteMessageBatchRequestEntry.2.Id", "same"),
                ("DeleteMessageBatchRequestEntry.2.ReceiptHandle", "h"),
            ],
        )
        .await;
    assert_eq!(raw.status, 400);
    assert_eq!(
        xml_text(&raw.body, "Code"),
        "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"
    );
    let raw = t
        .form_post("/", &[("Action", "SendMessageBatch"), ("QueueUrl", &url)])
        .await;
    assert_eq!(raw.status, 400);
    assert_eq!(
        xml_text(&raw.body, "Code"),
        "AWS.SimpleQueueService.EmptyBatchRequest"
    );
}

#[tokio::test]
async fn permissions_over_query() {
    let t = TestServer::start().await;
    let url = create(&t, "xml-perm").await;
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "AddPermission"),
                ("QueueUrl", &url),
                ("Label", "lbl"),
                ("AWSAccountId.1", "123456789012"),
                ("ActionName.1", "SendMessage"),
                ("ActionName.2", "ReceiveMessage"),
            ],
        )
        .await;
    assert_eq!(ok_xml(&raw, "AddPermission"), "");
    let policy: serde_json::Value =
        serde_json::from_str(&t.attribute(&url, "Policy").await.unwrap()).unwrap();
    assert_eq!(policy["Statement"][0]["Sid"], "lbl");
    assert_eq!(
        policy["Statement"][0]["Action"],
        serde_json::json!(["SQS:SendMessage", "SQS:ReceiveMessage"])
    );
    assert_eq!(
        policy["Statement"][0]["Principal"]["AWS"],
        "arn:aws:iam::123456789012:root"
    );
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "RemovePermission"),
                ("QueueUrl", &url),
                ("Label", "lbl"),
            ],
        )
        .await;
    assert_eq!(ok_xml(&raw, "RemovePermission"), "");
    assert_eq!(t.attribute(&url, "Policy").await, None);
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "RemovePermission"),
                ("QueueUrl", &url),
                ("Label", "lbl"),
            ],
        )
        .await;
    error_xml(
        &raw,
        400,
        "InvalidParameterValue",
        "Value lbl for parameter Label is invalid. Reason: can't find label.",
    );
}

#[tokio::test]
async fn query_region_comes_from_the_signature() {
    let t = TestServer::start().await;
    let auth = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240101/eu-west-2/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc";
    let raw = t
        .raw(
            t.http
                .post(format!("{}/", t.endpoint))
                .header("authorization", auth)
                .form(&[("Action", "CreateQueue"), ("QueueName", "regional")]),
        )
        .await;
    let url = xml_text(&ok_xml(&raw, "CreateQueue"), "QueueUrl");
    let raw = t
        .raw(
            t.http
                .post(format!("{}/", t.endpoint))
                .header("authorization", auth)
                .form(&[
                    ("Action", "GetQueueAttributes"),
                    ("QueueUrl", url.as_str()),
                    ("AttributeName.1", "QueueArn"),
                ]),
        )
        .await;
    assert_eq!(
        ok_xml(&raw, "GetQueueAttributes"),
        format!("<Attribute><Name>QueueArn</Name><Value>arn:aws:sqs:eu-west-2:{ACCOUNT}:regional</Value></Attribute>")
    );
    // The us-east-1 SDK client does not see it.
    assert!(t
        .client
        .list_queues()
        .send()
        .await
        .unwrap()
        .queue_urls
        .is_none());
    // A presigned GET names its region in X-Amz-Credential.
    let raw = t
        .get(
            "/",
            &[
                ("Action", "GetQueueUrl"),
                ("QueueName", "regional"),
                (
                    "X-Amz-Credential",
                    "AKID/20240101/eu-west-2/sqs/aws4_request",
                ),
            ],
        )
        .await;
    assert_eq!(xml_text(&ok_xml(&raw, "GetQueueUrl"), "QueueUrl"), url);
}

// ----------------------------------------------------------- query errors

#[tokio::test]
async fn missing_queue_error_document() {
    let t = TestServer::start().await;
    let raw = t
        .form_post("/", &[("Action", "GetQueueUrl"), ("QueueName", "nope"), V])
        .await;
    error_xml(
        &raw,
        400,
        "AWS.SimpleQueueService.NonExistentQueue",
        "The specified queue does not exist for this wsdl version.",
    );
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "SendMessage"),
                ("QueueUrl", &t.queue_url("nope")),
                ("MessageBody", "x"),
            ],
        )
        .await;
    error_xml(
        &raw,
        400,
        "AWS.SimpleQueueService.NonExistentQueue",
        "The specified queue does not exist for this wsdl version.",
    );
}

#[tokio::test]
async fn a_request_without_action_is_404_unknown_operation() {
    let t = TestServer::start().await;
    for raw in [
        t.get("/", &[]).await,
        t.get("/", &[V]).await,
        t.form_post("/", &[("QueueName", "x"), V]).await,
        t.form_post(&format!("/{ACCOUNT}/q"), &[("MessageBody", "x")])
            .await,
    ] {
        assert_eq!(raw.status, 404, "{}", raw.body);
        assert_eq!(raw.body, "<UnknownOperationException/>");
        raw.request_id();
    }
}

#[tokio::test]
async fn an_unknown_action_is_invalid_action() {
    let t = TestServer::start().await;
    let raw = t.form_post("/", &[("Action", "FooBar"), V]).await;
    error_xml(
        &raw,
        400,
        "InvalidAction",
        "The action FooBar is not valid for this endpoint.",
    );
    let raw = t.get("/", &[("Action", "DeleteEverything")]).await;
    error_xml(
        &raw,
        400,
        "InvalidAction",
        "The action DeleteEverything is not valid for this endpoint.",
    );
}

#[tokio::test]
async fn account_actions_on_a_queue_path_are_invalid_action() {
    let t = TestServer::start().await;
    create(&t, "q").await;
    let path = format!("/{ACCOUNT}/q");
    let raw = t.form_post(&path, &[("Action", "ListQueues"), V]).await;
    error_xml(
        &raw,
        400,
        "InvalidAction",
        "The action ListQueues is not valid for this endpoint.",
    );
    let raw = t
        .form_post(&path, &[("Action", "CreateQueue"), ("QueueName", "q2")])
        .await;
    error_xml(
        &raw,
        400,
        "InvalidAction",
        "The action CreateQueue is not valid for this endpoint.",
    );
}

#[tokio::test]
async fn query_error_codes_and_statuses() {
    let t = TestServer::start_strict().await;
    let url = create(&t, "xml-errors").await;

    let raw = t
        .form_post("/", &[("Action", "SendMessage"), ("QueueUrl", &url)])
        .await;
    error_xml(
        &raw,
        400,
        "MissingParameter",
        "The request must contain the parameter MessageBody.",
    );
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "CreateQueue"),
                ("QueueName", "xml-errors"),
                ("Attribute.1.Name", "DelaySeconds"),
                ("Attribute.1.Value", "9"),
            ],
        )
        .await;
    error_xml(
        &raw,
        400,
        "QueueAlreadyExists",
        "A queue already exists with the same name and a different value for attribute DelaySeconds",
    );
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "ReceiveMessage"),
                ("QueueUrl", &url),
                ("MaxNumberOfMessages", "11"),
            ],
        )
        .await;
    error_xml(
        &raw,
        400,
        "InvalidParameterValue",
        "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.",
    );
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "GetQueueAttributes"),
                ("QueueUrl", &url),
                ("AttributeName.1", "Foobar"),
            ],
        )
        .await;
    error_xml(
        &raw,
        400,
        "InvalidAttributeName",
        "Unknown Attribute Foobar.",
    );
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "DeleteMessage"),
                ("QueueUrl", &url),
                ("ReceiptHandle", "garbage"),
            ],
        )
        .await;
    assert!(raw.status == 404 || raw.status == 400, "{}", raw.status);
    error_xml(
        &raw,
        raw.status,
        "ReceiptHandleIsInvalid",
        "The input receipt handle &quot;garbage&quot; is not a valid receipt handle.",
    );
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "SendMessage"),
                ("QueueUrl", &url),
                ("MessageBody", "\u{0}"),
            ],
        )
        .await;
    assert_eq!(raw.status, 400);
    assert_eq!(xml_text(&raw.body, "Code"), "InvalidMessageContents");

    t.form_post("/", &[("Action", "PurgeQueue"), ("QueueUrl", &url)])
        .await;
    let raw = t
        .form_post("/", &[("Action", "PurgeQueue"), ("QueueUrl", &url)])
        .await;
    error_xml(
        &raw,
        403,
        "AWS.SimpleQueueService.PurgeQueueInProgress",
        "Only one PurgeQueue operation on xml-errors is allowed every 60 seconds.",
    );
}

#[tokio::test]
async fn malformed_query_input_gets_an_xml_error() {
    let t = TestServer::start().await;
    let url = create(&t, "xml-malformed").await;
    // A map entry without its key.
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "CreateQueue"),
                ("QueueName", "x"),
                ("Attribute.1.Value", "60"),
            ],
        )
        .await;
    assert_eq!(raw.status, 400, "{}", raw.body);
    assert_eq!(xml_text(&raw.body, "Code"), "MissingParameter");
    raw.request_id();
    // A number that is not one.
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "ReceiveMessage"),
                ("QueueUrl", &url),
                ("MaxNumberOfMessages", "ten"),
            ],
        )
        .await;
    assert_eq!(raw.status, 400, "{}", raw.body);
    assert_eq!(raw.header("content-type"), Some("text/xml"));
    assert!(raw.compact_xml().contains("<ErrorResponse"), "{}", raw.body);
    // Broken percent-encoding and non-UTF-8 bytes.
    let raw = t
        .raw(
            t.http
                .post(format!("{}/", t.endpoint))
                .header("content-type", "application/x-www-form-urlencoded")
                .body(b"Action=SendMessage&QueueUrl=%zz&MessageBody=%FF%FE%&&==&".to_vec()),
        )
        .await;
    assert!(
        (400..500).contains(&raw.status),
        "{} {}",
        raw.status,
        raw.body
    );
    assert_eq!(raw.header("content-type"), Some("text/xml"));
    raw.request_id();
    // The server is still fine.
    t.send(&url, "still alive").await;
    assert_eq!(t.counts(&url).await, (1, 0, 0));
}

// ------------------------------------------------------------ JSON errors

#[tokio::test]
async fn json_errors_carry_type_message_and_the_query_error_header() {
    let t = TestServer::start().await;
    let raw = t.json_post("GetQueueUrl", r#"{"QueueName":"nope"}"#).await;
    assert_eq!(raw.status, 400);
    assert_eq!(
        raw.header("content-type"),
        Some("application/x-amz-json-1.0")
    );
    assert_eq!(
        raw.header("x-amzn-query-error"),
        Some("AWS.SimpleQueueService.NonExistentQueue;Sender")
    );
    raw.request_id();
    assert_eq!(
        raw.json(),
        serde_json::json!({
            "__type": "com.amazonaws.sqs#QueueDoesNotExist",
            "message": "The specified queue does not exist."
        })
    );

    t.create_queue("json-errors").await;
    let raw = t
        .json_post(
            "CreateQueue",
            r#"{"QueueName":"json-errors","Attributes":{"DelaySeconds":"5"}}"#,
        )
        .await;
    assert_eq!(raw.status, 400);
    assert_eq!(
        raw.header("x-amzn-query-error"),
        Some("QueueAlreadyExists;Sender")
    );
    assert_eq!(raw.json()["__type"], "com.amazonaws.sqs#QueueNameExists");

    let raw = t
        .json_post(
            "ReceiveMessage",
            &format!(
                r#"{{"QueueUrl":"{}","WaitTimeSeconds":21}}"#,
                t.queue_url("json-errors")
            ),
        )
        .await;
    assert_eq!(raw.status, 400);
    assert_eq!(
        raw.header("x-amzn-query-error"),
        Some("InvalidParameterValue;Sender")
    );
    assert_eq!(
        raw.json(),
        serde_json::json!({
            "__type": "com.amazon.coral.service#InvalidParameterValueException",
            "message": "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."
        })
    );

    let raw = t
        .json_post(
            "DeleteMessage",
            &format!(
                r#"{{"QueueUrl":"{}","ReceiptHandle":"garbage"}}"#,
                t.queue_url("json-errors")
            ),
        )
        .await;
    assert_eq!(
        raw.header("x-amzn-query-error"),
        Some("ReceiptHandleIsInvalid;Sender")
    );
    assert_eq!(
        raw.json()["__type"],
        "com.amazonaws.sqs#ReceiptHandleIsInvalid"
    );

    let raw = t.json_post("CreateQueue", "{}").await;
    assert_eq!(raw.status, 400);
    assert_eq!(
        raw.header("x-amzn-query-error"),
        Some("MissingParameter;Sender")
    );
    assert_eq!(
        raw.json()["message"],
        "The request must contain the parameter QueueName."
    );
}

#[tokio::test]
async fn json_purge_in_progress_is_403() {
    let t = TestServer::start_strict().await;
    let url = t.create_queue("json-purge").await;
    let body = format!(r#"{{"QueueUrl":"{url}"}}"#);
    let raw = t.json_post("PurgeQueue", &body).await;
    assert_eq!(raw.status, 200);
    let raw = t.json_post("PurgeQueue", &body).await;
    assert_eq!(raw.status, 403);
    assert_eq!(
        raw.header("x-amzn-query-error"),
        Some("AWS.SimpleQueueService.PurgeQueueInProgress;Sender")
    );
    assert_eq!(
        raw.json()["__type"],
        "com.amazonaws.sqs#PurgeQueueInProgress"
    );
}

#[tokio::test]
async fn malformed_json_is_a_400_not_a_panic() {
    let t = TestServer::start().await;
    let url = t.create_queue("json-malformed").await;
    for (action, body) in [
        ("ListQueues", "{not json"),
        ("ListQueues", "[1,2,3]"),
        ("ListQueues", "\"string\""),
        ("CreateQueue", r#"{"QueueName":5}"#),
        ("SendMessage", r#"{"QueueUrl":["a"],"MessageBody":"x"}"#),
        (
            "ReceiveMessage",
            r#"{"QueueUrl":"q","MaxNumberOfMessages":"ten"}"#,
        ),
        (
            "SendMessage",
            r#"{"QueueUrl":"q","MessageBody":"x","MessageAttributes":{"a":{"DataType":"Binary","BinaryValue":"!!!not base64"}}}"#,
        ),
        (
            "ChangeMessageVisibility",
            r#"{"QueueUrl":"q","ReceiptHandle":"h","VisibilityTimeout":1e400}"#,
        ),
    ] {
        let raw = t.json_post(action, body).await;
        assert_eq!(raw.status, 400, "{action} {body}: {}", raw.body);
        assert_eq!(
            raw.header("content-type"),
            Some("application/x-amz-json-1.0")
        );
        raw.request_id();
        let query_error = raw
            .header("x-amzn-query-error")
            .unwrap_or_else(|| panic!("{body}"));
        assert!(query_error.ends_with(";Sender"), "{query_error}");
        let json = raw.json();
        assert!(json["__type"].is_string(), "{json}");
        assert!(json["message"].is_string(), "{json}");
    }
    let raw = t.json_post("ListQueues", "{not json").await;
    assert!(
        raw.json()["__type"]
            .as_str()
            .unwrap()
            .ends_with("SerializationException"),
        "{}",
        raw.body
    );
    // An empty body counts as `{}`.
    let raw = t.json_post("ListQueues", "").await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    // Still serving.
    t.send(&url, "ok").await;
}

#[tokio::test]
async fn unknown_or_missing_json_target_is_a_400() {
    let t = TestServer::start().await;
    let raw = t.json_post("FooBar", "{}").await;
    assert_eq!(raw.status, 400);
    assert_eq!(
        raw.header("x-amzn-query-error"),
        Some("UnknownOperationException;Sender")
    );
    assert_eq!(
        raw.json()["__type"],
        "com.amazon.coral.service#UnknownOperationException"
    );
    raw.request_id();
    // JSON content type, no target at all.
    let raw = t
        .raw(
            t.http
                .post(format!("{}/", t.endpoint))
                .header("content-type", "application/x-amz-json-1.0")
                .body("{}"),
        )
        .await;
    assert_eq!(raw.status, 400);
    assert!(raw.json()["__type"]
        .as_str()
        .unwrap()
        .ends_with("UnknownOperationException"));
    raw.request_id();
}

#[tokio::test]
async fn json_posted_to_the_queue_url_path() {
    let t = TestServer::start().await;
    let url = t.create_queue("json-path").await;
    let raw = t
        .raw(
            t.http
                .post(&url)
                .header("content-type", "application/x-amz-json-1.0")
                .header("x-amz-target", "AmazonSQS.SendMessage")
                .body(format!(
                    r#"{{"QueueUrl":"{url}","MessageBody":"php style"}}"#
                )),
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert_eq!(raw.json()["MD5OfMessageBody"], md5_hex(b"php style"));
    assert_eq!(t.receive_one(&url).await.body(), Some("php style"));
    // A JSON success for an operation without output is `{}` or empty.
    let raw = t
        .json_post("PurgeQueue", &format!(r#"{{"QueueUrl":"{url}"}}"#))
        .await;
    assert_eq!(raw.status, 200);
    assert!(
        raw.body.is_empty() || raw.json() == serde_json::json!({}),
        "{}",
        raw.body
    );
}

#[tokio::test]
async fn every_response_has_a_request_id() {
    let t = TestServer::start().await;
    let url = t.create_queue("ids").await;
    let responses = vec![
        t.json_post("ListQueues", "{}").await,
        t.json_post("GetQueueUrl", r#"{"QueueName":"nope"}"#).await,
        t.json_post("FooBar", "{}").await,
        t.json_post("ListQueues", "{oops").await,
        t.form_post("/", &[("Action", "ListQueues")]).await,
        t.form_post("/", &[("Action", "FooBar")]).await,
        t.form_post("/", &[("Action", "GetQueueUrl"), ("QueueName", "nope")])
            .await,
        t.get("/", &[]).await,
        t.get(&format!("/{ACCOUNT}/ids"), &[("Action", "ReceiveMessage")])
            .await,
        t.json_post(
            "SendMessage",
            &format!(r#"{{"QueueUrl":"{url}","MessageBody":"x"}}"#),
        )
        .await,
    ];
    let mut ids = std::collections::HashSet::new();
    for raw in &responses {
        let id = raw.request_id();
        assert!(ids.insert(id.clone()), "request id {id} reused");
        if raw.header("content-type") == Some("text/xml") && raw.status != 404 {
            assert!(
                raw.body.contains(&format!("<RequestId>{id}</RequestId>")),
                "{}",
                raw.body
            );
        }
    }
    assert_eq!(ids.len(), responses.len());
}

#[tokio::test]
async fn sdk_and_query_clients_share_the_same_queues() {
    let t = TestServer::start().await;
    let url = create(&t, "shared").await;
    let mut attrs = HashMap::new();
    attrs.insert(
        "n".to_string(),
        MessageAttributeValue::builder()
            .data_type("Number")
            .string_value("42")
            .build()
            .unwrap(),
    );
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("from json")
        .set_message_attributes(Some(attrs.clone()))
        .send()
        .await
        .unwrap();
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "ReceiveMessage"),
                ("QueueUrl", &url),
                ("MessageAttributeName.1", "n"),
            ],
        )
        .await;
    let inner = ok_xml(&raw, "ReceiveMessage");
    assert_eq!(xml_text(&inner, "Body"), "from json");
    assert_eq!(
        xml_all(&inner, "MessageAttribute"),
        vec![
            "<Name>n</Name><Value><StringValue>42</StringValue><DataType>Number</DataType></Value>"
        ]
    );
    assert_eq!(
        xml_text(&inner, "MD5OfMessageAttributes"),
        md5_of_attributes(&attrs)
    );
}

// ------------------------------------------- empty lists, as clients send them

/// Regression (found by the compat suites): botocore sends an empty list as
/// `Entries=` / `AttributeNames=`, the JavaScript v2 SDK as
/// `SendMessageBatchRequestEntry=` / `AttributeName=`. Both mean "empty".
#[tokio::test]
async fn empty_lists_in_both_spellings_are_empty() {
    let t = TestServer::start().await;
    let url = create(&t, "empty-lists").await;
    for (action, empty) in [
        ("SendMessageBatch", "Entries"),
        ("SendMessageBatch", "SendMessageBatchRequestEntry"),
        ("DeleteMessageBatch", "Entries"),
        ("DeleteMessageBatch", "DeleteMessageBatchRequestEntry"),
        ("ChangeMessageVisibilityBatch", "Entries"),
        (
            "ChangeMessageVisibilityBatch",
            "ChangeMessageVisibilityBatchRequestEntry",
        ),
    ] {
        let raw = t
            .form_post(
                "/",
                &[("Action", action), ("QueueUrl", &url), (empty, ""), V],
            )
            .await;
        assert_eq!(raw.status, 400, "{action} {empty}: {}", raw.body);
        assert_eq!(
            xml_text(&raw.body, "Code"),
            "AWS.SimpleQueueService.EmptyBatchRequest",
            "{action} {empty}"
        );
    }
    for empty in ["AttributeNames", "AttributeName"] {
        let raw = t
            .form_post(
                "/",
                &[
                    ("Action", "GetQueueAttributes"),
                    ("QueueUrl", &url),
                    (empty, ""),
                    V,
                ],
            )
            .await;
        assert_eq!(raw.status, 200, "{empty}: {}", raw.body);
        assert!(!raw.body.contains("<Attribute>"), "{}", raw.body);
    }
    t.send(&url, "still works").await;
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "ReceiveMessage"),
                ("QueueUrl", &url),
                ("AttributeNames", ""),
                ("MessageAttributeNames", ""),
                V,
            ],
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert_eq!(xml_text(&raw.body, "Body"), "still works");
}
