//! The HTTP server: one handler for every method and path.
//!
//! SQS has a single endpoint; what a request means is decided by its
//! headers and parameters (see [`crate::protocol`]), never by routing, so
//! the router is just a fallback. The handler reads the body itself, with
//! its own limit, so that an oversized request still gets an AWS-shaped
//! error in the caller's protocol instead of a bare 413 page.
//!
//! Connections are accepted and bounded in `connections.rs` (timeouts,
//! connection cap, shutdown deadline); requests hyper refuses before they
//! reach us still get AWS's error shape through `rejections.rs`.
//!
//! Shutdown is cooperative, with a deadline: stop accepting, wake the
//! engine's long polls so they answer at once, let in-flight requests
//! finish, and drop the connections still unfinished when time is up.

use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, HttpBody};
use axum::extract::{Request, State};
use axum::http::header::CONTENT_LENGTH;
use axum::Router;
use bytes::{Bytes, BytesMut};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::api::Response;
use crate::clock::Clock;
use crate::config::Config;
use crate::engine::Engine;
use crate::error::{ErrorCode, SqsError};
use crate::metrics::Metrics;
use crate::protocol::{self, HttpRequest, HttpResponse, Settings};

mod connections;
mod rejections;

pub use connections::raise_fd_limit;
pub(crate) use connections::serve as serve_connections;
pub(crate) use connections::Https;

/// Largest request body accepted: a 1 MiB batch, base64-inflated binary
/// attributes and form encoding fit with room to spare.
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// Past this, an oversized body is not even drained: the connection is
/// simply closed after the error.
const DRAIN_LIMIT_BYTES: usize = 4 * MAX_BODY_BYTES;

/// How long shutdown waits for the engine's background task.
const BACKGROUND_GRACE: Duration = Duration::from_secs(5);

struct AppState {
    engine: Arc<Engine>,
    /// Seeded faults, wrapped around the engine call (off unless the
    /// admin API turns them on).
    faults: Arc<crate::faults::Faults>,
    settings: Settings,
    /// The same, for requests that came over TLS (`https://` queue URLs).
    https_settings: Settings,
    /// How long a client may take to send a request body.
    body_timeout: Duration,
    metrics: Arc<Metrics>,
    /// The web console (and the `/` redirect to it) is served with the admin API.
    console: bool,
    /// `--auth`: the keys signatures are checked against.
    auth: Option<crate::auth::Verifier>,
    /// SNS, on the same engine and port.
    sns: Arc<retsu_core::sns::Sns>,
    signer: Arc<crate::notification_signing::LazySigner>,
    /// A cluster node's id, which labels its metrics.
    node: Option<String>,
}

/// A server accepting connections. Dropping it (and every
/// [`ShutdownHandle`]) shuts it down, like calling [`RunningServer::shutdown`]
/// without waiting.
pub struct RunningServer {
    local_addr: SocketAddr,
    engine: Arc<Engine>,
    /// What each connection serves (a cluster node's front calls it).
    service: HttpService,
    /// With TLS on: the CA of a certificate Retsu made (else `None`).
    tls: Option<crate::tls::Tls>,
    stop: ShutdownHandle,
    serve: JoinHandle<io::Result<()>>,
    background: JoinHandle<()>,
}

/// Starts shutdown from anywhere (a signal task, a test).
#[derive(Clone)]
pub struct ShutdownHandle {
    tx: Arc<watch::Sender<bool>>,
}

impl ShutdownHandle {
    /// Begins graceful shutdown; returns at once.
    pub fn shutdown(&self) {
        self.tx.send_replace(true);
    }
}

/// Binds `config.host:config.port`, starts the engine (and its background
/// task) and serves until shut down. Returns once the socket is listening.
pub async fn start(config: Config, clock: Arc<dyn Clock>) -> io::Result<RunningServer> {
    let engine = Engine::new(clock, config.engine_config());
    start_with_engine(config, engine).await
}

/// Like [`start`], serving an engine prepared beforehand (the queues of a
/// configuration file exist before the first connection).
pub async fn start_with_engine(config: Config, engine: Arc<Engine>) -> io::Result<RunningServer> {
    let services = Services::new(&config, engine.clone());
    start_with_services(config, engine, services).await
}

