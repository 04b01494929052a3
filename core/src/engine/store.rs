//! The message state machine of one queue — the one place where a message
//! changes state.
//!
//! ```text
//!   send ──► Delayed ──(delay ends)──► Available ──(receive)──► InFlight
//!                                         ▲  ▲                    │
//!                                         │  └──(timeout / vis 0)─┘
//!   deleted, expired, purged, moved to a dead-letter queue or by a move
//!   task: removed from whatever state it is in
//! ```
//!
//! Every transition goes through [`MessageStore::transition`], the hook for
//! what comes next (history, persistence, metrics).
//!
//! Cost: each index is an ordered set or a hash map, so every operation is
//! O(log n) in the number of stored messages — a queue holding a million
//! messages receives as fast as one holding ten. Time-driven transitions
//! (delay ends, visibility expires, retention) are applied lazily by
//! [`MessageStore::tick`] at the start of every operation, each message
//! paying once.
//!
//! FIFO queues keep, per message group, the group's messages in send
//! order. As on AWS, a receive may return a message only if every earlier
//! stored message of its group is visible: from each group it takes the run
//! of visible messages that starts at the group's oldest stored message and
//! ends before its first message that is in flight or delayed. So an
//! in-flight message blocks itself and the messages after it, not the
//! earlier ones that became visible again. A group is ready when its head
//! (oldest stored message) is visible; ready groups are served in order of
//! the moment their head last became visible, ties in delivery order.

use std::collections::{BTreeSet, HashMap};

use rustc_hash::FxHashMap;
use std::sync::Arc;

use uuid::Uuid;

use super::events::RawEvent;
pub use super::message::{OptionalFields, State, StoredMessage, Transition};

mod blocks;
mod extensions;

pub use extensions::Flags as ExtensionFlags;
mod slots;

use blocks::BlockSet;
use slots::SlotMap;

/// Ranks a ready FIFO group: (head visible-since, head order).
type ReadyKey = (u64, u64);

#[derive(Debug, Default)]
struct Group {
    /// Every stored message of the group, in send order (slots grow).
    messages: BTreeSet<u64>,
    /// The group's key in `ready`, while its head is visible.
    ready: Option<ReadyKey>,
}

/// FIFO-only indexes.
#[derive(Debug, Default)]
struct Fifo {
    groups: HashMap<Arc<str>, Group>,
    /// Groups whose head is visible, in serving order.
    ready: BTreeSet<(ReadyKey, Arc<str>)>,
}

/// What a receive produced.
#[derive(Debug, Default)]
pub struct Received {
    /// Slots of the messages now in flight, in delivery order.
    pub slots: Vec<u64>,
    /// Messages taken out for the dead-letter queue.
    pub dead_lettered: Vec<StoredMessage>,
}

/// All messages of one queue and the indexes over them.
#[derive(Debug)]
pub struct MessageStore {
    /// Boxed so the map's slack (up to half its slots) costs a pointer per
    /// slot, not a whole message.
    /// Keyed by server-made slots, so a non-keyed hash is safe here
    /// (SipHash showed in every send's profile), and one that keeps their order
    /// (`store/slots.rs`); client-chosen keys (group ids) keep the default
    /// hasher.
    messages: SlotMap<Box<StoredMessage>>,
    next_slot: u64,
    next_nonce: u64,
    next_order: u64,
    delayed: BTreeSet<(u64, u64)>,
    /// (deadline, delivery order, slot): messages whose visibility ends at
    /// the same instant come back in the order they were delivered.
    in_flight: BTreeSet<(u64, u64, u64)>,
    /// (enqueued, slot), oldest first (`store/blocks.rs`).
    by_age: BlockSet<u64>,
    /// Standard queues: available slots, oldest first.
    available: BlockSet<()>,
    fifo: Option<Fifo>,
    /// Transitions since the queue last published them (see `events.rs`).
    outbox: Vec<RawEvent>,
    /// Message id → slot, for the admin API's by-id operations: built on
    /// the first one and kept from then on. Ids are random, so keeping it
    /// on every send cost a cache miss per message (and again on delete) for a lookup most queues never need.
    by_id: Option<FxHashMap<Uuid, u64>>,
    /// Opt-in extensions (time to live, priority): `store/extensions.rs`.
    ext: Option<Box<extensions::Extensions>>,
}

/// The group a FIFO message belongs to.
fn group_of(message: &StoredMessage) -> Arc<str> {
    message.group_id().cloned().unwrap_or_else(|| Arc::from(""))
}

