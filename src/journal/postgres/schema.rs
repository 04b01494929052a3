//! The tables in the schema `retsu`, and the format check.
//!
//! The same rows as the SQLite backend. FIFO sequence numbers (up to 39
//! digits) are `numeric`, so PostgreSQL compares them; ids and MD5s are
//! `bytea`. A message's row changes state with every receive; pages kept
//! 30 % free let those updates stay on the page (HOT), without a new
//! index entry each.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use tokio_postgres::Client;

use super::FORMAT;

const SCHEMA: &str = "
CREATE SCHEMA retsu;
CREATE TABLE retsu.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE retsu.queues (uid bigint PRIMARY KEY, record text NOT NULL);
CREATE TABLE retsu.counters (
    queue_uid bigint PRIMARY KEY,
    next_slot bigint NOT NULL,
    next_nonce bigint NOT NULL,
    last_sequence numeric NOT NULL
);
CREATE TABLE retsu.dedup (
    queue_uid bigint NOT NULL,
    grp text NOT NULL,
    dedup_id text NOT NULL,
    message_id bytea NOT NULL,
    sequence_number numeric NOT NULL,
    expires_ms bigint NOT NULL,
    PRIMARY KEY (queue_uid, grp, dedup_id)
);
CREATE INDEX dedup_expiry ON retsu.dedup (expires_ms);
CREATE TABLE retsu.messages (
    queue_uid bigint NOT NULL,
    slot bigint NOT NULL,
    message_id bytea NOT NULL,
    body text NOT NULL,
    body_md5 bytea NOT NULL,
    attributes text,
    trace_header text,
    sender_id text NOT NULL,
    sent_ms bigint NOT NULL,
    enqueued_ms bigint NOT NULL,
    first_receive_ms bigint,
    receive_count bigint NOT NULL,
    group_id text,
    dedup_id text,
    sequence_number numeric,
    dead_letter_source_arn text,
    state bigint NOT NULL,
    until_ms bigint NOT NULL,
    nonce bigint NOT NULL,
    received_ms bigint NOT NULL,
    visible_since bigint NOT NULL,
    ord bigint NOT NULL,
    PRIMARY KEY (queue_uid, slot)
) WITH (fillfactor = 70);
CREATE TABLE retsu.attempts (
    queue_uid bigint NOT NULL,
    attempt_id text NOT NULL,
    pos bigint NOT NULL,
    slot bigint NOT NULL,
    nonce bigint NOT NULL,
    expires_ms bigint NOT NULL,
    PRIMARY KEY (queue_uid, attempt_id, pos)
);
CREATE INDEX attempts_slot ON retsu.attempts (queue_uid, slot);
";

