//! What the Lambda test files share: the official SDK's Lambda client, a
//! server configured with functions, AWS's runtime interface emulator
//! running one handler (and whether this machine can run it at all), and a
//! bounded wait for what a handler, in another process, has done.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use retsu::config::Config;
use retsu::lambda::FunctionTarget;

use super::process::free_port;
use super::{in_cluster, TestServer, REGION};

pub fn client(endpoint: &str) -> aws_sdk_lambda::Client {
    super::aws_client!(aws_sdk_lambda, endpoint, REGION, ("test", "test"))
}

/// A function invoked at `url`, with a 30 s timeout.
pub fn url_function(name: &str, url: &str) -> FunctionTarget {
    FunctionTarget::with_url(name, url, Default::default(), 30).unwrap()
}

/// A server whose configuration names `functions`, and a Lambda client.
pub async fn server_with(functions: Vec<FunctionTarget>) -> (TestServer, aws_sdk_lambda::Client) {
    let server = TestServer::start_with(Config {
        functions,
        ..Config::ephemeral()
    })
    .await;
    let lambda = client(&server.endpoint);
    (server, lambda)
}

/// Waits (real time, bounded) until `check` holds: the handler runs in
/// another process, so its effects arrive when they arrive.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `true` (after saying why the test is skipped) in a cluster: what these
/// tests read (pollers, invokers, the invocation log, `/metrics`) lives on
/// the node that runs it, which a test's round-robin proxy does not pick.
pub fn single_node_only(what: &str) -> bool {
    if in_cluster() {
        eprintln!("skipped in a cluster: {what} are tested on a single node");
        return true;
    }
    false
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `scripts/lambda-rie.sh <step>` once per test binary; `false`
/// (after saying why) when this machine cannot.
fn setup(step: &'static str) -> bool {
    static READY: Mutex<Option<HashMap<&'static str, bool>>> = Mutex::new(None);
    let mut ready = READY.lock().unwrap_or_else(|p| p.into_inner());
    let ready = ready.get_or_insert_with(HashMap::new);
    *ready.entry(step).or_insert_with(|| {
        let out = std::process::Command::new("bash")
            .arg(root().join("scripts/lambda-rie.sh"))
            .arg(step)
            .output()
            .expect("bash runs");
        let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
        match out.status.code() {
            Some(0) => true,
            Some(3) => {
                eprintln!("{said}: the runtime interface emulator tests ({step}) are skipped");
                false
            }
            _ => panic!(
                "scripts/lambda-rie.sh {step} failed: {said}\n{}",
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    })
}

/// Whether the emulator and the Python runtime (awslambdaric, Powertools)
/// are there, built on first use.
pub fn rie_available() -> bool {
    setup("setup")
}

/// Whether the emulator and Node.js's runtime (aws-lambda-ric) are there.
pub fn node_available() -> bool {
    setup("setup-node")
}

/// The AWS CLI (v1, compat/'s pin) in its own venv, when this machine can
/// make one.
pub fn aws_cli() -> Option<PathBuf> {
    setup("setup-cli").then(|| root().join("scripts/.lambda/cli/bin/aws"))
}

/// Runs `aws --endpoint-url ENDPOINT lambda ARGS…` with test credentials;
/// its JSON answer, or its error text.
pub fn aws_lambda(
    aws: &std::path::Path,
    endpoint: &str,
    args: &[&str],
) -> Result<serde_json::Value, String> {
    let out = std::process::Command::new(aws)
        .args(["--endpoint-url", endpoint, "--output", "json", "lambda"])
        .args(args)
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_DEFAULT_REGION", REGION)
        .env("AWS_CONFIG_FILE", "/dev/null")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
        .env("AWS_MAX_ATTEMPTS", "1")
        .env("AWS_PAGER", "")
        .output()
        .expect("the AWS CLI runs");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    if text.trim().is_empty() {
        return Ok(serde_json::Value::Null);
    }
    serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))
}

/// AWS's runtime interface emulator running one handler of tests/lambda/;
/// dropped, it is stopped.
pub struct Rie {
    child: std::process::Child,
    pub url: String,
    log: PathBuf,
}

impl Rie {
    /// A Python handler, `FILE.FUNCTION` of tests/lambda/*.py (awslambdaric).
    pub fn python(handler: &str) -> Rie {
        Rie::launch("run", handler)
    }

    /// A Node.js handler, `FILE.FUNCTION` of tests/lambda/*.mjs (aws-lambda-ric).
    pub fn node(handler: &str) -> Rie {
        Rie::launch("run-node", handler)
    }

    fn launch(step: &str, handler: &str) -> Rie {
        let port = free_port();
        let log = std::env::temp_dir().join(format!("retsu-lambda-{}.log", uuid::Uuid::new_v4()));
        let child = std::process::Command::new("bash")
            .arg(root().join("scripts/lambda-rie.sh"))
            .args([step, &format!("127.0.0.1:{port}")])
            .arg(root().join("tests/lambda"))
            .arg(handler)
            // The handlers write what they were given here, a line each.
            .env("LAMBDA_LOG", &log)
            // Emulators run side by side: each its own Runtime API port.
            .env("RIE_RUNTIME_API", format!("127.0.0.1:{}", free_port()))
            .env("AWS_LAMBDA_FUNCTION_TIMEOUT", "30")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the emulator starts");
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the emulator did not listen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Rie {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log,
        }
    }

    /// What the handler wrote, one line per invocation, in order.
    pub fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Rie {
    fn drop(&mut self) {
        // SIGTERM: the emulator stops its runtime process with it.
        let _ = std::process::Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}
