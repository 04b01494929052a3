//! A batch as one PostgreSQL transaction: each kind of row is one
//! statement over arrays, so the round trips do not grow with the batch.

use std::collections::{HashMap, HashSet};

use postgres::{Client, Error, Statement, Transaction};

use super::super::batch::{engine_meta, AttemptOp, Batch, Row};
use super::super::rows::state_columns;
use super::super::StoredMessage;

/// The columns a state change rewrites, as `excluded` or `u` names them.
const STATE_SET: &str = "first_receive_ms = u.first_receive_ms, receive_count = u.receive_count,
    state = u.state, until_ms = u.until_ms, nonce = u.nonce, received_ms = u.received_ms,
    visible_since = u.visible_since, ord = u.ord";

/// The connection's prepared statements, by their text: a statement given
/// as text would cost a round trip of its own (Parse) at every use.
/// Cleared whenever a commit fails, and with the connection.
#[derive(Default)]
pub(super) struct Prepared(HashMap<String, Statement>);

impl Prepared {
    pub fn clear(&mut self) {
        self.0.clear();
    }

    fn get(&mut self, tx: &mut Transaction<'_>, sql: &str) -> Result<Statement, Error> {
        if let Some(statement) = self.0.get(sql) {
            return Ok(statement.clone());
        }
        let statement = tx.prepare(sql)?;
        self.0.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }
}

