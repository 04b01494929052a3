//! The configuration file: `retsu --config retsu.toml` (or `RETSU_CONFIG`).
//!
//! Why a file: queues that exist when the stack starts, declared once, with
//! dead-letter wiring by queue name instead of hand-written ARNs.
//!
//! Top-level keys are the flags' names with `_` for `-`; precedence is
//! flag > environment variable > file > default. clap tells which values
//! came from its defaults, and only those take the file's value.
//!
//! A bad file must stop start-up with the file, line and problem, and never
//! leave a half-configured server, so the work is split:
//! - [`FileConfig::parse`]: TOML into serde types (`deny_unknown_fields`,
//!   spans kept so later errors can name a line too);
//! - [`QueuePlan::build`]: names resolved to keys and ARNs, dead-letter
//!   queues ordered before their sources, cycles and dangling names refused;
//! - [`QueuePlan::apply`]: the queues created through the engine's own
//!   CreateQueue / SetQueueAttributes / TagQueue, so SQS's validation and
//!   messages apply; [`QueuePlan::check`] does it on a scratch engine first.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use clap::parser::ValueSource;
use clap::ArgMatches;
use serde::Deserialize;
use toml::Spanned;

use super::{ClockMode, Config};
use crate::api::{
    CreateQueueRequest, Request, RequestContext, SetQueueAttributesRequest, TagQueueRequest,
};
use crate::clock::SystemClock;
use crate::engine::{Engine, EngineConfig, QueueKey};
use crate::error::{ErrorCode, SqsError};

/// The file as written. Every key is optional; unknown keys are errors.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub host: Option<Spanned<String>>,
    pub port: Option<Spanned<u16>>,
    pub region: Option<Spanned<String>>,
    pub account_id: Option<Spanned<String>>,
    pub base_url: Option<Spanned<String>>,
    pub strict_timing: Option<bool>,
    pub clock: Option<ClockMode>,
    pub clock_start: Option<Spanned<String>>,
    pub no_admin: Option<bool>,
    pub admin_token: Option<String>,
    pub data_dir: Option<Spanned<String>>,
    pub store: Option<Spanned<String>>,
    pub durability: Option<Spanned<crate::journal::DurabilityMode>>,
    pub log_level: Option<Spanned<String>>,
    pub log_format: Option<Spanned<LogFormat>>,
    pub history_events: Option<usize>,
    /// `--localstack`: LocalStack's defaults (`crate::localstack::settings`).
    pub localstack: Option<bool>,
    pub no_localstack: Option<bool>,
    pub init_dir: Option<Spanned<String>>,
    pub history_finished: Option<usize>,
    pub limits: Option<FileLimits>,
    /// `[auth]`: SigV4 verification and its keys (see `crate::auth`).
    pub auth: Option<AuthDecl>,
    /// `[tls]`: `enabled`, `cert`, `key` (see `crate::tls`).
    pub tls: Option<crate::tls::TlsDecl>,
    #[serde(default)]
    pub queues: Vec<QueueDecl>,
    /// `[[topics]]`: SNS topics and their subscriptions (`config/topics.rs`).
    #[serde(default)]
    pub topics: Vec<super::topics::TopicDecl>,
    /// `[[functions]]`: Lambda functions event source mappings invoke
    /// (`crate::lambda::function`).
    #[serde(default)]
    pub functions: Vec<Spanned<FunctionDecl>>,
    /// `[[event_source_mappings]]`: queues polled into those functions.
    #[serde(default)]
    pub event_source_mappings: Vec<Spanned<MappingDecl>>,
}

/// One `[[event_source_mappings]]` entry: CreateEventSourceMapping's
/// settings, the queue by name (in the server's region and account) or ARN.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MappingDecl {
    pub function: String,
    pub queue: String,
    pub batch_size: Option<i64>,
    pub maximum_batching_window: Option<i64>,
    #[serde(default)]
    pub report_batch_item_failures: bool,
    pub maximum_concurrency: Option<i64>,
    pub enabled: Option<bool>,
    /// FilterCriteria patterns, as JSON text.
    #[serde(default)]
    pub filters: Vec<String>,
}

