//! The routing key of a request: the one queue, topic or platform
//! application it is about, so that a node's front can pass it to the
//! shard holding that name, or the listing it asks of every shard.
//!
//! The front must send a request to the shard whose engine will resolve
//! the same name from it, so nothing here decides anew: the wire form, the
//! service (SQS, SNS or STS), the region (the SigV4 scope), the base URL
//! a queue-URL path is read against, and the parsing of queue URLs and
//! ARNs are the protocol layer's and the engines' own functions. Only the
//! members that name a resource are read and nothing else is checked:
//! what cannot be read is [`Route::Unknown`], and any shard's engine then
//! answers it with AWS's error, as a single node does.
//!
//! Platform applications (and their endpoints, named inside the
//! application's ARN) are a third kind of name beside queues and topics:
//! an endpoint is only reachable through its application, so the two
//! travel together, and a `Publish` to an endpoint goes where they are.

// Wired into the front by the shards work (issue 34); until then only
// the tests call it.
#![allow(dead_code)]

use std::borrow::Cow;

use axum::http::{HeaderMap, Method};
use serde::Deserialize;

use crate::api::{Action, RequestContext};
use crate::engine::QueueKey;
use crate::protocol::query::{self, Params};
use crate::protocol::{context, json, sns, sts, HttpRequest, Settings, WireForm};
use crate::sns::api::SnsAction;
use crate::sns::model::SnsArn;

/// What kind of name a key is; the placement table's `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Queue,
    Topic,
    /// An SNS platform application, with its endpoints.
    Application,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Queue => "queue",
            Kind::Topic => "topic",
            Kind::Application => "application",
        }
    }
}

/// One name, unique per kind, account and region. `name` is a queue's or
/// topic's name, or an application's `app/<platform>/<name>` (the
/// resource part of its ARN).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    pub kind: Kind,
    pub account: String,
    pub region: String,
    pub name: String,
}

impl Key {
    pub(super) fn queue(key: QueueKey) -> Key {
        Key {
            kind: Kind::Queue,
            account: key.account,
            region: key.region,
            name: key.name,
        }
    }

    fn sns(kind: Kind, arn: SnsArn) -> Key {
        Key {
            kind,
            account: arn.account,
            region: arn.region,
            name: arn.name,
        }
    }
}

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// One name: answered by the shard that holds it. `create`: the
    /// request makes the name (CreateQueue, CreateTopic,
    /// CreatePlatformApplication), so an unplaced name is placed first;
    /// the name has already passed the engine's own syntax check, so no
    /// placement is made for a name the engine would refuse.
    One { key: Key, create: bool },
    /// Asked of every shard, the answers merged.
    Gather(Gathered),
    /// Any one shard answers it as well as another: it reads or changes
    /// nothing a shard holds apart (STS, `/health`, the cluster's clock,
    /// the console's files), or it lands in whichever shard takes it and
    /// is read back by a gathering (an SMS `Publish`, kept in the SNS
    /// inbox that `/_aws/sns/sms-messages` and `/_retsu/inbox` gather).
    Any,
    /// Not readable as a request for a name or a listing (malformed, an
    /// unknown action, a missing member): any shard's engine answers it
    /// with AWS's error, the same on every shard.
    Unknown,
}

