//! A cluster of Retsu nodes on one PostgreSQL database (`--store
//! postgres://…` with `--cluster-secret`).
//!
//! The store is split into shards (`--shards` when it is made), each with
//! a lease (`retsu.lease`: holder, epoch, expiry, on the database's
//! clock). Each queue and topic lives in one shard (`placement.rs`: a new
//! name goes to the shard with the fewest names), and the node holding a
//! shard's lease owns what is in it: it loads the shard into an engine of
//! its own and journals into it, exactly as a single server does with the
//! whole store. Each node takes an even share of the shards; the others
//! pass a request on to the holder of its shard (`front.rs`, `forward.rs`,
//! routed by `route.rs`). A message moving between queues of different
//! shards (a dead-letter move, a move task, a restore, an SNS delivery) is
//! handed across through an outbox row written in the source's commit and
//! taken in the target's (`outbox.rs`), so a crash anywhere neither loses
//! nor duplicates it.
//!
//! Failover: a holder renews its shards' leases in one statement several
//! times per lease length; a node that finds a shard lapsed takes it with
//! a new epoch, loads it and serves. The old holder's answers stop at its
//! leases' end, counted on its own clock from when it sent the renewal (so
//! before the database lets anyone take over), and its commits are fenced:
//! each one checks its shard's epoch in its own transaction
//! (`journal/postgres`), so a node paused or cut off past its lease can
//! never commit again. A node that finds it lost a shard exits (its
//! supervisor starts it again, as a candidate): its engines hold state the
//! store no longer vouches for.
//!
//! A node beyond its share (a node joined) or drained
//! (`retsu.nodes.draining`, set through the admin API) gives shards up as a
//! stopping node does, and so does the holder of a shard an operator moved
//! to another node (`retsu.lease.wanted`, `retsu cluster move --topic`),
//! which that node then keeps beyond its share while it is live and not
//! drained. A queue an operator moves alone (`retsu.placement.wanted`)
//! goes into a shard of its own moved that way (`queue_move.rs`).
//! The nodes LISTEN on one channel, so a released shard, a drain or a move
//! is acted on at once rather than at the next tick. The
//! holder of shard 1 keeps the cluster's virtual clock (`clock.rs`) and
//! applies the configuration file's queues and topics.
//!
//! The core knows nothing of this: each shard runs the same server
//! (`server::start_with_services`) a single node runs.

mod clock;
mod forward;
mod front;
mod membership;
mod outbox;
mod placement;
mod queue_move;
mod route;
mod shard_metrics;
mod signing;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::config::file::QueuePlan;
use crate::config::Config;
use crate::journal::{Fence, Journal, Store};
use front::Front;
use membership::Membership;
use placement::HOME_SHARD;

pub use front::{FORWARDED_BY, SECRET};

/// The least time between two reads of the rows asked for by requests.
const STALE_VIEW_PAUSE: Duration = Duration::from_millis(20);

/// Exit status of a node that lost the lease or its id to another node.
pub const LOST: u8 = 75;

/// The cluster settings, checked: `None` when this is not a cluster node.
pub struct Settings {
    pub url: String,
    pub node: String,
    pub node_url: String,
    pub secret: String,
    pub lease: Duration,
    /// A node that lost the lease exits (a process under a supervisor);
    /// otherwise it stops answering and stays up (a node in a test).
    pub exit_on_loss: bool,
}

impl Settings {
    pub fn from_config(config: &Config) -> Result<Option<Settings>, String> {
        let Some(secret) = config.cluster_secret.clone() else {
            return Ok(None);
        };
        if secret.len() < 16 {
            return Err("--cluster-secret: give at least 16 characters".into());
        }
        let url =
            match config.journal_store() {
                Some(Store::Postgres(url)) => url,
                _ => return Err(
                    "--cluster-secret makes this a cluster node, which needs --store postgres://…"
                        .into(),
                ),
            };
        let host = hostname();
        let node = config
            .node_id
            .clone()
            .unwrap_or_else(|| format!("{host}-{}", config.port));
        if node.is_empty() || node.len() > 200 || node.chars().any(|c| c.is_control()) {
            return Err(format!(
                "--node-id {node:?}: give 1 to 200 printable characters"
            ));
        }
        let node_url = config
            .node_url
            .clone()
            .unwrap_or_else(|| format!("http://{host}:{}", config.port));
        let parsed: hyper::Uri = node_url
            .parse()
            .map_err(|e| format!("--node-url {node_url}: {e}"))?;
        if parsed.scheme_str() != Some("http") || parsed.authority().is_none() {
            return Err(format!(
                "--node-url {node_url}: give http://host:port, where the other nodes reach this one"
            ));
        }
        Ok(Some(Settings {
            url,
            node,
            node_url: node_url.trim_end_matches('/').to_string(),
            secret,
            lease: Duration::from_millis(config.lease_ms),
            exit_on_loss: true,
        }))
    }
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer outlives the call and its length is given.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    match std::str::from_utf8(&buf[..end]) {
        Ok(name) if ok && !name.is_empty() => name.to_string(),
        _ => "localhost".into(),
    }
}

