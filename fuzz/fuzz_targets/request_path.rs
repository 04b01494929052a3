//! The whole request path: the HTTP parts of a request (path, query
//! string, headers, body) go through protocol dispatch and decoding, the
//! engine (manual clock) and the encoder of the caller's protocol. Every
//! input must produce a response with a status AWS uses — never a panic, a
//! hang or a 5xx.
//!
//! One input is a short session of requests against a fresh engine, so the
//! stateful paths are reachable too: a receive that finds messages, a delete
//! or visibility change with a handle the engine really issued, a dead-letter
//! move. The engine starts with queues `q` (standard, redriving to `dlq`
//! after 2 receives, with two messages), `q.fifo` (one message) and `dlq`.
//!
//! Why the runtime is kept across inputs: building a tokio runtime per input
//! cost more than the request itself. Each input gets an engine in the
//! starting state, so inputs stay independent (a crash reproduces from its
//! input alone): built afresh, or the previous input's when that input never
//! reached it (set-up was over half the cost of a typical input).
#![no_main]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};
use libfuzzer_sys::fuzz_target;
use retsu::api::{CreateQueueRequest, Request, RequestContext, SendMessageRequest};
use retsu::clock::ManualClock;
use retsu::engine::{Engine, EngineConfig};
use retsu::protocol::{self, HttpRequest, Settings};

/// Separates the requests of one input.
const SEPARATOR: &[u8] = b"\n====\n";
/// Requests per input, at most (bounds the cost of one input).
const MAX_REQUESTS: usize = 8;
/// Replaced, in a request's query string and body, by the last receipt
/// handle any earlier response of the session carried.
const HANDLE: &str = "{handle}";

thread_local! {
    // Paused time: a long poll's real-time deadline passes at once.
    static RUNTIME: RefCell<tokio::runtime::Runtime> = RefCell::new(
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("runtime"),
    );
}

/// One request: an optional first line `+<seconds>` that advances the
/// clock before it, then fields separated by `\n`: path, query string,
/// header lines (`name:value`, separated by `\r`), body.
struct Step {
    advance_secs: u64,
    path: String,
    query: Option<String>,
    headers: HeaderMap,
    body: Vec<u8>,
}

fn step(mut data: &[u8]) -> Step {
    let mut advance_secs = 0;
    if let Some(rest) = data.strip_prefix(b"+") {
        let end = rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
        advance_secs = std::str::from_utf8(&rest[..end])
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0)
            .min(30 * 24 * 3600);
        data = rest.get(end + 1..).unwrap_or_default();
    }
    let mut parts = data.splitn(4, |b| *b == b'\n');
    let path = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let query = parts
        .next()
        .map(|q| String::from_utf8_lossy(q).into_owned())
        .filter(|q| !q.is_empty());
    let mut headers = HeaderMap::new();
    for line in parts.next().unwrap_or_default().split(|b| *b == b'\r') {
        let Some(colon) = line.iter().position(|b| *b == b':') else {
            continue;
        };
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(&line[..colon]),
            HeaderValue::from_bytes(&line[colon + 1..]),
        ) {
            headers.append(name, value);
        }
    }
    Step {
        advance_secs,
        path,
        query,
        headers,
        body: parts.next().unwrap_or_default().to_vec(),
    }
}

fn split(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while out.len() + 1 < MAX_REQUESTS {
        match rest.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
            Some(i) => {
                out.push(&rest[..i]);
                rest = &rest[i + SEPARATOR.len()..];
            }
            None => break,
        }
    }
    out.push(rest);
    out
}

/// The first receipt handle in a JSON or XML response body.
fn receipt_handle(body: &str) -> Option<String> {
    for (open, close) in [
        ("\"ReceiptHandle\":\"", "\""),
        ("<ReceiptHandle>", "</ReceiptHandle>"),
    ] {
        if let Some(start) = body.find(open).map(|i| i + open.len()) {
            let len = body[start..].find(close)?;
            return Some(body[start..start + len].to_string());
        }
    }
    None
}

