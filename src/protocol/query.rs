//! AWS Query requests: flattened `Name.N.Field=value` parameters.
//!
//! Rather than decoding query requests into the typed API a second time, this
//! module rewrites the flattened parameters into the JSON document the JSON
//! protocol would have carried, and hands it to [`Action::decode`]. Both
//! protocols therefore share one decoder and one set of validation errors.
//!
//! The rewrite goes through a tree: `SendMessageBatchRequestEntry.2.MessageAttribute.1.Name`
//! becomes nested nodes keyed by segment, and a small table of wire names
//! says how each node turns into JSON: a list, a name/value map,
//! a message-attribute map or a list of batch entries. Batch entries reuse
//! the same table for their own fields, which is why nested attributes need
//! no special case.
//!
//! Leniency, on purpose: an index may be left out (`AttributeName=All` is
//! `AttributeName.1=All`, as AWS accepts), lists are ordered by the numeric
//! index rather than by arrival, and scalars stay strings (the API's
//! integer fields accept strings).

use std::collections::BTreeMap;

use axum::http::HeaderMap;
use serde_json::{Map, Value};

use crate::api::{Action, Request};
use crate::error::{ErrorCode, SqsError};

/// Decoded parameters in arrival order: query string first, then form body.
pub type Params = Vec<(String, String)>;

/// Merges the URL query string and a form-encoded body (percent-decoded,
/// `+` as space). The body counts as a form unless its Content-Type names
/// something else, because hand-written clients often omit the header.
pub fn params(query: Option<&str>, headers: &HeaderMap, body: &[u8]) -> Params {
    let mut out: Params = Vec::new();
    if let Some(q) = query {
        out.extend(form_urlencoded::parse(q.as_bytes()).into_owned());
    }
    let form_body = match headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    {
        None => true,
        Some(ct) => ct
            .to_ascii_lowercase()
            .starts_with("application/x-www-form-urlencoded"),
    };
    if form_body && !body.is_empty() {
        out.extend(form_urlencoded::parse(body).into_owned());
    }
    out
}

/// The last value given for `name` (later values override earlier ones,
/// so a form body overrides the query string).
pub fn param<'a>(params: &'a Params, name: &str) -> Option<&'a str> {
    params
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The path of a queue URL, normalised (`/<account>/<name>` or LocalStack's
/// `/queue/<region>/<account>/<name>`), or `None` for `/` and anything else.
pub fn queue_path(path: &str) -> Option<String> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        [_, _] => Some(format!("/{}", segments.join("/"))),
        ["queue", _, _, _] => Some(format!("/{}", segments.join("/"))),
        _ => None,
    }
}

/// Decodes a query request into the typed API. `queue_url_from_path` is the
/// URL the request path names, used only when no `QueueUrl` param is given.
pub fn decode(
    action: Action,
    params: &Params,
    queue_url_from_path: Option<String>,
) -> Result<Request, SqsError> {
    let mut doc = to_json(action, params)?;
    if let (Some(url), Value::Object(map)) = (queue_url_from_path, &mut doc) {
        // Java v1 posts to the queue URL instead of naming it.
        if action.by_queue_url() && !map.contains_key("QueueUrl") {
            map.insert("QueueUrl".into(), Value::String(url));
        }
    }
    // Integers were checked above with the parameter's name; what serde
    // still refuses (e.g. bad base64) is the caller's value, not JSON.
    action.decode(doc).map_err(|e| match e.code {
        ErrorCode::Serialization => SqsError::invalid_value(format!(
            "One or more parameters are invalid. Reason: {}",
            e.message
        )),
        _ => e,
    })
}

/// The deepest parameter name SQS's shapes use has 7 segments
/// (`SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringListValue.1`).
/// Longer names cannot name anything; refusing them up front also bounds
/// the depth of the parameter tree (and of its recursive drop).
const MAX_SEGMENTS: usize = 8;

/// Integer members of SQS requests (32-bit in the model), by wire name.
const INTEGER_PARAMETERS: &[&str] = &[
    "DelaySeconds",
    "MaxNumberOfMessages",
    "VisibilityTimeout",
    "WaitTimeSeconds",
    "MaxResults",
    "MaxNumberOfMessagesPerSecond",
];