/// Says why this node stops, and stops it: whatever it would answer now
/// could contradict the node that holds the shard now. A node that does not
/// exit answers nothing more (its front is gone) and stops taking part.
fn lost(why: &str, exit: bool, front: &Front) {
    front.gone();
    if exit {
        tracing::error!("{why}; exiting so that this node starts again as a candidate");
        eprintln!("retsu: {why}");
        std::process::exit(LOST.into());
    }
    tracing::error!("{why}; this node answers nothing more");
}

/// Closes a shard's journal when its owner is dropped without giving the
/// shard up (a node dropped unstopped, as tests do): the engine, which
/// holds the journal too, may outlive the owner, and the journal's writer
/// and its connection must not.
struct ClosesJournal(Arc<Journal>);

impl Drop for ClosesJournal {
    fn drop(&mut self) {
        self.0.close_soon();
    }
}

/// Aborts a task when dropped (a shard's outbox carrier: it holds the
/// shard's engine and must not outlive its owner).
struct Aborts(tokio::task::JoinHandle<()>);

impl Drop for Aborts {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What the shards' engines share on this node: what the other shards
/// hold, and the carrier of messages handed between them (`outbox.rs`).
#[derive(Clone)]
struct Between {
    directory: Arc<outbox::Directory>,
    outbox: Arc<outbox::Outbox>,
    /// The SNS signing identity every shard signs with.
    signing: Arc<signing::ClusterKeyStore>,
}

/// What this node runs for a shard it holds.
struct Owned {
    shard: i32,
    server: crate::server::RunningServer,
    /// Takes in what other shards hand this one.
    carrier: Option<Aborts>,
    journal: Arc<Journal>,
    _closes: ClosesJournal,
    epoch: i64,
    /// Shard 1's holder keeps the cluster's clock (`clock.rs`).
    clock: Option<Arc<clock::Shared>>,
}

impl Owned {
    /// Stops the shard's engine (waiting long polls answer) and commits
    /// what it answered: what must happen before its lease goes.
    async fn finish(mut self) -> Finished {
        // Nothing more taken in: what was taken commits below.
        self.carrier.take();
        let _ = self.server.shutdown().await;
        let journal = self.journal.clone();
        let _ = tokio::task::spawn_blocking(move || journal.close()).await;
        Finished {
            shard: self.shard,
            epoch: self.epoch,
            clock: self.clock,
        }
    }
}

/// A shard whose engine stopped and committed, still under its lease.
struct Finished {
    shard: i32,
    epoch: i64,
    clock: Option<Arc<clock::Shared>>,
}

impl Finished {
    /// Gives the shard's lease up so another node takes it at once (the
    /// clock stored first, when this shard's holder keeps it).
    async fn release(self, members: &mut Membership) {
        if let Some(clock) = self.clock {
            clock.hand_over(&members.node, self.epoch).await;
        }
        if let Err(e) = members.release(self.shard, self.epoch).await {
            tracing::warn!(
                shard = self.shard,
                "cannot release the shard's lease (it lapses by itself): {e}"
            );
        }
    }
}

/// Gives shards up: their engines stop and commit side by side (each
/// waits for its connections to close), then the leases go.
async fn give_up(shards: Vec<Held>, members: &mut Membership) {
    let finished = futures_util::future::join_all(shards.into_iter().map(Held::finish)).await;
    for f in finished.into_iter().flatten() {
        f.release(members).await;
    }
}

/// A shard this node holds: loading, or loaded and served.
enum Held {
    /// The epoch, the load, and whether the shard was given up before
    /// the load ended (then it is never served: see `load_shard`).
    Loading(
        i64,
        tokio::task::JoinHandle<Result<Owned, String>>,
        Arc<std::sync::atomic::AtomicBool>,
    ),
    Owned(Owned),
}

impl Held {
    fn epoch(&self) -> i64 {
        match self {
            Held::Loading(epoch, ..) => *epoch,
            Held::Owned(o) => o.epoch,
        }
    }

