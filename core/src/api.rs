//! The typed SQS API: one request and one response type per action.
//!
//! Both wire protocols decode into these types and encode from them, so the
//! engine sees exactly one shape per action whatever the client spoke. Field
//! names follow the botocore model (`PascalCase`, with the model's two
//! lower-case exceptions), which lets the JSON protocol use serde directly;
//! the query protocol first rewrites its flattened parameters into the same
//! JSON shape (see `protocol::query`).
//!
//! Required members are `Option`s on purpose: a missing one must become
//! AWS's `MissingParameter` error, which serde cannot produce.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::SqsError;

/// What the engine knows about the caller, taken from the HTTP request.
#[derive(Debug, Clone)]
pub struct RequestContext {
    /// Region from the SigV4 credential scope, else the server default.
    pub region: String,
    /// Account of the caller (the server's default account).
    pub account_id: String,
    /// `scheme://host[:port]` that returned queue URLs start with.
    pub base_url: String,
    /// The `X-Amzn-Trace-Id` header, stored as `AWSTraceHeader` on send.
    pub trace_header: Option<String>,
    /// Whether the caller speaks the query protocol (a few messages differ).
    pub query_protocol: bool,
}

impl RequestContext {
    /// A caller that is not an HTTP request (configured queues, the admin
    /// API, tests): this region, account and base URL; no trace header;
    /// the JSON protocol's wording.
    pub fn new(
        region: impl Into<String>,
        account_id: impl Into<String>,
        base_url: impl Into<String>,
    ) -> RequestContext {
        RequestContext {
            region: region.into(),
            account_id: account_id.into(),
            base_url: base_url.into(),
            trace_header: None,
            query_protocol: false,
        }
    }
}

macro_rules! actions {
    ($($name:ident => $req:ident, $resp:ident;)*) => {
        /// The 23 SQS actions.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Action { $($name,)* }

        impl Action {
            pub const ALL: &'static [Action] = &[$(Action::$name,)*];

            pub fn name(self) -> &'static str {
                match self { $(Action::$name => stringify!($name),)* }
            }

            pub fn from_name(name: &str) -> Option<Action> {
                match name { $(stringify!($name) => Some(Action::$name),)* _ => None }
            }

            /// Decodes a JSON document (the query parameters rewritten as
            /// JSON) into this action's request.
            pub fn decode(self, value: serde_json::Value) -> Result<Request, SqsError> {
                Ok(match self {
                    $(Action::$name => Request::$name(crate::api::de::from_value(value)?),)*
                })
            }

            /// Decodes JSON text that the query protocol's rewrite wrote
            /// (not the caller's), with the errors of [`Self::decode`].
            pub fn decode_text(self, text: &str) -> Result<Request, SqsError> {
                Ok(match self {
                    $(Action::$name => Request::$name(crate::api::de::from_text(text)?),)*
                })
            }

            /// Decodes a JSON body straight into this action's request,
            /// without an intermediate tree (the hot path of every SDK call).
            pub fn decode_slice(self, body: &[u8]) -> Result<Request, SqsError> {
                Ok(match self {
                    $(Action::$name => Request::$name(crate::api::de::from_slice(body)?),)*
                })
            }
        }

        /// A decoded request.
        #[derive(Debug, Clone)]
        pub enum Request { $($name($req),)* }

        impl Request {
            pub fn action(&self) -> Action {
                match self { $(Request::$name(_) => Action::$name,)* }
            }
        }

        /// A successful result.
        #[derive(Debug, Clone)]
        pub enum Response { $($name($resp),)* }

        impl Response {
            pub fn action(&self) -> Action {
                match self { $(Response::$name(_) => Action::$name,)* }
            }

            /// The JSON rendering of the result as a tree (the input of the
            /// XML encoder).
            pub fn to_json(&self) -> serde_json::Value {
                match self {
                    $(Response::$name(r) => serde_json::to_value(r).expect("responses always serialize"),)*
                }
            }

            /// The JSON body of the result, written directly into a buffer
            /// sized for a typical batch answer (growing one from serde's
            /// 128 bytes took four reallocations and copies).
            pub fn to_json_string(&self) -> String {
                let mut out = Vec::with_capacity(2048);
                match self {
                    $(Response::$name(r) => serde_json::to_writer(&mut out, r).expect("responses always serialize"),)*
                }
                String::from_utf8(out).expect("serde_json writes UTF-8")
            }
        }
    };
}

