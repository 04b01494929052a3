//! CreateQueue: makes a queue, or answers the URL of an identical one.

use super::*;
use crate::api::*;

impl Unit for CreateQueueRequest {
    type Response = QueueUrlResult;
    const GRANT: Grant = Grant::OwnerOnly;
    const CHANGES_QUEUES: bool = true;
    const BY_QUEUE_URL: bool = false;

    /// Creating is the account's right, not a grant on a queue.
    fn named_queues(&self, _: &RequestContext, _: Action) -> Vec<NamedQueue> {
        Vec::new()
    }

    fn fault_queue(&self, ctx: &RequestContext) -> Option<QueueKey> {
        QueueKey::from_url(self.queue_name.as_deref()?, ctx)
    }

    async fn run(self, engine: &Engine, ctx: &RequestContext) -> Result<QueueUrlResult, SqsError> {
        engine.create_queue(ctx, self)
    }
}

impl Engine {
    fn create_queue(
        &self,
        ctx: &RequestContext,
        r: CreateQueueRequest,
    ) -> Result<QueueUrlResult, SqsError> {
        let name = r.queue_name.ok_or_else(|| SqsError::missing("QueueName"))?;
        let fifo_requested = match r.attributes.get("FifoQueue") {
            Some(v) => v.eq_ignore_ascii_case("true"),
            None => false,
        };
        if fifo_requested && !valid_queue_name(&name, true) {
            return Err(SqsError::invalid_value(
                "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.",
            ));
        }
        if !fifo_requested && !valid_queue_name(&name, false) {
            return Err(SqsError::invalid_value(
                "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
            ));
        }
        let key = QueueKey {
            region: ctx.region.clone(),
            account: ctx.account_id.clone(),
            name,
        };
        let mut settings = QueueSettings::defaults(fifo_requested);
        // FifoQueue itself is consumed above; on a standard queue even
        // "false" is an unknown attribute.
        let others = r
            .attributes
            .iter()
            .filter(|(k, _)| !(fifo_requested && k.as_str() == "FifoQueue"));
        settings.apply(others, true)?;
        self.check_redrive_target(&key, &settings)?;

        let now = self.now();
        // With persistence, a new queue's record reaches the journal before
        // any other request can see the queue, so no message sent to it is
        // journaled ahead of the queue it belongs to. Every queue insert
        // happens under the order lock while capturing, so the state taken
        // here stays the one to extend; it is taken before the map's entry
        // is held, since reading the map under its own entry would deadlock.
        let capturing = self.shared.events.is_capturing();
        let _order = capturing.then(|| self.lock_persist_order());
        let before = capturing.then(|| self.queue_level_state());
        let queue = match self.queues.entry(key.clone()) {
            dashmap::Entry::Occupied(existing) => {
                let existing = existing.get().clone();
                let state = existing.lock();
                for name in r.attributes.keys() {
                    if state.settings.render(name) != settings.render(name) {
                        return Err(SqsError::new(
                            ErrorCode::QueueNameExists,
                            format!("A queue already exists with the same name and a different value for attribute {name}"),
                        ));
                    }
                }
                drop(state);
                existing
            }
            dashmap::Entry::Vacant(slot) => {
                if self.config.strict_timing {
                    if let Some(at) = self.deleted_at.get(&key).map(|e| *e.value()) {
                        if now < at + RECENT_MS {
                            return Err(SqsError::new(
                                ErrorCode::QueueDeletedRecently,
                                "You must wait 60 seconds after deleting a queue before you can create another with the same name.",
                            ));
                        }
                    }
                }
                let uid = self.next_queue_uid.fetch_add(1, Ordering::Relaxed);
                let tags: BTreeMap<String, String> = r.tags.clone();
                let queue = Arc::new(Queue::new(
                    key.clone(),
                    uid,
                    settings,
                    tags,
                    now,
                    self.shared.clone(),
                ));
                if let Some(mut state) = before {
                    state.queues.push(super::persist::QueueRecord::of(&queue));
                    self.shared.events.queues_changed(&state);
                }
                slot.insert(queue.clone());
                self.index_queue(&key);
                queue
            }
        };
        Ok(QueueUrlResult {
            queue_url: self.queue_url(ctx, &queue.key),
        })
    }
}

/// Whether `name` is a queue name AWS accepts (a FIFO queue's with its
/// `.fifo` suffix). Public so the cluster's front can refuse to place a
/// name the engine would refuse to create.
pub fn valid_queue_name(name: &str, fifo: bool) -> bool {
    let base = if fifo {
        match name.strip_suffix(".fifo") {
            Some(b) => b,
            None => return false,
        }
    } else {
        name
    };
    !base.is_empty()
        && name.len() <= 80
        && base
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_names() {
        assert!(valid_queue_name("jobs-1_x", false));
        assert!(!valid_queue_name("jobs.fifo", false));
        assert!(valid_queue_name("jobs.fifo", true));
        assert!(!valid_queue_name(".fifo", true));
        assert!(!valid_queue_name(&"a".repeat(81), false));
        assert!(valid_queue_name(&"a".repeat(80), false));
        assert!(!valid_queue_name(&format!("{}.fifo", "a".repeat(76)), true));
    }
}
