//! Time, injected.
//!
//! The engine reads time only through a [`Clock`], so tests and the admin
//! API can move time forward without sleeping. Time is milliseconds since
//! the Unix epoch, the unit SQS reports timestamps in.
//!
//! [`ControlledClock`] is what the server runs on: system time plus an
//! offset, which can be frozen, advanced or set (never backwards) through
//! `/_retsu/clock`; every change wakes every sleeper (long polls, move
//! tasks) so transitions that fell due fire at once. [`ManualClock`], the
//! tests' clock, is a controlled clock frozen from the start.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub type SleepFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// A source of time the engine can also wait on.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;

    /// Resolves once `now_ms() >= deadline_ms`.
    fn sleep_until(&self, deadline_ms: u64) -> SleepFuture<'_>;

    /// The controls of a clock the admin API may freeze, advance or set;
    /// `None` for plain system time.
    fn control(&self) -> Option<&ControlledClock> {
        None
    }
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

/// Where a controllable clock stands, as `/_retsu/clock` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockStatus {
    pub now_ms: u64,
    pub frozen: bool,
    /// `now_ms` minus the system time.
    pub offset_ms: i64,
}

/// Why a clock change was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClockError {
    /// Time never goes backwards: messages' deadlines would run in reverse.
    Backwards { now_ms: u64, requested_ms: u64 },
}

impl std::fmt::Display for ClockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClockError::Backwards {
                now_ms,
                requested_ms,
            } => write!(
                f,
                "time never goes backwards: {} is before the clock's {}",
                format_rfc3339(*requested_ms),
                format_rfc3339(*now_ms)
            ),
        }
    }
}

/// Marks a running clock in `frozen_at`.
const RUNNING: u64 = u64::MAX;

/// System time plus an offset; freezable, advanceable, settable.
///
/// Reads are two atomic loads (the hot path reads the clock on every
/// request); changes are serialized by a mutex and published with one
/// store, so a reader never sees half a change.
#[derive(Debug, Clone)]
pub struct ControlledClock {
    inner: Arc<ControlledInner>,
}

#[derive(Debug)]
struct ControlledInner {
    /// The frozen time, or [`RUNNING`].
    frozen_at: AtomicU64,
    /// Added to system time while running.
    offset: AtomicI64,
    write: Mutex<()>,
    /// Bumped on every change: sleepers re-check their deadline.
    changed: tokio::sync::watch::Sender<u64>,
}

impl Default for ControlledClock {
    fn default() -> ControlledClock {
        ControlledClock::running()
    }
}

impl ControlledClock {
    /// Runs on system time, no offset.
    pub fn running() -> ControlledClock {
        ControlledClock::with(RUNNING, 0)
    }

    /// Frozen at `now_ms` until resumed, advanced or set.
    pub fn frozen_at(now_ms: u64) -> ControlledClock {
        ControlledClock::with(now_ms.min(RUNNING - 1), 0)
    }

    /// Runs from `start_ms` now (an offset from system time).
    pub fn running_from(start_ms: u64) -> ControlledClock {
        ControlledClock::with(RUNNING, start_ms as i64 - SystemClock.now_ms() as i64)
    }

    /// `--clock` / `--clock-start`: frozen or running, at `start_ms` or now.
    pub fn from_settings(frozen: bool, start_ms: Option<u64>) -> ControlledClock {
        match (frozen, start_ms) {
            (true, start) => {
                ControlledClock::frozen_at(start.unwrap_or_else(|| SystemClock.now_ms()))
            }
            (false, Some(start)) => ControlledClock::running_from(start),
            (false, None) => ControlledClock::running(),
        }
    }

    fn with(frozen_at: u64, offset: i64) -> ControlledClock {
        let (changed, _) = tokio::sync::watch::channel(0);
        ControlledClock {
            inner: Arc::new(ControlledInner {
                frozen_at: AtomicU64::new(frozen_at),
                offset: AtomicI64::new(offset),
                write: Mutex::new(()),
                changed,
            }),
        }
    }

    fn system_ms() -> u64 {
        SystemClock.now_ms()
    }

