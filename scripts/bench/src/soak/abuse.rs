//! Abuse checks: what extreme but legal loads cost, each on a fresh server.
//!
//! - `longpolls`: N simultaneous 20-second long polls, each on its own
//!   connection: the resident memory they add, and that one send then
//!   wakes exactly one of them, promptly.
//! - `queues`: N queues: ListQueues (first page, a prefix, every page) and
//!   GetQueueUrl stay fast.
//! - `deep`: one queue holding N 1 KiB messages: memory per message, and
//!   receive and delete latency at that depth.
//! - `inflight`: a standard queue answers OverLimit once 120,000 messages
//!   are in flight (the engine's MAX_IN_FLIGHT, AWS's quota), exactly at
//!   that number, and receives again once one is deleted.
//!
//! The full sizes (10,000 / 100,000 / 1,000,000) are the documented opt-in
//! run; `--small` is the bounded version CI runs. Each check fails on a
//! wrong answer or a bound far past what "fast" means here (the bounds are
//! loose on purpose: the machine is shared, the figures are what counts).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::client::RawConn;
use crate::proc::{status_kib, Launcher, ServerKind};
use crate::{BoxResult, Rng};

/// The engine's in-flight limit for standard queues (src/engine/messages.rs
/// MAX_IN_FLIGHT), which is AWS's documented quota.
const MAX_IN_FLIGHT: usize = 120_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Check {
    Longpolls,
    Queues,
    Deep,
    Inflight,
}

#[derive(Debug, Clone, clap::Args)]
pub struct Opts {
    /// The bounded CI sizes: 1,000 long polls, 5,000 queues, 50,000
    /// messages (the in-flight check always needs 120,000).
    #[arg(long)]
    small: bool,

    /// Checks to run (comma-separated) [default: all].
    #[arg(long, value_enum, value_delimiter = ',')]
    only: Vec<Check>,

    /// Simultaneous long polls [default: 10,000; 1,000 with --small].
    #[arg(long)]
    longpolls: Option<usize>,

    /// Queues [default: 100,000; 5,000 with --small].
    #[arg(long)]
    queues: Option<usize>,

    /// Messages in the deep queue [default: 1,000,000; 50,000 with --small].
    #[arg(long)]
    messages: Option<usize>,

    /// Where to write the JSON report [default: target/soak/abuse.json].
    #[arg(long)]
    out: Option<PathBuf>,
}

pub async fn run(launcher: &Launcher, opts: Opts) -> BoxResult<bool> {
    let checks = if opts.only.is_empty() {
        vec![
            Check::Longpolls,
            Check::Queues,
            Check::Deep,
            Check::Inflight,
        ]
    } else {
        opts.only.clone()
    };
    let pick = |given: Option<usize>, full: usize, small: usize| {
        given.unwrap_or(if opts.small { small } else { full })
    };
    let mut results = serde_json::Map::new();
    let mut passed = true;
    for check in checks {
        let server = launcher.start(ServerKind::Retsu)?;
        let (addr, pid) = (server.addr, server.pid());
        let started = Instant::now();
        let result = match check {
            Check::Longpolls => longpolls(addr, pid, pick(opts.longpolls, 10_000, 1_000)).await,
            Check::Queues => queues(addr, pid, pick(opts.queues, 100_000, 5_000)).await,
            Check::Deep => deep(addr, pid, pick(opts.messages, 1_000_000, 50_000)).await,
            Check::Inflight => inflight(addr).await,
        };
        drop(server);
        let name = format!("{check:?}").to_lowercase();
        let mut value = match result {
            Ok((ok, figures)) => {
                passed &= ok;
                eprintln!("{name}: {} {figures}", if ok { "PASSED" } else { "FAILED" });
                json!({ "passed": ok, "figures": figures })
            }
            Err(e) => {
                passed = false;
                eprintln!("{name}: FAILED: {e}");
                json!({ "passed": false, "error": e.to_string() })
            }
        };
        value["seconds"] = json!(started.elapsed().as_secs_f64());
        results.insert(name, value);
    }
    let report = Value::Object(results);
    let out = opts
        .out
        .unwrap_or_else(|| crate::target_dir().join("soak/abuse.json"));
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&out, serde_json::to_vec_pretty(&report)?)?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    eprintln!("report: {}", out.display());
    Ok(passed)
}

type Outcome = BoxResult<(bool, Value)>;

