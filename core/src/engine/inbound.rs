//! Taking in a message another engine handed over ([`Outbound`]): it is
//! enqueued as the local transfer would have done it (a dead-lettered
//! message arrives as `Engine::dead_letter` puts it, a topic's delivery
//! goes through the same send), and the subscribers hear
//! [`Subscriber::accepted`] in the same event group as the message's own
//! events, so a journal stores the message and forgets its outbox row in
//! one commit.
//!
//! A record may be offered twice (the carrier retries before it learns
//! the first try was committed): the ids taken in lately are kept, and a
//! second offer enqueues nothing. They need only outlive the commit of the
//! first: after a restart the row is either gone or still to be taken, and
//! nothing is in memory. So the set is bounded in size and forgets an id
//! after a while on the engine's clock.
//!
//! [`Subscriber::accepted`]: super::events::Subscriber::accepted

use std::collections::{HashMap, VecDeque};

use uuid::Uuid;

use super::elsewhere::{Arrival, Outbound, OutboundItem, OutboundMessage};
use super::events::Wakes;
use super::store::Transition;
use super::Engine;
use crate::error::SqsError;

/// How long an accepted id is remembered (engine clock): far longer than
/// a journal takes to commit.
const REMEMBER_MS: u64 = 10 * 60 * 1000;
/// At most this many accepted ids are remembered (the oldest go first).
const MOST_REMEMBERED: usize = 100_000;

/// What [`Engine::accept_inbound`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accepted {
    /// Stored as `message_id` (for a FIFO duplicate within the
    /// deduplication window: recognised as that earlier message).
    Stored { message_id: Uuid },
    /// This id was taken in already; nothing was enqueued again.
    AlreadyAccepted,
}

/// The hand-overs taken in lately: id → when.
#[derive(Default)]
pub(super) struct AcceptedIds {
    at: HashMap<Uuid, u64>,
    order: VecDeque<(u64, Uuid)>,
}

impl AcceptedIds {
    /// Records `id` as taken in; false if it already was.
    fn claim(&mut self, id: Uuid, now: u64) -> bool {
        self.forget(now);
        if self.at.contains_key(&id) {
            return false;
        }
        self.at.insert(id, now);
        self.order.push_back((now, id));
        true
    }

    /// Undoes a claim whose enqueue failed, so a retry can succeed.
    fn release(&mut self, id: Uuid) {
        self.at.remove(&id);
    }

    fn forget(&mut self, now: u64) {
        while let Some(&(at, id)) = self.order.front() {
            let stale = now.saturating_sub(at) >= REMEMBER_MS;
            if !stale && self.order.len() < MOST_REMEMBERED {
                break;
            }
            self.order.pop_front();
            // A released and claimed-again id has a newer entry behind.
            if self.at.get(&id) == Some(&at) {
                self.at.remove(&id);
            }
        }
    }
}

impl Engine {
    /// Takes in a record another engine handed over for one of this
    /// engine's queues. `Err`: the target refused it (gone, or the message
    /// does not fit it); nothing changed and the record may be offered again.
    /// Like the admin API's changes, it is durable once
    /// [`Engine::persisted`] says so.
    pub fn accept_inbound(&self, outbound: Outbound) -> Result<Accepted, SqsError> {
        let now = self.now();
        if !self.inbound.lock().claim(outbound.id, now) {
            return Ok(Accepted::AlreadyAccepted);
        }
        let group = self.shared.events.group();
        let stored = match outbound.item {
            OutboundItem::Message(m) => self.arrive_from_elsewhere(&outbound.target_arn, m, now),
            OutboundItem::Delivery(delivery) => self
                .deliver_local(self.queue_by_arn(&outbound.target_arn), delivery)
                .map(|sent| sent.message_id.0),
        };
        match stored {
            Ok(message_id) => {
                self.shared.events.publish_accepted(outbound.id);
                drop(group);
                Ok(Accepted::Stored { message_id })
            }
            Err(e) => {
                drop(group);
                self.inbound.lock().release(outbound.id);
                Err(e)
            }
        }
    }

    /// Stores a moved message in `target_arn` as the local transfer would
    /// (see `dead_letter`, `arrive_by_task`, `restore`); its id.
    fn arrive_from_elsewhere(
        &self,
        target_arn: &str,
        m: OutboundMessage,
        now: u64,
    ) -> Result<Uuid, SqsError> {
        let queue = self
            .queue_by_arn(target_arn)
            .filter(|q| !q.is_deleted())
            .ok_or_else(SqsError::queue_does_not_exist)?;
        let fifo = queue.is_fifo();
        let sender = queue.sender_id(&m.sender_id);
        let (mut m, arrival) = m.into_stored(sender);
        if fifo && m.group_id().is_none() {
            return Err(SqsError::missing("MessageGroupId"));
        }
        let id = m.message_id;
        let mut state = queue.lock_at(now);
        if fifo || arrival == Arrival::Restored {
            // A FIFO target restarts the retention clock, as a restore does.
            m.set_enqueued_ms(now);
        }
        if fifo {
            m.optional_mut().sequence_number = Some(state.next_sequence_number(now));
        }
        match arrival {
            Arrival::DeadLettered => {
                state
                    .store
                    .insert(m, now, now, Transition::ArrivedFromSource);
            }
            Arrival::Moved { note } => {
                state.store.insert_noted(
                    m,
                    now,
                    now,
                    Transition::ArrivedFromSource,
                    Some(note.into()),
                );
            }
            Arrival::Restored => {
                state.store.insert(m, now, now, Transition::RestoredIn);
                drop(state);
                queue.wake(Wakes::everyone());
            }
        }
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_kept_for_a_while_and_then_forgotten() {
        let mut ids = AcceptedIds::default();
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        assert!(ids.claim(a, 1_000));
        assert!(!ids.claim(a, 2_000));
        assert!(ids.claim(b, 2_000));
        ids.release(b);
        assert!(ids.claim(b, 3_000), "a released id can be taken again");
        assert!(!ids.claim(a, 1_000 + REMEMBER_MS - 1));
        assert!(
            ids.claim(a, 1_000 + REMEMBER_MS),
            "forgotten after the window"
        );
        // b's released first entry goes stale; its second still counts.
        assert!(!ids.claim(b, 3_000 + REMEMBER_MS - 1));
    }

    #[test]
    fn at_most_so_many_ids_are_kept() {
        let mut ids = AcceptedIds::default();
        let first = Uuid::new_v4();
        assert!(ids.claim(first, 0));
        for _ in 2..MOST_REMEMBERED {
            assert!(ids.claim(Uuid::new_v4(), 0));
        }
        assert!(!ids.claim(first, 0));
        assert!(ids.claim(Uuid::new_v4(), 0));
        assert!(ids.claim(first, 0), "the oldest went first");
        assert!(ids.at.len() <= MOST_REMEMBERED + 1);
    }
}