    /// Waits for a load under way, then stops the shard's engine.
    async fn finish(self) -> Option<Finished> {
        let owned = match self {
            Held::Owned(o) => Some(o),
            Held::Loading(_, task, _) => task.await.ok().and_then(Result::ok),
        };
        match owned {
            Some(o) => Some(o.finish().await),
            None => None,
        }
    }
}

/// A running cluster node (in this process).
pub struct Node {
    endpoint: String,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
    /// The engine, while this node holds the lease and has loaded it.
    engine: Arc<std::sync::Mutex<Option<Arc<crate::engine::Engine>>>>,
    /// Keeps the node's clock the cluster's until the node is dropped.
    _clock: Option<AbortOnDrop>,
}

/// Stops a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Node {
    /// Registers, listens, and takes part in the cluster: returns once the
    /// port is open (the lease may be another node's, or not yet taken).
    /// A configuration or database problem is an error naming its cause.
    pub async fn start(
        config: Config,
        plan: QueuePlan,
        settings: Settings,
        clock: Arc<dyn crate::clock::Clock>,
    ) -> Result<Node, String> {
        let shown = crate::journal::redact_url(&settings.url);
        // TLS on the node's port (the engine's own loopback server needs
        // none); a bad certificate stops the node before it registers.
        let tls = crate::tls::Tls::load(&config.tls, config.data_dir.as_deref())?;
        // Tables first (created or migrated), off the runtime: the
        // journal's client runs a runtime of its own.
        let (url, shards) = (settings.url.clone(), config.shards);
        tokio::task::spawn_blocking(move || crate::journal::prepare_postgres(&url, shards))
            .await
            .unwrap_or_else(|e| Err(e.to_string()))?;
        let pg = crate::journal::postgres_config(&settings.url)?;
        let mut members = Membership::new(
            pg.clone(),
            shown.clone(),
            settings.node.clone(),
            settings.node_url.clone(),
            settings.lease,
        );
        // A node restarted under its id waits for its old row's heartbeat
        // to lapse; a row still beating after two leases is a live node's.
        let started = Instant::now();
        while !members.register().await? {
            if started.elapsed() >= settings.lease * 2 {
                return Err(format!(
                    "node id {:?} is in use by a live node of the cluster on {shown}; give this node another --node-id",
                    settings.node
                ));
            }
            tokio::time::sleep(settings.lease / 8).await;
        }
        // Knowing the holder before the first request comes.
        let placement = placement::Placement::new(pg.clone(), shown.clone());
        let front = Arc::new(Front::new(
            settings.node.clone(),
            settings.secret.clone(),
            &config,
            Some(placement),
        )?);
        if let Ok(view) = members.view().await {
            front.set_view(view);
        }
        front.set_rows(members.another()).await;
        // The cluster's clock before any shard is served (`clock.rs`).
        let follower = match clock::Shared::of(&clock) {
            Some(shared) => {
                let follower = Arc::new(clock::Follower::new(shared, &members));
                if let Err(e) = follower.adopt().await {
                    let _ = members.leave().await;
                    return Err(e);
                }
                front.set_clock(follower.clone(), settings.lease);
                Some(follower)
            }
            None => None,
        };
        let listener = match TcpListener::bind((config.host.as_str(), config.port)).await {
            Ok(l) => l,
            Err(e) => {
                let _ = members.leave().await;
                return Err(format!(
                    "cannot listen on {}:{}: {e}",
                    config.host, config.port
                ));
            }
        };
        let endpoint = listener
            .local_addr()
            .map(|a| format!("http://{}", crate::server::connectable(a)))
            .map_err(|e| e.to_string())?;
        let every = settings.lease / 4;
        let directory = outbox::Directory::start(pg.clone(), every);
        let between = Between {
            outbox: outbox::Outbox::new(pg.clone(), every, directory.clone()),
            directory,
            signing: Arc::new(signing::ClusterKeyStore {
                config: pg.clone(),
                shown: shown.clone(),
            }),
        };
        front.wait_for_handovers(between.outbox.clone(), settings.lease);
        let (stop, stopped) = watch::channel(false);
        let engine: Arc<std::sync::Mutex<Option<Arc<crate::engine::Engine>>>> =
            Arc::new(std::sync::Mutex::new(None));
        let waking = engine.clone();
        let serving = tokio::spawn(crate::server::serve_connections(
            listener,
            {
                let front = front.clone();
                crate::server::AnyService::new(move |req| {
                    let front = front.clone();
                    Box::pin(async move { Ok(front.call(req).await) })
                })
            },
            tls.map(|t| t.acceptor),
            config.limits.clone(),
            stopped.clone(),
            // As a single server does: waiting long polls answer at once,
            // here and at the nodes that passed them on.
            move || {
                if let Some(engine) = waking.lock().unwrap_or_else(|p| p.into_inner()).clone() {
                    engine.shutdown();
                }
            },
        ));
        let following = follower
            .clone()
            .map(|f| AbortOnDrop(tokio::spawn(f.run(settings.lease, settings.lease / 4))));
        tracing::info!(
            address = %endpoint,
            node = %settings.node,
            node_url = %settings.node_url,
            store = %shown,
            lease_ms = settings.lease.as_millis() as u64,
            version = %env!("CARGO_PKG_VERSION"),
            "retsu cluster node ready"
        );
        let task = tokio::spawn(run(
            Arc::new(config),
            Arc::new(plan),
            settings,
            clock,
            follower,
            members,
            front,
            serving,
            stopped,
            engine.clone(),
            endpoint.clone(),
            between,
        ));
        Ok(Node {
            endpoint,
            stop,
            task,
            engine,
            _clock: following,
        })
    }

