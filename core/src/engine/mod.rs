//! The queue engine: queues, messages and their state machine.
//!
//! Pure Rust: no HTTP, XML or JSON here. Requests arrive as the typed
//! values of [`crate::api`], time comes from the injected [`Clock`].
//!
//! Layout:
//! - `actions/`: one unit per action or tight family, each its behaviour
//!   and the facts the server asks of it (see `actions/mod.rs`); what the
//!   units share stays here: `messages.rs` (receipt handles, batch error
//!   entries), `queues.rs` (the name index, paging, a queue's deletion),
//!   `redrive.rs` (dead-lettering on receive, and the move tasks' running);
//! - the state: `queue.rs` (one queue: its settings and its store behind
//!   one lock, and its wake-ups), `store.rs` (the message state machine of
//!   one queue: the one place a message changes state), `message.rs` (a
//!   stored message, its states and transitions, as plain data),
//!   `dedup.rs` (a FIFO queue's five-minute deduplication window);
//! - the event bus: `events.rs` (every transition emitted once, in order,
//!   to subscribers outside the engine; wake-ups of waiting long polls);
//! - for the layers around: `inspect.rs` (typed views and by-id operations
//!   for the admin API), `access.rs` (the facts authorization decides on),
//!   `faults.rs` (a seeded duplicate delivery, as the fault layer asks),
//!   `persist.rs` and `queue_level.rs` (what the journal needs, and the
//!   way back in at start);
//! - other engines of the same store: `elsewhere.rs` (queues held
//!   elsewhere, and messages handed to them as outbound records),
//!   `inbound.rs` (taking such a record in, once);
//! - rules: `attributes.rs`, `validate.rs`, `checksum.rs`, `receipt.rs`.
//!
//! Concurrency: queues live in a sharded map; each queue owns its state
//! behind one mutex, never held across an await, and long polls wait on
//! its notifications, never on a timer loop.

mod access;
mod actions;
mod attributes;
mod checksum;
mod dedup;
mod elsewhere;
pub mod events;
mod faults;
mod inbound;
mod inspect;
mod message;
mod messages;
pub mod persist;
mod queue;
mod queue_level;
mod queues;
mod receipt;
mod redrive;
mod store;
mod validate;

#[cfg(test)]
mod elsewhere_tests;
#[cfg(test)]
mod scenarios;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use dashmap::DashMap;

use crate::api::{Request, RequestContext, Response};
use crate::clock::Clock;
use crate::error::SqsError;

pub use actions::{task_handle_parts, valid_queue_name, Grant, NamedQueue, TopicDelivery, Unit};
pub use checksum::{md5_of_attribute_map, md5_of_body};
pub use elsewhere::{Arrival, Elsewhere, Outbound, OutboundItem, OutboundMessage, RemoteQueue};
pub use inbound::Accepted;
pub use inspect::{
    AdminError, DeadLetterTarget, Peek, PeekedMessage, PeekedState, QueueSummary, Restored,
};
pub use message::{OptionalFields, SenderId, State, StoredMessage, Transition};
pub(crate) use queue::let_woken_polls_run_first;
pub use queue::Queue;
pub use queues::page_token as list_page_token;
pub use store::PeekStates;

/// A queue's facts for the layers around the engine ([`Engine::queue_facts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueFacts {
    pub fifo: bool,
    /// ReceiveMessageWaitTimeSeconds: 0 makes a receive without its own
    /// WaitTimeSeconds a short poll.
    pub receive_wait_seconds: u32,
}

/// Engine settings that change behaviour.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Enforce AWS's 60-second rules (PurgeQueueInProgress,
    /// QueueDeletedRecently). Off by default so test suites that purge
    /// in every set-up keep working.
    pub strict_timing: bool,
    /// The server's default region: its queues keep the plain URL form
    /// `<base>/<account>/<name>`; queues of other regions get URLs that
    /// name their region, so same-named queues never share a URL.
    pub default_region: String,
    /// Name another region in the host (`sqs.<region>.<host>`, AWS's
    /// shape) rather than the path (`/queue/<region>/…`, which needs no
    /// DNS and so works inside docker-compose).
    pub host_style_urls: bool,
    /// Name the region in the default region's queue URLs too, as
    /// LocalStack's `standard` (host) and `path` endpoint strategies do.
    pub region_in_every_url: bool,
}

