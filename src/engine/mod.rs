//! The queue engine: queues, messages and their state machine.
//!
//! Pure Rust: no HTTP, XML or JSON here. Requests arrive as the typed
//! values of [`crate::api`], time comes from the injected [`Clock`].

use std::sync::Arc;

use crate::api::{Request, RequestContext, Response};
use crate::clock::Clock;
use crate::error::SqsError;

/// Engine settings that change behaviour.
#[derive(Debug, Clone, Default)]
pub struct EngineConfig {
    /// Enforce AWS's 60-second rules (PurgeQueueInProgress,
    /// QueueDeletedRecently). Off by default so test suites that purge
    /// in every set-up keep working.
    pub strict_timing: bool,
}

/// The engine shared by every connection.
pub struct Engine {
    clock: Arc<dyn Clock>,
    #[allow(dead_code)]
    config: EngineConfig,
}

impl Engine {
    pub fn new(clock: Arc<dyn Clock>, config: EngineConfig) -> Arc<Engine> {
        Arc::new(Engine { clock, config })
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Executes one request. Only ReceiveMessage may wait (long polling).
    pub async fn handle(&self, _ctx: &RequestContext, request: Request) -> Result<Response, SqsError> {
        Err(SqsError::internal(format!("{} is not implemented yet", request.action().name())))
    }

    /// Wakes every waiting long poll so it answers now (used on shutdown).
    pub fn shutdown(&self) {}

    /// Background work that time drives (message move tasks). The server
    /// spawns this once; it returns after [`Engine::shutdown`].
    pub async fn run_background(self: Arc<Self>) {}
}
