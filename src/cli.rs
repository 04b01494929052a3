//! The `retsu` command line: the server's flags ([`Config`]) plus
//! `--config FILE`, `--log-format`, and subcommands: `check-config FILE`
//! (validate without starting), `health` (probe a running server's
//! `/health`, for a scratch container's HEALTHCHECK, which has no curl),
//! `tls ca` (where the CA of `--tls` is), and the admin API's clients `peek`, `history`, `events`, `clock`,
//! `faults`, `reset` (see `admin_cli.rs`).
//!
//! Kept apart from [`Config`] so the server's settings stay one block that
//! tests and embedders build directly; this module only decides where each
//! value comes from (flag > environment variable > file > default).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::admin_cli::{AdminArgs, AdminCommand, ClockAction, ClusterAction, FaultsAction};
use crate::config::file::{ConfigError, FileConfig, QueuePlan, Source};
use crate::config::Config;

pub use crate::config::file::LogFormat;

/// An Amazon SQS wire-compatible emulator: one small binary, both wire
/// protocols (AWS JSON 1.0 and query/XML), real SQS semantics.
#[derive(Debug, Parser)]
#[command(name = "retsu", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub server: Config,

    /// Configuration file (TOML): settings and queues to create at start; see examples/retsu.toml.
    #[arg(long = "config", env = "RETSU_CONFIG", value_name = "FILE")]
    pub config_file: Option<PathBuf>,

    /// Log format: text for people, json (one object per line) for log shippers.
    #[arg(long, env = "RETSU_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Exit as soon as standard input closes: a wrapper that starts Retsu gives it a pipe, so the server ends with the wrapper's process, even one killed with SIGKILL.
    #[arg(long, env = "RETSU_EXIT_ON_STDIN_CLOSE", action = clap::ArgAction::SetTrue,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub exit_on_stdin_close: bool,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate a configuration file without starting; exits non-zero on the first problem.
    CheckConfig {
        /// The file to check.
        file: PathBuf,
    },
    /// Probe a running Retsu's GET /health; exits 0 when it answers "ok".
    Health {
        /// Base URL of the server [default: http://127.0.0.1:<port>, the port from flags, environment or file].
        #[arg(long, value_name = "URL")]
        endpoint: Option<String>,
        /// Seconds to wait for the connection, and for the answer.
        #[arg(long, default_value_t = 2)]
        timeout: u64,
    },
    /// Show a queue's messages without changing them (admin API).
    Peek {
        /// A queue name, region/account/name, or a queue URL.
        queue: String,
        /// available, inflight, delayed or all.
        #[arg(long, default_value = "all")]
        state: String,
        /// Most messages to show (up to 10000).
        #[arg(long, default_value_t = 100)]
        limit: usize,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Show a message's whole life, event by event (admin API).
    History {
        message_id: String,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Show recent message events (admin API).
    Events {
        /// Only this queue (name, region/account/name or URL).
        #[arg(long)]
        queue: Option<String>,
        /// Only these kinds, comma-separated (expired,purged,dead_lettered,…).
        #[arg(long)]
        kind: Option<String>,
        /// Only events after this: an event number, or a cluster's cursor
        /// (`next`, one number per shard: 1:120,2:45).
        #[arg(long)]
        since: Option<String>,
        /// Most events to show.
        #[arg(long, conflicts_with = "follow")]
        limit: Option<usize>,
        /// Keep printing events as they happen (GET /_retsu/events/stream); with --since, from there.
        #[arg(long, short = 'f')]
        follow: bool,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Show or move the server's clock (admin API).
    Clock {
        #[command(subcommand)]
        action: Option<ClockAction>,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Show, set or clear seeded faults (admin API).
    Faults {
        #[command(subcommand)]
        action: Option<FaultsAction>,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// List SNS topics with their subscriptions and filter policies (admin API).
    Topics {
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// List Lambda event source mappings: UUID, function, source queue, state, batch size and last result (admin API).
    Mappings {
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Show a cluster's nodes, their heartbeats, and the shards each holds (GET /_retsu/cluster); drain or undrain a node; move a queue to a node.
    Cluster {
        #[command(subcommand)]
        action: Option<ClusterAction>,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// HTTPS (--tls): the certificate authority Retsu makes for it.
    Tls {
        #[command(subcommand)]
        action: TlsAction,
    },
    /// Delete every queue and message, or empty one queue (admin API).
    Reset {
        /// Only empty this queue (keeps its attributes and tags).
        queue: Option<String>,
        #[command(flatten)]
        admin: AdminArgs,
    },
}

#[derive(Debug, Clone, Subcommand)]
pub enum TlsAction {
    /// Print the path of the CA certificate to trust for --tls (in --data-dir, else the per-user directory; made now if there is none yet).
    Ca,
}

impl Command {
    /// The admin-API client command this is, with its connection flags.
    pub fn admin(&self) -> Option<(AdminCommand, &AdminArgs)> {
        Some(match self {
            Command::Peek {
                queue,
                state,
                limit,
                admin,
            } => (
                AdminCommand::Peek {
                    queue: queue.clone(),
                    state: state.clone(),
                    limit: *limit,
                },
                admin,
            ),
            Command::History { message_id, admin } => (
                AdminCommand::History {
                    message_id: message_id.clone(),
                },
                admin,
            ),
            Command::Events {
                queue,
                kind,
                since,
                limit,
                follow,
                admin,
            } => (
                AdminCommand::Events {
                    queue: queue.clone(),
                    kind: kind.clone(),
                    since: since.clone(),
                    limit: *limit,
                    follow: *follow,
                },
                admin,
            ),
            Command::Clock { action, admin } => (AdminCommand::Clock(action.clone()), admin),
            Command::Topics { admin } => (AdminCommand::Topics, admin),
            Command::Mappings { admin } => (AdminCommand::Mappings, admin),
            Command::Cluster { action, admin } => (AdminCommand::Cluster(action.clone()), admin),
            Command::Faults { action, admin } => (AdminCommand::Faults(action.clone()), admin),
            Command::Reset { queue, admin } => (
                AdminCommand::Reset {
                    queue: queue.clone(),
                },
                admin,
            ),
            Command::CheckConfig { .. } | Command::Health { .. } | Command::Tls { .. } => {
                return None
            }
        })
    }
}

/// Everything start-up needs, with each value from its winning source.
#[derive(Debug)]
pub struct Resolved {
    pub config: Config,
    pub log_format: LogFormat,
    /// The configuration file that was read, if any.
    pub config_file: Option<PathBuf>,
    /// Its queues, resolved and ordered (empty without a file).
    pub plan: QueuePlan,
}

impl Cli {
    /// Parses these arguments (the first is the program name); environment
    /// variables are read as usual.
    pub fn try_parse_with_matches<I, T>(args: I) -> Result<(Cli, ArgMatches), clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let matches = Cli::command().try_get_matches_from(args)?;
        let cli = Cli::from_arg_matches(&matches)?;
        Ok((cli, matches))
    }

    /// Reads `file` (or `--config`, when `file` is `None`) and settles every
    /// setting: flag > environment variable > file > default.
    pub fn resolve(
        &self,
        matches: &ArgMatches,
        file: Option<&Path>,
    ) -> Result<Resolved, ConfigError> {
        let mut config = self.server.clone();
        let path = file.or(self.config_file.as_deref());
        let by_flag_or_variable = |id: &str| {
            matches!(
                matches.value_source(id),
                Some(ValueSource::CommandLine | ValueSource::EnvVariable)
            )
        };
        let mut resolved = match path {
            None => Resolved {
                config,
                log_format: self.log_format,
                config_file: None,
                plan: QueuePlan::empty(),
            },
            Some(path) => {
                let source = Source::read(path)?;
                let parsed = FileConfig::parse(&source)?;
                parsed.apply_settings(&source, &mut config, matches)?;
                if config.localstack {
                    localstack_layer(&mut config, |id| by_flag_or_variable(id) || parsed.sets(id))?;
                }
                let log_format = parsed.log_format(self.log_format, matches, "log_format");
                let plan = QueuePlan::build(&parsed, &source, &config)?;
                return Ok(Resolved {
                    config,
                    log_format,
                    config_file: Some(path.to_path_buf()),
                    plan,
                });
            }
        };
        if resolved.config.localstack {
            localstack_layer(&mut resolved.config, by_flag_or_variable)?;
        }
        Ok(resolved)
    }
}

/// `--localstack`'s defaults and LocalStack's variables, under what
/// `given` reports as set by a flag, a variable or the file.
fn localstack_layer(config: &mut Config, given: impl Fn(&str) -> bool) -> Result<(), ConfigError> {
    let problem = |message: String| ConfigError {
        file: "--localstack".into(),
        line: None,
        column: None,
        message,
        excerpt: None,
    };
    if config.no_localstack {
        return Err(problem(
            "--no-localstack turns off what --localstack asks for; give one".into(),
        ));
    }
    crate::localstack::settings::apply(config, given, |k| std::env::var(k).ok()).map_err(problem)
}

impl Resolved {
    /// `http://host:port` a local probe can reach (loopback for a wildcard).
    pub fn local_endpoint(&self) -> String {
        let host = match self.config.host.as_str() {
            "" | "0.0.0.0" => "127.0.0.1".to_string(),
            "::" | "[::]" => "[::1]".to_string(),
            h if h.contains(':') && !h.starts_with('[') => format!("[{h}]"),
            h => h.to_string(),
        };
        format!("http://{host}:{}", self.config.port)
    }
}

/// GETs `<endpoint>/health` over plain HTTP/1.1 and expects `200` with body
/// `ok`. A std socket on purpose: no HTTP client in the binary for this.
pub fn probe_health(endpoint: &str, timeout: Duration) -> Result<(), String> {
    let rest = endpoint
        .trim()
        .strip_prefix("http://")
        .ok_or_else(|| format!("{endpoint}: the endpoint must start with http://"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let path = if path.ends_with("/health") {
        path.to_string()
    } else {
        format!("{path}/health")
    };
    let with_port = if authority.rsplit_once(':').is_some_and(|(_, p)| {
        !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) && !p.contains(']')
    }) {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    let addrs: Vec<_> = with_port
        .to_socket_addrs()
        .map_err(|e| format!("{authority}: cannot resolve: {e}"))?
        .collect();
    let mut last = format!("{authority}: no address");
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(mut stream) => {
                let _ = stream.set_read_timeout(Some(timeout));
                let _ = stream.set_write_timeout(Some(timeout));
                let request = format!(
                    "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
                );
                stream
                    .write_all(request.as_bytes())
                    .map_err(|e| format!("{addr}: {e}"))?;
                let mut answer = Vec::new();
                stream
                    .read_to_end(&mut answer)
                    .map_err(|e| format!("{addr}: no answer: {e}"))?;
                let answer = String::from_utf8_lossy(&answer);
                let status = answer.lines().next().unwrap_or("");
                let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b).trim();
                return if status.split_whitespace().nth(1) == Some("200") && body == "ok" {
                    Ok(())
                } else {
                    Err(format!("{addr}: unhealthy answer: {status} {body:?}"))
                };
            }
            Err(e) => last = format!("{addr}: cannot connect: {e}"),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_retsu_still_parses_and_matches_the_defaults() {
        let (cli, _) = Cli::try_parse_with_matches(["retsu"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.server, Config::default());
        assert_eq!(cli.log_format, LogFormat::Text);
        Cli::command().debug_assert();
    }

    #[test]
    fn subcommands_parse() {
        let (cli, _) = Cli::try_parse_with_matches(["retsu", "check-config", "x.toml"]).unwrap();
        assert!(
            matches!(cli.command, Some(Command::CheckConfig { file }) if file == Path::new("x.toml"))
        );
        let (cli, _) = Cli::try_parse_with_matches([
            "retsu",
            "--port",
            "9400",
            "health",
            "--endpoint",
            "http://retsu:9324",
        ])
        .unwrap();
        assert_eq!(cli.server.port, 9400);
        assert!(
            matches!(cli.command, Some(Command::Health { endpoint: Some(e), timeout: 2 }) if e == "http://retsu:9324")
        );
        assert!(Cli::try_parse_with_matches(["retsu", "--log-format", "xml"]).is_err());
    }

    #[test]
    fn localstack_defaults_sit_under_the_file_and_the_flags() {
        let dir = std::env::temp_dir().join(format!("retsu-cli-ls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("r.toml");
        std::fs::write(&file, "localstack = true\nport = 5000\n").unwrap();
        let path = file.to_str().unwrap();
        // The file's port, and LocalStack's URL host on that port.
        let (cli, m) = Cli::try_parse_with_matches(["retsu", "--config", path]).unwrap();
        let c = cli.resolve(&m, None).unwrap().config;
        assert_eq!(c.port, 5000);
        assert_eq!(
            c.pinned_base_url("http://", c.port).as_deref(),
            Some("http://localhost.localstack.cloud:5000")
        );
        assert!(c.engine_config().region_in_every_url);
        // A flag beats the file; without the switch nothing changes.
        let (cli, m) =
            Cli::try_parse_with_matches(["retsu", "--config", path, "--port", "6000"]).unwrap();
        assert_eq!(cli.resolve(&m, None).unwrap().config.port, 6000);
        let (cli, m) = Cli::try_parse_with_matches(["retsu", "--port", "6000"]).unwrap();
        let c = cli.resolve(&m, None).unwrap().config;
        assert_eq!((c.port, c.pinned_base_url("http://", 6000)), (6000, None));
        let (cli, m) =
            Cli::try_parse_with_matches(["retsu", "--localstack", "--no-localstack"]).unwrap();
        assert!(cli.resolve(&m, None).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn tls_flags_and_subcommand_parse() {
        let (cli, _) = Cli::try_parse_with_matches(["retsu", "--tls", "tls", "ca"]).unwrap();
        assert!(cli.server.tls.enabled && cli.server.tls.wanted());
        assert!(matches!(
            cli.command,
            Some(Command::Tls {
                action: TlsAction::Ca
            })
        ));
        let (cli, _) =
            Cli::try_parse_with_matches(["retsu", "--tls-cert", "c.pem", "--tls-key", "k.pem"])
                .unwrap();
        assert!(cli.server.tls.wanted() && !cli.server.tls.enabled);
        assert_eq!(cli.server.tls.cert.as_deref(), Some(Path::new("c.pem")));
        assert_eq!(cli.server.tls.key.as_deref(), Some(Path::new("k.pem")));
    }

    #[test]
    fn local_endpoint_reaches_wildcards_through_loopback() {
        let (cli, m) =
            Cli::try_parse_with_matches(["retsu", "--host", "0.0.0.0", "--port", "1"]).unwrap();
        assert_eq!(
            cli.resolve(&m, None).unwrap().local_endpoint(),
            "http://127.0.0.1:1"
        );
        let (cli, m) = Cli::try_parse_with_matches(["retsu", "--host", "::1"]).unwrap();
        assert_eq!(
            cli.resolve(&m, None).unwrap().local_endpoint(),
            "http://[::1]:9324"
        );
    }

    #[test]
    fn probe_refuses_what_it_cannot_reach() {
        assert!(probe_health("https://x", Duration::from_secs(1))
            .unwrap_err()
            .contains("http://"));
        // A port nobody listens on (bound, then released).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let err =
            probe_health(&format!("http://127.0.0.1:{port}"), Duration::from_secs(1)).unwrap_err();
        assert!(err.contains("cannot connect"), "{err}");
    }

    #[test]
    fn probe_reads_a_health_answer() {
        // A one-shot fake server: the probe's request line and its verdict.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            for answer in ["HTTP/1.1 200 OK\r\n\r\nok", "HTTP/1.1 503 No\r\n\r\nbusy"] {
                let (mut s, _) = listener.accept().unwrap();
                let mut buf = [0u8; 512];
                let n = s.read(&mut buf).unwrap();
                let request = String::from_utf8_lossy(&buf[..n]).to_string();
                assert!(request.starts_with("GET /health HTTP/1.1\r\n"), "{request}");
                s.write_all(answer.as_bytes()).unwrap();
            }
        });
        let url = format!("http://{addr}/");
        assert_eq!(probe_health(&url, Duration::from_secs(5)), Ok(()));
        let err = probe_health(&url, Duration::from_secs(5)).unwrap_err();
        assert!(err.contains("503"), "{err}");
        server.join().unwrap();
    }
}
