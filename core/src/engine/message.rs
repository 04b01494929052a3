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

/// The account that sent a message. Senders are few (mostly a queue's
/// owner), so one string is shared per sender, behind a thin pointer: a
/// stored message's fields fit the allocator's 128-byte size class only
/// with every one of them as small as it can be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderId(Arc<Box<str>>);

impl SenderId {
    pub fn new(account: &str) -> SenderId {
        SenderId(Arc::new(Box::from(account)))
    }
}

impl std::ops::Deref for SenderId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

/// Where a message is, without its time (kept beside it, see
/// [`StoredMessage::state`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StateKind {
    Delayed,
    Available,
    InFlight,
}

/// No receive yet (`first_receive_ms`).
const NEVER: u64 = u64::MAX;

static NO_ATTRIBUTES: MessageAttributes = MessageAttributes::new();

/// A stored message.
///
/// Every stored message is its own allocation, so its size is most of
/// what a message costs beyond its body: the fields are laid out to fit
/// 128 bytes (a test pins it, `store/tests.rs`). What only some messages
/// carry sits in [`OptionalFields`]; attributes are boxed when present;
/// a state's time and the time that matters in it share words (see
/// [`StoredMessage::state`]). Read the packed fields through the
/// accessors.
#[derive(Debug, Clone)]
pub struct StoredMessage {
    pub message_id: Uuid,
    pub body: Box<str>,
    pub body_md5: [u8; 16],
    attributes: Option<Box<MessageAttributes>>,
    pub sender_id: SenderId,
    pub sent_ms: u64,
    /// [`NEVER`] until the first receive.
    first_receive_ms: u64,
    /// Delayed: when the delay ends. In flight: when the visibility
    /// timeout ends. Available: when the latest receive happened (0 for
    /// none), kept for a change of visibility that puts it back in flight.
    until_ms: u64,
    /// In flight: when the latest receive happened (the 12-hour
    /// visibility cap). Otherwise: when the message last became visible
    /// (send time plus delay, or the moment its visibility ended), which
    /// ranks FIFO groups and is not needed in flight.
    since_ms: u64,
    /// Nonce of the latest receive; a handle naming another nonce is stale.
    pub nonce: u64,
    /// Set by the store from one counter: stamped when the message is
    /// stored and again each time it is delivered, so it orders messages
    /// that became visible at the same instant, and in-flight deadlines.
    pub order: u64,
    /// What most messages lack, boxed (see [`OptionalFields`]); `None` when all of
    /// it is absent. Read through the accessors below.
    pub optional: Option<Box<OptionalFields>>,
    pub receive_count: u32,
    kind: StateKind,
}

/// The fields only some messages carry: FIFO's group, deduplication id and
/// sequence number, a dead-letter source, an X-Ray trace header, and an
/// enqueue time other than the send time (a FIFO dead-letter queue's).
/// Kept out of line, so a plain standard message fits a smaller
/// allocation: every stored message is new memory (BENCHMARKS.md, "A
/// 128-byte message and a chunked messages map", has the sizes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptionalFields {
    pub trace_header: Option<String>,
    pub group_id: Option<Arc<str>>,
    pub dedup_id: Option<String>,
    pub sequence_number: Option<u128>,
    pub dead_letter_source_arn: Option<Arc<str>>,
    /// Retention counts from here when it is not the send time.
    pub enqueued_ms: Option<u64>,
}

impl OptionalFields {
    /// What [`StoredMessage::optional`] holds: nothing when every field is absent.
    pub fn boxed(self) -> Option<Box<OptionalFields>> {
        (self != OptionalFields::default()).then(|| Box::new(self))
    }
}

impl StoredMessage {
    /// A message as a send makes it: available, never received, its
    /// times and order set when the store takes it.
    pub fn new(
        message_id: Uuid,
        body: impl Into<Box<str>>,
        body_md5: [u8; 16],
        attributes: MessageAttributes,
        sender_id: SenderId,
        optional: OptionalFields,
    ) -> StoredMessage {
        StoredMessage {
            message_id,
            body: body.into(),
            body_md5,
            attributes: (!attributes.is_empty()).then(|| Box::new(attributes)),
            sender_id,
            sent_ms: 0,
            first_receive_ms: NEVER,
            until_ms: 0,
            since_ms: 0,
            nonce: 0,
            order: 0,
            optional: optional.boxed(),
            receive_count: 0,
            kind: StateKind::Available,
        }
    }