/// One `[[functions]]` entry: a name and either the URL of an Invoke API
/// endpoint or a command reading the event on stdin.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionDecl {
    pub name: String,
    pub url: Option<String>,
    pub command: Option<Vec<String>>,
    #[serde(default)]
    pub environment: BTreeMap<String, String>,
    /// Seconds; Lambda's default when absent.
    pub timeout: Option<u64>,
    /// Invocations the target takes at once (default 1).
    pub concurrency: Option<u32>,
}

/// The `[limits]` table: what one client may cost (the `--header-timeout`
/// family of flags, same names and units).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileLimits {
    pub header_timeout: Option<Spanned<u64>>,
    pub body_timeout: Option<Spanned<u64>>,
    pub max_connections: Option<Spanned<u64>>,
    pub max_headers: Option<Spanned<u64>>,
    pub max_header_bytes: Option<Spanned<u64>>,
    pub shutdown_timeout: Option<Spanned<u64>>,
}

/// `[auth]`: `enabled = true` and `keys = [{ access_key, secret_key, account_id }]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthDecl {
    pub enabled: Option<bool>,
    #[serde(default)]
    pub keys: Vec<Spanned<AuthKeyDecl>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthKeyDecl {
    pub access_key: String,
    pub secret_key: String,
    pub account_id: String,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, for log shippers.
    Json,
}

/// One `[[queues]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueDecl {
    pub name: Spanned<String>,
    /// Defaults to the server's region.
    pub region: Option<Spanned<String>>,
    /// Defaults to the server's account.
    pub account_id: Option<Spanned<String>>,
    /// SQS attribute names (`VisibilityTimeout = 30`); strings, integers
    /// and booleans, as SQS's string values.
    #[serde(default)]
    pub attributes: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    pub tags: BTreeMap<String, Spanned<String>>,
    /// Name of a queue declared in this file (same region and account).
    pub dead_letter_queue: Option<Spanned<String>>,
    pub max_receive_count: Option<Spanned<i64>>,
    pub redrive_allow_policy: Option<Spanned<RedriveAllowDecl>>,
}

/// `redrive_allow_policy = { permission = "byQueue", source_queues = ["jobs"] }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedriveAllowDecl {
    /// `allowAll`, `denyAll` or `byQueue`.
    pub permission: String,
    /// Names of queues declared in this file, or full ARNs.
    #[serde(default)]
    pub source_queues: Vec<Spanned<String>>,
}

/// The text of a configuration file, kept to turn byte spans into lines.
#[derive(Debug, Clone)]
pub struct Source {
    pub path: String,
    pub text: String,
}

