//! TagResource, UntagResource and ListTagsForResource on topics.

use super::*;

/// The topic a tag action's `ResourceArn` names, or ResourceNotFound.
fn resource<'s>(
    state: &'s mut State,
    ctx: &RequestContext,
    arn: &Option<String>,
) -> Result<&'s mut crate::sns::model::Topic, SnsError> {
    let arn = topic_key(ctx, "ResourceArn", arn)?;
    state
        .topics
        .get_mut(&arn)
        .ok_or_else(SnsError::resource_not_found)
}

impl SnsUnit for TagResourceRequest {
    type Response = Empty;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<Empty, SnsError> {
        let tags = self.tags.unwrap_or_default();
        let mut keys: Vec<&str> = tags
            .iter()
            .map(|t| t.key.as_deref().unwrap_or(""))
            .collect();
        keys.sort_unstable();
        if keys.windows(2).any(|w| w[0] == w[1]) {
            return Err(SnsError::invalid_parameter(
                "Duplicated keys are not allowed.",
            ));
        }
        let mut state = sns.lock();
        let topic = resource(&mut state, ctx, &self.resource_arn)?;
        let mut merged = topic.tags.clone();
        for t in tags {
            merged.insert(t.key.unwrap_or_default(), t.value.unwrap_or_default());
        }
        if merged.len() > 50 {
            return Err(SnsError::new(
                "TagLimitExceeded",
                400,
                "Could not complete request: tag quota of per resource exceeded",
            ));
        }
        topic.tags = merged;
        Ok(Empty {})
    }
}

impl SnsUnit for UntagResourceRequest {
    type Response = Empty;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<Empty, SnsError> {
        let mut state = sns.lock();
        let topic = resource(&mut state, ctx, &self.resource_arn)?;
        for key in self.tag_keys.unwrap_or_default() {
            topic.tags.remove(&key);
        }
        Ok(Empty {})
    }
}

impl SnsUnit for ListTagsForResourceRequest {
    type Response = ListTagsResult;
    const READ_ONLY: bool = true;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<ListTagsResult, SnsError> {
        let mut state = sns.lock();
        let topic = resource(&mut state, ctx, &self.resource_arn)?;
        Ok(ListTagsResult {
            tags: topic
                .tags
                .iter()
                .map(|(k, v)| Tag {
                    key: Some(k.clone()),
                    value: Some(v.clone()),
                })
                .collect(),
        })
    }
}