    /// `http://IP:PORT` a client on this machine can reach.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The engine, while this node holds the lease and has loaded the store.
    pub fn engine(&self) -> Option<Arc<crate::engine::Engine>> {
        self.engine
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Stops taking requests, finishes and commits what it answers, and
    /// gives the lease up; returns once done.
    pub async fn stop(self) {
        self.stop.send_replace(true);
        let _ = self.task.await;
    }
}

/// Serves as a cluster node until `shutdown` (SIGINT/SIGTERM).
pub async fn serve(
    config: Config,
    plan: QueuePlan,
    settings: Settings,
    shutdown: impl std::future::Future<Output = ()>,
) -> ExitCode {
    let clock: Arc<dyn crate::clock::Clock> = Arc::new(config.build_clock());
    let node = match Node::start(config, plan, settings, clock).await {
        Ok(node) => node,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("retsu: {e}");
            return ExitCode::FAILURE;
        }
    };
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "retsu ready {}", node.endpoint());
        let _ = out.flush();
    }
    shutdown.await;
    tracing::info!("shutting down");
    node.stop().await;
    ExitCode::SUCCESS
}

/// The node's life: every quarter lease, a heartbeat, then the leases of
/// the shards it holds renewed, lapsed shards taken up to its share (or
/// shards beyond its share given up), then the view refreshed.
#[allow(clippy::too_many_arguments)]
async fn run(
    config: Arc<Config>,
    plan: Arc<QueuePlan>,
    settings: Settings,
    clock: Arc<dyn crate::clock::Clock>,
    follower: Option<Arc<clock::Follower>>,
    mut members: Membership,
    front: Arc<Front>,
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
    mut stopped: watch::Receiver<bool>,
    engine: Arc<std::sync::Mutex<Option<Arc<crate::engine::Engine>>>>,
    endpoint: String,
    between: Between,
) {
    let mut held: std::collections::BTreeMap<i32, Held> = Default::default();
    let every = settings.lease / 4;
    let lease_ms = settings.lease.as_millis() as i64;
    let notices = members.notices();
    // How many nodes share the shards, before taking any.
    let mut view: Option<membership::View> = members.view().await.ok();
    // Woken by a notice (a shard given up, a node drained): the view is
    // read again before the shares are worked out, not at the tick's end.
    let mut noticed = false;
    'life: loop {
        let sent = Instant::now();
        match members.beat().await {
            Ok(true) => {}
            Ok(false) => {
                lost(
                    &format!(
                        "another node registered as {:?} after this node's heartbeat lapsed",
                        settings.node
                    ),
                    settings.exit_on_loss,
                    &front,
                );
                break;
            }
            Err(e) => tracing::warn!("cluster heartbeat: {e}"),
        }
        if !held.is_empty() {
            let leases: Vec<(i32, i64)> = held.iter().map(|(s, h)| (*s, h.epoch())).collect();
            match members.renew(&leases).await {
                Ok(renewed) if renewed.len() == leases.len() => front.extend(sent + settings.lease),
                Ok(renewed) => {
                    let taken: Vec<String> = leases
                        .iter()
                        .filter(|(s, _)| !renewed.contains(s))
                        .map(|(s, e)| format!("shard {s} at epoch {e}"))
                        .collect();
                    lost(
                        &format!(
                            "another node took a shard this node held ({})",
                            taken.join(", ")
                        ),
                        settings.exit_on_loss,
                        &front,
                    );
                    break;
                }
                Err(err) => tracing::warn!("cannot renew the shards' leases: {err}"),
            }
        }
        if std::mem::take(&mut noticed) {
            if let Ok(v) = members.view().await {
                front.set_view(v.clone());
                view = Some(v);
            }
        }
        let draining = view.as_ref().is_some_and(|v| v.draining(&settings.node));
        let share = match &view {
            _ if draining => 0,
            Some(v) => v.share(lease_ms),
            // Not one look at the rows yet: take nothing before knowing
            // how many nodes share the shards.
            None => 0,
        };
        // Shards an operator moved: to this node (kept beyond the share),
        // or from it to another live node (handed over now).
        let moved_here: Vec<i32> = match &view {
            Some(v) if !draining => v.moved_to(&settings.node, lease_ms),
            _ => Vec::new(),
        };
        let held_shards: Vec<i32> = held.keys().copied().collect();
        let moved_away: Vec<i32> = match &view {
            Some(v) => v.moved_away(&settings.node, &held_shards, lease_ms),
            None => Vec::new(),
        };
        let kept = held.len() - moved_away.len();
        let allowed = share.max(moved_here.len());
        let awaited = moved_here.iter().filter(|s| !held.contains_key(s)).count();
        if kept < share || awaited > 0 {
            // Up to the share (shards moved here first); beyond it, only
            // shards moved here.
            let (most, moved_only) = match share.saturating_sub(kept) {
                0 => (awaited, true),
                free => (free, false),
            };
            match members.try_take(most, moved_only).await {
                Ok(taken) => {
                    if !taken.is_empty() {
                        front.extend(sent + settings.lease);
                    }
                    for (shard, e) in taken {
                        tracing::info!(shard, epoch = e, "took a shard's lease; loading it");
                        let given_up = Arc::new(std::sync::atomic::AtomicBool::new(false));
                        let task = load_shard(
                            shard, e, &config, &plan, &settings, &clock, &follower, &front,
                            &engine, &endpoint, &members, &between, &given_up,
                        );
                        held.insert(shard, Held::Loading(e, task, given_up));
                    }
                }
                Err(err) => tracing::warn!("cannot read the shards' leases: {err}"),
            }
        }
        if kept > allowed || !moved_away.is_empty() {
            // Moved to another node, or beyond its share (a node joined,
            // or this one is drained): the shards moved away, then the
            // highest not moved here, go back for the others to take.
            let mut rest: Vec<i32> = held
                .keys()
                .copied()
                .filter(|s| !moved_away.contains(s))
                .collect();
            rest.sort_by_key(|s| (moved_here.contains(s), std::cmp::Reverse(*s)));
            let extra: Vec<i32> = moved_away
                .iter()
                .copied()
                .chain(rest.into_iter().take(kept.saturating_sub(allowed)))
                .collect();
            let mut going = Vec::new();
            for shard in extra {
                if let Some(h) = held.remove(&shard) {
                    tracing::info!(shard, draining, "handing a shard over");
                    if let Held::Loading(_, _, given_up) = &h {
                        given_up.store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                    front.stop_serving_locally(shard);
                    if shard == 1 {
                        *engine.lock().unwrap_or_else(|p| p.into_inner()) = None;
                    }
                    going.push(h);
                }
            }
            give_up(going, &mut members).await;
            front.stale.notify_one();
        }
        // Queues an operator asked to move alone, out of shards served here.
        let asked: Vec<membership::AskedMove> = match &view {
            Some(v) => v
                .asked
                .iter()
                .filter(|a| matches!(held.get(&a.shard), Some(Held::Owned(_))))
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        if !asked.is_empty() {
            let context = Loader {
                config: &config,
                plan: &plan,
                settings: &settings,
                clock: &clock,
                follower: &follower,
                front: &front,
                engine: &engine,
                endpoint: &endpoint,
                between: &between,
            };
            if let Err(why) = move_queues(asked, &mut held, &mut members, &context).await {
                lost(&why, settings.exit_on_loss, &front);
                break 'life;
            }
        }
        for shard in held.keys().copied().collect::<Vec<_>>() {
            let finished =
                matches!(held.get(&shard), Some(Held::Loading(_, t, _)) if t.is_finished());
            if !finished {
                continue;
            }
            let Some(Held::Loading(_, task, _)) = held.remove(&shard) else {
                continue;
            };
            match task.await {
                Ok(Ok(o)) => {
                    tracing::info!(
                        shard,
                        epoch = o.epoch,
                        queues = o.journal.restored.0,
                        messages = o.journal.restored.1,
                        "serving a shard's queues and topics"
                    );
                    held.insert(shard, Held::Owned(o));
                }
                Ok(Err(e)) => {
                    lost(
                        &format!("cannot load shard {shard}: {e}"),
                        settings.exit_on_loss,
                        &front,
                    );
                    break 'life;
                }
                Err(e) => {
                    lost(
                        &format!("loading shard {shard} failed: {e}"),
                        settings.exit_on_loss,
                        &front,
                    );
                    break 'life;
                }
            }
        }
        match members.view().await {
            Ok(v) => {
                front.set_view(v.clone());
                view = Some(v);
            }
            Err(e) => tracing::debug!("cluster view: {e}"),
        }
        let pause = every.saturating_sub(sent.elapsed());
        let tick = tokio::time::sleep(pause);
        tokio::pin!(tick);
        loop {
            let stale = tokio::select! {
                _ = &mut tick => false,
                // Stopped, or the node dropped without stopping.
                changed = stopped.changed() => {
                    if changed.is_err() || *stopped.borrow() {
                        break 'life;
                    }
                    false
                }
                _ = front.stale.notified() => true,
                // A shard was given up or a node drained: a whole tick now.
                _ = notices.notified() => {
                    noticed = true;
                    false
                }
            };
            if !stale {
                break;
            }
            // Between ticks only the view is read, and not more often than this.
            tokio::time::sleep(STALE_VIEW_PAUSE).await;
            match members.view().await {
                Ok(v) => {
                    let held_shards: Vec<i32> = held.keys().copied().collect();
                    let hand_over = !held.is_empty() && v.draining(&settings.node)
                        || !v
                            .moved_away(&settings.node, &held_shards, lease_ms)
                            .is_empty();
                    front.set_view(v.clone());
                    view = Some(v);
                    if hand_over {
                        // At once, not at the next tick.
                        break;
                    }
                }
                Err(e) => tracing::debug!("cluster view: {e}"),
            }
        }
    }

    // Stop taking requests, finish the engines', commit, then give the
    // shards up so other nodes take over at once.
    let _ = serving.await;
    *engine.lock().unwrap_or_else(|p| p.into_inner()) = None;
    give_up(
        std::mem::take(&mut held).into_values().collect(),
        &mut members,
    )
    .await;
    between.directory.stop();
    let _ = members.leave().await;
}

/// What loading a shard needs of the node.
struct Loader<'a> {
    config: &'a Arc<Config>,
    plan: &'a Arc<QueuePlan>,
    settings: &'a Settings,
    clock: &'a Arc<dyn crate::clock::Clock>,
    follower: &'a Option<Arc<clock::Follower>>,
    front: &'a Arc<Front>,
    engine: &'a Arc<std::sync::Mutex<Option<Arc<crate::engine::Engine>>>>,
    endpoint: &'a str,
    between: &'a Between,
}

