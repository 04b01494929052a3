//! The admin API: JSON over HTTP under `/_retsu/` on the SQS port, plus
//! LocalStack's `/_aws/sqs/messages` peek and `/_localstack/*` status
//! endpoints (contract: the README's "Admin API" section).
//!
//! Why a layer of its own: it speaks HTTP and JSON and never touches queue
//! internals; the engine's typed views and operations (`engine/inspect.rs`)
//! and the controllable clock do the work. SQS requests never reach it:
//! no queue URL path starts with `/_retsu`, `/_aws` or `/_localstack` (queue URL paths are
//! `/<12-digit account>/<name>` or `/queue/<region>/<account>/<name>`).
//!
//! One dispatcher matches method and path, so every `/_retsu/*` answer —
//! unknown paths and refused tokens included — is JSON, never an empty
//! body. One file per family: `queues.rs` (health, queues), `peek.rs`,
//! `dead_letters.rs` (delete, restore), `clock.rs`, `reset.rs`,
//! `history.rs` (a message's history, recent events), `stream.rs` (the
//! live event stream, server-sent events), `faults.rs`
//! (seeded faults), `localstack.rs` (the peek), `localstack_status.rs`
//! (health, info, init), `sns_inbox.rs` (what SNS recorded instead of
//! sending, and confirmation tokens: LocalStack's `/_aws/sns/*` and ours),
//! `functions.rs` (the Lambda functions mappings invoke).

// Handlers return an early `Response` as their error: built once per admin
// call, never on the SQS path, so its size does not matter.
#![allow(clippy::result_large_err)]

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::Response;
use axum::routing::{any, get};
use axum::Router;
use bytes::Bytes;
use serde_json::{json, Value};

use crate::api::RequestContext;
use crate::clock::ControlledClock;
use crate::engine::{AdminError, Engine, QueueKey};
use crate::event_stream::EventStream;
use crate::history::History;
use crate::protocol::Settings;

mod clock;
mod dead_letters;
mod faults;
mod functions;
mod history;
pub(crate) mod localstack;
mod localstack_status;
mod peek;
mod queues;
mod reset;
mod sns_inbox;
mod stream;
mod topics;

/// The clock object of the contract, as `/_retsu/clock` shows it.
pub use clock::status_json as clock_status_json;
/// `/_retsu/events`' page size when the request gives no `limit`.
pub use history::DEFAULT_LIMIT as EVENTS_DEFAULT_LIMIT;

/// Largest admin request body.
const MAX_BODY: usize = 1024 * 1024;

/// What the admin handlers share.
pub struct Admin {
    pub engine: Arc<Engine>,
    /// `Authorization: Bearer <token>` required when set.
    pub token: Option<String>,
    pub started: Instant,
    /// Server defaults: region, account, base of queue URLs.
    pub settings: Settings,
    /// Message history, unless switched off (`--history-events 0`).
    pub history: Option<Arc<History>>,
    /// The seeded faults the SQS handler applies.
    pub faults: Arc<crate::faults::Faults>,
    /// The live event stream's readers.
    pub event_stream: Arc<EventStream>,
    /// SNS, for its topics' listing.
    pub sns: Arc<retsu_core::sns::Sns>,
    /// The topics' last fan-out steps.
    pub topic_steps: Arc<crate::topic_steps::TopicSteps>,
    /// LocalStack's init hooks, for `/_localstack/init`.
    pub init_hooks: Arc<crate::localstack::InitHooks>,
    /// Lambda, for its functions.
    pub lambda: Arc<crate::lambda::Lambda>,
    /// Serve LocalStack's endpoints (`/_localstack/*`, `/_aws/*`); off
    /// with `--no-localstack`.
    pub localstack: bool,
}

impl Admin {
    /// The context queue URLs are built in: `--base-url`, else the listen
    /// address; the server's default region and account.
    pub fn context(&self) -> RequestContext {
        self.settings.default_context()
    }

    /// The clock's controls, when the server runs on a controllable clock.
    pub fn clock(&self) -> Option<&ControlledClock> {
        self.engine.clock().control()
    }

    /// Whether the request carries the admin token (when one is set).
    /// Constant-time in the token's bytes.
    fn authorized(&self, headers: &HeaderMap) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        constant_time_eq(given.trim().as_bytes(), token.as_bytes())
    }
}

pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = (a.len() ^ b.len()) as u8 | u8::from(a.len() != b.len());
    for (i, y) in b.iter().enumerate() {
        let x = a.get(i).copied().unwrap_or(0);
        diff |= x ^ y;
    }
    diff == 0
}

