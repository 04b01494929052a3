//! Who is calling, and where returned queue URLs should point.
//!
//! The region comes from the SigV4 credential scope because that is the
//! only place an SDK states it (Retsu does not check signatures). Queue URLs
//! are built from the request's `Host` so that clients which send later
//! calls to the queue URL itself (JS v3, Java v1) come back to this server,
//! whatever name or port they reached it by; `--base-url` pins it instead
//! for set-ups behind a proxy or port mapping.

use axum::http::header::{self, HeaderName};
use axum::http::HeaderMap;

use crate::api::RequestContext;

/// By value: a lookup by string parses the name first, on every request.
const X_AMZN_TRACE_ID: HeaderName = HeaderName::from_static("x-amzn-trace-id");

/// Server-wide defaults the context is built from.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Region when the request is unsigned.
    pub default_region: String,
    /// The account every caller acts as.
    pub account_id: String,
    /// Pinned `scheme://host[:port]` for queue URLs, if configured.
    pub base_url: Option<String>,
    /// Used when the request has no usable `Host` header (HTTP/1.0).
    pub fallback_base_url: String,
    /// `http://`, or `https://` in the settings for requests that came
    /// over TLS: queue URLs keep the scheme the caller used.
    pub scheme: &'static str,
}

impl Settings {
    /// The server's own view, for callers that are not SQS requests (the
    /// admin API, metrics): default region and account, queue URLs on
    /// `--base-url` or the listen address.
    pub fn default_context(&self) -> RequestContext {
        RequestContext::new(
            &self.default_region,
            &self.account_id,
            self.base_url.as_ref().unwrap_or(&self.fallback_base_url),
        )
    }
}

/// Builds the engine's view of the caller. `params` are the query
/// parameters (for presigned `X-Amz-Credential`).
pub fn build(
    settings: &Settings,
    headers: &HeaderMap,
    params: &[(String, String)],
    query_protocol: bool,
) -> RequestContext {
    RequestContext {
        region: region(headers, params).unwrap_or_else(|| settings.default_region.clone()),
        account_id: settings.account_id.clone(),
        base_url: base_url(settings, headers),
        trace_header: headers
            .get(X_AMZN_TRACE_ID)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
            .map(str::to_string),
        query_protocol,
    }
}

/// The region of the SigV4 credential scope in `Authorization`, else in a
/// presigned request's `X-Amz-Credential` parameter.
pub fn region(headers: &HeaderMap, params: &[(String, String)]) -> Option<String> {
    let from_header = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|auth| {
            // SigV4 puts it first, after the algorithm: found without a
            // substring search then.
            let rest = match auth.split_once(' ') {
                Some((_, after)) if after.starts_with("Credential=") => after,
                _ => &auth[auth.find("Credential=")?..],
            };
            let rest = &rest["Credential=".len()..];
            let end = rest
                .find(|c: char| c == ',' || c.is_whitespace())
                .unwrap_or(rest.len());
            scope_region(&rest[..end])
        });
    from_header.or_else(|| {
        params
            .iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case("X-Amz-Credential"))
            .and_then(|(_, v)| scope_region(v))
    })
}

/// `AKID/yyyymmdd/<region>/<service>/aws4_request` → region. Counted from
/// the end so an access key containing `/` cannot shift it.
fn scope_region(credential: &str) -> Option<String> {
    let scope = credential.strip_suffix("/aws4_request")?;
    let (rest, _service) = scope.rsplit_once('/')?;
    let (key_and_date, region) = rest.rsplit_once('/')?;
    // An access key and a date before it.
    if !key_and_date.contains('/') {
        return None;
    }
    let valid = !region.is_empty()
        && region.len() <= 64
        && region
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    valid.then(|| region.to_string())
}

/// The pinned base URL, else the scheme + `Host`, else the bound address.
pub fn base_url(settings: &Settings, headers: &HeaderMap) -> String {
    if let Some(pinned) = &settings.base_url {
        return pinned.clone();
    }
    headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .filter(|h| valid_host(h))
        // Joined, not format!ted: this runs on every request.
        .map(|h| [settings.scheme, h].concat())
        .unwrap_or_else(|| settings.fallback_base_url.clone())
}

/// A host[:port] that is safe to paste into a URL (no path, no spaces).
fn valid_host(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 255
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']'))
}

/// Default settings for unit tests of the protocol layer.
#[cfg(test)]
pub(crate) fn test_settings() -> Settings {
    Settings {
        default_region: "us-east-1".into(),
        account_id: "000000000000".into(),
        base_url: None,
        fallback_base_url: "http://127.0.0.1:9324".into(),
        scheme: "http://",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        test_settings()
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn region_from_authorization_header() {
        let h = headers(&[(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240101/eu-west-2/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc",
        )]);
        assert_eq!(region(&h, &[]).as_deref(), Some("eu-west-2"));
        // Elsewhere in the header, and an access key holding a `/`.
        let h = headers(&[(
            "authorization",
            "AWS4-HMAC-SHA256 SignedHeaders=host, Credential=AK/ID/20240101/ap-east-1/sqs/aws4_request,Signature=abc",
        )]);
        assert_eq!(region(&h, &[]).as_deref(), Some("ap-east-1"));
    }

    #[test]
    fn region_from_presigned_credential() {
        let params = vec![(
            "X-Amz-Credential".to_string(),
            "AKID/20240101/ap-south-1/sqs/aws4_request".to_string(),
        )];
        assert_eq!(
            region(&HeaderMap::new(), &params).as_deref(),
            Some("ap-south-1")
        );
    }

    #[test]
    fn bad_or_absent_scope_falls_back_to_default() {
        for auth in [
            "AWS4-HMAC-SHA256 Credential=AKID/20240101/sqs/aws4_request",
            "AWS4-HMAC-SHA256 Credential=AKID/20240101/EU WEST/sqs/aws4_request",
            "AWS4-HMAC-SHA256 Credential=",
            "Credential=a/b/c/d/e",
            "Bearer x",
        ] {
            let h = headers(&[("authorization", auth)]);
            assert_eq!(region(&h, &[]), None, "{auth}");
        }
        let ctx = build(&settings(), &HeaderMap::new(), &[], true);
        assert_eq!(ctx.region, "us-east-1");
        assert_eq!(ctx.account_id, "000000000000");
        assert!(ctx.query_protocol);
    }

    #[test]
    fn base_url_from_host_unless_pinned() {
        let h = headers(&[("host", "localhost:4566"), ("x-amzn-trace-id", "Root=1-x")]);
        let ctx = build(&settings(), &h, &[], false);
        assert_eq!(ctx.base_url, "http://localhost:4566");
        assert_eq!(ctx.trace_header.as_deref(), Some("Root=1-x"));
        let mut pinned = settings();
        pinned.base_url = Some("https://sqs.example.com".into());
        assert_eq!(base_url(&pinned, &h), "https://sqs.example.com");
        let https = Settings {
            scheme: "https://",
            ..settings()
        };
        assert_eq!(base_url(&https, &h), "https://localhost:4566");
        let evil = headers(&[("host", "a/b c")]);
        assert_eq!(base_url(&settings(), &evil), "http://127.0.0.1:9324");
        assert_eq!(
            base_url(&settings(), &HeaderMap::new()),
            "http://127.0.0.1:9324"
        );
    }
}
