//! AWS Signature Version 4, the verifying side: the canonical request,
//! the string to sign, the signing key and the signature, exactly as
//! AWS's "Create a signed AWS API request" documents them.
//!
//! Everything here is a pure function of the request as it arrived on the
//! wire (raw path, raw query string, headers, payload hash), so it can be
//! checked against the AWS SigV4 test suite without a server.

use axum::http::HeaderMap;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";
/// The payload hash presigned URLs (and S3) may use instead of the body's.
pub const UNSIGNED_PAYLOAD: &str = "UNSIGNED-PAYLOAD";

type HmacSha256 = Hmac<Sha256>;

/// What a signature covers, in the order the canonical request lists it.
pub struct CanonicalInput<'a> {
    pub method: &'a str,
    /// The path as sent (still percent-encoded).
    pub raw_path: &'a str,
    /// The query string as sent, without the leading `?`.
    pub raw_query: &'a str,
    /// Drop `X-Amz-Signature` from the query (presigned form).
    pub presigned: bool,
    pub headers: &'a HeaderMap,
    /// Lower-case names, as listed in `SignedHeaders`.
    pub signed_headers: &'a [String],
    pub payload_hash: &'a str,
}

/// The canonical request, or `None` when a signed header is absent.
pub fn canonical_request(input: &CanonicalInput<'_>) -> Option<String> {
    let headers = canonical_headers(input.headers, input.signed_headers)?;
    Some(format!(
        "{}\n{}\n{}\n{}\n{}\n{}",
        input.method,
        canonical_uri(input.raw_path),
        canonical_query(input.raw_query, input.presigned),
        headers,
        input.signed_headers.join(";"),
        input.payload_hash
    ))
}

/// `AWS4-HMAC-SHA256\n<amz date>\n<scope>\n<hex sha256(canonical request)>`.
pub fn string_to_sign(amz_date: &str, scope: &str, canonical_request: &str) -> String {
    format!(
        "{ALGORITHM}\n{amz_date}\n{scope}\n{}",
        sha256_hex(canonical_request.as_bytes())
    )
}

/// `kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")`.
pub fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> [u8; 32] {
    let k_date = hmac(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k_region = hmac(&k_date, region.as_bytes());
    let k_service = hmac(&k_region, service.as_bytes());
    hmac(&k_service, b"aws4_request")
}

/// The signature, as the lower-case hex the client sends.
pub fn signature(signing_key: &[u8; 32], string_to_sign: &str) -> String {
    hex(&hmac(signing_key, string_to_sign.as_bytes()))
}

/// Whether `provided` (hex) is the signature of `string_to_sign`. The
/// comparison is `hmac`'s constant-time one, so timing reveals nothing
/// about how much of a guess was right.
pub fn verify(signing_key: &[u8; 32], string_to_sign: &str, provided: &str) -> bool {
    let Some(provided) = unhex(provided) else {
        return false;
    };
    let mut mac = HmacSha256::new_from_slice(signing_key).expect("HMAC takes any key length");
    mac.update(string_to_sign.as_bytes());
    mac.verify_slice(&provided).is_ok()
}

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    let mut out = [0u8; 32];
    out.copy_from_slice(&mac.finalize().into_bytes());
    out
}

pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    s.as_bytes()
        .chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

/// AWS's URI encoding: every byte but the unreserved `A-Z a-z 0-9 - _ . ~`
/// becomes `%XX` (upper-case hex); `/` is kept only in paths.
pub fn uri_encode(bytes: &[u8], keep_slash: bool) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes; anything else (a stray `%` included) is kept.
/// `+` stays `+`: SigV4 clients encode spaces as `%20`.
pub fn percent_decode(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hi = (bytes[i + 1] as char).to_digit(16);
            let lo = (bytes[i + 2] as char).to_digit(16);
            if let (Some(hi), Some(lo)) = (hi, lo) {
                out.push((hi * 16 + lo) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// Every service but S3 normalizes the path (`.` and `..` segments and
/// repeated slashes removed) and then URI-encodes the path as sent, so an
/// escape the client sent is encoded a second time (`%3D` → `%253D`).
pub fn canonical_uri(raw_path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in raw_path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    // A trailing slash (or a final dot segment) keeps the path a directory.
    let trailing = !segments.is_empty()
        && (raw_path.ends_with('/') || raw_path.ends_with("/.") || raw_path.ends_with("/.."));
    let mut path = String::from("/");
    path.push_str(&segments.join("/"));
    if trailing {
        path.push('/');
    }
    uri_encode(path.as_bytes(), true)
}

/// Parameters decoded, re-encoded the AWS way, sorted by name then value.
/// The presigned form leaves out `X-Amz-Signature` itself.
pub fn canonical_query(raw_query: &str, presigned: bool) -> String {
    let mut pairs: Vec<(String, String)> = raw_query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (
                uri_encode(&percent_decode(k), false),
                uri_encode(&percent_decode(v), false),
            )
        })
        .filter(|(k, _)| !(presigned && k == "X-Amz-Signature"))
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// `name:value\n` for each signed header: repeated headers joined with
/// `,`, values trimmed and inner runs of spaces collapsed to one.
fn canonical_headers(headers: &HeaderMap, signed: &[String]) -> Option<String> {
    let mut out = String::new();
    for name in signed {
        let values: Vec<String> = headers
            .get_all(name.as_str())
            .iter()
            .map(|v| trim_all(&String::from_utf8_lossy(v.as_bytes())))
            .collect();
        if values.is_empty() {
            return None;
        }
        out.push_str(name);
        out.push(':');
        out.push_str(&values.join(","));
        out.push('\n');
    }
    Some(out)
}

/// Trims spaces at both ends and collapses inner runs of spaces.
fn trim_all(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for word in value.split(' ').filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signing_key_of_the_aws_documentation() {
        // The example key of AWS's "Derive a signing key" page.
        let key = signing_key(
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "20150830",
            "us-east-1",
            "iam",
        );
        assert_eq!(
            hex(&key),
            "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9"
        );
    }

    #[test]
    fn encoding_rules() {
        assert_eq!(uri_encode(b"a-_.~Z9", false), "a-_.~Z9");
        assert_eq!(uri_encode(b"a b/c+=", false), "a%20b%2Fc%2B%3D");
        assert_eq!(uri_encode(b"/a b/", true), "/a%20b/");
        assert_eq!(percent_decode("a%2Fb%zz%4"), b"a/b%zz%4");
        assert_eq!(percent_decode("%41+"), b"A+");
        assert_eq!(canonical_uri(""), "/");
        assert_eq!(canonical_uri("/"), "/");
        assert_eq!(canonical_uri("/000000000000/q"), "/000000000000/q");
        assert_eq!(canonical_uri("/a/./b/../c//d/"), "/a/c/d/");
        assert_eq!(canonical_uri("/x%3D"), "/x%253D");
        assert_eq!(
            canonical_query("b=2&a=%7e&a=1&X-Amz-Signature=s&c", true),
            "a=1&a=~&b=2&c="
        );
        assert_eq!(canonical_query("", false), "");
        assert_eq!(trim_all("  a   b  c "), "a b c");
    }

    #[test]
    fn verify_is_hex_and_exact() {
        let key = signing_key("s", "20240101", "us-east-1", "sqs");
        let sig = signature(&key, "x");
        assert!(verify(&key, "x", &sig));
        assert!(!verify(&key, "y", &sig));
        assert!(!verify(&key, "x", &sig[..62]));
        assert!(!verify(&key, "x", "zz"));
        assert!(!verify(&key, "x", ""));
    }
}
