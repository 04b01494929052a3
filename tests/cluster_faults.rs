//! The cluster under faults, for a bounded time: three nodes, six
//! producers and two consumers spread over all three, on a standard queue
//! (with a dead-letter queue), a FIFO queue and an SNS topic fanning out to
//! two queues; meanwhile nodes are killed, paused past their lease and cut
//! from PostgreSQL, and PostgreSQL itself restarts, while an operator
//! moves queues from node to node (`retsu cluster move`). At the end: no
//! acknowledged send lost, no acknowledged delete returned, every FIFO
//! group in order without duplicates, and the failover times.
//!
//! Needs `RETSU_TEST_POSTGRES` and `RETSU_TEST_POSTGRES_DIR` (the server's
//! directory, to restart it): `scripts/postgres.sh run cargo test --test
//! cluster_faults`. `RETSU_FAULT_SECONDS` sets how long faults go on.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_sqs::types::MessageSystemAttributeName;
use aws_sdk_sqs::Client;
use common::cluster::Cluster;
use common::pg;
use rand::Rng;

const LEASE: Duration = Duration::from_secs(2);
/// A standard message whose body starts so is never deleted: it goes to
/// the dead-letter queue after this many receives.
const POISON: &str = "poison";
const MAX_RECEIVES: i32 = 2;

/// Clients for each node: no retries, and a deadline, so a request stuck
/// at a paused node ends and counts as unanswered.
fn sqs(endpoint: &str) -> Client {
    let config = aws_sdk_sqs::Config::builder()
        .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
        .region(aws_sdk_sqs::config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_sqs::config::Credentials::new(
            "test", "test", None, None, "static",
        ))
        .endpoint_url(endpoint)
        .retry_config(aws_sdk_sqs::config::retry::RetryConfig::disabled())
        .timeout_config(
            aws_sdk_sqs::config::timeout::TimeoutConfig::builder()
                .operation_timeout(Duration::from_secs(6))
                .build(),
        )
        .build();
    Client::from_conf(config)
}

fn sns(endpoint: &str) -> aws_sdk_sns::Client {
    let config = aws_sdk_sns::Config::builder()
        .behavior_version(aws_sdk_sns::config::BehaviorVersion::latest())
        .region(aws_sdk_sns::config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_sns::config::Credentials::new(
            "test", "test", None, None, "static",
        ))
        .endpoint_url(endpoint)
        .retry_config(aws_sdk_sns::config::retry::RetryConfig::disabled())
        .timeout_config(
            aws_sdk_sns::config::timeout::TimeoutConfig::builder()
                .operation_timeout(Duration::from_secs(6))
                .build(),
        )
        .build();
    aws_sdk_sns::Client::from_conf(config)
}

/// What the clients saw.
#[derive(Default)]
struct Ledger {
    /// Bodies whose send (or publish) was answered with success.
    sent: BTreeSet<String>,
    /// Bodies whose delete was answered with success.
    deleted: HashSet<String>,
    /// Deletes that got no answer: they may have landed.
    maybe_deleted: HashSet<String>,
    violations: Vec<String>,
    /// Per FIFO group, the sequence numbers sent and answered.
    fifo_sent: BTreeMap<String, BTreeSet<u64>>,
    /// Answered requests, by the queue or topic asked, for the failover
    /// gaps of the queues and topics a lost node owned.
    answers: Vec<(String, Instant)>,
    failed: u64,
}

type Shared = Arc<Mutex<Ledger>>;

fn note_answer(ledger: &Shared, asked: &str) {
    let name = asked.rsplit(['/', ':']).next().unwrap_or(asked).to_string();
    ledger.lock().unwrap().answers.push((name, Instant::now()));
}