/// A request asked of every shard, with what the merge needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gathered {
    /// SQS ListQueues in the caller's account and region.
    Queues {
        account: String,
        region: String,
        prefix: Option<String>,
        next_token: Option<String>,
        max_results: Option<i32>,
    },
    /// SQS ListDeadLetterSourceQueues: the dead-letter queue lives in one
    /// shard (which answers QueueDoesNotExist for it, or not), but the
    /// queues naming it in their RedrivePolicy may be in any shard.
    DeadLetterSources {
        queue: Key,
        next_token: Option<String>,
        max_results: Option<i32>,
    },
    /// SNS ListTopics.
    Topics {
        account: String,
        region: String,
        next_token: Option<String>,
    },
    /// SNS ListSubscriptions (every topic's).
    Subscriptions {
        account: String,
        region: String,
        next_token: Option<String>,
    },
    /// SNS ListPlatformApplications.
    Applications {
        account: String,
        region: String,
        next_token: Option<String>,
    },
    /// An admin API endpoint that reads or changes every shard.
    Admin(AdminGather),
    /// Lambda's API (`/2015-03-31/`): functions are known to every shard
    /// (a mapping on any queue may invoke one) and a mapping is found by
    /// its UUID only, so reads and changes go to every shard.
    Lambda,
    /// `GET /metrics`: each shard's engine metrics, labelled.
    Metrics,
}

/// The admin endpoints that span shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminGather {
    /// `GET /_retsu/health` (its queue count).
    Health,
    /// `GET /_retsu/queues`.
    Queues,
    /// `GET /_retsu/topics`.
    Topics,
    /// `POST /_retsu/reset`: every shard is reset.
    Reset,
    /// `GET`/`DELETE /_retsu/inbox`.
    Inbox,
    /// `/_retsu/faults`: seeded faults hold for the names of every shard.
    Faults,
    /// `/_retsu/functions[/<name>]`.
    Functions,
    /// `GET /_retsu/messages/<id>`: one message's history, in whichever
    /// shard holds its queue.
    MessageHistory,
    /// `GET /_retsu/events`.
    Events,
    /// `GET /_retsu/events/stream`.
    EventStream,
    /// `GET /_retsu/lambda/mappings`.
    LambdaMappings,
    /// `GET /_retsu/lambda/invocations`.
    LambdaInvocations,
    /// `/_aws/sns/sms-messages`.
    SmsMessages,
    /// `/_aws/sns/platform-endpoint-messages`.
    PlatformEndpointMessages,
}

/// The route of a request as the server would read it.
///
/// `account` is the caller's: the server's account, or with `--auth` the
/// access key's ([`crate::auth::Verifier::claimed_account`]; the
/// signature itself is checked by the shard that answers). `settings` are the server's protocol settings (those of TLS
/// requests for a request that came over TLS): the default region and the
/// pinned base URL, which a queue-URL path is read against, exactly as the
/// server reads it. The request is the protocol layer's own view of it:
/// the front can move the headers in and back out without a copy.
pub fn route(method: &Method, request: &HttpRequest, account: &str, settings: &Settings) -> Route {
    if request.path != "/" {
        if let Some(route) = by_path(method, request, settings) {
            return route;
        }
    }
    match crate::protocol::wire_form(request) {
        WireForm::Json => sqs_json(request, account, settings),
        WireForm::Query(params) => by_query(request, &params, account, settings),
        WireForm::NoAction => Route::Unknown,
    }
}

/// Whether a request is SQS's ListMessageMoveTasks, in either protocol,
/// named as the protocol layer reads it. Asked of every request a shard
/// answers, so a form that does not hold the name is not parsed.
pub fn lists_move_tasks(parts: &axum::http::request::Parts, body: &[u8]) -> bool {
    const NAME: &str = "ListMessageMoveTasks";
    if parts.headers.contains_key("x-amz-target") {
        return json::action(&parts.headers).ok() == Some(Action::ListMessageMoveTasks);
    }
    let query = parts.uri.query();
    let names = |b: &[u8]| memchr::memmem::find(b, NAME.as_bytes()).is_some();
    if !names(body) && !query.is_some_and(|q| names(q.as_bytes())) {
        return false;
    }
    let params = query::params(query, &parts.headers, body);
    query::param(&params, "Action").and_then(Action::from_name)
        == Some(Action::ListMessageMoveTasks)
}

