//! One queue: its settings, tags and messages behind one lock, and the
//! notification long polls wait on.

use std::collections::{BTreeMap, HashMap};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

use tokio::sync::Notify;

use super::attributes::QueueSettings;
pub use super::dedup::{Dedup, DedupEntry};
use super::events::{EventBus, Wakes};
use super::receipt::ReceiptKey;
use super::store::{ExtensionFlags, MessageStore};
use super::{QueueKey, SenderId};
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
    owner: SenderId,
    pub arn: String,
    /// Distinguishes this queue from an earlier one of the same name, so
    /// receipt handles of a deleted queue are never accepted.
    pub uid: u64,
    pub created_ms: u64,
    pub shared: Arc<Shared>,
    state: Mutex<QueueState>,
    /// The settings a send checks before it takes the lock (copied from
    /// `QueueState::settings` whenever they change): reading them under
    /// the lock made every send take it twice.
    send_limits: SendLimits,
    /// Woken whenever a message may have become receivable.
    pub notify: Notify,
    /// Long polls waiting on `notify` now (see [`Queue::wake`]).
    waiters: AtomicUsize,
    deleted: AtomicBool,
}

/// A long poll counted in [`Queue::waiters`].
pub(super) struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

thread_local! {
    /// Set when this thread woke a waiting long poll, until
    /// [`let_woken_polls_run_first`] reads it.
    static WOKE_A_POLL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Called by the SQS and SNS dispatchers after every request, before it
/// answers (so the flag never outlives the request that set it).
///
/// Why: the runtime runs a task woken from a worker on that same worker,
/// after the task that woke it. A send's answer is written first, and on
/// loopback that write also wakes the sender's client: the longest step
/// of a long poll's wake-up (BENCHMARKS.md, "The long-poll wake").
/// Yielding once lets the woken poll answer first; the sender's answer
/// follows it.
pub async fn let_woken_polls_run_first() {
    if WOKE_A_POLL.replace(false) {
        tokio::task::yield_now().await;
    }
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

/// See [`Queue::send_limits`].
struct SendLimits {
    maximum_message_size: AtomicU32,
    content_based_deduplication: AtomicBool,
}

impl SendLimits {
    fn of(settings: &QueueSettings) -> SendLimits {
        SendLimits {
            maximum_message_size: AtomicU32::new(settings.maximum_message_size),
            content_based_deduplication: AtomicBool::new(settings.content_based_deduplication),
        }
    }
}

/// The result of one FIFO receive attempt, replayed on a retry.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub expires_ms: u64,
    /// (slot, receipt nonce) of each message returned.
    pub messages: Vec<(u64, u64)>,
}

impl QueueState {
    /// The deduplication scope of a send in `group`: the group itself
    /// when the queue deduplicates per group, else one scope for all.
    pub fn dedup_scope<'a>(&self, group: &'a str) -> &'a str {
        if self.dedup_per_group {
            group
        } else {
            ""
        }
    }

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
    pub fn sender_id(&self, account: &str) -> SenderId {
        if *self.owner == *account {
            self.owner.clone()
        } else {
            SenderId::new(account)
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
            owner: SenderId::new(&key.account),
            key,
            uid,
            created_ms: now,
            shared,
            send_limits: SendLimits::of(&settings),
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
            waiters: AtomicUsize::new(0),
            deleted: AtomicBool::new(false),
        }
    }

    /// (MaximumMessageSize, ContentBasedDeduplication), without the lock.
    pub fn send_limits(&self) -> (u32, bool) {
        let l = &self.send_limits;
        (
            l.maximum_message_size.load(Ordering::Relaxed),
            l.content_based_deduplication.load(Ordering::Relaxed),
        )
    }

    pub fn is_fifo(&self) -> bool {
        self.key.name.ends_with(".fifo")
    }

    /// The server's receipt-handle secret.
    pub fn receipt_key(&self) -> &ReceiptKey {
        &self.shared.receipt_key
    }

    /// Locks the queue's state (a panic elsewhere does not poison it: the
    /// queue stays usable). Transitions made under the guard are published
    /// when it is dropped.
    pub fn lock(&self) -> QueueGuard<'_> {
        QueueGuard {
            queue: self,
            state: Some(self.state.lock()),
            now: None,
        }
    }

    /// Locks the state with every time-driven transition applied.
    pub fn lock_at(&self, now: u64) -> QueueGuard<'_> {
        let mut guard = self.lock();
        guard.now = Some(now);
        guard.tick(now);
        guard
    }

    /// Hands the transitions made under a guard to the subscribers and
    /// wakes the long polls they concern. The events are numbered under
    /// the queue's lock, which is released before they are delivered.
    fn publish(&self, mut state: MutexGuard<'_, QueueState>, now: Option<u64>) {
        let mut raw = Vec::new();
        state.store.take_outbox(&mut raw);
        let now = now.unwrap_or_else(|| self.shared.clock.now_ms());
        // For the journal: each changed message as it is now (a removed
        // one is gone: `None`). Time-driven changes need none.
        let snapshots: Vec<_> = if self.shared.events.is_capturing() {
            raw.iter()
                .map(|r| {
                    (r.at.is_none())
                        .then(|| state.store.get(r.slot))
                        .flatten()
                        .map(|m| Arc::new(m.clone()))
                })
                .collect()
        } else {
            Vec::new()
        };
        let stamped = self
            .shared
            .events
            .stamp(&self.key_arc, self.uid, &raw, &snapshots, now);
        let wakes = Wakes::of(&raw, self.is_fifo());
        // Give the outbox its capacity back for the next operation.
        raw.clear();
        state.store.take_outbox(&mut raw);
        drop(state);
        if let Some(stamped) = stamped {
            stamped.deliver();
        }
        self.wake(wakes);
    }

    /// Wakes the waiting long polls `wakes` names: the one place a queue's
    /// waiters are notified.
    pub(super) fn wake(&self, wakes: Wakes) {
        if (wakes.everyone || wakes.one_each > 0) && self.waiters.load(Ordering::Relaxed) > 0 {
            WOKE_A_POLL.set(true);
        }
        if wakes.everyone {
            self.notify.notify_waiters();
        } else {
            for _ in 0..wakes.one_each {
                self.notify.notify_one();
            }
        }
    }

    /// Counts a long poll as waiting until the guard drops.
    pub(super) fn waiting(&self) -> Waiting<'_> {
        self.waiters.fetch_add(1, Ordering::Relaxed);
        Waiting(&self.waiters)
    }

    pub fn mark_deleted(&self) {
        self.deleted.store(true, Ordering::SeqCst);
        self.wake(Wakes::everyone());
    }

    pub fn is_deleted(&self) -> bool {
        self.deleted.load(Ordering::SeqCst)
    }
}

