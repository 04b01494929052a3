//! Lambda's function actions, as far as a mapping needs them:
//! `CreateFunction`, `GetFunction`, `ListFunctions`, `DeleteFunction`, and
//! the admin API's view and changes of the same functions.
//!
//! Retsu runs no code: a function made through `CreateFunction` names the
//! endpoint it is invoked at in its environment variable
//! `RETSU_INVOKE_URL` (the Invoke API of AWS's runtime interface
//! emulator, `sam local start-lambda`, or any HTTP handler). An
//! environment variable rather than a tag because every tool that
//! deploys functions (the CLI, CloudFormation, Terraform, the CDK) sets
//! one, and the function's own environment is where a developer already
//! looks for what differs between here and AWS. The code package is
//! accepted and only measured (`CodeSize`, `CodeSha256`).
//!
//! The request is checked as botocore's model constrains it (required
//! members, patterns, lengths, ranges, enums), each failure named in one
//! `ValidationException` as AWS words it; then Lambda's own rules.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::error::LambdaError;
use super::function::{FunctionTarget, Target, DEFAULT_TIMEOUT_S};
use super::mapping::function_arn;
use super::registry::{Details, Origin, Registered};
use super::{function_name, Lambda};

/// The environment variable a made function's invoke URL is given in.
pub const INVOKE_URL_VARIABLE: &str = "RETSU_INVOKE_URL";

/// `ListFunctions` answers at most this many per page, as Lambda does.
const MAX_LIST_PAGE: usize = 50;

/// Lambda's memory range, in MB (the model allows more than Lambda does).
const MEMORY_MB: (i64, i64) = (128, 10_240);
const DEFAULT_MEMORY_MB: u32 = 128;

/// botocore's `FunctionName` pattern, quoted in validation errors.
const FUNCTION_NAME_PATTERN: &str = r"(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9-_]+)(:(\$LATEST|[a-zA-Z0-9-_]+))?";
const ROLE_PATTERN: &str = r"arn:(aws[a-zA-Z-]*)?:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+";
const VARIABLE_PATTERN: &str = "[a-zA-Z]([a-zA-Z0-9_])+";

/// botocore's `Runtime` enum.
const RUNTIMES: &[&str] = &[
    "nodejs",
    "nodejs4.3",
    "nodejs6.10",
    "nodejs8.10",
    "nodejs10.x",
    "nodejs12.x",
    "nodejs14.x",
    "nodejs16.x",
    "java8",
    "java8.al2",
    "java11",
    "python2.7",
    "python3.6",
    "python3.7",
    "python3.8",
    "python3.9",
    "dotnetcore1.0",
    "dotnetcore2.0",
    "dotnetcore2.1",
    "dotnetcore3.1",
    "dotnet6",
    "dotnet8",
    "nodejs4.3-edge",
    "go1.x",
    "ruby2.5",
    "ruby2.7",
    "provided",
    "provided.al2",
    "nodejs18.x",
    "python3.10",
    "java17",
    "ruby3.2",
    "ruby3.3",
    "ruby3.4",
    "python3.11",
    "nodejs20.x",
    "provided.al2023",
    "python3.12",
    "java21",
    "python3.13",
    "nodejs22.x",
    "nodejs24.x",
    "python3.14",
    "java25",
    "dotnet10",
    "ruby4.0",
];

/// Lambda's `LastModified`: ISO-8601 with milliseconds and `+0000`.
fn last_modified(ms: u64) -> String {
    let text = crate::clock::format_rfc3339(ms);
    format!("{}+0000", text.trim_end_matches('Z'))
}

impl Lambda {
    /// The function `name_or_arn` names (a name, a partial or a full ARN,
    /// with an optional qualifier).
    pub(super) fn function(&self, name_or_arn: &str) -> Result<FunctionTarget, LambdaError> {
        let name = function_name(name_or_arn);
        self.functions
            .get(name)
            .ok_or_else(|| self.function_not_found(name))
    }

    fn function_not_found(&self, name: &str) -> LambdaError {
        LambdaError::not_found(format!(
            "Function not found: {}",
            function_arn(&self.region, &self.account, name)
        ))
    }