/// The services beside SQS on the engine: SNS and its signer. Made before
/// serving, so a configuration file's topics exist before the first
/// connection.
pub struct Services {
    pub sns: Arc<retsu_core::sns::Sns>,
    signer: Arc<crate::notification_signing::LazySigner>,
    /// Seeded faults: around SQS requests, and on SNS's deliveries.
    faults: Arc<crate::faults::Faults>,
    /// LocalStack's init hooks, whose progress `/_localstack/init` serves.
    pub init_hooks: Arc<crate::localstack::InitHooks>,
}

impl Services {
    /// With `--data-dir`, SNS's signing key is kept in the directory.
    pub fn new(config: &Config, engine: Arc<Engine>) -> Services {
        let keys = config.data_dir.clone().map(|dir| {
            Arc::new(crate::notification_signing::DirKeyStore(dir))
                as Arc<dyn crate::notification_signing::KeyStore>
        });
        Services::with_key_store(engine, keys)
    }

    /// SNS's signing key kept in `keys` (or for this run only).
    pub fn with_key_store(
        engine: Arc<Engine>,
        keys: Option<Arc<dyn crate::notification_signing::KeyStore>>,
    ) -> Services {
        let signer = Arc::new(crate::notification_signing::LazySigner::new(keys));
        let faults = Arc::new(crate::faults::Faults::default());
        let sns = retsu_core::sns::Sns::new(engine.clone(), signer.clone());
        // The POSTs to HTTP subscribers, made in the background.
        sns.set_http_sender(Arc::new(crate::sns_http::HttpSenderTask::new(
            engine,
            faults.clone(),
        )));
        sns.set_delivery_shaper(Arc::new(crate::faults::SnsDeliveries(faults.clone())));
        Services {
            sns,
            signer,
            faults,
            init_hooks: Arc::new(crate::localstack::InitHooks::none()),
        }
    }
}

