//! `--localstack`: LocalStack's defaults, layered under Retsu's own
//! settings (flag > `RETSU_*` variable > configuration file > LocalStack's
//! variables > LocalStack's defaults > Retsu's defaults), so a project that
//! swaps the image keeps its port, queue URLs and environment.
//!
//! LocalStack's variables honoured (only with `--localstack`, so a stray
//! `EDGE_PORT` in a CI environment changes nothing otherwise):
//! - `GATEWAY_LISTEN` (`[host]:port[,…]`): the first address is where Retsu
//!   listens (Retsu listens on one); default port 4566. `EDGE_PORT` and
//!   `EDGE_BIND_HOST`, which LocalStack 3 dropped, are read when it is unset.
//! - `LOCALSTACK_HOST` (`host[:port]`): the host of queue URLs, default
//!   `localhost.localstack.cloud` on the listening port, as LocalStack's.
//! - `SQS_ENDPOINT_STRATEGY`: `standard` (LocalStack's default since 3.0:
//!   `http://sqs.<region>.<LOCALSTACK_HOST>/<account>/<name>` for every
//!   region), `path` (`/queue/<region>/<account>/<name>` for every region,
//!   on the host the request reached) or `off` (Retsu's own URLs); the
//!   legacy `domain` is refused by name rather than served differently.
//! - `LS_LOG` (`trace`, `debug`, `info`, `warn`, `error`) and `DEBUG=1`:
//!   the log level.

use crate::config::Config;

/// LocalStack's edge port.
pub const PORT: u16 = 4566;

/// The host LocalStack's queue URLs name, which public DNS resolves to
/// 127.0.0.1.
pub const LOCALHOST_CLOUD: &str = "localhost.localstack.cloud";

