//! The SQLite backend (`--data-dir`): one database file in a data
//! directory that one server holds locked.
//!
//! `lock.rs` (the directory's lock), `schema.rs` (tables, the format check
//! and migration), `load.rs` (the tables back into a new engine),
//! `commit.rs` (a batch as one transaction).

mod commit;
mod load;
mod lock;
mod schema;

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::{Backend, Batch, DurabilityMode, Engine, SqsError};

/// The layout this build writes and reads. Bump it (and migrate or
/// refuse) whenever a table changes. 2 added `attempts` (format 1 is
/// migrated at open: the table is created).
pub const FORMAT: i64 = 2;
const DB_FILE: &str = "retsu.sqlite3";
const LOCK_FILE: &str = "retsu.lock";
/// Test-only knob: caps the database at this many pages (SQLite's
/// `max_page_count`), so tests can make writes fail as a full disk does.
/// Not a setting: nothing else reads it, and it is never needed in use.
pub const TEST_MAX_PAGES: &str = "RETSU_TEST_MAX_DB_PAGES";

fn sql_err(dir: &Path, e: rusqlite::Error) -> String {
    format!("data directory {}: {e}", dir.display())
}

pub(super) struct Sqlite {
    conn: Connection,
    dir: PathBuf,
    /// The deduplication floors (see `QueueRecord::dedup_floor`) already
    /// applied to the `dedup` table.
    floors: HashMap<u64, u128>,
    /// `--durability process`: a commit writes to the operating system
    /// and does not wait for the disk.
    no_fsync: bool,
    /// Held while the backend lives: the data directory's lock.
    _lock: File,
}

/// Opens (or creates) a data directory: the backend and the receipt-handle secret.
pub(super) fn open(
    dir: &Path,
    mode: DurabilityMode,
) -> Result<(Box<dyn Backend>, Vec<u8>), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create data directory {}: {e}", dir.display()))?;
    let lock = lock::lock_dir(dir)?;
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
    // `full`: fsync at each commit. `process`: in WAL mode, NORMAL
    // commits to the WAL file without fsync, so a commit survives the
    // process but not the machine. `relaxed` commits seldom, so it keeps
    // each of its commits power-safe.
    let synchronous = match mode {
        DurabilityMode::Process => "NORMAL",
        DurabilityMode::Full | DurabilityMode::Relaxed => "FULL",
    };
    conn.pragma_update(None, "synchronous", synchronous)
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
    let secret = schema::prepare(&mut conn, dir)?;
    let backend = Sqlite {
        conn,
        dir: dir.to_path_buf(),
        floors: HashMap::new(),
        no_fsync: mode == DurabilityMode::Process,
        _lock: lock,
    };
    Ok((Box::new(backend), secret))
}

impl Backend for Sqlite {
    fn load(&mut self, engine: &Engine) -> Result<(usize, usize), String> {
        load::load(&self.conn, engine)
            .map_err(|e| format!("data directory {}: {e}", self.dir.display()))
    }

    fn commit(&mut self, batch: &Batch) -> Result<(), String> {
        commit::commit(&mut self.conn, batch, &mut self.floors).map_err(|e| e.to_string())
    }

    fn read_meta(&mut self, key: &'static str) -> Result<Option<String>, String> {
        use rusqlite::OptionalExtension;
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| sql_err(&self.dir, e))
    }

    fn refusal(&self) -> SqsError {
        SqsError::internal(
            "The server cannot write to its data directory; only reads are served until it can. Please retry.",
        )
    }

    /// Without an fsync a commit is a few writes to the page cache (and,
    /// every thousand pages, a checkpoint); an fsync at every commit would
    /// hold a worker for as long as the disk takes.
    fn quick_commits(&self) -> bool {
        self.no_fsync
    }

    fn write_failed(&self) -> SqsError {
        SqsError::internal(
            "The server could not write to its data directory; the request may not have taken effect. Please retry.",
        )
    }
}
