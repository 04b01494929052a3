//! An admin change of the virtual clock answers only once every live node
//! has adopted it (`cluster/clock.rs` says why this way).
//!
//! The node the client asked routes the change as usual (the clock's
//! endpoints to shard 1's holder, a queue's reset to the queue's holder,
//! the global reset as the front routes it). Once it answered with
//! success, that node asks shard 1's holder to store its clock now
//! (resumed first after a queue's reset, as a single server's queue
//! reset resumes the clock), then every other live node to adopt the
//! stored clock (`POST /_retsu/cluster/clock`, with the cluster secret),
//! side by side, each bounded by the lease, and only then answers.

use std::sync::Arc;
use std::time::Duration;

use axum::http::{Method, StatusCode};
use hyper::body::Incoming;
use serde_json::json;

use super::{json_response, Front, FORWARDED_BY, SECRET};

/// Where a node asks another to share a clock change.
pub const SHARE_PATH: &str = "/_retsu/cluster/clock";

/// Marks a clock change the front routes itself, so it is shared once.
#[derive(Clone, Copy)]
struct Sharing;

/// The clock change an admin request makes, if any: `Some(true)` when
/// the clock also resumes (a queue's reset).
pub fn change_of(method: &Method, path: &str) -> Option<bool> {
    if method != Method::POST {
        return None;
    }
    let rest = path.strip_prefix("/_retsu/")?;
    let segs: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    match segs.as_slice() {
        ["clock"] | ["reset"] => Some(false),
        ["queues", _, _, _, "reset"] => Some(true),
        _ => None,
    }
}

impl Front {
    /// Whether `req` is a clock change this node must share once answered.
    pub(super) fn shares_clock(&self, req: &hyper::Request<Incoming>) -> Option<bool> {
        if self.clock.get().is_none()
            || req.headers().contains_key(FORWARDED_BY)
            || req.extensions().get::<Sharing>().is_some()
        {
            return None;
        }
        change_of(req.method(), req.uri().path())
    }

