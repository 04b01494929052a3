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
//! Cost per event, on the request path: one 64-byte record written into
//! the window (see [`Kept`]), the oldest dropped unread once it is full,
//! and, while finished messages are kept, one probe of their small table
//! (at most `max_finished` entries, so it stays in cache) for the event
//! that leaves. No per-message index is kept: reading a trail scans the
//! window (bounded by `max_events`, not by the messages stored), which is
//! an admin call's cost instead of every request's. Only the events of a
//! finished message that the window drops are copied aside ("spilled").

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

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

/// An event as the window keeps it: 64 bytes, one cache line, with
/// nothing to follow or drop. The window is megabytes that no cache holds;
/// keeping whole events there (120 bytes each, with reference counts to
/// drop as they left) cost a batch send about what no history at all
/// saved, in cache misses (BENCHMARKS.md, "History keeps 64-byte
/// records"). Its number is its place in the window; its queue an index into [`Inner::queues`]; the rare note
/// sits aside in [`Inner::notes`].
#[derive(Debug, Clone, Copy)]
struct Kept {
    at_ms: u64,
    visible_at_ms: u64,
    /// The receipt's slot and nonce (its queue incarnation is the queue
    /// entry's).
    slot: u64,
    nonce: u64,
    message_id: Uuid,
    queue: u32,
    receive_count: u32,
    kind: Transition,
    visible: bool,
    receipt: bool,
    note: bool,
}

/// The queue index of a window place that holds no message event: an SNS
/// fan-out step, which takes its number in the server-wide order but whose
/// record lives with its topic (`/_retsu/topics`, the live stream).
const FILLER: u32 = u32::MAX;

/// A queue the window's events name: the key, and the incarnation its
/// receipts were issued under.
#[derive(Debug)]
struct QueueRef {
    key: Arc<QueueKey>,
    uid: u64,
}

/// Tells the queue entries apart: the key's allocation (one per queue
/// incarnation, held by the entry, so never reused while it lives) and
/// the receipt incarnation (0 for events without a receipt).
type QueueTag = (usize, u64);

fn tag_of(key: &Arc<QueueKey>, uid: u64) -> QueueTag {
    (Arc::as_ptr(key) as usize, uid)
}

#[derive(Debug, Default)]
struct Inner {
    /// Events in sequence order, without gaps: the event numbered `seq`
    /// sits at `seq - first`.
    window: VecDeque<Kept>,
    first: u64,
    queues: Vec<QueueRef>,
    queue_index: FxHashMap<QueueTag, u32>,
    /// The last entry looked up: a batch of events is one queue's.
    last_queue: Option<(QueueTag, u32)>,
    /// The entry count that triggers dropping entries no event names.
    queue_limit: usize,
    /// The notes of the window's events, by event number, in order.
    notes: VecDeque<(u64, Arc<str>)>,
    /// The last `max_finished` messages that finished, oldest first, each
    /// with its events that left the window since (server-made ids: a
    /// fast non-keyed hash is safe).
    finished: VecDeque<Uuid>,
    spilled: FxHashMap<Uuid, Vec<Event>>,
}

const MAX_RESERVED_EVENTS: usize = 1 << 20;

/// Queue entries kept before the unused ones are dropped (then twice the
/// number in use).
const MIN_QUEUE_LIMIT: usize = 1024;

impl Inner {
    /// The window's capacity is reserved at once: address space the kernel
    /// backs only as events arrive, so an idle server stays small, and the
    /// window never grows by copying itself (6.4 MB at the default bound,
    /// each fresh page faulted, while requests wait on the lock).
    fn empty(limits: HistoryLimits) -> Inner {
        Inner {
            window: VecDeque::with_capacity(
                limits.max_events.saturating_add(1).min(MAX_RESERVED_EVENTS),
            ),
            queue_limit: MIN_QUEUE_LIMIT,
            ..Inner::default()
        }
    }

