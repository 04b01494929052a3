//! Persistence: the journal keeps a store (a data directory's SQLite
//! database, or a PostgreSQL database) in step with the engine, and loads
//! it back at start.
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
//! appends to a pending list; a commit folds whatever is pending into one
//! [`Batch`] (the last state of each row) and the backend writes it as one
//! transaction, so the requests of many clients share a commit (group
//! commit). Commits are made one at a time, by the writer thread or, where
//! a commit is short, by a waiting request (`writer.rs`). Every answer
//! waits until the commit that holds what was emitted before it
//! (`Engine::handle`), so a successful response survives `kill -9`, and
//! with `--durability full` a power cut.
//!
//! Time-driven transitions (a delay ending, a visibility timeout running
//! out) write nothing: the stored deadlines say it all, and the engine
//! applies them lazily after a restart as it does in memory.
//!
//! A failed commit (disk full, I/O error, the database unreachable) keeps
//! its changes pending and is retried; meanwhile requests that would
//! change state are refused before they run (so memory runs at most one
//! batch ahead of the store), move tasks pause, and read-only actions are
//! served.
//!
//! Layout: `feed.rs` (the event-stream subscription that turns events into
//! pending writes), `batch.rs` (pending writes folded into what one commit
//! writes), `writer.rs` (who commits, and the writer thread), `rows.rs` (stored rows back
//! into messages, for either backend), and one folder per backend, each
//! with its schema and format check, its load, and its commit: `sqlite/`
//! (`--data-dir`; why SQLite rather than redb: BENCHMARKS.md, "Persistence
//! store") and `postgres/` (`--store postgres://…`).

mod batch;
mod feed;
mod postgres;
mod rows;
mod sqlite;
mod writer;

use batch::Batch;
use feed::Feed;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::clock::Clock;
use crate::engine::events::{Event, Subscriber};
use crate::engine::persist::{DedupRecord, Durability, EngineState, DEDUP_WINDOW_MS};
use crate::engine::{Engine, EngineConfig, Outbound, StoredMessage, Transition};
use crate::error::SqsError;

/// How often `--durability relaxed` commits: the most it can lose.
pub const RELAXED_INTERVAL: Duration = Duration::from_millis(200);
pub use sqlite::TEST_MAX_PAGES;

/// What a successful answer survives; named the same for both backends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DurabilityMode {
    /// Answer after a commit that survives power loss (SQLite: fsync of
    /// the WAL; PostgreSQL: `synchronous_commit` as the server has it).
    #[default]
    Full,
    /// Answer after the commit has reached the operating system or the
    /// database, not the disk: survives `kill -9` of Retsu, not a power
    /// cut (SQLite: `synchronous=NORMAL`; PostgreSQL: asynchronous commit).
    Process,
    /// Answer at once; commit every 200 ms.
    Relaxed,
}

/// Where the journal keeps its state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Store {
    /// A data directory with one SQLite database (`--data-dir`).
    Dir(PathBuf),
    /// A PostgreSQL database, by its URL (`--store postgres://…`).
    Postgres(String),
}

impl Store {
    /// Parses `--store`: a `postgres://` or `postgresql://` URL (the only
    /// kind so far; a data directory is `--data-dir`).
    pub fn parse(value: &str) -> Result<Store, String> {
        let lower = value.to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            postgres::check_url(value)?;
            return Ok(Store::Postgres(value.to_string()));
        }
        Err(format!(
            "--store {}: not a store URL; give postgres://user[:password]@host[:port]/database (a local directory is --data-dir)",
            postgres::redact(value)
        ))
    }

    /// For logs and errors: a directory's path, or the URL without its password.
    pub fn describe(&self) -> String {
        match self {
            Store::Dir(dir) => dir.display().to_string(),
            Store::Postgres(url) => postgres::redact(url),
        }
    }
}

/// What a cluster node's commits are checked against: a shard's lease as
/// this node took it. A commit made after another node took the lease
/// fails, and `fenced` is called (the node must stop answering at once).
pub struct Fence {
    /// The shard whose lease this is (`cluster`): the journal loads and
    /// writes only that shard's queues and topics.
    pub shard: i32,
    pub node: String,
    pub epoch: i64,
    pub fenced: Box<dyn Fn(String) + Send>,
}

/// Makes sure the PostgreSQL store at `url` has Retsu's tables in this
/// build's format (creating or migrating them): what a cluster node does
/// before it registers. Blocking; run it off the async runtime.
/// `shards`: the count a store made now is split into; returns the
/// store's own count.
pub fn prepare_postgres(url: &str, shards: i32) -> Result<i32, String> {
    postgres::prepare_only(url, shards)
}

