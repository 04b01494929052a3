//! Listings across shards: queues and topics spread over the store's
//! shards and the shards over three nodes, yet ListQueues (JSON and query
//! protocols), ListTopics and ListPlatformApplications from any node list
//! every one of them, paged
//! as a single server pages. Also the `x-retsu-shard` header a node uses
//! to ask another node's shard alone.
//! Skipped without `RETSU_TEST_POSTGRES` (`scripts/postgres.sh run …`).

mod common;

use std::time::{Duration, Instant};

use common::cluster::{Cluster, SECRET};
use common::{pg, sdk_client, sns_client};

const LEASE: Duration = Duration::from_secs(2);
const QUEUES: usize = 20;
/// More than one SNS page (100).
const TOPICS: usize = 130;
const APPLICATIONS: usize = 12;

fn no_postgres() -> bool {
    if pg::admin_url().is_none() {
        eprintln!("skipped: RETSU_TEST_POSTGRES is not set (scripts/postgres.sh run … gives one)");
        return true;
    }
    false
}

/// Waits until every shard has a live holder, as every node sees it;
/// returns, per shard (in order), the index of the node holding it.
async fn every_shard_held(c: &Cluster) -> Vec<usize> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut agreed: Option<Vec<usize>> = None;
        let mut all = true;
        for i in 0..c.nodes.len() {
            let Some(v) = c.view(i).await else {
                all = false;
                break;
            };
            let held: Option<Vec<usize>> = v["shards"]
                .as_array()
                .filter(|s| !s.is_empty())
                .and_then(|shards| {
                    shards
                        .iter()
                        .map(|s| {
                            let holder = s["holder"].as_str()?;
                            (s["live"] == true).then_some(())?;
                            c.nodes.iter().position(|n| n.id == holder)
                        })
                        .collect()
                });
            match (&agreed, held) {
                (_, None) => all = false,
                (None, Some(h)) => agreed = Some(h),
                (Some(a), Some(h)) => all &= *a == h,
            }
        }
        // Each node serves what the rows say it holds.
        if let (true, Some(held)) = (all, agreed) {
            let mut serving = true;
            for (shard, &i) in held.iter().enumerate() {
                let v = c.view(i).await.unwrap_or_default();
                let shard = shard as i64 + 1;
                serving &= v["serving_shards"]
                    .as_array()
                    .is_some_and(|s| s.iter().any(|x| x.as_i64() == Some(shard)));
            }
            if serving {
                return held;
            }
        }
        assert!(Instant::now() < deadline, "not every shard is held");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every `<QueueUrl>` of a query-protocol answer, and its NextToken.
