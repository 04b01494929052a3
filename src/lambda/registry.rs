//! Which function names mean which targets: those the configuration
//! declares (`--function`, `[[functions]]`), and those made while the
//! server runs, through Lambda's `CreateFunction` or the admin API
//! (`PUT /_retsu/functions/NAME`).
//!
//! The configuration restates its functions at every start, so only the
//! others are persisted: they are the service "lambda-functions" of the
//! engine's queue-level state, journaled with the queues and the
//! mappings. A restored function never replaces a declared one of the
//! same name: the file is what the user changes.
//!
//! Each function has its own invocation slots (its concurrency), shared
//! by every mapping naming it; a function replaced gets new ones.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Semaphore;

use super::function::{FunctionTarget, Target};

/// The name the made functions are persisted under.
pub const SERVICE: &str = "lambda-functions";

/// Where a function comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// `--function` or `[[functions]]`: not persisted, not removable.
    Config,
    /// Lambda's `CreateFunction`.
    Api,
    /// `PUT /_retsu/functions/NAME`.
    Admin,
}

impl Origin {
    pub fn name(self) -> &'static str {
        match self {
            Origin::Config => "config",
            Origin::Api => "api",
            Origin::Admin => "admin",
        }
    }
}

/// What `CreateFunction` was told beyond the target, to describe the
/// function as Lambda does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Details {
    pub role: Option<String>,
    pub runtime: Option<String>,
    pub handler: Option<String>,
    pub description: String,
    pub memory_size: u32,
    pub package_type: String,
    pub tags: BTreeMap<String, String>,
    pub code_sha256: String,
    pub code_size: u64,
    pub last_modified_ms: u64,
}

/// One function, as registered.
#[derive(Debug, Clone)]
pub struct Registered {
    pub target: FunctionTarget,
    pub slots: Arc<Semaphore>,
    pub origin: Origin,
    pub details: Details,
}

impl Registered {
    pub fn new(target: FunctionTarget, origin: Origin, details: Details) -> Registered {
        let slots = Arc::new(Semaphore::new(target.concurrency as usize));
        Registered {
            target,
            slots,
            origin,
            details,
        }
    }
}

/// A made function as the journal keeps it.
#[derive(Debug, Serialize, Deserialize)]
struct Stored {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    command: Option<Vec<String>>,
    #[serde(default)]
    environment: BTreeMap<String, String>,
    timeout_s: u64,
    concurrency: u32,
    origin: Origin,
    #[serde(default)]
    details: Details,
}

/// The functions, by name, under one lock never held across an await.
#[derive(Default)]
pub struct Registry {
    inner: Mutex<BTreeMap<String, Registered>>,
}

