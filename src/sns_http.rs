//! The POSTs SNS makes to its HTTP subscribers: the core builds each one
//! ([`HttpDelivery`]: URL, headers, signed body, retry policy, dead-letter
//! queue) and hands it to the [`HttpSenderTask`] the server installs.
//!
//! - Every delivery runs in its own task, so a Publish never waits for an
//!   endpoint.
//! - An attempt succeeds on any answer with a status in 200..=499 within
//!   15 s of real time (AWS's rule: a 4xx is the subscriber's business and
//!   is not retried). A 5xx, a refused connection or a timeout fails it.
//! - A failed delivery is tried again `retry.num_retries` times, waiting
//!   `retry.delay_s(n)` seconds of the engine's clock before retry `n`, so
//!   a manual or frozen clock (tests, `/_retsu/clock`) decides when
//!   retries happen. Each wait counts from the start of the attempt
//!   before it.
//! - When every attempt failed, the message goes to the subscription's
//!   RedrivePolicy queue if it has one; either way one warning is logged.
//! - `https://` endpoints are checked against the system's certificate
//!   authorities (rustls, ring as its crypto), as AWS checks them: an
//!   endpoint whose certificate does not chain to one fails its attempts.
//! - Deliveries still waiting or in flight when the runtime stops are
//!   dropped: nothing about them is persisted.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::Uri;
use hyper_util::rt::TokioIo;
use retsu_core::engine::Engine;
use retsu_core::sns::envelope::EnvelopeKind;
use retsu_core::sns::http::{HttpDelivery, HttpSender};

use crate::faults::Faults;
use tokio::net::TcpStream;
use tokio_rustls::rustls::{self, pki_types::ServerName, RootCertStore};
use tokio_rustls::TlsConnector;

/// AWS's limit on an endpoint's answer.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(15);

/// What `Sns::set_http_sender` gets: spawns one task per delivery on the
/// server's runtime.
pub struct HttpSenderTask {
    engine: Arc<Engine>,
    /// Seeded faults: a delivery may be made twice, or late.
    faults: Arc<Faults>,
    /// The runtime the server started on: `send` is called from request
    /// handlers, but a handle keeps it independent of the caller's context.
    runtime: tokio::runtime::Handle,
}

impl HttpSenderTask {
    /// Must be called within the server's Tokio runtime.
    pub fn new(engine: Arc<Engine>, faults: Arc<Faults>) -> HttpSenderTask {
        HttpSenderTask {
            engine,
            faults,
            runtime: tokio::runtime::Handle::current(),
        }
    }
}

impl HttpSender for HttpSenderTask {
    fn send(&self, delivery: HttpDelivery) {
        // Confirmations are not shaped: only notifications are deliveries.
        let shape = match delivery.kind {
            EnvelopeKind::Notification => self.faults.delivery(None),
            _ => Default::default(),
        };
        let copies = shape.duplicates as usize + 1;
        for delivery in std::iter::repeat_n(delivery, copies) {
            let engine = self.engine.clone();
            self.runtime.spawn(async move {
                if shape.delay_ms > 0 {
                    let at = engine.clock().now_ms() + shape.delay_ms;
                    engine.clock().sleep_until(at).await;
                }
                deliver(engine, delivery).await
            });
        }
    }
}

/// All the attempts of one delivery, then its dead-lettering.
async fn deliver(engine: Arc<Engine>, delivery: HttpDelivery) {
    let attempts = delivery.retry.num_retries.saturating_add(1);
    let mut last_error = String::new();
    let mut started_ms = 0;
    for n in 0..attempts {
        if n > 0 {
            // Counted from the previous attempt's start: a slow endpoint
            // does not stretch the schedule, and whoever moves the clock
            // once they saw a POST arrive cannot race this wait.
            let delay_ms = u64::from(delivery.retry.delay_s(n)) * 1000;
            engine.clock().sleep_until(started_ms + delay_ms).await;
        }
        started_ms = engine.clock().now_ms();
        match attempt(&delivery).await {
            Ok(()) => return,
            Err(e) => {
                tracing::debug!(
                    url = %delivery.url,
                    kind = delivery.kind.as_str(),
                    message_id = %delivery.message_id,
                    attempt = n + 1,
                    error = %e,
                    "SNS HTTP delivery attempt failed"
                );
                last_error = e;
            }
        }
    }
    // One warning per abandoned delivery, saying where the message went.
    let dead_letter = match delivery.dead_letter {
        Some((queue_arn, message)) => match engine.deliver(&queue_arn, message) {
            Ok(_) => format!("sent to {queue_arn}"),
            Err(e) => format!("not sent to {queue_arn}: {}", e.message),
        },
        None => "none".to_string(),
    };
    tracing::warn!(
        url = %delivery.url,
        kind = delivery.kind.as_str(),
        subscription = %delivery.subscription_arn,
        topic = %delivery.topic_arn,
        message_id = %delivery.message_id,
        attempts,
        error = %last_error,
        dead_letter = %dead_letter,
        "SNS gave up delivering to an HTTP endpoint"
    );
}

