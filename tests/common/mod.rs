//! Shared set-up for the integration tests: an in-process Retsu on a random
//! loopback port, driven by a manual clock, plus an `aws-sdk-sqs` client
//! and a raw HTTP client for protocol details.
//!
//! Time in SQS terms passes only through [`TestServer::advance`]; the only
//! real waiting the tests do is [`settle`], which gives a spawned request
//! time to reach the server before the clock is moved.

#![allow(dead_code)]

/// A client of the AWS SDK crate `$sdk` for `endpoint`, signing in
/// `region` with the static key `(id, secret)`, with no retries (a retry
/// would hide the first answer). One builder for every SDK the tests
/// drive; their types differ, their settings do not.
macro_rules! aws_client {
    ($sdk:ident, $endpoint:expr, $region:expr, $key:expr) => {{
        let (id, secret): (&str, &str) = $key;
        $sdk::Client::from_conf(
            $sdk::Config::builder()
                .behavior_version($sdk::config::BehaviorVersion::latest())
                .region($sdk::config::Region::new(String::from($region)))
                .credentials_provider($sdk::config::Credentials::new(
                    id, secret, None, None, "static",
                ))
                .endpoint_url($endpoint)
                .retry_config($sdk::config::retry::RetryConfig::disabled())
                .build(),
        )
    }};
}
#[allow(unused_imports)]
pub(crate) use aws_client;

mod admin;
pub mod cluster;
pub mod lambda;
pub mod pg;
pub mod process;
pub mod proxy;
mod sdk;
#[allow(unused_imports)]
pub use sdk::*;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::types::{MessageAttributeValue, QueueAttributeName};
use aws_sdk_sqs::Client;
use md5::{Digest, Md5};
use retsu::clock::{Clock, ManualClock};
use retsu::config::Config;
use retsu::server::RunningServer;

pub const ACCOUNT: &str = "000000000000";
pub const REGION: &str = "us-east-1";
pub const XMLNS: &str = "http://queue.amazonaws.com/doc/2012-11-05/";

/// A running server, its clock and clients.
pub struct TestServer {
    pub server: Server,
    pub clock: ManualClock,
    pub client: Client,
    pub endpoint: String,
    pub http: reqwest::Client,
}

/// `RETSU_TEST_CLUSTER=1` (with `RETSU_TEST_POSTGRES`): every
/// [`TestServer`] is a cluster of three nodes in this process on a fresh
/// PostgreSQL database, behind a proxy that hands each new connection to
/// the next node, so a test's requests are spread over the three.
pub fn in_cluster() -> bool {
    std::env::var("RETSU_TEST_CLUSTER").is_ok_and(|v| v == "1") && pg::admin_url().is_some()
}

/// One server, or a cluster standing in for it.
pub enum Server {
    Single(RunningServer),
    Cluster(cluster::InProcess),
}

impl Server {
    pub fn endpoint_url(&self) -> String {
        match self {
            Server::Single(s) => s.endpoint_url(),
            Server::Cluster(c) => c.endpoint_url(),
        }
    }

    pub fn local_addr(&self) -> std::net::SocketAddr {
        match self {
            Server::Single(s) => s.local_addr(),
            Server::Cluster(c) => c.local_addr(),
        }
    }

    /// The engine (in a cluster: the one of the node holding the lease).
    pub fn engine(&self) -> Arc<retsu::engine::Engine> {
        match self {
            Server::Single(s) => s.engine(),
            Server::Cluster(c) => c.engine(),
        }
    }

    pub async fn shutdown(self) -> std::io::Result<()> {
        match self {
            Server::Single(s) => s.shutdown().await,
            Server::Cluster(c) => {
                c.stop().await;
                Ok(())
            }
        }
    }
}

/// Real time for a spawned request to reach the server (and start waiting)
/// before the test moves the manual clock.
pub async fn settle() {
    tokio::time::sleep(Duration::from_millis(200)).await;
}