/// Rewrites flattened parameters as the JSON request document of `action`.
pub fn to_json(action: Action, params: &Params) -> Result<Value, SqsError> {
    let mut root = Node::default();
    for (key, value) in params {
        if key == "Action" || key == "Version" {
            continue;
        }
        if key.split('.').nth(MAX_SEGMENTS).is_some() {
            return Err(SqsError::new(
                ErrorCode::InvalidQueryParameter,
                format!(
                    "The parameter name {} has more than {MAX_SEGMENTS} dot-separated parts.",
                    abbreviate(key)
                ),
            ));
        }
        root.insert(key.split('.'), value.clone());
    }
    Ok(Value::Object(structure(root, Some(action), "")?))
}

/// A caller's text for an error message, cut to a readable length.
fn abbreviate(text: &str) -> String {
    const MAX: usize = 64;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// One parameter-name segment and what was given under it.
#[derive(Debug, Default)]
struct Node {
    value: Option<String>,
    children: BTreeMap<String, Node>,
}

impl Node {
    fn insert<'a>(&mut self, mut path: impl Iterator<Item = &'a str>, value: String) {
        match path.next() {
            None => self.value = Some(value),
            Some(segment) => self
                .children
                .entry(segment.to_string())
                .or_default()
                .insert(path, value),
        }
    }

    fn merge(&mut self, other: Node) {
        if other.value.is_some() {
            self.value = other.value;
        }
        for (key, child) in other.children {
            self.children.entry(key).or_default().merge(child);
        }
    }

    fn take(&mut self, key: &str) -> Option<Node> {
        self.children.remove(key)
    }

    fn take_value(&mut self, key: &str) -> Option<String> {
        self.take(key).and_then(|n| n.value)
    }

    /// The members of a flattened list, by numeric index. Anything not under
    /// a number (a bare value, or fields right under the name) is member 1,
    /// except a bare empty value: that is how botocore and the JavaScript v2
    /// SDK send an empty list (`AttributeName=`). `path` is the list's wire
    /// name, for the error a bad index gets.
    fn items(self, path: &str) -> Result<BTreeMap<u64, Node>, SqsError> {
        let mut items: BTreeMap<u64, Node> = BTreeMap::new();
        if let Some(v) = self.value.filter(|v| !v.is_empty()) {
            items.entry(1).or_default().value = Some(v);
        }
        for (key, child) in self.children {
            if looks_like_index(&key) {
                let index = key.parse::<u64>().ok().filter(|i| *i >= 1).ok_or_else(|| {
                    SqsError::invalid_parameter(
                        &format!("{path}.{}", abbreviate(&key)),
                        abbreviate(&key),
                        "A list index must be a whole number from 1 up.",
                    )
                })?;
                items.entry(index).or_default().merge(child);
            } else {
                let mut wrapper = Node::default();
                wrapper.children.insert(key, child);
                items.entry(1).or_default().merge(wrapper);
            }
        }
        Ok(items)
    }
}