/// Format 2: a cluster's nodes and the store's lease (`src/cluster/`).
/// One lease row: the node that owns every queue and topic, the epoch it
/// took it at, and until when (the database's clock).
const CLUSTER: &str = "
CREATE TABLE retsu.nodes (
    id text PRIMARY KEY,
    url text NOT NULL,
    instance bigint NOT NULL,
    started timestamptz NOT NULL DEFAULT now(),
    heartbeat timestamptz NOT NULL
);
CREATE TABLE retsu.lease (
    id int PRIMARY KEY CHECK (id = 1),
    node text NOT NULL,
    epoch bigint NOT NULL,
    expires timestamptz NOT NULL
);
INSERT INTO retsu.lease VALUES (1, '', 0, '-infinity');
CREATE FUNCTION retsu.fence(p_node text, p_epoch bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- FOR SHARE: a node taking the lease waits for this commit to end.
    PERFORM 1 FROM retsu.lease WHERE id = 1 AND node = p_node AND epoch = p_epoch FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'node % no longer holds the lease it took at epoch %', p_node, p_epoch
            USING ERRCODE = 'RT001';
    END IF;
END $$;
";

/// Format 3: a node can be drained (it gives the lease up and takes it
/// no more), and the virtual clock is the cluster's, stored here: one row,
/// frozen at a time or running at an offset from system time.
const CLUSTER_3: &str = "
ALTER TABLE retsu.nodes ADD COLUMN draining boolean NOT NULL DEFAULT false;
CREATE TABLE retsu.clock (
    id int PRIMARY KEY CHECK (id = 1),
    frozen_at bigint,
    offset_ms bigint NOT NULL
);
";

/// Format 4: the store is split into shards, each with a lease of its
/// own (`retsu.lease` gets a row per shard), so each queue and topic is
/// owned by the node holding its shard. A queue's rows name its shard;
/// the engine-level state (deleted names, move tasks, topics) is kept per
/// shard; `placement` says which shard holds each queue and topic name,
/// and its key makes names unique across the store. What a format 3 store
/// held becomes shard 1's; `fence` checks one shard's lease. `outbox`
/// carries messages between queues of different shards: a row is written
/// in the commit that takes the message out of its source, and marked
/// taken in the commit that stores it in its target (kept a while after,
/// so a source's retried commit cannot write it again as new).
const CLUSTER_4: &str = "
ALTER TABLE retsu.lease DROP CONSTRAINT IF EXISTS lease_id_check;
ALTER TABLE retsu.lease ADD CONSTRAINT lease_shard CHECK (id >= 1);
ALTER TABLE retsu.queues ADD COLUMN shard int NOT NULL DEFAULT 1;
CREATE INDEX queues_shard ON retsu.queues (shard);
CREATE TABLE retsu.shard_meta (
    shard int NOT NULL,
    key text NOT NULL,
    value text NOT NULL,
    PRIMARY KEY (shard, key)
);
INSERT INTO retsu.shard_meta (shard, key, value)
    SELECT 1, key, value FROM retsu.meta WHERE key = 'engine';
DELETE FROM retsu.meta WHERE key = 'engine';
CREATE TABLE retsu.placement (
    kind text NOT NULL,
    account text NOT NULL,
    region text NOT NULL,
    name text NOT NULL,
    shard int NOT NULL,
    PRIMARY KEY (kind, account, region, name)
);
CREATE INDEX placement_shard ON retsu.placement (shard);
CREATE TABLE retsu.outbox (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    target_shard int NOT NULL,
    record text NOT NULL,
    taken_at timestamptz
);
CREATE INDEX outbox_waiting ON retsu.outbox (target_shard, seq) WHERE taken_at IS NULL;
INSERT INTO retsu.placement (kind, account, region, name, shard)
    SELECT 'queue', r->>'account', r->>'region', r->>'name', 1
    FROM (SELECT record::jsonb AS r FROM retsu.queues) q
    ON CONFLICT DO NOTHING;
DROP FUNCTION retsu.fence(text, bigint);
CREATE FUNCTION retsu.fence(p_shard int, p_node text, p_epoch bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- FOR SHARE: a node taking the shard waits for this commit to end.
    PERFORM 1 FROM retsu.lease WHERE id = p_shard AND node = p_node AND epoch = p_epoch FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'node % no longer holds shard % as it took it at epoch %', p_node, p_shard, p_epoch
            USING ERRCODE = 'RT001';
    END IF;
END $$;
";

/// Format 7: a commit's fence locks its lease row `FOR KEY SHARE`, which
/// conflicts only with `FOR UPDATE` and a change of the row's key. A node
/// taking the shard locks the row `FOR UPDATE SKIP LOCKED`
/// (`membership.rs`), so it still takes no shard while a commit for it is
/// under way; the holder renewing its lease (an update of `expires`
/// alone) no longer waits for its own commits. With `FOR SHARE` a renewal
/// queued behind the commit under way, and then behind the next one if
/// that locked the row first, so under a steady stream of long commits
/// (deletes of many messages) the holder's lease could run out while it
/// was serving.
const CLUSTER_7: &str = "
CREATE OR REPLACE FUNCTION retsu.fence(p_shard int, p_node text, p_epoch bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- FOR KEY SHARE: a node taking the shard (FOR UPDATE SKIP LOCKED)
    -- passes it over until this commit ends; the holder's renewal does not wait.
    PERFORM 1 FROM retsu.lease WHERE id = p_shard AND node = p_node AND epoch = p_epoch
        FOR KEY SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'node % no longer holds shard % as it took it at epoch %', p_node, p_shard, p_epoch
            USING ERRCODE = 'RT001';
    END IF;
END $$;
";

/// What turns each format into the next, from format 1: a new store runs
/// them all after `SCHEMA`, and a store of format `n` runs them from the
/// `n`th.
const UPGRADES: [&str; 6] = [
    CLUSTER, CLUSTER_3, CLUSTER_4, CLUSTER_5, CLUSTER_6, CLUSTER_7,
];

/// Format 5: an operator can move a shard (and so the queues and topics
/// in it) to a node: `wanted` names the node the shard goes to, and stays
/// with while that node is live and not drained.
const CLUSTER_5: &str = "
ALTER TABLE retsu.lease ADD COLUMN wanted text;
";

/// Format 6: an operator can move one queue to a node. `wanted` on its
/// placement names the node asked for until the holder of its shard
/// moves it, into a shard of its own that then goes to that node
/// (`cluster/queue_move.rs`); `moves` in `meta` counts the moves, so a
/// node that kept where names were knows to read them again.
///
/// `move_queues` is the move itself, one statement: the holder of shard
/// `p_from` (at `p_epoch`, its engine stopped, as the spares' engines)
/// puts each queue named and still asked for into a spare with nothing in
/// it or a new lease row (at most `p_max`), moved to the node asked for;
/// the queue's row, placement and waiting hand-overs go with it. Every
/// spare is released, the moves counted, every node told.
const CLUSTER_6: &str = "
ALTER TABLE retsu.placement ADD COLUMN wanted text;
CREATE INDEX placement_wanted ON retsu.placement (shard) WHERE wanted IS NOT NULL;
INSERT INTO retsu.meta (key, value) VALUES ('moves', '0') ON CONFLICT (key) DO NOTHING;
CREATE FUNCTION retsu.move_queues(p_from int, p_node text, p_epoch bigint,
    p_spares int[], p_spare_epochs bigint[],
    p_accounts text[], p_regions text[], p_names text[], p_max int)
RETURNS TABLE (moved_name text, moved_to int)
LANGUAGE plpgsql AS $$
DECLARE
    i int;
    v_to text;
    v_shard int;
BEGIN
    -- One move at a time picks a new shard's number.
    PERFORM pg_advisory_xact_lock(491328402285);
    PERFORM retsu.fence(p_from, p_node, p_epoch);
    FOR i IN 1 .. coalesce(array_length(p_spares, 1), 0) LOOP
        PERFORM retsu.fence(p_spares[i], p_node, p_spare_epochs[i]);
    END LOOP;
    FOR i IN 1 .. coalesce(array_length(p_names, 1), 0) LOOP
        SELECT p.wanted INTO v_to FROM retsu.placement p
        WHERE p.kind = 'queue' AND p.account = p_accounts[i] AND p.region = p_regions[i]
            AND p.name = p_names[i] AND p.shard = p_from AND p.wanted IS NOT NULL
        FOR UPDATE;
        CONTINUE WHEN NOT FOUND;
        SELECT s INTO v_shard FROM unnest(p_spares) AS s
        WHERE NOT EXISTS (SELECT 1 FROM retsu.placement p WHERE p.shard = s)
            AND NOT EXISTS (SELECT 1 FROM retsu.queues q WHERE q.shard = s)
        ORDER BY s LIMIT 1;
        IF v_shard IS NULL THEN
            SELECT max(l.id) + 1 INTO v_shard FROM retsu.lease l;
            IF v_shard > p_max THEN
                RAISE EXCEPTION 'the store has % shards, the most it may have', p_max
                    USING ERRCODE = 'RT002';
            END IF;
            INSERT INTO retsu.lease (id, node, epoch, expires, wanted)
                VALUES (v_shard, '', 0, '-infinity', v_to);
        ELSE
            UPDATE retsu.lease SET wanted = v_to WHERE id = v_shard;
        END IF;
        UPDATE retsu.queues SET shard = v_shard WHERE shard = p_from
            AND record::jsonb->>'account' = p_accounts[i]
            AND record::jsonb->>'region' = p_regions[i]
            AND record::jsonb->>'name' = p_names[i];
        UPDATE retsu.placement SET shard = v_shard, wanted = NULL
        WHERE kind = 'queue' AND account = p_accounts[i] AND region = p_regions[i]
            AND name = p_names[i];
        UPDATE retsu.outbox SET target_shard = v_shard
        WHERE target_shard = p_from AND taken_at IS NULL
            AND record::jsonb->>'target_arn'
                = format('arn:aws:sqs:%s:%s:%s', p_regions[i], p_accounts[i], p_names[i]);
        PERFORM pg_notify('retsu_outbox', v_shard::text);
        moved_name := p_names[i];
        moved_to := v_shard;
        RETURN NEXT;
    END LOOP;
    UPDATE retsu.lease SET expires = '-infinity' WHERE id = ANY(p_spares) AND node = p_node;
    UPDATE retsu.meta SET value = (SELECT max(l.id) FROM retsu.lease l)::text WHERE key = 'shards';
    INSERT INTO retsu.meta (key, value) VALUES ('moves', '1')
        ON CONFLICT (key) DO UPDATE SET value = (retsu.meta.value::bigint + 1)::text;
    PERFORM pg_notify('retsu_cluster', 'queue moved');
    PERFORM pg_notify('retsu_queues', p_from::text);
END $$;
";

/// The shard count a store made by a single server gets (it serves
/// shard 1 only; a cluster started on it later spreads new names).
pub const DEFAULT_SHARDS: i32 = 8;
/// More shards than this are refused: each is a lease row, and a node
/// runs an engine for each shard it holds.
pub const MAX_SHARDS: i32 = 1024;

/// The lease rows of shards 2..=`shards` (shard 1's exists from format 2),
/// and the count itself, for a store made or migrated now.
fn shard_rows(shards: i32) -> String {
    format!(
        "INSERT INTO retsu.lease (id, node, epoch, expires)
             SELECT g, '', 0, '-infinity' FROM generate_series(2, {shards}) g
             ON CONFLICT (id) DO NOTHING;
         INSERT INTO retsu.meta (key, value) VALUES ('shards', '{shards}')
             ON CONFLICT (key) DO NOTHING;"
    )
}

/// Checks (or sets up) the format; returns the receipt-handle secret.
/// Writes nothing to a database whose `retsu` schema is not this format.
/// `shards`: how many shards a store made or migrated now gets (a store
/// that has them keeps its own count).
pub(super) async fn prepare(client: &mut Client, shards: i32) -> Result<Vec<u8>, String> {
    // Nodes of a cluster start together: one creates or migrates, the
    // others wait and then find it done.
    client
        .execute("SELECT pg_advisory_lock($1)", &[&PREPARING])
        .await
        .map_err(|e| super::describe(&e))?;
    let prepared = prepare_locked(client, shards).await;
    let _ = client
        .execute("SELECT pg_advisory_unlock($1)", &[&PREPARING])
        .await;
    prepared
}

/// The advisory lock held while the tables are checked or made.
const PREPARING: i64 = 0x72_6574_7376;

async fn prepare_locked(client: &mut Client, shards: i32) -> Result<Vec<u8>, String> {
    let err = |e: tokio_postgres::Error| super::describe(&e);
    let exists: bool = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'retsu')",
            &[],
        )
        .await
        .and_then(|r| r.try_get(0))
        .map_err(err)?;
    if !exists {
        let secret = rand::random::<[u8; 32]>().to_vec();
        let tx = client.transaction().await.map_err(err)?;
        tx.batch_execute(SCHEMA).await.map_err(err)?;
        for part in UPGRADES {
            tx.batch_execute(part).await.map_err(err)?;
        }
        tx.batch_execute(&shard_rows(shards)).await.map_err(err)?;
        tx.execute(
            "INSERT INTO retsu.meta (key, value) VALUES ('format', $1), ('written_by', $2), ('receipt_secret', $3)",
            &[
                &FORMAT.to_string(),
                &env!("CARGO_PKG_VERSION"),
                &STANDARD.encode(&secret),
            ],
        )
        .await
        .map_err(err)?;
        tx.commit().await.map_err(err)?;
        return Ok(secret);
    }
    let mut format = value(client, "format").await?;
    // Each older format is a prefix of this one: what it lacks is added.
    let missing: &[&str] = match format.as_deref().and_then(|f| f.parse::<usize>().ok()) {
        Some(older) if (1..=UPGRADES.len()).contains(&older) => &UPGRADES[older - 1..],
        _ => &[],
    };
    if !missing.is_empty() {
        let from = format.clone().unwrap_or_default();
        let tx = client.transaction().await.map_err(err)?;
        for part in missing {
            tx.batch_execute(part).await.map_err(err)?;
        }
        tx.batch_execute(&shard_rows(shards)).await.map_err(err)?;
        tx.execute(
            "UPDATE retsu.meta SET value = $1 WHERE key = 'format'",
            &[&FORMAT.to_string()],
        )
        .await
        .map_err(err)?;
        tx.commit().await.map_err(err)?;
        tracing::info!("PostgreSQL store migrated from format {from} to {FORMAT}");
        format = Some(FORMAT.to_string());
    }
    let written_by = value(client, "written_by")
        .await?
        .unwrap_or_else(|| "an unknown version".into());
    if format.as_deref() != Some(FORMAT.to_string().as_str()) {
        return Err(format!(
            "the database's retsu schema has format {} (written by Retsu {written_by}); this Retsu {} reads format {FORMAT} only and will not misread it: use a matching Retsu or another database",
            format.as_deref().unwrap_or("unknown"),
            env!("CARGO_PKG_VERSION"),
        ));
    }
    let secret = value(client, "receipt_secret").await?.unwrap_or_default();
    STANDARD
        .decode(secret)
        .map_err(|e| format!("the stored receipt-handle secret is damaged: {e}"))
}

/// How many shards the store is split into.
pub(super) async fn shard_count(client: &Client) -> Result<i32, String> {
    let shards = value(client, "shards").await?.unwrap_or_default();
    shards
        .parse()
        .map_err(|_| format!("the store's shard count {shards:?} is damaged"))
}

/// A shard other than 1 that holds a queue or a topic, if any: a single
/// server serves shard 1 only, so it refuses a store a cluster spread out.
pub(super) async fn spread_shard(client: &Client) -> Result<Option<i32>, String> {
    client
        .query_opt(
            "SELECT shard FROM retsu.placement WHERE shard <> 1
             UNION SELECT shard FROM retsu.queues WHERE shard <> 1 LIMIT 1",
            &[],
        )
        .await
        .map(|row| row.map(|r| r.get(0)))
        .map_err(|e| super::describe(&e))
}

/// A node holding one of a cluster's shards, if one does.
pub(super) async fn live_cluster(client: &Client) -> Result<Option<String>, String> {
    client
        .query_opt(
            "SELECT node FROM retsu.lease WHERE expires > now() AND node <> '' LIMIT 1",
            &[],
        )
        .await
        .map(|row| row.map(|r| r.get(0)))
        .map_err(|e| super::describe(&e))
}

/// One `retsu.meta` value.
async fn value(client: &Client, key: &str) -> Result<Option<String>, String> {
    client
        .query_opt("SELECT value FROM retsu.meta WHERE key = $1", &[&key])
        .await
        .map_err(|e| {
            format!(
                "the database has a schema named retsu that Retsu did not write ({}); refusing to use it",
                super::describe(&e)
            )
        })?
        .map(|r| r.try_get(0))
        .transpose()
        .map_err(|e| super::describe(&e))
}
