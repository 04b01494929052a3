//! `GET /_retsu/messages/{id}` (a message's whole life, also after it
//! left, with the Lambda invocations that carried it) and `GET /_retsu/events` (the recent events, filterable, so a
//! silent loss has a record).

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};
use uuid::Uuid;

use super::peek::peeked;
use super::{bad_request, error, ok, queue_ref, Admin, AdminRequest};
use crate::engine::events::Event;
use crate::engine::{QueueKey, Transition};
use crate::history::{EventQuery, History};

pub const DEFAULT_LIMIT: usize = 100;
/// The live stream's kind for a Lambda invocation (not a message's event).
pub(super) const INVOCATION: &str = "invocation";
const MAX_LIMIT: usize = 10_000;

pub(super) fn history(admin: &Admin) -> Result<&History, Response> {
    admin.history.as_deref().ok_or_else(|| {
        error(
            StatusCode::NOT_FOUND,
            "history is switched off on this server (--history-events 0)",
        )
    })
}

/// The contract's Event object.
pub fn event_json(admin: &Admin, e: &Event) -> Value {
    json!({
        "seq": e.seq,
        "at_ms": e.at_ms,
        "kind": e.kind.name(),
        "queue": queue_ref(&e.queue),
        "message_id": e.message_id.to_string(),
        "receive_count": e.receive_count,
        "visible_at_ms": e.visible_at_ms,
        "receipt_handle": e.receipt.map(|r| admin.engine.receipt_handle(r)),
        "detail": e.note.as_deref(),
    })
}

pub fn message(admin: &Admin, id: &str) -> Response {
    let history = match history(admin) {
        Ok(h) => h,
        Err(response) => return response,
    };
    let Ok(message_id) = Uuid::parse_str(id) else {
        return bad_request(format!("{id:?} is not a message id"));
    };
    let Some(trail) = history.trail(&message_id) else {
        // Stored before this server started (or, in a cluster, before its
        // shard was loaded here): where it is now, and no earlier events.
        if let Some((queue, found)) = admin.engine.find_message(id) {
            return ok(json!({
                "message_id": id,
                "queue": queue_ref(&queue),
                "events": [],
                "truncated": true,
                "current": peeked(&found),
                "invocations": admin.lambda.invocations().recent(None, Some(id)),
            }));
        }
        return error(
            StatusCode::NOT_FOUND,
            format!("no history for message {id} (never seen, or past the history's bounds)"),
        );
    };
    // Where it is now, if it is still stored: the queue of its last event.
    let current = trail
        .events
        .last()
        .and_then(|e| admin.engine.peek_message(&e.queue, id))
        .map(|m| peeked(&m));
    // The Lambda invocations whose event held it: why a mapping's message
    // came back or went to its dead-letter queue.
    let invocations = admin.lambda.invocations().recent(None, Some(id));
    ok(json!({
        "message_id": id,
        // The queue of its last event.
        "queue": trail.events.last().map(|e| queue_ref(&e.queue)),
        "events": trail.events.iter().map(|e| event_json(admin, e)).collect::<Vec<_>>(),
        "truncated": trail.cut,
        "current": current,
        "invocations": invocations,
    }))
}

pub fn events(admin: &Admin, request: &AdminRequest) -> Response {
    let history = match history(admin) {
        Ok(h) => h,
        Err(response) => return response,
    };
    match query(request) {
        Ok(query) => {
            let (events, missed) = history.events(&query);
            let next = events.last().map_or(query.since, |e| e.seq);
            ok(json!({
                "events": events.iter().map(|e| event_json(admin, e)).collect::<Vec<_>>(),
                "next": next,
                "missed": missed,
            }))
        }
        Err(response) => response,
    }
}

/// `queue=r/a/n`, `kind=a,b`, `since=N`, `limit=N`.
pub(super) fn query(request: &AdminRequest) -> Result<EventQuery, Response> {
    let queue = match request.param("queue").filter(|q| !q.is_empty()) {
        None => None,
        Some(q) => match q.split('/').collect::<Vec<_>>().as_slice() {
            [region, account, name] => Some(QueueKey {
                region: region.to_string(),
                account: account.to_string(),
                name: name.to_string(),
            }),
            _ => {
                return Err(bad_request(format!(
                    "queue must be region/account/name, not {q:?}"
                )))
            }
        },
    };
    let mut kinds = Vec::new();
    let mut topic_kinds = Vec::new();
    let mut invocations = false;
    for k in request
        .param("kind")
        .unwrap_or("")
        .split(',')
        .filter(|k| !k.is_empty())
    {
        use crate::engine::events::TopicEventKind;
        if k == INVOCATION {
            invocations = true;
            continue;
        }
        if let Some(kind) = TopicEventKind::ALL.iter().find(|t| t.name() == k) {
            topic_kinds.push(*kind);
            continue;
        }
        let kind = Transition::from_name(k).ok_or_else(|| {
            let known: Vec<&str> = Transition::ALL
                .iter()
                .map(|t| t.name())
                .chain(TopicEventKind::ALL.iter().map(|t| t.name()))
                .chain([INVOCATION])
                .collect();
            bad_request(format!("unknown kind {k:?}; kinds: {}", known.join(", ")))
        })?;
        kinds.push(kind);
    }
    let number = |name: &str, default: u64, max: u64| -> Result<u64, Response> {
        match request.param(name) {
            None | Some("") => Ok(default),
            Some(v) => v
                .parse::<u64>()
                .ok()
                .filter(|n| *n <= max)
                .ok_or_else(|| bad_request(format!("{name} must be a number up to {max}"))),
        }
    };
    Ok(EventQuery {
        queue,
        kinds,
        topic_kinds,
        invocations,
        since: number("since", 0, u64::MAX)?,
        limit: number("limit", DEFAULT_LIMIT as u64, MAX_LIMIT as u64)? as usize,
    })
}
