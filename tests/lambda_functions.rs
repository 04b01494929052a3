//! Lambda functions made while the server runs: `CreateFunction`,
//! `GetFunction`, `ListFunctions` and `DeleteFunction` through the
//! official `aws-sdk-lambda` client (the invoke endpoint in the
//! function's environment variable `RETSU_INVOKE_URL`), botocore's and
//! Lambda's refusals of bad requests, the admin API's
//! `/_retsu/functions`, and made functions surviving a restart with the
//! mappings that name them.
//!
//! The handler is a plain HTTP server of the test's own speaking the
//! Invoke API (an event in, `{"batchItemFailures": []}` out), which the
//! issue counts among the targets; the runtime interface emulator's
//! tests are tests/lambda.rs and tests/lambda_node.rs.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_sdk_lambda::error::ProvideErrorMetadata;
use aws_sdk_lambda::primitives::Blob;
use aws_sdk_lambda::types::{Environment, FunctionCode, Runtime};
use base64::Engine as _;
use common::lambda::{self, eventually};
use common::process::free_port;
use common::{queue_arn, TestServer, ACCOUNT, REGION};
use reqwest::Method;
use retsu::config::Config;
use retsu::lambda::FunctionTarget;
use serde_json::{json, Value};
use sha2::Digest;

const ROLE: &str = "arn:aws:iam::000000000000:role/lambda-role";

