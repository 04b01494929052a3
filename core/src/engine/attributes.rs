//! Queue attributes: defaults, validation, rendering.
//!
//! Settings are kept parsed (numbers as numbers, policies as JSON) so the
//! hot path never re-parses strings; `render` gives back AWS's string form,
//! which is also what CreateQueue's idempotency check compares.

use serde_json::Value;

use crate::error::{ErrorCode, SqsError};

/// Every name GetQueueAttributes knows, in the enum's order.
pub const ALL_NAMES: &[&str] = &[
    "Policy",
    "VisibilityTimeout",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
    "QueueArn",
    "ApproximateNumberOfMessagesDelayed",
    "DelaySeconds",
    "ReceiveMessageWaitTimeSeconds",
    "RedrivePolicy",
    "FifoQueue",
    "ContentBasedDeduplication",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "DeduplicationScope",
    "FifoThroughputLimit",
    "RedriveAllowPolicy",
    "SqsManagedSseEnabled",
];

/// Attributes that exist only to be read.
const READ_ONLY: &[&str] = &[
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
    "QueueArn",
];

/// A parsed RedrivePolicy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedrivePolicy {
    pub dead_letter_target_arn: String,
    pub max_receive_count: u32,
}

/// A parsed RedriveAllowPolicy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedriveAllow {
    AllowAll,
    DenyAll,
    ByQueue(Vec<String>),
}

/// The settable configuration of a queue.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueSettings {
    pub fifo: bool,
    pub delay_seconds: u32,
    pub maximum_message_size: u32,
    pub message_retention_period: u32,
    pub receive_message_wait_time_seconds: u32,
    pub visibility_timeout: u32,
    pub policy: Option<Value>,
    pub redrive_policy: Option<RedrivePolicy>,
    pub redrive_allow_policy: Option<(RedriveAllow, Value)>,
    pub kms_master_key_id: Option<String>,
    pub kms_data_key_reuse_period_seconds: u32,
    pub sqs_managed_sse_enabled: bool,
    pub content_based_deduplication: bool,
    /// `true` for `messageGroup`, `false` for `queue`.
    pub dedup_per_group: bool,
    /// `true` for `perMessageGroupId`, `false` for `perQueue`.
    pub throughput_per_group: bool,
}

impl QueueSettings {
    pub fn defaults(fifo: bool) -> QueueSettings {
        QueueSettings {
            fifo,
            delay_seconds: 0,
            maximum_message_size: 1_048_576,
            message_retention_period: 345_600,
            receive_message_wait_time_seconds: 0,
            visibility_timeout: 30,
            policy: None,
            redrive_policy: None,
            redrive_allow_policy: None,
            kms_master_key_id: None,
            kms_data_key_reuse_period_seconds: 300,
            sqs_managed_sse_enabled: true,
            content_based_deduplication: false,
            dedup_per_group: false,
            throughput_per_group: false,
        }
    }

