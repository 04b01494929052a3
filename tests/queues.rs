//! Queue management through the official SDK: CreateQueue, GetQueueUrl,
//! ListQueues, DeleteQueue, Get/SetQueueAttributes, PurgeQueue, tags,
//! permissions and the strict 60-second rules.

mod common;

use std::collections::HashMap;

use aws_sdk_sqs::error::ProvideErrorMetadata;
use aws_sdk_sqs::types::QueueAttributeName;
use common::*;

// ------------------------------------------------------------ CreateQueue

#[tokio::test]
async fn create_queue_returns_a_url_built_from_the_host() {
    let t = TestServer::start().await;
    let url = t.create_queue("jobs").await;
    assert_eq!(url, t.queue_url("jobs"));
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    // The URL is callable as is.
    t.send(&url, "hello").await;
    assert_eq!(t.counts(&url).await, (1, 0, 0));
}

#[tokio::test]
async fn create_queue_is_idempotent_with_the_same_attributes() {
    let t = TestServer::start().await;
    let url = t
        .create_queue_with(
            "idem",
            &[("VisibilityTimeout", "45"), ("DelaySeconds", "3")],
        )
        .await;
    // Same attributes: same URL.
    let again = t
        .create_queue_with(
            "idem",
            &[("DelaySeconds", "3"), ("VisibilityTimeout", "45")],
        )
        .await;
    assert_eq!(again, url);
    // A subset that matches: same URL.
    let subset = t
        .create_queue_with("idem", &[("VisibilityTimeout", "45")])
        .await;
    assert_eq!(subset, url);
    // No attributes at all, although the queue's are not the defaults.
    assert_eq!(t.create_queue("idem").await, url);
    // A default spelled out explicitly equals the stored default.
    assert_eq!(
        t.create_queue_with("idem", &[("MaximumMessageSize", "1048576")])
            .await,
        url
    );
    // Re-creating did not reset anything.
    let a = t
        .attributes(&url, &["VisibilityTimeout", "DelaySeconds"])
        .await;
    assert_eq!(a["VisibilityTimeout"], "45");
    assert_eq!(a["DelaySeconds"], "3");
}

#[tokio::test]
async fn create_queue_with_a_different_attribute_is_queue_already_exists() {
    let t = TestServer::start().await;
    t.create_queue_with("clash", &[("DelaySeconds", "3")]).await;
    let f = t
        .create_queue_failure("clash", &[("DelaySeconds", "4")])
        .await;
    assert!(f.err.is_queue_name_exists(), "{:?}", f.err);
    assert_eq!(f.status, 400);
    assert_service_error(&f.err, "QueueAlreadyExists", "A queue already exists with the same name and a different value for attribute DelaySeconds");
    // An attribute left at its default but now given a different value.
    let err = t
        .create_queue_error("clash", &[("VisibilityTimeout", "31")])
        .await;
    assert!(err.is_queue_name_exists());
    assert_eq!(
        err.message(),
        Some("A queue already exists with the same name and a different value for attribute VisibilityTimeout")
    );
    // The existing queue kept its value.
    let url = t.queue_url("clash");
    assert_eq!(
        t.attribute(&url, "DelaySeconds").await.as_deref(),
        Some("3")
    );
}

#[tokio::test]
async fn create_queue_tags_are_not_compared() {
    let t = TestServer::start().await;
    let url = t.create_queue("tagged").await;
    let again = t
        .client
        .create_queue()
        .queue_name("tagged")
        .tags("team", "x")
        .send()
        .await
        .expect("tags do not make a conflict");
    assert_eq!(again.queue_url(), Some(url.as_str()));
}

#[tokio::test]
async fn queue_names_follow_the_rules() {
    let t = TestServer::start().await;
    // 80 characters of the allowed set are fine.
    let long = "a".repeat(80);
    assert_eq!(t.create_queue(&long).await, t.queue_url(&long));
    t.create_queue("Mixed-Case_09").await;
    for bad in [
        "a".repeat(81),
        "has space".to_string(),
        "dot.name".to_string(),
        "slash/name".to_string(),
        "ünïcode".to_string(),
        "q.fifo".to_string(), // a FIFO name without FifoQueue=true
        String::new(),
    ] {
        let err = t.create_queue_error(&bad, &[]).await;
        assert_eq!(
            err.code(),
            Some("InvalidParameterValue"),
            "{bad:?}: {err:?}"
        );
        assert_eq!(
            err.message(),
            Some("Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"),
            "{bad:?}"
        );
    }
    let listed = t.client.list_queues().send().await.unwrap();
    assert_eq!(listed.queue_urls().len(), 2, "{:?}", listed.queue_urls());
}

#[tokio::test]
async fn queue_names_are_case_sensitive() {
    let t = TestServer::start().await;
    let lower = t.create_queue("jobs").await;
    let upper = t.create_queue("Jobs").await;
    assert_ne!(lower, upper);
    t.send(&upper, "x").await;
    assert_eq!(t.counts(&lower).await, (0, 0, 0));
    assert_eq!(t.counts(&upper).await, (1, 0, 0));
    let err = service_error(t.client.get_queue_url().queue_name("JOBS").send().await);
    assert!(err.is_queue_does_not_exist());
}

