//! The binary as a drop-in for LocalStack: `--localstack` (port, queue
//! URLs, LocalStack's variables, `Ready.` on stdout), `--no-localstack`,
//! and LocalStack's init hooks with `awslocal`, their status served by
//! `/_localstack/init`.
//!
//! The real binary, on the wall clock: what is under test is its standard
//! output, its start-up and the scripts it runs. The only waits are for the
//! process and its scripts, each bounded.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode, TlsContext, TrustStore};
use common::process::{free_port, retsu};
use serde_json::Value;

/// LocalStack's variables, which a developer's shell may hold: removed so
/// that only what a test sets is seen.
const LOCALSTACK_VARS: [&str; 8] = [
    "GATEWAY_LISTEN",
    "EDGE_PORT",
    "EDGE_BIND_HOST",
    "LOCALSTACK_HOST",
    "SQS_ENDPOINT_STRATEGY",
    "LS_LOG",
    "DEBUG",
    "RETSU_ENDPOINT",
];

/// `retsu` with neither RETSU_* nor LocalStack's variables.
fn command() -> Command {
    let mut c = retsu();
    for v in LOCALSTACK_VARS {
        c.env_remove(v);
    }
    c
}

/// A started binary whose stdout and stderr lines arrive on channels;
/// killed when dropped.
struct Proc {
    child: Child,
    port: u16,
    stdout: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
    seen_err: Vec<String>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn lines(stream: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

impl Proc {
    /// Spawns `command` (which listens on `port`, or on the port its ready
    /// line names when `port` is 0) and waits, bounded, for its "retsu
    /// ready" line (after a `retsu tls` line, with TLS on).
    fn start(mut command: Command, port: u16) -> Proc {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("retsu starts");
        let stdout = lines(child.stdout.take().unwrap());
        let stderr = lines(child.stderr.take().unwrap());
        let mut p = Proc {
            child,
            port,
            stdout,
            stderr,
            seen_err: Vec::new(),
        };
        let mut first = p.stdout_line(Duration::from_secs(20));
        if first
            .as_deref()
            .is_some_and(|l| l.starts_with("retsu tls "))
        {
            first = p.stdout_line(Duration::from_secs(20));
        }
        if port == 0 {
            let bound = first
                .as_deref()
                .and_then(|l| l.strip_prefix("retsu ready http://127.0.0.1:"))
                .and_then(|p| p.parse().ok());
            p.port = bound.unwrap_or_else(|| panic!("ready line {first:?}"));
        }
        let port = p.port;
        assert_eq!(
            first.as_deref(),
            Some(format!("retsu ready http://127.0.0.1:{port}").as_str()),
            "stderr:\n{}",
            p.drain_stderr()
        );
        p
    }

    fn stdout_line(&self, within: Duration) -> Option<String> {
        self.stdout.recv_timeout(within).ok()
    }

    fn drain_stderr(&mut self) -> String {
        self.seen_err.extend(self.stderr.try_iter());
        self.seen_err.join("\n")
    }

    /// The first stderr line (since the last look) containing `needle`.
    fn stderr_line_with(&mut self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.stderr.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(line) => self.seen_err.push(line),
                Err(_) => break,
            }
        }
        panic!(
            "no log line with {needle:?}; saw:\n{}",
            self.seen_err.join("\n")
        )
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    async fn get(&self, path: &str) -> (u16, String) {
        let r = reqwest::Client::new()
            .get(format!("{}{path}", self.endpoint()))
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    }

    async fn json(&self, path: &str) -> Value {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "{path}: {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"))
    }

    fn signal(&self, name: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }

    async fn exit(&mut self) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "did not exit");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A fresh folder under the system's temporary one.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "retsu-localstack-{name}-{}-{}",
        std::process::id(),
        free_port()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_script(path: &Path, text: &str, executable: bool) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    if executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// A `PATH` on which the AWS CLI, which the awslocal shim runs, is found:
