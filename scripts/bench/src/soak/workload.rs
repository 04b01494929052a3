//! The soak: a mixed workload for a bounded time, then a full accounting.
//!
//! Three queues: `soak-std` (standard, dead-letter queue `soak-dlq` after 3
//! receives), `soak-dlq`, and `soak.fifo` (FIFO, groups). 64 clients by
//! default, each with its own kept-alive connection and one role:
//! - std producers: SendMessage and SendMessageBatch of 10;
//! - FIFO producers: each owns 4 groups and sends to them in order;
//! - std consumers: 1-second long polls of up to 10, then per message
//!   delete (single or batch), extend the visibility then delete, or release
//!   it (visibility 0) so that it comes back and, after 3 receives, moves to
//!   the dead-letter queue;
//! - FIFO consumers: long polls, then delete the batch or release it;
//! - dead-letter drainers: long polls on `soak-dlq`, then delete.
//!
//! Producers pause while a queue family holds more than `--backlog`
//! undeleted messages, so the stored set stays bounded: memory must stop
//! growing once the run is steady, and the final peek sees every message.
//!
//! Every message body names its family and index in a table kept here
//! (a few bytes per message). At the end the stored messages are peeked and
//! each acknowledged send must be deleted exactly once and gone, or stored
//! exactly once (source queue or dead-letter queue); anything else is lost
//! or duplicated. On FIFO, a message received while another consumer still
//! holds it (not released, not deleted, visibility not expired) is an
//! unexpected duplicate, and one received before its predecessor in the
//! group was deleted is out of order.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::admin::{peek_all, PEEK_LIMIT};
use crate::client::RawConn;
use crate::proc::{status_kib, Launcher, ServerKind};
use crate::{BoxResult, Rng};

const STD: &str = "soak-std";
const DLQ: &str = "soak-dlq";
const FIFO: &str = "soak.fifo";
/// Visibility timeout of both source queues: far longer than a consumer
/// holds a message, so expiry redeliveries should not happen at all.
const VISIBILITY_S: u64 = 60;
const MAX_RECEIVE_COUNT: u32 = 3;
/// Message bodies are padded to this many bytes.
const BODY_BYTES: usize = 256;
const NO_PREV: u32 = u32::MAX;

#[derive(Debug, Clone, clap::Args)]
pub struct Opts {
    /// How long the workload runs.
    #[arg(long, default_value_t = 30)]
    seconds: u64,

    /// Concurrent clients (each its own connection).
    #[arg(long, default_value_t = 64)]
    clients: usize,

    /// Producers pause while a queue family holds more undeleted messages.
    #[arg(long, default_value_t = 2_000)]
    backlog: i64,

    /// Memory bound: the last third's peak RSS may be at most this times
    /// the middle third's.
    #[arg(long, default_value_t = 1.2)]
    growth: f64,

    /// Seconds before memory can be steady: FIFO deduplication ids are
    /// kept 5 minutes (AWS's window), so the stored state grows until then.
    #[arg(long, default_value_t = 330)]
    steady_after: u64,

    /// Seed of the clients' choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,

    /// Where to write the JSON report [default: target/soak/soak.json].
    #[arg(long)]
    out: Option<PathBuf>,
}

/// What the workload knows about one message it sent.
#[derive(Debug, Clone, Copy)]
struct Rec {
    acked: bool,
    /// The send failed: the message may or may not be stored.
    failed: bool,
    /// A delete of it was sent (set before the call).
    deleting: bool,
    deletes: u8,
    receives: u16,
    /// When a consumer received it (ms since start + 1), 0 when nobody
    /// holds it (never received, released or deleted).
    held_ms: u32,
    /// The message sent before it in its FIFO group.
    prev: u32,
}

impl Rec {
    const NEW: Rec = Rec {
        acked: false,
        failed: false,
        deleting: false,
        deletes: 0,
        receives: 0,
        held_ms: 0,
        prev: NO_PREV,
    };
}

/// The messages of one queue family (std with its DLQ, or FIFO).
struct Family {
    tag: char,
    fifo: bool,
    recs: Mutex<Vec<Rec>>,
    /// Acknowledged sends not yet deleted.
    outstanding: AtomicI64,
}

#[derive(Default)]
struct Counters {
    sends: AtomicU64,
    batch_sends: AtomicU64,
    receives: AtomicU64,
    received: AtomicU64,
    deletes: AtomicU64,
    batch_deletes: AtomicU64,
    extends: AtomicU64,
    releases: AtomicU64,
    dlq_deleted: AtomicU64,
    errors: AtomicU64,
    fifo_duplicates: AtomicU64,
    fifo_out_of_order: AtomicU64,
    std_redeliveries: AtomicU64,
}

