//! Unit tests: the AWS SigV4 test suite (shipped in the `aws-sigv4` crate,
//! a dev-dependency) for the canonicalization, and each refusal of
//! [`Verifier::verify`] with its code and AWS's wording.

use std::path::{Path, PathBuf};

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use bytes::Bytes;

use super::*;
use crate::error::ErrorCode;

/// `~/.cargo/registry/src/*/aws-sigv4-*/aws-signing-test-suite/v4`.
fn suite_dir() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let registry = home.join("registry").join("src");
    let mut found = Vec::new();
    for index in std::fs::read_dir(&registry).expect("cargo registry sources") {
        let index = index.unwrap().path();
        for krate in std::fs::read_dir(&index).into_iter().flatten().flatten() {
            let name = krate.file_name().to_string_lossy().into_owned();
            let suite = krate.path().join("aws-signing-test-suite").join("v4");
            if name.starts_with("aws-sigv4-") && suite.is_dir() {
                found.push(suite);
            }
        }
    }
    found.sort();
    found
        .pop()
        .expect("the aws-sigv4 crate (a dev-dependency) ships the SigV4 test suite")
}

struct Vector {
    method: String,
    path: String,
    query: String,
    headers: HeaderMap,
    body: Vec<u8>,
}

/// Parses a test-suite `*.txt` request (request line, headers, body).
fn parse_vector(text: &str) -> Option<Vector> {
    let (head, body) = text.split_once("\n\n").unwrap_or((text, ""));
    let mut lines = head.lines();
    let request_line = lines.next()?;
    let (method, rest) = request_line.split_once(' ')?;
    let target = rest.strip_suffix(" HTTP/1.1")?;
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut headers = HeaderMap::new();
    for line in lines {
        // Folded (multi-line) values cannot reach a server through hyper.
        if line.starts_with([' ', '\t']) {
            return None;
        }
        let (name, value) = line.split_once(':')?;
        headers.append(
            HeaderName::from_bytes(name.as_bytes()).ok()?,
            HeaderValue::from_str(value).ok()?,
        );
    }
    Some(Vector {
        method: method.into(),
        path: path.into(),
        query: query.into(),
        headers,
        body: body.as_bytes().to_vec(),
    })
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{dir:?}/{file}: {e}"))
}

/// The vectors that describe what a server receives on the wire for a
/// service other than S3. Left out: the `*-unnormalized` ones (S3's rules),
/// folded header values (hyper refuses them), and request lines holding a
/// raw space or UTF-8 (no client sends those; the suite means the path
/// before the client encodes it), and post-sts-header-after, whose session
/// token is added after signing (a client option SQS has no use for).
const SKIPPED: &[&str] = &[
    "get-space-normalized",
    "get-utf8",
    "get-header-value-multiline",
    "post-sts-header-after",
];

