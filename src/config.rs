//! Server configuration: command-line flags, each with an environment
//! variable twin so container set-ups need no arguments.
//!
//! [`Config::default`] equals the command-line defaults, so tests and
//! embedders can start from it without reading the environment.

use clap::builder::BoolishValueParser;
use clap::{ArgAction, Parser};

use crate::clock::{parse_rfc3339, ControlledClock};
use crate::engine::EngineConfig;

pub mod file;
pub mod topics;

/// An Amazon SQS wire-compatible emulator: one small binary, both wire
/// protocols (AWS JSON 1.0 and query/XML), real SQS semantics.
#[derive(Debug, Clone, PartialEq, Eq, Parser)]
#[command(name = "retsu", version, about, long_about = None)]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "RETSU_HOST", default_value = "127.0.0.1")]
    pub host: String,

    /// Port to listen on (0 picks a free port).
    #[arg(long, env = "RETSU_PORT", default_value_t = 9324)]
    pub port: u16,

    /// Region for requests whose signature names none.
    #[arg(long, env = "RETSU_REGION", default_value = "us-east-1", value_parser = parse_region)]
    pub region: String,

    /// Account ID used in queue URLs and ARNs.
    #[arg(long, env = "RETSU_ACCOUNT_ID", default_value = "000000000000", value_parser = parse_account)]
    pub account_id: String,

    /// Pin the base of returned queue URLs (e.g. http://sqs.local:9324) instead of using each request's Host header.
    #[arg(long, env = "RETSU_BASE_URL", value_parser = parse_base_url)]
    pub base_url: Option<String>,

    /// Give queues of non-default regions AWS's host shape, http://sqs.<region>.<host>:<port>/<account>/<name>, instead of http://<host>:<port>/queue/<region>/<account>/<name> (needs DNS for those names).
    #[arg(long, env = "RETSU_HOST_STYLE_QUEUE_URLS", action = ArgAction::SetTrue,
          value_parser = BoolishValueParser::new())]
    pub host_style_queue_urls: bool,

    /// LocalStack's `standard` queue-URL host (`LOCALSTACK_HOST`, else
    /// localhost.localstack.cloud) and port (`None`: the port the server is
    /// bound to); set by `--localstack`. URLs on it keep the scheme the
    /// request came in on, unlike a pinned `--base-url`.
    #[arg(skip)]
    pub localstack_url_host: Option<(String, Option<u16>)>,

    /// Name the region in the default region's queue URLs too (LocalStack's
    /// `standard` and `path` endpoint strategies); set by `--localstack`.
    #[arg(skip)]
    pub region_in_every_url: bool,

    /// Enforce AWS's 60-second PurgeQueue and queue re-creation rules.
    #[arg(long, env = "RETSU_STRICT_TIMING", action = ArgAction::SetTrue,
          value_parser = BoolishValueParser::new())]
    pub strict_timing: bool,

    /// Start the clock running on system time, or frozen (moved only through POST /_retsu/clock): for fully deterministic test suites.
    #[arg(long, env = "RETSU_CLOCK", value_enum, default_value_t = ClockMode::Running)]
    pub clock: ClockMode,

    /// The clock's time at start (RFC 3339, e.g. 2026-01-01T00:00:00Z) instead of now.
    #[arg(long, env = "RETSU_CLOCK_START", value_name = "TIME", value_parser = parse_time)]
    pub clock_start: Option<u64>,

    /// Serve no admin API (/_retsu/*, /_aws/sqs/messages): those paths then answer as SQS does.
    #[arg(long, env = "RETSU_NO_ADMIN", action = ArgAction::SetTrue,
          value_parser = BoolishValueParser::new())]
    pub no_admin: bool,

    /// Require "Authorization: Bearer <TOKEN>" on every admin API call.
    #[arg(
        long,
        env = "RETSU_ADMIN_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub admin_token: Option<String>,

    /// Verify AWS Signature Version 4 on every SQS request (off by default, as in every local emulator); needs --auth-key.
    #[arg(long, env = "RETSU_AUTH", action = ArgAction::SetTrue,
          value_parser = BoolishValueParser::new())]
    pub auth: bool,

    /// A key --auth accepts, ACCESS_KEY:SECRET:ACCOUNT_ID; the caller acts as that account (repeatable; the variable takes a comma-separated list).
    #[arg(long = "auth-key", env = "RETSU_AUTH_KEYS", value_name = "ACCESS_KEY:SECRET:ACCOUNT_ID",
          value_delimiter = ',', value_parser = crate::auth::parse_auth_key, hide_env_values = true)]
    pub auth_keys: Vec<crate::auth::AuthKey>,

    /// LocalStack's defaults, for a drop-in replacement: port 4566, its queue URLs (http://sqs.<region>.localhost.localstack.cloud:4566/<account>/<name>), "Ready." on stdout once serving, and its variables GATEWAY_LISTEN, LOCALSTACK_HOST, SQS_ENDPOINT_STRATEGY, LS_LOG and DEBUG; Retsu's own flags, variables and file keys still win.
    #[arg(long, env = "RETSU_LOCALSTACK", action = ArgAction::SetTrue,
          value_parser = BoolishValueParser::new())]
    pub localstack: bool,

    /// Serve none of LocalStack's endpoints (/_localstack/*, /_aws/*) and run no LocalStack init hooks (they are on by default).
    #[arg(long, env = "RETSU_NO_LOCALSTACK", action = ArgAction::SetTrue,
          value_parser = BoolishValueParser::new())]
    pub no_localstack: bool,

    /// LocalStack's init-hook directory: the scripts in its boot.d, start.d, ready.d and shutdown.d run at those stages [default: /etc/localstack/init, when it exists].
    #[arg(long, env = "RETSU_INIT_DIR", value_name = "DIR")]
    pub init_dir: Option<std::path::PathBuf>,

    /// Recent message events kept for the admin API's history (0: keep no history).
    #[arg(long, env = "RETSU_HISTORY_EVENTS", default_value_t = 100_000)]
    pub history_events: usize,

    /// Finished messages (deleted, expired, ...) whose whole history is kept past that window.
    #[arg(long, env = "RETSU_HISTORY_FINISHED", default_value_t = 1_000)]
    pub history_finished: usize,

    /// Keep queues and messages in this directory (SQLite), so they survive a restart or a crash; without it, everything lives in memory.
    #[arg(long, env = "RETSU_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<std::path::PathBuf>,

    /// Keep queues and messages in a PostgreSQL database (postgres://user[:password]@host[:port]/database), in its schema "retsu"; instead of --data-dir.
    #[arg(long, env = "RETSU_STORE", value_name = "URL", value_parser = crate::journal::Store::parse, conflicts_with = "data_dir", hide_env_values = true)]
    pub store: Option<crate::journal::Store>,

    /// With --data-dir or --store, what an answer survives: "full" answers after a commit that survives power loss; "process" after the commit reached the OS or the database (survives kill -9 of Retsu, not a power cut); "relaxed" answers at once and commits every 200 ms (a crash may lose the last 200 ms).
    #[arg(long, env = "RETSU_DURABILITY", value_enum, default_value_t = crate::journal::DurabilityMode::Full)]
    pub durability: crate::journal::DurabilityMode,

    /// Run as a node of a cluster on the --store PostgreSQL database; every node is given the same secret, and requests between nodes carry it.
    #[arg(
        long,
        env = "RETSU_CLUSTER_SECRET",
        value_name = "SECRET",
        hide_env_values = true
    )]
    pub cluster_secret: Option<String>,

    /// This node's id in the cluster, unique among live nodes (default: the host name and the port).
    #[arg(long, env = "RETSU_NODE_ID", value_name = "ID")]
    pub node_id: Option<String>,

    /// The URL the other nodes reach this node at (default: http://<host name>:<port>).
    #[arg(long, env = "RETSU_NODE_URL", value_name = "URL")]
    pub node_url: Option<String>,

    /// Seconds the cluster's lease on the store lasts: a node that stops renewing it stops answering within this, and another node takes over after it.
    #[arg(long = "lease", env = "RETSU_LEASE", value_name = "SECONDS", default_value = "5", value_parser = parse_lease)]
    pub lease_ms: u64,

    /// How many shards a cluster's new store is split into (each queue and topic lives in one; a node holds its share of them); a store keeps the count it was made with.
    #[arg(long, env = "RETSU_SHARDS", value_name = "N", default_value = "8", value_parser = clap::value_parser!(i32).range(1..=1024))]
    pub shards: i32,

    /// Where the server is reached when a request does not say (no Host)
    /// and for the admin API's queue URLs; default the listen address. A
    /// cluster node's engine sets it to the node's own port.
    #[arg(skip)]
    pub reached_at: Option<String>,

    /// Log level or tracing filter (e.g. info, debug, retsu=trace).
    #[arg(long, env = "RETSU_LOG_LEVEL", default_value = "info")]
    pub log_level: String,

    /// A Lambda function event source mappings can name: NAME=URL, the URL of an endpoint speaking Lambda's Invoke API (a bare http://host:port means the runtime interface emulator's /2015-03-31/functions/function/invocations on it). Repeatable; the variable takes a comma-separated list.
    #[arg(long = "function", env = "RETSU_FUNCTIONS", value_name = "NAME=URL",
          value_delimiter = ',', value_parser = crate::lambda::FunctionTarget::parse_flag)]
    pub functions: Vec<crate::lambda::FunctionTarget>,

    /// `[[event_source_mappings]]` of the configuration file, made (or
    /// brought to the file's settings) when the server starts.
    #[arg(skip)]
    pub event_source_mappings: Vec<crate::lambda::DeclaredMapping>,

    #[command(flatten)]
    pub limits: HttpLimits,

    /// HTTPS on the same port (`src/tls`).
    #[command(flatten)]
    pub tls: crate::tls::TlsArgs,
}