/// Applies LocalStack's variables and defaults to every setting `given`
/// does not report as set by a flag, a `RETSU_*` variable or the file.
/// `env` reads a variable (the process environment in the binary).
pub fn apply(
    config: &mut Config,
    given: impl Fn(&str) -> bool,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(), String> {
    let var = |name: &str| {
        env(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };

    let (host, port) = match var("GATEWAY_LISTEN") {
        Some(listen) => {
            let first = listen.split(',').next().unwrap_or("").trim().to_string();
            host_and_port(&first, PORT).map_err(|e| format!("GATEWAY_LISTEN={listen:?}: {e}"))?
        }
        None => {
            let port = match var("EDGE_PORT") {
                Some(p) => p
                    .parse()
                    .map_err(|_| format!("EDGE_PORT={p:?} is not a port number"))?,
                None => PORT,
            };
            (var("EDGE_BIND_HOST"), port)
        }
    };
    if !given("port") {
        config.port = port;
    }
    if let Some(host) = host.filter(|_| !given("host")) {
        config.host = host;
    }

    let strategy = var("SQS_ENDPOINT_STRATEGY").unwrap_or_else(|| "standard".into());
    match strategy.to_ascii_lowercase().as_str() {
        "standard" => {
            if !given("base_url") {
                // The scheme and, when LOCALSTACK_HOST names none, the port
                // are the server's to fill in: the request's scheme (TLS or
                // not) and the port actually bound (`--port 0`).
                let (host, port) = match var("LOCALSTACK_HOST") {
                    Some(h) => host_port_given(&h)
                        .map_err(|e| format!("LOCALSTACK_HOST={h:?}: {e}"))?,
                    None => (None, None),
                };
                let host = host.unwrap_or_else(|| LOCALHOST_CLOUD.into());
                config.localstack_url_host = Some((host, port));
            }
            config.host_style_queue_urls = true;
            config.region_in_every_url = true;
        }
        "path" => config.region_in_every_url = true,
        "off" => {}
        "domain" => {
            return Err("SQS_ENDPOINT_STRATEGY=domain (LocalStack's legacy <region>.queue.<host> queue URLs) is not served; use standard, path or off".into())
        }
        other => {
            return Err(format!(
                "SQS_ENDPOINT_STRATEGY={other:?} is not one of standard, path, off"
            ))
        }
    }

    if !given("log_level") {
        let level = match var("LS_LOG").map(|l| l.to_ascii_lowercase()) {
            Some(l) if l.starts_with("trace") => Some("trace"),
            Some(l) if l == "debug" => Some("debug"),
            Some(l) if l == "info" => Some("info"),
            Some(l) if l == "warn" || l == "warning" => Some("warn"),
            Some(l) if l == "error" => Some("error"),
            _ => None,
        };
        let debug = var("DEBUG").is_some_and(|d| {
            matches!(d.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on")
        });
        if let Some(level) = level.or(debug.then_some("debug")) {
            config.log_level = level.into();
        }
    }
    Ok(())
}

/// `host:port`, `:port`, `host` or `[v6]:port` (LocalStack's forms): the
/// host when one is named, and the port or `default_port`.
fn host_and_port(text: &str, default_port: u16) -> Result<(Option<String>, u16), String> {
    let (host, port) = host_port_given(text)?;
    Ok((host, port.unwrap_or(default_port)))
}

/// [`host_and_port`]'s parts as written: the port only when one is named.
fn host_port_given(text: &str) -> Result<(Option<String>, Option<u16>), String> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (v6, after) = rest
            .split_once(']')
            .ok_or("an IPv6 address is written [addr]:port")?;
        (v6.to_string(), after.strip_prefix(':'))
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (text.to_string(), None),
        }
    };
    let port = match port {
        Some(p) => Some(
            p.parse()
                .map_err(|_| format!("{p:?} is not a port number"))?,
        ),
        None => None,
    };
    Ok((Some(host).filter(|h| !h.is_empty()), port))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn layered(vars: &[(&str, &str)], given: &[&str]) -> Result<Config, String> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut c = Config::default();
        apply(&mut c, |id| given.contains(&id), |k| vars.get(k).cloned())?;
        Ok(c)
    }

    #[test]
    fn defaults_are_localstacks() {
        let c = layered(&[], &[]).unwrap();
        assert_eq!(c.port, 4566);
        assert_eq!(c.host, "127.0.0.1");
        assert_eq!(c.base_url, None);
        assert_eq!(
            c.pinned_base_url("http://", 4566).as_deref(),
            Some("http://localhost.localstack.cloud:4566")
        );
        // The request's scheme, and the port bound when none is named.
        assert_eq!(
            c.pinned_base_url("https://", 4567).as_deref(),
            Some("https://localhost.localstack.cloud:4567")
        );
        assert!(c.engine_config().host_style_urls && c.engine_config().region_in_every_url);
        assert_eq!(c.log_level, "info");
    }

    #[test]
    fn localstack_variables_are_read() {
        let c = layered(
            &[
                ("GATEWAY_LISTEN", "0.0.0.0:4510,0.0.0.0:443"),
                ("LOCALSTACK_HOST", "localstack"),
                ("LS_LOG", "trace-internal"),
            ],
            &[],
        )
        .unwrap();
        assert_eq!((c.host.as_str(), c.port), ("0.0.0.0", 4510));
        assert_eq!(
            c.pinned_base_url("http://", 4510).as_deref(),
            Some("http://localstack:4510")
        );
        assert_eq!(c.log_level, "trace");
        let c = layered(&[("GATEWAY_LISTEN", ":4600"), ("DEBUG", "1")], &[]).unwrap();
        assert_eq!((c.host.as_str(), c.port), ("127.0.0.1", 4600));
        assert_eq!(c.log_level, "debug");
        let c = layered(&[("EDGE_PORT", "4567"), ("LOCALSTACK_HOST", "ls:80")], &[]).unwrap();
        assert_eq!(c.port, 4567);
        // A port LOCALSTACK_HOST names stays, whatever the server binds.
        assert_eq!(
            c.pinned_base_url("https://", 4567).as_deref(),
            Some("https://ls:80")
        );
    }

    #[test]
    fn strategies() {
        let c = layered(&[("SQS_ENDPOINT_STRATEGY", "path")], &[]).unwrap();
        assert!(c.pinned_base_url("http://", 1).is_none());
        assert!(!c.host_style_queue_urls && c.region_in_every_url);
        let c = layered(&[("SQS_ENDPOINT_STRATEGY", "off")], &[]).unwrap();
        assert!(c.pinned_base_url("http://", 1).is_none() && !c.region_in_every_url);
        for bad in ["domain", "dynamic"] {
            let e = layered(&[("SQS_ENDPOINT_STRATEGY", bad)], &[]).unwrap_err();
            assert!(e.contains("SQS_ENDPOINT_STRATEGY"), "{e}");
        }
        assert!(layered(&[("GATEWAY_LISTEN", "0.0.0.0:http")], &[]).is_err());
    }

    #[test]
    fn retsus_own_settings_win() {
        let c = layered(
            &[("GATEWAY_LISTEN", "0.0.0.0:4510"), ("LS_LOG", "debug")],
            &["port", "host", "base_url", "log_level"],
        )
        .unwrap();
        assert_eq!((c.host.as_str(), c.port), ("127.0.0.1", 9324));
        assert_eq!(c.pinned_base_url("http://", 9324), None);
        assert_eq!(c.log_level, "info");
    }
}
