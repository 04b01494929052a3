//! Message actions: SendMessage(Batch), ReceiveMessage (with long
//! polling), DeleteMessage(Batch), ChangeMessageVisibility(Batch).

use std::collections::BTreeMap;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::checksum::{hex, md5_bytes, md5_of_attribute_map, md5_of_attributes};
use super::queue::{Attempt, DedupEntry, Queue, QueueState, DEDUP_WINDOW_MS};
use super::receipt::Receipt;
use super::store::{OptionalFields, State, StoredMessage, Transition};
use super::validate::{self, check_range};
use super::{id_text, Engine};
use crate::api::*;
use crate::error::{ErrorCode, SqsError};

/// Standard queues refuse receives beyond this many messages in flight.
const MAX_IN_FLIGHT: usize = 120_000;
/// Longest a message may stay invisible after a receive.
const MAX_VISIBILITY_MS: u64 = 43_200_000;

/// One message to send, taken from SendMessage or a batch entry: owned,
/// so the body and attributes move into the stored message uncopied.
struct SendInput {
    body: Option<String>,
    delay_seconds: Option<i64>,
    attributes: MessageAttributes,
    system_attributes: MessageAttributes,
    dedup_id: Option<String>,
    group_id: Option<String>,
}

impl From<SendMessageRequest> for SendInput {
    fn from(r: SendMessageRequest) -> SendInput {
        SendInput {
            body: r.message_body,
            delay_seconds: r.delay_seconds,
            attributes: r.message_attributes,
            system_attributes: r.message_system_attributes,
            dedup_id: r.message_deduplication_id,
            group_id: r.message_group_id,
        }
    }
}

impl From<SendMessageBatchRequestEntry> for SendInput {
    fn from(e: SendMessageBatchRequestEntry) -> SendInput {
        SendInput {
            body: e.message_body,
            delay_seconds: e.delay_seconds,
            attributes: e.message_attributes,
            system_attributes: e.message_system_attributes,
            dedup_id: e.message_deduplication_id,
            group_id: e.message_group_id,
        }
    }
}

/// A validated message, ready to enqueue. Boxed: it is moved several
/// times on its way into the store, a pointer instead of ~250 bytes.
struct Prepared {
    message: Box<StoredMessage>,
    delay_ms: Option<u64>,
    result: SendMessageResult,
}

fn invalid_handle(handle: &str) -> SqsError {
    SqsError::new(
        ErrorCode::ReceiptHandleIsInvalid,
        format!("The input receipt handle \"{handle}\" is not a valid receipt handle."),
    )
}

fn expired_handle(handle: &str) -> SqsError {
    SqsError::invalid_parameter("ReceiptHandle", handle, "The receipt handle has expired.")
}

/// Why a message could not be sent. In a batch, AWS reports most faults
/// per entry but fails the whole request for a FIFO entry without a group
/// or a deduplication id.
enum SendFault {
    Entry(SqsError),
    Request(SqsError),
}

impl From<SqsError> for SendFault {
    fn from(e: SqsError) -> SendFault {
        SendFault::Entry(e)
    }
}

impl From<SendFault> for SqsError {
    fn from(f: SendFault) -> SqsError {
        match f {
            SendFault::Entry(e) | SendFault::Request(e) => e,
        }
    }
}

