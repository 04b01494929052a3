//! Subscribe, ConfirmSubscription, Unsubscribe, the two listings, and
//! Get/SetSubscriptionAttributes.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;
use crate::clock::format_rfc3339;
use crate::engine::TopicDelivery;
use crate::filter_policy::{FilterPolicy, Scope};
use crate::sns::envelope::{self, Confirmation, EnvelopeKind};
use crate::sns::http::HttpDelivery;
use crate::sns::inbox::Record;
use crate::sns::model::{Subscription, Topic};

/// Sends a subscription's confirmation (or, unsubscribing, its
/// UnsubscribeConfirmation): a POST to an HTTP endpoint, a message into
/// another account's queue. Visiting its SubscribeURL (or
/// ConfirmSubscription with its token) confirms.
fn send_confirmation(
    sns: &Sns,
    ctx: &RequestContext,
    topic: &Topic,
    sub: &Subscription,
    kind: EnvelopeKind,
    token: &str,
) {
    let message = match kind {
        EnvelopeKind::UnsubscribeConfirmation => format!(
            "You have chosen to deactivate subscription {}.\nTo cancel this operation and restore the subscription, visit the SubscribeURL included in this message.",
            sub.arn
        ),
        _ => format!(
            "You have chosen to subscribe to the topic {}.\nTo confirm the subscription, visit the SubscribeURL included in this message.",
            topic.arn
        ),
    };
    let subscribe_url = format!(
        "{}/?Action=ConfirmSubscription&TopicArn={}&Token={token}",
        ctx.base_url, topic.arn
    );
    let message_id = uuid::Uuid::new_v4().to_string();
    let timestamp = format_rfc3339(sns.engine().now());
    let field = |name: &str| -> Option<&str> {
        match name {
            "Message" => Some(&message),
            "MessageId" => Some(&message_id),
            "SubscribeURL" => Some(&subscribe_url),
            "Timestamp" => Some(&timestamp),
            "Token" => Some(token),
            "TopicArn" => Some(&topic.arn),
            "Type" => Some(kind.as_str()),
            _ => None,
        }
    };
    let version = topic.signature_version();
    let signature = sns
        .signer()
        .sign(version, &envelope::string_to_sign(kind, &field));
    let cert_url = format!(
        "{}/_retsu/sns/{}",
        ctx.base_url,
        sns.signer().certificate_file_name()
    );
    let body = envelope::confirmation_json(&Confirmation {
        kind,
        message_id: &message_id,
        token,
        topic_arn: &topic.arn,
        message: &message,
        subscribe_url: &subscribe_url,
        timestamp: &timestamp,
        signature: (version, &signature, &cert_url),
    });
    let email = match sub.protocol.as_str() {
        "email" => Some("email"),
        "email-json" => Some("email-json"),
        _ => None,
    };
    if let Some(protocol) = email {
        // An e-mail address gets the confirmation as a mail (its text, or
        // the JSON document for email-json); the inbox keeps it.
        let payload = if protocol == "email" {
            format!("{message}\n\n{subscribe_url}")
        } else {
            body
        };
        sns.record(Record {
            id: 0,
            at_ms: sns.engine().now(),
            protocol,
            endpoint: sub.endpoint.clone(),
            region: topic.region.clone(),
            account: topic.account.clone(),
            topic_arn: Some(topic.arn.clone()),
            subscription_arn: Some(sub.arn.clone()),
            message_id,
            message,
            message_structure: None,
            subject: Some(match kind {
                EnvelopeKind::UnsubscribeConfirmation => {
                    "AWS Notification - Unsubscribe Confirmation".into()
                }
                _ => "AWS Notification - Subscription Confirmation".into(),
            }),
            attributes: BTreeMap::new(),
            payload,
        });
        return;
    }
    if sub.protocol == "sqs" {
        let delivery = TopicDelivery {
            body,
            ..TopicDelivery::default()
        };
        let _ = sns.engine().deliver(&sub.endpoint, delivery);
        return;
    }
    let mut headers = vec![
        ("x-amz-sns-message-type", kind.as_str().to_string()),
        ("x-amz-sns-message-id", message_id.clone()),
        ("x-amz-sns-topic-arn", topic.arn.clone()),
    ];
    if kind == EnvelopeKind::UnsubscribeConfirmation {
        headers.push(("x-amz-sns-subscription-arn", sub.arn.clone()));
    }
    headers.push(("Content-Type", "text/plain; charset=UTF-8".into()));
    headers.push(("Accept-Encoding", "gzip,deflate".into()));
    headers.push((
        "User-Agent",
        "Amazon Simple Notification Service Agent".into(),
    ));
    sns.post(HttpDelivery {
        url: sub.endpoint.clone(),
        kind,
        headers,
        body,
        subscription_arn: sub.arn.clone(),
        topic_arn: topic.arn.clone(),
        message_id,
        retry: sub.retry_policy(topic),
        dead_letter: None,
    });
}

