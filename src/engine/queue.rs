//! One queue: its settings, tags and messages behind one lock, and the
//! notification long polls wait on.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;
use uuid::Uuid;

use super::attributes::QueueSettings;
use super::events::{EventBus, Wakes};
use super::receipt::ReceiptKey;
use super::store::MessageStore;
use super::QueueKey;
use crate::clock::Clock;

/// How long FIFO deduplication ids and receive attempt ids are remembered.
pub const DEDUP_WINDOW_MS: u64 = 5 * 60 * 1000;

/// What every queue of one engine shares.
pub struct Shared {
    /// The server's receipt-handle secret (see `receipt.rs`).
    pub receipt_key: ReceiptKey,
    pub events: EventBus,
    pub clock: Arc<dyn Clock>,
}

pub struct Queue {
    pub key: QueueKey,
    /// The key again, shared by this queue's events.
    key_arc: Arc<QueueKey>,
    /// The owning account, shared as the `SenderId` of the messages it
    /// sends (one allocation per queue instead of one per message).
    owner: Arc<str>,
    pub arn: String,
    /// Distinguishes this queue from an earlier one of the same name, so
    /// receipt handles of a deleted queue are never accepted.
    pub uid: u64,
    pub created_ms: u64,
    pub shared: Arc<Shared>,
    state: Mutex<QueueState>,
    /// Woken whenever a message may have become receivable.
    pub notify: Notify,
    deleted: AtomicBool,
}

pub struct QueueState {
    pub settings: QueueSettings,
    pub tags: BTreeMap<String, String>,
    pub last_modified_ms: u64,
    pub last_purge_ms: Option<u64>,
    pub store: MessageStore,
    pub dedup: Dedup,
    /// DeduplicationScope as the queue was created: AWS keeps
    /// deduplicating that way whatever SetQueueAttributes stores later.
    pub dedup_per_group: bool,
    /// FIFO ReceiveRequestAttemptId → what that attempt returned.
    pub attempts: HashMap<String, Attempt>,
    pub last_sequence: u128,
    /// Sends with sequence numbers up to here are out of the deduplication
    /// window whatever their age (an admin reset cleared it); persisted so
    /// a restart does not bring their ids back.
    pub dedup_floor: u128,
}

/// The result of one FIFO receive attempt, replayed on a retry.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub expires_ms: u64,
    /// (slot, receipt nonce) of each message returned.
    pub messages: Vec<(u64, u64)>,
}

/// A remembered FIFO send.
#[derive(Debug, Clone, Copy)]
pub struct DedupEntry {
    pub message_id: Uuid,
    pub sequence_number: u128,
    pub expires_ms: u64,
}

/// FIFO deduplication ids seen in the last five minutes, kept even after
/// their message is gone.
#[derive(Debug, Default)]
pub struct Dedup {
    entries: HashMap<(String, String), DedupEntry>,
    order: VecDeque<(u64, (String, String))>,
}

impl Dedup {
    pub fn prune(&mut self, now: u64) {
        while let Some((expires, _)) = self.order.front() {
            if *expires > now {
                break;
            }
            let (expires, key) = self.order.pop_front().expect("front exists");
            if self
                .entries
                .get(&key)
                .is_some_and(|e| e.expires_ms == expires)
            {
                self.entries.remove(&key);
            }
        }
    }

    pub fn get(&self, key: &(String, String), now: u64) -> Option<DedupEntry> {
        self.entries
            .get(key)
            .filter(|e| e.expires_ms > now)
            .copied()
    }

    pub fn insert(&mut self, key: (String, String), entry: DedupEntry) {
        self.order.push_back((entry.expires_ms, key.clone()));
        self.entries.insert(key, entry);
    }
}

impl QueueState {
    /// Applies the transitions time has made due.
    pub fn tick(&mut self, now: u64) {
        let retention_ms = self.settings.message_retention_period as u64 * 1000;
        self.store.tick(now, retention_ms);
    }

    /// The next FIFO sequence number: 20 decimal digits, strictly
    /// increasing, derived from time so it also grows across restarts.
    pub fn next_sequence_number(&mut self, now: u64) -> u128 {
        let floor = now as u128 * 10_000_000;
        self.last_sequence = (self.last_sequence + 1).max(floor);
        self.last_sequence
    }
}

