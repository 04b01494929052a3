//! Platform applications and their endpoints: what an `application`
//! subscription, or a Publish with a `TargetArn`, delivers to. Kept and
//! persisted like topics; their credentials are never used, since nothing
//! is pushed to a device (see [`crate::sns::inbox`]).

use std::collections::BTreeMap;

use super::*;
use crate::sns::model::{endpoint_application, PlatformApplication, PlatformEndpoint};

/// The platforms SNS pushes to.
const PLATFORMS: &[&str] = &["ADM", "APNS", "APNS_SANDBOX", "BAIDU", "GCM", "MPNS", "WNS"];

fn application_not_found() -> SnsError {
    SnsError::new("NotFound", 404, "PlatformApplication does not exist")
}

fn endpoint_not_found() -> SnsError {
    SnsError::new("NotFound", 404, "Endpoint does not exist")
}

/// The application an ARN member names, or NotFound.
fn application<'s>(
    state: &'s mut State,
    member: &str,
    arn: &Option<String>,
) -> Result<&'s mut PlatformApplication, SnsError> {
    let arn = required(arn, member)?;
    state
        .applications
        .get_mut(arn)
        .ok_or_else(application_not_found)
}

/// The endpoint an ARN member names, or NotFound.
fn endpoint<'s>(
    state: &'s mut State,
    arn: &Option<String>,
) -> Result<&'s mut PlatformEndpoint, SnsError> {
    let arn = required(arn, "EndpointArn")?;
    endpoint_application(arn)
        .and_then(|app| state.applications.get_mut(&app))
        .and_then(|app| app.endpoints.get_mut(arn))
        .ok_or_else(endpoint_not_found)
}

impl SnsUnit for CreatePlatformApplicationRequest {
    type Response = PlatformApplicationArnResult;

    fn run(
        self,
        sns: &Sns,
        ctx: &RequestContext,
    ) -> Result<PlatformApplicationArnResult, SnsError> {
        let name = required(&self.name, "Name")?;
        let platform = required(&self.platform, "Platform")?;
        let name_ok = (1..=256).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !name_ok {
            return Err(SnsError::invalid_parameter(
                "Name Reason: must be made up of only uppercase and lowercase ASCII letters, numbers, underscores, hyphens, and periods, and must be between 1 and 256 characters long",
            ));
        }
        if !PLATFORMS.contains(&platform) {
            return Err(SnsError::invalid_parameter(format!(
                "Platform Reason: {platform} is not supported"
            )));
        }
        let arn = format!(
            "arn:aws:sns:{}:{}:app/{platform}/{name}",
            ctx.region, ctx.account_id
        );
        let mut state = sns.lock();
        let app = state
            .applications
            .entry(arn.clone())
            .or_insert_with(|| PlatformApplication {
                arn: arn.clone(),
                region: ctx.region.clone(),
                account: ctx.account_id.clone(),
                name: name.to_string(),
                platform: platform.to_string(),
                attributes: BTreeMap::new(),
                endpoints: BTreeMap::new(),
            });
        app.attributes.extend(self.attributes);
        Ok(PlatformApplicationArnResult {
            platform_application_arn: arn,
        })
    }
}

impl SnsUnit for GetPlatformApplicationAttributesRequest {
    type Response = AttributesResult;
    const READ_ONLY: bool = true;

    fn run(self, sns: &Sns, _: &RequestContext) -> Result<AttributesResult, SnsError> {
        let mut state = sns.lock();
        let app = application(
            &mut state,
            "PlatformApplicationArn",
            &self.platform_application_arn,
        )?;
        Ok(AttributesResult {
            attributes: app.all_attributes(),
        })
    }
}

impl SnsUnit for SetPlatformApplicationAttributesRequest {
    type Response = Empty;

    fn run(self, sns: &Sns, _: &RequestContext) -> Result<Empty, SnsError> {
        let mut state = sns.lock();
        let app = application(
            &mut state,
            "PlatformApplicationArn",
            &self.platform_application_arn,
        )?;
        app.attributes.extend(self.attributes);
        Ok(Empty {})
    }
}

impl SnsUnit for DeletePlatformApplicationRequest {
    type Response = Empty;

    fn run(self, sns: &Sns, _: &RequestContext) -> Result<Empty, SnsError> {
        let arn = required(&self.platform_application_arn, "PlatformApplicationArn")?;
        // Idempotent, as on AWS; its endpoints go with it.
        sns.lock().applications.remove(arn);
        Ok(Empty {})
    }
}

impl SnsUnit for ListPlatformApplicationsRequest {
    type Response = ListPlatformApplicationsResult;
    const READ_ONLY: bool = true;

