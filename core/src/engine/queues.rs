//! What the queue actions (`actions/`) share: the name index, paging of
//! name lists, and what happens when a queue is deleted.
use base64::Engine as _;

use super::queue::Queue;
use super::{Engine, QueueKey};
use crate::error::SqsError;

pub(super) const RECENT_MS: u64 = 60_000;

pub(super) fn max_results(value: Option<i64>) -> Result<Option<usize>, SqsError> {
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

/// Encodes a pagination token (opaque to clients: the last name returned).
/// Public for a layer that merges several engines' pages (a cluster's
/// shards), which must make the token the engines read.
pub fn page_token(last: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(last)
}

pub(super) fn parse_page_token(token: &str) -> Result<String, SqsError> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| SqsError::invalid_value("Invalid NextToken value."))
}

#[cfg(test)]
mod tests {
    use super::*;

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