async fn create_queue(c: &mut RawConn, name: &str, attrs: Value) -> BoxResult<String> {
    let out: Value = c
        .call(
            "CreateQueue",
            &json!({ "QueueName": name, "Attributes": attrs }),
            0,
        )
        .await?;
    Ok(out["QueueUrl"]
        .as_str()
        .ok_or("CreateQueue: no QueueUrl")?
        .to_string())
}

fn rss(pid: u32) -> BoxResult<u64> {
    status_kib(pid, "VmRSS")
}

/// Milliseconds at a quantile of sorted durations.
fn quantile_ms(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    (sorted[i].as_secs_f64() * 1e6).round() / 1e3
}

async fn longpolls(addr: SocketAddr, pid: u32, n: usize) -> Outcome {
    if crate::fd_limit() < n as u64 + 100 {
        return Err(format!(
            "{n} long polls need {} file descriptors; the limit is {} (raise `ulimit -n`)",
            n + 100,
            crate::fd_limit()
        )
        .into());
    }
    let mut c = RawConn::connect(addr).await?;
    let url = create_queue(&mut c, "longpolls", json!({})).await?;
    // Let the server settle after start before the baseline.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss(pid)?;
    let body =
        json!({ "QueueUrl": url, "MaxNumberOfMessages": 1, "WaitTimeSeconds": 20 }).to_string();
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-amz-json-1.0\r\n\
         X-Amz-Target: AmazonSQS.ReceiveMessage\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let sent = Arc::new(AtomicUsize::new(0));
    // (when answered, whether the answer carried a message)
    let (tx, mut rx) = mpsc::unbounded_channel::<BoxResult<(Instant, bool)>>();
    let mut tasks = JoinSet::new();
    let opened = Instant::now();
    for _ in 0..n {
        let (request, sent, tx) = (request.clone(), sent.clone(), tx.clone());
        tasks.spawn(async move {
            let result = async {
                let mut s = TcpStream::connect(addr).await?;
                s.write_all(request.as_bytes()).await?;
                sent.fetch_add(1, Ordering::Relaxed);
                let mut response = Vec::new();
                s.read_to_end(&mut response).await?;
                let at = Instant::now();
                if !response.starts_with(b"HTTP/1.1 200") {
                    return Err(format!(
                        "long poll answered {}",
                        String::from_utf8_lossy(&response[..response.len().min(300)])
                    )
                    .into());
                }
                let got = response.windows(13).any(|w| w == b"ReceiptHandle");
                Ok((at, got))
            }
            .await;
            let _ = tx.send(result);
        });
        // Open connections a few hundred at a time (the listener's backlog).
        if tasks.len() % 256 == 0 {
            tokio::task::yield_now().await;
        }
    }
    while sent.load(Ordering::Relaxed) < n {
        if opened.elapsed() > Duration::from_secs(10) {
            return Err(format!(
                "only {} of {n} long polls sent in 10 s",
                sent.load(Ordering::Relaxed)
            )
            .into());
        }
        if let Ok(Some(early)) = tokio::time::timeout(Duration::from_millis(10), rx.recv()).await {
            return Err(format!("a long poll was answered before any send: {early:?}").into());
        }
    }
    let all_sent = opened.elapsed();
    // Give the server a moment to read and park every request.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let during = rss(pid)?;
    if let Ok(early) = rx.try_recv() {
        return Err(format!("a long poll was answered before any send: {early:?}").into());
    }
    let t0 = Instant::now();
    let _: Value = c
        .call(
            "SendMessage",
            &json!({ "QueueUrl": url, "MessageBody": "wake one" }),
            0,
        )
        .await?;
    let send_ms = t0.elapsed().as_secs_f64() * 1e3;
    let first = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .map_err(|_| "no long poll answered within 5 s of the send")?
        .ok_or("channel closed")??;
    let wake_ms = (first.0 - t0).as_secs_f64() * 1e3;
    // Any other answer in the next 500 ms would be a second wake.
    let mut others = 0;
    let mut others_with_message = 0;
    let settle = Instant::now() + Duration::from_millis(500);
    while let Ok(Some(r)) = tokio::time::timeout_at(settle.into(), rx.recv()).await {
        others += 1;
        if matches!(r, Ok((_, true))) {
            others_with_message += 1;
        }
    }
    let opened_s = opened.elapsed().as_secs_f64();
    tasks.abort_all();
    let per_poll = (during.saturating_sub(before) as f64 * 1024.0 / n as f64).round();
    let ok = first.1 && others == 0 && wake_ms < 100.0 && opened_s < 19.0;
    Ok((
        ok,
        json!({
            "long polls": n,
            "all sent after ms": all_sent.as_millis(),
            "rss before KiB": before,
            "rss with all waiting KiB": during,
            "bytes per waiting long poll": per_poll,
            "SendMessage ms": (send_ms * 1000.0).round() / 1000.0,
            "first answer after the send ms": (wake_ms * 1000.0).round() / 1000.0,
            "first answer carried the message": first.1,
            "other answers within 500 ms": others,
            "other answers with a message": others_with_message,
        }),
    ))
}

