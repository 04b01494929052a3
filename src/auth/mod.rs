//! Optional authentication (`--auth`): AWS Signature Version 4 on every
//! SQS, SNS and STS request, with configured access keys each mapped to an
//! account.
//!
//! Off by default, as in every local emulator: then nothing here runs and
//! the caller acts as the server's account. On, a request must carry a
//! valid signature (the `Authorization` header or a presigned query
//! string) made with a configured key; the caller's account is that key's,
//! its region the credential scope's. Another account's queue is reachable
//! only where that queue's policy (as AddPermission builds it) grants the
//! action; a queue URL naming another region than the scope is refused.
//!
//! Time: signatures are checked against the real wall clock
//! ([`SystemClock`]), never the engine's clock, which tests and the admin
//! API move at will; SDKs sign with real time.
//!
//! `/health` and the admin API (its own `--admin-token`) are not SQS
//! requests and never come here.

use crate::error::auth as errors;
pub mod sigv4;

use std::collections::HashMap;
use std::fmt;

use axum::http::HeaderMap;

use crate::api::{Request, RequestContext};
use crate::clock::{format_rfc3339, parse_rfc3339, Clock, SystemClock};
use crate::engine::Engine;
use crate::error::SqsError;
use crate::protocol::{self, Call, HttpRequest, HttpResponse};

/// The service name every SQS credential scope names.
pub const SERVICE: &str = "sqs";
/// The services a credential scope may name on this port: SQS, SNS (same
/// port, routed by the scope) and STS (`GetCallerIdentity`).
pub const SERVICES: [&str; 3] = [SERVICE, "sns", "sts"];
/// How far a signature's time may be from ours (AWS: 15 minutes).
pub const SKEW_MS: u64 = 15 * 60 * 1000;
/// The longest a presigned URL may live (AWS: a week).
pub const MAX_EXPIRES_SECS: u64 = 604_800;

/// One configured key: `ACCESS_KEY:SECRET:ACCOUNT_ID`.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthKey {
    pub access_key: String,
    pub secret_key: String,
    pub account_id: String,
}

/// The secret never reaches a log line.
impl fmt::Debug for AuthKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthKey")
            .field("access_key", &self.access_key)
            .field("secret_key", &"<hidden>")
            .field("account_id", &self.account_id)
            .finish()
    }
}

impl AuthKey {
    /// Checks the parts a key is made of (shared by the flag and the file).
    pub fn new(access_key: &str, secret_key: &str, account_id: &str) -> Result<AuthKey, String> {
        let printable = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_graphic());
        if !printable(access_key) || access_key.contains(['/', ':', ',']) {
            return Err(format!(
                "access key {access_key:?} must be printable ASCII without '/', ':' or ','"
            ));
        }
        if !printable(secret_key) || secret_key.contains([':', ',']) {
            return Err("a secret key must be printable ASCII without ':' or ','".into());
        }
        let account_id = crate::api::parse_account(account_id)?;
        Ok(AuthKey {
            access_key: access_key.into(),
            secret_key: secret_key.into(),
            account_id,
        })
    }
}

/// `--auth-key ACCESS_KEY:SECRET:ACCOUNT_ID`.
pub fn parse_auth_key(s: &str) -> Result<AuthKey, String> {
    match s.trim().split(':').collect::<Vec<_>>().as_slice() {
        [key, secret, account] => AuthKey::new(key, secret, account),
        _ => Err("an auth key is ACCESS_KEY:SECRET:ACCOUNT_ID".into()),
    }
}

/// Who a verified signature says is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub access_key: String,
    pub account_id: String,
    /// The region of the credential scope.
    pub region: String,
}

/// The configured keys, by access key.
#[derive(Debug)]
pub struct Verifier {
    keys: HashMap<String, AuthKey>,
}

impl Verifier {
    /// `None` when authentication is off; an error when it is on without
    /// a key (nothing could ever get in).
    pub fn from_settings(enabled: bool, keys: &[AuthKey]) -> Result<Option<Verifier>, String> {
        if !enabled {
            return Ok(None);
        }
        if keys.is_empty() {
            return Err("--auth needs at least one --auth-key ACCESS_KEY:SECRET:ACCOUNT_ID".into());
        }
        Ok(Some(Verifier {
            keys: keys
                .iter()
                .map(|k| (k.access_key.clone(), k.clone()))
                .collect(),
        }))
    }