impl Loader<'_> {
    /// Loads `shard` again at `epoch` (this node still holds it).
    fn reload(&self, shard: i32, epoch: i64, members: &Membership) -> Held {
        let given_up = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let task = load_shard(
            shard,
            epoch,
            self.config,
            self.plan,
            self.settings,
            self.clock,
            self.follower,
            self.front,
            self.engine,
            self.endpoint,
            members,
            self.between,
            &given_up,
        );
        Held::Loading(epoch, task, given_up)
    }
}

/// Moves the queues `asked` for, each alone, out of the shards this node
/// serves (`queue_move.rs`): per shard, its engine stops and commits, the
/// queues go into shards of their own (empty shards served here first),
/// and the shard loads again without them. A queue whose messages a move
/// task still moves waits. `Err`: the shard's lease is another node's.
async fn move_queues(
    asked: Vec<membership::AskedMove>,
    held: &mut std::collections::BTreeMap<i32, Held>,
    members: &mut Membership,
    loader: &Loader<'_>,
) -> Result<(), String> {
    let mut by_shard: std::collections::BTreeMap<i32, Vec<membership::AskedMove>> =
        Default::default();
    for ask in asked {
        let Some(Held::Owned(o)) = held.get(&ask.shard) else {
            continue;
        };
        let arn = crate::engine::QueueKey {
            region: ask.key.region.clone(),
            account: ask.key.account.clone(),
            name: ask.key.name.clone(),
        }
        .arn();
        if o.server.engine().moving_messages_from(&arn) {
            tracing::debug!(queue = %ask.key.name, "a queue asked to move waits for its message move task");
            continue;
        }
        by_shard.entry(ask.shard).or_default().push(ask);
    }
    if by_shard.is_empty() {
        return Ok(());
    }
    // Shards served here with nothing in them take moved queues first.
    let used: std::collections::HashSet<i32> = match loader.front.placement() {
        Some(p) => match p.names().await {
            Ok(names) => names.into_iter().map(|(_, _, shard)| shard).collect(),
            Err(_) => held.keys().copied().collect(),
        },
        None => held.keys().copied().collect(),
    };
    let mut empty: Vec<i32> = held
        .iter()
        .filter(|(s, h)| {
            **s != placement::HOME_SHARD && !used.contains(s) && matches!(h, Held::Owned(_))
        })
        .map(|(s, _)| *s)
        .collect();
    let mut shards_now = loader.front.shard_count();
    for (shard, mut moves) in by_shard {
        let spares: Vec<i32> = empty
            .drain(..moves.len().min(empty.len()))
            .filter(|s| *s != shard)
            .collect();
        // No more shards than the store may have: what does not fit is
        // refused (the ask dropped) rather than tried at every tick.
        let room = (crate::journal::MAX_SHARDS - shards_now).max(0) as usize + spares.len();
        for refused in moves.split_off(room.min(moves.len())) {
            tracing::warn!(
                queue = %refused.key.name,
                "queue not moved: the store has {} shards, the most it may have",
                crate::journal::MAX_SHARDS
            );
            if let Err(e) = members.drop_queue_move(&refused.key).await {
                tracing::warn!("cannot drop the ask: {e}");
            }
        }
        if moves.is_empty() {
            continue;
        }
        shards_now += moves.len().saturating_sub(spares.len()) as i32;
        let mut stopping = Vec::new();
        for s in std::iter::once(shard).chain(spares.iter().copied()) {
            if let Some(h) = held.remove(&s) {
                loader.front.stop_serving_locally(s);
                if s == placement::HOME_SHARD {
                    *loader.engine.lock().unwrap_or_else(|p| p.into_inner()) = None;
                }
                stopping.push(h);
            }
        }
        let finished: Vec<Finished> =
            futures_util::future::join_all(stopping.into_iter().map(Held::finish))
                .await
                .into_iter()
                .flatten()
                .collect();
        let epoch_of = |s: i32| finished.iter().find(|f| f.shard == s).map(|f| f.epoch);
        let Some(epoch) = epoch_of(shard) else {
            return Err(format!("shard {shard} did not stop to move its queues"));
        };
        for f in &finished {
            // Stored before the shard loads again and reads it.
            if let Some(clock) = &f.clock {
                clock.hand_over(&members.node, f.epoch).await;
            }
        }
        let spare_epochs: Vec<(i32, i64)> = spares
            .iter()
            .filter_map(|s| Some((*s, epoch_of(*s)?)))
            .collect();
        let outcome = queue_move::carry_out(members, (shard, epoch), &spare_epochs, &moves).await;
        let released = match outcome {
            Ok(moved) => {
                for (name, to) in &moved {
                    tracing::info!(queue = %name, from = shard, to, "moved a queue into a shard of its own");
                }
                loader.front.queues_moved();
                true
            }
            Err(queue_move::Failed::Fenced(e)) => {
                return Err(format!(
                    "moving queues out of shard {shard} was fenced: {e}"
                ))
            }
            Err(queue_move::Failed::Other(e)) => {
                tracing::warn!(
                    shard,
                    "cannot move queues out of the shard (asked still): {e}"
                );
                false
            }
        };
        held.insert(shard, loader.reload(shard, epoch, members));
        if !released {
            for (s, e) in spare_epochs {
                held.insert(s, loader.reload(s, e, members));
            }
        }
    }
    // The spares and new shards go to the nodes asked for at once.
    loader.front.stale.notify_one();
    Ok(())
}

