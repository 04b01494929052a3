//! PurgeQueue: deletes every message, at most once a minute.

use super::*;
use crate::api::*;

impl Unit for PurgeQueueRequest {
    type Response = Empty;
    const CHANGES_QUEUES: bool = true;

    queue_url_field!();

    async fn run(self, engine: &Engine, ctx: &RequestContext) -> Result<Empty, SqsError> {
        engine.purge_queue(ctx, self)
    }
}

impl Engine {
    fn purge_queue(&self, ctx: &RequestContext, r: PurgeQueueRequest) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let now = self.now();
        let mut state = queue.lock_at(now);
        if self.config.strict_timing {
            if let Some(at) = state.last_purge_ms {
                if now < at + RECENT_MS {
                    return Err(SqsError::new(
                        ErrorCode::PurgeQueueInProgress,
                        format!(
                            "Only one PurgeQueue operation on {} is allowed every 60 seconds.",
                            queue.key.name
                        ),
                    ));
                }
            }
        }
        state.last_purge_ms = Some(now);
        state.store.purge();
        state.attempts.clear();
        // A purged FIFO queue also forgets its deduplication ids: the same
        // id sent right after is a new message.
        state.dedup = Default::default();
        Ok(Empty {})
    }
}