    /// Applies attributes from CreateQueue or SetQueueAttributes. Either all
    /// apply or none does (the caller keeps the old value on error).
    pub fn apply<'a>(
        &mut self,
        attributes: impl IntoIterator<Item = (&'a String, &'a String)>,
        creating: bool,
    ) -> Result<(), SqsError> {
        let mut next = self.clone();
        for (name, value) in attributes {
            next.apply_one(name, value, creating)?;
        }
        if next.fifo && next.throughput_per_group && !next.dedup_per_group {
            return Err(invalid_value(
                "FifoThroughputLimit",
                Some("The perMessageGroupId value is allowed only when the value for DeduplicationScope is messageGroup."),
            ));
        }
        *self = next;
        Ok(())
    }

    fn apply_one(&mut self, name: &str, value: &str, creating: bool) -> Result<(), SqsError> {
        match name {
            "DelaySeconds" => self.delay_seconds = int(name, value, 0, 900)?,
            "MaximumMessageSize" => self.maximum_message_size = int(name, value, 1024, 1_048_576)?,
            "MessageRetentionPeriod" => {
                self.message_retention_period = int(name, value, 60, 1_209_600)?
            }
            "ReceiveMessageWaitTimeSeconds" => {
                self.receive_message_wait_time_seconds = int(name, value, 0, 20)?
            }
            "VisibilityTimeout" => self.visibility_timeout = int(name, value, 0, 43_200)?,
            "KmsDataKeyReusePeriodSeconds" => {
                self.kms_data_key_reuse_period_seconds = int(name, value, 60, 86_400)?
            }
            "Policy" => {
                self.policy = if value.is_empty() {
                    None
                } else {
                    Some(json(name, value)?)
                }
            }
            "RedrivePolicy" => {
                self.redrive_policy = if value.is_empty() {
                    None
                } else {
                    Some(parse_redrive_policy(value)?)
                }
            }
            "RedriveAllowPolicy" => {
                self.redrive_allow_policy = if value.is_empty() {
                    None
                } else {
                    Some(parse_redrive_allow_policy(value)?)
                }
            }
            "KmsMasterKeyId" => {
                if value.is_empty() {
                    self.kms_master_key_id = None;
                } else {
                    self.kms_master_key_id = Some(value.to_string());
                    self.sqs_managed_sse_enabled = false;
                }
            }
            "SqsManagedSseEnabled" => {
                self.sqs_managed_sse_enabled = boolean(name, value)?;
                if self.sqs_managed_sse_enabled {
                    self.kms_master_key_id = None;
                }
            }
            "FifoQueue" => {
                if !self.fifo {
                    return Err(unknown(name));
                }
                if !boolean(name, value)? {
                    return Err(invalid_value(
                        name,
                        Some("Modifying queue type is not supported."),
                    ));
                }
            }
            "ContentBasedDeduplication" => {
                if !self.fifo {
                    return Err(unknown(name));
                }
                self.content_based_deduplication = boolean(name, value)?;
            }
            "DeduplicationScope" => {
                self.require_fifo(name)?;
                self.dedup_per_group = match value {
                    "queue" => false,
                    "messageGroup" => true,
                    _ => return Err(invalid_value(name, None)),
                };
            }
            "FifoThroughputLimit" => {
                self.require_fifo(name)?;
                self.throughput_per_group = match value {
                    "perQueue" => false,
                    "perMessageGroupId" => true,
                    _ => return Err(invalid_value(name, None)),
                };
            }
            _ if READ_ONLY.contains(&name) || !ALL_NAMES.contains(&name) => {
                return Err(unknown(name))
            }
            _ => {
                // Every settable name is matched above.
                let _ = creating;
                return Err(unknown(name));
            }
        }
        Ok(())
    }

    fn require_fifo(&self, name: &str) -> Result<(), SqsError> {
        if self.fifo {
            Ok(())
        } else {
            Err(SqsError::new(
                ErrorCode::InvalidAttributeName,
                format!("You can specify the {name} only when FifoQueue is set to true."),
            ))
        }
    }

    /// The stored value of a settable attribute in AWS's string form, or
    /// `None` when it is unset (and so not listed).
    pub fn render(&self, name: &str) -> Option<String> {
        let b = |v: bool| if v { "true" } else { "false" }.to_string();
        Some(match name {
            "DelaySeconds" => self.delay_seconds.to_string(),
            "MaximumMessageSize" => self.maximum_message_size.to_string(),
            "MessageRetentionPeriod" => self.message_retention_period.to_string(),
            "ReceiveMessageWaitTimeSeconds" => self.receive_message_wait_time_seconds.to_string(),
            "VisibilityTimeout" => self.visibility_timeout.to_string(),
            "Policy" => self.policy.as_ref()?.to_string(),
            "RedrivePolicy" => {
                let p = self.redrive_policy.as_ref()?;
                serde_json::json!({
                    "deadLetterTargetArn": p.dead_letter_target_arn,
                    "maxReceiveCount": p.max_receive_count,
                })
                .to_string()
            }
            "RedriveAllowPolicy" => self.redrive_allow_policy.as_ref()?.1.to_string(),
            "KmsMasterKeyId" => self.kms_master_key_id.clone()?,
            "KmsDataKeyReusePeriodSeconds" => {
                self.kms_master_key_id.as_ref()?;
                self.kms_data_key_reuse_period_seconds.to_string()
            }
            "SqsManagedSseEnabled" => b(self.sqs_managed_sse_enabled),
            "FifoQueue" if self.fifo => b(true),
            "ContentBasedDeduplication" if self.fifo => b(self.content_based_deduplication),
            "DeduplicationScope" if self.fifo => if self.dedup_per_group {
                "messageGroup"
            } else {
                "queue"
            }
            .to_string(),
            "FifoThroughputLimit" if self.fifo => if self.throughput_per_group {
                "perMessageGroupId"
            } else {
                "perQueue"
            }
            .to_string(),
            _ => return None,
        })
    }
}

