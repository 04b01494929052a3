//! A cluster of three real nodes on one PostgreSQL database: any node
//! answers, the lease moves when its holder dies, pauses or loses the
//! database, and a node that lost it never answers or commits again.
//! Skipped without `RETSU_TEST_POSTGRES` (`scripts/postgres.sh run …`).

mod common;

use std::time::{Duration, Instant};

use aws_sdk_sqs::types::QueueAttributeName;
use aws_sdk_sqs::Client;
use common::cluster::{Cluster, SECRET};
use common::process::{self, free_port};
use common::{create_queue_via, pg, sdk_client, sns_client, sorted_bodies as bodies};

const LEASE: Duration = Duration::from_secs(2);

fn no_postgres() -> bool {
    if pg::admin_url().is_none() {
        eprintln!("skipped: RETSU_TEST_POSTGRES is not set (scripts/postgres.sh run … gives one)");
        return true;
    }
    false
}

fn client(c: &Cluster, i: usize) -> Client {
    sdk_client(&c.nodes[i].endpoint(), "us-east-1")
}

async fn in_flight(c: &Client, url: &str) -> String {
    attribute(
        c,
        url,
        QueueAttributeName::ApproximateNumberOfMessagesNotVisible,
    )
    .await
}

async fn attribute(c: &Client, url: &str, name: QueueAttributeName) -> String {
    c.get_queue_attributes()
        .queue_url(url)
        .attribute_names(name.clone())
        .send()
        .await
        .unwrap()
        .attributes()
        .and_then(|a| a.get(&name))
        .cloned()
        .unwrap_or_default()
}

