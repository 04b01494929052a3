//! The messages map, keyed by slot.
//!
//! Slots are handed out in order, and a queue mostly holds a run of
//! consecutive ones, so the map keeps them in chunks of consecutive slots:
//! a message costs one pointer in its chunk, not a hash-table entry of its
//! own (a key, a pointer and a control byte, at the table's load factor),
//! and a chunk is freed when its last message leaves. A queue whose
//! messages are scattered one to a chunk pays a whole chunk for each,
//! which stays small beside the message it points to.
//!
//! The chunks' table hashes a chunk number keeping its low bits as they
//! are. Consecutive chunks then land in adjacent buckets and the table
//! behaves like a ring buffer; a mixing hash scattered every insert,
//! lookup and removal over the whole table, a cache miss each once the
//! queue outgrows the caches. The top seven bits, which the table
//! compares before it looks at a key, are mixed so that they still tell
//! chunks apart.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Slots per chunk: a chunk of pointers is 256 bytes, one of the
/// allocator's size classes.
const CHUNK_BITS: u32 = 5;
const CHUNK: usize = 1 << CHUNK_BITS;

struct Chunk<V> {
    slots: Box<[Option<V>; CHUNK]>,
    live: u32,
}

/// A map keyed by slot.
pub struct SlotMap<V> {
    chunks: HashMap<u64, Chunk<V>, BuildHasherDefault<SlotHasher>>,
    len: usize,
}

impl<V> Default for SlotMap<V> {
    fn default() -> SlotMap<V> {
        SlotMap {
            chunks: HashMap::default(),
            len: 0,
        }
    }
}

impl<V: std::fmt::Debug> std::fmt::Debug for SlotMap<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

fn place(slot: u64) -> (u64, usize) {
    (slot >> CHUNK_BITS, (slot & (CHUNK as u64 - 1)) as usize)
}

impl<V> SlotMap<V> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn get(&self, slot: &u64) -> Option<&V> {
        let (chunk, i) = place(*slot);
        self.chunks.get(&chunk)?.slots[i].as_ref()
    }

    pub fn get_mut(&mut self, slot: &u64) -> Option<&mut V> {
        let (chunk, i) = place(*slot);
        self.chunks.get_mut(&chunk)?.slots[i].as_mut()
    }

    /// Stores `value` in `slot`; returns what was there.
    pub fn insert(&mut self, slot: u64, value: V) -> Option<V> {
        let (chunk, i) = place(slot);
        let chunk = self.chunks.entry(chunk).or_insert_with(|| Chunk {
            slots: Box::new(std::array::from_fn(|_| None)),
            live: 0,
        });
        let old = chunk.slots[i].replace(value);
        if old.is_none() {
            chunk.live += 1;
            self.len += 1;
        }
        old
    }

    pub fn remove(&mut self, slot: &u64) -> Option<V> {
        let (number, i) = place(*slot);
        let chunk = self.chunks.get_mut(&number)?;
        let old = chunk.slots[i].take()?;
        chunk.live -= 1;
        self.len -= 1;
        if chunk.live == 0 {
            self.chunks.remove(&number);
        }
        Some(old)
    }

    /// Every (slot, value), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &V)> {
        self.chunks.iter().flat_map(|(&number, chunk)| {
            chunk
                .slots
                .iter()
                .enumerate()
                .filter_map(move |(i, v)| v.as_ref().map(|v| (number << CHUNK_BITS | i as u64, v)))
        })
    }

    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.iter().map(|(slot, _)| slot)
    }
}

impl<V> std::ops::Index<&u64> for SlotMap<V> {
    type Output = V;
    fn index(&self, slot: &u64) -> &V {
        self.get(slot).expect("no message in this slot")
    }
}

#[derive(Default)]
pub struct SlotHasher(u64);

/// The top seven bits of a hash (hashbrown's tag).
const TAG_BITS: u64 = 0x7f << 57;

impl Hasher for SlotHasher {
    fn write_u64(&mut self, slot: u64) {
        self.0 = slot ^ (slot.wrapping_mul(0x9e37_79b9_7f4a_7c15) & TAG_BITS);
    }

    /// Only `u64` keys are hashed here; any other input still hashes
    /// correctly, eight bytes at a time.
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            let slot = self.0.rotate_left(5) ^ u64::from_le_bytes(word);
            self.write_u64(slot);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn the_map_holds_what_was_put_and_frees_empty_chunks() {
        let mut m = SlotMap::default();
        let mut model = std::collections::BTreeMap::new();
        // A queue's pattern: runs of consecutive slots, removed out of
        // order, with gaps, and a few far-off slots.
        let mut x: u64 = 7;
        for step in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let slot = if x.is_multiple_of(7) {
                x >> 20
            } else {
                step / 2 + (x >> 60)
            };
            if x.is_multiple_of(3) {
                assert_eq!(m.remove(&slot), model.remove(&slot), "remove {slot}");
            } else {
                assert_eq!(
                    m.insert(slot, step),
                    model.insert(slot, step),
                    "insert {slot}"
                );
            }
            assert_eq!(m.len(), model.len());
            assert_eq!(m.get(&slot), model.get(&slot));
        }
        let mut all: Vec<(u64, u64)> = m.iter().map(|(s, v)| (s, *v)).collect();
        all.sort_unstable();
        assert_eq!(all, model.iter().map(|(s, v)| (*s, *v)).collect::<Vec<_>>());
        let live_chunks: std::collections::BTreeSet<u64> =
            model.keys().map(|s| s >> CHUNK_BITS).collect();
        assert_eq!(m.chunks.len(), live_chunks.len(), "an empty chunk was kept");
        for slot in model.keys().copied().collect::<Vec<_>>() {
            *m.get_mut(&slot).unwrap() += 1;
            assert_eq!(m.remove(&slot), model.remove(&slot).map(|v| v + 1));
        }
        assert!(m.is_empty() && m.chunks.is_empty());
    }

    #[test]
    fn consecutive_slots_keep_their_order_in_the_low_bits() {
        let build = BuildHasherDefault::<SlotHasher>::default();
        let tags: std::collections::HashSet<u64> = (1..=1000u64)
            .map(|slot| {
                let h = build.hash_one(slot);
                assert_eq!(h & !TAG_BITS, slot);
                h >> 57
            })
            .collect();
        // The tags are spread, not all zero as the slots' own top bits.
        assert!(tags.len() > 100, "{} distinct tags", tags.len());
    }
}
