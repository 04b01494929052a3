//! `[[topics]]`: SNS topics the server starts with, and their
//! subscriptions, to queues declared in the same file (by name) or to HTTP
//! endpoints. Checked like the queues: applied to a scratch engine and SNS
//! first, so everything SNS would refuse is reported at its line.
//!
//! ```toml
//! [[topics]]
//! name = "orders"
//! attributes = { DisplayName = "Orders" }
//! [[topics.subscriptions]]
//! queue = "billing"
//! raw = true
//! filter_policy = { kind = ["invoice"] }
//! dead_letter_queue = "billing-dlq"
//! ```

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use serde::Deserialize;
use toml::Spanned;

use super::file::{ConfigError, PlannedQueue, Source};
use super::Config;
use crate::api::RequestContext;
use crate::sns::api::*;
use crate::sns::error::SnsError;
use crate::sns::Sns;

/// One `[[topics]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopicDecl {
    pub name: Spanned<String>,
    /// Defaults to the server's region.
    pub region: Option<Spanned<String>>,
    /// Defaults to the server's account.
    pub account_id: Option<Spanned<String>>,
    /// A FIFO topic (its name ends in `.fifo`).
    #[serde(default)]
    pub fifo: bool,
    /// SNS topic attributes (`DisplayName`, `SignatureVersion`, …):
    /// strings, integers and booleans.
    #[serde(default)]
    pub attributes: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    #[serde(default)]
    pub subscriptions: Vec<Spanned<SubscriptionDecl>>,
}

/// One `[[topics.subscriptions]]` entry: `queue` or `endpoint`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionDecl {
    /// A queue declared in this file, in the topic's region and account.
    pub queue: Option<Spanned<String>>,
    /// An `http://` or `https://` URL.
    pub endpoint: Option<Spanned<String>>,
    /// RawMessageDelivery.
    #[serde(default)]
    pub raw: bool,
    /// A table, or the policy's JSON as a string.
    pub filter_policy: Option<Spanned<toml::Value>>,
    /// `MessageAttributes` (the default) or `MessageBody`.
    pub filter_policy_scope: Option<Spanned<String>>,
    /// A queue declared in this file: the subscription's RedrivePolicy.
    pub dead_letter_queue: Option<Spanned<String>>,
}

/// A topic to create, with where it was written.
#[derive(Debug, Clone)]
pub struct PlannedTopic {
    pub region: String,
    pub account: String,
    pub name: String,
    pub attributes: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
    pub subscriptions: Vec<PlannedSubscription>,
    name_span: Range<usize>,
}

#[derive(Debug, Clone)]
pub struct PlannedSubscription {
    pub protocol: String,
    pub endpoint: String,
    pub attributes: BTreeMap<String, String>,
    span: Range<usize>,
    /// Attribute name to where its value was written.
    spans: BTreeMap<String, Range<usize>>,
}

impl PlannedSubscription {
    /// Where an SNS error about it points: the attribute it names, else
    /// the subscription.
    fn span_of(&self, e: &SnsError) -> &Range<usize> {
        self.spans
            .iter()
            .find(|(name, _)| e.message.contains(&format!("{name}:")))
            .map_or(&self.span, |(_, span)| span)
    }
}

