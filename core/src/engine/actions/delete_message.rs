//! DeleteMessage and DeleteMessageBatch.

use super::*;
use crate::api::*;

impl Unit for DeleteMessageRequest {
    type Response = Empty;

    queue_url_field!();

    async fn run(self, engine: &Engine, ctx: &RequestContext) -> Result<Empty, SqsError> {
        engine.delete_message(ctx, self)
    }
}

impl Unit for DeleteMessageBatchRequest {
    type Response = BatchResult;
    const GRANT: Grant = Grant::With(Action::DeleteMessage);

    queue_url_field!();

    async fn run(self, engine: &Engine, ctx: &RequestContext) -> Result<BatchResult, SqsError> {
        engine.delete_message_batch(ctx, self)
    }
}

impl Engine {
    fn delete_message(
        &self,
        ctx: &RequestContext,
        r: DeleteMessageRequest,
    ) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let handle = r
            .receipt_handle
            .ok_or_else(|| SqsError::missing("ReceiptHandle"))?;
        delete_one(&queue, &mut queue.lock_at(self.now()), &handle)?;
        Ok(Empty {})
    }

    fn delete_message_batch(
        &self,
        ctx: &RequestContext,
        r: DeleteMessageBatchRequest,
    ) -> Result<BatchResult, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let entries = r.entries.unwrap_or_default();
        let ids = validate::check_batch(
            entries.iter().map(|e| e.id.as_deref()),
            "DeleteMessageBatchRequestEntry",
        )?;
        let mut result = BatchResult::default();
        let mut state = queue.lock_at(self.now());
        for (entry, id) in entries.iter().zip(ids) {
            let outcome = match entry.receipt_handle.as_deref() {
                None => Err(SqsError::missing("ReceiptHandle")),
                Some(h) => delete_one(&queue, &mut state, h),
            };
            match outcome {
                Ok(()) => result
                    .successful
                    .push(BatchResultEntry { id: id.to_string() }),
                Err(e) => result.failed.push(batch_error(id, e)),
            }
        }
        Ok(result)
    }
}

/// Deletes the message a handle names. (Deleting an in-flight FIFO
/// message may unlock its group: the store's transition wakes the polls.)
fn delete_one(queue: &Queue, state: &mut QueueState, handle: &str) -> Result<(), SqsError> {
    let receipt = receipt_for(queue, handle)?;
    let Some(message) = state.store.get(receipt.slot) else {
        // Already deleted (or expired): deleting again succeeds.
        return Ok(());
    };
    let current = message.nonce == receipt.nonce;
    let in_flight = matches!(message.state(), State::InFlight(_));
    if queue.is_fifo() && !(current && in_flight) {
        return Err(expired_handle(handle));
    }
    if current {
        state.store.remove(receipt.slot, Transition::Deleted);
        forget_attempts_with(state, receipt.slot);
    } else {
        // A handle from an earlier receive of a message received again
        // since deletes nothing on a standard queue; the history says so.
        state.store.note(receipt.slot, Transition::StaleDelete);
    }
    Ok(())
}
