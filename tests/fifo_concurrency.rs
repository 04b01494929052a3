//! Many FIFO groups, many concurrent consumers: every
//! message is deleted exactly once, never delivered while someone holds
//! it, and every response carries, per group, a run of consecutive
//! messages starting at the group's oldest undeleted one — AWS's rule
//! that a message is receivable only when every earlier stored message of
//! its group is visible.
//!
//! Consumers also release messages (visibility 0, first, middle or last of
//! what they hold) and extend others before deleting them, so groups are
//! served again from a released head while later messages are in flight.
//! The visibility timeout is long and the manual clock never moves, so a
//! message comes back only when released.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_sdk_sqs::types::{Message, MessageSystemAttributeName, SendMessageBatchRequestEntry};
use common::*;

const GROUPS: usize = 20;
const PER_GROUP: usize = 25;
const CONSUMERS: usize = 8;
const TOTAL: usize = GROUPS * PER_GROUP;
/// A message is released at most this many times, so the queue drains.
const MAX_RELEASES: u32 = 2;

/// What the ledger knows of one message. A change that allows the server
/// to hand a message out again (release, delete) is recorded *before* the
/// request is sent, so a correct server never contradicts the ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Visible (never delivered, or released).
    Free,
    /// Delivered to this consumer and not released or deleted.
    Held(usize),
    /// Deleted (or being deleted).
    Gone,
}

/// What the consumers saw, shared between them.
struct Ledger {
    /// Group → state of each of its messages, by index.
    groups: HashMap<String, Vec<Slot>>,
    /// Group → message indexes in delivery order.
    delivered: HashMap<String, Vec<usize>>,
    /// (group, index) → times released.
    releases: HashMap<(String, usize), u32>,
    /// (group, index) → MessageId, the same on every delivery.
    ids: HashMap<(String, usize), String>,
    released: usize,
    extended: usize,
    violations: Vec<String>,
}

impl Ledger {
    fn new() -> Ledger {
        Ledger {
            groups: (0..GROUPS)
                .map(|g| (format!("g{g:02}"), vec![Slot::Free; PER_GROUP]))
                .collect(),
            delivered: HashMap::new(),
            releases: HashMap::new(),
            ids: HashMap::new(),
            released: 0,
            extended: 0,
            violations: Vec::new(),
        }
    }

    /// Checks one response against the rule and records its deliveries.
    fn record(&mut self, consumer: usize, messages: &[Message]) {
        let mut runs: Vec<(String, Vec<usize>)> = Vec::new();
        for m in messages {
            let (g, i) = parse_body(m.body().unwrap());
            let attr = m
                .attributes()
                .and_then(|a| a.get(&MessageSystemAttributeName::MessageGroupId))
                .cloned();
            if attr.as_deref() != Some(g.as_str()) {
                self.violations
                    .push(format!("MessageGroupId {attr:?} on a message of {g}"));
            }
            let id = m.message_id().unwrap().to_string();
            let known = self.ids.entry((g.clone(), i)).or_insert_with(|| id.clone());
            if *known != id {
                self.violations
                    .push(format!("{g}/{i} came back as {id}, first as {known}"));
            }
            match runs.iter_mut().find(|(rg, _)| *rg == g) {
                Some((_, run)) => run.push(i),
                None => runs.push((g, vec![i])),
            }
        }
        for (g, run) in runs {
            let slots = self.groups.get_mut(&g).expect("known group");
            // The stored messages of the group, oldest first: a run may
            // skip one deleted since, never one still stored.
            let expected: Vec<usize> = (0..PER_GROUP)
                .filter(|i| slots[*i] != Slot::Gone)
                .take(run.len())
                .collect();
            if run != expected {
                self.violations.push(format!(
                    "consumer {consumer} got {g} {run:?}, not a run of its oldest stored messages {expected:?}"
                ));
            }
            for &i in &run {
                if slots[i] != Slot::Free {
                    self.violations.push(format!(
                        "{g}/{i} delivered to consumer {consumer} while {:?}",
                        slots[i]
                    ));
                }
                slots[i] = Slot::Held(consumer);
                self.delivered.entry(g.clone()).or_default().push(i);
            }
        }
    }