    /// `FunctionConfiguration` of a registered function.
    fn configuration(&self, r: &Registered) -> Value {
        let f = &r.target;
        let d = &r.details;
        let description = match (&f.target, d.description.is_empty()) {
            (_, false) => d.description.clone(),
            (Target::Url(url), true) => format!("Invoked at {url}"),
            (Target::Command(argv), true) => format!("Runs {}", argv.join(" ")),
        };
        let package_type = if d.package_type.is_empty() {
            "Image"
        } else {
            &d.package_type
        };
        let mut out = json!({
            "FunctionName": f.name,
            "FunctionArn": function_arn(&self.region, &self.account, &f.name),
            "Description": description,
            "Timeout": f.timeout_s,
            "MemorySize": if d.memory_size == 0 { DEFAULT_MEMORY_MB } else { d.memory_size },
            "Version": "$LATEST",
            "CodeSize": d.code_size,
            "CodeSha256": d.code_sha256,
            "PackageType": package_type,
            "Architectures": ["x86_64"],
            "State": "Active",
            "LastUpdateStatus": "Successful",
            "TracingConfig": { "Mode": "PassThrough" },
            "EphemeralStorage": { "Size": 512 },
            "Environment": { "Variables": f.environment },
        });
        if d.last_modified_ms > 0 {
            out["LastModified"] = json!(last_modified(d.last_modified_ms));
        }
        for (key, value) in [
            ("Role", &d.role),
            ("Runtime", &d.runtime),
            ("Handler", &d.handler),
        ] {
            if let Some(value) = value {
                out[key] = json!(value);
            }
        }
        out
    }

    /// `GetFunction`.
    pub fn get_function(&self, name_or_arn: &str) -> Result<Value, LambdaError> {
        let name = function_name(name_or_arn);
        let r = self
            .functions
            .registered(name)
            .ok_or_else(|| self.function_not_found(name))?;
        let mut out = json!({
            "Configuration": self.configuration(&r),
            "Code": {},
            "Concurrency": { "ReservedConcurrentExecutions": r.target.concurrency },
        });
        if !r.details.tags.is_empty() {
            out["Tags"] = json!(r.details.tags);
        }
        Ok(out)
    }

    /// `ListFunctions`: by name; `Marker` is the last name of the
    /// previous page.
    pub fn list_functions(
        &self,
        marker: Option<&str>,
        max_items: Option<&str>,
    ) -> Result<Value, LambdaError> {
        let max = match max_items {
            None => MAX_LIST_PAGE,
            Some(text) => match text.parse::<i64>() {
                Ok(n) if (1..=10_000).contains(&n) => (n as usize).min(MAX_LIST_PAGE),
                Ok(n) => {
                    return Err(LambdaError::validation(format!(
                        "1 validation error detected: Value '{n}' at 'maxItems' failed to satisfy constraint: Member must have value {}",
                        if n < 1 { "greater than or equal to 1" } else { "less than or equal to 10000" }
                    )))
                }
                Err(_) => return Err(LambdaError::invalid_parameter("MaxItems must be a number.")),
            },
        };
        let all = self.functions.all();
        let rest = all
            .iter()
            .filter(|r| marker.is_none_or(|m| r.target.name.as_str() > m));
        let page: Vec<&Registered> = rest.clone().take(max).collect();
        let mut out = json!({
            "Functions": page.iter().map(|r| self.configuration(r)).collect::<Vec<_>>(),
        });
        if rest.count() > page.len() {
            if let Some(last) = page.last() {
                out["NextMarker"] = json!(last.target.name);
            }
        }
        Ok(out)
    }

    /// `CreateFunction`, from the request's body.
    pub async fn create_function(&self, body: &[u8]) -> Result<Value, LambdaError> {
        let request = parse_object(body)?;
        let (target, details) = self.function_request(&request)?;
        let registered = Registered::new(target, Origin::Api, details);
        let name = registered.target.name.clone();
        if self.functions.add(registered).is_err() {
            return Err(LambdaError::conflict(format!(
                "Function already exist: {name}"
            )));
        }
        self.restart_pollers_of(&name);
        self.persist().await?;
        let r = self
            .functions
            .registered(&name)
            .ok_or_else(|| self.function_not_found(&name))?;
        Ok(self.configuration(&r))
    }

