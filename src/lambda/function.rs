//! The functions a mapping can name, and how one is invoked.
//!
//! Retsu runs no code of its own choosing: which function name means which
//! handler is configuration (`--function NAME=URL`, `[[functions]]` in the
//! file). A target is either an endpoint speaking Lambda's Invoke API
//! (AWS's runtime interface emulator, `sam local start-lambda`, or any
//! HTTP handler) or a command that reads the event on stdin and writes
//! its answer on stdout.
//!
//! What counts as a function error, as Lambda's Invoke reports it: an
//! `X-Amz-Function-Error` header, a status outside 2xx, no answer within
//! the function's timeout, or the runtime's error document
//! (`{"errorMessage", "errorType"}`), which the runtime interface
//! emulator passes on without the header Lambda adds. A command fails
//! when it exits non-zero or outlives its timeout.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;

/// The path of the Invoke API on the runtime interface emulator: a URL
/// given without a path is this function's base.
pub const RIE_INVOKE_PATH: &str = "/2015-03-31/functions/function/invocations";

/// Lambda's default function timeout, in seconds.
pub const DEFAULT_TIMEOUT_S: u64 = 3;

/// One configured function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionTarget {
    pub name: String,
    pub target: Target,
    /// Environment variables: given to a command, and reported by
    /// GetFunction.
    pub environment: BTreeMap<String, String>,
    /// Seconds an invocation may take before it counts as timed out.
    pub timeout_s: u64,
    /// Invocations the target takes at once: one for the runtime
    /// interface emulator, which is one execution environment and refuses
    /// a second invocation while one runs. Mappings' pollers wait for a
    /// free one before receiving, as Lambda's pollers hold back when a
    /// function is at its concurrency.
    pub concurrency: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The URL invocations are POSTed to.
    Url(String),
    /// A program and its arguments.
    Command(Vec<String>),
}

impl FunctionTarget {
    /// `NAME=URL`, as `--function` takes it.
    pub fn parse_flag(value: &str) -> Result<FunctionTarget, String> {
        let (name, url) = value
            .split_once('=')
            .ok_or("a function is NAME=URL, e.g. orders=http://127.0.0.1:9000")?;
        FunctionTarget::with_url(name, url, BTreeMap::new(), DEFAULT_TIMEOUT_S)
    }

    /// A function invoked over HTTP at `url` (a bare `scheme://host:port`
    /// means the runtime interface emulator's Invoke path on it).
    pub fn with_url(
        name: &str,
        url: &str,
        environment: BTreeMap<String, String>,
        timeout_s: u64,
    ) -> Result<FunctionTarget, String> {
        check_name(name)?;
        let url = url.trim();
        let rest = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("https://"))
            .ok_or_else(|| {
                format!("the URL of function {name} must start with http:// or https://")
            })?;
        if rest.is_empty() || rest.starts_with('/') {
            return Err(format!("the URL of function {name} needs a host"));
        }
        let url = match rest.find('/') {
            None => format!("{url}{RIE_INVOKE_PATH}"),
            Some(i) if rest[i..] == *"/" => {
                format!("{}{RIE_INVOKE_PATH}", url.trim_end_matches('/'))
            }
            Some(_) => url.to_string(),
        };
        url.parse::<hyper::Uri>()
            .map_err(|e| format!("the URL of function {name} is not valid: {e}"))?;
        Ok(FunctionTarget {
            name: name.to_string(),
            target: Target::Url(url),
            environment,
            timeout_s: check_timeout(name, timeout_s)?,
            concurrency: 1,
        })
    }

    /// A function run as `command` for each invocation.
    pub fn with_command(
        name: &str,
        command: Vec<String>,
        environment: BTreeMap<String, String>,
        timeout_s: u64,
    ) -> Result<FunctionTarget, String> {
        check_name(name)?;
        if command.first().is_none_or(|c| c.is_empty()) {
            return Err(format!("the command of function {name} is empty"));
        }
        Ok(FunctionTarget {
            name: name.to_string(),
            target: Target::Command(command),
            environment,
            timeout_s: check_timeout(name, timeout_s)?,
            concurrency: 1,
        })
    }

    /// The same function taking `n` invocations at once (1 to 1000).
    pub fn with_concurrency(mut self, n: u32) -> Result<FunctionTarget, String> {
        if !(1..=1000).contains(&n) {
            return Err(format!(
                "the concurrency of function {} is {n}; it must be 1 to 1000",
                self.name
            ));
        }
        self.concurrency = n;
        Ok(self)
    }

    /// Runs one invocation with `payload` as the event.
    pub async fn invoke(&self, payload: Bytes, request_id: &str) -> Invocation {
        let timeout = Duration::from_secs(self.timeout_s);
        match &self.target {
            Target::Url(url) => invoke_http(url, payload, request_id, timeout).await,
            Target::Command(argv) => {
                invoke_command(argv, &self.environment, payload, request_id, timeout).await
            }
        }
    }
}

/// Lambda's function names: letters, digits, `-` and `_`, 1 to 64.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a function name (1 to 64 letters, digits, '-' and '_')"
        ))
    }
}

/// Lambda's range: 1 second to 15 minutes.
fn check_timeout(name: &str, seconds: u64) -> Result<u64, String> {
    if (1..=900).contains(&seconds) {
        Ok(seconds)
    } else {
        Err(format!(
            "the timeout of function {name} is {seconds}; it must be 1 to 900 seconds"
        ))
    }
}

/// What one invocation gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// The function returned this payload.
    Returned(Bytes),
    /// The function failed: why, as the event stream and logs show it.
    Failed(String),
}

