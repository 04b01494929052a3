//! The facts authorization decides on, once `--auth` has verified the
//! caller (the decision itself is `crate::auth::authorize`'s): which
//! queues a request names and for which action, and whether a queue's
//! policy grants an account an action, as AWS evaluates the policy
//! AddPermission builds.

use serde_json::Value;

use super::actions::Grant;
use super::{Engine, QueueKey};
use crate::api::Action;

/// Actions only a queue's owner may call, whatever its policy says.
const OWNER_ONLY: &[Action] = &[
    Action::AddPermission,
    Action::RemovePermission,
    Action::DeleteQueue,
    Action::SetQueueAttributes,
    Action::TagQueue,
    Action::UntagQueue,
];

impl Engine {
    /// Whether the queue's policy lets `account` call `action` on it. A
    /// matching Deny wins over any Allow; a statement with a Condition is
    /// not evaluated and so grants nothing. Owner-only actions are never
    /// granted.
    pub fn grants(&self, key: &QueueKey, account: &str, action: Action) -> bool {
        if OWNER_ONLY.contains(&action) {
            return false;
        }
        let Some(queue) = self.queue_by_key(key) else {
            return false;
        };
        let policy = queue.lock().settings.policy.clone();
        let Some(policy) = policy else {
            return false;
        };
        let statements = match policy.get("Statement") {
            Some(Value::Array(items)) => items.clone(),
            Some(single) => vec![single.clone()],
            None => return false,
        };
        let granted_name = granted_as(action);
        let mut allowed = false;
        for s in &statements {
            if !names_principal(s.get("Principal"), account)
                || !names_action(s.get("Action"), granted_name)
            {
                continue;
            }
            match s.get("Effect").and_then(Value::as_str) {
                Some("Deny") => return false,
                Some("Allow") if s.get("Condition").is_none() => allowed = true,
                _ => {}
            }
        }
        allowed
    }
}

/// The name a policy grants an action under: batches go with their
/// single-message action, as AddPermission documents.
fn granted_as(action: Action) -> &'static str {
    match action.grant() {
        Grant::With(single) => single.name(),
        _ => action.name(),
    }
}

/// `"*"`, `{"AWS": "*"}`, `{"AWS": "<account>"}` or `{"AWS":
/// "arn:aws:iam::<account>:root"}` (or a list of them).
fn names_principal(principal: Option<&Value>, account: &str) -> bool {
    let root = format!("arn:aws:iam::{account}:root");
    let matches = |v: &Value| {
        v.as_str()
            .is_some_and(|p| p == "*" || p == account || p == root)
    };
    match principal {
        Some(Value::String(s)) => s == "*",
        Some(Value::Object(map)) => match map.get("AWS") {
            Some(Value::Array(items)) => items.iter().any(matches),
            Some(v) => matches(v),
            None => false,
        },
        _ => false,
    }
}

/// `SQS:<Action>`, `SQS:*` or `*` (the service prefix in any case).
fn names_action(actions: Option<&Value>, action: &str) -> bool {
    let matches = |v: &Value| {
        v.as_str().is_some_and(|a| {
            a == "*"
                || a.split_once(':').is_some_and(|(service, name)| {
                    service.eq_ignore_ascii_case("sqs") && (name == "*" || name == action)
                })
        })
    };
    match actions {
        Some(Value::Array(items)) => items.iter().any(matches),
        Some(v) => matches(v),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn principals_and_actions() {
        let acct = "111111111111";
        assert!(names_principal(Some(&json!("*")), acct));
        assert!(names_principal(
            Some(&json!({"AWS": "arn:aws:iam::111111111111:root"})),
            acct
        ));
        assert!(names_principal(
            Some(&json!({"AWS": ["222222222222", "111111111111"]})),
            acct
        ));
        assert!(!names_principal(
            Some(&json!({"AWS": "arn:aws:iam::222222222222:root"})),
            acct
        ));
        assert!(!names_principal(None, acct));
        assert!(names_action(Some(&json!("SQS:SendMessage")), "SendMessage"));
        assert!(names_action(Some(&json!("sqs:*")), "ReceiveMessage"));
        assert!(names_action(
            Some(&json!(["SQS:GetQueueUrl", "*"])),
            "PurgeQueue"
        ));
        assert!(!names_action(
            Some(&json!("SQS:SendMessage")),
            "ReceiveMessage"
        ));
        assert!(!names_action(Some(&json!("sns:*")), "SendMessage"));
        assert_eq!(granted_as(Action::SendMessageBatch), "SendMessage");
        assert_eq!(granted_as(Action::PurgeQueue), "PurgeQueue");
    }
}
