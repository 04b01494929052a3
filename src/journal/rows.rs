//! Stored rows back into the engine, the same for both backends: each
//! backend reads its tables into these plain rows, and [`Loader`] turns
//! them into restored queues, messages, deduplication ids and attempts.

use std::collections::HashMap;

use uuid::Uuid;

use super::*;
use crate::api::MessageAttributes;
use crate::engine::persist::Restorer;
use crate::engine::{OptionalFields, SenderId, State};

/// A message's state as two columns: a kind and a deadline.
pub(super) fn state_columns(state: State) -> (i64, i64) {
    match state {
        State::Available => (0, 0),
        State::Delayed(until) => (1, until as i64),
        State::InFlight(until) => (2, until as i64),
    }
}

fn state_of(kind: i64, until: i64) -> State {
    match kind {
        1 => State::Delayed(until as u64),
        2 => State::InFlight(until as u64),
        _ => State::Available,
    }
}

/// A message's attributes as both backends store them: JSON, or none.
pub(super) fn attributes_json(m: &StoredMessage) -> Option<String> {
    (!m.attributes().is_empty()).then(|| serde_json::to_string(m.attributes()).unwrap_or_default())
}

/// One stored message, as both backends' `messages` tables hold it.
pub(super) struct MessageRow {
    pub queue_uid: i64,
    pub slot: i64,
    pub message_id: Vec<u8>,
    pub body: String,
    pub body_md5: Vec<u8>,
    /// The message attributes as JSON, or none.
    pub attributes: Option<String>,
    pub trace_header: Option<String>,
    pub sender_id: String,
    pub sent_ms: i64,
    pub enqueued_ms: i64,
    pub first_receive_ms: Option<i64>,
    pub receive_count: i64,
    pub group_id: Option<String>,
    pub dedup_id: Option<String>,
    pub sequence_number: Option<String>,
    pub dead_letter_source_arn: Option<String>,
    pub state: i64,
    pub until_ms: i64,
    pub nonce: i64,
    pub received_ms: i64,
    pub visible_since: i64,
    pub ord: i64,
}

/// A receive attempt being read: (queue uid, id, expiry, (slot, nonce) of
/// each message).
type AttemptRows = (u64, String, u64, Vec<(u64, u64)>);

/// Puts rows back into a new engine.
pub(super) struct Loader<'a> {
    restorer: Restorer<'a>,
    /// Senders and groups are few: one shared string each, as in memory.
    senders: HashMap<String, SenderId>,
    groups: HashMap<String, Arc<str>>,
    attempt: Option<AttemptRows>,
    messages: usize,
}

impl<'a> Loader<'a> {
    /// Starts from the queue-level state: `meta` is the engine's JSON
    /// without queues (absent in a new store), `queues` each queue's record.
    pub fn new(
        engine: &'a Engine,
        meta: Option<&str>,
        queues: impl IntoIterator<Item = String>,
    ) -> Result<Loader<'a>, String> {
        let mut state: EngineState = meta
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default();
        for record in queues {
            let record =
                serde_json::from_str(&record).map_err(|e| format!("bad queue record: {e}"))?;
            state.queues.push(record);
        }
        Ok(Loader {
            restorer: engine.restorer(state),
            senders: HashMap::new(),
            groups: HashMap::new(),
            attempt: None,
            messages: 0,
        })
    }

    pub fn counters(&mut self, queue_uid: i64, next_slot: i64, next_nonce: i64, sequence: &str) {
        self.restorer.counters(
            queue_uid as u64,
            next_slot as u64,
            next_nonce as u64,
            sequence.parse().unwrap_or(0),
        );
    }

    /// A deduplication id; oldest first (the window is a queue by expiry).
    pub fn dedup(
        &mut self,
        queue_uid: i64,
        group: String,
        dedup_id: String,
        message_id: &[u8],
        sequence: &str,
        expires_ms: i64,
    ) {
        self.restorer.dedup(
            queue_uid as u64,
            DedupRecord {
                group,
                dedup_id,
                message_id: Uuid::from_slice(message_id).unwrap_or_default(),
                sequence_number: sequence.parse().unwrap_or(0),
                expires_ms: expires_ms as u64,
            },
        );
    }

    /// One message of a receive attempt; rows come ordered by queue,
    /// attempt id and position.
    pub fn attempt_row(&mut self, queue_uid: i64, id: String, slot: i64, nonce: i64, expires: i64) {
        let (uid, entry) = (queue_uid as u64, (slot as u64, nonce as u64));
        match &mut self.attempt {
            Some((u, i, _, messages)) if *u == uid && *i == id => messages.push(entry),
            _ => {
                self.flush_attempt();
                self.attempt = Some((uid, id, expires as u64, vec![entry]));
            }
        }
    }

    fn flush_attempt(&mut self) {
        if let Some((u, i, e, messages)) = self.attempt.take() {
            self.restorer.attempt(u, i, e, messages);
        }
    }

    pub fn message(&mut self, r: MessageRow) -> Result<(), String> {
        let attributes: MessageAttributes = match &r.attributes {
            Some(a) => {
                serde_json::from_str(a).map_err(|e| format!("bad message attributes: {e}"))?
            }
            None => MessageAttributes::new(),
        };
        let sender_id = self
            .senders
            .entry(r.sender_id)
            .or_insert_with_key(|s| SenderId::new(s))
            .clone();
        let group_id = r.group_id.map(|g| {
            self.groups
                .entry(g)
                .or_insert_with_key(|g| Arc::from(g.as_str()))
                .clone()
        });
        let mut message = StoredMessage::new(
            Uuid::from_slice(&r.message_id).unwrap_or_default(),
            r.body,
            r.body_md5.try_into().unwrap_or_default(),
            attributes,
            sender_id,
            OptionalFields {
                trace_header: r.trace_header,
                group_id,
                dedup_id: r.dedup_id,
                sequence_number: r.sequence_number.and_then(|s| s.parse().ok()),
                dead_letter_source_arn: r.dead_letter_source_arn.map(Arc::from),
                enqueued_ms: None,
            },
        );
        message.sent_ms = r.sent_ms as u64;
        message.set_enqueued_ms(r.enqueued_ms as u64);
        message.set_first_receive_ms(r.first_receive_ms.map(|v| v as u64));
        message.receive_count = r.receive_count as u32;
        message.restore_state(
            state_of(r.state, r.until_ms),
            r.received_ms as u64,
            r.visible_since as u64,
        );
        message.nonce = r.nonce as u64;
        message.order = r.ord as u64;
        if self
            .restorer
            .message(r.queue_uid as u64, r.slot as u64, message)
        {
            self.messages += 1;
        }
        Ok(())
    }

    /// (queues, messages) restored.
    pub fn finish(mut self) -> (usize, usize) {
        self.flush_attempt();
        (self.restorer.queue_count(), self.messages)
    }
}