/// The rules a single message must meet, in the order AWS checks them.
fn prepare(
    ctx: &RequestContext,
    queue: &Queue,
    max_size: u32,
    content_dedup: bool,
    input: SendInput,
    in_batch: bool,
) -> Result<Prepared, SendFault> {
    let fifo = queue.is_fifo();
    let body = validate::check_body(input.body.as_deref())?;
    let delay_ms = match input.delay_seconds {
        None => None,
        Some(d) => {
            let d = check_range(
                "DelaySeconds",
                d,
                0,
                900,
                "DelaySeconds must be >= 0 and <= 900.",
            )?;
            if fifo && d != 0 {
                return Err(SqsError::invalid_parameter(
                    "DelaySeconds",
                    d,
                    "The request include parameter that is not valid for this queue type.",
                )
                .into());
            }
            // FIFO: 0 is accepted and ignored, the queue's delay applies.
            (!fifo).then_some(d as u64 * 1000)
        }
    };
    validate::check_message_attributes(&input.attributes)?;
    validate::check_system_attributes(&input.system_attributes)?;
    if validate::message_size(body, &input.attributes) > max_size as usize {
        let lead = if in_batch {
            "One or more parameters cannot be validated."
        } else {
            "One or more parameters are invalid."
        };
        return Err(SqsError::invalid_value(format!(
            "{lead} Reason: Message must be shorter than {max_size} bytes."
        ))
        .into());
    }
    if let Some(group) = &input.group_id {
        validate::check_fifo_id("MessageGroupId", group)?;
    }
    if fifo && input.group_id.is_none() {
        return Err(SendFault::Request(if in_batch {
            SqsError::invalid_value("The request must contain the parameter MessageGroupId.")
        } else {
            SqsError::missing("MessageGroupId")
        }));
    }
    let dedup_id = match input.dedup_id {
        Some(d) if !fifo => {
            return Err(SqsError::invalid_parameter(
                "MessageDeduplicationId",
                d,
                "The request include parameter that is not valid for this queue type.",
            )
            .into())
        }
        Some(d) => {
            validate::check_fifo_id("MessageDeduplicationId", &d)?;
            Some(d)
        }
        None if fifo && content_dedup => Some(hex(&Sha256::digest(body.as_bytes()))),
        None if fifo => {
            return Err(SendFault::Request(SqsError::invalid_value(
                "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
            )))
        }
        None => None,
    };
    let trace_header = input
        .system_attributes
        .get("AWSTraceHeader")
        .and_then(|v| v.string_value.clone())
        .or_else(|| ctx.trace_header.clone());
    let message_id = Uuid::new_v4();
    let body_md5 = md5_bytes(body);
    let result = SendMessageResult {
        md5_of_message_body: Md5Hex(body_md5),
        md5_of_message_attributes: md5_of_attribute_map(&input.attributes),
        md5_of_message_system_attributes: md5_of_attribute_map(&input.system_attributes),
        message_id: IdText(message_id),
        sequence_number: None,
    };
    Ok(Prepared {
        message: Box::new(StoredMessage {
            message_id,
            body: input.body.unwrap_or_default(),
            body_md5,
            attributes: input.attributes,
            sender_id: queue.sender_id(&ctx.account_id),
            sent_ms: 0,
            enqueued_ms: 0,
            first_receive_ms: None,
            receive_count: 0,
            state: State::Available,
            nonce: 0,
            received_ms: 0,
            visible_since: 0,
            order: 0,
            optional: OptionalFields {
                trace_header,
                group_id: input.group_id.map(Arc::from),
                dedup_id,
                ..OptionalFields::default()
            }
            .boxed(),
        }),
        delay_ms,
        result,
    })
}

/// Stores a prepared message (or recognises a FIFO duplicate) under the
/// queue lock, and completes its result. (The store's `Sent` transition
/// wakes the long polls it concerns.)
fn enqueue(state: &mut QueueState, mut prepared: Prepared, now: u64) -> SendMessageResult {
    let mut result = prepared.result;
    let message = &mut prepared.message;
    message.sent_ms = now;
    message.enqueued_ms = now;
    if state.settings.fifo {
        let scope = if state.dedup_per_group {
            message.group_id().map_or("", |g| &**g).to_string()
        } else {
            String::new()
        };
        let key = (scope, message.dedup_id().unwrap_or_default().to_string());
        state.dedup.prune(now);
        if let Some(original) = state.dedup.get(&key, now) {
            // A duplicate: accepted, not enqueued, answered as the original.
            result.message_id = IdText(original.message_id);
            result.sequence_number = Some(original.sequence_number.to_string());
            return result;
        }
        let sequence = state.next_sequence_number(now);
        message.optional_mut().sequence_number = Some(sequence);
        result.sequence_number = Some(sequence.to_string());
        state.dedup.insert(
            key,
            DedupEntry {
                message_id: message.message_id,
                sequence_number: sequence,
                expires_ms: now + DEDUP_WINDOW_MS,
            },
        );
    }
    let delay_ms = prepared
        .delay_ms
        .unwrap_or(state.settings.delay_seconds as u64 * 1000);
    state
        .store
        .insert(prepared.message, now + delay_ms, now, Transition::Sent);
    result
}