/// The paths the server's router sends elsewhere than to the SQS/SNS
/// handler; `None` for the handler's own.
fn by_path(method: &Method, request: &HttpRequest, settings: &Settings) -> Option<Route> {
    let path = request.path.as_str();
    match path {
        "/health" if method == Method::GET => return Some(Route::Any),
        "/metrics" if method == Method::GET => return Some(Route::Gather(Gathered::Metrics)),
        // LocalStack's peek also reads a form or JSON body.
        "/_aws/sqs/messages" => {
            let params = crate::admin::localstack::params(
                request.query.as_deref(),
                &request.headers,
                &request.body,
            );
            return Some(peeked_queue(&params, settings));
        }
        _ => {}
    }
    if let Some(rest) = path.strip_prefix("/2015-03-31/") {
        return Some(lambda(method, rest, &request.body));
    }
    let admin = path == "/_retsu"
        || ["/_retsu/", "/_aws/", "/_localstack/"]
            .iter()
            .any(|p| path.starts_with(p));
    admin.then(|| route_admin(method, path, request.query.as_deref(), settings))
}

/// The route of an admin API request (`/_retsu/…`, LocalStack's
/// `/_aws/…` and `/_localstack/…`), by method and path as the admin
/// router matches them. Queue- and topic-scoped endpoints go to their
/// shard; listings, the reset, faults, functions and the event feeds to
/// every shard; the rest (the clock, the console, the cluster's own
/// endpoints, status pages, unknown paths that answer 404) to any.
/// `settings`: the server's defaults, which LocalStack's peek reads a
/// bare queue name in.
pub fn route_admin(method: &Method, path: &str, query: Option<&str>, settings: &Settings) -> Route {
    use AdminGather as G;
    let gather = |what| Route::Gather(Gathered::Admin(what));
    let get = method == Method::GET;
    if let Some(rest) = path.strip_prefix("/_aws/") {
        return match rest {
            "sqs/messages" => {
                let params: Params = form_urlencoded::parse(query.unwrap_or("").as_bytes())
                    .into_owned()
                    .collect();
                peeked_queue(&params, settings)
            }
            "sns/sms-messages" => gather(G::SmsMessages),
            "sns/platform-endpoint-messages" => gather(G::PlatformEndpointMessages),
            _ => match rest.strip_prefix("sns/subscription-tokens/") {
                Some(arn) if get => subscription_topic(&crate::admin::percent_decode(arn)),
                // Not an admin path: the SQS handler answers it.
                _ => Route::Unknown,
            },
        };
    }
    if path.starts_with("/_localstack/") {
        return Route::Any;
    }
    let Some(rest) = path.strip_prefix("/_retsu") else {
        return Route::Unknown;
    };
    let segments: Vec<String> = rest
        .split('/')
        .filter(|s| !s.is_empty())
        .map(crate::admin::percent_decode)
        .collect();
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    let queue = |r: &str, a: &str, n: &str| Route::One {
        key: Key {
            kind: Kind::Queue,
            account: a.to_string(),
            region: r.to_string(),
            name: n.to_string(),
        },
        create: false,
    };
    let (post, delete) = (method == Method::POST, method == Method::DELETE);
    match segs.as_slice() {
        ["lambda", "mappings"] if get => gather(G::LambdaMappings),
        ["lambda", "invocations"] if get => gather(G::LambdaInvocations),
        ["health"] if get => gather(G::Health),
        ["queues"] if get => gather(G::Queues),
        ["queues", r, a, n] if get => queue(r, a, n),
        ["queues", r, a, n, "messages"] if get => queue(r, a, n),
        ["queues", r, a, n, "messages", _] if get || delete => queue(r, a, n),
        // A restore may land in another shard's queue: the source's shard
        // hands it across, as a dead-letter move does.
        ["queues", r, a, n, "messages", _, "restore"] if post => queue(r, a, n),
        ["queues", r, a, n, "reset"] if post => queue(r, a, n),
        ["reset"] if post => gather(G::Reset),
        ["topics"] if get => gather(G::Topics),
        ["inbox"] if get || delete => gather(G::Inbox),
        ["subscriptions", arn, "token"] if get => subscription_topic(arn),
        ["faults"] if get || post || delete => gather(G::Faults),
        ["functions"] if get => gather(G::Functions),
        ["functions", _] if get || method == Method::PUT || delete => gather(G::Functions),
        ["messages", _] if get => gather(G::MessageHistory),
        ["events"] if get => gather(G::Events),
        ["events", "stream"] if get => gather(G::EventStream),
        // The cluster's view, drain and undrain (the front answers them),
        // the clock (the cluster's), the console's files, SNS's signing
        // certificate, and the admin API's 404 for anything else.
        _ => Route::Any,
    }
}