/// Starts loading a shard this node just took: the cluster's clock first
/// (shard 1's holder keeps it; for any other shard the stored clock is
/// read once more), then the shard's rows, then its server.
#[allow(clippy::too_many_arguments)]
fn load_shard(
    shard: i32,
    epoch: i64,
    config: &Arc<Config>,
    plan: &Arc<QueuePlan>,
    settings: &Settings,
    clock: &Arc<dyn crate::clock::Clock>,
    follower: &Option<Arc<clock::Follower>>,
    front: &Arc<Front>,
    engine: &Arc<std::sync::Mutex<Option<Arc<crate::engine::Engine>>>>,
    endpoint: &str,
    members: &Membership,
    between: &Between,
    given_up: &Arc<std::sync::atomic::AtomicBool>,
) -> tokio::task::JoinHandle<Result<Owned, String>> {
    let exit = settings.exit_on_loss;
    let reached_at = endpoint.to_string();
    let (config, plan, url, node, front, clock, engine) = (
        config.clone(),
        plan.clone(),
        settings.url.clone(),
        settings.node.clone(),
        front.clone(),
        clock.clone(),
        engine.clone(),
    );
    let clock_rows = members.another();
    let follower = follower.clone();
    let between = between.clone();
    let given_up = given_up.clone();
    tokio::spawn(async move {
        // The cluster's clock before the store: the store's deadlines are
        // read on it.
        let mut keeper = None;
        if let Some(follower) = follower {
            if shard == 1 {
                follower.shared.keep(clock_rows, epoch).await?;
                keeper = Some(follower.shared.clone());
            } else {
                follower.adopt().await?;
            }
        }
        let mut owned = own(
            config,
            plan,
            url,
            node,
            shard,
            epoch,
            clock,
            front.clone(),
            exit,
            reached_at,
            keeper,
            &between,
        )
        .await?;
        owned.carrier = Some(Aborts(between.outbox.carry(shard, owned.server.engine())));
        // Served from now, not from the next renewal, unless the shard
        // was given up while it loaded (it is being finished).
        if front.serve_locally_unless(shard, owned.server.service(), &given_up) && shard == 1 {
            *engine.lock().unwrap_or_else(|p| p.into_inner()) = Some(owned.server.engine());
        }
        Ok(owned)
    })
}