/// The admin routes, ready to merge into the server's router.
pub fn router(admin: Arc<Admin>) -> Router {
    let retsu = Router::new()
        .route("/_retsu", any(dispatch))
        .route("/_retsu/", any(dispatch))
        .route("/_retsu/{*rest}", any(dispatch));
    let app = if admin.localstack {
        retsu.merge(localstack_routes())
    } else {
        retsu
    };
    app.with_state(admin)
}

/// LocalStack's endpoints; with `--no-localstack` these paths reach the
/// SQS handler like any unknown path.
fn localstack_routes() -> Router<Arc<Admin>> {
    Router::new()
        .route("/_aws/sqs/messages", any(localstack::messages))
        .route("/_aws/sns/sms-messages", any(sns_inbox::sms_messages))
        .route(
            "/_aws/sns/platform-endpoint-messages",
            any(sns_inbox::platform_endpoint_messages),
        )
        .route(
            "/_aws/sns/subscription-tokens/{*arn}",
            get(sns_inbox::subscription_token),
        )
        .route("/_localstack/health", get(localstack_status::health))
        .route("/_localstack/info", get(localstack_status::info))
        .route("/_localstack/init", get(localstack_status::init))
        .route(
            "/_localstack/init/{stage}",
            get(localstack_status::init_stage),
        )
}

/// A JSON answer.
pub fn reply(status: StatusCode, value: Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(value.to_string()))
        .unwrap_or_else(|_| Response::new(Body::from("{}")))
}

pub fn ok(value: Value) -> Response {
    reply(StatusCode::OK, value)
}

/// The contract's error shape: `{"error": {"code", "message"}}`.
pub fn error(status: StatusCode, message: impl Into<String>) -> Response {
    let code = match status {
        StatusCode::NOT_FOUND => "NotFound",
        StatusCode::UNAUTHORIZED => "Unauthorized",
        StatusCode::CONFLICT => "Conflict",
        StatusCode::SERVICE_UNAVAILABLE => "ServiceUnavailable",
        _ => "BadRequest",
    };
    let mut response = reply(
        status,
        json!({"error": {"code": code, "message": message.into()}}),
    );
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
    }
    response
}

pub fn bad_request(message: impl Into<String>) -> Response {
    error(StatusCode::BAD_REQUEST, message)
}

/// An engine admin operation's refusal as the admin API's JSON error.
pub fn refused(e: AdminError) -> Response {
    match e {
        AdminError::NotFound(m) => error(StatusCode::NOT_FOUND, m),
        AdminError::Conflict(m) => error(StatusCode::CONFLICT, m),
        AdminError::BadRequest(m) => error(StatusCode::BAD_REQUEST, m),
    }
}

/// `{"region","account","name"}` (plus `arn` where the contract has it).
pub fn queue_ref(key: &QueueKey) -> Value {
    json!({"region": key.region, "account": key.account, "name": key.name})
}

/// A request, read: method, path segments after `/_retsu`, query, body.
pub struct AdminRequest {
    pub method: Method,
    pub query: Vec<(String, String)>,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl AdminRequest {
    /// A header's value, when it is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as a JSON object (an empty body is `{}`).
    /// A body that is not one is a 400 with this message.
    pub fn json_body(&self) -> Result<serde_json::Map<String, Value>, String> {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Default::default());
        }
        match serde_json::from_slice::<Value>(&self.body) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err("the body must be a JSON object".into()),
            Err(e) => Err(format!("the body is not JSON: {e}")),
        }
    }
}

/// The whole body; too long a one is a 400 with this message.
async fn read_body(body: Body) -> Result<Bytes, String> {
    axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| format!("the body is longer than {MAX_BODY} bytes"))
}

/// `%XX` escapes of a path segment decoded (invalid ones kept as written).
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A request's head and body once it may be served: the refusal instead
/// when the admin token is missing or wrong, or the body is too long.
/// Every admin endpoint (LocalStack's included) starts here.
async fn admit(admin: &Admin, req: Request) -> Result<(Parts, Bytes), Response> {
    let (parts, body) = req.into_parts();
    if !admin.authorized(&parts.headers) {
        return Err(error(
            StatusCode::UNAUTHORIZED,
            "this server needs the admin token: Authorization: Bearer <token>",
        ));
    }
    let body = read_body(body).await.map_err(bad_request)?;
    Ok((parts, body))
}