/// Awaits a spawned task, failing the test if it takes more than `secs`
/// seconds of real time (a long poll that never answers).
pub async fn finish<T>(handle: tokio::task::JoinHandle<T>, secs: u64) -> T {
    tokio::time::timeout(Duration::from_secs(secs), handle)
        .await
        .expect("the request did not complete in time")
        .expect("the task panicked")
}

impl TestServer {
    pub async fn start() -> TestServer {
        TestServer::start_with(Config::ephemeral()).await
    }

    pub async fn start_strict() -> TestServer {
        TestServer::start_with(Config {
            strict_timing: true,
            ..Config::ephemeral()
        })
        .await
    }

    pub async fn start_with(config: Config) -> TestServer {
        let clock = ManualClock::starting_now();
        let server = if in_cluster() {
            Server::Cluster(cluster::InProcess::start(config, Arc::new(clock.clone())).await)
        } else {
            Server::Single(
                retsu::server::start(config, Arc::new(clock.clone()))
                    .await
                    .expect("server starts"),
            )
        };
        let endpoint = server.endpoint_url();
        let client = sdk_client(&endpoint, REGION);
        TestServer {
            server,
            clock,
            client,
            endpoint,
            http: reqwest::Client::new(),
        }
    }

    /// A second SDK client (its own connection pool), optionally for
    /// another region.
    pub fn new_client(&self, region: &str) -> Client {
        sdk_client(&self.endpoint, region)
    }

    /// The manual clock's time, epoch milliseconds.
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    pub fn advance(&self, d: Duration) {
        self.clock.advance(d);
    }

    pub fn advance_secs(&self, secs: u64) {
        self.clock.advance(Duration::from_secs(secs));
    }

    pub fn advance_ms(&self, ms: u64) {
        self.clock.advance(Duration::from_millis(ms));
    }

    /// The URL Retsu hands out for `name` to a client reaching it as the
    /// SDK does (Host = the bound address).
    pub fn queue_url(&self, name: &str) -> String {
        format!("{}/{ACCOUNT}/{name}", self.endpoint)
    }

    pub async fn create_queue(&self, name: &str) -> String {
        self.create_queue_with(name, &[]).await
    }

    pub async fn create_queue_with(&self, name: &str, attributes: &[(&str, &str)]) -> String {
        create_queue_via(&self.client, name, attributes).await
    }

