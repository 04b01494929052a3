//! The PostgreSQL backend (`--store postgres://…`): the same rows as the
//! SQLite backend, in the schema `retsu` of the database the URL names.
//!
//! One connection, owned by the writer thread, commits each batch as one
//! transaction; every kind of row is one statement over arrays (`unnest`),
//! and the statements are pipelined (sent together, answered together),
//! so a commit costs one round trip however many requests it holds.
//!
//! A single server's connection holds a session advisory lock on the
//! database for as long as it lives: a second server on the same database
//! refuses to start, and a server whose connection was lost commits again
//! only after taking the lock back, so two servers never both write.
//!
//! A cluster node holds no lock (a paused process keeps its session, and
//! its lock, alive): it holds its shards' leases (`src/cluster/`), and each
//! of its commits begins with `retsu.fence(node, epoch)`, which fails once
//! another node has taken the shard's lease and, by locking its row until
//! the commit ends, makes a node taking the lease wait for the commits
//! already under way: what the new owner loads holds every answered change.
//!
//! While the database cannot be reached, commits fail and are retried on a
//! new connection; the journal refuses changes meanwhile with
//! `ServiceUnavailable` (HTTP 503, which every SDK retries).
//!
//! `schema.rs` (tables, the format check), `load.rs` (the tables back
//! into a new engine), `commit.rs` (a batch as one transaction).

mod commit;
mod load;
mod schema;

pub use schema::{DEFAULT_SHARDS, MAX_SHARDS};

use std::collections::HashMap;
use std::time::Duration;

use tokio::runtime::Runtime;
use tokio_postgres::{Client, NoTls};

use super::{Backend, Batch, DurabilityMode, Engine, Fence, SqsError};

/// The layout this build writes and reads in the `retsu` schema. Bump it
/// (and migrate or refuse) whenever a table changes.
pub const FORMAT: i64 = 7;
/// The session advisory lock a writing server holds: "retsu" in ASCII.
const LOCK_KEY: i64 = 0x72_6574_7375;
/// The SQLSTATE `retsu.fence` raises.
const FENCED: &str = "RT001";
/// How long a connection attempt may take unless the URL says.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long sent data may stay unacknowledged before the connection
/// counts as lost (a cut network, not a closed socket).
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(10);

/// Checks a URL's form without connecting.
pub(super) fn check_url(url: &str) -> Result<(), String> {
    url.parse::<tokio_postgres::Config>()
        .map(|_| ())
        .map_err(|e| format!("--store {}: malformed PostgreSQL URL: {e}", redact(url)))
}

/// The URL without its password, for logs and errors.
pub(super) fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_string();
    };
    match rest[..at].find(':') {
        Some(colon) => format!(
            "{}{}:***{}",
            &url[..scheme_end + 3],
            &rest[..colon],
            &rest[at..]
        ),
        None => url.to_string(),
    }
}

/// An error with its cause: rust-postgres's own text ("db error", "error
/// connecting to server") leaves out what the server or the socket said.
pub(super) fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

pub(super) struct Postgres {
    /// Runs the client and its connection on the journal's thread, only
    /// while a call waits on it.
    runtime: Runtime,
    config: tokio_postgres::Config,
    /// None after the connection was found lost, until it is made again.
    client: Option<Client>,
    mode: DurabilityMode,
    url: String,
    /// The deduplication floors already applied to the `dedup` table.
    floors: HashMap<u64, u128>,
    prepared: commit::Prepared,
    /// A cluster node's lease, checked by every commit.
    fence: Option<Fence>,
    /// The last commit failed: the next carries its batch, which may have
    /// landed.
    retrying: bool,
}

/// Connects, takes the database's lock, and checks (or creates) the
/// tables: the backend and the receipt-handle secret.
pub(super) fn open(
    url: &str,
    mode: DurabilityMode,
    fence: Option<Fence>,
) -> Result<(Box<dyn Backend>, Vec<u8>), String> {
    let shown = redact(url);
    let (runtime, config) = client_config(url)?;
    let locked = fence.is_none();
    let mut client = connect(&runtime, &config, mode, &shown, locked)?;
    let secret = runtime
        .block_on(schema::prepare(&mut client, DEFAULT_SHARDS))
        .map_err(|e| format!("PostgreSQL {shown}: {e}"))?;
    if locked {
        // A single server is the whole store in one engine: shard 1.
        if let Some(shard) = runtime
            .block_on(schema::spread_shard(&client))
            .map_err(|e| format!("PostgreSQL {shown}: {e}"))?
        {
            return Err(format!(
                "PostgreSQL {shown} holds a cluster's store, spread over its shards (shard {shard} holds queues or topics); start this server as a node of the cluster (--cluster-secret) or choose another database"
            ));
        }
        if let Some(node) = runtime
            .block_on(schema::live_cluster(&client))
            .map_err(|e| format!("PostgreSQL {shown}: {e}"))?
        {
            return Err(format!(
                "PostgreSQL {shown} is in use by a Retsu cluster (node {node:?} holds its lease); start this server as a node of it (--cluster-secret) or choose another database"
            ));
        }
    }
    let backend = Postgres {
        runtime,
        config,
        client: Some(client),
        mode,
        url: shown,
        floors: HashMap::new(),
        prepared: commit::Prepared::default(),
        fence,
        retrying: false,
    };
    Ok((Box::new(backend), secret))
}

