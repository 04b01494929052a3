//! Dead-letter queues and message move tasks.
//!
//! A message moves to its queue's dead-letter queue on a receive attempt
//! that would take its receive count above `maxReceiveCount` (the store
//! takes it out; [`Engine::dead_letter`] puts it in the target). Move
//! tasks carry messages back out of a dead-letter queue at a rate; their
//! progress is a function of the clock, driven by `run_background`.
//!
//! Either end may be a queue of another engine of the same store
//! (`elsewhere.rs`): then its checks read [`RemoteQueue`]'s facts, and
//! what would arrive there leaves as an outbound record instead.
//!
//! [`RemoteQueue`]: super::RemoteQueue

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use uuid::Uuid;

use super::attributes::RedriveAllow;
use super::elsewhere::{Arrival, OutboundItem, OutboundMessage};
use super::queue::Queue;
use super::store::{OptionalFields, StoredMessage, Transition};
use super::{Engine, QueueKey};
use crate::error::{ErrorCode, SqsError};

/// A receive's way to its queue's dead-letter queue. While it lives, it is
/// one cross-queue move: what leaves the source and what arrives in the
/// dead-letter queue reach the subscribers as one change, so the journal
/// never holds a message in both queues or in neither.
pub(super) struct Redrive<'a> {
    pub dlq: Target,
    pub max_receive_count: u32,
    _one_move: super::events::Group<'a>,
}

/// A transfer's target queue (a dead-letter queue, a move task's
/// destination).
#[derive(Clone)]
pub(super) enum Target {
    Here(Arc<Queue>),
    /// Held by another engine: its ARN (see `elsewhere.rs`).
    Elsewhere(String),
}

/// Messages a rate-less task moves per step before yielding.
const CHUNK: usize = 1_000;
/// Tasks remembered per source queue.
pub(super) const HISTORY: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum Status {
    Running,
    Cancelling,
    Cancelled,
    Completed,
    Failed,
}

impl Status {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Status::Running => "RUNNING",
            Status::Cancelling => "CANCELLING",
            Status::Cancelled => "CANCELLED",
            Status::Completed => "COMPLETED",
            Status::Failed => "FAILED",
        }
    }

    pub(super) fn active(self) -> bool {
        matches!(self, Status::Running | Status::Cancelling)
    }
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Task {
    pub(super) id: String,
    pub(super) handle: String,
    pub(super) source_arn: String,
    pub(super) destination_arn: Option<String>,
    pub(super) rate: Option<u32>,
    pub(super) started_ms: u64,
    pub(super) status: Status,
    pub(super) moved: i64,
    pub(super) to_move: i64,
    pub(super) failure_reason: Option<String>,
    /// Where the rate's seconds count from: `started_ms`, pushed later by
    /// the time the server was down (see `MoveTasks::restore`).
    #[serde(default)]
    pub(super) paced_from_ms: Option<u64>,
    /// When the task last moved something (persisted with the count).
    #[serde(default)]
    pub(super) last_step_ms: Option<u64>,
}

/// Every move task, by source queue ARN (oldest first).
#[derive(Default)]
pub(super) struct MoveTasks {
    tasks: Mutex<HashMap<String, Vec<Task>>>,
    /// Wakes the background runner when a task starts or is cancelled.
    pub changed: tokio::sync::Notify,
}

impl MoveTasks {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Task>>> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every task, for the persistence journal.
    pub(super) fn snapshot(&self) -> serde_json::Value {
        snapshot_of(&self.lock())
    }

    /// Puts back the tasks of a snapshot (at start, before serving): a
    /// task that was running goes on from the count it had reached. The
    /// time the server was down does not count towards its rate (else it
    /// would move a burst to catch up): its seconds resume from `now`.
    pub(super) fn restore(&self, snapshot: serde_json::Value, now: u64) {
        let Ok(mut tasks) = serde_json::from_value::<HashMap<String, Vec<Task>>>(snapshot) else {
            return;
        };
        for task in tasks.values_mut().flatten() {
            if task.status == Status::Running && task.rate.is_some() {
                let last = task.last_step_ms.unwrap_or(task.started_ms);
                let paced_from = task.paced_from_ms.unwrap_or(task.started_ms);
                task.paced_from_ms = Some(paced_from + now.saturating_sub(last));
                task.last_step_ms = Some(now.max(last));
            }
        }
        *self.lock() = tasks;
        self.changed.notify_one();
    }