/// the machine's, else with compat/'s pinned AWS CLI v1 in front
/// (`compat/python/setup.sh cli` installs it); `None` when neither has it.
fn path_with_aws_cli() -> Option<std::ffi::OsString> {
    let runs = |path: &std::ffi::OsStr| {
        Command::new("aws")
            .arg("--version")
            .env("PATH", path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let current = std::env::var_os("PATH").unwrap_or_default();
    if runs(&current) {
        return Some(current);
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("compat/.venv-cli/bin");
    let mut dirs = vec![venv];
    dirs.extend(std::env::split_paths(&current));
    let joined = std::env::join_paths(dirs).ok()?;
    runs(&joined).then_some(joined)
}

#[tokio::test]
async fn localstack_switch_serves_localstacks_port_urls_and_ready_line() {
    // GATEWAY_LISTEN picks the port (4566 itself may be taken on a shared
    // machine: port 0, and the ready line names the one bound); the rest
    // are LocalStack's defaults.
    let mut c = command();
    c.arg("--localstack").env("GATEWAY_LISTEN", "127.0.0.1:0");
    let mut p = Proc::start(c, 0);
    let port = p.port;
    assert_eq!(
        p.stdout_line(Duration::from_secs(10)).as_deref(),
        Some("Ready."),
        "{}",
        p.drain_stderr()
    );

    let sqs = common::sdk_client(&p.endpoint(), "us-east-1");
    let url = sqs
        .create_queue()
        .queue_name("jobs")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    assert_eq!(
        url,
        format!("http://sqs.us-east-1.localhost.localstack.cloud:{port}/000000000000/jobs")
    );
    // The URL works as a QueueUrl parameter, as LocalStack's does.
    sqs.send_message()
        .queue_url(&url)
        .message_body("hello")
        .send()
        .await
        .unwrap();
    let got = sqs.receive_message().queue_url(&url).send().await.unwrap();
    assert_eq!(got.messages()[0].body(), Some("hello"));
    let eu = common::sdk_client(&p.endpoint(), "eu-west-1");
    let there = eu
        .create_queue()
        .queue_name("jobs")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    assert_eq!(
        there,
        format!("http://sqs.eu-west-1.localhost.localstack.cloud:{port}/000000000000/jobs")
    );
    let listed = sqs.list_queues().send().await.unwrap();
    assert_eq!(listed.queue_urls(), std::slice::from_ref(&url));

    let health = p.json("/_localstack/health").await;
    assert_eq!(health["services"]["sqs"], "running");
    p.signal("TERM");
    assert!(p.exit().await.success());
}

#[tokio::test]
async fn localstack_variables_and_the_file_layer_as_documented() {
    // LOCALSTACK_HOST names the queue URLs' host; a flag's port wins over
    // GATEWAY_LISTEN; SQS_ENDPOINT_STRATEGY=path names the region in the
    // path of every queue URL, on the host the request reached.
    let mut c = command();
    c.args(["--localstack", "--port", "0"])
        .env("GATEWAY_LISTEN", "127.0.0.1:1")
        .env("LOCALSTACK_HOST", "localstack:4566");
    let p = Proc::start(c, 0);
    let sqs = common::sdk_client(&p.endpoint(), "us-east-1");
    let url = sqs.create_queue().queue_name("a").send().await.unwrap();
    assert_eq!(
        url.queue_url(),
        Some("http://sqs.us-east-1.localstack:4566/000000000000/a")
    );
    drop(p);

    let dir = scratch("file");
    let file = dir.join("retsu.toml");
    std::fs::write(&file, "localstack = true\nport = 0\n").unwrap();
    let mut c = command();
    c.arg("--config")
        .arg(&file)
        .env("SQS_ENDPOINT_STRATEGY", "path");
    let p = Proc::start(c, 0);
    let port = p.port;
    assert_eq!(
        p.stdout_line(Duration::from_secs(10)).as_deref(),
        Some("Ready.")
    );
    let sqs = common::sdk_client(&p.endpoint(), "us-east-1");
    let url = sqs.create_queue().queue_name("b").send().await.unwrap();
    assert_eq!(
        url.queue_url(),
        Some(format!("http://127.0.0.1:{port}/queue/us-east-1/000000000000/b").as_str())
    );
    drop(p);
    std::fs::remove_dir_all(&dir).unwrap();

    // A strategy Retsu does not serve, and both switches at once, stop
    // start-up with the reason.
    let out = command()
        .args(["--localstack", "--port", "0"])
        .env("SQS_ENDPOINT_STRATEGY", "domain")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("SQS_ENDPOINT_STRATEGY=domain"));
    let out = command()
        .args(["--port", "0"])
        .env("RETSU_LOCALSTACK", "1")
        .env("RETSU_NO_LOCALSTACK", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-localstack"));
}

#[tokio::test]
async fn without_the_switch_there_is_no_ready_line() {
    let mut c = command();
    c.args(["--port", "0"]);
    let mut p = Proc::start(c, 0);
    // The LocalStack endpoints are still served.
    assert_eq!(p.json("/_localstack/init/ready").await["completed"], true);
    p.signal("TERM");
    assert!(p.exit().await.success());
    let rest: Vec<String> = p.stdout.try_iter().collect();
    assert!(rest.is_empty(), "{rest:?}");
}

#[tokio::test]
async fn init_hooks_run_in_order_with_awslocal_and_report_their_state() {
    let dir = scratch("hooks");
    let marker = dir.join("marks");
    // BOOT and START run before the socket is bound; READY once it
    // answers, in alphanumerical order (subfolders after a folder's own
    // files); SHUTDOWN on SIGTERM.
    for (file, mark) in [
        ("boot.d/boot.sh", "boot"),
        ("start.d/start.sh", "start"),
        ("ready.d/01-first.sh", "ready-1"),
        ("ready.d/z-sub/04-last.sh", "ready-4"),
        ("shutdown.d/bye.sh", "shutdown"),
    ] {
        write_script(
            &dir.join(file),
            &format!(
                "#!/bin/sh\necho \"{mark} says hello\"\necho {mark} >> '{}'\n",
                marker.display()
            ),
            true,
        );
    }
    let aws_path = path_with_aws_cli();
    let awslocal = aws_path.is_some();
    let create = if awslocal {
        "#!/bin/sh\nset -e\nawslocal sqs create-queue --queue-name made-by-a-hook\nawslocal sns create-topic --name hooked\n"
    } else {
        eprintln!(
            "aws-cli is not installed: the awslocal hook only checks that awslocal is on its PATH"
        );
        "#!/bin/sh\ncommand -v awslocal\n"
    };
    write_script(&dir.join("ready.d/02-awslocal.sh"), create, true);
    // No execute bit: run by sh; its failure is ERROR and the next runs.
    write_script(
        &dir.join("ready.d/03-fails.sh"),
        "echo broken >&2\nexit 3\n",
        false,
    );
    std::fs::write(dir.join("ready.d/README.txt"), "not a script").unwrap();

    let mut c = command();
    c.args(["--localstack", "--port", "0", "--init-dir"])
        .arg(&dir);
    if let Some(path) = &aws_path {
        c.env("PATH", path);
    }
    let mut p = Proc::start(c, 0);
    let port = p.port;
    let marks = || std::fs::read_to_string(&marker).unwrap_or_default();
    assert_eq!(
        marks(),
        "boot\nstart\n",
        "BOOT and START ran before serving"
    );

    // "Ready." comes once READY's hooks finished.
    assert_eq!(
        p.stdout_line(Duration::from_secs(60)).as_deref(),
        Some("Ready."),
        "{}",
        p.drain_stderr()
    );
    let ready = p.json("/_localstack/init/ready").await;
    assert_eq!(ready["completed"], true, "{ready}");
    let all = p.json("/_localstack/init").await;
    assert_eq!(
        all["completed"],
        serde_json::json!({"BOOT": true, "START": true, "READY": true, "SHUTDOWN": false})
    );
    let states: Vec<(String, String, String)> = all["scripts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["stage"].as_str().unwrap().to_string(),
                s["name"].as_str().unwrap().to_string(),
                s["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        ("BOOT", "boot.sh", "SUCCESSFUL"),
        ("START", "start.sh", "SUCCESSFUL"),
        ("READY", "01-first.sh", "SUCCESSFUL"),
        ("READY", "02-awslocal.sh", "SUCCESSFUL"),
        ("READY", "03-fails.sh", "ERROR"),
        ("READY", "04-last.sh", "SUCCESSFUL"),
        ("SHUTDOWN", "bye.sh", "UNKNOWN"),
    ]
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()));
    assert_eq!(states, want, "{}", p.drain_stderr());
    assert_eq!(marks(), "boot\nstart\nready-1\nready-4\n");
    // Their output is in the log.
    p.stderr_line_with("ready-1 says hello");
    p.stderr_line_with("broken");

    if awslocal {
        let sqs = common::sdk_client(&p.endpoint(), "us-east-1");
        let url = sqs
            .get_queue_url()
            .queue_name("made-by-a-hook")
            .send()
            .await
            .expect("the hook's awslocal created the queue");
        assert_eq!(
            url.queue_url(),
            Some(
                format!(
                    "http://sqs.us-east-1.localhost.localstack.cloud:{port}/000000000000/made-by-a-hook"
                )
                .as_str()
            )
        );
        let topics = common::sns_client(&p.endpoint())
            .list_topics()
            .send()
            .await
            .unwrap();
        assert!(topics
            .topics()
            .iter()
            .any(|t| t.topic_arn().is_some_and(|a| a.ends_with(":hooked"))));
    } else {
        eprintln!("skipped: checking the hook's queue, aws-cli is not installed");
    }

    p.signal("TERM");
    assert!(p.exit().await.success());
    assert!(marks().ends_with("shutdown\n"), "{}", marks());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn no_localstack_serves_none_of_it_and_runs_no_hook() {
    let dir = scratch("off");
    let marker = dir.join("ran");
    write_script(
        &dir.join("ready.d/mark.sh"),
        &format!("#!/bin/sh\ntouch '{}'\n", marker.display()),
        true,
    );
    let mut c = command();
    c.args(["--no-localstack", "--port", "0", "--init-dir"])
        .arg(&dir);
    let p = Proc::start(c, 0);
    for path in [
        "/_localstack/health",
        "/_localstack/init",
        "/_aws/sqs/messages",
    ] {
        let (status, body) = p.get(path).await;
        assert_ne!(status, 200, "{path}: {body}");
        assert!(!body.contains("\"services\""), "{path}: {body}");
    }
    // Retsu's own admin API is still there.
    assert_eq!(p.get("/_retsu/health").await.0, 200);
    drop(p);
    assert!(!marker.exists(), "a hook ran under --no-localstack");

    // A named init folder that does not exist stops start-up.
    let out = command()
        .args(["--port", "0", "--init-dir"])
        .arg(dir.join("missing"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such init-hook directory"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An SQS client for `endpoint` over TLS, trusting only `ca_pem`.
fn sqs_trusting(endpoint: &str, ca_pem: &[u8]) -> aws_sdk_sqs::Client {
    use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(CryptoMode::Ring))
        .tls_context(
            TlsContext::builder()
                .with_trust_store(TrustStore::empty().with_pem_certificate(ca_pem.to_vec()))
                .build()
                .unwrap(),
        )
        .build_https();
    aws_sdk_sqs::Client::from_conf(
        aws_sdk_sqs::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("test", "test", None, None, "static"))
            .endpoint_url(endpoint)
            .http_client(http)
            .retry_config(aws_sdk_sqs::config::retry::RetryConfig::disabled())
            .build(),
    )
}

#[tokio::test]
async fn standard_urls_keep_the_requests_scheme_and_name_the_bound_port() {
    // `--localstack --port 0`: the queue URLs name the port the server
    // bound, not `:0`; over TLS they are https://, over plain HTTP on the
    // same port http://, as under the other strategies.
    let dir = scratch("tls");
    let ca = retsu::tls::LocalCa::open(&dir.join("tls")).expect("a local CA");
    let mut c = command();
    c.args(["--localstack", "--port", "0", "--tls-cert"])
        .arg(&ca.cert_path)
        .arg("--tls-key")
        .arg(&ca.key_path);
    let p = Proc::start(c, 0);
    let port = p.port;
    assert_ne!(port, 0);
    let host = format!("sqs.us-east-1.localhost.localstack.cloud:{port}/000000000000");

    let plain = common::sdk_client(&p.endpoint(), "us-east-1");
    let url = plain
        .create_queue()
        .queue_name("plain")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    assert_eq!(url, format!("http://{host}/plain"));

    let ca_pem = std::fs::read(&ca.ca_path).unwrap();
    let tls = sqs_trusting(&format!("https://127.0.0.1:{port}"), &ca_pem);
    let url = tls
        .create_queue()
        .queue_name("secure")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    assert_eq!(url, format!("https://{host}/secure"));
    let listed = tls.list_queues().send().await.unwrap();
    assert_eq!(
        listed.queue_urls(),
        [
            format!("https://{host}/plain"),
            format!("https://{host}/secure")
        ]
    );
    // The https URL works as a QueueUrl, as the http one does.
    tls.send_message()
        .queue_url(&url)
        .message_body("over tls")
        .send()
        .await
        .unwrap();
    drop(p);
    std::fs::remove_dir_all(&dir).unwrap();
}
