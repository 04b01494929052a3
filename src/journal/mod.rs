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

//!
//! Layout: `lock.rs` (the directory's lock), `schema.rs` (tables, the
//! format check and migration), `load.rs` (the stored state back into a new
//! engine), `feed.rs` (the event-stream subscription that turns events into
//! pending writes), `writer.rs` (the writer thread and its transactions).

mod feed;
mod load;
mod lock;
mod schema;
mod writer;

use feed::Feed;
use lock::lock_dir;
use writer::writer;

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
use crate::engine::{Engine, EngineConfig, OptionalFields, State, StoredMessage, Transition};
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
        // This process is the database's only user (the directory's lock
        // says so), so it keeps SQLite's lock for good: no file-lock calls
        // per transaction, and, set before WAL is first used, no shared
        // memory index beside the WAL.
        conn.pragma_update(None, "locking_mode", "EXCLUSIVE")
            .map_err(err)?;
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
        crate::observers::attach_journal(&engine, Arc::new(Feed(journal.inner.clone())));
        engine.set_durability(journal.clone());
        Ok((engine, journal))
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
