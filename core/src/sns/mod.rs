//! Amazon SNS beside SQS on the same core: topics, subscriptions, and a
//! Publish that delivers into Retsu's own queues.
//!
//! - [`api`]: the typed requests and responses, from one list of actions;
//! - [`actions`]: one unit per action or family, as the SQS ones are;
//! - [`model`]: topics and subscriptions and the ARNs naming them;
//! - [`envelope`]: the JSON notification and what of it is signed;
//! - [`payload`]: what the protocols Retsu does not reach would be sent;
//! - [`inbox`]: where those payloads are kept instead of being sent;
//! - [`lambda`]: what the server is handed to invoke a `lambda` subscription;
//! - [`error`]: SNS's error codes and wording.
//!
//! A delivery to a queue is an SQS send through [`Engine::deliver`], the
//! store's one transition point: history, metrics, the journal and
//! waiting long polls see it as they see any send, and a Publish is
//! answered only once its deliveries are as durable as a SendMessage.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::api::RequestContext;

/// The name SNS's state goes by in the engine's queue-level state.
const SERVICE: &str = "sns";
use crate::engine::Engine;

pub mod actions;
pub mod api;
pub mod envelope;
pub mod error;
pub mod http;
pub mod inbox;
pub mod lambda;
pub mod model;
pub mod payload;

use api::{SnsRequest, SnsResponse};
use envelope::Signer;
use error::SnsError;
use model::{PlatformApplication, Topic};

/// The SNS service: its topics, and the engine its queues live in.
pub struct Sns {
    engine: Arc<Engine>,
    signer: Arc<dyn Signer>,
    state: parking_lot::Mutex<State>,
    /// What was sent to endpoints Retsu does not reach (see [`inbox`]);
    /// taken after `state` when both are held.
    inbox: parking_lot::Mutex<inbox::Inbox>,
    /// Makes the POSTs to HTTP subscribers (set by the server).
    http: std::sync::OnceLock<Arc<dyn http::HttpSender>>,
    /// Decides duplicates and delays of deliveries into queues (set by
    /// the server; without it every delivery is made once, at once).
    shaper: std::sync::OnceLock<Arc<dyn DeliveryShaper>>,
    /// Invokes the functions of `lambda` subscriptions (set by the server;
    /// while it has no function they are only recorded).
    lambda: std::sync::OnceLock<Arc<dyn lambda::LambdaInvoker>>,
}

/// What the server may do to one delivery into a standard queue before it
/// is made: real SNS delivers at least once and some milliseconds late,
/// and the server's seeded faults reproduce that on request. The core
/// only carries out the answer; how it is drawn is the server's business.
pub trait DeliveryShaper: Send + Sync {
    /// For one delivery into the standard queue `queue_arn`.
    fn shape(&self, queue_arn: &str) -> DeliveryShape;
}

/// How one delivery is made; the default is once, at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeliveryShape {
    /// Further copies delivered after the first.
    pub duplicates: u32,
    /// How much later than the queue's own delay the message becomes
    /// receivable (ms of the engine's clock).
    pub delay_ms: u64,
}

/// Topics by ARN, and which topic each subscription belongs to.
#[derive(Default)]
pub struct State {
    pub topics: BTreeMap<String, Topic>,
    pub subscription_topics: HashMap<String, String>,
    /// HTTP subscriptions unsubscribed, by the token of their
    /// UnsubscribeConfirmation: confirming it restores them.
    pub unsubscribed: HashMap<String, model::Subscription>,
    /// Platform applications by ARN, their endpoints inside.
    pub applications: BTreeMap<String, PlatformApplication>,
}

/// What the journal keeps of SNS: topics and platform applications.
#[derive(serde::Deserialize)]
struct Saved {
    topics: Vec<Topic>,
    #[serde(default)]
    platform_applications: Vec<PlatformApplication>,
}