impl Default for EngineConfig {
    fn default() -> EngineConfig {
        EngineConfig {
            strict_timing: false,
            default_region: "us-east-1".into(),
            host_style_urls: false,
            region_in_every_url: false,
        }
    }
}

/// A message or request id as text, in one exact allocation (`to_string`
/// grows a string through the formatter).
pub fn id_text(id: &uuid::Uuid) -> String {
    crate::api::IdText(*id).text(&mut [0; 36]).to_owned()
}

/// Identifies a queue: SQS queue names are unique per region and account.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QueueKey {
    pub region: String,
    pub account: String,
    pub name: String,
}

/// Where something that sends to the same queue again and again (an SNS
/// subscription) keeps it, so each send skips the ARN parse and the map
/// lookup. Weak, so a deleted queue's memory is not held by a subscriber;
/// a copy starts empty and resolves on its first use.
#[derive(Default)]
pub struct QueueSlot(parking_lot::Mutex<std::sync::Weak<Queue>>);

impl Clone for QueueSlot {
    fn clone(&self) -> Self {
        QueueSlot::default()
    }
}

impl std::fmt::Debug for QueueSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QueueSlot")
    }
}

impl QueueKey {
    pub fn arn(&self) -> String {
        format!("arn:aws:sqs:{}:{}:{}", self.region, self.account, self.name)
    }

    /// Parses `arn:<partition>:sqs:<region>:<account>:<name>`.
    pub fn from_arn(arn: &str) -> Option<QueueKey> {
        // Exactly six parts; no Vec, as every SNS delivery resolves one.
        let mut parts = crate::arn::fields(arn);
        let mut next = || parts.next();
        let six = [next()?, next()?, next()?, next()?, next()?, next()?];
        if parts.next().is_some() {
            return None;
        }
        match six {
            ["arn", partition, "sqs", region, account, name]
                if !partition.is_empty()
                    && !region.is_empty()
                    && !account.is_empty()
                    && !name.is_empty() =>
            {
                Some(QueueKey {
                    region: region.to_string(),
                    account: account.to_string(),
                    name: name.to_string(),
                })
            }
            _ => None,
        }
    }

    /// Resolves the queue a request names: any URL form real clients send
    /// (`https://sqs.<region>.amazonaws.com/<account>/<name>`, the legacy
    /// `<region>.queue.amazonaws.com`, our own `http://host:port/<account>/<name>`,
    /// `/queue/<region>/<account>/<name>`), or a bare queue name.
    pub fn from_url(url: &str, ctx: &RequestContext) -> Option<QueueKey> {
        let (region, account, name) = QueueKey::url_parts(url, ctx)?;
        Some(QueueKey {
            region: region.to_string(),
            account: account.to_string(),
            name: name.to_string(),
        })
    }

    /// [`QueueKey::from_url`]'s region, account and name, borrowed from the
    /// URL or the context: an SQS request's queue is looked up without
    /// allocating (see [`KeyParts`]).
    fn url_parts<'a>(url: &'a str, ctx: &'a RequestContext) -> Option<(&'a str, &'a str, &'a str)> {
        // A plain scan: `split_once("://")` set up a substring searcher
        // for every request, for a URL of a few dozen bytes.
        let scheme_end = url.as_bytes().windows(3).position(|w| w == b"://");
        let (host, path) = match scheme_end.map(|i| &url[i + 3..]) {
            Some(rest) => match rest.find('/') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest, ""),
            },
            None if url.starts_with('/') => ("", url),
            None => ("", ""),
        };
        // At most five segments matter: a fifth means no form matches.
        let mut segments = path.split('/').filter(|s| !s.is_empty());
        let segments: [Option<&str>; 5] = std::array::from_fn(|_| segments.next());
        Some(match segments {
            [None, ..] if !url.contains('/') && !url.is_empty() => {
                (ctx.region.as_str(), ctx.account_id.as_str(), url)
            }
            [Some("queue"), Some(region), Some(account), Some(name), None] => {
                (region, account, name)
            }
            [Some(account), Some(name), None, ..] => {
                (host_region(host).unwrap_or(&ctx.region), account, name)
            }
            _ => return None,
        })
    }
}

