//! Queue URLs name their region: same-named queues in two
//! regions of one account get different URLs, and a URL acts on the queue
//! of the region it names, whoever sends it.

mod common;

use aws_sdk_sqs::types::QueueAttributeName;
use aws_sdk_sqs::Client;
use common::*;

/// A SigV4 Authorization header whose credential scope names `region`
/// (Retsu reads the region from it and checks nothing else).
fn signed_for(region: &str) -> String {
    format!(
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240101/{region}/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc"
    )
}

async fn arn_of(t: &TestServer, url: &str) -> String {
    t.attribute(url, "QueueArn").await.expect("QueueArn")
}

/// The queue `jobs` in the default region and in eu-west-1: (a client
/// signing for eu-west-1, the default region's URL, eu-west-1's URL).
async fn jobs_in_two_regions(t: &TestServer) -> (Client, String, String) {
    let eu = t.new_client("eu-west-1");
    let home = t.create_queue("jobs").await;
    let there = create_queue_via(&eu, "jobs", &[]).await;
    (eu, home, there)
}

/// One message waits in the queue at `there`, none in the one at `home`.
async fn assert_one_message_only_in(t: &TestServer, there: &str, home: &str) {
    assert_eq!(t.counts(there).await, (1, 0, 0));
    assert_eq!(t.counts(home).await, (0, 0, 0));
}

#[tokio::test]
async fn same_name_in_two_regions_gets_two_urls() {
    let t = TestServer::start().await;
    let (eu, home, there) = jobs_in_two_regions(&t).await;
    assert_eq!(home, t.queue_url("jobs"), "default region: plain form");
    assert_eq!(
        there,
        format!("{}/queue/eu-west-1/{ACCOUNT}/jobs", t.endpoint)
    );
    // GetQueueUrl and ListQueues in each region return that region's URL.
    let got = eu.get_queue_url().queue_name("jobs").send().await.unwrap();
    assert_eq!(got.queue_url(), Some(there.as_str()));
    let listed = eu.list_queues().send().await.unwrap();
    assert_eq!(listed.queue_urls(), [there.as_str()]);
    let listed = t.client.list_queues().send().await.unwrap();
    assert_eq!(listed.queue_urls(), [home.as_str()]);
    // CreateQueue again (idempotent) answers the same URL.
    let again = eu.create_queue().queue_name("jobs").send().await.unwrap();
    assert_eq!(again.queue_url(), Some(there.as_str()));

    // The URL names the region: a client signing for us-east-1 that uses
    // the eu-west-1 URL reaches the eu-west-1 queue.
    t.send(&there, "to eu").await;
    assert_one_message_only_in(&t, &there, &home).await;
    assert_eq!(
        arn_of(&t, &there).await,
        format!("arn:aws:sqs:eu-west-1:{ACCOUNT}:jobs")
    );
    let m = t.receive_one(&there).await;
    assert_eq!(m.body(), Some("to eu"));
    // Dead-letter source listings are region-named too.
    let dlq_arn = arn_of(&t, &there).await;
    eu.create_queue()
        .queue_name("feeds")
        .attributes(
            QueueAttributeName::RedrivePolicy,
            format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":"3"}}"#),
        )
        .send()
        .await
        .unwrap();
    let sources = eu
        .list_dead_letter_source_queues()
        .queue_url(&there)
        .send()
        .await
        .unwrap();
    assert_eq!(
        sources.queue_urls(),
        [format!("{}/queue/eu-west-1/{ACCOUNT}/feeds", t.endpoint)]
    );
}

#[tokio::test]
async fn a_non_default_region_keeps_its_form_for_a_server_of_another_default() {
    let t = TestServer::start_with(retsu::config::Config {
        region: "eu-west-1".into(),
        ..retsu::config::Config::ephemeral()
    })
    .await;
    // The test client signs for us-east-1, now not the default.
    let url = t.create_queue("q").await;
    assert_eq!(url, format!("{}/queue/us-east-1/{ACCOUNT}/q", t.endpoint));
    let eu = t.new_client("eu-west-1");
    let out = eu.create_queue().queue_name("q").send().await.unwrap();
    assert_eq!(out.queue_url(), Some(t.queue_url("q").as_str()));
}

#[tokio::test]
async fn host_style_urls_name_the_region_in_the_host() {
    let t = TestServer::start_with(retsu::config::Config {
        host_style_queue_urls: true,
        ..retsu::config::Config::ephemeral()
    })
    .await;
    let (_, home, there) = jobs_in_two_regions(&t).await;
    assert_eq!(home, t.queue_url("jobs"));
    let host = t.endpoint.strip_prefix("http://").unwrap();
    assert_eq!(there, format!("http://sqs.eu-west-1.{host}/{ACCOUNT}/jobs"));
    // Used as a parameter from a us-east-1 client, it reaches eu-west-1.
    t.send(&there, "x").await;
    assert_one_message_only_in(&t, &there, &home).await;
    // A caller that reached the server by such a host gets URLs built on
    // the bare host.
    let raw = t
        .raw(
            t.http
                .post(format!("{}/", t.endpoint))
                .header("host", format!("sqs.eu-west-1.{host}"))
                .header("authorization", signed_for("eu-west-1"))
                .header("content-type", "application/x-amz-json-1.0")
                .header("x-amz-target", "AmazonSQS.GetQueueUrl")
                .body(r#"{"QueueName":"jobs"}"#),
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert_eq!(raw.json()["QueueUrl"], there.as_str());
}

#[tokio::test]
async fn query_requests_at_a_region_named_path_act_on_that_region() {
    let t = TestServer::start().await;
    let (_, home, there) = jobs_in_two_regions(&t).await;
    // Sent to the queue's own path, unsigned (default region).
    let path = there.strip_prefix(&t.endpoint).unwrap();
    let raw = t
        .form_post(
            path,
            &[
                ("Action", "SendMessage"),
                ("Version", "2012-11-05"),
                ("MessageBody", "by path"),
            ],
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert_one_message_only_in(&t, &there, &home).await;
    // ListQueues signed for eu-west-1, over query: the region's URL.
    let raw = t
        .raw(
            t.http
                .post(format!("{}/", t.endpoint))
                .header("authorization", signed_for("eu-west-1"))
                .form(&[("Action", "ListQueues"), ("Version", "2012-11-05")]),
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert_eq!(xml_all(&raw.compact_xml(), "QueueUrl"), [there.as_str()]);
}
