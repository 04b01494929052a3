//! The JSON envelope SNS wraps a message in (for SQS subscriptions without
//! raw delivery, and for HTTP endpoints), and what of it is signed.
//!
//! The envelope is written as AWS writes it, byte for byte: Jackson's
//! pretty printer (two-space indent, `" : "`), members in AWS's order,
//! attributes one compact object a line, no newline after the last brace.
//! The signature itself is the server's (`Signer`): the core holds no keys.

/// Signs envelopes: the server's key, behind the certificate it serves.
pub trait Signer: Send + Sync {
    /// The base64 signature of `string_to_sign`.
    fn sign(&self, version: SignatureVersion, string_to_sign: &str) -> String;
    /// The certificate's file name (`SimpleNotificationService-<hex>.pem`).
    fn certificate_file_name(&self) -> &str;
}

/// The `SignatureVersion` of a topic: which hash goes under the RSA signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SignatureVersion {
    /// "1", SHA1withRSA: AWS's default.
    #[default]
    V1,
    /// "2", SHA256withRSA.
    V2,
}

impl SignatureVersion {
    /// The topic attribute's value, `"1"` or `"2"`; anything else is `None`.
    pub fn from_attribute(value: &str) -> Option<SignatureVersion> {
        match value {
            "1" => Some(SignatureVersion::V1),
            "2" => Some(SignatureVersion::V2),
            _ => None,
        }
    }

    /// The envelope's `SignatureVersion` value.
    pub fn as_str(self) -> &'static str {
        match self {
            SignatureVersion::V1 => "1",
            SignatureVersion::V2 => "2",
        }
    }
}

/// The `Type` of a signed envelope, which decides the fields signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EnvelopeKind {
    Notification,
    SubscriptionConfirmation,
    UnsubscribeConfirmation,
}

impl EnvelopeKind {
    /// The kind of an envelope's `Type` value; an unknown type is `None`.
    pub fn from_type(value: &str) -> Option<EnvelopeKind> {
        match value {
            "Notification" => Some(EnvelopeKind::Notification),
            "SubscriptionConfirmation" => Some(EnvelopeKind::SubscriptionConfirmation),
            "UnsubscribeConfirmation" => Some(EnvelopeKind::UnsubscribeConfirmation),
            _ => None,
        }
    }

    /// The envelope's `Type` value.
    pub fn as_str(self) -> &'static str {
        match self {
            EnvelopeKind::Notification => "Notification",
            EnvelopeKind::SubscriptionConfirmation => "SubscriptionConfirmation",
            EnvelopeKind::UnsubscribeConfirmation => "UnsubscribeConfirmation",
        }
    }

    /// The signed fields in AWS's order (byte-sorted names). Each is signed
    /// only when present: in practice only a Notification's `Subject` may be
    /// absent.
    pub fn signed_fields(self) -> &'static [&'static str] {
        match self {
            EnvelopeKind::Notification => &[
                "Message",
                "MessageId",
                "Subject",
                "Timestamp",
                "TopicArn",
                "Type",
            ],
            EnvelopeKind::SubscriptionConfirmation | EnvelopeKind::UnsubscribeConfirmation => &[
                "Message",
                "MessageId",
                "SubscribeURL",
                "Timestamp",
                "Token",
                "TopicArn",
                "Type",
            ],
        }
    }
}

/// The canonical string: for each field of `kind` that `field` returns, in
/// AWS's order, `Name\nValue\n`. Values are the decoded strings (a newline
/// in a message is a newline here, not `\n`).
pub fn string_to_sign<'v>(kind: EnvelopeKind, field: &dyn Fn(&str) -> Option<&'v str>) -> String {
    let mut out = String::new();
    for name in kind.signed_fields() {
        if let Some(value) = field(name) {
            out.push_str(name);
            out.push('\n');
            out.push_str(value);
            out.push('\n');
        }
    }
    out
}

/// One Notification envelope's contents.
pub struct Notification<'a> {
    pub message_id: &'a str,
    /// FIFO topics: the publish's SequenceNumber.
    pub sequence_number: Option<&'a str>,
    pub topic_arn: &'a str,
    pub subject: Option<&'a str>,
    pub message: &'a str,
    /// `2025-05-13T22:25:17.091Z`.
    pub timestamp: &'a str,
    /// Standard topics: the version, the signature and the certificate's
    /// URL. FIFO notifications are unsigned.
    pub signature: Option<(SignatureVersion, &'a str, &'a str)>,
    pub unsubscribe_url: &'a str,
    pub attributes: &'a std::collections::BTreeMap<String, super::api::MessageAttributeValue>,
}

/// A JSON string literal: `"` and `\` escaped, control characters as
/// escapes, `/` and non-ASCII as they are (as Jackson writes them).
fn quoted(out: &mut String, text: &str) {
    out.push_str(&serde_json::to_string(text).expect("strings always serialize"));
}

fn member(out: &mut String, first: &mut bool, name: &str, value: &str) {
    out.push_str(if *first { "\n  " } else { ",\n  " });
    *first = false;
    quoted(out, name);
    out.push_str(" : ");
    quoted(out, value);
}

