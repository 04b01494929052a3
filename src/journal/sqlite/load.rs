//! A data directory's tables back into a new engine.

use rusqlite::{Connection, OptionalExtension};

use super::super::rows::{Loader, MessageRow};
use super::Engine;

/// Puts the stored state into the engine. Returns (queues, messages).
pub(super) fn load(conn: &Connection, engine: &Engine) -> Result<(usize, usize), String> {
    let err = |e: rusqlite::Error| e.to_string();
    let meta: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = 'engine'", [], |r| {
            r.get(0)
        })
        .optional()
        .map_err(err)?;
    let mut stmt = conn.prepare("SELECT record FROM queues").map_err(err)?;
    let queues = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(err)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    let mut loader = Loader::new(engine, meta.as_deref(), queues)?;

    let mut stmt = conn
        .prepare("SELECT queue_uid, next_slot, next_nonce, last_sequence FROM counters")
        .map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    while let Some(r) = rows.next().map_err(err)? {
        let sequence: String = r.get(3).map_err(err)?;
        loader.counters(
            r.get(0).map_err(err)?,
            r.get(1).map_err(err)?,
            r.get(2).map_err(err)?,
            &sequence,
        );
    }

    let mut stmt = conn
        .prepare("SELECT queue_uid, grp, dedup_id, message_id, sequence_number, expires_ms FROM dedup ORDER BY expires_ms")
        .map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    while let Some(r) = rows.next().map_err(err)? {
        let id: Vec<u8> = r.get(3).map_err(err)?;
        let sequence: String = r.get(4).map_err(err)?;
        loader.dedup(
            r.get(0).map_err(err)?,
            r.get(1).map_err(err)?,
            r.get(2).map_err(err)?,
            &id,
            &sequence,
            r.get(5).map_err(err)?,
        );
    }

    let mut stmt = conn
        .prepare("SELECT queue_uid, attempt_id, slot, nonce, expires_ms FROM attempts ORDER BY queue_uid, attempt_id, pos")
        .map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    while let Some(r) = rows.next().map_err(err)? {
        loader.attempt_row(
            r.get(0).map_err(err)?,
            r.get(1).map_err(err)?,
            r.get(2).map_err(err)?,
            r.get(3).map_err(err)?,
            r.get(4).map_err(err)?,
        );
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
    while let Some(r) = rows.next().map_err(err)? {
        let row = MessageRow {
            queue_uid: r.get(0).map_err(err)?,
            slot: r.get(1).map_err(err)?,
            message_id: r.get(2).map_err(err)?,
            body: r.get(3).map_err(err)?,
            body_md5: r.get(4).map_err(err)?,
            attributes: r.get(5).map_err(err)?,
            trace_header: r.get(6).map_err(err)?,
            sender_id: r.get(7).map_err(err)?,
            sent_ms: r.get(8).map_err(err)?,
            enqueued_ms: r.get(9).map_err(err)?,
            first_receive_ms: r.get(10).map_err(err)?,
            receive_count: r.get(11).map_err(err)?,
            group_id: r.get(12).map_err(err)?,
            dedup_id: r.get(13).map_err(err)?,
            sequence_number: r.get(14).map_err(err)?,
            dead_letter_source_arn: r.get(15).map_err(err)?,
            state: r.get(16).map_err(err)?,
            until_ms: r.get(17).map_err(err)?,
            nonce: r.get(18).map_err(err)?,
            received_ms: r.get(19).map_err(err)?,
            visible_since: r.get(20).map_err(err)?,
            ord: r.get(21).map_err(err)?,
        };
        loader.message(row)?;
    }
    Ok(loader.finish())
}
