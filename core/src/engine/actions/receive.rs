//! ReceiveMessage, with long polling.

use super::*;
use crate::api::*;

impl Unit for ReceiveMessageRequest {
    type Response = ReceiveMessageResult;

    queue_url_field!();

    async fn run(
        self,
        engine: &Engine,
        ctx: &RequestContext,
    ) -> Result<ReceiveMessageResult, SqsError> {
        engine.receive_message(ctx, self).await
    }
}

impl Engine {
    async fn receive_message(
        &self,
        ctx: &RequestContext,
        r: ReceiveMessageRequest,
    ) -> Result<ReceiveMessageResult, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let max = match r.max_number_of_messages {
            None => 1,
            Some(n) => check_range(
                "MaxNumberOfMessages",
                n,
                1,
                10,
                "Must be between 1 and 10, if provided.",
            )? as usize,
        };
        let wait = r
            .wait_time_seconds
            .map(|w| {
                check_range(
                    "WaitTimeSeconds",
                    w,
                    0,
                    20,
                    "Must be >= 0 and <= 20, if provided.",
                )
            })
            .transpose()?;
        let visibility_ms = r
            .visibility_timeout
            .map(|v| {
                check_range(
                    "VisibilityTimeout",
                    v,
                    0,
                    43_200,
                    "Must be >= 0 and <= 43200, if provided.",
                )
            })
            .transpose()?
            .map(|v| v as u64 * 1000);
        let attempt_id = r.receive_request_attempt_id.filter(|a| !a.is_empty());
        if let Some(a) = &attempt_id {
            let ok = a.len() <= 128
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c.is_ascii_punctuation());
            if !ok {
                return Err(SqsError::invalid_parameter(
                    "ReceiveRequestAttemptId",
                    a,
                    "ReceiveRequestAttemptId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
                ));
            }
        }
        let mut system_names = r.attribute_names;
        system_names.extend(r.message_system_attribute_names);
        let params = ReceiveParams {
            max,
            visibility_ms,
            attempt_id: attempt_id.filter(|_| queue.is_fifo()),
            system_names,
            attribute_names: r.message_attribute_names,
        };
        let wait_ms =
            wait.unwrap_or_else(|| queue.lock().settings.receive_message_wait_time_seconds) as u64
                * 1000;
        let deadline = self.now() + wait_ms;
        // WaitTimeSeconds also ends in real time (clients have real HTTP
        // timeouts): a frozen clock must not hold a poll forever.
        let real_deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(wait_ms);
        loop {
            // Register for wake-ups before looking, so none is missed.
            let notified = queue.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let shutdown = self.shutdown.notified();
            tokio::pin!(shutdown);
            shutdown.as_mut().enable();

            let (messages, next_wake) = self.try_receive(&queue, &params)?;
            let now = self.now();
            if !messages.is_empty()
                || now >= deadline
                || tokio::time::Instant::now() >= real_deadline
                || self.is_shutting_down()
                || queue.is_deleted()
            {
                return Ok(ReceiveMessageResult { messages });
            }
            let wake_at = next_wake.map_or(deadline, |w| w.min(deadline));
            let _waiting = queue.waiting();
            tokio::select! {
                _ = &mut notified => {}
                _ = &mut shutdown => {}
                _ = self.clock.sleep_until(wake_at) => {}
                _ = tokio::time::sleep_until(real_deadline) => {}
            }
        }
    }
}

/// Standard queues refuse receives beyond this many messages in flight.
const MAX_IN_FLIGHT: usize = 120_000;

/// What a receive asked for, validated.
struct ReceiveParams {
    max: usize,
    visibility_ms: Option<u64>,
    attempt_id: Option<String>,
    system_names: Vec<String>,
    attribute_names: Vec<String>,
}

/// The system attributes of a message that the receive asked for.
fn system_attributes(m: &StoredMessage, names: &[String]) -> BTreeMap<String, String> {
    let all = names.iter().any(|n| n == "All");
    let want = |n: &str| all || names.iter().any(|x| x == n);
    let mut out = BTreeMap::new();
    let mut put = |name: &str, value: Option<String>| {
        if let (true, Some(v)) = (want(name), value) {
            out.insert(name.to_string(), v);
        }
    };
    put("SenderId", Some(m.sender_id.to_string()));
    put("SentTimestamp", Some(m.sent_ms.to_string()));
    put("ApproximateReceiveCount", Some(m.receive_count.to_string()));
    put(
        "ApproximateFirstReceiveTimestamp",
        m.first_receive_ms().map(|t| t.to_string()),
    );
    put("AWSTraceHeader", m.trace_header().map(String::from));
    put("MessageGroupId", m.group_id().map(|g| g.to_string()));
    put("MessageDeduplicationId", m.dedup_id().map(String::from));
    put("SequenceNumber", m.sequence_number().map(|s| s.to_string()));
    put(
        "DeadLetterQueueSourceArn",
        m.dead_letter_source_arn().map(|a| a.to_string()),
    );
    out
}

