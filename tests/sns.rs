//! SNS through the official `aws-sdk-sns` client, delivering into queues
//! read with `aws-sdk-sqs`: topics, SQS subscriptions, the notification
//! envelope and its signature, raw delivery, filter policies, FIFO topics,
//! subscription dead-letter queues, and SNS's error shape.

mod common;

use std::collections::HashMap;

use aws_sdk_sns::types::MessageAttributeValue;
use common::*;

async fn topic(sns: &aws_sdk_sns::Client, name: &str, attributes: &[(&str, &str)]) -> String {
    let mut req = sns.create_topic().name(name);
    for (k, v) in attributes {
        req = req.attributes(*k, *v);
    }
    req.send().await.unwrap().topic_arn.unwrap()
}

async fn subscribe(
    sns: &aws_sdk_sns::Client,
    topic_arn: &str,
    queue: &str,
    attributes: &[(&str, &str)],
) -> String {
    let mut req = sns
        .subscribe()
        .topic_arn(topic_arn)
        .protocol("sqs")
        .endpoint(queue_arn(queue));
    for (k, v) in attributes {
        req = req.attributes(*k, *v);
    }
    req.send().await.unwrap().subscription_arn.unwrap()
}

fn string_attribute(value: &str) -> MessageAttributeValue {
    MessageAttributeValue::builder()
        .data_type("String")
        .string_value(value)
        .build()
        .unwrap()
}

#[tokio::test]
async fn topics_are_created_idempotently_listed_described_and_deleted() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let arn = topic(&sns, "orders", &[]).await;
    assert_eq!(arn, format!("arn:aws:sns:{REGION}:{ACCOUNT}:orders"));
    assert_eq!(topic(&sns, "orders", &[]).await, arn, "same name, same ARN");
    sns.set_topic_attributes()
        .topic_arn(&arn)
        .attribute_name("DisplayName")
        .attribute_value("Orders")
        .send()
        .await
        .unwrap();
    let attrs = sns
        .get_topic_attributes()
        .topic_arn(&arn)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap();
    assert_eq!(attrs["DisplayName"], "Orders");
    assert_eq!(attrs["Owner"], ACCOUNT);
    assert_eq!(attrs["SubscriptionsConfirmed"], "0");
    assert!(attrs["Policy"].contains("__default_policy_ID"));
    let err = sns
        .create_topic()
        .name("orders")
        .attributes("DisplayName", "Other")
        .send()
        .await
        .unwrap_err();
    assert!(
        format!("{:?}", err).contains("Topic already exists with different attributes"),
        "{err:?}"
    );
    let listed = sns.list_topics().send().await.unwrap().topics.unwrap();
    assert_eq!(listed.len(), 1);
    sns.delete_topic().topic_arn(&arn).send().await.unwrap();
    sns.delete_topic().topic_arn(&arn).send().await.unwrap();
    let err = sns
        .get_topic_attributes()
        .topic_arn(&arn)
        .send()
        .await
        .unwrap_err();
    let service = err.into_service_error();
    assert!(service.is_not_found_exception(), "{service:?}");
    let err = sns
        .create_topic()
        .name("bad name")
        .send()
        .await
        .unwrap_err();
    assert!(format!("{:?}", err.into_service_error()).contains("Invalid parameter: Topic Name"));
}