/// Whether `endpoint` is a phone number SNS takes: E.164 (`+` and up
/// to 15 digits, the first not 0), single `-`, `.` or `/` between digits
/// tolerated. AWS does not document its exact rule; this is the one the
/// emulators that compared themselves with it (moto, LocalStack) apply.
pub(crate) fn phone_number(endpoint: &str) -> bool {
    let digits_part = endpoint.strip_prefix('+').unwrap_or(endpoint);
    let separator = |c: char| matches!(c, '-' | '.' | '/');
    let mut previous_separator = true;
    for c in digits_part.chars() {
        match c {
            '0'..='9' => previous_separator = false,
            c if separator(c) && !previous_separator => previous_separator = true,
            _ => return false,
        }
    }
    let digits: String = digits_part.chars().filter(char::is_ascii_digit).collect();
    !previous_separator && (2..=15).contains(&digits.len()) && !digits.starts_with('0')
}

/// Whether `endpoint` looks like an e-mail address as SNS checks one: one
/// `@` with text on both sides and no spaces.
fn email_address(endpoint: &str) -> bool {
    let mut halves = endpoint.split('@');
    match (halves.next(), halves.next(), halves.next()) {
        (Some(local), Some(domain), None) => {
            !local.is_empty()
                && !domain.is_empty()
                && !endpoint
                    .chars()
                    .any(|c| c.is_whitespace() || c == ',' || c == ';')
        }
        _ => false,
    }
}

/// Whether `arn` is an ARN of `service` with a resource.
fn service_arn(arn: &str, service: &str) -> bool {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    parts.len() == 6 && parts[0] == "arn" && parts[2] == service && !parts[5].is_empty()
}

/// The endpoint checks of Subscribe, per protocol, in AWS's wording.
fn check_endpoint(protocol: &str, endpoint: &str) -> Result<(), SnsError> {
    let fine = match protocol {
        "sqs" => sqs_arn(endpoint),
        "http" | "https" => endpoint.starts_with(&format!("{protocol}://")),
        "email" | "email-json" => email_address(endpoint),
        "sms" => phone_number(endpoint),
        "lambda" => service_arn(endpoint, "lambda"),
        "firehose" => service_arn(endpoint, "firehose"),
        "application" => crate::sns::model::endpoint_platform(endpoint).is_some(),
        _ => {
            return Err(SnsError::invalid_parameter(format!(
                "Amazon SNS does not support this protocol string: {protocol}"
            )))
        }
    };
    if fine {
        return Ok(());
    }
    Err(match protocol {
        "sqs" => SnsError::invalid_parameter("SQS endpoint ARN"),
        "http" | "https" => {
            SnsError::invalid_parameter("Endpoint must match the specified protocol")
        }
        "email" | "email-json" => SnsError::invalid_parameter("Email address"),
        "sms" => SnsError::invalid_parameter_text(format!("Invalid SMS endpoint: {endpoint}")),
        "lambda" => SnsError::invalid_parameter("Lambda endpoint ARN"),
        "firehose" => SnsError::invalid_parameter("Firehose endpoint ARN"),
        _ => SnsError::invalid_parameter("Application endpoint arn invalid"),
    })
}

/// Whether a new subscription of `protocol` waits for ConfirmSubscription:
/// HTTP endpoints and e-mail addresses confirm through the message they
/// are sent, a queue of another account by its owner's call; SMS, Lambda,
/// Firehose and platform endpoints are the subscriber's own and are
/// confirmed at once.
fn needs_confirmation(protocol: &str, endpoint: &str, topic_account: &str) -> bool {
    match protocol {
        "sqs" => endpoint.split(':').nth(4).unwrap_or_default() != topic_account,
        "http" | "https" | "email" | "email-json" => true,
        _ => false,
    }
}

