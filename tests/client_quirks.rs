//! Regressions found by the real clients of the compatibility matrix
//! (compat/): each test replays, over raw HTTP, the exact request shape a
//! pinned client sends, so the server keeps answering it as AWS does.

mod common;

use common::*;

/// The inside of `<{op}Result>` of a successful query response.
fn result_xml(raw: &Raw, op: &str) -> String {
    assert_eq!(raw.status, 200, "{op}: {}", raw.body);
    let body = raw.compact_xml();
    let open = format!("<{op}Result>");
    let close = format!("</{op}Result>");
    match (body.find(&open), body.find(&close)) {
        (Some(a), Some(b)) => body[a + open.len()..b].to_string(),
        _ => String::new(),
    }
}

/// aws-java-sdk-sqs 1.12.583 (the last Java v1 on the query protocol)
/// serialises TagQueue's tags as `Tags.N.Key` / `Tags.N.Value`, posted to
/// the queue URL's path; the server used to answer MissingParameter.
#[tokio::test]
async fn java_v1_query_tag_queue_uses_tags_n_key() {
    let t = TestServer::start().await;
    let url = t.create_queue("java-v1-tags").await;
    let path = format!("/{ACCOUNT}/java-v1-tags");
    let raw = t
        .form_post(
            &path,
            &[
                ("Action", "TagQueue"),
                ("Version", "2012-11-05"),
                ("Tags.1.Key", "team"),
                ("Tags.1.Value", "b"),
                ("Tags.2.Key", "cost-center"),
                ("Tags.2.Value", "42"),
            ],
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    let raw = t
        .form_post("/", &[("Action", "ListQueueTags"), ("QueueUrl", &url)])
        .await;
    let tags = result_xml(&raw, "ListQueueTags");
    assert!(
        tags.contains("<Tag><Key>team</Key><Value>b</Value></Tag>")
            && tags.contains("<Tag><Key>cost-center</Key><Value>42</Value></Tag>"),
        "{tags}"
    );
    // The usual `Tag.N.Key` spelling still works.
    let raw = t
        .form_post(
            &path,
            &[
                ("Action", "TagQueue"),
                ("Tag.1.Key", "env"),
                ("Tag.1.Value", "ci"),
            ],
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    let raw = t
        .form_post("/", &[("Action", "ListQueueTags"), ("QueueUrl", &url)])
        .await;
    assert!(result_xml(&raw, "ListQueueTags").contains("<Key>env</Key><Value>ci</Value>"));
}
