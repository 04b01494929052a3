//! The two SQS clients the benchmark drives an endpoint with.
//!
//! - `raw`: one hyper HTTP/1.1 connection per worker, kept alive, sending
//!   AWS JSON 1.0 (`X-Amz-Target: AmazonSQS.<Action>`) and parsing only
//!   what it needs; sends reuse a request body serialized once (`Template`),
//!   so the client's own CPU per call stays small and the floor it measures
//!   stays high. What the server can do.
//! - `sdk`: the official `aws-sdk-sqs` client (one shared client and its
//!   connection pool, retries off so that errors surface). What users feel.
//!
//! The raw client can also speak the query protocol (form posts, XML
//! answers; `--protocol query`), for servers that serve nothing else (and
//! so answer no current SDK): a form is built per request, so that
//! client's own cost is higher than the JSON one's. Against an
//! `--endpoint` the raw client also names SQS in an (unsigned)
//! `Authorization` header's credential scope: servers that emulate many
//! services on one port, such as moto, tell them apart by it.

use std::net::SocketAddr;
use std::time::Duration;

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::error::DisplayErrorContext;
use aws_sdk_sqs::types::{
    DeleteMessageBatchRequestEntry, QueueAttributeName, SendMessageBatchRequestEntry,
};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::net::TcpStream;

use crate::BoxResult;

/// Longest any single request may take, on top of its long-poll wait.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum ClientKind {
    Raw,
    Sdk,
}

impl ClientKind {
    pub fn name(self) -> &'static str {
        match self {
            ClientKind::Raw => "raw",
            ClientKind::Sdk => "sdk",
        }
    }
}

/// Where requests go.
#[derive(Clone)]
pub struct Endpoint {
    pub addr: SocketAddr,
    sdk: aws_sdk_sqs::Client,
    /// The raw client speaks the query protocol rather than JSON.
    query: bool,
    /// The raw client sends [`SCOPE_ONLY`] as its Authorization.
    scope: bool,
}

/// An Authorization header with SQS's credential scope and no valid
/// signature: enough for a server that routes by service and checks no
/// signature (Retsu without `--auth`, the emulators).
const SCOPE_ONLY: &str = "AWS4-HMAC-SHA256 \
    Credential=bench/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00";

impl Endpoint {
    pub fn new(addr: SocketAddr) -> Endpoint {
        let url = format!("http://{addr}");
        let config = aws_sdk_sqs::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .endpoint_url(&url)
            .credentials_provider(Credentials::new(
                "bench",
                "bench",
                None,
                None,
                "retsu-bench",
            ))
            .http_client(aws_smithy_http_client::Builder::new().build_http())
            .retry_config(aws_sdk_sqs::config::retry::RetryConfig::disabled())
            .build();
        Endpoint {
            addr,
            sdk: aws_sdk_sqs::Client::from_conf(config),
            query: false,
            scope: false,
        }
    }

    /// Raw clients of this endpoint send SQS's credential scope when `scope`.
    pub fn with_credential_scope(mut self, scope: bool) -> Endpoint {
        self.scope = scope;
        self
    }

    /// Raw clients of this endpoint speak the query protocol when `query`.
    pub fn with_query(mut self, query: bool) -> Endpoint {
        self.query = query;
        self
    }

    /// A client for one worker: a new connection (raw) or a handle on the
    /// shared SDK client.
    pub async fn client(&self, kind: ClientKind) -> BoxResult<Client> {
        Ok(match kind {
            ClientKind::Raw => {
                let mut c = RawConn::connect(self.addr).await?;
                c.query = self.query;
                c.scope = self.scope;
                Client::Raw(c)
            }
            ClientKind::Sdk => Client::Sdk(self.sdk.clone()),
        })
    }
}

/// One entry of a SendMessageBatch (also used for single sends).
#[derive(Debug, Clone)]
pub struct Entry {
    pub body: String,
    pub group: Option<String>,
    pub dedup: Option<String>,
}

