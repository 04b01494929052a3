//! Matching a message against a compiled policy.
//!
//! The message is read once: attribute scope looks up each policy path's
//! attribute (and parses a `String.Array` once), body scope parses the JSON
//! once and walks it, descending only into keys that lead to a policy path
//! and collecting the leaf values found at each. The tree is then
//! evaluated over those values.

use std::net::IpAddr;

use serde_json::Value;

use super::parse::numeric_key;
use super::{AnythingBut, Attribute, Condition, FilterPolicy, Leaf, Mismatch, Node, Wildcard};

/// One leaf value of the message, typed as the filter sees it.
#[derive(Debug, Clone, Copy)]
enum Val<'v> {
    Str(&'v str),
    Num(f64),
    Bool(bool),
    Null,
}

impl std::fmt::Display for Val<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Str(s) => write!(f, "{}", Value::String((*s).to_string())),
            Val::Num(n) => write!(f, "{n}"),
            Val::Bool(b) => write!(f, "{b}"),
            Val::Null => f.write_str("null"),
        }
    }
}

/// What one policy path found in the message.
struct Found<'v> {
    /// The key is there: for attributes, with a type the filter reads
    /// (not `Binary`); in a body, with at least one leaf value, a JSON
    /// `null` counting (`[]` and an object give none: absent).
    present: bool,
    values: Vec<Val<'v>>,
}

/// How reasons name a path, and whether `exists: false` may match.
struct Context<'p> {
    paths: &'p [String],
    attributes: bool,
    /// False only for a message without attributes (attribute scope).
    absence_matches: bool,
}

impl Context<'_> {
    fn name(&self, path: usize) -> String {
        if self.attributes {
            format!("attribute \"{}\"", self.paths[path])
        } else {
            format!("\"{}\"", self.paths[path])
        }
    }
}

pub(super) fn match_attributes<'a>(
    policy: &FilterPolicy,
    attrs: &dyn Fn(&str) -> Option<Attribute<'a>>,
    has_any: bool,
) -> Result<(), Mismatch> {
    if policy.paths.is_empty() {
        return Ok(());
    }
    // String.Array values are parsed here, once, and borrowed below.
    let looked_up: Vec<Option<Typed<'a>>> =
        policy.paths.iter().map(|p| attrs(p).map(typed)).collect();
    let found: Vec<Found<'_>> = looked_up.iter().map(found_in_attribute).collect();
    let context = Context {
        paths: &policy.paths,
        attributes: true,
        absence_matches: has_any,
    };
    evaluate(&policy.root, &found, &context).map_err(|reason| Mismatch { reason })
}

/// An attribute as the filter reads it.
enum Typed<'a> {
    Str(&'a str),
    Num(Option<f64>),
    /// The parsed array, or None if the value was not a JSON array.
    Array(Option<Vec<Value>>),
    /// `Binary` and unknown types: treated as absent.
    Ignored,
}

fn typed(attr: Attribute<'_>) -> Typed<'_> {
    let base = attr.data_type;
    if base == "String.Array" || base.starts_with("String.Array.") {
        return Typed::Array(serde_json::from_str::<Vec<Value>>(attr.value).ok());
    }
    // A custom suffix (`Number.float`) does not change the type.
    match base.split('.').next() {
        Some("String") => Typed::Str(attr.value),
        Some("Number") => Typed::Num(
            attr.value
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite()),
        ),
        _ => Typed::Ignored,
    }
}

fn found_in_attribute<'v>(attr: &'v Option<Typed<'_>>) -> Found<'v> {
    let mut values = Vec::new();
    let present = match attr {
        None | Some(Typed::Ignored) => false,
        Some(Typed::Str(s)) => {
            values.push(Val::Str(s));
            true
        }
        Some(Typed::Num(n)) => {
            values.extend(n.map(Val::Num));
            true
        }
        Some(Typed::Array(items)) => {
            // Nested arrays and objects inside a String.Array are skipped:
            // no condition can name them.
            values.extend(items.iter().flatten().filter_map(scalar));
            true
        }
    };
    Found { present, values }
}

