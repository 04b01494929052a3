//! Many FIFO groups, many concurrent consumers (issue 3): per-group order
//! is kept, no group ever has messages with two holders at once, and every
//! message is delivered exactly once.
//!
//! The visibility timeout is long and the manual clock never moves, so no
//! message can come back: any second delivery is a bug.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_sdk_sqs::types::{MessageSystemAttributeName, SendMessageBatchRequestEntry};
use common::*;

const GROUPS: usize = 20;
const PER_GROUP: usize = 25;
const CONSUMERS: usize = 8;
const TOTAL: usize = GROUPS * PER_GROUP;

/// What the consumers saw, shared between them.
#[derive(Default)]
struct Ledger {
    /// Group → (consumer holding it, messages of it received and not yet
    /// released for deletion).
    holders: HashMap<String, (usize, usize)>,
    /// Group → message indexes in delivery order.
    delivered: HashMap<String, Vec<usize>>,
    /// Every MessageId delivered.
    ids: HashSet<String>,
    violations: Vec<String>,
}

fn parse_body(body: &str) -> (String, usize) {
    // "g07-m013"
    let (g, m) = body.split_once('-').expect("body");
    (g.to_string(), m[1..].parse().expect("index"))
}

async fn consume(
    consumer: usize,
    client: aws_sdk_sqs::Client,
    url: String,
    ledger: Arc<Mutex<Ledger>>,
    deleted: Arc<AtomicUsize>,
) {
    let mut round = 0usize;
    while deleted.load(Ordering::SeqCst) < TOTAL {
        round += 1;
        // Vary the batch size between consumers and rounds.
        let max = 1 + ((consumer + round) % 10) as i32;
        let out = client
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(max)
            .wait_time_seconds(0)
            .message_system_attribute_names(MessageSystemAttributeName::MessageGroupId)
            .send()
            .await
            .expect("ReceiveMessage");
        let messages = out.messages().to_vec();
        if messages.is_empty() {
            tokio::task::yield_now().await;
            continue;
        }
        assert!(messages.len() <= max as usize);
        {
            let mut l = ledger.lock().unwrap();
            // Check every group in this response against the holders first
            // (one response may carry several messages of one group).
            let mut groups_here: Vec<String> = Vec::new();
            for m in &messages {
                let (g, _) = parse_body(m.body().unwrap());
                let attr = m
                    .attributes()
                    .and_then(|a| a.get(&MessageSystemAttributeName::MessageGroupId))
                    .cloned();
                if attr.as_deref() != Some(g.as_str()) {
                    l.violations
                        .push(format!("MessageGroupId {attr:?} on a message of {g}"));
                }
                if !groups_here.contains(&g) {
                    groups_here.push(g);
                }
            }
            for g in &groups_here {
                if let Some((holder, n)) = l.holders.get(g) {
                    if *n > 0 {
                        let v = format!(
                            "group {g} handed to consumer {consumer} while consumer {holder} holds {n} of its messages"
                        );
                        l.violations.push(v);
                    }
                }
            }
            for m in &messages {
                let (g, i) = parse_body(m.body().unwrap());
                let entry = l.holders.entry(g.clone()).or_insert((consumer, 0));
                entry.0 = consumer;
                entry.1 += 1;
                l.delivered.entry(g.clone()).or_default().push(i);
                let id = m.message_id().unwrap().to_string();
                if !l.ids.insert(id.clone()) {
                    l.violations
                        .push(format!("message {id} ({g}/{i}) delivered twice"));
                }
            }
        }
        // Release each message in the ledger *before* deleting it: the
        // server cannot hand out the group's next message until the delete
        // has arrived, so a correct server never trips the check above.
        for m in &messages {
            let (g, _) = parse_body(m.body().unwrap());
            {
                let mut l = ledger.lock().unwrap();
                let entry = l.holders.get_mut(&g).expect("held");
                entry.1 -= 1;
            }
            client
                .delete_message()
                .queue_url(&url)
                .receipt_handle(m.receipt_handle().unwrap())
                .send()
                .await
                .expect("DeleteMessage");
            deleted.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_groups_many_consumers_keep_order_and_exclusivity() {
    let t = TestServer::start().await;
    let url = t
        .create_fifo_queue("busy.fifo", &[("VisibilityTimeout", "3600")])
        .await;

    // Interleave the groups: round i sends message i of every group.
    for i in 0..PER_GROUP {
        for chunk in (0..GROUPS).collect::<Vec<_>>().chunks(10) {
            let mut req = t.client.send_message_batch().queue_url(&url);
            for &g in chunk {
                let body = format!("g{g:02}-m{i:03}");
                req = req.entries(
                    SendMessageBatchRequestEntry::builder()
                        .id(format!("e{g}"))
                        .message_body(&body)
                        .message_group_id(format!("g{g:02}"))
                        .message_deduplication_id(&body)
                        .build()
                        .unwrap(),
                );
            }
            let out = req.send().await.expect("SendMessageBatch");
            assert!(out.failed().is_empty(), "{:?}", out.failed());
        }
    }
    assert_eq!(t.counts(&url).await, (TOTAL as u64, 0, 0));

    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let deleted = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for c in 0..CONSUMERS {
        handles.push(tokio::spawn(consume(
            c,
            t.new_client(REGION),
            url.clone(),
            ledger.clone(),
            deleted.clone(),
        )));
    }
    let all = async {
        for h in handles {
            h.await.expect("consumer panicked");
        }
    };
    tokio::time::timeout(Duration::from_secs(120), all)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "consumers did not drain the queue in time: {} of {TOTAL} deleted",
                deleted.load(Ordering::SeqCst)
            )
        });

    {
        let l = ledger.lock().unwrap();
        assert!(
            l.violations.is_empty(),
            "{} violations, first: {:?}",
            l.violations.len(),
            &l.violations[..l.violations.len().min(5)]
        );
        assert_eq!(l.ids.len(), TOTAL, "every message delivered once");
        assert_eq!(l.delivered.len(), GROUPS);
        let expected: Vec<usize> = (0..PER_GROUP).collect();
        for (g, order) in &l.delivered {
            assert_eq!(order, &expected, "order within group {g}");
        }
        assert_eq!(deleted.load(Ordering::SeqCst), TOTAL);
    }
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    assert!(t.receive(&url, 10).await.is_empty());
}
