//! The event a mapping hands its function: `{"Records": [...]}`, each
//! record the shape AWS's SQS poller builds from a received message, field
//! for field and in AWS's order (what Powertools' `SqsRecordModel` and the
//! runtimes' event types parse); and the function's answer to it under
//! `ReportBatchItemFailures`.

use std::collections::{BTreeMap, HashSet};

use base64::Engine as _;
use serde::Serialize;

use crate::api::{Message, MessageAttributeValue};

/// The system attributes a record carries, in AWS's order; absent ones
/// (the FIFO fields on a standard queue, a trace header never sent) are
/// left out.
#[derive(Serialize)]
struct Attributes<'a> {
    #[serde(rename = "ApproximateReceiveCount")]
    approximate_receive_count: &'a str,
    #[serde(rename = "AWSTraceHeader", skip_serializing_if = "Option::is_none")]
    aws_trace_header: Option<&'a str>,
    #[serde(rename = "SentTimestamp")]
    sent_timestamp: &'a str,
    #[serde(rename = "SequenceNumber", skip_serializing_if = "Option::is_none")]
    sequence_number: Option<&'a str>,
    #[serde(rename = "MessageGroupId", skip_serializing_if = "Option::is_none")]
    message_group_id: Option<&'a str>,
    #[serde(rename = "SenderId")]
    sender_id: &'a str,
    #[serde(
        rename = "MessageDeduplicationId",
        skip_serializing_if = "Option::is_none"
    )]
    message_deduplication_id: Option<&'a str>,
    #[serde(rename = "ApproximateFirstReceiveTimestamp")]
    approximate_first_receive_timestamp: &'a str,
    #[serde(
        rename = "DeadLetterQueueSourceArn",
        skip_serializing_if = "Option::is_none"
    )]
    dead_letter_queue_source_arn: Option<&'a str>,
}

/// A message attribute in Lambda's lower-camel shape: both lists always
/// present, binary values in base64.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AttributeValue {
    #[serde(skip_serializing_if = "Option::is_none")]
    string_value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    binary_value: Option<String>,
    string_list_values: Vec<String>,
    binary_list_values: Vec<String>,
    data_type: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Record<'a> {
    message_id: &'a str,
    receipt_handle: &'a str,
    body: &'a str,
    attributes: Attributes<'a>,
    message_attributes: BTreeMap<&'a str, AttributeValue>,
    md5_of_body: &'a str,
    /// `null` when the message has no attributes, as AWS sends it.
    md5_of_message_attributes: Option<&'a str>,
    event_source: &'static str,
    #[serde(rename = "eventSourceARN")]
    event_source_arn: &'a str,
    aws_region: &'a str,
}

#[derive(Serialize)]
struct Event<'a> {
    #[serde(rename = "Records")]
    records: Vec<Record<'a>>,
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn attribute(value: &MessageAttributeValue) -> AttributeValue {
    AttributeValue {
        string_value: value.string_value.clone(),
        binary_value: value.binary_value.as_deref().map(b64),
        string_list_values: value.string_list_values.clone(),
        binary_list_values: value.binary_list_values.iter().map(|b| b64(b)).collect(),
        data_type: value.data_type.clone().unwrap_or_default(),
    }
}

fn record<'a>(message: &'a Message, queue_arn: &'a str, region: &'a str) -> Record<'a> {
    let attr = |name: &str| message.attributes.get(name).map(String::as_str);
    Record {
        message_id: &message.message_id,
        receipt_handle: &message.receipt_handle,
        body: &message.body,
        attributes: Attributes {
            approximate_receive_count: attr("ApproximateReceiveCount").unwrap_or("1"),
            aws_trace_header: attr("AWSTraceHeader"),
            sent_timestamp: attr("SentTimestamp").unwrap_or_default(),
            sequence_number: attr("SequenceNumber"),
            message_group_id: attr("MessageGroupId"),
            sender_id: attr("SenderId").unwrap_or_default(),
            message_deduplication_id: attr("MessageDeduplicationId"),
            approximate_first_receive_timestamp: attr("ApproximateFirstReceiveTimestamp")
                .unwrap_or_default(),
            dead_letter_queue_source_arn: attr("DeadLetterQueueSourceArn"),
        },
        message_attributes: message
            .message_attributes
            .iter()
            .map(|(name, value)| (name.as_str(), attribute(value)))
            .collect(),
        md5_of_body: &message.md5_of_body,
        md5_of_message_attributes: message.md5_of_message_attributes.as_deref(),
        event_source: "aws:sqs",
        event_source_arn: queue_arn,
        aws_region: region,
    }
}

/// The event for `messages`, received from the queue `queue_arn`.
pub fn event(messages: &[Message], queue_arn: &str, region: &str) -> Vec<u8> {
    let event = Event {
        records: messages
            .iter()
            .map(|m| record(m, queue_arn, region))
            .collect(),
    };
    serde_json::to_vec(&event).unwrap_or_default()
}

/// One record as a JSON value, with `body` parsed when it is JSON: what
/// `FilterCriteria` patterns are matched against (AWS filters a JSON body
/// by its fields and any other body as a plain string).
pub fn filter_view(message: &Message, queue_arn: &str, region: &str) -> serde_json::Value {
    // Written and read back rather than `to_value`: the record's
    // serializer then exists once in the binary.
    let text = serde_json::to_vec(&record(message, queue_arn, region)).unwrap_or_default();
    let mut view: serde_json::Value = serde_json::from_slice(&text).unwrap_or_default();
    if let Ok(body) = serde_json::from_str::<serde_json::Value>(&message.body) {
        if body.is_object() {
            view["body"] = body;
        }
    }
    view
}