/// Whether a message attribute name matches the receive's selection:
/// `All`, `.*`, `*`, an exact name, or a `prefix.*` pattern.
fn attribute_selected(name: &str, patterns: &[String]) -> bool {
    patterns.iter().any(|p| {
        p == "All"
            || p == ".*"
            || p == "*"
            || p == name
            || p.strip_suffix(".*")
                .is_some_and(|prefix| !prefix.is_empty() && name.starts_with(prefix))
    })
}

fn render(queue: &Queue, slot: u64, m: &StoredMessage, params: &ReceiveParams) -> Message {
    let selected: MessageAttributes = m
        .attributes()
        .iter()
        .filter(|(name, _)| attribute_selected(name, &params.attribute_names))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Message {
        message_id: id_text(&m.message_id),
        receipt_handle: Receipt {
            queue_uid: queue.uid,
            slot,
            nonce: m.nonce,
        }
        .encode(queue.receipt_key()),
        md5_of_body: hex(&m.body_md5),
        body: m.body.to_string(),
        attributes: system_attributes(m, &params.system_names),
        md5_of_message_attributes: md5_of_attributes(selected.iter()),
        message_attributes: selected,
    }
}

impl Engine {
    /// One receive attempt: returns the messages and, when there are none,
    /// the next time one may become receivable.
    fn try_receive(
        &self,
        queue: &Arc<Queue>,
        params: &ReceiveParams,
    ) -> Result<(Vec<Message>, Option<u64>), SqsError> {
        let redrive = self.redrive_for(queue);
        let now = self.now();
        let mut state = queue.lock_at(now);
        let visibility_ms = params
            .visibility_ms
            .unwrap_or(state.settings.visibility_timeout as u64 * 1000);

        let attempt: Option<Arc<str>> = params.attempt_id.as_deref().map(Arc::from);
        if let Some(replayed) = replay_attempt(&mut state, queue, params, now, visibility_ms) {
            return Ok((replayed, None));
        }
        if !queue.is_fifo() && state.store.in_flight_count() >= MAX_IN_FLIGHT {
            return Err(SqsError::new(
                ErrorCode::OverLimit,
                "The maximum number of in flight messages has been reached.",
            ));
        }
        let in_flight_room = MAX_IN_FLIGHT.saturating_sub(state.store.in_flight_count());
        let max = params.max.min(in_flight_room);
        let received = state.store.receive_in_attempt(
            attempt.as_ref(),
            now,
            max,
            visibility_ms,
            redrive.as_ref().map(|r| r.max_receive_count),
        );
        let messages: Vec<Message> = received
            .slots
            .iter()
            .filter_map(|slot| {
                state
                    .store
                    .get(*slot)
                    .map(|m| render(queue, *slot, m, params))
            })
            .collect();
        if let (Some(id), false) = (&params.attempt_id, received.slots.is_empty()) {
            let entries = received
                .slots
                .iter()
                .filter_map(|s| state.store.get(*s).map(|m| (*s, m.nonce)))
                .collect();
            state.attempts.retain(|_, a| a.expires_ms > now);
            state.attempts.insert(
                id.clone(),
                Attempt {
                    expires_ms: now + DEDUP_WINDOW_MS,
                    messages: entries,
                },
            );
        }
        let next_wake = state.store.next_wake();
        drop(state);
        if !received.dead_lettered.is_empty() {
            if let Some(redrive) = redrive {
                self.dead_letter(queue, redrive, received.dead_lettered);
            }
        }
        Ok((messages, next_wake))
    }
}

/// A FIFO receive retried with the same attempt id gets the same messages
/// and handles, if none of them was deleted or changed since.
fn replay_attempt(
    state: &mut QueueState,
    queue: &Queue,
    params: &ReceiveParams,
    now: u64,
    visibility_ms: u64,
) -> Option<Vec<Message>> {
    let id = params.attempt_id.as_ref()?;
    let attempt = state.attempts.get(id)?.clone();
    if attempt.expires_ms <= now {
        state.attempts.remove(id);
        return None;
    }
    let intact = attempt.messages.iter().all(|(slot, nonce)| {
        state
            .store
            .get(*slot)
            .is_some_and(|m| m.nonce == *nonce && matches!(m.state(), State::InFlight(_)))
    });
    if !intact {
        state.attempts.remove(id);
        return None;
    }
    let until = now + visibility_ms;
    let id: Arc<str> = Arc::from(id.as_str());
    let mut out = Vec::with_capacity(attempt.messages.len());
    for (slot, _) in &attempt.messages {
        state.store.refresh_flight(*slot, until, &id);
        if let Some(m) = state.store.get(*slot) {
            out.push(render(queue, *slot, m, params));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_selection() {
        let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(attribute_selected("Hello", &p(&["Hel.*"])));
        assert!(attribute_selected("Help.Me", &p(&["Hel.*"])));
        assert!(!attribute_selected("Other", &p(&["Hel.*"])));
        assert!(attribute_selected("x", &p(&["All"])));
        assert!(attribute_selected("x", &p(&[".*"])));
        assert!(attribute_selected("x", &p(&["x"])));
        assert!(!attribute_selected("x", &p(&[])));
        assert!(!attribute_selected("x", &p(&["AWS."])));
    }
}
