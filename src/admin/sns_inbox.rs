//! What SNS recorded instead of sending (SMS, e-mail, mobile push, Lambda,
//! Firehose; see `retsu_core::sns::inbox`) and the confirmation tokens of
//! subscriptions, in two shapes:
//!
//! - LocalStack's developer endpoints, so tests written against it keep
//!   working: `GET`/`DELETE /_aws/sns/sms-messages` (`phoneNumber`,
//!   `accountId`, `region`), `GET`/`DELETE
//!   /_aws/sns/platform-endpoint-messages` (`endpointArn`, `accountId`,
//!   `region`), `GET /_aws/sns/subscription-tokens/{subscription-arn}`;
//! - the admin API's: `GET`/`DELETE /_retsu/inbox` (`protocol`,
//!   `endpoint`, `topic`, `region`, `account`) with every protocol and the
//!   exact payload, and `GET /_retsu/subscriptions/{arn}/token`.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde_json::{json, Map, Value};

use retsu_core::sns::inbox::{Filter, Record};

use super::{admit, bad_request, error, ok, reply, Admin, AdminRequest};

/// The attributes as Publish took them (`DataType`, `StringValue` or
/// `BinaryValue`), as LocalStack shows them.
fn attributes_json(r: &Record) -> Value {
    let map: Map<String, Value> = r
        .attributes
        .iter()
        .map(|(name, v)| {
            let mut value = Map::new();
            let mut put = |k: &str, v: &Option<String>| {
                if let Some(v) = v {
                    value.insert(k.to_string(), json!(v));
                }
            };
            put("DataType", &v.data_type);
            put("StringValue", &v.string_value);
            put("BinaryValue", &v.binary_value);
            (name.clone(), Value::Object(value))
        })
        .collect();
    Value::Object(map)
}

/// One record in LocalStack's shape: only the fields it has.
fn localstack_json(r: &Record, endpoint_field: &str, message: &str) -> Value {
    let mut out = Map::new();
    out.insert(endpoint_field.into(), json!(r.endpoint));
    if let Some(t) = &r.topic_arn {
        out.insert("TopicArn".into(), json!(t));
    }
    if let Some(s) = &r.subscription_arn {
        out.insert("SubscriptionArn".into(), json!(s));
    }
    out.insert("MessageId".into(), json!(r.message_id));
    out.insert("Message".into(), json!(message));
    if !r.attributes.is_empty() {
        out.insert("MessageAttributes".into(), attributes_json(r));
    }
    if let Some(s) = &r.message_structure {
        out.insert("MessageStructure".into(), json!(s));
    }
    if let Some(s) = &r.subject {
        out.insert("Subject".into(), json!(s));
    }
    Value::Object(out)
}

/// One record as the admin API and the console show it.
pub fn record_json(r: &Record) -> Value {
    json!({
        "id": r.id,
        "at_ms": r.at_ms,
        "protocol": r.protocol,
        "endpoint": r.endpoint,
        "region": r.region,
        "account": r.account,
        "topic": r.topic_arn,
        "subscription": r.subscription_arn,
        "message_id": r.message_id,
        "message": r.message,
        "message_structure": r.message_structure,
        "subject": r.subject,
        "message_attributes": attributes_json(r),
        "payload": r.payload,
    })
}

fn no_content() -> Response {
    Response::builder()
        .status(StatusCode::NO_CONTENT)
        .body(Body::empty())
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

fn query(parts: &axum::http::request::Parts) -> Vec<(String, String)> {
    form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes())
        .into_owned()
        .collect()
}

fn arg<'a>(query: &'a [(String, String)], name: &str) -> Option<&'a str> {
    query
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}

/// The region and account of an ARN (`arn:aws:sns:<region>:<account>:…`).
fn arn_scope(arn: &str) -> Option<(&str, &str)> {
    let mut parts = arn.splitn(6, ':');
    let (arn_word, _, _) = (parts.next()?, parts.next()?, parts.next()?);
    let (region, account) = (parts.next()?, parts.next()?);
    (arn_word == "arn" && parts.next().is_some()).then_some((region, account))
}

/// What both LocalStack inboxes do with the filter: DELETE empties what it
/// selects; GET groups it by endpoint (the named one listed even when it
/// received nothing, as LocalStack lists it), each record as `shape` makes it.
fn grouped(
    admin: &Admin,
    method: &Method,
    filter: &Filter<'_>,
    shape: impl Fn(&Record) -> Value,
) -> Result<Map<String, Value>, Response> {
    if *method == Method::DELETE {
        admin.sns.clear_inbox(filter);
        return Err(no_content());
    }
    if *method != Method::GET {
        return Err(error(StatusCode::METHOD_NOT_ALLOWED, "GET or DELETE"));
    }
    let mut groups = Map::new();
    if let Some(named) = filter.endpoint {
        groups.insert(named.to_string(), json!([]));
    }
    for r in admin.sns.inbox(filter) {
        let entry = groups
            .entry(r.endpoint.clone())
            .or_insert_with(|| json!([]));
        if let Value::Array(list) = entry {
            list.push(shape(&r));
        }
    }
    Ok(groups)
}

