//! `GET /_retsu/events/stream`: the live event stream as server-sent
//! events, read off a raw socket as a browser's EventSource would.

mod common;

use std::time::{Duration, Instant};

use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// An open stream: the socket, and what has been read from it so far.
struct Reader {
    socket: TcpStream,
    text: String,
}

impl Reader {
    async fn open(t: &TestServer, query: &str) -> Reader {
        let address = t.endpoint.trim_start_matches("http://").to_string();
        let socket = TcpStream::connect(&address).await.unwrap();
        Reader::start(socket, &address, query).await
    }

    async fn start(mut socket: TcpStream, address: &str, query: &str) -> Reader {
        let request = format!(
            "GET /_retsu/events/stream{query} HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n\r\n"
        );
        socket.write_all(request.as_bytes()).await.unwrap();
        let mut reader = Reader {
            socket,
            text: String::new(),
        };
        reader.until("\r\n\r\n", Duration::from_secs(5)).await;
        assert!(reader.text.starts_with("HTTP/1.1 200"), "{}", reader.text);
        assert!(
            reader
                .text
                .to_ascii_lowercase()
                .contains("content-type: text/event-stream"),
            "{}",
            reader.text
        );
        reader
    }

    /// Reads until `needle` has arrived (panics after `limit`).
    async fn until(&mut self, needle: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        let mut buf = vec![0u8; 64 * 1024];
        while !self.text.contains(needle) {
            let left = deadline.saturating_duration_since(Instant::now());
            let n = tokio::time::timeout(left, self.socket.read(&mut buf))
                .await
                .unwrap_or_else(|_| panic!("no {needle:?} in time; read so far: {}", self.tail()))
                .unwrap();
            assert!(
                n > 0,
                "the stream closed before {needle:?}: {}",
                self.tail()
            );
            self.text.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }

    fn tail(&self) -> &str {
        let start = self.text.len().saturating_sub(2000);
        let start = (start..self.text.len())
            .find(|i| self.text.is_char_boundary(*i))
            .unwrap_or(0);
        &self.text[start..]
    }

    /// The `data:` lines of the events of `kind` read so far.
    fn data_of(&self, kind: &str) -> Vec<serde_json::Value> {
        let marker = format!("event: {kind}\ndata: ");
        self.text
            .match_indices(&marker)
            .map(|(i, _)| {
                let rest = &self.text[i + marker.len()..];
                serde_json::from_str(&rest[..rest.find('\n').unwrap()]).unwrap()
            })
            .collect()
    }
}

#[tokio::test]
async fn a_send_arrives_on_the_stream_within_100_ms() {
    let t = TestServer::start().await;
    let url = t.create_queue("live").await;
    let mut reader = Reader::open(&t, "").await;
    let before = Instant::now();
    let id = t.send(&url, "hello").await;
    reader
        .until(&format!("\"message_id\":\"{id}\""), Duration::from_secs(5))
        .await;
    let took = before.elapsed();
    assert!(took < Duration::from_millis(100), "the event took {took:?}");
    let sent = reader.data_of("sent");
    assert_eq!(sent.len(), 1, "{}", reader.tail());
    assert_eq!(sent[0]["queue"]["name"], "live");
    let seq = sent[0]["seq"].as_u64().unwrap();
    let id = reader
        .text
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .unwrap();
    if common::in_cluster() {
        // A cluster's event id is its cursor: a number per shard.
        assert!(
            id.split(',').any(|p| p.ends_with(&format!(":{seq}"))),
            "{id}"
        );
    } else {
        assert_eq!(id, seq.to_string());
    }
}

#[tokio::test]
async fn filters_and_since_replay_then_follow_without_gaps_or_repeats() {
    let t = TestServer::start().await;
    let a = t.create_queue("stream-a").await;
    let b = t.create_queue("stream-b").await;
    let early: Vec<String> = vec![t.send(&a, "1").await, t.send(&a, "2").await];
    t.send(&b, "other queue").await;
    t.receive(&a, 1).await;
    let mut reader = Reader::open(
        &t,
        "?queue=us-east-1/000000000000/stream-a&kind=sent&since=0",
    )
    .await;
    let late = t.send(&a, "3").await;
    t.send(&b, "still the other queue").await;
    reader
        .until(
            &format!("\"message_id\":\"{late}\""),
            Duration::from_secs(5),
        )
        .await;
    let ids: Vec<String> = reader
        .data_of("sent")
        .iter()
        .map(|e| e["message_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        ids,
        [early[0].clone(), early[1].clone(), late],
        "{}",
        reader.tail()
    );
    assert!(reader.data_of("received").is_empty(), "kind filter");
    let seqs: Vec<u64> = reader
        .data_of("sent")
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");

    // Resuming after the second event replays only the third.
    let mut resumed = Reader::open(
        &t,
        &format!(
            "?queue=us-east-1/000000000000/stream-a&kind=sent&since={}",
            seqs[1]
        ),
    )
    .await;
    resumed
        .until(
            &format!("\"message_id\":\"{}\"", ids[2]),
            Duration::from_secs(5),
        )
        .await;
    assert_eq!(resumed.data_of("sent").len(), 1, "{}", resumed.tail());
}

#[tokio::test]
async fn bad_filters_are_refused_in_json() {
    let t = TestServer::start().await;
    let raw = t
        .get("/_retsu/events/stream", &[("kind", "nonsense")])
        .await;
    assert_eq!(raw.status, 400);
    assert!(raw.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("unknown kind"));
}

/// A reader that stops reading is cut off with a final `missed` event once
/// its buffer is full, and the requests meanwhile are not held up by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_reader_is_cut_off_without_slowing_requests() {
    if common::in_cluster() {
        eprintln!("skipped in a cluster: a stalled reader is noticed through the socket buffers between it and the holder; the proxy and a forwarding node add theirs, past the test's time limit");
        return;
    }
    let t = TestServer::start().await;
    let url = t.create_queue("flood").await;
    let batch = |n: usize| -> Vec<SendMessageBatchRequestEntry> {
        (0..10)
            .map(|i| {
                SendMessageBatchRequestEntry::builder()
                    .id(format!("e{i}"))
                    .message_body(format!("body {n}-{i} {}", "x".repeat(200)))
                    .build()
                    .unwrap()
            })
            .collect()
    };
    let send_batches = |count: usize, from: usize| {
        let (client, url) = (t.client.clone(), url.clone());
        async move {
            let mut took = Vec::with_capacity(count);
            for n in from..from + count {
                let started = Instant::now();
                client
                    .send_message_batch()
                    .queue_url(&url)
                    .set_entries(Some(batch(n)))
                    .send()
                    .await
                    .unwrap();
                took.push(started.elapsed());
            }
            took.sort();
            took
        }
    };
    let quiet = send_batches(400, 0).await;

    // A reader with a small receive window that never reads.
    let address = t.endpoint.trim_start_matches("http://").to_string();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let socket = socket.connect(address.parse().unwrap()).await.unwrap();
    let mut stalled = Reader::start(socket, &address, "").await;

    // Far more events than its buffer and the sockets hold.
    let loaded = send_batches(4000, 400).await;
    let p50 = |v: &[Duration]| v[v.len() / 2];
    let (quiet_p50, loaded_p50, loaded_max) = (p50(&quiet), p50(&loaded), *loaded.last().unwrap());
    eprintln!(
        "send-batch latency: quiet p50 {quiet_p50:?}; with a stalled reader p50 {loaded_p50:?}, max {loaded_max:?}"
    );
    assert!(
        loaded_max < Duration::from_secs(1),
        "a request waited on the stalled reader: {loaded_max:?}"
    );
    assert!(
        loaded_p50 < quiet_p50 * 3 + Duration::from_millis(2),
        "requests slowed with a stalled reader: p50 {quiet_p50:?} -> {loaded_p50:?}"
    );

    // Now it reads: what was buffered, then the cut-off notice, then the end.
    stalled
        .until("event: missed\n", Duration::from_secs(30))
        .await;
    stalled.until("\r\n0\r\n\r\n", Duration::from_secs(5)).await;
    let missed = stalled.data_of("missed");
    assert_eq!(missed.len(), 1);
    let next = missed[0]["next"].as_u64().unwrap();
    let sent = stalled.data_of("sent");
    assert!(
        !sent.is_empty() && sent.len() < 40_000,
        "{} sent events",
        sent.len()
    );
    assert_eq!(sent.last().unwrap()["seq"].as_u64().unwrap(), next);

    // A new reader is served as usual.
    let mut fresh = Reader::open(&t, "").await;
    let id = t.send(&url, "after").await;
    fresh
        .until(&format!("\"message_id\":\"{id}\""), Duration::from_secs(5))
        .await;
}
