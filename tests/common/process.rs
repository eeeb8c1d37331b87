//! Running the real `cairn` binary as a child process.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_cairn");

/// The binary with a clean environment (only PATH), so CI's variables cannot leak in.
pub fn cairn(env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_clear().env("PATH", std::env::var("PATH").unwrap_or_default()).env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

pub fn run_to_end(env: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let out = cairn(env).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub struct Proc {
    pub child: Child,
    pub port: u16,
}

impl Proc {
    pub fn start(dir: &Path, db_url: &str, extra: &[(&str, &str)]) -> Proc {
        let port = free_port();
        let data = dir.join("data");
        let logs = dir.join("logs");
        let port_s = port.to_string();
        let mut vars = vec![
            ("DATA_DIR", data.to_str().unwrap().to_owned()),
            ("LOG_DIR", logs.to_str().unwrap().to_owned()),
            ("DATABASE_URL", db_url.to_owned()),
            ("PORT", port_s),
        ];
        vars.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let child = cairn(&vars).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let p = Proc { child, port };
        p.wait_healthy();
        p
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn wait_healthy(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                let mut out = String::new();
                let _ = s.read_to_string(&mut out);
                if out.starts_with("HTTP/1.1 200") {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("cairn did not become healthy");
    }

    pub fn terminate(mut self) -> i32 {
        let ok = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status().unwrap();
        assert!(ok.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "cairn did not exit after SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Registers `email` on a running binary; answers a client holding its session.
pub async fn register(url: &str, email: &str) -> super::Api {
    let api = super::Api {
        base: url.to_owned(),
        client: reqwest::Client::builder().cookie_store(true).build().unwrap(),
        bearer: None,
    };
    let (s, body) = api
        .post("/api/auth/register", serde_json::json!({"email": email, "password": super::PASSWORD, "name": email}))
        .await;
    assert_eq!(s, reqwest::StatusCode::CREATED, "register {email}: {body}");
    api
}