/// Like [`start_with_engine`], with the services made beforehand.
pub async fn start_with_services(
    config: Config,
    engine: Arc<Engine>,
    services: Services,
) -> io::Result<RunningServer> {
    let auth = crate::auth::Verifier::from_settings(config.auth, &config.auth_keys)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let tls = crate::tls::Tls::load(&config.tls, config.data_dir.as_deref())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let listener = TcpListener::bind((config.host.as_str(), config.port)).await?;
    let local_addr = listener.local_addr()?;
    let background = tokio::spawn(engine.clone().run_background());
    let observers = crate::observers::attach(&engine, &config);
    // Lambda's event source mappings; the mappings a store kept start polling.
    let lambda = crate::lambda::Lambda::new(
        engine.clone(),
        &config.functions,
        &config.region,
        &config.account_id,
    );
    lambda
        .apply_declared(&config.event_source_mappings)
        .await
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    lambda
        .invocations()
        .count_into(observers.metrics.lambda_counters());
    if let Some(stream) = &observers.event_stream {
        lambda.invocations().stream_into(stream.clone());
    }
    // SNS's lambda subscriptions invoke functions whenever there are any
    // (configured at start or created later).
    services
        .sns
        .set_lambda_invoker(Arc::new(crate::lambda::sns::SnsInvoker::new(
            lambda.clone(),
        )));
    let lambda_admin = lambda.clone();
    let metrics = observers.metrics.clone();

    let Services {
        sns,
        signer,
        faults,
        init_hooks,
    } = services;
    let settings = Settings {
        default_region: config.region.clone(),
        account_id: config.account_id.clone(),
        base_url: config.pinned_base_url("http://", local_addr.port()),
        fallback_base_url: config
            .reached_at
            .clone()
            .unwrap_or_else(|| format!("http://{}", connectable(local_addr))),
        scheme: "http://",
    };
    let https_settings = Settings {
        fallback_base_url: settings
            .fallback_base_url
            .replacen("http://", "https://", 1),
        scheme: "https://",
        // LocalStack's standard URLs keep the scheme; a --base-url stays as given.
        base_url: config.pinned_base_url("https://", local_addr.port()),
        ..settings.clone()
    };
    let state = Arc::new(AppState {
        sns,
        signer,
        engine: engine.clone(),
        faults: faults.clone(),
        settings,
        https_settings,
        body_timeout: Duration::from_secs(config.limits.body_timeout),
        metrics: metrics.clone(),
        console: !config.no_admin,
        auth,
        node: config
            .cluster_secret
            .is_some()
            .then(|| config.node_id.clone())
            .flatten(),
    });
    // GET /health for container health checks; no queue URL is /health,
    // and other methods there still reach the SQS handler.
    let health = axum::routing::get(|| async { "ok" }).fallback(handle);
    // GET /metrics for Prometheus; other methods there reach SQS too.
    let scrape = axum::routing::get(scrape_metrics).fallback(handle);
    let settings = state.settings.clone();
    // SNS's signing certificate, at the URL its envelopes name.
    let certificate = axum::routing::get(signing_certificate).fallback(handle);
    let mut app = Router::new()
        .route("/health", health)
        .route("/_retsu/sns/{file}", certificate)
        .route("/metrics", scrape)
        .merge(if config.no_admin {
            Router::new()
        } else {
            crate::console::routes()
        })
        .fallback(handle)
        .with_state(state.clone())
        .merge(crate::protocol::lambda::router(lambda.clone()));
    // The admin API (/_retsu/*, /_aws/sqs/messages); with --no-admin those
    // paths fall through to the SQS handler like any unknown path.
    if !config.no_admin {
        app = app.merge(crate::lambda::admin::router(
            lambda_admin,
            config.admin_token.clone().filter(|t| !t.is_empty()),
        ));
        app = app.merge(crate::admin::router(Arc::new(crate::admin::Admin {
            engine: engine.clone(),
            token: config.admin_token.clone().filter(|t| !t.is_empty()),
            started: Instant::now(),
            settings,
            history: observers.history,
            faults,
            event_stream: observers
                .event_stream
                .expect("attached whenever the admin API is served"),
            sns: state.sns.clone(),
            topic_steps: observers
                .topic_steps
                .expect("attached whenever the admin API is served"),
            init_hooks,
            lambda,
            localstack: !config.no_localstack,
        })));
    }

    let (tx, rx) = watch::channel(false);
    let engine_for_stop = engine.clone();
    let service = HttpService {
        router: hyper_util::service::TowerToHyperService::new(app),
        state,
    };
    let serving = service.clone();
    let serve = tokio::spawn(connections::serve(
        listener,
        AnyService::new(move |req| hyper::service::Service::call(&serving, req)),
        tls.as_ref().map(|t| t.acceptor.clone()),
        config.limits.clone(),
        rx,
        // Answer waiting long polls at once, then let requests finish.
        move || engine_for_stop.shutdown(),
    ));

    match &tls {
        Some(tls) => tracing::info!(
            ca = tls.ca.as_ref().map(|p| p.display().to_string()),
            "retsu listening on http://{local_addr} and https://{local_addr}"
        ),
        None => tracing::info!("retsu listening on http://{local_addr}"),
    }
    Ok(RunningServer {
        local_addr,
        engine,
        service,
        tls,
        stop: ShutdownHandle { tx: Arc::new(tx) },
        serve,
        background,
    })
}

impl RunningServer {
    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// `http://IP:PORT` a client on this machine can reach (loopback when
    /// bound to a wildcard address).
    pub fn endpoint_url(&self) -> String {
        format!("http://{}", connectable(self.local_addr))
    }

    /// `https://IP:PORT` on the same port, when TLS is on.
    pub fn https_endpoint_url(&self) -> Option<String> {
        self.tls
            .as_ref()
            .map(|_| format!("https://{}", connectable(self.local_addr)))
    }

    /// The certificate authority to trust for [`Self::https_endpoint_url`],
    /// when Retsu made the certificate (`--tls` without `--tls-cert`).
    pub fn tls_ca(&self) -> Option<&std::path::Path> {
        self.tls.as_ref().and_then(|t| t.ca.as_deref())
    }

    pub fn engine(&self) -> Arc<Engine> {
        self.engine.clone()
    }

    /// What each connection serves, to call without a connection.
    pub(crate) fn service(&self) -> HttpService {
        self.service.clone()
    }

    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.stop.clone()
    }

    /// Shuts down gracefully and waits until every connection is closed.
    pub async fn shutdown(self) -> io::Result<()> {
        self.stop.shutdown();
        self.wait().await
    }

    /// Waits until the server stops (after a [`ShutdownHandle::shutdown`]).
    pub async fn wait(self) -> io::Result<()> {
        let RunningServer {
            stop,
            serve,
            mut background,
            ..
        } = self;
        let served = serve.await.unwrap_or_else(|e| Err(io::Error::other(e)));
        drop(stop);
        if tokio::time::timeout(BACKGROUND_GRACE, &mut background)
            .await
            .is_err()
        {
            tracing::warn!("engine background task did not stop; aborting it");
            background.abort();
        }
        served
    }
}

