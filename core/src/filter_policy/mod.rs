//! SNS subscription filter policies: parse, validate and compile a policy
//! once, then match Publish messages against the compiled form.
//!
//! - `parse.rs`: the policy JSON to a compiled [`FilterPolicy`], with every
//!   limit and AWS's validation texts ([`PolicyError`]);
//! - `matcher.rs`: matching message attributes or a JSON body, reporting
//!   why a message was not delivered ([`Mismatch`]);
//! - `tests.rs`: the table test, rows from AWS's documentation and
//!   recorded AWS responses.
//!
//! The compiled form is a tree of AND nodes: each holds leaves (one
//! dotted key path and its OR-ed conditions) and `$or` groups of AND
//! nodes. Nested policy objects are flattened into dotted paths at parse
//! time, and a body is flattened the same way as it is walked, which is
//! what makes `"a.b"` and `{"a":{"b":…}}` equivalent on both sides.
//!
//! Behaviour chosen where AWS is unverified (see also the items' docs):
//! - `anything-but` accepts `{"prefix"}`, `{"suffix"}` and `{"wildcard"}`,
//!   and `{"wildcard": …}` is an operator of its own: the brief reports
//!   that AWS's current pages document them, although a recorded AWS
//!   response from 2024-05 rejected `anything-but` `suffix`.
//! - Values inside arrays (body arrays, `String.Array` elements) are OR-ed
//!   one by one, including for `anything-but`: a `String.Array` matches
//!   `anything-but` when any element is outside the list (the example both
//!   the old and the current AWS page give; the current page's sentence
//!   says otherwise).
//! - Conditions on different keys inside one array element are not tied to
//!   the same element: every value under a path counts.
//! - The 5-key limit counts top-level keys of the widest `$or` combination.
//! - A key is absent where the filter reads no value: no attribute or a
//!   `Binary` one; in a body no key, `[]`, or an object (`exists` reads
//!   leaves only). Only `exists: false` matches it, as AWS documents. AWS's
//!   note that `exists: false` needs at least one attribute is applied to
//!   attribute scope only, so a body of `{}` matches it; a body's `null`
//!   is a present key, which `exists: false` does not match.

mod matcher;
mod parse;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fmt;

/// Where a policy looks (`FilterPolicyScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// The Publish message attributes (the default); nested policies are
    /// rejected.
    #[default]
    MessageAttributes,
    /// The message, which must be a JSON object to match.
    MessageBody,
}

/// One message attribute as SNS's Publish gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attribute<'a> {
    /// `String`, `Number`, `String.Array` or `Binary`, with an optional
    /// custom suffix (`Number.float`). `Binary` is never matched.
    pub data_type: &'a str,
    /// The string value (for `String.Array`, a JSON array's text).
    pub value: &'a str,
}

/// A validated, compiled filter policy.
#[derive(Debug, Clone)]
pub struct FilterPolicy {
    scope: Scope,
    /// Every key path a leaf names, each once; leaves refer to it by index.
    paths: Vec<String>,
    /// Body walk: each path (its index) and each dotted prefix of one
    /// (None), so the walk skips keys that lead nowhere.
    wanted: HashMap<String, Option<usize>>,
    root: Node,
}

/// One AND node: all its leaves and one branch of each `$or` group must
/// match.
#[derive(Debug, Clone, Default)]
struct Node {
    leaves: Vec<Leaf>,
    ors: Vec<Vec<Node>>,
}

/// A key path (index into [`FilterPolicy::paths`]) and its conditions,
/// any of which may match.
#[derive(Debug, Clone)]
struct Leaf {
    path: usize,
    conditions: Vec<Condition>,
}

/// One compiled match condition.
#[derive(Debug, Clone)]
enum Condition {
    Exact(String),
    /// Compared on the 5-decimal key ([`parse::numeric_key`]).
    Number(f64),
    Bool(bool),
    Null,
    Prefix(String),
    Suffix(String),
    /// Holds the lower-cased operand.
    EqualsIgnoreCase(String),
    Wildcard(Wildcard),
    AnythingBut(AnythingBut),
    Numeric(NumericRange),
    Exists(bool),
    Cidr(Cidr),
}

