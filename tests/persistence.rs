//! `--data-dir`: the real binary, killed with SIGKILL and started again on
//! the same directory. Time is the server's frozen clock (moved through
//! the admin API) except in the load test, which runs on the wall clock.
//!
//! With `RETSU_TEST_POSTGRES` set (`scripts/postgres.sh run cargo test
//! --test persistence`), the same tests run on `--store postgres://…`,
//! one database per test directory; the few that reach into SQLite's file
//! say so and are skipped there (tests/postgres.rs has PostgreSQL's own).

mod common;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::types::{MessageAttributeValue, QueueAttributeName};
use aws_sdk_sqs::Client;
use common::process::{self, free_port};
use common::{create_queue_via, send_via};

const START: &str = "2026-01-01T00:00:00Z";

/// The shared process handle (killed on drop), with what these tests add.
struct Running(process::Running);

impl std::ops::Deref for Running {
    type Target = process::Running;
    fn deref(&self) -> &process::Running {
        &self.0
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut process::Running {
        &mut self.0
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

    /// A client that reports the first error instead of retrying it.
    fn client_no_retry(&self) -> Client {
        self.0.client("us-east-1")
    }

    /// SIGTERM, then the exit status (within 20 s).
    fn terminate(mut self) -> std::process::ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let start = Instant::now();
        loop {
            if let Some(exit) = self.child.try_wait().unwrap() {
                return exit;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no exit 20 s after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// An admin API call: (status, JSON body).
    async fn admin(&self, method: &str, path: &str, body: &str) -> (u16, serde_json::Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let response = reqwest::Client::new()
            .request(
                method,
                format!("http://127.0.0.1:{}/_retsu/{path}", self.port),
            )
            .body(body.to_string())
            .header("content-type", "application/json")
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or_default())
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

/// A data directory, and with `RETSU_TEST_POSTGRES` the database that
/// stands for it.
struct TempDir(PathBuf, Option<String>);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!(
            "retsu-persist-{name}-{}-{}",
            std::process::id(),
            rand_suffix()
        ));
        let _ = std::fs::remove_dir_all(&path);
        let database = common::pg::admin_url().map(|_| common::pg::fresh_database(name));
        TempDir(path, database)
    }
}

/// On PostgreSQL, says why a test that reaches into SQLite's file is not run.
fn sqlite_only(why: &str) -> bool {
    if common::pg::admin_url().is_some() {
        eprintln!("skipped on PostgreSQL: {why}");
        return true;
    }
    false
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

/// `retsu` on `dir` and `port`, with no RETSU_* variable of the test's own.
fn command(dir: &TempDir, port: u16, extra: &[&str]) -> Command {
    let mut c = process::retsu();
    match &dir.1 {
        Some(url) => c.args(["--store", url]),
        None => c.arg("--data-dir").arg(&dir.0),
    };
    c.args(["--port", &port.to_string()]).args(extra);
    c
}

async fn start(dir: &TempDir, extra: &[&str]) -> Running {
    start_with(dir, extra, &[]).await
}

async fn start_with(dir: &TempDir, extra: &[&str], env: &[(&str, &str)]) -> Running {
    Running(process::Running::start_on_free_port(|port| {
        let mut command = command(dir, port, extra);
        command.envs(env.iter().copied());
        command
    }))
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
    let s = start(&dir, FROZEN).await;
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
    let gone = create_queue_via(&c, "gone", &[]).await;
    c.send_message()
        .queue_url(&gone)
        .message_body("x")
        .send()
        .await
        .unwrap();
    c.delete_queue().queue_url(&gone).send().await.unwrap();
    let purged = create_queue_via(&c, "purged", &[]).await;
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
    let fifo = create_queue_via(&c, "orders.fifo", &[("FifoQueue", "true")]).await;
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

    let s = start(&dir, FROZEN).await;
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
    let first = start(&dir, &[]).await;
    let out = command(&dir, free_port(), &[]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("in use by another Retsu"), "{err}");
    if dir.1.is_none() {
        // The directory's lock file names the holder's pid.
        assert!(err.contains(&first.child.id().to_string()), "{err}");
    }
    drop(first);
    // Once the first is gone, the directory opens.
    let again = start(&dir, &[]).await;
    drop(again);
}

#[tokio::test]
async fn another_format_is_refused_never_misread() {
    if sqlite_only("it rewrites SQLite's meta table (PostgreSQL's: tests/postgres.rs)") {
        return;
    }
    let dir = TempDir::new("format");
    let s = start(&dir, &[]).await;
    s.kill9();
    let conn = rusqlite::Connection::open(dir.0.join("retsu.sqlite3")).unwrap();
    conn.execute("UPDATE meta SET value = 99 WHERE key = 'format'", [])
        .unwrap();
    drop(conn);
    let out = command(&dir, free_port(), &[]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("format 99") && err.contains("reads format 2"),
        "{err}"
    );
}

/// Several clients send, receive and delete as fast as they can; the
/// server is killed with SIGKILL in the middle. After a restart, every
/// acknowledged send is there exactly once unless its delete was
/// acknowledged, and nothing acknowledged deleted comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_under_load_loses_no_acknowledged_message() {
    load_then_stop("kill9", false, &[]).await;
}

/// The same with `--durability process`, where the waiting requests make
/// the commits themselves rather than the writer thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_under_load_with_durability_process_loses_no_acknowledged_message() {
    load_then_stop("kill9-process", false, PROCESS).await;
}

/// SIGTERM in the middle of the same load (the store open, commits in
/// progress): the server finishes what it was answering, commits, closes
/// the database and exits 0; after a restart the accounting is the same as
/// after `kill -9` (every acknowledged send there exactly once unless its
/// delete was acknowledged).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_under_load_exits_0_and_keeps_everything_acknowledged() {
    load_then_stop("sigterm", true, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_under_load_with_durability_process_keeps_everything_acknowledged() {
    load_then_stop("sigterm-process", true, PROCESS).await;
}

const PROCESS: &[&str] = &["--durability", "process"];

async fn load_then_stop(name: &str, graceful: bool, extra: &[&str]) {
    let dir = TempDir::new(name);
    let s = start(&dir, extra).await;
    let c = s.client();
    let url = create_queue_via(&c, "load", &[("VisibilityTimeout", "1")]).await;
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let tasks = spawn_load(&c, &[url], &ledger, 6);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    if graceful {
        let exit = tokio::task::spawn_blocking(move || s.terminate())
            .await
            .unwrap();
        assert!(exit.success(), "SIGTERM under load: {exit}");
    } else {
        s.kill9();
    }
    for t in tasks {
        t.await.unwrap();
    }
    let ledger = Arc::try_unwrap(ledger).ok().unwrap().into_inner().unwrap();
    assert!(
        ledger.acked.len() > 100,
        "too little load: {}",
        ledger.acked.len()
    );
    let s = start(&dir, &[]).await;
    check_ledger(&s, &["load".to_string()], &ledger).await;
}

/// The kill -9 guarantee under repeated kills: sixteen rounds on one data
/// directory, each a restart, load on the queues so far plus a queue
/// created while clients already send to it, and a SIGKILL after a second
/// or so. Then every acknowledged send is there exactly once unless its
/// delete was acknowledged, across every round's queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn repeated_kill_9_under_load_loses_nothing_acknowledged() {
    repeated_kill_9("kill9-repeated", 16, &[]).await;
}

/// The same with `--durability process` (requests commit themselves).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn repeated_kill_9_under_load_with_durability_process_loses_nothing_acknowledged() {
    repeated_kill_9("kill9-repeated-process", 8, PROCESS).await;
}

