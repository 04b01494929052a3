//! Query-protocol details, validation texts and dead-letter rules, each as
//! real AWS recordings show them.

mod common;

use aws_sdk_sqs::types::QueueAttributeName;
use common::*;

const V: (&str, &str) = ("Version", "2012-11-05");

/// A query request to `path` with `Accept: application/json`.
async fn query_json(t: &TestServer, path: &str, params: &[(&str, &str)]) -> Raw {
    t.raw(
        t.http
            .post(format!("{}{path}", t.endpoint))
            .header("accept", "application/json")
            .form(params),
    )
    .await
}

// ---------------------------------------------------- query protocol details

#[tokio::test]
async fn get_queue_url_is_valid_at_a_queue_path() {
    let t = TestServer::start().await;
    let a = t.create_queue("path-a").await;
    let b = t.create_queue("path-b").await;
    let path = format!("/{ACCOUNT}/path-a");
    // POST to queue a's path, naming queue b: b's URL.
    let raw = t
        .form_post(
            &path,
            &[("Action", "GetQueueUrl"), V, ("QueueName", "path-b")],
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert_eq!(xml_text(&raw.compact_xml(), "QueueUrl"), b);
    // GET likewise, naming the path's own queue.
    let raw = t
        .get(
            &path,
            &[("Action", "GetQueueUrl"), V, ("QueueName", "path-a")],
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert_eq!(xml_text(&raw.compact_xml(), "QueueUrl"), a);
    // ListQueues and CreateQueue stay invalid there.
    for (action, extra) in [
        ("ListQueues", ("QueueNamePrefix", "p")),
        ("CreateQueue", ("QueueName", "x")),
    ] {
        let raw = t.form_post(&path, &[("Action", action), V, extra]).await;
        assert_eq!(raw.status, 400, "{}", raw.body);
        let xml = raw.compact_xml();
        assert_eq!(xml_text(&xml, "Code"), "InvalidAction");
        assert_eq!(
            xml_text(&xml, "Message"),
            format!("The action {action} is not valid for this endpoint.")
        );
    }
}

#[tokio::test]
async fn accept_json_renders_query_responses_as_json() {
    let t = TestServer::start().await;
    let url = t.create_queue("as-json").await;
    let raw = query_json(&t, "/", &[("Action", "ListQueues"), V]).await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert!(
        raw.header("content-type")
            .unwrap()
            .starts_with("application/json"),
        "{raw:?}"
    );
    let request_id = raw.request_id();
    assert_eq!(
        raw.json(),
        serde_json::json!({"ListQueuesResponse": {
            "ListQueuesResult": {"queueUrls": [url.clone()]},
            "ResponseMetadata": {"RequestId": request_id}
        }})
    );

    // A send and a receive with attributes: the XML's nesting, lists as
    // arrays, maps as objects.
    let raw = query_json(
        &t,
        "/",
        &[
            ("Action", "SendMessage"),
            V,
            ("QueueUrl", &url),
            ("MessageBody", "hello <json>"),
            ("MessageAttribute.1.Name", "colour"),
            ("MessageAttribute.1.Value.DataType", "String"),
            ("MessageAttribute.1.Value.StringValue", "blue"),
        ],
    )
    .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    let sent = &raw.json()["SendMessageResponse"]["SendMessageResult"];
    assert_eq!(sent["MD5OfMessageBody"], md5_hex(b"hello <json>"));
    let message_id = sent["MessageId"].as_str().unwrap().to_string();
    let raw = query_json(
        &t,
        "/",
        &[
            ("Action", "ReceiveMessage"),
            V,
            ("QueueUrl", &url),
            ("AttributeName.1", "SenderId"),
            ("MessageAttributeName.1", "All"),
        ],
    )
    .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    let v = raw.json();
    let messages = &v["ReceiveMessageResponse"]["ReceiveMessageResult"]["messages"];
    assert_eq!(messages.as_array().map(Vec::len), Some(1), "{v}");
    let m = &messages[0];
    assert_eq!(m["MessageId"], message_id.as_str());
    assert_eq!(m["Body"], "hello <json>");
    assert_eq!(m["Attributes"]["SenderId"], ACCOUNT);
    assert_eq!(m["MessageAttributes"]["colour"]["StringValue"], "blue");
    assert_eq!(m["MessageAttributes"]["colour"]["DataType"], "String");
    assert!(m["ReceiptHandle"].as_str().is_some_and(|h| !h.is_empty()));
    assert_eq!(
        v["ReceiveMessageResponse"]["ResponseMetadata"]["RequestId"],
        raw.request_id()
    );

    // An action without output: only the metadata.
    let raw = query_json(&t, "/", &[("Action", "PurgeQueue"), V, ("QueueUrl", &url)]).await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert_eq!(
        raw.json(),
        serde_json::json!({"PurgeQueueResponse": {
            "ResponseMetadata": {"RequestId": raw.request_id()}
        }})
    );
    // Without the header: XML as before.
    let raw = t.form_post("/", &[("Action", "ListQueues"), V]).await;
    assert!(raw.body.starts_with("<ListQueuesResponse"), "{}", raw.body);
}

#[tokio::test]
async fn accept_json_renders_query_errors_as_json() {
    let t = TestServer::start().await;
    let raw = query_json(
        &t,
        "/",
        &[("Action", "GetQueueUrl"), V, ("QueueName", "nowhere")],
    )
    .await;
    assert_eq!(raw.status, 400, "{}", raw.body);
    assert!(raw
        .header("content-type")
        .unwrap()
        .starts_with("application/json"));
    assert_eq!(
        raw.json(),
        serde_json::json!({
            "Error": {
                "Type": "Sender",
                "Code": "AWS.SimpleQueueService.NonExistentQueue",
                "Message": "The specified queue does not exist for this wsdl version."
            },
            "RequestId": raw.request_id()
        })
    );
    // A decode-time error (unknown action) too.
    let raw = query_json(&t, "/", &[("Action", "FooBar"), V]).await;
    assert_eq!(raw.status, 400);
    assert_eq!(raw.json()["Error"]["Code"], "InvalidAction");
    assert_eq!(
        raw.json()["Error"]["Message"],
        "The action FooBar is not valid for this endpoint."
    );
}

// ---------------------------------------------------- validation texts/rules

#[tokio::test]
async fn attribute_names_may_hold_non_ascii_letters() {
    let t = TestServer::start().await;
    let url = t.create_queue("attr-names").await;
    let latin: String = ('\u{C0}'..='\u{17F}')
        .filter(|c| c.is_alphabetic())
        .take(200)
        .collect();
    for name in ["attr.1øßä", "Ärger", latin.as_str()] {
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("x")
            .message_attributes(name, string_attr("v"))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }
    let got = t.receive(&url, 10).await;
    assert_eq!(got.len(), 3);
    assert!(got
        .iter()
        .any(|m| m.message_attributes().unwrap().contains_key("attr.1øßä")));
    for bad in [
        "a§b", "a!b", "a\"b", "a(b", "a?b", "a/b", "AWS.x", "amazon.y", ".a", "a.",
    ] {
        let err = service_error(
            t.client
                .send_message()
                .queue_url(&url)
                .message_body("x")
                .message_attributes(bad, string_attr("v"))
                .send()
                .await,
        );
        assert_service_error(
            &err,
            "InvalidParameterValue",
            &format!("Message (user) attribute name '{bad}' is invalid. Names may only contain alphanumeric characters, hyphens, underscores and periods, must not start or end with a period, must not contain consecutive periods and must not start with AWS. or Amazon."),
        );
    }
    // Over the query protocol as well.
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "SendMessage"),
                V,
                ("QueueUrl", &url),
                ("MessageBody", "q"),
                ("MessageAttribute.1.Name", "attr.1øßä"),
                ("MessageAttribute.1.Value.DataType", "String"),
                ("MessageAttribute.1.Value.StringValue", "v"),
            ],
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
}

