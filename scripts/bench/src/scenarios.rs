//! The scenarios. Each takes a fresh server (or an `--endpoint`), runs a
//! bounded amount of work on its own uniquely named queue, checks what it
//! can, and returns measurements.
//!
//! Against the null server nothing can be checked (it stores nothing), so
//! the same requests are made and only their rate counts.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

use crate::client::{Client, ClientKind, Endpoint, Entry, Msg};
use crate::proc::{self, Launcher, ServerKind};
use crate::report::{Latency, Measurement};
use crate::BoxResult;

pub const PIPELINE_VARIANT: &str = "4 producers + 4 consumers";
/// The pipeline under load (the latency-under-load target), with each
/// request kind's latency reported apart.
pub const PIPELINE_LOADED_VARIANT: &str = "16 producers + 16 consumers";

/// The request kinds a flow times one by one, each with the names of its
/// p50, p99 and max (ms) in a measurement's metrics.
pub const FLOW_KINDS: [(&str, [&str; 3]); 3] = [
    ("send", ["send_p50_ms", "send_p99_ms", "send_max_ms"]),
    (
        "receive",
        ["receive_p50_ms", "receive_p99_ms", "receive_max_ms"],
    ),
    (
        "delete",
        ["delete_p50_ms", "delete_p99_ms", "delete_max_ms"],
    ),
];
pub const WAKE_VARIANT: &str = "1 waiting poll";

/// How much work each scenario does.
#[derive(Debug, Clone)]
pub struct Sizes {
    /// (concurrency, messages) per variant.
    pub send: Vec<(usize, u64)>,
    pub send_batch: Vec<(usize, u64)>,
    pub drain: Vec<(usize, u64)>,
    pub pipeline: u64,
    pub wake_iterations: usize,
    pub fifo_groups: u64,
    pub fifo_per_group: u64,
    pub backlog_depths: Vec<u64>,
    pub backlog_measured: u64,
    pub backlog_consumers: usize,
    pub memory_messages: u64,
    pub startup_runs: usize,
    /// Messages published per `publish` variant.
    pub publish: u64,
    /// Messages per `lambda` variant.
    pub lambda: u64,
}

impl Sizes {
    pub fn full(scale: f64) -> Sizes {
        let s = |n: u64| ((n as f64 * scale).round() as u64).max(100) / 10 * 10;
        Sizes {
            send: vec![(1, s(10_000)), (16, s(40_000)), (64, s(40_000))],
            send_batch: vec![(1, s(50_000)), (16, s(200_000))],
            drain: vec![(1, s(50_000)), (16, s(100_000))],
            pipeline: s(40_000),
            // At least 300 wakes, so the p99 is not the maximum.
            wake_iterations: 400,
            fifo_groups: 100,
            fifo_per_group: s(200) / 10 * 10,
            backlog_depths: vec![1_000, 100_000, 1_000_000],
            backlog_measured: s(60_000),
            backlog_consumers: 4,
            memory_messages: 200_000,
            startup_runs: 10,
            publish: s(40_000),
            lambda: s(40_000),
        }
    }

    pub fn quick() -> Sizes {
        Sizes {
            send: vec![(1, 500), (16, 2_000)],
            send_batch: vec![(1, 2_000), (16, 10_000)],
            drain: vec![(1, 2_000), (16, 4_000)],
            pipeline: 2_000,
            wake_iterations: 20,
            fifo_groups: 20,
            fifo_per_group: 20,
            backlog_depths: vec![1_000, 10_000],
            backlog_measured: 2_000,
            backlog_consumers: 4,
            memory_messages: 20_000,
            startup_runs: 3,
            publish: 2_000,
            lambda: 2_000,
        }
    }
}

/// The message count for a client: the SDK client is several times slower
/// (it spends the CPU), so it gets a quarter of the raw client's work.
pub fn for_client(n: u64, client: ClientKind) -> u64 {
    match client {
        ClientKind::Raw => n,
        ClientKind::Sdk => (n / 4).max(100) / 10 * 10,
    }
}

/// One scenario run: where, with which client, until when.
pub struct Run<'a> {
    pub endpoint: &'a Endpoint,
    pub server: ServerKind,
    pub pid: Option<u32>,
    pub client: ClientKind,
    pub deadline: Instant,
}

impl Run<'_> {
    fn verify(&self) -> bool {
        self.server != ServerKind::Null
    }

    fn check_deadline(&self) -> BoxResult<()> {
        check_deadline(self.deadline)
    }

    pub(crate) fn measurement(
        &self,
        scenario: &'static str,
        variant: impl Into<String>,
    ) -> Measurement {
        let mut m = Measurement::new(scenario, variant);
        m.client = self.client.name();
        m.server = self.server.name();
        m.verified = self.verify();
        m
    }
}

pub(crate) fn check_deadline(deadline: Instant) -> BoxResult<()> {
    if Instant::now() > deadline {
        Err("scenario ran past its time limit".into())
    } else {
        Ok(())
    }
}

/// Nanoseconds since the benchmark started (a clock shared by producers
/// and consumers, carried in message bodies).
fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// A body of exactly `size` bytes carrying a tag and a timestamp.
fn body(tag: u64, ts_ns: u64, size: usize) -> String {
    use std::fmt::Write as _;
    // Built in one allocation, padded a slice at a time: this runs for
    // every message sent, and its cost is part of the client's floor.
    const PAD: &str = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
    let mut s = String::with_capacity(size.max(34));
    let _ = write!(s, "{tag:012}.{ts_ns:020}.");
    while s.len() < size {
        s.push_str(&PAD[..(size - s.len()).min(PAD.len())]);
    }
    s.truncate(size.max(34));
    s
}