    pub fn is_frozen(&self) -> bool {
        self.inner.frozen_at.load(Ordering::SeqCst) != RUNNING
    }

    pub fn status(&self) -> ClockStatus {
        let now_ms = self.now_ms();
        ClockStatus {
            now_ms,
            frozen: self.is_frozen(),
            offset_ms: now_ms as i64 - Self::system_ms() as i64,
        }
    }

    /// Runs `change` under the write lock, then wakes every sleeper.
    fn change<T>(&self, change: impl FnOnce(&ControlledInner) -> T) -> T {
        let guard = self.inner.write.lock().unwrap_or_else(|p| p.into_inner());
        let out = change(&self.inner);
        drop(guard);
        self.inner
            .changed
            .send_modify(|generation| *generation += 1);
        out
    }

    /// Stops time where it is.
    pub fn freeze(&self) -> ClockStatus {
        self.change(|c| {
            if c.frozen_at.load(Ordering::SeqCst) == RUNNING {
                let now = running_now(c);
                c.frozen_at.store(now, Ordering::SeqCst);
            }
        });
        self.status()
    }

    /// Lets time run again from where it stands (the offset absorbs the
    /// frozen interval, so time does not jump).
    pub fn resume(&self) -> ClockStatus {
        self.change(|c| {
            let frozen = c.frozen_at.load(Ordering::SeqCst);
            if frozen != RUNNING {
                let offset = frozen as i64 - Self::system_ms() as i64;
                c.offset.store(offset, Ordering::SeqCst);
                c.frozen_at.store(RUNNING, Ordering::SeqCst);
            }
        });
        self.status()
    }

    /// Moves time forward by `ms`, frozen or running.
    pub fn advance_ms(&self, ms: u64) -> ClockStatus {
        self.change(|c| {
            let frozen = c.frozen_at.load(Ordering::SeqCst);
            if frozen == RUNNING {
                c.offset.fetch_add(ms as i64, Ordering::SeqCst);
            } else {
                c.frozen_at
                    .store(frozen.saturating_add(ms).min(RUNNING - 1), Ordering::SeqCst);
            }
        });
        self.status()
    }

    /// Sets the time; refuses to go backwards.
    pub fn set_ms(&self, to_ms: u64) -> Result<ClockStatus, ClockError> {
        self.change(|c| {
            let now = current(c);
            if to_ms < now {
                return Err(ClockError::Backwards {
                    now_ms: now,
                    requested_ms: to_ms,
                });
            }
            place(c, to_ms);
            Ok(())
        })?;
        Ok(self.status())
    }

    /// Sets the time even backwards (the tests' [`ManualClock::set_ms`]).
    fn force_ms(&self, to_ms: u64) {
        self.change(|c| place(c, to_ms));
    }

    /// What the clock is set to: frozen at a time, or running at an
    /// offset from system time (what a cluster stores for the next owner).
    pub fn setting(&self) -> (Option<u64>, i64) {
        let frozen = self.inner.frozen_at.load(Ordering::SeqCst);
        (
            (frozen != RUNNING).then_some(frozen),
            self.inner.offset.load(Ordering::SeqCst),
        )
    }

    /// Takes a stored [`ControlledClock::setting`] as it is, even if that
    /// is behind this clock: the store is the cluster's clock.
    pub fn adopt(&self, frozen_at: Option<u64>, offset_ms: i64) {
        self.change(|c| {
            c.offset.store(offset_ms, Ordering::SeqCst);
            c.frozen_at.store(
                frozen_at.map_or(RUNNING, |f| f.min(RUNNING - 1)),
                Ordering::SeqCst,
            );
        });
    }

    /// Changes on every freeze, resume, advance, set, reset or adopt.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }

    /// Back to plain system time, running (`POST /_retsu/reset`).
    pub fn reset(&self) -> ClockStatus {
        self.change(|c| {
            c.offset.store(0, Ordering::SeqCst);
            c.frozen_at.store(RUNNING, Ordering::SeqCst);
        });
        self.status()
    }
}

fn running_now(c: &ControlledInner) -> u64 {
    (ControlledClock::system_ms() as i64 + c.offset.load(Ordering::SeqCst)).max(0) as u64
}