/// Checks attribute names for GetQueueAttributes.
pub fn check_names(names: &[String]) -> Result<(), SqsError> {
    match names
        .iter()
        .find(|n| *n != "All" && !ALL_NAMES.contains(&n.as_str()))
    {
        Some(bad) => Err(unknown(bad)),
        None => Ok(()),
    }
}

pub fn unknown(name: &str) -> SqsError {
    SqsError::new(
        ErrorCode::InvalidAttributeName,
        format!("Unknown Attribute {name}."),
    )
}

fn invalid_value(name: &str, reason: Option<&str>) -> SqsError {
    let message = match reason {
        Some(r) => format!("Invalid value for the parameter {name}. Reason: {r}"),
        None => format!("Invalid value for the parameter {name}."),
    };
    SqsError::new(ErrorCode::InvalidAttributeValue, message)
}

fn int(name: &str, value: &str, min: u32, max: u32) -> Result<u32, SqsError> {
    match value.trim().parse::<i64>() {
        Ok(v) if v >= min as i64 && v <= max as i64 => Ok(v as u32),
        _ => Err(invalid_value(name, None)),
    }
}

fn boolean(name: &str, value: &str) -> Result<bool, SqsError> {
    match value.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(invalid_value(name, None)),
    }
}

fn json(name: &str, value: &str) -> Result<Value, SqsError> {
    serde_json::from_str::<Value>(value)
        .ok()
        .filter(Value::is_object)
        .ok_or_else(|| invalid_value(name, None))
}

fn redrive_error(value: &str, reason: &str) -> SqsError {
    SqsError::new(
        ErrorCode::InvalidParameterValue,
        format!("Value {value} for parameter RedrivePolicy is invalid. Reason: {reason}"),
    )
}

/// Parses a RedrivePolicy; numbers may arrive as JSON numbers or strings.
pub fn parse_redrive_policy(value: &str) -> Result<RedrivePolicy, SqsError> {
    let doc: Value = serde_json::from_str(value)
        .map_err(|_| redrive_error(value, "Redrive policy is not a valid JSON map."))?;
    let obj = doc
        .as_object()
        .ok_or_else(|| redrive_error(value, "Redrive policy is not a valid JSON map."))?;
    for key in obj.keys() {
        if key != "deadLetterTargetArn" && key != "maxReceiveCount" {
            return Err(redrive_error(
                value,
                &format!("Only following attributes are supported: [deadLetterTargetArn, maxReceiveCount]. Found: {key}"),
            ));
        }
    }
    let arn = obj
        .get("deadLetterTargetArn")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            redrive_error(
                value,
                "Redrive policy does not contain mandatory attribute: deadLetterTargetArn.",
            )
        })?;
    let count = obj.get("maxReceiveCount").ok_or_else(|| {
        redrive_error(
            value,
            "Redrive policy does not contain mandatory attribute: maxReceiveCount.",
        )
    })?;
    let count_text = match count {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let max_receive_count = match count_text.trim().parse::<i64>() {
        Ok(n) if (1..=1000).contains(&n) => n as u32,
        _ => {
            return Err(redrive_error(
                value,
                &format!("Invalid value for maxReceiveCount: {count_text}, valid values are from 1 to 1000 both inclusive."),
            ))
        }
    };
    if crate::engine::QueueKey::from_arn(arn).is_none() {
        return Err(redrive_error(
            value,
            "Invalid value for deadLetterTargetArn.",
        ));
    }
    Ok(RedrivePolicy {
        dead_letter_target_arn: arn.to_string(),
        max_receive_count,
    })
}

