use std::collections::BTreeMap;

use axum::http::HeaderMap;
use retsu_core::sns::api::*;
use retsu_core::sns::error::SnsError;

use super::*;
use crate::protocol::query::{self, Params};
use crate::protocol::HttpRequest;

fn params(pairs: &[(&str, &str)]) -> Params {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn request(path: &str, authorization: Option<&str>) -> HttpRequest {
    let mut headers = HeaderMap::new();
    if let Some(auth) = authorization {
        headers.insert("authorization", auth.parse().unwrap());
    }
    HttpRequest {
        path: path.into(),
        headers,
        ..Default::default()
    }
}

fn signed(service: &str) -> String {
    format!(
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240101/us-east-1/{service}/aws4_request, \
         SignedHeaders=host;x-amz-date, Signature=abc"
    )
}

const TOPIC: &str = "arn:aws:sns:us-east-1:000000000000:t";
const QUEUE_URL: &str = "http://localhost:9324/000000000000/q";

// ---------------------------------------------------------------- route

#[test]
fn signed_scope_decides() {
    let sns = request("/", Some(&signed("sns")));
    let sqs = request("/", Some(&signed("sqs")));
    let publish = params(&[("Action", "Publish"), ("TopicArn", TOPIC)]);
    assert_eq!(route(&sns, &publish), Some(SnsAction::Publish));
    // Not an SQS action, but signed for SQS: SQS answers InvalidAction.
    assert_eq!(route(&sqs, &publish), None);
    let add = params(&[("Action", "AddPermission"), ("QueueUrl", QUEUE_URL)]);
    assert_eq!(route(&sns, &add), Some(SnsAction::AddPermission));
    let add = params(&[("Action", "AddPermission"), ("TopicArn", TOPIC)]);
    assert_eq!(route(&sqs, &add), None);
    // An action SNS lacks, signed for SNS: not SQS's to answer either.
    let send = params(&[("Action", "SendMessage")]);
    assert_eq!(route(&sns, &send), None);
    assert_eq!(signed_service(&sns, &send), Some("sns"));
    assert_eq!(
        invalid_action("SendMessage"),
        SnsError::new(
            "InvalidAction",
            400,
            "Could not find operation SendMessage for version 2010-03-31"
        )
    );
}

#[test]
fn presigned_scope_decides() {
    let unsigned = request("/", None);
    let p = params(&[
        ("Action", "Publish"),
        (
            "X-Amz-Credential",
            "AKID/20240101/eu-west-1/sqs/aws4_request",
        ),
    ]);
    assert_eq!(route(&unsigned, &p), None);
    let p = params(&[
        ("Action", "AddPermission"),
        (
            "X-Amz-Credential",
            "AKID/20240101/eu-west-1/sns/aws4_request",
        ),
    ]);
    assert_eq!(route(&unsigned, &p), Some(SnsAction::AddPermission));
    // A scope that does not parse counts as unsigned.
    let bad = request(
        "/",
        Some("AWS4-HMAC-SHA256 Credential=AKID/sns/aws4_request"),
    );
    assert_eq!(signed_service(&bad, &p), Some("sns"));
    assert_eq!(signed_service(&bad, &params(&[])), None);
}

#[test]
fn unsigned_by_action() {
    let unsigned = request("/", None);
    let create = params(&[("Action", "CreateTopic"), ("Name", "t")]);
    assert_eq!(route(&unsigned, &create), Some(SnsAction::CreateTopic));
    let send = params(&[("Action", "SendMessage"), ("QueueUrl", QUEUE_URL)]);
    assert_eq!(route(&unsigned, &send), None);
    assert_eq!(route(&unsigned, &params(&[("Action", "Nope")])), None);
    assert_eq!(route(&unsigned, &params(&[])), None);
}

#[test]
fn unsigned_shared_actions_by_resource() {
    let root = request("/", None);
    let sns = params(&[("Action", "AddPermission"), ("TopicArn", TOPIC)]);
    assert_eq!(route(&root, &sns), Some(SnsAction::AddPermission));
    let sqs = params(&[("Action", "AddPermission"), ("QueueUrl", QUEUE_URL)]);
    assert_eq!(route(&root, &sqs), None);
    let remove = params(&[("Action", "RemovePermission"), ("TopicArn", TOPIC)]);
    assert_eq!(route(&root, &remove), Some(SnsAction::RemovePermission));
    // Java v1 posts SQS's to the queue URL with no QueueUrl parameter.
    let on_queue = request("/000000000000/q", None);
    let bare = params(&[("Action", "RemovePermission"), ("Label", "l")]);
    assert_eq!(route(&on_queue, &bare), None);
    assert_eq!(route(&root, &bare), None);
}

#[test]
fn unsigned_subscription_urls() {
    // The SubscribeURL and UnsubscribeURL a subscriber GETs.
    let unsubscribe = HttpRequest {
        path: "/".into(),
        query: Some(
            "Action=Unsubscribe&SubscriptionArn=arn%3Aaws%3Asns%3Aus-east-1%3A000000000000%3At%3Aabc"
                .into(),
        ),
        ..Default::default()
    };
    let p = query::params(
        unsubscribe.query.as_deref(),
        &unsubscribe.headers,
        &unsubscribe.body,
    );
    assert_eq!(route(&unsubscribe, &p), Some(SnsAction::Unsubscribe));
    let SnsRequest::Unsubscribe(r) = decode(SnsAction::Unsubscribe, p.clone()).unwrap() else {
        panic!()
    };
    assert_eq!(
        r.subscription_arn.as_deref(),
        Some(&*format!("{TOPIC}:abc"))
    );

    let confirm = HttpRequest {
        path: "/".into(),
        query: Some(format!(
            "Action=ConfirmSubscription&TopicArn={}&Token={}",
            TOPIC.replace(':', "%3A"),
            "ab12"
        )),
        ..Default::default()
    };
    let p = query::params(confirm.query.as_deref(), &confirm.headers, &confirm.body);
    assert_eq!(route(&confirm, &p), Some(SnsAction::ConfirmSubscription));
    let SnsRequest::ConfirmSubscription(r) =
        decode(SnsAction::ConfirmSubscription, p.clone()).unwrap()
    else {
        panic!()
    };
    assert_eq!(r.topic_arn.as_deref(), Some(TOPIC));
    assert_eq!(r.token.as_deref(), Some("ab12"));
}

// ---------------------------------------------------------------- decode

fn decoded(action: SnsAction, pairs: &[(&str, &str)]) -> SnsRequest {
    let mut all = vec![("Action", action.name()), ("Version", "2010-03-31")];
    all.extend_from_slice(pairs);
    decode(action, params(&all)).unwrap()
}

fn attribute(data_type: &str, string: Option<&str>, binary: Option<&str>) -> MessageAttributeValue {
    MessageAttributeValue {
        data_type: Some(data_type.into()),
        string_value: string.map(str::to_string),
        binary_value: binary.map(str::to_string),
    }
}

fn tag(key: &str, value: &str) -> Tag {
    Tag {
        key: Some(key.into()),
        value: Some(value.into()),
    }
}

#[test]
fn create_topic_with_attributes_and_tags() {
    let SnsRequest::CreateTopic(r) = decoded(
        SnsAction::CreateTopic,
        &[
            ("Name", "t.fifo"),
            ("Attributes.entry.1.key", "FifoTopic"),
            ("Attributes.entry.1.value", "true"),
            ("Attributes.entry.2.key", "DisplayName"),
            ("Attributes.entry.2.value", "Shown & \"quoted\""),
            ("Tags.member.1.Key", "team"),
            ("Tags.member.1.Value", "core"),
            ("Tags.member.2.Key", "env"),
            ("Tags.member.2.Value", ""),
            ("DataProtectionPolicy", "{}"),
            ("Unknown.member.1", "ignored"),
        ],
    ) else {
        panic!()
    };
    assert_eq!(r.name.as_deref(), Some("t.fifo"));
    assert_eq!(
        r.attributes,
        BTreeMap::from([
            ("FifoTopic".to_string(), "true".to_string()),
            ("DisplayName".to_string(), "Shown & \"quoted\"".to_string()),
        ])
    );
    assert_eq!(r.tags, Some(vec![tag("team", "core"), tag("env", "")]));
    assert_eq!(r.data_protection_policy.as_deref(), Some("{}"));
}

#[test]
fn empty_collections() {
    // botocore sends `Tags=[]` as a bare `Tags=`.
    let SnsRequest::CreateTopic(r) =
        decoded(SnsAction::CreateTopic, &[("Name", "t"), ("Tags", "")])
    else {
        panic!()
    };
    assert_eq!(r.tags, Some(vec![]));
    assert!(r.attributes.is_empty());
    let SnsRequest::CreateTopic(r) = decoded(SnsAction::CreateTopic, &[("Name", "t")]) else {
        panic!()
    };
    assert_eq!(r.tags, None);
    let SnsRequest::UntagResource(r) = decoded(
        SnsAction::UntagResource,
        &[("ResourceArn", TOPIC), ("TagKeys", "")],
    ) else {
        panic!()
    };
    assert_eq!(r.tag_keys, Some(vec![]));
    let SnsRequest::PublishBatch(r) = decoded(
        SnsAction::PublishBatch,
        &[("TopicArn", TOPIC), ("PublishBatchRequestEntries", "")],
    ) else {
        panic!()
    };
    assert_eq!(r.publish_batch_request_entries.map(|e| e.len()), Some(0));
}

#[test]
fn subscribe_with_attributes_and_return_arn() {
    let SnsRequest::Subscribe(r) = decoded(
        SnsAction::Subscribe,
        &[
            ("TopicArn", TOPIC),
            ("Protocol", "sqs"),
            ("Endpoint", "arn:aws:sqs:us-east-1:000000000000:q"),
            ("Attributes.entry.1.key", "RawMessageDelivery"),
            ("Attributes.entry.1.value", "true"),
            ("Attributes.entry.2.key", "FilterPolicy"),
            ("Attributes.entry.2.value", r#"{"k":["v"]}"#),
            ("ReturnSubscriptionArn", "true"),
        ],
    ) else {
        panic!()
    };
    assert_eq!(r.topic_arn.as_deref(), Some(TOPIC));
    assert_eq!(r.protocol.as_deref(), Some("sqs"));
    assert_eq!(
        r.endpoint.as_deref(),
        Some("arn:aws:sqs:us-east-1:000000000000:q")
    );
    assert_eq!(r.attributes["RawMessageDelivery"], "true");
    assert_eq!(r.attributes["FilterPolicy"], r#"{"k":["v"]}"#);
    assert_eq!(r.return_subscription_arn.as_deref(), Some("true"));
}

#[test]
fn publish_with_message_attributes() {
    let SnsRequest::Publish(r) = decoded(
        SnsAction::Publish,
        &[
            ("TopicArn", TOPIC),
            ("Message", "hello"),
            ("Subject", "s"),
            ("MessageStructure", "json"),
            ("MessageGroupId", "g"),
            ("MessageDeduplicationId", "d"),
            ("MessageAttributes.entry.1.Name", "color"),
            ("MessageAttributes.entry.1.Value.DataType", "String"),
            ("MessageAttributes.entry.1.Value.StringValue", "red"),
            ("MessageAttributes.entry.2.Name", "bin"),
            ("MessageAttributes.entry.2.Value.DataType", "Binary"),
            // A `+` sent unencoded arrives as a space.
            ("MessageAttributes.entry.2.Value.BinaryValue", "AQI =="),
            ("MessageAttributes.entry.3.Name", "untyped"),
        ],
    ) else {
        panic!()
    };
    assert_eq!(r.topic_arn.as_deref(), Some(TOPIC));
    assert_eq!(r.message.as_deref(), Some("hello"));
    assert_eq!(r.subject.as_deref(), Some("s"));
    assert_eq!(r.message_structure.as_deref(), Some("json"));
    assert_eq!(r.message_group_id.as_deref(), Some("g"));
    assert_eq!(r.message_deduplication_id.as_deref(), Some("d"));
    assert_eq!(
        r.message_attributes,
        BTreeMap::from([
            ("color".to_string(), attribute("String", Some("red"), None)),
            ("bin".to_string(), attribute("Binary", None, Some("AQI+=="))),
            // No Value: left for the service's ValidationError.
            ("untyped".to_string(), MessageAttributeValue::default()),
        ])
    );
}

#[test]
fn publish_batch_entries_with_attributes() {
    let SnsRequest::PublishBatch(r) = decoded(
        SnsAction::PublishBatch,
        &[
            ("TopicArn", TOPIC),
            ("PublishBatchRequestEntries.member.1.Id", "a"),
            ("PublishBatchRequestEntries.member.1.Message", "first"),
            (
                "PublishBatchRequestEntries.member.1.MessageAttributes.entry.1.Name",
                "n1",
            ),
            (
                "PublishBatchRequestEntries.member.1.MessageAttributes.entry.1.Value.DataType",
                "String",
            ),
            (
                "PublishBatchRequestEntries.member.1.MessageAttributes.entry.1.Value.StringValue",
                "v1",
            ),
            (
                "PublishBatchRequestEntries.member.1.MessageAttributes.entry.2.Name",
                "n2",
            ),
            (
                "PublishBatchRequestEntries.member.1.MessageAttributes.entry.2.Value.DataType",
                "Number",
            ),
            (
                "PublishBatchRequestEntries.member.1.MessageAttributes.entry.2.Value.StringValue",
                "2",
            ),
            ("PublishBatchRequestEntries.member.2.Id", "b"),
            ("PublishBatchRequestEntries.member.2.Message", "second"),
            ("PublishBatchRequestEntries.member.2.Subject", "subj"),
            ("PublishBatchRequestEntries.member.2.MessageGroupId", "g"),
            (
                "PublishBatchRequestEntries.member.2.MessageDeduplicationId",
                "d",
            ),
            (
                "PublishBatchRequestEntries.member.2.MessageAttributes.entry.1.Name",
                "m1",
            ),
            (
                "PublishBatchRequestEntries.member.2.MessageAttributes.entry.1.Value.DataType",
                "Binary",
            ),
            (
                "PublishBatchRequestEntries.member.2.MessageAttributes.entry.1.Value.BinaryValue",
                "AQI=",
            ),
            (
                "PublishBatchRequestEntries.member.2.MessageAttributes.entry.2.Name",
                "m2",
            ),
            (
                "PublishBatchRequestEntries.member.2.MessageAttributes.entry.2.Value.DataType",
                "String.custom",
            ),
            (
                "PublishBatchRequestEntries.member.2.MessageAttributes.entry.2.Value.StringValue",
                "x",
            ),
        ],
    ) else {
        panic!()
    };
    assert_eq!(r.topic_arn.as_deref(), Some(TOPIC));
    let entries = r.publish_batch_request_entries.unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].id.as_deref(), Some("a"));
    assert_eq!(entries[0].message.as_deref(), Some("first"));
    assert_eq!(
        entries[0].message_attributes,
        BTreeMap::from([
            ("n1".to_string(), attribute("String", Some("v1"), None)),
            ("n2".to_string(), attribute("Number", Some("2"), None)),
        ])
    );
    assert_eq!(entries[1].id.as_deref(), Some("b"));
    assert_eq!(entries[1].message.as_deref(), Some("second"));
    assert_eq!(entries[1].subject.as_deref(), Some("subj"));
    assert_eq!(entries[1].message_group_id.as_deref(), Some("g"));
    assert_eq!(entries[1].message_deduplication_id.as_deref(), Some("d"));
    assert_eq!(
        entries[1].message_attributes,
        BTreeMap::from([
            ("m1".to_string(), attribute("Binary", None, Some("AQI="))),
            (
                "m2".to_string(),
                attribute("String.custom", Some("x"), None)
            ),
        ])
    );
}

#[test]
fn add_permission_lists_in_index_order() {
    let mut pairs = vec![("TopicArn", TOPIC), ("Label", "l")];
    let accounts: Vec<(String, String)> = (1..=11)
        .rev()
        .map(|n| (format!("AWSAccountId.member.{n}"), format!("{n:012}")))
        .collect();
    pairs.extend(accounts.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    pairs.extend([
        ("ActionName.member.2", "Subscribe"),
        ("ActionName.member.1", "Publish"),
    ]);
    let SnsRequest::AddPermission(r) = decoded(SnsAction::AddPermission, &pairs) else {
        panic!()
    };
    let expected: Vec<String> = (1..=11).map(|n| format!("{n:012}")).collect();
    assert_eq!(r.aws_account_id, Some(expected));
    assert_eq!(
        r.action_name,
        Some(vec!["Publish".to_string(), "Subscribe".to_string()])
    );
    assert_eq!(r.topic_arn.as_deref(), Some(TOPIC));
    assert_eq!(r.label.as_deref(), Some("l"));
}

#[test]
fn tag_and_untag_resource() {
    let SnsRequest::TagResource(r) = decoded(
        SnsAction::TagResource,
        &[
            ("ResourceArn", TOPIC),
            ("Tags.member.1.Key", "a"),
            ("Tags.member.1.Value", "1"),
        ],
    ) else {
        panic!()
    };
    assert_eq!(r.resource_arn.as_deref(), Some(TOPIC));
    assert_eq!(r.tags, Some(vec![tag("a", "1")]));
    let SnsRequest::UntagResource(r) = decoded(
        SnsAction::UntagResource,
        &[
            ("ResourceArn", TOPIC),
            ("TagKeys.member.2", "b"),
            ("TagKeys.member.1", "a"),
        ],
    ) else {
        panic!()
    };
    assert_eq!(r.tag_keys, Some(vec!["a".to_string(), "b".to_string()]));
}

#[test]
fn scalars_of_the_attribute_and_listing_actions() {
    let SnsRequest::SetTopicAttributes(r) = decoded(
        SnsAction::SetTopicAttributes,
        &[
            ("TopicArn", TOPIC),
            ("AttributeName", "Policy"),
            ("AttributeValue", "{\"a\":1}"),
        ],
    ) else {
        panic!()
    };
    assert_eq!(r.attribute_name.as_deref(), Some("Policy"));
    assert_eq!(r.attribute_value.as_deref(), Some("{\"a\":1}"));
    let SnsRequest::ListSubscriptionsByTopic(r) = decoded(
        SnsAction::ListSubscriptionsByTopic,
        &[("TopicArn", TOPIC), ("NextToken", "tok")],
    ) else {
        panic!()
    };
    assert_eq!(r.next_token.as_deref(), Some("tok"));
    // Required members left out stay None, for the service's own error.
    let SnsRequest::DeleteTopic(r) = decoded(SnsAction::DeleteTopic, &[]) else {
        panic!()
    };
    assert_eq!(r.topic_arn, None);
}

#[test]
fn leniency_and_bad_indices() {
    // No wrapper segment, capitalised map keys, a bare one-member list.
    let SnsRequest::CreateTopic(r) = decoded(
        SnsAction::CreateTopic,
        &[
            ("Name", "t"),
            ("Attributes.1.Key", "DisplayName"),
            ("Attributes.1.Value", "d"),
            ("Tags.1.Key", "k"),
            ("Tags.1.Value", "v"),
            ("Tags.member.x", "ignored"),
        ],
    ) else {
        panic!()
    };
    assert_eq!(r.attributes["DisplayName"], "d");
    assert_eq!(r.tags, Some(vec![tag("k", "v")]));
    let SnsRequest::UntagResource(r) = decoded(SnsAction::UntagResource, &[("TagKeys", "k")])
    else {
        panic!()
    };
    assert_eq!(r.tag_keys, Some(vec!["k".to_string()]));
    let err = decode(
        SnsAction::UntagResource,
        params(&[("TagKeys.member.0", "k")]),
    )
    .unwrap_err();
    assert_eq!(
        err,
        SnsError::invalid_parameter_text("Invalid parameter: TagKeys.member.0")
    );
    let err = decode(
        SnsAction::CreateTopic,
        params(&[("Attributes.entry.1.value", "v")]),
    )
    .unwrap_err();
    assert_eq!(err, SnsError::missing("Attributes.entry.1.key"));
    // Names deeper than any shape are ignored, not recursed into.
    let deep = format!("Name{}", ".x".repeat(10_000));
    let SnsRequest::CreateTopic(r) =
        decode(SnsAction::CreateTopic, params(&[(deep.as_str(), "v")])).unwrap()
    else {
        panic!()
    };
    assert_eq!(r.name, None);
}

// ---------------------------------------------------------------- encode

fn wrap(op: &str, result: &str) -> String {
    format!(
        r#"<{op}Response xmlns="http://sns.amazonaws.com/doc/2010-03-31/">{result}<ResponseMetadata><RequestId>req-1</RequestId></ResponseMetadata></{op}Response>"#
    )
}

#[test]
fn encode_topic_arn_and_policy() {
    let r = SnsResponse::CreateTopic(TopicArnResult {
        topic_arn: TOPIC.into(),
    });
    assert_eq!(
        encode_response(&r, "req-1"),
        wrap(
            "CreateTopic",
            &format!("<CreateTopicResult><TopicArn>{TOPIC}</TopicArn></CreateTopicResult>")
        )
    );
    let r = SnsResponse::Subscribe(SubscriptionArnResult {
        subscription_arn: "pending confirmation".into(),
    });
    assert_eq!(
        encode_response(&r, "req-1"),
        wrap(
            "Subscribe",
            "<SubscribeResult><SubscriptionArn>pending confirmation</SubscriptionArn></SubscribeResult>"
        )
    );
    let r = SnsResponse::GetDataProtectionPolicy(DataProtectionPolicyResult {
        data_protection_policy: r#"{"Name":"a<b"}"#.into(),
    });
    assert_eq!(
        encode_response(&r, "req-1"),
        wrap(
            "GetDataProtectionPolicy",
            "<GetDataProtectionPolicyResult><DataProtectionPolicy>{&quot;Name&quot;:&quot;a&lt;b&quot;}</DataProtectionPolicy></GetDataProtectionPolicyResult>"
        )
    );
}

#[test]
fn encode_topics_list() {
    let r = SnsResponse::ListTopics(ListTopicsResult {
        topics: vec![
            TopicEntry {
                topic_arn: "arn:a".into(),
            },
            TopicEntry {
                topic_arn: "arn:b".into(),
            },
        ],
        next_token: Some("tok&en".into()),
    });
    assert_eq!(
        encode_response(&r, "req-1"),
        wrap(
            "ListTopics",
            concat!(
                "<ListTopicsResult><Topics>",
                "<member><TopicArn>arn:a</TopicArn></member>",
                "<member><TopicArn>arn:b</TopicArn></member>",
                "</Topics><NextToken>tok&amp;en</NextToken></ListTopicsResult>"
            )
        )
    );
    let none = SnsResponse::ListTopics(ListTopicsResult::default());
    assert_eq!(
        encode_response(&none, "req-1"),
        wrap(
            "ListTopics",
            "<ListTopicsResult><Topics/></ListTopicsResult>"
        )
    );
}

#[test]
fn encode_attributes_map_escaped() {
    let r = SnsResponse::GetTopicAttributes(AttributesResult {
        attributes: BTreeMap::from([
            ("DisplayName".to_string(), "a & <b>".to_string()),
            (
                "Policy".to_string(),
                r#"{"Version":"2008-10-17"}"#.to_string(),
            ),
        ]),
    });
    assert_eq!(
        encode_response(&r, "req-1"),
        wrap(
            "GetTopicAttributes",
            concat!(
                "<GetTopicAttributesResult><Attributes>",
                "<entry><key>DisplayName</key><value>a &amp; &lt;b&gt;</value></entry>",
                "<entry><key>Policy</key><value>{&quot;Version&quot;:&quot;2008-10-17&quot;}</value></entry>",
                "</Attributes></GetTopicAttributesResult>"
            )
        )
    );
}

#[test]
fn encode_subscriptions_list() {
    let r = SnsResponse::ListSubscriptionsByTopic(ListSubscriptionsResult {
        subscriptions: vec![SubscriptionEntry {
            subscription_arn: "PendingConfirmation".into(),
            owner: "000000000000".into(),
            protocol: "https".into(),
            endpoint: "https://h/p?a=1&b=2".into(),
            topic_arn: TOPIC.into(),
        }],
        next_token: None,
    });
    assert_eq!(
        encode_response(&r, "req-1"),
        wrap(
            "ListSubscriptionsByTopic",
            &format!(
                concat!(
                    "<ListSubscriptionsByTopicResult><Subscriptions><member>",
                    "<SubscriptionArn>PendingConfirmation</SubscriptionArn>",
                    "<Owner>000000000000</Owner><Protocol>https</Protocol>",
                    "<Endpoint>https://h/p?a=1&amp;b=2</Endpoint><TopicArn>{}</TopicArn>",
                    "</member></Subscriptions></ListSubscriptionsByTopicResult>"
                ),
                TOPIC
            )
        )
    );
}

#[test]
fn encode_publish() {
    let standard = SnsResponse::Publish(PublishResult {
        message_id: "m-1".into(),
        sequence_number: None,
    });
    assert_eq!(
        encode_response(&standard, "req-1"),
        wrap(
            "Publish",
            "<PublishResult><MessageId>m-1</MessageId></PublishResult>"
        )
    );
    let fifo = SnsResponse::Publish(PublishResult {
        message_id: "m-2".into(),
        sequence_number: Some("10000000000000000001".into()),
    });
    assert_eq!(
        encode_response(&fifo, "req-1"),
        wrap(
            "Publish",
            "<PublishResult><MessageId>m-2</MessageId><SequenceNumber>10000000000000000001</SequenceNumber></PublishResult>"
        )
    );
}

#[test]
fn encode_publish_batch() {
    let r = SnsResponse::PublishBatch(PublishBatchResult {
        successful: vec![PublishBatchResultEntry {
            id: "a".into(),
            message_id: "m-1".into(),
            sequence_number: None,
        }],
        failed: vec![],
    });
    assert_eq!(
        encode_response(&r, "req-1"),
        wrap(
            "PublishBatch",
            concat!(
                "<PublishBatchResult><Successful><member><Id>a</Id><MessageId>m-1</MessageId></member>",
                "</Successful><Failed/></PublishBatchResult>"
            )
        )
    );
    let failed = SnsResponse::PublishBatch(PublishBatchResult {
        successful: vec![],
        failed: vec![BatchResultErrorEntry {
            id: "b".into(),
            code: "InternalError".into(),
            message: "x".into(),
            sender_fault: false,
        }],
    });
    assert_eq!(
        encode_response(&failed, "req-1"),
        wrap(
            "PublishBatch",
            concat!(
                "<PublishBatchResult><Successful/><Failed><member><Id>b</Id><Code>InternalError</Code>",
                "<Message>x</Message><SenderFault>false</SenderFault></member></Failed></PublishBatchResult>"
            )
        )
    );
}

#[test]
fn encode_tags() {
    let r = SnsResponse::ListTagsForResource(ListTagsResult {
        tags: vec![tag("k", "v\"1\"")],
    });
    assert_eq!(
        encode_response(&r, "req-1"),
        wrap(
            "ListTagsForResource",
            "<ListTagsForResourceResult><Tags><member><Key>k</Key><Value>v&quot;1&quot;</Value></member></Tags></ListTagsForResourceResult>"
        )
    );
    let none = SnsResponse::ListTagsForResource(ListTagsResult::default());
    assert_eq!(
        encode_response(&none, "req-1"),
        wrap(
            "ListTagsForResource",
            "<ListTagsForResourceResult><Tags/></ListTagsForResourceResult>"
        )
    );
}

#[test]
fn encode_empty_result() {
    let r = SnsResponse::Unsubscribe(Empty {});
    assert_eq!(encode_response(&r, "req-1"), wrap("Unsubscribe", ""));
    // Tag and untag answer an empty Result element, as AWS's sample shows
    // (`<UntagResourceResponse><UntagResourceResult/>…`).
    let tagged = SnsResponse::UntagResource(Empty {});
    assert_eq!(
        encode_response(&tagged, "req-1"),
        wrap("UntagResource", "<UntagResourceResult/>")
    );
    // Every other action without output has no Result element at all.
    let empties = [
        SnsAction::AddPermission,
        SnsAction::DeleteEndpoint,
        SnsAction::DeletePlatformApplication,
        SnsAction::DeleteTopic,
        SnsAction::PutDataProtectionPolicy,
        SnsAction::RemovePermission,
        SnsAction::SetEndpointAttributes,
        SnsAction::SetPlatformApplicationAttributes,
        SnsAction::SetSubscriptionAttributes,
        SnsAction::SetTopicAttributes,
        SnsAction::Unsubscribe,
    ];
    for action in SnsAction::ALL {
        assert_eq!(
            super::xml::has_result(*action),
            !empties.contains(action),
            "{action:?}"
        );
    }
}

#[test]
fn encode_errors() {
    let err = SnsError::topic_not_found();
    assert_eq!(
        encode_error(&err, "req-1"),
        concat!(
            r#"<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">"#,
            "<Error><Type>Sender</Type><Code>NotFound</Code><Message>Topic does not exist</Message></Error>",
            "<RequestId>req-1</RequestId></ErrorResponse>"
        )
    );
    let err = SnsError::internal("boom <&> \"x\"");
    assert!(encode_error(&err, "r").contains(
        "<Type>Receiver</Type><Code>InternalError</Code><Message>boom &lt;&amp;&gt; &quot;x&quot;</Message>"
    ));
    let http = encode(&Err(SnsError::topic_not_found()), "req-1");
    assert_eq!(http.status, 404);
    assert_eq!(http.content_type, "text/xml");
    assert_eq!(http.headers[0].1, "req-1");
    let ok = encode(&Ok(SnsResponse::DeleteTopic(Empty {})), "req-1");
    assert_eq!(ok.status, 200);
    assert_eq!(ok.body, wrap("DeleteTopic", ""));
}
