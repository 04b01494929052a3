//! Lambda event source mappings, through the official `aws-sdk-lambda`
//! and `aws-sdk-sqs` clients: the control plane (create, get, list with
//! paging, update, delete, and AWS's errors for bad input), and the data
//! plane against real handlers: AWS's Lambda Runtime Interface Emulator,
//! built from its Go module by `scripts/lambda-rie.sh`, running the Python
//! handlers of `tests/lambda/handlers.py` through `awslambdaric`, with
//! AWS Lambda Powertools' `BatchProcessor` and `SqsRecordModel` parsing
//! every record Retsu sends.
//!
//! Without Go (or python3) the emulator tests print "skipped: no Go" and
//! pass, as compat/run.sh does; the control-plane and command-function
//! tests still run. Time in SQS terms (visibility timeouts) moves through
//! the manual clock; the tests wait in real time only for the handler's
//! process to answer.

mod common;

use std::time::Duration;

use aws_sdk_lambda::error::ProvideErrorMetadata;
use aws_sdk_lambda::types::{Filter, FilterCriteria, FunctionResponseType, ScalingConfig};
use common::lambda::{
    self, aws_cli, aws_lambda, eventually, rie_available, server_with, single_node_only,
    url_function, Rie,
};
use common::process::free_port;
use common::{queue_arn, TestServer, ACCOUNT, REGION};
use retsu::lambda::FunctionTarget;

/// The bodies of each invocation's records, one list per invocation (the
/// handlers of tests/lambda/handlers.py write them).
fn bodies_per_invocation(rie: &Rie) -> Vec<Vec<String>> {
    rie.lines()
        .iter()
        .map(|l| serde_json::from_str(l).expect("a log line is a JSON list"))
        .collect()
}

/// A queue with `attributes` and a dead-letter queue `<name>-dlq` its
/// messages move to after `max_receive_count` receives.
async fn queue_with_dlq(
    server: &TestServer,
    name: &str,
    max_receive_count: u32,
    attributes: &[(&str, &str)],
) -> (String, String) {
    let fifo = name.ends_with(".fifo");
    let dlq_name = if fifo {
        format!("{}-dlq.fifo", name.trim_end_matches(".fifo"))
    } else {
        format!("{name}-dlq")
    };
    let dlq_attrs: &[(&str, &str)] = if fifo { &[("FifoQueue", "true")] } else { &[] };
    let dlq = server.create_queue_with(&dlq_name, dlq_attrs).await;
    let policy = format!(
        r#"{{"deadLetterTargetArn":"{}","maxReceiveCount":{max_receive_count}}}"#,
        queue_arn(&dlq_name)
    );
    let mut all: Vec<(&str, &str)> = attributes.to_vec();
    all.push(("RedrivePolicy", &policy));
    let url = server.create_queue_with(name, &all).await;
    (url, dlq)
}

/// `CreateEventSourceMapping` from `function` to the queue named `queue`.
fn map_queue(
    lambda: &aws_sdk_lambda::Client,
    function: impl Into<String>,
    queue: &str,
) -> aws_sdk_lambda::operation::create_event_source_mapping::builders::CreateEventSourceMappingFluentBuilder{
    lambda
        .create_event_source_mapping()
        .function_name(function)
        .event_source_arn(queue_arn(queue))
}

/// `rounds` messages to each of the groups a, b and c, round by round
/// (`a-0`, `b-0`, `c-0`, `a-1`, …), so each group's order is its send order.
async fn send_groups(server: &TestServer, url: &str, rounds: usize) {
    for n in 0..rounds {
        for group in ["a", "b", "c"] {
            server
                .client
                .send_message()
                .queue_url(url)
                .message_group_id(group)
                .message_body(format!("{group}-{n}"))
                .send()
                .await
                .unwrap();
        }
    }
}

async fn send_all(server: &TestServer, url: &str, bodies: &[&str]) {
    for body in bodies {
        server.send(url, body).await;
    }
}

async fn bodies_in(server: &TestServer, url: &str) -> Vec<String> {
    let mut bodies: Vec<String> = server
        .receive(url, 10)
        .await
        .into_iter()
        .filter_map(|m| m.body)
        .collect();
    bodies.sort();
    bodies
}

