//! FIFO message groups exactly as AWS serves them: the
//! sequences recorded on real SQS, each replayed over both wires — the
//! SDK (AWS JSON) and raw query-protocol form posts (XML).
//!
//! The rule: a receive may return a message only if every earlier stored
//! message of its group is visible; groups are served in order of the
//! moment their oldest message last became visible, ties in delivery
//! order. Time moves only through the manual clock.

mod common;

use common::*;

/// Which protocol a scenario speaks.
#[derive(Debug, Clone, Copy)]
enum Wire {
    Json,
    Query,
}

/// A received message: what the scenarios compare and act on.
#[derive(Debug, Clone)]
struct Got {
    body: String,
    handle: String,
}

/// One FIFO queue (content-based deduplication on) reached over one wire.
struct Fifo<'a> {
    t: &'a TestServer,
    wire: Wire,
    url: String,
}

fn names(got: &[Got]) -> Vec<&str> {
    got.iter().map(|g| g.body.as_str()).collect()
}

/// The group of a body named `<group>-<message>`.
fn group(body: &str) -> &str {
    body.split('-').next().expect("group")
}

impl<'a> Fifo<'a> {
    async fn create(t: &'a TestServer, wire: Wire, name: &str, extra: &[(&str, &str)]) -> Fifo<'a> {
        let mut attrs = vec![("FifoQueue", "true"), ("ContentBasedDeduplication", "true")];
        attrs.extend_from_slice(extra);
        let url = match wire {
            Wire::Json => t.create_queue_with(name, &attrs).await,
            Wire::Query => {
                let mut params = vec![("QueueName".to_string(), name.to_string())];
                for (i, (k, v)) in attrs.iter().enumerate() {
                    params.push((format!("Attribute.{}.Name", i + 1), k.to_string()));
                    params.push((format!("Attribute.{}.Value", i + 1), v.to_string()));
                }
                let xml = query(t, "CreateQueue", &params).await;
                xml_text(&xml, "QueueUrl")
            }
        };
        Fifo { t, wire, url }
    }

    /// Sends `body` to the group its name starts with.
    async fn send(&self, body: &str) {
        let group = group(body);
        match self.wire {
            Wire::Json => {
                self.t.send_to_group(&self.url, body, group, None).await;
            }
            Wire::Query => {
                query(
                    self.t,
                    "SendMessage",
                    &pairs(&[
                        ("QueueUrl", &self.url),
                        ("MessageBody", body),
                        ("MessageGroupId", group),
                    ]),
                )
                .await;
            }
        }
    }

    async fn send_all(&self, bodies: &[&str]) {
        for b in bodies {
            self.send(b).await;
        }
    }

    /// A short-poll receive of up to `max`, with the queue's visibility
    /// timeout unless `visibility` is given.
    async fn receive(&self, max: i32, visibility: Option<i32>) -> Vec<Got> {
        match self.wire {
            Wire::Json => {
                let mut req = self
                    .t
                    .client
                    .receive_message()
                    .queue_url(&self.url)
                    .max_number_of_messages(max)
                    .wait_time_seconds(0);
                if let Some(v) = visibility {
                    req = req.visibility_timeout(v);
                }
                let out = req.send().await.expect("ReceiveMessage");
                out.messages()
                    .iter()
                    .map(|m| Got {
                        body: m.body().expect("Body").to_string(),
                        handle: m.receipt_handle().expect("ReceiptHandle").to_string(),
                    })
                    .collect()
            }
            Wire::Query => {
                let max = max.to_string();
                let visibility = visibility.map(|v| v.to_string());
                let mut params = vec![
                    ("QueueUrl", self.url.as_str()),
                    ("MaxNumberOfMessages", max.as_str()),
                    ("WaitTimeSeconds", "0"),
                ];
                if let Some(v) = &visibility {
                    params.push(("VisibilityTimeout", v.as_str()));
                }
                let xml = query(self.t, "ReceiveMessage", &pairs(&params)).await;
                xml_all(&xml, "Message")
                    .iter()
                    .map(|m| Got {
                        body: xml_text(m, "Body"),
                        handle: xml_text(m, "ReceiptHandle"),
                    })
                    .collect()
            }
        }
    }

    async fn delete(&self, m: &Got) {
        match self.wire {
            Wire::Json => self.t.delete_message(&self.url, &m.handle).await,
            Wire::Query => {
                query(
                    self.t,
                    "DeleteMessage",
                    &pairs(&[("QueueUrl", &self.url), ("ReceiptHandle", &m.handle)]),
                )
                .await;
            }
        }
    }

    async fn change_visibility(&self, m: &Got, secs: i32) {
        match self.wire {
            Wire::Json => self
                .t
                .change_visibility(&self.url, &m.handle, secs)
                .await
                .expect("ChangeMessageVisibility"),
            Wire::Query => {
                let secs = secs.to_string();
                query(
                    self.t,
                    "ChangeMessageVisibility",
                    &pairs(&[
                        ("QueueUrl", &self.url),
                        ("ReceiptHandle", &m.handle),
                        ("VisibilityTimeout", &secs),
                    ]),
                )
                .await;
            }
        }
    }
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A query-protocol request that must succeed; returns the compact XML.
async fn query(t: &TestServer, action: &str, params: &[(String, String)]) -> String {
    let mut all = vec![("Action", action), ("Version", "2012-11-05")];
    all.extend(params.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let raw = t.form_post("/", &all).await;
    assert_eq!(raw.status, 200, "{action}: {}", raw.body);
    let xml = raw.compact_xml();
    assert!(xml.contains(&format!("<{action}Response")), "{xml}");
    xml
}

/// Runs a scenario once per wire, each on a fresh server.
macro_rules! both_wires {
    ($json:ident, $query:ident, $scenario:ident) => {
        #[tokio::test]
        async fn $json() {
            $scenario(Wire::Json).await;
        }
        #[tokio::test]
        async fn $query() {
            $scenario(Wire::Query).await;
        }
    };
}

// ------------------------------------------------------ recorded sequences

/// receive(3, VT 0) takes g1's whole run and starts g2's; the next
/// receive serves g3 (waiting since its send) before the groups released
/// at once, those in delivery order.
async fn zero_visibility_requeues_behind_waiting_groups(wire: Wire) {
    let t = TestServer::start().await;
    let q = Fifo::create(&t, wire, "seq1.fifo", &[]).await;
    q.send_all(&["g1-m1", "g2-m1", "g2-m2", "g3-m1", "g1-m2"])
        .await;
    let got = q.receive(3, Some(0)).await;
    assert_eq!(names(&got), ["g1-m1", "g1-m2", "g2-m1"]);
    let got = q.receive(10, Some(0)).await;
    assert_eq!(names(&got), ["g3-m1", "g1-m1", "g1-m2", "g2-m1", "g2-m2"]);
}
both_wires!(
    recorded_1_zero_visibility_json,
    recorded_1_zero_visibility_query,
    zero_visibility_requeues_behind_waiting_groups
);

/// A head released while the next message of its group is in flight is
/// receivable on its own, behind the group that was already waiting.
async fn released_head_comes_back_alone(wire: Wire, by_timeout: bool) {
    let t = TestServer::start().await;
    let q = Fifo::create(&t, wire, "seq2.fifo", &[("VisibilityTimeout", "30")]).await;
    q.send_all(&["g1-m1", "g1-m2", "g2-m1"]).await;
    let got = q.receive(2, None).await;
    assert_eq!(names(&got), ["g1-m1", "g1-m2"]);
    if by_timeout {
        q.change_visibility(&got[0], 1).await;
        t.advance_secs(2);
    } else {
        q.change_visibility(&got[0], 0).await;
    }
    let again = q.receive(3, None).await;
    assert_eq!(names(&again), ["g2-m1", "g1-m1"]);
}

async fn released_head_by_zero(wire: Wire) {
    released_head_comes_back_alone(wire, false).await;
}

async fn released_head_by_short_timeout(wire: Wire) {
    released_head_comes_back_alone(wire, true).await;
}
both_wires!(
    recorded_2_release_head_with_zero_json,
    recorded_2_release_head_with_zero_query,
    released_head_by_zero
);
both_wires!(
    recorded_2_release_head_with_one_second_json,
    recorded_2_release_head_with_one_second_query,
    released_head_by_short_timeout
);

/// One group foo, bar, baz all received (visibility 1 s); one of them
/// extended to 4 s; after 2.5 s a receive returns what precedes it.
async fn extended_message_blocks_only_what_follows(wire: Wire, extended: usize) {
    let t = TestServer::start().await;
    let q = Fifo::create(&t, wire, "seq3.fifo", &[("VisibilityTimeout", "1")]).await;
    q.send_all(&["g-foo", "g-bar", "g-baz"]).await;
    let got = q.receive(10, None).await;
    assert_eq!(names(&got), ["g-foo", "g-bar", "g-baz"]);
    q.change_visibility(&got[extended], 4).await;
    t.advance_ms(2_500);
    let again = q.receive(5, None).await;
    let expected = &["g-foo", "g-bar", "g-baz"][..extended];
    assert_eq!(names(&again), expected, "extended {}", got[extended].body);
}

async fn extend_foo(wire: Wire) {
    extended_message_blocks_only_what_follows(wire, 0).await;
}
async fn extend_bar(wire: Wire) {
    extended_message_blocks_only_what_follows(wire, 1).await;
}
async fn extend_baz(wire: Wire) {
    extended_message_blocks_only_what_follows(wire, 2).await;
}
both_wires!(
    recorded_3_extend_foo_json,
    recorded_3_extend_foo_query,
    extend_foo
);
both_wires!(
    recorded_3_extend_bar_json,
    recorded_3_extend_bar_query,
    extend_bar
);
both_wires!(
    recorded_3_extend_baz_json,
    recorded_3_extend_baz_query,
    extend_baz
);

/// Groups whose messages time out rank by the moment they came back
/// (ties in delivery order), behind a group waiting since its send.
async fn timed_out_groups_rank_behind_waiting_ones(wire: Wire) {
    let t = TestServer::start().await;
    let q = Fifo::create(&t, wire, "seq4.fifo", &[("VisibilityTimeout", "1")]).await;
    q.send_all(&["g1-m1", "g1-m2", "g1-m3", "g1-m4", "g2-m1", "g3-m1"])
        .await;
    assert_eq!(names(&q.receive(2, None).await), ["g1-m1", "g1-m2"]);
    assert_eq!(names(&q.receive(1, None).await), ["g2-m1"]);
    t.advance_secs(2);
    let got = q.receive(10, Some(0)).await;
    assert_eq!(
        names(&got),
        ["g3-m1", "g1-m1", "g1-m2", "g1-m3", "g1-m4", "g2-m1"]
    );
}
both_wires!(
    recorded_4_timed_out_groups_json,
    recorded_4_timed_out_groups_query,
    timed_out_groups_rank_behind_waiting_ones
);

/// A group unblocked by deleting its head ranks by its new oldest
/// message's send time; a content-based duplicate is not stored.
async fn deleted_head_ranks_by_the_next_send(wire: Wire) {
    let t = TestServer::start().await;
    let q = Fifo::create(&t, wire, "seq5.fifo", &[]).await;
    q.send_all(&[
        "g1-m1", "g2-m1", "g1-m2", "g2-m2", "g1-m2", "g1-m3", "g1-m4", "g3-m1",
    ])
    .await;
    let got = q.receive(2, None).await;
    assert_eq!(names(&got), ["g1-m1", "g1-m2"]);
    for m in &got {
        q.delete(m).await;
    }
    let got = q.receive(10, None).await;
    assert_eq!(names(&got), ["g2-m1", "g2-m2", "g1-m3", "g1-m4", "g3-m1"]);
}
both_wires!(
    recorded_5_deleted_head_json,
    recorded_5_deleted_head_query,
    deleted_head_ranks_by_the_next_send
);

/// Which messages of one group A, B, C a receive returns, in four cases of
/// in-flight and visible messages.
async fn in_flight_blocks_itself_and_later_messages(wire: Wire) {
    let t = TestServer::start().await;
    let q = Fifo::create(&t, wire, "table.fifo", &[]).await;
    q.send_all(&["g-A", "g-B", "g-C"]).await;
    // A in flight, B visible: nothing of the group.
    let a = q.receive(1, None).await;
    assert_eq!(names(&a), ["g-A"]);
    assert!(q.receive(10, None).await.is_empty());
    q.change_visibility(&a[0], 0).await;
    let all = q.receive(10, None).await;
    assert_eq!(names(&all), ["g-A", "g-B", "g-C"]);
    // A visible again, B in flight: A.
    q.change_visibility(&all[0], 0).await;
    let a = q.receive(10, None).await;
    assert_eq!(names(&a), ["g-A"]);
    // A visible, B visible, C in flight: A, B.
    q.change_visibility(&a[0], 0).await;
    q.change_visibility(&all[1], 0).await;
    let ab = q.receive(10, None).await;
    assert_eq!(names(&ab), ["g-A", "g-B"]);
    // A visible, B in flight, C visible: A.
    q.change_visibility(&ab[0], 0).await;
    q.change_visibility(&all[2], 0).await;
    assert_eq!(names(&q.receive(10, None).await), ["g-A"]);
}
both_wires!(
    in_flight_table_json,
    in_flight_table_query,
    in_flight_blocks_itself_and_later_messages
);

// --------------------------------------------------------------- FIFO facts

/// DeduplicationScope (and FifoThroughputLimit) changed later are stored
/// and returned, but deduplication keeps the scope the queue was created
/// with.
#[tokio::test]
async fn deduplication_scope_is_frozen_at_creation() {
    let t = TestServer::start().await;
    let per_queue = t
        .create_fifo_queue("scope-q.fifo", &[("ContentBasedDeduplication", "true")])
        .await;
    t.set_attributes(
        &per_queue,
        &[
            ("DeduplicationScope", "messageGroup"),
            ("FifoThroughputLimit", "perMessageGroupId"),
        ],
    )
    .await;
    let attrs = t
        .attributes(&per_queue, &["DeduplicationScope", "FifoThroughputLimit"])
        .await;
    assert_eq!(attrs["DeduplicationScope"], "messageGroup");
    assert_eq!(attrs["FifoThroughputLimit"], "perMessageGroupId");
    let first = t.send_to_group(&per_queue, "same", "g1", None).await;
    let second = t.send_to_group(&per_queue, "same", "g2", None).await;
    assert_eq!(
        first.message_id(),
        second.message_id(),
        "still deduplicated across groups"
    );
    assert_eq!(t.counts(&per_queue).await, (1, 0, 0));

    let per_group = t
        .create_fifo_queue(
            "scope-g.fifo",
            &[
                ("ContentBasedDeduplication", "true"),
                ("DeduplicationScope", "messageGroup"),
            ],
        )
        .await;
    t.set_attributes(&per_group, &[("DeduplicationScope", "queue")])
        .await;
    assert_eq!(
        t.attribute(&per_group, "DeduplicationScope")
            .await
            .as_deref(),
        Some("queue")
    );
    let first = t.send_to_group(&per_group, "same", "g1", None).await;
    let second = t.send_to_group(&per_group, "same", "g2", None).await;
    assert_ne!(first.message_id(), second.message_id(), "still per group");
    let dup = t.send_to_group(&per_group, "same", "g1", None).await;
    assert_eq!(dup.message_id(), first.message_id());
    assert_eq!(t.counts(&per_group).await, (2, 0, 0));
}

/// DelaySeconds=0 on a FIFO message is ignored: the queue's delay holds.
/// On a standard queue it still overrides the queue's delay.
#[tokio::test]
async fn per_message_zero_delay_is_ignored_on_fifo_only() {
    let t = TestServer::start().await;
    let fifo = t
        .create_fifo_queue("delay0.fifo", &[("DelaySeconds", "5")])
        .await;
    t.client
        .send_message()
        .queue_url(&fifo)
        .message_body("x")
        .message_group_id("g")
        .message_deduplication_id("d")
        .delay_seconds(0)
        .send()
        .await
        .expect("DelaySeconds=0 on FIFO");
    assert_eq!(t.counts(&fifo).await, (0, 0, 1));
    t.advance_secs(4);
    assert!(t.receive(&fifo, 10).await.is_empty());
    t.advance_secs(1);
    assert_eq!(t.receive_one(&fifo).await.body(), Some("x"));

    let standard = t
        .create_queue_with("delay0", &[("DelaySeconds", "5")])
        .await;
    t.client
        .send_message()
        .queue_url(&standard)
        .message_body("y")
        .delay_seconds(0)
        .send()
        .await
        .expect("SendMessage");
    assert_eq!(t.receive_one(&standard).await.body(), Some("y"));

    // Over the query protocol too.
    let raw = t
        .form_post(
            "/",
            &[
                ("Action", "SendMessage"),
                ("Version", "2012-11-05"),
                ("QueueUrl", &fifo),
                ("MessageBody", "z"),
                ("MessageGroupId", "g"),
                ("MessageDeduplicationId", "dz"),
                ("DelaySeconds", "0"),
            ],
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert_eq!(t.counts(&fifo).await, (0, 1, 1));
}

/// PurgeQueue forgets the queue's deduplication ids: the same id sent
/// right after is a new message and is delivered.
#[tokio::test]
async fn purge_forgets_fifo_deduplication_ids() {
    let t = TestServer::start().await;
    let url = t.create_fifo_queue("purge-dedup.fifo", &[]).await;
    let before = t.send_to_group(&url, "old", "g", Some("d1")).await;
    t.client
        .purge_queue()
        .queue_url(&url)
        .send()
        .await
        .expect("PurgeQueue");
    let after = t.send_to_group(&url, "new", "g", Some("d1")).await;
    assert_ne!(before.message_id(), after.message_id());
    let m = t.receive_one(&url).await;
    assert_eq!(m.body(), Some("new"));
    // Without a purge the id still deduplicates.
    let again = t.send_to_group(&url, "newer", "g", Some("d1")).await;
    assert_eq!(again.message_id(), after.message_id());
}