fn parse_body(body: &str) -> BoxResult<(u64, u64)> {
    let mut parts = body.splitn(3, '.');
    let tag = parts.next().and_then(|p| p.parse().ok());
    let ts = parts.next().and_then(|p| p.parse().ok());
    match (tag, ts) {
        (Some(tag), Some(ts)) => Ok((tag, ts)),
        _ => Err(format!("received a body this benchmark did not send: {body:.60}").into()),
    }
}

fn plain(body: String) -> Entry {
    Entry {
        body,
        group: None,
        dedup: None,
    }
}

/// A queue name no other run uses.
fn queue_name(scenario: &str, fifo: bool) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = format!("bench-{scenario}-{}-{n}", std::process::id());
    if fifo {
        name + ".fifo"
    } else {
        name
    }
}

/// Marks each tag seen; a second sighting is an error.
pub(crate) struct Seen(Vec<AtomicU8>);

impl Seen {
    pub(crate) fn new(n: u64) -> Seen {
        Seen((0..n).map(|_| AtomicU8::new(0)).collect())
    }

    pub(crate) fn mark(&self, tag: u64) -> BoxResult<()> {
        let slot = self
            .0
            .get(tag as usize)
            .ok_or_else(|| format!("received tag {tag}, never sent"))?;
        if slot.fetch_add(1, Ordering::Relaxed) != 0 {
            return Err(format!("message {tag} received twice").into());
        }
        Ok(())
    }

    pub(crate) fn missing(&self) -> usize {
        self.0
            .iter()
            .filter(|s| s.load(Ordering::Relaxed) == 0)
            .count()
    }
}

/// What one worker did.
#[derive(Default)]
struct Work {
    messages: u64,
    requests: u64,
    latencies: Vec<u64>,
}

/// `n` clients, each warmed up (connection open, one ListQueues), opened
/// concurrently so that the SDK's pool also holds `n` connections.
async fn clients(endpoint: &Endpoint, kind: ClientKind, n: usize) -> BoxResult<Vec<Client>> {
    let mut set = JoinSet::new();
    for _ in 0..n {
        let endpoint = endpoint.clone();
        set.spawn(async move {
            let mut c = endpoint.client(kind).await?;
            c.list_queues().await?;
            Ok::<_, crate::BoxError>(c)
        });
    }
    let mut out = Vec::with_capacity(n);
    while let Some(r) = set.join_next().await {
        out.push(r??);
    }
    Ok(out)
}

/// Runs one task per client and times them from start to the last end.
async fn timed<F, Fut>(
    run: &Run<'_>,
    clients: Vec<Client>,
    work: F,
) -> BoxResult<(Duration, Work, Option<f64>, Option<f64>)>
where
    F: Fn(usize, Client) -> Fut,
    Fut: Future<Output = BoxResult<Work>> + Send + 'static,
{
    let server_cpu = run.pid.and_then(|p| proc::cpu_seconds(&p.to_string()));
    let client_cpu = proc::cpu_seconds("self");
    let start = Instant::now();
    let mut set = JoinSet::new();
    for (i, c) in clients.into_iter().enumerate() {
        set.spawn(work(i, c));
    }
    let mut total = Work::default();
    while let Some(r) = set.join_next().await {
        let w = r??;
        total.messages += w.messages;
        total.requests += w.requests;
        total.latencies.extend(w.latencies);
    }
    let elapsed = start.elapsed();
    let server_cpu =
        server_cpu.and_then(|before| Some(proc::cpu_seconds(&run.pid?.to_string())? - before));
    let client_cpu = client_cpu.and_then(|before| Some(proc::cpu_seconds("self")? - before));
    Ok((elapsed, total, server_cpu, client_cpu))
}

fn fill_in(
    m: &mut Measurement,
    elapsed: Duration,
    work: Work,
    latency_of: &'static str,
    server_cpu: Option<f64>,
    client_cpu: Option<f64>,
) {
    m.seconds = elapsed.as_secs_f64();
    m.messages = work.messages;
    m.requests = work.requests;
    m.msgs_per_s = work.messages as f64 / m.seconds;
    m.latency = Latency::from_ns(latency_of, work.latencies);
    m.server_cpu_s = server_cpu;
    m.client_cpu_s = client_cpu;
}

pub(crate) async fn create_queue(run: &Run<'_>, scenario: &str, fifo: bool) -> BoxResult<String> {
    let mut c = run.endpoint.client(ClientKind::Raw).await?;
    c.create_queue(&queue_name(scenario, fifo), fifo).await
}

pub(crate) async fn delete_queue(run: &Run<'_>, url: &str) -> BoxResult<()> {
    let mut c = run.endpoint.client(ClientKind::Raw).await?;
    c.delete_queue(url).await
}

/// Checks, on a server that stores, that `url` holds exactly `expected`.
pub(crate) async fn expect_stored(run: &Run<'_>, url: &str, expected: u64) -> BoxResult<()> {
    if !run.verify() {
        return Ok(());
    }
    let mut c = run.endpoint.client(ClientKind::Raw).await?;
    let stored = c.stored_messages(url).await?;
    if stored != expected {
        return Err(format!("queue holds {stored} messages, expected {expected}").into());
    }
    Ok(())
}