fn current(c: &ControlledInner) -> u64 {
    match c.frozen_at.load(Ordering::SeqCst) {
        RUNNING => running_now(c),
        frozen => frozen,
    }
}

/// Puts the clock at `to_ms`, keeping it frozen or running.
fn place(c: &ControlledInner, to_ms: u64) {
    if c.frozen_at.load(Ordering::SeqCst) == RUNNING {
        c.offset.store(
            to_ms as i64 - ControlledClock::system_ms() as i64,
            Ordering::SeqCst,
        );
    } else {
        c.frozen_at.store(to_ms.min(RUNNING - 1), Ordering::SeqCst);
    }
}

impl Clock for ControlledClock {
    fn now_ms(&self) -> u64 {
        current(&self.inner)
    }

    fn sleep_until(&self, deadline_ms: u64) -> SleepFuture<'_> {
        let mut rx = self.inner.changed.subscribe();
        Box::pin(async move {
            loop {
                rx.borrow_and_update();
                let now = self.now_ms();
                if now >= deadline_ms {
                    return;
                }
                if self.is_frozen() {
                    if rx.changed().await.is_err() {
                        std::future::pending::<()>().await;
                    }
                } else {
                    let wait = Duration::from_millis(deadline_ms - now);
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        changed = rx.changed() => {
                            if changed.is_err() {
                                std::future::pending::<()>().await;
                            }
                        }
                    }
                }
            }
        })
    }

    fn control(&self) -> Option<&ControlledClock> {
        Some(self)
    }
}

/// A clock that only moves when told to: a [`ControlledClock`] frozen from
/// the start. Sleepers wake when an advance passes their deadline.
#[derive(Debug, Clone)]
pub struct ManualClock {
    inner: ControlledClock,
}

impl ManualClock {
    /// A manual clock starting at `start_ms`.
    pub fn new(start_ms: u64) -> ManualClock {
        ManualClock {
            inner: ControlledClock::frozen_at(start_ms),
        }
    }

    /// A manual clock starting at the current wall-clock time.
    pub fn starting_now() -> ManualClock {
        ManualClock::new(SystemClock.now_ms())
    }

    pub fn advance(&self, by: Duration) {
        self.inner.advance_ms(by.as_millis() as u64);
    }

    pub fn set_ms(&self, now_ms: u64) {
        self.inner.force_ms(now_ms);
    }

    /// The controls the admin API uses on this clock.
    pub fn controls(&self) -> &ControlledClock {
        &self.inner
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.inner.now_ms()
    }

