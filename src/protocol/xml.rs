//! AWS Query responses: XML documents.
//!
//! One generic encoder walks the JSON rendering of a result
//! ([`Response::to_json`]) and a per-action table of element names. The
//! table is needed because the query protocol names things
//! differently from JSON: lists are flattened under a singular name
//! (`QueueUrls` → repeated `<QueueUrl>`), maps become repeated
//! `<Attribute><Name/><Value/></Attribute>` entries, and the fields follow
//! model order rather than the JSON object's sorted keys.
//!
//! The writer is hand-written rather than quick-xml because the output must
//! be byte-exact, including AWS's escaping quirk: `"` is written `&quot;` and
//! CR `&#xD;` in text, so a body containing `"&quot;\r` survives an XML
//! parser's newline normalisation unchanged.

use serde_json::Value;

use crate::api::{Action, Response};
use crate::error::{ErrorCode, SqsError};

pub const CONTENT_TYPE: &str = "text/xml";
pub const NAMESPACE: &str = "http://queue.amazonaws.com/doc/2012-11-05/";
/// What AWS answers (404) to a query request that names no action.
pub const UNKNOWN_OPERATION_BODY: &str = "<UnknownOperationException/>";
/// QueueDoesNotExist reads differently on the query protocol.
pub const QUERY_QUEUE_DOES_NOT_EXIST: &str =
    "The specified queue does not exist for this wsdl version.";

/// One member of a result shape.
struct Field {
    /// Key in the JSON rendering.
    json: &'static str,
    /// Element name (for lists and maps: the name of each repeated element).
    xml: &'static str,
    kind: Kind,
}

