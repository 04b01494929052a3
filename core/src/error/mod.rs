//! SQS errors, as the engine reports them and both protocols render them.
//!
//! Every error has three names on the wire: the JSON `__type` shape, the
//! legacy query code (XML `<Code>` and the JSON `x-amzn-query-error`
//! header, which the Rust SDK needs to map typed errors), and an HTTP
//! status. The table lives here, once.

use std::fmt;

pub mod auth;

/// The kinds of error Retsu returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    QueueDoesNotExist,
    QueueNameExists,
    QueueDeletedRecently,
    PurgeQueueInProgress,
    BatchEntryIdsNotDistinct,
    BatchRequestTooLong,
    EmptyBatchRequest,
    InvalidBatchEntryId,
    TooManyEntriesInBatchRequest,
    MessageNotInflight,
    UnsupportedOperation,
    ReceiptHandleIsInvalid,
    OverLimit,
    /// The request rate was exceeded (only as a seeded fault: Retsu has
    /// no quotas).
    RequestThrottled,
    ResourceNotFound,
    InvalidAttributeName,
    InvalidAttributeValue,
    InvalidMessageContents,
    InvalidParameterValue,
    MissingParameter,
    InvalidAction,
    /// A request body that did not arrive in time.
    RequestTimeout,
    /// Query protocol: a parameter name that cannot name anything.
    InvalidQueryParameter,
    /// Malformed JSON, or a member of the wrong type.
    Serialization,
    /// JSON request naming no known `AmazonSQS.*` target.
    UnknownOperation,
    /// `--auth`: no signature at all.
    MissingAuthenticationToken,
    /// `--auth`: a signature missing one of its parts.
    IncompleteSignature,
    /// `--auth`: an access key no configured key has.
    InvalidClientTokenId,
    /// `--auth`: a wrong signature, scope, date or expired request.
    SignatureDoesNotMatch,
    /// `--auth`: another account's queue that its policy does not open.
    AccessDenied,
    InternalError,
    /// The store cannot be reached for now (PostgreSQL down or cut off):
    /// AWS's common error for a temporary failure, which SDKs retry.
    ServiceUnavailable,
}

