//! `lambda`: messages per second through a Lambda event source mapping to
//! a function that returns at once, against the same function fed by a
//! plain ReceiveMessage / DeleteMessageBatch loop, at batch sizes 10 and
//! 100.
//!
//! The function is a small HTTP server in this process speaking the
//! Invoke API (`POST /2015-03-31/functions/function/invocations`, answered
//! 200 `{}`), so no emulator or runtime is measured: what is left is
//! Retsu's poller (receive, batch, build the records, invoke, delete)
//! against a client doing the same by hand. The function counts each
//! record's tag; every message must arrive exactly once and the queue
//! must end empty.
//!
//! The mapping's function is registered through the admin API
//! (`PUT /_retsu/functions/NAME`) with the same concurrency as the loop's
//! consumers, and the mapping is made with Lambda's
//! CreateEventSourceMapping; the clock runs from that call until the
//! queue is empty.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::net::TcpListener;

use crate::client::{ClientKind, Msg, RawConn};
use crate::report::Measurement;
use crate::scenarios::{self, Run, Seen};
use crate::BoxResult;

/// The invocations the mapping and the loop run at once: the poller's
/// default worker count, and the function's concurrency.
pub const CONCURRENCY: usize = 5;
const INVOKE_PATH: &str = "/2015-03-31/functions/function/invocations";
const FUNCTION: &str = "bench-returns-at-once";

/// How the function is fed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed {
    Mapping,
    Loop,
}

pub fn variant(feed: Feed, batch: u32) -> String {
    match feed {
        Feed::Mapping => format!("mapping, batch {batch}"),
        Feed::Loop => format!("receive/delete loop, batch {batch}"),
    }
}