/// A handler speaking the Invoke API on loopback: it keeps each event's
/// message bodies and answers with no failed items.
struct Handler {
    url: String,
    seen: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Handler {
    async fn start() -> Handler {
        Handler::on(free_port()).await
    }

    async fn on(port: u16) -> Handler {
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let kept = seen.clone();
        let app = axum::Router::new().route(
            "/2015-03-31/functions/function/invocations",
            axum::routing::post(move |body: axum::body::Bytes| {
                let kept = kept.clone();
                async move {
                    let event: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    for r in event["Records"].as_array().into_iter().flatten() {
                        kept.lock()
                            .unwrap()
                            .push(r["body"].as_str().unwrap_or_default().to_string());
                    }
                    r#"{"batchItemFailures":[]}"#
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Handler {
            url: format!("http://127.0.0.1:{port}"),
            seen,
            task,
        }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Handler {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn environment(url: &str) -> Environment {
    Environment::builder()
        .variables("RETSU_INVOKE_URL", url)
        .variables("GREETING", "hello")
        .build()
}

#[tokio::test]
async fn created_functions_are_described_listed_invoked_and_deleted() {
    let handler = Handler::start().await;
    let server = TestServer::start().await;
    let lambda = lambda::client(&server.endpoint);
    let zip = b"PK\x03\x04 not really a zip".to_vec();
    let created = lambda
        .create_function()
        .function_name("orders")
        .role(ROLE)
        .runtime(Runtime::Python312)
        .handler("app.handler")
        .code(
            FunctionCode::builder()
                .zip_file(Blob::new(zip.clone()))
                .build(),
        )
        .environment(environment(&handler.url))
        .timeout(10)
        .memory_size(256)
        .description("the orders consumer")
        .tags("team", "billing")
        .send()
        .await
        .unwrap();
    let arn = format!("arn:aws:lambda:{REGION}:{ACCOUNT}:function:orders");
    assert_eq!(created.function_name(), Some("orders"));
    assert_eq!(created.function_arn(), Some(arn.as_str()));
    assert_eq!(created.role(), Some(ROLE));
    assert_eq!(created.runtime(), Some(&Runtime::Python312));
    assert_eq!(created.handler(), Some("app.handler"));
    assert_eq!(created.timeout(), Some(10));
    assert_eq!(created.memory_size(), Some(256));
    assert_eq!(created.description(), Some("the orders consumer"));
    assert_eq!(created.code_size(), zip.len() as i64);
    let sha = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(&zip));
    assert_eq!(created.code_sha256(), Some(sha.as_str()));
    assert_eq!(created.version(), Some("$LATEST"));
    assert_eq!(created.state(), Some(&aws_sdk_lambda::types::State::Active));
    assert!(created
        .last_modified()
        .is_some_and(|t| t.ends_with("+0000")));
    let variables = created.environment().unwrap().variables().unwrap();
    assert_eq!(variables["GREETING"], "hello");

    let got = lambda
        .get_function()
        .function_name(&arn)
        .send()
        .await
        .unwrap();
    assert_eq!(got.configuration().unwrap().memory_size(), Some(256));
    assert_eq!(got.tags().unwrap()["team"], "billing");

    // A second one, and a declared-free listing, paged one at a time.
    lambda
        .create_function()
        .function_name("audit")
        .role(ROLE)
        .package_type(aws_sdk_lambda::types::PackageType::Image)
        .code(FunctionCode::builder().image_uri("123.dkr.ecr/x:1").build())
        .environment(environment(&handler.url))
        .send()
        .await
        .unwrap();
    let mut names = Vec::new();
    let mut marker = None;
    loop {
        let page = lambda
            .list_functions()
            .max_items(1)
            .set_marker(marker)
            .send()
            .await
            .unwrap();
        assert!(page.functions().len() <= 1);
        names.extend(
            page.functions()
                .iter()
                .map(|f| f.function_name().unwrap().to_string()),
        );
        marker = page.next_marker().map(str::to_string);
        if marker.is_none() {
            break;
        }
    }
    assert_eq!(names, ["audit", "orders"]);

    if !common::in_cluster() {
        // A mapping to the made function invokes it at RETSU_INVOKE_URL.
        // (In a cluster the pollers run on the lease holder: see
        // tests/lambda.rs.)
        let url = server.create_queue("jobs").await;
        server.send(&url, "first").await;
        lambda
            .create_event_source_mapping()
            .function_name("orders")
            .event_source_arn(queue_arn("jobs"))
            .send()
            .await
            .unwrap();
        eventually("the handler got the message and it was deleted", || async {
            handler.seen() == ["first"] && server.counts(&url).await == (0, 0, 0)
        })
        .await;
    }

    lambda
        .delete_function()
        .function_name("orders")
        .send()
        .await
        .unwrap();
    let gone = lambda
        .get_function()
        .function_name("orders")
        .send()
        .await
        .unwrap_err();
    assert_eq!(gone.code(), Some("ResourceNotFoundException"));
    assert_eq!(
        gone.message(),
        Some(format!("Function not found: {arn}").as_str())
    );
    let again = lambda
        .delete_function()
        .function_name("orders")
        .send()
        .await
        .unwrap_err();
    assert_eq!(again.code(), Some("ResourceNotFoundException"));
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn bad_create_function_requests_get_lambdas_errors() {
    let declared =
        FunctionTarget::with_url("declared", "http://127.0.0.1:1", Default::default(), 3).unwrap();
    let server = TestServer::start_with(Config {
        functions: vec![declared],
        ..Config::ephemeral()
    })
    .await;
    let lambda = lambda::client(&server.endpoint);
    let base = || {
        lambda
            .create_function()
            .role(ROLE)
            .runtime(Runtime::Nodejs22x)
            .handler("index.handler")
            .code(FunctionCode::builder().zip_file(Blob::new("x")).build())
            .environment(environment("http://127.0.0.1:9"))
    };
    use aws_sdk_lambda::operation::create_function::CreateFunctionError;
    let create_error = |e: aws_sdk_lambda::error::SdkError<CreateFunctionError, _>| {
        let e = e.into_service_error();
        (
            e.code().unwrap_or_default().to_string(),
            e.message().unwrap_or_default().to_string(),
        )
    };

    let (code, message) = create_error(base().function_name("a b").send().await.unwrap_err());
    assert_eq!(code, "ValidationException");
    assert!(
        message.starts_with("1 validation error detected: Value 'a b' at 'functionName' failed to satisfy constraint: Member must satisfy regular expression pattern:"),
        "{message}"
    );
    let (code, message) = create_error(
        base()
            .function_name("x".repeat(65))
            .send()
            .await
            .unwrap_err(),
    );
    assert_eq!(code, "ValidationException", "{message}");
    let (code, message) = create_error(
        base()
            .function_name("f")
            .role("not-a-role")
            .timeout(0)
            .memory_size(64)
            .send()
            .await
            .unwrap_err(),
    );
    assert_eq!(code, "ValidationException");
    assert!(
        message.starts_with("3 validation errors detected: "),
        "{message}"
    );
    assert!(message.contains("at 'role'"), "{message}");
    assert!(message.contains("at 'timeout'"), "{message}");
    assert!(message.contains("at 'memorySize'"), "{message}");
    let (code, _) = create_error(
        base()
            .function_name("f")
            .timeout(901)
            .send()
            .await
            .unwrap_err(),
    );
    assert_eq!(code, "ValidationException");
    let (code, message) = create_error(
        base()
            .function_name("f")
            .environment(Environment::builder().variables("OTHER", "1").build())
            .send()
            .await
            .unwrap_err(),
    );
    assert_eq!(code, "InvalidParameterValueException");
    assert!(message.contains("RETSU_INVOKE_URL"), "{message}");
    let (code, message) = create_error(
        base()
            .function_name("f")
            .environment(environment("ftp://somewhere"))
            .send()
            .await
            .unwrap_err(),
    );
    assert_eq!(code, "InvalidParameterValueException", "{message}");
    let (code, _) = create_error(
        lambda
            .create_function()
            .function_name("f")
            .role(ROLE)
            .code(FunctionCode::builder().zip_file(Blob::new("x")).build())
            .environment(environment("http://127.0.0.1:9"))
            .send()
            .await
            .unwrap_err(),
    );
    assert_eq!(
        code, "InvalidParameterValueException",
        "Zip needs a runtime"
    );

    // Missing required members, as a client without botocore's checks
    // sends them.
    let raw = server
        .raw(
            server
                .http
                .post(format!("{}/2015-03-31/functions", server.endpoint))
                .body(r#"{"FunctionName":"f"}"#),
        )
        .await;
    assert_eq!(raw.status, 400);
    assert_eq!(raw.header("x-amzn-errortype"), Some("ValidationException"));
    let message = raw.json()["Message"].as_str().unwrap().to_string();
    assert!(
        message.starts_with("2 validation errors detected: "),
        "{message}"
    );
    assert!(message.contains("Value null at 'role'"), "{message}");
    assert!(message.contains("Value null at 'code'"), "{message}");

    // Nothing was made by any of them.
    let listed = lambda.list_functions().send().await.unwrap();
    let names: Vec<&str> = listed
        .functions()
        .iter()
        .filter_map(|f| f.function_name())
        .collect();
    assert_eq!(names, ["declared"]);

    // A name taken, by a made function or a declared one.
    base().function_name("made").send().await.unwrap();
    for taken in ["made", "declared"] {
        let (code, message) = create_error(base().function_name(taken).send().await.unwrap_err());
        assert_eq!(code, "ResourceConflictException");
        assert_eq!(message, format!("Function already exist: {taken}"));
    }
    let e = lambda
        .delete_function()
        .function_name("declared")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("ResourceConflictException"));
    let e = lambda
        .delete_function()
        .function_name("nobody")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("ResourceNotFoundException"));
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_admin_api_lists_makes_replaces_and_removes_functions() {
    let declared =
        FunctionTarget::with_url("declared", "http://127.0.0.1:1", Default::default(), 3).unwrap();
    let server = TestServer::start_with(Config {
        functions: vec![declared],
        ..Config::ephemeral()
    })
    .await;
    let (status, body) = server.admin(Method::GET, "/_retsu/functions", None).await;
    assert_eq!(status, 200);
    assert_eq!(body["functions"].as_array().unwrap().len(), 1);
    assert_eq!(body["functions"][0]["name"], "declared");
    assert_eq!(body["functions"][0]["origin"], "config");

    let (status, made) = server
        .admin(
            Method::PUT,
            "/_retsu/functions/worker",
            Some(json!({"command": ["cat"], "environment": {"A": "1"}, "timeout": 9, "concurrency": 2})),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(
        made,
        json!({
            "name": "worker",
            "arn": format!("arn:aws:lambda:{REGION}:{ACCOUNT}:function:worker"),
            "origin": "admin",
            "timeout": 9,
            "concurrency": 2,
            "environment": {"A": "1"},
            "command": ["cat"],
        })
    );
    let (status, replaced) = server
        .admin(
            Method::PUT,
            "/_retsu/functions/worker",
            Some(json!({"url": "http://127.0.0.1:9"})),
        )
        .await;
    assert_eq!(status, 200, "{replaced}");
    assert_eq!(
        replaced["url"],
        "http://127.0.0.1:9/2015-03-31/functions/function/invocations"
    );
    assert_eq!(replaced["timeout"], 3);
    // Lambda's API sees it too (on one node: in a cluster the Lambda
    // client's connection may reach another node than the admin call's,
    // and functions, like mappings, live on the node that made them).
    if !common::in_cluster() {
        let lambda = lambda::client(&server.endpoint);
        let got = lambda
            .get_function()
            .function_name("worker")
            .send()
            .await
            .unwrap();
        assert_eq!(got.configuration().unwrap().timeout(), Some(3));
    }

    for (body, why) in [
        (json!({}), "needs a \"url\" or a \"command\""),
        (json!({"url": "http://h", "command": ["x"]}), "not both"),
        (json!({"url": "ftp://h"}), "must start with http"),
        (json!({"command": []}), "is empty"),
        (json!({"url": "http://h", "timeout": 0}), "1 to 900"),
        (json!({"url": "http://h", "concurrency": 0}), "1 to 1000"),
        (
            json!({"url": "http://h", "environment": {"A": 1}}),
            "must be a string",
        ),
        (json!({"url": "http://h", "color": "red"}), "unknown field"),
    ] {
        let (status, answer) = server
            .admin(Method::PUT, "/_retsu/functions/bad", Some(body.clone()))
            .await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], "BadRequest");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(why), "{body}: {message}");
    }
    let (status, answer) = server
        .admin(
            Method::PUT,
            "/_retsu/functions/a%20b",
            Some(json!({"url": "http://h"})),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = server
        .admin(
            Method::PUT,
            "/_retsu/functions/declared",
            Some(json!({"url": "http://h"})),
        )
        .await;
    assert_eq!(status, 409);
    assert_eq!(answer["error"]["code"], "Conflict");
    let (status, _) = server
        .admin(Method::DELETE, "/_retsu/functions/declared", None)
        .await;
    assert_eq!(status, 409);
    let (status, answer) = server
        .admin(Method::GET, "/_retsu/functions/bad", None)
        .await;
    assert_eq!(status, 404, "nothing was made by a refused PUT: {answer}");
    assert_eq!(answer["error"]["code"], "NotFound");

    let (status, answer) = server
        .admin(Method::DELETE, "/_retsu/functions/worker", None)
        .await;
    assert_eq!((status, answer), (200, json!({"deleted": true})));
    let (status, _) = server
        .admin(Method::DELETE, "/_retsu/functions/worker", None)
        .await;
    assert_eq!(status, 404);
    let (_, body) = server.admin(Method::GET, "/_retsu/functions", None).await;
    assert_eq!(body["functions"].as_array().unwrap().len(), 1);
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_admin_function_replaced_moves_its_mappings_to_the_new_target() {
    if common::in_cluster() {
        eprintln!("skipped in a cluster: mapping pollers are tested on a single node");
        return;
    }
    let old = Handler::start().await;
    let new = Handler::start().await;
    let server = TestServer::start().await;
    let put = |url: String| {
        let server = &server;
        async move {
            server
                .admin(
                    Method::PUT,
                    "/_retsu/functions/worker",
                    Some(json!({ "url": url })),
                )
                .await
                .0
        }
    };
    assert_eq!(put(old.url.clone()).await, 201);
    let url = server.create_queue("jobs").await;
    lambda::client(&server.endpoint)
        .create_event_source_mapping()
        .function_name("worker")
        .event_source_arn(queue_arn("jobs"))
        .send()
        .await
        .unwrap();
    server.send(&url, "one").await;
    eventually("the old target got the first", || async {
        old.seen() == ["one"] && server.counts(&url).await == (0, 0, 0)
    })
    .await;
    assert_eq!(put(new.url.clone()).await, 200);
    server.send(&url, "two").await;
    eventually("the new target got the second", || async {
        new.seen() == ["two"] && server.counts(&url).await == (0, 0, 0)
    })
    .await;
    assert_eq!(old.seen(), ["one"]);
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn made_functions_and_their_mappings_survive_a_restart() {
    use common::process::{retsu, Running};
    let handler = Handler::start().await;
    let dir = std::env::temp_dir().join(format!("retsu-lambda-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let start = || {
        Running::start_on_free_port(|port| {
            let mut command = retsu();
            command
                .args(["--port", &port.to_string(), "--data-dir"])
                .arg(dir.join("data"));
            command
        })
    };
    let mut first = start();
    let lambda = lambda::client(&first.endpoint());
    let sqs = first.client(REGION);
    let queue = sqs
        .create_queue()
        .queue_name("jobs")
        .send()
        .await
        .unwrap()
        .queue_url()
        .unwrap()
        .to_string();
    lambda
        .create_function()
        .function_name("orders")
        .role(ROLE)
        .runtime(Runtime::Nodejs22x)
        .handler("index.handler")
        .code(FunctionCode::builder().zip_file(Blob::new("z")).build())
        .environment(environment(&handler.url))
        .timeout(7)
        .send()
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let made = http
        .put(format!("{}/_retsu/functions/worker", first.endpoint()))
        .body(json!({"command": ["cat"], "timeout": 4}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(made.status(), 201);
    let uuid = lambda
        .create_event_source_mapping()
        .function_name("orders")
        .event_source_arn(queue_arn("jobs"))
        .send()
        .await
        .unwrap()
        .uuid()
        .unwrap()
        .to_string();
    first.signal("TERM");
    assert!(first.exit_status(Duration::from_secs(20)).await.success());

    let second = start();
    let lambda = lambda::client(&second.endpoint());
    let kept = lambda
        .get_function()
        .function_name("orders")
        .send()
        .await
        .unwrap();
    let configuration = kept.configuration().unwrap();
    assert_eq!(configuration.timeout(), Some(7));
    assert_eq!(configuration.role(), Some(ROLE));
    assert_eq!(configuration.runtime(), Some(&Runtime::Nodejs22x));
    let worker = lambda
        .get_function()
        .function_name("worker")
        .send()
        .await
        .unwrap();
    assert_eq!(worker.configuration().unwrap().timeout(), Some(4));
    let mapping = lambda
        .get_event_source_mapping()
        .uuid(&uuid)
        .send()
        .await
        .unwrap();
    assert_eq!(mapping.state(), Some("Enabled"));
    // The kept mapping polls the kept function.
    second
        .client(REGION)
        .send_message()
        .queue_url(&queue)
        .message_body("after the restart")
        .send()
        .await
        .unwrap();
    eventually("the kept mapping invoked the kept function", || async {
        handler.seen() == ["after the restart"]
    })
    .await;
    drop(second);
    let _ = std::fs::remove_dir_all(&dir);
}
