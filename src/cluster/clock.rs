//! One virtual clock for the cluster, stored in PostgreSQL (`retsu.clock`).
//!
//! Only the lease holder answers, so only its clock moves: the admin API's
//! freeze, advance, set and reset reach it wherever they were sent. The
//! holder stores every change (fenced by its epoch, like its commits), and
//! a node taking the lease adopts the stored clock before it loads the
//! store, so deadlines, delays and retention read the same time after a
//! failover as before it. A running clock is kept as an offset from system
//! time, so the nodes' system clocks should agree (NTP), as they must for
//! any timestamps a client compares.

use std::sync::Arc;
use std::time::Duration;

use super::membership::Membership;
use crate::clock::ControlledClock;

/// Stores the clock's changes until dropped.
pub struct Keeper(Option<tokio::task::JoinHandle<()>>, Option<ControlledClock>);

impl Drop for Keeper {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

impl Keeper {
    /// Stops keeping and stores the clock once more, as it is now: a node
    /// handing the lease over (drained, stopped) leaves the next holder
    /// the last change even if the keeping task had not stored it yet.
    pub async fn finish(mut self, members: &mut Membership, epoch: i64) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
        if let Some(clock) = self.1.take() {
            if let Err(e) = store(members, epoch, &clock).await {
                tracing::warn!("cannot store the cluster's clock before handing over: {e}");
            }
        }
    }
}

/// Adopts the stored clock (or stores this node's, when none is stored
/// yet), then keeps storing every change until the [`Keeper`] is dropped.
pub async fn keep(
    mut members: Membership,
    epoch: i64,
    clock: Arc<dyn crate::clock::Clock>,
    retry: Duration,
) -> Result<Keeper, String> {
    let Some(control) = clock.control().cloned() else {
        return Ok(Keeper(None, None));
    };
    let mut changes = control.changes();
    match members.clock().await? {
        Some((frozen_at, offset_ms)) => {
            control.adopt(frozen_at.map(|f| f.max(0) as u64), offset_ms);
            changes.borrow_and_update();
        }
        None => store(&mut members, epoch, &control).await?,
    }
    let kept = control.clone();
    Ok(Keeper(
        Some(tokio::spawn(async move {
            let mut pending = false;
            loop {
                if !pending && changes.changed().await.is_err() {
                    return;
                }
                changes.borrow_and_update();
                // Stored as it is now, so a burst of changes is one write.
                pending = match store(&mut members, epoch, &control).await {
                    Ok(()) => false,
                    Err(e) => {
                        tracing::warn!("cannot store the cluster's clock (retrying): {e}");
                        tokio::time::sleep(retry).await;
                        true
                    }
                };
            }
        })),
        Some(kept),
    ))
}

async fn store(
    members: &mut Membership,
    epoch: i64,
    clock: &ControlledClock,
) -> Result<(), String> {
    let (frozen_at, offset_ms) = clock.setting();
    members
        .store_clock(epoch, frozen_at.map(|f| f as i64), offset_ms)
        .await
}