    /// The entry for an event's queue (and receipt incarnation).
    fn queue_of(&mut self, event: &Event) -> u32 {
        let uid = event.receipt.map_or(0, |r| r.0);
        let tag = tag_of(&event.queue, uid);
        if let Some((last, i)) = self.last_queue {
            if last == tag {
                return i;
            }
        }
        if let Some(&i) = self.queue_index.get(&tag) {
            self.last_queue = Some((tag, i));
            return i;
        }
        if self.queues.len() >= self.queue_limit {
            self.drop_unused_queues();
        }
        let i = self.queues.len() as u32;
        self.queues.push(QueueRef {
            key: event.queue.clone(),
            uid,
        });
        self.queue_index.insert(tag, i);
        self.last_queue = Some((tag, i));
        i
    }

    /// Keeps only the queue entries the window's events name (a server
    /// that creates and deletes queues all day keeps a bounded table).
    fn drop_unused_queues(&mut self) {
        let mut used = vec![false; self.queues.len()];
        for event in self.window.iter().filter(|e| e.queue != FILLER) {
            used[event.queue as usize] = true;
        }
        // Kept entries keep their order; each old index maps to its new one.
        let renumbered: Vec<u32> = used
            .iter()
            .scan(0u32, |next, &u| {
                let at = *next;
                *next += u32::from(u);
                Some(at)
            })
            .collect();
        for event in self.window.iter_mut().filter(|e| e.queue != FILLER) {
            event.queue = renumbered[event.queue as usize];
        }
        let mut at = 0;
        self.queues.retain(|_| {
            at += 1;
            used[at - 1]
        });
        self.queue_index = self
            .queues
            .iter()
            .enumerate()
            .map(|(i, q)| (tag_of(&q.key, q.uid), i as u32))
            .collect();
        self.queue_limit = MIN_QUEUE_LIMIT.max(2 * self.queues.len());
        self.last_queue = None;
    }

    fn keep(&mut self, event: &Event) -> Kept {
        let queue = self.queue_of(event);
        if let Some(note) = &event.note {
            self.notes.push_back((event.seq, note.clone()));
        }
        let (slot, nonce) = event.receipt.map_or((0, 0), |r| (r.1, r.2));
        Kept {
            at_ms: event.at_ms,
            visible_at_ms: event.visible_at_ms.unwrap_or(0),
            slot,
            nonce,
            message_id: event.message_id,
            queue,
            receive_count: event.receive_count,
            kind: event.kind,
            visible: event.visible_at_ms.is_some(),
            receipt: event.receipt.is_some(),
            note: event.note.is_some(),
        }
    }

    /// The event numbered `seq`, kept as `kept`, whole again.
    fn event(&self, seq: u64, kept: &Kept) -> Event {
        let queue = &self.queues[kept.queue as usize];
        let note = kept
            .note
            .then(|| {
                let at = self.notes.binary_search_by_key(&seq, |n| n.0).ok()?;
                Some(self.notes[at].1.clone())
            })
            .flatten();
        Event {
            seq,
            at_ms: kept.at_ms,
            queue: queue.key.clone(),
            message_id: kept.message_id,
            kind: kept.kind,
            receive_count: kept.receive_count,
            visible_at_ms: kept.visible.then_some(kept.visible_at_ms),
            receipt: kept.receipt.then_some((queue.uid, kept.slot, kept.nonce)),
            note,
            stored: None,
        }
    }

