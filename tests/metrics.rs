//! `GET /metrics` after scripted traffic: every value checked, the output
//! read back with a Prometheus text-format parser.

mod common;

use std::time::Duration;

use common::*;
use prometheus_parse::{Sample, Scrape, Value};

async fn scrape(t: &TestServer) -> Scrape {
    let resp = t
        .http
        .get(format!("{}/metrics", t.endpoint))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/openmetrics-text"));
    let text = resp.text().await.unwrap();
    assert!(text.ends_with("# EOF\n"), "{text}");
    Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("parses as Prometheus text")
}

fn find<'a>(s: &'a Scrape, metric: &str, labels: &[(&str, &str)]) -> Option<&'a Sample> {
    s.samples
        .iter()
        .find(|x| x.metric == metric && labels.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
}

fn number(s: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    match find(s, metric, labels).map(|x| &x.value) {
        Some(Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v)) => *v,
        other => panic!("{metric} {labels:?}: {other:?}"),
    }
}

#[tokio::test]
async fn counts_gauges_and_requests_after_scripted_traffic() {
    if common::in_cluster() {
        // tests/cluster.rs checks a cluster's /metrics, node by node.
        eprintln!("skipped in a cluster: each node's /metrics shows what that node owns, and the test's proxy may hand the scrape to a node that owns nothing");
        return;
    }
    let t = TestServer::start().await;
    let dlq = t.create_queue("m-dlq").await;
    let url = t
        .create_source_queue("m", "m-dlq", 1, &[("MessageRetentionPeriod", "120")])
        .await;
    for body in ["a", "b", "c", "d"] {
        t.send(&url, body).await;
    }
    t.send_delayed(&url, "later", 60).await;
    let got = t.receive(&url, 2).await;
    t.delete_message(&url, got[0].receipt_handle().unwrap())
        .await;
    // b comes back at 30 s; receiving it again (maxReceiveCount 1) moves
    // it to the dead-letter queue instead, and c and d are delivered.
    t.advance(Duration::from_secs(30));
    let again = t.receive(&url, 10).await;
    assert_eq!(bodies(&again), ["c", "d"]);
    // At 61 s c and d are back (to the DLQ with them) and "later" is due.
    t.advance(Duration::from_secs(31));
    let third = t.receive(&url, 10).await;
    assert_eq!(bodies(&third), ["later"]);
    assert_eq!(t.counts(&dlq).await, (3, 0, 0));
    let _ = t.client.get_queue_url().queue_name("nope").send().await;

    let s = scrape(&t).await;
    let q = [("region", REGION), ("account", ACCOUNT), ("queue", "m")];
    assert_eq!(number(&s, "retsu_messages_sent_total", &q), 5.0);
    assert_eq!(number(&s, "retsu_messages_received_total", &q), 5.0);
    assert_eq!(number(&s, "retsu_messages_deleted_total", &q), 1.0);
    assert_eq!(number(&s, "retsu_messages_dead_lettered_total", &q), 3.0);
    assert_eq!(number(&s, "retsu_messages_expired_total", &q), 0.0);
    let in_flight = [
        ("queue", "m"),
        ("state", "in_flight"),
        ("region", REGION),
        ("account", ACCOUNT),
    ];
    assert_eq!(number(&s, "retsu_queue_messages", &in_flight), 1.0);
    assert_eq!(
        number(
            &s,
            "retsu_queue_messages",
            &[("queue", "m-dlq"), ("state", "available")]
        ),
        3.0
    );
    // The one message left ("later", sent at the start) is 61 s old.
    assert_eq!(
        number(&s, "retsu_queue_oldest_message_age_seconds", &q),
        61.0
    );
    assert_eq!(
        number(
            &s,
            "retsu_message_transitions_total",
            &[("queue", "m-dlq"), ("kind", "arrived_from_source")]
        ),
        3.0
    );
    assert_eq!(
        number(
            &s,
            "retsu_sqs_requests_total",
            &[("action", "SendMessage"), ("outcome", "ok")]
        ),
        5.0
    );
    assert_eq!(
        number(
            &s,
            "retsu_sqs_requests_total",
            &[
                ("action", "GetQueueUrl"),
                ("outcome", "AWS.SimpleQueueService.NonExistentQueue")
            ]
        ),
        1.0
    );
    match find(
        &s,
        "retsu_sqs_request_duration_seconds",
        &[("action", "ReceiveMessage")],
    )
    .map(|x| &x.value)
    {
        Some(Value::Histogram(buckets)) => {
            let all = buckets.last().expect("an +Inf bucket");
            assert_eq!(all.count, 3.0, "{buckets:?}");
        }
        other => panic!("no receive latency histogram: {other:?}"),
    }

    // Expiry (of an in-flight message too) is counted when retention runs out.
    t.advance(Duration::from_secs(120));
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    let s = scrape(&t).await;
    assert_eq!(number(&s, "retsu_messages_expired_total", &q), 1.0);
    assert_eq!(
        number(&s, "retsu_queue_oldest_message_age_seconds", &q),
        0.0
    );
}
