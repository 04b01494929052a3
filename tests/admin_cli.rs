//! `retsu peek|clock|reset|history|events|faults` against the real binary
//! serving with `--clock frozen --clock-start …`: the thin admin clients,
//! tables and `--json`, and the clock flags themselves.
//!
//! Time moves only through `retsu clock`; the only real waiting is for the
//! server process to listen.

mod common;

use std::process::Output;

use common::process::{retsu, Running};
use common::{create_queue_via, send_via};
use serde_json::Value;

/// 2026-01-01T00:00:00Z.
const START_MS: u64 = 1_767_225_600_000;

/// The binary serving with a frozen clock at [`START_MS`].
fn start(extra: &[&str]) -> Running {
    Running::start_on_free_port(|port| {
        let mut command = retsu();
        command
            .args(["--port", &port.to_string()])
            .args(["--clock", "frozen", "--clock-start", "2026-01-01T00:00:00Z"])
            .args(extra);
        command
    })
}

impl Running {
    /// Runs `retsu <args> --endpoint <this server>`.
    fn cli(&self, args: &[&str]) -> Output {
        retsu()
            .args(args)
            .args(["--endpoint", &self.endpoint()])
            .output()
            .expect("retsu runs")
    }

    /// Runs a CLI command that must succeed; returns its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.cli(args);
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut with = args.to_vec();
        with.push("--json");
        serde_json::from_str(&self.ok(&with)).expect("--json prints JSON")
    }
}

#[tokio::test]
async fn clock_flags_and_the_clock_command() {
    let server = start(&[]);
    let shown = server.json(&["clock"]);
    assert_eq!(shown["now_ms"], START_MS);
    assert_eq!(shown["frozen"], true);
    let table = server.ok(&["clock", "show"]);
    assert!(table.contains("2026-01-01T00:00:00.000Z"), "{table}");
    assert!(table.contains("frozen  true"), "{table}");

    assert_eq!(
        server.json(&["clock", "advance", "1h30m"])["now_ms"],
        START_MS + 5_400_000
    );
    assert_eq!(
        server.json(&["clock", "advance", "1500"])["now_ms"],
        START_MS + 5_401_500
    );
    let set = server.json(&["clock", "set", "2026-06-01T12:00:00Z"]);
    assert_eq!(set["now"], "2026-06-01T12:00:00.000Z");
    let back = server.cli(&["clock", "set", "2025-01-01T00:00:00Z"]);
    assert!(!back.status.success());
    assert!(
        String::from_utf8_lossy(&back.stderr).contains("never goes backwards"),
        "{back:?}"
    );
    assert_eq!(server.json(&["clock", "resume"])["frozen"], false);
    assert_eq!(server.json(&["clock", "freeze"])["frozen"], true);
}