/// Sends messages tagged `first..first + n`, `size` bytes each, with
/// SendMessageBatch over 8 raw connections. Untimed set-up work.
pub(crate) async fn fill(
    endpoint: &Endpoint,
    url: &str,
    first: u64,
    n: u64,
    size: usize,
    deadline: Instant,
) -> BoxResult<()> {
    let next = Arc::new(AtomicU64::new(first));
    let end = first + n;
    let mut set = JoinSet::new();
    for _ in 0..8 {
        let endpoint = endpoint.clone();
        let url = url.to_string();
        let next = next.clone();
        set.spawn(async move {
            let mut c = endpoint.client(ClientKind::Raw).await?;
            loop {
                check_deadline(deadline)?;
                let from = next.fetch_add(10, Ordering::Relaxed);
                if from >= end {
                    return Ok::<_, crate::BoxError>(());
                }
                let entries: Vec<Entry> = (from..(from + 10).min(end))
                    .map(|t| plain(body(t, 0, size)))
                    .collect();
                c.send_batch(&url, &entries).await?;
            }
        });
    }
    while let Some(r) = set.join_next().await {
        r??;
    }
    Ok(())
}

/// `send`: SendMessage of 100-byte bodies from `concurrency` clients.
pub async fn send(run: &Run<'_>, concurrency: usize, n: u64) -> BoxResult<Measurement> {
    let n = for_client(n, run.client);
    let url = create_queue(run, "send", false).await?;
    let cs = clients(run.endpoint, run.client, concurrency).await?;
    let next = Arc::new(AtomicU64::new(0));
    let deadline = run.deadline;
    let (elapsed, work, scpu, ccpu) = timed(run, cs, |_, mut c| {
        let (url, next) = (url.clone(), next.clone());
        async move {
            let mut w = Work::default();
            loop {
                check_deadline(deadline)?;
                let tag = next.fetch_add(1, Ordering::Relaxed);
                if tag >= n {
                    return Ok(w);
                }
                let entry = plain(body(tag, 0, 100));
                let t = Instant::now();
                c.send(&url, &entry).await?;
                w.latencies.push(t.elapsed().as_nanos() as u64);
                w.messages += 1;
                w.requests += 1;
            }
        }
    })
    .await?;
    expect_stored(run, &url, n).await?;
    delete_queue(run, &url).await?;
    let mut m = run.measurement("send", format!("c={concurrency}"));
    fill_in(&mut m, elapsed, work, "one SendMessage", scpu, ccpu);
    Ok(m)
}

/// `send-batch`: SendMessageBatch of 10 × 100 bytes.
pub async fn send_batch(run: &Run<'_>, concurrency: usize, n: u64) -> BoxResult<Measurement> {
    let n = for_client(n, run.client);
    let url = create_queue(run, "send-batch", false).await?;
    let cs = clients(run.endpoint, run.client, concurrency).await?;
    let next = Arc::new(AtomicU64::new(0));
    let deadline = run.deadline;
    let (elapsed, work, scpu, ccpu) = timed(run, cs, |_, mut c| {
        let (url, next) = (url.clone(), next.clone());
        async move {
            let mut w = Work::default();
            loop {
                check_deadline(deadline)?;
                let from = next.fetch_add(10, Ordering::Relaxed);
                if from >= n {
                    return Ok(w);
                }
                let entries: Vec<Entry> = (from..(from + 10).min(n))
                    .map(|t| plain(body(t, 0, 100)))
                    .collect();
                let t = Instant::now();
                c.send_batch(&url, &entries).await?;
                w.latencies.push(t.elapsed().as_nanos() as u64);
                w.messages += entries.len() as u64;
                w.requests += 1;
            }
        }
    })
    .await?;
    expect_stored(run, &url, n).await?;
    delete_queue(run, &url).await?;
    let mut m = run.measurement("send-batch", format!("c={concurrency}"));
    fill_in(
        &mut m,
        elapsed,
        work,
        "one SendMessageBatch of 10",
        scpu,
        ccpu,
    );
    Ok(m)
}

/// `drain`: pre-fill `n`, then ReceiveMessage(10) + DeleteMessageBatch
/// until empty; every message must be seen exactly once.
pub async fn drain(run: &Run<'_>, concurrency: usize, n: u64) -> BoxResult<Measurement> {
    let n = for_client(n, run.client);
    let url = create_queue(run, "drain", false).await?;
    if run.verify() {
        fill(run.endpoint, &url, 0, n, 100, run.deadline).await?;
        expect_stored(run, &url, n).await?;
    }
    let cs = clients(run.endpoint, run.client, concurrency).await?;
    let seen = Arc::new(Seen::new(n));
    let received = Arc::new(AtomicU64::new(0));
    // The null server always answers 10 messages: it gets n / 10 receives.
    let null_receives = Arc::new(AtomicU64::new(0));
    let (verify, deadline) = (run.verify(), run.deadline);
    let (elapsed, work, scpu, ccpu) = timed(run, cs, |_, mut c| {
        let (url, seen, received) = (url.clone(), seen.clone(), received.clone());
        let null_receives = null_receives.clone();
        async move {
            let mut w = Work::default();
            loop {
                check_deadline(deadline)?;
                if received.load(Ordering::Relaxed) >= n
                    || (!verify && null_receives.fetch_add(1, Ordering::Relaxed) >= n / 10)
                {
                    return Ok(w);
                }
                let t = Instant::now();
                let msgs = c.receive(&url, 10, 0).await?;
                w.requests += 1;
                if msgs.is_empty() {
                    // Others hold the rest in flight; they will delete them.
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    continue;
                }
                received.fetch_add(msgs.len() as u64, Ordering::Relaxed);
                if verify {
                    for msg in &msgs {
                        seen.mark(parse_body(&msg.body)?.0)?;
                    }
                }
                c.delete_batch(&url, &msgs).await?;
                w.requests += 1;
                w.latencies.push(t.elapsed().as_nanos() as u64);
                w.messages += msgs.len() as u64;
            }
        }
    })
    .await?;
    if run.verify() {
        let missing = seen.missing();
        if missing > 0 {
            return Err(format!("{missing} of {n} messages never received").into());
        }
        let mut c = run.endpoint.client(ClientKind::Raw).await?;
        if !c.receive(&url, 10, 0).await?.is_empty() {
            return Err("queue not empty after the drain".into());
        }
        expect_stored(run, &url, 0).await?;
    }
    delete_queue(run, &url).await?;
    let mut m = run.measurement("drain", format!("c={concurrency}"));
    fill_in(
        &mut m,
        elapsed,
        work,
        "one ReceiveMessage(10) + DeleteMessageBatch pair",
        scpu,
        ccpu,
    );
    Ok(m)
}

