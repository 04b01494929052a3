//! From policy JSON to the compiled tree, validating as it goes.
//!
//! Check order follows what AWS's recorded answers imply: size, JSON, the
//! key count, then one walk that reports structure and condition errors as
//! it meets them (a nested object in attribute scope is reported after its
//! own contents are checked), then complexity.

use std::collections::HashMap;
use std::net::IpAddr;

use serde_json::{Map, Value};

use super::{
    AnythingBut, Cidr, Condition, FilterPolicy, Leaf, Node, NumericRange, PolicyError, Scope,
    Wildcard,
};

const MAX_BYTES: usize = 256 * 1024;
const MAX_KEYS: usize = 5;
const MAX_COMPLEXITY: u64 = 150;

/// Words that make an object a match expression, so a `$or` branch using
/// one as a key is not a branch (and `$or` is then an ordinary key).
const OPERATORS: &[&str] = &[
    "prefix",
    "suffix",
    "equals-ignore-case",
    "wildcard",
    "anything-but",
    "numeric",
    "exists",
    "cidr",
];

pub(super) fn parse(policy: &str, scope: Scope) -> Result<FilterPolicy, PolicyError> {
    let empty = FilterPolicy {
        scope,
        paths: Vec::new(),
        wanted: HashMap::new(),
        root: Node::default(),
    };
    if policy.trim().is_empty() {
        return Ok(empty);
    }
    if policy.len() > MAX_BYTES {
        // AWS documents the limit, not its message (unverified text).
        return Err(PolicyError::new(
            "Filter policy can not be larger than 256 KB",
        ));
    }
    let value: Value = serde_json::from_str(policy)
        .map_err(|e| PolicyError::new(format!("failed to parse JSON. {e}")))?;
    let Value::Object(object) = value else {
        // A JSON value that is not an object: AWS's text is unverified.
        return Err(PolicyError::new("Filter policy must be a JSON object"));
    };
    if key_count(&object) > MAX_KEYS {
        return Err(PolicyError::new(
            "Filter policy can not have more than 5 keys",
        ));
    }
    let mut compiler = Compiler {
        scope,
        paths: Vec::new(),
        index: HashMap::new(),
    };
    let (root, complexity) = compiler.object(&object, "", 1)?;
    if complexity > MAX_COMPLEXITY {
        return Err(PolicyError::new("Filter policy is too complex"));
    }
    let mut wanted = HashMap::new();
    for (i, path) in compiler.paths.iter().enumerate() {
        for (at, _) in path.match_indices('.') {
            wanted.entry(path[..at].to_string()).or_insert(None);
        }
        wanted.insert(path.clone(), Some(i));
    }
    Ok(FilterPolicy {
        scope,
        paths: compiler.paths,
        wanted,
        root,
    })
}

/// Top-level keys, where a recognised `$or` counts as its widest branch:
/// each combination the policy expands to is held to the limit.
fn key_count(object: &Map<String, Value>) -> usize {
    let mut count = 0;
    let mut widest_or = 0;
    for (key, value) in object {
        match or_branches(key, value) {
            Some(branches) => {
                let widest = branches.iter().map(|b| key_count(b)).max().unwrap_or(0);
                widest_or += widest;
            }
            None => count += 1,
        }
    }
    count + widest_or
}

/// The branches when `key: value` is a `$or` SNS recognises: an array of
/// at least two objects, none keyed by an operator word.
fn or_branches<'v>(key: &str, value: &'v Value) -> Option<Vec<&'v Map<String, Value>>> {
    if key != "$or" {
        return None;
    }
    let items = value.as_array()?;
    if items.len() < 2 {
        return None;
    }
    items
        .iter()
        .map(|item| {
            item.as_object()
                .filter(|o| o.keys().all(|k| !OPERATORS.contains(&k.as_str())))
        })
        .collect()
}

struct Compiler {
    scope: Scope,
    paths: Vec<String>,
    index: HashMap<String, usize>,
}

