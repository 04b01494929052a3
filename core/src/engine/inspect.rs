//! Typed views and operations for the admin API (`src/admin`): queue
//! summaries, peek, delete by id, restore, reset.
//!
//! Why here: the admin layer speaks HTTP and JSON and never touches queue
//! internals; the engine answers in plain Rust values. Peeking only reads
//! (after the time-driven transitions that fell due, which any SQS call
//! would apply too); every change goes through `MessageStore` methods, so
//! through its one `transition` hook (AdminDeleted, RestoredOut,
//! RestoredIn, Purged).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use uuid::Uuid;

use super::checksum::hex;
use super::elsewhere::{Arrival, OutboundItem, OutboundMessage};
use super::events::Wakes;
use super::queue::Queue;
use super::store::{OptionalFields, PeekStates, State, StoredMessage, Transition};
use super::{Engine, QueueKey};
use crate::api::{GetQueueAttributesRequest, MessageAttributes, RequestContext};

/// Why an admin operation did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdminError {
    NotFound(String),
    Conflict(String),
    BadRequest(String),
}

/// A dead-letter queue as its source names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetterTarget {
    pub key: QueueKey,
    pub max_receive_count: u32,
}

/// One queue, as `/_retsu/queues` shows it.
#[derive(Debug, Clone)]
pub struct QueueSummary {
    pub key: QueueKey,
    pub url: String,
    pub arn: String,
    pub fifo: bool,
    pub available: usize,
    pub in_flight: usize,
    pub delayed: usize,
    /// ApproximateAgeOfOldestMessage: seconds since the oldest stored
    /// message was enqueued.
    pub oldest_age_seconds: Option<u64>,
    pub dead_letter_queue: Option<DeadLetterTarget>,
    pub dead_letter_sources: Vec<QueueKey>,
    /// As GetQueueAttributes `All` answers.
    pub attributes: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
    pub created_ms: u64,
}

/// The state of a peeked message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeekedState {
    Available,
    InFlight,
    Delayed,
}

impl PeekedState {
    pub fn as_str(self) -> &'static str {
        match self {
            PeekedState::Available => "available",
            PeekedState::InFlight => "inflight",
            PeekedState::Delayed => "delayed",
        }
    }
}

/// A stored message, read without changing it.
#[derive(Debug, Clone)]
pub struct PeekedMessage {
    pub message_id: String,
    pub state: PeekedState,
    pub body: String,
    pub md5_of_body: String,
    pub message_attributes: MessageAttributes,
    pub receive_count: u32,
    pub sent_ms: u64,
    pub enqueued_ms: u64,
    /// When retention removes it.
    pub expires_ms: u64,
    pub first_receive_ms: Option<u64>,
    /// In flight: visibility deadline; delayed: delay end.
    pub visible_at_ms: Option<u64>,
    pub group_id: Option<String>,
    pub dedup_id: Option<String>,
    pub sequence_number: Option<String>,
    pub dead_letter_source_arn: Option<String>,
    pub sender_id: String,
    pub trace_header: Option<String>,
}

/// A page of peeked messages.
#[derive(Debug, Clone)]
pub struct Peek {
    pub messages: Vec<PeekedMessage>,
    /// More messages in the states asked for than `limit`.
    pub truncated: bool,
}

/// Where a restore puts a message.
enum RestoreTo {
    Here(Arc<Queue>),
    /// A queue of another engine (`elsewhere.rs`), and whether it is FIFO.
    Elsewhere(QueueKey, bool),
}

/// Where a restored message went.
#[derive(Debug, Clone)]
pub struct Restored {
    pub queue: QueueKey,
}

fn peeked(m: &StoredMessage, retention_ms: u64) -> PeekedMessage {
    let (state, visible_at_ms) = match m.state() {
        State::Available => (PeekedState::Available, None),
        State::InFlight(until) => (PeekedState::InFlight, Some(until)),
        State::Delayed(until) => (PeekedState::Delayed, Some(until)),
    };
    PeekedMessage {
        message_id: m.message_id.to_string(),
        state,
        body: m.body.to_string(),
        md5_of_body: hex(&m.body_md5),
        message_attributes: m.attributes().clone(),
        receive_count: m.receive_count,
        sent_ms: m.sent_ms,
        enqueued_ms: m.enqueued_ms(),
        expires_ms: m.enqueued_ms().saturating_add(retention_ms),
        first_receive_ms: m.first_receive_ms(),
        visible_at_ms,
        group_id: m.group_id().map(|g| g.to_string()),
        dedup_id: m.dedup_id().map(String::from),
        sequence_number: m.sequence_number().map(|s| s.to_string()),
        dead_letter_source_arn: m.dead_letter_source_arn().map(|a| a.to_string()),
        sender_id: m.sender_id.to_string(),
        trace_header: m.trace_header().map(String::from),
    }
}