#[derive(Debug, Clone)]
enum AnythingBut {
    /// Strings and numbers (numbers as 5-decimal keys) to exclude.
    Values {
        strings: Vec<String>,
        numbers: Vec<f64>,
    },
    Prefix(String),
    Suffix(String),
    Wildcard(Wildcard),
}

/// A `*` pattern, split into its literal parts at each unescaped `*`.
#[derive(Debug, Clone)]
struct Wildcard {
    parts: Vec<String>,
}

/// Bounds on the 5-decimal key; `None` is unbounded.
#[derive(Debug, Clone, Default)]
struct NumericRange {
    lower: Option<(f64, bool)>,
    upper: Option<(f64, bool)>,
}

#[derive(Debug, Clone)]
struct Cidr {
    v4: bool,
    network: u128,
    mask: u128,
}

/// A policy that fails validation. The message is AWS's text after the
/// `FilterPolicy: ` part (Jackson's `at [Source…` location is left out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    message: String,
    nested_scope: bool,
}

impl PolicyError {
    fn new(message: impl Into<String>) -> Self {
        PolicyError {
            message: message.into(),
            nested_scope: false,
        }
    }

    fn nested_scope() -> Self {
        PolicyError {
            message: "Filter policy scope MessageAttributes does not support nested filter policy"
                .to_string(),
            nested_scope: true,
        }
    }

    /// The text after the prefix, e.g. `Filter policy can not have more
    /// than 5 keys`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The one error that carries no `FilterPolicy: ` part.
    pub fn nested_scope_error(&self) -> bool {
        self.nested_scope
    }

    /// The whole `InvalidParameter` message: Subscribe puts
    /// `Attributes Reason: ` before it, SetSubscriptionAttributes does not.
    pub fn wire_message(&self, via_subscribe: bool) -> String {
        let reason = if via_subscribe {
            "Attributes Reason: "
        } else {
            ""
        };
        if self.nested_scope {
            // The recorded text has no `FilterPolicy: ` part; the Subscribe
            // reason part is kept, as LocalStack's AWS-validated tests do.
            format!("Invalid parameter: {reason}{}", self.message)
        } else {
            format!("Invalid parameter: {reason}FilterPolicy: {}", self.message)
        }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PolicyError {}

/// Why a message was not delivered, for the console.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub reason: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl FilterPolicy {
    /// Validates and compiles `policy` (the JSON text as set). `""` and
    /// `{}` compile to a policy that delivers everything: SNS treats `""`
    /// as "no policy", and `{}` names no key to check.
    pub fn parse(policy: &str, scope: Scope) -> Result<FilterPolicy, PolicyError> {
        parse::parse(policy, scope)
    }

    /// The scope it was parsed for.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// Attribute scope. `attrs` looks an attribute up by name; `has_any`
    /// says whether the message carries any attribute at all, because
    /// `exists: false` never matches a message without attributes.
    /// Ok delivers; Err says why not.
    pub fn match_attributes<'a>(
        &self,
        attrs: &dyn Fn(&str) -> Option<Attribute<'a>>,
        has_any: bool,
    ) -> Result<(), Mismatch> {
        matcher::match_attributes(self, attrs, has_any)
    }

    /// [`match_attributes`](Self::match_attributes) over a list of
    /// `(name, attribute)` pairs, in any order.
    pub fn match_attribute_list(&self, attrs: &[(&str, Attribute<'_>)]) -> Result<(), Mismatch> {
        let lookup = |name: &str| attrs.iter().find(|(n, _)| *n == name).map(|(_, a)| *a);
        matcher::match_attributes(self, &lookup, !attrs.is_empty())
    }

    /// Body scope: `body` is the Publish message. A body that is not a JSON
    /// object never matches, unless the policy names no key at all.
    pub fn match_body(&self, body: &str) -> Result<(), Mismatch> {
        matcher::match_body(self, body)
    }
}
