use super::*;
use serde_json::json;

fn p(pairs: &[(&str, &str)]) -> Params {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn convert(action: Action, pairs: &[(&str, &str)]) -> Value {
    to_json(action, &p(pairs)).expect("converts")
}

/// The copy-as-is path must read every form exactly as the crate does.
#[test]
fn plain_pairs_read_as_form_urlencoded_reads_them() {
    let forms: &[&[u8]] = &[
        b"",
        b"&&",
        b"Action=Publish&&Message=hello&",
        b"a=b=c&flag&=v&k=",
        b"Message=caf\xc3\xa9&TopicArn=arn%3Aaws%3Asns",
        b"bad=\xff\xfe&next=ok",
        b"plus=a+b&pct=%41%zz%&both=%2B+",
        b"name%3D=x%26y",
        b"e=%C3%A9+%E2%82%AC&cut=%E2%82&bad=%FF%FE+x&raw=\xc3(",
        b"%=%&%%=%2&+=+&a+b%2Bc=d%20e",
    ];
    for form in forms {
        let mut got = Params::new();
        pairs(form, &mut got);
        let want: Params = form_urlencoded::parse(form).into_owned().collect();
        assert_eq!(got, want, "form {:?}", String::from_utf8_lossy(form));
    }
}

#[test]
fn merges_query_string_and_form_body_with_plus_as_space() {
    let mut headers = HeaderMap::new();
    headers.insert(
        "content-type",
        "application/x-www-form-urlencoded; charset=utf-8"
            .parse()
            .unwrap(),
    );
    let got = params(
        Some("Action=SendMessage&QueueUrl=http%3A%2F%2Fh%2F1%2Fq"),
        &headers,
        b"MessageBody=a+b%26c%0D&Version=2012-11-05",
    );
    assert_eq!(
        got,
        p(&[
            ("Action", "SendMessage"),
            ("QueueUrl", "http://h/1/q"),
            ("MessageBody", "a b&c\r"),
            ("Version", "2012-11-05"),
        ])
    );
    assert_eq!(param(&got, "MessageBody"), Some("a b&c\r"));
}

#[test]
fn body_with_foreign_content_type_is_not_a_form() {
    let mut headers = HeaderMap::new();
    headers.insert("content-type", "text/plain".parse().unwrap());
    assert!(params(None, &headers, b"Action=ListQueues").is_empty());
    assert_eq!(
        params(None, &HeaderMap::new(), b"Action=ListQueues").len(),
        1
    );
}

#[test]
fn scalars_keep_names_and_stay_strings() {
    let v = convert(
        Action::ReceiveMessage,
        &[
            ("Action", "ReceiveMessage"),
            ("Version", "2012-11-05"),
            ("QueueUrl", "http://h/000000000000/q"),
            ("MaxNumberOfMessages", "10"),
            ("WaitTimeSeconds", "2"),
        ],
    );
    assert_eq!(
        v,
        json!({"QueueUrl": "http://h/000000000000/q", "MaxNumberOfMessages": "10", "WaitTimeSeconds": "2"})
    );
}

#[test]
fn queue_attributes_become_a_map() {
    let v = convert(
        Action::CreateQueue,
        &[
            ("QueueName", "q"),
            ("Attribute.2.Name", "DelaySeconds"),
            ("Attribute.2.Value", "5"),
            ("Attribute.1.Name", "VisibilityTimeout"),
            ("Attribute.1.Value", "60"),
        ],
    );
    assert_eq!(
        v,
        json!({"QueueName": "q", "Attributes": {"VisibilityTimeout": "60", "DelaySeconds": "5"}})
    );
}

#[test]
fn tags_are_lowercase_on_create_queue_only() {
    let create = convert(
        Action::CreateQueue,
        &[
            ("Tag.1.Key", "k1"),
            ("Tag.1.Value", "v1"),
            ("Tag.2.Key", "k2"),
        ],
    );
    assert_eq!(create, json!({"tags": {"k1": "v1", "k2": ""}}));
    let tag = convert(
        Action::TagQueue,
        &[("Tag.1.Key", "k"), ("Tag.1.Value", "v")],
    );
    assert_eq!(tag, json!({"Tags": {"k": "v"}}));
    let untag = convert(Action::UntagQueue, &[("TagKey.2", "b"), ("TagKey.1", "a")]);
    assert_eq!(untag, json!({"TagKeys": ["a", "b"]}));
}

#[test]
fn lists_are_ordered_by_numeric_index_not_text() {
    let pairs: Vec<(String, String)> = (1..=11)
        .rev()
        .map(|i| (format!("AttributeName.{i}"), format!("n{i}")))
        .collect();
    let v = to_json(Action::GetQueueAttributes, &pairs).unwrap();
    let names: Vec<String> = (1..=11).map(|i| format!("n{i}")).collect();
    assert_eq!(v, json!({ "AttributeNames": names }));
}

#[test]
fn bare_empty_value_is_an_empty_list() {
    let v = convert(Action::GetQueueAttributes, &[("AttributeNames", "")]);
    assert_eq!(v, json!({"AttributeNames": []}));
    let v = convert(Action::DeleteMessageBatch, &[("Entries", "")]);
    assert_eq!(v, json!({"Entries": []}));
    let v = convert(Action::GetQueueAttributes, &[("AttributeName", "")]);
    assert!(
        v.get("AttributeNames")
            .is_none_or(|l| l.as_array().is_some_and(Vec::is_empty)),
        "{v}"
    );
    let v = convert(
        Action::SendMessageBatch,
        &[("SendMessageBatchRequestEntry", "")],
    );
    assert!(
        v.get("Entries")
            .is_none_or(|l| l.as_array().is_some_and(Vec::is_empty)),
        "{v}"
    );
}

#[test]
fn bare_name_is_index_one() {
    let v = convert(Action::GetQueueAttributes, &[("AttributeName", "All")]);
    assert_eq!(v, json!({"AttributeNames": ["All"]}));
    let v = convert(
        Action::SetQueueAttributes,
        &[("Attribute.Name", "DelaySeconds"), ("Attribute.Value", "1")],
    );
    assert_eq!(v, json!({"Attributes": {"DelaySeconds": "1"}}));
    let v = convert(
        Action::SendMessage,
        &[
            ("MessageAttribute.Name", "a"),
            ("MessageAttribute.Value.DataType", "String"),
            ("MessageAttribute.Value.StringValue", "x"),
        ],
    );
    assert_eq!(
        v,
        json!({"MessageAttributes": {"a": {"DataType": "String", "StringValue": "x"}}})
    );
}

#[test]
fn receive_message_name_lists() {
    let v = convert(
        Action::ReceiveMessage,
        &[
            ("AttributeName.1", "SenderId"),
            ("MessageSystemAttributeName.1", "All"),
            ("MessageAttributeName.1", "Foo.*"),
            ("MessageAttributeName.2", "Bar"),
        ],
    );
    assert_eq!(
        v,
        json!({
            "AttributeNames": ["SenderId"],
            "MessageSystemAttributeNames": ["All"],
            "MessageAttributeNames": ["Foo.*", "Bar"],
        })
    );
}

#[test]
fn message_attributes_of_every_kind() {
    let v = convert(
        Action::SendMessage,
        &[
            ("MessageBody", "hi"),
            ("MessageAttribute.1.Name", "s"),
            ("MessageAttribute.1.Value.DataType", "String"),
            ("MessageAttribute.1.Value.StringValue", "x"),
            ("MessageAttribute.2.Name", "b"),
            ("MessageAttribute.2.Value.DataType", "Binary.gif"),
            // "AA+/" sent with an unencoded plus arrives as "AA /".
            ("MessageAttribute.2.Value.BinaryValue", "AA /"),
            ("MessageAttribute.3.Name", "sl"),
            ("MessageAttribute.3.Value.DataType", "String"),
            ("MessageAttribute.3.Value.StringListValue.2", "second"),
            ("MessageAttribute.3.Value.StringListValue.1", "first"),
            ("MessageAttribute.4.Name", "bl"),
            ("MessageAttribute.4.Value.DataType", "Binary"),
            ("MessageAttribute.4.Value.BinaryListValue.1", "AAE="),
            ("MessageSystemAttribute.1.Name", "AWSTraceHeader"),
            ("MessageSystemAttribute.1.Value.DataType", "String"),
            ("MessageSystemAttribute.1.Value.StringValue", "Root=1-abc"),
        ],
    );
    assert_eq!(
        v,
        json!({
            "MessageBody": "hi",
            "MessageAttributes": {
                "s": {"DataType": "String", "StringValue": "x"},
                "b": {"DataType": "Binary.gif", "BinaryValue": "AA+/"},
                "sl": {"DataType": "String", "StringListValues": ["first", "second"]},
                "bl": {"DataType": "Binary", "BinaryListValues": ["AAE="]},
            },
            "MessageSystemAttributes": {
                "AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-abc"}
            },
        })
    );
    // And the typed decoder accepts it, binary decoded from base64.
    match Action::SendMessage.decode(v).unwrap() {
        Request::SendMessage(r) => {
            assert_eq!(
                r.message_attributes["b"].binary_value,
                Some(vec![0, 15, 191])
            );
            assert_eq!(
                r.message_attributes["bl"].binary_list_values,
                vec![vec![0, 1]]
            );
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn batch_entries_with_nested_attributes_in_index_order() {
    let v = convert(
        Action::SendMessageBatch,
        &[
            ("QueueUrl", "http://h/000000000000/q"),
            ("SendMessageBatchRequestEntry.10.Id", "ten"),
            ("SendMessageBatchRequestEntry.10.MessageBody", "b10"),
            ("SendMessageBatchRequestEntry.2.Id", "two"),
            ("SendMessageBatchRequestEntry.2.MessageBody", "b2"),
            ("SendMessageBatchRequestEntry.2.DelaySeconds", "3"),
            (
                "SendMessageBatchRequestEntry.2.MessageAttribute.1.Name",
                "a",
            ),
            (
                "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType",
                "Number",
            ),
            (
                "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.StringValue",
                "1",
            ),
            (
                "SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Name",
                "AWSTraceHeader",
            ),
            (
                "SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Value.DataType",
                "String",
            ),
            (
                "SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Value.StringValue",
                "Root=1",
            ),
            ("SendMessageBatchRequestEntry.2.MessageGroupId", "g"),
            ("SendMessageBatchRequestEntry.2.MessageDeduplicationId", "d"),
        ],
    );
    assert_eq!(
        v,
        json!({
            "QueueUrl": "http://h/000000000000/q",
            "Entries": [
                {
                    "Id": "two", "MessageBody": "b2", "DelaySeconds": "3",
                    "MessageAttributes": {"a": {"DataType": "Number", "StringValue": "1"}},
                    "MessageSystemAttributes": {"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1"}},
                    "MessageGroupId": "g", "MessageDeduplicationId": "d",
                },
                {"Id": "ten", "MessageBody": "b10"},
            ]
        })
    );
    match Action::SendMessageBatch.decode(v).unwrap() {
        Request::SendMessageBatch(r) => {
            let entries = r.entries.unwrap();
            assert_eq!(entries[0].delay_seconds, Some(3));
            assert_eq!(entries[1].id.as_deref(), Some("ten"));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn delete_and_visibility_batch_entries() {
    let v = convert(
        Action::DeleteMessageBatch,
        &[
            ("DeleteMessageBatchRequestEntry.1.Id", "a"),
            ("DeleteMessageBatchRequestEntry.1.ReceiptHandle", "rh"),
        ],
    );
    assert_eq!(v, json!({"Entries": [{"Id": "a", "ReceiptHandle": "rh"}]}));
    let v = convert(
        Action::ChangeMessageVisibilityBatch,
        &[
            ("ChangeMessageVisibilityBatchRequestEntry.1.Id", "a"),
            (
                "ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle",
                "rh",
            ),
            (
                "ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout",
                "9",
            ),
        ],
    );
    match Action::ChangeMessageVisibilityBatch.decode(v).unwrap() {
        Request::ChangeMessageVisibilityBatch(r) => {
            assert_eq!(r.entries.unwrap()[0].visibility_timeout, Some(9));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn add_permission_lists() {
    let v = convert(
        Action::AddPermission,
        &[
            ("Label", "l"),
            ("AWSAccountId.1", "111111111111"),
            ("AWSAccountId.2", "222222222222"),
            ("ActionName.1", "SendMessage"),
        ],
    );
    assert_eq!(
        v,
        json!({"Label": "l", "AWSAccountIds": ["111111111111", "222222222222"], "Actions": ["SendMessage"]})
    );
}

#[test]
fn map_entry_without_a_name_is_missing_parameter() {
    let err = to_json(
        Action::SetQueueAttributes,
        &p(&[("Attribute.3.Value", "1")]),
    )
    .unwrap_err();
    assert_eq!(err.code, crate::error::ErrorCode::MissingParameter);
    assert_eq!(
        err.message,
        "The request must contain the parameter Attribute.3.Name."
    );
    let err = to_json(
        Action::SendMessageBatch,
        &p(&[(
            "SendMessageBatchRequestEntry.1.MessageAttribute.2.Value.DataType",
            "String",
        )]),
    )
    .unwrap_err();
    assert!(err
        .message
        .contains("SendMessageBatchRequestEntry.1.MessageAttribute.2.Name"));
}

#[test]
fn odd_keys_never_panic() {
    for key in [
        "",
        ".",
        "..",
        "MessageAttribute..Name",
        "MessageAttribute.99999999999999999999999.Name",
        "MessageAttribute.1.Value.StringListValue.x.y",
        "SendMessageBatchRequestEntry",
        "Attribute",
    ] {
        // Either a document or an AWS error; never a panic.
        let _ = to_json(Action::SendMessage, &p(&[(key, "v")]));
    }
    let v = convert(Action::SendMessage, &[("", "x"), (".", "y")]);
    assert!(v.is_object());
}

#[test]
fn parameter_names_deeper_than_any_shape_are_refused_without_recursion() {
    for key in [
        ".".repeat(100_000),
        "Attribute.1".repeat(50_000),
        "MessageAttribute.1.Value.StringListValue.1.x.y.z.w".to_string(),
    ] {
        let err = to_json(Action::ListQueues, &p(&[(key.as_str(), "x")])).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidQueryParameter, "{err}");
        assert!(err.message.len() < 200, "{}", err.message);
    }
    // The deepest real shape still decodes.
    let v = convert(
        Action::SendMessageBatch,
        &[
            (
                "SendMessageBatchRequestEntry.1.MessageAttribute.1.Name",
                "a",
            ),
            (
                "SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringListValue.1",
                "s",
            ),
        ],
    );
    assert_eq!(
        v["Entries"][0]["MessageAttributes"]["a"]["StringListValues"][0], "s",
        "{v}"
    );
}

#[test]
fn bad_list_indexes_name_the_parameter_and_value() {
    for (key, shown) in [
        ("Attribute.-1.Name", "Value -1 for parameter Attribute.-1 is invalid."),
        ("Attribute.0.Name", "Value 0 for parameter Attribute.0 is invalid."),
        (
            "MessageAttribute.99999999999999999999999.Name",
            "Value 99999999999999999999999 for parameter MessageAttribute.99999999999999999999999 is invalid.",
        ),
    ] {
        let err = to_json(Action::SetQueueAttributes, &p(&[(key, "v")])).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidParameterValue);
        assert!(err.message.starts_with(shown), "{}", err.message);
    }
}

#[test]
fn integers_are_checked_with_the_parameter_name_and_value_as_sent() {
    for value in [
        "abc",
        "9223372036854775807",
        "99999999999999999999",
        "2147483648",
        "1.5",
        "",
    ] {
        let err = decode(
            Action::ReceiveMessage,
            &p(&[("QueueUrl", "q"), ("WaitTimeSeconds", value)]),
            None,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidParameterValue);
        assert!(
            err.message.starts_with(&format!(
                "Value {value} for parameter WaitTimeSeconds is invalid."
            )),
            "{}",
            err.message
        );
    }
    let err = decode(
        Action::SendMessageBatch,
        &p(&[
            ("QueueUrl", "q"),
            ("SendMessageBatchRequestEntry.1.Id", "a"),
            ("SendMessageBatchRequestEntry.1.MessageBody", "b"),
            ("SendMessageBatchRequestEntry.1.DelaySeconds", "x"),
        ]),
        None,
    )
    .unwrap_err();
    assert!(
        err.message.starts_with(
            "Value x for parameter SendMessageBatchRequestEntry.1.DelaySeconds is invalid."
        ),
        "{}",
        err.message
    );
    assert!(decode(
        Action::ReceiveMessage,
        &p(&[("QueueUrl", "q"), ("WaitTimeSeconds", "-5")]),
        None
    )
    .is_ok());
}

#[test]
fn serde_complaints_become_invalid_parameter_value() {
    let err = decode(
        Action::SendMessage,
        &p(&[
            ("QueueUrl", "q"),
            ("MessageBody", "b"),
            ("MessageAttribute.1.Name", "a"),
            ("MessageAttribute.1.Value.DataType", "Binary"),
            ("MessageAttribute.1.Value.BinaryValue", "!!!"),
        ]),
        None,
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidParameterValue, "{err}");
    assert!(!err.message.contains("line 1"), "{}", err.message);
}

#[test]
fn queue_url_from_path_unless_given() {
    let url = Some("http://h:1/000000000000/q".to_string());
    match decode(Action::DeleteQueue, &p(&[]), url.clone()).unwrap() {
        Request::DeleteQueue(r) => assert_eq!(r.queue_url, url),
        other => panic!("unexpected {other:?}"),
    }
    match decode(
        Action::DeleteQueue,
        &p(&[("QueueUrl", "http://x/1/other")]),
        url.clone(),
    )
    .unwrap()
    {
        Request::DeleteQueue(r) => assert_eq!(r.queue_url.as_deref(), Some("http://x/1/other")),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn queue_paths() {
    assert_eq!(queue_path("/"), None);
    assert_eq!(queue_path(""), None);
    assert_eq!(
        queue_path("/000000000000/q"),
        Some("/000000000000/q".into())
    );
    assert_eq!(
        queue_path("/000000000000/q/"),
        Some("/000000000000/q".into())
    );
    assert_eq!(
        queue_path("/queue/us-east-1/000000000000/q.fifo"),
        Some("/queue/us-east-1/000000000000/q.fifo".into())
    );
    assert_eq!(queue_path("/a/b/c"), None);
}

/// Plain parameters written straight to JSON text decode exactly as they
/// do through the tree, errors included.
#[test]
fn plain_parameters_decode_as_through_the_tree() {
    let url = "http://h:1/000000000000/q";
    type Case<'a> = (Action, &'a [(&'a str, &'a str)], Option<&'a str>);
    let cases: &[Case] = &[
        (
            Action::SendMessage,
            &[
                ("Action", "SendMessage"),
                ("QueueUrl", url),
                ("MessageBody", "hi"),
            ],
            None,
        ),
        (
            Action::SendMessage,
            &[
                ("MessageBody", "q\"uote \\ back\u{1} \u{e9}\u{20ac}\n"),
                ("DelaySeconds", "5"),
                ("Version", "2012-11-05"),
            ],
            Some(url),
        ),
        (
            Action::SendMessage,
            &[("MessageBody", ""), ("DelaySeconds", "x")],
            Some(url),
        ),
        (
            Action::SendMessage,
            &[("VisibilityTimeout", "9999999999"), ("DelaySeconds", "y")],
            None,
        ),
        (
            Action::SendMessage,
            &[("", "x"), ("Unknown", "1")],
            Some(url),
        ),
        (Action::DeleteMessage, &[("ReceiptHandle", "r")], Some(url)),
        (Action::DeleteMessage, &[("QueueUrl", url)], None),
        (
            Action::ReceiveMessage,
            &[("WaitTimeSeconds", "20")],
            Some(url),
        ),
        (
            Action::GetQueueUrl,
            &[("QueueName", "q"), ("QueueOwnerAWSAccountId", "1")],
            None,
        ),
        (Action::ListQueues, &[("MaxResults", "+5")], None),
        (Action::PurgeQueue, &[], Some(url)),
        (Action::PurgeQueue, &[], None),
    ];
    for (action, pairs, path) in cases {
        let params = p(pairs);
        assert!(
            flat_text(*action, &params, *path).is_some(),
            "{pairs:?} is plain"
        );
        let straight = decode(*action, &params, path.map(str::to_string));
        let tree = through_tree(*action, &params, path.map(str::to_string));
        assert_eq!(format!("{straight:?}"), format!("{tree:?}"), "{pairs:?}");
    }
    // Not plain: a repeated name (the last one holds), an empty
    // collection, a list, a dotted name.
    for pairs in [
        &[("MessageBody", "a"), ("MessageBody", "b")][..],
        &[("AttributeNames", "")],
        &[("AttributeName", "All")],
        &[("MessageAttribute.1.Name", "n")],
    ] {
        let params = p(pairs);
        assert!(
            flat_text(Action::ReceiveMessage, &params, None).is_none(),
            "{pairs:?}"
        );
    }
    let last = decode(
        Action::SendMessage,
        &p(&[
            ("QueueUrl", url),
            ("MessageBody", "a"),
            ("MessageBody", "b"),
        ]),
        None,
    );
    assert!(format!("{last:?}").contains("\"b\""), "{last:?}");
}
