//! `--store postgres://…`: what is PostgreSQL's own. The persistence suite
//! (tests/persistence.rs) runs on PostgreSQL as well when
//! `RETSU_TEST_POSTGRES` is set; here: a URL that cannot be used, a
//! database that is not Retsu's or of another format, and the database
//! going away under a running server (a TCP proxy the test cuts).
//!
//! The tests that need a PostgreSQL say they were skipped without
//! `RETSU_TEST_POSTGRES` (`scripts/postgres.sh run cargo test --test
//! postgres` gives one); the bad-URL tests need none.

mod common;

use std::time::{Duration, Instant};

use aws_sdk_sqs::Client;
use common::pg;
use common::process::{self, free_port, Running};
use common::proxy::Proxy;
use common::{create_queue_via, sorted_bodies as bodies};

fn no_postgres() -> bool {
    if pg::admin_url().is_none() {
        eprintln!("skipped: RETSU_TEST_POSTGRES is not set (scripts/postgres.sh run … gives one)");
        return true;
    }
    false
}

/// Runs `retsu --store URL` expecting it to refuse to start: its stderr.
fn refused(url: &str) -> String {
    let out = process::retsu()
        .args(["--port", &free_port().to_string(), "--store", url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "started on {url}: {err}");
    err
}

#[test]
fn a_malformed_or_unreachable_url_is_a_clear_start_up_error() {
    let err = refused("postgres://user@127.0.0.1:notaport/db");
    assert!(err.contains("malformed PostgreSQL URL"), "{err}");
    let err = refused("mysql://user@127.0.0.1/db");
    assert!(err.contains("not a store URL"), "{err}");
    // Nobody listens there: the cause is named, and the password is not.
    let port = free_port();
    let err = refused(&format!("postgres://user:hunter2@127.0.0.1:{port}/db"));
    assert!(err.contains("cannot connect to PostgreSQL"), "{err}");
    assert!(err.contains("Connection refused"), "{err}");
    assert!(
        !err.contains("hunter2") && err.contains("user:***@"),
        "{err}"
    );
    // --store and --data-dir name two places.
    let out = process::retsu()
        .args([
            "--store",
            "postgres://u@127.0.0.1/db",
            "--data-dir",
            "/tmp/x",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}

#[test]
fn a_missing_database_or_another_schema_or_format_is_refused_and_left_alone() {
    if no_postgres() {
        return;
    }
    let err = refused(&pg::url_of("no_such_database_here"));
    assert!(err.contains("does not exist"), "{err}");

    // A schema named retsu that Retsu did not write: untouched.
    let url = pg::fresh_database("foreign");
    pg::with_client(&url, |c| {
        c.batch_execute("CREATE SCHEMA retsu; CREATE TABLE retsu.mine (a int)")
            .unwrap()
    });
    let err = refused(&url);
    assert!(err.contains("Retsu did not write"), "{err}");
    let tables: i64 = pg::with_client(&url, |c| {
        c.query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'retsu'",
            &[],
        )
        .unwrap()
        .get(0)
    });
    assert_eq!(tables, 1, "only the table that was there");

    // Another format: named, refused, not rewritten.
    let url = pg::fresh_database("format");
    let s = start(&url, &[]);
    drop(s);
    pg::with_client(&url, |c| {
        c.batch_execute("UPDATE retsu.meta SET value = '99' WHERE key = 'format'")
            .unwrap()
    });
    let err = refused(&url);
    assert!(
        err.contains("format 99") && err.contains("reads format 7"),
        "{err}"
    );
    let format: String = pg::with_client(&url, |c| {
        c.query_one("SELECT value FROM retsu.meta WHERE key = 'format'", &[])
            .unwrap()
            .get(0)
    });
    assert_eq!(format, "99");
}

/// A store of an older format is migrated in place at start: format 2
/// lacked the drain column and the cluster's clock, format 3 the shards,
/// format 4 the shards' wanted nodes, format 6 the fence's lock that
/// renewals do not wait for; what it held becomes shard 1's, its queue
/// names placed there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_format_is_migrated_with_its_queues() {
    if no_postgres() {
        return;
    }
    let url = pg::fresh_database("format2");
    let s = start(&url, &[]);
    create_queue_via(&s.client("us-east-1"), "kept", &[]).await;
    drop(s);
    pg::with_client(&url, |c| {
        c.batch_execute(
            "ALTER TABLE retsu.lease DROP COLUMN wanted;
             ALTER TABLE retsu.nodes DROP COLUMN draining; DROP TABLE retsu.clock;
             UPDATE retsu.meta SET value = '2' WHERE key = 'format';
             -- Format 3's layout: the engine's state in meta, one lease row.
             INSERT INTO retsu.meta (key, value)
                SELECT key, value FROM retsu.shard_meta WHERE shard = 1 AND key = 'engine';
             DROP TABLE retsu.shard_meta; DROP TABLE retsu.placement; DROP TABLE retsu.outbox;
             DELETE FROM retsu.meta WHERE key IN ('shards', 'moves');
             DROP FUNCTION retsu.move_queues;
             DROP INDEX retsu.queues_shard; ALTER TABLE retsu.queues DROP COLUMN shard;
             DELETE FROM retsu.lease WHERE id <> 1;
             ALTER TABLE retsu.lease DROP CONSTRAINT lease_shard;
             ALTER TABLE retsu.lease ADD CONSTRAINT lease_id_check CHECK (id = 1);
             DROP FUNCTION retsu.fence(int, text, bigint);
             CREATE FUNCTION retsu.fence(p_node text, p_epoch bigint) RETURNS void
             LANGUAGE sql AS 'SELECT 1';",
        )
        .unwrap()
    });
    let s = start(&url, &[]);
    drop(s);
    let (format, columns, clock): (String, i64, i64) = pg::with_client(&url, |c| {
        let format = c
            .query_one("SELECT value FROM retsu.meta WHERE key = 'format'", &[])
            .unwrap()
            .get(0);
        let columns = c
            .query_one(
                "SELECT count(*) FROM information_schema.columns
                 WHERE table_schema = 'retsu' AND table_name = 'nodes' AND column_name = 'draining'",
                &[],
            )
            .unwrap()
            .get(0);
        let clock: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_tables WHERE schemaname = 'retsu' AND tablename = 'clock'",
                &[],
            )
            .unwrap()
            .get(0);
        let wanted: i64 = c
            .query_one(
                "SELECT count(*) FROM information_schema.columns
                 WHERE table_schema = 'retsu' AND column_name = 'wanted'
                    AND table_name IN ('lease', 'placement')",
                &[],
            )
            .unwrap()
            .get(0);
        (format, columns, clock + wanted)
    });
    assert_eq!((format.as_str(), columns, clock), ("7", 1, 3));
    // Format 7's fence: the holder's renewals do not wait for its commits.
    let fence: String = pg::with_client(&url, |c| {
        c.query_one(
            "SELECT prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = 'retsu' AND p.proname = 'fence'",
            &[],
        )
        .unwrap()
        .get(0)
    });
    assert!(fence.contains("FOR KEY SHARE"), "{fence}");
    let (queues, placed, shards): (i64, Vec<String>, i64) = pg::with_client(&url, |c| {
        let queues = c
            .query_one("SELECT count(*) FROM retsu.queues WHERE shard = 1", &[])
            .unwrap()
            .get(0);
        let placed = c
            .query(
                "SELECT kind || ' ' || name FROM retsu.placement WHERE shard = 1",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        let shards = c
            .query_one("SELECT count(*) FROM retsu.lease", &[])
            .unwrap()
            .get(0);
        (queues, placed, shards)
    });
    assert_eq!(
        queues, 1,
        "the queue made before the migration is kept, in shard 1"
    );
    assert_eq!(placed, ["queue kept"]);
    assert_eq!(
        shards,
        i64::from(retsu::journal::DEFAULT_SHARDS),
        "a lease row per shard"
    );
}

fn start(url: &str, extra: &[&str]) -> Running {
    Running::start_on_free_port(|port| {
        let mut c = process::retsu();
        c.args(["--port", &port.to_string(), "--store", url])
            .args(extra);
        c
    })
}

/// A failed call's error code and HTTP status.
fn code<E>(
    e: &aws_sdk_sqs::error::SdkError<E, aws_sdk_sqs::config::http::HttpResponse>,
) -> (String, u16)
where
    E: aws_sdk_sqs::error::ProvideErrorMetadata,
{
    let status = e.raw_response().map_or(0, |r| r.status().as_u16());
    let code = e.as_service_error().and_then(|s| s.code()).unwrap_or("");
    (code.to_string(), status)
}

async fn send(c: &Client, url: &str, body: &str) -> Result<(), (String, u16)> {
    c.send_message()
        .queue_url(url)
        .message_body(body)
        .send()
        .await
        .map(|_| ())
        .map_err(|e| code(&e))
}

/// Sends `body` again and again while the server answers 503 (as SDKs
/// retry), until one is answered: a server that recovers by itself.
async fn send_once_served(c: &Client, url: &str, body: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match send(c, url, body).await {
            Ok(()) => return,
            Err(e) => {
                assert_eq!(e, ("ServiceUnavailable".into(), 503));
                assert!(Instant::now() < deadline, "no recovery within 30 s");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// The database goes away under a running server: the send whose commit
/// fails and every change after it answer ServiceUnavailable (503, which
/// SDKs retry), reads are served, nothing is lost; once the database is
/// back, the server reconnects by itself, commits what it held, and
/// serves changes again; after `kill -9` everything acknowledged is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_the_database_refuses_changes_with_503_then_recovers_by_itself() {
    if no_postgres() {
        return;
    }
    let url = pg::fresh_database("outage");
    let target: u16 = url
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .expect("the test URL has a port");
    let proxy = Proxy::to(target).await;
    let via_proxy = url.replace(&format!(":{target}/"), &format!(":{}/", proxy.port));
    let s = start(&via_proxy, &[]);
    let c = s.client("us-east-1");
    let q = create_queue_via(&c, "held", &[]).await;
    send(&c, &q, "before").await.unwrap();

    proxy.cut();
    // The first change after the cut runs, and its commit fails.
    let first = send(&c, &q, "during").await;
    assert_eq!(first, Err(("ServiceUnavailable".into(), 503)));
    // Then changes are refused before they run; reads are served.
    let refused = send(&c, &q, "refused").await;
    assert_eq!(refused, Err(("ServiceUnavailable".into(), 503)));
    let attrs = c
        .get_queue_attributes()
        .queue_url(&q)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages)
        .send()
        .await
        .unwrap();
    assert!(attrs.attributes().is_some());
    c.list_queues().send().await.unwrap();

    proxy.restore();
    // The server finds the database again by itself (it retries).
    send_once_served(&c, &q, "after").await;
    s.line_with("reconnected to PostgreSQL");

    // kill -9: what was answered (and what ran before the failed commit,
    // which the journal kept and committed on reconnecting) is there; the
    // refused send never ran.
    drop(s);
    let s = start(&url, &[]);
    let c = s.client("us-east-1");
    assert_eq!(bodies(&c, &q).await, ["after", "before", "during"]);
}

/// A state change for a message whose row is missing writes the row
/// whole (the second round trip of a commit): the row is removed behind
/// the server's back, the message received, and after `kill -9` it is
/// back with its receive counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_change_for_a_missing_row_writes_it_whole() {
    if no_postgres() {
        return;
    }
    let url = pg::fresh_database("missing_row");
    let s = start(&url, &[]);
    let c = s.client("us-east-1");
    let q = create_queue_via(&c, "q", &[]).await;
    send(&c, &q, "kept").await.unwrap();
    let removed = pg::with_client(&url, |c| {
        c.execute("DELETE FROM retsu.messages", &[]).unwrap()
    });
    assert_eq!(removed, 1);
    let got = c
        .receive_message()
        .queue_url(&q)
        .visibility_timeout(0)
        .send()
        .await
        .unwrap();
    assert_eq!(got.messages().len(), 1);
    let (body, count): (String, i64) = pg::with_client(&url, |c| {
        let r = c
            .query_one("SELECT body, receive_count FROM retsu.messages", &[])
            .unwrap();
        (r.get(0), r.get(1))
    });
    assert_eq!((body.as_str(), count), ("kept", 1));
    drop(s);
    let s = start(&url, &[]);
    let c = s.client("us-east-1");
    let r = c
        .receive_message()
        .queue_url(&q)
        .message_system_attribute_names(aws_sdk_sqs::types::MessageSystemAttributeName::All)
        .send()
        .await
        .unwrap();
    let m = &r.messages()[0];
    assert_eq!(m.body(), Some("kept"));
    let attrs = m.attributes().unwrap();
    assert_eq!(
        attrs[&aws_sdk_sqs::types::MessageSystemAttributeName::ApproximateReceiveCount],
        "2"
    );
}

/// A commit is retried when it failed, and may have landed before its
/// answer was lost: the retry writes new rows over the ones it finds.
/// A first try does not expect them (a plain insert is cheaper for
/// PostgreSQL). Here a row stands at the slot the next send takes, as if
/// an earlier try of it had landed (its receive count made up): that send
/// is answered 503, the retry gives the row the message's state, and
/// changes are served again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_commit_writes_over_rows_an_earlier_try_left() {
    if no_postgres() {
        return;
    }
    let url = pg::fresh_database("retried");
    let s = start(&url, &[]);
    let c = s.client("us-east-1");
    let q = create_queue_via(&c, "q", &[]).await;
    send(&c, &q, "first").await.unwrap();
    let placed = pg::with_client(&url, |c| {
        c.execute(
            "INSERT INTO retsu.messages
             SELECT queue_uid, c.next_slot, message_id, 'second', body_md5,
                    attributes, trace_header, sender_id, sent_ms, enqueued_ms,
                    first_receive_ms, 7, group_id, dedup_id, sequence_number,
                    dead_letter_source_arn, state, until_ms, nonce, received_ms,
                    visible_since, ord
             FROM retsu.messages JOIN retsu.counters c USING (queue_uid)",
            &[],
        )
        .unwrap()
    });
    assert_eq!(placed, 1);

    let second = send(&c, &q, "second").await;
    assert_eq!(second, Err(("ServiceUnavailable".into(), 503)));
    send_once_served(&c, &q, "after").await;
    let counts = pg::with_client(&url, |c| {
        c.query(
            "SELECT body, receive_count FROM retsu.messages ORDER BY slot",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1)))
        .collect::<Vec<_>>()
    });
    let want: Vec<(String, i64)> = ["first", "second", "after"]
        .iter()
        .map(|b| (b.to_string(), 0))
        .collect();
    assert_eq!(counts, want);
    drop(s);
    let s = start(&url, &[]);
    let c = s.client("us-east-1");
    assert_eq!(bodies(&c, &q).await, ["after", "first", "second"]);
}
