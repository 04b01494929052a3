//! An event source mapping as Lambda describes it: its settings, their
//! validation (botocore's model for ranges and enums, Lambda's rules for
//! SQS sources), and `EventSourceMappingConfiguration`, the JSON every
//! mapping action answers with.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::error::LambdaError;

/// Lambda's limits for an SQS source.
pub const MAX_BATCH: i64 = 10_000;
pub const MAX_FIFO_BATCH: i64 = 10;
/// Larger batches need a batching window of at least a second.
pub const MAX_BATCH_WITHOUT_WINDOW: i64 = 10;
pub const MAX_WINDOW_S: i64 = 300;
pub const MIN_CONCURRENCY: i64 = 2;
pub const MAX_CONCURRENCY: i64 = 1000;
pub const REPORT_BATCH_ITEM_FAILURES: &str = "ReportBatchItemFailures";

/// One mapping, as kept (and persisted, as JSON) by the service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mapping {
    pub uuid: String,
    pub region: String,
    pub account: String,
    pub function_name: String,
    pub event_source_arn: String,
    pub batch_size: u32,
    /// `None`: never set (AWS leaves it out of a FIFO queue's mapping).
    pub window_s: Option<u32>,
    pub enabled: bool,
    pub report_batch_item_failures: bool,
    pub maximum_concurrency: Option<u32>,
    /// `FilterCriteria.Filters[].Pattern`, as given.
    pub filters: Vec<String>,
    pub last_modified_ms: u64,
    /// What the last batch came to ("OK", "PROBLEM: ...", or "No records
    /// processed" before any).
    pub last_processing_result: String,
}

impl Mapping {
    pub fn function_arn(&self) -> String {
        function_arn(&self.region, &self.account, &self.function_name)
    }

    pub fn arn(&self) -> String {
        format!(
            "arn:aws:lambda:{}:{}:event-source-mapping:{}",
            self.region, self.account, self.uuid
        )
    }

    /// `Enabled` or `Disabled`, once a change has settled.
    pub fn settled_state(&self) -> &'static str {
        if self.enabled {
            "Enabled"
        } else {
            "Disabled"
        }
    }

    /// `EventSourceMappingConfiguration` in `state`.
    pub fn configuration(&self, state: &str) -> Value {
        let mut out = json!({
            "UUID": self.uuid,
            "BatchSize": self.batch_size,
            "EventSourceArn": self.event_source_arn,
            "FunctionArn": self.function_arn(),
            "LastModified": self.last_modified_ms as f64 / 1000.0,
            "LastProcessingResult": self.last_processing_result,
            "State": state,
            "StateTransitionReason": "USER_INITIATED",
            "FunctionResponseTypes": if self.report_batch_item_failures {
                vec![REPORT_BATCH_ITEM_FAILURES]
            } else {
                vec![]
            },
            "EventSourceMappingArn": self.arn(),
        });
        if let Some(window) = self.window_s {
            out["MaximumBatchingWindowInSeconds"] = json!(window);
        }
        if let Some(n) = self.maximum_concurrency {
            out["ScalingConfig"] = json!({ "MaximumConcurrency": n });
        }
        if !self.filters.is_empty() {
            let filters: Vec<Value> = self
                .filters
                .iter()
                .map(|p| json!({ "Pattern": p }))
                .collect();
            out["FilterCriteria"] = json!({ "Filters": filters });
        }
        out
    }
}

pub fn function_arn(region: &str, account: &str, name: &str) -> String {
    format!("arn:aws:lambda:{region}:{account}:function:{name}")
}

