//! Persistence: the journal keeps a data directory's SQLite database in
//! step with the engine, and loads it back at start.
//!
//! It is a subscriber of the engine's event stream (engine/events.rs): the
//! one place where messages change state reports each change, with a
//! snapshot of the message (and, for FIFO receives with a
//! ReceiveRequestAttemptId, the attempt), and the engine reports its
//! queue-level state after each queue-level action, admin API changes and
//! move-task steps included (engine/persist.rs). Changes that only make
//! sense together (a message leaving one queue and arriving in another; a
//! move task's step and its new count) come as an event group, held on the
//! publishing thread and pushed at once, so they share a commit. Publishing only
//! appends to a pending list; one writer thread turns whatever is pending
//! into one SQLite transaction and commits it (WAL, `synchronous=FULL`:
//! one fsync per commit), so the requests of many clients share a commit
//! (group commit). Every answer waits until the commit that holds what
//! was emitted before it (`Engine::handle`), so a successful response
//! survives `kill -9` and a power cut. `--durability relaxed` answers at
//! once and commits every `RELAXED_INTERVAL`.
//!
//! Time-driven transitions (a delay ending, a visibility timeout running
//! out) write nothing: the stored deadlines say it all, and the engine
//! applies them lazily after a restart as it does in memory.
//!
//! A failed commit (disk full, I/O error) keeps its changes pending and is
//! retried; meanwhile requests that would change state are refused with
//! InternalError before they run (so memory runs at most one batch ahead
//! of the disk), move tasks pause, and read-only actions are served.
//! `RETSU_TEST_MAX_DB_PAGES` (test-only) caps the database so tests can
//! make commits fail as a full disk does.
//!
//! Why SQLite rather than redb: see BENCHMARKS.md ("Persistence store").

use std::collections::HashMap;
use std::fs::File;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, OptionalExtension};
use uuid::Uuid;

use crate::api::MessageAttributes;
use crate::clock::Clock;
use crate::engine::events::{Event, Subscriber};
use crate::engine::persist::{DedupRecord, Durability, EngineState, DEDUP_WINDOW_MS};
use crate::engine::{Engine, EngineConfig, Rare, State, StoredMessage, Transition};
use crate::error::SqsError;

/// The layout this build writes and reads. Bump it (and migrate or
/// refuse) whenever a table changes. 2 added `attempts` (format 1 is
/// migrated at open: the table is created).
pub const FORMAT: i64 = 2;
const DB_FILE: &str = "retsu.sqlite3";
const LOCK_FILE: &str = "retsu.lock";
/// How often `--durability relaxed` commits: the most it can lose.
pub const RELAXED_INTERVAL: Duration = Duration::from_millis(200);
/// Test-only knob: caps the database at this many pages (SQLite's
/// `max_page_count`), so tests can make writes fail as a full disk does.
/// Not a setting: nothing else reads it, and it is never needed in use.
pub const TEST_MAX_PAGES: &str = "RETSU_TEST_MAX_DB_PAGES";
/// A failed commit is retried after this long.
const RETRY: Duration = Duration::from_millis(500);

/// How a successful answer relates to the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DurabilityMode {
    /// Answer only after the commit (group commit, fsync).
    #[default]
    Full,
    /// Answer at once; commit every 200 ms.
    Relaxed,
}

/// A change to write.
enum Op {
    /// A message as it is now (sent, received, visibility changed, ...).
    Put {
        queue_uid: u64,
        slot: u64,
        message: Arc<StoredMessage>,
        /// Sent: the row is new (write the body); otherwise only its state.
        new: bool,
    },
    Delete {
        queue_uid: u64,
        slot: u64,
    },
    Dedup {
        queue_uid: u64,
        record: DedupRecord,
    },
    /// A FIFO receive attempt (ReceiveRequestAttemptId) and what it
    /// returned, replacing any earlier one of the same id.
    Attempt {
        queue_uid: u64,
        id: Arc<str>,
        expires_ms: u64,
        /// (slot, receipt nonce), in the order returned.
        messages: Vec<(u64, u64)>,
    },
    /// A visibility change not made by an attempt's retry: the attempts
    /// that returned this message are void.
    ForgetAttempts {
        queue_uid: u64,
        slot: u64,
    },
    Queues(EngineState),
}