/// Resolves the declared topics against the file's queues and the
/// server's defaults.
pub fn plan(
    decls: &[TopicDecl],
    source: &Source,
    config: &Config,
    queues: &[PlannedQueue],
) -> Result<Vec<PlannedTopic>, ConfigError> {
    let err = |span: Range<usize>, message: String| source.error(Some(span), message);
    let mut out = Vec::with_capacity(decls.len());
    for t in decls {
        let region = match &t.region {
            Some(r) => super::parse_region(r.get_ref()).map_err(|e| err(r.span(), e))?,
            None => config.region.clone(),
        };
        let account = match &t.account_id {
            Some(a) => super::parse_account(a.get_ref()).map_err(|e| err(a.span(), e))?,
            None => config.account_id.clone(),
        };
        let name = t.name.get_ref().clone();
        let queue_arn = |q: &Spanned<String>| -> Result<String, ConfigError> {
            queues
                .iter()
                .find(|p| {
                    p.key.name == *q.get_ref() && p.key.region == region && p.key.account == account
                })
                .map(|p| p.key.arn())
                .ok_or_else(|| {
                    err(
                        q.span(),
                        format!(
                            "topic \"{name}\": queue \"{}\" is not declared in [[queues]] (in {region}/{account})",
                            q.get_ref()
                        ),
                    )
                })
        };
        let mut attributes = BTreeMap::new();
        for (k, v) in &t.attributes {
            attributes.insert(k.clone(), scalar(v).map_err(|kind| {
                err(v.span(), format!("topic \"{name}\": attribute {k} is a {kind}; use a string, an integer or a boolean"))
            })?);
        }
        if t.fifo {
            attributes.insert("FifoTopic".into(), "true".into());
        }
        let mut subscriptions = Vec::new();
        for s in &t.subscriptions {
            let d = s.get_ref();
            let (protocol, endpoint) = match (&d.queue, &d.endpoint) {
                (Some(q), None) => ("sqs".to_string(), queue_arn(q)?),
                (None, Some(e)) => {
                    let url = e.get_ref();
                    let protocol = url.split("://").next().unwrap_or_default().to_string();
                    (protocol, url.clone())
                }
                _ => {
                    return Err(err(
                        s.span(),
                        format!(
                        "topic \"{name}\": a subscription names exactly one of queue and endpoint"
                    ),
                    ))
                }
            };
            let mut attributes = BTreeMap::new();
            let mut spans = BTreeMap::new();
            if d.raw {
                attributes.insert("RawMessageDelivery".into(), "true".into());
            }
            if let Some(scope) = &d.filter_policy_scope {
                attributes.insert("FilterPolicyScope".into(), scope.get_ref().clone());
                spans.insert("FilterPolicyScope".to_string(), scope.span());
            }
            if let Some(policy) = &d.filter_policy {
                let text = match policy.get_ref() {
                    toml::Value::String(s) => s.clone(),
                    other => serde_json::to_string(other).map_err(|e| {
                        err(
                            policy.span(),
                            format!("topic \"{name}\": filter_policy: {e}"),
                        )
                    })?,
                };
                attributes.insert("FilterPolicy".into(), text);
                spans.insert("FilterPolicy".to_string(), policy.span());
            }
            if let Some(dlq) = &d.dead_letter_queue {
                let arn = queue_arn(dlq)?;
                attributes.insert(
                    "RedrivePolicy".into(),
                    serde_json::json!({ "deadLetterTargetArn": arn }).to_string(),
                );
            }
            subscriptions.push(PlannedSubscription {
                protocol,
                endpoint,
                attributes,
                span: s.span(),
                spans,
            });
        }
        out.push(PlannedTopic {
            region: region.clone(),
            account: account.clone(),
            name,
            attributes,
            tags: t.tags.clone(),
            subscriptions,
            name_span: t.name.span(),
        });
    }
    Ok(out)
}

fn scalar(v: &Spanned<toml::Value>) -> Result<String, &'static str> {
    match v.get_ref() {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(n) => Ok(n.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        other => Err(other.type_str()),
    }
}