impl Entry {
    /// No group or dedup id, and a body that needs no JSON escaping: the
    /// raw client can send it through a reused template.
    fn is_plain(&self) -> bool {
        self.group.is_none()
            && self.dedup.is_none()
            && self
                .body
                .bytes()
                .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// A SendMessage(Batch) request body serialized once and reused: a call
/// only copies its message bodies into their places, so the raw client
/// spends a memcpy per request instead of building and serializing JSON.
/// Valid while the queue, the number of entries and each body's length
/// stay the same (the benchmark's bodies are fixed-length).
struct Template {
    url: String,
    batch: bool,
    lengths: Vec<usize>,
    bytes: Vec<u8>,
    /// Where each body starts in `bytes`.
    slots: Vec<usize>,
}

impl Template {
    fn new(url: &str, entries: &[Entry], batch: bool) -> Template {
        let mut bytes = b"{\"QueueUrl\":".to_vec();
        serde_json::to_writer(&mut bytes, url).expect("a string serializes");
        let mut slots = Vec::with_capacity(entries.len());
        if batch {
            bytes.extend_from_slice(b",\"Entries\":[");
        }
        for (i, e) in entries.iter().enumerate() {
            if batch {
                if i > 0 {
                    bytes.push(b',');
                }
                bytes.extend_from_slice(format!("{{\"Id\":\"{i}\",").as_bytes());
            } else {
                bytes.push(b',');
            }
            bytes.extend_from_slice(b"\"MessageBody\":\"");
            slots.push(bytes.len());
            bytes.extend_from_slice(e.body.as_bytes());
            bytes.push(b'"');
            if batch {
                bytes.push(b'}');
            }
        }
        bytes.extend_from_slice(if batch { b"]}" } else { b"}" });
        Template {
            url: url.to_string(),
            batch,
            lengths: entries.iter().map(|e| e.body.len()).collect(),
            bytes,
            slots,
        }
    }

    fn fits(&self, url: &str, entries: &[Entry], batch: bool) -> bool {
        self.batch == batch
            && self.url == url
            && self.lengths.len() == entries.len()
            && self
                .lengths
                .iter()
                .zip(entries)
                .all(|(l, e)| *l == e.body.len())
    }

    fn fill(&mut self, entries: &[Entry]) -> Bytes {
        for (slot, e) in self.slots.iter().zip(entries) {
            self.bytes[*slot..*slot + e.body.len()].copy_from_slice(e.body.as_bytes());
        }
        Bytes::copy_from_slice(&self.bytes)
    }
}

/// A received message.
#[derive(Debug, Clone)]
pub struct Msg {
    pub handle: String,
    pub body: String,
}

pub enum Client {
    Raw(RawConn),
    Sdk(aws_sdk_sqs::Client),
}

fn sdk_err<E: std::error::Error>(e: E) -> crate::BoxError {
    format!("{}", DisplayErrorContext(e)).into()
}

impl Client {
    /// A query-protocol form post (raw client only: the SNS scenarios).
    pub async fn form(&mut self, params: &[(&str, &str)], what: &str) -> BoxResult<Bytes> {
        let Client::Raw(c) = self else {
            return Err("the SNS scenarios run with the raw client only".into());
        };
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params)
            .finish();
        c.form(body, what).await
    }

    pub async fn create_queue(&mut self, name: &str, fifo: bool) -> BoxResult<String> {
        match self {
            Client::Raw(c) if c.query => {
                let mut params = vec![("QueueName", name)];
                if fifo {
                    params.extend([
                        ("Attribute.1.Name", "FifoQueue"),
                        ("Attribute.1.Value", "true"),
                    ]);
                }
                let out = c.query_call("CreateQueue", &params).await?;
                xml_values(&out, "QueueUrl")
                    .pop()
                    .ok_or_else(|| "CreateQueue returned no QueueUrl".into())
            }
            Client::Raw(c) => {
                let mut req = json!({ "QueueName": name });
                if fifo {
                    req["Attributes"] = json!({ "FifoQueue": "true" });
                }
                let out: QueueUrlOut = c.call("CreateQueue", &req, 0).await?;
                Ok(out.queue_url)
            }
            Client::Sdk(c) => {
                let mut call = c.create_queue().queue_name(name);
                if fifo {
                    call = call.attributes(QueueAttributeName::FifoQueue, "true");
                }
                let out = call.send().await.map_err(sdk_err)?;
                Ok(out.queue_url.ok_or("CreateQueue returned no QueueUrl")?)
            }
        }
    }

    pub async fn delete_queue(&mut self, url: &str) -> BoxResult<()> {
        match self {
            Client::Raw(c) if c.query => {
                c.query_call("DeleteQueue", &[("QueueUrl", url)]).await?;
            }
            Client::Raw(c) => {
                let _: Value = c
                    .call("DeleteQueue", &json!({ "QueueUrl": url }), 0)
                    .await?;
            }
            Client::Sdk(c) => {
                c.delete_queue()
                    .queue_url(url)
                    .send()
                    .await
                    .map_err(sdk_err)?;
            }
        }
        Ok(())
    }

    pub async fn list_queues(&mut self) -> BoxResult<()> {
        match self {
            Client::Raw(c) if c.query => {
                c.query_call("ListQueues", &[]).await?;
            }
            Client::Raw(c) => {
                let _: Value = c.call("ListQueues", &json!({}), 0).await?;
            }
            Client::Sdk(c) => {
                c.list_queues().send().await.map_err(sdk_err)?;
            }
        }
        Ok(())
    }

    pub async fn send(&mut self, url: &str, entry: &Entry) -> BoxResult<()> {
        match self {
            Client::Raw(c) if c.query => {
                let mut params = vec![("QueueUrl", url), ("MessageBody", entry.body.as_str())];
                if let Some(g) = &entry.group {
                    params.push(("MessageGroupId", g));
                }
                if let Some(d) = &entry.dedup {
                    params.push(("MessageDeduplicationId", d));
                }
                let out = c.query_call("SendMessage", &params).await?;
                if !contains(&out, b"<MessageId>") {
                    return Err(format!(
                        "SendMessage returned no MessageId: {}",
                        String::from_utf8_lossy(&out[..out.len().min(500)])
                    )
                    .into());
                }
            }
            Client::Raw(c) if entry.is_plain() => {
                let body = c.templated(url, std::slice::from_ref(entry), false);
                let out = c.call_bytes("AmazonSQS.SendMessage", body).await?;
                // Not `"MessageId":"`: some servers put a space after the colon.
                if !contains(&out, b"\"MessageId\"") {
                    return Err(format!(
                        "SendMessage returned no MessageId: {}",
                        String::from_utf8_lossy(&out[..out.len().min(500)])
                    )
                    .into());
                }
            }
            Client::Raw(c) => {
                let mut req = json!({ "QueueUrl": url, "MessageBody": entry.body });
                if let Some(g) = &entry.group {
                    req["MessageGroupId"] = json!(g);
                }
                if let Some(d) = &entry.dedup {
                    req["MessageDeduplicationId"] = json!(d);
                }
                let out: SendOut = c.call("SendMessage", &req, 0).await?;
                if out.message_id.is_empty() {
                    return Err("SendMessage returned an empty MessageId".into());
                }
            }
            Client::Sdk(c) => {
                let out = c
                    .send_message()
                    .queue_url(url)
                    .message_body(&entry.body)
                    .set_message_group_id(entry.group.clone())
                    .set_message_deduplication_id(entry.dedup.clone())
                    .send()
                    .await
                    .map_err(sdk_err)?;
                if out.message_id.is_none() {
                    return Err("SendMessage returned no MessageId".into());
                }
            }
        }
        Ok(())
    }

    /// Sends up to 10 entries (ids "0".."9"); any failed entry is an error.
    pub async fn send_batch(&mut self, url: &str, entries: &[Entry]) -> BoxResult<()> {
        match self {
            Client::Raw(c) if c.query => {
                let mut params: Vec<(String, String)> = vec![("QueueUrl".into(), url.into())];
                for (i, e) in entries.iter().enumerate() {
                    let k = format!("SendMessageBatchRequestEntry.{}", i + 1);
                    params.push((format!("{k}.Id"), i.to_string()));
                    params.push((format!("{k}.MessageBody"), e.body.clone()));
                    if let Some(g) = &e.group {
                        params.push((format!("{k}.MessageGroupId"), g.clone()));
                    }
                    if let Some(d) = &e.dedup {
                        params.push((format!("{k}.MessageDeduplicationId"), d.clone()));
                    }
                }
                let out = c.query_call_owned("SendMessageBatch", &params).await?;
                query_batch_check(&out, "SendMessageBatch", entries.len())
            }
            Client::Raw(c) if entries.iter().all(Entry::is_plain) => {
                let body = c.templated(url, entries, true);
                let out = c.call_bytes("AmazonSQS.SendMessageBatch", body).await?;
                if contains(&out, b"\"Failed\":[{") {
                    let out: BatchOut = serde_json::from_slice(&out)?;
                    return out.check("SendMessageBatch");
                }
                Ok(())
            }
            Client::Raw(c) => {
                let list: Vec<Value> = entries
                    .iter()
                    .enumerate()
                    .map(|(i, e)| {
                        let mut v = json!({ "Id": i.to_string(), "MessageBody": e.body });
                        if let Some(g) = &e.group {
                            v["MessageGroupId"] = json!(g);
                        }
                        if let Some(d) = &e.dedup {
                            v["MessageDeduplicationId"] = json!(d);
                        }
                        v
                    })
                    .collect();
                let req = json!({ "QueueUrl": url, "Entries": list });
                let out: BatchOut = c.call("SendMessageBatch", &req, 0).await?;
                out.check("SendMessageBatch")
            }
            Client::Sdk(c) => {
                let mut call = c.send_message_batch().queue_url(url);
                for (i, e) in entries.iter().enumerate() {
                    call = call.entries(
                        SendMessageBatchRequestEntry::builder()
                            .id(i.to_string())
                            .message_body(&e.body)
                            .set_message_group_id(e.group.clone())
                            .set_message_deduplication_id(e.dedup.clone())
                            .build()
                            .map_err(sdk_err)?,
                    );
                }
                let out = call.send().await.map_err(sdk_err)?;
                if let Some(f) = out.failed.first() {
                    return Err(format!("SendMessageBatch entry failed: {f:?}").into());
                }
                Ok(())
            }
        }
    }

    pub async fn receive(&mut self, url: &str, max: u32, wait_s: u32) -> BoxResult<Vec<Msg>> {
        match self {
            Client::Raw(c) if c.query => {
                let (max, wait) = (max.to_string(), wait_s.to_string());
                let params = [
                    ("QueueUrl", url),
                    ("MaxNumberOfMessages", max.as_str()),
                    ("WaitTimeSeconds", wait.as_str()),
                ];
                let limit = REQUEST_TIMEOUT + Duration::from_secs(wait_s.into());
                let out = c.query_limit("ReceiveMessage", &params, limit).await?;
                let text = String::from_utf8_lossy(&out);
                text.split("<Message>")
                    .skip(1)
                    .map(|m| {
                        let one = |tag: &str| -> BoxResult<String> {
                            xml_values(m.as_bytes(), tag)
                                .into_iter()
                                .next()
                                .ok_or_else(|| format!("message without {tag}").into())
                        };
                        Ok(Msg {
                            handle: one("ReceiptHandle")?,
                            body: one("Body")?,
                        })
                    })
                    .collect()
            }
            Client::Raw(c) => {
                let req = json!({
                    "QueueUrl": url,
                    "MaxNumberOfMessages": max,
                    "WaitTimeSeconds": wait_s,
                });
                let out: ReceiveOut = c.call("ReceiveMessage", &req, wait_s).await?;
                Ok(out
                    .messages
                    .into_iter()
                    .map(|m| Msg {
                        handle: m.receipt_handle,
                        body: m.body,
                    })
                    .collect())
            }
            Client::Sdk(c) => {
                let out = c
                    .receive_message()
                    .queue_url(url)
                    .max_number_of_messages(max as i32)
                    .wait_time_seconds(wait_s as i32)
                    .send()
                    .await
                    .map_err(sdk_err)?;
                out.messages
                    .unwrap_or_default()
                    .into_iter()
                    .map(|m| {
                        Ok(Msg {
                            handle: m.receipt_handle.ok_or("message without ReceiptHandle")?,
                            body: m.body.ok_or("message without Body")?,
                        })
                    })
                    .collect()
            }
        }
    }

    /// Deletes up to 10 messages by receipt handle; any failure is an error.
    pub async fn delete_batch(&mut self, url: &str, msgs: &[Msg]) -> BoxResult<()> {
        if msgs.is_empty() {
            return Ok(());
        }
        match self {
            Client::Raw(c) if c.query => {
                let mut params: Vec<(String, String)> = vec![("QueueUrl".into(), url.into())];
                for (i, m) in msgs.iter().enumerate() {
                    let k = format!("DeleteMessageBatchRequestEntry.{}", i + 1);
                    params.push((format!("{k}.Id"), i.to_string()));
                    params.push((format!("{k}.ReceiptHandle"), m.handle.clone()));
                }
                let out = c.query_call_owned("DeleteMessageBatch", &params).await?;
                query_batch_check(&out, "DeleteMessageBatch", msgs.len())
            }
            Client::Raw(c) => {
                let list: Vec<Value> = msgs
                    .iter()
                    .enumerate()
                    .map(|(i, m)| json!({ "Id": i.to_string(), "ReceiptHandle": m.handle }))
                    .collect();
                let req = json!({ "QueueUrl": url, "Entries": list });
                let out: BatchOut = c.call("DeleteMessageBatch", &req, 0).await?;
                out.check("DeleteMessageBatch")
            }
            Client::Sdk(c) => {
                let mut call = c.delete_message_batch().queue_url(url);
                for (i, m) in msgs.iter().enumerate() {
                    call = call.entries(
                        DeleteMessageBatchRequestEntry::builder()
                            .id(i.to_string())
                            .receipt_handle(&m.handle)
                            .build()
                            .map_err(sdk_err)?,
                    );
                }
                let out = call.send().await.map_err(sdk_err)?;
                if let Some(f) = out.failed.first() {
                    return Err(format!("DeleteMessageBatch entry failed: {f:?}").into());
                }
                Ok(())
            }
        }
    }

    /// ApproximateNumberOfMessages + ...NotVisible + ...Delayed.
    pub async fn stored_messages(&mut self, url: &str) -> BoxResult<u64> {
        let names = [
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ];
        let attrs: Vec<(String, String)> = match self {
            Client::Raw(c) if c.query => {
                let mut params = vec![("QueueUrl", url)];
                let keys: Vec<String> = (1..=names.len())
                    .map(|i| format!("AttributeName.{i}"))
                    .collect();
                params.extend(keys.iter().map(String::as_str).zip(names));
                let out = c.query_call("GetQueueAttributes", &params).await?;
                String::from_utf8_lossy(&out)
                    .split("<Attribute>")
                    .skip(1)
                    .filter_map(|a| {
                        let name = xml_values(a.as_bytes(), "Name").into_iter().next()?;
                        let value = xml_values(a.as_bytes(), "Value").into_iter().next()?;
                        Some((name, value))
                    })
                    .collect()
            }
            Client::Raw(c) => {
                let req = json!({ "QueueUrl": url, "AttributeNames": names });
                let out: AttributesOut = c.call("GetQueueAttributes", &req, 0).await?;
                out.attributes.into_iter().collect()
            }
            Client::Sdk(c) => {
                let mut call = c.get_queue_attributes().queue_url(url);
                for n in names {
                    call = call.attribute_names(QueueAttributeName::from(n));
                }
                let out = call.send().await.map_err(sdk_err)?;
                out.attributes
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (k.as_str().to_string(), v))
                    .collect()
            }
        };
        let mut total = 0;
        for (k, v) in attrs {
            if names.contains(&k.as_str()) {
                total += v
                    .parse::<u64>()
                    .map_err(|e| format!("attribute {k}={v:?}: {e}"))?;
            }
        }
        Ok(total)
    }
}