    /// The window's events from position `from`, numbered, whole.
    fn events_from(&self, from: usize) -> impl Iterator<Item = Event> + '_ {
        self.window
            .range(from..)
            .enumerate()
            .filter(|(_, kept)| kept.queue != FILLER)
            .map(move |(i, kept)| self.event(self.first + (from + i) as u64, kept))
    }

    /// Holds the places of SNS fan-out steps, so the window's numbers
    /// stay the server's event numbers.
    fn fill(&mut self, seq: u64, at_ms: u64, max_events: usize) {
        if self.window.len() >= max_events {
            if let Some(kept) = self.window.front().copied() {
                if kept.queue != FILLER && self.spilled.contains_key(&kept.message_id) {
                    let event = self.event(self.first, &kept);
                    if let Some(trail) = self.spilled.get_mut(&kept.message_id) {
                        trail.push(event);
                    }
                }
            }
            self.window.pop_front();
            self.first += 1;
        }
        let next = self.first + self.window.len() as u64;
        if self.window.is_empty() || seq != next {
            self.window.clear();
            self.notes.clear();
            self.first = seq;
        }
        self.window.push_back(Kept {
            at_ms,
            visible_at_ms: 0,
            slot: 0,
            nonce: 0,
            message_id: Uuid::nil(),
            queue: FILLER,
            receive_count: 0,
            kind: Transition::Sent,
            visible: false,
            receipt: false,
            note: false,
        });
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
    /// Any of these kinds; empty (and no topic kinds): all.
    pub kinds: Vec<Transition>,
    /// Any of these SNS fan-out kinds (the live stream only).
    pub topic_kinds: Vec<crate::engine::events::TopicEventKind>,
    /// Lambda invocations (`kind=invocation`; the live stream only).
    pub invocations: bool,
    /// Only events numbered after this.
    pub since: u64,
    pub limit: usize,
}

impl EventQuery {
    /// Whether an event passes the queue and kind filters.
    pub fn matches(&self, e: &Event) -> bool {
        let any_kind = self.any_kind();
        self.queue.as_ref().is_none_or(|q| *e.queue == *q)
            && (any_kind || self.kinds.contains(&e.kind))
    }

    /// Whether an SNS fan-out step passes: only without a queue filter.
    pub fn matches_topic(&self, e: &crate::engine::events::TopicEvent) -> bool {
        self.queue.is_none() && (self.any_kind() || self.topic_kinds.contains(&e.kind))
    }

    /// Whether a Lambda invocation passes: with a queue filter, only a
    /// mapping's invocation of that queue (`from`, the source ARN).
    pub fn matches_invocation(&self, from: &str) -> bool {
        let queue = self.queue.as_ref().is_none_or(|q| from == q.arn());
        queue && (self.any_kind() || self.invocations)
    }

    fn any_kind(&self) -> bool {
        self.kinds.is_empty() && self.topic_kinds.is_empty() && !self.invocations
    }
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
                .enumerate()
                .filter(|(_, k)| k.message_id == *message_id && k.queue != FILLER)
                .map(|(i, k)| inner.event(inner.first + i as u64, k)),
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
            .events_from(start)
            .filter(|e| query.matches(e))
            .take(query.limit)
            .collect();
        (events, missed)
    }

    /// The newest event number (0 before the first).
    pub fn last_seq(&self) -> u64 {
        let inner = self.lock();
        match inner.window.len() {
            0 => 0,
            n => inner.first + n as u64 - 1,
        }
    }

    /// Forgets everything (admin reset).
    pub fn clear(&self) {
        *self.lock() = Inner::empty(self.limits);
    }
}

impl Subscriber for History {
    fn topic_events(&self, events: &[crate::engine::events::TopicEvent]) {
        let max_events = self.limits.max_events;
        let mut inner = self.lock();
        for e in events {
            inner.fill(e.seq, e.at_ms, max_events);
        }
    }