/// One POST; `Err` says why it counts as failed.
async fn attempt(delivery: &HttpDelivery) -> Result<(), String> {
    let headers: Vec<(&str, String)> = delivery
        .headers
        .iter()
        .map(|(name, value)| (*name, value.clone()))
        .collect();
    let body = Bytes::from(delivery.body.clone());
    let answer = exchange(&delivery.url, &headers, body, ATTEMPT_TIMEOUT).await?;
    if (200..=499).contains(&answer.status.as_u16()) {
        Ok(())
    } else {
        Err(format!("answered {}", answer.status))
    }
}

/// An endpoint's whole answer to one POST.
pub(crate) struct Answer {
    pub status: hyper::StatusCode,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

/// POSTs `body` to `url` (http or https, over a fresh connection) with
/// `headers`, and reads the whole answer within `timeout`. Shared by SNS's
/// HTTP deliveries and Lambda invocations (`crate::lambda`); `Err` says
/// why no answer came.
pub(crate) async fn exchange(
    url: &str,
    headers: &[(&str, String)],
    body: Bytes,
    timeout: Duration,
) -> Result<Answer, String> {
    let uri: Uri = url
        .parse()
        .map_err(|e| format!("invalid endpoint URL: {e}"))?;
    let https = match uri.scheme_str() {
        Some("http") => false,
        Some("https") => true,
        _ => return Err("the endpoint URL is neither http:// nor https://".into()),
    };
    let authority = uri
        .authority()
        .ok_or("the endpoint URL has no host")?
        .clone();
    // `[::1]` is how a URL writes an IPv6 host; connect takes it bare.
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let port = authority.port_u16().unwrap_or(if https { 443 } else { 80 });
    let path = uri.path_and_query().map_or("/", |p| p.as_str());

    let mut request = hyper::Request::post(path).header(
        hyper::header::HOST,
        match authority.port() {
            Some(p) => format!("{}:{p}", authority.host()),
            None => authority.host().to_string(),
        },
    );
    for (name, value) in headers {
        request = request.header(*name, value.as_str());
    }
    let request = request
        .body(Full::new(body))
        .map_err(|e| format!("invalid request: {e}"))?;

    let exchange = async {
        let stream = TcpStream::connect((host, port))
            .await
            .map_err(|e| format!("connect: {e}"))?;
        if https {
            let name = ServerName::try_from(host.to_string())
                .map_err(|e| format!("invalid host name for TLS: {e}"))?;
            let tls = tls_connector()?
                .connect(name, stream)
                .await
                .map_err(|e| format!("TLS: {e}"))?;
            post(TokioIo::new(tls), request).await
        } else {
            post(TokioIo::new(stream), request).await
        }
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| format!("no answer within {} s", timeout.as_secs()))?
}

/// Sends `request` over a fresh HTTP/1.1 connection on `io` and reads the
/// whole answer.
async fn post<T>(io: T, request: hyper::Request<Full<Bytes>>) -> Result<Answer, String>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    use http_body_util::BodyExt;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    // The connection is driven beside the request and dropped with it:
    // one connection per attempt, nothing pooled.
    let drive = async move {
        let _ = connection.await;
        std::future::pending::<()>().await
    };
    let answer = async {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("request: {e}"))?;
        let (parts, body) = response.into_parts();
        let body = body
            .collect()
            .await
            .map_err(|e| format!("reading the answer: {e}"))?
            .to_bytes();
        Ok(Answer {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    };
    tokio::select! {
        answer = answer => answer,
        _ = drive => unreachable!("the connection future never finishes"),
    }
}

/// The TLS client for `https://` endpoints, made on first use: it trusts
/// the system's certificate authorities (or `SSL_CERT_FILE` /
/// `SSL_CERT_DIR`), as AWS requires an endpoint's certificate to chain to
/// a trusted one. A scratch container has none: mount a bundle and name
/// it in `SSL_CERT_FILE`.
fn tls_connector() -> Result<&'static TlsConnector, String> {
    static CONNECTOR: OnceLock<Result<TlsConnector, String>> = OnceLock::new();
    CONNECTOR
        .get_or_init(|| {
            let found = rustls_native_certs::load_native_certs();
            let mut roots = RootCertStore::empty();
            let (added, _ignored) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                let why = found
                    .errors
                    .first()
                    .map_or_else(|| "none found".to_string(), |e| e.to_string());
                return Err(format!(
                    "no trusted certificate authorities to check https endpoints against ({why}); set SSL_CERT_FILE to a PEM bundle"
                ));
            }
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| format!("TLS setup: {e}"))?
                .with_root_certificates(roots)
                .with_no_client_auth();
            Ok(TlsConnector::from(Arc::new(config)))
        })
        .as_ref()
        .map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    use super::*;
    use retsu_core::sns::envelope::EnvelopeKind;
    use retsu_core::sns::http::RetryPolicy;

    fn delivery(url: &str) -> HttpDelivery {
        HttpDelivery {
            url: url.into(),
            kind: EnvelopeKind::Notification,
            headers: Vec::new(),
            body: String::new(),
            subscription_arn: String::new(),
            topic_arn: String::new(),
            message_id: String::new(),
            retry: RetryPolicy::default(),
            dead_letter: None,
        }
    }

    #[tokio::test]
    async fn urls_that_cannot_be_posted_to_fail_the_attempt() {
        let ftp = attempt(&delivery("ftp://example.com/")).await;
        assert_eq!(
            ftp.unwrap_err(),
            "the endpoint URL is neither http:// nor https://"
        );
        assert!(attempt(&delivery("not a url")).await.is_err());
    }
}