/// One kept-alive HTTP/1.1 connection.
pub struct RawConn {
    addr: SocketAddr,
    host: HeaderValue,
    sender: SendRequest<Full<Bytes>>,
    templates: Vec<Template>,
    /// Speak the query protocol (see the module docs).
    pub query: bool,
    /// Send [`SCOPE_ONLY`] as the Authorization header.
    pub scope: bool,
}

impl RawConn {
    pub async fn connect(addr: SocketAddr) -> BoxResult<RawConn> {
        let stream = tokio::time::timeout(REQUEST_TIMEOUT, TcpStream::connect(addr))
            .await
            .map_err(|_| format!("connect to {addr}: timed out"))?
            .map_err(|e| format!("connect to {addr}: {e}"))?;
        stream.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(RawConn {
            addr,
            host: HeaderValue::from_str(&addr.to_string())?,
            sender,
            templates: Vec::new(),
            query: false,
            scope: false,
        })
    }

    /// The request body for these plain entries, from a reused template.
    fn templated(&mut self, url: &str, entries: &[Entry], batch: bool) -> Bytes {
        let i = match self
            .templates
            .iter()
            .position(|t| t.fits(url, entries, batch))
        {
            Some(i) => i,
            None => {
                self.templates.push(Template::new(url, entries, batch));
                self.templates.len() - 1
            }
        };
        self.templates[i].fill(entries)
    }

