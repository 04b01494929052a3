//! The writer thread: whatever is pending becomes one batch, and the
//! backend commits it as one transaction.

use std::time::Instant;

use super::*;

/// How often expired deduplication ids and receive attempts are dropped.
const PRUNE_EVERY: Duration = Duration::from_secs(10);
/// A failed commit is retried after this long.
const RETRY: Duration = Duration::from_millis(500);

pub(super) fn run(mut backend: Box<dyn Backend>, inner: Arc<Inner>, clock: Arc<dyn Clock>) {
    // Carries a failed batch into the next try.
    let mut batch = Batch::default();
    let mut last_prune = Instant::now();
    loop {
        let (ops, ticket, closing) = {
            let mut pending = inner.pending.lock().unwrap_or_else(|p| p.into_inner());
            while pending.ops.is_empty() && batch.is_empty() && !pending.closing {
                // Woken by the next publication (relaxed mode too: it
                // starts the interval), not by those after it.
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
            (
                std::mem::take(&mut pending.ops),
                pending.ticket,
                pending.closing,
            )
        };
        batch.absorb(ops);
        let prune = last_prune.elapsed() > PRUNE_EVERY;
        if prune {
            batch.prune = Some(clock.now_ms());
        }
        let result = if batch.is_empty() {
            Ok(())
        } else {
            backend.commit(&batch)
        };
        match result {
            Ok(()) => {
                batch = Batch::default();
                if prune {
                    last_prune = Instant::now();
                }
                if inner.failing.swap(false, Ordering::AcqRel) {
                    tracing::info!("journal: commits succeed again");
                }
                inner.status.send_modify(|s| s.durable = ticket);
            }
            Err(e) => {
                // Said once as an error, then quietly until it recovers.
                if inner.failing.swap(true, Ordering::AcqRel) {
                    tracing::debug!("journal: commit failed again, will retry: {e}");
                } else {
                    tracing::error!("journal: commit failed, will retry: {e}");
                }
                inner.status.send_modify(|s| s.failed = ticket);
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
