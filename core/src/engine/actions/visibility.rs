//! ChangeMessageVisibility and ChangeMessageVisibilityBatch.

use super::*;
use crate::api::*;

impl Unit for ChangeMessageVisibilityRequest {
    type Response = Empty;

    queue_url_field!();

    async fn run(self, engine: &Engine, ctx: &RequestContext) -> Result<Empty, SqsError> {
        engine.change_message_visibility(ctx, self)
    }
}

impl Unit for ChangeMessageVisibilityBatchRequest {
    type Response = BatchResult;
    const GRANT: Grant = Grant::With(Action::ChangeMessageVisibility);

    queue_url_field!();

    async fn run(self, engine: &Engine, ctx: &RequestContext) -> Result<BatchResult, SqsError> {
        engine.change_message_visibility_batch(ctx, self)
    }
}

impl Engine {
    fn change_message_visibility(
        &self,
        ctx: &RequestContext,
        r: ChangeMessageVisibilityRequest,
    ) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let handle = r
            .receipt_handle
            .ok_or_else(|| SqsError::missing("ReceiptHandle"))?;
        let timeout = r
            .visibility_timeout
            .ok_or_else(|| SqsError::missing("VisibilityTimeout"))?;
        let now = self.now();
        change_one(&queue, &mut queue.lock_at(now), &handle, timeout, now)?;
        Ok(Empty {})
    }

    fn change_message_visibility_batch(
        &self,
        ctx: &RequestContext,
        r: ChangeMessageVisibilityBatchRequest,
    ) -> Result<BatchResult, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let entries = r.entries.unwrap_or_default();
        let ids = validate::check_batch(
            entries.iter().map(|e| e.id.as_deref()),
            "ChangeMessageVisibilityBatchRequestEntry",
        )?;
        let now = self.now();
        let mut result = BatchResult::default();
        {
            let mut state = queue.lock_at(now);
            for (entry, id) in entries.iter().zip(ids) {
                let outcome = match (entry.receipt_handle.as_deref(), entry.visibility_timeout) {
                    (None, _) => Err(SqsError::missing("ReceiptHandle")),
                    (Some(_), None) => Err(SqsError::missing("VisibilityTimeout")),
                    (Some(h), Some(t)) => change_one(&queue, &mut state, h, t, now),
                };
                match outcome {
                    Ok(()) => result
                        .successful
                        .push(BatchResultEntry { id: id.to_string() }),
                    Err(e) => result.failed.push(batch_error(id, e)),
                }
            }
        }
        Ok(result)
    }
}

/// Longest a message may stay invisible after a receive.
const MAX_VISIBILITY_MS: u64 = 43_200_000;

/// Changes a message's visibility. (The store's transition wakes waiting
/// polls: the message may now come back sooner than they planned for.)
fn change_one(
    queue: &Queue,
    state: &mut QueueState,
    handle: &str,
    timeout: i64,
    now: u64,
) -> Result<(), SqsError> {
    let timeout = check_range(
        "VisibilityTimeout",
        timeout,
        0,
        43_200,
        "Must be >= 0 and <= 43200, if provided.",
    )?;
    let receipt = receipt_for(queue, handle)?;
    let Some(message) = state.store.get(receipt.slot) else {
        return Err(SqsError::invalid_parameter(
            "ReceiptHandle",
            handle,
            "Message does not exist or is not available for visibility timeout change.",
        ));
    };
    let current = message.nonce == receipt.nonce;
    let in_flight = matches!(message.state(), State::InFlight(_));
    if queue.is_fifo() && !(current && in_flight) {
        return Err(expired_handle(handle));
    }
    if !current && !in_flight {
        return Err(SqsError::new(
            ErrorCode::MessageNotInflight,
            "The message referred to isn't in flight.",
        ));
    }
    let until = now + timeout as u64 * 1000;
    if until > message.received_ms() + MAX_VISIBILITY_MS {
        return Err(SqsError::invalid_parameter(
            "VisibilityTimeout",
            timeout,
            "Total VisibilityTimeout for the message is beyond the limit [43200 seconds]",
        ));
    }
    state.store.change_visibility(receipt.slot, now, until);
    forget_attempts_with(state, receipt.slot);
    Ok(())
}
