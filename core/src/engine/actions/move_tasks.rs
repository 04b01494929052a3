//! StartMessageMoveTask, CancelMessageMoveTask and ListMessageMoveTasks: moving messages out of a dead-letter queue (the tasks themselves run in `redrive`).

use super::*;
use crate::api::*;

impl Unit for StartMessageMoveTaskRequest {
    type Response = StartMessageMoveTaskResult;
    const CHANGES_QUEUES: bool = true;
    const BY_QUEUE_URL: bool = false;

    /// Moving into a queue is sending to it.
    fn named_queues(&self, _: &RequestContext, action: Action) -> Vec<NamedQueue> {
        let source = by_arn(self.source_arn.as_deref(), action);
        let destination = by_arn(self.destination_arn.as_deref(), Action::SendMessage);
        source.into_iter().chain(destination).collect()
    }

    fn fault_queue(&self, _: &RequestContext) -> Option<QueueKey> {
        QueueKey::from_arn(self.source_arn.as_deref()?)
    }

    async fn run(
        self,
        engine: &Engine,
        ctx: &RequestContext,
    ) -> Result<StartMessageMoveTaskResult, SqsError> {
        engine.start_message_move_task(ctx, self)
    }
}

impl Unit for CancelMessageMoveTaskRequest {
    type Response = CancelMessageMoveTaskResult;
    const CHANGES_QUEUES: bool = true;
    const BY_QUEUE_URL: bool = false;

    async fn run(
        self,
        engine: &Engine,
        ctx: &RequestContext,
    ) -> Result<CancelMessageMoveTaskResult, SqsError> {
        engine.cancel_message_move_task(ctx, self)
    }
}

impl Unit for ListMessageMoveTasksRequest {
    type Response = ListMessageMoveTasksResult;
    const READ_ONLY: bool = true;
    const BY_QUEUE_URL: bool = false;

    fn named_queues(&self, _: &RequestContext, action: Action) -> Vec<NamedQueue> {
        by_arn(self.source_arn.as_deref(), action)
            .into_iter()
            .collect()
    }

    fn fault_queue(&self, _: &RequestContext) -> Option<QueueKey> {
        QueueKey::from_arn(self.source_arn.as_deref()?)
    }

    async fn run(
        self,
        engine: &Engine,
        ctx: &RequestContext,
    ) -> Result<ListMessageMoveTasksResult, SqsError> {
        engine.list_message_move_tasks(ctx, self)
    }
}

/// A task handle's task id and source queue ARN, or `None` when it is not
/// one this engine issued. Public so the cluster's front can send a
/// CancelMessageMoveTask to the shard holding the task's source queue.
pub fn task_handle_parts(handle: &str) -> Option<(String, String)> {
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(handle.as_bytes())
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())?;
    let task_id = decoded.get("taskId")?.as_str()?;
    let source_arn = decoded.get("sourceArn")?.as_str()?;
    Some((task_id.to_string(), source_arn.to_string()))
}

impl Engine {
    fn start_message_move_task(
        &self,
        _ctx: &RequestContext,
        r: StartMessageMoveTaskRequest,
    ) -> Result<StartMessageMoveTaskResult, SqsError> {
        let source_arn = r.source_arn.ok_or_else(|| SqsError::missing("SourceArn"))?;
        QueueKey::from_arn(&source_arn).ok_or_else(|| arn_format_error("SourceArn"))?;
        let source = self
            .queue_by_arn(&source_arn)
            .ok_or_else(|| not_found("SourceArn"))?;
        if let Some(dest) = &r.destination_arn {
            QueueKey::from_arn(dest).ok_or_else(|| arn_format_error("DestinationArn"))?;
            let held_elsewhere = || self.remote_queue_now(dest).is_some_and(|r| !r.deleted);
            if self.queue_by_arn(dest).is_none() && !held_elsewhere() {
                return Err(not_found("DestinationArn"));
            }
        }
        let rate = match r.max_number_of_messages_per_second {
            None => None,
            Some(n) if (1..=500).contains(&n) => Some(n as u32),
            Some(n) => {
                return Err(SqsError::invalid_parameter(
                    "MaxNumberOfMessagesPerSecond",
                    n,
                    "Must be between 1 and 500.",
                ))
            }
        };
        if self.sources_of(&source_arn).is_empty() && !self.remote_sources_of(&source_arn) {
            return Err(SqsError::invalid_value(
                "Source queue must be configured as a Dead Letter Queue.",
            ));
        }
        let now = self.now();
        let to_move = source.lock_at(now).store.len() as i64;
        let mut tasks = self.tasks.lock();
        let list = tasks.entry(source_arn.clone()).or_default();
        if list.iter().any(|t| t.status.active()) {
            return Err(SqsError::invalid_value(
                "There is already a task running. Only one active task is allowed for a source queue arn at a given time.",
            ));
        }
        let id = Uuid::new_v4().to_string();
        let handle = base64::engine::general_purpose::STANDARD
            .encode(json!({"taskId": id, "sourceArn": source_arn}).to_string());
        list.push(Task {
            id,
            handle: handle.clone(),
            source_arn,
            destination_arn: r.destination_arn,
            rate,
            started_ms: now,
            status: Status::Running,
            moved: 0,
            to_move,
            failure_reason: None,
            paced_from_ms: None,
            last_step_ms: None,
        });
        if list.len() > HISTORY {
            let excess = list.len() - HISTORY;
            list.drain(..excess);
        }
        drop(tasks);
        self.tasks.changed.notify_one();
        Ok(StartMessageMoveTaskResult {
            task_handle: handle,
        })
    }

