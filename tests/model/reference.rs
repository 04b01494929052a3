//! A reference model of the SQS state machine Retsu implements, written to
//! be obviously right rather than fast: every queue is a plain `Vec` of
//! messages in send order and every rule is a linear scan. `tests/model.rs`
//! drives it and the real engine with the same random operations and
//! compares what both answer.
//!
//! What the model knows it took from FIDELITY.md and the module docs of
//! `src/engine/store.rs`, `messages.rs` and `redrive.rs`:
//! - time-driven transitions (delay ends, visibility runs out, retention)
//!   apply at the next operation, each message becoming visible as of its
//!   own deadline;
//! - standard queues serve available messages oldest stored first;
//! - FIFO: a group is ready when its oldest stored message is visible;
//!   ready groups are served by (head visible-since, head delivery order)
//!   and each gives the run of visible messages from its head, up to the
//!   first one in flight or delayed;
//! - a receive that would take a message's receive count above
//!   maxReceiveCount moves it to the dead-letter queue instead;
//! - FIFO deduplication: (scope, id) remembered five minutes, scope frozen
//!   at creation, forgotten on purge; per-message DelaySeconds=0 ignored;
//! - ReceiveRequestAttemptId (FIFO): a retry within five minutes returns
//!   the same messages and handles while all are still in flight under
//!   that receive;
//! - visibility changes capped at 12 hours after the latest receive;
//! - move tasks step when listed or cancelled, at most `rate` per second
//!   (the first second's worth at once), back to each message's source or
//!   to the named destination.

#![allow(dead_code)]

use retsu::api::MessageAttributes;

pub const DEDUP_WINDOW_MS: u64 = 5 * 60 * 1000;
pub const MAX_VISIBILITY_MS: u64 = 12 * 3600 * 1000;
const TASK_CHUNK: i64 = 1000;
const TASK_HISTORY: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum St {
    Delayed(u64),
    Avail,
    InFlight(u64),
}

#[derive(Debug, Clone)]
pub struct Msg {
    /// The test's identity for the message (its `uid` attribute): it
    /// survives dead-letter and task moves, which give new message ids.
    pub uid: u64,
    pub slot: u64,
    pub body: String,
    pub attrs: MessageAttributes,
    pub group: Option<String>,
    pub dedup: Option<String>,
    /// The engine's message id, once the model has seen it.
    pub id: Option<String>,
    pub st: St,
    pub nonce: u64,
    pub receive_count: u32,
    pub received_ms: u64,
    pub sent_ms: u64,
    pub enqueued_ms: u64,
    pub visible_since: u64,
    pub order: u64,
    pub dl_source: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct DedupEntry {
    pub scope: String,
    pub id: String,
    pub message_id: String,
    pub sequence: String,
    pub expires: u64,
}

#[derive(Debug, Clone)]
pub struct Attempt {
    pub id: String,
    pub expires: u64,
    pub messages: Vec<(u64, u64)>,
}

#[derive(Debug, Clone)]
pub struct Queue {
    pub name: String,
    pub fifo: bool,
    pub visibility_s: u64,
    pub delay_s: u64,
    pub retention_s: u64,
    /// (dead-letter queue index, maxReceiveCount)
    pub redrive: Option<(usize, u32)>,
    pub content_dedup: bool,
    /// DeduplicationScope as created (later changes do not count).
    pub dedup_per_group: bool,
    pub msgs: Vec<Msg>,
    pub dedup: Vec<DedupEntry>,
    pub attempts: Vec<Attempt>,
    next_slot: u64,
    next_order: u64,
}

impl Queue {
    pub fn new(name: &str, fifo: bool) -> Queue {
        Queue {
            name: name.into(),
            fifo,
            visibility_s: 30,
            delay_s: 0,
            retention_s: 345_600,
            redrive: None,
            content_dedup: false,
            dedup_per_group: false,
            msgs: Vec::new(),
            dedup: Vec::new(),
            attempts: Vec::new(),
            next_slot: 1,
            next_order: 1,
        }
    }

    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |f: fn(&St) -> bool| self.msgs.iter().filter(|m| f(&m.st)).count();
        (
            n(|s| *s == St::Avail),
            n(|s| matches!(s, St::InFlight(_))),
            n(|s| matches!(s, St::Delayed(_))),
        )
    }

