//! The query-protocol decoder: a request path, a GET query string and a
//! form body (separated by newlines in the input) go through parameter
//! parsing, the queue-URL path rules and the typed decoding of every
//! action — an SqsError or a request, never a panic.
#![no_main]

use http::HeaderMap;
use libfuzzer_sys::fuzz_target;
use retsu::api::Action;
use retsu::protocol::query;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |b| *b == b'\n');
    let path = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let query_string = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let body = parts.next().unwrap_or_default();
    let params = query::params(Some(&query_string), &HeaderMap::new(), body);
    let from_path = query::queue_path(&path).map(|p| format!("http://localhost:9324{p}"));
    match query::param(&params, "Action").and_then(Action::from_name) {
        Some(action) => {
            let _ = query::decode(action, &params, from_path);
        }
        None => {
            // No valid action: still exercise every action's shape rules.
            let action = Action::ALL[data.len() % Action::ALL.len()];
            let _ = query::decode(action, &params, from_path);
        }
    }
});