fn batch_error(id: &str, error: SqsError) -> BatchResultErrorEntry {
    BatchResultErrorEntry {
        id: id.to_string(),
        sender_fault: error.code.fault() == "Sender",
        code: error.code.query_code().to_string(),
        message: error.message,
    }
}

/// What a receive asked for, validated.
struct ReceiveParams {
    max: usize,
    visibility_ms: Option<u64>,
    attempt_id: Option<String>,
    system_names: Vec<String>,
    attribute_names: Vec<String>,
}

/// The system attributes of a message that the receive asked for.
fn system_attributes(m: &StoredMessage, names: &[String]) -> BTreeMap<String, String> {
    let all = names.iter().any(|n| n == "All");
    let want = |n: &str| all || names.iter().any(|x| x == n);
    let mut out = BTreeMap::new();
    let mut put = |name: &str, value: Option<String>| {
        if let (true, Some(v)) = (want(name), value) {
            out.insert(name.to_string(), v);
        }
    };
    put("SenderId", Some(m.sender_id.to_string()));
    put("SentTimestamp", Some(m.sent_ms.to_string()));
    put("ApproximateReceiveCount", Some(m.receive_count.to_string()));
    put(
        "ApproximateFirstReceiveTimestamp",
        m.first_receive_ms.map(|t| t.to_string()),
    );
    put("AWSTraceHeader", m.trace_header().map(String::from));
    put("MessageGroupId", m.group_id().map(|g| g.to_string()));
    put("MessageDeduplicationId", m.dedup_id().map(String::from));
    put("SequenceNumber", m.sequence_number().map(|s| s.to_string()));
    put(
        "DeadLetterQueueSourceArn",
        m.dead_letter_source_arn().map(|a| a.to_string()),
    );
    out
}

/// Whether a message attribute name matches the receive's selection:
/// `All`, `.*`, `*`, an exact name, or a `prefix.*` pattern.
fn attribute_selected(name: &str, patterns: &[String]) -> bool {
    patterns.iter().any(|p| {
        p == "All"
            || p == ".*"
            || p == "*"
            || p == name
            || p.strip_suffix(".*")
                .is_some_and(|prefix| !prefix.is_empty() && name.starts_with(prefix))
    })
}

fn render(queue: &Queue, seq: u64, m: &StoredMessage, params: &ReceiveParams) -> Message {
    let selected: MessageAttributes = m
        .attributes
        .iter()
        .filter(|(name, _)| attribute_selected(name, &params.attribute_names))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Message {
        message_id: id_text(&m.message_id),
        receipt_handle: Receipt {
            queue_uid: queue.uid,
            seq,
            nonce: m.nonce,
        }
        .encode(queue.receipt_key()),
        md5_of_body: hex(&m.body_md5),
        body: m.body.clone(),
        attributes: system_attributes(m, &params.system_names),
        md5_of_message_attributes: md5_of_attributes(selected.iter()),
        message_attributes: selected,
    }
}