    fn sleep_until(&self, deadline_ms: u64) -> SleepFuture<'_> {
        self.inner.sleep_until(deadline_ms)
    }

    fn control(&self) -> Option<&ControlledClock> {
        Some(&self.inner)
    }
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `2026-12-01T10:00:00.000Z`.
pub fn format_rfc3339(ms: u64) -> String {
    let secs = (ms / 1000) as i64;
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let t = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        t / 3600,
        t / 60 % 60,
        t % 60,
        ms % 1000
    )
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]` (a space for `T` too, and a
/// bare date as midnight UTC) into epoch milliseconds.
pub fn parse_rfc3339(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits = |t: &str| -> Option<u32> {
        (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())).then(|| t.parse().ok())?
    };
    let (date, time) = match s.find(['T', 't', ' ']) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, "00:00:00Z"),
    };
    let mut parts = date.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d) = (digits(y)? as i64, digits(m)?, digits(d)?);
    if !(1..=12).contains(&m) || d == 0 || d > 31 {
        return None;
    }
    let (clock, zone_ms): (&str, i64) = if let Some(c) = time.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else if let Some(i) = time.rfind(['+', '-']) {
        let (c, zone) = (&time[..i], &time[i..]);
        let sign = if zone.starts_with('-') { -1 } else { 1 };
        let (zh, zm) = zone[1..].split_once(':')?;
        (
            c,
            sign * (digits(zh)? as i64 * 60 + digits(zm)? as i64) * 60_000,
        )
    } else {
        (time, 0)
    };
    let (hms, frac) = match clock.split_once('.') {
        Some((hms, frac)) => (hms, frac),
        None => (clock, ""),
    };
    let mut hms = hms.split(':');
    let (h, mi, sec) = (
        digits(hms.next()?)?,
        digits(hms.next()?)?,
        digits(hms.next().unwrap_or("00"))?,
    );
    if hms.next().is_some() || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let millis = if frac.is_empty() {
        0
    } else {
        digits(frac)?;
        format!("{frac:0<3}")[..3].parse::<u64>().ok()?
    };
    let days = days_from_civil(y, m, d);
    let ms = (days * 86_400 + h as i64 * 3600 + mi as i64 * 60 + sec as i64) * 1000 + millis as i64
        - zone_ms;
    u64::try_from(ms).ok()
}

/// Parses a duration: `30s`, `15m`, `4d`, `1h30m`, `250ms`, or a bare
/// number of milliseconds.
pub fn parse_duration_ms(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().ok();
    }
    let mut total: u64 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let n_end = rest.find(|c: char| !c.is_ascii_digit())?;
        if n_end == 0 {
            return None;
        }
        let n: u64 = rest[..n_end].parse().ok()?;
        rest = &rest[n_end..];
        let u_end = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = match &rest[..u_end] {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            _ => return None,
        };
        total = total.checked_add(n.checked_mul(unit)?)?;
        rest = &rest[u_end..];
    }
    Some(total)
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

    #[tokio::test]
    async fn controlled_clock_freezes_resumes_and_never_goes_back() {
        let clock = ControlledClock::running();
        let before = SystemClock.now_ms();
        assert!(clock.now_ms() >= before && !clock.is_frozen());
        let frozen = clock.freeze();
        assert!(frozen.frozen);
        clock.advance_ms(3_600_000);
        assert_eq!(clock.now_ms(), frozen.now_ms + 3_600_000);
        let resumed = clock.resume();
        assert!(!resumed.frozen);
        assert!(resumed.now_ms >= frozen.now_ms + 3_600_000);
        assert!(resumed.offset_ms >= 3_599_000, "{resumed:?}");
        assert!(clock.set_ms(before).is_err());
        let later = clock.now_ms() + 86_400_000;
        assert!(clock.set_ms(later).unwrap().now_ms >= later);
        assert!(clock.reset().offset_ms.abs() < 1_000);
    }

    #[tokio::test]
    async fn controlled_sleepers_wake_on_advance_even_when_running() {
        let clock = ControlledClock::running();
        let deadline = clock.now_ms() + 3_600_000;
        let c2 = clock.clone();
        let sleeper = tokio::spawn(async move { c2.sleep_until(deadline).await });
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished());
        clock.advance_ms(3_600_000);
        tokio::time::timeout(Duration::from_secs(5), sleeper)
            .await
            .expect("sleeper woke")
            .unwrap();
    }

    #[test]
    fn times_and_durations() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00.000Z");
        let t = parse_rfc3339("2026-01-01T00:00:00Z").unwrap();
        assert_eq!(t, 1_767_225_600_000);
        assert_eq!(format_rfc3339(t + 1_234), "2026-01-01T00:00:01.234Z");
        assert_eq!(parse_rfc3339("2026-01-01T02:00:00.5+02:00"), Some(t + 500));
        assert_eq!(parse_rfc3339("2024-02-29"), Some(1_709_164_800_000));
        assert_eq!(parse_rfc3339("2026-13-01T00:00:00Z"), None);
        assert_eq!(parse_rfc3339("yesterday"), None);
        assert_eq!(parse_duration_ms("30s"), Some(30_000));
        assert_eq!(parse_duration_ms("1h30m"), Some(5_400_000));
        assert_eq!(parse_duration_ms("4d"), Some(345_600_000));
        assert_eq!(parse_duration_ms("250ms"), Some(250));
        assert_eq!(parse_duration_ms("1500"), Some(1_500));
        assert_eq!(parse_duration_ms("5x"), None);
        assert_eq!(parse_duration_ms("s"), None);
        assert_eq!(parse_duration_ms(""), None);
    }
}