#[tokio::test]
async fn deduplication_id_on_a_standard_queue_uses_aws_wording() {
    let t = TestServer::start().await;
    let url = t.create_queue("std-dedup").await;
    let err = service_error(
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("x")
            .message_deduplication_id("d1")
            .send()
            .await,
    );
    assert_service_error(
        &err,
        "InvalidParameterValue",
        "Value d1 for parameter MessageDeduplicationId is invalid. Reason: The request include parameter that is not valid for this queue type.",
    );
}

#[tokio::test]
async fn add_permission_refuses_ungrantable_actions_and_principals() {
    let t = TestServer::start().await;
    let url = t.create_queue("perm-texts").await;
    for action in [
        "SendMessageBatch",
        "DeleteMessageBatch",
        "ChangeMessageVisibilityBatch",
        "Frobnicate",
    ] {
        let err = service_error(
            t.client
                .add_permission()
                .queue_url(&url)
                .label("l1")
                .aws_account_ids("123456789012")
                .actions(action)
                .send()
                .await,
        );
        assert_service_error(
            &err,
            "InvalidParameterValue",
            &format!("Value SQS:{action} for parameter ActionName is invalid. Reason: Please refer to the appropriate WSDL for a list of valid actions."),
        );
    }
    let err = service_error(
        t.client
            .add_permission()
            .queue_url(&url)
            .label("l2")
            .aws_account_ids("*")
            .actions("SendMessage")
            .send()
            .await,
    );
    assert_service_error(
        &err,
        "InvalidParameterValue",
        "Value [*] for parameter PrincipalId is invalid. Reason: Unable to verify.",
    );
    assert_eq!(t.attribute(&url, "Policy").await, None);
}

