//! What Retsu saw of each Lambda invocation, from a mapping or an SNS
//! subscription: the recent ones (a bounded window the admin API and the
//! console read, newest last) and the counters `/metrics` shows.
//!
//! Why beside the engine's event bus rather than on it: an invocation is
//! not a change of any message; the messages it touched keep their own
//! events (received, deleted, returned, dead-lettered), and an SNS
//! subscription's invocation also shows as its fan-out steps. Each
//! invocation is also handed to the live event stream as it ends, and a
//! message's history lists those that carried it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;

use crate::event_stream::EventStream;
use crate::metrics::{InvocationCounts, InvocationLabels};

/// Invocations kept for the admin API and the console.
const RECENT: usize = 200;

/// What invoked the function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Mapping,
    Subscription,
}

/// One invocation as the admin API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct InvocationRecord {
    /// When it started (ms of the engine's clock).
    pub at_ms: u64,
    pub source: Source,
    /// The mapping's UUID or the subscription's ARN.
    pub source_id: String,
    /// The queue a mapping reads, or the topic of a subscription.
    pub from: String,
    pub function: String,
    pub request_id: String,
    /// Records in the event.
    pub batch: usize,
    /// Real time the function took.
    pub duration_ms: u64,
    /// `ok`, `partial` (some records reported failed) or `failed`.
    pub result: &'static str,
    /// Why the invocation failed.
    pub error: Option<String>,
    /// The message ids a partial batch response reported failed.
    pub failed_items: Vec<String>,
    /// The ids of the event's messages: SQS message ids for a mapping
    /// (a message moved to its dead-letter queue keeps its id, so its
    /// invocations say why it got there), the SNS message id for a
    /// subscription.
    pub messages: Vec<String>,
    /// For a subscription: which attempt of the asynchronous invocation
    /// (1 to 3).
    pub attempt: Option<u32>,
}

/// The invocation log.
#[derive(Default)]
pub struct Invocations {
    recent: Mutex<VecDeque<InvocationRecord>>,
    counters: OnceLock<(InvocationCounts, InvocationCounts)>,
    /// The live event stream, which shows each invocation as it ends.
    stream: OnceLock<Arc<EventStream>>,
}

impl Invocations {
    /// Counts into `/metrics`' families from now on (set once, at start).
    pub fn count_into(&self, counters: (InvocationCounts, InvocationCounts)) {
        let _ = self.counters.set(counters);
    }

    /// Shows each invocation on the live event stream from now on (set
    /// once, at start, when the admin API is served).
    pub fn stream_into(&self, stream: Arc<EventStream>) {
        let _ = self.stream.set(stream);
    }

    pub fn record(&self, record: InvocationRecord) {
        if let Some(stream) = self.stream.get() {
            stream.invocation(&Arc::new(record.clone()));
        }
        if let Some((invocations, failed_items)) = self.counters.get() {
            let labels = |result| InvocationLabels {
                function: record.function.clone(),
                source: record.source_id.clone(),
                result,
            };
            invocations.get_or_create(&labels(record.result)).inc();
            if !record.failed_items.is_empty() {
                failed_items
                    .get_or_create(&labels("failed"))
                    .inc_by(record.failed_items.len() as u64);
            }
        }
        let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        if recent.len() == RECENT {
            recent.pop_front();
        }
        recent.push_back(record);
    }

    /// The recent invocations, oldest first; only `source_id`'s, and
    /// only those whose event held `message`, when given.
    pub fn recent(&self, source_id: Option<&str>, message: Option<&str>) -> Vec<InvocationRecord> {
        let recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        recent
            .iter()
            .filter(|r| source_id.is_none_or(|id| r.source_id == id))
            .filter(|r| message.is_none_or(|m| r.messages.iter().any(|id| id == m)))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(source_id: &str, result: &'static str, failed: &[&str]) -> InvocationRecord {
        InvocationRecord {
            at_ms: 0,
            source: Source::Mapping,
            source_id: source_id.into(),
            from: "q".into(),
            function: "f".into(),
            request_id: "r".into(),
            batch: 3,
            duration_ms: 1,
            result,
            error: None,
            failed_items: failed.iter().map(|s| s.to_string()).collect(),
            messages: vec!["m1".into(), "m2".into(), "m3".into()],
            attempt: None,
        }
    }

    #[test]
    fn counts_and_keeps_a_bounded_window() {
        let log = Invocations::default();
        let counters = (InvocationCounts::default(), InvocationCounts::default());
        log.count_into(counters.clone());
        for _ in 0..RECENT {
            log.record(record("a", "ok", &[]));
        }
        log.record(record("b", "partial", &["m1", "m2"]));
        assert_eq!(log.recent(None, None).len(), RECENT);
        assert_eq!(log.recent(Some("b"), None).len(), 1);
        assert_eq!(log.recent(Some("b"), Some("m2")).len(), 1);
        assert!(log.recent(None, Some("m4")).is_empty());
        let labels = |source: &str, result| InvocationLabels {
            function: "f".into(),
            source: source.into(),
            result,
        };
        assert_eq!(
            counters.0.get_or_create(&labels("a", "ok")).get(),
            RECENT as u64
        );
        assert_eq!(counters.1.get_or_create(&labels("b", "failed")).get(), 2);
    }
}
