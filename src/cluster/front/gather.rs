//! Requests no one shard can answer: the listings (ListQueues,
//! ListDeadLetterSourceQueues, ListTopics, ListSubscriptions), the admin
//! API's reads across queues and topics, and its changes that hold for
//! every shard (reset, seeded faults, functions).
//!
//! The front asks every shard the caller's own request, unchanged (so a
//! signed request still verifies at each), and merges the answers. The
//! listings page by name, and every shard's engine reads a page token the
//! same way (the last name of the page before), so each shard answers the
//! caller's page from its own names; the front sorts their union, keeps
//! one page and makes the token for the next, as the engine would.
//! Any shard's error is the answer, as a single server's would be. The
//! event feed and stream ask each shard from its own place (`events.rs`).

use std::collections::BTreeMap;

use axum::http::{HeaderMap, StatusCode};
use bytes::Bytes;
use http_body_util::BodyExt;

use super::super::route::{AdminGather, Gathered};
use super::Front;
use crate::protocol::Protocol;

/// One shard's answer, read whole.
pub(super) struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    pub(super) fn into_response(self) -> axum::response::Response {
        let mut response = axum::response::Response::new(axum::body::Body::from(self.body));
        *response.status_mut() = self.status;
        *response.headers_mut() = self.headers;
        response
    }

    pub(super) fn ok(&self) -> bool {
        self.status == StatusCode::OK
    }
}

/// A shard's answer to `parts`, read whole.
async fn read_whole(
    front: &Front,
    shard: i32,
    parts: &axum::http::request::Parts,
    body: Bytes,
) -> Answer {
    let answer = front.answer_from(shard, parts, body, false).await;
    let (head, body) = answer.into_parts();
    let body = body.collect().await.map(|b| b.to_bytes());
    Answer {
        status: if body.is_ok() {
            head.status
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        },
        headers: head.headers,
        body: body.unwrap_or_default(),
    }
}

/// Each shard's answer to its own request (a bodiless admin read).
pub(super) async fn ask_each(
    front: &Front,
    asks: Vec<(i32, axum::http::request::Parts)>,
) -> Vec<(i32, Answer)> {
    let asked = asks.iter().map(|(shard, parts)| async move {
        (*shard, read_whole(front, *shard, parts, Bytes::new()).await)
    });
    futures_util::future::join_all(asked).await
}

/// The SQS listings merged here.
#[derive(Clone, Copy)]
enum SqsList {
    Queues,
    DeadLetterSources,
}

impl Front {
    pub(super) async fn gather(
        &self,
        what: Gathered,
        parts: &axum::http::request::Parts,
        body: Bytes,
    ) -> axum::response::Response {
        use super::super::placement::HOME_SHARD;
        match what {
            Gathered::Queues { max_results, .. } => {
                self.sqs_list(SqsList::Queues, HOME_SHARD, max_results, parts, body)
                    .await
            }
            Gathered::DeadLetterSources {
                queue, max_results, ..
            } => {
                // The dead-letter queue's own shard says whether it exists.
                let own = match &self.placement {
                    Some(p) => p.shard_of(&queue, false).await.ok().flatten(),
                    None => None,
                };
                match own {
                    Some(own) => {
                        self.sqs_list(SqsList::DeadLetterSources, own, max_results, parts, body)
                            .await
                    }
                    None => self.answer_from(HOME_SHARD, parts, body, false).await,
                }
            }
            Gathered::Topics { .. } => self.sns_list(SnsList::Topics, parts, body).await,
            Gathered::Subscriptions { .. } => {
                self.sns_list(SnsList::Subscriptions, parts, body).await
            }
            Gathered::Admin(admin) => self.admin(admin, parts, body).await,
            // Kept alike in every shard (a function any mapping may invoke):
            // changes go to every shard, reads to the home shard.
            Gathered::Lambda if parts.method != axum::http::Method::GET => {
                self.everywhere(parts, body).await
            }
            Gathered::Lambda => self.first_found(parts, body).await,
            Gathered::Applications { .. } => {
                self.sns_list(SnsList::Applications, parts, body).await
            }
            Gathered::Metrics => self.answer_from(HOME_SHARD, parts, body, false).await,
        }
    }

    /// Every shard's answer to the request, by shard.
    async fn ask_all(&self, parts: &axum::http::request::Parts, body: Bytes) -> Vec<Answer> {
        let asked =
            (1..=self.shard_count()).map(|shard| read_whole(self, shard, parts, body.clone()));
        futures_util::future::join_all(asked).await
    }