    /// The account of the access key a request's credential names, without
    /// checking its signature: what a cluster node's front routes by (the
    /// caller's CreateQueue and GetQueueUrl name a queue in that account).
    /// The node that answers verifies the signature; a forged credential
    /// only picks which shard refuses it, and a request too malformed to
    /// name a key (`None`) is refused by whichever shard gets it.
    pub fn claimed_account(&self, request: &HttpRequest) -> Option<&str> {
        let signed = match request.headers.get("authorization") {
            Some(value) => {
                from_header(&String::from_utf8_lossy(value.as_bytes()), &request.headers).ok()?
            }
            None => from_query(request.query.as_deref().unwrap_or("")).ok()?,
        };
        let access_key = signed.credential.split('/').next()?;
        self.keys.get(access_key).map(|k| k.account_id.as_str())
    }

    /// Verifies a request's signature at wall-clock time `now_ms`.
    pub fn verify(
        &self,
        method: &str,
        request: &HttpRequest,
        now_ms: u64,
    ) -> Result<Identity, SqsError> {
        let signed = match request.headers.get("authorization") {
            Some(value) => {
                from_header(&String::from_utf8_lossy(value.as_bytes()), &request.headers)?
            }
            None => from_query(request.query.as_deref().unwrap_or(""))?,
        };
        // The credential scope: key/date/region/service/aws4_request.
        let scope: Vec<&str> = signed.credential.split('/').collect();
        let [access_key, scope_date, region, service, terminator] = scope.as_slice() else {
            return Err(errors::bad_credential(&signed.credential));
        };
        if *terminator != "aws4_request" {
            return Err(errors::wrong_terminator(terminator));
        }
        if !SERVICES.contains(service) {
            return Err(errors::wrong_service());
        }
        let region_ok = !region.is_empty()
            && region
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !region_ok {
            return Err(errors::wrong_region(region));
        }
        let key = self.keys.get(*access_key).ok_or_else(errors::unknown_key)?;
        let signed_ms =
            parse_amz_date(&signed.date).ok_or_else(|| errors::bad_date(&signed.date))?;
        if *scope_date != &signed.date[..8] {
            return Err(errors::scope_date(scope_date, &signed.date));
        }
        check_time(signed_ms, &signed, now_ms)?;
        if !signed.signed_headers.iter().any(|h| h == "host") {
            return Err(errors::host_not_signed());
        }

        let body_hash = sigv4::sha256_hex(&request.body);
        let mut payload_hashes = vec![body_hash.clone()];
        if signed.presigned {
            // A presigned URL does not cover the body (botocore signs it
            // UNSIGNED-PAYLOAD); AWS allows that there, and only there.
            payload_hashes.push(sigv4::UNSIGNED_PAYLOAD.to_string());
        } else if let Some(sent) = request.headers.get("x-amz-content-sha256") {
            // A hash that is not the body's: the body was changed.
            if sent.as_bytes() != body_hash.as_bytes() {
                return Err(errors::content_hash());
            }
        }
        let signing_key = sigv4::signing_key(&key.secret_key, scope_date, region, service);
        let scope_text = format!("{scope_date}/{region}/{service}/aws4_request");
        let mut matched = false;
        for payload_hash in &payload_hashes {
            let input = sigv4::CanonicalInput {
                method,
                raw_path: &request.path,
                raw_query: request.query.as_deref().unwrap_or(""),
                presigned: signed.presigned,
                headers: &request.headers,
                signed_headers: &signed.signed_headers,
                payload_hash,
            };
            // A signed header that is absent cannot have been signed.
            let Some(canonical) = sigv4::canonical_request(&input) else {
                break;
            };
            let to_sign = sigv4::string_to_sign(&signed.date, &scope_text, &canonical);
            if sigv4::verify(&signing_key, &to_sign, &signed.signature) {
                matched = true;
                break;
            }
            tracing::debug!(
                "signature mismatch; canonical request:\n{canonical}\nstring to sign:\n{to_sign}"
            );
        }
        if !matched {
            return Err(errors::wrong_signature());
        }
        Ok(Identity {
            access_key: key.access_key.clone(),
            account_id: key.account_id.clone(),
            region: region.to_string(),
        })
    }
}

