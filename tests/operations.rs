//! Running Retsu for real: the configuration file, `check-config`, the
//! start-up line, JSON logs, `GET /health` and `retsu health`.
//!
//! Most of these run the real binary (start-up, exit codes and logs are
//! the point); they wait only for the process to start and stop.

mod common;

use std::process::Output;
use std::time::Duration;

use aws_sdk_sqs::types::QueueAttributeName;
use common::process::{free_port, retsu, Running};
use common::{send_via, TestServer};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/retsu.toml");

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn write_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("retsu-ops-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn health_answers_ok_and_leaves_sqs_alone() {
    let t = TestServer::start().await;
    let resp = t
        .http
        .get(format!("{}/health", t.endpoint))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.text().await.unwrap(), "ok");
    // Other methods on /health still reach the SQS handler.
    let raw = t.form_post("/health", &[("Action", "ListQueues")]).await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert!(raw.body.contains("ListQueuesResponse"), "{}", raw.body);
    // The probe `retsu health` uses, in-process.
    let endpoint = t.endpoint.clone();
    tokio::task::spawn_blocking(move || {
        retsu::cli::probe_health(&endpoint, Duration::from_secs(5))
    })
    .await
    .unwrap()
    .unwrap();
}

#[tokio::test]
async fn starts_with_the_example_file_queues_wired_by_name() {
    // The flag beats the file's port 9324.
    let retsu = Running::start_on_free_port(|port| {
        let mut command = retsu();
        command.args(["--config", EXAMPLE, "--port", &port.to_string()]);
        command
    });
    let port = retsu.port;

    let ready = retsu.line_with("retsu ready");
    for needle in [
        format!("address=http://127.0.0.1:{port}"),
        format!("version={}", env!("CARGO_PKG_VERSION")),
        "storage=\"in memory\"".into(),
        "examples/retsu.toml".into(),
        "queues=4".into(),
        " INFO ".into(),
    ] {
        assert!(ready.contains(&needle), "{needle} not in {ready}");
    }

    let client = retsu.client("us-east-1");
    let urls = client.list_queues().send().await.unwrap();
    let mut names: Vec<String> = urls
        .queue_urls()
        .iter()
        .map(|u| u.rsplit('/').next().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["jobs", "jobs-dlq", "orders.fifo"]);

    let jobs = format!("{}/000000000000/jobs", retsu.endpoint());
    let dlq = format!("{}/000000000000/jobs-dlq", retsu.endpoint());
    let attrs = client
        .get_queue_attributes()
        .queue_url(&jobs)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .unwrap();
    let attrs = attrs.attributes().unwrap();
    assert_eq!(attrs[&QueueAttributeName::VisibilityTimeout], "45");
    assert_eq!(
        attrs[&QueueAttributeName::ReceiveMessageWaitTimeSeconds],
        "10"
    );
    assert_eq!(
        attrs[&QueueAttributeName::RedrivePolicy],
        r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:jobs-dlq","maxReceiveCount":5}"#
    );
    let tags = client
        .list_queue_tags()
        .queue_url(&jobs)
        .send()
        .await
        .unwrap();
    assert_eq!(tags.tags().unwrap()["team"], "payments");
    let sources = client
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .send()
        .await
        .unwrap();
    assert_eq!(sources.queue_urls(), std::slice::from_ref(&jobs));

    // The wiring works: the 6th receive moves the message to jobs-dlq.
    send_via(&client, &jobs, "poison").await;
    for _ in 0..5 {
        let got = client
            .receive_message()
            .queue_url(&jobs)
            .visibility_timeout(0)
            .wait_time_seconds(0)
            .send()
            .await
            .unwrap();
        assert_eq!(got.messages().len(), 1);
    }
    let got = client
        .receive_message()
        .queue_url(&jobs)
        .wait_time_seconds(0)
        .send()
        .await
        .unwrap();
    assert!(got.messages().is_empty());
    let dead = client
        .receive_message()
        .queue_url(&dlq)
        .send()
        .await
        .unwrap();
    assert_eq!(dead.messages()[0].body(), Some("poison"));

    // The FIFO queue from its name, and the queue in another region/account.
    let fifo = client
        .get_queue_attributes()
        .queue_url(format!("{}/000000000000/orders.fifo", retsu.endpoint()))
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .unwrap();
    let fifo = fifo.attributes().unwrap();
    assert_eq!(fifo[&QueueAttributeName::FifoQueue], "true");
    assert_eq!(fifo[&QueueAttributeName::ContentBasedDeduplication], "true");
    let eu = retsu.client("eu-west-1");
    let audit = eu
        .get_queue_url()
        .queue_name("audit")
        .queue_owner_aws_account_id("111122223333")
        .send()
        .await
        .unwrap();
    // A queue outside the default region: its URL names the region.
    assert_eq!(
        audit.queue_url(),
        Some(format!("{}/queue/eu-west-1/111122223333/audit", retsu.endpoint()).as_str())
    );
}

