//! Accepting and serving connections, each bounded in what it may cost.
//!
//! `axum::serve` runs hyper without a timer, so no timeout ever fired: idle
//! sockets, slowloris headers and stalled bodies stayed open forever, and a
//! shutdown waited on them forever. This loop serves HTTP/1.1 with:
//! - a header-read timeout (hyper's, armed whenever the connection waits for
//!   a request head, so it is also the idle keep-alive timeout; a long poll
//!   is a request being answered, not an idle connection);
//! - limits on header count and size;
//! - a cap on open connections, below the file-descriptor limit, with a log
//!   line when it is reached (new connections are closed at once, so
//!   connections already open keep being served);
//! - a shutdown deadline: stop accepting, ask every connection to finish its
//!   request and close, and drop whatever is still open when it passes.
//!
//! The body-read timeout lives in the request handler, which reads bodies.
//!
//! With TLS on (`src/tls`), each connection's first byte decides: a TLS
//! handshake record goes through the handshake (within the header
//! timeout), anything else is served as plain HTTP, so both share the
//! port. Either way the same HTTP/1.1 server runs over one stream type
//! ([`Io`]), so its code is in the binary once; requests that came over
//! TLS carry [`Https`] for the handler (queue URLs keep the scheme).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use super::rejections::Rewriter;
use super::AnyService;
use crate::config::HttpLimits;

/// File descriptors kept free for everything that is not a client
/// connection (the listener, logs, a data directory).
const RESERVED_FDS: u64 = 64;

/// The first byte of a TLS handshake record (RFC 8446, 5.1: ContentType
/// handshake); no HTTP request line starts with it.
const TLS_HANDSHAKE: u8 = 0x16;

/// How many headers hyper accepts when not told otherwise.
const HYPER_MAX_HEADERS: usize = 100;

/// Marks a request that came over TLS (a request extension).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Https;