fn scalar(v: &Value) -> Option<Val<'_>> {
    match v {
        Value::String(s) => Some(Val::Str(s)),
        Value::Number(n) => n.as_f64().map(Val::Num),
        Value::Bool(b) => Some(Val::Bool(*b)),
        Value::Null => Some(Val::Null),
        Value::Array(_) | Value::Object(_) => None,
    }
}

/// Body scope. A policy that names no key delivers everything; otherwise
/// a body that is not a JSON object matches nothing.
pub(super) fn match_body(policy: &FilterPolicy, body: &str) -> Result<(), Mismatch> {
    if policy.paths.is_empty() {
        return Ok(());
    }
    let parsed: Value = serde_json::from_str(body).map_err(|_| Mismatch {
        reason: "the message body is not JSON".to_string(),
    })?;
    if !parsed.is_object() {
        return Err(Mismatch {
            reason: "the message body is not a JSON object".to_string(),
        });
    }
    let mut values: Vec<Vec<Val<'_>>> = vec![Vec::new(); policy.paths.len()];
    let mut path = String::new();
    walk(&parsed, &mut path, policy, &mut values);
    let found: Vec<Found<'_>> = values
        .into_iter()
        .map(|values| Found {
            present: !values.is_empty(),
            values,
        })
        .collect();
    let context = Context {
        paths: &policy.paths,
        attributes: false,
        absence_matches: true,
    };
    evaluate(&policy.root, &found, &context).map_err(|reason| Mismatch { reason })
}

