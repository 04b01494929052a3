//! The tables, the format check, and migration from older formats.

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};

use super::{sql_err, DB_FILE, FORMAT};

const SCHEMA: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE queues (uid INTEGER PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE counters (
    queue_uid INTEGER PRIMARY KEY,
    next_slot INTEGER NOT NULL,
    next_nonce INTEGER NOT NULL,
    last_sequence TEXT NOT NULL
);
CREATE TABLE dedup (
    queue_uid INTEGER NOT NULL,
    grp TEXT NOT NULL,
    dedup_id TEXT NOT NULL,
    message_id BLOB NOT NULL,
    sequence_number TEXT NOT NULL,
    expires_ms INTEGER NOT NULL,
    PRIMARY KEY (queue_uid, grp, dedup_id)
) WITHOUT ROWID;
CREATE INDEX dedup_expiry ON dedup (expires_ms);
CREATE TABLE messages (
    queue_uid INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    message_id BLOB NOT NULL,
    body TEXT NOT NULL,
    body_md5 BLOB NOT NULL,
    attributes TEXT,
    trace_header TEXT,
    sender_id TEXT NOT NULL,
    sent_ms INTEGER NOT NULL,
    enqueued_ms INTEGER NOT NULL,
    first_receive_ms INTEGER,
    receive_count INTEGER NOT NULL,
    group_id TEXT,
    dedup_id TEXT,
    sequence_number TEXT,
    dead_letter_source_arn TEXT,
    state INTEGER NOT NULL,
    until_ms INTEGER NOT NULL,
    nonce INTEGER NOT NULL,
    received_ms INTEGER NOT NULL,
    visible_since INTEGER NOT NULL,
    ord INTEGER NOT NULL,
    PRIMARY KEY (queue_uid, slot)
);
";

/// Added in format 2 (also run to migrate a format 1 directory).
const ATTEMPTS_SCHEMA: &str = "
CREATE TABLE attempts (
    queue_uid INTEGER NOT NULL,
    attempt_id TEXT NOT NULL,
    pos INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    nonce INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    PRIMARY KEY (queue_uid, attempt_id, pos)
) WITHOUT ROWID;
CREATE INDEX attempts_slot ON attempts (queue_uid, slot);
";

/// Checks (or sets up) the format; returns the receipt-handle secret.
pub(super) fn prepare(conn: &mut Connection, dir: &Path) -> Result<Vec<u8>, String> {
    let err = |e| sql_err(dir, e);
    let has_meta: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map_err(|e| format!("{} is not a Retsu data directory ({e})", dir.display()))?
        > 0;
    if !has_meta {
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(err)?;
        if tables > 0 {
            return Err(format!(
                "{} holds a database that Retsu did not write; refusing to use it",
                dir.join(DB_FILE).display()
            ));
        }
        let secret = rand::random::<[u8; 32]>().to_vec();
        let tx = conn.transaction().map_err(err)?;
        tx.execute_batch(SCHEMA).map_err(err)?;
        tx.execute_batch(ATTEMPTS_SCHEMA).map_err(err)?;
        tx.execute(
                "INSERT INTO meta (key, value) VALUES ('format', ?1), ('written_by', ?2), ('receipt_secret', ?3)",
                params![FORMAT, env!("CARGO_PKG_VERSION"), secret],
            )
            .map_err(err)?;
        tx.commit().map_err(err)?;
        return Ok(secret);
    }
    let format: Option<i64> = conn
        .query_row("SELECT value FROM meta WHERE key = 'format'", [], |r| {
            r.get(0)
        })
        .optional()
        .map_err(err)?;
    let written_by: String = conn
        .query_row("SELECT value FROM meta WHERE key = 'written_by'", [], |r| {
            r.get(0)
        })
        .optional()
        .map_err(err)?
        .unwrap_or_else(|| "an unknown version".into());
    if format == Some(1) {
        // Format 1 lacks only the receive-attempt table.
        let tx = conn.transaction().map_err(err)?;
        tx.execute_batch(ATTEMPTS_SCHEMA).map_err(err)?;
        tx.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'format'",
            params![FORMAT],
        )
        .map_err(err)?;
        tx.commit().map_err(err)?;
        tracing::info!(
            "data directory {}: migrated from format 1 (Retsu {written_by}) to format {FORMAT}",
            dir.display()
        );
    } else if format != Some(FORMAT) {
        return Err(format!(
                "data directory {} has format {} (written by Retsu {written_by}); this Retsu {} reads format {FORMAT} only and will not misread it: use a matching Retsu or another --data-dir",
                dir.display(),
                format.map_or("unknown".into(), |f| f.to_string()),
                env!("CARGO_PKG_VERSION"),
            ));
    }
    conn.query_row(
        "SELECT value FROM meta WHERE key = 'receipt_secret'",
        [],
        |r| r.get(0),
    )
    .map_err(err)
}
