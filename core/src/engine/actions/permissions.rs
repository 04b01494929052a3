//! AddPermission and RemovePermission: the statements of a queue's policy that grant actions to other accounts.

use super::*;
use crate::api::*;

impl Unit for AddPermissionRequest {
    type Response = Empty;
    const GRANT: Grant = Grant::OwnerOnly;
    const CHANGES_QUEUES: bool = true;

    queue_url_field!();

    async fn run(self, engine: &Engine, ctx: &RequestContext) -> Result<Empty, SqsError> {
        engine.add_permission(ctx, self)
    }
}

impl Unit for RemovePermissionRequest {
    type Response = Empty;
    const GRANT: Grant = Grant::OwnerOnly;
    const CHANGES_QUEUES: bool = true;

    queue_url_field!();

    async fn run(self, engine: &Engine, ctx: &RequestContext) -> Result<Empty, SqsError> {
        engine.remove_permission(ctx, self)
    }
}

impl Engine {
    fn add_permission(
        &self,
        ctx: &RequestContext,
        r: AddPermissionRequest,
    ) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let label = r.label.ok_or_else(|| SqsError::missing("Label"))?;
        let accounts = r
            .aws_account_ids
            .filter(|a| !a.is_empty())
            .ok_or_else(|| SqsError::missing("AWSAccountIds"))?;
        let actions = r
            .actions
            .filter(|a| !a.is_empty())
            .ok_or_else(|| SqsError::missing("Actions"))?;
        if label.is_empty()
            || label.len() > 80
            || !label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(SqsError::invalid_parameter(
                "Label",
                &label,
                "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
            ));
        }
        if actions.len() > 7 {
            return Err(SqsError::new(
                ErrorCode::OverLimit,
                format!(
                    "{} Actions were found, maximum allowed is 7.",
                    actions.len()
                ),
            ));
        }
        let grant = |name: &str| Action::from_name(name).map(Action::grant);
        if let Some(bad) = actions
            .iter()
            .find(|a| *a != "*" && grant(a) != Some(Grant::Grantable))
        {
            if grant(bad) == Some(Grant::OwnerOnly) {
                return Err(SqsError::invalid_parameter(
                    "ActionName",
                    format!("SQS:{bad}"),
                    "Only the queue owner is allowed to invoke this action.",
                ));
            }
            // Anything else, the *Batch names included (granted with their
            // single-message action), is not an action AWS can grant.
            return Err(SqsError::invalid_parameter(
                "ActionName",
                format!("SQS:{bad}"),
                "Please refer to the appropriate WSDL for a list of valid actions.",
            ));
        }
        if let Some(bad) = accounts
            .iter()
            .find(|a| a.len() != 12 || !a.chars().all(|c| c.is_ascii_digit()))
        {
            return Err(SqsError::invalid_parameter(
                "PrincipalId",
                format!("[{bad}]"),
                "Unable to verify.",
            ));
        }
        let one_or_many = |items: Vec<String>| -> Value {
            if items.len() == 1 {
                Value::String(items.into_iter().next().expect("one"))
            } else {
                Value::Array(items.into_iter().map(Value::String).collect())
            }
        };
        let statement = json!({
            "Sid": label,
            "Effect": "Allow",
            "Principal": {"AWS": one_or_many(accounts.iter().map(|a| format!("arn:aws:iam::{a}:root")).collect())},
            "Action": one_or_many(actions.iter().map(|a| format!("SQS:{a}")).collect()),
            "Resource": queue.arn,
        });
        let mut state = queue.lock();
        let mut policy = state.settings.policy.clone().unwrap_or_else(|| {
            json!({"Version": "2008-10-17", "Id": format!("{}/SQSDefaultPolicy", queue.arn), "Statement": []})
        });
        let statements = statements_mut(&mut policy);
        if statements
            .iter()
            .any(|s| s.get("Sid").and_then(Value::as_str) == Some(label.as_str()))
        {
            return Err(SqsError::invalid_parameter(
                "Label",
                &label,
                "Already exists.",
            ));
        }
        statements.push(statement);
        state.settings.policy = Some(policy);
        state.last_modified_ms = self.now();
        Ok(Empty {})
    }

    fn remove_permission(
        &self,
        ctx: &RequestContext,
        r: RemovePermissionRequest,
    ) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let label = r.label.ok_or_else(|| SqsError::missing("Label"))?;
        let mut state = queue.lock();
        let not_found = || SqsError::invalid_parameter("Label", &label, "can't find label.");
        let mut policy = state.settings.policy.clone().ok_or_else(not_found)?;
        let statements = statements_mut(&mut policy);
        let before = statements.len();
        statements.retain(|s| s.get("Sid").and_then(Value::as_str) != Some(label.as_str()));
        if statements.len() == before {
            return Err(not_found());
        }
        let empty = statements.is_empty();
        state.settings.policy = if empty { None } else { Some(policy) };
        state.last_modified_ms = self.now();
        Ok(Empty {})
    }
}

/// The `Statement` array of a policy document, created if missing.
fn statements_mut(policy: &mut Value) -> &mut Vec<Value> {
    if !policy.get("Statement").is_some_and(Value::is_array) {
        let single = policy.get("Statement").cloned();
        policy["Statement"] = Value::Array(single.into_iter().collect());
    }
    policy["Statement"].as_array_mut().expect("made an array")
}
