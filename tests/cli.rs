//! The `retsu` binary itself: its flags, environment variables, and a
//! clean exit on SIGTERM/SIGINT that answers waiting long polls.
//!
//! These tests run the real binary on the wall clock; the only waits are
//! for the process to start and stop.

mod common;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::process::{retsu, Running, IN_USE};
use common::{create_queue_via, send_via};

/// Starts the binary with `RETSU_PORT` (so the environment variable is
/// exercised) and waits until it accepts connections.
fn start(args: &[&str]) -> Running {
    Running::start_on_free_port(|port| {
        let mut command = retsu();
        command.args(args).env("RETSU_PORT", port.to_string());
        command
    })
}

#[test]
fn help_lists_the_flags_and_defaults() {
    let out = retsu().arg("--help").output().unwrap();
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
        let out = retsu().args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
    }
}

#[tokio::test]
async fn serves_the_sdk_and_exits_zero_on_sigterm_answering_long_polls() {
    let mut retsu = start(&["--log-level", "warn"]);
    let client = retsu.client("us-east-1");
    let url = create_queue_via(&client, "cli", &[]).await;
    assert_eq!(
        url,
        format!("http://127.0.0.1:{}/000000000000/cli", retsu.port)
    );
    send_via(&client, &url, "hello").await;
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
    let mut retsu = start(&[]);
    retsu.signal("INT");
    let status = retsu.exit_status(Duration::from_secs(15)).await;
    assert_eq!(status.code(), Some(0), "{status}");
}

/// A supervisor may stop the server the moment its ready line appears
/// (a test fixture that found nothing to do, `docker stop` right after
/// start). That stop is graceful too: the signal listeners exist before
/// the socket opens, or the signal's default action kills the process.
#[test]
fn a_stop_right_after_the_ready_line_exits_zero() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    for round in 0..30 {
        let mut child = retsu()
            .args(["--port", "0", "--log-level", "warn"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("retsu ready "), "{line:?}");
        let name = if round % 2 == 0 { "-TERM" } else { "-INT" };
        let sent = std::process::Command::new("kill")
            .args([name, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "round {round} ({name}): {status}");
    }
}

#[tokio::test]
async fn flags_set_the_region_and_account() {
    let retsu = start(&["--region", "eu-central-1", "--account-id", "123456789012"]);
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

/// A port another socket holds stops the server at start, saying so in
/// the operating system's words: what the test harness looks for before
/// it starts a server again on another port.
#[test]
fn a_taken_port_stops_the_server_and_says_so() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let mut c = retsu();
    c.args(["--port", &port.to_string()]);
    let e = Running::try_start(c, port)
        .err()
        .expect("the server cannot listen on a taken port");
    assert!(e.contains(IN_USE), "{e}");
    assert!(e.contains(&port.to_string()), "{e}");
}
