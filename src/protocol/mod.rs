//! Wire protocols: AWS JSON 1.0 and AWS Query (XML), decoded into the one
//! typed API and encoded back in the caller's protocol.
//!
//! SQS speaks both at once on the same endpoint: current SDKs send JSON,
//! older ones (botocore before 1.34.90, Java v1 before 1.12.584, …) send
//! query. The wire form is chosen as AWS SDKs send it: a JSON target header or Content-Type
//! wins regardless of path, otherwise an `Action` parameter means query.
//!
//! This module is plain functions over [`HttpRequest`]/[`HttpResponse`] so
//! it can be tested without a socket; `server` only moves bytes. Every
//! response, success or error, carries a fresh request id, in the
//! `x-amzn-RequestId` header and, for XML, in the body as well.

pub mod context;
pub mod json;
mod json_send;
pub mod lambda;
pub mod query;
pub mod sns;
pub mod sts;
pub mod xml;

use axum::http::{HeaderMap, HeaderName};
use bytes::Bytes;

use crate::api::{Action, Request, RequestContext, Response};
use crate::error::{ErrorCode, SqsError};

pub use context::Settings;

/// Which wire protocol a request speaks (and its response must).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Json,
    Query,
    /// A query request that sent `Accept: application/json`: answered with
    /// a JSON rendering of the XML document, as AWS does.
    QueryAsJson,
}

/// The parts of an HTTP request the protocols look at.
#[derive(Debug, Clone, Default)]
pub struct HttpRequest {
    pub path: String,
    /// The raw (still percent-encoded) query string.
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// A response ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    pub content_type: &'static str,
    /// Extra headers, `x-amzn-RequestId` included.
    pub headers: Vec<(HeaderName, String)>,
    pub body: String,
}

impl HttpResponse {
    /// The axum response. Built in place rather than through
    /// `Response::builder()`, which parses every header name and value from
    /// strings, on every response.
    pub fn into_http(self) -> axum::response::Response {
        use axum::http::{header, HeaderValue, StatusCode};
        let mut http = axum::response::Response::new(axum::body::Body::from(self.body));
        *http.status_mut() =
            StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let headers = http.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(self.content_type),
        );
        for (name, value) in self.headers {
            match HeaderValue::try_from(value) {
                Ok(value) => {
                    headers.append(name, value);
                }
                Err(e) => tracing::error!("cannot send header {name}: {e}"),
            }
        }
        http
    }
}

/// `x-amzn-RequestId`; HTTP/1.1 writes header names in lower case anyway.
/// Names as values: parsing a name from a string costs on every response.
pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-amzn-requestid");
pub const QUERY_ERROR_HEADER: HeaderName = HeaderName::from_static("x-amzn-query-error");

/// A decoded request, ready for the engine.
#[derive(Debug, Clone)]
pub struct Call {
    pub protocol: Protocol,
    pub context: RequestContext,
    pub request: Request,
}

/// A decoded request: SQS's, in either protocol, SNS's (query only), or
/// STS's `GetCallerIdentity` (query only).
#[derive(Debug, Clone)]
pub enum Decoded {
    Sqs(Call),
    Sns(SnsCall),
    Sts(sts::StsCall),
}

/// A decoded SNS request, ready for the SNS service.
#[derive(Debug, Clone)]
pub struct SnsCall {
    pub context: RequestContext,
    pub request: retsu_core::sns::api::SnsRequest,
}

/// How a request is to be read: which of the two wire protocols.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireForm {
    Json,
    /// Query, with its merged parameters.
    Query(query::Params),
    /// Neither a JSON target nor an `Action` parameter.
    NoAction,
}

/// Decides the protocol of a request.
pub fn wire_form(req: &HttpRequest) -> WireForm {
    if json::is_json(&req.headers) {
        return WireForm::Json;
    }
    let params = query::params(req.query.as_deref(), &req.headers, &req.body);
    if query::param(&params, "Action").is_some() {
        WireForm::Query(params)
    } else {
        WireForm::NoAction
    }
}