impl Saved {
    /// What [`Sns::snapshot`] wrote; older data directories kept the
    /// topics alone, as a list.
    fn read(saved: serde_json::Value) -> Option<Saved> {
        if saved.is_array() {
            let topics = serde_json::from_value(saved).ok()?;
            return Some(Saved {
                topics,
                platform_applications: Vec::new(),
            });
        }
        serde_json::from_value(saved).ok()
    }
}

/// [`Saved`] as written: borrowed, since every change writes it.
#[derive(serde::Serialize)]
struct Saving<'a> {
    topics: Vec<&'a Topic>,
    platform_applications: Vec<&'a PlatformApplication>,
}

impl Sns {
    /// The SNS service of `engine`: its topics ride in the engine's
    /// queue-level state, so a data directory keeps them, and those it
    /// kept are put back here.
    pub fn new(engine: Arc<Engine>, signer: Arc<dyn Signer>) -> Arc<Sns> {
        let sns = Arc::new(Sns {
            engine: engine.clone(),
            signer,
            state: parking_lot::Mutex::new(State::default()),
            inbox: parking_lot::Mutex::new(inbox::Inbox::default()),
            http: std::sync::OnceLock::new(),
            shaper: std::sync::OnceLock::new(),
            lambda: std::sync::OnceLock::new(),
        });
        if let Some(saved) = engine.take_restored_service(SERVICE) {
            sns.restore(saved);
        }
        let weak = Arc::downgrade(&sns);
        engine.register_service(SERVICE, move || weak.upgrade().map(|s| s.snapshot()));
        sns
    }

    /// The topics, subscriptions and platform applications as plain data
    /// (deduplication windows and pending unsubscribe tokens are not kept).
    fn snapshot(&self) -> serde_json::Value {
        let state = self.lock();
        let saved = Saving {
            topics: state.topics.values().collect(),
            platform_applications: state.applications.values().collect(),
        };
        serde_json::to_value(saved).unwrap_or_default()
    }

    /// Puts back what [`snapshot`](Self::snapshot) gave, compiling each
    /// filter policy again.
    fn restore(&self, saved: serde_json::Value) {
        let Some(Saved {
            topics,
            platform_applications,
        }) = Saved::read(saved)
        else {
            tracing::warn!("the saved SNS topics could not be read; starting without them");
            return;
        };
        let mut state = self.lock();
        for app in platform_applications {
            state.applications.insert(app.arn.clone(), app);
        }
        for mut topic in topics {
            for sub in &mut topic.subscriptions {
                sub.recompile();
                state
                    .subscription_topics
                    .insert(sub.arn.clone(), topic.arn.clone());
            }
            state.topics.insert(topic.arn.clone(), topic);
        }
    }

    /// Installs what POSTs to HTTP subscribers (once, before serving).
    pub fn set_http_sender(&self, sender: Arc<dyn http::HttpSender>) {
        let _ = self.http.set(sender);
    }

    /// Installs what invokes `lambda` subscriptions' functions (once,
    /// before serving).
    pub fn set_lambda_invoker(&self, invoker: Arc<dyn lambda::LambdaInvoker>) {
        let _ = self.lambda.set(invoker);
    }

    /// Whether `lambda` subscriptions are invoked rather than recorded.
    pub(crate) fn invokes_lambda(&self) -> bool {
        self.lambda.get().is_some_and(|i| i.has_functions())
    }

    /// Hands one invocation to the server (see [`Sns::invokes_lambda`]).
    pub(crate) fn invoke_lambda(&self, delivery: lambda::LambdaDelivery) {
        if let Some(invoker) = self.lambda.get() {
            invoker.invoke(delivery);
        }
    }

    /// Installs what decides deliveries' duplicates and delays (once,
    /// before serving).
    pub fn set_delivery_shaper(&self, shaper: Arc<dyn DeliveryShaper>) {
        let _ = self.shaper.set(shaper);
    }

    /// How one delivery into the standard queue `queue_arn` is made.
    pub(crate) fn delivery_shape(&self, queue_arn: &str) -> DeliveryShape {
        self.shaper
            .get()
            .map(|s| s.shape(queue_arn))
            .unwrap_or_default()
    }

