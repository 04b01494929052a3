//! ListQueues: the caller's queues by name prefix, paged.

use super::*;
use crate::api::*;

impl Unit for ListQueuesRequest {
    type Response = ListQueuesResult;
    const GRANT: Grant = Grant::OwnerOnly;
    const READ_ONLY: bool = true;
    const BY_QUEUE_URL: bool = false;

    async fn run(
        self,
        engine: &Engine,
        ctx: &RequestContext,
    ) -> Result<ListQueuesResult, SqsError> {
        engine.list_queues(ctx, self)
    }
}

impl Engine {
    fn list_queues(
        &self,
        ctx: &RequestContext,
        r: ListQueuesRequest,
    ) -> Result<ListQueuesResult, SqsError> {
        let prefix = r.queue_name_prefix.unwrap_or_default();
        let limit = max_results(r.max_results)?;
        let after = match r.next_token.as_deref().filter(|t| !t.is_empty()) {
            Some(token) => Some(parse_page_token(token)?),
            None => None,
        };
        let page_size = limit.unwrap_or(1000);
        let from = QueueKey {
            region: ctx.region.clone(),
            account: ctx.account_id.clone(),
            name: match &after {
                Some(a) if a.as_str() >= prefix.as_str() => a.clone(),
                _ => prefix.clone(),
            },
        };
        // One more than a page, to know whether another follows.
        let mut names: Vec<String> = {
            let index = self.names.read().unwrap_or_else(|p| p.into_inner());
            index
                .range::<QueueKey, _>(&from..)
                .take_while(|k| {
                    k.region == ctx.region
                        && k.account == ctx.account_id
                        && k.name.starts_with(&prefix)
                })
                .filter(|k| after.as_deref().is_none_or(|a| k.name.as_str() > a))
                .filter(|k| self.queues.contains_key(*k))
                .take(page_size + 1)
                .map(|k| k.name.clone())
                .collect()
        };
        let more = names.len() > page_size;
        names.truncate(page_size);
        let next_token =
            (more && limit.is_some()).then(|| page_token(names.last().map_or("", String::as_str)));
        Ok(ListQueuesResult {
            queue_urls: names
                .into_iter()
                .map(|name| {
                    self.queue_url(
                        ctx,
                        &QueueKey {
                            region: ctx.region.clone(),
                            account: ctx.account_id.clone(),
                            name,
                        },
                    )
                })
                .collect(),
            next_token,
        })
    }
}