/// A lease length: long enough to renew a few times over a slow network,
/// short enough that a lost node is replaced quickly.
/// In milliseconds.
fn parse_lease(value: &str) -> Result<u64, String> {
    let seconds: f64 = value
        .parse()
        .map_err(|_| format!("{value:?} is not a number of seconds"))?;
    if !(0.5..=300.0).contains(&seconds) {
        return Err(format!("{seconds} is outside 0.5 to 300 seconds"));
    }
    Ok((seconds * 1000.0).round() as u64)
}

/// How the server's clock starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockMode {
    /// System time (plus any offset the admin API adds).
    #[default]
    Running,
    /// Stopped until the admin API advances, sets or resumes it.
    Frozen,
}

/// What one client may cost the server: every connection, request and
/// shutdown is bounded in time and size, so careless or hostile clients
/// cannot hold memory, sockets or a shutdown forever.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct HttpLimits {
    /// Seconds a client has to send a request's headers; also how long an idle keep-alive connection stays open.
    #[arg(long, env = "RETSU_HEADER_TIMEOUT", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout: u64,

    /// Seconds a client has to send a request's body.
    #[arg(long, env = "RETSU_BODY_TIMEOUT", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub body_timeout: u64,

    /// Most connections open at once; more are closed on accept (also capped by the file-descriptor limit).
    #[arg(long, env = "RETSU_MAX_CONNECTIONS", default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,

    /// Most header fields in one request.
    #[arg(long, env = "RETSU_MAX_HEADERS", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub max_headers: u64,

    /// Most bytes of a request's line and headers together.
    #[arg(long, env = "RETSU_MAX_HEADER_BYTES", default_value_t = 64 * 1024, value_parser = clap::value_parser!(u64).range(1024..=16 * 1024 * 1024))]
    pub max_header_bytes: u64,

    /// Seconds shutdown waits for unfinished requests before dropping their connections.
    #[arg(long, env = "RETSU_SHUTDOWN_TIMEOUT", default_value_t = 5)]
    pub shutdown_timeout: u64,
}