#[tokio::test]
async fn json_logs_one_object_per_line() {
    let retsu = Running::start_on_free_port(|port| {
        let mut command = retsu();
        command
            .args(["--log-format", "json", "--log-level", "debug"])
            .env("RETSU_PORT", port.to_string());
        command
    });
    let ready: serde_json::Value =
        serde_json::from_str(&retsu.line_with("retsu ready")).expect("JSON line");
    assert_eq!(ready["level"], "INFO");
    assert_eq!(ready["fields"]["message"], "retsu ready");
    assert_eq!(ready["fields"]["storage"], "in memory");
    assert_eq!(ready["fields"]["config"], "none");
    assert_eq!(ready["fields"]["queues"], 0);
    assert_eq!(ready["fields"]["version"], env!("CARGO_PKG_VERSION"));

    // The per-request debug line, as JSON too.
    let client = retsu.client("us-east-1");
    client.list_queues().send().await.unwrap();
    let request: serde_json::Value =
        serde_json::from_str(&retsu.line_with("ListQueues")).expect("JSON line");
    assert_eq!(request["level"], "DEBUG");
    assert_eq!(request["fields"]["action"], "ListQueues");
    assert_eq!(request["fields"]["status"], 200);
}

#[test]
fn environment_beats_the_file_and_flags_beat_the_environment() {
    let file = write_file(
        "precedence.toml",
        "port = 9500\nregion = \"eu-west-1\"\naccount_id = \"123456789012\"\nlog_level = \"warn\"\n",
    );
    let out = retsu()
        .env("RETSU_PORT", "9600")
        .env("RETSU_REGION", "ap-south-1")
        .env(
            "RETSU_CONFIG",
            "/nonexistent/ignored-because-check-config-names-a-file.toml",
        )
        .args(["--region", "us-west-2", "check-config"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("listen         127.0.0.1:9600"),
        "env beats file:\n{text}"
    );
    assert!(
        text.contains("region         us-west-2"),
        "flag beats env:\n{text}"
    );
    assert!(
        text.contains("account_id     123456789012"),
        "file beats default:\n{text}"
    );
    assert!(text.contains("log_level      warn"), "{text}");
    assert!(text.contains("log_format     text"), "default:\n{text}");
}

#[test]
fn check_config_validates_without_starting() {
    let out = retsu().args(["check-config", EXAMPLE]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("examples/retsu.toml: ok"), "{text}");
    assert!(
        text.contains("queues         4 (created in this order: us-east-1/000000000000/jobs-dlq, us-east-1/000000000000/jobs,"),
        "{text}"
    );

    let bad = write_file(
        "bad-attribute.toml",
        "[[queues]]\nname = \"jobs\"\n\n[queues.attributes]\nMessageRetentionPeriod = 10\n",
    );
    let out = retsu().arg("check-config").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{}, line 5, column 26: queue \"jobs\": InvalidAttributeValue: Invalid value for the parameter MessageRetentionPeriod.",
            bad.display()
        )),
        "{err}"
    );
    assert!(err.contains("   5 | MessageRetentionPeriod = 10"), "{err}");
}

#[test]
fn check_config_checks_event_source_mappings() {
    let head = "[[functions]]\nname = \"orders\"\nurl = \"http://127.0.0.1:9000\"\n\n[[queues]]\nname = \"jobs\"\n\n[[queues]]\nname = \"jobs.fifo\"\n[queues.attributes]\nFifoQueue = \"true\"\n\n";
    let good = write_file(
        "mapping-good.toml",
        &format!("{head}[[event_source_mappings]]\nfunction = \"orders\"\nqueue = \"jobs\"\nbatch_size = 100\nmaximum_batching_window = 5\n"),
    );
    let out = retsu_command_check(&good);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("functions      1 (orders)"), "{text}");
    assert!(text.contains("mappings       1"), "{text}");

    // Each fault on its own: the file, the mapping's line, and why.
    for (name, mapping, why) in [
        (
            "mapping-function.toml",
            "function = \"billing\"\nqueue = \"jobs\"\n",
            "event source mapping: function \"billing\" is not declared in [[functions]] or by --function (declared: orders)",
        ),
        (
            "mapping-arn.toml",
            "function = \"orders\"\nqueue = \"arn:aws:sqs:us-east-1:12:jobs\"\n",
            "event source mapping: queue \"arn:aws:sqs:us-east-1:12:jobs\" is not an SQS queue's ARN",
        ),
        (
            "mapping-batch.toml",
            "function = \"orders\"\nqueue = \"jobs\"\nbatch_size = 20000\n",
            "Value '20000' at 'batchSize' failed to satisfy constraint: Member must have value less than or equal to 10000",
        ),
        (
            "mapping-window.toml",
            "function = \"orders\"\nqueue = \"jobs\"\nbatch_size = 50\n",
            "Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10",
        ),
        (
            "mapping-fifo.toml",
            "function = \"orders\"\nqueue = \"jobs.fifo\"\nmaximum_batching_window = 5\n",
            "event source mapping: Batching window is not supported for FIFO queues.",
        ),
    ] {
        let file = write_file(name, &format!("{head}[[event_source_mappings]]\n{mapping}"));
        let out = retsu_command_check(&file);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("{}, line 13: ", file.display())),
            "{name}: {err}"
        );
        assert!(err.contains(why), "{name}: {err}");
    }
}