#[test]
fn the_aws_sigv4_test_suite() {
    let suite = suite_dir();
    let mut checked = 0;
    let mut names: Vec<PathBuf> = std::fs::read_dir(&suite)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for dir in names {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with("-unnormalized") || SKIPPED.contains(&name.as_str()) {
            continue;
        }
        let Ok(context) = std::fs::read_to_string(dir.join("context.json")) else {
            // double-encode-path has no context (and its request's date is
            // not its canonical request's): only its path is checked.
            let v = parse_vector(&read(&dir, "request.txt")).unwrap();
            let expected = read(&dir, "header-canonical-request.txt");
            assert_eq!(
                sigv4::canonical_uri(&v.path),
                expected.lines().nth(1).unwrap(),
                "{name}"
            );
            checked += 1;
            continue;
        };
        let context: serde_json::Value = serde_json::from_str(&context).unwrap();
        let secret = context["credentials"]["secret_access_key"]
            .as_str()
            .unwrap();
        let region = context["region"].as_str().unwrap();
        let service = context["service"].as_str().unwrap();
        let date = amz_date(parse_rfc3339(context["timestamp"].as_str().unwrap()).unwrap());
        let scope = format!("{}/{region}/{service}/aws4_request", &date[..8]);
        let key = signing_key(secret, &date[..8], region, service);

        for (form, request_file, presigned) in [
            ("header", "request.txt", false),
            ("query", "query-signed-request.txt", true),
        ] {
            let Ok(expected) =
                std::fs::read_to_string(dir.join(format!("{form}-canonical-request.txt")))
            else {
                continue;
            };
            let Some(mut v) = parse_vector(&read(&dir, request_file)) else {
                panic!("{name}: unparsable {request_file}");
            };
            if !presigned {
                // request.txt is unsigned: the header form adds X-Amz-Date ...
                if !v.headers.contains_key("x-amz-date") {
                    v.headers.insert("x-amz-date", date.parse().unwrap());
                }
                // ... and the session token, when the credentials have one.
                if let Some(token) = context["credentials"]["token"].as_str() {
                    v.headers
                        .insert("x-amz-security-token", token.parse().unwrap());
                }
                // ... and the body's hash, when asked to sign the body.
                if context["sign_body"] == true {
                    let hash = sha256_hex(&v.body);
                    v.headers
                        .insert("x-amz-content-sha256", hash.parse().unwrap());
                }
            }
            let lines: Vec<&str> = expected.lines().collect();
            let signed: Vec<String> = lines[lines.len() - 2]
                .split(';')
                .map(str::to_string)
                .collect();
            let payload = lines[lines.len() - 1].to_string();
            if !presigned {
                assert_eq!(payload, sha256_hex(&v.body), "{name}: payload hash");
            }
            let input = sigv4::CanonicalInput {
                method: &v.method,
                raw_path: &v.path,
                raw_query: &v.query,
                presigned,
                headers: &v.headers,
                signed_headers: &signed,
                payload_hash: &payload,
            };
            let canonical = sigv4::canonical_request(&input)
                .unwrap_or_else(|| panic!("{name} ({form}): a signed header is missing"));
            assert_eq!(canonical, expected, "{name} ({form}): canonical request");
            let to_sign = string_to_sign(&date, &scope, &canonical);
            assert_eq!(
                to_sign,
                read(&dir, &format!("{form}-string-to-sign.txt")),
                "{name} ({form}): string to sign"
            );
            let sig = read(&dir, &format!("{form}-signature.txt"));
            assert_eq!(
                sigv4::signature(&key, &to_sign),
                sig.trim(),
                "{name} ({form})"
            );
            assert!(sigv4::verify(&key, &to_sign, sig.trim()));
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} vectors checked");
}

use sigv4::{sha256_hex, signing_key, string_to_sign};

const NOW: &str = "20260101T120000Z";

fn now_ms() -> u64 {
    parse_amz_date(NOW).unwrap()
}

fn verifier() -> Verifier {
    Verifier::from_settings(
        true,
        &[parse_auth_key("AKIDTEST:secret/KEY+1:111111111111").unwrap()],
    )
    .unwrap()
    .unwrap()
}

/// A POST to `/` signed with `secret` at `date` by these rules (the
/// integration tests sign with the independent `aws-sigv4` crate).
fn signed_post(secret: &str, access_key: &str, date: &str, body: &str) -> HttpRequest {
    let mut headers = HeaderMap::new();
    headers.insert("host", "localhost:9324".parse().unwrap());
    headers.insert("x-amz-date", date.parse().unwrap());
    let signed = vec!["host".to_string(), "x-amz-date".to_string()];
    let payload = sha256_hex(body.as_bytes());
    let input = sigv4::CanonicalInput {
        method: "POST",
        raw_path: "/",
        raw_query: "",
        presigned: false,
        headers: &headers,
        signed_headers: &signed,
        payload_hash: &payload,
    };
    let canonical = sigv4::canonical_request(&input).unwrap();
    let scope = format!("{}/us-east-1/sqs/aws4_request", &date[..8]);
    let key = signing_key(secret, &date[..8], "us-east-1", "sqs");
    let sig = sigv4::signature(&key, &string_to_sign(date, &scope, &canonical));
    headers.insert(
        "authorization",
        format!("AWS4-HMAC-SHA256 Credential={access_key}/{scope}, SignedHeaders=host;x-amz-date, Signature={sig}")
            .parse()
            .unwrap(),
    );
    HttpRequest {
        path: "/".into(),
        query: None,
        headers,
        body: Bytes::from(body.to_string()),
    }
}

fn refusal(request: &HttpRequest) -> SqsError {
    verifier()
        .verify("POST", request, now_ms())
        .expect_err("refused")
}

#[test]
fn a_good_signature_names_the_key_account_and_scope_region() {
    let req = signed_post("secret/KEY+1", "AKIDTEST", NOW, "Action=ListQueues");
    let id = verifier().verify("POST", &req, now_ms()).unwrap();
    assert_eq!(id.account_id, "111111111111");
    assert_eq!(id.region, "us-east-1");
    assert_eq!(id.access_key, "AKIDTEST");
}

#[test]
fn refusals_with_aws_codes_and_words() {
    let wrong = refusal(&signed_post("nope", "AKIDTEST", NOW, "Action=ListQueues"));
    assert_eq!(wrong.code, ErrorCode::SignatureDoesNotMatch);
    assert!(wrong
        .message
        .starts_with("The request signature we calculated does not match"));

    let unknown = refusal(&signed_post("secret/KEY+1", "AKIDOTHER", NOW, "x"));
    assert_eq!(unknown.code, ErrorCode::InvalidClientTokenId);
    assert_eq!(
        unknown.message,
        "The security token included in the request is invalid."
    );

    // The body changed after signing.
    let mut tampered = signed_post("secret/KEY+1", "AKIDTEST", NOW, "Action=ListQueues");
    tampered.body = Bytes::from_static(b"Action=PurgeQueue");
    assert_eq!(refusal(&tampered).code, ErrorCode::SignatureDoesNotMatch);
    // ... also when the client states the old body's hash.
    let mut stated = signed_post("secret/KEY+1", "AKIDTEST", NOW, "a");
    stated
        .headers
        .insert("x-amz-content-sha256", sha256_hex(b"a").parse().unwrap());
    stated.body = Bytes::from_static(b"b");
    assert!(refusal(&stated).message.contains("x-amz-content-sha256"));

    let none = refusal(&HttpRequest::default());
    assert_eq!(none.code, ErrorCode::MissingAuthenticationToken);
    assert_eq!(none.code.status(), 403);
    assert_eq!(none.message, "Request is missing Authentication Token");
}

#[test]
fn the_fifteen_minute_window() {
    let old = "20260101T114459Z"; // 15 min 1 s before NOW
    let e = refusal(&signed_post("secret/KEY+1", "AKIDTEST", old, "x"));
    assert_eq!(e.code, ErrorCode::SignatureDoesNotMatch);
    assert_eq!(
        e.message,
        "Signature expired: 20260101T114459Z is now earlier than 20260101T114500Z (20260101T120000Z - 15 min.)"
    );
    let ahead = "20260101T121501Z";
    let e = refusal(&signed_post("secret/KEY+1", "AKIDTEST", ahead, "x"));
    assert_eq!(
        e.message,
        "Signature not yet current: 20260101T121501Z is still later than 20260101T121500Z (20260101T120000Z + 15 min.)"
    );
    // Exactly at both edges is accepted.
    for edge in ["20260101T114500Z", "20260101T121500Z"] {
        let req = signed_post("secret/KEY+1", "AKIDTEST", edge, "x");
        assert!(verifier().verify("POST", &req, now_ms()).is_ok(), "{edge}");
    }
}

fn with_authorization(value: &str, date: Option<&str>) -> HttpRequest {
    let mut headers = HeaderMap::new();
    headers.insert("host", "h".parse().unwrap());
    headers.insert("authorization", value.parse().unwrap());
    if let Some(d) = date {
        headers.insert("x-amz-date", d.parse().unwrap());
    }
    HttpRequest {
        headers,
        ..HttpRequest::default()
    }
}

#[test]
fn malformed_authorization_headers() {
    let e = refusal(&with_authorization(
        "AWS4-HMAC-SHA256 Credential=AKIDTEST/20260101/us-east-1/sqs/aws4_request",
        None,
    ));
    assert_eq!(e.code, ErrorCode::IncompleteSignature);
    assert_eq!(e.code.status(), 400);
    assert_eq!(
        e.message,
        "Authorization header requires 'Signature' parameter. Authorization header requires 'SignedHeaders' parameter. \
         Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. \
         Authorization=AWS4-HMAC-SHA256 Credential=AKIDTEST/20260101/us-east-1/sqs/aws4_request"
    );
    let e = refusal(&with_authorization("Bearer abc", Some(NOW)));
    assert_eq!(e.code, ErrorCode::IncompleteSignature);
    let e = refusal(&with_authorization(
        "AWS4-HMAC-SHA512 Credential=a",
        Some(NOW),
    ));
    assert_eq!(
        e.message,
        "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA512'."
    );

    let header = |cred: &str| {
        with_authorization(
            &format!(
                "AWS4-HMAC-SHA256 Credential={cred}, SignedHeaders=host;x-amz-date, Signature=00"
            ),
            Some(NOW),
        )
    };
    let e = refusal(&header("AKIDTEST/20260101/us-east-1/sqs"));
    assert_eq!(e.code, ErrorCode::IncompleteSignature);
    assert!(e
        .message
        .starts_with("Credential must have exactly 5 slash-delimited elements"));
    // SQS, SNS and STS share the port; a scope naming another service is refused.
    let e = refusal(&header("AKIDTEST/20260101/us-east-1/s3/aws4_request"));
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            ErrorCode::SignatureDoesNotMatch,
            "Credential should be scoped to correct service: 'sqs'. "
        )
    );
    let e = refusal(&header("AKIDTEST/20260101/us-east-1/sqs/aws5_request"));
    assert!(e
        .message
        .contains("valid terminator: 'aws4_request', not 'aws5_request'"));
    let e = refusal(&header("AKIDTEST/20251231/us-east-1/sqs/aws4_request"));
    assert_eq!(
        e.message,
        "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '20251231' != '20260101', from '20260101T120000Z'."
    );
    let e = refusal(&with_authorization(
        "AWS4-HMAC-SHA256 Credential=AKIDTEST/20260101/us-east-1/sqs/aws4_request, SignedHeaders=x-amz-date, Signature=00",
        Some(NOW),
    ));
    assert!(e
        .message
        .contains("'Host' or ':authority' must be a 'SignedHeader'"));
    let e = refusal(&with_authorization(
        "AWS4-HMAC-SHA256 Credential=AKIDTEST/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00",
        Some("2026-01-01T12:00:00Z"),
    ));
    assert!(e
        .message
        .starts_with("Date must be in ISO-8601 'basic format'"));
}