impl Compiler {
    fn path_index(&mut self, path: String) -> usize {
        if let Some(&i) = self.index.get(&path) {
            return i;
        }
        let i = self.paths.len();
        self.paths.push(path.clone());
        self.index.insert(path, i);
        i
    }

    /// Compiles one policy object whose keys sit under `prefix` at nesting
    /// `depth` (1 at the top). Returns the AND node and its complexity:
    /// the product of every leaf array's length times its depth (AWS's
    /// body-scope rule; at depth 1 it is the plain product of attribute
    /// scope), with each `$or` group counting the sum of its branches.
    fn object(
        &mut self,
        object: &Map<String, Value>,
        prefix: &str,
        depth: u64,
    ) -> Result<(Node, u64), PolicyError> {
        let mut node = Node::default();
        let mut complexity: u64 = 1;
        for (key, value) in object {
            if let Some(branches) = or_branches(key, value) {
                let mut group = Vec::with_capacity(branches.len());
                let mut sum: u64 = 0;
                for branch in branches {
                    let (child, c) = self.object(branch, prefix, depth)?;
                    sum = sum.saturating_add(c);
                    group.push(child);
                }
                complexity = complexity.saturating_mul(sum);
                node.ors.push(group);
                continue;
            }
            let path = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            match value {
                Value::Array(items) => {
                    if items.is_empty() {
                        return Err(PolicyError::new("Empty arrays are not allowed"));
                    }
                    let conditions = items.iter().map(condition).collect::<Result<_, _>>()?;
                    let path = self.path_index(path);
                    node.leaves.push(Leaf { path, conditions });
                    complexity = complexity.saturating_mul(items.len() as u64 * depth);
                }
                Value::Object(child) => {
                    let (child, c) = self.object(child, &path, depth + 1)?;
                    if self.scope == Scope::MessageAttributes {
                        return Err(PolicyError::nested_scope());
                    }
                    // AND is associative: the child's leaves join ours.
                    node.leaves.extend(child.leaves);
                    node.ors.extend(child.ors);
                    complexity = complexity.saturating_mul(c);
                }
                _ => {
                    return Err(PolicyError::new(format!(
                        "\"{key}\" must be an object or an array"
                    )))
                }
            }
        }
        Ok((node, complexity))
    }
}

/// The 5-decimal comparison key: AWS matches numbers to five digits after
/// the point, so 3.015e2 and 301.5 (and 1.000001 and 1) are equal.
pub(super) fn numeric_key(x: f64) -> f64 {
    (x * 100_000.0).round()
}

fn condition(value: &Value) -> Result<Condition, PolicyError> {
    match value {
        Value::String(s) => Ok(Condition::Exact(s.clone())),
        Value::Number(n) => Ok(Condition::Number(numeric_key(number(n)))),
        Value::Bool(b) => Ok(Condition::Bool(*b)),
        Value::Null => Ok(Condition::Null),
        Value::Array(_) => Err(PolicyError::new(
            "Match value must be String, number, true, false, or null",
        )),
        Value::Object(object) => operator(object),
    }
}

fn number(n: &serde_json::Number) -> f64 {
    // Every JSON number has an f64 reading; precision past it is moot at
    // five decimals within ±1e9.
    n.as_f64().unwrap_or(f64::NAN)
}

fn single(object: &Map<String, Value>) -> Result<(&str, &Value), PolicyError> {
    let mut entries = object.iter();
    match (entries.next(), entries.next()) {
        (Some((k, v)), None) => Ok((k.as_str(), v)),
        // `{}` has no recorded AWS text; this one is the nearest.
        _ => Err(PolicyError::new("Only one key allowed in match expression")),
    }
}

fn string_operand<'v>(name: &str, value: &'v Value) -> Result<&'v str, PolicyError> {
    value
        .as_str()
        .ok_or_else(|| PolicyError::new(format!("{name} match pattern must be a string")))
}

