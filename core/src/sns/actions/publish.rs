//! Publish and PublishBatch: validation, FIFO deduplication and sequence
//! numbers, filter policies, and one delivery per subscription.
//!
//! A queue subscription's delivery is an SQS send ([`Engine::deliver`]); a
//! message its queue refuses (gone, or too many raw attributes) goes to
//! the subscription's RedrivePolicy queue when it has one, else is
//! dropped, as AWS does with a client-side delivery error.

use std::collections::BTreeMap;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::*;
use crate::api::MessageAttributeValue as SqsAttribute;
use crate::clock::format_rfc3339;
use crate::engine::events::{TopicEvent, TopicEventKind};
use crate::engine::TopicDelivery;
use crate::filter_policy::{Attribute, Scope};
use crate::sns::envelope::{self, EnvelopeKind, Notification, SignatureVersion};
use crate::sns::inbox::Record;
use crate::sns::lambda::LambdaDelivery;
use crate::sns::model::{
    endpoint_application, endpoint_platform, PlatformApplication, Subscription, Topic,
    DEDUP_WINDOW_MS,
};
use crate::sns::payload::{self, protocol_name};
use crate::sns::DeliveryShape;

mod recorded;
use recorded::{application_payload, publish_direct, record, target, Direct};

/// The platform applications by ARN, as SNS's state keeps them.
type Applications = BTreeMap<String, PlatformApplication>;

/// Raw delivery to SQS carries at most this many attributes.
const MAX_RAW_ATTRIBUTES: usize = 10;

/// One message to publish: a Publish, or one entry of a batch.
struct Entry {
    message: Option<String>,
    subject: Option<String>,
    structure: Option<String>,
    attributes: BTreeMap<String, MessageAttributeValue>,
    dedup_id: Option<String>,
    group_id: Option<String>,
}

/// An entry once checked: the text per protocol and the ids it goes with.
struct Checked {
    message: String,
    /// With `MessageStructure=json`, the `Message` parameter as given (the
    /// whole JSON); without, it is `message`.
    published: Option<String>,
    structure: Option<String>,
    /// `MessageStructure=json`: the per-protocol strings.
    per_protocol: Option<serde_json::Map<String, serde_json::Value>>,
    subject: Option<String>,
    attributes: BTreeMap<String, MessageAttributeValue>,
    group_id: Option<String>,
    dedup_id: Option<String>,
}

impl Checked {
    /// The message a subscription of `protocol` receives.
    fn text_for(&self, protocol: &str) -> &str {
        self.per_protocol
            .as_ref()
            .and_then(|m| m.get(protocol))
            .and_then(|v| v.as_str())
            .unwrap_or(&self.message)
    }
}

