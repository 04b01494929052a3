//! Seeded faults ("realism mode"): what real SQS does to a consumer that a
//! faithful emulator does not — duplicates, reordering, short receives,
//! throttling, 500s, latency — injected on purpose, reproducibly.
//!
//! Why: Retsu's standard queues are better than SQS (exactly once, in
//! order, batches filled greedily); a consumer tested only against that
//! breaks in production. Off by default; switched on through the admin API
//! (`POST /_retsu/faults`, see `admin/faults.rs`), server-wide or for one
//! queue.
//!
//! Reproducible: every scope (the server, or one queue) draws its decisions
//! from its own seeded RNG, in a fixed order per request, so the same seed
//! and the same sequence of requests give the same outcomes run to run (on
//! the same build: the generator is rand's `StdRng`).
//!
//! Where: everything is decided around the engine call in the HTTP handler
//! ([`run`]) — latency, throttling and 500s before the engine runs (so a
//! refused request changed nothing), short receives by lowering
//! `MaxNumberOfMessages` (or answering an empty short poll without
//! touching the queue), reordering by shuffling the answer — except
//! duplicates, which must be real stored copies and so go through the
//! engine (`engine/faults.rs`). FIFO queues keep their ordering and
//! exactly-once delivery: on them only short receives, latency, throttling
//! and 500s apply.
//!
//! SNS's deliveries draw from the same scopes ([`SnsDeliveries`]): a
//! delivery into a standard queue (or to an HTTP endpoint, under the
//! server's scope) is made twice at the `duplicate` rate and arrives
//! `latency_ms` late, as real SNS's at-least-once, asynchronous delivery
//! does now and then.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use crate::api::{Request, Response};
use crate::engine::{Engine, QueueKey};
use crate::error::{ErrorCode, SqsError};
use crate::protocol::Call;

/// The longest added latency accepted (ms): more would trip SDK timeouts.
pub const MAX_LATENCY_MS: u64 = 30_000;

/// What one scope injects. Rates are probabilities per request (throttle,
/// internal_error, short_receive), per receive answer (reorder) or per
/// received message (duplicate).
#[derive(Debug, Clone, PartialEq)]
pub struct FaultSettings {
    pub seed: u64,
    /// The named profile the rates started from, if any.
    pub profile: Option<String>,
    /// `None`: every request; else requests naming this queue.
    pub queue: Option<QueueKey>,
    pub duplicate: f64,
    pub reorder: f64,
    pub short_receive: f64,
    pub throttle: f64,
    pub internal_error: f64,
    /// Added latency, uniform in `[min, max]` ms of real time.
    pub latency_ms: (u64, u64),
}

impl FaultSettings {
    /// Every fault off.
    pub fn none(seed: u64) -> FaultSettings {
        FaultSettings {
            seed,
            profile: None,
            queue: None,
            duplicate: 0.0,
            reorder: 0.0,
            short_receive: 0.0,
            throttle: 0.0,
            internal_error: 0.0,
            latency_ms: (0, 0),
        }
    }

    /// A named profile: `aws-like` (what SQS does in normal operation) or
    /// `none`.
    pub fn profile(name: &str, seed: u64) -> Option<FaultSettings> {
        let mut s = FaultSettings::none(seed);
        match name {
            "none" => {}
            // Standard queues deliver at least once (a duplicate now and
            // then), in no promised order, and a short poll samples a
            // subset of servers, so it often returns fewer messages than
            // are available, sometimes none; errors are rare; an in-region
            // call takes some milliseconds.
            "aws-like" => {
                s.duplicate = 0.01;
                s.reorder = 0.5;
                s.short_receive = 0.5;
                s.throttle = 0.001;
                s.internal_error = 0.001;
                s.latency_ms = (5, 30);
            }
            _ => return None,
        }
        s.profile = Some(name.to_string());
        Some(s)
    }