async fn invoke_http(url: &str, payload: Bytes, request_id: &str, timeout: Duration) -> Invocation {
    let headers = [
        ("content-type", "application/json".to_string()),
        ("x-amz-invocation-type", "RequestResponse".to_string()),
        ("x-amz-log-type", "None".to_string()),
        ("x-amzn-requestid", request_id.to_string()),
        // The emulator base64-decodes it; empty is "no client context".
        ("x-amz-client-context", String::new()),
    ];
    let answer = match crate::sns_http::exchange(url, &headers, payload, timeout).await {
        Ok(answer) => answer,
        Err(e) => return Invocation::Failed(e),
    };
    if let Some(kind) = answer.headers.get("x-amz-function-error") {
        return Invocation::Failed(format!(
            "function error ({}): {}",
            kind.to_str().unwrap_or("?"),
            excerpt(&answer.body)
        ));
    }
    if !answer.status.is_success() {
        return Invocation::Failed(format!(
            "the endpoint answered {}: {}",
            answer.status,
            excerpt(&answer.body)
        ));
    }
    if let Some(why) = runtime_error(&answer.body) {
        return Invocation::Failed(why);
    }
    Invocation::Returned(answer.body)
}

/// The runtime's error document, or the emulator's timeout text: both
/// arrive with a 200 from the runtime interface emulator.
fn runtime_error(body: &[u8]) -> Option<String> {
    if body.starts_with(b"Task timed out after") {
        return Some(String::from_utf8_lossy(body).into_owned());
    }
    let doc: serde_json::Value = serde_json::from_slice(body).ok()?;
    let object = doc.as_object()?;
    match (object.get("errorType"), object.get("errorMessage")) {
        (Some(kind), Some(message)) if object.len() <= 4 => Some(format!(
            "function error ({}): {}",
            kind.as_str().unwrap_or("?"),
            message.as_str().unwrap_or("")
        )),
        _ => None,
    }
}

fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut cut: String = text.chars().take(300).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

async fn invoke_command(
    argv: &[String],
    environment: &BTreeMap<String, String>,
    payload: Bytes,
    request_id: &str,
    timeout: Duration,
) -> Invocation {
    use std::process::Stdio;
    use tokio::io::AsyncWriteExt;
    let mut command = tokio::process::Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .envs(environment)
        .env("AWS_LAMBDA_REQUEST_ID", request_id)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A handler past its timeout is killed with its invocation.
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return Invocation::Failed(format!("cannot run {}: {e}", argv[0])),
    };
    let run = async {
        if let Some(mut stdin) = child.stdin.take() {
            // A handler that does not read its event still gets to answer.
            let _ = stdin.write_all(&payload).await;
        }
        child.wait_with_output().await
    };
    match tokio::time::timeout(timeout, run).await {
        Err(_) => Invocation::Failed(format!(
            "Task timed out after {} seconds",
            timeout.as_secs()
        )),
        Ok(Err(e)) => Invocation::Failed(format!("{}: {e}", argv[0])),
        Ok(Ok(output)) if !output.status.success() => Invocation::Failed(format!(
            "{} exited with {}: {}",
            argv[0],
            output.status,
            excerpt(&output.stderr)
        )),
        Ok(Ok(output)) => Invocation::Returned(Bytes::from(output.stdout)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_forms() {
        let f = FunctionTarget::parse_flag("orders=http://127.0.0.1:9000").unwrap();
        assert_eq!(f.name, "orders");
        assert_eq!(
            f.target,
            Target::Url(format!("http://127.0.0.1:9000{RIE_INVOKE_PATH}"))
        );
        let f = FunctionTarget::parse_flag("o=http://h:1/").unwrap();
        assert_eq!(
            f.target,
            Target::Url(format!("http://h:1{RIE_INVOKE_PATH}"))
        );
        let f = FunctionTarget::parse_flag("o=http://h:1/hook").unwrap();
        assert_eq!(f.target, Target::Url("http://h:1/hook".into()));
        for bad in [
            "orders",
            "=http://h",
            "a b=http://h",
            "o=ftp://h",
            "o=http://",
        ] {
            assert!(FunctionTarget::parse_flag(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn runtime_errors_are_function_errors() {
        assert!(runtime_error(
            br#"{"errorMessage":"boom","errorType":"ValueError","stackTrace":[]}"#
        )
        .is_some());
        assert!(runtime_error(b"Task timed out after 3.00 seconds").is_some());
        assert!(runtime_error(br#"{"batchItemFailures":[]}"#).is_none());
        assert!(runtime_error(b"null").is_none());
    }

    #[tokio::test]
    async fn commands_read_the_event_and_answer_on_stdout() {
        let env = BTreeMap::from([("GREETING".to_string(), "hi".to_string())]);
        let cat = FunctionTarget::with_command("cat", vec!["cat".into()], env.clone(), 5).unwrap();
        assert_eq!(
            cat.invoke(Bytes::from_static(b"{\"a\":1}"), "r").await,
            Invocation::Returned(Bytes::from_static(b"{\"a\":1}"))
        );
        let sh = |script: &str| {
            FunctionTarget::with_command(
                "sh",
                vec!["sh".into(), "-c".into(), script.into()],
                env.clone(),
                1,
            )
            .unwrap()
        };
        assert_eq!(
            sh("printf %s \"$GREETING\"")
                .invoke(Bytes::new(), "r")
                .await,
            Invocation::Returned(Bytes::from_static(b"hi"))
        );
        assert!(matches!(
            sh("exit 3").invoke(Bytes::new(), "r").await,
            Invocation::Failed(_)
        ));
        assert!(matches!(
            sh("sleep 5").invoke(Bytes::new(), "r").await,
            Invocation::Failed(why) if why.contains("timed out")
        ));
    }
}
