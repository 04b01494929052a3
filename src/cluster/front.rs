//! What a cluster node's port serves. A request for a queue or topic in a
//! shard this node holds is answered from that shard's engine; one for
//! another shard is passed on to that shard's holder unchanged (Host
//! included, so queue URLs name the endpoint the client used), and its
//! answer is returned as it arrives, long polls included. A node
//! that cannot answer (no holder known, holder unreachable, lease lapsed)
//! answers `ServiceUnavailable` in the caller's protocol, which every
//! SDK retries.
//!
//! A request passed on carries the forwarding node's id and the cluster
//! secret; one that names a forwarding node without the right secret is
//! refused and logged, and a node never passes on a request that was
//! already passed on to it (no loops while the lease moves).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::IntoResponse;
use hyper::body::Incoming;
use serde_json::json;

mod clock;
mod events;
mod gather;

use super::forward::{Pool, HOP_BY_HOP};
use super::membership::{Drain, Membership, Move, View};
use super::placement::{Placement, HOME_SHARD};
use super::route::{Key, Kind};
use crate::error::SqsError;
use crate::server::HttpService;

// Header names as values, not strings: a lookup by string parses the
// name first, on every request.
/// The id of the node that passed a request on.
pub const FORWARDED_BY: HeaderName = HeaderName::from_static("x-retsu-forwarded-by");
/// The cluster secret, on requests between nodes.
pub const SECRET: HeaderName = HeaderName::from_static("x-retsu-cluster-secret");
/// On a request passed on: the client reached the first node over TLS
/// (believed only with the secret), so queue URLs stay https.
pub const FORWARDED_HTTPS: HeaderName = HeaderName::from_static("x-retsu-forwarded-https");
/// On a node's 503 to a forwarded request for a shard it does not hold:
/// nothing was done, so the forwarding node may send it again.
const NOT_HERE: HeaderName = HeaderName::from_static("x-retsu-not-here");
/// On a request passed on to another node: the shard that answers it.
const SHARD: HeaderName = HeaderName::from_static("x-retsu-shard");
/// On a node's 503 to a forwarded request for a queue that moved out of
/// the shard it was sent to: nothing was done; the sender routes it again.
const MOVED: HeaderName = HeaderName::from_static("x-retsu-moved");

/// A retriable `ServiceUnavailable` in the protocol the request speaks.
fn unavailable(headers: &HeaderMap, why: &str) -> axum::response::Response {
    let protocol = crate::protocol::protocol_from_headers(headers);
    let id = uuid::Uuid::new_v4().to_string();
    crate::protocol::encode_error(protocol, &SqsError::unavailable(why), &id).into_http()
}

/// What answers a request: one shard, or every shard (merged).
enum Target {
    Shard(i32),
    Gather(super::route::Gathered),
}

/// A request to give a shard's engine, made again from what was read.
fn rebuild(
    template: &axum::http::request::Parts,
    body: bytes::Bytes,
) -> hyper::Request<axum::body::Body> {
    let mut req = hyper::Request::new(axum::body::Body::from(body));
    *req.method_mut() = template.method.clone();
    *req.uri_mut() = template.uri.clone();
    *req.version_mut() = template.version;
    *req.headers_mut() = template.headers.clone();
    if template.extensions.get::<crate::server::Https>().is_some() {
        req.extensions_mut().insert(crate::server::Https);
    }
    req
}

pub struct Front {
    pub node: String,
    secret: String,
    admin_token: Option<String>,
    /// Answers are given only before this instant (nanoseconds after
    /// `base`; 0: never): the lease as this node last renewed it, counted
    /// from when the renewal was sent, so it ends no later than the
    /// database's own expiry.
    deadline: AtomicU64,
    /// Set once this node lost the lease: it never answers again.
    lost: std::sync::atomic::AtomicBool,
    base: Instant,
    /// The engines' services, by shard, for the shards this node holds
    /// and has loaded.
    local: RwLock<HashMap<i32, HttpService>>,
    /// The lease and the nodes as last read, and when.
    view: RwLock<(View, Option<Instant>)>,
    /// Where requests go: each shard's holder's host:port, for the shards
    /// other nodes hold.
    holder_at: RwLock<HashMap<i32, String>>,
    /// This node's id and the secret, as the headers a request passed on carries.
    forwarded_by: Option<(HeaderValue, HeaderValue)>,
    /// How long a client may take to send a request's body.
    body_timeout: std::time::Duration,
    /// Asks the node's loop to read the rows now (no holder known, or the
    /// holder did not answer): the lease may have moved.
    pub stale: tokio::sync::Notify,
    pool: Arc<Pool>,
    /// The rows, for the admin API's drain and undrain.
    rows: tokio::sync::Mutex<Option<Membership>>,
    /// Requests this node passed on to the holder.
    forwarded: AtomicU64,
    /// Where names are placed; None only in a front not yet started.
    placement: Option<Placement>,
    /// The server's defaults, as its engines read requests with them.
    settings: crate::protocol::Settings,
    /// `--auth`: a signed request's account is its key's.
    auth: Option<crate::auth::Verifier>,
    /// This node's clock and the lease: a clock change is shared with
    /// every node before it is answered (`front/clock.rs`).
    clock: std::sync::OnceLock<(Arc<super::clock::Follower>, std::time::Duration)>,
    /// Carries messages between shards; a request that handed some over
    /// waits (at most this long) until their targets took them in.
    handovers: std::sync::OnceLock<(Arc<super::outbox::Outbox>, std::time::Duration)>,
    /// The lease: how long a request for a shard between holders waits.
    lease: std::time::Duration,
    /// Woken at every read of the leases and whenever a shard is served here.
    viewed: tokio::sync::Notify,
    /// Queue moves as last read (`View::moves`).
    moves: std::sync::atomic::AtomicI64,
    /// Until then (nanoseconds after `base`), a request passed on for a
    /// shard held here is checked to be for a name still in it: a queue
    /// moved, and other nodes may have routed on an older read.
    recheck_until: AtomicU64,
}