#[derive(Default)]
struct Pending {
    ops: Vec<Op>,
    /// Counts publications; a waiter waits for the commit of its ticket.
    ticket: u64,
    closing: bool,
}

#[derive(Debug, Clone, Copy, Default)]
struct Status {
    /// Every ticket up to here is committed.
    durable: u64,
    /// The last failed commit covered tickets up to here.
    failed: u64,
}

struct Inner {
    pending: Mutex<Pending>,
    wake: Condvar,
    status: tokio::sync::watch::Sender<Status>,
    relaxed: bool,
    /// The last commit failed and none has succeeded since.
    failing: AtomicBool,
}

/// The open journal of a data directory.
pub struct Journal {
    inner: Arc<Inner>,
    writer: Mutex<Option<JoinHandle<()>>>,
    /// Held for the journal's life: the data directory's lock.
    _lock: File,
    pub dir: PathBuf,
    /// What was loaded: (queues, messages).
    pub restored: (usize, usize),
}

fn sql_err(dir: &Path, e: rusqlite::Error) -> String {
    format!("data directory {}: {e}", dir.display())
}

/// Takes the directory's lock, or says who holds it.
fn lock_dir(dir: &Path) -> Result<File, String> {
    use std::io::Write;
    use std::os::unix::io::AsRawFd;
    let path = dir.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    // SAFETY: flock on a file descriptor we own; no memory is shared.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        let holder = std::fs::read_to_string(&path).unwrap_or_default();
        return Err(format!(
            "data directory {} is in use by another Retsu server{} (lock {}); stop it or choose another --data-dir",
            dir.display(),
            match holder.trim() {
                "" => String::new(),
                pid => format!(" (pid {pid})"),
            },
            path.display()
        ));
    }
    let _ = file.set_len(0);
    let _ = write!(file, "{}", std::process::id());
    let _ = file.sync_all();
    Ok(file)
}

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

fn state_columns(state: State) -> (i64, i64) {
    match state {
        State::Available => (0, 0),
        State::Delayed(until) => (1, until as i64),
        State::InFlight(until) => (2, until as i64),
    }
}

fn state_of(kind: i64, until: i64) -> State {
    match kind {
        1 => State::Delayed(until as u64),
        2 => State::InFlight(until as u64),
        _ => State::Available,
    }
}

