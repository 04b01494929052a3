//! Opt-in extensions from Retsu's own lifecycle design — things real SQS
//! does not have, so they are off unless a queue asks for them with the
//! tag `retsu:extensions` (`ttl`, `priority`, a comma list, or `all`):
//!
//! - per-message time to live: the message attribute `retsu.ttl-seconds`
//!   (a number of seconds from the send) removes the message when it ends
//!   (an `expired` event) — never while a delivery is in flight: then it
//!   goes when the flight ends, unless deleted first;
//! - priority (standard queues): the message attribute `retsu.priority`
//!   (an integer, default 0) — a receive takes the highest priority first,
//!   equal priorities in send order. FIFO queues keep their group order.
//!
//! Why here: both are changes of state and of receive order, so they live
//! in the store beside the indexes they extend, as a separate block the
//! state machine calls through a few hooks (`ext_*`). A queue without the
//! tag has no [`Extensions`] at all (one `None` check per hook); with it,
//! every index is an ordered set or a hash map, so operations stay
//! O(log n). Turning the tag on for a queue that holds messages indexes
//! them once (O(n)).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use super::{MessageStore, State, StoredMessage, Transition};

/// The queue tag that opts in.
pub const TAG: &str = "retsu:extensions";
/// Message attribute: seconds to live from the send.
pub const TTL_ATTRIBUTE: &str = "retsu.ttl-seconds";
/// Message attribute: an integer, higher received first.
pub const PRIORITY_ATTRIBUTE: &str = "retsu.priority";

/// Which extensions a queue asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    pub ttl: bool,
    pub priority: bool,
}

impl Flags {
    /// Reads the `retsu:extensions` tag: `ttl`, `priority`, `all`,
    /// comma-separated, case-insensitive; anything else is ignored.
    pub fn from_tags(tags: &BTreeMap<String, String>) -> Flags {
        let mut flags = Flags::default();
        for word in tags.get(TAG).map(String::as_str).unwrap_or("").split(',') {
            match word.trim().to_ascii_lowercase().as_str() {
                "ttl" => flags.ttl = true,
                "priority" => flags.priority = true,
                "all" => {
                    flags.ttl = true;
                    flags.priority = true;
                }
                _ => {}
            }
        }
        flags
    }

    fn any(self) -> bool {
        self.ttl || self.priority
    }
}

/// The extra indexes of an opted-in queue.
#[derive(Debug, Default)]
pub struct Extensions {
    flags: Flags,
    /// Priority (standard queues): the available slots, highest priority
    /// first, then send order. Mirrors the store's `available` set.
    ranked: Option<BTreeSet<(Reverse<i64>, u64)>>,
    /// Non-zero priorities by slot.
    priority_of: HashMap<u64, i64>,
    /// (time to live ends, slot).
    ttl: BTreeSet<(u64, u64)>,
    ttl_of: HashMap<u64, u64>,
    /// Time to live ended during a delivery: removed when it ends.
    overdue: HashSet<u64>,
}

