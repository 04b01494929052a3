//! Lambda's part of the admin API, behind the admin token like the rest
//! of `/_retsu` (and absent with `--no-admin`):
//!
//! - `GET /_retsu/lambda/mappings`: every event source mapping as
//!   `ListEventSourceMappings` describes it (what `retsu mappings` and the
//!   console show), without the Lambda API's SigV4 under `--auth`;
//! - `GET /_retsu/lambda/invocations[?source=ID][&message=ID]`: the recent
//!   invocations, oldest first, of every mapping and `lambda`
//!   subscription, or of one (a mapping's UUID or a subscription's ARN),
//!   or those whose event held one message (why a message reached its
//!   dead-letter queue).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::{json, Value};

use super::Lambda;

type Shared = (Arc<Lambda>, Option<String>);

/// The routes, to merge into the server's router.
pub fn router(lambda: Arc<Lambda>, token: Option<String>) -> Router {
    Router::new()
        .route("/_retsu/lambda/mappings", axum::routing::get(mappings))
        .route(
            "/_retsu/lambda/invocations",
            axum::routing::get(invocations),
        )
        .with_state((lambda, token))
}

/// The refusal when the admin token is set and not given.
fn refused(token: &Option<String>, headers: &HeaderMap) -> Option<Response> {
    let token = token.as_ref()?;
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if crate::admin::constant_time_eq(given.trim().as_bytes(), token.as_bytes()) {
        return None;
    }
    let refusal = json!({
        "error": "this server needs the admin token: Authorization: Bearer <token>"
    });
    Some(answer(StatusCode::UNAUTHORIZED, &refusal))
}

fn answer(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn mappings(State((lambda, token)): State<Shared>, headers: HeaderMap) -> Response {
    if let Some(refusal) = refused(&token, &headers) {
        return refusal;
    }
    match lambda.list(None, None, None, Some(10_000)) {
        Ok(listed) => answer(
            StatusCode::OK,
            &json!({ "mappings": listed["EventSourceMappings"] }),
        ),
        Err(e) => answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({ "error": e.message }),
        ),
    }
}

async fn invocations(State((lambda, token)): State<Shared>, req: Request) -> Response {
    if let Some(refusal) = refused(&token, req.headers()) {
        return refusal;
    }
    let param = |name: &str| {
        form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    let (source, message) = (param("source"), param("message"));
    let recent = lambda
        .invocations()
        .recent(source.as_deref(), message.as_deref());
    answer(StatusCode::OK, &json!({ "invocations": recent }))
}