#[tokio::test]
async fn a_publish_arrives_in_the_queue_as_a_signed_envelope() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let url = t.create_queue("inbox").await;
    let arn = topic(&sns, "events", &[]).await;
    let sub = subscribe(&sns, &arn, "inbox", &[]).await;
    assert!(sub.starts_with(&format!("{arn}:")), "{sub}");
    let published = sns
        .publish()
        .topic_arn(&arn)
        .subject("Greeting")
        .message("hello \"world\"\nline two")
        .message_attributes("colour", string_attribute("blue"))
        .send()
        .await
        .unwrap();
    let message_id = published.message_id.unwrap();
    let m = t.receive_one(&url).await;
    let body = m.body.unwrap();
    let envelope: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(envelope["Type"], "Notification");
    assert_eq!(envelope["MessageId"], message_id.as_str());
    assert_eq!(envelope["TopicArn"], arn.as_str());
    assert_eq!(envelope["Subject"], "Greeting");
    assert_eq!(envelope["Message"], "hello \"world\"\nline two");
    assert_eq!(envelope["SignatureVersion"], "1");
    assert_eq!(envelope["MessageAttributes"]["colour"]["Type"], "String");
    assert_eq!(envelope["MessageAttributes"]["colour"]["Value"], "blue");
    let timestamp = envelope["Timestamp"].as_str().unwrap();
    assert_eq!(timestamp.len(), 24, "{timestamp}");
    assert!(timestamp.ends_with('Z'));
    // AWS's member order and Jackson's layout.
    let order: Vec<usize> = [
        "\"Type\" : ",
        "\"MessageId\" : ",
        "\"TopicArn\" : ",
        "\"Subject\" : ",
        "\"Message\" : ",
        "\"Timestamp\" : ",
        "\"SignatureVersion\" : ",
        "\"Signature\" : ",
        "\"SigningCertURL\" : ",
        "\"UnsubscribeURL\" : ",
        "\"MessageAttributes\" : ",
    ]
    .iter()
    .map(|k| {
        body.find(k)
            .unwrap_or_else(|| panic!("{k} missing in {body}"))
    })
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{body}");
    assert!(
        body.starts_with("{\n  \"Type\" : \"Notification\",\n"),
        "{body}"
    );
    assert!(body.ends_with("\n}"), "{body}");

    // The signature verifies against the certificate Retsu serves.
    let cert_url = envelope["SigningCertURL"].as_str().unwrap();
    let pem = reqwest::get(cert_url).await.unwrap();
    assert_eq!(pem.status(), 200);
    let pem = pem.text().await.unwrap();
    let canonical = format!(
        "Message\n{}\nMessageId\n{}\nSubject\n{}\nTimestamp\n{}\nTopicArn\n{}\nType\nNotification\n",
        envelope["Message"].as_str().unwrap(),
        message_id,
        "Greeting",
        timestamp,
        arn
    );
    verify(
        &pem,
        &canonical,
        envelope["Signature"].as_str().unwrap(),
        false,
    );
    assert!(
        std::panic::catch_unwind(|| verify(
            &pem,
            "tampered",
            envelope["Signature"].as_str().unwrap(),
            false
        ))
        .is_err(),
        "a changed message must not verify"
    );
    // A non-raw delivery carries no SQS message attributes.
    assert!(m.message_attributes.unwrap_or_default().is_empty());

    // The UnsubscribeURL works, unsigned, as on AWS.
    let unsubscribe = envelope["UnsubscribeURL"].as_str().unwrap();
    let r = reqwest::get(unsubscribe).await.unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    sns.publish()
        .topic_arn(&arn)
        .message("after")
        .send()
        .await
        .unwrap();
    assert!(t.receive(&url, 10).await.is_empty(), "unsubscribed");
}

/// Verifies an SNS signature with ring and the certificate's public key,
/// code that did not make it.
fn verify(pem: &str, canonical: &str, signature_b64: &str, sha256: bool) {
    use base64::Engine as _;
    let (_, der) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).unwrap();
    let cert = der.parse_x509().unwrap();
    let key = cert.public_key().subject_public_key.data.to_vec();
    let signature = base64::engine::general_purpose::STANDARD
        .decode(signature_b64)
        .unwrap();
    let algorithm: &dyn ring::signature::VerificationAlgorithm = if sha256 {
        &ring::signature::RSA_PKCS1_2048_8192_SHA256
    } else {
        &ring::signature::RSA_PKCS1_1024_8192_SHA1_FOR_LEGACY_USE_ONLY
    };
    ring::signature::UnparsedPublicKey::new(algorithm, key)
        .verify(canonical.as_bytes(), &signature)
        .expect("the signature verifies");
}

#[tokio::test]
async fn signature_version_2_signs_with_sha256() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let url = t.create_queue("v2").await;
    let arn = topic(&sns, "signed", &[("SignatureVersion", "2")]).await;
    subscribe(&sns, &arn, "v2", &[]).await;
    let id = sns
        .publish()
        .topic_arn(&arn)
        .message("m")
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();
    let envelope: serde_json::Value =
        serde_json::from_str(&t.receive_one(&url).await.body.unwrap()).unwrap();
    assert_eq!(envelope["SignatureVersion"], "2");
    assert!(
        envelope.get("Subject").is_none(),
        "no Subject member without one"
    );
    let pem = reqwest::get(envelope["SigningCertURL"].as_str().unwrap())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let canonical = format!(
        "Message\nm\nMessageId\n{id}\nTimestamp\n{}\nTopicArn\n{arn}\nType\nNotification\n",
        envelope["Timestamp"].as_str().unwrap()
    );
    verify(
        &pem,
        &canonical,
        envelope["Signature"].as_str().unwrap(),
        true,
    );
}