/// Creates every topic and subscription through SNS's own actions. A
/// topic or subscription that exists already (a data directory's) takes
/// the file's attributes.
pub async fn apply(
    topics: &[PlannedTopic],
    sns: &Sns,
    base_url: &str,
    source: Option<&Arc<Source>>,
) -> Result<(), ConfigError> {
    for t in topics {
        let ctx = RequestContext::new(&t.region, &t.account, base_url);
        let at = |span: &Range<usize>, e: SnsError| {
            let message = format!("topic \"{}\": {}", t.name, e.message);
            match source {
                Some(s) => s.error(Some(span.clone()), message),
                None => ConfigError {
                    file: String::new(),
                    line: None,
                    column: None,
                    message,
                    excerpt: None,
                },
            }
        };
        let tags = t
            .tags
            .iter()
            .map(|(k, v)| Tag {
                key: Some(k.clone()),
                value: Some(v.clone()),
            })
            .collect();
        let create = SnsRequest::CreateTopic(CreateTopicRequest {
            name: Some(t.name.clone()),
            attributes: t.attributes.clone(),
            tags: Some(tags),
            data_protection_policy: None,
        });
        let arn = match sns.handle(&ctx, create).await {
            Ok(SnsResponse::CreateTopic(r)) => r.topic_arn,
            Ok(_) => unreachable!("CreateTopic answers CreateTopic"),
            Err(e) if e.message.contains("already exists with different") => {
                let arn = crate::sns::model::topic_arn(&t.region, &t.account, &t.name);
                for (k, v) in t.attributes.iter().filter(|(k, _)| *k != "FifoTopic") {
                    let set = SnsRequest::SetTopicAttributes(SetTopicAttributesRequest {
                        topic_arn: Some(arn.clone()),
                        attribute_name: Some(k.clone()),
                        attribute_value: Some(v.clone()),
                    });
                    sns.handle(&ctx, set)
                        .await
                        .map_err(|e| at(&t.name_span, e))?;
                }
                arn
            }
            Err(e) => return Err(at(&t.name_span, e)),
        };
        for s in &t.subscriptions {
            let subscribe = SnsRequest::Subscribe(SubscribeRequest {
                topic_arn: Some(arn.clone()),
                protocol: Some(s.protocol.clone()),
                endpoint: Some(s.endpoint.clone()),
                attributes: s.attributes.clone(),
                return_subscription_arn: Some("true".into()),
            });
            match sns.handle(&ctx, subscribe).await {
                Ok(_) => {}
                Err(e) if e.message.contains("already exists with different") => {
                    let existing = existing_subscription(sns, &ctx, &arn, s).await;
                    let Some(sub_arn) = existing else {
                        return Err(at(&s.span, e));
                    };
                    for (k, v) in &s.attributes {
                        let set = SnsRequest::SetSubscriptionAttributes(
                            SetSubscriptionAttributesRequest {
                                subscription_arn: Some(sub_arn.clone()),
                                attribute_name: Some(k.clone()),
                                attribute_value: Some(v.clone()),
                            },
                        );
                        sns.handle(&ctx, set)
                            .await
                            .map_err(|e| at(s.span_of(&e), e))?;
                    }
                }
                Err(e) => return Err(at(s.span_of(&e), e)),
            }
        }
    }
    Ok(())
}

async fn existing_subscription(
    sns: &Sns,
    ctx: &RequestContext,
    topic_arn: &str,
    s: &PlannedSubscription,
) -> Option<String> {
    let list = SnsRequest::ListSubscriptionsByTopic(ListSubscriptionsByTopicRequest {
        topic_arn: Some(topic_arn.to_string()),
        next_token: None,
    });
    match sns.handle(ctx, list).await {
        Ok(SnsResponse::ListSubscriptionsByTopic(r)) => r
            .subscriptions
            .into_iter()
            .find(|e| e.protocol == s.protocol && e.endpoint == s.endpoint)
            .map(|e| e.subscription_arn),
        _ => None,
    }
}

/// The scratch check's signer: nothing it signs is delivered.
pub struct Unsigned;

impl crate::sns::envelope::Signer for Unsigned {
    fn sign(&self, _: crate::sns::envelope::SignatureVersion, _: &str) -> String {
        String::new()
    }

    fn certificate_file_name(&self) -> &str {
        "unsigned.pem"
    }
}