struct Shared {
    start: Instant,
    stop: AtomicBool,
    std: Family,
    fifo: Family,
    counters: Counters,
    problems: Mutex<Vec<String>>,
}

impl Shared {
    fn ms(&self) -> u32 {
        self.start.elapsed().as_millis() as u32 + 1
    }

    fn problem(&self, what: String) {
        let mut p = self.problems.lock().unwrap();
        if p.len() < 50 {
            eprintln!("  PROBLEM: {what}");
            p.push(what);
        }
    }

    fn error(&self, what: &str, e: crate::BoxError) {
        self.counters.errors.fetch_add(1, Ordering::Relaxed);
        self.problem(format!("{what}: {e}"));
    }

    fn family(&self, tag: char) -> Option<&Family> {
        match tag {
            's' => Some(&self.std),
            'f' => Some(&self.fifo),
            _ => None,
        }
    }
}

impl Family {
    fn new(tag: char, fifo: bool) -> Family {
        Family {
            tag,
            fifo,
            recs: Mutex::new(Vec::new()),
            outstanding: AtomicI64::new(0),
        }
    }

    /// Reserves `n` records; returns the first index.
    fn reserve(&self, n: usize, prev: u32) -> u32 {
        let mut recs = self.recs.lock().unwrap();
        let first = recs.len() as u32;
        for i in 0..n {
            let mut r = Rec::NEW;
            r.prev = if i == 0 { prev } else { first + i as u32 - 1 };
            recs.push(r);
        }
        first
    }

    fn sent(&self, first: u32, n: usize, ok: bool) {
        let mut recs = self.recs.lock().unwrap();
        for r in &mut recs[first as usize..first as usize + n] {
            if ok {
                r.acked = true;
            } else {
                r.failed = true;
            }
        }
        if ok {
            self.outstanding.fetch_add(n as i64, Ordering::Relaxed);
        }
    }

    fn body(&self, index: u32, rng: &mut Rng) -> String {
        let mut b = format!("{}:{index}:", self.tag);
        let pad = BODY_BYTES - b.len() - rng.below(64) as usize;
        b.extend(std::iter::repeat_n('x', pad));
        b
    }
}

/// The family tag and index a body names.
fn parse_body(body: &str) -> Option<(char, u32)> {
    let mut parts = body.splitn(3, ':');
    let tag = parts.next()?.chars().next()?;
    let index = parts.next()?.parse().ok()?;
    Some((tag, index))
}

#[derive(Clone)]
struct Urls {
    std: String,
    dlq: String,
    fifo: String,
}