    /// Posts a prepared body; returns the 200 response's bytes.
    async fn call_bytes(&mut self, target: &'static str, body: Bytes) -> BoxResult<Bytes> {
        self.reconnect_if_closed().await?;
        let mut req = Request::new(Full::new(body));
        *req.method_mut() = hyper::Method::POST;
        *req.uri_mut() = hyper::Uri::from_static("/");
        let headers = req.headers_mut();
        headers.insert(HOST, self.host.clone());
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-amz-json-1.0"),
        );
        headers.insert("x-amz-target", HeaderValue::from_static(target));
        self.exchange(req, REQUEST_TIMEOUT, target).await
    }

    /// Sends `req` and reads the whole response within `limit`; the bytes
    /// of a 2xx answer, else an error naming `what`.
    async fn exchange(
        &mut self,
        req: Request<Full<Bytes>>,
        limit: Duration,
        what: &str,
    ) -> BoxResult<Bytes> {
        let mut req = req;
        if self.scope {
            req.headers_mut()
                .insert(AUTHORIZATION, HeaderValue::from_static(SCOPE_ONLY));
        }
        let exchange = async {
            // A server that closes the connection after every answer
            // (Werkzeug's, under moto) can close it while this request
            // waits: unsent, it goes once more on a new connection.
            let mut req = req;
            let mut retried = false;
            let resp = loop {
                if self.sender.ready().await.is_ok() {
                    match self.sender.try_send_request(req).await {
                        Ok(resp) => break resp,
                        Err(mut e) => match e.take_message() {
                            Some(unsent) if !retried => req = unsent,
                            _ => return Err(e.into_error().into()),
                        },
                    }
                } else if retried {
                    return Err("the server closed the connection".into());
                }
                retried = true;
                self.reopen().await?;
            };
            let status = resp.status();
            let bytes = resp.into_body().collect().await?.to_bytes();
            Ok::<_, crate::BoxError>((status, bytes))
        };
        let (status, bytes) = tokio::time::timeout(limit, exchange)
            .await
            .map_err(|_| format!("{what}: no response within {limit:?}"))??;
        if !status.is_success() {
            return Err(format!(
                "{what}: HTTP {status}: {}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(500)])
            )
            .into());
        }
        Ok(bytes)
    }

    /// The server closed the kept-alive connection: open another.
    async fn reconnect_if_closed(&mut self) -> BoxResult<()> {
        if self.sender.is_closed() {
            self.reopen().await?;
        }
        Ok(())
    }

    /// A new connection in place of this one, keeping its settings.
    async fn reopen(&mut self) -> BoxResult<()> {
        let templates = std::mem::take(&mut self.templates);
        let (query, scope) = (self.query, self.scope);
        *self = RawConn::connect(self.addr).await?;
        self.templates = templates;
        (self.query, self.scope) = (query, scope);
        Ok(())
    }

    /// One SQS action over the query protocol; the 200 response's bytes.
    async fn query_call(&mut self, action: &str, params: &[(&str, &str)]) -> BoxResult<Bytes> {
        self.query_limit(action, params, REQUEST_TIMEOUT).await
    }

    async fn query_call_owned(
        &mut self,
        action: &str,
        params: &[(String, String)],
    ) -> BoxResult<Bytes> {
        let borrowed: Vec<(&str, &str)> = params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        self.query_call(action, &borrowed).await
    }

    async fn query_limit(
        &mut self,
        action: &str,
        params: &[(&str, &str)],
        limit: Duration,
    ) -> BoxResult<Bytes> {
        self.reconnect_if_closed().await?;
        let body = form_urlencoded::Serializer::new(String::new())
            .append_pair("Action", action)
            .append_pair("Version", "2012-11-05")
            .extend_pairs(params)
            .finish();
        let req = Request::post("/")
            .header(HOST, self.host.clone())
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Full::new(Bytes::from(body)))?;
        self.exchange(req, limit, action).await
    }

    /// A JSON request to any path (Lambda's REST-JSON API, the admin API,
    /// an Invoke endpoint); the 2xx response's bytes. `Value::Null`: no body.
    pub async fn rest(
        &mut self,
        method: hyper::Method,
        path: &str,
        body: Value,
        what: &str,
    ) -> BoxResult<Bytes> {
        self.reconnect_if_closed().await?;
        let body = if body.is_null() {
            Bytes::new()
        } else {
            Bytes::from(serde_json::to_vec(&body)?)
        };
        let req = Request::builder()
            .method(method)
            .uri(path)
            .header(HOST, self.host.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(body))?;
        self.exchange(req, REQUEST_TIMEOUT, what).await
    }

    /// Posts one query-protocol form (SNS's only protocol); the 200
    /// response's bytes.
    pub async fn form(&mut self, body: String, what: &str) -> BoxResult<Bytes> {
        self.reconnect_if_closed().await?;
        let req = Request::post("/")
            .header(HOST, self.host.clone())
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Full::new(Bytes::from(body)))?;
        self.exchange(req, REQUEST_TIMEOUT, what).await
    }

    /// Posts one JSON request and decodes the 200 response.
    pub async fn call<T: for<'de> Deserialize<'de>>(
        &mut self,
        action: &str,
        request: &Value,
        wait_s: u32,
    ) -> BoxResult<T> {
        self.reconnect_if_closed().await?;
        let body = serde_json::to_vec(request)?;
        let req = Request::post("/")
            .header(HOST, self.host.clone())
            .header(CONTENT_TYPE, "application/x-amz-json-1.0")
            .header("x-amz-target", format!("AmazonSQS.{action}"))
            .body(Full::new(Bytes::from(body)))?;
        let limit = REQUEST_TIMEOUT + Duration::from_secs(wait_s.into());
        let mut bytes = self.exchange(req, limit, action).await?;
        if bytes.is_empty() {
            // An action with no output may answer an empty body (ElasticMQ's
            // DeleteQueue), which reads as the empty object.
            bytes = Bytes::from_static(b"{}");
        }
        serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "{action}: undecodable response ({e}): {}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(500)])
            )
            .into()
        })
    }
}

