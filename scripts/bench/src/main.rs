//! `retsu-bench`: drives an SQS endpoint through its scenarios (send,
//! batches, drain, pipelines, long polls, FIFO, depth, memory, start-up,
//! SNS publish) and reports throughput, latency and memory, with every
//! Retsu figure also as a percentage of a null server that does no work
//! (the HTTP floor).
//!
//! ```text
//! cargo build --release && cargo run --release -p retsu-bench -- --all
//! ```
//!
//! It starts its own servers (a fresh process per measurement): the release
//! `retsu` binary and the null server (this binary with `--serve-null`).
//! Rounds alternate which server goes first; tables show medians over
//! rounds, and "% of floor" is the median of per-round ratios. The JSON
//! report goes to target/bench/results.json. The exit status is non-zero
//! only when a scenario fails or a check fails (a lost, duplicated or
//! misordered message), never for a slow figure.

mod client;
mod lambda;
mod null;
mod proc;
mod report;
mod scenarios;

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Parser;
use serde_json::json;

use client::{ClientKind, Endpoint};

/// The same allocator as the server: the client's (and the null server's)
/// allocations are part of the floor.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use proc::{Launcher, ServerKind};
use report::{Failure, Measurement};
use scenarios::{Run, Sizes};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub type BoxResult<T> = Result<T, BoxError>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Scenario {
    Send,
    SendBatch,
    Drain,
    Pipeline,
    LongpollWake,
    Fifo,
    Backlog,
    Memory,
    Startup,
    Publish,
    Lambda,
}

const ALL: [Scenario; 11] = [
    Scenario::Startup,
    Scenario::Send,
    Scenario::SendBatch,
    Scenario::Drain,
    Scenario::Pipeline,
    Scenario::LongpollWake,
    Scenario::Fifo,
    Scenario::Backlog,
    Scenario::Memory,
    Scenario::Publish,
    Scenario::Lambda,
];

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::Send => "send",
            Scenario::SendBatch => "send-batch",
            Scenario::Drain => "drain",
            Scenario::Pipeline => "pipeline",
            Scenario::LongpollWake => "longpoll-wake",
            Scenario::Fifo => "fifo",
            Scenario::Backlog => "backlog",
            Scenario::Memory => "memory",
            Scenario::Startup => "startup",
            Scenario::Publish => "publish",
            Scenario::Lambda => "lambda",
        }
    }

    /// Whether the null server runs it too, as the floor.
    fn has_floor(self) -> bool {
        matches!(
            self,
            Scenario::Send | Scenario::SendBatch | Scenario::Drain | Scenario::Pipeline
        )
    }

    /// Whether the client mode matters (otherwise the raw client is used).
    fn per_client(self) -> bool {
        !matches!(
            self,
            Scenario::Backlog
                | Scenario::Memory
                | Scenario::Startup
                | Scenario::Publish
                | Scenario::Lambda
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Protocol {
    Json,
    Query,
}

/// Benchmarks an SQS endpoint (Retsu by default) against a null-server floor.
#[derive(Debug, Parser)]
#[command(name = "retsu-bench", version, about)]
struct Cli {
    /// Run every scenario.
    #[arg(long)]
    all: bool,

    /// Scenarios to run (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    scenario: Vec<Scenario>,

    /// Small sizes and one round (about 10 s): a smoke test that fails only
    /// when a scenario errors or a check fails. Implies --all unless
    /// --scenario is given.
    #[arg(long)]
    quick: bool,

    /// Client modes (comma-separated): raw (lean hyper JSON client) and sdk
    /// (aws-sdk-sqs). backlog, memory and startup always use raw.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "raw,sdk")]
    client: Vec<ClientKind>,

    /// Rounds per measurement (default 3; 1 with --quick).
    #[arg(long)]
    rounds: Option<usize>,

    /// Multiply the message counts of the full run by this factor.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,

    /// Drive this endpoint (http://HOST:PORT) instead of starting retsu.
    #[arg(long)]
    endpoint: Option<String>,

    /// The --endpoint server's process id, for the memory scenario and CPU
    /// figures.
    #[arg(long)]
    endpoint_pid: Option<u32>,

    /// The raw client's protocol: json (AWS JSON 1.0, what current SDKs
    /// speak to SQS) or query (form posts and XML answers, for an
    /// --endpoint that serves only that).
    #[arg(long, value_enum, default_value = "json")]
    protocol: Protocol,

    /// Messages the memory scenario stores [default: 200,000; 20,000 with
    /// --quick]; fewer for a slow --endpoint.
    #[arg(long)]
    memory_messages: Option<u64>,

    /// Skip the null-server floor runs.
    #[arg(long)]
    no_floor: bool,

    /// The retsu binary [default: target/release/retsu].
    #[arg(long)]
    retsu_bin: Option<PathBuf>,

    /// Also measure send, send-batch and drain on a durable server
    /// (--data-dir, full durability) in the same rounds, against in-memory.
    #[arg(long)]
    durable: bool,

    /// With --durable: the durable server keeps its state in this
    /// PostgreSQL database (`--store`) instead of a data directory; its
    /// `retsu` schema is dropped (psql) before each start.
    #[arg(long, value_name = "URL")]
    durable_store: Option<String>,

    /// With --durable: the durable server's --durability (full, process, relaxed).
    #[arg(long, default_value = "full")]
    durability: String,

    /// An extra argument for retsu (repeatable), e.g. --retsu-arg=--log-level=warn.
    #[arg(long = "retsu-arg", allow_hyphen_values = true)]
    retsu_args: Vec<String>,

    /// Where to write the JSON report [default: target/bench/results.json].
    #[arg(long)]
    out: Option<PathBuf>,

    /// Only serve the null server on this port (0: any) until killed.
    #[arg(long, value_name = "PORT")]
    serve_null: Option<u16>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(port) = cli.serve_null {
        return match null::serve(port) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("retsu-bench null server: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("retsu-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(bench(cli)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("retsu-bench: {e}");
            ExitCode::from(2)
        }
    }
}

/// The target directory: $CARGO_TARGET_DIR, else the workspace's target/.
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    workspace.canonicalize().unwrap_or(workspace).join("target")
}

fn resolve(endpoint: &str) -> BoxResult<SocketAddr> {
    let hostport = endpoint
        .strip_prefix("http://")
        .ok_or("--endpoint must be http://HOST:PORT")?
        .trim_end_matches('/');
    hostport
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| format!("cannot resolve {hostport}").into())
}

/// Warns when the retsu binary is older than the sources it is built from.
fn warn_if_stale(bin: &Path) {
    let Ok(built) = bin.metadata().and_then(|m| m.modified()) else {
        return;
    };
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../src");
    let mut stack = vec![src];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t > built)
            {
                eprintln!(
                    "warning: {} is newer than {}: run `cargo build --release` first",
                    path.display(),
                    bin.display()
                );
                return;
            }
        }
    }
}