/// The parts of a signature, from either form.
struct Signed {
    credential: String,
    signed_headers: Vec<String>,
    signature: String,
    /// `YYYYMMDD'T'HHMMSS'Z'`.
    date: String,
    presigned: bool,
    /// Presigned only: seconds the URL lives.
    expires_secs: Option<u64>,
}

/// `AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`.
fn from_header(authorization: &str, headers: &HeaderMap) -> Result<Signed, SqsError> {
    let (algorithm, rest) = authorization
        .trim()
        .split_once(' ')
        .unwrap_or((authorization.trim(), ""));
    if algorithm != sigv4::ALGORITHM {
        if algorithm.starts_with("AWS4-") {
            return Err(errors::unsupported_algorithm(algorithm));
        }
        // Not SigV4 at all (SigV2, a bearer token, …): AWS lists what a
        // SigV4 header needs.
        return Err(errors::incomplete_header(
            &["Credential", "Signature", "SignedHeaders"],
            false,
            authorization,
        ));
    }
    let mut parts: HashMap<&str, &str> = HashMap::new();
    for item in rest.split(',') {
        if let Some((k, v)) = item.trim().split_once('=') {
            parts.insert(k.trim(), v.trim());
        }
    }
    let date = headers
        .get("x-amz-date")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let missing: Vec<&str> = ["Credential", "Signature", "SignedHeaders"]
        .into_iter()
        .filter(|k| parts.get(k).is_none_or(|v| v.is_empty()))
        .collect();
    if !missing.is_empty() || date.is_none() {
        return Err(errors::incomplete_header(
            &missing,
            date.is_none(),
            authorization,
        ));
    }
    Ok(Signed {
        credential: parts["Credential"].to_string(),
        signed_headers: split_signed_headers(parts["SignedHeaders"]),
        signature: parts["Signature"].to_string(),
        date: date.unwrap_or_default(),
        presigned: false,
        expires_secs: None,
    })
}

/// The presigned form: `X-Amz-Algorithm`, `X-Amz-Credential`, `X-Amz-Date`,
/// `X-Amz-Expires`, `X-Amz-SignedHeaders`, `X-Amz-Signature` parameters.
fn from_query(raw_query: &str) -> Result<Signed, SqsError> {
    let mut params: HashMap<String, String> = HashMap::new();
    for pair in raw_query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let k = String::from_utf8_lossy(&sigv4::percent_decode(k)).into_owned();
        if k.starts_with("X-Amz-") {
            let v = String::from_utf8_lossy(&sigv4::percent_decode(v)).into_owned();
            params.insert(k, v);
        }
    }
    let get = |k: &str| params.get(k).filter(|v| !v.is_empty()).cloned();
    if ["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature"]
        .iter()
        .all(|k| get(k).is_none())
    {
        return Err(errors::missing_token());
    }
    let (Some(algorithm), Some(credential), Some(signature), Some(date), Some(signed_headers)) = (
        get("X-Amz-Algorithm"),
        get("X-Amz-Credential"),
        get("X-Amz-Signature"),
        get("X-Amz-Date"),
        get("X-Amz-SignedHeaders"),
    ) else {
        return Err(errors::incomplete_query());
    };
    if algorithm != sigv4::ALGORITHM {
        return Err(errors::unsupported_algorithm(&algorithm));
    }
    let expires_secs = match params.get("X-Amz-Expires") {
        None => None,
        Some(v) => match v.parse::<u64>() {
            Ok(n) if (1..=MAX_EXPIRES_SECS).contains(&n) => Some(n),
            _ => return Err(errors::bad_expires(v)),
        },
    };
    Ok(Signed {
        credential,
        signed_headers: split_signed_headers(&signed_headers),
        signature,
        date,
        presigned: true,
        expires_secs,
    })
}

fn split_signed_headers(list: &str) -> Vec<String> {
    list.split(';')
        .filter(|h| !h.is_empty())
        .map(|h| h.trim().to_ascii_lowercase())
        .collect()
}