fn attribute_name_error(name: &str) -> Option<String> {
    if name.len() > 256 {
        return Some("Length of message attribute name must be less than 256 bytes.".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Some(format!(
            "Invalid non-alphanumeric character '#x{:X}' was found in the message attribute name. Can only include alphanumeric characters, hyphens, underscores, or dots.",
            c as u32
        ));
    }
    if name.starts_with('.') {
        return Some(
            "Invalid message attribute name starting with character '.' was found.".into(),
        );
    }
    if name.ends_with('.') {
        return Some("Invalid message attribute name ending with character '.' was found.".into());
    }
    if name.contains("..") {
        return Some("Message attribute name can not have successive '.' character.".into());
    }
    None
}

/// The attribute checks of Publish, in AWS's order and wording. `path` is
/// where a missing DataType is reported (`messageAttributes` or the batch
/// entry's).
fn check_attributes(
    attributes: &BTreeMap<String, MessageAttributeValue>,
    path: &str,
) -> Result<(), SnsError> {
    for (name, value) in attributes {
        if let Some(e) = attribute_name_error(name) {
            return Err(SnsError::parameter_value_invalid(e));
        }
        let Some(data_type) = value.data_type.as_deref() else {
            return Err(SnsError::validation_error(format!(
                "1 validation error detected: Value null at '{path}.{name}.member.dataType' failed to satisfy constraint: Member must not be null"
            )));
        };
        let base = ["String", "Number", "Binary"].into_iter().find(|b| {
            data_type == *b
                || data_type
                    .strip_prefix(b)
                    .and_then(|r| r.strip_prefix('.'))
                    .is_some_and(|r| !r.is_empty())
        });
        let Some(base) = base else {
            return Err(SnsError::parameter_value_invalid(format!(
                "The message attribute '{name}' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String."
            )));
        };
        let binary = base == "Binary";
        if binary && value.string_value.is_some() {
            return Err(SnsError::parameter_value_invalid(format!(
                "The message attribute '{name}' with type 'Binary' must use field 'Binary'."
            )));
        }
        if !binary && value.binary_value.is_some() {
            return Err(SnsError::parameter_value_invalid(format!(
                "The message attribute '{name}' with type '{base}' must use field 'String'."
            )));
        }
        let text = if binary {
            value.binary_value.as_deref()
        } else {
            value.string_value.as_deref()
        };
        if text.is_none_or(str::is_empty) {
            return Err(SnsError::parameter_value_invalid(format!(
                "The message attribute '{name}' must contain non-empty message attribute value for message attribute type '{base}'."
            )));
        }
        if base == "Number" && text.is_some_and(|t| t.trim().parse::<f64>().is_err()) {
            return Err(SnsError::parameter_value_invalid(format!(
                "Could not cast message attribute '{name}' value to number."
            )));
        }
    }
    Ok(())
}

/// Bytes a message counts against the size limit: the body and every
/// attribute's name, type and value.
fn size_of(message: &str, attributes: &BTreeMap<String, MessageAttributeValue>) -> usize {
    message.len()
        + attributes
            .iter()
            .map(|(n, v)| {
                n.len()
                    + v.data_type.as_deref().map_or(0, str::len)
                    + v.string_value.as_deref().map_or(0, str::len)
                    + v.binary_value.as_deref().map_or(0, str::len)
            })
            .sum::<usize>()
}

/// Every check of one message before anything is delivered.
fn check(topic: &Topic, entry: Entry, path: &str) -> Result<Checked, SnsError> {
    let message = match entry.message {
        None => return Err(SnsError::missing("Message")),
        Some(m) if m.is_empty() => return Err(SnsError::invalid_parameter("Empty message")),
        Some(m) => m,
    };
    if let Some(subject) = &entry.subject {
        if subject.is_empty()
            || subject.chars().count() >= 100
            || subject.chars().any(char::is_control)
        {
            return Err(SnsError::invalid_parameter("Subject"));
        }
    }
    let per_protocol = match entry.structure.as_deref() {
        None => None,
        Some("json") => {
            let parsed: serde_json::Value = serde_json::from_str(&message).map_err(|_| {
                SnsError::invalid_parameter("Message Structure - JSON message body failed to parse")
            })?;
            let map = match parsed {
                serde_json::Value::Object(m) if m.get("default").is_some_and(|d| d.is_string()) => {
                    m
                }
                _ => {
                    return Err(SnsError::invalid_parameter(
                        "Message Structure - No default entry in JSON message body",
                    ))
                }
            };
            Some(map)
        }
        Some(_) => return Err(SnsError::invalid_parameter("MessageStructure")),
    };
    check_attributes(&entry.attributes, path)?;
    if size_of(&message, &entry.attributes) > topic.max_message_size() {
        return Err(SnsError::invalid_parameter("Message too long"));
    }
    let dedup_id = if topic.fifo {
        if entry.group_id.is_none() {
            return Err(SnsError::invalid_parameter(
                "The MessageGroupId parameter is required for FIFO topics",
            ));
        }
        match entry.dedup_id {
            Some(d) => Some(d),
            None if topic.content_dedup() => {
                Some(content_dedup_id(&message))
            }
            None => {
                return Err(SnsError::invalid_parameter(
                    "The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
                ))
            }
        }
    } else {
        if entry.dedup_id.is_some() {
            return Err(SnsError::invalid_parameter(
                "MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that is not valid for this topic type",
            ));
        }
        None
    };
    let per_protocol_message = per_protocol
        .as_ref()
        .and_then(|m| m.get("default"))
        .and_then(|d| d.as_str())
        .map(String::from);
    Ok(Checked {
        published: per_protocol.is_some().then(|| message.clone()),
        structure: entry.structure,
        message: per_protocol_message.unwrap_or(message),
        per_protocol,
        subject: entry.subject,
        attributes: entry.attributes,
        group_id: entry.group_id,
        dedup_id,
    })
}

/// What one published message is once numbered.
struct Published<'a> {
    checked: &'a Checked,
    message_id: String,
    sequence_number: Option<String>,
    /// When it was published (ms of the engine's clock).
    at_ms: u64,
    /// Its `Timestamp` text, written only for an envelope: raw deliveries
    /// never need it.
    timestamp: std::cell::OnceCell<String>,
    /// The topic's ARN and the message id as every step's event carries
    /// them, made once for the whole fan-out.
    topic_arn: Arc<str>,
    shared_id: Arc<str>,
    /// Where a delivered SQS message came from, for its history; the same
    /// for every queue.
    note: std::cell::OnceCell<Arc<str>>,
}