/// Writes a batch in one transaction. `floors`: the deduplication floors
/// already applied to the `dedup` table; updated once the commit holds.
pub(super) fn commit(
    client: &mut Client,
    batch: &Batch,
    floors: &mut HashMap<u64, u128>,
    prepared: &mut Prepared,
) -> Result<(), Error> {
    let mut tx = client.transaction()?;
    let p = prepared;
    let mut deletes = Keys::default();
    let mut updates: Vec<(u64, u64, &StoredMessage)> = Vec::new();
    let mut inserts: Vec<(u64, u64, &StoredMessage)> = Vec::new();
    for (&(queue_uid, slot), row) in &batch.messages {
        match row {
            Row::Delete => deletes.push(queue_uid, slot),
            Row::Put { message, new: true } => inserts.push((queue_uid, slot, message)),
            Row::Put {
                message,
                new: false,
            } => updates.push((queue_uid, slot, message)),
        }
    }
    if !deletes.is_empty() {
        exec(
            &mut tx,
            p,
            "DELETE FROM retsu.messages m USING unnest($1::bigint[], $2::bigint[]) AS d(q, s)
             WHERE m.queue_uid = d.q AND m.slot = d.s",
            &[&deletes.queues, &deletes.slots],
        )?;
    }
    if !updates.is_empty() {
        let s = StateColumns::of(&updates);
        let updated: HashSet<(i64, i64)> = query(
            &mut tx,
            p,
            &format!(
                "UPDATE retsu.messages m SET {STATE_SET}
                     FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[],
                        $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[],
                        $10::bigint[])
                        AS u(queue_uid, slot, first_receive_ms, receive_count, state, until_ms,
                             nonce, received_ms, visible_since, ord)
                     WHERE m.queue_uid = u.queue_uid AND m.slot = u.slot
                     RETURNING m.queue_uid, m.slot"
            ),
            &[
                &s.queues,
                &s.slots,
                &s.first_receive_ms,
                &s.receive_count,
                &s.state,
                &s.until_ms,
                &s.nonce,
                &s.received_ms,
                &s.visible_since,
                &s.ord,
            ],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
        // A state change whose row is missing is written whole.
        inserts.extend(
            updates
                .into_iter()
                .filter(|(q, s, _)| !updated.contains(&(*q as i64, *s as i64))),
        );
    }
    if !inserts.is_empty() {
        insert_messages(&mut tx, p, &inserts)?;
    }
    write_dedup(&mut tx, p, batch)?;
    write_attempts(&mut tx, p, &batch.attempts)?;

    let mut new_floors: Vec<(u64, u128)> = Vec::new();
    if let Some(state) = &batch.queues {
        let uids: Vec<i64> = state.queues.iter().map(|q| q.uid as i64).collect();
        let records: Vec<String> = state
            .queues
            .iter()
            .map(|q| serde_json::to_string(q).unwrap_or_default())
            .collect();
        let gone: Vec<i64> = query(
            &mut tx,
            p,
            "DELETE FROM retsu.queues WHERE uid <> ALL($1) RETURNING uid",
            &[&uids],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
        exec(
            &mut tx,
            p,
            "INSERT INTO retsu.queues (uid, record) SELECT * FROM unnest($1::bigint[], $2::text[])
             ON CONFLICT (uid) DO UPDATE SET record = excluded.record",
            &[&uids, &records],
        )?;
        if !gone.is_empty() {
            // What belonged to deleted queues.
            for table in ["messages", "dedup", "counters", "attempts"] {
                exec(
                    &mut tx,
                    p,
                    &format!("DELETE FROM retsu.{table} WHERE queue_uid = ANY($1)"),
                    &[&gone],
                )?;
            }
        }
        for q in &state.queues {
            // An admin reset cleared the queue's window: the ids sent
            // before it (sequence numbers up to the floor) deduplicate no
            // more. Done once per floor.
            let floor: u128 = q.dedup_floor.parse().unwrap_or(0);
            if floor > 0 && floors.get(&q.uid) != Some(&floor) {
                exec(&mut tx, p,
                    "DELETE FROM retsu.dedup WHERE queue_uid = $1 AND sequence_number <= $2::text::numeric",
                    &[&(q.uid as i64), &floor.to_string()],
                )?;
                new_floors.push((q.uid, floor));
            }
        }
        exec(
            &mut tx,
            p,
            "INSERT INTO retsu.meta (key, value) VALUES ('engine', $1)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            &[&engine_meta(state)],
        )?;
        // Counters of a queue deleted in this very batch are not raised.
        let gone: HashSet<u64> = gone.iter().map(|g| *g as u64).collect();
        raise_counters(&mut tx, p, batch, &gone)?;
    } else {
        raise_counters(&mut tx, p, batch, &HashSet::new())?;
    }

    if let Some(now) = batch.prune {
        let now = now as i64;
        exec(
            &mut tx,
            p,
            "DELETE FROM retsu.dedup WHERE expires_ms < $1",
            &[&now],
        )?;
        exec(
            &mut tx,
            p,
            "DELETE FROM retsu.attempts WHERE expires_ms < $1",
            &[&now],
        )?;
    }
    tx.commit()?;
    floors.extend(new_floors);
    Ok(())
}

/// Runs a statement, prepared once per connection.
fn exec(
    tx: &mut Transaction<'_>,
    p: &mut Prepared,
    sql: &str,
    params: &[&(dyn postgres::types::ToSql + Sync)],
) -> Result<u64, Error> {
    let statement = p.get(tx, sql)?;
    tx.execute(&statement, params)
}

/// Runs a query, prepared once per connection.
fn query(
    tx: &mut Transaction<'_>,
    p: &mut Prepared,
    sql: &str,
    params: &[&(dyn postgres::types::ToSql + Sync)],
) -> Result<Vec<postgres::Row>, Error> {
    let statement = p.get(tx, sql)?;
    tx.query(&statement, params)
}

#[derive(Default)]
struct Keys {
    queues: Vec<i64>,
    slots: Vec<i64>,
}

impl Keys {
    fn push(&mut self, queue_uid: u64, slot: u64) {
        self.queues.push(queue_uid as i64);
        self.slots.push(slot as i64);
    }

    fn is_empty(&self) -> bool {
        self.queues.is_empty()
    }
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
}

/// Whole rows; a row already there (a retried commit that had in fact
/// landed) takes the newer state.
fn insert_messages(
    tx: &mut Transaction<'_>,
    p: &mut Prepared,
    rows: &[(u64, u64, &StoredMessage)],
) -> Result<(), Error> {
    let s = StateColumns::of(rows);
    let n = rows.len();
    let mut message_id: Vec<&[u8]> = Vec::with_capacity(n);
    let mut body: Vec<&str> = Vec::with_capacity(n);
    let mut body_md5: Vec<&[u8]> = Vec::with_capacity(n);
    let mut attributes: Vec<Option<String>> = Vec::with_capacity(n);
    let mut trace_header: Vec<Option<&str>> = Vec::with_capacity(n);
    let mut sender_id: Vec<&str> = Vec::with_capacity(n);
    let mut sent_ms: Vec<i64> = Vec::with_capacity(n);
    let mut enqueued_ms: Vec<i64> = Vec::with_capacity(n);
    let mut group_id: Vec<Option<&str>> = Vec::with_capacity(n);
    let mut dedup_id: Vec<Option<&str>> = Vec::with_capacity(n);
    let mut sequence_number: Vec<Option<String>> = Vec::with_capacity(n);
    let mut source: Vec<Option<&str>> = Vec::with_capacity(n);
    for &(_, _, m) in rows {
        message_id.push(m.message_id.as_bytes());
        body.push(&m.body);
        body_md5.push(m.body_md5.as_slice());
        attributes.push(
            (!m.attributes().is_empty())
                .then(|| serde_json::to_string(m.attributes()).unwrap_or_default()),
        );
        trace_header.push(m.trace_header());
        sender_id.push(&m.sender_id);
        sent_ms.push(m.sent_ms as i64);
        enqueued_ms.push(m.enqueued_ms() as i64);
        group_id.push(m.group_id().map(|g| &**g));
        dedup_id.push(m.dedup_id());
        sequence_number.push(m.sequence_number().map(|s| s.to_string()));
        source.push(m.dead_letter_source_arn().map(|a| &**a));
    }
    exec(
        tx,
        p,
        &format!(
            "INSERT INTO retsu.messages (queue_uid, slot, message_id, body, body_md5, attributes,
                trace_header, sender_id, sent_ms, enqueued_ms, first_receive_ms, receive_count,
                group_id, dedup_id, sequence_number, dead_letter_source_arn, state, until_ms,
                nonce, received_ms, visible_since, ord)
             SELECT q, s, id, b, md5, a, th, snd, sent, enq, frm, rc, g, dd, seq::numeric, src,
                st, un, n, rcv, vis, o
             FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::text[], $5::bytea[],
                $6::text[], $7::text[], $8::text[], $9::bigint[], $10::bigint[], $11::bigint[],
                $12::bigint[], $13::text[], $14::text[], $15::text[], $16::text[], $17::bigint[],
                $18::bigint[], $19::bigint[], $20::bigint[], $21::bigint[], $22::bigint[])
                AS r(q, s, id, b, md5, a, th, snd, sent, enq, frm, rc, g, dd, seq, src, st, un,
                     n, rcv, vis, o)
             ON CONFLICT (queue_uid, slot) DO UPDATE SET {}",
            STATE_SET.replace("u.", "excluded.")
        ),
        &[
            &s.queues,
            &s.slots,
            &message_id,
            &body,
            &body_md5,
            &attributes,
            &trace_header,
            &sender_id,
            &sent_ms,
            &enqueued_ms,
            &s.first_receive_ms,
            &s.receive_count,
            &group_id,
            &dedup_id,
            &sequence_number,
            &source,
            &s.state,
            &s.until_ms,
            &s.nonce,
            &s.received_ms,
            &s.visible_since,
            &s.ord,
        ],
    )?;
    Ok(())
}

