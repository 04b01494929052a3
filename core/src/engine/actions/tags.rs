//! TagQueue, UntagQueue and ListQueueTags.

use super::*;
use crate::api::*;

impl Unit for TagQueueRequest {
    type Response = Empty;
    const GRANT: Grant = Grant::OwnerOnly;
    const CHANGES_QUEUES: bool = true;

    queue_url_field!();

    async fn run(self, engine: &Engine, ctx: &RequestContext) -> Result<Empty, SqsError> {
        engine.tag_queue(ctx, self)
    }
}

impl Unit for UntagQueueRequest {
    type Response = Empty;
    const GRANT: Grant = Grant::OwnerOnly;
    const CHANGES_QUEUES: bool = true;

    queue_url_field!();

    async fn run(self, engine: &Engine, ctx: &RequestContext) -> Result<Empty, SqsError> {
        engine.untag_queue(ctx, self)
    }
}

impl Unit for ListQueueTagsRequest {
    type Response = ListQueueTagsResult;
    const READ_ONLY: bool = true;

    queue_url_field!();

    async fn run(
        self,
        engine: &Engine,
        ctx: &RequestContext,
    ) -> Result<ListQueueTagsResult, SqsError> {
        engine.list_queue_tags(ctx, self)
    }
}

impl Engine {
    fn tag_queue(&self, ctx: &RequestContext, r: TagQueueRequest) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let tags = r.tags.ok_or_else(|| SqsError::missing("Tags"))?;
        if tags.is_empty() {
            return Err(SqsError::missing("Tags"));
        }
        for (k, v) in &tags {
            if k.is_empty() || k.chars().count() > 128 {
                return Err(SqsError::invalid_value(
                    "Tag keys must be between 1 and 128 characters in length.",
                ));
            }
            if v.chars().count() > 256 {
                return Err(SqsError::invalid_value(
                    "Tag values must be less than 256 characters in length.",
                ));
            }
        }
        let mut state = queue.lock();
        let mut merged = state.tags.clone();
        merged.extend(tags);
        if merged.len() > 50 {
            return Err(SqsError::invalid_value(format!(
                "Too many tags added for queue {}.",
                queue.key.name
            )));
        }
        state.tags = merged;
        state.refresh_extensions();
        Ok(Empty {})
    }

    fn untag_queue(&self, ctx: &RequestContext, r: UntagQueueRequest) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let keys = r.tag_keys.ok_or_else(|| SqsError::missing("TagKeys"))?;
        if keys.is_empty() || keys.iter().any(|k| k.is_empty() || k.chars().count() > 128) {
            return Err(SqsError::invalid_value(
                "Tag keys must be between 1 and 128 characters in length.",
            ));
        }
        let mut state = queue.lock();
        for k in keys {
            state.tags.remove(&k);
        }
        state.refresh_extensions();
        Ok(Empty {})
    }

    fn list_queue_tags(
        &self,
        ctx: &RequestContext,
        r: ListQueueTagsRequest,
    ) -> Result<ListQueueTagsResult, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let tags = queue.lock().tags.clone();
        Ok(ListQueueTagsResult { tags })
    }
}
