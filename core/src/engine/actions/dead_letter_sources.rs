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
        // A dead-letter queue held elsewhere (another engine of the same
        // store) may have sources here: this engine lists its own.
        let (arn, key) = match self.queue(ctx, r.queue_url.as_deref()) {
            Ok(queue) => (queue.arn.clone(), queue.key.clone()),
            Err(missing) => match r
                .queue_url
                .as_deref()
                .and_then(|url| QueueKey::from_url(url, ctx))
                .filter(|k| self.remote_queue(&k.arn()).is_some_and(|q| !q.deleted))
            {
                Some(key) => (key.arn(), key),
                None => return Err(missing),
            },
        };
        let names: Vec<String> = self.sources_of(&arn).into_iter().map(|k| k.name).collect();
        let (names, next_token) = paginate(names, r.max_results, r.next_token.as_deref())?;
        Ok(ListDeadLetterSourceQueuesResult {
            queue_urls: names
                .into_iter()
                .map(|name| {
                    self.queue_url(
                        ctx,
                        &QueueKey {
                            name,
                            ..key.clone()
                        },
                    )
                })
                .collect(),
            next_token,
        })
    }
}
