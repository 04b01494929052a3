//! The embedding API (src/embed.rs): a server started in-process on a
//! random port, its endpoint, its clock (freeze / advance / resume) and
//! shutdown, driven with the real aws-sdk-sqs.

mod common;

use std::time::Duration;

use aws_sdk_sqs::types::QueueAttributeName;
use aws_sdk_sqs::Client;
use common::{create_queue_via, sdk_client, send_via};
use retsu::clock::Clock;
use retsu::embed::{EmbeddedClock, EmbeddedServer};

fn client(server: &EmbeddedServer) -> Client {
    sdk_client(server.endpoint_url(), server.region())
}

/// How many messages one plain ReceiveMessage (one at most, no wait)
/// gets.
async fn visible(sqs: &Client, url: &str) -> usize {
    sqs.receive_message()
        .queue_url(url)
        .send()
        .await
        .unwrap()
        .messages()
        .len()
}

#[tokio::test]
async fn two_servers_get_their_own_random_ports_and_queue_urls() {
    let a = EmbeddedServer::start().await.unwrap();
    let b = EmbeddedServer::builder()
        .region("eu-west-1")
        .account_id("123456789012")
        .start()
        .await
        .unwrap();
    assert_ne!(a.local_addr().port(), b.local_addr().port());
    assert!(a.local_addr().ip().is_loopback());
    assert_eq!(a.endpoint_url(), format!("http://{}", a.local_addr()));
    let url = create_queue_via(&client(&b), "q", &[]).await;
    assert_eq!(url, b.queue_url("q"));
    assert!(url.ends_with("/123456789012/q"), "{url}");
    let arn = client(&b)
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap()[&QueueAttributeName::QueueArn]
        .clone();
    assert_eq!(arn, "arn:aws:sqs:eu-west-1:123456789012:q");
    // The queue lives only in b.
    assert!(client(&a)
        .get_queue_url()
        .queue_name("q")
        .send()
        .await
        .is_err());
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_frozen_clock_moves_only_when_advanced() {
    let server = EmbeddedServer::builder()
        .frozen()
        .start_at_ms(1_700_000_000_000)
        .start()
        .await
        .unwrap();
    let sqs = client(&server);
    let url = create_queue_via(&sqs, "vis", &[("VisibilityTimeout", "30")]).await;
    send_via(&sqs, &url, "m").await;
    let sent_at = server.clock().now_ms();
    assert_eq!(sent_at, 1_700_000_000_000);
    assert_eq!(visible(&sqs, &url).await, 1);
    tokio::time::sleep(Duration::from_millis(50)).await; // real time passes, server time does not
    assert_eq!(server.clock().now_ms(), sent_at);
    server.clock().advance(Duration::from_secs(29));
    assert_eq!(visible(&sqs, &url).await, 0);
    server.clock().advance(Duration::from_secs(1));
    assert_eq!(visible(&sqs, &url).await, 1);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn advancing_a_frozen_clock_answers_a_waiting_long_poll() {
    let server = EmbeddedServer::builder().frozen().start().await.unwrap();
    let sqs = client(&server);
    let url = create_queue_via(&sqs, "lp", &[]).await;
    let poll = tokio::spawn({
        let sqs = sqs.clone();
        let url = url.clone();
        async move {
            sqs.receive_message()
                .queue_url(&url)
                .wait_time_seconds(20)
                .send()
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!poll.is_finished(), "a 20 s poll on a frozen clock waits");
    server.clock().advance(Duration::from_secs(20));
    let out = tokio::time::timeout(Duration::from_secs(5), poll)
        .await
        .expect("the poll answered once the clock passed its wait time")
        .unwrap()
        .unwrap();
    assert!(out.messages().is_empty());
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn advancing_a_running_clock_brings_delayed_messages_early() {
    let server = EmbeddedServer::start().await.unwrap();
    assert!(!server.clock().is_frozen());
    let sqs = client(&server);
    let url = create_queue_via(&sqs, "d", &[]).await;
    sqs.send_message()
        .queue_url(&url)
        .message_body("later")
        .delay_seconds(600)
        .send()
        .await
        .unwrap();
    assert_eq!(visible(&sqs, &url).await, 0);
    server.clock().advance(Duration::from_secs(600));
    let got = sqs.receive_message().queue_url(&url).send().await.unwrap();
    assert_eq!(got.messages()[0].body(), Some("later"));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn freeze_and_resume_keep_time_continuous() {
    let clock = EmbeddedClock::running();
    clock.advance(Duration::from_secs(3600));
    let before = clock.now_ms();
    clock.freeze();
    let frozen = clock.now_ms();
    assert!(frozen >= before && frozen - before < 1_000);
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(clock.now_ms(), frozen, "frozen");
    clock.advance(Duration::from_millis(250));
    assert_eq!(clock.now_ms(), frozen + 250);
    clock.resume();
    let resumed = clock.now_ms();
    assert!(
        resumed >= frozen + 250 && resumed - (frozen + 250) < 1_000,
        "{resumed} vs {frozen}"
    );
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert!(clock.now_ms() > resumed, "running again");
}

#[tokio::test]
async fn a_sleeper_on_a_frozen_clock_wakes_on_resume() {
    let clock = EmbeddedClock::frozen_at(10_000);
    let sleeper = tokio::spawn({
        let clock = clock.clone();
        async move { clock.sleep_until(10_050).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !sleeper.is_finished(),
        "frozen: the deadline is never reached"
    );
    clock.resume();
    tokio::time::timeout(Duration::from_secs(5), sleeper)
        .await
        .expect("woke ~50 ms after resuming")
        .unwrap();
}

#[tokio::test]
async fn shutdown_closes_the_port() {
    let server = EmbeddedServer::start().await.unwrap();
    let addr = server.local_addr();
    server.shutdown().await.unwrap();
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}