impl Front {
    /// Where names are placed (None only in a front not yet started).
    pub fn placement(&self) -> Option<&Placement> {
        self.placement.as_ref()
    }

    pub fn new(
        node: String,
        secret: String,
        config: &crate::config::Config,
        placement: Option<Placement>,
    ) -> Result<Front, String> {
        let admin_token = config.admin_token.clone();
        let body_timeout = std::time::Duration::from_secs(config.limits.body_timeout);
        let auth = crate::auth::Verifier::from_settings(config.auth, &config.auth_keys)?;
        // As the engines' servers read requests: only the account, the
        // default region and a pinned base URL matter to routing.
        let settings = crate::protocol::Settings {
            default_region: config.region.clone(),
            account_id: config.account_id.clone(),
            base_url: config.pinned_base_url("http://", config.port),
            fallback_base_url: format!("http://{}:{}", config.host, config.port),
            scheme: "http://",
        };
        let forwarded_by = HeaderValue::from_str(&node)
            .ok()
            .zip(HeaderValue::from_str(&secret).ok());
        Ok(Front {
            placement,
            settings,
            auth,
            forwarded_by,
            body_timeout,
            node,
            secret,
            admin_token: admin_token.filter(|t| !t.is_empty()),
            deadline: AtomicU64::new(0),
            lost: std::sync::atomic::AtomicBool::new(false),
            base: Instant::now(),
            local: RwLock::new(HashMap::new()),
            view: RwLock::new((View::default(), None)),
            holder_at: RwLock::new(HashMap::new()),
            stale: tokio::sync::Notify::new(),
            pool: Arc::new(Pool::default()),
            rows: tokio::sync::Mutex::new(None),
            forwarded: AtomicU64::new(0),
            clock: std::sync::OnceLock::new(),
            handovers: std::sync::OnceLock::new(),
            lease: std::time::Duration::from_millis(config.lease_ms),
            viewed: tokio::sync::Notify::new(),
            moves: std::sync::atomic::AtomicI64::new(-1),
            recheck_until: AtomicU64::new(0),
        })
    }

    /// The node's clock, kept the cluster's; `lease` bounds the wait for
    /// another node's answer.
    pub fn set_clock(&self, follower: Arc<super::clock::Follower>, lease: std::time::Duration) {
        let _ = self.clock.set((follower, lease));
    }

    /// Makes requests that hand messages to other shards wait for them
    /// (see `outbox.rs`), at most `most`.
    pub fn wait_for_handovers(
        &self,
        outbox: Arc<super::outbox::Outbox>,
        most: std::time::Duration,
    ) {
        let _ = self.handovers.set((outbox, most));
    }

    /// The lease holds until `until` (a local instant).
    pub fn extend(&self, until: Instant) {
        if self.lost.load(Ordering::Acquire) {
            return;
        }
        let nanos = until.saturating_duration_since(self.base).as_nanos() as u64;
        self.deadline.store(nanos.max(1), Ordering::Release);
    }

    /// This node lost the lease: it answers nothing from its engine again.
    pub fn gone(&self) {
        self.lost.store(true, Ordering::Release);
        self.deadline.store(0, Ordering::Release);
    }

    fn answering(&self) -> bool {
        if self.lost.load(Ordering::Acquire) {
            return false;
        }
        let deadline = self.deadline.load(Ordering::Acquire);
        deadline != 0 && (self.base.elapsed().as_nanos() as u64) < deadline
    }

    /// Answers for `shard` from this node with `service`, unless `given_up` is set (checked
    /// under the same lock `stop_serving_locally` takes, so a shard given
    /// up while it loaded is never served); whether it is served.
    pub fn serve_locally_unless(
        &self,
        shard: i32,
        service: HttpService,
        given_up: &std::sync::atomic::AtomicBool,
    ) -> bool {
        let mut local = self.local.write().unwrap_or_else(|p| p.into_inner());
        if given_up.load(Ordering::SeqCst) {
            return false;
        }
        local.insert(shard, service);
        drop(local);
        self.viewed.notify_waiters();
        true
    }