/// The configuration file's queues and topics that `shard` makes or sets.
/// Each name is placed in the home shard unless it was placed before (a
/// queue or topic of that name made through the API, in another shard,
/// before the file named it); the holder of the shard a name is in
/// applies the file's settings to it, as a single server does at start.
async fn shard_plan(
    plan: &Arc<QueuePlan>,
    front: &Front,
    shard: i32,
) -> Result<Arc<QueuePlan>, String> {
    use route::{Key, Kind};
    let Some(placement) = front.placement() else {
        return Ok(plan.clone());
    };
    let topic_key = |t: &crate::config::topics::PlannedTopic| Key {
        kind: Kind::Topic,
        account: t.account.clone(),
        region: t.region.clone(),
        name: t.name.clone(),
    };
    let queues = plan.queues.iter().map(|q| Key::queue(q.key.clone()));
    let keys: Vec<Key> = queues.chain(plan.topics.iter().map(topic_key)).collect();
    if keys.is_empty() {
        return Ok(plan.clone());
    }
    let shards = placement.place_in(&keys, HOME_SHARD).await?;
    let here: std::collections::HashSet<&Key> = keys
        .iter()
        .zip(&shards)
        .filter(|(_, s)| **s == shard)
        .map(|(k, _)| k)
        .collect();
    if here.len() == keys.len() {
        return Ok(plan.clone());
    }
    if shard != HOME_SHARD {
        for key in &here {
            tracing::info!(
                "the configuration file's {} {:?} ({}, {}) was made through the API first, in shard {shard}: the file's settings are applied to it there",
                key.kind.as_str(),
                key.name,
                key.account,
                key.region
            );
        }
    }
    let mut mine = (**plan).clone();
    mine.queues
        .retain(|q| here.contains(&Key::queue(q.key.clone())));
    mine.topics.retain(|t| here.contains(&topic_key(t)));
    Ok(Arc::new(mine))
}

