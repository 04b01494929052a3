//! The `retsu` schema's tables back into a new engine.

use tokio_postgres::Client;

use super::super::rows::{Loader, MessageRow};
use super::Engine;

/// Puts one shard's stored state into the engine. Returns (queues, messages).
pub(super) async fn load(
    client: &mut Client,
    engine: &Engine,
    shard: i32,
) -> Result<(usize, usize), String> {
    let err = |e: tokio_postgres::Error| super::describe(&e);
    // One snapshot for every table.
    let tx = client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(err)?;
    let meta: Option<String> = tx
        .query_opt(
            "SELECT value FROM retsu.shard_meta WHERE shard = $1 AND key = 'engine'",
            &[&shard],
        )
        .await
        .map_err(err)?
        .map(|r| r.get(0));
    let queues: Vec<String> = tx
        .query(
            "SELECT record FROM retsu.queues WHERE shard = $1 ORDER BY uid",
            &[&shard],
        )
        .await
        .map_err(err)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut loader = Loader::new(engine, meta.as_deref(), queues)?;

    for r in tx
        .query(
            "SELECT queue_uid, next_slot, next_nonce, last_sequence::text FROM retsu.counters
             WHERE queue_uid IN (SELECT uid FROM retsu.queues WHERE shard = $1)",
            &[&shard],
        )
        .await
        .map_err(err)?
    {
        loader.counters(r.get(0), r.get(1), r.get(2), r.get(3));
    }

    for r in tx
        .query(
            "SELECT queue_uid, grp, dedup_id, message_id, sequence_number::text, expires_ms
             FROM retsu.dedup WHERE queue_uid IN (SELECT uid FROM retsu.queues WHERE shard = $1)
             ORDER BY expires_ms",
            &[&shard],
        )
        .await
        .map_err(err)?
    {
        loader.dedup(r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5));
    }

    for r in tx
        .query(
            "SELECT queue_uid, attempt_id, slot, nonce, expires_ms FROM retsu.attempts
             WHERE queue_uid IN (SELECT uid FROM retsu.queues WHERE shard = $1)
             ORDER BY queue_uid, attempt_id, pos",
            &[&shard],
        )
        .await
        .map_err(err)?
    {
        loader.attempt_row(r.get(0), r.get(1), r.get(2), r.get(3), r.get(4));
    }

    // Streamed in portions: a large store is not held twice in memory.
    let portal = tx
        .bind(
            "SELECT queue_uid, slot, message_id, body, body_md5, attributes, trace_header,
                    sender_id, sent_ms, enqueued_ms, first_receive_ms, receive_count,
                    group_id, dedup_id, sequence_number::text, dead_letter_source_arn, state,
                    until_ms, nonce, received_ms, visible_since, ord
             FROM retsu.messages
             WHERE queue_uid IN (SELECT uid FROM retsu.queues WHERE shard = $1)
             ORDER BY queue_uid, slot",
            &[&shard],
        )
        .await
        .map_err(err)?;
    loop {
        let rows = tx.query_portal(&portal, 10_000).await.map_err(err)?;
        if rows.is_empty() {
            break;
        }
        for r in rows {
            loader.message(MessageRow {
                queue_uid: r.get(0),
                slot: r.get(1),
                message_id: r.get(2),
                body: r.get(3),
                body_md5: r.get(4),
                attributes: r.get(5),
                trace_header: r.get(6),
                sender_id: r.get(7),
                sent_ms: r.get(8),
                enqueued_ms: r.get(9),
                first_receive_ms: r.get(10),
                receive_count: r.get(11),
                group_id: r.get(12),
                dedup_id: r.get(13),
                sequence_number: r.get(14),
                dead_letter_source_arn: r.get(15),
                state: r.get(16),
                until_ms: r.get(17),
                nonce: r.get(18),
                received_ms: r.get(19),
                visible_since: r.get(20),
                ord: r.get(21),
            })?;
        }
    }
    tx.commit().await.map_err(err)?;
    Ok(loader.finish())
}