/// The text of every `<tag>…</tag>` in an XML answer, unescaped. The
/// benchmark's answers are flat where it looks (no nested element of the
/// same name), so a scan is enough.
fn xml_values(xml: &[u8], tag: &str) -> Vec<String> {
    let text = String::from_utf8_lossy(xml);
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    text.split(open.as_str())
        .skip(1)
        .filter_map(|rest| rest.split(close.as_str()).next())
        .map(xml_unescape)
        .collect()
}

fn xml_unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let Some(end) = tail.find(';') else {
            out.push_str(tail);
            return out;
        };
        let entity = &tail[1..end];
        let named = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match named {
            Some(c) => out.push(c),
            None => out.push_str(&tail[..=end]),
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

/// A query-protocol batch answer: one success per entry, no failure.
fn query_batch_check(out: &[u8], action: &str, entries: usize) -> BoxResult<()> {
    let text = String::from_utf8_lossy(out);
    if let Some(failed) = text.split("<BatchResultErrorEntry>").nth(1) {
        return Err(format!("{action} entry failed: {:.300}", failed).into());
    }
    let ok = text.matches("ResultEntry>").count() / 2;
    if ok != entries {
        return Err(format!("{action}: {ok} of {entries} entries answered: {text:.300}").into());
    }
    Ok(())
}

#[derive(Deserialize)]
struct QueueUrlOut {
    #[serde(rename = "QueueUrl")]
    queue_url: String,
}

#[derive(Deserialize)]
struct SendOut {
    #[serde(rename = "MessageId")]
    message_id: String,
}

#[derive(Deserialize)]
struct BatchOut {
    #[serde(rename = "Failed", default)]
    failed: Vec<Value>,
}

impl BatchOut {
    fn check(&self, action: &str) -> BoxResult<()> {
        match self.failed.first() {
            Some(f) => Err(format!("{action} entry failed: {f}").into()),
            None => Ok(()),
        }
    }
}

#[derive(Deserialize)]
struct ReceiveOut {
    #[serde(rename = "Messages", default)]
    messages: Vec<ReceivedOut>,
}

#[derive(Deserialize)]
struct ReceivedOut {
    #[serde(rename = "ReceiptHandle")]
    receipt_handle: String,
    #[serde(rename = "Body")]
    body: String,
}

#[derive(Deserialize)]
struct AttributesOut {
    #[serde(rename = "Attributes", default)]
    attributes: std::collections::HashMap<String, String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(body: &str) -> Entry {
        Entry {
            body: body.into(),
            group: None,
            dedup: None,
        }
    }

    #[test]
    fn templates_are_the_json_a_serializer_would_write() {
        let url = "http://127.0.0.1:1/000000000000/q\"x";
        let first = [entry("aaa"), entry("bbbb")];
        let mut t = Template::new(url, &first, true);
        let next = [entry("ccc"), entry("dddd")];
        assert!(t.fits(url, &next, true));
        assert!(!t.fits(url, &[entry("cc"), entry("dddd")], true));
        assert!(!t.fits(url, &next, false));
        let sent: Value = serde_json::from_slice(&t.fill(&next)).unwrap();
        assert_eq!(
            sent,
            json!({"QueueUrl": url, "Entries": [
                {"Id": "0", "MessageBody": "ccc"}, {"Id": "1", "MessageBody": "dddd"}]})
        );
        let mut one = Template::new(url, &[entry("x1")], false);
        let sent: Value = serde_json::from_slice(&one.fill(&[entry("y2")])).unwrap();
        assert_eq!(sent, json!({"QueueUrl": url, "MessageBody": "y2"}));
        assert!(!entry("a\"b").is_plain());
    }

    #[test]
    fn xml_values_are_found_and_unescaped() {
        let xml = b"<R><Message><ReceiptHandle>a&amp;b&#x2F;c</ReceiptHandle>\
            <Body>x &lt;1&gt; &#65;</Body></Message><Message><ReceiptHandle>h2\
            </ReceiptHandle></Message></R>";
        assert_eq!(xml_values(xml, "ReceiptHandle"), ["a&b/c", "h2"]);
        assert_eq!(xml_values(xml, "Body"), ["x <1> A"]);
        assert_eq!(xml_unescape("&bogus; & tail"), "&bogus; & tail");
        let ok = b"<SendMessageBatchResultEntry><Id>0</Id></SendMessageBatchResultEntry>";
        assert!(query_batch_check(ok, "SendMessageBatch", 1).is_ok());
        assert!(query_batch_check(ok, "SendMessageBatch", 2).is_err());
        let failed = b"<BatchResultErrorEntry><Id>0</Id></BatchResultErrorEntry>";
        assert!(query_batch_check(failed, "SendMessageBatch", 1).is_err());
    }
}