fn write_dedup(tx: &mut Transaction<'_>, p: &mut Prepared, batch: &Batch) -> Result<(), Error> {
    if batch.dedup.is_empty() {
        return Ok(());
    }
    let n = batch.dedup.len();
    let (mut queues, mut groups, mut ids, mut messages, mut sequences, mut expires) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for (&(queue_uid, _, _), record) in &batch.dedup {
        queues.push(queue_uid as i64);
        groups.push(record.group.as_str());
        ids.push(record.dedup_id.as_str());
        messages.push(record.message_id.as_bytes().as_slice());
        sequences.push(record.sequence_number.to_string());
        expires.push(record.expires_ms as i64);
    }
    exec(tx, p,
        "INSERT INTO retsu.dedup (queue_uid, grp, dedup_id, message_id, sequence_number, expires_ms)
         SELECT q, g, d, m, s::numeric, e
         FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bytea[], $5::text[], $6::bigint[])
            AS r(q, g, d, m, s, e)
         ON CONFLICT (queue_uid, grp, dedup_id) DO UPDATE SET message_id = excluded.message_id,
            sequence_number = excluded.sequence_number, expires_ms = excluded.expires_ms",
        &[&queues, &groups, &ids, &messages, &sequences, &expires],
    )?;
    Ok(())
}