fn xml_page(body: &str) -> (Vec<String>, Option<String>) {
    let texts = |tag: &str| -> Vec<String> {
        body.split(&format!("<{tag}>"))
            .skip(1)
            .filter_map(|s| {
                s.split_once(&format!("</{tag}>"))
                    .map(|(t, _)| t.to_string())
            })
            .collect()
    };
    (texts("QueueUrl"), texts("NextToken").pop())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_node_lists_every_queue_and_topic_of_every_shard_paged() {
    if no_postgres() {
        return;
    }
    let c = Cluster::start("listings", 3, LEASE).await;
    let held = every_shard_held(&c).await;
    let shards = held.len();
    eprintln!("every shard held: {held:?}");
    // Names spread over the shards: the least placed shard takes the next.
    let mut names: Vec<String> = (0..QUEUES).map(|i| format!("q-{i:02}")).collect();
    for (i, name) in names.iter().enumerate() {
        sdk_client(&c.nodes[i % 3].endpoint(), "us-east-1")
            .create_queue()
            .queue_name(name)
            .send()
            .await
            .unwrap();
    }
    names.sort();
    let mut topics = Vec::new();
    for i in 0..TOPICS {
        let out = sns_client(&c.nodes[i % 3].endpoint())
            .create_topic()
            .name(format!("t-{i:03}"))
            .send()
            .await
            .unwrap();
        topics.push(out.topic_arn().unwrap().to_string());
    }
    topics.sort();
    // Platform applications are placed as topics are.
    let mut applications = Vec::new();
    for i in 0..APPLICATIONS {
        let out = sns_client(&c.nodes[i % 3].endpoint())
            .create_platform_application()
            .name(format!("app-{i:02}"))
            .platform("GCM")
            .attributes("PlatformCredential", format!("key-{i}"))
            .send()
            .await
            .unwrap();
        applications.push(out.platform_application_arn().unwrap().to_string());
    }
    applications.sort();
    eprintln!("created");

    // Each shard alone, asked with x-retsu-shard of the node holding it:
    // every shard holds some of the queues, and together all of them.
    let raw = reqwest::Client::new();
    let mut per_shard = Vec::new();
    for (s, &i) in held.iter().enumerate() {
        let r = raw
            .post(format!("{}/", c.nodes[i].endpoint()))
            .header("x-retsu-forwarded-by", "test")
            .header("x-retsu-cluster-secret", SECRET)
            .header("x-retsu-shard", (s + 1).to_string())
            .form(&[("Action", "ListQueues")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let (urls, _) = xml_page(&r.text().await.unwrap());
        assert!(!urls.is_empty(), "shard {} holds no queue", s + 1);
        per_shard.extend(urls);
    }
    assert_eq!(per_shard.len(), QUEUES);

    for node in 0..3 {
        let endpoint = c.nodes[node].endpoint();
        let url = |name: &String| format!("{endpoint}/000000000000/{name}");
        let every: Vec<String> = names.iter().map(url).collect();
        let sqs = sdk_client(&endpoint, "us-east-1");
        // Unpaged: all at once, in name order.
        let all = sqs.list_queues().send().await.unwrap();
        assert_eq!(all.queue_urls(), every.as_slice());
        assert_eq!(all.next_token(), None);
        eprintln!("node {node}: unpaged listed");
        for max in 1..=QUEUES as i32 + 1 {
            eprintln!("node {node}: MaxResults {max}");
            // JSON protocol (the SDK).
            let (mut listed, mut token, mut pages) = (Vec::new(), None::<String>, 0);
            loop {
                let out = sqs
                    .list_queues()
                    .max_results(max)
                    .set_next_token(token.clone())
                    .send()
                    .await
                    .unwrap();
                assert!(out.queue_urls().len() <= max as usize);
                listed.extend(out.queue_urls().iter().cloned());
                pages += 1;
                token = out.next_token().map(str::to_string);
                if token.is_none() {
                    break;
                }
            }
            assert_eq!(listed, every, "node {node}, MaxResults {max}");
            assert_eq!(pages, QUEUES.div_ceil(max as usize).max(1));
            // Query protocol, with a prefix as well.
            let (mut listed, mut token) = (Vec::new(), None::<String>);
            loop {
                let max = max.to_string();
                let mut form = vec![
                    ("Action", "ListQueues"),
                    ("Version", "2012-11-05"),
                    ("QueueNamePrefix", "q-1"),
                    ("MaxResults", max.as_str()),
                ];
                if let Some(t) = &token {
                    form.push(("NextToken", t.as_str()));
                }
                let r = raw
                    .post(format!("{endpoint}/"))
                    .form(&form)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 200);
                let body = r.text().await.unwrap();
                assert!(body.starts_with("<ListQueuesResponse"), "{body}");
                let (urls, next) = xml_page(&body);
                listed.extend(urls);
                token = next;
                if token.is_none() {
                    break;
                }
            }
            let tens: Vec<String> = names
                .iter()
                .filter(|n| n.starts_with("q-1"))
                .map(url)
                .collect();
            assert_eq!(listed, tens, "node {node}, query, MaxResults {max}");
        }
        // A malformed token: the single server's error.
        let e = sqs
            .list_queues()
            .max_results(2)
            .next_token("!!not a token!!")
            .send()
            .await
            .unwrap_err();
        assert!(
            format!("{e:?}").contains("Invalid NextToken value"),
            "{e:?}"
        );

        // Topics: SNS pages by 100.
        let sns = sns_client(&endpoint);
        let first = sns.list_topics().send().await.unwrap();
        assert_eq!(first.topics().len(), 100);
        let token = first.next_token().expect("a second page").to_string();
        let second = sns.list_topics().next_token(token).send().await.unwrap();
        assert_eq!(second.next_token(), None);
        let listed: Vec<String> = first
            .topics()
            .iter()
            .chain(second.topics())
            .map(|t| t.topic_arn().unwrap().to_string())
            .collect();
        assert_eq!(listed, topics, "node {node}");

        // Platform applications, with the attributes each has.
        let listed = sns.list_platform_applications().send().await.unwrap();
        assert_eq!(listed.next_token(), None);
        let arns: Vec<String> = listed
            .platform_applications()
            .iter()
            .map(|a| a.platform_application_arn().unwrap().to_string())
            .collect();
        assert_eq!(arns, applications, "node {node}");
        for a in listed.platform_applications() {
            let arn = a.platform_application_arn().unwrap();
            let got = sns
                .get_platform_application_attributes()
                .platform_application_arn(arn)
                .send()
                .await
                .unwrap();
            assert!(got.attributes().is_some_and(|m| !m.is_empty()), "{arn}");
            assert_eq!(a.attributes(), got.attributes(), "{arn}");
        }
    }
    assert!(shards > 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_is_addressed_only_with_the_secret_and_only_where_it_is_held() {
    if no_postgres() {
        return;
    }
    let c = Cluster::start("addressed", 3, LEASE).await;
    let held = every_shard_held(&c).await;
    let raw = reqwest::Client::new();
    let ask = |node: usize, shard: usize, secret: Option<&str>| {
        let mut req = raw
            .post(format!("{}/", c.nodes[node].endpoint()))
            .header("x-retsu-shard", shard.to_string())
            .form(&[("Action", "ListQueues")]);
        if let Some(secret) = secret {
            req = req
                .header("x-retsu-forwarded-by", "test")
                .header("x-retsu-cluster-secret", secret);
        }
        req.send()
    };
    // Without the secret, or with a forged one: refused.
    for secret in [None, Some("forged-secret-forged")] {
        let r = ask(held[0], 1, secret).await.unwrap();
        assert_eq!(r.status(), 403);
    }
    // A node that does not hold the shard does not pass it on: a
    // retriable 503.
    let elsewhere = (0..3).find(|&i| i != held[0]).unwrap();
    let r = ask(elsewhere, 1, Some(SECRET)).await.unwrap();
    assert_eq!(r.status(), 503);
    assert!(r.text().await.unwrap().contains("ServiceUnavailable"));
    let r = ask(held[0], 1, Some(SECRET)).await.unwrap();
    assert_eq!(r.status(), 200);
}

/// GET `/_retsu/events` on a node with `query`, as JSON.
async fn feed(c: &Cluster, node: usize, query: &[(&str, &str)]) -> serde_json::Value {
    let r = reqwest::Client::new()
        .get(format!("{}/_retsu/events", c.nodes[node].endpoint()))
        .query(query)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    serde_json::from_str(&r.text().await.unwrap()).unwrap()
}

/// Sends `count` messages to each queue, through the nodes in turn;
/// returns their message ids.
async fn send_each(c: &Cluster, urls: &[String], count: usize, tag: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for (i, url) in urls.iter().enumerate() {
        let client = sdk_client(&c.nodes[i % 3].endpoint(), "us-east-1");
        for n in 0..count {
            let out = client
                .send_message()
                .queue_url(url)
                .message_body(format!("{tag}-{n}"))
                .send()
                .await
                .unwrap();
            ids.push(out.message_id().unwrap().to_string());
        }
    }
    ids.sort();
    ids
}

/// Each shard numbers its own events, so the merged feed's cursor is one
/// number per shard: paging with `next` from any node sees every event of
/// every shard once, `since=next` resumes after them, and the live stream
/// resumes from a cursor (`Last-Event-ID`) and ids its events with the
/// cursor after each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_feed_pages_and_resumes_across_shards() {
    if no_postgres() {
        return;
    }
    let c = Cluster::start("events", 3, LEASE).await;
    let held = every_shard_held(&c).await;
    let mut urls = Vec::new();
    for i in 0..held.len() {
        let out = sdk_client(&c.nodes[i % 3].endpoint(), "us-east-1")
            .create_queue()
            .queue_name(format!("ev-{i}"))
            .send()
            .await
            .unwrap();
        urls.push(out.queue_url().unwrap().to_string());
    }
    let sent = send_each(&c, &urls, 5, "a").await;

    // Pages of 7 from each node in turn, each from the last page's `next`.
    let mut seen = Vec::new();
    let mut shards = std::collections::BTreeSet::new();
    let mut next = String::from("0");
    for page in 0.. {
        let body = feed(
            &c,
            page % 3,
            &[("kind", "sent"), ("limit", "7"), ("since", &next)],
        )
        .await;
        let events = body["events"].as_array().unwrap();
        for e in events {
            seen.push(e["message_id"].as_str().unwrap().to_string());
            shards.insert(e["shard"].as_i64().unwrap());
        }
        next = body["next"]
            .as_str()
            .expect("a cluster's cursor is text")
            .to_string();
        if events.len() < 7 {
            break;
        }
        assert!(page < 40, "the feed never ended");
    }
    seen.sort();
    assert_eq!(seen, sent, "every sent event once");
    assert!(
        shards.len() > 1,
        "the events came from one shard: {shards:?}"
    );
    assert_eq!(next.split(',').count(), held.len(), "{next}");

    // What comes after the cursor, and nothing before it.
    let later = send_each(&c, &urls[..2], 2, "b").await;
    let body = feed(&c, 1, &[("kind", "sent"), ("since", &next)]).await;
    let mut after: Vec<String> = body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message_id"].as_str().unwrap().to_string())
        .collect();
    after.sort();
    assert_eq!(after, later);

    // The stream from the same cursor: the later sends replayed, then one
    // sent now, live; each id is the cursor after its event.
    let mut stream = reqwest::Client::new()
        .get(format!(
            "{}/_retsu/events/stream?kind=sent",
            c.nodes[2].endpoint()
        ))
        .header("last-event-id", &next)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let live = send_each(&c, &urls[2..3], 1, "c").await;
    let mut text = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let expected: Vec<&String> = later.iter().chain(&live).collect();
    while !expected.iter().all(|id| text.contains(id.as_str())) {
        let left = deadline.saturating_duration_since(Instant::now());
        let chunk = tokio::time::timeout(left, stream.chunk())
            .await
            .expect("the stream did not deliver every event in time")
            .unwrap()
            .expect("the stream ended");
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    for id in &sent {
        assert!(
            !text.contains(id.as_str()),
            "replayed from before the cursor: {id}"
        );
    }
    let ids: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .collect();
    assert_eq!(ids.len(), expected.len(), "{text}");
    let last = ids.last().unwrap();
    assert_eq!(last.split(',').count(), held.len(), "{last}");
    // Resuming from the stream's last id replays nothing more.
    let body = feed(&c, 0, &[("kind", "sent"), ("since", last)]).await;
    assert!(body["events"].as_array().unwrap().is_empty(), "{body}");
}
