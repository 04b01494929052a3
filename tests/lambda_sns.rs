//! SNS `lambda` subscriptions invoking a real function: AWS's Lambda
//! Runtime Interface Emulator (built by `scripts/lambda-rie.sh`) running
//! the Python handlers of `tests/lambda/sns_handlers.py`, which parse
//! every event with AWS Lambda Powertools' `SnsModel`. Driven by the
//! official `aws-sdk-sns` and `aws-sdk-sqs` clients.
//!
//! What is checked: the event's shape (Records[].Sns as Lambda spells
//! it), that Publish does not wait for the function, Lambda's
//! asynchronous retries (two, one minute and then two minutes after the
//! failure) on the manual clock, the dead-letter queue after the last one
//! with the reason in the message's history, an unknown function, and
//! what the event stream, topics screen, invocation log and `/metrics`
//! show. Without Go (or python3) the emulator tests print "skipped: no
//! Go" and pass, as tests/lambda.rs does.

mod common;

use std::time::Duration;

use aws_sdk_sns::types::MessageAttributeValue;
use common::lambda::{eventually, rie_available, single_node_only, Rie};
use common::{queue_arn, TestServer, ACCOUNT, REGION};
use retsu::config::Config;
use retsu::lambda::FunctionTarget;
use serde_json::Value;

/// The events the handler was invoked with, in order (the handlers of
/// tests/lambda/sns_handlers.py write them).
fn events(rie: &Rie) -> Vec<Value> {
    rie.lines()
        .iter()
        .map(|l| serde_json::from_str(l).expect("a log line is an event"))
        .collect()
}

fn function_arn(name: &str) -> String {
    format!("arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}")
}

/// A server with the function `notify` at `url`, an SNS client, and a
/// topic `events`.
async fn server_with_topic(url: &str) -> (TestServer, aws_sdk_sns::Client, String) {
    let server = TestServer::start_with(Config {
        functions: vec![FunctionTarget::with_url("notify", url, Default::default(), 30).unwrap()],
        ..Config::ephemeral()
    })
    .await;
    let sns = common::sns_client(&server.endpoint);
    let topic = sns
        .create_topic()
        .name("events")
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    (server, sns, topic)
}

async fn subscribe(
    sns: &aws_sdk_sns::Client,
    topic: &str,
    endpoint: &str,
    attributes: &[(&str, &str)],
) -> String {
    let mut request = sns
        .subscribe()
        .topic_arn(topic)
        .protocol("lambda")
        .endpoint(endpoint);
    for (name, value) in attributes {
        request = request.attributes(*name, *value);
    }
    request.send().await.unwrap().subscription_arn.unwrap()
}

/// The topic's recent fan-out steps for `subscription`, as the console's
/// topics screen shows them.
async fn steps(server: &TestServer, subscription: &str) -> Vec<Value> {
    let topics = server.admin_get("/_retsu/topics").await;
    topics["topics"][0]["recent"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["subscription"] == subscription)
        .cloned()
        .collect()
}

async fn invocations(server: &TestServer) -> Vec<Value> {
    server.admin_get("/_retsu/lambda/invocations").await["invocations"]
        .as_array()
        .unwrap()
        .clone()
}