/// The locked state of a queue. Dropping it publishes the transitions made
/// meanwhile, numbered before the lock is released, so each queue's events
/// stay in order (see [`Queue::publish`]).
pub struct QueueGuard<'a> {
    queue: &'a Queue,
    /// `None` only while being dropped.
    state: Option<MutexGuard<'a, QueueState>>,
    now: Option<u64>,
}

impl Deref for QueueGuard<'_> {
    type Target = QueueState;

    fn deref(&self) -> &QueueState {
        self.state.as_ref().expect("held until dropped")
    }
}

impl DerefMut for QueueGuard<'_> {
    fn deref_mut(&mut self) -> &mut QueueState {
        self.state.as_mut().expect("held until dropped")
    }
}

impl QueueGuard<'_> {
    /// Replaces the queue's settings (the only way they change after the
    /// queue is made, so [`Queue::send_limits`] follows them).
    pub fn set_settings(&mut self, settings: QueueSettings) {
        let l = &self.queue.send_limits;
        l.maximum_message_size
            .store(settings.maximum_message_size, Ordering::Relaxed);
        l.content_based_deduplication
            .store(settings.content_based_deduplication, Ordering::Relaxed);
        self.settings = settings;
    }
}

impl Drop for QueueGuard<'_> {
    fn drop(&mut self) {
        if let Some(state) = self.state.take() {
            if state.store.has_events() {
                self.queue.publish(state, self.now);
            }
        }
    }
}

impl QueueState {
    /// Applies the queue's `retsu:extensions` tag after its tags changed.
    pub fn refresh_extensions(&mut self) {
        self.store
            .set_extensions(ExtensionFlags::from_tags(&self.tags));
    }
}