    /// Whether a task moving messages out of `source_arn` is running or
    /// being cancelled.
    pub(super) fn active_from(&self, source_arn: &str) -> bool {
        self.lock()
            .get(source_arn)
            .is_some_and(|list| list.iter().any(|t| t.status.active()))
    }

    /// Forgets every task (admin reset).
    pub(super) fn clear(&self) {
        self.lock().clear();
        self.changed.notify_one();
    }
}

fn snapshot_of(tasks: &HashMap<String, Vec<Task>>) -> serde_json::Value {
    serde_json::to_value(tasks).unwrap_or_default()
}

fn allows(dlq: &Queue, source_arn: &str) -> bool {
    match dlq
        .lock()
        .settings
        .redrive_allow_policy
        .as_ref()
        .map(|p| &p.0)
    {
        None | Some(RedriveAllow::AllowAll) => true,
        Some(RedriveAllow::DenyAll) => false,
        Some(RedriveAllow::ByQueue(arns)) => arns.iter().any(|a| a == source_arn),
    }
}

pub(super) fn arn_format_error(parameter: &str) -> SqsError {
    SqsError::invalid_value(format!(
        "You must use this format to specify the {parameter}: arn:<partition>:<service>:<region>:<account-id>:<resource-id>"
    ))
}

pub(super) fn not_found(parameter: &str) -> SqsError {
    SqsError::new(
        ErrorCode::ResourceNotFound,
        format!("The resource that you specified for the {parameter} parameter doesn't exist."),
    )
}

pub(super) fn bad_task_handle() -> SqsError {
    SqsError::invalid_value("Value for parameter TaskHandle is invalid.")
}

impl Engine {
    /// Checks a queue's RedrivePolicy against its target (on create/set).
    pub(super) fn check_redrive_target(
        &self,
        key: &QueueKey,
        settings: &super::attributes::QueueSettings,
    ) -> Result<(), SqsError> {
        let Some(policy) = &settings.redrive_policy else {
            return Ok(());
        };
        let raw = settings.render("RedrivePolicy").unwrap_or_default();
        let fail = |reason: &str| SqsError::invalid_parameter("RedrivePolicy", &raw, reason);
        // AWS requires the dead-letter queue in the source's account and
        // region; it looks the ARN up in the source's region, where a queue
        // of another region does not exist.
        let target_key = QueueKey::from_arn(&policy.dead_letter_target_arn);
        if let Some(target_key) = &target_key {
            if target_key.account != key.account {
                return Err(fail(
                    "Dead-letter target owner should be same as the source.",
                ));
            }
            if target_key.region != key.region {
                return Err(fail("Dead letter target does not exist."));
            }
        }
        let target = &policy.dead_letter_target_arn;
        let (fifo, allowed) = match self.queue_by_arn(target) {
            Some(local) => (local.is_fifo(), allows(&local, &key.arn())),
            None => match self.remote_queue_now(target).filter(|r| !r.deleted) {
                Some(remote) => (remote.fifo, remote.allows(&key.arn())),
                None => return Err(fail("Dead letter target does not exist.")),
            },
        };
        if fifo != settings.fifo {
            return Err(fail(
                "Dead-letter queue must be same type of queue as the source.",
            ));
        }
        if !allowed {
            return Err(fail(&format!(
                "Queue {} does not allow this queue to use it as a dead-letter queue.",
                policy.dead_letter_target_arn
            )));
        }
        Ok(())
    }