/// The shard count a new PostgreSQL store gets by default, and the most.
pub use postgres::{DEFAULT_SHARDS, MAX_SHARDS};

/// A PostgreSQL error with its cause (what the server or the socket said).
pub fn describe_postgres_error(e: &tokio_postgres::Error) -> String {
    postgres::describe(e)
}

/// The URL without its password, for logs and errors.
pub fn redact_url(url: &str) -> String {
    postgres::redact(url)
}

/// The client settings for the PostgreSQL store at `url`, with the
/// journal's timeouts (a lost server is noticed, not waited on forever).
pub fn postgres_config(url: &str) -> Result<tokio_postgres::Config, String> {
    let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
        format!(
            "--store {}: malformed PostgreSQL URL: {e}",
            postgres::redact(url)
        )
    })?;
    postgres::tune(&mut config);
    Ok(config)
}

/// A journal backend, owned by the writer thread once loaded.
trait Backend: Send {
    /// Puts the stored state into a new engine: (queues, messages).
    fn load(&mut self, engine: &Engine) -> Result<(usize, usize), String>;
    /// Writes one batch in one transaction.
    fn commit(&mut self, batch: &Batch) -> Result<(), String>;
    /// A kept value (`Op::Meta`), read at start.
    fn read_meta(&mut self, key: &'static str) -> Result<Option<String>, String>;
    /// What a change is refused with while commits fail.
    fn refusal(&self) -> SqsError;
    /// What a request is answered when the commit it waited for failed.
    fn write_failed(&self) -> SqsError;
    /// A commit blocks its thread only briefly, so the requests that wait
    /// for it make it themselves (`writer.rs`).
    fn quick_commits(&self) -> bool {
        false
    }
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
    /// Messages on their way to queues of other shards (an outbox row
    /// each, written with the change that took them out of their source).
    Outbound(Vec<Outbound>),
    /// A hand-over this shard took in: its outbox row is marked taken in
    /// the commit that stores the message.
    Accepted(uuid::Uuid),
    /// A value kept for a layer around the engine (SNS's signing key).
    Meta {
        key: &'static str,
        value: String,
    },
}

#[derive(Default)]
struct Pending {
    ops: Vec<Op>,
    /// Counts publications; a waiter waits for the commit of its ticket.
    ticket: u64,
    closing: bool,
    /// The writer sleeps until `ticket` reaches this; 0 while it works.
    /// A publication wakes it only then, so requests make no wake-up
    /// call while a commit is under way.
    wake_at: u64,
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
    /// The backend; `None` once the journal has closed.
    writer: Mutex<Option<writer::Writer>>,
    /// Requests commit what they wait for (`Backend::quick_commits`).
    requests_commit: bool,
    relaxed: bool,
    /// The last commit failed and none has succeeded since.
    failing: AtomicBool,
    /// What a change is refused with while commits fail.
    refusal: SqsError,
    /// What a request is answered when the commit it waited for failed.
    write_failed: SqsError,
}

/// The open journal of a store.
pub struct Journal {
    inner: Arc<Inner>,
    writer: Mutex<Option<JoinHandle<()>>>,
    /// The store, as logs name it.
    pub store: String,
    /// What was loaded: (queues, messages).
    pub restored: (usize, usize),
    /// The kept values, as loaded and as set since.
    kept: Mutex<std::collections::HashMap<&'static str, String>>,
}

/// The values a store keeps for the layers around the engine.
pub const KEPT: &[&str] = &[SNS_SIGNING_KEY];
/// SNS's signing key and certificate (`notification_signing`).
pub const SNS_SIGNING_KEY: &str = "sns_signing_identity";

impl Journal {
    /// Opens (or creates) a store, loads it into a new engine, and starts
    /// journaling that engine. Fails with a message meant for the
    /// operator (locked, another format, unreadable, unreachable), having
    /// written nothing where the store was not Retsu's.
    pub fn open(
        store: &Store,
        mode: DurabilityMode,
        clock: Arc<dyn Clock>,
        config: EngineConfig,
    ) -> Result<(Arc<Engine>, Arc<Journal>), String> {
        Journal::open_fenced(store, None, mode, clock, config)
    }