fn operator(object: &Map<String, Value>) -> Result<Condition, PolicyError> {
    let (name, operand) = single(object)?;
    match name {
        "prefix" => Ok(Condition::Prefix(
            string_operand(name, operand)?.to_string(),
        )),
        "suffix" => Ok(Condition::Suffix(
            string_operand(name, operand)?.to_string(),
        )),
        "equals-ignore-case" => Ok(Condition::EqualsIgnoreCase(
            string_operand(name, operand)?.to_lowercase(),
        )),
        "wildcard" => Ok(Condition::Wildcard(wildcard(string_operand(
            name, operand,
        )?)?)),
        "anything-but" => anything_but(operand).map(Condition::AnythingBut),
        "numeric" => numeric(operand).map(Condition::Numeric),
        "exists" => match operand {
            Value::Bool(b) => Ok(Condition::Exists(*b)),
            _ => Err(PolicyError::new(
                "exists match pattern must be either true or false.",
            )),
        },
        // AWS says "prefix" here, not "cidr" (recorded).
        "cidr" => cidr(string_operand("prefix", operand)?).map(Condition::Cidr),
        other => Err(PolicyError::new(format!("Unrecognized match type {other}"))),
    }
}

fn anything_but(operand: &Value) -> Result<AnythingBut, PolicyError> {
    let mut strings = Vec::new();
    let mut numbers = Vec::new();
    match operand {
        Value::String(s) => strings.push(s.clone()),
        Value::Number(n) => numbers.push(numeric_key(number(n))),
        Value::Array(items) => {
            if items.is_empty() {
                return Err(PolicyError::new("Empty arrays are not allowed"));
            }
            for item in items {
                match item {
                    Value::String(s) => strings.push(s.clone()),
                    Value::Number(n) => numbers.push(numeric_key(number(n))),
                    // Unrecorded text, after Event Ruler's.
                    _ => {
                        return Err(PolicyError::new(
                            "Inside anything but list, start|null|boolean is not supported.",
                        ))
                    }
                }
            }
        }
        Value::Object(object) => {
            let (name, inner) = single(object)?;
            return match name {
                "prefix" => Ok(AnythingBut::Prefix(
                    string_operand(name, inner)?.to_string(),
                )),
                // Accepted per the current AWS pages (see the module doc).
                "suffix" => Ok(AnythingBut::Suffix(
                    string_operand(name, inner)?.to_string(),
                )),
                "wildcard" => Ok(AnythingBut::Wildcard(wildcard(string_operand(
                    name, inner,
                )?)?)),
                other => Err(PolicyError::new(format!(
                    "Unsupported anything-but pattern: {other}"
                ))),
            };
        }
        // Unrecorded text, after Event Ruler's.
        Value::Bool(_) | Value::Null => {
            return Err(PolicyError::new(
                "Value of anything-but must be an array or single string/number value.",
            ))
        }
    }
    Ok(AnythingBut::Values { strings, numbers })
}

/// Splits at unescaped `*`; `\*` and `\\` are literal. Two `*` in a row
/// are rejected as Event Ruler does (the text is unverified for SNS).
fn wildcard(pattern: &str) -> Result<Wildcard, PolicyError> {
    let mut parts = vec![String::new()];
    let mut chars = pattern.chars().enumerate().peekable();
    let mut last_star = None;
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, e @ ('*' | '\\'))) => parts.last_mut().unwrap().push(e),
                _ => {
                    return Err(PolicyError::new(format!(
                        "Invalid escape character at pos {i}"
                    )))
                }
            },
            '*' => {
                if last_star == Some(i.wrapping_sub(1)) {
                    return Err(PolicyError::new(format!(
                        "Consecutive wildcard characters at pos {i}"
                    )));
                }
                last_star = Some(i);
                parts.push(String::new());
            }
            c => parts.last_mut().unwrap().push(c),
        }
    }
    Ok(Wildcard { parts })
}

