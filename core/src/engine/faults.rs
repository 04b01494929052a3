//! The one seeded fault that needs the engine: duplicate delivery.
//!
//! Why here and not at the request level like the other faults (see
//! `crate::faults`): a duplicate must be a real stored message — same
//! MessageId, body and attributes, receivable later under a receipt handle
//! that deletes it — and it must appear in the event stream and history
//! (`Transition::Duplicated`). So it goes through the store like any other
//! change of state.

use super::receipt::Receipt;
use super::store::{State, Transition};
use super::{Engine, QueueKey};

impl Engine {
    /// Stores a second copy of the message a fresh receipt handle names,
    /// hidden until the original's visibility deadline: as SQS's
    /// at-least-once delivery allows, it is delivered again later even if
    /// the original is deleted meanwhile. Standard queues only (FIFO keeps
    /// exactly-once). Returns whether a copy was made. O(log n).
    pub fn duplicate_delivery(&self, key: &QueueKey, receipt_handle: &str) -> bool {
        let Some(queue) = self.queue_by_key(key) else {
            return false;
        };
        if queue.is_fifo() {
            return false;
        }
        let Some(receipt) = Receipt::decode(receipt_handle, queue.receipt_key())
            .filter(|r| r.queue_uid == queue.uid)
        else {
            return false;
        };
        let now = self.now();
        let mut state = queue.lock_at(now);
        let Some(original) = state.store.get(receipt.slot) else {
            return false;
        };
        let State::InFlight(until) = original.state() else {
            return false;
        };
        if original.nonce != receipt.nonce {
            return false;
        }
        let copy = original.clone();
        state.store.insert(copy, until, now, Transition::Duplicated);
        true
    }
}
