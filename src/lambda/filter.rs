//! `FilterCriteria`: Lambda's event-filtering patterns, matched against
//! each record (a JSON body by its fields). The pattern language is the
//! one SNS's payload-based filter policies speak (both are EventBridge's),
//! so the same engine (`retsu_core::filter_policy`, body scope) compiles
//! and matches them; its limits (keys per pattern, combinations) are
//! SNS's, which may refuse a pattern Lambda would take.

use retsu_core::filter_policy::{FilterPolicy, Scope};

use super::error::LambdaError;

pub struct Filter(FilterPolicy);

impl Filter {
    pub fn parse(pattern: &str) -> Result<Filter, LambdaError> {
        FilterPolicy::parse(pattern, Scope::MessageBody)
            .map(Filter)
            .map_err(|e| {
                LambdaError::invalid_parameter(format!(
                    "Invalid filter pattern definition. {}",
                    e.message()
                ))
            })
    }

    /// Whether `record` (the record as JSON, body parsed) matches.
    pub fn matches(&self, record: &serde_json::Value) -> bool {
        self.0.match_body(&record.to_string()).is_ok()
    }
}

/// A message passes when there are no patterns or any of them matches.
pub fn passes(filters: &[Filter], record: &serde_json::Value) -> bool {
    filters.is_empty() || filters.iter().any(|f| f.matches(record))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patterns_match_records_by_body_fields_and_attributes() {
        let record = json!({
            "body": {"kind": "order", "total": 12},
            "attributes": {"MessageGroupId": "g1"},
            "messageAttributes": {}
        });
        let f = |p: &str| Filter::parse(p).unwrap().matches(&record);
        assert!(f(r#"{"body":{"kind":["order"]}}"#));
        assert!(!f(r#"{"body":{"kind":["refund"]}}"#));
        assert!(f(r#"{"body":{"total":[{"numeric":[">",10]}]}}"#));
        assert!(f(r#"{"attributes":{"MessageGroupId":["g1"]}}"#));
        assert!(Filter::parse("{not json").is_err());
        let none: Vec<Filter> = Vec::new();
        assert!(passes(&none, &record));
    }
}
