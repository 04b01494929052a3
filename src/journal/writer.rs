//! The writer thread: whatever is pending becomes one transaction.

use super::schema::state_columns;
use super::*;

/// The writer thread: commit whatever is pending, as one transaction.
///
/// A message moved to another queue (dead-letter, move task, admin
/// restore) leaves its queue under one lock and arrives under the other's;
/// the engine publishes both inside one event group, which reaches the
/// journal as one push, so they are always in the same commit: after a
/// crash the message is in exactly one of the two queues.
pub(super) fn writer(mut conn: Connection, inner: Arc<Inner>, clock: Arc<dyn Clock>) {
    let mut retry: Vec<Op> = Vec::new();
    let mut last_prune = Instant::now();
    let mut floors: HashMap<u64, u128> = HashMap::new();
    loop {
        let (ops, ticket, closing) = {
            let mut pending = inner.pending.lock().unwrap_or_else(|p| p.into_inner());
            while pending.ops.is_empty() && retry.is_empty() && !pending.closing {
                // Woken by the next publication (relaxed mode too: it
                // starts the interval), not by those after it.
                pending.wake_at = pending.ticket + 1;
                pending = inner.wake.wait(pending).unwrap_or_else(|p| p.into_inner());
            }
            pending.wake_at = 0;
            if inner.relaxed && !pending.closing {
                // Gather for an interval: one commit per interval.
                let deadline = Instant::now() + RELAXED_INTERVAL;
                while !pending.closing {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    pending = inner
                        .wake
                        .wait_timeout(pending, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
            (
                std::mem::take(&mut pending.ops),
                pending.ticket,
                pending.closing,
            )
        };
        let mut batch = std::mem::take(&mut retry);
        batch.extend(ops);
        let prune = last_prune.elapsed() > Duration::from_secs(10);
        match commit(
            &mut conn,
            &batch,
            prune.then(|| clock.now_ms()),
            &mut floors,
        ) {
            Ok(()) => {
                if prune {
                    last_prune = Instant::now();
                }
                inner.failing.store(false, Ordering::Release);
                inner.status.send_modify(|s| s.durable = ticket);
            }
            Err(e) => {
                tracing::error!("journal: commit failed, will retry: {e}");
                inner.failing.store(true, Ordering::Release);
                inner.status.send_modify(|s| s.failed = ticket);
                retry = batch;
                if closing {
                    return;
                }
                std::thread::sleep(RETRY);
                continue;
            }
        }
        if closing {
            let pending = inner.pending.lock().unwrap_or_else(|p| p.into_inner());
            if pending.ops.is_empty() {
                return;
            }
        }
    }
}

/// Writes a batch in one transaction.
///
/// `floors`: the deduplication floors (see `QueueRecord::dedup_floor`)
/// already applied to the `dedup` table; updated once the commit holds.
fn commit(
    conn: &mut Connection,
    ops: &[Op],
    prune: Option<u64>,
    floors: &mut HashMap<u64, u128>,
) -> rusqlite::Result<()> {
    if ops.is_empty() && prune.is_none() {
        return Ok(());
    }
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
        let mut dedup = tx.prepare_cached(
            "INSERT OR REPLACE INTO dedup (queue_uid, grp, dedup_id, message_id, sequence_number, expires_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        // Per queue: (next slot, next nonce, last sequence number).
        let mut counters: HashMap<u64, (u64, u64, u128)> = HashMap::new();
        for op in ops {
            match op {
                Op::Put {
                    queue_uid,
                    slot,
                    message: m,
                    new,
                } => {
                    let c = counters.entry(*queue_uid).or_default();
                    c.0 = c.0.max(slot + 1);
                    c.1 = c.1.max(m.nonce + 1);
                    c.2 = c.2.max(m.sequence_number().unwrap_or(0));
                    let (state, until) = state_columns(m.state());
                    let first = m.first_receive_ms().map(|v| v as i64);
                    let changed = if *new {
                        0
                    } else {
                        update.execute(params![
                            *queue_uid as i64,
                            *slot as i64,
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
                        let attributes = (!m.attributes().is_empty())
                            .then(|| serde_json::to_string(m.attributes()).unwrap_or_default());
                        insert.execute(params![
                            *queue_uid as i64,
                            *slot as i64,
                            m.message_id.as_bytes().as_slice(),
                            &*m.body,
                            m.body_md5.as_slice(),
                            attributes,
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
                Op::Delete {
                    queue_uid, slot, ..
                } => {
                    let c = counters.entry(*queue_uid).or_default();
                    c.0 = c.0.max(slot + 1);
                    delete.execute(params![*queue_uid as i64, *slot as i64])?;
                }
                Op::Attempt {
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
                Op::ForgetAttempts { queue_uid, slot } => {
                    tx.prepare_cached(
                        "DELETE FROM attempts WHERE queue_uid = ?1 AND attempt_id IN
                            (SELECT attempt_id FROM attempts WHERE queue_uid = ?1 AND slot = ?2)",
                    )?
                    .execute(params![*queue_uid as i64, *slot as i64])?;
                }
                Op::Dedup { queue_uid, record } => {
                    dedup.execute(params![
                        *queue_uid as i64,
                        record.group,
                        record.dedup_id,
                        record.message_id.as_bytes().as_slice(),
                        record.sequence_number.to_string(),
                        record.expires_ms as i64,
                    ])?;
                }
                Op::Queues(state) => {
                    tx.execute("DELETE FROM queues", [])?;
                    for q in &state.queues {
                        let record = serde_json::to_string(q).unwrap_or_default();
                        tx.execute(
                            "INSERT INTO queues (uid, record) VALUES (?1, ?2)",
                            params![q.uid as i64, record],
                        )?;
                        let c = counters.entry(q.uid).or_default();
                        c.2 = c.2.max(q.last_sequence.parse().unwrap_or(0));
                        // An admin reset cleared the queue's window: the
                        // ids sent before it (sequence numbers up to the
                        // floor) deduplicate no more. Done once per floor.
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
                                .filter(|(_, _, sequence)| {
                                    sequence.parse::<u128>().unwrap_or(0) <= floor
                                })
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
                    let engine = EngineState {
                        queues: Vec::new(),
                        deleted_at: state.deleted_at.clone(),
                        move_tasks: state.move_tasks.clone(),
                        services: state.services.clone(),
                    };
                    tx.execute(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES ('engine', ?1)",
                        params![serde_json::to_string(&engine).unwrap_or_default()],
                    )?;
                    // What belonged to deleted queues.
                    for table in ["messages", "dedup", "counters", "attempts"] {
                        tx.execute(
                            &format!("DELETE FROM {table} WHERE queue_uid NOT IN (SELECT uid FROM queues)"),
                            [],
                        )?;
                    }
                }
            }
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
        for (uid, (slot, nonce, sequence)) in counters {
            raise.execute(params![
                uid as i64,
                slot as i64,
                nonce as i64,
                sequence.to_string()
            ])?;
        }
        if let Some(now) = prune {
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
