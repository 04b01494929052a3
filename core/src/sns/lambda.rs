//! What SNS hands the server to invoke for a `lambda` subscription. The
//! core does no I/O: it builds the event (`payload::lambda_event`) and
//! what the subscription's dead-letter queue would get, and gives both to
//! the [`LambdaInvoker`] the server installs, which invokes the function
//! in the background (an asynchronous invocation: the Publish never waits
//! for it) with Lambda's retries.

use crate::engine::TopicDelivery;

/// One notification for one `lambda` subscription.
#[derive(Debug, Clone)]
pub struct LambdaDelivery {
    /// The subscription's endpoint: the function's ARN (or name).
    pub function: String,
    /// The event the function is invoked with (`Records[].Sns`).
    pub event: String,
    pub subscription_arn: String,
    pub topic_arn: String,
    pub message_id: String,
    /// Where the message goes when every attempt failed: the
    /// subscription's RedrivePolicy queue and what to send it.
    pub dead_letter: Option<(String, TopicDelivery)>,
}

/// Invokes functions (the server's). While the server has no function
/// (none configured, none created), `lambda` subscriptions are only
/// recorded in the inbox.
pub trait LambdaInvoker: Send + Sync {
    /// Whether any function exists now (functions can be created and
    /// deleted while the server runs).
    fn has_functions(&self) -> bool;

    fn invoke(&self, delivery: LambdaDelivery);
}
