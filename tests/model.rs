//! Model-based test: random sequences of operations run against the real
//! engine (in process, typed requests, a manual clock) and against the
//! reference model in `tests/model/reference.rs`; every answer and the
//! `Approximate*` counters of every queue must agree after every step.
//!
//! Bounded by default (CI). Longer runs:
//!   RETSU_MODEL_CASES=10000 RETSU_MODEL_OPS=100 cargo test --release --test model -- --nocapture
//! `RETSU_MODEL_SEED=<n>` fixes the seed (printed at the end of each run).
//!
//! Four queues: a standard one with a standard dead-letter queue, and a
//! FIFO one with a FIFO dead-letter queue.

#[path = "model/reference.rs"]
mod reference;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use reference::*;
use retsu::api::*;
use retsu::clock::ManualClock;
use retsu::engine::{Engine, EngineConfig};

const START_MS: u64 = 1_700_000_000_000;
const ACCOUNT: &str = "000000000000";
const NAMES: [&str; 4] = ["std", "std-dlq", "fifo.fifo", "fifo-dlq.fifo"];
const STD: usize = 0;
const STD_DLQ: usize = 1;
const FIFO: usize = 2;
const FIFO_DLQ: usize = 3;

fn arn(q: usize) -> String {
    format!("arn:aws:sqs:us-east-1:{ACCOUNT}:{}", NAMES[q])
}

fn url(q: usize) -> String {
    format!("http://localhost:9324/{ACCOUNT}/{}", NAMES[q])
}

fn redrive(dlq: usize, count: u32) -> String {
    format!(
        r#"{{"deadLetterTargetArn":"{}","maxReceiveCount":"{count}"}}"#,
        arn(dlq)
    )
}

/// One message as generated; mapped onto a queue by [`Harness::message`].
#[derive(Debug, Clone)]
struct MsgGen {
    body: u8,
    group: u8,
    dedup: Option<u8>,
    delay: Option<i64>,
    /// An extra attribute: (type 0 String, 1 Number, 2 Binary; value).
    extra: Option<(u8, u16)>,
}

#[derive(Debug, Clone)]
enum Op {
    Send {
        q: usize,
        m: MsgGen,
    },
    Batch {
        q: usize,
        entries: Vec<MsgGen>,
    },
    Receive {
        q: usize,
        max: usize,
        visibility: Option<i64>,
        attempt: Option<u8>,
    },
    /// `q: None`: the queue the handle came from.
    Delete {
        q: Option<usize>,
        handle: Option<usize>,
    },
    ChangeVisibility {
        q: Option<usize>,
        handle: Option<usize>,
        timeout: i64,
    },
    Purge {
        q: usize,
    },
    SetAttribute {
        q: usize,
        name: &'static str,
        value: String,
    },
    SetMaxReceiveCount {
        fifo: bool,
        count: u32,
    },
    /// A RedrivePolicy naming a dead-letter queue of the other type.
    SetWrongRedrive,
    Advance(u64),
    StartTask {
        source: usize,
        to_own_source: bool,
        rate: Option<i64>,
    },
    CancelTask {
        task: Option<usize>,
    },
    ListTasks {
        source: usize,
    },
}

fn msg_gen() -> impl Strategy<Value = MsgGen> {
    (
        0u8..8,
        0u8..4,
        prop_oneof![3 => Just(None), 7 => (0u8..10).prop_map(Some)],
        prop_oneof![
            8 => Just(None),
            2 => Just(Some(0i64)),
            2 => (1i64..4).prop_map(Some),
            1 => Just(Some(901i64)),
        ],
        prop_oneof![2 => Just(None), 1 => (0u8..3, any::<u16>()).prop_map(Some)],
    )
        .prop_map(|(body, group, dedup, delay, extra)| MsgGen {
            body,
            group,
            dedup,
            delay,
            extra,
        })
}