#[tokio::test]
async fn create_queue_rejects_unknown_and_fifo_only_attributes() {
    let t = TestServer::start().await;
    let cases = [
        ("Foobar", "1", "Unknown Attribute Foobar."),
        ("FifoQueue", "false", "Unknown Attribute FifoQueue."),
        (
            "ContentBasedDeduplication",
            "true",
            "Unknown Attribute ContentBasedDeduplication.",
        ),
        (
            "DeduplicationScope",
            "queue",
            "You can specify the DeduplicationScope only when FifoQueue is set to true.",
        ),
        (
            "FifoThroughputLimit",
            "perQueue",
            "You can specify the FifoThroughputLimit only when FifoQueue is set to true.",
        ),
        // Read-only attributes cannot be given either.
        (
            "QueueArn",
            "arn:aws:sqs:us-east-1:000000000000:x",
            "Unknown Attribute QueueArn.",
        ),
    ];
    for (name, value, message) in cases {
        let err = t.create_queue_error("attrs", &[(name, value)]).await;
        assert!(err.is_invalid_attribute_name(), "{name}: {err:?}");
        assert_eq!(err.message(), Some(message), "{name}");
    }
    // Nothing was created by the failed calls.
    let err = service_error(t.client.get_queue_url().queue_name("attrs").send().await);
    assert!(err.is_queue_does_not_exist());
}

#[tokio::test]
async fn create_queue_rejects_out_of_range_values() {
    let t = TestServer::start().await;
    let cases = [
        ("DelaySeconds", "901"),
        ("DelaySeconds", "-1"),
        ("MaximumMessageSize", "1023"),
        ("MaximumMessageSize", "1048577"),
        ("MessageRetentionPeriod", "59"),
        ("MessageRetentionPeriod", "1209601"),
        ("ReceiveMessageWaitTimeSeconds", "21"),
        ("VisibilityTimeout", "43201"),
        ("VisibilityTimeout", "soon"),
    ];
    for (name, value) in cases {
        let err = t.create_queue_error("ranges", &[(name, value)]).await;
        assert!(err.is_invalid_attribute_value(), "{name}={value}: {err:?}");
        assert_eq!(err.code(), Some("InvalidAttributeValue"));
        let message = err.message().unwrap_or_default();
        assert!(message.contains(name), "{name}: {message}");
    }
    // The limits themselves are accepted.
    let url = t
        .create_queue_with(
            "ranges",
            &[
                ("DelaySeconds", "900"),
                ("MaximumMessageSize", "1024"),
                ("MessageRetentionPeriod", "1209600"),
                ("ReceiveMessageWaitTimeSeconds", "20"),
                ("VisibilityTimeout", "43200"),
            ],
        )
        .await;
    let a = t.attributes(&url, &["All"]).await;
    assert_eq!(a["DelaySeconds"], "900");
    assert_eq!(a["MaximumMessageSize"], "1024");
    assert_eq!(a["MessageRetentionPeriod"], "1209600");
    assert_eq!(a["ReceiveMessageWaitTimeSeconds"], "20");
    assert_eq!(a["VisibilityTimeout"], "43200");
}

// ------------------------------------------------------------ GetQueueUrl

#[tokio::test]
async fn get_queue_url_returns_the_created_url() {
    let t = TestServer::start().await;
    let url = t.create_queue("lookup").await;
    let got = t
        .client
        .get_queue_url()
        .queue_name("lookup")
        .send()
        .await
        .unwrap();
    assert_eq!(got.queue_url(), Some(url.as_str()));
    // With the owner account spelled out.
    let got = t
        .client
        .get_queue_url()
        .queue_name("lookup")
        .queue_owner_aws_account_id(ACCOUNT)
        .send()
        .await
        .unwrap();
    assert_eq!(got.queue_url(), Some(url.as_str()));
    // Another account has no such queue.
    let err = service_error(
        t.client
            .get_queue_url()
            .queue_name("lookup")
            .queue_owner_aws_account_id("123456789012")
            .send()
            .await,
    );
    assert!(err.is_queue_does_not_exist());
}

#[tokio::test]
async fn get_queue_url_of_a_missing_queue_is_queue_does_not_exist() {
    let t = TestServer::start().await;
    let f = failure(t.client.get_queue_url().queue_name("nope").send().await);
    assert!(f.err.is_queue_does_not_exist(), "{:?}", f.err);
    assert_eq!(f.status, 400);
    assert_eq!(
        f.err.code(),
        Some("AWS.SimpleQueueService.NonExistentQueue")
    );
    assert_eq!(f.err.message(), Some("The specified queue does not exist."));
}

#[tokio::test]
async fn every_queue_action_on_a_missing_queue_is_queue_does_not_exist() {
    let t = TestServer::start().await;
    let url = t.queue_url("ghost");
    let c = &t.client;
    assert!(service_error(
        c.send_message()
            .queue_url(&url)
            .message_body("x")
            .send()
            .await
    )
    .is_queue_does_not_exist());
    assert!(
        service_error(c.receive_message().queue_url(&url).send().await).is_queue_does_not_exist()
    );
    assert!(service_error(
        c.delete_message()
            .queue_url(&url)
            .receipt_handle("x")
            .send()
            .await
    )
    .is_queue_does_not_exist());
    assert!(service_error(c.delete_queue().queue_url(&url).send().await).is_queue_does_not_exist());
    assert!(service_error(c.purge_queue().queue_url(&url).send().await).is_queue_does_not_exist());
    assert!(service_error(
        c.get_queue_attributes()
            .queue_url(&url)
            .attribute_names(QueueAttributeName::All)
            .send()
            .await
    )
    .is_queue_does_not_exist());
    assert!(service_error(
        c.set_queue_attributes()
            .queue_url(&url)
            .attributes(QueueAttributeName::DelaySeconds, "1")
            .send()
            .await
    )
    .is_queue_does_not_exist());
    assert!(
        service_error(c.list_queue_tags().queue_url(&url).send().await).is_queue_does_not_exist()
    );
    assert!(
        service_error(c.tag_queue().queue_url(&url).tags("a", "b").send().await)
            .is_queue_does_not_exist()
    );
    assert!(service_error(
        c.change_message_visibility()
            .queue_url(&url)
            .receipt_handle("x")
            .visibility_timeout(1)
            .send()
            .await
    )
    .is_queue_does_not_exist());
}