    /// A change that holds for every shard: made in each; the home
    /// shard's answer, or the first refusal.
    async fn everywhere(
        &self,
        parts: &axum::http::request::Parts,
        body: Bytes,
    ) -> axum::response::Response {
        let mut answers = self.ask_all(parts, body).await;
        let failed = answers
            .iter()
            .position(|a| !a.ok() && a.status != StatusCode::NOT_FOUND);
        let at = failed.unwrap_or(0);
        answers.swap_remove(at).into_response()
    }

    /// A read of one thing some shard has (a message's history, a mapping
    /// by its id): the first answer that is not 404, else the home shard's.
    async fn first_found(
        &self,
        parts: &axum::http::request::Parts,
        body: Bytes,
    ) -> axum::response::Response {
        let mut answers = self.ask_all(parts, body).await;
        let at = answers
            .iter()
            .position(|a| a.status != StatusCode::NOT_FOUND)
            .unwrap_or(0);
        answers.swap_remove(at).into_response()
    }

    async fn admin(
        &self,
        what: AdminGather,
        parts: &axum::http::request::Parts,
        body: Bytes,
    ) -> axum::response::Response {
        use super::super::placement::HOME_SHARD;
        use AdminGather as A;
        let get = parts.method == axum::http::Method::GET;
        match what {
            A::Faults | A::Functions if !get => self.everywhere(parts, body).await,
            A::Inbox | A::SmsMessages | A::PlatformEndpointMessages if !get => {
                self.everywhere(parts, body).await
            }
            // A message's history is in each shard its queues were in
            // (a dead-letter queue may be in another).
            A::MessageHistory => {
                let answers: Vec<Answer> = self
                    .ask_all(parts, body)
                    .await
                    .into_iter()
                    .filter(|a| a.status != StatusCode::NOT_FOUND)
                    .collect();
                if answers.is_empty() {
                    return self
                        .answer_from(HOME_SHARD, parts, Bytes::new(), false)
                        .await;
                }
                merge_json(answers, &[])
            }
            // Seeded faults are alike in every shard; what each injected
            // is added up by queue.
            A::Faults => {
                let answers = self.ask_all(parts, body).await;
                merge_json(answers, &[])
            }
            A::EventStream => self.streams(parts).await,
            A::Events => self.events(parts).await,
            // Functions are alike in every shard.
            A::Functions => self.answer_from(HOME_SHARD, parts, body, false).await,
            A::Health
            | A::Queues
            | A::Topics
            | A::Inbox
            | A::SmsMessages
            | A::PlatformEndpointMessages
            | A::LambdaMappings
            | A::LambdaInvocations
            | A::Reset => {
                let answers = self.ask_all(parts, body).await;
                // What each shard counted, summed.
                let summed: &[&str] = match what {
                    A::Health => &["queues"],
                    A::Reset => &["queues_deleted", "topics_deleted"],
                    _ => &[],
                };
                merge_json(answers, summed)
            }
        }
    }

    /// ListQueues or ListDeadLetterSourceQueues: each shard's page of the
    /// caller's page, merged. `own`: the shard whose error counts (the
    /// dead-letter queue's; any shard's for ListQueues).
    async fn sqs_list(
        &self,
        list: SqsList,
        own: i32,
        max_results: Option<i32>,
        parts: &axum::http::request::Parts,
        body: Bytes,
    ) -> axum::response::Response {
        let answers = self.ask_all(parts, body).await;
        // The query protocol answers in JSON when the caller accepts it:
        // rendered as the shards rendered it.
        let json = answers.iter().any(|a| {
            a.ok()
                && a.headers
                    .get(axum::http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|t| t.contains("json"))
        });
        let protocol = match crate::protocol::protocol_from_headers(&parts.headers) {
            Protocol::Query if json => Protocol::QueryAsJson,
            p => p,
        };
        let mut urls: Vec<String> = Vec::new();
        let mut more = false;
        let mut first: Option<Answer> = None;
        for (i, answer) in answers.into_iter().enumerate() {
            let shard = i as i32 + 1;
            if !answer.ok() {
                // Another shard does not hold the dead-letter queue.
                let counts = matches!(list, SqsList::Queues) || shard == own;
                if counts {
                    return answer.into_response();
                }
                continue;
            }
            match read_urls(protocol, &answer.body) {
                Some((found, token)) => {
                    urls.extend(found);
                    more |= token;
                }
                None => return answer.into_response(),
            }
            if first.is_none() {
                first = Some(answer);
            }
        }
        let name = |url: &String| url.rsplit('/').next().unwrap_or(url).to_string();
        urls.sort_by_key(name);
        let page = max_results.map_or(1000, |m| m.clamp(1, 1000) as usize);
        more |= urls.len() > page;
        urls.truncate(page);
        let next_token = (more && max_results.is_some())
            .then(|| {
                urls.last()
                    .map(|u| crate::engine::list_page_token(&name(u)))
            })
            .flatten();
        use crate::api::{ListDeadLetterSourceQueuesResult, ListQueuesResult, Response};
        let response = match list {
            SqsList::Queues => Response::ListQueues(ListQueuesResult {
                queue_urls: urls,
                next_token,
            }),
            SqsList::DeadLetterSources => {
                Response::ListDeadLetterSourceQueues(ListDeadLetterSourceQueuesResult {
                    queue_urls: urls,
                    next_token,
                })
            }
        };
        let id = first
            .and_then(|a| {
                a.headers
                    .get(crate::protocol::REQUEST_ID_HEADER)
                    .and_then(|v| v.to_str().ok())
                    .map(String::from)
            })
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        crate::protocol::encode_response(protocol, &response, &id).into_http()
    }

