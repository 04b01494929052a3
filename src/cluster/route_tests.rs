//! Routes of hand-built requests (every SQS action in JSON, query, the
//! queue-URL path form and GET; every SNS action Retsu serves; STS; the
//! admin API), checked where possible against the engine's own reading of
//! the same bytes; malformed and random bytes; and the requests the
//! official SDKs put on the wire, recorded from a socket.

use super::*;
use crate::protocol::{Decoded, HttpRequest};
use axum::http::HeaderMap;
use bytes::Bytes;

const ACCOUNT: &str = "000000000000";
const OTHER: &str = "111122223333";
const URL: &str = "http://localhost:9324/000000000000/q";
const JSON_TYPE: (&str, &str) = ("content-type", "application/x-amz-json-1.0");
const FORM: (&str, &str) = ("content-type", "application/x-www-form-urlencoded");
const HOST: (&str, &str) = ("host", "localhost:9324");

fn settings() -> Settings {
    crate::protocol::context::test_settings()
}

fn request(path: &str, query: Option<&str>, headers: &[(&str, &str)], body: &[u8]) -> HttpRequest {
    let mut h = HeaderMap::new();
    for (k, v) in headers {
        h.append(
            axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            v.parse().unwrap(),
        );
    }
    HttpRequest {
        path: path.into(),
        query: query.map(str::to_string),
        headers: h,
        body: Bytes::copy_from_slice(body),
    }
}

fn post(req: &HttpRequest) -> Route {
    route(&Method::POST, req, ACCOUNT, &settings())
}

fn key_of(kind: Kind, region: &str, account: &str, name: &str) -> Key {
    Key {
        kind,
        account: account.into(),
        region: region.into(),
        name: name.into(),
    }
}

fn queue(name: &str) -> Key {
    key_of(Kind::Queue, "us-east-1", ACCOUNT, name)
}

fn topic(name: &str) -> Key {
    key_of(Kind::Topic, "us-east-1", ACCOUNT, name)
}

fn app(name: &str) -> Key {
    key_of(Kind::Application, "us-east-1", ACCOUNT, name)
}

fn one(key: Key) -> Route {
    Route::One { key, create: false }
}

fn created(key: Key) -> Route {
    Route::One { key, create: true }
}

fn sigv4(region: &str, service: &str) -> String {
    format!("AWS4-HMAC-SHA256 Credential=AKID/20240101/{region}/{service}/aws4_request, SignedHeaders=host, Signature=x")
}

fn json(action: &str, body: &str) -> HttpRequest {
    let target = format!("AmazonSQS.{action}");
    request(
        "/",
        None,
        &[("x-amz-target", &target), JSON_TYPE, HOST],
        body.as_bytes(),
    )
}

fn form(path: &str, body: &str) -> HttpRequest {
    request(path, None, &[FORM, HOST], body.as_bytes())
}

/// The queue the server's own decoding finds in the request (the one
/// its faults and authorization use), when it decodes as SQS.
fn engine_queue(req: &HttpRequest) -> Option<Key> {
    match crate::protocol::decode(req, &settings(), "rid") {
        Ok(Decoded::Sqs(call)) => call.request.fault_queue(&call.context).map(Key::queue),
        _ => None,
    }
}

