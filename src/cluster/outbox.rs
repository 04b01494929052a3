//! Messages between queues of different shards: what a shard's engine
//! may hand to a queue it does not hold, and how the hand-over reaches the
//! target's engine, wherever that runs.
//!
//! A dead-letter move, a move task, an admin restore or an SNS delivery
//! whose target queue is in another shard is not a transfer inside one
//! engine and one commit. The source's engine asks [`ShardView`] (its
//! [`Elsewhere`]) whether the target exists elsewhere and what it is, then
//! takes the message out of its source and hands an [`Outbound`] record
//! to its journal, which writes it to `retsu.outbox` in the same commit as
//! the source's change, addressed to the target's shard, and notifies that
//! shard (`journal/postgres/commit.rs`). The shard's holder ([`Outbox::carry`])
//! reads its rows in the order written, gives each to its engine's
//! `accept_inbound`, and the journal marks the row taken in the commit
//! that stores the message. So a crash of either side, before or after
//! either commit, neither loses the message nor stores it twice: the row
//! exists exactly when the source's change does, and it is taken exactly
//! when the target's message exists (an engine also refuses a record it
//! accepted already and has not committed yet).
//!
//! A request that handed messages over is answered once its targets took
//! them in (or after a lease at most, when a target's shard is between
//! owners): a publish fanned out to a queue of another shard, or a receive
//! that dead-lettered, is then seen in its target by the caller's next
//! request, as on a single server. A move task's steps answer no request:
//! a listing of move tasks waits for them instead ([`Outbox::wait_unasked`]),
//! so a task it reads as COMPLETED has its messages in their targets.
//!
//! What other shards hold is read from `retsu.queues` (every shard's
//! queue records): all of it every quarter lease and whenever a shard's
//! queues change (NOTIFY retsu_queues), and one queue at a time, from the
//! database itself, when an engine asks for a queue that read does not
//! have (a queue made a moment ago) or for a check or a move that must not
//! act on an older answer (`Elsewhere::queue_now`). An SNS platform
//! endpoint of another shard's application (a topic's `application`
//! subscription) is asked of the database at each publish, from that
//! shard's stored SNS state (`Elsewhere::platform_endpoint`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

use tokio_postgres::{AsyncMessage, Client, NoTls};

use crate::engine::persist::QueueRecord;
use crate::engine::{Elsewhere, Engine, Outbound, RemoteQueue};

/// The channel a commit that writes outbox rows notifies, with the target
/// shard as the payload (`journal/postgres/commit.rs`).
const CHANNEL: &str = "retsu_outbox";

/// The channel a commit that takes outbox rows in notifies.
const TAKEN: &str = "retsu_outbox_taken";

/// The channel a commit that changes a shard's queues notifies.
const QUEUES: &str = "retsu_queues";

tokio::task_local! {
    /// The hand-overs made while answering the request this task serves.
    static HANDED: std::cell::RefCell<Vec<uuid::Uuid>>;
}

/// Runs `answer` (a request served by a local shard) and returns what it
/// answered with the ids of the messages it handed to other shards.
pub async fn noting_handovers<T>(
    answer: impl std::future::Future<Output = T>,
) -> (T, Vec<uuid::Uuid>) {
    HANDED
        .scope(std::cell::RefCell::new(Vec::new()), async move {
            let answered = answer.await;
            (answered, HANDED.with(|h| h.take()))
        })
        .await
}

/// Notes a shard engine's hand-overs for the request that made them
/// (subscribed to each shard's engine; the engine hands over on the
/// thread that serves the request), and those no request made (a move
/// task's steps) for the next listing of move tasks.
pub struct Watch(pub Arc<Outbox>);

impl crate::engine::events::Subscriber for Watch {
    fn publish(&self, _events: &[crate::engine::events::Event]) {}

    fn outbound(&self, records: &[Outbound]) {
        let ids = || records.iter().map(|r| r.id);
        if HANDED.try_with(|h| h.borrow_mut().extend(ids())).is_err() {
            self.0.note_unasked(records);
        }
    }
}

/// How long a hand-over no request made is remembered: less than taken
/// rows are kept before they are pruned (`journal/postgres/commit.rs`), so
/// that a row not found is one not written yet, never one pruned.
const UNASKED_FOR: Duration = Duration::from_secs(300);