    /// The way a receive from `queue` may move messages to its dead-letter
    /// queue. `None` when there is no policy or the target is gone (then
    /// nothing moves: messages are delivered as usual).
    pub(super) fn redrive_for(&self, queue: &Queue) -> Option<Redrive<'_>> {
        let policy = queue.lock().settings.redrive_policy.clone()?;
        let target = &policy.dead_letter_target_arn;
        let dlq = match self.queue_by_arn(target) {
            Some(dlq) => {
                let foreign =
                    dlq.key.region != queue.key.region || dlq.key.account != queue.key.account;
                if foreign
                    || dlq.is_deleted()
                    || dlq.is_fifo() != queue.is_fifo()
                    || !allows(&dlq, &queue.arn)
                {
                    return None;
                }
                Target::Here(dlq)
            }
            None => {
                let key = QueueKey::from_arn(target)?;
                // Asked again when a message moves (`dead_letter`).
                let remote = self.remote_queue(target)?;
                if key.region != queue.key.region
                    || key.account != queue.key.account
                    || remote.deleted
                    || remote.fifo != queue.is_fifo()
                    || !remote.allows(&queue.arn)
                {
                    return None;
                }
                Target::Elsewhere(target.clone())
            }
        };
        Some(Redrive {
            dlq,
            max_receive_count: policy.max_receive_count,
            _one_move: self.shared.events.group(),
        })
    }

    /// Puts messages a receive took out of `source` into its dead-letter
    /// queue; if that queue vanished meanwhile, back into the source.
    pub(super) fn dead_letter(
        &self,
        source: &Arc<Queue>,
        redrive: Redrive<'_>,
        messages: Vec<StoredMessage>,
    ) {
        let target = match &redrive.dlq {
            Target::Here(dlq) if dlq.is_deleted() => source,
            Target::Here(dlq) => dlq,
            // Asked where the truth is kept: a message handed to a queue
            // deleted a moment ago would be lost.
            Target::Elsewhere(arn) if self.remote_queue_now(arn).is_some_and(|r| !r.deleted) => {
                // Out of the source (its events are in this group already)
                // and on its way, in the same group.
                for mut m in messages {
                    m.optional_mut().dead_letter_source_arn = Some(Arc::from(source.arn.as_str()));
                    let m = OutboundMessage::of(&m, Arrival::DeadLettered);
                    self.hand_over(arn, OutboundItem::Message(m));
                }
                return;
            }
            Target::Elsewhere(_) => source,
        };
        let now = self.now();
        let mut state = target.lock_at(now);
        for mut m in messages {
            if !Arc::ptr_eq(target, source) {
                m.optional_mut().dead_letter_source_arn = Some(Arc::from(source.arn.as_str()));
                if target.is_fifo() {
                    // A FIFO dead-letter queue restarts the retention clock.
                    m.set_enqueued_ms(now);
                    m.optional_mut().sequence_number = Some(state.next_sequence_number(now));
                }
            }
            state
                .store
                .insert(m, now, now, Transition::ArrivedFromSource);
        }
    }

    /// Queues whose RedrivePolicy targets `arn`.
    pub(super) fn sources_of(&self, arn: &str) -> Vec<QueueKey> {
        let all: Vec<Arc<Queue>> = self.queues.iter().map(|e| e.value().clone()).collect();
        all.into_iter()
            .filter(|q| {
                q.lock()
                    .settings
                    .redrive_policy
                    .as_ref()
                    .is_some_and(|p| p.dead_letter_target_arn == arn)
            })
            .map(|q| q.key.clone())
            .collect()
    }

    /// Ends the tasks that read from or write to a deleted queue.
    pub(super) fn fail_tasks_for_deleted(&self, arn: &str) {
        let mut tasks = self.tasks.lock();
        for task in tasks.values_mut().flatten() {
            let involved = task.source_arn == arn || task.destination_arn.as_deref() == Some(arn);
            if task.status.active() && involved {
                task.status = Status::Failed;
                task.failure_reason = Some("AWS.SimpleQueueService.NonExistentQueue".into());
            }
        }
    }

    /// Moves what every running task is due to have moved by now. Returns
    /// when a task next has work.
    ///
    /// With persistence, a step's moves and the task's new state (count,
    /// status) are one change for the journal (an event group): after a
    /// crash the count matches the messages moved, and each message is in
    /// exactly one of the two queues. While the disk is failing, no task
    /// moves (memory must not run ahead of the disk); it resumes after.
    pub(super) fn run_move_tasks(&self) -> Option<u64> {
        let now = self.now();
        if self.storage_failing() {
            return Some(now + 1000);
        }
        let capturing = self.shared.events.is_capturing();
        let _order = capturing.then(|| self.lock_persist_order());
        let _group = self.shared.events.group();
        let mut next: Option<u64> = None;
        let mut tasks = self.tasks.lock();
        let mut changed = false;
        for task in tasks.values_mut().flatten() {
            if task.status == Status::Cancelling {
                task.status = Status::Cancelled;
                changed = true;
            }
            if task.status != Status::Running {
                continue;
            }
            let before = task.moved;
            let due = self.step(task, now);
            if task.moved != before {
                task.last_step_ms = Some(now);
                changed = true;
            }
            changed |= task.status != Status::Running;
            next = match (next, due) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        if changed && capturing {
            let state = self.queue_level_state_with(snapshot_of(&tasks));
            self.shared.events.queues_changed(&state);
        }
        next
    }

    /// One step of one task; returns when it is next due.
    fn step(&self, task: &mut Task, now: u64) -> Option<u64> {
        let Some(source) = self.queue_by_arn(&task.source_arn) else {
            task.status = Status::Failed;
            task.failure_reason = Some("AWS.SimpleQueueService.NonExistentQueue".into());
            return None;
        };
        let allowance = match task.rate {
            // The first second's worth moves at once, then one per second.
            Some(rate) => {
                let from = task.paced_from_ms.unwrap_or(task.started_ms);
                let seconds = now.saturating_sub(from) / 1000 + 1;
                (seconds as i64 * rate as i64 - task.moved).clamp(0, CHUNK as i64) as usize
            }
            None => CHUNK,
        };
        if allowance > 0 {
            let batch = source.lock_at(now).store.take_for_move(allowance);
            let count = batch.len();
            let mut leftovers = Vec::new();
            let mut failure = None;
            // Each destination is looked up once a step: one held by
            // another engine is read from where the truth is kept, which
            // may wait on a database, and this step holds the tasks.
            let mut targets: HashMap<String, Option<Target>> = HashMap::new();
            for m in batch {
                if failure.is_some() {
                    leftovers.push(m);
                    continue;
                }
                let dest_arn = task
                    .destination_arn
                    .clone()
                    .or_else(|| m.dead_letter_source_arn().map(|a| a.to_string()));
                let target = dest_arn.and_then(|a| {
                    targets
                        .entry(a.clone())
                        .or_insert_with(|| self.target(a))
                        .clone()
                });
                match target {
                    Some(Target::Here(dest)) => {
                        self.arrive_by_task(&source, &dest, m, now);
                        task.moved += 1;
                    }
                    Some(Target::Elsewhere(remote)) => {
                        let (m, note) = moved_by_task(&source.arn, m, now);
                        let m = OutboundMessage::of(&m, Arrival::Moved { note });
                        self.hand_over(&remote, OutboundItem::Message(m));
                        task.moved += 1;
                    }
                    None => {
                        failure = Some("AWS.SimpleQueueService.NonExistentQueue".to_string());
                        leftovers.push(m);
                    }
                }
            }
            if !leftovers.is_empty() {
                // Nothing is lost: unmoved messages go back where they were.
                let mut state = source.lock_at(now);
                for m in leftovers {
                    state
                        .store
                        .insert(m, now, now, Transition::ArrivedFromSource);
                }
            }
            if let Some(reason) = failure {
                task.status = Status::Failed;
                task.failure_reason = Some(reason);
                return None;
            }
            if count == allowance {
                // Possibly more right now.
                return Some(if task.rate.is_some() {
                    next_second(task, now)
                } else {
                    now
                });
            }
        }
        let remaining = source.lock_at(now).store.available_count();
        if remaining == 0 {
            task.status = Status::Completed;
            return None;
        }
        Some(next_second(task, now))
    }

    /// The live queue `arn` names, here or held elsewhere.
    fn target(&self, arn: String) -> Option<Target> {
        if let Some(q) = self.queue_by_arn(&arn) {
            return Some(Target::Here(q));
        }
        let remote = self.remote_queue_now(&arn)?;
        (!remote.deleted).then_some(Target::Elsewhere(arn))
    }

    /// A moved message arrives in its destination as a new message.
    fn arrive_by_task(&self, source: &Queue, dest: &Arc<Queue>, m: StoredMessage, now: u64) {
        let mut state = dest.lock_at(now);
        let (mut fresh, note) = moved_by_task(&source.arn, m, now);
        if dest.is_fifo() {
            fresh.optional_mut().sequence_number = Some(state.next_sequence_number(now));
        }
        state.store.insert_noted(
            fresh,
            now,
            now,
            Transition::ArrivedFromSource,
            Some(note.into()),
        );
    }
}

/// The new message a move task makes of `m` (its destination gives a FIFO
/// sequence number), and the note that ties it to the id it had.
fn moved_by_task(source_arn: &str, mut m: StoredMessage, now: u64) -> (StoredMessage, String) {
    let old_id = m.message_id;
    let optional = OptionalFields {
        dead_letter_source_arn: None,
        sequence_number: None,
        enqueued_ms: None,
        ..m.optional.take().map(|r| *r).unwrap_or_default()
    };
    let mut fresh = m;
    fresh.message_id = Uuid::new_v4();
    fresh.sent_ms = now;
    fresh.optional = optional.boxed();
    fresh.forget_receives();
    (fresh, format!("moved from {source_arn} (was {old_id})"))
}

fn next_second(task: &Task, now: u64) -> u64 {
    let from = task.paced_from_ms.unwrap_or(task.started_ms);
    let elapsed = now.saturating_sub(from);
    from + (elapsed / 1000 + 1) * 1000
}