/// The 15-minute window around our time; a presigned URL also lives no
/// longer than its `X-Amz-Expires`.
fn check_time(signed_ms: u64, signed: &Signed, now_ms: u64) -> Result<(), SqsError> {
    let now = amz_date(now_ms);
    if signed_ms > now_ms.saturating_add(SKEW_MS) {
        return Err(errors::not_yet_current(
            &signed.date,
            &amz_date(now_ms + SKEW_MS),
            &now,
        ));
    }
    let (window_ms, window) = match signed.expires_secs {
        Some(secs) => (secs * 1000, format!("{secs} sec")),
        None => (SKEW_MS, "15 min".to_string()),
    };
    if signed_ms.saturating_add(window_ms) < now_ms {
        return Err(errors::expired(
            &signed.date,
            &amz_date(now_ms.saturating_sub(window_ms)),
            &now,
            &window,
        ));
    }
    Ok(())
}

/// `20150830T123600Z` → epoch milliseconds.
pub fn parse_amz_date(date: &str) -> Option<u64> {
    let b = date.as_bytes();
    let shape = b.len() == 16
        && b[8] == b'T'
        && b[15] == b'Z'
        && b[..8].iter().chain(&b[9..15]).all(u8::is_ascii_digit);
    if !shape {
        return None;
    }
    parse_rfc3339(&format!(
        "{}-{}-{}T{}:{}:{}Z",
        &date[0..4],
        &date[4..6],
        &date[6..8],
        &date[9..11],
        &date[11..13],
        &date[13..15]
    ))
}

/// Epoch milliseconds → `20150830T123600Z`.
pub fn amz_date(ms: u64) -> String {
    let text = format_rfc3339(ms);
    let (seconds, _) = text.split_once('.').unwrap_or((&text, ""));
    format!("{}Z", seconds.replace(['-', ':'], ""))
}

/// The server's hook, run on every SQS request once its body is read:
/// with `--auth` off, nothing; on, the signature is verified (at wall-clock
/// time) or the request is answered with AWS's error in its protocol.
pub fn check(
    verifier: Option<&Verifier>,
    method: &str,
    request: &HttpRequest,
    request_id: &str,
) -> Result<Option<Identity>, HttpResponse> {
    let Some(verifier) = verifier else {
        return Ok(None);
    };
    verifier
        .verify(method, request, SystemClock.now_ms())
        .map(Some)
        .map_err(|e| {
            tracing::debug!(%request_id, "authentication failed: {e}");
            let protocol = protocol::protocol_from_headers(&request.headers);
            protocol::encode_error(protocol, &e, request_id)
        })
}

/// Refuses a verified caller's request that names a queue of another
/// account (unless that queue's policy grants the caller's account the
/// action) or of another region than its signature's scope, as AWS
/// refuses a request signed for the wrong region. The engine supplies the
/// facts: the queues named, and what a policy grants.
pub fn authorize(engine: &Engine, ctx: &RequestContext, request: &Request) -> Result<(), SqsError> {
    for (named, key, action) in request.named_queues(ctx) {
        if key.region != ctx.region {
            return Err(errors::wrong_region(&ctx.region));
        }
        if key.account != ctx.account_id && !engine.grants(&key, &ctx.account_id, action) {
            return Err(errors::access_denied(&named));
        }
    }
    Ok(())
}

/// A decoded call from a verified caller: it acts as its key's account
/// in its scope's region, and may touch another account's queue, or name
/// another region, only as [`authorize`] allows.
pub fn admit(
    identity: Option<&Identity>,
    engine: &Engine,
    mut call: Call,
    request_id: &str,
) -> Result<Call, HttpResponse> {
    let Some(identity) = identity else {
        return Ok(call);
    };
    call.context.account_id = identity.account_id.clone();
    call.context.region = identity.region.clone();
    match authorize(engine, &call.context, &call.request) {
        Ok(()) => Ok(call),
        Err(e) => {
            tracing::debug!(%request_id, access_key = %identity.access_key, "access denied: {e}");
            Err(protocol::encode_error(call.protocol, &e, request_id))
        }
    }
}

#[cfg(test)]
mod tests;