/// How long an engine waits for a fresh read of what other shards hold.
const READ_WAIT: Duration = Duration::from_secs(2);

/// Rows carried per read.
const ROWS_PER_READ: i64 = 256;

/// What one read of `retsu.queues` found.
#[derive(Default)]
struct Snapshot {
    /// By ARN: the queue's shard and the facts a transfer checks.
    queues: HashMap<String, (i32, RemoteQueue)>,
    /// (ARN, shard) of every queue some queue of `shard` dead-letters into.
    targets: HashSet<(String, i32)>,
}

/// A question asked of the database itself, not of the last read.
enum Lookup {
    /// The queue with this ARN: its shard and facts.
    Queue(String),
    /// Whether a queue outside shard `.1` dead-letters into ARN `.0`.
    Target(String, i32),
    /// The queues outside shard `.1` that dead-letter into ARN `.0`.
    Sources(String, i32),
    /// The SNS platform endpoint with ARN `.0`, of an application outside
    /// shard `.1`.
    Endpoint(String, i32),
}

enum Answer {
    Queue(Option<(i32, RemoteQueue)>),
    Target(bool),
    Sources(Vec<crate::engine::QueueKey>),
    /// Whether it exists, and whether it is enabled.
    Endpoint(Option<bool>),
}

/// A platform endpoint's `Enabled` attribute, in the SNS state its
/// application's shard keeps (`Sns::snapshot`, in the shard's queue-level
/// state): a row when the endpoint exists, NULL when it does not say.
const ENDPOINT: &str = "SELECT e.value->'attributes'->>'Enabled'
     FROM retsu.shard_meta m
     CROSS JOIN LATERAL jsonb_array_elements(
        COALESCE(m.value::jsonb->'services'->'sns'->'platform_applications', '[]'::jsonb)) a
     CROSS JOIN LATERAL jsonb_each(a->'endpoints') e
     WHERE m.key = 'engine' AND m.shard <> $1 AND a->>'arn' = $2 AND e.key = $3";

#[derive(Default)]
struct Rounds {
    /// Reads started and finished so far.
    started: u64,
    finished: u64,
    /// A read is asked for.
    asked: bool,
    stop: bool,
    /// Lookups waiting for the reader, each with where its answer goes.
    lookups: Vec<(Lookup, std::sync::mpsc::SyncSender<Answer>)>,
}

/// The queues of every shard, as last read. One per node.
pub struct Directory {
    snapshot: RwLock<Arc<Snapshot>>,
    /// ARNs the database was asked for and did not have, forgotten when a
    /// shard's queues change: a receive from a queue whose dead-letter
    /// queue is gone asks once, not each time. (An SNS delivery asks each
    /// time before it drops a message: `ShardView::live_queue`.)
    missing: Mutex<HashSet<String>>,
    rounds: Mutex<Rounds>,
    changed: Condvar,
}

/// Misses remembered at most; more are asked again.
const MISSES_KEPT: usize = 4096;

impl Directory {
    /// Starts reading on a thread of its own (engines ask from inside
    /// their work, which must not wait on the runtime they run on).
    pub fn start(config: tokio_postgres::Config, every: Duration) -> Arc<Directory> {
        let directory = Arc::new(Directory {
            snapshot: RwLock::new(Arc::new(Snapshot::default())),
            missing: Mutex::new(HashSet::new()),
            rounds: Mutex::new(Rounds::default()),
            changed: Condvar::new(),
        });
        let reader = Arc::downgrade(&directory);
        std::thread::Builder::new()
            .name("retsu-directory".into())
            .spawn(move || read_forever(reader, config, every))
            .expect("a thread starts");
        directory
    }

    /// Reads again soon (a shard's queues changed).
    fn refresh_soon(&self) {
        self.forget_misses();
        self.rounds.lock().unwrap_or_else(|p| p.into_inner()).asked = true;
        self.changed.notify_all();
    }

    pub fn stop(&self) {
        self.rounds.lock().unwrap_or_else(|p| p.into_inner()).stop = true;
        self.changed.notify_all();
    }