/// LocalStack's peek: the queue its `QueueUrl` names, read in the
/// server's default context as the peek reads it.
fn peeked_queue(params: &Params, settings: &Settings) -> Route {
    let url = params
        .iter()
        .rev()
        .find(|(k, _)| k.eq_ignore_ascii_case("QueueUrl"))
        .map(|(_, v)| v.as_str());
    let ctx = settings.default_context();
    match url.and_then(|u| QueueKey::from_url(u, &ctx)) {
        Some(key) => one(Key::queue(key)),
        None => Route::Unknown,
    }
}

/// Lambda's API: a new mapping goes to its queue's shard; the rest to
/// every shard (see [`Gathered::Lambda`]).
fn lambda(method: &Method, rest: &str, body: &[u8]) -> Route {
    #[derive(Deserialize)]
    struct Mapping<'a> {
        #[serde(rename = "EventSourceArn", borrow, default)]
        event_source_arn: Option<Cow<'a, str>>,
    }
    if method == Method::POST && rest.trim_end_matches('/') == "event-source-mappings" {
        return serde_json::from_slice::<Mapping>(body)
            .ok()
            .and_then(|m| QueueKey::from_arn(m.event_source_arn.as_deref()?))
            .map_or(Route::Unknown, |key| one(Key::queue(key)));
    }
    Route::Gather(Gathered::Lambda)
}

fn one(key: Key) -> Route {
    Route::One { key, create: false }
}

/// The caller's context, as the server builds it, in the caller's account.
fn caller(
    settings: &Settings,
    headers: &HeaderMap,
    params: &Params,
    query_protocol: bool,
    account: &str,
) -> RequestContext {
    let mut ctx = context::build(settings, headers, params, query_protocol);
    account.clone_into(&mut ctx.account_id);
    ctx
}

/// The members of an SQS request that name a queue or a page, as the
/// JSON body or the query parameters give them.
#[derive(Default)]
struct Names<'a> {
    queue_url: Option<Cow<'a, str>>,
    queue_name: Option<Cow<'a, str>>,
    owner: Option<Cow<'a, str>>,
    source_arn: Option<Cow<'a, str>>,
    task_handle: Option<Cow<'a, str>>,
    prefix: Option<Cow<'a, str>>,
    next_token: Option<Cow<'a, str>>,
    /// `Err`: given, but not a 32-bit integer.
    max_results: Option<Result<i32, ()>>,
}

/// The JSON body's members that [`Names`] holds; every other member is
/// skipped unread (a message body is never copied).
#[derive(Deserialize)]
struct JsonNames<'a> {
    #[serde(rename = "QueueUrl", borrow, default)]
    queue_url: Option<Cow<'a, str>>,
    #[serde(rename = "QueueName", borrow, default)]
    queue_name: Option<Cow<'a, str>>,
    #[serde(rename = "QueueOwnerAWSAccountId", borrow, default)]
    owner: Option<Cow<'a, str>>,
    #[serde(rename = "SourceArn", borrow, default)]
    source_arn: Option<Cow<'a, str>>,
    #[serde(rename = "TaskHandle", borrow, default)]
    task_handle: Option<Cow<'a, str>>,
    #[serde(rename = "QueueNamePrefix", borrow, default)]
    prefix: Option<Cow<'a, str>>,
    #[serde(rename = "NextToken", borrow, default)]
    next_token: Option<Cow<'a, str>>,
    /// A number, or (as the API's integer members accept) a string.
    #[serde(rename = "MaxResults", default)]
    max_results: Option<serde_json::Value>,
}

