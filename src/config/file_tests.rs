use super::*;
use crate::cli::Cli;

fn source(text: &str) -> Source {
    Source {
        path: "test.toml".into(),
        text: text.into(),
    }
}

/// Resolves `text` as `retsu <args> --config test.toml` would.
fn resolve(text: &str, args: &[&str]) -> Result<(Config, LogFormat, QueuePlan), ConfigError> {
    let argv = std::iter::once("retsu").chain(args.iter().copied());
    let (cli, matches) = Cli::try_parse_with_matches(argv).unwrap();
    let source = source(text);
    let file = FileConfig::parse(&source)?;
    let mut config = cli.server.clone();
    file.apply_settings(&source, &mut config, &matches)?;
    let format = file.log_format(cli.log_format, &matches, "log_format");
    let plan = QueuePlan::build(&file, &source, &config)?;
    Ok((config, format, plan))
}

/// The error a file gives, parsing and building (and, with `engine`,
/// applying on a scratch engine).
async fn error_of(text: &str) -> ConfigError {
    match resolve(text, &[]) {
        Err(e) => e,
        Ok((config, _, plan)) => plan
            .check(config.engine_config())
            .await
            .expect_err("the file was accepted"),
    }
}

async fn assert_error(text: &str, line: usize, needle: &str) {
    let e = error_of(text).await;
    assert_eq!(e.file, "test.toml");
    assert_eq!(e.line, Some(line), "{e}");
    assert!(e.message.contains(needle), "{needle:?} not in: {e}");
    let shown = e.to_string();
    assert!(
        shown.starts_with(&format!("test.toml, line {line}, column ")),
        "{shown}"
    );
}

const EVERY_KEY: &str = r#"
host = "0.0.0.0"
port = 9500
region = "eu-west-1"
account_id = "123456789012"
base_url = "http://sqs.local:9500/"
strict_timing = true
clock = "frozen"
clock_start = "2026-01-01T00:00:00Z"
no_admin = true
admin_token = "file-token"
log_level = "debug"
log_format = "json"
history_events = 50
history_finished = 5

[limits]
header_timeout = 7
body_timeout = 8
max_connections = 9
max_headers = 10
max_header_bytes = 2048
shutdown_timeout = 0
"#;

#[test]
fn every_setting_is_read() {
    let (c, format, plan) = resolve(EVERY_KEY, &[]).unwrap();
    assert_eq!(c.host, "0.0.0.0");
    assert_eq!(c.port, 9500);
    assert_eq!(c.region, "eu-west-1");
    assert_eq!(c.account_id, "123456789012");
    assert_eq!(c.base_url.as_deref(), Some("http://sqs.local:9500"));
    assert!(c.strict_timing);
    assert_eq!(c.clock, ClockMode::Frozen);
    assert_eq!(c.clock_start, Some(1_767_225_600_000));
    assert!(c.no_admin);
    assert_eq!(c.admin_token.as_deref(), Some("file-token"));
    assert_eq!(c.log_level, "debug");
    assert_eq!(format, LogFormat::Json);
    assert_eq!((c.history_events, c.history_finished), (50, 5));
    let l = &c.limits;
    assert_eq!(
        (
            l.header_timeout,
            l.body_timeout,
            l.max_connections,
            l.max_headers,
            l.max_header_bytes,
            l.shutdown_timeout
        ),
        (7, 8, 9, 10, 2048, 0)
    );
    assert!(plan.queues.is_empty());
    // A flag beats the file's limit; a nonsense limit names its line.
    let (c, _, _) = resolve(EVERY_KEY, &["--header-timeout", "3"]).unwrap();
    assert_eq!(c.limits.header_timeout, 3);
    let err = resolve("[limits]\nmax_header_bytes = 10\n", &[]).unwrap_err();
    assert!(err.to_string().contains("line 2"), "{err}");
    assert!(resolve("[limits]\nheader_timeouts = 1\n", &[]).is_err());
    let (c, _, _) = resolve(EVERY_KEY, &["--clock", "running", "--admin-token", "flag"]).unwrap();
    assert_eq!(c.clock, ClockMode::Running);
    assert_eq!(c.admin_token.as_deref(), Some("flag"));
    let err = resolve("clock_start = \"soon\"\n", &[]).unwrap_err();
    assert_eq!(err.line, Some(1));
    assert!(resolve("clock = \"slow\"\n", &[]).is_err());
}