pub async fn run(launcher: &Launcher, opts: Opts) -> BoxResult<bool> {
    let server = launcher.start(ServerKind::Retsu)?;
    let addr = server.addr;
    let pid = server.pid();
    eprintln!(
        "soak: {} clients for {} s against retsu (pid {pid}, {addr}), backlog bound {}",
        opts.clients, opts.seconds, opts.backlog
    );
    let urls = create_queues(addr).await?;
    let shared = Arc::new(Shared {
        start: Instant::now(),
        stop: AtomicBool::new(false),
        std: Family::new('s', false),
        fifo: Family::new('f', true),
        counters: Counters::default(),
        problems: Mutex::new(Vec::new()),
    });

    // Resident memory, once a second, for the whole run.
    let samples: Arc<Mutex<Vec<(f64, u64)>>> = Arc::default();
    let sampler = {
        let (samples, shared) = (samples.clone(), shared.clone());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            while !shared.stop.load(Ordering::Relaxed) {
                tick.tick().await;
                if let Ok(kib) = status_kib(pid, "VmRSS") {
                    let t = shared.start.elapsed().as_secs_f64();
                    samples.lock().unwrap().push((t, kib));
                }
            }
        })
    };

    let roles = roles(opts.clients);
    let mut workers = Vec::new();
    for (i, role) in roles.iter().enumerate() {
        let (shared, urls, role) = (shared.clone(), urls.clone(), *role);
        let backlog = opts.backlog;
        let seed = opts.seed.wrapping_mul(1000).wrapping_add(i as u64);
        workers.push(tokio::spawn(async move {
            let mut conn = match RawConn::connect(addr).await {
                Ok(c) => c,
                Err(e) => return shared.error("connect", e),
            };
            let mut w = Worker {
                id: i,
                rng: Rng::new(seed),
                shared: &shared,
                urls: &urls,
                conn: &mut conn,
                backlog,
            };
            w.run(role).await;
        }));
    }

    // Progress every 10 s until the deadline.
    let deadline = shared.start + Duration::from_secs(opts.seconds);
    while Instant::now() < deadline {
        let left = deadline - Instant::now();
        tokio::time::sleep(left.min(Duration::from_secs(10))).await;
        let c = &shared.counters;
        eprintln!(
            "  {:>5.0} s: {} sends, {} receives, {} deletes, {} errors, RSS {} KiB",
            shared.start.elapsed().as_secs_f64(),
            c.sends.load(Ordering::Relaxed) + c.batch_sends.load(Ordering::Relaxed),
            c.receives.load(Ordering::Relaxed),
            c.deletes.load(Ordering::Relaxed) + c.batch_deletes.load(Ordering::Relaxed),
            c.errors.load(Ordering::Relaxed),
            status_kib(pid, "VmRSS").unwrap_or(0),
        );
    }
    shared.stop.store(true, Ordering::Relaxed);
    let elapsed = shared.start.elapsed().as_secs_f64();
    for w in workers {
        // Each finishes its current call (long polls last 1 s).
        if tokio::time::timeout(Duration::from_secs(60), w)
            .await
            .is_err()
        {
            shared.problem("a client did not stop within 60 s".into());
        }
    }
    let _ = sampler.await;

    let accounting = account(addr, &shared).await?;
    let memory = memory_check(&samples.lock().unwrap(), opts.growth, opts.steady_after);
    drop(server);

    let c = &shared.counters;
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let problems = shared.problems.lock().unwrap().clone();
    let passed = problems.is_empty() && accounting.passed() && memory.passed;
    let report = json!({
        "seconds": elapsed,
        "clients": opts.clients,
        "seed": opts.seed,
        "backlog": opts.backlog,
        "operations": {
            "SendMessage": load(&c.sends),
            "SendMessageBatch": load(&c.batch_sends),
            "ReceiveMessage": load(&c.receives),
            "messages received": load(&c.received),
            "DeleteMessage": load(&c.deletes),
            "DeleteMessageBatch": load(&c.batch_deletes),
            "visibility extended": load(&c.extends),
            "visibility released": load(&c.releases),
            "deleted from the DLQ": load(&c.dlq_deleted),
            "standard redeliveries after expiry": load(&c.std_redeliveries),
        },
        "errors": load(&c.errors),
        "fifo_unexpected_duplicates": load(&c.fifo_duplicates),
        "fifo_out_of_order": load(&c.fifo_out_of_order),
        "accounting": accounting.json(),
        "memory": memory.json(),
        "problems": problems,
        "passed": passed,
    });
    let out = opts
        .out
        .unwrap_or_else(|| crate::target_dir().join("soak/soak.json"));
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&out, serde_json::to_vec_pretty(&report)?)?;
    // The samples stay in the file; stdout gets the rest.
    let mut shown = report.clone();
    shown["memory"]["samples_s_kib"] =
        json!(format!("{} samples, in the file", memory.samples.len()));
    println!("{}", serde_json::to_string_pretty(&shown)?);
    println!(
        "soak {}: {elapsed:.0} s, {} messages sent, {} lost, {} duplicated, {} deleted but stored, \
         {} FIFO duplicates, {} FIFO out of order, {} errors; RSS {}",
        if passed { "PASSED" } else { "FAILED" },
        accounting.acked,
        accounting.lost,
        accounting.duplicated,
        accounting.deleted_but_stored,
        load(&c.fifo_duplicates),
        load(&c.fifo_out_of_order),
        load(&c.errors),
        memory.summary,
    );
    eprintln!("report: {}", out.display());
    Ok(passed)
}

async fn create_queues(addr: SocketAddr) -> BoxResult<Urls> {
    let mut c = RawConn::connect(addr).await?;
    let vis = VISIBILITY_S.to_string();
    let url = |v: Value| -> BoxResult<String> {
        Ok(v["QueueUrl"]
            .as_str()
            .ok_or("CreateQueue: no QueueUrl")?
            .to_string())
    };
    let dlq = url(c
        .call("CreateQueue", &json!({ "QueueName": DLQ }), 0)
        .await?)?;
    let attrs: Value = c
        .call(
            "GetQueueAttributes",
            &json!({ "QueueUrl": dlq, "AttributeNames": ["QueueArn"] }),
            0,
        )
        .await?;
    let dlq_arn = attrs["Attributes"]["QueueArn"]
        .as_str()
        .ok_or("no QueueArn")?
        .to_string();
    let redrive =
        json!({ "deadLetterTargetArn": dlq_arn, "maxReceiveCount": MAX_RECEIVE_COUNT }).to_string();
    let std = url(c
        .call(
            "CreateQueue",
            &json!({ "QueueName": STD, "Attributes": {
                "VisibilityTimeout": vis, "RedrivePolicy": redrive } }),
            0,
        )
        .await?)?;
    let fifo = url(c
        .call(
            "CreateQueue",
            &json!({ "QueueName": FIFO, "Attributes": {
                "FifoQueue": "true", "VisibilityTimeout": vis } }),
            0,
        )
        .await?)?;
    Ok(Urls { std, dlq, fifo })
}

