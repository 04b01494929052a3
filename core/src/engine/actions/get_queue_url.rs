//! GetQueueUrl: a queue's URL from its name (and owner).

use super::*;
use crate::api::*;

impl Unit for GetQueueUrlRequest {
    type Response = QueueUrlResult;
    const READ_ONLY: bool = true;
    const BY_QUEUE_URL: bool = false;

    /// The queue by name, in the owner's account when one is given.
    fn named_queues(&self, ctx: &RequestContext, action: Action) -> Vec<NamedQueue> {
        let Some(name) = &self.queue_name else {
            return Vec::new();
        };
        let key = QueueKey {
            region: ctx.region.clone(),
            account: self
                .queue_owner_aws_account_id
                .clone()
                .unwrap_or_else(|| ctx.account_id.clone()),
            name: name.clone(),
        };
        vec![(name.clone(), key, action)]
    }

    fn fault_queue(&self, ctx: &RequestContext) -> Option<QueueKey> {
        QueueKey::from_url(self.queue_name.as_deref()?, ctx)
    }

    async fn run(self, engine: &Engine, ctx: &RequestContext) -> Result<QueueUrlResult, SqsError> {
        engine.get_queue_url(ctx, self)
    }
}

impl Engine {
    fn get_queue_url(
        &self,
        ctx: &RequestContext,
        r: GetQueueUrlRequest,
    ) -> Result<QueueUrlResult, SqsError> {
        let name = r.queue_name.ok_or_else(|| SqsError::missing("QueueName"))?;
        let key = QueueKey {
            region: ctx.region.clone(),
            account: r
                .queue_owner_aws_account_id
                .filter(|a| !a.is_empty())
                .unwrap_or_else(|| ctx.account_id.clone()),
            name,
        };
        let queue = self
            .queue_by_key(&key)
            .ok_or_else(SqsError::queue_does_not_exist)?;
        Ok(QueueUrlResult {
            queue_url: self.queue_url(ctx, &queue.key),
        })
    }
}