/// An SQS request in the JSON protocol (any path: some SDKs post JSON to
/// the queue URL, and the JSON decoder reads only the body).
fn sqs_json(request: &HttpRequest, account: &str, settings: &Settings) -> Route {
    let Ok(action) = json::action(&request.headers) else {
        return Route::Unknown;
    };
    // As the JSON decoder reads it: an empty body is `{}`.
    let body: &[u8] = if request.body.is_empty() {
        b"{}"
    } else {
        &request.body
    };
    let Ok(named) = serde_json::from_slice::<JsonNames>(body) else {
        return Route::Unknown;
    };
    let max_results = named.max_results.map(|v| match v {
        serde_json::Value::Number(n) => n.as_i64().and_then(|n| i32::try_from(n).ok()).ok_or(()),
        serde_json::Value::String(s) => s.parse::<i32>().map_err(|_| ()),
        _ => Err(()),
    });
    let names = Names {
        queue_url: named.queue_url,
        queue_name: named.queue_name,
        owner: named.owner,
        source_arn: named.source_arn,
        task_handle: named.task_handle,
        prefix: named.prefix,
        next_token: named.next_token,
        max_results,
    };
    // The query string is read for a presigned request's credential only.
    let params = query::params(request.query.as_deref(), &HeaderMap::new(), &[]);
    let ctx = caller(settings, &request.headers, &params, false, account);
    sqs(action, &names, &ctx)
}

/// A query-protocol request: STS's, SNS's or SQS's, decided as the
/// protocol layer decides it.
fn by_query(request: &HttpRequest, params: &Params, account: &str, settings: &Settings) -> Route {
    let name = query::param(params, "Action").unwrap_or_default();
    if sts::is_sts(request, params) {
        // Who the caller is: no shard holds that. Other STS actions get
        // STS's InvalidAction from whichever shard.
        return match name {
            "GetCallerIdentity" => Route::Any,
            _ => Route::Unknown,
        };
    }
    if let Some(action) = sns::route(request, params) {
        let ctx = caller(settings, &request.headers, params, true, account);
        return by_sns(action, params, &ctx);
    }
    if sns::signed_service(request, params) == Some("sns") {
        return Route::Unknown;
    }
    let Some(action) = Action::from_name(name) else {
        return Route::Unknown;
    };
    let queue_path = query::queue_path(&request.path);
    // Refused on a queue's endpoint (`protocol::decode_query`).
    if queue_path.is_some() && matches!(action, Action::ListQueues | Action::CreateQueue) {
        return Route::Unknown;
    }
    let ctx = caller(settings, &request.headers, params, true, account);
    let text = |name: &str| query::param(params, name).map(Cow::Borrowed);
    // Java v1 and old SDKs post to the queue URL instead of naming it.
    let queue_url = text("QueueUrl").or_else(|| {
        queue_path
            .filter(|_| action.by_queue_url())
            .map(|p| Cow::Owned(format!("{}{p}", ctx.base_url)))
    });
    let names = Names {
        queue_url,
        queue_name: text("QueueName"),
        owner: text("QueueOwnerAWSAccountId"),
        source_arn: text("SourceArn"),
        task_handle: text("TaskHandle"),
        prefix: text("QueueNamePrefix"),
        next_token: text("NextToken"),
        max_results: query::param(params, "MaxResults").map(|v| v.parse().map_err(|_| ())),
    };
    sqs(action, &names, &ctx)
}

