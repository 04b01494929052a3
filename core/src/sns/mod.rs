//! Amazon SNS beside SQS on the same core: topics, subscriptions, and
//! publishing that delivers into Retsu's own queues through the store's
//! one transition point.

pub mod api;
pub mod error;
