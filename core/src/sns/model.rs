//! What SNS keeps: topics, their subscriptions, and the ARNs that name them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::error::SnsError;
use crate::filter_policy::{FilterPolicy, Scope};

/// How long a FIFO topic remembers a deduplication id.
pub const DEDUP_WINDOW_MS: u64 = 5 * 60 * 1000;

/// The parts of an SNS ARN (`arn:aws:sns:<region>:<account>:<name>[:<id>]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnsArn {
    pub region: String,
    pub account: String,
    pub name: String,
    /// A subscription's id, after the topic name.
    pub id: Option<String>,
}

impl SnsArn {
    /// Parses an ARN given as `member`, with AWS's errors for a short one.
    pub fn parse(member: &str, arn: &str) -> Result<SnsArn, SnsError> {
        let ([region, account, name], id) = SnsArn::split(member, arn)?;
        Ok(SnsArn {
            region: region.to_string(),
            account: account.to_string(),
            name: name.to_string(),
            id: id.map(str::to_string),
        })
    }

    /// The region an ARN names, checked as [`SnsArn::parse`] checks it but
    /// without copying: every Publish does this.
    pub fn region_of<'a>(member: &str, arn: &'a str) -> Result<&'a str, SnsError> {
        Ok(SnsArn::split(member, arn)?.0[0])
    }

    /// Region, account, name and id (the last one optional), borrowed.
    fn split<'a>(member: &str, arn: &'a str) -> Result<([&'a str; 3], Option<&'a str>), SnsError> {
        let count = crate::arn::fields(arn).count();
        if count < 6 {
            return Err(SnsError::invalid_parameter(format!(
                "{member} Reason: An ARN must have at least 6 elements, not {count}"
            )));
        }
        let mut parts = crate::arn::fields(arn);
        let (arn_word, _, service) = (parts.next(), parts.next(), parts.next());
        if arn_word != Some("arn") || service != Some("sns") {
            return Err(SnsError::invalid_parameter(member));
        }
        // At least six parts, so the next three are there.
        let mut next = || parts.next().unwrap_or_default();
        let three = [next(), next(), next()];
        Ok((three, parts.next()))
    }
}

pub fn topic_arn(region: &str, account: &str, name: &str) -> String {
    format!("arn:aws:sns:{region}:{account}:{name}")
}

/// One topic and its subscriptions (in the order they were made).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Topic {
    pub arn: String,
    pub region: String,
    pub account: String,
    pub name: String,
    pub fifo: bool,
    /// The attributes set on it (defaults are added when read).
    pub attributes: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
    pub data_protection_policy: Option<String>,
    pub subscriptions: Vec<Subscription>,
    pub deleted_subscriptions: u64,
    /// The last SequenceNumber given (FIFO topics).
    pub sequence: u128,
    /// Recent deduplication ids (FIFO): id → (message id, sequence number,
    /// expiry). Not persisted: a restart forgets them, as SQS's do.
    #[serde(skip)]
    pub dedup: HashMap<String, (String, String, u64)>,
}

impl Topic {
    pub fn new(region: &str, account: &str, name: &str, fifo: bool) -> Topic {
        Topic {
            arn: topic_arn(region, account, name),
            region: region.to_string(),
            account: account.to_string(),
            name: name.to_string(),
            fifo,
            attributes: BTreeMap::new(),
            tags: BTreeMap::new(),
            data_protection_policy: None,
            subscriptions: Vec::new(),
            deleted_subscriptions: 0,
            sequence: 0,
            dedup: HashMap::new(),
        }
    }

    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).map(String::as_str)
    }

    /// Whether content-based deduplication is on (FIFO).
    pub fn content_dedup(&self) -> bool {
        self.attribute("ContentBasedDeduplication")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }

    /// Deduplication per message group rather than per topic.
    pub fn dedup_per_group(&self) -> bool {
        self.attribute("FifoThroughputScope") == Some("MessageGroup")
    }

    /// The largest message it takes.
    pub fn max_message_size(&self) -> usize {
        self.attribute("MaximumMessageSize")
            .and_then(|v| v.parse().ok())
            .unwrap_or(262_144)
    }

    /// The default policy AWS gives a topic.
    pub fn default_policy(&self) -> String {
        format!(
            r#"{{"Version":"2008-10-17","Id":"__default_policy_ID","Statement":[{{"Sid":"__default_statement_ID","Effect":"Allow","Principal":{{"AWS":"*"}},"Action":["SNS:GetTopicAttributes","SNS:SetTopicAttributes","SNS:AddPermission","SNS:RemovePermission","SNS:DeleteTopic","SNS:Subscribe","SNS:ListSubscriptionsByTopic","SNS:Publish"],"Resource":"{}","Condition":{{"StringEquals":{{"AWS:SourceOwner":"{}"}}}}}}]}}"#,
            self.arn, self.account
        )
    }

    /// Every attribute as GetTopicAttributes answers it.
    pub fn all_attributes(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        out.insert("TopicArn".into(), self.arn.clone());
        out.insert("Owner".into(), self.account.clone());
        out.insert("DisplayName".into(), String::new());
        out.insert("Policy".into(), self.default_policy());
        out.insert(
            "EffectiveDeliveryPolicy".into(),
            DEFAULT_EFFECTIVE_DELIVERY_POLICY.into(),
        );
        let confirmed = self.subscriptions.iter().filter(|s| !s.pending).count();
        out.insert("SubscriptionsConfirmed".into(), confirmed.to_string());
        out.insert(
            "SubscriptionsPending".into(),
            (self.subscriptions.len() - confirmed).to_string(),
        );
        out.insert(
            "SubscriptionsDeleted".into(),
            self.deleted_subscriptions.to_string(),
        );
        if self.fifo {
            out.insert("FifoTopic".into(), "true".into());
            out.insert("ContentBasedDeduplication".into(), "false".into());
        }
        for (k, v) in &self.attributes {
            out.insert(k.clone(), v.clone());
        }
        out
    }

    /// The topic's `SignatureVersion` (1 unless set to 2).
    pub fn signature_version(&self) -> super::envelope::SignatureVersion {
        self.attribute("SignatureVersion")
            .and_then(super::envelope::SignatureVersion::from_attribute)
            .unwrap_or_default()
    }

    /// The topic's `DeliveryPolicy`, parsed.
    fn delivery_policy(&self) -> Option<serde_json::Value> {
        serde_json::from_str(self.attribute("DeliveryPolicy")?).ok()
    }

    /// The next SequenceNumber: 20 decimal digits, increasing. Counted
    /// from the clock, so numbers keep increasing across a restart even
    /// though a Publish does not journal the topic.
    pub fn next_sequence_number(&mut self, now_ms: u64) -> String {
        self.sequence = (self.sequence + 1).max(now_ms as u128);
        format!(
            "{:020}",
            10_000_000_000_000_000_000u128 + self.sequence * 1000
        )
    }
}