/// The envelope as AWS writes it into an SQS body or an HTTP POST.
pub fn notification_json(n: &Notification<'_>) -> String {
    let mut out = String::with_capacity(n.message.len() + 1024);
    out.push('{');
    let mut first = true;
    member(&mut out, &mut first, "Type", "Notification");
    member(&mut out, &mut first, "MessageId", n.message_id);
    if let Some(seq) = n.sequence_number {
        member(&mut out, &mut first, "SequenceNumber", seq);
    }
    member(&mut out, &mut first, "TopicArn", n.topic_arn);
    if let Some(subject) = n.subject {
        member(&mut out, &mut first, "Subject", subject);
    }
    member(&mut out, &mut first, "Message", n.message);
    member(&mut out, &mut first, "Timestamp", n.timestamp);
    if let Some((version, signature, cert_url)) = n.signature {
        member(&mut out, &mut first, "SignatureVersion", version.as_str());
        member(&mut out, &mut first, "Signature", signature);
        member(&mut out, &mut first, "SigningCertURL", cert_url);
    }
    member(&mut out, &mut first, "UnsubscribeURL", n.unsubscribe_url);
    if !n.attributes.is_empty() {
        out.push_str(",\n  \"MessageAttributes\" : {");
        let mut first_attr = true;
        for (name, value) in n.attributes {
            out.push_str(if first_attr { "\n    " } else { ",\n    " });
            first_attr = false;
            quoted(&mut out, name);
            out.push_str(" : {\"Type\":");
            quoted(&mut out, value.data_type.as_deref().unwrap_or("String"));
            out.push_str(",\"Value\":");
            quoted(
                &mut out,
                value
                    .string_value
                    .as_deref()
                    .or(value.binary_value.as_deref())
                    .unwrap_or(""),
            );
            out.push('}');
        }
        out.push_str("\n  }");
    }
    out.push_str("\n}");
    out
}

/// A SubscriptionConfirmation or UnsubscribeConfirmation's contents.
pub struct Confirmation<'a> {
    pub kind: EnvelopeKind,
    pub message_id: &'a str,
    pub token: &'a str,
    pub topic_arn: &'a str,
    pub message: &'a str,
    pub subscribe_url: &'a str,
    pub timestamp: &'a str,
    pub signature: (SignatureVersion, &'a str, &'a str),
}

/// A confirmation as AWS writes it (the documented member order).
pub fn confirmation_json(c: &Confirmation<'_>) -> String {
    let mut out = String::with_capacity(1024);
    out.push('{');
    let mut first = true;
    member(&mut out, &mut first, "Type", c.kind.as_str());
    member(&mut out, &mut first, "MessageId", c.message_id);
    member(&mut out, &mut first, "Token", c.token);
    member(&mut out, &mut first, "TopicArn", c.topic_arn);
    member(&mut out, &mut first, "Message", c.message);
    member(&mut out, &mut first, "SubscribeURL", c.subscribe_url);
    member(&mut out, &mut first, "Timestamp", c.timestamp);
    let (version, signature, cert_url) = c.signature;
    member(&mut out, &mut first, "SignatureVersion", version.as_str());
    member(&mut out, &mut first, "Signature", signature);
    member(&mut out, &mut first, "SigningCertURL", cert_url);
    out.push_str("\n}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notification_is_written_as_aws_writes_it() {
        let mut attributes = std::collections::BTreeMap::new();
        attributes.insert(
            "Region".to_string(),
            super::super::api::MessageAttributeValue {
                data_type: Some("String".into()),
                string_value: Some("global".into()),
                binary_value: None,
            },
        );
        let json = notification_json(&Notification {
            message_id: "26dbc29f-5865-5603-a3ae-a2029168ad0b",
            sequence_number: None,
            topic_arn: "arn:aws:sns:us-east-1:000000000000:t",
            subject: None,
            message: "{\"a\": \"b/c\"}",
            timestamp: "2025-05-13T22:25:17.091Z",
            signature: Some((SignatureVersion::V1, "c2ln", "http://h/c.pem")),
            unsubscribe_url: "http://h/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-east-1:000000000000:t:1",
            attributes: &attributes,
        });
        assert_eq!(
            json,
            "{\n  \"Type\" : \"Notification\",\n  \"MessageId\" : \"26dbc29f-5865-5603-a3ae-a2029168ad0b\",\n  \"TopicArn\" : \"arn:aws:sns:us-east-1:000000000000:t\",\n  \"Message\" : \"{\\\"a\\\": \\\"b/c\\\"}\",\n  \"Timestamp\" : \"2025-05-13T22:25:17.091Z\",\n  \"SignatureVersion\" : \"1\",\n  \"Signature\" : \"c2ln\",\n  \"SigningCertURL\" : \"http://h/c.pem\",\n  \"UnsubscribeURL\" : \"http://h/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-east-1:000000000000:t:1\",\n  \"MessageAttributes\" : {\n    \"Region\" : {\"Type\":\"String\",\"Value\":\"global\"}\n  }\n}"
        );
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed["Message"], "{\"a\": \"b/c\"}");
    }
}