    fn forget_misses(&self) {
        self.missing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    fn known_missing(&self, arn: &str) -> bool {
        self.missing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(arn)
    }

    fn note_missing(&self, arn: &str) {
        let mut missing = self.missing.lock().unwrap_or_else(|p| p.into_inner());
        if missing.len() < MISSES_KEPT {
            missing.insert(arn.to_string());
        }
    }

    fn current(&self) -> Arc<Snapshot> {
        self.snapshot
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Asks the database (through the reader's connection); `None` when
    /// it cannot answer in time. Engines ask from inside synchronous work;
    /// on a multi-threaded runtime the worker's other tasks move to other
    /// threads meanwhile.
    fn ask(&self, lookup: Lookup) -> Option<Answer> {
        let (send, answer) = std::sync::mpsc::sync_channel(1);
        {
            let mut rounds = self.rounds.lock().unwrap_or_else(|p| p.into_inner());
            if rounds.stop {
                return None;
            }
            rounds.lookups.push((lookup, send));
        }
        self.changed.notify_all();
        let wait = || answer.recv_timeout(READ_WAIT).ok();
        match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(wait)
            }
            _ => wait(),
        }
    }
}

fn read_forever(
    directory: std::sync::Weak<Directory>,
    config: tokio_postgres::Config,
    every: Duration,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            tracing::error!("cannot start the outbox directory's runtime: {e}");
            return;
        }
    };
    let mut client: Option<Client> = None;
    loop {
        let Some(dir) = directory.upgrade() else {
            return;
        };
        let lookups =
            std::mem::take(&mut dir.rounds.lock().unwrap_or_else(|p| p.into_inner()).lookups);
        if !lookups.is_empty() {
            for (lookup, reply) in lookups {
                match runtime.block_on(look_up(&mut client, &config, &lookup)) {
                    Ok(answer) => {
                        let _ = reply.send(answer);
                    }
                    Err(e) => {
                        client = None;
                        tracing::debug!("cannot look a queue up: {e}");
                    }
                }
            }
            continue;
        }
        {
            let mut rounds = dir.rounds.lock().unwrap_or_else(|p| p.into_inner());
            if !rounds.asked && !rounds.stop && rounds.lookups.is_empty() {
                rounds = dir
                    .changed
                    .wait_timeout(rounds, every)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
            if rounds.stop {
                return;
            }
            if !rounds.lookups.is_empty() && !rounds.asked {
                continue;
            }
            rounds.asked = false;
            rounds.started += 1;
        }
        match runtime.block_on(read(&mut client, &config)) {
            Ok(snapshot) => {
                *dir.snapshot.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(snapshot);
                dir.forget_misses();
            }
            Err(e) => {
                client = None;
                tracing::debug!("cannot read the shards' queues: {e}");
            }
        }
        dir.rounds
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .finished += 1;
        dir.changed.notify_all();
    }
}

async fn connected<'a>(
    client: &'a mut Option<Client>,
    config: &tokio_postgres::Config,
) -> Result<&'a Client, tokio_postgres::Error> {
    if client.as_ref().is_none_or(|c| c.is_closed()) {
        let (c, connection) = config.connect(NoTls).await?;
        tokio::spawn(connection);
        *client = Some(c);
    }
    Ok(client.as_ref().expect("connected above"))
}

/// A stored queue record as another shard's engine sees it: its ARN, the
/// facts, and the queue it dead-letters into, if any.
fn remote_of(text: &str) -> Option<(String, RemoteQueue, Option<String>)> {
    let record = serde_json::from_str::<QueueRecord>(text).ok()?;
    let target = record
        .attributes
        .get("RedrivePolicy")
        .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
        .and_then(|p| p.get("deadLetterTargetArn")?.as_str().map(String::from));
    let remote = RemoteQueue {
        fifo: record.fifo,
        redrive_allow_policy: record.attributes.get("RedriveAllowPolicy").cloned(),
        deleted: false,
    };
    let key = crate::engine::QueueKey {
        region: record.region,
        account: record.account,
        name: record.name,
    };
    Some((key.arn(), remote, target))
}