/// Runs `f` on `conns` kept-alive connections over the items `0..n`.
async fn fan_out<F, Fut>(addr: SocketAddr, conns: usize, n: usize, f: F) -> BoxResult<()>
where
    F: Fn(RawConn, std::ops::Range<usize>) -> Fut,
    Fut: std::future::Future<Output = BoxResult<()>> + Send + 'static,
{
    let mut set = JoinSet::new();
    let per = n.div_ceil(conns);
    for k in 0..conns {
        let range = k * per..((k + 1) * per).min(n);
        if range.is_empty() {
            continue;
        }
        set.spawn(f(RawConn::connect(addr).await?, range));
    }
    while let Some(r) = set.join_next().await {
        r??;
    }
    Ok(())
}

async fn queues(addr: SocketAddr, pid: u32, n: usize) -> Outcome {
    let before = rss(pid)?;
    let t0 = Instant::now();
    fan_out(addr, 16, n, |mut c, range| async move {
        for i in range {
            create_queue(&mut c, &format!("q-{i:06}"), json!({})).await?;
        }
        Ok(())
    })
    .await?;
    let create_s = t0.elapsed().as_secs_f64();
    let after = rss(pid)?;
    let mut c = RawConn::connect(addr).await?;

    // The first page (AWS answers at most 1,000 without MaxResults).
    let mut first_page = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let out: Value = c.call("ListQueues", &json!({}), 0).await?;
        first_page.push(t.elapsed());
        let len = out["QueueUrls"].as_array().map_or(0, Vec::len);
        if len != n.min(1000) {
            return Err(format!("ListQueues returned {len} URLs, not {}", n.min(1000)).into());
        }
    }
    // A prefix naming the last ten queues.
    let prefix = format!("q-{:05}", (n - 1) / 10);
    let expect = n - (n - 1) / 10 * 10;
    let mut by_prefix = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let out: Value = c
            .call("ListQueues", &json!({ "QueueNamePrefix": prefix }), 0)
            .await?;
        by_prefix.push(t.elapsed());
        let len = out["QueueUrls"].as_array().map_or(0, Vec::len);
        if len != expect {
            return Err(format!("ListQueues {prefix}: {len} URLs, not {expect}").into());
        }
    }
    // Every page, 1,000 at a time.
    let t = Instant::now();
    let (mut listed, mut pages, mut token): (usize, usize, Option<String>) = (0, 0, None);
    loop {
        let mut req = json!({ "MaxResults": 1000 });
        if let Some(tok) = &token {
            req["NextToken"] = json!(tok);
        }
        let out: Value = c.call("ListQueues", &req, 0).await?;
        listed += out["QueueUrls"].as_array().map_or(0, Vec::len);
        pages += 1;
        token = out["NextToken"].as_str().map(str::to_string);
        if token.is_none() || pages > n / 1000 + 2 {
            break;
        }
    }
    let all_pages = t.elapsed();
    if listed != n {
        return Err(format!("paging ListQueues listed {listed} queues, not {n}").into());
    }
    // GetQueueUrl of random names.
    let mut rng = Rng::new(7);
    let mut get_url = Vec::new();
    for _ in 0..2000 {
        let name = format!("q-{:06}", rng.below(n as u64));
        let t = Instant::now();
        let out: Value = c
            .call("GetQueueUrl", &json!({ "QueueName": name }), 0)
            .await?;
        get_url.push(t.elapsed());
        if !out["QueueUrl"].as_str().is_some_and(|u| u.ends_with(&name)) {
            return Err(format!("GetQueueUrl {name}: {out}").into());
        }
    }
    for v in [&mut first_page, &mut by_prefix, &mut get_url] {
        v.sort();
    }
    let ok = quantile_ms(&first_page, 0.5) < 100.0
        && quantile_ms(&by_prefix, 0.5) < 100.0
        && quantile_ms(&get_url, 0.99) < 20.0;
    Ok((
        ok,
        json!({
            "queues": n,
            "created in s": (create_s * 100.0).round() / 100.0,
            "bytes per queue": ((after.saturating_sub(before)) as f64 * 1024.0 / n as f64).round(),
            "ListQueues first 1000 p50 ms": quantile_ms(&first_page, 0.5),
            "ListQueues first 1000 max ms": quantile_ms(&first_page, 1.0),
            "ListQueues by prefix p50 ms": quantile_ms(&by_prefix, 0.5),
            "ListQueues every page": { "pages": pages, "total ms": all_pages.as_millis() },
            "GetQueueUrl p50 ms": quantile_ms(&get_url, 0.5),
            "GetQueueUrl p99 ms": quantile_ms(&get_url, 0.99),
            "GetQueueUrl max ms": quantile_ms(&get_url, 1.0),
        }),
    ))
}

