//! The event feed (`/_retsu/events`) and the live event stream
//! (`/_retsu/events/stream`) across shards.
//!
//! Each shard numbers its own events, so one number cannot say where a
//! reader of the merged feed is. A cluster's cursor is one number per
//! shard, written `shard:seq` and comma-separated (`1:120,2:45`): the
//! feed's `next`, the stream's event ids (so a reconnecting EventSource's
//! `Last-Event-ID` resumes every shard where it was), and what `since`
//! takes back. A plain number N means N in every shard, as `since=0`
//! (everything history holds) does on a single server; a shard the cursor
//! does not name starts from 0.

use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use bytes::Bytes;
use serde_json::Value;

use super::gather::{ask_each, merged_response, Answer};
use super::Front;

/// Where a reader is in each shard's events.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Cursor {
    /// For a shard not in `at`.
    base: u64,
    /// (shard, the last event read from it).
    at: Vec<(i32, u64)>,
}

impl Cursor {
    pub(super) fn parse(text: &str) -> Result<Cursor, String> {
        let text = text.trim();
        if let Ok(n) = text.parse::<u64>() {
            return Ok(Cursor {
                base: n,
                at: Vec::new(),
            });
        }
        let mut cursor = Cursor::default();
        for pair in text.split(',') {
            let parsed = pair
                .split_once(':')
                .and_then(|(s, n)| Some((s.trim().parse::<i32>().ok()?, n.trim().parse().ok()?)));
            match parsed {
                Some((shard, n)) if shard >= 1 => cursor.set(shard, n),
                _ => {
                    return Err(format!(
                        "since {text:?}: give an event number, or a cluster's cursor of shard:number pairs (1:120,2:45) as `next` gave it"
                    ))
                }
            }
        }
        Ok(cursor)
    }

    pub(super) fn of(&self, shard: i32) -> u64 {
        self.at
            .iter()
            .find(|(s, _)| *s == shard)
            .map_or(self.base, |(_, n)| *n)
    }

    fn set(&mut self, shard: i32, seq: u64) {
        match self.at.iter_mut().find(|(s, _)| *s == shard) {
            Some(entry) => entry.1 = seq,
            None => self.at.push((shard, seq)),
        }
    }

    /// Every shard of `1..=shards`, named.
    fn text(&self, shards: i32) -> String {
        (1..=shards)
            .map(|s| format!("{s}:{}", self.of(s)))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// The request's query with `since` set to `since` (or left out).
fn with_since(
    parts: &axum::http::request::Parts,
    since: Option<u64>,
) -> axum::http::request::Parts {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (k, v) in form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes()) {
        if k != "since" {
            query.append_pair(&k, &v);
        }
    }
    if let Some(since) = since {
        query.append_pair("since", &since.to_string());
    }
    let query = query.finish();
    let path = parts.uri.path();
    let uri = if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
    };
    let (mut rebuilt, ()) = axum::http::Request::new(()).into_parts();
    rebuilt.method = parts.method.clone();
    rebuilt.uri = uri.parse().unwrap_or_else(|_| parts.uri.clone());
    rebuilt.version = parts.version;
    rebuilt.headers = parts.headers.clone();
    // The shard gets its own number in `since`.
    rebuilt.headers.remove("last-event-id");
    rebuilt
}

/// The cursor a request asks from: `since`, or a reconnecting
/// EventSource's `Last-Event-ID` (which wins, as on a single server it
/// can only be later). `None`: neither (the stream starts from now).
fn asked(parts: &axum::http::request::Parts) -> Result<Option<Cursor>, String> {
    let since = form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes())
        .filter(|(k, _)| k == "since")
        .last()
        .map(|(_, v)| v.into_owned())
        .filter(|v| !v.is_empty());
    let last = parts
        .headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    match (last, since) {
        (Some(last), _) => Cursor::parse(&last).map(Some),
        (None, Some(since)) => Cursor::parse(&since).map(Some),
        (None, None) => Ok(None),
    }
}