    fn publish(&self, events: &[Event]) {
        let limits = self.limits;
        let mut inner = self.lock();
        let inner = &mut *inner;
        for event in events {
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
        // finished message keeps what leaves; any other message's is gone,
        // unread: with no finished message kept, leaving costs nothing.
        let overflow = (inner.window.len() + events.len()).saturating_sub(limits.max_events);
        let from_window = overflow.min(inner.window.len());
        if !inner.spilled.is_empty() {
            for i in 0..from_window {
                let kept = inner.window[i];
                if inner.spilled.contains_key(&kept.message_id) {
                    let event = inner.event(inner.first + i as u64, &kept);
                    if let Some(trail) = inner.spilled.get_mut(&kept.message_id) {
                        trail.push(event);
                    }
                }
            }
        }
        inner.window.drain(..from_window);
        inner.first += from_window as u64;
        let (skipped, entering) = events.split_at(overflow - from_window);
        for old in skipped {
            if let Some(trail) = inner.spilled.get_mut(&old.message_id) {
                trail.push(old.clone());
            }
        }
        for event in entering {
            let next = inner.first + inner.window.len() as u64;
            if inner.window.is_empty() || event.seq != next {
                // The bus numbers and delivers every event in order, so a
                // gap cannot happen; were it to, numbers taken from places
                // would lie, so the window would start again instead.
                debug_assert!(inner.window.is_empty(), "event {} after {next}", event.seq);
                inner.window.clear();
                inner.notes.clear();
                inner.first = event.seq;
            }
            let kept = inner.keep(event);
            inner.window.push_back(kept);
        }
        let first = inner.first;
        while inner.notes.front().is_some_and(|n| n.0 < first) {
            inner.notes.pop_front();
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

    #[test]
    fn kept_events_read_back_whole() {
        assert_eq!(std::mem::size_of::<Kept>(), 64);
        let h = History::new(HistoryLimits {
            max_events: 4,
            max_finished: 10,
        });
        let id = Uuid::new_v4();
        let mut received = event(1, id, Transition::Received);
        received.receipt = Some((7, 42, 3));
        received.visible_at_ms = Some(30_000);
        received.receive_count = 2;
        let mut moved = event(2, id, Transition::MovedToDeadLetterQueue);
        moved.note = Some(Arc::from("arn:aws:sqs:us-east-1:000000000000:dlq"));
        h.publish(&[received.clone(), moved.clone()]);
        let trail = h.trail(&id).unwrap().events;
        assert_eq!(trail[0].receipt, Some((7, 42, 3)));
        assert_eq!(trail[0].visible_at_ms, Some(30_000));
        assert_eq!(trail[0].receive_count, 2);
        assert_eq!(trail[0].at_ms, received.at_ms);
        assert_eq!(trail[1].note.as_deref(), moved.note.as_deref());
        assert_eq!((trail[1].receipt, trail[1].visible_at_ms), (None, None));
        assert_eq!(*trail[1].queue, *moved.queue);
        // The notes leave with their events.
        let other = Uuid::new_v4();
        h.publish(&[3, 4, 5, 6].map(|seq| event(seq, other, Transition::Sent)));
        assert!(h.trail(&id).is_none());
        assert!(h.lock().notes.is_empty());
        assert_eq!(h.last_seq(), 6);
    }

    #[test]
    fn the_queue_table_forgets_queues_the_window_no_longer_names() {
        let h = History::new(HistoryLimits {
            max_events: 8,
            max_finished: 10,
        });
        let id = Uuid::new_v4();
        for seq in 1..=5000 {
            // A new queue (incarnation) for every event.
            let mut e = event(seq, id, Transition::Sent);
            e.queue = Arc::new(QueueKey {
                name: format!("q{seq}"),
                ..(*e.queue).clone()
            });
            h.publish(&[e]);
        }
        let inner = h.lock();
        assert!(
            inner.queues.len() <= MIN_QUEUE_LIMIT,
            "{}",
            inner.queues.len()
        );
        drop(inner);
        let (recent, _) = h.events(&EventQuery {
            limit: 100,
            ..Default::default()
        });
        assert_eq!(recent.len(), 8);
        assert_eq!(recent[7].seq, 5000);
        for e in &recent {
            // Renumbered entries still name each event's own queue.
            assert_eq!(e.queue.name, format!("q{}", e.seq));
        }
    }
}