#[tokio::test]
async fn peek_and_reset_from_the_command_line() {
    let server = start(&[]);
    let sqs = server.client("us-east-1");
    let url = create_queue_via(&sqs, "jobs", &[]).await;
    for body in ["first\nline", "second"] {
        send_via(&sqs, &url, body).await;
    }
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(60)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap();
    assert_eq!(got[0].body(), Some("first\nline"));

    // By name, region/account/name, and URL: the same listing.
    let table = server.ok(&["peek", "jobs"]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "us-east-1/000000000000/jobs: 2 message(s)");
    assert!(lines[1].starts_with("MESSAGE ID"), "{table}");
    assert!(
        lines[2].contains("available") && lines[2].contains("second"),
        "{table}"
    );
    assert!(
        lines[3].contains("inflight")
            && lines[3].contains("first line")
            && lines[3].contains("2026-01-01T00:01:00.000Z"),
        "{table}"
    );
    assert_eq!(server.ok(&["peek", "us-east-1/000000000000/jobs"]), table);
    assert_eq!(server.ok(&["peek", &url]), table);
    let json = server.json(&["peek", "jobs", "--state", "inflight", "--limit", "1"]);
    assert_eq!(json["messages"][0]["receive_count"], 1);
    assert_eq!(json["truncated"], false);
    let limited = server.ok(&["peek", "jobs", "--limit", "1"]);
    assert!(limited.contains("more messages than --limit"), "{limited}");

    let missing = server.cli(&["peek", "nope"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no queue named nope"));

    // Peeking changed nothing.
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::All)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap();
    let n = |k: &str| attrs[&aws_sdk_sqs::types::QueueAttributeName::from(k)].clone();
    assert_eq!(n("ApproximateNumberOfMessages"), "1");
    assert_eq!(n("ApproximateNumberOfMessagesNotVisible"), "1");

    assert_eq!(
        server.ok(&["reset", "jobs"]).trim(),
        "reset us-east-1/000000000000/jobs: 2 message(s) removed"
    );
    assert_eq!(server.ok(&["reset"]).trim(), "reset: 1 queue(s) deleted");
    let listed = sqs.list_queues().send().await.unwrap();
    assert!(listed.queue_urls.unwrap_or_default().is_empty());
}

#[tokio::test]
async fn the_cli_sends_the_admin_token() {
    let server = start(&["--admin-token", "t0k"]);
    let refused = server.cli(&["clock"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("401"));
    assert_eq!(
        server.json(&["clock", "--admin-token", "t0k"])["now_ms"],
        START_MS
    );
    let by_env = retsu()
        .args(["clock", "--json", "--endpoint", &server.endpoint()])
        .env("RETSU_ADMIN_TOKEN", "t0k")
        .output()
        .unwrap();
    assert!(by_env.status.success(), "{by_env:?}");
}

#[tokio::test]
async fn history_events_and_faults_call_their_endpoints() {
    // The endpoints themselves come with the event stream; here the
    // clients must reach them and report the server's answer.
    let server = start(&[]);
    // Until they exist, the server's 404 names the path the client built.
    for (args, path) in [
        (
            &["history", "0b7a3c4e-0000-4000-8000-000000000000"][..],
            "GET /_retsu/messages/0b7a3c4e-0000-4000-8000-000000000000",
        ),
        (
            &["events", "--kind", "expired", "--since", "7"],
            "GET /_retsu/events?kind=expired&since=7",
        ),
        (&["faults", "show"], "GET /_retsu/faults"),
        (&["faults", "clear"], "DELETE /_retsu/faults"),
    ] {
        let out = server.cli(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() || stderr.contains(path),
            "{args:?}: {out:?}"
        );
    }
    let bad = server.cli(&["faults", "set", "seed"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("KEY=VALUE"));
}

/// `retsu events --follow` prints each event as it happens (`--json`: one
/// object a line), after replaying from `--since`.
#[tokio::test]
async fn events_follow_prints_events_as_they_happen() {
    use std::io::BufRead;
    let server = start(&[]);
    let client = common::sdk_client(&server.endpoint(), "us-east-1");
    let url = create_queue_via(&client, "followed", &[]).await;
    let before = send_via(&client, &url, "before").await;
    let mut child = retsu()
        .args(["events", "--follow", "--json", "--since", "0"])
        .args(["--queue", "followed", "--endpoint", &server.endpoint()])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("retsu runs");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let next_id = |rx: &std::sync::mpsc::Receiver<String>| -> String {
        let line = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("an event line in time");
        let e: Value = serde_json::from_str(&line).expect("one JSON object a line");
        assert_eq!(e["queue"]["name"], "followed", "{line}");
        e["message_id"].as_str().unwrap().to_string()
    };
    assert_eq!(next_id(&rx), before, "replayed from --since 0");
    let live = send_via(&client, &url, "live").await;
    assert_eq!(next_id(&rx), live, "followed live");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test]
async fn topics_lists_subscriptions_with_their_filter_policies() {
    let server = start(&[]);
    assert_eq!(server.ok(&["topics"]).trim(), "no topics");
    let form = |params: &[(&str, &str)]| {
        let mut body = String::new();
        for (k, v) in params {
            if !body.is_empty() {
                body.push('&');
            }
            body.push_str(&format!("{k}={}", urlencode(v)));
        }
        body
    };
    let http = reqwest::Client::new();
    let post = |body: String| {
        http.post(server.endpoint())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
    };
    let topic = "arn:aws:sns:us-east-1:000000000000:alerts";
    assert!(post(form(&[("Action", "CreateTopic"), ("Name", "alerts")]))
        .await
        .unwrap()
        .status()
        .is_success());
    let r = post(form(&[
        ("Action", "Subscribe"),
        ("TopicArn", topic),
        ("Protocol", "sqs"),
        ("Endpoint", "arn:aws:sqs:us-east-1:000000000000:pager"),
        ("Attributes.entry.1.key", "FilterPolicy"),
        ("Attributes.entry.1.value", r#"{"level":["high"]}"#),
        ("Attributes.entry.2.key", "RawMessageDelivery"),
        ("Attributes.entry.2.value", "true"),
    ]))
    .await
    .unwrap();
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let table = server.ok(&["topics"]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("TOPIC"), "{table}");
    assert!(lines[1].contains("alerts"), "{table}");
    assert!(
        lines[1].contains("arn:aws:sqs:us-east-1:000000000000:pager"),
        "{table}"
    );
    assert!(lines[1].contains("raw"), "{table}");
    assert!(lines[1].contains(r#"{"level":["high"]}"#), "{table}");
    let v = server.json(&["topics"]);
    assert_eq!(v["topics"][0]["subscriptions"][0]["protocol"], "sqs");
}

fn urlencode(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