// ------------------------------------------------------------- ListQueues

#[tokio::test]
async fn list_queues_filters_by_prefix() {
    let t = TestServer::start().await;
    for name in ["alpha-1", "alpha-2", "Alpha-3", "beta"] {
        t.create_queue(name).await;
    }
    let mut all: Vec<String> = t
        .client
        .list_queues()
        .send()
        .await
        .unwrap()
        .queue_urls()
        .to_vec();
    all.sort();
    let mut expected: Vec<String> = ["Alpha-3", "alpha-1", "alpha-2", "beta"]
        .iter()
        .map(|n| t.queue_url(n))
        .collect();
    expected.sort();
    assert_eq!(all, expected);

    let out = t
        .client
        .list_queues()
        .queue_name_prefix("alpha")
        .send()
        .await
        .unwrap();
    let mut got = out.queue_urls().to_vec();
    got.sort();
    assert_eq!(got, vec![t.queue_url("alpha-1"), t.queue_url("alpha-2")]);
    assert_eq!(out.next_token(), None);

    // No match: no QueueUrls at all.
    let out = t
        .client
        .list_queues()
        .queue_name_prefix("gamma")
        .send()
        .await
        .unwrap();
    assert!(out.queue_urls.is_none(), "{:?}", out.queue_urls);
    let raw = t
        .json_post("ListQueues", r#"{"QueueNamePrefix":"gamma"}"#)
        .await;
    assert_eq!(raw.status, 200);
    assert_eq!(raw.json(), serde_json::json!({}));
}

#[tokio::test]
async fn list_queues_paginates_with_max_results() {
    let t = TestServer::start().await;
    let names = ["p-a", "p-b", "p-c", "p-d", "p-e"];
    for n in names {
        t.create_queue(n).await;
    }
    t.create_queue("other").await;
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = Vec::new();
    loop {
        let out = t
            .client
            .list_queues()
            .queue_name_prefix("p-")
            .max_results(2)
            .set_next_token(token.clone())
            .send()
            .await
            .unwrap();
        pages.push(out.queue_urls().len());
        seen.extend(out.queue_urls().iter().cloned());
        token = out.next_token().map(str::to_string);
        if token.is_none() {
            break;
        }
        assert!(pages.len() < 10, "pagination does not end");
    }
    assert_eq!(pages, vec![2, 2, 1]);
    seen.sort();
    let mut expected: Vec<String> = names.iter().map(|n| t.queue_url(n)).collect();
    expected.sort();
    assert_eq!(seen, expected, "every queue exactly once");

    // Exactly MaxResults queues: one page, no token.
    let out = t
        .client
        .list_queues()
        .queue_name_prefix("p-")
        .max_results(5)
        .send()
        .await
        .unwrap();
    assert_eq!(out.queue_urls().len(), 5);
    assert_eq!(out.next_token(), None);

    // Without MaxResults there is never a NextToken.
    let out = t.client.list_queues().send().await.unwrap();
    assert_eq!(out.queue_urls().len(), 6);
    assert_eq!(out.next_token(), None);

    // A deleted queue leaves the listing and comes back when created
    // again; names sorting just before and after the prefix stay out.
    t.create_queue("p").await;
    t.create_queue("p-").await;
    t.create_queue("p_x").await;
    t.create_queue("o-x").await;
    t.client
        .delete_queue()
        .queue_url(t.queue_url("p-c"))
        .send()
        .await
        .unwrap();
    let listed = |out: &aws_sdk_sqs::operation::list_queues::ListQueuesOutput| {
        out.queue_urls()
            .iter()
            .map(|u| u.rsplit('/').next().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let out = t
        .client
        .list_queues()
        .queue_name_prefix("p-")
        .send()
        .await
        .unwrap();
    assert_eq!(listed(&out), ["p-", "p-a", "p-b", "p-d", "p-e"]);
    t.create_queue("p-c").await;
    let out = t
        .client
        .list_queues()
        .queue_name_prefix("p-")
        .send()
        .await
        .unwrap();
    assert_eq!(listed(&out), ["p-", "p-a", "p-b", "p-c", "p-d", "p-e"]);
}

#[tokio::test]
async fn list_queues_max_results_out_of_range() {
    let t = TestServer::start().await;
    for bad in [0, 1001, -1] {
        let err = service_error(t.client.list_queues().max_results(bad).send().await);
        assert_eq!(err.code(), Some("InvalidParameterValue"), "{bad}: {err:?}");
    }
    t.client
        .list_queues()
        .max_results(1000)
        .send()
        .await
        .unwrap();
    t.client.list_queues().max_results(1).send().await.unwrap();
}

#[tokio::test]
async fn list_queues_is_scoped_to_the_region() {
    let t = TestServer::start().await;
    t.create_queue("here").await;
    let eu = t.new_client("eu-west-1");
    let out = eu.create_queue().queue_name("there").send().await.unwrap();
    let there_url = out.queue_url().unwrap().to_string();
    // The same name in another region is another queue.
    eu.create_queue().queue_name("here").send().await.unwrap();
    let us: Vec<String> = t
        .client
        .list_queues()
        .send()
        .await
        .unwrap()
        .queue_urls()
        .to_vec();
    assert_eq!(us, vec![t.queue_url("here")]);
    let mut eu_list: Vec<String> = eu.list_queues().send().await.unwrap().queue_urls().to_vec();
    eu_list.sort();
    assert_eq!(eu_list.len(), 2);
    let arn_eu = eu
        .get_queue_attributes()
        .queue_url(&there_url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .unwrap();
    assert_eq!(
        arn_eu.attributes().unwrap()[&QueueAttributeName::QueueArn],
        "arn:aws:sqs:eu-west-1:000000000000:there"
    );
    let err = service_error(t.client.get_queue_url().queue_name("there").send().await);
    assert!(err.is_queue_does_not_exist());
}

// ------------------------------------------------------------ DeleteQueue

#[tokio::test]
async fn delete_queue_removes_it_and_its_messages() {
    let t = TestServer::start().await;
    let url = t.create_queue("doomed").await;
    t.send(&url, "one").await;
    t.send(&url, "two").await;
    t.delete_queue(&url).await;

    assert!(
        service_error(t.client.get_queue_url().queue_name("doomed").send().await)
            .is_queue_does_not_exist()
    );
    assert!(t
        .client
        .list_queues()
        .send()
        .await
        .unwrap()
        .queue_urls
        .is_none());
    assert!(service_error(
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("x")
            .send()
            .await
    )
    .is_queue_does_not_exist());
    // A second delete: the queue is gone.
    assert!(
        service_error(t.client.delete_queue().queue_url(&url).send().await)
            .is_queue_does_not_exist()
    );

    // Strict timing is off by default: the name is free again at once, and
    // the new queue starts empty with default attributes.
    let again = t.create_queue("doomed").await;
    assert_eq!(again, url);
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    assert!(t.receive(&url, 10).await.is_empty());
}

// ------------------------------------------------------ GetQueueAttributes

#[tokio::test]
async fn get_queue_attributes_all_on_a_fresh_queue() {
    let t = TestServer::start().await;
    let created_s = (t.now_ms() / 1000).to_string();
    let url = t.create_queue("fresh").await;
    let a = t.attributes(&url, &["All"]).await;
    let expected: HashMap<String, String> = [
        ("ApproximateNumberOfMessages", "0"),
        ("ApproximateNumberOfMessagesDelayed", "0"),
        ("ApproximateNumberOfMessagesNotVisible", "0"),
        ("CreatedTimestamp", created_s.as_str()),
        ("DelaySeconds", "0"),
        ("LastModifiedTimestamp", created_s.as_str()),
        ("MaximumMessageSize", "1048576"),
        ("MessageRetentionPeriod", "345600"),
        ("QueueArn", arn("fresh").as_str()),
        ("ReceiveMessageWaitTimeSeconds", "0"),
        ("SqsManagedSseEnabled", "true"),
        ("VisibilityTimeout", "30"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(a, expected);
    assert_eq!(a.len(), 12);
}

#[tokio::test]
async fn get_queue_attributes_named_and_none() {
    let t = TestServer::start().await;
    let url = t.create_queue("named").await;
    let a = t.attributes(&url, &["VisibilityTimeout", "QueueArn"]).await;
    assert_eq!(a.len(), 2, "{a:?}");
    assert_eq!(a["VisibilityTimeout"], "30");
    assert_eq!(a["QueueArn"], arn("named"));
    // No names: no attributes at all.
    let out = t
        .client
        .get_queue_attributes()
        .queue_url(&url)
        .send()
        .await
        .unwrap();
    assert!(out.attributes.is_none(), "{:?}", out.attributes);
    // An attribute that is not set is simply absent.
    let a = t.attributes(&url, &["Policy", "RedrivePolicy"]).await;
    assert!(a.is_empty(), "{a:?}");
}

#[tokio::test]
async fn get_queue_attributes_unknown_name() {
    let t = TestServer::start().await;
    let url = t.create_queue("unknown-attr").await;
    let err = service_error(
        t.client
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(QueueAttributeName::from("Foobar"))
            .send()
            .await,
    );
    assert!(err.is_invalid_attribute_name(), "{err:?}");
    assert_service_error(&err, "InvalidAttributeName", "Unknown Attribute Foobar.");
}

#[tokio::test]
async fn approximate_counters_are_exact_at_every_moment() {
    let t = TestServer::start().await;
    let url = t.create_queue("counters").await;
    assert_eq!(t.counts(&url).await, (0, 0, 0));

    t.send(&url, "a").await;
    t.send(&url, "b").await;
    t.send_delayed(&url, "delayed", 10).await;
    assert_eq!(t.counts(&url).await, (2, 0, 1));

    // Receive one (visibility 30 s).
    let first = t
        .client
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(t.counts(&url).await, (1, 1, 1));

    // 10 s later the delay ends.
    t.advance_secs(10);
    assert_eq!(t.counts(&url).await, (2, 1, 0));

    // Receive both available ones with a 5 s visibility timeout.
    let two = t
        .client
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .visibility_timeout(5)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap();
    assert_eq!(two.len(), 2);
    assert_eq!(t.counts(&url).await, (0, 3, 0));

    // Delete one of them.
    t.delete_message(&url, two[0].receipt_handle().unwrap())
        .await;
    assert_eq!(t.counts(&url).await, (0, 2, 0));

    // 5 s later the short visibility runs out; the first one (30 s) not yet.
    t.advance_secs(5);
    assert_eq!(t.counts(&url).await, (1, 1, 0));
    // At 30 s after the first receive, it is back too.
    t.advance_secs(15);
    assert_eq!(t.counts(&url).await, (2, 0, 0));

    t.client.purge_queue().queue_url(&url).send().await.unwrap();
    assert_eq!(t.counts(&url).await, (0, 0, 0));
}

// ------------------------------------------------------ SetQueueAttributes

#[tokio::test]
async fn set_queue_attributes_changes_and_reports_them() {
    let t = TestServer::start().await;
    let url = t.create_queue("settable").await;
    let created = t.attribute(&url, "LastModifiedTimestamp").await.unwrap();
    t.advance_secs(100);
    t.set_attributes(
        &url,
        &[
            ("VisibilityTimeout", "60"),
            ("DelaySeconds", "5"),
            ("MaximumMessageSize", "2048"),
            ("MessageRetentionPeriod", "3600"),
            ("ReceiveMessageWaitTimeSeconds", "2"),
        ],
    )
    .await;
    let a = t.attributes(&url, &["All"]).await;
    assert_eq!(a["VisibilityTimeout"], "60");
    assert_eq!(a["DelaySeconds"], "5");
    assert_eq!(a["MaximumMessageSize"], "2048");
    assert_eq!(a["MessageRetentionPeriod"], "3600");
    assert_eq!(a["ReceiveMessageWaitTimeSeconds"], "2");
    assert_eq!(
        a["LastModifiedTimestamp"].parse::<u64>().unwrap(),
        created.parse::<u64>().unwrap() + 100
    );
    assert_eq!(a["CreatedTimestamp"], created);
}

#[tokio::test]
async fn set_queue_attributes_errors() {
    let t = TestServer::start().await;
    let url = t.create_queue("set-errors").await;
    let set = |name: &str, value: &str| {
        t.client
            .set_queue_attributes()
            .queue_url(&url)
            .attributes(QueueAttributeName::from(name), value)
            .send()
    };
    let err = service_error(set("VisibilityTimeout", "43201").await);
    assert!(err.is_invalid_attribute_value(), "{err:?}");
    let err = service_error(set("Foobar", "1").await);
    assert!(err.is_invalid_attribute_name());
    assert_eq!(err.message(), Some("Unknown Attribute Foobar."));
    let err = service_error(set("FifoQueue", "true").await);
    assert!(err.is_invalid_attribute_name());
    assert_eq!(err.message(), Some("Unknown Attribute FifoQueue."));
    let err = service_error(set("ApproximateNumberOfMessages", "5").await);
    assert!(err.is_invalid_attribute_name());
    assert_eq!(
        err.message(),
        Some("Unknown Attribute ApproximateNumberOfMessages.")
    );
    // A request with one bad attribute changes nothing.
    let err = t
        .set_attributes_error(&url, &[("DelaySeconds", "7"), ("VisibilityTimeout", "-3")])
        .await;
    assert!(err.is_invalid_attribute_value());
    assert_eq!(
        t.attribute(&url, "DelaySeconds").await.as_deref(),
        Some("0")
    );
    // Attributes are required.
    let err = service_error(t.client.set_queue_attributes().queue_url(&url).send().await);
    assert_eq!(err.code(), Some("MissingParameter"), "{err:?}");
    assert_eq!(
        err.message(),
        Some("The request must contain the parameter Attributes.")
    );
}

#[tokio::test]
async fn set_visibility_timeout_applies_to_the_next_receive() {
    let t = TestServer::start().await;
    let url = t.create_queue("vt").await;
    t.set_attributes(&url, &[("VisibilityTimeout", "5")]).await;
    t.send(&url, "m").await;
    t.receive_one(&url).await;
    t.advance_ms(4_999);
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_ms(1);
    t.receive_one(&url).await;
}

#[tokio::test]
async fn policy_attribute_can_be_set_and_removed() {
    let t = TestServer::start().await;
    let url = t.create_queue("policy").await;
    let policy = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage","Resource":"*"}]}"#;
    t.set_attributes(&url, &[("Policy", policy)]).await;
    let got = t.attribute(&url, "Policy").await.expect("Policy is set");
    let got: serde_json::Value = serde_json::from_str(&got).unwrap();
    assert_eq!(
        got,
        serde_json::from_str::<serde_json::Value>(policy).unwrap()
    );
    t.set_attributes(&url, &[("Policy", "")]).await;
    assert_eq!(t.attribute(&url, "Policy").await, None);
    assert!(!t.attributes(&url, &["All"]).await.contains_key("Policy"));
}

// ------------------------------------------------------------- PurgeQueue

#[tokio::test]
async fn purge_queue_removes_every_message() {
    let t = TestServer::start().await;
    let url = t.create_queue("purge").await;
    t.send(&url, "available").await;
    t.send(&url, "in flight").await;
    t.send_delayed(&url, "delayed", 60).await;
    let held = t
        .client
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap();
    assert_eq!(held.len(), 1);
    assert_eq!(t.counts(&url).await, (1, 1, 1));

    t.client.purge_queue().queue_url(&url).send().await.unwrap();
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    assert!(t.receive(&url, 10).await.is_empty());
    // Nothing comes back later either: not the delayed one, not the one
    // that was in flight.
    t.advance_secs(120);
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    assert!(t.receive(&url, 10).await.is_empty());

    // Without strict timing a second purge right away is fine.
    t.client.purge_queue().queue_url(&url).send().await.unwrap();
    // And the queue keeps working.
    t.send(&url, "after").await;
    assert_eq!(t.receive_one(&url).await.body(), Some("after"));
}

// --------------------------------------------------------- strict timing

#[tokio::test]
async fn strict_timing_second_purge_within_60s_is_purge_queue_in_progress() {
    let t = TestServer::start_strict().await;
    let url = t.create_queue("strict-purge").await;
    t.client.purge_queue().queue_url(&url).send().await.unwrap();
    t.advance_secs(59);
    let f = failure(t.client.purge_queue().queue_url(&url).send().await);
    assert!(f.err.is_purge_queue_in_progress(), "{:?}", f.err);
    assert_eq!(f.status, 403);
    assert_eq!(
        f.err.code(),
        Some("AWS.SimpleQueueService.PurgeQueueInProgress")
    );
    assert_eq!(
        f.err.message(),
        Some("Only one PurgeQueue operation on strict-purge is allowed every 60 seconds.")
    );
    t.advance_secs(1);
    t.client
        .purge_queue()
        .queue_url(&url)
        .send()
        .await
        .expect("60 s after the first purge");
}

#[tokio::test]
async fn strict_timing_recreate_within_60s_is_queue_deleted_recently() {
    let t = TestServer::start_strict().await;
    let url = t.create_queue("strict-del").await;
    t.delete_queue(&url).await;
    t.advance_secs(59);
    let f = t.create_queue_failure("strict-del", &[]).await;
    assert!(f.err.is_queue_deleted_recently(), "{:?}", f.err);
    assert_eq!(f.status, 400);
    assert_eq!(
        f.err.code(),
        Some("AWS.SimpleQueueService.QueueDeletedRecently")
    );
    assert_eq!(
        f.err.message(),
        Some("You must wait 60 seconds after deleting a queue before you can create another with the same name.")
    );
    // Other names are not affected.
    t.create_queue("strict-other").await;
    t.advance_secs(1);
    assert_eq!(t.create_queue("strict-del").await, url);
}

#[tokio::test]
async fn strict_timing_is_off_by_default() {
    let t = TestServer::start().await;
    let url = t.create_queue("lenient").await;
    for _ in 0..3 {
        t.client.purge_queue().queue_url(&url).send().await.unwrap();
    }
    for _ in 0..3 {
        t.delete_queue(&url).await;
        assert_eq!(t.create_queue("lenient").await, url);
    }
}

// ------------------------------------------------------------------ tags

#[tokio::test]
async fn tags_round_trip() {
    let t = TestServer::start().await;
    let out = t
        .client
        .create_queue()
        .queue_name("tags")
        .tags("team", "core")
        .tags("env", "test")
        .send()
        .await
        .unwrap();
    let url = out.queue_url().unwrap().to_string();
    let tags = |out: aws_sdk_sqs::operation::list_queue_tags::ListQueueTagsOutput| {
        out.tags.unwrap_or_default()
    };
    let got = tags(
        t.client
            .list_queue_tags()
            .queue_url(&url)
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(got.len(), 2);
    assert_eq!(got["team"], "core");
    assert_eq!(got["env"], "test");

    // Overwrite one, add one (keys are case-sensitive).
    t.client
        .tag_queue()
        .queue_url(&url)
        .tags("team", "edge")
        .tags("Team", "other")
        .tags("empty", "")
        .send()
        .await
        .unwrap();
    let got = tags(
        t.client
            .list_queue_tags()
            .queue_url(&url)
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(got["team"], "edge");
    assert_eq!(got["Team"], "other");
    assert_eq!(got["empty"], "");

    // Untag two, one of them absent (a no-op).
    t.client
        .untag_queue()
        .queue_url(&url)
        .tag_keys("env")
        .tag_keys("absent")
        .send()
        .await
        .unwrap();
    let got = tags(
        t.client
            .list_queue_tags()
            .queue_url(&url)
            .send()
            .await
            .unwrap(),
    );
    let mut keys: Vec<&String> = got.keys().collect();
    keys.sort();
    assert_eq!(keys, vec!["Team", "empty", "team"]);

    t.client
        .untag_queue()
        .queue_url(&url)
        .tag_keys("Team")
        .tag_keys("empty")
        .tag_keys("team")
        .send()
        .await
        .unwrap();
    let got = tags(
        t.client
            .list_queue_tags()
            .queue_url(&url)
            .send()
            .await
            .unwrap(),
    );
    assert!(got.is_empty(), "{got:?}");
}

#[tokio::test]
async fn tag_limits() {
    let t = TestServer::start().await;
    let url = t.create_queue("tag-limits").await;
    let mut req = t.client.tag_queue().queue_url(&url);
    for i in 0..50 {
        req = req.tags(format!("k{i}"), "v");
    }
    req.send().await.expect("50 tags are allowed");
    let err = service_error(
        t.client
            .tag_queue()
            .queue_url(&url)
            .tags("one-too-many", "v")
            .send()
            .await,
    );
    assert_eq!(err.code(), Some("InvalidParameterValue"), "{err:?}");
    assert_eq!(
        err.message(),
        Some("Too many tags added for queue tag-limits.")
    );
    let listed = t
        .client
        .list_queue_tags()
        .queue_url(&url)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.tags().map(|t| t.len()), Some(50));
    // An empty key list.
    let err = service_error(
        t.client
            .untag_queue()
            .queue_url(&url)
            .set_tag_keys(Some(vec![]))
            .send()
            .await,
    );
    assert_eq!(err.code(), Some("InvalidParameterValue"), "{err:?}");
}

// ----------------------------------------------------------- permissions

fn policy_of(attrs: &HashMap<String, String>) -> serde_json::Value {
    serde_json::from_str(attrs.get("Policy").expect("Policy present")).unwrap()
}

#[tokio::test]
async fn add_permission_is_reflected_in_the_policy() {
    let t = TestServer::start().await;
    let url = t.create_queue("perms").await;
    t.client
        .add_permission()
        .queue_url(&url)
        .label("one")
        .aws_account_ids("123456789012")
        .actions("ReceiveMessage")
        .send()
        .await
        .unwrap();
    let policy = policy_of(&t.attributes(&url, &["Policy"]).await);
    assert_eq!(
        policy,
        serde_json::json!({
            "Version": "2008-10-17",
            "Id": format!("{}/SQSDefaultPolicy", arn("perms")),
            "Statement": [{
                "Sid": "one",
                "Effect": "Allow",
                "Principal": {"AWS": "arn:aws:iam::123456789012:root"},
                "Action": "SQS:ReceiveMessage",
                "Resource": arn("perms"),
            }]
        })
    );

    // Several accounts and actions become arrays.
    t.client
        .add_permission()
        .queue_url(&url)
        .label("two")
        .aws_account_ids("111111111111")
        .aws_account_ids("222222222222")
        .actions("SendMessage")
        .actions("DeleteMessage")
        .send()
        .await
        .unwrap();
    let policy = policy_of(&t.attributes(&url, &["All"]).await);
    let statements = policy["Statement"].as_array().unwrap();
    assert_eq!(statements.len(), 2);
    assert_eq!(
        statements[1],
        serde_json::json!({
            "Sid": "two",
            "Effect": "Allow",
            "Principal": {"AWS": ["arn:aws:iam::111111111111:root", "arn:aws:iam::222222222222:root"]},
            "Action": ["SQS:SendMessage", "SQS:DeleteMessage"],
            "Resource": arn("perms"),
        })
    );

    // A duplicate label.
    let err = service_error(
        t.client
            .add_permission()
            .queue_url(&url)
            .label("one")
            .aws_account_ids("123456789012")
            .actions("SendMessage")
            .send()
            .await,
    );
    assert_service_error(
        &err,
        "InvalidParameterValue",
        "Value one for parameter Label is invalid. Reason: Already exists.",
    );

    // Removing an unknown label.
    let err = service_error(
        t.client
            .remove_permission()
            .queue_url(&url)
            .label("three")
            .send()
            .await,
    );
    assert_service_error(
        &err,
        "InvalidParameterValue",
        "Value three for parameter Label is invalid. Reason: can't find label.",
    );

    // Remove one: the other statement stays.
    t.client
        .remove_permission()
        .queue_url(&url)
        .label("one")
        .send()
        .await
        .unwrap();
    let policy = policy_of(&t.attributes(&url, &["Policy"]).await);
    let statements = policy["Statement"].as_array().unwrap();
    assert_eq!(statements.len(), 1);
    assert_eq!(statements[0]["Sid"], "two");

    // Remove the last one: Policy disappears.
    t.client
        .remove_permission()
        .queue_url(&url)
        .label("two")
        .send()
        .await
        .unwrap();
    assert_eq!(t.attribute(&url, "Policy").await, None);
    let all = t.attributes(&url, &["All"]).await;
    assert!(!all.contains_key("Policy"), "{all:?}");
    assert_eq!(all.len(), 12);
}

#[tokio::test]
async fn add_permission_limits() {
    let t = TestServer::start().await;
    let url = t.create_queue("perm-limits").await;
    let mut req = t
        .client
        .add_permission()
        .queue_url(&url)
        .label("many")
        .aws_account_ids("123456789012");
    for a in [
        "SendMessage",
        "ReceiveMessage",
        "DeleteMessage",
        "ChangeMessageVisibility",
        "GetQueueAttributes",
        "GetQueueUrl",
        "PurgeQueue",
        "ListQueueTags",
    ] {
        req = req.actions(a);
    }
    let f = failure(req.send().await);
    assert_eq!(f.err.code(), Some("OverLimit"), "{:?}", f.err);
    assert_eq!(f.status, 403);
    assert_eq!(
        f.err.message(),
        Some("8 Actions were found, maximum allowed is 7.")
    );
    assert_eq!(t.attribute(&url, "Policy").await, None);
}

// -------------------------------------------------------- queue URL forms

#[tokio::test]
async fn queues_can_be_named_by_any_url_form() {
    let t = TestServer::start().await;
    let url = t.create_queue("forms").await;
    for form in [
        "https://sqs.us-east-1.amazonaws.com/000000000000/forms".to_string(),
        "https://queue.amazonaws.com/000000000000/forms".to_string(),
        "http://localhost:9324/000000000000/forms".to_string(),
        format!("{}/queue/us-east-1/000000000000/forms", t.endpoint),
        "forms".to_string(),
    ] {
        t.client
            .send_message()
            .queue_url(&form)
            .message_body(form.clone())
            .send()
            .await
            .unwrap_or_else(|e| panic!("{form}: {e:?}"));
    }
    assert_eq!(t.counts(&url).await, (5, 0, 0));
    // An AWS URL naming another region names another queue.
    let err = service_error(
        t.client
            .send_message()
            .queue_url("https://sqs.eu-west-1.amazonaws.com/000000000000/forms")
            .message_body("x")
            .send()
            .await,
    );
    assert!(err.is_queue_does_not_exist());
}

#[tokio::test]
async fn queue_urls_follow_the_host_header() {
    let t = TestServer::start().await;
    let raw = t
        .raw(
            t.http
                .post(format!("{}/", t.endpoint))
                .header("host", "retsu:9324")
                .header("content-type", "application/x-amz-json-1.0")
                .header("x-amz-target", "AmazonSQS.CreateQueue")
                .body(r#"{"QueueName":"hosted"}"#),
        )
        .await;
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert_eq!(
        raw.json()["QueueUrl"],
        "http://retsu:9324/000000000000/hosted"
    );
    let raw = t
        .raw(
            t.http
                .post(format!("{}/", t.endpoint))
                .header("host", "localhost:4566")
                .header("content-type", "application/x-amz-json-1.0")
                .header("x-amz-target", "AmazonSQS.GetQueueUrl")
                .body(r#"{"QueueName":"hosted"}"#),
        )
        .await;
    assert_eq!(
        raw.json()["QueueUrl"],
        "http://localhost:4566/000000000000/hosted"
    );
}

#[tokio::test]
async fn a_pinned_base_url_overrides_the_host() {
    let t = TestServer::start_with(retsu::config::Config {
        base_url: Some("http://sqs.example.test:9999".into()),
        ..retsu::config::Config::ephemeral()
    })
    .await;
    let url = t.create_queue("pinned").await;
    assert_eq!(url, "http://sqs.example.test:9999/000000000000/pinned");
    // Calls naming the queue by that URL still reach it.
    t.send(&url, "x").await;
    assert_eq!(t.counts(&url).await, (1, 0, 0));
}

#[tokio::test]
async fn list_queues_returns_at_most_1000_without_a_token() {
    let t = TestServer::start().await;
    for i in 0..1001 {
        t.client
            .create_queue()
            .queue_name(format!("many-{i:04}"))
            .send()
            .await
            .unwrap();
    }
    let out = t.client.list_queues().send().await.unwrap();
    assert_eq!(out.queue_urls().len(), 1000);
    assert_eq!(out.next_token(), None, "no NextToken without MaxResults");
    // With MaxResults the rest can be reached.
    let out = t
        .client
        .list_queues()
        .max_results(1000)
        .send()
        .await
        .unwrap();
    assert_eq!(out.queue_urls().len(), 1000);
    let token = out.next_token().expect("more remain").to_string();
    let rest = t
        .client
        .list_queues()
        .max_results(1000)
        .next_token(token)
        .send()
        .await
        .unwrap();
    assert_eq!(rest.queue_urls().len(), 1);
    assert_eq!(rest.next_token(), None);
}

#[tokio::test]
async fn kms_attributes_appear_and_vanish() {
    let t = TestServer::start().await;
    let url = t.create_queue("kms").await;
    t.set_attributes(&url, &[("KmsMasterKeyId", "alias/aws/sqs")])
        .await;
    let a = t.attributes(&url, &["All"]).await;
    assert_eq!(a["KmsMasterKeyId"], "alias/aws/sqs");
    assert_eq!(a["KmsDataKeyReusePeriodSeconds"], "300");
    assert_eq!(a["SqsManagedSseEnabled"], "false");
    assert_eq!(a.len(), 14, "{a:?}");
    t.set_attributes(
        &url,
        &[
            ("KmsMasterKeyId", ""),
            ("KmsDataKeyReusePeriodSeconds", "300"),
        ],
    )
    .await;
    let a = t.attributes(&url, &["All"]).await;
    assert!(!a.contains_key("KmsMasterKeyId"), "{a:?}");
    assert!(!a.contains_key("KmsDataKeyReusePeriodSeconds"), "{a:?}");
    assert_eq!(a["SqsManagedSseEnabled"], "false");
    assert_eq!(a.len(), 12);
}

#[tokio::test]
async fn invalid_policy_and_tag_values_are_refused() {
    let t = TestServer::start().await;
    let url = t.create_queue("invalid-values").await;
    let err = t
        .set_attributes_error(&url, &[("Policy", "{not json")])
        .await;
    assert!(err.is_invalid_attribute_value(), "{err:?}");
    assert_eq!(t.attribute(&url, "Policy").await, None);
    let err = service_error(
        t.client
            .tag_queue()
            .queue_url(&url)
            .tags("k".repeat(129), "v")
            .send()
            .await,
    );
    assert_eq!(err.code(), Some("InvalidParameterValue"), "{err:?}");
    let err = service_error(
        t.client
            .tag_queue()
            .queue_url(&url)
            .tags("k", "v".repeat(257))
            .send()
            .await,
    );
    assert_eq!(err.code(), Some("InvalidParameterValue"), "{err:?}");
    t.client
        .tag_queue()
        .queue_url(&url)
        .tags("k".repeat(128), "v".repeat(256))
        .send()
        .await
        .expect("the limits themselves are fine");
}
