//! CreateTopic, DeleteTopic, ListTopics, Get/SetTopicAttributes.

use std::collections::BTreeMap;

use super::*;
use crate::sns::model::{topic_arn, Topic};

/// Attributes CreateTopic and SetTopicAttributes take and keep as given.
const SETTABLE: &[&str] = &[
    "DisplayName",
    "Policy",
    "DeliveryPolicy",
    "SignatureVersion",
    "TracingConfig",
    "KmsMasterKeyId",
    "ContentBasedDeduplication",
    "FifoThroughputScope",
    "ArchivePolicy",
    "MaximumMessageSize",
];

/// Delivery-status logging attributes (stored and echoed).
fn feedback_attribute(name: &str) -> bool {
    ["HTTP", "SQS", "Lambda", "Firehose", "Application"]
        .iter()
        .any(|p| {
            name.strip_prefix(p).is_some_and(|rest| {
                matches!(
                    rest,
                    "SuccessFeedbackRoleArn"
                        | "SuccessFeedbackSampleRate"
                        | "FailureFeedbackRoleArn"
                )
            })
        })
}

/// Whether `name` is a topic name AWS accepts (a FIFO topic's with its
/// `.fifo` suffix). Public so the cluster's front can refuse to place a
/// name SNS would refuse to create.
pub fn valid_name(name: &str) -> bool {
    let base = name.strip_suffix(".fifo").unwrap_or(name);
    !base.is_empty()
        && name.len() <= 256
        && base
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Checks one attribute's value; `Err` carries the "Invalid parameter: …"
/// detail.
fn check_attribute(fifo: bool, name: &str, value: &str) -> Result<(), SnsError> {
    let bad = || {
        SnsError::invalid_parameter(format!(
            "Attributes Reason: {name}: Invalid value [{value}]"
        ))
    };
    match name {
        "SignatureVersion" if !matches!(value, "1" | "2") => Err(bad()),
        "TracingConfig" if !matches!(value, "PassThrough" | "Active") => Err(bad()),
        "TracingConfig" if fifo && value == "Active" => Err(bad()),
        "FifoThroughputScope" if !matches!(value, "Topic" | "MessageGroup") => Err(bad()),
        "ContentBasedDeduplication" if !fifo => Err(SnsError::invalid_parameter(
            "Attributes Reason: Content-based deduplication can only be set for FIFO topics",
        )),
        "ContentBasedDeduplication"
            if !value.eq_ignore_ascii_case("true") && !value.eq_ignore_ascii_case("false") =>
        {
            Err(bad())
        }
        "MaximumMessageSize"
            if !value
                .parse::<u32>()
                .is_ok_and(|n| (1024..=1_048_576).contains(&n)) =>
        {
            Err(bad())
        }
        "Policy" | "DeliveryPolicy" | "ArchivePolicy"
            if serde_json::from_str::<serde_json::Value>(value)
                .map_or(true, |v| !v.is_object()) =>
        {
            Err(SnsError::invalid_parameter(format!(
                "Attributes Reason: {name}: failed to parse JSON."
            )))
        }
        _ => Ok(()),
    }
}

impl SnsUnit for CreateTopicRequest {
    type Response = TopicArnResult;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<TopicArnResult, SnsError> {
        let name = required(&self.name, "Name")?;
        let fifo = self
            .attributes
            .get("FifoTopic")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        if !valid_name(name) || name.ends_with(".fifo") != fifo {
            return Err(SnsError::invalid_parameter("Topic Name"));
        }
        let mut attributes = BTreeMap::new();
        for (k, v) in &self.attributes {
            if k == "FifoTopic" {
                continue;
            }
            if !SETTABLE.contains(&k.as_str()) && !feedback_attribute(k) {
                return Err(SnsError::invalid_parameter("AttributeName"));
            }
            check_attribute(fifo, k, v)?;
            attributes.insert(k.clone(), v.clone());
        }
        let mut tags = BTreeMap::new();
        for t in self.tags.iter().flatten() {
            let key = t.key.clone().unwrap_or_default();
            tags.insert(key, t.value.clone().unwrap_or_default());
        }
        let arn = topic_arn(&ctx.region, &ctx.account_id, name);
        let mut state = sns.lock();
        if let Some(existing) = state.topics.get(&arn) {
            // Idempotent on the same name and attributes, as on AWS.
            let same = attributes
                .iter()
                .all(|(k, v)| existing.attribute(k) == Some(v.as_str()));
            if !same {
                return Err(SnsError::invalid_parameter(
                    "Attributes Reason: Topic already exists with different attributes",
                ));
            }
            if tags.iter().any(|(k, v)| existing.tags.get(k) != Some(v)) {
                return Err(SnsError::invalid_parameter(
                    "Tags Reason: Topic already exists with different tags",
                ));
            }
            return Ok(TopicArnResult { topic_arn: arn });
        }
        let mut topic = Topic::new(&ctx.region, &ctx.account_id, name, fifo);
        topic.attributes = attributes;
        topic.tags = tags;
        topic.data_protection_policy = self.data_protection_policy;
        state.topics.insert(arn.clone(), topic);
        Ok(TopicArnResult { topic_arn: arn })
    }
}

impl SnsUnit for DeleteTopicRequest {
    type Response = Empty;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<Empty, SnsError> {
        let arn = topic_key(ctx, "TopicArn", &self.topic_arn)?;
        let mut state = sns.lock();
        // Idempotent: an unknown topic is no error.
        if let Some(topic) = state.topics.remove(&arn) {
            for s in &topic.subscriptions {
                state.subscription_topics.remove(&s.arn);
            }
        }
        Ok(Empty {})
    }
}

impl SnsUnit for ListTopicsRequest {
    type Response = ListTopicsResult;
    const READ_ONLY: bool = true;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<ListTopicsResult, SnsError> {
        let arns: Vec<String> = sns
            .lock()
            .topics
            .values()
            .filter(|t| t.region == ctx.region && t.account == ctx.account_id)
            .map(|t| t.arn.clone())
            .collect();
        let (arns, next_token) = page(arns, self.next_token.as_deref(), |a| a.as_str())?;
        Ok(ListTopicsResult {
            topics: arns
                .into_iter()
                .map(|topic_arn| TopicEntry { topic_arn })
                .collect(),
            next_token,
        })
    }
}

impl SnsUnit for GetTopicAttributesRequest {
    type Response = AttributesResult;
    const READ_ONLY: bool = true;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<AttributesResult, SnsError> {
        let arn = topic_key(ctx, "TopicArn", &self.topic_arn)?;
        let mut state = sns.lock();
        let topic = topic_mut(&mut state, &arn)?;
        Ok(AttributesResult {
            attributes: topic.all_attributes(),
        })
    }
}

impl SnsUnit for SetTopicAttributesRequest {
    type Response = Empty;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<Empty, SnsError> {
        let arn = topic_key(ctx, "TopicArn", &self.topic_arn)?;
        let name = required(&self.attribute_name, "AttributeName")?;
        let value = self.attribute_value.unwrap_or_default();
        let mut state = sns.lock();
        let topic = topic_mut(&mut state, &arn)?;
        if !SETTABLE.contains(&name) && !feedback_attribute(name) {
            return Err(SnsError::invalid_parameter("AttributeName"));
        }
        check_attribute(topic.fifo, name, &value).map_err(|e| {
            SnsError::invalid_parameter_text(e.message.replace("Attributes Reason: ", ""))
        })?;
        if value.is_empty() && name != "DisplayName" {
            topic.attributes.remove(name);
        } else {
            topic.attributes.insert(name.to_string(), value);
        }
        Ok(Empty {})
    }
}
