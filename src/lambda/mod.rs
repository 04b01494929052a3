//! Lambda beside SQS: event source mappings that poll a queue and invoke a
//! configured function with batches, as AWS's Lambda service does.
//!
//! - `function.rs`: the functions (`--function`, `[[functions]]`) and how
//!   one is invoked (the Invoke API over HTTP, or a command);
//! - `registry.rs`: the functions by name, declared or made at run time;
//! - `functions.rs`: CreateFunction, GetFunction, ListFunctions,
//!   DeleteFunction, and the admin API's functions;
//! - `mapping.rs`: a mapping's settings, validation and description;
//! - `poller.rs`: the data plane, a consumer of the engine like any SQS
//!   client (ReceiveMessage long polls, DeleteMessageBatch);
//! - `record.rs`: the event's records and the partial-batch answer;
//! - `filter.rs`: `FilterCriteria`, on SNS's filter-policy engine;
//! - `sns.rs`: SNS's `lambda` subscriptions, invoked asynchronously;
//! - `observe.rs`: the recent invocations and their counters;
//! - `admin.rs`: `/_retsu/lambda/*`, the mappings and invocations;
//! - `declared.rs`: `retsu check-config`'s checks of the file's mappings;
//! - the wire (Lambda's REST-JSON paths) is `crate::protocol::lambda`.
//!
//! Mappings are kept in the engine's queue-level state (the service
//! "lambda"), so the journal persists them with the queues and a restart
//! starts their pollers again; the functions made at run time are the
//! service "lambda-functions" beside them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::engine::{Engine, QueueKey};

pub mod admin;
pub mod declared;
pub mod error;
pub mod filter;
pub mod function;
pub mod functions;
pub mod mapping;
pub mod observe;
pub mod poller;
pub mod record;
pub mod registry;
pub mod sns;

pub use error::LambdaError;
pub use function::FunctionTarget;
use mapping::{Mapping, Settings};

/// The name the mappings are persisted under.
const SERVICE: &str = "lambda";

/// Listing's default page, as Lambda's.
const DEFAULT_MAX_ITEMS: usize = 100;

/// A mapping the configuration file declares: CreateEventSourceMapping's
/// request body, and where it was written (for the error that stops
/// start-up when Lambda refuses it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredMapping {
    pub file: String,
    pub line: Option<usize>,
    pub settings: String,
}

/// The Lambda service on one engine.
pub struct Lambda {
    engine: Arc<Engine>,
    /// The functions, each with its free invocation slots, shared by
    /// every mapping naming it.
    functions: registry::Registry,
    /// The region and account of the server, for configured functions.
    region: String,
    account: String,
    /// Under one lock, never held across an await.
    state: Mutex<State>,
    /// The runtime pollers run on.
    runtime: tokio::runtime::Handle,
    /// Every invocation, from mappings and SNS subscriptions.
    invocations: Arc<observe::Invocations>,
}

#[derive(Default)]
struct State {
    /// In creation order (the order listings page through).
    mappings: BTreeMap<u64, Entry>,
    next: u64,
}

struct Entry {
    mapping: Mapping,
    poller: Option<poller::Handle>,
}

