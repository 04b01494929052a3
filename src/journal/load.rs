//! Loading a data directory into a new engine at start.

use super::schema::state_of;
use super::*;
use crate::engine::SenderId;

impl Journal {
    /// Puts the stored state into the engine. Returns (queues, messages).
    pub(super) fn load(
        conn: &Connection,
        engine: &Engine,
        dir: &Path,
    ) -> Result<(usize, usize), String> {
        let err = |e| sql_err(dir, e);
        let mut state: EngineState = conn
            .query_row("SELECT value FROM meta WHERE key = 'engine'", [], |r| {
                r.get::<_, String>(0)
            })
            .optional()
            .map_err(err)?
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        let mut stmt = conn.prepare("SELECT record FROM queues").map_err(err)?;
        let records = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(err)?;
        for record in records {
            let record = record.map_err(err)?;
            let record = serde_json::from_str(&record)
                .map_err(|e| format!("data directory {}: bad queue record: {e}", dir.display()))?;
            state.queues.push(record);
        }
        let mut restorer = engine.restorer(state);

        let mut stmt = conn
            .prepare("SELECT queue_uid, next_slot, next_nonce, last_sequence FROM counters")
            .map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let sequence: String = r.get(3).map_err(err)?;
            restorer.counters(
                r.get::<_, i64>(0).map_err(err)? as u64,
                r.get::<_, i64>(1).map_err(err)? as u64,
                r.get::<_, i64>(2).map_err(err)? as u64,
                sequence.parse().unwrap_or(0),
            );
        }

        // Oldest first: the engine's window is a queue by expiry.
        let mut stmt = conn
            .prepare("SELECT queue_uid, grp, dedup_id, message_id, sequence_number, expires_ms FROM dedup ORDER BY expires_ms")
            .map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let id: Vec<u8> = r.get(3).map_err(err)?;
            let sequence: String = r.get(4).map_err(err)?;
            restorer.dedup(
                r.get::<_, i64>(0).map_err(err)? as u64,
                DedupRecord {
                    group: r.get(1).map_err(err)?,
                    dedup_id: r.get(2).map_err(err)?,
                    message_id: Uuid::from_slice(&id).unwrap_or_default(),
                    sequence_number: sequence.parse().unwrap_or(0),
                    expires_ms: r.get::<_, i64>(5).map_err(err)? as u64,
                },
            );
        }

        // FIFO receive attempts: one row per message returned, in order.
        let mut stmt = conn
            .prepare("SELECT queue_uid, attempt_id, slot, nonce, expires_ms FROM attempts ORDER BY queue_uid, attempt_id, pos")
            .map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        // (queue uid, attempt id, expiry, (slot, nonce) of each message).
        type Loading = (u64, String, u64, Vec<(u64, u64)>);
        let mut current: Option<Loading> = None;
        while let Some(r) = rows.next().map_err(err)? {
            let uid = r.get::<_, i64>(0).map_err(err)? as u64;
            let id: String = r.get(1).map_err(err)?;
            let entry = (
                r.get::<_, i64>(2).map_err(err)? as u64,
                r.get::<_, i64>(3).map_err(err)? as u64,
            );
            let expires = r.get::<_, i64>(4).map_err(err)? as u64;
            match &mut current {
                Some((u, i, _, messages)) if *u == uid && *i == id => messages.push(entry),
                _ => {
                    if let Some((u, i, e, messages)) = current.take() {
                        restorer.attempt(u, i, e, messages);
                    }
                    current = Some((uid, id, expires, vec![entry]));
                }
            }
        }
        if let Some((u, i, e, messages)) = current {
            restorer.attempt(u, i, e, messages);
        }

        let mut stmt = conn
            .prepare(
                "SELECT queue_uid, slot, message_id, body, body_md5, attributes, trace_header,
                        sender_id, sent_ms, enqueued_ms, first_receive_ms, receive_count,
                        group_id, dedup_id, sequence_number, dead_letter_source_arn, state,
                        until_ms, nonce, received_ms, visible_since, ord
                 FROM messages",
            )
            .map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        let mut count = 0;
        // Senders are few: share one string per sender, as in memory.
        let mut senders: HashMap<String, SenderId> = HashMap::new();
        let mut groups: HashMap<String, Arc<str>> = HashMap::new();
        while let Some(r) = rows.next().map_err(err)? {
            let id: Vec<u8> = r.get(2).map_err(err)?;
            let md5: Vec<u8> = r.get(4).map_err(err)?;
            let attributes: Option<String> = r.get(5).map_err(err)?;
            let attributes: MessageAttributes = match attributes {
                Some(a) => serde_json::from_str(&a).map_err(|e| {
                    format!(
                        "data directory {}: bad message attributes: {e}",
                        dir.display()
                    )
                })?,
                None => MessageAttributes::new(),
            };
            let sender: String = r.get(7).map_err(err)?;
            let sender_id = senders
                .entry(sender)
                .or_insert_with_key(|s| SenderId::new(s))
                .clone();
            let group: Option<String> = r.get(12).map_err(err)?;
            let group_id = group.map(|g| {
                groups
                    .entry(g)
                    .or_insert_with_key(|g| Arc::from(g.as_str()))
                    .clone()
            });
            let sequence: Option<String> = r.get(14).map_err(err)?;
            let source: Option<String> = r.get(15).map_err(err)?;
            let body: String = r.get(3).map_err(err)?;
            let sent_ms = r.get::<_, i64>(8).map_err(err)? as u64;
            let mut message = StoredMessage::new(
                Uuid::from_slice(&id).unwrap_or_default(),
                body,
                md5.try_into().unwrap_or_default(),
                attributes,
                sender_id,
                OptionalFields {
                    trace_header: r.get(6).map_err(err)?,
                    group_id,
                    dedup_id: r.get(13).map_err(err)?,
                    sequence_number: sequence.and_then(|s| s.parse().ok()),
                    dead_letter_source_arn: source.map(Arc::from),
                    enqueued_ms: None,
                },
            );
            message.sent_ms = sent_ms;
            message.set_enqueued_ms(r.get::<_, i64>(9).map_err(err)? as u64);
            message
                .set_first_receive_ms(r.get::<_, Option<i64>>(10).map_err(err)?.map(|v| v as u64));
            message.receive_count = r.get::<_, i64>(11).map_err(err)? as u32;
            message.restore_state(
                state_of(r.get(16).map_err(err)?, r.get(17).map_err(err)?),
                r.get::<_, i64>(19).map_err(err)? as u64,
                r.get::<_, i64>(20).map_err(err)? as u64,
            );
            message.nonce = r.get::<_, i64>(18).map_err(err)? as u64;
            message.order = r.get::<_, i64>(21).map_err(err)? as u64;
            let (uid, slot) = (
                r.get::<_, i64>(0).map_err(err)? as u64,
                r.get::<_, i64>(1).map_err(err)? as u64,
            );
            if restorer.message(uid, slot, message) {
                count += 1;
            }
        }
        Ok((restorer.queue_count(), count))
    }
}