enum Kind {
    /// `<xml>text</xml>`.
    Text,
    /// A flattened list of scalars: repeated `<xml>text</xml>`.
    TextList,
    /// A flattened map: repeated `<xml><key>k</key><value>v</value></xml>`;
    /// with `fields`, the value is a structure rather than text.
    Map {
        key: &'static str,
        value: &'static str,
        fields: Option<&'static [Field]>,
    },
    /// A flattened list of structures: repeated `<xml>fields</xml>`.
    StructList(&'static [Field]),
}

const fn text(json: &'static str) -> Field {
    Field {
        json,
        xml: json,
        kind: Kind::Text,
    }
}

const fn text_list(json: &'static str, xml: &'static str) -> Field {
    Field {
        json,
        xml,
        kind: Kind::TextList,
    }
}

const fn struct_list(json: &'static str, xml: &'static str, fields: &'static [Field]) -> Field {
    Field {
        json,
        xml,
        kind: Kind::StructList(fields),
    }
}

const QUEUE_URL: &[Field] = &[text("QueueUrl")];

/// `<Attribute><Name/><Value/></Attribute>`: queue attributes and a
/// message's system attributes alike.
const ATTRIBUTES: Field = Field {
    json: "Attributes",
    xml: "Attribute",
    kind: Kind::Map {
        key: "Name",
        value: "Value",
        fields: None,
    },
};

const QUEUE_ATTRIBUTES: &[Field] = &[ATTRIBUTES];

const LIST_QUEUES: &[Field] = &[text_list("QueueUrls", "QueueUrl"), text("NextToken")];

const LIST_DLQ_SOURCES: &[Field] = &[text_list("queueUrls", "QueueUrl"), text("NextToken")];

const LIST_QUEUE_TAGS: &[Field] = &[Field {
    json: "Tags",
    xml: "Tag",
    kind: Kind::Map {
        key: "Key",
        value: "Value",
        fields: None,
    },
}];

const SEND_MESSAGE: &[Field] = &[
    text("MD5OfMessageBody"),
    text("MD5OfMessageAttributes"),
    text("MD5OfMessageSystemAttributes"),
    text("MessageId"),
    text("SequenceNumber"),
];

const BATCH_ERROR: Field = struct_list(
    "Failed",
    "BatchResultErrorEntry",
    &[
        text("Id"),
        text("Code"),
        text("Message"),
        text("SenderFault"),
    ],
);

const SEND_MESSAGE_BATCH: &[Field] = &[
    struct_list(
        "Successful",
        "SendMessageBatchResultEntry",
        &[
            text("Id"),
            text("MessageId"),
            text("MD5OfMessageBody"),
            text("MD5OfMessageAttributes"),
            text("MD5OfMessageSystemAttributes"),
            text("SequenceNumber"),
        ],
    ),
    BATCH_ERROR,
];

const DELETE_MESSAGE_BATCH: &[Field] = &[
    struct_list("Successful", "DeleteMessageBatchResultEntry", &[text("Id")]),
    BATCH_ERROR,
];

const CHANGE_VISIBILITY_BATCH: &[Field] = &[
    struct_list(
        "Successful",
        "ChangeMessageVisibilityBatchResultEntry",
        &[text("Id")],
    ),
    BATCH_ERROR,
];

const MESSAGE_ATTRIBUTE_VALUE: &[Field] = &[
    text("StringValue"),
    text("BinaryValue"),
    text_list("StringListValues", "StringListValue"),
    text_list("BinaryListValues", "BinaryListValue"),
    text("DataType"),
];

const RECEIVE_MESSAGE: &[Field] = &[struct_list(
    "Messages",
    "Message",
    &[
        text("MessageId"),
        text("ReceiptHandle"),
        text("MD5OfBody"),
        text("Body"),
        ATTRIBUTES,
        text("MD5OfMessageAttributes"),
        Field {
            json: "MessageAttributes",
            xml: "MessageAttribute",
            kind: Kind::Map {
                key: "Name",
                value: "Value",
                fields: Some(MESSAGE_ATTRIBUTE_VALUE),
            },
        },
    ],
)];

const START_MOVE_TASK: &[Field] = &[text("TaskHandle")];

const CANCEL_MOVE_TASK: &[Field] = &[text("ApproximateNumberOfMessagesMoved")];

const LIST_MOVE_TASKS: &[Field] = &[struct_list(
    "Results",
    "ListMessageMoveTasksResultEntry",
    &[
        text("TaskHandle"),
        text("Status"),
        text("SourceArn"),
        text("DestinationArn"),
        text("MaxNumberOfMessagesPerSecond"),
        text("ApproximateNumberOfMessagesMoved"),
        text("ApproximateNumberOfMessagesToMove"),
        text("FailureReason"),
        text("StartedTimestamp"),
    ],
)];

/// The members of `<{Op}Result>`, or `None` for operations without output
/// (their response has no Result element at all).
fn result_shape(action: Action) -> Option<&'static [Field]> {
    use Action::*;
    Some(match action {
        CreateQueue | GetQueueUrl => QUEUE_URL,
        GetQueueAttributes => QUEUE_ATTRIBUTES,
        ListQueues => LIST_QUEUES,
        ListDeadLetterSourceQueues => LIST_DLQ_SOURCES,
        ListQueueTags => LIST_QUEUE_TAGS,
        SendMessage => SEND_MESSAGE,
        SendMessageBatch => SEND_MESSAGE_BATCH,
        DeleteMessageBatch => DELETE_MESSAGE_BATCH,
        ChangeMessageVisibilityBatch => CHANGE_VISIBILITY_BATCH,
        ReceiveMessage => RECEIVE_MESSAGE,
        StartMessageMoveTask => START_MOVE_TASK,
        CancelMessageMoveTask => CANCEL_MOVE_TASK,
        ListMessageMoveTasks => LIST_MOVE_TASKS,
        AddPermission
        | ChangeMessageVisibility
        | DeleteMessage
        | DeleteQueue
        | PurgeQueue
        | RemovePermission
        | SetQueueAttributes
        | TagQueue
        | UntagQueue => return None,
    })
}

/// `<{Op}Response xmlns=…>[<{Op}Result>…</{Op}Result>]<ResponseMetadata>…`.
pub fn encode_response(response: &Response, request_id: &str) -> String {
    let action = response.action();
    let op = action.name();
    let mut out = String::with_capacity(256);
    out.push('<');
    out.push_str(op);
    out.push_str("Response xmlns=\"");
    out.push_str(NAMESPACE);
    out.push_str("\">");
    if let Some(fields) = result_shape(action) {
        let mut inner = String::new();
        write_fields(&mut inner, fields, &response.to_json());
        if inner.is_empty() {
            out.push('<');
            out.push_str(op);
            out.push_str("Result/>");
        } else {
            open(&mut out, &format!("{op}Result"));
            out.push_str(&inner);
            close(&mut out, &format!("{op}Result"));
        }
    }
    out.push_str("<ResponseMetadata>");
    element(&mut out, "RequestId", request_id);
    out.push_str("</ResponseMetadata>");
    close(&mut out, &format!("{op}Response"));
    out
}