#[test]
fn flags_beat_the_file_and_the_file_beats_defaults() {
    let (c, format, _) = resolve(
        EVERY_KEY,
        &[
            "--port",
            "9600",
            "--region",
            "ap-south-1",
            "--log-format",
            "text",
            "--strict-timing",
        ],
    )
    .unwrap();
    assert_eq!(c.port, 9600, "flag wins");
    assert_eq!(c.region, "ap-south-1", "flag wins");
    assert_eq!(
        format,
        LogFormat::Text,
        "flag wins even when it names the default"
    );
    assert_eq!(c.account_id, "123456789012", "file beats default");
    assert_eq!(c.host, "0.0.0.0", "file beats default");
    // A flag naming the default value still wins over the file.
    let (c, _, _) = resolve(EVERY_KEY, &["--port", "9324"]).unwrap();
    assert_eq!(c.port, 9324);
    // Nothing in the file: defaults.
    let (c, format, _) = resolve("", &[]).unwrap();
    assert_eq!(c, Config::default());
    assert_eq!(format, LogFormat::Text);
}

#[test]
fn queues_default_to_the_effective_region_and_account() {
    let text = r#"
region = "eu-west-1"
[[queues]]
name = "here"
[[queues]]
name = "there"
region = "us-west-2"
account_id = "111122223333"
"#;
    let (_, _, plan) = resolve(text, &["--account-id", "999999999999"]).unwrap();
    let keys: Vec<String> = plan.queues.iter().map(|q| q.key.arn()).collect();
    assert_eq!(
        keys,
        [
            "arn:aws:sqs:eu-west-1:999999999999:here",
            "arn:aws:sqs:us-west-2:111122223333:there"
        ]
    );
}

