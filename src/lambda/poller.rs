//! The data plane: what AWS's Lambda pollers do for an SQS mapping, as a
//! consumer of the engine through its public API (ReceiveMessage,
//! DeleteMessageBatch), never inside it.
//!
//! - Each enabled mapping runs `ScalingConfig.MaximumConcurrency` workers
//!   (five, where AWS starts, when unset); each long-polls the queue
//!   (the engine wakes it when a message arrives), gathers up to
//!   `BatchSize` messages within `MaximumBatchingWindowInSeconds` on the
//!   engine's clock, invokes the function, and deletes what succeeded.
//!   One worker has one batch in flight, so the mapping has at most that
//!   many invocations at once.
//! - A failed invocation (error, refused connection, timeout) deletes
//!   nothing: the batch returns when its visibility timeout ends, and the
//!   queue's `maxReceiveCount` moves it to the dead-letter queue, as on
//!   AWS. With `ReportBatchItemFailures`, only the listed messages return;
//!   an answer that is not a valid report fails the whole batch.
//! - FIFO queues need nothing more: SQS hands out no message of a group
//!   while another of it is in flight, so each group is processed in
//!   order with one batch in flight per group.
//! - Messages `FilterCriteria` rejects are deleted without an invocation,
//!   as AWS deletes them.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use tokio::sync::{watch, Semaphore};

use super::filter::{self, Filter};
use super::function::{FunctionTarget, Invocation};
use super::mapping::Mapping;
use super::observe::{InvocationRecord, Invocations, Source};
use super::record;
use crate::api::{
    DeleteMessageBatchRequest, DeleteMessageBatchRequestEntry, GetQueueUrlRequest, Message,
    ReceiveMessageRequest, Request, RequestContext, Response,
};
use crate::engine::{Engine, QueueKey};

/// AWS starts five pollers per SQS mapping.
const DEFAULT_WORKERS: u32 = 5;
/// The longest long poll SQS allows.
const LONG_POLL_S: i64 = 20;
/// Lambda's synchronous payload limit: a batch stops growing near it.
const MAX_PAYLOAD_BYTES: usize = 6 * 1024 * 1024;
/// How long a worker waits before trying a missing queue again.
const RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// A running mapping's pollers: stopping them lets each finish the batch
/// it holds.
pub struct Handle {
    stop: watch::Sender<bool>,
    result: Arc<Mutex<Option<String>>>,
}

impl Handle {
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// What the latest batch came to, once there was one.
    pub fn last_result(&self) -> Option<String> {
        self.result
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.stop();
    }
}

struct Worker {
    engine: Arc<Engine>,
    mapping: Mapping,
    function: FunctionTarget,
    filters: Vec<Filter>,
    /// The function's free invocation slots: a worker takes one before
    /// it receives, so no message waits in flight for a busy function.
    slots: Arc<Semaphore>,
    ctx: RequestContext,
    key: QueueKey,
    result: Arc<Mutex<Option<String>>>,
    invocations: Arc<Invocations>,
}

/// Starts `mapping`'s workers on the current runtime.
pub fn start(
    engine: Arc<Engine>,
    mapping: Mapping,
    function: FunctionTarget,
    slots: Arc<Semaphore>,
    invocations: Arc<Invocations>,
) -> Handle {
    let (stop, stopped) = watch::channel(false);
    let result = Arc::new(Mutex::new(None));
    let Some(key) = QueueKey::from_arn(&mapping.event_source_arn) else {
        return Handle { stop, result };
    };
    let filters = mapping
        .filters
        .iter()
        .filter_map(|p| Filter::parse(p).ok())
        .collect();
    let workers = mapping
        .maximum_concurrency
        .unwrap_or(DEFAULT_WORKERS)
        .max(1);
    let worker = Arc::new(Worker {
        ctx: RequestContext::new(&key.region, &key.account, "http://retsu.lambda"),
        key,
        engine,
        mapping,
        function,
        filters,
        slots,
        result: result.clone(),
        invocations,
    });
    for _ in 0..workers {
        tokio::spawn(worker.clone().run(stopped.clone()));
    }
    Handle { stop, result }
}