    /// `DeleteFunction`: a function the configuration declares is refused
    /// (it would be back at the next start). Its mappings stay, as
    /// Lambda's do, and stop invoking until a function of the name exists
    /// again.
    pub async fn delete_function(
        &self,
        name_or_arn: &str,
        qualifier: Option<&str>,
    ) -> Result<(), LambdaError> {
        check_function_name("functionName", name_or_arn, 256).map_err(|problem| {
            LambdaError::validation(format!("1 validation error detected: {problem}"))
        })?;
        if let Some(q) = qualifier.filter(|q| *q != "$LATEST") {
            return Err(LambdaError::not_found(format!(
                "Function not found: {}:{q}",
                function_arn(&self.region, &self.account, function_name(name_or_arn))
            )));
        }
        let name = function_name(name_or_arn).to_string();
        match self.functions.remove(&name) {
            Err(_) => Err(LambdaError::conflict(format!(
                "Function {name} is declared in Retsu's configuration (--function or [[functions]]); remove it there."
            ))),
            Ok(None) => Err(self.function_not_found(&name)),
            Ok(Some(_)) => {
                self.restart_pollers_of(&name);
                self.persist().await
            }
        }
    }

    /// The admin API's view of every function.
    pub fn functions_view(&self) -> Vec<Value> {
        self.functions
            .all()
            .iter()
            .map(|r| self.function_view(r))
            .collect()
    }

    /// The admin API's view of one function.
    pub fn function_view_of(&self, name: &str) -> Option<Value> {
        self.functions
            .registered(name)
            .map(|r| self.function_view(&r))
    }

    fn function_view(&self, r: &Registered) -> Value {
        let f = &r.target;
        let mut out = json!({
            "name": f.name,
            "arn": function_arn(&self.region, &self.account, &f.name),
            "origin": r.origin.name(),
            "timeout": f.timeout_s,
            "concurrency": f.concurrency,
            "environment": f.environment,
        });
        match &f.target {
            Target::Url(url) => out["url"] = json!(url),
            Target::Command(argv) => out["command"] = json!(argv),
        }
        out
    }

    /// The admin API's `PUT`: adds or replaces a function (not one the
    /// configuration declares); the caller persists. `Ok(true)`: it is new.
    pub fn put_function(&self, target: FunctionTarget) -> Result<bool, String> {
        let name = target.name.clone();
        let details = Details {
            last_modified_ms: self.engine.now(),
            ..Details::default()
        };
        let new = self
            .functions
            .put(Registered::new(target, Origin::Admin, details))
            .map_err(|_| declared(&name))?;
        self.restart_pollers_of(&name);
        Ok(new)
    }

    /// The admin API's `DELETE`; the caller persists. `Ok(false)`: there
    /// was none of that name.
    pub fn remove_function(&self, name: &str) -> Result<bool, String> {
        let removed = self.functions.remove(name).map_err(|_| declared(name))?;
        if removed.is_some() {
            self.restart_pollers_of(name);
        }
        Ok(removed.is_some())
    }

    /// The mappings naming `name` poll again with the function as it now
    /// is (or stop, when there is none): the old pollers finish the batch
    /// they hold.
    fn restart_pollers_of(&self, name: &str) {
        let mut state = self.lock();
        for entry in state.mappings.values_mut() {
            if entry.mapping.function_name != name {
                continue;
            }
            if let Some(old) = entry.poller.take() {
                old.stop();
            }
            entry.poller = self.start_poller(&entry.mapping);
        }
    }