impl Engine {
    pub(super) fn send_message(
        &self,
        ctx: &RequestContext,
        r: SendMessageRequest,
    ) -> Result<SendMessageResult, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let (max_size, content_dedup) = queue.send_limits();
        let prepared = prepare(ctx, &queue, max_size, content_dedup, r.into(), false)?;
        let now = self.now();
        let result = enqueue(&mut queue.lock_at(now), prepared, now);
        Ok(result)
    }

    pub(super) fn send_message_batch(
        &self,
        ctx: &RequestContext,
        r: SendMessageBatchRequest,
    ) -> Result<SendMessageBatchResult, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let entries = r.entries.unwrap_or_default();
        validate::check_batch(
            entries.iter().map(|e| e.id.as_deref()),
            "SendMessageBatchRequestEntry",
        )?;
        let (max_size, content_dedup) = queue.send_limits();
        let total: usize = entries
            .iter()
            .map(|e| {
                validate::message_size(
                    e.message_body.as_deref().unwrap_or(""),
                    &e.message_attributes,
                )
            })
            .sum();
        if total > validate::MAX_BATCH_BYTES {
            return Err(SqsError::new(
                ErrorCode::BatchRequestTooLong,
                format!(
                    "Batch requests cannot be longer than {} bytes. You have sent {total} bytes.",
                    validate::MAX_BATCH_BYTES
                ),
            ));
        }
        let mut prepared = Vec::with_capacity(entries.len());
        let mut failed = Vec::new();
        for mut entry in entries {
            // check_batch has vetted every id; each moves into its answer.
            let id = entry.id.take().unwrap_or_default();
            match prepare(ctx, &queue, max_size, content_dedup, entry.into(), true) {
                Ok(p) => prepared.push((id, p)),
                Err(SendFault::Request(e)) => return Err(e),
                Err(SendFault::Entry(e)) => failed.push(batch_error(&id, e)),
            }
        }
        let now = self.now();
        let mut successful = Vec::with_capacity(prepared.len());
        {
            let mut state = queue.lock_at(now);
            for (id, p) in prepared {
                let result = enqueue(&mut state, p, now);
                successful.push(SendMessageBatchResultEntry { id, result });
            }
        }
        Ok(SendMessageBatchResult { successful, failed })
    }

    pub(super) async fn receive_message(
        &self,
        ctx: &RequestContext,
        r: ReceiveMessageRequest,
    ) -> Result<ReceiveMessageResult, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let max = match r.max_number_of_messages {
            None => 1,
            Some(n) => check_range(
                "MaxNumberOfMessages",
                n,
                1,
                10,
                "Must be between 1 and 10, if provided.",
            )? as usize,
        };
        let wait = r
            .wait_time_seconds
            .map(|w| {
                check_range(
                    "WaitTimeSeconds",
                    w,
                    0,
                    20,
                    "Must be >= 0 and <= 20, if provided.",
                )
            })
            .transpose()?;
        let visibility_ms = r
            .visibility_timeout
            .map(|v| {
                check_range(
                    "VisibilityTimeout",
                    v,
                    0,
                    43_200,
                    "Must be >= 0 and <= 43200, if provided.",
                )
            })
            .transpose()?
            .map(|v| v as u64 * 1000);
        let attempt_id = r.receive_request_attempt_id.filter(|a| !a.is_empty());
        if let Some(a) = &attempt_id {
            let ok = a.len() <= 128
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c.is_ascii_punctuation());
            if !ok {
                return Err(SqsError::invalid_parameter(
                    "ReceiveRequestAttemptId",
                    a,
                    "ReceiveRequestAttemptId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
                ));
            }
        }
        let mut system_names = r.attribute_names;
        system_names.extend(r.message_system_attribute_names);
        let params = ReceiveParams {
            max,
            visibility_ms,
            attempt_id: attempt_id.filter(|_| queue.is_fifo()),
            system_names,
            attribute_names: r.message_attribute_names,
        };
        let wait_ms =
            wait.unwrap_or_else(|| queue.lock().settings.receive_message_wait_time_seconds) as u64
                * 1000;
        let deadline = self.now() + wait_ms;
        // WaitTimeSeconds also ends in real time (clients have real HTTP
        // timeouts): a frozen clock must not hold a poll forever.
        let real_deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(wait_ms);
        loop {
            // Register for wake-ups before looking, so none is missed.
            let notified = queue.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let shutdown = self.shutdown.notified();
            tokio::pin!(shutdown);
            shutdown.as_mut().enable();

            let (messages, next_wake) = self.try_receive(&queue, &params)?;
            let now = self.now();
            if !messages.is_empty()
                || now >= deadline
                || tokio::time::Instant::now() >= real_deadline
                || self.is_shutting_down()
                || queue.is_deleted()
            {
                return Ok(ReceiveMessageResult { messages });
            }
            let wake_at = next_wake.map_or(deadline, |w| w.min(deadline));
            tokio::select! {
                _ = &mut notified => {}
                _ = &mut shutdown => {}
                _ = self.clock.sleep_until(wake_at) => {}
                _ = tokio::time::sleep_until(real_deadline) => {}
            }
        }
    }

    /// One receive attempt: returns the messages and, when there are none,
    /// the next time one may become receivable.
    fn try_receive(
        &self,
        queue: &Arc<Queue>,
        params: &ReceiveParams,
    ) -> Result<(Vec<Message>, Option<u64>), SqsError> {
        let redrive = self.dead_letter_target(queue);
        // A message moved to the dead-letter queue leaves this queue and
        // arrives in that one as one change (for the journal).
        let _group = redrive.is_some().then(|| self.shared.events.group());
        let now = self.now();
        let mut state = queue.lock_at(now);
        let visibility_ms = params
            .visibility_ms
            .unwrap_or(state.settings.visibility_timeout as u64 * 1000);

        let outbox_from = state.store.outbox_len();
        if let Some(replayed) = replay_attempt(&mut state, queue, params, now, visibility_ms) {
            if let Some(id) = &params.attempt_id {
                // The journal keeps the attempt: this is its retry.
                state
                    .store
                    .mark_attempt(outbox_from, &Arc::from(id.as_str()));
            }
            return Ok((replayed, None));
        }
        if !queue.is_fifo() && state.store.in_flight_count() >= MAX_IN_FLIGHT {
            return Err(SqsError::new(
                ErrorCode::OverLimit,
                "The maximum number of in flight messages has been reached.",
            ));
        }
        let in_flight_room = MAX_IN_FLIGHT.saturating_sub(state.store.in_flight_count());
        let max = params.max.min(in_flight_room);
        let received = state.store.receive(
            now,
            max,
            visibility_ms,
            redrive.as_ref().map(|(_, max)| *max),
        );
        let messages: Vec<Message> = received
            .seqs
            .iter()
            .filter_map(|seq| {
                state
                    .store
                    .get(*seq)
                    .map(|m| render(queue, *seq, m, params))
            })
            .collect();
        if let (Some(id), false) = (&params.attempt_id, received.seqs.is_empty()) {
            let entries = received
                .seqs
                .iter()
                .filter_map(|s| state.store.get(*s).map(|m| (*s, m.nonce)))
                .collect();
            state.attempts.retain(|_, a| a.expires_ms > now);
            state.attempts.insert(
                id.clone(),
                Attempt {
                    expires_ms: now + DEDUP_WINDOW_MS,
                    messages: entries,
                },
            );
            // The journal learns the attempt from its Received events.
            state
                .store
                .mark_attempt(outbox_from, &Arc::from(id.as_str()));
        }
        let next_wake = state.store.next_wake();
        drop(state);
        if !received.dead_lettered.is_empty() {
            if let Some((dlq, _)) = redrive {
                self.dead_letter(queue, &dlq, received.dead_lettered);
            }
        }
        Ok((messages, next_wake))
    }

    pub(super) fn delete_message(
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

    pub(super) fn delete_message_batch(
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

    pub(super) fn change_message_visibility(
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

    pub(super) fn change_message_visibility_batch(
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

/// A FIFO receive retried with the same attempt id gets the same messages
/// and handles, if none of them was deleted or changed since.
fn replay_attempt(
    state: &mut QueueState,
    queue: &Queue,
    params: &ReceiveParams,
    now: u64,
    visibility_ms: u64,
) -> Option<Vec<Message>> {
    let id = params.attempt_id.as_ref()?;
    let attempt = state.attempts.get(id)?.clone();
    if attempt.expires_ms <= now {
        state.attempts.remove(id);
        return None;
    }
    let intact = attempt.messages.iter().all(|(seq, nonce)| {
        state
            .store
            .get(*seq)
            .is_some_and(|m| m.nonce == *nonce && matches!(m.state, State::InFlight(_)))
    });
    if !intact {
        state.attempts.remove(id);
        return None;
    }
    let until = now + visibility_ms;
    let mut out = Vec::with_capacity(attempt.messages.len());
    for (seq, _) in &attempt.messages {
        state.store.refresh_flight(*seq, until);
        if let Some(m) = state.store.get(*seq) {
            out.push(render(queue, *seq, m, params));
        }
    }
    Some(out)
}

/// Decodes a handle and checks it belongs to this queue.
fn receipt_for(queue: &Queue, handle: &str) -> Result<Receipt, SqsError> {
    Receipt::decode(handle, queue.receipt_key())
        .filter(|r| r.queue_uid == queue.uid)
        .ok_or_else(|| invalid_handle(handle))
}

/// Deletes the message a handle names. (Deleting an in-flight FIFO
/// message may unlock its group: the store's transition wakes the polls.)
fn delete_one(queue: &Queue, state: &mut QueueState, handle: &str) -> Result<(), SqsError> {
    let receipt = receipt_for(queue, handle)?;
    let Some(message) = state.store.get(receipt.seq) else {
        // Already deleted (or expired): deleting again succeeds.
        return Ok(());
    };
    let current = message.nonce == receipt.nonce;
    let in_flight = matches!(message.state, State::InFlight(_));
    if queue.is_fifo() && !(current && in_flight) {
        return Err(expired_handle(handle));
    }
    if current {
        state.store.remove(receipt.seq, Transition::Deleted);
        forget_attempts_with(state, receipt.seq);
    } else {
        // A handle from an earlier receive of a message received again
        // since deletes nothing on a standard queue; the history says so.
        state.store.note(receipt.seq, Transition::StaleDelete);
    }
    Ok(())
}

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
    let Some(message) = state.store.get(receipt.seq) else {
        return Err(SqsError::invalid_parameter(
            "ReceiptHandle",
            handle,
            "Message does not exist or is not available for visibility timeout change.",
        ));
    };
    let current = message.nonce == receipt.nonce;
    let in_flight = matches!(message.state, State::InFlight(_));
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
    if until > message.received_ms + MAX_VISIBILITY_MS {
        return Err(SqsError::invalid_parameter(
            "VisibilityTimeout",
            timeout,
            "Total VisibilityTimeout for the message is beyond the limit [43200 seconds]",
        ));
    }
    state.store.change_visibility(receipt.seq, now, until);
    forget_attempts_with(state, receipt.seq);
    Ok(())
}

/// A deleted or changed message invalidates the receive attempts that
/// returned it.
fn forget_attempts_with(state: &mut QueueState, seq: u64) {
    if !state.attempts.is_empty() {
        state
            .attempts
            .retain(|_, a| !a.messages.iter().any(|(s, _)| *s == seq));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_selection() {
        let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(attribute_selected("Hello", &p(&["Hel.*"])));
        assert!(attribute_selected("Help.Me", &p(&["Hel.*"])));
        assert!(!attribute_selected("Other", &p(&["Hel.*"])));
        assert!(attribute_selected("x", &p(&["All"])));
        assert!(attribute_selected("x", &p(&[".*"])));
        assert!(attribute_selected("x", &p(&["x"])));
        assert!(!attribute_selected("x", &p(&[])));
        assert!(!attribute_selected("x", &p(&["AWS."])));
    }
}
