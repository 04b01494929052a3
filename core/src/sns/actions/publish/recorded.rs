//! The deliveries Publish records instead of making (see
//! `crate::sns::inbox`): a subscription of a protocol Retsu does not reach,
//! and a Publish straight to a phone number or a platform endpoint.

use super::*;

/// What a platform endpoint would be pushed: its platform's entry of the
/// message; `Err` when the endpoint is gone or disabled, as AWS fails it.
pub(super) fn application_payload(
    sns: &Sns,
    apps: &Applications,
    endpoint_arn: &str,
    published: &Published<'_>,
) -> Result<String, String> {
    let app = endpoint_application(endpoint_arn);
    let enabled = match app.as_ref().and_then(|app| apps.get(app)) {
        Some(app) => app.endpoints.get(endpoint_arn).map(|e| e.enabled()),
        // An application this engine does not hold may be held elsewhere
        // (another shard of a cluster).
        None if app.is_some() => sns.engine.remote_platform_endpoint(endpoint_arn),
        None => None,
    };
    let enabled = enabled.ok_or_else(|| "the platform endpoint does not exist".to_string())?;
    if !enabled {
        return Err("the platform endpoint is disabled".into());
    }
    let platform = endpoint_platform(endpoint_arn).unwrap_or_default();
    Ok(payload::platform_text(
        published.checked.per_protocol.as_ref(),
        platform,
        &published.checked.message,
    )
    .to_string())
}

/// Keeps what a subscription of a recorded protocol (or a direct publish)
/// would have been sent, in the inbox.
pub(super) fn record(
    sns: &Sns,
    topic: &Topic,
    sub: &Subscription,
    published: &Published<'_>,
    payload: String,
) {
    let Some(protocol) = protocol_name(&sub.protocol) else {
        return;
    };
    let mut record = published.checked.record(protocol, &sub.endpoint, payload);
    record.at_ms = published.at_ms;
    record.region = topic.region.clone();
    record.account = topic.account.clone();
    record.topic_arn = Some(topic.arn.clone());
    record.subscription_arn = Some(sub.arn.clone());
    record.message_id = published.message_id.clone();
    sns.record(record);
}

impl Checked {
    /// Its inbox record at `endpoint`; the caller fills in where and when.
    fn record(&self, protocol: &'static str, endpoint: &str, payload: String) -> Record {
        let subject = match protocol {
            "email" => Some(payload::email_subject(self.subject.as_deref())),
            _ => self.subject.clone(),
        };
        Record {
            id: 0,
            at_ms: 0,
            protocol,
            endpoint: endpoint.to_string(),
            region: String::new(),
            account: String::new(),
            topic_arn: None,
            subscription_arn: None,
            message_id: String::new(),
            message: self
                .published
                .clone()
                .unwrap_or_else(|| self.message.clone()),
            message_structure: self.structure.clone(),
            subject,
            attributes: self.attributes.clone(),
            payload,
        }
    }
}

/// A Publish to one endpoint rather than a topic.
pub(super) enum Direct {
    /// `PhoneNumber`: one SMS.
    Phone(String),
    /// `TargetArn` naming a platform endpoint: one push.
    Endpoint(String),
}

/// What a Publish names: `TopicArn`, `TargetArn` (a topic or a platform
/// endpoint) or `PhoneNumber`.
pub(super) fn target(ctx: &RequestContext, request: &PublishRequest) -> Result<Target, SnsError> {
    match (
        &request.topic_arn,
        &request.target_arn,
        &request.phone_number,
    ) {
        (Some(_), _, _) => topic_key(ctx, "TopicArn", &request.topic_arn).map(Target::Topic),
        (None, Some(t), _) if t.contains(":endpoint/") => {
            Ok(Target::Direct(Direct::Endpoint(t.clone())))
        }
        (None, Some(_), _) => topic_key(ctx, "TargetArn", &request.target_arn).map(Target::Topic),
        (None, None, Some(phone)) => {
            if !super::subscriptions::phone_number(phone) {
                return Err(SnsError::invalid_parameter(format!(
                    "PhoneNumber Reason: {phone} is not valid to publish to"
                )));
            }
            Ok(Target::Direct(Direct::Phone(phone.clone())))
        }
        (None, None, None) => Err(SnsError::invalid_parameter(
            "TopicArn or TargetArn Reason: no value for required parameter",
        )),
    }
}

/// A Publish straight to a phone number or a platform endpoint: checked as
/// a standard topic's message is, and kept in the inbox.
pub(super) fn publish_direct(
    sns: &Sns,
    ctx: &RequestContext,
    target: Direct,
    entry: Entry,
) -> Result<PublishResult, SnsError> {
    // The limits of a standard topic.
    let standard = Topic::new(&ctx.region, &ctx.account_id, "", false);
    let checked = check(&standard, entry, "messageAttributes")?;
    let (protocol, endpoint, payload) = match target {
        Direct::Phone(phone) => ("sms", phone, checked.text_for("sms").to_string()),
        Direct::Endpoint(arn) => {
            let state = sns.lock();
            let endpoint = endpoint_application(&arn)
                .and_then(|app| state.applications.get(&app))
                .and_then(|app| app.endpoints.get(&arn))
                .ok_or_else(|| {
                    SnsError::invalid_parameter(
                        "TargetArn Reason: No endpoint found for the target arn specified",
                    )
                })?;
            if !endpoint.enabled() {
                return Err(SnsError::new(
                    "EndpointDisabled",
                    400,
                    "Endpoint is disabled",
                ));
            }
            let platform = endpoint_platform(&arn).unwrap_or_default();
            let text =
                payload::platform_text(checked.per_protocol.as_ref(), platform, &checked.message);
            let text = text.to_string();
            ("application", arn, text)
        }
    };
    let message_id = uuid::Uuid::new_v4().to_string();
    let mut record = checked.record(protocol, &endpoint, payload);
    record.at_ms = sns.engine().now();
    record.region = ctx.region.clone();
    record.account = ctx.account_id.clone();
    record.message_id = message_id.clone();
    sns.record(record);
    Ok(PublishResult {
        message_id,
        sequence_number: None,
    })
}
