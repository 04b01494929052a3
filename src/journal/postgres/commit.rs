//! A batch as one PostgreSQL transaction. The message rows (inserts,
//! state changes, deletes, deduplication ids, counters) and the fence are
//! one statement, each kind of row one of its writable CTEs over arrays.
//! A batch of nothing else (sends, receives, deletes: nearly every commit
//! under load) is that statement alone, committed on its own: PostgreSQL
//! runs one statement and answers once, with no BEGIN or COMMIT. Anything
//! else (queue records, receive attempts, the outbox, pruning) follows it
//! in a transaction whose statements are pipelined: sent one after another
//! without waiting, answered in order: a commit is one round trip.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Error, Row as PgRow, Statement};

use super::super::batch::{engine_meta, AttemptOp, Batch, Row};
use super::super::rows::{attributes_json, state_columns};
use super::super::StoredMessage;

/// The columns a state change rewrites, from `u` (the update's arrays).
const UPDATE: &str = "UPDATE retsu.messages m SET first_receive_ms = u.first_receive_ms,
        receive_count = u.receive_count, state = u.state, until_ms = u.until_ms,
        nonce = u.nonce, received_ms = u.received_ms, visible_since = u.visible_since,
        ord = u.ord
     FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[],
        $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[])
        AS u(queue_uid, slot, first_receive_ms, receive_count, state, until_ms, nonce,
             received_ms, visible_since, ord)
     WHERE m.queue_uid = u.queue_uid AND m.slot = u.slot
     RETURNING m.queue_uid, m.slot";

/// Whole rows, as a first try writes them: they cannot be there yet.
macro_rules! insert_rows {
    () => {
        "INSERT INTO retsu.messages (queue_uid, slot, message_id, body, body_md5,
        attributes, trace_header, sender_id, sent_ms, enqueued_ms, first_receive_ms,
        receive_count, group_id, dedup_id, sequence_number, dead_letter_source_arn, state,
        until_ms, nonce, received_ms, visible_since, ord)
     SELECT q, s, id, b, md5, a, th, snd, sent, enq, frm, rc, g, dd, seq::numeric, src, st, un,
        n, rcv, vis, o
     FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::text[], $5::bytea[], $6::text[],
        $7::text[], $8::text[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[],
        $13::text[], $14::text[], $15::text[], $16::text[], $17::bigint[], $18::bigint[],
        $19::bigint[], $20::bigint[], $21::bigint[], $22::bigint[])
        AS r(q, s, id, b, md5, a, th, snd, sent, enq, frm, rc, g, dd, seq, src, st, un, n, rcv,
             vis, o)"
    };
}

/// A first try's rows. An insert that may conflict costs PostgreSQL an
/// index probe and a second WAL record per row.
const INSERT_NEW: &str = insert_rows!();

/// Whole rows where they may be there already (a retried commit that had
/// in fact landed): such a row takes the newer state.
const INSERT: &str = concat!(
    insert_rows!(),
    "
     ON CONFLICT (queue_uid, slot) DO UPDATE SET first_receive_ms = excluded.first_receive_ms,
        receive_count = excluded.receive_count, state = excluded.state,
        until_ms = excluded.until_ms, nonce = excluded.nonce,
        received_ms = excluded.received_ms, visible_since = excluded.visible_since,
        ord = excluded.ord"
);

const DELETE: &str = "DELETE FROM retsu.messages m
     USING unnest($1::bigint[], $2::bigint[]) AS d(q, s)
     WHERE m.queue_uid = d.q AND m.slot = d.s";

const DEDUP: &str = "INSERT INTO retsu.dedup (queue_uid, grp, dedup_id, message_id,
        sequence_number, expires_ms)
     SELECT q, g, d, m, s::numeric, e
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bytea[], $5::text[], $6::bigint[])
        AS r(q, g, d, m, s, e)
     ON CONFLICT (queue_uid, grp, dedup_id) DO UPDATE SET message_id = excluded.message_id,
        sequence_number = excluded.sequence_number, expires_ms = excluded.expires_ms";

const ATTEMPT_CLEAR: &str = "DELETE FROM retsu.attempts WHERE queue_uid = $1 AND attempt_id = $2";

const ATTEMPT_SET: &str = "INSERT INTO retsu.attempts (queue_uid, attempt_id, pos, slot, nonce,
        expires_ms)
     SELECT $1, $2, p, s, n, $3 FROM unnest($4::bigint[], $5::bigint[], $6::bigint[]) AS r(p, s, n)";