async fn read(
    client: &mut Option<Client>,
    config: &tokio_postgres::Config,
) -> Result<Snapshot, tokio_postgres::Error> {
    let rows = connected(client, config)
        .await?
        .query("SELECT shard, record FROM retsu.queues", &[])
        .await?;
    let mut snapshot = Snapshot::default();
    for row in rows {
        let shard: i32 = row.get(0);
        let Some((arn, remote, target)) = remote_of(row.get(1)) else {
            continue;
        };
        if let Some(target) = target {
            snapshot.targets.insert((target, shard));
        }
        snapshot.queues.insert(arn, (shard, remote));
    }
    Ok(snapshot)
}

async fn look_up(
    client: &mut Option<Client>,
    config: &tokio_postgres::Config,
    lookup: &Lookup,
) -> Result<Answer, tokio_postgres::Error> {
    let client = connected(client, config).await?;
    match lookup {
        Lookup::Queue(arn) => {
            let Some(key) = crate::engine::QueueKey::from_arn(arn) else {
                return Ok(Answer::Queue(None));
            };
            // The name's shard, then that shard's record of it.
            let row = client
                .query_opt(
                    "SELECT q.shard, q.record FROM retsu.placement p
                     JOIN retsu.queues q ON q.shard = p.shard
                        AND q.record::jsonb->>'account' = p.account
                        AND q.record::jsonb->>'region' = p.region
                        AND q.record::jsonb->>'name' = p.name
                     WHERE p.kind = 'queue' AND p.account = $1 AND p.region = $2 AND p.name = $3",
                    &[&key.account, &key.region, &key.name],
                )
                .await?;
            Ok(Answer::Queue(row.and_then(|row| {
                let shard: i32 = row.get(0);
                remote_of(row.get(1)).map(|(_, remote, _)| (shard, remote))
            })))
        }
        Lookup::Sources(arn, shard) => {
            let rows = client
                .query(
                    "SELECT record FROM retsu.queues WHERE shard <> $1
                     AND (record::jsonb->'attributes'->>'RedrivePolicy')::jsonb->>'deadLetterTargetArn' = $2",
                    &[shard, arn],
                )
                .await?;
            Ok(Answer::Sources(
                rows.iter()
                    .filter_map(|row| {
                        let (arn, _, _) = remote_of(row.get(0))?;
                        crate::engine::QueueKey::from_arn(&arn)
                    })
                    .collect(),
            ))
        }
        Lookup::Endpoint(arn, shard) => {
            let Some(app) = crate::sns::model::endpoint_application(arn) else {
                return Ok(Answer::Endpoint(None));
            };
            let row = client.query_opt(ENDPOINT, &[shard, &app, arn]).await?;
            Ok(Answer::Endpoint(row.map(|row| {
                row.get::<_, Option<String>>(0)
                    .is_none_or(|v| v.eq_ignore_ascii_case("true"))
            })))
        }
        Lookup::Target(arn, shard) => {
            let row = client
                .query_opt(
                    "SELECT 1 FROM retsu.queues WHERE shard <> $1
                     AND (record::jsonb->'attributes'->>'RedrivePolicy')::jsonb->>'deadLetterTargetArn' = $2
                     LIMIT 1",
                    &[shard, arn],
                )
                .await?;
            Ok(Answer::Target(row.is_some()))
        }
    }
}

/// What one shard's engine sees of the others: their queues, not its own
/// (a queue of its own that it no longer has is gone, whatever an older
/// read says).
pub struct ShardView {
    pub directory: Arc<Directory>,
    pub shard: i32,
}

impl Elsewhere for ShardView {
    fn queue(&self, arn: &str) -> Option<RemoteQueue> {
        if let Some(Some(known)) = self.last_read(arn) {
            return Some(known);
        }
        if self.directory.known_missing(arn) {
            return None;
        }
        // Perhaps made a moment ago, or read as this shard's own and moved
        // alone to another since: asked where the truth is kept.
        self.queue_now(arn)
    }

    /// The last read when it has the queue alive, else the database, past
    /// any remembered miss: a miss remembered from before the queue was
    /// made would drop the delivery.
    fn live_queue(&self, arn: &str) -> Option<RemoteQueue> {
        match self.last_read(arn) {
            Some(Some(known)) if !known.deleted => Some(known),
            _ => self.queue_now(arn).filter(|q| !q.deleted),
        }
    }