/// The `EffectiveDeliveryPolicy` of a topic without a `DeliveryPolicy`.
pub const DEFAULT_EFFECTIVE_DELIVERY_POLICY: &str = r#"{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}"#;

/// One subscription of a topic.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Subscription {
    pub arn: String,
    pub topic_arn: String,
    pub protocol: String,
    pub endpoint: String,
    pub owner: String,
    /// Waiting for ConfirmSubscription (HTTP endpoints, other accounts).
    pub pending: bool,
    /// The confirmation token, while pending.
    pub token: Option<String>,
    /// The attributes set on it (`RawMessageDelivery`, `FilterPolicy`, …).
    pub attributes: BTreeMap<String, String>,
    /// The compiled `FilterPolicy`, made once when it is set.
    #[serde(skip)]
    pub filter: Option<Arc<FilterPolicy>>,
    /// Its ARN and endpoint as shared strings, made on first use: every
    /// delivery's events carry them.
    #[serde(skip)]
    pub shared_names: std::sync::OnceLock<(Arc<str>, Arc<str>)>,
    /// An `sqs` subscription's queue, once found.
    #[serde(skip)]
    pub queue: crate::engine::QueueSlot,
}

impl Subscription {
    /// Its ARN and endpoint, shared (see `shared_names`).
    pub fn names(&self) -> &(Arc<str>, Arc<str>) {
        self.shared_names
            .get_or_init(|| (self.arn.as_str().into(), self.endpoint.as_str().into()))
    }

    pub fn raw(&self) -> bool {
        self.attributes
            .get("RawMessageDelivery")
            .is_some_and(|v| v == "true")
    }

    pub fn scope(&self) -> Scope {
        match self.attributes.get("FilterPolicyScope").map(String::as_str) {
            Some("MessageBody") => Scope::MessageBody,
            _ => Scope::MessageAttributes,
        }
    }

    /// The dead-letter queue of its RedrivePolicy, if any.
    pub fn dead_letter_arn(&self) -> Option<String> {
        let policy = self.attributes.get("RedrivePolicy")?;
        let value: serde_json::Value = serde_json::from_str(policy).ok()?;
        value
            .get("deadLetterTargetArn")
            .and_then(|v| v.as_str())
            .map(String::from)
    }

    fn delivery_policy(&self) -> Option<serde_json::Value> {
        serde_json::from_str(self.attributes.get("DeliveryPolicy")?).ok()
    }

    /// How a failing POST to this (HTTP) subscription is retried: its own
    /// policy, else its topic's, else AWS's default.
    pub fn retry_policy(&self, topic: &Topic) -> super::http::RetryPolicy {
        self.delivery_policy()
            .and_then(|p| super::http::RetryPolicy::from_json(&p))
            .or_else(|| {
                topic
                    .delivery_policy()
                    .and_then(|p| super::http::RetryPolicy::from_json(&p))
            })
            .unwrap_or_default()
    }

    /// The `Content-Type` of its notifications.
    pub fn content_type(&self, topic: &Topic) -> String {
        let own = self.delivery_policy().and_then(|p| {
            p.get("requestPolicy")?
                .get("headerContentType")?
                .as_str()
                .map(String::from)
        });
        own.or_else(|| {
            topic.delivery_policy().and_then(|p| {
                p.get("http")?
                    .get("defaultRequestPolicy")?
                    .get("headerContentType")?
                    .as_str()
                    .map(String::from)
            })
        })
        .unwrap_or_else(|| "text/plain; charset=UTF-8".into())
    }