    fn order(&mut self) -> u64 {
        self.next_order += 1;
        self.next_order - 1
    }

    /// Stores a message, visible at `visible_at` (or now).
    fn insert(&mut self, mut m: Msg, visible_at: u64, now: u64) -> u64 {
        m.slot = self.next_slot;
        self.next_slot += 1;
        m.order = self.order();
        m.visible_since = visible_at.max(now);
        m.st = if visible_at > now {
            St::Delayed(visible_at)
        } else {
            St::Avail
        };
        self.msgs.push(m);
        self.next_slot - 1
    }

    pub fn get(&self, slot: u64) -> Option<&Msg> {
        self.msgs.iter().find(|m| m.slot == slot)
    }

    fn get_mut(&mut self, slot: u64) -> Option<&mut Msg> {
        self.msgs.iter_mut().find(|m| m.slot == slot)
    }

    fn remove(&mut self, slot: u64) -> Option<Msg> {
        let i = self.msgs.iter().position(|m| m.slot == slot)?;
        Some(self.msgs.remove(i))
    }

    fn tick(&mut self, now: u64) {
        for m in &mut self.msgs {
            match m.st {
                St::Delayed(t) | St::InFlight(t) if t <= now => {
                    m.st = St::Avail;
                    m.visible_since = t;
                }
                _ => {}
            }
        }
        let retention = self.retention_s * 1000;
        self.msgs.retain(|m| m.enqueued_ms + retention > now);
    }

    /// The group a FIFO message belongs to.
    fn group_of(m: &Msg) -> String {
        m.group.clone().unwrap_or_default()
    }

    /// The FIFO group served next and its head: among groups whose oldest
    /// stored message is available, the one whose head became visible
    /// first (ties: earliest delivery order).
    fn first_ready(&self) -> Option<(String, u64)> {
        let mut best: Option<((u64, u64), String, u64)> = None;
        for m in &self.msgs {
            let g = Queue::group_of(m);
            let head = self
                .msgs
                .iter()
                .filter(|x| Queue::group_of(x) == g)
                .min_by_key(|x| x.slot)
                .expect("m is in its group");
            if head.slot != m.slot || head.st != St::Avail {
                continue;
            }
            let key = (head.visible_since, head.order);
            if best.as_ref().is_none_or(|(k, _, _)| key < *k) {
                best = Some((key, g, head.slot));
            }
        }
        best.map(|(_, g, s)| (g, s))
    }

    /// The message after `slot` in its FIFO group.
    fn next_in_group(&self, group: &str, slot: u64) -> Option<u64> {
        self.msgs
            .iter()
            .filter(|m| Queue::group_of(m) == group && m.slot > slot)
            .map(|m| m.slot)
            .min()
    }

    fn is_avail(&self, slot: u64) -> bool {
        self.get(slot).is_some_and(|m| m.st == St::Avail)
    }

