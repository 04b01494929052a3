//! Seeing inside event source mappings: every invocation in
//! `/_retsu/lambda/invocations` (which messages it held, its result,
//! which items failed and why), the counters on `/metrics`, why a message
//! reached its dead-letter queue, and `retsu mappings`. Through the
//! official `aws-sdk-lambda` and `aws-sdk-sqs` clients against AWS's
//! runtime interface emulator running tests/lambda/handlers.py (built by
//! `scripts/lambda-rie.sh`; without Go those tests print "skipped: no
//! Go"). SQS time (visibility timeouts) moves through the manual clock.

mod common;

use std::time::Duration;

use common::lambda::{self, eventually, rie_available, single_node_only, Rie};
use common::process::{retsu, Running};
use common::{queue_arn, TestServer, ACCOUNT, REGION};
use retsu::config::Config;
use retsu::lambda::FunctionTarget;
use serde_json::Value;

async fn server_with(url: &str) -> (TestServer, aws_sdk_lambda::Client) {
    let server = TestServer::start_with(Config {
        functions: vec![FunctionTarget::with_url("orders", url, Default::default(), 30).unwrap()],
        ..Config::ephemeral()
    })
    .await;
    let lambda = lambda::client(&server.endpoint);
    (server, lambda)
}

async fn invocations(server: &TestServer, query: &str) -> Vec<Value> {
    server
        .admin_get(&format!("/_retsu/lambda/invocations{query}"))
        .await["invocations"]
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

async fn map(lambda: &aws_sdk_lambda::Client, queue: &str) -> String {
    lambda
        .create_event_source_mapping()
        .function_name("orders")
        .event_source_arn(queue_arn(queue))
        .batch_size(10)
        .function_response_types(
            aws_sdk_lambda::types::FunctionResponseType::ReportBatchItemFailures,
        )
        .send()
        .await
        .unwrap()
        .uuid
        .unwrap()
}

#[tokio::test]
async fn a_partial_batch_is_logged_with_the_items_that_failed() {
    if single_node_only("invocation logs and /metrics") || !rie_available() {
        return;
    }
    let rie = Rie::python("handlers.partial");
    let (server, lambda) = server_with(&rie.url).await;
    let url = server.create_queue("jobs").await;
    let good = server.send(&url, "good").await;
    let bad = server.send(&url, "fail-1").await;
    // The live stream, following this queue's invocations only.
    let arn = queue_arn("jobs");
    let scope: Vec<&str> = arn.split(':').skip(3).collect();
    let mut live = server
        .http
        .get(format!(
            "{}/_retsu/events/stream?kind=invocation&queue={}",
            server.endpoint,
            scope.join("/")
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(live.status(), 200);
    let uuid = map(&lambda, "jobs").await;

    eventually("the invocations covered both messages", || async {
        let log = invocations(&server, &format!("?source={uuid}")).await;
        log.iter()
            .flat_map(|r| r["messages"].as_array().unwrap().clone())
            .filter(|m| *m == good.as_str() || *m == bad.as_str())
            .count()
            >= 2
    })
    .await;
    let log = invocations(&server, &format!("?source={uuid}")).await;
    let with_bad = log
        .iter()
        .find(|r| {
            r["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| *m == bad.as_str())
        })
        .unwrap();
    assert_eq!(with_bad["source"], "mapping");
    assert_eq!(with_bad["function"], "orders");
    assert_eq!(with_bad["from"], queue_arn("jobs").as_str());
    assert_eq!(with_bad["result"], "partial");
    assert_eq!(with_bad["failed_items"], serde_json::json!([bad]));
    assert!(with_bad["batch"].as_u64().unwrap() >= 1);
    assert!(with_bad["duration_ms"].is_u64());
    assert!(with_bad["request_id"].as_str().is_some_and(common::is_uuid));

    // The same invocation came on the live stream as `event: invocation`.
    let mut seen = String::new();
    let streamed = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let chunk = live.chunk().await.unwrap().expect("the stream stays open");
            seen.push_str(&String::from_utf8_lossy(&chunk));
            let found = seen.split("\n\n").find_map(|frame| {
                let data = frame.strip_prefix("event: invocation\ndata: ")?;
                let r: Value = serde_json::from_str(data).unwrap();
                (r["request_id"] == with_bad["request_id"]).then_some(r)
            });
            if let Some(r) = found {
                return r;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no invocation frame in:\n{seen}"));
    assert_eq!(streamed, *with_bad);

    let text = metrics(&server).await;
    let line = format!("retsu_lambda_failed_items_total{{function=\"orders\",source=\"{uuid}\",result=\"failed\"}} 1");
    assert!(text.contains(&line), "{line} not in:\n{text}");
    assert!(
        text.contains(&format!("retsu_lambda_invocations_total{{function=\"orders\",source=\"{uuid}\",result=\"partial\"}} 1")),
        "{text}"
    );
}

#[tokio::test]
async fn a_message_dead_lettered_by_failed_invocations_shows_why() {
    if single_node_only("invocation logs and /metrics") || !rie_available() {
        return;
    }
    let rie = Rie::python("handlers.always_fail");
    let (server, lambda) = server_with(&rie.url).await;
    let dlq = server.create_queue("jobs-dlq").await;
    let policy = format!(
        r#"{{"deadLetterTargetArn":"{}","maxReceiveCount":2}}"#,
        queue_arn("jobs-dlq")
    );
    let url = server
        .create_queue_with(
            "jobs",
            &[("VisibilityTimeout", "30"), ("RedrivePolicy", &policy)],
        )
        .await;
    let id = server.send(&url, "doomed").await;
    let uuid = map(&lambda, "jobs").await;

    let failed = |n: usize| {
        let server = &server;
        let id = id.clone();
        async move { invocations(server, &format!("?message={id}")).await.len() >= n }
    };
    eventually("the first invocation failed", || failed(1)).await;
    server.advance_secs(31);
    eventually("the second invocation failed", || failed(2)).await;
    server.advance_secs(31);
    eventually("the message reached the dead-letter queue", || async {
        server.counts(&dlq).await.0 == 1
    })
    .await;

    // The dead-lettered message keeps its id: its invocations say why.
    let moved = server.receive(&dlq, 1).await;
    assert_eq!(moved[0].message_id(), Some(id.as_str()));
    let why = invocations(&server, &format!("?message={id}")).await;
    assert_eq!(why.len(), 2, "{why:#?}");
    for r in &why {
        assert_eq!(r["source_id"], uuid.as_str());
        assert_eq!(r["result"], "failed");
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .contains("this handler always fails"),
            "{r}"
        );
    }
    // The message's history carries the same invocations beside its events.
    let life = server.admin_get(&format!("/_retsu/messages/{id}")).await;
    let carried = life["invocations"].as_array().unwrap();
    assert_eq!(carried, &why, "{life:#}");
    assert!(
        life["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "dead_lettered"),
        "{life:#}"
    );
    let text = metrics(&server).await;
    assert!(
        text.contains(&format!("retsu_lambda_invocations_total{{function=\"orders\",source=\"{uuid}\",result=\"failed\"}} 2")),
        "{text}"
    );
}

/// A table row's cells: columns are separated by two or more spaces.
fn cells(line: &str) -> Vec<&str> {
    line.split("  ")
        .filter(|c| !c.is_empty())
        .map(str::trim)
        .collect()
}

#[tokio::test]
async fn retsu_mappings_lists_them() {
    let server = Running::start_on_free_port(|port| {
        let mut command = retsu();
        command
            .args(["--port", &port.to_string()])
            .args(["--function", "orders=http://127.0.0.1:1"]);
        command
    });
    let cli = |args: &[&str]| {
        let out = retsu()
            .args(args)
            .args(["--endpoint", &server.endpoint()])
            .output()
            .expect("retsu runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(cli(&["mappings"]).trim(), "no event source mappings");

    let sqs = server.client(REGION);
    common::create_queue_via(&sqs, "jobs", &[]).await;
    let lambda = lambda::client(&server.endpoint());
    let uuid = lambda
        .create_event_source_mapping()
        .function_name("orders")
        .event_source_arn(format!("arn:aws:sqs:{REGION}:{ACCOUNT}:jobs"))
        .batch_size(5)
        .enabled(false)
        .send()
        .await
        .unwrap()
        .uuid
        .unwrap();

    let table = cli(&["mappings"]);
    let mut lines = table.lines();
    let header = cells(lines.next().unwrap());
    assert_eq!(
        header,
        ["UUID", "FUNCTION", "QUEUE", "STATE", "BATCH", "LAST RESULT"]
    );
    let row = cells(lines.next().unwrap());
    assert_eq!(
        row,
        [
            uuid.as_str(),
            "orders",
            "jobs",
            "Disabled",
            "5",
            "No records processed"
        ]
    );

    let json: Value = serde_json::from_str(&cli(&["mappings", "--json"])).unwrap();
    assert_eq!(json["mappings"][0]["UUID"], uuid.as_str());
    assert_eq!(
        json["mappings"][0]["EventSourceArn"],
        queue_arn("jobs").as_str()
    );
}
