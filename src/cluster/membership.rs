//! The cluster's rows in PostgreSQL: the nodes (`retsu.nodes`: id, the URL
//! the others reach it at, a heartbeat, whether it is drained), each
//! shard's lease (`retsu.lease`: shard, holder, epoch, expiry) and the cluster's clock
//! (`retsu.clock`). Every time is the database's
//! clock (`now()`), so the nodes' clocks never have to agree.

use std::time::Duration;

use std::sync::Arc;

use tokio_postgres::{AsyncMessage, Client, NoTls};

/// The channel a node NOTIFYs when the others should read the rows now:
/// the lease was given up, or a node was drained.
const CHANNEL: &str = "retsu_cluster";

/// The channel the clock's keeper NOTIFYs, in the transaction that
/// stores a change: every node reads the stored clock again.
const CLOCK_CHANNEL: &str = "retsu_clock";

/// One node as the cluster's rows show it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NodeRow {
    pub id: String,
    pub url: String,
    /// Since the node last renewed its row.
    pub heartbeat_age_ms: i64,
    pub up_ms: i64,
    /// Drained: gives the lease up and takes it no more.
    pub draining: bool,
}

/// Who holds a shard's lease.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LeaseRow {
    pub shard: i32,
    /// Empty while nobody ever held it.
    pub holder: String,
    pub epoch: i64,
    /// Negative once lapsed; None when released.
    pub expires_in_ms: Option<i64>,
    /// The holder's URL, while it is registered.
    #[serde(skip)]
    pub holder_url: Option<String>,
    /// The node an operator moved the shard to (`retsu cluster move`).
    pub wanted: Option<String>,
}

/// What asking to drain a node did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drain {
    Done,
    NoSuchNode,
    /// Every other live node is draining already.
    LastCandidate,
}

/// What one look at the rows shows.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// Shard 1's lease: its holder also keeps the cluster's clock.
    pub lease: LeaseRow,
    /// Every shard's lease, by shard.
    pub leases: Vec<LeaseRow>,
    pub nodes: Vec<NodeRow>,
    /// How many queues have moved alone (`meta.moves`): a change means
    /// names may be in other shards than a node last read.
    pub moves: i64,
    /// Queues an operator asked to move alone, not moved yet.
    pub asked: Vec<AskedMove>,
}

/// A queue an operator asked to move alone to a node
/// (`retsu.placement.wanted`): the holder of its shard moves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskedMove {
    pub shard: i32,
    pub key: super::route::Key,
    pub node: String,
}

impl View {
    /// How many shards each node that may hold them should hold: the
    /// shards over the live nodes that are not drained, rounded up (at
    /// least 1, so a node alone takes every shard).
    pub fn share(&self, lease_ms: i64) -> usize {
        let live = self
            .nodes
            .iter()
            .filter(|n| n.may_hold(lease_ms))
            .count()
            .max(1);
        self.leases.len().div_ceil(live)
    }

    /// Whether `node` is drained.
    pub fn draining(&self, node: &str) -> bool {
        self.nodes.iter().any(|n| n.id == node && n.draining)
    }

    /// The node the shard of `lease` was moved to, while that node may
    /// hold shards (then the shard is its own, whatever the shares say).
    fn wanted<'a>(&'a self, lease: &'a LeaseRow, lease_ms: i64) -> Option<&'a str> {
        let wanted = lease.wanted.as_deref()?;
        self.nodes
            .iter()
            .any(|n| n.id == wanted && n.may_hold(lease_ms))
            .then_some(wanted)
    }

    /// The shards moved to `node` (while it may hold shards).
    pub fn moved_to(&self, node: &str, lease_ms: i64) -> Vec<i32> {
        self.leases
            .iter()
            .filter(|l| self.wanted(l, lease_ms) == Some(node))
            .map(|l| l.shard)
            .collect()
    }

    /// Which of `held` (shards `node` holds) were moved to another node
    /// that may hold them: `node` hands them over.
    pub fn moved_away(&self, node: &str, held: &[i32], lease_ms: i64) -> Vec<i32> {
        self.leases
            .iter()
            .filter(|l| held.contains(&l.shard))
            .filter(|l| self.wanted(l, lease_ms).is_some_and(|n| n != node))
            .map(|l| l.shard)
            .collect()
    }
}

