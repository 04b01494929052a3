//! The errors of signature checks and cross-account access, worded as AWS
//! words them (texts
//! taken from real SQS responses; the code and status are in
//! [`crate::error::ErrorCode`]'s table).

use crate::error::{ErrorCode, SqsError};

pub fn missing_token() -> SqsError {
    SqsError::new(
        ErrorCode::MissingAuthenticationToken,
        "Request is missing Authentication Token",
    )
}

/// `Authorization` lacks parts: AWS names each, then echoes the header.
pub fn incomplete_header(missing: &[&str], no_date: bool, authorization: &str) -> SqsError {
    let mut message = String::new();
    for part in missing {
        message.push_str(&format!(
            "Authorization header requires '{part}' parameter. "
        ));
    }
    if no_date {
        message.push_str(
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. ",
        );
    }
    message.push_str(&format!("Authorization={authorization}"));
    SqsError::new(ErrorCode::IncompleteSignature, message)
}

pub fn incomplete_query() -> SqsError {
    SqsError::new(
        ErrorCode::IncompleteSignature,
        "AWS query-string parameters must include 'X-Amz-Algorithm', 'X-Amz-Credential', \
         'X-Amz-Signature', 'X-Amz-Date', 'X-Amz-SignedHeaders'. Re-examine the query-string parameters.",
    )
}

pub fn incomplete(message: impl Into<String>) -> SqsError {
    SqsError::new(ErrorCode::IncompleteSignature, message)
}

pub fn unsupported_algorithm(algorithm: &str) -> SqsError {
    incomplete(format!("Unsupported AWS 'algorithm': '{algorithm}'."))
}

pub fn bad_credential(credential: &str) -> SqsError {
    incomplete(format!(
        "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '{credential}'"
    ))
}

pub fn bad_date(date: &str) -> SqsError {
    incomplete(format!(
        "Date must be in ISO-8601 'basic format'. Got '{date}'. See http://en.wikipedia.org/wiki/ISO_8601"
    ))
}

pub fn bad_expires(expires: &str) -> SqsError {
    incomplete(format!(
        "X-Amz-Expires must be a number of seconds from 1 to 604800 (a week), got '{expires}'."
    ))
}

pub fn unknown_key() -> SqsError {
    SqsError::new(
        ErrorCode::InvalidClientTokenId,
        "The security token included in the request is invalid.",
    )
}

pub fn mismatch(message: impl Into<String>) -> SqsError {
    SqsError::new(ErrorCode::SignatureDoesNotMatch, message)
}

pub fn wrong_signature() -> SqsError {
    mismatch(
        "The request signature we calculated does not match the signature you provided. \
         Check your AWS Secret Access Key and signing method. Consult the service documentation for details.",
    )
}

pub fn wrong_terminator(term: &str) -> SqsError {
    mismatch(format!(
        "Credential should be scoped with a valid terminator: 'aws4_request', not '{term}'. "
    ))
}

pub fn wrong_service() -> SqsError {
    mismatch("Credential should be scoped to correct service: 'sqs'. ")
}

/// Also what a queue URL naming another region than the scope gets: the
/// request reached (what AWS would route to) that other region's endpoint.
pub fn wrong_region(region: &str) -> SqsError {
    mismatch(format!(
        "Credential should be scoped to a valid region, not '{region}'. "
    ))
}

pub fn host_not_signed() -> SqsError {
    mismatch("'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.")
}

pub fn scope_date(scope: &str, date: &str) -> SqsError {
    mismatch(format!(
        "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{scope}' != '{}', from '{date}'.",
        &date[..8]
    ))
}

pub fn content_hash() -> SqsError {
    mismatch("The provided 'x-amz-content-sha256' header does not match what was computed.")
}

/// `Signature expired: <signed> is now earlier than <limit> (<now> - <window>.)`
pub fn expired(signed: &str, limit: &str, now: &str, window: &str) -> SqsError {
    mismatch(format!(
        "Signature expired: {signed} is now earlier than {limit} ({now} - {window}.)"
    ))
}

/// `Signature not yet current: <signed> is still later than <limit> (<now> + 15 min.)`
pub fn not_yet_current(signed: &str, limit: &str, now: &str) -> SqsError {
    mismatch(format!(
        "Signature not yet current: {signed} is still later than {limit} ({now} + 15 min.)"
    ))
}

pub fn access_denied(resource: &str) -> SqsError {
    SqsError::new(
        ErrorCode::AccessDenied,
        format!("Access to the resource {resource} is denied."),
    )
}