impl<'a> Published<'a> {
    fn new(
        topic: &Topic,
        checked: &'a Checked,
        message_id: String,
        sequence_number: Option<String>,
        at_ms: u64,
    ) -> Published<'a> {
        Published {
            checked,
            shared_id: message_id.as_str().into(),
            message_id,
            sequence_number,
            at_ms,
            timestamp: Default::default(),
            topic_arn: topic.arn.as_str().into(),
            note: Default::default(),
        }
    }

    fn timestamp(&self) -> &str {
        self.timestamp.get_or_init(|| format_rfc3339(self.at_ms))
    }

    fn note(&self) -> Arc<str> {
        self.note
            .get_or_init(|| {
                // Pushed, not format!ed: it is made on every publish.
                let (head, middle) = ("from topic ", ", SNS message ");
                let size = head.len() + self.topic_arn.len() + middle.len() + self.message_id.len();
                let mut note = String::with_capacity(size);
                for part in [head, &self.topic_arn, middle, &self.message_id] {
                    note.push_str(part);
                }
                note.into()
            })
            .clone()
    }

    /// A step of this message's fan-out.
    fn event(&self, kind: TopicEventKind, now: u64) -> TopicEvent {
        TopicEvent {
            seq: 0,
            at_ms: now,
            topic_arn: self.topic_arn.clone(),
            message_id: self.shared_id.clone(),
            kind,
            subscription_arn: None,
            endpoint: None,
            protocol: None,
            delivered_as: None,
            reason: None,
        }
    }
}

/// Publishes one checked message to every subscription of `topic`: its
/// ids, and the fan-out still to be made ([`Fanout::deliver`]). A FIFO
/// duplicate within the window answers the first publish's ids and
/// delivers nothing.
fn publish(
    sns: &Sns,
    ctx: &RequestContext,
    apps: &Applications,
    topic: &mut Topic,
    checked: &Checked,
) -> (String, Option<String>, Fanout) {
    let now = sns.engine().now();
    if let Some(dedup) = &checked.dedup_id {
        topic.dedup.retain(|_, (_, _, expires)| *expires > now);
        let key = if topic.dedup_per_group() {
            format!("{}\u{0}{dedup}", checked.group_id.as_deref().unwrap_or(""))
        } else {
            dedup.clone()
        };
        if let Some((id, seq, _)) = topic.dedup.get(&key) {
            return (id.clone(), Some(seq.clone()), Fanout::default());
        }
        let message_id = uuid::Uuid::new_v4().to_string();
        let seq = topic.next_sequence_number(now);
        topic.dedup.insert(
            key,
            (message_id.clone(), seq.clone(), now + DEDUP_WINDOW_MS),
        );
        let published = Published::new(topic, checked, message_id.clone(), Some(seq.clone()), now);
        let fanout = plan(sns, ctx, apps, topic, &published);
        return (message_id, Some(seq), fanout);
    }
    let message_id = uuid::Uuid::new_v4().to_string();
    let published = Published::new(topic, checked, message_id.clone(), None, now);
    let fanout = plan(sns, ctx, apps, topic, &published);
    (message_id, None, fanout)
}