/// The queues and topics node `i` owns, as the cluster view shows them.
async fn owned_by(c: &Cluster, i: usize) -> Vec<String> {
    let Some(i) = (i < c.nodes.len()).then_some(i) else {
        return Vec::new();
    };
    for asked in 0..c.nodes.len() {
        let Some(v) = c.view(asked).await else {
            continue;
        };
        let Some(node) = v["nodes"]
            .as_array()
            .and_then(|nodes| nodes.iter().find(|n| n["id"] == c.nodes[i].id.as_str()))
        else {
            continue;
        };
        return ["queues", "topics"]
            .iter()
            .flat_map(|k| node[*k].as_array().cloned().unwrap_or_default())
            .filter_map(|n| n.as_str().map(String::from))
            .collect();
    }
    Vec::new()
}

fn note_failure(ledger: &Shared) {
    ledger.lock().unwrap().failed += 1;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_cluster_under_faults_loses_nothing_and_keeps_fifo_order() {
    if pg::admin_url().is_none() {
        eprintln!("skipped: RETSU_TEST_POSTGRES is not set (scripts/postgres.sh run … gives one)");
        return;
    }
    let pg_dir = std::env::var("RETSU_TEST_POSTGRES_DIR").ok();
    let fault_seconds: u64 = std::env::var("RETSU_FAULT_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let cluster = Cluster::start("faults", 3, LEASE).await;
    let store = cluster.url.clone();
    let shards = || {
        pg::with_client(&store, |pg| {
            pg.query_one("SELECT count(*) FROM retsu.lease", &[])
                .unwrap()
                .get::<_, i64>(0)
        })
    };
    let shards_at_start = shards();
    let endpoints: Vec<String> = cluster.nodes.iter().map(|n| n.endpoint()).collect();
    let setup = sqs(&endpoints[0]);
    let dlq = common::create_queue_via(&setup, "dlq", &[]).await;
    let standard = common::create_queue_via(
        &setup,
        "standard",
        &[(
            "RedrivePolicy",
            &format!(
                r#"{{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":"{MAX_RECEIVES}"}}"#
            ),
        )],
    )
    .await;
    let fifo = common::create_queue_via(&setup, "ordered.fifo", &[("FifoQueue", "true")]).await;
    let fan: Vec<String> = vec![
        common::create_queue_via(&setup, "fan-a", &[]).await,
        common::create_queue_via(&setup, "fan-b", &[]).await,
    ];
    let topic = sns(&endpoints[0])
        .create_topic()
        .name("fan")
        .send()
        .await
        .unwrap()
        .topic_arn()
        .unwrap()
        .to_string();
    for name in ["fan-a", "fan-b"] {
        sns(&endpoints[1])
            .subscribe()
            .topic_arn(&topic)
            .protocol("sqs")
            .endpoint(format!("arn:aws:sqs:us-east-1:000000000000:{name}"))
            .attributes("RawMessageDelivery", "true")
            .send()
            .await
            .unwrap();
    }
    // Idle queues beside them (names go to the shard with the fewest), so
    // that a queue's first move takes it out of a shard it shares and its
    // later moves take its own shard along: both kinds of move happen.
    for i in 0..10 {
        common::create_queue_via(&setup, &format!("idle-{i}"), &[]).await;
    }

    let ledger: Shared = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let counter = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();

    // Six producers: two on the standard queue, two on FIFO groups, two
    // publishing to the topic; each request through the next node.
    for p in 0..2 {
        let (endpoints, ledger, stop, counter, q) = (
            endpoints.clone(),
            ledger.clone(),
            stop.clone(),
            counter.clone(),
            standard.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let clients: Vec<Client> = endpoints.iter().map(|e| sqs(e)).collect();
            let mut i = p;
            while !stop.load(Ordering::Relaxed) {
                let n = counter.fetch_add(1, Ordering::Relaxed);
                let body = if n % 10 == 0 {
                    format!("{POISON}-{n}")
                } else {
                    format!("std-{n}")
                };
                i += 1;
                match clients[i % 3]
                    .send_message()
                    .queue_url(&q)
                    .message_body(&body)
                    .send()
                    .await
                {
                    Ok(_) => {
                        ledger.lock().unwrap().sent.insert(body);
                        note_answer(&ledger, &q);
                    }
                    Err(_) => note_failure(&ledger),
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }
    for p in 0..2 {
        let (endpoints, ledger, stop, q) = (
            endpoints.clone(),
            ledger.clone(),
            stop.clone(),
            fifo.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let clients: Vec<Client> = endpoints.iter().map(|e| sqs(e)).collect();
            let mut seq: HashMap<String, u64> = HashMap::new();
            let mut i = p;
            while !stop.load(Ordering::Relaxed) {
                let group = format!("g{}", (i % 2) * 2 + p);
                let s = *seq.entry(group.clone()).or_insert(1);
                let body = format!("{group}-{s:06}");
                // Retried with the same deduplication id until answered:
                // one message per sequence number.
                loop {
                    i += 1;
                    let r = clients[i % 3]
                        .send_message()
                        .queue_url(&q)
                        .message_body(&body)
                        .message_group_id(&group)
                        .message_deduplication_id(&body)
                        .send()
                        .await;
                    if r.is_ok() {
                        let mut l = ledger.lock().unwrap();
                        l.sent.insert(body.clone());
                        l.fifo_sent.entry(group.clone()).or_default().insert(s);
                        l.answers.push(("ordered.fifo".to_string(), Instant::now()));
                        break;
                    }
                    note_failure(&ledger);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                seq.insert(group, s + 1);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }
    for p in 0..2 {
        let (endpoints, ledger, stop, counter, topic) = (
            endpoints.clone(),
            ledger.clone(),
            stop.clone(),
            counter.clone(),
            topic.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let clients: Vec<aws_sdk_sns::Client> = endpoints.iter().map(|e| sns(e)).collect();
            let mut i = p;
            while !stop.load(Ordering::Relaxed) {
                let body = format!("fan-{}", counter.fetch_add(1, Ordering::Relaxed));
                i += 1;
                match clients[i % 3]
                    .publish()
                    .topic_arn(&topic)
                    .message(&body)
                    .send()
                    .await
                {
                    Ok(_) => {
                        ledger.lock().unwrap().sent.insert(body);
                        note_answer(&ledger, &topic);
                    }
                    Err(_) => note_failure(&ledger),
                }
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        }));
    }
    // Two consumers: one on the standard and fan-out queues, one on FIFO.
    let consumers_stop = Arc::new(AtomicBool::new(false));
    for (c, queues) in [
        (
            0usize,
            vec![standard.clone(), fan[0].clone(), fan[1].clone()],
        ),
        (1, vec![fifo.clone()]),
    ] {
        let (endpoints, ledger, stop) = (endpoints.clone(), ledger.clone(), consumers_stop.clone());
        tasks.push(tokio::spawn(async move {
            let clients: Vec<Client> = endpoints.iter().map(|e| sqs(e)).collect();
            let mut i = c;
            while !stop.load(Ordering::Relaxed) {
                for q in &queues {
                    i += 1;
                    let r = clients[i % 3]
                        .receive_message()
                        .queue_url(q)
                        .max_number_of_messages(10)
                        .wait_time_seconds(1)
                        .visibility_timeout(3)
                        .message_system_attribute_names(MessageSystemAttributeName::All)
                        .send()
                        .await;
                    let Ok(r) = r else {
                        note_failure(&ledger);
                        continue;
                    };
                    note_answer(&ledger, q);
                    let fifo_queue = q.ends_with(".fifo");
                    for m in r.messages() {
                        let body = m.body().unwrap_or_default().to_string();
                        {
                            let mut l = ledger.lock().unwrap();
                            if l.deleted.contains(&body) && !q.contains("fan-") {
                                l.violations.push(format!(
                                    "{body}: received again after its delete was answered"
                                ));
                            }
                            if fifo_queue {
                                check_fifo(&mut l, &body);
                            }
                        }
                        if body.starts_with(POISON) {
                            continue;
                        }
                        i += 1;
                        let d = clients[i % 3]
                            .delete_message()
                            .queue_url(q)
                            .receipt_handle(m.receipt_handle().unwrap_or_default())
                            .send()
                            .await;
                        let mut l = ledger.lock().unwrap();
                        // The fan-out queues each hold a copy: the key is
                        // the queue and the body.
                        let key = if q.contains("fan-") {
                            format!("{q}|{body}")
                        } else {
                            body.clone()
                        };
                        match d {
                            Ok(_) => {
                                l.deleted.insert(key);
                                let name = q.rsplit('/').next().unwrap_or(q).to_string();
                                l.answers.push((name, Instant::now()));
                            }
                            Err(_) => {
                                l.maybe_deleted.insert(key);
                                l.failed += 1;
                            }
                        }
                    }
                }
            }
        }));
    }

    // An operator moving a queue to a node every few seconds, through any
    // node; an ask that gets no answer (a node paused or down) is let go.
    let moves = Arc::new(AtomicU64::new(0));
    let mover = tokio::spawn({
        let (endpoints, stop, moves) = (endpoints.clone(), stop.clone(), moves.clone());
        let ids: Vec<String> = cluster.nodes.iter().map(|n| n.id.clone()).collect();
        async move {
            let http = reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .unwrap();
            let mut rng = rand::rngs::StdRng::seed_from_u64(11);
            let names = ["standard", "dlq", "ordered.fifo", "fan-a", "fan-b"];
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(2500)).await;
                let (queue, node) = (names[rng.gen_range(0..5)], &ids[rng.gen_range(0..3)]);
                let via = &endpoints[rng.gen_range(0..3)];
                let asked = http
                    .post(format!("{via}/_retsu/cluster/move"))
                    .header("content-type", "application/json")
                    .body(serde_json::json!({"queue": queue, "node": node}).to_string())
                    .send()
                    .await;
                let Ok(answer) = asked else { continue };
                let text = answer.text().await.unwrap_or_default();
                let done = serde_json::from_str::<serde_json::Value>(&text)
                    .is_ok_and(|v| v["moved"]["done"] == true);
                if done {
                    eprintln!("move: {queue} to {node}");
                    moves.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    });

    // Faults, while the load runs; a supervisor starts every node that
    // exited again (as an orchestrator would).
    let mut c = cluster;
    let started = Instant::now();
    let mut failovers: Vec<Duration> = Vec::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut step = 0;
    let mut pg_restarted = false;
    while started.elapsed() < Duration::from_secs(fault_seconds) {
        step += 1;
        let holder = c.wait_for_holder(LEASE * 10).await;
        let victim = match step % 5 {
            1 | 3 => rng.gen_range(0..3),
            4 if !pg_restarted && pg_dir.is_some() => usize::MAX,
            _ => holder,
        };
        // What the node about to fail owns: its queues' failover is timed.
        let owned = owned_by(&c, victim).await;
        let before = Instant::now();
        match step % 5 {
            1 => {
                eprintln!("fault: kill -9 {}", c.nodes[victim].id);
                c.kill(victim);
                tokio::time::sleep(Duration::from_millis(500)).await;
                c.start_node(victim);
            }
            2 => {
                eprintln!(
                    "fault: SIGSTOP the holder {} past its lease",
                    c.nodes[holder].id
                );
                c.signal(holder, "STOP");
                tokio::time::sleep(LEASE * 2).await;
                c.signal(holder, "CONT");
            }
            3 => {
                eprintln!("fault: cut {} from PostgreSQL", c.nodes[victim].id);
                c.nodes[victim].proxy.cut();
                tokio::time::sleep(LEASE * 2).await;
                c.nodes[victim].proxy.restore();
            }
            4 if !pg_restarted && pg_dir.is_some() => {
                eprintln!("fault: restart PostgreSQL");
                let status = std::process::Command::new("bash")
                    .args(["scripts/postgres.sh", "restart", pg_dir.as_deref().unwrap()])
                    .stdout(std::process::Stdio::null())
                    .status()
                    .unwrap();
                assert!(status.success());
                pg_restarted = true;
            }
            _ => {
                eprintln!("fault: kill -9 the holder {}", c.nodes[holder].id);
                c.kill(holder);
                c.start_node(holder);
            }
        }
        // Nodes that exited (lost the lease) start again.
        restart_exited(&mut c);
        let _ = c.wait_for_holder(LEASE * 10).await;
        restart_exited(&mut c);
        if !owned.is_empty() {
            // For each queue or topic the failed node owned, from its last
            // answer before the fault to its first after it; the longest.
            tokio::time::sleep(Duration::from_millis(500)).await;
            let l = ledger.lock().unwrap();
            let gaps = owned.iter().filter_map(|name| {
                let times = || l.answers.iter().filter(|(n, _)| n == name).map(|(_, t)| *t);
                let last = times().filter(|t| *t <= before).max()?;
                let first = times().filter(|t| *t > before).min()?;
                Some(first - last)
            });
            if let Some(gap) = gaps.max() {
                failovers.push(gap);
            }
        }
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }
    assert!(
        pg_restarted || pg_dir.is_none(),
        "PostgreSQL was not restarted: the faults ran too short"
    );
    if pg_dir.is_none() {
        eprintln!("note: RETSU_TEST_POSTGRES_DIR is not set; PostgreSQL was not restarted");
    }

    // Quiet: producers stop, consumers finish what is there.
    stop.store(true, Ordering::Relaxed);
    let _ = tokio::time::timeout(Duration::from_secs(10), mover).await;
    restart_exited(&mut c);
    c.wait_for_holder(LEASE * 10).await;
    tokio::time::sleep(Duration::from_secs(8)).await;
    consumers_stop.store(true, Ordering::Relaxed);
    for t in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(20), t).await;
    }
    restart_exited(&mut c);
    c.wait_for_holder(LEASE * 10).await;

    // What is left in every queue, read with a long visibility timeout.
    let reader = sqs(&endpoints[0]);
    let mut left: HashMap<String, Vec<String>> = HashMap::new();
    for q in [&standard, &dlq, &fifo, &fan[0], &fan[1]] {
        left.insert(q.clone(), drain(&reader, q).await);
    }
    let l = ledger.lock().unwrap();
    let mut violations = l.violations.clone();
    let mut lost = Vec::new();
    for body in &l.sent {
        let queues: Vec<&String> = if body.starts_with("fan-") {
            fan.iter().collect()
        } else if body.starts_with('g') {
            vec![&fifo]
        } else {
            vec![&standard]
        };
        for q in queues {
            let key = if q.contains("fan-") {
                format!("{q}|{body}")
            } else {
                body.clone()
            };
            let still =
                left[q].contains(body) || (body.starts_with(POISON) && left[&dlq].contains(body));
            if !(l.deleted.contains(&key) || l.maybe_deleted.contains(&key) || still) {
                lost.push(format!("{body} (in {q})"));
            }
            if l.deleted.contains(&key) && left[q].contains(body) {
                violations.push(format!("{body}: back in {q} after its delete was answered"));
            }
        }
    }
    // Each FIFO group's remaining messages are in order, once each.
    let fifo_left = &left[&fifo];
    let unique: HashSet<&String> = fifo_left.iter().collect();
    if unique.len() != fifo_left.len() {
        violations.push("a FIFO message is stored twice".into());
    }
    // A queue moves into a shard of its own once; after that it moves
    // with that shard, so the moves add at most one shard per queue.
    let shards_at_end = shards();
    if shards_at_end > shards_at_start + 5 {
        violations.push(format!(
            "{shards_at_end} shards after the moves, {shards_at_start} before"
        ));
    }
    failovers.sort();
    let p50 = failovers
        .get(failovers.len() / 2)
        .copied()
        .unwrap_or_default();
    let max = failovers.last().copied().unwrap_or_default();
    let poison_in_dlq = left[&dlq].len();
    eprintln!(
        "faults: {step} over {:?}; acknowledged sends {}, deletes answered {}, unanswered requests {}, \
         left: standard {} dlq {} fifo {} fan-a {} fan-b {}; lost {}, violations {}; \
         failovers {} (p50 {p50:?}, max {max:?}, lease {LEASE:?}); queues moved {}, \
         shards {shards_at_start} before and {shards_at_end} after",
        started.elapsed(),
        l.sent.len(),
        l.deleted.len(),
        l.failed,
        left[&standard].len(),
        poison_in_dlq,
        fifo_left.len(),
        left[&fan[0]].len(),
        left[&fan[1]].len(),
        lost.len(),
        violations.len(),
        failovers.len(),
        moves.load(Ordering::Relaxed)
    );
    for v in violations.iter().take(20) {
        eprintln!("violation: {v}");
    }
    for m in lost.iter().take(20) {
        eprintln!("lost: {m}");
    }
    assert!(lost.is_empty(), "acknowledged but lost: {lost:?}");
    assert!(violations.is_empty(), "{violations:#?}");
    assert!(
        l.sent.len() > 100,
        "too little got through: {}",
        l.sent.len()
    );
    assert!(
        poison_in_dlq > 0,
        "no message reached the dead-letter queue"
    );
    assert!(
        moves.load(Ordering::Relaxed) >= 3,
        "too few queue moves got through to tell"
    );
}

use rand::SeedableRng;

/// Checks a FIFO message against what its group allows: every earlier
/// number of its group deleted (or maybe deleted: its delete got no
/// answer). The consumer deletes each message before it checks the next,
/// so a batch's earlier messages count as deleted too.
fn check_fifo(l: &mut Ledger, body: &str) {
    let Some((group, seq)) = body.rsplit_once('-') else {
        return;
    };
    let Ok(seq) = seq.parse::<u64>() else {
        return;
    };
    for earlier in 1..seq {
        let key = format!("{group}-{earlier:06}");
        if !l.deleted.contains(&key) && !l.maybe_deleted.contains(&key) {
            l.violations.push(format!(
                "{body}: received while {key} was not yet deleted (order)"
            ));
            return;
        }
    }
}

fn restart_exited(c: &mut Cluster) {
    for i in 0..c.nodes.len() {
        let exited = match c.nodes[i].process.as_mut() {
            Some(p) => p.child.try_wait().ok().flatten().is_some(),
            None => true,
        };
        if exited {
            eprintln!("restarting {}", c.nodes[i].id);
            c.kill(i);
            c.start_node(i);
        }
    }
}

/// Every message left in `q`, deleted as read (a FIFO group returns no
/// more while one of its messages is in flight).
async fn drain(c: &Client, q: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut empty = 0;
    while empty < 2 {
        match c
            .receive_message()
            .queue_url(q)
            .max_number_of_messages(10)
            .visibility_timeout(600)
            .send()
            .await
        {
            Ok(r) if r.messages().is_empty() => empty += 1,
            Ok(r) => {
                for m in r.messages() {
                    out.push(m.body().unwrap_or_default().to_string());
                    c.delete_message()
                        .queue_url(q)
                        .receipt_handle(m.receipt_handle().unwrap_or_default())
                        .send()
                        .await
                        .unwrap_or_else(|e| panic!("deleting from {q}: {e:?}"));
                }
            }
            Err(e) => panic!("draining {q}: {e:?}"),
        }
    }
    out
}
