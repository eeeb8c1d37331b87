//! Tests that need PostgreSQL itself (skipped by name in the SQLite pass of
//! `scripts/test`, run in the PostgreSQL pass).

mod common;

mod postgres_only {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    use reqwest::{Method, StatusCode};
    use serde_json::json;
    use tokio::net::{TcpListener, TcpStream};
    use tokio::sync::Mutex;
    use tokio::task::JoinSet;

    use super::common::*;

    /// A TCP proxy in front of PostgreSQL that the test can cut and restore — the
    /// database "goes away" while the server runs, without touching the real server.
    struct ChaosProxy {
        port: u16,
        up: Arc<AtomicBool>,
        pipes: Arc<Mutex<JoinSet<()>>>,
    }

    impl ChaosProxy {
        async fn start(upstream: String) -> ChaosProxy {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            let up = Arc::new(AtomicBool::new(true));
            let pipes = Arc::new(Mutex::new(JoinSet::new()));
            let (up2, pipes2) = (up.clone(), pipes.clone());
            tokio::spawn(async move {
                loop {
                    let Ok((mut client, _)) = listener.accept().await else { return };
                    if !up2.load(Ordering::SeqCst) {
                        drop(client);
                        continue;
                    }
                    let upstream = upstream.clone();
                    pipes2.lock().await.spawn(async move {
                        if let Ok(mut server) = TcpStream::connect(upstream).await {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                    });
                }
            });
            ChaosProxy { port, up, pipes }
        }

        async fn cut(&self) {
            self.up.store(false, Ordering::SeqCst);
            self.pipes.lock().await.abort_all();
        }

        fn restore(&self) {
            self.up.store(true, Ordering::SeqCst);
        }
    }

    #[tokio::test]
    async fn postgres_only_outage_answers_503_reports_db_error_and_recovers() {
        // A fresh schema, reached through the proxy.
        let direct = fresh_pg_schema().await;
        let mut url = reqwest::Url::parse(&direct).unwrap();
        let upstream = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap_or(5432));
        let proxy = ChaosProxy::start(upstream).await;
        url.set_host(Some("127.0.0.1")).unwrap();
        url.set_port(Some(proxy.port)).unwrap();
        let mut env = Env::new().await;
        env.db_url = url.to_string();
        let srv = env.start(&[]).await;

        let alice = srv.user("alice@x.io").await;
        let pat = alice.with_bearer(&alice.pat().await);
        assert_eq!(srv.anon().get("/health").await.1["db"], "ok");

        proxy.cut().await;
        let (s, health) = srv.anon().get("/health").await;
        assert_eq!(s, StatusCode::OK, "health answers while the database is down");
        assert_eq!(health["db"], "error");
        assert_eq!(health["status"], "degraded");
        assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));

        // Writes are refused with 503 problem+json…
        let r = srv
            .anon()
            .send(Method::POST, "/api/auth/register", Some(json!({"email": "bob@x.io", "password": PASSWORD})))
            .await;
        assert_problem(&r, 503, "database_unavailable");
        let r = pat.send(Method::POST, "/api/workspaces", Some(json!({"name": "During outage"}))).await;
        assert_problem(&r, 503, "database_unavailable");

        // …and it recovers by itself.
        proxy.restore();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if srv.anon().get("/health").await.1["db"] == "ok" {
                break;
            }
            assert!(Instant::now() < deadline, "the database never came back");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        // Nothing was half-written: bob does not exist, the workspace was not made.
        let r = srv
            .anon()
            .send(Method::POST, "/api/auth/login", Some(json!({"email": "bob@x.io", "password": PASSWORD})))
            .await;
        assert_problem(&r, 401, "invalid_credentials");
        let (_, list) = pat.get("/api/workspaces").await;
        assert_eq!(list["total"], 1, "{list}");
        assert_eq!(
            srv.anon().post("/api/auth/register", json!({"email": "bob@x.io", "password": PASSWORD})).await.0,
            StatusCode::CREATED
        );
        assert_eq!(pat.post("/api/workspaces", json!({"name": "After outage"})).await.0, StatusCode::CREATED);
        srv.stop().await;
    }
}