/// The protocol to answer in when the request could not even be read (for
/// example an over-long body): decided from the headers alone.
pub fn protocol_from_headers(headers: &HeaderMap) -> Protocol {
    if json::is_json(headers) {
        Protocol::Json
    } else {
        Protocol::Query
    }
}

/// Decodes a request, or returns the error response to send instead.
pub fn decode(
    req: &HttpRequest,
    settings: &Settings,
    request_id: &str,
) -> Result<Decoded, HttpResponse> {
    match wire_form(req) {
        WireForm::Json => {
            let params = query::params(req.query.as_deref(), &HeaderMap::new(), &[]);
            let context = context::build(settings, &req.headers, &params, false);
            let request = json::action(&req.headers)
                .and_then(|action| json::decode(action, &req.body))
                .map_err(|e| encode_error(Protocol::Json, &e, request_id))?;
            Ok(Decoded::Sqs(Call {
                protocol: Protocol::Json,
                context,
                request,
            }))
        }
        WireForm::Query(params) => {
            if sts::is_sts(req, &params) {
                let context = context::build(settings, &req.headers, &params, true);
                return sts::decode(&params, context, request_id).map(Decoded::Sts);
            }
            if let Some(action) = sns::route(req, &params) {
                let context = context::build(settings, &req.headers, &params, true);
                let request =
                    sns::decode(action, params).map_err(|e| sns::encode(&Err(e), request_id))?;
                return Ok(Decoded::Sns(SnsCall { context, request }));
            }
            if sns::signed_service(req, &params) == Some("sns") {
                // Signed for SNS, naming an action SNS does not have.
                let name = query::param(&params, "Action").unwrap_or_default();
                return Err(sns::encode(&Err(sns::invalid_action(name)), request_id));
            }
            let protocol = if accepts_json(&req.headers) {
                Protocol::QueryAsJson
            } else {
                Protocol::Query
            };
            let context = context::build(settings, &req.headers, &params, true);
            let request = decode_query(req, &params, &context)
                .map_err(|e| encode_error(protocol, &e, request_id))?;
            Ok(Decoded::Sqs(Call {
                protocol,
                context,
                request,
            }))
        }
        WireForm::NoAction => Err(HttpResponse {
            status: 404,
            content_type: xml::CONTENT_TYPE,
            headers: vec![(REQUEST_ID_HEADER, request_id.to_string())],
            body: xml::UNKNOWN_OPERATION_BODY.to_string(),
        }),
    }
}

/// Whether a query caller asks for JSON (`Accept: application/json`).
fn accepts_json(headers: &HeaderMap) -> bool {
    headers
        .get_all(axum::http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|media| {
            let media = media.split(';').next().unwrap_or("").trim();
            media.eq_ignore_ascii_case("application/json")
        })
}

fn decode_query(
    req: &HttpRequest,
    params: &query::Params,
    context: &RequestContext,
) -> Result<Request, SqsError> {
    let name = query::param(params, "Action").unwrap_or_default();
    let invalid = || {
        SqsError::new(
            ErrorCode::InvalidAction,
            format!("The action {name} is not valid for this endpoint."),
        )
    };
    let action = Action::from_name(name).ok_or_else(invalid)?;
    let queue_path = query::queue_path(&req.path);
    // Account-level actions are not valid on a queue's endpoint;
    // GetQueueUrl is, and answers for the queue it names (FIDELITY.md, "Query protocol").
    if queue_path.is_some() && matches!(action, Action::ListQueues | Action::CreateQueue) {
        return Err(invalid());
    }
    let url_from_path = queue_path.map(|p| format!("{}{p}", context.base_url));
    query::decode(action, params, url_from_path)
}

/// Encodes the engine's answer in the caller's protocol.
pub fn encode(
    protocol: Protocol,
    result: &Result<Response, SqsError>,
    request_id: &str,
) -> HttpResponse {
    match result {
        Ok(response) => encode_response(protocol, response, request_id),
        Err(error) => encode_error(protocol, error, request_id),
    }
}