/// A wildcard bind address is not something to connect to; use loopback.
pub(crate) fn connectable(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => (Ipv4Addr::LOCALHOST, addr.port()).into(),
        IpAddr::V6(ip) if ip.is_unspecified() => (Ipv6Addr::LOCALHOST, addr.port()).into(),
        _ => addr,
    }
}

async fn handle(State(state): State<Arc<AppState>>, req: Request) -> axum::response::Response {
    let started = Instant::now();
    let request_id = crate::engine::id_text(&uuid::Uuid::new_v4());
    let (parts, body) = req.into_parts();
    // A browser at the bare endpoint goes to the console; SQS never asks for HTML.
    let (method, uri) = (&parts.method, &parts.uri);
    if let Some(redirect) = state
        .console
        .then(|| crate::console::browser_redirect(method, uri.path(), uri.query(), &parts.headers))
        .flatten()
    {
        return redirect;
    }
    let body = match read_body_within(state.body_timeout, &parts.headers, body).await {
        Ok(body) => body,
        Err(error) => {
            tracing::debug!(%request_id, "rejected body: {error}");
            return refused_body(&error, &parts.headers, &request_id);
        }
    };
    // Over TLS, queue URLs are https:// ones.
    let settings = if parts.extensions.get::<Https>().is_some() {
        &state.https_settings
    } else {
        &state.settings
    };
    let request = HttpRequest {
        path: parts.uri.path().to_string(),
        query: parts.uri.query().map(str::to_string),
        headers: parts.headers,
        body,
    };
    // --auth: the signature is checked before anything is decoded, and the
    // caller's account and region come from its credential (src/auth).
    let identity = match crate::auth::check(
        state.auth.as_ref(),
        parts.method.as_str(),
        &request,
        &request_id,
    ) {
        Ok(identity) => identity,
        Err(response) => return HttpResponse::into_http(response),
    };
    let decoded = match protocol::decode(&request, settings, &request_id) {
        Ok(protocol::Decoded::Sns(call)) => {
            return HttpResponse::into_http(
                serve_sns(&state, identity.as_ref(), call, &request_id).await,
            );
        }
        Ok(protocol::Decoded::Sts(call)) => {
            // The caller's account: its key's under --auth, else the server's.
            let account = identity
                .as_ref()
                .map_or(&call.context.account_id, |i| &i.account_id);
            tracing::debug!(%request_id, account, "STS GetCallerIdentity");
            return HttpResponse::into_http(protocol::sts::caller_identity(account, &request_id));
        }
        Ok(protocol::Decoded::Sqs(call)) => {
            crate::auth::admit(identity.as_ref(), &state.engine, call, &request_id)
        }
        Err(response) => Err(response),
    };
    let (action, failure, response) = match decoded {
        Ok(call) => {
            let action = call.request.action();
            let protocol = call.protocol;
            let result = crate::faults::run(&state.engine, &state.faults, call, |call| {
                run_engine(&state.engine, call)
            })
            .await;
            let code = result.as_ref().err().map(|e| e.code.query_code());
            state
                .metrics
                .observe_request(Some(action), code, started.elapsed());
            let failure = result.as_ref().err().map(ToString::to_string);
            (
                Some(action.name()),
                failure,
                protocol::encode(protocol, &result, &request_id),
            )
        }
        Err(response) => {
            // Not even decodable (unknown action, malformed body).
            state
                .metrics
                .observe_request(None, Some("rejected"), started.elapsed());
            (None, None, response)
        }
    };
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let status = response.status;
    if status >= 500 {
        tracing::warn!(%request_id, method = %parts.method, path = %request.path, action, status, elapsed_ms, error = failure.as_deref(), "request failed");
    } else {
        tracing::debug!(%request_id, method = %parts.method, path = %request.path, action, status, elapsed_ms, error = failure.as_deref(), "request");
    }
    HttpResponse::into_http(response)
}

/// `GET /metrics`: the Prometheus exposition (see `metrics.rs`).
async fn scrape_metrics(State(state): State<Arc<AppState>>) -> axum::response::Response {
    let ctx = state.settings.default_context();
    let body = state
        .metrics
        .render(&state.engine, &ctx, state.node.as_deref());
    axum::response::Response::builder()
        .header(
            axum::http::header::CONTENT_TYPE,
            crate::metrics::CONTENT_TYPE,
        )
        .body(Body::from(body))
        .unwrap_or_else(|_| axum::response::Response::new(Body::empty()))
}