    /// The target and description a `CreateFunction` request gives.
    fn function_request(
        &self,
        request: &Map<String, Value>,
    ) -> Result<(FunctionTarget, Details), LambdaError> {
        let mut problems = Vec::new();
        let text = |key: &str, problems: &mut Vec<String>| -> Option<String> {
            match request.get(key) {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => {
                    problems.push(format!(
                        "Value '{other}' at '{}' failed to satisfy constraint: Member must be a string",
                        lower_camel(key)
                    ));
                    None
                }
            }
        };
        let integer = |key: &str, problems: &mut Vec<String>| -> Option<i64> {
            match request.get(key) {
                None | Some(Value::Null) => None,
                Some(v) => v.as_i64().or_else(|| {
                    problems.push(format!(
                        "Value '{v}' at '{}' failed to satisfy constraint: Member must be an integer",
                        lower_camel(key)
                    ));
                    None
                }),
            }
        };
        let name = text("FunctionName", &mut problems);
        let role = text("Role", &mut problems);
        let runtime = text("Runtime", &mut problems);
        let handler = text("Handler", &mut problems);
        let description = text("Description", &mut problems).unwrap_or_default();
        let package_type = text("PackageType", &mut problems);
        let timeout = integer("Timeout", &mut problems);
        let memory = integer("MemorySize", &mut problems);
        match &name {
            None => problems.push(null_member("functionName")),
            Some(n) => {
                if let Err(problem) = check_function_name("functionName", n, 140) {
                    problems.push(problem);
                }
            }
        }
        match &role {
            None => problems.push(null_member("role")),
            Some(r) if !role_matches(r) => problems.push(pattern("role", r, ROLE_PATTERN)),
            Some(_) => {}
        }
        let code = match request.get("Code") {
            None | Some(Value::Null) => {
                problems.push(null_member("code"));
                None
            }
            Some(Value::Object(code)) => Some(code),
            Some(other) => {
                problems.push(format!(
                    "Value '{other}' at 'code' failed to satisfy constraint: Member must be a structure"
                ));
                None
            }
        };
        if let Some(r) = runtime.as_deref().filter(|r| !RUNTIMES.contains(r)) {
            problems.push(format!(
                "Value '{r}' at 'runtime' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
                RUNTIMES.join(", ")
            ));
        }
        if let Some(h) = &handler {
            if h.len() > 128 {
                problems.push(longer("handler", h, 128));
            } else if h.is_empty() || h.chars().any(char::is_whitespace) {
                problems.push(pattern("handler", h, r"[^\s]+"));
            }
        }
        if description.chars().count() > 256 {
            problems.push(longer("description", &description, 256));
        }
        if let Some(p) = package_type
            .as_deref()
            .filter(|p| !["Zip", "Image"].contains(p))
        {
            problems.push(format!(
                "Value '{p}' at 'packageType' failed to satisfy constraint: Member must satisfy enum value set: [Zip, Image]"
            ));
        }
        if let Some(t) = timeout.filter(|t| *t < 1) {
            problems.push(format!(
                "Value '{t}' at 'timeout' failed to satisfy constraint: Member must have value greater than or equal to 1"
            ));
        }
        if let Some(m) = memory.filter(|m| !(MEMORY_MB.0..=MEMORY_MB.1).contains(m)) {
            problems.push(format!(
                "Value '{m}' at 'memorySize' failed to satisfy constraint: Member must have value {}",
                if m < MEMORY_MB.0 {
                    format!("greater than or equal to {}", MEMORY_MB.0)
                } else {
                    format!("less than or equal to {}", MEMORY_MB.1)
                }
            ));
        }
        let environment = environment(request.get("Environment"), &mut problems);
        let tags = match request.get("Tags") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(tags)) => tags
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect(),
            Some(other) => {
                problems.push(format!(
                    "Value '{other}' at 'tags' failed to satisfy constraint: Member must be a map"
                ));
                BTreeMap::new()
            }
        };
        if !problems.is_empty() {
            let n = problems.len();
            return Err(LambdaError::validation(format!(
                "{n} validation error{} detected: {}",
                if n == 1 { "" } else { "s" },
                problems.join("; ")
            )));
        }
        // Lambda's own rules, past the model's.
        let name = function_name(name.as_deref().unwrap_or_default()).to_string();
        let timeout = timeout.unwrap_or(DEFAULT_TIMEOUT_S as i64);
        if timeout > 900 {
            return Err(LambdaError::validation(format!(
                "1 validation error detected: Value '{timeout}' at 'timeout' failed to satisfy constraint: Member must have value less than or equal to 900"
            )));
        }
        let package_type = package_type.unwrap_or_else(|| "Zip".into());
        let code = code.cloned().unwrap_or_default();
        if package_type == "Image" && code.get("ImageUri").and_then(Value::as_str).is_none() {
            return Err(LambdaError::invalid_parameter(
                "Please provide ImageUri when PackageType is Image.",
            ));
        }
        if package_type == "Zip" && (runtime.is_none() || handler.is_none()) {
            return Err(LambdaError::invalid_parameter(
                "Runtime and Handler are mandatory parameters for functions created with deployment packages.",
            ));
        }
        let zip = match code.get("ZipFile").and_then(Value::as_str) {
            None => Vec::new(),
            Some(encoded) => base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|_| {
                    LambdaError::invalid_parameter(
                        "Could not unzip uploaded file. Please check your file, then try to upload again.",
                    )
                })?,
        };
        let Some(url) = environment.get(INVOKE_URL_VARIABLE).cloned() else {
            return Err(LambdaError::invalid_parameter(format!(
                "Retsu invokes a function at the URL in its environment variable {INVOKE_URL_VARIABLE} (the Invoke API of AWS's runtime interface emulator, sam local start-lambda, or any HTTP handler); function {name} has none in Environment.Variables."
            )));
        };
        let target = FunctionTarget::with_url(&name, &url, environment, timeout as u64)
            .map_err(|e| LambdaError::invalid_parameter(format!("{INVOKE_URL_VARIABLE}: {e}")))?;
        let details = Details {
            role,
            runtime,
            handler,
            description,
            memory_size: memory.map_or(DEFAULT_MEMORY_MB, |m| m as u32),
            package_type,
            tags,
            code_sha256: base64::engine::general_purpose::STANDARD.encode(Sha256::digest(&zip)),
            code_size: zip.len() as u64,
            last_modified_ms: self.engine.now(),
        };
        Ok((target, details))
    }
}

