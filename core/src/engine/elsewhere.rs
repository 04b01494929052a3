//! Queues that exist but are not in this engine, and messages handed to
//! them.
//!
//! A store split into shards runs one engine per shard; a transfer between
//! queues (a dead-letter move on receive, a move task, an admin restore, an
//! SNS delivery) may then have its target in another engine. The engine
//! knows nothing of shards, storage or other nodes: the layer around it
//! answers [`Elsewhere::queue`] with the facts a check needs, and the
//! engine, instead of enqueuing into a queue it does not hold, takes the
//! message out of its source as usual and hands an [`Outbound`] record to
//! its event subscribers in the same event group as the source's change,
//! so a journal commits both or neither. Whoever carries the record over
//! gives it to the target engine's [`Engine::accept_inbound`]
//! (`inbound.rs`), which enqueues it as the local transfer would have.
//!
//! Without an [`Elsewhere`] (or with no subscriber to carry a record), a
//! queue not in the engine does not exist, exactly as before.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::attributes::RedriveAllow;
use super::checksum::md5_bytes;
use super::message::{OptionalFields, SenderId, StoredMessage};
use super::{Engine, TopicDelivery};
use crate::api::MessageAttributes;

/// Queues this engine does not hold but that exist (another engine of
/// the same store). Asked on every cross-queue transfer or check whose
/// target is not in the engine, so answer from memory.
pub trait Elsewhere: Send + Sync {
    /// The facts a cross-queue check needs, or `None`: no such queue.
    /// May be a little behind.
    fn queue(&self, arn: &str) -> Option<RemoteQueue>;

    /// A queue that is not deleted: as [`Elsewhere::queue`] when that has
    /// one, else read where the truth is kept, whatever an earlier miss
    /// said. For an SNS delivery, asked on every publish: the message is
    /// dropped when no queue is found, and the queue may have been made a
    /// moment ago (its maker already answered).
    fn live_queue(&self, arn: &str) -> Option<RemoteQueue> {
        self.queue(arn)
            .filter(|q| !q.deleted)
            .or_else(|| self.queue_now(arn).filter(|q| !q.deleted))
    }

    /// As [`Elsewhere::queue`], read where the truth is kept: for a check
    /// or a message's move that must not act on an older answer (a queue
    /// deleted or its RedriveAllowPolicy changed a moment ago).
    fn queue_now(&self, arn: &str) -> Option<RemoteQueue> {
        self.queue(arn)
    }

    /// Whether some queue elsewhere names `arn` as its dead-letter queue
    /// (StartMessageMoveTask accepts only a dead-letter queue as source).
    fn is_dead_letter_target(&self, _arn: &str) -> bool {
        false
    }

    /// The queues elsewhere that name `arn` as their dead-letter queue
    /// (the admin API's view of a queue lists them with its own).
    fn dead_letter_sources(&self, _arn: &str) -> Vec<crate::engine::QueueKey> {
        Vec::new()
    }

    /// An SNS platform endpoint whose application is held elsewhere:
    /// `Some(enabled)` when it exists, `None` when it does not (a topic's
    /// `application` subscription delivers only to an enabled endpoint).
    fn platform_endpoint(&self, _arn: &str) -> Option<bool> {
        None
    }
}

/// What a transfer's checks read of a queue held elsewhere.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteQueue {
    pub fifo: bool,
    /// Its RedriveAllowPolicy attribute as AWS renders it (`None`: unset,
    /// which allows every source). Malformed text allows none.
    pub redrive_allow_policy: Option<String>,
    /// Deleted, and its name not yet free again: nothing goes to it.
    pub deleted: bool,
}

impl RemoteQueue {
    /// Whether its RedriveAllowPolicy lets `source_arn` dead-letter into it.
    pub(super) fn allows(&self, source_arn: &str) -> bool {
        let Some(text) = &self.redrive_allow_policy else {
            return true;
        };
        match super::attributes::parse_redrive_allow_policy(text) {
            Ok((RedriveAllow::AllowAll, _)) => true,
            Ok((RedriveAllow::ByQueue(arns), _)) => arns.iter().any(|a| a == source_arn),
            Ok((RedriveAllow::DenyAll, _)) | Err(_) => false,
        }
    }
}

/// A message on its way to a queue in another engine: the engine that
/// took it out of its source emits this, the target engine's
/// [`Engine::accept_inbound`] takes it in. Plain data, serializable, so a
/// journal can keep it (an outbox row) until the target has it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outbound {
    /// Names this hand-over: the target accepts each id once.
    pub id: Uuid,
    pub target_arn: String,
    pub item: OutboundItem,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum OutboundItem {
    /// A stored message moving between queues (dead-letter move, move
    /// task, restore): what the local transfer would have put in the target.
    Message(OutboundMessage),
    /// An SNS delivery: sent into the target as a topic's message is.
    Delivery(TopicDelivery),
}

/// How a moved message arrives, which decides what the target sets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Arrival {
    /// From a source queue whose receive went past maxReceiveCount.
    DeadLettered,
    /// By a message move task; the note ties it to the id it had.
    Moved { note: String },
    /// By the admin API's restore.
    Restored,
}