/// What every connection serves. Requests for `/`, where SQS clients post,
/// go straight to the SQS handler; everything else goes through the router
/// (admin API, console, `/health`, `/metrics`, queue-URL paths). No route
/// is `/`, so the router would end at the same handler, after a route
/// lookup and its bookkeeping on every request. The router
/// has no layers; a layer or a `/` route added to it must be added here
/// too, or SQS requests would bypass it.
#[derive(Clone)]
pub(crate) struct HttpService {
    router: hyper_util::service::TowerToHyperService<Router>,
    state: Arc<AppState>,
}

pub(crate) type Answer = Result<axum::response::Response, std::convert::Infallible>;

/// A service's answer to come.
pub(crate) type Answering = Pin<Box<dyn Future<Output = Answer> + Send>>;

/// What a connection serves: the server's own service, or a cluster
/// node's front. One type, so the HTTP server's code exists once in the
/// binary whichever it serves.
#[derive(Clone)]
pub(crate) struct AnyService(
    Arc<dyn Fn(hyper::Request<hyper::body::Incoming>) -> Answering + Send + Sync>,
);

impl AnyService {
    pub(crate) fn new(
        call: impl Fn(hyper::Request<hyper::body::Incoming>) -> Answering + Send + Sync + 'static,
    ) -> AnyService {
        AnyService(Arc::new(call))
    }
}

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for AnyService {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = Answering;

    fn call(&self, req: hyper::Request<hyper::body::Incoming>) -> Answering {
        (self.0)(req)
    }
}

impl HttpService {
    /// Serves a request whose body was already read (a cluster node's
    /// front reads it to find the shard that answers it).
    pub(crate) fn call_read(&self, req: hyper::Request<Body>) -> Answering {
        if req.uri().path() == "/" {
            let state = self.state.clone();
            Box::pin(async move { Ok(handle(State(state), req).await) })
        } else {
            Box::pin(hyper::service::Service::call(&self.router, req))
        }
    }
}

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for HttpService {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = Answering;

    fn call(&self, req: hyper::Request<hyper::body::Incoming>) -> Self::Future {
        if req.uri().path() == "/" {
            let state = self.state.clone();
            Box::pin(async move { Ok(handle(State(state), req.map(Body::new)).await) })
        } else {
            Box::pin(self.router.call(req))
        }
    }
}

/// Runs the engine, turning a panic into InternalError so the client gets
/// an answer rather than a dropped connection.
/// One SNS request: the caller's account and region from its credential
/// under `--auth` (SNS policies are not enforced), then the SNS service.
async fn serve_sns(
    state: &AppState,
    identity: Option<&crate::auth::Identity>,
    mut call: protocol::SnsCall,
    request_id: &str,
) -> HttpResponse {
    if let Some(identity) = identity {
        call.context.account_id = identity.account_id.clone();
        call.context.region = identity.region.clone();
    }
    let action = call.request.action();
    let fut = state.sns.handle(&call.context, call.request);
    let result = match CatchUnwind(Box::pin(fut)).await {
        Ok(result) => result,
        Err(()) => Err(retsu_core::sns::error::SnsError::internal(
            "The service failed while handling the request.",
        )),
    };
    if let Err(e) = &result {
        tracing::debug!(%request_id, action = action.name(), "SNS request failed: {e}");
    }
    protocol::sns::encode(&result, request_id)
}

/// `GET /_retsu/sns/<file>.pem`: the certificate SNS signatures verify with.
async fn signing_certificate(
    State(state): State<Arc<AppState>>,
    axum::extract::Path(file): axum::extract::Path<String>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let identity = state.signer.identity();
    if file != identity.certificate_file_name() {
        return (axum::http::StatusCode::NOT_FOUND, "no such certificate").into_response();
    }
    (
        [(axum::http::header::CONTENT_TYPE, "application/x-pem-file")],
        identity.certificate_pem().to_string(),
    )
        .into_response()
}

async fn run_engine(engine: &Engine, call: protocol::Call) -> Result<Response, SqsError> {
    let fut = engine.handle(&call.context, call.request);
    match CatchUnwind(Box::pin(fut)).await {
        Ok(result) => result,
        Err(()) => Err(SqsError::internal(
            "The engine failed while handling the request.",
        )),
    }
}