impl Worker {
    async fn run(self: Arc<Self>, mut stopped: watch::Receiver<bool>) {
        loop {
            if *stopped.borrow() || self.engine.is_shutting_down() {
                return;
            }
            let slot = tokio::select! {
                _ = stopped.changed() => return,
                _ = self.engine.until_shutdown() => return,
                slot = self.slots.acquire() => match slot {
                    Ok(slot) => slot,
                    Err(_) => return,
                },
            };
            let gathered = tokio::select! {
                _ = stopped.changed() => return,
                _ = self.engine.until_shutdown() => return,
                gathered = self.gather() => gathered,
            };
            match gathered {
                Ok(batch) if batch.is_empty() => {}
                Ok(batch) => self.process(batch).await,
                Err(why) => {
                    drop(slot);
                    self.report(format!("PROBLEM: {why}"));
                    tokio::select! {
                        _ = stopped.changed() => return,
                        _ = tokio::time::sleep(RETRY_AFTER) => {}
                    }
                }
            }
        }
    }

    fn report(&self, result: String) {
        *self.result.lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
    }

    async fn call(&self, request: Request) -> Result<Response, String> {
        // Boxed: the engine's dispatch is polled through one pointer, not
        // inlined into these workers' state machines (image size).
        let answer: std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send + '_>> =
            Box::pin(self.engine.handle(&self.ctx, request));
        answer.await.map_err(|e| e.message.to_string())
    }

    async fn queue_url(&self) -> Result<String, String> {
        let request = Request::GetQueueUrl(GetQueueUrlRequest {
            queue_name: Some(self.key.name.clone()),
            queue_owner_aws_account_id: Some(self.key.account.clone()),
        });
        match self.call(request).await? {
            Response::GetQueueUrl(r) => Ok(r.queue_url),
            _ => Err("GetQueueUrl answered another action".into()),
        }
    }

    async fn receive(&self, url: &str, max: u32, wait_s: i64) -> Result<Vec<Message>, String> {
        let all = vec!["All".to_string()];
        let request = Request::ReceiveMessage(ReceiveMessageRequest {
            queue_url: Some(url.to_string()),
            attribute_names: all.clone(),
            message_system_attribute_names: all.clone(),
            message_attribute_names: all,
            max_number_of_messages: Some(i64::from(max.clamp(1, 10))),
            visibility_timeout: None,
            wait_time_seconds: Some(wait_s),
            receive_request_attempt_id: None,
        });
        match self.call(request).await? {
            Response::ReceiveMessage(r) => Ok(r.messages),
            _ => Err("ReceiveMessage answered another action".into()),
        }
    }

    /// One batch: a long poll for the first messages, then more until the
    /// batch is full, the payload limit is near, or the batching window
    /// (on the engine's clock) has passed.
    async fn gather(&self) -> Result<Vec<Message>, String> {
        let url = self.queue_url().await?;
        let size = self.mapping.batch_size;
        let mut batch = self.receive(&url, size, LONG_POLL_S).await?;
        let window_ms = u64::from(self.mapping.window_s.unwrap_or(0)) * 1000;
        if batch.is_empty() || window_ms == 0 {
            return Ok(batch);
        }
        let clock = self.engine.clock();
        let deadline = clock.now_ms() + window_ms;
        let mut bytes: usize = batch.iter().map(|m| m.body.len()).sum();
        while (batch.len() as u32) < size && bytes < MAX_PAYLOAD_BYTES / 2 {
            let now = clock.now_ms();
            if now >= deadline {
                break;
            }
            let wait_s = (deadline - now).div_ceil(1000).min(LONG_POLL_S as u64) as i64;
            let want = size - batch.len() as u32;
            // Receiving first: a receive that has taken messages returns
            // in the same poll, so none is taken and then dropped.
            let more = tokio::select! {
                biased;
                more = self.receive(&url, want, wait_s) => more?,
                _ = clock.sleep_until(deadline) => break,
            };
            bytes += more.iter().map(|m| m.body.len()).sum::<usize>();
            batch.extend(more);
        }
        Ok(batch)
    }

