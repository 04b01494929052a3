//! `GET /_retsu/health`, `GET /_retsu/queues`, `GET /_retsu/queues/{r}/{a}/{n}`.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

use super::{clock, error, ok, Admin};
use crate::engine::{QueueKey, QueueSummary};

pub fn health(admin: &Admin) -> Response {
    ok(json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "uptime_seconds": admin.started.elapsed().as_secs(),
        "queues": admin.engine.queue_count(),
        "clock": clock::object(admin),
    }))
}

pub fn list(admin: &Admin) -> Response {
    let queues: Vec<Value> = admin
        .engine
        .queue_summaries(&admin.context())
        .iter()
        .map(summary)
        .collect();
    ok(json!({ "queues": queues }))
}

pub fn one(admin: &Admin, key: &QueueKey) -> Response {
    match admin.engine.queue_summary(&admin.context(), key) {
        Some(q) => ok(summary(&q)),
        None => error(
            StatusCode::NOT_FOUND,
            format!("no queue {}/{}/{}", key.region, key.account, key.name),
        ),
    }
}

fn summary(q: &QueueSummary) -> Value {
    json!({
        "region": q.key.region,
        "account": q.key.account,
        "name": q.key.name,
        "url": q.url,
        "arn": q.arn,
        "fifo": q.fifo,
        "counts": {
            "available": q.available,
            "in_flight": q.in_flight,
            "delayed": q.delayed,
        },
        "oldest_age_seconds": q.oldest_age_seconds,
        "dead_letter_queue": q.dead_letter_queue.as_ref().map(|d| json!({
            "arn": d.key.arn(),
            "region": d.key.region,
            "account": d.key.account,
            "name": d.key.name,
            "max_receive_count": d.max_receive_count,
        })),
        "dead_letter_sources": q.dead_letter_sources.iter().map(|k| json!({
            "arn": k.arn(),
            "region": k.region,
            "account": k.account,
            "name": k.name,
        })).collect::<Vec<_>>(),
        "attributes": q.attributes,
        "tags": q.tags,
        "created_ms": q.created_ms,
    })
}
