//! Receipt handles.
//!
//! A handle names one receive of one message: the queue's incarnation, the
//! message's slot and the receive's nonce. It is opaque to clients, but we
//! can tell at once a handle that is garbage, belongs to another queue (or
//! to a deleted queue of the same name), or belongs to an earlier receive.

use base64::Engine as _;

const MAGIC: &[u8; 4] = b"RTS1";
const LEN: usize = 4 + 8 + 8 + 8 + 8;

/// The decoded content of a receipt handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Receipt {
    pub queue_uid: u64,
    pub seq: u64,
    pub nonce: u64,
}

fn engine() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
}

/// A cheap integrity check so that random strings of the right length
/// are not mistaken for handles.
fn check(bytes: &[u8]) -> u64 {
    // FNV-1a, keyed with the magic; not a secret, only a guard.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Receipt {
    pub fn encode(&self) -> String {
        let mut bytes = Vec::with_capacity(LEN);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&self.queue_uid.to_be_bytes());
        bytes.extend_from_slice(&self.seq.to_be_bytes());
        bytes.extend_from_slice(&self.nonce.to_be_bytes());
        let sum = check(&bytes);
        bytes.extend_from_slice(&sum.to_be_bytes());
        format!("AQEB{}", engine().encode(bytes))
    }

    pub fn decode(handle: &str) -> Option<Receipt> {
        let rest = handle.strip_prefix("AQEB")?;
        let bytes = engine().decode(rest).ok()?;
        if bytes.len() != LEN || &bytes[..4] != MAGIC {
            return None;
        }
        let word = |i: usize| u64::from_be_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        if check(&bytes[..LEN - 8]) != word(LEN - 8) {
            return None;
        }
        Some(Receipt {
            queue_uid: word(4),
            seq: word(12),
            nonce: word(20),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejects() {
        let r = Receipt {
            queue_uid: 7,
            seq: 42,
            nonce: 9,
        };
        let h = r.encode();
        assert_eq!(Receipt::decode(&h), Some(r));
        assert_eq!(Receipt::decode("garbage"), None);
        let mut tampered = h.clone();
        tampered.pop();
        tampered.push(if h.ends_with('A') { 'B' } else { 'A' });
        assert_eq!(Receipt::decode(&tampered), None);
    }
}
