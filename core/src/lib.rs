//! Retsu's core: what an Amazon SQS queue and an SNS topic are and do,
//! with no HTTP, XML, auth, faults, journal or configuration in sight.
//!
//! - [`api`]: the typed requests and responses of every SQS action;
//! - [`engine`]: queues, messages and their state machine; every change of
//!   a message goes through one transition point in the store and is
//!   emitted once on the event bus, which history, metrics, wake-ups, the
//!   journal and the live stream subscribe to;
//! - [`error`]: SQS's errors, their codes and AWS's wording;
//! - [`clock`]: the injected time the engine reads, real or controlled;
//! - [`sns`]: SNS beside SQS on the same engine: topics, subscriptions,
//!   and a Publish that delivers through the store's transition point;
//! - [`filter_policy`]: SNS subscription filter policies, validated and
//!   compiled once, matched against message attributes or a JSON body.
//!
//! The server crate (`retsu`) wraps this one: protocols, admin API, auth,
//! faults and persistence all live there, and this crate cannot import
//! them.

pub mod api;
pub mod arn;
pub mod clock;
pub mod engine;
pub mod error;
pub mod filter_policy;
pub mod sns;