    fn run(
        self,
        sns: &Sns,
        ctx: &RequestContext,
    ) -> Result<ListPlatformApplicationsResult, SnsError> {
        let apps: Vec<PlatformApplicationEntry> = sns
            .lock()
            .applications
            .values()
            .filter(|a| a.region == ctx.region && a.account == ctx.account_id)
            .map(|a| PlatformApplicationEntry {
                platform_application_arn: a.arn.clone(),
                attributes: a.all_attributes(),
            })
            .collect();
        let (platform_applications, next_token) = page(apps, self.next_token.as_deref(), |a| {
            &a.platform_application_arn
        })?;
        Ok(ListPlatformApplicationsResult {
            platform_applications,
            next_token,
        })
    }
}

impl SnsUnit for CreatePlatformEndpointRequest {
    type Response = EndpointArnResult;

    fn run(self, sns: &Sns, _: &RequestContext) -> Result<EndpointArnResult, SnsError> {
        let token = required(&self.token, "Token")?.to_string();
        let mut state = sns.lock();
        let app = application(
            &mut state,
            "PlatformApplicationArn",
            &self.platform_application_arn,
        )?;
        let mut attributes = self.attributes;
        if let Some(data) = self.custom_user_data {
            attributes.insert("CustomUserData".into(), data);
        }
        attributes.insert("Token".into(), token.clone());
        attributes
            .entry("Enabled".into())
            .or_insert_with(|| "true".into());
        // The same token again: the same endpoint, unless it differs.
        if let Some(existing) = app
            .endpoints
            .values()
            .find(|e| e.attributes.get("Token") == Some(&token))
        {
            if existing.attributes != attributes {
                return Err(SnsError::invalid_parameter(format!(
                    "Token Reason: Endpoint {} already exists with the same Token, but different attributes.",
                    existing.arn
                )));
            }
            return Ok(EndpointArnResult {
                endpoint_arn: existing.arn.clone(),
            });
        }
        let arn = format!(
            "arn:aws:sns:{}:{}:endpoint/{}/{}/{}",
            app.region,
            app.account,
            app.platform,
            app.name,
            uuid::Uuid::new_v4()
        );
        app.endpoints.insert(
            arn.clone(),
            PlatformEndpoint {
                arn: arn.clone(),
                attributes,
            },
        );
        Ok(EndpointArnResult { endpoint_arn: arn })
    }
}

impl SnsUnit for GetEndpointAttributesRequest {
    type Response = AttributesResult;
    const READ_ONLY: bool = true;

    fn run(self, sns: &Sns, _: &RequestContext) -> Result<AttributesResult, SnsError> {
        let mut state = sns.lock();
        let endpoint = endpoint(&mut state, &self.endpoint_arn)?;
        Ok(AttributesResult {
            attributes: endpoint.attributes.clone(),
        })
    }
}

impl SnsUnit for SetEndpointAttributesRequest {
    type Response = Empty;

    fn run(self, sns: &Sns, _: &RequestContext) -> Result<Empty, SnsError> {
        let mut state = sns.lock();
        let endpoint = endpoint(&mut state, &self.endpoint_arn)?;
        endpoint.attributes.extend(self.attributes);
        Ok(Empty {})
    }
}

impl SnsUnit for DeleteEndpointRequest {
    type Response = Empty;

    fn run(self, sns: &Sns, _: &RequestContext) -> Result<Empty, SnsError> {
        let arn = required(&self.endpoint_arn, "EndpointArn")?;
        let mut state = sns.lock();
        // Idempotent, as on AWS.
        if let Some(app) = endpoint_application(arn).and_then(|a| state.applications.get_mut(&a)) {
            app.endpoints.remove(arn);
        }
        Ok(Empty {})
    }
}

impl SnsUnit for ListEndpointsByPlatformApplicationRequest {
    type Response = ListEndpointsResult;
    const READ_ONLY: bool = true;

    fn run(self, sns: &Sns, _: &RequestContext) -> Result<ListEndpointsResult, SnsError> {
        let mut state = sns.lock();
        let app = application(
            &mut state,
            "PlatformApplicationArn",
            &self.platform_application_arn,
        )?;
        let endpoints: Vec<EndpointEntry> = app
            .endpoints
            .values()
            .map(|e| EndpointEntry {
                endpoint_arn: e.arn.clone(),
                attributes: e.attributes.clone(),
            })
            .collect();
        let (endpoints, next_token) =
            page(endpoints, self.next_token.as_deref(), |e| &e.endpoint_arn)?;
        Ok(ListEndpointsResult {
            endpoints,
            next_token,
        })
    }
}