async fn last_result(lambda: &aws_sdk_lambda::Client, uuid: &str) -> String {
    lambda
        .get_event_source_mapping()
        .uuid(uuid)
        .send()
        .await
        .unwrap()
        .last_processing_result
        .unwrap_or_default()
}

#[tokio::test]
async fn mappings_are_created_listed_updated_and_deleted() {
    let (server, lambda) = server_with(vec![
        url_function("orders", "http://127.0.0.1:1"),
        url_function("audit", "http://127.0.0.1:1"),
    ])
    .await;
    server.create_queue("jobs").await;
    server.create_queue("other").await;

    let created = map_queue(&lambda, "orders", "jobs")
        .enabled(false)
        .batch_size(5)
        .send()
        .await
        .unwrap();
    let uuid = created.uuid().unwrap().to_string();
    assert!(common::is_uuid(&uuid), "{uuid}");
    assert_eq!(created.state(), Some("Creating"));
    assert_eq!(created.batch_size(), Some(5));
    assert_eq!(created.maximum_batching_window_in_seconds(), Some(0));
    assert_eq!(
        created.function_arn(),
        Some(format!("arn:aws:lambda:{REGION}:{ACCOUNT}:function:orders").as_str())
    );
    assert_eq!(created.event_source_arn(), Some(queue_arn("jobs").as_str()));
    assert_eq!(
        created.event_source_mapping_arn(),
        Some(format!("arn:aws:lambda:{REGION}:{ACCOUNT}:event-source-mapping:{uuid}").as_str())
    );
    assert!(created.last_modified().is_some());

    let got = lambda
        .get_event_source_mapping()
        .uuid(&uuid)
        .send()
        .await
        .unwrap();
    assert_eq!(got.state(), Some("Disabled"));
    assert_eq!(got.last_processing_result(), Some("No records processed"));

    // A second function on the same queue, and the first on another.
    let audit = map_queue(
        &lambda,
        format!("arn:aws:lambda:{REGION}:{ACCOUNT}:function:audit"),
        "jobs",
    )
    .enabled(false)
    .send()
    .await
    .unwrap();
    assert_eq!(audit.batch_size(), Some(10), "Lambda's default for SQS");
    map_queue(&lambda, "orders", "other")
        .enabled(false)
        .send()
        .await
        .unwrap();

    let by_function = lambda
        .list_event_source_mappings()
        .function_name("orders")
        .send()
        .await
        .unwrap();
    assert_eq!(by_function.event_source_mappings().len(), 2);
    let by_source = lambda
        .list_event_source_mappings()
        .event_source_arn(queue_arn("jobs"))
        .send()
        .await
        .unwrap();
    assert_eq!(by_source.event_source_mappings().len(), 2);
    // Paging, one at a time, through all three.
    let mut seen = Vec::new();
    let mut marker = None;
    loop {
        let page = lambda
            .list_event_source_mappings()
            .max_items(1)
            .set_marker(marker)
            .send()
            .await
            .unwrap();
        assert!(page.event_source_mappings().len() <= 1);
        seen.extend(
            page.event_source_mappings()
                .iter()
                .filter_map(|m| m.uuid().map(str::to_string)),
        );
        marker = page.next_marker().map(str::to_string);
        if marker.is_none() {
            break;
        }
    }
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[0], uuid, "creation order");

    let updated = lambda
        .update_event_source_mapping()
        .uuid(&uuid)
        .batch_size(100)
        .maximum_batching_window_in_seconds(2)
        .function_response_types(FunctionResponseType::ReportBatchItemFailures)
        .scaling_config(ScalingConfig::builder().maximum_concurrency(3).build())
        .send()
        .await
        .unwrap();
    assert_eq!(updated.state(), Some("Updating"));
    assert_eq!(updated.batch_size(), Some(100));
    assert_eq!(updated.maximum_batching_window_in_seconds(), Some(2));
    assert_eq!(
        updated.function_response_types(),
        &[FunctionResponseType::ReportBatchItemFailures]
    );
    assert_eq!(
        updated
            .scaling_config()
            .and_then(|s| s.maximum_concurrency()),
        Some(3)
    );

    let function = lambda
        .get_function()
        .function_name("orders")
        .send()
        .await
        .unwrap();
    let configuration = function.configuration().unwrap();
    assert_eq!(configuration.function_name(), Some("orders"));
    assert_eq!(configuration.timeout(), Some(30));
    let missing = lambda
        .get_function()
        .function_name("nope")
        .send()
        .await
        .unwrap_err();
    assert!(missing
        .into_service_error()
        .is_resource_not_found_exception());

    let deleted = lambda
        .delete_event_source_mapping()
        .uuid(&uuid)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.state(), Some("Deleting"));
    let gone = lambda
        .get_event_source_mapping()
        .uuid(&uuid)
        .send()
        .await
        .unwrap_err();
    assert!(gone.into_service_error().is_resource_not_found_exception());
    let gone = lambda
        .delete_event_source_mapping()
        .uuid(&uuid)
        .send()
        .await
        .unwrap_err();
    assert!(gone.into_service_error().is_resource_not_found_exception());
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn bad_mappings_get_lambdas_errors() {
    let (server, lambda) = server_with(vec![url_function("orders", "http://127.0.0.1:1")]).await;
    server.create_queue("jobs").await;
    server
        .create_queue_with("jobs.fifo", &[("FifoQueue", "true")])
        .await;
    let create = || map_queue(&lambda, "orders", "jobs").enabled(false);

    let err = create()
        .event_source_arn(queue_arn("missing"))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(err.is_invalid_parameter_value_exception(), "{err:?}");
    assert!(
        err.message()
            .unwrap()
            .contains("AWS.SimpleQueueService.NonExistentQueue"),
        "{err:?}"
    );

    let err = create()
        .function_name("nope")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(err.is_resource_not_found_exception(), "{err:?}");
    assert_eq!(
        err.message(),
        Some(
            format!("Function not found: arn:aws:lambda:{REGION}:{ACCOUNT}:function:nope").as_str()
        )
    );

    for size in [0, 10_001] {
        let err = create()
            .batch_size(size)
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert_eq!(err.code(), Some("ValidationException"), "{size}: {err:?}");
    }
    let err = create()
        .batch_size(11)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(err.is_invalid_parameter_value_exception(), "{err:?}");
    assert!(
        err.message().unwrap().contains("Maximum batch window"),
        "{err:?}"
    );

    let fifo = || create().event_source_arn(queue_arn("jobs.fifo"));
    let err = fifo()
        .batch_size(11)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(err.is_invalid_parameter_value_exception(), "{err:?}");
    let err = fifo()
        .maximum_batching_window_in_seconds(5)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(err.is_invalid_parameter_value_exception(), "{err:?}");
    let fifo_ok = fifo().batch_size(10).send().await.unwrap();
    assert_eq!(fifo_ok.maximum_batching_window_in_seconds(), None);

    let err = create()
        .scaling_config(ScalingConfig::builder().maximum_concurrency(1).build())
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(err.code(), Some("ValidationException"), "{err:?}");
    let err = create()
        .filter_criteria(
            FilterCriteria::builder()
                .filters(Filter::builder().pattern("{not json").build())
                .build(),
        )
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(err.is_invalid_parameter_value_exception(), "{err:?}");

    // One mapping per function and queue.
    let first = create().send().await.unwrap();
    let err = create().send().await.unwrap_err().into_service_error();
    assert!(err.is_resource_conflict_exception(), "{err:?}");
    assert!(
        err.message().unwrap().contains(first.uuid().unwrap()),
        "{err:?}"
    );

    // Nothing refused was created.
    let all = lambda.list_event_source_mappings().send().await.unwrap();
    assert_eq!(all.event_source_mappings().len(), 2);
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_refused_connection_fails_the_batch_and_loses_nothing() {
    if single_node_only("mapping pollers") {
        return;
    }
    let closed = format!("http://127.0.0.1:{}", free_port());
    let (server, lambda) = server_with(vec![url_function("down", &closed)]).await;
    let url = server
        .create_queue_with("jobs", &[("VisibilityTimeout", "30")])
        .await;
    server.send(&url, "hello").await;
    let mapping = map_queue(&lambda, "down", "jobs").send().await.unwrap();
    let uuid = mapping.uuid().unwrap();
    eventually("the invocation failed", || async {
        last_result(&lambda, uuid).await == "PROBLEM: Function call failed"
    })
    .await;
    assert_eq!(
        server.counts(&url).await,
        (0, 1, 0),
        "in flight, not deleted"
    );
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_command_function_gets_aws_records() {
    if single_node_only("mapping pollers") {
        return;
    }
    let log = std::env::temp_dir().join(format!("retsu-lambda-{}.json", uuid::Uuid::new_v4()));
    let script = format!(
        "cat > {}; echo '{{\"batchItemFailures\":[]}}'",
        log.display()
    );
    let function = FunctionTarget::with_command(
        "cmd",
        vec!["sh".into(), "-c".into(), script],
        Default::default(),
        10,
    )
    .unwrap();
    let (server, lambda) = server_with(vec![function]).await;
    let url = server.create_queue("jobs").await;
    let sent = server
        .client
        .send_message()
        .queue_url(&url)
        .message_body("hello")
        .message_attributes("color", common::string_attr("blue"))
        .send()
        .await
        .unwrap();
    map_queue(&lambda, "cmd", "jobs")
        .function_response_types(FunctionResponseType::ReportBatchItemFailures)
        .send()
        .await
        .unwrap();
    eventually("the message was processed and deleted", || async {
        server.counts(&url).await == (0, 0, 0)
    })
    .await;
    let event: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    let _ = std::fs::remove_file(&log);
    let records = event["Records"].as_array().unwrap();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    let mut expected = vec![
        "messageId",
        "receiptHandle",
        "body",
        "attributes",
        "messageAttributes",
        "md5OfBody",
        "md5OfMessageAttributes",
        "eventSource",
        "eventSourceARN",
        "awsRegion",
    ];
    expected.sort();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(sorted, expected);
    assert_eq!(r["messageId"], sent.message_id().unwrap());
    assert_eq!(r["body"], "hello");
    assert_eq!(r["md5OfBody"], sent.md5_of_message_body().unwrap());
    assert_eq!(
        r["md5OfMessageAttributes"],
        sent.md5_of_message_attributes().unwrap()
    );
    assert_eq!(r["eventSource"], "aws:sqs");
    assert_eq!(r["eventSourceARN"], queue_arn("jobs"));
    assert_eq!(r["awsRegion"], REGION);
    assert_eq!(r["attributes"]["ApproximateReceiveCount"], "1");
    assert_eq!(
        r["attributes"]["SentTimestamp"],
        server.now_ms().to_string(),
        "the manual clock has not moved"
    );
    assert_eq!(
        r["attributes"]["ApproximateFirstReceiveTimestamp"],
        server.now_ms().to_string()
    );
    assert!(r["attributes"]["SenderId"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    assert_eq!(
        r["messageAttributes"]["color"],
        serde_json::json!({
            "stringValue": "blue",
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": "String"
        })
    );
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn two_failed_items_return_exactly_those() {
    if single_node_only("mapping pollers") || !rie_available() {
        return;
    }
    let rie = Rie::python("handlers.partial");
    let (server, lambda) = server_with(vec![url_function("partial", &rie.url)]).await;
    let (url, dlq) = queue_with_dlq(&server, "jobs", 1, &[("VisibilityTimeout", "30")]).await;
    send_all(&server, &url, &["ok-1", "fail-2", "ok-3", "fail-4", "ok-5"]).await;
    map_queue(&lambda, "partial", "jobs")
        .batch_size(5)
        .function_response_types(FunctionResponseType::ReportBatchItemFailures)
        .send()
        .await
        .unwrap();
    eventually("the three successes are deleted", || async {
        server.counts(&url).await == (0, 2, 0)
    })
    .await;
    let seen: usize = bodies_per_invocation(&rie).iter().map(Vec::len).sum();
    assert_eq!(seen, 5, "every message reached the handler once");
    // The two failures come back at their visibility timeout; their next
    // receive passes maxReceiveCount 1 and moves them to the DLQ.
    server.advance_secs(31);
    eventually("the failures reach the dead-letter queue", || async {
        server.counts(&dlq).await.0 == 2
    })
    .await;
    assert_eq!(bodies_in(&server, &dlq).await, ["fail-2", "fail-4"]);
    assert_eq!(server.counts(&url).await, (0, 0, 0));
    server.server.shutdown().await.unwrap();
}

/// `aws lambda …` run off the runtime's thread: the server answering it
/// runs in this process.
async fn cli(aws: &std::path::Path, endpoint: &str, args: &[&str]) -> serde_json::Value {
    let (aws, endpoint) = (aws.to_path_buf(), endpoint.to_string());
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        aws_lambda(&aws, &endpoint, &args)
    })
    .await
    .unwrap()
    .unwrap_or_else(|e| panic!("aws lambda failed: {e}"))
}

/// A user's path: the AWS CLI maps a queue to a handler running under the
/// emulator; successes are deleted, a reported failure comes back and is
/// dead-lettered; the CLI lists and deletes the mapping.
#[tokio::test]
async fn the_aws_cli_maps_a_queue_to_a_handler_under_the_emulator() {
    if single_node_only("mapping pollers") || !rie_available() {
        return;
    }
    let Some(aws) = aws_cli() else {
        return;
    };
    let rie = Rie::python("handlers.partial");
    let (server, _) = server_with(vec![url_function("orders", &rie.url)]).await;
    let (url, dlq) = queue_with_dlq(&server, "jobs", 1, &[("VisibilityTimeout", "30")]).await;
    send_all(&server, &url, &["ok-1", "fail-2", "ok-3"]).await;
    let source = queue_arn("jobs");
    let created = cli(
        &aws,
        &server.endpoint,
        &[
            "create-event-source-mapping",
            "--function-name",
            "orders",
            "--event-source-arn",
            &source,
            "--batch-size",
            "3",
            "--function-response-types",
            "ReportBatchItemFailures",
        ],
    )
    .await;
    assert_eq!(created["State"], "Creating", "{created}");
    assert_eq!(created["EventSourceArn"], source.as_str());
    let uuid = created["UUID"].as_str().unwrap().to_string();
    eventually("the two successes are deleted", || async {
        server.counts(&url).await == (0, 1, 0)
    })
    .await;
    server.advance_secs(31);
    eventually("the failure reaches the dead-letter queue", || async {
        server.counts(&dlq).await.0 == 1
    })
    .await;
    assert_eq!(bodies_in(&server, &dlq).await, ["fail-2"]);

    let listed = cli(
        &aws,
        &server.endpoint,
        &["list-event-source-mappings", "--function-name", "orders"],
    )
    .await;
    let mappings = listed["EventSourceMappings"].as_array().unwrap();
    assert_eq!(mappings.len(), 1, "{listed}");
    assert_eq!(mappings[0]["UUID"], uuid.as_str());
    assert_eq!(mappings[0]["State"], "Enabled");
    let deleted = cli(
        &aws,
        &server.endpoint,
        &["delete-event-source-mapping", "--uuid", &uuid],
    )
    .await;
    assert_eq!(deleted["State"], "Deleting", "{deleted}");
}

#[tokio::test]
async fn an_always_failing_handler_dead_letters_after_max_receive_count() {
    if single_node_only("mapping pollers") || !rie_available() {
        return;
    }
    let rie = Rie::python("handlers.always_fail");
    let (server, lambda) = server_with(vec![url_function("fails", &rie.url)]).await;
    let (url, dlq) = queue_with_dlq(&server, "jobs", 2, &[("VisibilityTimeout", "30")]).await;
    server.send(&url, "doomed").await;
    let mapping = map_queue(&lambda, "fails", "jobs").send().await.unwrap();
    let uuid = mapping.uuid().unwrap();
    for attempt in 1..=2 {
        eventually(&format!("invocation {attempt}"), || async {
            bodies_per_invocation(&rie).len() == attempt
        })
        .await;
        eventually("the failure is recorded", || async {
            last_result(&lambda, uuid).await == "PROBLEM: Function call failed"
        })
        .await;
        assert_eq!(server.counts(&url).await, (0, 1, 0), "not deleted");
        server.advance_secs(31);
    }
    eventually("the message reaches the dead-letter queue", || async {
        server.counts(&dlq).await.0 == 1
    })
    .await;
    assert_eq!(
        bodies_per_invocation(&rie).len(),
        2,
        "maxReceiveCount invocations"
    );
    assert_eq!(bodies_in(&server, &dlq).await, ["doomed"]);
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_item_identifier_outside_the_batch_fails_the_whole_batch() {
    if single_node_only("mapping pollers") || !rie_available() {
        return;
    }
    let rie = Rie::python("handlers.stranger");
    let (server, lambda) = server_with(vec![url_function("stranger", &rie.url)]).await;
    let (url, dlq) = queue_with_dlq(&server, "jobs", 1, &[("VisibilityTimeout", "30")]).await;
    send_all(&server, &url, &["a", "b"]).await;
    map_queue(&lambda, "stranger", "jobs")
        .batch_size(2)
        .function_response_types(FunctionResponseType::ReportBatchItemFailures)
        .send()
        .await
        .unwrap();
    eventually("both messages were invoked with", || async {
        bodies_per_invocation(&rie)
            .iter()
            .map(Vec::len)
            .sum::<usize>()
            == 2
    })
    .await;
    common::settle().await;
    assert_eq!(server.counts(&url).await, (0, 2, 0), "nothing deleted");
    server.advance_secs(31);
    eventually("both reach the dead-letter queue", || async {
        server.counts(&dlq).await.0 == 2
    })
    .await;
    assert_eq!(bodies_in(&server, &dlq).await, ["a", "b"]);
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn fifo_groups_arrive_in_order_through_the_emulator() {
    if single_node_only("mapping pollers") || !rie_available() {
        return;
    }
    let rie = Rie::python("handlers.ok");
    let (server, lambda) = server_with(vec![url_function("ok", &rie.url)]).await;
    let url = server
        .create_queue_with(
            "jobs.fifo",
            &[("FifoQueue", "true"), ("ContentBasedDeduplication", "true")],
        )
        .await;
    send_groups(&server, &url, 4).await;
    map_queue(&lambda, "ok", "jobs.fifo")
        .batch_size(2)
        .scaling_config(ScalingConfig::builder().maximum_concurrency(2).build())
        .send()
        .await
        .unwrap();
    eventually("every message is processed", || async {
        server.counts(&url).await == (0, 0, 0)
    })
    .await;
    let order: Vec<String> = bodies_per_invocation(&rie).into_iter().flatten().collect();
    assert_eq!(order.len(), 12, "each message once: {order:?}");
    for group in ["a", "b", "c"] {
        let mine: Vec<&String> = order.iter().filter(|b| b.starts_with(group)).collect();
        let expected: Vec<String> = (0..4).map(|n| format!("{group}-{n}")).collect();
        assert_eq!(mine, expected.iter().collect::<Vec<_>>(), "{order:?}");
    }
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn filter_criteria_pass_matching_records_and_delete_the_rest() {
    if single_node_only("mapping pollers") || !rie_available() {
        return;
    }
    let rie = Rie::python("handlers.ok");
    let (server, lambda) = server_with(vec![url_function("ok", &rie.url)]).await;
    let url = server.create_queue("jobs").await;
    send_all(
        &server,
        &url,
        &[
            r#"{"kind":"order","n":1}"#,
            r#"{"kind":"refund"}"#,
            "plain text",
        ],
    )
    .await;
    map_queue(&lambda, "ok", "jobs")
        .filter_criteria(
            FilterCriteria::builder()
                .filters(
                    Filter::builder()
                        .pattern(r#"{"body":{"kind":["order"]}}"#)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    eventually("every message is gone", || async {
        server.counts(&url).await == (0, 0, 0)
    })
    .await;
    let seen: Vec<String> = bodies_per_invocation(&rie).into_iter().flatten().collect();
    assert_eq!(seen, [r#"{"kind":"order","n":1}"#]);
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn sqs_attributes_the_handler_sees_survive_powertools() {
    if single_node_only("mapping pollers") || !rie_available() {
        return;
    }
    // Powertools' SqsModel parses the whole event, FIFO fields included;
    // a record it refused would fail the batch and leave the message.
    let rie = Rie::python("handlers.ok");
    let (server, lambda) = server_with(vec![url_function("ok", &rie.url)]).await;
    let url = server
        .create_queue_with("jobs.fifo", &[("FifoQueue", "true")])
        .await;
    server
        .client
        .send_message()
        .queue_url(&url)
        .message_group_id("g")
        .message_deduplication_id("d")
        .message_body("fifo")
        .message_attributes("n", common::typed_attr("Number", "7"))
        .message_attributes("b", common::binary_attr("Binary", b"\x00\x01"))
        .send()
        .await
        .unwrap();
    map_queue(&lambda, "ok", "jobs.fifo").send().await.unwrap();
    eventually("the message is processed", || async {
        server.counts(&url).await == (0, 0, 0)
    })
    .await;
    assert_eq!(bodies_per_invocation(&rie), [vec!["fifo".to_string()]]);
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn mappings_and_file_functions_survive_a_restart() {
    use common::process::{retsu, Running};
    let dir = std::env::temp_dir().join(format!("retsu-lambda-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("retsu.toml");
    std::fs::write(
        &file,
        r#"
[[queues]]
name = "jobs"

[[queues]]
name = "other"

[[functions]]
name = "cmd"
command = ["sh", "-c", "cat > /dev/null"]
timeout = 5

[[event_source_mappings]]
function = "cmd"
queue = "jobs"
enabled = false
batch_size = 7
report_batch_item_failures = true
"#,
    )
    .unwrap();
    let start = || {
        Running::start_on_free_port(|port| {
            let mut command = retsu();
            command
                .args(["--port", &port.to_string(), "--config"])
                .arg(&file)
                .arg("--data-dir")
                .arg(dir.join("data"));
            command
        })
    };
    let mut first = start();
    let lambda = lambda::client(&first.endpoint());
    let function = lambda
        .get_function()
        .function_name("cmd")
        .send()
        .await
        .unwrap();
    assert_eq!(function.configuration().unwrap().timeout(), Some(5));
    let declared = lambda.list_event_source_mappings().send().await.unwrap();
    let declared = declared.event_source_mappings();
    assert_eq!(declared.len(), 1, "the file's mapping");
    assert_eq!(declared[0].batch_size(), Some(7));
    assert_eq!(declared[0].state(), Some("Disabled"));
    let declared_uuid = declared[0].uuid().unwrap().to_string();
    // Changed through the API: the file brings it back at the next start.
    lambda
        .update_event_source_mapping()
        .uuid(&declared_uuid)
        .batch_size(9)
        .send()
        .await
        .unwrap();
    let created = map_queue(&lambda, "cmd", "other")
        .enabled(false)
        .batch_size(4)
        .send()
        .await
        .unwrap();
    let uuid = created.uuid().unwrap().to_string();
    first.signal("TERM");
    assert!(first.exit_status(Duration::from_secs(20)).await.success());

    let second = start();
    let lambda = lambda::client(&second.endpoint());
    let kept = lambda
        .get_event_source_mapping()
        .uuid(&uuid)
        .send()
        .await
        .unwrap();
    assert_eq!(kept.state(), Some("Disabled"));
    assert_eq!(kept.batch_size(), Some(4));
    assert_eq!(kept.event_source_arn(), Some(queue_arn("other").as_str()));
    let again = lambda
        .get_event_source_mapping()
        .uuid(&declared_uuid)
        .send()
        .await
        .unwrap();
    assert_eq!(again.batch_size(), Some(7), "the file's setting again");
    assert_eq!(
        again.function_response_types(),
        &[FunctionResponseType::ReportBatchItemFailures]
    );
    let all = lambda.list_event_source_mappings().send().await.unwrap();
    assert_eq!(
        all.event_source_mappings().len(),
        2,
        "no duplicate of the file's"
    );
    drop(second);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn fifo_groups_keep_one_batch_in_flight_each() {
    if single_node_only("mapping pollers") {
        return;
    }
    // A command function taking three invocations at once: each logs when
    // it started and ended and the groups it held.
    let log = std::env::temp_dir().join(format!("retsu-lambda-{}.log", uuid::Uuid::new_v4()));
    let script = format!(
        r#"import json, sys, time
start = time.time()
event = json.load(sys.stdin)
time.sleep(0.05)
bodies = [r["body"] for r in event["Records"]]
with open("{}", "a") as f:
    f.write(json.dumps([start, time.time(), bodies]) + "\n")
"#,
        log.display()
    );
    let function = FunctionTarget::with_command(
        "groups",
        vec!["python3".into(), "-c".into(), script],
        Default::default(),
        10,
    )
    .unwrap()
    .with_concurrency(3)
    .unwrap();
    let (server, lambda) = server_with(vec![function]).await;
    let url = server
        .create_queue_with(
            "jobs.fifo",
            &[("FifoQueue", "true"), ("ContentBasedDeduplication", "true")],
        )
        .await;
    send_groups(&server, &url, 6).await;
    map_queue(&lambda, "groups", "jobs.fifo")
        .batch_size(2)
        .scaling_config(ScalingConfig::builder().maximum_concurrency(3).build())
        .send()
        .await
        .unwrap();
    eventually("every message is processed", || async {
        server.counts(&url).await == (0, 0, 0)
    })
    .await;
    let runs: Vec<(f64, f64, Vec<String>)> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let _ = std::fs::remove_file(&log);
    let mut by_start = runs.clone();
    by_start.sort_by(|a, b| a.0.total_cmp(&b.0));
    for group in ["a", "b", "c"] {
        let held: Vec<&(f64, f64, Vec<String>)> = by_start
            .iter()
            .filter(|r| r.2.iter().any(|b| b.starts_with(group)))
            .collect();
        let order: Vec<&String> = held
            .iter()
            .flat_map(|r| r.2.iter().filter(|b| b.starts_with(group)))
            .collect();
        let expected: Vec<String> = (0..6).map(|n| format!("{group}-{n}")).collect();
        assert_eq!(order, expected.iter().collect::<Vec<_>>(), "{runs:?}");
        for pair in held.windows(2) {
            assert!(
                pair[1].0 >= pair[0].1,
                "two batches of group {group} overlapped: {runs:?}"
            );
        }
    }
    let overlapped = by_start.windows(2).any(|w| w[1].0 < w[0].1);
    assert!(overlapped, "no two groups ran at once: {runs:?}");
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_handler_past_its_timeout_fails_the_batch() {
    if single_node_only("mapping pollers") || !rie_available() {
        return;
    }
    let rie = Rie::python("handlers.hang");
    let function = FunctionTarget::with_url("hang", &rie.url, Default::default(), 1).unwrap();
    let (server, lambda) = server_with(vec![function]).await;
    let url = server
        .create_queue_with("jobs", &[("VisibilityTimeout", "30")])
        .await;
    server.send(&url, "slow").await;
    let mapping = map_queue(&lambda, "hang", "jobs").send().await.unwrap();
    let uuid = mapping.uuid().unwrap();
    eventually("the invocation timed out", || async {
        last_result(&lambda, uuid).await == "PROBLEM: Function call failed"
    })
    .await;
    assert_eq!(bodies_per_invocation(&rie).len(), 1);
    assert_eq!(
        server.counts(&url).await,
        (0, 1, 0),
        "in flight, not deleted"
    );
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn malformed_json_from_the_handler_fails_the_whole_batch() {
    if single_node_only("mapping pollers") {
        return;
    }
    let function = FunctionTarget::with_command(
        "garbled",
        vec![
            "sh".into(),
            "-c".into(),
            "cat > /dev/null; echo '{not json'".into(),
        ],
        Default::default(),
        5,
    )
    .unwrap();
    let (server, lambda) = server_with(vec![function]).await;
    let url = server
        .create_queue_with("jobs", &[("VisibilityTimeout", "30")])
        .await;
    send_all(&server, &url, &["a", "b"]).await;
    let mapping = map_queue(&lambda, "garbled", "jobs")
        .batch_size(2)
        .function_response_types(FunctionResponseType::ReportBatchItemFailures)
        .send()
        .await
        .unwrap();
    let uuid = mapping.uuid().unwrap();
    eventually("the batch failed", || async {
        last_result(&lambda, uuid).await == "PROBLEM: Function call failed"
    })
    .await;
    assert_eq!(server.counts(&url).await, (0, 2, 0), "nothing deleted");
    server.server.shutdown().await.unwrap();
}