    /// Stops answering for a shard from this node (it is handing the
    /// shard over): its requests go to the next holder once the rows name one.
    pub fn stop_serving_locally(&self, shard: i32) {
        self.local
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&shard);
        self.holder_at
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&shard);
    }

    /// Where the admin API's drain and undrain write.
    pub async fn set_rows(&self, rows: Membership) {
        *self.rows.lock().await = Some(rows);
    }

    /// A queue moved (this node moved it, or the rows say one did): names
    /// are read again, and requests passed on here are checked for a lease.
    pub fn queues_moved(&self) {
        if let Some(p) = &self.placement {
            p.forget();
        }
        let until = (self.base.elapsed() + self.lease).as_nanos() as u64;
        self.recheck_until.fetch_max(until, Ordering::AcqRel);
    }

    fn rechecking(&self) -> bool {
        (self.base.elapsed().as_nanos() as u64) < self.recheck_until.load(Ordering::Acquire)
    }

    pub fn set_view(&self, view: View) {
        let before = self.moves.swap(view.moves, Ordering::AcqRel);
        if before >= 0 && before != view.moves {
            self.queues_moved();
        }
        let at: HashMap<i32, String> = view
            .leases
            .iter()
            .filter(|l| l.holder != self.node && l.expires_in_ms.is_some())
            .filter_map(|l| Some((l.shard, authority(l.holder_url.as_deref()?)?)))
            .collect();
        *self.holder_at.write().unwrap_or_else(|p| p.into_inner()) = at;
        *self.view.write().unwrap_or_else(|p| p.into_inner()) = (view, Some(Instant::now()));
        self.viewed.notify_waiters();
    }

    fn local(&self, shard: i32) -> Option<HttpService> {
        self.local
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&shard)
            .cloned()
    }

    /// The shards this node serves.
    fn serving_shards(&self) -> Vec<i32> {
        let mut shards: Vec<i32> = self
            .local
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .copied()
            .collect();
        shards.sort_unstable();
        shards
    }

    /// The shard's holder's host:port, when it is another node (worked
    /// out once per view, not per request).
    fn holder(&self, shard: i32) -> Option<String> {
        self.holder_at
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&shard)
            .cloned()
    }

    /// The shard that answers a request: the one holding the name it
    /// is for (placed first when the request creates it); a request for
    /// no one name, or for a name not placed, goes to the home shard.
    async fn target_of(
        &self,
        parts: &mut axum::http::request::Parts,
        body: &bytes::Bytes,
    ) -> Result<Target, String> {
        use super::route::{route, Route};
        let Some(placement) = &self.placement else {
            return Ok(Target::Shard(HOME_SHARD));
        };
        // The headers are lent to the protocol layer's view and taken back.
        let request = crate::protocol::HttpRequest {
            path: parts.uri.path().to_string(),
            query: parts.uri.query().map(str::to_string),
            headers: std::mem::take(&mut parts.headers),
            body: body.clone(),
        };
        let account = self
            .auth
            .as_ref()
            .and_then(|a| a.claimed_account(&request))
            .unwrap_or(&self.settings.account_id);
        let routed = route(&parts.method, &request, account, &self.settings);
        parts.headers = request.headers;
        match routed {
            Route::One { key, create } => Ok(Target::Shard(
                placement
                    .shard_of(&key, create)
                    .await?
                    .unwrap_or(HOME_SHARD),
            )),
            Route::Gather(g) => Ok(Target::Gather(g)),
            Route::Any | Route::Unknown => Ok(Target::Shard(HOME_SHARD)),
        }
    }

    fn secret_matches(&self, headers: &HeaderMap) -> bool {
        let given = headers.get(SECRET).map(|v| v.as_bytes()).unwrap_or(b"");
        let wanted = self.secret.as_bytes();
        // Compared in full whatever differs first.
        given.len() == wanted.len()
            && given
                .iter()
                .zip(wanted)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }

    pub async fn call(
        self: Arc<Self>,
        mut req: hyper::Request<Incoming>,
    ) -> axum::response::Response {
        match (req.method(), req.uri().path()) {
            (&Method::GET, "/_retsu/cluster") => return self.cluster_view(req.headers()).await,
            (&Method::POST, "/_retsu/cluster/drain") => return self.drain(req, true).await,
            (&Method::POST, "/_retsu/cluster/undrain") => return self.drain(req, false).await,
            (&Method::POST, "/_retsu/cluster/move") => return self.move_to_node(req).await,
            // This node is up, whichever shards it holds.
            (&Method::GET, "/health") => return "ok".into_response(),
            // What this node owns, labelled with its id.
            (&Method::GET, "/metrics") => return self.metrics(req).await,
            (&Method::POST, clock::SHARE_PATH) => return self.share_here(req).await,
            _ => {}
        }
        if let Some(resume) = self.shares_clock(&req) {
            return self.change_clock(req, resume).await;
        }
        // Passed on by a node, or naming a shard: only with the secret.
        let forwarded =
            req.headers().contains_key(FORWARDED_BY) || req.headers().contains_key(SHARD);
        if forwarded && !self.secret_matches(req.headers()) {
            tracing::warn!(
                from = ?req.headers().get(FORWARDED_BY),
                path = %req.uri().path(),
                "refused a request between nodes without the cluster secret"
            );
            let mut refused = axum::response::Response::new(axum::body::Body::from(
                "refused: a request between nodes needs the cluster secret\n",
            ));
            *refused.status_mut() = StatusCode::FORBIDDEN;
            return refused;
        }
        if forwarded && req.headers().contains_key(FORWARDED_HTTPS) {
            req.extensions_mut().insert(crate::server::Https);
        }
        let (mut parts, body) = req.into_parts();
        // Read as the server reads it, and refused as the server would.
        let body = match crate::server::read_body_within(
            self.body_timeout,
            &parts.headers,
            axum::body::Body::new(body),
        )
        .await
        {
            Ok(body) => body,
            Err(error) => {
                let id = uuid::Uuid::new_v4().to_string();
                return crate::server::refused_body(&error, &parts.headers, &id);
            }
        };
        // A request passed on by another node names its shard: answered
        // by that shard here, never routed again.
        let named = forwarded
            .then(|| parts.headers.get(SHARD)?.to_str().ok()?.parse::<i32>().ok())
            .flatten();
        // Sent back once at most: the queue moved out of the shard it was
        // sent to, so where it is now is read again.
        let mut moved = false;
        loop {
            // A request passed on is routed again only for a while after a
            // queue moved: the sender may have routed on an older read.
            let routed = match named {
                Some(_) if !self.rechecking() => None,
                _ => Some(self.target_of(&mut parts, &body).await),
            };
            let target = match (named, routed) {
                (Some(shard), Some(Ok(Target::Shard(now)))) if now != shard => {
                    if self.local(now).is_none() {
                        let mut answer = unavailable(
                            &parts.headers,
                            "The queue moved to another node. Please retry.",
                        );
                        let headers = answer.headers_mut();
                        headers.insert(NOT_HERE, HeaderValue::from_static("1"));
                        headers.insert(MOVED, HeaderValue::from_static("1"));
                        return answer;
                    }
                    Ok(Target::Shard(now))
                }
                (Some(shard), _) => Ok(Target::Shard(shard)),
                (None, Some(routed)) => routed,
                (None, None) => Ok(Target::Shard(HOME_SHARD)),
            };
            return match target {
                Ok(Target::Shard(shard)) => {
                    let mut answer = self
                        .answer_from(shard, &parts, body.clone(), forwarded)
                        .await;
                    if answer.headers().contains_key(MOVED) {
                        if !moved {
                            moved = true;
                            self.queues_moved();
                            continue;
                        }
                        answer.headers_mut().remove(MOVED);
                        answer.headers_mut().remove(NOT_HERE);
                    }
                    answer
                }
                Ok(Target::Gather(what)) => self.gather(what, &parts, body).await,
                Err(e) => {
                    tracing::warn!("cannot read where a name is placed: {e}");
                    unavailable(
                        &parts.headers,
                        "The node cannot reach the cluster's database to find the queue or topic. Please retry.",
                    )
                }
            };
        }
    }

    /// The answer of `shard` to a request: this node's engine for it, or
    /// the node holding it. `passed_on`: the request came from another
    /// node, so it is not passed on again.
    pub(super) async fn answer_from(
        &self,
        shard: i32,
        parts: &axum::http::request::Parts,
        body: bytes::Bytes,
        passed_on: bool,
    ) -> axum::response::Response {
        let unavailable = |why: &str| unavailable(&parts.headers, why);
        // A shard between holders (taken over, handed on, or its holder
        // not yet seen) is waited for, up to a lease, rather than refused:
        // the request waits as a failover does.
        let deadline = Instant::now() + self.lease;
        loop {
            if let Some(local) = self.local(shard) {
                if !self.answering() {
                    return unavailable(
                        "This node's lease on the store has lapsed; another node will take over. Please retry.",
                    );
                }
                let lists_tasks = super::route::lists_move_tasks(parts, &body);
                let req = rebuild(parts, body);
                let (answer, handed) = super::outbox::noting_handovers(local.call_read(req)).await;
                let answer = answer.unwrap_or_else(|never| match never {});
                if let (false, Some((outbox, most))) = (handed.is_empty(), self.handovers.get()) {
                    outbox.wait_taken(&handed, *most).await;
                }
                // A task read as COMPLETED has its messages in their targets.
                if let (true, Some((outbox, most))) = (lists_tasks, self.handovers.get()) {
                    outbox.wait_unasked(*most).await;
                }
                // Paused past the lease while answering: another node may
                // have answered since; this answer may be stale.
                if !self.answering() {
                    return unavailable(
                        "This node's lease on the store lapsed while it answered; the request may or may not have taken effect. Please retry.",
                    );
                }
                return answer;
            }
            if passed_on {
                // Marked: nothing was done, so the sender may try again.
                let mut answer = unavailable(
                    "This node does not hold the cluster's lease (it moved). Please retry.",
                );
                answer
                    .headers_mut()
                    .insert(NOT_HERE, HeaderValue::from_static("1"));
                return answer;
            }
            let Some(authority) = self.holder(shard) else {
                if self.wait_for_view(deadline).await {
                    continue;
                }
                return unavailable(
                    "No node of the cluster holds this request's shard yet. Please retry.",
                );
            };
            let answer = self.forward(&authority, shard, parts, body.clone()).await;
            match answer {
                // The caller routes it again.
                Some(answer) if answer.headers().contains_key(MOVED) => return answer,
                Some(answer) if answer.headers().contains_key(NOT_HERE) => {
                    if self.wait_for_view(deadline).await {
                        continue;
                    }
                    let mut answer = answer;
                    answer.headers_mut().remove(NOT_HERE);
                    return answer;
                }
                Some(answer) => return answer,
                None => {
                    self.stale.notify_one();
                    return unavailable(
                        "The node holding the cluster's lease cannot be reached. Please retry.",
                    );
                }
            }
        }
    }

    /// The shards of the store (one lease row each), as last read.
    pub(super) fn shard_count(&self) -> i32 {
        let (view, _) = &*self.view.read().unwrap_or_else(|p| p.into_inner());
        view.leases.len().max(1) as i32
    }

    /// Waits for the next read of the leases (asking for one), unless
    /// `deadline` passed; false then.
    async fn wait_for_view(&self, deadline: Instant) -> bool {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let viewed = self.viewed.notified();
        tokio::pin!(viewed);
        viewed.as_mut().enable();
        self.stale.notify_one();
        let _ = tokio::time::timeout(left, viewed).await;
        true
    }

    /// Passes a request on to the node at `authority`, as the client sent
    /// it; `None` when that node cannot be reached.
    async fn forward(
        &self,
        authority: &str,
        shard: i32,
        template: &axum::http::request::Parts,
        body: bytes::Bytes,
    ) -> Option<axum::response::Response> {
        let mut builder = hyper::Request::builder()
            .method(template.method.clone())
            .version(template.version);
        if let Some(headers) = builder.headers_mut() {
            *headers = template.headers.clone();
            for name in HOP_BY_HOP {
                headers.remove(name);
            }
            headers.remove(axum::http::header::TRANSFER_ENCODING);
            headers.insert(
                axum::http::header::CONTENT_LENGTH,
                HeaderValue::from(body.len()),
            );
            if let Some((node, secret)) = &self.forwarded_by {
                headers.insert(FORWARDED_BY, node.clone());
                headers.insert(SECRET, secret.clone());
            }
            headers.remove(FORWARDED_HTTPS);
            headers.remove(NOT_HERE);
            headers.insert(SHARD, HeaderValue::from(shard));
            if template.extensions.get::<crate::server::Https>().is_some() {
                headers.insert(FORWARDED_HTTPS, HeaderValue::from_static("1"));
            }
        }
        // Origin form: the path and query; Host stays the client's.
        if let Some(pq) = template.uri.path_and_query().cloned() {
            builder = builder.uri(hyper::Uri::from(pq));
        }
        let req = builder.body(http_body_util::Full::new(body)).ok()?;
        self.forwarded.fetch_add(1, Ordering::Relaxed);
        match self.pool.send(authority, req).await {
            Ok(answer) => Some(answer),
            Err(e) => {
                tracing::debug!("{e}");
                None
            }
        }
    }

    /// `GET /metrics`: the engine metrics of every shard this node holds
    /// (labelled with its id by their servers, and with the shard here),
    /// then this node's part in the cluster: whether it holds shard 1's
    /// lease, how many shards it serves, how many nodes it sees, what it
    /// passed on.
    async fn metrics(&self, req: hyper::Request<Incoming>) -> axum::response::Response {
        use prometheus_client::metrics::{counter::Counter, gauge::Gauge};
        let serving = self.answering();
        // Every shard this node holds, each series labelled with its shard.
        let mut shards = Vec::new();
        if serving {
            for shard in self.serving_shards() {
                let Some(local) = self.local(shard) else {
                    continue;
                };
                let mut ask = hyper::Request::builder()
                    .method(Method::GET)
                    .uri(req.uri().clone());
                if let Some(headers) = ask.headers_mut() {
                    *headers = req.headers().clone();
                }
                let Ok(ask) = ask.body(axum::body::Body::empty()) else {
                    continue;
                };
                let answer = local
                    .call_read(ask)
                    .await
                    .unwrap_or_else(|never| match never {});
                if answer.status() == StatusCode::OK {
                    use http_body_util::BodyExt;
                    if let Ok(body) = answer.into_body().collect().await {
                        let text = String::from_utf8_lossy(&body.to_bytes()).into_owned();
                        shards.push((shard, text));
                    }
                }
            }
        }
        let mut text = super::shard_metrics::merge(&shards);
        let node = [(
            std::borrow::Cow::Borrowed("node"),
            std::borrow::Cow::Owned(self.node.clone()),
        )];
        let mut registry = prometheus_client::registry::Registry::with_prefix_and_labels(
            "retsu_cluster",
            node.into_iter(),
        );
        let held = Gauge::<i64>::default();
        held.set(i64::from(serving && self.local(1).is_some()));
        registry.register(
            "lease_held",
            "1 while this node holds shard 1's lease (the cluster's clock) and serves it",
            held,
        );
        let held_shards = Gauge::<i64>::default();
        held_shards.set(shards.len() as i64);
        registry.register(
            "shards_served",
            "Shards whose engine this node serves now",
            held_shards,
        );
        let nodes = Gauge::<i64>::default();
        let seen = self
            .view
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .nodes
            .len();
        nodes.set(seen as i64);
        registry.register(
            "nodes",
            "Nodes registered in the cluster, as this node last read",
            nodes,
        );
        let forwarded = Counter::<u64>::default();
        forwarded.inc_by(self.forwarded.load(Ordering::Relaxed));
        registry.register(
            "forwarded_requests",
            "Requests this node passed on to the node holding their shard",
            forwarded,
        );
        if prometheus_client::encoding::text::encode(&mut text, &registry).is_err() {
            text.push_str("# EOF\n");
        }
        let mut response = axum::response::Response::new(axum::body::Body::from(text));
        response.headers_mut().insert(
            axum::http::header::CONTENT_TYPE,
            HeaderValue::from_static(crate::metrics::CONTENT_TYPE),
        );
        response
    }

    /// The admin token's check: the refusal, when it fails.
    fn refused_admin(&self, headers: &HeaderMap) -> Option<axum::response::Response> {
        let token = self.admin_token.as_ref()?;
        let given = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        (given != Some(token.as_str())).then(|| {
            crate::admin::error(
                StatusCode::UNAUTHORIZED,
                "this server needs the admin token: Authorization: Bearer <token>",
            )
        })
    }

    /// `POST /_retsu/cluster/drain` and `/undrain` with `{"node": "<id>"}`
    /// (this node when the body names none): a drained node hands the
    /// lease over within a quarter lease and takes it no more until it is
    /// undrained or restarted. Answers with the cluster's view.
    async fn drain(
        self: Arc<Self>,
        req: hyper::Request<Incoming>,
        draining: bool,
    ) -> axum::response::Response {
        let bad = |status, message: String| crate::admin::error(status, message);
        let (parts, body) = match self.admin_body(req).await {
            Ok(read) => read,
            Err(refused) => return refused,
        };
        let node = match body {
            None => self.node.clone(),
            Some(v) => match v.get("node").and_then(|n| n.as_str()) {
                Some(node) => node.to_string(),
                None => {
                    return bad(
                        StatusCode::BAD_REQUEST,
                        "give the node to drain as {\"node\": \"<id>\"}".into(),
                    )
                }
            },
        };
        let mut rows = self.rows.lock().await;
        let Some(rows) = rows.as_mut() else {
            return bad(
                StatusCode::SERVICE_UNAVAILABLE,
                "this node is still starting".into(),
            );
        };
        match rows.set_draining(&node, draining).await {
            Ok(Drain::Done) => {}
            Ok(Drain::NoSuchNode) => {
                return bad(
                    StatusCode::NOT_FOUND,
                    format!("no node {node:?} in this cluster"),
                )
            }
            Ok(Drain::LastCandidate) => {
                return bad(
                    StatusCode::CONFLICT,
                    format!("node {node:?} is the last live node that is not draining: draining it would leave every queue and topic without an owner; start or undrain another node first"),
                )
            }
            Err(e) => return bad(StatusCode::SERVICE_UNAVAILABLE, e),
        }
        tracing::info!(node = %node, draining, "cluster node drain changed through the admin API");
        if let Ok(view) = rows.view().await {
            self.set_view(view);
        }
        // The node's loop reads the rows now: a drained holder hands over.
        self.stale.notify_one();
        if !draining {
            return self.cluster_view(&parts.headers).await;
        }
        // Answered once the node holds no shard (at most a lease), so that
        // `retsu cluster drain n && <stop n>` stops a node that serves
        // nothing.
        let patience = self.a_lease();
        let done = loop {
            let holds = match rows.view().await {
                Ok(view) => {
                    let holds = view
                        .leases
                        .iter()
                        .any(|l| l.holder == node && l.expires_in_ms.is_some_and(|ms| ms > 0));
                    self.set_view(view);
                    holds
                }
                Err(_) => true,
            };
            if !holds || !patience.again().await {
                break !holds;
            }
        };
        if let Some(refused) = self.refused_admin(&parts.headers) {
            return refused;
        }
        let mut v = self.cluster_value().await;
        v["drained"] = json!({ "node": node, "done": done });
        json_response(StatusCode::OK, v)
    }

    /// An admin request's head and JSON body (`None`: no body), or the
    /// answer refusing it.
    async fn admin_body(
        &self,
        req: hyper::Request<Incoming>,
    ) -> Result<(axum::http::request::Parts, Option<serde_json::Value>), axum::response::Response>
    {
        if let Some(refused) = self.refused_admin(req.headers()) {
            return Err(refused);
        }
        let bad = |message: String| crate::admin::error(StatusCode::BAD_REQUEST, message);
        let (parts, body) = req.into_parts();
        let body = crate::server::read_body_within(
            self.body_timeout,
            &parts.headers,
            axum::body::Body::new(body),
        )
        .await
        .map_err(|_| bad("cannot read the body".into()))?;
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok((parts, None));
        }
        match serde_json::from_slice::<serde_json::Value>(&body) {
            Ok(v) => Ok((parts, Some(v))),
            Err(e) => Err(bad(format!("the body is not JSON: {e}"))),
        }
    }

    /// `POST /_retsu/cluster/move` with `{"queue": "<URL, ARN or name>",
    /// "node": "<id>"}`: the queue alone goes to that node, in a shard of
    /// its own (`queue_move.rs`), which the node keeps while it is live and
    /// not drained (another move sends it elsewhere). With `"topic": "<ARN
    /// or name>"`, the shard holding the topic, and so everything in it,
    /// goes there. The holder hands the shard over at once; the new holder
    /// loads it as after a failover, from the shard's last commit. Answers
    /// with the cluster's view: for a queue, once its holder moved it (or
    /// after a lease, still asked); the shard's `holder` shows it served.
    async fn move_to_node(
        self: Arc<Self>,
        req: hyper::Request<Incoming>,
    ) -> axum::response::Response {
        let bad = |status, message: String| crate::admin::error(status, message);
        let usage = "give what to move and where as {\"queue\": \"<URL, ARN or name>\", \"node\": \"<id>\"} or {\"topic\": \"<ARN or name>\", \"node\": \"<id>\"}";
        let (parts, body) = match self.admin_body(req).await {
            Ok(read) => read,
            Err(refused) => return refused,
        };
        let field = |name: &str| {
            body.as_ref()
                .and_then(|v| v.get(name))
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        let (Some(node), what) = (field("node"), (field("queue"), field("topic"))) else {
            return bad(StatusCode::BAD_REQUEST, usage.into());
        };
        let key = match what {
            (Some(queue), None) => self.queue_key(&queue),
            (None, Some(topic)) => self.topic_key(&topic),
            _ => None,
        };
        let Some(key) = key else {
            return bad(StatusCode::BAD_REQUEST, usage.into());
        };
        let Some(placement) = &self.placement else {
            return bad(
                StatusCode::SERVICE_UNAVAILABLE,
                "this node is still starting".into(),
            );
        };
        let shard = match placement.shard_of(&key, false).await {
            Ok(Some(shard)) => shard,
            Ok(None) => {
                return bad(
                    StatusCode::NOT_FOUND,
                    format!(
                        "no {} named {:?} in account {} and region {}",
                        key.kind.as_str(),
                        key.name,
                        key.account,
                        key.region
                    ),
                )
            }
            Err(e) => return bad(StatusCode::SERVICE_UNAVAILABLE, e),
        };
        let mut rows = self.rows.lock().await;
        let Some(rows) = rows.as_mut() else {
            return bad(
                StatusCode::SERVICE_UNAVAILABLE,
                "this node is still starting".into(),
            );
        };
        if key.kind == Kind::Queue {
            return self.move_queue(rows, &key, shard, &node).await;
        }
        let asked = rows.move_shard(shard, &node).await;
        if let Some(refused) = move_refusal(asked, &node, &format!("shard {shard}")) {
            return refused;
        }
        tracing::info!(node = %node, shard, name = %key.name, "shard moved through the admin API");
        if let Ok(view) = rows.view().await {
            self.set_view(view);
        }
        self.stale.notify_one();
        self.cluster_view(&parts.headers).await
    }

    /// Asks for `key` (a queue) to move alone to `node`, and waits up to a
    /// lease for the holder of its shard to move it.
    async fn move_queue(
        &self,
        rows: &mut Membership,
        key: &Key,
        shard: i32,
        node: &str,
    ) -> axum::response::Response {
        let bad = |status, message: String| crate::admin::error(status, message);
        // A queue already on the node stays where it is; one alone in its
        // shard moves with the shard, which adds no shard (and no
        // connection) as repeated moves of one queue otherwise would.
        let shard = match rows.queue_company(key, node).await {
            Ok(Some((shard, true, _))) => {
                if let Err(e) = rows.drop_queue_move(key).await {
                    return bad(StatusCode::SERVICE_UNAVAILABLE, e);
                }
                return self
                    .queue_moved_answer(rows, key, node, shard, "stayed", true)
                    .await;
            }
            Ok(Some((shard, false, false))) if shard != HOME_SHARD => {
                return self.move_queue_with_its_shard(rows, key, shard, node).await;
            }
            Ok(Some((shard, ..))) => shard,
            // No such queue: asking says so.
            Ok(None) => shard,
            Err(e) => return bad(StatusCode::SERVICE_UNAVAILABLE, e),
        };
        let asked = match rows.ask_queue_move(key, node).await {
            Ok(None) => {
                return bad(
                    StatusCode::NOT_FOUND,
                    format!(
                        "no queue named {:?} in account {} and region {}",
                        key.name, key.account, key.region
                    ),
                )
            }
            Ok(Some(asked)) => Ok(asked),
            Err(e) => Err(e),
        };
        if let Some(refused) = move_refusal(asked, node, &format!("queue {:?}", key.name)) {
            return refused;
        }
        tracing::info!(node = %node, name = %key.name, "queue move asked through the admin API");
        self.stale.notify_one();
        let patience = self.a_lease();
        let state = loop {
            let state = rows.queue_move_state(key).await;
            let asked = matches!(&state, Ok(Some((_, Some(_)))));
            if !asked || !patience.again().await {
                break state;
            }
        };
        if let Ok(view) = rows.view().await {
            self.set_view(view);
        }
        let moved = match state {
            Ok(Some((now, None))) if now == shard => {
                return bad(
                    StatusCode::CONFLICT,
                    format!(
                        "queue {:?} was not moved: the store has {} shards, the most it may have",
                        key.name,
                        crate::journal::MAX_SHARDS
                    ),
                )
            }
            Ok(Some((shard, waiting))) => json!({
                "queue": key.name,
                "node": node,
                "shard": shard,
                "how": "alone",
                // Its holder moved it into a shard of its own; `false`:
                // still asked (a message move task out of it still runs,
                // or the holder is between leases).
                "done": waiting.is_none(),
            }),
            Ok(None) => json!({"queue": key.name, "node": node, "done": false, "gone": true}),
            Err(e) => return bad(StatusCode::SERVICE_UNAVAILABLE, e),
        };
        let mut v = self.cluster_value().await;
        v["moved"] = moved;
        json_response(StatusCode::OK, v)
    }

    /// How long an admin request waits for other nodes to do what it
    /// asked of them: a lease.
    fn a_lease(&self) -> Patience {
        Patience {
            until: Instant::now() + self.lease,
        }
    }

    /// Moves the queue `key`, alone in `shard`, by moving the shard, and
    /// waits up to a lease for `node` to take it.
    async fn move_queue_with_its_shard(
        &self,
        rows: &mut Membership,
        key: &Key,
        shard: i32,
        node: &str,
    ) -> axum::response::Response {
        let bad = |status, message: String| crate::admin::error(status, message);
        let name = &key.name;
        let asked = rows.move_shard(shard, node).await;
        if let Some(refused) = move_refusal(asked, node, &format!("queue {name:?}")) {
            return refused;
        }
        // An earlier ask to move it alone is answered by this move.
        if let Err(e) = rows.drop_queue_move(key).await {
            return bad(StatusCode::SERVICE_UNAVAILABLE, e);
        }
        tracing::info!(node = %node, shard, name = %name, "queue moved with its shard through the admin API");
        self.stale.notify_one();
        let patience = self.a_lease();
        let done = loop {
            let done = rows.holds(shard, node).await.unwrap_or(false);
            if done || !patience.again().await {
                break done;
            }
        };
        self.queue_moved_answer(rows, key, node, shard, "with its shard", done)
            .await
    }

    /// The cluster's view, with what became of moving the queue `key`:
    /// `how` it went ("stayed" on the node that had it, "with its shard").
    async fn queue_moved_answer(
        &self,
        rows: &mut Membership,
        key: &Key,
        node: &str,
        shard: i32,
        how: &str,
        done: bool,
    ) -> axum::response::Response {
        if let Ok(view) = rows.view().await {
            self.set_view(view);
        }
        let mut v = self.cluster_value().await;
        v["moved"] = json!({
            "queue": key.name, "node": node, "shard": shard, "how": how, "done": done,
        });
        json_response(StatusCode::OK, v)
    }

    /// A queue named by its ARN, or as a request names it: any queue URL
    /// form, or its name (the default account and region).
    fn queue_key(&self, given: &str) -> Option<Key> {
        let ctx = crate::api::RequestContext::new(
            &self.settings.default_region,
            &self.settings.account_id,
            "",
        );
        crate::engine::QueueKey::from_arn(given)
            .or_else(|| crate::engine::QueueKey::from_url(given, &ctx))
            .map(Key::queue)
    }

    /// A topic named by its ARN or its name (the default account and region).
    fn topic_key(&self, given: &str) -> Option<Key> {
        let (account, region, name) = if given.starts_with("arn:") {
            let arn = crate::sns::model::SnsArn::parse("TopicArn", given)
                .ok()
                .filter(|a| a.id.is_none())?;
            (arn.account, arn.region, arn.name)
        } else {
            (
                self.settings.account_id.clone(),
                self.settings.default_region.clone(),
                given.to_string(),
            )
        };
        (!name.is_empty()).then_some(Key {
            kind: Kind::Topic,
            account,
            region,
            name,
        })
    }

    /// `GET /_retsu/cluster`: the nodes, their heartbeats, the shards
    /// each holds and the queues and topics in them; which node holds
    /// shard 1 (`lease`: it keeps the cluster's clock).
    async fn cluster_view(&self, headers: &HeaderMap) -> axum::response::Response {
        if let Some(refused) = self.refused_admin(headers) {
            return refused;
        }
        json_response(StatusCode::OK, self.cluster_value().await)
    }

    /// The cluster's view as `GET /_retsu/cluster` shows it.
    async fn cluster_value(&self) -> serde_json::Value {
        // What each shard holds; without the database, the view still
        // shows the nodes and shards.
        let names = match &self.placement {
            Some(p) => p.names().await.unwrap_or_default(),
            None => Vec::new(),
        };
        let (view, read) = self.view.read().unwrap_or_else(|p| p.into_inner()).clone();
        let live = view.lease.expires_in_ms.is_some_and(|ms| ms > 0);
        let held_by = |node: &str| -> Vec<i32> {
            view.leases
                .iter()
                .filter(|l| l.holder == node && l.expires_in_ms.is_some_and(|ms| ms > 0))
                .map(|l| l.shard)
                .collect()
        };
        let nodes: Vec<_> = view
            .nodes
            .iter()
            .map(|n| {
                let holds = live && n.id == view.lease.holder;
                let shards = held_by(&n.id);
                let of = |kind: &str| -> Vec<&String> {
                    names
                        .iter()
                        .filter(|(k, _, s)| k == kind && shards.contains(s))
                        .map(|(_, name, _)| name)
                        .collect()
                };
                let (queues, topics) = (of("queue"), of("topic"));
                let owns = match (queues.len(), topics.len()) {
                    _ if shards.is_empty() => "nothing (forwards)".to_string(),
                    (0, 0) => "no queue or topic yet".to_string(),
                    (q, t) => {
                        let count = |n: usize, one: &str, many: &str| match n {
                            1 => format!("1 {one}"),
                            n => format!("{n} {many}"),
                        };
                        format!(
                            "{}, {}",
                            count(q, "queue", "queues"),
                            count(t, "topic", "topics")
                        )
                    }
                };
                json!({
                    "id": n.id,
                    "url": n.url,
                    "heartbeat_age_ms": n.heartbeat_age_ms,
                    "up_ms": n.up_ms,
                    "holds_lease": holds,
                    "draining": n.draining,
                    "shards": shards,
                    "owns": owns,
                    "queues": queues,
                    "topics": topics,
                })
            })
            .collect();
        let shards: Vec<_> = view
            .leases
            .iter()
            .map(|l| {
                json!({
                    "shard": l.shard,
                    "holder": (!l.holder.is_empty()).then_some(&l.holder),
                    "epoch": l.epoch,
                    "expires_in_ms": l.expires_in_ms,
                    "live": l.expires_in_ms.is_some_and(|ms| ms > 0),
                    // Where an operator moved it (`retsu cluster move`).
                    "moved_to": l.wanted,
                })
            })
            .collect();
        json!({
                "node": self.node,
                "lease": {
                    "holder": (!view.lease.holder.is_empty()).then_some(&view.lease.holder),
                    "epoch": view.lease.epoch,
                    "expires_in_ms": view.lease.expires_in_ms,
                    "live": live,
                },
                // Holds the lease and has loaded the store.
                "serving": self.answering() && self.local(1).is_some(),
                // The shards this node serves now.
                "serving_shards": self.serving_shards(),
                // This node's own clock (every node reads the cluster's).
                "clock": self.clock_json(),
                "shards": shards,
                // How old this node's view is (it reads the rows every quarter lease).
                "view_age_ms": read.map(|t| t.elapsed().as_millis() as u64),
                "nodes": nodes,
        })
    }
}

