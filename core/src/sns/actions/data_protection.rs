//! Get/PutDataProtectionPolicy: stored and returned, never applied.

use super::*;

const MAX_POLICY: usize = 30_720;

impl SnsUnit for PutDataProtectionPolicyRequest {
    type Response = Empty;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<Empty, SnsError> {
        let arn = topic_key(ctx, "ResourceArn", &self.resource_arn)?;
        let policy = required(&self.data_protection_policy, "DataProtectionPolicy")?;
        if policy.len() > MAX_POLICY
            || serde_json::from_str::<serde_json::Value>(policy).map_or(true, |v| !v.is_object())
        {
            return Err(SnsError::invalid_parameter("DataProtectionPolicy"));
        }
        let mut state = sns.lock();
        let topic = state
            .topics
            .get_mut(&arn)
            .ok_or_else(SnsError::resource_not_found)?;
        topic.data_protection_policy = Some(policy.to_string());
        Ok(Empty {})
    }
}

impl SnsUnit for GetDataProtectionPolicyRequest {
    type Response = DataProtectionPolicyResult;
    const READ_ONLY: bool = true;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<DataProtectionPolicyResult, SnsError> {
        let arn = topic_key(ctx, "ResourceArn", &self.resource_arn)?;
        let state = sns.lock();
        let topic = state
            .topics
            .get(&arn)
            .ok_or_else(SnsError::resource_not_found)?;
        Ok(DataProtectionPolicyResult {
            data_protection_policy: topic.data_protection_policy.clone().unwrap_or_default(),
        })
    }
}
