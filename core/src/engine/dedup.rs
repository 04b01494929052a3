//! A FIFO queue's deduplication window: the sends of the last five
//! minutes, by deduplication scope and id, kept even after their message
//! is gone.
//!
//! A busy FIFO queue remembers millions of sends, so an entry is kept
//! small: its key is one allocation (scope and id joined), the table holds
//! it inline, and the expiry order holds only the expiry and the key's
//! hash. A lookup borrows the caller's strings instead of building a key.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher, RandomState};

use hashbrown::HashTable;
use uuid::Uuid;

/// A remembered FIFO send.
#[derive(Debug, Clone, Copy)]
pub struct DedupEntry {
    pub message_id: Uuid,
    pub sequence_number: u128,
    pub expires_ms: u64,
}

/// Scope and id, joined by a byte neither may contain (both are limited
/// to printable ASCII), so two different pairs never join alike.
const JOIN: char = '\0';

#[derive(Debug)]
struct Remembered {
    key: Box<str>,
    message_id: Uuid,
    /// The sequence number in two halves: a `u128` field would align the
    /// entry to 16 bytes and pad it.
    sequence: [u64; 2],
    expires_ms: u64,
}

// Inline in the table: kept at seven words.
const _: () = assert!(std::mem::size_of::<Remembered>() == 56);

impl Remembered {
    fn is(&self, scope: &str, id: &str) -> bool {
        let key = self.key.as_bytes();
        key.len() == scope.len() + 1 + id.len()
            && key.starts_with(scope.as_bytes())
            && key[scope.len()] == JOIN as u8
            && key.ends_with(id.as_bytes())
    }

    fn entry(&self) -> DedupEntry {
        DedupEntry {
            message_id: self.message_id,
            sequence_number: (self.sequence[0] as u128) << 64 | self.sequence[1] as u128,
            expires_ms: self.expires_ms,
        }
    }
}

/// The deduplication ids seen in the window, with what their sends got.
#[derive(Debug, Default)]
pub struct Dedup {
    entries: HashTable<Remembered>,
    /// (expiry, key hash), oldest first: what `prune` forgets next.
    order: VecDeque<(u64, u64)>,
    hasher: RandomState,
}

/// The hash of a key, from its two parts (a lookup has no joined key).
fn hash(hasher: &RandomState, scope: &str, id: &str) -> u64 {
    let mut h = hasher.build_hasher();
    h.write(scope.as_bytes());
    h.write_u8(JOIN as u8);
    h.write(id.as_bytes());
    h.finish()
}

impl Dedup {
    /// Forgets what expired by `now`.
    pub fn prune(&mut self, now: u64) {
        while let Some(&(expires, hash)) = self.order.front() {
            if expires > now {
                break;
            }
            self.order.pop_front();
            // The entry may have been replaced by a later send of the
            // same key (after it expired): that one stays. Any entry with
            // this hash and this expiry has expired, so whichever one is
            // found may go.
            if let Ok(found) = self.entries.find_entry(hash, |r| r.expires_ms == expires) {
                found.remove();
            }
        }
    }

    /// The send remembered for this scope and id, if it has not expired.
    pub fn get(&self, scope: &str, id: &str, now: u64) -> Option<DedupEntry> {
        self.entries
            .find(hash(&self.hasher, scope, id), |r| r.is(scope, id))
            .filter(|r| r.expires_ms > now)
            .map(Remembered::entry)
    }

    /// Remembers a send, replacing what the same scope and id had.
    pub fn insert(&mut self, scope: &str, id: &str, entry: DedupEntry) {
        let hash = hash(&self.hasher, scope, id);
        self.order.push_back((entry.expires_ms, hash));
        let remembered = |key: Box<str>| Remembered {
            key,
            message_id: entry.message_id,
            sequence: [
                (entry.sequence_number >> 64) as u64,
                entry.sequence_number as u64,
            ],
            expires_ms: entry.expires_ms,
        };
        match self.entries.find_mut(hash, |r| r.is(scope, id)) {
            Some(r) => {
                let key = std::mem::take(&mut r.key);
                *r = remembered(key);
            }
            None => {
                let mut key = String::with_capacity(scope.len() + 1 + id.len());
                key.push_str(scope);
                key.push(JOIN);
                key.push_str(id);
                let key = key.into_boxed_str();
                let hasher = &self.hasher;
                // Growing the table rehashes each entry from its key.
                self.entries.insert_unique(hash, remembered(key), |r| {
                    let (scope, id) = r.key.split_once(JOIN).unwrap_or((&r.key, ""));
                    self::hash(hasher, scope, id)
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: u128, expires_ms: u64) -> DedupEntry {
        DedupEntry {
            message_id: Uuid::from_u128(n),
            sequence_number: n,
            expires_ms,
        }
    }

    #[test]
    fn remembers_by_scope_and_id_until_expiry() {
        let mut d = Dedup::default();
        let big = u128::MAX - 5;
        d.insert("g1", "a", entry(big, 100));
        d.insert("", "a", entry(2, 100));
        assert_eq!(d.get("g1", "a", 0).unwrap().sequence_number, big);
        assert_eq!(
            d.get("g1", "a", 0).unwrap().message_id,
            Uuid::from_u128(big)
        );
        assert_eq!(d.get("", "a", 0).unwrap().sequence_number, 2);
        // The join cannot make two pairs alike.
        assert!(d.get("g1a", "", 0).is_none());
        assert!(d.get("g", "1a", 0).is_none());
        assert!(d.get("g1", "a", 100).is_none(), "expired at its expiry");
        d.prune(99);
        assert_eq!(d.entries.len(), 2);
        d.prune(100);
        assert!(d.entries.is_empty());
    }

    #[test]
    fn a_resend_after_expiry_outlives_the_first_prune() {
        let mut d = Dedup::default();
        d.insert("", "x", entry(1, 100));
        // Seen again after the first expired, before any prune.
        d.insert("", "x", entry(2, 400));
        assert_eq!(d.entries.len(), 1);
        d.prune(150);
        assert_eq!(d.get("", "x", 150).unwrap().sequence_number, 2);
        d.prune(400);
        assert!(d.entries.is_empty());
        assert!(d.order.is_empty());
    }

    #[test]
    fn many_keys_are_each_found_and_all_pruned() {
        let mut d = Dedup::default();
        for i in 0..10_000u64 {
            d.insert(
                &format!("g{}", i % 7),
                &i.to_string(),
                entry(i as u128, i + 1),
            );
        }
        for i in (0..10_000u64).step_by(97) {
            let got = d.get(&format!("g{}", i % 7), &i.to_string(), 0).unwrap();
            assert_eq!(got.sequence_number, i as u128);
            assert!(d
                .get(&format!("g{}", (i + 1) % 7), &i.to_string(), 0)
                .is_none());
        }
        d.prune(5_000);
        assert_eq!(d.entries.len(), 5_000);
        d.prune(10_000);
        assert!(d.entries.is_empty());
    }
}