#[tokio::test]
async fn raw_delivery_sends_the_message_and_its_attributes_as_sqs_attributes() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let url = t.create_queue("raw").await;
    let arn = topic(&sns, "rawtopic", &[]).await;
    subscribe(&sns, &arn, "raw", &[("RawMessageDelivery", "True")]).await;
    sns.publish()
        .topic_arn(&arn)
        .message("just the body")
        .message_attributes(
            "attr1",
            MessageAttributeValue::builder()
                .data_type("Number")
                .string_value("19.12")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let m = t
        .client
        .receive_message()
        .queue_url(&url)
        .message_attribute_names("All")
        .send()
        .await
        .unwrap()
        .messages
        .unwrap()
        .remove(0);
    assert_eq!(m.body.as_deref(), Some("just the body"));
    let attrs = m.message_attributes.unwrap();
    assert_eq!(attrs["attr1"].data_type(), "Number");
    assert_eq!(attrs["attr1"].string_value(), Some("19.12"));
    // The MD5 AWS recorded for this attribute.
    assert_eq!(
        m.md5_of_message_attributes.as_deref(),
        Some("1f07082409022a373fa2a2601f82b3cb")
    );
}

#[tokio::test]
async fn filter_policies_choose_the_subscriptions_a_message_reaches() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let blue = t.create_queue("blue").await;
    let big = t.create_queue("big").await;
    let arn = topic(&sns, "filtered", &[]).await;
    subscribe(
        &sns,
        &arn,
        "blue",
        &[("FilterPolicy", r#"{"colour":["blue"]}"#)],
    )
    .await;
    subscribe(
        &sns,
        &arn,
        "big",
        &[
            ("FilterPolicyScope", "MessageBody"),
            ("FilterPolicy", r#"{"size":[{"numeric":[">",100]}]}"#),
        ],
    )
    .await;
    for (colour, size) in [("blue", 5), ("red", 500), ("blue", 101)] {
        sns.publish()
            .topic_arn(&arn)
            .message(format!(r#"{{"size":{size}}}"#))
            .message_attributes("colour", string_attribute(colour))
            .send()
            .await
            .unwrap();
    }
    let bodies = |ms: Vec<aws_sdk_sqs::types::Message>| -> Vec<String> {
        let mut out: Vec<String> = ms
            .into_iter()
            .map(|m| {
                let e: serde_json::Value = serde_json::from_str(&m.body.unwrap()).unwrap();
                e["Message"].as_str().unwrap().to_string()
            })
            .collect();
        out.sort();
        out
    };
    assert_eq!(
        bodies(t.receive(&blue, 10).await),
        vec![r#"{"size":101}"#, r#"{"size":5}"#]
    );
    assert_eq!(
        bodies(t.receive(&big, 10).await),
        vec![r#"{"size":101}"#, r#"{"size":500}"#]
    );
    // A policy AWS refuses is refused with AWS's words.
    let err = sns
        .subscribe()
        .topic_arn(&arn)
        .protocol("sqs")
        .endpoint(queue_arn("blue2"))
        .attributes("FilterPolicy", r#"{"a":[],"b":[1]}"#)
        .send()
        .await
        .unwrap_err();
    assert!(format!("{:?}", err.into_service_error()).contains(
        "Invalid parameter: Attributes Reason: FilterPolicy: Empty arrays are not allowed"
    ),);
}

#[tokio::test]
async fn fifo_topics_deliver_in_order_with_their_ids_and_drop_duplicates() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let url = t
        .create_queue_with("orders.fifo", &[("FifoQueue", "true")])
        .await;
    let arn = topic(
        &sns,
        "orders.fifo",
        &[("FifoTopic", "true"), ("ContentBasedDeduplication", "true")],
    )
    .await;
    subscribe(&sns, &arn, "orders.fifo", &[("RawMessageDelivery", "true")]).await;
    let mut sequence = Vec::new();
    for i in 0..5 {
        let r = sns
            .publish()
            .topic_arn(&arn)
            .message(format!("m{i}"))
            .message_group_id("g")
            .send()
            .await
            .unwrap();
        sequence.push(r.sequence_number.unwrap());
    }
    assert!(sequence.windows(2).all(|w| w[0] < w[1]), "{sequence:?}");
    assert!(sequence.iter().all(|s| s.len() == 20));
    // The same content within five minutes is the first publish again.
    let again = sns
        .publish()
        .topic_arn(&arn)
        .message("m0")
        .message_group_id("g")
        .send()
        .await
        .unwrap();
    assert_eq!(again.sequence_number.as_deref(), Some(sequence[0].as_str()));
    let got = t
        .client
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .message_system_attribute_names(aws_sdk_sqs::types::MessageSystemAttributeName::All)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap();
    let bodies: Vec<&str> = got.iter().map(|m| m.body.as_deref().unwrap()).collect();
    assert_eq!(bodies, vec!["m0", "m1", "m2", "m3", "m4"]);
    let attrs = got[0].attributes.clone().unwrap();
    let get = |name: &str| {
        attrs
            .iter()
            .find(|(k, _)| k.as_str() == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(get("MessageGroupId").as_deref(), Some("g"));
    // Content-based: the SHA-256 of the body, as AWS derives it.
    assert_eq!(
        get("MessageDeduplicationId").unwrap(),
        format!("{:x}", <sha2::Sha256 as sha2::Digest>::digest(b"m0"))
    );
    let err = sns
        .publish()
        .topic_arn(&arn)
        .message("no group")
        .send()
        .await
        .unwrap_err();
    assert!(format!("{:?}", err.into_service_error())
        .contains("The MessageGroupId parameter is required for FIFO topics"));
    // A FIFO queue cannot subscribe to a standard topic.
    let standard = topic(&sns, "plain", &[]).await;
    let err = sns
        .subscribe()
        .topic_arn(&standard)
        .protocol("sqs")
        .endpoint(queue_arn("orders.fifo"))
        .send()
        .await
        .unwrap_err();
    assert!(format!("{:?}", err.into_service_error())
        .contains("FIFO SQS Queues can not be subscribed to standard SNS topics"));
}

/// Concurrent publishers to a FIFO topic with two FIFO queue subscribers,
/// every message published twice with its deduplication id: each queue
/// gets each message exactly once, and every group in SequenceNumber order
/// (the order the topic numbered them in).
#[tokio::test]
async fn fifo_fan_out_under_concurrency_is_exactly_once_and_in_order() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let arn = topic(&sns, "ledger.fifo", &[("FifoTopic", "true")]).await;
    let mut urls = Vec::new();
    for queue in ["books-a.fifo", "books-b.fifo"] {
        urls.push(t.create_queue_with(queue, &[("FifoQueue", "true")]).await);
        subscribe(&sns, &arn, queue, &[]).await;
    }
    const PUBLISHERS: usize = 8;
    const EACH: usize = 25;
    let mut tasks = Vec::new();
    for p in 0..PUBLISHERS {
        let (sns, arn) = (sns.clone(), arn.clone());
        tasks.push(tokio::spawn(async move {
            for i in 0..EACH {
                let id = format!("p{p}-{i}");
                for _ in 0..2 {
                    sns.publish()
                        .topic_arn(&arn)
                        .message(&id)
                        .message_group_id(format!("g{}", p % 3))
                        .message_deduplication_id(&id)
                        .send()
                        .await
                        .unwrap();
                }
            }
        }));
    }
    for task in tasks {
        finish(task, 60).await;
    }
    for url in &urls {
        // group -> the (SequenceNumber, message) pairs in the order received
        let mut groups: HashMap<String, Vec<(String, String)>> = HashMap::new();
        let mut total = 0;
        loop {
            let got = t
                .client
                .receive_message()
                .queue_url(url)
                .max_number_of_messages(10)
                .message_system_attribute_names(
                    aws_sdk_sqs::types::MessageSystemAttributeName::MessageGroupId,
                )
                .send()
                .await
                .unwrap()
                .messages
                .unwrap_or_default();
            if got.is_empty() {
                break;
            }
            for m in &got {
                let envelope: serde_json::Value =
                    serde_json::from_str(m.body.as_deref().unwrap()).unwrap();
                let group = m.attributes.as_ref().unwrap()
                    [&aws_sdk_sqs::types::MessageSystemAttributeName::MessageGroupId]
                    .clone();
                groups.entry(group).or_default().push((
                    envelope["SequenceNumber"].as_str().unwrap().to_string(),
                    envelope["Message"].as_str().unwrap().to_string(),
                ));
                t.client
                    .delete_message()
                    .queue_url(url)
                    .receipt_handle(m.receipt_handle.as_deref().unwrap())
                    .send()
                    .await
                    .unwrap();
                total += 1;
            }
        }
        assert_eq!(total, PUBLISHERS * EACH, "{url}: each message exactly once");
        let mut seen = std::collections::HashSet::new();
        for (group, entries) in &groups {
            assert!(
                entries.windows(2).all(|w| w[0].0 < w[1].0),
                "{url} {group}: out of SequenceNumber order: {entries:?}"
            );
            for (_, message) in entries {
                assert!(seen.insert(message.clone()), "{url}: {message} twice");
            }
        }
    }
}

#[tokio::test]
async fn a_subscription_whose_queue_is_gone_dead_letters_to_its_redrive_queue() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let dlq = t.create_queue("sub-dlq").await;
    let arn = topic(&sns, "lossy", &[]).await;
    let policy = format!(r#"{{"deadLetterTargetArn":"{}"}}"#, queue_arn("sub-dlq"));
    subscribe(&sns, &arn, "never-made", &[("RedrivePolicy", &policy)]).await;
    let id = sns
        .publish()
        .topic_arn(&arn)
        .message("to nowhere")
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();
    let m = t.receive_one(&dlq).await;
    let envelope: serde_json::Value = serde_json::from_str(&m.body.unwrap()).unwrap();
    assert_eq!(envelope["MessageId"], id.as_str());
    assert_eq!(envelope["Message"], "to nowhere");
}

/// A subscription keeps its queue between publishes; a queue deleted
/// and made again under the same name must be the one that gets the next
/// message, and nothing may go to the deleted one in between.
#[tokio::test]
async fn a_subscription_follows_its_queue_through_delete_and_recreate() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let arn = topic(&sns, "steady", &[]).await;
    let first = t.create_queue("target").await;
    subscribe(&sns, &arn, "target", &[("RawMessageDelivery", "true")]).await;
    let publish = |text: &'static str| {
        let sns = sns.clone();
        let arn = arn.clone();
        async move {
            sns.publish()
                .topic_arn(arn)
                .message(text)
                .send()
                .await
                .unwrap();
        }
    };
    publish("one").await;
    assert_eq!(t.receive_one(&first).await.body.as_deref(), Some("one"));
    t.client
        .delete_queue()
        .queue_url(&first)
        .send()
        .await
        .unwrap();
    publish("lost").await;
    let second = t.create_queue("target").await;
    publish("two").await;
    let got = t.receive(&second, 10).await;
    let bodies: Vec<_> = got.iter().filter_map(|m| m.body.as_deref()).collect();
    assert_eq!(bodies, ["two"], "only what was published after it was made");
}

/// AWS's quota of 200 subscriptions with a filter policy per topic, at
/// Subscribe and at SetSubscriptionAttributes; removing one makes room.
#[tokio::test]
async fn a_topic_takes_at_most_200_filter_policies() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let arn = topic(&sns, "busy", &[]).await;
    let policy = r#"{"kind":["order"]}"#;
    let mut filtered = Vec::new();
    for i in 0..200 {
        let queue = format!("filtered-{i}");
        filtered.push(subscribe(&sns, &arn, &queue, &[("FilterPolicy", policy)]).await);
    }
    let refused = sns
        .subscribe()
        .topic_arn(&arn)
        .protocol("sqs")
        .endpoint(queue_arn("one-too-many"))
        .attributes("FilterPolicy", policy)
        .send()
        .await
        .unwrap_err();
    let err = refused.into_service_error();
    assert!(err.is_filter_policy_limit_exceeded_exception(), "{err:?}");
    // Without a policy it is taken, and cannot be given one afterwards.
    let plain = subscribe(&sns, &arn, "plain", &[]).await;
    let set_policy = |sub: String, value: &'static str| {
        sns.set_subscription_attributes()
            .subscription_arn(sub)
            .attribute_name("FilterPolicy")
            .attribute_value(value)
            .send()
    };
    let err = set_policy(plain.clone(), policy).await.unwrap_err();
    assert!(err
        .into_service_error()
        .is_filter_policy_limit_exceeded_exception());
    // A subscription that has one may change it.
    set_policy(filtered[0].clone(), r#"{"kind":["refund"]}"#)
        .await
        .unwrap();
    set_policy(filtered[1].clone(), "").await.unwrap();
    set_policy(plain, policy).await.unwrap();
}

#[tokio::test]
async fn message_structure_json_and_batches() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let url = t.create_queue("structured").await;
    let arn = topic(&sns, "structured", &[]).await;
    subscribe(&sns, &arn, "structured", &[("RawMessageDelivery", "true")]).await;
    sns.publish()
        .topic_arn(&arn)
        .message_structure("json")
        .message(r#"{"default":"for everyone","sqs":"for queues"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(
        t.receive_one(&url).await.body.as_deref(),
        Some("for queues")
    );
    let err = sns
        .publish()
        .topic_arn(&arn)
        .message_structure("json")
        .message(r#"{"sqs":"only"}"#)
        .send()
        .await
        .unwrap_err();
    assert!(format!("{:?}", err.into_service_error())
        .contains("Message Structure - No default entry in JSON message body"));

    let entries = (0..3).map(|i| {
        aws_sdk_sns::types::PublishBatchRequestEntry::builder()
            .id(format!("e{i}"))
            .message(format!("batch {i}"))
            .build()
            .unwrap()
    });
    let r = sns
        .publish_batch()
        .topic_arn(&arn)
        .set_publish_batch_request_entries(Some(entries.collect()))
        .send()
        .await
        .unwrap();
    let ids: Vec<&str> = r.successful().iter().map(|e| e.id().unwrap()).collect();
    assert_eq!(ids, vec!["e0", "e1", "e2"]);
    assert!(r.failed().is_empty());
    let mut bodies: Vec<String> = t
        .receive(&url, 10)
        .await
        .into_iter()
        .map(|m| m.body.unwrap())
        .collect();
    bodies.sort();
    assert_eq!(bodies, vec!["batch 0", "batch 1", "batch 2"]);
}

#[tokio::test]
async fn subscriptions_are_listed_described_and_removed() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let arn = topic(&sns, "listed", &[]).await;
    let sub = subscribe(&sns, &arn, "q1", &[]).await;
    assert_eq!(subscribe(&sns, &arn, "q1", &[]).await, sub, "idempotent");
    let attrs: HashMap<String, String> = sns
        .get_subscription_attributes()
        .subscription_arn(&sub)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap();
    assert_eq!(attrs["PendingConfirmation"], "false");
    assert_eq!(attrs["RawMessageDelivery"], "false");
    assert_eq!(attrs["Endpoint"], queue_arn("q1"));
    let err = sns
        .set_subscription_attributes()
        .subscription_arn(&sub)
        .attribute_name("RawMessageDelivery")
        .attribute_value("maybe")
        .send()
        .await
        .unwrap_err();
    assert!(format!("{:?}", err.into_service_error()).contains(
        "Invalid parameter: RawMessageDelivery: Invalid value [maybe]. Must be true or false."
    ));
    let by_topic = sns
        .list_subscriptions_by_topic()
        .topic_arn(&arn)
        .send()
        .await
        .unwrap();
    assert_eq!(by_topic.subscriptions().len(), 1);
    assert_eq!(
        sns.list_subscriptions()
            .send()
            .await
            .unwrap()
            .subscriptions()
            .len(),
        1
    );
    sns.unsubscribe()
        .subscription_arn(&sub)
        .send()
        .await
        .unwrap();
    sns.unsubscribe()
        .subscription_arn(&sub)
        .send()
        .await
        .unwrap();
    assert!(sns
        .list_subscriptions()
        .send()
        .await
        .unwrap()
        .subscriptions()
        .is_empty());
    // Tags and the data protection policy are kept and returned.
    sns.tag_resource()
        .resource_arn(&arn)
        .tags(
            aws_sdk_sns::types::Tag::builder()
                .key("team")
                .value("a")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let tags = sns
        .list_tags_for_resource()
        .resource_arn(&arn)
        .send()
        .await
        .unwrap();
    assert_eq!(tags.tags()[0].key(), "team");
}

#[tokio::test]
async fn sns_errors_come_in_sns_s_xml_shape() {
    let t = TestServer::start().await;
    let r = t
        .form_post(
            "/",
            &[
                ("Action", "GetTopicAttributes"),
                ("Version", "2010-03-31"),
                ("TopicArn", "arn:aws:sns:us-east-1:000000000000:missing"),
            ],
        )
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
    assert!(r
        .body
        .starts_with("<ErrorResponse xmlns=\"http://sns.amazonaws.com/doc/2010-03-31/\">"));
    assert!(r.body.contains("<Code>NotFound</Code>"), "{}", r.body);
    assert!(r.body.contains("<Message>Topic does not exist</Message>"));
    let r = t
        .form_post(
            "/",
            &[
                ("Action", "Publish"),
                ("Version", "2010-03-31"),
                ("TopicArn", "short"),
            ],
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.body.contains(
            "Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 1"
        ),
        "{}",
        r.body
    );
    // SQS still answers its own actions on the same port.
    let url = t.create_queue("still-sqs").await;
    t.send(&url, "x").await;
    assert_eq!(t.receive(&url, 1).await.len(), 1);
}

#[tokio::test]
async fn fan_out_steps_show_in_the_admin_api_metrics_history_and_live_stream() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let url = t.create_queue("seen").await;
    let arn = topic(&sns, "observed", &[]).await;
    subscribe(
        &sns,
        &arn,
        "seen",
        &[("FilterPolicy", r#"{"colour":["blue"]}"#)],
    )
    .await;
    subscribe(&sns, &arn, "gone", &[]).await;

    // The live stream, opened before publishing.
    let mut stream = t
        .http
        .get(format!(
            "{}/_retsu/events/stream?kind=published,delivered,filtered_out,delivery_failed",
            t.endpoint
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);

    let blue = sns
        .publish()
        .topic_arn(&arn)
        .message("blue one")
        .message_attributes("colour", string_attribute("blue"))
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();
    sns.publish()
        .topic_arn(&arn)
        .message("red one")
        .message_attributes("colour", string_attribute("red"))
        .send()
        .await
        .unwrap();

    let mut seen = String::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while seen.matches("event: filtered_out").count() < 1
        || seen.matches("event: delivery_failed").count() < 2
    {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let chunk = tokio::time::timeout(left, stream.chunk())
            .await
            .unwrap_or_else(|_| panic!("missing fan-out events; so far: {seen}"))
            .unwrap()
            .expect("the stream stays open");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert_eq!(seen.matches("event: published").count(), 2, "{seen}");
    assert!(seen.contains("event: delivered"), "{seen}");
    assert!(seen.contains(&blue), "{seen}");

    // The admin listing: the subscription's policy, and why red was dropped.
    let listing = t.admin_get("/_retsu/topics").await;
    let topic = &listing["topics"][0];
    assert_eq!(topic["arn"], arn.as_str());
    let subs = topic["subscriptions"].as_array().unwrap();
    assert_eq!(subs.len(), 2);
    assert!(subs
        .iter()
        .any(|s| s["filter_policy"] == r#"{"colour":["blue"]}"#));
    let recent = topic["recent"].as_array().unwrap();
    let filtered = recent
        .iter()
        .find(|e| e["kind"] == "filtered_out")
        .expect("a filtered_out step");
    assert!(
        filtered["detail"].as_str().unwrap().contains("colour"),
        "{filtered}"
    );
    let failed = recent
        .iter()
        .find(|e| e["kind"] == "delivery_failed")
        .unwrap();
    assert!(
        failed["detail"]
            .as_str()
            .unwrap()
            .contains("does not exist"),
        "{failed}"
    );

    // Metrics per topic.
    let metrics = t.get("/metrics", &[]).await.body;
    let line = |outcome: &str| {
        metrics
            .lines()
            .find(|l| {
                l.starts_with("retsu_sns_messages_total")
                    && l.contains(&format!("outcome=\"{outcome}\""))
                    && l.contains("observed")
            })
            .unwrap_or_else(|| panic!("no {outcome} line in {metrics}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(line("published"), "2");
    assert_eq!(line("delivered"), "1");
    assert_eq!(line("filtered_out"), "1");
    assert_eq!(line("delivery_failed"), "2");

    // The delivered SQS message's history names its publish.
    let m = t.receive_one(&url).await;
    let history = t
        .admin_get(&format!("/_retsu/messages/{}", m.message_id.unwrap()))
        .await;
    let sent = &history["events"][0];
    assert_eq!(sent["kind"], "sent", "{history}");
    let detail = sent["detail"].as_str().unwrap();
    assert!(detail.contains(&arn) && detail.contains(&blue), "{detail}");
}