/// The settings a Create or Update request gives; `None` keeps the
/// current (or default) value.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Settings {
    pub function_name: Option<String>,
    pub event_source_arn: Option<String>,
    pub enabled: Option<bool>,
    pub batch_size: Option<i64>,
    pub maximum_batching_window_in_seconds: Option<i64>,
    pub function_response_types: Option<Vec<String>>,
    pub scaling_config: Option<ScalingConfig>,
    pub filter_criteria: Option<FilterCriteria>,
    /// Settings of other sources (streams, Kafka): accepted by the model,
    /// refused for a queue as Lambda refuses them.
    pub starting_position: Option<String>,
    pub parallelization_factor: Option<i64>,
    pub maximum_retry_attempts: Option<i64>,
    pub maximum_record_age_in_seconds: Option<i64>,
    pub bisect_batch_on_function_error: Option<bool>,
    pub tumbling_window_in_seconds: Option<i64>,
    // Everything else Lambda's model has (tags, KMS key, metrics and
    // logging configs...) is accepted and not acted on: serde skips
    // unknown members.
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ScalingConfig {
    pub maximum_concurrency: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct FilterCriteria {
    #[serde(default)]
    pub filters: Vec<Filter>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Filter {
    pub pattern: Option<String>,
}

/// The model's range checks, in the service's words.
fn range(value: i64, field: &str, min: i64, max: i64) -> Result<(), LambdaError> {
    if value < min {
        return Err(LambdaError::validation(format!(
            "1 validation error detected: Value '{value}' at '{field}' failed to satisfy constraint: Member must have value greater than or equal to {min}"
        )));
    }
    if value > max {
        return Err(LambdaError::validation(format!(
            "1 validation error detected: Value '{value}' at '{field}' failed to satisfy constraint: Member must have value less than or equal to {max}"
        )));
    }
    Ok(())
}

impl Settings {
    /// The checks that need no state: the model's ranges and enums, and
    /// that nothing meant for a stream is set on a queue.
    pub fn check_shape(&self) -> Result<(), LambdaError> {
        if let Some(n) = self.batch_size {
            range(n, "batchSize", 1, MAX_BATCH)?;
        }
        if let Some(n) = self.maximum_batching_window_in_seconds {
            range(n, "maximumBatchingWindowInSeconds", 0, MAX_WINDOW_S)?;
        }
        if let Some(n) = self
            .scaling_config
            .as_ref()
            .and_then(|s| s.maximum_concurrency)
        {
            range(
                n,
                "scalingConfig.maximumConcurrency",
                MIN_CONCURRENCY,
                MAX_CONCURRENCY,
            )?;
        }
        if let Some(types) = &self.function_response_types {
            if types.len() > 1 {
                return Err(LambdaError::validation(format!(
                    "1 validation error detected: Value '[{}]' at 'functionResponseTypes' failed to satisfy constraint: Member must have length less than or equal to 1",
                    types.join(", ")
                )));
            }
            if let Some(t) = types.iter().find(|t| *t != REPORT_BATCH_ITEM_FAILURES) {
                return Err(LambdaError::validation(format!(
                    "1 validation error detected: Value '[{t}]' at 'functionResponseTypes' failed to satisfy constraint: Member must satisfy constraint: [Member must satisfy enum value set: [ReportBatchItemFailures]]"
                )));
            }
        }
        let stream_only = [
            ("StartingPosition", self.starting_position.is_some()),
            (
                "ParallelizationFactor",
                self.parallelization_factor.is_some(),
            ),
            (
                "MaximumRetryAttempts",
                self.maximum_retry_attempts.is_some(),
            ),
            (
                "MaximumRecordAgeInSeconds",
                self.maximum_record_age_in_seconds.is_some(),
            ),
            (
                "BisectBatchOnFunctionError",
                self.bisect_batch_on_function_error.is_some(),
            ),
            (
                "TumblingWindowInSeconds",
                self.tumbling_window_in_seconds.is_some(),
            ),
        ];
        if let Some((name, _)) = stream_only.iter().find(|(_, set)| *set) {
            return Err(LambdaError::invalid_parameter(format!(
                "Unsupported parameter for SQS event source: {name}"
            )));
        }
        Ok(())
    }

    /// Applies these settings to `mapping` (a new one starts from Lambda's
    /// defaults), then checks what depends on the queue.
    pub fn apply(&self, mapping: &mut Mapping, fifo: bool) -> Result<(), LambdaError> {
        self.check_shape()?;
        if let Some(n) = self.batch_size {
            mapping.batch_size = n as u32;
        }
        if let Some(n) = self.maximum_batching_window_in_seconds {
            mapping.window_s = Some(n as u32);
        }
        if let Some(enabled) = self.enabled {
            mapping.enabled = enabled;
        }
        if let Some(types) = &self.function_response_types {
            mapping.report_batch_item_failures = !types.is_empty();
        }
        if let Some(scaling) = &self.scaling_config {
            mapping.maximum_concurrency = scaling.maximum_concurrency.map(|n| n as u32);
        }
        if let Some(criteria) = &self.filter_criteria {
            let mut patterns = Vec::with_capacity(criteria.filters.len());
            for filter in &criteria.filters {
                let pattern = filter.pattern.clone().unwrap_or_default();
                super::filter::Filter::parse(&pattern)?;
                patterns.push(pattern);
            }
            mapping.filters = patterns;
        }
        if fifo {
            if i64::from(mapping.batch_size) > MAX_FIFO_BATCH {
                return Err(LambdaError::invalid_parameter(format!(
                    "BatchSize must be between 1 and {MAX_FIFO_BATCH} for FIFO queues."
                )));
            }
            if mapping.window_s.is_some_and(|w| w > 0) {
                return Err(LambdaError::invalid_parameter(
                    "Batching window is not supported for FIFO queues.",
                ));
            }
        } else {
            if mapping.window_s.is_none() {
                mapping.window_s = Some(0);
            }
            if i64::from(mapping.batch_size) > MAX_BATCH_WITHOUT_WINDOW
                && mapping.window_s == Some(0)
            {
                return Err(LambdaError::invalid_parameter(
                    "Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10",
                ));
            }
        }
        Ok(())
    }
}