/// Owner-only actions are named as AWS names them: the `SQS:` prefix and
/// the parameter `ActionName`, as for the non-grantable ones.
#[tokio::test]
async fn add_permission_refuses_owner_only_actions_in_aws_words() {
    let t = TestServer::start().await;
    let url = t.create_queue("perm-owner").await;
    for action in [
        "RemovePermission",
        "AddPermission",
        "SetQueueAttributes",
        "DeleteQueue",
    ] {
        let err = service_error(
            t.client
                .add_permission()
                .queue_url(&url)
                .label("l1")
                .aws_account_ids("123456789012")
                .actions("SendMessage")
                .actions(action)
                .send()
                .await,
        );
        assert_service_error(
            &err,
            "InvalidParameterValue",
            &format!("Value SQS:{action} for parameter ActionName is invalid. Reason: Only the queue owner is allowed to invoke this action."),
        );
    }
    assert_eq!(t.attribute(&url, "Policy").await, None);
}

#[tokio::test]
async fn a_dead_letter_queue_in_another_region_or_account_is_refused() {
    let t = TestServer::start().await;
    let eu = t.new_client("eu-west-1");
    let eu_dlq = eu
        .create_queue()
        .queue_name("far-dlq")
        .send()
        .await
        .unwrap()
        .queue_url()
        .unwrap()
        .to_string();
    let eu_arn = eu
        .get_queue_attributes()
        .queue_url(&eu_dlq)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .unwrap()
        .attributes()
        .unwrap()[&QueueAttributeName::QueueArn]
        .clone();
    let policy = |arn: &str| format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":1}}"#);

    // CreateQueue in us-east-1 with a DLQ in eu-west-1.
    let cross_region = policy(&eu_arn);
    let err = t
        .create_queue_error("near", &[("RedrivePolicy", &cross_region)])
        .await;
    assert_service_error(
        &err,
        "InvalidParameterValue",
        &format!("Value {cross_region} for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist."),
    );
    // SetQueueAttributes likewise; nothing is stored.
    let near = t.create_queue("near").await;
    let err = t
        .set_attributes_error(&near, &[("RedrivePolicy", &cross_region)])
        .await;
    assert_service_error(
        &err,
        "InvalidParameterValue",
        &format!("Value {cross_region} for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist."),
    );
    assert_eq!(t.attribute(&near, "RedrivePolicy").await, None);

    // Another account.
    let other_account = policy("arn:aws:sqs:us-east-1:123456789012:their-dlq");
    let err = t
        .set_attributes_error(&near, &[("RedrivePolicy", &other_account)])
        .await;
    assert_service_error(
        &err,
        "InvalidParameterValue",
        &format!("Value {other_account} for parameter RedrivePolicy is invalid. Reason: Dead-letter target owner should be same as the source."),
    );

    // So no message ever moves across regions: received past the limit it
    // is delivered again, the eu-west-1 queue stays empty.
    t.send(&near, "stays").await;
    for _ in 0..3 {
        let m = t.receive_one(&near).await;
        t.change_visibility(&near, m.receipt_handle().unwrap(), 0)
            .await
            .unwrap();
    }
    assert_eq!(t.counts(&eu_dlq).await, (0, 0, 0));
}