impl Lambda {
    /// Must be called within the server's runtime: the mappings a data
    /// directory kept start polling at once.
    pub fn new(
        engine: Arc<Engine>,
        functions: &[FunctionTarget],
        region: &str,
        account: &str,
    ) -> Arc<Lambda> {
        let lambda = Arc::new(Lambda {
            engine: engine.clone(),
            functions: registry::Registry::new(functions),
            region: region.to_string(),
            account: account.to_string(),
            state: Mutex::new(State::default()),
            runtime: tokio::runtime::Handle::current(),
            invocations: Arc::default(),
        });
        // Functions first: the kept mappings' pollers look theirs up.
        if let Some(kept) = engine.take_restored_service(registry::SERVICE) {
            lambda.functions.restore(kept);
        }
        if let Some(kept) = engine.take_restored_service(SERVICE) {
            let mappings: Vec<Mapping> = serde_json::from_value(kept).unwrap_or_default();
            let mut state = lambda.lock();
            for mapping in mappings {
                let seq = state.next;
                state.next += 1;
                let poller = lambda.start_poller(&mapping);
                state.mappings.insert(seq, Entry { mapping, poller });
            }
        }
        let weak = Arc::downgrade(&lambda);
        engine.register_service(SERVICE, move || weak.upgrade().map(|l| l.snapshot()));
        let weak = Arc::downgrade(&lambda);
        engine.register_service(registry::SERVICE, move || {
            weak.upgrade().map(|l| l.functions.snapshot())
        });
        lambda
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn snapshot(&self) -> Value {
        let state = self.lock();
        let all: Vec<&Mapping> = state.mappings.values().map(|e| &e.mapping).collect();
        serde_json::to_value(all).unwrap_or(Value::Null)
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The invocation log (admin API, console, `/metrics`).
    pub fn invocations(&self) -> &Arc<observe::Invocations> {
        &self.invocations
    }

    /// Whether any function exists (configured or created): only then
    /// are SNS's `lambda` subscriptions invoked rather than recorded.
    pub fn has_functions(&self) -> bool {
        !self.functions.is_empty()
    }

    /// Makes the file's mappings, or brings an existing mapping of the same
    /// function and queue (kept by the store) to the file's settings.
    pub async fn apply_declared(&self, declared: &[DeclaredMapping]) -> Result<(), String> {
        for d in declared {
            let at = match d.line {
                Some(line) => format!("{}, line {line}", d.file),
                None => d.file.clone(),
            };
            let parse = || -> Result<Settings, String> {
                // Through the wire's own decoder: one copy of it in the binary.
                crate::protocol::lambda::settings(d.settings.as_bytes())
                    .map_err(|e| format!("{at}: {e}"))
            };
            let settings = parse()?;
            let function = settings
                .function_name
                .as_deref()
                .map(function_name)
                .unwrap_or_default()
                .to_string();
            let existing = {
                let state = self.lock();
                state
                    .mappings
                    .values()
                    .find(|e| {
                        e.mapping.function_name == function
                            && Some(&e.mapping.event_source_arn)
                                == settings.event_source_arn.as_ref()
                    })
                    .map(|e| e.mapping.uuid.clone())
            };
            let result = match existing {
                Some(uuid) => self.update(&uuid, parse()?).await,
                None => self.create(settings).await,
            };
            result.map_err(|e| format!("{at}: event source mapping: {e}"))?;
        }
        Ok(())
    }

    /// `CreateEventSourceMapping`.
    pub async fn create(&self, settings: Settings) -> Result<Value, LambdaError> {
        settings.check_shape()?;
        let function = settings
            .function_name
            .as_deref()
            .ok_or_else(|| LambdaError::invalid_parameter("FunctionName is required."))?;
        let source = settings.event_source_arn.clone().ok_or_else(|| {
            LambdaError::invalid_parameter(
                "Unrecognized event source, must be kinesis, dynamodb stream, sqs, or documentdb",
            )
        })?;
        let function = self.function(function)?.name.clone();
        let fifo = self.queue_fifo(&source)?;
        let mut mapping = Mapping {
            uuid: uuid::Uuid::new_v4().to_string(),
            region: self.region.clone(),
            account: self.account.clone(),
            function_name: function,
            event_source_arn: source,
            batch_size: 10,
            window_s: None,
            enabled: true,
            report_batch_item_failures: false,
            maximum_concurrency: None,
            filters: Vec::new(),
            last_modified_ms: self.engine.now(),
            last_processing_result: "No records processed".into(),
        };
        settings.apply(&mut mapping, fifo)?;
        let answer = {
            let mut state = self.lock();
            if let Some(existing) = state.mappings.values().find(|e| {
                e.mapping.event_source_arn == mapping.event_source_arn
                    && e.mapping.function_name == mapping.function_name
            }) {
                return Err(LambdaError::conflict(format!(
                    "The event source arn (\" {} \") and function (\" {} \") provided mapping already exists. Please update or delete the existing mapping with UUID {}",
                    mapping.event_source_arn, mapping.function_name, existing.mapping.uuid
                )));
            }
            let seq = state.next;
            state.next += 1;
            let answer = mapping.configuration("Creating");
            let poller = self.start_poller(&mapping);
            state.mappings.insert(seq, Entry { mapping, poller });
            answer
        };
        self.persist().await?;
        Ok(answer)
    }

    /// `GetEventSourceMapping`.
    pub fn get(&self, uuid: &str) -> Result<Value, LambdaError> {
        let state = self.lock();
        Ok(find(&state, uuid)?.describe())
    }

    /// `UpdateEventSourceMapping`.
    pub async fn update(&self, uuid: &str, settings: Settings) -> Result<Value, LambdaError> {
        settings.check_shape()?;
        let current = {
            let state = self.lock();
            find(&state, uuid)?.mapping.clone()
        };
        let mut next = current.clone();
        if let Some(function) = &settings.function_name {
            next.function_name = self.function(function)?.name.clone();
        }
        let fifo = self.queue_fifo(&current.event_source_arn).unwrap_or(false);
        settings.apply(&mut next, fifo)?;
        next.last_modified_ms = self.engine.now();
        let answer = {
            let mut state = self.lock();
            let entry = state
                .mappings
                .values_mut()
                .find(|e| e.mapping.uuid == uuid)
                .ok_or_else(LambdaError::no_such_mapping)?;
            if let Some(result) = entry.poller.as_ref().and_then(|p| p.last_result()) {
                next.last_processing_result = result;
            }
            // The old pollers finish the batch they hold, then stop.
            if let Some(old) = entry.poller.take() {
                old.stop();
            }
            entry.poller = self.start_poller(&next);
            entry.mapping = next;
            entry.mapping.configuration("Updating")
        };
        self.persist().await?;
        Ok(answer)
    }

    /// `DeleteEventSourceMapping`.
    pub async fn delete(&self, uuid: &str) -> Result<Value, LambdaError> {
        let answer = {
            let mut state = self.lock();
            let seq = state
                .mappings
                .iter()
                .find(|(_, e)| e.mapping.uuid == uuid)
                .map(|(seq, _)| *seq)
                .ok_or_else(LambdaError::no_such_mapping)?;
            let entry = state.mappings.remove(&seq).expect("found above");
            if let Some(poller) = entry.poller {
                poller.stop();
            }
            entry.mapping.configuration("Deleting")
        };
        self.persist().await?;
        Ok(answer)
    }

    /// `ListEventSourceMappings`: by function and by source, in creation
    /// order; `Marker` is where the previous page stopped.
    pub fn list(
        &self,
        function: Option<&str>,
        source: Option<&str>,
        marker: Option<&str>,
        max_items: Option<i64>,
    ) -> Result<Value, LambdaError> {
        let max = match max_items {
            None => DEFAULT_MAX_ITEMS,
            Some(n) if (1..=10_000).contains(&n) => n as usize,
            Some(n) => {
                return Err(LambdaError::validation(format!(
                    "1 validation error detected: Value '{n}' at 'maxItems' failed to satisfy constraint: Member must have value {}",
                    if n < 1 { "greater than or equal to 1" } else { "less than or equal to 10000" }
                )))
            }
        };
        let start: u64 = match marker {
            None => 0,
            Some(m) => m
                .parse()
                .map_err(|_| LambdaError::invalid_parameter("Invalid marker."))?,
        };
        let function = function.map(function_name);
        let state = self.lock();
        let mut page = Vec::new();
        let mut next_marker = None;
        for (seq, entry) in state.mappings.range(start..) {
            let m = &entry.mapping;
            if function.is_some_and(|f| f != m.function_name)
                || source.is_some_and(|s| s != m.event_source_arn)
            {
                continue;
            }
            if page.len() == max {
                next_marker = Some(seq.to_string());
                break;
            }
            page.push(entry.describe());
        }
        let mut out = json!({ "EventSourceMappings": page });
        if let Some(marker) = next_marker {
            out["NextMarker"] = json!(marker);
        }
        Ok(out)
    }

    /// Whether the queue `arn` names is FIFO; Lambda's error when it does
    /// not exist.
    fn queue_fifo(&self, arn: &str) -> Result<bool, LambdaError> {
        let Some(key) = arn
            .starts_with("arn:aws:sqs:")
            .then(|| QueueKey::from_arn(arn))
            .flatten()
        else {
            return Err(LambdaError::invalid_parameter(format!(
                "Unrecognized event source, must be kinesis, dynamodb stream, sqs, or documentdb: {arn}"
            )));
        };
        match self.engine.queue_facts(&key) {
            Some(facts) => Ok(facts.fifo),
            None => Err(LambdaError::invalid_parameter(
                "Error occurred while ReceiveMessage. SQS Error Code: AWS.SimpleQueueService.NonExistentQueue. SQS Error Message: The specified queue does not exist or you do not have access to it.",
            )),
        }
    }

    fn start_poller(&self, mapping: &Mapping) -> Option<poller::Handle> {
        if !mapping.enabled {
            return None;
        }
        let function = self.functions.get(&mapping.function_name)?;
        let _entered = self.runtime.enter();
        let slots = self.functions.slots(&mapping.function_name)?;
        Some(poller::start(
            self.engine.clone(),
            mapping.clone(),
            function,
            slots,
            self.invocations.clone(),
        ))
    }

    async fn persist(&self) -> Result<(), LambdaError> {
        self.engine
            .service_changed()
            .await
            .map_err(|e| LambdaError::new(500, "ServiceException", e.message.to_string()))
    }

    /// Stops every poller (shutdown).
    pub fn stop(&self) {
        let mut state = self.lock();
        for entry in state.mappings.values_mut() {
            if let Some(poller) = entry.poller.take() {
                poller.stop();
            }
        }
    }
}

impl Entry {
    /// The mapping as it stands, with its pollers' latest result.
    fn describe(&self) -> Value {
        let mut out = self.mapping.configuration(self.mapping.settled_state());
        if let Some(result) = self.poller.as_ref().and_then(|p| p.last_result()) {
            out["LastProcessingResult"] = json!(result);
        }
        out
    }
}

fn find<'a>(state: &'a State, uuid: &str) -> Result<&'a Entry, LambdaError> {
    state
        .mappings
        .values()
        .find(|e| e.mapping.uuid == uuid)
        .ok_or_else(LambdaError::no_such_mapping)
}

/// `name`, `function:name`, `account:function:name` or a full ARN, with
/// or without a qualifier, to the bare name.
pub fn function_name(name_or_arn: &str) -> &str {
    let mut parts: Vec<&str> = name_or_arn.split(':').collect();
    if let Some(i) = parts.iter().position(|p| *p == "function") {
        parts.drain(..=i);
        return parts.first().copied().unwrap_or("");
    }
    parts.first().copied().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_names_from_arns() {
        for form in [
            "orders",
            "orders:$LATEST",
            "function:orders",
            "000000000000:function:orders",
            "arn:aws:lambda:us-east-1:000000000000:function:orders",
            "arn:aws:lambda:us-east-1:000000000000:function:orders:prod",
        ] {
            assert_eq!(function_name(form), "orders", "{form}");
        }
    }
}
