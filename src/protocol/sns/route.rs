//! Which service a query request is for.
//!
//! SQS and SNS share the port and the query protocol, so the request itself
//! must say. A signed request says it in its credential scope, which SDKs
//! always fill with the service they are calling; that decides, even for an
//! action only the other service has (SQS must answer a signed-SQS
//! `Publish` with its own InvalidAction). Unsigned requests (hand-built
//! posts, the SubscribeURL and UnsubscribeURL GETs) are routed by action
//! name, and the two actions both services have by the resource they name.

use retsu_core::api::Action;
use retsu_core::sns::api::SnsAction;
use retsu_core::sns::error::SnsError;

use crate::protocol::query::{self, Params};
use crate::protocol::HttpRequest;

/// The SNS action of a query request, or `None` when it is SQS's (see the
/// module doc). A request signed for `sns` whose action SNS does not know
/// is also `None` here; [`signed_service`] tells the caller to answer it
/// with [`invalid_action`] rather than hand it to SQS.
pub fn route(req: &HttpRequest, params: &Params) -> Option<SnsAction> {
    let name = query::param(params, "Action")?;
    match signed_service(req, params) {
        Some("sns") => SnsAction::from_name(name),
        Some("sqs") => None,
        // Unsigned, or a scope naming neither: by the action itself.
        _ => {
            let action = SnsAction::from_name(name)?;
            if Action::from_name(name).is_none() {
                return Some(action);
            }
            // AddPermission/RemovePermission: SNS's name a topic, SQS's a
            // queue (by parameter, or Java v1's post to the queue URL).
            let names_queue = query::param(params, "QueueUrl").is_some()
                || query::queue_path(&req.path).is_some();
            (query::param(params, "TopicArn").is_some() && !names_queue).then_some(action)
        }
    }
}

/// The service of the SigV4 credential scope: the `Authorization` header's
/// `Credential=`, else a presigned request's `X-Amz-Credential` parameter.
/// `None` when unsigned or when the scope does not parse.
pub fn signed_service<'a>(req: &'a HttpRequest, params: &'a Params) -> Option<&'a str> {
    let from_header = req
        .headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|auth| {
            let start = auth.find("Credential=")? + "Credential=".len();
            let rest = &auth[start..];
            let end = rest
                .find(|c: char| c == ',' || c.is_whitespace())
                .unwrap_or(rest.len());
            scope_service(&rest[..end])
        });
    from_header.or_else(|| {
        params
            .iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case("X-Amz-Credential"))
            .and_then(|(_, v)| scope_service(v))
    })
}

/// `AKID/yyyymmdd/<region>/<service>/aws4_request` → service, counted from
/// the end as context.rs counts the region (an access key may hold `/`).
fn scope_service(credential: &str) -> Option<&str> {
    let parts: Vec<&str> = credential.split('/').collect();
    if parts.len() < 5 || parts[parts.len() - 1] != "aws4_request" {
        return None;
    }
    let service = parts[parts.len() - 2];
    let valid = !service.is_empty()
        && service.len() <= 64
        && service
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    valid.then_some(service)
}

/// The error for a request signed for SNS that names no SNS action, in
/// AWS's words (captured in ex-aws/ex_aws#177: "Could not find operation
/// publish for version 2010-03-31").
pub fn invalid_action(name: &str) -> SnsError {
    SnsError::new(
        "InvalidAction",
        400,
        format!("Could not find operation {name} for version 2010-03-31"),
    )
}