pub fn encode_response(protocol: Protocol, response: &Response, request_id: &str) -> HttpResponse {
    let (content_type, body) = match protocol {
        Protocol::Json => (json::CONTENT_TYPE, json::encode_response(response)),
        Protocol::Query => (
            xml::CONTENT_TYPE,
            xml::encode_response(response, request_id),
        ),
        Protocol::QueryAsJson => (
            xml::JSON_CONTENT_TYPE,
            xml::encode_response_json(response, request_id),
        ),
    };
    HttpResponse {
        status: 200,
        content_type,
        headers: vec![(REQUEST_ID_HEADER, request_id.to_string())],
        body,
    }
}

pub fn encode_error(protocol: Protocol, error: &SqsError, request_id: &str) -> HttpResponse {
    let mut headers = vec![(REQUEST_ID_HEADER, request_id.to_string())];
    let (content_type, body) = match protocol {
        Protocol::Json => {
            headers.push((QUERY_ERROR_HEADER, json::query_error_header(error)));
            (json::CONTENT_TYPE, json::encode_error(error))
        }
        Protocol::Query => (xml::CONTENT_TYPE, xml::encode_error(error, request_id)),
        Protocol::QueryAsJson => (
            xml::JSON_CONTENT_TYPE,
            xml::encode_error_json(error, request_id),
        ),
    };
    HttpResponse {
        status: error.code.status(),
        content_type,
        headers,
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SQS call a request decodes to.
    fn sqs(decoded: Result<Decoded, HttpResponse>) -> Call {
        match decoded {
            Ok(Decoded::Sqs(call)) => call,
            Ok(Decoded::Sns(call)) => panic!("decoded as SNS: {call:?}"),
            Ok(Decoded::Sts(call)) => panic!("decoded as STS: {call:?}"),
            Err(response) => panic!("refused: {response:?}"),
        }
    }
    use crate::api::QueueUrlResult;

    fn settings() -> Settings {
        context::test_settings()
    }

    fn request(
        path: &str,
        query: Option<&str>,
        headers: &[(&'static str, &str)],
        body: &str,
    ) -> HttpRequest {
        let mut h = HeaderMap::new();
        for (k, v) in headers {
            h.insert(*k, v.parse().unwrap());
        }
        HttpRequest {
            path: path.into(),
            query: query.map(str::to_string),
            headers: h,
            body: Bytes::from(body.to_string()),
        }
    }

    const FORM: (&str, &str) = ("content-type", "application/x-www-form-urlencoded");
    const HOST: (&str, &str) = ("host", "localhost:9324");

    fn header<'a>(resp: &'a HttpResponse, name: &str) -> Option<&'a str> {
        resp.headers
            .iter()
            .find(|(k, _)| k.as_str().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn dispatch_decisions() {
        // JSON by target, even on a queue path and with an Action param.
        let r = request(
            "/000000000000/q",
            Some("Action=ListQueues"),
            &[("x-amz-target", "AmazonSQS.ListQueues")],
            "{}",
        );
        assert_eq!(wire_form(&r), WireForm::Json);
        // JSON by content type alone.
        let r = request(
            "/",
            None,
            &[("content-type", "application/x-amz-json-1.0")],
            "{}",
        );
        assert_eq!(wire_form(&r), WireForm::Json);
        // Query by form body, and by GET query string.
        let r = request("/", None, &[FORM], "Action=ListQueues");
        assert!(matches!(wire_form(&r), WireForm::Query(_)));
        let r = request("/", Some("Action=ListQueues&Version=2012-11-05"), &[], "");
        assert!(matches!(wire_form(&r), WireForm::Query(_)));
        // Nothing at all.
        let r = request("/", None, &[], "");
        assert_eq!(wire_form(&r), WireForm::NoAction);
        let r = request("/", Some("Version=2012-11-05"), &[FORM], "QueueName=x");
        assert_eq!(wire_form(&r), WireForm::NoAction);
    }

    #[test]
    fn query_without_action_is_404() {
        let resp = decode(&request("/", None, &[], ""), &settings(), "rid").unwrap_err();
        assert_eq!(resp.status, 404);
        assert_eq!(resp.body, "<UnknownOperationException/>");
        assert_eq!(resp.content_type, "text/xml");
        assert_eq!(header(&resp, "x-amzn-requestid"), Some("rid"));
    }

    #[test]
    fn unknown_query_action() {
        let resp = decode(
            &request("/", None, &[FORM], "Action=FooBar"),
            &settings(),
            "rid",
        )
        .unwrap_err();
        assert_eq!(resp.status, 400);
        assert!(resp.body.contains("<Code>InvalidAction</Code>"));
        assert!(resp
            .body
            .contains("<Message>The action FooBar is not valid for this endpoint.</Message>"));
        assert!(resp.body.contains("<RequestId>rid</RequestId>"));
    }

    #[test]
    fn account_actions_on_a_queue_path_are_invalid() {
        for action in ["ListQueues", "CreateQueue"] {
            let body = format!("Action={action}&QueueName=q");
            let resp = decode(
                &request("/000000000000/q", None, &[FORM], &body),
                &settings(),
                "rid",
            )
            .unwrap_err();
            assert_eq!(resp.status, 400);
            assert!(resp.body.contains(&format!(
                "The action {action} is not valid for this endpoint."
            )));
        }
        // The same on "/" is fine.
        let call = sqs(decode(
            &request("/", None, &[FORM], "Action=ListQueues"),
            &settings(),
            "rid",
        ));
        assert_eq!(call.protocol, Protocol::Query);
        assert!(matches!(call.request, Request::ListQueues(_)));
    }

    #[test]
    fn query_queue_url_from_path_and_host() {
        let call = sqs(decode(
            &request(
                "/000000000000/jobs",
                None,
                &[FORM, HOST],
                "Action=SendMessage&MessageBody=hi",
            ),
            &settings(),
            "rid",
        ));
        match call.request {
            Request::SendMessage(r) => assert_eq!(
                r.queue_url.as_deref(),
                Some("http://localhost:9324/000000000000/jobs")
            ),
            other => panic!("unexpected {other:?}"),
        }
        assert!(call.context.query_protocol);
        assert_eq!(call.context.base_url, "http://localhost:9324");
    }

    #[test]
    fn json_errors() {
        let resp = decode(
            &request("/", None, &[("x-amz-target", "AmazonSQS.FooBar")], "{}"),
            &settings(),
            "rid",
        )
        .unwrap_err();
        assert_eq!(resp.status, 400);
        assert_eq!(resp.content_type, "application/x-amz-json-1.0");
        assert!(resp
            .body
            .contains(r#""__type":"com.amazon.coral.service#UnknownOperationException""#));
        assert_eq!(
            header(&resp, "x-amzn-query-error"),
            Some("UnknownOperationException;Sender")
        );
        let resp = decode(
            &request(
                "/",
                None,
                &[("x-amz-target", "AmazonSQS.ListQueues")],
                "{nope",
            ),
            &settings(),
            "rid",
        )
        .unwrap_err();
        assert_eq!(resp.status, 400);
        assert!(resp.body.contains("SerializationException"));
        assert_eq!(header(&resp, "x-amzn-requestid"), Some("rid"));
    }

    #[test]
    fn json_call_context() {
        let call = sqs(decode(
            &request(
                "/",
                None,
                &[
                    ("x-amz-target", "AmazonSQS.GetQueueUrl"),
                    HOST,
                    (
                        "authorization",
                        "AWS4-HMAC-SHA256 Credential=AKID/20240101/eu-central-1/sqs/aws4_request, SignedHeaders=host, Signature=x",
                    ),
                ],
                r#"{"QueueName":"q"}"#,
            ),
            &settings(),
            "rid",
        ));
        assert_eq!(call.protocol, Protocol::Json);
        assert_eq!(call.context.region, "eu-central-1");
        assert!(!call.context.query_protocol);
        assert!(matches!(call.request, Request::GetQueueUrl(_)));
    }

    #[test]
    fn queue_does_not_exist_wording_per_protocol() {
        let err: Result<Response, SqsError> = Err(SqsError::queue_does_not_exist());
        let j = encode(Protocol::Json, &err, "r");
        assert!(j.body.contains("The specified queue does not exist."));
        assert_eq!(
            header(&j, "x-amzn-query-error"),
            Some("AWS.SimpleQueueService.NonExistentQueue;Sender")
        );
        let q = encode(Protocol::Query, &err, "r");
        assert!(q
            .body
            .contains("The specified queue does not exist for this wsdl version."));
        assert_eq!(q.status, 400);
        assert_eq!(header(&q, "x-amzn-query-error"), None);
    }

    #[test]
    fn successes_in_both_protocols() {
        let ok: Result<Response, SqsError> = Ok(Response::GetQueueUrl(QueueUrlResult {
            queue_url: "http://h/000000000000/q".into(),
        }));
        let j = encode(Protocol::Json, &ok, "r1");
        assert_eq!(j.status, 200);
        assert_eq!(j.body, r#"{"QueueUrl":"http://h/000000000000/q"}"#);
        assert_eq!(header(&j, "x-amzn-requestid"), Some("r1"));
        let q = encode(Protocol::Query, &ok, "r1");
        assert_eq!(
            q.body,
            concat!(
                r#"<GetQueueUrlResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">"#,
                "<GetQueueUrlResult><QueueUrl>http://h/000000000000/q</QueueUrl></GetQueueUrlResult>",
                "<ResponseMetadata><RequestId>r1</RequestId></ResponseMetadata></GetQueueUrlResponse>"
            )
        );
        assert_eq!(header(&q, "x-amzn-requestid"), Some("r1"));
    }

    #[test]
    fn get_queue_url_is_valid_on_a_queue_path() {
        let call = sqs(decode(
            &request(
                "/000000000000/q",
                None,
                &[FORM, HOST],
                "Action=GetQueueUrl&QueueName=other",
            ),
            &settings(),
            "rid",
        ));
        match call.request {
            Request::GetQueueUrl(r) => assert_eq!(r.queue_name.as_deref(), Some("other")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn accept_json_renders_query_answers_as_json() {
        let plain = sqs(decode(
            &request("/", None, &[FORM], "Action=ListQueues"),
            &settings(),
            "rid",
        ));
        assert_eq!(plain.protocol, Protocol::Query);
        let call = sqs(decode(
            &request(
                "/",
                None,
                &[FORM, ("accept", "text/html, application/json;q=0.9")],
                "Action=ListQueues",
            ),
            &settings(),
            "rid",
        ));
        assert_eq!(call.protocol, Protocol::QueryAsJson);
        let ok: Result<Response, SqsError> =
            Ok(Response::ListQueues(crate::api::ListQueuesResult {
                queue_urls: vec!["http://h/000000000000/a".into()],
                next_token: None,
            }));
        let resp = encode(Protocol::QueryAsJson, &ok, "r1");
        assert_eq!(resp.content_type, "application/json");
        let v: serde_json::Value = serde_json::from_str(&resp.body).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"ListQueuesResponse": {
                "ListQueuesResult": {"queueUrls": ["http://h/000000000000/a"]},
                "ResponseMetadata": {"RequestId": "r1"}
            }})
        );
        // A decode error answers in JSON too.
        let err = decode(
            &request(
                "/",
                None,
                &[FORM, ("accept", "application/json")],
                "Action=FooBar",
            ),
            &settings(),
            "rid",
        )
        .unwrap_err();
        let v: serde_json::Value = serde_json::from_str(&err.body).unwrap();
        assert_eq!(v["Error"]["Code"], "InvalidAction");
        assert_eq!(v["Error"]["Type"], "Sender");
        assert_eq!(v["RequestId"], "rid");
        assert_eq!(err.status, 400);
    }
}
