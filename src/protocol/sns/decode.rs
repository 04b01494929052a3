//! SNS query parameters → the typed request.
//!
//! As for SQS (`protocol::query`), the flattened parameters are rewritten
//! into the JSON document api.rs's serde types read, through a tree keyed
//! by name segment. SNS's flattening differs from SQS's: its lists and maps
//! are not flattened, so each carries a wrapper segment (`Tags.member.1.Key`,
//! `Attributes.entry.1.key`), and the JSON member has the wire name itself.
//! One table ([`rule`]) says which names are collections; entries of a
//! struct list (Tags, PublishBatch entries) are read by the same table, so
//! a batch entry's MessageAttributes need no case of their own.
//!
//! Leniency, on purpose: the wrapper segment may be left out (`Tags.1.Key`),
//! a map's `key`/`value` may be capitalised, a bare value on a string list
//! is its one member, and lists are ordered by index, not arrival.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use retsu_core::sns::api::{SnsAction, SnsRequest};
use retsu_core::sns::error::SnsError;

use crate::protocol::query::Params;

/// The deepest name SNS's shapes use has 8 segments
/// (`PublishBatchRequestEntries.member.1.MessageAttributes.entry.1.Value.DataType`).
/// A longer one cannot name anything and is ignored like any unknown
/// parameter; skipping it also bounds the tree's depth (and its recursive drop).
const MAX_SEGMENTS: usize = 8;

/// The query parameters as `action`'s typed request.
pub fn decode(action: SnsAction, params: Params) -> Result<SnsRequest, SnsError> {
    action.decode(to_json(params)?)
}

/// The query parameters as the JSON document of the request (every scalar
/// a string). `Action` and `Version` are dropped; other unknown names pass
/// through and serde ignores them.
pub fn to_json(params: Params) -> Result<Value, SnsError> {
    // Most requests name scalars only (every Publish without attributes):
    // their document is the pairs themselves, with no tree to build.
    let flat = params
        .iter()
        .all(|(k, _)| !k.contains('.') && matches!(rule(k), Rule::Scalar));
    if flat {
        let members = params
            .into_iter()
            .filter(|(k, _)| k != "Action" && k != "Version")
            .map(|(k, v)| (k, Value::String(v)));
        return Ok(Value::Object(members.collect()));
    }
    to_json_by_tree(params)
}

/// [`to_json`] for any parameters.
fn to_json_by_tree(params: Params) -> Result<Value, SnsError> {
    let mut root = Node::default();
    for (key, value) in params {
        let too_deep = key.bytes().filter(|b| *b == b'.').count() >= MAX_SEGMENTS;
        if key == "Action" || key == "Version" || too_deep {
            continue;
        }
        root.insert(key.split('.'), value);
    }
    Ok(Value::Object(structure(root, "")?))
}

/// How a wire name becomes JSON.
#[derive(Clone, Copy)]
enum Rule {
    /// `X=v` → `"X": "v"`.
    Scalar,
    /// `X.member.N=v` → `"X": [v, …]`.
    List,
    /// `X.entry.N.key=k&X.entry.N.value=v` → `"X": {k: v}`.
    Map,
    /// `X.entry.N.Name=k&X.entry.N.Value.<field>=…` → `"X": {k: {field: …}}`.
    AttributeMap,
    /// `X.member.N.<field>=…` → `"X": [{field: …}, …]`, fields by this table.
    StructList,
}

/// The collections of SNS's request shapes, by wire (= JSON) name. The same
/// name is the same shape in every action, so one table serves them all.
fn rule(wire: &str) -> Rule {
    match wire {
        "TagKeys" | "AWSAccountId" | "ActionName" => Rule::List,
        "Attributes" => Rule::Map,
        "MessageAttributes" => Rule::AttributeMap,
        "Tags" | "PublishBatchRequestEntries" => Rule::StructList,
        _ => Rule::Scalar,
    }
}

