//! The whole request path: method-independent HTTP parts (path, query
//! string, headers, body) go through protocol dispatch and decoding, the
//! engine (manual clock, queues `q` and `q.fifo` present) and the encoder
//! of the caller's protocol. Every input must produce a response with a
//! status AWS uses — never a panic, a hang or a 5xx.
#![no_main]

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};
use libfuzzer_sys::fuzz_target;
use retsu::api::{CreateQueueRequest, Request};
use retsu::clock::ManualClock;
use retsu::engine::{Engine, EngineConfig};
use retsu::protocol::{self, HttpRequest, Settings};

/// Input layout, fields separated by `\n`:
/// path, query string, header lines (`name:value`, separated by `\r`), body.
fn request(data: &[u8]) -> HttpRequest {
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
    let body = Bytes::copy_from_slice(parts.next().unwrap_or_default());
    HttpRequest {
        path,
        query,
        headers,
        body,
    }
}

fuzz_target!(|data: &[u8]| {
    // Paused time: a long poll's real-time deadline passes at once.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("runtime");
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let engine = Engine::new(clock, EngineConfig::default());
    let settings = Settings {
        default_region: "us-east-1".into(),
        account_id: "000000000000".into(),
        base_url: None,
        fallback_base_url: "http://localhost:9324".into(),
    };
    let req = request(data);
    rt.block_on(async {
        for (name, fifo) in [("q", false), ("q.fifo", true)] {
            let mut attributes = std::collections::BTreeMap::new();
            if fifo {
                attributes.insert("FifoQueue".to_string(), "true".to_string());
            }
            let ctx = retsu::api::RequestContext {
                region: "us-east-1".into(),
                account_id: "000000000000".into(),
                base_url: "http://localhost:9324".into(),
                trace_header: None,
                query_protocol: false,
            };
            engine
                .handle(
                    &ctx,
                    Request::CreateQueue(CreateQueueRequest {
                        queue_name: Some(name.into()),
                        attributes,
                        tags: Default::default(),
                    }),
                )
                .await
                .expect("queue created");
        }
        let response = match protocol::decode(&req, &settings, "fuzz") {
            Ok(call) => {
                let result = engine.handle(&call.context, call.request).await;
                protocol::encode(call.protocol, &result, "fuzz")
            }
            Err(response) => response,
        };
        assert!(
            [200, 400, 403, 404, 408].contains(&response.status),
            "status {} for {req:?}: {}",
            response.status,
            response.body
        );
    });
});