    /// Like [`Journal::open`], for a cluster node that holds the store's
    /// lease: every commit checks `fence` in its own transaction, and
    /// none is made once another node has taken the lease. PostgreSQL only.
    pub fn open_fenced(
        store: &Store,
        fence: Option<Fence>,
        mode: DurabilityMode,
        clock: Arc<dyn Clock>,
        config: EngineConfig,
    ) -> Result<(Arc<Engine>, Arc<Journal>), String> {
        // Off the async runtime: PostgreSQL's synchronous client runs a
        // runtime of its own, which must not nest in the caller's.
        let (backend, engine, restored, kept) = std::thread::scope(|s| {
            s.spawn(|| {
                let (mut backend, secret): (Box<dyn Backend>, Vec<u8>) = match store {
                    Store::Dir(_) if fence.is_some() => {
                        return Err(
                            "a cluster needs a PostgreSQL store (--store postgres://…)".into()
                        )
                    }
                    Store::Dir(dir) => sqlite::open(dir, mode)?,
                    Store::Postgres(url) => postgres::open(url, mode, fence)?,
                };
                let engine = Engine::with_secret(clock.clone(), config, Some(&secret));
                let restored = backend.load(&engine)?;
                let mut kept = std::collections::HashMap::new();
                for key in KEPT {
                    if let Some(value) = backend.read_meta(key)? {
                        kept.insert(*key, value);
                    }
                }
                Ok::<_, String>((backend, engine, restored, kept))
            })
            .join()
            .unwrap_or_else(|_| Err("the journal failed to open".to_string()))
        })?;

        let (status, _) = tokio::sync::watch::channel(Status::default());
        let relaxed = mode == DurabilityMode::Relaxed;
        let inner = Arc::new(Inner {
            pending: Mutex::new(Pending::default()),
            wake: Condvar::new(),
            status,
            requests_commit: backend.quick_commits() && !relaxed,
            relaxed,
            failing: AtomicBool::new(false),
            refusal: backend.refusal(),
            write_failed: backend.write_failed(),
            writer: Mutex::new(Some(writer::Writer::new(backend, clock))),
        });
        let writer = {
            let inner = inner.clone();
            std::thread::Builder::new()
                .name("retsu-journal".into())
                .spawn(move || writer::run(inner))
                .map_err(|e| format!("cannot start the journal: {e}"))?
        };
        let journal = Arc::new(Journal {
            inner,
            writer: Mutex::new(Some(writer)),
            store: store.describe(),
            restored,
            kept: Mutex::new(kept),
        });
        crate::observers::attach_journal(&engine, Arc::new(Feed(journal.inner.clone())));
        engine.set_durability(journal.clone());
        Ok((engine, journal))
    }

    /// A kept value (one of [`KEPT`]).
    pub fn kept(&self, key: &'static str) -> Option<String> {
        self.kept
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned()
    }

    /// Keeps `value` under `key`, committed with the next batch: what is
    /// answered after this call is not durable before it.
    pub fn keep(&self, key: &'static str, value: String) {
        self.kept
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, value.clone());
        self.inner.push(vec![Op::Meta { key, value }]);
    }

    /// Commits what is pending and stops the writer (on shutdown).
    pub fn close(&self) {
        self.close_soon();
        if let Some(writer) = self.writer.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = writer.join();
        }
    }
}

impl Journal {
    /// Asks the writer to commit what is pending and stop, without
    /// waiting for it: for an owner dropped without a shutdown, whose
    /// engine may outlive it.
    pub fn close_soon(&self) {
        {
            let mut pending = self.inner.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending.closing = true;
        }
        self.inner.wake.notify_all();
    }
}

/// A journal dropped unclosed (its engine gone without a shutdown) still
/// commits what is pending, and its writer thread and connection end.
impl Drop for Journal {
    fn drop(&mut self) {
        if self.writer.get_mut().map_or(true, |w| w.is_some()) {
            let mut pending = self.inner.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending.closing = true;
            drop(pending);
            self.inner.wake.notify_all();
        }
    }
}

impl Durability for Journal {
    fn failing(&self) -> bool {
        self.inner.failing.load(Ordering::Acquire)
    }

    fn refusal(&self) -> SqsError {
        self.inner.refusal.clone()
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
            let mut gathered = false;
            loop {
                let s = *status.borrow_and_update();
                if s.durable >= ticket {
                    return Ok(());
                }
                if s.failed >= ticket {
                    return Err(self.inner.write_failed.clone());
                }
                if self.inner.requests_commit && !gathered {
                    // Let the requests ready on this worker publish
                    // first, so that one commit holds theirs too.
                    gathered = true;
                    tokio::task::yield_now().await;
                    continue;
                }
                if self.inner.requests_commit {
                    match self.inner.try_commit() {
                        writer::Tried::Settled => continue,
                        writer::Tried::Closed => return Err(self.inner.write_failed.clone()),
                        writer::Tried::Busy => {}
                    }
                }
                if status.changed().await.is_err() {
                    return Err(self.inner.write_failed.clone());
                }
            }
        })
    }
}