/// One name segment and what was given under it.
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

    fn take(&mut self, key: &str) -> Option<Node> {
        self.children.remove(key)
    }

    /// The value under `key`, else under its capitalised form (`key`/`Key`).
    fn take_value_either(&mut self, lower: &str, upper: &str) -> Option<String> {
        let lower = self.take(lower).and_then(|n| n.value);
        let upper = self.take(upper).and_then(|n| n.value);
        lower.or(upper)
    }

    /// The members of a collection by numeric index, under the `wrapper`
    /// segment (`member`, `entry`) or, leniently, right under the name.
    /// `path` is the collection's wire name, for the error a bad index gets.
    fn items(mut self, wrapper: &str, path: &str) -> Result<BTreeMap<u64, Node>, SnsError> {
        let wrapped = self.take(wrapper).map(|inner| inner.children);
        let wrapped_path = format!("{path}.{wrapper}");
        let sources = wrapped
            .into_iter()
            .map(|c| (c, wrapped_path.as_str()))
            .chain([(self.children, path)]);
        let mut items = BTreeMap::new();
        for (children, path) in sources {
            for (key, child) in children {
                // A name that is no index at all (`Tags.foo`) names nothing
                // and is ignored; one meant as an index but unusable is an error.
                let digits = key.strip_prefix(['-', '+']).unwrap_or(&key);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    continue;
                }
                let index =
                    key.parse::<u64>().ok().filter(|i| *i >= 1).ok_or_else(|| {
                        SnsError::invalid_parameter(format!("{path}.{}", cut(&key)))
                    })?;
                // The wrapped form wins when a client somehow sends both.
                items.entry(index).or_insert(child);
            }
        }
        Ok(items)
    }
}

/// A caller's text for an error message, cut to a readable length.
fn cut(text: &str) -> String {
    const MAX: usize = 64;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}

/// The children of `node` as a JSON object. `prefix` is the wire name of
/// `node` with a trailing dot, for error messages.
fn structure(node: Node, prefix: &str) -> Result<Map<String, Value>, SnsError> {
    let mut out = Map::new();
    for (wire, mut child) in node.children {
        // Named only for errors in collections: most names are scalars.
        let path = || format!("{prefix}{wire}");
        let json = match rule(&wire) {
            Rule::Scalar => match child.value {
                Some(v) => Value::String(v),
                // `Name.x=…` under a scalar's name names nothing.
                None => continue,
            },
            Rule::List => {
                let path = path();
                // A bare value is the one member, except empty: botocore's
                // form of an empty list (`TagKeys=`).
                let bare = child.value.take().filter(|v| !v.is_empty());
                let members = child.items("member", &path)?.into_values();
                let list = bare
                    .into_iter()
                    .chain(members.filter_map(|n| n.value))
                    .map(Value::String)
                    .collect();
                Value::Array(list)
            }
            Rule::Map => {
                let path = path();
                let mut map = Map::new();
                for (index, mut item) in child.items("entry", &path)? {
                    let key = item
                        .take_value_either("key", "Key")
                        .ok_or_else(|| SnsError::missing(&format!("{path}.entry.{index}.key")))?;
                    let value = item.take_value_either("value", "Value").unwrap_or_default();
                    map.insert(key, Value::String(value));
                }
                Value::Object(map)
            }
            Rule::AttributeMap => {
                let path = path();
                let mut map = Map::new();
                for (index, mut item) in child.items("entry", &path)? {
                    let name = item
                        .take_value_either("Name", "name")
                        .ok_or_else(|| SnsError::missing(&format!("{path}.entry.{index}.Name")))?;
                    // No Value at all leaves DataType unset: the service's
                    // ValidationError, not a wire error.
                    let value = item.take("Value").map(attribute_value).unwrap_or_default();
                    map.insert(name, Value::Object(value));
                }
                Value::Object(map)
            }
            Rule::StructList => {
                let path = path();
                let mut list = Vec::new();
                for (index, item) in child.items("member", &path)? {
                    list.push(Value::Object(structure(
                        item,
                        &format!("{path}.member.{index}."),
                    )?));
                }
                Value::Array(list)
            }
        };
        out.insert(wire, json);
    }
    Ok(out)
}

/// `.Value.DataType`, `.Value.StringValue`, `.Value.BinaryValue` → a
/// `MessageAttributeValue` document; the binary stays base64 text.
fn attribute_value(mut node: Node) -> Map<String, Value> {
    let mut out = Map::new();
    for field in ["DataType", "StringValue", "BinaryValue"] {
        if let Some(mut v) = node.take(field).and_then(|n| n.value) {
            if field == "BinaryValue" && v.contains(' ') {
                // Base64 has no space: it is a `+` the client forgot to
                // percent-encode, which form decoding turned into a space.
                v = v.replace(' ', "+");
            }
            out.insert(field.into(), Value::String(v));
        }
    }
    out
}

#[cfg(test)]
mod flat_tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Params {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn flat_forms_read_as_the_tree_reads_them() {
        let forms = [
            params(&[]),
            params(&[("Action", "Publish"), ("TopicArn", "arn"), ("Message", "m")]),
            params(&[("Message", "first"), ("Message", "second"), ("", "x")]),
            params(&[("Version", "2010-03-31"), ("Subject", ""), ("Name", "t")]),
        ];
        for form in forms {
            let fast = to_json(form.clone()).unwrap();
            assert_eq!(fast, to_json_by_tree(form).unwrap());
        }
    }
}
