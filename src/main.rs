//! The `retsu` binary: parse flags, listen, serve until SIGINT/SIGTERM.
//!
//! Nothing slow happens before the socket is bound, so a test harness can
//! start the binary and connect right away.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use retsu::clock::SystemClock;
use retsu::config::Config;
use tracing_subscriber::EnvFilter;

/// mimalloc: the request path allocates many small short-lived objects;
/// glibc malloc spent ~30% of the server's CPU on them (see BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let config = Config::parse();
    let filter = match EnvFilter::try_new(&config.log_level) {
        Ok(filter) => filter,
        Err(e) => {
            eprintln!("retsu: invalid --log-level {:?}: {e}", config.log_level);
            return ExitCode::from(2);
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();

    tracing::debug!(?config, "configuration");
    retsu::server::raise_fd_limit();
    let address = format!("{}:{}", config.host, config.port);
    let server = match retsu::server::start(config, Arc::new(SystemClock)).await {
        Ok(server) => server,
        Err(e) => {
            tracing::error!("cannot listen on {address}: {e}");
            return ExitCode::FAILURE;
        }
    };

    shutdown_signal().await;
    tracing::info!("shutting down");
    // A second signal while draining means "now".
    tokio::select! {
        result = server.shutdown() => match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                tracing::error!("server error: {e}");
                ExitCode::FAILURE
            }
        },
        _ = shutdown_signal() => {
            tracing::warn!("second signal: exiting without waiting");
            ExitCode::FAILURE
        }
    }
}

/// Resolves on SIGINT (Ctrl-C) or, on Unix, SIGTERM (`docker stop`).
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
