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
    /// Starts the binary on a free port and waits until it answers `/health`.
    ///
    /// A port found free can be taken by another test's server (in-process servers bind
    /// port 0 and may be given it) before the child binds it; then the child fails to
    /// listen and exits while the other server answers. So only a listener the child
    /// itself holds counts, and a child that exits is started again on another port.
    pub fn start(dir: &Path, db_url: &str, extra: &[(&str, &str)]) -> Proc {
        let data = dir.join("data");
        let logs = dir.join("logs");
        let mut vars: Vec<(&str, &str)> =
            vec![("DATA_DIR", data.to_str().unwrap()), ("LOG_DIR", logs.to_str().unwrap()), ("DATABASE_URL", db_url)];
        vars.extend_from_slice(extra);
        for _ in 0..3 {
            let port = free_port();
            let port_s = port.to_string();
            let child = cairn(&vars).env("PORT", &port_s).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
            let mut p = Proc { child, port };
            if p.wait_healthy() {
                return p;
            }
        }
        panic!("cairn could not listen on a free port three times");
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Waits until the child listens on its port and answers `/health`: true then, false
    /// if the child exited first (its port was taken).
    fn wait_healthy(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if self.child.try_wait().unwrap().is_some() {
                return false;
            }
            if holds_listener(self.child.id(), self.port)
                && let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port))
            {
                let _ = s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                let mut out = String::new();
                let _ = s.read_to_string(&mut out);
                if out.starts_with("HTTP/1.1 200") {
                    return true;
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

/// Whether process `pid` holds a socket listening on TCP `port` (Linux: the listening
/// sockets of /proc/net/tcp{,6} matched by inode against the process's descriptors).
fn holds_listener(pid: u32, port: u16) -> bool {
    let suffix = format!(":{port:04X}");
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else { continue };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl, local_address, rem_address, st (0A = LISTEN), …, inode (the tenth).
            if f.len() > 9 && f[1].ends_with(&suffix) && f[3] == "0A" {
                inodes.push(format!("socket:[{}]", f[9]));
            }
        }
    }
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|target| inodes.iter().any(|i| target.as_os_str() == i.as_str()))
    })
}