fn not_found(key: &QueueKey) -> AdminError {
    AdminError::NotFound(format!(
        "no queue {}/{}/{}",
        key.region, key.account, key.name
    ))
}

fn message_not_found(key: &QueueKey, id: &str) -> AdminError {
    AdminError::NotFound(format!("no message {id} in queue {}", key.name))
}

impl Engine {
    /// Every queue key, sorted by (region, account, name).
    pub fn queue_keys(&self) -> Vec<QueueKey> {
        let mut keys: Vec<QueueKey> = self.queues.iter().map(|e| e.key().clone()).collect();
        keys.sort();
        keys
    }

    pub fn has_queue(&self, key: &QueueKey) -> bool {
        self.queues.contains_key(key)
    }

    pub fn queue_count(&self) -> usize {
        self.queues.len()
    }

    /// Every queue, sorted by (region, account, name). `ctx` supplies the
    /// base of the URLs.
    pub fn queue_summaries(&self, ctx: &RequestContext) -> Vec<QueueSummary> {
        let mut queues: Vec<Arc<Queue>> = self.queues.iter().map(|e| e.value().clone()).collect();
        queues.sort_by(|a, b| a.key.cmp(&b.key));
        // One pass for the dead-letter wiring, not one per queue.
        let targets: Vec<Option<DeadLetterTarget>> =
            queues.iter().map(|q| self.dead_letter_of(q)).collect();
        let mut sources: HashMap<String, Vec<QueueKey>> = HashMap::new();
        for (q, t) in queues.iter().zip(&targets) {
            if let Some(t) = t {
                sources.entry(t.key.arn()).or_default().push(q.key.clone());
            }
        }
        queues
            .iter()
            .zip(targets)
            .map(|(q, t)| {
                let s = sources.remove(&q.arn).unwrap_or_default();
                self.summary_of(ctx, q, t, s)
            })
            .collect()
    }

    /// One queue's summary.
    pub fn queue_summary(&self, ctx: &RequestContext, key: &QueueKey) -> Option<QueueSummary> {
        let queue = self.queue_by_key(key)?;
        let target = self.dead_letter_of(&queue);
        let mut sources = self.sources_of(&queue.arn);
        sources.extend(self.remote_sources(&queue.arn));
        Some(self.summary_of(ctx, &queue, target, sources))
    }

    fn dead_letter_of(&self, queue: &Queue) -> Option<DeadLetterTarget> {
        let policy = queue.lock().settings.redrive_policy.clone()?;
        Some(DeadLetterTarget {
            key: QueueKey::from_arn(&policy.dead_letter_target_arn)?,
            max_receive_count: policy.max_receive_count,
        })
    }

    fn summary_of(
        &self,
        ctx: &RequestContext,
        queue: &Queue,
        dead_letter_queue: Option<DeadLetterTarget>,
        mut dead_letter_sources: Vec<QueueKey>,
    ) -> QueueSummary {
        dead_letter_sources.sort();
        // GetQueueAttributes itself, so the two never disagree.
        let attributes = self
            .get_queue_attributes(
                ctx,
                GetQueueAttributesRequest {
                    queue_url: Some(format!(
                        "/queue/{}/{}/{}",
                        queue.key.region, queue.key.account, queue.key.name
                    )),
                    attribute_names: vec!["All".into()],
                },
            )
            .map(|r| r.attributes)
            .unwrap_or_default();
        let now = self.now();
        let state = queue.lock_at(now);
        QueueSummary {
            key: queue.key.clone(),
            url: self.queue_url(ctx, &queue.key),
            arn: queue.arn.clone(),
            fifo: queue.is_fifo(),
            available: state.store.available_count(),
            in_flight: state.store.in_flight_count(),
            delayed: state.store.delayed_count(),
            oldest_age_seconds: state
                .store
                .oldest_enqueued_ms()
                .map(|t| now.saturating_sub(t) / 1000),
            dead_letter_queue,
            dead_letter_sources,
            attributes,
            tags: state.tags.clone(),
            created_ms: queue.created_ms,
        }
    }