async fn repeated_kill_9(name: &str, rounds: usize, extra: &[&str]) {
    let dir = TempDir::new(name);
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let mut names = vec!["load".to_string()];
    for round in 0..rounds {
        let s = start(&dir, extra).await;
        let c = s.client();
        let _ = create_queue_via(&c, "load", &[("VisibilityTimeout", "1")]).await;
        let urls: Vec<String> = names.iter().map(|n| s.url(n)).collect();
        let mut tasks = spawn_load(&c, &urls, &ledger, 4);
        // A new queue, sent to before its CreateQueue is answered (a
        // client spinning on it until it appears) and from then on.
        let fresh = format!("round-{round}");
        let early = {
            let (c, url, ledger) = (c.clone(), s.url(&fresh), ledger.clone());
            tokio::spawn(async move {
                let body = format!("{fresh_tag}-early", fresh_tag = rand_suffix());
                ledger.lock().unwrap().attempted.insert(body.clone());
                for _ in 0..20_000 {
                    match c
                        .send_message()
                        .queue_url(&url)
                        .message_body(&body)
                        .send()
                        .await
                    {
                        Ok(_) => {
                            ledger.lock().unwrap().acked.insert(body);
                            return;
                        }
                        Err(e)
                            if e.as_service_error()
                                .is_some_and(|se| se.is_queue_does_not_exist()) =>
                        {
                            continue
                        }
                        Err(_) => return,
                    }
                }
            })
        };
        let url = create_queue_via(&c, &fresh, &[("VisibilityTimeout", "1")]).await;
        tasks.push(early);
        tasks.extend(spawn_load(&c, &[url], &ledger, 2));
        names.push(fresh);
        // Kills land at different points of the commit cycle.
        tokio::time::sleep(Duration::from_millis(700 + 97 * round as u64 % 800)).await;
        s.kill9();
        for t in tasks {
            t.await.unwrap();
        }
    }
    let ledger = Arc::try_unwrap(ledger).ok().unwrap().into_inner().unwrap();
    assert!(
        ledger.acked.len() > 100 * rounds,
        "too little load: {}",
        ledger.acked.len()
    );
    let s = start(&dir, &[]).await;
    check_ledger(&s, &names, &ledger).await;
}

/// What load clients tried, and what the server acknowledged.
#[derive(Default)]
struct Ledger {
    attempted: HashSet<String>,
    acked: HashSet<String>,
    deleted: HashSet<String>,
    /// Deletes sent: one cut off by the kill may have taken effect
    /// without its answer arriving.
    deleting: HashSet<String>,
}

