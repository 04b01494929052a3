//! `--auth`: AWS Signature Version 4 verification, keys mapped to
//! accounts, cross-account access through queue policies.
//!
//! The SDK signs every request itself; the raw requests are signed with
//! the `aws-sigv4` crate, independently of Retsu's verifier. Signatures use
//! real wall-clock time (the manual clock only moves SQS time), so the
//! skew tests sign at real times in the past and future.

mod common;

use std::time::{Duration, SystemTime};

use aws_sdk_sqs::config::Credentials;
use aws_sdk_sqs::error::ProvideErrorMetadata;
use aws_sdk_sqs::operation::send_message::SendMessageError;
use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry, QueueAttributeName,
    SendMessageBatchRequestEntry,
};
use aws_sdk_sqs::Client;
use aws_sigv4::http_request::{
    sign, SignableBody, SignableRequest, SignatureLocation, SigningSettings,
};
use aws_sigv4::sign::v4;
use common::{
    create_queue_via, failure, receive_via, sdk_client_as, send_via, Failure, Raw, TestServer,
};
use retsu::auth::parse_auth_key;
use retsu::config::Config;

const KEY_A: (&str, &str) = ("AKIDALICE", "alice/secret+1");
const KEY_B: (&str, &str) = ("AKIDBOB", "bob-secret");
const ACCOUNT_A: &str = "111111111111";
const ACCOUNT_B: &str = "222222222222";
const AUTH_CODES: &[&str] = &[
    "MissingAuthenticationToken",
    "IncompleteSignature",
    "InvalidClientTokenId",
    "SignatureDoesNotMatch",
    "AccessDenied",
];

