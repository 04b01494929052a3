//! One queue: its settings, tags and messages behind one lock, and the
//! notification long polls wait on.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use tokio::sync::Notify;
use uuid::Uuid;

use super::attributes::QueueSettings;
use super::receipt::ReceiptKey;
use super::store::MessageStore;
use super::QueueKey;

/// How long FIFO deduplication ids and receive attempt ids are remembered.
pub const DEDUP_WINDOW_MS: u64 = 5 * 60 * 1000;

pub struct Queue {
    pub key: QueueKey,
    pub arn: String,
    /// Distinguishes this queue from an earlier one of the same name, so
    /// receipt handles of a deleted queue are never accepted.
    pub uid: u64,
    pub created_ms: u64,
    /// The server's receipt-handle secret (see `receipt.rs`).
    pub receipt_key: ReceiptKey,
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
    pub fn new(
        key: QueueKey,
        uid: u64,
        settings: QueueSettings,
        tags: BTreeMap<String, String>,
        now: u64,
        receipt_key: ReceiptKey,
    ) -> Queue {
        let fifo = settings.fifo;
        let dedup_per_group = settings.dedup_per_group;
        Queue {
            arn: key.arn(),
            key,
            uid,
            created_ms: now,
            receipt_key,
            state: Mutex::new(QueueState {
                settings,
                tags,
                last_modified_ms: now,
                last_purge_ms: None,
                store: MessageStore::new(fifo),
                dedup: Dedup::default(),
                dedup_per_group,
                attempts: HashMap::new(),
                last_sequence: 0,
            }),
            notify: Notify::new(),
            deleted: AtomicBool::new(false),
        }
    }

    pub fn is_fifo(&self) -> bool {
        self.key.name.ends_with(".fifo")
    }

    /// Locks the queue's state. A panic elsewhere must not make the queue
    /// unusable, so a poisoned lock is taken over.
    pub fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Locks the state with every time-driven transition applied.
    pub fn lock_at(&self, now: u64) -> MutexGuard<'_, QueueState> {
        let mut state = self.lock();
        state.tick(now);
        state
    }

    pub fn mark_deleted(&self) {
        self.deleted.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    pub fn is_deleted(&self) -> bool {
        self.deleted.load(Ordering::SeqCst)
    }
}