const ATTEMPT_FORGET: &str = "DELETE FROM retsu.attempts WHERE queue_uid = $1 AND attempt_id IN
        (SELECT attempt_id FROM retsu.attempts WHERE queue_uid = $1 AND slot = $2)";

/// The shard's queues, each with its name's placement (a queue made by
/// the engine itself, from the configuration file, is placed here too).
const QUEUES: &str = "WITH q AS (
        INSERT INTO retsu.queues (uid, record, shard)
        SELECT u, r, $3 FROM unnest($1::bigint[], $2::text[]) AS t(u, r)
        ON CONFLICT (uid) DO UPDATE SET record = excluded.record, shard = excluded.shard
        RETURNING record)
     INSERT INTO retsu.placement (kind, account, region, name, shard)
     SELECT 'queue', record::jsonb->>'account', record::jsonb->>'region', record::jsonb->>'name', $3
     FROM q ON CONFLICT DO NOTHING";

/// Queues no longer in the state go, with everything that was theirs
/// (counters raised earlier in the same commit included).
const GONE: &str = "WITH gone AS (DELETE FROM retsu.queues WHERE shard = $2 AND uid <> ALL($1)
            RETURNING uid),
        m AS (DELETE FROM retsu.messages WHERE queue_uid IN (SELECT uid FROM gone)),
        d AS (DELETE FROM retsu.dedup WHERE queue_uid IN (SELECT uid FROM gone)),
        c AS (DELETE FROM retsu.counters WHERE queue_uid IN (SELECT uid FROM gone)),
        a AS (DELETE FROM retsu.attempts WHERE queue_uid IN (SELECT uid FROM gone))
     SELECT count(*) FROM gone";

/// An admin reset cleared the queue's window: the ids sent before it
/// (sequence numbers up to the floor) deduplicate no more.
const FLOOR: &str =
    "DELETE FROM retsu.dedup WHERE queue_uid = $1 AND sequence_number <= $2::text::numeric";

/// The shard's queues changed: the other shards' engines read them again
/// (`cluster/outbox.rs`).
const QUEUES_CHANGED: &str = "SELECT pg_notify('retsu_queues', $1::int::text)";

const META: &str = "INSERT INTO retsu.shard_meta (shard, key, value) VALUES ($2, 'engine', $1)
     ON CONFLICT (shard, key) DO UPDATE SET value = excluded.value";

const KEEP: &str = "INSERT INTO retsu.meta (key, value) VALUES ($1, $2)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value";

/// Counters only go up.
const COUNTERS: &str = "INSERT INTO retsu.counters (queue_uid, next_slot, next_nonce,
        last_sequence)
     SELECT q, s, n, l::numeric
     FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[]) AS r(q, s, n, l)
     ON CONFLICT (queue_uid) DO UPDATE SET
        next_slot = GREATEST(retsu.counters.next_slot, excluded.next_slot),
        next_nonce = GREATEST(retsu.counters.next_nonce, excluded.next_nonce),
        last_sequence = GREATEST(retsu.counters.last_sequence, excluded.last_sequence)";

/// A cluster node's commit goes through only while it holds the lease.
const FENCE: &str = "SELECT retsu.fence($3, $1, $2)";

/// Messages handed to queues of other shards: each row goes to its
/// target's shard (0 when the name is not placed: kept, never taken, and
/// logged by whoever finds it), and each shard given rows hears of it.
/// A row already there (a retried commit that had in fact landed, its row
/// perhaps taken since) is left as it is.
const OUTBOX_PUT: &str = "WITH r AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
            WITH ORDINALITY AS r(id, account, region, name, record, ord)),
     put AS (
        INSERT INTO retsu.outbox (id, target_shard, record)
        SELECT r.id, COALESCE(p.shard, 0), r.record FROM r
        LEFT JOIN retsu.placement p ON p.kind = 'queue' AND p.account = r.account
            AND p.region = r.region AND p.name = r.name
        ORDER BY r.ord
        ON CONFLICT (id) DO NOTHING
        RETURNING target_shard)
     SELECT pg_notify('retsu_outbox', s::text) FROM (SELECT DISTINCT target_shard AS s FROM put) t";

