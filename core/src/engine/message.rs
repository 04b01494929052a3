//! A stored message and the words for its life: where it is ([`State`])
//! and how it got there ([`Transition`]). Plain data, shared by the store
//! that changes messages and the event stream that reports the changes.

use std::sync::Arc;

use uuid::Uuid;

use crate::api::MessageAttributes;

/// Where a message is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Hidden until the given time (delay seconds).
    Delayed(u64),
    /// Receivable now.
    Available,
    /// Received, hidden until the given time.
    InFlight(u64),
}

/// A change of state, reported to `MessageStore::transition`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    Sent,
    DelayEnded,
    Received,
    VisibilityChanged,
    /// Back to available: the visibility timeout ran out or was set to 0.
    Released,
    Deleted,
    Expired,
    Purged,
    MovedToDeadLetterQueue,
    MovedByTask,
    ArrivedFromSource,
    /// A delete with a stale receipt handle: it succeeded and removed nothing.
    StaleDelete,
    /// Removed because its queue was deleted.
    QueueDeleted,
    /// Admin API: deleted by message id, without a receipt handle.
    AdminDeleted,
    /// Admin API: taken out of a dead-letter queue to be restored.
    RestoredOut,
    /// Admin API: put back into its source (or a named) queue.
    RestoredIn,
    /// Seeded faults: a second copy of a received message, delivered again
    /// later (`engine/faults.rs`).
    Duplicated,
}

/// A stored message.
#[derive(Debug, Clone)]
pub struct StoredMessage {
    pub message_id: Uuid,
    pub body: String,
    pub body_md5: [u8; 16],
    pub attributes: MessageAttributes,
    pub sender_id: Arc<str>,
    pub sent_ms: u64,
    /// Retention counts from here (kept by a standard DLQ, reset by FIFO).
    pub enqueued_ms: u64,
    pub first_receive_ms: Option<u64>,
    pub receive_count: u32,
    pub state: State,
    /// Nonce of the latest receive; a handle naming another nonce is stale.
    pub nonce: u64,
    /// When the latest receive happened (the 12-hour visibility cap).
    pub received_ms: u64,
    /// Set by the store: when the message last became visible (send time
    /// plus delay, or the moment its visibility ended). Ranks FIFO groups.
    pub visible_since: u64,
    /// Set by the store from one counter: stamped when the message is
    /// stored and again each time it is delivered, so it orders messages
    /// that became visible at the same instant, and in-flight deadlines.
    pub order: u64,
    /// What most messages lack, boxed (see [`OptionalFields`]); `None` when all of
    /// it is absent. Read through the accessors below.
    pub optional: Option<Box<OptionalFields>>,
}

/// The fields only some messages carry: FIFO's group, deduplication id and
/// sequence number, a dead-letter source, an X-Ray trace header. Kept out
/// of line, so a plain standard message fits a smaller allocation: every
/// stored message is new memory (BENCHMARKS.md, "Memory", has the sizes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptionalFields {
    pub trace_header: Option<String>,
    pub group_id: Option<Arc<str>>,
    pub dedup_id: Option<String>,
    pub sequence_number: Option<u128>,
    pub dead_letter_source_arn: Option<Arc<str>>,
}

impl OptionalFields {
    /// What [`StoredMessage::optional`] holds: nothing when every field is absent.
    pub fn boxed(self) -> Option<Box<OptionalFields>> {
        (self != OptionalFields::default()).then(|| Box::new(self))
    }
}

impl StoredMessage {
    pub fn trace_header(&self) -> Option<&str> {
        self.optional.as_ref()?.trace_header.as_deref()
    }

    pub fn group_id(&self) -> Option<&Arc<str>> {
        self.optional.as_ref()?.group_id.as_ref()
    }

    pub fn dedup_id(&self) -> Option<&str> {
        self.optional.as_ref()?.dedup_id.as_deref()
    }

    pub fn sequence_number(&self) -> Option<u128> {
        self.optional.as_ref()?.sequence_number
    }

    pub fn dead_letter_source_arn(&self) -> Option<&Arc<str>> {
        self.optional.as_ref()?.dead_letter_source_arn.as_ref()
    }

    /// The optional fields, to set one.
    pub fn optional_mut(&mut self) -> &mut OptionalFields {
        self.optional.get_or_insert_with(Default::default)
    }
}

impl Transition {
    /// The name the admin API and the metrics use.
    pub fn name(self) -> &'static str {
        use Transition::*;
        match self {
            Sent => "sent",
            DelayEnded => "delay_ended",
            Received => "received",
            VisibilityChanged => "visibility_changed",
            Released => "released",
            Deleted => "deleted",
            Expired => "expired",
            Purged => "purged",
            MovedToDeadLetterQueue => "dead_lettered",
            MovedByTask => "moved_by_task",
            ArrivedFromSource => "arrived_from_source",
            StaleDelete => "stale_delete",
            QueueDeleted => "queue_deleted",
            AdminDeleted => "admin_deleted",
            RestoredOut => "restored_out",
            RestoredIn => "restored_in",
            Duplicated => "duplicated",
        }
    }

    pub const ALL: &'static [Transition] = &[
        Transition::Sent,
        Transition::DelayEnded,
        Transition::Received,
        Transition::VisibilityChanged,
        Transition::Released,
        Transition::Deleted,
        Transition::Expired,
        Transition::Purged,
        Transition::MovedToDeadLetterQueue,
        Transition::MovedByTask,
        Transition::ArrivedFromSource,
        Transition::StaleDelete,
        Transition::QueueDeleted,
        Transition::AdminDeleted,
        Transition::RestoredOut,
        Transition::RestoredIn,
        Transition::Duplicated,
    ];

    pub fn from_name(name: &str) -> Option<Transition> {
        Transition::ALL.iter().copied().find(|t| t.name() == name)
    }
}
