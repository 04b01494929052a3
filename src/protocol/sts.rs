//! AWS STS's `GetCallerIdentity` on the same port, in STS's query protocol.
//!
//! Infrastructure tools ask it who they are before anything else (the
//! Terraform AWS provider fails to configure without an answer, Ansible's
//! modules read the account from it to build ARNs). STS speaks only the
//! query protocol (botocore's model: `"protocols": ["query"]`), so a
//! request is STS's when its SigV4 scope names `sts`, or, unsigned, when
//! it carries STS's API version (`2011-06-15`; SQS's and SNS's are others)
//! or names `GetCallerIdentity`, which neither SQS nor SNS has.
//!
//! The caller is the root user of its account: the account of its access
//! key under `--auth`, the server's account otherwise. Every other STS
//! action gets STS's `InvalidAction`, in STS's error document, never an
//! SQS error.

use crate::api::RequestContext;
use crate::protocol::query::{self, Params};
use crate::protocol::xml::escape_text;
use crate::protocol::{HttpRequest, HttpResponse, REQUEST_ID_HEADER};

pub const NAMESPACE: &str = "https://sts.amazonaws.com/doc/2011-06-15/";
pub const VERSION: &str = "2011-06-15";
const CONTENT_TYPE: &str = "text/xml";

/// A `GetCallerIdentity` to answer once the caller's account is known.
#[derive(Debug, Clone)]
pub struct StsCall {
    pub context: RequestContext,
}

/// Whether a query request is for STS (see the module doc).
pub fn is_sts(req: &HttpRequest, params: &Params) -> bool {
    match super::sns::signed_service(req, params) {
        Some(service) => service == "sts",
        None => {
            query::param(params, "Version") == Some(VERSION)
                || query::param(params, "Action") == Some("GetCallerIdentity")
        }
    }
}

/// The STS request's call, or the error document for an action Retsu does
/// not serve.
pub fn decode(
    params: &Params,
    context: RequestContext,
    request_id: &str,
) -> Result<StsCall, HttpResponse> {
    match query::param(params, "Action").unwrap_or_default() {
        "GetCallerIdentity" => Ok(StsCall { context }),
        name => Err(error(
            400,
            "Sender",
            "InvalidAction",
            &format!("Could not find operation {name} for version {VERSION}"),
            request_id,
        )),
    }
}

/// `GetCallerIdentityResponse`: the root user of `account` (what AWS
/// returns for an account's own keys: the account id as `UserId`).
pub fn caller_identity(account: &str, request_id: &str) -> HttpResponse {
    let mut body = String::with_capacity(512);
    body.push_str("<GetCallerIdentityResponse xmlns=\"");
    body.push_str(NAMESPACE);
    body.push_str("\"><GetCallerIdentityResult>");
    element(&mut body, "Arn", &format!("arn:aws:iam::{account}:root"));
    element(&mut body, "UserId", account);
    element(&mut body, "Account", account);
    body.push_str("</GetCallerIdentityResult><ResponseMetadata>");
    element(&mut body, "RequestId", request_id);
    body.push_str("</ResponseMetadata></GetCallerIdentityResponse>");
    respond(200, body, request_id)
}

/// STS's `ErrorResponse` document.
fn error(status: u16, fault: &str, code: &str, message: &str, request_id: &str) -> HttpResponse {
    let mut body = String::with_capacity(256);
    body.push_str("<ErrorResponse xmlns=\"");
    body.push_str(NAMESPACE);
    body.push_str("\"><Error>");
    element(&mut body, "Type", fault);
    element(&mut body, "Code", code);
    element(&mut body, "Message", message);
    body.push_str("</Error>");
    element(&mut body, "RequestId", request_id);
    body.push_str("</ErrorResponse>");
    respond(status, body, request_id)
}

fn element(out: &mut String, name: &str, text: &str) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    escape_text(out, text);
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

fn respond(status: u16, body: String, request_id: &str) -> HttpResponse {
    HttpResponse {
        status,
        content_type: CONTENT_TYPE,
        headers: vec![(REQUEST_ID_HEADER, request_id.to_string())],
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderMap, HeaderValue};

    fn request(body: &str, scope_service: Option<&str>) -> (HttpRequest, Params) {
        let mut headers = HeaderMap::new();
        headers.insert(
            "content-type",
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        if let Some(service) = scope_service {
            let auth = format!(
                "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/{service}/aws4_request, \
                 SignedHeaders=host, Signature=00"
            );
            headers.insert("authorization", HeaderValue::try_from(auth).unwrap());
        }
        let req = HttpRequest {
            path: "/".into(),
            query: None,
            headers,
            body: bytes::Bytes::from(body.to_string()),
        };
        let params = query::params(None, &req.headers, &req.body);
        (req, params)
    }

    #[test]
    fn routing_by_scope_then_version_or_action() {
        let sts = |body: &str, service| {
            let (req, params) = request(body, service);
            is_sts(&req, &params)
        };
        assert!(sts(
            "Action=GetCallerIdentity&Version=2011-06-15",
            Some("sts")
        ));
        assert!(sts("Action=AssumeRole&Version=2011-06-15", Some("sts")));
        assert!(sts("Action=GetCallerIdentity&Version=2011-06-15", None));
        assert!(sts("Action=GetCallerIdentity", None));
        assert!(sts("Action=AssumeRole&Version=2011-06-15", None));
        // SQS's and SNS's own requests stay theirs.
        assert!(!sts("Action=ListQueues&Version=2012-11-05", Some("sqs")));
        assert!(!sts("Action=ListQueues&Version=2012-11-05", None));
        assert!(!sts("Action=ListTopics&Version=2010-03-31", Some("sns")));
        assert!(!sts(
            "Action=GetCallerIdentity&Version=2012-11-05",
            Some("sqs")
        ));
    }

    #[test]
    fn other_actions_are_sts_invalid_action() {
        let (_, params) = request("Action=AssumeRole&Version=2011-06-15", None);
        let context = RequestContext::new("us-east-1", "000000000000", "http://x");
        let resp = decode(&params, context, "rid").unwrap_err();
        assert_eq!(resp.status, 400);
        assert!(resp
            .body
            .starts_with(&format!("<ErrorResponse xmlns=\"{NAMESPACE}\">")));
        assert!(resp.body.contains("<Code>InvalidAction</Code>"));
        assert!(resp
            .body
            .contains("Could not find operation AssumeRole for version 2011-06-15"));
    }

    #[test]
    fn identity_document() {
        let resp = caller_identity("123456789012", "rid");
        assert_eq!(resp.status, 200);
        assert!(resp
            .body
            .contains("<Arn>arn:aws:iam::123456789012:root</Arn><UserId>123456789012</UserId><Account>123456789012</Account>"));
        assert!(resp.body.contains("<RequestId>rid</RequestId>"));
    }
}
