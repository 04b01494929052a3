//! What the server stores, read through the admin API without changing it
//! (`GET /_retsu/queues/{region}/{account}/{name}/messages?state=all`).

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::header::HOST;
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use tokio::net::TcpStream;

use crate::BoxResult;

/// The admin API answers at most this many messages per peek.
pub const PEEK_LIMIT: usize = 10_000;

#[derive(Debug, Deserialize)]
pub struct Peek {
    pub messages: Vec<Peeked>,
    pub truncated: bool,
}

#[derive(Debug, Deserialize)]
pub struct Peeked {
    pub body: String,
    pub state: String,
}

/// Every message stored in queue `name` (default region and account).
pub async fn peek_all(addr: SocketAddr, name: &str) -> BoxResult<Peek> {
    let path = format!(
        "/_retsu/queues/us-east-1/000000000000/{name}/messages?state=all&limit={PEEK_LIMIT}"
    );
    let bytes = get(addr, &path).await?;
    Ok(serde_json::from_slice(&bytes)
        .map_err(|e| format!("peek {name}: {e}: {}", String::from_utf8_lossy(&bytes)))?)
}

async fn get(addr: SocketAddr, path: &str) -> BoxResult<Bytes> {
    let stream = TcpStream::connect(addr).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let req = Request::get(path)
        .header(HOST, addr.to_string())
        .body(Empty::<Bytes>::new())?;
    let exchange = async {
        let resp = sender.send_request(req).await?;
        let status = resp.status();
        let body = resp.into_body().collect().await?.to_bytes();
        Ok::<_, crate::BoxError>((status, body))
    };
    let (status, body) = tokio::time::timeout(Duration::from_secs(60), exchange)
        .await
        .map_err(|_| format!("GET {path}: no answer in 60 s"))??;
    if !status.is_success() {
        return Err(format!(
            "GET {path}: HTTP {status}: {}",
            String::from_utf8_lossy(&body)
        )
        .into());
    }
    Ok(body)
}
