//! `retsu-scale`: the same load over many queues through one or several
//! entry nodes (`scripts/bench-scale.sh` runs it against a one-node and a
//! three-node cluster on one PostgreSQL database).
//!
//! Connections are spread over the entry nodes (connection `c` enters
//! through node `c mod nodes`) and over the queues (its `i`-th request
//! goes to queue `(c + i × connections) mod queues`), so every queue sees
//! every node and a node's own shards are reached directly as often as
//! through another node. Two phases, each timed per request:
//! SendMessage of `--messages` messages, then ReceiveMessage (up to 10,
//! no wait) and DeleteMessageBatch of what it returned until every queue
//! is empty. With `--pids`, the CPU time the given processes and their
//! children spent during each phase is reported per message: what the
//! capacity model in BENCHMARKS.md divides a target rate by.

#[allow(dead_code)]
mod client;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use clap::Parser;

use client::{ClientKind, Endpoint, Entry};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub type BoxResult<T> = Result<T, BoxError>;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Many queues through several entry nodes.
#[derive(Parser)]
struct Args {
    /// The entry nodes: http://HOST:PORT, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    endpoints: Vec<String>,
    /// How many queues the load is spread over.
    #[arg(long, default_value_t = 30)]
    queues: usize,
    /// Connections (each sends and then receives and deletes).
    #[arg(long, default_value_t = 16)]
    connections: usize,
    /// Messages sent (and then received and deleted) in all.
    #[arg(long, default_value_t = 30_000)]
    messages: u64,
    /// Queue names start with this (a run needs names of its own).
    #[arg(long, default_value = "scale")]
    prefix: String,
    /// Named groups of process ids whose CPU time (with their children's)
    /// is reported per message: `retsu=1,2,3` `postgres=4` …
    #[arg(long = "pids")]
    pids: Vec<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    match rt.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("retsu-scale: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A group of processes whose CPU time is counted.
struct Counted {
    name: String,
    pids: Vec<u32>,
}

/// User + system CPU seconds of `pids`, their live children, and the
/// children they waited for.
fn cpu_seconds(pids: &[u32]) -> f64 {
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let fields = |pid: u32| -> Option<(u32, u64)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // After the command's closing parenthesis: state is field 3.
        let rest = &stat[stat.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ppid = f.get(1)?.parse().ok()?;
        let sum: u64 = [11, 12, 13, 14]
            .iter()
            .filter_map(|&i| f.get(i)?.parse::<u64>().ok())
            .sum();
        Some((ppid, sum))
    };
    let mut total = 0u64;
    for &pid in pids {
        total += fields(pid).map_or(0, |f| f.1);
    }
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some((ppid, sum)) = fields(pid) {
                if pids.contains(&ppid) && !pids.contains(&pid) {
                    total += sum;
                }
            }
        }
    }
    total as f64 / ticks
}

/// Nearest-rank percentiles (ms) of nanosecond samples.
fn percentiles(mut ns: Vec<u64>) -> String {
    if ns.is_empty() {
        return "no samples".into();
    }
    ns.sort_unstable();
    let at = |p: f64| {
        let rank = ((p / 100.0) * ns.len() as f64).ceil() as usize;
        ns[rank.clamp(1, ns.len()) - 1] as f64 / 1e6
    };
    format!(
        "p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} samples)",
        at(50.0),
        at(99.0),
        at(100.0),
        ns.len()
    )
}