fn declared(name: &str) -> String {
    format!(
        "function {name} is declared in the configuration (--function or [[functions]]); change it there"
    )
}

/// The body as a JSON object, or Lambda's refusal.
fn parse_object(body: &[u8]) -> Result<Map<String, Value>, LambdaError> {
    let unreadable = |detail: String| {
        LambdaError::new(
            400,
            "InvalidRequestContentException",
            format!("Could not parse request body into json: {detail}"),
        )
    };
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(unreadable("the body is not a JSON object".into())),
        Err(e) => Err(unreadable(e.to_string())),
    }
}

/// `Environment.Variables`, each name checked against the model.
fn environment(value: Option<&Value>, problems: &mut Vec<String>) -> BTreeMap<String, String> {
    let variables = match value {
        None | Some(Value::Null) => return BTreeMap::new(),
        Some(Value::Object(env)) => match env.get("Variables") {
            None | Some(Value::Null) => return BTreeMap::new(),
            Some(Value::Object(vars)) => vars,
            Some(other) => {
                problems.push(format!(
                    "Value '{other}' at 'environment.variables' failed to satisfy constraint: Member must be a map"
                ));
                return BTreeMap::new();
            }
        },
        Some(other) => {
            problems.push(format!(
                "Value '{other}' at 'environment' failed to satisfy constraint: Member must be a structure"
            ));
            return BTreeMap::new();
        }
    };
    let mut out = BTreeMap::new();
    for (k, v) in variables {
        let mut chars = k.chars();
        let name_ok = k.len() >= 2
            && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name_ok {
            // The names are sensitive in the model: AWS does not echo them.
            problems.push(format!(
                "Value at 'environment.variables' failed to satisfy constraint: Map keys must satisfy constraint: [Member must satisfy regular expression pattern: {VARIABLE_PATTERN}]"
            ));
            continue;
        }
        match v.as_str() {
            Some(s) => {
                out.insert(k.clone(), s.to_string());
            }
            None => problems.push(
                "Value at 'environment.variables' failed to satisfy constraint: Map values must be strings"
                    .into(),
            ),
        }
    }
    out
}

/// A `FunctionName` (or `NamespacedFunctionName`, up to `max` long) as
/// botocore's pattern takes it: an optional ARN prefix, a name of
/// letters, digits, `-` and `_`, and an optional qualifier.
/// `Err`: the problem, as a validation error names it.
fn check_function_name(member: &str, value: &str, max: usize) -> Result<(), String> {
    if value.is_empty() || value.len() > max {
        return Err(format!(
            "Value '{value}' at '{member}' failed to satisfy constraint: Member must have length {}",
            if value.is_empty() { "greater than or equal to 1".to_string() } else { format!("less than or equal to {max}") }
        ));
    }
    let name_chars = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    let parts: Vec<&str> = value.split(':').collect();
    let ok = match parts.as_slice() {
        ["function", name] => name_chars(name),
        ["function", name, q] => name_chars(name) && (*q == "$LATEST" || name_chars(q)),
        [name] => name_chars(name),
        [name, q] => name_chars(name) && (*q == "$LATEST" || name_chars(q)),
        [account, "function", name, rest @ ..] => {
            account.len() == 12
                && account.chars().all(|c| c.is_ascii_digit())
                && name_chars(name)
                && match rest {
                    [] => true,
                    [q] => *q == "$LATEST" || name_chars(q),
                    _ => false,
                }
        }
        ["arn", partition, "lambda", region, account, "function", name, rest @ ..] => {
            partition.starts_with("aws")
                && !region.is_empty()
                && account.len() == 12
                && account.chars().all(|c| c.is_ascii_digit())
                && name_chars(name)
                && match rest {
                    [] => true,
                    [q] => *q == "$LATEST" || name_chars(q),
                    _ => false,
                }
        }
        _ => false,
    };
    let bare = function_name(value);
    if !ok {
        return Err(pattern(member, value, FUNCTION_NAME_PATTERN));
    }
    if bare.len() > 64 {
        return Err(longer(member, bare, 64));
    }
    Ok(())
}

