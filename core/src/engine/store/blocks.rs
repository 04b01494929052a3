//! An ordered set of (key, slot) pairs that keeps slots 64 to a word.
//!
//! Why: a standard queue's available messages and every queue's messages
//! by age are sets that each new message joins at the end, with a slot one
//! above the last one's (and, by age, mostly the same enqueue millisecond).
//! As `BTreeSet`s, each such insert searched the tree from its root: about
//! hundreds of instructions, twice per message sent, and tens of bytes of
//! tree nodes per message (BENCHMARKS.md has the measurements). Here the slots of one key that
//! share all but their low six bits share one 64-bit word, and the greatest
//! word is kept out of the tree, so joining at the end usually sets a bit.
//! Every operation stays O(log n); order is that of the (key, slot) pairs.

use std::collections::btree_map::{BTreeMap, Entry};

/// A word's place: the key and the slot without its low six bits.
type Block<K> = (K, u64);

#[derive(Debug, Clone)]
pub struct BlockSet<K> {
    /// Every word but the greatest; no word is zero.
    tree: BTreeMap<Block<K>, u64>,
    /// The greatest word, where appends land. Greater than every block in
    /// `tree` whenever it is set.
    tail: Option<(Block<K>, u64)>,
}

impl<K> Default for BlockSet<K> {
    fn default() -> BlockSet<K> {
        BlockSet {
            tree: BTreeMap::new(),
            tail: None,
        }
    }
}

fn split(slot: u64) -> (u64, u64) {
    (slot >> 6, 1 << (slot & 63))
}

fn join(block: u64, word: u64) -> u64 {
    block << 6 | u64::from(word.trailing_zeros())
}

impl<K: Ord + Copy> BlockSet<K> {
    /// Adds the pair; `false` if it was there already.
    pub fn insert(&mut self, key: K, slot: u64) -> bool {
        let (block, bit) = split(slot);
        let at = (key, block);
        if let Some((tail, word)) = self.tail.as_mut() {
            if *tail == at {
                let new = *word & bit == 0;
                *word |= bit;
                return new;
            }
            if at > *tail {
                let old = (*tail, *word);
                self.tree.insert(old.0, old.1);
                self.tail = Some((at, bit));
                return true;
            }
        } else if self
            .tree
            .last_key_value()
            .is_none_or(|(last, _)| at > *last)
        {
            self.tail = Some((at, bit));
            return true;
        }
        let word = self.tree.entry(at).or_insert(0);
        let new = *word & bit == 0;
        *word |= bit;
        new
    }

    /// Removes the pair; `false` if it was not there.
    pub fn remove(&mut self, key: K, slot: u64) -> bool {
        let (block, bit) = split(slot);
        let at = (key, block);
        if let Some((tail, word)) = self.tail.as_mut() {
            if *tail == at {
                let had = *word & bit != 0;
                *word &= !bit;
                if *word == 0 {
                    self.tail = None;
                }
                return had;
            }
        }
        let Entry::Occupied(mut entry) = self.tree.entry(at) else {
            return false;
        };
        let word = entry.get_mut();
        let had = *word & bit != 0;
        *word &= !bit;
        if *word == 0 {
            entry.remove();
        }
        had
    }

    /// The least pair.
    pub fn first(&self) -> Option<(K, u64)> {
        let (&(key, block), &word) = self
            .tree
            .first_key_value()
            .or(self.tail.as_ref().map(|(at, word)| (at, word)))?;
        Some((key, join(block, word)))
    }

    /// Removes and returns the least pair.
    pub fn pop_first(&mut self) -> Option<(K, u64)> {
        if let Some(mut entry) = self.tree.first_entry() {
            let (key, block) = *entry.key();
            let word = entry.get_mut();
            let slot = join(block, *word);
            *word &= *word - 1;
            if *word == 0 {
                entry.remove();
            }
            return Some((key, slot));
        }
        let ((key, block), word) = self.tail.as_mut()?;
        let (key, slot) = (*key, join(*block, *word));
        *word &= *word - 1;
        if *word == 0 {
            self.tail = None;
        }
        Some((key, slot))
    }

    /// Every pair, in order.
    pub fn iter(&self) -> impl Iterator<Item = (K, u64)> + '_ {
        self.tree
            .iter()
            .map(|(at, word)| (*at, *word))
            .chain(self.tail)
            .flat_map(|((key, block), mut word)| {
                std::iter::from_fn(move || {
                    (word != 0).then(|| {
                        let slot = join(block, word);
                        word &= word - 1;
                        (key, slot)
                    })
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, u64),
        Remove(u8, u64),
        PopFirst,
    }

    fn op() -> impl Strategy<Value = Op> {
        // Few keys and slots near each other, as in a queue, with some far
        // away, so words fill, empty and move between tree and tail.
        let slot = prop_oneof![0u64..200, 0u64..u64::MAX];
        prop_oneof![
            4 => (0u8..3, slot.clone()).prop_map(|(k, s)| Op::Insert(k, s)),
            2 => (0u8..3, slot).prop_map(|(k, s)| Op::Remove(k, s)),
            1 => Just(Op::PopFirst),
        ]
    }

    proptest! {
        #[test]
        fn behaves_as_an_ordered_set(ops in proptest::collection::vec(op(), 1..400)) {
            let mut set = BlockSet::default();
            let mut model = BTreeSet::new();
            for op in ops {
                match op {
                    Op::Insert(k, s) => prop_assert_eq!(set.insert(k, s), model.insert((k, s))),
                    Op::Remove(k, s) => prop_assert_eq!(set.remove(k, s), model.remove(&(k, s))),
                    Op::PopFirst => prop_assert_eq!(set.pop_first(), model.pop_first()),
                }
                prop_assert_eq!(set.first(), model.first().copied());
            }
            prop_assert_eq!(set.iter().collect::<Vec<_>>(), model.into_iter().collect::<Vec<_>>());
        }
    }

    #[test]
    fn appends_stay_in_the_tail() {
        let mut set = BlockSet::default();
        for slot in 0..64 {
            set.insert(7u64, slot);
        }
        assert!(set.tree.is_empty());
        set.insert(7, 64);
        assert_eq!(set.tree.len(), 1);
        assert_eq!(set.first(), Some((7, 0)));
    }
}
