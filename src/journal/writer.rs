//! Committing: whatever is pending becomes one batch, and the backend
//! commits it as one transaction.
//!
//! Who commits depends on how long a commit blocks. A commit that does
//! not wait for the disk (SQLite with `--durability process`: writes to
//! the operating system's page cache) is made by a request that waits for
//! it, on its own worker: the first waiter to find the writer free commits
//! everything pending, and the requests that published meanwhile find
//! their changes in that commit or commit the rest themselves. Handing
//! such a commit to another thread costs a wake-up on each side of it,
//! more than the commit itself. A commit that waits for the disk (`full`)
//! or a network round trip (PostgreSQL) is made by the writer thread, so
//! no worker waits on either; so are `relaxed`'s commits, one per interval.
//!
//! The writer thread runs in both cases. When requests commit, it commits
//! only what no request waits for (changes made in the background, such as
//! a move task's steps) once they have been pending for [`SWEEP`], retries
//! a failed commit, and makes the last commit at close.

use std::sync::MutexGuard;
use std::time::Instant;

use super::*;

/// How often expired deduplication ids and receive attempts are dropped.
const PRUNE_EVERY: Duration = Duration::from_secs(10);
/// A failed commit is retried after this long.
const RETRY: Duration = Duration::from_millis(500);
/// When requests commit: how long a change may wait for a request to
/// commit it before the writer thread does.
const SWEEP: Duration = Duration::from_millis(5);

/// The backend and what it carries from one commit to the next.
pub(super) struct Writer {
    backend: Box<dyn Backend>,
    /// Carries a failed batch into the next try.
    batch: Batch,
    last_prune: Instant,
    clock: Arc<dyn Clock>,
}

/// What [`Inner::try_commit`] did.
pub(super) enum Tried {
    /// Committed (or failed to) and settled: look at the status again.
    Settled,
    /// Another commit is under way; its end is settled, which wakes the
    /// caller.
    Busy,
    /// The journal has closed: nothing commits any more.
    Closed,
}

/// How a commit went, for [`Inner::settle`]: the last ticket it held.
pub(super) struct Outcome {
    ticket: u64,
    failure: Option<String>,
    /// The journal was closing when the commit took what was pending.
    closing: bool,
}

impl Writer {
    pub(super) fn new(backend: Box<dyn Backend>, clock: Arc<dyn Clock>) -> Writer {
        Writer {
            backend,
            batch: Batch::default(),
            last_prune: Instant::now(),
            clock,
        }
    }

    /// Commits everything pending, with a failed batch carried over. The
    /// caller settles the outcome once it has let go of the writer.
    pub(super) fn commit_pending(&mut self, inner: &Inner) -> Outcome {
        let (ops, ticket, closing) = {
            let mut pending = inner.pending.lock().unwrap_or_else(|p| p.into_inner());
            (
                std::mem::take(&mut pending.ops),
                pending.ticket,
                pending.closing,
            )
        };
        self.batch.absorb(ops);
        let prune = self.last_prune.elapsed() > PRUNE_EVERY;
        if prune {
            self.batch.prune = Some(self.clock.now_ms());
        }
        let result = if self.batch.is_empty() {
            Ok(())
        } else {
            self.backend.commit(&self.batch)
        };
        let failure = match result {
            Ok(()) => {
                self.batch = Batch::default();
                if prune {
                    self.last_prune = Instant::now();
                }
                None
            }
            Err(e) => Some(e),
        };
        Outcome {
            ticket,
            failure,
            closing,
        }
    }
}

