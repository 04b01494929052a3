//! Server configuration: command-line flags, each with an environment
//! variable twin so container set-ups need no arguments.
//!
//! [`Config::default`] equals the command-line defaults, so tests and
//! embedders can start from it without reading the environment.

use clap::builder::BoolishValueParser;
use clap::{ArgAction, Parser};

use crate::engine::EngineConfig;

pub mod file;

/// An Amazon SQS wire-compatible emulator: one small binary, both wire
/// protocols (AWS JSON 1.0 and query/XML), real SQS semantics.
#[derive(Debug, Clone, PartialEq, Eq, Parser)]
#[command(name = "retsu", version, about, long_about = None)]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "RETSU_HOST", default_value = "127.0.0.1")]
    pub host: String,

    /// Port to listen on (0 picks a free port).
    #[arg(long, env = "RETSU_PORT", default_value_t = 9324)]
    pub port: u16,

    /// Region for requests whose signature names none.
    #[arg(long, env = "RETSU_REGION", default_value = "us-east-1", value_parser = parse_region)]
    pub region: String,

    /// Account ID used in queue URLs and ARNs.
    #[arg(long, env = "RETSU_ACCOUNT_ID", default_value = "000000000000", value_parser = parse_account)]
    pub account_id: String,

    /// Pin the base of returned queue URLs (e.g. http://sqs.local:9324) instead of using each request's Host header.
    #[arg(long, env = "RETSU_BASE_URL", value_parser = parse_base_url)]
    pub base_url: Option<String>,

    /// Enforce AWS's 60-second PurgeQueue and queue re-creation rules.
    #[arg(long, env = "RETSU_STRICT_TIMING", action = ArgAction::SetTrue,
          value_parser = BoolishValueParser::new())]
    pub strict_timing: bool,

    /// Log level or tracing filter (e.g. info, debug, retsu=trace).
    #[arg(long, env = "RETSU_LOG_LEVEL", default_value = "info")]
    pub log_level: String,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            host: "127.0.0.1".into(),
            port: 9324,
            region: "us-east-1".into(),
            account_id: "000000000000".into(),
            base_url: None,
            strict_timing: false,
            log_level: "info".into(),
        }
    }
}

impl Config {
    /// Defaults on a random free loopback port: what tests want.
    pub fn ephemeral() -> Config {
        Config {
            port: 0,
            ..Config::default()
        }
    }

    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            strict_timing: self.strict_timing,
        }
    }
}

pub(crate) fn parse_region(s: &str) -> Result<String, String> {
    let ok = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok {
        Ok(s.to_string())
    } else {
        Err("a region is lower-case letters, digits and '-', e.g. us-east-1".into())
    }
}

pub(crate) fn parse_account(s: &str) -> Result<String, String> {
    if s.len() == 12 && s.chars().all(|c| c.is_ascii_digit()) {
        Ok(s.to_string())
    } else {
        Err("an account ID is 12 digits, e.g. 000000000000".into())
    }
}

/// `scheme://authority`, stored without a trailing slash so that
/// `base + "/<account>/<queue>"` is a well-formed URL.
pub(crate) fn parse_base_url(s: &str) -> Result<String, String> {
    let trimmed = s.trim().trim_end_matches('/');
    let rest = trimmed
        .strip_prefix("http://")
        .or_else(|| trimmed.strip_prefix("https://"))
        .ok_or("the base URL must start with http:// or https://")?;
    if rest.is_empty() || rest.contains(char::is_whitespace) {
        return Err("the base URL needs a host, e.g. http://localhost:9324".into());
    }
    Ok(trimmed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn defaults_match_the_cli() {
        // try_parse_from still reads RETSU_* variables; none are set in tests.
        let parsed = Config::try_parse_from(["retsu"]).unwrap();
        assert_eq!(parsed, Config::default());
    }

    #[test]
    fn flags() {
        let c = Config::try_parse_from([
            "retsu",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--region",
            "eu-west-1",
            "--account-id",
            "123456789012",
            "--base-url",
            "http://sqs.local:9324/",
            "--strict-timing",
            "--log-level",
            "debug",
        ])
        .unwrap();
        assert_eq!(c.port, 0);
        assert_eq!(c.base_url.as_deref(), Some("http://sqs.local:9324"));
        assert!(c.engine_config().strict_timing);
        assert_eq!(c.account_id, "123456789012");
    }

    #[test]
    fn rejects_bad_values() {
        for args in [
            ["retsu", "--account-id", "42"],
            ["retsu", "--region", "US East"],
            ["retsu", "--base-url", "sqs.local"],
            ["retsu", "--port", "70000"],
        ] {
            assert!(Config::try_parse_from(args).is_err(), "{args:?}");
        }
    }

    #[test]
    fn help_lists_every_option() {
        Config::command().debug_assert();
        let help = Config::command().render_help().to_string();
        for flag in [
            "--host",
            "--port",
            "--region",
            "--account-id",
            "--base-url",
            "--strict-timing",
            "--log-level",
            "RETSU_PORT",
        ] {
            assert!(help.contains(flag), "{flag} missing from:\n{help}");
        }
    }
}
