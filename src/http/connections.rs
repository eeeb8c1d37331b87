//! The accept loop: what a client connection may hold of the server, whatever it sends.
//!
//! - A client has `HEADER_TIMEOUT_SECS` to send a request's headers, and an idle
//!   keep-alive connection is closed after as long (hyper's header-read timer also runs
//!   while a connection waits for its next request): a connection that sends nothing, or
//!   trickles its headers, does not hold a file descriptor for good.
//! - At most `MAX_CONNECTIONS` are open at once. One more is answered 503 with
//!   `Retry-After` and closed, rather than left to fail `accept` once descriptors run out
//!   (which would refuse every client, the well-behaved ones included).
//! - `accept` failing (descriptors exhausted after all) pauses the loop briefly rather
//!   than spinning or stopping the server.
//! - At shutdown, listening stops, idle connections are closed at once, and requests in
//!   flight get `SHUTDOWN_GRACE_SECS` to finish.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tower::Service;

/// How connections are held.
pub struct Limits {
    pub header_timeout: Duration,
    pub max_connections: usize,
    pub grace: Duration,
}

/// Serves `app` on `listener` until `shutdown` resolves, then closes idle connections
/// and waits at most `grace` for requests in flight.
pub async fn serve(listener: TcpListener, app: Router, limits: Limits, shutdown: impl Future<Output = ()>) {
    let mut make = app.into_make_service_with_connect_info::<SocketAddr>();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout).keep_alive(true);
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
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
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tokio::spawn(refuse(stream));
            continue;
        };
        let _ = stream.set_nodelay(true);
        let Ok(svc) = make.call(peer).await;
        let conn = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(svc));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            // A client that goes away or breaks the protocol ends its connection only.
            let _ = conn.await;
            drop(slot);
        });
    }
    drop(listener);
    tracing::info!(grace_secs = limits.grace.as_secs(), "shutting down: no new connections, finishing requests");
    if tokio::time::timeout(limits.grace, graceful.shutdown()).await.is_err() {
        tracing::warn!("grace period over; closing remaining connections");
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
    })
    .await;
}