impl Queue {
    /// `account` as a shared string: the queue's own when they match.
    pub fn sender_id(&self, account: &str) -> Arc<str> {
        if *self.owner == *account {
            self.owner.clone()
        } else {
            Arc::from(account)
        }
    }

    pub fn new(
        key: QueueKey,
        uid: u64,
        settings: QueueSettings,
        tags: BTreeMap<String, String>,
        now: u64,
        shared: Arc<Shared>,
    ) -> Queue {
        let fifo = settings.fifo;
        let dedup_per_group = settings.dedup_per_group;
        // Opt-in extensions (`retsu:extensions` tag): store/extensions.rs.
        let store = MessageStore::new(fifo).with_extension_tags(&tags);
        Queue {
            arn: key.arn(),
            key_arc: Arc::new(key.clone()),
            owner: Arc::from(key.account.as_str()),
            key,
            uid,
            created_ms: now,
            shared,
            state: Mutex::new(QueueState {
                settings,
                tags,
                last_modified_ms: now,
                last_purge_ms: None,
                store,
                dedup: Dedup::default(),
                dedup_per_group,
                attempts: HashMap::new(),
                last_sequence: 0,
                dedup_floor: 0,
            }),
            notify: Notify::new(),
            deleted: AtomicBool::new(false),
        }
    }

    pub fn is_fifo(&self) -> bool {
        self.key.name.ends_with(".fifo")
    }

    /// The server's receipt-handle secret.
    pub fn receipt_key(&self) -> &ReceiptKey {
        &self.shared.receipt_key
    }

    /// Locks the queue's state. A panic elsewhere must not make the queue
    /// unusable, so a poisoned lock is taken over. Transitions made under
    /// the guard are published when it is dropped.
    pub fn lock(&self) -> QueueGuard<'_> {
        QueueGuard {
            queue: self,
            state: self.state.lock().unwrap_or_else(|p| p.into_inner()),
            now: None,
        }
    }

    /// Locks the state with every time-driven transition applied.
    pub fn lock_at(&self, now: u64) -> QueueGuard<'_> {
        let mut guard = self.lock();
        guard.now = Some(now);
        guard.state.tick(now);
        guard
    }

    /// Hands the transitions made under a guard to the subscribers and
    /// wakes the long polls they concern.
    fn publish(&self, state: &mut QueueState, now: Option<u64>) {
        let mut raw = Vec::new();
        state.store.take_outbox(&mut raw);
        let now = now.unwrap_or_else(|| self.shared.clock.now_ms());
        // For the journal: each changed message as it is now (a removed
        // one is gone: `None`). Time-driven changes need none.
        let snapshots: Vec<_> = if self.shared.events.is_capturing() {
            raw.iter()
                .map(|r| {
                    (r.at.is_none())
                        .then(|| state.store.get(r.seq))
                        .flatten()
                        .map(|m| Arc::new(m.clone()))
                })
                .collect()
        } else {
            Vec::new()
        };
        self.shared
            .events
            .publish(&self.key_arc, self.uid, &raw, &snapshots, now);
        let wakes = Wakes::of(&raw, self.is_fifo());
        if wakes.everyone {
            self.notify.notify_waiters();
        } else {
            for _ in 0..wakes.one_each {
                self.notify.notify_one();
            }
        }
        // Give the outbox its capacity back for the next operation.
        raw.clear();
        state.store.take_outbox(&mut raw);
    }

    pub fn mark_deleted(&self) {
        self.deleted.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    pub fn is_deleted(&self) -> bool {
        self.deleted.load(Ordering::SeqCst)
    }
}

/// The locked state of a queue. Dropping it publishes the transitions made
/// meanwhile, still under the lock, so each queue's events stay in order.
pub struct QueueGuard<'a> {
    queue: &'a Queue,
    state: MutexGuard<'a, QueueState>,
    now: Option<u64>,
}

impl Deref for QueueGuard<'_> {
    type Target = QueueState;

    fn deref(&self) -> &QueueState {
        &self.state
    }
}

impl DerefMut for QueueGuard<'_> {
    fn deref_mut(&mut self) -> &mut QueueState {
        &mut self.state
    }
}

impl Drop for QueueGuard<'_> {
    fn drop(&mut self) {
        if self.state.store.has_events() {
            self.queue.publish(&mut self.state, self.now);
        }
    }
}