/// botocore's `RoleArn` pattern.
fn role_matches(role: &str) -> bool {
    let Some(rest) = role.strip_prefix("arn:") else {
        return false;
    };
    let Some((partition, rest)) = rest.split_once(':') else {
        return false;
    };
    let partition_ok = partition.is_empty()
        || partition
            .strip_prefix("aws")
            .is_some_and(|p| p.chars().all(|c| c.is_ascii_alphabetic() || c == '-'));
    let Some(rest) = rest.strip_prefix("iam::") else {
        return false;
    };
    let Some((account, rest)) = rest.split_once(':') else {
        return false;
    };
    let Some(path) = rest.strip_prefix("role") else {
        return false;
    };
    let path = path.strip_prefix('/').unwrap_or(path);
    partition_ok
        && account.len() == 12
        && account.chars().all(|c| c.is_ascii_digit())
        && !path.is_empty()
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_+=,.@-/".contains(c))
}

fn null_member(member: &str) -> String {
    format!("Value null at '{member}' failed to satisfy constraint: Member must not be null")
}

fn pattern(member: &str, value: &str, pattern: &str) -> String {
    format!(
        "Value '{value}' at '{member}' failed to satisfy constraint: Member must satisfy regular expression pattern: {pattern}"
    )
}

fn longer(member: &str, value: &str, max: usize) -> String {
    format!(
        "Value '{value}' at '{member}' failed to satisfy constraint: Member must have length less than or equal to {max}"
    )
}

/// `FunctionName` to `functionName`, as AWS names members in its errors.
fn lower_camel(key: &str) -> String {
    let mut chars = key.chars();
    chars
        .next()
        .map(|c| c.to_ascii_lowercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_pattern() {
        for good in [
            "arn:aws:iam::000000000000:role/lambda",
            "arn:aws:iam::123456789012:role/service-role/x_y+z=,.@-",
            "arn:aws-cn:iam::123456789012:role/r",
            "arn::iam::123456789012:role/r",
        ] {
            assert!(role_matches(good), "{good}");
        }
        for bad in [
            "",
            "role",
            "arn:aws:iam::12345:role/r",
            "arn:aws:iam::123456789012:user/r",
            "arn:aws:iam::123456789012:role/",
            "arn:aws:iam::123456789012:role/a b",
            "arn:gcp:iam::123456789012:role/r",
        ] {
            assert!(!role_matches(bad), "{bad}");
        }
    }

    #[test]
    fn function_name_pattern() {
        for good in [
            "f",
            "my-function_1",
            "f:$LATEST",
            "f:prod",
            "function:f",
            "123456789012:function:f",
            "arn:aws:lambda:us-east-1:123456789012:function:f",
            "arn:aws:lambda:us-east-1:123456789012:function:f:1",
        ] {
            assert!(
                check_function_name("functionName", good, 140).is_ok(),
                "{good}"
            );
        }
        for bad in [
            "",
            "a b",
            "f.x",
            "f:a:b",
            "arn:aws:lambda:us-east-1:12:function:f",
            &"x".repeat(65),
            &"x".repeat(141),
        ] {
            let problem = check_function_name("functionName", bad, 140).unwrap_err();
            assert!(problem.contains("at 'functionName'"), "{bad}: {problem}");
        }
    }

    #[test]
    fn last_modified_is_lambdas_format() {
        assert_eq!(
            last_modified(1_700_000_000_123),
            "2023-11-14T22:13:20.123+0000"
        );
    }
}