/// The query error document; the status comes from the code.
pub fn encode_error(error: &SqsError, request_id: &str) -> String {
    let message = if error.code == ErrorCode::QueueDoesNotExist {
        QUERY_QUEUE_DOES_NOT_EXIST
    } else {
        error.message.as_str()
    };
    let mut out = String::with_capacity(256);
    out.push_str("<?xml version=\"1.0\"?><ErrorResponse xmlns=\"");
    out.push_str(NAMESPACE);
    out.push_str("\"><Error>");
    element(&mut out, "Type", error.code.fault());
    element(&mut out, "Code", error.code.query_code());
    element(&mut out, "Message", message);
    out.push_str("<Detail/></Error>");
    element(&mut out, "RequestId", request_id);
    out.push_str("</ErrorResponse>");
    out
}

/// Content type of a query response rendered as JSON.
pub const JSON_CONTENT_TYPE: &str = "application/json";

/// A query response rendered as JSON, for a query request that sent
/// `Accept: application/json`: the XML document's nesting
/// (`{"<Op>Response": {"<Op>Result": {…}, "ResponseMetadata": {…}}}`),
/// scalars under their element names, lists as arrays under AWS's
/// lower-camel member names (`queueUrls`, `messages`), maps as objects.
pub fn encode_response_json(response: &Response, request_id: &str) -> String {
    let action = response.action();
    let op = action.name();
    let mut body = serde_json::Map::new();
    if let Some(fields) = result_shape(action) {
        let result = json_fields(fields, &response.to_json());
        body.insert(format!("{op}Result"), Value::Object(result));
    }
    body.insert(
        "ResponseMetadata".into(),
        serde_json::json!({ "RequestId": request_id }),
    );
    let mut root = serde_json::Map::new();
    root.insert(format!("{op}Response"), Value::Object(body));
    Value::Object(root).to_string()
}

/// The query error document rendered as JSON:
/// `{"Error": {"Type", "Code", "Message"}, "RequestId"}`.
pub fn encode_error_json(error: &SqsError, request_id: &str) -> String {
    let message = if error.code == ErrorCode::QueueDoesNotExist {
        QUERY_QUEUE_DOES_NOT_EXIST
    } else {
        error.message.as_str()
    };
    serde_json::json!({
        "Error": {
            "Type": error.code.fault(),
            "Code": error.code.query_code(),
            "Message": message,
        },
        "RequestId": request_id,
    })
    .to_string()
}

/// `QueueUrls` → `queueUrls`: how AWS names a list in the JSON rendering.
fn lower_camel(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

fn json_fields(fields: &[Field], value: &Value) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    for field in fields {
        let Some(v) = value.get(field.json) else {
            continue;
        };
        match &field.kind {
            Kind::Text => {
                if let Some(t) = scalar(v) {
                    out.insert(field.xml.into(), Value::String(t));
                }
            }
            Kind::TextList => {
                let items = v.as_array().into_iter().flatten();
                let items = items.filter_map(scalar).map(Value::String).collect();
                out.insert(lower_camel(field.json), Value::Array(items));
            }
            Kind::Map { fields, .. } => {
                let mut map = serde_json::Map::new();
                for (k, item) in v.as_object().into_iter().flatten() {
                    let rendered = match fields {
                        Some(inner) => Value::Object(json_fields(inner, item)),
                        None => Value::String(scalar(item).unwrap_or_default()),
                    };
                    map.insert(k.clone(), rendered);
                }
                out.insert(field.json.into(), Value::Object(map));
            }
            Kind::StructList(inner) => {
                let items = v.as_array().into_iter().flatten();
                let items = items
                    .map(|item| Value::Object(json_fields(inner, item)))
                    .collect();
                out.insert(lower_camel(field.json), Value::Array(items));
            }
        }
    }
    out
}

