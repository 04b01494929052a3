//! A batch as one SQLite transaction.

use std::collections::HashMap;

use rusqlite::{params, Connection};

use super::super::batch::{engine_meta, AttemptOp, Batch, Row};
use super::super::rows::{attributes_json, state_columns};

/// Writes a batch in one transaction.
///
/// `floors`: the deduplication floors already applied to the `dedup`
/// table; updated once the commit holds.
pub(super) fn commit(
    conn: &mut Connection,
    batch: &Batch,
    floors: &mut HashMap<u64, u128>,
) -> rusqlite::Result<()> {
    let mut new_floors: Vec<(u64, u128)> = Vec::new();
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare_cached(
            "INSERT OR REPLACE INTO messages (queue_uid, slot, message_id, body, body_md5,
                attributes, trace_header, sender_id, sent_ms, enqueued_ms, first_receive_ms,
                receive_count, group_id, dedup_id, sequence_number, dead_letter_source_arn,
                state, until_ms, nonce, received_ms, visible_since, ord)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                ?17, ?18, ?19, ?20, ?21, ?22)",
        )?;
        let mut update = tx.prepare_cached(
            "UPDATE messages SET first_receive_ms = ?3, receive_count = ?4, state = ?5,
                until_ms = ?6, nonce = ?7, received_ms = ?8, visible_since = ?9, ord = ?10
             WHERE queue_uid = ?1 AND slot = ?2",
        )?;
        let mut delete =
            tx.prepare_cached("DELETE FROM messages WHERE queue_uid = ?1 AND slot = ?2")?;
        for (&(queue_uid, slot), row) in &batch.messages {
            let (uid, slot) = (queue_uid as i64, slot as i64);
            let (m, new) = match row {
                Row::Delete => {
                    delete.execute(params![uid, slot])?;
                    continue;
                }
                Row::Put { message, new } => (message, *new),
            };
            let (state, until) = state_columns(m.state());
            let first = m.first_receive_ms().map(|v| v as i64);
            // Only the state changed: the body stays as written.
            let changed = if new {
                0
            } else {
                update.execute(params![
                    uid,
                    slot,
                    first,
                    m.receive_count,
                    state,
                    until,
                    m.nonce as i64,
                    m.received_ms() as i64,
                    m.visible_since() as i64,
                    m.order as i64,
                ])?
            };
            if changed == 0 {
                insert.execute(params![
                    uid,
                    slot,
                    m.message_id.as_bytes().as_slice(),
                    &*m.body,
                    m.body_md5.as_slice(),
                    attributes_json(m),
                    m.trace_header(),
                    &*m.sender_id,
                    m.sent_ms as i64,
                    m.enqueued_ms() as i64,
                    first,
                    m.receive_count,
                    m.group_id().map(|g| &**g),
                    m.dedup_id(),
                    m.sequence_number().map(|s| s.to_string()),
                    m.dead_letter_source_arn().map(|a| &**a),
                    state,
                    until,
                    m.nonce as i64,
                    m.received_ms() as i64,
                    m.visible_since() as i64,
                    m.order as i64,
                ])?;
            }
        }

        let mut dedup = tx.prepare_cached(
            "INSERT OR REPLACE INTO dedup (queue_uid, grp, dedup_id, message_id, sequence_number, expires_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for (&(queue_uid, _, _), record) in &batch.dedup {
            dedup.execute(params![
                queue_uid as i64,
                record.group,
                record.dedup_id,
                record.message_id.as_bytes().as_slice(),
                record.sequence_number.to_string(),
                record.expires_ms as i64,
            ])?;
        }

        for op in &batch.attempts {
            match op {
                AttemptOp::Set {
                    queue_uid,
                    id,
                    expires_ms,
                    messages,
                } => {
                    tx.prepare_cached(
                        "DELETE FROM attempts WHERE queue_uid = ?1 AND attempt_id = ?2",
                    )?
                    .execute(params![*queue_uid as i64, &**id])?;
                    let mut insert = tx.prepare_cached(
                        "INSERT INTO attempts (queue_uid, attempt_id, pos, slot, nonce, expires_ms)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    )?;
                    for (pos, (slot, nonce)) in messages.iter().enumerate() {
                        insert.execute(params![
                            *queue_uid as i64,
                            &**id,
                            pos as i64,
                            *slot as i64,
                            *nonce as i64,
                            *expires_ms as i64,
                        ])?;
                    }
                }
                AttemptOp::Forget { queue_uid, slot } => {
                    tx.prepare_cached(
                        "DELETE FROM attempts WHERE queue_uid = ?1 AND attempt_id IN
                            (SELECT attempt_id FROM attempts WHERE queue_uid = ?1 AND slot = ?2)",
                    )?
                    .execute(params![*queue_uid as i64, *slot as i64])?;
                }
            }
        }

        if let Some(state) = &batch.queues {
            tx.execute("DELETE FROM queues", [])?;
            for q in &state.queues {
                let record = serde_json::to_string(q).unwrap_or_default();
                tx.execute(
                    "INSERT INTO queues (uid, record) VALUES (?1, ?2)",
                    params![q.uid as i64, record],
                )?;
                // An admin reset cleared the queue's window: the ids sent
                // before it (sequence numbers up to the floor) deduplicate
                // no more. Done once per floor.
                let floor: u128 = q.dedup_floor.parse().unwrap_or(0);
                if floor > 0 && floors.get(&q.uid) != Some(&floor) {
                    let mut stmt = tx.prepare_cached(
                        "SELECT grp, dedup_id, sequence_number FROM dedup WHERE queue_uid = ?1",
                    )?;
                    let stale: Vec<(String, String)> = stmt
                        .query_map(params![q.uid as i64], |r| {
                            Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?))
                        })?
                        .filter_map(|r| r.ok())
                        .filter(|(_, _, sequence)| sequence.parse::<u128>().unwrap_or(0) <= floor)
                        .map(|(g, d, _)| (g, d))
                        .collect();
                    let mut delete = tx.prepare_cached(
                        "DELETE FROM dedup WHERE queue_uid = ?1 AND grp = ?2 AND dedup_id = ?3",
                    )?;
                    for (g, d) in stale {
                        delete.execute(params![q.uid as i64, g, d])?;
                    }
                    new_floors.push((q.uid, floor));
                }
            }
            tx.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('engine', ?1)",
                params![engine_meta(state)],
            )?;
        }

        let mut raise = tx.prepare_cached(
            "INSERT INTO counters (queue_uid, next_slot, next_nonce, last_sequence)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (queue_uid) DO UPDATE SET
                next_slot = max(next_slot, excluded.next_slot),
                next_nonce = max(next_nonce, excluded.next_nonce),
                last_sequence = CASE WHEN length(excluded.last_sequence) > length(last_sequence)
                    OR (length(excluded.last_sequence) = length(last_sequence)
                        AND excluded.last_sequence > last_sequence)
                    THEN excluded.last_sequence ELSE last_sequence END",
        )?;
        for (uid, c) in &batch.counters {
            raise.execute(params![
                *uid as i64,
                c.next_slot as i64,
                c.next_nonce as i64,
                c.last_sequence.to_string()
            ])?;
        }

        if batch.queues.is_some() {
            // What belonged to deleted queues (after the counters: a
            // deleted queue's are dropped too).
            for table in ["messages", "dedup", "counters", "attempts"] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE queue_uid NOT IN (SELECT uid FROM queues)"),
                    [],
                )?;
            }
        }
        for (key, value) in &batch.meta {
            tx.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                params![key, value],
            )?;
        }
        if let Some(now) = batch.prune {
            // Dedup ids past their window (the engine's clock): the
            // sequence counter lives in `counters`.
            tx.execute(
                "DELETE FROM dedup WHERE expires_ms < ?1",
                params![now as i64],
            )?;
            tx.execute(
                "DELETE FROM attempts WHERE expires_ms < ?1",
                params![now as i64],
            )?;
        }
    }
    tx.commit()?;
    floors.extend(new_floors);
    Ok(())
}
