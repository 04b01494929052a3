//! Moving one queue to a node, alone (`retsu cluster move`).
//!
//! A queue's rows name their shard only through `retsu.queues.shard` (its
//! messages, counters, deduplication window and receive attempts are keyed
//! by the queue), so a queue changes shard by one update of that row and
//! of its placement. The holder of its shard does it, with the shard's
//! engine stopped and committed, in one statement fenced on the shard's
//! epoch (`retsu.move_queues`, a PL/pgSQL function the store has from format 6 on,
//! so the move is one round trip and one transaction): the queue goes
//! into a shard of its own (one this node holds with
//! nothing in it, or a new lease row), released at once and moved to the
//! node asked for, which takes it and loads it as after a failover. The
//! old shard is loaded again without it. Hand-overs already addressed to
//! the queue's old shard are readdressed in the same statement; one
//! addressed there later, from an older read, is readdressed by the old
//! shard's carrier (`outbox.rs`).
//!
//! A shard of its own rather than a running engine of the target node:
//! engines load whole shards only, so nothing new loads a queue into an
//! engine that is serving. What a shard's engine keeps for all its queues
//! (message move tasks) stays with the shard, so a queue whose messages a
//! move task is still moving waits for the task to end.
//!
//! The admin API asks for this only when it is needed: a queue alone in
//! its shard (one moved before) moves with the shard, and a queue whose
//! shard the named node holds stays where it is (`front.rs`), so moving
//! one queue back and forth adds no shards.
//!
//! Every move counts in `meta.moves`. Nodes keep where each name is; a
//! node that sees the count change reads the names again, and for a lease
//! after it, checks that a request passed on for a shard it holds is for
//! a name still there (`front.rs`), so a request routed on an older read
//! is routed again, not answered "no such queue".

/// What one pass moved: each queue's name and its new shard.
pub type Moved = Vec<(String, i32)>;

/// Why a move did not happen.
pub enum Failed {
    /// The shard's lease is another node's now: this node must stop.
    Fenced(String),
    /// Anything else (the database unreachable, a limit): nothing changed;
    /// the move stays asked and is tried again.
    Other(String),
}

/// Moves `asked` (queues of shard `from`, held at `epoch`, its engine
/// stopped) each into a shard of its own: one of `spares` (empty shards
/// this node holds, engines stopped) while there are any, then new ones.
/// Every spare is released in the same statement, moved to the node asked
/// for when it was used (`retsu.move_queues`, in `journal/postgres/schema.rs`).
pub async fn carry_out(
    members: &mut super::membership::Membership,
    from: (i32, i64),
    spares: &[(i32, i64)],
    asked: &[super::membership::AskedMove],
) -> Result<Moved, Failed> {
    members
        .move_queues(from, spares, asked)
        .await
        .map_err(|(code, text)| match code.as_deref() {
            // retsu.fence's own code.
            Some("RT001") => Failed::Fenced(text),
            _ => Failed::Other(text),
        })
}