struct Bench {
    launcher: Launcher,
    sizes: Sizes,
    quick: bool,
    /// Some(addr) when driving an --endpoint.
    endpoint: Option<SocketAddr>,
    endpoint_pid: Option<u32>,
    /// Raw clients speak the query protocol.
    query: bool,
    floor: bool,
    durable: bool,
    measurements: Vec<Measurement>,
    failures: Vec<Failure>,
}

impl Bench {
    fn under_test(&self) -> ServerKind {
        if self.endpoint.is_some() {
            ServerKind::Endpoint
        } else {
            ServerKind::Retsu
        }
    }

    /// How long one measurement may take.
    fn limit(&self, scenario: Scenario) -> Duration {
        match (self.quick, scenario) {
            (true, _) => Duration::from_secs(60),
            (false, Scenario::Backlog | Scenario::Memory) => Duration::from_secs(900),
            (false, _) => Duration::from_secs(300),
        }
    }

    fn record(&mut self, result: BoxResult<Vec<Measurement>>, what: Failure, round: usize) {
        match result {
            Ok(ms) => {
                for mut m in ms {
                    m.round = round;
                    eprintln!("  {}", progress(&m));
                    self.measurements.push(m);
                }
            }
            Err(e) => {
                let failure = Failure {
                    error: e.to_string(),
                    ..what
                };
                eprintln!(
                    "  FAILED {} {} {} {}: {}",
                    failure.scenario,
                    failure.variant,
                    failure.client,
                    failure.server,
                    failure.error
                );
                self.failures.push(failure);
            }
        }
    }