    /// Queue attributes by name (as strings).
    pub async fn attributes(&self, url: &str, names: &[&str]) -> HashMap<String, String> {
        let mut req = self.client.get_queue_attributes().queue_url(url);
        for n in names {
            req = req.attribute_names(QueueAttributeName::from(*n));
        }
        let out = req.send().await.expect("GetQueueAttributes");
        out.attributes()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.as_str().to_string(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub async fn attribute(&self, url: &str, name: &str) -> Option<String> {
        self.attributes(url, &[name]).await.remove(name)
    }

    /// (ApproximateNumberOfMessages, ...NotVisible, ...Delayed).
    pub async fn counts(&self, url: &str) -> (u64, u64, u64) {
        let a = self
            .attributes(
                url,
                &[
                    "ApproximateNumberOfMessages",
                    "ApproximateNumberOfMessagesNotVisible",
                    "ApproximateNumberOfMessagesDelayed",
                ],
            )
            .await;
        let n = |k: &str| -> u64 {
            a.get(k)
                .unwrap_or_else(|| panic!("{k} missing from {a:?}"))
                .parse()
                .unwrap()
        };
        (
            n("ApproximateNumberOfMessages"),
            n("ApproximateNumberOfMessagesNotVisible"),
            n("ApproximateNumberOfMessagesDelayed"),
        )
    }

    pub async fn send(&self, url: &str, body: &str) -> String {
        send_via(&self.client, url, body).await
    }

    /// A short-poll receive of up to `max` messages with every system
    /// attribute.
    pub async fn receive(&self, url: &str, max: i32) -> Vec<aws_sdk_sqs::types::Message> {
        self.client
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(max)
            .wait_time_seconds(0)
            .message_system_attribute_names(aws_sdk_sqs::types::MessageSystemAttributeName::All)
            .message_attribute_names("All")
            .send()
            .await
            .expect("ReceiveMessage")
            .messages
            .unwrap_or_default()
    }

    /// Receives exactly one message (short poll) and returns it.
    pub async fn receive_one(&self, url: &str) -> aws_sdk_sqs::types::Message {
        let mut got = self.receive(url, 10).await;
        assert_eq!(got.len(), 1, "expected exactly one message, got {got:?}");
        got.remove(0)
    }

    // ------------------------------------------------------------ raw HTTP

    /// Form-encoded POST (query protocol) to `path`.
    pub async fn form_post(&self, path: &str, params: &[(&str, &str)]) -> Raw {
        let resp = self
            .http
            .post(format!("{}{path}", self.endpoint))
            .form(params)
            .send()
            .await
            .expect("HTTP POST");
        Raw::read(resp).await
    }

    /// GET `path` with `params` as the query string.
    pub async fn get(&self, path: &str, params: &[(&str, &str)]) -> Raw {
        let resp = self
            .http
            .get(format!("{}{path}", self.endpoint))
            .query(params)
            .send()
            .await
            .expect("HTTP GET");
        Raw::read(resp).await
    }

    /// An AWS JSON 1.0 request for `AmazonSQS.<action>`.
    pub async fn json_post(&self, action: &str, body: &str) -> Raw {
        self.json_post_with(action, body, &[]).await
    }

    pub async fn json_post_with(&self, action: &str, body: &str, headers: &[(&str, &str)]) -> Raw {
        let mut req = self
            .http
            .post(format!("{}/", self.endpoint))
            .header("content-type", "application/x-amz-json-1.0")
            .header("x-amz-target", format!("AmazonSQS.{action}"))
            .body(body.to_string());
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        Raw::read(req.send().await.expect("HTTP POST")).await
    }

    /// Any request, built by the caller from the endpoint.
    pub async fn raw(&self, req: reqwest::RequestBuilder) -> Raw {
        Raw::read(req.send().await.expect("HTTP request")).await
    }
}

/// An SDK client for `endpoint` in `region`, with the static test
/// credentials and no retries (a retry would hide the first answer).
pub fn sdk_client(endpoint: &str, region: &str) -> Client {
    sdk_client_as(endpoint, region, ("test", "test"))
}

/// An `aws-sdk-sns` client for `endpoint` (us-east-1, test credentials,
/// no retries).
pub fn sns_client(endpoint: &str) -> aws_sdk_sns::Client {
    aws_client!(aws_sdk_sns, endpoint, REGION, ("test", "test"))
}

/// The ARN of the queue `name` in the default region and account.
pub fn queue_arn(name: &str) -> String {
    format!("arn:aws:sqs:{REGION}:{ACCOUNT}:{name}")
}

/// [`sdk_client`] signing with `key` (access key id, secret).
pub fn sdk_client_as(endpoint: &str, region: &str, key: (&str, &str)) -> Client {
    aws_client!(aws_sdk_sqs, endpoint, region, key)
}

/// A raw HTTP response, read in full.
#[derive(Debug)]
pub struct Raw {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Raw {
    async fn read(resp: reqwest::Response) -> Raw {
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp.text().await.expect("response body");
        Raw {
            status,
            headers,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The `x-amzn-RequestId` header, checked to be a UUID-shaped id.
    pub fn request_id(&self) -> String {
        let id = self
            .header("x-amzn-requestid")
            .unwrap_or_else(|| panic!("no x-amzn-RequestId header in {self:?}"))
            .to_string();
        assert!(is_uuid(&id), "request id {id:?} is not a UUID");
        id
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }

    /// The body with whitespace between tags removed.
    pub fn compact_xml(&self) -> String {
        compact_xml(&self.body)
    }
}

/// `8-4-4-4-12` lowercase-or-uppercase hex.
pub fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(p, n)| p.len() == n && p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Removes whitespace-only text between tags (pretty-printing).
pub fn compact_xml(xml: &str) -> String {
    let mut out = String::with_capacity(xml.len());
    let mut pending = String::new();
    let mut after_tag = false;
    for c in xml.chars() {
        if after_tag && c.is_whitespace() {
            pending.push(c);
            continue;
        }
        if c == '<' {
            pending.clear();
        } else {
            out.push_str(&pending);
            pending.clear();
        }
        after_tag = c == '>';
        out.push(c);
    }
    out.trim().to_string()
}

/// Text of every `<tag>…</tag>` in document order (no nesting of the same
/// tag is assumed), still XML-escaped.
pub fn xml_all(xml: &str, tag: &str) -> Vec<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let end = after
            .find(&close)
            .unwrap_or_else(|| panic!("unclosed <{tag}> in {xml}"));
        out.push(after[..end].to_string());
        rest = &after[end + close.len()..];
    }
    out
}

/// Text of the one `<tag>…</tag>`, unescaped.
pub fn xml_text(xml: &str, tag: &str) -> String {
    let all = xml_all(xml, tag);
    assert_eq!(all.len(), 1, "expected exactly one <{tag}> in {xml}");
    xml_unescape(&all[0])
}

pub fn xml_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#xD;", "\r")
        .replace("&#13;", "\r")
        .replace("&amp;", "&")
}

// ------------------------------------------------------------------ MD5

pub fn md5_hex(bytes: &[u8]) -> String {
    Md5::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The MD5OfMessageAttributes algorithm of spec §4.3, written here
/// independently of the server's implementation.
pub fn md5_of_attributes(attributes: &HashMap<String, MessageAttributeValue>) -> String {
    fn put(buf: &mut Vec<u8>, bytes: &[u8]) {
        buf.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        buf.extend_from_slice(bytes);
    }
    let mut names: Vec<&String> = attributes.keys().collect();
    names.sort();
    let mut buf = Vec::new();
    for name in names {
        let v = &attributes[name];
        put(&mut buf, name.as_bytes());
        put(&mut buf, v.data_type().as_bytes());
        if let Some(s) = v.string_value() {
            buf.push(1);
            put(&mut buf, s.as_bytes());
        } else if let Some(b) = v.binary_value() {
            buf.push(2);
            put(&mut buf, b.as_ref());
        }
    }
    md5_hex(&buf)
}

pub fn string_attr(value: &str) -> MessageAttributeValue {
    typed_attr("String", value)
}

pub fn typed_attr(data_type: &str, value: &str) -> MessageAttributeValue {
    MessageAttributeValue::builder()
        .data_type(data_type)
        .string_value(value)
        .build()
        .unwrap()
}

pub fn binary_attr(data_type: &str, value: &[u8]) -> MessageAttributeValue {
    MessageAttributeValue::builder()
        .data_type(data_type)
        .binary_value(aws_sdk_sqs::primitives::Blob::new(value.to_vec()))
        .build()
        .unwrap()
}

/// An SDK call's failure: the typed service error and the HTTP status.
pub struct Failure<E> {
    pub err: E,
    pub status: u16,
}

/// Unwraps an SDK result that must be a service error, panicking with the
/// full value when the call succeeded or failed without a response.
pub fn failure<T: std::fmt::Debug, E: std::fmt::Debug>(
    result: Result<T, aws_sdk_sqs::error::SdkError<E, aws_sdk_sqs::config::http::HttpResponse>>,
) -> Failure<E> {
    match result {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(aws_sdk_sqs::error::SdkError::ServiceError(e)) => {
            let status = e.raw().status().as_u16();
            Failure {
                err: e.into_err(),
                status,
            }
        }
        Err(other) => panic!("expected a service error, got {other:?}"),
    }
}

/// The typed service error of a call that must fail.
pub fn service_error<T: std::fmt::Debug, E: std::fmt::Debug>(
    result: Result<T, aws_sdk_sqs::error::SdkError<E, aws_sdk_sqs::config::http::HttpResponse>>,
) -> E {
    failure(result).err
}