    /// ListTopics, ListSubscriptions or ListPlatformApplications (SNS
    /// pages of 100 by ARN).
    async fn sns_list(
        &self,
        list: SnsList,
        parts: &axum::http::request::Parts,
        body: Bytes,
    ) -> axum::response::Response {
        let answers = self.ask_all(parts, body).await;
        let mut members: Vec<BTreeMap<String, String>> = Vec::new();
        let mut more = false;
        let mut id = None;
        for answer in answers {
            if !answer.ok() {
                return answer.into_response();
            }
            let Ok(text) = std::str::from_utf8(&answer.body) else {
                return answer.into_response();
            };
            // Only the query protocol's XML is merged; another rendering
            // is the home shard's alone.
            let Some((found, token, request_id)) = xml_members(text, list.fields()) else {
                return answer.into_response();
            };
            members.extend(found);
            more |= token;
            id = id.or(request_id);
        }
        let key = list.fields()[0];
        members.sort_by(|a, b| a.get(key).cmp(&b.get(key)));
        const PAGE: usize = 100;
        more |= members.len() > PAGE;
        members.truncate(PAGE);
        let next_token = more
            .then(|| members.last().and_then(|m| m.get(key)))
            .flatten()
            .map(|k| base64::Engine::encode(&base64::engine::general_purpose::STANDARD, k));
        let field = |m: &BTreeMap<String, String>, f: &str| m.get(f).cloned().unwrap_or_default();
        use crate::sns::api::{
            ListPlatformApplicationsResult, ListSubscriptionsResult, ListTopicsResult,
            PlatformApplicationEntry, SnsResponse, SubscriptionEntry, TopicEntry,
        };
        let response = match list {
            SnsList::Topics => SnsResponse::ListTopics(ListTopicsResult {
                topics: members
                    .iter()
                    .map(|m| TopicEntry {
                        topic_arn: field(m, "TopicArn"),
                    })
                    .collect(),
                next_token,
            }),
            SnsList::Subscriptions => SnsResponse::ListSubscriptions(ListSubscriptionsResult {
                subscriptions: members
                    .iter()
                    .map(|m| SubscriptionEntry {
                        subscription_arn: field(m, "SubscriptionArn"),
                        owner: field(m, "Owner"),
                        protocol: field(m, "Protocol"),
                        endpoint: field(m, "Endpoint"),
                        topic_arn: field(m, "TopicArn"),
                    })
                    .collect(),
                next_token,
            }),
            SnsList::Applications => {
                SnsResponse::ListPlatformApplications(ListPlatformApplicationsResult {
                    platform_applications: members
                        .iter()
                        .map(|m| PlatformApplicationEntry {
                            platform_application_arn: field(m, "PlatformApplicationArn"),
                            attributes: m
                                .iter()
                                .filter_map(|(k, v)| {
                                    Some((k.strip_prefix(ATTRIBUTE)?.to_string(), v.clone()))
                                })
                                .collect(),
                        })
                        .collect(),
                    next_token,
                })
            }
        };
        let id = id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        crate::protocol::sns::encode(&Ok(response), &id).into_http()
    }
}

#[derive(Clone, Copy)]
enum SnsList {
    Topics,
    Subscriptions,
    Applications,
}