    /// Records that `consumer` gives up a message it holds.
    fn give_up(&mut self, consumer: usize, g: &str, i: usize, to: Slot) {
        let slot = &mut self.groups.get_mut(g).expect("known group")[i];
        if *slot != Slot::Held(consumer) {
            let v = format!("consumer {consumer} gives up {g}/{i} but it is {slot:?}");
            self.violations.push(v);
        }
        *slot = to;
    }
}

fn parse_body(body: &str) -> (String, usize) {
    // "g07-m013"
    let (g, m) = body.split_once('-').expect("body");
    (g.to_string(), m[1..].parse().expect("index"))
}

/// What a consumer does with a message it received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Release,
    Extend,
    Delete,
}

/// A deterministic mix of actions (a small LCG per consumer).
fn choose(seed: &mut u64, releases_so_far: u32) -> Action {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    match (*seed >> 33) % 5 {
        0 | 1 if releases_so_far < MAX_RELEASES => Action::Release,
        2 => Action::Extend,
        _ => Action::Delete,
    }
}

async fn consume(
    consumer: usize,
    client: aws_sdk_sqs::Client,
    url: String,
    ledger: Arc<Mutex<Ledger>>,
    deleted: Arc<AtomicUsize>,
) {
    let mut round = 0usize;
    let mut seed = consumer as u64 + 1;
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
        let plan: Vec<Action> = {
            let mut l = ledger.lock().unwrap();
            l.record(consumer, &messages);
            messages
                .iter()
                .map(|m| {
                    let (g, i) = parse_body(m.body().unwrap());
                    let released = l.releases.get(&(g, i)).copied().unwrap_or(0);
                    choose(&mut seed, released)
                })
                .collect()
        };
        // Releases first (a later message may stay held while an earlier
        // one is visible again), then extensions, then deletes.
        for (m, _) in messages
            .iter()
            .zip(&plan)
            .filter(|(_, a)| **a == Action::Release)
        {
            let (g, i) = parse_body(m.body().unwrap());
            {
                let mut l = ledger.lock().unwrap();
                l.give_up(consumer, &g, i, Slot::Free);
                *l.releases.entry((g.clone(), i)).or_default() += 1;
                l.released += 1;
            }
            client
                .change_message_visibility()
                .queue_url(&url)
                .receipt_handle(m.receipt_handle().unwrap())
                .visibility_timeout(0)
                .send()
                .await
                .expect("ChangeMessageVisibility 0");
        }
        tokio::task::yield_now().await;
        for (m, _) in messages
            .iter()
            .zip(&plan)
            .filter(|(_, a)| **a == Action::Extend)
        {
            client
                .change_message_visibility()
                .queue_url(&url)
                .receipt_handle(m.receipt_handle().unwrap())
                .visibility_timeout(7200)
                .send()
                .await
                .expect("ChangeMessageVisibility 7200");
            ledger.lock().unwrap().extended += 1;
        }
        for (m, _) in messages
            .iter()
            .zip(&plan)
            .filter(|(_, a)| **a != Action::Release)
        {
            let (g, i) = parse_body(m.body().unwrap());
            ledger.lock().unwrap().give_up(consumer, &g, i, Slot::Gone);
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
async fn many_groups_many_consumers_keep_order_and_exactly_once() {
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

    let ledger = Arc::new(Mutex::new(Ledger::new()));
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
        assert_eq!(l.ids.len(), TOTAL, "every message delivered");
        assert!(
            l.groups.values().flatten().all(|s| *s == Slot::Gone),
            "every message deleted"
        );
        assert_eq!(deleted.load(Ordering::SeqCst), TOTAL, "each deleted once");
        // Deliveries of a group: indexes never go past a message not yet
        // delivered, and the releases and extensions really happened.
        for (g, order) in &l.delivered {
            let mut seen = 0;
            for &i in order {
                assert!(i <= seen, "{g}: {i} delivered before {seen} ({order:?})");
                seen = seen.max(i + 1);
            }
            assert_eq!(seen, PER_GROUP, "{g}");
        }
        let deliveries: usize = l.delivered.values().map(Vec::len).sum();
        assert_eq!(deliveries, TOTAL + l.released);
        assert!(l.released > TOTAL / 10, "only {} releases", l.released);
        assert!(l.extended > TOTAL / 10, "only {} extensions", l.extended);
    }
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    assert!(t.receive(&url, 10).await.is_empty());
}
