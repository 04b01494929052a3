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
//! FIFO queues keep, per message group, the group's messages in send order;
//! a group is served only while none of its messages is in flight.

use std::collections::{BTreeSet, HashMap, VecDeque};
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

/// A change of state, reported to [`MessageStore::transition`].
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
}

/// A stored message.
#[derive(Debug, Clone)]
pub struct StoredMessage {
    pub message_id: Uuid,
    pub body: String,
    pub body_md5: [u8; 16],
    pub attributes: MessageAttributes,
    pub trace_header: Option<String>,
    pub sender_id: Arc<str>,
    pub sent_ms: u64,
    /// Retention counts from here (kept by a standard DLQ, reset by FIFO).
    pub enqueued_ms: u64,
    pub first_receive_ms: Option<u64>,
    pub receive_count: u32,
    pub group_id: Option<Arc<str>>,
    pub dedup_id: Option<String>,
    pub sequence_number: Option<u128>,
    pub dead_letter_source_arn: Option<Arc<str>>,
    pub state: State,
    /// Nonce of the latest receive; a handle naming another nonce is stale.
    pub nonce: u64,
    /// When the latest receive happened (the 12-hour visibility cap).
    pub received_ms: u64,
}

#[derive(Debug, Default)]
struct Group {
    /// Every stored message of the group, in send order.
    messages: VecDeque<u64>,
    in_flight: u32,
    /// Whether the group sits in `ready_groups`.
    queued: bool,
}

/// FIFO-only indexes.
#[derive(Debug, Default)]
struct Fifo {
    groups: HashMap<Arc<str>, Group>,
    /// Groups that may be ready, in the order they became so; checked
    /// lazily when popped.
    ready_groups: VecDeque<Arc<str>>,
}

/// What a receive produced.
#[derive(Debug, Default)]
pub struct Received {
    /// Slots of the messages now in flight, in delivery order.
    pub seqs: Vec<u64>,
    /// Messages taken out for the dead-letter queue.
    pub dead_lettered: Vec<StoredMessage>,
}

/// All messages of one queue and the indexes over them.
#[derive(Debug)]
pub struct MessageStore {
    /// Boxed so the map's slack (up to half its slots) costs a pointer per
    /// slot, not a whole message.
    messages: HashMap<u64, Box<StoredMessage>>,
    next_seq: u64,
    next_nonce: u64,
    delayed: BTreeSet<(u64, u64)>,
    in_flight: BTreeSet<(u64, u64)>,
    by_age: BTreeSet<(u64, u64)>,
    /// Standard queues: available slots, oldest first.
    available: BTreeSet<u64>,
    fifo: Option<Fifo>,
}

