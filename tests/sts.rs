//! STS `GetCallerIdentity` on the same port, through the official
//! `aws-sdk-sts` client: the caller's account (the server's, or its key's
//! under `--auth`), STS's own error for every other STS action, and SQS
//! and SNS requests on the same server still routed to their services.

mod common;

use aws_sdk_sts::error::ProvideErrorMetadata;
use common::{TestServer, ACCOUNT, REGION};
use retsu::auth::parse_auth_key;
use retsu::config::Config;

const KEY_A: (&str, &str) = ("AKIDALICE", "alice-secret");
const KEY_B: (&str, &str) = ("AKIDBOB", "bob-secret");
const ACCOUNT_A: &str = "111111111111";
const ACCOUNT_B: &str = "222222222222";

fn sts(endpoint: &str, key: (&str, &str)) -> aws_sdk_sts::Client {
    common::aws_client!(aws_sdk_sts, endpoint, REGION, key)
}

fn sns_as(endpoint: &str, key: (&str, &str)) -> aws_sdk_sns::Client {
    common::aws_client!(aws_sdk_sns, endpoint, REGION, key)
}

async fn auth_server() -> TestServer {
    TestServer::start_with(Config {
        auth: true,
        auth_keys: vec![
            parse_auth_key(&format!("{}:{}:{ACCOUNT_A}", KEY_A.0, KEY_A.1)).unwrap(),
            parse_auth_key(&format!("{}:{}:{ACCOUNT_B}", KEY_B.0, KEY_B.1)).unwrap(),
        ],
        ..Config::ephemeral()
    })
    .await
}

#[tokio::test]
async fn caller_identity_is_the_server_account_without_auth() {
    let t = TestServer::start().await;
    let out = sts(&t.endpoint, ("test", "test"))
        .get_caller_identity()
        .send()
        .await
        .expect("GetCallerIdentity");
    assert_eq!(out.account(), Some(ACCOUNT));
    assert_eq!(
        out.arn(),
        Some(format!("arn:aws:iam::{ACCOUNT}:root").as_str())
    );
    assert_eq!(out.user_id(), Some(ACCOUNT));

    // The same port still serves SQS (JSON) and SNS (query) to the same caller.
    let url = t.create_queue("after-sts").await;
    assert!(url.ends_with("/after-sts"), "{url}");
    let topics = common::sns_client(&t.endpoint)
        .list_topics()
        .send()
        .await
        .expect("ListTopics");
    assert!(topics.topics().is_empty());
}

#[tokio::test]
async fn unsigned_query_post_gets_sts_xml() {
    let t = TestServer::start().await;
    for params in [
        &[("Action", "GetCallerIdentity"), ("Version", "2011-06-15")][..],
        &[("Action", "GetCallerIdentity")][..],
    ] {
        let raw = t.form_post("/", params).await;
        assert_eq!(raw.status, 200, "{}", raw.body);
        let xml = raw.compact_xml();
        assert!(
            xml.starts_with(
                "<GetCallerIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
            ),
            "{xml}"
        );
        assert!(
            xml.contains(&format!("<Account>{ACCOUNT}</Account>")),
            "{xml}"
        );
        assert!(
            xml.contains(&format!("<RequestId>{}</RequestId>", raw.request_id())),
            "{xml}"
        );
    }
}

#[tokio::test]
async fn other_sts_actions_get_sts_invalid_action() {
    let t = TestServer::start().await;
    let err = sts(&t.endpoint, ("test", "test"))
        .assume_role()
        .role_arn(format!("arn:aws:iam::{ACCOUNT}:role/r"))
        .role_session_name("s")
        .send()
        .await
        .expect_err("AssumeRole is not served");
    assert_eq!(err.code(), Some("InvalidAction"), "{err:?}");
    assert_eq!(
        err.message(),
        Some("Could not find operation AssumeRole for version 2011-06-15")
    );

    // Unsigned, by STS's version: STS's error document, not SQS's.
    let raw = t
        .form_post(
            "/",
            &[("Action", "GetSessionToken"), ("Version", "2011-06-15")],
        )
        .await;
    assert_eq!(raw.status, 400);
    let xml = raw.compact_xml();
    assert!(
        xml.starts_with("<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"),
        "{xml}"
    );
    assert!(xml.contains("<Code>InvalidAction</Code>"), "{xml}");
}

#[tokio::test]
async fn under_auth_each_key_is_its_account() {
    let t = auth_server().await;
    for (key, account) in [(KEY_A, ACCOUNT_A), (KEY_B, ACCOUNT_B)] {
        let out = sts(&t.endpoint, key)
            .get_caller_identity()
            .send()
            .await
            .expect("GetCallerIdentity");
        assert_eq!(out.account(), Some(account));
        assert_eq!(
            out.arn(),
            Some(format!("arn:aws:iam::{account}:root").as_str())
        );
    }
    // A key the server does not know, or a wrong secret, is refused.
    let err = sts(&t.endpoint, ("AKIDNOBODY", "x"))
        .get_caller_identity()
        .send()
        .await
        .expect_err("unknown key");
    assert_eq!(err.code(), Some("InvalidClientTokenId"), "{err:?}");
    let err = sts(&t.endpoint, (KEY_A.0, "wrong"))
        .get_caller_identity()
        .send()
        .await
        .expect_err("wrong secret");
    assert_eq!(err.code(), Some("SignatureDoesNotMatch"), "{err:?}");
}

#[tokio::test]
async fn under_auth_sns_signed_for_sns_acts_as_the_key_account() {
    // The scope names `sns`: verified with SNS's signing key, and the topic
    // is the key's account's.
    let t = auth_server().await;
    let arn = sns_as(&t.endpoint, KEY_B)
        .create_topic()
        .name("signed-topic")
        .send()
        .await
        .expect("CreateTopic signed for sns")
        .topic_arn()
        .unwrap()
        .to_string();
    assert_eq!(
        arn,
        format!("arn:aws:sns:{REGION}:{ACCOUNT_B}:signed-topic")
    );
}
