//! Every SNS protocol AWS accepts, through the official `aws-sdk-sns`:
//! `sms`, `email`, `email-json`, `application`, `lambda` and `firehose`
//! subscriptions are validated in AWS's order and wording, confirmed as
//! AWS confirms them (e-mail through the token the developer endpoints
//! reveal), listed, persisted; what a publish would have sent them is
//! recorded and read back from LocalStack's `/_aws/sns/*` endpoints and
//! the admin API. Also direct publishes to a phone number and a platform
//! endpoint, and the platform application/endpoint actions.

mod common;

use aws_sdk_sns::types::MessageAttributeValue;
use common::*;
use reqwest::Method;
use serde_json::Value;

fn message(err: impl std::fmt::Debug) -> String {
    format!("{err:?}")
}

async fn topic(sns: &aws_sdk_sns::Client, name: &str) -> String {
    sns.create_topic()
        .name(name)
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap()
}

/// Subscribes and asks for the ARN even while pending.
async fn subscribe(
    sns: &aws_sdk_sns::Client,
    topic_arn: &str,
    protocol: &str,
    endpoint: &str,
    attributes: &[(&str, &str)],
) -> Result<String, String> {
    let mut req = sns
        .subscribe()
        .topic_arn(topic_arn)
        .protocol(protocol)
        .endpoint(endpoint)
        .return_subscription_arn(true);
    for (k, v) in attributes {
        req = req.attributes(*k, *v);
    }
    req.send()
        .await
        .map(|r| r.subscription_arn.unwrap())
        .map_err(|e| message(e.into_service_error()))
}

async fn application_endpoint(sns: &aws_sdk_sns::Client, token: &str) -> (String, String) {
    let app = sns
        .create_platform_application()
        .name("phone-app")
        .platform("GCM")
        .attributes("PlatformCredential", "server-key")
        .send()
        .await
        .unwrap()
        .platform_application_arn
        .unwrap();
    let endpoint = sns
        .create_platform_endpoint()
        .platform_application_arn(&app)
        .token(token)
        .send()
        .await
        .unwrap()
        .endpoint_arn
        .unwrap();
    (app, endpoint)
}

async fn publish_text(sns: &aws_sdk_sns::Client, topic: &str, text: &str) {
    sns.publish()
        .topic_arn(topic)
        .message(text)
        .send()
        .await
        .unwrap();
}

async fn disable(sns: &aws_sdk_sns::Client, endpoint: &str) {
    sns.set_endpoint_attributes()
        .endpoint_arn(endpoint)
        .attributes("Enabled", "false")
        .send()
        .await
        .unwrap();
}

async fn get_json(t: &TestServer, path: &str) -> (u16, Value) {
    let response = t
        .http
        .get(format!("{}{path}", t.endpoint))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or_default())
}