impl Journal {
    /// Opens (or creates) a data directory, loads it into a new engine,
    /// and starts journaling that engine. Fails with a message meant for
    /// the operator: locked, another format, unreadable.
    pub fn open(
        dir: &Path,
        mode: DurabilityMode,
        clock: Arc<dyn Clock>,
        config: EngineConfig,
    ) -> Result<(Arc<Engine>, Arc<Journal>), String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create data directory {}: {e}", dir.display()))?;
        let lock = lock_dir(dir)?;
        let path = dir.join(DB_FILE);
        let mut conn = Connection::open(&path).map_err(|e| sql_err(dir, e))?;
        let err = |e| sql_err(dir, e);
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| format!("{} is not a Retsu data directory ({e})", dir.display()))?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(err)?;
        if let Some(pages) = std::env::var(TEST_MAX_PAGES)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            // Test-only: the database cannot grow past this many pages, so
            // writes fail with SQLITE_FULL exactly as on a full disk.
            tracing::warn!("{TEST_MAX_PAGES}={pages}: the database is capped (a test knob)");
            conn.pragma_update(None, "max_page_count", pages)
                .map_err(err)?;
        }
        let secret = Self::prepare(&mut conn, dir)?;

        let engine = Engine::with_secret(clock.clone(), config, Some(&secret));
        let restored = Self::load(&conn, &engine, dir)?;

        let (status, _) = tokio::sync::watch::channel(Status::default());
        let inner = Arc::new(Inner {
            pending: Mutex::new(Pending::default()),
            wake: Condvar::new(),
            status,
            relaxed: mode == DurabilityMode::Relaxed,
            failing: AtomicBool::new(false),
        });
        let writer = {
            let inner = inner.clone();
            std::thread::Builder::new()
                .name("retsu-journal".into())
                .spawn(move || writer(conn, inner, clock))
                .map_err(|e| format!("cannot start the journal: {e}"))?
        };
        let journal = Arc::new(Journal {
            inner,
            writer: Mutex::new(Some(writer)),
            _lock: lock,
            dir: dir.to_path_buf(),
            restored,
        });
        engine.subscribe(Arc::new(Feed(journal.inner.clone())));
        engine.set_durability(journal.clone());
        Ok((engine, journal))
    }

    /// Checks (or sets up) the format; returns the receipt-handle secret.
    fn prepare(conn: &mut Connection, dir: &Path) -> Result<Vec<u8>, String> {
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

    /// Puts the stored state into the engine. Returns (queues, messages).
    fn load(conn: &Connection, engine: &Engine, dir: &Path) -> Result<(usize, usize), String> {
        let err = |e| sql_err(dir, e);
        let mut state: EngineState = conn
            .query_row("SELECT value FROM meta WHERE key = 'engine'", [], |r| {
                r.get::<_, String>(0)
            })
            .optional()
            .map_err(err)?
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        let mut stmt = conn.prepare("SELECT record FROM queues").map_err(err)?;
        let records = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(err)?;
        for record in records {
            let record = record.map_err(err)?;
            let record = serde_json::from_str(&record)
                .map_err(|e| format!("data directory {}: bad queue record: {e}", dir.display()))?;
            state.queues.push(record);
        }
        let mut restorer = engine.restorer(state);

        let mut stmt = conn
            .prepare("SELECT queue_uid, next_slot, next_nonce, last_sequence FROM counters")
            .map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let seq: String = r.get(3).map_err(err)?;
            restorer.counters(
                r.get::<_, i64>(0).map_err(err)? as u64,
                r.get::<_, i64>(1).map_err(err)? as u64,
                r.get::<_, i64>(2).map_err(err)? as u64,
                seq.parse().unwrap_or(0),
            );
        }

        // Oldest first: the engine's window is a queue by expiry.
        let mut stmt = conn
            .prepare("SELECT queue_uid, grp, dedup_id, message_id, sequence_number, expires_ms FROM dedup ORDER BY expires_ms")
            .map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let id: Vec<u8> = r.get(3).map_err(err)?;
            let seq: String = r.get(4).map_err(err)?;
            restorer.dedup(
                r.get::<_, i64>(0).map_err(err)? as u64,
                DedupRecord {
                    group: r.get(1).map_err(err)?,
                    dedup_id: r.get(2).map_err(err)?,
                    message_id: Uuid::from_slice(&id).unwrap_or_default(),
                    sequence_number: seq.parse().unwrap_or(0),
                    expires_ms: r.get::<_, i64>(5).map_err(err)? as u64,
                },
            );
        }

        // FIFO receive attempts: one row per message returned, in order.
        let mut stmt = conn
            .prepare("SELECT queue_uid, attempt_id, slot, nonce, expires_ms FROM attempts ORDER BY queue_uid, attempt_id, pos")
            .map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        // (queue uid, attempt id, expiry, (slot, nonce) of each message).
        type Loading = (u64, String, u64, Vec<(u64, u64)>);
        let mut current: Option<Loading> = None;
        while let Some(r) = rows.next().map_err(err)? {
            let uid = r.get::<_, i64>(0).map_err(err)? as u64;
            let id: String = r.get(1).map_err(err)?;
            let entry = (
                r.get::<_, i64>(2).map_err(err)? as u64,
                r.get::<_, i64>(3).map_err(err)? as u64,
            );
            let expires = r.get::<_, i64>(4).map_err(err)? as u64;
            match &mut current {
                Some((u, i, _, messages)) if *u == uid && *i == id => messages.push(entry),
                _ => {
                    if let Some((u, i, e, messages)) = current.take() {
                        restorer.attempt(u, i, e, messages);
                    }
                    current = Some((uid, id, expires, vec![entry]));
                }
            }
        }
        if let Some((u, i, e, messages)) = current {
            restorer.attempt(u, i, e, messages);
        }

        let mut stmt = conn
            .prepare(
                "SELECT queue_uid, slot, message_id, body, body_md5, attributes, trace_header,
                        sender_id, sent_ms, enqueued_ms, first_receive_ms, receive_count,
                        group_id, dedup_id, sequence_number, dead_letter_source_arn, state,
                        until_ms, nonce, received_ms, visible_since, ord
                 FROM messages",
            )
            .map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        let mut count = 0;
        // Senders are few: share one string per sender, as in memory.
        let mut senders: HashMap<String, Arc<str>> = HashMap::new();
        let mut groups: HashMap<String, Arc<str>> = HashMap::new();
        while let Some(r) = rows.next().map_err(err)? {
            let id: Vec<u8> = r.get(2).map_err(err)?;
            let md5: Vec<u8> = r.get(4).map_err(err)?;
            let attributes: Option<String> = r.get(5).map_err(err)?;
            let attributes: MessageAttributes = match attributes {
                Some(a) => serde_json::from_str(&a).map_err(|e| {
                    format!(
                        "data directory {}: bad message attributes: {e}",
                        dir.display()
                    )
                })?,
                None => MessageAttributes::new(),
            };
            let sender: String = r.get(7).map_err(err)?;
            let sender_id = senders
                .entry(sender)
                .or_insert_with_key(|s| Arc::from(s.as_str()))
                .clone();
            let group: Option<String> = r.get(12).map_err(err)?;
            let group_id = group.map(|g| {
                groups
                    .entry(g)
                    .or_insert_with_key(|g| Arc::from(g.as_str()))
                    .clone()
            });
            let seq: Option<String> = r.get(14).map_err(err)?;
            let source: Option<String> = r.get(15).map_err(err)?;
            let message = StoredMessage {
                message_id: Uuid::from_slice(&id).unwrap_or_default(),
                body: r.get(3).map_err(err)?,
                body_md5: md5.try_into().unwrap_or_default(),
                attributes,
                sender_id,
                sent_ms: r.get::<_, i64>(8).map_err(err)? as u64,
                enqueued_ms: r.get::<_, i64>(9).map_err(err)? as u64,
                first_receive_ms: r.get::<_, Option<i64>>(10).map_err(err)?.map(|v| v as u64),
                receive_count: r.get::<_, i64>(11).map_err(err)? as u32,
                rare: Rare {
                    trace_header: r.get(6).map_err(err)?,
                    group_id,
                    dedup_id: r.get(13).map_err(err)?,
                    sequence_number: seq.and_then(|s| s.parse().ok()),
                    dead_letter_source_arn: source.map(Arc::from),
                }
                .boxed(),
                state: state_of(r.get(16).map_err(err)?, r.get(17).map_err(err)?),
                nonce: r.get::<_, i64>(18).map_err(err)? as u64,
                received_ms: r.get::<_, i64>(19).map_err(err)? as u64,
                visible_since: r.get::<_, i64>(20).map_err(err)? as u64,
                order: r.get::<_, i64>(21).map_err(err)? as u64,
            };
            let (uid, slot) = (
                r.get::<_, i64>(0).map_err(err)? as u64,
                r.get::<_, i64>(1).map_err(err)? as u64,
            );
            if restorer.message(uid, slot, message) {
                count += 1;
            }
        }
        Ok((restorer.queue_count(), count))
    }

    /// Commits what is pending and stops the writer (on shutdown).
    pub fn close(&self) {
        {
            let mut pending = self.inner.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending.closing = true;
        }
        self.inner.wake.notify_all();
        if let Some(writer) = self.writer.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = writer.join();
        }
    }
}

