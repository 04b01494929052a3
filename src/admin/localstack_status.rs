//! LocalStack's status endpoints, so the health checks and wait scripts of
//! a project that moved from LocalStack keep working unchanged:
//! `GET /_localstack/health` (`{"services": {"sns": "running", "sqs":
//! "running"}, "edition", "version"}`), `/_localstack/info`, and
//! `/_localstack/init` with `/_localstack/init/<stage>` (the init hooks'
//! progress, `crate::localstack::hooks`). Open
//! without the admin token, as LocalStack's are and as a container's
//! health check needs.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use super::{ok, reply, Admin};

/// What `edition` says: the value LocalStack's free edition gives, which
/// tools that branch on it treat as the plain one.
const EDITION: &str = "community";

pub async fn health(State(_admin): State<Arc<Admin>>) -> Response {
    ok(json!({
        "services": {"sns": "running", "sqs": "running"},
        "edition": EDITION,
        "version": env!("CARGO_PKG_VERSION"),
    }))
}

/// One id per process, as LocalStack's session id is per run.
fn session_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| uuid::Uuid::new_v4().to_string())
}

pub async fn info(State(admin): State<Arc<Admin>>) -> Response {
    // The wall clock, as LocalStack's; the SQS clock may be frozen or moved.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    ok(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "edition": EDITION,
        "is_license_activated": false,
        "session_id": session_id(),
        "machine_id": session_id(),
        "system": std::env::consts::OS,
        "is_docker": std::path::Path::new("/.dockerenv").exists(),
        "server_time_utc": crate::clock::format_rfc3339(now),
        "uptime": admin.started.elapsed().as_secs(),
    }))
}

/// The init hooks found, their states, and which stages completed.
pub async fn init(State(admin): State<Arc<Admin>>) -> Response {
    ok(admin.init_hooks.status())
}

pub async fn init_stage(State(admin): State<Arc<Admin>>, Path(stage): Path<String>) -> Response {
    match crate::localstack::Stage::parse(&stage) {
        Some(stage) => ok(admin.init_hooks.stage_status(stage)),
        None => reply(
            StatusCode::NOT_FOUND,
            json!({"error": format!("unknown stage {stage}; one of BOOT, START, READY, SHUTDOWN")}),
        ),
    }
}
