//! Input rules shared by several actions: message bodies and attributes,
//! batch envelopes, FIFO ids. Messages follow AWS's wording.

use crate::api::{MessageAttributeValue, MessageAttributes};
use crate::error::{ErrorCode, SqsError};

/// Most attributes a message may carry.
pub const MAX_MESSAGE_ATTRIBUTES: usize = 10;
/// The batch payload limit, independent of the queue's MaximumMessageSize.
pub const MAX_BATCH_BYTES: usize = 1_048_576;
pub const MAX_BATCH_ENTRIES: usize = 10;

/// Characters SQS accepts in a body: #x9 | #xA | #xD | #x20–#xD7FF |
/// #xE000–#xFFFD | #x10000–#x10FFFF.
pub fn is_allowed_char(c: char) -> bool {
    matches!(c as u32, 0x9 | 0xA | 0xD | 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
}

pub fn check_body(body: Option<&str>) -> Result<&str, SqsError> {
    let body = match body {
        Some(b) if !b.is_empty() => b,
        _ => return Err(SqsError::missing("MessageBody")),
    };
    // Most bodies are plain ASCII: check bytes first, characters only if not.
    // A fold without early exit, so the compiler checks many bytes at once.
    let plain = !body.bytes().fold(false, |odd, b| {
        odd | (b >= 0x7f || (b < 0x20 && b != b'\t' && b != b'\n' && b != b'\r'))
    });
    if !plain && !body.chars().all(is_allowed_char) {
        return Err(SqsError::new(
            ErrorCode::InvalidMessageContents,
            "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF",
        ));
    }
    Ok(body)
}

/// Bytes a message counts against MaximumMessageSize: the body plus each
/// attribute's name, data type and value. System attributes don't count.
pub fn message_size(body: &str, attributes: &MessageAttributes) -> usize {
    body.len()
        + attributes
            .iter()
            .map(|(name, v)| {
                name.len()
                    + v.data_type.as_deref().map_or(0, str::len)
                    + v.string_value.as_deref().map_or(0, str::len)
                    + v.binary_value.as_deref().map_or(0, <[u8]>::len)
                    + v.string_list_values.iter().map(String::len).sum::<usize>()
                    + v.binary_list_values.iter().map(Vec::len).sum::<usize>()
            })
            .sum::<usize>()
}

/// AWS accepts letters beyond ASCII (`attr.1øßä`), not symbols such as
/// `§` or ASCII punctuation other than `_ - .`.
fn valid_attribute_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    !name.is_empty()
        && name.chars().count() <= 256
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !lower.starts_with("aws.")
        && !lower.starts_with("amazon.")
        && !name.starts_with('.')
        && !name.ends_with('.')
        && !name.contains("..")
}

/// Validates user message attributes (names, types, values).
pub fn check_message_attributes(attributes: &MessageAttributes) -> Result<(), SqsError> {
    if attributes.len() > MAX_MESSAGE_ATTRIBUTES {
        return Err(SqsError::invalid_value(format!(
            "Number of message attributes [{}] exceeds the allowed maximum [{}].",
            attributes.len(),
            MAX_MESSAGE_ATTRIBUTES
        )));
    }
    for (name, value) in attributes {
        if !valid_attribute_name(name) {
            return Err(SqsError::invalid_value(format!(
                "Message (user) attribute name '{name}' is invalid. Names may only contain alphanumeric characters, hyphens, underscores and periods, must not start or end with a period, must not contain consecutive periods and must not start with AWS. or Amazon."
            )));
        }
        check_attribute_value(name, value, "user")?;
    }
    Ok(())
}

