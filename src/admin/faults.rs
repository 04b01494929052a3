//! `GET|POST|DELETE /_retsu/faults`: the seeded faults of `crate::faults`,
//! server-wide or for one queue.

use axum::response::Response;
use serde_json::{json, Map, Value};

use super::{bad_request, ok, Admin, AdminRequest};
use crate::engine::QueueKey;
use crate::faults::{FaultSettings, Scope};

/// Every active scope and what it injected so far.
pub fn show(admin: &Admin) -> Response {
    ok(view(admin))
}

fn view(admin: &Admin) -> Value {
    let faults = &admin.faults;
    let (server, queues) = faults.scopes();
    json!({
        "active": faults.is_active(),
        "server": server.map(|s| scope_json(&s)),
        "queues": queues.iter().map(|s| scope_json(s)).collect::<Vec<_>>(),
    })
}

fn scope_json(scope: &Scope) -> Value {
    let s = &scope.settings;
    let injected: Map<String, Value> = scope
        .injected()
        .into_iter()
        .map(|(kind, n)| (kind.name().to_string(), json!(n)))
        .collect();
    json!({
        "seed": s.seed,
        "profile": s.profile,
        "queue": s.queue.as_ref().map(|k| format!("{}/{}/{}", k.region, k.account, k.name)),
        "duplicate": s.duplicate,
        "reorder": s.reorder,
        "short_receive": s.short_receive,
        "throttle": s.throttle,
        "internal_error": s.internal_error,
        "latency_ms": [s.latency_ms.0, s.latency_ms.1],
        "injected": injected,
    })
}

/// `region/account/name`, a queue URL or ARN, or a bare name (default
/// region and account).
fn queue_key(admin: &Admin, value: &str) -> Option<QueueKey> {
    let parts: Vec<&str> = value.split('/').collect();
    if let [region, account, name] = parts.as_slice() {
        if [region, account, name].iter().all(|p| !p.is_empty()) {
            return Some(QueueKey {
                region: region.to_string(),
                account: account.to_string(),
                name: name.to_string(),
            });
        }
    }
    QueueKey::from_arn(value).or_else(|| QueueKey::from_url(value, &admin.context()))
}

fn rate(name: &str, value: &Value) -> Result<f64, String> {
    value
        .as_f64()
        .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
        .ok_or_else(|| format!("{name} must be a number between 0 and 1"))
}

/// The settings a POST body asks for: a profile (default: every fault
/// off) with explicit rates on top.
fn settings(admin: &Admin, body: &Map<String, Value>) -> Result<FaultSettings, String> {
    let seed = match body.get("seed") {
        None | Some(Value::Null) => rand::random::<u32>() as u64,
        Some(v) => v
            .as_u64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            .ok_or("seed must be a non-negative integer")?,
    };
    let mut s = match body.get("profile") {
        None | Some(Value::Null) => FaultSettings::none(seed),
        Some(Value::String(name)) => FaultSettings::profile(name, seed)
            .ok_or_else(|| format!("unknown profile {name:?}; known: aws-like, none"))?,
        Some(_) => return Err("profile must be a string".into()),
    };
    for (name, value) in body {
        match name.as_str() {
            "seed" | "profile" => {}
            "queue" => {
                s.queue = match value {
                    Value::Null => None,
                    Value::String(q) => Some(
                        queue_key(admin, q)
                            .ok_or_else(|| format!("queue {q:?}: expected region/account/name"))?,
                    ),
                    _ => return Err("queue must be \"region/account/name\" or null".into()),
                }
            }
            "duplicate" => s.duplicate = rate(name, value)?,
            "reorder" => s.reorder = rate(name, value)?,
            "short_receive" => s.short_receive = rate(name, value)?,
            "throttle" => s.throttle = rate(name, value)?,
            "internal_error" => s.internal_error = rate(name, value)?,
            "latency_ms" => {
                let range = match value {
                    Value::Array(a) if a.len() == 2 => (a[0].as_u64(), a[1].as_u64()),
                    v => (v.as_u64(), v.as_u64()),
                };
                let (Some(min), Some(max)) = range else {
                    return Err("latency_ms must be [min, max] in milliseconds".into());
                };
                s.latency_ms = (min, max);
            }
            other => {
                return Err(format!(
                    "unknown setting {other:?}; known: seed, profile, queue, duplicate, \
                     reorder, short_receive, throttle, internal_error, latency_ms"
                ))
            }
        }
    }
    s.validate()?;
    Ok(s)
}

/// Turns a scope on (replacing the one it names), its RNG from the seed.
pub fn set(admin: &Admin, request: &AdminRequest) -> Response {
    let body = match request.json_body() {
        Ok(body) => body,
        Err(message) => return bad_request(message),
    };
    match settings(admin, &body) {
        Ok(s) => {
            admin.faults.set(s);
            ok(view(admin))
        }
        Err(message) => bad_request(message),
    }
}

/// Turns every fault off, or one queue's (`?queue=region/account/name`).
pub fn clear(admin: &Admin, request: &AdminRequest) -> Response {
    let queue = match request.param("queue") {
        None => None,
        Some(q) => match queue_key(admin, q) {
            Some(key) => Some(key),
            None => return bad_request(format!("queue {q:?}: expected region/account/name")),
        },
    };
    admin.faults.clear(queue.as_ref());
    ok(view(admin))
}
