//! The typed SNS API (2010-03-31): one request and one response type per
//! action, named as the botocore model names their members.
//!
//! SNS speaks only the query protocol. Its flattened parameters
//! (`Attributes.entry.1.key`, `Tags.member.1.Key`, …) are rewritten into
//! the JSON shape of these types (maps as objects, lists as arrays, every
//! scalar as a string) by the server's `protocol::sns`, then decoded by
//! serde. Required members are `Option`s, so a missing one becomes SNS's
//! own error rather than serde's.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error::SnsError;

macro_rules! sns_actions_with {
    ($m:ident) => {
        $m! {
            AddPermission => AddPermissionRequest, Empty;
            ConfirmSubscription => ConfirmSubscriptionRequest, SubscriptionArnResult;
            CreatePlatformApplication => CreatePlatformApplicationRequest, PlatformApplicationArnResult;
            CreatePlatformEndpoint => CreatePlatformEndpointRequest, EndpointArnResult;
            CreateTopic => CreateTopicRequest, TopicArnResult;
            DeleteEndpoint => DeleteEndpointRequest, Empty;
            DeletePlatformApplication => DeletePlatformApplicationRequest, Empty;
            DeleteTopic => DeleteTopicRequest, Empty;
            GetDataProtectionPolicy => GetDataProtectionPolicyRequest, DataProtectionPolicyResult;
            GetEndpointAttributes => GetEndpointAttributesRequest, AttributesResult;
            GetPlatformApplicationAttributes => GetPlatformApplicationAttributesRequest, AttributesResult;
            GetSubscriptionAttributes => GetSubscriptionAttributesRequest, AttributesResult;
            GetTopicAttributes => GetTopicAttributesRequest, AttributesResult;
            ListEndpointsByPlatformApplication => ListEndpointsByPlatformApplicationRequest, ListEndpointsResult;
            ListPlatformApplications => ListPlatformApplicationsRequest, ListPlatformApplicationsResult;
            ListSubscriptions => ListSubscriptionsRequest, ListSubscriptionsResult;
            ListSubscriptionsByTopic => ListSubscriptionsByTopicRequest, ListSubscriptionsResult;
            ListTagsForResource => ListTagsForResourceRequest, ListTagsResult;
            ListTopics => ListTopicsRequest, ListTopicsResult;
            Publish => PublishRequest, PublishResult;
            PublishBatch => PublishBatchRequest, PublishBatchResult;
            PutDataProtectionPolicy => PutDataProtectionPolicyRequest, Empty;
            RemovePermission => RemovePermissionRequest, Empty;
            SetEndpointAttributes => SetEndpointAttributesRequest, Empty;
            SetPlatformApplicationAttributes => SetPlatformApplicationAttributesRequest, Empty;
            SetSubscriptionAttributes => SetSubscriptionAttributesRequest, Empty;
            SetTopicAttributes => SetTopicAttributesRequest, Empty;
            Subscribe => SubscribeRequest, SubscriptionArnResult;
            TagResource => TagResourceRequest, Empty;
            Unsubscribe => UnsubscribeRequest, Empty;
            UntagResource => UntagResourceRequest, Empty;
        }
    };
}
pub(crate) use sns_actions_with;

macro_rules! actions {
    ($($name:ident => $req:ident, $resp:ident;)*) => {
        /// The SNS actions Retsu serves.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum SnsAction { $($name,)* }

        impl SnsAction {
            pub const ALL: &'static [SnsAction] = &[$(SnsAction::$name,)*];

            pub fn name(self) -> &'static str {
                match self { $(SnsAction::$name => stringify!($name),)* }
            }

            pub fn from_name(name: &str) -> Option<SnsAction> {
                match name { $(stringify!($name) => Some(SnsAction::$name),)* _ => None }
            }

            /// Decodes the query parameters, rewritten as JSON (see the
            /// module doc), into this action's request.
            pub fn decode(self, value: serde_json::Value) -> Result<SnsRequest, SnsError> {
                Ok(match self {
                    $(SnsAction::$name => SnsRequest::$name(
                        serde_json::from_value(value).map_err(|e| SnsError::invalid_parameter_text(
                            format!("Invalid parameter: {e}"),
                        ))?,
                    ),)*
                })
            }
        }

        /// A decoded SNS request.
        #[derive(Debug, Clone)]
        pub enum SnsRequest { $($name($req),)* }

        impl SnsRequest {
            pub fn action(&self) -> SnsAction {
                match self { $(SnsRequest::$name(_) => SnsAction::$name,)* }
            }
        }

        /// A successful SNS result.
        #[derive(Debug, Clone)]
        pub enum SnsResponse { $($name($resp),)* }

        impl SnsResponse {
            pub fn action(&self) -> SnsAction {
                match self { $(SnsResponse::$name(_) => SnsAction::$name,)* }
            }

            /// The result as a JSON tree (the XML encoder's input).
            pub fn to_json(&self) -> serde_json::Value {
                match self {
                    $(SnsResponse::$name(r) => serde_json::to_value(r).expect("responses always serialize"),)*
                }
            }
        }
    };
}

sns_actions_with!(actions);

/// Result of actions that return nothing.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Empty {}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "PascalCase", default)]
pub struct Tag {
    pub key: Option<String>,
    pub value: Option<String>,
}

/// A message attribute as Publish takes it (`BinaryValue`: base64 text).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "PascalCase", default)]
pub struct MessageAttributeValue {
    pub data_type: Option<String>,
    pub string_value: Option<String>,
    pub binary_value: Option<String>,
}

