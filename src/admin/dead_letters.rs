//! Dead-letter tools, on any queue: delete one message by id (no receipt
//! handle), restore one message to its source queue or a named one.

use axum::response::Response;
use serde_json::{json, Value};

use super::{bad_request, ok, queue_ref, refused, Admin, AdminRequest};
use crate::engine::QueueKey;

/// `DELETE /_retsu/queues/{r}/{a}/{n}/messages/{id}`.
pub fn delete(admin: &Admin, key: &QueueKey, id: &str) -> Response {
    match admin.engine.admin_delete(key, id) {
        Ok(()) => ok(json!({"deleted": true})),
        Err(e) => refused(e),
    }
}

/// `POST /_retsu/queues/{r}/{a}/{n}/messages/{id}/restore`, body `{}` or
/// `{"to": "<queue URL or ARN>"}`.
pub fn restore(admin: &Admin, key: &QueueKey, id: &str, request: &AdminRequest) -> Response {
    let body = match request.json_body() {
        Ok(b) => b,
        Err(message) => return bad_request(message),
    };
    let to = match body.get("to") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() => Some(s.as_str()),
        Some(_) => return bad_request("\"to\" must be a queue URL or ARN"),
    };
    if let Some(unknown) = body.keys().find(|k| k.as_str() != "to") {
        return bad_request(format!(
            "unknown field {unknown:?}; only \"to\" is accepted"
        ));
    }
    match admin.engine.restore(&admin.context(), key, id, to) {
        Ok(restored) => {
            let mut queue = queue_ref(&restored.queue);
            queue["arn"] = json!(restored.queue.arn());
            ok(json!({"restored": true, "queue": queue}))
        }
        Err(e) => refused(e),
    }
}