/// The one list of SQS actions, each with its request and response type:
/// calls `$m!` with it. The api's enums are made from it here, and the
/// engine's dispatch and each action's facts from it in `engine::actions`.
macro_rules! sqs_actions {
    ($m:ident) => {
        $m! {
            AddPermission => AddPermissionRequest, Empty;
            CancelMessageMoveTask => CancelMessageMoveTaskRequest, CancelMessageMoveTaskResult;
            ChangeMessageVisibility => ChangeMessageVisibilityRequest, Empty;
            ChangeMessageVisibilityBatch => ChangeMessageVisibilityBatchRequest, BatchResult;
            CreateQueue => CreateQueueRequest, QueueUrlResult;
            DeleteMessage => DeleteMessageRequest, Empty;
            DeleteMessageBatch => DeleteMessageBatchRequest, BatchResult;
            DeleteQueue => DeleteQueueRequest, Empty;
            GetQueueAttributes => GetQueueAttributesRequest, GetQueueAttributesResult;
            GetQueueUrl => GetQueueUrlRequest, QueueUrlResult;
            ListDeadLetterSourceQueues => ListDeadLetterSourceQueuesRequest, ListDeadLetterSourceQueuesResult;
            ListMessageMoveTasks => ListMessageMoveTasksRequest, ListMessageMoveTasksResult;
            ListQueueTags => ListQueueTagsRequest, ListQueueTagsResult;
            ListQueues => ListQueuesRequest, ListQueuesResult;
            PurgeQueue => PurgeQueueRequest, Empty;
            ReceiveMessage => ReceiveMessageRequest, ReceiveMessageResult;
            RemovePermission => RemovePermissionRequest, Empty;
            SendMessage => SendMessageRequest, SendMessageResult;
            SendMessageBatch => SendMessageBatchRequest, SendMessageBatchResult;
            SetQueueAttributes => SetQueueAttributesRequest, Empty;
            StartMessageMoveTask => StartMessageMoveTaskRequest, StartMessageMoveTaskResult;
            TagQueue => TagQueueRequest, Empty;
            UntagQueue => UntagQueueRequest, Empty;
        }
    };
}
pub(crate) use sqs_actions;

sqs_actions!(actions);

/// Result of actions that return nothing.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Empty {}