    /// Checks the rates and the latency range; the message says what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        for (name, rate) in [
            ("duplicate", self.duplicate),
            ("reorder", self.reorder),
            ("short_receive", self.short_receive),
            ("throttle", self.throttle),
            ("internal_error", self.internal_error),
        ] {
            if !(0.0..=1.0).contains(&rate) {
                return Err(format!("{name} must be a rate between 0 and 1, not {rate}"));
            }
        }
        let (min, max) = self.latency_ms;
        if min > max || max > MAX_LATENCY_MS {
            return Err(format!(
                "latency_ms must be [min, max] with min <= max <= {MAX_LATENCY_MS}"
            ));
        }
        Ok(())
    }
}

/// The kinds of fault, as counted and named in the admin API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Duplicate,
    Reorder,
    ShortReceive,
    EmptyReceive,
    Throttle,
    InternalError,
    Latency,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Duplicate,
        Kind::Reorder,
        Kind::ShortReceive,
        Kind::EmptyReceive,
        Kind::Throttle,
        Kind::InternalError,
        Kind::Latency,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Duplicate => "duplicate",
            Kind::Reorder => "reorder",
            Kind::ShortReceive => "short_receive",
            Kind::EmptyReceive => "empty_receive",
            Kind::Throttle => "throttle",
            Kind::InternalError => "internal_error",
            Kind::Latency => "latency",
        }
    }
}

/// One active scope: its settings, its own RNG stream, and how many faults
/// of each kind it injected.
pub struct Scope {
    pub settings: FaultSettings,
    rng: Mutex<StdRng>,
    injected: [AtomicU64; 7],
}

impl Scope {
    fn new(settings: FaultSettings) -> Scope {
        Scope {
            rng: Mutex::new(StdRng::seed_from_u64(settings.seed)),
            settings,
            injected: Default::default(),
        }
    }

