//! Retsu inside a Rust test suite: an SQS endpoint in-process, no container.
//!
//! A test starts an [`EmbeddedServer`] on a random loopback port, points
//! `aws-sdk-sqs` (or any client) at [`EmbeddedServer::endpoint_url`], and
//! moves time through [`EmbeddedServer::clock`] instead of sleeping: freeze
//! it, advance it past a visibility timeout or a delay, resume it. The
//! server is the same one the `retsu` binary runs (both start through
//! [`crate::server::start`]); only the clock differs, and it is a
//! [`Clock`] like any other, so every timer in the engine (visibility,
//! delays, long polls, retention, deduplication windows) follows it.
//!
//! This module is the stable embedding API: [`EmbeddedServer`],
//! [`EmbeddedBuilder`] and [`EmbeddedClock`]. Everything else in the crate
//! may change between releases.
//!
//! ```
//! use std::time::Duration;
//! use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
//! use retsu::embed::EmbeddedServer;
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = EmbeddedServer::builder().frozen().start().await?;
//! let sqs = aws_sdk_sqs::Client::from_conf(
//!     aws_sdk_sqs::Config::builder()
//!         .behavior_version(BehaviorVersion::latest())
//!         .region(Region::new(server.region().to_string()))
//!         .credentials_provider(Credentials::new("test", "test", None, None, "static"))
//!         .endpoint_url(server.endpoint_url())
//!         .build(),
//! );
//!
//! let url = sqs.create_queue().queue_name("jobs").send().await?.queue_url.unwrap();
//! assert_eq!(url, server.queue_url("jobs"));
//! sqs.send_message().queue_url(&url).message_body("later").delay_seconds(60).send().await?;
//! let now = sqs.receive_message().queue_url(&url).send().await?;
//! assert!(now.messages().is_empty(), "delayed for 60 s");
//!
//! server.clock().advance(Duration::from_secs(60)); // no sleeping
//! let later = sqs.receive_message().queue_url(&url).send().await?;
//! assert_eq!(later.messages()[0].body(), Some("later"));
//!
//! server.shutdown().await?;
//! # Ok(())
//! # }
//! ```

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, ControlledClock, SleepFuture};
use crate::config::Config;
use crate::server::{self, RunningServer};

/// A Retsu server running inside this process, on `127.0.0.1` and a port
/// the OS chose. Dropping it stops the server without waiting; call
/// [`EmbeddedServer::shutdown`] to wait until every connection is closed.
pub struct EmbeddedServer {
    server: RunningServer,
    clock: EmbeddedClock,
    endpoint: String,
    region: String,
    account_id: String,
    ca: Option<std::path::PathBuf>,
}

impl EmbeddedServer {
    /// Starts a server with the defaults: region `us-east-1`, account
    /// `000000000000`, a clock that runs on wall time (see
    /// [`EmbeddedBuilder`] for the options). Must be called inside a Tokio
    /// runtime; the server runs on that runtime's tasks.
    pub async fn start() -> io::Result<EmbeddedServer> {
        EmbeddedServer::builder().start().await
    }

    /// Options for [`EmbeddedBuilder::start`].
    pub fn builder() -> EmbeddedBuilder {
        EmbeddedBuilder::default()
    }

    /// `http://127.0.0.1:PORT` (`https://` after [`EmbeddedBuilder::tls`]):
    /// the endpoint URL to give the SDK.
    pub fn endpoint_url(&self) -> &str {
        &self.endpoint
    }

    /// After [`EmbeddedBuilder::tls`]: the PEM file of the certificate
    /// authority to trust for [`EmbeddedServer::endpoint_url`] (give it to
    /// the SDK's HTTP client's trust store). Plain `http://` keeps
    /// answering on the same port.
    pub fn ca_certificate(&self) -> Option<&std::path::Path> {
        self.ca.as_deref()
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    /// The region queues live in (and the SDK should be configured with).
    pub fn region(&self) -> &str {
        &self.region
    }

    /// The account id in queue URLs and ARNs.
    pub fn account_id(&self) -> &str {
        &self.account_id
    }

    /// The URL the server hands out for the queue `name` to a client that
    /// reaches it at [`EmbeddedServer::endpoint_url`].
    pub fn queue_url(&self, name: &str) -> String {
        format!("{}/{}/{}", self.endpoint, self.account_id, name)
    }

    /// The server's clock: freeze, advance, resume.
    pub fn clock(&self) -> &EmbeddedClock {
        &self.clock
    }

    /// Stops accepting connections, answers waiting long polls at once, and
    /// returns when in-flight requests have finished.
    pub async fn shutdown(self) -> io::Result<()> {
        self.server.shutdown().await
    }
}

/// How to start an [`EmbeddedServer`].
#[derive(Debug, Clone)]
pub struct EmbeddedBuilder {
    config: Config,
    frozen: bool,
    start_ms: Option<u64>,
    tls_dir: Option<std::path::PathBuf>,
}

impl Default for EmbeddedBuilder {
    fn default() -> EmbeddedBuilder {
        EmbeddedBuilder {
            config: Config {
                host: "127.0.0.1".into(),
                ..Config::ephemeral()
            },
            frozen: false,
            start_ms: None,
            tls_dir: None,
        }
    }
}

impl EmbeddedBuilder {
    /// The region (default `us-east-1`).
    pub fn region(mut self, region: &str) -> EmbeddedBuilder {
        self.config.region = region.to_string();
        self
    }

