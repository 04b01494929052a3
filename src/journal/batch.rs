//! Pending writes folded into what one commit writes: the last word on
//! each row. Both backends write a `Batch` the same way, so the order in
//! which a backend issues its statements cannot change what is stored.
//!
//! A batch that failed to commit stays and absorbs what was published
//! since, so the retry writes the newest state of everything.

use std::collections::{BTreeMap, HashMap};

use super::*;

/// The last word on one message row.
pub(super) enum Row {
    /// The message as it is now. `new`: the row may not exist yet (its
    /// `Sent` is in this batch), so write it whole; otherwise only its
    /// state changed, unless the row turns out to be missing.
    Put {
        message: Arc<StoredMessage>,
        new: bool,
    },
    Delete,
}

/// A FIFO receive-attempt change, kept in order: a later attempt of the
/// same id replaces an earlier one, and a visibility change voids them.
pub(super) enum AttemptOp {
    Set {
        queue_uid: u64,
        id: Arc<str>,
        expires_ms: u64,
        /// (slot, receipt nonce), in the order returned.
        messages: Vec<(u64, u64)>,
    },
    Forget {
        queue_uid: u64,
        slot: u64,
    },
}

/// Counters a queue must not go back on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Counters {
    pub next_slot: u64,
    pub next_nonce: u64,
    pub last_sequence: u128,
}

/// What one commit writes.
#[derive(Default)]
pub(super) struct Batch {
    /// By (queue uid, slot).
    pub messages: BTreeMap<(u64, u64), Row>,
    /// By (queue uid, group, deduplication id): the last record.
    pub dedup: HashMap<(u64, String, String), DedupRecord>,
    pub attempts: Vec<AttemptOp>,
    /// The newest queue-level state reported, if any.
    pub queues: Option<EngineState>,
    pub counters: HashMap<u64, Counters>,
    /// Drop deduplication ids and receive attempts that expired before
    /// this time (the engine's clock).
    pub prune: Option<u64>,
    /// Kept values for the layers around the engine, by key.
    pub meta: BTreeMap<&'static str, String>,
    /// Outbox rows to write, in the order handed over. Only a store split
    /// into shards has them (the SQLite journal's engine has no other
    /// shard to hand to).
    pub outbound: Vec<Outbound>,
    /// Outbox rows this shard took in.
    pub accepted: Vec<uuid::Uuid>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
            && self.dedup.is_empty()
            && self.attempts.is_empty()
            && self.queues.is_none()
            && self.counters.is_empty()
            && self.prune.is_none()
            && self.meta.is_empty()
            && self.outbound.is_empty()
            && self.accepted.is_empty()
    }

    /// Folds `ops`, in the order published, into the batch.
    pub fn absorb(&mut self, ops: Vec<Op>) {
        for op in ops {
            match op {
                Op::Put {
                    queue_uid,
                    slot,
                    message,
                    new,
                } => {
                    let c = self.counters.entry(queue_uid).or_default();
                    c.next_slot = c.next_slot.max(slot + 1);
                    c.next_nonce = c.next_nonce.max(message.nonce + 1);
                    c.last_sequence = c.last_sequence.max(message.sequence_number().unwrap_or(0));
                    let key = (queue_uid, slot);
                    let new =
                        new || matches!(self.messages.get(&key), Some(Row::Put { new: true, .. }));
                    self.messages.insert(key, Row::Put { message, new });
                }
                Op::Delete { queue_uid, slot } => {
                    let c = self.counters.entry(queue_uid).or_default();
                    c.next_slot = c.next_slot.max(slot + 1);
                    // Written even when the row was new in this batch: a
                    // commit whose outcome was unknown (the connection
                    // dropped at COMMIT) may have stored it after all.
                    self.messages.insert((queue_uid, slot), Row::Delete);
                }
                Op::Dedup { queue_uid, record } => {
                    self.dedup.insert(
                        (queue_uid, record.group.clone(), record.dedup_id.clone()),
                        record,
                    );
                }
                Op::Attempt {
                    queue_uid,
                    id,
                    expires_ms,
                    messages,
                } => self.attempts.push(AttemptOp::Set {
                    queue_uid,
                    id,
                    expires_ms,
                    messages,
                }),
                Op::ForgetAttempts { queue_uid, slot } => {
                    self.attempts.push(AttemptOp::Forget { queue_uid, slot })
                }
                Op::Meta { key, value } => {
                    self.meta.insert(key, value);
                }
                Op::Outbound(records) => self.outbound.extend(records),
                Op::Accepted(id) => self.accepted.push(id),
                Op::Queues(state) => {
                    for q in &state.queues {
                        let c = self.counters.entry(q.uid).or_default();
                        c.last_sequence = c.last_sequence.max(q.last_sequence.parse().unwrap_or(0));
                    }
                    self.queues = Some(state);
                }
            }
        }
    }
}

/// The queue-level state without its queues (each queue is a row of its
/// own): deleted-recently times, move tasks, and the services' state.
pub(super) fn engine_meta(state: &EngineState) -> String {
    let meta = EngineState {
        queues: Vec::new(),
        deleted_at: state.deleted_at.clone(),
        move_tasks: state.move_tasks.clone(),
        services: state.services.clone(),
    };
    serde_json::to_string(&meta).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{OptionalFields, SenderId};

    fn message(nonce: u64) -> Arc<StoredMessage> {
        let mut m = StoredMessage::new(
            uuid::Uuid::nil(),
            "body".to_string(),
            [0; 16],
            Default::default(),
            SenderId::new("s"),
            OptionalFields::default(),
        );
        m.nonce = nonce;
        Arc::new(m)
    }

    fn put(slot: u64, nonce: u64, new: bool) -> Op {
        Op::Put {
            queue_uid: 1,
            slot,
            message: message(nonce),
            new,
        }
    }

    #[test]
    fn a_row_new_in_the_batch_stays_new_through_its_updates() {
        let mut b = Batch::default();
        b.absorb(vec![put(4, 0, true), put(4, 1, false)]);
        match &b.messages[&(1, 4)] {
            Row::Put { message, new } => assert!(*new && message.nonce == 1),
            Row::Delete => panic!("deleted"),
        }
        assert_eq!(
            b.counters[&1],
            Counters {
                next_slot: 5,
                next_nonce: 2,
                last_sequence: 0
            }
        );
    }

    #[test]
    fn a_delete_is_the_last_word_and_a_later_batch_updates_only() {
        let mut b = Batch::default();
        b.absorb(vec![
            put(2, 0, true),
            Op::Delete {
                queue_uid: 1,
                slot: 2,
            },
        ]);
        assert!(matches!(b.messages[&(1, 2)], Row::Delete));
        let mut b = Batch::default();
        b.absorb(vec![put(3, 5, false)]);
        assert!(matches!(b.messages[&(1, 3)], Row::Put { new: false, .. }));
    }

    #[test]
    fn a_failed_batch_absorbs_what_came_after_it() {
        let mut b = Batch::default();
        b.absorb(vec![put(1, 0, true)]);
        b.absorb(vec![put(1, 3, false), put(2, 0, true)]);
        assert_eq!(b.messages.len(), 2);
        assert!(matches!(b.messages[&(1, 1)], Row::Put { new: true, .. }));
        assert_eq!(b.counters[&1].next_slot, 3);
    }
}