/// Receive attempts are rare (FIFO with ReceiveRequestAttemptId) and
/// order-dependent: one statement each, in order.
fn write_attempts(
    tx: &mut Transaction<'_>,
    p: &mut Prepared,
    ops: &[AttemptOp],
) -> Result<(), Error> {
    for op in ops {
        match op {
            AttemptOp::Set {
                queue_uid,
                id,
                expires_ms,
                messages,
            } => {
                let uid = *queue_uid as i64;
                exec(
                    tx,
                    p,
                    "DELETE FROM retsu.attempts WHERE queue_uid = $1 AND attempt_id = $2",
                    &[&uid, &&**id],
                )?;
                let positions: Vec<i64> = (0..messages.len() as i64).collect();
                let slots: Vec<i64> = messages.iter().map(|(s, _)| *s as i64).collect();
                let nonces: Vec<i64> = messages.iter().map(|(_, n)| *n as i64).collect();
                exec(tx, p,
                    "INSERT INTO retsu.attempts (queue_uid, attempt_id, pos, slot, nonce, expires_ms)
                     SELECT $1, $2, p, s, n, $3
                     FROM unnest($4::bigint[], $5::bigint[], $6::bigint[]) AS r(p, s, n)",
                    &[&uid, &&**id, &(*expires_ms as i64), &positions, &slots, &nonces],
                )?;
            }
            AttemptOp::Forget { queue_uid, slot } => {
                exec(
                    tx,
                    p,
                    "DELETE FROM retsu.attempts WHERE queue_uid = $1 AND attempt_id IN
                        (SELECT attempt_id FROM retsu.attempts WHERE queue_uid = $1 AND slot = $2)",
                    &[&(*queue_uid as i64), &(*slot as i64)],
                )?;
            }
        }
    }
    Ok(())
}

/// Counters only go up.
fn raise_counters(
    tx: &mut Transaction<'_>,
    p: &mut Prepared,
    batch: &Batch,
    gone: &HashSet<u64>,
) -> Result<(), Error> {
    let (mut queues, mut slots, mut nonces, mut sequences) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (uid, c) in batch.counters.iter().filter(|(uid, _)| !gone.contains(uid)) {
        queues.push(*uid as i64);
        slots.push(c.next_slot as i64);
        nonces.push(c.next_nonce as i64);
        sequences.push(c.last_sequence.to_string());
    }
    if queues.is_empty() {
        return Ok(());
    }
    exec(tx, p,
        "INSERT INTO retsu.counters (queue_uid, next_slot, next_nonce, last_sequence)
         SELECT q, s, n, l::numeric FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[])
            AS r(q, s, n, l)
         ON CONFLICT (queue_uid) DO UPDATE SET
            next_slot = GREATEST(retsu.counters.next_slot, excluded.next_slot),
            next_nonce = GREATEST(retsu.counters.next_nonce, excluded.next_nonce),
            last_sequence = GREATEST(retsu.counters.last_sequence, excluded.last_sequence)",
        &[&queues, &slots, &nonces, &sequences],
    )?;
    Ok(())
}