/// The prefix of an attribute error: Subscribe wraps it in `Attributes`.
fn attribute_error(via_subscribe: bool, detail: impl std::fmt::Display) -> SnsError {
    if via_subscribe {
        SnsError::invalid_parameter(format!("Attributes Reason: {detail}"))
    } else {
        SnsError::invalid_parameter(detail)
    }
}

/// Whether `arn` is an SQS queue ARN.
fn sqs_arn(arn: &str) -> bool {
    let parts: Vec<&str> = arn.split(':').collect();
    parts.len() == 6 && parts[0] == "arn" && parts[2] == "sqs" && !parts[5].is_empty()
}

/// Sets one attribute on `sub`, validated as AWS validates it.
/// AWS's quotas on subscriptions with a filter policy: per topic, and per
/// account (across the regions this server serves, which AWS counts apart;
/// a test suite never gets near either).
const FILTER_POLICIES_PER_TOPIC: usize = 200;
const FILTER_POLICIES_PER_ACCOUNT: usize = 10_000;

/// Refuses one more filter policy on `topic_arn` once a quota is reached.
fn filter_policy_quota(state: &crate::sns::State, topic_arn: &str) -> Result<(), SnsError> {
    let filtered = |t: &super::super::model::Topic| {
        t.subscriptions
            .iter()
            .filter(|s| s.filter.is_some())
            .count()
    };
    let topic = &state.topics[topic_arn];
    if filtered(topic) >= FILTER_POLICIES_PER_TOPIC {
        return Err(filter_policy_limit(format!(
            "a topic can have at most {FILTER_POLICIES_PER_TOPIC} subscriptions with a filter policy"
        )));
    }
    let in_account: usize = state
        .topics
        .values()
        .filter(|t| t.account == topic.account)
        .map(filtered)
        .sum();
    if in_account >= FILTER_POLICIES_PER_ACCOUNT {
        return Err(filter_policy_limit(format!(
            "an account can have at most {FILTER_POLICIES_PER_ACCOUNT} subscriptions with a filter policy"
        )));
    }
    Ok(())
}

fn filter_policy_limit(why: String) -> SnsError {
    SnsError::new(
        "FilterPolicyLimitExceeded",
        403,
        format!("Filter policy limit exceeded: {why}"),
    )
}

fn set_attribute(
    sub: &mut Subscription,
    topic_fifo: bool,
    name: &str,
    value: &str,
    via_subscribe: bool,
) -> Result<(), SnsError> {
    match name {
        "RawMessageDelivery" => {
            let v = value.to_ascii_lowercase();
            if v != "true" && v != "false" {
                return Err(attribute_error(
                    via_subscribe,
                    format!("RawMessageDelivery: Invalid value [{value}]. Must be true or false."),
                ));
            }
            sub.attributes.insert(name.into(), v);
        }
        "FilterPolicyScope" => {
            let scope = match value {
                "MessageAttributes" => Scope::MessageAttributes,
                "MessageBody" => Scope::MessageBody,
                _ => {
                    return Err(attribute_error(
                        via_subscribe,
                        format!("FilterPolicyScope: Invalid value [{value}]. Please use either MessageBody or MessageAttributes"),
                    ))
                }
            };
            // The policy in place must hold under the new scope.
            if let Some(policy) = sub.attributes.get("FilterPolicy") {
                let compiled = FilterPolicy::parse(policy, scope)
                    .map_err(|e| SnsError::invalid_parameter_text(e.wire_message(via_subscribe)))?;
                sub.filter = Some(Arc::new(compiled));
            }
            sub.attributes.insert(name.into(), value.into());
        }
        "FilterPolicy" => {
            if value.is_empty() {
                sub.attributes.remove(name);
                sub.filter = None;
                return Ok(());
            }
            let compiled = FilterPolicy::parse(value, sub.scope())
                .map_err(|e| SnsError::invalid_parameter_text(e.wire_message(via_subscribe)))?;
            sub.filter = Some(Arc::new(compiled));
            sub.attributes.insert(name.into(), value.into());
        }
        "RedrivePolicy" => {
            if value.is_empty() {
                sub.attributes.remove(name);
                return Ok(());
            }
            let parsed: serde_json::Value = serde_json::from_str(value).map_err(|_| {
                attribute_error(via_subscribe, "RedrivePolicy: failed to parse JSON.")
            })?;
            let target = parsed
                .get("deadLetterTargetArn")
                .and_then(|v| v.as_str())
                .filter(|a| sqs_arn(a))
                .ok_or_else(|| {
                    attribute_error(
                        via_subscribe,
                        "RedrivePolicy: deadLetterTargetArn is an invalid arn",
                    )
                })?;
            if topic_fifo && sub.endpoint.ends_with(".fifo") && !target.ends_with(".fifo") {
                return Err(attribute_error(
                    via_subscribe,
                    "RedrivePolicy: must use a FIFO queue as DLQ for a FIFO Subscription to a FIFO Topic.",
                ));
            }
            sub.attributes.insert(name.into(), value.into());
        }
        "DeliveryPolicy" => {
            if serde_json::from_str::<serde_json::Value>(value).map_or(true, |v| !v.is_object()) {
                return Err(attribute_error(
                    via_subscribe,
                    "DeliveryPolicy: failed to parse JSON.",
                ));
            }
            sub.attributes.insert(name.into(), value.into());
        }
        "SubscriptionRoleArn" | "ReplayPolicy" => {
            sub.attributes.insert(name.into(), value.into());
        }
        _ => return Err(SnsError::invalid_parameter("AttributeName")),
    }
    Ok(())
}

