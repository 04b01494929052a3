//! `GET /_retsu/queues/{r}/{a}/{n}/messages?state=…&limit=…`: messages as
//! they are, without changing any state, receive count or visibility.

use axum::http::StatusCode;
use axum::response::Response;
use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::{bad_request, error, ok, Admin, AdminRequest};
use crate::engine::{PeekStates, PeekedMessage, QueueKey};

const DEFAULT_LIMIT: usize = 100;
const MAX_LIMIT: usize = 10_000;

pub fn list(admin: &Admin, key: &QueueKey, request: &AdminRequest) -> Response {
    let states = match request.param("state").unwrap_or("all") {
        "all" | "" => PeekStates::All,
        "available" => PeekStates::Available,
        "inflight" | "in_flight" | "in-flight" => PeekStates::InFlight,
        "delayed" => PeekStates::Delayed,
        other => {
            return bad_request(format!(
                "state must be available, inflight, delayed or all, not {other:?}"
            ))
        }
    };
    let limit = match request.param("limit") {
        None => DEFAULT_LIMIT,
        Some(l) => match l.parse::<usize>() {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
            _ => {
                return bad_request(format!(
                    "limit must be a number from 1 to {MAX_LIMIT}, not {l:?}"
                ))
            }
        },
    };
    match admin.engine.peek(key, states, limit) {
        Some(peek) => ok(json!({
            "messages": peek.messages.iter().map(peeked).collect::<Vec<_>>(),
            "truncated": peek.truncated,
        })),
        None => no_queue(key),
    }
}

/// One message by id (the console's detail view).
pub fn one(admin: &Admin, key: &QueueKey, id: &str) -> Response {
    if !admin.engine.has_queue(key) {
        return no_queue(key);
    }
    match admin.engine.peek_message(key, id) {
        Some(m) => ok(peeked(&m)),
        None => error(
            StatusCode::NOT_FOUND,
            format!("no message {id} in queue {}", key.name),
        ),
    }
}

fn no_queue(key: &QueueKey) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!("no queue {}/{}/{}", key.region, key.account, key.name),
    )
}

/// The contract's Peeked object.
pub fn peeked(m: &PeekedMessage) -> Value {
    let b64 = base64::engine::general_purpose::STANDARD;
    let attributes: Map<String, Value> = m
        .message_attributes
        .iter()
        .map(|(name, v)| {
            let mut o = Map::new();
            o.insert("DataType".into(), json!(v.data_type));
            if let Some(s) = &v.string_value {
                o.insert("StringValue".into(), json!(s));
            }
            if let Some(b) = &v.binary_value {
                o.insert("BinaryValue".into(), json!(b64.encode(b)));
            }
            (name.clone(), Value::Object(o))
        })
        .collect();
    json!({
        "message_id": m.message_id,
        "state": m.state.as_str(),
        "body": m.body,
        "md5_of_body": m.md5_of_body,
        "message_attributes": attributes,
        "receive_count": m.receive_count,
        "sent_ms": m.sent_ms,
        "enqueued_ms": m.enqueued_ms,
        "expires_ms": m.expires_ms,
        "first_receive_ms": m.first_receive_ms,
        "visible_at_ms": m.visible_at_ms,
        "group_id": m.group_id,
        "dedup_id": m.dedup_id,
        "sequence_number": m.sequence_number,
        "dead_letter_source_arn": m.dead_letter_source_arn,
    })
}
