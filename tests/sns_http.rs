//! SNS delivering to HTTP endpoints: a local endpoint records every POST
//! and answers with the status the test sets; the SDK subscribes,
//! publishes and unsubscribes. Retries wait on the manual clock, so the
//! tests move it rather than sleep; the only real waiting is for a POST
//! to arrive (bounded, so a missing one fails instead of hanging).

mod common;

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use common::*;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// One request the endpoint received.
#[derive(Debug)]
struct Post {
    method: String,
    path: String,
    headers: HeaderMap,
    body: String,
}

impl Post {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

/// The subscriber: records each request, answers with `status`.
struct Hook {
    url: String,
    status: Arc<AtomicU16>,
    posts: mpsc::UnboundedReceiver<Post>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Hook {
    async fn start() -> Hook {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let status = Arc::new(AtomicU16::new(200));
        let (tx, posts) = mpsc::unbounded_channel();
        let answer = status.clone();
        let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let (tx, answer) = (tx.clone(), answer.clone());
            async move {
                let (parts, body) = request.into_parts();
                let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
                let _ = tx.send(Post {
                    method: parts.method.to_string(),
                    path: parts.uri.path().to_string(),
                    headers: parts.headers,
                    body: String::from_utf8(body.to_vec()).unwrap(),
                });
                StatusCode::from_u16(answer.load(Ordering::SeqCst)).unwrap()
            }
        });
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        Hook {
            url,
            status,
            posts,
            server,
        }
    }