fn queue_gen() -> impl Strategy<Value = usize> {
    prop_oneof![4 => Just(STD), 1 => Just(STD_DLQ), 4 => Just(FIFO), 1 => Just(FIFO_DLQ)]
}

fn handle_gen() -> impl Strategy<Value = Option<usize>> {
    prop_oneof![1 => Just(None), 12 => (0usize..12).prop_map(Some)]
}

fn timeout_gen() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => Just(0i64),
        3 => 1i64..40,
        1 => Just(43_200i64),
        1 => 40i64..43_200,
        1 => Just(43_201i64),
    ]
}

fn op_gen() -> impl Strategy<Value = Op> {
    let attribute = prop_oneof![
        (0usize..4, 0u32..60).prop_map(|(q, v)| ("VisibilityTimeout", q, v.to_string())),
        (0usize..4, 0u32..4).prop_map(|(q, v)| ("DelaySeconds", q, v.to_string())),
        (0usize..4, 60u32..600).prop_map(|(q, v)| ("MessageRetentionPeriod", q, v.to_string())),
        (0usize..4).prop_map(|q| ("VisibilityTimeout", q, "43201".to_string())),
        (0usize..4).prop_map(|q| ("MessageRetentionPeriod", q, "59".to_string())),
        any::<bool>().prop_map(|b| ("ContentBasedDeduplication", FIFO, b.to_string())),
        any::<bool>().prop_map(|b| (
            "DeduplicationScope",
            FIFO,
            if b { "messageGroup" } else { "queue" }.to_string()
        )),
    ];
    prop_oneof![
        12 => (queue_gen(), msg_gen()).prop_map(|(q, m)| Op::Send { q, m }),
        4 => (queue_gen(), proptest::collection::vec(msg_gen(), 1..=10))
            .prop_map(|(q, entries)| Op::Batch { q, entries }),
        14 => (
            queue_gen(),
            prop_oneof![12 => 1usize..=10, 1 => Just(0usize), 1 => Just(11usize)],
            prop_oneof![3 => Just(None), 2 => timeout_gen().prop_map(Some)],
            prop_oneof![2 => Just(None), 1 => (0u8..3).prop_map(Some)],
        )
            .prop_map(|(q, max, visibility, attempt)| Op::Receive { q, max, visibility, attempt }),
        8 => (prop_oneof![6 => Just(None), 1 => (0usize..4).prop_map(Some)], handle_gen())
            .prop_map(|(q, handle)| Op::Delete { q, handle }),
        6 => (
            prop_oneof![6 => Just(None), 1 => (0usize..4).prop_map(Some)],
            handle_gen(),
            timeout_gen(),
        )
            .prop_map(|(q, handle, timeout)| Op::ChangeVisibility { q, handle, timeout }),
        1 => (0usize..4).prop_map(|q| Op::Purge { q }),
        2 => attribute.prop_map(|(name, q, value)| Op::SetAttribute { q, name, value }),
        1 => (any::<bool>(), 1u32..5).prop_map(|(fifo, count)| Op::SetMaxReceiveCount { fifo, count }),
        1 => Just(Op::SetWrongRedrive),
        12 => prop_oneof![
            6 => 0u64..3_000,
            3 => 3_000u64..70_000,
            2 => 70_000u64..400_000,
            1 => 3_600_000u64..50_000_000,
        ]
        .prop_map(Op::Advance),
        2 => (
            prop_oneof![4 => Just(STD_DLQ), 4 => Just(FIFO_DLQ), 1 => Just(STD)],
            any::<bool>(),
            prop_oneof![2 => Just(None), 2 => (1i64..4).prop_map(Some), 1 => Just(Some(0i64))],
        )
            .prop_map(|(source, to_own_source, rate)| Op::StartTask { source, to_own_source, rate }),
        1 => prop_oneof![1 => Just(None), 6 => (0usize..8).prop_map(Some)]
            .prop_map(|task| Op::CancelTask { task }),
        2 => prop_oneof![Just(STD_DLQ), Just(FIFO_DLQ), Just(STD)]
            .prop_map(|source| Op::ListTasks { source }),
    ]
}