    fn queue_now(&self, arn: &str) -> Option<RemoteQueue> {
        match self.directory.ask(Lookup::Queue(arn.to_string())) {
            Some(Answer::Queue(found)) => {
                if found.is_none() {
                    self.directory.note_missing(arn);
                }
                found
                    .filter(|(shard, _)| *shard != self.shard)
                    .map(|(_, q)| q)
            }
            // The database did not answer in time: what was read last.
            _ => self.last_read(arn).flatten(),
        }
    }

    /// Asked by the admin API's view of a queue: read where the truth is kept.
    fn dead_letter_sources(&self, arn: &str) -> Vec<crate::engine::QueueKey> {
        match self
            .directory
            .ask(Lookup::Sources(arn.to_string(), self.shard))
        {
            Some(Answer::Sources(found)) => found,
            _ => Vec::new(),
        }
    }

    /// Asked by a publish to a topic with a subscription to the endpoint:
    /// read where the truth is kept (endpoints are not in the last read).
    fn platform_endpoint(&self, arn: &str) -> Option<bool> {
        match self
            .directory
            .ask(Lookup::Endpoint(arn.to_string(), self.shard))
        {
            Some(Answer::Endpoint(found)) => found,
            _ => None,
        }
    }

    /// Asked by StartMessageMoveTask only: read where the truth is kept.
    fn is_dead_letter_target(&self, arn: &str) -> bool {
        match self
            .directory
            .ask(Lookup::Target(arn.to_string(), self.shard))
        {
            Some(Answer::Target(found)) => found,
            _ => self
                .directory
                .current()
                .targets
                .iter()
                .any(|(t, shard)| t == arn && *shard != self.shard),
        }
    }
}

impl ShardView {
    /// What the last read says of `arn`: `None` when it does not have it,
    /// `Some(None)` when it is this shard's own.
    fn last_read(&self, arn: &str) -> Option<Option<RemoteQueue>> {
        let known = self.directory.current().queues.get(arn).cloned()?;
        Some((known.0 != self.shard).then_some(known.1))
    }
}

/// Carries outbox rows to the engines of the shards this node holds.
pub struct Outbox {
    config: tokio_postgres::Config,
    /// Woken when a shard's rows may be waiting, by shard.
    wakes: Mutex<HashMap<i32, Arc<tokio::sync::Notify>>>,
    client: tokio::sync::Mutex<Option<Arc<Client>>>,
    every: Duration,
    /// Woken whenever some shard took rows in.
    taken: tokio::sync::Notify,
    /// Read again whenever a shard's queues change.
    directory: Arc<Directory>,
    /// The last hand-over no request made, by target queue ARN, and when.
    /// A target's shard takes its rows in the order written, so once the
    /// last is taken, so is every one before it.
    unasked: Mutex<HashMap<String, (uuid::Uuid, std::time::Instant)>>,
}

impl Outbox {
    pub fn new(
        config: tokio_postgres::Config,
        every: Duration,
        directory: Arc<Directory>,
    ) -> Arc<Outbox> {
        Arc::new(Outbox {
            config,
            wakes: Mutex::new(HashMap::new()),
            client: tokio::sync::Mutex::new(None),
            every,
            taken: tokio::sync::Notify::new(),
            directory,
            unasked: Mutex::new(HashMap::new()),
        })
    }

    fn wake_of(&self, shard: i32) -> Arc<tokio::sync::Notify> {
        self.wakes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(shard)
            .or_default()
            .clone()
    }

