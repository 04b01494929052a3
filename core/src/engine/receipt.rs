//! Receipt handles.
//!
//! A handle names one receive of one message: the queue's incarnation, the
//! message's slot and the receive's nonce. It is opaque to clients and
//! authenticated: an HMAC-SHA256 tag under a secret the server draws at
//! start closes it, so nobody can derive another consumer's handle from
//! their own (slot and nonce are small counters) and delete its message.
//! We can also tell at once a handle that is garbage, belongs to another
//! queue (or to a deleted queue of the same name), or to an earlier receive.

use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

const MAGIC: &[u8; 4] = b"RTS2";
/// 128 bits of the HMAC: forging one is a 2^-128 guess per try.
const TAG_LEN: usize = 16;
const BODY_LEN: usize = 4 + 8 + 8 + 8;
const LEN: usize = BODY_LEN + TAG_LEN;

/// The decoded content of a receipt handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Receipt {
    pub queue_uid: u64,
    pub slot: u64,
    pub nonce: u64,
}

/// The server's secret for receipt handles. The keyed HMAC state is kept
/// ready and cloned per use, so the key schedule runs once per server.
#[derive(Clone)]
pub struct ReceiptKey {
    mac: Hmac<Sha256>,
}

impl ReceiptKey {
    /// A fresh random key (a new server, or a test).
    pub fn random() -> ReceiptKey {
        ReceiptKey::from_secret(&rand::random::<[u8; 32]>())
    }

    pub fn from_secret(secret: &[u8]) -> ReceiptKey {
        ReceiptKey {
            mac: Hmac::new_from_slice(secret).expect("HMAC takes a key of any length"),
        }
    }
}

impl std::fmt::Debug for ReceiptKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReceiptKey(..)")
    }
}

fn engine() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
}

impl Receipt {
    pub fn encode(&self, key: &ReceiptKey) -> String {
        let mut bytes = Vec::with_capacity(LEN);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&self.queue_uid.to_be_bytes());
        bytes.extend_from_slice(&self.slot.to_be_bytes());
        bytes.extend_from_slice(&self.nonce.to_be_bytes());
        let mut mac = key.mac.clone();
        mac.update(&bytes);
        bytes.extend_from_slice(&mac.finalize().into_bytes()[..TAG_LEN]);
        format!("AQEB{}", engine().encode(bytes))
    }

    /// The receipt a handle names, if the handle is well formed and its tag
    /// verifies under `key` (compared in constant time).
    pub fn decode(handle: &str, key: &ReceiptKey) -> Option<Receipt> {
        let rest = handle.strip_prefix("AQEB")?;
        if rest.len() > 2 * LEN {
            return None;
        }
        let bytes = engine().decode(rest).ok()?;
        if bytes.len() != LEN || &bytes[..4] != MAGIC {
            return None;
        }
        let mut mac = key.mac.clone();
        mac.update(&bytes[..BODY_LEN]);
        mac.verify_truncated_left(&bytes[BODY_LEN..]).ok()?;
        let word = |i: usize| u64::from_be_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        Some(Receipt {
            queue_uid: word(4),
            slot: word(12),
            nonce: word(20),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejects() {
        let key = ReceiptKey::random();
        let r = Receipt {
            queue_uid: 7,
            slot: 42,
            nonce: 9,
        };
        let h = r.encode(&key);
        assert_eq!(Receipt::decode(&h, &key), Some(r));
        assert_eq!(Receipt::decode("garbage", &key), None);
        let mut tampered = h.clone();
        tampered.pop();
        tampered.push(if h.ends_with('A') { 'B' } else { 'A' });
        assert_eq!(Receipt::decode(&tampered, &key), None);
    }

    #[test]
    fn a_handle_cannot_be_forged_from_another() {
        // Knowing one's own handle (and so the layout, the queue id and the
        // counters) is not enough to make a neighbour's: every field change
        // needs the server's secret.
        let key = ReceiptKey::random();
        let mine = Receipt {
            queue_uid: 1,
            slot: 10,
            nonce: 20,
        }
        .encode(&key);
        let raw = engine().decode(mine.strip_prefix("AQEB").unwrap()).unwrap();
        let mut forged = raw.clone();
        forged[4 + 8 + 7] ^= 1; // the neighbour's slot, 11
        forged[4 + 8 + 8 + 7] ^= 1; // and nonce, 21
        let forged = format!("AQEB{}", engine().encode(&forged));
        assert_eq!(Receipt::decode(&forged, &key), None);
        // A handle made under another server's key is refused too.
        let other = Receipt {
            queue_uid: 1,
            slot: 11,
            nonce: 21,
        }
        .encode(&ReceiptKey::random());
        assert_eq!(Receipt::decode(&other, &key), None);
    }
}