async fn run(args: Args) -> BoxResult<()> {
    let endpoints: Vec<Endpoint> = args
        .endpoints
        .iter()
        .map(|e| {
            let addr: SocketAddr = e
                .trim_start_matches("http://")
                .trim_end_matches('/')
                .parse()
                .map_err(|_| format!("--endpoints: {e} is not http://IP:PORT"))?;
            Ok(Endpoint::new(addr))
        })
        .collect::<BoxResult<_>>()?;
    let counted: Vec<Counted> = args
        .pids
        .iter()
        .map(|g| {
            let (name, list) = g.split_once('=').ok_or("--pids NAME=PID,PID…")?;
            let pids = list
                .split(',')
                .map(|p| p.trim().parse::<u32>())
                .collect::<Result<_, _>>()
                .map_err(|e| format!("--pids {g}: {e}"))?;
            Ok(Counted {
                name: name.into(),
                pids,
            })
        })
        .collect::<BoxResult<_>>()?;
    let (queues, connections) = (args.queues.max(1), args.connections.max(1));

    let mut urls = Vec::new();
    for q in 0..queues {
        let mut c = endpoints[q % endpoints.len()]
            .client(ClientKind::Raw)
            .await?;
        urls.push(
            c.create_queue(&format!("{}-{q}", args.prefix), false)
                .await?,
        );
    }
    let urls = Arc::new(urls);
    println!(
        "{} entry node(s), {queues} queues, {connections} connections, {} messages",
        endpoints.len(),
        args.messages
    );

    // Send: each connection its share, spread over the queues.
    let cpu0: Vec<f64> = counted.iter().map(|c| cpu_seconds(&c.pids)).collect();
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..connections {
        let share = args.messages / connections as u64
            + u64::from((c as u64) < args.messages % connections as u64);
        let endpoint = endpoints[c % endpoints.len()].clone();
        let urls = urls.clone();
        tasks.spawn(async move {
            let mut client = endpoint.client(ClientKind::Raw).await?;
            let mut ns = Vec::with_capacity(share as usize);
            let entry = Entry {
                body: format!("scale message from connection {c}"),
                group: None,
                dedup: None,
            };
            for i in 0..share as usize {
                let url = &urls[(c + i * connections) % urls.len()];
                let t = Instant::now();
                client.send(url, &entry).await?;
                ns.push(t.elapsed().as_nanos() as u64);
            }
            Ok::<_, BoxError>(ns)
        });
    }
    let mut sends = Vec::new();
    while let Some(done) = tasks.join_next().await {
        sends.extend(done??);
    }
    let took = started.elapsed().as_secs_f64();
    report("send", args.messages, took, &counted, &cpu0);
    println!("  send latency: {}", percentiles(sends));

    // Receive and delete until every message is gone.
    let cpu0: Vec<f64> = counted.iter().map(|c| cpu_seconds(&c.pids)).collect();
    let left = Arc::new(AtomicU64::new(args.messages));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..connections {
        let endpoint = endpoints[c % endpoints.len()].clone();
        let (urls, left) = (urls.clone(), left.clone());
        tasks.spawn(async move {
            let mut client = endpoint.client(ClientKind::Raw).await?;
            let (mut rx, mut del) = (Vec::new(), Vec::new());
            let mut i = 0usize;
            let mut empty_in_a_row = 0usize;
            while left.load(Ordering::Relaxed) > 0 {
                let url = &urls[(c + i * connections) % urls.len()];
                i += 1;
                let t = Instant::now();
                let msgs = client.receive(url, 10, 0).await?;
                rx.push(t.elapsed().as_nanos() as u64);
                if msgs.is_empty() {
                    // Every queue of this connection empty: the others
                    // hold what is left.
                    empty_in_a_row += 1;
                    if empty_in_a_row > urls.len() {
                        break;
                    }
                    continue;
                }
                empty_in_a_row = 0;
                let t = Instant::now();
                client.delete_batch(url, &msgs).await?;
                del.push(t.elapsed().as_nanos() as u64);
                left.fetch_sub(msgs.len() as u64, Ordering::Relaxed);
            }
            Ok::<_, BoxError>((rx, del))
        });
    }
    let (mut receives, mut deletes) = (Vec::new(), Vec::new());
    while let Some(done) = tasks.join_next().await {
        let (rx, del) = done??;
        receives.extend(rx);
        deletes.extend(del);
    }
    let took = started.elapsed().as_secs_f64();
    let left = left.load(Ordering::Relaxed);
    if left > 0 {
        return Err(format!("{left} messages were never received").into());
    }
    report("receive+delete", args.messages, took, &counted, &cpu0);
    println!("  receive latency: {}", percentiles(receives));
    println!("  delete-batch latency: {}", percentiles(deletes));
    Ok(())
}

fn report(phase: &str, messages: u64, took: f64, counted: &[Counted], cpu0: &[f64]) {
    let mut line = format!(
        "{phase}: {messages} messages in {took:.2} s: {:.0} msgs/s",
        messages as f64 / took
    );
    for (c, before) in counted.iter().zip(cpu0) {
        let used = cpu_seconds(&c.pids) - before;
        line.push_str(&format!(
            "; {} CPU {:.2} s ({:.1} µs/message, {:.0} % of one core)",
            c.name,
            used,
            used * 1e6 / messages as f64,
            used * 100.0 / took
        ));
    }
    println!("{line}");
}