/// A node other than `i`.
fn other(i: usize) -> usize {
    (i + 1) % 3
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_node_answers_for_every_queue_and_topic() {
    if no_postgres() {
        return;
    }
    let c = Cluster::start("any_node", 3, LEASE).await;
    let holder = c.wait_for_holder(Duration::from_secs(10)).await;
    let via = other(holder);
    // Created through a node that does not hold the lease: the URL names
    // the endpoint the client used.
    let q = create_queue_via(&client(&c, via), "shared", &[]).await;
    assert_eq!(
        q,
        format!("{}/000000000000/shared", c.nodes[via].endpoint())
    );
    for i in 0..3 {
        client(&c, i)
            .send_message()
            .queue_url(&q)
            .message_body(format!("from {i}"))
            .send()
            .await
            .unwrap();
    }
    for i in 0..3 {
        let listed = client(&c, i).list_queues().send().await.unwrap();
        assert_eq!(
            listed.queue_urls(),
            [format!("{}/000000000000/shared", c.nodes[i].endpoint())]
        );
    }
    assert_eq!(
        bodies(&client(&c, other(via)), &q).await,
        ["from 0", "from 1", "from 2"]
    );

    // SNS through three different nodes.
    let topic = sns_client(&c.nodes[0].endpoint())
        .create_topic()
        .name("t")
        .send()
        .await
        .unwrap()
        .topic_arn()
        .unwrap()
        .to_string();
    sns_client(&c.nodes[1].endpoint())
        .subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint("arn:aws:sqs:us-east-1:000000000000:shared")
        .attributes("RawMessageDelivery", "true")
        .send()
        .await
        .unwrap();
    sns_client(&c.nodes[2].endpoint())
        .publish()
        .topic_arn(&topic)
        .message("fanned out")
        .send()
        .await
        .unwrap();
    assert_eq!(bodies(&client(&c, 0), &q).await, ["fanned out"]);

    // Every node lists the three, and the same holder. A node reads the
    // rows every quarter lease, so one started last may not have read the
    // others yet: each view is asked again until it is that recent.
    for i in 0..3 {
        let asked = Instant::now();
        let mut v = c.view(i).await.unwrap();
        while v["nodes"].as_array().unwrap().len() < 3 && asked.elapsed() < LEASE * 4 {
            tokio::time::sleep(LEASE / 8).await;
            v = c.view(i).await.unwrap();
        }
        assert_eq!(v["nodes"].as_array().unwrap().len(), 3, "{v}");
        assert_eq!(v["lease"]["holder"], c.nodes[holder].id.as_str(), "{v}");
        let holds: Vec<bool> = v["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["holds_lease"] == true)
            .collect();
        assert_eq!(holds.iter().filter(|h| **h).count(), 1, "{v}");
        // Each queue and topic is owned by exactly one node.
        let owners = |kind: &str, name: &str| {
            v["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|n| n[kind].as_array().unwrap().iter().any(|q| q == name))
                .count()
        };
        assert_eq!(owners("queues", "shared"), 1, "{v}");
        assert_eq!(owners("topics", "t"), 1, "{v}");
    }
    // The CLI shows the same.
    let out = process::retsu()
        .args(["cluster", "--endpoint", &c.nodes[via].endpoint()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for node in &c.nodes {
        assert!(text.contains(&node.id), "{text}");
    }
    assert!(text.contains("SHARDS"), "{text}");
    assert!(text.contains("1 queue"), "{text}");
}

/// `kill -9` of the holder: another node takes the lease within two lease
/// lengths and serves exactly what was answered: messages, a message in
/// flight with its receipt, the FIFO deduplication window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_holder_killed_hands_over_within_two_leases_with_every_answer_kept() {
    if no_postgres() {
        return;
    }
    let mut c = Cluster::start("kill_holder", 3, LEASE).await;
    let holder = c.wait_for_holder(Duration::from_secs(10)).await;
    let via = other(holder);
    let sqs = client(&c, via);
    let q = create_queue_via(&sqs, "kept", &[]).await;
    let fifo = create_queue_via(&sqs, "kept.fifo", &[("FifoQueue", "true")]).await;
    for body in ["a", "b", "c"] {
        sqs.send_message()
            .queue_url(&q)
            .message_body(body)
            .send()
            .await
            .unwrap();
    }
    let first = sqs
        .send_message()
        .queue_url(&fifo)
        .message_body("once")
        .message_group_id("g")
        .message_deduplication_id("d1")
        .send()
        .await
        .unwrap();
    let got = sqs
        .receive_message()
        .queue_url(&q)
        .visibility_timeout(600)
        .send()
        .await
        .unwrap();
    let taken = got.messages()[0].clone();

    c.kill(holder);
    let killed = Instant::now();
    let new_holder = c.wait_for_holder(LEASE * 5).await;
    let took = killed.elapsed();
    assert_ne!(new_holder, holder);
    eprintln!("failover: {took:?} (lease {LEASE:?})");
    assert!(
        took < LEASE * 2 + Duration::from_millis(1500),
        "failover took {took:?}"
    );
    let sqs = client(&c, via);
    // The message in flight stays in flight, and its receipt still deletes it.
    assert_eq!(in_flight(&sqs, &q).await, "1");
    let mut rest = bodies(&sqs, &q).await;
    rest.push(taken.body().unwrap().to_string());
    rest.sort();
    assert_eq!(rest, ["a", "b", "c"]);
    sqs.delete_message()
        .queue_url(&q)
        .receipt_handle(taken.receipt_handle().unwrap())
        .send()
        .await
        .unwrap();
    // The deduplication window: the same id answers the first message's id.
    let again = sqs
        .send_message()
        .queue_url(&fifo)
        .message_body("once")
        .message_group_id("g")
        .message_deduplication_id("d1")
        .send()
        .await
        .unwrap();
    assert_eq!(again.message_id(), first.message_id());
    assert!(c.epoch(via).await >= 2);

    // The killed node comes back as a candidate and forwards.
    c.start_node(holder);
    let back = client(&c, holder);
    back.send_message()
        .queue_url(&q)
        .message_body("d")
        .send()
        .await
        .unwrap();
    assert_eq!(bodies(&back, &q).await, ["d"]);
}

/// A commit holds its shard's lease row (its fence) for as long as it
/// runs. The holder's renewals do not wait for it: a commit of the holder
/// that stays open for three leases (held open here by the test, under the
/// holder's name and epoch) neither lapses its lease nor stops it serving.
/// A node taking a lapsed shard does wait for it: with the holder killed
/// while such a commit is open, no node takes the shard until the commit
/// ends, so the new holder loads whatever it wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_commit_keeps_its_holders_lease_and_holds_a_takeover_off() {
    if no_postgres() {
        return;
    }
    let mut c = Cluster::start("long_commit", 3, LEASE).await;
    c.wait_for_holder(Duration::from_secs(10)).await;
    let sqs = client(&c, 0);
    let q = create_queue_via(&sqs, "q", &[]).await;
    let shard = shard_of(&c, "q");
    let holder = server_of(&c, shard).await;
    let via = other(holder);
    let sqs = client(&c, via);

    let epoch = lease_epoch(&c, shard);
    let commit = OpenCommit::fenced(&c.url, shard, &c.nodes[holder].id, epoch);
    let mut sent = 0;
    let until = Instant::now() + LEASE * 3;
    while Instant::now() < until {
        sqs.send_message()
            .queue_url(&q)
            .message_body("during")
            .send()
            .await
            .unwrap();
        sent += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(lease_epoch(&c, shard), epoch);
    assert_eq!(serving(&c, shard).await, Some(holder));
    commit.end();

    let commit = OpenCommit::fenced(&c.url, shard, &c.nodes[holder].id, epoch);
    c.kill(holder);
    let until = Instant::now() + LEASE * 3;
    while Instant::now() < until {
        assert_eq!(
            lease_epoch(&c, shard),
            epoch,
            "shard {shard} was taken while a commit of its holder was open"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(lease_lapsed(&c, shard), "the killed holder's lease ran on");
    commit.end();
    let ended = Instant::now();
    while serving(&c, shard).await.is_none_or(|i| i == holder) {
        assert!(
            ended.elapsed() < LEASE * 3,
            "no node took shard {shard} once the commit ended"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        attribute(&sqs, &q, QueueAttributeName::ApproximateNumberOfMessages).await,
        sent.to_string()
    );
}

/// A transaction holding a shard's fence as a commit of its holder does,
/// open until [`OpenCommit::end`].
struct OpenCommit {
    end: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl OpenCommit {
    /// Returns once the fence is held.
    fn fenced(url: &str, shard: i64, node: &str, epoch: i64) -> OpenCommit {
        let (url, node, shard) = (url.to_string(), node.to_string(), shard as i32);
        let (held, is_held) = std::sync::mpsc::channel();
        let (end, ends) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let mut pg = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            let mut tx = pg.transaction().unwrap();
            tx.execute("SELECT retsu.fence($1, $2, $3)", &[&shard, &node, &epoch])
                .unwrap();
            held.send(()).unwrap();
            let _ = ends.recv();
            tx.commit().unwrap();
        });
        is_held.recv().expect("the fence is held");
        OpenCommit { end, thread }
    }

    fn end(self) {
        let _ = self.end.send(());
        self.thread.join().unwrap();
    }
}

/// Whether `shard`'s lease has run out, on the database's clock.
fn lease_lapsed(c: &Cluster, shard: i64) -> bool {
    let shard = shard as i32;
    pg::with_client(&c.url, move |pg| {
        pg.query_one(
            "SELECT expires < now() FROM retsu.lease WHERE id = $1",
            &[&shard],
        )
        .unwrap()
        .get(0)
    })
}

/// SIGSTOP of the holder for longer than its lease: another node takes
/// over; once continued, the paused node answers nothing but errors, its
/// commits are fenced, and it exits (status 75) to start again as a
/// candidate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_holder_is_fenced_and_answers_nothing_after_its_lease() {
    if no_postgres() {
        return;
    }
    let mut c = Cluster::start("pause_holder", 3, LEASE).await;
    let holder = c.wait_for_holder(Duration::from_secs(10)).await;
    let q = create_queue_via(&client(&c, holder), "q", &[]).await;
    let epoch = c.epoch(holder).await;
    c.signal(holder, "STOP");
    let stopped = Instant::now();
    // A send through the paused node's port waits; sent now, it reaches
    // the node only when it is continued.
    let raw = reqwest::Client::new();
    let direct = format!("{}/", c.nodes[holder].endpoint());
    let pending = tokio::spawn({
        let (raw, direct, q) = (raw.clone(), direct.clone(), q.clone());
        async move {
            raw.post(direct)
                .form(&[
                    ("Action", "SendMessage"),
                    ("QueueUrl", q.as_str()),
                    ("MessageBody", "sent to the paused node"),
                ])
                .send()
                .await
                .map(|r| r.status().as_u16())
        }
    });
    let new_holder = c.wait_for_holder(LEASE * 5).await;
    assert_ne!(new_holder, holder);
    eprintln!(
        "took over from a paused holder after {:?}",
        stopped.elapsed()
    );
    assert!(c.epoch(new_holder).await > epoch);
    let sqs = client(&c, new_holder);
    sqs.send_message()
        .queue_url(&q)
        .message_body("after")
        .send()
        .await
        .unwrap();

    c.signal(holder, "CONT");
    // Whatever the paused node answers now is a refusal, never a success.
    // (An error: it exited first.)
    if let Ok(status) = pending.await.unwrap() {
        assert_ne!(status, 200, "a paused node answered a send");
    }
    let status = c.exit_status(holder, LEASE * 3).await;
    assert_eq!(status.code(), Some(75), "{status}");
    c.nodes[holder]
        .process
        .as_ref()
        .unwrap()
        .line_with("another node took a shard this node held");
    assert_eq!(bodies(&sqs, &q).await, ["after"]);
}

/// The holder loses PostgreSQL: within one lease it answers only
/// ServiceUnavailable, another node takes over, and when the database is
/// back the old holder finds the lease gone and exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_cut_from_postgres_stops_answering_within_its_lease() {
    if no_postgres() {
        return;
    }
    let mut c = Cluster::start("cut_holder", 3, LEASE).await;
    let holder = c.wait_for_holder(Duration::from_secs(10)).await;
    let q = create_queue_via(&client(&c, holder), "q", &[]).await;
    c.nodes[holder].proxy.cut();
    let cut = Instant::now();
    let raw = reqwest::Client::new();
    // Asked directly, it refuses changes and, once its lease is out,
    // everything.
    let mut last_ok = None;
    loop {
        let r = raw
            .post(format!("{}/", c.nodes[holder].endpoint()))
            .form(&[("Action", "GetQueueUrl"), ("QueueName", "q")])
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .unwrap();
        if r.status() == 200 {
            last_ok = Some(cut.elapsed());
        } else {
            assert_eq!(r.status(), 503);
            if cut.elapsed() > LEASE {
                break;
            }
        }
        assert!(
            cut.elapsed() < LEASE * 3,
            "still answering after {:?}",
            cut.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if let Some(t) = last_ok {
        assert!(t <= LEASE, "answered {t:?} after losing the database");
    }
    let new_holder = c.wait_for_holder(LEASE * 5).await;
    assert_ne!(new_holder, holder);
    client(&c, new_holder)
        .send_message()
        .queue_url(&q)
        .message_body("served elsewhere")
        .send()
        .await
        .unwrap();
    c.nodes[holder].proxy.restore();
    let status = c.exit_status(holder, LEASE * 5).await;
    assert_eq!(status.code(), Some(75), "{status}");
}

/// SIGTERM: the holder finishes, commits and gives the lease up, so
/// another node serves at once rather than after the lease lapses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_stopped_gracefully_hands_over_at_once() {
    if no_postgres() {
        return;
    }
    let long = Duration::from_secs(30);
    let mut c = Cluster::start("term_holder", 2, long).await;
    let holder = c.wait_for_holder(Duration::from_secs(10)).await;
    let q = create_queue_via(&client(&c, holder), "q", &[]).await;
    client(&c, holder)
        .send_message()
        .queue_url(&q)
        .message_body("kept")
        .send()
        .await
        .unwrap();
    c.signal(holder, "TERM");
    let stopped = Instant::now();
    let status = c.exit_status(holder, Duration::from_secs(10)).await;
    assert!(status.success(), "{status}");
    let next = 1 - holder;
    c.wait_for_holder(Duration::from_secs(20)).await;
    assert!(stopped.elapsed() < long / 2, "{:?}", stopped.elapsed());
    assert_eq!(bodies(&client(&c, next), &q).await, ["kept"]);
}

/// Requests between nodes carry the cluster secret: a forged or missing
/// one is refused and logged, and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_between_nodes_without_the_secret_is_refused() {
    if no_postgres() {
        return;
    }
    let c = Cluster::start("secret", 2, LEASE).await;
    let holder = c.wait_for_holder(Duration::from_secs(10)).await;
    let q = create_queue_via(&client(&c, holder), "q", &[]).await;
    let raw = reqwest::Client::new();
    for secret in [Some("forged-secret-forged"), None] {
        let mut req = raw
            .post(format!("{}/", c.nodes[holder].endpoint()))
            .header("x-retsu-forwarded-by", "intruder")
            .form(&[
                ("Action", "SendMessage"),
                ("QueueUrl", q.as_str()),
                ("MessageBody", "forged"),
            ]);
        if let Some(s) = secret {
            req = req.header("x-retsu-cluster-secret", s);
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status(), 403);
    }
    c.nodes[holder]
        .process
        .as_ref()
        .unwrap()
        .line_with("refused a request between nodes without the cluster secret");
    // With it, a request passed on is served.
    let r = raw
        .post(format!("{}/", c.nodes[holder].endpoint()))
        .header("x-retsu-forwarded-by", "node2")
        .header("x-retsu-cluster-secret", SECRET)
        .form(&[("Action", "GetQueueUrl"), ("QueueName", "q")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(bodies(&client(&c, 0), &q).await.is_empty());
}

/// Bad input at start: the same node id as a live node, a secret without
/// a PostgreSQL store, a short secret, an unusable node URL, and a single
/// server on a cluster's database (and the reverse).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_cluster_settings_are_refused_at_start() {
    let refused = |args: &[&str]| {
        let out = process::retsu()
            .args(["--port", &free_port().to_string()])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "started with {args:?}");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let err = refused(&["--cluster-secret", "0123456789abcdef"]);
    assert!(err.contains("needs --store postgres://"), "{err}");
    let err = refused(&[
        "--cluster-secret",
        "0123456789abcdef",
        "--data-dir",
        "/tmp/retsu-cluster-test",
    ]);
    assert!(err.contains("needs --store postgres://"), "{err}");
    let err = refused(&[
        "--cluster-secret",
        "short",
        "--store",
        "postgres://u@127.0.0.1/db",
    ]);
    assert!(err.contains("at least 16 characters"), "{err}");
    let err = refused(&[
        "--cluster-secret",
        "0123456789abcdef",
        "--store",
        "postgres://u@127.0.0.1/db",
        "--node-url",
        "https://x",
    ]);
    assert!(err.contains("--node-url"), "{err}");
    let err = refused(&["--lease", "0.1"]);
    assert!(err.contains("0.5 to 300"), "{err}");
    if no_postgres() {
        return;
    }

    let c = Cluster::start("same_id", 1, LEASE).await;
    // Same id (and port: the id is checked first).
    let mut twin = c.command(0);
    let out = twin.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("is in use by a live node"), "{err}");

    // A single server on the cluster's database refuses, and a cluster
    // node on a single server's database too.
    let err = refused(&["--store", &c.url]);
    assert!(err.contains("in use by a Retsu cluster"), "{err}");
    let single = pg::fresh_database("single");
    let _single = process::Running::start_on_free_port(|port| {
        let mut s = process::retsu();
        s.args(["--port", &port.to_string(), "--store", &single]);
        s
    });
    let err = refused(&["--store", &single, "--cluster-secret", "0123456789abcdef"]);
    assert!(err.contains("in use by a single Retsu server"), "{err}");
}

/// Fencing: another node takes the lease behind the holder's back (the
/// test moves the lease row, as a node would after a lapse the holder did
/// not see). The holder's next commit checks the epoch in its own
/// transaction, fails, writes nothing, and the holder exits without
/// answering the request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_after_the_lease_moved_is_fenced_and_writes_nothing() {
    if no_postgres() {
        return;
    }
    let long = Duration::from_secs(60);
    let mut c = Cluster::start("fenced", 1, long).await;
    let sqs = client(&c, 0);
    let q = create_queue_via(&sqs, "q", &[]).await;
    sqs.send_message()
        .queue_url(&q)
        .message_body("before")
        .send()
        .await
        .unwrap();
    let moved = pg::with_client(&c.url, |pg| {
        pg.execute(
            "UPDATE retsu.lease SET node = 'elsewhere', epoch = epoch + 1,
                expires = now() + interval '1 hour' WHERE id = 1",
            &[],
        )
        .unwrap()
    });
    assert_eq!(moved, 1);
    // Well within its own lease, the holder runs the send; its commit is
    // refused by the database.
    let r = reqwest::Client::new()
        .post(format!("{}/", c.nodes[0].endpoint()))
        .form(&[
            ("Action", "SendMessage"),
            ("QueueUrl", q.as_str()),
            ("MessageBody", "fenced"),
        ])
        .send()
        .await;
    assert!(
        r.is_err() || r.unwrap().status() != 200,
        "a fenced send was answered"
    );
    let status = c.exit_status(0, Duration::from_secs(10)).await;
    assert_eq!(status.code(), Some(75), "{status}");
    c.nodes[0]
        .process
        .as_ref()
        .unwrap()
        .line_with("a commit was fenced");
    let stored: Vec<String> = pg::with_client(&c.url, |pg| {
        pg.query("SELECT body FROM retsu.messages ORDER BY body", &[])
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    });
    assert_eq!(stored, ["before"]);
}

/// `POST /_retsu/cluster/drain` (and `retsu cluster drain`): the drained
/// holder hands the lease over at once, not when it lapses, and keeps
/// forwarding; the virtual clock and every message follow the lease; the
/// last node that could hold the lease cannot be drained; each node's
/// `/metrics` shows what it owns, labelled with its id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drained_holder_hands_over_at_once_with_the_clock_and_keeps_forwarding() {
    if no_postgres() {
        return;
    }
    let long = Duration::from_secs(30);
    let c = Cluster::start("drain", 3, long).await;
    let holder = c.wait_for_holder(Duration::from_secs(10)).await;
    let q = create_queue_via(&client(&c, other(holder)), "q", &[]).await;
    client(&c, holder)
        .send_message()
        .queue_url(&q)
        .message_body("kept")
        .send()
        .await
        .unwrap();
    let raw = reqwest::Client::new();
    let post = |i: usize, path: &str, body: serde_json::Value| {
        raw.post(format!("{}{path}", c.nodes[i].endpoint()))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
    };
    // The cluster's clock, moved through a node that does not hold the lease.
    post(
        other(holder),
        "/_retsu/clock",
        serde_json::json!({"freeze": true}),
    )
    .await
    .unwrap();
    let moved: serde_json::Value = post(
        other(holder),
        "/_retsu/clock",
        serde_json::json!({"advance": "1h"}),
    )
    .await
    .unwrap()
    .text()
    .await
    .map(|t| serde_json::from_str(&t).unwrap())
    .unwrap();
    let frozen_at = moved["now_ms"].as_u64().unwrap();
    let metrics = |i: usize| {
        let url = format!("{}/metrics", c.nodes[i].endpoint());
        async move { reqwest::get(url).await.unwrap().text().await.unwrap() }
    };
    let held = |id: &str, v: u8| format!("retsu_cluster_lease_held{{node=\"{id}\"}} {v}");
    let text = metrics(holder).await;
    assert!(text.contains(&held(&c.nodes[holder].id, 1)), "{text}");
    assert!(
        text.contains(&format!("node=\"{}\"", c.nodes[holder].id)) && text.contains("queue=\"q\""),
        "{text}"
    );

    // Drained through the CLI at another node.
    let out = process::retsu()
        .args([
            "cluster",
            "drain",
            &c.nodes[holder].id,
            "--endpoint",
            &c.nodes[other(holder)].endpoint(),
        ])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{shown}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Answered once the node holds no shard: its row shows none.
    let line = format!("node {} drained: it holds no shard", c.nodes[holder].id);
    assert!(shown.lines().any(|l| l == line), "{shown}");
    let row = shown
        .lines()
        .find(|l| l.starts_with(&format!("{} ", c.nodes[holder].id)))
        .unwrap_or_else(|| panic!("{shown}"));
    let cells: Vec<&str> = row.split("  ").filter(|c| !c.is_empty()).collect();
    assert_eq!(cells[3].trim(), "draining", "{row}");
    assert_eq!(cells[4].trim(), "-", "{row}");
    let drained = Instant::now();
    let next = loop {
        let now = c.wait_for_holder(Duration::from_secs(10)).await;
        if now != holder {
            break now;
        }
        assert!(
            drained.elapsed() < Duration::from_secs(10),
            "the drained holder kept the lease"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(drained.elapsed() < long / 3, "{:?}", drained.elapsed());
    let v = c.view(next).await.unwrap();
    let row = |v: &serde_json::Value, id: &str| {
        v["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["id"] == id)
            .cloned()
            .unwrap()
    };
    assert_eq!(row(&v, &c.nodes[holder].id)["draining"], true, "{v}");
    assert_eq!(row(&v, &c.nodes[next].id)["holds_lease"], true, "{v}");

    // The new holder adopted the cluster's clock; the drained node forwards.
    let clock: serde_json::Value =
        reqwest::get(format!("{}/_retsu/clock", c.nodes[holder].endpoint()))
            .await
            .unwrap()
            .text()
            .await
            .map(|t| serde_json::from_str(&t).unwrap())
            .unwrap();
    assert_eq!(clock["frozen"], true, "{clock}");
    assert_eq!(clock["now_ms"].as_u64(), Some(frozen_at), "{clock}");
    assert_eq!(bodies(&client(&c, holder), &q).await, ["kept"]);
    let text = metrics(holder).await;
    assert!(text.contains(&held(&c.nodes[holder].id, 0)), "{text}");
    assert!(
        !text.contains("queue=\"q\""),
        "a node that owns nothing shows no queue: {text}"
    );
    let text = metrics(next).await;
    assert!(text.contains(&held(&c.nodes[next].id, 1)), "{text}");
    assert!(
        text.contains(&format!("node=\"{}\"", c.nodes[next].id)) && text.contains("queue=\"q\""),
        "{text}"
    );

    // The third node drained too; then the holder is the last candidate.
    let third = (0..3).find(|i| *i != holder && *i != next).unwrap();
    let drain = |via: usize, body: serde_json::Value| post(via, "/_retsu/cluster/drain", body);
    let id = |i: usize| serde_json::json!({ "node": c.nodes[i].id });
    let r = drain(next, id(third)).await.unwrap();
    assert_eq!(r.status(), 200);
    let r = drain(third, id(next)).await.unwrap();
    assert_eq!(r.status(), 409);
    assert!(r.text().await.unwrap().contains("last live node"));
    let r = drain(third, serde_json::json!({"node": "nobody"}))
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let r = drain(third, serde_json::json!({"nod": "x"})).await.unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(c.wait_for_holder(Duration::from_secs(5)).await, next);
    // Undrained, the first node may hold the lease again.
    let r = post(
        next,
        "/_retsu/cluster/undrain",
        serde_json::json!({"node": c.nodes[holder].id}),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    let v: serde_json::Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
    assert_eq!(row(&v, &c.nodes[holder].id)["draining"], false, "{v}");
}

/// `retsu cluster move`: the shard of a queue goes to the node named, at
/// once rather than after a lease, with its messages and their in-flight
/// state, and stays there while the shards are spread again. Bad input is
/// refused with nothing moved.
/// The configuration file's queues and topics are made in the home
/// shard, and their names placed there: a CreateQueue or CreateTopic of
/// one of them, from any node, reaches the configured one rather than
/// making a second, empty one in another shard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configuration_files_queues_are_the_ones_every_node_serves() {
    if no_postgres() {
        return;
    }
    let file = std::env::temp_dir().join(format!("retsu-cluster-config-{}.toml", free_port()));
    std::fs::write(
        &file,
        r#"
[[queues]]
name = "configured-dlq"

[[queues]]
name = "configured"
dead_letter_queue = "configured-dlq"
max_receive_count = 3
attributes = { VisibilityTimeout = 45 }

[[topics]]
name = "configured-events"
attributes = { DisplayName = "Configured" }

[[topics.subscriptions]]
queue = "configured"
raw = true
"#,
    )
    .unwrap();
    let c = Cluster::start_with(
        "config",
        3,
        Duration::from_secs(5),
        &["--config", file.to_str().unwrap()],
    )
    .await;
    wait_spread(&c, Duration::from_secs(20)).await;
    // Other names first, so shard 1 is no longer the emptiest: a name the
    // cluster had not placed would now go elsewhere.
    for name in ["first", "second", "third"] {
        create_queue_via(&client(&c, 0), name, &[]).await;
    }
    for (i, name) in ["configured", "configured-dlq"].iter().enumerate() {
        assert_eq!(shard_of(&c, name), 1, "{name}");
        // CreateQueue with the same attributes answers the configured queue.
        let attributes: &[(&str, &str)] = if i == 0 {
            &[("VisibilityTimeout", "45")]
        } else {
            &[]
        };
        for via in 0..3 {
            let url = create_queue_via(&client(&c, via), name, attributes).await;
            assert!(url.ends_with(&format!("/{name}")), "{url}");
        }
    }
    let q = client(&c, 1)
        .get_queue_url()
        .queue_name("configured")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let got = client(&c, 2)
        .get_queue_attributes()
        .queue_url(&q)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .unwrap();
    let attributes = got.attributes.unwrap();
    assert_eq!(attributes[&QueueAttributeName::VisibilityTimeout], "45");
    assert!(
        attributes[&QueueAttributeName::RedrivePolicy].contains("configured-dlq"),
        "{attributes:?}"
    );
    // The configured topic, created again from another node, delivers to
    // the configured queue.
    let sns = sns_client(&c.nodes[2].endpoint());
    let topic = sns
        .create_topic()
        .name("configured-events")
        .attributes("DisplayName", "Configured")
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    sns.publish()
        .topic_arn(&topic)
        .message("from the file's topic")
        .send()
        .await
        .unwrap();
    assert_eq!(
        bodies(&client(&c, 0), &q).await,
        vec!["from the file's topic".to_string()]
    );
    let _ = std::fs::remove_file(&file);
}

/// A queue the API made in another shard before the configuration file
/// named it stays in its shard with its messages, and the holder of that
/// shard applies the file's settings to it, as a single server applies
/// them to a stored queue at start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configuration_file_sets_a_queue_the_api_made_in_another_shard() {
    if no_postgres() {
        return;
    }
    let file = std::env::temp_dir().join(format!("retsu-cluster-late-{}.toml", free_port()));
    std::fs::write(&file, "[[queues]]\nname = \"anchor\"\n").unwrap();
    let mut c = Cluster::start_with(
        "config-late",
        3,
        Duration::from_secs(2),
        &["--config", file.to_str().unwrap()],
    )
    .await;
    wait_spread(&c, Duration::from_secs(20)).await;
    let url = create_queue_via(&client(&c, 1), "late", &[("VisibilityTimeout", "30")]).await;
    let shard = shard_of(&c, "late");
    assert_ne!(
        shard, 1,
        "shard 1 holds the file's queue, so the API's goes elsewhere"
    );
    client(&c, 2)
        .send_message()
        .queue_url(&url)
        .message_body("kept")
        .send()
        .await
        .unwrap();
    // The file now names it, with other settings; every node restarts.
    std::fs::write(
        &file,
        "[[queues]]\nname = \"anchor\"\n\n[[queues]]\nname = \"late\"\nattributes = { VisibilityTimeout = 77 }\n",
    )
    .unwrap();
    for i in 0..3 {
        c.kill(i);
    }
    for i in 0..3 {
        c.start_node(i);
    }
    wait_spread(&c, Duration::from_secs(30)).await;
    assert_eq!(shard_of(&c, "late"), shard, "it stays in its shard");
    for via in 0..3 {
        let got = client(&c, via)
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(QueueAttributeName::All)
            .send()
            .await
            .unwrap();
        let attributes = got.attributes.unwrap();
        assert_eq!(
            attributes[&QueueAttributeName::VisibilityTimeout],
            "77",
            "via node {via}"
        );
        assert_eq!(
            attributes[&QueueAttributeName::ApproximateNumberOfMessages],
            "1"
        );
    }
    let _ = std::fs::remove_file(&file);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_moved_to_a_node_goes_there_alone_with_its_state_and_stays() {
    // Long enough that a move waiting for a lease to lapse would show.
    let long = Duration::from_secs(30);
    let Some(c) = spread_cluster("move", long).await else {
        return;
    };
    let q = create_queue_via(&client(&c, 0), "moving", &[]).await;
    let fifo = create_queue_via(&client(&c, 1), "moving.fifo", &[("FifoQueue", "true")]).await;
    for body in ["a", "b"] {
        client(&c, 1)
            .send_message()
            .queue_url(&q)
            .message_body(body)
            .send()
            .await
            .unwrap();
    }
    let took = client(&c, 2)
        .receive_message()
        .queue_url(&q)
        .visibility_timeout(600)
        .send()
        .await
        .unwrap();
    assert_eq!(took.messages().len(), 1);
    let receipt = took.messages()[0].receipt_handle().unwrap().to_string();
    let send_fifo = |via: usize| {
        client(&c, via)
            .send_message()
            .queue_url(&fifo)
            .message_body("once")
            .message_group_id("g")
            .message_deduplication_id("d1")
            .send()
    };
    let first_id = send_fifo(2)
        .await
        .unwrap()
        .message_id()
        .unwrap()
        .to_string();
    let shard = shard_of(&c, "moving");
    // A queue that shares the moving queue's shard (names go to the
    // shard with the fewest, so some of nine do).
    let mut neighbour = None;
    for i in 0..9 {
        let name = format!("staying-{i}");
        let url = create_queue_via(&client(&c, i % 3), &name, &[]).await;
        if shard_of(&c, &name) == shard {
            neighbour = Some(url);
            break;
        }
    }
    let neighbour = neighbour.expect("a queue in the moving queue's shard");
    let stays = client(&c, 0)
        .send_message()
        .queue_url(&neighbour)
        .message_body("stays")
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();
    let from = server_of(&c, shard).await;
    let to = other(from);

    let out = process::retsu()
        .args([
            "cluster",
            "move",
            &q,
            &c.nodes[to].id,
            "--endpoint",
            &c.nodes[from].endpoint(),
        ])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{shown}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Its own shard now, moved to the node asked for; its old shard keeps
    // the neighbour, on the same node.
    let moved = shard_of(&c, "moving");
    assert_ne!(moved, shard);
    // A line of its own, after the table.
    let line = format!("queue moving moved to {} in shard {moved}", c.nodes[to].id);
    assert!(shown.lines().any(|l| l == line), "{shown}");
    wait_served_by(&c, moved, to, long / 3).await;
    assert_eq!(shard_of(&c, &neighbour_name(&neighbour)), shard);
    // The old shard stays with its holder, served again once it reloaded.
    wait_served_by(&c, shard, from, long / 3).await;
    // The state came with it, through every node: one message waiting,
    // one in flight whose receipt still deletes it.
    for via in 0..3 {
        assert_eq!(in_flight(&client(&c, via), &q).await, "1", "via {via}");
    }
    client(&c, from)
        .delete_message()
        .queue_url(&q)
        .receipt_handle(&receipt)
        .send()
        .await
        .unwrap();
    assert_eq!(in_flight(&client(&c, to), &q).await, "0");
    assert_eq!(bodies(&client(&c, from), &q).await.len(), 1);
    // The neighbour's shard was loaded again: its message, stored before,
    // shows where it is now (history starts at the load).
    let seen: serde_json::Value = serde_json::from_str(
        &reqwest::get(format!(
            "{}/_retsu/messages/{stays}",
            c.nodes[to].endpoint()
        ))
        .await
        .unwrap()
        .text()
        .await
        .unwrap(),
    )
    .unwrap();
    assert_eq!(seen["current"]["body"], "stays", "{seen}");
    // The neighbour was not moved and lost nothing.
    assert_eq!(bodies(&client(&c, to), &neighbour).await, vec!["stays"]);

    // A FIFO queue: its deduplication window moves with it.
    let out = process::retsu()
        .args([
            "cluster",
            "move",
            "moving.fifo",
            &c.nodes[from].id,
            "--endpoint",
            &c.nodes[to].endpoint(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fifo_shard = shard_of(&c, "moving.fifo");
    wait_served_by(&c, fifo_shard, from, long / 3).await;
    for via in 0..3 {
        let again = send_fifo(via).await.unwrap();
        assert_eq!(again.message_id(), Some(first_id.as_str()), "via {via}");
    }
    assert_eq!(bodies(&client(&c, 2), &fifo).await, vec!["once"]);
    // Every queue listed once, from every node.
    for via in 0..3 {
        let listed = client(&c, via).list_queues().send().await.unwrap();
        let mut urls = listed.queue_urls().to_vec();
        urls.sort();
        urls.dedup();
        assert_eq!(urls.len(), listed.queue_urls().len(), "via {via}");
        assert!(
            urls.iter().any(|u| u.ends_with("/moving")),
            "via {via}: {urls:?}"
        );
    }
    // The shards spread again around the moved ones, which stay.
    wait_spread(&c, Duration::from_secs(20)).await;
    assert_eq!(server_of(&c, moved).await, to);
    let v = c.view(from).await.unwrap();
    let row = &v["shards"][(moved - 1) as usize];
    assert_eq!(row["moved_to"], c.nodes[to].id.as_str(), "{v}");

    // Alone in its shard now, it moves again with that shard: no shard is
    // added, and what it held (one message in flight, one sent now) goes
    // along. Asked again for the node that has it, nothing moves.
    let shards = v["shards"].as_array().unwrap().len();
    let third = 3 - from - to;
    client(&c, third)
        .send_message()
        .queue_url(&q)
        .message_body("c")
        .send()
        .await
        .unwrap();
    for how in ["with its shard", "stayed"] {
        let v = post_json(
            &c,
            from,
            "/_retsu/cluster/move",
            serde_json::json!({"queue": "moving", "node": c.nodes[third].id}),
        )
        .await;
        assert_eq!(v["moved"]["shard"], moved, "{v}");
        assert_eq!(v["moved"]["how"], how, "{v}");
        assert_eq!(v["moved"]["done"], true, "{v}");
        assert_eq!(v["shards"].as_array().unwrap().len(), shards, "{v}");
    }
    let out = process::retsu()
        .args([
            "cluster",
            "move",
            "moving",
            &c.nodes[third].id,
            "--endpoint",
            &c.nodes[to].endpoint(),
        ])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    let line = format!(
        "queue moving is on {} already, in shard {moved}",
        c.nodes[third].id
    );
    assert!(shown.lines().any(|l| l == line), "{shown}");
    assert_eq!(shard_of(&c, "moving"), moved);
    wait_served_by(&c, moved, third, long / 3).await;
    assert_eq!(in_flight(&client(&c, to), &q).await, "1");
    assert_eq!(bodies(&client(&c, from), &q).await, ["c"]);

    // A topic by its ARN, through the API.
    let topic = sns_client(&c.nodes[0].endpoint())
        .create_topic()
        .name("moving-topic")
        .send()
        .await
        .unwrap()
        .topic_arn()
        .unwrap()
        .to_string();
    let v = post_json(
        &c,
        0,
        "/_retsu/cluster/move",
        serde_json::json!({"topic": topic, "node": c.nodes[from].id}),
    )
    .await;
    let topic_shard: i64 = pg::with_client(&c.url, |pg| {
        pg.query_one(
            "SELECT shard FROM retsu.placement WHERE kind = 'topic' AND name = 'moving-topic'",
            &[],
        )
        .unwrap()
        .get::<_, i32>(0)
    })
    .into();
    let row = &v["shards"][(topic_shard - 1) as usize];
    assert_eq!(row["moved_to"], c.nodes[from].id.as_str(), "{v}");

    // Refused, with nothing moved.
    let raw = reqwest::Client::new();
    let refused = |body: String| {
        raw.post(format!("{}/_retsu/cluster/move", c.nodes[1].endpoint()))
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let node = |i: usize| c.nodes[i].id.clone();
    for (body, status, says) in [
        (
            serde_json::json!({"queue": "moving", "node": "nobody"}).to_string(),
            404,
            "no node",
        ),
        (
            serde_json::json!({"queue": "absent", "node": node(from)}).to_string(),
            404,
            "no queue named",
        ),
        (
            serde_json::json!({"queue": "moving"}).to_string(),
            400,
            "give what to move",
        ),
        (
            serde_json::json!({"queue": "moving", "topic": "t", "node": node(from)}).to_string(),
            400,
            "give what to move",
        ),
        ("{not json".to_string(), 400, "not JSON"),
    ] {
        let r = refused(body.clone()).await.unwrap();
        assert_eq!(r.status(), status, "{body}");
        let text = r.text().await.unwrap();
        assert!(text.contains(says), "{body}: {text}");
    }
    // A drained node takes nothing moved to it.
    post_json(
        &c,
        1,
        "/_retsu/cluster/drain",
        serde_json::json!({"node": node(from)}),
    )
    .await;
    let r = refused(serde_json::json!({"queue": "moving", "node": node(from)}).to_string())
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    assert_eq!(server_of(&c, moved).await, third);
}

/// A FIFO queue moved from node to node three times while a producer and
/// a consumer use it through every node: every acknowledged send is
/// received, in order, and the longest single call is printed (what a
/// move costs a client).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_moved_under_load_keeps_every_message_in_order() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    let Some(c) = spread_cluster("move_load", LEASE).await else {
        return;
    };
    let q = create_queue_via(&client(&c, 0), "busy.fifo", &[("FifoQueue", "true")]).await;
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(Mutex::new(Vec::<u64>::new()));
    let longest = Arc::new(Mutex::new(Duration::ZERO));
    let clients: Arc<Vec<Client>> = Arc::new((0..3).map(|i| client(&c, i)).collect());
    let producer = tokio::spawn({
        let (clients, q, stop, acked, longest) = (
            clients.clone(),
            q.clone(),
            stop.clone(),
            acked.clone(),
            longest.clone(),
        );
        async move {
            let mut i = 0u64;
            while !stop.load(Ordering::Acquire) {
                let started = Instant::now();
                let sent = clients[(i % 3) as usize]
                    .send_message()
                    .queue_url(&q)
                    .message_body(i.to_string())
                    .message_group_id("g")
                    .message_deduplication_id(i.to_string())
                    .send()
                    .await;
                let took = started.elapsed();
                let mut l = longest.lock().unwrap();
                *l = (*l).max(took);
                drop(l);
                // Not acknowledged: sent again under the same id.
                if sent.is_ok() {
                    acked.lock().unwrap().push(i);
                    i += 1;
                }
            }
        }
    });
    let received = Arc::new(Mutex::new(Vec::<u64>::new()));
    let consumer = tokio::spawn({
        let (clients, q, received, acked) =
            (clients.clone(), q.clone(), received.clone(), acked.clone());
        async move {
            let mut turn = 0usize;
            let deadline = Instant::now() + Duration::from_secs(120);
            loop {
                turn += 1;
                let via = &clients[turn % 3];
                let Ok(got) = via
                    .receive_message()
                    .queue_url(&q)
                    .max_number_of_messages(10)
                    .visibility_timeout(5)
                    .wait_time_seconds(1)
                    .send()
                    .await
                else {
                    continue;
                };
                for m in got.messages() {
                    received
                        .lock()
                        .unwrap()
                        .push(m.body().unwrap().parse().unwrap());
                    for _ in 0..5 {
                        let deleted = via
                            .delete_message()
                            .queue_url(&q)
                            .receipt_handle(m.receipt_handle().unwrap())
                            .send()
                            .await;
                        if deleted.is_ok() {
                            break;
                        }
                    }
                }
                let done = {
                    let acked = acked.lock().unwrap();
                    let received = received.lock().unwrap();
                    !acked.is_empty() && acked.iter().all(|i| received.contains(i))
                };
                if (done && got.messages().is_empty()) || Instant::now() >= deadline {
                    return;
                }
            }
        }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut at = server_of(&c, shard_of(&c, "busy.fifo")).await;
    for round in 0..3 {
        let to = other(at);
        let v = post_json(
            &c,
            round % 3,
            "/_retsu/cluster/move",
            serde_json::json!({"queue": q, "node": c.nodes[to].id}),
        )
        .await;
        assert_eq!(v["moved"]["done"], true, "{v}");
        let shard = shard_of(&c, "busy.fifo");
        wait_served_by(&c, shard, to, LEASE * 3).await;
        at = to;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    stop.store(true, Ordering::Release);
    producer.await.unwrap();
    consumer.await.unwrap();
    let acked = acked.lock().unwrap().clone();
    let mut received = received.lock().unwrap().clone();
    // A message whose delete did not take effect comes again, next.
    received.dedup();
    eprintln!(
        "moved 3 times: {} sends acknowledged, {} received, longest send {:?}",
        acked.len(),
        received.len(),
        *longest.lock().unwrap()
    );
    assert!(acked.len() > 50, "too few sends to tell: {}", acked.len());
    let lost: Vec<&u64> = acked.iter().filter(|i| !received.contains(i)).collect();
    assert!(
        lost.is_empty(),
        "acknowledged sends never received: {lost:?}"
    );
    assert!(
        received.windows(2).all(|w| w[0] < w[1]),
        "out of order or returned after its delete: {received:?}"
    );
}

/// A queue whose messages a move task is moving moves once the task ends:
/// the task is its shard's, not the queue's. Asked while it runs, the move
/// answers "not yet"; cancelled, the queue moves with what the task left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_moves_alone_once_its_message_move_task_ends() {
    let Some(c) = spread_cluster("move_task", LEASE).await else {
        return;
    };
    let sqs = client(&c, 0);
    let (dead, source) = dead_letter_pair(&sqs).await;
    for i in 0..20 {
        sqs.send_message()
            .queue_url(&dead)
            .message_body(format!("m{i}"))
            .send()
            .await
            .unwrap();
    }
    let task = sqs
        .start_message_move_task()
        .source_arn(common::queue_arn("dead"))
        .destination_arn(common::queue_arn("source"))
        .max_number_of_messages_per_second(1)
        .send()
        .await
        .unwrap();
    let shard = shard_of(&c, "dead");
    let to = other(server_of(&c, shard).await);
    let v = post_json(
        &c,
        1,
        "/_retsu/cluster/move",
        serde_json::json!({"queue": "dead", "node": c.nodes[to].id}),
    )
    .await;
    assert_eq!(v["moved"]["done"], false, "{v}");
    assert_eq!(shard_of(&c, "dead"), shard);
    sqs.cancel_message_move_task()
        .task_handle(task.task_handle().unwrap())
        .send()
        .await
        .unwrap();
    let asked = Instant::now();
    while shard_of(&c, "dead") == shard {
        assert!(
            asked.elapsed() < LEASE * 3,
            "the queue did not move after its task ended"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let moved = shard_of(&c, "dead");
    wait_served_by(&c, moved, to, LEASE * 6).await;
    // Every message is in one of the two queues, once.
    let mut all = bodies(&client(&c, 2), &dead).await;
    all.extend(bodies(&client(&c, 1), &source).await);
    all.sort();
    let mut sent: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
    sent.sort();
    assert_eq!(all, sent);
}

/// A move task into a queue of another shard reads COMPLETED only once
/// what it moved is in that queue, so the caller's next request finds it
/// there, as on a single server (the task runs on its own, answering no
/// request; its hand-overs are waited for when the task is listed). The
/// move does not hold up its shard's holder: it keeps its lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_task_into_another_shard_completes_once_its_messages_are_there() {
    let Some(c) = spread_cluster("move_across", LEASE).await else {
        return;
    };
    let sqs = client(&c, 0);
    let (dead, _) = dead_letter_pair(&sqs).await;
    let mut target = None;
    for i in 0..32 {
        let name = format!("target{i}");
        let url = create_queue_via(&sqs, &name, &[]).await;
        if shard_of(&c, &name) != shard_of(&c, "dead") {
            target = Some((name, url));
            break;
        }
    }
    let (name, target) = target.expect("no queue was placed in another shard than \"dead\"");
    const MESSAGES: usize = 400;
    for batch in 0..MESSAGES / 10 {
        let mut req = sqs.send_message_batch().queue_url(&dead);
        for i in 0..10 {
            req = req.entries(
                aws_sdk_sqs::types::SendMessageBatchRequestEntry::builder()
                    .id(format!("e{i}"))
                    .message_body(format!("m{}", batch * 10 + i))
                    .build()
                    .unwrap(),
            );
        }
        let out = req.send().await.unwrap();
        assert!(out.failed().is_empty(), "{out:?}");
    }
    let shard = shard_of(&c, "dead");
    let epoch = lease_epoch(&c, shard);
    sqs.start_message_move_task()
        .source_arn(common::queue_arn("dead"))
        .destination_arn(common::queue_arn(&name))
        .send()
        .await
        .unwrap();
    let lister = client(&c, 1);
    let asked = Instant::now();
    loop {
        let tasks = lister
            .list_message_move_tasks()
            .source_arn(common::queue_arn("dead"))
            .send()
            .await
            .unwrap();
        let task = &tasks.results()[0];
        if task.status() == Some("COMPLETED") {
            assert_eq!(task.approximate_number_of_messages_moved(), MESSAGES as i64);
            break;
        }
        assert!(
            asked.elapsed() < LEASE * 5,
            "the task did not complete: {task:?}"
        );
    }
    // Asked right after COMPLETED, through a third node.
    let visible = attribute(
        &client(&c, 2),
        &target,
        QueueAttributeName::ApproximateNumberOfMessages,
    )
    .await;
    assert_eq!(visible, MESSAGES.to_string());
    let mut sent: Vec<String> = (0..MESSAGES).map(|i| format!("m{i}")).collect();
    sent.sort();
    assert_eq!(bodies(&client(&c, 2), &target).await, sent);
    assert_eq!(
        lease_epoch(&c, shard),
        epoch,
        "the source's holder lost its lease"
    );
}

/// Queues "dead" and "source", "source" dead-lettering into "dead" (a
/// move task reads only from a dead-letter queue): their URLs.
async fn dead_letter_pair(sqs: &Client) -> (String, String) {
    let dead = create_queue_via(sqs, "dead", &[]).await;
    let policy = format!(
        r#"{{"deadLetterTargetArn":"{}","maxReceiveCount":"1"}}"#,
        common::queue_arn("dead")
    );
    let source = create_queue_via(sqs, "source", &[("RedrivePolicy", policy.as_str())]).await;
    (dead, source)
}

/// The epoch of `shard`'s lease.
fn lease_epoch(c: &Cluster, shard: i64) -> i64 {
    let shard = shard as i32;
    pg::with_client(&c.url, move |pg| {
        pg.query_one("SELECT epoch FROM retsu.lease WHERE id = $1", &[&shard])
            .unwrap()
            .get(0)
    })
}

/// A queue's name from its URL.
fn neighbour_name(url: &str) -> String {
    url.rsplit('/').next().unwrap().to_string()
}

/// Waits until every running node serves some of the shards and the
/// shards are all served: the share each node aims at once all joined.
async fn wait_spread(c: &Cluster, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let mut served = Vec::new();
        let mut count = 0;
        for (i, node) in c.nodes.iter().enumerate() {
            if node.process.is_none() {
                continue;
            }
            let shards = match c.view(i).await {
                Some(v) => {
                    count = count.max(v["shards"].as_array().map_or(0, Vec::len));
                    v["serving_shards"].as_array().map_or(0, Vec::len)
                }
                None => 0,
            };
            served.push(shards);
        }
        let total: usize = served.iter().sum();
        let most = served.iter().max().copied().unwrap_or(0);
        let least = served.iter().min().copied().unwrap_or(0);
        if least > 0 && most - least <= 1 && total == count {
            return;
        }
        if Instant::now() >= deadline {
            let mut views = Vec::new();
            for i in 0..c.nodes.len() {
                views.push(c.view(i).await);
            }
            panic!("the shards did not spread over the nodes: {served:?} {views:#?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The node serving `shard`, by the nodes' own views.
async fn server_of(c: &Cluster, shard: i64) -> usize {
    match serving(c, shard).await {
        Some(i) => i,
        None => panic!("no node serves shard {shard}"),
    }
}

/// Three nodes with the shards spread over them (None without PostgreSQL).
async fn spread_cluster(hint: &str, lease: Duration) -> Option<Cluster> {
    if no_postgres() {
        return None;
    }
    let c = Cluster::start(hint, 3, lease).await;
    wait_spread(&c, Duration::from_secs(20)).await;
    Some(c)
}

/// Waits until node `to` serves `shard`, failing after `within`.
async fn wait_served_by(c: &Cluster, shard: i64, to: usize, within: Duration) {
    let asked = Instant::now();
    while serving(c, shard).await != Some(to) {
        assert!(
            asked.elapsed() < within,
            "shard {shard} did not reach node {to}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The node serving `shard` now, if one does (not while it moves).
async fn serving(c: &Cluster, shard: i64) -> Option<usize> {
    for i in 0..c.nodes.len() {
        if c.nodes[i].process.is_none() {
            continue;
        }
        if let Some(v) = c.view(i).await {
            if v["serving_shards"]
                .as_array()
                .is_some_and(|s| s.iter().any(|x| x.as_i64() == Some(shard)))
            {
                return Some(i);
            }
        }
    }
    None
}

/// The shard each queue name was placed in.
fn shard_of(c: &Cluster, name: &str) -> i64 {
    let name = name.to_string();
    pg::with_client(&c.url, move |pg| {
        pg.query_one(
            "SELECT shard FROM retsu.placement WHERE kind = 'queue' AND name = $1",
            &[&name],
        )
        .unwrap()
        .get::<_, i32>(0)
    })
    .into()
}

async fn post_json(
    c: &Cluster,
    i: usize,
    path: &str,
    body: serde_json::Value,
) -> serde_json::Value {
    let r = reqwest::Client::new()
        .post(format!("{}{path}", c.nodes[i].endpoint()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = r.status();
    let text = r.text().await.unwrap();
    assert_eq!(status, 200, "{path}: {text}");
    serde_json::from_str(&text).unwrap()
}

/// Every node's own clock (as its cluster view shows it) stands at `at`, frozen.
async fn every_clock_at(c: &Cluster, at: u64) {
    for i in 0..c.nodes.len() {
        if c.nodes[i].process.is_none() {
            continue;
        }
        let v = c.view(i).await.expect("the node answers");
        assert_eq!(v["clock"]["frozen"], true, "node {i}: {v}");
        assert_eq!(v["clock"]["now_ms"].as_u64(), Some(at), "node {i}: {v}");
    }
}

/// What a receive through `via` finds on `q` now (no wait): bodies and
/// their SentTimestamp and ApproximateReceiveCount.
async fn receive_now(c: &Cluster, via: usize, q: &str) -> Vec<(String, String, String)> {
    use aws_sdk_sqs::types::MessageSystemAttributeName as A;
    let r = client(c, via)
        .receive_message()
        .queue_url(q)
        .max_number_of_messages(10)
        .visibility_timeout(30)
        .message_system_attribute_names(A::All)
        .send()
        .await
        .unwrap();
    let mut got: Vec<(String, String, String)> = r
        .messages()
        .iter()
        .map(|m| {
            let a = m.attributes().unwrap();
            (
                m.body().unwrap().to_string(),
                a[&A::SentTimestamp].clone(),
                a[&A::ApproximateReceiveCount].clone(),
            )
        })
        .collect();
    got.sort();
    got
}

/// One virtual clock on every node: frozen through one node, advanced
/// through others, every node's engines read the new time as soon as the
/// change is answered (queues held by three different nodes, reached
/// through other nodes than their holders); a node started after a change
/// reads the changed clock before it serves anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_node_reads_the_cluster_clock_as_soon_as_a_change_is_answered() {
    if no_postgres() {
        return;
    }
    let mut c = Cluster::start("clock_everywhere", 3, LEASE).await;
    wait_spread(&c, Duration::from_secs(20)).await;
    // New names go to the shard with the fewest: eight queues, one a shard.
    let mut queues = Vec::new();
    let mut on: Vec<Option<String>> = vec![None; 3];
    for n in 0..8 {
        let name = format!("q{n}");
        let url = create_queue_via(&client(&c, n % 3), &name, &[]).await;
        let shard = shard_of(&c, &name);
        on[server_of(&c, shard).await].get_or_insert(url.clone());
        queues.push((url, shard));
    }
    let on: Vec<String> = on
        .into_iter()
        .map(|q| q.expect("every node holds a queue"))
        .collect();

    let frozen = post_json(&c, 0, "/_retsu/clock", serde_json::json!({"freeze": true})).await;
    let t = frozen["now_ms"].as_u64().unwrap();
    every_clock_at(&c, t).await;
    // Sent through a node other than the queue's holder: one at once,
    // one delayed a minute.
    for (h, q) in on.iter().enumerate() {
        let sqs = client(&c, (h + 1) % 3);
        sqs.send_message()
            .queue_url(q)
            .message_body(format!("now{h}"))
            .send()
            .await
            .unwrap();
        sqs.send_message()
            .queue_url(q)
            .message_body(format!("later{h}"))
            .delay_seconds(60)
            .send()
            .await
            .unwrap();
    }
    // Every holder's engine stamped them at the frozen time.
    for (h, q) in on.iter().enumerate() {
        let got = receive_now(&c, (h + 2) % 3, q).await;
        assert_eq!(
            got,
            [(format!("now{h}"), t.to_string(), "1".to_string())],
            "node {h}"
        );
    }
    // (advanced through, ms, what each queue shows then)
    let steps: [(usize, u64, &[&str]); 4] = [
        (1, 29_999, &[]),
        (2, 1, &["now"]),
        (0, 29_999, &[]),
        (1, 1, &["later", "now"]),
    ];
    let mut at = t;
    for (via, ms, shown) in steps {
        let moved = post_json(
            &c,
            via,
            "/_retsu/clock",
            serde_json::json!({ "advance": ms }),
        )
        .await;
        at += ms;
        assert_eq!(moved["now_ms"].as_u64(), Some(at), "{moved}");
        every_clock_at(&c, at).await;
        for (h, q) in on.iter().enumerate() {
            let got: Vec<String> = receive_now(&c, (h + via) % 3, q)
                .await
                .into_iter()
                .map(|(body, sent, _)| {
                    assert_eq!(sent, t.to_string());
                    body
                })
                .collect();
            let wanted: Vec<String> = shown.iter().map(|b| format!("{b}{h}")).collect();
            assert_eq!(got, wanted, "node {h} at +{} ms", at - t);
        }
    }

    // A node killed, the clock moved (the change answers without it), the
    // node started again: it reads the moved clock before anything else.
    let keeper = c.wait_for_holder(Duration::from_secs(10)).await;
    let gone = (keeper + 1) % 3;
    c.kill(gone);
    let via = 3 - keeper - gone;
    let moved = post_json(
        &c,
        via,
        "/_retsu/clock",
        serde_json::json!({"advance": "1h"}),
    )
    .await;
    at += 3_600_000;
    assert_eq!(moved["now_ms"].as_u64(), Some(at), "{moved}");
    c.start_node(gone);
    every_clock_at(&c, at).await;
    wait_spread(&c, Duration::from_secs(20)).await;
    // A queue the restarted node holds now.
    let mut held = None;
    for (q, shard) in &queues {
        if server_of(&c, *shard).await == gone {
            held = Some(q.clone());
        }
    }
    let q = &held.expect("the restarted node holds a queue");
    client(&c, keeper)
        .send_message()
        .queue_url(q)
        .message_body("after")
        .send()
        .await
        .unwrap();
    let got = receive_now(&c, gone, q).await;
    assert!(
        got.contains(&("after".to_string(), at.to_string(), "1".to_string())),
        "{got:?}"
    );

    // The reset puts every node's clock back on system time.
    post_json(&c, gone, "/_retsu/reset", serde_json::json!({})).await;
    for i in 0..3 {
        let v = c.view(i).await.unwrap();
        assert_eq!(v["clock"]["frozen"], false, "node {i}: {v}");
        assert!(
            v["clock"]["offset_ms"].as_i64().unwrap().abs() < 5_000,
            "{v}"
        );
    }
}
