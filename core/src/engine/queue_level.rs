//! The engine's queue-level state as plain data: queues without their
//! messages, names deleted recently, move tasks. What the persistence
//! journal stores whole after every queue-level change (reported through
//! the event bus, `engine/events.rs`; built in `engine/persist.rs`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One queue without its messages.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QueueRecord {
    pub uid: u64,
    pub region: String,
    pub account: String,
    pub name: String,
    pub created_ms: u64,
    pub last_modified_ms: u64,
    pub last_purge_ms: Option<u64>,
    pub fifo: bool,
    pub attributes: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
    /// DeduplicationScope as created (see `QueueState::dedup_per_group`).
    pub dedup_per_group: bool,
    /// The last FIFO sequence number, as a decimal string (u128).
    pub last_sequence: String,
    /// Deduplication ids of messages with sequence numbers up to this one
    /// are forgotten (an admin reset cleared the window); decimal, "" or
    /// "0" for none.
    #[serde(default)]
    pub dedup_floor: String,
}

/// The engine's queue-level state.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct EngineState {
    pub queues: Vec<QueueRecord>,
    /// (region, account, name, when deleted): QueueDeletedRecently.
    pub deleted_at: Vec<(String, String, String, u64)>,
    /// Message move tasks (the engine's own shape).
    pub move_tasks: serde_json::Value,
    /// The state of services beside SQS on this engine (SNS's topics and
    /// subscriptions), each in its own shape, by service name.
    #[serde(default)]
    pub services: BTreeMap<String, serde_json::Value>,
}
