//! SNS's errors: a code string as botocore knows it, the HTTP status, and
//! AWS's wording (most of it "Invalid parameter: …").

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnsError {
    /// The wire code (`InvalidParameter`, `NotFound`, …).
    pub code: &'static str,
    pub status: u16,
    pub message: String,
}

impl SnsError {
    pub fn new(code: &'static str, status: u16, message: impl Into<String>) -> SnsError {
        SnsError {
            code,
            status,
            message: message.into(),
        }
    }

    /// `InvalidParameter` with "Invalid parameter: <what>".
    pub fn invalid_parameter(what: impl fmt::Display) -> SnsError {
        SnsError::new(
            "InvalidParameter",
            400,
            format!("Invalid parameter: {what}"),
        )
    }

    /// `InvalidParameter` with exactly this text.
    pub fn invalid_parameter_text(text: impl Into<String>) -> SnsError {
        SnsError::new("InvalidParameter", 400, text)
    }

    /// A required member left out.
    pub fn missing(member: &str) -> SnsError {
        SnsError::invalid_parameter(format!("{member} Reason: no value for required parameter"))
    }

    pub fn parameter_value_invalid(text: impl Into<String>) -> SnsError {
        SnsError::new("ParameterValueInvalid", 400, text)
    }

    pub fn validation_error(text: impl Into<String>) -> SnsError {
        SnsError::new("ValidationError", 400, text)
    }

    pub fn topic_not_found() -> SnsError {
        SnsError::new("NotFound", 404, "Topic does not exist")
    }

    pub fn subscription_not_found() -> SnsError {
        SnsError::new("NotFound", 404, "Subscription does not exist")
    }

    pub fn resource_not_found() -> SnsError {
        SnsError::new("ResourceNotFound", 404, "Resource does not exist")
    }

    pub fn internal(text: impl Into<String>) -> SnsError {
        SnsError::new("InternalError", 500, text)
    }

    /// The store's refusal or failure, in SNS's words: a store that cannot
    /// be reached is `ServiceUnavailable` (503), anything else internal.
    pub fn from_store(e: crate::error::SqsError) -> SnsError {
        match e.code {
            crate::error::ErrorCode::ServiceUnavailable => {
                SnsError::new("ServiceUnavailable", 503, e.message)
            }
            _ => SnsError::internal(e.message),
        }
    }

    /// `Sender` for the caller's faults, `Receiver` for the server's.
    pub fn fault(&self) -> &'static str {
        if self.status >= 500 {
            "Receiver"
        } else {
            "Sender"
        }
    }
}

impl fmt::Display for SnsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for SnsError {}