fn json_response(status: StatusCode, value: serde_json::Value) -> axum::response::Response {
    let mut response = axum::response::Response::new(axum::body::Body::from(value.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// `host:port` of an `http://` URL (port 80 when it names none).
fn authority(url: &str) -> Option<String> {
    let uri: hyper::Uri = url.parse().ok()?;
    let authority = uri.authority()?;
    Some(match authority.port() {
        Some(_) => authority.to_string(),
        None => format!("{}:80", authority.host()),
    })
}

/// The answer to a move that was not asked for (`None`: it was): no such
/// node, a node that cannot take `what`, or the store unreachable.
fn move_refusal(
    asked: Result<Move, String>,
    node: &str,
    what: &str,
) -> Option<axum::response::Response> {
    let bad = |status, message: String| Some(crate::admin::error(status, message));
    match asked {
        Ok(Move::Done) => None,
        Ok(Move::NoSuchNode) => bad(
            StatusCode::NOT_FOUND,
            format!("no node {node:?} in this cluster"),
        ),
        Ok(Move::NotLive) => bad(
            StatusCode::CONFLICT,
            format!("node {node:?} is draining or its heartbeat lapsed: it cannot take {what}"),
        ),
        Err(e) => bad(StatusCode::SERVICE_UNAVAILABLE, e),
    }
}

/// A wait for rows that other nodes' loops change. They notify nothing
/// this node listens for, and admin requests are rare: a short poll.
struct Patience {
    until: Instant,
}

impl Patience {
    /// Pauses before the next look and says true, or says false once
    /// the time is up.
    async fn again(&self) -> bool {
        if Instant::now() >= self.until {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        true
    }
}