    /// Compiles the filter policy again (after a restart).
    pub fn recompile(&mut self) {
        self.filter = self
            .attributes
            .get("FilterPolicy")
            .and_then(|p| FilterPolicy::parse(p, self.scope()).ok())
            .map(Arc::new);
    }

    /// Every attribute as GetSubscriptionAttributes answers it.
    pub fn all_attributes(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        out.insert("SubscriptionArn".into(), self.arn.clone());
        out.insert("TopicArn".into(), self.topic_arn.clone());
        out.insert("Owner".into(), self.owner.clone());
        out.insert("Protocol".into(), self.protocol.clone());
        out.insert("Endpoint".into(), self.endpoint.clone());
        out.insert(
            "SubscriptionPrincipal".into(),
            format!("arn:aws:iam::{}:user/retsu", self.owner),
        );
        out.insert("PendingConfirmation".into(), self.pending.to_string());
        out.insert(
            "ConfirmationWasAuthenticated".into(),
            (!self.pending).to_string(),
        );
        out.insert("RawMessageDelivery".into(), self.raw().to_string());
        for (k, v) in &self.attributes {
            // The scope shows only alongside a policy, as on AWS.
            if k == "FilterPolicyScope" && !self.attributes.contains_key("FilterPolicy") {
                continue;
            }
            out.insert(k.clone(), v.clone());
        }
        if self.attributes.contains_key("FilterPolicy") {
            out.entry("FilterPolicyScope".into())
                .or_insert_with(|| "MessageAttributes".into());
        }
        if self.protocol.starts_with("http") {
            out.insert(
                "EffectiveDeliveryPolicy".into(),
                self.attributes
                    .get("DeliveryPolicy")
                    .cloned()
                    .unwrap_or_else(|| DEFAULT_SUBSCRIPTION_DELIVERY_POLICY.into()),
            );
        }
        out
    }
}

/// An HTTP subscription's `EffectiveDeliveryPolicy` by default.
pub const DEFAULT_SUBSCRIPTION_DELIVERY_POLICY: &str = r#"{"healthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"sicklyRetryPolicy":null,"throttlePolicy":null,"guaranteed":false}"#;

/// A platform application (CreatePlatformApplication): what an
/// `application` subscription's endpoints belong to. Its credentials are
/// kept as given and never used: nothing is pushed to a device.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlatformApplication {
    pub arn: String,
    pub region: String,
    pub account: String,
    pub name: String,
    /// `GCM`, `APNS`, `APNS_SANDBOX`, `ADM`, `BAIDU`, `MPNS` or `WNS`.
    pub platform: String,
    pub attributes: BTreeMap<String, String>,
    /// Its endpoints by ARN.
    pub endpoints: BTreeMap<String, PlatformEndpoint>,
}

/// Attributes AWS takes but never shows again (secrets).
const HIDDEN_APPLICATION_ATTRIBUTES: &[&str] = &["PlatformCredential", "PlatformPrincipal"];

impl PlatformApplication {
    /// Every attribute as GetPlatformApplicationAttributes answers it.
    pub fn all_attributes(&self) -> BTreeMap<String, String> {
        let mut out: BTreeMap<String, String> = self
            .attributes
            .iter()
            .filter(|(k, _)| !HIDDEN_APPLICATION_ATTRIBUTES.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        out.entry("Enabled".into()).or_insert_with(|| "true".into());
        out
    }
}

/// One device of a platform application (CreatePlatformEndpoint).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlatformEndpoint {
    pub arn: String,
    /// `Token`, `Enabled`, `CustomUserData` as GetEndpointAttributes shows them.
    pub attributes: BTreeMap<String, String>,
}

impl PlatformEndpoint {
    pub fn enabled(&self) -> bool {
        self.attributes
            .get("Enabled")
            .is_none_or(|v| v.eq_ignore_ascii_case("true"))
    }
}

/// The platform an endpoint ARN names
/// (`arn:aws:sns:<region>:<account>:endpoint/<platform>/<app>/<id>`).
pub fn endpoint_platform(endpoint_arn: &str) -> Option<&str> {
    let resource = endpoint_arn.splitn(6, ':').nth(5)?;
    let mut parts = resource.split('/');
    (parts.next()? == "endpoint").then_some(())?;
    let platform = parts.next()?;
    let app = parts.next()?;
    let id = parts.next()?;
    (!platform.is_empty() && !app.is_empty() && !id.is_empty() && parts.next().is_none())
        .then_some(platform)
}

/// The application ARN an endpoint ARN belongs to.
pub fn endpoint_application(endpoint_arn: &str) -> Option<String> {
    endpoint_platform(endpoint_arn)?;
    let (head, resource) = endpoint_arn.rsplit_once(':')?;
    let mut parts = resource.split('/');
    let (_, platform, app) = (parts.next()?, parts.next()?, parts.next()?);
    Some(format!("{head}:app/{platform}/{app}"))
}