    /// Hands one POST to the server; without a sender it is dropped.
    pub(crate) fn post(&self, delivery: http::HttpDelivery) {
        if let Some(sender) = self.http.get() {
            sender.send(delivery);
        }
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub fn signer(&self) -> &dyn Signer {
        &*self.signer
    }

    /// Runs one request; with persistence, answers only once the messages
    /// it delivered are on disk.
    pub async fn handle(
        &self,
        ctx: &RequestContext,
        request: SnsRequest,
    ) -> Result<SnsResponse, SnsError> {
        if !request.read_only() {
            if let Some(refusal) = self.engine.storage_refusal() {
                return Err(SnsError::from_store(refusal));
            }
        }
        let changes_state = request.changes_state();
        let result = request.run(self, ctx);
        // A publish that delivered to a queue with a waiting long poll.
        crate::engine::let_woken_polls_run_first().await;
        let durable = if changes_state && result.is_ok() {
            self.engine.service_changed().await
        } else {
            self.engine.persisted(false).await
        };
        durable.map_err(SnsError::from_store)?;
        result
    }

    /// The service's state, under its lock (never held across an await).
    pub(crate) fn lock(&self) -> parking_lot::MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Deletes every topic and subscription (the admin API's reset).
    /// Returns how many topics there were.
    pub fn reset(&self) -> usize {
        let mut state = self.lock();
        let n = state.topics.len();
        *state = State::default();
        self.inbox.lock().clear();
        n
    }

    /// Keeps what would have been sent to an endpoint Retsu does not reach.
    pub(crate) fn record(&self, record: inbox::Record) {
        self.inbox.lock().push(record);
    }

    /// The inbox's records `filter` means, oldest first.
    pub fn inbox(&self, filter: &inbox::Filter<'_>) -> Vec<inbox::Record> {
        self.inbox.lock().read(filter)
    }

    /// The newest `per_topic` inbox records of each topic, newest first.
    pub fn recent_inbox(&self, per_topic: usize) -> HashMap<String, Vec<inbox::Record>> {
        self.inbox.lock().recent_by_topic(per_topic)
    }

    /// Forgets the inbox's records `filter` means; how many there were.
    pub fn clear_inbox(&self, filter: &inbox::Filter<'_>) -> usize {
        self.inbox.lock().delete(filter)
    }

    /// The confirmation token of a subscription, while it has one: what
    /// the confirmation message carried (LocalStack's
    /// `/_aws/sns/subscription-tokens`). `None` when there is no such
    /// subscription or it never needed confirming.
    pub fn subscription_token(&self, subscription_arn: &str) -> Option<Option<String>> {
        let state = self.lock();
        let topic = state.subscription_topics.get(subscription_arn)?;
        let sub = state.topics[topic]
            .subscriptions
            .iter()
            .find(|s| s.arn == subscription_arn)?;
        Some(sub.token.clone())
    }

    /// A read-only view of every platform application, for the admin API.
    pub fn platform_applications(&self) -> Vec<PlatformApplication> {
        self.lock().applications.values().cloned().collect()
    }

    /// A read-only view of every topic, for the admin API and the CLI.
    pub fn topics(&self) -> Vec<Topic> {
        self.lock().topics.values().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_state_reads_in_both_shapes() {
        let topic = Topic::new("us-east-1", "000000000000", "t", false);
        let old = serde_json::to_value(vec![&topic]).unwrap();
        let read = Saved::read(old).unwrap();
        assert_eq!(read.topics[0].arn, topic.arn);
        assert!(read.platform_applications.is_empty());
        let now = serde_json::to_value(Saving {
            topics: vec![&topic],
            platform_applications: Vec::new(),
        })
        .unwrap();
        assert_eq!(Saved::read(now).unwrap().topics.len(), 1);
        assert!(Saved::read(serde_json::json!("junk")).is_none());
    }
}
