//! SNS responses and errors as XML.
//!
//! One encoder walks a result's JSON rendering ([`SnsResponse::to_json`])
//! with a per-action table of members ([`result_shape`]), as the SQS
//! encoder does. The table is needed for what JSON does not say: the member
//! order of the model (JSON objects come out sorted), and that SNS wraps
//! lists in `<member>` and maps in `<entry><key/><value/></entry>` under the
//! member's own element. Text goes through the SQS encoder's escaping,
//! which is AWS's (`"` as `&quot;`, CR as `&#xD;`).

use serde_json::Value;

use retsu_core::sns::api::{PublishResult, SnsAction, SnsResponse};
use retsu_core::sns::error::SnsError;

use crate::protocol::xml::{close, element, empty, open, scalar};

pub const CONTENT_TYPE: &str = "text/xml";
pub const NAMESPACE: &str = "http://sns.amazonaws.com/doc/2010-03-31/";

/// One member of a result shape; the element is named as the JSON key.
struct Field {
    name: &'static str,
    kind: Kind,
}

enum Kind {
    /// `<Name>text</Name>`.
    Text,
    /// `<Name><entry><key>k</key><value>v</value></entry>…</Name>`.
    Map,
    /// `<Name><member>fields</member>…</Name>`.
    StructList(&'static [Field]),
}

const fn text(name: &'static str) -> Field {
    Field {
        name,
        kind: Kind::Text,
    }
}

const fn struct_list(name: &'static str, fields: &'static [Field]) -> Field {
    Field {
        name,
        kind: Kind::StructList(fields),
    }
}

const TOPIC_ARN: &[Field] = &[text("TopicArn")];

const SUBSCRIPTION_ARN: &[Field] = &[text("SubscriptionArn")];

const fn map(name: &'static str) -> Field {
    Field {
        name,
        kind: Kind::Map,
    }
}

const ATTRIBUTES: &[Field] = &[map("Attributes")];

const LIST_TOPICS: &[Field] = &[
    struct_list("Topics", &[text("TopicArn")]),
    text("NextToken"),
];

const LIST_SUBSCRIPTIONS: &[Field] = &[
    struct_list(
        "Subscriptions",
        &[
            text("SubscriptionArn"),
            text("Owner"),
            text("Protocol"),
            text("Endpoint"),
            text("TopicArn"),
        ],
    ),
    text("NextToken"),
];

const LIST_TAGS: &[Field] = &[struct_list("Tags", &[text("Key"), text("Value")])];

const PUBLISH: &[Field] = &[text("MessageId"), text("SequenceNumber")];

const PUBLISH_BATCH: &[Field] = &[
    struct_list(
        "Successful",
        &[text("Id"), text("MessageId"), text("SequenceNumber")],
    ),
    struct_list(
        "Failed",
        &[
            text("Id"),
            text("Code"),
            text("Message"),
            text("SenderFault"),
        ],
    ),
];

const DATA_PROTECTION_POLICY: &[Field] = &[text("DataProtectionPolicy")];

const PLATFORM_APPLICATION_ARN: &[Field] = &[text("PlatformApplicationArn")];

const ENDPOINT_ARN: &[Field] = &[text("EndpointArn")];

const LIST_PLATFORM_APPLICATIONS: &[Field] = &[
    struct_list(
        "PlatformApplications",
        &[text("PlatformApplicationArn"), map("Attributes")],
    ),
    text("NextToken"),
];

const LIST_ENDPOINTS: &[Field] = &[
    struct_list("Endpoints", &[text("EndpointArn"), map("Attributes")]),
    text("NextToken"),
];

/// The members of `<{Op}Result>`, or `None` for actions without output
/// (their response has no Result element at all). TagResource and
/// UntagResource have an output shape with no members: an empty
/// `<{Op}Result/>`, which botocore and the Go SDK require.
fn result_shape(action: SnsAction) -> Option<&'static [Field]> {
    use SnsAction::*;
    Some(match action {
        CreateTopic => TOPIC_ARN,
        Subscribe | ConfirmSubscription => SUBSCRIPTION_ARN,
        GetTopicAttributes
        | GetSubscriptionAttributes
        | GetPlatformApplicationAttributes
        | GetEndpointAttributes => ATTRIBUTES,
        CreatePlatformApplication => PLATFORM_APPLICATION_ARN,
        CreatePlatformEndpoint => ENDPOINT_ARN,
        ListPlatformApplications => LIST_PLATFORM_APPLICATIONS,
        ListEndpointsByPlatformApplication => LIST_ENDPOINTS,
        ListTopics => LIST_TOPICS,
        ListSubscriptions | ListSubscriptionsByTopic => LIST_SUBSCRIPTIONS,
        ListTagsForResource => LIST_TAGS,
        Publish => PUBLISH,
        PublishBatch => PUBLISH_BATCH,
        GetDataProtectionPolicy => DATA_PROTECTION_POLICY,
        TagResource | UntagResource => &[],
        AddPermission
        | DeleteEndpoint
        | DeletePlatformApplication
        | SetEndpointAttributes
        | SetPlatformApplicationAttributes
        | DeleteTopic
        | PutDataProtectionPolicy
        | RemovePermission
        | SetSubscriptionAttributes
        | SetTopicAttributes
        | Unsubscribe => return None,
    })
}