    /// Closes the listener: connections are refused from now on.
    async fn stop(&self) {
        self.server.abort();
        while TcpStream::connect(self.url["http://".len()..].trim_end_matches("/hook"))
            .await
            .is_ok()
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn answer(&self, status: u16) {
        self.status.store(status, Ordering::SeqCst);
    }

    /// The next POST, within 5 s of real time.
    async fn next(&mut self) -> Post {
        tokio::time::timeout(Duration::from_secs(5), self.posts.recv())
            .await
            .expect("no POST arrived within 5 s")
            .expect("the endpoint stopped")
    }

    /// Nothing arrives for a moment (a retry that must wait for the clock).
    async fn quiet(&mut self) {
        let got = tokio::time::timeout(Duration::from_millis(300), self.posts.recv()).await;
        assert!(got.is_err(), "unexpected POST: {got:?}");
    }
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

/// The topic's subscriptions' ARNs (`PendingConfirmation` until confirmed).
async fn listed(sns: &aws_sdk_sns::Client, topic_arn: &str) -> Vec<String> {
    sns.list_subscriptions_by_topic()
        .topic_arn(topic_arn)
        .send()
        .await
        .unwrap()
        .subscriptions()
        .iter()
        .map(|s| s.subscription_arn().unwrap().to_string())
        .collect()
}

/// Subscribes the hook, confirms through the SubscriptionConfirmation's
/// SubscribeURL, and returns the subscription's ARN.
async fn subscribe_confirmed(
    t: &TestServer,
    sns: &aws_sdk_sns::Client,
    hook: &mut Hook,
    topic_arn: &str,
    attributes: &[(&str, &str)],
) -> String {
    let mut req = sns
        .subscribe()
        .topic_arn(topic_arn)
        .protocol("http")
        .endpoint(&hook.url);
    for (k, v) in attributes {
        req = req.attributes(*k, *v);
    }
    req.send().await.unwrap();
    let confirmation = hook.next().await.json();
    let url = confirmation["SubscribeURL"].as_str().unwrap();
    let got = t.http.get(url).send().await.unwrap();
    assert_eq!(got.status(), 200, "{}", got.text().await.unwrap());
    listed(sns, topic_arn).await.remove(0)
}

/// Receives from `queue`, waiting up to 5 s of real time for a message
/// delivered in the background.
async fn receive_soon(t: &TestServer, queue: &str) -> aws_sdk_sqs::types::Message {
    for _ in 0..100 {
        let mut got = t.receive(queue, 10).await;
        if !got.is_empty() {
            assert_eq!(got.len(), 1, "{got:?}");
            return got.remove(0);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing reached {queue}");
}

#[tokio::test]
async fn subscribing_an_endpoint_posts_a_confirmation_its_subscribe_url_confirms() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let mut hook = Hook::start().await;
    let arn = topic(&sns, "hooked").await;

    let out = sns
        .subscribe()
        .topic_arn(&arn)
        .protocol("http")
        .endpoint(&hook.url)
        .send()
        .await
        .unwrap();
    assert_eq!(out.subscription_arn(), Some("pending confirmation"));
    assert_eq!(listed(&sns, &arn).await, ["PendingConfirmation"]);

    let post = hook.next().await;
    assert_eq!(
        (post.method.as_str(), post.path.as_str()),
        ("POST", "/hook")
    );
    assert_eq!(
        post.header("x-amz-sns-message-type"),
        Some("SubscriptionConfirmation")
    );
    assert_eq!(post.header("x-amz-sns-topic-arn"), Some(arn.as_str()));
    assert_eq!(post.header("x-amz-sns-subscription-arn"), None);
    assert_eq!(
        post.header("content-type"),
        Some("text/plain; charset=UTF-8")
    );
    assert_eq!(
        post.header("user-agent"),
        Some("Amazon Simple Notification Service Agent")
    );
    let body = post.json();
    assert_eq!(body["Type"], "SubscriptionConfirmation");
    assert_eq!(
        post.header("x-amz-sns-message-id"),
        body["MessageId"].as_str()
    );
    assert_eq!(body["TopicArn"], arn.as_str());
    assert_eq!(
        body["Message"],
        format!(
            "You have chosen to subscribe to the topic {arn}.\nTo confirm the subscription, visit the SubscribeURL included in this message."
        )
    );
    let token = body["Token"].as_str().unwrap();
    let url = body["SubscribeURL"].as_str().unwrap();
    assert!(url.ends_with(&format!("&Token={token}")), "{url}");

    // A subscriber follows the link as is: unsigned.
    let got = t.http.get(url).send().await.unwrap();
    assert_eq!(got.status(), 200);
    let subs = listed(&sns, &arn).await;
    assert_eq!(subs.len(), 1);
    assert!(subs[0].starts_with(&format!("{arn}:")), "{subs:?}");
    assert!(
        got.text().await.unwrap().contains(&subs[0]),
        "the confirmation answers with the ARN"
    );
}

#[tokio::test]
async fn a_publish_posts_a_notification_enveloped_or_raw() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let mut hook = Hook::start().await;
    let arn = topic(&sns, "news").await;
    let sub = subscribe_confirmed(&t, &sns, &mut hook, &arn, &[]).await;

    let id = sns
        .publish()
        .topic_arn(&arn)
        .subject("Hello")
        .message("first edition")
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();
    let post = hook.next().await;
    assert_eq!(post.method, "POST");
    assert_eq!(post.header("x-amz-sns-message-type"), Some("Notification"));
    assert_eq!(post.header("x-amz-sns-message-id"), Some(id.as_str()));
    assert_eq!(post.header("x-amz-sns-topic-arn"), Some(arn.as_str()));
    assert_eq!(
        post.header("x-amz-sns-subscription-arn"),
        Some(sub.as_str())
    );
    assert_eq!(post.header("x-amz-sns-rawdelivery"), None);
    assert_eq!(
        post.header("content-type"),
        Some("text/plain; charset=UTF-8")
    );
    assert_eq!(
        post.header("user-agent"),
        Some("Amazon Simple Notification Service Agent")
    );
    let envelope = post.json();
    assert_eq!(envelope["Type"], "Notification");
    assert_eq!(envelope["MessageId"], id.as_str());
    assert_eq!(envelope["Subject"], "Hello");
    assert_eq!(envelope["Message"], "first edition");

    sns.set_subscription_attributes()
        .subscription_arn(&sub)
        .attribute_name("RawMessageDelivery")
        .attribute_value("true")
        .send()
        .await
        .unwrap();
    let id = sns
        .publish()
        .topic_arn(&arn)
        .message("second edition")
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();
    let post = hook.next().await;
    assert_eq!(post.body, "second edition");
    assert_eq!(post.header("x-amz-sns-rawdelivery"), Some("true"));
    assert_eq!(post.header("x-amz-sns-message-id"), Some(id.as_str()));
    assert_eq!(
        post.header("x-amz-sns-subscription-arn"),
        Some(sub.as_str())
    );
    hook.quiet().await;
}

#[tokio::test]
async fn a_failing_endpoint_is_retried_on_the_clock_then_dead_lettered() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let mut hook = Hook::start().await;
    let dlq = t.create_queue("hook-dlq").await;
    let arn = topic(&sns, "flaky").await;
    let policy = format!(r#"{{"deadLetterTargetArn":"{}"}}"#, queue_arn("hook-dlq"));
    subscribe_confirmed(&t, &sns, &mut hook, &arn, &[("RedrivePolicy", &policy)]).await;

    hook.answer(500);
    let id = sns
        .publish()
        .topic_arn(&arn)
        .message("try again")
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();
    let first = hook.next().await;
    assert_eq!(first.header("x-amz-sns-message-id"), Some(id.as_str()));
    // The default policy: 3 retries, 20 s apart, on the engine's clock.
    for retry in 1..=3 {
        hook.quiet().await;
        t.advance_secs(20);
        let post = hook.next().await;
        assert_eq!(post.body, first.body, "retry {retry} resends the same POST");
    }
    let m = receive_soon(&t, &dlq).await;
    let envelope: serde_json::Value = serde_json::from_str(m.body().unwrap()).unwrap();
    assert_eq!(envelope["MessageId"], id.as_str());
    assert_eq!(envelope["Message"], "try again");
    t.advance_secs(600);
    hook.quiet().await;
}

#[tokio::test]
async fn a_refused_connection_is_a_failed_attempt() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let mut hook = Hook::start().await;
    let dlq = t.create_queue("gone-dlq").await;
    let arn = topic(&sns, "gone").await;
    let policy = format!(r#"{{"deadLetterTargetArn":"{}"}}"#, queue_arn("gone-dlq"));
    subscribe_confirmed(&t, &sns, &mut hook, &arn, &[("RedrivePolicy", &policy)]).await;
    hook.stop().await;

    sns.publish()
        .topic_arn(&arn)
        .message("nobody home")
        .send()
        .await
        .unwrap();
    // Nothing to watch arrive: step the clock through the retries, giving
    // each refused attempt a moment of real time to fail.
    for _ in 0..3 {
        settle().await;
        assert!(t.receive(&dlq, 10).await.is_empty(), "dead-lettered early");
        t.advance_secs(20);
    }
    let m = receive_soon(&t, &dlq).await;
    let envelope: serde_json::Value = serde_json::from_str(m.body().unwrap()).unwrap();
    assert_eq!(envelope["Message"], "nobody home");
}

#[tokio::test]
async fn a_client_error_answer_counts_as_delivered() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let mut hook = Hook::start().await;
    let dlq = t.create_queue("unused-dlq").await;
    let arn = topic(&sns, "picky").await;
    let policy = format!(r#"{{"deadLetterTargetArn":"{}"}}"#, queue_arn("unused-dlq"));
    subscribe_confirmed(&t, &sns, &mut hook, &arn, &[("RedrivePolicy", &policy)]).await;

    hook.answer(404);
    sns.publish()
        .topic_arn(&arn)
        .message("not found is an answer")
        .send()
        .await
        .unwrap();
    hook.next().await;
    t.advance_secs(600);
    hook.quiet().await;
    assert!(
        t.receive(&dlq, 10).await.is_empty(),
        "nothing dead-lettered"
    );
}

#[tokio::test]
async fn unsubscribing_posts_an_unsubscribe_confirmation_whose_url_restores() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let mut hook = Hook::start().await;
    let arn = topic(&sns, "leaving").await;
    let sub = subscribe_confirmed(&t, &sns, &mut hook, &arn, &[]).await;

    sns.unsubscribe()
        .subscription_arn(&sub)
        .send()
        .await
        .unwrap();
    let post = hook.next().await;
    assert_eq!(
        post.header("x-amz-sns-message-type"),
        Some("UnsubscribeConfirmation")
    );
    assert_eq!(
        post.header("x-amz-sns-subscription-arn"),
        Some(sub.as_str())
    );
    assert_eq!(post.header("x-amz-sns-topic-arn"), Some(arn.as_str()));
    let body = post.json();
    assert_eq!(body["Type"], "UnsubscribeConfirmation");
    assert_eq!(
        body["Message"],
        format!(
            "You have chosen to deactivate subscription {sub}.\nTo cancel this operation and restore the subscription, visit the SubscribeURL included in this message."
        )
    );
    assert!(listed(&sns, &arn).await.is_empty());

    let got = t
        .http
        .get(body["SubscribeURL"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), 200);
    assert_eq!(listed(&sns, &arn).await, [sub]);
}

/// Seeded faults reach HTTP deliveries under the server's scope: a
/// notification is POSTed twice, each the latency range late on the
/// engine's clock; the confirmation before them is not shaped.
#[tokio::test]
async fn seeded_faults_post_a_notification_twice_and_late() {
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let mut hook = Hook::start().await;
    let arn = topic(&sns, "flaky").await;
    subscribe_confirmed(&t, &sns, &mut hook, &arn, &[]).await;
    let faults = t
        .admin_post(
            "/_retsu/faults",
            serde_json::json!({"seed": 5, "duplicate": 1.0, "latency_ms": [2000, 2000]}),
        )
        .await;
    assert_eq!(faults["active"], true, "{faults}");

    let id = sns
        .publish()
        .topic_arn(&arn)
        .message("twice")
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();
    hook.quiet().await;
    t.advance_ms(2000);
    for _ in 0..2 {
        let post = hook.next().await;
        assert_eq!(post.header("x-amz-sns-message-id"), Some(id.as_str()));
        assert_eq!(post.json()["Message"], "twice");
    }
    hook.quiet().await;
}
