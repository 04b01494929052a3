//! Server processes (Retsu, the null server) and what /proc says about them.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::BoxResult;

/// How long a starting server may take to answer its first ListQueues.
const READY_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerKind {
    /// The release `retsu` binary, started by the benchmark.
    Retsu,
    /// The release `retsu` binary with `--data-dir` (full durability),
    /// on a fresh data directory removed afterwards.
    Durable,
    /// The built-in null server (this binary, `--serve-null`).
    Null,
    /// An endpoint given with `--endpoint`.
    Endpoint,
}

impl ServerKind {
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Retsu => "retsu",
            ServerKind::Durable => "durable",
            ServerKind::Null => "null",
            ServerKind::Endpoint => "endpoint",
        }
    }
}

/// How to start servers.
#[derive(Debug, Clone)]
pub struct Launcher {
    pub retsu_bin: PathBuf,
    pub retsu_args: Vec<String>,
    pub log_dir: PathBuf,
    /// A durable server's PostgreSQL database, instead of a data directory.
    pub durable_store: Option<String>,
    /// A durable server's --durability.
    pub durability: String,
}

/// A running server process; killed when dropped.
pub struct ServerProc {
    child: Child,
    pub addr: SocketAddr,
    /// Exec to the first successful ListQueues.
    pub ready_after: Duration,
    /// A durable server's data directory, removed with the server.
    pub data_dir: Option<PathBuf>,
}

impl ServerProc {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(dir) = &self.data_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Launcher {
    /// Starts a server on a free loopback port and waits until it answers
    /// ListQueues (polling every 100 µs, so the start-up time is exact to
    /// about that). Tries up to three times: the port, free when picked,
    /// may be taken before the server binds it.
    pub fn start(&self, kind: ServerKind) -> BoxResult<ServerProc> {
        let mut attempt = 1;
        loop {
            match self.start_once(kind) {
                Err(e) if attempt < 3 && !e.to_string().contains("not found") => {
                    eprintln!("  {} did not start ({e}); retrying", kind.name());
                    attempt += 1;
                }
                result => return result,
            }
        }
    }

    fn start_once(&self, kind: ServerKind) -> BoxResult<ServerProc> {
        let port = free_port()?;
        let mut data_dir = None;
        let mut command = match kind {
            ServerKind::Retsu | ServerKind::Durable => {
                if !self.retsu_bin.is_file() {
                    return Err(format!(
                        "{} not found: build it first with `cargo build --release` \
                         (or pass --retsu-bin)",
                        self.retsu_bin.display()
                    )
                    .into());
                }
                let mut c = Command::new(&self.retsu_bin);
                c.args(["--host", "127.0.0.1", "--port", &port.to_string()]);
                c.args(&self.retsu_args);
                if kind == ServerKind::Durable {
                    c.args(["--durability", &self.durability]);
                    match &self.durable_store {
                        Some(url) => {
                            // Each run starts from an empty store.
                            let dropped = Command::new("psql")
                                .args([url.as_str(), "-qc", "DROP SCHEMA IF EXISTS retsu CASCADE"])
                                .stdout(Stdio::null())
                                .status()?;
                            if !dropped.success() {
                                return Err(format!("psql {url}: {dropped}").into());
                            }
                            c.args(["--store", url]);
                        }
                        None => {
                            let dir = self.log_dir.with_file_name(format!("data-{port}"));
                            let _ = std::fs::remove_dir_all(&dir);
                            c.arg("--data-dir").arg(&dir);
                            data_dir = Some(dir);
                        }
                    }
                }
                c
            }
            ServerKind::Null => {
                let mut c = Command::new(std::env::current_exe()?);
                c.args(["--serve-null", &port.to_string()]);
                c
            }
            ServerKind::Endpoint => return Err("an --endpoint is not started".into()),
        };
        std::fs::create_dir_all(&self.log_dir)?;
        let log_path = self.log_dir.join(format!("{}-{port}.log", kind.name()));
        let log = File::create(&log_path)?;
        command
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        // Servers die with the benchmark, even when it is killed outright
        // (they are started from threads that live as long as it does).
        // SAFETY: prctl is async-signal-safe; nothing else runs between
        // fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let started = Instant::now();
        let child = command.spawn()?;
        let mut server = ServerProc {
            child,
            addr,
            ready_after: Duration::ZERO,
            data_dir,
        };
        loop {
            if list_queues_blocking(addr).is_ok() {
                server.ready_after = started.elapsed();
                return Ok(server);
            }
            if let Some(status) = server.child.try_wait()? {
                return Err(format!(
                    "{} exited with {status} before answering (log: {})",
                    kind.name(),
                    log_path.display()
                )
                .into());
            }
            if started.elapsed() > READY_TIMEOUT {
                return Err(format!(
                    "{} did not answer ListQueues within {READY_TIMEOUT:?} (log: {})",
                    kind.name(),
                    log_path.display()
                )
                .into());
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

/// Bytes of the files in a directory (a data directory's database).
pub fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// A port that was free a moment ago.
fn free_port() -> BoxResult<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// One blocking ListQueues on a fresh connection; Ok on HTTP 200.
pub fn list_queues_blocking(addr: SocketAddr) -> BoxResult<()> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-amz-json-1.0\r\n\
         X-Amz-Target: AmazonSQS.ListQueues\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    );
    stream.write_all(request.as_bytes())?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    if response.starts_with(b"HTTP/1.1 200") {
        Ok(())
    } else {
        Err(format!(
            "ListQueues: {}",
            String::from_utf8_lossy(&response[..response.len().min(200)])
        )
        .into())
    }
}

/// A field of /proc/<pid>/status in KiB (VmRSS, VmHWM).
pub fn status_kib(pid: u32, field: &str) -> BoxResult<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    for line in status.lines() {
        if let Some(rest) = line.strip_prefix(field).and_then(|r| r.strip_prefix(':')) {
            let kib = rest.trim().trim_end_matches("kB").trim();
            return Ok(kib.parse()?);
        }
    }
    Err(format!("no {field} in /proc/{pid}/status").into())
}

/// User + system CPU seconds a process has used (`self` for this one).
pub fn cpu_seconds(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of stat, 12 and 13 here.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // USER_HZ is 100 on every Linux ABI Rust targets.
    Some(ticks as f64 / 100.0)
}

/// What machine the numbers come from.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cpus: usize,
    pub cpu_model: String,
    pub memory_gib: f64,
    pub kernel: String,
    pub load_before: String,
    pub load_after: String,
}

pub fn machine() -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kib: f64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|l| l.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    Machine {
        cpus: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0),
        cpu_model,
        memory_gib: (mem_kib / 1024.0 / 1024.0 * 10.0).round() / 10.0,
        kernel: read_trim("/proc/sys/kernel/osrelease"),
        load_before: load(),
        load_after: String::new(),
    }
}

/// The 1, 5 and 15-minute load averages.
pub fn load() -> String {
    read_trim("/proc/loadavg")
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn read_trim(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}
