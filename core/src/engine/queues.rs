//! Queue management: CreateQueue, GetQueueUrl, ListQueues, DeleteQueue,
//! PurgeQueue, Get/SetQueueAttributes, tags and permissions.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use base64::Engine as _;
use serde_json::{json, Value};

use super::attributes::{self, QueueSettings};
use super::events::Wakes;
use super::queue::Queue;
use super::store::Transition;
use super::{Engine, QueueKey};
use crate::api::*;
use crate::error::{ErrorCode, SqsError};

const RECENT_MS: u64 = 60_000;

fn valid_queue_name(name: &str, fifo: bool) -> bool {
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

/// Encodes a pagination token (opaque to clients: the last name returned).
fn page_token(last: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(last)
}

fn parse_page_token(token: &str) -> Result<String, SqsError> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| SqsError::invalid_value("Invalid NextToken value."))
}

fn max_results(value: Option<i64>) -> Result<Option<usize>, SqsError> {
    match value {
        None => Ok(None),
        Some(n) if (1..=1000).contains(&n) => Ok(Some(n as usize)),
        Some(n) => Err(SqsError::invalid_parameter(
            "MaxResults",
            n,
            "MaxResults must be an integer between 1 and 1000.",
        )),
    }
}

/// One page of names: those after the token, up to `max` (1000 without
/// MaxResults); a NextToken only when MaxResults was given and more remain.
pub(super) fn paginate(
    mut names: Vec<String>,
    max: Option<i64>,
    token: Option<&str>,
) -> Result<(Vec<String>, Option<String>), SqsError> {
    let limit = max_results(max)?;
    names.sort();
    if let Some(token) = token.filter(|t| !t.is_empty()) {
        let after = parse_page_token(token)?;
        names.retain(|n| n.as_str() > after.as_str());
    }
    let page_size = limit.unwrap_or(1000);
    let more = names.len() > page_size;
    names.truncate(page_size);
    let next =
        (more && limit.is_some()).then(|| page_token(names.last().map_or("", String::as_str)));
    Ok((names, next))
}

impl Engine {
    pub(super) fn create_queue(
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

    pub(super) fn get_queue_url(
        &self,
        ctx: &RequestContext,
        r: GetQueueUrlRequest,
    ) -> Result<QueueUrlResult, SqsError> {
        let name = r.queue_name.ok_or_else(|| SqsError::missing("QueueName"))?;
        let key = QueueKey {
            region: ctx.region.clone(),
            account: r
                .queue_owner_aws_account_id
                .filter(|a| !a.is_empty())
                .unwrap_or_else(|| ctx.account_id.clone()),
            name,
        };
        let queue = self
            .queue_by_key(&key)
            .ok_or_else(SqsError::queue_does_not_exist)?;
        Ok(QueueUrlResult {
            queue_url: self.queue_url(ctx, &queue.key),
        })
    }

    pub(super) fn list_queues(
        &self,
        ctx: &RequestContext,
        r: ListQueuesRequest,
    ) -> Result<ListQueuesResult, SqsError> {
        let prefix = r.queue_name_prefix.unwrap_or_default();
        let limit = max_results(r.max_results)?;
        let after = match r.next_token.as_deref().filter(|t| !t.is_empty()) {
            Some(token) => Some(parse_page_token(token)?),
            None => None,
        };
        let page_size = limit.unwrap_or(1000);
        let from = QueueKey {
            region: ctx.region.clone(),
            account: ctx.account_id.clone(),
            name: match &after {
                Some(a) if a.as_str() >= prefix.as_str() => a.clone(),
                _ => prefix.clone(),
            },
        };
        // One more than a page, to know whether another follows.
        let mut names: Vec<String> = {
            let index = self.names.read().unwrap_or_else(|p| p.into_inner());
            index
                .range::<QueueKey, _>(&from..)
                .take_while(|k| {
                    k.region == ctx.region
                        && k.account == ctx.account_id
                        && k.name.starts_with(&prefix)
                })
                .filter(|k| after.as_deref().is_none_or(|a| k.name.as_str() > a))
                .filter(|k| self.queues.contains_key(*k))
                .take(page_size + 1)
                .map(|k| k.name.clone())
                .collect()
        };
        let more = names.len() > page_size;
        names.truncate(page_size);
        let next_token =
            (more && limit.is_some()).then(|| page_token(names.last().map_or("", String::as_str)));
        Ok(ListQueuesResult {
            queue_urls: names
                .into_iter()
                .map(|name| {
                    self.queue_url(
                        ctx,
                        &QueueKey {
                            region: ctx.region.clone(),
                            account: ctx.account_id.clone(),
                            name,
                        },
                    )
                })
                .collect(),
            next_token,
        })
    }

    pub(super) fn delete_queue(
        &self,
        ctx: &RequestContext,
        r: DeleteQueueRequest,
    ) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        if self.unindex_queue(&queue.key, |key| {
            self.queues
                .remove_if(key, |_, q| Arc::ptr_eq(q, &queue))
                .is_some()
        }) {
            self.deleted_at.insert(queue.key.clone(), self.now());
            // Its messages go with it; the history says how they left.
            queue
                .lock_at(self.now())
                .store
                .purge_as(Transition::QueueDeleted);
            queue.mark_deleted();
            self.on_queue_deleted(&queue);
        }
        Ok(Empty {})
    }