/// A queue key's parts, owned ([`QueueKey`]) or borrowed (a tuple): the
/// queue map is keyed by `QueueKey` and can be probed with borrowed parts,
/// because both hash and compare as the same three strings in order.
trait KeyParts {
    fn parts(&self) -> (&str, &str, &str);
}

impl KeyParts for QueueKey {
    fn parts(&self) -> (&str, &str, &str) {
        (&self.region, &self.account, &self.name)
    }
}

impl KeyParts for (&str, &str, &str) {
    fn parts(&self) -> (&str, &str, &str) {
        *self
    }
}

impl<'a> std::borrow::Borrow<dyn KeyParts + 'a> for QueueKey {
    fn borrow(&self) -> &(dyn KeyParts + 'a) {
        self
    }
}

/// As `QueueKey`'s derived `Hash`: its fields in order, each as a `str`.
impl std::hash::Hash for dyn KeyParts + '_ {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let (region, account, name) = self.parts();
        region.hash(state);
        account.hash(state);
        name.hash(state);
    }
}

impl PartialEq for dyn KeyParts + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for dyn KeyParts + '_ {}

/// Fuzzing hook (`fuzz/`): parses a receipt handle under a key made from
/// `secret`, as the engine does for every delete and visibility change.
/// Returns (queue uid, slot, nonce).
#[doc(hidden)]
pub fn parse_receipt_handle(handle: &str, secret: &[u8]) -> Option<(u64, u64, u64)> {
    let key = receipt::ReceiptKey::from_secret(secret);
    receipt::Receipt::decode(handle, &key).map(|r| (r.queue_uid, r.slot, r.nonce))
}

/// Fuzzing hook: the handle the engine would give (queue uid, slot, nonce).
#[doc(hidden)]
pub fn make_receipt_handle(receipt: (u64, u64, u64), secret: &[u8]) -> String {
    let key = receipt::ReceiptKey::from_secret(secret);
    let (queue_uid, slot, nonce) = receipt;
    receipt::Receipt {
        queue_uid,
        slot,
        nonce,
    }
    .encode(&key)
}

/// The region named by an AWS-style host (`sqs.<r>.amazonaws.com`,
/// `<r>.queue.amazonaws.com`), if any.
fn host_region(host: &str) -> Option<&str> {
    let host = host.split(':').next().unwrap_or(host);
    if let Some(rest) = host
        .strip_prefix("sqs.")
        .or_else(|| host.strip_prefix("sqs-fips."))
    {
        let region = rest.split('.').next()?;
        // `sqs.localhost...` style hosts name no region.
        return region.contains('-').then_some(region);
    }
    if let Some((region, _)) = host.split_once(".queue.") {
        return region.contains('-').then_some(region);
    }
    None
}