impl Front {
    /// `GET /_retsu/events`: each shard's events after its own `since`,
    /// in time order, at most `limit` of them; `next` is the cursor.
    pub(super) async fn events(
        &self,
        parts: &axum::http::request::Parts,
    ) -> axum::response::Response {
        let shards = self.shard_count();
        let cursor = match asked(parts) {
            Ok(cursor) => cursor.unwrap_or_default(),
            Err(e) => return crate::admin::bad_request(e),
        };
        let asks = (1..=shards).map(|s| (s, with_since(parts, Some(cursor.of(s)))));
        let answers = ask_each(self, asks.collect()).await;
        merge_feed(answers, cursor, shards, limit_of(parts))
    }

    /// `GET /_retsu/events/stream`: every shard's stream, as one. Each
    /// shard sends whole events, so their frames interleave event by
    /// event; each frame's id becomes the cursor after it.
    pub(super) async fn streams(
        &self,
        parts: &axum::http::request::Parts,
    ) -> axum::response::Response {
        use futures_util::StreamExt;
        let shards = self.shard_count();
        let cursor = match asked(parts) {
            Ok(cursor) => cursor,
            Err(e) => return crate::admin::bad_request(e),
        };
        let asked = (1..=shards).map(|shard| {
            let parts = with_since(parts, cursor.as_ref().map(|c| c.of(shard)));
            async move {
                (
                    shard,
                    self.answer_from(shard, &parts, Bytes::new(), false).await,
                )
            }
        });
        let mut answers = futures_util::future::join_all(asked).await;
        if let Some(refused) = answers.iter().position(|(_, a)| !a.status().is_success()) {
            return answers.swap_remove(refused).1;
        }
        let shared = Arc::new(Mutex::new(cursor.unwrap_or_default()));
        let mut heads = Vec::new();
        let mut bodies = Vec::new();
        for (shard, answer) in answers {
            let (head, body) = answer.into_parts();
            heads.push(head);
            let cursor = shared.clone();
            let frames = body.into_data_stream().map(move |chunk| {
                chunk.map(|frame| {
                    let mut cursor = cursor.lock().unwrap_or_else(|p| p.into_inner());
                    renumber(&frame, shard, &mut cursor, shards)
                })
            });
            bodies.push(StreamExt::boxed(frames));
        }
        let merged = axum::body::Body::from_stream(futures_util::stream::select_all(bodies));
        match heads.into_iter().next() {
            Some(head) => merged_response(head.status, head.headers, merged),
            None => axum::response::Response::new(merged),
        }
    }
}

/// `limit` as the engine reads it, for the merged page.
fn limit_of(parts: &axum::http::request::Parts) -> usize {
    form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes())
        .filter(|(k, _)| k == "limit")
        .last()
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(crate::admin::EVENTS_DEFAULT_LIMIT)
}

/// The shards' pages as one: events in time order (each tagged with its
/// shard; at one time, each shard's in its order), cut at `limit`, and the
/// cursor after the last one kept from each shard.
fn merge_feed(
    answers: Vec<(i32, Answer)>,
    mut cursor: Cursor,
    shards: i32,
    limit: usize,
) -> axum::response::Response {
    let mut events = Vec::new();
    let mut missed = false;
    let mut first = None;
    for (shard, answer) in answers {
        if !answer.ok() {
            return answer.into_response();
        }
        let Ok(mut page) = serde_json::from_slice::<Value>(&answer.body) else {
            return answer.into_response();
        };
        missed |= page["missed"].as_bool().unwrap_or(false);
        if let Some(list) = page["events"].as_array_mut() {
            events.extend(list.drain(..).map(|mut e| {
                e["shard"] = shard.into();
                e
            }));
        }
        first.get_or_insert(answer);
    }
    let Some(first) = first else {
        return crate::admin::bad_request("no shard answered");
    };
    // By time, as the other merged lists; each shard's in its own order.
    let mut events = Value::Array(events);
    super::gather::order_lists(&mut events);
    let mut listed = match events {
        Value::Array(listed) => listed,
        _ => Vec::new(),
    };
    listed.truncate(limit);
    for e in &listed {
        if let (Some(shard), Some(seq)) = (e["shard"].as_i64(), e["seq"].as_u64()) {
            cursor.set(shard as i32, seq);
        }
    }
    let body = serde_json::json!({
        "events": listed,
        "next": cursor.text(shards),
        "missed": missed,
    });
    merged_response(StatusCode::OK, first.headers, body.to_string().into())
}