async fn metrics(server: &TestServer) -> String {
    server
        .http
        .get(format!("{}/metrics", server.endpoint))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_lambda_subscription_invokes_the_function_once_with_snss_event() {
    if single_node_only("SNS-to-Lambda invocations") || !rie_available() {
        return;
    }
    let rie = Rie::python("sns_handlers.ok");
    let (server, sns, topic) = server_with_topic(&rie.url).await;
    let subscription = subscribe(&sns, &topic, &function_arn("notify"), &[]).await;

    let published = sns
        .publish()
        .topic_arn(&topic)
        .subject("Order")
        .message("order 1 placed")
        .message_attributes(
            "kind",
            MessageAttributeValue::builder()
                .data_type("String")
                .string_value("order")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();

    eventually("the function was invoked", || async {
        !events(&rie).is_empty()
    })
    .await;
    eventually("the delivery is a step", || async {
        steps(&server, &subscription)
            .await
            .iter()
            .any(|s| s["kind"] == "delivered")
    })
    .await;
    let event = &events(&rie)[0];
    let records = event["Records"].as_array().unwrap();
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record["EventSource"], "aws:sns");
    assert_eq!(record["EventVersion"], "1.0");
    assert_eq!(record["EventSubscriptionArn"], subscription.as_str());
    let n = &record["Sns"];
    assert_eq!(n["Type"], "Notification");
    assert_eq!(n["MessageId"], published.as_str());
    assert_eq!(n["TopicArn"], topic.as_str());
    assert_eq!(n["Subject"], "Order");
    assert_eq!(n["Message"], "order 1 placed");
    assert_eq!(n["SignatureVersion"], "1");
    assert!(n["Signature"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(
        n["SigningCertUrl"].as_str().unwrap().starts_with("http"),
        "{n}"
    );
    assert!(
        n["SigningCertURL"].is_null(),
        "Lambda spells it SigningCertUrl"
    );
    assert!(n["UnsubscribeUrl"]
        .as_str()
        .unwrap()
        .contains(&format!("SubscriptionArn={subscription}")));
    assert!(n["Timestamp"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        n["MessageAttributes"]["kind"],
        serde_json::json!({"Type": "String", "Value": "order"})
    );

    // One delivery, one invocation: time passing brings no retry.
    server.advance_secs(600);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(events(&rie).len(), 1);
    let delivered = steps(&server, &subscription).await;
    assert_eq!(
        delivered
            .iter()
            .filter(|s| s["kind"] == "delivered")
            .count(),
        1
    );
    assert!(delivered.iter().all(|s| s["protocol"] == "lambda"));

    // The inbox keeps the event as well.
    let (_, inbox) = server
        .admin(reqwest::Method::GET, "/_retsu/inbox?protocol=lambda", None)
        .await;
    assert!(inbox.to_string().contains(&published), "{inbox}");

    let log = invocations(&server).await;
    assert_eq!(log.len(), 1, "{log:#?}");
    assert_eq!(log[0]["source"], "subscription");
    assert_eq!(log[0]["source_id"], subscription.as_str());
    assert_eq!(log[0]["function"], "notify");
    assert_eq!(log[0]["result"], "ok");
    assert_eq!(log[0]["batch"], 1);
    assert_eq!(log[0]["attempt"], 1);
    let text = metrics(&server).await;
    let line = format!(
        "retsu_lambda_invocations_total{{function=\"notify\",source=\"{subscription}\",result=\"ok\"}} 1"
    );
    assert!(text.contains(&line), "{line} not in:\n{text}");
}

#[tokio::test]
async fn a_failing_function_is_retried_after_one_then_two_minutes_then_dead_lettered() {
    if single_node_only("SNS-to-Lambda invocations") || !rie_available() {
        return;
    }
    let rie = Rie::python("sns_handlers.always_fail");
    let (server, sns, topic) = server_with_topic(&rie.url).await;
    let dlq = server.create_queue("notify-dlq").await;
    let policy = format!(r#"{{"deadLetterTargetArn":"{}"}}"#, queue_arn("notify-dlq"));
    let subscription = subscribe(
        &sns,
        &topic,
        // With a version qualifier: the function is still `notify`.
        &format!("{}:$LATEST", function_arn("notify")),
        &[("RedrivePolicy", policy.as_str())],
    )
    .await;

    // Publish answers at once; the invocation happens behind it.
    let published = sns
        .publish()
        .topic_arn(&topic)
        .message("charge card")
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();

    let failures = |n: usize| {
        let server = &server;
        let subscription = subscription.clone();
        async move {
            steps(server, &subscription)
                .await
                .iter()
                .filter(|s| s["kind"] == "delivery_failed")
                .count()
                >= n
        }
    };
    eventually("the first attempt failed", || failures(1)).await;
    assert_eq!(events(&rie).len(), 1);
    // Not before a minute has passed.
    server.advance_secs(59);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(events(&rie).len(), 1, "no retry before a minute");
    server.advance_secs(1);
    eventually("the second attempt failed", || failures(2)).await;
    assert_eq!(events(&rie).len(), 2);
    // Then two minutes.
    server.advance_secs(119);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(events(&rie).len(), 2, "no retry before two more minutes");
    server.advance_secs(1);
    eventually("the message was dead-lettered", || async {
        steps(&server, &subscription)
            .await
            .iter()
            .any(|s| s["kind"] == "dead_lettered")
    })
    .await;
    assert_eq!(events(&rie).len(), 3, "the first attempt and two retries");
    server.advance_secs(3600);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(events(&rie).len(), 3, "nothing after giving up");

    // The dead-letter queue holds the JSON notification.
    let messages = server.receive(&dlq, 10).await;
    assert_eq!(messages.len(), 1);
    let body: Value = serde_json::from_str(messages[0].body().unwrap()).unwrap();
    assert_eq!(body["Type"], "Notification");
    assert_eq!(body["MessageId"], published.as_str());
    assert_eq!(body["TopicArn"], topic.as_str());
    assert_eq!(body["Message"], "charge card");

    // Its history says why it is there.
    let id = messages[0].message_id().unwrap();
    let history = server.message_history(id).await;
    let said = history.to_string();
    assert!(
        said.contains("failed 3 times") && said.contains("this handler always fails"),
        "{history:#}"
    );
    // So do the steps and the invocation log.
    let all = steps(&server, &subscription).await;
    let dead = all.iter().find(|s| s["kind"] == "dead_lettered").unwrap();
    assert_eq!(dead["endpoint"], queue_arn("notify-dlq").as_str());
    assert_eq!(dead["delivered_as"], id);
    let log = invocations(&server).await;
    let attempts: Vec<&Value> = log.iter().map(|r| &r["attempt"]).collect();
    assert_eq!(attempts, [1, 2, 3]);
    assert!(log
        .iter()
        .all(|r| r["result"] == "failed" && r["error"].as_str().unwrap().contains("always fails")));
    let text = metrics(&server).await;
    let line = format!(
        "retsu_lambda_invocations_total{{function=\"notify\",source=\"{subscription}\",result=\"failed\"}} 3"
    );
    assert!(text.contains(&line), "{line} not in:\n{text}");
}

#[tokio::test]
async fn an_unknown_function_goes_to_the_dead_letter_queue_at_once_or_is_dropped_with_a_reason() {
    if single_node_only("SNS-to-Lambda invocations") {
        return;
    }
    // No emulator needed: the function named is not configured.
    let (server, sns, topic) = server_with_topic("http://127.0.0.1:1").await;
    let dlq = server.create_queue("lost-dlq").await;
    let policy = format!(r#"{{"deadLetterTargetArn":"{}"}}"#, queue_arn("lost-dlq"));
    let with_dlq = subscribe(
        &sns,
        &topic,
        &function_arn("missing"),
        &[("RedrivePolicy", policy.as_str())],
    )
    .await;
    let without = subscribe(&sns, &topic, &function_arn("also-missing"), &[]).await;

    sns.publish()
        .topic_arn(&topic)
        .message("hello")
        .send()
        .await
        .unwrap();

    // SNS's client-side error: no retry, no waiting for the clock.
    eventually("the message reached the dead-letter queue", || async {
        server.counts(&dlq).await.0 == 1
    })
    .await;
    eventually("the drop was recorded", || async {
        steps(&server, &without)
            .await
            .iter()
            .any(|s| s["kind"] == "delivery_failed")
    })
    .await;
    let dropped = steps(&server, &without).await;
    let why = dropped[0]["detail"].as_str().unwrap();
    assert!(
        why.contains("Function not found") && why.contains("no dead-letter queue"),
        "{why}"
    );
    let dead = steps(&server, &with_dlq).await;
    assert!(dead.iter().any(|s| s["kind"] == "dead_lettered"
        && s["detail"].as_str().unwrap().contains("Function not found")));
    assert!(invocations(&server).await.is_empty(), "nothing was invoked");
}

#[tokio::test]
async fn without_functions_lambda_subscriptions_are_only_recorded() {
    let server = TestServer::start().await;
    let sns = common::sns_client(&server.endpoint);
    let topic = sns
        .create_topic()
        .name("events")
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    let subscription = subscribe(&sns, &topic, &function_arn("notify"), &[]).await;
    sns.publish()
        .topic_arn(&topic)
        .message("hello")
        .send()
        .await
        .unwrap();
    let recorded = steps(&server, &subscription).await;
    assert_eq!(recorded.len(), 1, "{recorded:#?}");
    assert_eq!(recorded[0]["kind"], "delivered");
    assert!(invocations(&server).await.is_empty());
}
