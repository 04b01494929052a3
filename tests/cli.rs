//! The `retsu` binary itself: its flags, environment variables, and a
//! clean exit on SIGTERM/SIGINT that answers waiting long polls.
//!
//! These tests run the real binary on the wall clock; the only waits are
//! for the process to start and stop.

use std::net::TcpStream;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::Client;

const BIN: &str = env!("CARGO_BIN_EXE_retsu");

/// Kills the process if a test fails before it exits.
struct Running {
    child: Child,
    port: u16,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// Waits (real time) for the process to exit.
    async fn exit_status(&mut self, within: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                start.elapsed() < within,
                "retsu did not exit within {within:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn client(&self) -> Client {
        let config = aws_sdk_sqs::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("test", "test", None, None, "static"))
            .endpoint_url(format!("http://127.0.0.1:{}", self.port))
            .build();
        Client::from_conf(config)
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts the binary with `RETSU_PORT` (so the environment variable is
/// exercised) and waits until it accepts connections.
async fn start(args: &[&str]) -> Running {
    let port = free_port();
    let child = Command::new(BIN)
        .args(args)
        .env("RETSU_PORT", port.to_string())
        .env_remove("RETSU_HOST")
        .env_remove("RETSU_BASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("retsu starts");
    let mut running = Running { child, port };
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = running.child.try_wait().unwrap() {
            panic!("retsu exited early: {status}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "retsu did not listen"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    running
}

#[test]
fn help_lists_the_flags_and_defaults() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "--host",
        "--port",
        "--region",
        "--account-id",
        "--log-level",
        "9324",
        "127.0.0.1",
        "us-east-1",
        "000000000000",
        "RETSU_PORT",
        "RETSU_HOST",
        "RETSU_REGION",
        "RETSU_ACCOUNT_ID",
    ] {
        assert!(
            help.contains(needle),
            "{needle} missing from --help:\n{help}"
        );
    }
}

#[test]
fn bad_flags_are_refused() {
    for args in [
        &["--port", "70000"][..],
        &["--account-id", "42"],
        &["--no-such-flag"],
    ] {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
    }
}

#[tokio::test]
async fn serves_the_sdk_and_exits_zero_on_sigterm_answering_long_polls() {
    let mut retsu = start(&["--log-level", "warn"]).await;
    let client = retsu.client();
    let url = client
        .create_queue()
        .queue_name("cli")
        .send()
        .await
        .unwrap()
        .queue_url()
        .unwrap()
        .to_string();
    assert_eq!(
        url,
        format!("http://127.0.0.1:{}/000000000000/cli", retsu.port)
    );
    client
        .send_message()
        .queue_url(&url)
        .message_body("hello")
        .send()
        .await
        .unwrap();
    let got = client
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .unwrap();
    assert_eq!(got.messages()[0].body(), Some("hello"));

    // A long poll is waiting when the signal comes.
    let poller = client.clone();
    let poll_url = url.clone();
    let poll = tokio::spawn(async move {
        poller
            .receive_message()
            .queue_url(poll_url)
            .wait_time_seconds(20)
            .send()
            .await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!poll.is_finished());
    let signalled = Instant::now();
    retsu.signal("TERM");
    let answer = tokio::time::timeout(Duration::from_secs(10), poll)
        .await
        .expect("the long poll is answered on shutdown")
        .unwrap();
    assert!(
        signalled.elapsed() < Duration::from_secs(10),
        "not answered promptly"
    );
    if let Ok(out) = answer {
        assert!(out.messages().is_empty(), "{out:?}");
    }
    let status = retsu.exit_status(Duration::from_secs(15)).await;
    assert_eq!(status.code(), Some(0), "{status}");
    assert!(TcpStream::connect(("127.0.0.1", retsu.port)).is_err());
}

#[tokio::test]
async fn exits_zero_on_sigint() {
    let mut retsu = start(&[]).await;
    retsu.signal("INT");
    let status = retsu.exit_status(Duration::from_secs(15)).await;
    assert_eq!(status.code(), Some(0), "{status}");
}

#[tokio::test]
async fn flags_set_the_region_and_account() {
    let retsu = start(&["--region", "eu-central-1", "--account-id", "123456789012"]).await;
    // An unsigned request gets the default region and account.
    let http = reqwest::Client::new();
    let resp = http
        .post(format!("http://127.0.0.1:{}/", retsu.port))
        .form(&[("Action", "CreateQueue"), ("QueueName", "flags")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let body = resp.text().await.unwrap();
    assert!(
        body.contains(&format!(
            "<QueueUrl>http://127.0.0.1:{}/123456789012/flags</QueueUrl>",
            retsu.port
        )),
        "{body}"
    );
    let resp = http
        .post(format!("http://127.0.0.1:{}/", retsu.port))
        .form(&[
            ("Action", "GetQueueAttributes"),
            ("QueueUrl", "flags"),
            ("AttributeName.1", "QueueArn"),
        ])
        .send()
        .await
        .unwrap();
    let body = resp.text().await.unwrap();
    assert!(
        body.contains("<Value>arn:aws:sqs:eu-central-1:123456789012:flags</Value>"),
        "{body}"
    );
}