impl ErrorCode {
    /// The JSON `__type`, namespaced as AWS sends it.
    pub fn json_type(self) -> &'static str {
        use ErrorCode::*;
        match self {
            QueueDoesNotExist => "com.amazonaws.sqs#QueueDoesNotExist",
            QueueNameExists => "com.amazonaws.sqs#QueueNameExists",
            QueueDeletedRecently => "com.amazonaws.sqs#QueueDeletedRecently",
            PurgeQueueInProgress => "com.amazonaws.sqs#PurgeQueueInProgress",
            BatchEntryIdsNotDistinct => "com.amazonaws.sqs#BatchEntryIdsNotDistinct",
            BatchRequestTooLong => "com.amazonaws.sqs#BatchRequestTooLong",
            EmptyBatchRequest => "com.amazonaws.sqs#EmptyBatchRequest",
            InvalidBatchEntryId => "com.amazonaws.sqs#InvalidBatchEntryId",
            TooManyEntriesInBatchRequest => "com.amazonaws.sqs#TooManyEntriesInBatchRequest",
            MessageNotInflight => "com.amazonaws.sqs#MessageNotInflight",
            UnsupportedOperation => "com.amazonaws.sqs#UnsupportedOperation",
            ReceiptHandleIsInvalid => "com.amazonaws.sqs#ReceiptHandleIsInvalid",
            OverLimit => "com.amazonaws.sqs#OverLimit",
            RequestThrottled => "com.amazonaws.sqs#RequestThrottled",
            ResourceNotFound => "com.amazonaws.sqs#ResourceNotFoundException",
            InvalidAttributeName => "com.amazonaws.sqs#InvalidAttributeName",
            InvalidAttributeValue => "com.amazonaws.sqs#InvalidAttributeValue",
            InvalidMessageContents => "com.amazonaws.sqs#InvalidMessageContents",
            InvalidParameterValue => "com.amazon.coral.service#InvalidParameterValueException",
            MissingParameter => "com.amazon.coral.service#MissingRequiredParameterException",
            InvalidAction => "com.amazon.coral.service#InvalidActionException",
            RequestTimeout => "com.amazon.coral.service#RequestTimeoutException",
            InvalidQueryParameter => "com.amazon.coral.service#InvalidQueryParameterException",
            Serialization => "com.amazon.coral.service#SerializationException",
            UnknownOperation => "com.amazon.coral.service#UnknownOperationException",
            MissingAuthenticationToken => {
                "com.amazon.coral.service#MissingAuthenticationTokenException"
            }
            IncompleteSignature => "com.amazon.coral.service#IncompleteSignatureException",
            InvalidClientTokenId => "com.amazon.coral.service#UnrecognizedClientException",
            SignatureDoesNotMatch => "com.amazon.coral.service#InvalidSignatureException",
            AccessDenied => "com.amazon.coral.service#AccessDeniedException",
            InternalError => "com.amazon.coral.service#InternalFailure",
            ServiceUnavailable => "com.amazon.coral.service#ServiceUnavailableException",
        }
    }

    /// The legacy query error code.
    pub fn query_code(self) -> &'static str {
        use ErrorCode::*;
        match self {
            QueueDoesNotExist => "AWS.SimpleQueueService.NonExistentQueue",
            QueueNameExists => "QueueAlreadyExists",
            QueueDeletedRecently => "AWS.SimpleQueueService.QueueDeletedRecently",
            PurgeQueueInProgress => "AWS.SimpleQueueService.PurgeQueueInProgress",
            BatchEntryIdsNotDistinct => "AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
            BatchRequestTooLong => "AWS.SimpleQueueService.BatchRequestTooLong",
            EmptyBatchRequest => "AWS.SimpleQueueService.EmptyBatchRequest",
            InvalidBatchEntryId => "AWS.SimpleQueueService.InvalidBatchEntryId",
            TooManyEntriesInBatchRequest => "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
            MessageNotInflight => "AWS.SimpleQueueService.MessageNotInflight",
            UnsupportedOperation => "AWS.SimpleQueueService.UnsupportedOperation",
            ReceiptHandleIsInvalid => "ReceiptHandleIsInvalid",
            OverLimit => "OverLimit",
            RequestThrottled => "RequestThrottled",
            ResourceNotFound => "ResourceNotFoundException",
            InvalidAttributeName => "InvalidAttributeName",
            InvalidAttributeValue => "InvalidAttributeValue",
            InvalidMessageContents => "InvalidMessageContents",
            InvalidParameterValue => "InvalidParameterValue",
            MissingParameter => "MissingParameter",
            InvalidAction => "InvalidAction",
            RequestTimeout => "RequestTimeout",
            InvalidQueryParameter => "InvalidQueryParameter",
            Serialization => "SerializationException",
            UnknownOperation => "UnknownOperationException",
            MissingAuthenticationToken => "MissingAuthenticationToken",
            IncompleteSignature => "IncompleteSignature",
            InvalidClientTokenId => "InvalidClientTokenId",
            SignatureDoesNotMatch => "SignatureDoesNotMatch",
            AccessDenied => "AccessDenied",
            InternalError => "InternalError",
            ServiceUnavailable => "ServiceUnavailable",
        }
    }

    /// The HTTP status AWS answers with.
    pub fn status(self) -> u16 {
        use ErrorCode::*;
        match self {
            PurgeQueueInProgress | OverLimit | RequestThrottled => 403,
            MissingAuthenticationToken
            | InvalidClientTokenId
            | SignatureDoesNotMatch
            | AccessDenied => 403,
            ReceiptHandleIsInvalid | ResourceNotFound => 404,
            RequestTimeout => 408,
            InternalError => 500,
            ServiceUnavailable => 503,
            _ => 400,
        }
    }

    /// `Sender` for the caller's faults, `Receiver` for ours.
    pub fn fault(self) -> &'static str {
        if self.status() >= 500 {
            "Receiver"
        } else {
            "Sender"
        }
    }
}

/// An error with AWS's code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqsError {
    pub code: ErrorCode,
    pub message: String,
}

impl SqsError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> SqsError {
        SqsError {
            code,
            message: message.into(),
        }
    }

    pub fn queue_does_not_exist() -> SqsError {
        SqsError::new(
            ErrorCode::QueueDoesNotExist,
            "The specified queue does not exist.",
        )
    }

    pub fn missing(parameter: &str) -> SqsError {
        SqsError::new(
            ErrorCode::MissingParameter,
            format!("The request must contain the parameter {parameter}."),
        )
    }

    pub fn invalid_value(message: impl Into<String>) -> SqsError {
        SqsError::new(ErrorCode::InvalidParameterValue, message)
    }

    /// AWS's usual shape: "Value X for parameter P is invalid. Reason: R".
    pub fn invalid_parameter(parameter: &str, value: impl fmt::Display, reason: &str) -> SqsError {
        SqsError::invalid_value(format!(
            "Value {value} for parameter {parameter} is invalid. Reason: {reason}"
        ))
    }

    pub fn serialization(detail: impl Into<String>) -> SqsError {
        SqsError::new(ErrorCode::Serialization, detail)
    }

    pub fn internal(detail: impl Into<String>) -> SqsError {
        SqsError::new(ErrorCode::InternalError, detail)
    }

    pub fn unavailable(detail: impl Into<String>) -> SqsError {
        SqsError::new(ErrorCode::ServiceUnavailable, detail)
    }
}

impl fmt::Display for SqsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.query_code(), self.message)
    }
}

impl std::error::Error for SqsError {}
