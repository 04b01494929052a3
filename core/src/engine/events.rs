//! The engine's event stream: every change of a message's state, emitted
//! once, from the one place it happens ([`MessageStore`]'s transitions),
//! to whoever subscribed — history, metrics, the persistence journal —
//! and turned into long-poll wake-ups.
//!
//! Cost on the hot path: the store appends a small `Copy` record to its
//! outbox per transition; when the queue's lock guard is dropped the
//! outbox is turned into numbered [`Event`]s under the queue's lock, the
//! bus's order lock is taken, and only then the queue's lock is released:
//! subscribers run outside it (a send or receive on the same queue can
//! proceed meanwhile), yet every queue's events reach them in the order
//! they happened. With no subscriber, no [`Event`] is built.
//!
//! [`MessageStore`]: super::store::MessageStore

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use uuid::Uuid;

use super::message::{State, StoredMessage, Transition};
use super::QueueKey;

/// What the store records of a transition, before the queue adds who and
/// when. Small and `Copy` but for the optional note.
#[derive(Debug, Clone)]
pub struct RawEvent {
    pub kind: Transition,
    pub message_id: Uuid,
    pub slot: u64,
    pub nonce: u64,
    pub receive_count: u32,
    /// The message's state after the transition (before, for removals).
    pub state: State,
    /// When a time-driven transition fell due (a deadline that a later
    /// operation applied); `None`: now.
    pub at: Option<u64>,
    pub note: Option<Arc<str>>,
    /// A FIFO receive with a ReceiveRequestAttemptId: on `Received`, the
    /// attempt this receive recorded; on `VisibilityChanged`, the attempt
    /// whose retry extended the message (any other visibility change
    /// invalidates the attempts that returned the message).
    pub attempt: Option<Arc<str>>,
}

/// One transition of one message.
#[derive(Debug, Clone)]
pub struct Event {
    /// Server-wide order of events, from 1.
    pub seq: u64,
    pub at_ms: u64,
    pub queue: Arc<QueueKey>,
    pub message_id: Uuid,
    pub kind: Transition,
    pub receive_count: u32,
    /// In flight: the visibility deadline; delayed: when the delay ends.
    pub visible_at_ms: Option<u64>,
    /// The receipt a receive issued (queue incarnation, slot, nonce): the
    /// handle is derived from it on demand, with the server's key.
    pub receipt: Option<(u64, u64, u64)>,
    /// The dead-letter source, the queue a message was moved from, ...
    pub note: Option<Arc<str>>,
    /// Only when a subscriber asked for snapshots (the persistence
    /// journal): the queue's incarnation, the message's slot, and, unless
    /// the transition removed it, the message as it is after the batch.
    /// Boxed: history keeps 100,000 events, most without one.
    pub stored: Option<Box<Snapshot>>,
}

/// What happened to a message published to an SNS topic: its fan-out, as
/// opposed to the transitions of the SQS messages it made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TopicEventKind {
    Published,
    /// Handed to a subscription (a queue's `Sent`, or an HTTP endpoint's 2xx–4xx).
    Delivered,
    /// A subscription's filter policy did not match.
    FilteredOut,
    /// A subscription could not take it (its queue gone, an endpoint failing).
    DeliveryFailed,
    /// Sent to the subscription's RedrivePolicy queue instead.
    DeadLettered,
}

impl TopicEventKind {
    pub fn name(self) -> &'static str {
        match self {
            TopicEventKind::Published => "published",
            TopicEventKind::Delivered => "delivered",
            TopicEventKind::FilteredOut => "filtered_out",
            TopicEventKind::DeliveryFailed => "delivery_failed",
            TopicEventKind::DeadLettered => "dead_lettered",
        }
    }

    pub const ALL: &'static [TopicEventKind] = &[
        TopicEventKind::Published,
        TopicEventKind::Delivered,
        TopicEventKind::FilteredOut,
        TopicEventKind::DeliveryFailed,
        TopicEventKind::DeadLettered,
    ];
}