/// The engine, the model and what the test learnt from the engine's answers.
struct Harness {
    rt: tokio::runtime::Runtime,
    clock: Arc<ManualClock>,
    engine: Arc<Engine>,
    ctx: RequestContext,
    model: Model,
    /// Every receipt handle seen: the engine's string and the model's view.
    handles: Vec<(String, Handle)>,
    /// The engine's handle of each model task (by serial).
    task_handles: Vec<String>,
    next_uid: u64,
}

type Step = Result<(), TestCaseError>;

macro_rules! check {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err(TestCaseError::fail(format!($($arg)*)));
        }
    };
}

fn code<T>(r: &Result<T, retsu::error::SqsError>) -> Option<&'static str> {
    r.as_ref().err().map(|e| e.code.query_code())
}

impl Harness {
    fn new(per_group_scope: bool, content_dedup: bool) -> Harness {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let clock = Arc::new(ManualClock::new(START_MS));
        let engine = Engine::new(clock.clone(), EngineConfig::default());
        let ctx = RequestContext::new("us-east-1", ACCOUNT, "http://localhost:9324");
        let mut queues: Vec<Queue> = (0..4).map(|q| Queue::new(NAMES[q], q >= FIFO)).collect();
        queues[STD].redrive = Some((STD_DLQ, 3));
        queues[FIFO].redrive = Some((FIFO_DLQ, 3));
        queues[FIFO].dedup_per_group = per_group_scope;
        queues[FIFO].content_dedup = content_dedup;
        let h = Harness {
            rt,
            clock,
            engine,
            ctx,
            model: Model::new(START_MS, queues),
            handles: Vec::new(),
            task_handles: Vec::new(),
            next_uid: 1,
        };
        for q in [STD_DLQ, FIFO_DLQ, STD, FIFO] {
            let mut attributes = BTreeMap::new();
            if q >= FIFO {
                attributes.insert("FifoQueue".to_string(), "true".to_string());
            }
            if q == STD {
                attributes.insert("RedrivePolicy".to_string(), redrive(STD_DLQ, 3));
            }
            if q == FIFO {
                attributes.insert("RedrivePolicy".to_string(), redrive(FIFO_DLQ, 3));
                attributes.insert(
                    "DeduplicationScope".to_string(),
                    if per_group_scope {
                        "messageGroup"
                    } else {
                        "queue"
                    }
                    .to_string(),
                );
                attributes.insert(
                    "ContentBasedDeduplication".to_string(),
                    content_dedup.to_string(),
                );
            }
            h.call(Request::CreateQueue(CreateQueueRequest {
                queue_name: Some(NAMES[q].to_string()),
                attributes,
                tags: BTreeMap::new(),
            }))
            .expect("queue created");
        }
        h
    }

    fn call(&self, request: Request) -> Result<Response, retsu::error::SqsError> {
        self.rt.block_on(self.engine.handle(&self.ctx, request))
    }

