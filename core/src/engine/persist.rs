//! What the persistence journal needs from the engine, and nothing about
//! how it stores it: the queue-level state as plain data (reported through
//! [`Subscriber::queues_changed`] after every queue-level action, every
//! admin API change, and every move-task step that moved something), and
//! the way back in at start ([`Restorer`]).
//!
//! Messages travel in the event stream ([`events::Snapshot`]); what is here
//! changes rarely (queues, attributes, tags, policies, purge and
//! deleted-recently times, move tasks), so it is reported whole each time:
//! a few hundred bytes a queue, and simpler than a change per field.
//!
//! [`Subscriber::queues_changed`]: super::events::Subscriber::queues_changed
//! [`events::Snapshot`]: super::events::Snapshot

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use uuid::Uuid;

pub use super::queue::DEDUP_WINDOW_MS;
use super::queue::{Attempt, DedupEntry, Queue};
pub use super::queue_level::{EngineState, QueueRecord};
use super::store::StoredMessage;
use super::{Engine, QueueKey};

/// The settable attributes, in AWS's string form, that make up a queue's
/// settings (`FifoQueue` is `QueueRecord::fifo`).
const SETTINGS: &[&str] = &[
    "DelaySeconds",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
    "Policy",
    "RedrivePolicy",
    "RedriveAllowPolicy",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
];

impl QueueRecord {
    /// A queue's record as it is now (takes its lock).
    pub(super) fn of(q: &Queue) -> QueueRecord {
        let state = q.lock();
        QueueRecord {
            uid: q.uid,
            region: q.key.region.clone(),
            account: q.key.account.clone(),
            name: q.key.name.clone(),
            created_ms: q.created_ms,
            last_modified_ms: state.last_modified_ms,
            last_purge_ms: state.last_purge_ms,
            fifo: state.settings.fifo,
            attributes: SETTINGS
                .iter()
                .filter_map(|n| Some((n.to_string(), state.settings.render(n)?)))
                .collect(),
            tags: state.tags.clone(),
            dedup_per_group: state.dedup_per_group,
            last_sequence: state.last_sequence.to_string(),
            dedup_floor: state.dedup_floor.to_string(),
        }
    }
}

/// A remembered FIFO deduplication id, as the journal keeps it.
#[derive(Debug, Clone)]
pub struct DedupRecord {
    pub group: String,
    pub dedup_id: String,
    pub message_id: Uuid,
    pub sequence_number: u128,
    pub expires_ms: u64,
}

impl DedupRecord {
    /// The record a FIFO send leaves, if it has a deduplication id.
    pub fn of(message: &StoredMessage) -> Option<DedupRecord> {
        Some(DedupRecord {
            group: message.group_id().map_or("", |g| &**g).to_string(),
            dedup_id: message.dedup_id()?.to_string(),
            message_id: message.message_id,
            sequence_number: message.sequence_number()?,
            expires_ms: message.sent_ms + DEDUP_WINDOW_MS,
        })
    }
}

/// The journal's promise: `wait` resolves once everything emitted so far
/// is durable, or fails when writing it failed.
pub trait Durability: Send + Sync {
    /// Writing has failed and not recovered yet: refuse changes.
    fn failing(&self) -> bool;

    /// What a change refused while `failing` is answered.
    fn refusal(&self) -> crate::error::SqsError {
        crate::error::SqsError::internal(
            "The server cannot write to its data directory; only reads are served until it can. Please retry.",
        )
    }