/// Flattens `value` under `path`: object keys extend the path with `.`
/// (so dotted keys and nesting meet), arrays keep it (so each element
/// counts), and leaves at a policy path are collected.
fn walk<'b>(value: &'b Value, path: &mut String, policy: &FilterPolicy, out: &mut [Vec<Val<'b>>]) {
    match value {
        Value::Object(object) => {
            for (key, child) in object {
                let len = path.len();
                if len > 0 {
                    path.push('.');
                }
                path.push_str(key);
                // Only keys on the way to a policy path are worth a visit.
                if policy.wanted.contains_key(path.as_str()) {
                    walk(child, path, policy, out);
                }
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            for item in items {
                walk(item, path, policy, out);
            }
        }
        leaf => {
            if let (Some(Some(i)), Some(v)) = (policy.wanted.get(path.as_str()), scalar(leaf)) {
                out[*i].push(v);
            }
        }
    }
}

fn evaluate(node: &Node, found: &[Found<'_>], context: &Context<'_>) -> Result<(), String> {
    for leaf in &node.leaves {
        evaluate_leaf(leaf, &found[leaf.path], context)?;
    }
    for group in &node.ors {
        let mut reasons = Vec::new();
        let mut matched = false;
        for branch in group {
            match evaluate(branch, found, context) {
                Ok(()) => {
                    matched = true;
                    break;
                }
                Err(reason) => reasons.push(reason),
            }
        }
        if !matched {
            return Err(format!("no $or branch matches ({})", reasons.join("; ")));
        }
    }
    Ok(())
}

fn evaluate_leaf(leaf: &Leaf, found: &Found<'_>, context: &Context<'_>) -> Result<(), String> {
    if !found.present {
        // AWS: a key the message lacks matches `exists: false` and nothing
        // else, `anything-but` and `null` included (its pages pair
        // `anything-but` with `exists: false` to take in absent keys).
        // Decided before any value is read, so no value rule (a negation,
        // a null) is ever asked about a key that is not there.
        let wants_absence = leaf
            .conditions
            .iter()
            .any(|c| matches!(c, Condition::Exists(false)));
        if wants_absence && context.absence_matches {
            return Ok(());
        }
        let name = context.name(leaf.path);
        if wants_absence {
            return Err(format!(
                "{name} is missing, but the message has no attributes at all, and exists: false needs one"
            ));
        }
        return Err(format!("{name} is missing"));
    }
    let hit = leaf.conditions.iter().any(|condition| match condition {
        // AWS asks for a value that is not null.
        Condition::Exists(true) => found.values.iter().any(|v| !matches!(v, Val::Null)),
        // The key is there, even if only with null.
        Condition::Exists(false) => false,
        other => found.values.iter().any(|v| matches_value(other, *v)),
    });
    if hit {
        return Ok(());
    }
    let name = context.name(leaf.path);
    if found.values.is_empty() {
        return Err(format!("{name} has no value the filter can read"));
    }
    let shown: Vec<String> = found.values.iter().take(5).map(Val::to_string).collect();
    let more = if found.values.len() > 5 { ", …" } else { "" };
    Err(format!(
        "{name}: {}{more} matches none of the conditions",
        shown.join(", ")
    ))
}

fn matches_value(condition: &Condition, value: Val<'_>) -> bool {
    match (condition, value) {
        (Condition::Exact(s), Val::Str(v)) => s == v,
        (Condition::Number(key), Val::Num(n)) => numeric_key(n) == *key,
        (Condition::Bool(b), Val::Bool(v)) => *b == v,
        (Condition::Null, Val::Null) => true,
        (Condition::Prefix(p), Val::Str(v)) => v.starts_with(p.as_str()),
        (Condition::Suffix(p), Val::Str(v)) => v.ends_with(p.as_str()),
        (Condition::EqualsIgnoreCase(lower), Val::Str(v)) => v.to_lowercase() == *lower,
        (Condition::Wildcard(w), Val::Str(v)) => wildcard_matches(w, v),
        (Condition::AnythingBut(a), v) => anything_but_matches(a, v),
        (Condition::Numeric(range), Val::Num(n)) => {
            let key = numeric_key(n);
            let above = match range.lower {
                None => true,
                Some((low, inclusive)) => key > low || (inclusive && key == low),
            };
            let below = match range.upper {
                None => true,
                Some((high, inclusive)) => key < high || (inclusive && key == high),
            };
            above && below
        }
        (Condition::Cidr(c), Val::Str(v)) => match v.parse::<IpAddr>() {
            Ok(IpAddr::V4(a)) if c.v4 => u128::from(u32::from(a)) & c.mask == c.network,
            Ok(IpAddr::V6(a)) if !c.v4 => u128::from(a) & c.mask == c.network,
            _ => false,
        },
        _ => false,
    }
}

/// `anything-but` needs a value of a type its operand names: strings for
/// a string (or pattern) operand, numbers for a numeric one; `null` and
/// booleans never match it.
fn anything_but_matches(a: &AnythingBut, value: Val<'_>) -> bool {
    match (a, value) {
        (AnythingBut::Values { strings, .. }, Val::Str(v)) => {
            !strings.is_empty() && !strings.iter().any(|s| s == v)
        }
        (AnythingBut::Values { numbers, .. }, Val::Num(n)) => {
            let key = numeric_key(n);
            !numbers.is_empty() && !numbers.contains(&key)
        }
        (AnythingBut::Prefix(p), Val::Str(v)) => !v.starts_with(p.as_str()),
        (AnythingBut::Suffix(p), Val::Str(v)) => !v.ends_with(p.as_str()),
        (AnythingBut::Wildcard(w), Val::Str(v)) => !wildcard_matches(w, v),
        _ => false,
    }
}

/// Glob match with `*` only: the first part anchors the start, the last
/// the end, and the middle parts are found leftmost in order (which is
/// enough when `*` is the only metacharacter).
fn wildcard_matches(w: &Wildcard, s: &str) -> bool {
    let parts = &w.parts;
    let (first, last) = (&parts[0], &parts[parts.len() - 1]);
    if parts.len() == 1 {
        return s == first;
    }
    let Some(mut rest) = s.strip_prefix(first.as_str()) else {
        return false;
    };
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle.as_str()) {
            Some(i) => rest = &rest[i + middle.len()..],
            None => return false,
        }
    }
    rest.ends_with(last.as_str())
}
