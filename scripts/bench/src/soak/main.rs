//! `retsu-soak`: the soak test and the abuse checks (run through
//! scripts/soak.sh).
//!
//! - `retsu-soak soak --seconds N`: 64 concurrent clients run a mixed
//!   workload against a fresh release server for N seconds, then every
//!   acknowledged message is accounted for and the server's resident memory,
//!   sampled each second, must not grow once steady.
//! - `retsu-soak abuse [--small]`: 10,000 simultaneous long polls, 100,000
//!   queues, a 1,000,000-message queue and the 120,000 in-flight limit, each
//!   on its own fresh server, with the figures printed (and recorded in
//!   BENCHMARKS.md). `--small` is the bounded version CI runs.
//!
//! It reuses the benchmark's raw JSON client and server launcher: the soak
//! is about what a long, mixed or hostile load does to correctness and cost,
//! not about throughput, so it lives beside the benchmark rather than in it.

#[allow(dead_code)]
#[path = "../client.rs"]
mod client;
#[allow(dead_code)]
#[path = "../proc.rs"]
mod proc;

mod abuse;
mod admin;
mod workload;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use proc::Launcher;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub type BoxResult<T> = Result<T, BoxError>;

/// Soak and abuse checks for Retsu.
#[derive(Debug, Parser)]
#[command(name = "retsu-soak", version, about)]
struct Cli {
    /// The retsu binary [default: target/release/retsu].
    #[arg(long, global = true)]
    retsu_bin: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The mixed workload with a full accounting and a memory bound.
    Soak(workload::Opts),
    /// The abuse checks: long polls, queues, a deep queue, in-flight limit.
    Abuse(abuse::Opts),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    raise_fd_limit();
    let launcher = Launcher {
        retsu_bin: cli
            .retsu_bin
            .clone()
            .unwrap_or_else(|| target_dir().join("release/retsu")),
        retsu_args: vec!["--log-level".into(), "warn".into()],
        log_dir: target_dir().join("soak"),
        durable_store: None,
        durability: "full".into(),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("retsu-soak: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Soak(opts) => workload::run(&launcher, opts).await,
            Command::Abuse(opts) => abuse::run(&launcher, opts).await,
        }
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("retsu-soak: {e}");
            ExitCode::from(2)
        }
    }
}

/// Raises this process's soft file-descriptor limit to its hard limit: the
/// long-poll check holds 10,000 client sockets (the server raises its own).
fn raise_fd_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain system calls on a stack value.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// This process's soft file-descriptor limit.
pub fn fd_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: as above.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    limit.rlim_cur
}

/// The target directory: $CARGO_TARGET_DIR, else the workspace's target/.
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    workspace.canonicalize().unwrap_or(workspace).join("target")
}

/// A small deterministic generator (xorshift64*): the workload's choices
/// need to be varied, not unpredictable, and a seed makes a run repeatable.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in 0..n.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}
