//! The accept loop: what a client connection may hold of the server, whatever it sends.
//!
//! - A client has `HEADER_TIMEOUT_SECS` to send a request's headers, and an idle
//!   keep-alive connection is closed after as long (hyper's header-read timer also runs
//!   while a connection waits for its next request): a connection that sends nothing, or
//!   trickles its headers, does not hold a file descriptor for good.
//! - At most `MAX_CONNECTIONS` are open at once. When they all are, one address cannot
//!   keep everyone else out with idle connections: a newcomer from an address holding
//!   less than a quarter of them makes room by closing an idle connection (no request in
//!   flight: one that sent nothing, or a keep-alive one between requests) — the oldest of
//!   the address holding the most — while a newcomer from an address over its share, or
//!   any newcomer when every connection is serving a request, is answered 503 with
//!   `Retry-After` and closed, rather than left to fail `accept` once descriptors run out
//!   (which would refuse every client, the well-behaved ones included). Below the cap no
//!   address is limited (many people behind one NAT). With `TRUST_PROXY=1` every
//!   connection comes from the proxy, which bounds its own clients: only idle ones are
//!   closed to make room.
//! - `accept` failing (descriptors exhausted after all) pauses the loop briefly rather
//!   than spinning or stopping the server.
//! - At shutdown, listening stops, idle connections are closed at once, and requests in
//!   flight get `SHUTDOWN_GRACE_SECS` to finish.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot, watch};
use tower::{Service, ServiceExt};

use crate::sync::lock;

/// How connections are held.
pub(crate) struct Limits {
    pub header_timeout: Duration,
    pub max_connections: usize,
    /// The share of the connections one client address keeps when they are all open;
    /// None behind a trusted proxy.
    pub per_address: Option<usize>,
    pub grace: Duration,
}

impl Limits {
    /// The per-address share of `max_connections`: a quarter of it.
    pub(crate) fn per_address_of(max_connections: usize) -> usize {
        (max_connections / 4).max(1)
    }
}

/// The open connections, oldest first: their address, whether a request is in flight,
/// and how to close them.
#[derive(Default)]
struct Open {
    next: u64,
    conns: BTreeMap<u64, Conn>,
    per_address: HashMap<IpAddr, usize>,
}

struct Conn {
    address: IpAddr,
    /// Requests in flight on it.
    busy: Arc<AtomicUsize>,
    close: Option<oneshot::Sender<()>>,
}

impl Open {
    fn add(&mut self, address: IpAddr, busy: Arc<AtomicUsize>, close: oneshot::Sender<()>) -> u64 {
        self.next += 1;
        self.conns.insert(self.next, Conn { address, busy, close: Some(close) });
        *self.per_address.entry(address).or_default() += 1;
        self.next
    }

    fn remove(&mut self, id: u64) {
        let Some(conn) = self.conns.remove(&id) else { return };
        if let Some(n) = self.per_address.get_mut(&conn.address) {
            *n -= 1;
            if *n == 0 {
                self.per_address.remove(&conn.address);
            }
        }
    }

    fn from(&self, address: IpAddr) -> usize {
        self.per_address.get(&address).copied().unwrap_or(0)
    }

    /// Asks an idle connection (no request in flight) to close — the oldest of the address
    /// holding the most connections that has one; whether there was one.
    fn close_an_idle_one(&mut self) -> bool {
        let idle = |c: &Conn| c.close.is_some() && c.busy.load(Ordering::SeqCst) == 0;
        let mut holders: Vec<(usize, IpAddr)> = self.per_address.iter().map(|(a, n)| (*n, *a)).collect();
        holders.sort_unstable_by_key(|h| std::cmp::Reverse(h.0));
        for (_, address) in holders {
            let found = self.conns.values_mut().find(|c| c.address == address && idle(c));
            if let Some(close) = found.and_then(|c| c.close.take()) {
                return close.send(()).is_ok();
            }
        }
        false
    }
}