    /// Answers a clock change once every live node has it.
    pub(super) async fn change_clock(
        self: Arc<Self>,
        mut req: hyper::Request<Incoming>,
        resume: bool,
    ) -> axum::response::Response {
        req.extensions_mut().insert(Sharing);
        let answer = Box::pin(self.clone().call(req)).await;
        if !answer.status().is_success() {
            return answer;
        }
        match self.share_clock(resume).await {
            Ok(()) => answer,
            Err(why) => {
                tracing::warn!("a clock change could not be shared: {why}");
                crate::admin::error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("the clock was changed, but not every node has the change yet ({why}); read the clock and retry"),
                )
            }
        }
    }

    /// Has shard 1's holder store the clock, then every other live node
    /// adopt it.
    async fn share_clock(&self, resume: bool) -> Result<(), String> {
        let Some((follower, lease)) = self.clock.get() else {
            return Ok(());
        };
        let lease = *lease;
        // The nodes as they are now: one that joined since the last read
        // is asked too.
        let fresh = match self.rows.lock().await.as_mut() {
            Some(rows) => rows.view().await.ok(),
            None => None,
        };
        let view = match fresh {
            Some(v) => {
                self.set_view(v.clone());
                v
            }
            None => self
                .view
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .0
                .clone(),
        };
        let keeper = view.lease.holder.clone();
        if keeper.is_empty() || view.lease.expires_in_ms.is_none_or(|ms| ms <= 0) {
            return Err("no node holds shard 1, which keeps the clock".into());
        }
        let kept = if keeper == self.node {
            follower.share(resume).await?
        } else {
            let at = view
                .lease
                .holder_url
                .as_deref()
                .and_then(super::authority)
                .ok_or_else(|| format!("node {keeper} has no address"))?;
            self.ask_to_share(&at, resume, lease).await?
        };
        if !kept {
            return Err(format!("node {keeper} no longer keeps the clock"));
        }
        let lease_ms = lease.as_millis() as i64;
        let others = view
            .nodes
            .iter()
            .filter(|n| n.id != keeper && n.heartbeat_age_ms < lease_ms)
            .map(|n| async move {
                let asked = if n.id == self.node {
                    follower.share(false).await
                } else {
                    match super::authority(&n.url) {
                        Some(at) => self.ask_to_share(&at, false, lease).await,
                        None => Err("no address".into()),
                    }
                };
                // One that cannot answer within its lease is taken as not
                // live: paused or cut off that long, it has lost its
                // shards and adopts the clock before it loads one again;
                // unreachable from here only, it still gets the notice.
                if let Err(e) = asked {
                    tracing::warn!(node = %n.id, "a node did not take the clock's change: {e}");
                }
            });
        futures_util::future::join_all(others).await;
        Ok(())
    }

    /// Asks the node at `at` to share the stored clock: Ok(true) when it
    /// keeps the clock.
    async fn ask_to_share(&self, at: &str, resume: bool, lease: Duration) -> Result<bool, String> {
        let Some((node, secret)) = &self.forwarded_by else {
            return Err("this node's id or secret cannot be sent".into());
        };
        let body = json!({ "resume": resume }).to_string();
        let req = hyper::Request::post(SHARE_PATH)
            .header(axum::http::header::HOST, at)
            .header(axum::http::header::CONTENT_TYPE, "application/json")
            .header(FORWARDED_BY, node.clone())
            .header(SECRET, secret.clone())
            .body(http_body_util::Full::new(bytes::Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let asked = async {
            let answer = self.pool.send(at, req).await?;
            let status = answer.status();
            let body = axum::body::to_bytes(answer.into_body(), 64 * 1024)
                .await
                .map_err(|e| e.to_string())?;
            if !status.is_success() {
                return Err(format!(
                    "{at} answered {status}: {}",
                    String::from_utf8_lossy(&body)
                ));
            }
            let v: serde_json::Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
            Ok(v["keeper"] == true)
        };
        tokio::time::timeout(lease, asked)
            .await
            .map_err(|_| format!("{at} did not answer within the lease"))?
    }

    /// `POST /_retsu/cluster/clock` (between nodes only): the keeper
    /// stores its clock (resumed first with `{"resume": true}`), any other
    /// node adopts the stored one; answers which, and the clock now.
    pub(super) async fn share_here(
        &self,
        req: hyper::Request<Incoming>,
    ) -> axum::response::Response {
        if !req.headers().contains_key(FORWARDED_BY) || !self.secret_matches(req.headers()) {
            tracing::warn!(
                from = ?req.headers().get(FORWARDED_BY),
                "refused a clock change between nodes without the cluster secret"
            );
            return crate::admin::error(
                StatusCode::FORBIDDEN,
                "refused: a request between nodes needs the cluster secret",
            );
        }
        let Some((follower, _)) = self.clock.get() else {
            return crate::admin::error(
                StatusCode::CONFLICT,
                "this node runs on plain system time",
            );
        };
        let body = axum::body::to_bytes(axum::body::Body::new(req.into_body()), 64 * 1024)
            .await
            .unwrap_or_default();
        let resume =
            serde_json::from_slice::<serde_json::Value>(&body).is_ok_and(|v| v["resume"] == true);
        match follower.share(resume).await {
            Ok(keeper) => json_response(
                StatusCode::OK,
                json!({
                    "node": self.node,
                    "keeper": keeper,
                    "clock": crate::admin::clock_status_json(&follower.shared.status()),
                }),
            ),
            Err(e) => crate::admin::error(StatusCode::SERVICE_UNAVAILABLE, e),
        }
    }

    /// This node's own clock, for the cluster view.
    pub(super) fn clock_json(&self) -> Option<serde_json::Value> {
        let (follower, _) = self.clock.get()?;
        Some(crate::admin::clock_status_json(&follower.shared.status()))
    }
}
