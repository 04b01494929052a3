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

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use aws_sdk_lambda::types::FunctionResponseType;
use common::process::free_port;
use common::{queue_arn, TestServer, REGION};
use retsu::config::Config;
use retsu::lambda::FunctionTarget;

fn lambda_client(endpoint: &str) -> aws_sdk_lambda::Client {
    let config = aws_sdk_lambda::Config::builder()
        .behavior_version(aws_sdk_lambda::config::BehaviorVersion::latest())
        .region(aws_sdk_lambda::config::Region::new(REGION))
        .credentials_provider(aws_sdk_lambda::config::Credentials::new(
            "test", "test", None, None, "static",
        ))
        .endpoint_url(endpoint)
        .retry_config(aws_sdk_lambda::config::retry::RetryConfig::disabled())
        .build();
    aws_sdk_lambda::Client::from_conf(config)
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `scripts/lambda-rie.sh <step>` once per test binary; `false`
/// (after saying why) when this machine cannot.
fn setup(step: &'static str, ready: &'static OnceLock<bool>) -> bool {
    *ready.get_or_init(|| {
        let out = std::process::Command::new("bash")
            .arg(root().join("scripts/lambda-rie.sh"))
            .arg(step)
            .output()
            .expect("bash runs");
        let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
        match out.status.code() {
            Some(0) => true,
            Some(3) => {
                eprintln!("{said}: the runtime interface emulator tests ({step}) are skipped");
                false
            }
            _ => panic!(
                "scripts/lambda-rie.sh {step} failed: {said}\n{}",
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    })
}

fn node_available() -> bool {
    static READY: OnceLock<bool> = OnceLock::new();
    setup("setup-node", &READY)
}

fn python_available() -> bool {
    static READY: OnceLock<bool> = OnceLock::new();
    setup("setup", &READY)
}

/// The data-plane tests run on one node: a cluster's pollers run on the
/// node holding the lease, which these tests do not pick.
fn single_node_only() -> bool {
    if common::in_cluster() {
        eprintln!("skipped in a cluster: mapping pollers are tested on a single node");
        return true;
    }
    false
}

/// AWS's runtime interface emulator running one handler; dropped, it is
/// stopped.
struct Rie {
    child: std::process::Child,
    url: String,
    log: PathBuf,
}

enum Runtime {
    /// tests/lambda/handlers.mjs under aws-lambda-ric.
    Node,
    /// tests/lambda/records.py under awslambdaric.
    Python,
}

impl Rie {
    fn start(runtime: Runtime, handler: &str) -> Rie {
        let (step, file) = match runtime {
            Runtime::Node => ("run-node", "handlers"),
            Runtime::Python => ("run", "records"),
        };
        let port = free_port();
        let log = std::env::temp_dir().join(format!("retsu-lambda-{}.log", uuid::Uuid::new_v4()));
        let child = std::process::Command::new("bash")
            .arg(root().join("scripts/lambda-rie.sh"))
            .args([step, &format!("127.0.0.1:{port}")])
            .arg(root().join("tests/lambda"))
            .arg(format!("{file}.{handler}"))
            .env("LAMBDA_LOG", &log)
            // Emulators run side by side: each its own Runtime API port.
            .env("RIE_RUNTIME_API", format!("127.0.0.1:{}", free_port()))
            .env("AWS_LAMBDA_FUNCTION_TIMEOUT", "30")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the emulator starts");
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the emulator did not listen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Rie {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log,
        }
    }

    /// Each invocation's event, as the handler wrote it back.
    fn events(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Rie {
    fn drop(&mut self) {
        // SIGTERM: the emulator stops its runtime process with it.
        let _ = std::process::Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

fn url_function(name: &str, url: &str) -> FunctionTarget {
    FunctionTarget::with_url(name, url, Default::default(), 30).unwrap()
}

async fn server_with(functions: Vec<FunctionTarget>) -> (TestServer, aws_sdk_lambda::Client) {
    let server = TestServer::start_with(Config {
        functions,
        ..Config::ephemeral()
    })
    .await;
    let lambda = lambda_client(&server.endpoint);
    (server, lambda)
}

/// Waits (real time, bounded) until `check` holds: the handler runs in
/// another process, so its effects arrive when they arrive.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

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
    if single_node_only() || !node_available() || !python_available() {
        return;
    }
    let node = Rie::start(Runtime::Node, "record");
    let python = Rie::start(Runtime::Python, "record");
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
    let (node_events, python_events) = (node.events(), python.events());
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
    if single_node_only() || !node_available() {
        return;
    }
    let rie = Rie::start(Runtime::Node, "partial");
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
        .events()
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