impl Inner {
    /// The writer, unless the journal has closed.
    pub(super) fn writer(&self) -> MutexGuard<'_, Option<Writer>> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Tells the waiters how a commit went. Called after the writer is
    /// let go, so that a waiter it wakes can commit next.
    pub(super) fn settle(&self, outcome: &Outcome) {
        match &outcome.failure {
            None => {
                if self.failing.swap(false, Ordering::AcqRel) {
                    tracing::info!("journal: commits succeed again");
                }
                self.status
                    .send_modify(|s| s.durable = s.durable.max(outcome.ticket));
            }
            Some(e) => {
                // Said once as an error, then quietly until it recovers.
                if self.failing.swap(true, Ordering::AcqRel) {
                    tracing::debug!("journal: commit failed again, will retry: {e}");
                } else {
                    tracing::error!("journal: commit failed, will retry: {e}");
                }
                self.status
                    .send_modify(|s| s.failed = s.failed.max(outcome.ticket));
            }
        }
    }

    /// Commits on the calling thread if the writer is free: what a
    /// waiting request does when requests commit.
    pub(super) fn try_commit(&self) -> Tried {
        let mut writer = match self.writer.try_lock() {
            Ok(writer) => writer,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Tried::Busy,
        };
        let Some(w) = writer.as_mut() else {
            return Tried::Closed;
        };
        let outcome = w.commit_pending(self);
        drop(writer);
        self.settle(&outcome);
        Tried::Settled
    }
}

/// The writer thread.
pub(super) fn run(inner: Arc<Inner>) {
    // The last commit failed: try again after `RETRY`.
    let mut retry = false;
    loop {
        {
            let pending = inner.pending.lock().unwrap_or_else(|p| p.into_inner());
            if inner.requests_commit {
                wait_for_leftovers(&inner, pending, retry);
            } else {
                wait_for_work(&inner, pending, retry);
            }
        }
        let mut writer = inner.writer();
        let Some(w) = writer.as_mut() else { return };
        let outcome = w.commit_pending(&inner);
        if outcome.failure.is_some() && outcome.closing {
            // The backend goes with the thread: a closed journal holds
            // no connection or lock.
            *writer = None;
        }
        drop(writer);
        inner.settle(&outcome);
        retry = outcome.failure.is_some();
        if retry {
            if outcome.closing {
                return;
            }
            std::thread::sleep(RETRY);
            continue;
        }
        if outcome.closing {
            let pending = inner.pending.lock().unwrap_or_else(|p| p.into_inner());
            if pending.ops.is_empty() {
                drop(pending);
                *inner.writer() = None;
                return;
            }
        }
    }
}

/// The writer thread commits every batch: waits for a publication (or,
/// with `--durability relaxed`, for the end of an interval after it).
fn wait_for_work(inner: &Inner, mut pending: MutexGuard<'_, Pending>, retry: bool) {
    while pending.ops.is_empty() && !retry && !pending.closing {
        // Woken by the next publication (relaxed mode too: it starts the
        // interval), not by those after it.
        pending.wake_at = pending.ticket + 1;
        pending = inner.wake.wait(pending).unwrap_or_else(|p| p.into_inner());
    }
    pending.wake_at = 0;
    if inner.relaxed && !pending.closing {
        // Gather for an interval: one commit per interval.
        let deadline = Instant::now() + RELAXED_INTERVAL;
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
}

/// Requests commit their own changes: waits until a change has gone
/// uncommitted for a sweep interval, or the journal closes.
fn wait_for_leftovers(inner: &Inner, mut pending: MutexGuard<'_, Pending>, retry: bool) {
    loop {
        if pending.closing || retry {
            return;
        }
        if pending.ticket <= inner.status.borrow().durable {
            // Nothing uncommitted: sleep until the next publication.
            pending.wake_at = pending.ticket + 1;
            pending = inner.wake.wait(pending).unwrap_or_else(|p| p.into_inner());
            pending.wake_at = 0;
            continue;
        }
        let seen = pending.ticket;
        pending = inner
            .wake
            .wait_timeout(pending, SWEEP)
            .unwrap_or_else(|p| p.into_inner())
            .0;
        if inner.status.borrow().durable < seen {
            return;
        }
    }
}
