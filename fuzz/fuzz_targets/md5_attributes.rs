//! The MD5 of message attributes (spec §4.3) against an independent
//! implementation of the same rule, for any attribute map the input
//! describes: the two must agree byte for byte, and neither may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use md5::{Digest, Md5};
use retsu::api::{MessageAttributeValue, MessageAttributes};

/// Reads length-prefixed pieces from the input.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let (b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(*b)
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = (self.byte()? as usize).min(self.0.len());
        let (b, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(b)
    }

    fn text(&mut self) -> Option<String> {
        self.bytes()
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }
}

fn attributes(data: &[u8]) -> MessageAttributes {
    let mut r = Reader(data);
    let mut out = MessageAttributes::new();
    while let (Some(name), Some(kind), Some(data_type)) = (r.text(), r.byte(), r.text()) {
        let mut v = MessageAttributeValue {
            data_type: (kind & 0x10 == 0).then_some(data_type),
            ..Default::default()
        };
        match kind % 4 {
            0 => v.string_value = r.text(),
            1 => v.binary_value = r.bytes().map(<[u8]>::to_vec),
            2 => {
                for _ in 0..r.byte().unwrap_or(0) % 4 {
                    v.string_list_values.extend(r.text());
                }
            }
            _ => {
                for _ in 0..r.byte().unwrap_or(0) % 4 {
                    v.binary_list_values.extend(r.bytes().map(<[u8]>::to_vec));
                }
            }
        }
        out.insert(name, v);
    }
    out
}

/// The rule as AWS documents it: attributes sorted by name; each as
/// name, data type (4-byte big-endian length + bytes), a transport byte
/// (1 string, 2 binary, 3 string list, 4 binary list) and the value(s),
/// each length-prefixed likewise.
fn reference(attributes: &MessageAttributes) -> Option<String> {
    if attributes.is_empty() {
        return None;
    }
    let mut names: Vec<&String> = attributes.keys().collect();
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let mut buf = Vec::new();
    let put = |buf: &mut Vec<u8>, b: &[u8]| {
        buf.extend_from_slice(&(b.len() as u32).to_be_bytes());
        buf.extend_from_slice(b);
    };
    for name in names {
        let v = &attributes[name];
        put(&mut buf, name.as_bytes());
        put(&mut buf, v.data_type.as_deref().unwrap_or("").as_bytes());
        if let Some(s) = &v.string_value {
            buf.push(1);
            put(&mut buf, s.as_bytes());
        } else if let Some(b) = &v.binary_value {
            buf.push(2);
            put(&mut buf, b);
        } else if !v.string_list_values.is_empty() {
            buf.push(3);
            for s in &v.string_list_values {
                put(&mut buf, s.as_bytes());
            }
        } else if !v.binary_list_values.is_empty() {
            buf.push(4);
            for b in &v.binary_list_values {
                put(&mut buf, b);
            }
        }
    }
    let digest = Md5::digest(&buf);
    Some(digest.iter().map(|b| format!("{b:02x}")).collect())
}

fuzz_target!(|data: &[u8]| {
    let attributes = attributes(data);
    assert_eq!(
        retsu::engine::md5_of_attribute_map(&attributes),
        reference(&attributes)
    );
});