/// A publish's fan-out once decided under SNS's lock: the steps taken so
/// far (published, filtered out) and the queue deliveries still to make.
/// Making them is most of a publish's work, so for a standard topic it
/// happens after the lock is released and concurrent publishes do not
/// queue behind each other; a FIFO topic's are made under the lock, so
/// each group reaches its queues in SequenceNumber order.
#[derive(Default)]
struct Fanout {
    events: Vec<TopicEvent>,
    sends: Vec<QueueSend>,
}

/// A delivered step's reason when the queue is held by another engine of
/// the same store: the message is on its way there (`engine/elsewhere.rs`).
const HANDED_OVER: &str = "handed to the engine that holds the queue";

/// One subscription's delivery into its queue.
struct QueueSend {
    /// Its steps' common part (topic, message, subscription, endpoint).
    step: TopicEvent,
    queue_arn: Arc<str>,
    /// The queue, looked up when the fan-out was planned.
    queue: Option<Arc<crate::engine::Queue>>,
    /// `Err`: refused before it was sent (too many attributes for raw).
    delivery: Result<TopicDelivery, String>,
    /// The RedrivePolicy queue and what it gets should the send fail.
    dead_letter: Option<(String, TopicDelivery)>,
}

impl Fanout {
    /// Makes the deliveries; every step of the fan-out, in order.
    fn deliver(self, sns: &Sns) -> Vec<TopicEvent> {
        let mut events = self.events;
        for send in self.sends {
            send.make(sns, &mut events);
        }
        events
    }
}

/// Makes the fan-outs of `state`'s topic `arn` and records their steps:
/// after releasing the lock for a standard topic, under it for a FIFO one
/// (see [`Fanout`]).
fn finish(
    sns: &Sns,
    state: parking_lot::MutexGuard<'_, crate::sns::State>,
    arn: &str,
    fanouts: Vec<Fanout>,
) {
    let fifo = state.topics.get(arn).is_some_and(|t| t.fifo);
    let held = if fifo {
        Some(state)
    } else {
        drop(state);
        None
    };
    let events: Vec<TopicEvent> = fanouts.into_iter().flat_map(|f| f.deliver(sns)).collect();
    // A FIFO topic's steps go out under its lock, so they are numbered in
    // SequenceNumber order too.
    sns.engine().topic_events(events);
    drop(held);
}

/// Decides what `published` does at each subscription of `topic`.
fn plan(
    sns: &Sns,
    ctx: &RequestContext,
    apps: &Applications,
    topic: &Topic,
    published: &Published<'_>,
) -> Fanout {
    let now = sns.engine().now();
    let mut fanout = Fanout {
        events: vec![published.event(TopicEventKind::Published, now)],
        sends: Vec::new(),
    };
    plan_each(sns, ctx, apps, topic, published, &mut fanout);
    fanout
}