impl SnsList {
    /// A member's fields; the first is what the pages are ordered by.
    fn fields(self) -> &'static [&'static str] {
        match self {
            SnsList::Topics => &["TopicArn"],
            SnsList::Applications => &["PlatformApplicationArn"],
            SnsList::Subscriptions => &[
                "SubscriptionArn",
                "Owner",
                "Protocol",
                "Endpoint",
                "TopicArn",
            ],
        }
    }
}

/// The queue URLs of a ListQueues or ListDeadLetterSourceQueues answer in
/// `protocol`, and whether it had a next token; `None`: not readable.
fn read_urls(protocol: Protocol, body: &[u8]) -> Option<(Vec<String>, bool)> {
    match protocol {
        Protocol::Query => {
            let text = std::str::from_utf8(body).ok()?;
            let (members, token, _) = xml_members(text, &["QueueUrl"])?;
            let urls = members
                .into_iter()
                .filter_map(|mut m| m.remove("QueueUrl"))
                .collect();
            Some((urls, token))
        }
        Protocol::Json | Protocol::QueryAsJson => {
            let value: serde_json::Value = serde_json::from_slice(body).ok()?;
            let mut urls = Vec::new();
            let mut token = false;
            find_json(&value, &mut urls, &mut token);
            Some((urls, token))
        }
    }
}

/// Collects the strings of any `QueueUrls`/`queueUrls` array and notes a
/// `NextToken`, wherever they are nested (the query protocol's JSON nests
/// them under the response and result).
fn find_json(value: &serde_json::Value, urls: &mut Vec<String>, token: &mut bool) {
    if let serde_json::Value::Object(map) = value {
        for (k, v) in map {
            match (k.as_str(), v) {
                ("QueueUrls" | "queueUrls", serde_json::Value::Array(items)) => {
                    urls.extend(items.iter().filter_map(|u| u.as_str().map(String::from)));
                }
                ("NextToken", serde_json::Value::String(t)) if !t.is_empty() => *token = true,
                _ => find_json(v, urls, token),
            }
        }
    }
}

/// The items of a query-protocol list answer: each `<member>` (or, for
/// a list of bare elements such as `<QueueUrl>`, each such element) as
/// its fields' texts, and a member's map entries (`<entry><key>`,
/// `<value>`) under their key after [`ATTRIBUTE`]; whether a non-empty `<NextToken>` was there; the
/// `<RequestId>`. `None`: not XML.
type Members = (Vec<BTreeMap<String, String>>, bool, Option<String>);

/// The prefix of a member's map entries in [`xml_members`].
const ATTRIBUTE: &str = "Attributes.";

fn xml_members(text: &str, fields: &[&str]) -> Option<Members> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut members: Vec<BTreeMap<String, String>> = Vec::new();
    let mut in_member = false;
    let mut open: Option<String> = None;
    let mut entry_key: Option<String> = None;
    let mut token = false;
    let mut request_id = None;
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) => {
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                if name == "member" {
                    in_member = true;
                    members.push(BTreeMap::new());
                } else if fields.contains(&name.as_str()) && !in_member && fields.len() == 1 {
                    // A bare element list: each element is an item.
                    members.push(BTreeMap::new());
                    open = Some(name);
                } else {
                    open = Some(name);
                }
            }
            Event::End(e) => {
                if e.local_name().as_ref() == b"member" {
                    in_member = false;
                }
                open = None;
            }
            Event::Text(t) => {
                let Some(name) = &open else { continue };
                let value = t.unescape().ok()?.into_owned();
                match name.as_str() {
                    "NextToken" if !value.is_empty() => token = true,
                    "RequestId" => request_id = Some(value),
                    "key" if in_member => entry_key = Some(value),
                    "value" if in_member => {
                        if let (Some(k), Some(m)) = (entry_key.take(), members.last_mut()) {
                            m.insert(format!("{ATTRIBUTE}{k}"), value);
                        }
                    }
                    f if fields.contains(&f) => {
                        if let Some(m) = members.last_mut() {
                            m.insert(f.to_string(), value);
                        }
                    }
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Some((members, token, request_id))
}

/// Admin answers (JSON) merged: lists concatenated and ordered, the
/// `summed` counts added up, the rest as the home shard says. A shard's
/// error is the answer.
fn merge_json(answers: Vec<Answer>, summed: &[&str]) -> axum::response::Response {
    let mut answers = answers.into_iter();
    let Some(first) = answers.next() else {
        return axum::response::Response::new(axum::body::Body::empty());
    };
    if !first.ok() {
        return first.into_response();
    }
    let Ok(mut merged) = serde_json::from_slice::<serde_json::Value>(&first.body) else {
        return first.into_response();
    };
    for answer in answers {
        if !answer.ok() {
            return answer.into_response();
        }
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(&answer.body) else {
            continue;
        };
        merge_value(&mut merged, value, summed);
    }
    fold_scopes(&mut merged);
    order_lists(&mut merged);
    merged_response(first.status, first.headers, merged.to_string().into())
}

/// A merged answer: `body` with a shard's status and headers (its length
/// was its own).
pub(super) fn merged_response(
    status: StatusCode,
    mut headers: HeaderMap,
    body: axum::body::Body,
) -> axum::response::Response {
    headers.remove(axum::http::header::CONTENT_LENGTH);
    let mut response = axum::response::Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

fn merge_value(into: &mut serde_json::Value, from: serde_json::Value, summed: &[&str]) {
    use serde_json::Value;
    match (into, from) {
        (Value::Array(a), Value::Array(b)) => a.extend(b),
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(Value::Number(n)) if summed.contains(&k.as_str()) => {
                        let sum = n.as_u64().unwrap_or(0) + v.as_u64().unwrap_or(0);
                        *n = sum.into();
                    }
                    Some(existing @ (Value::Array(_) | Value::Object(_))) => {
                        merge_value(existing, v, summed)
                    }
                    // What one shard has and another has not.
                    Some(existing @ Value::Null) => *existing = v,
                    Some(_) => {}
                    None => {
                        a.insert(k, v);
                    }
                }
            }
        }
        _ => {}
    }
}

