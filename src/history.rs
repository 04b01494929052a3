//! Message history: what happened to each message, kept from the engine's
//! event stream so "silent loss" has a record — an expiry, a stale-handle
//! delete that removed nothing, a move to the dead-letter queue on the
//! receive after the last allowed one.
//!
//! Memory is bounded: the last `max_events` events of the server (the
//! recent-events window), and besides them the whole trails of the last
//! `max_finished` messages that left (deleted, expired, purged, moved by
//! a task, removed with their queue or by the admin API), so a finished
//! message's story survives the window moving on. Past either bound the
//! oldest go first, and a trail that lost events says so (`cut`).
//!
//! Cost per event, on the request path: one push onto the window, one pop
//! off it once full, and for the event that leaves, one probe of the small
//! table of finished messages (at most `max_finished` entries, so it stays
//! in cache). No per-message index is kept: reading a trail scans the
//! window (bounded by `max_events`, not by the messages stored), which is
//! an admin call's cost instead of every request's. Only the events of a
//! finished message that the window drops are copied aside ("spilled").

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

use rustc_hash::FxHashMap;
use uuid::Uuid;

use crate::engine::events::{Event, Subscriber};
use crate::engine::QueueKey;
use crate::engine::Transition;

/// How much history to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryLimits {
    /// Recent events kept server-wide (the window `/_retsu/events` reads).
    pub max_events: usize,
    /// Finished messages whose whole trail is kept past the window.
    pub max_finished: usize,
}

impl Default for HistoryLimits {
    fn default() -> HistoryLimits {
        HistoryLimits {
            max_events: 100_000,
            max_finished: 1_000,
        }
    }
}

/// One message's events, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Trail {
    pub events: Vec<Event>,
    /// Older events of this message were dropped by a bound.
    pub cut: bool,
}

#[derive(Debug, Default)]
struct Inner {
    /// Events in sequence order, without gaps: the event numbered `seq`
    /// sits at `seq - first`.
    window: VecDeque<Event>,
    first: u64,
    /// The last `max_finished` messages that finished, oldest first, each
    /// with its events that left the window since (server-made ids: a
    /// fast non-keyed hash is safe).
    finished: VecDeque<Uuid>,
    spilled: FxHashMap<Uuid, Vec<Event>>,
}

/// The most of the window reserved up front (events of 120 bytes).
const MAX_RESERVED_EVENTS: usize = 1 << 20;

impl Inner {
    /// The window's capacity is reserved at once: address space the kernel
    /// backs only as events arrive, so an idle server stays small, and the
    /// window never grows by copying itself (16 MB at the default bound,
    /// each fresh page faulted, while requests wait on the lock).
    fn empty(limits: HistoryLimits) -> Inner {
        Inner {
            window: VecDeque::with_capacity(
                limits.max_events.saturating_add(1).min(MAX_RESERVED_EVENTS),
            ),
            ..Inner::default()
        }
    }
}

/// The history subscriber.
#[derive(Debug)]
pub struct History {
    limits: HistoryLimits,
    inner: Mutex<Inner>,
}

/// A filter over the recent-events window.
#[derive(Debug, Clone, Default)]
pub struct EventQuery {
    pub queue: Option<QueueKey>,
    /// Any of these kinds; empty: all.
    pub kinds: Vec<Transition>,
    /// Only events numbered after this.
    pub since: u64,
    pub limit: usize,
}

/// Transitions after which a message id is seen no more.
fn is_final(kind: Transition) -> bool {
    use Transition::*;
    matches!(
        kind,
        Deleted | Expired | Purged | MovedByTask | QueueDeleted | AdminDeleted
    )
}

/// Transitions a message's life begins with (in some queue).
fn is_start(kind: Transition) -> bool {
    matches!(
        kind,
        Transition::Sent | Transition::ArrivedFromSource | Transition::RestoredIn
    )
}