async fn dispatch(State(admin): State<Arc<Admin>>, req: Request) -> Response {
    let (parts, body) = match admit(&admin, req).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let path = parts.uri.path();
    let segments: Vec<String> = path
        .trim_start_matches("/_retsu")
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    let request = AdminRequest {
        method: parts.method.clone(),
        query: form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes())
            .into_owned()
            .collect(),
        headers: parts.headers.clone(),
        body,
    };
    let m = &request.method;
    // Changes to stored state: with a data directory they are refused
    // while writes fail, and answered only once durable, as SQS actions
    // are (`Engine::handle`). `Some(true)`: queue-level state changes too.
    let persisted = match segs.as_slice() {
        ["queues", _, _, _, "messages", _] if m == Method::DELETE => Some(false),
        ["queues", _, _, _, "messages", _, "restore"] if m == Method::POST => Some(false),
        ["queues", _, _, _, "reset"] | ["reset"] if m == Method::POST => Some(true),
        ["functions", _] if m == Method::PUT || m == Method::DELETE => Some(true),
        _ => None,
    };
    if let Some(refusal) = persisted.and(admin.engine.storage_refusal()) {
        return error(StatusCode::SERVICE_UNAVAILABLE, &refusal.message);
    }
    let response = route(&admin, &segs, &request, path);
    if let Some(queue_level) = persisted {
        if response.status().is_success() {
            if let Err(e) = admin.engine.persisted(queue_level).await {
                return error(StatusCode::SERVICE_UNAVAILABLE, e.message);
            }
        }
    }
    response
}

fn route(admin: &Arc<Admin>, segs: &[&str], request: &AdminRequest, path: &str) -> Response {
    let admin = admin.clone();
    let key = |r: &str, a: &str, n: &str| QueueKey {
        region: r.to_string(),
        account: a.to_string(),
        name: n.to_string(),
    };
    let m = &request.method;
    match segs {
        ["health"] if m == Method::GET => queues::health(&admin),
        ["queues"] if m == Method::GET => queues::list(&admin),
        ["queues", r, a, n] if m == Method::GET => queues::one(&admin, &key(r, a, n)),
        ["queues", r, a, n, "messages"] if m == Method::GET => {
            peek::list(&admin, &key(r, a, n), request)
        }
        ["queues", r, a, n, "messages", id] if m == Method::GET => {
            peek::one(&admin, &key(r, a, n), id)
        }
        ["queues", r, a, n, "messages", id] if m == Method::DELETE => {
            dead_letters::delete(&admin, &key(r, a, n), id)
        }
        ["queues", r, a, n, "messages", id, "restore"] if m == Method::POST => {
            dead_letters::restore(&admin, &key(r, a, n), id, request)
        }
        ["queues", r, a, n, "reset"] if m == Method::POST => reset::queue(&admin, &key(r, a, n)),
        ["clock"] if m == Method::GET => clock::show(&admin),
        ["clock"] if m == Method::POST => clock::change(&admin, request),
        ["reset"] if m == Method::POST => reset::all(&admin),
        ["topics"] if m == Method::GET => topics::list(&admin),
        ["inbox"] if m == Method::GET || m == Method::DELETE => sns_inbox::inbox(&admin, request),
        ["subscriptions", arn, "token"] if m == Method::GET => sns_inbox::token(&admin, arn),
        ["faults"] if m == Method::GET => faults::show(&admin),
        ["faults"] if m == Method::POST => faults::set(&admin, request),
        ["faults"] if m == Method::DELETE => faults::clear(&admin, request),
        ["functions"] if m == Method::GET => functions::list(&admin),
        ["functions", name] if m == Method::GET => functions::one(&admin, name),
        ["functions", name] if m == Method::PUT => functions::put(&admin, name, request),
        ["functions", name] if m == Method::DELETE => functions::delete(&admin, name),
        ["messages", id] if m == Method::GET => history::message(&admin, id),
        ["events"] if m == Method::GET => history::events(&admin, request),
        ["events", "stream"] if m == Method::GET => stream::open(&admin, request),
        _ => error(
            StatusCode::NOT_FOUND,
            format!("no admin endpoint {} {path}", request.method),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_decode() {
        assert_eq!(percent_decode("a%2Fb%20c+d"), "a/b c+d");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }

    #[test]
    fn token_comparison() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secreT", b"secret"));
        assert!(!constant_time_eq(b"secret1", b"secret"));
        assert!(!constant_time_eq(b"", b"secret"));
        assert!(!constant_time_eq(b"secret", b""));
        assert!(constant_time_eq(b"", b""));
    }
}