impl Default for HttpLimits {
    fn default() -> HttpLimits {
        HttpLimits {
            header_timeout: 30,
            body_timeout: 60,
            max_connections: 20_000,
            max_headers: 100,
            max_header_bytes: 64 * 1024,
            shutdown_timeout: 5,
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            host: "127.0.0.1".into(),
            port: 9324,
            region: "us-east-1".into(),
            account_id: "000000000000".into(),
            base_url: None,
            localstack_url_host: None,
            host_style_queue_urls: false,
            region_in_every_url: false,
            strict_timing: false,
            clock: ClockMode::Running,
            clock_start: None,
            no_admin: false,
            admin_token: None,
            auth: false,
            auth_keys: Vec::new(),
            localstack: false,
            no_localstack: false,
            init_dir: None,
            history_events: 100_000,
            history_finished: 1_000,
            data_dir: None,
            store: None,
            durability: crate::journal::DurabilityMode::Full,
            cluster_secret: None,
            node_id: None,
            node_url: None,
            lease_ms: 5_000,
            shards: 8,
            reached_at: None,
            log_level: "info".into(),
            functions: Vec::new(),
            event_source_mappings: Vec::new(),
            limits: HttpLimits::default(),
            tls: crate::tls::TlsArgs::default(),
        }
    }
}

impl Config {
    /// Defaults on a random free loopback port: what tests want.
    pub fn ephemeral() -> Config {
        Config {
            port: 0,
            ..Config::default()
        }
    }

    /// Where the journal keeps state, if anywhere: `--store` or `--data-dir`.
    pub fn journal_store(&self) -> Option<crate::journal::Store> {
        self.store
            .clone()
            .or_else(|| self.data_dir.clone().map(crate::journal::Store::Dir))
    }

    /// The clock `--clock` and `--clock-start` ask for.
    pub fn build_clock(&self) -> ControlledClock {
        ControlledClock::from_settings(self.clock == ClockMode::Frozen, self.clock_start)
    }

