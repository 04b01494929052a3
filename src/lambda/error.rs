//! Lambda's errors on its REST-JSON wire: the status, the
//! `X-Amzn-ErrorType` header the SDKs read the code from, and a body with
//! `Type` and the message (botocore's model spells the member `Message`
//! for some errors and `message` for others; both are written).

use serde_json::json;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LambdaError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl LambdaError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> LambdaError {
        LambdaError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn invalid_parameter(message: impl Into<String>) -> LambdaError {
        LambdaError::new(400, "InvalidParameterValueException", message)
    }

    pub fn validation(message: impl Into<String>) -> LambdaError {
        LambdaError::new(400, "ValidationException", message)
    }

    pub fn not_found(message: impl Into<String>) -> LambdaError {
        LambdaError::new(404, "ResourceNotFoundException", message)
    }

    /// A mapping's UUID that names none.
    pub fn no_such_mapping() -> LambdaError {
        LambdaError::not_found("The resource you requested does not exist.")
    }

    pub fn conflict(message: impl Into<String>) -> LambdaError {
        LambdaError::new(409, "ResourceConflictException", message)
    }

    pub fn body(&self) -> String {
        let kind = if self.status >= 500 {
            "Service"
        } else {
            "User"
        };
        json!({ "Type": kind, "Message": self.message, "message": self.message }).to_string()
    }
}

impl std::fmt::Display for LambdaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}