    fn message(&mut self, q: usize, g: &MsgGen) -> SendIn {
        let fifo = q >= FIFO;
        let uid = self.next_uid;
        self.next_uid += 1;
        let mut attrs = MessageAttributes::new();
        attrs.insert(
            "uid".into(),
            MessageAttributeValue {
                string_value: Some(uid.to_string()),
                data_type: Some("String".into()),
                ..Default::default()
            },
        );
        if let Some((kind, v)) = g.extra {
            let value = match kind {
                0 => MessageAttributeValue {
                    string_value: Some(format!("s{v}")),
                    data_type: Some("String.custom".into()),
                    ..Default::default()
                },
                1 => MessageAttributeValue {
                    string_value: Some(v.to_string()),
                    data_type: Some("Number".into()),
                    ..Default::default()
                },
                _ => MessageAttributeValue {
                    binary_value: Some(v.to_be_bytes().to_vec()),
                    data_type: Some("Binary".into()),
                    ..Default::default()
                },
            };
            attrs.insert("extra".into(), value);
        }
        SendIn {
            uid,
            // Few distinct bodies, so content-based deduplication bites.
            body: format!("body-{}", g.body),
            attrs,
            delay: g.delay,
            // group 3 on a FIFO queue: no group (an error).
            group: match (fifo, g.group) {
                (true, 3) => None,
                (true, n) => Some(format!("g{n}")),
                (false, 3) => Some("g".into()),
                (false, _) => None,
            },
            // A standard queue gets a deduplication id rarely (an error).
            dedup: match (fifo, g.dedup) {
                (true, d) => d.map(|d| format!("d{d}")),
                (false, Some(9)) => Some("d9".into()),
                (false, _) => None,
            },
        }
    }

    fn counters(&mut self) -> Step {
        self.model.tick();
        for (q, name) in NAMES.iter().enumerate() {
            let r = self.call(Request::GetQueueAttributes(GetQueueAttributesRequest {
                queue_url: Some(url(q)),
                attribute_names: vec!["All".into()],
            }));
            let Ok(Response::GetQueueAttributes(r)) = r else {
                return Err(TestCaseError::fail(format!("GetQueueAttributes: {r:?}")));
            };
            let get = |n: &str| r.attributes.get(n).cloned().unwrap_or_default();
            let engine = (
                get("ApproximateNumberOfMessages"),
                get("ApproximateNumberOfMessagesNotVisible"),
                get("ApproximateNumberOfMessagesDelayed"),
            );
            let (a, f, d) = self.model.queues[q].counts();
            let model = (a.to_string(), f.to_string(), d.to_string());
            check!(
                engine == model,
                "counters of {name}: engine {engine:?}, model {model:?}"
            );
        }
        Ok(())
    }

    fn pick_handle(&self, i: Option<usize>) -> (String, Handle) {
        match i {
            Some(i) if !self.handles.is_empty() => {
                // Mostly recent handles: those are the interesting ones.
                let n = self.handles.len();
                self.handles[n - 1 - (i % n)].clone()
            }
            _ => ("garbage-handle".to_string(), Handle::Garbage),
        }
    }

    fn handle_queue(h: &Handle, q: Option<usize>) -> usize {
        match (q, h) {
            (Some(q), _) => q,
            (None, Handle::Known { queue, .. }) => *queue,
            (None, Handle::Garbage) => STD,
        }
    }

    fn check_sent(
        &mut self,
        q: usize,
        model: Sent,
        engine_id: &str,
        engine_sequence: Option<&str>,
    ) -> Step {
        match model {
            Sent::New(slot) => {
                check!(
                    (q >= FIFO) == engine_sequence.is_some(),
                    "sequence number presence on {}",
                    NAMES[q]
                );
                self.model.learn_sent(q, slot, engine_id, engine_sequence);
            }
            Sent::Duplicate {
                message_id,
                sequence,
            } => {
                check!(
                    message_id == engine_id && Some(sequence.as_str()) == engine_sequence,
                    "duplicate answered as {engine_id}/{engine_sequence:?}, model {message_id}/{sequence}"
                );
            }
            Sent::Failed(c) => {
                return Err(TestCaseError::fail(format!(
                    "engine accepted a send the model refuses with {c}"
                )))
            }
        }
        Ok(())
    }

