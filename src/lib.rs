//! Retsu: an Amazon SQS wire-compatible emulator. ARCHITECTURE.md has the
//! one-page picture; this is the map of the server crate.
//!
//! ```text
//! HTTP (hyper) ─► server/     connections, limits, one service for every request
//!              ─► protocol/   AWS JSON 1.0 and query/XML ⇄ typed requests (api)
//!              ─► auth/       --auth: SigV4 verified, then authorize() on the engine's facts
//!              ─► faults      seeded faults, wrapped around the engine call
//!              ─► retsu_core  (its own crate: api, engine, error, clock)
//! /_retsu/*    ─► admin/      JSON admin API, the live event stream (SSE), LocalStack's peek
//! /metrics     ─► metrics     Prometheus counters, a subscriber of the event bus
//! /_retsu/ui/  ─► console     the web console's embedded files
//! ```
//!
//! Subscribers of the engine's event bus, all attached in `observers`:
//! `history` (a message's life and the recent events), `metrics`,
//! `event_stream` (the live stream's readers), `journal/` (persistence to
//! a data directory's SQLite).
//! Around them: `config` and `cli` (flags, environment and the TOML file),
//! `admin_cli` (the `retsu peek|history|events|clock|faults|reset`
//! clients), `localstack` (`--localstack`'s defaults, LocalStack's init
//! hooks), `embed` (an in-process server for Rust test suites),
//! `notification_signing` (SNS's message signatures: key, certificate,
//! string to sign), `sns_http` (the POSTs to SNS's HTTP subscribers, with
//! their retries and dead-lettering), `lambda` (event source mappings:
//! queues polled into configured functions, beside SQS as SNS is).

pub use retsu_core::{api, clock, engine, error, filter_policy, sns};

pub mod admin;
pub mod admin_cli;
pub mod auth;
mod cert_profile;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod console;
pub mod embed;
pub mod event_stream;
pub mod faults;
pub mod history;
pub mod journal;
pub mod lambda;
pub mod localstack;
pub mod metrics;
pub mod notification_signing;
pub mod observers;
pub mod protocol;
pub mod server;
pub mod sns_http;
pub mod tls;
pub mod topic_steps;
