//! Malformed requests, table-driven: each row is a request a careless or
//! hostile client could send, over raw HTTP to the real server, with the
//! exact status and error code it must get — in the caller's protocol
//! (`__type` for AWS JSON, `<Code>` for query/XML), never a panic or a
//! dropped connection.
//!
//! `RETSU_MALFORMED_SHOW=1` prints what every row got (to review a new row).

mod common;

use common::*;

const Q: &str = "http://localhost/000000000000/m";
const QF: &str = "http://localhost/000000000000/m.fifo";
const GONE: &str = "http://localhost/000000000000/no-such-queue";

/// How a row's request is sent.
enum Req {
    /// AWS JSON 1.0: `X-Amz-Target: AmazonSQS.<action>` and this body.
    Json(&'static str, Vec<u8>),
    /// AWS JSON with the given target header (or none) and body.
    JsonTarget(Option<&'static str>, Vec<u8>),
    /// Query protocol: a form POST of this raw body to this path.
    Form(&'static str, Vec<u8>),
    /// Query protocol: a GET of this raw path and query string.
    Get(String),
    /// Any method, path, content type and body.
    Other(&'static str, &'static str, Option<&'static str>, Vec<u8>),
}

struct Case {
    name: &'static str,
    req: Req,
    status: u16,
    code: &'static str,
}

fn json(action: &'static str, body: &str) -> Req {
    Req::Json(action, body.as_bytes().to_vec())
}

fn form(body: &str) -> Req {
    Req::Form("/", body.as_bytes().to_vec())
}

fn get(path_and_query: &str) -> Req {
    Req::Get(path_and_query.to_string())
}

fn case(name: &'static str, req: Req, status: u16, code: &'static str) -> Case {
    Case {
        name,
        req,
        status,
        code,
    }
}

/// `{"QueueUrl":"<Q>", <rest>}`
fn on(queue: &str, rest: &str) -> String {
    if rest.is_empty() {
        format!(r#"{{"QueueUrl":"{queue}"}}"#)
    } else {
        format!(r#"{{"QueueUrl":"{queue}",{rest}}}"#)
    }
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn cases() -> Vec<Case> {
    const SER: &str = "SerializationException";
    const IPV: &str = "InvalidParameterValue";
    const IPV_JSON: &str = "InvalidParameterValueException";
    const MISSING_JSON: &str = "MissingRequiredParameterException";
    const MISSING: &str = "MissingParameter";
    let q_enc = "http%3A%2F%2Flocalhost%2F000000000000%2Fm";
    let qf = |rest: &str| leak(format!("QueueUrl={q_enc}&{rest}"));
    let entries11: String = (1..=11)
        .map(|i| format!(r#"{{"Id":"e{i}","MessageBody":"x"}}"#))
        .collect::<Vec<_>>()
        .join(",");
    let form_entries11: String = (1..=11)
        .map(|i| {
            format!("SendMessageBatchRequestEntry.{i}.Id=e{i}&SendMessageBatchRequestEntry.{i}.MessageBody=x")
        })
        .collect::<Vec<_>>()
        .join("&");
    let deep_json = format!(
        r#"{{"QueueName":"a","Attributes":{}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let big_body = "x".repeat(1_048_577);
    vec![
        // ------------------------------------------------ AWS JSON: syntax
        case("json truncated after key", json("ListQueues", r#"{"QueueNamePrefix":"#), 400, SER),
        case("json lone open brace", json("ListQueues", "{"), 400, SER),
        case("json unterminated string", json("CreateQueue", r#"{"QueueName":"a"#), 400, SER),
        case("json missing closing brace", json("CreateQueue", r#"{"QueueName":"a""#), 400, SER),
        case("json array body", json("ListQueues", "[]"), 400, SER),
        case("json string body", json("ListQueues", r#""ListQueues""#), 400, SER),
        case("json number body", json("ListQueues", "123"), 400, SER),
        case("json null body", json("ListQueues", "null"), 400, SER),
        case("json trailing garbage", json("ListQueues", "{} x"), 400, SER),
        case("json two objects", json("ListQueues", "{}{}"), 400, SER),
        case("json trailing comma", json("CreateQueue", r#"{"QueueName":"a",}"#), 400, SER),
        case("json single quotes", json("CreateQueue", "{'QueueName':'a'}"), 400, SER),
        case("json unquoted key", json("CreateQueue", r#"{QueueName:"a"}"#), 400, SER),
        case("json NaN literal", json("ReceiveMessage", &on(Q, r#""MaxNumberOfMessages":NaN"#)), 400, SER),
        case("json byte order mark", Req::Json("ListQueues", b"\xef\xbb\xbf{}".to_vec()), 400, SER),
        case("json nested 100000 deep", Req::Json("CreateQueue", deep_json.into_bytes()), 400, SER),
        case("json invalid escape", json("CreateQueue", r#"{"QueueName":"\q"}"#), 400, SER),
        case("json lone surrogate escape", json("SendMessage", &on(Q, r#""MessageBody":"\ud800""#)), 400, SER),
        case("json control character in string", Req::Json("CreateQueue", b"{\"QueueName\":\"a\x01\"}".to_vec()), 400, SER),
        // ------------------------------------------------ AWS JSON: encoding
        case("json invalid UTF-8 in a string", Req::Json("CreateQueue", b"{\"QueueName\":\"\xff\xfe\"}".to_vec()), 400, SER),
        case("json invalid UTF-8 outside strings", Req::Json("ListQueues", b"{\xc3}".to_vec()), 400, SER),
        case("json overlong UTF-8", Req::Json("CreateQueue", b"{\"QueueName\":\"\xc0\xaf\"}".to_vec()), 400, SER),
        case("json UTF-16 body", Req::Json("ListQueues", b"\xff\xfe{\x00}\x00".to_vec()), 400, SER),
        // ------------------------------------------------ AWS JSON: types
        case("json QueueName number", json("CreateQueue", r#"{"QueueName":5}"#), 400, SER),
        case("json QueueName bool", json("CreateQueue", r#"{"QueueName":true}"#), 400, SER),
        case("json QueueName array", json("CreateQueue", r#"{"QueueName":["a"]}"#), 400, SER),
        case("json QueueName object", json("CreateQueue", r#"{"QueueName":{"a":1}}"#), 400, SER),
        case("json QueueUrl number", json("GetQueueAttributes", r#"{"QueueUrl":12}"#), 400, SER),
        case("json Attributes array", json("CreateQueue", r#"{"QueueName":"a","Attributes":[1]}"#), 400, SER),
        case("json attribute value number", json("CreateQueue", r#"{"QueueName":"a","Attributes":{"DelaySeconds":5}}"#), 400, SER),
        case("json tags string", json("CreateQueue", r#"{"QueueName":"a","tags":"x"}"#), 400, SER),
        case("json AttributeNames string", json("GetQueueAttributes", &on(Q, r#""AttributeNames":"All""#)), 400, SER),
        case("json MaxNumberOfMessages word", json("ReceiveMessage", &on(Q, r#""MaxNumberOfMessages":"ten""#)), 400, SER),
        case("json MaxNumberOfMessages fraction", json("ReceiveMessage", &on(Q, r#""MaxNumberOfMessages":1.5"#)), 400, SER),
        case("json MaxNumberOfMessages object", json("ReceiveMessage", &on(Q, r#""MaxNumberOfMessages":{}"#)), 400, SER),
        case("json MessageBody number", json("SendMessage", &on(Q, r#""MessageBody":5"#)), 400, SER),
        case("json Entries object", json("SendMessageBatch", &on(Q, r#""Entries":{"Id":"a"}"#)), 400, SER),
        case("json Entries of strings", json("DeleteMessageBatch", &on(Q, r#""Entries":["a"]"#)), 400, SER),
        case("json MessageAttributes array", json("SendMessage", &on(Q, r#""MessageBody":"x","MessageAttributes":[]"#)), 400, SER),
        case("json BinaryValue not base64", json("SendMessage", &on(Q, r#""MessageBody":"x","MessageAttributes":{"a":{"DataType":"Binary","BinaryValue":"!!!"}}"#)), 400, SER),
        case("json duplicate keys", json("CreateQueue", r#"{"QueueName":"a","QueueName":"b"}"#), 400, SER),
        // ------------------------------------------------ AWS JSON: numbers
        case("json MaxNumberOfMessages 2^31", json("ReceiveMessage", &on(Q, r#""MaxNumberOfMessages":2147483648"#)), 400, SER),
        case("json MaxNumberOfMessages 20 digits", json("ReceiveMessage", &on(Q, r#""MaxNumberOfMessages":99999999999999999999"#)), 400, SER),
        case("json VisibilityTimeout 1e400", json("ReceiveMessage", &on(Q, r#""VisibilityTimeout":1e400"#)), 400, SER),
        case("json DelaySeconds -2^63-1", json("SendMessage", &on(Q, r#""MessageBody":"x","DelaySeconds":-9223372036854775809"#)), 400, SER),
        case("json MaxNumberOfMessages -1", json("ReceiveMessage", &on(Q, r#""MaxNumberOfMessages":-1"#)), 400, IPV_JSON),
        case("json MaxNumberOfMessages 11", json("ReceiveMessage", &on(Q, r#""MaxNumberOfMessages":11"#)), 400, IPV_JSON),
        case("json WaitTimeSeconds 21", json("ReceiveMessage", &on(Q, r#""WaitTimeSeconds":21"#)), 400, IPV_JSON),
        case("json VisibilityTimeout 43201", json("ReceiveMessage", &on(Q, r#""VisibilityTimeout":43201"#)), 400, IPV_JSON),
        case("json DelaySeconds 901", json("SendMessage", &on(Q, r#""MessageBody":"x","DelaySeconds":901"#)), 400, IPV_JSON),
        case("json DelaySeconds -1", json("SendMessage", &on(Q, r#""MessageBody":"x","DelaySeconds":-1"#)), 400, IPV_JSON),
        case("json ListQueues MaxResults 0", json("ListQueues", r#"{"MaxResults":0}"#), 400, IPV_JSON),
        case("json ListQueues MaxResults 1001", json("ListQueues", r#"{"MaxResults":1001}"#), 400, IPV_JSON),
        case("json move task rate 501", json("StartMessageMoveTask", r#"{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:m","MaxNumberOfMessagesPerSecond":501}"#), 400, IPV_JSON),
        // ------------------------------------------------ AWS JSON: targets
        case("json unknown action", json("Nope", "{}"), 400, "UnknownOperationException"),
        case("json lower-case action", json("listQueues", "{}"), 400, "UnknownOperationException"),
        case("json target without action", json("", "{}"), 400, "UnknownOperationException"),
        case("json no target header", Req::JsonTarget(None, b"{}".to_vec()), 400, "UnknownOperationException"),
        case("json other service's target", Req::JsonTarget(Some("AmazonSNS.Publish"), b"{}".to_vec()), 400, "UnknownOperationException"),
        // ------------------------------------------------ AWS JSON: values
        case("json CreateQueue without name", json("CreateQueue", "{}"), 400, MISSING_JSON),
        case("json QueueName empty", json("CreateQueue", r#"{"QueueName":""}"#), 400, IPV_JSON),
        case("json QueueName 81 characters", Req::Json("CreateQueue", format!(r#"{{"QueueName":"{}"}}"#, "a".repeat(81)).into_bytes()), 400, IPV_JSON),
        case("json QueueName with a space", json("CreateQueue", r#"{"QueueName":"a b"}"#), 400, IPV_JSON),
        case("json unknown queue attribute", json("CreateQueue", r#"{"QueueName":"a","Attributes":{"Bogus":"1"}}"#), 400, "InvalidAttributeName"),
        case("json attribute out of range", json("CreateQueue", r#"{"QueueName":"a","Attributes":{"VisibilityTimeout":"43201"}}"#), 400, "InvalidAttributeValue"),
        case("json RedrivePolicy not JSON", json("SetQueueAttributes", &on(Q, r#""Attributes":{"RedrivePolicy":"{"}"#)), 400, IPV_JSON),
        case("json GetQueueAttributes unknown name", json("GetQueueAttributes", &on(Q, r#""AttributeNames":["Bogus"]"#)), 400, "InvalidAttributeName"),
        case("json queue does not exist", json("GetQueueAttributes", &on(GONE, "")), 400, "QueueDoesNotExist"),
        case("json QueueUrl empty", json("GetQueueAttributes", r#"{"QueueUrl":""}"#), 400, "QueueDoesNotExist"),
        case("json SendMessage without body", json("SendMessage", &on(Q, "")), 400, MISSING_JSON),
        case("json MessageBody empty", json("SendMessage", &on(Q, r#""MessageBody":"""#)), 400, MISSING_JSON),
        case("json MessageBody NUL", json("SendMessage", &on(Q, r#""MessageBody":"a\u0000b""#)), 400, "InvalidMessageContents"),
        case("json MessageBody U+FFFF", json("SendMessage", &on(Q, r#""MessageBody":"\uffff""#)), 400, "InvalidMessageContents"),
        case("json MessageBody over 1 MiB", Req::Json("SendMessage", on(Q, &format!(r#""MessageBody":"{big_body}""#)).into_bytes()), 400, IPV_JSON),
        case("json attribute without DataType", json("SendMessage", &on(Q, r#""MessageBody":"x","MessageAttributes":{"a":{"StringValue":"v"}}"#)), 400, IPV_JSON),
        case("json attribute DataType bogus", json("SendMessage", &on(Q, r#""MessageBody":"x","MessageAttributes":{"a":{"DataType":"Bogus","StringValue":"v"}}"#)), 400, IPV_JSON),
        case("json attribute name AWS.", json("SendMessage", &on(Q, r#""MessageBody":"x","MessageAttributes":{"AWS.x":{"DataType":"String","StringValue":"v"}}"#)), 400, IPV_JSON),
        case("json Number attribute not a number", json("SendMessage", &on(Q, r#""MessageBody":"x","MessageAttributes":{"a":{"DataType":"Number","StringValue":"x"}}"#)), 400, IPV_JSON),
        case("json FIFO send without group", json("SendMessage", &on(QF, r#""MessageBody":"x","MessageDeduplicationId":"d""#)), 400, MISSING_JSON),
        case("json group id too long", Req::Json("SendMessage", on(QF, &format!(r#""MessageBody":"x","MessageGroupId":"{}","MessageDeduplicationId":"d""#, "g".repeat(129))).into_bytes()), 400, IPV_JSON),
        case("json batch empty", json("SendMessageBatch", &on(Q, r#""Entries":[]"#)), 400, "EmptyBatchRequest"),
        case("json batch without entries", json("DeleteMessageBatch", &on(Q, "")), 400, "EmptyBatchRequest"),
        case("json batch of 11", Req::Json("SendMessageBatch", on(Q, &format!(r#""Entries":[{entries11}]"#)).into_bytes()), 400, "TooManyEntriesInBatchRequest"),
        case("json batch duplicate ids", json("SendMessageBatch", &on(Q, r#""Entries":[{"Id":"a","MessageBody":"x"},{"Id":"a","MessageBody":"y"}]"#)), 400, "BatchEntryIdsNotDistinct"),
        case("json batch id with a space", json("ChangeMessageVisibilityBatch", &on(Q, r#""Entries":[{"Id":"a b","ReceiptHandle":"h","VisibilityTimeout":1}]"#)), 400, "InvalidBatchEntryId"),
        case("json batch entry null", json("SendMessageBatch", &on(Q, r#""Entries":[null]"#)), 400, SER),
        case("json receipt handle garbage", json("DeleteMessage", &on(Q, r#""ReceiptHandle":"garbage""#)), 404, "ReceiptHandleIsInvalid"),
        case("json receipt handle forged", json("DeleteMessage", &on(Q, r#""ReceiptHandle":"AQEBUlRTMgAAAAAAAAABAAAAAAAAAAEAAAAAAAAAAQAAAAAAAAAAAAAAAAAAAAA""#)), 404, "ReceiptHandleIsInvalid"),
        case("json receipt handle empty", json("DeleteMessage", &on(Q, r#""ReceiptHandle":"""#)), 404, "ReceiptHandleIsInvalid"),
        case("json change visibility without timeout", json("ChangeMessageVisibility", &on(Q, r#""ReceiptHandle":"garbage""#)), 400, MISSING_JSON),
        case("json move task source not an ARN", json("StartMessageMoveTask", r#"{"SourceArn":"not-an-arn"}"#), 400, IPV_JSON),
        case("json cancel task handle garbage", json("CancelMessageMoveTask", r#"{"TaskHandle":"@@@"}"#), 400, IPV_JSON),
        case("json ListQueues NextToken garbage", json("ListQueues", r#"{"MaxResults":1,"NextToken":"garbage"}"#), 400, IPV_JSON),
        case("json TagQueue without tags", json("TagQueue", &on(Q, "")), 400, MISSING_JSON),
        case("json AddPermission without label", json("AddPermission", &on(Q, r#""AWSAccountIds":["111122223333"],"Actions":["SendMessage"]"#)), 400, MISSING_JSON),
        // ------------------------------------------------ query: action
        case("query no Action", form("Version=2012-11-05"), 404, "UnknownOperationException"),
        case("query unknown Action", form("Action=Nope"), 400, "InvalidAction"),
        case("query empty Action", form("Action="), 400, "InvalidAction"),
        case("query lower-case Action", form("Action=listQueues"), 400, "InvalidAction"),
        case("query GET unknown Action", get("/?Action=Nope"), 400, "InvalidAction"),
        case("query ListQueues at a queue path", Req::Form("/000000000000/m", b"Action=ListQueues".to_vec()), 400, "InvalidAction"),
        case("query CreateQueue at a queue path", get("/000000000000/m?Action=CreateQueue&QueueName=x"), 400, "InvalidAction"),
        // ------------------------------------------------ query: encoding
        case("query bad percent escape in Action", form("Action=List%ZZQueues"), 400, "InvalidAction"),
        case("query invalid UTF-8 in Action", form("Action=List%FFQueues"), 400, "InvalidAction"),
        case("query raw invalid UTF-8 in QueueName", Req::Form("/", b"Action=CreateQueue&QueueName=a\xff".to_vec()), 400, IPV),
        case("query percent-encoded NUL in body", form(qf("Action=SendMessage&MessageBody=a%00b")), 400, "InvalidMessageContents"),
        case("query only separators", form("&&&===&"), 404, "UnknownOperationException"),
        case("query 100000-segment name", Req::Form("/", format!("Action=ListQueues&{}=x", ".".repeat(100_000)).into_bytes()), 400, "InvalidQueryParameter"),
        case("query 9-segment name", form("Action=ListQueues&A.1.B.1.C.1.D.1.E=x"), 400, "InvalidQueryParameter"),
        case("query text/plain body ignored", Req::Other("POST", "/", Some("text/plain"), b"Action=ListQueues".to_vec()), 404, "UnknownOperationException"),
        // ------------------------------------------------ query: numbers
        case("query MaxNumberOfMessages word", form(qf("Action=ReceiveMessage&MaxNumberOfMessages=ten")), 400, IPV),
        case("query MaxNumberOfMessages 20 digits", form(qf("Action=ReceiveMessage&MaxNumberOfMessages=99999999999999999999")), 400, IPV),
        case("query MaxNumberOfMessages 2^31", form(qf("Action=ReceiveMessage&MaxNumberOfMessages=2147483648")), 400, IPV),
        case("query MaxNumberOfMessages fraction", form(qf("Action=ReceiveMessage&MaxNumberOfMessages=1.5")), 400, IPV),
        case("query MaxNumberOfMessages -5", form(qf("Action=ReceiveMessage&MaxNumberOfMessages=-5")), 400, IPV),
        case("query MaxNumberOfMessages empty", form(qf("Action=ReceiveMessage&MaxNumberOfMessages=")), 400, IPV),
        case("query WaitTimeSeconds 21", form(qf("Action=ReceiveMessage&WaitTimeSeconds=21")), 400, IPV),
        case("query DelaySeconds 901", form(qf("Action=SendMessage&MessageBody=x&DelaySeconds=901")), 400, IPV),
        case("query VisibilityTimeout -1", form(qf("Action=ChangeMessageVisibility&ReceiptHandle=h&VisibilityTimeout=-1")), 400, IPV),
        case("query MaxResults 0", form("Action=ListQueues&MaxResults=0"), 400, IPV),
        // ------------------------------------------------ query: shapes
        case("query Attribute.-1.Name", form("Action=CreateQueue&QueueName=a&Attribute.-1.Name=DelaySeconds&Attribute.-1.Value=1"), 400, IPV),
        case("query Attribute.0.Name", form("Action=CreateQueue&QueueName=a&Attribute.0.Name=DelaySeconds&Attribute.0.Value=1"), 400, IPV),
        // A non-numeric index names no member: Attribute.1 is then missing.
        case("query Attribute.x.Name", form("Action=CreateQueue&QueueName=a&Attribute.x.Name=DelaySeconds&Attribute.x.Value=1"), 400, MISSING),
        case("query Attribute index 20 digits", form("Action=CreateQueue&QueueName=a&Attribute.99999999999999999999.Name=DelaySeconds&Attribute.99999999999999999999.Value=1"), 400, IPV),
        case("query Attribute.1 name without value", form("Action=CreateQueue&QueueName=a&Attribute.1.Name=DelaySeconds"), 400, "InvalidAttributeValue"),
        case("query unknown queue attribute", form("Action=CreateQueue&QueueName=a&Attribute.1.Name=Bogus&Attribute.1.Value=1"), 400, "InvalidAttributeName"),
        case("query attribute out of range", form("Action=CreateQueue&QueueName=a&Attribute.1.Name=DelaySeconds&Attribute.1.Value=99999"), 400, "InvalidAttributeValue"),
        case("query AttributeName.1 unknown", form(qf("Action=GetQueueAttributes&AttributeName.1=Bogus")), 400, "InvalidAttributeName"),
        case("query MessageAttribute without DataType", form(qf("Action=SendMessage&MessageBody=x&MessageAttribute.1.Name=a&MessageAttribute.1.Value.StringValue=v")), 400, IPV),
        case("query MessageAttribute DataType bogus", form(qf("Action=SendMessage&MessageBody=x&MessageAttribute.1.Name=a&MessageAttribute.1.Value.DataType=Bogus&MessageAttribute.1.Value.StringValue=v")), 400, IPV),
        case("query BinaryValue not base64", form(qf("Action=SendMessage&MessageBody=x&MessageAttribute.1.Name=a&MessageAttribute.1.Value.DataType=Binary&MessageAttribute.1.Value.BinaryValue=%21%21%21")), 400, IPV),
        // ------------------------------------------------ query: values
        case("query CreateQueue without name", form("Action=CreateQueue"), 400, MISSING),
        case("query QueueName 81 characters", Req::Form("/", format!("Action=CreateQueue&QueueName={}", "a".repeat(81)).into_bytes()), 400, IPV),
        case("query queue does not exist", form("Action=GetQueueAttributes&QueueUrl=http%3A%2F%2Flocalhost%2F000000000000%2Fno-such-queue"), 400, "AWS.SimpleQueueService.NonExistentQueue"),
        case("query queue path does not exist", Req::Form("/000000000000/no-such-queue", b"Action=GetQueueAttributes".to_vec()), 400, "AWS.SimpleQueueService.NonExistentQueue"),
        case("query SendMessage without body", form(qf("Action=SendMessage")), 400, MISSING),
        case("query MessageBody over 1 MiB", Req::Form("/", format!("{}&MessageBody={big_body}", qf("Action=SendMessage")).into_bytes()), 400, IPV),
        case("query receipt handle garbage", form(qf("Action=DeleteMessage&ReceiptHandle=garbage")), 404, "ReceiptHandleIsInvalid"),
        case("query DeleteMessage without handle", form(qf("Action=DeleteMessage")), 400, MISSING),
        case("query batch empty", form(qf("Action=SendMessageBatch")), 400, "AWS.SimpleQueueService.EmptyBatchRequest"),
        case("query batch of 11", Req::Form("/", format!("{}&{form_entries11}", qf("Action=SendMessageBatch")).into_bytes()), 400, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"),
        case("query batch duplicate ids", form(qf("Action=DeleteMessageBatch&DeleteMessageBatchRequestEntry.1.Id=a&DeleteMessageBatchRequestEntry.1.ReceiptHandle=h&DeleteMessageBatchRequestEntry.2.Id=a&DeleteMessageBatchRequestEntry.2.ReceiptHandle=h")), 400, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"),
        case("query FIFO send without group", Req::Form("/000000000000/m.fifo", b"Action=SendMessage&MessageBody=x&MessageDeduplicationId=d".to_vec()), 400, MISSING),
        case("query receive attempt id with a space", Req::Form("/000000000000/m.fifo", b"Action=ReceiveMessage&ReceiveRequestAttemptId=a+b".to_vec()), 400, IPV),
        // ------------------------------------------------ neither protocol
        case("GET / with no parameters", get("/"), 404, "UnknownOperationException"),
        case("PUT with a JSON target", Req::Other("PUT", "/", Some("application/x-amz-json-1.0"), b"{}".to_vec()), 400, "UnknownOperationException"),
    ]
}

/// The error code of a response: the JSON `__type` after its namespace,
/// the XML `<Code>`, or the root element of a bare XML error document.
fn code_of(raw: &Raw) -> String {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&raw.body) {
        if let Some(t) = v.get("__type").and_then(|t| t.as_str()) {
            return t.rsplit('#').next().unwrap_or(t).to_string();
        }
        if let Some(c) = v.pointer("/Error/Code").and_then(|c| c.as_str()) {
            return c.to_string();
        }
    }
    if raw.body.contains("<Code>") {
        return xml_text(&raw.body, "Code");
    }
    raw.body
        .trim()
        .trim_start_matches('<')
        .split(['/', '>', ' '])
        .next()
        .unwrap_or("")
        .to_string()
}

async fn send(t: &TestServer, req: &Req) -> Raw {
    let url = |path: &str| format!("{}{path}", t.endpoint);
    let builder = match req {
        Req::Json(action, body) => t
            .http
            .post(url("/"))
            .header("content-type", "application/x-amz-json-1.0")
            .header("x-amz-target", format!("AmazonSQS.{action}"))
            .body(body.clone()),
        Req::JsonTarget(target, body) => {
            let b = t
                .http
                .post(url("/"))
                .header("content-type", "application/x-amz-json-1.0")
                .body(body.clone());
            match target {
                Some(target) => b.header("x-amz-target", *target),
                None => b,
            }
        }
        Req::Form(path, body) => t
            .http
            .post(url(path))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.clone()),
        Req::Get(path_and_query) => t.http.get(url(path_and_query)),
        Req::Other(method, path, content_type, body) => {
            let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
            let b = t.http.request(method, url(path)).body(body.clone());
            match content_type {
                Some(ct) => b.header("content-type", *ct),
                None => b,
            }
        }
    };
    t.raw(builder).await
}

#[tokio::test]
async fn every_malformed_request_gets_its_exact_error() {
    let t = TestServer::start().await;
    t.create_queue("m").await;
    t.create_queue_with("m.fifo", &[("FifoQueue", "true")])
        .await;
    let cases = cases();
    assert!(cases.len() >= 100, "only {} cases", cases.len());
    let show = std::env::var_os("RETSU_MALFORMED_SHOW").is_some();
    let mut wrong = Vec::new();
    for c in &cases {
        let raw = send(&t, &c.req).await;
        let code = code_of(&raw);
        // Every answer, error or not, carries a request id.
        raw.request_id();
        if show {
            println!("{:<45} {} {code}", c.name, raw.status);
        }
        if raw.status != c.status || code != c.code {
            wrong.push(format!(
                "{}: expected {} {}, got {} {code}: {}",
                c.name,
                c.status,
                c.code,
                raw.status,
                raw.body.chars().take(300).collect::<String>()
            ));
        }
    }
    // The server is still up and serving after all of it.
    t.send(&t.queue_url("m"), "still alive").await;
    assert!(
        wrong.is_empty(),
        "{} of {} rows differ:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}
