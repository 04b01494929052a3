//! One virtual clock for the cluster, stored in PostgreSQL (`retsu.clock`),
//! read by every node.
//!
//! Each node's engines (one per shard it holds) read the node's clock, so
//! every node must read the same time: a test that freezes or advances
//! the clock through one node and then receives from a queue another
//! node holds must see the new time at once.
//!
//! - **One writer.** The holder of shard 1 keeps the clock: it stores
//!   every change, fenced by its shard's epoch as its commits are, with a
//!   `pg_notify('retsu_clock')` in the same transaction. A node taking
//!   shard 1 adopts the stored clock first, so time after a failover
//!   carries on from where it stood; one handing it over stores it once
//!   more.
//! - **Every other node follows.** It adopts the stored clock when it
//!   joins (before it takes any shard) and before loading each shard, on
//!   every notice, after every reconnection (notices sent while it had no
//!   connection are lost) and once per lease in any case (a connection cut
//!   without an error sends nothing). It always reads the row rather than
//!   trusting a notice's order: reads are serialized, so a later read
//!   never adopts an older clock.
//! - **An admin change answers once every live node has it**
//!   (`front/clock.rs`). The change is routed to shard 1's holder as any
//!   request for no one queue is; once it answered, the node the client
//!   asked has the holder store the clock now (without waiting for the
//!   background store) and then asks every other live node, with the
//!   cluster secret, to adopt the stored clock, and waits for their
//!   answers, each bounded by the lease: a node that cannot answer within
//!   its lease is taken as not live (one paused or cut off that long has
//!   lost its shards; one only this node cannot reach still gets the
//!   notice through PostgreSQL). Notices alone
//!   would leave a window in which the caller's next request, sent to
//!   another node, reads the old time; asking the writer first and the
//!   others second needs no ordering between nodes beyond the row.
//!
//! A node's clock may also move by itself: a queue's reset resumes the
//! clock of the node holding the queue, the global reset puts each
//! node's clock back on system time. On a node that does not keep the
//! clock, such a change lasts only until the next adoption, which the
//! front asks for at once (and for a queue reset, the keeper resumes the
//! cluster's clock first, so every node resumes).
//!
//! Nodes in one process sharing one clock object (the in-process test
//! clusters) share one [`Shared`]: when one of them keeps the clock, the
//! others never adopt the stored row over it, as their clock is the
//! keeper's own and may hold a change not stored yet.
//!
//! A running clock is kept as an offset from system time, so the nodes'
//! system clocks should agree (NTP), as they must for any timestamps a
//! client compares.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use super::membership::Membership;
use crate::clock::{ClockStatus, ControlledClock};

/// The setting of a clock as it is stored: frozen at (epoch ms), offset.
type Setting = (Option<u64>, i64);

/// The clock of the nodes in this process that share one clock object.
pub struct Shared {
    control: ControlledClock,
    /// Tells this clock from another one allocated where a dropped one was.
    identity: tokio::sync::watch::Receiver<u64>,
    /// Set while a node sharing this clock holds shard 1.
    keeper: tokio::sync::Mutex<Option<Keeper>>,
}

/// What storing the clock needs: the shard 1 lease it is fenced by.
struct Keeper {
    rows: Membership,
    epoch: i64,
    /// What it stored last: a store of the same is skipped.
    stored: Option<Setting>,
}

impl Keeper {
    async fn store(&mut self, control: &ControlledClock) -> Result<(), String> {
        let (frozen_at, offset_ms) = control.setting();
        if self.stored == Some((frozen_at, offset_ms)) {
            return Ok(());
        }
        self.rows
            .store_clock(self.epoch, frozen_at.map(|f| f as i64), offset_ms)
            .await?;
        self.stored = Some((frozen_at, offset_ms));
        Ok(())
    }
}

/// Clocks shared by nodes of this process, by the clock object's address.
static SHARED: Mutex<Vec<(usize, Weak<Shared>)>> = Mutex::new(Vec::new());

