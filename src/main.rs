//! The `retsu` binary: settle the configuration (flags, environment,
//! `--config` file), create the file's queues, listen, serve until
//! SIGINT/SIGTERM; or one of the `check-config` and `health` subcommands.
//!
//! Nothing slow happens before the socket is bound, so a test harness can
//! start the binary and connect right away.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use retsu::cli::{probe_health, Cli, Command, LogFormat, Resolved, TlsAction};
use retsu::engine::Engine;
use retsu::journal::Journal;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// mimalloc: the request path allocates many small short-lived objects;
/// glibc malloc spent a large share of the server's CPU on them (BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Exit status for a configuration that cannot be used (like clap's).
const BAD_CONFIG: u8 = 2;

#[tokio::main]
async fn main() -> ExitCode {
    let (cli, matches) = match Cli::try_parse_with_matches(std::env::args_os()) {
        Ok(parsed) => parsed,
        Err(e) => e.exit(),
    };
    match &cli.command {
        Some(Command::CheckConfig { file }) => check_config(&cli, &matches, file).await,
        Some(Command::Health { endpoint, timeout }) => {
            let endpoint = match endpoint {
                Some(e) => e.clone(),
                None => match cli.resolve(&matches, None) {
                    Ok(resolved) => resolved.local_endpoint(),
                    Err(e) => {
                        eprintln!("retsu: {e}");
                        return ExitCode::from(BAD_CONFIG);
                    }
                },
            };
            match probe_health(&endpoint, Duration::from_secs(*timeout)) {
                Ok(()) => {
                    println!("ok");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("retsu: unhealthy: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Some(Command::Tls {
            action: TlsAction::Ca,
        }) => tls_ca(&cli, &matches),
        None => serve(&cli, &matches).await,
        Some(other) => match other.admin() {
            Some((command, args)) => match retsu::admin_cli::run(&command, args) {
                Ok(out) => {
                    // A closed pipe (`retsu peek q | head`) is not an error.
                    use std::io::Write;
                    let _ = writeln!(std::io::stdout(), "{out}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("retsu: {e}");
                    ExitCode::FAILURE
                }
            },
            None => ExitCode::from(BAD_CONFIG),
        },
    }
}

/// `retsu tls ca`: the path of the CA certificate `--tls` serves from,
/// made now if there is none, so it can be trusted before the server
/// first starts.
fn tls_ca(cli: &Cli, matches: &clap::ArgMatches) -> ExitCode {
    let config = match cli.resolve(matches, None) {
        Ok(resolved) => resolved.config,
        Err(e) => {
            eprintln!("retsu: {e}");
            return ExitCode::from(BAD_CONFIG);
        }
    };
    if let Some(cert) = &config.tls.cert {
        eprintln!(
            "retsu: TLS serves the certificate given by --tls-cert ({}); its CA is whoever issued it, not Retsu",
            cert.display()
        );
        return ExitCode::FAILURE;
    }
    let opened = retsu::tls::tls_dir(config.data_dir.as_deref())
        .and_then(|dir| retsu::tls::LocalCa::open(&dir));
    match opened {
        Ok(ca) => {
            println!("{}", ca.ca_path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("retsu: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The flags, environment and file (`file`, else the one they name)
/// resolved, and the file's queues created on a scratch engine; on any
/// problem, printed to stderr, the configuration error exit code.
async fn resolve_and_check(
    cli: &Cli,
    matches: &clap::ArgMatches,
    file: Option<&Path>,
) -> Result<Resolved, ExitCode> {
    let resolved = cli.resolve(matches, file).map_err(|e| {
        eprintln!("retsu: {e}");
        ExitCode::from(BAD_CONFIG)
    })?;
    let c = &resolved.config;
    if let Err(e) = retsu::lambda::declared::check(&c.event_source_mappings, &c.functions) {
        eprintln!("retsu: {e}");
        return Err(ExitCode::from(BAD_CONFIG));
    }
    if let Err(e) = resolved.plan.check(resolved.config.engine_config()).await {
        eprintln!("retsu: {e}");
        return Err(ExitCode::from(BAD_CONFIG));
    }
    Ok(resolved)
}

/// Everything start-up would do with the file short of listening: parse,
/// resolve, and create its queues on a scratch engine.
async fn check_config(cli: &Cli, matches: &clap::ArgMatches, file: &Path) -> ExitCode {
    let resolved = match resolve_and_check(cli, matches, Some(file)).await {
        Ok(r) => r,
        Err(code) => return code,
    };
    let c = &resolved.config;
    println!("{}: ok", file.display());
    println!("  listen         {}:{}", c.host, c.port);
    println!("  region         {}", c.region);
    println!("  account_id     {}", c.account_id);
    println!(
        "  base_url       {}",
        c.pinned_base_url("http(s)://", c.port)
            .as_deref()
            .unwrap_or("(from each request's Host)")
    );
    println!("  strict_timing  {}", c.strict_timing);
    println!(
        "  clock          {}{}",
        format!("{:?}", c.clock).to_lowercase(),
        c.clock_start
            .map(|t| format!(" from {}", retsu::clock::format_rfc3339(t)))
            .unwrap_or_default()
    );
    println!(
        "  admin API      {}",
        match (c.no_admin, &c.admin_token) {
            (true, _) => "off",
            (false, Some(_)) => "on, bearer token required",
            (false, None) => "on",
        }
    );
    let init_dir = c
        .init_dir
        .as_deref()
        .unwrap_or(Path::new(retsu::localstack::hooks::DEFAULT_DIR))
        .display();
    println!(
        "  localstack     {}",
        match (c.no_localstack, c.localstack) {
            (true, _) => "off (no /_localstack/*, /_aws/*, init hooks)".to_string(),
            (false, true) => format!("LocalStack's defaults, init hooks in {init_dir}"),
            (false, false) => format!("endpoints on, init hooks in {init_dir}"),
        }
    );
    println!(
        "  tls            {}",
        match (&c.tls.cert, c.tls.wanted()) {
            (_, false) => "off".to_string(),
            (Some(cert), true) => format!("on, serving {}", cert.display()),
            (None, true) => "on, with a certificate from Retsu's local CA (retsu tls ca)".into(),
        }
    );
    println!("  log_level      {}", c.log_level);
    println!(
        "  log_format     {}",
        format!("{:?}", resolved.log_format).to_lowercase()
    );
    let names: Vec<String> = resolved
        .plan
        .queues
        .iter()
        .map(|q| format!("{}/{}/{}", q.key.region, q.key.account, q.key.name))
        .collect();
    println!(
        "  queues         {} (created in this order: {})",
        names.len(),
        names.join(", ")
    );
    if !c.functions.is_empty() {
        let names: Vec<&str> = c.functions.iter().map(|f| f.name.as_str()).collect();
        println!("  functions      {} ({})", names.len(), names.join(", "));
    }
    if !c.event_source_mappings.is_empty() {
        println!(
            "  mappings       {} (checked; created at start)",
            c.event_source_mappings.len()
        );
    }
    if !resolved.plan.topics.is_empty() {
        let topics: Vec<String> = resolved
            .plan
            .topics
            .iter()
            .map(|t| format!("{} ({} subscriptions)", t.name, t.subscriptions.len()))
            .collect();
        println!("  topics         {} ({})", topics.len(), topics.join(", "));
    }
    ExitCode::SUCCESS
}

async fn serve(cli: &Cli, matches: &clap::ArgMatches) -> ExitCode {
    // Listening from the first moment: a stop that lands while the server
    // starts (a supervisor that stops it as soon as it answers) is a
    // graceful stop, not the signal's default action.
    let mut signals = StopSignals::install();
    // Configuration problems go to stderr before logging exists: the file
    // may be what chooses the log format.
    let resolved = match resolve_and_check(cli, matches, None).await {
        Ok(r) => r,
        Err(code) => return code,
    };
    if let Err(code) = init_logging(&resolved) {
        return code;
    }
    let Resolved {
        config,
        config_file,
        plan,
        ..
    } = resolved;
    {
        // The admin token stays out of the logs.
        let mut shown = config.clone();
        if shown.admin_token.is_some() {
            shown.admin_token = Some("<redacted>".into());
        }
        if shown.cluster_secret.is_some() {
            shown.cluster_secret = Some("<redacted>".into());
        }
        tracing::debug!(config = ?shown, "configuration");
    }
    retsu::server::raise_fd_limit();
    // A certificate that cannot be served stops start-up here, naming the
    // file and the problem, before any state is opened.
    if let Err(e) = retsu::tls::Tls::load(&config.tls, config.data_dir.as_deref()) {
        tracing::error!("{e}");
        return ExitCode::from(BAD_CONFIG);
    }

    // A cluster node: the shard leases it holds decide what it serves.
    match retsu::cluster::Settings::from_config(&config) {
        Ok(Some(settings)) => {
            return retsu::cluster::serve(
                config,
                plan,
                settings,
                async move { signals.next().await },
            )
            .await
        }
        Ok(None) => {}
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("retsu: {e}");
            return ExitCode::from(BAD_CONFIG);
        }
    }

    // The checked plan on the real engine, before the socket opens.
    let clock = Arc::new(config.build_clock());
    let store = config.journal_store();
    let (engine, journal) = match &store {
        None => (Engine::new(clock, config.engine_config()), None),
        Some(store) => {
            let started = std::time::Instant::now();
            match Journal::open(store, config.durability, clock, config.engine_config()) {
                Ok((engine, journal)) => {
                    tracing::info!(
                        store = %journal.store,
                        queues = journal.restored.0,
                        messages = journal.restored.1,
                        elapsed_ms = started.elapsed().as_millis() as u64,
                        "stored state loaded"
                    );
                    (engine, Some(journal))
                }
                Err(e) => {
                    tracing::error!("{e}");
                    eprintln!("retsu: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
    };
    let provision_base = config
        .pinned_base_url("http://", config.port)
        .unwrap_or_else(|| format!("http://{}:{}", config.host, config.port));
    if let Err(e) = plan.apply(&engine, &provision_base).await {
        tracing::error!("{e}");
        return ExitCode::from(BAD_CONFIG);
    }
    // SNS on the same engine, and the file's topics on it.
    // SNS's signing key: in the data directory, or in PostgreSQL's store.
    let services = match (&store, &journal) {
        (Some(retsu::journal::Store::Postgres(_)), Some(journal)) => {
            retsu::server::Services::with_key_store(
                engine.clone(),
                Some(Arc::new(retsu::notification_signing::JournalKeyStore(
                    journal.clone(),
                ))),
            )
        }
        _ => retsu::server::Services::new(&config, engine.clone()),
    };
    if let Err(e) = plan.apply_topics(&services.sns, &provision_base).await {
        tracing::error!("{e}");
        return ExitCode::from(BAD_CONFIG);
    }
    // The file's queues and topics (new or updated) are part of the stored state.
    engine.queues_changed();
    // LocalStack's init hooks: BOOT and START before the socket opens.
    let hooks = match init_hooks(&config) {
        Ok(hooks) => hooks,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("retsu: {e}");
            return ExitCode::from(BAD_CONFIG);
        }
    };
    let mut services = services;
    services.init_hooks = hooks.clone();
    let mut hook_env = retsu::localstack::hooks::HookEnv {
        endpoint: format!("http://{}:{}", config.host, config.port),
        region: config.region.clone(),
    };
    for stage in [
        retsu::localstack::Stage::Boot,
        retsu::localstack::Stage::Start,
    ] {
        run_stage(&hooks, stage, &hook_env).await;
    }
    let localstack = config.localstack;
    let storage = store.map_or("in memory".into(), |s| s.describe());
    let address = format!("{}:{}", config.host, config.port);
    let server = match retsu::server::start_with_services(config, engine, services).await {
        Ok(server) => server,
        Err(e) => {
            tracing::error!("cannot listen on {address}: {e}");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!(
        address = %server.endpoint_url(),
        version = %env!("CARGO_PKG_VERSION"),
        storage = storage.as_str(),
        config = %config_file.as_deref().map_or("none".into(), |p| p.display().to_string()),
        queues = plan.queues.len(),
        "retsu ready"
    );

    // The wrappers' and containers' wait strategy: one stable line on
    // stdout, with the address really bound (`--port 0` included). With
    // TLS, a line before it gives the https:// endpoint and the CA to
    // trust (when Retsu made the certificate).
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        if let Some(https) = server.https_endpoint_url() {
            let ca = server
                .tls_ca()
                .map(|p| format!(" {}", p.display()))
                .unwrap_or_default();
            let _ = writeln!(out, "retsu tls {https}{ca}");
        }
        let _ = writeln!(out, "retsu ready {}", server.endpoint_url());
        let _ = out.flush();
    }
    // READY's hooks once the server answers; then, with --localstack, the
    // line LocalStack's log-line wait strategies look for, so a test that
    // waits for it also finds what the hooks created.
    hook_env.endpoint = server.endpoint_url();
    {
        let (hooks, hook_env) = (hooks.clone(), hook_env.clone());
        tokio::spawn(async move {
            run_stage(&hooks, retsu::localstack::Stage::Ready, &hook_env).await;
            if localstack {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "Ready.");
                let _ = out.flush();
            }
        });
    }

    let orphaned = tokio::select! {
        _ = signals.next() => false,
        _ = stdin_closed(cli.exit_on_stdin_close) => true,
    };
    if orphaned {
        // Whoever started us is gone and nobody waits for a graceful
        // drain; what was acknowledged is already committed, so the
        // journal only needs closing.
        tracing::info!("standard input closed: exiting");
        if let Some(journal) = &journal {
            journal.close();
        }
        // Not a return: the runtime's teardown would wait on open
        // connections and blocking threads.
        std::process::exit(0);
    }
    tracing::info!("shutting down");
    // SHUTDOWN's hooks while the server still answers; a second signal,
    // then or while draining, means "now".
    tokio::select! {
        _ = run_stage(&hooks, retsu::localstack::Stage::Shutdown, &hook_env) => {}
        _ = signals.next() => {
            tracing::warn!("second signal: exiting without waiting");
            return ExitCode::FAILURE;
        }
    }
    tokio::select! {
        result = server.shutdown() => {
            if let Some(journal) = &journal {
                // Commit what is pending, close the database.
                journal.close();
            }
            match result {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!("server error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        _ = signals.next() => {
            tracing::warn!("second signal: exiting without waiting");
            ExitCode::FAILURE
        }
    }
}

/// LocalStack's init hooks: none with `--no-localstack`; those of
/// `--init-dir` (which must exist), else of /etc/localstack/init when it
/// exists.
fn init_hooks(config: &retsu::config::Config) -> Result<Arc<retsu::localstack::InitHooks>, String> {
    use retsu::localstack::{hooks::DEFAULT_DIR, InitHooks};
    let hooks = match (&config.init_dir, config.no_localstack) {
        (_, true) => InitHooks::none(),
        (Some(dir), false) => InitHooks::discover(dir).map_err(|e| format!("--init-dir: {e}"))?,
        (None, false) if Path::new(DEFAULT_DIR).is_dir() => {
            InitHooks::discover(Path::new(DEFAULT_DIR))
                .map_err(|e| format!("{DEFAULT_DIR}: {e}"))?
        }
        (None, false) => InitHooks::none(),
    };
    if !hooks.is_empty() {
        tracing::info!(scripts = hooks.len(), "LocalStack init hooks found");
    }
    Ok(Arc::new(hooks))
}

/// Runs a stage's hooks on a blocking thread, waiting for them.
async fn run_stage(
    hooks: &Arc<retsu::localstack::InitHooks>,
    stage: retsu::localstack::Stage,
    env: &retsu::localstack::hooks::HookEnv,
) {
    let (hooks, env) = (hooks.clone(), env.clone());
    let _ = tokio::task::spawn_blocking(move || hooks.run(stage, &env)).await;
}

fn init_logging(resolved: &Resolved) -> Result<(), ExitCode> {
    let level = &resolved.config.log_level;
    let filter: Targets = match level.parse() {
        Ok(filter) => filter,
        Err(e) => {
            eprintln!("retsu: invalid log level {level:?}: {e}");
            return Err(ExitCode::from(BAD_CONFIG));
        }
    };
    // The builder's own filter (INFO by default) lets everything through:
    // `filter` decides.
    let builder = tracing_subscriber::fmt()
        .with_max_level(tracing_subscriber::filter::LevelFilter::TRACE)
        .with_writer(std::io::stderr);
    match resolved.log_format {
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .finish()
            .with(filter)
            .init(),
        LogFormat::Json => builder.json().with_ansi(false).finish().with(filter).init(),
    }
    Ok(())
}

/// With `--exit-on-stdin-close`, resolves when standard input reaches its
/// end (the writer closed it, or died); otherwise never. A blocking thread,
/// since tokio's stdin is one too and this keeps the runtime out of it.
async fn stdin_closed(enabled: bool) {
    if !enabled {
        return std::future::pending().await;
    }
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        use std::io::Read;
        let mut buf = [0u8; 256];
        let mut stdin = std::io::stdin().lock();
        loop {
            match stdin.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let _ = tx.send(());
    });
    let _ = rx.await;
}

/// SIGINT (Ctrl-C) and, on Unix, SIGTERM (`docker stop`). Each listener
/// is made once and kept, so a signal is never missed between two waits.
struct StopSignals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            StopSignals {
                term: signal(SignalKind::terminate()).ok(),
                int: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }

    /// Resolves at the next signal; never if none could be listened for.
    async fn next(&mut self) {
        #[cfg(unix)]
        {
            async fn recv(s: &mut Option<tokio::signal::unix::Signal>) {
                match s {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                _ = recv(&mut self.term) => {}
                _ = recv(&mut self.int) => {}
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