/// Whether a segment was meant as a list index (`1`, `-1`, `+2`, `007`).
fn looks_like_index(segment: &str) -> bool {
    let digits = segment.strip_prefix(['-', '+']).unwrap_or(segment);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// How a wire name maps onto the JSON document.
enum Rule {
    /// `X=v`: a scalar member of the same name.
    Scalar,
    /// `X.N=v` → `"Json": [v, ...]`.
    List(&'static str),
    /// `X.N.<key>=k&X.N.<value>=v` → `"Json": {k: v}`.
    Map {
        json: &'static str,
        key: &'static str,
        value: &'static str,
    },
    /// `X.N.Name=k&X.N.Value.*` → `"Json": {k: MessageAttributeValue}`.
    AttributeMap(&'static str),
    /// `X.N.<field>=...` → `"Entries": [{field: ...}]`, fields by these same rules.
    Entries,
}

fn rule(action: Option<Action>, wire: &str) -> Rule {
    match wire {
        "Attribute" => Rule::Map {
            json: "Attributes",
            key: "Name",
            value: "Value",
        },
        // The model's one lower-case request member.
        "Tag" if action == Some(Action::CreateQueue) => Rule::Map {
            json: "tags",
            key: "Key",
            value: "Value",
        },
        // The AWS SDK for Java 1.x (through 1.12.583, its last query
        // release) sends TagQueue's map as `Tags.N.Key`, every other
        // client as `Tag.N.Key`; AWS takes both.
        "Tag" | "Tags" if action == Some(Action::TagQueue) => Rule::Map {
            json: "Tags",
            key: "Key",
            value: "Value",
        },
        "Tag" => Rule::Map {
            json: "Tags",
            key: "Key",
            value: "Value",
        },
        "TagKey" => Rule::List("TagKeys"),
        "AttributeName" => Rule::List("AttributeNames"),
        "MessageSystemAttributeName" => Rule::List("MessageSystemAttributeNames"),
        "MessageAttributeName" => Rule::List("MessageAttributeNames"),
        "AWSAccountId" => Rule::List("AWSAccountIds"),
        "ActionName" => Rule::List("Actions"),
        "MessageAttribute" => Rule::AttributeMap("MessageAttributes"),
        "MessageSystemAttribute" => Rule::AttributeMap("MessageSystemAttributes"),
        "SendMessageBatchRequestEntry"
        | "DeleteMessageBatchRequestEntry"
        | "ChangeMessageVisibilityBatchRequestEntry" => Rule::Entries,
        _ => Rule::Scalar,
    }
}

/// The empty value of a request member that is a list or a map, by its
/// JSON (model) name.
fn empty_collection(json_name: &str) -> Option<Value> {
    match json_name {
        "Entries"
        | "AttributeNames"
        | "MessageSystemAttributeNames"
        | "MessageAttributeNames"
        | "TagKeys"
        | "AWSAccountIds"
        | "Actions" => Some(Value::Array(Vec::new())),
        "Attributes" | "Tags" | "tags" | "MessageAttributes" | "MessageSystemAttributes" => {
            Some(Value::Object(Map::new()))
        }
        _ => None,
    }
}

/// Converts the children of `node` into a JSON object. `prefix` is the wire
/// name of `node` (with a trailing dot), for error messages.
fn structure(
    node: Node,
    action: Option<Action>,
    prefix: &str,
) -> Result<Map<String, Value>, SqsError> {
    let mut out = Map::new();
    for (wire, child) in node.children {
        let path = format!("{prefix}{wire}");
        match rule(action, &wire) {
            Rule::Scalar => {
                let empty =
                    child.children.is_empty() && child.value.as_deref().is_none_or(str::is_empty);
                if let (true, Some(collection)) = (empty, empty_collection(&wire)) {
                    // botocore sends an empty list under its model name
                    // (`Entries=`, `AttributeNames=`): an empty collection.
                    out.insert(wire, collection);
                } else if let Some(v) = child.value {
                    if INTEGER_PARAMETERS.contains(&wire.as_str()) && v.parse::<i32>().is_err() {
                        return Err(SqsError::invalid_parameter(
                            &path,
                            abbreviate(&v),
                            "Must be a whole number within the 32-bit integer range.",
                        ));
                    }
                    out.insert(wire, Value::String(v));
                }
            }
            Rule::List(json) => {
                let list = child
                    .items(&path)?
                    .into_values()
                    .filter_map(|n| n.value.map(Value::String))
                    .collect();
                out.insert(json.into(), Value::Array(list));
            }
            Rule::Map { json, key, value } => {
                let mut map = Map::new();
                for (index, mut item) in child.items(&path)? {
                    let k = item
                        .take_value(key)
                        .ok_or_else(|| SqsError::missing(&format!("{path}.{index}.{key}")))?;
                    let v = item.take_value(value).unwrap_or_default();
                    map.insert(k, Value::String(v));
                }
                out.insert(json.into(), Value::Object(map));
            }
            Rule::AttributeMap(json) => {
                let mut map = Map::new();
                for (index, mut item) in child.items(&path)? {
                    let name = item
                        .take_value("Name")
                        .ok_or_else(|| SqsError::missing(&format!("{path}.{index}.Name")))?;
                    let value = match item.take("Value") {
                        Some(v) => attribute_value(v, &format!("{path}.{index}.Value"))?,
                        None => Map::new(),
                    };
                    map.insert(name, Value::Object(value));
                }
                out.insert(json.into(), Value::Object(map));
            }
            Rule::Entries => {
                let mut entries = Vec::new();
                for (index, item) in child.items(&path)? {
                    let entry = structure(item, None, &format!("{path}.{index}."))?;
                    entries.push(Value::Object(entry));
                }
                out.insert("Entries".into(), Value::Array(entries));
            }
        }
    }
    Ok(out)
}

/// `.Value.DataType`, `.Value.StringValue`, `.Value.BinaryValue`,
/// `.Value.StringListValue.M`, `.Value.BinaryListValue.M` → a
/// `MessageAttributeValue` document. Binary values stay base64.
fn attribute_value(mut node: Node, path: &str) -> Result<Map<String, Value>, SqsError> {
    let mut out = Map::new();
    for field in ["DataType", "StringValue"] {
        if let Some(v) = node.take_value(field) {
            out.insert(field.into(), Value::String(v));
        }
    }
    if let Some(v) = node.take_value("BinaryValue") {
        out.insert("BinaryValue".into(), Value::String(unmangle_base64(v)));
    }
    if let Some(list) = node.take("StringListValue") {
        let values = list
            .items(&format!("{path}.StringListValue"))?
            .into_values()
            .filter_map(|n| n.value.map(Value::String))
            .collect();
        out.insert("StringListValues".into(), Value::Array(values));
    }
    if let Some(list) = node.take("BinaryListValue") {
        let values = list
            .items(&format!("{path}.BinaryListValue"))?
            .into_values()
            .filter_map(|n| n.value.map(|v| Value::String(unmangle_base64(v))))
            .collect();
        out.insert("BinaryListValues".into(), Value::Array(values));
    }
    Ok(out)
}

/// Base64 never contains a space, so a space here is a `+` that the client
/// forgot to percent-encode (form decoding turned it into a space).
fn unmangle_base64(v: String) -> String {
    if v.contains(' ') {
        v.replace(' ', "+")
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(pairs: &[(&str, &str)]) -> Params {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn convert(action: Action, pairs: &[(&str, &str)]) -> Value {
        to_json(action, &p(pairs)).expect("converts")
    }

    #[test]
    fn merges_query_string_and_form_body_with_plus_as_space() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "content-type",
            "application/x-www-form-urlencoded; charset=utf-8"
                .parse()
                .unwrap(),
        );
        let got = params(
            Some("Action=SendMessage&QueueUrl=http%3A%2F%2Fh%2F1%2Fq"),
            &headers,
            b"MessageBody=a+b%26c%0D&Version=2012-11-05",
        );
        assert_eq!(
            got,
            p(&[
                ("Action", "SendMessage"),
                ("QueueUrl", "http://h/1/q"),
                ("MessageBody", "a b&c\r"),
                ("Version", "2012-11-05"),
            ])
        );
        assert_eq!(param(&got, "MessageBody"), Some("a b&c\r"));
    }

    #[test]
    fn body_with_foreign_content_type_is_not_a_form() {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", "text/plain".parse().unwrap());
        assert!(params(None, &headers, b"Action=ListQueues").is_empty());
        assert_eq!(
            params(None, &HeaderMap::new(), b"Action=ListQueues").len(),
            1
        );
    }

    #[test]
    fn scalars_keep_names_and_stay_strings() {
        let v = convert(
            Action::ReceiveMessage,
            &[
                ("Action", "ReceiveMessage"),
                ("Version", "2012-11-05"),
                ("QueueUrl", "http://h/000000000000/q"),
                ("MaxNumberOfMessages", "10"),
                ("WaitTimeSeconds", "2"),
            ],
        );
        assert_eq!(
            v,
            json!({"QueueUrl": "http://h/000000000000/q", "MaxNumberOfMessages": "10", "WaitTimeSeconds": "2"})
        );
    }

    #[test]
    fn queue_attributes_become_a_map() {
        let v = convert(
            Action::CreateQueue,
            &[
                ("QueueName", "q"),
                ("Attribute.2.Name", "DelaySeconds"),
                ("Attribute.2.Value", "5"),
                ("Attribute.1.Name", "VisibilityTimeout"),
                ("Attribute.1.Value", "60"),
            ],
        );
        assert_eq!(
            v,
            json!({"QueueName": "q", "Attributes": {"VisibilityTimeout": "60", "DelaySeconds": "5"}})
        );
    }

    #[test]
    fn tags_are_lowercase_on_create_queue_only() {
        let create = convert(
            Action::CreateQueue,
            &[
                ("Tag.1.Key", "k1"),
                ("Tag.1.Value", "v1"),
                ("Tag.2.Key", "k2"),
            ],
        );
        assert_eq!(create, json!({"tags": {"k1": "v1", "k2": ""}}));
        let tag = convert(
            Action::TagQueue,
            &[("Tag.1.Key", "k"), ("Tag.1.Value", "v")],
        );
        assert_eq!(tag, json!({"Tags": {"k": "v"}}));
        let untag = convert(Action::UntagQueue, &[("TagKey.2", "b"), ("TagKey.1", "a")]);
        assert_eq!(untag, json!({"TagKeys": ["a", "b"]}));
    }

    #[test]
    fn lists_are_ordered_by_numeric_index_not_text() {
        let pairs: Vec<(String, String)> = (1..=11)
            .rev()
            .map(|i| (format!("AttributeName.{i}"), format!("n{i}")))
            .collect();
        let v = to_json(Action::GetQueueAttributes, &pairs).unwrap();
        let names: Vec<String> = (1..=11).map(|i| format!("n{i}")).collect();
        assert_eq!(v, json!({ "AttributeNames": names }));
    }

    #[test]
    fn bare_empty_value_is_an_empty_list() {
        let v = convert(Action::GetQueueAttributes, &[("AttributeNames", "")]);
        assert_eq!(v, json!({"AttributeNames": []}));
        let v = convert(Action::DeleteMessageBatch, &[("Entries", "")]);
        assert_eq!(v, json!({"Entries": []}));
        let v = convert(Action::GetQueueAttributes, &[("AttributeName", "")]);
        assert!(
            v.get("AttributeNames")
                .is_none_or(|l| l.as_array().is_some_and(Vec::is_empty)),
            "{v}"
        );
        let v = convert(
            Action::SendMessageBatch,
            &[("SendMessageBatchRequestEntry", "")],
        );
        assert!(
            v.get("Entries")
                .is_none_or(|l| l.as_array().is_some_and(Vec::is_empty)),
            "{v}"
        );
    }

    #[test]
    fn bare_name_is_index_one() {
        let v = convert(Action::GetQueueAttributes, &[("AttributeName", "All")]);
        assert_eq!(v, json!({"AttributeNames": ["All"]}));
        let v = convert(
            Action::SetQueueAttributes,
            &[("Attribute.Name", "DelaySeconds"), ("Attribute.Value", "1")],
        );
        assert_eq!(v, json!({"Attributes": {"DelaySeconds": "1"}}));
        let v = convert(
            Action::SendMessage,
            &[
                ("MessageAttribute.Name", "a"),
                ("MessageAttribute.Value.DataType", "String"),
                ("MessageAttribute.Value.StringValue", "x"),
            ],
        );
        assert_eq!(
            v,
            json!({"MessageAttributes": {"a": {"DataType": "String", "StringValue": "x"}}})
        );
    }

    #[test]
    fn receive_message_name_lists() {
        let v = convert(
            Action::ReceiveMessage,
            &[
                ("AttributeName.1", "SenderId"),
                ("MessageSystemAttributeName.1", "All"),
                ("MessageAttributeName.1", "Foo.*"),
                ("MessageAttributeName.2", "Bar"),
            ],
        );
        assert_eq!(
            v,
            json!({
                "AttributeNames": ["SenderId"],
                "MessageSystemAttributeNames": ["All"],
                "MessageAttributeNames": ["Foo.*", "Bar"],
            })
        );
    }

    #[test]
    fn message_attributes_of_every_kind() {
        let v = convert(
            Action::SendMessage,
            &[
                ("MessageBody", "hi"),
                ("MessageAttribute.1.Name", "s"),
                ("MessageAttribute.1.Value.DataType", "String"),
                ("MessageAttribute.1.Value.StringValue", "x"),
                ("MessageAttribute.2.Name", "b"),
                ("MessageAttribute.2.Value.DataType", "Binary.gif"),
                // "AA+/" sent with an unencoded plus arrives as "AA /".
                ("MessageAttribute.2.Value.BinaryValue", "AA /"),
                ("MessageAttribute.3.Name", "sl"),
                ("MessageAttribute.3.Value.DataType", "String"),
                ("MessageAttribute.3.Value.StringListValue.2", "second"),
                ("MessageAttribute.3.Value.StringListValue.1", "first"),
                ("MessageAttribute.4.Name", "bl"),
                ("MessageAttribute.4.Value.DataType", "Binary"),
                ("MessageAttribute.4.Value.BinaryListValue.1", "AAE="),
                ("MessageSystemAttribute.1.Name", "AWSTraceHeader"),
                ("MessageSystemAttribute.1.Value.DataType", "String"),
                ("MessageSystemAttribute.1.Value.StringValue", "Root=1-abc"),
            ],
        );
        assert_eq!(
            v,
            json!({
                "MessageBody": "hi",
                "MessageAttributes": {
                    "s": {"DataType": "String", "StringValue": "x"},
                    "b": {"DataType": "Binary.gif", "BinaryValue": "AA+/"},
                    "sl": {"DataType": "String", "StringListValues": ["first", "second"]},
                    "bl": {"DataType": "Binary", "BinaryListValues": ["AAE="]},
                },
                "MessageSystemAttributes": {
                    "AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-abc"}
                },
            })
        );
        // And the typed decoder accepts it, binary decoded from base64.
        match Action::SendMessage.decode(v).unwrap() {
            Request::SendMessage(r) => {
                assert_eq!(
                    r.message_attributes["b"].binary_value,
                    Some(vec![0, 15, 191])
                );
                assert_eq!(
                    r.message_attributes["bl"].binary_list_values,
                    vec![vec![0, 1]]
                );
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn batch_entries_with_nested_attributes_in_index_order() {
        let v = convert(
            Action::SendMessageBatch,
            &[
                ("QueueUrl", "http://h/000000000000/q"),
                ("SendMessageBatchRequestEntry.10.Id", "ten"),
                ("SendMessageBatchRequestEntry.10.MessageBody", "b10"),
                ("SendMessageBatchRequestEntry.2.Id", "two"),
                ("SendMessageBatchRequestEntry.2.MessageBody", "b2"),
                ("SendMessageBatchRequestEntry.2.DelaySeconds", "3"),
                (
                    "SendMessageBatchRequestEntry.2.MessageAttribute.1.Name",
                    "a",
                ),
                (
                    "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType",
                    "Number",
                ),
                (
                    "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.StringValue",
                    "1",
                ),
                (
                    "SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Name",
                    "AWSTraceHeader",
                ),
                (
                    "SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Value.DataType",
                    "String",
                ),
                (
                    "SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Value.StringValue",
                    "Root=1",
                ),
                ("SendMessageBatchRequestEntry.2.MessageGroupId", "g"),
                ("SendMessageBatchRequestEntry.2.MessageDeduplicationId", "d"),
            ],
        );
        assert_eq!(
            v,
            json!({
                "QueueUrl": "http://h/000000000000/q",
                "Entries": [
                    {
                        "Id": "two", "MessageBody": "b2", "DelaySeconds": "3",
                        "MessageAttributes": {"a": {"DataType": "Number", "StringValue": "1"}},
                        "MessageSystemAttributes": {"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1"}},
                        "MessageGroupId": "g", "MessageDeduplicationId": "d",
                    },
                    {"Id": "ten", "MessageBody": "b10"},
                ]
            })
        );
        match Action::SendMessageBatch.decode(v).unwrap() {
            Request::SendMessageBatch(r) => {
                let entries = r.entries.unwrap();
                assert_eq!(entries[0].delay_seconds, Some(3));
                assert_eq!(entries[1].id.as_deref(), Some("ten"));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn delete_and_visibility_batch_entries() {
        let v = convert(
            Action::DeleteMessageBatch,
            &[
                ("DeleteMessageBatchRequestEntry.1.Id", "a"),
                ("DeleteMessageBatchRequestEntry.1.ReceiptHandle", "rh"),
            ],
        );
        assert_eq!(v, json!({"Entries": [{"Id": "a", "ReceiptHandle": "rh"}]}));
        let v = convert(
            Action::ChangeMessageVisibilityBatch,
            &[
                ("ChangeMessageVisibilityBatchRequestEntry.1.Id", "a"),
                (
                    "ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle",
                    "rh",
                ),
                (
                    "ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout",
                    "9",
                ),
            ],
        );
        match Action::ChangeMessageVisibilityBatch.decode(v).unwrap() {
            Request::ChangeMessageVisibilityBatch(r) => {
                assert_eq!(r.entries.unwrap()[0].visibility_timeout, Some(9));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn add_permission_lists() {
        let v = convert(
            Action::AddPermission,
            &[
                ("Label", "l"),
                ("AWSAccountId.1", "111111111111"),
                ("AWSAccountId.2", "222222222222"),
                ("ActionName.1", "SendMessage"),
            ],
        );
        assert_eq!(
            v,
            json!({"Label": "l", "AWSAccountIds": ["111111111111", "222222222222"], "Actions": ["SendMessage"]})
        );
    }

    #[test]
    fn map_entry_without_a_name_is_missing_parameter() {
        let err = to_json(
            Action::SetQueueAttributes,
            &p(&[("Attribute.3.Value", "1")]),
        )
        .unwrap_err();
        assert_eq!(err.code, crate::error::ErrorCode::MissingParameter);
        assert_eq!(
            err.message,
            "The request must contain the parameter Attribute.3.Name."
        );
        let err = to_json(
            Action::SendMessageBatch,
            &p(&[(
                "SendMessageBatchRequestEntry.1.MessageAttribute.2.Value.DataType",
                "String",
            )]),
        )
        .unwrap_err();
        assert!(err
            .message
            .contains("SendMessageBatchRequestEntry.1.MessageAttribute.2.Name"));
    }

    #[test]
    fn odd_keys_never_panic() {
        for key in [
            "",
            ".",
            "..",
            "MessageAttribute..Name",
            "MessageAttribute.99999999999999999999999.Name",
            "MessageAttribute.1.Value.StringListValue.x.y",
            "SendMessageBatchRequestEntry",
            "Attribute",
        ] {
            // Either a document or an AWS error; never a panic.
            let _ = to_json(Action::SendMessage, &p(&[(key, "v")]));
        }
        let v = convert(Action::SendMessage, &[("", "x"), (".", "y")]);
        assert!(v.is_object());
    }

    #[test]
    fn parameter_names_deeper_than_any_shape_are_refused_without_recursion() {
        for key in [
            ".".repeat(100_000),
            "Attribute.1".repeat(50_000),
            "MessageAttribute.1.Value.StringListValue.1.x.y.z.w".to_string(),
        ] {
            let err = to_json(Action::ListQueues, &p(&[(key.as_str(), "x")])).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidQueryParameter, "{err}");
            assert!(err.message.len() < 200, "{}", err.message);
        }
        // The deepest real shape still decodes.
        let v = convert(
            Action::SendMessageBatch,
            &[
                (
                    "SendMessageBatchRequestEntry.1.MessageAttribute.1.Name",
                    "a",
                ),
                (
                    "SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringListValue.1",
                    "s",
                ),
            ],
        );
        assert_eq!(
            v["Entries"][0]["MessageAttributes"]["a"]["StringListValues"][0], "s",
            "{v}"
        );
    }

    #[test]
    fn bad_list_indexes_name_the_parameter_and_value() {
        for (key, shown) in [
            ("Attribute.-1.Name", "Value -1 for parameter Attribute.-1 is invalid."),
            ("Attribute.0.Name", "Value 0 for parameter Attribute.0 is invalid."),
            (
                "MessageAttribute.99999999999999999999999.Name",
                "Value 99999999999999999999999 for parameter MessageAttribute.99999999999999999999999 is invalid.",
            ),
        ] {
            let err = to_json(Action::SetQueueAttributes, &p(&[(key, "v")])).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidParameterValue);
            assert!(err.message.starts_with(shown), "{}", err.message);
        }
    }

    #[test]
    fn integers_are_checked_with_the_parameter_name_and_value_as_sent() {
        for value in [
            "abc",
            "9223372036854775807",
            "99999999999999999999",
            "2147483648",
            "1.5",
            "",
        ] {
            let err = decode(
                Action::ReceiveMessage,
                &p(&[("QueueUrl", "q"), ("WaitTimeSeconds", value)]),
                None,
            )
            .unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidParameterValue);
            assert!(
                err.message.starts_with(&format!(
                    "Value {value} for parameter WaitTimeSeconds is invalid."
                )),
                "{}",
                err.message
            );
        }
        let err = decode(
            Action::SendMessageBatch,
            &p(&[
                ("QueueUrl", "q"),
                ("SendMessageBatchRequestEntry.1.Id", "a"),
                ("SendMessageBatchRequestEntry.1.MessageBody", "b"),
                ("SendMessageBatchRequestEntry.1.DelaySeconds", "x"),
            ]),
            None,
        )
        .unwrap_err();
        assert!(
            err.message.starts_with(
                "Value x for parameter SendMessageBatchRequestEntry.1.DelaySeconds is invalid."
            ),
            "{}",
            err.message
        );
        assert!(decode(
            Action::ReceiveMessage,
            &p(&[("QueueUrl", "q"), ("WaitTimeSeconds", "-5")]),
            None
        )
        .is_ok());
    }

    #[test]
    fn serde_complaints_become_invalid_parameter_value() {
        let err = decode(
            Action::SendMessage,
            &p(&[
                ("QueueUrl", "q"),
                ("MessageBody", "b"),
                ("MessageAttribute.1.Name", "a"),
                ("MessageAttribute.1.Value.DataType", "Binary"),
                ("MessageAttribute.1.Value.BinaryValue", "!!!"),
            ]),
            None,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidParameterValue, "{err}");
        assert!(!err.message.contains("line 1"), "{}", err.message);
    }

    #[test]
    fn queue_url_from_path_unless_given() {
        let url = Some("http://h:1/000000000000/q".to_string());
        match decode(Action::DeleteQueue, &p(&[]), url.clone()).unwrap() {
            Request::DeleteQueue(r) => assert_eq!(r.queue_url, url),
            other => panic!("unexpected {other:?}"),
        }
        match decode(
            Action::DeleteQueue,
            &p(&[("QueueUrl", "http://x/1/other")]),
            url.clone(),
        )
        .unwrap()
        {
            Request::DeleteQueue(r) => assert_eq!(r.queue_url.as_deref(), Some("http://x/1/other")),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn queue_paths() {
        assert_eq!(queue_path("/"), None);
        assert_eq!(queue_path(""), None);
        assert_eq!(
            queue_path("/000000000000/q"),
            Some("/000000000000/q".into())
        );
        assert_eq!(
            queue_path("/000000000000/q/"),
            Some("/000000000000/q".into())
        );
        assert_eq!(
            queue_path("/queue/us-east-1/000000000000/q.fifo"),
            Some("/queue/us-east-1/000000000000/q.fifo".into())
        );
        assert_eq!(queue_path("/a/b/c"), None);
    }
}