impl Durability for Journal {
    fn failing(&self) -> bool {
        self.inner.failing.load(Ordering::Acquire)
    }

    fn wait(&self) -> Pin<Box<dyn Future<Output = Result<(), SqsError>> + Send + '_>> {
        let ticket = self
            .inner
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .ticket;
        let mut status = self.inner.status.subscribe();
        Box::pin(async move {
            if self.inner.relaxed {
                return Ok(());
            }
            loop {
                let s = *status.borrow_and_update();
                if s.durable >= ticket {
                    return Ok(());
                }
                if s.failed >= ticket {
                    return Err(write_failed());
                }
                if status.changed().await.is_err() {
                    return Err(write_failed());
                }
            }
        })
    }
}

pub(crate) fn write_failed() -> SqsError {
    SqsError::internal(
        "The server could not write to its data directory; the request may not have taken effect. Please retry.",
    )
}

/// The journal's subscription: events become pending writes.
struct Feed(Arc<Inner>);

impl Subscriber for Feed {
    fn publish(&self, events: &[Event]) {
        use Transition::*;
        let mut ops = Vec::with_capacity(events.len());
        for e in events {
            let Some(stored) = &e.stored else { continue };
            let (queue_uid, slot) = (stored.queue_uid, stored.slot);
            match e.kind {
                Sent | ArrivedFromSource | RestoredIn | Duplicated | Received
                | VisibilityChanged | Released => {
                    // No snapshot: time-driven (derived from the stored
                    // deadline on load) or already gone again.
                    let Some(message) = &stored.message else {
                        continue;
                    };
                    let new = matches!(e.kind, Sent | ArrivedFromSource | RestoredIn | Duplicated);
                    if e.kind == Sent && message.sequence_number().is_some() {
                        if let Some(record) = DedupRecord::of(message) {
                            ops.push(Op::Dedup { queue_uid, record });
                        }
                    }
                    match (e.kind, &stored.attempt) {
                        (Received, Some(id)) => {
                            // One receive's messages arrive in one publish.
                            let same = |op: &Op| matches!(op, Op::Attempt { queue_uid: q, id: i, .. } if *q == queue_uid && i == id);
                            let at = match ops.iter().rposition(same) {
                                Some(at) => at,
                                None => {
                                    ops.push(Op::Attempt {
                                        queue_uid,
                                        id: id.clone(),
                                        expires_ms: e.at_ms + DEDUP_WINDOW_MS,
                                        messages: Vec::new(),
                                    });
                                    ops.len() - 1
                                }
                            };
                            if let Op::Attempt { messages, .. } = &mut ops[at] {
                                messages.push((slot, message.nonce));
                            }
                        }
                        (VisibilityChanged, None) if message.group_id().is_some() => {
                            ops.push(Op::ForgetAttempts { queue_uid, slot })
                        }
                        _ => {}
                    }
                    ops.push(Op::Put {
                        queue_uid,
                        slot,
                        message: message.clone(),
                        new,
                    });
                }
                Deleted
                | Expired
                | Purged
                | QueueDeleted
                | AdminDeleted
                | MovedToDeadLetterQueue
                | MovedByTask
                | RestoredOut => ops.push(Op::Delete { queue_uid, slot }),
                DelayEnded | StaleDelete => {}
            }
        }
        if ops.is_empty() {
            return;
        }
        self.0.push_or_hold(ops);
    }