/// Producers and long-polling consumers on one queue at once: shared by
/// `pipeline` (standard queue) and `fifo` (FIFO queue, per-group order).
struct Flow {
    scenario: &'static str,
    variant: String,
    fifo: bool,
    producers: usize,
    consumers: usize,
    /// Message tags, one list per producer; for FIFO,
    /// tag = group * per_group + index in group.
    tags: Vec<Vec<u64>>,
    per_group: u64,
    /// Send with SendMessageBatch (FIFO) rather than SendMessage.
    batch: bool,
}

async fn flow(run: &Run<'_>, flow: Flow) -> BoxResult<Measurement> {
    let total: u64 = flow.tags.iter().map(|t| t.len() as u64).sum();
    let max_tag = flow.tags.iter().flatten().copied().max().unwrap_or(0);
    let url = create_queue(run, flow.scenario, flow.fifo).await?;
    let consumer_clients = clients(run.endpoint, run.client, flow.consumers).await?;
    let producer_clients = clients(run.endpoint, run.client, flow.producers).await?;
    let seen = Arc::new(Seen::new(max_tag + 1));
    let delivered = Arc::new(AtomicU64::new(0));
    let done_at: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let latencies: Arc<Mutex<Vec<u64>>> = Arc::new(Mutex::new(Vec::new()));
    let next_in_group: Arc<Mutex<HashMap<u64, u64>>> = Arc::new(Mutex::new(HashMap::new()));
    let requests = Arc::new(AtomicU64::new(0));
    // Each request's own time, by kind (FLOW_KINDS), beside the end-to-end
    // latency of a message.
    let kinds: Arc<Mutex<[Vec<u64>; 3]>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let null_receives = Arc::new(AtomicU64::new(0));
    let (verify, deadline, fifo, per_group) =
        (run.verify(), run.deadline, flow.fifo, flow.per_group.max(1));

    let server_cpu = run.pid.and_then(|p| proc::cpu_seconds(&p.to_string()));
    let client_cpu = proc::cpu_seconds("self");
    let start = Instant::now();
    let mut consumers = JoinSet::new();
    for mut c in consumer_clients {
        let url = url.clone();
        let (seen, delivered, done_at, latencies, next_in_group, requests, stop) = (
            seen.clone(),
            delivered.clone(),
            done_at.clone(),
            latencies.clone(),
            next_in_group.clone(),
            requests.clone(),
            stop.clone(),
        );
        let null_receives = null_receives.clone();
        let kinds = kinds.clone();
        consumers.spawn(async move {
            while delivered.load(Ordering::Relaxed) < total && !stop.load(Ordering::Relaxed) {
                check_deadline(deadline)?;
                // The null server always answers 10: it gets total / 10 receives.
                if !verify && null_receives.fetch_add(1, Ordering::Relaxed) >= total / 10 {
                    break;
                }
                let asked = Instant::now();
                let msgs = c.receive(&url, 10, 2).await?;
                let arrived = now_ns();
                kinds.lock().unwrap()[1].push(asked.elapsed().as_nanos() as u64);
                requests.fetch_add(1, Ordering::Relaxed);
                if msgs.is_empty() {
                    continue;
                }
                if verify {
                    let mut lat = Vec::with_capacity(msgs.len());
                    {
                        let mut order = next_in_group.lock().unwrap();
                        for msg in &msgs {
                            let (tag, sent) = parse_body(&msg.body)?;
                            seen.mark(tag)?;
                            lat.push(arrived.saturating_sub(sent));
                            if fifo {
                                let (group, index) = (tag / per_group, tag % per_group);
                                let expected = order.entry(group).or_insert(0);
                                if index != *expected {
                                    return Err(format!(
                                        "FIFO order broken in group {group}: got message \
                                         {index}, expected {expected}"
                                    )
                                    .into());
                                }
                                *expected += 1;
                            }
                        }
                    }
                    latencies.lock().unwrap().extend(lat);
                }
                let asked = Instant::now();
                c.delete_batch(&url, &msgs).await?;
                kinds.lock().unwrap()[2].push(asked.elapsed().as_nanos() as u64);
                requests.fetch_add(1, Ordering::Relaxed);
                let now =
                    delivered.fetch_add(msgs.len() as u64, Ordering::Relaxed) + msgs.len() as u64;
                if now >= total {
                    done_at.lock().unwrap().get_or_insert_with(Instant::now);
                }
            }
            Ok::<_, crate::BoxError>(())
        });
    }
    let mut producers = JoinSet::new();
    for (c, tags) in producer_clients.into_iter().zip(flow.tags) {
        let url = url.clone();
        let requests = requests.clone();
        let kinds = kinds.clone();
        let batch = flow.batch;
        producers.spawn(async move {
            let mut c = c;
            let entry = |tag: u64| {
                let body = body(tag, now_ns(), 100);
                if fifo {
                    let group = tag / per_group;
                    Entry {
                        body,
                        group: Some(format!("g{group}")),
                        dedup: Some(tag.to_string()),
                    }
                } else {
                    plain(body)
                }
            };
            if batch {
                for chunk in tags.chunks(10) {
                    check_deadline(deadline)?;
                    let entries: Vec<Entry> = chunk.iter().map(|&t| entry(t)).collect();
                    let asked = Instant::now();
                    c.send_batch(&url, &entries).await?;
                    kinds.lock().unwrap()[0].push(asked.elapsed().as_nanos() as u64);
                    requests.fetch_add(1, Ordering::Relaxed);
                }
            } else {
                for &tag in &tags {
                    check_deadline(deadline)?;
                    let entry = entry(tag);
                    let asked = Instant::now();
                    c.send(&url, &entry).await?;
                    kinds.lock().unwrap()[0].push(asked.elapsed().as_nanos() as u64);
                    requests.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok::<_, crate::BoxError>(Instant::now())
        });
    }
    let mut producers_done = start;
    let mut failure: Option<crate::BoxError> = None;
    while let Some(r) = producers.join_next().await {
        match r {
            Ok(Ok(t)) => producers_done = producers_done.max(t),
            Ok(Err(e)) => failure = failure.or(Some(e)),
            Err(e) => failure = failure.or(Some(e.into())),
        }
    }
    // Consumers end once everything is delivered; a consumer parked in a
    // long poll when that happens is no longer needed.
    while failure.is_none() && delivered.load(Ordering::Relaxed) < total {
        if Instant::now() > deadline {
            failure = Some(
                format!(
                    "only {} of {total} messages delivered in time",
                    delivered.load(Ordering::Relaxed)
                )
                .into(),
            );
            break;
        }
        if let Some(Ok(Err(e))) = consumers.try_join_next() {
            failure = Some(e);
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let consumers_done = (*done_at.lock().unwrap()).unwrap_or_else(Instant::now);
    consumers.abort_all();
    while let Some(r) = consumers.join_next().await {
        if let Ok(Err(e)) = r {
            failure = failure.or(Some(e));
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let elapsed = producers_done.max(consumers_done) - start;
    let server_cpu =
        server_cpu.and_then(|before| Some(proc::cpu_seconds(&run.pid?.to_string())? - before));
    let client_cpu = client_cpu.and_then(|before| Some(proc::cpu_seconds("self")? - before));
    if verify {
        let distinct = seen
            .0
            .iter()
            .filter(|s| s.load(Ordering::Relaxed) > 0)
            .count() as u64;
        if distinct != total {
            return Err(format!("{distinct} distinct messages received, {total} sent").into());
        }
        expect_stored(run, &url, 0).await?;
    }
    delete_queue(run, &url).await?;
    let latencies = std::mem::take(&mut *latencies.lock().unwrap());
    let mut m = run.measurement(flow.scenario, flow.variant);
    let work = Work {
        messages: delivered.load(Ordering::Relaxed),
        requests: requests.load(Ordering::Relaxed),
        latencies,
    };
    fill_in(
        &mut m,
        elapsed,
        work,
        "end to end: start of the send to the return of the receive",
        server_cpu,
        client_cpu,
    );
    let kinds = std::mem::take(&mut *kinds.lock().unwrap());
    for ((_, names), ns) in FLOW_KINDS.iter().zip(kinds) {
        if let Some(l) = Latency::from_ns("", ns) {
            for (name, value) in names.iter().zip([l.p50_ms, l.p99_ms, l.max_ms]) {
                m.metrics.insert(name, value);
            }
        }
    }
    Ok(m)
}

/// `pipeline`: producers (SendMessage) and long-polling consumers
/// (ReceiveMessage(10, wait 2 s) + DeleteMessageBatch) at once: 4 and 4
/// ([`PIPELINE_VARIANT`]), or 16 and 16 ([`PIPELINE_LOADED_VARIANT`]).
pub async fn pipeline(run: &Run<'_>, n: u64, loaded: bool) -> BoxResult<Measurement> {
    let n = for_client(n, run.client);
    let (producers, variant) = if loaded {
        (16, PIPELINE_LOADED_VARIANT)
    } else {
        (4, PIPELINE_VARIANT)
    };
    let tags = (0..producers as u64)
        .map(|p| (0..n).filter(|t| t % producers as u64 == p).collect())
        .collect();
    flow(
        run,
        Flow {
            scenario: "pipeline",
            variant: variant.into(),
            fifo: false,
            producers,
            consumers: producers,
            tags,
            per_group: 1,
            batch: false,
        },
    )
    .await
}

/// `fifo`: `groups` message groups of `per_group` messages, sent in
/// batches of 10 by 4 producers (each group from one producer, in order),
/// received by 4 long-polling consumers that check every group's order.
pub async fn fifo(run: &Run<'_>, groups: u64, per_group: u64) -> BoxResult<Measurement> {
    let producers = 4u64;
    let tags = (0..producers)
        .map(|p| {
            let mine: Vec<u64> = (0..groups).filter(|g| g % producers == p).collect();
            (0..per_group)
                .flat_map(|i| mine.iter().map(move |g| g * per_group + i))
                .collect()
        })
        .collect();
    flow(
        run,
        Flow {
            scenario: "fifo",
            variant: format!("{groups} groups, 4 producers + 4 consumers"),
            fifo: true,
            producers: producers as usize,
            consumers: 4,
            tags,
            per_group,
            batch: true,
        },
    )
    .await
}

/// `longpoll-wake`: a ReceiveMessage(wait 5 s) is parked on an empty queue;
/// 10 ms later another connection sends one message. Timed from the start
/// of that send to the return of the poll.
///
/// The poller runs on a thread and runtime of its own, as a consumer does
/// in an application: were it a task beside the sender on one runtime,
/// the sender's answer and the poll's would queue for the same client
/// thread, and the time would be the client's as much as the server's.
pub async fn longpoll_wake(run: &Run<'_>, iterations: usize) -> BoxResult<Measurement> {
    let url = create_queue(run, "longpoll-wake", false).await?;
    let mut sender = clients(run.endpoint, run.client, 1).await?.pop().unwrap();
    let (go, polls) = tokio::sync::mpsc::unbounded_channel::<()>();
    let (answer, mut answers) = tokio::sync::mpsc::unbounded_channel();
    let poller = {
        let (endpoint, kind, url) = (run.endpoint.clone(), run.client, url.clone());
        std::thread::Builder::new()
            .name("longpoll-wake poller".into())
            .spawn(move || poll_on_own_thread(endpoint, kind, url, polls, answer))?
    };
    let mut latencies = Vec::with_capacity(iterations);
    let start = Instant::now();
    let mut outcome = Ok(());
    for i in 0..iterations {
        let step = async {
            run.check_deadline()?;
            let text = body(i as u64, 0, 100);
            go.send(()).map_err(|_| "the poller thread stopped")?;
            tokio::time::sleep(Duration::from_millis(10)).await;
            let sent = Instant::now();
            sender.send(&url, &plain(text.clone())).await?;
            let (msgs, woke) = answers.recv().await.ok_or("the poller thread stopped")??;
            match msgs.as_slice() {
                [m] if m.body == text => {}
                other => {
                    return Err(format!(
                        "long poll {i} returned {} messages, not the one sent",
                        other.len()
                    )
                    .into())
                }
            }
            latencies.push(woke.saturating_duration_since(sent).as_nanos() as u64);
            sender.delete_batch(&url, &msgs).await
        };
        if let Err(e) = step.await {
            outcome = Err(e);
            break;
        }
    }
    drop(go);
    // It ends once its last poll has returned (at most its 5 s wait).
    let _ = tokio::task::spawn_blocking(move || poller.join()).await;
    outcome?;
    let elapsed = start.elapsed();
    expect_stored(run, &url, 0).await?;
    delete_queue(run, &url).await?;
    let mut m = run.measurement("longpoll-wake", WAKE_VARIANT);
    m.seconds = elapsed.as_secs_f64();
    m.messages = iterations as u64;
    m.requests = 3 * iterations as u64;
    m.latency = Latency::from_ns(
        "start of the SendMessage to the return of the already-waiting ReceiveMessage",
        latencies,
    );
    Ok(m)
}

/// The `longpoll-wake` poller: one ReceiveMessage per signal on `polls`,
/// each answer (and the instant it returned) sent back on `answers`.
fn poll_on_own_thread(
    endpoint: Endpoint,
    kind: ClientKind,
    url: String,
    mut polls: tokio::sync::mpsc::UnboundedReceiver<()>,
    answers: tokio::sync::mpsc::UnboundedSender<BoxResult<(Vec<Msg>, Instant)>>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            let _ = answers.send(Err(e.into()));
            return;
        }
    };
    runtime.block_on(async move {
        // Connected here, so that its connection is this runtime's.
        let mut poller = match endpoint.client(kind).await {
            Ok(c) => c,
            Err(e) => {
                let _ = answers.send(Err(e));
                return;
            }
        };
        while polls.recv().await.is_some() {
            let got = poller.receive(&url, 1, 5).await;
            let woke = Instant::now();
            if answers.send(got.map(|m| (m, woke))).is_err() {
                return;
            }
        }
    });
}

/// `backlog`: the receive + delete rate with `depth` messages queued, for
/// each depth, on one server: one queue per depth, each filled to its depth.
/// The queues take turns: `segment` messages received and deleted from one
/// (timed), then put back (untimed), then the next queue, so that load
/// drifts on a shared machine hit every depth alike. The shallowest queue
/// is drained to empty in each of its segments.
pub async fn backlog(
    run: &Run<'_>,
    depths: &[u64],
    measured: u64,
    consumers: usize,
) -> BoxResult<Vec<Measurement>> {
    let segment = depths.iter().copied().min().unwrap_or(1000).min(1000);
    let mut urls = Vec::with_capacity(depths.len());
    let mut next_tag = 0u64;
    for &depth in depths {
        let url = create_queue(run, "backlog", false).await?;
        fill(run.endpoint, &url, next_tag, depth, 100, run.deadline).await?;
        next_tag += depth;
        urls.push(url);
    }
    let mut elapsed = vec![Duration::ZERO; depths.len()];
    let mut totals: Vec<Work> = depths.iter().map(|_| Work::default()).collect();
    let mut server_cpu = vec![0.0; depths.len()];
    while totals.iter().any(|w| w.messages < measured) {
        for (i, url) in urls.iter().enumerate() {
            run.check_deadline()?;
            let taken = Arc::new(AtomicU64::new(0));
            let cs = clients(run.endpoint, ClientKind::Raw, consumers).await?;
            let deadline = run.deadline;
            let (t, work, scpu, _) = timed(run, cs, |_, mut c| {
                let (url, taken) = (url.clone(), taken.clone());
                async move {
                    let mut w = Work::default();
                    while taken.load(Ordering::Relaxed) < segment {
                        check_deadline(deadline)?;
                        let t = Instant::now();
                        let msgs: Vec<Msg> = c.receive(&url, 10, 0).await?;
                        w.requests += 1;
                        if msgs.is_empty() {
                            tokio::time::sleep(Duration::from_millis(1)).await;
                            continue;
                        }
                        taken.fetch_add(msgs.len() as u64, Ordering::Relaxed);
                        c.delete_batch(&url, &msgs).await?;
                        w.requests += 1;
                        w.latencies.push(t.elapsed().as_nanos() as u64);
                        w.messages += msgs.len() as u64;
                    }
                    Ok(w)
                }
            })
            .await?;
            // Put back what was taken, so the depth stays.
            fill(
                run.endpoint,
                url,
                next_tag,
                work.messages,
                100,
                run.deadline,
            )
            .await?;
            next_tag += work.messages;
            elapsed[i] += t;
            server_cpu[i] += scpu.unwrap_or(0.0);
            totals[i].messages += work.messages;
            totals[i].requests += work.requests;
            totals[i].latencies.extend(work.latencies);
        }
    }
    let mut out: Vec<Measurement> = Vec::new();
    for (i, (&depth, work)) in depths.iter().zip(totals).enumerate() {
        expect_stored(run, &urls[i], depth).await?;
        let variant = format!("depth={}", crate::report::count(depth as f64));
        let mut m = run.measurement("backlog", variant);
        fill_in(
            &mut m,
            elapsed[i],
            work,
            "one ReceiveMessage(10) + DeleteMessageBatch pair",
            run.pid.map(|_| server_cpu[i]),
            None,
        );
        m.metrics.insert("depth", depth as f64);
        m.metrics.insert("consumers", consumers as f64);
        out.push(m);
        delete_queue(run, &urls[i]).await?;
    }
    if let Some(base) = out.first().map(|m| m.msgs_per_s) {
        for m in out.iter_mut() {
            m.metrics
                .insert("vs_shallowest_pct", 100.0 * m.msgs_per_s / base);
        }
    }
    Ok(out)
}

/// `memory`: resident memory of the server holding `n` messages of 1 KiB,
/// above its resident memory with the empty queue, per message.
pub async fn memory(run: &Run<'_>, n: u64) -> BoxResult<Measurement> {
    let pid = run
        .pid
        .ok_or("the memory scenario needs the server's pid")?;
    let url = create_queue(run, "memory", false).await?;
    // Exercise every path once so its one-time allocations count as empty.
    fill(run.endpoint, &url, 0, 10, 1024, run.deadline).await?;
    let mut c = run.endpoint.client(ClientKind::Raw).await?;
    let msgs = c.receive(&url, 10, 0).await?;
    c.delete_batch(&url, &msgs).await?;
    expect_stored(run, &url, 0).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let empty = proc::status_kib(pid, "VmRSS")?;
    let start = Instant::now();
    fill(run.endpoint, &url, 0, n, 1024, run.deadline).await?;
    let elapsed = start.elapsed();
    expect_stored(run, &url, n).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let full = proc::status_kib(pid, "VmRSS")?;
    let hwm = proc::status_kib(pid, "VmHWM")?;
    let mut m = run.measurement(
        "memory",
        format!("{} x 1 KiB", crate::report::count(n as f64)),
    );
    m.client = "raw";
    m.messages = n;
    m.seconds = elapsed.as_secs_f64();
    m.msgs_per_s = n as f64 / m.seconds;
    m.metrics.insert("rss_empty_kib", empty as f64);
    m.metrics.insert("rss_full_kib", full as f64);
    m.metrics.insert("hwm_kib", hwm as f64);
    m.metrics.insert(
        "bytes_per_message",
        (full.saturating_sub(empty) * 1024) as f64 / n as f64,
    );
    delete_queue(run, &url).await?;
    Ok(m)
}

/// `startup`: exec to the first successful ListQueues, and resident
/// memory 200 ms later, over `runs` fresh processes.
pub fn startup(launcher: &Launcher, kind: ServerKind, runs: usize) -> BoxResult<Measurement> {
    // One untimed start so the binary is in the page cache.
    drop(launcher.start(kind)?);
    let mut ready = Vec::with_capacity(runs);
    let mut rss = Vec::with_capacity(runs);
    for _ in 0..runs {
        let server = launcher.start(kind)?;
        ready.push(server.ready_after.as_nanos() as u64);
        std::thread::sleep(Duration::from_millis(200));
        rss.push(proc::status_kib(server.pid(), "VmRSS")? as f64);
    }
    let mut m = Measurement::new("startup", "exec to first ListQueues");
    m.client = "raw";
    m.server = kind.name();
    m.latency = Latency::from_ns("exec to the first successful ListQueues", ready);
    if let Some(idle) = crate::report::median(rss) {
        m.metrics.insert("idle_rss_kib", idle);
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_carry_tag_and_time_at_any_size() {
        for size in [100, 1024] {
            let b = body(42, 123_456, size);
            assert_eq!(b.len(), size);
            assert_eq!(parse_body(&b).unwrap(), (42, 123_456));
        }
        assert!(parse_body("hello").is_err());
    }

    #[test]
    fn seen_catches_duplicates_and_strangers() {
        let seen = Seen::new(3);
        seen.mark(0).unwrap();
        seen.mark(2).unwrap();
        assert_eq!(seen.missing(), 1);
        assert!(seen.mark(2).is_err());
        assert!(seen.mark(3).is_err());
    }

    #[test]
    fn sdk_gets_a_quarter_in_whole_batches() {
        assert_eq!(for_client(40_000, ClientKind::Raw), 40_000);
        assert_eq!(for_client(40_000, ClientKind::Sdk), 10_000);
        assert_eq!(for_client(500, ClientKind::Sdk), 120);
    }
}

/// The filter policy of `publish`'s filtered variant: five keys, one of
/// each common operator, which every message passes.
const FIVE_KEY_POLICY: &str = r#"{"kind":["order"],"region":[{"prefix":"eu-"}],"size":[{"numeric":[">",0,"<=",1000]}],"tier":[{"anything-but":"free"}],"trace":[{"exists":true}]}"#;

/// What a `publish` variant publishes to.
#[derive(Debug, Clone, Copy)]
pub struct PublishShape {
    pub subscriptions: usize,
    /// The messages carry the five attributes of [`FIVE_ATTRIBUTES`].
    pub attributes: bool,
    /// Each subscription has [`FIVE_KEY_POLICY`] (which they pass).
    pub filtered: bool,
}

/// `publish`: SNS Publish of 100-byte messages from `concurrency` clients
/// to a topic with raw SQS subscriptions, as `shape` says.
pub async fn publish(
    run: &Run<'_>,
    concurrency: usize,
    n: u64,
    shape: PublishShape,
) -> BoxResult<Measurement> {
    let PublishShape {
        subscriptions,
        attributes,
        filtered,
    } = shape;
    let mut setup = run.endpoint.client(ClientKind::Raw).await?;
    let topic_name = queue_name("publish", false);
    let answer = setup
        .form(
            &[("Action", "CreateTopic"), ("Name", &topic_name)],
            "CreateTopic",
        )
        .await?;
    let answer = String::from_utf8_lossy(&answer);
    let topic = answer
        .split("<TopicArn>")
        .nth(1)
        .and_then(|r| r.split("</TopicArn>").next())
        .ok_or_else(|| format!("CreateTopic returned no TopicArn: {answer:.300}"))?
        .to_string();
    let mut queues = Vec::new();
    for _ in 0..subscriptions {
        let url = create_queue(run, "publish", false).await?;
        let name = url.rsplit('/').next().unwrap_or_default().to_string();
        let arn = format!("arn:aws:sqs:us-east-1:000000000000:{name}");
        let mut params = vec![
            ("Action", "Subscribe"),
            ("TopicArn", topic.as_str()),
            ("Protocol", "sqs"),
            ("Endpoint", arn.as_str()),
            ("Attributes.entry.1.key", "RawMessageDelivery"),
            ("Attributes.entry.1.value", "true"),
        ];
        if filtered {
            params.push(("Attributes.entry.2.key", "FilterPolicy"));
            params.push(("Attributes.entry.2.value", FIVE_KEY_POLICY));
        }
        setup.form(&params, "Subscribe").await?;
        queues.push(url);
    }
    let n = for_client(n, run.client);
    let cs = clients(run.endpoint, ClientKind::Raw, concurrency).await?;
    let next = Arc::new(AtomicU64::new(0));
    let deadline = run.deadline;
    let (elapsed, work, scpu, ccpu) = timed(run, cs, |_, mut c| {
        let (topic, next) = (topic.clone(), next.clone());
        async move {
            let mut w = Work::default();
            loop {
                check_deadline(deadline)?;
                let tag = next.fetch_add(1, Ordering::Relaxed);
                if tag >= n {
                    return Ok(w);
                }
                let message = body(tag, 0, 100);
                let mut params = vec![
                    ("Action", "Publish"),
                    ("TopicArn", topic.as_str()),
                    ("Message", message.as_str()),
                ];
                if attributes {
                    params.extend_from_slice(&FIVE_ATTRIBUTES);
                }
                let t = Instant::now();
                let out = c.form(&params, "Publish").await?;
                if !contains_bytes(&out, b"<MessageId>") {
                    return Err(format!(
                        "Publish returned no MessageId: {}",
                        String::from_utf8_lossy(&out[..out.len().min(300)])
                    )
                    .into());
                }
                w.latencies.push(t.elapsed().as_nanos() as u64);
                w.messages += 1;
                w.requests += 1;
            }
        }
    })
    .await?;
    for url in &queues {
        expect_stored(run, url, n).await?;
        delete_queue(run, url).await?;
    }
    setup
        .form(
            &[("Action", "DeleteTopic"), ("TopicArn", &topic)],
            "DeleteTopic",
        )
        .await?;
    let variant = publish_variant(shape, concurrency);
    let mut m = run.measurement("publish", variant);
    fill_in(&mut m, elapsed, work, "one Publish", scpu, ccpu);
    Ok(m)
}

/// A `publish` variant's name.
pub fn publish_variant(shape: PublishShape, concurrency: usize) -> String {
    let subs = match shape.subscriptions {
        1 => "1 sub".to_string(),
        n => format!("{n} subs"),
    };
    let attributes = if shape.attributes {
        ", 5 attributes"
    } else {
        ""
    };
    let filter = if shape.filtered { ", 5-key filter" } else { "" };
    format!("{subs}{attributes}{filter} c={concurrency}")
}

/// The five attributes `FIVE_KEY_POLICY` looks at, as query parameters.
const FIVE_ATTRIBUTES: [(&str, &str); 15] = [
    ("MessageAttributes.entry.1.Name", "kind"),
    ("MessageAttributes.entry.1.Value.DataType", "String"),
    ("MessageAttributes.entry.1.Value.StringValue", "order"),
    ("MessageAttributes.entry.2.Name", "region"),
    ("MessageAttributes.entry.2.Value.DataType", "String"),
    ("MessageAttributes.entry.2.Value.StringValue", "eu-west-1"),
    ("MessageAttributes.entry.3.Name", "size"),
    ("MessageAttributes.entry.3.Value.DataType", "Number"),
    ("MessageAttributes.entry.3.Value.StringValue", "100"),
    ("MessageAttributes.entry.4.Name", "tier"),
    ("MessageAttributes.entry.4.Value.DataType", "String"),
    ("MessageAttributes.entry.4.Value.StringValue", "gold"),
    ("MessageAttributes.entry.5.Name", "trace"),
    ("MessageAttributes.entry.5.Value.DataType", "String"),
    ("MessageAttributes.entry.5.Value.StringValue", "t-1"),
];

fn contains_bytes(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}
