//! The JSON answers of SendMessage and SendMessageBatch, written straight
//! into their buffer.
//!
//! They are the answers of the throughput path, and every string in them
//! is one JSON never escapes: message ids, digests, sequence numbers, and
//! batch ids (which SQS limits to letters, digits, `-` and `_`). serde's
//! per-byte escape loop over those strings was a visible part of a batch
//! send's server CPU (BENCHMARKS.md). The bytes are exactly what serde writes for the same value
//! (the tests compare them); anything unusual — a failed entry, a string
//! that would need escaping — goes back to serde.

use crate::api::{SendMessageBatchResult, SendMessageResult};

/// `{"Successful":[…]}`, or `None` when serde must write it.
pub fn batch(r: &SendMessageBatchResult) -> Option<String> {
    if !r.failed.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(16 + r.successful.len() * 160);
    out.push_str("{\"Successful\":[");
    for (i, entry) in r.successful.iter().enumerate() {
        out.push_str(if i == 0 { "{" } else { ",{" });
        member(&mut out, "\"Id\":\"", &entry.id)?;
        out.push(',');
        members(&mut out, &entry.result)?;
        out.push('}');
    }
    out.push_str("]}");
    Some(out)
}

/// SendMessage's answer, or `None` when serde must write it.
pub fn single(r: &SendMessageResult) -> Option<String> {
    let mut out = String::with_capacity(160);
    out.push('{');
    members(&mut out, r)?;
    out.push('}');
    Some(out)
}

/// A result's members in serde's order (the struct's), absent ones left out.
fn members(out: &mut String, r: &SendMessageResult) -> Option<()> {
    clean_member(
        out,
        "\"MD5OfMessageBody\":\"",
        r.md5_of_message_body.text(&mut [0; 32]),
    );
    if let Some(md5) = &r.md5_of_message_attributes {
        member(out, ",\"MD5OfMessageAttributes\":\"", md5)?;
    }
    if let Some(md5) = &r.md5_of_message_system_attributes {
        member(out, ",\"MD5OfMessageSystemAttributes\":\"", md5)?;
    }
    clean_member(out, ",\"MessageId\":\"", r.message_id.text(&mut [0; 36]));
    if let Some(sequence) = &r.sequence_number {
        member(out, ",\"SequenceNumber\":\"", sequence)?;
    }
    Some(())
}

/// `"name":"value"` (`head` is `"name":"`, with a leading comma when one
/// is due); `None` if the value holds a byte JSON escapes (quote,
/// backslash, control character).
fn member(out: &mut String, head: &str, value: &str) -> Option<()> {
    let plain = !value
        .bytes()
        .fold(false, |bad, b| bad | (b < 0x20 || b == b'"' || b == b'\\'));
    if !plain {
        return None;
    }
    clean_member(out, head, value);
    Some(())
}

/// [`member`] for a value its type keeps free of such bytes (hex digits,
/// a hyphenated id).
fn clean_member(out: &mut String, head: &str, value: &str) {
    out.push_str(head);
    out.push_str(value);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{BatchResultErrorEntry, IdText, Md5Hex, SendMessageBatchResultEntry};

    fn result(attrs: bool, system: bool, sequence: bool) -> SendMessageResult {
        SendMessageResult {
            md5_of_message_body: Md5Hex(0x0cc175b9_c0f1b6a8_31c399e2_69772661_u128.to_be_bytes()),
            md5_of_message_attributes: attrs.then(|| "92eb1ce5ab8fa8b5e8d6bc2b1a9b2c6d".into()),
            md5_of_message_system_attributes: system
                .then(|| "5ae4d5d7636402d80f4eb6d213245a88".into()),
            message_id: IdText(
                uuid::Uuid::parse_str("5fea7756-0ea4-451a-a703-a558b933e274").unwrap(),
            ),
            sequence_number: sequence.then(|| "18849496460467696128".into()),
        }
    }

    #[test]
    fn writes_what_serde_writes() {
        for bits in 0..8 {
            let r = result(bits & 1 != 0, bits & 2 != 0, bits & 4 != 0);
            assert_eq!(
                single(&r).unwrap(),
                serde_json::to_string(&r).unwrap(),
                "{bits}"
            );
            for n in [0, 1, 10] {
                let batch_result = SendMessageBatchResult {
                    successful: (0..n)
                        .map(|i| SendMessageBatchResultEntry {
                            id: format!("entry-{i}_x"),
                            result: r.clone(),
                        })
                        .collect(),
                    failed: Vec::new(),
                };
                assert_eq!(
                    batch(&batch_result).unwrap(),
                    serde_json::to_string(&batch_result).unwrap(),
                    "{bits} {n}"
                );
            }
        }
    }

    #[test]
    fn leaves_anything_unusual_to_serde() {
        let mut r = result(false, false, false);
        for odd in ["a\"b", "a\\b", "a\nb"] {
            r.sequence_number = Some(odd.into());
            assert!(single(&r).is_none());
        }
        let failed = SendMessageBatchResult {
            successful: Vec::new(),
            failed: vec![BatchResultErrorEntry::default()],
        };
        assert!(batch(&failed).is_none());
    }
}