    /// The base every queue URL starts with, when it does not come from
    /// each request's `Host`: `--base-url` as given, else LocalStack's
    /// `standard` host with `scheme` (the request's) and `bound_port` when
    /// `LOCALSTACK_HOST` names no port.
    pub fn pinned_base_url(&self, scheme: &str, bound_port: u16) -> Option<String> {
        self.base_url.clone().or_else(|| {
            self.localstack_url_host
                .as_ref()
                .map(|(host, port)| format!("{scheme}{host}:{}", port.unwrap_or(bound_port)))
        })
    }

    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            strict_timing: self.strict_timing,
            default_region: self.region.clone(),
            host_style_urls: self.host_style_queue_urls,
            region_in_every_url: self.region_in_every_url,
        }
    }
}

pub(crate) fn parse_time(s: &str) -> Result<u64, String> {
    parse_rfc3339(s).ok_or_else(|| "a time is RFC 3339, e.g. 2026-01-01T00:00:00Z".into())
}

pub(crate) fn parse_region(s: &str) -> Result<String, String> {
    let ok = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok {
        Ok(s.to_string())
    } else {
        Err("a region is lower-case letters, digits and '-', e.g. us-east-1".into())
    }
}

pub(crate) use crate::api::parse_account;

/// `scheme://authority`, stored without a trailing slash so that
/// `base + "/<account>/<queue>"` is a well-formed URL.
pub(crate) fn parse_base_url(s: &str) -> Result<String, String> {
    let trimmed = s.trim().trim_end_matches('/');
    let rest = trimmed
        .strip_prefix("http://")
        .or_else(|| trimmed.strip_prefix("https://"))
        .ok_or("the base URL must start with http:// or https://")?;
    if rest.is_empty() || rest.contains(char::is_whitespace) {
        return Err("the base URL needs a host, e.g. http://localhost:9324".into());
    }
    Ok(trimmed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn defaults_match_the_cli() {
        // try_parse_from still reads RETSU_* variables; none are set in tests.
        let parsed = Config::try_parse_from(["retsu"]).unwrap();
        assert_eq!(parsed, Config::default());
    }

    #[test]
    fn flags() {
        let c = Config::try_parse_from([
            "retsu",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--region",
            "eu-west-1",
            "--account-id",
            "123456789012",
            "--base-url",
            "http://sqs.local:9324/",
            "--strict-timing",
            "--host-style-queue-urls",
            "--log-level",
            "debug",
        ])
        .unwrap();
        assert!(c.engine_config().host_style_urls);
        assert_eq!(c.engine_config().default_region, "eu-west-1");
        assert_eq!(c.port, 0);
        assert_eq!(c.base_url.as_deref(), Some("http://sqs.local:9324"));
        assert!(c.engine_config().strict_timing);
        assert_eq!(c.account_id, "123456789012");
    }

    #[test]
    fn clock_and_admin_flags() {
        let c = Config::try_parse_from([
            "retsu",
            "--clock",
            "frozen",
            "--clock-start",
            "2026-01-01T00:00:00Z",
            "--no-admin",
            "--admin-token",
            "s3cret",
        ])
        .unwrap();
        assert_eq!(c.clock, ClockMode::Frozen);
        assert_eq!(c.clock_start, Some(1_767_225_600_000));
        assert!(c.no_admin);
        assert_eq!(c.admin_token.as_deref(), Some("s3cret"));
        let clock = c.build_clock();
        assert!(clock.is_frozen());
        assert_eq!(crate::clock::Clock::now_ms(&clock), 1_767_225_600_000);
        assert!(Config::try_parse_from(["retsu", "--clock-start", "soon"]).is_err());
        assert!(Config::try_parse_from(["retsu", "--clock", "slow"]).is_err());
    }

    #[test]
    fn rejects_bad_values() {
        for args in [
            ["retsu", "--account-id", "42"],
            ["retsu", "--region", "US East"],
            ["retsu", "--base-url", "sqs.local"],
            ["retsu", "--port", "70000"],
        ] {
            assert!(Config::try_parse_from(args).is_err(), "{args:?}");
        }
    }

    #[test]
    fn help_lists_every_option() {
        Config::command().debug_assert();
        let help = Config::command().render_help().to_string();
        for flag in [
            "--host",
            "--port",
            "--region",
            "--account-id",
            "--base-url",
            "--strict-timing",
            "--host-style-queue-urls",
            "--log-level",
            "--header-timeout",
            "--body-timeout",
            "--max-connections",
            "--max-headers",
            "--max-header-bytes",
            "--shutdown-timeout",
            "--clock",
            "--clock-start",
            "--no-admin",
            "--admin-token",
            "--localstack",
            "--no-localstack",
            "--init-dir",
            "--tls",
            "--tls-cert",
            "--tls-key",
            "RETSU_PORT",
        ] {
            assert!(help.contains(flag), "{flag} missing from:\n{help}");
        }
    }
}
