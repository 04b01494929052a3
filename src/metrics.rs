//! Prometheus metrics (`GET /metrics`, OpenMetrics text through the
//! `prometheus-client` crate).
//!
//! - Per queue, read from the engine at scrape time: messages available,
//!   in flight and delayed, and the age of the oldest message (the
//!   `ApproximateAgeOfOldestMessage` alarm the SQS material calls
//!   essential).
//! - Per queue, counted from the engine's event stream: messages sent,
//!   received, deleted, expired, dead-lettered, purged and moved, and every
//!   transition by kind.
//! - Per SNS topic, counted from the fan-out events: messages published,
//!   delivered, filtered out, failed and dead-lettered.
//! - SQS requests by action and outcome (`ok` or the error code), and a
//!   latency histogram per action, counted by the HTTP layer.
//!
//! - On a cluster node, every series carries `node="<id>"`: each node
//!   shows what it owns.
//!
//! The hot path only bumps plain counters under one short lock (events are
//! keyed by their queue's shared key, so no label is built per event);
//! the label sets and the exposition are built when someone scrapes.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use rustc_hash::FxHashMap;

use crate::api::{Action, RequestContext};
use crate::engine::events::{Event, Subscriber, TopicEvent, TopicEventKind};
use crate::engine::{Engine, QueueKey, Transition};

/// The content type of the exposition.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

const KINDS: usize = Transition::ALL.len();

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    region: String,
    account: String,
    queue: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    region: String,
    account: String,
    queue: String,
    state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    region: String,
    account: String,
    queue: String,
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TopicLabels {
    topic: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    action: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ActionLabels {
    action: &'static str,
}

type LatencyFamily = Family<ActionLabels, Histogram, fn() -> Histogram>;

/// One Lambda invocation's labels: the function, what invoked it (a
/// mapping's UUID or an SNS subscription's ARN) and how it ended.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct InvocationLabels {
    pub function: String,
    pub source: String,
    pub result: &'static str,
}

/// Lambda invocations by function, source and result, counted by
/// `crate::lambda::observe` and shown on `/metrics`.
pub type InvocationCounts = Family<InvocationLabels, Counter>;

fn queue_labels(key: &QueueKey) -> QueueLabels {
    QueueLabels {
        region: key.region.clone(),
        account: key.account.clone(),
        queue: key.name.clone(),
    }
}

/// Counts per queue and transition kind. Keyed by the address of the
/// queue's shared key (kept alive here), so counting hashes a pointer.
type EventCounts = FxHashMap<usize, (Arc<QueueKey>, [u64; KINDS])>;

/// The metrics subscriber and request recorder.
pub struct Metrics {
    events: Mutex<EventCounts>,
    /// Per topic ARN, fan-out steps by kind (`TopicEventKind::ALL` order).
    topics: Mutex<FxHashMap<Arc<str>, [u64; TopicEventKind::ALL.len()]>>,
    requests: Family<RequestLabels, Counter>,
    latency: LatencyFamily,
    /// Per action (in `Action::ALL` order), the `ok` counter and the
    /// latency histogram, made once: a request bumps them without hashing
    /// labels.
    ok: Vec<Counter>,
    latencies: Vec<Histogram>,
    /// Lambda invocations (see [`InvocationLabels`]) and the records
    /// their partial batch responses reported failed.
    lambda_invocations: InvocationCounts,
    lambda_failed_items: InvocationCounts,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Request latency buckets: 100 µs to ~26 s (long polls last up to 20 s).
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0001, 2.0, 19))
}

impl Metrics {
    pub fn new() -> Metrics {
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = LatencyFamily::new_with_constructor(latency_histogram);
        let ok = Action::ALL
            .iter()
            .map(|a| {
                requests.get_or_create_owned(&RequestLabels {
                    action: a.name(),
                    outcome: "ok",
                })
            })
            .collect();
        let latencies = Action::ALL
            .iter()
            .map(|a| latency.get_or_create_owned(&ActionLabels { action: a.name() }))
            .collect();
        Metrics {
            events: Mutex::new(FxHashMap::default()),
            topics: Mutex::new(FxHashMap::default()),
            requests,
            latency,
            ok,
            latencies,
            lambda_invocations: Family::default(),
            lambda_failed_items: Family::default(),
        }
    }

    /// The Lambda counters, shared with who counts invocations: each
    /// invocation, and each record a partial batch response failed.
    pub fn lambda_counters(&self) -> (InvocationCounts, InvocationCounts) {
        (
            self.lambda_invocations.clone(),
            self.lambda_failed_items.clone(),
        )
    }

    /// Records one SQS request: its action (`None`: it could not be
    /// decoded), its outcome (`None`: success, else the error code) and
    /// how long it took.
    pub fn observe_request(
        &self,
        action: Option<Action>,
        error: Option<&'static str>,
        elapsed: Duration,
    ) {
        let index = action.and_then(|a| Action::ALL.iter().position(|x| *x == a));
        match (index, error) {
            (Some(i), None) => {
                self.ok[i].inc();
            }
            _ => {
                self.requests
                    .get_or_create(&RequestLabels {
                        action: action.map_or("unknown", Action::name),
                        outcome: error.unwrap_or("ok"),
                    })
                    .inc();
            }
        }
        if let Some(i) = index {
            self.latencies[i].observe(elapsed.as_secs_f64());
        }
    }

