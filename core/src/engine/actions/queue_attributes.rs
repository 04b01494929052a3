//! GetQueueAttributes and SetQueueAttributes.

use super::*;
use crate::api::*;

impl Unit for GetQueueAttributesRequest {
    type Response = GetQueueAttributesResult;
    const READ_ONLY: bool = true;

    queue_url_field!();

    async fn run(
        self,
        engine: &Engine,
        ctx: &RequestContext,
    ) -> Result<GetQueueAttributesResult, SqsError> {
        engine.get_queue_attributes(ctx, self)
    }
}

impl Unit for SetQueueAttributesRequest {
    type Response = Empty;
    const GRANT: Grant = Grant::OwnerOnly;
    const CHANGES_QUEUES: bool = true;

    queue_url_field!();

    async fn run(self, engine: &Engine, ctx: &RequestContext) -> Result<Empty, SqsError> {
        engine.set_queue_attributes(ctx, self)
    }
}

impl Engine {
    pub(in crate::engine) fn get_queue_attributes(
        &self,
        ctx: &RequestContext,
        r: GetQueueAttributesRequest,
    ) -> Result<GetQueueAttributesResult, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        attributes::check_names(&r.attribute_names)?;
        let all = r.attribute_names.iter().any(|n| n == "All");
        let wanted = |name: &str| all || r.attribute_names.iter().any(|n| n == name);
        let state = queue.lock_at(self.now());
        let mut out = BTreeMap::new();
        for name in attributes::ALL_NAMES {
            if !wanted(name) {
                continue;
            }
            let value = match *name {
                "ApproximateNumberOfMessages" => Some(state.store.available_count().to_string()),
                "ApproximateNumberOfMessagesNotVisible" => {
                    Some(state.store.in_flight_count().to_string())
                }
                "ApproximateNumberOfMessagesDelayed" => {
                    Some(state.store.delayed_count().to_string())
                }
                "CreatedTimestamp" => Some((queue.created_ms / 1000).to_string()),
                "LastModifiedTimestamp" => Some((state.last_modified_ms / 1000).to_string()),
                "QueueArn" => Some(queue.arn.clone()),
                other => state.settings.render(other),
            };
            if let Some(value) = value {
                out.insert(name.to_string(), value);
            }
        }
        Ok(GetQueueAttributesResult { attributes: out })
    }

    fn set_queue_attributes(
        &self,
        ctx: &RequestContext,
        r: SetQueueAttributesRequest,
    ) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let attributes = r
            .attributes
            .ok_or_else(|| SqsError::missing("Attributes"))?;
        let now = self.now();
        let mut settings = queue.lock().settings.clone();
        settings.apply(attributes.iter(), false)?;
        self.check_redrive_target(&queue.key, &settings)?;
        let mut state = queue.lock();
        // Keep policy changes made by a concurrent AddPermission out of harm's way:
        // only the attributes named here change.
        let mut merged = state.settings.clone();
        merged.apply(attributes.iter(), false)?;
        state.set_settings(merged);
        state.last_modified_ms = now;
        // A shorter retention or delay may make messages expire or appear now.
        state.tick(now);
        drop(state);
        queue.wake(Wakes::everyone());
        Ok(Empty {})
    }
}