async fn delete(t: &TestServer, path: &str) -> u16 {
    t.http
        .delete(format!("{}{path}", t.endpoint))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn inbox(t: &TestServer, query: &str) -> Vec<Value> {
    t.admin_get(&format!("/_retsu/inbox?{query}")).await["messages"]
        .as_array()
        .unwrap()
        .clone()
}

fn string_attribute(value: &str) -> MessageAttributeValue {
    MessageAttributeValue::builder()
        .data_type("String")
        .string_value(value)
        .build()
        .unwrap()
}

#[tokio::test]
async fn subscribe_checks_the_topic_then_the_endpoint_then_the_attributes() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let missing = format!("arn:aws:sns:{REGION}:{ACCOUNT}:missing");
    // The topic first: a bad endpoint and a bad filter policy on a missing
    // topic still answer NotFound.
    let err = sns
        .subscribe()
        .topic_arn(&missing)
        .protocol("sms")
        .endpoint("not a number")
        .attributes("FilterPolicy", "{not json")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(err.is_not_found_exception(), "{err:?}");

    let arn = topic(&sns, "alerts").await;
    let refused = [
        ("sms", "12ab", "Invalid SMS endpoint: 12ab"),
        ("sms", "+1--5550100", "Invalid SMS endpoint: +1--5550100"),
        ("email", "nobody", "Invalid parameter: Email address"),
        ("email-json", "a@b@c", "Invalid parameter: Email address"),
        (
            "lambda",
            "arn:aws:sqs:us-east-1:000000000000:q",
            "Invalid parameter: Lambda endpoint ARN",
        ),
        (
            "firehose",
            "stream",
            "Invalid parameter: Firehose endpoint ARN",
        ),
        (
            "application",
            "arn:aws:sns:us-east-1:000000000000:alerts",
            "Invalid parameter: Application endpoint arn invalid",
        ),
        (
            "carrier-pigeon",
            "x",
            "Amazon SNS does not support this protocol string: carrier-pigeon",
        ),
    ];
    for (protocol, endpoint, wording) in refused {
        let err = subscribe(&sns, &arn, protocol, endpoint, &[])
            .await
            .unwrap_err();
        assert!(
            err.contains("InvalidParameter"),
            "{protocol} {endpoint}: {err}"
        );
        assert!(err.contains(wording), "{protocol} {endpoint}: {err}");
    }
    // Then the attributes: a valid endpoint with a bad filter policy.
    let err = subscribe(
        &sns,
        &arn,
        "sms",
        "+15550100",
        &[("FilterPolicy", "{not json")],
    )
    .await
    .unwrap_err();
    assert!(err.contains("FilterPolicy"), "{err}");
    // Firehose needs the role SNS writes with.
    let stream = "arn:aws:firehose:us-east-1:000000000000:deliverystream/audit";
    let err = subscribe(&sns, &arn, "firehose", stream, &[])
        .await
        .unwrap_err();
    assert!(err.contains("SubscriptionRoleArn"), "{err}");
    // Nothing was made by the refusals.
    let listed = sns
        .list_subscriptions_by_topic()
        .topic_arn(&arn)
        .send()
        .await
        .unwrap()
        .subscriptions
        .unwrap_or_default();
    assert!(listed.is_empty(), "{listed:?}");
}

#[tokio::test]
async fn every_protocol_is_accepted_confirmed_as_aws_does_and_listed() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let arn = topic(&sns, "everything").await;
    let (_, device) = application_endpoint(&sns, "device-token-1").await;
    let role = "arn:aws:iam::000000000000:role/sns-firehose";
    let subs = [
        ("sms", "+1-555-0100".to_string(), vec![], false),
        ("email", "ops@example.com".to_string(), vec![], true),
        ("email-json", "robot@example.com".to_string(), vec![], true),
        ("application", device.clone(), vec![], false),
        (
            "lambda",
            "arn:aws:lambda:us-east-1:000000000000:function:handler".to_string(),
            vec![],
            false,
        ),
        (
            "firehose",
            "arn:aws:firehose:us-east-1:000000000000:deliverystream/audit".to_string(),
            vec![("SubscriptionRoleArn", role)],
            false,
        ),
    ];
    for (protocol, endpoint, attributes, pending) in &subs {
        // Without ReturnSubscriptionArn a pending one answers as AWS does.
        let mut req = sns
            .subscribe()
            .topic_arn(&arn)
            .protocol(*protocol)
            .endpoint(endpoint);
        for (k, v) in attributes {
            req = req.attributes(*k, *v);
        }
        let answered = req.send().await.unwrap().subscription_arn.unwrap();
        if *pending {
            assert_eq!(answered, "pending confirmation", "{protocol}");
        } else {
            assert!(answered.starts_with(&arn), "{protocol}: {answered}");
        }
        let sub_arn = subscribe(&sns, &arn, protocol, endpoint, attributes)
            .await
            .unwrap();
        let attrs = sns
            .get_subscription_attributes()
            .subscription_arn(&sub_arn)
            .send()
            .await
            .unwrap()
            .attributes
            .unwrap();
        assert_eq!(attrs["Protocol"], *protocol);
        assert_eq!(&attrs["Endpoint"], endpoint);
        assert_eq!(
            attrs["PendingConfirmation"],
            pending.to_string(),
            "{protocol}"
        );
        assert_eq!(
            attrs["ConfirmationWasAuthenticated"],
            (!pending).to_string(),
            "{protocol}"
        );
        if *protocol == "firehose" {
            assert_eq!(attrs["SubscriptionRoleArn"], role);
        }
    }
    let listed = sns
        .list_subscriptions_by_topic()
        .topic_arn(&arn)
        .send()
        .await
        .unwrap()
        .subscriptions
        .unwrap();
    assert_eq!(
        listed.len(),
        subs.len(),
        "one each, the second Subscribe idempotent"
    );
    for s in &listed {
        let pending = matches!(s.protocol(), Some("email" | "email-json"));
        assert_eq!(
            s.subscription_arn() == Some("PendingConfirmation"),
            pending,
            "{s:?}"
        );
    }
    let all = sns.list_subscriptions().send().await.unwrap();
    assert_eq!(all.subscriptions.unwrap().len(), subs.len());
    let attrs = sns
        .get_topic_attributes()
        .topic_arn(&arn)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap();
    assert_eq!(attrs["SubscriptionsConfirmed"], "4");
    assert_eq!(attrs["SubscriptionsPending"], "2");
}

