//! SendMessage and SendMessageBatch.

use super::*;
use crate::api::*;

impl Unit for SendMessageRequest {
    type Response = SendMessageResult;

    queue_url_field!();

    async fn run(
        self,
        engine: &Engine,
        ctx: &RequestContext,
    ) -> Result<SendMessageResult, SqsError> {
        engine.send_message(ctx, self)
    }
}

impl Unit for SendMessageBatchRequest {
    type Response = SendMessageBatchResult;
    const GRANT: Grant = Grant::With(Action::SendMessage);

    queue_url_field!();

    async fn run(
        self,
        engine: &Engine,
        ctx: &RequestContext,
    ) -> Result<SendMessageBatchResult, SqsError> {
        engine.send_message_batch(ctx, self)
    }
}

impl Engine {
    fn send_message(
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

    fn send_message_batch(
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
}

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
    /// The `Sent` event's detail (a topic's delivery says whose).
    note: Option<Arc<str>>,
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
        message: Box::new(StoredMessage::new(
            message_id,
            input.body.unwrap_or_default(),
            body_md5,
            input.attributes,
            queue.sender_id(&ctx.account_id),
            OptionalFields {
                trace_header,
                group_id: input.group_id.map(Arc::from),
                dedup_id,
                ..OptionalFields::default()
            },
        )),
        delay_ms,
        result,
        note: None,
    })
}

/// Stores a prepared message (or recognises a FIFO duplicate) under the
/// queue lock, and completes its result. (The store's `Sent` transition
/// wakes the long polls it concerns.)
fn enqueue(state: &mut QueueState, mut prepared: Prepared, now: u64) -> SendMessageResult {
    let mut result = prepared.result;
    let message = &mut prepared.message;
    message.sent_ms = now;
    if state.settings.fifo {
        let scope = state.dedup_scope(message.group_id().map_or("", |g| &**g));
        let id = message.dedup_id().unwrap_or_default();
        state.dedup.prune(now);
        if let Some(original) = state.dedup.get(scope, id, now) {
            // A duplicate: accepted, not enqueued, answered as the original.
            result.message_id = IdText(original.message_id);
            result.sequence_number = Some(original.sequence_number.to_string());
            return result;
        }
        let sequence = state.next_sequence_number(now);
        state.dedup.insert(
            scope,
            id,
            DedupEntry {
                message_id: message.message_id,
                sequence_number: sequence,
                expires_ms: now + DEDUP_WINDOW_MS,
            },
        );
        message.optional_mut().sequence_number = Some(sequence);
        result.sequence_number = Some(sequence.to_string());
    }
    let delay_ms = prepared
        .delay_ms
        .unwrap_or(state.settings.delay_seconds as u64 * 1000);
    state.store.insert_noted(
        prepared.message,
        now + delay_ms,
        now,
        Transition::Sent,
        prepared.note,
    );
    result
}

/// A message a topic hands to one of its queues (SNS's fan-out). Plain
/// data: it travels to another engine as an [`OutboundItem::Delivery`].
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TopicDelivery {
    pub body: String,
    #[serde(skip_serializing_if = "MessageAttributes::is_empty")]
    pub attributes: MessageAttributes,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dedup_id: Option<String>,
    /// The publisher's `X-Amzn-Trace-Id`, kept as `AWSTraceHeader`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_header: Option<String>,
    /// Where it came from, for the message's history (its `Sent` event's
    /// detail).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<Arc<str>>,
    /// Receivable this much later than the queue's own delay says (ms of
    /// the engine's clock): SNS's delivery lag, when the server asks for it.
    #[serde(skip_serializing_if = "is_zero")]
    pub extra_delay_ms: u64,
    /// The SQS message id to give it; `None`: a new one. Set when it is
    /// handed to another engine, so the topic's `delivered` step names
    /// the message the target stores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<Uuid>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A delivery made ([`Engine::deliver_to`]).
pub(crate) struct Delivered {
    pub result: SendMessageResult,
    /// Handed to another engine's queue (see `elsewhere.rs`), not stored here.
    pub handed_over: bool,
}

impl Engine {
    /// Sends a topic's message into the queue `queue_arn` names: the same
    /// checks and the same `Sent` transition as a SendMessage, so history,
    /// metrics, the journal and waiting polls see it like any other. A
    /// queue of another engine gets it as an outbound record.
    pub fn deliver(
        &self,
        queue_arn: &str,
        delivery: TopicDelivery,
    ) -> Result<SendMessageResult, SqsError> {
        self.deliver_to(None, queue_arn, delivery).map(|d| d.result)
    }

    /// [`Engine::deliver`] into `queue`, already looked up from
    /// `queue_arn` (`None`: not in this engine, so perhaps in another).
    pub(crate) fn deliver_to(
        &self,
        queue: Option<Arc<Queue>>,
        queue_arn: &str,
        mut delivery: TopicDelivery,
    ) -> Result<Delivered, SqsError> {
        let queue = queue.or_else(|| self.queue_by_arn(queue_arn));
        if queue.is_none() {
            // What this engine last read of other engines may not have seen
            // a queue made a moment ago: asked before the delivery is dropped.
            if let Some(remote) = self.remote_live_queue(queue_arn) {
                // What the target's send would refuse at once and the
                // caller would act on (a subscription's dead-letter queue).
                if remote.fifo && delivery.group_id.is_none() {
                    return Err(SqsError::missing("MessageGroupId"));
                }
                let id = *delivery.message_id.get_or_insert_with(Uuid::new_v4);
                let result = SendMessageResult {
                    md5_of_message_body: Md5Hex(md5_bytes(&delivery.body)),
                    md5_of_message_attributes: md5_of_attribute_map(&delivery.attributes),
                    md5_of_message_system_attributes: None,
                    message_id: IdText(id),
                    sequence_number: None,
                };
                self.hand_over(queue_arn, OutboundItem::Delivery(delivery));
                return Ok(Delivered {
                    result,
                    handed_over: true,
                });
            }
        }
        self.deliver_local(queue, delivery).map(|result| Delivered {
            result,
            handed_over: false,
        })
    }

    /// Stores a topic's message in `queue`, a queue of this engine
    /// (`None`: there was none).
    pub(crate) fn deliver_local(
        &self,
        queue: Option<Arc<Queue>>,
        delivery: TopicDelivery,
    ) -> Result<SendMessageResult, SqsError> {
        let queue = queue
            .filter(|q| !q.is_deleted())
            .ok_or_else(SqsError::queue_does_not_exist)?;
        let ctx = RequestContext {
            region: queue.key.region.clone(),
            account_id: queue.key.account.clone(),
            base_url: String::new(),
            trace_header: delivery.trace_header,
            query_protocol: false,
        };
        let (max_size, content_dedup) = queue.send_limits();
        let input = SendInput {
            body: Some(delivery.body),
            delay_seconds: None,
            attributes: delivery.attributes,
            system_attributes: MessageAttributes::new(),
            dedup_id: delivery.dedup_id,
            group_id: delivery.group_id,
        };
        let mut prepared = prepare(&ctx, &queue, max_size, content_dedup, input, false)?;
        prepared.note = delivery.note;
        if let Some(id) = delivery.message_id {
            prepared.message.message_id = id;
            prepared.result.message_id = IdText(id);
        }
        let now = self.now();
        let mut state = queue.lock_at(now);
        if delivery.extra_delay_ms > 0 {
            let queue_delay_ms = state.settings.delay_seconds as u64 * 1000;
            prepared.delay_ms = Some(queue_delay_ms + delivery.extra_delay_ms);
        }
        let result = enqueue(&mut state, prepared, now);
        Ok(result)
    }
}
