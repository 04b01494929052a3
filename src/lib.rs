//! Retsu: an Amazon SQS wire-compatible emulator.
//!
//! ```text
//! HTTP (axum/hyper) ─► protocol/  decode AWS JSON 1.0 or query/XML into typed requests (api)
//!                                 encode results and errors back in the caller's protocol
//!                   ─► engine/    queues, messages, the state machine; no HTTP, time via Clock
//! /_retsu/*, /_aws/sqs/messages ─► admin/  JSON admin API over engine views (peek, clock, reset)
//! --auth: auth/ verifies SigV4 before decoding; the caller's account comes from its key
//! ```

pub use retsu_core::{api, clock, engine, error};

pub mod admin;
pub mod admin_cli;
pub mod auth;
pub mod cli;
pub mod config;
pub mod console;
pub mod embed;
pub mod event_stream;
pub mod faults;
pub mod history;
pub mod journal;
pub mod metrics;
pub mod protocol;
pub mod server;