#[tokio::test]
async fn email_is_confirmed_with_the_token_the_developer_endpoint_reveals() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let arn = topic(&sns, "newsletter").await;
    let sub = subscribe(&sns, &arn, "email", "reader@example.com", &[])
        .await
        .unwrap();
    // The confirmation mail is in the inbox, its link carrying the token.
    let mails = inbox(&t, "protocol=email").await;
    assert_eq!(mails.len(), 1, "{mails:?}");
    assert_eq!(
        mails[0]["subject"],
        "AWS Notification - Subscription Confirmation"
    );
    // Unconfirmed: a publish reaches nobody.
    sns.publish()
        .topic_arn(&arn)
        .message("early")
        .send()
        .await
        .unwrap();
    assert_eq!(inbox(&t, "protocol=email").await.len(), 1);

    let (status, body) = get_json(&t, &format!("/_aws/sns/subscription-tokens/{sub}")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["subscription_arn"], sub.as_str());
    let token = body["subscription_token"].as_str().unwrap().to_string();
    assert!(mails[0]["payload"].as_str().unwrap().contains(&token));
    let admin = t
        .admin_get(&format!("/_retsu/subscriptions/{sub}/token"))
        .await;
    assert_eq!(admin["token"], token.as_str());

    let confirmed = sns
        .confirm_subscription()
        .topic_arn(&arn)
        .token(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(confirmed.subscription_arn(), Some(sub.as_str()));
    let attrs = sns
        .get_subscription_attributes()
        .subscription_arn(&sub)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap();
    assert_eq!(attrs["PendingConfirmation"], "false");

    sns.publish()
        .topic_arn(&arn)
        .message("issue 1")
        .subject("Weekly")
        .send()
        .await
        .unwrap();
    let mails = inbox(&t, "protocol=email&endpoint=reader@example.com").await;
    assert_eq!(mails.len(), 2);
    // The text, then AWS's footer with a link that unsubscribes here.
    let payload = mails[1]["payload"].as_str().unwrap();
    let (text, footer) = payload.split_once("\n\n--\n").unwrap();
    assert_eq!(text, "issue 1");
    assert!(
        footer.contains(&format!("/?Action=Unsubscribe&SubscriptionArn={sub}\n")),
        "{footer}"
    );
    assert_eq!(mails[1]["subject"], "Weekly");
    assert_eq!(mails[1]["subscription"], sub.as_str());

    // Tokens of what does not exist, or of an ARN that is not one.
    let (status, body) = get_json(
        &t,
        &format!("/_aws/sns/subscription-tokens/{arn}:00000000-0000-0000-0000-000000000000"),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"], "The provided SubscriptionARN is not found");
    let (status, body) = get_json(&t, "/_aws/sns/subscription-tokens/not-an-arn").await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"], "The provided SubscriptionARN is invalid");
}

#[tokio::test]
async fn a_publish_records_each_protocols_payload_with_json_structure() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let arn = topic(&sns, "fanout").await;
    let (_, device) = application_endpoint(&sns, "device-token-2").await;
    let lambda = "arn:aws:lambda:us-east-1:000000000000:function:handler";
    let stream = "arn:aws:firehose:us-east-1:000000000000:deliverystream/audit";
    let role = "arn:aws:iam::000000000000:role/sns-firehose";
    let sms = subscribe(&sns, &arn, "sms", "+15550100", &[])
        .await
        .unwrap();
    let email_json = subscribe(&sns, &arn, "email-json", "robot@example.com", &[])
        .await
        .unwrap();
    let token = get_json(&t, &format!("/_aws/sns/subscription-tokens/{email_json}"))
        .await
        .1["subscription_token"]
        .as_str()
        .unwrap()
        .to_string();
    sns.confirm_subscription()
        .topic_arn(&arn)
        .token(token)
        .send()
        .await
        .unwrap();
    let push = subscribe(&sns, &arn, "application", &device, &[])
        .await
        .unwrap();
    let function = subscribe(&sns, &arn, "lambda", lambda, &[]).await.unwrap();
    subscribe(
        &sns,
        &arn,
        "firehose",
        stream,
        &[("SubscriptionRoleArn", role)],
    )
    .await
    .unwrap();
    let raw_stream = "arn:aws:firehose:us-east-1:000000000000:deliverystream/raw";
    subscribe(
        &sns,
        &arn,
        "firehose",
        raw_stream,
        &[
            ("SubscriptionRoleArn", role),
            ("RawMessageDelivery", "true"),
        ],
    )
    .await
    .unwrap();
    // A filtered-out subscription records nothing.
    subscribe(
        &sns,
        &arn,
        "sms",
        "+15550199",
        &[("FilterPolicy", r#"{"kind":["refund"]}"#)],
    )
    .await
    .unwrap();

    let structured = serde_json::json!({
        "default": "plain text",
        "sms": "short text",
        "email-json": "mail text",
        "lambda": "function text",
        "GCM": "{\"notification\":{\"title\":\"hi\"}}",
    })
    .to_string();
    let published = sns
        .publish()
        .topic_arn(&arn)
        .message(&structured)
        .message_structure("json")
        .subject("Order")
        .message_attributes("kind", string_attribute("order"))
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();

    let records = inbox(&t, &format!("topic={arn}")).await;
    let by = |endpoint: &str| -> Value {
        records
            .iter()
            .find(|r| r["endpoint"] == endpoint && r["message_id"] == published.as_str())
            .unwrap_or_else(|| panic!("no record for {endpoint}: {records:#?}"))
            .clone()
    };
    // sms: its own entry, the attributes beside it.
    let text = by("+15550100");
    assert_eq!(text["payload"], "short text");
    assert_eq!(text["subscription"], sms.as_str());
    assert_eq!(text["message_attributes"]["kind"]["StringValue"], "order");
    // email-json: the JSON notification with its entry.
    let mail: Value =
        serde_json::from_str(by("robot@example.com")["payload"].as_str().unwrap()).unwrap();
    assert_eq!(mail["Type"], "Notification");
    assert_eq!(mail["Message"], "mail text");
    assert_eq!(mail["Subject"], "Order");
    assert_eq!(mail["MessageId"], published.as_str());
    assert_eq!(mail["MessageAttributes"]["kind"]["Value"], "order");
    assert!(mail["Signature"].is_string());
    // application: the platform's entry.
    let pushed = by(&device);
    assert_eq!(pushed["payload"], "{\"notification\":{\"title\":\"hi\"}}");
    assert_eq!(pushed["subscription"], push.as_str());
    // lambda: the invocation event.
    let event: Value = serde_json::from_str(by(lambda)["payload"].as_str().unwrap()).unwrap();
    let record = &event["Records"][0];
    assert_eq!(record["EventSource"], "aws:sns");
    assert_eq!(record["EventSubscriptionArn"], function.as_str());
    assert_eq!(record["Sns"]["Message"], "function text");
    assert_eq!(record["Sns"]["Subject"], "Order");
    assert_eq!(record["Sns"]["MessageAttributes"]["kind"]["Type"], "String");
    // firehose: the notification with the default text; raw: the text.
    let firehose: Value = serde_json::from_str(by(stream)["payload"].as_str().unwrap()).unwrap();
    assert_eq!(firehose["Message"], "plain text");
    assert_eq!(by(raw_stream)["payload"], "plain text");
    assert!(
        !records.iter().any(|r| r["endpoint"] == "+15550199"),
        "the filter policy kept it out"
    );

    // LocalStack's shapes.
    let (status, body) = get_json(&t, "/_aws/sns/sms-messages").await;
    assert_eq!(status, 200);
    assert_eq!(body["region"], REGION);
    let sent = &body["sms_messages"]["+15550100"][0];
    assert_eq!(sent["PhoneNumber"], "+15550100");
    assert_eq!(sent["Message"], "short text");
    assert_eq!(sent["TopicArn"], arn.as_str());
    assert_eq!(sent["SubscriptionArn"], sms.as_str());
    assert_eq!(sent["MessageId"], published.as_str());
    assert_eq!(sent["MessageAttributes"]["kind"]["DataType"], "String");
    let (_, body) = get_json(
        &t,
        &format!("/_aws/sns/platform-endpoint-messages?endpointArn={device}"),
    )
    .await;
    let pushed = &body["platform_endpoint_messages"][&device][0];
    assert_eq!(pushed["TargetArn"], device.as_str());
    assert_eq!(pushed["MessageStructure"], "json");
    assert_eq!(pushed["Message"], structured.as_str());
    assert_eq!(pushed["Subject"], "Order");

    // The fan-out's steps name the protocol of each delivery.
    let topics = t.admin_get("/_retsu/topics").await;
    let steps = topics["topics"][0]["recent"].as_array().unwrap();
    for protocol in ["sms", "email-json", "application", "lambda", "firehose"] {
        assert!(
            steps
                .iter()
                .any(|s| s["kind"] == "delivered" && s["protocol"] == protocol),
            "{protocol}: {steps:#?}"
        );
    }
    assert!(steps
        .iter()
        .any(|s| s["kind"] == "filtered_out" && s["protocol"] == "sms"));
    assert!(!topics["topics"][0]["inbox"].as_array().unwrap().is_empty());

    // Deleting by filter, then everything.
    assert_eq!(
        delete(&t, "/_aws/sns/sms-messages?phoneNumber=%2B15550100").await,
        204
    );
    let (_, body) = get_json(&t, "/_aws/sns/sms-messages").await;
    assert_eq!(body["sms_messages"], serde_json::json!({}));
    assert_eq!(
        delete(&t, "/_aws/sns/platform-endpoint-messages").await,
        204
    );
    assert!(inbox(&t, "protocol=application").await.is_empty());
    assert!(!inbox(&t, "protocol=lambda").await.is_empty());
    let (status, body) = t.admin(Method::DELETE, "/_retsu/inbox", None).await;
    assert_eq!(status, 200);
    assert!(body["deleted"].as_u64().unwrap() >= 3);
    assert!(inbox(&t, "").await.is_empty());

    // A disabled endpoint, then a deleted one, is delivered nothing (in a
    // cluster its application may be in another shard than the topic).
    disable(&sns, &device).await;
    for deleted in [false, true] {
        if deleted {
            sns.delete_endpoint()
                .endpoint_arn(&device)
                .send()
                .await
                .unwrap();
        }
        publish_text(&sns, &arn, "after").await;
        assert!(inbox(&t, "protocol=application").await.is_empty());
        assert!(
            !inbox(&t, "protocol=sms").await.is_empty(),
            "the rest still are"
        );
        t.admin(Method::DELETE, "/_retsu/inbox", None).await;
    }
}

#[tokio::test]
async fn publish_to_a_phone_number_or_a_platform_endpoint_is_recorded() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let sender = MessageAttributeValue::builder()
        .data_type("String")
        .string_value("Retsu")
        .build()
        .unwrap();
    let id = sns
        .publish()
        .phone_number("+447700900123")
        .message("your code is 1234")
        .message_attributes("AWS.SNS.SMS.SenderID", sender)
        .message_attributes("AWS.SNS.SMS.SMSType", string_attribute("Transactional"))
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();
    let (_, body) = get_json(&t, "/_aws/sns/sms-messages?phoneNumber=%2B447700900123").await;
    let sent = &body["sms_messages"]["+447700900123"];
    assert_eq!(sent.as_array().unwrap().len(), 1, "{body}");
    assert_eq!(sent[0]["Message"], "your code is 1234");
    assert_eq!(sent[0]["MessageId"], id.as_str());
    assert_eq!(
        sent[0]["MessageAttributes"]["AWS.SNS.SMS.SenderID"]["StringValue"],
        "Retsu"
    );
    assert!(sent[0].get("TopicArn").is_none());
    // Another account's or region's inbox is apart.
    let (_, body) = get_json(&t, "/_aws/sns/sms-messages?accountId=111122223333").await;
    assert_eq!(body["sms_messages"], serde_json::json!({}));

    let err = sns
        .publish()
        .phone_number("call me")
        .message("x")
        .send()
        .await
        .unwrap_err();
    assert!(message(err.into_service_error())
        .contains("Invalid parameter: PhoneNumber Reason: call me is not valid to publish to"),);

    let (_, device) = application_endpoint(&sns, "device-token-3").await;
    sns.publish()
        .target_arn(&device)
        .message(r#"{"default":"d","GCM":"{\"data\":{\"k\":1}}"}"#)
        .message_structure("json")
        .send()
        .await
        .unwrap();
    let pushed = inbox(&t, "protocol=application").await;
    assert_eq!(pushed.len(), 1);
    assert_eq!(pushed[0]["payload"], r#"{"data":{"k":1}}"#);
    assert_eq!(pushed[0]["endpoint"], device.as_str());

    disable(&sns, &device).await;
    let err = sns
        .publish()
        .target_arn(&device)
        .message("x")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(err.is_endpoint_disabled_exception(), "{err:?}");
    let gone = format!("{device}0");
    let err = sns
        .publish()
        .target_arn(&gone)
        .message("x")
        .send()
        .await
        .unwrap_err();
    assert!(message(err.into_service_error()).contains("No endpoint found for the target arn"));
    assert_eq!(inbox(&t, "protocol=application").await.len(), 1);
}

#[tokio::test]
async fn platform_applications_and_endpoints_are_served() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let (app, endpoint) = application_endpoint(&sns, "device-token-4").await;
    assert_eq!(
        app,
        format!("arn:aws:sns:{REGION}:{ACCOUNT}:app/GCM/phone-app")
    );
    assert!(endpoint.starts_with(&format!(
        "arn:aws:sns:{REGION}:{ACCOUNT}:endpoint/GCM/phone-app/"
    )));

    let attrs = sns
        .get_platform_application_attributes()
        .platform_application_arn(&app)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap();
    assert_eq!(attrs["Enabled"], "true");
    assert!(
        !attrs.contains_key("PlatformCredential"),
        "a secret is not shown"
    );
    sns.set_platform_application_attributes()
        .platform_application_arn(&app)
        .attributes("SuccessFeedbackSampleRate", "50")
        .send()
        .await
        .unwrap();
    let apps = sns.list_platform_applications().send().await.unwrap();
    let apps = apps.platform_applications.unwrap();
    assert_eq!(apps.len(), 1);
    assert_eq!(
        apps[0].attributes.as_ref().unwrap()["SuccessFeedbackSampleRate"],
        "50"
    );

    // The same token again is the same endpoint; with other data, refused.
    let again = sns
        .create_platform_endpoint()
        .platform_application_arn(&app)
        .token("device-token-4")
        .send()
        .await
        .unwrap()
        .endpoint_arn
        .unwrap();
    assert_eq!(again, endpoint);
    let err = sns
        .create_platform_endpoint()
        .platform_application_arn(&app)
        .token("device-token-4")
        .custom_user_data("other")
        .send()
        .await
        .unwrap_err();
    assert!(message(err.into_service_error())
        .contains("already exists with the same Token, but different attributes"));

    sns.set_endpoint_attributes()
        .endpoint_arn(&endpoint)
        .attributes("CustomUserData", "user-7")
        .send()
        .await
        .unwrap();
    let attrs = sns
        .get_endpoint_attributes()
        .endpoint_arn(&endpoint)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap();
    assert_eq!(attrs["Token"], "device-token-4");
    assert_eq!(attrs["Enabled"], "true");
    assert_eq!(attrs["CustomUserData"], "user-7");
    let listed = sns
        .list_endpoints_by_platform_application()
        .platform_application_arn(&app)
        .send()
        .await
        .unwrap()
        .endpoints
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].endpoint_arn(), Some(endpoint.as_str()));

    sns.delete_endpoint()
        .endpoint_arn(&endpoint)
        .send()
        .await
        .unwrap();
    sns.delete_endpoint()
        .endpoint_arn(&endpoint)
        .send()
        .await
        .unwrap();
    let err = sns
        .get_endpoint_attributes()
        .endpoint_arn(&endpoint)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(err.is_not_found_exception(), "{err:?}");

    let err = sns
        .create_platform_application()
        .name("bad name")
        .platform("GCM")
        .attributes("PlatformCredential", "k")
        .send()
        .await
        .unwrap_err();
    assert!(message(err.into_service_error()).contains("InvalidParameter"));
    let err = sns
        .create_platform_application()
        .name("app")
        .platform("PAGER")
        .attributes("PlatformCredential", "k")
        .send()
        .await
        .unwrap_err();
    assert!(message(err.into_service_error()).contains("Platform"));

    sns.delete_platform_application()
        .platform_application_arn(&app)
        .send()
        .await
        .unwrap();
    let err = sns
        .list_endpoints_by_platform_application()
        .platform_application_arn(&app)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(err.is_not_found_exception(), "{err:?}");
    let err = sns
        .get_platform_application_attributes()
        .platform_application_arn(&app)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(err.is_not_found_exception(), "{err:?}");
    let apps = sns.list_platform_applications().send().await.unwrap();
    assert!(apps.platform_applications.unwrap_or_default().is_empty());
}

