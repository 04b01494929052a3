//! `GET /_retsu/events/stream`: the events of `/_retsu/events` as
//! server-sent events, live. The same `queue` and `kind` filters; with
//! `since=N` (or `Last-Event-ID: N`) it first replays what history still
//! holds after event N, then follows; without, it starts from now.
//!
//! Each event is one SSE message: `id` is its event number (so a client's
//! `Last-Event-ID` or `since` resumes after it), `event` its kind, `data`
//! the Event object of `/_retsu/events`. A reader that falls too far
//! behind is cut off (see `event_stream.rs`): its stream ends with
//! `event: missed` and `data: {"next": N}`, N the last event it was sent.
//! Lambda invocations (from mappings and SNS subscriptions) come as
//! `event: invocation` with the invocation log's record as `data` and no
//! `id`: they are not numbered events, and a reconnect does not replay
//! them (`/_retsu/lambda/invocations` keeps the recent ones). A comment
//! line every few seconds keeps idle connections open through
//! proxies. The stream ends when the server shuts down.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use serde_json::json;

use super::history::{event_json, query, INVOCATION};
use super::topics::topic_event_json;
use super::{Admin, AdminRequest};
use crate::engine::events::{Event, TopicEvent};
use crate::event_stream::{Follower, Streamed};
use crate::history::EventQuery;
use crate::lambda::observe::InvocationRecord;

/// How long an idle stream waits before a keep-alive comment.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Most events replayed from history before following.
const MAX_REPLAY: usize = 10_000;

pub fn open(admin: &Arc<Admin>, request: &AdminRequest) -> Response {
    let mut filter = match query(request) {
        Ok(q) => q,
        Err(response) => return response,
    };
    // `since` (0 included: everything history holds) replays first;
    // `Last-Event-ID`, sent by a reconnecting EventSource, resumes too.
    let mut replaying = request.param("since").is_some_and(|v| !v.is_empty());
    if let Some(id) = request.header("last-event-id").and_then(|v| v.parse().ok()) {
        filter.since = filter.since.max(id);
        replaying = true;
    }
    let since = filter.since;
    // Follow first, then read the backlog: an event published in between
    // is in both, and the follower skips what the replay already sent.
    let follower = admin.event_stream.follow(EventQuery {
        queue: filter.queue.clone(),
        kinds: filter.kinds.clone(),
        topic_kinds: filter.topic_kinds.clone(),
        invocations: filter.invocations,
        since: 0,
        limit: 0,
    });
    let mut replay = VecDeque::new();
    let mut missed = false;
    if replaying {
        if let Some(history) = admin.history.as_deref() {
            filter.limit = MAX_REPLAY;
            let (events, gap) = history.events(&filter);
            replay.extend(events);
            missed = gap;
        }
    }
    let state = Stream {
        admin: admin.clone(),
        replay,
        follower,
        last: since,
        missed_first: missed,
        done: false,
    };
    let body = futures_util::stream::unfold(state, |mut s| async move {
        let frame = s.next().await?;
        Some((Ok::<_, Infallible>(frame), s))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(body))
        .expect("static headers")
}

struct Stream {
    admin: Arc<Admin>,
    replay: VecDeque<Event>,
    follower: Follower,
    /// The last event number sent (or the `since` asked for).
    last: u64,
    /// History no longer held everything after `since`: say so first.
    missed_first: bool,
    done: bool,
}

impl Stream {
    /// The next SSE frame, or `None` when the stream is over.
    async fn next(&mut self) -> Option<Bytes> {
        if self.done {
            return None;
        }
        if std::mem::take(&mut self.missed_first) {
            return Some(Bytes::from(format!(
                "event: gap\ndata: {}\n\n",
                json!({"since": self.last, "detail": "history no longer holds every event after since"})
            )));
        }
        if let Some(e) = self.replay.pop_front() {
            return Some(self.frame(&e));
        }
        loop {
            let received = tokio::select! {
                biased;
                _ = self.admin.engine.until_shutdown() => {
                    self.done = true;
                    return None;
                }
                r = tokio::time::timeout(KEEP_ALIVE, self.follower.events.recv()) => r,
            };
            match received {
                Err(_) => return Some(Bytes::from_static(b": keep-alive\n\n")),
                // No event number: it leaves where a reconnect resumes alone.
                Ok(Some(Streamed::Invocation(r))) => return Some(invocation_frame(&r)),
                Ok(Some(e)) if e.seq() <= self.last => continue,
                Ok(Some(Streamed::Message(e))) => return Some(self.frame(&e)),
                Ok(Some(Streamed::Topic(e))) => return Some(self.topic_frame(&e)),
                Ok(None) => {
                    self.done = true;
                    if !self.follower.cut.load(Ordering::Acquire) {
                        return None;
                    }
                    return Some(Bytes::from(format!(
                        "event: missed\ndata: {}\n\n",
                        json!({
                            "next": self.last,
                            "detail": "this reader fell behind and was cut off; reconnect with since=next",
                        })
                    )));
                }
            }
        }
    }

    fn topic_frame(&mut self, e: &TopicEvent) -> Bytes {
        self.last = e.seq;
        Bytes::from(format!(
            "id: {}\nevent: {}\ndata: {}\n\n",
            e.seq,
            e.kind.name(),
            topic_event_json(e)
        ))
    }

    fn frame(&mut self, e: &Event) -> Bytes {
        self.last = e.seq;
        Bytes::from(format!(
            "id: {}\nevent: {}\ndata: {}\n\n",
            e.seq,
            e.kind.name(),
            event_json(&self.admin, e)
        ))
    }
}

/// A Lambda invocation as it happens: `event: invocation`, with no `id`
/// (it is not one of the numbered events history replays).
fn invocation_frame(r: &InvocationRecord) -> Bytes {
    let data = serde_json::to_string(r).unwrap_or_else(|_| "{}".into());
    Bytes::from(format!("event: {INVOCATION}\ndata: {data}\n\n"))
}