/// A problem in a configuration file, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    /// 1-based line and column, when the problem has a place.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
    /// The offending line, for the reader.
    pub excerpt: Option<String>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(line), Some(column)) => write!(
                f,
                "{}, line {line}, column {column}: {}",
                self.file, self.message
            )?,
            _ => write!(f, "{}: {}", self.file, self.message)?,
        }
        if let (Some(line), Some(excerpt)) = (self.line, &self.excerpt) {
            write!(f, "\n  {line:>4} | {excerpt}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

impl Source {
    /// Reads a file; an unreadable one is an error naming it.
    pub fn read(path: &Path) -> Result<Source, ConfigError> {
        let shown = path.display().to_string();
        match std::fs::read_to_string(path) {
            Ok(text) => Ok(Source { path: shown, text }),
            Err(e) => Err(ConfigError {
                file: shown,
                line: None,
                column: None,
                message: format!("cannot read the configuration file: {e}"),
                excerpt: None,
            }),
        }
    }

    /// An error at a byte span (its start), or about the whole file.
    pub fn error(&self, span: Option<Range<usize>>, message: impl Into<String>) -> ConfigError {
        let mut error = ConfigError {
            file: self.path.clone(),
            line: None,
            column: None,
            message: message.into(),
            excerpt: None,
        };
        if let Some(span) = span {
            let at = span.start.min(self.text.len());
            let before = &self.text[..at];
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            error.line = Some(before.matches('\n').count() + 1);
            error.column = Some(before[line_start..].chars().count() + 1);
            let rest = &self.text[line_start..];
            error.excerpt = Some(rest.lines().next().unwrap_or("").to_string());
        }
        error
    }
}

impl FileConfig {
    /// Parses the file's text; syntax errors, unknown keys and wrong types
    /// come back with their line.
    pub fn parse(source: &Source) -> Result<FileConfig, ConfigError> {
        toml::from_str(&source.text).map_err(|e| source.error(e.span(), e.message().trim_end()))
    }

    /// Gives every setting that clap took from its default the file's
    /// value (flags and environment variables win over the file).
    pub fn apply_settings(
        &self,
        source: &Source,
        config: &mut Config,
        matches: &ArgMatches,
    ) -> Result<(), ConfigError> {
        let unset = |id: &str| {
            !matches!(
                matches.value_source(id),
                Some(ValueSource::CommandLine | ValueSource::EnvVariable)
            )
        };
        let check = |v: &Spanned<String>, parse: fn(&str) -> Result<String, String>| {
            parse(v.get_ref()).map_err(|e| source.error(Some(v.span()), e))
        };
        if let Some(v) = self.host.as_ref().filter(|_| unset("host")) {
            config.host = v.get_ref().clone();
        }
        if let Some(v) = self.port.as_ref().filter(|_| unset("port")) {
            config.port = *v.get_ref();
        }
        if let Some(v) = self.region.as_ref().filter(|_| unset("region")) {
            config.region = check(v, super::parse_region)?;
        }
        if let Some(v) = self.account_id.as_ref().filter(|_| unset("account_id")) {
            config.account_id = check(v, super::parse_account)?;
        }
        if let Some(v) = self.base_url.as_ref().filter(|_| unset("base_url")) {
            config.base_url = Some(check(v, super::parse_base_url)?);
        }
        if let Some(v) = self.strict_timing.filter(|_| unset("strict_timing")) {
            config.strict_timing = v;
        }
        if let Some(v) = self.clock.filter(|_| unset("clock")) {
            config.clock = v;
        }
        if let Some(v) = self.clock_start.as_ref().filter(|_| unset("clock_start")) {
            let at = super::parse_time(v.get_ref()).map_err(|e| source.error(Some(v.span()), e))?;
            config.clock_start = Some(at);
        }
        if let Some(v) = self.no_admin.filter(|_| unset("no_admin")) {
            config.no_admin = v;
        }
        if let Some(v) = self.admin_token.as_ref().filter(|_| unset("admin_token")) {
            config.admin_token = Some(v.clone()).filter(|t| !t.is_empty());
        }
        if let Some(auth) = &self.auth {
            if let Some(v) = auth.enabled.filter(|_| unset("auth")) {
                config.auth = v;
            }
            // Keys given by flag or variable replace the file's.
            if unset("auth_keys") {
                config.auth_keys = auth
                    .keys
                    .iter()
                    .map(|k| {
                        let d = k.get_ref();
                        crate::auth::AuthKey::new(&d.access_key, &d.secret_key, &d.account_id)
                            .map_err(|e| {
                                source.error(Some(k.span()), format!("invalid auth key: {e}"))
                            })
                    })
                    .collect::<Result<_, _>>()?;
            }
            if config.auth && config.auth_keys.is_empty() {
                return Err(source.error(
                    None,
                    "[auth] is enabled but no key is configured (keys = [{ access_key, secret_key, account_id }])",
                ));
            }
        }
        if let Some(tls) = &self.tls {
            tls.apply(&mut config.tls, unset);
        }
        // A flag or variable naming where state is kept wins over both
        // file keys.
        let where_set = !unset("data_dir") || !unset("store");
        if let Some(v) = self.data_dir.as_ref().filter(|_| !where_set) {
            config.data_dir = Some(v.get_ref().into());
        }
        if let Some(v) = self.store.as_ref().filter(|_| !where_set) {
            config.store = Some(
                crate::journal::Store::parse(v.get_ref())
                    .map_err(|e| source.error(Some(v.span()), e))?,
            );
        }
        if config.store.is_some() && config.data_dir.is_some() {
            return Err(source.error(
                None,
                "store and data_dir both name where state is kept; give one",
            ));
        }
        if let Some(v) = self.durability.as_ref().filter(|_| unset("durability")) {
            config.durability = *v.get_ref();
        }
        if let Some(v) = self.log_level.as_ref().filter(|_| unset("log_level")) {
            v.get_ref()
                .parse::<tracing_subscriber::filter::Targets>()
                .map_err(|e| source.error(Some(v.span()), format!("invalid log_level: {e}")))?;
            config.log_level = v.get_ref().clone();
        }
        if let Some(v) = self.localstack.filter(|_| unset("localstack")) {
            config.localstack = v;
        }
        if let Some(v) = self.no_localstack.filter(|_| unset("no_localstack")) {
            config.no_localstack = v;
        }
        if let Some(v) = self.init_dir.as_ref().filter(|_| unset("init_dir")) {
            config.init_dir = Some(v.get_ref().into());
        }
        if let Some(v) = self.history_events.filter(|_| unset("history_events")) {
            config.history_events = v;
        }
        if let Some(v) = self.history_finished.filter(|_| unset("history_finished")) {
            config.history_finished = v;
        }
        // Functions named by flag or variable win over the file's.
        let flagged: Vec<String> = config.functions.iter().map(|f| f.name.clone()).collect();
        for decl in &self.functions {
            let d = decl.get_ref();
            if flagged.contains(&d.name) {
                continue;
            }
            let timeout = d
                .timeout
                .unwrap_or(crate::lambda::function::DEFAULT_TIMEOUT_S);
            let env = d.environment.clone();
            let target = match (&d.url, &d.command) {
                (Some(url), None) => {
                    crate::lambda::FunctionTarget::with_url(&d.name, url, env, timeout)
                }
                (None, Some(command)) => crate::lambda::FunctionTarget::with_command(
                    &d.name,
                    command.clone(),
                    env,
                    timeout,
                ),
                _ => Err(format!("function {} needs either url or command", d.name)),
            };
            let target = target
                .and_then(|t| t.with_concurrency(d.concurrency.unwrap_or(1)))
                .map_err(|e| source.error(Some(decl.span()), e))?;
            if config.functions.iter().any(|f| f.name == target.name) {
                return Err(source.error(
                    Some(decl.span()),
                    format!("function {} is declared twice", target.name),
                ));
            }
            config.functions.push(target);
        }
        for decl in &self.event_source_mappings {
            let d = decl.get_ref();
            let queue_arn = if d.queue.starts_with("arn:") {
                d.queue.clone()
            } else {
                format!(
                    "arn:aws:sqs:{}:{}:{}",
                    config.region, config.account_id, d.queue
                )
            };
            let mut settings = serde_json::json!({
                "FunctionName": d.function,
                "EventSourceArn": queue_arn,
            });
            let optional = [
                ("BatchSize", d.batch_size.map(serde_json::Value::from)),
                (
                    "MaximumBatchingWindowInSeconds",
                    d.maximum_batching_window.map(serde_json::Value::from),
                ),
                ("Enabled", d.enabled.map(serde_json::Value::from)),
                (
                    "ScalingConfig",
                    d.maximum_concurrency
                        .map(|n| serde_json::json!({ "MaximumConcurrency": n })),
                ),
            ];
            for (key, value) in optional {
                if let Some(value) = value {
                    settings[key] = value;
                }
            }
            settings["FunctionResponseTypes"] = if d.report_batch_item_failures {
                serde_json::json!(["ReportBatchItemFailures"])
            } else {
                serde_json::json!([])
            };
            let filters: Vec<serde_json::Value> = d
                .filters
                .iter()
                .map(|p| serde_json::json!({ "Pattern": p }))
                .collect();
            settings["FilterCriteria"] = serde_json::json!({ "Filters": filters });
            config
                .event_source_mappings
                .push(crate::lambda::DeclaredMapping {
                    line: source.error(Some(decl.span()), "").line,
                    file: source.path.clone(),
                    settings: settings.to_string(),
                });
        }
        if let Some(limits) = &self.limits {
            let l = &mut config.limits;
            // (key, its flag's id, where it goes, the smallest sane value)
            let fields: [(&Option<Spanned<u64>>, &str, &mut u64, u64); 6] = [
                (
                    &limits.header_timeout,
                    "header_timeout",
                    &mut l.header_timeout,
                    1,
                ),
                (&limits.body_timeout, "body_timeout", &mut l.body_timeout, 1),
                (
                    &limits.max_connections,
                    "max_connections",
                    &mut l.max_connections,
                    1,
                ),
                (&limits.max_headers, "max_headers", &mut l.max_headers, 1),
                (
                    &limits.max_header_bytes,
                    "max_header_bytes",
                    &mut l.max_header_bytes,
                    1024,
                ),
                (
                    &limits.shutdown_timeout,
                    "shutdown_timeout",
                    &mut l.shutdown_timeout,
                    0,
                ),
            ];
            for (value, id, target, min) in fields {
                if let Some(v) = value.as_ref().filter(|_| unset(id)) {
                    if *v.get_ref() < min {
                        return Err(source.error(
                            Some(v.span()),
                            format!("limits.{id} must be at least {min}"),
                        ));
                    }
                    *target = *v.get_ref();
                }
            }
        }
        Ok(())
    }

    /// Whether the file gives the setting with this flag id (for the
    /// defaults `--localstack` layers under the file's values).
    pub fn sets(&self, id: &str) -> bool {
        match id {
            "host" => self.host.is_some(),
            "port" => self.port.is_some(),
            "base_url" => self.base_url.is_some(),
            "log_level" => self.log_level.is_some(),
            _ => false,
        }
    }

    /// The file's log format unless a flag or variable chose one.
    pub fn log_format(&self, current: LogFormat, matches: &ArgMatches, id: &str) -> LogFormat {
        match (matches.value_source(id), &self.log_format) {
            (Some(ValueSource::CommandLine | ValueSource::EnvVariable), _) | (_, None) => current,
            (_, Some(v)) => *v.get_ref(),
        }
    }
}

/// The queues of a file, resolved and in creation order.
#[derive(Debug, Clone)]
pub struct QueuePlan {
    source: Option<Arc<Source>>,
    pub queues: Vec<PlannedQueue>,
    /// The SNS topics, made after the queues they deliver to.
    pub topics: Vec<super::topics::PlannedTopic>,
}

/// One queue to create, with where its parts were written.
#[derive(Debug, Clone)]
pub struct PlannedQueue {
    pub key: QueueKey,
    pub attributes: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
    name_span: Range<usize>,
    /// Attribute name to the span of its value (RedrivePolicy and
    /// RedriveAllowPolicy point at the keys they were built from).
    spans: BTreeMap<String, Range<usize>>,
    max_receive_count_span: Option<Range<usize>>,
}

impl QueuePlan {
    /// No queues (no file).
    pub fn empty() -> QueuePlan {
        QueuePlan {
            source: None,
            queues: Vec::new(),
            topics: Vec::new(),
        }
    }

    /// Resolves the declared queues against the effective defaults
    /// (`config.region`, `config.account_id`).
    pub fn build(
        file: &FileConfig,
        source: &Source,
        config: &Config,
    ) -> Result<QueuePlan, ConfigError> {
        let err = |span: Range<usize>, message: String| source.error(Some(span), message);

        // Keys first, so names can be resolved in any order of declaration.
        let mut keys = Vec::with_capacity(file.queues.len());
        let mut index: HashMap<QueueKey, usize> = HashMap::new();
        for (i, q) in file.queues.iter().enumerate() {
            let region = match &q.region {
                Some(r) => super::parse_region(r.get_ref()).map_err(|e| err(r.span(), e))?,
                None => config.region.clone(),
            };
            let account = match &q.account_id {
                Some(a) => super::parse_account(a.get_ref()).map_err(|e| err(a.span(), e))?,
                None => config.account_id.clone(),
            };
            let key = QueueKey {
                region,
                account,
                name: q.name.get_ref().clone(),
            };
            if let Some(&first) = index.get(&key) {
                let first_line = source
                    .error(Some(file.queues[first].name.span()), "")
                    .line
                    .unwrap_or(0);
                return Err(err(
                    q.name.span(),
                    format!(
                        "queue \"{}\" is declared twice (first on line {first_line})",
                        key.name
                    ),
                ));
            }
            index.insert(key.clone(), i);
            keys.push(key);
        }
        let same_place = |of: &QueueKey, name: &str| QueueKey {
            region: of.region.clone(),
            account: of.account.clone(),
            name: name.to_string(),
        };

        // Dead-letter edges, by index.
        let mut dlq_of: Vec<Option<usize>> = vec![None; keys.len()];
        for (i, q) in file.queues.iter().enumerate() {
            let name = q.name.get_ref();
            match (&q.dead_letter_queue, &q.max_receive_count) {
                (Some(dlq), count) => {
                    let target = same_place(&keys[i], dlq.get_ref());
                    let Some(&j) = index.get(&target) else {
                        return Err(err(
                            dlq.span(),
                            format!(
                                "queue \"{name}\": dead_letter_queue \"{}\" is not declared in this file (in region {} and account {}, as SQS requires)",
                                dlq.get_ref(), target.region, target.account
                            ),
                        ));
                    };
                    if count.is_none() {
                        return Err(err(
                            dlq.span(),
                            format!("queue \"{name}\": dead_letter_queue needs max_receive_count (1 to 1000)"),
                        ));
                    }
                    if q.attributes.contains_key("RedrivePolicy") {
                        return Err(err(
                            q.attributes["RedrivePolicy"].span(),
                            format!("queue \"{name}\": give either dead_letter_queue or the RedrivePolicy attribute, not both"),
                        ));
                    }
                    dlq_of[i] = Some(j);
                }
                (None, Some(count)) => {
                    return Err(err(
                        count.span(),
                        format!("queue \"{name}\": max_receive_count needs dead_letter_queue"),
                    ));
                }
                (None, None) => {}
            }
            let raw_allow = q.attributes.get("RedriveAllowPolicy");
            if let (Some(_), Some(raw)) = (&q.redrive_allow_policy, raw_allow) {
                return Err(err(
                    raw.span(),
                    format!("queue \"{name}\": give either redrive_allow_policy or the RedriveAllowPolicy attribute, not both"),
                ));
            }
        }

        let order = creation_order(&dlq_of).map_err(|cycle| {
            let names: Vec<&str> = cycle.iter().map(|&i| keys[i].name.as_str()).collect();
            let first = &file.queues[cycle[0]];
            let span = first
                .dead_letter_queue
                .as_ref()
                .map_or(first.name.span(), |d| d.span());
            err(
                span,
                format!("dead-letter queues form a cycle: {}", names.join(" -> ")),
            )
        })?;

        let mut queues = Vec::with_capacity(order.len());
        for i in order {
            let q = &file.queues[i];
            let key = keys[i].clone();
            let mut attributes = BTreeMap::new();
            let mut spans = BTreeMap::new();
            for (name, value) in &q.attributes {
                let text = match value.get_ref() {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Integer(n) => n.to_string(),
                    toml::Value::Boolean(b) => b.to_string(),
                    other => {
                        return Err(err(
                            value.span(),
                            format!(
                                "queue \"{}\": attribute {name} is a {}; use a string, an integer or a boolean",
                                key.name,
                                other.type_str()
                            ),
                        ))
                    }
                };
                attributes.insert(name.clone(), text);
                spans.insert(name.clone(), value.span());
            }
            // SQS wants FifoQueue=true at creation; the name already says it.
            if key.name.ends_with(".fifo") && !attributes.contains_key("FifoQueue") {
                attributes.insert("FifoQueue".into(), "true".into());
                spans.insert("FifoQueue".into(), q.name.span());
            }
            if let (Some(j), Some(dlq), Some(count)) =
                (dlq_of[i], &q.dead_letter_queue, &q.max_receive_count)
            {
                let policy = serde_json::json!({
                    "deadLetterTargetArn": keys[j].arn(),
                    "maxReceiveCount": count.get_ref(),
                });
                attributes.insert("RedrivePolicy".into(), policy.to_string());
                spans.insert("RedrivePolicy".into(), dlq.span());
            }
            if let Some(allow) = &q.redrive_allow_policy {
                let mut arns = Vec::new();
                for source_queue in &allow.get_ref().source_queues {
                    let name = source_queue.get_ref();
                    if name.starts_with("arn:") {
                        arns.push(name.clone());
                        continue;
                    }
                    let target = same_place(&key, name);
                    if !index.contains_key(&target) {
                        return Err(err(
                            source_queue.span(),
                            format!(
                                "queue \"{}\": redrive_allow_policy names \"{name}\", which is not declared in this file (in region {} and account {}); give a declared name or a full ARN",
                                key.name, target.region, target.account
                            ),
                        ));
                    }
                    arns.push(target.arn());
                }
                let mut policy =
                    serde_json::json!({ "redrivePermission": allow.get_ref().permission });
                if !allow.get_ref().source_queues.is_empty() {
                    policy["sourceQueueArns"] = serde_json::json!(arns);
                }
                attributes.insert("RedriveAllowPolicy".into(), policy.to_string());
                spans.insert("RedriveAllowPolicy".into(), allow.span());
            }
            let tags = q
                .tags
                .iter()
                .map(|(k, v)| (k.clone(), v.get_ref().clone()))
                .collect();
            queues.push(PlannedQueue {
                key,
                attributes,
                tags,
                name_span: q.name.span(),
                spans,
                max_receive_count_span: q.max_receive_count.as_ref().map(|c| c.span()),
            });
        }
        let topics = super::topics::plan(&file.topics, source, config, &queues)?;
        Ok(QueuePlan {
            source: Some(Arc::new(source.clone())),
            queues,
            topics,
        })
    }

    /// Applies the plan to a throwaway engine: everything SQS would refuse
    /// is found before the real server is touched.
    pub async fn check(&self, config: EngineConfig) -> Result<(), ConfigError> {
        let scratch = Engine::new(Arc::new(SystemClock), config);
        self.apply(&scratch, "http://localhost").await?;
        let sns = crate::sns::Sns::new(scratch, Arc::new(super::topics::Unsigned));
        self.apply_topics(&sns, "http://localhost").await
    }

    /// Creates (or updates) the file's SNS topics and subscriptions.
    pub async fn apply_topics(
        &self,
        sns: &crate::sns::Sns,
        base_url: &str,
    ) -> Result<(), ConfigError> {
        super::topics::apply(&self.topics, sns, base_url, self.source.as_ref()).await
    }

    /// Creates (or updates) every queue, dead-letter queues first, through
    /// the engine's CreateQueue, SetQueueAttributes and TagQueue. A queue
    /// that exists already takes the file's attributes and tags.
    pub async fn apply(&self, engine: &Engine, base_url: &str) -> Result<(), ConfigError> {
        for q in &self.queues {
            tracing::debug!(queue = %q.key.arn(), "creating the configured queue");
            let ctx = RequestContext::new(&q.key.region, &q.key.account, base_url);
            let create = Request::CreateQueue(CreateQueueRequest {
                queue_name: Some(q.key.name.clone()),
                attributes: q.attributes.clone(),
                tags: q.tags.clone(),
            });
            match engine.handle(&ctx, create).await {
                Ok(_) => {}
                Err(e) if e.code == ErrorCode::QueueNameExists => {
                    let mut attributes = q.attributes.clone();
                    attributes.remove("FifoQueue");
                    let set = Request::SetQueueAttributes(SetQueueAttributesRequest {
                        queue_url: Some(q.key.name.clone()),
                        attributes: Some(attributes),
                    });
                    engine
                        .handle(&ctx, set)
                        .await
                        .map_err(|e| self.locate(q, e))?;
                }
                Err(e) => return Err(self.locate(q, e)),
            }
            if !q.tags.is_empty() {
                let tag = Request::TagQueue(TagQueueRequest {
                    queue_url: Some(q.key.name.clone()),
                    tags: Some(q.tags.clone()),
                });
                engine
                    .handle(&ctx, tag)
                    .await
                    .map_err(|e| self.locate(q, e))?;
            }
        }
        Ok(())
    }

    /// Places an engine error at the attribute it is about (SQS's messages
    /// name it), else at the queue's name.
    fn locate(&self, q: &PlannedQueue, e: SqsError) -> ConfigError {
        let message = format!("queue \"{}\": {}", q.key.name, e);
        let mut span = q.name_span.clone();
        // Longest names first, so a name that contains another wins.
        let mut names: Vec<&String> = q.spans.keys().collect();
        names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        if let Some(name) = names.into_iter().find(|n| e.message.contains(n.as_str())) {
            span = q.spans[name].clone();
            if name == "RedrivePolicy" && e.message.contains("for maxReceiveCount") {
                if let Some(s) = &q.max_receive_count_span {
                    span = s.clone();
                }
            }
        }
        match &self.source {
            Some(source) => source.error(Some(span), message),
            None => ConfigError {
                file: String::new(),
                line: None,
                column: None,
                message,
                excerpt: None,
            },
        }
    }
}

/// Indices in an order where each dead-letter queue comes before its
/// sources (depth-first, post-order), or the indices of a cycle.
fn creation_order(dlq_of: &[Option<usize>]) -> Result<Vec<usize>, Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Visiting,
        Done,
    }
    let mut mark = vec![Mark::New; dlq_of.len()];
    let mut order = Vec::with_capacity(dlq_of.len());
    for start in 0..dlq_of.len() {
        // Each queue has at most one dead-letter queue: the walk is a chain.
        let mut chain = Vec::new();
        let mut at = Some(start);
        while let Some(i) = at {
            match mark[i] {
                Mark::Done => break,
                Mark::Visiting => {
                    let from = chain.iter().position(|&c| c == i).unwrap_or(0);
                    let mut cycle = chain[from..].to_vec();
                    cycle.push(i);
                    return Err(cycle);
                }
                Mark::New => {
                    mark[i] = Mark::Visiting;
                    chain.push(i);
                    at = dlq_of[i];
                }
            }
        }
        for &i in chain.iter().rev() {
            mark[i] = Mark::Done;
            order.push(i);
        }
    }
    Ok(order)
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