    /// Runs one scenario variant against one server (started fresh).
    async fn measure(
        &mut self,
        scenario: Scenario,
        variant: &str,
        client: ClientKind,
        server: ServerKind,
        round: usize,
        f: &(dyn for<'r, 's> Fn(&'r Run<'s>) -> ScenarioFuture<'r> + Sync),
    ) {
        let limit = self.limit(scenario);
        let result = async {
            let mut data_dir = None;
            let (process, addr, pid) = match (server, self.endpoint) {
                (ServerKind::Endpoint, Some(addr)) => (None, addr, self.endpoint_pid),
                _ => {
                    let p = self.launcher.start(server)?;
                    data_dir = p.data_dir.clone();
                    let (addr, pid) = (p.addr, Some(p.pid()));
                    (Some(p), addr, pid)
                }
            };
            let endpoint = Endpoint::new(addr)
                .with_query(self.query)
                .with_credential_scope(self.endpoint.is_some());
            let run = Run {
                endpoint: &endpoint,
                server,
                pid,
                client,
                deadline: Instant::now() + limit,
            };
            let out = tokio::time::timeout(limit + Duration::from_secs(5), f(&run))
                .await
                .map_err(|_| format!("no result within {limit:?}"))?;
            // Disk per stored message, while the sent messages are there.
            let out = out.map(|mut ms| {
                if let Some(dir) = &data_dir {
                    let bytes = proc::dir_bytes(dir) as f64;
                    for m in &mut ms {
                        if m.messages > 0 && scenario != Scenario::Drain {
                            m.metrics
                                .insert("disk_bytes_per_msg", bytes / m.messages as f64);
                        }
                    }
                }
                ms
            });
            drop(process);
            out
        }
        .await;
        let what = Failure {
            scenario: scenario.name(),
            variant: variant.to_string(),
            client: client.name(),
            server: server.name(),
            round,
            error: String::new(),
        };
        self.record(result, what, round);
    }
}

fn progress(m: &Measurement) -> String {
    let mut s = format!("{} {} {} {}:", m.scenario, m.variant, m.client, m.server);
    if m.msgs_per_s > 0.0 {
        s += &format!(" {:.0} msgs/s", m.msgs_per_s);
    }
    if let Some(l) = &m.latency {
        s += &format!(
            " p50 {:.2} ms p99 {:.2} ms max {:.2} ms",
            l.p50_ms, l.p99_ms, l.max_ms
        );
    }
    for (k, v) in &m.metrics {
        s += &format!(" {k}={v:.1}");
    }
    s
}

type ScenarioFuture<'r> =
    std::pin::Pin<Box<dyn std::future::Future<Output = BoxResult<Vec<Measurement>>> + 'r>>;

/// A scenario variant, ready to run against any server.
type ScenarioFn<'a> = Box<dyn for<'r, 's> Fn(&'r Run<'s>) -> ScenarioFuture<'r> + Sync + 'a>;

async fn bench(cli: Cli) -> BoxResult<bool> {
    let quick = cli.quick;
    let mut selected: Vec<Scenario> = if cli.all || (quick && cli.scenario.is_empty()) {
        ALL.to_vec()
    } else {
        cli.scenario.clone()
    };
    if selected.is_empty() {
        return Err("choose --all, --quick or --scenario NAME (see --help)".into());
    }
    selected.sort_by_key(|s| ALL.iter().position(|a| a == s));
    selected.dedup();
    let mut clients = cli.client.clone();
    clients.sort();
    clients.dedup();
    let rounds = cli.rounds.unwrap_or(if quick { 1 } else { 3 }).max(1);
    let mut sizes = if quick {
        Sizes::quick()
    } else {
        Sizes::full(cli.scale)
    };
    if let Some(n) = cli.memory_messages {
        sizes.memory_messages = n.max(1000);
    }
    let target = target_dir();
    let retsu_bin = cli
        .retsu_bin
        .clone()
        .unwrap_or_else(|| target.join("release/retsu"));
    let endpoint = cli.endpoint.as_deref().map(resolve).transpose()?;
    if endpoint.is_none() {
        if !retsu_bin.is_file() {
            return Err(format!(
                "{} not found: build it first with `cargo build --release` (or pass --retsu-bin)",
                retsu_bin.display()
            )
            .into());
        }
        warn_if_stale(&retsu_bin);
    }
    let log_dir = target.join("bench/logs");
    let _ = std::fs::remove_dir_all(&log_dir);
    let mut machine = proc::machine();
    let started = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    eprintln!(
        "retsu-bench: {} round(s){}, clients {:?}, {} CPUs ({}), load {}",
        rounds,
        if quick { ", quick" } else { "" },
        clients.iter().map(|c| c.name()).collect::<Vec<_>>(),
        machine.cpus,
        machine.cpu_model,
        machine.load_before
    );
    let mut b = Bench {
        launcher: Launcher {
            retsu_bin: retsu_bin.clone(),
            retsu_args: cli.retsu_args.clone(),
            log_dir,
            durable_store: cli.durable_store.clone(),
            durability: cli.durability.clone(),
        },
        sizes,
        quick,
        endpoint,
        endpoint_pid: cli.endpoint_pid,
        query: cli.protocol == Protocol::Query,
        floor: !cli.no_floor,
        durable: cli.durable,
        measurements: Vec::new(),
        failures: Vec::new(),
    };
    let wall = Instant::now();
    let test = b.under_test();
    for round in 0..rounds {
        eprintln!("round {}/{rounds}", round + 1);
        for &scenario in &selected {
            run_scenario(&mut b, scenario, round, &clients, test).await;
        }
    }
    machine.load_after = proc::load();

    let summaries = report::summarize(&b.measurements);
    let targets = report::targets(&summaries, test.name());
    let text = report::render(&summaries, &targets, quick);
    println!("{text}");
    for f in &b.failures {
        println!(
            "FAILED: {} {} ({} client, {} server, round {}): {}",
            f.scenario,
            f.variant,
            f.client,
            f.server,
            f.round + 1,
            f.error
        );
    }
    let out = cli
        .out
        .clone()
        .unwrap_or_else(|| target.join("bench/results.json"));
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let git = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let doc = json!({
        "tool": "retsu-bench",
        "started_unix": started,
        "wall_seconds": wall.elapsed().as_secs_f64(),
        "quick": quick,
        "rounds": rounds,
        "clients": clients.iter().map(|c| c.name()).collect::<Vec<_>>(),
        "server_under_test": test.name(),
        "retsu_bin": retsu_bin,
        "retsu_args": cli.retsu_args,
        "git_commit": git,
        "machine": machine,
        "sizes": format!("{:?}", b.sizes),
        "summary": summaries,
        "targets": targets,
        "measurements": b.measurements,
        "failures": b.failures,
    });
    std::fs::write(&out, serde_json::to_string_pretty(&doc)? + "\n")?;
    eprintln!(
        "wrote {} ({:.0} s, load {})",
        out.display(),
        wall.elapsed().as_secs_f64(),
        machine.load_after
    );
    Ok(b.failures.is_empty())
}

/// Server order for a round: alternate which goes first.
fn servers(b: &Bench, scenario: Scenario, round: usize, test: ServerKind) -> Vec<ServerKind> {
    let mut kinds = if !(scenario.has_floor() && b.floor) {
        vec![test]
    } else if round.is_multiple_of(2) {
        vec![test, ServerKind::Null]
    } else {
        vec![ServerKind::Null, test]
    };
    if b.durable
        && test == ServerKind::Retsu
        && matches!(
            scenario,
            Scenario::Send | Scenario::SendBatch | Scenario::Drain
        )
    {
        kinds.push(ServerKind::Durable);
    }
    kinds
}

async fn run_scenario(
    b: &mut Bench,
    scenario: Scenario,
    round: usize,
    clients: &[ClientKind],
    test: ServerKind,
) {
    let clients: Vec<ClientKind> = if scenario.per_client() {
        clients.to_vec()
    } else {
        vec![ClientKind::Raw]
    };
    let sizes = b.sizes.clone();
    match scenario {
        Scenario::Startup => {
            if test != ServerKind::Retsu {
                eprintln!("  startup: skipped for an --endpoint");
                return;
            }
            let mut kinds = vec![ServerKind::Retsu];
            if b.floor {
                kinds.push(ServerKind::Null);
            }
            for kind in kinds {
                let launcher = b.launcher.clone();
                let runs = sizes.startup_runs;
                let result =
                    tokio::task::spawn_blocking(move || scenarios::startup(&launcher, kind, runs))
                        .await
                        .map_err(BoxError::from)
                        .and_then(|r| r)
                        .map(|m| vec![m]);
                let what = Failure {
                    scenario: "startup",
                    variant: String::new(),
                    client: "raw",
                    server: kind.name(),
                    round,
                    error: String::new(),
                };
                b.record(result, what, round);
            }
        }
        Scenario::Memory => {
            if round > 0 {
                return;
            }
            if test == ServerKind::Endpoint && b.endpoint_pid.is_none() {
                eprintln!("  memory: skipped (needs --endpoint-pid)");
                return;
            }
            let n = sizes.memory_messages;
            let f: ScenarioFn = Box::new(move |run| {
                Box::pin(async move { Ok(vec![scenarios::memory(run, n).await?]) })
            });
            b.measure(scenario, "", ClientKind::Raw, test, round, &*f)
                .await;
        }
        Scenario::Backlog => {
            let (depths, measured, consumers) = (
                sizes.backlog_depths.clone(),
                sizes.backlog_measured,
                sizes.backlog_consumers,
            );
            let f: ScenarioFn = Box::new(move |run| {
                let depths = depths.clone();
                Box::pin(async move { scenarios::backlog(run, &depths, measured, consumers).await })
            });
            b.measure(scenario, "", ClientKind::Raw, test, round, &*f)
                .await;
        }
        _ => {
            // (variant label, scenario function) pairs.
            let variants: Vec<(String, ScenarioFn)> = match scenario {
                Scenario::Publish => {
                    let n = sizes.publish;
                    let c = 16;
                    [
                        (1, false, false),
                        (3, false, false),
                        (1, true, false),
                        (1, true, true),
                    ]
                    .into_iter()
                    .map(
                        |(subscriptions, attributes, filtered)| -> (String, ScenarioFn) {
                            let shape = scenarios::PublishShape {
                                subscriptions,
                                attributes,
                                filtered,
                            };
                            (
                                scenarios::publish_variant(shape, c),
                                Box::new(move |run| {
                                    Box::pin(async move {
                                        Ok(vec![scenarios::publish(run, c, n, shape).await?])
                                    })
                                }),
                            )
                        },
                    )
                    .collect()
                }
                Scenario::Lambda => {
                    let n = sizes.lambda;
                    [
                        (lambda::Feed::Mapping, 10),
                        (lambda::Feed::Loop, 10),
                        (lambda::Feed::Mapping, 100),
                        (lambda::Feed::Loop, 100),
                    ]
                    .into_iter()
                    .map(|(feed, batch)| -> (String, ScenarioFn) {
                        (
                            lambda::variant(feed, batch),
                            Box::new(move |run| {
                                Box::pin(async move {
                                    Ok(vec![lambda::lambda(run, feed, batch, n).await?])
                                })
                            }),
                        )
                    })
                    .collect()
                }
                Scenario::Send => sizes
                    .send
                    .iter()
                    .map(|&(c, n)| -> (String, ScenarioFn) {
                        (
                            format!("c={c}"),
                            Box::new(move |run| {
                                Box::pin(async move { Ok(vec![scenarios::send(run, c, n).await?]) })
                            }),
                        )
                    })
                    .collect(),
                Scenario::SendBatch => sizes
                    .send_batch
                    .iter()
                    .map(|&(c, n)| -> (String, ScenarioFn) {
                        (
                            format!("c={c}"),
                            Box::new(move |run| {
                                Box::pin(async move {
                                    Ok(vec![scenarios::send_batch(run, c, n).await?])
                                })
                            }),
                        )
                    })
                    .collect(),
                Scenario::Drain => sizes
                    .drain
                    .iter()
                    .map(|&(c, n)| -> (String, ScenarioFn) {
                        (
                            format!("c={c}"),
                            Box::new(move |run| {
                                Box::pin(
                                    async move { Ok(vec![scenarios::drain(run, c, n).await?]) },
                                )
                            }),
                        )
                    })
                    .collect(),
                Scenario::Pipeline => {
                    let n = sizes.pipeline;
                    [
                        (scenarios::PIPELINE_VARIANT, false),
                        (scenarios::PIPELINE_LOADED_VARIANT, true),
                    ]
                    .into_iter()
                    .map(|(variant, loaded)| {
                        let f: ScenarioFn = Box::new(move |run| {
                            Box::pin(
                                async move { Ok(vec![scenarios::pipeline(run, n, loaded).await?]) },
                            )
                        });
                        (variant.to_string(), f)
                    })
                    .collect()
                }
                Scenario::LongpollWake => {
                    let n = sizes.wake_iterations;
                    vec![(
                        scenarios::WAKE_VARIANT.to_string(),
                        Box::new(move |run| {
                            Box::pin(
                                async move { Ok(vec![scenarios::longpoll_wake(run, n).await?]) },
                            )
                        }),
                    )]
                }
                Scenario::Fifo => {
                    let (g, p) = (sizes.fifo_groups, sizes.fifo_per_group);
                    vec![(
                        format!("{g} groups"),
                        Box::new(move |run| {
                            Box::pin(async move { Ok(vec![scenarios::fifo(run, g, p).await?]) })
                        }),
                    )]
                }
                _ => unreachable!("handled above"),
            };
            for (variant, f) in &variants {
                for &client in &clients {
                    for server in servers(b, scenario, round, test) {
                        b.measure(scenario, variant, client, server, round, &**f)
                            .await;
                    }
                }
            }
        }
    }
}