/// One step of a published message's fan-out.
#[derive(Debug, Clone)]
pub struct TopicEvent {
    /// Server-wide order, shared with message events (set when published).
    pub seq: u64,
    pub at_ms: u64,
    pub topic_arn: Arc<str>,
    /// The SNS MessageId.
    pub message_id: Arc<str>,
    pub kind: TopicEventKind,
    pub subscription_arn: Option<Arc<str>>,
    /// The queue ARN or URL delivered to (or the phone number, address,
    /// endpoint ARN of a recorded delivery).
    pub endpoint: Option<Arc<str>>,
    /// The subscription's protocol (`sqs`, `https`, `email`, `sms`, …).
    pub protocol: Option<&'static str>,
    /// The SQS message a delivery made.
    pub delivered_as: Option<Uuid>,
    /// Why: the filter's mismatch, the delivery's failure.
    pub reason: Option<String>,
}

/// What the journal needs beyond an event's ids (see [`EventBus::capture`]).
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub queue_uid: u64,
    pub slot: u64,
    pub message: Option<Arc<StoredMessage>>,
    /// The receive attempt (see [`RawEvent::attempt`]).
    pub attempt: Option<Arc<str>>,
}

/// Receives the engine's events, in order: while one batch is delivered
/// no other is (the emitting queue's lock is already released). Keep it
/// short and never call back into the engine.
pub trait Subscriber: Send + Sync {
    /// A subscriber that keeps an event keeps what it needs of it
    /// (history: a 64-byte record in one ring buffer).
    fn publish(&self, events: &[Event]);

    /// Queue-level state changed (a queue created or deleted, attributes,
    /// tags, policies, purge, move tasks): the full queue-level state.
    /// Only subscribers that [`EventBus::capture`] get it.
    fn queues_changed(&self, _state: &super::queue_level::EngineState) {}

    /// A group of changes that only make sense together begins on this
    /// thread (a message leaving one queue and arriving in another; a move
    /// task's step with its progress count): what this thread publishes
    /// until [`Subscriber::end_group`] is one unit. The bus calls these
    /// only for the outermost group, and only while capturing.
    fn begin_group(&self) {}

    fn end_group(&self) {}

    /// Steps of SNS fan-outs, numbered in the same order as messages'
    /// events.
    fn topic_events(&self, _events: &[TopicEvent]) {}

    /// Messages handed to queues of another engine (`elsewhere.rs`): given
    /// in the same group as the change that took them out of their source,
    /// so a journal keeps them (an outbox) in the same commit. Whoever
    /// subscribes with an [`Elsewhere`] set must carry them to the target's
    /// [`Engine::accept_inbound`].
    ///
    /// [`Elsewhere`]: super::Elsewhere
    /// [`Engine::accept_inbound`]: super::Engine::accept_inbound
    fn outbound(&self, _records: &[super::Outbound]) {}

    /// The hand-over `outbound_id` was taken in by this engine: given in
    /// the same group as the events of the message it enqueued (none, for
    /// a FIFO duplicate), so a journal forgets the outbox row in the same
    /// commit as it stores the message.
    fn accepted(&self, _outbound_id: Uuid) {}
}

thread_local! {
    /// The event buses with a group open on this thread, and its depth.
    static OPEN_GROUPS: std::cell::RefCell<Vec<(usize, u32)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// An open group of changes (see [`Subscriber::begin_group`]); closed when
/// dropped. Not `Send`: a group lives on one thread and never spans an
/// await, so its changes are published by the thread that opened it.
pub struct Group<'a> {
    bus: Option<&'a EventBus>,
    _one_thread: std::marker::PhantomData<*const ()>,
}

impl Drop for Group<'_> {
    fn drop(&mut self) {
        let Some(bus) = self.bus else { return };
        let id = bus as *const EventBus as usize;
        let last = OPEN_GROUPS.with(|open| {
            let mut open = open.borrow_mut();
            let Some(i) = open.iter().position(|(b, _)| *b == id) else {
                return false;
            };
            open[i].1 -= 1;
            if open[i].1 == 0 {
                open.swap_remove(i);
                true
            } else {
                false
            }
        });
        if last {
            let subscribers = bus.subscribers.read().unwrap_or_else(|p| p.into_inner());
            for s in subscribers.iter() {
                s.end_group();
            }
        }
    }
}