#[derive(Debug, Clone, Copy)]
enum Role {
    StdProducer,
    FifoProducer,
    StdConsumer,
    FifoConsumer,
    DlqDrainer,
}

/// 1/4 std producers, 1/8 FIFO producers, 3/8 std consumers, 3/16 FIFO
/// consumers, the rest (at least one) drain the dead-letter queue.
fn roles(clients: usize) -> Vec<Role> {
    let clients = clients.max(5);
    let mut roles = Vec::new();
    let counts = [
        (Role::StdProducer, (clients / 4).max(1)),
        (Role::FifoProducer, (clients / 8).max(1)),
        (Role::StdConsumer, (clients * 3 / 8).max(1)),
        (Role::FifoConsumer, (clients * 3 / 16).max(1)),
    ];
    for (role, n) in counts {
        roles.extend(std::iter::repeat_n(role, n));
    }
    while roles.len() < clients {
        roles.push(Role::DlqDrainer);
    }
    roles.truncate(clients);
    if !roles.iter().any(|r| matches!(r, Role::DlqDrainer)) {
        *roles.last_mut().unwrap() = Role::DlqDrainer;
    }
    roles
}

struct Worker<'a> {
    id: usize,
    rng: Rng,
    shared: &'a Shared,
    urls: &'a Urls,
    conn: &'a mut RawConn,
    backlog: i64,
}

/// A received message: the family record it names, and its handle.
struct Got {
    tag: char,
    index: u32,
    handle: String,
}