/// An SQS action's route, whichever protocol named its members.
fn sqs(action: Action, names: &Names<'_>, ctx: &RequestContext) -> Route {
    let by_url = || {
        names
            .queue_url
            .as_deref()
            .and_then(|url| QueueKey::from_url(url, ctx))
            .map(Key::queue)
    };
    let by_arn = |arn: Option<&str>| arn.and_then(QueueKey::from_arn).map(Key::queue);
    let owned = |v: &Option<Cow<'_, str>>| v.as_deref().map(str::to_string);
    let key = match action {
        Action::CreateQueue => {
            let Some(name) = names.queue_name.as_deref() else {
                return Route::Unknown;
            };
            if !crate::engine::valid_queue_name(name, name.ends_with(".fifo")) {
                return Route::Unknown;
            }
            return Route::One {
                key: Key {
                    kind: Kind::Queue,
                    account: ctx.account_id.clone(),
                    region: ctx.region.clone(),
                    name: name.to_string(),
                },
                create: true,
            };
        }
        // In the owner's account when one is given (`get_queue_url.rs`).
        Action::GetQueueUrl => names.queue_name.as_deref().map(|name| Key {
            kind: Kind::Queue,
            account: names
                .owner
                .as_deref()
                .filter(|a| !a.is_empty())
                .unwrap_or(&ctx.account_id)
                .to_string(),
            region: ctx.region.clone(),
            name: name.to_string(),
        }),
        Action::ListQueues => {
            let Ok(max_results) = names.max_results.transpose() else {
                return Route::Unknown;
            };
            return Route::Gather(Gathered::Queues {
                account: ctx.account_id.clone(),
                region: ctx.region.clone(),
                prefix: owned(&names.prefix),
                next_token: owned(&names.next_token),
                max_results,
            });
        }
        Action::ListDeadLetterSourceQueues => {
            let (Some(queue), Ok(max_results)) = (by_url(), names.max_results.transpose()) else {
                return Route::Unknown;
            };
            return Route::Gather(Gathered::DeadLetterSources {
                queue,
                next_token: owned(&names.next_token),
                max_results,
            });
        }
        Action::StartMessageMoveTask | Action::ListMessageMoveTasks => {
            by_arn(names.source_arn.as_deref())
        }
        // The task runs in its source queue's shard; the handle names it.
        Action::CancelMessageMoveTask => names
            .task_handle
            .as_deref()
            .and_then(crate::engine::task_handle_parts)
            .and_then(|(_, source)| by_arn(Some(&source))),
        Action::AddPermission
        | Action::ChangeMessageVisibility
        | Action::ChangeMessageVisibilityBatch
        | Action::DeleteMessage
        | Action::DeleteMessageBatch
        | Action::DeleteQueue
        | Action::GetQueueAttributes
        | Action::ListQueueTags
        | Action::PurgeQueue
        | Action::ReceiveMessage
        | Action::RemovePermission
        | Action::SendMessage
        | Action::SendMessageBatch
        | Action::SetQueueAttributes
        | Action::TagQueue
        | Action::UntagQueue => by_url(),
    };
    key.map_or(Route::Unknown, one)
}