/// Every action that names its queue by `QueueUrl`, with the rest of its
/// required members, as botocore's model shapes them in JSON and in the
/// query protocol (`QueueUrl` left out of both).
const BY_URL: &[(&str, &str, &str)] = &[
    (
        "AddPermission",
        r#""Label":"l","AWSAccountIds":["111122223333"],"Actions":["SendMessage"]"#,
        "Label=l&AWSAccountId.1=111122223333&ActionName.1=SendMessage",
    ),
    (
        "ChangeMessageVisibility",
        r#""ReceiptHandle":"rh","VisibilityTimeout":5"#,
        "ReceiptHandle=rh&VisibilityTimeout=5",
    ),
    (
        "ChangeMessageVisibilityBatch",
        r#""Entries":[{"Id":"a","ReceiptHandle":"rh","VisibilityTimeout":5}]"#,
        "ChangeMessageVisibilityBatchRequestEntry.1.Id=a&ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle=rh",
    ),
    ("DeleteMessage", r#""ReceiptHandle":"rh""#, "ReceiptHandle=rh"),
    (
        "DeleteMessageBatch",
        r#""Entries":[{"Id":"a","ReceiptHandle":"rh"}]"#,
        "DeleteMessageBatchRequestEntry.1.Id=a&DeleteMessageBatchRequestEntry.1.ReceiptHandle=rh",
    ),
    ("DeleteQueue", "", ""),
    (
        "GetQueueAttributes",
        r#""AttributeNames":["All"]"#,
        "AttributeName.1=All",
    ),
    ("ListQueueTags", "", ""),
    ("PurgeQueue", "", ""),
    (
        "ReceiveMessage",
        r#""MaxNumberOfMessages":10,"WaitTimeSeconds":20,"MessageAttributeNames":["All"]"#,
        "MaxNumberOfMessages=10&WaitTimeSeconds=20&MessageAttributeName.1=All",
    ),
    ("RemovePermission", r#""Label":"l""#, "Label=l"),
    (
        "SendMessage",
        r#""MessageBody":"hello \"QueueUrl\": x","MessageAttributes":{"a":{"DataType":"String","StringValue":"v"}}"#,
        "MessageBody=hello+QueueUrl%3Dx&MessageAttribute.1.Name=a&MessageAttribute.1.Value.DataType=String&MessageAttribute.1.Value.StringValue=v",
    ),
    (
        "SendMessageBatch",
        r#""Entries":[{"Id":"a","MessageBody":"b"},{"Id":"c","MessageBody":"d"}]"#,
        "SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=b",
    ),
    (
        "SetQueueAttributes",
        r#""Attributes":{"VisibilityTimeout":"5"}"#,
        "Attribute.1.Name=VisibilityTimeout&Attribute.1.Value=5",
    ),
    (
        "TagQueue",
        r#""Tags":{"k":"v"}"#,
        "Tag.1.Key=k&Tag.1.Value=v",
    ),
    ("UntagQueue", r#""TagKeys":["k"]"#, "TagKey.1=k"),
];

fn json_body(members: &str, url: &str) -> String {
    let url = serde_json::to_string(url).unwrap();
    if members.is_empty() {
        format!(r#"{{"QueueUrl":{url}}}"#)
    } else {
        format!(r#"{{"QueueUrl":{url},{members}}}"#)
    }
}

fn form_body(action: &str, params: &str, url: Option<&str>) -> String {
    let mut body = format!("Action={action}&Version=2012-11-05");
    if let Some(url) = url {
        body.push_str("&QueueUrl=");
        body.extend(form_urlencoded::byte_serialize(url.as_bytes()));
    }
    if !params.is_empty() {
        body.push('&');
        body.push_str(params);
    }
    body
}

#[test]
fn every_queue_url_action_in_every_form_goes_to_its_queue() {
    let want = one(queue("q"));
    for (action, json_members, query_params) in BY_URL {
        let reqs = [
            ("json", json(action, &json_body(json_members, URL))),
            (
                "form",
                form("/", &form_body(action, query_params, Some(URL))),
            ),
            // Java v1 and old SDKs: the queue URL as the path.
            (
                "path",
                form("/000000000000/q", &form_body(action, query_params, None)),
            ),
            (
                "get",
                request(
                    "/",
                    Some(&form_body(action, query_params, Some(URL))),
                    &[HOST],
                    b"",
                ),
            ),
        ];
        for (how, req) in reqs {
            assert_eq!(post(&req), want, "{action} by {how}");
            assert_eq!(
                engine_queue(&req),
                Some(queue("q")),
                "{action} by {how}: the engine reads another queue"
            );
        }
        // The JSON decoder reads only the body, whatever the path.
        let mut on_path = json(action, &json_body(json_members, URL));
        on_path.path = "/000000000000/other".into();
        assert_eq!(
            post(&on_path),
            want,
            "{action} JSON on another queue's path"
        );
        // QueueUrl missing: any shard answers AWS's error.
        let missing = json(action, "{}");
        assert_eq!(post(&missing), Route::Unknown, "{action} without QueueUrl");
    }
}

#[test]
fn queue_url_forms_name_their_region() {
    // (QueueUrl, region of the key) in every form the engine reads.
    let cases = [
        ("http://localhost:9324/000000000000/q", "us-east-1"),
        (
            "https://sqs.eu-west-1.amazonaws.com/000000000000/q",
            "eu-west-1",
        ),
        (
            "https://eu-west-2.queue.amazonaws.com/000000000000/q",
            "eu-west-2",
        ),
        (
            "http://sqs.ap-south-1.localhost.localstack.cloud:4566/000000000000/q",
            "ap-south-1",
        ),
        (
            "http://localhost:4566/queue/ca-central-1/000000000000/q",
            "ca-central-1",
        ),
        ("q", "us-east-1"),
    ];
    for (url, region) in cases {
        let req = json("SendMessage", &json_body(r#""MessageBody":"b""#, url));
        let want = one(key_of(Kind::Queue, region, ACCOUNT, "q"));
        assert_eq!(post(&req), want, "{url}");
        assert_eq!(
            engine_queue(&req),
            Some(key_of(Kind::Queue, region, ACCOUNT, "q"))
        );
    }
    // Another account's queue.
    let req = json(
        "SendMessage",
        &json_body(
            r#""MessageBody":"b""#,
            "http://localhost:9324/111122223333/q",
        ),
    );
    assert_eq!(
        post(&req),
        one(key_of(Kind::Queue, "us-east-1", OTHER, "q"))
    );
    // A path-style URL takes the region of the signature's scope.
    let mut req = json("SendMessage", &json_body(r#""MessageBody":"b""#, URL));
    req.headers.insert(
        "authorization",
        sigv4("eu-central-1", "sqs").parse().unwrap(),
    );
    assert_eq!(
        post(&req),
        one(key_of(Kind::Queue, "eu-central-1", ACCOUNT, "q"))
    );
    // LocalStack's path form, posted to.
    let req = form(
        "/queue/sa-east-1/000000000000/q",
        &form_body("SendMessage", "MessageBody=b", None),
    );
    assert_eq!(
        post(&req),
        one(key_of(Kind::Queue, "sa-east-1", ACCOUNT, "q"))
    );
    assert_eq!(
        engine_queue(&req),
        Some(key_of(Kind::Queue, "sa-east-1", ACCOUNT, "q"))
    );
    // Posted to a LocalStack host-style endpoint: the host names the region.
    let req = request(
        "/000000000000/q",
        None,
        &[
            FORM,
            ("host", "sqs.eu-west-3.localhost.localstack.cloud:4566"),
        ],
        form_body("SendMessage", "MessageBody=b", None).as_bytes(),
    );
    let want = key_of(Kind::Queue, "eu-west-3", ACCOUNT, "q");
    assert_eq!(post(&req), one(want.clone()));
    assert_eq!(engine_queue(&req), Some(want));
}

#[test]
fn a_path_form_request_is_read_against_the_pinned_base_url() {
    // --localstack pins LocalStack's host-style URLs: the server reads a
    // path-form request's region from that host, and so does the route.
    let mut pinned = settings();
    pinned.base_url = Some("http://sqs.ap-south-1.localhost.localstack.cloud:4566".into());
    let req = form("/000000000000/q", &form_body("DeleteQueue", "", None));
    let want = one(key_of(Kind::Queue, "ap-south-1", ACCOUNT, "q"));
    assert_eq!(route(&Method::POST, &req, ACCOUNT, &pinned), want);
    match crate::protocol::decode(&req, &pinned, "rid") {
        Ok(Decoded::Sqs(call)) => assert_eq!(
            call.request.fault_queue(&call.context).map(Key::queue),
            Some(key_of(Kind::Queue, "ap-south-1", ACCOUNT, "q"))
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn create_queue_and_get_queue_url_by_name() {
    let want = created(queue("q"));
    assert_eq!(post(&json("CreateQueue", r#"{"QueueName":"q"}"#)), want);
    assert_eq!(
        post(&form(
            "/",
            "Action=CreateQueue&QueueName=q&Attribute.1.Name=DelaySeconds&Attribute.1.Value=1"
        )),
        want
    );
    assert_eq!(
        post(&json(
            "CreateQueue",
            r#"{"QueueName":"q.fifo","Attributes":{"FifoQueue":"true"}}"#
        )),
        created(queue("q.fifo"))
    );
    // In the region of the signature's scope.
    let mut signed = json("CreateQueue", r#"{"QueueName":"q"}"#);
    signed
        .headers
        .insert("authorization", sigv4("eu-north-1", "sqs").parse().unwrap());
    assert_eq!(
        post(&signed),
        created(key_of(Kind::Queue, "eu-north-1", ACCOUNT, "q"))
    );
    // In the caller's account (the access key's, under --auth).
    assert_eq!(
        route(
            &Method::POST,
            &json("CreateQueue", r#"{"QueueName":"q"}"#),
            OTHER,
            &settings()
        ),
        created(key_of(Kind::Queue, "us-east-1", OTHER, "q"))
    );
    // A name the engine refuses is never placed.
    for bad in [
        r#"{"QueueName":"a b"}"#,
        r#"{"QueueName":""}"#,
        r#"{"QueueName":".fifo"}"#,
        r#"{}"#,
        &format!(r#"{{"QueueName":"{}"}}"#, "x".repeat(81)),
    ] {
        assert_eq!(post(&json("CreateQueue", bad)), Route::Unknown, "{bad}");
    }
    // Refused on a queue's endpoint.
    assert_eq!(
        post(&form("/000000000000/q", "Action=CreateQueue&QueueName=q")),
        Route::Unknown
    );

    assert_eq!(
        post(&json("GetQueueUrl", r#"{"QueueName":"q"}"#)),
        one(queue("q"))
    );
    assert_eq!(
        post(&json(
            "GetQueueUrl",
            r#"{"QueueName":"q","QueueOwnerAWSAccountId":"111122223333"}"#
        )),
        one(key_of(Kind::Queue, "us-east-1", OTHER, "q"))
    );
    assert_eq!(
        post(&json(
            "GetQueueUrl",
            r#"{"QueueName":"q","QueueOwnerAWSAccountId":""}"#
        )),
        one(queue("q"))
    );
    // Valid on a queue's endpoint, for the queue it names.
    assert_eq!(
        post(&form(
            "/000000000000/q",
            "Action=GetQueueUrl&QueueName=other"
        )),
        one(queue("other"))
    );
    assert_eq!(post(&json("GetQueueUrl", "{}")), Route::Unknown);
}

#[test]
fn under_auth_the_account_is_the_access_keys() {
    let key = crate::auth::AuthKey::new("AKIDROUTE", "secret", OTHER).unwrap();
    let verifier = crate::auth::Verifier::from_settings(true, &[key])
        .unwrap()
        .unwrap();
    let mut req = json("CreateQueue", r#"{"QueueName":"q"}"#);
    req.headers.insert(
        "authorization",
        "AWS4-HMAC-SHA256 Credential=AKIDROUTE/20240101/eu-west-1/sqs/aws4_request, SignedHeaders=host, Signature=x"
            .parse()
            .unwrap(),
    );
    req.headers
        .insert("x-amz-date", "20240101T000000Z".parse().unwrap());
    let account = verifier.claimed_account(&req).unwrap();
    assert_eq!(account, OTHER);
    assert_eq!(
        route(&Method::POST, &req, account, &settings()),
        created(key_of(Kind::Queue, "eu-west-1", OTHER, "q"))
    );
    // Presigned: the credential in the query string.
    let presigned = request(
        "/",
        Some("Action=ListQueues&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDROUTE%2F20240101%2Fus-east-1%2Fsqs%2Faws4_request&X-Amz-Date=20240101T000000Z&X-Amz-SignedHeaders=host&X-Amz-Signature=x"),
        &[HOST],
        b"",
    );
    assert_eq!(verifier.claimed_account(&presigned), Some(OTHER));
    // A key it does not know, or no credential: no account.
    req.headers
        .insert("authorization", sigv4("eu-west-1", "sqs").parse().unwrap());
    assert_eq!(verifier.claimed_account(&req), None);
    assert_eq!(
        verifier.claimed_account(&form("/", "Action=ListQueues")),
        None
    );
}

#[test]
fn listings_are_gathered_with_their_paging() {
    let want = Route::Gather(Gathered::Queues {
        account: ACCOUNT.into(),
        region: "us-east-1".into(),
        prefix: Some("p".into()),
        next_token: Some("t".into()),
        max_results: Some(5),
    });
    assert_eq!(
        post(&json(
            "ListQueues",
            r#"{"QueueNamePrefix":"p","NextToken":"t","MaxResults":5}"#
        )),
        want
    );
    assert_eq!(
        post(&json(
            "ListQueues",
            r#"{"QueueNamePrefix":"p","NextToken":"t","MaxResults":"5"}"#
        )),
        want
    );
    assert_eq!(
        post(&form(
            "/",
            "Action=ListQueues&QueueNamePrefix=p&NextToken=t&MaxResults=5"
        )),
        want
    );
    assert_eq!(
        post(&json("ListQueues", "")),
        Route::Gather(Gathered::Queues {
            account: ACCOUNT.into(),
            region: "us-east-1".into(),
            prefix: None,
            next_token: None,
            max_results: None,
        })
    );
    for bad in [
        r#"{"MaxResults":"x"}"#,
        r#"{"MaxResults":1.5}"#,
        r#"{"MaxResults":99999999999}"#,
        r#"{"MaxResults":[1]}"#,
    ] {
        assert_eq!(post(&json("ListQueues", bad)), Route::Unknown, "{bad}");
    }
    assert_eq!(
        post(&form("/000000000000/q", "Action=ListQueues")),
        Route::Unknown
    );

    let sources = Route::Gather(Gathered::DeadLetterSources {
        queue: queue("dlq"),
        next_token: None,
        max_results: Some(10),
    });
    assert_eq!(
        post(&json(
            "ListDeadLetterSourceQueues",
            r#"{"QueueUrl":"http://localhost:9324/000000000000/dlq","MaxResults":10}"#
        )),
        sources
    );
    assert_eq!(
        post(&form(
            "/000000000000/dlq",
            "Action=ListDeadLetterSourceQueues&MaxResults=10"
        )),
        sources
    );
    assert_eq!(
        post(&json("ListDeadLetterSourceQueues", "{}")),
        Route::Unknown
    );
}

#[test]
fn move_tasks_go_to_their_source_queue() {
    use base64::Engine as _;
    let arn = "arn:aws:sqs:us-east-1:000000000000:dlq";
    let want = one(queue("dlq"));
    let start = format!(
        r#"{{"SourceArn":"{arn}","DestinationArn":"arn:aws:sqs:us-east-1:000000000000:elsewhere"}}"#
    );
    assert_eq!(post(&json("StartMessageMoveTask", &start)), want);
    assert_eq!(
        post(&json(
            "ListMessageMoveTasks",
            &format!(r#"{{"SourceArn":"{arn}","MaxResults":10}}"#)
        )),
        want
    );
    assert_eq!(
        post(&form(
            "/",
            &format!("Action=StartMessageMoveTask&SourceArn={arn}")
        )),
        want
    );
    // A handle as the engine makes it: the task's source queue inside.
    let handle = base64::engine::general_purpose::STANDARD
        .encode(format!(r#"{{"taskId":"t1","sourceArn":"{arn}"}}"#));
    assert_eq!(
        post(&json(
            "CancelMessageMoveTask",
            &format!(r#"{{"TaskHandle":"{handle}"}}"#)
        )),
        want
    );
    let encoded: String = form_urlencoded::byte_serialize(handle.as_bytes()).collect();
    assert_eq!(
        post(&form(
            "/",
            &format!("Action=CancelMessageMoveTask&TaskHandle={encoded}")
        )),
        want
    );
    for bad in [
        r#"{"TaskHandle":"not base64!"}"#,
        r#"{"TaskHandle":"e30="}"#,
        r#"{}"#,
    ] {
        assert_eq!(
            post(&json("CancelMessageMoveTask", bad)),
            Route::Unknown,
            "{bad}"
        );
    }
    assert_eq!(
        post(&json(
            "StartMessageMoveTask",
            r#"{"SourceArn":"arn:aws:sns:us-east-1:000000000000:t"}"#
        )),
        Route::Unknown
    );
}

/// An SNS query request signed for SNS in us-east-1.
fn sns(params: &str) -> HttpRequest {
    let auth = sigv4("us-east-1", "sns");
    request(
        "/",
        None,
        &[FORM, HOST, ("authorization", &auth)],
        format!("{params}&Version=2010-03-31").as_bytes(),
    )
}

#[test]
fn every_sns_action_goes_to_its_topic_or_application() {
    let topic_arn = "arn%3Aaws%3Asns%3Aus-east-1%3A000000000000%3At";
    let sub_arn = "arn:aws:sns:us-east-1:000000000000:t:5b1f7a9e-0c2d-4b8e-9f3a-1d2c3b4a5e6f";
    let app_arn = "arn:aws:sns:us-east-1:000000000000:app/GCM/a";
    let endpoint_arn = "arn:aws:sns:us-east-1:000000000000:endpoint/GCM/a/0a1b2c3d";
    let t = one(topic("t"));
    let a = one(app("app/GCM/a"));
    let cases: Vec<(String, Route)> = vec![
        ("Action=CreateTopic&Name=t".into(), created(topic("t"))),
        (
            "Action=CreateTopic&Name=t.fifo&Attributes.entry.1.key=FifoTopic&Attributes.entry.1.value=true".into(),
            created(topic("t.fifo")),
        ),
        (format!("Action=DeleteTopic&TopicArn={topic_arn}"), t.clone()),
        (format!("Action=GetTopicAttributes&TopicArn={topic_arn}"), t.clone()),
        (
            format!("Action=SetTopicAttributes&TopicArn={topic_arn}&AttributeName=DisplayName&AttributeValue=x"),
            t.clone(),
        ),
        (
            format!("Action=Subscribe&TopicArn={topic_arn}&Protocol=sqs&Endpoint=arn:aws:sqs:us-east-1:000000000000:q"),
            t.clone(),
        ),
        (
            format!("Action=ConfirmSubscription&TopicArn={topic_arn}&Token=abc"),
            t.clone(),
        ),
        (
            format!("Action=ListSubscriptionsByTopic&TopicArn={topic_arn}"),
            t.clone(),
        ),
        (format!("Action=Publish&TopicArn={topic_arn}&Message=m"), t.clone()),
        (format!("Action=Publish&TargetArn={topic_arn}&Message=m"), t.clone()),
        (
            format!("Action=Publish&TargetArn={endpoint_arn}&Message=m"),
            a.clone(),
        ),
        ("Action=Publish&PhoneNumber=%2B15555550100&Message=m".into(), Route::Any),
        ("Action=Publish&Message=m".into(), Route::Unknown),
        (
            format!("Action=PublishBatch&TopicArn={topic_arn}&PublishBatchRequestEntries.member.1.Id=1&PublishBatchRequestEntries.member.1.Message=m"),
            t.clone(),
        ),
        (
            format!("Action=AddPermission&TopicArn={topic_arn}&Label=l&AWSAccountId.member.1=111122223333&ActionName.member.1=Publish"),
            t.clone(),
        ),
        (
            format!("Action=RemovePermission&TopicArn={topic_arn}&Label=l"),
            t.clone(),
        ),
        (format!("Action=Unsubscribe&SubscriptionArn={sub_arn}"), t.clone()),
        (
            format!("Action=GetSubscriptionAttributes&SubscriptionArn={sub_arn}"),
            t.clone(),
        ),
        (
            format!("Action=SetSubscriptionAttributes&SubscriptionArn={sub_arn}&AttributeName=RawMessageDelivery&AttributeValue=true"),
            t.clone(),
        ),
        // A subscription ARN without its id names no subscription.
        (
            "Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-east-1:000000000000:t".into(),
            Route::Unknown,
        ),
        (
            format!("Action=TagResource&ResourceArn={topic_arn}&Tags.member.1.Key=k&Tags.member.1.Value=v"),
            t.clone(),
        ),
        (
            format!("Action=UntagResource&ResourceArn={topic_arn}&TagKeys.member.1=k"),
            t.clone(),
        ),
        (format!("Action=ListTagsForResource&ResourceArn={topic_arn}"), t.clone()),
        (
            format!("Action=GetDataProtectionPolicy&ResourceArn={topic_arn}"),
            t.clone(),
        ),
        (
            format!("Action=PutDataProtectionPolicy&ResourceArn={topic_arn}&DataProtectionPolicy=%7B%7D"),
            t.clone(),
        ),
        (
            "Action=CreatePlatformApplication&Name=a&Platform=GCM&Attributes.entry.1.key=PlatformCredential&Attributes.entry.1.value=k".into(),
            created(app("app/GCM/a")),
        ),
        ("Action=CreatePlatformApplication&Name=a".into(), Route::Unknown),
        (
            format!("Action=CreatePlatformEndpoint&PlatformApplicationArn={app_arn}&Token=tok"),
            a.clone(),
        ),
        (
            format!("Action=DeletePlatformApplication&PlatformApplicationArn={app_arn}"),
            a.clone(),
        ),
        (
            format!("Action=GetPlatformApplicationAttributes&PlatformApplicationArn={app_arn}"),
            a.clone(),
        ),
        (
            format!("Action=SetPlatformApplicationAttributes&PlatformApplicationArn={app_arn}&Attributes.entry.1.key=k&Attributes.entry.1.value=v"),
            a.clone(),
        ),
        (
            format!("Action=ListEndpointsByPlatformApplication&PlatformApplicationArn={app_arn}"),
            a.clone(),
        ),
        (format!("Action=DeleteEndpoint&EndpointArn={endpoint_arn}"), a.clone()),
        (
            format!("Action=GetEndpointAttributes&EndpointArn={endpoint_arn}"),
            a.clone(),
        ),
        (
            format!("Action=SetEndpointAttributes&EndpointArn={endpoint_arn}&Attributes.entry.1.key=Enabled&Attributes.entry.1.value=true"),
            a.clone(),
        ),
        (
            "Action=ListTopics&NextToken=n".into(),
            Route::Gather(Gathered::Topics {
                account: ACCOUNT.into(),
                region: "us-east-1".into(),
                next_token: Some("n".into()),
            }),
        ),
        (
            "Action=ListSubscriptions".into(),
            Route::Gather(Gathered::Subscriptions {
                account: ACCOUNT.into(),
                region: "us-east-1".into(),
                next_token: None,
            }),
        ),
        (
            "Action=ListPlatformApplications".into(),
            Route::Gather(Gathered::Applications {
                account: ACCOUNT.into(),
                region: "us-east-1".into(),
                next_token: None,
            }),
        ),
        // Bad ARNs and names: the engine's error, from any shard.
        ("Action=CreateTopic&Name=a%20b".into(), Route::Unknown),
        ("Action=CreateTopic".into(), Route::Unknown),
        ("Action=DeleteTopic&TopicArn=t".into(), Route::Unknown),
        ("Action=DeleteTopic&TopicArn=".into(), Route::Unknown),
        (
            "Action=DeleteTopic&TopicArn=arn:aws:sqs:us-east-1:000000000000:t".into(),
            Route::Unknown,
        ),
        ("Action=DeleteEndpoint&EndpointArn=arn:aws:sns:us-east-1:000000000000:t".into(), Route::Unknown),
        // SNS actions Retsu does not serve, and SQS's names signed for SNS.
        ("Action=CheckIfPhoneNumberIsOptedOut&phoneNumber=1".into(), Route::Unknown),
        ("Action=SendMessage&QueueUrl=x&MessageBody=b".into(), Route::Unknown),
    ];
    for (params, want) in cases {
        assert_eq!(post(&sns(&params)), want, "{params}");
    }
    // A topic in another region and account keeps the ARN's.
    assert_eq!(
        post(&sns(
            "Action=GetTopicAttributes&TopicArn=arn:aws:sns:eu-west-1:111122223333:t"
        )),
        one(key_of(Kind::Topic, "eu-west-1", OTHER, "t"))
    );
    // CreateTopic in the scope's region.
    let auth = sigv4("ap-northeast-1", "sns");
    let req = request(
        "/",
        None,
        &[FORM, ("authorization", &auth)],
        b"Action=CreateTopic&Name=t",
    );
    assert_eq!(
        post(&req),
        created(key_of(Kind::Topic, "ap-northeast-1", ACCOUNT, "t"))
    );
}

#[test]
fn unsigned_requests_are_told_apart_by_action() {
    // The UnsubscribeURL and SubscribeURL GETs SNS puts in its messages.
    let sub_arn = "arn:aws:sns:us-east-1:000000000000:t:5b1f7a9e";
    let get = request(
        "/",
        Some(&format!("Action=Unsubscribe&SubscriptionArn={sub_arn}")),
        &[HOST],
        b"",
    );
    assert_eq!(
        route(&Method::GET, &get, ACCOUNT, &settings()),
        one(topic("t"))
    );
    let get = request(
        "/",
        Some("Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-east-1:000000000000:t&Token=x"),
        &[HOST],
        b"",
    );
    assert_eq!(
        route(&Method::GET, &get, ACCOUNT, &settings()),
        one(topic("t"))
    );
    // AddPermission: SNS's names a topic, SQS's a queue.
    assert_eq!(
        post(&form(
            "/",
            "Action=AddPermission&TopicArn=arn:aws:sns:us-east-1:000000000000:t&Label=l"
        )),
        one(topic("t"))
    );
    assert_eq!(
        post(&form(
            "/",
            &format!("Action=AddPermission&QueueUrl={URL}&Label=l&AWSAccountId.1=1&ActionName.1=SendMessage")
        )),
        one(queue("q"))
    );
    assert_eq!(
        post(&form(
            "/000000000000/q",
            "Action=AddPermission&TopicArn=arn:aws:sns:us-east-1:000000000000:t&Label=l"
        )),
        one(queue("q"))
    );
    // Signed for SQS, an SNS-only action is SQS's InvalidAction.
    let auth = sigv4("us-east-1", "sqs");
    let req = request(
        "/",
        None,
        &[FORM, ("authorization", &auth)],
        b"Action=Publish&TopicArn=arn:aws:sns:us-east-1:000000000000:t&Message=m",
    );
    assert_eq!(post(&req), Route::Unknown);
}

#[test]
fn sts_needs_no_shard() {
    assert_eq!(
        post(&form("/", "Action=GetCallerIdentity&Version=2011-06-15")),
        Route::Any
    );
    let auth = sigv4("us-east-1", "sts");
    let req = request(
        "/",
        None,
        &[FORM, ("authorization", &auth)],
        b"Action=GetCallerIdentity&Version=2011-06-15",
    );
    assert_eq!(post(&req), Route::Any);
    let req = request(
        "/",
        None,
        &[FORM, ("authorization", &auth)],
        b"Action=AssumeRole&Version=2011-06-15",
    );
    assert_eq!(post(&req), Route::Unknown);
}

#[test]
fn admin_routes() {
    use AdminGather as G;
    let s = settings();
    let admin = |m: Method, path: &str| route_admin(&m, path, None, &s);
    let q = one(key_of(Kind::Queue, "eu-west-1", ACCOUNT, "q"));
    let gather = |g| Route::Gather(Gathered::Admin(g));
    let cases = [
        (Method::GET, "/_retsu/health", gather(G::Health)),
        (Method::GET, "/_retsu/queues", gather(G::Queues)),
        (
            Method::GET,
            "/_retsu/queues/eu-west-1/000000000000/q",
            q.clone(),
        ),
        (
            Method::GET,
            "/_retsu/queues/eu-west-1/000000000000/q/messages",
            q.clone(),
        ),
        (
            Method::GET,
            "/_retsu/queues/eu-west-1/000000000000/q/messages/m1",
            q.clone(),
        ),
        (
            Method::DELETE,
            "/_retsu/queues/eu-west-1/000000000000/q/messages/m1",
            q.clone(),
        ),
        (
            Method::POST,
            "/_retsu/queues/eu-west-1/000000000000/q/messages/m1/restore",
            q.clone(),
        ),
        (
            Method::POST,
            "/_retsu/queues/eu-west-1/000000000000/q/reset",
            q.clone(),
        ),
        // Percent-escapes decode as the admin API decodes them.
        (
            Method::GET,
            "/_retsu/queues/eu-west-1/000000000000/q%2Efifo",
            one(key_of(Kind::Queue, "eu-west-1", ACCOUNT, "q.fifo")),
        ),
        (Method::GET, "/_retsu/clock", Route::Any),
        (Method::POST, "/_retsu/clock", Route::Any),
        (Method::POST, "/_retsu/reset", gather(G::Reset)),
        (Method::GET, "/_retsu/topics", gather(G::Topics)),
        (Method::GET, "/_retsu/inbox", gather(G::Inbox)),
        (Method::DELETE, "/_retsu/inbox", gather(G::Inbox)),
        (
            Method::GET,
            "/_retsu/subscriptions/arn:aws:sns:us-east-1:000000000000:t:abc/token",
            one(topic("t")),
        ),
        (
            Method::GET,
            "/_retsu/subscriptions/arn%3Aaws%3Asns%3Aus-east-1%3A000000000000%3At%3Aabc/token",
            one(topic("t")),
        ),
        (
            Method::GET,
            "/_retsu/subscriptions/nonsense/token",
            Route::Unknown,
        ),
        (Method::GET, "/_retsu/faults", gather(G::Faults)),
        (Method::POST, "/_retsu/faults", gather(G::Faults)),
        (Method::DELETE, "/_retsu/faults", gather(G::Faults)),
        (Method::GET, "/_retsu/functions", gather(G::Functions)),
        (Method::GET, "/_retsu/functions/f", gather(G::Functions)),
        (Method::PUT, "/_retsu/functions/f", gather(G::Functions)),
        (Method::DELETE, "/_retsu/functions/f", gather(G::Functions)),
        (
            Method::GET,
            "/_retsu/messages/m1",
            gather(G::MessageHistory),
        ),
        (Method::GET, "/_retsu/events", gather(G::Events)),
        (Method::GET, "/_retsu/events/stream", gather(G::EventStream)),
        (
            Method::GET,
            "/_retsu/lambda/mappings",
            gather(G::LambdaMappings),
        ),
        (
            Method::GET,
            "/_retsu/lambda/invocations",
            gather(G::LambdaInvocations),
        ),
        (Method::GET, "/_retsu/cluster", Route::Any),
        (Method::POST, "/_retsu/cluster/drain", Route::Any),
        (Method::POST, "/_retsu/cluster/undrain", Route::Any),
        (Method::GET, "/_retsu/ui/", Route::Any),
        (Method::GET, "/_retsu/ui/app.js", Route::Any),
        (
            Method::GET,
            "/_retsu/sns/SimpleNotificationService-x.pem",
            Route::Any,
        ),
        (Method::GET, "/_retsu", Route::Any),
        (Method::GET, "/_retsu/no/such/thing", Route::Any),
        // Wrong methods get the admin API's 404 from any node.
        (Method::POST, "/_retsu/queues", Route::Any),
        (Method::GET, "/_retsu/reset", Route::Any),
        (
            Method::GET,
            "/_aws/sns/sms-messages",
            gather(G::SmsMessages),
        ),
        (
            Method::DELETE,
            "/_aws/sns/sms-messages",
            gather(G::SmsMessages),
        ),
        (
            Method::GET,
            "/_aws/sns/platform-endpoint-messages",
            gather(G::PlatformEndpointMessages),
        ),
        (
            Method::GET,
            "/_aws/sns/subscription-tokens/arn:aws:sns:us-east-1:000000000000:t:abc",
            one(topic("t")),
        ),
        (Method::GET, "/_localstack/health", Route::Any),
        (Method::GET, "/_localstack/init/ready", Route::Any),
        (Method::GET, "/_aws/other", Route::Unknown),
    ];
    for (method, path, want) in cases {
        assert_eq!(admin(method.clone(), path), want, "{method} {path}");
        // The same through `route`, as the front calls it.
        let req = request(path, None, &[HOST], b"");
        assert_eq!(
            route(&method, &req, ACCOUNT, &s),
            want,
            "route: {method} {path}"
        );
    }
    // LocalStack's peek names its queue in the query or the body.
    let q = one(queue("q"));
    assert_eq!(
        route_admin(
            &Method::GET,
            "/_aws/sqs/messages",
            Some(&format!("QueueUrl={URL}")),
            &s
        ),
        q
    );
    assert_eq!(
        route_admin(&Method::GET, "/_aws/sqs/messages", Some("QueueUrl=q"), &s),
        q
    );
    assert_eq!(
        route_admin(&Method::GET, "/_aws/sqs/messages", None, &s),
        Route::Unknown
    );
    let req = request(
        "/_aws/sqs/messages",
        None,
        &[FORM],
        format!("Action=ReceiveMessage&QueueUrl={URL}").as_bytes(),
    );
    assert_eq!(route(&Method::POST, &req, ACCOUNT, &s), q);
    let req = request(
        "/_aws/sqs/messages",
        None,
        &[("content-type", "application/json")],
        format!(r#"{{"QueueUrl":"{URL}"}}"#).as_bytes(),
    );
    assert_eq!(route(&Method::POST, &req, ACCOUNT, &s), q);
}

#[test]
fn other_paths() {
    let s = settings();
    let get = |path: &str| {
        route(
            &Method::GET,
            &request(path, None, &[HOST], b""),
            ACCOUNT,
            &s,
        )
    };
    assert_eq!(get("/health"), Route::Any);
    assert_eq!(get("/metrics"), Route::Gather(Gathered::Metrics));
    // Other methods there reach the SQS handler.
    assert_eq!(
        post(&form("/health", "Action=ListQueues")),
        Route::Gather(Gathered::Queues {
            account: ACCOUNT.into(),
            region: "us-east-1".into(),
            prefix: None,
            next_token: None,
            max_results: None,
        })
    );
    // Lambda: a new mapping goes to its queue; the rest everywhere.
    let req = request(
        "/2015-03-31/event-source-mappings/",
        None,
        &[("content-type", "application/json")],
        br#"{"EventSourceArn":"arn:aws:sqs:us-east-1:000000000000:q","FunctionName":"f"}"#,
    );
    assert_eq!(route(&Method::POST, &req, ACCOUNT, &s), one(queue("q")));
    let req = request("/2015-03-31/event-source-mappings/", None, &[], b"{nope");
    assert_eq!(route(&Method::POST, &req, ACCOUNT, &s), Route::Unknown);
    assert_eq!(
        get("/2015-03-31/event-source-mappings/"),
        Route::Gather(Gathered::Lambda)
    );
    assert_eq!(
        route(
            &Method::DELETE,
            &request("/2015-03-31/event-source-mappings/abc", None, &[], b""),
            ACCOUNT,
            &s
        ),
        Route::Gather(Gathered::Lambda)
    );
    // The console's redirect and anything without an action.
    assert_eq!(get("/"), Route::Unknown);
}

#[test]
fn malformed_requests_are_unknown() {
    let bodies: &[&[u8]] = &[
        b"{nope",
        b"[]",
        b"5",
        b"null",
        br#"{"QueueUrl":5}"#,
        br#"{"QueueUrl":null}"#,
        br#"{"QueueUrl":"http://h/000000000000/q","QueueUrl":"http://h/000000000000/r"}"#,
        br#"{"QueueUrl":"http://h/a/b/c"}"#,
        br#"{"QueueUrl":""}"#,
        b"\xff\xfe",
    ];
    for body in bodies {
        let req = request(
            "/",
            None,
            &[("x-amz-target", "AmazonSQS.SendMessage"), JSON_TYPE],
            body,
        );
        assert_eq!(
            post(&req),
            Route::Unknown,
            "{}",
            String::from_utf8_lossy(body)
        );
    }
    // An unknown JSON target or query action.
    assert_eq!(post(&json("FooBar", "{}")), Route::Unknown);
    assert_eq!(post(&form("/", "Action=FooBar&QueueUrl=x")), Route::Unknown);
    // No action at all.
    assert_eq!(post(&form("/", "QueueUrl=x")), Route::Unknown);
    assert_eq!(post(&request("/", None, &[], b"")), Route::Unknown);
    // Invalid form escapes still decode (as the server decodes them).
    assert_eq!(
        post(&form(
            "/",
            &format!("Action=DeleteQueue&QueueUrl={URL}&%zz=%")
        )),
        one(queue("q"))
    );
}

/// A small deterministic generator, so a failure repeats.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = XorShift(0x5eed_1234_abcd_ef01);
    let seeds: Vec<HttpRequest> = BY_URL
        .iter()
        .flat_map(|(action, members, params)| {
            [
                json(action, &json_body(members, URL)),
                form("/000000000000/q", &form_body(action, params, None)),
            ]
        })
        .chain([
            sns("Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-east-1:000000000000:t:1"),
            sns("Action=Publish&TargetArn=arn:aws:sns:us-east-1:000000000000:endpoint/GCM/a/1&Message=m"),
            json("CancelMessageMoveTask", r#"{"TaskHandle":"eyJ0YXNrSWQiOiJ0In0="}"#),
            request("/_retsu/queues/r/a/n/messages/x/restore", None, &[], b""),
            request("/2015-03-31/event-source-mappings", None, &[], br#"{"EventSourceArn":"arn:aws:sqs:r:a:q"}"#),
        ])
        .collect();
    let alphabet = b"{}[]\":,.&=%+/\\:arnsqAZ09 \x00\xff\xc3";
    let paths = [
        "/",
        "/000000000000/q",
        "/queue/r/a/n",
        "/_retsu/queues/a/b/c",
        "/_aws/sqs/messages",
        "/_aws/sns/subscription-tokens/x",
        "/2015-03-31/event-source-mappings",
        "/_retsu/subscriptions/%ff/token",
    ];
    let methods = [Method::GET, Method::POST, Method::DELETE, Method::PUT];
    for round in 0..20_000 {
        let mut req = seeds[round % seeds.len()].clone();
        let mut body = req.body.to_vec();
        match rng.below(4) {
            // Cut short.
            0 => body.truncate(rng.below(body.len() + 1)),
            // Bytes flipped.
            1 => {
                for _ in 0..1 + rng.below(4) {
                    if !body.is_empty() {
                        let at = rng.below(body.len());
                        body[at] = alphabet[rng.below(alphabet.len())];
                    }
                }
            }
            // Random bytes entirely.
            2 => {
                body = (0..rng.below(64))
                    .map(|_| alphabet[rng.below(alphabet.len())])
                    .collect()
            }
            // Random path and query.
            _ => {
                req.path = paths[rng.below(paths.len())].to_string();
                let query: Vec<u8> = (0..rng.below(32))
                    .map(|_| alphabet[rng.below(alphabet.len())])
                    .collect();
                req.query = Some(String::from_utf8_lossy(&query).into_owned());
            }
        }
        req.body = Bytes::from(body);
        // Now and then a scope, target, type or host of random bytes.
        if rng.below(8) == 0 {
            let junk: Vec<u8> = (0..rng.below(40))
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            let text: String = String::from_utf8_lossy(&junk)
                .chars()
                .filter(|c| c.is_ascii_graphic() || *c == ' ')
                .collect();
            let name = ["authorization", "x-amz-target", "content-type", "host"][rng.below(4)];
            let value = match name {
                "x-amz-target" => format!("AmazonSQS.{text}"),
                _ => format!("AWS4-HMAC-SHA256 Credential={text}"),
            };
            if let Ok(value) = value.parse() {
                req.headers.insert(name, value);
            }
        }
        let method = &methods[rng.below(methods.len())];
        let _ = route(method, &req, ACCOUNT, &settings());
        if let Some(query) = &req.query {
            let _ = route_admin(method, &req.path, Some(query), &settings());
        }
    }
}

/// The requests the official SDKs send, recorded from a socket that
/// answers each with a client error (no SDK retries one), then routed.
mod recorded {
    use super::*;
    use http_body_util::BodyExt;
    use std::sync::{Arc, Mutex};

    type Seen = Arc<Mutex<Vec<(Method, HttpRequest)>>>;

    /// A listener that keeps every request and answers 400.
    async fn recorder() -> (String, Seen) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen: Seen = Arc::default();
        let keep = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let keep = keep.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |r: hyper::Request<hyper::body::Incoming>| {
                            let keep = keep.clone();
                            async move {
                                let (parts, body) = r.into_parts();
                                let body = body.collect().await?.to_bytes();
                                let json = parts.headers.contains_key("x-amz-target");
                                keep.lock().unwrap().push((
                                    parts.method,
                                    HttpRequest {
                                        path: parts.uri.path().to_string(),
                                        query: parts.uri.query().map(str::to_string),
                                        headers: parts.headers,
                                        body,
                                    },
                                ));
                                let (content_type, answer) = if json {
                                    (
                                        "application/x-amz-json-1.0",
                                        r#"{"__type":"com.amazonaws.sqs#InvalidAddress","message":"recorded"}"#,
                                    )
                                } else {
                                    (
                                        "text/xml",
                                        "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidParameter</Code><Message>recorded</Message></Error><RequestId>r</RequestId></ErrorResponse>",
                                    )
                                };
                                let mut response = hyper::Response::new(http_body_util::Full::new(
                                    Bytes::from(answer),
                                ));
                                *response.status_mut() = hyper::StatusCode::BAD_REQUEST;
                                response.headers_mut().insert(
                                    "content-type",
                                    axum::http::HeaderValue::from_static(content_type),
                                );
                                Ok::<_, hyper::Error>(response)
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tcp), service)
                        .await;
                });
            }
        });
        (url, seen)
    }

    fn last(seen: &Seen) -> (Method, HttpRequest) {
        seen.lock().unwrap().pop().expect("the SDK sent nothing")
    }

    fn routed(seen: &Seen) -> Route {
        let (method, req) = last(seen);
        route(&method, &req, ACCOUNT, &settings())
    }

    #[tokio::test]
    async fn aws_sdk_sqs_requests() {
        use aws_sdk_sqs::types::{
            ChangeMessageVisibilityBatchRequestEntry as Cv, DeleteMessageBatchRequestEntry as Dm,
            SendMessageBatchRequestEntry as Sm,
        };
        let (endpoint, seen) = recorder().await;
        let config = aws_sdk_sqs::Config::builder()
            .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
            .region(aws_sdk_sqs::config::Region::new("eu-west-1"))
            .credentials_provider(aws_sdk_sqs::config::Credentials::new(
                "test", "test", None, None, "static",
            ))
            .endpoint_url(&endpoint)
            .retry_config(aws_sdk_sqs::config::retry::RetryConfig::disabled())
            .build();
        let c = aws_sdk_sqs::Client::from_conf(config);
        let url = format!("{endpoint}/000000000000/q");
        let q = one(key_of(Kind::Queue, "eu-west-1", ACCOUNT, "q"));
        let arn = "arn:aws:sqs:eu-west-1:000000000000:q";

        let _ = c.create_queue().queue_name("q").send().await;
        assert_eq!(
            routed(&seen),
            created(key_of(Kind::Queue, "eu-west-1", ACCOUNT, "q"))
        );
        let _ = c.get_queue_url().queue_name("q").send().await;
        assert_eq!(routed(&seen), q);
        let _ = c
            .list_queues()
            .queue_name_prefix("p")
            .max_results(7)
            .send()
            .await;
        assert_eq!(
            routed(&seen),
            Route::Gather(Gathered::Queues {
                account: ACCOUNT.into(),
                region: "eu-west-1".into(),
                prefix: Some("p".into()),
                next_token: None,
                max_results: Some(7),
            })
        );
        let _ = c
            .list_dead_letter_source_queues()
            .queue_url(&url)
            .send()
            .await;
        assert_eq!(
            routed(&seen),
            Route::Gather(Gathered::DeadLetterSources {
                queue: key_of(Kind::Queue, "eu-west-1", ACCOUNT, "q"),
                next_token: None,
                max_results: None,
            })
        );
        let _ = c.start_message_move_task().source_arn(arn).send().await;
        assert_eq!(routed(&seen), q);
        let _ = c.list_message_move_tasks().source_arn(arn).send().await;
        assert_eq!(routed(&seen), q);
        {
            use base64::Engine as _;
            let handle = base64::engine::general_purpose::STANDARD
                .encode(format!(r#"{{"taskId":"t","sourceArn":"{arn}"}}"#));
            let _ = c
                .cancel_message_move_task()
                .task_handle(handle)
                .send()
                .await;
            assert_eq!(routed(&seen), q);
        }

        // Every action that names its queue by URL.
        let _ = c
            .add_permission()
            .queue_url(&url)
            .label("l")
            .aws_account_ids("111122223333")
            .actions("SendMessage")
            .send()
            .await;
        assert_eq!(routed(&seen), q, "AddPermission");
        let _ = c
            .change_message_visibility()
            .queue_url(&url)
            .receipt_handle("rh")
            .visibility_timeout(5)
            .send()
            .await;
        assert_eq!(routed(&seen), q, "ChangeMessageVisibility");
        let _ = c
            .change_message_visibility_batch()
            .queue_url(&url)
            .entries(Cv::builder().id("a").receipt_handle("rh").build().unwrap())
            .send()
            .await;
        assert_eq!(routed(&seen), q, "ChangeMessageVisibilityBatch");
        let _ = c
            .delete_message()
            .queue_url(&url)
            .receipt_handle("rh")
            .send()
            .await;
        assert_eq!(routed(&seen), q, "DeleteMessage");
        let _ = c
            .delete_message_batch()
            .queue_url(&url)
            .entries(Dm::builder().id("a").receipt_handle("rh").build().unwrap())
            .send()
            .await;
        assert_eq!(routed(&seen), q, "DeleteMessageBatch");
        let _ = c.delete_queue().queue_url(&url).send().await;
        assert_eq!(routed(&seen), q, "DeleteQueue");
        let _ = c
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(aws_sdk_sqs::types::QueueAttributeName::All)
            .send()
            .await;
        assert_eq!(routed(&seen), q, "GetQueueAttributes");
        let _ = c.list_queue_tags().queue_url(&url).send().await;
        assert_eq!(routed(&seen), q, "ListQueueTags");
        let _ = c.purge_queue().queue_url(&url).send().await;
        assert_eq!(routed(&seen), q, "PurgeQueue");
        let _ = c
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .send()
            .await;
        assert_eq!(routed(&seen), q, "ReceiveMessage");
        let _ = c
            .remove_permission()
            .queue_url(&url)
            .label("l")
            .send()
            .await;
        assert_eq!(routed(&seen), q, "RemovePermission");
        let _ = c
            .send_message()
            .queue_url(&url)
            .message_body(r#"{"QueueUrl":"http://h/000000000000/other"}"#)
            .send()
            .await;
        assert_eq!(routed(&seen), q, "SendMessage");
        let _ = c
            .send_message_batch()
            .queue_url(&url)
            .entries(Sm::builder().id("a").message_body("b").build().unwrap())
            .send()
            .await;
        assert_eq!(routed(&seen), q, "SendMessageBatch");
        let _ = c
            .set_queue_attributes()
            .queue_url(&url)
            .attributes(
                aws_sdk_sqs::types::QueueAttributeName::VisibilityTimeout,
                "5",
            )
            .send()
            .await;
        assert_eq!(routed(&seen), q, "SetQueueAttributes");
        let _ = c.tag_queue().queue_url(&url).tags("k", "v").send().await;
        assert_eq!(routed(&seen), q, "TagQueue");
        let _ = c.untag_queue().queue_url(&url).tag_keys("k").send().await;
        assert_eq!(routed(&seen), q, "UntagQueue");
        assert!(seen.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn aws_sdk_sns_requests() {
        let (endpoint, seen) = recorder().await;
        let config = aws_sdk_sns::Config::builder()
            .behavior_version(aws_sdk_sns::config::BehaviorVersion::latest())
            .region(aws_sdk_sns::config::Region::new("eu-west-1"))
            .credentials_provider(aws_sdk_sns::config::Credentials::new(
                "test", "test", None, None, "static",
            ))
            .endpoint_url(&endpoint)
            .retry_config(aws_sdk_sns::config::retry::RetryConfig::disabled())
            .build();
        let c = aws_sdk_sns::Client::from_conf(config);
        let topic_arn = "arn:aws:sns:eu-west-1:000000000000:t";
        let t = one(key_of(Kind::Topic, "eu-west-1", ACCOUNT, "t"));
        let a = one(key_of(Kind::Application, "eu-west-1", ACCOUNT, "app/GCM/a"));

        let _ = c.create_topic().name("t").send().await;
        assert_eq!(
            routed(&seen),
            created(key_of(Kind::Topic, "eu-west-1", ACCOUNT, "t"))
        );
        let _ = c.publish().topic_arn(topic_arn).message("m").send().await;
        assert_eq!(routed(&seen), t);
        let _ = c
            .publish_batch()
            .topic_arn(topic_arn)
            .publish_batch_request_entries(
                aws_sdk_sns::types::PublishBatchRequestEntry::builder()
                    .id("1")
                    .message("m")
                    .build()
                    .unwrap(),
            )
            .send()
            .await;
        assert_eq!(routed(&seen), t);
        let _ = c
            .subscribe()
            .topic_arn(topic_arn)
            .protocol("sqs")
            .endpoint("arn:aws:sqs:eu-west-1:000000000000:q")
            .send()
            .await;
        assert_eq!(routed(&seen), t);
        let _ = c
            .unsubscribe()
            .subscription_arn(format!("{topic_arn}:0a1b"))
            .send()
            .await;
        assert_eq!(routed(&seen), t);
        let _ = c
            .tag_resource()
            .resource_arn(topic_arn)
            .tags(
                aws_sdk_sns::types::Tag::builder()
                    .key("k")
                    .value("v")
                    .build()
                    .unwrap(),
            )
            .send()
            .await;
        assert_eq!(routed(&seen), t);
        let _ = c
            .create_platform_application()
            .name("a")
            .platform("GCM")
            .attributes("PlatformCredential", "k")
            .send()
            .await;
        assert_eq!(
            routed(&seen),
            created(key_of(Kind::Application, "eu-west-1", ACCOUNT, "app/GCM/a"))
        );
        let _ = c
            .publish()
            .target_arn("arn:aws:sns:eu-west-1:000000000000:endpoint/GCM/a/0a1b")
            .message("m")
            .send()
            .await;
        assert_eq!(routed(&seen), a);
        let _ = c
            .publish()
            .phone_number("+15555550100")
            .message("m")
            .send()
            .await;
        assert_eq!(routed(&seen), Route::Any);
        let _ = c.list_topics().next_token("n").send().await;
        assert_eq!(
            routed(&seen),
            Route::Gather(Gathered::Topics {
                account: ACCOUNT.into(),
                region: "eu-west-1".into(),
                next_token: Some("n".into()),
            })
        );
        assert!(seen.lock().unwrap().is_empty());
    }
}

/// Only ListMessageMoveTasks, in either protocol, is a listing of move
/// tasks; a body that merely holds the name is not.
#[test]
fn a_listing_of_move_tasks_is_told_in_both_protocols() {
    let parts = |uri: &str, headers: &[(&str, &str)]| {
        let mut b = axum::http::Request::builder().method(Method::POST).uri(uri);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).unwrap().into_parts().0
    };
    let json = |action: &str| parts("/", &[JSON_TYPE, ("x-amz-target", action)]);
    let source = br#"{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:dlq"}"#;
    assert!(lists_move_tasks(
        &json("AmazonSQS.ListMessageMoveTasks"),
        source
    ));
    assert!(!lists_move_tasks(
        &json("AmazonSQS.StartMessageMoveTask"),
        source
    ));
    assert!(!lists_move_tasks(
        &json("AmazonSQS.SendMessage"),
        br#"{"QueueUrl":"x","MessageBody":"ListMessageMoveTasks"}"#
    ));
    let form = parts("/", &[FORM]);
    assert!(lists_move_tasks(
        &form,
        b"Action=ListMessageMoveTasks&SourceArn=arn%3Aaws%3Asqs%3Aus-east-1%3A000000000000%3Adlq"
    ));
    assert!(!lists_move_tasks(
        &form,
        b"Action=SendMessage&QueueUrl=x&MessageBody=ListMessageMoveTasks"
    ));
    assert!(!lists_move_tasks(
        &form,
        b"Action=SendMessage&MessageBody=hi"
    ));
    assert!(lists_move_tasks(
        &parts("/?Action=ListMessageMoveTasks&SourceArn=x", &[]),
        b""
    ));
}