/// Hand-overs this shard stored: never offered again.
const OUTBOX_TAKEN: &str = "WITH t AS (UPDATE retsu.outbox SET taken_at = now()
        WHERE id = ANY($1::text[]) AND taken_at IS NULL RETURNING 1)
     SELECT pg_notify('retsu_outbox_taken', '') WHERE EXISTS (SELECT 1 FROM t)";

/// Taken rows are kept long enough that a source's retried commit finds
/// them (and does not write them again), then go.
const PRUNE_OUTBOX: &str = "DELETE FROM retsu.outbox
     WHERE target_shard = $1 AND taken_at < now() - interval '10 minutes'";

const PRUNE_DEDUP: &str = "DELETE FROM retsu.dedup WHERE expires_ms < $1";
const PRUNE_ATTEMPTS: &str = "DELETE FROM retsu.attempts WHERE expires_ms < $1";

/// The connection's prepared statements, by their text: a statement given
/// as text would cost a round trip of its own (Parse) at every use.
/// Cleared whenever a commit fails, and with the connection.
#[derive(Default)]
pub(super) struct Prepared(HashMap<&'static str, Statement>, HashMap<u8, Statement>);

impl Prepared {
    pub fn clear(&mut self) {
        self.0.clear();
        self.1.clear();
    }

    /// The one statement of a batch of message rows with these `parts`.
    async fn rows(&mut self, client: &Client, parts: u8) -> Result<Statement, Error> {
        if let Some(statement) = self.1.get(&parts) {
            return Ok(statement.clone());
        }
        let statement = client.prepare(&rows_statement(parts)).await?;
        self.1.insert(parts, statement.clone());
        Ok(statement)
    }

    async fn get(&mut self, client: &Client, sql: &'static str) -> Result<Statement, Error> {
        if let Some(statement) = self.0.get(sql) {
            return Ok(statement.clone());
        }
        let statement = client.prepare(sql).await?;
        self.0.insert(sql, statement.clone());
        Ok(statement)
    }
}

type Params<'a> = Vec<&'a (dyn ToSql + Sync)>;

/// Writes a batch in one transaction. `floors`: the deduplication floors
/// already applied to the `dedup` table; updated once the commit holds.
/// `fence`: a cluster node's (id, epoch), checked first. `retried`: the
/// batch failed before and may have landed then.
pub(super) async fn commit(
    client: &Client,
    batch: &Batch,
    shard: i32,
    fence: Option<(&str, i64)>,
    floors: &mut HashMap<u64, u128>,
    prepared: &mut Prepared,
    retried: bool,
) -> Result<(), Error> {
    let mut deletes = (Vec::new(), Vec::new());
    let mut updates: Vec<(u64, u64, &StoredMessage)> = Vec::new();
    let mut inserts: Vec<(u64, u64, &StoredMessage)> = Vec::new();
    for (&(queue_uid, slot), row) in &batch.messages {
        match row {
            Row::Delete => {
                deletes.0.push(queue_uid as i64);
                deletes.1.push(slot as i64);
            }
            Row::Put { message, new: true } => inserts.push((queue_uid, slot, message)),
            Row::Put {
                message,
                new: false,
            } => updates.push((queue_uid, slot, message)),
        }
    }
    // Every array the statements read, made before the pipeline borrows them.
    let update_columns = StateColumns::of(&updates);
    let insert_columns = MessageColumns::of(&inserts);
    let dedup = DedupColumns::of(batch);
    let attempts: Vec<AttemptParams<'_>> = batch.attempts.iter().map(AttemptParams::of).collect();
    let queues = batch.queues.as_ref().map(|state| {
        let uids: Vec<i64> = state.queues.iter().map(|q| q.uid as i64).collect();
        let records: Vec<String> = state
            .queues
            .iter()
            .map(|q| serde_json::to_string(q).unwrap_or_default())
            .collect();
        (uids, records, engine_meta(state))
    });
    let mut new_floors: Vec<(u64, u128)> = Vec::new();
    for q in batch.queues.iter().flat_map(|s| &s.queues) {
        let floor: u128 = q.dedup_floor.parse().unwrap_or(0);
        if floor > 0 && floors.get(&q.uid) != Some(&floor) {
            new_floors.push((q.uid, floor));
        }
    }
    let floor_params: Vec<(i64, String)> = new_floors
        .iter()
        .map(|(uid, floor)| (*uid as i64, floor.to_string()))
        .collect();
    let counters = CounterColumns::of(batch);
    let kept: Vec<(&str, &str)> = batch.meta.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let prune = batch.prune.map(|now| now as i64);
    let outbound = OutboundColumns::of(batch);
    let accepted: Vec<String> = batch.accepted.iter().map(|id| id.to_string()).collect();

    // The message rows and the fence: one statement.
    let fence_args: Option<Params<'_>> = fence
        .as_ref()
        .map(|(node, epoch)| -> Params<'_> { vec![node, epoch, &shard] });
    let given: [(u8, Option<Params<'_>>); 6] = [
        (
            ROW_DELETE,
            (!deletes.0.is_empty()).then(|| -> Params<'_> { vec![&deletes.0, &deletes.1] }),
        ),
        (
            ROW_UPDATE,
            (!updates.is_empty()).then(|| update_columns.params()),
        ),
        (
            ROW_INSERT,
            (!inserts.is_empty()).then(|| insert_columns.params()),
        ),
        (
            ROW_DEDUP,
            (!dedup.queues.is_empty()).then(|| dedup.params()),
        ),
        (
            ROW_COUNTERS,
            (!counters.queues.is_empty()).then(|| counters.params()),
        ),
        (ROW_FENCE, fence_args),
    ];
    let mut parts = if retried { ROW_RETRIED } else { 0 };
    let mut row_params: Params<'_> = Vec::new();
    for (bit, part) in given {
        if let Some(part) = part {
            parts |= bit;
            row_params.extend(part);
        }
    }

    // What else the batch holds (rare under load), in order.
    let mut steps: Vec<(&'static str, Params<'_>)> = Vec::new();
    for a in &attempts {
        match a {
            AttemptParams::Set {
                queue_uid,
                id,
                expires_ms,
                positions,
                slots,
                nonces,
            } => {
                steps.push((ATTEMPT_CLEAR, vec![queue_uid, id]));
                steps.push((
                    ATTEMPT_SET,
                    vec![queue_uid, id, expires_ms, positions, slots, nonces],
                ));
            }
            AttemptParams::Forget { queue_uid, slot } => {
                steps.push((ATTEMPT_FORGET, vec![queue_uid, slot]))
            }
        }
    }
    if let Some((uids, records, meta)) = &queues {
        // After the counters (in the rows' statement): a deleted queue's
        // go with it.
        steps.push((QUEUES, vec![uids, records, &shard]));
        steps.push((GONE, vec![uids, &shard]));
        for (uid, floor) in &floor_params {
            steps.push((FLOOR, vec![uid, floor]));
        }
        steps.push((META, vec![meta, &shard]));
        steps.push((QUEUES_CHANGED, vec![&shard]));
    }
    for (key, value) in &kept {
        steps.push((KEEP, vec![key, value]));
    }
    if !outbound.ids.is_empty() {
        steps.push((OUTBOX_PUT, outbound.params()));
    }
    if !accepted.is_empty() {
        steps.push((OUTBOX_TAKEN, vec![&accepted]));
    }
    if let Some(now) = &prune {
        steps.push((PRUNE_DEDUP, vec![now]));
        steps.push((PRUNE_ATTEMPTS, vec![now]));
        steps.push((PRUNE_OUTBOX, vec![&shard]));
    }

    let rows = match parts & !ROW_RETRIED {
        0 => None,
        _ => Some(prepared.rows(client, parts).await?),
    };
    // The rows' one-row answer: the fence's check, the keys updated.
    let answer = if steps.is_empty() {
        // Committed on its own: no BEGIN and COMMIT for PostgreSQL to
        // answer (nearly every commit under load).
        match &rows {
            Some(rows) => Some(client.query_one(rows, &row_params).await?),
            None => None,
        }
    } else {
        let mut statements = Vec::with_capacity(steps.len());
        for (sql, _) in &steps {
            statements.push(prepared.get(client, sql).await?);
        }
        // BEGIN, the statements and COMMIT, all sent at once.
        let mut pipeline: Vec<Step<'_>> = Vec::with_capacity(steps.len() + 3);
        pipeline.push(Box::pin(simple(client, "BEGIN")));
        if let Some(rows) = &rows {
            pipeline.push(Box::pin(client.query(rows, &row_params)));
        }
        for (statement, (_, params)) in statements.iter().zip(&steps) {
            pipeline.push(Box::pin(client.query(statement, params)));
        }
        pipeline.push(Box::pin(simple(client, "COMMIT")));
        let mut answers = Vec::with_capacity(pipeline.len());
        for result in in_order(pipeline).await {
            match result {
                Ok(rows) => answers.push(rows),
                Err(e) => return Err(rollback(client, e).await),
            }
        }
        // [0] is BEGIN's.
        rows.is_some()
            .then(|| answers.swap_remove(1).into_iter().next())
            .flatten()
    };
    if let (true, Some(answer)) = (parts & ROW_UPDATE != 0, answer) {
        let at = usize::from(parts & ROW_FENCE != 0);
        let (queues, slots): (Vec<i64>, Vec<i64>) = (answer.get(at), answer.get(at + 1));
        let updated = queues.into_iter().zip(slots).collect();
        write_missing(client, &updates, &updated, shard, fence, prepared).await?;
    }
    floors.extend(new_floors);
    Ok(())
}

/// A state change whose row was missing (`updated` holds the rows the
/// update found) is written whole, in a transaction of its own right
/// after: no answer waits on this batch before both are committed, and
/// the insert is idempotent, so a crash between the two loses nothing
/// that was answered.
async fn write_missing(
    client: &Client,
    updates: &[(u64, u64, &StoredMessage)],
    updated: &HashSet<(i64, i64)>,
    shard: i32,
    fence: Option<(&str, i64)>,
    prepared: &mut Prepared,
) -> Result<(), Error> {
    let missing: Vec<(u64, u64, &StoredMessage)> = updates
        .iter()
        .copied()
        .filter(|(q, s, _)| !updated.contains(&(*q as i64, *s as i64)))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let insert = prepared.get(client, INSERT).await?;
    let columns = MessageColumns::of(&missing);
    let params = columns.params();
    match &fence {
        None => {
            client.query(&insert, &params).await?;
        }
        Some((node, epoch)) => {
            // Fenced like the first: a node that lost the lease
            // must not add rows its successor never loaded.
            let check = prepared.get(client, FENCE).await?;
            let fence_args: [&(dyn ToSql + Sync); 3] = [node, epoch, &shard];
            let steps: Vec<Step<'_>> = vec![
                Box::pin(simple(client, "BEGIN")),
                Box::pin(client.query(&check, &fence_args)),
                Box::pin(client.query(&insert, &params)),
                Box::pin(simple(client, "COMMIT")),
            ];
            for result in in_order(steps).await {
                if let Err(e) = result {
                    return Err(rollback(client, e).await);
                }
            }
        }
    }
    Ok(())
}

/// The parts of a batch of message rows, in the order their parameters
/// are given.
const ROW_DELETE: u8 = 1;
const ROW_UPDATE: u8 = 2;
const ROW_INSERT: u8 = 4;
const ROW_DEDUP: u8 = 8;
const ROW_COUNTERS: u8 = 16;
const ROW_FENCE: u8 = 32;
/// Not a part: the batch was tried before and may have landed, so its new
/// rows may be there already.
const ROW_RETRIED: u8 = 64;

/// One statement for a batch of message rows: each part a writable CTE
/// (PostgreSQL runs every one to completion whether or not it is read;
/// the parts touch different rows, since a batch holds each row once),
/// and a one-row result: the fence's check, which raises and so undoes
/// the whole statement when the lease is gone, then the keys the update
/// found. Each part's `$n` are renumbered after the parts before it.
fn rows_statement(parts: u8) -> String {
    let insert = match parts & ROW_RETRIED {
        0 => INSERT_NEW,
        _ => INSERT,
    };
    let ctes_of: [(u8, &str, &str, usize); 5] = [
        (ROW_DELETE, "gone", DELETE, 2),
        (ROW_UPDATE, "changed", UPDATE, 10),
        (ROW_INSERT, "added", insert, 22),
        (ROW_DEDUP, "dedup", DEDUP, 6),
        (ROW_COUNTERS, "raised", COUNTERS, 4),
    ];
    let mut ctes = Vec::new();
    let mut given = 0;
    for (bit, name, sql, count) in ctes_of {
        if parts & bit != 0 {
            ctes.push(format!("{name} AS ({})", renumbered(sql, given)));
            given += count;
        }
    }
    let mut columns = Vec::new();
    if parts & ROW_FENCE != 0 {
        let check = renumbered(FENCE.trim_start_matches("SELECT "), given);
        columns.push(format!("(SELECT count(*) FROM (SELECT {check}) AS fenced)"));
    }
    if parts & ROW_UPDATE != 0 {
        columns.push("ARRAY(SELECT queue_uid FROM changed)".to_string());
        columns.push("ARRAY(SELECT slot FROM changed)".to_string());
    }
    if columns.is_empty() {
        columns.push("1".to_string());
    }
    let select = format!("SELECT {}", columns.join(", "));
    if ctes.is_empty() {
        // The fence alone.
        return select;
    }
    format!("WITH {} {select}", ctes.join(", "))
}

/// `sql` with each parameter `$n` made `$(n + by)`.
fn renumbered(sql: &str, by: usize) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[..digits].parse::<usize>() {
            Ok(n) => out.push_str(&(n + by).to_string()),
            Err(_) => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

type Step<'a> = Pin<Box<dyn Future<Output = Result<Vec<PgRow>, Error>> + 'a>>;

async fn simple(client: &Client, sql: &str) -> Result<Vec<PgRow>, Error> {
    client.batch_execute(sql).await.map(|()| Vec::new())
}

/// After a failed statement the transaction is void; make sure it is
/// closed (a no-op when COMMIT already turned into a rollback).
async fn rollback(client: &Client, e: Error) -> Error {
    let _ = client.batch_execute("ROLLBACK").await;
    e
}

/// Runs the steps as a pipeline: each one's request is sent when it is
/// first polled, so polling them in order sends them in order, and none
/// waits for the answer of the one before it.
async fn in_order(mut steps: Vec<Step<'_>>) -> Vec<Result<Vec<PgRow>, Error>> {
    let mut results: Vec<Option<Result<Vec<PgRow>, Error>>> = steps.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (step, result) in steps.iter_mut().zip(results.iter_mut()) {
            if result.is_some() {
                continue;
            }
            match step.as_mut().poll(cx) {
                Poll::Ready(r) => *result = Some(r),
                Poll::Pending => pending = true,
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    results.into_iter().flatten().collect()
}

/// The state columns of messages, one array per column.
#[derive(Default)]
struct StateColumns {
    queues: Vec<i64>,
    slots: Vec<i64>,
    first_receive_ms: Vec<Option<i64>>,
    receive_count: Vec<i64>,
    state: Vec<i64>,
    until_ms: Vec<i64>,
    nonce: Vec<i64>,
    received_ms: Vec<i64>,
    visible_since: Vec<i64>,
    ord: Vec<i64>,
}

impl StateColumns {
    fn of(rows: &[(u64, u64, &StoredMessage)]) -> StateColumns {
        let mut c = StateColumns::default();
        for &(queue_uid, slot, m) in rows {
            let (state, until) = state_columns(m.state());
            c.queues.push(queue_uid as i64);
            c.slots.push(slot as i64);
            c.first_receive_ms
                .push(m.first_receive_ms().map(|v| v as i64));
            c.receive_count.push(i64::from(m.receive_count));
            c.state.push(state);
            c.until_ms.push(until);
            c.nonce.push(m.nonce as i64);
            c.received_ms.push(m.received_ms() as i64);
            c.visible_since.push(m.visible_since() as i64);
            c.ord.push(m.order as i64);
        }
        c
    }

    fn params(&self) -> Params<'_> {
        vec![
            &self.queues,
            &self.slots,
            &self.first_receive_ms,
            &self.receive_count,
            &self.state,
            &self.until_ms,
            &self.nonce,
            &self.received_ms,
            &self.visible_since,
            &self.ord,
        ]
    }
}

/// The rest of a whole message row, one array per column.
struct MessageColumns<'a> {
    state: StateColumns,
    message_id: Vec<&'a [u8]>,
    body: Vec<&'a str>,
    body_md5: Vec<&'a [u8]>,
    attributes: Vec<Option<String>>,
    trace_header: Vec<Option<&'a str>>,
    sender_id: Vec<&'a str>,
    sent_ms: Vec<i64>,
    enqueued_ms: Vec<i64>,
    group_id: Vec<Option<&'a str>>,
    dedup_id: Vec<Option<&'a str>>,
    sequence_number: Vec<Option<String>>,
    source: Vec<Option<&'a str>>,
}

impl<'a> MessageColumns<'a> {
    fn of(rows: &[(u64, u64, &'a StoredMessage)]) -> MessageColumns<'a> {
        let n = rows.len();
        let mut c = MessageColumns {
            state: StateColumns::of(rows),
            message_id: Vec::with_capacity(n),
            body: Vec::with_capacity(n),
            body_md5: Vec::with_capacity(n),
            attributes: Vec::with_capacity(n),
            trace_header: Vec::with_capacity(n),
            sender_id: Vec::with_capacity(n),
            sent_ms: Vec::with_capacity(n),
            enqueued_ms: Vec::with_capacity(n),
            group_id: Vec::with_capacity(n),
            dedup_id: Vec::with_capacity(n),
            sequence_number: Vec::with_capacity(n),
            source: Vec::with_capacity(n),
        };
        for &(_, _, m) in rows {
            c.message_id.push(m.message_id.as_bytes());
            c.body.push(&m.body);
            c.body_md5.push(m.body_md5.as_slice());
            c.attributes.push(attributes_json(m));
            c.trace_header.push(m.trace_header());
            c.sender_id.push(&m.sender_id);
            c.sent_ms.push(m.sent_ms as i64);
            c.enqueued_ms.push(m.enqueued_ms() as i64);
            c.group_id.push(m.group_id().map(|g| &**g));
            c.dedup_id.push(m.dedup_id());
            c.sequence_number
                .push(m.sequence_number().map(|s| s.to_string()));
            c.source.push(m.dead_letter_source_arn().map(|a| &**a));
        }
        c
    }

    /// `INSERT`'s parameters.
    fn params(&self) -> Params<'_> {
        let s = &self.state;
        vec![
            &s.queues,
            &s.slots,
            &self.message_id,
            &self.body,
            &self.body_md5,
            &self.attributes,
            &self.trace_header,
            &self.sender_id,
            &self.sent_ms,
            &self.enqueued_ms,
            &s.first_receive_ms,
            &s.receive_count,
            &self.group_id,
            &self.dedup_id,
            &self.sequence_number,
            &self.source,
            &s.state,
            &s.until_ms,
            &s.nonce,
            &s.received_ms,
            &s.visible_since,
            &s.ord,
        ]
    }
}

struct DedupColumns<'a> {
    queues: Vec<i64>,
    groups: Vec<&'a str>,
    ids: Vec<&'a str>,
    messages: Vec<&'a [u8]>,
    sequences: Vec<String>,
    expires: Vec<i64>,
}

impl<'a> DedupColumns<'a> {
    fn of(batch: &'a Batch) -> DedupColumns<'a> {
        let mut c = DedupColumns {
            queues: Vec::new(),
            groups: Vec::new(),
            ids: Vec::new(),
            messages: Vec::new(),
            sequences: Vec::new(),
            expires: Vec::new(),
        };
        for (&(queue_uid, _, _), record) in &batch.dedup {
            c.queues.push(queue_uid as i64);
            c.groups.push(record.group.as_str());
            c.ids.push(record.dedup_id.as_str());
            c.messages.push(record.message_id.as_bytes().as_slice());
            c.sequences.push(record.sequence_number.to_string());
            c.expires.push(record.expires_ms as i64);
        }
        c
    }

    fn params(&self) -> Params<'_> {
        vec![
            &self.queues,
            &self.groups,
            &self.ids,
            &self.messages,
            &self.sequences,
            &self.expires,
        ]
    }
}

/// A receive-attempt change's parameters.
enum AttemptParams<'a> {
    Set {
        queue_uid: i64,
        id: &'a str,
        expires_ms: i64,
        positions: Vec<i64>,
        slots: Vec<i64>,
        nonces: Vec<i64>,
    },
    Forget {
        queue_uid: i64,
        slot: i64,
    },
}

impl<'a> AttemptParams<'a> {
    fn of(op: &'a AttemptOp) -> AttemptParams<'a> {
        match op {
            AttemptOp::Set {
                queue_uid,
                id,
                expires_ms,
                messages,
            } => AttemptParams::Set {
                queue_uid: *queue_uid as i64,
                id,
                expires_ms: *expires_ms as i64,
                positions: (0..messages.len() as i64).collect(),
                slots: messages.iter().map(|(s, _)| *s as i64).collect(),
                nonces: messages.iter().map(|(_, n)| *n as i64).collect(),
            },
            AttemptOp::Forget { queue_uid, slot } => AttemptParams::Forget {
                queue_uid: *queue_uid as i64,
                slot: *slot as i64,
            },
        }
    }
}

struct CounterColumns {
    queues: Vec<i64>,
    slots: Vec<i64>,
    nonces: Vec<i64>,
    sequences: Vec<String>,
}

impl CounterColumns {
    fn of(batch: &Batch) -> CounterColumns {
        let mut c = CounterColumns {
            queues: Vec::new(),
            slots: Vec::new(),
            nonces: Vec::new(),
            sequences: Vec::new(),
        };
        for (uid, counters) in &batch.counters {
            c.queues.push(*uid as i64);
            c.slots.push(counters.next_slot as i64);
            c.nonces.push(counters.next_nonce as i64);
            c.sequences.push(counters.last_sequence.to_string());
        }
        c
    }

    fn params(&self) -> Params<'_> {
        vec![&self.queues, &self.slots, &self.nonces, &self.sequences]
    }
}

/// The outbox rows' columns: the target queue's name split out of its ARN
/// (to find its shard), the record as JSON.
struct OutboundColumns {
    ids: Vec<String>,
    accounts: Vec<String>,
    regions: Vec<String>,
    names: Vec<String>,
    records: Vec<String>,
}

impl OutboundColumns {
    fn of(batch: &Batch) -> OutboundColumns {
        let mut c = OutboundColumns {
            ids: Vec::new(),
            accounts: Vec::new(),
            regions: Vec::new(),
            names: Vec::new(),
            records: Vec::new(),
        };
        for o in &batch.outbound {
            let key = crate::engine::QueueKey::from_arn(&o.target_arn);
            let (account, region, name) = key
                .map(|k| (k.account, k.region, k.name))
                .unwrap_or_default();
            c.ids.push(o.id.to_string());
            c.accounts.push(account);
            c.regions.push(region);
            c.names.push(name);
            c.records
                .push(serde_json::to_string(o).expect("an outbound record serializes"));
        }
        c
    }

    fn params(&self) -> Params<'_> {
        vec![
            &self.ids,
            &self.accounts,
            &self.regions,
            &self.names,
            &self.records,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The highest `$n` in a statement: how many parameters it reads.
    fn parameters(sql: &str) -> usize {
        sql.split('$')
            .skip(1)
            .filter_map(|s| {
                let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().ok()
            })
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn parameters_are_renumbered_after_the_parts_before() {
        assert_eq!(
            renumbered("f($3, $1, $2) AND x = $10::text AND '$'", 26),
            "f($29, $27, $28) AND x = $36::text AND '$'"
        );
        // Each part's own count, as `rows_statement` adds them up.
        for (sql, count) in [
            (DELETE, 2),
            (UPDATE, 10),
            (INSERT, 22),
            (DEDUP, 6),
            (COUNTERS, 4),
            (FENCE, 3),
        ] {
            assert_eq!(parameters(sql), count, "{sql}");
        }
    }

    #[test]
    fn every_combination_reads_its_parts_parameters_in_order() {
        let counts = [
            (ROW_DELETE, 2),
            (ROW_UPDATE, 10),
            (ROW_INSERT, 22),
            (ROW_DEDUP, 6),
            (ROW_COUNTERS, 4),
            (ROW_FENCE, 3),
        ];
        for parts in 1u8..64 {
            let sql = rows_statement(parts);
            let want: usize = counts
                .iter()
                .filter(|(bit, _)| parts & bit != 0)
                .map(|(_, n)| n)
                .sum();
            assert_eq!(parameters(&sql), want, "{sql}");
            assert_eq!(sql.contains("retsu.fence("), parts & ROW_FENCE != 0);
            assert_eq!(sql.contains("FROM changed"), parts & ROW_UPDATE != 0);
            // New rows expect a conflict only on a retry.
            let retried = rows_statement(parts | ROW_RETRIED);
            assert_eq!(parameters(&retried), want);
            let upserts = |sql: &str| sql.contains("ON CONFLICT (queue_uid, slot)");
            assert!(!upserts(&sql));
            assert_eq!(upserts(&retried), parts & ROW_INSERT != 0);
            // The fence's arguments are the last three.
            if parts & ROW_FENCE != 0 {
                let at = sql.find("retsu.fence(").unwrap();
                assert!(sql[at..].starts_with(&format!(
                    "retsu.fence(${}, ${}, ${})",
                    want,
                    want - 2,
                    want - 1
                )));
            }
        }
    }
}
