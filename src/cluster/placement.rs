//! Which shard holds each queue, topic and platform application name
//! (`retsu.placement`), as the front reads it to route a request.
//!
//! A name's shard changes only when an operator moves the queue alone
//! (`queue_move.rs`), so a shard once read is kept until a node learns of
//! a move ([`Placement::forget`]); a name not placed yet is read again on
//! every request for it (it may be created on another node meanwhile). A name is placed
//! by the first CreateQueue, CreateTopic or CreatePlatformApplication that
//! reaches any node: one `INSERT … ON CONFLICT DO NOTHING`, then a read,
//! so two nodes creating the same name at once agree on its shard.
//!
//! A new name goes to the shard with the fewest names placed (the lowest
//! numbered among equals), so names spread evenly over the shards and the
//! shards over the nodes. Counting, not hashing: a hash spreads a handful
//! of names unevenly, and a cluster often has only a handful.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

use tokio_postgres::{Client, NoTls};

use super::route::Key;

/// The shard that answers what is for no one name (an unknown action, the
/// cluster's clock) and keeps what is the cluster's alone.
pub const HOME_SHARD: i32 = 1;

/// A name's shard.
const READ: &str = "SELECT shard FROM retsu.placement
     WHERE kind = $1 AND account = $2 AND region = $3 AND name = $4";

/// Places a name in the shard with the fewest names (the shards are the
/// lease rows), or reads where another node just placed it.
const PLACE: &str = "WITH least AS (
        SELECT l.id FROM retsu.lease l
        ORDER BY (SELECT count(*) FROM retsu.placement p WHERE p.shard = l.id), l.id
        LIMIT 1),
     placed AS (
        INSERT INTO retsu.placement (kind, account, region, name, shard)
        SELECT $1, $2, $3, $4, id FROM least ON CONFLICT DO NOTHING RETURNING shard)
     SELECT shard FROM placed
     UNION ALL
     SELECT shard FROM retsu.placement
     WHERE kind = $1 AND account = $2 AND region = $3 AND name = $4";

/// Places a name in a given shard unless it is placed already.
const PLACE_IN: &str = "INSERT INTO retsu.placement (kind, account, region, name, shard)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING";

pub struct Placement {
    config: tokio_postgres::Config,
    client: tokio::sync::Mutex<Option<Client>>,
    shown: String,
    known: RwLock<HashMap<Key, i32>>,
    /// Counts [`Placement::forget`]: a read that began before one is not
    /// kept (it may predate the move).
    forgotten: AtomicU64,
}

impl Placement {
    pub fn new(config: tokio_postgres::Config, shown: String) -> Placement {
        Placement {
            config,
            client: tokio::sync::Mutex::new(None),
            shown,
            known: RwLock::new(HashMap::new()),
            forgotten: AtomicU64::new(0),
        }
    }

    /// The connection, opened again if it closed.
    async fn connected(&self) -> Result<tokio::sync::MutexGuard<'_, Option<Client>>, String> {
        let mut guard = self.client.lock().await;
        if guard.as_ref().is_none_or(|c| c.is_closed()) {
            let (client, connection) = self.config.connect(NoTls).await.map_err(|e| {
                format!(
                    "cannot connect to PostgreSQL {}: {}",
                    self.shown,
                    crate::journal::describe_postgres_error(&e)
                )
            })?;
            tokio::spawn(connection);
            *guard = Some(client);
        }
        Ok(guard)
    }

    /// Every queue and every placed topic and platform application name:
    /// (kind, name, shard), by shard and name (the cluster view's "what
    /// each node owns"), in every account and region. Queues are read from
    /// the shards' queue rows, so a deleted queue is not listed.
    pub async fn names(&self) -> Result<Vec<(String, String, i32)>, String> {
        let mut guard = self.connected().await?;
        let client = guard.as_ref().expect("connected");
        let rows = client
            .query(
                "SELECT 'queue', record::jsonb->>'name', shard FROM retsu.queues
                 UNION ALL
                 SELECT kind, name, shard FROM retsu.placement WHERE kind <> 'queue'
                 ORDER BY 3, 1, 2",
                &[],
            )
            .await;
        match rows {
            Ok(rows) => Ok(rows
                .iter()
                .map(|r| (r.get(0), r.get(1), r.get(2)))
                .collect()),
            Err(e) => {
                *guard = None;
                Err(crate::journal::describe_postgres_error(&e))
            }
        }
    }

    /// Forgets where every name is (a queue moved): each is read again.
    pub fn forget(&self) {
        let mut known = self.known.write().unwrap_or_else(|p| p.into_inner());
        self.forgotten.fetch_add(1, Ordering::AcqRel);
        known.clear();
    }

    /// Keeps `key`'s shard unless names were forgotten since `since`.
    fn keep(&self, key: &Key, shard: i32, since: u64) {
        let mut known = self.known.write().unwrap_or_else(|p| p.into_inner());
        if self.forgotten.load(Ordering::Acquire) == since {
            known.insert(key.clone(), shard);
        }
    }

    /// The shard holding `key`; with `create`, a name not placed yet is
    /// placed first. `None`: not placed (the name does not exist).
    pub async fn shard_of(&self, key: &Key, create: bool) -> Result<Option<i32>, String> {
        if let Some(shard) = self
            .known
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
        {
            return Ok(Some(*shard));
        }
        let since = self.forgotten.load(Ordering::Acquire);
        let kind = key.kind.as_str();
        let mut guard = self.connected().await?;
        let client = guard.as_ref().expect("connected");
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
            [&kind, &key.account, &key.region, &key.name];
        let row = if create {
            client.query_opt(PLACE, &params).await
        } else {
            client.query_opt(READ, &params).await
        };
        let shard: Option<i32> = match row {
            // Placed by another node between this statement's snapshot
            // and its insert: read once more.
            Ok(None) if create => client
                .query_opt(READ, &params)
                .await
                .map(|row| row.map(|r| r.get(0)))
                .unwrap_or(None),
            Ok(row) => row.map(|r| r.get(0)),
            Err(e) => {
                *guard = None;
                return Err(format!(
                    "PostgreSQL {}: {}",
                    self.shown,
                    crate::journal::describe_postgres_error(&e)
                ));
            }
        };
        if let Some(shard) = shard {
            self.keep(key, shard, since);
        }
        Ok(shard)
    }

    /// Places each of `keys` in `shard` unless it is placed already, and
    /// returns the shard each is in (the configuration file's names: they
    /// live with the home shard, and a later CreateQueue or CreateTopic
    /// for one of them must reach it there, not place it anew).
    pub async fn place_in(&self, keys: &[Key], shard: i32) -> Result<Vec<i32>, String> {
        let since = self.forgotten.load(Ordering::Acquire);
        let mut guard = self.connected().await?;
        let client = guard.as_ref().expect("connected");
        let mut placed = Vec::with_capacity(keys.len());
        for key in keys {
            let kind = key.kind.as_str();
            let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                vec![&kind, &key.account, &key.region, &key.name, &shard];
            let read = match client.execute(PLACE_IN, &params).await {
                Ok(_) => {
                    params.pop();
                    client.query_one(READ, &params).await
                }
                Err(e) => Err(e),
            };
            match read {
                Ok(row) => placed.push(row.get(0)),
                Err(e) => {
                    *guard = None;
                    return Err(format!(
                        "PostgreSQL {}: {}",
                        self.shown,
                        crate::journal::describe_postgres_error(&e)
                    ));
                }
            }
        }
        for (key, shard) in keys.iter().zip(&placed) {
            self.keep(key, *shard, since);
        }
        Ok(placed)
    }
}