#[test]
fn malformed_presigned_queries() {
    let query = |q: &str| HttpRequest {
        query: Some(q.into()),
        ..HttpRequest::default()
    };
    assert_eq!(
        refusal(&query("Action=ListQueues")).code,
        ErrorCode::MissingAuthenticationToken
    );
    let e = refusal(&query("Action=ListQueues&X-Amz-Signature=00"));
    assert_eq!(e.code, ErrorCode::IncompleteSignature);
    assert!(e
        .message
        .starts_with("AWS query-string parameters must include"));
    let base = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDTEST%2F20260101%2Fus-east-1%2Fsqs%2Faws4_request\
                &X-Amz-Date=20260101T120000Z&X-Amz-SignedHeaders=host&X-Amz-Signature=00";
    let e = refusal(&query(&format!("{base}&X-Amz-Expires=604801")));
    assert_eq!(e.code, ErrorCode::IncompleteSignature);
    // A presigned URL outlives neither its X-Amz-Expires ...
    let late = now_ms() + 61_000;
    let e = verifier()
        .verify("GET", &query(&format!("{base}&X-Amz-Expires=60")), late)
        .unwrap_err();
    assert_eq!(
        e.message,
        "Signature expired: 20260101T120000Z is now earlier than 20260101T120001Z (20260101T120101Z - 60 sec.)"
    );
    // ... and reaches the signature check while it lives.
    let e = verifier()
        .verify("GET", &query(&format!("{base}&X-Amz-Expires=60")), now_ms())
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::SignatureDoesNotMatch);
}

#[test]
fn keys_and_settings() {
    let k = parse_auth_key("AKID:s3cr/et+:123456789012").unwrap();
    assert_eq!(
        (k.access_key.as_str(), k.secret_key.as_str()),
        ("AKID", "s3cr/et+")
    );
    assert!(!format!("{k:?}").contains("s3cr"));
    for bad in [
        "AKID:secret",
        "AKID:s:42",
        "A/K:s:123456789012",
        ":s:123456789012",
        "a:b:c:d",
    ] {
        assert!(parse_auth_key(bad).is_err(), "{bad}");
    }
    assert!(Verifier::from_settings(false, &[]).unwrap().is_none());
    assert!(Verifier::from_settings(true, &[]).is_err());
    assert_eq!(
        amz_date(parse_amz_date("20150830T123600Z").unwrap()),
        "20150830T123600Z"
    );
    assert_eq!(parse_amz_date("20150830T1236Z"), None);
}