/// One shard's SSE frame with the cluster's cursor: its `id` (a numbered
/// event) moves the cursor and becomes it; a `missed` notice's `next`
/// and a `gap` notice's `since` are given as the cursor too. Anything
/// else (keep-alives, invocations) passes as it came.
fn renumber(frame: &Bytes, shard: i32, cursor: &mut Cursor, shards: i32) -> Bytes {
    let Ok(text) = std::str::from_utf8(frame) else {
        return frame.clone();
    };
    if let Some(rest) = text.strip_prefix("id: ") {
        let Some((id, rest)) = rest.split_once('\n') else {
            return frame.clone();
        };
        let Ok(seq) = id.parse::<u64>() else {
            return frame.clone();
        };
        cursor.set(shard, seq);
        return Bytes::from(format!("id: {}\n{rest}", cursor.text(shards)));
    }
    for (event, field) in [("missed", "next"), ("gap", "since")] {
        let Some(data) = text
            .strip_prefix("event: ")
            .and_then(|t| t.strip_prefix(event))
            .and_then(|t| t.strip_prefix("\ndata: "))
        else {
            continue;
        };
        let Ok(mut value) = serde_json::from_str::<Value>(data.trim_end()) else {
            return frame.clone();
        };
        if let (true, Some(n)) = (event == "missed", value[field].as_u64()) {
            cursor.set(shard, n);
        }
        value[field] = cursor.text(shards).into();
        return Bytes::from(format!("event: {event}\ndata: {value}\n\n"));
    }
    frame.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_is_a_number_for_every_shard_or_one_per_shard() {
        let plain = Cursor::parse("7").unwrap();
        assert_eq!((plain.of(1), plain.of(3)), (7, 7));
        assert_eq!(plain.text(3), "1:7,2:7,3:7");
        let each = Cursor::parse("1:120, 3:45").unwrap();
        assert_eq!((each.of(1), each.of(2), each.of(3)), (120, 0, 45));
        assert_eq!(
            Cursor::parse(&each.text(3)).unwrap().text(3),
            "1:120,2:0,3:45"
        );
        for bad in ["", "x", "1:", "0:5", "1:2;3:4", "-1", "1:-2"] {
            assert!(Cursor::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn frames_carry_the_cursor_after_them() {
        let mut cursor = Cursor::parse("1:3,2:9").unwrap();
        let event = Bytes::from("id: 4\nevent: sent\ndata: {\"seq\":4}\n\n");
        let out = renumber(&event, 1, &mut cursor, 2);
        assert_eq!(&out[..], b"id: 1:4,2:9\nevent: sent\ndata: {\"seq\":4}\n\n");
        let missed = Bytes::from("event: missed\ndata: {\"detail\":\"cut\",\"next\":12}\n\n");
        let out = renumber(&missed, 2, &mut cursor, 2);
        let text = std::str::from_utf8(&out).unwrap();
        assert!(text.starts_with("event: missed\ndata: "), "{text}");
        assert!(text.contains("\"next\":\"1:4,2:12\""), "{text}");
        let keep_alive = Bytes::from_static(b": keep-alive\n\n");
        assert_eq!(renumber(&keep_alive, 1, &mut cursor, 2), keep_alive);
        assert_eq!(cursor.text(2), "1:4,2:12");
    }
}