fn is_operator(v: &Value, ops: &[&str]) -> Option<String> {
    v.as_str().filter(|s| ops.contains(s)).map(str::to_string)
}

/// The numeric grammar as AWS validates it: `= n`, `< n`, `<= n`, or a
/// lower bound `> n`/`>= n` optionally followed by an upper bound.
fn numeric(operand: &Value) -> Result<NumericRange, PolicyError> {
    let Some(items) = operand.as_array() else {
        // Unrecorded text, after Event Ruler's.
        return Err(PolicyError::new("Value of numeric must be an array."));
    };
    let Some(first) = items.first() else {
        return Err(PolicyError::new("Invalid member in numeric match: ]"));
    };
    let Some(op) = first.as_str() else {
        return Err(PolicyError::new(format!(
            "Invalid member in numeric match: {first}"
        )));
    };
    let bound = |op: &str, item: Option<&Value>| -> Result<f64, PolicyError> {
        let name = if op == "=" { "equals" } else { op };
        match item {
            Some(Value::Number(n)) => Ok(numeric_key(number(n))),
            _ => Err(PolicyError::new(format!("Value of {name} must be numeric"))),
        }
    };
    let mut range = NumericRange::default();
    match op {
        "=" | "<" | "<=" => {
            let x = bound(op, items.get(1))?;
            match op {
                "=" => {
                    range.lower = Some((x, true));
                    range.upper = Some((x, true));
                }
                _ => range.upper = Some((x, op == "<=")),
            }
            if items.len() > 2 {
                return Err(PolicyError::new("Too many elements in numeric expression"));
            }
        }
        ">" | ">=" => {
            let low = bound(op, items.get(1))?;
            range.lower = Some((low, op == ">="));
            if let Some(next) = items.get(2) {
                let Some(top_op) = next.as_str() else {
                    return Err(PolicyError::new(format!(
                        "Bad value in numeric range: {next}"
                    )));
                };
                let Some(top_op) = is_operator(next, &["<", "<="]) else {
                    return Err(PolicyError::new(format!(
                        "Bad numeric range operator: {top_op}"
                    )));
                };
                let high = bound(&top_op, items.get(3))?;
                if low >= high {
                    return Err(PolicyError::new("Bottom must be less than top"));
                }
                range.upper = Some((high, top_op == "<="));
                if items.len() > 4 {
                    return Err(PolicyError::new(
                        "Too many terms in numeric range expression",
                    ));
                }
            }
        }
        other => {
            return Err(PolicyError::new(format!(
                "Unrecognized numeric range operator: {other}"
            )))
        }
    }
    Ok(range)
}

fn cidr(text: &str) -> Result<Cidr, PolicyError> {
    let mut pieces = text.split('/');
    let (Some(ip), Some(bits), None) = (pieces.next(), pieces.next(), pieces.next()) else {
        return Err(PolicyError::new("Malformed CIDR, one '/' required"));
    };
    // AWS checks the mask before the address (`bad-/64filter` reports the
    // mask).
    let bits: u32 = bits
        .parse()
        .map_err(|_| PolicyError::new("Malformed CIDR, mask bits must be an integer"))?;
    let ip: IpAddr = ip
        .parse()
        .map_err(|_| PolicyError::new(format!("Nonstandard IP address: {ip}")))?;
    let (v4, address, width) = match ip {
        IpAddr::V4(a) => (true, u128::from(u32::from(a)), 32),
        IpAddr::V6(a) => (false, u128::from(a), 128),
    };
    if bits > width {
        // Unrecorded text.
        return Err(PolicyError::new(format!(
            "Malformed CIDR, mask bits must be between 0 and {width}"
        )));
    }
    let mask = if bits == 0 {
        0
    } else {
        (u128::MAX << (width - bits)) & (u128::MAX >> (128 - width))
    };
    Ok(Cidr {
        v4,
        network: address & mask,
        mask,
    })
}
