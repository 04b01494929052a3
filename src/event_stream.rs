//! The live event stream's fan-out: each reader of
//! `GET /_retsu/events/stream` (admin/stream.rs) follows the engine's
//! events, and the Lambda invocations, through a bounded buffer of its own.
//!
//! Why bounded and cut off rather than waited for: publishing runs inside
//! the engine's event delivery, which every request passes through, so a
//! reader that stops reading must never slow a request down. When a
//! reader's buffer is full it is dropped from the fan-out; its stream then
//! ends with a final `missed` event that says where to resume from.
//!
//! The fan-out subscribes to the engine only when the first reader comes,
//! so a server nobody streams from pays nothing for it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::engine::events::{Event, Subscriber, TopicEvent};
use crate::history::EventQuery;
use crate::lambda::observe::InvocationRecord;

/// Events a reader may fall behind by before it is cut off.
pub const READER_BUFFER: usize = 4096;

/// The readers following the event stream.
#[derive(Default)]
pub struct EventStream {
    readers: Mutex<Vec<Reader>>,
    /// How many readers there are, read without the lock on every publish.
    count: AtomicUsize,
}

struct Reader {
    filter: EventQuery,
    tx: mpsc::Sender<Streamed>,
    cut: Arc<AtomicBool>,
}

/// What a reader follows: messages' events and SNS fan-out steps, in the
/// server-wide order they share.
#[derive(Debug, Clone)]
pub enum Streamed {
    Message(Event),
    Topic(TopicEvent),
    /// A Lambda invocation: not numbered, so outside that order.
    Invocation(Arc<InvocationRecord>),
}

impl Streamed {
    pub fn seq(&self) -> u64 {
        match self {
            Streamed::Message(e) => e.seq,
            Streamed::Topic(e) => e.seq,
            Streamed::Invocation(_) => 0,
        }
    }
}

/// One reader's end: the events that pass its filter, in order, until it
/// is cut off (`cut` then reads true once `events` is drained and closed).
pub struct Follower {
    pub events: mpsc::Receiver<Streamed>,
    pub cut: Arc<AtomicBool>,
}

impl EventStream {
    /// A new reader of the events that `filter` passes (its `since` and
    /// `limit` are not used here).
    pub fn follow(&self, filter: EventQuery) -> Follower {
        let (tx, events) = mpsc::channel(READER_BUFFER);
        let cut = Arc::new(AtomicBool::new(false));
        let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        readers.push(Reader {
            filter,
            tx,
            cut: cut.clone(),
        });
        self.count.store(readers.len(), Ordering::Release);
        Follower { events, cut }
    }

    /// Readers currently following.
    pub fn readers(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// A Lambda invocation, to the readers whose filter passes it.
    pub fn invocation(&self, record: &Arc<InvocationRecord>) {
        if self.count.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        readers.retain(|reader| {
            if !reader.filter.matches_invocation(&record.from) {
                return true;
            }
            reader.offer(std::iter::once(Streamed::Invocation(record.clone())))
        });
        self.count.store(readers.len(), Ordering::Release);
    }
}

/// An event as a reader keeps it: without the journal's snapshot.
fn light(e: &Event) -> Event {
    Event {
        seq: e.seq,
        at_ms: e.at_ms,
        queue: e.queue.clone(),
        message_id: e.message_id,
        kind: e.kind,
        receive_count: e.receive_count,
        visible_at_ms: e.visible_at_ms,
        receipt: e.receipt,
        note: e.note.clone(),
        stored: None,
    }
}

impl Subscriber for EventStream {
    fn publish(&self, events: &[Event]) {
        if self.count.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        readers.retain(|reader| {
            let passing = events.iter().filter(|e| reader.filter.matches(e));
            reader.offer(passing.map(|e| Streamed::Message(light(e))))
        });
        self.count.store(readers.len(), Ordering::Release);
    }

    fn topic_events(&self, events: &[TopicEvent]) {
        if self.count.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        readers.retain(|reader| {
            let passing = events.iter().filter(|e| reader.filter.matches_topic(e));
            reader.offer(passing.cloned().map(Streamed::Topic))
        });
        self.count.store(readers.len(), Ordering::Release);
    }
}

impl Reader {
    /// Queues events for this reader; `false` when it is to be dropped
    /// (its buffer is full: cut off; or it went away).
    fn offer(&self, items: impl Iterator<Item = Streamed>) -> bool {
        if self.tx.is_closed() {
            return false;
        }
        for item in items {
            match self.tx.try_send(item) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => {
                    self.cut.store(true, Ordering::Release);
                    return false;
                }
                // The reader went away (its connection closed).
                Err(mpsc::error::TrySendError::Closed(_)) => return false,
            }
        }
        true
    }
}