    pub(super) fn purge_queue(
        &self,
        ctx: &RequestContext,
        r: PurgeQueueRequest,
    ) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let now = self.now();
        let mut state = queue.lock_at(now);
        if self.config.strict_timing {
            if let Some(at) = state.last_purge_ms {
                if now < at + RECENT_MS {
                    return Err(SqsError::new(
                        ErrorCode::PurgeQueueInProgress,
                        format!(
                            "Only one PurgeQueue operation on {} is allowed every 60 seconds.",
                            queue.key.name
                        ),
                    ));
                }
            }
        }
        state.last_purge_ms = Some(now);
        state.store.purge();
        state.attempts.clear();
        // A purged FIFO queue also forgets its deduplication ids: the same
        // id sent right after is a new message.
        state.dedup = Default::default();
        Ok(Empty {})
    }

    pub(super) fn get_queue_attributes(
        &self,
        ctx: &RequestContext,
        r: GetQueueAttributesRequest,
    ) -> Result<GetQueueAttributesResult, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        attributes::check_names(&r.attribute_names)?;
        let all = r.attribute_names.iter().any(|n| n == "All");
        let wanted = |name: &str| all || r.attribute_names.iter().any(|n| n == name);
        let state = queue.lock_at(self.now());
        let mut out = BTreeMap::new();
        for name in attributes::ALL_NAMES {
            if !wanted(name) {
                continue;
            }
            let value = match *name {
                "ApproximateNumberOfMessages" => Some(state.store.available_count().to_string()),
                "ApproximateNumberOfMessagesNotVisible" => {
                    Some(state.store.in_flight_count().to_string())
                }
                "ApproximateNumberOfMessagesDelayed" => {
                    Some(state.store.delayed_count().to_string())
                }
                "CreatedTimestamp" => Some((queue.created_ms / 1000).to_string()),
                "LastModifiedTimestamp" => Some((state.last_modified_ms / 1000).to_string()),
                "QueueArn" => Some(queue.arn.clone()),
                other => state.settings.render(other),
            };
            if let Some(value) = value {
                out.insert(name.to_string(), value);
            }
        }
        Ok(GetQueueAttributesResult { attributes: out })
    }

    pub(super) fn set_queue_attributes(
        &self,
        ctx: &RequestContext,
        r: SetQueueAttributesRequest,
    ) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let attributes = r
            .attributes
            .ok_or_else(|| SqsError::missing("Attributes"))?;
        let now = self.now();
        let mut settings = queue.lock().settings.clone();
        settings.apply(attributes.iter(), false)?;
        self.check_redrive_target(&queue.key, &settings)?;
        let mut state = queue.lock();
        // Keep policy changes made by a concurrent AddPermission out of harm's way:
        // only the attributes named here change.
        let mut merged = state.settings.clone();
        merged.apply(attributes.iter(), false)?;
        state.set_settings(merged);
        state.last_modified_ms = now;
        // A shorter retention or delay may make messages expire or appear now.
        state.tick(now);
        drop(state);
        queue.wake(Wakes::everyone());
        Ok(Empty {})
    }

    pub(super) fn tag_queue(
        &self,
        ctx: &RequestContext,
        r: TagQueueRequest,
    ) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let tags = r.tags.ok_or_else(|| SqsError::missing("Tags"))?;
        if tags.is_empty() {
            return Err(SqsError::missing("Tags"));
        }
        for (k, v) in &tags {
            if k.is_empty() || k.chars().count() > 128 {
                return Err(SqsError::invalid_value(
                    "Tag keys must be between 1 and 128 characters in length.",
                ));
            }
            if v.chars().count() > 256 {
                return Err(SqsError::invalid_value(
                    "Tag values must be less than 256 characters in length.",
                ));
            }
        }
        let mut state = queue.lock();
        let mut merged = state.tags.clone();
        merged.extend(tags);
        if merged.len() > 50 {
            return Err(SqsError::invalid_value(format!(
                "Too many tags added for queue {}.",
                queue.key.name
            )));
        }
        state.tags = merged;
        state.refresh_extensions();
        Ok(Empty {})
    }

    pub(super) fn untag_queue(
        &self,
        ctx: &RequestContext,
        r: UntagQueueRequest,
    ) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let keys = r.tag_keys.ok_or_else(|| SqsError::missing("TagKeys"))?;
        if keys.is_empty() || keys.iter().any(|k| k.is_empty() || k.chars().count() > 128) {
            return Err(SqsError::invalid_value(
                "Tag keys must be between 1 and 128 characters in length.",
            ));
        }
        let mut state = queue.lock();
        for k in keys {
            state.tags.remove(&k);
        }
        state.refresh_extensions();
        Ok(Empty {})
    }

    pub(super) fn list_queue_tags(
        &self,
        ctx: &RequestContext,
        r: ListQueueTagsRequest,
    ) -> Result<ListQueueTagsResult, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let tags = queue.lock().tags.clone();
        Ok(ListQueueTagsResult { tags })
    }

    pub(super) fn add_permission(
        &self,
        ctx: &RequestContext,
        r: AddPermissionRequest,
    ) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let label = r.label.ok_or_else(|| SqsError::missing("Label"))?;
        let accounts = r
            .aws_account_ids
            .filter(|a| !a.is_empty())
            .ok_or_else(|| SqsError::missing("AWSAccountIds"))?;
        let actions = r
            .actions
            .filter(|a| !a.is_empty())
            .ok_or_else(|| SqsError::missing("Actions"))?;
        if label.is_empty()
            || label.len() > 80
            || !label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(SqsError::invalid_parameter(
                "Label",
                &label,
                "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
            ));
        }
        if actions.len() > 7 {
            return Err(SqsError::new(
                ErrorCode::OverLimit,
                format!(
                    "{} Actions were found, maximum allowed is 7.",
                    actions.len()
                ),
            ));
        }
        const PERMITTED: &[&str] = &[
            "*",
            "SendMessage",
            "ReceiveMessage",
            "DeleteMessage",
            "ChangeMessageVisibility",
            "GetQueueAttributes",
            "GetQueueUrl",
            "ListDeadLetterSourceQueues",
            "PurgeQueue",
            "ListQueueTags",
            "ListMessageMoveTasks",
            "StartMessageMoveTask",
            "CancelMessageMoveTask",
        ];
        const OWNER_ONLY: &[&str] = &[
            "AddPermission",
            "CreateQueue",
            "DeleteQueue",
            "ListQueues",
            "RemovePermission",
            "SetQueueAttributes",
            "TagQueue",
            "UntagQueue",
        ];
        if let Some(bad) = actions.iter().find(|a| !PERMITTED.contains(&a.as_str())) {
            if OWNER_ONLY.contains(&bad.as_str()) {
                return Err(SqsError::invalid_parameter(
                    "ActionName",
                    format!("SQS:{bad}"),
                    "Only the queue owner is allowed to invoke this action.",
                ));
            }
            // Anything else, the *Batch names included (granted with their
            // single-message action), is not an action AWS can grant.
            return Err(SqsError::invalid_parameter(
                "ActionName",
                format!("SQS:{bad}"),
                "Please refer to the appropriate WSDL for a list of valid actions.",
            ));
        }
        if let Some(bad) = accounts
            .iter()
            .find(|a| a.len() != 12 || !a.chars().all(|c| c.is_ascii_digit()))
        {
            return Err(SqsError::invalid_parameter(
                "PrincipalId",
                format!("[{bad}]"),
                "Unable to verify.",
            ));
        }
        let one_or_many = |items: Vec<String>| -> Value {
            if items.len() == 1 {
                Value::String(items.into_iter().next().expect("one"))
            } else {
                Value::Array(items.into_iter().map(Value::String).collect())
            }
        };
        let statement = json!({
            "Sid": label,
            "Effect": "Allow",
            "Principal": {"AWS": one_or_many(accounts.iter().map(|a| format!("arn:aws:iam::{a}:root")).collect())},
            "Action": one_or_many(actions.iter().map(|a| format!("SQS:{a}")).collect()),
            "Resource": queue.arn,
        });
        let mut state = queue.lock();
        let mut policy = state.settings.policy.clone().unwrap_or_else(|| {
            json!({"Version": "2008-10-17", "Id": format!("{}/SQSDefaultPolicy", queue.arn), "Statement": []})
        });
        let statements = statements_mut(&mut policy);
        if statements
            .iter()
            .any(|s| s.get("Sid").and_then(Value::as_str) == Some(label.as_str()))
        {
            return Err(SqsError::invalid_parameter(
                "Label",
                &label,
                "Already exists.",
            ));
        }
        statements.push(statement);
        state.settings.policy = Some(policy);
        state.last_modified_ms = self.now();
        Ok(Empty {})
    }

    pub(super) fn remove_permission(
        &self,
        ctx: &RequestContext,
        r: RemovePermissionRequest,
    ) -> Result<Empty, SqsError> {
        let queue = self.queue(ctx, r.queue_url.as_deref())?;
        let label = r.label.ok_or_else(|| SqsError::missing("Label"))?;
        let mut state = queue.lock();
        let not_found = || SqsError::invalid_parameter("Label", &label, "can't find label.");
        let mut policy = state.settings.policy.clone().ok_or_else(not_found)?;
        let statements = statements_mut(&mut policy);
        let before = statements.len();
        statements.retain(|s| s.get("Sid").and_then(Value::as_str) != Some(label.as_str()));
        if statements.len() == before {
            return Err(not_found());
        }
        let empty = statements.is_empty();
        state.settings.policy = if empty { None } else { Some(policy) };
        state.last_modified_ms = self.now();
        Ok(Empty {})
    }

    /// Called once a queue is gone: its pending work elsewhere ends.
    /// Adds a queue just put in `queues` to the ListQueues index.
    pub(super) fn index_queue(&self, key: &QueueKey) {
        let mut index = self.names.write().unwrap_or_else(|p| p.into_inner());
        index.insert(key.clone());
    }

    /// Runs `remove` (which takes the queue out of `queues`, returning
    /// whether it did) under the index's lock and drops the key with it, so
    /// a queue created meanwhile can never end up missing from the index.
    pub(super) fn unindex_queue(
        &self,
        key: &QueueKey,
        remove: impl FnOnce(&QueueKey) -> bool,
    ) -> bool {
        let mut index = self.names.write().unwrap_or_else(|p| p.into_inner());
        let removed = remove(key);
        if removed {
            index.remove(key);
        }
        removed
    }

    pub(super) fn on_queue_deleted(&self, queue: &Queue) {
        let mut state = queue.lock();
        // The messages go with the queue (each reported to the hook).
        state.store.purge();
        drop(state);
        self.fail_tasks_for_deleted(&queue.arn);
    }
}

/// The `Statement` array of a policy document, created if missing.
fn statements_mut(policy: &mut Value) -> &mut Vec<Value> {
    if !policy.get("Statement").is_some_and(Value::is_array) {
        let single = policy.get("Statement").cloned();
        policy["Statement"] = Value::Array(single.into_iter().collect());
    }
    policy["Statement"].as_array_mut().expect("made an array")
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

    #[test]
    fn pagination() {
        let names: Vec<String> = ["c", "a", "b"].iter().map(|s| s.to_string()).collect();
        let (page, next) = paginate(names.clone(), Some(2), None).unwrap();
        assert_eq!(page, vec!["a", "b"]);
        let (page, next) = paginate(names.clone(), Some(2), next.as_deref()).unwrap();
        assert_eq!((page, next), (vec!["c".to_string()], None));
        let (page, next) = paginate(names, None, None).unwrap();
        assert_eq!((page.len(), next), (3, None));
    }
}