    fn rng(&self) -> std::sync::MutexGuard<'_, StdRng> {
        self.rng.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn count(&self, kind: Kind) {
        self.injected[kind as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// How many faults of each kind this scope injected.
    pub fn injected(&self) -> Vec<(Kind, u64)> {
        Kind::ALL
            .iter()
            .map(|k| (*k, self.injected[*k as usize].load(Ordering::Relaxed)))
            .collect()
    }
}

#[derive(Default)]
struct Scopes {
    server: Option<Arc<Scope>>,
    queues: BTreeMap<QueueKey, Arc<Scope>>,
}

/// The server's fault settings. With none active a request pays one
/// atomic load.
#[derive(Default)]
pub struct Faults {
    active: AtomicBool,
    scopes: RwLock<Scopes>,
}

impl Faults {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Scopes> {
        self.scopes.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Scopes> {
        self.scopes.write().unwrap_or_else(|p| p.into_inner())
    }

    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Sets (replaces) the scope `settings.queue` names; its RNG starts
    /// afresh from the seed.
    pub fn set(&self, settings: FaultSettings) {
        let mut scopes = self.write();
        let scope = Arc::new(Scope::new(settings));
        match scope.settings.queue.clone() {
            Some(key) => {
                scopes.queues.insert(key, scope);
            }
            None => scopes.server = Some(scope),
        }
        self.active.store(true, Ordering::Release);
    }

    /// Clears one queue's scope (`Some`) or every scope (`None`).
    pub fn clear(&self, queue: Option<&QueueKey>) {
        let mut scopes = self.write();
        match queue {
            Some(key) => {
                scopes.queues.remove(key);
            }
            None => *scopes = Scopes::default(),
        }
        let active = scopes.server.is_some() || !scopes.queues.is_empty();
        self.active.store(active, Ordering::Release);
    }

    /// The server-wide scope and the per-queue ones, sorted by queue.
    pub fn scopes(&self) -> (Option<Arc<Scope>>, Vec<Arc<Scope>>) {
        let scopes = self.read();
        (
            scopes.server.clone(),
            scopes.queues.values().cloned().collect(),
        )
    }

    /// The scope that governs a request naming `queue`: the queue's own,
    /// else the server-wide one.
    fn scope_for(&self, queue: Option<&QueueKey>) -> Option<Arc<Scope>> {
        let scopes = self.read();
        queue
            .and_then(|k| scopes.queues.get(k).cloned())
            .or_else(|| scopes.server.clone())
    }
}

/// SNS's deliveries under the faults: each delivery into a standard queue
/// draws from the queue's scope (else the server's) whether it is made
/// twice (the `duplicate` rate) and how late it arrives (the `latency_ms`
/// range, on the engine's clock, as a delay before it is receivable).
pub struct SnsDeliveries(pub Arc<Faults>);

impl retsu_core::sns::DeliveryShaper for SnsDeliveries {
    fn shape(&self, queue_arn: &str) -> retsu_core::sns::DeliveryShape {
        if !self.0.is_active() {
            // Every publish asks: without faults, one atomic load.
            return Default::default();
        }
        self.0.delivery(QueueKey::from_arn(queue_arn).as_ref())
    }
}

impl Faults {
    /// How one SNS delivery is made under the scope governing `queue`
    /// (`None`: an HTTP endpoint, the server's scope). Both decisions are
    /// drawn every time, in this order, so the stream stays in step.
    pub fn delivery(&self, queue: Option<&QueueKey>) -> retsu_core::sns::DeliveryShape {
        let mut shape = retsu_core::sns::DeliveryShape::default();
        if !self.is_active() {
            return shape;
        }
        let Some(scope) = self.scope_for(queue) else {
            return shape;
        };
        let s = &scope.settings;
        let mut rng = scope.rng();
        shape.delay_ms = match s.latency_ms {
            (_, 0) => 0,
            (min, max) => rng.gen_range(min..=max),
        };
        let duplicate = rng.gen_bool(s.duplicate);
        drop(rng);
        if shape.delay_ms > 0 {
            scope.count(Kind::Latency);
        }
        if duplicate {
            shape.duplicates = 1;
            scope.count(Kind::Duplicate);
        }
        shape
    }
}

/// What was decided for one request before the engine runs.
struct Plan {
    scope: Arc<Scope>,
    queue: Option<QueueKey>,
    fifo: bool,
    latency_ms: u64,
    /// Answer this instead of running the engine.
    answer: Option<Result<Response, SqsError>>,
}

/// Whether a receive is a short poll: its own `WaitTimeSeconds`, else the
/// queue's `ReceiveMessageWaitTimeSeconds`.
fn short_poll(engine: &Engine, queue: &QueueKey, wait: Option<i64>) -> bool {
    match wait {
        Some(w) => w == 0,
        None => engine
            .queue_facts(queue)
            .is_some_and(|q| q.receive_wait_seconds == 0),
    }
}

fn plan(engine: &Engine, faults: &Faults, call: &mut Call) -> Option<Plan> {
    let queue = call.request.fault_queue(&call.context);
    let scope = faults.scope_for(queue.as_ref())?;
    let s = &scope.settings;
    let exists = queue.as_ref().and_then(|k| engine.queue_facts(k));
    let fifo = exists.as_ref().is_some_and(|q| q.fifo);
    // Draw every decision of the request in one fixed order, whatever the
    // outcome, so the stream stays in step run to run.
    let mut rng = scope.rng();
    let latency_ms = match s.latency_ms {
        (_, 0) => 0,
        (min, max) => rng.gen_range(min..=max),
    };
    let throttled = rng.gen_bool(s.throttle);
    let failed = rng.gen_bool(s.internal_error);
    let short = rng.gen_bool(s.short_receive);
    let empty = rng.gen_bool(0.5);
    let keep: u64 = rng.gen();
    drop(rng);

    let mut plan = Plan {
        scope: scope.clone(),
        queue,
        fifo,
        latency_ms,
        answer: None,
    };
    if latency_ms > 0 {
        scope.count(Kind::Latency);
    }
    if throttled {
        scope.count(Kind::Throttle);
        plan.answer = Some(Err(SqsError::new(
            ErrorCode::RequestThrottled,
            "Rate exceeded (a Retsu seeded fault).",
        )));
    } else if failed {
        scope.count(Kind::InternalError);
        plan.answer = Some(Err(SqsError::internal(
            "We encountered an internal error. Please try again. (a Retsu seeded fault)",
        )));
    } else if let (Request::ReceiveMessage(r), true, Some(key)) =
        (&mut call.request, short, &plan.queue)
    {
        let max = r.max_number_of_messages.unwrap_or(1);
        if exists.is_some() && empty && short_poll(engine, key, r.wait_time_seconds) {
            // The sampled servers held nothing: an empty short poll that
            // leaves the queue untouched.
            scope.count(Kind::EmptyReceive);
            plan.answer = Some(Ok(Response::ReceiveMessage(Default::default())));
        } else if (2..=10).contains(&max) {
            // Fewer than asked for (and than may be available).
            r.max_number_of_messages = Some(1 + (keep % (max as u64 - 1)) as i64);
            scope.count(Kind::ShortReceive);
        }
    }
    Some(plan)
}

/// Runs one request through the engine (`engine_call`) with the faults that apply
/// to it. Without active faults this is `engine_call(call)` after one
/// atomic load.
pub async fn run<F, Fut>(
    engine: &Engine,
    faults: &Faults,
    mut call: Call,
    engine_call: F,
) -> Result<Response, SqsError>
where
    F: FnOnce(Call) -> Fut,
    Fut: Future<Output = Result<Response, SqsError>>,
{
    if !faults.is_active() {
        return engine_call(call).await;
    }
    let Some(mut plan) = plan(engine, faults, &mut call) else {
        return engine_call(call).await;
    };
    if plan.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(plan.latency_ms)).await;
    }
    let mut result = match plan.answer.take() {
        Some(answer) => answer,
        None => engine_call(call).await,
    };
    if let (Ok(Response::ReceiveMessage(r)), false, Some(key)) =
        (&mut result, plan.fifo, &plan.queue)
    {
        let scope = &plan.scope;
        let mut rng = scope.rng();
        let reorder = rng.gen_bool(scope.settings.reorder);
        if reorder && r.messages.len() > 1 {
            r.messages.shuffle(&mut *rng);
            scope.count(Kind::Reorder);
        }
        let duplicated: Vec<bool> = r
            .messages
            .iter()
            .map(|_| rng.gen_bool(scope.settings.duplicate))
            .collect();
        drop(rng);
        for (m, dup) in r.messages.iter().zip(duplicated) {
            if dup && engine.duplicate_delivery(key, &m.receipt_handle) {
                scope.count(Kind::Duplicate);
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_and_validation() {
        let aws = FaultSettings::profile("aws-like", 7).unwrap();
        assert_eq!(aws.seed, 7);
        assert!(aws.validate().is_ok());
        assert!(aws.duplicate > 0.0 && aws.short_receive > 0.0);
        assert!(FaultSettings::profile("chaos", 1).is_none());
        let mut bad = FaultSettings::none(1);
        bad.throttle = 1.5;
        assert!(bad.validate().unwrap_err().contains("throttle"));
        let mut bad = FaultSettings::none(1);
        bad.latency_ms = (10, 5);
        assert!(bad.validate().is_err());
    }

    #[test]
    fn set_and_clear_scopes() {
        let faults = Faults::default();
        assert!(!faults.is_active());
        let key = QueueKey {
            region: "us-east-1".into(),
            account: "000000000000".into(),
            name: "q".into(),
        };
        let mut s = FaultSettings::none(1);
        s.queue = Some(key.clone());
        faults.set(s);
        assert!(faults.is_active());
        assert!(faults.scope_for(Some(&key)).is_some());
        assert!(faults.scope_for(None).is_none());
        faults.set(FaultSettings::none(2));
        assert_eq!(faults.scope_for(None).unwrap().settings.seed, 2);
        faults.clear(Some(&key));
        assert_eq!(faults.scope_for(Some(&key)).unwrap().settings.seed, 2);
        faults.clear(None);
        assert!(!faults.is_active());
    }
}
