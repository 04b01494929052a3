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
//! Events are shared (`Arc`) between the window and the trails: each is
//! stored once.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

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
    /// Events kept per message (a message received thousands of times
    /// keeps its latest).
    pub max_per_message: usize,
}

impl Default for HistoryLimits {
    fn default() -> HistoryLimits {
        HistoryLimits {
            max_events: 100_000,
            max_finished: 1_000,
            max_per_message: 1_000,
        }
    }
}

/// One message's events, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Trail {
    pub events: Vec<Arc<Event>>,
    /// Older events of this message were dropped by a bound.
    pub cut: bool,
}

#[derive(Debug, Default)]
struct Kept {
    events: VecDeque<Arc<Event>>,
    cut: bool,
}

#[derive(Debug, Default)]
struct Inner {
    window: VecDeque<Arc<Event>>,
    live: HashMap<Uuid, Kept>,
    finished: HashMap<Uuid, Kept>,
    finished_order: VecDeque<Uuid>,
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

impl History {
    pub fn new(limits: HistoryLimits) -> History {
        History {
            limits,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A message's trail, live or finished; `None` if it was never seen
    /// (or its trail has been dropped entirely).
    pub fn trail(&self, message_id: &Uuid) -> Option<Trail> {
        let inner = self.lock();
        let kept = inner
            .live
            .get(message_id)
            .or_else(|| inner.finished.get(message_id))?;
        // A trail that does not begin where the message began was cut.
        let starts = kept.events.front().is_some_and(|e| {
            matches!(
                e.kind,
                Transition::Sent | Transition::ArrivedFromSource | Transition::RestoredIn
            )
        });
        Some(Trail {
            events: kept.events.iter().cloned().collect(),
            cut: kept.cut || !starts,
        })
    }

    /// Recent events matching `query`, in order, and whether the window no
    /// longer holds every event after `since` (it moved on).
    pub fn events(&self, query: &EventQuery) -> (Vec<Arc<Event>>, bool) {
        let inner = self.lock();
        // The window is in sequence order: find the first event after `since`.
        let start = inner.window.partition_point(|e| e.seq <= query.since);
        let missed = query.since > 0
            && inner
                .window
                .front()
                .is_some_and(|first| first.seq > query.since + 1);
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
        *self.lock() = Inner::default();
    }
}

impl Subscriber for History {
    fn publish(&self, events: &[Event]) {
        let limits = self.limits;
        let mut inner = self.lock();
        let inner = &mut *inner;
        for event in events {
            let event = Arc::new(event.clone());
            let id = event.message_id;
            inner.window.push_back(event.clone());
            let kept = inner.live.entry(id).or_default();
            kept.events.push_back(event.clone());
            if kept.events.len() > limits.max_per_message {
                kept.events.pop_front();
                kept.cut = true;
            }
            if is_final(event.kind) {
                if let Some(kept) = inner.live.remove(&id) {
                    inner.finished.insert(id, kept);
                    inner.finished_order.push_back(id);
                    if inner.finished_order.len() > limits.max_finished {
                        if let Some(oldest) = inner.finished_order.pop_front() {
                            inner.finished.remove(&oldest);
                        }
                    }
                }
            }
            // The window moves on; a live trail loses what falls out of it
            // (finished trails keep theirs).
            while inner.window.len() > limits.max_events {
                let Some(old) = inner.window.pop_front() else {
                    break;
                };
                if let Some(kept) = inner.live.get_mut(&old.message_id) {
                    if kept.events.front().is_some_and(|e| Arc::ptr_eq(e, &old)) {
                        kept.events.pop_front();
                        kept.cut = true;
                        if kept.events.is_empty() {
                            inner.live.remove(&old.message_id);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            max_per_message: 10,
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
}