impl History {
    pub fn new(limits: HistoryLimits) -> History {
        History {
            limits,
            inner: Mutex::new(Inner::empty(limits)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A message's trail, live or finished; `None` if it was never seen
    /// (or its trail has been dropped entirely).
    pub fn trail(&self, message_id: &Uuid) -> Option<Trail> {
        let inner = self.lock();
        let mut events = inner.spilled.get(message_id).cloned().unwrap_or_default();
        events.extend(
            inner
                .window
                .iter()
                .filter(|e| e.message_id == *message_id)
                .cloned(),
        );
        if events.is_empty() {
            return None;
        }
        // A trail that does not begin where the message began was cut.
        let cut = !is_start(events[0].kind);
        Some(Trail { events, cut })
    }

    /// Recent events matching `query`, in order, and whether the window no
    /// longer holds every event after `since` (it moved on).
    pub fn events(&self, query: &EventQuery) -> (Vec<Event>, bool) {
        let inner = self.lock();
        let start = usize::try_from((query.since + 1).saturating_sub(inner.first))
            .unwrap_or(usize::MAX)
            .min(inner.window.len());
        let missed = query.since > 0 && !inner.window.is_empty() && inner.first > query.since + 1;
        let events = inner
            .window
            .range(start..)
            .filter(|e| query.queue.as_ref().is_none_or(|q| *e.queue == *q))
            .filter(|e| query.kinds.is_empty() || query.kinds.contains(&e.kind))
            .take(query.limit)
            .cloned()
            .collect();
        (events, missed)
    }

    /// The newest event number (0 before the first).
    pub fn last_seq(&self) -> u64 {
        self.lock().window.back().map_or(0, |e| e.seq)
    }

    /// Forgets everything (admin reset).
    pub fn clear(&self) {
        *self.lock() = Inner::empty(self.limits);
    }
}

impl Subscriber for History {
    fn publish(&self, events: &[Event]) {
        self.publish_owned(events.to_vec());
    }

    /// History subscribes last, so it gets the events themselves and moves
    /// them into the window in one go.
    fn publish_owned(&self, events: Vec<Event>) {
        let limits = self.limits;
        let mut inner = self.lock();
        let inner = &mut *inner;
        for event in &events {
            let id = event.message_id;
            // A message finishing twice (a seeded duplicate of it) keeps
            // its first place in the line.
            if is_final(event.kind) && !inner.spilled.contains_key(&id) {
                inner.spilled.insert(id, Vec::new());
                inner.finished.push_back(id);
                if inner.finished.len() > limits.max_finished {
                    if let Some(oldest) = inner.finished.pop_front() {
                        inner.spilled.remove(&oldest);
                    }
                }
            }
        }
        // The window moves on by as many events as overflow it, oldest
        // first and before the new ones go in, so it never holds more than
        // its bound (a purge of a million messages is one batch). A kept
        // finished message keeps what leaves; any other message's is gone.
        let overflow = (inner.window.len() + events.len()).saturating_sub(limits.max_events);
        let from_window = overflow.min(inner.window.len());
        let leaving = inner.window.drain(..from_window);
        let mut events = events.into_iter();
        for old in leaving.chain(events.by_ref().take(overflow - from_window)) {
            if let Some(kept) = inner.spilled.get_mut(&old.message_id) {
                kept.push(old);
            }
        }
        inner.window.extend(events);
        if let Some(front) = inner.window.front() {
            inner.first = front.seq;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn event(seq: u64, id: Uuid, kind: Transition) -> Event {
        Event {
            seq,
            at_ms: seq * 1000,
            queue: Arc::new(QueueKey {
                region: "us-east-1".into(),
                account: "000000000000".into(),
                name: "q".into(),
            }),
            message_id: id,
            kind,
            receive_count: 0,
            visible_at_ms: None,
            receipt: None,
            note: None,
            stored: None,
        }
    }

    #[test]
    fn finished_trails_outlive_the_window_and_cut_trails_say_so() {
        let h = History::new(HistoryLimits {
            max_events: 3,
            max_finished: 1,
        });
        let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        h.publish(&[
            event(1, a, Transition::Sent),
            event(2, a, Transition::Received),
            event(3, a, Transition::Deleted),
        ]);
        h.publish(&[
            event(4, b, Transition::Sent),
            event(5, b, Transition::Received),
            event(6, b, Transition::Released),
            event(7, b, Transition::Received),
        ]);
        // a finished: its whole trail is kept though the window moved on.
        let ta = h.trail(&a).unwrap();
        assert_eq!(ta.events.len(), 3);
        assert!(!ta.cut);
        // b is live: it lost its first event with the window.
        let tb = h.trail(&b).unwrap();
        assert_eq!(
            tb.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [5, 6, 7]
        );
        assert!(tb.cut);
        // A second finished message pushes the first out.
        h.publish(&[
            event(8, c, Transition::Sent),
            event(9, c, Transition::Expired),
        ]);
        assert!(h.trail(&a).is_none());
        assert_eq!(h.trail(&c).unwrap().events.len(), 2);
        // The window: the last three events, filterable.
        let (recent, missed) = h.events(&EventQuery {
            since: 0,
            limit: 10,
            ..Default::default()
        });
        assert_eq!(recent.iter().map(|e| e.seq).collect::<Vec<_>>(), [7, 8, 9]);
        assert!(!missed);
        let (expired, missed) = h.events(&EventQuery {
            kinds: vec![Transition::Expired],
            since: 2,
            limit: 10,
            ..Default::default()
        });
        assert_eq!(expired.len(), 1);
        assert!(missed, "events 3..6 are gone from the window");
    }

    #[test]
    fn a_batch_larger_than_the_window_keeps_it_bounded() {
        let h = History::new(HistoryLimits {
            max_events: 3,
            max_finished: 10,
        });
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        h.publish(&[event(1, a, Transition::Sent)]);
        // One batch of five (a purge, say): the window keeps its last
        // three, and a, finished in it, keeps its whole trail.
        h.publish(&[
            event(2, b, Transition::Sent),
            event(3, a, Transition::Purged),
            event(4, b, Transition::Received),
            event(5, b, Transition::Released),
            event(6, b, Transition::Purged),
        ]);
        let inner = h.lock();
        assert_eq!(inner.window.len(), 3);
        assert!(inner.window.capacity() < 8, "{}", inner.window.capacity());
        assert_eq!(inner.first, 4);
        drop(inner);
        let ta = h.trail(&a).unwrap();
        assert_eq!(ta.events.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 3]);
        assert!(!ta.cut);
        let tb = h.trail(&b).unwrap();
        assert_eq!(
            tb.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [2, 4, 5, 6]
        );
    }
}
