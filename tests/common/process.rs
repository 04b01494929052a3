//! The real `retsu` binary, for the tests whose subject is the process
//! itself (flags, environment, start-up, logs, signals, the admin CLI):
//! a command with a clean environment, a free port, and a started server
//! that is killed if the test fails before it exits.
//!
//! These run on the wall clock; the only real waits are for the process to
//! start listening and to exit.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_sqs::Client;

use super::sdk_client;

pub const BIN: &str = env!("CARGO_BIN_EXE_retsu");
/// How a server that could not bind its port says so (the OS's words).
pub const IN_USE: &str = "Address already in use";

/// A loopback port nobody listens on (the OS's choice, released at once),
/// never one this test binary handed out before: tests run side by side,
/// and two of them given the same port would start servers that race for
/// it.
pub fn free_port() -> u16 {
    static GIVEN: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if GIVEN.lock().unwrap().insert(port) {
            return port;
        }
    }
}

/// Whether process `pid` holds the socket listening on `port`: the
/// socket's inode, from the kernel's TCP tables, among the process's open
/// descriptors. `None` where there is no /proc to read.
fn holds_listener(pid: u32, port: u16) -> Option<bool> {
    let mut sockets = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let local_port = fields
                .get(1)
                .and_then(|a| a.rsplit(':').next())
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            // State 0A is LISTEN; the tenth field is the socket's inode.
            if local_port == Some(port) && fields.get(3) == Some(&"0A") {
                if let Some(inode) = fields.get(9) {
                    sockets.push(format!("socket:[{inode}]"));
                }
            }
        }
    }
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    Some(fds.flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .map(|target| sockets.iter().any(|s| target.as_os_str() == s.as_str()))
            .unwrap_or(false)
    }))
}

/// `retsu` with no RETSU_* variable from the test's environment, so a
/// developer's own settings cannot change what a test sees.
pub fn retsu() -> Command {
    let mut c = Command::new(BIN);
    for (k, _) in std::env::vars() {
        if k.starts_with("RETSU_") {
            c.env_remove(k);
        }
    }
    c
}

/// A running binary; its stderr lines arrive on a channel. Dropping it
/// kills the process.
pub struct Running {
    pub child: Child,
    pub port: u16,
    lines: mpsc::Receiver<String>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    /// Spawns `command`, which must make the server listen on `port`, and
    /// waits (real time, bounded) until it accepts connections.
    pub fn start(command: Command, port: u16) -> Running {
        Running::try_start(command, port).unwrap_or_else(|e| panic!("{e}"))
    }

    /// As `start`, with a port of its own: `make` builds the command for a
    /// port, and a server that found its port taken before it could bind
    /// it (another socket on the machine may take a released port) is
    /// started again on another.
    pub fn start_on_free_port(mut make: impl FnMut(u16) -> Command) -> Running {
        let mut taken = Vec::new();
        for _ in 0..5 {
            let port = free_port();
            match Running::try_start(make(port), port) {
                Ok(running) => return running,
                Err(e) if e.contains(IN_USE) => taken.push(port),
                Err(e) => panic!("{e}"),
            }
        }
        panic!("every port tried was taken before the server bound it: {taken:?}")
    }

    /// As `start`, with an early exit as the error (its status and what it
    /// wrote to stderr).
    pub fn try_start(mut command: Command, port: u16) -> Result<Running, String> {
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("retsu starts");
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut running = Running { child, port, lines };
        let start = Instant::now();
        // Ready when this child holds the port: a connection alone could
        // reach another test's server that took the port first.
        let ours = |running: &Running| match holds_listener(running.child.id(), port) {
            Some(held) => held && TcpStream::connect(("127.0.0.1", port)).is_ok(),
            None => TcpStream::connect(("127.0.0.1", port)).is_ok(),
        };
        while !ours(&running) {
            if let Some(status) = running.child.try_wait().unwrap() {
                // Everything it wrote: the reader ends with the pipe.
                let mut rest = Vec::new();
                while let Ok(line) = running.lines.recv_timeout(Duration::from_secs(2)) {
                    rest.push(line);
                }
                return Err(format!("retsu exited early: {status}\n{}", rest.join("\n")));
            }
            assert!(start.elapsed() < Duration::from_secs(20), "did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(running)
    }

    /// The first stderr line containing `needle` (real time, bounded).
    pub fn line_with(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(line) => seen.push(line),
                Err(_) => break,
            }
        }
        panic!("no log line with {needle:?}; saw:\n{}", seen.join("\n"))
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// An SDK client for this server in `region`.
    pub fn client(&self, region: &str) -> Client {
        sdk_client(&self.endpoint(), region)
    }

    /// Sends the signal `name` (`TERM`, `INT`) to the process.
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// Waits (real time) for the process to exit.
    pub async fn exit_status(&mut self, within: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                start.elapsed() < within,
                "retsu did not exit within {within:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
