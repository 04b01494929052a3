//! The SNS signing identity of a cluster: one for every shard and node,
//! kept in `retsu.meta`, so a message signed by any shard verifies against
//! the certificate any node serves. The first identity written is kept
//! (`INSERT … ON CONFLICT DO NOTHING`); whoever made another one at the
//! same moment reads it back and uses it instead
//! (`SigningIdentity::load_or_create_in`).

use std::io;

use tokio_postgres::NoTls;

use crate::notification_signing::KeyStore;

pub struct ClusterKeyStore {
    pub config: tokio_postgres::Config,
    pub shown: String,
}

impl ClusterKeyStore {
    /// Runs one statement on a connection of its own, on a thread of its
    /// own: asked once per shard, from inside a request, whose runtime it
    /// must not block on.
    fn run(&self, sql: &'static str, text: Option<String>) -> io::Result<Option<String>> {
        let config = self.config.clone();
        let key = crate::journal::SNS_SIGNING_KEY;
        std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()?;
                    runtime.block_on(async move {
                        let (client, connection) =
                            config.connect(NoTls).await.map_err(io::Error::other)?;
                        let connection = tokio::spawn(connection);
                        let row = match &text {
                            Some(text) => client.query_opt(sql, &[&key, text]).await,
                            None => client.query_opt(sql, &[&key]).await,
                        };
                        drop(client);
                        let _ = connection.await;
                        row.map(|r| r.map(|r| r.get::<_, String>(0)))
                            .map_err(io::Error::other)
                    })
                })
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the key store's thread panicked")))
        })
    }
}

impl KeyStore for ClusterKeyStore {
    fn read(&self) -> io::Result<Option<String>> {
        self.run("SELECT value FROM retsu.meta WHERE key = $1", None)
    }

    fn write(&self, text: &str) -> io::Result<()> {
        self.run(
            "INSERT INTO retsu.meta (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING
             RETURNING value",
            Some(text.to_string()),
        )
        .map(|_| ())
    }

    fn describe(&self) -> String {
        format!("the cluster's store {}", self.shown)
    }
}
