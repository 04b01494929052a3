//! AWS-shaped answers to requests hyper refuses before our handler sees
//! them: a request line too long (414), too many or too large headers
//! (431), a garbage request line or bad `Content-Length` (400), an unknown
//! HTTP version (505).
//!
//! hyper answers those itself with an empty page, no request id and no
//! error code, then closes the connection. SDKs then report an unparseable
//! response. [`Rewriter`] sits between hyper and the socket: it recognizes
//! hyper's own error response (a 4xx/5xx head with `content-length: 0` and
//! nothing after it — our handler never answers an error with an empty
//! body) and sends in its place the same status with AWS's error body in
//! the caller's protocol and a request id. The protocol is guessed from
//! the bytes of the refused request that did arrive (an `X-Amz-Target`
//! header means JSON), since no parsed request exists.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::error::SqsError;
use crate::protocol::{self, Protocol};

/// How much of each request's start is kept to guess its protocol (the
/// request line and the first headers, where SDKs put X-Amz-Target).
const SAMPLE_BYTES: usize = 1024;

pub(super) struct Rewriter<S> {
    inner: S,
    /// The start of the request now being read (cleared when a response
    /// starts), to guess the protocol of a refused one.
    sample: Vec<u8>,
    /// A replacement being written, and how far; with the length of the
    /// hyper write it stands for.
    replacement: Option<(Vec<u8>, usize, usize)>,
}

impl<S> Rewriter<S> {
    pub(super) fn new(inner: S) -> Rewriter<S> {
        Rewriter {
            inner,
            sample: Vec::new(),
            replacement: None,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Rewriter<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        let room = SAMPLE_BYTES.saturating_sub(self.sample.len());
        if room > 0 {
            let new = &buf.filled()[before..];
            let take = new.len().min(room);
            self.sample.extend_from_slice(&new[..take]);
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> Rewriter<S> {
    /// Looks at the start of a write: a response head clears the request
    /// sample; hyper's own bare error gets its replacement prepared.
    fn inspect(&mut self, first: &[u8], total: usize) {
        if !first.starts_with(b"HTTP/1.1 ") {
            return;
        }
        if let Some(status) = bare_error_status(first, total) {
            let protocol = guess_protocol(&self.sample);
            self.replacement = Some((replacement(status, protocol), 0, total));
        }
        self.sample.clear();
    }

    /// Writes the prepared replacement; Ready once all of it is out, with
    /// the length of the hyper write it replaced.
    fn poll_replacement(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        while let Some((bytes, written, _)) = &mut self.replacement {
            if *written == bytes.len() {
                let (_, _, stands_for) = self.replacement.take().expect("present");
                return Poll::Ready(Ok(stands_for));
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &bytes[*written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *written += n;
        }
        Poll::Ready(Ok(0))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Rewriter<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.replacement.is_none() {
            this.inspect(buf, buf.len());
        }
        if this.replacement.is_some() {
            return this.poll_replacement(cx);
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.replacement.is_none() {
            if let Some(first) = bufs.iter().find(|b| !b.is_empty()) {
                let total = bufs.iter().map(|b| b.len()).sum();
                this.inspect(first, total);
            }
        }
        if this.replacement.is_some() {
            return this.poll_replacement(cx);
        }
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The status of a response that is hyper's own bare error: a 4xx/5xx
/// head, complete in this write, declaring an empty body, nothing after.
fn bare_error_status(first: &[u8], total: usize) -> Option<u16> {
    // Cheap checks first: this runs on every response head.
    if total != first.len() || !matches!(first.get(9), Some(b'4' | b'5')) {
        return None;
    }
    let status: u16 = std::str::from_utf8(first.get(9..12)?).ok()?.parse().ok()?;
    if !first.ends_with(b"\r\n\r\n") {
        return None;
    }
    let head_end = first.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    if head_end != first.len() {
        return None;
    }
    let head = String::from_utf8_lossy(&first[..head_end]).to_ascii_lowercase();
    head.contains("\r\ncontent-length: 0\r\n").then_some(status)
}

fn guess_protocol(sample: &[u8]) -> Protocol {
    let text = String::from_utf8_lossy(sample).to_ascii_lowercase();
    if text.contains("\nx-amz-target:") || text.contains("application/x-amz-json") {
        Protocol::Json
    } else {
        Protocol::Query
    }
}

/// The whole HTTP response sent in place of hyper's: its status, AWS's
/// error body, a request id, and `connection: close` (hyper closes the
/// connection after such an error).
fn replacement(status: u16, protocol: Protocol) -> Vec<u8> {
    let message = match status {
        414 => "The request line is too long.".to_string(),
        431 => "The request line and headers are too long, or there are too many header fields (see --max-header-bytes and --max-headers).".to_string(),
        505 => "The request's HTTP version is not supported; use HTTP/1.1.".to_string(),
        _ => "The request is not valid HTTP/1.1 (request line, header or Content-Length).".to_string(),
    };
    let request_id = uuid::Uuid::new_v4().to_string();
    let response = protocol::encode_error(protocol, &SqsError::invalid_value(message), &request_id);
    let reason = axum::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error");
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {}\r\n",
        response.content_type
    );
    for (name, value) in &response.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        response.body.len()
    ));
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(response.body.as_bytes());
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognizes_only_hyper_bare_errors() {
        let bare =
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        assert_eq!(bare_error_status(bare, bare.len()), Some(431));
        // Our own answers always carry a body.
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 10\r\n\r\n";
        assert_eq!(bare_error_status(ours, ours.len() + 10), None);
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(bare_error_status(ok, ok.len()), None);
        // A bare head followed by more bytes in the same write is not it.
        assert_eq!(bare_error_status(bare, bare.len() + 1), None);
    }

    #[test]
    fn the_replacement_is_aws_shaped_in_the_guessed_protocol() {
        let json = String::from_utf8(replacement(
            431,
            guess_protocol(b"POST / HTTP/1.1\r\nX-Amz-Target: AmazonSQS.ListQueues\r\n"),
        ))
        .unwrap();
        assert!(json.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
        assert!(json.contains("x-amzn-query-error: InvalidParameterValue;Sender\r\n"));
        assert!(json.contains("\"__type\""), "{json}");
        let xml = String::from_utf8(replacement(414, guess_protocol(b"GET /?Action="))).unwrap();
        assert!(xml.contains("<Code>InvalidParameterValue</Code>"), "{xml}");
        assert!(xml.contains("<RequestId>"), "{xml}");
        let (head, body) = xml.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("content-length: {}", body.len())));
    }
}
