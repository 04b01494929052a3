//! Transfers between two engines of one store: each engine's `Elsewhere`
//! answers from the other, a subscriber standing in for the journal keeps
//! each outbound record as JSON, and the test carries it to the other
//! engine's `accept_inbound`, as the cluster's outbox does.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use uuid::Uuid;

use super::events::{Event, Subscriber, TopicEvent, TopicEventKind};
use super::*;
use crate::api::*;
use crate::clock::ManualClock;
use crate::sns::api::{
    CreateTopicRequest, PublishRequest, SnsRequest, SnsResponse, SubscribeRequest,
};
use crate::sns::envelope::{SignatureVersion, Signer};
use crate::sns::Sns;

const ACCOUNT: &str = "000000000000";

fn arn(name: &str) -> String {
    format!("arn:aws:sqs:us-east-1:{ACCOUNT}:{name}")
}

/// The other engine, as the cluster would describe its queues. `behind`:
/// the last read has not seen what the other engine made since, so only
/// [`Elsewhere::queue_now`] finds it. Counts the reads of the truth (a
/// database round trip in the cluster).
#[derive(Default)]
struct Other(
    OnceLock<Weak<Engine>>,
    std::sync::atomic::AtomicBool,
    std::sync::atomic::AtomicUsize,
);

impl Other {
    fn fall_behind(&self) {
        self.1.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Elsewhere for Other {
    fn queue(&self, arn: &str) -> Option<RemoteQueue> {
        if self.1.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        self.queue_now(arn)
    }

    fn queue_now(&self, arn: &str) -> Option<RemoteQueue> {
        self.2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let engine = self.0.get()?.upgrade()?;
        let q = engine.queue_by_arn(arn)?;
        let policy = q.lock().settings.render("RedriveAllowPolicy");
        Some(RemoteQueue {
            fifo: q.is_fifo(),
            redrive_allow_policy: policy,
            deleted: q.is_deleted(),
        })
    }

    fn is_dead_letter_target(&self, arn: &str) -> bool {
        let engine = self.0.get().and_then(Weak::upgrade);
        engine.is_some_and(|e| !e.sources_of(arn).is_empty())
    }
}

/// What a subscriber saw, in order.
#[derive(Debug, Clone)]
enum Seen {
    Begin,
    End,
    Events(Vec<Transition>),
    Outbound(Uuid),
    Accepted(Uuid),
    Topic(Vec<TopicEvent>),
}

/// Stands in for the journal: captures, groups, and keeps each outbound
/// record as the JSON an outbox row would hold.
#[derive(Default)]
struct Carrier {
    log: Mutex<Vec<Seen>>,
    rows: Mutex<Vec<String>>,
}

impl Subscriber for Carrier {
    fn publish(&self, events: &[Event]) {
        let kinds = events.iter().map(|e| e.kind).collect();
        self.log.lock().unwrap().push(Seen::Events(kinds));
    }
    fn begin_group(&self) {
        self.log.lock().unwrap().push(Seen::Begin);
    }
    fn end_group(&self) {
        self.log.lock().unwrap().push(Seen::End);
    }
    fn topic_events(&self, events: &[TopicEvent]) {
        self.log.lock().unwrap().push(Seen::Topic(events.to_vec()));
    }
    fn outbound(&self, records: &[Outbound]) {
        for r in records {
            self.log.lock().unwrap().push(Seen::Outbound(r.id));
            self.rows
                .lock()
                .unwrap()
                .push(serde_json::to_string(r).unwrap());
        }
    }
    fn accepted(&self, outbound_id: Uuid) {
        self.log.lock().unwrap().push(Seen::Accepted(outbound_id));
    }
}

impl Carrier {
    fn take_rows(&self) -> Vec<Outbound> {
        let rows = std::mem::take(&mut *self.rows.lock().unwrap());
        rows.iter()
            .map(|r| serde_json::from_str(r).unwrap())
            .collect()
    }

    /// Whether `this` was seen inside one group together with an event
    /// batch holding `kind`.
    fn grouped(&self, this: &dyn Fn(&Seen) -> bool, kind: Transition) -> bool {
        let log = self.log.lock().unwrap();
        let Some(at) = log.iter().position(this) else {
            return false;
        };
        let Some(begin) = log[..at].iter().rposition(|s| matches!(s, Seen::Begin)) else {
            return false;
        };
        let Some(end) = log[at..].iter().position(|s| matches!(s, Seen::End)) else {
            return false;
        };
        let group = &log[begin..at + end];
        !group.iter().any(|s| matches!(s, Seen::End))
            && group
                .iter()
                .any(|s| matches!(s, Seen::Events(k) if k.contains(&kind)))
    }

    fn topic_steps(&self) -> Vec<TopicEvent> {
        let log = self.log.lock().unwrap();
        log.iter()
            .filter_map(|s| match s {
                Seen::Topic(t) => Some(t.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    }
}

/// Every answer at once: the journal's part in these tests is the carrier.
struct Immediate;

impl persist::Durability for Immediate {
    fn failing(&self) -> bool {
        false
    }
    fn wait(
        &self,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), SqsError>> + Send + '_>>
    {
        Box::pin(async { Ok(()) })
    }
}

struct NoSigner;

impl Signer for NoSigner {
    fn sign(&self, _: SignatureVersion, _: &str) -> String {
        String::new()
    }
    fn certificate_file_name(&self) -> &str {
        "SimpleNotificationService-test.pem"
    }
}

struct Side {
    engine: Arc<Engine>,
    sns: Arc<Sns>,
    carrier: Arc<Carrier>,
    other: Arc<Other>,
    ctx: RequestContext,
}

fn side(clock: &ManualClock) -> Side {
    let engine = Engine::new(Arc::new(clock.clone()), EngineConfig::default());
    let carrier = Arc::new(Carrier::default());
    engine.subscribe(carrier.clone());
    engine.set_durability(Arc::new(Immediate));
    Side {
        sns: Sns::new(engine.clone(), Arc::new(NoSigner)),
        engine,
        carrier,
        other: Arc::new(Other::default()),
        ctx: RequestContext::new("us-east-1", ACCOUNT, "http://localhost:9324"),
    }
}

/// Two engines, each knowing the other's queues.
fn pair(clock: &ManualClock) -> (Side, Side) {
    let (a, b) = (side(clock), side(clock));
    let _ = a.other.0.set(Arc::downgrade(&b.engine));
    let _ = b.other.0.set(Arc::downgrade(&a.engine));
    a.engine.set_elsewhere(a.other.clone());
    b.engine.set_elsewhere(b.other.clone());
    (a, b)
}

fn clock() -> ManualClock {
    ManualClock::new(1_700_000_000_000)
}

impl Side {
    async fn run(&self, r: Request) -> Result<Response, SqsError> {
        self.engine.handle(&self.ctx, r).await
    }

    async fn try_create(&self, name: &str, attrs: &[(&str, &str)]) -> Result<String, SqsError> {
        let r = CreateQueueRequest {
            queue_name: Some(name.into()),
            attributes: attrs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            tags: BTreeMap::new(),
        };
        match self.run(Request::CreateQueue(r)).await? {
            Response::CreateQueue(r) => Ok(r.queue_url),
            _ => unreachable!(),
        }
    }

    async fn create(&self, name: &str, attrs: &[(&str, &str)]) -> String {
        self.try_create(name, attrs).await.unwrap()
    }

    async fn send(&self, url: &str, body: &str) -> Uuid {
        let mut attributes = MessageAttributes::new();
        attributes.insert(
            "colour".into(),
            MessageAttributeValue {
                data_type: Some("String".into()),
                string_value: Some("blue".into()),
                ..Default::default()
            },
        );
        let r = SendMessageRequest {
            queue_url: Some(url.into()),
            message_body: Some(body.into()),
            message_attributes: attributes,
            ..Default::default()
        };
        match self.run(Request::SendMessage(r)).await.unwrap() {
            Response::SendMessage(r) => r.message_id.0,
            _ => unreachable!(),
        }
    }

    async fn receive(&self, url: &str) -> Vec<Message> {
        let r = ReceiveMessageRequest {
            queue_url: Some(url.into()),
            max_number_of_messages: Some(10),
            message_system_attribute_names: vec!["All".into()],
            message_attribute_names: vec!["All".into()],
            ..Default::default()
        };
        match self.run(Request::ReceiveMessage(r)).await.unwrap() {
            Response::ReceiveMessage(r) => r.messages,
            _ => unreachable!(),
        }
    }

    async fn count(&self, url: &str) -> String {
        let name = "ApproximateNumberOfMessages";
        let r = GetQueueAttributesRequest {
            queue_url: Some(url.into()),
            attribute_names: vec![name.into()],
        };
        match self.run(Request::GetQueueAttributes(r)).await.unwrap() {
            Response::GetQueueAttributes(r) => r.attributes[name].clone(),
            _ => unreachable!(),
        }
    }

    async fn sns(&self, r: SnsRequest) -> SnsResponse {
        self.sns.handle(&self.ctx, r).await.unwrap()
    }

    /// A topic with one subscription: the queue `queue` (of any engine).
    async fn topic(&self, name: &str, fifo: bool, queue: &str) -> String {
        let mut attributes = BTreeMap::new();
        if fifo {
            attributes.insert("FifoTopic".to_string(), "true".to_string());
        }
        let r = CreateTopicRequest {
            name: Some(name.into()),
            attributes,
            ..Default::default()
        };
        let SnsResponse::CreateTopic(r) = self.sns(SnsRequest::CreateTopic(r)).await else {
            unreachable!()
        };
        let r = SubscribeRequest {
            topic_arn: Some(r.topic_arn.clone()),
            protocol: Some("sqs".into()),
            endpoint: Some(arn(queue)),
            ..Default::default()
        };
        self.sns(SnsRequest::Subscribe(r.clone())).await;
        r.topic_arn.unwrap()
    }

    async fn publish(&self, topic: &str, body: &str, fifo: Option<(&str, &str)>) {
        let r = PublishRequest {
            topic_arn: Some(topic.into()),
            message: Some(body.into()),
            message_group_id: fifo.map(|f| f.0.to_string()),
            message_deduplication_id: fifo.map(|f| f.1.to_string()),
            ..Default::default()
        };
        self.sns(SnsRequest::Publish(r)).await;
    }
}

/// Carries every outbound record `from` emitted into `to`.
fn carry(from: &Side, to: &Side) -> Vec<(Outbound, Accepted)> {
    from.carrier
        .take_rows()
        .into_iter()
        .map(|o| {
            let accepted = to.engine.accept_inbound(o.clone()).unwrap();
            (o, accepted)
        })
        .collect()
}

/// `src` (on `a`, maxReceiveCount 1) dead-letters one message into `dlq`
/// (on `b`, or on `a` itself when they are the same side). Returns the
/// source's and the dead-letter queue's URLs and the message id.
async fn dead_letter_one(a: &Side, b: &Side) -> (String, String, Uuid) {
    let dlq = b.create("dlq", &[]).await;
    let policy = format!(
        r#"{{"deadLetterTargetArn":"{}","maxReceiveCount":1}}"#,
        arn("dlq")
    );
    let src = a
        .create(
            "src",
            &[("VisibilityTimeout", "30"), ("RedrivePolicy", &policy)],
        )
        .await;
    let id = a.send(&src, "poison").await;
    assert_eq!(a.receive(&src).await.len(), 1);
    (src, dlq, id)
}

fn advance(clock: &ManualClock, secs: u64) {
    clock.advance(Duration::from_secs(secs));
}

#[tokio::test]
async fn a_dead_lettered_message_reaches_the_other_engine_as_a_local_move_puts_it() {
    let clock = clock();
    let (a, b) = pair(&clock);
    // The same steps within one engine, for what the target must hold.
    let twin = side(&clock);
    let (src, dlq, id) = dead_letter_one(&a, &b).await;
    let (twin_src, twin_dlq, _) = dead_letter_one(&twin, &twin).await;
    advance(&clock, 30);
    assert!(
        a.receive(&src).await.is_empty(),
        "the second receive moves it"
    );
    assert!(twin.receive(&twin_src).await.is_empty());
    assert_eq!(a.count(&src).await, "0");
    assert_eq!(b.count(&dlq).await, "0", "not there until carried");

    let carried = carry(&a, &b);
    assert_eq!(carried.len(), 1);
    let (outbound, accepted) = &carried[0];
    // Out of the source and into the outbox: one change for a journal.
    let is_outbound = |s: &Seen| matches!(s, Seen::Outbound(o) if *o == outbound.id);
    assert!(a
        .carrier
        .grouped(&is_outbound, Transition::MovedToDeadLetterQueue));
    assert_eq!(outbound.target_arn, arn("dlq"));
    assert_eq!(*accepted, Accepted::Stored { message_id: id });
    let was_accepted = |s: &Seen| matches!(s, Seen::Accepted(o) if *o == outbound.id);
    assert!(b
        .carrier
        .grouped(&was_accepted, Transition::ArrivedFromSource));

    // Offered again (a retry before the first commit was known): once.
    let again = b.engine.accept_inbound(outbound.clone()).unwrap();
    assert_eq!(again, Accepted::AlreadyAccepted);
    assert_eq!(b.count(&dlq).await, "1");

    let there = b.receive(&dlq).await;
    let local = twin.receive(&twin_dlq).await;
    assert_eq!(there.len(), 1);
    assert_eq!(there[0].message_id, id.to_string());
    assert_eq!(there[0].body, local[0].body);
    assert_eq!(there[0].md5_of_body, local[0].md5_of_body);
    assert_eq!(there[0].message_attributes, local[0].message_attributes);
    assert_eq!(there[0].attributes, local[0].attributes);
    assert_eq!(there[0].attributes["DeadLetterQueueSourceArn"], arn("src"));
    assert_eq!(there[0].attributes["ApproximateReceiveCount"], "2");
}

#[tokio::test]
async fn a_fifo_dead_letter_queue_elsewhere_gives_its_own_sequence_number() {
    let clock = clock();
    let (a, b) = pair(&clock);
    let fifo = [("FifoQueue", "true"), ("ContentBasedDeduplication", "true")];
    let dlq = b.create("dlq.fifo", &fifo).await;
    let policy = format!(
        r#"{{"deadLetterTargetArn":"{}","maxReceiveCount":1}}"#,
        arn("dlq.fifo")
    );
    let mut attrs = fifo.to_vec();
    attrs.push(("RedrivePolicy", &policy));
    let src = a.create("src.fifo", &attrs).await;
    let r = SendMessageRequest {
        queue_url: Some(src.clone()),
        message_body: Some("x".into()),
        message_group_id: Some("g".into()),
        ..Default::default()
    };
    let Response::SendMessage(sent) = a.run(Request::SendMessage(r)).await.unwrap() else {
        unreachable!()
    };
    assert_eq!(a.receive(&src).await.len(), 1);
    advance(&clock, 30);
    assert!(a.receive(&src).await.is_empty());
    advance(&clock, 1);
    carry(&a, &b);
    let m = b.receive(&dlq).await;
    assert_eq!(m[0].message_id, sent.message_id.to_string());
    assert_eq!(m[0].attributes["MessageGroupId"], "g");
    let seq = &m[0].attributes["SequenceNumber"];
    assert!(seq.as_str() > sent.sequence_number.as_deref().unwrap());
}

#[tokio::test]
async fn a_move_task_returns_messages_to_their_source_in_the_other_engine() {
    let clock = clock();
    let (a, b) = pair(&clock);
    let (src, dlq, id) = dead_letter_one(&a, &b).await;
    advance(&clock, 30);
    a.receive(&src).await;
    carry(&a, &b);
    assert_eq!(b.count(&dlq).await, "1");

    // b knows its queue is a's dead-letter queue only through Elsewhere.
    let r = StartMessageMoveTaskRequest {
        source_arn: Some(arn("dlq")),
        ..Default::default()
    };
    b.run(Request::StartMessageMoveTask(r)).await.unwrap();
    b.engine.run_move_tasks();
    let is_outbound = |s: &Seen| matches!(s, Seen::Outbound(_));
    assert!(b.carrier.grouped(&is_outbound, Transition::MovedByTask));
    assert_eq!(b.count(&dlq).await, "0");
    let carried = carry(&b, &a);
    assert_eq!(carried.len(), 1);
    assert_eq!(carried[0].0.target_arn, arn("src"));

    let back = a.receive(&src).await;
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].body, "poison");
    assert_ne!(
        back[0].message_id,
        id.to_string(),
        "a move makes a new message"
    );
    assert_eq!(back[0].attributes["ApproximateReceiveCount"], "1");
    assert!(!back[0].attributes.contains_key("DeadLetterQueueSourceArn"));
    b.engine.run_move_tasks();
    let tasks = b.engine.tasks.lock();
    let task = &tasks[&arn("dlq")][0];
    assert_eq!((task.status, task.moved), (redrive::Status::Completed, 1));
}

/// A step asks for each destination once, not once per message: asking
/// the cluster waits on its database while the step holds the tasks.
#[tokio::test]
async fn a_move_task_asks_for_its_destination_in_the_other_engine_once_a_step() {
    let clock = clock();
    let (a, b) = pair(&clock);
    let (src, dlq, _) = dead_letter_one(&a, &b).await;
    for i in 0..20 {
        b.send(&dlq, &format!("m{i}")).await;
    }
    let r = StartMessageMoveTaskRequest {
        source_arn: Some(arn("dlq")),
        destination_arn: Some(arn("src")),
        ..Default::default()
    };
    b.run(Request::StartMessageMoveTask(r)).await.unwrap();
    let asked = |side: &Side| side.other.2.load(std::sync::atomic::Ordering::Relaxed);
    let before = asked(&b);
    b.engine.run_move_tasks();
    assert_eq!(asked(&b) - before, 1);
    assert_eq!(carry(&b, &a).len(), 20);
    assert_eq!(a.count(&src).await, "20");
}

#[tokio::test]
async fn a_restore_puts_the_message_back_in_its_source_in_the_other_engine() {
    let clock = clock();
    let (a, b) = pair(&clock);
    let (src, _dlq, id) = dead_letter_one(&a, &b).await;
    advance(&clock, 30);
    a.receive(&src).await;
    carry(&a, &b);
    let dlq_key = QueueKey::from_arn(&arn("dlq")).unwrap();
    let restored = b
        .engine
        .restore(&b.ctx, &dlq_key, &id.to_string(), None)
        .unwrap();
    assert_eq!(restored.queue.name, "src");
    let is_outbound = |s: &Seen| matches!(s, Seen::Outbound(_));
    assert!(b.carrier.grouped(&is_outbound, Transition::RestoredOut));
    carry(&b, &a);
    let back = a.receive(&src).await;
    assert_eq!(back[0].message_id, id.to_string(), "a restore keeps the id");
    assert_eq!(back[0].attributes["ApproximateReceiveCount"], "1");
    assert!(!back[0].attributes.contains_key("DeadLetterQueueSourceArn"));
}

#[tokio::test]
async fn a_topic_delivers_into_queues_of_the_other_engine() {
    let clock = clock();
    let (a, b) = pair(&clock);
    let q = b.create("q", &[]).await;
    let topic = a.topic("t", false, "q").await;
    a.publish(&topic, "hello", None).await;
    assert_eq!(b.count(&q).await, "0");
    let steps = a.carrier.topic_steps();
    let delivered = steps
        .iter()
        .find(|s| s.kind == TopicEventKind::Delivered)
        .expect("a delivered step");
    assert_eq!(
        delivered.reason.as_deref(),
        Some("handed to the engine that holds the queue")
    );
    let carried = carry(&a, &b);
    assert_eq!(carried.len(), 1);
    let made = delivered.delivered_as.unwrap();
    assert_eq!(carried[0].1, Accepted::Stored { message_id: made });
    let m = b.receive(&q).await;
    assert_eq!(m[0].message_id, made.to_string());
    let envelope: serde_json::Value = serde_json::from_str(&m[0].body).unwrap();
    assert_eq!(envelope["Message"], "hello");
    assert_eq!(envelope["TopicArn"], topic.as_str());
}

/// A queue made a moment ago in the other engine, whose maker has been
/// answered, gets the next publish even before this engine's last read of
/// the other's queues has seen it.
#[tokio::test]
async fn a_publish_reaches_a_queue_the_last_read_has_not_seen_yet() {
    let clock = clock();
    let (a, b) = pair(&clock);
    let topic = a.topic("t", false, "late").await;
    a.publish(&topic, "before", None).await;
    assert!(
        carry(&a, &b).is_empty(),
        "no queue yet: nothing handed over"
    );
    a.other.fall_behind();
    let q = b.create("late", &[]).await;
    a.publish(&topic, "after", None).await;
    let carried = carry(&a, &b);
    assert_eq!(carried.len(), 1);
    let m = b.receive(&q).await;
    assert_eq!(m.len(), 1);
    let envelope: serde_json::Value = serde_json::from_str(&m[0].body).unwrap();
    assert_eq!(envelope["Message"], "after");
}

#[tokio::test]
async fn a_fifo_topic_delivers_into_a_fifo_queue_of_the_other_engine_once_per_dedup_id() {
    let clock = clock();
    let (a, b) = pair(&clock);
    let q = b.create("q.fifo", &[("FifoQueue", "true")]).await;
    let topic = a.topic("t.fifo", true, "q.fifo").await;
    a.publish(&topic, "one", Some(("g", "d1"))).await;
    a.publish(&topic, "one", Some(("g", "d1"))).await;
    let carried = carry(&a, &b);
    assert_eq!(carried.len(), 1, "the topic's window drops the second");
    let OutboundItem::Delivery(delivery) = &carried[0].0.item else {
        panic!("a delivery")
    };
    assert_eq!(delivery.dedup_id.as_deref(), Some("d1"));
    let Accepted::Stored { message_id: first } = carried[0].1 else {
        panic!("stored")
    };
    // Another hand-over of the same delivery (say, published through a
    // second engine): the queue's own window recognises it.
    let mut other = carried[0].0.clone();
    other.id = Uuid::new_v4();
    if let OutboundItem::Delivery(d) = &mut other.item {
        d.message_id = Some(Uuid::new_v4());
    }
    let second = b.engine.accept_inbound(other).unwrap();
    assert_eq!(second, Accepted::Stored { message_id: first });
    assert_eq!(b.count(&q).await, "1");
    let m = b.receive(&q).await;
    assert_eq!(m[0].message_id, first.to_string());
    assert_eq!(m[0].attributes["MessageGroupId"], "g");
    assert_eq!(m[0].attributes["MessageDeduplicationId"], "d1");
}

#[tokio::test]
async fn redrive_policy_checks_read_the_queue_in_the_other_engine() {
    let clock = clock();
    let (a, b) = pair(&clock);
    let twin = side(&clock);
    let allow =
        |arns: &str| format!(r#"{{"redrivePermission":"byQueue","sourceQueueArns":[{arns}]}}"#);
    let deny = r#"{"redrivePermission":"denyAll"}"#;
    let only_chosen = allow(&format!("\"{}\"", arn("chosen")));
    for side in [&b, &twin] {
        side.create("std", &[]).await;
        side.create("dlq.fifo", &[("FifoQueue", "true")]).await;
        side.create("closed", &[("RedriveAllowPolicy", deny)]).await;
        side.create("picky", &[("RedriveAllowPolicy", &only_chosen)])
            .await;
    }
    let policy = |target: &str| {
        format!(
            r#"{{"deadLetterTargetArn":"{}","maxReceiveCount":3}}"#,
            arn(target)
        )
    };
    for (name, target) in [
        ("x1", "missing"),
        ("x2", "dlq.fifo"),
        ("x3", "closed"),
        ("x4", "picky"),
    ] {
        let attrs = [("RedrivePolicy", policy(target))];
        let attrs: Vec<(&str, &str)> = attrs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let there = a.try_create(name, &attrs).await.unwrap_err();
        let local = twin.try_create(name, &attrs).await.unwrap_err();
        assert_eq!(
            (there.code, &there.message),
            (local.code, &local.message),
            "{target}"
        );
    }
    let missing = a
        .try_create("x5", &[("RedrivePolicy", &policy("missing"))])
        .await
        .unwrap_err();
    assert!(missing
        .message
        .contains("Dead letter target does not exist."));
    a.create("chosen", &[("RedrivePolicy", &policy("picky"))])
        .await;
    a.create("plain", &[("RedrivePolicy", &policy("std"))])
        .await;
}

#[tokio::test]
async fn without_elsewhere_a_queue_of_another_engine_does_not_exist() {
    let clock = clock();
    let a = side(&clock);
    let b = side(&clock);
    // With an Elsewhere but nobody to carry a record: the same.
    let unheard = Engine::new(Arc::new(clock.clone()), EngineConfig::default());
    let other = Arc::new(Other::default());
    let _ = other.0.set(Arc::downgrade(&b.engine));
    unheard.set_elsewhere(other);
    b.create("dlq", &[]).await;
    let q = b.create("q", &[]).await;
    let policy = format!(
        r#"{{"deadLetterTargetArn":"{}","maxReceiveCount":1}}"#,
        arn("dlq")
    );
    let e = a
        .try_create("src", &[("RedrivePolicy", &policy)])
        .await
        .unwrap_err();
    assert!(e.message.contains("Dead letter target does not exist."));
    let r = CreateQueueRequest {
        queue_name: Some("src".into()),
        attributes: [("RedrivePolicy".to_string(), policy.clone())].into(),
        tags: BTreeMap::new(),
    };
    let e = unheard
        .handle(&a.ctx, Request::CreateQueue(r))
        .await
        .unwrap_err();
    assert!(e.message.contains("Dead letter target does not exist."));

    let topic = a.topic("t", false, "q").await;
    a.publish(&topic, "hello", None).await;
    let steps = a.carrier.topic_steps();
    assert!(steps
        .iter()
        .any(|s| s.kind == TopicEventKind::DeliveryFailed));
    assert!(a.carrier.take_rows().is_empty());
    assert_eq!(b.count(&q).await, "0");
}

#[tokio::test]
async fn a_record_the_target_refuses_changes_nothing_and_may_be_offered_again() {
    let clock = clock();
    let (a, b) = pair(&clock);
    let (src, dlq, id) = dead_letter_one(&a, &b).await;
    advance(&clock, 30);
    a.receive(&src).await;
    let rows = a.carrier.take_rows();
    let delete = DeleteQueueRequest {
        queue_url: Some(dlq.clone()),
    };
    b.run(Request::DeleteQueue(delete)).await.unwrap();
    let e = b.engine.accept_inbound(rows[0].clone()).unwrap_err();
    assert_eq!(e.code, crate::error::ErrorCode::QueueDoesNotExist);
    assert!(!b
        .carrier
        .log
        .lock()
        .unwrap()
        .iter()
        .any(|s| matches!(s, Seen::Accepted(_))));
    let dlq = b.create("dlq", &[]).await;
    let again = b.engine.accept_inbound(rows[0].clone()).unwrap();
    assert_eq!(again, Accepted::Stored { message_id: id });
    assert_eq!(b.count(&dlq).await, "1");
}
