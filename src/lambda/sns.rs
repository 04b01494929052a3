//! SNS's `lambda` subscriptions, invoked: the core hands each
//! notification over ([`LambdaDelivery`]) and this invokes the function
//! the subscription's endpoint names, in the background, as Lambda runs
//! an asynchronous invocation.
//!
//! - The function is resolved from the endpoint (a name or an ARN, with
//!   or without a qualifier) among the configured functions. One that is
//!   not configured is SNS's client-side error (a deleted function): no
//!   retry, straight to the subscription's dead-letter queue.
//! - A failed invocation (the function's error, a timeout, an unreachable
//!   endpoint) is tried twice more, one minute and then two minutes after
//!   the attempt before failed, on the engine's clock, so a manual clock
//!   decides when retries happen; as Lambda's asynchronous invocations.
//! - After the last failure the message goes to the subscription's
//!   RedrivePolicy queue (the JSON notification, as for any subscription)
//!   with a note in its history that says why, or is dropped with the
//!   reason in the fan-out's steps when there is none.
//! - Every attempt is an invocation in the log (`observe.rs`); every
//!   outcome is a fan-out step (delivered, delivery_failed,
//!   dead_lettered) on the engine's bus: the event stream, history,
//!   metrics and the console's topics screen show it.
//! - Invocations waiting to be retried when the server stops are dropped:
//!   nothing about them is persisted.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use retsu_core::engine::events::{TopicEvent, TopicEventKind};
use retsu_core::sns::lambda::{LambdaDelivery, LambdaInvoker};

use super::function::Invocation;
use super::observe::{InvocationRecord, Source};
use super::Lambda;

/// The waits before Lambda's two retries of an asynchronous invocation.
pub const RETRY_DELAYS_S: [u64; 2] = [60, 120];

/// What `Sns::set_lambda_invoker` gets.
pub struct SnsInvoker {
    lambda: Arc<Lambda>,
}

impl SnsInvoker {
    pub fn new(lambda: Arc<Lambda>) -> SnsInvoker {
        SnsInvoker { lambda }
    }
}

impl LambdaInvoker for SnsInvoker {
    fn has_functions(&self) -> bool {
        self.lambda.has_functions()
    }

    fn invoke(&self, delivery: LambdaDelivery) {
        let lambda = self.lambda.clone();
        self.lambda.runtime.spawn(async move {
            let engine = lambda.engine.clone();
            tokio::select! {
                _ = deliver(&lambda, &delivery) => {}
                _ = engine.until_shutdown() => {}
            }
        });
    }
}

/// A fan-out step of `d`.
fn step(lambda: &Lambda, d: &LambdaDelivery, kind: TopicEventKind, reason: String) -> TopicEvent {
    TopicEvent {
        seq: 0,
        at_ms: lambda.engine.now(),
        topic_arn: d.topic_arn.as_str().into(),
        message_id: d.message_id.as_str().into(),
        kind,
        subscription_arn: Some(d.subscription_arn.as_str().into()),
        endpoint: Some(d.function.as_str().into()),
        protocol: Some("lambda"),
        delivered_as: None,
        reason: (!reason.is_empty()).then_some(reason),
    }
}

/// Every attempt of one notification, then its dead-lettering.
async fn deliver(lambda: &Lambda, d: &LambdaDelivery) {
    let engine = &lambda.engine;
    let function = match lambda.function(&d.function) {
        Ok(f) => f,
        Err(e) => {
            give_up(lambda, d, e.message.to_string());
            return;
        }
    };
    let slots = lambda.functions.slots(&function.name);
    let attempts = RETRY_DELAYS_S.len() + 1;
    let mut last_error = String::new();
    for n in 0..attempts {
        let at_ms = engine.now();
        let request_id = uuid::Uuid::new_v4().to_string();
        // The emulator takes one invocation at a time: wait for the slot
        // mappings' pollers share.
        let permit = match &slots {
            Some(s) => s.clone().acquire_owned().await.ok(),
            None => None,
        };
        let started = Instant::now();
        let outcome = function
            .invoke(Bytes::from(d.event.clone()), &request_id)
            .await;
        drop(permit);
        let error = match outcome {
            Invocation::Returned(_) => None,
            Invocation::Failed(why) => Some(why),
        };
        lambda.invocations.record(InvocationRecord {
            at_ms,
            source: Source::Subscription,
            source_id: d.subscription_arn.clone(),
            from: d.topic_arn.clone(),
            function: function.name.clone(),
            request_id: request_id.clone(),
            batch: 1,
            duration_ms: started.elapsed().as_millis() as u64,
            result: if error.is_none() { "ok" } else { "failed" },
            error: error.clone(),
            failed_items: Vec::new(),
            messages: vec![d.message_id.clone()],
            attempt: Some(n as u32 + 1),
        });
        let Some(why) = error else {
            let done = step(
                lambda,
                d,
                TopicEventKind::Delivered,
                format!("invoked {} (request {request_id})", function.name),
            );
            engine.topic_events(vec![done]);
            return;
        };
        // The retry's time is fixed before the failure is told, so whoever
        // moves the clock once they saw it cannot race this wait.
        let retry_at = RETRY_DELAYS_S
            .get(n)
            .map(|delay_s| engine.now() + delay_s * 1000);
        let then = match RETRY_DELAYS_S.get(n) {
            Some(delay_s) => format!("; retried in {delay_s} s"),
            None => String::new(),
        };
        let failed = step(
            lambda,
            d,
            TopicEventKind::DeliveryFailed,
            format!("invocation {} of {attempts} failed: {why}{then}", n + 1),
        );
        engine.topic_events(vec![failed]);
        last_error = why;
        if let Some(at) = retry_at {
            engine.clock().sleep_until(at).await;
        }
    }
    give_up(
        lambda,
        d,
        format!(
            "function {} failed {attempts} times: {last_error}",
            function.name
        ),
    );
}

/// After the last failure: into the subscription's dead-letter queue, or
/// dropped; either way the step says why.
fn give_up(lambda: &Lambda, d: &LambdaDelivery, why: String) {
    let engine = &lambda.engine;
    let (event, outcome) = match &d.dead_letter {
        Some((dlq, delivery)) => {
            let mut delivery = delivery.clone();
            let note = format!(
                "dead-lettered by subscription {} of topic {}, SNS message {}: {why}",
                d.subscription_arn, d.topic_arn, d.message_id
            );
            delivery.note = Some(note.into());
            let mut e = step(lambda, d, TopicEventKind::DeadLettered, why.clone());
            e.endpoint = Some(dlq.as_str().into());
            let outcome = match engine.deliver(dlq, delivery) {
                Ok(sent) => {
                    e.delivered_as = Some(sent.message_id.0);
                    format!("sent to {dlq}")
                }
                Err(err) => {
                    e.reason = Some(format!(
                        "{why}; the dead-letter queue refused it too: {}",
                        err.message
                    ));
                    format!("not sent to {dlq}: {}", err.message)
                }
            };
            (e, outcome)
        }
        None => {
            let reason = format!("{why}; dropped: the subscription has no dead-letter queue");
            (
                step(lambda, d, TopicEventKind::DeliveryFailed, reason),
                "none".to_string(),
            )
        }
    };
    engine.topic_events(vec![event]);
    tracing::warn!(
        function = %d.function,
        subscription = %d.subscription_arn,
        topic = %d.topic_arn,
        message_id = %d.message_id,
        error = %why,
        dead_letter = %outcome,
        "SNS gave up invoking a Lambda function"
    );
}
