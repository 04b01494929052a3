//! A TCP proxy the test controls (to PostgreSQL, or to a node): cut, it
//! closes live connections and refuses new ones at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::io::copy_bidirectional;
use tokio::net::{TcpListener, TcpStream};

/// A TCP proxy to PostgreSQL that the test can cut: while cut, live
/// connections are closed and new ones refused at once.
pub struct Proxy {
    pub port: u16,
    cut: Arc<AtomicBool>,
    /// Bumped by every cut; a connection ends when it changes.
    generation: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Proxy {
    pub async fn to(target: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let (generation, _) = tokio::sync::watch::channel(0u64);
        let generation = Arc::new(generation);
        {
            let (cut, generation) = (cut.clone(), generation.clone());
            tokio::spawn(async move {
                loop {
                    let Ok((mut inbound, _)) = listener.accept().await else {
                        return;
                    };
                    if cut.load(Ordering::SeqCst) {
                        continue; // dropped: closed at once
                    }
                    let mut ended = generation.subscribe();
                    tokio::spawn(async move {
                        let Ok(mut outbound) = TcpStream::connect(("127.0.0.1", target)).await
                        else {
                            return;
                        };
                        tokio::select! {
                            _ = copy_bidirectional(&mut inbound, &mut outbound) => {}
                            _ = ended.changed() => {}
                        }
                    });
                }
            });
        }
        Proxy {
            port,
            cut,
            generation,
        }
    }

    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        self.generation.send_modify(|g| *g += 1);
    }

    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

/// A loopback port that hands each new connection to the next of `ports`
/// in turn.
pub fn round_robin(listener: TcpListener, ports: Vec<u16>) -> std::net::SocketAddr {
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut next = 0usize;
        loop {
            let Ok((mut inbound, _)) = listener.accept().await else {
                return;
            };
            let _ = inbound.set_nodelay(true);
            let port = ports[next % ports.len()];
            next += 1;
            tokio::spawn(async move {
                let Ok(mut outbound) = TcpStream::connect(("127.0.0.1", port)).await else {
                    return;
                };
                let _ = outbound.set_nodelay(true);
                let _ = copy_bidirectional(&mut inbound, &mut outbound).await;
            });
        }
    });
    addr
}