/// Counts a request in flight on its connection while it lives.
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn enter(busy: &Arc<AtomicUsize>) -> InFlight {
        busy.fetch_add(1, Ordering::SeqCst);
        InFlight(busy.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A connection's place among the `MAX_CONNECTIONS`, in each of its requests' extensions:
/// a request that upgrades the connection to a WebSocket takes it along ([`Slot::take`]),
/// so the WebSocket counts as an open connection for as long as it lives.
#[derive(Clone)]
pub(crate) struct Slot(Arc<Mutex<Option<OwnedSemaphorePermit>>>);

impl Slot {
    pub(crate) fn take(&self) -> Option<OwnedSemaphorePermit> {
        lock(&self.0).take()
    }
}

/// Serves `app` on `listener` until `shutdown` resolves, then closes idle connections
/// and waits at most `grace` for requests in flight.
pub(crate) async fn serve(listener: TcpListener, app: Router, limits: Limits, shutdown: impl Future<Output = ()>) {
    let mut make = app.into_make_service_with_connect_info::<SocketAddr>();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout).keep_alive(true);
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let open = Arc::new(Mutex::new(Open::default()));
    // Shutdown, as hyper-util's `GracefulShutdown` does it (which does not take a
    // connection that may upgrade to a WebSocket): each connection watches `stopping`
    // and holds a clone of `alive`, whose receiver ends when the last one is gone.
    let (stop, stopping) = watch::channel(false);
    let (alive, mut all_closed) = mpsc::channel::<()>(1);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    // EMFILE and the like: the connections that hold descriptors will
                    // end (their timeouts see to it); try again shortly.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let address = peer.ip();
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            // Full: a newcomer within its address's share makes room, if a connection is idle.
            Err(_)
                if limits.per_address.is_none_or(|share| lock(&open).from(address) < share)
                    && lock(&open).close_an_idle_one() =>
            {
                match tokio::time::timeout(Duration::from_secs(1), slots.clone().acquire_owned()).await {
                    Ok(Ok(slot)) => slot,
                    _ => {
                        tokio::spawn(refuse(stream));
                        continue;
                    }
                }
            }
            Err(_) => {
                tokio::spawn(refuse(stream));
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let busy = Arc::new(AtomicUsize::new(0));
        let (close, closed) = oneshot::channel();
        let id = lock(&open).add(address, busy.clone(), close);
        let Ok(svc) = make.call(peer).await;
        let slot = Slot(Arc::new(Mutex::new(Some(slot))));
        let for_requests = slot.clone();
        let svc = ServiceExt::<hyper::Request<hyper::body::Incoming>>::map_request(
            svc,
            move |mut req: hyper::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(for_requests.clone());
                req
            },
        );
        let svc = ServiceExt::<hyper::Request<hyper::body::Incoming>>::map_future(svc, move |answer| {
            let in_flight = InFlight::enter(&busy);
            async move {
                let answered = answer.await;
                drop(in_flight);
                answered
            }
        });
        // With upgrades: a co-editing session's WebSocket (`http/live.rs`).
        let conn = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(svc)).with_upgrades();
        let open = open.clone();
        let (alive, mut stopping) = (alive.clone(), stopping.clone());
        tokio::spawn(async move {
            let mut conn = std::pin::pin!(conn);
            // A client that goes away or breaks the protocol ends its connection only;
            // one closed to make room is dropped with its socket.
            let stop = tokio::select! {
                _ = conn.as_mut() => false,
                _ = closed => false,
                _ = stopping.wait_for(|s| *s) => true,
            };
            if stop {
                conn.as_mut().graceful_shutdown();
                let _ = conn.await;
            }
            lock(&open).remove(id);
            drop(slot);
            drop(alive);
        });
    }
    drop(listener);
    tracing::info!(grace_secs = limits.grace.as_secs(), "shutting down: no new connections, finishing requests");
    let _ = stop.send(true);
    drop(alive);
    if tokio::time::timeout(limits.grace, all_closed.recv()).await.is_err() {
        tracing::warn!("grace period over; closing remaining connections");
    }
}

/// Warns when `MAX_CONNECTIONS` is more than the process may open files: past the limit
/// `accept` fails for everyone instead of the newcomer being answered 503.
pub(crate) fn warn_if_over_open_files(max_connections: usize) {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return;
    }
    let files = limit.rlim_cur;
    // Files the process holds besides its connections: databases, repositories, logs.
    const OWN_FILES: u64 = 64;
    if (max_connections as u64).saturating_add(OWN_FILES) > files {
        tracing::warn!(
            max_connections,
            open_files_limit = files,
            "MAX_CONNECTIONS is more than the open-files limit allows (ulimit -n); raise the limit or lower MAX_CONNECTIONS"
        );
    }
}

/// The answer past `MAX_CONNECTIONS`: a 503 problem, then the connection closes.
async fn refuse(mut stream: TcpStream) {
    let problem = crate::error::Error::busy("too many open connections", 1);
    let body = problem.body().to_string();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json; charset=utf-8\r\n\
         Retry-After: {}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        problem.retry_after.unwrap_or(1),
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        let _ = stream.write_all(answer.as_bytes()).await;
        let _ = stream.shutdown().await;
        // What the client sent meanwhile is read before the socket closes: closing on
        // unread bytes resets the connection, and the client would see that, not the 503.
        let mut sink = [0u8; 4096];
        let _ = tokio::time::timeout(Duration::from_millis(200), async {
            while matches!(tokio::io::AsyncReadExt::read(&mut stream, &mut sink).await, Ok(n) if n > 0) {}
        })
        .await;
    })
    .await;
}