    /// The exposition: queue gauges read from `engine` now, and the
    /// counters; on a cluster node every series is labelled with its id.
    pub fn render(&self, engine: &Engine, ctx: &RequestContext, node: Option<&str>) -> String {
        let node = node.map(|n| (Cow::Borrowed("node"), Cow::Owned(n.to_string())));
        let mut registry = Registry::with_prefix_and_labels("retsu", node.into_iter());

        let messages = Family::<StateLabels, Gauge>::default();
        let oldest = Family::<QueueLabels, Gauge>::default();
        for q in engine.queue_summaries(ctx) {
            let labels = queue_labels(&q.key);
            for (state, n) in [
                ("available", q.available),
                ("in_flight", q.in_flight),
                ("delayed", q.delayed),
            ] {
                messages
                    .get_or_create(&StateLabels {
                        region: labels.region.clone(),
                        account: labels.account.clone(),
                        queue: labels.queue.clone(),
                        state: state.into(),
                    })
                    .set(n as i64);
            }
            oldest
                .get_or_create(&labels)
                .set(q.oldest_age_seconds.unwrap_or(0) as i64);
        }
        registry.register(
            "queue_messages",
            "Messages stored in a queue, by state (available, in_flight, delayed)",
            messages,
        );
        registry.register(
            "queue_oldest_message_age_seconds",
            "ApproximateAgeOfOldestMessage: seconds since the oldest stored message was enqueued (0 when empty)",
            oldest,
        );

        let named: [(&str, &str, &[Transition]); 7] = [
            (
                "messages_sent",
                "Messages sent to a queue",
                &[Transition::Sent],
            ),
            (
                "messages_received",
                "Message deliveries (receives) from a queue",
                &[Transition::Received],
            ),
            (
                "messages_deleted",
                "Messages deleted with a receipt handle",
                &[Transition::Deleted],
            ),
            (
                "messages_expired",
                "Messages removed by the retention period",
                &[Transition::Expired],
            ),
            (
                "messages_dead_lettered",
                "Messages moved to the queue's dead-letter queue",
                &[Transition::MovedToDeadLetterQueue],
            ),
            (
                "messages_purged",
                "Messages removed by PurgeQueue",
                &[Transition::Purged],
            ),
            (
                "messages_moved",
                "Messages moved out by a message move task",
                &[Transition::MovedByTask],
            ),
        ];
        let by_kind = Family::<KindLabels, Counter>::default();
        let families: Vec<Family<QueueLabels, Counter>> =
            named.iter().map(|_| Family::default()).collect();
        {
            let events = lock(&self.events);
            for (key, counts) in events.values() {
                let labels = queue_labels(key);
                for (family, (_, _, kinds)) in families.iter().zip(&named) {
                    let n: u64 = kinds.iter().map(|k| counts[*k as usize]).sum();
                    family.get_or_create(&labels).inc_by(n);
                }
                for kind in Transition::ALL {
                    let n = counts[*kind as usize];
                    if n > 0 {
                        by_kind
                            .get_or_create(&KindLabels {
                                region: labels.region.clone(),
                                account: labels.account.clone(),
                                queue: labels.queue.clone(),
                                kind: kind.name().into(),
                            })
                            .inc_by(n);
                    }
                }
            }
        }
        for (family, (name, help, _)) in families.into_iter().zip(named) {
            registry.register(name, help, family);
        }
        registry.register(
            "message_transitions",
            "Every message state transition, by kind (the admin API's event kinds)",
            by_kind,
        );

        let fanout = Family::<TopicLabels, Counter>::default();
        for (topic, counts) in lock(&self.topics).iter() {
            for (kind, n) in TopicEventKind::ALL.iter().zip(counts) {
                fanout
                    .get_or_create(&TopicLabels {
                        topic: topic.to_string(),
                        outcome: kind.name(),
                    })
                    .inc_by(*n);
            }
        }
        registry.register(
            "sns_messages",
            "SNS messages per topic: published, and per subscription delivered, filtered_out, delivery_failed, dead_lettered",
            fanout,
        );

        registry.register(
            "sqs_requests",
            "SQS requests by action and outcome (ok, or the error code)",
            self.requests.clone(),
        );
        registry.register(
            "sqs_request_duration_seconds",
            "SQS request latency, from the request's arrival to its answer",
            self.latency.clone(),
        );

        registry.register(
            "lambda_invocations",
            "Lambda invocations by function, source (an event source mapping's UUID or an SNS subscription's ARN) and result (ok, partial, failed)",
            self.lambda_invocations.clone(),
        );
        registry.register(
            "lambda_failed_items",
            "Records a function's partial batch response reported failed, by function and source (result is always failed)",
            self.lambda_failed_items.clone(),
        );

        let mut out = String::new();
        encode(&mut out, &registry).expect("writing to a String cannot fail");
        out
    }
}

impl Subscriber for Metrics {
    fn publish(&self, events: &[Event]) {
        let mut counts = lock(&self.events);
        for e in events {
            let entry = counts
                .entry(Arc::as_ptr(&e.queue) as usize)
                .or_insert_with(|| (e.queue.clone(), [0; KINDS]));
            entry.1[e.kind as usize] += 1;
        }
    }

    fn topic_events(&self, events: &[TopicEvent]) {
        let mut topics = lock(&self.topics);
        for e in events {
            let counts = topics.entry(e.topic_arn.clone()).or_default();
            let i = TopicEventKind::ALL
                .iter()
                .position(|k| *k == e.kind)
                .expect("every kind is listed");
            counts[i] += 1;
        }
    }
}