/// Sends `n` messages of 1 KiB to `url` over 16 connections, in batches.
async fn fill(addr: SocketAddr, url: &str, n: usize) -> BoxResult<()> {
    let url = Arc::new(url.to_string());
    fan_out(addr, 16, n.div_ceil(10), move |mut c, range| {
        let url = url.clone();
        async move {
            let body = "m".repeat(1024);
            for b in range {
                let count = (n - b * 10).min(10);
                let entries: Vec<Value> = (0..count)
                    .map(|i| json!({ "Id": i.to_string(), "MessageBody": body }))
                    .collect();
                let out: Value = c
                    .call(
                        "SendMessageBatch",
                        &json!({ "QueueUrl": *url, "Entries": entries }),
                        0,
                    )
                    .await?;
                if out["Failed"].as_array().is_some_and(|f| !f.is_empty()) {
                    return Err(format!("SendMessageBatch: {out}").into());
                }
            }
            Ok(())
        }
    })
    .await
}

async fn receive(c: &mut RawConn, url: &str, max: usize) -> BoxResult<Vec<String>> {
    let out: Value = c
        .call(
            "ReceiveMessage",
            &json!({ "QueueUrl": url, "MaxNumberOfMessages": max, "WaitTimeSeconds": 0 }),
            0,
        )
        .await?;
    Ok(out["Messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["ReceiptHandle"].as_str().map(str::to_string))
        .collect())
}

async fn delete_batch(c: &mut RawConn, url: &str, handles: &[String]) -> BoxResult<()> {
    let entries: Vec<Value> = handles
        .iter()
        .enumerate()
        .map(|(i, h)| json!({ "Id": i.to_string(), "ReceiptHandle": h }))
        .collect();
    let out: Value = c
        .call(
            "DeleteMessageBatch",
            &json!({ "QueueUrl": url, "Entries": entries }),
            0,
        )
        .await?;
    if out["Failed"].as_array().is_some_and(|f| !f.is_empty()) {
        return Err(format!("DeleteMessageBatch: {out}").into());
    }
    Ok(())
}

async fn stored(c: &mut RawConn, url: &str) -> BoxResult<(u64, u64)> {
    let out: Value = c
        .call(
            "GetQueueAttributes",
            &json!({ "QueueUrl": url, "AttributeNames": [
                "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"] }),
            0,
        )
        .await?;
    let get = |k: &str| -> u64 {
        out["Attributes"][k]
            .as_str()
            .and_then(|v| v.parse().ok())
            .unwrap_or(u64::MAX)
    };
    Ok((
        get("ApproximateNumberOfMessages"),
        get("ApproximateNumberOfMessagesNotVisible"),
    ))
}

async fn deep(addr: SocketAddr, pid: u32, n: usize) -> Outcome {
    let mut c = RawConn::connect(addr).await?;
    let url = create_queue(&mut c, "deep", json!({ "VisibilityTimeout": "600" })).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss(pid)?;
    let t0 = Instant::now();
    fill(addr, &url, n).await?;
    let fill_s = t0.elapsed().as_secs_f64();
    let after = rss(pid)?;
    let (visible, _) = stored(&mut c, &url).await?;
    if visible != n as u64 {
        return Err(format!("{visible} messages visible after sending {n}").into());
    }
    let (mut receives, mut deletes) = (Vec::new(), Vec::new());
    for _ in 0..1000 {
        let t = Instant::now();
        let handles = receive(&mut c, &url, 10).await?;
        receives.push(t.elapsed());
        if handles.len() != 10 {
            return Err(format!("a receive from {n} messages returned {}", handles.len()).into());
        }
        let t = Instant::now();
        delete_batch(&mut c, &url, &handles).await?;
        deletes.push(t.elapsed());
    }
    let (visible, in_flight) = stored(&mut c, &url).await?;
    if visible != n as u64 - 10_000 || in_flight != 0 {
        return Err(format!(
            "after 10,000 deletes: {visible} visible, {in_flight} in flight (expected {} and 0)",
            n - 10_000
        )
        .into());
    }
    receives.sort();
    deletes.sort();
    let ok = quantile_ms(&receives, 0.99) < 20.0 && quantile_ms(&deletes, 0.99) < 20.0;
    Ok((
        ok,
        json!({
            "messages": n,
            "body bytes": 1024,
            "sent in s": (fill_s * 100.0).round() / 100.0,
            "rss before KiB": before,
            "rss full KiB": after,
            "bytes per stored message": ((after.saturating_sub(before)) as f64 * 1024.0 / n as f64).round(),
            "ReceiveMessage (10) p50 ms": quantile_ms(&receives, 0.5),
            "ReceiveMessage (10) p99 ms": quantile_ms(&receives, 0.99),
            "DeleteMessageBatch (10) p50 ms": quantile_ms(&deletes, 0.5),
            "DeleteMessageBatch (10) p99 ms": quantile_ms(&deletes, 0.99),
        }),
    ))
}

async fn inflight(addr: SocketAddr) -> Outcome {
    let mut c = RawConn::connect(addr).await?;
    // Twelve hours: nothing comes back into view during the check.
    let url = create_queue(&mut c, "inflight", json!({ "VisibilityTimeout": "43200" })).await?;
    let extra = 50;
    fill(addr, &url, MAX_IN_FLIGHT + extra).await?;
    // Receive until the server refuses; count what it handed out.
    let received = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let kept: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
    let url_arc = Arc::new(url.clone());
    let t0 = Instant::now();
    {
        let (received, refused, url) = (received.clone(), refused.clone(), url_arc.clone());
        let kept = kept.clone();
        fan_out(addr, 8, 8, move |mut c, _| {
            let (received, refused, url) = (received.clone(), refused.clone(), url.clone());
            let kept = kept.clone();
            async move {
                loop {
                    match receive(&mut c, &url, 10).await {
                        Ok(h) if h.is_empty() => {
                            return Err("a receive returned nothing below the limit".into())
                        }
                        Ok(h) => {
                            received.fetch_add(h.len(), Ordering::Relaxed);
                            *kept.lock().unwrap() = h.into_iter().next();
                        }
                        Err(e) if e.to_string().contains("OverLimit") => {
                            refused.fetch_add(1, Ordering::Relaxed);
                            return Ok(());
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        })
        .await?;
    }
    let receive_s = t0.elapsed().as_secs_f64();
    let received = received.load(Ordering::Relaxed);
    let (visible, in_flight) = stored(&mut c, &url).await?;
    // One more receive is refused with AWS's error.
    let refusal = match receive(&mut c, &url, 1).await {
        Ok(h) => format!("answered {} messages", h.len()),
        Err(e) => e.to_string(),
    };
    let over_limit = refusal.contains("HTTP 403") && refusal.contains("OverLimit");
    // Free one: exactly one more is handed out, then the limit holds again.
    let kept = kept.lock().unwrap().clone().ok_or("no handle kept")?;
    delete_batch(&mut c, &url, &[kept]).await?;
    let after_delete = receive(&mut c, &url, 10).await?.len();
    let refused_again = matches!(receive(&mut c, &url, 1).await,
        Err(e) if e.to_string().contains("OverLimit"));
    Ok((
        received == MAX_IN_FLIGHT
            && in_flight == MAX_IN_FLIGHT as u64
            && visible == extra as u64
            && over_limit
            && after_delete == 1
            && refused_again,
        json!({
            "limit": MAX_IN_FLIGHT,
            "messages sent": MAX_IN_FLIGHT + extra,
            "received before the refusal": received,
            "ApproximateNumberOfMessagesNotVisible": in_flight,
            "ApproximateNumberOfMessages": visible,
            "receives refused": refused.load(Ordering::Relaxed),
            "next receive": refusal.chars().take(200).collect::<String>(),
            "receive phase s": (receive_s * 100.0).round() / 100.0,
            "after deleting one, a receive of 10 got": after_delete,
            "then refused again": refused_again,
        }),
    ))
}