/// Connects once to create or migrate the tables, and leaves.
pub(super) fn prepare_only(url: &str, shards: i32) -> Result<i32, String> {
    let shown = redact(url);
    let (runtime, config) = client_config(url)?;
    let mut client = connect(&runtime, &config, DurabilityMode::Full, &shown, false)?;
    let count = runtime
        .block_on(async {
            schema::prepare(&mut client, shards).await?;
            schema::shard_count(&client).await
        })
        .map_err(|e| format!("PostgreSQL {shown}: {e}"))?;
    // A single server holding the database cannot share it with a cluster.
    let free: bool = runtime
        .block_on(async {
            let row = client
                .query_one("SELECT pg_try_advisory_lock($1)", &[&LOCK_KEY])
                .await?;
            client
                .execute("SELECT pg_advisory_unlock_all()", &[])
                .await?;
            row.try_get(0)
        })
        .map_err(|e| format!("PostgreSQL {shown}: {}", describe(&e)))?;
    if !free {
        return Err(format!(
            "PostgreSQL {shown} is in use by a single Retsu server (it holds the database's advisory lock {LOCK_KEY}); stop it or choose another database"
        ));
    }
    Ok(count)
}

/// The client's runtime and settings for `url`.
fn client_config(url: &str) -> Result<(Runtime, tokio_postgres::Config), String> {
    let shown = redact(url);
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| format!("--store {shown}: malformed PostgreSQL URL: {e}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the PostgreSQL client: {e}"))?;
    tune(&mut config);
    Ok((runtime, config))
}

/// Timeouts that notice a lost server, unless the URL sets its own.
pub(super) fn tune(config: &mut tokio_postgres::Config) {
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(TCP_USER_TIMEOUT);
    }
    config.keepalives_idle(Duration::from_secs(5));
    config.application_name("retsu");
}

/// A new connection set for `mode`, holding the database's lock if `lock`.
fn connect(
    runtime: &Runtime,
    config: &tokio_postgres::Config,
    mode: DurabilityMode,
    shown: &str,
    lock: bool,
) -> Result<Client, String> {
    runtime.block_on(async {
        let (client, connection) = config
            .connect(NoTls)
            .await
            .map_err(|e| format!("cannot connect to PostgreSQL {shown}: {}", describe(&e)))?;
        // Ends when the connection does; the client then reports closed.
        tokio::spawn(connection);
        let locked: bool = !lock || client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&LOCK_KEY])
            .await
            .and_then(|r| r.try_get(0))
            .map_err(|e| format!("PostgreSQL {shown}: {}", describe(&e)))?;
        if !locked {
            return Err(format!(
                "PostgreSQL {shown} is in use by another Retsu server (it holds the database's advisory lock {LOCK_KEY}); stop it or choose another database"
            ));
        }
        // `full` keeps the server's own setting (on unless the operator
        // changed it; with synchronous standbys it waits for them too).
        // `process` and `relaxed`: the commit returns once PostgreSQL has
        // it in memory and its WAL writer will flush it, so it survives
        // Retsu's crash but not PostgreSQL's.
        if mode != DurabilityMode::Full {
            client
                .batch_execute("SET synchronous_commit = off")
                .await
                .map_err(|e| format!("PostgreSQL {shown}: {}", describe(&e)))?;
        }
        Ok(client)
    })
}

impl Postgres {
    /// The shard this journal loads and writes: a cluster node's fence
    /// names it; a single server is shard 1, the whole store.
    fn shard(&self) -> i32 {
        self.fence.as_ref().map_or(1, |f| f.shard)
    }
}

impl Backend for Postgres {
    fn load(&mut self, engine: &Engine) -> Result<(usize, usize), String> {
        let shard = self.shard();
        let client = self.client.as_mut().ok_or("not connected")?;
        self.runtime
            .block_on(load::load(client, engine, shard))
            .map_err(|e| format!("PostgreSQL {}: {e}", self.url))
    }

    fn commit(&mut self, batch: &Batch) -> Result<(), String> {
        if self.client.as_ref().is_none_or(|c| c.is_closed()) {
            self.client = None;
            self.prepared.clear();
            let lock = self.fence.is_none();
            self.client = Some(connect(
                &self.runtime,
                &self.config,
                self.mode,
                &self.url,
                lock,
            )?);
            tracing::info!("journal: reconnected to PostgreSQL {}", self.url);
        }
        let client = self.client.as_ref().ok_or("not connected")?;
        let shard = self.shard();
        let fence = self.fence.as_ref().map(|f| (f.node.as_str(), f.epoch));
        let result = self.runtime.block_on(commit::commit(
            client,
            batch,
            shard,
            fence,
            &mut self.floors,
            &mut self.prepared,
            self.retrying,
        ));
        self.retrying = result.is_err();
        if let (Err(e), Some(fence)) = (&result, &self.fence) {
            if e.code().is_some_and(|c| c.code() == FENCED) {
                (fence.fenced)(describe(e));
            }
        }
        if let Err(e) = &result {
            // A statement prepared in the failed transaction may be gone.
            self.prepared.clear();
            // A lost connection is made again on the next try; a failed
            // statement on a live one leaves it usable (the transaction
            // was rolled back).
            if e.is_closed() || client.is_closed() {
                self.client = None;
            }
        }
        result.map_err(|e| describe(&e))
    }

    fn read_meta(&mut self, key: &'static str) -> Result<Option<String>, String> {
        let client = self.client.as_ref().ok_or("not connected")?;
        self.runtime
            .block_on(client.query_opt("SELECT value FROM retsu.meta WHERE key = $1", &[&key]))
            .map(|row| row.map(|r| r.get(0)))
            .map_err(|e| format!("PostgreSQL {}: {}", self.url, describe(&e)))
    }

    fn refusal(&self) -> SqsError {
        SqsError::unavailable(
            "The server cannot reach its database; only reads are served until it can. Please retry.",
        )
    }

    fn write_failed(&self) -> SqsError {
        SqsError::unavailable(
            "The server could not reach its database; the request may not have taken effect. Please retry.",
        )
    }
}
