//! `GET|PUT|DELETE /_retsu/functions[/NAME]`: the Lambda functions event
//! source mappings can name, those the configuration declares and those
//! made at run time (here or through Lambda's CreateFunction).
//!
//! A `PUT` body is what a `[[functions]]` entry says: `url` or `command`
//! (a list: program and arguments), and optionally `environment` (an
//! object of strings), `timeout` (seconds, 1 to 900) and `concurrency`
//! (1 to 1000). The mappings naming the function poll again with it as
//! it now is. Functions the configuration declares are changed there, so
//! they refuse `PUT` and `DELETE` with 409. Made functions persist with a
//! data directory, as the mappings do (the dispatcher waits for that).

use std::collections::BTreeMap;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Map, Value};

use super::{bad_request, error, ok, reply, Admin, AdminRequest};
use crate::lambda::function::DEFAULT_TIMEOUT_S;
use crate::lambda::FunctionTarget;

/// `GET /_retsu/functions`.
pub fn list(admin: &Admin) -> Response {
    ok(json!({ "functions": admin.lambda.functions_view() }))
}

/// `GET /_retsu/functions/NAME`.
pub fn one(admin: &Admin, name: &str) -> Response {
    match admin.lambda.function_view_of(name) {
        Some(view) => ok(view),
        None => not_found(name),
    }
}

/// `PUT /_retsu/functions/NAME`: 201 when new, 200 when replaced.
pub fn put(admin: &Admin, name: &str, request: &AdminRequest) -> Response {
    let body = match request.json_body() {
        Ok(b) => b,
        Err(message) => return bad_request(message),
    };
    let target = match target(name, &body) {
        Ok(t) => t,
        Err(message) => return bad_request(message),
    };
    match admin.lambda.put_function(target) {
        Ok(new) => {
            let view = admin.lambda.function_view_of(name).unwrap_or(Value::Null);
            reply(
                if new {
                    StatusCode::CREATED
                } else {
                    StatusCode::OK
                },
                view,
            )
        }
        Err(message) => error(StatusCode::CONFLICT, message),
    }
}

/// `DELETE /_retsu/functions/NAME`.
pub fn delete(admin: &Admin, name: &str) -> Response {
    match admin.lambda.remove_function(name) {
        Ok(true) => ok(json!({ "deleted": true })),
        Ok(false) => not_found(name),
        Err(message) => error(StatusCode::CONFLICT, message),
    }
}

fn not_found(name: &str) -> Response {
    error(StatusCode::NOT_FOUND, format!("no function {name}"))
}

/// The target a `PUT` body describes.
fn target(name: &str, body: &Map<String, Value>) -> Result<FunctionTarget, String> {
    const FIELDS: [&str; 5] = ["url", "command", "environment", "timeout", "concurrency"];
    if let Some(unknown) = body.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "unknown field {unknown:?}; a function has {}",
            FIELDS.join(", ")
        ));
    }
    let environment: BTreeMap<String, String> = match body.get("environment") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(vars)) => vars
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(format!("environment variable {k} must be a string")),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("\"environment\" must be an object of strings".into()),
    };
    let number = |field: &str| -> Result<Option<u64>, String> {
        match body.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| format!("\"{field}\" must be a positive integer")),
        }
    };
    let timeout = number("timeout")?.unwrap_or(DEFAULT_TIMEOUT_S);
    let concurrency = number("concurrency")?.unwrap_or(1);
    let target = match (body.get("url"), body.get("command")) {
        (Some(Value::String(url)), None) => {
            FunctionTarget::with_url(name, url, environment, timeout)?
        }
        (None, Some(Value::Array(argv))) => {
            let argv = argv
                .iter()
                .map(|a| a.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or("\"command\" must be a list of strings")?;
            FunctionTarget::with_command(name, argv, environment, timeout)?
        }
        (Some(_), Some(_)) => {
            return Err("a function has a \"url\" or a \"command\", not both".into())
        }
        (Some(_), None) => return Err("\"url\" must be a string".into()),
        (None, Some(_)) => return Err("\"command\" must be a list of strings".into()),
        (None, None) => return Err("a function needs a \"url\" or a \"command\"".into()),
    };
    target.with_concurrency(u32::try_from(concurrency).unwrap_or(u32::MAX))
}
