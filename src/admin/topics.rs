//! `GET /_retsu/topics`: every SNS topic with its subscriptions (filter
//! policies included), the last steps of its fan-outs — deliveries, and
//! why a message was filtered out — and what its subscriptions of
//! recorded protocols (e-mail, SMS, …) were sent. Read-only; nothing is
//! consumed.

use axum::response::Response;
use serde_json::{json, Value};

use super::{ok, Admin};
use crate::engine::events::TopicEvent;

/// One fan-out step, as the live stream and this listing show it.
pub fn topic_event_json(e: &TopicEvent) -> Value {
    json!({
        "seq": e.seq,
        "at_ms": e.at_ms,
        "kind": e.kind.name(),
        "topic": &*e.topic_arn,
        "message_id": &*e.message_id,
        "subscription": e.subscription_arn.as_deref(),
        "endpoint": e.endpoint.as_deref(),
        "protocol": e.protocol,
        "delivered_as": e.delivered_as.map(|id| id.to_string()),
        "detail": e.reason.as_deref(),
    })
}

/// Recorded deliveries the listing shows per topic (the rest: `/_retsu/inbox`).
const INBOX_SHOWN: usize = 50;

pub fn list(admin: &Admin) -> Response {
    let topics = admin.sns.topics();
    let mut inboxes = admin.sns.recent_inbox(INBOX_SHOWN);
    admin
        .topic_steps
        .retain(|arn| topics.iter().any(|t| &*t.arn == arn));
    let topics: Vec<Value> = topics
        .iter()
        .map(|t| {
            let subscriptions: Vec<Value> = t
                .subscriptions
                .iter()
                .map(|s| {
                    json!({
                        "arn": s.arn,
                        "protocol": s.protocol,
                        "endpoint": s.endpoint,
                        "pending": s.pending,
                        "token": s.token.as_deref().filter(|_| s.pending),
                        "raw": s.raw(),
                        "filter_policy": s.attributes.get("FilterPolicy"),
                        "filter_policy_scope": s.attributes.get("FilterPolicy").map(|_| {
                            s.attributes
                                .get("FilterPolicyScope")
                                .map_or("MessageAttributes", String::as_str)
                        }),
                        "redrive_policy": s.attributes.get("RedrivePolicy"),
                    })
                })
                .collect();
            json!({
                "arn": t.arn,
                "name": t.name,
                "region": t.region,
                "account": t.account,
                "fifo": t.fifo,
                "attributes": t.all_attributes(),
                "tags": t.tags,
                "subscriptions": subscriptions,
                "recent": admin.topic_steps.recent(&t.arn).iter().map(topic_event_json).collect::<Vec<_>>(),
                "inbox": inboxes
                    .remove(&t.arn)
                    .unwrap_or_default()
                    .iter()
                    .map(super::sns_inbox::record_json)
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    ok(json!({ "topics": topics }))
}