pub(super) fn parse_redrive_allow_policy(value: &str) -> Result<(RedriveAllow, Value), SqsError> {
    let err = |reason: &str| {
        SqsError::new(
            ErrorCode::InvalidAttributeValue,
            format!("Invalid value for the parameter RedriveAllowPolicy. Reason: {reason}"),
        )
    };
    let doc: Value = serde_json::from_str(value)
        .map_err(|_| err("Redrive allow policy is not a valid JSON map."))?;
    let obj = doc
        .as_object()
        .ok_or_else(|| err("Redrive allow policy is not a valid JSON map."))?;
    let permission = obj
        .get("redrivePermission")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            err("Redrive allow policy does not contain mandatory attribute: redrivePermission.")
        })?;
    let sources = obj.get("sourceQueueArns");
    let allow = match permission {
        "allowAll" | "denyAll" => {
            if sources.is_some() {
                return Err(err(
                    "Only when redrivePermission is byQueue can sourceQueueArns be specified.",
                ));
            }
            if permission == "allowAll" {
                RedriveAllow::AllowAll
            } else {
                RedriveAllow::DenyAll
            }
        }
        "byQueue" => {
            let arns: Vec<String> = sources
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            if arns.is_empty() || arns.len() > 10 {
                return Err(err(
                    "When redrivePermission is byQueue, sourceQueueArns must list 1 to 10 queue ARNs.",
                ));
            }
            RedriveAllow::ByQueue(arns)
        }
        other => return Err(err(&format!("Invalid redrivePermission: {other}."))),
    };
    Ok((allow, doc))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(s: &mut QueueSettings, pairs: &[(&str, &str)]) -> Result<(), SqsError> {
        let owned: Vec<(String, String)> = pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        s.apply(owned.iter().map(|(a, b)| (a, b)), false)
    }

    #[test]
    fn ranges_and_all_or_nothing() {
        let mut s = QueueSettings::defaults(false);
        assert!(apply(
            &mut s,
            &[("VisibilityTimeout", "60"), ("DelaySeconds", "901")]
        )
        .is_err());
        assert_eq!(s.visibility_timeout, 30, "nothing applied on error");
        apply(&mut s, &[("VisibilityTimeout", "60")]).unwrap();
        assert_eq!(s.render("VisibilityTimeout").as_deref(), Some("60"));
        let e = apply(&mut s, &[("Foobar", "1")]).unwrap_err();
        assert_eq!(e.message, "Unknown Attribute Foobar.");
        assert_eq!(
            apply(&mut s, &[("QueueArn", "x")]).unwrap_err().code,
            ErrorCode::InvalidAttributeName
        );
    }

    #[test]
    fn fifo_only_attributes() {
        let mut s = QueueSettings::defaults(false);
        assert_eq!(
            apply(&mut s, &[("FifoQueue", "false")])
                .unwrap_err()
                .message,
            "Unknown Attribute FifoQueue."
        );
        assert_eq!(
            apply(&mut s, &[("DeduplicationScope", "queue")])
                .unwrap_err()
                .message,
            "You can specify the DeduplicationScope only when FifoQueue is set to true."
        );
        let mut f = QueueSettings::defaults(true);
        assert_eq!(
            apply(&mut f, &[("FifoQueue", "false")]).unwrap_err().message,
            "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported."
        );
        assert!(apply(&mut f, &[("FifoThroughputLimit", "perMessageGroupId")]).is_err());
        apply(
            &mut f,
            &[
                ("FifoThroughputLimit", "perMessageGroupId"),
                ("DeduplicationScope", "messageGroup"),
            ],
        )
        .unwrap();
        assert_eq!(
            f.render("DeduplicationScope").as_deref(),
            Some("messageGroup")
        );
    }

    #[test]
    fn redrive_policy_accepts_strings_and_numbers() {
        let arn = "arn:aws:sqs:us-east-1:000000000000:dlq";
        let p = parse_redrive_policy(&format!(
            r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":"3"}}"#
        ))
        .unwrap();
        assert_eq!(p.max_receive_count, 3);
        let p = parse_redrive_policy(&format!(
            r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":5}}"#
        ))
        .unwrap();
        assert_eq!(p.max_receive_count, 5);
        assert!(parse_redrive_policy(&format!(
            r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":0}}"#
        ))
        .is_err());
        assert!(parse_redrive_policy(r#"{"maxReceiveCount":5}"#).is_err());
        assert!(parse_redrive_policy("not json").is_err());
    }
}