fn plan_each(
    sns: &Sns,
    ctx: &RequestContext,
    apps: &Applications,
    topic: &Topic,
    published: &Published<'_>,
    fanout: &mut Fanout,
) {
    let now = sns.engine().now();
    // One signature per distinct message text (they differ only with
    // MessageStructure=json).
    let mut signatures: Vec<(String, String)> = Vec::new();
    for sub in topic.subscriptions.iter().filter(|s| !s.pending) {
        let step = |kind: TopicEventKind| {
            let (arn, endpoint) = sub.names();
            let mut e = published.event(kind, now);
            e.subscription_arn = Some(arn.clone());
            e.endpoint = Some(endpoint.clone());
            e.protocol = protocol_name(&sub.protocol);
            e
        };
        let text = published.checked.text_for(&sub.protocol);
        if let Some(filter) = &sub.filter {
            let verdict = match filter.scope() {
                Scope::MessageBody => filter.match_body(text),
                Scope::MessageAttributes => {
                    let attributes = &published.checked.attributes;
                    let lookup = |name: &str| {
                        attributes.get(name).map(|v| Attribute {
                            data_type: v.data_type.as_deref().unwrap_or(""),
                            value: v
                                .string_value
                                .as_deref()
                                .or(v.binary_value.as_deref())
                                .unwrap_or(""),
                        })
                    };
                    filter.match_attributes(&lookup, !attributes.is_empty())
                }
            };
            if let Err(mismatch) = verdict {
                let mut e = step(TopicEventKind::FilteredOut);
                e.reason = Some(mismatch.to_string());
                fanout.events.push(e);
                continue;
            }
        }
        // Raw delivery is for queues, HTTP endpoints and Firehose only.
        let raw =
            sub.raw() && matches!(sub.protocol.as_str(), "sqs" | "http" | "https" | "firehose");
        // Signing is a publish's dearest step: only what carries the
        // envelope's fields (Lambda's event holds them too) is signed.
        let enveloped = match sub.protocol.as_str() {
            "email-json" | "lambda" => true,
            "email" | "sms" | "application" => false,
            _ => !raw,
        };
        let signature = (enveloped && !topic.fifo).then(|| {
            let signed = match signatures.iter().find(|(t, _)| t == text) {
                Some((_, s)) => s.clone(),
                None => {
                    let s = sign_notification(sns, topic, published, text);
                    signatures.push((text.to_string(), s.clone()));
                    s
                }
            };
            (
                signature_version(topic),
                signed,
                format!(
                    "{}/_retsu/sns/{}",
                    ctx.base_url,
                    sns.signer().certificate_file_name()
                ),
            )
        });
        let unsubscribe_url = if enveloped {
            format!(
                "{}/?Action=Unsubscribe&SubscriptionArn={}",
                ctx.base_url, sub.arn
            )
        } else {
            String::new()
        };
        let notification = Notification {
            message_id: &published.message_id,
            sequence_number: published.sequence_number.as_deref(),
            topic_arn: &topic.arn,
            subject: published.checked.subject.as_deref(),
            message: text,
            timestamp: published.timestamp(),
            signature: signature
                .as_ref()
                .map(|(v, s, u)| (*v, s.as_str(), u.as_str())),
            unsubscribe_url: &unsubscribe_url,
            attributes: &published.checked.attributes,
        };
        let body = || {
            if raw {
                text.to_string()
            } else {
                envelope::notification_json(&notification)
            }
        };
        match sub.protocol.as_str() {
            "sqs" => {
                let step = step(TopicEventKind::Delivered);
                fanout
                    .sends
                    .push(queue_send(sns, ctx, topic, sub, published, body(), step));
            }
            "http" | "https" => post(sns, ctx, topic, sub, published, body()),
            protocol => {
                let payload = match protocol {
                    "email-json" | "firehose" => Ok(body()),
                    "lambda" => Ok(payload::lambda_event(&sub.arn, &notification)),
                    "application" => application_payload(sns, apps, &sub.endpoint, published),
                    // The link is Retsu's own Unsubscribe, so it works here.
                    "email" => Ok(payload::email_text(
                        text,
                        &format!(
                            "{}/?Action=Unsubscribe&SubscriptionArn={}",
                            ctx.base_url, sub.arn
                        ),
                    )),
                    // sms: the text itself.
                    _ => Ok(text.to_string()),
                };
                match payload {
                    Ok(payload) if protocol == "lambda" && sns.invokes_lambda() => {
                        // Invoked in the background: its steps (delivered,
                        // failed, dead-lettered) are the invoker's to record.
                        let dead_letter = sub.dead_letter_arn().map(|dlq| {
                            let delivery = TopicDelivery {
                                body: envelope::notification_json(&notification),
                                trace_header: ctx.trace_header.clone(),
                                note: Some(published.note()),
                                ..TopicDelivery::default()
                            };
                            (dlq, delivery)
                        });
                        record(sns, topic, sub, published, payload.clone());
                        sns.invoke_lambda(LambdaDelivery {
                            function: sub.endpoint.clone(),
                            event: payload,
                            subscription_arn: sub.arn.clone(),
                            topic_arn: topic.arn.clone(),
                            message_id: published.message_id.clone(),
                            dead_letter,
                        });
                    }
                    Ok(payload) => {
                        record(sns, topic, sub, published, payload);
                        fanout.events.push(step(TopicEventKind::Delivered));
                    }
                    Err(why) => {
                        let mut e = step(TopicEventKind::DeliveryFailed);
                        e.reason = Some(why);
                        fanout.events.push(e);
                    }
                }
            }
        }
    }
}

