//! The hash of the messages map: slots are handed out in order, and a
//! queue mostly holds a run of consecutive ones, so the hash keeps a slot's
//! low bits as they are. Consecutive messages then land in adjacent buckets
//! (four to a cache line) and the map behaves like a ring buffer; a mixing
//! hash scattered every insert, lookup and removal over the whole table,
//! a cache miss each once the queue outgrows the caches. The top
//! seven bits, which the table compares before it looks at a key, are
//! mixed so that they still tell slots apart.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map keyed by slot.
pub type SlotMap<V> = HashMap<u64, V, BuildHasherDefault<SlotHasher>>;

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