    /// Invokes the function with `batch` and deletes what succeeded.
    async fn process(&self, batch: Vec<Message>) {
        let arn = &self.mapping.event_source_arn;
        let region = &self.key.region;
        let (batch, filtered_out): (Vec<Message>, Vec<Message>) = batch
            .into_iter()
            .partition(|m| filter::passes(&self.filters, &record::filter_view(m, arn, region)));
        if !filtered_out.is_empty() {
            self.delete(&filtered_out.iter().collect::<Vec<_>>()).await;
        }
        if batch.is_empty() {
            return;
        }
        let event = Bytes::from(record::event(&batch, arn, region));
        let request_id = uuid::Uuid::new_v4().to_string();
        let at_ms = self.engine.now();
        let started = Instant::now();
        let outcome = self.function.invoke(event, &request_id).await;
        let elapsed_ms = started.elapsed().as_millis() as u64;
        let ids: Vec<&str> = batch.iter().map(|m| m.message_id.as_str()).collect();
        let failed: Result<Vec<String>, String> = match &outcome {
            Invocation::Failed(why) => Err(why.clone()),
            Invocation::Returned(_) if !self.mapping.report_batch_item_failures => Ok(Vec::new()),
            Invocation::Returned(answer) => record::batch_item_failures(answer, &ids),
        };
        let (result, error, failed_items) = match &failed {
            Ok(items) if items.is_empty() => ("ok", None, Vec::new()),
            Ok(items) => ("partial", None, items.clone()),
            Err(why) => ("failed", Some(why.clone()), Vec::new()),
        };
        self.invocations.record(InvocationRecord {
            at_ms,
            source: Source::Mapping,
            source_id: self.mapping.uuid.clone(),
            from: arn.clone(),
            function: self.function.name.clone(),
            request_id: request_id.clone(),
            batch: batch.len(),
            duration_ms: elapsed_ms,
            result,
            error,
            failed_items,
            messages: ids.iter().map(|id| id.to_string()).collect(),
            attempt: None,
        });
        match failed {
            Ok(failed) => {
                let done: Vec<&Message> = batch
                    .iter()
                    .filter(|m| !failed.contains(&m.message_id))
                    .collect();
                self.delete(&done).await;
                tracing::info!(
                    mapping = %self.mapping.uuid,
                    function = %self.function.name,
                    request_id = %request_id,
                    batch = batch.len(),
                    elapsed_ms,
                    failed_items = ?failed,
                    "Lambda invocation succeeded"
                );
                self.report("OK".into());
            }
            Err(why) => {
                tracing::warn!(
                    mapping = %self.mapping.uuid,
                    function = %self.function.name,
                    request_id = %request_id,
                    batch = batch.len(),
                    elapsed_ms,
                    error = %why,
                    "Lambda invocation failed: the batch returns to the queue at its visibility timeout"
                );
                self.report("PROBLEM: Function call failed".into());
            }
        }
    }

    /// Deletes `messages` (by their receipt handles), ten at a time.
    async fn delete(&self, messages: &[&Message]) {
        let Ok(url) = self.queue_url().await else {
            return;
        };
        for chunk in messages.chunks(10) {
            let entries = chunk
                .iter()
                .enumerate()
                .map(|(i, m)| DeleteMessageBatchRequestEntry {
                    id: Some(i.to_string()),
                    receipt_handle: Some(m.receipt_handle.clone()),
                })
                .collect();
            let request = Request::DeleteMessageBatch(DeleteMessageBatchRequest {
                queue_url: Some(url.clone()),
                entries: Some(entries),
            });
            match self.call(request).await {
                Ok(Response::DeleteMessageBatch(r)) if !r.failed.is_empty() => {
                    tracing::warn!(mapping = %self.mapping.uuid, failed = ?r.failed, "deleting processed messages failed");
                }
                Err(e) => {
                    tracing::warn!(mapping = %self.mapping.uuid, error = %e, "deleting processed messages failed")
                }
                _ => {}
            }
        }
    }
}