/// The function: counts records, marks their tags, answers `{}`.
struct Function {
    addr: SocketAddr,
    records: Arc<AtomicU64>,
    invocations: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Function {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn function(seen: Arc<Seen>, verify: bool) -> BoxResult<Function> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let records = Arc::new(AtomicU64::new(0));
    let invocations = Arc::new(AtomicU64::new(0));
    let (r, i) = (records.clone(), invocations.clone());
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let _ = stream.set_nodelay(true);
            let (seen, r, i) = (seen.clone(), r.clone(), i.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                    let (seen, r, i) = (seen.clone(), r.clone(), i.clone());
                    async move {
                        let ok = req.uri().path() == INVOKE_PATH;
                        let body = req.into_body().collect().await.map(|b| b.to_bytes());
                        let event: Value = body
                            .ok()
                            .and_then(|b| serde_json::from_slice(&b).ok())
                            .unwrap_or(Value::Null);
                        let mut status = if ok { 200 } else { 404 };
                        for record in event["Records"].as_array().into_iter().flatten() {
                            r.fetch_add(1, Ordering::Relaxed);
                            let tag = record["body"]
                                .as_str()
                                .and_then(|b| b.split('.').next())
                                .and_then(|t| t.parse::<u64>().ok());
                            if verify && tag.is_none_or(|t| seen.mark(t).is_err()) {
                                // A record twice or never sent: the
                                // scenario fails on the count below.
                                status = 500;
                            }
                        }
                        i.fetch_add(1, Ordering::Relaxed);
                        let mut answer = Response::new(Full::new(Bytes::from_static(b"{}")));
                        *answer.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
                        Ok::<_, Infallible>(answer)
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(Function {
        addr,
        records,
        invocations,
        task,
    })
}

/// One variant: `n` messages pre-filled, then fed to the function.
pub async fn lambda(run: &Run<'_>, feed: Feed, batch: u32, n: u64) -> BoxResult<Measurement> {
    let url = scenarios::create_queue(run, "lambda", false).await?;
    scenarios::fill(run.endpoint, &url, 0, n, 100, run.deadline).await?;
    let seen = Arc::new(Seen::new(n));
    let f = function(seen.clone(), run.server != crate::proc::ServerKind::Null).await?;
    let function_url = format!("http://{}", f.addr);
    let server_cpu = run
        .pid
        .and_then(|p| crate::proc::cpu_seconds(&p.to_string()));
    let client_cpu = crate::proc::cpu_seconds("self");
    let mut setup = RawConn::connect(run.endpoint.addr).await?;
    let start = Instant::now();
    let mut requests = 0;
    match feed {
        Feed::Mapping => {
            let queue = url.rsplit('/').next().unwrap_or_default();
            setup
                .rest(
                    hyper::Method::PUT,
                    &format!("/_retsu/functions/{FUNCTION}"),
                    json!({ "url": function_url, "concurrency": CONCURRENCY, "timeout": 30 }),
                    "PUT /_retsu/functions",
                )
                .await?;
            let mut mapping = json!({
                "FunctionName": FUNCTION,
                "EventSourceArn": format!("arn:aws:sqs:us-east-1:000000000000:{queue}"),
                "BatchSize": batch,
                "ScalingConfig": { "MaximumConcurrency": CONCURRENCY },
            });
            if batch > 10 {
                // Lambda's rule: more than 10 needs a batching window.
                mapping["MaximumBatchingWindowInSeconds"] = json!(1);
            }
            let created = setup
                .rest(
                    hyper::Method::POST,
                    "/2015-03-31/event-source-mappings/",
                    mapping,
                    "CreateEventSourceMapping",
                )
                .await?;
            let uuid = serde_json::from_slice::<Value>(&created)?["UUID"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let mut sqs = run.endpoint.client(ClientKind::Raw).await?;
            loop {
                scenarios::check_deadline(run.deadline)?;
                if f.records.load(Ordering::Relaxed) >= n && sqs.stored_messages(&url).await? == 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            setup
                .rest(
                    hyper::Method::DELETE,
                    &format!("/2015-03-31/event-source-mappings/{uuid}"),
                    Value::Null,
                    "DeleteEventSourceMapping",
                )
                .await?;
        }
        Feed::Loop => {
            let remaining = Arc::new(AtomicU64::new(n));
            let mut set = tokio::task::JoinSet::new();
            for _ in 0..CONCURRENCY {
                let (endpoint, url, remaining) =
                    (run.endpoint.clone(), url.clone(), remaining.clone());
                let (deadline, addr) = (run.deadline, f.addr);
                set.spawn(async move {
                    let mut sqs = endpoint.client(ClientKind::Raw).await?;
                    let mut invoke = RawConn::connect(addr).await?;
                    let mut requests = 0u64;
                    while remaining.load(Ordering::Relaxed) > 0 {
                        scenarios::check_deadline(deadline)?;
                        let mut msgs: Vec<Msg> = Vec::new();
                        while msgs.len() < batch as usize {
                            let want = (batch as usize - msgs.len()).min(10) as u32;
                            let more = sqs.receive(&url, want, 0).await?;
                            requests += 1;
                            if more.is_empty() {
                                break;
                            }
                            msgs.extend(more);
                        }
                        if msgs.is_empty() {
                            tokio::time::sleep(Duration::from_millis(1)).await;
                            continue;
                        }
                        let records: Vec<Value> = msgs
                            .iter()
                            .map(|m| {
                                json!({
                                    "receiptHandle": m.handle,
                                    "body": m.body,
                                    "eventSource": "aws:sqs",
                                })
                            })
                            .collect();
                        invoke
                            .rest(
                                hyper::Method::POST,
                                INVOKE_PATH,
                                json!({ "Records": records }),
                                "Invoke",
                            )
                            .await?;
                        for chunk in msgs.chunks(10) {
                            sqs.delete_batch(&url, chunk).await?;
                            requests += 1;
                        }
                        remaining.fetch_sub(msgs.len() as u64, Ordering::Relaxed);
                    }
                    Ok::<_, crate::BoxError>(requests)
                });
            }
            while let Some(r) = set.join_next().await {
                requests += r??;
            }
        }
    }
    let elapsed = start.elapsed();
    let received = f.records.load(Ordering::Relaxed);
    if received != n || seen.missing() != 0 {
        return Err(format!(
            "the function got {received} records for {n} messages ({} never)",
            seen.missing()
        )
        .into());
    }
    scenarios::expect_stored(run, &url, 0).await?;
    scenarios::delete_queue(run, &url).await?;
    let mut m = run.measurement("lambda", variant(feed, batch));
    m.seconds = elapsed.as_secs_f64();
    m.messages = n;
    m.requests = requests + f.invocations.load(Ordering::Relaxed);
    m.msgs_per_s = n as f64 / m.seconds;
    m.server_cpu_s = server_cpu
        .and_then(|before| Some(crate::proc::cpu_seconds(&run.pid?.to_string())? - before));
    m.client_cpu_s = client_cpu.and_then(|before| Some(crate::proc::cpu_seconds("self")? - before));
    Ok(m)
}
