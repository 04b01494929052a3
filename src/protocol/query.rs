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
//! Most requests name only plain scalars (SendMessage, DeleteMessage):
//! their JSON text is written straight from the parameters, with no tree.
//!
//! Leniency, on purpose: an index may be left out (`AttributeName=All` is
//! `AttributeName.1=All`, as AWS accepts), lists are ordered by the numeric
//! index rather than by arrival, and scalars stay strings (the API's
//! integer fields accept strings).

use std::borrow::Cow;
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
        pairs(q.as_bytes(), &mut out);
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
        pairs(body, &mut out);
    }
    out
}

/// Appends the pairs of a form, as `form_urlencoded::parse` reads them.
/// Most pairs have nothing to decode (no `%`, no `+`) and are copied as
/// they stand; the rest are decoded by [`form_component`]. The crate's
/// parser passes over every byte several times, which showed as the
/// largest part of a query-protocol request's cost.
fn pairs(form: &[u8], out: &mut Params) {
    let ends = memchr::memchr_iter(b'&', form).chain([form.len()]);
    let mut start = 0;
    for end in ends {
        let pair = &form[start..end];
        start = end + 1;
        if pair.is_empty() {
            continue;
        }
        let plain = memchr::memchr2(b'%', b'+', pair).is_none();
        let split = memchr::memchr(b'=', pair);
        let (name, value) = match split {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => (pair, &pair[pair.len()..]),
        };
        if plain {
            if let (Ok(name), Ok(value)) = (std::str::from_utf8(name), std::str::from_utf8(value)) {
                out.push((name.to_owned(), value.to_owned()));
                continue;
            }
        }
        out.push((form_component(name), form_component(value)));
    }
}

/// One side of a form pair, decoded as `form_urlencoded` does it (`+` is
/// a space, then percent-decoding, then UTF-8 with U+FFFD for what is not),
/// in fewer passes: the crate's parser looked for `&`, `=`, `+` and `%`
/// again in what [`pairs`] has already cut.
fn form_component(bytes: &[u8]) -> String {
    let spaced: Cow<'_, [u8]> = if memchr::memchr(b'+', bytes).is_some() {
        Cow::Owned(
            bytes
                .iter()
                .map(|b| if *b == b'+' { b' ' } else { *b })
                .collect(),
        )
    } else {
        Cow::Borrowed(bytes)
    };
    // Sized once: decoding only shrinks, and the crate's own collecting
    // grows its buffer a few bytes at a time.
    let mut decoded = Vec::with_capacity(spaced.len());
    decoded.extend(percent_encoding::percent_decode(&spaced));
    String::from_utf8(decoded)
        .unwrap_or_else(|bad| String::from_utf8_lossy(bad.as_bytes()).into_owned())
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
    if let Some(text) = flat_text(action, params, queue_url_from_path.as_deref()) {
        return action.decode_text(&text?).map_err(caller_value);
    }
    through_tree(action, params, queue_url_from_path)
}

/// [`decode`] for any parameters: through the tree and its JSON document.
fn through_tree(
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
    action.decode(doc).map_err(caller_value)
}

/// Integers were checked with the parameter's name; what serde still
/// refuses (e.g. bad base64) is the caller's value, not JSON.
fn caller_value(e: SqsError) -> SqsError {
    match e.code {
        ErrorCode::Serialization => SqsError::invalid_value(format!(
            "One or more parameters are invalid. Reason: {}",
            e.message
        )),
        _ => e,
    }
}

/// The JSON text of a request whose parameters are all plain scalars,
/// each given once (SendMessage and DeleteMessage as most clients send
/// them), written straight from the parameters in the tree's order; `None`
/// for any other request, which goes through the tree.
fn flat_text(
    action: Action,
    params: &Params,
    queue_url_from_path: Option<&str>,
) -> Option<Result<String, SqsError>> {
    let mut members: Vec<(&str, &str)> = params
        .iter()
        .filter(|(key, _)| key != "Action" && key != "Version")
        .map(|(key, value)| (key.as_str(), value.as_str()))
        .collect();
    members.sort_unstable_by_key(|(key, _)| *key);
    let repeated = members.windows(2).any(|w| w[0].0 == w[1].0);
    let plain = |(key, value): &(&str, &str)| {
        !key.contains('.')
            && matches!(rule(Some(action), key), Rule::Scalar)
            && !(value.is_empty() && empty_collection(key).is_some())
    };
    if repeated || !members.iter().all(plain) {
        return None;
    }
    if let Some(url) = queue_url_from_path {
        // Java v1 posts to the queue URL instead of naming it.
        if action.by_queue_url() && !members.iter().any(|(key, _)| *key == "QueueUrl") {
            let at = members.partition_point(|(key, _)| *key < "QueueUrl");
            members.insert(at, ("QueueUrl", url));
        }
    }
    let size: usize = members.iter().map(|(k, v)| k.len() + v.len() + 6).sum();
    let mut text: Vec<u8> = Vec::with_capacity(size + 2);
    text.push(b'{');
    for (n, (key, value)) in members.into_iter().enumerate() {
        if INTEGER_PARAMETERS.contains(&key) && value.parse::<i32>().is_err() {
            return Some(Err(SqsError::invalid_parameter(
                key,
                abbreviate(value),
                "Must be a whole number within the 32-bit integer range.",
            )));
        }
        if n > 0 {
            text.push(b',');
        }
        serde_json::to_writer(&mut text, key).expect("a string always serializes");
        text.push(b':');
        serde_json::to_writer(&mut text, value).expect("a string always serializes");
    }
    text.push(b'}');
    Some(Ok(String::from_utf8(text).expect("serde_json writes UTF-8")))
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
#[path = "query_tests.rs"]
mod tests;