/// Hands a notification for an HTTP endpoint to the server's sender.
fn post(
    sns: &Sns,
    ctx: &RequestContext,
    topic: &Topic,
    sub: &Subscription,
    published: &Published<'_>,
    body: String,
) {
    let raw = sub.raw();
    let mut headers = vec![
        ("x-amz-sns-message-type", "Notification".to_string()),
        ("x-amz-sns-message-id", published.message_id.clone()),
        ("x-amz-sns-topic-arn", topic.arn.clone()),
        ("x-amz-sns-subscription-arn", sub.arn.clone()),
    ];
    if raw {
        headers.push(("x-amz-sns-rawdelivery", "true".into()));
    }
    headers.push(("Content-Type", sub.content_type(topic)));
    headers.push(("Accept-Encoding", "gzip,deflate".into()));
    headers.push((
        "User-Agent",
        "Amazon Simple Notification Service Agent".into(),
    ));
    let dead_letter = sub.dead_letter_arn().map(|dlq| {
        let delivery = TopicDelivery {
            body: body.clone(),
            attributes: if raw {
                sqs_attributes(&published.checked.attributes)
            } else {
                Default::default()
            },
            trace_header: ctx.trace_header.clone(),
            ..TopicDelivery::default()
        };
        (dlq, delivery)
    });
    sns.post(crate::sns::http::HttpDelivery {
        url: sub.endpoint.clone(),
        kind: EnvelopeKind::Notification,
        headers,
        body,
        subscription_arn: sub.arn.clone(),
        topic_arn: topic.arn.clone(),
        message_id: published.message_id.clone(),
        retry: sub.retry_policy(topic),
        dead_letter,
    });
}

fn signature_version(topic: &Topic) -> SignatureVersion {
    topic.signature_version()
}

fn sign_notification(sns: &Sns, topic: &Topic, published: &Published<'_>, text: &str) -> String {
    let field = |name: &str| -> Option<&str> {
        match name {
            "Message" => Some(text),
            "MessageId" => Some(&published.message_id),
            "Subject" => published.checked.subject.as_deref(),
            "Timestamp" => Some(published.timestamp()),
            "TopicArn" => Some(&topic.arn),
            "Type" => Some("Notification"),
            _ => None,
        }
    };
    let canonical = envelope::string_to_sign(EnvelopeKind::Notification, &field);
    sns.signer().sign(signature_version(topic), &canonical)
}

/// The SQS attributes a raw delivery carries: the published ones, as sent.
fn sqs_attributes(
    attributes: &BTreeMap<String, MessageAttributeValue>,
) -> crate::api::MessageAttributes {
    use base64::Engine as _;
    attributes
        .iter()
        .map(|(name, v)| {
            let binary = v
                .binary_value
                .as_deref()
                .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok());
            (
                name.clone(),
                SqsAttribute {
                    data_type: v.data_type.clone(),
                    string_value: v.string_value.clone(),
                    binary_value: binary,
                    ..SqsAttribute::default()
                },
            )
        })
        .collect()
}

/// The delivery of `body` into the subscription's queue (and, should it
/// fail, into its dead-letter queue), to be made by [`QueueSend::make`].
fn queue_send(
    sns: &Sns,
    ctx: &RequestContext,
    topic: &Topic,
    sub: &Subscription,
    published: &Published<'_>,
    body: String,
    step: TopicEvent,
) -> QueueSend {
    let note = published.note();
    let raw = sub.raw();
    let attributes = if raw {
        sqs_attributes(&published.checked.attributes)
    } else {
        Default::default()
    };
    let delivery = |queue_arn: &str, body: String| {
        let fifo_queue = queue_arn.ends_with(".fifo");
        // FIFO ids go to FIFO queues; a standard topic's group id goes on
        // to standard queues (fair queues).
        let (group_id, dedup_id) = match (topic.fifo, fifo_queue) {
            (true, true) => (
                published.checked.group_id.clone(),
                published.checked.dedup_id.clone(),
            ),
            (false, false) => (published.checked.group_id.clone(), None),
            _ => (None, None),
        };
        TopicDelivery {
            body,
            attributes: attributes.clone(),
            group_id,
            dedup_id,
            trace_header: ctx.trace_header.clone(),
            note: Some(note.clone()),
            extra_delay_ms: 0,
            message_id: None,
        }
    };
    let dead_letter = sub
        .dead_letter_arn()
        .map(|dlq| (dlq.clone(), delivery(&dlq, body.clone())));
    let delivery = if raw && published.checked.attributes.len() > MAX_RAW_ATTRIBUTES {
        Err(format!(
            "more than {MAX_RAW_ATTRIBUTES} message attributes cannot be delivered raw to SQS"
        ))
    } else {
        Ok(delivery(&sub.endpoint, body))
    };
    QueueSend {
        step,
        queue_arn: sub.names().1.clone(),
        queue: sns.engine().queue_by_arn_cached(&sub.endpoint, &sub.queue),
        delivery,
        dead_letter,
    }
}

