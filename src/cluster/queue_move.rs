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

/// The fences of the shard moved from and of the spares, under the lock
/// a new shard's number is picked under.
const FENCES: &str = "SELECT pg_advisory_xact_lock($1), retsu.fence(s, $2, e)
     FROM unnest($3::int[], $4::bigint[]) AS f(s, e)";

/// The node a queue of shard `$4` is asked to go to, its row locked.
const ASKED: &str = "SELECT wanted FROM retsu.placement WHERE kind = 'queue'
     AND account = $1 AND region = $2 AND name = $3 AND shard = $4 AND wanted IS NOT NULL
     FOR UPDATE";

/// A shard of its own for a queue going to node `$1`: the first of the
/// spares `$2` with nothing in it, or a new lease row (fewer than `$3`).
/// Either is moved to the node.
const OWN_SHARD: &str = "WITH spare AS (
        UPDATE retsu.lease SET wanted = $1 WHERE id = (
            SELECT s FROM unnest($2::int[]) AS s
            WHERE NOT EXISTS (SELECT 1 FROM retsu.placement p WHERE p.shard = s)
                AND NOT EXISTS (SELECT 1 FROM retsu.queues q WHERE q.shard = s)
            ORDER BY s LIMIT 1)
        RETURNING id),
     made AS (
        INSERT INTO retsu.lease (id, node, epoch, expires, wanted)
        SELECT max(id) + 1, '', 0, '-infinity', $1 FROM retsu.lease
        WHERE NOT EXISTS (SELECT 1 FROM spare)
        HAVING max(id) < $3
        RETURNING id)
     SELECT id FROM spare UNION ALL SELECT id FROM made";

/// The queue's row (and so its messages), its placement and the
/// hand-overs addressed to it, from shard `$4` to shard `$5`.
const MOVE: &str = "WITH q AS (
        UPDATE retsu.queues SET shard = $5 WHERE shard = $4
            AND record::jsonb->>'account' = $1 AND record::jsonb->>'region' = $2
            AND record::jsonb->>'name' = $3),
     p AS (
        UPDATE retsu.placement SET shard = $5, wanted = NULL
        WHERE kind = 'queue' AND account = $1 AND region = $2 AND name = $3),
     o AS (
        UPDATE retsu.outbox SET target_shard = $5
        WHERE target_shard = $4 AND taken_at IS NULL AND record::jsonb->>'target_arn' = $6)
     SELECT pg_notify('retsu_outbox', $5::int::text)";

/// The spares released (the used ones go to the nodes asked for), the
/// shard count and the moves counted, every node told.
const DONE: &str = "WITH r AS (
        UPDATE retsu.lease SET expires = '-infinity' WHERE id = ANY($1) AND node = $2),
     s AS (
        UPDATE retsu.meta SET value = (SELECT max(id) FROM retsu.lease)::text WHERE key = 'shards'),
     m AS (
        INSERT INTO retsu.meta (key, value) VALUES ('moves', '1')
        ON CONFLICT (key) DO UPDATE SET value = (retsu.meta.value::bigint + 1)::text)
     SELECT pg_notify('retsu_cluster', 'queue moved'), pg_notify('retsu_queues', $3::int::text)";

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
    let (mut fenced, mut epochs): (Vec<i32>, Vec<i64>) = spares.iter().copied().unzip();
    let spare_ids = fenced.clone();
    fenced.push(from);
    epochs.push(epoch);
    tx.query(FENCES, &[&NEW_SHARD, &node, &fenced, &epochs])
        .await
        .map_err(other)?;
    let mut moved = Vec::new();
    for ask in asked {
        let key = &ask.key;
        let (account, region, name) = (&key.account, &key.region, &key.name);
        // Asked still, and of this shard (read under the row's lock).
        let rows = tx
            .query(ASKED, &[account, region, name, &from])
            .await
            .map_err(other)?;
        let Some(to) = rows.first().map(|r| r.get::<_, String>(0)) else {
            continue;
        };
        let rows = tx
            .query(OWN_SHARD, &[&to, &spare_ids, &crate::journal::MAX_SHARDS])
            .await
            .map_err(other)?;
        let Some(shard) = rows.first().map(|r| r.get::<_, i32>(0)) else {
            return Err(Failed::Other(format!(
                "queue {name:?} not moved: the store has {} shards, the most it may have",
                crate::journal::MAX_SHARDS
            )));
        };
        let arn = format!("arn:aws:sqs:{region}:{account}:{name}");
        tx.query(MOVE, &[account, region, name, &from, &shard, &arn])
            .await
            .map_err(other)?;
        moved.push((key.clone(), shard));
    }
    tx.query(DONE, &[&spare_ids, &node, &from])
        .await
        .map_err(other)?;
    tx.commit().await.map_err(other)?;
    Ok(Moved { queues: moved })
}
