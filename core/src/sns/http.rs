//! What SNS hands the server to POST to an HTTP or HTTPS subscriber. The
//! core does no I/O: it builds each POST (headers, signed body, retry
//! policy) and gives it to the [`HttpSender`] the server installs, which
//! makes the attempts in the background, so a Publish never waits for an
//! endpoint.

use super::envelope::EnvelopeKind;
use crate::engine::TopicDelivery;

/// How often and how far apart a failing POST is tried again (the
/// effective delivery policy's `healthyRetryPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub num_retries: u32,
    pub min_delay_s: u32,
    pub max_delay_s: u32,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            num_retries: 3,
            min_delay_s: 20,
            max_delay_s: 20,
        }
    }
}

impl RetryPolicy {
    /// The policy in a DeliveryPolicy JSON: a subscription's
    /// `healthyRetryPolicy`, or a topic's `http.defaultHealthyRetryPolicy`.
    pub fn from_json(policy: &serde_json::Value) -> Option<RetryPolicy> {
        let p = policy
            .get("healthyRetryPolicy")
            .or_else(|| policy.get("http")?.get("defaultHealthyRetryPolicy"))?;
        let field = |name: &str, default: u32| {
            p.get(name)
                .and_then(|v| v.as_u64())
                .map_or(default, |v| v as u32)
        };
        Some(RetryPolicy {
            num_retries: field("numRetries", 3),
            min_delay_s: field("minDelayTarget", 20),
            max_delay_s: field("maxDelayTarget", 20),
        })
    }

    /// The wait before retry `n` (1-based): linear from the least to the
    /// most delay over the retries.
    pub fn delay_s(&self, n: u32) -> u32 {
        if self.num_retries <= 1 || self.max_delay_s <= self.min_delay_s {
            return self.min_delay_s;
        }
        let step = (self.max_delay_s - self.min_delay_s) as f64 / (self.num_retries - 1) as f64;
        self.min_delay_s + (step * (n.saturating_sub(1)) as f64).round() as u32
    }
}

/// One POST to make.
#[derive(Debug, Clone)]
pub struct HttpDelivery {
    pub url: String,
    pub kind: EnvelopeKind,
    /// The `x-amz-sns-*` headers, `Content-Type` and `User-Agent`.
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
    pub subscription_arn: String,
    pub topic_arn: String,
    pub message_id: String,
    pub retry: RetryPolicy,
    /// Where the message goes when every attempt failed: the
    /// subscription's RedrivePolicy queue and what to send it.
    pub dead_letter: Option<(String, TopicDelivery)>,
}

/// Makes the POSTs (the server's).
pub trait HttpSender: Send + Sync {
    fn send(&self, delivery: HttpDelivery);
}
