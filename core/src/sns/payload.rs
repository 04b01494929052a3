//! What SNS would send to the endpoints Retsu does not reach, written as
//! AWS writes it, for the [`inbox`](super::inbox):
//!
//! | protocol | payload |
//! |---|---|
//! | `email` | the message text (its `email` entry with `MessageStructure=json`), then AWS's unsubscribe footer |
//! | `email-json` | the JSON notification, as an HTTP endpoint gets it |
//! | `sms` | the message text (its `sms` entry); SMS attributes ride beside it |
//! | `application` | the entry of the endpoint's platform (`GCM`, `APNS`, …), else `default` |
//! | `lambda` | the event a function is invoked with: one record, `aws:sns` |
//! | `firehose` | the JSON notification, or the text with raw delivery |
//!
//! Writing the payload is the core's: it is SNS's behaviour, like the
//! envelope; how an inbox is shown (LocalStack's shapes, the admin API's)
//! is the server's.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::api::MessageAttributeValue;
use super::envelope::Notification;

/// Every protocol SNS has, as static names for the events' steps.
pub const PROTOCOLS: &[&str] = &[
    "sqs",
    "http",
    "https",
    "email",
    "email-json",
    "sms",
    "application",
    "lambda",
    "firehose",
];

/// The static name of `protocol`, one of [`PROTOCOLS`].
pub fn protocol_name(protocol: &str) -> Option<&'static str> {
    PROTOCOLS.iter().copied().find(|p| *p == protocol)
}

/// The `Subject` line of an e-mail notification: the publish's, else AWS's.
pub fn email_subject(subject: Option<&str>) -> String {
    subject.unwrap_or("AWS Notification Message").to_string()
}

/// The body of an e-mail notification: the text, then the footer AWS
/// appends after a `--` line, with the link that unsubscribes.
pub fn email_text(text: &str, unsubscribe_url: &str) -> String {
    format!(
        "{text}\n\n--\nIf you wish to stop receiving notifications from this topic, please click or visit the link below to unsubscribe:\n{unsubscribe_url}\n\nPlease do not reply directly to this email. If you have any questions or comments regarding this email, please contact us at https://aws.amazon.com/support"
    )
}

/// The attributes as a notification shows them (`Type`, `Value`).
fn attributes_json(attributes: &BTreeMap<String, MessageAttributeValue>) -> Value {
    let map: Map<String, Value> = attributes
        .iter()
        .map(|(name, v)| {
            let value = v
                .string_value
                .as_deref()
                .or(v.binary_value.as_deref())
                .unwrap_or("");
            let kind = v.data_type.as_deref().unwrap_or("String");
            (name.clone(), json!({"Type": kind, "Value": value}))
        })
        .collect();
    Value::Object(map)
}

/// The event a Lambda function subscribed to a topic is invoked with. Its
/// `Sns` record spells `SigningCertUrl` and `UnsubscribeUrl` as Lambda
/// does, has `Subject: null` without one and `MessageAttributes: {}`
/// without any.
pub fn lambda_event(subscription_arn: &str, n: &Notification<'_>) -> String {
    let mut sns = Map::new();
    sns.insert("Type".into(), json!("Notification"));
    sns.insert("MessageId".into(), json!(n.message_id));
    if let Some(seq) = n.sequence_number {
        sns.insert("SequenceNumber".into(), json!(seq));
    }
    sns.insert("TopicArn".into(), json!(n.topic_arn));
    sns.insert("Subject".into(), json!(n.subject));
    sns.insert("Message".into(), json!(n.message));
    sns.insert("Timestamp".into(), json!(n.timestamp));
    if let Some((version, signature, cert_url)) = n.signature {
        sns.insert("SignatureVersion".into(), json!(version.as_str()));
        sns.insert("Signature".into(), json!(signature));
        sns.insert("SigningCertUrl".into(), json!(cert_url));
    }
    sns.insert("UnsubscribeUrl".into(), json!(n.unsubscribe_url));
    sns.insert("MessageAttributes".into(), attributes_json(n.attributes));
    json!({
        "Records": [{
            "EventSource": "aws:sns",
            "EventVersion": "1.0",
            "EventSubscriptionArn": subscription_arn,
            "Sns": Value::Object(sns),
        }]
    })
    .to_string()
}

/// An endpoint's text from a publish: with `MessageStructure=json`, the
/// entry of its platform, else `default`.
pub fn platform_text<'m>(
    per_protocol: Option<&'m Map<String, Value>>,
    platform: &str,
    default: &'m str,
) -> &'m str {
    per_protocol
        .and_then(|m| m.get(platform))
        .and_then(Value::as_str)
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_text_ends_with_awss_footer() {
        let mail = email_text(
            "Disk full",
            "http://h/?Action=Unsubscribe&SubscriptionArn=a",
        );
        let (text, footer) = mail.split_once("\n\n--\n").unwrap();
        assert_eq!(text, "Disk full");
        assert!(footer.starts_with("If you wish to stop receiving notifications from this topic"));
        assert!(footer.contains("\nhttp://h/?Action=Unsubscribe&SubscriptionArn=a\n\n"));
        assert!(footer.ends_with("please contact us at https://aws.amazon.com/support"));
    }
    use crate::sns::envelope::SignatureVersion;

    #[test]
    fn lambda_event_has_lambdas_spelling() {
        let mut attributes = BTreeMap::new();
        attributes.insert(
            "kind".to_string(),
            MessageAttributeValue {
                data_type: Some("String".into()),
                string_value: Some("order".into()),
                binary_value: None,
            },
        );
        let n = Notification {
            message_id: "id",
            sequence_number: None,
            topic_arn: "arn:aws:sns:us-east-1:000000000000:t",
            subject: None,
            message: "hello",
            timestamp: "2025-01-01T00:00:00.000Z",
            signature: Some((SignatureVersion::default(), "sig", "https://cert")),
            unsubscribe_url: "https://unsub",
            attributes: &attributes,
        };
        let event: Value = serde_json::from_str(&lambda_event("sub", &n)).unwrap();
        let record = &event["Records"][0];
        assert_eq!(record["EventSource"], "aws:sns");
        assert_eq!(record["EventSubscriptionArn"], "sub");
        assert_eq!(record["Sns"]["Subject"], Value::Null);
        assert_eq!(record["Sns"]["SigningCertUrl"], "https://cert");
        assert_eq!(record["Sns"]["UnsubscribeUrl"], "https://unsub");
        assert_eq!(record["Sns"]["MessageAttributes"]["kind"]["Value"], "order");
    }

    #[test]
    fn platform_entry_else_default() {
        let m: Map<String, Value> =
            serde_json::from_str(r#"{"default":"d","GCM":"{\"data\":1}"}"#).unwrap();
        assert_eq!(platform_text(Some(&m), "GCM", "d"), "{\"data\":1}");
        assert_eq!(platform_text(Some(&m), "APNS", "d"), "d");
        assert_eq!(platform_text(None, "GCM", "plain"), "plain");
    }
}
