//! Time, injected.
//!
//! The engine reads time only through a [`Clock`], so tests (and later an
//! admin API) can move time forward without sleeping. Time is milliseconds
//! since the Unix epoch, the unit SQS reports timestamps in.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub type SleepFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// A source of time the engine can also wait on.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;

    /// Resolves once `now_ms() >= deadline_ms`.
    fn sleep_until(&self, deadline_ms: u64) -> SleepFuture<'_>;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }

    fn sleep_until(&self, deadline_ms: u64) -> SleepFuture<'_> {
        let wait = deadline_ms.saturating_sub(self.now_ms());
        Box::pin(tokio::time::sleep(Duration::from_millis(wait)))
    }
}

/// A clock that only moves when told to. Sleepers wake when an advance
/// passes their deadline.
#[derive(Debug, Clone)]
pub struct ManualClock {
    inner: Arc<ManualInner>,
}

#[derive(Debug)]
struct ManualInner {
    now: AtomicU64,
    changed: tokio::sync::watch::Sender<u64>,
}

impl ManualClock {
    /// A manual clock starting at `start_ms`.
    pub fn new(start_ms: u64) -> ManualClock {
        let (changed, _) = tokio::sync::watch::channel(start_ms);
        ManualClock {
            inner: Arc::new(ManualInner {
                now: AtomicU64::new(start_ms),
                changed,
            }),
        }
    }

    /// A manual clock starting at the current wall-clock time.
    pub fn starting_now() -> ManualClock {
        ManualClock::new(SystemClock.now_ms())
    }

    pub fn advance(&self, by: Duration) {
        let now = self
            .inner
            .now
            .fetch_add(by.as_millis() as u64, Ordering::SeqCst)
            + by.as_millis() as u64;
        self.inner.changed.send_replace(now);
    }

    pub fn set_ms(&self, now_ms: u64) {
        self.inner.now.store(now_ms, Ordering::SeqCst);
        self.inner.changed.send_replace(now_ms);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.inner.now.load(Ordering::SeqCst)
    }

    fn sleep_until(&self, deadline_ms: u64) -> SleepFuture<'_> {
        let mut rx = self.inner.changed.subscribe();
        Box::pin(async move {
            while self.now_ms() < deadline_ms {
                if rx.changed().await.is_err() {
                    // The clock is gone; nothing will ever advance it.
                    std::future::pending::<()>().await;
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn manual_sleep_wakes_on_advance() {
        let clock = ManualClock::new(1_000);
        let c2 = clock.clone();
        let sleeper = tokio::spawn(async move { c2.sleep_until(6_000).await });
        tokio::task::yield_now().await;
        clock.advance(Duration::from_secs(2));
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished());
        clock.advance(Duration::from_secs(3));
        tokio::time::timeout(Duration::from_secs(5), sleeper)
            .await
            .expect("sleeper woke")
            .unwrap();
        assert_eq!(clock.now_ms(), 6_000);
    }
}