impl Shared {
    /// The shared state of `clock`; None for plain system time, which
    /// never moves.
    pub fn of(clock: &Arc<dyn crate::clock::Clock>) -> Option<Arc<Shared>> {
        let control = clock.control()?.clone();
        let at = Arc::as_ptr(clock) as *const () as usize;
        let mut all = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|(_, w)| w.strong_count() > 0);
        let identity = control.changes();
        if let Some(shared) = all
            .iter()
            .filter(|(a, _)| *a == at)
            .filter_map(|(_, w)| w.upgrade())
            .find(|s| s.identity.same_channel(&identity))
        {
            return Some(shared);
        }
        let shared = Arc::new(Shared {
            identity,
            control,
            keeper: tokio::sync::Mutex::new(None),
        });
        all.push((at, Arc::downgrade(&shared)));
        Some(shared)
    }

    pub fn status(&self) -> ClockStatus {
        self.control.status()
    }

    /// Shard 1 was taken at `epoch` by the node of `rows`: adopts the
    /// stored clock (or stores this one, when none is stored yet) and
    /// keeps it from now on.
    pub async fn keep(&self, mut rows: Membership, epoch: i64) -> Result<(), String> {
        let mut keeper = self.keeper.lock().await;
        let stored = rows.clock().await?;
        let mut kept = Keeper {
            rows,
            epoch,
            stored: None,
        };
        match stored {
            Some((frozen_at, offset_ms)) => {
                let setting = (frozen_at.map(|f| f.max(0) as u64), offset_ms);
                self.control.adopt(setting.0, setting.1);
                kept.stored = Some(setting);
            }
            None => kept.store(&self.control).await?,
        }
        *keeper = Some(kept);
        Ok(())
    }

    /// Shard 1, taken at `epoch` by `node`, is handed over: stores the
    /// clock once more (the next holder gets the last change even if it
    /// was not stored yet) and keeps it no more.
    pub async fn hand_over(&self, node: &str, epoch: i64) {
        let mut keeper = self.keeper.lock().await;
        // Another node of this process may have taken shard 1 since.
        let Some(mut kept) = keeper
            .take()
            .filter(|k| k.rows.node == node && k.epoch == epoch)
        else {
            return;
        };
        if let Err(e) = kept.store(&self.control).await {
            tracing::warn!("cannot store the cluster's clock before handing over: {e}");
        }
    }

    /// Stores the clock now when a node of this process keeps it:
    /// Ok(true) once stored, Ok(false) when none keeps it here.
    pub async fn store(&self, resume: bool) -> Result<bool, String> {
        let mut keeper = self.keeper.lock().await;
        let Some(kept) = keeper.as_mut() else {
            return Ok(false);
        };
        if resume {
            self.control.resume();
        }
        kept.store(&self.control).await.map(|()| true)
    }

    /// Reads the stored clock through `rows` and adopts it, unless a node
    /// of this process keeps it: Ok(true) when the clock changed.
    pub async fn adopt(&self, rows: &mut Membership) -> Result<bool, String> {
        let keeper = self.keeper.lock().await;
        if keeper.is_some() {
            return Ok(false);
        }
        let Some((frozen_at, offset_ms)) = rows.clock().await? else {
            return Ok(false);
        };
        // Adopted under the lock: a node of this process taking shard 1
        // meanwhile adopts after this one, not before.
        let setting = (frozen_at.map(|f| f.max(0) as u64), offset_ms);
        if self.control.setting() == setting {
            return Ok(false);
        }
        self.control.adopt(setting.0, setting.1);
        drop(keeper);
        Ok(true)
    }
}

/// One node's part: its connection to the stored clock.
pub struct Follower {
    pub shared: Arc<Shared>,
    /// Listens on the clock's channel; reads are serialized through it.
    rows: tokio::sync::Mutex<Membership>,
    wake: Arc<tokio::sync::Notify>,
}

impl Follower {
    pub fn new(shared: Arc<Shared>, rows: &Membership) -> Follower {
        let rows = rows.clock_listener();
        Follower {
            wake: rows.notices(),
            rows: tokio::sync::Mutex::new(rows),
            shared,
        }
    }

    /// Adopts the stored clock now (unless this process keeps it).
    pub async fn adopt(&self) -> Result<bool, String> {
        let mut rows = self.rows.lock().await;
        self.shared.adopt(&mut rows).await
    }

    /// What a node asked to share a clock change does: the keeper stores
    /// its clock (resumed first when `resume`), any other node adopts the
    /// stored one. Ok(true) when this node keeps the clock.
    pub async fn share(&self, resume: bool) -> Result<bool, String> {
        let mut rows = self.rows.lock().await;
        if self.shared.store(resume).await? {
            return Ok(true);
        }
        self.shared.adopt(&mut rows).await?;
        Ok(false)
    }

    /// The node's clock, kept: adopts the stored clock on every notice
    /// and once per `lease`, and stores every change while this process
    /// keeps it (retried every `retry` while the database refuses).
    pub async fn run(self: Arc<Self>, lease: Duration, retry: Duration) {
        let mut changes = self.shared.control.changes();
        let mut unstored = false;
        loop {
            if unstored {
                // Stored as it is now, so a burst of changes is one write.
                match self.shared.store(false).await {
                    Ok(_) => unstored = false,
                    Err(e) => {
                        tracing::warn!("cannot store the cluster's clock (retrying): {e}");
                        tokio::time::sleep(retry).await;
                        continue;
                    }
                }
            }
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    changes.borrow_and_update();
                    unstored = true;
                }
                _ = self.wake.notified() => {
                    if let Err(e) = self.adopt().await {
                        tracing::warn!("cannot read the cluster's clock: {e}");
                    }
                }
                _ = tokio::time::sleep(lease) => {
                    if let Err(e) = self.adopt().await {
                        tracing::debug!("cannot read the cluster's clock: {e}");
                    }
                }
            }
        }
    }
}
