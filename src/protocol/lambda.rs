//! Lambda's REST-JSON wire, on the server's port: the paths under
//! `/2015-03-31/` that event source mappings and the function look-ups
//! they need use (botocore's `lambda` model: method, path, status).
//!
//! | action | method and path | status |
//! |---|---|---|
//! | CreateEventSourceMapping | POST `event-source-mappings/` | 202 |
//! | ListEventSourceMappings | GET `event-source-mappings/` | 200 |
//! | GetEventSourceMapping | GET `event-source-mappings/{UUID}` | 200 |
//! | UpdateEventSourceMapping | PUT `event-source-mappings/{UUID}` | 202 |
//! | DeleteEventSourceMapping | DELETE `event-source-mappings/{UUID}` | 202 |
//! | CreateFunction | POST `functions` | 201 |
//! | ListFunctions | GET `functions/` | 200 |
//! | GetFunction | GET `functions/{FunctionName}` | 200 |
//! | DeleteFunction | DELETE `functions/{FunctionName}` | 204 |
//! | GetFunctionConfiguration | GET `functions/{FunctionName}/configuration` | 200 |
//!
//! No queue URL starts with `/2015-03-31/` (an account is twelve digits),
//! so these paths take nothing from SQS.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::Router;
use serde_json::Value;

use crate::lambda::mapping::Settings;
use crate::lambda::{Lambda, LambdaError};

/// The routes, to merge into the server's router.
pub fn router(lambda: Arc<Lambda>) -> Router {
    Router::new()
        .route("/2015-03-31/{*rest}", axum::routing::any(handle))
        .with_state(lambda)
}

async fn handle(State(lambda): State<Arc<Lambda>>, req: Request) -> Response {
    let request_id = uuid::Uuid::new_v4().to_string();
    let (parts, body) = req.into_parts();
    let body = match axum::body::to_bytes(Body::new(body), crate::server::MAX_BODY_BYTES).await {
        Ok(body) => body,
        Err(_) => {
            return answer(
                Err(LambdaError::new(
                    413,
                    "RequestTooLargeException",
                    "Request must be smaller than the server's body limit.",
                )),
                &request_id,
            )
        }
    };
    let path = parts.uri.path().trim_start_matches("/2015-03-31/");
    let query: Vec<(String, String)> =
        form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes())
            .into_owned()
            .collect();
    let param = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    let result = match (&parts.method, segments.as_slice()) {
        (&Method::POST, ["event-source-mappings"]) => match settings(&body) {
            Ok(s) => lambda.create(s).await.map(|v| (StatusCode::ACCEPTED, v)),
            Err(e) => Err(e),
        },
        (&Method::GET, ["event-source-mappings"]) => {
            let max_items = match param("MaxItems").map(str::parse::<i64>) {
                None => Ok(None),
                Some(Ok(n)) => Ok(Some(n)),
                Some(Err(_)) => Err(LambdaError::invalid_parameter("MaxItems must be a number.")),
            };
            max_items
                .and_then(|max| {
                    lambda.list(
                        param("FunctionName"),
                        param("EventSourceArn"),
                        param("Marker"),
                        max,
                    )
                })
                .map(|v| (StatusCode::OK, v))
        }
        (&Method::GET, ["event-source-mappings", uuid]) => {
            lambda.get(uuid).map(|v| (StatusCode::OK, v))
        }
        (&Method::PUT, ["event-source-mappings", uuid]) => match settings(&body) {
            Ok(s) => lambda.update(uuid, s).await.map(|v| (StatusCode::ACCEPTED, v)),
            Err(e) => Err(e),
        },
        (&Method::DELETE, ["event-source-mappings", uuid]) => {
            lambda.delete(uuid).await.map(|v| (StatusCode::ACCEPTED, v))
        }
        (&Method::POST, ["functions"]) => lambda
            .create_function(&body)
            .await
            .map(|v| (StatusCode::CREATED, v)),
        (&Method::GET, ["functions"]) => lambda
            .list_functions(param("Marker"), param("MaxItems"))
            .map(|v| (StatusCode::OK, v)),
        (&Method::DELETE, ["functions", name]) => lambda
            .delete_function(&decode(name), param("Qualifier"))
            .await
            .map(|()| (StatusCode::NO_CONTENT, Value::Null)),
        (&Method::GET, ["functions", name]) => lambda.get_function(&decode(name)).map(|v| (StatusCode::OK, v)),
        (&Method::GET, ["functions", name, "configuration"]) => lambda
            .get_function(&decode(name))
            .map(|v| (StatusCode::OK, v["Configuration"].clone())),
        _ => Err(LambdaError::new(
            404,
            "UnknownOperationException",
            format!(
                "Retsu serves Lambda's event source mapping actions and CreateFunction, GetFunction, ListFunctions and DeleteFunction; {} /2015-03-31/{path} is not one of them.",
                parts.method
            ),
        )),
    };
    answer(result, &request_id)
}

/// A path segment, percent-decoded (a function ARN's colons may arrive
/// encoded).
fn decode(segment: &str) -> String {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8_lossy()
        .into_owned()
}

/// A Create or Update request's body.
pub(crate) fn settings(body: &[u8]) -> Result<Settings, LambdaError> {
    let body = if body.iter().all(u8::is_ascii_whitespace) {
        &b"{}"[..]
    } else {
        body
    };
    serde_json::from_slice(body).map_err(|e| {
        LambdaError::new(
            400,
            "InvalidRequestContentException",
            format!("Could not parse request body into json: {e}"),
        )
    })
}

fn answer(result: Result<(StatusCode, Value), LambdaError>, request_id: &str) -> Response {
    let (status, body, error) = match result {
        // DeleteFunction's 204 has no body.
        Ok((status, Value::Null)) => (status, String::new(), None),
        Ok((status, value)) => (status, value.to_string(), None),
        Err(e) => (
            StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST),
            e.body(),
            Some(e.code),
        ),
    };
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Ok(id) = HeaderValue::from_str(request_id) {
        headers.insert("x-amzn-requestid", id);
    }
    if let Some(code) = error {
        headers.insert("x-amzn-errortype", HeaderValue::from_static(code));
    }
    response
}