    fn apply(&mut self, op: &Op) -> Step {
        match op {
            Op::Send { q, m } => {
                let q = *q;
                let m = self.message(q, m);
                let r = self.call(Request::SendMessage(SendMessageRequest {
                    queue_url: Some(url(q)),
                    message_body: Some(m.body.clone()),
                    delay_seconds: m.delay,
                    message_attributes: m.attrs.clone(),
                    message_system_attributes: Default::default(),
                    message_deduplication_id: m.dedup.clone(),
                    message_group_id: m.group.clone(),
                }));
                let model = self.model.send(q, &m);
                match (r, model) {
                    (Err(e), Sent::Failed(c)) => {
                        check!(e.code.query_code() == c, "send: engine {e}, model {c}")
                    }
                    (Ok(Response::SendMessage(r)), model) => self.check_sent(
                        q,
                        model,
                        &r.message_id.to_string(),
                        r.sequence_number.as_deref(),
                    )?,
                    (r, model) => {
                        return Err(TestCaseError::fail(format!(
                            "send: engine {r:?}, model {model:?}"
                        )))
                    }
                }
            }
            Op::Batch { q, entries } => {
                let q = *q;
                let msgs: Vec<SendIn> = entries.iter().map(|g| self.message(q, g)).collect();
                let r = self.call(Request::SendMessageBatch(SendMessageBatchRequest {
                    queue_url: Some(url(q)),
                    entries: Some(
                        msgs.iter()
                            .enumerate()
                            .map(|(i, m)| SendMessageBatchRequestEntry {
                                id: Some(format!("e{i}")),
                                message_body: Some(m.body.clone()),
                                delay_seconds: m.delay,
                                message_attributes: m.attrs.clone(),
                                message_system_attributes: Default::default(),
                                message_deduplication_id: m.dedup.clone(),
                                message_group_id: m.group.clone(),
                            })
                            .collect(),
                    ),
                }));
                let model = self.model.send_batch_check(q, &msgs);
                match (r, model) {
                    (Err(e), Err(c)) => {
                        check!(e.code.query_code() == c, "batch: engine {e}, model {c}")
                    }
                    (Ok(Response::SendMessageBatch(r)), Ok(outcomes)) => {
                        let ok = outcomes.iter().filter(|o| o.is_ok()).count();
                        check!(
                            r.successful.len() == ok && r.failed.len() == outcomes.len() - ok,
                            "batch: engine {} ok {} failed, model {ok} ok of {}",
                            r.successful.len(),
                            r.failed.len(),
                            outcomes.len()
                        );
                        for (i, (m, outcome)) in msgs.iter().zip(outcomes).enumerate() {
                            let id = format!("e{i}");
                            match outcome {
                                Ok(delay) => {
                                    let Some(e) = r.successful.iter().find(|e| e.id == id) else {
                                        return Err(TestCaseError::fail(format!(
                                            "batch entry {id} not successful"
                                        )));
                                    };
                                    let sent = self.model.send_batch_enqueue(q, m, delay);
                                    self.check_sent(
                                        q,
                                        sent,
                                        &e.result.message_id.to_string(),
                                        e.result.sequence_number.as_deref(),
                                    )?;
                                }
                                Err(c) => {
                                    let failed = r.failed.iter().find(|e| e.id == id);
                                    check!(
                                        failed.is_some_and(|f| f.code == c),
                                        "batch entry {id}: engine {failed:?}, model {c}"
                                    );
                                }
                            }
                        }
                    }
                    (r, model) => {
                        return Err(TestCaseError::fail(format!(
                            "batch: engine {r:?}, model {model:?}"
                        )))
                    }
                }
            }
            Op::Receive {
                q,
                max,
                visibility,
                attempt,
            } => {
                let q = *q;
                let attempt = attempt.map(|a| format!("attempt-{a}"));
                let r = self.call(Request::ReceiveMessage(ReceiveMessageRequest {
                    queue_url: Some(url(q)),
                    attribute_names: vec!["All".into()],
                    message_system_attribute_names: vec![],
                    message_attribute_names: vec!["All".into()],
                    max_number_of_messages: Some(*max as i64),
                    visibility_timeout: *visibility,
                    wait_time_seconds: Some(0),
                    receive_request_attempt_id: attempt.clone(),
                }));
                let model = self.model.receive(q, *max, *visibility, attempt.as_deref());
                match (r, model) {
                    (Err(e), Received::Failed(c)) => {
                        check!(e.code.query_code() == c, "receive: engine {e}, model {c}")
                    }
                    (Ok(Response::ReceiveMessage(r)), Received::Messages { slots, replay }) => {
                        self.check_received(q, &r.messages, &slots, replay)?
                    }
                    (r, model) => {
                        return Err(TestCaseError::fail(format!(
                            "receive: engine {r:?}, model {model:?}"
                        )))
                    }
                }
            }
            Op::Delete { q, handle } => {
                let (text, h) = self.pick_handle(*handle);
                let q = Harness::handle_queue(&h, *q);
                let r = self.call(Request::DeleteMessage(DeleteMessageRequest {
                    queue_url: Some(url(q)),
                    receipt_handle: Some(text),
                }));
                let model = self.model.delete(q, h);
                check!(
                    code(&r) == model.err(),
                    "delete on {} with {h:?}: engine {r:?}, model {model:?}",
                    NAMES[q]
                );
            }
            Op::ChangeVisibility { q, handle, timeout } => {
                let (text, h) = self.pick_handle(*handle);
                let q = Harness::handle_queue(&h, *q);
                let r = self.call(Request::ChangeMessageVisibility(
                    ChangeMessageVisibilityRequest {
                        queue_url: Some(url(q)),
                        receipt_handle: Some(text),
                        visibility_timeout: Some(*timeout),
                    },
                ));
                let model = self.model.change_visibility(q, h, *timeout);
                check!(
                    code(&r) == model.err(),
                    "change visibility on {} with {h:?} to {timeout}: engine {r:?}, model {model:?}",
                    NAMES[q]
                );
            }
            Op::Purge { q } => {
                let r = self.call(Request::PurgeQueue(PurgeQueueRequest {
                    queue_url: Some(url(*q)),
                }));
                check!(r.is_ok(), "purge: {r:?}");
                self.model.purge(*q);
            }
            Op::SetAttribute { q, name, value } => {
                let r = self.call(Request::SetQueueAttributes(SetQueueAttributesRequest {
                    queue_url: Some(url(*q)),
                    attributes: Some(BTreeMap::from([(name.to_string(), value.clone())])),
                }));
                let model = self.model.set_attribute(*q, name, value);
                check!(
                    code(&r) == model.err(),
                    "set {name}={value} on {}: engine {r:?}, model {model:?}",
                    NAMES[*q]
                );
            }
            Op::SetMaxReceiveCount { fifo, count } => {
                let (q, dlq) = if *fifo {
                    (FIFO, FIFO_DLQ)
                } else {
                    (STD, STD_DLQ)
                };
                let r = self.call(Request::SetQueueAttributes(SetQueueAttributesRequest {
                    queue_url: Some(url(q)),
                    attributes: Some(BTreeMap::from([(
                        "RedrivePolicy".to_string(),
                        redrive(dlq, *count),
                    )])),
                }));
                check!(r.is_ok(), "set redrive policy: {r:?}");
                self.model.set_max_receive_count(q, *count);
            }
            Op::SetWrongRedrive => {
                let r = self.call(Request::SetQueueAttributes(SetQueueAttributesRequest {
                    queue_url: Some(url(STD)),
                    attributes: Some(BTreeMap::from([(
                        "RedrivePolicy".to_string(),
                        redrive(FIFO_DLQ, 1),
                    )])),
                }));
                check!(
                    code(&r) == Some(INVALID_PARAMETER),
                    "a FIFO dead-letter queue for a standard queue: {r:?}"
                );
                self.model.tick();
            }
            Op::Advance(ms) => {
                self.clock.advance(Duration::from_millis(*ms));
                self.model.now += ms;
            }
            Op::StartTask {
                source,
                to_own_source,
                rate,
            } => {
                let dest = match (*to_own_source, *source) {
                    (true, STD_DLQ) => Some(STD),
                    (true, FIFO_DLQ) => Some(FIFO),
                    _ => None,
                };
                let r = self.call(Request::StartMessageMoveTask(StartMessageMoveTaskRequest {
                    source_arn: Some(arn(*source)),
                    destination_arn: dest.map(arn),
                    max_number_of_messages_per_second: *rate,
                }));
                let model = self.model.start_task(*source, dest, *rate);
                match (r, model) {
                    (Ok(Response::StartMessageMoveTask(r)), Ok(serial)) => {
                        check!(serial == self.task_handles.len(), "task serials");
                        self.task_handles.push(r.task_handle);
                    }
                    (Err(e), Err(c)) => {
                        check!(
                            e.code.query_code() == c,
                            "start task: engine {e}, model {c}"
                        )
                    }
                    (r, model) => {
                        return Err(TestCaseError::fail(format!(
                            "start task: engine {r:?}, model {model:?}"
                        )))
                    }
                }
            }
            Op::CancelTask { task } => {
                let serial = task
                    .filter(|_| !self.task_handles.is_empty())
                    .map(|t| self.task_handles.len() - 1 - t % self.task_handles.len());
                let handle = match serial {
                    Some(s) => self.task_handles[s].clone(),
                    None => "bm90IGEgdGFzaw==".to_string(),
                };
                let r = self.call(Request::CancelMessageMoveTask(
                    CancelMessageMoveTaskRequest {
                        task_handle: Some(handle),
                    },
                ));
                let model = self.model.cancel_task(serial);
                match (r, model) {
                    (Ok(Response::CancelMessageMoveTask(r)), Ok(moved)) => check!(
                        r.approximate_number_of_messages_moved == moved,
                        "cancel: engine moved {}, model {moved}",
                        r.approximate_number_of_messages_moved
                    ),
                    (Err(e), Err(c)) => {
                        check!(e.code.query_code() == c, "cancel: engine {e}, model {c}")
                    }
                    (r, model) => {
                        return Err(TestCaseError::fail(format!(
                            "cancel: engine {r:?}, model {model:?}"
                        )))
                    }
                }
            }
            Op::ListTasks { source } => {
                let r = self.call(Request::ListMessageMoveTasks(ListMessageMoveTasksRequest {
                    source_arn: Some(arn(*source)),
                    max_results: Some(10),
                }));
                let Ok(Response::ListMessageMoveTasks(r)) = r else {
                    return Err(TestCaseError::fail(format!("list tasks: {r:?}")));
                };
                let model = self.model.list_tasks(*source);
                let engine: Vec<_> = r
                    .results
                    .iter()
                    .map(|t| {
                        (
                            t.status.clone(),
                            t.approximate_number_of_messages_moved,
                            t.approximate_number_of_messages_to_move,
                            t.task_handle.clone(),
                            t.destination_arn.clone(),
                            t.max_number_of_messages_per_second,
                        )
                    })
                    .collect();
                let model: Vec<_> = model
                    .iter()
                    .map(|t| {
                        (
                            t.status.as_str().to_string(),
                            t.moved,
                            t.to_move,
                            (t.status == TaskStatus::Running)
                                .then(|| self.task_handles[t.serial].clone()),
                            t.dest.map(arn),
                            t.rate.map(i64::from),
                        )
                    })
                    .collect();
                check!(
                    engine == model,
                    "tasks of {}: engine {engine:?}, model {model:?}",
                    NAMES[*source]
                );
            }
        }
        Ok(())
    }

