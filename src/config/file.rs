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
    pub durability: Option<Spanned<crate::journal::DurabilityMode>>,
    pub log_level: Option<Spanned<String>>,
    pub log_format: Option<Spanned<LogFormat>>,
    pub history_events: Option<usize>,
    pub history_finished: Option<usize>,
    pub limits: Option<FileLimits>,
    /// `[auth]`: SigV4 verification and its keys (see `crate::auth`).
    pub auth: Option<AuthDecl>,
    #[serde(default)]
    pub queues: Vec<QueueDecl>,
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
        if let Some(v) = self.data_dir.as_ref().filter(|_| unset("data_dir")) {
            config.data_dir = Some(v.get_ref().into());
        }
        if let Some(v) = self.durability.as_ref().filter(|_| unset("durability")) {
            config.durability = *v.get_ref();
        }
        if let Some(v) = self.log_level.as_ref().filter(|_| unset("log_level")) {
            tracing_subscriber::EnvFilter::try_new(v.get_ref())
                .map_err(|e| source.error(Some(v.span()), format!("invalid log_level: {e}")))?;
            config.log_level = v.get_ref().clone();
        }
        if let Some(v) = self.history_events.filter(|_| unset("history_events")) {
            config.history_events = v;
        }
        if let Some(v) = self.history_finished.filter(|_| unset("history_finished")) {
            config.history_finished = v;
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
        Ok(QueuePlan {
            source: Some(Arc::new(source.clone())),
            queues,
        })
    }

    /// Applies the plan to a throwaway engine: everything SQS would refuse
    /// is found before the real server is touched.
    pub async fn check(&self, config: EngineConfig) -> Result<(), ConfigError> {
        let scratch = Engine::new(Arc::new(SystemClock), config);
        self.apply(&scratch, "http://localhost").await
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
mod tests {
    use super::*;
    use crate::cli::Cli;

    fn source(text: &str) -> Source {
        Source {
            path: "test.toml".into(),
            text: text.into(),
        }
    }

    /// Resolves `text` as `retsu <args> --config test.toml` would.
    fn resolve(text: &str, args: &[&str]) -> Result<(Config, LogFormat, QueuePlan), ConfigError> {
        let argv = std::iter::once("retsu").chain(args.iter().copied());
        let (cli, matches) = Cli::try_parse_with_matches(argv).unwrap();
        let source = source(text);
        let file = FileConfig::parse(&source)?;
        let mut config = cli.server.clone();
        file.apply_settings(&source, &mut config, &matches)?;
        let format = file.log_format(cli.log_format, &matches, "log_format");
        let plan = QueuePlan::build(&file, &source, &config)?;
        Ok((config, format, plan))
    }

    /// The error a file gives, parsing and building (and, with `engine`,
    /// applying on a scratch engine).
    async fn error_of(text: &str) -> ConfigError {
        match resolve(text, &[]) {
            Err(e) => e,
            Ok((config, _, plan)) => plan
                .check(config.engine_config())
                .await
                .expect_err("the file was accepted"),
        }
    }

    async fn assert_error(text: &str, line: usize, needle: &str) {
        let e = error_of(text).await;
        assert_eq!(e.file, "test.toml");
        assert_eq!(e.line, Some(line), "{e}");
        assert!(e.message.contains(needle), "{needle:?} not in: {e}");
        let shown = e.to_string();
        assert!(
            shown.starts_with(&format!("test.toml, line {line}, column ")),
            "{shown}"
        );
    }

    const EVERY_KEY: &str = r#"
host = "0.0.0.0"
port = 9500
region = "eu-west-1"
account_id = "123456789012"
base_url = "http://sqs.local:9500/"
strict_timing = true
clock = "frozen"
clock_start = "2026-01-01T00:00:00Z"
no_admin = true
admin_token = "file-token"
log_level = "debug"
log_format = "json"
history_events = 50
history_finished = 5

[limits]
header_timeout = 7
body_timeout = 8
max_connections = 9
max_headers = 10
max_header_bytes = 2048
shutdown_timeout = 0
"#;

    #[test]
    fn every_setting_is_read() {
        let (c, format, plan) = resolve(EVERY_KEY, &[]).unwrap();
        assert_eq!(c.host, "0.0.0.0");
        assert_eq!(c.port, 9500);
        assert_eq!(c.region, "eu-west-1");
        assert_eq!(c.account_id, "123456789012");
        assert_eq!(c.base_url.as_deref(), Some("http://sqs.local:9500"));
        assert!(c.strict_timing);
        assert_eq!(c.clock, ClockMode::Frozen);
        assert_eq!(c.clock_start, Some(1_767_225_600_000));
        assert!(c.no_admin);
        assert_eq!(c.admin_token.as_deref(), Some("file-token"));
        assert_eq!(c.log_level, "debug");
        assert_eq!(format, LogFormat::Json);
        assert_eq!((c.history_events, c.history_finished), (50, 5));
        let l = &c.limits;
        assert_eq!(
            (
                l.header_timeout,
                l.body_timeout,
                l.max_connections,
                l.max_headers,
                l.max_header_bytes,
                l.shutdown_timeout
            ),
            (7, 8, 9, 10, 2048, 0)
        );
        assert!(plan.queues.is_empty());
        // A flag beats the file's limit; a nonsense limit names its line.
        let (c, _, _) = resolve(EVERY_KEY, &["--header-timeout", "3"]).unwrap();
        assert_eq!(c.limits.header_timeout, 3);
        let err = resolve("[limits]\nmax_header_bytes = 10\n", &[]).unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
        assert!(resolve("[limits]\nheader_timeouts = 1\n", &[]).is_err());
        let (c, _, _) =
            resolve(EVERY_KEY, &["--clock", "running", "--admin-token", "flag"]).unwrap();
        assert_eq!(c.clock, ClockMode::Running);
        assert_eq!(c.admin_token.as_deref(), Some("flag"));
        let err = resolve("clock_start = \"soon\"\n", &[]).unwrap_err();
        assert_eq!(err.line, Some(1));
        assert!(resolve("clock = \"slow\"\n", &[]).is_err());
    }

    #[test]
    fn flags_beat_the_file_and_the_file_beats_defaults() {
        let (c, format, _) = resolve(
            EVERY_KEY,
            &[
                "--port",
                "9600",
                "--region",
                "ap-south-1",
                "--log-format",
                "text",
                "--strict-timing",
            ],
        )
        .unwrap();
        assert_eq!(c.port, 9600, "flag wins");
        assert_eq!(c.region, "ap-south-1", "flag wins");
        assert_eq!(
            format,
            LogFormat::Text,
            "flag wins even when it names the default"
        );
        assert_eq!(c.account_id, "123456789012", "file beats default");
        assert_eq!(c.host, "0.0.0.0", "file beats default");
        // A flag naming the default value still wins over the file.
        let (c, _, _) = resolve(EVERY_KEY, &["--port", "9324"]).unwrap();
        assert_eq!(c.port, 9324);
        // Nothing in the file: defaults.
        let (c, format, _) = resolve("", &[]).unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(format, LogFormat::Text);
    }

    #[test]
    fn queues_default_to_the_effective_region_and_account() {
        let text = r#"
region = "eu-west-1"
[[queues]]
name = "here"
[[queues]]
name = "there"
region = "us-west-2"
account_id = "111122223333"
"#;
        let (_, _, plan) = resolve(text, &["--account-id", "999999999999"]).unwrap();
        let keys: Vec<String> = plan.queues.iter().map(|q| q.key.arn()).collect();
        assert_eq!(
            keys,
            [
                "arn:aws:sqs:eu-west-1:999999999999:here",
                "arn:aws:sqs:us-west-2:111122223333:there"
            ]
        );
    }

    #[test]
    fn dead_letter_wiring_by_name_in_dependency_order() {
        let text = r#"
[[queues]]
name = "a"
dead_letter_queue = "b"
max_receive_count = 3
[[queues]]
name = "b"
dead_letter_queue = "c"
max_receive_count = 7
redrive_allow_policy = { permission = "byQueue", source_queues = ["a", "arn:aws:sqs:us-east-1:000000000000:elsewhere"] }
[[queues]]
name = "c"
redrive_allow_policy = { permission = "allowAll" }
[[queues]]
name = "d.fifo"
tags = { team = "x" }
"#;
        let (_, _, plan) = resolve(text, &[]).unwrap();
        let names: Vec<&str> = plan.queues.iter().map(|q| q.key.name.as_str()).collect();
        assert_eq!(names, ["c", "b", "a", "d.fifo"]);
        let attr = |name: &str, attr: &str| {
            let q = plan.queues.iter().find(|q| q.key.name == name).unwrap();
            q.attributes.get(attr).cloned()
        };
        let policy: serde_json::Value =
            serde_json::from_str(&attr("a", "RedrivePolicy").unwrap()).unwrap();
        assert_eq!(
            policy,
            serde_json::json!({"deadLetterTargetArn": "arn:aws:sqs:us-east-1:000000000000:b", "maxReceiveCount": 3})
        );
        let allow: serde_json::Value =
            serde_json::from_str(&attr("b", "RedriveAllowPolicy").unwrap()).unwrap();
        assert_eq!(
            allow,
            serde_json::json!({"redrivePermission": "byQueue", "sourceQueueArns": [
                "arn:aws:sqs:us-east-1:000000000000:a",
                "arn:aws:sqs:us-east-1:000000000000:elsewhere"
            ]})
        );
        assert_eq!(
            attr("c", "RedriveAllowPolicy").as_deref(),
            Some(r#"{"redrivePermission":"allowAll"}"#)
        );
        assert_eq!(attr("d.fifo", "FifoQueue").as_deref(), Some("true"));
        assert_eq!(plan.queues[3].tags["team"], "x");
    }

    #[test]
    fn creation_order_and_cycles() {
        assert_eq!(creation_order(&[None, Some(0), Some(1)]), Ok(vec![0, 1, 2]));
        assert_eq!(creation_order(&[Some(2), None, Some(1)]), Ok(vec![1, 2, 0]));
        assert_eq!(creation_order(&[Some(0)]), Err(vec![0, 0]));
        assert_eq!(
            creation_order(&[None, Some(2), Some(3), Some(1)]),
            Err(vec![1, 2, 3, 1])
        );
    }

    #[test]
    fn auth_table() {
        let text = "[auth]\nenabled = true\nkeys = [\n  { access_key = \"AKID1\", secret_key = \"s1\", account_id = \"111111111111\" },\n  { access_key = \"AKID2\", secret_key = \"s/2+\", account_id = \"222222222222\" },\n]\n";
        let (c, _, _) = resolve(text, &[]).unwrap();
        assert!(c.auth);
        let keys: Vec<_> = c
            .auth_keys
            .iter()
            .map(|k| {
                (
                    k.access_key.as_str(),
                    k.secret_key.as_str(),
                    k.account_id.as_str(),
                )
            })
            .collect();
        assert_eq!(
            keys,
            [
                ("AKID1", "s1", "111111111111"),
                ("AKID2", "s/2+", "222222222222")
            ]
        );
        // A flag's keys replace the file's; --auth alone keeps them.
        let (c, _, _) = resolve(text, &["--auth-key", "AKID3:s3:333333333333"]).unwrap();
        assert_eq!(c.auth_keys.len(), 1);
        assert_eq!(c.auth_keys[0].access_key, "AKID3");
        // Off by default, even with keys listed.
        let (c, _, _) = resolve("[auth]\nkeys = []\n", &[]).unwrap();
        assert!(!c.auth);
        let (c, _, _) = resolve("", &[]).unwrap();
        assert!(!c.auth && c.auth_keys.is_empty());
    }

    #[tokio::test]
    async fn bad_auth_tables_name_their_line() {
        assert_error(
            "[auth]\nenabled = true\nkeys = [\n  { access_key = \"A\", secret_key = \"s\", account_id = \"42\" },\n]\n",
            4,
            "invalid auth key: an account ID is 12 digits",
        )
        .await;
        assert_error("[auth]\nenable = true\n", 2, "unknown field `enable`").await;
        assert_error(
            "[auth]\nkeys = [{ access_key = \"A\", secret_key = \"s\" }]\n",
            2,
            "missing field `account_id`",
        )
        .await;
        assert_error("[auth]\nenabled = \"yes\"\n", 2, "expected a boolean").await;
        let e = error_of("[auth]\nenabled = true\n").await;
        assert!(e.message.contains("no key is configured"), "{e}");
    }

    #[tokio::test]
    async fn each_kind_of_bad_file_names_its_line() {
        // Syntax.
        assert_error("port = 9324\nhost = \n", 2, "string").await;
        // Unknown keys, at the top and in a queue.
        assert_error("\nprot = 1\n", 2, "unknown field `prot`").await;
        assert_error(
            "[[queues]]\nname = \"a\"\nvisibility = 3\n",
            3,
            "unknown field `visibility`",
        )
        .await;
        // Wrong types.
        assert_error(
            "port = \"x\"\n",
            1,
            "invalid type: string \"x\", expected u16",
        )
        .await;
        assert_error("port = 70000\n", 1, "u16").await;
        assert_error("strict_timing = \"yes\"\n", 1, "expected a boolean").await;
        assert_error("log_format = \"xml\"\n", 1, "unknown variant `xml`").await;
        assert_error("[[queues]]\nname = 5\n", 2, "expected a string").await;
        assert_error(
            "[[queues]]\nname = \"a\"\nattributes = { Policy = 1.5 }\n",
            3,
            "attribute Policy is a float",
        )
        .await;
        // Values the flags would refuse.
        assert_error("\nregion = \"US East\"\n", 2, "a region is lower-case").await;
        assert_error("account_id = \"42\"\n", 1, "12 digits").await;
        assert_error("base_url = \"sqs.local\"\n", 1, "http://").await;
        assert_error("log_level = \"info,[\"\n", 1, "invalid log_level").await;
        // A missing name.
        assert_error("[[queues]]\nattributes = {}\n", 1, "missing field `name`").await;
    }

    #[tokio::test]
    async fn invalid_attributes_get_sqs_own_message_at_their_line() {
        let text = "[[queues]]\nname = \"a\"\n[queues.attributes]\nDelaySeconds = 0\nVisibilityTimeout = 99999\n";
        let e = error_of(text).await;
        assert_eq!(e.line, Some(5), "{e}");
        assert_eq!(
            e.message,
            "queue \"a\": InvalidAttributeValue: Invalid value for the parameter VisibilityTimeout."
        );
        assert_error(
            "[[queues]]\nname = \"a\"\nattributes = { NoSuchAttribute = 1 }\n",
            3,
            "Unknown Attribute NoSuchAttribute.",
        )
        .await;
        assert_error(
            "[[queues]]\nname = \"bad name!\"\n",
            2,
            "Can only include alphanumeric characters",
        )
        .await;
        assert_error(
            "[[queues]]\nname = \"a\"\ndead_letter_queue = \"b\"\nmax_receive_count = 1001\n[[queues]]\nname = \"b\"\n",
            4,
            "Invalid value for maxReceiveCount: 1001",
        )
        .await;
        // The dead-letter queue must be of the source's type.
        assert_error(
            "[[queues]]\nname = \"a.fifo\"\ndead_letter_queue = \"b\"\nmax_receive_count = 1\n[[queues]]\nname = \"b\"\n",
            3,
            "Dead-letter queue must be same type of queue as the source.",
        )
        .await;
        // The dead-letter queue's allow policy must let the source in.
        assert_error(
            "[[queues]]\nname = \"a\"\ndead_letter_queue = \"b\"\nmax_receive_count = 1\n[[queues]]\nname = \"b\"\nredrive_allow_policy = { permission = \"denyAll\" }\n",
            3,
            "does not allow this queue to use it as a dead-letter queue",
        )
        .await;
        assert_error(
            "[[queues]]\nname = \"b\"\nredrive_allow_policy = { permission = \"some\" }\n",
            3,
            "Invalid redrivePermission: some.",
        )
        .await;
    }

    #[tokio::test]
    async fn wiring_problems_name_their_line() {
        assert_error(
            "[[queues]]\nname = \"a\"\ndead_letter_queue = \"nope\"\nmax_receive_count = 1\n",
            3,
            "dead_letter_queue \"nope\" is not declared in this file",
        )
        .await;
        // Same name, other region: still not the same queue.
        assert_error(
            "[[queues]]\nname = \"a\"\ndead_letter_queue = \"d\"\nmax_receive_count = 1\n[[queues]]\nname = \"d\"\nregion = \"eu-west-1\"\n",
            3,
            "not declared in this file (in region us-east-1",
        )
        .await;
        assert_error(
            "[[queues]]\nname = \"a\"\ndead_letter_queue = \"b\"\n[[queues]]\nname = \"b\"\n",
            3,
            "needs max_receive_count",
        )
        .await;
        assert_error(
            "[[queues]]\nname = \"a\"\nmax_receive_count = 2\n",
            3,
            "max_receive_count needs dead_letter_queue",
        )
        .await;
        assert_error(
            "[[queues]]\nname = \"a\"\n\n[[queues]]\nname = \"a\"\n",
            5,
            "queue \"a\" is declared twice (first on line 2)",
        )
        .await;
        assert_error(
            "[[queues]]\nname = \"a\"\ndead_letter_queue = \"a\"\nmax_receive_count = 1\n",
            3,
            "dead-letter queues form a cycle: a -> a",
        )
        .await;
        assert_error(
            "[[queues]]\nname = \"x\"\n[[queues]]\nname = \"a\"\ndead_letter_queue = \"b\"\nmax_receive_count = 1\n[[queues]]\nname = \"b\"\ndead_letter_queue = \"a\"\nmax_receive_count = 1\n",
            5,
            "dead-letter queues form a cycle: a -> b -> a",
        )
        .await;
        assert_error(
            "[[queues]]\nname = \"a\"\nredrive_allow_policy = { permission = \"byQueue\", source_queues = [\"ghost\"] }\n",
            3,
            "redrive_allow_policy names \"ghost\", which is not declared",
        )
        .await;
        assert_error(
            "[[queues]]\nname = \"a\"\ndead_letter_queue = \"b\"\nmax_receive_count = 1\nattributes = { RedrivePolicy = \"{}\" }\n[[queues]]\nname = \"b\"\n",
            5,
            "either dead_letter_queue or the RedrivePolicy attribute",
        )
        .await;
    }

    #[tokio::test]
    async fn apply_is_idempotent_and_updates_an_existing_queue() {
        use crate::api::{GetQueueAttributesRequest, ListQueueTagsRequest, Response};
        use crate::clock::SystemClock;

        let text = r#"
[[queues]]
name = "jobs"
dead_letter_queue = "jobs-dlq"
max_receive_count = 4
tags = { team = "a" }
attributes = { VisibilityTimeout = 45 }
[[queues]]
name = "jobs-dlq"
"#;
        let (config, _, plan) = resolve(text, &[]).unwrap();
        let engine = Engine::new(Arc::new(SystemClock), config.engine_config());
        let ctx = RequestContext::new("us-east-1", "000000000000", "http://localhost");
        // "jobs" exists already with another visibility timeout.
        engine
            .handle(
                &ctx,
                Request::CreateQueue(CreateQueueRequest {
                    queue_name: Some("jobs".into()),
                    attributes: [("VisibilityTimeout".to_string(), "10".to_string())].into(),
                    tags: Default::default(),
                }),
            )
            .await
            .unwrap();
        plan.apply(&engine, "http://localhost").await.unwrap();
        plan.apply(&engine, "http://localhost").await.unwrap();

        let attributes = |name: &str| {
            let engine = engine.clone();
            let ctx = ctx.clone();
            let name = name.to_string();
            async move {
                match engine
                    .handle(
                        &ctx,
                        Request::GetQueueAttributes(GetQueueAttributesRequest {
                            queue_url: Some(name),
                            attribute_names: vec!["All".into()],
                        }),
                    )
                    .await
                    .unwrap()
                {
                    Response::GetQueueAttributes(r) => r.attributes,
                    other => panic!("{other:?}"),
                }
            }
        };
        let jobs = attributes("jobs").await;
        assert_eq!(jobs["VisibilityTimeout"], "45", "the file's value wins");
        assert_eq!(
            jobs["RedrivePolicy"],
            r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:jobs-dlq","maxReceiveCount":4}"#
        );
        assert!(attributes("jobs-dlq").await.contains_key("QueueArn"));
        let tags = engine
            .handle(
                &ctx,
                Request::ListQueueTags(ListQueueTagsRequest {
                    queue_url: Some("jobs".into()),
                }),
            )
            .await
            .unwrap();
        match tags {
            Response::ListQueueTags(r) => assert_eq!(r.tags["team"], "a"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn the_example_file_is_complete_and_valid() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/retsu.toml");
        let source = Source::read(Path::new(path)).unwrap();
        let (config, format, plan) = resolve(&source.text, &[]).unwrap();
        plan.check(config.engine_config()).await.unwrap();
        assert_eq!(format, LogFormat::Text);
        // Every top-level key is present in the example (uncommented or as
        // a commented line), so the example documents them all.
        for key in [
            "host",
            "port",
            "region",
            "account_id",
            "base_url",
            "strict_timing",
            "clock",
            "clock_start",
            "no_admin",
            "admin_token",
            "data_dir",
            "durability",
            "log_level",
            "log_format",
        ] {
            assert!(
                source.text.lines().any(|l| {
                    let l = l.trim_start_matches(['#', ' ']);
                    l.starts_with(&format!("{key} ="))
                }),
                "{key} missing from the example"
            );
        }
        for key in [
            "name",
            "region",
            "account_id",
            "attributes",
            "tags",
            "dead_letter_queue",
            "max_receive_count",
            "redrive_allow_policy",
        ] {
            assert!(
                source.text.contains(&format!("\n{key} = ")),
                "queue key {key} missing from the example"
            );
        }
        let names: Vec<&str> = plan.queues.iter().map(|q| q.key.name.as_str()).collect();
        assert_eq!(names, ["jobs-dlq", "jobs", "orders.fifo", "audit"]);
    }
}
