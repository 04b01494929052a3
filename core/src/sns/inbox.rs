//! The inboxes: what SNS would have sent to the endpoints Retsu does not
//! reach (an SMS, an e-mail, a mobile push, a Lambda invocation, a
//! Firehose record), kept so a test can read it. Nothing leaves the
//! machine.
//!
//! A structure of the core, not an observer of the event bus, for two
//! reasons. The payload is made where the fan-out is decided, under SNS's
//! lock, from the published message; putting it on the bus would carry
//! every payload through every subscriber (history, metrics, the live
//! stream, the journal) that has no use for it. And a test reads its
//! inbox right after Publish answers: a record written before the answer
//! is there to read, with no subscriber's lag in between.
//!
//! Bounded: past [`KEPT`] records the oldest go. Not persisted: like
//! the history of messages it describes what happened, not state SNS
//! keeps, so a restart starts it empty (the subscriptions, endpoints and
//! confirmation tokens it refers to are persisted).

use std::collections::{BTreeMap, HashMap, VecDeque};

use super::api::MessageAttributeValue;

/// Records kept, all protocols together.
pub const KEPT: usize = 10_000;

/// One message as it would have been sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Increasing, server-wide: the order records were made in.
    pub id: u64,
    /// When (ms of the engine's clock).
    pub at_ms: u64,
    /// `sms`, `email`, `email-json`, `application`, `lambda` or `firehose`.
    pub protocol: &'static str,
    /// The phone number, e-mail address, or the endpoint, function or
    /// delivery stream ARN.
    pub endpoint: String,
    /// The region and account of the publish.
    pub region: String,
    pub account: String,
    /// Through a topic; `None` for a direct Publish.
    pub topic_arn: Option<String>,
    pub subscription_arn: Option<String>,
    pub message_id: String,
    /// The `Message` parameter as published.
    pub message: String,
    pub message_structure: Option<String>,
    pub subject: Option<String>,
    pub attributes: BTreeMap<String, MessageAttributeValue>,
    /// Exactly what AWS would have sent (see [`super::payload`]).
    pub payload: String,
}

/// Which records a reader or a deletion means; every given field must match.
#[derive(Debug, Clone, Default)]
pub struct Filter<'a> {
    pub protocols: &'a [&'a str],
    pub endpoint: Option<&'a str>,
    pub region: Option<&'a str>,
    pub account: Option<&'a str>,
    pub topic_arn: Option<&'a str>,
}

impl Filter<'_> {
    fn matches(&self, r: &Record) -> bool {
        (self.protocols.is_empty() || self.protocols.contains(&r.protocol))
            && self.endpoint.is_none_or(|e| e == r.endpoint)
            && self.region.is_none_or(|g| g == r.region)
            && self.account.is_none_or(|a| a == r.account)
            && self
                .topic_arn
                .is_none_or(|t| r.topic_arn.as_deref() == Some(t))
    }
}

/// The records, oldest first.
#[derive(Debug, Default)]
pub struct Inbox {
    records: VecDeque<Record>,
    next_id: u64,
}

impl Inbox {
    /// Keeps `record` (its id is given here), dropping the oldest past [`KEPT`].
    pub fn push(&mut self, mut record: Record) {
        self.next_id += 1;
        record.id = self.next_id;
        if self.records.len() == KEPT {
            self.records.pop_front();
        }
        self.records.push_back(record);
    }

    /// The records `filter` means, oldest first.
    pub fn read(&self, filter: &Filter<'_>) -> Vec<Record> {
        self.records
            .iter()
            .filter(|r| filter.matches(r))
            .cloned()
            .collect()
    }

    /// The newest `per_topic` records of each topic, newest first: one
    /// pass, copying only what is returned.
    pub fn recent_by_topic(&self, per_topic: usize) -> HashMap<String, Vec<Record>> {
        let mut out: HashMap<String, Vec<Record>> = HashMap::new();
        for r in self.records.iter().rev() {
            let Some(topic) = &r.topic_arn else { continue };
            let kept = out.entry(topic.clone()).or_default();
            if kept.len() < per_topic {
                kept.push(r.clone());
            }
        }
        out
    }

    /// Forgets the records `filter` means; how many there were.
    pub fn delete(&mut self, filter: &Filter<'_>) -> usize {
        let before = self.records.len();
        self.records.retain(|r| !filter.matches(r));
        before - self.records.len()
    }

    pub fn clear(&mut self) {
        self.records.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(protocol: &'static str, endpoint: &str) -> Record {
        Record {
            id: 0,
            at_ms: 0,
            protocol,
            endpoint: endpoint.into(),
            region: "us-east-1".into(),
            account: "000000000000".into(),
            topic_arn: None,
            subscription_arn: None,
            message_id: "m".into(),
            message: "hi".into(),
            message_structure: None,
            subject: None,
            attributes: BTreeMap::new(),
            payload: "hi".into(),
        }
    }

    #[test]
    fn bounded_filtered_and_deleted() {
        let mut inbox = Inbox::default();
        for _ in 0..KEPT + 5 {
            inbox.push(record("sms", "+15550001"));
        }
        inbox.push(record("email", "a@example.com"));
        let all = inbox.read(&Filter::default());
        assert_eq!(all.len(), KEPT);
        assert_eq!(all[0].id, 7, "the oldest went first");
        let email = Filter {
            protocols: &["email", "email-json"],
            ..Filter::default()
        };
        assert_eq!(inbox.read(&email).len(), 1);
        let mut on_topic = record("sms", "+15550002");
        on_topic.topic_arn = Some("t".into());
        inbox.push(on_topic.clone());
        inbox.push(on_topic);
        let recent = inbox.recent_by_topic(1);
        assert_eq!(recent.len(), 1);
        assert_eq!(recent["t"].len(), 1);
        assert_eq!(recent["t"][0].id, KEPT as u64 + 8, "the newest");
        let phone = Filter {
            endpoint: Some("+15550001"),
            ..Filter::default()
        };
        assert_eq!(inbox.delete(&phone), KEPT - 3);
        assert_eq!(inbox.read(&Filter::default()).len(), 3);
        inbox.clear();
        assert!(inbox.read(&Filter::default()).is_empty());
    }
}