/// Like `futures::FutureExt::catch_unwind`, without the dependency. Unlike
/// spawning a task, it keeps cancellation: a dropped connection drops it.
struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, ()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let fut = self.0.as_mut();
        match std::panic::catch_unwind(AssertUnwindSafe(|| fut.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(_) => Poll::Ready(Err(())),
        }
    }
}

/// Reads the whole body, refusing more than `limit` bytes. An oversized
/// body is still drained (up to [`DRAIN_LIMIT_BYTES`]) so that a client
/// busy sending it reads our error rather than a connection reset.
/// A request's body, read whole within `timeout` and up to
/// [`MAX_BODY_BYTES`]; else the error to answer (InvalidParameterValue for
/// one too long, RequestTimeout for one too slow).
pub(crate) async fn read_body_within(
    timeout: Duration,
    headers: &axum::http::HeaderMap,
    body: Body,
) -> Result<Bytes, SqsError> {
    match tokio::time::timeout(timeout, read_body(headers, body, MAX_BODY_BYTES)).await {
        Ok(Ok(body)) => Ok(body),
        Ok(Err(message)) => Err(SqsError::invalid_value(message)),
        Err(_) => Err(SqsError::new(
            ErrorCode::RequestTimeout,
            format!(
                "The request body did not arrive within {} seconds.",
                timeout.as_secs()
            ),
        )),
    }
}

/// The answer to a body [`read_body_within`] refused, in the caller's
/// protocol. The rest of the body is not read: the connection cannot be
/// reused.
pub(crate) fn refused_body(
    error: &SqsError,
    headers: &axum::http::HeaderMap,
    request_id: &str,
) -> axum::response::Response {
    let protocol = protocol::protocol_from_headers(headers);
    let mut response = HttpResponse::into_http(protocol::encode_error(protocol, error, request_id));
    response.headers_mut().insert(
        axum::http::header::CONNECTION,
        axum::http::HeaderValue::from_static("close"),
    );
    response
}