/// The subscribers, and the server-wide event order.
#[derive(Default)]
pub struct EventBus {
    subscribers: RwLock<Vec<Arc<dyn Subscriber>>>,
    active: AtomicBool,
    /// Events carry [`Snapshot`]s, and queue-level changes are reported:
    /// set once, by the persistence journal, before serving.
    capture: AtomicBool,
    /// The last sequence number handed out. Held while events are numbered
    /// and delivered, so every subscriber sees them in sequence order.
    last_seq: Mutex<u64>,
}

impl EventBus {
    pub fn subscribe(&self, subscriber: Arc<dyn Subscriber>) {
        let mut subscribers = self.subscribers.write().unwrap_or_else(|p| p.into_inner());
        subscribers.push(subscriber);
        self.active.store(true, Ordering::Release);
    }

    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Asks for message snapshots in events (costs a clone per changed
    /// message, so only the journal turns it on).
    pub fn capture(&self) {
        self.capture.store(true, Ordering::Release);
    }

    pub fn is_capturing(&self) -> bool {
        self.capture.load(Ordering::Acquire)
    }

    /// Opens a group of changes kept together (see
    /// [`Subscriber::begin_group`]); a no-op unless capturing.
    pub fn group(&self) -> Group<'_> {
        if !self.is_capturing() {
            return Group {
                bus: None,
                _one_thread: std::marker::PhantomData,
            };
        }
        let id = self as *const EventBus as usize;
        let first = OPEN_GROUPS.with(|open| {
            let mut open = open.borrow_mut();
            match open.iter_mut().find(|(b, _)| *b == id) {
                Some(entry) => {
                    entry.1 += 1;
                    false
                }
                None => {
                    open.push((id, 1));
                    true
                }
            }
        });
        if first {
            let subscribers = self.subscribers.read().unwrap_or_else(|p| p.into_inner());
            for s in subscribers.iter() {
                s.begin_group();
            }
        }
        Group {
            bus: Some(self),
            _one_thread: std::marker::PhantomData,
        }
    }

    /// Numbers and hands SNS fan-out steps to the subscribers.
    pub fn publish_topic_events(&self, mut events: Vec<TopicEvent>) {
        if !self.is_active() || events.is_empty() {
            return;
        }
        let mut last_seq = self.last_seq.lock().unwrap_or_else(|p| p.into_inner());
        for e in &mut events {
            *last_seq += 1;
            e.seq = *last_seq;
        }
        let subscribers = self.subscribers.read().unwrap_or_else(|p| p.into_inner());
        for s in subscribers.iter() {
            s.topic_events(&events);
        }
    }

    /// Hands records for other engines to the subscribers, in the event
    /// order (see [`Subscriber::outbound`]).
    pub(super) fn publish_outbound(&self, records: &[super::Outbound]) {
        let _order = self.last_seq.lock().unwrap_or_else(|p| p.into_inner());
        let subscribers = self.subscribers.read().unwrap_or_else(|p| p.into_inner());
        for s in subscribers.iter() {
            s.outbound(records);
        }
    }

    /// Tells the subscribers a hand-over was taken in (see
    /// [`Subscriber::accepted`]).
    pub(super) fn publish_accepted(&self, outbound_id: Uuid) {
        let _order = self.last_seq.lock().unwrap_or_else(|p| p.into_inner());
        let subscribers = self.subscribers.read().unwrap_or_else(|p| p.into_inner());
        for s in subscribers.iter() {
            s.accepted(outbound_id);
        }
    }

    /// Reports queue-level state to the subscribers.
    pub(super) fn queues_changed(&self, state: &super::queue_level::EngineState) {
        let subscribers = self.subscribers.read().unwrap_or_else(|p| p.into_inner());
        for s in subscribers.iter() {
            s.queues_changed(state);
        }
    }