    fn wait(
        &self,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<(), crate::error::SqsError>> + Send + '_>,
    >;
}

/// A service's snapshot of its state, for the journal.
type Snapshot = Box<dyn Fn() -> Option<serde_json::Value> + Send + Sync>;

/// The services beside SQS (SNS) that keep their state in the
/// queue-level state: what each reports, and what a restart gave back.
#[derive(Default)]
pub(super) struct Services {
    snapshots: std::sync::RwLock<Vec<(&'static str, Snapshot)>>,
    restored: std::sync::Mutex<BTreeMap<String, serde_json::Value>>,
}

impl Engine {
    /// Makes `snapshot` part of the queue-level state, under `name`: a
    /// service beside SQS keeps its state in the same journal this way.
    pub fn register_service(
        &self,
        name: &'static str,
        snapshot: impl Fn() -> Option<serde_json::Value> + Send + Sync + 'static,
    ) {
        let mut list = self
            .services
            .snapshots
            .write()
            .unwrap_or_else(|p| p.into_inner());
        list.retain(|(n, _)| *n != name);
        list.push((name, Box::new(snapshot)));
    }

    /// The state a data directory gave back for the service `name`, once.
    pub fn take_restored_service(&self, name: &str) -> Option<serde_json::Value> {
        self.services
            .restored
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(name)
    }

    /// Reports the queue-level state, with the services' (after a service
    /// changed its own state), and waits until it is durable.
    pub async fn service_changed(&self) -> Result<(), crate::error::SqsError> {
        self.persisted(true).await
    }

    /// The queue-level state as it is now.
    pub fn queue_level_state(&self) -> EngineState {
        self.queue_level_state_with(self.tasks.snapshot())
    }

    /// The queue-level state, with the move tasks as given (a caller that
    /// holds the task list passes its snapshot).
    pub(super) fn queue_level_state_with(&self, move_tasks: serde_json::Value) -> EngineState {
        let queues: Vec<Arc<Queue>> = self.queues.iter().map(|e| e.value().clone()).collect();
        let queues = queues.iter().map(|q| QueueRecord::of(q)).collect();
        let services = self
            .services
            .snapshots
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter_map(|(name, snapshot)| Some((name.to_string(), snapshot()?)))
            .collect();
        EngineState {
            services,
            queues,
            deleted_at: self
                .deleted_at
                .iter()
                .map(|e| {
                    let k = e.key();
                    (
                        k.region.clone(),
                        k.account.clone(),
                        k.name.clone(),
                        *e.value(),
                    )
                })
                .collect(),
            move_tasks,
        }
    }

    /// Reports the queue-level state to a capturing subscriber (the
    /// journal); called after every action that may have changed it.
    pub fn queues_changed(&self) {
        if self.shared.events.is_capturing() {
            // Taken and reported under one lock, so reports reach the
            // journal in the order taken: an older one never overwrites
            // a newer one.
            let _order = self.lock_persist_order();
            let state = self.queue_level_state();
            self.shared.events.queues_changed(&state);
        }
    }

    pub(super) fn lock_persist_order(&self) -> std::sync::MutexGuard<'_, ()> {
        self.persist_order.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writing to the data directory has failed and not recovered: changes
    /// are refused (memory must not run ahead of the disk).
    pub fn storage_failing(&self) -> bool {
        self.durability.get().is_some_and(|d| d.failing())
    }

    /// While writing fails: the error a change is refused with.
    pub fn storage_refusal(&self) -> Option<crate::error::SqsError> {
        self.durability
            .get()
            .filter(|d| d.failing())
            .map(|d| d.refusal())
    }

    /// For changes made outside [`Engine::handle`] (the admin API): reports
    /// the queue-level state if `queue_level`, then waits until everything
    /// changed so far is durable. Without persistence, returns at once.
    pub async fn persisted(&self, queue_level: bool) -> Result<(), crate::error::SqsError> {
        let Some(durability) = self.durability.get() else {
            return Ok(());
        };
        if queue_level {
            self.queues_changed();
        }
        durability.wait().await
    }