impl NodeRow {
    /// Live and not drained: a node that takes its share of the shards.
    fn may_hold(&self, lease_ms: i64) -> bool {
        !self.draining && self.heartbeat_age_ms < lease_ms
    }
}

/// What asking to move a shard to a node did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    Done,
    NoSuchNode,
    /// The node is drained, or its heartbeat lapsed.
    NotLive,
}

pub struct Membership {
    config: tokio_postgres::Config,
    client: Option<Client>,
    pub node: String,
    pub url: String,
    /// This process: a node restarted under the same id is another instance.
    instance: i64,
    lease_ms: i64,
    shown: String,
    /// Woken by a notice on `channel`.
    wake: Arc<tokio::sync::Notify>,
    /// [`CHANNEL`] or [`CLOCK_CHANNEL`].
    channel: &'static str,
}

impl Membership {
    pub fn new(
        config: tokio_postgres::Config,
        shown: String,
        node: String,
        url: String,
        lease: Duration,
    ) -> Membership {
        Membership {
            config,
            client: None,
            node,
            url,
            instance: rand::random::<i64>(),
            lease_ms: lease.as_millis() as i64,
            shown,
            wake: Arc::new(tokio::sync::Notify::new()),
            channel: CHANNEL,
        }
    }

    /// The same node's rows on a connection of its own (for a task that
    /// runs beside the node's loop).
    pub fn another(&self) -> Membership {
        Membership {
            config: self.config.clone(),
            client: None,
            node: self.node.clone(),
            url: self.url.clone(),
            instance: self.instance,
            lease_ms: self.lease_ms,
            shown: self.shown.clone(),
            wake: Arc::new(tokio::sync::Notify::new()),
            channel: CHANNEL,
        }
    }

    /// The same node's rows on a connection of its own that listens for
    /// the clock's changes: [`Membership::notices`] wakes on each one,
    /// and also whenever the connection is made or lost, as notices may
    /// have been missed while there was none.
    pub fn clock_listener(&self) -> Membership {
        Membership {
            channel: CLOCK_CHANNEL,
            ..self.another()
        }
    }

    /// Notified when another node asks every node to read the rows now.
    pub fn notices(&self) -> Arc<tokio::sync::Notify> {
        self.wake.clone()
    }