    /// Numbers one queue's events and builds them. Called under the
    /// queue's lock; the returned batch holds the bus's order until it is
    /// delivered, so the queue's lock can be released first (the next
    /// holder of that lock publishes after this batch) and subscribers
    /// never run under it. `None`: nobody listens.
    pub(super) fn stamp(
        &self,
        queue: &Arc<QueueKey>,
        queue_uid: u64,
        raw: &[RawEvent],
        snapshots: &[Option<Arc<StoredMessage>>],
        now: u64,
    ) -> Option<Stamped<'_>> {
        if !self.is_active() || raw.is_empty() {
            return None;
        }
        let mut last_seq = self.last_seq.lock().unwrap_or_else(|p| p.into_inner());
        let first = *last_seq + 1;
        *last_seq += raw.len() as u64;
        let events: Vec<Event> = raw
            .iter()
            .enumerate()
            .map(|(i, r)| Event {
                seq: first + i as u64,
                at_ms: r.at.unwrap_or(now),
                queue: queue.clone(),
                message_id: r.message_id,
                kind: r.kind,
                receive_count: r.receive_count,
                visible_at_ms: match r.state {
                    State::InFlight(until) | State::Delayed(until) => Some(until),
                    State::Available => None,
                },
                receipt: (r.kind == Transition::Received).then_some((queue_uid, r.slot, r.nonce)),
                note: r.note.clone(),
                stored: (!snapshots.is_empty()).then(|| {
                    Box::new(Snapshot {
                        queue_uid,
                        slot: r.slot,
                        message: snapshots[i].clone(),
                        attempt: r.attempt.clone(),
                    })
                }),
            })
            .collect();
        Some(Stamped {
            bus: self,
            _order: last_seq,
            events,
        })
    }
}

/// A queue's events, numbered, waiting to be delivered (see
/// [`EventBus::stamp`]). Holding it holds the server-wide event order.
pub(super) struct Stamped<'a> {
    bus: &'a EventBus,
    _order: MutexGuard<'a, u64>,
    events: Vec<Event>,
}

impl Stamped<'_> {
    /// Hands the events to every subscriber, then lets the next batch go
    /// (the events themselves are dropped after that).
    pub fn deliver(self) {
        let subscribers = self
            .bus
            .subscribers
            .read()
            .unwrap_or_else(|p| p.into_inner());
        for s in subscribers.iter() {
            s.publish(&self.events);
        }
    }
}

/// Which waiting long polls a batch of a queue's transitions concerns.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Wakes {
    /// Messages that became receivable: one waiting poll each.
    pub one_each: usize,
    /// Every waiting poll must look again (a deadline moved, a delayed
    /// message arrived, a FIFO group may have unlocked, a purge).
    pub everyone: bool,
}

impl Wakes {
    /// Every waiting poll looks again: for changes that are not a
    /// message's transition (new settings, a deleted queue, shutdown).
    pub fn everyone() -> Wakes {
        Wakes {
            one_each: 0,
            everyone: true,
        }
    }

    /// What a transition means for waiting polls. `fifo`: on FIFO queues a
    /// removed in-flight message may unlock the rest of its group.
    pub fn of(raw: &[RawEvent], fifo: bool) -> Wakes {
        use Transition::*;
        let mut w = Wakes::default();
        for r in raw {
            match (r.kind, r.state) {
                (Sent | ArrivedFromSource | RestoredIn | Duplicated, State::Available) => {
                    w.one_each += 1
                }
                (Sent | ArrivedFromSource | RestoredIn | Duplicated, State::Delayed(_)) => {
                    w.everyone = true
                }
                (DelayEnded, _) => w.one_each += 1,
                // Released by its deadline (a poll's own timer covers it)
                // or at once by ChangeMessageVisibility(0).
                (Released, _) if r.at.is_some() => w.one_each += 1,
                (Released | VisibilityChanged | Purged, _) => w.everyone = true,
                (
                    Deleted | Expired | AdminDeleted | RestoredOut | MovedToDeadLetterQueue,
                    State::InFlight(_),
                ) if fifo => w.everyone = true,
                _ => {}
            }
        }
        w
    }
}