/// The engine shared by every connection.
pub struct Engine {
    clock: Arc<dyn Clock>,
    config: EngineConfig,
    queues: DashMap<QueueKey, Arc<Queue>>,
    /// Every queue's key in ListQueues order (region, account, name), so a
    /// page is a range read, not a sort of every queue. A key is added after
    /// its queue and removed with it under this lock (see `queues.rs`); a
    /// reader checks each key against `queues`.
    names: std::sync::RwLock<std::collections::BTreeSet<QueueKey>>,
    /// When each queue name was last deleted (strict timing).
    deleted_at: DashMap<QueueKey, u64>,
    next_queue_uid: AtomicU64,
    shutting_down: AtomicBool,
    shutdown: tokio::sync::Notify,
    tasks: redrive::MoveTasks,
    /// The receipt-handle key, the event bus and the clock, shared with
    /// every queue.
    shared: Arc<queue::Shared>,
    /// The persistence journal's "durable yet?", awaited before answering.
    durability: std::sync::OnceLock<Arc<dyn persist::Durability>>,
    /// Orders queue-level reports to the journal (`persist.rs`).
    persist_order: std::sync::Mutex<()>,
    /// Services beside SQS whose state rides in the queue-level state.
    services: persist::Services,
    /// Queues held by other engines of the same store (`elsewhere.rs`).
    elsewhere: std::sync::OnceLock<Arc<dyn Elsewhere>>,
    /// Hand-overs from other engines taken in lately (`inbound.rs`).
    inbound: parking_lot::Mutex<inbound::AcceptedIds>,
}

impl Engine {
    pub fn new(clock: Arc<dyn Clock>, config: EngineConfig) -> Arc<Engine> {
        Engine::with_secret(clock, config, None)
    }