/// Loads a shard into an engine fenced at `epoch`, applies the
/// configuration file's queues and topics (shard 1 holds them), and
/// starts the engine's server (its own listener is loopback only; the
/// node's port reaches it through the front).
#[allow(clippy::too_many_arguments)]
async fn own(
    config: Arc<Config>,
    plan: Arc<QueuePlan>,
    url: String,
    node: String,
    shard: i32,
    epoch: i64,
    clock: Arc<dyn crate::clock::Clock>,
    front: Arc<Front>,
    exit: bool,
    reached_at: String,
    clock_keeper: Option<Arc<clock::Shared>>,
    between: &Between,
) -> Result<Owned, String> {
    let (mode, engine_config) = (config.durability, config.engine_config());
    let node_id = node.clone();
    let plan = shard_plan(&plan, &front, shard).await?;
    let fence = Fence {
        shard,
        node,
        epoch,
        fenced: Box::new(move |why| lost(&format!("a commit was fenced: {why}"), exit, &front)),
    };
    let store = Store::Postgres(url);
    let (engine, journal) = tokio::task::spawn_blocking(move || {
        Journal::open_fenced(&store, Some(fence), mode, clock, engine_config)
    })
    .await
    .map_err(|e| e.to_string())??;
    // Before anything runs on it: a transfer may reach another shard.
    engine.subscribe(Arc::new(outbox::Watch(between.outbox.clone())));
    engine.set_elsewhere(Arc::new(outbox::ShardView {
        directory: between.directory.clone(),
        shard,
    }));
    let base = config
        .pinned_base_url("http://", config.port)
        .unwrap_or_else(|| format!("http://{}:{}", config.host, config.port));
    // A file the home shard cannot apply stops the node, as it stops a
    // single server; another shard's names were the API's first, so a
    // setting that does not fit them is said and left.
    let applied = |r: Result<(), crate::config::file::ConfigError>| match r {
        Err(e) if shard == HOME_SHARD => Err(e.to_string()),
        Err(e) => {
            tracing::warn!("shard {shard}: the configuration file's settings for a name made through the API first were not applied: {e}");
            Ok(())
        }
        Ok(()) => Ok(()),
    };
    applied(plan.apply(&engine, &base).await)?;
    let services =
        crate::server::Services::with_key_store(engine.clone(), Some(between.signing.clone()));
    applied(plan.apply_topics(&services.sns, &base).await)?;
    engine.queues_changed();
    let inner = Config {
        host: "127.0.0.1".into(),
        port: 0,
        // URLs that cannot come from a request's Host name the node's port,
        // not the engine's loopback one.
        reached_at: Some(config.reached_at.clone().unwrap_or(reached_at)),
        // Its metrics are labelled with the node's id.
        node_id: Some(node_id),
        tls: Default::default(),
        ..(*config).clone()
    };
    let server = crate::server::start_with_services(inner, engine, services)
        .await
        .map_err(|e| format!("cannot start the engine's server: {e}"))?;
    Ok(Owned {
        shard,
        server,
        carrier: None,
        _closes: ClosesJournal(journal.clone()),
        journal,
        epoch,
        clock: clock_keeper,
    })
}
