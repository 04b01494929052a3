//! AddPermission and RemovePermission: statements of a topic's policy.

use serde_json::{json, Value};

use super::*;

/// The actions a topic policy statement may grant.
const SNS_ACTIONS: &[&str] = &[
    "GetTopicAttributes",
    "SetTopicAttributes",
    "AddPermission",
    "RemovePermission",
    "DeleteTopic",
    "Subscribe",
    "ListSubscriptionsByTopic",
    "Publish",
    "Receive",
];

fn policy_of(topic: &crate::sns::model::Topic) -> Value {
    let text = topic
        .attribute("Policy")
        .map(String::from)
        .unwrap_or_else(|| topic.default_policy());
    serde_json::from_str(&text)
        .unwrap_or_else(|_| json!({"Version": "2008-10-17", "Statement": []}))
}

fn statements(policy: &mut Value) -> &mut Vec<Value> {
    if !policy.get("Statement").is_some_and(Value::is_array) {
        policy["Statement"] = json!([]);
    }
    policy["Statement"].as_array_mut().expect("an array")
}

impl SnsUnit for AddPermissionRequest {
    type Response = Empty;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<Empty, SnsError> {
        let arn = topic_key(ctx, "TopicArn", &self.topic_arn)?;
        let label = required(&self.label, "Label")?;
        let accounts = self.aws_account_id.unwrap_or_default();
        let actions = self.action_name.unwrap_or_default();
        if accounts.is_empty() {
            return Err(SnsError::missing("AWSAccountId"));
        }
        if actions.is_empty() {
            return Err(SnsError::missing("ActionName"));
        }
        if actions
            .iter()
            .any(|a| a != "*" && !SNS_ACTIONS.contains(&a.as_str()))
        {
            return Err(SnsError::invalid_parameter(
                "Policy statement action out of service scope!",
            ));
        }
        let mut state = sns.lock();
        let topic = topic_mut(&mut state, &arn)?;
        let mut policy = policy_of(topic);
        let list = statements(&mut policy);
        if list.iter().any(|s| s["Sid"] == label) {
            return Err(SnsError::invalid_parameter("Statement already exists"));
        }
        let one_or_many = |items: Vec<String>| -> Value {
            if items.len() == 1 {
                json!(items[0])
            } else {
                json!(items)
            }
        };
        let principals = accounts
            .iter()
            .map(|a| format!("arn:aws:iam::{a}:root"))
            .collect();
        let granted = actions.iter().map(|a| format!("SNS:{a}")).collect();
        list.push(json!({
            "Sid": label,
            "Effect": "Allow",
            "Principal": {"AWS": one_or_many(principals)},
            "Action": one_or_many(granted),
            "Resource": arn,
        }));
        topic.attributes.insert("Policy".into(), policy.to_string());
        Ok(Empty {})
    }
}

impl SnsUnit for RemovePermissionRequest {
    type Response = Empty;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<Empty, SnsError> {
        let arn = topic_key(ctx, "TopicArn", &self.topic_arn)?;
        let label = required(&self.label, "Label")?;
        let mut state = sns.lock();
        let topic = topic_mut(&mut state, &arn)?;
        let mut policy = policy_of(topic);
        statements(&mut policy).retain(|s| s["Sid"] != label);
        topic.attributes.insert("Policy".into(), policy.to_string());
        Ok(Empty {})
    }
}