// ---------------------------------------------------------------- topics

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CreateTopicRequest {
    pub name: Option<String>,
    pub attributes: BTreeMap<String, String>,
    pub tags: Option<Vec<Tag>>,
    pub data_protection_policy: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct TopicArnResult {
    pub topic_arn: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DeleteTopicRequest {
    pub topic_arn: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ListTopicsRequest {
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct TopicEntry {
    pub topic_arn: String,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListTopicsResult {
    pub topics: Vec<TopicEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct GetTopicAttributesRequest {
    pub topic_arn: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AttributesResult {
    pub attributes: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SetTopicAttributesRequest {
    pub topic_arn: Option<String>,
    pub attribute_name: Option<String>,
    pub attribute_value: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct AddPermissionRequest {
    pub topic_arn: Option<String>,
    pub label: Option<String>,
    #[serde(rename = "AWSAccountId")]
    pub aws_account_id: Option<Vec<String>>,
    pub action_name: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct RemovePermissionRequest {
    pub topic_arn: Option<String>,
    pub label: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct GetDataProtectionPolicyRequest {
    pub resource_arn: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DataProtectionPolicyResult {
    pub data_protection_policy: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct PutDataProtectionPolicyRequest {
    pub resource_arn: Option<String>,
    pub data_protection_policy: Option<String>,
}

// ---------------------------------------------------------------- subscriptions

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SubscribeRequest {
    pub topic_arn: Option<String>,
    pub protocol: Option<String>,
    pub endpoint: Option<String>,
    pub attributes: BTreeMap<String, String>,
    /// `"true"` or `"false"` as the query protocol sends booleans.
    pub return_subscription_arn: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SubscriptionArnResult {
    pub subscription_arn: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ConfirmSubscriptionRequest {
    pub topic_arn: Option<String>,
    pub token: Option<String>,
    pub authenticate_on_unsubscribe: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct UnsubscribeRequest {
    pub subscription_arn: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ListSubscriptionsRequest {
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ListSubscriptionsByTopicRequest {
    pub topic_arn: Option<String>,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SubscriptionEntry {
    pub subscription_arn: String,
    pub owner: String,
    pub protocol: String,
    pub endpoint: String,
    pub topic_arn: String,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListSubscriptionsResult {
    pub subscriptions: Vec<SubscriptionEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct GetSubscriptionAttributesRequest {
    pub subscription_arn: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SetSubscriptionAttributesRequest {
    pub subscription_arn: Option<String>,
    pub attribute_name: Option<String>,
    pub attribute_value: Option<String>,
}

// ---------------------------------------------------------------- publishing

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct PublishRequest {
    pub topic_arn: Option<String>,
    pub target_arn: Option<String>,
    pub phone_number: Option<String>,
    pub message: Option<String>,
    pub subject: Option<String>,
    pub message_structure: Option<String>,
    pub message_attributes: BTreeMap<String, MessageAttributeValue>,
    pub message_deduplication_id: Option<String>,
    pub message_group_id: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PublishResult {
    pub message_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct PublishBatchRequestEntry {
    pub id: Option<String>,
    pub message: Option<String>,
    pub subject: Option<String>,
    pub message_structure: Option<String>,
    pub message_attributes: BTreeMap<String, MessageAttributeValue>,
    pub message_deduplication_id: Option<String>,
    pub message_group_id: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct PublishBatchRequest {
    pub topic_arn: Option<String>,
    pub publish_batch_request_entries: Option<Vec<PublishBatchRequestEntry>>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PublishBatchResultEntry {
    pub id: String,
    pub message_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct BatchResultErrorEntry {
    pub id: String,
    pub code: String,
    pub message: String,
    pub sender_fault: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PublishBatchResult {
    pub successful: Vec<PublishBatchResultEntry>,
    pub failed: Vec<BatchResultErrorEntry>,
}

// ---------------------------------------------------------------- tags

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct TagResourceRequest {
    pub resource_arn: Option<String>,
    pub tags: Option<Vec<Tag>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct UntagResourceRequest {
    pub resource_arn: Option<String>,
    pub tag_keys: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ListTagsForResourceRequest {
    pub resource_arn: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListTagsResult {
    pub tags: Vec<Tag>,
}

// ---------------------------------------------------------------- platform applications

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CreatePlatformApplicationRequest {
    pub name: Option<String>,
    pub platform: Option<String>,
    pub attributes: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PlatformApplicationArnResult {
    pub platform_application_arn: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct GetPlatformApplicationAttributesRequest {
    pub platform_application_arn: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SetPlatformApplicationAttributesRequest {
    pub platform_application_arn: Option<String>,
    pub attributes: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DeletePlatformApplicationRequest {
    pub platform_application_arn: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ListPlatformApplicationsRequest {
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PlatformApplicationEntry {
    pub platform_application_arn: String,
    pub attributes: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListPlatformApplicationsResult {
    pub platform_applications: Vec<PlatformApplicationEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CreatePlatformEndpointRequest {
    pub platform_application_arn: Option<String>,
    pub token: Option<String>,
    pub custom_user_data: Option<String>,
    pub attributes: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct EndpointArnResult {
    pub endpoint_arn: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct GetEndpointAttributesRequest {
    pub endpoint_arn: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SetEndpointAttributesRequest {
    pub endpoint_arn: Option<String>,
    pub attributes: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DeleteEndpointRequest {
    pub endpoint_arn: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ListEndpointsByPlatformApplicationRequest {
    pub platform_application_arn: Option<String>,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct EndpointEntry {
    pub endpoint_arn: String,
    pub attributes: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListEndpointsResult {
    pub endpoints: Vec<EndpointEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}