/// A new confirmation token: 288 lower-case hex digits, as AWS's are.
fn new_token() -> String {
    (0..9)
        .map(|_| format!("{:032x}", uuid::Uuid::new_v4().as_u128()))
        .collect()
}

impl SnsUnit for SubscribeRequest {
    type Response = SubscriptionArnResult;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<SubscriptionArnResult, SnsError> {
        let arn = topic_key(ctx, "TopicArn", &self.topic_arn)?;
        let protocol = required(&self.protocol, "Protocol")?.to_string();
        let endpoint = self.endpoint.clone().unwrap_or_default();
        let return_arn = self
            .return_subscription_arn
            .as_deref()
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        // AWS's order: the topic, then the protocol and its endpoint, then
        // the attributes (filter policy included).
        let mut state = sns.lock();
        let topic = topic_mut(&mut state, &arn)?;
        check_endpoint(&protocol, &endpoint)?;
        if protocol == "sqs" && endpoint.ends_with(".fifo") && !topic.fifo {
            return Err(SnsError::invalid_parameter(
                "Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics",
            ));
        }
        if protocol == "firehose" && !self.attributes.contains_key("SubscriptionRoleArn") {
            return Err(SnsError::invalid_parameter(
                "Attributes Reason: SubscriptionRoleArn is required for the firehose protocol",
            ));
        }
        let pending = needs_confirmation(&protocol, &endpoint, &topic.account);
        let mut candidate = Subscription {
            arn: format!("{arn}:{}", uuid::Uuid::new_v4()),
            topic_arn: arn.clone(),
            protocol: protocol.clone(),
            endpoint: endpoint.clone(),
            owner: ctx.account_id.clone(),
            pending,
            token: pending.then(new_token),
            attributes: BTreeMap::new(),
            filter: None,
            shared_names: Default::default(),
            queue: Default::default(),
        };
        // The scope first, so the policy is checked under it.
        let mut attributes: Vec<(&String, &String)> = self.attributes.iter().collect();
        attributes.sort_by_key(|(k, _)| *k != "FilterPolicyScope");
        for (k, v) in attributes {
            set_attribute(&mut candidate, topic.fifo, k, v, true)?;
        }
        if let Some(existing) = topic
            .subscriptions
            .iter()
            .find(|s| s.protocol == protocol && s.endpoint == endpoint)
        {
            // Idempotent when the attributes agree (defaults may be spelled out).
            let differs = candidate.attributes.iter().any(|(k, v)| {
                let current = existing.attributes.get(k).map(String::as_str);
                let default = match k.as_str() {
                    "RawMessageDelivery" => Some("false"),
                    "FilterPolicyScope" => Some("MessageAttributes"),
                    _ => None,
                };
                current.or(default) != Some(v.as_str())
            });
            if differs {
                return Err(SnsError::invalid_parameter(
                    "Attributes Reason: Subscription already exists with different attributes",
                ));
            }
            let subscription_arn = if existing.pending && !return_arn {
                "pending confirmation".to_string()
            } else {
                existing.arn.clone()
            };
            return Ok(SubscriptionArnResult { subscription_arn });
        }
        let subscription_arn = if pending && !return_arn {
            "pending confirmation".to_string()
        } else {
            candidate.arn.clone()
        };
        if let Some(token) = candidate.token.clone() {
            send_confirmation(
                sns,
                ctx,
                topic,
                &candidate,
                EnvelopeKind::SubscriptionConfirmation,
                &token,
            );
        }
        if candidate.filter.is_some() {
            filter_policy_quota(&state, &arn)?;
        }
        let topic = topic_mut(&mut state, &arn)?;
        let sub_arn = candidate.arn.clone();
        topic.subscriptions.push(candidate);
        state.subscription_topics.insert(sub_arn, arn);
        Ok(SubscriptionArnResult { subscription_arn })
    }
}