    fn queues_changed(&self, state: &EngineState) {
        self.0.push_or_hold(vec![Op::Queues(state.clone())]);
    }

    fn begin_group(&self) {
        let id = Arc::as_ptr(&self.0) as usize;
        GROUPS.with(|g| g.borrow_mut().push((id, Vec::new())));
    }

    fn end_group(&self) {
        let id = Arc::as_ptr(&self.0) as usize;
        let ops = GROUPS.with(|g| {
            let mut g = g.borrow_mut();
            let i = g.iter().position(|(j, _)| *j == id)?;
            Some(g.swap_remove(i).1)
        });
        if let Some(ops) = ops.filter(|o| !o.is_empty()) {
            self.0.push(ops);
        }
    }
}

thread_local! {
    /// Changes of an open group (`Subscriber::begin_group`), per journal:
    /// held on the publishing thread and pushed as one publication at its
    /// end, so the writer commits all of them or none.
    static GROUPS: std::cell::RefCell<Vec<(usize, Vec<Op>)>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Inner {
    /// Pushes `ops`, or holds them in this thread's open group.
    fn push_or_hold(self: &Arc<Self>, ops: Vec<Op>) {
        let id = Arc::as_ptr(self) as usize;
        let held = GROUPS.with(|g| {
            let mut g = g.borrow_mut();
            match g.iter_mut().find(|(j, _)| *j == id) {
                Some((_, group)) => {
                    group.extend(ops);
                    None
                }
                None => Some(ops),
            }
        });
        if let Some(ops) = held {
            self.push(ops);
        }
    }

    fn push(&self, mut ops: Vec<Op>) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if pending.ops.is_empty() {
            std::mem::swap(&mut pending.ops, &mut ops);
        } else {
            pending.ops.append(&mut ops);
        }
        pending.ticket += 1;
        drop(pending);
        if !self.relaxed {
            self.wake.notify_one();
        }
    }
}