fn check_attribute_value(
    name: &str,
    value: &MessageAttributeValue,
    kind: &str,
) -> Result<(), SqsError> {
    let data_type = match value.data_type.as_deref() {
        Some(t) if !t.is_empty() => t,
        _ => {
            return Err(SqsError::invalid_value(format!(
                "The message ({kind}) attribute '{name}' must contain a non-empty message attribute type."
            )))
        }
    };
    let base = data_type.split('.').next().unwrap_or("");
    if !matches!(base, "String" | "Number" | "Binary") || data_type.len() > 256 {
        return Err(SqsError::invalid_value(format!(
            "The type of message ({kind}) attribute '{name}' is invalid. You must use only the following supported type prefixes: Binary, Number, String."
        )));
    }
    if !value.string_list_values.is_empty() || !value.binary_list_values.is_empty() {
        return Err(SqsError::invalid_value(format!(
            "Message ({kind}) attribute '{name}' uses StringListValues or BinaryListValues, which are not supported."
        )));
    }
    match base {
        "Binary" => match &value.binary_value {
            Some(b) if !b.is_empty() => Ok(()),
            _ => Err(SqsError::invalid_value(format!(
                "Message ({kind}) attribute '{name}' must contain a non-empty value of type 'Binary'."
            ))),
        },
        _ => {
            let s = match value.string_value.as_deref() {
                Some(s) if !s.is_empty() => s,
                _ => {
                    return Err(SqsError::invalid_value(format!(
                        "Message ({kind}) attribute '{name}' must contain a non-empty value of type '{base}'."
                    )))
                }
            };
            if !s.chars().all(is_allowed_char) {
                return Err(SqsError::invalid_value(format!(
                    "Message ({kind}) attribute '{name}' contains invalid characters."
                )));
            }
            if base == "Number" && !is_sqs_number(s) {
                return Err(SqsError::invalid_value(format!(
                    "Can't cast the value of message ({kind}) attribute '{name}' to a number."
                )));
            }
            Ok(())
        }
    }
}

/// A number SQS accepts: up to 38 significant digits, -10^128..10^126.
fn is_sqs_number(s: &str) -> bool {
    let Ok(v) = s.trim().parse::<f64>() else {
        return false;
    };
    if !v.is_finite() || v.abs() > 1e126 {
        return false;
    }
    let digits = s
        .chars()
        .take_while(|c| *c != 'e' && *c != 'E')
        .filter(char::is_ascii_digit)
        .collect::<String>();
    digits.trim_start_matches('0').trim_end_matches('0').len() <= 38
}

/// Validates `MessageSystemAttributes`: only `AWSTraceHeader`, a String.
pub fn check_system_attributes(attributes: &MessageAttributes) -> Result<(), SqsError> {
    for (name, value) in attributes {
        if name != "AWSTraceHeader" {
            return Err(SqsError::invalid_value(format!(
                "Message system attribute name '{name}' is invalid."
            )));
        }
        if value.data_type.as_deref() != Some("String") {
            return Err(SqsError::invalid_value(format!(
                "Message system attribute '{name}' must be of type 'String'."
            )));
        }
        check_attribute_value(name, value, "system")?;
    }
    Ok(())
}

/// MessageGroupId / MessageDeduplicationId: 1–128 characters of
/// alphanumerics and ASCII punctuation.
pub fn check_fifo_id(parameter: &str, value: &str) -> Result<(), SqsError> {
    let ok = !value.is_empty()
        && value.len() <= 128
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c.is_ascii_punctuation());
    if ok {
        Ok(())
    } else {
        Err(SqsError::invalid_parameter(
            parameter,
            value,
            &format!(
                "{parameter} can only include alphanumeric and punctuation characters. 1 to 128 in length."
            ),
        ))
    }
}

pub fn valid_batch_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 80
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The envelope rules every batch shares: not empty, at most ten entries,
/// well-formed and distinct ids. Returns the ids in entry order.
pub fn check_batch<'a>(
    ids: impl ExactSizeIterator<Item = Option<&'a str>>,
    entry_shape: &str,
) -> Result<Vec<&'a str>, SqsError> {
    if ids.len() == 0 {
        return Err(SqsError::new(
            ErrorCode::EmptyBatchRequest,
            format!("There should be at least one {entry_shape} in the request."),
        ));
    }
    if ids.len() > MAX_BATCH_ENTRIES {
        return Err(SqsError::new(
            ErrorCode::TooManyEntriesInBatchRequest,
            format!(
                "Maximum number of entries per request are {MAX_BATCH_ENTRIES}. You have sent {}.",
                ids.len()
            ),
        ));
    }
    let ids: Vec<&str> = ids.map(|id| id.unwrap_or("")).collect();
    if ids.iter().any(|id| !valid_batch_id(id)) {
        return Err(SqsError::new(
            ErrorCode::InvalidBatchEntryId,
            "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.",
        ));
    }
    // At most ten ids: comparing each with those before it is cheaper
    // than hashing them (a hash set showed in a batch send's profile).
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            return Err(SqsError::new(
                ErrorCode::BatchEntryIdsNotDistinct,
                format!("Id {id} repeated."),
            ));
        }
    }
    Ok(ids)
}

