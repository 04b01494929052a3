//! The MD5 digests SQS returns, byte-exact with AWS, so SDKs
//! that verify them (JS v3, Java v2, Go v2) accept our responses.

use md5::{Digest, Md5};

use crate::api::{MessageAttributeValue, MessageAttributes};

/// Lowercase hex MD5 of the body's UTF-8 bytes.
pub fn md5_of_body(body: &str) -> String {
    hex(&Md5::digest(body.as_bytes()))
}

/// The raw MD5 of the body, for storing compactly.
pub fn md5_bytes(body: &str) -> [u8; 16] {
    Md5::digest(body.as_bytes()).into()
}

pub fn hex(bytes: &[u8]) -> String {
    let mut out = vec![0u8; bytes.len() * 2];
    crate::api::fill_hex(bytes, &mut out);
    String::from_utf8(out).expect("hex digits are ASCII")
}

/// MD5 over a set of message attributes: names in byte order, each as
/// length-prefixed name, data type, then a transport byte and the value(s).
/// `None` when there are no attributes: AWS omits the field then.
pub fn md5_of_attributes<'a, I>(attributes: I) -> Option<String>
where
    I: IntoIterator<Item = (&'a String, &'a MessageAttributeValue)>,
{
    let mut md5 = Md5::new();
    let mut any = false;
    // BTreeMap iteration is already in byte order of the names.
    for (name, value) in attributes {
        any = true;
        put(&mut md5, name.as_bytes());
        put(
            &mut md5,
            value.data_type.as_deref().unwrap_or("").as_bytes(),
        );
        if let Some(s) = &value.string_value {
            md5.update([1u8]);
            put(&mut md5, s.as_bytes());
        } else if let Some(b) = &value.binary_value {
            md5.update([2u8]);
            put(&mut md5, b);
        } else if !value.string_list_values.is_empty() {
            md5.update([3u8]);
            for s in &value.string_list_values {
                put(&mut md5, s.as_bytes());
            }
        } else if !value.binary_list_values.is_empty() {
            md5.update([4u8]);
            for b in &value.binary_list_values {
                put(&mut md5, b);
            }
        }
    }
    any.then(|| hex(&md5.finalize()))
}

/// Convenience for a whole map.
pub fn md5_of_attribute_map(attributes: &MessageAttributes) -> Option<String> {
    md5_of_attributes(attributes.iter())
}

fn put(md5: &mut Md5, bytes: &[u8]) {
    md5.update((bytes.len() as u32).to_be_bytes());
    md5.update(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string_attr(name: &str, data_type: &str, value: &str) -> MessageAttributes {
        let mut m = MessageAttributes::new();
        m.insert(
            name.to_string(),
            MessageAttributeValue {
                data_type: Some(data_type.into()),
                string_value: Some(value.into()),
                ..Default::default()
            },
        );
        m
    }

    #[test]
    fn body_vectors() {
        assert_eq!(md5_of_body("msg"), "6e2baaf3b97dbeef01c0043275f9a0e7");
        assert_eq!(md5_of_body("message"), "78e731027d8fd50ed642340b7c9a63b3");
    }

    #[test]
    fn attribute_vectors_from_the_spec() {
        let cases = [
            ("Foo", "String", "Bar", "ae7155c6026991b6d54b11589678bf9c"),
            ("k", "String", "x", "a45daa70926828a2f0a1db3418e6feb4"),
            (
                "MyAttribute",
                "String",
                "foobar",
                "adb59cd4678ea5a855436b949cd07ab6",
            ),
            (
                "timestamp",
                "Number",
                "1493147359900",
                "235c5c510d26fb653d073faed50ae77c",
            ),
            (
                "AWSTraceHeader",
                "String",
                "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
                "5ae4d5d7636402d80f4eb6d213245a88",
            ),
        ];
        for (name, ty, value, expected) in cases {
            assert_eq!(
                md5_of_attribute_map(&string_attr(name, ty, value)).as_deref(),
                Some(expected),
                "{name}"
            );
        }
    }

    #[test]
    fn binary_vector_and_empty() {
        let mut m = MessageAttributes::new();
        m.insert(
            "attr1".into(),
            MessageAttributeValue {
                data_type: Some("Binary".into()),
                binary_value: Some(
                    b"traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01"
                        .to_vec(),
                ),
                ..Default::default()
            },
        );
        assert_eq!(
            md5_of_attribute_map(&m).as_deref(),
            Some("8cbe4db156db8a94db8b801b7addb984")
        );
        assert_eq!(md5_of_attribute_map(&MessageAttributes::new()), None);
    }
}