fn write_fields(out: &mut String, fields: &[Field], value: &Value) {
    for field in fields {
        let Some(v) = value.get(field.json) else {
            continue;
        };
        match &field.kind {
            Kind::Text => {
                if let Some(t) = scalar(v) {
                    element(out, field.xml, &t);
                }
            }
            Kind::TextList => {
                for item in v.as_array().into_iter().flatten() {
                    if let Some(t) = scalar(item) {
                        element(out, field.xml, &t);
                    }
                }
            }
            Kind::Map {
                key,
                value: value_name,
                fields,
            } => {
                for (k, item) in v.as_object().into_iter().flatten() {
                    open(out, field.xml);
                    element(out, key, k);
                    match fields {
                        Some(inner) => {
                            open(out, value_name);
                            write_fields(out, inner, item);
                            close(out, value_name);
                        }
                        None => element(out, value_name, &scalar(item).unwrap_or_default()),
                    }
                    close(out, field.xml);
                }
            }
            Kind::StructList(inner) => {
                for item in v.as_array().into_iter().flatten() {
                    open(out, field.xml);
                    write_fields(out, inner, item);
                    close(out, field.xml);
                }
            }
        }
    }
}

/// Text of a JSON scalar; `None` for null and containers.
pub(super) fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

pub(super) fn open(out: &mut String, name: &str) {
    out.push('<');
    out.push_str(name);
    out.push('>');
}

pub(super) fn close(out: &mut String, name: &str) {
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

pub(super) fn element(out: &mut String, name: &str, text: &str) {
    open(out, name);
    escape_text(out, text);
    close(out, name);
}

/// `<name/>`.
pub(super) fn empty(out: &mut String, name: &str) {
    out.push('<');
    out.push_str(name);
    out.push_str("/>");
}

/// The bytes [`escape_text`] looks at: the escaped ones, C0 controls
/// (tab and LF among them, which pass), and 0xEF (the lead byte of
/// U+FFFE/U+FFFF).
static SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'&' as usize] = true;
    table[b'<' as usize] = true;
    table[b'>' as usize] = true;
    table[b'"' as usize] = true;
    table[0xEF] = true;
    table
};

