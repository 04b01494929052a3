//! The last fan-out steps of each SNS topic (deliveries, and why a message
//! was filtered out) for the console's topics screen. An observer of the
//! event stream like history: a publish pays for it only the stream's
//! call, and it sees the steps numbered as the stream does.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use crate::engine::events::{Event, Subscriber, TopicEvent};

/// Steps kept per topic.
const KEPT: usize = 100;

#[derive(Default)]
pub struct TopicSteps {
    by_topic: Mutex<FxHashMap<Arc<str>, VecDeque<TopicEvent>>>,
}

impl TopicSteps {
    fn lock(&self) -> std::sync::MutexGuard<'_, FxHashMap<Arc<str>, VecDeque<TopicEvent>>> {
        self.by_topic.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `topic_arn`'s kept steps, newest first.
    pub fn recent(&self, topic_arn: &str) -> Vec<TopicEvent> {
        self.lock()
            .get(topic_arn)
            .map(|steps| steps.iter().rev().cloned().collect())
            .unwrap_or_default()
    }

    /// Forgets the topics `live` no longer names (deleted ones).
    pub fn retain(&self, live: impl Fn(&str) -> bool) {
        self.lock().retain(|arn, _| live(arn));
    }
}

impl Subscriber for TopicSteps {
    fn publish(&self, _events: &[Event]) {}

    fn topic_events(&self, events: &[TopicEvent]) {
        let mut by_topic = self.lock();
        for e in events {
            let steps = match by_topic.get_mut(&e.topic_arn) {
                Some(steps) => steps,
                None => by_topic.entry(e.topic_arn.clone()).or_default(),
            };
            if steps.len() == KEPT {
                steps.pop_front();
            }
            steps.push_back(e.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::events::TopicEventKind;

    fn step(topic: &str, seq: u64) -> TopicEvent {
        TopicEvent {
            seq,
            at_ms: 0,
            topic_arn: topic.into(),
            message_id: "m".into(),
            kind: TopicEventKind::Delivered,
            subscription_arn: None,
            endpoint: None,
            protocol: None,
            delivered_as: None,
            reason: None,
        }
    }

    #[test]
    fn keeps_the_last_steps_per_topic_newest_first() {
        let steps = TopicSteps::default();
        let events: Vec<TopicEvent> = (1..=150).map(|i| step("a", i)).collect();
        steps.topic_events(&events);
        steps.topic_events(&[step("b", 151)]);
        let a = steps.recent("a");
        assert_eq!(a.len(), KEPT);
        assert_eq!(a[0].seq, 150);
        assert_eq!(a[KEPT - 1].seq, 51);
        assert_eq!(steps.recent("b").len(), 1);
        steps.retain(|arn| arn == "b");
        assert!(steps.recent("a").is_empty());
        assert_eq!(steps.recent("b")[0].seq, 151);
    }
}
