//! The journal's subscription to the event stream: events and
//! queue-level reports become pending writes, groups held until they close.

use super::*;

/// The journal's subscription: events become pending writes.
pub(super) struct Feed(pub(super) Arc<Inner>);

impl Subscriber for Feed {
    fn publish(&self, events: &[Event]) {
        use Transition::*;
        let mut ops = Vec::with_capacity(events.len());
        for e in events {
            let Some(stored) = &e.stored else { continue };
            let (queue_uid, slot) = (stored.queue_uid, stored.slot);
            match e.kind {
                Sent | ArrivedFromSource | RestoredIn | Duplicated | Received
                | VisibilityChanged | Released => {
                    // No snapshot: time-driven (derived from the stored
                    // deadline on load) or already gone again.
                    let Some(message) = &stored.message else {
                        continue;
                    };
                    let new = matches!(e.kind, Sent | ArrivedFromSource | RestoredIn | Duplicated);
                    if e.kind == Sent && message.sequence_number().is_some() {
                        if let Some(record) = DedupRecord::of(message) {
                            ops.push(Op::Dedup { queue_uid, record });
                        }
                    }
                    match (e.kind, &stored.attempt) {
                        (Received, Some(id)) => {
                            // One receive's messages arrive in one publish.
                            let same = |op: &Op| matches!(op, Op::Attempt { queue_uid: q, id: i, .. } if *q == queue_uid && i == id);
                            let at = match ops.iter().rposition(same) {
                                Some(at) => at,
                                None => {
                                    ops.push(Op::Attempt {
                                        queue_uid,
                                        id: id.clone(),
                                        expires_ms: e.at_ms + DEDUP_WINDOW_MS,
                                        messages: Vec::new(),
                                    });
                                    ops.len() - 1
                                }
                            };
                            if let Op::Attempt { messages, .. } = &mut ops[at] {
                                messages.push((slot, message.nonce));
                            }
                        }
                        (VisibilityChanged, None) if message.group_id().is_some() => {
                            ops.push(Op::ForgetAttempts { queue_uid, slot })
                        }
                        _ => {}
                    }
                    ops.push(Op::Put {
                        queue_uid,
                        slot,
                        message: message.clone(),
                        new,
                    });
                }
                Deleted
                | Expired
                | Purged
                | QueueDeleted
                | AdminDeleted
                | MovedToDeadLetterQueue
                | MovedByTask
                | RestoredOut => ops.push(Op::Delete { queue_uid, slot }),
                DelayEnded | StaleDelete => {}
            }
        }
        if ops.is_empty() {
            return;
        }
        self.0.push_or_hold(ops);
    }

    fn outbound(&self, records: &[Outbound]) {
        self.0.push_or_hold(vec![Op::Outbound(records.to_vec())]);
    }

    fn accepted(&self, outbound_id: uuid::Uuid) {
        self.0.push_or_hold(vec![Op::Accepted(outbound_id)]);
    }

    fn queues_changed(&self, state: &EngineState) {
        self.0.push_or_hold(vec![Op::Queues(state.clone())]);
    }

    fn begin_group(&self) {
        let id = Arc::as_ptr(&self.0) as usize;
        GROUPS.with(|g| g.borrow_mut().push((id, Vec::new())));
    }

    fn end_group(&self) {
        let id = Arc::as_ptr(&self.0) as usize;
        let ops = GROUPS.with(|g| {
            let mut g = g.borrow_mut();
            let i = g.iter().position(|(j, _)| *j == id)?;
            Some(g.swap_remove(i).1)
        });
        if let Some(ops) = ops.filter(|o| !o.is_empty()) {
            self.0.push(ops);
        }
    }
}

thread_local! {
    /// Changes of an open group (`Subscriber::begin_group`), per journal:
    /// held on the publishing thread and pushed as one publication at its
    /// end, so the writer commits all of them or none.
    static GROUPS: std::cell::RefCell<Vec<(usize, Vec<Op>)>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Inner {
    /// Pushes `ops`, or holds them in this thread's open group.
    fn push_or_hold(self: &Arc<Self>, ops: Vec<Op>) {
        let id = Arc::as_ptr(self) as usize;
        let held = GROUPS.with(|g| {
            let mut g = g.borrow_mut();
            match g.iter_mut().find(|(j, _)| *j == id) {
                Some((_, group)) => {
                    group.extend(ops);
                    None
                }
                None => Some(ops),
            }
        });
        if let Some(ops) = held {
            self.push(ops);
        }
    }

    pub(super) fn push(&self, mut ops: Vec<Op>) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if pending.ops.is_empty() {
            std::mem::swap(&mut pending.ops, &mut ops);
        } else {
            pending.ops.append(&mut ops);
        }
        pending.ticket += 1;
        let wake = pending.wake_at != 0 && pending.ticket >= pending.wake_at;
        if wake {
            pending.wake_at = 0;
        }
        drop(pending);
        if wake {
            self.wake.notify_one();
        }
    }
}