/// `/_aws/sns/sms-messages`: LocalStack's SMS inbox, grouped by number.
pub async fn sms_messages(State(admin): State<Arc<Admin>>, req: Request) -> Response {
    let (parts, _) = match admit(&admin, req).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let query = query(&parts);
    let ctx = admin.context();
    let region = arg(&query, "region").unwrap_or(&ctx.region);
    let account = arg(&query, "accountId").unwrap_or(&ctx.account_id);
    let phone = arg(&query, "phoneNumber");
    let filter = Filter {
        protocols: &["sms"],
        endpoint: phone,
        region: Some(region),
        account: Some(account),
        topic_arn: None,
    };
    let by_number = match grouped(&admin, &parts.method, &filter, |r| {
        localstack_json(r, "PhoneNumber", &r.payload)
    }) {
        Ok(groups) => groups,
        Err(answered) => return answered,
    };
    ok(json!({"sms_messages": by_number, "region": region}))
}

/// `/_aws/sns/platform-endpoint-messages`: LocalStack's push inbox,
/// grouped by endpoint ARN (whose region and account win when given).
pub async fn platform_endpoint_messages(State(admin): State<Arc<Admin>>, req: Request) -> Response {
    let (parts, _) = match admit(&admin, req).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let query = query(&parts);
    let ctx = admin.context();
    let endpoint = arg(&query, "endpointArn");
    let (region, account) = match endpoint.and_then(arn_scope) {
        Some(scope) => scope,
        None => (
            arg(&query, "region").unwrap_or(&ctx.region),
            arg(&query, "accountId").unwrap_or(&ctx.account_id),
        ),
    };
    let filter = Filter {
        protocols: &["application"],
        endpoint,
        region: Some(region),
        account: Some(account),
        topic_arn: None,
    };
    let by_endpoint = match grouped(&admin, &parts.method, &filter, |r| {
        localstack_json(r, "TargetArn", &r.message)
    }) {
        Ok(groups) => groups,
        Err(answered) => return answered,
    };
    ok(json!({"platform_endpoint_messages": by_endpoint, "region": region}))
}

/// `GET /_aws/sns/subscription-tokens/{subscription-arn}`.
pub async fn subscription_token(State(admin): State<Arc<Admin>>, req: Request) -> Response {
    let (parts, _) = match admit(&admin, req).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let arn = parts
        .uri
        .path()
        .trim_start_matches("/_aws/sns/subscription-tokens/");
    let arn = super::percent_decode(arn);
    if arn_scope(&arn).is_none() {
        return reply(
            StatusCode::BAD_REQUEST,
            json!({"error": "The provided SubscriptionARN is invalid", "subscription_arn": arn}),
        );
    }
    match admin.sns.subscription_token(&arn).flatten() {
        Some(token) => ok(json!({"subscription_token": token, "subscription_arn": arn})),
        None => reply(
            StatusCode::NOT_FOUND,
            json!({"error": "The provided SubscriptionARN is not found", "subscription_arn": arn}),
        ),
    }
}

/// `GET`/`DELETE /_retsu/inbox`: every recorded delivery, oldest first.
pub fn inbox(admin: &Admin, request: &AdminRequest) -> Response {
    let protocols: Vec<&str> = request
        .param("protocol")
        .map(|p| p.split(',').filter(|p| !p.is_empty()).collect())
        .unwrap_or_default();
    let filter = Filter {
        protocols: &protocols,
        endpoint: request.param("endpoint"),
        region: request.param("region"),
        account: request.param("account"),
        topic_arn: request.param("topic"),
    };
    if request.method == Method::DELETE {
        let deleted = admin.sns.clear_inbox(&filter);
        return ok(json!({"deleted": deleted}));
    }
    let messages: Vec<Value> = admin.sns.inbox(&filter).iter().map(record_json).collect();
    ok(json!({"messages": messages}))
}

/// `GET /_retsu/subscriptions/{arn}/token`: a subscription's confirmation token.
pub fn token(admin: &Admin, arn: &str) -> Response {
    match admin.sns.subscription_token(arn) {
        None => error(StatusCode::NOT_FOUND, format!("no subscription {arn}")),
        Some(None) => bad_request(format!(
            "subscription {arn} never needed confirming: it has no token"
        )),
        Some(Some(token)) => ok(json!({"subscription": arn, "token": token})),
    }
}