    pub fn attributes(&self) -> &MessageAttributes {
        self.attributes.as_deref().unwrap_or(&NO_ATTRIBUTES)
    }

    pub fn state(&self) -> State {
        match self.kind {
            StateKind::Delayed => State::Delayed(self.until_ms),
            StateKind::Available => State::Available,
            StateKind::InFlight => State::InFlight(self.until_ms),
        }
    }

    /// Sets the state, keeping the latest receive's time across it (see
    /// the fields). A new receive goes through [`StoredMessage::receive`].
    pub fn set_state(&mut self, state: State) {
        let received = self.received_ms();
        match state {
            State::Delayed(until) => {
                (self.kind, self.until_ms) = (StateKind::Delayed, until);
            }
            State::Available => {
                if self.kind == StateKind::InFlight {
                    // The visible-since time the caller sets next takes
                    // this word's place.
                    self.since_ms = 0;
                }
                (self.kind, self.until_ms) = (StateKind::Available, received);
            }
            State::InFlight(until) => {
                (self.kind, self.until_ms, self.since_ms) = (StateKind::InFlight, until, received);
            }
        }
    }

    /// In flight until `until`, received at `now`.
    pub fn receive(&mut self, now: u64, until: u64) {
        (self.kind, self.until_ms, self.since_ms) = (StateKind::InFlight, until, now);
        if self.first_receive_ms == NEVER {
            self.first_receive_ms = now;
        }
    }

    /// A restored message's state and times, as the journal keeps them.
    pub fn restore_state(&mut self, state: State, received_ms: u64, visible_since: u64) {
        (self.kind, self.until_ms, self.since_ms) = match state {
            State::Delayed(until) => (StateKind::Delayed, until, visible_since),
            State::Available => (StateKind::Available, received_ms, visible_since),
            State::InFlight(until) => (StateKind::InFlight, until, received_ms),
        };
    }

    /// Forgets every receive, for a message that arrives somewhere as a
    /// new one (its state and times are set when the store takes it).
    pub fn forget_receives(&mut self) {
        self.receive_count = 0;
        self.first_receive_ms = NEVER;
        self.nonce = 0;
        (self.kind, self.until_ms, self.since_ms) = (StateKind::Available, 0, 0);
    }

    pub fn first_receive_ms(&self) -> Option<u64> {
        (self.first_receive_ms != NEVER).then_some(self.first_receive_ms)
    }

    pub fn set_first_receive_ms(&mut self, at: Option<u64>) {
        self.first_receive_ms = at.unwrap_or(NEVER);
    }

    /// When the latest receive happened (0: none, or lost to a delay).
    pub fn received_ms(&self) -> u64 {
        match self.kind {
            StateKind::InFlight => self.since_ms,
            StateKind::Available => self.until_ms,
            StateKind::Delayed => 0,
        }
    }

    /// When the message last became visible: meaningful out of flight only.
    pub fn visible_since(&self) -> u64 {
        if self.kind == StateKind::InFlight {
            0
        } else {
            self.since_ms
        }
    }

    /// Sets when the message became visible (out of flight only).
    pub fn set_visible_since(&mut self, at: u64) {
        debug_assert!(self.kind != StateKind::InFlight);
        self.since_ms = at;
    }

    /// Retention counts from here (kept by a standard DLQ, reset by FIFO).
    pub fn enqueued_ms(&self) -> u64 {
        self.optional
            .as_ref()
            .and_then(|o| o.enqueued_ms)
            .unwrap_or(self.sent_ms)
    }

    /// Sets when retention counts from; call before the store indexes the
    /// message (its age index is keyed by this time).
    pub fn set_enqueued_ms(&mut self, at: u64) {
        if at == self.sent_ms {
            if let Some(o) = self.optional.as_deref_mut() {
                o.enqueued_ms = None;
                if *o == OptionalFields::default() {
                    self.optional = None;
                }
            }
        } else {
            self.optional_mut().enqueued_ms = Some(at);
        }
    }

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
