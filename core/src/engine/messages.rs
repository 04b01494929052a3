//! What the message actions (`actions/`) share: receipt handles, their
//! errors, and batch error entries.

use super::queue::{Queue, QueueState};
use super::receipt::Receipt;
use crate::api::*;
use crate::error::{ErrorCode, SqsError};

pub(super) fn invalid_handle(handle: &str) -> SqsError {
    SqsError::new(
        ErrorCode::ReceiptHandleIsInvalid,
        format!("The input receipt handle \"{handle}\" is not a valid receipt handle."),
    )
}

pub(super) fn expired_handle(handle: &str) -> SqsError {
    SqsError::invalid_parameter("ReceiptHandle", handle, "The receipt handle has expired.")
}

pub(super) fn batch_error(id: &str, error: SqsError) -> BatchResultErrorEntry {
    BatchResultErrorEntry {
        id: id.to_string(),
        sender_fault: error.code.fault() == "Sender",
        code: error.code.query_code().to_string(),
        message: error.message,
    }
}

/// Decodes a handle and checks it belongs to this queue.
pub(super) fn receipt_for(queue: &Queue, handle: &str) -> Result<Receipt, SqsError> {
    Receipt::decode(handle, queue.receipt_key())
        .filter(|r| r.queue_uid == queue.uid)
        .ok_or_else(|| invalid_handle(handle))
}

/// A deleted or changed message invalidates the receive attempts that
/// returned it.
pub(super) fn forget_attempts_with(state: &mut QueueState, slot: u64) {
    if !state.attempts.is_empty() {
        state
            .attempts
            .retain(|_, a| !a.messages.iter().any(|(s, _)| *s == slot));
    }
}