    /// The 12-digit account id (default `000000000000`).
    pub fn account_id(mut self, account_id: &str) -> EmbeddedBuilder {
        self.config.account_id = account_id.to_string();
        self
    }

    /// Start with the clock frozen: time moves only through
    /// [`EmbeddedClock::advance`] (or after [`EmbeddedClock::resume`]).
    pub fn frozen(mut self) -> EmbeddedBuilder {
        self.frozen = true;
        self
    }

    /// Start the clock at this time (epoch milliseconds) instead of now.
    pub fn start_at_ms(mut self, epoch_ms: u64) -> EmbeddedBuilder {
        self.start_ms = Some(epoch_ms);
        self
    }

    /// Answer TLS too, with a certificate for `localhost` and `127.0.0.1`
    /// from a local certificate authority kept in `dir` (made there on
    /// first use, reused after): [`EmbeddedServer::endpoint_url`] becomes
    /// `https://…` and [`EmbeddedServer::ca_certificate`] the CA to trust.
    pub fn tls(mut self, dir: impl Into<std::path::PathBuf>) -> EmbeddedBuilder {
        self.tls_dir = Some(dir.into());
        self
    }

    /// Binds a random loopback port and starts the server.
    pub async fn start(mut self) -> io::Result<EmbeddedServer> {
        let clock = EmbeddedClock::new(self.start_ms, self.frozen);
        let region = self.config.region.clone();
        let account_id = self.config.account_id.clone();
        let mut ca = None;
        if let Some(dir) = &self.tls_dir {
            // The local CA's files in `dir`, served as given files.
            let local = crate::tls::LocalCa::open(dir)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            self.config.tls.cert = Some(local.cert_path);
            self.config.tls.key = Some(local.key_path);
            ca = Some(local.ca_path);
        }
        let server = server::start(self.config, Arc::new(clock.clone())).await?;
        let endpoint = server
            .https_endpoint_url()
            .unwrap_or_else(|| server.endpoint_url());
        Ok(EmbeddedServer {
            server,
            clock,
            endpoint,
            region,
            account_id,
            ca,
        })
    }
}

/// The clock of an [`EmbeddedServer`]: wall time (plus whatever it was
/// advanced by) while running; still, moving only when told, while frozen.
/// It is the server's [`ControlledClock`] behind the stable embedding API.
/// Cloning gives another handle on the same clock.
///
/// ```
/// use std::time::Duration;
/// use retsu::clock::Clock;
/// use retsu::embed::EmbeddedClock;
///
/// let clock = EmbeddedClock::frozen_at(1_000);
/// clock.advance(Duration::from_millis(500));
/// assert_eq!(clock.now_ms(), 1_500);
/// clock.resume(); // runs on from 1 500 ms
/// assert!(clock.now_ms() >= 1_500 && !clock.is_frozen());
/// clock.freeze();
/// let t = clock.now_ms();
/// assert_eq!(clock.now_ms(), t);
/// ```
#[derive(Debug, Clone)]
pub struct EmbeddedClock {
    // The server's own controllable clock; this type is the stable
    // embedding API over it (no setting backwards, no reset).
    inner: ControlledClock,
}

impl EmbeddedClock {
    fn new(start_ms: Option<u64>, frozen: bool) -> EmbeddedClock {
        EmbeddedClock {
            inner: ControlledClock::from_settings(frozen, start_ms),
        }
    }

    /// A clock running on wall time.
    pub fn running() -> EmbeddedClock {
        EmbeddedClock::new(None, false)
    }

    /// A clock frozen at `epoch_ms`.
    pub fn frozen_at(epoch_ms: u64) -> EmbeddedClock {
        EmbeddedClock::new(Some(epoch_ms), true)
    }

    /// Whether time stands still.
    pub fn is_frozen(&self) -> bool {
        self.inner.is_frozen()
    }

    /// Stops time at the current instant (no-op if already frozen).
    pub fn freeze(&self) {
        self.inner.freeze();
    }

    /// Lets time run again from where it stands (no-op if running).
    pub fn resume(&self) {
        self.inner.resume();
    }

    /// Moves time forward by `by`, frozen or running; whatever was due in
    /// that span (visibility timeouts, delays, long-poll deadlines) happens.
    pub fn advance(&self, by: Duration) {
        self.inner.advance_ms(by.as_millis() as u64);
    }
}

impl Clock for EmbeddedClock {
    fn now_ms(&self) -> u64 {
        self.inner.now_ms()
    }

    fn sleep_until(&self, deadline_ms: u64) -> SleepFuture<'_> {
        self.inner.sleep_until(deadline_ms)
    }
}