impl Registry {
    pub fn new(configured: &[FunctionTarget]) -> Registry {
        let map = configured
            .iter()
            .map(|f| {
                let registered = Registered::new(f.clone(), Origin::Config, Details::default());
                (f.name.clone(), registered)
            })
            .collect();
        Registry {
            inner: Mutex::new(map),
        }
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Registered>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds the functions a data directory kept (see the module's doc for
    /// a name the configuration declares too). What cannot be read back
    /// is skipped with a warning: the rest of the state still starts.
    pub fn restore(&self, kept: Value) {
        let stored: Vec<Stored> = match serde_json::from_value(kept) {
            Ok(stored) => stored,
            Err(e) => {
                tracing::warn!("the data directory's Lambda functions cannot be read: {e}");
                return;
            }
        };
        let mut map = self.lock();
        for s in stored {
            if map.contains_key(&s.name) {
                continue;
            }
            let target = match (s.url, s.command) {
                (Some(url), _) => {
                    FunctionTarget::with_url(&s.name, &url, s.environment, s.timeout_s)
                }
                (None, Some(command)) => {
                    FunctionTarget::with_command(&s.name, command, s.environment, s.timeout_s)
                }
                (None, None) => Err(format!("function {} has no target", s.name)),
            }
            .and_then(|t| t.with_concurrency(s.concurrency));
            match target {
                Ok(target) => {
                    map.insert(s.name, Registered::new(target, s.origin, s.details));
                }
                Err(e) => tracing::warn!("a kept Lambda function is skipped: {e}"),
            }
        }
    }

    /// The made functions, for the journal.
    pub fn snapshot(&self) -> Value {
        let map = self.lock();
        let stored: Vec<Stored> = map
            .values()
            .filter(|r| r.origin != Origin::Config)
            .map(|r| {
                let t = &r.target;
                let (url, command) = match &t.target {
                    Target::Url(url) => (Some(url.clone()), None),
                    Target::Command(argv) => (None, Some(argv.clone())),
                };
                Stored {
                    name: t.name.clone(),
                    url,
                    command,
                    environment: t.environment.clone(),
                    timeout_s: t.timeout_s,
                    concurrency: t.concurrency,
                    origin: r.origin,
                    details: r.details.clone(),
                }
            })
            .collect();
        serde_json::to_value(stored).unwrap_or(Value::Null)
    }

    pub fn get(&self, name: &str) -> Option<FunctionTarget> {
        self.lock().get(name).map(|r| r.target.clone())
    }

    pub fn slots(&self, name: &str) -> Option<Arc<Semaphore>> {
        self.lock().get(name).map(|r| r.slots.clone())
    }

    pub fn registered(&self, name: &str) -> Option<Registered> {
        self.lock().get(name).cloned()
    }

    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Every function, by name.
    pub fn all(&self) -> Vec<Registered> {
        self.lock().values().cloned().collect()
    }

    /// Adds `registered` unless its name is taken; `Err` with the holder's
    /// origin when it is.
    pub fn add(&self, registered: Registered) -> Result<(), Origin> {
        let mut map = self.lock();
        if let Some(existing) = map.get(&registered.target.name) {
            return Err(existing.origin);
        }
        map.insert(registered.target.name.clone(), registered);
        Ok(())
    }

    /// Adds or replaces a made function; `Err` with `Origin::Config` when
    /// the name is declared by the configuration. `Ok(true)`: it is new.
    pub fn put(&self, registered: Registered) -> Result<bool, Origin> {
        let mut map = self.lock();
        match map.get(&registered.target.name) {
            Some(existing) if existing.origin == Origin::Config => Err(Origin::Config),
            existing => {
                let new = existing.is_none();
                map.insert(registered.target.name.clone(), registered);
                Ok(new)
            }
        }
    }

    /// Removes a made function: `Ok(None)` when there is none of that
    /// name, `Err` when the configuration declares it.
    pub fn remove(&self, name: &str) -> Result<Option<Registered>, Origin> {
        let mut map = self.lock();
        match map.get(name) {
            Some(existing) if existing.origin == Origin::Config => Err(Origin::Config),
            Some(_) => Ok(map.remove(name)),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(name: &str) -> FunctionTarget {
        FunctionTarget::with_url(name, "http://127.0.0.1:9", BTreeMap::new(), 3).unwrap()
    }

    #[test]
    fn made_functions_round_trip_and_declared_ones_win() {
        let registry = Registry::new(&[url("declared")]);
        let details = Details {
            role: Some("arn:aws:iam::000000000000:role/r".into()),
            memory_size: 256,
            ..Details::default()
        };
        registry
            .add(Registered::new(url("made"), Origin::Api, details.clone()))
            .unwrap();
        let command =
            FunctionTarget::with_command("cmd", vec!["cat".into()], BTreeMap::new(), 5).unwrap();
        assert_eq!(
            registry.put(Registered::new(
                command.clone(),
                Origin::Admin,
                Details::default()
            )),
            Ok(true)
        );
        assert_eq!(
            registry.put(Registered::new(
                url("declared"),
                Origin::Admin,
                Details::default()
            )),
            Err(Origin::Config)
        );
        assert_eq!(
            registry
                .add(Registered::new(
                    url("made"),
                    Origin::Api,
                    Details::default()
                ))
                .unwrap_err(),
            Origin::Api
        );
        let kept = registry.snapshot();
        assert_eq!(
            kept.as_array().unwrap().len(),
            2,
            "declared ones are not kept"
        );

        // A restart whose configuration now declares "made" keeps its own.
        let again = Registry::new(&[url("declared"), url("made")]);
        again.restore(kept);
        assert_eq!(again.registered("made").unwrap().origin, Origin::Config);
        assert_eq!(again.get("cmd"), Some(command));
        assert_eq!(again.all().len(), 3);

        let fresh = Registry::new(&[]);
        fresh.restore(registry.snapshot());
        assert_eq!(fresh.registered("made").unwrap().details, details);
        assert_eq!(fresh.remove("made").unwrap().unwrap().origin, Origin::Api);
        assert!(fresh.remove("made").unwrap().is_none());
        assert_eq!(registry.remove("declared").unwrap_err(), Origin::Config);
    }
}
