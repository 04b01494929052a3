//! LocalStack's status endpoints, so the health checks and wait scripts of
//! a project that moved from LocalStack keep working unchanged:
//! `GET /_localstack/health` (`{"services": {"sns": "running", "sqs":
//! "running"}, "edition", "version"}`), `/_localstack/info`, and
//! `/_localstack/init` with `/_localstack/init/<stage>` (Retsu runs no init
//! scripts: every start-up stage is complete, with none listed). Open
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

const STAGES: [&str; 4] = ["BOOT", "START", "READY", "SHUTDOWN"];

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

/// Every stage but SHUTDOWN is complete once the server answers.
pub async fn init(State(_admin): State<Arc<Admin>>) -> Response {
    let completed: serde_json::Map<String, serde_json::Value> = STAGES
        .iter()
        .map(|s| (s.to_string(), json!(*s != "SHUTDOWN")))
        .collect();
    ok(json!({"completed": completed, "scripts": []}))
}

pub async fn init_stage(State(_admin): State<Arc<Admin>>, Path(stage): Path<String>) -> Response {
    let stage = stage.to_ascii_uppercase();
    if !STAGES.contains(&stage.as_str()) {
        return reply(
            StatusCode::NOT_FOUND,
            json!({"error": format!("unknown stage {stage}; one of BOOT, START, READY, SHUTDOWN")}),
        );
    }
    ok(json!({"completed": stage != "SHUTDOWN", "scripts": []}))
}
