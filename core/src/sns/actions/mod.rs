//! One unit per SNS action or tight family, as in the SQS engine: each
//! request type implements [`SnsUnit`]; the dispatch is made from the one
//! list of actions in `sns::api`.

use base64::Engine as _;

use super::api::*;
use super::error::SnsError;
use super::model::SnsArn;
use super::{Sns, State};
use crate::api::RequestContext;

mod data_protection;
mod permissions;
mod platform;
mod publish;
pub(crate) mod subscriptions;
mod tags;
mod topics;

pub use topics::valid_name as valid_topic_name;

/// One SNS action's behaviour and facts.
pub trait SnsUnit: Sized {
    type Response;
    /// Only reads: still served while the data directory cannot be written.
    const READ_ONLY: bool = false;
    /// Changes topics or subscriptions (which the journal then records).
    /// Publishing changes only messages.
    const CHANGES_STATE: bool = !Self::READ_ONLY;

    fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<Self::Response, SnsError>;
}

macro_rules! units {
    ($($name:ident => $req:ident, $resp:ident;)*) => {
        impl SnsRequest {
            pub(super) fn run(self, sns: &Sns, ctx: &RequestContext) -> Result<SnsResponse, SnsError> {
                Ok(match self {
                    $(SnsRequest::$name(r) => SnsResponse::$name(SnsUnit::run(r, sns, ctx)?),)*
                })
            }

            /// Whether the action changes topics or subscriptions.
            pub fn changes_state(&self) -> bool {
                match self { $(SnsRequest::$name(_) => <$req as SnsUnit>::CHANGES_STATE,)* }
            }

            /// Whether the action only reads.
            pub fn read_only(&self) -> bool {
                match self { $(SnsRequest::$name(_) => <$req as SnsUnit>::READ_ONLY,)* }
            }
        }
    };
}

super::api::sns_actions_with!(units);

/// A required member.
fn required<'a>(value: &'a Option<String>, member: &str) -> Result<&'a str, SnsError> {
    value.as_deref().ok_or_else(|| SnsError::missing(member))
}

/// The topic a `member` ARN names, in the caller's region.
fn topic_key(ctx: &RequestContext, member: &str, arn: &Option<String>) -> Result<String, SnsError> {
    let arn = required(arn, member)?;
    if SnsArn::region_of(member, arn)? != ctx.region {
        return Err(SnsError::invalid_parameter(member));
    }
    Ok(arn.to_string())
}

/// The topic itself, or NotFound.
fn topic_mut<'s>(state: &'s mut State, arn: &str) -> Result<&'s mut super::model::Topic, SnsError> {
    state
        .topics
        .get_mut(arn)
        .ok_or_else(SnsError::topic_not_found)
}

/// One page of 100 from an ordered list, after the token's item.
fn page<T>(
    items: Vec<T>,
    token: Option<&str>,
    key: impl Fn(&T) -> &str,
) -> Result<(Vec<T>, Option<String>), SnsError> {
    const PAGE: usize = 100;
    let after = match token {
        None | Some("") => None,
        Some(t) => Some(
            base64::engine::general_purpose::STANDARD
                .decode(t)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| SnsError::invalid_parameter("NextToken"))?,
        ),
    };
    let mut rest: Vec<T> = match &after {
        None => items,
        Some(a) => items
            .into_iter()
            .skip_while(|i| key(i) <= a.as_str())
            .collect(),
    };
    let next = (rest.len() > PAGE)
        .then(|| base64::engine::general_purpose::STANDARD.encode(key(&rest[PAGE - 1])));
    rest.truncate(PAGE);
    Ok((rest, next))
}