impl SnsUnit for ConfirmSubscriptionRequest {
    type Response = SubscriptionArnResult;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<SubscriptionArnResult, SnsError> {
        let arn = topic_key(ctx, "TopicArn", &self.topic_arn)?;
        let token = required(&self.token, "Token")?;
        if token.len() < 32 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(SnsError::invalid_parameter_text("Invalid token"));
        }
        let mut state = sns.lock();
        if let Some(mut sub) = state.unsubscribed.remove(token) {
            // The UnsubscribeConfirmation's SubscribeURL: subscribed again.
            let Some(topic) = state.topics.get_mut(&sub.topic_arn) else {
                return Err(SnsError::invalid_parameter("Token"));
            };
            sub.pending = false;
            sub.token = None;
            let subscription_arn = sub.arn.clone();
            topic.subscriptions.push(sub);
            let topic_arn = topic.arn.clone();
            state
                .subscription_topics
                .insert(subscription_arn.clone(), topic_arn);
            return Ok(SubscriptionArnResult { subscription_arn });
        }
        let topic = state
            .topics
            .get_mut(&arn)
            .ok_or_else(|| SnsError::invalid_parameter("Token"))?;
        let sub = topic
            .subscriptions
            .iter_mut()
            .find(|s| s.token.as_deref() == Some(token))
            .ok_or_else(|| SnsError::invalid_parameter("Token"))?;
        sub.pending = false;
        Ok(SubscriptionArnResult {
            subscription_arn: sub.arn.clone(),
        })
    }
}

/// The subscription an ARN names: its topic's ARN and its place there.
fn find_subscription(
    state: &State,
    member: &str,
    arn: &Option<String>,
) -> Result<(String, usize), SnsError> {
    let arn = required(arn, member)?;
    let parts = SnsArn::parse(member, arn)?;
    if parts.id.is_none() {
        return Err(SnsError::invalid_parameter("SubscriptionId"));
    }
    let topic_arn = state
        .subscription_topics
        .get(arn)
        .ok_or_else(SnsError::subscription_not_found)?;
    let index = state.topics[topic_arn]
        .subscriptions
        .iter()
        .position(|s| s.arn == arn)
        .ok_or_else(SnsError::subscription_not_found)?;
    Ok((topic_arn.clone(), index))
}

impl SnsUnit for UnsubscribeRequest {
    type Response = Empty;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<Empty, SnsError> {
        let mut state = sns.lock();
        match find_subscription(&state, "SubscriptionArn", &self.subscription_arn) {
            Ok((topic_arn, index)) => {
                let topic = state.topics.get_mut(&topic_arn).expect("indexed");
                let sub = topic.subscriptions.remove(index);
                topic.deleted_subscriptions += 1;
                state.subscription_topics.remove(&sub.arn);
                if sub.protocol.starts_with("http") && !sub.pending {
                    // Its endpoint hears of it, with a way back.
                    let token = new_token();
                    let topic = &state.topics[&topic_arn];
                    send_confirmation(
                        sns,
                        ctx,
                        topic,
                        &sub,
                        EnvelopeKind::UnsubscribeConfirmation,
                        &token,
                    );
                    state.unsubscribed.insert(token, sub);
                }
                Ok(Empty {})
            }
            // Idempotent: unsubscribing twice is no error.
            Err(e) if e.code == "NotFound" => Ok(Empty {}),
            Err(e) => Err(e),
        }
    }
}

fn entry(s: &Subscription) -> SubscriptionEntry {
    SubscriptionEntry {
        subscription_arn: if s.pending {
            "PendingConfirmation".into()
        } else {
            s.arn.clone()
        },
        owner: s.owner.clone(),
        protocol: s.protocol.clone(),
        endpoint: s.endpoint.clone(),
        topic_arn: s.topic_arn.clone(),
    }
}

