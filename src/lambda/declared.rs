//! The checks of the file's `[[event_source_mappings]]` that need no
//! running server, made by `retsu check-config` and before start-up:
//! the settings Lambda's API would refuse (the same decoder and rules
//! CreateEventSourceMapping runs), a function the configuration does not
//! declare, and a source that is not an SQS queue's ARN. What needs the
//! store (does the queue exist, is it FIFO when only a name says so) is
//! left to start-up, which creates the mappings.

use super::mapping::{Mapping, Settings};
use super::{function_name, DeclaredMapping, FunctionTarget};

/// The first problem of `declared`, as `FILE, line N: event source
/// mapping: why`.
pub fn check(declared: &[DeclaredMapping], functions: &[FunctionTarget]) -> Result<(), String> {
    for d in declared {
        let at = match d.line {
            Some(line) => format!("{}, line {line}", d.file),
            None => d.file.clone(),
        };
        check_one(d, functions).map_err(|why| format!("{at}: event source mapping: {why}"))?;
    }
    Ok(())
}

fn check_one(d: &DeclaredMapping, functions: &[FunctionTarget]) -> Result<(), String> {
    let settings: Settings =
        crate::protocol::lambda::settings(d.settings.as_bytes()).map_err(|e| e.message)?;
    settings.check_shape().map_err(|e| e.message)?;
    let function = settings
        .function_name
        .as_deref()
        .map(function_name)
        .unwrap_or_default();
    if !functions.iter().any(|f| f.name == function) {
        let known: Vec<&str> = functions.iter().map(|f| f.name.as_str()).collect();
        return Err(format!(
            "function {function:?} is not declared in [[functions]] or by --function (declared: {})",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ));
    }
    let arn = settings.event_source_arn.clone().unwrap_or_default();
    let name = queue_name(&arn).ok_or_else(|| {
        format!(
            "queue {arn:?} is not an SQS queue's ARN (arn:aws:sqs:REGION:ACCOUNT:NAME) or a queue name"
        )
    })?;
    let mut mapping = Mapping {
        uuid: String::new(),
        region: String::new(),
        account: String::new(),
        function_name: function.to_string(),
        event_source_arn: arn.clone(),
        batch_size: 10,
        window_s: None,
        enabled: true,
        report_batch_item_failures: false,
        maximum_concurrency: None,
        filters: Vec::new(),
        last_modified_ms: 0,
        last_processing_result: String::new(),
    };
    settings
        .apply(&mut mapping, name.ends_with(".fifo"))
        .map_err(|e| e.message)
}

/// The queue's name in an SQS ARN whose parts are all there and sound.
fn queue_name(arn: &str) -> Option<&str> {
    let parts: Vec<&str> = arn.split(':').collect();
    let [scheme, partition, service, region, account, name] = parts[..] else {
        return None;
    };
    let sound = scheme == "arn"
        && partition.starts_with("aws")
        && service == "sqs"
        && !region.is_empty()
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && account.len() == 12
        && account.bytes().all(|b| b.is_ascii_digit())
        && !name.is_empty()
        && name.len() <= 80
        && name
            .trim_end_matches(".fifo")
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    sound.then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(settings: serde_json::Value) -> DeclaredMapping {
        DeclaredMapping {
            file: "retsu.toml".into(),
            line: Some(7),
            settings: settings.to_string(),
        }
    }

    fn functions() -> Vec<FunctionTarget> {
        vec![
            FunctionTarget::with_url("orders", "http://127.0.0.1:9000", Default::default(), 3)
                .unwrap(),
        ]
    }

    fn why(settings: serde_json::Value) -> String {
        check(&[declared(settings)], &functions()).unwrap_err()
    }

    #[test]
    fn sound_mappings_pass_and_each_fault_is_named() {
        let q = "arn:aws:sqs:us-east-1:000000000000:jobs";
        let fifo = "arn:aws:sqs:us-east-1:000000000000:jobs.fifo";
        assert!(check(
            &[declared(serde_json::json!({"FunctionName": "orders", "EventSourceArn": q, "BatchSize": 100, "MaximumBatchingWindowInSeconds": 5}))],
            &functions()
        )
        .is_ok());
        let e = why(serde_json::json!({"FunctionName": "billing", "EventSourceArn": q}));
        assert!(
            e.starts_with(
                "retsu.toml, line 7: event source mapping: function \"billing\" is not declared"
            ),
            "{e}"
        );
        assert!(e.contains("declared: orders"), "{e}");
        let e = why(
            serde_json::json!({"FunctionName": "orders", "EventSourceArn": "arn:aws:sqs:us-east-1:0:jobs"}),
        );
        assert!(e.contains("is not an SQS queue's ARN"), "{e}");
        let e = why(
            serde_json::json!({"FunctionName": "orders", "EventSourceArn": "arn:aws:sns:us-east-1:000000000000:t"}),
        );
        assert!(e.contains("is not an SQS queue's ARN"), "{e}");
        let e =
            why(serde_json::json!({"FunctionName": "orders", "EventSourceArn": q, "BatchSize": 0}));
        assert!(e.contains("greater than or equal to 1"), "{e}");
        let e = why(
            serde_json::json!({"FunctionName": "orders", "EventSourceArn": q, "BatchSize": 10001}),
        );
        assert!(e.contains("less than or equal to 10000"), "{e}");
        let e = why(
            serde_json::json!({"FunctionName": "orders", "EventSourceArn": q, "BatchSize": 50}),
        );
        assert!(
            e.contains("greater than 0 if maximum batch size is greater than 10"),
            "{e}"
        );
        let e = why(
            serde_json::json!({"FunctionName": "orders", "EventSourceArn": fifo, "MaximumBatchingWindowInSeconds": 1}),
        );
        assert!(
            e.contains("Batching window is not supported for FIFO queues"),
            "{e}"
        );
        let e = why(
            serde_json::json!({"FunctionName": "orders", "EventSourceArn": fifo, "BatchSize": 11}),
        );
        assert!(e.contains("for FIFO queues"), "{e}");
    }
}
