//! The PostgreSQL the tests were given, if any: `RETSU_TEST_POSTGRES` is
//! an admin URL of a throwaway server (`scripts/postgres.sh run …` sets
//! it); each test makes a database of its own there.
//!
//! rust-postgres's synchronous client runs a runtime of its own, so every
//! call here runs on a thread of its own, never on the test's runtime.

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
    // 64 random bits: tests of several processes share the PostgreSQL, and
    // a name from the time of day was once given to two of them.
    let name = format!(
        "t_{}_{:016x}",
        &clean[..clean.len().min(32)],
        rand::random::<u64>()
    );
    let create = format!("CREATE DATABASE {name}");
    with_client(
        &admin_url().expect("RETSU_TEST_POSTGRES is set"),
        move |c| c.batch_execute(&create).expect("CREATE DATABASE"),
    );
    url_of(&name)
}