    fn check_received(
        &mut self,
        q: usize,
        messages: &[Message],
        slots: &[u64],
        replay: bool,
    ) -> Step {
        let uid_of = |m: &Message| {
            m.message_attributes
                .get("uid")
                .and_then(|v| v.string_value.as_deref())
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0)
        };
        let queue = &self.model.queues[q];
        let mut engine: Vec<u64> = messages.iter().map(uid_of).collect();
        let mut model: Vec<u64> = slots
            .iter()
            .map(|s| queue.get(*s).expect("received").uid)
            .collect();
        // Order is defined for FIFO queues only.
        if !queue.fifo {
            engine.sort_unstable();
            model.sort_unstable();
        }
        check!(
            engine == model,
            "receive from {}: engine uids {engine:?}, model {model:?}",
            NAMES[q]
        );
        for m in messages {
            let uid = uid_of(m);
            let queue = &mut self.model.queues[q];
            let slot = queue
                .msgs
                .iter()
                .find(|x| x.uid == uid)
                .expect("checked")
                .slot;
            let mm = queue
                .msgs
                .iter_mut()
                .find(|x| x.slot == slot)
                .expect("found");
            let attr = |n: &str| m.attributes.get(n).cloned();
            check!(m.body == mm.body, "body of {uid}");
            check!(
                m.message_attributes == mm.attrs,
                "attributes of {uid}: {:?} vs {:?}",
                m.message_attributes,
                mm.attrs
            );
            check!(
                attr("ApproximateReceiveCount") == Some(mm.receive_count.to_string()),
                "receive count of {uid}: engine {:?}, model {}",
                attr("ApproximateReceiveCount"),
                mm.receive_count
            );
            check!(
                attr("SentTimestamp") == Some(mm.sent_ms.to_string()),
                "sent timestamp of {uid}"
            );
            check!(
                attr("MessageGroupId") == mm.group,
                "group of {uid}: engine {:?}, model {:?}",
                attr("MessageGroupId"),
                mm.group
            );
            if mm.dedup.is_some() {
                check!(
                    attr("MessageDeduplicationId") == mm.dedup,
                    "deduplication id of {uid}"
                );
            }
            match &mm.id {
                Some(id) => check!(
                    *id == m.message_id,
                    "message id of {uid}: engine {}, model {id}",
                    m.message_id
                ),
                None => mm.id = Some(m.message_id.clone()),
            }
            let handle = Handle::Known {
                queue: q,
                slot,
                nonce: mm.nonce,
            };
            if replay {
                let earlier = self.handles.iter().find(|(_, h)| *h == handle);
                check!(
                    earlier.is_some_and(|(t, _)| *t == m.receipt_handle),
                    "a replayed receive must return the same handle for {uid}"
                );
            } else {
                self.handles.push((m.receipt_handle.clone(), handle));
            }
        }
        Ok(())
    }
}

static OPS: AtomicU64 = AtomicU64::new(0);

fn run_case(per_group_scope: bool, content_dedup: bool, ops: &[Op]) -> Step {
    let mut h = Harness::new(per_group_scope, content_dedup);
    for (i, op) in ops.iter().enumerate() {
        h.apply(op)
            .and_then(|_| h.counters())
            .map_err(|e| TestCaseError::fail(format!("step {i} ({op:?}): {e}")))?;
        OPS.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn engine_agrees_with_the_reference_model() {
    let cases = env("RETSU_MODEL_CASES", 300) as u32;
    let max_ops = env("RETSU_MODEL_OPS", 80) as usize;
    let seed = env("RETSU_MODEL_SEED", rand_seed());
    let config = Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let strategy = (
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec(op_gen(), 1..=max_ops),
    );
    let result = runner.run(&strategy, |(per_group, content, ops)| {
        run_case(per_group, content, &ops)
    });
    println!(
        "model: {cases} cases of up to {max_ops} operations, {} operations run, seed {seed}",
        OPS.load(Ordering::Relaxed)
    );
    if let Err(e) = result {
        panic!("engine and model diverge (seed {seed}): {e}");
    }
}

fn rand_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}
