//! DeleteQueue: removes a queue and everything in it.

use super::*;
use crate::api::*;

impl Unit for DeleteQueueRequest {
    type Response = Empty;
    const GRANT: Grant = Grant::OwnerOnly;
    const CHANGES_QUEUES: bool = true;

    queue_url_field!();

    async fn run(self, engine: &Engine, ctx: &RequestContext) -> Result<Empty, SqsError> {
        engine.delete_queue(ctx, self)
    }
}

impl Engine {
    fn delete_queue(&self, ctx: &RequestContext, r: DeleteQueueRequest) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        if self.unindex_queue(&queue.key, |key| {
            self.queues
                .remove_if(key, |_, q| Arc::ptr_eq(q, &queue))
                .is_some()
        }) {
            self.deleted_at.insert(queue.key.clone(), self.now());
            // Its messages go with it; the history says how they left.
            queue
                .lock_at(self.now())
                .store
                .purge_as(Transition::QueueDeleted);
            queue.mark_deleted();
            self.on_queue_deleted(&queue);
        }
        Ok(Empty {})
    }
}