/// `clients` tasks that send to `urls` in turn as fast as they can, every
/// other one also receiving and deleting, until a request fails (the
/// server is gone).
fn spawn_load(
    c: &Client,
    urls: &[String],
    ledger: &Arc<Mutex<Ledger>>,
    clients: usize,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut tasks = Vec::new();
    for client in 0..clients {
        let (c, urls, ledger) = (c.clone(), urls.to_vec(), ledger.clone());
        let tag = rand_suffix();
        tasks.push(tokio::spawn(async move {
            for i in 0.. {
                let url = &urls[i % urls.len()];
                let body = format!("{tag}-c{client}-m{i}");
                ledger.lock().unwrap().attempted.insert(body.clone());
                if c.send_message()
                    .queue_url(url)
                    .message_body(&body)
                    .send()
                    .await
                    .is_err()
                {
                    return;
                }
                ledger.lock().unwrap().acked.insert(body);
                if client % 2 == 1 && i % 3 == 0 {
                    let Ok(got) = c
                        .receive_message()
                        .queue_url(url)
                        .max_number_of_messages(5)
                        .send()
                        .await
                    else {
                        return;
                    };
                    for m in got.messages.unwrap_or_default() {
                        let body = m.body().unwrap().to_string();
                        ledger.lock().unwrap().deleting.insert(body.clone());
                        if c.delete_message()
                            .queue_url(url)
                            .receipt_handle(m.receipt_handle().unwrap())
                            .send()
                            .await
                            .is_err()
                        {
                            return;
                        }
                        ledger.lock().unwrap().deleted.insert(body);
                    }
                }
            }
        }));
    }
    tasks
}