    fn wake_all(&self) {
        for wake in self
            .wakes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            wake.notify_one();
        }
    }

    /// The connection rows are read on, LISTENing for new ones; after a
    /// reconnect every shard looks (notices may have been missed).
    async fn client(self: &Arc<Self>) -> Result<Arc<Client>, String> {
        let mut guard = self.client.lock().await;
        if guard.as_ref().is_none_or(|c| c.is_closed()) {
            let describe = |e: tokio_postgres::Error| crate::journal::describe_postgres_error(&e);
            let (client, mut connection) = self.config.connect(NoTls).await.map_err(describe)?;
            let outbox = Arc::downgrade(self);
            tokio::spawn(async move {
                loop {
                    let message = std::future::poll_fn(|cx| connection.poll_message(cx)).await;
                    let Some(outbox) = outbox.upgrade() else {
                        return;
                    };
                    match message {
                        Some(Ok(AsyncMessage::Notification(n))) if n.channel() == TAKEN => {
                            outbox.taken.notify_waiters();
                        }
                        Some(Ok(AsyncMessage::Notification(n))) if n.channel() == QUEUES => {
                            outbox.directory.refresh_soon();
                        }
                        Some(Ok(AsyncMessage::Notification(n))) => {
                            if let Ok(shard) = n.payload().parse::<i32>() {
                                outbox.wake_of(shard).notify_one();
                            }
                        }
                        Some(Ok(_)) => {}
                        Some(Err(_)) | None => return,
                    }
                }
            });
            client
                .batch_execute(&format!(
                    "LISTEN {CHANNEL}; LISTEN {TAKEN}; LISTEN {QUEUES}"
                ))
                .await
                .map_err(describe)?;
            *guard = Some(Arc::new(client));
            self.wake_all();
            self.taken.notify_waiters();
        }
        Ok(guard.clone().expect("connected above"))
    }

    fn note_unasked(&self, records: &[Outbound]) {
        let now = std::time::Instant::now();
        let mut unasked = self.unasked.lock().unwrap_or_else(|p| p.into_inner());
        for r in records {
            unasked.insert(r.target_arn.clone(), (r.id, now));
        }
    }

    /// Waits until the hand-overs no request made (see [`Watch`]) are
    /// taken in, as [`Outbox::wait_taken`] does for a request's: what a
    /// listing of move tasks waits for, so that a task it reads as
    /// COMPLETED has its messages in their targets. Their rows may not be
    /// written yet (the source's commit runs on its own), so a row not
    /// found counts as not taken.
    pub async fn wait_unasked(self: &Arc<Self>, most: Duration) {
        let ids: Vec<uuid::Uuid> = {
            let mut unasked = self.unasked.lock().unwrap_or_else(|p| p.into_inner());
            unasked.retain(|_, (_, at)| at.elapsed() < UNASKED_FOR);
            unasked.values().map(|(id, _)| *id).collect()
        };
        if ids.is_empty() {
            return;
        }
        self.wait_for(&ids, most, true).await;
        // Taken, or waited for as long as a request waits: either way not
        // waited for again.
        self.unasked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, (id, _)| !ids.contains(id));
    }

    /// Waits until the rows `ids` are taken in by their targets, or
    /// `most` passed (a target's shard between owners: the message gets
    /// there when a node takes the shard; the answer need not wait).
    pub async fn wait_taken(self: &Arc<Self>, ids: &[uuid::Uuid], most: Duration) {
        self.wait_for(ids, most, false).await
    }

    /// [`Outbox::wait_taken`]; `written`: a row not found is not taken yet.
    async fn wait_for(self: &Arc<Self>, ids: &[uuid::Uuid], most: Duration, written: bool) {
        let ids: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
        let found = if written { ids.len() as i64 } else { 0 };
        let deadline = tokio::time::Instant::now() + most;
        loop {
            let taken = self.taken.notified();
            tokio::pin!(taken);
            taken.as_mut().enable();
            let waiting = match self.client().await {
                Ok(client) => client
                    .query_one(
                        "SELECT count(*) FILTER (WHERE taken_at IS NULL), count(*)
                         FROM retsu.outbox WHERE id = ANY($1::text[])",
                        &[&ids],
                    )
                    .await
                    .map(|row| (row.get::<_, i64>(0), row.get::<_, i64>(1)))
                    .map_err(|e| crate::journal::describe_postgres_error(&e)),
                Err(e) => Err(e),
            };
            match waiting {
                Ok((0, rows)) if rows >= found => return,
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!("cannot read whether hand-overs were taken: {e}");
                    *self.client.lock().await = None;
                }
            }
            if tokio::time::timeout_at(deadline, taken).await.is_err() {
                return;
            }
        }
    }

    /// Carries `shard`'s rows to `engine` until the task is aborted (the
    /// shard given up): at once, whenever a commit notifies the shard,
    /// and every quarter lease in case a notice was lost.
    pub fn carry(self: &Arc<Self>, shard: i32, engine: Arc<Engine>) -> tokio::task::JoinHandle<()> {
        let outbox = self.clone();
        let wake = self.wake_of(shard);
        tokio::spawn(async move {
            loop {
                let more = match outbox.carry_once(shard, &engine).await {
                    Ok(more) => more,
                    Err(e) => {
                        tracing::debug!(shard, "cannot carry the outbox: {e}");
                        *outbox.client.lock().await = None;
                        false
                    }
                };
                if !more {
                    let _ = tokio::time::timeout(outbox.every, wake.notified()).await;
                }
            }
        })
    }

    /// Offers the shard's waiting rows, oldest first, and waits for their
    /// commit; true when more may be waiting.
    async fn carry_once(self: &Arc<Self>, shard: i32, engine: &Engine) -> Result<bool, String> {
        let rows = {
            let client = self.client().await?;
            client
                .query(
                    "SELECT id, record FROM retsu.outbox
                     WHERE target_shard = $1 AND taken_at IS NULL ORDER BY seq LIMIT $2",
                    &[&shard, &ROWS_PER_READ],
                )
                .await
                .map_err(|e| crate::journal::describe_postgres_error(&e))?
        };
        if rows.is_empty() {
            return Ok(false);
        }
        let mut refused: Vec<String> = Vec::new();
        // Refused because the target is not here: perhaps moved alone to
        // another shard after the row was addressed (`queue_move.rs`).
        let mut missing: Vec<(String, String)> = Vec::new();
        for row in &rows {
            let id: String = row.get(0);
            let text: &str = row.get(1);
            let record: Outbound = match serde_json::from_str(text) {
                Ok(r) => r,
                Err(e) => {
                    tracing::error!(
                        shard,
                        id,
                        "an outbox row cannot be read ({e}); it is left where it is"
                    );
                    continue;
                }
            };
            let target = record.target_arn.clone();
            if let Err(e) = engine.accept_inbound(record) {
                if e.code == crate::error::ErrorCode::QueueDoesNotExist {
                    missing.push((id, target));
                    continue;
                }
                tracing::warn!(
                    shard,
                    id,
                    target,
                    "a message handed over from another shard was refused by its target ({}); it is dropped",
                    e.message
                );
                refused.push(id);
            }
        }
        // The taken marks are in the commits of the messages they stored.
        engine
            .persisted(false)
            .await
            .map_err(|e| format!("the shard's journal: {}", e.message))?;
        for (id, target) in missing {
            let moved_to = match crate::engine::QueueKey::from_arn(&target) {
                Some(key) => self
                    .client()
                    .await?
                    .query_opt(
                        "SELECT shard FROM retsu.placement
                         WHERE kind = 'queue' AND account = $1 AND region = $2 AND name = $3",
                        &[&key.account, &key.region, &key.name],
                    )
                    .await
                    .map_err(|e| crate::journal::describe_postgres_error(&e))?
                    .map(|r| r.get::<_, i32>(0))
                    .filter(|s| *s != shard),
                None => None,
            };
            match moved_to {
                Some(to) => {
                    self.client()
                        .await?
                        .execute(
                            "WITH r AS (UPDATE retsu.outbox SET target_shard = $2
                                WHERE id = $1 AND taken_at IS NULL RETURNING 1)
                             SELECT pg_notify('retsu_outbox', $2::int::text) FROM r",
                            &[&id, &to],
                        )
                        .await
                        .map_err(|e| crate::journal::describe_postgres_error(&e))?;
                }
                None => {
                    tracing::warn!(
                        shard,
                        id,
                        target,
                        "a message handed over from another shard was refused by its target (the queue does not exist); it is dropped"
                    );
                    refused.push(id);
                }
            }
        }
        if !refused.is_empty() {
            // One statement: the connection is shared by other tasks.
            self.client()
                .await?
                .execute(
                    "WITH t AS (UPDATE retsu.outbox SET taken_at = now()
                        WHERE id = ANY($1::text[]) AND taken_at IS NULL RETURNING 1)
                     SELECT pg_notify('retsu_outbox_taken', '') WHERE EXISTS (SELECT 1 FROM t)",
                    &[&refused],
                )
                .await
                .map_err(|e| crate::journal::describe_postgres_error(&e))?;
        }
        Ok(rows.len() as i64 == ROWS_PER_READ)
    }
}