impl QueueSend {
    /// Sends to the queue (or its dead-letter queue) and records what came
    /// of it.
    fn make(self, sns: &Sns, events: &mut Vec<TopicEvent>) {
        let step = |kind: TopicEventKind| TopicEvent {
            kind,
            ..self.step.clone()
        };
        // FIFO queues keep their exactly-once delivery: only standard ones
        // get the server's duplicates and delays.
        let shape = if self.queue_arn.ends_with(".fifo") {
            DeliveryShape::default()
        } else {
            sns.delivery_shape(&self.queue_arn)
        };
        let outcome = self.delivery.and_then(|delivery| {
            let delivery = TopicDelivery {
                extra_delay_ms: shape.delay_ms,
                ..delivery
            };
            // A second SQS message for the same SNS message, as SNS's
            // at-least-once delivery makes now and then.
            let copies = std::iter::repeat_n(delivery, 1 + shape.duplicates as usize);
            let mut made = 0;
            for (n, delivery) in copies.enumerate() {
                let sent = sns
                    .engine()
                    .deliver_to(self.queue.clone(), &self.queue_arn, delivery);
                match sent {
                    Ok(sent) => {
                        let mut e = step(TopicEventKind::Delivered);
                        e.delivered_as = Some(sent.result.message_id.0);
                        e.reason = match (n > 0, sent.handed_over) {
                            (false, false) => None,
                            (true, false) => Some("a seeded duplicate delivery".into()),
                            (false, true) => Some(HANDED_OVER.into()),
                            (true, true) => {
                                Some(format!("a seeded duplicate delivery, {HANDED_OVER}"))
                            }
                        };
                        events.push(e);
                        made += 1;
                    }
                    Err(e) if made == 0 => return Err(e.message),
                    Err(_) => {}
                }
            }
            Ok(())
        });
        let Err(failure) = outcome else {
            return;
        };
        let mut failed = step(TopicEventKind::DeliveryFailed);
        failed.reason = Some(failure);
        events.push(failed);
        if let Some((dlq, delivery)) = self.dead_letter {
            // The dead-letter queue gets what the subscription would have.
            let mut e = step(TopicEventKind::DeadLettered);
            e.endpoint = Some(dlq.as_str().into());
            match sns.engine().deliver_to(None, &dlq, delivery) {
                Ok(sent) => {
                    e.delivered_as = Some(sent.result.message_id.0);
                    if sent.handed_over {
                        e.reason = Some(HANDED_OVER.into());
                    }
                }
                Err(err) => {
                    e.reason = Some(format!(
                        "the dead-letter queue refused it too: {}",
                        err.message
                    ))
                }
            }
            events.push(e);
        }
    }
}

/// What a Publish is sent to.
enum Target {
    Topic(String),
    Direct(Direct),
}