/// `retsu` on its own data directory (a process, so it can be killed and
/// started again on the same directory).
fn start_on(dir: &std::path::Path) -> common::process::Running {
    common::process::Running::start_on_free_port(|port| {
        let mut command = common::process::retsu();
        command
            .arg("--data-dir")
            .arg(dir)
            .args(["--port", &port.to_string()]);
        command
    })
}

async fn http_json(url: &str) -> Value {
    let text = reqwest::get(url).await.unwrap().text().await.unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn subscriptions_endpoints_and_tokens_survive_a_restart() {
    let dir = std::env::temp_dir().join(format!(
        "retsu-sns-protocols-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let mut s = start_on(&dir);
    let sns = sns_client(&s.endpoint());
    let arn = topic(&sns, "kept").await;
    let (app, device) = application_endpoint(&sns, "device-token-5").await;
    let role = "arn:aws:iam::000000000000:role/sns-firehose";
    let lambda = "arn:aws:lambda:us-east-1:000000000000:function:handler";
    let stream = "arn:aws:firehose:us-east-1:000000000000:deliverystream/audit";
    let sms = subscribe(&sns, &arn, "sms", "+15550100", &[])
        .await
        .unwrap();
    let email = subscribe(&sns, &arn, "email", "ops@example.com", &[])
        .await
        .unwrap();
    subscribe(&sns, &arn, "application", &device, &[])
        .await
        .unwrap();
    subscribe(&sns, &arn, "lambda", lambda, &[]).await.unwrap();
    subscribe(
        &sns,
        &arn,
        "firehose",
        stream,
        &[("SubscriptionRoleArn", role)],
    )
    .await
    .unwrap();
    let token_url = |endpoint: &str| format!("{endpoint}/_aws/sns/subscription-tokens/{email}");
    let token = http_json(&token_url(&s.endpoint())).await["subscription_token"].clone();
    assert!(token.is_string());
    s.child.kill().unwrap();
    s.child.wait().unwrap();

    let s = start_on(&dir);
    let sns = sns_client(&s.endpoint());
    let listed = sns
        .list_subscriptions_by_topic()
        .topic_arn(&arn)
        .send()
        .await
        .unwrap()
        .subscriptions
        .unwrap();
    let mut protocols: Vec<&str> = listed.iter().filter_map(|s| s.protocol()).collect();
    protocols.sort();
    assert_eq!(
        protocols,
        ["application", "email", "firehose", "lambda", "sms"]
    );
    let attrs = sns
        .get_subscription_attributes()
        .subscription_arn(&email)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap();
    assert_eq!(attrs["PendingConfirmation"], "true");
    assert_eq!(
        http_json(&token_url(&s.endpoint())).await["subscription_token"],
        token,
        "the token survives, so the confirmation mail's link still works"
    );
    let endpoints = sns
        .list_endpoints_by_platform_application()
        .platform_application_arn(&app)
        .send()
        .await
        .unwrap()
        .endpoints
        .unwrap();
    assert_eq!(endpoints[0].endpoint_arn(), Some(device.as_str()));

    publish_text(&sns, &arn, "after").await;
    let texts = http_json(&format!("{}/_aws/sns/sms-messages", s.endpoint())).await;
    let sent = &texts["sms_messages"]["+15550100"][0];
    assert_eq!(sent["Message"], "after");
    assert_eq!(sent["SubscriptionArn"], sms.as_str());
    let pushes = http_json(&format!(
        "{}/_aws/sns/platform-endpoint-messages",
        s.endpoint()
    ))
    .await;
    assert_eq!(
        pushes["platform_endpoint_messages"][&device][0]["Message"],
        "after"
    );
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}
