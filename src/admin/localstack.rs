//! LocalStack's developer endpoint, so tooling written for it keeps
//! working: `GET`/`POST /_aws/sqs/messages?QueueUrl=…` (parameters also in
//! a form or JSON body, `Action=ReceiveMessage` accepted), with
//! `ShowInvisible=true` and `ShowDelayed=true`. Answers in the
//! ReceiveMessage shape of the caller's protocol — JSON for
//! `Accept: application/json` or a JSON request, else XML — with every
//! system attribute, and changes nothing (the receipt handles it shows
//! are placeholders that delete nothing).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap};
use axum::response::Response;
use serde_json::Value;

use super::{admit, Admin};
use crate::api::{Message, ReceiveMessageResult, Response as SqsResponse};
use crate::engine::{md5_of_attribute_map, PeekStates, PeekedMessage, PeekedState, QueueKey};
use crate::error::SqsError;
use crate::protocol::{self, HttpResponse, Protocol};

/// Most messages one call lists.
const MAX_MESSAGES: usize = 10_000;

fn wants_json(headers: &HeaderMap) -> bool {
    let has = |name: header::HeaderName, what: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().contains(what))
    };
    has(header::ACCEPT, "application/json")
        || has(header::CONTENT_TYPE, "json")
        || headers.contains_key("x-amz-target")
}

/// Query string, then form or JSON body parameters (later ones win).
pub(crate) fn params(
    query: Option<&str>,
    headers: &HeaderMap,
    body: &[u8],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .into_owned()
        .collect();
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.contains("json") {
        if let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(body) {
            for (k, v) in map {
                let v = match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                out.push((k, v));
            }
        }
    } else if !body.is_empty() {
        out.extend(form_urlencoded::parse(body).into_owned());
    }
    out
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .rev()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn flag(params: &[(String, String)], name: &str) -> bool {
    param(params, name).is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// The message as ReceiveMessage would show it, all system attributes
/// included, plus LocalStack's `IsVisible`/`IsDelayed`.
fn as_sqs_message(m: &PeekedMessage, sender: &str) -> Message {
    let mut attributes = BTreeMap::new();
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            attributes.insert(k.to_string(), v);
        }
    };
    put("SenderId", Some(sender.to_string()));
    put("SentTimestamp", Some(m.sent_ms.to_string()));
    put("ApproximateReceiveCount", Some(m.receive_count.to_string()));
    put(
        "ApproximateFirstReceiveTimestamp",
        m.first_receive_ms.map(|t| t.to_string()),
    );
    put("AWSTraceHeader", m.trace_header.clone());
    put("MessageGroupId", m.group_id.clone());
    put("MessageDeduplicationId", m.dedup_id.clone());
    put("SequenceNumber", m.sequence_number.clone());
    put("DeadLetterQueueSourceArn", m.dead_letter_source_arn.clone());
    put(
        "IsVisible",
        Some((m.state == PeekedState::Available).to_string()),
    );
    put(
        "IsDelayed",
        Some((m.state == PeekedState::Delayed).to_string()),
    );
    Message {
        message_id: m.message_id.clone(),
        receipt_handle: format!("peek-{}", m.message_id),
        md5_of_body: m.md5_of_body.clone(),
        body: m.body.clone(),
        attributes,
        md5_of_message_attributes: md5_of_attribute_map(&m.message_attributes),
        message_attributes: m.message_attributes.clone(),
    }
}

pub async fn messages(State(admin): State<Arc<Admin>>, req: Request) -> Response {
    let (parts, body) = match admit(&admin, req).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let protocol = if wants_json(&parts.headers) {
        Protocol::Json
    } else {
        Protocol::Query
    };
    let request_id = crate::engine::id_text(&uuid::Uuid::new_v4());
    let fail =
        |e: SqsError| HttpResponse::into_http(protocol::encode_error(protocol, &e, &request_id));
    let params = params(parts.uri.query(), &parts.headers, &body);
    if let Some(action) = param(&params, "Action") {
        if action != "ReceiveMessage" {
            return fail(SqsError::invalid_value(format!(
                "{action} is not served here; this endpoint only lists messages (ReceiveMessage)"
            )));
        }
    }
    let Some(url) = param(&params, "QueueUrl") else {
        return fail(SqsError::missing("QueueUrl"));
    };
    let ctx = admin.context();
    let Some(key) = QueueKey::from_url(url, &ctx) else {
        return fail(SqsError::queue_does_not_exist());
    };
    let mut wanted = vec![PeekStates::Available];
    if flag(&params, "ShowInvisible") {
        wanted.push(PeekStates::InFlight);
    }
    if flag(&params, "ShowDelayed") {
        wanted.push(PeekStates::Delayed);
    }
    let mut messages = Vec::new();
    for states in wanted {
        let room = MAX_MESSAGES - messages.len();
        if room == 0 {
            break;
        }
        match admin.engine.peek(&key, states, room) {
            Some(peek) => messages.extend(
                peek.messages
                    .iter()
                    .map(|m| as_sqs_message(m, &m.sender_id)),
            ),
            None => return fail(SqsError::queue_does_not_exist()),
        }
    }
    let response = SqsResponse::ReceiveMessage(ReceiveMessageResult { messages });
    HttpResponse::into_http(protocol::encode_response(protocol, &response, &request_id))
}