    /// The available messages in the order a receive (or a move task)
    /// takes them, up to `max`, calling `take` on each; `take` says
    /// whether it counts towards `max`.
    fn serve(&mut self, max: usize, mut take: impl FnMut(&mut Queue, u64) -> bool) {
        let mut n = 0;
        if !self.fifo {
            while n < max {
                let Some(slot) = self
                    .msgs
                    .iter()
                    .filter(|m| m.st == St::Avail)
                    .map(|m| m.slot)
                    .min()
                else {
                    break;
                };
                if take(self, slot) {
                    n += 1;
                }
            }
            return;
        }
        while n < max {
            let Some((group, head)) = self.first_ready() else {
                break;
            };
            let mut cursor = Some(head);
            while n < max {
                let Some(slot) = cursor.filter(|s| self.is_avail(*s)) else {
                    break;
                };
                cursor = self.next_in_group(&group, slot);
                if take(self, slot) {
                    n += 1;
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    Running,
    Cancelling,
    Cancelled,
    Completed,
    Failed,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Running => "RUNNING",
            TaskStatus::Cancelling => "CANCELLING",
            TaskStatus::Cancelled => "CANCELLED",
            TaskStatus::Completed => "COMPLETED",
            TaskStatus::Failed => "FAILED",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Task {
    /// Index in `Model::all_tasks` (the harness keeps the engine's handle).
    pub serial: usize,
    pub source: usize,
    pub dest: Option<usize>,
    pub rate: Option<u32>,
    pub started: u64,
    pub status: TaskStatus,
    pub moved: i64,
    pub to_move: i64,
}

/// One message to send.
#[derive(Debug, Clone)]
pub struct SendIn {
    pub uid: u64,
    pub body: String,
    pub attrs: MessageAttributes,
    pub delay: Option<i64>,
    pub group: Option<String>,
    pub dedup: Option<String>,
}

/// What a send does.
#[derive(Debug, Clone, PartialEq)]
pub enum Sent {
    /// Stored under this slot (the caller learns the engine's id).
    New(u64),
    /// A duplicate of a remembered send: answered with its id and sequence.
    Duplicate {
        message_id: String,
        sequence: String,
    },
    Failed(&'static str),
}

/// Why a send fails: of the entry only, or (FIFO batch) the whole request.
enum Fault {
    Entry(&'static str),
    Request(&'static str),
}

/// A receipt handle as the model sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handle {
    Known { queue: usize, slot: u64, nonce: u64 },
    Garbage,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    /// Slots returned, in order, and whether this replayed an attempt.
    Messages {
        slots: Vec<u64>,
        replay: bool,
    },
    Failed(&'static str),
}

#[derive(Debug, Clone)]
pub struct Model {
    pub now: u64,
    pub queues: Vec<Queue>,
    pub tasks: Vec<Task>,
    next_nonce: u64,
}

pub const INVALID_PARAMETER: &str = "InvalidParameterValue";
pub const MISSING_PARAMETER: &str = "MissingParameter";
pub const INVALID_HANDLE: &str = "ReceiptHandleIsInvalid";
pub const NOT_IN_FLIGHT: &str = "AWS.SimpleQueueService.MessageNotInflight";
pub const INVALID_ATTRIBUTE_VALUE: &str = "InvalidAttributeValue";
pub const RESOURCE_NOT_FOUND: &str = "ResourceNotFoundException";

impl Model {
    pub fn new(now: u64, queues: Vec<Queue>) -> Model {
        Model {
            now,
            queues,
            tasks: Vec::new(),
            next_nonce: 1,
        }
    }

    /// Time-driven transitions, applied lazily as the engine applies them.
    pub fn tick(&mut self) {
        let now = self.now;
        for q in &mut self.queues {
            q.tick(now);
        }
    }

    fn prepare(&self, q: usize, m: &SendIn, in_batch: bool) -> Result<Option<u64>, Fault> {
        let queue = &self.queues[q];
        let delay = match m.delay {
            None => None,
            Some(d) if !(0..=900).contains(&d) => return Err(Fault::Entry(INVALID_PARAMETER)),
            Some(d) if queue.fifo && d != 0 => return Err(Fault::Entry(INVALID_PARAMETER)),
            Some(d) => (!queue.fifo).then_some(d as u64 * 1000),
        };
        if queue.fifo && m.group.is_none() {
            return Err(Fault::Request(if in_batch {
                INVALID_PARAMETER
            } else {
                MISSING_PARAMETER
            }));
        }
        if m.dedup.is_some() && !queue.fifo {
            return Err(Fault::Entry(INVALID_PARAMETER));
        }
        if queue.fifo && m.dedup.is_none() && !queue.content_dedup {
            return Err(Fault::Request(INVALID_PARAMETER));
        }
        Ok(delay)
    }

    fn enqueue(&mut self, q: usize, m: &SendIn, delay: Option<u64>) -> Sent {
        let now = self.now;
        let queue = &mut self.queues[q];
        let dedup = if queue.fifo {
            let id = m
                .dedup
                .clone()
                .unwrap_or_else(|| format!("body:{}", m.body));
            let scope = if queue.dedup_per_group {
                m.group.clone().unwrap_or_default()
            } else {
                String::new()
            };
            if let Some(e) = queue
                .dedup
                .iter()
                .rev()
                .find(|e| e.scope == scope && e.id == id && e.expires > now)
            {
                return Sent::Duplicate {
                    message_id: e.message_id.clone(),
                    sequence: e.sequence.clone(),
                };
            }
            // The harness fills in the id and sequence the engine gave.
            queue.dedup.push(DedupEntry {
                scope,
                id: id.clone(),
                message_id: String::new(),
                sequence: String::new(),
                expires: now + DEDUP_WINDOW_MS,
            });
            Some(id)
        } else {
            None
        };
        let delay = delay.unwrap_or(queue.delay_s * 1000);
        let msg = Msg {
            uid: m.uid,
            slot: 0,
            body: m.body.clone(),
            attrs: m.attrs.clone(),
            group: m.group.clone(),
            dedup: dedup.filter(|_| m.dedup.is_some()),
            id: None,
            st: St::Avail,
            nonce: 0,
            receive_count: 0,
            received_ms: 0,
            sent_ms: now,
            enqueued_ms: now,
            visible_since: 0,
            order: 0,
            dl_source: None,
        };
        Sent::New(queue.insert(msg, now + delay, now))
    }

    /// Records the engine's id (and FIFO sequence) of a new message.
    pub fn learn_sent(&mut self, q: usize, slot: u64, id: &str, sequence: Option<&str>) {
        let queue = &mut self.queues[q];
        if let Some(m) = queue.get_mut(slot) {
            m.id = Some(id.to_string());
        }
        if let Some(e) = queue.dedup.last_mut() {
            if e.message_id.is_empty() {
                e.message_id = id.to_string();
                e.sequence = sequence.unwrap_or_default().to_string();
            }
        }
    }

    pub fn send(&mut self, q: usize, m: &SendIn) -> Sent {
        self.tick();
        match self.prepare(q, m, false) {
            Err(Fault::Entry(c)) | Err(Fault::Request(c)) => Sent::Failed(c),
            Ok(delay) => self.enqueue(q, m, delay),
        }
    }

    /// A batch: either one error for the whole request, or one outcome
    /// per entry (entries are stored in order after all were checked).
    /// The dedup entry of each new message is filled in by the caller
    /// before the next entry is enqueued, so this returns prepared delays.
    pub fn send_batch_check(
        &mut self,
        q: usize,
        entries: &[SendIn],
    ) -> Result<Vec<Result<Option<u64>, &'static str>>, &'static str> {
        self.tick();
        let mut out = Vec::new();
        for e in entries {
            match self.prepare(q, e, true) {
                Ok(d) => out.push(Ok(d)),
                Err(Fault::Entry(c)) => out.push(Err(c)),
                Err(Fault::Request(c)) => return Err(c),
            }
        }
        Ok(out)
    }

    pub fn send_batch_enqueue(&mut self, q: usize, m: &SendIn, delay: Option<u64>) -> Sent {
        self.enqueue(q, m, delay)
    }

    pub fn receive(
        &mut self,
        q: usize,
        max: usize,
        visibility: Option<i64>,
        attempt: Option<&str>,
    ) -> Received {
        self.tick();
        if !(1..=10).contains(&max) {
            return Received::Failed(INVALID_PARAMETER);
        }
        if let Some(v) = visibility {
            if !(0..=43_200).contains(&v) {
                return Received::Failed(INVALID_PARAMETER);
            }
        }
        let now = self.now;
        let redrive = self.queues[q].redrive;
        let queue = &mut self.queues[q];
        let visibility_ms = visibility
            .map(|v| v as u64 * 1000)
            .unwrap_or(queue.visibility_s * 1000);
        let attempt = attempt.filter(|_| queue.fifo);
        if let Some(id) = attempt {
            if let Some(i) = queue.attempts.iter().position(|a| a.id == id) {
                let a = queue.attempts[i].clone();
                let intact = a.expires > now
                    && a.messages.iter().all(|(slot, nonce)| {
                        queue
                            .get(*slot)
                            .is_some_and(|m| m.nonce == *nonce && matches!(m.st, St::InFlight(_)))
                    });
                if intact {
                    for (slot, _) in &a.messages {
                        queue.get_mut(*slot).expect("intact").st =
                            St::InFlight(now + visibility_ms);
                    }
                    return Received::Messages {
                        slots: a.messages.iter().map(|(s, _)| *s).collect(),
                        replay: true,
                    };
                }
                queue.attempts.remove(i);
            }
        }
        let mut slots = Vec::new();
        let mut dead = Vec::new();
        let mut nonce = self.next_nonce;
        queue.serve(max, |queue, slot| {
            let m = queue.get(slot).expect("served");
            if let Some((_, max_receives)) = redrive {
                if m.receive_count >= max_receives {
                    dead.push(queue.remove(slot).expect("served"));
                    return false;
                }
            }
            let order = queue.order();
            let m = queue.get_mut(slot).expect("served");
            m.st = St::InFlight(now + visibility_ms);
            m.nonce = nonce;
            nonce += 1;
            m.order = order;
            m.received_ms = now;
            m.receive_count += 1;
            slots.push(slot);
            true
        });
        self.next_nonce = nonce;
        if let (Some(id), false) = (attempt, slots.is_empty()) {
            let queue = &mut self.queues[q];
            queue.attempts.retain(|a| a.expires > now && a.id != id);
            let messages = slots
                .iter()
                .map(|s| (*s, queue.get(*s).expect("in flight").nonce))
                .collect();
            queue.attempts.push(Attempt {
                id: id.to_string(),
                expires: now + DEDUP_WINDOW_MS,
                messages,
            });
        }
        if let (Some((dlq, _)), false) = (redrive, dead.is_empty()) {
            let fifo = self.queues[dlq].fifo;
            for mut m in dead {
                m.dl_source = Some(q);
                if fifo {
                    m.enqueued_ms = now;
                }
                self.queues[dlq].insert(m, now, now);
            }
        }
        Received::Messages {
            slots,
            replay: false,
        }
    }

    fn forget_attempts_with(&mut self, q: usize, slot: u64) {
        self.queues[q]
            .attempts
            .retain(|a| !a.messages.iter().any(|(s, _)| *s == slot));
    }

    pub fn delete(&mut self, q: usize, h: Handle) -> Result<(), &'static str> {
        self.tick();
        let (slot, nonce) = handle_of(q, h)?;
        let queue = &mut self.queues[q];
        let Some(m) = queue.get(slot) else {
            return Ok(());
        };
        let current = m.nonce == nonce;
        let in_flight = matches!(m.st, St::InFlight(_));
        if queue.fifo && !(current && in_flight) {
            return Err(INVALID_PARAMETER);
        }
        if current {
            queue.remove(slot);
            self.forget_attempts_with(q, slot);
        }
        Ok(())
    }

    pub fn change_visibility(
        &mut self,
        q: usize,
        h: Handle,
        timeout: i64,
    ) -> Result<(), &'static str> {
        self.tick();
        if !(0..=43_200).contains(&timeout) {
            return Err(INVALID_PARAMETER);
        }
        let (slot, nonce) = handle_of(q, h)?;
        let now = self.now;
        let queue = &mut self.queues[q];
        let fifo = queue.fifo;
        let Some(m) = queue.get_mut(slot) else {
            return Err(INVALID_PARAMETER);
        };
        let current = m.nonce == nonce;
        let in_flight = matches!(m.st, St::InFlight(_));
        if fifo && !(current && in_flight) {
            return Err(INVALID_PARAMETER);
        }
        if !current && !in_flight {
            return Err(NOT_IN_FLIGHT);
        }
        let until = now + timeout as u64 * 1000;
        if until > m.received_ms + MAX_VISIBILITY_MS {
            return Err(INVALID_PARAMETER);
        }
        match m.st {
            St::InFlight(_) if until <= now => {
                m.st = St::Avail;
                m.visible_since = now;
            }
            St::InFlight(_) => m.st = St::InFlight(until),
            St::Avail if !fifo && until > now => m.st = St::InFlight(until),
            _ => {}
        }
        self.forget_attempts_with(q, slot);
        Ok(())
    }

    pub fn purge(&mut self, q: usize) {
        self.tick();
        let queue = &mut self.queues[q];
        queue.msgs.clear();
        queue.attempts.clear();
        queue.dedup.clear();
    }

    /// Applies one queue attribute; `Err` leaves the queue as it was.
    pub fn set_attribute(&mut self, q: usize, name: &str, value: &str) -> Result<(), &'static str> {
        let int = |lo: u64, hi: u64| {
            value
                .parse::<u64>()
                .ok()
                .filter(|v| (lo..=hi).contains(v))
                .ok_or(INVALID_ATTRIBUTE_VALUE)
        };
        let result: Result<(), &'static str> = (|| {
            let queue = &mut self.queues[q];
            match name {
                "VisibilityTimeout" => queue.visibility_s = int(0, 43_200)?,
                "DelaySeconds" => queue.delay_s = int(0, 900)?,
                "MessageRetentionPeriod" => queue.retention_s = int(60, 1_209_600)?,
                "ContentBasedDeduplication" => queue.content_dedup = value == "true",
                // Stored and returned, but deduplication keeps the scope
                // the queue was created with.
                "DeduplicationScope" => {}
                _ => unreachable!("the harness sends no other attribute"),
            }
            Ok(())
        })();
        // The engine applies the new settings, then lets time act.
        self.tick();
        result
    }

    pub fn set_max_receive_count(&mut self, q: usize, count: u32) {
        if let Some((_, max)) = &mut self.queues[q].redrive {
            *max = count;
        }
        self.tick();
    }

    fn is_dead_letter_queue(&self, q: usize) -> bool {
        self.queues
            .iter()
            .any(|s| s.redrive.is_some_and(|(d, _)| d == q))
    }

    /// StartMessageMoveTask; `Ok` is the new task's serial.
    pub fn start_task(
        &mut self,
        source: usize,
        dest: Option<usize>,
        rate: Option<i64>,
    ) -> Result<usize, &'static str> {
        self.tick();
        if rate.is_some_and(|r| !(1..=500).contains(&r)) {
            return Err(INVALID_PARAMETER);
        }
        if !self.is_dead_letter_queue(source) {
            return Err(INVALID_PARAMETER);
        }
        let active = self.tasks.iter().any(|t| {
            t.source == source && matches!(t.status, TaskStatus::Running | TaskStatus::Cancelling)
        });
        if active {
            return Err(INVALID_PARAMETER);
        }
        let serial = self.tasks.len();
        self.tasks.push(Task {
            serial,
            source,
            dest,
            rate: rate.map(|r| r as u32),
            started: self.now,
            status: TaskStatus::Running,
            moved: 0,
            to_move: self.queues[source].msgs.len() as i64,
        });
        Ok(serial)
    }

    /// The tasks of one source the engine still remembers, oldest first.
    pub fn remembered(&self, source: usize) -> Vec<usize> {
        let all: Vec<usize> = self
            .tasks
            .iter()
            .filter(|t| t.source == source)
            .map(|t| t.serial)
            .collect();
        all[all.len().saturating_sub(TASK_HISTORY)..].to_vec()
    }

    /// What the engine's task runner does when asked for task news.
    fn run_tasks(&mut self) {
        for i in 0..self.tasks.len() {
            if !self.remembered(self.tasks[i].source).contains(&i) {
                continue;
            }
            if self.tasks[i].status == TaskStatus::Cancelling {
                self.tasks[i].status = TaskStatus::Cancelled;
            }
            if self.tasks[i].status == TaskStatus::Running {
                self.step(i);
            }
        }
    }

    fn step(&mut self, i: usize) {
        let now = self.now;
        let task = self.tasks[i].clone();
        let allowance = match task.rate {
            Some(rate) => {
                let seconds = (now - task.started) / 1000 + 1;
                (seconds as i64 * rate as i64 - task.moved).clamp(0, TASK_CHUNK)
            }
            None => TASK_CHUNK,
        } as usize;
        if allowance > 0 {
            let mut batch = Vec::new();
            self.queues[task.source].serve(allowance, |queue, slot| {
                batch.push(queue.remove(slot).expect("served"));
                true
            });
            let count = batch.len();
            let mut failed = false;
            let mut leftovers = Vec::new();
            for m in batch {
                let dest = task.dest.or(m.dl_source);
                match dest {
                    Some(d) if !failed => {
                        let fresh = Msg {
                            id: None,
                            sent_ms: now,
                            enqueued_ms: now,
                            receive_count: 0,
                            dl_source: None,
                            nonce: 0,
                            received_ms: 0,
                            ..m
                        };
                        self.queues[d].insert(fresh, now, now);
                        self.tasks[i].moved += 1;
                    }
                    _ => {
                        failed = true;
                        leftovers.push(m);
                    }
                }
            }
            for m in leftovers {
                self.queues[task.source].insert(m, now, now);
            }
            if failed {
                self.tasks[i].status = TaskStatus::Failed;
                return;
            }
            if count == allowance {
                return;
            }
        }
        if self.queues[task.source].counts().0 == 0 {
            self.tasks[i].status = TaskStatus::Completed;
        }
    }

    /// CancelMessageMoveTask of a task by serial (`None`: a garbage handle).
    pub fn cancel_task(&mut self, serial: Option<usize>) -> Result<i64, &'static str> {
        self.tick();
        let Some(serial) = serial else {
            return Err(INVALID_PARAMETER);
        };
        self.run_tasks();
        if !self.remembered(self.tasks[serial].source).contains(&serial) {
            return Err(RESOURCE_NOT_FOUND);
        }
        let task = &mut self.tasks[serial];
        if task.status != TaskStatus::Running {
            return Err(INVALID_PARAMETER);
        }
        task.status = TaskStatus::Cancelling;
        Ok(task.moved)
    }

    /// ListMessageMoveTasks (MaxResults 10): newest first.
    pub fn list_tasks(&mut self, source: usize) -> Vec<Task> {
        self.tick();
        self.run_tasks();
        self.remembered(source)
            .into_iter()
            .rev()
            .map(|s| self.tasks[s].clone())
            .collect()
    }
}

/// The slot and nonce of a handle issued by queue `q`; any other handle
/// (garbage, or another queue's) is invalid there.
fn handle_of(q: usize, h: Handle) -> Result<(u64, u64), &'static str> {
    match h {
        Handle::Known { queue, slot, nonce } if queue == q => Ok((slot, nonce)),
        _ => Err(INVALID_HANDLE),
    }
}