fn replace_handle(bytes: &[u8], handle: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some(i) = rest
        .windows(HANDLE.len())
        .position(|w| w == HANDLE.as_bytes())
    {
        out.extend_from_slice(&rest[..i]);
        out.extend_from_slice(handle.as_bytes());
        rest = &rest[i + HANDLE.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// `RETSU_FUZZ_TRACE=1` prints every response (to check what a seed does).
fn trace() -> bool {
    static TRACE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("RETSU_FUZZ_TRACE").is_some())
}

fn context() -> RequestContext {
    RequestContext::new("us-east-1", "000000000000", "http://localhost:9324")
}

/// The starting state every input sees.
async fn setup(engine: &Engine) {
    let queues: [(&str, &[(&str, &str)], usize); 3] = [
        ("dlq", &[], 0),
        (
            "q",
            &[(
                "RedrivePolicy",
                r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":"2"}"#,
            )],
            2,
        ),
        (
            "q.fifo",
            &[("FifoQueue", "true"), ("ContentBasedDeduplication", "true")],
            1,
        ),
    ];
    for (name, attributes, messages) in queues {
        let request = CreateQueueRequest {
            queue_name: Some(name.into()),
            attributes: attributes
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            tags: Default::default(),
        };
        engine
            .handle(&context(), Request::CreateQueue(request))
            .await
            .expect("queue created");
        for i in 0..messages {
            let request = SendMessageRequest {
                queue_url: Some(format!("http://localhost:9324/000000000000/{name}")),
                message_body: Some(format!("message {i}")),
                message_group_id: name.ends_with(".fifo").then(|| "g".to_string()),
                ..Default::default()
            };
            engine
                .handle(&context(), Request::SendMessage(request))
                .await
                .expect("message sent");
        }
    }
}

/// A fresh engine in the starting state, with its clock.
struct World {
    clock: Arc<ManualClock>,
    engine: Arc<Engine>,
    /// SNS on the same engine: query requests may be SNS's.
    sns: Arc<retsu::sns::Sns>,
}

thread_local! {
    /// A starting-state engine that the last input never touched (every
    /// request failed to decode, no clock step): the next input may use it
    /// as is, which skips the set-up for the many inputs that never decode.
    static UNTOUCHED: RefCell<Option<World>> = const { RefCell::new(None) };
}

fn world(rt: &tokio::runtime::Runtime) -> World {
    if let Some(world) = UNTOUCHED.with(|u| u.borrow_mut().take()) {
        return world;
    }
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let engine = Engine::new(clock.clone(), EngineConfig::default());
    rt.block_on(setup(&engine));
    let sns = retsu::sns::Sns::new(engine.clone(), Arc::new(retsu::config::topics::Unsigned));
    World { clock, engine, sns }
}

fuzz_target!(|data: &[u8]| {
    let settings = Settings {
        default_region: "us-east-1".into(),
        account_id: "000000000000".into(),
        base_url: None,
        fallback_base_url: "http://localhost:9324".into(),
        scheme: "http",
    };
    RUNTIME.with(|rt| {
        let rt = rt.borrow();
        let World { clock, engine, sns } = world(&rt);
        let mut touched = false;
        rt.block_on(async {
            let mut handle = String::new();
            for part in split(data) {
                let step = step(part);
                if step.advance_secs > 0 {
                    clock.advance(Duration::from_secs(step.advance_secs));
                    touched = true;
                }
                let req = HttpRequest {
                    path: step.path,
                    query: step.query.map(|q| {
                        String::from_utf8_lossy(&replace_handle(q.as_bytes(), &handle)).into_owned()
                    }),
                    headers: step.headers,
                    body: Bytes::from(replace_handle(&step.body, &handle)),
                };
                let response = match protocol::decode(&req, &settings, "fuzz") {
                    Ok(protocol::Decoded::Sqs(call)) => {
                        touched = true;
                        let result = engine.handle(&call.context, call.request).await;
                        protocol::encode(call.protocol, &result, "fuzz")
                    }
                    Ok(protocol::Decoded::Sns(call)) => {
                        touched = true;
                        let result = sns.handle(&call.context, call.request).await;
                        protocol::sns::encode(&result, "fuzz")
                    }
                    Ok(protocol::Decoded::Sts(call)) => {
                        protocol::sts::caller_identity(&call.context.account_id, "fuzz")
                    }
                    Err(response) => response,
                };
                assert!(
                    [200, 400, 403, 404, 408].contains(&response.status),
                    "status {} for {req:?}: {}",
                    response.status,
                    response.body
                );
                if trace() {
                    eprintln!("{} {}", response.status, response.body);
                }
                if let Some(h) = receipt_handle(&response.body) {
                    handle = h;
                }
            }
        });
        if !touched {
            UNTOUCHED.with(|u| *u.borrow_mut() = Some(World { clock, engine, sns }));
        }
    });
});