#[test]
fn a_bad_file_stops_start_up_before_listening() {
    let port = free_port();
    let bad = write_file(
        "cycle.toml",
        "[[queues]]\nname = \"a\"\ndead_letter_queue = \"b\"\nmax_receive_count = 3\n\n[[queues]]\nname = \"b\"\ndead_letter_queue = \"a\"\nmax_receive_count = 3\n",
    );
    // Through RETSU_CONFIG this time.
    let out = retsu()
        .env("RETSU_CONFIG", &bad)
        .env("RETSU_PORT", port.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{}, line 3, column 21: dead-letter queues form a cycle: a -> b -> a",
            bad.display()
        )),
        "{err}"
    );
    // It never listened: its port is still free.
    assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_ok());

    // A valid first queue and an invalid second: nothing starts.
    let half = write_file(
        "half.toml",
        "[[queues]]\nname = \"fine\"\n\n[[queues]]\nname = \"broken\"\nattributes = { DelaySeconds = 901 }\n",
    );
    let out = retsu()
        .arg("--config")
        .arg(&half)
        .env("RETSU_PORT", port.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("line 6"), "{}", stderr(&out));
    assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_ok());

    let out = retsu()
        .args(["--config", "/nonexistent/retsu.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("/nonexistent/retsu.toml: cannot read the configuration file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn health_subcommand_probes_the_running_server() {
    let running = Running::start_on_free_port(|port| {
        let mut command = retsu();
        command.env("RETSU_PORT", port.to_string());
        command
    });
    let port = running.port;

    // Default endpoint: loopback on the port from the environment, as in
    // the container's HEALTHCHECK.
    let out = retsu()
        .env("RETSU_PORT", port.to_string())
        .env("RETSU_HOST", "0.0.0.0")
        .arg("health")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok");

    // The port from the RETSU_CONFIG file, as in docker-compose.yml.
    let file = write_file("health.toml", &format!("port = {port}\n"));
    let out = retsu()
        .env("RETSU_CONFIG", &file)
        .arg("health")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));

    let out = retsu()
        .args(["health", "--endpoint", &format!("http://localhost:{port}/")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));

    let closed = free_port();
    let out = retsu()
        .args(["health", "--timeout", "2", "--endpoint"])
        .arg(format!("http://127.0.0.1:{closed}"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("unhealthy"), "{}", stderr(&out));
}

/// `[[topics]]`: the example file's topic fans out to its queues as
/// declared (raw delivery, a filter policy), and a bad policy is reported
/// at its line before anything listens.
#[tokio::test]
async fn configured_topics_deliver_to_the_queues_they_name() {
    let retsu = Running::start_on_free_port(|port| {
        let mut command = retsu();
        command.args(["--config", EXAMPLE, "--port", &port.to_string()]);
        command
    });
    let sqs = retsu.client("us-east-1");
    let sns = common::sns_client(&retsu.endpoint());
    let topic = "arn:aws:sns:us-east-1:000000000000:order-events";
    let attribute = |v: &str| {
        aws_sdk_sns::types::MessageAttributeValue::builder()
            .data_type("String")
            .string_value(v)
            .build()
            .unwrap()
    };
    for kind in ["invoice", "ignored"] {
        sns.publish()
            .topic_arn(topic)
            .message(format!(r#"{{"amount":5,"kind":"{kind}"}}"#))
            .message_attributes("kind", attribute(kind))
            .send()
            .await
            .unwrap();
    }
    let jobs = sqs
        .get_queue_url()
        .queue_name("jobs")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let got = sqs
        .receive_message()
        .queue_url(&jobs)
        .max_number_of_messages(10)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap_or_default();
    let bodies: Vec<&str> = got.iter().map(|m| m.body().unwrap()).collect();
    assert_eq!(
        bodies,
        vec![r#"{"amount":5,"kind":"invoice"}"#],
        "raw, filtered"
    );

    let bad = write_file(
        "bad-topic.toml",
        "[[queues]]\nname = \"q\"\n\n[[topics]]\nname = \"t\"\n[[topics.subscriptions]]\nqueue = \"q\"\nfilter_policy = { a = [] }\n",
    );
    let out = retsu_command_check(&bad);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{}, line 8, column 17: topic \"t\": Invalid parameter: Attributes Reason: FilterPolicy: Empty arrays are not allowed",
            bad.display()
        )),
        "{err}"
    );
    let unknown = write_file(
        "unknown-queue.toml",
        "[[topics]]\nname = \"t\"\n[[topics.subscriptions]]\nqueue = \"nope\"\n",
    );
    let err = stderr(&retsu_command_check(&unknown));
    assert!(
        err.contains("queue \"nope\" is not declared in [[queues]]"),
        "{err}"
    );
}

fn retsu_command_check(file: &std::path::Path) -> Output {
    retsu().arg("check-config").arg(file).output().unwrap()
}