/// Lists of objects are ordered by their time, else name or ARN, as one
/// engine lists them.
pub(super) fn order_lists(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Array(items) => {
            for item in items.iter_mut() {
                order_lists(item);
            }
            // The first of these that every item has orders them.
            const ORDERS: [&[&str]; 9] = [
                &["at_ms"],
                &["at"],
                &["time"],
                &["timestamp"],
                &["region", "account", "name"],
                &["name"],
                &["arn"],
                &["url"],
                &["id"],
            ];
            let order = ORDERS.iter().find(|keys| {
                !items.is_empty()
                    && items
                        .iter()
                        .all(|i| keys.iter().all(|k| i.get(*k).is_some()))
            });
            // At the same time, a message's arrival in a queue of another
            // shard comes after what sent it there.
            let arrival = |i: &Value| {
                matches!(
                    i.get("kind").and_then(Value::as_str),
                    Some("arrived_from_source" | "restored_in")
                )
            };
            if let Some(keys) = order {
                items.sort_by(|a, b| {
                    keys.iter()
                        .map(|k| {
                            let (a, b) = (&a[*k], &b[*k]);
                            match (a.as_f64(), b.as_f64()) {
                                (Some(x), Some(y)) => x.total_cmp(&y),
                                _ => a.to_string().cmp(&b.to_string()),
                            }
                        })
                        .find(|o| o.is_ne())
                        .unwrap_or_else(|| arrival(a).cmp(&arrival(b)))
                });
            }
        }
        Value::Object(map) => {
            for v in map.values_mut() {
                order_lists(v);
            }
        }
        _ => {}
    }
}

/// Seeded faults' scopes (`{"queue": …, "injected": {kind: n}}`), listed
/// by every shard alike: one entry per queue, with what every shard
/// injected added up.
fn fold_scopes(value: &mut serde_json::Value) {
    use serde_json::Value;
    let Some(Value::Array(items)) = value.get_mut("queues") else {
        return;
    };
    if !items
        .iter()
        .all(|i| i.get("queue").is_some() && i.get("injected").is_some())
    {
        return;
    }
    let mut folded: Vec<Value> = Vec::new();
    for item in items.drain(..) {
        match folded.iter_mut().find(|f| f["queue"] == item["queue"]) {
            Some(f) => {
                if let (Some(into), Some(from)) =
                    (f["injected"].as_object_mut(), item["injected"].as_object())
                {
                    for (kind, n) in from {
                        let sum = into.get(kind).and_then(Value::as_u64).unwrap_or(0)
                            + n.as_u64().unwrap_or(0);
                        into.insert(kind.clone(), sum.into());
                    }
                }
            }
            None => folded.push(item),
        }
    }
    *items = folded;
}