#[test]
fn dead_letter_wiring_by_name_in_dependency_order() {
    let text = r#"
[[queues]]
name = "a"
dead_letter_queue = "b"
max_receive_count = 3
[[queues]]
name = "b"
dead_letter_queue = "c"
max_receive_count = 7
redrive_allow_policy = { permission = "byQueue", source_queues = ["a", "arn:aws:sqs:us-east-1:000000000000:elsewhere"] }
[[queues]]
name = "c"
redrive_allow_policy = { permission = "allowAll" }
[[queues]]
name = "d.fifo"
tags = { team = "x" }
"#;
    let (_, _, plan) = resolve(text, &[]).unwrap();
    let names: Vec<&str> = plan.queues.iter().map(|q| q.key.name.as_str()).collect();
    assert_eq!(names, ["c", "b", "a", "d.fifo"]);
    let attr = |name: &str, attr: &str| {
        let q = plan.queues.iter().find(|q| q.key.name == name).unwrap();
        q.attributes.get(attr).cloned()
    };
    let policy: serde_json::Value =
        serde_json::from_str(&attr("a", "RedrivePolicy").unwrap()).unwrap();
    assert_eq!(
        policy,
        serde_json::json!({"deadLetterTargetArn": "arn:aws:sqs:us-east-1:000000000000:b", "maxReceiveCount": 3})
    );
    let allow: serde_json::Value =
        serde_json::from_str(&attr("b", "RedriveAllowPolicy").unwrap()).unwrap();
    assert_eq!(
        allow,
        serde_json::json!({"redrivePermission": "byQueue", "sourceQueueArns": [
            "arn:aws:sqs:us-east-1:000000000000:a",
            "arn:aws:sqs:us-east-1:000000000000:elsewhere"
        ]})
    );
    assert_eq!(
        attr("c", "RedriveAllowPolicy").as_deref(),
        Some(r#"{"redrivePermission":"allowAll"}"#)
    );
    assert_eq!(attr("d.fifo", "FifoQueue").as_deref(), Some("true"));
    assert_eq!(plan.queues[3].tags["team"], "x");
}

#[test]
fn creation_order_and_cycles() {
    assert_eq!(creation_order(&[None, Some(0), Some(1)]), Ok(vec![0, 1, 2]));
    assert_eq!(creation_order(&[Some(2), None, Some(1)]), Ok(vec![1, 2, 0]));
    assert_eq!(creation_order(&[Some(0)]), Err(vec![0, 0]));
    assert_eq!(
        creation_order(&[None, Some(2), Some(3), Some(1)]),
        Err(vec![1, 2, 3, 1])
    );
}

#[test]
fn auth_table() {
    let text = "[auth]\nenabled = true\nkeys = [\n  { access_key = \"AKID1\", secret_key = \"s1\", account_id = \"111111111111\" },\n  { access_key = \"AKID2\", secret_key = \"s/2+\", account_id = \"222222222222\" },\n]\n";
    let (c, _, _) = resolve(text, &[]).unwrap();
    assert!(c.auth);
    let keys: Vec<_> = c
        .auth_keys
        .iter()
        .map(|k| {
            (
                k.access_key.as_str(),
                k.secret_key.as_str(),
                k.account_id.as_str(),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("AKID1", "s1", "111111111111"),
            ("AKID2", "s/2+", "222222222222")
        ]
    );
    // A flag's keys replace the file's; --auth alone keeps them.
    let (c, _, _) = resolve(text, &["--auth-key", "AKID3:s3:333333333333"]).unwrap();
    assert_eq!(c.auth_keys.len(), 1);
    assert_eq!(c.auth_keys[0].access_key, "AKID3");
    // Off by default, even with keys listed.
    let (c, _, _) = resolve("[auth]\nkeys = []\n", &[]).unwrap();
    assert!(!c.auth);
    let (c, _, _) = resolve("", &[]).unwrap();
    assert!(!c.auth && c.auth_keys.is_empty());
}

#[test]
fn tls_table() {
    let text =
        "[tls]\nenabled = true\ncert = \"/etc/retsu/cert.pem\"\nkey = \"/etc/retsu/key.pem\"\n";
    let (c, _, _) = resolve(text, &[]).unwrap();
    assert!(c.tls.enabled);
    assert_eq!(
        c.tls.cert.as_deref(),
        Some(Path::new("/etc/retsu/cert.pem"))
    );
    assert_eq!(c.tls.key.as_deref(), Some(Path::new("/etc/retsu/key.pem")));
    // Flags win over the file.
    let (c, _, _) = resolve(text, &["--tls-cert", "mine.pem"]).unwrap();
    assert_eq!(c.tls.cert.as_deref(), Some(Path::new("mine.pem")));
    assert_eq!(c.tls.key.as_deref(), Some(Path::new("/etc/retsu/key.pem")));
    let (c, _, _) = resolve("", &[]).unwrap();
    assert!(!c.tls.wanted());
    assert!(resolve("[tls]\nport = 1\n", &[]).is_err());
}

#[tokio::test]
async fn bad_auth_tables_name_their_line() {
    assert_error(
        "[auth]\nenabled = true\nkeys = [\n  { access_key = \"A\", secret_key = \"s\", account_id = \"42\" },\n]\n",
        4,
        "invalid auth key: an account ID is 12 digits",
    )
    .await;
    assert_error("[auth]\nenable = true\n", 2, "unknown field `enable`").await;
    assert_error(
        "[auth]\nkeys = [{ access_key = \"A\", secret_key = \"s\" }]\n",
        2,
        "missing field `account_id`",
    )
    .await;
    assert_error("[auth]\nenabled = \"yes\"\n", 2, "expected a boolean").await;
    let e = error_of("[auth]\nenabled = true\n").await;
    assert!(e.message.contains("no key is configured"), "{e}");
}

#[tokio::test]
async fn each_kind_of_bad_file_names_its_line() {
    // Syntax.
    assert_error("port = 9324\nhost = \n", 2, "string").await;
    // Unknown keys, at the top and in a queue.
    assert_error("\nprot = 1\n", 2, "unknown field `prot`").await;
    assert_error(
        "[[queues]]\nname = \"a\"\nvisibility = 3\n",
        3,
        "unknown field `visibility`",
    )
    .await;
    // Wrong types.
    assert_error(
        "port = \"x\"\n",
        1,
        "invalid type: string \"x\", expected u16",
    )
    .await;
    assert_error("port = 70000\n", 1, "u16").await;
    assert_error("strict_timing = \"yes\"\n", 1, "expected a boolean").await;
    assert_error("log_format = \"xml\"\n", 1, "unknown variant `xml`").await;
    assert_error("[[queues]]\nname = 5\n", 2, "expected a string").await;
    assert_error(
        "[[queues]]\nname = \"a\"\nattributes = { Policy = 1.5 }\n",
        3,
        "attribute Policy is a float",
    )
    .await;
    // Values the flags would refuse.
    assert_error("\nregion = \"US East\"\n", 2, "a region is lower-case").await;
    assert_error("account_id = \"42\"\n", 1, "12 digits").await;
    assert_error("base_url = \"sqs.local\"\n", 1, "http://").await;
    assert_error("log_level = \"info,retsu=loud\"\n", 1, "invalid log_level").await;
    // A missing name.
    assert_error("[[queues]]\nattributes = {}\n", 1, "missing field `name`").await;
}

#[tokio::test]
async fn invalid_attributes_get_sqs_own_message_at_their_line() {
    let text = "[[queues]]\nname = \"a\"\n[queues.attributes]\nDelaySeconds = 0\nVisibilityTimeout = 99999\n";
    let e = error_of(text).await;
    assert_eq!(e.line, Some(5), "{e}");
    assert_eq!(
        e.message,
        "queue \"a\": InvalidAttributeValue: Invalid value for the parameter VisibilityTimeout."
    );
    assert_error(
        "[[queues]]\nname = \"a\"\nattributes = { NoSuchAttribute = 1 }\n",
        3,
        "Unknown Attribute NoSuchAttribute.",
    )
    .await;
    assert_error(
        "[[queues]]\nname = \"bad name!\"\n",
        2,
        "Can only include alphanumeric characters",
    )
    .await;
    assert_error(
        "[[queues]]\nname = \"a\"\ndead_letter_queue = \"b\"\nmax_receive_count = 1001\n[[queues]]\nname = \"b\"\n",
        4,
        "Invalid value for maxReceiveCount: 1001",
    )
    .await;
    // The dead-letter queue must be of the source's type.
    assert_error(
        "[[queues]]\nname = \"a.fifo\"\ndead_letter_queue = \"b\"\nmax_receive_count = 1\n[[queues]]\nname = \"b\"\n",
        3,
        "Dead-letter queue must be same type of queue as the source.",
    )
    .await;
    // The dead-letter queue's allow policy must let the source in.
    assert_error(
        "[[queues]]\nname = \"a\"\ndead_letter_queue = \"b\"\nmax_receive_count = 1\n[[queues]]\nname = \"b\"\nredrive_allow_policy = { permission = \"denyAll\" }\n",
        3,
        "does not allow this queue to use it as a dead-letter queue",
    )
    .await;
    assert_error(
        "[[queues]]\nname = \"b\"\nredrive_allow_policy = { permission = \"some\" }\n",
        3,
        "Invalid redrivePermission: some.",
    )
    .await;
}

#[tokio::test]
async fn wiring_problems_name_their_line() {
    assert_error(
        "[[queues]]\nname = \"a\"\ndead_letter_queue = \"nope\"\nmax_receive_count = 1\n",
        3,
        "dead_letter_queue \"nope\" is not declared in this file",
    )
    .await;
    // Same name, other region: still not the same queue.
    assert_error(
        "[[queues]]\nname = \"a\"\ndead_letter_queue = \"d\"\nmax_receive_count = 1\n[[queues]]\nname = \"d\"\nregion = \"eu-west-1\"\n",
        3,
        "not declared in this file (in region us-east-1",
    )
    .await;
    assert_error(
        "[[queues]]\nname = \"a\"\ndead_letter_queue = \"b\"\n[[queues]]\nname = \"b\"\n",
        3,
        "needs max_receive_count",
    )
    .await;
    assert_error(
        "[[queues]]\nname = \"a\"\nmax_receive_count = 2\n",
        3,
        "max_receive_count needs dead_letter_queue",
    )
    .await;
    assert_error(
        "[[queues]]\nname = \"a\"\n\n[[queues]]\nname = \"a\"\n",
        5,
        "queue \"a\" is declared twice (first on line 2)",
    )
    .await;
    assert_error(
        "[[queues]]\nname = \"a\"\ndead_letter_queue = \"a\"\nmax_receive_count = 1\n",
        3,
        "dead-letter queues form a cycle: a -> a",
    )
    .await;
    assert_error(
        "[[queues]]\nname = \"x\"\n[[queues]]\nname = \"a\"\ndead_letter_queue = \"b\"\nmax_receive_count = 1\n[[queues]]\nname = \"b\"\ndead_letter_queue = \"a\"\nmax_receive_count = 1\n",
        5,
        "dead-letter queues form a cycle: a -> b -> a",
    )
    .await;
    assert_error(
        "[[queues]]\nname = \"a\"\nredrive_allow_policy = { permission = \"byQueue\", source_queues = [\"ghost\"] }\n",
        3,
        "redrive_allow_policy names \"ghost\", which is not declared",
    )
    .await;
    assert_error(
        "[[queues]]\nname = \"a\"\ndead_letter_queue = \"b\"\nmax_receive_count = 1\nattributes = { RedrivePolicy = \"{}\" }\n[[queues]]\nname = \"b\"\n",
        5,
        "either dead_letter_queue or the RedrivePolicy attribute",
    )
    .await;
}

#[tokio::test]
async fn apply_is_idempotent_and_updates_an_existing_queue() {
    use crate::api::{GetQueueAttributesRequest, ListQueueTagsRequest, Response};
    use crate::clock::SystemClock;

    let text = r#"
[[queues]]
name = "jobs"
dead_letter_queue = "jobs-dlq"
max_receive_count = 4
tags = { team = "a" }
attributes = { VisibilityTimeout = 45 }
[[queues]]
name = "jobs-dlq"
"#;
    let (config, _, plan) = resolve(text, &[]).unwrap();
    let engine = Engine::new(Arc::new(SystemClock), config.engine_config());
    let ctx = RequestContext::new("us-east-1", "000000000000", "http://localhost");
    // "jobs" exists already with another visibility timeout.
    engine
        .handle(
            &ctx,
            Request::CreateQueue(CreateQueueRequest {
                queue_name: Some("jobs".into()),
                attributes: [("VisibilityTimeout".to_string(), "10".to_string())].into(),
                tags: Default::default(),
            }),
        )
        .await
        .unwrap();
    plan.apply(&engine, "http://localhost").await.unwrap();
    plan.apply(&engine, "http://localhost").await.unwrap();

    let attributes = |name: &str| {
        let engine = engine.clone();
        let ctx = ctx.clone();
        let name = name.to_string();
        async move {
            match engine
                .handle(
                    &ctx,
                    Request::GetQueueAttributes(GetQueueAttributesRequest {
                        queue_url: Some(name),
                        attribute_names: vec!["All".into()],
                    }),
                )
                .await
                .unwrap()
            {
                Response::GetQueueAttributes(r) => r.attributes,
                other => panic!("{other:?}"),
            }
        }
    };
    let jobs = attributes("jobs").await;
    assert_eq!(jobs["VisibilityTimeout"], "45", "the file's value wins");
    assert_eq!(
        jobs["RedrivePolicy"],
        r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:jobs-dlq","maxReceiveCount":4}"#
    );
    assert!(attributes("jobs-dlq").await.contains_key("QueueArn"));
    let tags = engine
        .handle(
            &ctx,
            Request::ListQueueTags(ListQueueTagsRequest {
                queue_url: Some("jobs".into()),
            }),
        )
        .await
        .unwrap();
    match tags {
        Response::ListQueueTags(r) => assert_eq!(r.tags["team"], "a"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_example_file_is_complete_and_valid() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/retsu.toml");
    let source = Source::read(Path::new(path)).unwrap();
    let (config, format, plan) = resolve(&source.text, &[]).unwrap();
    plan.check(config.engine_config()).await.unwrap();
    assert_eq!(format, LogFormat::Text);
    // Every top-level key is present in the example (uncommented or as
    // a commented line), so the example documents them all.
    for key in [
        "host",
        "port",
        "region",
        "account_id",
        "base_url",
        "strict_timing",
        "clock",
        "clock_start",
        "no_admin",
        "admin_token",
        "localstack",
        "no_localstack",
        "init_dir",
        "data_dir",
        "store",
        "durability",
        "log_level",
        "log_format",
    ] {
        assert!(
            source.text.lines().any(|l| {
                let l = l.trim_start_matches(['#', ' ']);
                l.starts_with(&format!("{key} ="))
            }),
            "{key} missing from the example"
        );
    }
    for key in [
        "name",
        "region",
        "account_id",
        "attributes",
        "tags",
        "dead_letter_queue",
        "max_receive_count",
        "redrive_allow_policy",
    ] {
        assert!(
            source.text.contains(&format!("\n{key} = ")),
            "queue key {key} missing from the example"
        );
    }
    let names: Vec<&str> = plan.queues.iter().map(|q| q.key.name.as_str()).collect();
    assert_eq!(names, ["jobs-dlq", "jobs", "orders.fifo", "audit"]);
}

#[tokio::test]
async fn functions_table() {
    let text = r#"
[[functions]]
name = "orders"
url = "http://127.0.0.1:9000"
timeout = 30

[[functions]]
name = "audit"
command = ["python3", "audit.py"]
environment = { STAGE = "test" }
concurrency = 4
"#;
    let (config, _, _) = resolve(text, &["--function", "orders=http://127.0.0.1:7000"]).unwrap();
    let names: Vec<&str> = config.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["orders", "audit"], "the flag's orders wins");
    let orders = &config.functions[0];
    assert_eq!(
        orders.target,
        crate::lambda::function::Target::Url(
            "http://127.0.0.1:7000/2015-03-31/functions/function/invocations".into()
        )
    );
    let audit = &config.functions[1];
    assert_eq!(audit.concurrency, 4);
    assert_eq!(audit.environment["STAGE"], "test");
    assert_eq!(audit.timeout_s, crate::lambda::function::DEFAULT_TIMEOUT_S);

    assert_error(
        "\n[[functions]]\nname = \"x\"\n",
        2,
        "needs either url or command",
    )
    .await;
    assert_error(
        "[[functions]]\nname = \"x\"\nurl = \"http://h\"\n[[functions]]\nname = \"x\"\nurl = \"http://h\"\n",
        4,
        "declared twice",
    )
    .await;
    assert_error(
        "[[functions]]\nname = \"x\"\nurl = \"http://h\"\ntimeout = 0\n",
        1,
        "1 to 900 seconds",
    )
    .await;
}
