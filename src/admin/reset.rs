//! `POST /_retsu/reset` (everything) and `POST /_retsu/queues/{r}/{a}/{n}/reset`
//! (one queue emptied, attributes and tags kept), for test set-ups.

use axum::response::Response;
use serde_json::json;

use super::{ok, refused, Admin};
use crate::engine::QueueKey;

/// Deletes every queue, message and move task, forgets deduplication ids
/// and history, switches every seeded fault off, and puts the clock back on
/// system time, running: the state of a server just started.
pub fn all(admin: &Admin) -> Response {
    // Topics first: the engine's reset then records the state without them.
    let topics = admin.sns.reset();
    let deleted = admin.engine.reset_all();
    admin.faults.clear(None);
    if let Some(history) = &admin.history {
        history.clear();
    }
    if let Some(clock) = admin.clock() {
        clock.reset();
    }
    ok(json!({"reset": true, "queues_deleted": deleted, "topics_deleted": topics}))
}

/// Empties one queue and forgets its deduplication ids and receive
/// attempts; its seeded faults stay, as its attributes do; the clock resumes (time does not jump back: other queues'
/// messages keep their deadlines).
pub fn queue(admin: &Admin, key: &QueueKey) -> Response {
    match admin.engine.reset_queue(key) {
        Ok(removed) => {
            if let Some(clock) = admin.clock() {
                clock.resume();
            }
            ok(json!({"reset": true, "messages_removed": removed}))
        }
        Err(e) => refused(e),
    }
}