/// The writer thread: commit whatever is pending, as one transaction.
///
/// A message moved to another queue (dead-letter, move task, admin
/// restore) leaves its queue under one lock and arrives under the other's;
/// the engine publishes both inside one event group, which reaches the
/// journal as one push, so they are always in the same commit: after a
/// crash the message is in exactly one of the two queues.
fn writer(mut conn: Connection, inner: Arc<Inner>, clock: Arc<dyn Clock>) {
    let mut retry: Vec<Op> = Vec::new();
    let mut last_prune = Instant::now();
    let mut floors: HashMap<u64, u128> = HashMap::new();
    loop {
        let (ops, ticket, closing) = {
            let mut pending = inner.pending.lock().unwrap_or_else(|p| p.into_inner());
            let deadline = Instant::now() + RELAXED_INTERVAL;
            while pending.ops.is_empty() && retry.is_empty() && !pending.closing {
                pending = inner.wake.wait(pending).unwrap_or_else(|p| p.into_inner());
            }
            if inner.relaxed && !pending.closing {
                // Gather for an interval: one commit per interval.
                while !pending.closing {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    pending = inner
                        .wake
                        .wait_timeout(pending, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
            (
                std::mem::take(&mut pending.ops),
                pending.ticket,
                pending.closing,
            )
        };
        let mut batch = std::mem::take(&mut retry);
        batch.extend(ops);
        let prune = last_prune.elapsed() > Duration::from_secs(10);
        match commit(
            &mut conn,
            &batch,
            prune.then(|| clock.now_ms()),
            &mut floors,
        ) {
            Ok(()) => {
                if prune {
                    last_prune = Instant::now();
                }
                inner.failing.store(false, Ordering::Release);
                inner.status.send_modify(|s| s.durable = ticket);
            }
            Err(e) => {
                tracing::error!("journal: commit failed, will retry: {e}");
                inner.failing.store(true, Ordering::Release);
                inner.status.send_modify(|s| s.failed = ticket);
                retry = batch;
                if closing {
                    return;
                }
                std::thread::sleep(RETRY);
                continue;
            }
        }
        if closing {
            let pending = inner.pending.lock().unwrap_or_else(|p| p.into_inner());
            if pending.ops.is_empty() {
                return;
            }
        }
    }
}

/// Writes a batch in one transaction.
///
/// `floors`: the deduplication floors (see `QueueRecord::dedup_floor`)
/// already applied to the `dedup` table; updated once the commit holds.
fn commit(
    conn: &mut Connection,
    ops: &[Op],
    prune: Option<u64>,
    floors: &mut HashMap<u64, u128>,
) -> rusqlite::Result<()> {
    if ops.is_empty() && prune.is_none() {
        return Ok(());
    }
    let mut new_floors: Vec<(u64, u128)> = Vec::new();
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare_cached(
            "INSERT OR REPLACE INTO messages (queue_uid, slot, message_id, body, body_md5,
                attributes, trace_header, sender_id, sent_ms, enqueued_ms, first_receive_ms,
                receive_count, group_id, dedup_id, sequence_number, dead_letter_source_arn,
                state, until_ms, nonce, received_ms, visible_since, ord)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                ?17, ?18, ?19, ?20, ?21, ?22)",
        )?;
        let mut update = tx.prepare_cached(
            "UPDATE messages SET first_receive_ms = ?3, receive_count = ?4, state = ?5,
                until_ms = ?6, nonce = ?7, received_ms = ?8, visible_since = ?9, ord = ?10
             WHERE queue_uid = ?1 AND slot = ?2",
        )?;
        let mut delete =
            tx.prepare_cached("DELETE FROM messages WHERE queue_uid = ?1 AND slot = ?2")?;
        let mut dedup = tx.prepare_cached(
            "INSERT OR REPLACE INTO dedup (queue_uid, grp, dedup_id, message_id, sequence_number, expires_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        // Per queue: (next slot, next nonce, last sequence number).
        let mut counters: HashMap<u64, (u64, u64, u128)> = HashMap::new();
        for op in ops {
            match op {
                Op::Put {
                    queue_uid,
                    slot,
                    message: m,
                    new,
                } => {
                    let c = counters.entry(*queue_uid).or_default();
                    c.0 = c.0.max(slot + 1);
                    c.1 = c.1.max(m.nonce + 1);
                    c.2 = c.2.max(m.sequence_number().unwrap_or(0));
                    let (state, until) = state_columns(m.state);
                    let first = m.first_receive_ms.map(|v| v as i64);
                    let changed = if *new {
                        0
                    } else {
                        update.execute(params![
                            *queue_uid as i64,
                            *slot as i64,
                            first,
                            m.receive_count,
                            state,
                            until,
                            m.nonce as i64,
                            m.received_ms as i64,
                            m.visible_since as i64,
                            m.order as i64,
                        ])?
                    };
                    if changed == 0 {
                        let attributes = (!m.attributes.is_empty())
                            .then(|| serde_json::to_string(&m.attributes).unwrap_or_default());
                        insert.execute(params![
                            *queue_uid as i64,
                            *slot as i64,
                            m.message_id.as_bytes().as_slice(),
                            m.body,
                            m.body_md5.as_slice(),
                            attributes,
                            m.trace_header(),
                            &*m.sender_id,
                            m.sent_ms as i64,
                            m.enqueued_ms as i64,
                            first,
                            m.receive_count,
                            m.group_id().map(|g| &**g),
                            m.dedup_id(),
                            m.sequence_number().map(|s| s.to_string()),
                            m.dead_letter_source_arn().map(|a| &**a),
                            state,
                            until,
                            m.nonce as i64,
                            m.received_ms as i64,
                            m.visible_since as i64,
                            m.order as i64,
                        ])?;
                    }
                }
                Op::Delete {
                    queue_uid, slot, ..
                } => {
                    let c = counters.entry(*queue_uid).or_default();
                    c.0 = c.0.max(slot + 1);
                    delete.execute(params![*queue_uid as i64, *slot as i64])?;
                }
                Op::Attempt {
                    queue_uid,
                    id,
                    expires_ms,
                    messages,
                } => {
                    tx.prepare_cached(
                        "DELETE FROM attempts WHERE queue_uid = ?1 AND attempt_id = ?2",
                    )?
                    .execute(params![*queue_uid as i64, &**id])?;
                    let mut insert = tx.prepare_cached(
                        "INSERT INTO attempts (queue_uid, attempt_id, pos, slot, nonce, expires_ms)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    )?;
                    for (pos, (slot, nonce)) in messages.iter().enumerate() {
                        insert.execute(params![
                            *queue_uid as i64,
                            &**id,
                            pos as i64,
                            *slot as i64,
                            *nonce as i64,
                            *expires_ms as i64,
                        ])?;
                    }
                }
                Op::ForgetAttempts { queue_uid, slot } => {
                    tx.prepare_cached(
                        "DELETE FROM attempts WHERE queue_uid = ?1 AND attempt_id IN
                            (SELECT attempt_id FROM attempts WHERE queue_uid = ?1 AND slot = ?2)",
                    )?
                    .execute(params![*queue_uid as i64, *slot as i64])?;
                }
                Op::Dedup { queue_uid, record } => {
                    dedup.execute(params![
                        *queue_uid as i64,
                        record.group,
                        record.dedup_id,
                        record.message_id.as_bytes().as_slice(),
                        record.sequence_number.to_string(),
                        record.expires_ms as i64,
                    ])?;
                }
                Op::Queues(state) => {
                    tx.execute("DELETE FROM queues", [])?;
                    for q in &state.queues {
                        let record = serde_json::to_string(q).unwrap_or_default();
                        tx.execute(
                            "INSERT INTO queues (uid, record) VALUES (?1, ?2)",
                            params![q.uid as i64, record],
                        )?;
                        let c = counters.entry(q.uid).or_default();
                        c.2 = c.2.max(q.last_sequence.parse().unwrap_or(0));
                        // An admin reset cleared the queue's window: the
                        // ids sent before it (sequence numbers up to the
                        // floor) deduplicate no more. Done once per floor.
                        let floor: u128 = q.dedup_floor.parse().unwrap_or(0);
                        if floor > 0 && floors.get(&q.uid) != Some(&floor) {
                            let mut stmt = tx.prepare_cached(
                                "SELECT grp, dedup_id, sequence_number FROM dedup WHERE queue_uid = ?1",
                            )?;
                            let stale: Vec<(String, String)> = stmt
                                .query_map(params![q.uid as i64], |r| {
                                    Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?))
                                })?
                                .filter_map(|r| r.ok())
                                .filter(|(_, _, seq)| seq.parse::<u128>().unwrap_or(0) <= floor)
                                .map(|(g, d, _)| (g, d))
                                .collect();
                            let mut delete = tx.prepare_cached(
                                "DELETE FROM dedup WHERE queue_uid = ?1 AND grp = ?2 AND dedup_id = ?3",
                            )?;
                            for (g, d) in stale {
                                delete.execute(params![q.uid as i64, g, d])?;
                            }
                            new_floors.push((q.uid, floor));
                        }
                    }
                    let engine = EngineState {
                        queues: Vec::new(),
                        deleted_at: state.deleted_at.clone(),
                        move_tasks: state.move_tasks.clone(),
                    };
                    tx.execute(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES ('engine', ?1)",
                        params![serde_json::to_string(&engine).unwrap_or_default()],
                    )?;
                    // What belonged to deleted queues.
                    for table in ["messages", "dedup", "counters", "attempts"] {
                        tx.execute(
                            &format!("DELETE FROM {table} WHERE queue_uid NOT IN (SELECT uid FROM queues)"),
                            [],
                        )?;
                    }
                }
            }
        }
        let mut raise = tx.prepare_cached(
            "INSERT INTO counters (queue_uid, next_slot, next_nonce, last_sequence)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (queue_uid) DO UPDATE SET
                next_slot = max(next_slot, excluded.next_slot),
                next_nonce = max(next_nonce, excluded.next_nonce),
                last_sequence = CASE WHEN length(excluded.last_sequence) > length(last_sequence)
                    OR (length(excluded.last_sequence) = length(last_sequence)
                        AND excluded.last_sequence > last_sequence)
                    THEN excluded.last_sequence ELSE last_sequence END",
        )?;
        for (uid, (slot, nonce, seq)) in counters {
            raise.execute(params![
                uid as i64,
                slot as i64,
                nonce as i64,
                seq.to_string()
            ])?;
        }
        if let Some(now) = prune {
            // Dedup ids past their window (the engine's clock): the
            // sequence counter lives in `counters`.
            tx.execute(
                "DELETE FROM dedup WHERE expires_ms < ?1",
                params![now as i64],
            )?;
            tx.execute(
                "DELETE FROM attempts WHERE expires_ms < ?1",
                params![now as i64],
            )?;
        }
    }
    tx.commit()?;
    floors.extend(new_floors);
    Ok(())
}