/// Escapes text the way AWS does: `& < > "` as entities and CR as `&#xD;`
/// (an unescaped CR would be normalised to LF by the client's parser).
/// Characters XML 1.0 cannot carry at all (NUL, most C0 controls, U+FFFE/F)
/// are replaced by U+FFFD so the document stays parseable; message bodies
/// never contain them because the engine rejects them on send.
pub fn escape_text(out: &mut String, text: &str) {
    // Runs of characters that need nothing are copied whole: every
    // character replaced is ASCII, or U+FFFE/U+FFFF (UTF-8 EF BF BE/BF), so
    // the cuts fall on character boundaries.
    let bytes = text.as_bytes();
    let (mut copied, mut i) = (0, 0);
    // The scan for the next byte that may need work is a table lookup:
    // most text has none, and this is every answer's inner loop.
    while let Some(at) = bytes[i..].iter().position(|b| SPECIAL[*b as usize]) {
        i += at;
        let (replacement, width) = match bytes[i] {
            b'&' => ("&amp;", 1),
            b'<' => ("&lt;", 1),
            b'>' => ("&gt;", 1),
            b'"' => ("&quot;", 1),
            b'\r' => ("&#xD;", 1),
            b'\t' | b'\n' => {
                i += 1;
                continue;
            }
            0..=0x1F => ("\u{FFFD}", 1),
            0xEF if matches!(bytes.get(i + 1..i + 3), Some([0xBF, 0xBE | 0xBF])) => ("\u{FFFD}", 3),
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&text[copied..i]);
        out.push_str(replacement);
        i += width;
        copied = i;
    }
    out.push_str(&text[copied..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::*;
    use std::collections::BTreeMap;

    fn escaped(s: &str) -> String {
        let mut out = String::new();
        escape_text(&mut out, s);
        out
    }

    #[test]
    fn escaping_quirks() {
        assert_eq!(
            escaped("\"&quot;&quot;\r"),
            "&quot;&amp;quot;&amp;quot;&#xD;"
        );
        assert_eq!(escaped("a<b>c'd\te\nf"), "a&lt;b&gt;c'd\te\nf");
        assert_eq!(escaped("x\u{0}y\u{FFFF}"), "x\u{FFFD}y\u{FFFD}");
        assert_eq!(
            escaped("\u{FFFE}\u{FFFD}\u{EFBF}z\u{1F}"),
            "\u{FFFD}\u{FFFD}\u{EFBF}z\u{FFFD}"
        );
        assert_eq!(escaped("日本 🎉"), "日本 🎉");
    }

    #[test]
    fn receive_message_with_attributes() {
        let mut attributes = BTreeMap::new();
        attributes.insert("SentTimestamp".to_string(), "1700000000000".to_string());
        attributes.insert("SenderId".to_string(), "000000000000".to_string());
        let mut message_attributes = MessageAttributes::new();
        message_attributes.insert(
            "Foo".into(),
            MessageAttributeValue {
                string_value: Some("Bar".into()),
                data_type: Some("String".into()),
                ..Default::default()
            },
        );
        message_attributes.insert(
            "Bin".into(),
            MessageAttributeValue {
                binary_value: Some(vec![0, 1]),
                data_type: Some("Binary".into()),
                ..Default::default()
            },
        );
        let response = Response::ReceiveMessage(ReceiveMessageResult {
            messages: vec![Message {
                message_id: "m-1".into(),
                receipt_handle: "rh+/=".into(),
                md5_of_body: "6e2baaf3b97dbeef01c0043275f9a0e7".into(),
                body: "<msg>\"&\r".into(),
                attributes,
                md5_of_message_attributes: Some("abc".into()),
                message_attributes,
            }],
        });
        assert_eq!(
            encode_response(&response, "req-1"),
            concat!(
                r#"<ReceiveMessageResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">"#,
                "<ReceiveMessageResult><Message>",
                "<MessageId>m-1</MessageId><ReceiptHandle>rh+/=</ReceiptHandle>",
                "<MD5OfBody>6e2baaf3b97dbeef01c0043275f9a0e7</MD5OfBody>",
                "<Body>&lt;msg&gt;&quot;&amp;&#xD;</Body>",
                "<Attribute><Name>SenderId</Name><Value>000000000000</Value></Attribute>",
                "<Attribute><Name>SentTimestamp</Name><Value>1700000000000</Value></Attribute>",
                "<MD5OfMessageAttributes>abc</MD5OfMessageAttributes>",
                "<MessageAttribute><Name>Bin</Name><Value><BinaryValue>AAE=</BinaryValue>",
                "<DataType>Binary</DataType></Value></MessageAttribute>",
                "<MessageAttribute><Name>Foo</Name><Value><StringValue>Bar</StringValue>",
                "<DataType>String</DataType></Value></MessageAttribute>",
                "</Message></ReceiveMessageResult>",
                "<ResponseMetadata><RequestId>req-1</RequestId></ResponseMetadata>",
                "</ReceiveMessageResponse>"
            )
        );
    }

    #[test]
    fn empty_results() {
        let empty = Response::ReceiveMessage(ReceiveMessageResult::default());
        assert_eq!(
            encode_response(&empty, "r"),
            concat!(
                r#"<ReceiveMessageResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">"#,
                "<ReceiveMessageResult/>",
                "<ResponseMetadata><RequestId>r</RequestId></ResponseMetadata>",
                "</ReceiveMessageResponse>"
            )
        );
        let no_output = Response::DeleteMessage(Empty {});
        assert_eq!(
            encode_response(&no_output, "r"),
            concat!(
                r#"<DeleteMessageResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">"#,
                "<ResponseMetadata><RequestId>r</RequestId></ResponseMetadata>",
                "</DeleteMessageResponse>"
            )
        );
    }

    #[test]
    fn lists_maps_and_batches() {
        let list = Response::ListQueues(ListQueuesResult {
            queue_urls: vec!["http://h/1/a".into(), "http://h/1/b".into()],
            next_token: Some("t".into()),
        });
        assert!(encode_response(&list, "r").contains(
            "<ListQueuesResult><QueueUrl>http://h/1/a</QueueUrl><QueueUrl>http://h/1/b</QueueUrl><NextToken>t</NextToken></ListQueuesResult>"
        ));
        let dlq = Response::ListDeadLetterSourceQueues(ListDeadLetterSourceQueuesResult {
            queue_urls: vec!["http://h/1/src".into()],
            next_token: None,
        });
        assert!(encode_response(&dlq, "r").contains(
            "<ListDeadLetterSourceQueuesResult><QueueUrl>http://h/1/src</QueueUrl></ListDeadLetterSourceQueuesResult>"
        ));
        let mut tags = BTreeMap::new();
        tags.insert("k".to_string(), "v".to_string());
        let tags = Response::ListQueueTags(ListQueueTagsResult { tags });
        assert!(encode_response(&tags, "r").contains(
            "<ListQueueTagsResult><Tag><Key>k</Key><Value>v</Value></Tag></ListQueueTagsResult>"
        ));
        let batch = Response::SendMessageBatch(SendMessageBatchResult {
            successful: vec![SendMessageBatchResultEntry {
                id: "a".into(),
                result: SendMessageResult {
                    md5_of_message_body: Md5Hex(
                        0x0cc175b9_c0f1b6a8_31c399e2_69772661_u128.to_be_bytes(),
                    ),
                    message_id: IdText(uuid::Uuid::from_u128(
                        0x5fea7756_0ea4_451a_a703_a558b933e274,
                    )),
                    sequence_number: Some("18849496460467696128".into()),
                    ..Default::default()
                },
            }],
            failed: vec![BatchResultErrorEntry {
                id: "b".into(),
                sender_fault: true,
                code: "InvalidMessageContents".into(),
                message: "bad".into(),
            }],
        });
        assert!(encode_response(&batch, "r").contains(concat!(
            "<SendMessageBatchResult><SendMessageBatchResultEntry><Id>a</Id>",
            "<MessageId>5fea7756-0ea4-451a-a703-a558b933e274</MessageId>",
            "<MD5OfMessageBody>0cc175b9c0f1b6a831c399e269772661</MD5OfMessageBody>",
            "<SequenceNumber>18849496460467696128</SequenceNumber>",
            "</SendMessageBatchResultEntry><BatchResultErrorEntry><Id>b</Id><Code>InvalidMessageContents</Code>",
            "<Message>bad</Message><SenderFault>true</SenderFault></BatchResultErrorEntry></SendMessageBatchResult>"
        )));
        let cmv = Response::ChangeMessageVisibilityBatch(BatchResult {
            successful: vec![BatchResultEntry { id: "x".into() }],
            failed: vec![],
        });
        assert!(encode_response(&cmv, "r").contains(
            "<ChangeMessageVisibilityBatchResult><ChangeMessageVisibilityBatchResultEntry><Id>x</Id></ChangeMessageVisibilityBatchResultEntry></ChangeMessageVisibilityBatchResult>"
        ));
        let tasks = Response::ListMessageMoveTasks(ListMessageMoveTasksResult {
            results: vec![ListMessageMoveTasksResultEntry {
                status: "COMPLETED".into(),
                source_arn: "arn:s".into(),
                approximate_number_of_messages_moved: 2,
                approximate_number_of_messages_to_move: 2,
                started_timestamp: 1700000000000,
                ..Default::default()
            }],
        });
        assert!(encode_response(&tasks, "r").contains(concat!(
            "<ListMessageMoveTasksResultEntry><Status>COMPLETED</Status><SourceArn>arn:s</SourceArn>",
            "<ApproximateNumberOfMessagesMoved>2</ApproximateNumberOfMessagesMoved>",
            "<ApproximateNumberOfMessagesToMove>2</ApproximateNumberOfMessagesToMove>",
            "<StartedTimestamp>1700000000000</StartedTimestamp></ListMessageMoveTasksResultEntry>"
        )));
    }

    #[test]
    fn every_action_with_output_has_a_shape() {
        for action in Action::ALL {
            let no_output = matches!(
                action,
                Action::AddPermission
                    | Action::ChangeMessageVisibility
                    | Action::DeleteMessage
                    | Action::DeleteQueue
                    | Action::PurgeQueue
                    | Action::RemovePermission
                    | Action::SetQueueAttributes
                    | Action::TagQueue
                    | Action::UntagQueue
            );
            assert_eq!(result_shape(*action).is_none(), no_output, "{action:?}");
        }
    }

    #[test]
    fn error_document() {
        let err = SqsError::queue_does_not_exist();
        assert_eq!(
            encode_error(&err, "42d59b56"),
            concat!(
                r#"<?xml version="1.0"?><ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">"#,
                "<Error><Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code>",
                "<Message>The specified queue does not exist for this wsdl version.</Message><Detail/></Error>",
                "<RequestId>42d59b56</RequestId></ErrorResponse>"
            )
        );
        let err = SqsError::internal("boom <&>");
        let xml = encode_error(&err, "r");
        assert!(xml.contains(
            "<Type>Receiver</Type><Code>InternalError</Code><Message>boom &lt;&amp;&gt;</Message>"
        ));
    }
}