fn listing(
    mut subs: Vec<(String, SubscriptionEntry)>,
    token: Option<&str>,
) -> Result<ListSubscriptionsResult, SnsError> {
    subs.sort_by(|a, b| a.0.cmp(&b.0));
    let (subs, next_token) = page(subs, token, |(arn, _)| arn.as_str())?;
    Ok(ListSubscriptionsResult {
        subscriptions: subs.into_iter().map(|(_, e)| e).collect(),
        next_token,
    })
}

impl SnsUnit for ListSubscriptionsRequest {
    type Response = ListSubscriptionsResult;
    const READ_ONLY: bool = true;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<ListSubscriptionsResult, SnsError> {
        let subs = sns
            .lock()
            .topics
            .values()
            .filter(|t| t.region == ctx.region && t.account == ctx.account_id)
            .flat_map(|t| t.subscriptions.iter().map(|s| (s.arn.clone(), entry(s))))
            .collect();
        listing(subs, self.next_token.as_deref())
    }
}

impl SnsUnit for ListSubscriptionsByTopicRequest {
    type Response = ListSubscriptionsResult;
    const READ_ONLY: bool = true;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<ListSubscriptionsResult, SnsError> {
        let arn = topic_key(ctx, "TopicArn", &self.topic_arn)?;
        let mut state = sns.lock();
        let topic = topic_mut(&mut state, &arn)?;
        let subs = topic
            .subscriptions
            .iter()
            .map(|s| (s.arn.clone(), entry(s)))
            .collect();
        listing(subs, self.next_token.as_deref())
    }
}

impl SnsUnit for GetSubscriptionAttributesRequest {
    type Response = AttributesResult;
    const READ_ONLY: bool = true;

    fn run(self, sns: &Sns, _: &RequestContext) -> Result<AttributesResult, SnsError> {
        let state = sns.lock();
        let (topic_arn, index) =
            find_subscription(&state, "SubscriptionArn", &self.subscription_arn)?;
        Ok(AttributesResult {
            attributes: state.topics[&topic_arn].subscriptions[index].all_attributes(),
        })
    }
}

impl SnsUnit for SetSubscriptionAttributesRequest {
    type Response = Empty;

    fn run(self, sns: &Sns, _: &RequestContext) -> Result<Empty, SnsError> {
        let name = required(&self.attribute_name, "AttributeName")?;
        let value = self.attribute_value.unwrap_or_default();
        let mut state = sns.lock();
        let (topic_arn, index) =
            find_subscription(&state, "SubscriptionArn", &self.subscription_arn)?;
        let adds_filter = name == "FilterPolicy"
            && !value.is_empty()
            && state.topics[&topic_arn].subscriptions[index]
                .filter
                .is_none();
        if adds_filter {
            filter_policy_quota(&state, &topic_arn)?;
        }
        let topic = state.topics.get_mut(&topic_arn).expect("indexed");
        let fifo = topic.fifo;
        set_attribute(&mut topic.subscriptions[index], fifo, name, &value, false)?;
        Ok(Empty {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phone_numbers_as_sns_takes_them() {
        for good in [
            "+15550100",
            "15550100",
            "+1-555-0100",
            "+44.7700.900123",
            "+1/555/0100",
        ] {
            assert!(phone_number(good), "{good}");
        }
        for bad in [
            "",
            "+",
            "+0123",
            "12ab",
            "+1--5550100",
            "-15550100",
            "+15550100.",
            "/+15550100",
            "+1234567890123456",
            "call me",
        ] {
            assert!(!phone_number(bad), "{bad}");
        }
    }

    #[test]
    fn endpoints_per_protocol() {
        assert!(check_endpoint("email", "a@example.com").is_ok());
        for bad in [
            "nobody",
            "a@b@c",
            "@example.com",
            "a@",
            "a b@example.com",
            "a@x;b@y",
        ] {
            assert!(check_endpoint("email-json", bad).is_err(), "{bad}");
        }
        let lambda = "arn:aws:lambda:us-east-1:000000000000:function:f";
        assert!(check_endpoint("lambda", lambda).is_ok());
        assert!(check_endpoint("firehose", lambda).is_err());
        let device = "arn:aws:sns:us-east-1:000000000000:endpoint/GCM/app/1234";
        assert!(check_endpoint("application", device).is_ok());
        assert!(check_endpoint(
            "application",
            "arn:aws:sns:us-east-1:000000000000:app/GCM/app"
        )
        .is_err());
        let err = check_endpoint("fax", "x").unwrap_err();
        assert_eq!(
            err.message,
            "Invalid parameter: Amazon SNS does not support this protocol string: fax"
        );
    }
}