async fn read_body(
    headers: &axum::http::HeaderMap,
    mut body: Body,
    limit: usize,
) -> Result<Bytes, String> {
    let too_large = || format!("The request body is longer than the {limit}-byte limit.");
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > DRAIN_LIMIT_BYTES as u64) {
        return Err(too_large());
    }
    // Most bodies arrive as one chunk, which is kept as it is; only a body
    // in several chunks is copied into one buffer.
    let mut first: Option<Bytes> = None;
    let mut joined = BytesMut::new();
    let mut seen = 0usize;
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| format!("The request body could not be read: {e}"))?;
        if let Ok(data) = frame.into_data() {
            seen = seen.saturating_add(data.len());
            if seen > DRAIN_LIMIT_BYTES {
                return Err(too_large());
            }
            if seen > limit {
                continue;
            }
            match first.take() {
                None if joined.is_empty() => first = Some(data),
                Some(earlier) => {
                    joined.extend_from_slice(&earlier);
                    joined.extend_from_slice(&data);
                }
                None => joined.extend_from_slice(&data),
            }
        }
    }
    if seen > limit {
        return Err(too_large());
    }
    Ok(first.unwrap_or_else(|| joined.freeze()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SystemClock;

    async fn server() -> RunningServer {
        start(Config::ephemeral(), Arc::new(SystemClock))
            .await
            .expect("binds")
    }

    /// A POST of `body` to `{url}/` with `headers`.
    async fn post(
        client: &reqwest::Client,
        url: &str,
        headers: &[(&str, &str)],
        body: &'static str,
    ) -> reqwest::Response {
        let mut req = client.post(format!("{url}/")).body(body);
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        req.send().await.unwrap()
    }

    fn request_id(resp: &reqwest::Response) -> String {
        let id = resp
            .headers()
            .get("x-amzn-requestid")
            .expect("request id header")
            .to_str()
            .unwrap()
            .to_string();
        assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
        id
    }

    #[tokio::test]
    async fn query_protocol_dispatch_over_http() {
        let server = server().await;
        let client = reqwest::Client::new();
        let url = server.endpoint_url();

        let resp = client.get(format!("{url}/")).send().await.unwrap();
        assert_eq!(resp.status(), 404);
        request_id(&resp);
        assert_eq!(resp.text().await.unwrap(), "<UnknownOperationException/>");

        let resp = post(
            &client,
            &url,
            &[("content-type", "application/x-www-form-urlencoded")],
            "Action=FooBar&Version=2012-11-05",
        )
        .await;
        assert_eq!(resp.status(), 400);
        assert_eq!(resp.headers()["content-type"], "text/xml");
        let id = request_id(&resp);
        let body = resp.text().await.unwrap();
        assert!(body.contains("<Code>InvalidAction</Code>"), "{body}");
        assert!(
            body.contains(&format!("<RequestId>{id}</RequestId>")),
            "{body}"
        );

        let resp = client
            .get(format!("{url}/000000000000/q?Action=ListQueues"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400);
        assert!(resp
            .text()
            .await
            .unwrap()
            .contains("The action ListQueues is not valid for this endpoint."));
        server.shutdown().await.unwrap();
    }

    #[tokio::test]
    async fn json_protocol_over_http() {
        let server = server().await;
        let client = reqwest::Client::new();
        let url = server.endpoint_url();

        let resp = post(
            &client,
            &url,
            &[
                ("content-type", "application/x-amz-json-1.0"),
                ("x-amz-target", "AmazonSQS.NoSuchThing"),
            ],
            "{}",
        )
        .await;
        assert_eq!(resp.status(), 400);
        assert_eq!(
            resp.headers()["x-amzn-query-error"],
            "UnknownOperationException;Sender"
        );
        request_id(&resp);

        let resp = post(
            &client,
            &url,
            &[("x-amz-target", "AmazonSQS.ListQueues")],
            "{not json",
        )
        .await;
        assert_eq!(resp.status(), 400);
        assert!(resp
            .text()
            .await
            .unwrap()
            .contains("SerializationException"));

        // A request that reaches the engine: whatever it answers, it is a
        // well-formed JSON reply with a request id.
        let resp = post(
            &client,
            &url,
            &[
                ("content-type", "application/x-amz-json-1.0"),
                ("x-amz-target", "AmazonSQS.GetQueueUrl"),
            ],
            r#"{"QueueName":"does-not-exist"}"#,
        )
        .await;
        assert_eq!(resp.headers()["content-type"], "application/x-amz-json-1.0");
        request_id(&resp);
        assert!(resp.headers().contains_key("x-amzn-query-error"));
        let body: serde_json::Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
        assert!(body["__type"].is_string());
        server.shutdown().await.unwrap();
    }

    #[tokio::test]
    async fn oversized_body_gets_an_aws_error() {
        let server = server().await;
        let resp = reqwest::Client::new()
            .post(format!("{}/", server.endpoint_url()))
            .header("x-amz-target", "AmazonSQS.SendMessage")
            .body(vec![b' '; MAX_BODY_BYTES + 1])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400);
        assert_eq!(
            resp.headers()["x-amzn-query-error"],
            "InvalidParameterValue;Sender"
        );
        server.shutdown().await.unwrap();
    }

    #[tokio::test]
    async fn shutdown_stops_accepting() {
        let server = server().await;
        let addr = server.local_addr();
        assert!(tokio::net::TcpStream::connect(addr).await.is_ok());
        let handle = server.shutdown_handle();
        handle.shutdown();
        tokio::time::timeout(Duration::from_secs(10), server.wait())
            .await
            .expect("stops promptly")
            .unwrap();
        assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    }

    #[tokio::test]
    async fn dropping_the_server_shuts_it_down() {
        let server = server().await;
        let addr = server.local_addr();
        drop(server);
        let closed = async {
            while tokio::net::TcpStream::connect(addr).await.is_ok() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), closed)
            .await
            .expect("listener closes after drop");
    }

    #[test]
    fn wildcard_addresses_become_loopback() {
        let any: SocketAddr = "0.0.0.0:9324".parse().unwrap();
        assert_eq!(connectable(any).to_string(), "127.0.0.1:9324");
        let any6: SocketAddr = "[::]:9324".parse().unwrap();
        assert_eq!(connectable(any6).to_string(), "[::1]:9324");
    }

    #[tokio::test]
    async fn engine_panics_become_internal_errors() {
        let result: Result<(), ()> = CatchUnwind(Box::pin(async {
            if true {
                panic!("boom");
            }
        }))
        .await;
        assert!(result.is_err());
        let result: Result<u8, ()> = CatchUnwind(Box::pin(async { 7 })).await;
        assert_eq!(result, Ok(7));
    }
}