async fn server() -> TestServer {
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

fn client(t: &TestServer, key: (&str, &str), region: &str) -> Client {
    sdk_client_as(&t.endpoint, region, key)
}

/// A SendMessage by `sqs` that must fail with a service error.
async fn refused_send(sqs: &Client, url: &str) -> Failure<SendMessageError> {
    failure(
        sqs.send_message()
            .queue_url(url)
            .message_body("x")
            .send()
            .await,
    )
}

/// Signs a request with the `aws-sigv4` crate: the headers to add (header
/// form), or the query parameters to append (presigned, `expires`).
// Every argument is one part of a SigV4 signature; a struct would only
// rename them.
#[allow(clippy::too_many_arguments)]
fn sign_with(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    key: (&str, &str),
    region: &str,
    time: SystemTime,
    presign: Option<Duration>,
) -> Vec<(String, String)> {
    let identity = Credentials::new(key.0, key.1, None, None, "test").into();
    let mut settings = SigningSettings::default();
    if let Some(expires) = presign {
        settings.signature_location = SignatureLocation::QueryParams;
        settings.expires_in = Some(expires);
    }
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name("sqs")
        .time(time)
        .settings(settings)
        .build()
        .unwrap()
        .into();
    let request = SignableRequest::new(
        method,
        url,
        headers.iter().copied(),
        SignableBody::Bytes(body),
    )
    .unwrap();
    let (instructions, _) = sign(request, &params).unwrap().into_parts();
    if presign.is_some() {
        instructions
            .params()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    } else {
        instructions
            .headers()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}

fn host(t: &TestServer) -> String {
    t.endpoint.trim_start_matches("http://").to_string()
}

/// A query-protocol POST signed (Authorization header) at `time`.
async fn signed_form(
    t: &TestServer,
    path: &str,
    body: &str,
    key: (&str, &str),
    time: SystemTime,
) -> Raw {
    signed_form_tampered(t, path, body, body, key, time).await
}

/// Signs `signed_body`, sends `sent_body`.
async fn signed_form_tampered(
    t: &TestServer,
    path: &str,
    signed_body: &str,
    sent_body: &str,
    key: (&str, &str),
    time: SystemTime,
) -> Raw {
    let url = format!("{}{path}", t.endpoint);
    let host = host(t);
    let base = [
        ("host", host.as_str()),
        ("content-type", "application/x-www-form-urlencoded"),
    ];
    let added = sign_with(
        "POST",
        &url,
        &base,
        signed_body.as_bytes(),
        key,
        "us-east-1",
        time,
        None,
    );
    let mut req = t
        .http
        .post(&url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(sent_body.to_string());
    for (k, v) in added {
        req = req.header(k, v);
    }
    t.raw(req).await
}

/// A presigned GET URL (query protocol) made at `time`, valid `expires`.
fn presigned_url(t: &TestServer, path_and_query: &str, time: SystemTime, expires: u64) -> String {
    let url = format!("{}{path_and_query}", t.endpoint);
    let host = host(t);
    let params = sign_with(
        "GET",
        &url,
        &[("host", host.as_str())],
        b"",
        KEY_A,
        "us-east-1",
        time,
        Some(Duration::from_secs(expires)),
    );
    let mut url = url;
    for (k, v) in params {
        let v: String = form_urlencoded::byte_serialize(v.as_bytes()).collect();
        url.push_str(&format!("&{k}={v}"));
    }
    url
}

fn xml_code(raw: &Raw) -> String {
    let start = raw.body.find("<Code>").expect("an XML error") + "<Code>".len();
    let end = raw.body[start..].find("</Code>").unwrap() + start;
    raw.body[start..end].to_string()
}

/// A query-protocol refusal: 403 with the XML error `code`.
fn assert_refused(raw: &Raw, code: &str) {
    assert_eq!((raw.status, xml_code(raw).as_str()), (403, code), "{raw:?}");
}

fn minutes(m: u64) -> Duration {
    Duration::from_secs(m * 60)
}

#[tokio::test]
async fn the_sdk_with_a_right_key_works_on_every_action() {
    let t = server().await;
    let sqs = client(&t, KEY_A, "us-east-1");
    let dlq = create_queue_via(&sqs, "dlq", &[]).await;
    // The caller's account is its key's.
    assert!(dlq.ends_with(&format!("/{ACCOUNT_A}/dlq")), "{dlq}");
    let dlq_arn = format!("arn:aws:sqs:us-east-1:{ACCOUNT_A}:dlq");
    let url = create_queue_via(&sqs, "jobs", &[]).await;
    let got = sqs.get_queue_url().queue_name("jobs").send().await.unwrap();
    assert_eq!(got.queue_url(), Some(url.as_str()));
    let listed = sqs.list_queues().send().await.unwrap();
    assert_eq!(listed.queue_urls().len(), 2);
    let policy = format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":"5"}}"#);
    sqs.set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::RedrivePolicy, policy)
        .send()
        .await
        .unwrap();
    sqs.get_queue_attributes()
        .queue_url(&url)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .unwrap();
    sqs.tag_queue()
        .queue_url(&url)
        .tags("team", "a")
        .send()
        .await
        .unwrap();
    let tags = sqs.list_queue_tags().queue_url(&url).send().await.unwrap();
    assert_eq!(tags.tags().unwrap()["team"], "a");
    sqs.untag_queue()
        .queue_url(&url)
        .tag_keys("team")
        .send()
        .await
        .unwrap();
    sqs.add_permission()
        .queue_url(&url)
        .label("l")
        .aws_account_ids(ACCOUNT_B)
        .actions("SendMessage")
        .send()
        .await
        .unwrap();
    sqs.remove_permission()
        .queue_url(&url)
        .label("l")
        .send()
        .await
        .unwrap();
    // Bodies with characters that URL encoding treats specially.
    send_via(&sqs, &url, "a+b c/d=e&f~g%h é").await;
    sqs.send_message_batch()
        .queue_url(&url)
        .entries(
            SendMessageBatchRequestEntry::builder()
                .id("1")
                .message_body("x")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let messages = receive_via(&sqs, &url).await;
    assert_eq!(messages.len(), 2);
    assert!(messages
        .iter()
        .any(|m| m.body() == Some("a+b c/d=e&f~g%h é")));
    let h0 = messages[0].receipt_handle().unwrap();
    let h1 = messages[1].receipt_handle().unwrap();
    sqs.change_message_visibility()
        .queue_url(&url)
        .receipt_handle(h0)
        .visibility_timeout(10)
        .send()
        .await
        .unwrap();
    sqs.change_message_visibility_batch()
        .queue_url(&url)
        .entries(
            ChangeMessageVisibilityBatchRequestEntry::builder()
                .id("1")
                .receipt_handle(h1)
                .visibility_timeout(10)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    sqs.delete_message()
        .queue_url(&url)
        .receipt_handle(h0)
        .send()
        .await
        .unwrap();
    sqs.delete_message_batch()
        .queue_url(&url)
        .entries(
            DeleteMessageBatchRequestEntry::builder()
                .id("1")
                .receipt_handle(h1)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let sources = sqs
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .send()
        .await
        .unwrap();
    assert_eq!(sources.queue_urls().to_vec(), vec![url.clone()]);
    send_via(&sqs, &dlq, "dead").await;
    let task = sqs
        .start_message_move_task()
        .source_arn(&dlq_arn)
        .max_number_of_messages_per_second(1)
        .send()
        .await
        .unwrap();
    let tasks = sqs
        .list_message_move_tasks()
        .source_arn(&dlq_arn)
        .send()
        .await
        .unwrap();
    assert_eq!(tasks.results().len(), 1);
    // The task may already have finished: any answer but an auth error.
    if let Err(e) = sqs
        .cancel_message_move_task()
        .task_handle(task.task_handle().unwrap())
        .send()
        .await
    {
        let code = e.code().unwrap_or_default().to_string();
        assert!(!AUTH_CODES.contains(&code.as_str()), "{e:?}");
    }
    sqs.purge_queue().queue_url(&url).send().await.unwrap();
    sqs.delete_queue().queue_url(&url).send().await.unwrap();
    sqs.delete_queue().queue_url(&dlq).send().await.unwrap();
    t.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn wrong_secret_unknown_key_and_no_signature() {
    let t = server().await;
    let wrong = client(&t, (KEY_A.0, "not-the-secret"), "us-east-1");
    let f = failure(wrong.list_queues().send().await);
    assert_eq!(f.err.code(), Some("SignatureDoesNotMatch"));
    assert_eq!(f.status, 403);
    let unknown = client(&t, ("AKIDNOBODY", KEY_A.1), "us-east-1");
    let f = failure(unknown.list_queues().send().await);
    assert_eq!(f.err.code(), Some("InvalidClientTokenId"));
    assert_eq!(
        f.err.message(),
        Some("The security token included in the request is invalid.")
    );
    assert_eq!(f.status, 403);

    // Nothing is reachable unsigned, in either protocol.
    let json = t.json_post("ListQueues", "{}").await;
    assert_eq!(json.status, 403);
    assert_eq!(
        json.headers["x-amzn-query-error"],
        "MissingAuthenticationToken;Sender"
    );
    assert!(
        json.body
            .contains("Request is missing Authentication Token"),
        "{}",
        json.body
    );
    let query = t.form_post("/", &[("Action", "ListQueues")]).await;
    assert_refused(&query, "MissingAuthenticationToken");
    let get = t.get("/", &[("Action", "ListQueues")]).await;
    assert_eq!(get.status, 403);
    // Not SQS requests: the health check, and the admin API (its own token).
    let health = t.raw(t.http.get(format!("{}/health", t.endpoint))).await;
    assert_eq!(health.status, 200);
    let admin = t
        .raw(t.http.get(format!("{}/_retsu/queues", t.endpoint)))
        .await;
    assert_eq!(admin.status, 200, "{}", admin.body);
    t.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn query_protocol_raw_signed_requests() {
    let t = server().await;
    let now = SystemTime::now();
    let ok = signed_form(
        &t,
        "/",
        "Action=CreateQueue&QueueName=q&Version=2012-11-05",
        KEY_A,
        now,
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert!(
        ok.body.contains(&format!("/{ACCOUNT_A}/q</QueueUrl>")),
        "{}",
        ok.body
    );
    // On the queue's own path, as older SDKs send.
    let path = format!("/{ACCOUNT_A}/q");
    let sent = signed_form(
        &t,
        &path,
        "Action=SendMessage&MessageBody=hi%20there",
        KEY_A,
        now,
    )
    .await;
    assert_eq!(sent.status, 200, "{}", sent.body);

    let wrong = signed_form(&t, "/", "Action=ListQueues", (KEY_A.0, "nope"), now).await;
    assert_refused(&wrong, "SignatureDoesNotMatch");
    assert!(wrong.body.contains("<Type>Sender</Type>"), "{}", wrong.body);

    // A body changed after signing.
    let tampered = signed_form_tampered(
        &t,
        &path,
        "Action=SendMessage&MessageBody=pay%2010",
        "Action=SendMessage&MessageBody=pay%2099",
        KEY_A,
        now,
    )
    .await;
    assert_refused(&tampered, "SignatureDoesNotMatch");
    t.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_fifteen_minute_skew_window() {
    let t = server().await;
    let now = SystemTime::now();
    let body = "Action=ListQueues";
    let inside = signed_form(&t, "/", body, KEY_A, now - minutes(14)).await;
    assert_eq!(inside.status, 200, "{}", inside.body);
    let ahead = signed_form(&t, "/", body, KEY_A, now + minutes(14)).await;
    assert_eq!(ahead.status, 200, "{}", ahead.body);

    let old = signed_form(&t, "/", body, KEY_A, now - minutes(16)).await;
    assert_refused(&old, "SignatureDoesNotMatch");
    assert!(old.body.contains("Signature expired: "), "{}", old.body);
    assert!(old.body.contains(" is now earlier than "), "{}", old.body);
    assert!(old.body.contains(" - 15 min.)"), "{}", old.body);
    let future = signed_form(&t, "/", body, KEY_A, now + minutes(16)).await;
    assert_eq!(future.status, 403);
    assert!(
        future.body.contains("Signature not yet current: "),
        "{}",
        future.body
    );
    t.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn presigned_get_urls() {
    let t = server().await;
    let sqs = client(&t, KEY_A, "us-east-1");
    let url = create_queue_via(&sqs, "p", &[]).await;
    send_via(&sqs, &url, "m").await;
    let path = format!("/{ACCOUNT_A}/p?Action=GetQueueAttributes&AttributeName.1=ApproximateNumberOfMessages&Version=2012-11-05");

    let fresh = presigned_url(&t, &path, SystemTime::now(), 300);
    assert!(fresh.contains("X-Amz-Signature="), "{fresh}");
    let ok = t.raw(t.http.get(&fresh)).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert!(ok.body.contains("<Value>1</Value>"), "{}", ok.body);

    // Changing a signed parameter breaks it.
    let altered = fresh.replace("ApproximateNumberOfMessages", "All");
    let bad = t.raw(t.http.get(&altered)).await;
    assert_refused(&bad, "SignatureDoesNotMatch");

    // Made two minutes ago, valid for one: expired.
    let stale = presigned_url(&t, &path, SystemTime::now() - minutes(2), 60);
    let expired = t.raw(t.http.get(&stale)).await;
    assert_refused(&expired, "SignatureDoesNotMatch");
    assert!(
        expired.body.contains("Signature expired: "),
        "{}",
        expired.body
    );
    t.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn other_accounts_queues_need_a_policy_grant() {
    let t = server().await;
    let alice = client(&t, KEY_A, "us-east-1");
    let bob = client(&t, KEY_B, "us-east-1");
    let url = create_queue_via(&alice, "shared", &[]).await;
    assert!(url.contains(ACCOUNT_A));

    // Each account sees its own queues.
    let mine = create_queue_via(&bob, "shared", &[]).await;
    assert!(mine.contains(ACCOUNT_B), "{mine}");
    assert_eq!(
        bob.list_queues()
            .send()
            .await
            .unwrap()
            .queue_urls()
            .to_vec(),
        vec![mine.clone()]
    );

    let f = refused_send(&bob, &url).await;
    assert_eq!(f.err.code(), Some("AccessDenied"));
    assert_eq!(f.status, 403);
    assert_eq!(
        f.err.message(),
        Some(format!("Access to the resource {url} is denied.").as_str())
    );
    let f = failure(
        bob.get_queue_url()
            .queue_name("shared")
            .queue_owner_aws_account_id(ACCOUNT_A)
            .send()
            .await,
    );
    assert_eq!(f.err.code(), Some("AccessDenied"));

    alice
        .add_permission()
        .queue_url(&url)
        .label("bob-sends")
        .aws_account_ids(ACCOUNT_B)
        .actions("SendMessage")
        .actions("GetQueueUrl")
        .send()
        .await
        .unwrap();
    send_via(&bob, &url, "from bob").await;
    // A batch goes with its single-message action.
    bob.send_message_batch()
        .queue_url(&url)
        .entries(
            SendMessageBatchRequestEntry::builder()
                .id("1")
                .message_body("b")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let found = bob
        .get_queue_url()
        .queue_name("shared")
        .queue_owner_aws_account_id(ACCOUNT_A)
        .send()
        .await
        .unwrap();
    assert_eq!(found.queue_url(), Some(url.as_str()));
    // Not granted: receiving; never grantable: owner-only actions.
    let f = failure(bob.receive_message().queue_url(&url).send().await);
    assert_eq!(f.err.code(), Some("AccessDenied"));
    let f = failure(bob.delete_queue().queue_url(&url).send().await);
    assert_eq!(f.err.code(), Some("AccessDenied"));
    assert_eq!(receive_via(&alice, &url).await.len(), 2);

    alice
        .remove_permission()
        .queue_url(&url)
        .label("bob-sends")
        .send()
        .await
        .unwrap();
    let f = refused_send(&bob, &url).await;
    assert_eq!(f.err.code(), Some("AccessDenied"));
    t.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_queue_url_of_another_region_than_the_signature() {
    let t = server().await;
    let eu = client(&t, KEY_A, "eu-west-1");
    let us = client(&t, KEY_A, "us-east-1");
    let url = create_queue_via(&eu, "r", &[]).await;
    assert!(url.contains("/queue/eu-west-1/"), "{url}");
    send_via(&eu, &url, "ok").await;
    let f = refused_send(&us, &url).await;
    assert_eq!(f.err.code(), Some("SignatureDoesNotMatch"));
    assert_eq!(
        f.err.message(),
        Some("Credential should be scoped to a valid region, not 'us-east-1'. ")
    );
    t.server.shutdown().await.unwrap();

    // Without --auth the URL's region is used, as before.
    let open = TestServer::start().await;
    let eu = open.new_client("eu-west-1");
    let url = create_queue_via(&eu, "r", &[]).await;
    send_via(&open.client, &url, "x").await;
    open.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn auth_without_a_key_does_not_start() {
    let result = retsu::server::start(
        Config {
            auth: true,
            ..Config::ephemeral()
        },
        std::sync::Arc::new(retsu::clock::SystemClock),
    )
    .await;
    let err = result.err().expect("refused");
    assert!(err.to_string().contains("--auth-key"), "{err}");
}
