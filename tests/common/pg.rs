//! The PostgreSQL the tests were given, if any: `RETSU_TEST_POSTGRES` is
//! an admin URL of a throwaway server (`scripts/postgres.sh run …` sets
//! it); each test makes a database of its own there.
//!
//! rust-postgres's synchronous client runs a runtime of its own, so every
//! call here runs on a thread of its own, never on the test's runtime.

use postgres::error::SqlState;
use postgres::{Client, NoTls};

/// The admin URL, when the tests run against PostgreSQL.
pub fn admin_url() -> Option<String> {
    std::env::var("RETSU_TEST_POSTGRES")
        .ok()
        .filter(|v| !v.is_empty())
}

/// The URL of database `name` on the same server.
pub fn url_of(name: &str) -> String {
    let admin = admin_url().expect("RETSU_TEST_POSTGRES is set");
    let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
    format!("{base}/{name}")
}

/// Runs `f` with a connection to `url`, off the caller's runtime.
pub fn with_client<T: Send + 'static>(
    url: &str,
    f: impl FnOnce(&mut Client) -> T + Send + 'static,
) -> T {
    let url = url.to_string();
    std::thread::spawn(move || {
        let mut client = Client::connect(&url, NoTls).expect("connect to the test PostgreSQL");
        f(&mut client)
    })
    .join()
    .expect("PostgreSQL helper thread")
}

/// A database made for one test (its name from `hint`, made unique);
/// returns its URL.
pub fn fresh_database(hint: &str) -> String {
    let clean: String = hint
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    // This process's id, when it made its first, and a count within it
    // (a name from the time of day alone was once given to two tests);
    // a name taken all the same is passed over.
    static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    static STARTED: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    let started = STARTED.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros()
            % 1_000_000
    });
    let admin = admin_url().expect("RETSU_TEST_POSTGRES is set");
    for _ in 0..10 {
        let name = format!(
            "t_{}_{}_{started}_{}",
            &clean[..clean.len().min(32)],
            std::process::id(),
            MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let create = format!("CREATE DATABASE {name}");
        let made = with_client(&admin, move |c| {
            c.batch_execute(&create)
                .map_err(|e| (e.code().cloned(), e.to_string()))
        });
        match made {
            Ok(()) => return url_of(&name),
            Err((Some(code), _))
                if code == SqlState::DUPLICATE_DATABASE || code == SqlState::UNIQUE_VIOLATION =>
            {
                continue
            }
            Err((_, e)) => panic!("CREATE DATABASE {name}: {e}"),
        }
    }
    panic!("CREATE DATABASE: ten names in a row were taken")
}
