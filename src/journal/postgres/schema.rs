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

/// Checks (or sets up) the format; returns the receipt-handle secret.
/// Writes nothing to a database whose `retsu` schema is not this format.
pub(super) async fn prepare(client: &mut Client) -> Result<Vec<u8>, String> {
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
    let format = value(client, "format").await?;
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
