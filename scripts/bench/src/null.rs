//! The null server: the HTTP floor.
//!
//! A minimal hyper HTTP/1.1 server on the same runtime shape as Retsu
//! (tokio's multi-thread scheduler, one worker per core). It reads each
//! request body, looks only at `X-Amz-Target`, and answers with a canned,
//! valid AWS JSON 1.0 response of realistic size: no parsing, no queue, no
//! work. Whatever rate a client reaches against it is the ceiling of that
//! client, HTTP and kernel on this machine; Retsu's figures are reported as
//! a percentage of it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::CONTENT_TYPE;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpListener;

use crate::BoxResult;

/// Canned bodies, built once at start.
struct Canned {
    queue_url: Bytes,
    send: Bytes,
    send_batch: Bytes,
    receive: Bytes,
    delete_batch: Bytes,
    list_queues: Bytes,
    attributes: Bytes,
    empty: Bytes,
}

impl Canned {
    fn new(addr: SocketAddr) -> Canned {
        let md5 = "0123456789abcdef0123456789abcdef";
        let message_id = "5fea7756-0ea4-451a-a703-a558b933e274";
        let handle = "AQEBx7RfFSJfTMx9JcJ1xDHpN6c3wFqfAVWmAzKJ2mCVxbYkWhPgDIjZ1NzNhZjdmZTc0MzM0NjdiMjRhODI3OTRlMjc5MDFmNmE";
        let body = "x".repeat(100);
        let ten = |f: &dyn Fn(usize) -> serde_json::Value| -> Vec<serde_json::Value> {
            (0..10).map(f).collect()
        };
        let bytes = |v: serde_json::Value| Bytes::from(v.to_string());
        Canned {
            queue_url: bytes(json!({ "QueueUrl": format!("http://{addr}/000000000000/null") })),
            send: bytes(json!({ "MessageId": message_id, "MD5OfMessageBody": md5 })),
            send_batch: bytes(json!({
                "Successful": ten(&|i| json!({
                    "Id": i.to_string(), "MessageId": message_id, "MD5OfMessageBody": md5
                })),
                "Failed": []
            })),
            receive: bytes(json!({
                "Messages": ten(&|_| json!({
                    "MessageId": message_id, "ReceiptHandle": handle,
                    "MD5OfBody": md5, "Body": body
                }))
            })),
            delete_batch: bytes(json!({
                "Successful": ten(&|i| json!({ "Id": i.to_string() })),
                "Failed": []
            })),
            list_queues: bytes(json!({ "QueueUrls": [] })),
            attributes: bytes(json!({ "Attributes": {
                "ApproximateNumberOfMessages": "0",
                "ApproximateNumberOfMessagesNotVisible": "0",
                "ApproximateNumberOfMessagesDelayed": "0"
            }})),
            empty: Bytes::from_static(b"{}"),
        }
    }

    fn pick(&self, action: &str) -> Bytes {
        match action {
            "CreateQueue" | "GetQueueUrl" => &self.queue_url,
            "SendMessage" => &self.send,
            "SendMessageBatch" => &self.send_batch,
            "ReceiveMessage" => &self.receive,
            "DeleteMessageBatch" => &self.delete_batch,
            "ListQueues" => &self.list_queues,
            "GetQueueAttributes" => &self.attributes,
            _ => &self.empty,
        }
        .clone()
    }
}

async fn respond(
    canned: Arc<Canned>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let action = req
        .headers()
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("AmazonSQS."))
        .unwrap_or("")
        .to_string();
    // Read the body, as any server must before answering.
    let _ = req.into_body().collect().await;
    let response = Response::builder()
        .header(CONTENT_TYPE, "application/x-amz-json-1.0")
        .header("x-amzn-requestid", "00000000-0000-0000-0000-000000000000")
        .body(Full::new(canned.pick(&action)))
        .expect("static response");
    Ok(response)
}

/// Serves forever on 127.0.0.1:`port` (0: any free port).
pub fn serve(port: u16) -> BoxResult<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let canned = Arc::new(Canned::new(addr));
        eprintln!("retsu-bench null server listening on http://{addr}");
        loop {
            let (stream, _) = listener.accept().await?;
            stream.set_nodelay(true)?;
            let canned = canned.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| respond(canned.clone(), req));
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}
