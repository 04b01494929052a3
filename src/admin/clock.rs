//! `GET /_retsu/clock`, `POST /_retsu/clock` with one of `{"freeze":true}`,
//! `{"resume":true}`, `{"advance":"30s"}` (or milliseconds as a number),
//! `{"set":"2026-01-01T00:00:00Z"}`. Every change wakes every sleeper, so
//! transitions that fell due fire at once; time never goes backwards.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

use super::{bad_request, error, ok, Admin, AdminRequest};
use crate::clock::{format_rfc3339, parse_duration_ms, parse_rfc3339, ClockStatus};

/// The clock object of the contract.
pub fn object(admin: &Admin) -> Value {
    let status = match admin.clock() {
        Some(c) => c.status(),
        None => ClockStatus {
            now_ms: admin.engine.now(),
            frozen: false,
            offset_ms: 0,
        },
    };
    status_json(&status)
}

pub fn status_json(s: &ClockStatus) -> Value {
    json!({
        "now_ms": s.now_ms,
        "now": format_rfc3339(s.now_ms),
        "frozen": s.frozen,
        "offset_ms": s.offset_ms,
    })
}

pub fn show(admin: &Admin) -> Response {
    ok(object(admin))
}

pub fn change(admin: &Admin, request: &AdminRequest) -> Response {
    let body = match request.json_body() {
        Ok(b) => b,
        Err(message) => return bad_request(message),
    };
    let Some(clock) = admin.clock() else {
        return error(
            StatusCode::CONFLICT,
            "this server runs on plain system time; its clock cannot be changed",
        );
    };
    if body.len() != 1 {
        return bad_request(
            "send exactly one of {\"freeze\":true}, {\"resume\":true}, {\"advance\":\"30s\"}, {\"set\":\"2026-01-01T00:00:00Z\"}",
        );
    }
    let (name, value) = body.iter().next().expect("one field");
    let status = match (name.as_str(), value) {
        ("freeze", Value::Bool(true)) | ("resume", Value::Bool(false)) => clock.freeze(),
        ("resume", Value::Bool(true)) | ("freeze", Value::Bool(false)) => clock.resume(),
        ("advance", v) => match duration(v) {
            Some(ms) => clock.advance_ms(ms),
            None => {
                return bad_request(format!(
                    "advance takes a duration such as \"30s\", \"15m\", \"1h30m\", \"4d\", \"250ms\", or milliseconds as a number; not {v}"
                ))
            }
        },
        ("set", v) => {
            let to = match v {
                Value::String(s) => parse_rfc3339(s),
                Value::Number(n) => n.as_u64(),
                _ => None,
            };
            let Some(to) = to else {
                return bad_request(format!(
                    "set takes an RFC 3339 time such as \"2026-01-01T00:00:00Z\" (or epoch milliseconds); not {v}"
                ));
            };
            match clock.set_ms(to) {
                Ok(status) => status,
                Err(e) => return bad_request(e.to_string()),
            }
        }
        (other, v) => {
            return bad_request(format!(
                "unknown clock change {other:?}: {v}; use freeze, resume, advance or set"
            ))
        }
    };
    ok(status_json(&status))
}

fn duration(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => parse_duration_ms(s),
        _ => None,
    }
}
