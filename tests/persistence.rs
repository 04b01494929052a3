//! `--data-dir`: the real binary, killed with SIGKILL and started again on
//! the same directory. Time is the server's frozen clock (moved through
//! the admin API) except in the load test, which runs on the wall clock.

use std::collections::{HashMap, HashSet};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::types::{MessageAttributeValue, QueueAttributeName};
use aws_sdk_sqs::Client;

const BIN: &str = env!("CARGO_BIN_EXE_retsu");
const START: &str = "2026-01-01T00:00:00Z";

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
    /// SIGKILL: no flush, no goodbye.
    fn kill9(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
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

    fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/000000000000/{name}", self.port)
    }

    async fn advance(&self, by: &str) {
        let response = reqwest::Client::new()
            .post(format!("http://127.0.0.1:{}/_retsu/clock", self.port))
            .body(format!(r#"{{"advance":"{by}"}}"#))
            .header("content-type", "application/json")
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success());
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!(
            "retsu-persist-{name}-{}-{}",
            std::process::id(),
            rand_suffix()
        ));
        let _ = std::fs::remove_dir_all(&path);
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

fn command(dir: &Path, port: u16, extra: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.arg("--data-dir")
        .arg(dir)
        .args(["--port", &port.to_string()])
        .args(extra)
        .env_remove("RETSU_HOST")
        .env_remove("RETSU_BASE_URL")
        .env_remove("RETSU_DATA_DIR")
        .env_remove("RETSU_DURABILITY")
        .env_remove("RETSU_CONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

async fn start(dir: &Path, extra: &[&str]) -> Running {
    let port = free_port();
    let child = command(dir, port, extra).spawn().expect("retsu starts");
    let mut running = Running { child, port };
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = running.child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            running
                .child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("retsu exited early: {status}: {err}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "retsu did not listen"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    running
}

const FROZEN: &[&str] = &["--clock", "frozen", "--clock-start", START];

async fn attributes(c: &Client, url: &str) -> HashMap<String, String> {
    c.get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k.as_str().to_string(), v))
        .collect()
}

/// Counts of (visible, in flight, delayed).
async fn counts(c: &Client, url: &str) -> (String, String, String) {
    let a = attributes(c, url).await;
    (
        a["ApproximateNumberOfMessages"].clone(),
        a["ApproximateNumberOfMessagesNotVisible"].clone(),
        a["ApproximateNumberOfMessagesDelayed"].clone(),
    )
}

#[tokio::test]
async fn queues_messages_receipts_and_dedup_survive_kill_9() {
    let dir = TempDir::new("roundtrip");
    let s = start(&dir.0, FROZEN).await;
    let c = s.client();

    // Queue-level state: attributes, redrive by ARN, tags, a policy.
    c.create_queue().queue_name("dlq").send().await.unwrap();
    let jobs = c
        .create_queue()
        .queue_name("jobs")
        .attributes(QueueAttributeName::VisibilityTimeout, "45")
        .attributes(QueueAttributeName::MessageRetentionPeriod, "86400")
        .attributes(
            QueueAttributeName::RedrivePolicy,
            r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":"3"}"#,
        )
        .tags("team", "core")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    c.add_permission()
        .queue_url(&jobs)
        .label("all")
        .aws_account_ids("111122223333")
        .actions("SendMessage")
        .send()
        .await
        .unwrap();
    let gone = c
        .create_queue()
        .queue_name("gone")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    c.send_message()
        .queue_url(&gone)
        .message_body("x")
        .send()
        .await
        .unwrap();
    c.delete_queue().queue_url(&gone).send().await.unwrap();
    let purged = c
        .create_queue()
        .queue_name("purged")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    c.send_message()
        .queue_url(&purged)
        .message_body("x")
        .send()
        .await
        .unwrap();
    c.purge_queue().queue_url(&purged).send().await.unwrap();

    // Messages in every state.
    c.send_message()
        .queue_url(&jobs)
        .message_body("visible")
        .message_attributes(
            "kind",
            MessageAttributeValue::builder()
                .data_type("String")
                .string_value("a")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    c.send_message()
        .queue_url(&jobs)
        .message_body("delayed")
        .delay_seconds(120)
        .send()
        .await
        .unwrap();
    let sent = c
        .send_message()
        .queue_url(&jobs)
        .message_body("in flight")
        .send()
        .await
        .unwrap();
    let sent_deleted = c
        .send_message()
        .queue_url(&jobs)
        .message_body("deleted")
        .send()
        .await
        .unwrap();
    // Receive "visible" first? Receive order is oldest first: take all
    // three visible, delete one, put "visible" back with visibility 0.
    let got = c
        .receive_message()
        .queue_url(&jobs)
        .max_number_of_messages(10)
        .visibility_timeout(300)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap();
    assert_eq!(got.len(), 3);
    let handle_of = |id: &str| {
        got.iter()
            .find(|m| m.message_id() == Some(id))
            .unwrap()
            .receipt_handle()
            .unwrap()
            .to_string()
    };
    let in_flight_handle = handle_of(sent.message_id().unwrap());
    let deleted_handle = handle_of(sent_deleted.message_id().unwrap());
    let visible = got.iter().find(|m| m.body() == Some("visible")).unwrap();
    c.delete_message()
        .queue_url(&jobs)
        .receipt_handle(&deleted_handle)
        .send()
        .await
        .unwrap();
    c.change_message_visibility()
        .queue_url(&jobs)
        .receipt_handle(visible.receipt_handle().unwrap())
        .visibility_timeout(0)
        .send()
        .await
        .unwrap();

    // FIFO: a dedup id inside its window, a sequence number to continue.
    let fifo = c
        .create_queue()
        .queue_name("orders.fifo")
        .attributes(QueueAttributeName::FifoQueue, "true")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let first = c
        .send_message()
        .queue_url(&fifo)
        .message_body("o1")
        .message_group_id("g")
        .message_deduplication_id("d1")
        .send()
        .await
        .unwrap();
    assert_eq!(
        counts(&c, &jobs).await,
        ("1".into(), "1".into(), "1".into())
    );
    s.kill9();

    let s = start(&dir.0, FROZEN).await;
    let c = s.client();
    let mut names: Vec<String> = c
        .list_queues()
        .send()
        .await
        .unwrap()
        .queue_urls
        .unwrap_or_default();
    names.sort();
    assert_eq!(
        names,
        vec![
            s.url("dlq"),
            s.url("jobs"),
            s.url("orders.fifo"),
            s.url("purged")
        ]
    );
    let jobs = s.url("jobs");
    let a = attributes(&c, &jobs).await;
    assert_eq!(a["VisibilityTimeout"], "45");
    assert_eq!(a["MessageRetentionPeriod"], "86400");
    assert!(a["RedrivePolicy"].contains("arn:aws:sqs:us-east-1:000000000000:dlq"));
    assert!(a["Policy"].contains("111122223333"), "{}", a["Policy"]);
    let tags = c.list_queue_tags().queue_url(&jobs).send().await.unwrap();
    assert_eq!(tags.tags.unwrap()["team"], "core");
    // Purge time: a second purge within 60 s is refused only in strict
    // mode; the attribute-visible part is the counts.
    assert_eq!(
        counts(&c, &s.url("purged")).await,
        ("0".into(), "0".into(), "0".into())
    );

    // One visible, one in flight (hidden until its deadline), one delayed.
    assert_eq!(
        counts(&c, &jobs).await,
        ("1".into(), "1".into(), "1".into())
    );
    // The old receipt handle still verifies (the HMAC secret persisted;
    // with a new one it would be ReceiptHandleIsInvalid) and still names
    // the receive.
    c.change_message_visibility()
        .queue_url(&jobs)
        .receipt_handle(&in_flight_handle)
        .visibility_timeout(200)
        .send()
        .await
        .unwrap();
    let visible = c
        .receive_message()
        .queue_url(&jobs)
        .max_number_of_messages(10)
        .visibility_timeout(1000)
        .message_attribute_names("All")
        .message_system_attribute_names(aws_sdk_sqs::types::MessageSystemAttributeName::All)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap();
    assert_eq!(visible.len(), 1);
    assert_eq!(visible[0].body(), Some("visible"));
    assert_eq!(
        visible[0].message_attributes().unwrap()["kind"].string_value(),
        Some("a")
    );
    let attrs = visible[0].attributes().unwrap();
    assert_eq!(
        attrs[&aws_sdk_sqs::types::MessageSystemAttributeName::ApproximateReceiveCount],
        "2"
    );
    // The delayed message appears at its delay's end (120 s), the in-flight
    // one at its new deadline (200 s from the change).
    s.advance("121s").await;
    let got = c
        .receive_message()
        .queue_url(&jobs)
        .max_number_of_messages(10)
        .visibility_timeout(1000)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body(), Some("delayed"));
    s.advance("80s").await;
    let got = c
        .receive_message()
        .queue_url(&jobs)
        .max_number_of_messages(10)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body(), Some("in flight"));
    // The deleted message never came back.
    assert_eq!(
        counts(&c, &jobs).await,
        ("0".into(), "3".into(), "0".into())
    );

    // FIFO dedup still deduplicates (the window is 5 minutes; 201 s went
    // by), and sequence numbers continue upward.
    let fifo = s.url("orders.fifo");
    let again = c
        .send_message()
        .queue_url(&fifo)
        .message_body("o1")
        .message_group_id("g")
        .message_deduplication_id("d1")
        .send()
        .await
        .unwrap();
    assert_eq!(again.message_id(), first.message_id());
    assert_eq!(again.sequence_number(), first.sequence_number());
    let next = c
        .send_message()
        .queue_url(&fifo)
        .message_body("o2")
        .message_group_id("g")
        .message_deduplication_id("d2")
        .send()
        .await
        .unwrap();
    let n = |s: Option<&str>| s.unwrap().parse::<u128>().unwrap();
    assert!(n(next.sequence_number()) > n(first.sequence_number()));
    let a = attributes(&c, &fifo).await;
    assert_eq!(a["ApproximateNumberOfMessages"], "2");
    s.kill9();
}

#[tokio::test]
async fn a_second_server_refuses_a_locked_data_dir() {
    let dir = TempDir::new("lock");
    let first = start(&dir.0, &[]).await;
    let out = command(&dir.0, free_port(), &[]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("in use by another Retsu"), "{err}");
    assert!(err.contains(&first.child.id().to_string()), "{err}");
    drop(first);
    // Once the first is gone, the directory opens.
    let again = start(&dir.0, &[]).await;
    drop(again);
}

#[tokio::test]
async fn another_format_is_refused_never_misread() {
    let dir = TempDir::new("format");
    let s = start(&dir.0, &[]).await;
    s.kill9();
    let conn = rusqlite::Connection::open(dir.0.join("retsu.sqlite3")).unwrap();
    conn.execute("UPDATE meta SET value = 99 WHERE key = 'format'", [])
        .unwrap();
    drop(conn);
    let out = command(&dir.0, free_port(), &[]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("format 99") && err.contains("reads format 1"),
        "{err}"
    );
}

/// Several clients send, receive and delete as fast as they can; the
/// server is killed with SIGKILL in the middle. After a restart, every
/// acknowledged send is there exactly once unless its delete was
/// acknowledged, and nothing acknowledged deleted comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_under_load_loses_no_acknowledged_message() {
    let dir = TempDir::new("kill9");
    let s = start(&dir.0, &[]).await;
    let c = s.client();
    let url = c
        .create_queue()
        .queue_name("load")
        .attributes(QueueAttributeName::VisibilityTimeout, "1")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();

    #[derive(Default)]
    struct Ledger {
        attempted: HashSet<String>,
        acked: HashSet<String>,
        deleted: HashSet<String>,
        /// Deletes sent: one cut off by the kill may have taken effect
        /// without its answer arriving.
        deleting: HashSet<String>,
    }
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let mut tasks = Vec::new();
    for client in 0..6 {
        let (c, url, ledger) = (c.clone(), url.clone(), ledger.clone());
        tasks.push(tokio::spawn(async move {
            for i in 0.. {
                let body = format!("c{client}-m{i}");
                ledger.lock().unwrap().attempted.insert(body.clone());
                if c.send_message()
                    .queue_url(&url)
                    .message_body(&body)
                    .send()
                    .await
                    .is_err()
                {
                    return;
                }
                ledger.lock().unwrap().acked.insert(body);
                // Every other client also consumes.
                if client % 2 == 1 && i % 3 == 0 {
                    let Ok(got) = c
                        .receive_message()
                        .queue_url(&url)
                        .max_number_of_messages(5)
                        .send()
                        .await
                    else {
                        return;
                    };
                    for m in got.messages.unwrap_or_default() {
                        ledger
                            .lock()
                            .unwrap()
                            .deleting
                            .insert(m.body().unwrap().to_string());
                        if c.delete_message()
                            .queue_url(&url)
                            .receipt_handle(m.receipt_handle().unwrap())
                            .send()
                            .await
                            .is_err()
                        {
                            return;
                        }
                        ledger
                            .lock()
                            .unwrap()
                            .deleted
                            .insert(m.body().unwrap().to_string());
                    }
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    s.kill9();
    for t in tasks {
        t.await.unwrap();
    }
    let ledger = Arc::try_unwrap(ledger).ok().unwrap().into_inner().unwrap();
    assert!(
        ledger.acked.len() > 100,
        "too little load: {}",
        ledger.acked.len()
    );

    let s = start(&dir.0, &[]).await;
    let c = s.client();
    // Messages in flight at the kill come back after their 1 s timeout.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let mut seen: HashMap<String, usize> = HashMap::new();
    loop {
        let got = c
            .receive_message()
            .queue_url(s.url("load"))
            .max_number_of_messages(10)
            .visibility_timeout(600)
            .send()
            .await
            .unwrap()
            .messages
            .unwrap_or_default();
        if got.is_empty() {
            break;
        }
        for m in got {
            *seen.entry(m.body().unwrap().to_string()).or_default() += 1;
        }
    }
    for body in &ledger.acked {
        if ledger.deleted.contains(body) {
            continue;
        }
        if ledger.deleting.contains(body) {
            // Its delete was sent but not answered: gone or there, once.
            assert!(seen.get(body).copied().unwrap_or(0) <= 1, "{body} twice");
        } else {
            assert_eq!(seen.get(body), Some(&1), "acknowledged send {body} lost");
        }
    }
    for (body, n) in &seen {
        assert!(!ledger.deleted.contains(body), "deleted {body} came back");
        assert_eq!(*n, 1, "{body} stored twice");
        assert!(ledger.attempted.contains(body), "{body} never sent");
    }
}

/// `--durability relaxed` answers before the commit; a clean SIGTERM still
/// commits everything before the process exits.
#[tokio::test]
async fn relaxed_mode_flushes_on_sigterm() {
    let dir = TempDir::new("relaxed");
    let mut s = start(&dir.0, &["--durability", "relaxed"]).await;
    let c = s.client();
    let url = c
        .create_queue()
        .queue_name("r")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    for i in 0..50 {
        c.send_message()
            .queue_url(&url)
            .message_body(format!("m{i}"))
            .send()
            .await
            .unwrap();
    }
    let status = Command::new("kill")
        .args(["-TERM", &s.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = s.child.wait().unwrap();
    assert!(exit.success(), "{exit}");
    let s = start(&dir.0, &[]).await;
    let a = attributes(&s.client(), &s.url("r")).await;
    assert_eq!(a["ApproximateNumberOfMessages"], "50");
}