fn number(message: &StoredMessage, name: &str) -> Option<f64> {
    let value = message.attributes().get(name)?.string_value.as_deref()?;
    value.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

impl Extensions {
    fn priority(&self, slot: u64) -> i64 {
        self.priority_of.get(&slot).copied().unwrap_or(0)
    }
}

impl MessageStore {
    /// A new store with the extensions the queue's tags ask for.
    pub fn with_extension_tags(mut self, tags: &BTreeMap<String, String>) -> MessageStore {
        self.set_extensions(Flags::from_tags(tags));
        self
    }

    /// Which extensions are on.
    pub fn extensions(&self) -> Flags {
        self.ext.as_ref().map(|e| e.flags).unwrap_or_default()
    }

    /// Turns extensions on or off; (re)indexes the stored messages when
    /// they change (O(n), once).
    pub fn set_extensions(&mut self, flags: Flags) {
        if self.extensions() == flags {
            return;
        }
        if !flags.any() {
            self.ext = None;
            return;
        }
        self.ext = Some(Box::new(Extensions {
            flags,
            ranked: (flags.priority && self.fifo.is_none()).then(BTreeSet::new),
            ..Extensions::default()
        }));
        let slots: Vec<u64> = self.messages.keys().collect();
        for slot in slots {
            self.ext_stored(slot);
        }
    }

    /// Hook: a message was stored (indexes its time to live and priority).
    pub(super) fn ext_stored(&mut self, slot: u64) {
        let Some(ext) = self.ext.as_deref_mut() else {
            return;
        };
        let Some(message) = self.messages.get(&slot) else {
            return;
        };
        if ext.flags.ttl {
            if let Some(secs) = number(message, TTL_ATTRIBUTE) {
                let ends = message
                    .sent_ms
                    .saturating_add((secs.max(0.0) * 1000.0) as u64);
                ext.ttl.insert((ends, slot));
                ext.ttl_of.insert(slot, ends);
            }
        }
        if let Some(ranked) = &mut ext.ranked {
            let priority = number(message, PRIORITY_ATTRIBUTE)
                .map(|p| p.round().clamp(i64::MIN as f64, i64::MAX as f64) as i64)
                .unwrap_or(0);
            if priority != 0 {
                ext.priority_of.insert(slot, priority);
            }
            if message.state() == State::Available {
                ranked.insert((Reverse(priority), slot));
            }
        }
    }

    /// Hook: a message became available (standard queues).
    pub(super) fn ext_available(&mut self, slot: u64) {
        if let Some(ext) = self.ext.as_deref_mut() {
            let key = (Reverse(ext.priority(slot)), slot);
            if let Some(ranked) = &mut ext.ranked {
                ranked.insert(key);
            }
        }
    }

    /// Hook: an available message is no longer (standard queues).
    pub(super) fn ext_unavailable(&mut self, slot: u64) {
        if let Some(ext) = self.ext.as_deref_mut() {
            let key = (Reverse(ext.priority(slot)), slot);
            if let Some(ranked) = &mut ext.ranked {
                ranked.remove(&key);
            }
        }
    }

    /// Hook: takes the available message a standard receive serves next —
    /// by priority on an opted-in queue, else the oldest.
    pub(super) fn pop_available(&mut self) -> Option<u64> {
        let ranked = self.ext.as_deref_mut().and_then(|e| e.ranked.as_mut());
        match ranked {
            Some(ranked) => {
                let (_, slot) = ranked.pop_first()?;
                self.available.remove((), slot);
                Some(slot)
            }
            None => self.available.pop_first().map(|((), slot)| slot),
        }
    }

    /// Hook: the available slots in the order a receive takes them, when
    /// priority reorders them.
    pub(super) fn ext_ranked(&self) -> Option<impl Iterator<Item = u64> + '_> {
        let ranked = self.ext.as_deref()?.ranked.as_ref()?;
        Some(ranked.iter().map(|(_, slot)| *slot))
    }

    /// Hook: a message left the store (any state).
    pub(super) fn ext_forget(&mut self, slot: u64, message: &StoredMessage) {
        let Some(ext) = self.ext.as_deref_mut() else {
            return;
        };
        let priority = ext.priority_of.remove(&slot).unwrap_or(0);
        if let Some(ranked) = &mut ext.ranked {
            if message.state() == State::Available {
                ranked.remove(&(Reverse(priority), slot));
            }
        }
        if let Some(ends) = ext.ttl_of.remove(&slot) {
            ext.ttl.remove(&(ends, slot));
        }
        ext.overdue.remove(&slot);
    }

    /// Hook, called when a delivery ends: a message whose time to live
    /// ended during it is removed now instead of becoming available.
    /// Returns whether it was.
    pub(super) fn ext_flight_ended(&mut self, slot: u64, at: Option<u64>) -> bool {
        let overdue = self
            .ext
            .as_deref_mut()
            .is_some_and(|e| e.overdue.remove(&slot));
        if overdue {
            self.remove_expired_by_ttl(slot, at);
        }
        overdue
    }

    /// Hook from `tick`: removes the messages whose time to live ended by
    /// `now`; one in flight waits for its delivery to end.
    pub(super) fn ext_tick(&mut self, now: u64) {
        loop {
            let Some(ext) = self.ext.as_deref_mut() else {
                return;
            };
            let Some(&(ends, slot)) = ext.ttl.first() else {
                return;
            };
            if ends > now {
                return;
            }
            ext.ttl.pop_first();
            ext.ttl_of.remove(&slot);
            let in_flight = matches!(
                self.messages.get(&slot).map(|m| m.state()),
                Some(State::InFlight(_))
            );
            if in_flight {
                if let Some(ext) = self.ext.as_deref_mut() {
                    ext.overdue.insert(slot);
                }
            } else {
                // Released at its deadline in this same tick: expired no
                // earlier than that (a delayed one: when its time ends).
                let since = self.messages.get(&slot).map_or(ends, |m| m.visible_since());
                self.remove_expired_by_ttl(slot, Some(ends.max(since).min(now)));
            }
        }
    }

    /// Removes a message whose time to live ended, as `expired`, noting why.
    fn remove_expired_by_ttl(&mut self, slot: u64, at: Option<u64>) {
        if self.remove_at(slot, Transition::Expired, at).is_some() {
            if let Some(event) = self.outbox.last_mut() {
                event.note = Some(Arc::from(TTL_ATTRIBUTE));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(value: &str) -> BTreeMap<String, String> {
        BTreeMap::from([(TAG.to_string(), value.to_string())])
    }

    #[test]
    fn the_tag_names_the_extensions() {
        assert_eq!(Flags::from_tags(&BTreeMap::new()), Flags::default());
        let both = Flags {
            ttl: true,
            priority: true,
        };
        assert_eq!(Flags::from_tags(&tags("all")), both);
        assert_eq!(Flags::from_tags(&tags("TTL, priority")), both);
        assert_eq!(
            Flags::from_tags(&tags("ttl,unknown")),
            Flags {
                ttl: true,
                priority: false
            }
        );
        assert!(!Flags::from_tags(&tags("nothing")).any());
    }
}