impl MessageStore {
    pub fn new(fifo: bool) -> MessageStore {
        MessageStore {
            messages: HashMap::new(),
            next_seq: 1,
            next_nonce: 1,
            delayed: BTreeSet::new(),
            in_flight: BTreeSet::new(),
            by_age: BTreeSet::new(),
            available: BTreeSet::new(),
            fifo: fifo.then(Fifo::default),
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

    pub fn get(&self, seq: u64) -> Option<&StoredMessage> {
        self.messages.get(&seq).map(|m| &**m)
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

    /// The hook every state change passes through.
    fn transition(&self, transition: Transition, message: &StoredMessage) {
        tracing::trace!(
            message_id = %message.message_id,
            ?transition,
            state = ?message.state,
            "message transition"
        );
    }

    /// Applies the transitions time has made due: delays that ended,
    /// visibility timeouts that ran out, retention that expired.
    pub fn tick(&mut self, now: u64, retention_ms: u64) {
        while let Some(&(until, seq)) = self.delayed.first() {
            if until > now {
                break;
            }
            self.delayed.pop_first();
            self.make_available(seq, Transition::DelayEnded);
        }
        while let Some(&(until, seq)) = self.in_flight.first() {
            if until > now {
                break;
            }
            self.in_flight.pop_first();
            self.make_available(seq, Transition::Released);
        }
        while let Some(&(enqueued, seq)) = self.by_age.first() {
            if enqueued.saturating_add(retention_ms) > now {
                break;
            }
            self.remove(seq, Transition::Expired);
        }
    }

    /// Stores a new message, hidden until `visible_at` if that is later
    /// than `now`. Returns its slot.
    pub fn insert(
        &mut self,
        mut message: StoredMessage,
        visible_at: u64,
        now: u64,
        how: Transition,
    ) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        message.state = if visible_at > now {
            State::Delayed(visible_at)
        } else {
            State::Available
        };
        self.by_age.insert((message.enqueued_ms, seq));
        match message.state {
            State::Delayed(until) => {
                self.delayed.insert((until, seq));
            }
            _ => {
                if self.fifo.is_none() {
                    self.available.insert(seq);
                }
            }
        }
        if let Some(fifo) = &mut self.fifo {
            let group_id = message.group_id.clone().unwrap_or_else(|| Arc::from(""));
            fifo.groups
                .entry(group_id.clone())
                .or_default()
                .messages
                .push_back(seq);
            self.transition(how, &message);
            self.messages.insert(seq, Box::new(message));
            self.maybe_ready(&group_id);
        } else {
            self.transition(how, &message);
            self.messages.insert(seq, Box::new(message));
        }
        seq
    }

    /// A message becomes receivable (from Delayed or InFlight, whose index
    /// entry the caller has already removed).
    fn make_available(&mut self, seq: u64, how: Transition) {
        let Some(message) = self.messages.get_mut(&seq) else {
            return;
        };
        let was_in_flight = matches!(message.state, State::InFlight(_));
        message.state = State::Available;
        let group_id = message.group_id.clone();
        let message = &self.messages[&seq];
        self.transition(how, message);
        match &mut self.fifo {
            None => {
                self.available.insert(seq);
            }
            Some(fifo) => {
                let group_id = group_id.unwrap_or_else(|| Arc::from(""));
                if was_in_flight {
                    if let Some(group) = fifo.groups.get_mut(&group_id) {
                        group.in_flight = group.in_flight.saturating_sub(1);
                    }
                }
                self.maybe_ready(&group_id);
            }
        }
    }

    /// Queues a FIFO group for serving if it can be served now.
    fn maybe_ready(&mut self, group_id: &Arc<str>) {
        let Some(fifo) = &mut self.fifo else { return };
        let Some(group) = fifo.groups.get_mut(group_id) else {
            return;
        };
        if group.queued || group.in_flight > 0 {
            return;
        }
        let head_available = group
            .messages
            .front()
            .and_then(|s| self.messages.get(s))
            .is_some_and(|m| m.state == State::Available);
        if head_available {
            group.queued = true;
            fifo.ready_groups.push_back(group_id.clone());
        }
    }

    /// Pops the next FIFO group that can be served now: nothing of it in
    /// flight. (Entries are checked here, lazily, not kept exact.)
    fn next_ready_group(&mut self) -> Option<Arc<str>> {
        let fifo = self.fifo.as_mut()?;
        while let Some(group_id) = fifo.ready_groups.pop_front() {
            let Some(group) = fifo.groups.get_mut(&group_id) else {
                continue;
            };
            group.queued = false;
            if group.in_flight == 0 {
                return Some(group_id);
            }
        }
        None
    }

    /// After a group was served: forget it if empty, else queue it again
    /// if it can still be served.
    fn settle_group(&mut self, group_id: &Arc<str>) {
        let Some(fifo) = &mut self.fifo else { return };
        if fifo
            .groups
            .get(group_id)
            .is_some_and(|g| g.messages.is_empty() && !g.queued)
        {
            fifo.groups.remove(group_id);
        } else {
            self.maybe_ready(group_id);
        }
    }

    /// Removes a message from every index. Returns it.
    pub fn remove(&mut self, seq: u64, how: Transition) -> Option<StoredMessage> {
        let message = *self.messages.remove(&seq)?;
        self.by_age.remove(&(message.enqueued_ms, seq));
        match message.state {
            State::Delayed(until) => {
                self.delayed.remove(&(until, seq));
            }
            State::InFlight(until) => {
                self.in_flight.remove(&(until, seq));
            }
            State::Available => {
                self.available.remove(&seq);
            }
        }
        if let Some(fifo) = &mut self.fifo {
            let group_id = message.group_id.clone().unwrap_or_else(|| Arc::from(""));
            if let Some(group) = fifo.groups.get_mut(&group_id) {
                if let Some(pos) = group.messages.iter().position(|s| *s == seq) {
                    group.messages.remove(pos);
                }
                if matches!(message.state, State::InFlight(_)) {
                    group.in_flight = group.in_flight.saturating_sub(1);
                }
                if group.messages.is_empty() && !group.queued {
                    fifo.groups.remove(&group_id);
                } else {
                    self.maybe_ready(&group_id);
                }
            }
        }
        self.transition(how, &message);
        Some(message)
    }

    /// Puts the message in flight until `until`, under a fresh receipt.
    fn start_flight(&mut self, seq: u64, now: u64, until: u64) {
        let nonce = self.next_nonce;
        self.next_nonce += 1;
        let message = self.messages.get_mut(&seq).expect("caller checked");
        message.state = State::InFlight(until);
        message.nonce = nonce;
        message.received_ms = now;
        message.receive_count += 1;
        message.first_receive_ms.get_or_insert(now);
        self.in_flight.insert((until, seq));
        let message = &self.messages[&seq];
        self.transition(Transition::Received, message);
    }

    /// Whether receiving this message now would exceed `max_receive_count`.
    fn doomed(&self, seq: u64, max_receive_count: Option<u32>) -> bool {
        match (max_receive_count, self.messages.get(&seq)) {
            (Some(max), Some(m)) => m.receive_count >= max,
            _ => false,
        }
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
            while out.seqs.len() < max {
                let Some(seq) = self.available.pop_first() else {
                    break;
                };
                if self.doomed(seq, max_receive_count) {
                    out.dead_lettered
                        .extend(self.remove(seq, Transition::MovedToDeadLetterQueue));
                    continue;
                }
                self.start_flight(seq, now, until);
                out.seqs.push(seq);
            }
            return out;
        }
        while out.seqs.len() < max {
            let Some(group_id) = self.next_ready_group() else {
                break;
            };
            let mut index = 0;
            while out.seqs.len() < max {
                let fifo = self.fifo.as_mut().expect("fifo");
                let Some(&seq) = fifo
                    .groups
                    .get(&group_id)
                    .and_then(|g| g.messages.get(index))
                else {
                    break;
                };
                if self.messages.get(&seq).map(|m| m.state) != Some(State::Available) {
                    break;
                }
                if self.doomed(seq, max_receive_count) {
                    // Removing shifts the next message into `index`.
                    out.dead_lettered
                        .extend(self.remove(seq, Transition::MovedToDeadLetterQueue));
                    continue;
                }
                self.start_flight(seq, now, until);
                if let Some(group) = self.fifo.as_mut().and_then(|f| f.groups.get_mut(&group_id)) {
                    group.in_flight += 1;
                }
                out.seqs.push(seq);
                index += 1;
            }
            self.settle_group(&group_id);
        }
        out
    }

    /// Sets a new visibility deadline for a message that is in flight (or,
    /// on standard queues, whose visibility already ran out). A deadline
    /// at or before `now` makes it available at once.
    pub fn change_visibility(&mut self, seq: u64, now: u64, until: u64) {
        let Some(message) = self.messages.get(&seq) else {
            return;
        };
        match message.state {
            State::InFlight(old) => {
                self.in_flight.remove(&(old, seq));
                if until <= now {
                    self.make_available(seq, Transition::Released);
                    return;
                }
            }
            State::Available if self.fifo.is_none() => {
                if until <= now {
                    return;
                }
                self.available.remove(&seq);
            }
            _ => return,
        }
        let message = self.messages.get_mut(&seq).expect("present");
        message.state = State::InFlight(until);
        self.in_flight.insert((until, seq));
        let message = &self.messages[&seq];
        self.transition(Transition::VisibilityChanged, message);
    }

    /// Extends the visibility of an in-flight message without a new
    /// receipt (a FIFO receive-attempt retry).
    pub fn refresh_flight(&mut self, seq: u64, until: u64) {
        if let Some(State::InFlight(old)) = self.messages.get(&seq).map(|m| m.state) {
            self.in_flight.remove(&(old, seq));
            self.in_flight.insert((until, seq));
            let message = self.messages.get_mut(&seq).expect("present");
            message.state = State::InFlight(until);
        }
    }

    /// Removes every message.
    pub fn purge(&mut self) -> usize {
        let seqs: Vec<u64> = self.messages.keys().copied().collect();
        for seq in &seqs {
            if let Some(m) = self.messages.get(seq) {
                self.transition(Transition::Purged, m);
            }
        }
        let fifo = self.fifo.is_some();
        let (next_seq, next_nonce) = (self.next_seq, self.next_nonce);
        *self = MessageStore::new(fifo);
        self.next_seq = next_seq;
        self.next_nonce = next_nonce;
        seqs.len()
    }

    /// Takes up to `max` available messages out, oldest first (FIFO: whole
    /// available group prefixes, in order), for a message move task.
    pub fn take_for_move(&mut self, max: usize) -> Vec<StoredMessage> {
        let mut out = Vec::new();
        if self.fifo.is_none() {
            while out.len() < max {
                let Some(&seq) = self.available.first() else {
                    break;
                };
                out.extend(self.remove(seq, Transition::MovedByTask));
            }
            return out;
        }
        while out.len() < max {
            let Some(group_id) = self.next_ready_group() else {
                break;
            };
            while out.len() < max {
                let fifo = self.fifo.as_ref().expect("fifo");
                let Some(&seq) = fifo.groups.get(&group_id).and_then(|g| g.messages.front()) else {
                    break;
                };
                if self.messages.get(&seq).map(|m| m.state) != Some(State::Available) {
                    break;
                }
                out.extend(self.remove(seq, Transition::MovedByTask));
            }
            self.settle_group(&group_id);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(group: Option<&str>, now: u64) -> StoredMessage {
        StoredMessage {
            message_id: Uuid::new_v4(),
            body: "b".into(),
            body_md5: [0; 16],
            attributes: Default::default(),
            trace_header: None,
            sender_id: Arc::from("000000000000"),
            sent_ms: now,
            enqueued_ms: now,
            first_receive_ms: None,
            receive_count: 0,
            group_id: group.map(Arc::from),
            dedup_id: None,
            sequence_number: None,
            dead_letter_source_arn: None,
            state: State::Available,
            nonce: 0,
            received_ms: 0,
        }
    }

    const DAY: u64 = 86_400_000;

    #[test]
    fn standard_lifecycle() {
        let mut s = MessageStore::new(false);
        let a = s.insert(message(None, 0), 0, 0, Transition::Sent);
        let b = s.insert(message(None, 0), 5_000, 0, Transition::Sent);
        assert_eq!((s.available_count(), s.delayed_count()), (1, 1));
        let r = s.receive(0, 10, 30_000, None);
        assert_eq!(r.seqs, vec![a]);
        assert_eq!(s.in_flight_count(), 1);
        s.tick(5_000, DAY);
        assert_eq!(s.receive(5_000, 10, 30_000, None).seqs, vec![b]);
        // a's visibility runs out at 30 s: it comes back with a higher count.
        s.tick(30_000, DAY);
        let r = s.receive(30_000, 10, 30_000, None);
        assert_eq!(r.seqs, vec![a]);
        assert_eq!(s.get(a).unwrap().receive_count, 2);
        s.change_visibility(a, 31_000, 31_000);
        assert_eq!(s.available_count(), 1);
        s.remove(a, Transition::Deleted);
        s.remove(b, Transition::Deleted);
        assert!(s.is_empty());
    }

    #[test]
    fn retention_expires_in_flight_messages_too() {
        let mut s = MessageStore::new(false);
        s.insert(message(None, 0), 0, 0, Transition::Sent);
        s.receive(0, 1, 3_600_000, None);
        s.tick(59_999, 60_000);
        assert_eq!(s.len(), 1);
        s.tick(60_000, 60_000);
        assert_eq!(s.len(), 0);
        assert_eq!(s.in_flight_count(), 0);
    }

    #[test]
    fn fifo_group_lock_and_order() {
        let mut s = MessageStore::new(true);
        let a1 = s.insert(message(Some("a"), 0), 0, 0, Transition::Sent);
        let a2 = s.insert(message(Some("a"), 0), 0, 0, Transition::Sent);
        let b1 = s.insert(message(Some("b"), 0), 0, 0, Transition::Sent);
        // One receive of 1 takes a1 and locks group a.
        assert_eq!(s.receive(0, 1, 30_000, None).seqs, vec![a1]);
        // Next receive must skip group a entirely.
        assert_eq!(s.receive(0, 10, 30_000, None).seqs, vec![b1]);
        assert!(s.receive(0, 10, 30_000, None).seqs.is_empty());
        s.remove(b1, Transition::Deleted);
        // a1 times out: it comes back first, with a2 after it.
        s.tick(30_000, DAY);
        assert_eq!(s.receive(30_000, 10, 30_000, None).seqs, vec![a1, a2]);
        s.remove(a1, Transition::Deleted);
        assert!(
            s.receive(30_000, 10, 30_000, None).seqs.is_empty(),
            "a2 still in flight"
        );
        s.remove(a2, Transition::Deleted);
        assert!(s.is_empty());
        assert!(s.fifo.as_ref().unwrap().groups.is_empty());
    }

    #[test]
    fn redrive_takes_doomed_messages_out_and_keeps_looking() {
        let mut s = MessageStore::new(false);
        let a = s.insert(message(None, 0), 0, 0, Transition::Sent);
        let b = s.insert(message(None, 0), 0, 0, Transition::Sent);
        s.receive(0, 1, 0, Some(1));
        s.tick(0, DAY);
        let r = s.receive(0, 1, 30_000, Some(1));
        assert_eq!(r.dead_lettered.len(), 1);
        assert_eq!(r.seqs, vec![b]);
        assert!(s.get(a).is_none());
    }
}
