//! One unit per SQS action (or tight family): its behaviour and the facts
//! the layers around the engine ask about it.
//!
//! Each request type implements [`Unit`]: how the action runs, whether it
//! only reads, whether it changes queue-level state, how it names its
//! queues. The dispatch and the facts of [`Request`] are made below from
//! the one list of actions in `api` (`sqs_actions!`), so no other place
//! matches on actions: adding one is its api types, its wire entry and its
//! file here (see ARCHITECTURE.md).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use base64::Engine as _;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use uuid::Uuid;

// What the units share with the rest of the engine.
use super::attributes::{self, QueueSettings};
use super::checksum::{hex, md5_bytes, md5_of_attribute_map, md5_of_attributes};
use super::events::Wakes;
use super::messages::{batch_error, expired_handle, forget_attempts_with, receipt_for};
use super::persist;
use super::queue::{Attempt, DedupEntry, Queue, QueueState, DEDUP_WINDOW_MS};
use super::queues::{max_results, page_token, paginate, parse_page_token, RECENT_MS};
use super::receipt::Receipt;
use super::redrive::{arn_format_error, bad_task_handle, not_found, Status, Task, HISTORY};
use super::store::{OptionalFields, State, StoredMessage, Transition};
use super::validate::{self, check_range};
use super::{id_text, Engine, OutboundItem, QueueKey};
use crate::api::{Action, Request, RequestContext, Response};
use crate::error::{ErrorCode, SqsError};

mod create_queue;
mod dead_letter_sources;
mod delete_message;
mod delete_queue;
mod get_queue_url;
mod list_queues;
mod move_tasks;
mod permissions;
mod purge_queue;
mod queue_attributes;
mod receive;
mod send;

pub use create_queue::valid_queue_name;
pub use move_tasks::task_handle_parts;
pub use send::TopicDelivery;
mod tags;
mod visibility;

/// A queue a request names: as the caller wrote it (URL, name or ARN), its
/// key, and the action to check on it.
pub type NamedQueue = (String, QueueKey, Action);

/// How a queue's policy can grant an action to another account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// AddPermission can name it.
    Grantable,
    /// Only the queue's owner may call it; AddPermission refuses it.
    OwnerOnly,
    /// Granted with another action (a batch, with its one-message action).
    With(Action),
}

/// One action's behaviour and facts. The defaults fit the common case: an
/// action that changes messages of the one queue its `QueueUrl` names.
pub trait Unit: Sized {
    type Response;

    /// Only reads: still served while the data directory cannot be written.
    const READ_ONLY: bool = false;
    /// Can change queue-level state (the queue set, attributes, tags,
    /// policies, move tasks), which the journal then records whole.
    const CHANGES_QUEUES: bool = false;
    /// Names its queue by `QueueUrl`, which query clients may instead give
    /// as the request path.
    const BY_QUEUE_URL: bool = true;
    /// How a policy can grant it to other accounts.
    const GRANT: Grant = Grant::Grantable;

    /// The `QueueUrl` it names, for `BY_QUEUE_URL` actions.
    fn queue_url(&self) -> Option<&str> {
        None
    }

    /// The queues it names, for authorization, each with the action
    /// checked on it (`action`: this one).
    fn named_queues(&self, ctx: &RequestContext, action: Action) -> Vec<NamedQueue> {
        self.queue_url()
            .and_then(|u| QueueKey::from_url(u, ctx).map(|k| (u.to_string(), k, action)))
            .into_iter()
            .collect()
    }

    /// The queue that seeded faults scoped to a queue apply to.
    fn fault_queue(&self, ctx: &RequestContext) -> Option<QueueKey> {
        QueueKey::from_url(self.queue_url()?, ctx)
    }

    /// Runs the action. Only ReceiveMessage waits (long polling).
    fn run(
        self,
        engine: &Engine,
        ctx: &RequestContext,
    ) -> impl Future<Output = Result<Self::Response, SqsError>> + Send;
}

/// `Unit::queue_url` for a request whose `QueueUrl` member names its queue.
macro_rules! queue_url_field {
    () => {
        fn queue_url(&self) -> Option<&str> {
            self.queue_url.as_deref()
        }
    };
}
use queue_url_field;

/// A queue named by ARN, with the action checked on it.
fn by_arn(arn: Option<&str>, action: Action) -> Option<NamedQueue> {
    arn.and_then(|a| QueueKey::from_arn(a).map(|k| (a.to_string(), k, action)))
}

macro_rules! units {
    ($($name:ident => $req:ident, $resp:ident;)*) => {
        use crate::api::*;

        impl Request {
            /// Runs the request's action.
            pub(super) async fn run(
                self,
                engine: &Engine,
                ctx: &RequestContext,
            ) -> Result<Response, SqsError> {
                Ok(match self {
                    $(Request::$name(r) => Response::$name(Unit::run(r, engine, ctx).await?),)*
                })
            }

            /// Whether the action only reads.
            pub fn read_only(&self) -> bool {
                match self { $(Request::$name(_) => <$req as Unit>::READ_ONLY,)* }
            }

            /// Whether the action can change queue-level state.
            pub fn changes_queues(&self) -> bool {
                match self { $(Request::$name(_) => <$req as Unit>::CHANGES_QUEUES,)* }
            }

            /// The queues the request names, for authorization.
            pub fn named_queues(&self, ctx: &RequestContext) -> Vec<NamedQueue> {
                match self {
                    $(Request::$name(r) => r.named_queues(ctx, Action::$name),)*
                }
            }

            /// The queue that seeded faults scoped to a queue apply to.
            pub fn fault_queue(&self, ctx: &RequestContext) -> Option<QueueKey> {
                match self { $(Request::$name(r) => r.fault_queue(ctx),)* }
            }
        }

        impl Action {
            /// Whether the action names its queue by `QueueUrl`.
            pub fn by_queue_url(self) -> bool {
                match self { $(Action::$name => <$req as Unit>::BY_QUEUE_URL,)* }
            }

            /// How a policy can grant the action to other accounts.
            pub fn grant(self) -> Grant {
                match self { $(Action::$name => <$req as Unit>::GRANT,)* }
            }
        }
    };
}

crate::api::sqs_actions!(units);