/// `<{Op}Response xmlns=…>[<{Op}Result>…</{Op}Result>]<ResponseMetadata>
/// <RequestId>…</RequestId></ResponseMetadata></{Op}Response>`.
pub fn encode_response(response: &SnsResponse, request_id: &str) -> String {
    let op = response.action().name();
    let mut out = String::with_capacity(256);
    out.push('<');
    out.push_str(op);
    out.push_str("Response xmlns=\"");
    out.push_str(NAMESPACE);
    out.push_str("\">");
    if let Some(fields) = result_shape(response.action()) {
        // Written in place; with no members it becomes `<{Op}Result/>`.
        let start = out.len();
        out.push('<');
        out.push_str(op);
        out.push_str("Result>");
        let members = out.len();
        match response {
            // Every publish's answer: written from its fields, skipping the
            // JSON rendering (the same elements as the table's, by test).
            SnsResponse::Publish(result) => write_publish(&mut out, result),
            _ => write_fields(&mut out, fields, &response.to_json()),
        }
        if out.len() == members {
            out.truncate(start);
            out.push('<');
            out.push_str(op);
            out.push_str("Result/>");
        } else {
            out.push_str("</");
            out.push_str(op);
            out.push_str("Result>");
        }
    }
    out.push_str("<ResponseMetadata>");
    element(&mut out, "RequestId", request_id);
    out.push_str("</ResponseMetadata></");
    out.push_str(op);
    out.push_str("Response>");
    out
}

/// `<ErrorResponse xmlns=…><Error><Type/><Code/><Message/></Error>
/// <RequestId/></ErrorResponse>`: the element order every emulator uses;
/// the HTTP status is the error's own.
pub fn encode_error(error: &SnsError, request_id: &str) -> String {
    let mut out = String::with_capacity(256);
    out.push_str("<ErrorResponse xmlns=\"");
    out.push_str(NAMESPACE);
    out.push_str("\"><Error>");
    element(&mut out, "Type", error.fault());
    element(&mut out, "Code", error.code);
    element(&mut out, "Message", &error.message);
    out.push_str("</Error>");
    element(&mut out, "RequestId", request_id);
    out.push_str("</ErrorResponse>");
    out
}

/// [`PUBLISH`]'s members of `result`.
fn write_publish(out: &mut String, result: &PublishResult) {
    element(out, "MessageId", &result.message_id);
    if let Some(sequence) = &result.sequence_number {
        element(out, "SequenceNumber", sequence);
    }
}

fn write_fields(out: &mut String, fields: &[Field], value: &Value) {
    for field in fields {
        let Some(v) = value.get(field.name) else {
            continue;
        };
        match &field.kind {
            Kind::Text => {
                if let Some(t) = scalar(v) {
                    element(out, field.name, &t);
                }
            }
            Kind::Map => {
                let entries = v.as_object().into_iter().flatten();
                wrapped(out, field.name, entries, |out, (k, item)| {
                    open(out, "entry");
                    element(out, "key", k);
                    element(out, "value", &scalar(item).unwrap_or_default());
                    close(out, "entry");
                });
            }
            Kind::StructList(inner) => {
                let members = v.as_array().into_iter().flatten();
                wrapped(out, field.name, members, |out, item| {
                    open(out, "member");
                    write_fields(out, inner, item);
                    close(out, "member");
                });
            }
        }
    }
}

/// `<name>items</name>`, or `<name/>` when there are none: an empty list
/// is still present (PublishBatch's `Failed`, ListTagsForResource's `Tags`).
fn wrapped<T>(
    out: &mut String,
    name: &str,
    items: impl Iterator<Item = T>,
    mut write: impl FnMut(&mut String, T),
) {
    let mut items = items.peekable();
    if items.peek().is_none() {
        return empty(out, name);
    }
    open(out, name);
    for item in items {
        write(out, item);
    }
    close(out, name);
}

#[cfg(test)]
pub(super) fn has_result(action: SnsAction) -> bool {
    result_shape(action).is_some()
}

#[cfg(test)]
mod publish_tests {
    use super::*;

    #[test]
    fn publish_answer_has_the_tables_elements() {
        for sequence_number in [None, Some("10000000000000000001".to_string())] {
            let result = PublishResult {
                message_id: "a&b<c>\"d".into(),
                sequence_number,
            };
            let mut direct = String::new();
            write_publish(&mut direct, &result);
            let mut by_table = String::new();
            let json = SnsResponse::Publish(result).to_json();
            write_fields(&mut by_table, PUBLISH, &json);
            assert_eq!(direct, by_table);
        }
    }
}