impl SnsUnit for PublishRequest {
    type Response = PublishResult;
    const CHANGES_STATE: bool = false;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<PublishResult, SnsError> {
        let target = target(ctx, &self)?;
        let entry = Entry {
            message: self.message,
            subject: self.subject,
            structure: self.message_structure,
            attributes: self.message_attributes,
            dedup_id: self.message_deduplication_id,
            group_id: self.message_group_id,
        };
        let arn = match target {
            Target::Topic(arn) => arn,
            Target::Direct(direct) => return publish_direct(sns, ctx, direct, entry),
        };
        let mut state = sns.lock();
        let crate::sns::State {
            topics,
            applications,
            ..
        } = &mut *state;
        let topic = topics.get_mut(&arn).ok_or_else(SnsError::topic_not_found)?;
        let checked = check(topic, entry, "messageAttributes")?;
        let (message_id, sequence_number, fanout) =
            publish(sns, ctx, applications, topic, &checked);
        finish(sns, state, &arn, vec![fanout]);
        Ok(PublishResult {
            message_id,
            sequence_number,
        })
    }
}

fn check_batch_ids(entries: &[PublishBatchRequestEntry]) -> Result<(), SnsError> {
    if entries.is_empty() {
        return Err(SnsError::new(
            "EmptyBatchRequest",
            400,
            "The batch request doesn't contain any entries.",
        ));
    }
    if entries.len() > 10 {
        return Err(SnsError::new(
            "TooManyEntriesInBatchRequest",
            400,
            "The batch request contains more entries than permissible.",
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for e in entries {
        let id = e.id.as_deref().ok_or_else(|| SnsError::missing("Id"))?;
        if id.len() > 80 {
            return Err(SnsError::new(
                "InvalidBatchEntryId",
                400,
                format!("The Id of a batch entry in the batch request is too long: {id}"),
            ));
        }
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(SnsError::new(
                "InvalidBatchEntryId",
                400,
                format!("The Id of a batch entry in the batch request contains an impermissible character: {id}"),
            ));
        }
        if !seen.insert(id) {
            return Err(SnsError::new(
                "BatchEntryIdsNotDistinct",
                400,
                "Two or more batch entries in the request have the same Id.",
            ));
        }
    }
    Ok(())
}

impl SnsUnit for PublishBatchRequest {
    type Response = PublishBatchResult;
    const CHANGES_STATE: bool = false;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<PublishBatchResult, SnsError> {
        let arn = topic_key(ctx, "TopicArn", &self.topic_arn)?;
        let entries = self.publish_batch_request_entries.unwrap_or_default();
        check_batch_ids(&entries)?;
        let mut state = sns.lock();
        let crate::sns::State {
            topics,
            applications,
            ..
        } = &mut *state;
        let topic = topics.get_mut(&arn).ok_or_else(SnsError::topic_not_found)?;
        let total: usize = entries
            .iter()
            .map(|e| size_of(e.message.as_deref().unwrap_or(""), &e.message_attributes))
            .sum();
        if total > topic.max_message_size() {
            return Err(SnsError::new(
                "BatchRequestTooLong",
                400,
                "The length of all the messages put together is more than the limit.",
            ));
        }
        // Any invalid entry fails the whole request, as on AWS.
        let mut checked = Vec::with_capacity(entries.len());
        for (i, e) in entries.into_iter().enumerate() {
            let id = e.id.clone().unwrap_or_default();
            let path = format!(
                "publishBatchRequestEntries.{}.member.messageAttributes",
                i + 1
            );
            let entry = Entry {
                message: e.message,
                subject: e.subject,
                structure: e.message_structure,
                attributes: e.message_attributes,
                dedup_id: e.message_deduplication_id,
                group_id: e.message_group_id,
            };
            checked.push((id, check(topic, entry, &path)?));
        }
        let mut fanouts = Vec::with_capacity(checked.len());
        let successful = checked
            .iter()
            .map(|(id, c)| {
                let (message_id, sequence_number, fanout) =
                    publish(sns, ctx, applications, topic, c);
                fanouts.push(fanout);
                PublishBatchResultEntry {
                    id: id.clone(),
                    message_id,
                    sequence_number,
                }
            })
            .collect();
        finish(sns, state, &arn, fanouts);
        Ok(PublishBatchResult {
            successful,
            failed: Vec::new(),
        })
    }
}

/// The lower-case hex SHA-256 of a message: a FIFO topic's content-based
/// deduplication id.
pub(crate) fn content_dedup_id(message: &str) -> String {
    Sha256::digest(message.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