    /// Starts putting back persisted state (at start, before serving).
    pub fn restorer(&self, state: EngineState) -> Restorer<'_> {
        *self
            .services
            .restored
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = state.services;
        let mut by_uid = HashMap::new();
        for record in state.queues {
            let key = QueueKey {
                region: record.region,
                account: record.account,
                name: record.name,
            };
            let mut settings = super::attributes::QueueSettings::defaults(record.fifo);
            if settings.apply(record.attributes.iter(), true).is_err() {
                // Written by us, so this should not happen; keep what applies.
                for pair in &record.attributes {
                    let _ = settings.apply(std::iter::once(pair), true);
                }
            }
            let queue = Arc::new(Queue::new(
                key.clone(),
                record.uid,
                settings,
                record.tags,
                record.created_ms,
                self.shared.clone(),
            ));
            {
                let mut s = queue.lock();
                s.last_modified_ms = record.last_modified_ms;
                s.last_purge_ms = record.last_purge_ms;
                s.dedup_per_group = record.dedup_per_group;
                s.last_sequence = record.last_sequence.parse().unwrap_or(0);
                s.dedup_floor = record.dedup_floor.parse().unwrap_or(0);
            }
            self.next_queue_uid
                .fetch_max(record.uid + 1, Ordering::Relaxed);
            self.queues.insert(key.clone(), queue.clone());
            self.index_queue(&key);
            by_uid.insert(record.uid, queue);
        }
        for (region, account, name, at) in state.deleted_at {
            self.deleted_at.insert(
                QueueKey {
                    region,
                    account,
                    name,
                },
                at,
            );
        }
        if !state.move_tasks.is_null() {
            self.tasks.restore(state.move_tasks, self.now());
        }
        Restorer {
            by_uid,
            now: self.now(),
            _engine: self,
        }
    }
}

/// Puts persisted messages and dedup ids back into restored queues.
pub struct Restorer<'a> {
    by_uid: HashMap<u64, Arc<Queue>>,
    now: u64,
    _engine: &'a Engine,
}

impl Restorer<'_> {
    /// Puts a message back in its slot with its full state; `false` when
    /// its queue is gone (the row is stale).
    pub fn message(&mut self, queue_uid: u64, slot: u64, message: StoredMessage) -> bool {
        let Some(queue) = self.by_uid.get(&queue_uid) else {
            return false;
        };
        let mut state = queue.lock();
        if let Some(sequence) = message.sequence_number() {
            state.last_sequence = state.last_sequence.max(sequence);
        }
        state.store.restore(slot, message);
        true
    }

    /// Puts back a FIFO deduplication id still inside its window.
    pub fn dedup(&mut self, queue_uid: u64, record: DedupRecord) {
        let Some(queue) = self.by_uid.get(&queue_uid) else {
            return;
        };
        let mut state = queue.lock();
        state.last_sequence = state.last_sequence.max(record.sequence_number);
        if record.expires_ms <= self.now || record.sequence_number <= state.dedup_floor {
            return;
        }
        let scope = state.dedup_scope(&record.group);
        state.dedup.insert(
            scope,
            &record.dedup_id,
            DedupEntry {
                message_id: record.message_id,
                sequence_number: record.sequence_number,
                expires_ms: record.expires_ms,
            },
        );
    }

    /// Puts back a FIFO receive attempt still inside its window (whether
    /// its messages are still as it left them is checked on the retry).
    pub fn attempt(
        &mut self,
        queue_uid: u64,
        id: String,
        expires_ms: u64,
        messages: Vec<(u64, u64)>,
    ) {
        let Some(queue) = self.by_uid.get(&queue_uid) else {
            return;
        };
        if expires_ms <= self.now {
            return;
        }
        queue.lock().attempts.insert(
            id,
            Attempt {
                expires_ms,
                messages,
            },
        );
    }

    /// Counters a queue must not go back on: the next slot and receipt
    /// nonce, and the last FIFO sequence number.
    pub fn counters(
        &mut self,
        queue_uid: u64,
        next_slot: u64,
        next_nonce: u64,
        last_sequence: u128,
    ) {
        let Some(queue) = self.by_uid.get(&queue_uid) else {
            return;
        };
        let mut state = queue.lock();
        state.store.raise_counters(next_slot, next_nonce);
        state.last_sequence = state.last_sequence.max(last_sequence);
    }

    /// Queues restored, by uid.
    pub fn queue_count(&self) -> usize {
        self.by_uid.len()
    }
}
