//! A cluster of real `retsu` processes on one PostgreSQL database
//! (`RETSU_TEST_POSTGRES`), each node reaching the database through a
//! proxy the test can cut. Real time: leases are short so failovers are
//! quick.

use std::time::{Duration, Instant};

use super::pg;
use super::process::{free_port, retsu, Running, IN_USE};
use super::proxy::Proxy;

pub const SECRET: &str = "a-test-cluster-secret";

pub struct Cluster {
    /// The database, directly.
    pub url: String,
    pub lease: Duration,
    pub nodes: Vec<Node>,
    /// More arguments every node is started with.
    pub args: Vec<String>,
}

pub struct Node {
    pub id: String,
    pub port: u16,
    /// The node's way to PostgreSQL.
    pub proxy: Proxy,
    pub process: Option<Running>,
    /// Started at least once: its address is known.
    started: bool,
}

impl Node {
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.process.as_ref().expect("running").child.id()
    }
}

/// The port in a postgres:// URL.
fn port_of(url: &str) -> u16 {
    url.rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .expect("the test URL has a port")
}

impl Cluster {
    /// `n` nodes on a fresh database; returns once one holds the lease
    /// and answers.
    pub async fn start(hint: &str, n: usize, lease: Duration) -> Cluster {
        Cluster::start_with(hint, n, lease, &[]).await
    }

    /// As `start`, every node also given `args`.
    pub async fn start_with(hint: &str, n: usize, lease: Duration, args: &[&str]) -> Cluster {
        let url = pg::fresh_database(hint);
        let target = port_of(&url);
        let mut nodes = Vec::new();
        for i in 0..n {
            nodes.push(Node {
                id: format!("node{}", i + 1),
                port: free_port(),
                proxy: Proxy::to(target).await,
                process: None,
                started: false,
            });
        }
        let args = args.iter().map(|a| a.to_string()).collect();
        let mut cluster = Cluster {
            url,
            lease,
            nodes,
            args,
        };
        for i in 0..n {
            cluster.start_node(i);
        }
        cluster.wait_for_holder(Duration::from_secs(20)).await;
        // Nodes give extra shards back at their ticks, a quarter lease apart.
        cluster
            .wait_balanced(Duration::from_secs(20).max(lease * 4))
            .await;
        cluster
    }