    /// An engine whose receipt handles are signed with `secret` (a data
    /// directory's, so handles survive a restart); `None`: a random one.
    pub fn with_secret(
        clock: Arc<dyn Clock>,
        config: EngineConfig,
        secret: Option<&[u8]>,
    ) -> Arc<Engine> {
        Arc::new(Engine {
            clock: clock.clone(),
            config,
            queues: DashMap::new(),
            names: Default::default(),
            deleted_at: DashMap::new(),
            // Random start so handles from an earlier run never match.
            next_queue_uid: AtomicU64::new(rand::random::<u32>() as u64 * 1_000_000),
            shutting_down: AtomicBool::new(false),
            shutdown: tokio::sync::Notify::new(),
            tasks: redrive::MoveTasks::default(),
            shared: Arc::new(queue::Shared {
                // Drawn at random per server: handles of another run never verify.
                receipt_key: secret.map_or_else(
                    receipt::ReceiptKey::random,
                    receipt::ReceiptKey::from_secret,
                ),
                events: events::EventBus::default(),
                clock: clock.clone(),
            }),
            durability: std::sync::OnceLock::new(),
            persist_order: std::sync::Mutex::new(()),
            services: Default::default(),
            elsewhere: std::sync::OnceLock::new(),
            inbound: Default::default(),
        })
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub fn now(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Reports steps of SNS fan-outs on the event bus.
    pub fn topic_events(&self, events: Vec<events::TopicEvent>) {
        self.shared.events.publish_topic_events(events);
    }

    /// Subscribes to every message transition (see [`events`]).
    pub fn subscribe(&self, subscriber: Arc<dyn events::Subscriber>) {
        self.shared.events.subscribe(subscriber);
    }

    /// The receipt handle a `received` event's receipt stands for.
    pub fn receipt_handle(&self, receipt: (u64, u64, u64)) -> String {
        let (queue_uid, slot, nonce) = receipt;
        receipt::Receipt {
            queue_uid,
            slot,
            nonce,
        }
        .encode(&self.shared.receipt_key)
    }

    /// Makes every answer wait until its effects are durable (the
    /// persistence journal; set once, before serving).
    pub fn set_durability(&self, durability: Arc<dyn persist::Durability>) {
        self.shared.events.capture();
        let _ = self.durability.set(durability);
    }

    /// Executes one request. Only ReceiveMessage may wait (long polling).
    /// With persistence, answers only once what it changed is on disk.
    pub async fn handle(
        &self,
        ctx: &RequestContext,
        request: Request,
    ) -> Result<Response, SqsError> {
        let Some(durability) = self.durability.get() else {
            return self.run(ctx, request).await;
        };
        let queue_level = request.changes_queues();
        if request.read_only() {
            if durability.failing() {
                return self.run(ctx, request).await;
            }
        } else if durability.failing() {
            // Memory must not run further ahead of the store.
            return Err(durability.refusal());
        }
        let result = self.run(ctx, request).await;
        if queue_level {
            self.queues_changed();
        }
        // Even a failed action may have changed something (a batch).
        durability.wait().await?;
        result
    }

    /// Runs one request's unit; if it woke a waiting long poll (a send, a
    /// visibility set to 0), lets that poll answer before this request
    /// does (queue.rs, `let_woken_polls_run_first`).
    async fn run(&self, ctx: &RequestContext, request: Request) -> Result<Response, SqsError> {
        let result = request.run(self, ctx).await;
        queue::let_woken_polls_run_first().await;
        result
    }

    /// The queue a request's `QueueUrl` names.
    pub(crate) fn queue(
        &self,
        ctx: &RequestContext,
        url: Option<&str>,
    ) -> Result<Arc<Queue>, SqsError> {
        let url = url.ok_or_else(|| SqsError::missing("QueueUrl"))?;
        let parts = QueueKey::url_parts(url, ctx).ok_or_else(SqsError::queue_does_not_exist)?;
        self.queues
            .get(&parts as &dyn KeyParts)
            .map(|q| q.value().clone())
            .ok_or_else(SqsError::queue_does_not_exist)
    }

    pub(crate) fn queue_by_key(&self, key: &QueueKey) -> Option<Arc<Queue>> {
        self.queues.get(key).map(|q| q.value().clone())
    }

    /// What the layers around the engine may know of a queue without
    /// reaching inside it; `None` when it does not exist.
    pub fn queue_facts(&self, key: &QueueKey) -> Option<QueueFacts> {
        let queue = self.queue_by_key(key)?;
        let wait = queue.lock().settings.receive_message_wait_time_seconds;
        Some(QueueFacts {
            fifo: queue.is_fifo(),
            receive_wait_seconds: wait,
        })
    }

    pub(crate) fn queue_by_arn(&self, arn: &str) -> Option<Arc<Queue>> {
        self.queue_by_key(&QueueKey::from_arn(arn)?)
    }

    /// The live queue `arn` names, through `slot`: looked up only when the
    /// slot is empty or its queue has been deleted since.
    pub(crate) fn queue_by_arn_cached(&self, arn: &str, slot: &QueueSlot) -> Option<Arc<Queue>> {
        let mut cached = slot.0.lock();
        if let Some(queue) = cached.upgrade().filter(|q| !q.is_deleted()) {
            return Some(queue);
        }
        let queue = self.queue_by_arn(arn).filter(|q| !q.is_deleted())?;
        *cached = Arc::downgrade(&queue);
        Some(queue)
    }

    /// The URL of a queue as this caller reaches us: the plain form for
    /// the default region, else one naming the queue's region (in the
    /// path, or in the host with `host_style_urls`). Either way the
    /// account and name are the last two path segments.
    pub(crate) fn queue_url(&self, ctx: &RequestContext, key: &QueueKey) -> String {
        let base = ctx.base_url.trim_end_matches('/');
        let (scheme, host) = base.split_once("://").unwrap_or(("http", base));
        // A caller that reached us as `sqs.<region>.<host>` gets URLs
        // built on the bare host, so the prefix never names two regions.
        let host = match host.strip_prefix("sqs.").and_then(|r| r.split_once('.')) {
            Some((region, rest)) if region.contains('-') && !rest.is_empty() => rest,
            _ => host,
        };
        let (account, name) = (&key.account, &key.name);
        if key.region == self.config.default_region && !self.config.region_in_every_url {
            format!("{scheme}://{host}/{account}/{name}")
        } else if self.config.host_style_urls {
            format!("{scheme}://sqs.{}.{host}/{account}/{name}", key.region)
        } else {
            format!("{scheme}://{host}/queue/{}/{account}/{name}", key.region)
        }
    }

    /// Whether a message move task out of the queue `source_arn` is still
    /// running (the layer that moves a queue to another engine waits for
    /// it: the task is this engine's, not the queue's).
    pub fn moving_messages_from(&self, source_arn: &str) -> bool {
        self.tasks.active_from(source_arn)
    }

    /// Wakes every waiting long poll so it answers now (used on shutdown).
    pub fn shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
        self.shutdown.notify_waiters();
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::SeqCst)
    }

