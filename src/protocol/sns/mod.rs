//! Amazon SNS's wire layer: the query protocol in, XML out.
//!
//! SNS shares the port and the query protocol with SQS. [`route`] picks
//! its requests out (by the SigV4 scope, else by action); [`decode`]
//! rewrites their flattened parameters into `retsu_core::sns::api`'s typed
//! request; [`encode_response`] and [`encode_error`] render the answer in
//! SNS's namespace. Like the SQS protocol module this is plain functions
//! over [`HttpRequest`](crate::protocol::HttpRequest) and [`HttpResponse`],
//! testable without a socket.

mod decode;
mod route;
mod xml;

use retsu_core::sns::api::SnsResponse;
use retsu_core::sns::error::SnsError;

use crate::protocol::{HttpResponse, REQUEST_ID_HEADER};

pub use decode::{decode, to_json};
pub use route::{invalid_action, route, signed_service};
pub use xml::{encode_error, encode_response, CONTENT_TYPE, NAMESPACE};

/// The answer to an SNS request as an HTTP response: 200 with the result,
/// or the error's own status, with the request id in the header as well
/// as the body (as SQS's responses carry it).
pub fn encode(result: &Result<SnsResponse, SnsError>, request_id: &str) -> HttpResponse {
    let (status, body) = match result {
        Ok(response) => (200, encode_response(response, request_id)),
        Err(error) => (error.status, encode_error(error, request_id)),
    };
    HttpResponse {
        status,
        content_type: CONTENT_TYPE,
        headers: vec![(REQUEST_ID_HEADER, request_id.to_string())],
        body,
    }
}

#[cfg(test)]
mod tests;