    /// The connection, made again when it was lost.
    async fn client(&mut self) -> Result<&Client, String> {
        if self.client.as_ref().is_none_or(|c| c.is_closed()) {
            let describe = |e: tokio_postgres::Error| {
                format!(
                    "cannot connect to PostgreSQL {}: {}",
                    self.shown,
                    crate::journal::describe_postgres_error(&e)
                )
            };
            let (client, mut connection) = self.config.connect(NoTls).await.map_err(describe)?;
            // The connection runs here, passing the channel's notices on.
            let wake = self.wake.clone();
            let resync = self.channel == CLOCK_CHANNEL;
            tokio::spawn(async move {
                loop {
                    match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                        Some(Ok(AsyncMessage::Notification(_))) => wake.notify_one(),
                        Some(Ok(_)) => {}
                        Some(Err(_)) | None => {
                            if resync {
                                wake.notify_one();
                            }
                            return;
                        }
                    }
                }
            });
            client
                .batch_execute(&format!("LISTEN {}", self.channel))
                .await
                .map_err(describe)?;
            if resync {
                self.wake.notify_one();
            }
            self.client = Some(client);
        }
        Ok(self.client.as_ref().expect("connected above"))
    }

    /// Runs one statement; a failure drops the connection, so the next
    /// call starts on a fresh one.
    async fn rows(
        &mut self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<tokio_postgres::Row>, String> {
        self.coded_rows(sql, params).await.map_err(|(_, e)| e)
    }

    /// As [`Membership::rows`], with the error's SQLSTATE when the
    /// statement failed (not the connection).
    async fn coded_rows(
        &mut self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<tokio_postgres::Row>, (Option<String>, String)> {
        let client = self.client().await.map_err(|e| (None, e))?;
        let result = client.query(sql, params).await;
        result.map_err(|e| {
            self.client = None;
            let text = format!(
                "PostgreSQL {}: {}",
                self.shown,
                crate::journal::describe_postgres_error(&e)
            );
            (e.code().map(|c| c.code().to_string()), text)
        })
    }

    /// Moves the queues `asked` out of shard `from` (held at `epoch`, its
    /// engine stopped) into shards of their own, in one statement
    /// (`retsu.move_queues`, `queue_move.rs`): each queue moved and its
    /// shard, or the error's SQLSTATE and text.
    pub async fn move_queues(
        &mut self,
        (from, epoch): (i32, i64),
        spares: &[(i32, i64)],
        asked: &[AskedMove],
    ) -> Result<Vec<(String, i32)>, (Option<String>, String)> {
        let node = self.node.clone();
        let (spare_ids, spare_epochs): (Vec<i32>, Vec<i64>) = spares.iter().copied().unzip();
        let accounts: Vec<&str> = asked.iter().map(|a| a.key.account.as_str()).collect();
        let regions: Vec<&str> = asked.iter().map(|a| a.key.region.as_str()).collect();
        let names: Vec<&str> = asked.iter().map(|a| a.key.name.as_str()).collect();
        let rows = self
            .coded_rows(
                "SELECT moved_name, moved_to FROM retsu.move_queues($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                &[
                    &from,
                    &node,
                    &epoch,
                    &spare_ids,
                    &spare_epochs,
                    &accounts,
                    &regions,
                    &names,
                    &crate::journal::MAX_SHARDS,
                ],
            )
            .await?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Adds this node's row. A row of the same id whose heartbeat is
    /// current belongs to a live node: Ok(false), and nothing changes.
    pub async fn register(&mut self) -> Result<bool, String> {
        let (node, url, instance, lease) = (
            self.node.clone(),
            self.url.clone(),
            self.instance,
            self.lease_ms,
        );
        let rows = self
            .rows(
                "INSERT INTO retsu.nodes (id, url, instance, heartbeat) VALUES ($1, $2, $3, now())
                 ON CONFLICT (id) DO UPDATE SET url = excluded.url, instance = excluded.instance,
                    started = now(), heartbeat = now(), draining = false
                 WHERE retsu.nodes.heartbeat < now() - $4::bigint * interval '1 millisecond'
                    OR retsu.nodes.instance = excluded.instance
                 RETURNING id",
                &[&node, &url, &instance, &lease],
            )
            .await?;
        Ok(rows.len() == 1)
    }

    /// Renews the heartbeat: Ok(false) when the row is another
    /// instance's now (this node's heartbeat had lapsed).
    pub async fn beat(&mut self) -> Result<bool, String> {
        let (node, instance) = (self.node.clone(), self.instance);
        let rows = self
            .rows(
                "UPDATE retsu.nodes SET heartbeat = now() WHERE id = $1 AND instance = $2 RETURNING id",
                &[&node, &instance],
            )
            .await?;
        Ok(rows.len() == 1)
    }

    /// Takes up to `most` shards whose leases have lapsed (or were
    /// released), those moved to this node first, then lowest first: each
    /// one's shard and new epoch. A shard moved to another live node is
    /// left to it; with `moved_only`, only shards moved to this node are
    /// taken. Two nodes asking at once take different shards (SKIP LOCKED),
    /// and a shard with a commit under way (its fence holds the row `FOR
    /// KEY SHARE`, which `FOR UPDATE` conflicts with) is left until the
    /// commit ends, so the new holder loads what it wrote. Every node is
    /// told, so that it passes requests to the new holder without waiting
    /// for its next look at the rows.
    pub async fn try_take(
        &mut self,
        most: usize,
        moved_only: bool,
    ) -> Result<Vec<(i32, i64)>, String> {
        let (node, lease, most) = (self.node.clone(), self.lease_ms, most as i64);
        let rows = self
            .rows(
                "WITH taken AS (UPDATE retsu.lease l SET node = $1, epoch = l.epoch + 1,
                    expires = now() + $2::bigint * interval '1 millisecond'
                 WHERE l.id IN (SELECT f.id FROM retsu.lease f WHERE f.expires < now()
                        AND (f.wanted IS NOT DISTINCT FROM $1 OR (NOT $4 AND (f.wanted IS NULL
                            OR NOT EXISTS (SELECT 1 FROM retsu.nodes w WHERE w.id = f.wanted
                                AND NOT w.draining
                                AND w.heartbeat > now() - $2::bigint * interval '1 millisecond'))))
                        ORDER BY (f.wanted IS NOT DISTINCT FROM $1) DESC, f.id
                        LIMIT $3 FOR UPDATE SKIP LOCKED)
                    AND NOT EXISTS (SELECT 1 FROM retsu.nodes WHERE id = $1 AND draining)
                 RETURNING l.id, l.epoch)
                 SELECT id, epoch, pg_notify('retsu_cluster', 'taken') FROM taken",
                &[&node, &lease, &most, &moved_only],
            )
            .await?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Moves `shard` to `node`: its holder hands it over, and `node` takes
    /// it and keeps it while live and not drained. Every node is told.
    pub async fn move_shard(&mut self, shard: i32, node: &str) -> Result<Move, String> {
        let lease = self.lease_ms;
        let rows = self
            .rows(
                "WITH moved AS (
                    UPDATE retsu.lease SET wanted = $2 WHERE id = $1
                    AND EXISTS (SELECT 1 FROM retsu.nodes n WHERE n.id = $2 AND NOT n.draining
                        AND n.heartbeat > now() - $3::bigint * interval '1 millisecond')
                    RETURNING 1)
                 SELECT pg_notify('retsu_cluster', 'moved') FROM moved",
                &[&shard, &node, &lease],
            )
            .await?;
        if !rows.is_empty() {
            return Ok(Move::Done);
        }
        Ok(if self.knows(node).await? {
            Move::NotLive
        } else {
            Move::NoSuchNode
        })
    }

    /// Asks the holder of `key`'s shard to move that queue alone to
    /// `node` (`queue_move.rs`); every node is told. `Ok(None)`: no such
    /// queue; otherwise what became of asking, as for a shard.
    pub async fn ask_queue_move(
        &mut self,
        key: &super::route::Key,
        node: &str,
    ) -> Result<Option<Move>, String> {
        let lease = self.lease_ms;
        let rows = self
            .rows(
                "WITH live AS (SELECT 1 FROM retsu.nodes n WHERE n.id = $4 AND NOT n.draining
                        AND n.heartbeat > now() - $5::bigint * interval '1 millisecond'),
                 asked AS (
                    UPDATE retsu.placement SET wanted = $4
                    WHERE kind = 'queue' AND account = $1 AND region = $2 AND name = $3
                        AND EXISTS (SELECT 1 FROM live)
                    RETURNING 1)
                 SELECT EXISTS (SELECT 1 FROM retsu.placement
                        WHERE kind = 'queue' AND account = $1 AND region = $2 AND name = $3),
                    EXISTS (SELECT 1 FROM asked),
                    pg_notify('retsu_cluster', 'queue')",
                &[&key.account, &key.region, &key.name, &node, &lease],
            )
            .await?;
        let (placed, asked): (bool, bool) = rows
            .first()
            .map(|r| (r.get(0), r.get(1)))
            .unwrap_or_default();
        if !placed {
            return Ok(None);
        }
        if asked {
            return Ok(Some(Move::Done));
        }
        Ok(Some(if self.knows(node).await? {
            Move::NotLive
        } else {
            Move::NoSuchNode
        }))
    }

    /// What moving the queue `key` to `node` takes, from the rows as they
    /// are now (a node's cache of where names are may be a move behind):
    /// the queue's shard, whether `node` holds that shard (live, not asked
    /// to give it up), and whether anything else (a queue or a topic) is
    /// placed in it. `None`: no such queue.
    pub async fn queue_company(
        &mut self,
        key: &super::route::Key,
        node: &str,
    ) -> Result<Option<(i32, bool, bool)>, String> {
        let rows = self
            .rows(
                "WITH q AS (SELECT shard FROM retsu.placement
                        WHERE kind = 'queue' AND account = $1 AND region = $2 AND name = $3)
                 SELECT q.shard,
                    EXISTS (SELECT 1 FROM retsu.lease l WHERE l.id = q.shard AND l.node = $4
                        AND l.expires > now() AND (l.wanted IS NULL OR l.wanted = $4)),
                    EXISTS (SELECT 1 FROM retsu.placement p WHERE p.shard = q.shard
                        AND NOT (p.kind = 'queue' AND p.account = $1 AND p.region = $2
                            AND p.name = $3))
                 FROM q",
                &[&key.account, &key.region, &key.name, &node],
            )
            .await?;
        Ok(rows.first().map(|r| (r.get(0), r.get(1), r.get(2))))
    }

    /// Whether `node` holds `shard` now.
    pub async fn holds(&mut self, shard: i32, node: &str) -> Result<bool, String> {
        let rows = self
            .rows(
                "SELECT 1 FROM retsu.lease WHERE id = $1 AND node = $2 AND expires > now()",
                &[&shard, &node],
            )
            .await?;
        Ok(!rows.is_empty())
    }

    /// Drops an ask to move the queue `key` alone.
    pub async fn drop_queue_move(&mut self, key: &super::route::Key) -> Result<(), String> {
        self.rows(
            "UPDATE retsu.placement SET wanted = NULL
             WHERE kind = 'queue' AND account = $1 AND region = $2 AND name = $3",
            &[&key.account, &key.region, &key.name],
        )
        .await
        .map(|_| ())
    }

    /// Whether the queue `key` still waits to be moved alone (to the
    /// node named), and the shard it is in now: `None` when it is gone.
    pub async fn queue_move_state(
        &mut self,
        key: &super::route::Key,
    ) -> Result<Option<(i32, Option<String>)>, String> {
        let rows = self
            .rows(
                "SELECT shard, wanted FROM retsu.placement
                 WHERE kind = 'queue' AND account = $1 AND region = $2 AND name = $3",
                &[&key.account, &key.region, &key.name],
            )
            .await?;
        Ok(rows.first().map(|r| (r.get(0), r.get(1))))
    }

    /// Whether `node` is registered (live or not).
    async fn knows(&mut self, node: &str) -> Result<bool, String> {
        let rows = self
            .rows("SELECT 1 FROM retsu.nodes WHERE id = $1", &[&node])
            .await?;
        Ok(!rows.is_empty())
    }

    /// Extends the leases of the shards held (each at the epoch it was
    /// taken at), in one statement: the shards renewed. One missing has
    /// been taken by another node.
    pub async fn renew(&mut self, held: &[(i32, i64)]) -> Result<Vec<i32>, String> {
        let (node, lease) = (self.node.clone(), self.lease_ms);
        let shards: Vec<i32> = held.iter().map(|h| h.0).collect();
        let epochs: Vec<i64> = held.iter().map(|h| h.1).collect();
        let rows = self
            .rows(
                "UPDATE retsu.lease l SET expires = now() + $2::bigint * interval '1 millisecond'
                 FROM unnest($3::int[], $4::bigint[]) AS h(id, epoch)
                 WHERE l.id = h.id AND l.epoch = h.epoch AND l.node = $1 RETURNING l.id",
                &[&node, &lease, &shards, &epochs],
            )
            .await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// Gives a shard's lease up (after its last commit), so another node
    /// takes it at once rather than after it lapses.
    pub async fn release(&mut self, shard: i32, epoch: i64) -> Result<(), String> {
        let node = self.node.clone();
        self.rows(
            "WITH released AS (
                UPDATE retsu.lease SET expires = '-infinity'
                WHERE id = $3 AND node = $1 AND epoch = $2 RETURNING 1)
             SELECT pg_notify('retsu_cluster', 'released') FROM released",
            &[&node, &epoch, &shard],
        )
        .await
        .map(|_| ())
    }

    /// Removes this node's row (on shutdown).
    pub async fn leave(&mut self) -> Result<(), String> {
        let (node, instance) = (self.node.clone(), self.instance);
        self.rows(
            "DELETE FROM retsu.nodes WHERE id = $1 AND instance = $2",
            &[&node, &instance],
        )
        .await
        .map(|_| ())
    }

    /// The leases and the nodes, as the database has them now.
    pub async fn view(&mut self) -> Result<View, String> {
        let leases = self
            .rows(
                "SELECT l.id, l.node, l.epoch,
                    CASE WHEN isfinite(l.expires)
                         THEN (extract(epoch FROM l.expires - now()) * 1000)::bigint END,
                    n.url, l.wanted,
                    COALESCE((SELECT value::bigint FROM retsu.meta WHERE key = 'moves'), 0)
                 FROM retsu.lease l LEFT JOIN retsu.nodes n ON n.id = l.node ORDER BY l.id",
                &[],
            )
            .await?;
        let moves: i64 = leases.first().map(|r| r.get(6)).unwrap_or(0);
        let leases: Vec<LeaseRow> = leases
            .iter()
            .map(|r| LeaseRow {
                shard: r.get(0),
                holder: r.get(1),
                epoch: r.get(2),
                expires_in_ms: r.get(3),
                holder_url: r.get(4),
                wanted: r.get(5),
            })
            .collect();
        let lease = leases.first().cloned().unwrap_or_default();
        let asked = self
            .rows(
                "SELECT shard, account, region, name, wanted FROM retsu.placement
                 WHERE wanted IS NOT NULL AND kind = 'queue' ORDER BY shard, name",
                &[],
            )
            .await?
            .iter()
            .map(|r| AskedMove {
                shard: r.get(0),
                key: super::route::Key {
                    kind: super::route::Kind::Queue,
                    account: r.get(1),
                    region: r.get(2),
                    name: r.get(3),
                },
                node: r.get(4),
            })
            .collect();
        let nodes = self
            .rows(
                "SELECT id, url, (extract(epoch FROM now() - heartbeat) * 1000)::bigint,
                    (extract(epoch FROM now() - started) * 1000)::bigint, draining
                 FROM retsu.nodes ORDER BY id",
                &[],
            )
            .await?
            .iter()
            .map(|r| NodeRow {
                id: r.get(0),
                url: r.get(1),
                heartbeat_age_ms: r.get(2),
                up_ms: r.get(3),
                draining: r.get(4),
            })
            .collect();
        Ok(View {
            lease,
            leases,
            nodes,
            moves,
            asked,
        })
    }

    /// Drains `node` (or lets it serve again). Draining the last node
    /// that could hold the lease would leave the queues with no owner, so
    /// it is refused. `Err`: the database could not be asked.
    pub async fn set_draining(&mut self, node: &str, draining: bool) -> Result<Drain, String> {
        let lease = self.lease_ms;
        let rows = self
            .rows(
                "WITH changed AS (
                    UPDATE retsu.nodes SET draining = $2 WHERE id = $1
                    AND (NOT $2 OR EXISTS (SELECT 1 FROM retsu.nodes o WHERE o.id <> $1
                        AND NOT o.draining
                        AND o.heartbeat > now() - $3::bigint * interval '1 millisecond'))
                    RETURNING id)
                 SELECT pg_notify('retsu_cluster', 'drained') FROM changed",
                &[&node, &draining, &lease],
            )
            .await?;
        if !rows.is_empty() {
            return Ok(Drain::Done);
        }
        Ok(if self.knows(node).await? {
            Drain::LastCandidate
        } else {
            Drain::NoSuchNode
        })
    }

    /// The cluster's virtual clock as stored: frozen at a time (epoch
    /// milliseconds) or running at an offset from system time.
    pub async fn clock(&mut self) -> Result<Option<(Option<i64>, i64)>, String> {
        let rows = self
            .rows(
                "SELECT frozen_at, offset_ms FROM retsu.clock WHERE id = 1",
                &[],
            )
            .await?;
        Ok(rows.first().map(|r| (r.get(0), r.get(1))))
    }

    /// Stores the clock, only while this node holds shard 1 as taken at
    /// `epoch` (the same fence every commit passes), and tells every node
    /// in the same transaction (a notice on [`CLOCK_CHANNEL`]).
    pub async fn store_clock(
        &mut self,
        epoch: i64,
        frozen_at: Option<i64>,
        offset_ms: i64,
    ) -> Result<(), String> {
        let node = self.node.clone();
        self.rows(
            "WITH fenced AS (SELECT retsu.fence(1, $1, $2)),
             stored AS (
                INSERT INTO retsu.clock (id, frozen_at, offset_ms) SELECT 1, $3, $4 FROM fenced
                ON CONFLICT (id) DO UPDATE SET frozen_at = excluded.frozen_at, offset_ms = excluded.offset_ms
                RETURNING 1)
             SELECT pg_notify('retsu_clock', 'stored') FROM stored",
            &[&node, &epoch, &frozen_at, &offset_ms],
        )
        .await
        .map(|_| ())
    }
}