    fn cancel_message_move_task(
        &self,
        _ctx: &RequestContext,
        r: CancelMessageMoveTaskRequest,
    ) -> Result<CancelMessageMoveTaskResult, SqsError> {
        let handle = r
            .task_handle
            .ok_or_else(|| SqsError::missing("TaskHandle"))?;
        let (task_id, source_arn) = task_handle_parts(&handle).ok_or_else(bad_task_handle)?;
        let (task_id, source_arn) = (task_id.as_str(), source_arn.as_str());
        self.queue_by_arn(source_arn)
            .ok_or_else(|| not_found("SourceArn"))?;
        // Bring the task up to date first, so the count returned is real.
        self.run_move_tasks();
        let mut tasks = self.tasks.lock();
        let task = tasks
            .get_mut(source_arn)
            .and_then(|l| l.iter_mut().find(|t| t.id == task_id))
            .ok_or_else(|| SqsError::new(ErrorCode::ResourceNotFound, "Task does not exist."))?;
        if task.status != Status::Running {
            return Err(SqsError::invalid_value(
                "Only active tasks can be cancelled.",
            ));
        }
        task.status = Status::Cancelling;
        let moved = task.moved;
        drop(tasks);
        self.tasks.changed.notify_one();
        Ok(CancelMessageMoveTaskResult {
            approximate_number_of_messages_moved: moved,
        })
    }

    fn list_message_move_tasks(
        &self,
        _ctx: &RequestContext,
        r: ListMessageMoveTasksRequest,
    ) -> Result<ListMessageMoveTasksResult, SqsError> {
        let source_arn = r.source_arn.ok_or_else(|| SqsError::missing("SourceArn"))?;
        QueueKey::from_arn(&source_arn).ok_or_else(|| arn_format_error("SourceArn"))?;
        self.queue_by_arn(&source_arn)
            .ok_or_else(|| not_found("SourceArn"))?;
        let max = match r.max_results {
            None => 1,
            Some(n) if (1..=10).contains(&n) => n as usize,
            Some(n) => {
                return Err(SqsError::invalid_parameter(
                    "MaxResults",
                    n,
                    "You must enter a number that's between 1 and 10.",
                ))
            }
        };
        self.run_move_tasks();
        let tasks = self.tasks.lock();
        let results = tasks
            .get(&source_arn)
            .map(|list| {
                list.iter()
                    .rev()
                    .take(max)
                    .map(|t| ListMessageMoveTasksResultEntry {
                        task_handle: (t.status == Status::Running).then(|| t.handle.clone()),
                        status: t.status.as_str().to_string(),
                        source_arn: t.source_arn.clone(),
                        destination_arn: t.destination_arn.clone(),
                        max_number_of_messages_per_second: t.rate.map(i64::from),
                        approximate_number_of_messages_moved: t.moved,
                        approximate_number_of_messages_to_move: t.to_move,
                        failure_reason: t.failure_reason.clone(),
                        started_timestamp: t.started_ms as i64,
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(ListMessageMoveTasksResult { results })
    }
}