/// Parses an integer request parameter and checks its range, with AWS's
/// "Value X for parameter P is invalid. Reason: ..." wording.
pub fn check_range(
    parameter: &str,
    value: i64,
    min: i64,
    max: i64,
    reason: &str,
) -> Result<u32, SqsError> {
    if value < min || value > max {
        return Err(SqsError::invalid_parameter(parameter, value, reason));
    }
    Ok(value as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::checksum::hex;

    #[test]
    fn body_characters_anywhere_in_a_long_body() {
        let long = "x".repeat(100);
        for allowed in [
            '\t', '\n', '\r', ' ', '~', '\u{7f}', 'é', '\u{D7FF}', '\u{E000}',
        ] {
            for at in [0, 7, 8, 63, 99] {
                let mut body = long.clone();
                body.replace_range(at..at + 1, &allowed.to_string());
                assert!(check_body(Some(&body)).is_ok(), "{allowed:?} at {at}");
            }
        }
        for bad in ['\u{0}', '\u{1f}', '\u{b}', '\u{FFFE}'] {
            for at in [0, 7, 8, 63, 99] {
                let mut body = long.clone();
                body.replace_range(at..at + 1, &bad.to_string());
                assert!(check_body(Some(&body)).is_err(), "{bad:?} at {at}");
            }
        }
        assert_eq!(hex(&[0x00, 0x9f, 0xa0, 0xff]), "009fa0ff");
    }

    #[test]
    fn body_characters() {
        assert!(check_body(Some("hello\t\n\r ünïcødé 😀")).is_ok());
        for bad in ["\u{0}", "\u{8}", "\u{13}", "\u{FFFF}"] {
            assert_eq!(
                check_body(Some(bad)).unwrap_err().code,
                ErrorCode::InvalidMessageContents
            );
        }
        assert_eq!(
            check_body(Some("")).unwrap_err().code,
            ErrorCode::MissingParameter
        );
        assert_eq!(
            check_body(None).unwrap_err().code,
            ErrorCode::MissingParameter
        );
    }

    #[test]
    fn attribute_names() {
        let latin: String = ('\u{C0}'..='\u{17F}')
            .filter(|c| c.is_alphabetic())
            .collect();
        for good in [
            "a",
            "Foo.Bar",
            "x-y_z",
            "A1",
            "attr.1øßä",
            &latin,
            &"ä".repeat(256),
        ] {
            assert!(valid_attribute_name(good), "{good}");
        }
        for bad in [
            "",
            ".a",
            "a.",
            "a..b",
            "AWS.x",
            "aWs.x",
            "amazon.y",
            "AMAZON.y",
            "sp ace",
            "a§b",
            "a!b",
            "a\"b",
            "a(b",
            "a?b",
            "a/b",
            "a:b",
            &"a".repeat(257),
        ] {
            assert!(!valid_attribute_name(bad), "{bad}");
        }
    }

    #[test]
    fn fifo_ids() {
        assert!(check_fifo_id("MessageGroupId", "g-1!~").is_ok());
        let e = check_fifo_id("MessageGroupId", "group 123").unwrap_err();
        assert_eq!(
            e.message,
            "Value group 123 for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length."
        );
        assert!(check_fifo_id("MessageGroupId", &"a".repeat(129)).is_err());
        assert!(check_fifo_id("MessageGroupId", "").is_err());
    }

    #[test]
    fn batch_envelope() {
        let none: Vec<Option<&str>> = vec![];
        assert_eq!(
            check_batch(none.into_iter(), "E").unwrap_err().code,
            ErrorCode::EmptyBatchRequest
        );
        let many: Vec<Option<&str>> = (0..11).map(|_| Some("a")).collect();
        let e = check_batch(many.into_iter(), "E").unwrap_err();
        assert_eq!(e.code, ErrorCode::TooManyEntriesInBatchRequest);
        assert_eq!(
            e.message,
            "Maximum number of entries per request are 10. You have sent 11."
        );
        assert_eq!(
            check_batch(vec![Some("a b")].into_iter(), "E")
                .unwrap_err()
                .code,
            ErrorCode::InvalidBatchEntryId
        );
        assert_eq!(
            check_batch(vec![Some("a"), Some("a")].into_iter(), "E")
                .unwrap_err()
                .code,
            ErrorCode::BatchEntryIdsNotDistinct
        );
        assert_eq!(
            check_batch(vec![Some("a"), Some("b")].into_iter(), "E").unwrap(),
            vec!["a", "b"]
        );
    }

    #[test]
    fn sizes_count_attributes() {
        let mut attrs = MessageAttributes::new();
        attrs.insert(
            "ab".into(),
            MessageAttributeValue {
                data_type: Some("String".into()),
                string_value: Some("xyz".into()),
                ..Default::default()
            },
        );
        assert_eq!(message_size("hello", &attrs), 5 + 2 + 6 + 3);
    }
}