/// A stored message as plain data: the fields that travel with it. Its
/// state, slot and receipt are the target's to give; a FIFO target gives
/// its own sequence number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutboundMessage {
    pub message_id: Uuid,
    pub body: String,
    #[serde(default, skip_serializing_if = "MessageAttributes::is_empty")]
    pub attributes: MessageAttributes,
    pub sender_id: String,
    pub sent_ms: u64,
    /// Retention counts from here when not from `sent_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enqueued_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_receive_ms: Option<u64>,
    pub receive_count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_header: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead_letter_source_arn: Option<String>,
    pub arrival: Arrival,
}

impl OutboundMessage {
    pub(super) fn of(m: &StoredMessage, arrival: Arrival) -> OutboundMessage {
        OutboundMessage {
            message_id: m.message_id,
            body: m.body.to_string(),
            attributes: m.attributes().clone(),
            sender_id: m.sender_id.to_string(),
            sent_ms: m.sent_ms,
            enqueued_ms: (m.enqueued_ms() != m.sent_ms).then(|| m.enqueued_ms()),
            first_receive_ms: m.first_receive_ms(),
            receive_count: m.receive_count,
            trace_header: m.trace_header().map(String::from),
            group_id: m.group_id().map(|g| g.to_string()),
            dedup_id: m.dedup_id().map(String::from),
            dead_letter_source_arn: m.dead_letter_source_arn().map(|a| a.to_string()),
            arrival,
        }
    }

    /// The message to store; `sender` is the target's shared string for
    /// `sender_id`. Its state and times are set when the store takes it.
    pub(super) fn into_stored(self, sender: SenderId) -> (StoredMessage, Arrival) {
        let md5 = md5_bytes(&self.body);
        let mut m = StoredMessage::new(
            self.message_id,
            self.body,
            md5,
            self.attributes,
            sender,
            OptionalFields {
                trace_header: self.trace_header,
                group_id: self.group_id.map(Arc::from),
                dedup_id: self.dedup_id,
                sequence_number: None,
                dead_letter_source_arn: self.dead_letter_source_arn.map(Arc::from),
                enqueued_ms: None,
            },
        );
        m.sent_ms = self.sent_ms;
        m.set_enqueued_ms(self.enqueued_ms.unwrap_or(self.sent_ms));
        m.set_first_receive_ms(self.first_receive_ms);
        m.receive_count = self.receive_count;
        (m, self.arrival)
    }
}

impl Engine {
    /// Lets transfers reach queues of other engines (set once, before
    /// serving; a second call is ignored).
    pub fn set_elsewhere(&self, elsewhere: Arc<dyn Elsewhere>) {
        let _ = self.elsewhere.set(elsewhere);
    }

    /// The other engines, when a hand-over to them can be carried: with
    /// nobody subscribed, a record would be dropped, so their queues count
    /// as missing (the message stays where it is).
    fn carrier(&self) -> Option<&Arc<dyn Elsewhere>> {
        let elsewhere = self.elsewhere.get()?;
        self.shared.events.is_active().then_some(elsewhere)
    }

    /// The queue `arn` names if it is held elsewhere and a hand-over to it
    /// can be carried.
    pub(super) fn remote_queue(&self, arn: &str) -> Option<RemoteQueue> {
        self.carrier()?.queue(arn)
    }

    /// [`Elsewhere::live_queue`], when a hand-over can be carried.
    pub(super) fn remote_live_queue(&self, arn: &str) -> Option<RemoteQueue> {
        self.carrier()?.live_queue(arn)
    }

    /// Whether the SNS platform endpoint `arn`, of an application held
    /// elsewhere, exists (`Some`) and is enabled.
    pub(crate) fn remote_platform_endpoint(&self, arn: &str) -> Option<bool> {
        self.elsewhere.get()?.platform_endpoint(arn)
    }

    /// As [`Engine::remote_queue`], asked where the truth is kept (see
    /// [`Elsewhere::queue_now`]).
    pub(super) fn remote_queue_now(&self, arn: &str) -> Option<RemoteQueue> {
        self.carrier()?.queue_now(arn)
    }

    /// The queues elsewhere that dead-letter into `arn`.
    pub(super) fn remote_sources(&self, arn: &str) -> Vec<super::QueueKey> {
        self.elsewhere
            .get()
            .map(|e| e.dead_letter_sources(arn))
            .unwrap_or_default()
    }

    /// Whether a queue elsewhere dead-letters into `arn`.
    pub(super) fn remote_sources_of(&self, arn: &str) -> bool {
        self.elsewhere
            .get()
            .is_some_and(|e| e.is_dead_letter_target(arn))
    }

    /// Hands `item` to the subscribers for the queue `target_arn` of
    /// another engine; call inside the event group of the source's change.
    pub(super) fn hand_over(&self, target_arn: &str, item: OutboundItem) -> Uuid {
        let id = Uuid::new_v4();
        self.shared.events.publish_outbound(&[Outbound {
            id,
            target_arn: target_arn.to_string(),
            item,
        }]);
        id
    }
}
