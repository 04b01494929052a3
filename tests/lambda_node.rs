//! Lambda event source mappings to Node.js handlers: AWS's runtime
//! interface emulator running `tests/lambda/handlers.mjs` through AWS's
//! Node.js runtime interface client, `aws-lambda-ric` from npm, both
//! installed by `scripts/lambda-rie.sh setup-node`; driven through the
//! official `aws-sdk-lambda` and `aws-sdk-sqs` clients.
//!
//! The record a Node.js handler is given is compared byte for byte with
//! the one the Python runtime (`awslambdaric`, tests/lambda/records.py)
//! is given for the same message, and a Node.js handler's
//! ReportBatchItemFailures answer returns exactly the items it names.
//!
//! Without Go, node, cmake or a C++ compiler (aws-lambda-ric builds a
//! native addon at install) the tests say what is missing and pass, as
//! compat/run.sh does. Time in SQS terms moves through the manual clock;
//! the tests wait in real time only for the handler's process to answer.

mod common;

use aws_sdk_lambda::types::FunctionResponseType;
use common::lambda::{
    eventually, node_available, rie_available, server_with, single_node_only, url_function, Rie,
};
use common::{queue_arn, TestServer};

/// Sends the same message, attributes and all, to `url`; the manual clock
/// does not move, so two queues given it hold records alike but for the
/// message id, the receipt handle and the queue.
async fn send_the_message(server: &TestServer, url: &str) -> String {
    server
        .client
        .send_message()
        .queue_url(url)
        .message_body("héllo \"wörld\" ✓\n\ttabs & <tags> / slashes \u{1F600}")
        .message_attributes("color", common::string_attr("blue"))
        .message_attributes("n", common::typed_attr("Number", "7"))
        .message_attributes("bin", common::binary_attr("Binary", b"\x00\x01\xff"))
        .message_attributes("custom", common::typed_attr("String.custom", "c"))
        .send()
        .await
        .unwrap()
        .message_id()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_node_handler_gets_the_records_the_python_runtime_gets() {
    if single_node_only("mapping pollers") || !node_available() || !rie_available() {
        return;
    }
    let node = Rie::node("handlers.record");
    let python = Rie::python("records.record");
    let (server, lambda) = server_with(vec![
        url_function("node", &node.url),
        url_function("python", &python.url),
    ])
    .await;
    let node_queue = server.create_queue("to-node").await;
    let python_queue = server.create_queue("to-python").await;
    let node_id = send_the_message(&server, &node_queue).await;
    let python_id = send_the_message(&server, &python_queue).await;
    for (function, queue) in [("node", "to-node"), ("python", "to-python")] {
        lambda
            .create_event_source_mapping()
            .function_name(function)
            .event_source_arn(queue_arn(queue))
            .function_response_types(FunctionResponseType::ReportBatchItemFailures)
            .send()
            .await
            .unwrap();
    }
    eventually("both messages are processed and deleted", || async {
        server.counts(&node_queue).await == (0, 0, 0)
            && server.counts(&python_queue).await == (0, 0, 0)
    })
    .await;
    let (node_events, python_events) = (node.lines(), python.lines());
    assert_eq!(node_events.len(), 1, "one invocation: {node_events:?}");
    assert_eq!(python_events.len(), 1, "one invocation: {python_events:?}");

    // What differs between the two queues' records, set aside by value.
    let parsed: serde_json::Value = serde_json::from_str(&node_events[0]).unwrap();
    let r = &parsed["Records"][0];
    assert_eq!(r["messageId"], node_id.as_str());
    assert_eq!(r["eventSourceARN"], queue_arn("to-node"));
    assert_eq!(
        r["body"],
        "héllo \"wörld\" ✓\n\ttabs & <tags> / slashes \u{1F600}"
    );
    assert_eq!(
        r["messageAttributes"]["bin"],
        serde_json::json!({
            "binaryValue": "AAH/",
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": "Binary"
        })
    );
    let node_handle = r["receiptHandle"].as_str().unwrap().to_string();
    let python_parsed: serde_json::Value = serde_json::from_str(&python_events[0]).unwrap();
    let python_handle = python_parsed["Records"][0]["receiptHandle"]
        .as_str()
        .unwrap()
        .to_string();

    let same = |line: &str, id: &str, handle: &str, queue: &str| {
        line.replace(id, "ID")
            .replace(handle, "HANDLE")
            .replace(&queue_arn(queue), "ARN")
    };
    assert_eq!(
        same(&node_events[0], &node_id, &node_handle, "to-node"),
        same(&python_events[0], &python_id, &python_handle, "to-python"),
        "the Node.js and Python runtimes see the same event, byte for byte"
    );
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_node_handlers_failed_items_return_exactly_those() {
    if single_node_only("mapping pollers") || !node_available() {
        return;
    }
    let rie = Rie::node("handlers.partial");
    let (server, lambda) = server_with(vec![url_function("partial", &rie.url)]).await;
    let dlq = server.create_queue("jobs-dlq").await;
    let policy = format!(
        r#"{{"deadLetterTargetArn":"{}","maxReceiveCount":1}}"#,
        queue_arn("jobs-dlq")
    );
    let url = server
        .create_queue_with(
            "jobs",
            &[("VisibilityTimeout", "30"), ("RedrivePolicy", &policy)],
        )
        .await;
    for body in ["ok-1", "fail-2", "ok-3", "fail-4", "ok-5"] {
        server.send(&url, body).await;
    }
    lambda
        .create_event_source_mapping()
        .function_name("partial")
        .event_source_arn(queue_arn("jobs"))
        .batch_size(5)
        .function_response_types(FunctionResponseType::ReportBatchItemFailures)
        .send()
        .await
        .unwrap();
    eventually("the three successes are deleted", || async {
        server.counts(&url).await == (0, 2, 0)
    })
    .await;
    let seen: usize = rie
        .lines()
        .iter()
        .map(|e| {
            let e: serde_json::Value = serde_json::from_str(e).unwrap();
            e["Records"].as_array().unwrap().len()
        })
        .sum();
    assert_eq!(seen, 5, "every message reached the handler once");
    // The two failures come back at their visibility timeout; their next
    // receive passes maxReceiveCount 1 and moves them to the DLQ.
    server.advance_secs(31);
    eventually("the failures reach the dead-letter queue", || async {
        server.counts(&dlq).await.0 == 2
    })
    .await;
    let mut bodies: Vec<String> = server
        .receive(&dlq, 10)
        .await
        .into_iter()
        .filter_map(|m| m.body)
        .collect();
    bodies.sort();
    assert_eq!(bodies, ["fail-2", "fail-4"]);
    assert_eq!(server.counts(&url).await, (0, 0, 0));
    server.server.shutdown().await.unwrap();
}