// ---------------------------------------------------------------- queues

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CreateQueueRequest {
    pub queue_name: Option<String>,
    pub attributes: BTreeMap<String, String>,
    #[serde(rename = "tags")]
    pub tags: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct QueueUrlResult {
    pub queue_url: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct GetQueueUrlRequest {
    pub queue_name: Option<String>,
    #[serde(rename = "QueueOwnerAWSAccountId")]
    pub queue_owner_aws_account_id: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ListQueuesRequest {
    pub queue_name_prefix: Option<String>,
    pub next_token: Option<String>,
    #[serde(deserialize_with = "de::opt_int")]
    pub max_results: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListQueuesResult {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queue_urls: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DeleteQueueRequest {
    pub queue_url: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct PurgeQueueRequest {
    pub queue_url: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct GetQueueAttributesRequest {
    pub queue_url: Option<String>,
    pub attribute_names: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetQueueAttributesResult {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SetQueueAttributesRequest {
    pub queue_url: Option<String>,
    pub attributes: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct TagQueueRequest {
    pub queue_url: Option<String>,
    pub tags: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct UntagQueueRequest {
    pub queue_url: Option<String>,
    pub tag_keys: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ListQueueTagsRequest {
    pub queue_url: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListQueueTagsResult {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct AddPermissionRequest {
    pub queue_url: Option<String>,
    pub label: Option<String>,
    #[serde(rename = "AWSAccountIds")]
    pub aws_account_ids: Option<Vec<String>>,
    pub actions: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct RemovePermissionRequest {
    pub queue_url: Option<String>,
    pub label: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ListDeadLetterSourceQueuesRequest {
    pub queue_url: Option<String>,
    pub next_token: Option<String>,
    #[serde(deserialize_with = "de::opt_int")]
    pub max_results: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ListDeadLetterSourceQueuesResult {
    /// Lower-case in the model, unlike every other member.
    #[serde(rename = "queueUrls")]
    pub queue_urls: Vec<String>,
    #[serde(rename = "NextToken", skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

// ---------------------------------------------------------------- messages

/// A message attribute value (user or system attribute).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct MessageAttributeValue {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub string_value: Option<String>,
    #[serde(with = "de::opt_blob", skip_serializing_if = "Option::is_none")]
    pub binary_value: Option<Vec<u8>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub string_list_values: Vec<String>,
    #[serde(with = "de::blob_list", skip_serializing_if = "Vec::is_empty")]
    pub binary_list_values: Vec<Vec<u8>>,
    /// Required by the model; `None` is reported as a validation error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_type: Option<String>,
}

pub type MessageAttributes = BTreeMap<String, MessageAttributeValue>;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SendMessageRequest {
    pub queue_url: Option<String>,
    pub message_body: Option<String>,
    #[serde(deserialize_with = "de::opt_int")]
    pub delay_seconds: Option<i64>,
    pub message_attributes: MessageAttributes,
    pub message_system_attributes: MessageAttributes,
    pub message_deduplication_id: Option<String>,
    pub message_group_id: Option<String>,
}

/// An MD5 digest as AWS writes it, 32 lowercase hex digits: kept as its
/// bytes and written out where the answer is encoded, instead of a string
/// allocated (and freed) for every message sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Md5Hex(pub [u8; 16]);

impl Md5Hex {
    /// The digits, written into `buf`.
    pub fn text<'b>(&self, buf: &'b mut [u8; 32]) -> &'b str {
        fill_hex(&self.0, buf);
        std::str::from_utf8(buf).expect("hex digits are ASCII")
    }
}

/// Writes `bytes` as lowercase hex digits into the first `2 * bytes.len()`
/// bytes of `out` (digests and ids on every message sent and received:
/// one two-digit pair looked up per byte, fewer instructions than pushing
/// chars or converting a nibble at a time).
pub fn fill_hex(bytes: &[u8], out: &mut [u8]) {
    const PAIRS: [[u8; 2]; 256] = {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut pairs = [[0; 2]; 256];
        let mut i = 0;
        while i < 256 {
            pairs[i] = [DIGITS[i >> 4], DIGITS[i & 0xf]];
            i += 1;
        }
        pairs
    };
    for (pair, b) in out.chunks_exact_mut(2).zip(bytes) {
        pair.copy_from_slice(&PAIRS[*b as usize]);
    }
}

/// A message id as AWS writes it (hyphenated, lowercase), kept as the id
/// itself for the same reason as [`Md5Hex`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdText(pub uuid::Uuid);

impl IdText {
    /// The text (8-4-4-4-12 digits), written into `buf`.
    pub fn text<'b>(&self, buf: &'b mut [u8; 36]) -> &'b str {
        let id = self.0.as_bytes();
        let (mut from, mut at) = (0, 0);
        for group in [4, 2, 2, 2, 6] {
            if at > 0 {
                buf[at] = b'-';
                at += 1;
            }
            fill_hex(&id[from..from + group], &mut buf[at..at + 2 * group]);
            from += group;
            at += 2 * group;
        }
        std::str::from_utf8(buf).expect("hex digits and hyphens are ASCII")
    }
}

impl std::fmt::Display for Md5Hex {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.text(&mut [0; 32]))
    }
}

impl std::fmt::Display for IdText {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.text(&mut [0; 36]))
    }
}

impl Serialize for Md5Hex {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.text(&mut [0; 32]))
    }
}

impl Serialize for IdText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.text(&mut [0; 36]))
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct SendMessageResult {
    #[serde(rename = "MD5OfMessageBody")]
    pub md5_of_message_body: Md5Hex,
    #[serde(
        rename = "MD5OfMessageAttributes",
        skip_serializing_if = "Option::is_none"
    )]
    pub md5_of_message_attributes: Option<String>,
    #[serde(
        rename = "MD5OfMessageSystemAttributes",
        skip_serializing_if = "Option::is_none"
    )]
    pub md5_of_message_system_attributes: Option<String>,
    #[serde(rename = "MessageId")]
    pub message_id: IdText,
    #[serde(rename = "SequenceNumber", skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SendMessageBatchRequestEntry {
    pub id: Option<String>,
    pub message_body: Option<String>,
    #[serde(deserialize_with = "de::opt_int")]
    pub delay_seconds: Option<i64>,
    pub message_attributes: MessageAttributes,
    pub message_system_attributes: MessageAttributes,
    pub message_deduplication_id: Option<String>,
    pub message_group_id: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SendMessageBatchRequest {
    pub queue_url: Option<String>,
    #[serde(deserialize_with = "de::batch_entries")]
    pub entries: Option<Vec<SendMessageBatchRequestEntry>>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct SendMessageBatchResultEntry {
    #[serde(rename = "Id")]
    pub id: String,
    #[serde(flatten)]
    pub result: SendMessageResult,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SendMessageBatchResult {
    /// Required by the model, so always present (possibly empty).
    pub successful: Vec<SendMessageBatchResultEntry>,
    /// AWS omits `Failed` when every entry succeeded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<BatchResultErrorEntry>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "PascalCase")]
pub struct BatchResultErrorEntry {
    pub id: String,
    pub sender_fault: bool,
    pub code: String,
    pub message: String,
}

/// Result of DeleteMessageBatch and ChangeMessageVisibilityBatch.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct BatchResult {
    pub successful: Vec<BatchResultEntry>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<BatchResultErrorEntry>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct BatchResultEntry {
    pub id: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ReceiveMessageRequest {
    pub queue_url: Option<String>,
    pub attribute_names: Vec<String>,
    pub message_system_attribute_names: Vec<String>,
    pub message_attribute_names: Vec<String>,
    #[serde(deserialize_with = "de::opt_int")]
    pub max_number_of_messages: Option<i64>,
    #[serde(deserialize_with = "de::opt_int")]
    pub visibility_timeout: Option<i64>,
    #[serde(deserialize_with = "de::opt_int")]
    pub wait_time_seconds: Option<i64>,
    pub receive_request_attempt_id: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReceiveMessageResult {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

/// A received message.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Message {
    #[serde(rename = "MessageId")]
    pub message_id: String,
    #[serde(rename = "ReceiptHandle")]
    pub receipt_handle: String,
    #[serde(rename = "MD5OfBody")]
    pub md5_of_body: String,
    #[serde(rename = "Body")]
    pub body: String,
    #[serde(rename = "Attributes", skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
    #[serde(
        rename = "MD5OfMessageAttributes",
        skip_serializing_if = "Option::is_none"
    )]
    pub md5_of_message_attributes: Option<String>,
    #[serde(
        rename = "MessageAttributes",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub message_attributes: MessageAttributes,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DeleteMessageRequest {
    pub queue_url: Option<String>,
    pub receipt_handle: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DeleteMessageBatchRequestEntry {
    pub id: Option<String>,
    pub receipt_handle: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DeleteMessageBatchRequest {
    pub queue_url: Option<String>,
    #[serde(deserialize_with = "de::batch_entries")]
    pub entries: Option<Vec<DeleteMessageBatchRequestEntry>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ChangeMessageVisibilityRequest {
    pub queue_url: Option<String>,
    pub receipt_handle: Option<String>,
    #[serde(deserialize_with = "de::opt_int")]
    pub visibility_timeout: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ChangeMessageVisibilityBatchRequestEntry {
    pub id: Option<String>,
    pub receipt_handle: Option<String>,
    #[serde(deserialize_with = "de::opt_int")]
    pub visibility_timeout: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ChangeMessageVisibilityBatchRequest {
    pub queue_url: Option<String>,
    #[serde(deserialize_with = "de::batch_entries")]
    pub entries: Option<Vec<ChangeMessageVisibilityBatchRequestEntry>>,
}

// ---------------------------------------------------------------- move tasks

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct StartMessageMoveTaskRequest {
    pub source_arn: Option<String>,
    pub destination_arn: Option<String>,
    #[serde(deserialize_with = "de::opt_int")]
    pub max_number_of_messages_per_second: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct StartMessageMoveTaskResult {
    pub task_handle: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CancelMessageMoveTaskRequest {
    pub task_handle: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CancelMessageMoveTaskResult {
    pub approximate_number_of_messages_moved: i64,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ListMessageMoveTasksRequest {
    pub source_arn: Option<String>,
    #[serde(deserialize_with = "de::opt_int")]
    pub max_results: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListMessageMoveTasksResult {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<ListMessageMoveTasksResultEntry>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "PascalCase")]
pub struct ListMessageMoveTasksResultEntry {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_handle: Option<String>,
    pub status: String,
    pub source_arn: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destination_arn: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_number_of_messages_per_second: Option<i64>,
    pub approximate_number_of_messages_moved: i64,
    pub approximate_number_of_messages_to_move: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    pub started_timestamp: i64,
}

/// Serde helpers shared by both protocols.
pub mod de {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::error::SqsError;

    /// Deserializes a request, turning serde's complaint into AWS's error.
    ///
    /// Through the tree's text rather than `serde_json::from_value`: then
    /// the query protocol's requests and the JSON protocol's bodies go
    /// through one deserializer, and each request type's decoder is in
    /// the binary once rather than twice.
    pub fn from_value<T: serde::de::DeserializeOwned>(
        value: serde_json::Value,
    ) -> Result<T, SqsError> {
        from_text(&serde_json::to_string(&value).expect("a JSON tree always serializes"))
    }

    /// Deserializes JSON text the server wrote itself, as [`from_value`].
    pub fn from_text<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, SqsError> {
        serde_json::from_str(text).map_err(|e| {
            // The text is ours, not the caller's: where in it is no help.
            let said = e.to_string();
            let at = format!(" at line {} column {}", e.line(), e.column());
            SqsError::serialization(said.strip_suffix(&at).unwrap_or(&said).to_string())
        })
    }

    /// Deserializes a JSON body (empty means `{}`), with AWS's error for
    /// malformed JSON or members of the wrong type.
    pub fn from_slice<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, SqsError> {
        let body: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
            b"{}"
        } else {
            body
        };
        // serde would also read a struct from an array; AWS wants an object.
        if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return Err(SqsError::serialization(
                "The request body must be a JSON object.",
            ));
        }
        // UTF-8 is checked once for the whole body (word at a time) rather
        // than by serde_json string by string, which showed in a batch
        // send's profile.
        fn malformed(e: impl std::fmt::Display) -> SqsError {
            SqsError::serialization(format!("Malformed JSON request body: {e}"))
        }
        serde_json::from_str(std::str::from_utf8(body).map_err(malformed)?).map_err(malformed)
    }

    /// A batch's entries, in a list made for ten at once: serde grows a
    /// list of unknown length from nothing, reallocating it three times
    /// on the way to ten entries of a few hundred bytes each.
    pub fn batch_entries<'de, D, T>(d: D) -> Result<Option<Vec<T>>, D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de>,
    {
        struct Entries<T>(Vec<T>);
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = Entries<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                // serde's own wording for a list, kept in our error messages.
                f.write_str("a sequence")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Entries<T>, A::Error> {
                let mut entries = Vec::with_capacity(seq.size_hint().unwrap_or(10).min(10));
                while let Some(entry) = seq.next_element()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        impl<'de, T: Deserialize<'de>> Deserialize<'de> for Entries<T> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_seq(Visitor(std::marker::PhantomData))
            }
        }
        Ok(Option::<Entries<T>>::deserialize(d)?.map(|e| e.0))
    }

    /// An integer that may arrive as a JSON number or (query protocol) a string.
    pub fn opt_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum IntOrString {
            Int(i64),
            Float(f64),
            Str(String),
        }
        // The model's integers are 32-bit: a larger value is refused, never
        // clamped into range and echoed back as a different number.
        let in_range = |i: i64| {
            i32::try_from(i).map(i64::from).map_err(|_| {
                serde::de::Error::custom(format!("{i} is out of range for a 32-bit integer"))
            })
        };
        match Option::<IntOrString>::deserialize(d)? {
            None => Ok(None),
            Some(IntOrString::Int(i)) => in_range(i).map(Some),
            Some(IntOrString::Float(f))
                if f.fract() == 0.0 && f >= i32::MIN as f64 && f <= i32::MAX as f64 =>
            {
                Ok(Some(f as i64))
            }
            Some(IntOrString::Float(f)) => Err(serde::de::Error::custom(format!(
                "expected a 32-bit integer, found {f}"
            ))),
            Some(IntOrString::Str(s)) => match s.trim().parse::<i64>() {
                Ok(i) => in_range(i).map(Some),
                Err(_) => Err(serde::de::Error::custom(format!(
                    "Value {s} is not a valid integer"
                ))),
            },
        }
    }

    fn b64() -> base64::engine::GeneralPurpose {
        base64::engine::general_purpose::STANDARD
    }

    fn decode<E: serde::de::Error>(s: &str) -> Result<Vec<u8>, E> {
        // Some clients wrap or pad loosely; strip whitespace before decoding.
        let cleaned: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        b64()
            .decode(cleaned.as_bytes())
            .or_else(|_| {
                base64::engine::general_purpose::STANDARD_NO_PAD.decode(cleaned.as_bytes())
            })
            .map_err(|_| E::custom("BinaryValue is not valid base64"))
    }

    pub mod opt_blob {
        use super::*;

        pub fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(bytes) => s.serialize_str(&b64().encode(bytes)),
                None => s.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
            match Option::<String>::deserialize(d)? {
                None => Ok(None),
                Some(s) => decode(&s).map(Some),
            }
        }
    }

    pub mod blob_list {
        use super::*;
        use serde::ser::SerializeSeq;

        pub fn serialize<S: Serializer>(v: &[Vec<u8>], s: S) -> Result<S::Ok, S::Error> {
            let mut seq = s.serialize_seq(Some(v.len()))?;
            for bytes in v {
                seq.serialize_element(&b64().encode(bytes))?;
            }
            seq.end()
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<u8>>, D::Error> {
            let items = Option::<Vec<String>>::deserialize(d)?.unwrap_or_default();
            items.iter().map(|s| decode(s)).collect()
        }
    }
}

/// An AWS account ID as configured or signed for: twelve digits.
pub fn parse_account(s: &str) -> Result<String, String> {
    if s.len() == 12 && s.chars().all(|c| c.is_ascii_digit()) {
        Ok(s.to_string())
    } else {
        Err("an account ID is 12 digits, e.g. 000000000000".into())
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    #[test]
    fn digests_and_ids_read_as_the_standard_formatters_write_them() {
        let mut x: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
        for _ in 0..1000 {
            // xorshift: every byte value turns up in every position.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bytes = x.to_be_bytes();
            assert_eq!(Md5Hex(bytes).to_string(), format!("{x:032x}"));
            let id = uuid::Uuid::from_u128(x);
            assert_eq!(IdText(id).to_string(), id.hyphenated().to_string());
        }
    }
}
