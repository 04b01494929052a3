//! Requests passed on to the node holding the lease, over kept-alive
//! HTTP/1.1 connections: one request per connection at a time, so the
//! pool holds as many as were ever busy at once (long polls included,
//! which wait at the holder). A request goes with its body read whole
//! (as the holder would read it; SNS's HTTP deliveries use the same
//! client), its answer streams back as it comes.
//!
//! A connection goes back to the pool when its response body has been
//! read to the end; one dropped before that is closed.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::header::{self, HeaderName};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body as _, Frame, Incoming, SizeHint};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

/// Idle connections kept per node; more are closed when they come back.
const MAX_IDLE: usize = 256;
/// How long connecting to a node may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

type Sender = SendRequest<Full<Bytes>>;

#[derive(Default)]
pub struct Pool {
    idle: Mutex<HashMap<String, Vec<Sender>>>,
}

impl Pool {
    /// Sends `request` to `authority` (host:port) and returns the answer
    /// as it arrives; Err before anything was answered.
    pub async fn send(
        self: &Arc<Self>,
        authority: &str,
        request: hyper::Request<Full<Bytes>>,
    ) -> Result<axum::response::Response, String> {
        let mut sender = match self.take(authority).await {
            Some(sender) => sender,
            None => connect(authority).await?,
        };
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("forwarding to {authority}: {e}"))?;
        let (mut parts, body) = response.into_parts();
        for name in HOP_BY_HOP {
            parts.headers.remove(name);
        }
        let body = Returning {
            body,
            back: Some((sender, self.clone(), authority.to_string())),
            done: false,
        };
        Ok(axum::response::Response::from_parts(parts, Body::new(body)))
    }

    /// An idle connection that is still open and ready.
    async fn take(&self, authority: &str) -> Option<Sender> {
        loop {
            let mut sender = self
                .idle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_mut(authority)?
                .pop()?;
            if sender.is_closed() {
                continue;
            }
            // Usually ready: no timer then.
            if sender.is_ready() {
                return Some(sender);
            }
            // Just back from a finished response: ready at once, or gone.
            if let Ok(Ok(())) =
                tokio::time::timeout(Duration::from_millis(100), sender.ready()).await
            {
                return Some(sender);
            }
        }
    }

    fn give_back(&self, authority: String, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        let list = idle.entry(authority).or_default();
        if list.len() < MAX_IDLE {
            list.push(sender);
        }
    }
}

/// Headers about one connection, not the request (as names, not strings:
/// a lookup by string parses the name first, every time).
pub const HOP_BY_HOP: [HeaderName; 6] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    header::TE,
    header::TRAILER,
    header::UPGRADE,
];

async fn connect(authority: &str) -> Result<Sender, String> {
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(authority))
        .await
        .map_err(|_| format!("connecting to {authority}: timed out"))?
        .map_err(|e| format!("connecting to {authority}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("connecting to {authority}: {e}"))?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!("connection to a cluster node ended: {e}");
        }
    });
    Ok(sender)
}

/// A forwarded response's body; its connection returns to the pool once
/// the body has been read to the end.
struct Returning {
    body: Incoming,
    back: Option<(Sender, Arc<Pool>, String)>,
    done: bool,
}

impl hyper::body::Body for Returning {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.done = true;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Returning {
    fn drop(&mut self) {
        if self.done || self.body.is_end_stream() {
            if let Some((sender, pool, authority)) = self.back.take() {
                pool.give_back(authority, sender);
            }
        }
    }
}