impl MessageStore {
    pub fn new(fifo: bool) -> MessageStore {
        MessageStore {
            messages: SlotMap::default(),
            next_slot: 1,
            next_nonce: 1,
            next_order: 1,
            delayed: BTreeSet::new(),
            in_flight: BTreeSet::new(),
            by_age: BlockSet::default(),
            available: BlockSet::default(),
            fifo: fifo.then(Fifo::default),
            outbox: Vec::new(),
            by_id: None,
            ext: None,
        }
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    pub fn delayed_count(&self) -> usize {
        self.delayed.len()
    }

    pub fn in_flight_count(&self) -> usize {
        self.in_flight.len()
    }

    pub fn available_count(&self) -> usize {
        self.messages.len() - self.delayed.len() - self.in_flight.len()
    }

    pub fn get(&self, slot: u64) -> Option<&StoredMessage> {
        self.messages.get(&slot).map(|m| &**m)
    }

    /// The earliest time at which a time-driven transition is due.
    pub fn next_wake(&self) -> Option<u64> {
        let d = self.delayed.first().map(|e| e.0);
        let f = self.in_flight.first().map(|e| e.0);
        match (d, f) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The record of a state change: every transition passes through here
    /// once and lands in the outbox the queue publishes (`events.rs`).
    fn transition(
        how: Transition,
        slot: u64,
        message: &StoredMessage,
        at: Option<u64>,
        note: Option<Arc<str>>,
    ) -> RawEvent {
        RawEvent {
            kind: how,
            message_id: message.message_id,
            slot,
            nonce: message.nonce,
            receive_count: message.receive_count,
            state: message.state(),
            at,
            note,
            attempt: None,
        }
    }

    /// Marks the `Received` and `VisibilityChanged` transitions recorded
    /// since `from` (an outbox length) as made by a FIFO receive attempt,
    /// which the journal keeps so a retry after a restart replays it.
    fn mark_attempt(&mut self, from: usize, attempt: &Arc<str>) {
        for e in self.outbox.iter_mut().skip(from) {
            if matches!(e.kind, Transition::Received | Transition::VisibilityChanged)
                && e.at.is_none()
            {
                e.attempt = Some(attempt.clone());
            }
        }
    }

    /// The transitions recorded since the last call, for the queue to
    /// publish; `swap` keeps the outbox's capacity.
    pub fn take_outbox(&mut self, into: &mut Vec<RawEvent>) {
        std::mem::swap(&mut self.outbox, into);
    }

    pub fn has_events(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// Records a transition of a stored message as it now is (also one
    /// that changes no index: a delete with a stale handle, which succeeds
    /// and removes nothing).
    pub fn note(&mut self, slot: u64, how: Transition) {
        if let Some(m) = self.messages.get(&slot) {
            self.outbox
                .push(MessageStore::transition(how, slot, m, None, None));
        }
    }

    fn next_order(&mut self) -> u64 {
        let order = self.next_order;
        self.next_order += 1;
        order
    }

    /// Applies the transitions time has made due: delays that ended,
    /// visibility timeouts that ran out, retention that expired. Each
    /// message becomes visible as of its own deadline, not of `now`.
    pub fn tick(&mut self, now: u64, retention_ms: u64) {
        while let Some(&(until, slot)) = self.delayed.first() {
            if until > now {
                break;
            }
            self.delayed.pop_first();
            self.make_available(slot, until, Transition::DelayEnded, Some(until));
        }
        while let Some(&(until, _, slot)) = self.in_flight.first() {
            if until > now {
                break;
            }
            self.in_flight.pop_first();
            self.make_available(slot, until, Transition::Released, Some(until));
        }
        while let Some((enqueued, slot)) = self.by_age.first() {
            let due = enqueued.saturating_add(retention_ms);
            if due > now {
                break;
            }
            self.remove_at(slot, Transition::Expired, Some(due));
        }
        self.ext_tick(now);
    }

    /// Stores a new message, hidden until `visible_at` if that is later
    /// than `now`. Returns its slot.
    pub fn insert(
        &mut self,
        message: impl Into<Box<StoredMessage>>,
        visible_at: u64,
        now: u64,
        how: Transition,
    ) -> u64 {
        let message = message.into();
        let note = match how {
            Transition::ArrivedFromSource => message.dead_letter_source_arn().cloned(),
            _ => None,
        };
        self.insert_noted(message, visible_at, now, how, note)
    }

    /// [`MessageStore::insert`] with a note for the event (where the
    /// message came from).
    pub fn insert_noted(
        &mut self,
        message: impl Into<Box<StoredMessage>>,
        visible_at: u64,
        now: u64,
        how: Transition,
        note: Option<Arc<str>>,
    ) -> u64 {
        let mut message = message.into();
        let slot = self.next_slot;
        self.next_slot += 1;
        message.order = self.next_order();
        message.set_state(if visible_at > now {
            State::Delayed(visible_at)
        } else {
            State::Available
        });
        message.set_visible_since(visible_at.max(now));
        self.outbox
            .push(MessageStore::transition(how, slot, &message, None, note));
        self.index(slot, message);
        self.ext_stored(slot);
        slot
    }

    /// Stores `message` in `slot` and enters it in every index its
    /// state and group call for (a new message, or one restored).
    fn index(&mut self, slot: u64, message: impl Into<Box<StoredMessage>>) {
        let message = message.into();
        self.by_age.insert(message.enqueued_ms(), slot);
        if let Some(by_id) = &mut self.by_id {
            by_id.insert(message.message_id, slot);
        }
        match message.state() {
            State::Delayed(until) => {
                self.delayed.insert((until, slot));
            }
            State::InFlight(until) => {
                self.in_flight.insert((until, message.order, slot));
            }
            State::Available => {
                if self.fifo.is_none() {
                    self.available.insert((), slot);
                }
            }
        }
        let group = self.fifo.is_some().then(|| group_of(&message));
        self.messages.insert(slot, message);
        if let (Some(fifo), Some(group_id)) = (&mut self.fifo, group) {
            fifo.groups
                .entry(group_id.clone())
                .or_default()
                .messages
                .insert(slot);
            self.refresh_group(&group_id);
        }
    }

    /// A message becomes receivable as of `since` (from Delayed or
    /// InFlight, whose index entry the caller has already removed). `at`:
    /// when a deadline made it so (`None`: now).
    fn make_available(&mut self, slot: u64, since: u64, how: Transition, at: Option<u64>) {
        if how == Transition::Released && self.ext_flight_ended(slot, at) {
            return;
        }
        let Some(message) = self.messages.get_mut(&slot) else {
            return;
        };
        message.set_state(State::Available);
        message.set_visible_since(since);
        let message = &self.messages[&slot];
        self.outbox
            .push(MessageStore::transition(how, slot, message, at, None));
        if self.fifo.is_none() {
            self.available.insert((), slot);
            self.ext_available(slot);
        } else {
            let group_id = group_of(message);
            self.refresh_group(&group_id);
        }
    }

    /// Re-ranks a FIFO group after its head may have changed: ready (keyed
    /// by its head's visible-since and order) while the head is visible,
    /// forgotten once it holds no message.
    fn refresh_group(&mut self, group_id: &Arc<str>) {
        let Some(fifo) = &mut self.fifo else { return };
        let Some(group) = fifo.groups.get_mut(group_id) else {
            return;
        };
        let key = group
            .messages
            .first()
            .and_then(|s| self.messages.get(s))
            .filter(|m| m.state() == State::Available)
            .map(|m| (m.visible_since(), m.order));
        if group.ready == key {
            if group.messages.is_empty() {
                fifo.groups.remove(group_id);
            }
            return;
        }
        if let Some(old) = group.ready.take() {
            fifo.ready.remove(&(old, group_id.clone()));
        }
        if let Some(new) = key {
            group.ready = Some(new);
            fifo.ready.insert((new, group_id.clone()));
        } else if group.messages.is_empty() {
            fifo.groups.remove(group_id);
        }
    }

    /// The first message after `slot` in its FIFO group.
    fn next_in_group(&self, group_id: &Arc<str>, slot: u64) -> Option<u64> {
        let group = self.fifo.as_ref()?.groups.get(group_id)?;
        group.messages.range(slot + 1..).next().copied()
    }

    /// The ready FIFO group served first, and its head.
    fn first_ready(&self) -> Option<(Arc<str>, u64)> {
        let fifo = self.fifo.as_ref()?;
        let (_, group_id) = fifo.ready.first()?;
        let head = *fifo.groups.get(group_id)?.messages.first()?;
        Some((group_id.clone(), head))
    }

    /// Removes a message from every index. Returns it.
    pub fn remove(&mut self, slot: u64, how: Transition) -> Option<StoredMessage> {
        self.remove_at(slot, how, None)
    }

    fn remove_at(&mut self, slot: u64, how: Transition, at: Option<u64>) -> Option<StoredMessage> {
        let message = *self.messages.remove(&slot)?;
        self.ext_forget(slot, &message);
        self.by_age.remove(message.enqueued_ms(), slot);
        // A seeded duplicate shares its id: only forget the id's own slot.
        if let Some(by_id) = &mut self.by_id {
            if by_id.get(&message.message_id) == Some(&slot) {
                by_id.remove(&message.message_id);
            }
        }
        match message.state() {
            State::Delayed(until) => {
                self.delayed.remove(&(until, slot));
            }
            State::InFlight(until) => {
                self.in_flight.remove(&(until, message.order, slot));
            }
            State::Available => {
                self.available.remove((), slot);
            }
        }
        if let Some(fifo) = &mut self.fifo {
            let group_id = group_of(&message);
            if let Some(group) = fifo.groups.get_mut(&group_id) {
                group.messages.remove(&slot);
            }
            self.refresh_group(&group_id);
        }
        self.outbox
            .push(MessageStore::transition(how, slot, &message, at, None));
        Some(message)
    }

    /// Puts the message in flight until `until`, under a fresh receipt,
    /// stamping its delivery order.
    fn start_flight(&mut self, slot: u64, now: u64, until: u64) {
        let nonce = self.next_nonce;
        self.next_nonce += 1;
        let order = self.next_order();
        let message = self.messages.get_mut(&slot).expect("caller checked");
        message.receive(now, until);
        message.nonce = nonce;
        message.order = order;
        message.receive_count += 1;
        let group_id = self.fifo.is_some().then(|| group_of(message));
        self.in_flight.insert((until, order, slot));
        self.note(slot, Transition::Received);
        if let Some(group_id) = group_id {
            self.refresh_group(&group_id);
        }
    }

    /// Whether receiving this message now would exceed `max_receive_count`.
    fn doomed(&self, slot: u64, max_receive_count: Option<u32>) -> bool {
        match (max_receive_count, self.messages.get(&slot)) {
            (Some(max), Some(m)) => m.receive_count >= max,
            _ => false,
        }
    }

    fn is_available(&self, slot: u64) -> bool {
        self.messages.get(&slot).map(|m| m.state()) == Some(State::Available)
    }

    /// Receives up to `max` messages, putting them in flight until
    /// `now + visibility_ms`. With a redrive limit, a message whose
    /// receive count would pass it is taken out for the dead-letter queue
    /// instead, and the receive goes on looking.
    pub fn receive(
        &mut self,
        now: u64,
        max: usize,
        visibility_ms: u64,
        max_receive_count: Option<u32>,
    ) -> Received {
        let mut out = Received::default();
        let until = now + visibility_ms;
        if self.fifo.is_none() {
            while out.slots.len() < max {
                let Some(slot) = self.pop_available() else {
                    break;
                };
                if self.doomed(slot, max_receive_count) {
                    out.dead_lettered
                        .extend(self.remove(slot, Transition::MovedToDeadLetterQueue));
                    continue;
                }
                self.start_flight(slot, now, until);
                out.slots.push(slot);
            }
            return out;
        }
        // Group by group in serving order: each group's visible run from
        // its head. Taking the head (or dead-lettering every visible
        // message) takes the group out of `ready`, so this ends.
        while out.slots.len() < max {
            let Some((group_id, head)) = self.first_ready() else {
                break;
            };
            let mut cursor = Some(head);
            while out.slots.len() < max {
                let Some(slot) = cursor.filter(|s| self.is_available(*s)) else {
                    break;
                };
                cursor = self.next_in_group(&group_id, slot);
                if self.doomed(slot, max_receive_count) {
                    out.dead_lettered
                        .extend(self.remove(slot, Transition::MovedToDeadLetterQueue));
                    continue;
                }
                self.start_flight(slot, now, until);
                out.slots.push(slot);
            }
        }
        out
    }

    /// [`receive`](Self::receive) made by a FIFO receive attempt, when
    /// `attempt` names one: its transitions carry the attempt's id.
    pub fn receive_in_attempt(
        &mut self,
        attempt: Option<&Arc<str>>,
        now: u64,
        max: usize,
        visibility_ms: u64,
        max_receive_count: Option<u32>,
    ) -> Received {
        let from = self.outbox.len();
        let received = self.receive(now, max, visibility_ms, max_receive_count);
        if let (Some(attempt), false) = (attempt, received.slots.is_empty()) {
            self.mark_attempt(from, attempt);
        }
        received
    }

    /// Sets a new visibility deadline for a message that is in flight (or,
    /// on standard queues, whose visibility already ran out). A deadline
    /// at or before `now` makes it available at once.
    pub fn change_visibility(&mut self, slot: u64, now: u64, until: u64) {
        let Some(message) = self.messages.get(&slot) else {
            return;
        };
        let order = message.order;
        match message.state() {
            State::InFlight(old) => {
                self.in_flight.remove(&(old, order, slot));
                if until <= now {
                    self.make_available(slot, now, Transition::Released, None);
                    return;
                }
            }
            State::Available if self.fifo.is_none() => {
                if until <= now {
                    return;
                }
                self.available.remove((), slot);
                self.ext_unavailable(slot);
            }
            _ => return,
        }
        let message = self.messages.get_mut(&slot).expect("present");
        message.set_state(State::InFlight(until));
        self.in_flight.insert((until, order, slot));
        self.note(slot, Transition::VisibilityChanged);
    }

    /// Extends the visibility of an in-flight message without a new
    /// receipt: a retry of the FIFO receive attempt `attempt`.
    pub fn refresh_flight(&mut self, slot: u64, until: u64, attempt: &Arc<str>) {
        let from = self.outbox.len();
        let Some(message) = self.messages.get_mut(&slot) else {
            return;
        };
        if let State::InFlight(old) = message.state() {
            message.set_state(State::InFlight(until));
            let order = message.order;
            self.in_flight.remove(&(old, order, slot));
            self.in_flight.insert((until, order, slot));
            self.note(slot, Transition::VisibilityChanged);
            self.mark_attempt(from, attempt);
        }
    }

    /// Removes every message, recording each as `how` (purged, or gone
    /// with its queue).
    pub fn purge_as(&mut self, how: Transition) -> usize {
        let mut outbox = std::mem::take(&mut self.outbox);
        // One event per message: sized once, not doubled (and copied) ~20
        // times on the way to a million.
        outbox.reserve(self.messages.len());
        for (slot, m) in self.messages.iter() {
            outbox.push(MessageStore::transition(how, slot, m, None, None));
        }
        let count = self.messages.len();
        let fifo = self.fifo.is_some();
        let (next_slot, next_nonce, next_order) =
            (self.next_slot, self.next_nonce, self.next_order);
        let extensions = self.extensions();
        *self = MessageStore::new(fifo);
        self.set_extensions(extensions);
        self.next_slot = next_slot;
        self.next_nonce = next_nonce;
        self.next_order = next_order;
        self.outbox = outbox;
        count
    }

    /// Removes every message.
    pub fn purge(&mut self) -> usize {
        self.purge_as(Transition::Purged)
    }

    /// Takes up to `max` available messages out, oldest first (FIFO: each
    /// ready group's visible run from its head, in serving order), for a
    /// message move task.
    pub fn take_for_move(&mut self, max: usize) -> Vec<StoredMessage> {
        let mut out = Vec::new();
        if self.fifo.is_none() {
            while out.len() < max {
                let Some(((), slot)) = self.available.first() else {
                    break;
                };
                out.extend(self.remove(slot, Transition::MovedByTask));
            }
            return out;
        }
        while out.len() < max {
            let Some((group_id, head)) = self.first_ready() else {
                break;
            };
            let mut cursor = Some(head);
            while out.len() < max {
                let Some(slot) = cursor.filter(|s| self.is_available(*s)) else {
                    break;
                };
                cursor = self.next_in_group(&group_id, slot);
                out.extend(self.remove(slot, Transition::MovedByTask));
            }
        }
        out
    }
}

/// Which messages a peek lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeekStates {
    Available,
    InFlight,
    Delayed,
    All,
}

impl PeekStates {
    fn available(self) -> bool {
        matches!(self, PeekStates::Available | PeekStates::All)
    }

    fn in_flight(self) -> bool {
        matches!(self, PeekStates::InFlight | PeekStates::All)
    }

    fn delayed(self) -> bool {
        matches!(self, PeekStates::Delayed | PeekStates::All)
    }
}

// Read-only views and by-id operations for the admin API (engine/inspect.rs).
// Kept apart from the state machine above; every change still goes
// through `remove`/`insert`, so through `transition`.
impl MessageStore {
    /// The slot of a message by id (the first call indexes the queue's
    /// messages; the index is kept up to date from then on).
    pub fn slot_of(&mut self, message_id: &Uuid) -> Option<u64> {
        let messages = &self.messages;
        let by_id = self.by_id.get_or_insert_with(|| {
            let mut by_id = FxHashMap::default();
            by_id.reserve(messages.len());
            for (slot, m) in messages.iter() {
                // As if indexed in send order: a seeded duplicate (same
                // id, later slot) wins, as it did when it was stored.
                let kept = by_id.entry(m.message_id).or_insert(slot);
                *kept = (*kept).max(slot);
            }
            by_id
        });
        by_id.get(message_id).copied()
    }

    /// When the oldest stored message was enqueued.
    pub fn oldest_enqueued_ms(&self) -> Option<u64> {
        self.by_age.first().map(|(enqueued, _)| enqueued)
    }

    /// Up to `limit` slots in the states asked for, without changing
    /// anything: available ones in the order a receive would take them,
    /// then in flight by visibility deadline, then delayed by delay end.
    /// Returns the slots and whether more remained.
    ///
    /// Cost: O(limit · log n) through the ordered indexes; on FIFO queues
    /// the available messages of groups whose head is hidden come from a
    /// walk of those groups, bounded by the hidden messages.
    pub fn peek(&self, states: PeekStates, limit: usize) -> (Vec<u64>, bool) {
        let mut total = 0;
        if states.available() {
            total += self.available_count();
        }
        if states.in_flight() {
            total += self.in_flight_count();
        }
        if states.delayed() {
            total += self.delayed_count();
        }
        let mut out = Vec::with_capacity(limit.min(total));
        if states.available() && out.len() < limit {
            self.peek_available(limit, &mut out);
        }
        if states.in_flight() {
            let room = limit - out.len();
            out.extend(self.in_flight.iter().take(room).map(|(_, _, slot)| *slot));
        }
        if states.delayed() {
            let room = limit - out.len();
            out.extend(self.delayed.iter().take(room).map(|(_, slot)| *slot));
        }
        let truncated = total > out.len();
        (out, truncated)
    }

    fn peek_available(&self, limit: usize, out: &mut Vec<u64>) {
        let Some(fifo) = &self.fifo else {
            let room = limit - out.len();
            match self.ext_ranked() {
                Some(ranked) => out.extend(ranked.take(room)),
                None => out.extend(self.available.iter().map(|((), slot)| slot).take(room)),
            }
            return;
        };
        let available_of = |group: &Group, out: &mut Vec<u64>| {
            for slot in &group.messages {
                if out.len() >= limit {
                    return;
                }
                if self.is_available(*slot) {
                    out.push(*slot);
                }
            }
        };
        // Receivable first: ready groups in serving order, each from its
        // head (the messages after an in-flight one wait their turn).
        for (_, group_id) in &fifo.ready {
            if let Some(group) = fifo.groups.get(group_id) {
                available_of(group, out);
            }
        }
        if out.len() >= limit || out.len() == self.available_count() {
            return;
        }
        // Then visible messages of groups whose head is hidden, by head.
        let mut blocked: Vec<(u64, &Group)> = fifo
            .groups
            .values()
            .filter(|g| g.ready.is_none())
            .filter_map(|g| g.messages.first().map(|head| (*head, g)))
            .collect();
        blocked.sort_unstable_by_key(|(head, _)| *head);
        for (_, group) in blocked {
            available_of(group, out);
        }
    }
}

// Start-up restore for the persistence journal (engine/persist.rs): no
// transition, since nothing changed; time-driven ones follow from the
// restored deadlines at the next `tick`.
impl MessageStore {
    /// Puts a message back in its slot with its full state.
    pub fn restore(&mut self, slot: u64, message: StoredMessage) {
        self.next_slot = self.next_slot.max(slot + 1);
        self.next_nonce = self.next_nonce.max(message.nonce + 1);
        self.next_order = self.next_order.max(message.order + 1);
        self.index(slot, message);
    }

    /// The next slot and receipt nonce (what a restart must not reuse).
    pub fn counters(&self) -> (u64, u64) {
        (self.next_slot, self.next_nonce)
    }

    /// Never hands out a slot or nonce below these again (a restart after
    /// a purge must not make an old receipt handle name a new message).
    pub fn raise_counters(&mut self, next_slot: u64, next_nonce: u64) {
        self.next_slot = self.next_slot.max(next_slot);
        self.next_nonce = self.next_nonce.max(next_nonce);
    }
}

#[cfg(test)]
mod tests;