    /// Up to `limit` messages of a queue in the given states, changing
    /// nothing: no receive count, visibility or order moves.
    pub fn peek(&self, key: &QueueKey, states: PeekStates, limit: usize) -> Option<Peek> {
        let queue = self.queue_by_key(key)?;
        let state = queue.lock_at(self.now());
        let retention_ms = state.settings.message_retention_period as u64 * 1000;
        let (slots, truncated) = state.store.peek(states, limit);
        let messages = slots
            .iter()
            .filter_map(|s| state.store.get(*s))
            .map(|m| peeked(m, retention_ms))
            .collect();
        Some(Peek {
            messages,
            truncated,
        })
    }

    /// One message by id, changing nothing.
    pub fn peek_message(&self, key: &QueueKey, message_id: &str) -> Option<PeekedMessage> {
        let queue = self.queue_by_key(key)?;
        let id = Uuid::parse_str(message_id).ok()?;
        let mut state = queue.lock_at(self.now());
        let retention_ms = state.settings.message_retention_period as u64 * 1000;
        let slot = state.store.slot_of(&id)?;
        state.store.get(slot).map(|m| peeked(m, retention_ms))
    }

    /// One message by id in whichever queue holds it, changing nothing
    /// (one lookup per queue): for a message stored before this engine
    /// started, which its history does not know.
    pub fn find_message(&self, message_id: &str) -> Option<(QueueKey, PeekedMessage)> {
        let id = Uuid::parse_str(message_id).ok()?;
        let queues: Vec<Arc<Queue>> = self.queues.iter().map(|e| e.value().clone()).collect();
        queues.into_iter().find_map(|queue| {
            let mut state = queue.lock_at(self.now());
            let retention_ms = state.settings.message_retention_period as u64 * 1000;
            let slot = state.store.slot_of(&id)?;
            let found = state.store.get(slot).map(|m| peeked(m, retention_ms))?;
            Some((queue.key.clone(), found))
        })
    }

    /// Removes one message by id, whatever its state, without a receipt
    /// handle (Transition::AdminDeleted).
    pub fn admin_delete(&self, key: &QueueKey, message_id: &str) -> Result<(), AdminError> {
        let queue = self.queue_by_key(key).ok_or_else(|| not_found(key))?;
        let id = Uuid::parse_str(message_id).map_err(|_| message_not_found(key, message_id))?;
        let mut state = queue.lock_at(self.now());
        let slot = state
            .store
            .slot_of(&id)
            .ok_or_else(|| message_not_found(key, message_id))?;
        state.store.remove(slot, Transition::AdminDeleted);
        drop(state);
        // The message may have held its FIFO group; waiting polls look again.
        queue.wake(Wakes::everyone());
        Ok(())
    }