/// Drains the named queues of the restarted server `s` and checks them
/// against the ledger.
async fn check_ledger(s: &Running, names: &[String], ledger: &Ledger) {
    let c = s.client();
    // Messages in flight at the kill come back after their 1 s timeout.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let mut seen: HashMap<String, usize> = HashMap::new();
    for name in names {
        loop {
            let got = c
                .receive_message()
                .queue_url(s.url(name))
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
    }
    let lost = ledger
        .acked
        .iter()
        .filter(|b| !ledger.deleted.contains(*b) && !ledger.deleting.contains(*b))
        .filter(|b| !seen.contains_key(*b))
        .count();
    let back = seen.keys().filter(|b| ledger.deleted.contains(*b)).count();
    let duplicated = seen.values().filter(|n| **n > 1).count();
    // The figures a reader of `--nocapture` wants; the assertions follow.
    eprintln!(
        "ledger: {} sends acknowledged, {} deletes acknowledged, {} stored now; lost {lost}, deleted but back {back}, duplicated {duplicated}",
        ledger.acked.len(),
        ledger.deleted.len(),
        seen.len()
    );
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
    let mut s = start(&dir, &["--durability", "relaxed"]).await;
    let c = s.client();
    let url = create_queue_via(&c, "r", &[]).await;
    for i in 0..50 {
        send_via(&c, &url, &format!("m{i}")).await;
    }
    let status = Command::new("kill")
        .args(["-TERM", &s.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = s.child.wait().unwrap();
    assert!(exit.success(), "{exit}");
    let s = start(&dir, &[]).await;
    let a = attributes(&s.client(), &s.url("r")).await;
    assert_eq!(a["ApproximateNumberOfMessages"], "50");
}

/// `--durability relaxed` commits on its own every 200 ms, so a `kill -9`
/// well after the last answer loses nothing. (Its writer once waited for
/// a wake-up that relaxed mode never sent: only a clean stop committed.)
#[tokio::test]
async fn relaxed_mode_commits_without_a_stop() {
    let dir = TempDir::new("relaxed-kill9");
    let s = start(&dir, &["--durability", "relaxed"]).await;
    let c = s.client();
    let url = create_queue_via(&c, "r", &[]).await;
    for i in 0..20 {
        send_via(&c, &url, &format!("m{i}")).await;
    }
    // Wall-clock on purpose: the interval is the writer's, not the
    // engine's clock. Ten intervals leave room for a slow machine.
    tokio::time::sleep(10 * retsu::journal::RELAXED_INTERVAL).await;
    s.kill9();
    let s = start(&dir, &[]).await;
    let a = attributes(&s.client(), &s.url("r")).await;
    assert_eq!(a["ApproximateNumberOfMessages"], "20");
}

const DLQ_ARN: &str = "arn:aws:sqs:us-east-1:000000000000:dlq";
const DEST_ARN: &str = "arn:aws:sqs:us-east-1:000000000000:dest";

/// (status, moved, to move, rate, destination) of the latest task.
async fn latest_task(c: &Client) -> (String, i64, i64, Option<i32>, Option<String>) {
    let tasks = c
        .list_message_move_tasks()
        .source_arn(DLQ_ARN)
        .send()
        .await
        .unwrap()
        .results
        .unwrap_or_default();
    let t = &tasks[0];
    (
        t.status().unwrap().to_string(),
        t.approximate_number_of_messages_moved(),
        t.approximate_number_of_messages_to_move().unwrap_or(-1),
        t.max_number_of_messages_per_second(),
        t.destination_arn().map(String::from),
    )
}

/// Every body in a queue (received with a long visibility timeout).
async fn drain(c: &Client, url: &str) -> Vec<String> {
    let mut bodies = Vec::new();
    loop {
        let got = c
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(10)
            .visibility_timeout(3600)
            .send()
            .await
            .unwrap()
            .messages
            .unwrap_or_default();
        if got.is_empty() {
            return bodies;
        }
        bodies.extend(got.iter().map(|m| m.body().unwrap().to_string()));
    }
}

/// A move task at 2 messages a second is part-way when the server stops
/// (`kill -9`, or SIGTERM when `graceful`); after the restart it is still
/// RUNNING with the count it had reached, goes on at its rate, completes,
/// and every message is in the destination exactly once.
async fn move_task_resumes(name: &str, graceful: bool, extra: &[&str]) {
    let dir = TempDir::new(name);
    let s = start(&dir, &[FROZEN, extra].concat()).await;
    let c = s.client();
    for q in ["dlq", "dest"] {
        c.create_queue().queue_name(q).send().await.unwrap();
    }
    c.create_queue()
        .queue_name("src")
        .attributes(
            QueueAttributeName::RedrivePolicy,
            format!(r#"{{"deadLetterTargetArn":"{DLQ_ARN}","maxReceiveCount":"3"}}"#),
        )
        .send()
        .await
        .unwrap();
    for i in 0..10 {
        c.send_message()
            .queue_url(s.url("dlq"))
            .message_body(format!("m{i}"))
            .send()
            .await
            .unwrap();
    }
    c.start_message_move_task()
        .source_arn(DLQ_ARN)
        .destination_arn(DEST_ARN)
        .max_number_of_messages_per_second(2)
        .send()
        .await
        .unwrap();
    // The first second's 2 at once, then 2 per second: 6 after 2 s.
    s.advance("2s").await;
    let before = latest_task(&c).await;
    assert_eq!(
        before,
        ("RUNNING".into(), 6, 10, Some(2), Some(DEST_ARN.into()))
    );
    assert_eq!(counts(&c, &s.url("dlq")).await.0, "4");
    assert_eq!(counts(&c, &s.url("dest")).await.0, "6");
    if graceful {
        let exit = s.terminate();
        assert!(exit.success(), "{exit}");
    } else {
        s.kill9();
    }

    // The frozen clock starts where it was stopped.
    let s = start(
        &dir,
        &["--clock", "frozen", "--clock-start", "2026-01-01T00:00:02Z"],
    )
    .await;
    let c = s.client();
    assert_eq!(latest_task(&c).await, before);
    assert_eq!(counts(&c, &s.url("dlq")).await.0, "4");
    assert_eq!(counts(&c, &s.url("dest")).await.0, "6");
    // It goes on at its rate: 2 more a second.
    s.advance("1s").await;
    assert_eq!(latest_task(&c).await.1, 8);
    s.advance("2s").await;
    let (status, moved, ..) = latest_task(&c).await;
    assert_eq!((status.as_str(), moved), ("COMPLETED", 10));
    let mut bodies = drain(&c, &s.url("dest")).await;
    bodies.sort();
    let mut expected: Vec<String> = (0..10).map(|i| format!("m{i}")).collect();
    expected.sort();
    assert_eq!(bodies, expected, "each message in the destination once");
    assert_eq!(
        counts(&c, &s.url("dlq")).await,
        ("0".into(), "0".into(), "0".into())
    );
    s.kill9();
}

#[tokio::test]
async fn a_running_move_task_resumes_after_kill_9() {
    move_task_resumes("move-kill9", false, &[]).await;
}

#[tokio::test]
async fn a_running_move_task_resumes_after_kill_9_with_durability_process() {
    move_task_resumes("move-kill9-process", false, PROCESS).await;
}

#[tokio::test]
async fn a_running_move_task_resumes_after_sigterm() {
    move_task_resumes("move-term", true, &[]).await;
}

async fn send_fifo(c: &Client, url: &str, body: &str, dedup: &str) -> (String, String) {
    let r = c
        .send_message()
        .queue_url(url)
        .message_body(body)
        .message_group_id("g")
        .message_deduplication_id(dedup)
        .send()
        .await
        .unwrap();
    (
        r.message_id().unwrap().to_string(),
        r.sequence_number().unwrap().to_string(),
    )
}

/// Admin API changes, each followed by `kill -9` and a restart: a queue
/// reset (emptied, its deduplication window forgotten), delete by id,
/// restore to a named queue (of a message a receive dead-lettered), and a
/// full reset (every queue deleted).
#[tokio::test]
async fn admin_changes_survive_kill_9() {
    let dir = TempDir::new("admin");
    let s = start(&dir, FROZEN).await;
    let c = s.client();
    let fifo = create_queue_via(&c, "f.fifo", &[("FifoQueue", "true")]).await;
    send_fifo(&c, &fifo, "before-1", "d0").await;
    let (_, seq_before) = send_fifo(&c, &fifo, "before-2", "d1").await;
    let (status, body) = s
        .admin("POST", "queues/us-east-1/000000000000/f.fifo/reset", "")
        .await;
    assert_eq!(
        (status, &body["messages_removed"]),
        (200, &serde_json::json!(2))
    );
    // The window is empty: d1 is a new message now.
    let (after_id, after_seq) = send_fifo(&c, &fifo, "after", "d1").await;
    assert!(after_seq.parse::<u128>().unwrap() > seq_before.parse::<u128>().unwrap());
    s.kill9();

    let s = start(&dir, FROZEN).await;
    let c = s.client();
    let fifo = s.url("f.fifo");
    assert_eq!(counts(&c, &fifo).await.0, "1", "the reset emptied it");
    // d0 was forgotten by the reset: a new message, not a duplicate.
    let (d0_id, _) = send_fifo(&c, &fifo, "d0-again", "d0").await;
    assert_eq!(
        counts(&c, &fifo).await.0,
        "2",
        "d0 is not deduplicated ({d0_id})"
    );
    // d1 as sent after the reset still deduplicates.
    let (again_id, again_seq) = send_fifo(&c, &fifo, "after", "d1").await;
    assert_eq!((again_id, again_seq), (after_id, after_seq));
    assert_eq!(counts(&c, &fifo).await.0, "2");

    // Delete by id, and restore to a named queue a message that a receive
    // moved to the dead-letter queue.
    for q in ["dlq", "other", "plain"] {
        c.create_queue().queue_name(q).send().await.unwrap();
    }
    let src = c
        .create_queue()
        .queue_name("src")
        .attributes(QueueAttributeName::VisibilityTimeout, "10")
        .attributes(
            QueueAttributeName::RedrivePolicy,
            format!(r#"{{"deadLetterTargetArn":"{DLQ_ARN}","maxReceiveCount":"1"}}"#),
        )
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let poison = c
        .send_message()
        .queue_url(&src)
        .message_body("poison")
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();
    // Received with the queue's 10 s visibility timeout.
    let receive = || async {
        c.receive_message()
            .queue_url(&src)
            .send()
            .await
            .unwrap()
            .messages
            .unwrap_or_default()
            .len()
    };
    assert_eq!(receive().await, 1);
    s.advance("11s").await;
    // Its second receive moves it to the dead-letter queue.
    assert_eq!(receive().await, 0);
    assert_eq!(counts(&c, &s.url("dlq")).await.0, "1");
    let (status, _) = s
        .admin(
            "POST",
            &format!("queues/us-east-1/000000000000/dlq/messages/{poison}/restore"),
            &format!(r#"{{"to":"{}"}}"#, s.url("other")),
        )
        .await;
    assert_eq!(status, 200);
    let plain = s.url("plain");
    let mut ids = Vec::new();
    for body in ["keep", "drop"] {
        ids.push(
            c.send_message()
                .queue_url(&plain)
                .message_body(body)
                .send()
                .await
                .unwrap()
                .message_id
                .unwrap(),
        );
    }
    let (status, _) = s
        .admin(
            "DELETE",
            &format!("queues/us-east-1/000000000000/plain/messages/{}", ids[1]),
            "",
        )
        .await;
    assert_eq!(status, 200);
    s.kill9();

    let s = start(&dir, FROZEN).await;
    let c = s.client();
    assert_eq!(counts(&c, &s.url("src")).await.0, "0");
    assert_eq!(counts(&c, &s.url("dlq")).await.0, "0", "restored out");
    // Stored before this start: where it is now, with no earlier events.
    let (status, body) = s.admin("GET", &format!("messages/{}", ids[0]), "").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["queue"]["name"], "plain", "{body}");
    assert_eq!(body["current"]["body"], "keep", "{body}");
    assert_eq!(
        (&body["events"], &body["truncated"]),
        (&serde_json::json!([]), &serde_json::json!(true))
    );
    let (status, _) = s.admin("GET", &format!("messages/{}", ids[1]), "").await;
    assert_eq!(status, 404, "deleted before the restart");
    assert_eq!(drain(&c, &s.url("other")).await, vec!["poison".to_string()]);
    assert_eq!(drain(&c, &s.url("plain")).await, vec!["keep".to_string()]);

    // A full reset deletes every queue.
    let (status, body) = s.admin("POST", "reset", "").await;
    assert_eq!(
        (status, &body["queues_deleted"]),
        (200, &serde_json::json!(5))
    );
    s.kill9();
    let s = start(&dir, FROZEN).await;
    let left = s
        .client()
        .list_queues()
        .send()
        .await
        .unwrap()
        .queue_urls
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    s.kill9();
}

/// (message id, receipt handle) of each message received.
async fn receive_attempt(c: &Client, url: &str, attempt: &str) -> Vec<(String, String)> {
    c.receive_message()
        .queue_url(url)
        .max_number_of_messages(10)
        .visibility_timeout(60)
        .receive_request_attempt_id(attempt)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap_or_default()
        .iter()
        .map(|m| {
            (
                m.message_id().unwrap().to_string(),
                m.receipt_handle().unwrap().to_string(),
            )
        })
        .collect()
}

/// A FIFO receive retried with the same ReceiveRequestAttemptId after a
/// restart gets the same messages and receipt handles, as it would without
/// the restart; one whose message's visibility was changed since receives
/// afresh, as in memory.
#[tokio::test]
async fn receive_attempts_replay_after_kill_9() {
    let dir = TempDir::new("attempts");
    let s = start(&dir, FROZEN).await;
    let c = s.client();
    let url = create_queue_via(
        &c,
        "a.fifo",
        &[("FifoQueue", "true"), ("ContentBasedDeduplication", "true")],
    )
    .await;
    for (group, body) in [("g1", "a"), ("g1", "b"), ("g2", "c")] {
        c.send_message()
            .queue_url(&url)
            .message_body(body)
            .message_group_id(group)
            .send()
            .await
            .unwrap();
    }
    let first = receive_attempt(&c, &url, "try-1").await;
    assert_eq!(first.len(), 3);
    // A second attempt whose message then has its visibility changed: the
    // attempt is void (in memory, and so after a restart).
    c.send_message()
        .queue_url(&url)
        .message_body("d")
        .message_group_id("g3")
        .send()
        .await
        .unwrap();
    let second = receive_attempt(&c, &url, "try-2").await;
    assert_eq!(second.len(), 1);
    c.change_message_visibility()
        .queue_url(&url)
        .receipt_handle(&second[0].1)
        .visibility_timeout(120)
        .send()
        .await
        .unwrap();
    s.kill9();

    let s = start(
        &dir,
        &["--clock", "frozen", "--clock-start", "2026-01-01T00:00:10Z"],
    )
    .await;
    let c = s.client();
    let url = s.url("a.fifo");
    assert_eq!(receive_attempt(&c, &url, "try-1").await, first);
    // Fresh: every group is held by a message in flight.
    assert!(receive_attempt(&c, &url, "try-2").await.is_empty());
    s.kill9();

    // The replay (which extended the messages' visibility) keeps the
    // attempt: a second restart replays it again.
    let s = start(
        &dir,
        &["--clock", "frozen", "--clock-start", "2026-01-01T00:00:20Z"],
    )
    .await;
    let c = s.client();
    assert_eq!(receive_attempt(&c, &s.url("a.fifo"), "try-1").await, first);
    // Its handles still delete.
    for (_, handle) in &first {
        c.delete_message()
            .queue_url(s.url("a.fifo"))
            .receipt_handle(handle)
            .send()
            .await
            .unwrap();
    }
    assert_eq!(
        counts(&c, &s.url("a.fifo")).await,
        ("0".into(), "1".into(), "0".into())
    );
    s.kill9();
}

/// The error code of a failed SDK call.
fn code_of<E, R>(e: &aws_sdk_sqs::error::SdkError<E, R>) -> String
where
    E: aws_sdk_sqs::error::ProvideErrorMetadata,
{
    e.as_service_error()
        .and_then(|s| s.code())
        .unwrap_or("<no service error>")
        .to_string()
}

/// Sends 8 KiB messages until one fails; returns (acknowledged bodies,
/// the body whose send failed, its error code).
async fn fill(c: &Client, url: &str, tag: &str) -> (Vec<String>, String, String) {
    let filler = "x".repeat(8 * 1024);
    let mut acked = Vec::new();
    for i in 0..2000 {
        let body = format!("{tag}{i}:{filler}");
        match c
            .send_message()
            .queue_url(url)
            .message_body(&body)
            .send()
            .await
        {
            Ok(_) => acked.push(body),
            Err(e) => return (acked, body, code_of(&e)),
        }
    }
    panic!("2000 sends of 8 KiB and the store never filled up");
}

/// While writes fail: changes are refused with InternalError (nothing more
/// gets into memory), reads answer.
async fn refuses_changes_serves_reads(s: &Running, url: &str, stored: usize) {
    let c = s.client_no_retry();
    let e = c
        .send_message()
        .queue_url(url)
        .message_body("refused")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code_of(&e), "InternalError");
    let e = c.receive_message().queue_url(url).send().await.unwrap_err();
    assert_eq!(code_of(&e), "InternalError", "a receive changes state");
    let e = c.create_queue().queue_name("new").send().await.unwrap_err();
    assert_eq!(code_of(&e), "InternalError");
    // Reads: the failed send is in memory (pending, retried), the refused
    // ones are not.
    let visible: usize = counts(&c, url).await.0.parse().unwrap();
    assert!(
        visible == stored || visible == stored + 1,
        "{visible} visible, {stored} acknowledged"
    );
    let urls = c.list_queues().send().await.unwrap().queue_urls.unwrap();
    assert_eq!(urls, vec![url.to_string()]);
    let (status, body) = s
        .admin(
            "GET",
            "queues/us-east-1/000000000000/q/messages?limit=1",
            "",
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["messages"].as_array().unwrap().len(), 1);
    // Admin changes are refused too.
    let (status, _) = s
        .admin("POST", "queues/us-east-1/000000000000/q/reset", "")
        .await;
    assert_eq!(status, 503);
}

/// The store fills up (SQLite's `max_page_count`, set through the
/// test-only RETSU_TEST_MAX_DB_PAGES, fails writes with SQLITE_FULL as a
/// full disk does): the send whose commit failed gets InternalError, later
/// changes are refused, reads answer; after `kill -9` and a restart without
/// the cap, exactly the acknowledged messages are there.
#[tokio::test]
async fn a_full_store_refuses_changes_serves_reads_and_keeps_what_was_acknowledged() {
    if sqlite_only(
        "SQLite's page cap stands for a full disk (PostgreSQL's outage: tests/postgres.rs)",
    ) {
        return;
    }
    for extra in [&[][..], PROCESS] {
        full_store(extra).await;
    }
}

async fn full_store(extra: &[&str]) {
    let dir = TempDir::new("full");
    let s = start_with(&dir, extra, &[("RETSU_TEST_MAX_DB_PAGES", "64")]).await;
    let c = s.client_no_retry();
    let url = create_queue_via(&c, "q", &[]).await;
    let (acked, failed, code) = fill(&c, &url, "m").await;
    assert_eq!(code, "InternalError");
    assert!(acked.len() >= 5, "only {} sends fit", acked.len());
    refuses_changes_serves_reads(&s, &url, acked.len()).await;
    s.kill9();

    let s = start(&dir, &[]).await;
    let c = s.client();
    let mut stored = drain(&c, &s.url("q")).await;
    stored.sort();
    let mut expected = acked.clone();
    expected.sort();
    assert!(
        !stored.contains(&failed),
        "the failed send was never committed"
    );
    assert_eq!(stored.len(), expected.len());
    assert!(stored == expected, "exactly the acknowledged sends");
    // Without the cap, writes work again.
    c.send_message()
        .queue_url(s.url("q"))
        .message_body("fine")
        .send()
        .await
        .unwrap();
    s.kill9();
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A real full disk: a 4 MiB tmpfs (needs root to mount; skipped
/// otherwise). A filler file takes the free space; the send whose commit
/// fails gets InternalError, changes are refused and reads served; once
/// the filler is removed the journal's retry commits the pending change
/// and service resumes; after SIGTERM and a restart every acknowledged
/// message is there once.
#[tokio::test]
async fn a_full_disk_refuses_changes_then_recovers() {
    if sqlite_only("a full disk under SQLite's file (PostgreSQL's outage: tests/postgres.rs)") {
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    }
    for extra in [&[][..], PROCESS] {
        full_disk(extra).await;
    }
}

async fn full_disk(extra: &[&str]) {
    let root = TempDir::new("tmpfs");
    std::fs::create_dir_all(&root.0).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(&root.0)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    }
    let mount = Mount(root.0.clone());
    let data = TempDir(mount.0.join("data"), None);
    let s = start(&data, extra).await;
    let c = s.client_no_retry();
    let url = create_queue_via(&c, "q", &[]).await;
    c.send_message()
        .queue_url(&url)
        .message_body("first")
        .send()
        .await
        .unwrap();
    // Take every free byte.
    let filler_path = mount.0.join("filler");
    {
        use std::io::Write;
        let mut filler = std::fs::File::create(&filler_path).unwrap();
        let block = vec![0u8; 64 * 1024];
        while filler.write_all(&block).is_ok() {}
        let one = [0u8; 1];
        while filler.write_all(&one).is_ok() {}
        let _ = filler.sync_all();
    }
    let (mut acked, failed, code) = fill(&c, &url, "m").await;
    assert_eq!(code, "InternalError");
    acked.insert(0, "first".into());
    refuses_changes_serves_reads(&s, &url, acked.len()).await;

    // Space again: the retry (every 500 ms) commits and service resumes.
    std::fs::remove_file(&filler_path).unwrap();
    let start_wait = Instant::now();
    loop {
        match c
            .send_message()
            .queue_url(&url)
            .message_body("after")
            .send()
            .await
        {
            Ok(_) => break,
            Err(e) => {
                assert_eq!(code_of(&e), "InternalError");
                assert!(
                    start_wait.elapsed() < Duration::from_secs(10),
                    "writes did not resume"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    acked.push("after".into());
    let exit = s.terminate();
    assert!(exit.success(), "{exit}");

    let s = start(&data, &[]).await;
    let c = s.client();
    let stored = drain(&c, &s.url("q")).await;
    for body in &acked {
        assert_eq!(
            stored.iter().filter(|b| *b == body).count(),
            1,
            "{} stored once",
            &body[..body.len().min(12)]
        );
    }
    // The send that failed was retried and committed once space returned:
    // its error said it may have taken effect.
    assert!(stored.iter().filter(|b| **b == failed).count() <= 1);
    assert!(stored.len() <= acked.len() + 1);
    s.kill9();
    drop(mount);
}

/// A format-1 directory (before receive attempts were stored) is migrated
/// at open, its contents kept.
#[tokio::test]
async fn a_format_1_directory_is_migrated() {
    if sqlite_only("format 1 is SQLite's alone") {
        return;
    }
    let dir = TempDir::new("migrate");
    let s = start(&dir, &[]).await;
    let c = s.client();
    let url = create_queue_via(&c, "old", &[]).await;
    c.send_message()
        .queue_url(&url)
        .message_body("kept")
        .send()
        .await
        .unwrap();
    s.kill9();
    let conn = rusqlite::Connection::open(dir.0.join("retsu.sqlite3")).unwrap();
    conn.execute_batch("DROP TABLE attempts; UPDATE meta SET value = 1 WHERE key = 'format';")
        .unwrap();
    drop(conn);

    let s = start(&dir, &[]).await;
    assert_eq!(
        drain(&s.client(), &s.url("old")).await,
        vec!["kept".to_string()]
    );
    s.kill9();
    let conn = rusqlite::Connection::open(dir.0.join("retsu.sqlite3")).unwrap();
    let format: i64 = conn
        .query_row("SELECT value FROM meta WHERE key = 'format'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(format, 2);
    let attempts: i64 = conn
        .query_row("SELECT count(*) FROM attempts", [], |r| r.get(0))
        .unwrap();
    assert_eq!(attempts, 0);
}

/// Topics, subscriptions and their attributes (a filter policy included)
/// come back after kill -9, and every publish answered before the kill is
/// in its queue afterwards.
#[tokio::test]
async fn sns_topics_subscriptions_and_answered_publishes_survive_kill_9() {
    let dir = TempDir::new("sns");
    let s = start(&dir, &[]).await;
    let (c, sns) = (s.client(), common::sns_client(&s.endpoint()));
    let url = create_queue_via(&c, "fanout", &[]).await;
    let topic = sns
        .create_topic()
        .name("kept")
        .attributes("DisplayName", "Kept")
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    let sub = sns
        .subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint("arn:aws:sqs:us-east-1:000000000000:fanout")
        .attributes("RawMessageDelivery", "true")
        .attributes("FilterPolicy", r#"{"keep":["yes"]}"#)
        .send()
        .await
        .unwrap()
        .subscription_arn
        .unwrap();
    let attribute = |v: &str| {
        aws_sdk_sns::types::MessageAttributeValue::builder()
            .data_type("String")
            .string_value(v)
            .build()
            .unwrap()
    };
    for i in 0..20 {
        sns.publish()
            .topic_arn(&topic)
            .message(format!("m{i}"))
            .message_attributes("keep", attribute("yes"))
            .send()
            .await
            .unwrap();
    }
    s.kill9();

    let s = start(&dir, &[]).await;
    let (c, sns) = (s.client(), common::sns_client(&s.endpoint()));
    let attrs = sns
        .get_topic_attributes()
        .topic_arn(&topic)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap();
    assert_eq!(attrs["DisplayName"], "Kept");
    let sub_attrs = sns
        .get_subscription_attributes()
        .subscription_arn(&sub)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap();
    assert_eq!(sub_attrs["RawMessageDelivery"], "true");
    assert_eq!(sub_attrs["FilterPolicy"], r#"{"keep":["yes"]}"#);
    let mut bodies = drain(&c, &url).await;
    bodies.sort();
    let mut expected: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
    expected.sort();
    assert_eq!(bodies, expected, "every answered publish survives");
    // The filter policy still applies after the restart.
    sns.publish()
        .topic_arn(&topic)
        .message("dropped")
        .message_attributes("keep", attribute("no"))
        .send()
        .await
        .unwrap();
    sns.publish()
        .topic_arn(&topic)
        .message("delivered")
        .message_attributes("keep", attribute("yes"))
        .send()
        .await
        .unwrap();
    assert_eq!(drain(&c, &url).await, vec!["delivered".to_string()]);
}

/// SNS's signing certificate is kept by the store (a file of the data
/// directory, a row of PostgreSQL's), so the `SigningCertURL` of a message
/// stored before `kill -9` still resolves, to the same certificate, after.
#[tokio::test]
async fn the_sns_signing_certificate_survives_kill_9() {
    let dir = TempDir::new("signing");
    let s = start(&dir, &[]).await;
    let (c, sns) = (s.client(), common::sns_client(&s.endpoint()));
    let url = create_queue_via(&c, "envelopes", &[]).await;
    let topic = sns
        .create_topic()
        .name("signed")
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    sns.subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint("arn:aws:sqs:us-east-1:000000000000:envelopes")
        .send()
        .await
        .unwrap();
    sns.publish()
        .topic_arn(&topic)
        .message("signed")
        .send()
        .await
        .unwrap();
    let bodies = drain(&c, &url).await;
    let envelope: serde_json::Value = serde_json::from_str(&bodies[0]).unwrap();
    let cert_url = envelope["SigningCertURL"].as_str().unwrap().to_string();
    let path = cert_url
        .split_once("/_retsu/")
        .map(|(_, p)| format!("/_retsu/{p}"))
        .expect("a Retsu certificate URL");
    let get = |port: u16, path: String| async move {
        let r = reqwest::get(format!("http://127.0.0.1:{port}{path}"))
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    };
    let (status, before) = get(s.port, path.clone()).await;
    assert_eq!(status, 200);
    assert!(before.contains("BEGIN CERTIFICATE"), "{before}");
    s.kill9();

    let s = start(&dir, &[]).await;
    let (status, after) = get(s.port, path).await;
    assert_eq!(
        status, 200,
        "the certificate URL resolves after the restart"
    );
    assert_eq!(after, before);
    s.kill9();
}

/// `--durability process`: every answer waits for its commit (only the
/// fsync is left to the OS or the database), so `kill -9` right after the
/// last answer loses nothing; a receive and a delete hold too. (With
/// `relaxed` in its place this fails: the queue itself is lost.)
#[tokio::test]
async fn process_durability_keeps_every_answer_through_kill_9() {
    let dir = TempDir::new("process-kill9");
    let s = start(&dir, &["--durability", "process"]).await;
    let c = s.client();
    let url = create_queue_via(&c, "p", &[]).await;
    for i in 0..50 {
        send_via(&c, &url, &format!("m{i}")).await;
    }
    let got = c
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .visibility_timeout(600)
        .send()
        .await
        .unwrap();
    let received = got.messages();
    assert_eq!(received.len(), 10);
    c.delete_message()
        .queue_url(&url)
        .receipt_handle(received[0].receipt_handle().unwrap())
        .send()
        .await
        .unwrap();
    // No pause: the kill follows the last answer at once.
    s.kill9();
    let s = start(&dir, &[]).await;
    let a = attributes(&s.client(), &s.url("p")).await;
    assert_eq!(a["ApproximateNumberOfMessages"], "40");
    assert_eq!(a["ApproximateNumberOfMessagesNotVisible"], "9");
}