/// What a function's answer means for the batch it was given, under
/// `ReportBatchItemFailures` (AWS's "Implementing partial batch
/// responses"): the message ids to return to the queue, or `Err` when the
/// whole batch fails, with why.
pub fn batch_item_failures(answer: &[u8], batch: &[&str]) -> Result<Vec<String>, String> {
    // An empty answer, `null`, `{}` and an empty or null list all report
    // complete success.
    if answer.iter().all(u8::is_ascii_whitespace) {
        return Ok(Vec::new());
    }
    let doc: serde_json::Value = serde_json::from_slice(answer)
        .map_err(|e| format!("the function's answer is not valid JSON ({e})"))?;
    let failures = match &doc {
        serde_json::Value::Null => return Ok(Vec::new()),
        serde_json::Value::Object(o) => match o.get("batchItemFailures") {
            None | Some(serde_json::Value::Null) => return Ok(Vec::new()),
            Some(serde_json::Value::Array(items)) => items,
            Some(_) => return Err("batchItemFailures is not a list".into()),
        },
        _ => return Err("the function's answer is not a JSON object".into()),
    };
    let in_batch: HashSet<&str> = batch.iter().copied().collect();
    let mut ids = Vec::with_capacity(failures.len());
    for item in failures {
        let id = match item.get("itemIdentifier") {
            None => return Err("a batchItemFailures entry has no itemIdentifier".into()),
            Some(serde_json::Value::Null) => {
                return Err("a batchItemFailures entry has a null itemIdentifier".into())
            }
            Some(serde_json::Value::String(s)) if s.is_empty() => {
                return Err("a batchItemFailures entry has an empty itemIdentifier".into())
            }
            Some(serde_json::Value::String(s)) => s,
            Some(_) => return Err("an itemIdentifier is not a string".into()),
        };
        if !in_batch.contains(id.as_str()) {
            return Err(format!("itemIdentifier {id} is not a message of the batch"));
        }
        if !ids.contains(id) {
            ids.push(id.clone());
        }
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message() -> Message {
        Message {
            message_id: "m1".into(),
            receipt_handle: "rh".into(),
            md5_of_body: "md5".into(),
            body: "hello".into(),
            attributes: [
                ("ApproximateReceiveCount", "1"),
                ("SentTimestamp", "1000"),
                ("SenderId", "AIDA"),
                ("ApproximateFirstReceiveTimestamp", "1001"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            md5_of_message_attributes: None,
            message_attributes: Default::default(),
        }
    }

    #[test]
    fn the_record_is_aws_shape_in_aws_order() {
        let mut with_attribute = message();
        with_attribute.message_attributes.insert(
            "bin".into(),
            MessageAttributeValue {
                binary_value: Some(b"1100".to_vec()),
                data_type: Some("Binary".into()),
                ..Default::default()
            },
        );
        with_attribute.md5_of_message_attributes = Some("amd5".into());
        let event = event(
            &[message(), with_attribute],
            "arn:aws:sqs:us-east-1:000000000000:q",
            "us-east-1",
        );
        assert_eq!(
            String::from_utf8(event).unwrap(),
            concat!(
                r#"{"Records":["#,
                r#"{"messageId":"m1","receiptHandle":"rh","body":"hello","attributes":{"ApproximateReceiveCount":"1","SentTimestamp":"1000","SenderId":"AIDA","ApproximateFirstReceiveTimestamp":"1001"},"messageAttributes":{},"md5OfBody":"md5","md5OfMessageAttributes":null,"eventSource":"aws:sqs","eventSourceARN":"arn:aws:sqs:us-east-1:000000000000:q","awsRegion":"us-east-1"},"#,
                r#"{"messageId":"m1","receiptHandle":"rh","body":"hello","attributes":{"ApproximateReceiveCount":"1","SentTimestamp":"1000","SenderId":"AIDA","ApproximateFirstReceiveTimestamp":"1001"},"messageAttributes":{"bin":{"binaryValue":"MTEwMA==","stringListValues":[],"binaryListValues":[],"dataType":"Binary"}},"md5OfBody":"md5","md5OfMessageAttributes":"amd5","eventSource":"aws:sqs","eventSourceARN":"arn:aws:sqs:us-east-1:000000000000:q","awsRegion":"us-east-1"}"#,
                "]}"
            )
        );
    }

    #[test]
    fn partial_batch_answers() {
        let batch = ["a", "b", "c"];
        let ok = |s: &str| batch_item_failures(s.as_bytes(), &batch);
        for success in [
            "",
            "null",
            "{}",
            r#"{"batchItemFailures":[]}"#,
            r#"{"batchItemFailures":null}"#,
        ] {
            assert_eq!(ok(success), Ok(vec![]), "{success}");
        }
        assert_eq!(
            ok(r#"{"batchItemFailures":[{"itemIdentifier":"b"},{"itemIdentifier":"c"}]}"#),
            Ok(vec!["b".to_string(), "c".to_string()])
        );
        for failure in [
            "not json",
            r#""ok""#,
            r#"{"batchItemFailures":[{"itemIdentifier":""}]}"#,
            r#"{"batchItemFailures":[{"itemIdentifier":null}]}"#,
            r#"{"batchItemFailures":[{"itemId":"a"}]}"#,
            r#"{"batchItemFailures":[{"itemIdentifier":"zz"}]}"#,
            r#"{"batchItemFailures":"a"}"#,
        ] {
            assert!(ok(failure).is_err(), "{failure}");
        }
    }
}
