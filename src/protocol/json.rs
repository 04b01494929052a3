//! AWS JSON 1.0 (with `awsQueryCompatible`), what current SDKs speak.
//!
//! Requests are the typed API's serde shape, so decoding is `serde_json`
//! plus [`Action::decode`]. Errors carry two names: `__type` (the shape,
//! which botocore and Java v2 map typed exceptions from) and the
//! `x-amzn-query-error: <query code>;<Sender|Receiver>` header, without which
//! the Rust SDK cannot recognise a single typed error.

use axum::http::header::{HeaderName, CONTENT_TYPE as CONTENT_TYPE_HEADER};
use axum::http::HeaderMap;
use serde_json::{Map, Value};

use crate::api::{Action, Request, Response};
use crate::error::{ErrorCode, SqsError};

pub const CONTENT_TYPE: &str = "application/x-amz-json-1.0";
pub const TARGET_PREFIX: &str = "AmazonSQS.";
/// Header names as values, not strings: a lookup by string parses the name
/// first, on every request.
const X_AMZ_TARGET: HeaderName = HeaderName::from_static("x-amz-target");

fn header(headers: &HeaderMap, name: HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A request is JSON if it names an SQS target or has a JSON Content-Type,
/// whatever its path (some SDKs post JSON to the queue URL).
pub fn is_json(headers: &HeaderMap) -> bool {
    const JSON_TYPE: &str = "application/x-amz-json";
    let target = header(headers, X_AMZ_TARGET).unwrap_or_default();
    let content_type = header(headers, CONTENT_TYPE_HEADER).unwrap_or_default();
    target.starts_with(TARGET_PREFIX)
        || content_type
            .get(..JSON_TYPE.len())
            .is_some_and(|t| t.eq_ignore_ascii_case(JSON_TYPE))
}

/// The action named by `X-Amz-Target: AmazonSQS.<Action>`.
pub fn action(headers: &HeaderMap) -> Result<Action, SqsError> {
    let target = header(headers, X_AMZ_TARGET).unwrap_or_default();
    target
        .strip_prefix(TARGET_PREFIX)
        .and_then(Action::from_name)
        .ok_or_else(|| {
            // AWS's text here is unverified; SDKs only look at the type.
            let message = if target.is_empty() {
                "Missing X-Amz-Target header.".to_string()
            } else {
                format!("The operation {target} is not supported.")
            };
            SqsError::new(ErrorCode::UnknownOperation, message)
        })
}

/// Decodes the body (empty means `{}`) as `action`'s request.
pub fn decode(action: Action, body: &[u8]) -> Result<Request, SqsError> {
    action.decode_slice(body)
}

/// The success body: the result's members, `{}` for none.
pub fn encode_response(response: &Response) -> String {
    let direct = match response {
        Response::SendMessageBatch(r) => super::json_send::batch(r),
        Response::SendMessage(r) => super::json_send::single(r),
        _ => None,
    };
    direct.unwrap_or_else(|| response.to_json_string())
}

/// `{"__type": ..., "message": ...}`; the header value is [`query_error_header`].
pub fn encode_error(error: &SqsError) -> String {
    let mut body = Map::new();
    body.insert(
        "__type".into(),
        Value::String(error.code.json_type().into()),
    );
    body.insert("message".into(), Value::String(error.message.clone()));
    Value::Object(body).to_string()
}

/// `x-amzn-query-error`: `<query code>;<Sender|Receiver>`.
pub fn query_error_header(error: &SqsError) -> String {
    format!("{};{}", error.code.query_code(), error.code.fault())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::QueueUrlResult;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn recognised_by_target_or_content_type() {
        assert!(is_json(&headers(&[(
            "x-amz-target",
            "AmazonSQS.ListQueues"
        )])));
        assert!(is_json(&headers(&[(
            "content-type",
            "application/x-amz-json-1.0"
        )])));
        assert!(is_json(&headers(&[(
            "content-type",
            "Application/X-Amz-Json-1.1"
        )])));
        assert!(!is_json(&headers(&[(
            "content-type",
            "application/x-www-form-urlencoded"
        )])));
        assert!(!is_json(&headers(&[(
            "x-amz-target",
            "DynamoDB_20120810.ListTables"
        )])));
    }

    #[test]
    fn unknown_or_missing_target() {
        let h = headers(&[("x-amz-target", "AmazonSQS.SendMessage")]);
        assert_eq!(action(&h).unwrap(), Action::SendMessage);
        for h in [
            headers(&[("x-amz-target", "AmazonSQS.FooBar")]),
            headers(&[("x-amz-target", "Other.SendMessage")]),
            headers(&[("content-type", "application/x-amz-json-1.0")]),
        ] {
            assert_eq!(action(&h).unwrap_err().code, ErrorCode::UnknownOperation);
        }
    }

    #[test]
    fn bodies() {
        assert!(matches!(
            decode(Action::ListQueues, b"").unwrap(),
            Request::ListQueues(_)
        ));
        match decode(
            Action::SendMessage,
            br#"{"QueueUrl":"u","MessageBody":"hi","DelaySeconds":5}"#,
        )
        .unwrap()
        {
            Request::SendMessage(r) => {
                assert_eq!(r.message_body.as_deref(), Some("hi"));
                assert_eq!(r.delay_seconds, Some(5));
            }
            other => panic!("unexpected {other:?}"),
        }
        for bad in [&b"{"[..], b"[]", b"null", b"\"x\"", b"\xff\xfe"] {
            let err = decode(Action::ListQueues, bad).unwrap_err();
            assert_eq!(err.code, ErrorCode::Serialization, "{bad:?}");
        }
        let err = decode(Action::SendMessage, br#"{"DelaySeconds":"soon"}"#).unwrap_err();
        assert_eq!(err.code, ErrorCode::Serialization);
    }

    #[test]
    fn encodings() {
        let ok = Response::CreateQueue(QueueUrlResult {
            queue_url: "http://h/1/q".into(),
        });
        assert_eq!(encode_response(&ok), r#"{"QueueUrl":"http://h/1/q"}"#);
        let empty = Response::DeleteQueue(crate::api::Empty {});
        assert_eq!(encode_response(&empty), "{}");
        let err = SqsError::queue_does_not_exist();
        assert_eq!(
            encode_error(&err),
            r#"{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}"#
        );
        assert_eq!(
            query_error_header(&err),
            "AWS.SimpleQueueService.NonExistentQueue;Sender"
        );
        assert_eq!(
            query_error_header(&SqsError::internal("x")),
            "InternalError;Receiver"
        );
    }
}