/// An SNS action's route (SNS speaks only the query protocol).
fn by_sns(action: SnsAction, params: &Params, ctx: &RequestContext) -> Route {
    use SnsAction as A;
    let p = |name: &str| query::param(params, name).filter(|v| !v.is_empty());
    let arn = |member: &str| p(member).and_then(|a| SnsArn::parse(member, a).ok());
    let topic = |member: &str| arn(member).map(|a| one(Key::sns(Kind::Topic, a)));
    let application = |app_arn: Option<&str>| {
        app_arn
            .and_then(|a| SnsArn::parse("PlatformApplicationArn", a).ok())
            .map(|a| one(Key::sns(Kind::Application, a)))
    };
    let endpoint = |arn: Option<&str>| {
        let app = arn.and_then(crate::sns::model::endpoint_application);
        application(app.as_deref())
    };
    let listing = |next_token: Option<&str>| {
        (
            ctx.account_id.clone(),
            ctx.region.clone(),
            next_token.map(str::to_string),
        )
    };
    let route = match action {
        A::CreateTopic => p("Name")
            .filter(|name| crate::sns::actions::valid_topic_name(name))
            .map(|name| Route::One {
                key: Key {
                    kind: Kind::Topic,
                    account: ctx.account_id.clone(),
                    region: ctx.region.clone(),
                    name: name.to_string(),
                },
                create: true,
            }),
        A::CreatePlatformApplication => {
            p("Name")
                .zip(p("Platform"))
                .map(|(name, platform)| Route::One {
                    key: Key {
                        kind: Kind::Application,
                        account: ctx.account_id.clone(),
                        region: ctx.region.clone(),
                        name: format!("app/{platform}/{name}"),
                    },
                    create: true,
                })
        }
        A::ListTopics => {
            let (account, region, next_token) = listing(p("NextToken"));
            Some(Route::Gather(Gathered::Topics {
                account,
                region,
                next_token,
            }))
        }
        A::ListSubscriptions => {
            let (account, region, next_token) = listing(p("NextToken"));
            Some(Route::Gather(Gathered::Subscriptions {
                account,
                region,
                next_token,
            }))
        }
        A::ListPlatformApplications => {
            let (account, region, next_token) = listing(p("NextToken"));
            Some(Route::Gather(Gathered::Applications {
                account,
                region,
                next_token,
            }))
        }
        // As `publish/recorded.rs`'s `target` reads them: a topic, an
        // endpoint, another topic by TargetArn, else a phone number.
        A::Publish => match (
            query::param(params, "TopicArn"),
            query::param(params, "TargetArn"),
            query::param(params, "PhoneNumber"),
        ) {
            (Some(_), _, _) => topic("TopicArn"),
            (None, Some(t), _) if t.contains(":endpoint/") => endpoint(Some(t)),
            (None, Some(_), _) => topic("TargetArn"),
            (None, None, Some(_)) => Some(Route::Any),
            (None, None, None) => None,
        },
        // A subscription's ARN is its topic's with the subscription id
        // after it.
        A::GetSubscriptionAttributes | A::SetSubscriptionAttributes | A::Unsubscribe => {
            p("SubscriptionArn").and_then(|a| subscription_key(a).map(one))
        }
        A::TagResource
        | A::UntagResource
        | A::ListTagsForResource
        | A::GetDataProtectionPolicy
        | A::PutDataProtectionPolicy => topic("ResourceArn"),
        A::CreatePlatformEndpoint
        | A::DeletePlatformApplication
        | A::GetPlatformApplicationAttributes
        | A::SetPlatformApplicationAttributes
        | A::ListEndpointsByPlatformApplication => application(p("PlatformApplicationArn")),
        A::DeleteEndpoint | A::GetEndpointAttributes | A::SetEndpointAttributes => {
            endpoint(p("EndpointArn"))
        }
        A::AddPermission
        | A::RemovePermission
        | A::ConfirmSubscription
        | A::DeleteTopic
        | A::GetTopicAttributes
        | A::SetTopicAttributes
        | A::ListSubscriptionsByTopic
        | A::PublishBatch
        | A::Subscribe => topic("TopicArn"),
    };
    route.unwrap_or(Route::Unknown)
}

/// The topic of a subscription ARN (`arn:aws:sns:<region>:<account>:<topic>:<id>`).
fn subscription_key(arn: &str) -> Option<Key> {
    let parsed = SnsArn::parse("SubscriptionArn", arn).ok()?;
    parsed.id.as_ref()?;
    Some(Key::sns(Kind::Topic, parsed))
}

fn subscription_topic(arn: &str) -> Route {
    subscription_key(arn).map_or(Route::Unknown, one)
}

#[cfg(test)]
#[path = "route_tests.rs"]
mod tests;