impl Worker<'_> {
    async fn run(&mut self, role: Role) {
        // FIFO producers' groups and the last message sent to each.
        let mut groups: Vec<(String, u32)> = (0..4)
            .map(|g| (format!("p{}-g{g}", self.id), NO_PREV))
            .collect();
        while !self.shared.stop.load(Ordering::Relaxed) {
            match role {
                Role::StdProducer => self.produce_std().await,
                Role::FifoProducer => self.produce_fifo(&mut groups).await,
                Role::StdConsumer => self.consume_std().await,
                Role::FifoConsumer => self.consume_fifo().await,
                Role::DlqDrainer => self.drain_dlq().await,
            }
        }
    }

    /// Whether the family is over its backlog bound (and waits a little).
    async fn throttled(&self, family: &Family) -> bool {
        if family.outstanding.load(Ordering::Relaxed) > self.backlog {
            tokio::time::sleep(Duration::from_millis(5)).await;
            return true;
        }
        false
    }

    async fn produce_std(&mut self) {
        let shared = self.shared;
        let family = &shared.std;
        if self.throttled(family).await {
            return;
        }
        let n = if self.rng.below(2) == 0 { 1 } else { 10 };
        let first = family.reserve(n, NO_PREV);
        let bodies: Vec<String> = (0..n as u32)
            .map(|i| family.body(first + i, &mut self.rng))
            .collect();
        let url = self.urls.std.clone();
        let result = self.send(&url, &bodies, None).await;
        let c = &self.shared.counters;
        let counter = if n == 1 { &c.sends } else { &c.batch_sends };
        counter.fetch_add(1, Ordering::Relaxed);
        family.sent(first, n, result.is_ok());
        if let Err(e) = result {
            self.shared.error("send (standard)", e);
        }
    }

    async fn produce_fifo(&mut self, groups: &mut [(String, u32)]) {
        let shared = self.shared;
        let family = &shared.fifo;
        if self.throttled(family).await {
            return;
        }
        let g = self.rng.below(groups.len() as u64) as usize;
        let n = 1 + self.rng.below(10) as usize;
        let first = family.reserve(n, groups[g].1);
        let bodies: Vec<String> = (0..n as u32)
            .map(|i| family.body(first + i, &mut self.rng))
            .collect();
        let url = self.urls.fifo.clone();
        let group = groups[g].0.clone();
        let result = self.send(&url, &bodies, Some(&group)).await;
        let c = &self.shared.counters;
        let counter = if n == 1 { &c.sends } else { &c.batch_sends };
        counter.fetch_add(1, Ordering::Relaxed);
        family.sent(first, n, result.is_ok());
        match result {
            Ok(()) => groups[g].1 = first + n as u32 - 1,
            // The group's order is unknown from here on: start a new one.
            Err(e) => {
                groups[g] = (format!("{}-{first}", groups[g].0), NO_PREV);
                self.shared.error("send (FIFO)", e)
            }
        }
    }

    /// One SendMessage, or a SendMessageBatch for more than one body; the
    /// deduplication id of a FIFO message is its (unique) body's index.
    async fn send(&mut self, url: &str, bodies: &[String], group: Option<&str>) -> BoxResult<()> {
        let entry = |i: usize, body: &String| {
            let mut e = json!({ "MessageBody": body });
            if let Some(g) = group {
                e["MessageGroupId"] = json!(g);
                e["MessageDeduplicationId"] = json!(body.split(':').nth(1).unwrap_or(""));
            }
            if bodies.len() > 1 {
                e["Id"] = json!(i.to_string());
            }
            e
        };
        if bodies.len() == 1 {
            let mut req = entry(0, &bodies[0]);
            req["QueueUrl"] = json!(url);
            let out: Value = self.conn.call("SendMessage", &req, 0).await?;
            if out["MessageId"].as_str().is_none_or(str::is_empty) {
                return Err("SendMessage: no MessageId".into());
            }
            return Ok(());
        }
        let entries: Vec<Value> = bodies
            .iter()
            .enumerate()
            .map(|(i, b)| entry(i, b))
            .collect();
        let out: Value = self
            .conn
            .call(
                "SendMessageBatch",
                &json!({ "QueueUrl": url, "Entries": entries }),
                0,
            )
            .await?;
        batch_ok("SendMessageBatch", &out, bodies.len())
    }

    async fn receive(&mut self, url: &str) -> Vec<Got> {
        let req = json!({ "QueueUrl": url, "MaxNumberOfMessages": 10, "WaitTimeSeconds": 1 });
        self.shared
            .counters
            .receives
            .fetch_add(1, Ordering::Relaxed);
        let out: Value = match self.conn.call("ReceiveMessage", &req, 1).await {
            Ok(v) => v,
            Err(e) => {
                self.shared.error("receive", e);
                return Vec::new();
            }
        };
        let mut got = Vec::new();
        for m in out["Messages"].as_array().into_iter().flatten() {
            let body = m["Body"].as_str().unwrap_or("");
            let handle = m["ReceiptHandle"].as_str().unwrap_or("").to_string();
            match parse_body(body) {
                Some((tag, index)) if self.shared.family(tag).is_some() => {
                    got.push(Got { tag, index, handle })
                }
                _ => self
                    .shared
                    .problem(format!("received a body nobody sent: {body:.40}")),
            }
        }
        self.shared
            .counters
            .received
            .fetch_add(got.len() as u64, Ordering::Relaxed);
        got
    }

    /// Notes the receipt of `got` (one receive's messages, in order) and
    /// checks FIFO's promises: no message held by another consumer comes
    /// back, and none comes before its predecessor in the group was deleted.
    fn on_receive(&self, got: &[Got]) {
        let now = self.shared.ms();
        for (k, g) in got.iter().enumerate() {
            let Some(family) = self.shared.family(g.tag) else {
                continue;
            };
            let mut recs = family.recs.lock().unwrap();
            let Some(rec) = recs.get(g.index as usize).copied() else {
                drop(recs);
                self.shared.problem(format!(
                    "received {}:{} which was never sent",
                    g.tag, g.index
                ));
                continue;
            };
            let expired = rec.held_ms != 0
                && now.saturating_sub(rec.held_ms) as u64 >= VISIBILITY_S * 1000 - 1000;
            if family.fifo {
                if rec.held_ms != 0 && !expired {
                    self.shared
                        .counters
                        .fifo_duplicates
                        .fetch_add(1, Ordering::Relaxed);
                    self.shared.problem(format!(
                        "FIFO message f:{} received while another consumer holds it",
                        g.index
                    ));
                }
                let prev_ok = rec.prev == NO_PREV
                    || recs[rec.prev as usize].deleting
                    || got[..k].iter().any(|o| o.index == rec.prev);
                if !prev_ok {
                    self.shared
                        .counters
                        .fifo_out_of_order
                        .fetch_add(1, Ordering::Relaxed);
                    self.shared.problem(format!(
                        "FIFO message f:{} received before f:{} (its group predecessor) was deleted",
                        g.index, rec.prev
                    ));
                }
            } else if rec.held_ms != 0 {
                self.shared
                    .counters
                    .std_redeliveries
                    .fetch_add(1, Ordering::Relaxed);
            }
            let r = &mut recs[g.index as usize];
            r.receives = r.receives.saturating_add(1);
            r.held_ms = now;
        }
    }

    fn mark(&self, got: &[Got], f: impl Fn(&mut Rec)) {
        for g in got {
            if let Some(family) = self.shared.family(g.tag) {
                if let Some(r) = family.recs.lock().unwrap().get_mut(g.index as usize) {
                    f(r);
                }
            }
        }
    }

    /// Deletes `got`: one DeleteMessage each, or one DeleteMessageBatch.
    async fn delete(&mut self, url: &str, got: &[Got], batch: bool) {
        if got.is_empty() {
            return;
        }
        self.mark(got, |r| r.deleting = true);
        let shared = self.shared;
        let c = &shared.counters;
        let mut done: Vec<&Got> = Vec::new();
        if batch && got.len() > 1 {
            let entries: Vec<Value> = got
                .iter()
                .enumerate()
                .map(|(i, g)| json!({ "Id": i.to_string(), "ReceiptHandle": g.handle }))
                .collect();
            c.batch_deletes.fetch_add(1, Ordering::Relaxed);
            let req = json!({ "QueueUrl": url, "Entries": entries });
            match self.conn.call::<Value>("DeleteMessageBatch", &req, 0).await {
                Ok(out) => match batch_ok("DeleteMessageBatch", &out, got.len()) {
                    Ok(()) => done.extend(got),
                    Err(e) => self.shared.error("delete batch", e),
                },
                Err(e) => self.shared.error("delete batch", e),
            }
        } else {
            for g in got {
                c.deletes.fetch_add(1, Ordering::Relaxed);
                let req = json!({ "QueueUrl": url, "ReceiptHandle": g.handle });
                match self.conn.call::<Value>("DeleteMessage", &req, 0).await {
                    Ok(_) => done.push(g),
                    Err(e) => self.shared.error("delete", e),
                }
            }
        }
        for g in done {
            if let Some(family) = self.shared.family(g.tag) {
                let mut recs = family.recs.lock().unwrap();
                let r = &mut recs[g.index as usize];
                r.deletes = r.deletes.saturating_add(1);
                r.held_ms = 0;
                family.outstanding.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// Sets the visibility of `got` (ChangeMessageVisibility for one,
    /// ChangeMessageVisibilityBatch for more). A release (0) is recorded
    /// before the call: the message may be received again at once.
    async fn set_visibility(&mut self, url: &str, got: &[Got], seconds: u64) -> bool {
        if got.is_empty() {
            return true;
        }
        if seconds == 0 {
            self.mark(got, |r| r.held_ms = 0);
            self.shared
                .counters
                .releases
                .fetch_add(got.len() as u64, Ordering::Relaxed);
        } else {
            self.shared
                .counters
                .extends
                .fetch_add(got.len() as u64, Ordering::Relaxed);
        }
        let result = if got.len() == 1 {
            let req = json!({ "QueueUrl": url, "ReceiptHandle": got[0].handle,
                              "VisibilityTimeout": seconds });
            self.conn
                .call::<Value>("ChangeMessageVisibility", &req, 0)
                .await
                .map(drop)
        } else {
            let entries: Vec<Value> = got
                .iter()
                .enumerate()
                .map(|(i, g)| {
                    json!({ "Id": i.to_string(), "ReceiptHandle": g.handle,
                            "VisibilityTimeout": seconds })
                })
                .collect();
            let req = json!({ "QueueUrl": url, "Entries": entries });
            match self
                .conn
                .call::<Value>("ChangeMessageVisibilityBatch", &req, 0)
                .await
            {
                Ok(out) => batch_ok("ChangeMessageVisibilityBatch", &out, got.len()),
                Err(e) => Err(e),
            }
        };
        match result {
            Ok(()) => true,
            Err(e) => {
                self.shared.error("change visibility", e);
                false
            }
        }
    }

    async fn consume_std(&mut self) {
        let url = self.urls.std.clone();
        let got = self.receive(&url).await;
        self.on_receive(&got);
        let (mut release, mut extend, mut delete) = (Vec::new(), Vec::new(), Vec::new());
        for g in got {
            match self.rng.below(100) {
                0..20 => release.push(g),
                20..30 => extend.push(g),
                _ => delete.push(g),
            }
        }
        self.set_visibility(&url, &release, 0).await;
        if self.set_visibility(&url, &extend, 2 * VISIBILITY_S).await {
            delete.extend(extend);
        }
        let batch = self.rng.below(2) == 0;
        self.delete(&url, &delete, batch).await;
    }

    async fn consume_fifo(&mut self) {
        let url = self.urls.fifo.clone();
        let got = self.receive(&url).await;
        self.on_receive(&got);
        if self.rng.below(10) == 0 {
            // Give the whole receive back: its groups start over from it.
            self.set_visibility(&url, &got, 0).await;
        } else {
            let batch = self.rng.below(4) != 0;
            self.delete(&url, &got, batch).await;
        }
    }

    async fn drain_dlq(&mut self) {
        let url = self.urls.dlq.clone();
        let got = self.receive(&url).await;
        if got.iter().any(|g| g.tag != 's') {
            self.shared
                .problem("the dead-letter queue holds a message not from soak-std".into());
        }
        // Received from the DLQ: a new holder, whatever the source queue saw.
        self.mark(&got, |r| r.held_ms = 0);
        self.on_receive(&got);
        self.shared
            .counters
            .dlq_deleted
            .fetch_add(got.len() as u64, Ordering::Relaxed);
        self.delete(&url, &got, true).await;
    }
}

/// A batch answer must list every entry as successful.
fn batch_ok(action: &str, out: &Value, n: usize) -> BoxResult<()> {
    if let Some(f) = out["Failed"].as_array().and_then(|f| f.first()) {
        return Err(format!("{action} entry failed: {f}").into());
    }
    let ok = out["Successful"].as_array().map_or(0, Vec::len);
    if ok != n {
        return Err(format!("{action}: {ok} of {n} entries successful").into());
    }
    Ok(())
}

#[derive(Debug, Default)]
struct Accounting {
    acked: u64,
    unacked: u64,
    deleted: u64,
    stored_source: u64,
    stored_dlq: u64,
    lost: u64,
    duplicated: u64,
    deleted_twice: u64,
    deleted_but_stored: u64,
    unknown_stored: u64,
    truncated: bool,
    examples: Vec<String>,
}

impl Accounting {
    fn passed(&self) -> bool {
        self.lost == 0
            && self.duplicated == 0
            && self.deleted_twice == 0
            && self.deleted_but_stored == 0
            && self.unknown_stored == 0
            && !self.truncated
    }

    fn json(&self) -> Value {
        json!({
            "acknowledged sends": self.acked,
            "unacknowledged sends": self.unacked,
            "deleted once": self.deleted,
            "stored in the source queues": self.stored_source,
            "stored in the DLQ": self.stored_dlq,
            "lost": self.lost,
            "stored more than once": self.duplicated,
            "deleted more than once": self.deleted_twice,
            "deleted but still stored": self.deleted_but_stored,
            "stored but never sent": self.unknown_stored,
            "peek truncated": self.truncated,
            "examples": self.examples,
        })
    }
}

/// Every acknowledged send is deleted exactly once and gone, or stored
/// exactly once (in its queue or the DLQ).
async fn account(addr: SocketAddr, shared: &Shared) -> BoxResult<Accounting> {
    let mut a = Accounting::default();
    let std_len = shared.std.recs.lock().unwrap().len();
    let fifo_len = shared.fifo.recs.lock().unwrap().len();
    let mut stored_std = vec![0u8; std_len];
    let mut stored_fifo = vec![0u8; fifo_len];
    for (queue, dlq) in [(STD, false), (DLQ, true), (FIFO, false)] {
        let peek = peek_all(addr, queue).await?;
        if peek.truncated {
            a.truncated = true;
            a.examples
                .push(format!("{queue} holds more than {PEEK_LIMIT} messages"));
        }
        for m in &peek.messages {
            let slot = match parse_body(&m.body) {
                Some(('s', i)) if (i as usize) < std_len && queue != FIFO => {
                    &mut stored_std[i as usize]
                }
                Some(('f', i)) if (i as usize) < fifo_len && queue == FIFO => {
                    &mut stored_fifo[i as usize]
                }
                _ => {
                    a.unknown_stored += 1;
                    a.examples
                        .push(format!("{queue} stores {:.30} ({})", m.body, m.state));
                    continue;
                }
            };
            *slot = slot.saturating_add(1);
            if dlq {
                a.stored_dlq += 1;
            } else {
                a.stored_source += 1;
            }
        }
    }
    for (family, stored) in [(&shared.std, &stored_std), (&shared.fifo, &stored_fifo)] {
        let recs = family.recs.lock().unwrap();
        for (i, (r, &s)) in recs.iter().zip(stored.iter()).enumerate() {
            let id = format!("{}:{i}", family.tag);
            let mut bad = |what: &str, n: &mut u64| {
                *n += 1;
                if a.examples.len() < 20 {
                    a.examples.push(format!("{id} {what}"));
                }
            };
            if !r.acked {
                a.unacked += 1;
                if s > 1 {
                    bad(
                        "(send unacknowledged) stored more than once",
                        &mut a.duplicated,
                    );
                }
                continue;
            }
            a.acked += 1;
            match (r.deletes, s) {
                (1, 0) => a.deleted += 1,
                (0, 1) => {}
                (0, 0) => bad("lost: never deleted, not stored", &mut a.lost),
                (d, s) => {
                    if d > 1 {
                        bad("deleted more than once", &mut a.deleted_twice);
                    }
                    if d >= 1 && s >= 1 {
                        bad("deleted, yet still stored", &mut a.deleted_but_stored);
                    }
                    if s > 1 {
                        bad("stored more than once", &mut a.duplicated);
                    }
                }
            }
        }
    }
    Ok(a)
}

struct MemoryCheck {
    passed: bool,
    summary: String,
    samples: Vec<(f64, u64)>,
    thirds_max_kib: [u64; 3],
    slope_kib_per_s: f64,
}

impl MemoryCheck {
    fn json(&self) -> Value {
        json!({
            "passed": self.passed,
            "summary": self.summary,
            "max_kib_by_third": self.thirds_max_kib,
            "last_third_kib_per_s": self.slope_kib_per_s,
            "samples_s_kib": self.samples,
        })
    }
}

/// No growth once steady. The steady part starts after a third of the
/// run or `steady_after` seconds, whichever is later (FIFO deduplication
/// ids legitimately pile up for their 5-minute window before that); split
/// in halves, the second half's peak RSS may be at most `growth` times the
/// first half's. A run whose steady part is under two minutes cannot show
/// that: the check is then reported, not enforced. The peaks of the run's
/// thirds and the last third's growth rate are reported either way.
fn memory_check(samples: &[(f64, u64)], growth: f64, steady_after: u64) -> MemoryCheck {
    let n = samples.len();
    if n < 6 {
        return MemoryCheck {
            passed: false,
            summary: format!("only {n} RSS samples: run for at least 6 s"),
            samples: samples.to_vec(),
            thirds_max_kib: [0; 3],
            slope_kib_per_s: 0.0,
        };
    }
    let third = |k: usize| {
        samples[k * n / 3..(k + 1) * n / 3]
            .iter()
            .map(|s| s.1)
            .max()
            .unwrap_or(0)
    };
    let maxes = [third(0), third(1), third(2)];
    // The last third's growth rate (least squares), reported beside the
    // bound: a short run can pass the bound while still growing.
    let last = &samples[2 * n / 3..];
    let (mt, mk) = last
        .iter()
        .fold((0.0, 0.0), |(t, k), s| (t + s.0, k + s.1 as f64));
    let (mt, mk) = (mt / last.len() as f64, mk / last.len() as f64);
    let (num, den) = last.iter().fold((0.0, 0.0), |(num, den), s| {
        (
            num + (s.0 - mt) * (s.1 as f64 - mk),
            den + (s.0 - mt).powi(2),
        )
    });
    let slope = if den > 0.0 { num / den } else { 0.0 };
    let end = samples[n - 1].0;
    let start = (end / 3.0).max(steady_after as f64);
    let steady: Vec<u64> = samples
        .iter()
        .filter(|s| s.0 >= start)
        .map(|s| s.1)
        .collect();
    let thirds = format!(
        "peak by third {} / {} / {} KiB, the last third growing {slope:.0} KiB/s",
        maxes[0], maxes[1], maxes[2]
    );
    let (passed, summary) = if end - start < 120.0 || steady.len() < 4 {
        (
            true,
            format!(
                "{thirds}; not enforced: no steady part (run past {steady_after} s + 2 min, \
                 the FIFO deduplication window, to check it)"
            ),
        )
    } else {
        let half = steady.len() / 2;
        let first = steady[..half].iter().copied().max().unwrap_or(0);
        let second = steady[half..].iter().copied().max().unwrap_or(0);
        let bound = (first as f64 * growth) as u64;
        let passed = second <= bound;
        (
            passed,
            format!(
                "{thirds}; steady from {start:.0} s: peak {first} then {second} KiB, {} the \
                 bound {bound} KiB ({growth} x)",
                if passed { "within" } else { "OVER" }
            ),
        )
    };
    MemoryCheck {
        passed,
        summary,
        samples: samples.to_vec(),
        thirds_max_kib: maxes,
        slope_kib_per_s: (slope * 10.0).round() / 10.0,
    }
}
