//! Moving one queue to a node, alone (`retsu cluster move`).
//!
//! A queue's rows name their shard only through `retsu.queues.shard` (its
//! messages, counters, deduplication window and receive attempts are keyed
//! by the queue), so a queue changes shard by one update of that row and
//! of its placement. The holder of its shard does it, with the shard's
//! engine stopped and committed, in one transaction fenced on the shard's
//! epoch: the queue goes into a shard of its own (one this node holds with
//! nothing in it, or a new lease row), released at once and moved to the
//! node asked for, which takes it and loads it as after a failover. The
//! old shard is loaded again without it. Hand-overs already addressed to
//! the queue's old shard are readdressed in the same transaction; one
//! addressed there later, from an older read, is readdressed by the old
//! shard's carrier (`outbox.rs`).
//!
//! A shard of its own rather than a running engine of the target node:
//! engines load whole shards only, so nothing new loads a queue into an
//! engine that is serving. What a shard's engine keeps for all its queues
//! (message move tasks) stays with the shard, so a queue whose messages a
//! move task is still moving waits for the task to end.
//!
//! Every move counts in `meta.moves`. Nodes keep where each name is; a
//! node that sees the count change reads the names again, and for a lease
//! after it, checks that a request passed on for a shard it holds is for
//! a name still there (`front.rs`), so a request routed on an older read
//! is routed again, not answered "no such queue".

use tokio_postgres::Client;

use super::membership::AskedMove;
use super::route::Key;

/// Taken while a move picks a new shard's number.
const NEW_SHARD: i64 = 0x72_6574_736d;

/// What one pass moved.
pub struct Moved {
    /// Each queue moved and its new shard.
    pub queues: Vec<(Key, i32)>,
}

/// Why a move did not happen.
pub enum Failed {
    /// The shard's lease is another node's now: this node must stop.
    Fenced(String),
    /// Anything else (the database unreachable, a limit): nothing changed;
    /// the move stays asked and is tried again.
    Other(String),
}

/// Moves `asked` (queues of shard `from`, held at `epoch` by `node`, its
/// engine stopped) each into a shard of its own: one of `spares` (empty
/// shards this node holds, engines stopped) while there are any, then new
/// ones. Every spare is released in the same transaction, moved to the
/// node asked for when it was used.
pub async fn carry_out(
    client: &mut Client,
    node: &str,
    (from, epoch): (i32, i64),
    spares: &[(i32, i64)],
    asked: &[AskedMove],
) -> Result<Moved, Failed> {
    let other = |e: tokio_postgres::Error| match e.code().map(|c| c.code()) {
        Some("RT001") => Failed::Fenced(crate::journal::describe_postgres_error(&e)),
        _ => Failed::Other(crate::journal::describe_postgres_error(&e)),
    };
    let tx = client.transaction().await.map_err(other)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&NEW_SHARD])
        .await
        .map_err(other)?;
    for (shard, held_at) in std::iter::once(&(from, epoch)).chain(spares) {
        tx.execute("SELECT retsu.fence($1, $2, $3)", &[shard, &node, held_at])
            .await
            .map_err(other)?;
    }
    let spare_ids: Vec<i32> = spares.iter().map(|s| s.0).collect();
    let mut spares = spare_ids.iter().copied();
    let mut moved = Vec::new();
    for ask in asked {
        let key = &ask.key;
        // Asked still, and of this shard (read under the row's lock).
        let wanted: Option<String> = tx
            .query_opt(
                "SELECT wanted FROM retsu.placement WHERE kind = 'queue'
                    AND account = $1 AND region = $2 AND name = $3 AND shard = $4 FOR UPDATE",
                &[&key.account, &key.region, &key.name, &from],
            )
            .await
            .map_err(other)?
            .and_then(|r| r.get(0));
        let Some(to) = wanted else { continue };
        let spare = loop {
            let Some(spare) = spares.next() else {
                break None;
            };
            let empty: bool = tx
                .query_one(
                    "SELECT NOT EXISTS (SELECT 1 FROM retsu.placement WHERE shard = $1)
                        AND NOT EXISTS (SELECT 1 FROM retsu.queues WHERE shard = $1)",
                    &[&spare],
                )
                .await
                .map_err(other)?
                .get(0);
            if empty {
                break Some(spare);
            }
        };
        let shard: i32 = match spare {
            Some(spare) => {
                tx.execute(
                    "UPDATE retsu.lease SET wanted = $2 WHERE id = $1",
                    &[&spare, &to],
                )
                .await
                .map_err(other)?;
                spare
            }
            None => {
                let made = tx
                    .query_opt(
                        "INSERT INTO retsu.lease (id, node, epoch, expires, wanted)
                         SELECT max(id) + 1, '', 0, '-infinity', $1 FROM retsu.lease
                         HAVING max(id) < $2 RETURNING id",
                        &[&to, &crate::journal::MAX_SHARDS],
                    )
                    .await
                    .map_err(other)?;
                match made {
                    Some(row) => row.get(0),
                    None => {
                        return Err(Failed::Other(format!(
                            "queue {:?} not moved: the store has {} shards, the most it may have",
                            key.name,
                            crate::journal::MAX_SHARDS
                        )))
                    }
                }
            }
        };
        let arn = format!("arn:aws:sqs:{}:{}:{}", key.region, key.account, key.name);
        tx.execute(
            "UPDATE retsu.queues SET shard = $5 WHERE shard = $4
                AND record::jsonb->>'account' = $1 AND record::jsonb->>'region' = $2
                AND record::jsonb->>'name' = $3",
            &[&key.account, &key.region, &key.name, &from, &shard],
        )
        .await
        .map_err(other)?;
        tx.execute(
            "UPDATE retsu.placement SET shard = $4, wanted = NULL
             WHERE kind = 'queue' AND account = $1 AND region = $2 AND name = $3",
            &[&key.account, &key.region, &key.name, &shard],
        )
        .await
        .map_err(other)?;
        tx.execute(
            "UPDATE retsu.outbox SET target_shard = $3
             WHERE target_shard = $2 AND taken_at IS NULL AND record::jsonb->>'target_arn' = $1",
            &[&arn, &from, &shard],
        )
        .await
        .map_err(other)?;
        tx.execute("SELECT pg_notify('retsu_outbox', $1::int::text)", &[&shard])
            .await
            .map_err(other)?;
        moved.push((key.clone(), shard));
    }
    // Every spare goes back now: used ones to the node asked for, the
    // others to whoever takes them.
    tx.execute(
        "UPDATE retsu.lease SET expires = '-infinity' WHERE id = ANY($1) AND node = $2",
        &[&spare_ids, &node],
    )
    .await
    .map_err(other)?;
    tx.execute(
        "UPDATE retsu.meta SET value = (SELECT max(id) FROM retsu.lease)::text WHERE key = 'shards'",
        &[],
    )
    .await
    .map_err(other)?;
    tx.execute(
        "INSERT INTO retsu.meta (key, value) VALUES ('moves', '1')
         ON CONFLICT (key) DO UPDATE SET value = (retsu.meta.value::bigint + 1)::text",
        &[],
    )
    .await
    .map_err(other)?;
    tx.execute(
        "SELECT pg_notify('retsu_cluster', 'queue moved'), pg_notify('retsu_queues', $1::int::text)",
        &[&from],
    )
    .await
    .map_err(other)?;
    tx.commit().await.map_err(other)?;
    Ok(Moved { queues: moved })
}
