//! ListDeadLetterSourceQueues: the queues whose redrive policy names this one.

use super::*;
use crate::api::*;

impl Unit for ListDeadLetterSourceQueuesRequest {
    type Response = ListDeadLetterSourceQueuesResult;
    const READ_ONLY: bool = true;

    queue_url_field!();

    async fn run(
        self,
        engine: &Engine,
        ctx: &RequestContext,
    ) -> Result<ListDeadLetterSourceQueuesResult, SqsError> {
        engine.list_dead_letter_source_queues(ctx, self)
    }
}

impl Engine {
    fn list_dead_letter_source_queues(
        &self,
        ctx: &RequestContext,
        r: ListDeadLetterSourceQueuesRequest,
    ) -> Result<ListDeadLetterSourceQueuesResult, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let names: Vec<String> = self
            .sources_of(&queue.arn)
            .into_iter()
            .map(|k| k.name)
            .collect();
        let (names, next_token) = paginate(names, r.max_results, r.next_token.as_deref())?;
        Ok(ListDeadLetterSourceQueuesResult {
            queue_urls: names
                .into_iter()
                .map(|name| {
                    self.queue_url(
                        ctx,
                        &QueueKey {
                            name,
                            ..queue.key.clone()
                        },
                    )
                })
                .collect(),
            next_token,
        })
    }
}