    /// Moves one message back to its dead-letter source (or to `to`, a
    /// queue URL or ARN): same body, attributes and id; receive count 0;
    /// available at once. A FIFO target keeps the group id and gives a new
    /// sequence number, without a deduplication check. A target held by
    /// another engine gets it as an outbound record (`elsewhere.rs`).
    pub fn restore(
        &self,
        ctx: &RequestContext,
        key: &QueueKey,
        message_id: &str,
        to: Option<&str>,
    ) -> Result<Restored, AdminError> {
        let queue = self.queue_by_key(key).ok_or_else(|| not_found(key))?;
        let id = Uuid::parse_str(message_id).map_err(|_| message_not_found(key, message_id))?;
        let now = self.now();
        let (slot, source_arn, group) = {
            let mut state = queue.lock_at(now);
            let slot = state
                .store
                .slot_of(&id)
                .ok_or_else(|| message_not_found(key, message_id))?;
            let m = state.store.get(slot).expect("indexed");
            (
                slot,
                m.dead_letter_source_arn().map(|a| a.to_string()),
                m.group_id().cloned(),
            )
        };
        let target = match to {
            Some(to) => {
                let target_key = QueueKey::from_arn(to)
                    .or_else(|| QueueKey::from_url(to, ctx))
                    .ok_or_else(|| {
                        AdminError::BadRequest(format!("\"to\" is not a queue URL or ARN: {to}"))
                    })?;
                self.restore_target(&target_key)
                    .ok_or_else(|| not_found(&target_key))?
            }
            None => {
                let arn = source_arn.ok_or_else(|| {
                    AdminError::Conflict(format!(
                        "message {message_id} has no dead-letter source queue; name one with \"to\""
                    ))
                })?;
                QueueKey::from_arn(&arn)
                    .and_then(|key| self.restore_target(&key))
                    .ok_or_else(|| {
                        AdminError::Conflict(format!("its source queue {arn} no longer exists"))
                    })?
            }
        };
        let (fifo, target_key) = match &target {
            RestoreTo::Here(q) => (q.is_fifo(), &q.key),
            RestoreTo::Elsewhere(key, fifo) => (*fifo, key),
        };
        if fifo && group.is_none() {
            return Err(AdminError::Conflict(format!(
                "message {message_id} has no message group id; it cannot go to the FIFO queue {}",
                target_key.name
            )));
        }
        // Out of one queue and into the other as one change (journal).
        let group = self.shared.events.group();
        let message = queue
            .lock_at(now)
            .store
            .remove(slot, Transition::RestoredOut)
            .ok_or_else(|| message_not_found(key, message_id))?;
        let optional = OptionalFields {
            trace_header: message.trace_header().map(String::from),
            sequence_number: None,
            group_id: message.group_id().filter(|_| fifo).cloned(),
            dedup_id: message.dedup_id().filter(|_| fifo).map(String::from),
            dead_letter_source_arn: None,
            enqueued_ms: None,
        };
        let mut restored = message;
        restored.optional = optional.boxed();
        restored.forget_receives();
        let target = match target {
            RestoreTo::Here(target) => target,
            RestoreTo::Elsewhere(target_key, _) => {
                // The target engine gives the enqueue time and any
                // sequence number when it takes it in (`inbound.rs`).
                let m = OutboundMessage::of(&restored, Arrival::Restored);
                self.hand_over(&target_key.arn(), OutboundItem::Message(m));
                drop(group);
                queue.wake(Wakes::everyone());
                return Ok(Restored { queue: target_key });
            }
        };
        let mut state = target.lock_at(now);
        if fifo {
            restored.optional_mut().sequence_number = Some(state.next_sequence_number(now));
        }
        restored.set_enqueued_ms(now);
        state
            .store
            .insert(restored, now, now, Transition::RestoredIn);
        drop(state);
        drop(group);
        queue.wake(Wakes::everyone());
        target.wake(Wakes::everyone());
        Ok(Restored {
            queue: target.key.clone(),
        })
    }

    /// The queue a restore puts a message in: here, or held elsewhere.
    fn restore_target(&self, key: &QueueKey) -> Option<RestoreTo> {
        if let Some(q) = self.queue_by_key(key) {
            return Some(RestoreTo::Here(q));
        }
        let remote = self.remote_queue_now(&key.arn()).filter(|r| !r.deleted)?;
        Some(RestoreTo::Elsewhere(key.clone(), remote.fifo))
    }

    /// Empties one queue, keeping its attributes and tags; forgets its
    /// deduplication ids and receive attempts. Returns the messages
    /// removed.
    pub fn reset_queue(&self, key: &QueueKey) -> Result<usize, AdminError> {
        let queue = self.queue_by_key(key).ok_or_else(|| not_found(key))?;
        let mut state = queue.lock_at(self.now());
        let removed = state.store.purge();
        state.attempts.clear();
        state.dedup = Default::default();
        state.dedup_floor = state.last_sequence;
        state.last_purge_ms = None;
        Ok(removed)
    }

    /// Deletes every queue (with its messages) and every move task, and
    /// forgets recently deleted names. Returns the queues deleted.
    pub fn reset_all(&self) -> usize {
        let keys = self.queue_keys();
        let mut deleted = 0;
        for key in keys {
            let mut removed = None;
            self.unindex_queue(&key, |key| {
                removed = self.queues.remove(key);
                removed.is_some()
            });
            if let Some((_, queue)) = removed {
                queue.mark_deleted();
                self.on_queue_deleted(&queue);
                deleted += 1;
            }
        }
        self.tasks.clear();
        self.deleted_at.clear();
        deleted
    }
}