    /// Waits until the shards are spread over the running nodes (each
    /// holds its share), so no shard is about to change hands.
    pub async fn wait_balanced(&self, within: Duration) {
        let deadline = Instant::now() + within;
        let running = self.nodes.iter().filter(|n| n.process.is_some()).count();
        loop {
            let balanced = match self.view(0).await {
                Some(v) => {
                    let shards = v["shards"].as_array().map_or(0, Vec::len);
                    let share = shards / running.max(1);
                    let held: Vec<usize> = v["nodes"]
                        .as_array()
                        .map(|nodes| {
                            nodes
                                .iter()
                                .map(|n| n["shards"].as_array().map_or(0, Vec::len))
                                .collect()
                        })
                        .unwrap_or_default();
                    held.len() == running
                        && held.iter().all(|h| *h >= share)
                        && self.agreed_holder().await.is_some()
                }
                None => false,
            };
            if balanced {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the shards are not spread over the nodes after {within:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The command for node `i`, not started.
    pub fn command(&self, i: usize) -> std::process::Command {
        let node = &self.nodes[i];
        let target = port_of(&self.url);
        let store = self
            .url
            .replace(&format!(":{target}/"), &format!(":{}/", node.proxy.port));
        let mut c = retsu();
        c.args(["--port", &node.port.to_string()])
            .args(["--store", &store])
            .args(["--cluster-secret", SECRET])
            .args(["--node-id", &node.id])
            .args(["--node-url", &node.endpoint()])
            .args(["--lease", &format!("{}", self.lease.as_secs_f64())])
            .args(["--clock", "running"])
            .args(&self.args);
        c
    }

    /// Starts node `i` (again), waiting until it listens. Its port was
    /// chosen free, but another socket on the machine may take it before
    /// the node binds it: a node never started moves to another port, a
    /// restarted one (whose address the test may hold) waits for its own.
    pub fn start_node(&mut self, i: usize) {
        let first = !self.nodes[i].started;
        let mut tries = 0;
        loop {
            let port = self.nodes[i].port;
            match Running::try_start(self.command(i), port) {
                Ok(running) => {
                    self.nodes[i].process = Some(running);
                    self.nodes[i].started = true;
                    return;
                }
                Err(e) if e.contains(IN_USE) && tries < 25 => {
                    tries += 1;
                    if first {
                        self.nodes[i].port = free_port();
                    } else {
                        std::thread::sleep(Duration::from_millis(200));
                    }
                }
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// `kill -9` of node `i`.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut p) = self.nodes[i].process.take() {
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
    }

    pub fn signal(&self, i: usize, name: &str) {
        let status = std::process::Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.nodes[i].pid().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// Waits (real time) for node `i` to exit.
    pub async fn exit_status(&mut self, i: usize, within: Duration) -> std::process::ExitStatus {
        self.nodes[i]
            .process
            .as_mut()
            .expect("running")
            .exit_status(within)
            .await
    }

    /// `GET /_retsu/cluster` on node `i`.
    pub async fn view(&self, i: usize) -> Option<serde_json::Value> {
        let r = reqwest::Client::new()
            .get(format!("{}/_retsu/cluster", self.nodes[i].endpoint()))
            .timeout(Duration::from_millis(500))
            .send()
            .await
            .ok()?;
        serde_json::from_str(&r.text().await.ok()?).ok()
    }

    /// The index of the node holding a live lease and serving, once one
    /// does and every other running node knows it.
    pub async fn wait_for_holder(&self, within: Duration) -> usize {
        let deadline = Instant::now() + within;
        loop {
            if let Some(i) = self.agreed_holder().await {
                return i;
            }
            assert!(
                Instant::now() < deadline,
                "no node holds the lease after {within:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn agreed_holder(&self) -> Option<usize> {
        let mut holder = None;
        let mut views = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            if node.process.is_none() {
                continue;
            }
            // A paused node has no say.
            let Some(v) = self.view(i).await else {
                continue;
            };
            if v["serving"] == true {
                holder = Some(i);
            }
            // A node that cannot read the rows (cut from PostgreSQL) has no say.
            if v["view_age_ms"]
                .as_u64()
                .is_some_and(|age| age < self.lease.as_millis() as u64)
            {
                views.push(v);
            }
        }
        let i = holder?;
        let id = self.nodes[i].id.as_str();
        // Every shard held, by a node that answers: requests for any
        // queue or topic are served.
        let answering: Vec<&serde_json::Value> = views.iter().map(|v| &v["node"]).collect();
        let all_held = |v: &serde_json::Value| {
            v["shards"].as_array().is_some_and(|shards| {
                shards
                    .iter()
                    .all(|s| s["live"] == true && answering.contains(&&s["holder"]))
            })
        };
        views
            .iter()
            .all(|v| v["lease"]["holder"] == id && v["lease"]["live"] == true && all_held(v))
            .then_some(i)
    }

    /// The lease's epoch as node `i` sees it.
    pub async fn epoch(&self, i: usize) -> i64 {
        self.view(i).await.expect("the node answers")["lease"]["epoch"]
            .as_i64()
            .unwrap_or(0)
    }
}

/// A cluster of three nodes in this process, standing in for one server
/// in the ordinary integration tests (`RETSU_TEST_CLUSTER=1`).
pub struct InProcess {
    nodes: Vec<retsu::cluster::Node>,
    front: std::net::SocketAddr,
}

impl InProcess {
    /// Three nodes on a fresh database, sharing `clock`; returns once one
    /// serves and the others know it.
    pub async fn start(
        config: retsu::config::Config,
        clock: std::sync::Arc<dyn retsu::clock::Clock>,
    ) -> InProcess {
        let url = pg::fresh_database("suite");
        // The proxy's port first: it is where the cluster is reached.
        let front = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let front_addr = front.local_addr().unwrap();
        let token = config.admin_token.clone();
        let mut nodes = Vec::new();
        for i in 0..3 {
            // A free port can be taken by a parallel test before the node
            // binds it: then another.
            let mut attempt = 0;
            let node = loop {
                attempt += 1;
                let port = free_port();
                let node_config = retsu::config::Config {
                    port,
                    store: Some(retsu::journal::Store::Postgres(url.clone())),
                    cluster_secret: Some(SECRET.into()),
                    node_id: Some(format!("node{}", i + 1)),
                    node_url: Some(format!("http://127.0.0.1:{port}")),
                    // Long: a test that holds its thread a while must not
                    // lose the lease.
                    lease_ms: 30_000,
                    reached_at: Some(format!("http://{front_addr}")),
                    ..config.clone()
                };
                let mut settings = retsu::cluster::Settings::from_config(&node_config)
                    .expect("cluster settings")
                    .expect("a cluster node");
                settings.exit_on_loss = false;
                match retsu::cluster::Node::start(
                    node_config,
                    retsu::config::file::QueuePlan::empty(),
                    settings,
                    clock.clone(),
                )
                .await
                {
                    Ok(node) => break node,
                    Err(e) if e.contains("Address already in use") && attempt < 5 => continue,
                    Err(e) => panic!("cluster node starts: {e}"),
                }
            };
            nodes.push(node);
        }
        let ports: Vec<u16> = nodes
            .iter()
            .map(|n| n.endpoint().rsplit(':').next().unwrap().parse().unwrap())
            .collect();
        front.set_nonblocking(true).unwrap();
        let front =
            super::proxy::round_robin(tokio::net::TcpListener::from_std(front).unwrap(), ports);
        let cluster = InProcess { nodes, front };
        cluster.wait_until_known(token.as_deref()).await;
        cluster
    }

    async fn wait_until_known(&self, token: Option<&str>) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let http = reqwest::Client::new();
        loop {
            if let Some(holder) = self.nodes.iter().position(|n| n.engine().is_some()) {
                let id = format!("node{}", holder + 1);
                let mut known = 0;
                for n in &self.nodes {
                    let mut get = http.get(format!("{}/_retsu/cluster", n.endpoint()));
                    if let Some(t) = token {
                        get = get.bearer_auth(t);
                    }
                    let v: Option<serde_json::Value> = match get.send().await {
                        Ok(r) => serde_json::from_str(&r.text().await.unwrap_or_default()).ok(),
                        Err(_) => None,
                    };
                    if v.is_some_and(|v| {
                        v["lease"]["holder"] == id.as_str() && v["lease"]["live"] == true
                    }) {
                        known += 1;
                    }
                }
                if known == self.nodes.len() {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "the in-process cluster did not settle"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub fn endpoint_url(&self) -> String {
        format!("http://{}", self.front)
    }

    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.front
    }

    pub fn engine(&self) -> std::sync::Arc<retsu::engine::Engine> {
        self.nodes
            .iter()
            .find_map(|n| n.engine())
            .expect("a node holds the lease")
    }

    /// Stops the three at once (a request passed on waits at the holder).
    pub async fn stop(self) {
        let stops: Vec<_> = self
            .nodes
            .into_iter()
            .map(|n| tokio::spawn(n.stop()))
            .collect();
        for s in stops {
            let _ = s.await;
        }
    }
}
