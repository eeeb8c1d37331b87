//! A Cairn server run as a child process on a fresh data directory and database, and
//! stopped with SIGTERM (also when dropped, so an error never leaves one behind). It can
//! be restarted over the same directory and database with other settings (search
//! features that are switched on by environment variables).

use std::fs::{self, File, OpenOptions};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn parse(s: &str) -> Result<Backend> {
        match s.trim() {
            "sqlite" => Ok(Backend::Sqlite),
            "postgres" | "postgresql" | "pg" => Ok(Backend::Postgres),
            other => bail!("unknown backend {other:?} (sqlite or postgres)"),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

pub struct Server {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`; a restart picks a new port.
    pub base: String,
    bin: PathBuf,
    dir: PathBuf,
    database_url: String,
    keep: bool,
    pg: Option<(String, String)>,
    /// The binary has a `gc` command (older releases have none: nothing packed
    /// their repositories, and the bench leaves them loose).
    has_gc: bool,
}

pub struct Options<'a> {
    pub bin: &'a Path,
    pub backend: Backend,
    pub tag: String,
    pub pg_url: &'a str,
    pub keep: bool,
    /// Extra environment of the server process (e.g. `SEMANTIC_SEARCH=1`).
    pub env: Vec<(String, String)>,
}

impl Server {
    pub async fn start(o: Options<'_>) -> Result<Server> {
        let dir = std::env::temp_dir().join(format!("cairn-bench-{}-{}", std::process::id(), o.tag));
        if dir.exists() {
            fs::remove_dir_all(&dir)?;
        }
        fs::create_dir_all(dir.join("data"))?;
        fs::create_dir_all(dir.join("logs"))?;
        let mut server = Server {
            child: None,
            base: String::new(),
            bin: o.bin.to_owned(),
            dir: dir.clone(),
            database_url: String::new(),
            keep: o.keep,
            pg: None,
            has_gc: has_command(o.bin, "gc"),
        };
        if !server.has_gc {
            eprintln!("  {} has no `gc` command: its repositories stay loose", o.bin.display());
        }
        server.database_url = match o.backend {
            Backend::Sqlite => format!("sqlite://{}", dir.join("cairn.db").display()),
            Backend::Postgres => {
                let db = format!("cairn_bench_{}_{}", std::process::id(), o.tag.replace('-', "_"));
                psql(o.pg_url, &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))?;
                psql(o.pg_url, &format!("CREATE DATABASE {db}"))?;
                server.pg = Some((o.pg_url.to_owned(), db.clone()));
                format!("{}/{db}", o.pg_url.trim_end_matches('/'))
            }
        };
        File::create(dir.join("server.out"))?;
        File::create(dir.join("server.err"))?;
        server.spawn(&o.env).await?;
        Ok(server)
    }

    /// Stops the server and starts it again over the same data directory and database,
    /// with `env` as its extra environment (the previous extra environment is dropped).
    /// `base` changes: the new process listens on a new free port.
    pub async fn restart(&mut self, env: &[(String, String)]) -> Result<()> {
        self.terminate();
        self.spawn(env).await
    }

    /// Starts the process on a free port and waits until it is healthy. Its output is
    /// appended to the logs of earlier processes of this server.
    async fn spawn(&mut self, env: &[(String, String)]) -> Result<()> {
        let port = free_port()?;
        self.base = format!("http://127.0.0.1:{port}");
        let log = |name: &str| OpenOptions::new().append(true).open(self.dir.join(name));
        let child = Command::new(&self.bin)
            .env("DATA_DIR", self.dir.join("data"))
            .env("LOG_DIR", self.dir.join("logs"))
            .env("PORT", port.to_string())
            .env("HOST", "127.0.0.1")
            // Warnings, the packing worker's passes (`packing_passes`) and the group
            // commits' batches (`batches`).
            .env("LOG_LEVEL", "warn,cairn::core::packing=info,cairn::core::pages::batch=debug")
            .env("DATABASE_URL", &self.database_url)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(log("server.out")?)
            .stderr(log("server.err")?)
            .spawn()
            .with_context(|| format!("starting {}", self.bin.display()))?;
        self.child = Some(child);
        self.wait_healthy().await
    }

    async fn wait_healthy(&mut self) -> Result<()> {
        let client = reqwest::Client::builder().timeout(Duration::from_secs(2)).build()?;
        let url = format!("{}/health", self.base);
        // At most 120 s: migrations on a fresh database take well under that.
        for _ in 0..480 {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                bail!("server exited during start-up ({status}); stderr:\n{}", self.log_tail());
            }
            if let Ok(r) = client.get(&url).send().await
                && r.status().as_u16() == 200
            {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        bail!("server did not answer /health within 120 s; stderr:\n{}", self.log_tail())
    }

    pub fn log_tail(&self) -> String {
        let mut s = String::new();
        for f in ["server.err", "server.out"] {
            if let Ok(t) = fs::read_to_string(self.dir.join(f)) {
                let lines: Vec<&str> = t.lines().collect();
                for l in &lines[lines.len().saturating_sub(20)..] {
                    s.push_str(l);
                    s.push('\n');
                }
            }
        }
        s
    }

    /// Both of the server's log streams as written so far, one after the other.
    fn log_text(&self) -> String {
        ["server.out", "server.err"]
            .iter()
            .filter_map(|f| fs::read_to_string(self.dir.join(f)).ok())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Warning and error lines the server logged (LOG_LEVEL=warn), counted.
    pub fn logged_problems(&self) -> usize {
        self.log_text().lines().filter(|l| l.contains("WARN") || l.contains("ERROR")).count()
    }

    /// What the server logged so far of its packing passes and batches, from one read of
    /// its logs (a timed run takes it before and after).
    pub fn log_counts(&self) -> LogCounts {
        LogCounts::of(&self.log_text())
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// The server's data directory (for the machine's probes: the same filesystem).
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Disk used by the data directory (git repositories, SQLite file), in bytes.
    pub fn data_bytes(&self) -> u64 {
        dir_bytes(&self.dir)
    }

    /// Disk used by the workspace repositories alone, in bytes.
    pub fn repo_bytes(&self) -> u64 {
        dir_bytes(&self.dir.join("data").join("workspaces"))
    }

    /// Commits on the branches of every workspace repository: one per save.
    pub fn commits(&self) -> u64 {
        let Ok(rd) = fs::read_dir(self.dir.join("data").join("workspaces")) else { return 0 };
        rd.filter_map(|e| e.ok())
            .filter_map(|e| {
                let out = Command::new("git")
                    .arg("--git-dir")
                    .arg(e.path())
                    .args(["rev-list", "--count", "--all"])
                    .output()
                    .ok()?;
                String::from_utf8_lossy(&out.stdout).trim().parse::<u64>().ok()
            })
            .sum()
    }

    /// Stops the process, keeping its data, and runs `cairn gc` over that data: the
    /// packing the server's worker does on its own once a workspace is idle, and — with
    /// SQLite, now that no server runs — the compaction of its files (since 6307cbd).
    pub fn stop_and_pack(&mut self) -> Result<()> {
        self.terminate();
        self.pack_now()
    }

    /// Runs `cairn gc` over the data, beside the server if it runs (packing never takes
    /// a write lock). Before the timed scenarios, so that the packing worker's pass over
    /// the setup's loose objects — tens of seconds of one core at 10,000 pages — does
    /// not land inside them.
    pub fn pack_now(&self) -> Result<()> {
        if !self.has_gc {
            return Ok(());
        }
        let status = Command::new(&self.bin)
            .arg("gc")
            .env("DATA_DIR", self.dir.join("data"))
            .env("LOG_DIR", self.dir.join("logs"))
            .env("LOG_LEVEL", "warn")
            .env("DATABASE_URL", &self.database_url)
            .stdout(Stdio::null())
            .status()
            .with_context(|| format!("running {} gc", self.bin.display()))?;
        anyhow::ensure!(status.success(), "cairn gc failed: {status}");
        Ok(())
    }

    /// Waits, up to `max`, until the filesystem under the data directory is quiet again,
    /// and answers how long that took and the last probe (ms: a `syncfs`, a file's
    /// creation). `cairn gc` just wrote a pack and unlinked tens of thousands of loose
    /// files: until that is written back, each save's two `syncfs` barriers flush part of
    /// it, and on an ext4 without a journal (these machines) each new inode scans past
    /// the recently freed ones. One-client saves measured 2× slower inside that window
    /// than two minutes later (measured in commit b696015): it times the
    /// filesystem's recovery, not Cairn. Its probe makes files in new directories, away
    /// from the freed inodes, so it does not see the kernel's six-minute rule that saves
    /// meet; `--window-secs` (main.rs) waits that out before the first save row.
    pub async fn settle(&self, max: Duration) -> Result<(Duration, f64, f64)> {
        let started = Instant::now();
        let data = self.dir.join("data");
        loop {
            let sync_ms = syncfs_ms(&data)?;
            let create_ms = crate::probe::create_ms(&data)?;
            let quiet = sync_ms < SETTLED_SYNC_MS && create_ms < SETTLED_CREATE_MS;
            if quiet || started.elapsed() >= max {
                return Ok((started.elapsed(), sync_ms, create_ms));
            }
            tokio::time::sleep(Duration::from_secs(5)).await;
        }
    }

    /// CPU seconds the server process has used so far (Linux /proc).
    pub fn cpu_secs(&self) -> f64 {
        self.child.as_ref().map_or(0.0, |c| proc_cpu_secs(c.id()))
    }

    /// CPU seconds used so far by the machine, this client, the server and PostgreSQL.
    pub fn cpu_snapshot(&self) -> CpuSnapshot {
        CpuSnapshot {
            machine: machine_busy_secs(),
            bench: proc_cpu_secs(std::process::id()),
            server: self.cpu_secs(),
            postgres: postgres_cpu_secs(),
        }
    }

    /// Stops the process, drops the PostgreSQL database and deletes the directory (unless
    /// asked to keep them: `--keep` leaves both for a look afterwards, e.g. `EXPLAIN`).
    pub fn stop(&mut self) {
        self.terminate();
        if let Some((url, db)) = self.pg.take() {
            if self.keep {
                eprintln!("kept database {db} (drop it with: psql -c 'DROP DATABASE {db}')");
            } else if let Err(e) = psql(&url, &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")) {
                eprintln!("could not drop database {db}: {e:#}");
            }
        }
        if !self.keep && self.dir.exists() {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }

    /// SIGTERM, then up to 30 s for a graceful exit, then SIGKILL (nothing when the
    /// process already exited, e.g. during start-up).
    fn terminate(&mut self) {
        if let Some(mut child) = self.child.take()
            && matches!(child.try_wait(), Ok(None))
        {
            let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => break,
                    Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
                    _ => {
                        eprintln!("server did not stop after SIGTERM; killing it");
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                }
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn free_port() -> Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

fn psql(base_url: &str, sql: &str) -> Result<()> {
    let out = Command::new("psql")
        .arg("-d")
        .arg(format!("{}/postgres", base_url.trim_end_matches('/')))
        .args(["-v", "ON_ERROR_STOP=1", "-q", "-c", sql])
        .output()
        .context("running psql")?;
    if !out.status.success() {
        bail!("psql {sql:?} failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

/// Whether `bin` knows the subcommand `name` (its `--help` succeeds).
fn has_command(bin: &Path, name: &str) -> bool {
    Command::new(bin)
        .args([name, "--help"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// utime + stime of a process, in seconds (/proc/PID/stat, 100 ticks per second).
pub fn proc_cpu_secs(pid: u32) -> f64 {
    let Ok(t) = fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0.0 };
    // Fields after the command name, which is in parentheses and may hold spaces.
    let Some(rest) = t.rfind(')').map(|i| &t[i + 2..]) else { return 0.0 };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

/// Busy CPU seconds of the whole machine since boot, all cores added (/proc/stat).
pub fn machine_busy_secs() -> f64 {
    let Ok(t) = fs::read_to_string("/proc/stat") else { return 0.0 };
    let Some(line) = t.lines().next() else { return 0.0 };
    let v: Vec<f64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal: everything but idle and iowait.
    let busy: f64 = v.iter().enumerate().filter(|(i, _)| *i != 3 && *i != 4 && *i < 8).map(|(_, x)| x).sum();
    busy / 100.0
}

/// Group commits' batches flushed, and the saves in them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Batches {
    pub count: u64,
    pub saves: u64,
}

impl Batches {
    /// The batches a log's text tells of (plain or coloured: the count is in the
    /// message, which the formatter does not style).
    fn of(log: &str) -> Batches {
        let counts =
            log.lines().filter_map(|l| l.split("flushed a batch of ").nth(1)?.split(' ').next()?.parse::<u64>().ok());
        counts.fold(Batches::default(), |b, n| Batches { count: b.count + 1, saves: b.saves + n })
    }

    fn since(&self, before: &Batches) -> Batches {
        Batches { count: self.count - before.count, saves: self.saves - before.saves }
    }

    /// Saves per batch, if any batch was flushed.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.saves as f64 / self.count as f64)
    }
}

/// Counts read off the server's logs.
#[derive(Clone, Copy, Debug, Default)]
pub struct LogCounts {
    /// Packing passes (their `packed … loose` lines): a pass inside a timed scenario
    /// competes with the requests for the disk and the CPU.
    pub packing_passes: usize,
    /// Batches flushed and the saves they held (`flushed a batch of N saves`; none from
    /// a binary that does not log them).
    pub batches: Batches,
    /// The most memory a packing pass's own process held (`peak_rss_kib=` of its
    /// `packed` line; 0 from a binary that packs in the server's process).
    pub packing_peak_rss_kib: u64,
}

impl LogCounts {
    fn of(log: &str) -> LogCounts {
        let passes = log.lines().filter(|l| l.contains("packed") && l.contains("loose"));
        let (mut packing_passes, mut packing_peak_rss_kib) = (0, 0);
        for line in passes {
            packing_passes += 1;
            let peak =
                line.split_once("peak_rss_kib=").and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next());
            packing_peak_rss_kib = packing_peak_rss_kib.max(peak.and_then(|n| n.parse().ok()).unwrap_or(0));
        }
        LogCounts { packing_passes, batches: Batches::of(log), packing_peak_rss_kib }
    }

    /// What was logged after `before`.
    pub fn since(&self, before: &LogCounts) -> LogCounts {
        LogCounts {
            packing_passes: self.packing_passes - before.packing_passes,
            batches: self.batches.since(&before.batches),
            // A peak is not a count: the largest seen so far.
            packing_peak_rss_kib: self.packing_peak_rss_kib,
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct CpuSnapshot {
    pub machine: f64,
    pub bench: f64,
    pub server: f64,
    pub postgres: f64,
}

impl CpuSnapshot {
    /// Busy CPU seconds, in this interval, of everything but the client, the server and
    /// PostgreSQL: other work on the shared machine.
    pub fn other_since(&self, before: &CpuSnapshot) -> f64 {
        let d = |a: f64, b: f64| (a - b).max(0.0);
        (d(self.machine, before.machine)
            - d(self.bench, before.bench)
            - d(self.server, before.server)
            - d(self.postgres, before.postgres))
        .max(0.0)
    }
}

/// CPU seconds of every process named `postgres` (the server and its backends).
fn postgres_cpu_secs() -> f64 {
    let Ok(rd) = fs::read_dir("/proc") else { return 0.0 };
    rd.filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|pid| fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "postgres"))
        .map(proc_cpu_secs)
        .sum()
}

/// The load average (1, 5, 15 minutes) as /proc/loadavg gives it.
pub fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Cores of this machine.
pub fn ncpu() -> f64 {
    std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64)
}

/// Resident memory of a process in KiB (`VmRSS`), 0 when unknown.
pub fn rss_kib(pid: u32) -> u64 {
    status_kib(&fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default(), "VmRSS:")
}

/// A `… kB` field of `/proc/<pid>/status` (`name` with its colon), 0 when missing.
fn status_kib(status: &str, name: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// What a process's resident memory holds, in KiB: anonymous (heap, stacks), file-backed
/// (the binary, mapped packs), and — of the file-backed — pages of pack files that were
/// removed but that it still maps (packing folded them away after it read them).
#[derive(Debug, Default, Clone, Copy)]
pub struct RssParts {
    pub anon_kib: u64,
    pub file_kib: u64,
    pub removed_packs_kib: u64,
}

/// [`RssParts`] of a process, zeros when unknown.
pub fn rss_parts(pid: u32) -> RssParts {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let mut removed_packs_kib = 0;
    let mut in_removed_pack = false;
    for line in fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default().lines() {
        // A mapping's header is "start-end perms offset dev inode [path]"; its fields follow.
        if line
            .split_whitespace()
            .next()
            .is_some_and(|f| f.contains('-') && f.chars().all(|c| c.is_ascii_hexdigit() || c == '-'))
        {
            in_removed_pack = line.ends_with(".pack (deleted)") || line.ends_with(".idx (deleted)");
        } else if in_removed_pack && let Some(v) = line.strip_prefix("Rss:") {
            removed_packs_kib += v.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        }
    }
    RssParts { anon_kib: status_kib(&status, "RssAnon:"), file_kib: status_kib(&status, "RssFile:"), removed_packs_kib }
}

/// A directory and a file's creation (`probe::create_ms`), and a `syncfs`, in ms, below
/// which the filesystem counts as settled.
const SETTLED_CREATE_MS: f64 = 0.05;
const SETTLED_SYNC_MS: f64 = 2.0;

/// The time of one `syncfs(2)` of the filesystem holding `dir` (what a save's barriers
/// are), in ms.
fn syncfs_ms(dir: &Path) -> Result<f64> {
    use std::os::fd::AsRawFd;
    let d = std::fs::File::open(dir).with_context(|| format!("cannot open {}", dir.display()))?;
    let t = Instant::now();
    // SAFETY: syncfs takes an open descriptor, valid for the duration of the call.
    if unsafe { libc::syncfs(d.as_raw_fd()) } != 0 {
        return Err(std::io::Error::last_os_error()).context("syncfs failed");
    }
    Ok(t.elapsed().as_secs_f64() * 1000.0)
}

/// The filesystem holding `path`, as the run's JSON records it: its type and device,
/// and for ext4 whether it keeps a journal (without one, each new inode scans past the
/// inodes freed in the last minute: see `probe::create_ms`).
pub fn filesystem_of(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let mounts = fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let Some((device, point, kind)) = mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((f.next()?, f.next()?, f.next()?))
        })
        .filter(|(_, point, _)| path.starts_with(point))
        .max_by_key(|(_, point, _)| point.len())
    else {
        return "unknown".to_owned();
    };
    let name = device.rsplit('/').next().unwrap_or(device);
    let journal = match fs::read_to_string(format!("/sys/fs/ext4/{name}/journal_task")) {
        Ok(task) if task.trim() == "<none>" => ", no journal",
        Ok(_) => ", journal",
        Err(_) => "",
    };
    format!("{kind} on {device} at {point}{journal}")
}

/// Bytes of every file under `p`.
fn dir_bytes(p: &Path) -> u64 {
    let Ok(rd) = fs::read_dir(p) else { return 0 };
    rd.filter_map(|e| e.ok())
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_on_the_filesystem_mounted_deepest_above_it() {
        let root = filesystem_of(Path::new("/"));
        assert!(root.ends_with(" at /") || root.contains(" at /, "), "{root}");
        // /proc is a mount of its own on every Linux machine.
        assert!(filesystem_of(Path::new("/proc/self")).starts_with("proc on "));
    }

    #[test]
    fn log_counts_read_batches_and_packing_passes_and_nothing_else() {
        let log = "2026-12-02T20:00:00.1Z DEBUG flushed a batch of 1 saves\n\
                   \x1b[2m2026-12-02T20:00:00.2Z\x1b[0m \x1b[34mDEBUG\x1b[0m flushed a batch of 14 saves\n\
                   2026-12-02T20:00:00.25Z  INFO cairn::core::packing: packed workspace=w loose=120 folded=0 objects=130\n\
                   2026-12-02T20:00:00.27Z  INFO cairn::core::packing: packed workspace=w loose=9 folded=1 objects=139 peak_rss_kib=4321\n\
                   2026-12-02T20:00:00.3Z  WARN a group of saves failed together; saving them one by one\n";
        let counts = LogCounts::of(log);
        assert_eq!(counts.batches, Batches { count: 2, saves: 15 });
        assert_eq!((counts.packing_passes, counts.packing_peak_rss_kib), (2, 4321));
        assert_eq!(counts.batches.mean(), Some(7.5));
        let before = LogCounts { packing_passes: 1, batches: Batches { count: 1, saves: 1 }, packing_peak_rss_kib: 0 };
        let since = counts.since(&before);
        assert_eq!((since.packing_passes, since.batches), (1, Batches { count: 1, saves: 14 }));
        assert_eq!(Batches::default().mean(), None);
    }
}