/// Serves `listener` until `stop` turns true (or its sender is dropped),
/// then calls `on_stop` (which answers waiting long polls) and drains.
/// With `tls`, connections that open with a TLS handshake are served
/// over TLS.
pub(crate) async fn serve(
    listener: TcpListener,
    service: AnyService,
    tls: Option<tokio_rustls::TlsAcceptor>,
    limits: HttpLimits,
    mut stop: watch::Receiver<bool>,
    on_stop: impl FnOnce(),
) -> io::Result<()> {
    let cap = connection_cap(limits.max_connections);
    let permits = Arc::new(Semaphore::new(cap));
    let (close_tx, close_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut refusals = Refusals::new(cap);
    loop {
        tokio::select! {
            _ = turned_true(&mut stop) => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => match permits.clone().try_acquire_owned() {
                    Ok(permit) => {
                        connections.spawn(serve_one(
                            stream,
                            service.clone(),
                            tls.clone(),
                            limits.clone(),
                            close_rx.clone(),
                            permit,
                        ));
                    }
                    Err(_) => refusals.refuse(stream),
                },
                Err(e) => {
                    // Out of file descriptors (or a similar transient
                    // failure): back off instead of spinning on accept.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            // Reap finished connections so the set does not grow.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    on_stop();
    close_tx.send_replace(true);
    let deadline = Duration::from_secs(limits.shutdown_timeout);
    let drained = tokio::time::timeout(deadline, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open = connections.len(),
            "shutdown: connections still unfinished after {}s; closing them",
            limits.shutdown_timeout
        );
        connections.abort_all();
        while connections.join_next().await.is_some() {}
    }
    Ok(())
}

/// Serves one connection until it closes, times out, or shutdown has let
/// its current request finish.
async fn serve_one(
    stream: TcpStream,
    mut service: AnyService,
    tls: Option<tokio_rustls::TlsAcceptor>,
    limits: HttpLimits,
    mut close: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
) {
    // Request-response traffic of small messages: send each response now.
    let _ = stream.set_nodelay(true);
    let header_timeout = Duration::from_secs(limits.header_timeout);
    let stream = match tls {
        None => Io::Plain(stream),
        Some(acceptor) => {
            let accepted = tokio::select! {
                accepted = tokio::time::timeout(header_timeout, accept(stream, &acceptor)) => accepted,
                // Shutdown does not wait for a handshake.
                _ = turned_true(&mut close) => return,
            };
            match accepted {
                Ok(Ok(stream)) => stream,
                Ok(Err(e)) => {
                    tracing::debug!("connection ended before a request: {e}");
                    return;
                }
                Err(_) => return,
            }
        }
    };
    if matches!(stream, Io::Tls(_)) {
        let plain = service;
        service = AnyService::new(move |mut req| {
            req.extensions_mut().insert(Https);
            (plain.0)(req)
        });
    }
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .max_header_size(limits.max_header_bytes as usize);
    // hyper's own limit is the default's; set explicitly, hyper sizes and
    // fills its header arrays at run time on every request instead of
    // using fixed, uninitialised ones.
    if limits.max_headers as usize != HYPER_MAX_HEADERS {
        builder.max_headers(limits.max_headers as usize);
    }
    let conn = builder.serve_connection(TokioIo::new(Rewriter::new(stream)), service);
    tokio::pin!(conn);
    let mut closing = false;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!("connection ended: {e}");
                }
                return;
            }
            _ = turned_true(&mut close), if !closing => {
                closing = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// A connection as TLS when its first byte opens a handshake, else as it
/// is.
async fn accept(stream: TcpStream, acceptor: &tokio_rustls::TlsAcceptor) -> io::Result<Io> {
    let mut first = [0u8; 1];
    if stream.peek(&mut first).await? == 1 && first[0] == TLS_HANDSHAKE {
        Ok(Io::Tls(Box::new(acceptor.accept(stream).await?)))
    } else {
        Ok(Io::Plain(stream))
    }
}

/// A connection's stream: plain or TLS, one type for the HTTP server.
enum Io {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>),
}

impl AsyncRead for Io {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Io {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Io::Plain(s) => s.is_write_vectored(),
            Io::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_flush(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Resolves once the flag is true or its sender is gone (the guard
/// `wait_for` returns is not `Send`, so it is dropped here).
async fn turned_true(flag: &mut watch::Receiver<bool>) {
    let _ = flag.wait_for(|on| *on).await.map(|_| ());
}

/// The configured cap, lowered to fit the process's file-descriptor limit.
fn connection_cap(configured: u64) -> usize {
    let cap = match fd_limit() {
        Some(fds) if fds.saturating_sub(RESERVED_FDS) < configured => {
            let lowered = fds.saturating_sub(RESERVED_FDS).max(1);
            tracing::warn!(
                "--max-connections {configured} lowered to {lowered}: the process may open only {fds} files (ulimit -n)"
            );
            lowered
        }
        _ => configured,
    };
    usize::try_from(cap).unwrap_or(usize::MAX)
}

#[cfg(unix)]
fn fd_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own and reads nothing else.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

#[cfg(not(unix))]
fn fd_limit() -> Option<u64> {
    None
}

/// Raises this process's soft file-descriptor limit to its hard limit, so
/// the connection cap rather than `ulimit -n` bounds connections. For the
/// binary; a library embedding Retsu keeps its process's limits.
#[cfg(unix)]
pub fn raise_fd_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain reads and writes of a struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

#[cfg(not(unix))]
pub fn raise_fd_limit() {}

/// Connections closed at the cap, logged at most every 10 s so a flood
/// cannot flood the log too.
struct Refusals {
    cap: usize,
    since_log: u64,
    last_log: Option<Instant>,
}

impl Refusals {
    fn new(cap: usize) -> Refusals {
        Refusals {
            cap,
            since_log: 0,
            last_log: None,
        }
    }

    fn refuse(&mut self, stream: TcpStream) {
        drop(stream);
        self.since_log += 1;
        if self
            .last_log
            .is_none_or(|at| at.elapsed() >= Duration::from_secs(10))
        {
            tracing::warn!(
                refused = self.since_log,
                "connection cap reached ({} open): closing new connections until some finish (--max-connections)",
                self.cap
            );
            self.since_log = 0;
            self.last_log = Some(Instant::now());
        }
    }
}