    /// Resolves once [`Engine::shutdown`] has been called (at once if it
    /// has): what long-lived answers, like the live event stream, end on.
    pub async fn until_shutdown(&self) {
        let notified = self.shutdown.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.is_shutting_down() {
            return;
        }
        notified.await;
    }

    /// Background work that time drives (message move tasks). The server
    /// spawns this once; it returns after [`Engine::shutdown`].
    pub async fn run_background(self: Arc<Self>) {
        loop {
            let shutdown = self.shutdown.notified();
            tokio::pin!(shutdown);
            shutdown.as_mut().enable();
            if self.is_shutting_down() {
                return;
            }
            let next = self.run_move_tasks();
            let wake = self.tasks.changed.notified();
            tokio::pin!(wake);
            wake.as_mut().enable();
            let sleep = async {
                match next {
                    Some(at) => self.clock.sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = &mut shutdown => return,
                _ = &mut wake => {}
                _ = sleep => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> RequestContext {
        RequestContext::new("us-east-1", "000000000000", "http://localhost:9324")
    }

    #[test]
    fn borrowed_key_parts_hash_and_compare_as_the_key() {
        use std::hash::BuildHasher;
        let key = QueueKey {
            region: "r".into(),
            account: "a".into(),
            name: "n".into(),
        };
        let hasher = std::collections::hash_map::RandomState::new();
        let owned: &dyn KeyParts = &key;
        let borrowed: &dyn KeyParts = &("r", "a", "n");
        assert_eq!(hasher.hash_one(&key), hasher.hash_one(borrowed));
        assert_eq!(hasher.hash_one(owned), hasher.hash_one(borrowed));
        assert!(owned == borrowed);
        assert!(owned != &("r", "an", "") as &dyn KeyParts);
        let map = DashMap::new();
        map.insert(key.clone(), 7);
        assert_eq!(map.get(borrowed).map(|v| *v), Some(7));
        assert!(map.get(&("r", "a", "m") as &dyn KeyParts).is_none());
    }

    #[test]
    fn url_forms() {
        let c = ctx();
        let k = |u: &str| QueueKey::from_url(u, &c).map(|k| (k.region, k.account, k.name));
        let own = Some((
            "us-east-1".to_string(),
            "000000000000".to_string(),
            "q".to_string(),
        ));
        assert_eq!(k("http://localhost:9324/000000000000/q"), own);
        assert_eq!(k("q"), own);
        assert_eq!(k("/000000000000/q"), own);
        assert_eq!(
            k("https://sqs.eu-west-1.amazonaws.com/123456789012/jobs"),
            Some(("eu-west-1".into(), "123456789012".into(), "jobs".into()))
        );
        assert_eq!(
            k("https://eu-west-1.queue.amazonaws.com/123456789012/jobs")
                .unwrap()
                .0,
            "eu-west-1"
        );
        assert_eq!(
            k("http://localhost:4566/queue/ap-south-1/000000000000/q")
                .unwrap()
                .0,
            "ap-south-1"
        );
        assert_eq!(k("http://localhost:9324/"), None);
        assert_eq!(k("http://localhost:9324/a/b/c"), None);
        assert_eq!(k("http://localhost:9324/queue/r-1/000000000000/q/x"), None);
        assert_eq!(k("http://localhost:9324/other/r-1/000000000000/q"), None);
        assert_eq!(
            QueueKey::from_arn("arn:aws:sqs:us-east-1:000000000000:dlq")
                .unwrap()
                .name,
            "dlq"
        );
        assert_eq!(QueueKey::from_arn("arn:aws:sns:us-east-1:0:x"), None);
    }
}
